//! The language server: `function-hcl-ls serve` (and `fn-hcl lsp`), LSP over stdio for
//! editors, with the DSL's knowledge from the front end (parser, scopes, static types,
//! `analyze`, `fmt`). A drop-in for function-hcl's own `function-hcl-ls`, which its VS
//! Code extension starts as `function-hcl-ls serve`.
//!
//! Messages are lsp-server's, the protocol's types lsp-types'; [`transport`] frames
//! them with limits, [`server`] answers them on one thread, [`features`] computes the
//! answers from a [`workspace::Analysis`].

pub mod features;
pub mod position;
pub mod sample;
pub mod server;
pub mod transport;
pub mod workspace;

use std::process::ExitCode;

/// `serve`'s flags. The Go server's flags are accepted so that its launch lines keep
/// working; only stdio is served.
#[derive(Debug, Default, Clone, clap::Args)]
pub struct ServeArgs {
    /// Write the server's log (one line a message) to this file instead of stderr.
    #[arg(long = "log-file", value_name = "PATH")]
    pub log_file: Option<std::path::PathBuf>,
    /// Accepted for compatibility with function-hcl-ls; stdio is always used.
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set, hide = true)]
    pub stdio: bool,
    /// Not supported (TCP mode of function-hcl-ls): refused with a message.
    #[arg(long, hide = true)]
    pub port: Option<u16>,
    /// Accepted for compatibility with function-hcl-ls; ignored.
    #[arg(long = "log-modules", hide = true)]
    pub log_modules: Option<String>,
    /// Accepted for compatibility with function-hcl-ls; ignored (requests are answered
    /// in order on one thread).
    #[arg(long, hide = true)]
    pub concurrency: Option<u32>,
    /// Accepted for compatibility with function-hcl-ls; ignored.
    #[arg(long = "cpu-profile", hide = true)]
    pub cpu_profile: Option<String>,
    /// Accepted for compatibility with function-hcl-ls; ignored.
    #[arg(long = "mem-profile", hide = true)]
    pub mem_profile: Option<String>,
}

/// Runs the server over stdin/stdout until `exit` or the end of input. Exit code 0 after
/// `shutdown` then `exit`, 1 otherwise (as LSP specifies). `Err`: a flag refused before
/// serving (a usage error), for the binary to report in its own style.
pub fn serve(args: &ServeArgs) -> Result<ExitCode, String> {
    if args.port.is_some() {
        return Err("--port is not supported; the server speaks LSP over stdio".into());
    }
    let log = |m: &str| match &args.log_file {
        Some(p) => {
            use std::io::Write as _;
            if let Ok(mut f) = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(p)
            {
                let _ = writeln!(f, "{m}");
            }
        }
        None => eprintln!("{m}"),
    };
    log(&format!(
        "function-hcl-ls (fn-hcl {}) serving LSP on stdio",
        env!("CARGO_PKG_VERSION")
    ));
    let (in_tx, in_rx) = std::sync::mpsc::sync_channel(transport::READ_AHEAD);
    let (out_tx, out_rx) = std::sync::mpsc::sync_channel(64);
    // The reader is left blocked on stdin when the server exits first (the process ends).
    let reader = std::thread::Builder::new()
        .name("lsp-reader".into())
        .spawn(move || transport::read_loop(std::io::stdin().lock(), in_tx));
    let writer = std::thread::Builder::new()
        .name("lsp-writer".into())
        .spawn(move || transport::write_loop(std::io::stdout().lock(), out_rx));
    let (Ok(reader), Ok(writer)) = (reader, writer) else {
        log("function-hcl-ls: cannot start its threads");
        return Ok(ExitCode::FAILURE);
    };
    let mut server = server::Server::new(out_tx);
    let result = server.run(&in_rx);
    drop(server);
    // Everything queued is written before the process ends.
    let _ = writer.join();
    if reader.is_finished()
        && let Ok(transport::End::Broken(why)) = reader.join()
    {
        log(&format!("function-hcl-ls: input stopped: {why}"));
    }
    Ok(match result {
        Ok(server::Exit::Clean) => ExitCode::SUCCESS,
        Ok(server::Exit::Abrupt) => ExitCode::FAILURE,
        Err(server::ClientGone) => {
            log("function-hcl-ls: the client is gone");
            ExitCode::FAILURE
        }
    })
}

/// `function-hcl-ls`: the language server binary the editors' extensions start.
#[derive(Debug, clap::Parser)]
#[command(
    name = "function-hcl-ls",
    version,
    about = "The function-hcl language server (fn-hcl)"
)]
pub struct LsCli {
    #[command(subcommand)]
    pub command: LsCommand,
}

/// `function-hcl-ls`'s subcommands, as the Go server names them.
#[derive(Debug, clap::Subcommand)]
pub enum LsCommand {
    /// Run the language server (LSP over stdio).
    Serve(ServeArgs),
    /// Print the version.
    Version {
        /// As JSON.
        #[arg(long)]
        json: bool,
    },
}

/// The `function-hcl-ls` binary's entry point.
pub fn ls_main() -> ExitCode {
    use clap::Parser as _;
    let cli = match LsCli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() {
                ExitCode::from(2)
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    match cli.command {
        LsCommand::Serve(args) => serve(&args).unwrap_or_else(|e| {
            eprintln!("function-hcl-ls: {e}");
            ExitCode::from(2)
        }),
        LsCommand::Version { json } => {
            let v = env!("CARGO_PKG_VERSION");
            if json {
                println!(
                    "{}",
                    serde_json::json!({ "version": v, "implementation": "fn-hcl" })
                );
            } else {
                println!("{v}\nimplementation: fn-hcl (Rust)");
            }
            ExitCode::SUCCESS
        }
    }
}
