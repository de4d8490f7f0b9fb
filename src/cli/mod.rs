//! The command line: `fn-hcl eval`, `render`, `serve`, `analyze`, `fmt`, `package`,
//! `bench`, `loadgen` and `version`.
//!
//! `eval` is the Go function's `RunFunction` over one request file, for scripting and the
//! conformance harness: it exits 0 whenever a response was produced (even one carrying a
//! Fatal result) and non-zero only when the request cannot be read.

pub mod analyze;
pub mod bench;
pub mod explain;
pub mod loadgen;
pub mod package;
pub mod progress;
pub mod render;

use crate::protocol::protojson;
use clap::{Parser, Subcommand};
use std::io::Read as _;
use std::path::PathBuf;
use std::process::ExitCode;

/// fn-hcl: the function-hcl composition function and its tools.
#[derive(Debug, Parser)]
#[command(name = "fn-hcl", version, about)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the function on one RunFunctionRequest (YAML or protojson JSON) and print the
    /// RunFunctionResponse as protojson JSON.
    Eval {
        /// The request file, or `-` for standard input.
        #[arg(long, value_name = "FILE")]
        request: String,
    },
    /// Emulate `crossplane render` for a Composition whose steps run function-hcl.
    Render {
        /// The composite resource (XR).
        xr: PathBuf,
        /// The Composition (a Pipeline of HclInput steps).
        composition: PathBuf,
        /// Function packages; when given, every step's functionRef must name one.
        functions: Option<PathBuf>,
        /// Observed composed resources (a YAML file or a directory of them).
        #[arg(short = 'o', long = "observed-resources", value_name = "PATH")]
        observed: Option<PathBuf>,
        /// Objects that can satisfy requirements (a YAML file or a directory of them).
        #[arg(short = 'e', long = "extra-resources", value_name = "PATH")]
        extra: Option<PathBuf>,
        /// Initial context values read from files, as KEY=FILE (JSON or YAML).
        #[arg(long = "context-files", value_name = "KEY=FILE", value_delimiter = ',')]
        context_files: Vec<String>,
        /// Initial context values given inline, as KEY=JSON.
        #[arg(
            long = "context-values",
            value_name = "KEY=JSON",
            value_delimiter = ','
        )]
        context_values: Vec<String>,
    },
    /// Serve the Crossplane function over gRPC.
    Serve(crate::server::ServeArgs),
    /// Run the language server for editors (LSP over stdio), as `function-hcl-ls serve`.
    Lsp(crate::lsp::ServeArgs),
    /// Report every problem of a program without a request: `.hcl` files, directories
    /// (their `*.hcl` files) or txtar files; `-` reads txtar from standard input.
    Analyze {
        /// Files or directories (default: the current directory).
        paths: Vec<String>,
        /// Also warn at every construct the Go implementation (function-hcl v0.2.0)
        /// rejects: fn-hcl's extensions (`assert` blocks).
        #[arg(long)]
        portable: bool,
        /// Also print the bytecode a program without errors compiles to, chunk by chunk
        /// (for performance work and bug reports).
        #[arg(long)]
        disassemble: bool,
    },
    /// Format HCL files in place as `fn-hcl-tools fmt` does (hclwrite's canonical
    /// layout, object literals with `=`); `-` filters standard input to standard output.
    Fmt(crate::syntax::fmt::FmtArgs),
    /// Analyze HCL files and print them as the txtar bundle a Composition step's
    /// `input.hcl` takes (`fn-hcl-tools package`); refuses a program with errors.
    Package(crate::cli::package::PackageArgs),
    /// Run one request N times in-process and print ns/op, allocations/op and bytes/op.
    Bench(crate::cli::bench::BenchArgs),
    /// Partially evaluate a program against one request (render's inputs, or
    /// `--request FILE`): the program with every known expression folded to its value and
    /// every block marked emitted, deferred (by which unknown references), discarded or
    /// failed.
    Explain(crate::cli::explain::ExplainArgs),
    /// Drive a running `fn-hcl serve --insecure` on loopback with concurrent clients and
    /// print requests/s, latency percentiles, errors and the server's peak RSS.
    Loadgen(crate::cli::loadgen::LoadgenArgs),
    /// Print the version.
    Version,
}

/// Exit code of a command that could not do its work: a file that cannot be read or
/// parsed, a program with errors, a server that cannot start (fmt and package keep the
/// Go tool's codes, see their modules).
pub const EXIT_FAILURE: u8 = 1;
/// Exit code of a command line that names nothing to work on, or is malformed (clap's).
pub const EXIT_USAGE: u8 = 2;

/// A failed command: the message (naming the file it concerns) and the exit code.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    pub code: u8,
    pub message: String,
}

impl Failure {
    /// A command line that names nothing to work on ([`EXIT_USAGE`]).
    pub fn usage(message: impl Into<String>) -> Failure {
        Failure {
            code: EXIT_USAGE,
            message: message.into(),
        }
    }
}

impl From<String> for Failure {
    fn from(message: String) -> Failure {
        Failure {
            code: EXIT_FAILURE,
            message,
        }
    }
}

/// The one way every fn-hcl subcommand reports a failure: `fn-hcl: error: <message>` on
/// standard error, then its exit code. (`fmt` and `package` print the Go tool's `Error:`.)
pub fn fail(f: &Failure) -> ExitCode {
    eprintln!("fn-hcl: error: {}", f.message);
    ExitCode::from(f.code)
}

/// Whether standard input was already taken by an earlier `-` argument.
static STDIN_TAKEN: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Reads a file argument as text; `-` reads standard input (once per process: a second
/// `-` is refused). Errors name the file (`standard input` for `-`).
pub fn read_input(path: &str) -> Result<String, String> {
    if path != "-" {
        return std::fs::read_to_string(path).map_err(|e| format!("cannot read {path}: {e}"));
    }
    if STDIN_TAKEN.swap(true, std::sync::atomic::Ordering::SeqCst) {
        return Err("standard input (-) can be read by one argument only".into());
    }
    let mut s = String::new();
    std::io::stdin()
        .read_to_string(&mut s)
        .map_err(|e| format!("cannot read standard input: {e}"))?;
    Ok(s)
}

/// The name a file argument is reported by.
pub fn input_name(path: &str) -> &str {
    if path == "-" { "standard input" } else { path }
}

/// Reads a RunFunctionRequest (YAML or protojson JSON) from a file or `-`, as `eval`,
/// `bench` and `loadgen` take it; errors name the file.
pub fn read_request(path: &str) -> Result<crate::protocol::proto::v1::RunFunctionRequest, String> {
    let text = read_input(path)?;
    protojson::request_from_text(&text)
        .map_err(|e| format!("{}: invalid request: {e}", input_name(path)))
}

/// Parses the command line and runs it.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion)
                || e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
            {
                let _ = e.print();
                return if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
                    ExitCode::from(EXIT_USAGE)
                } else {
                    ExitCode::SUCCESS
                };
            }
            // clap's own text ("error: ...", then the usage), in fn-hcl's style.
            let text = e.render().to_string();
            let text = text.strip_prefix("error: ").unwrap_or(&text);
            return fail(&Failure::usage(text.trim_end()));
        }
    };
    match cli.command {
        Command::Lsp(args) => crate::lsp::serve(&args).unwrap_or_else(|e| fail(&Failure::usage(e))),
        Command::Fmt(args) => crate::syntax::fmt::main(&args),
        Command::Package(args) => crate::cli::package::main(&args),
        Command::Explain(args) => crate::cli::explain::main(&args),
        cmd => match run(cmd) {
            Ok(out) => {
                use std::io::Write as _;
                let mut stdout = std::io::stdout().lock();
                let _ = stdout
                    .write_all(out.as_bytes())
                    .and_then(|()| stdout.flush());
                ExitCode::SUCCESS
            }
            Err(f) => fail(&f),
        },
    }
}

/// Runs a command and returns what it prints on success (or its [`Failure`]).
pub fn run(cmd: Command) -> Result<String, Failure> {
    match cmd {
        Command::Eval { request } => Ok(eval(&request)?),
        Command::Render {
            xr,
            composition,
            functions,
            observed,
            extra,
            context_files,
            context_values,
        } => {
            let mut inputs = render::Inputs::read(
                &xr,
                &composition,
                functions.as_deref(),
                observed.as_deref(),
                extra.as_deref(),
            )?;
            for kv in &context_files {
                let (k, path) = split_kv(kv)?;
                let text = read_input(path)?;
                let v = crate::protocol::yaml::parse_document(&text)
                    .map_err(|e| format!("cannot parse context file {}: {e}", input_name(path)))?;
                inputs.context.insert(k.to_string(), v);
            }
            for kv in &context_values {
                let (k, text) = split_kv(kv)?;
                let v = crate::protocol::doc::parse_json(text).map_err(|e| {
                    format!("cannot unmarshal JSON value for context key {k:?}: {e}")
                })?;
                inputs.context.insert(k.to_string(), v);
            }
            let docs = render::render(&inputs, &mut crate::handler::run_function)
                .map_err(|e| format!("cannot render composite resource: {e}"))?;
            Ok(render::to_yaml(&docs))
        }
        Command::Serve(args) => {
            crate::server::serve(args).map_err(|e| e.to_string())?;
            Ok(String::new())
        }
        Command::Analyze {
            paths,
            portable,
            disassemble,
        } => {
            let files = crate::cli::analyze::load_inputs(&paths)?;
            let (mut report, errors) = crate::cli::analyze::run_with(&files, portable);
            if disassemble && !errors {
                report.push_str(&crate::cli::analyze::disassembly(&files)?);
            }
            if errors {
                // The report goes to stdout as on success; the exit code says it failed.
                print!("{report}");
                return Err(Failure {
                    code: EXIT_FAILURE,
                    message: "the program has errors".into(),
                });
            }
            Ok(report)
        }
        Command::Bench(args) => Ok(crate::cli::bench::run(&args)?),
        Command::Loadgen(args) => Ok(crate::cli::loadgen::run(&args)?),
        Command::Version => Ok(format!("fn-hcl {}\n", env!("CARGO_PKG_VERSION"))),
        Command::Lsp(_) | Command::Fmt(_) | Command::Package(_) | Command::Explain(_) => Err(
            Failure::usage("this command runs from `fn-hcl` itself, not through cli::run"),
        ),
    }
}

fn split_kv(kv: &str) -> Result<(&str, &str), String> {
    kv.split_once('=')
        .ok_or_else(|| format!("expected KEY=VALUE, got {kv:?}"))
}

/// `fn-hcl eval`: read the request, run the function, print the response.
pub fn eval(path: &str) -> Result<String, String> {
    let req = read_request(path)?;
    let rsp = crate::handler::run_function(&req);
    let json =
        protojson::response_to_json(&rsp).map_err(|e| format!("cannot write the response: {e}"))?;
    Ok(crate::protocol::doc::to_pretty(&json) + "\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_commands() {
        let c = Cli::try_parse_from(["fn-hcl", "eval", "--request", "r.yaml"]).unwrap();
        assert!(matches!(c.command, Command::Eval { request } if request == "r.yaml"));
        let c = Cli::try_parse_from([
            "fn-hcl",
            "render",
            "xr.yaml",
            "comp.yaml",
            "fns.yaml",
            "-o",
            "obs.yaml",
            "-e",
            "extra.yaml",
            "--context-files",
            "a=x.json,b=y.json",
        ])
        .unwrap();
        match c.command {
            Command::Render {
                functions,
                observed,
                extra,
                context_files,
                ..
            } => {
                assert_eq!(functions, Some(PathBuf::from("fns.yaml")));
                assert_eq!(observed, Some(PathBuf::from("obs.yaml")));
                assert_eq!(extra, Some(PathBuf::from("extra.yaml")));
                assert_eq!(context_files, ["a=x.json", "b=y.json"]);
            }
            other => panic!("{other:?}"),
        }
        let c = Cli::try_parse_from([
            "fn-hcl",
            "bench",
            "--request",
            "r.json",
            "--n",
            "50",
            "--mode",
            "eval",
            "--cold",
        ])
        .unwrap();
        match c.command {
            Command::Bench(b) => {
                assert_eq!((b.request.as_str(), b.n), ("r.json", 50));
                assert_eq!(b.mode, crate::cli::bench::Mode::Eval);
                assert!(b.cold);
            }
            other => panic!("{other:?}"),
        }
        let c = Cli::try_parse_from(["fn-hcl", "bench", "--request", "r.json"]).unwrap();
        assert!(
            matches!(c.command, Command::Bench(b) if b.mode == crate::cli::bench::Mode::Wire && !b.cold)
        );
        let c = Cli::try_parse_from([
            "fn-hcl",
            "loadgen",
            "--address",
            "127.0.0.1:9443",
            "--request",
            "r.json",
            "--connections",
            "8",
            "--duration",
            "5s",
            "--server-pid",
            "42",
        ])
        .unwrap();
        match c.command {
            Command::Loadgen(l) => {
                assert_eq!(l.connections, 8);
                assert_eq!(l.duration, std::time::Duration::from_secs(5));
                assert_eq!(l.server_pid, Some(42));
            }
            other => panic!("{other:?}"),
        }
        assert!(Cli::try_parse_from(["fn-hcl", "nosuch"]).is_err());
        assert!(run(Command::Version).unwrap().starts_with("fn-hcl "));
    }

    #[test]
    fn unreadable_request_is_an_error() {
        assert!(eval("/nonexistent/request.yaml").is_err());
    }
}
