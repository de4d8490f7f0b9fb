//! The command-line habits a careful user relies on (issue 15): one error style naming the
//! file, one exit-code convention (0 done, 1 failed, 2 nothing to work on or a malformed
//! command line; fmt and package keep the Go tool's `Error:`), `-` for standard input
//! wherever a file is read, `analyze` refusing to check nothing, `render` checking the
//! kinds it is given, progress only on a terminal, and `./run` finding its binary
//! wherever cargo put it.

mod common;
mod server_support;

use server_support::process::{BIN, Proc};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const REQUEST: &str = r#"observed:
  composite:
    resource:
      apiVersion: example.org/v1
      kind: XApp
      metadata:
        name: app
input:
  apiVersion: function-hcl/v1
  kind: HclInput
  source: Inline
  hcl: |
    -- main.hcl --
    resource a {
      body = {
        apiVersion = "v1"
        kind       = "ConfigMap"
        metadata   = { name = "a" }
      }
    }
"#;

const PROGRAM: &str = "resource a {\n  body = {\n    apiVersion = \"v1\"\n    kind       = \"ConfigMap\"\n    metadata   = { name = \"a\" }\n  }\n}\n";

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("fn-hcl-cli-habits-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn run_in(dir: Option<&Path>, args: &[&str], stdin: &str) -> Output {
    let mut cmd = Command::new(BIN);
    cmd.args(args)
        .env_remove("TLS_SERVER_CERTS_DIR")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(d) = dir {
        cmd.current_dir(d);
    }
    let mut child = cmd.spawn().unwrap();
    let mut input = child.stdin.take().unwrap();
    let text = stdin.to_string();
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(text.as_bytes());
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    out
}

fn run(args: &[&str], stdin: &str) -> Output {
    run_in(None, args, stdin)
}

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn out(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Exit code `code`, and one stderr line `fn-hcl: error: ...` containing `names`.
fn assert_fails(o: &Output, code: i32, names: &str) {
    let e = err(o);
    assert_eq!(o.status.code(), Some(code), "{e}");
    assert!(e.starts_with("fn-hcl: error: "), "{e}");
    assert!(e.contains(names), "{names:?} not in {e}");
}

#[test]
fn every_subcommand_reports_failures_one_way_naming_the_file() {
    let missing = "/nonexistent/fn-hcl/r.yaml";
    assert_fails(&run(&["eval", "--request", missing], ""), 1, missing);
    assert_fails(
        &run(&["bench", "--request", missing, "--n", "1"], ""),
        1,
        missing,
    );
    assert_fails(
        &run(
            &["loadgen", "--address", "127.0.0.1:1", "--request", missing],
            "",
        ),
        1,
        missing,
    );
    assert_fails(&run(&["render", missing, missing], ""), 1, missing);
    assert_fails(
        &run(&["analyze", "/nonexistent/fn-hcl/main.hcl"], ""),
        1,
        "/nonexistent/fn-hcl/main.hcl",
    );
    assert_fails(
        &run(
            &[
                "serve",
                "--tls-server-certs-dir",
                "/nonexistent/fn-hcl/tls",
                "--metrics-address",
                "",
            ],
            "",
        ),
        1,
        "/nonexistent/fn-hcl/tls",
    );
    // A flag the language server refuses: a usage error in the same style.
    assert_fails(&run(&["lsp", "--port", "7"], ""), 2, "--port");
    // A malformed command line: clap's message in the same style, exit 2.
    assert_fails(&run(&["eval"], ""), 2, "--request");
    assert_fails(&run(&["nosuch"], ""), 2, "nosuch");
    // An invalid request names its file too (YAML errors included).
    let d = tmp("eval-yaml");
    let bad = d.join("bad.yaml");
    std::fs::write(&bad, "observed: [\n").unwrap();
    let bad = bad.to_str().unwrap();
    assert_fails(&run(&["eval", "--request", bad], ""), 1, bad);
    assert_fails(
        &run(&["eval", "--request", "-"], "observed: [\n"),
        1,
        "standard input",
    );
    // fmt and package keep the Go tool's `Error:` (and its exit code 1).
    let o = run(&["package", "/nonexistent/fn-hcl/main.hcl"], "");
    assert_eq!(o.status.code(), Some(1));
    assert!(err(&o).starts_with("Error: "), "{}", err(&o));
    assert!(
        err(&o).contains("/nonexistent/fn-hcl/main.hcl"),
        "{}",
        err(&o)
    );
}

#[test]
fn a_dash_reads_standard_input_wherever_a_file_is_read() {
    // eval and bench take the request.
    let o = run(&["eval", "--request", "-"], REQUEST);
    assert!(o.status.success(), "{}", err(&o));
    assert!(out(&o).contains("ConfigMap"), "{}", out(&o));
    let o = run(
        &["bench", "--request", "-", "--n", "2", "--mode", "handler"],
        REQUEST,
    );
    assert!(o.status.success(), "{}", err(&o));
    assert!(out(&o).starts_with("handler/warm\t2\t"), "{}", out(&o));
    // analyze and package take a txtar bundle; package also one HCL file.
    let bundle = format!("-- main.hcl --\n{PROGRAM}");
    let o = run(&["analyze", "-"], &bundle);
    assert!(o.status.success(), "{}", err(&o));
    let o = run(&["package", "-"], PROGRAM);
    assert!(o.status.success(), "{}", err(&o));
    assert_eq!(out(&o), bundle);
    let o = run(&["package", "-"], &bundle);
    assert_eq!(out(&o), bundle, "{}", err(&o));
    // render takes any one of its files from standard input.
    let ex = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/webapp");
    let p = |f: &str| ex.join(f).display().to_string();
    let (xr, comp, fns) = (p("xr.yaml"), p("composition.yaml"), p("functions.yaml"));
    let want = run(&["render", &xr, &comp, &fns], "");
    assert!(want.status.success(), "{}", err(&want));
    for (i, path) in [&xr, &comp, &fns].into_iter().enumerate() {
        let mut args = vec!["render", xr.as_str(), comp.as_str(), fns.as_str()];
        args[i + 1] = "-";
        let o = run(&args, &std::fs::read_to_string(path).unwrap());
        assert!(o.status.success(), "{args:?}: {}", err(&o));
        assert_eq!(out(&o), out(&want), "{args:?}");
    }
    // Standard input is read once: a second `-` is refused, named.
    assert_fails(
        &run(
            &["render", "-", "-"],
            &std::fs::read_to_string(&xr).unwrap(),
        ),
        1,
        "standard input (-) can be read by one argument only",
    );
}

#[test]
fn analyze_with_nothing_to_analyze_says_so_and_fails() {
    let d = tmp("analyze-empty");
    let o = run_in(Some(&d), &["analyze"], "");
    assert_fails(&o, 2, "nothing to analyze: . holds no HCL program text");
    let dir = d.display().to_string();
    assert_fails(
        &run(&["analyze", &dir], ""),
        2,
        &format!("nothing to analyze: {dir}"),
    );
    let empty = d.join("empty.hcl");
    std::fs::write(&empty, "\n").unwrap();
    let empty = empty.display().to_string();
    assert_fails(
        &run(&["analyze", &empty], ""),
        2,
        &format!("nothing to analyze: {empty}"),
    );
    assert_fails(
        &run(&["analyze", "-"], ""),
        2,
        "nothing to analyze: standard input",
    );
    // A program with errors: the report on stdout, exit 1.
    std::fs::write(
        d.join("main.hcl"),
        "resource x {\n  body = { n = nmae }\n}\n",
    )
    .unwrap();
    let o = run(&["analyze", &dir], "");
    assert_eq!(o.status.code(), Some(1), "{}", err(&o));
    assert!(out(&o).contains("Unknown variable"), "{}", out(&o));
    assert!(err(&o).starts_with("fn-hcl: error: "), "{}", err(&o));
}

#[test]
fn render_names_a_file_of_the_wrong_kind() {
    let ex = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/webapp");
    let p = |f: &str| ex.join(f).display().to_string();
    let (xr, comp, fns) = (p("xr.yaml"), p("composition.yaml"), p("functions.yaml"));
    // An XR as the composition (the first two swapped).
    let o = run(&["render", &comp, &xr, &fns], "");
    assert_fails(&o, 1, &format!("{xr}: expected a Composition"));
    assert!(err(&o).contains("swapped"), "{}", err(&o));
    // A Composition as the XR.
    assert_fails(
        &run(&["render", &comp, &comp, &fns], ""),
        1,
        &format!("{comp}: expected a composite resource (XR), got Composition"),
    );
    // Something else as the functions.
    assert_fails(
        &run(&["render", &xr, &comp, &xr], ""),
        1,
        &format!("{xr}: expected Function packages"),
    );
}

/// `script` runs a command on a pseudo-terminal (util-linux), so its stderr is a terminal.
fn on_terminal(cmdline: &str) -> Option<String> {
    let o = Command::new("script")
        .args(["-qec", cmdline, "/dev/null"])
        .stdin(Stdio::null())
        .output()
        .ok()?;
    o.status
        .success()
        .then(|| String::from_utf8_lossy(&o.stdout).into_owned())
}

#[test]
fn bench_and_loadgen_show_progress_on_a_terminal_only() {
    let d = tmp("progress");
    let req = d.join("r.yaml");
    std::fs::write(&req, REQUEST).unwrap();
    let req = req.display().to_string();
    // Piped: the report only.
    let o = run(
        &["bench", "--request", &req, "--n", "5", "--mode", "handler"],
        "",
    );
    assert!(o.status.success(), "{}", err(&o));
    assert!(o.stderr.is_empty(), "{:?}", err(&o));
    // On a terminal: a status line, erased before the report.
    let cmd = format!("{BIN} bench --request {req} --n 5 --mode handler");
    match on_terminal(&cmd) {
        Some(text) => {
            assert!(text.contains("bench: "), "{text:?}");
            assert!(text.contains("\x1b[2K"), "{text:?}");
            assert!(text.contains("handler/warm\t5\t"), "{text:?}");
        }
        None => common::missing(
            "cli_habits: the terminal case",
            "`script` (util-linux, Debian's bsdutils) is not available",
        ),
    }
    // loadgen against a server: quiet when piped, a status line on a terminal.
    let server = Proc::spawn(&[]);
    let addr = server.grpc.to_string();
    let o = run(
        &[
            "loadgen",
            "--address",
            &addr,
            "--request",
            &req,
            "--duration",
            "1s",
        ],
        "",
    );
    assert!(o.status.success(), "{}", err(&o));
    assert!(o.stderr.is_empty(), "{:?}", err(&o));
    assert!(out(&o).contains("requests"), "{}", out(&o));
    let cmd = format!("{BIN} loadgen --address {addr} --request {req} --duration 1s");
    if let Some(text) = on_terminal(&cmd) {
        assert!(text.contains("loadgen: "), "{text:?}");
        assert!(text.contains("requests"), "{text:?}");
    }
}

#[test]
fn run_finds_the_binary_wherever_cargo_put_it() {
    // A stand-in cargo that "builds" into $CARGO_TARGET_DIR and says so as cargo does
    // (a compiler-artifact message naming the executable); a stand-in binary that
    // records its arguments. ./run must run that one, not target/release/fn-hcl.
    let d = tmp("run-target-dir");
    let target = d.join("elsewhere");
    let bin_dir = d.join("bin");
    std::fs::create_dir_all(&bin_dir).unwrap();
    let log = d.join("calls.log");
    let cargo = bin_dir.join("cargo");
    std::fs::write(
        &cargo,
        format!(
            "#!/bin/sh\nmkdir -p \"$CARGO_TARGET_DIR/release\"\n\
             printf '#!/bin/sh\\necho \"$*\" >> {log}\\n' > \"$CARGO_TARGET_DIR/release/fn-hcl\"\n\
             chmod +x \"$CARGO_TARGET_DIR/release/fn-hcl\"\n\
             echo '{{\"reason\":\"compiler-artifact\",\"executable\":\"'\"$CARGO_TARGET_DIR\"'/release/fn-hcl\"}}'\n",
            log = log.display()
        ),
    )
    .unwrap();
    Command::new("chmod")
        .arg("+x")
        .arg(&cargo)
        .status()
        .unwrap();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let o = Command::new(Path::new(env!("CARGO_MANIFEST_DIR")).join("run"))
        .env("PATH", path)
        .env("CARGO_TARGET_DIR", &target)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", err(&o));
    let calls = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<&str> = calls.lines().collect();
    assert_eq!(lines.len(), 3, "{calls}");
    assert!(
        lines[0].starts_with("render examples/webapp/xr.yaml"),
        "{calls}"
    );
    assert!(lines[2].starts_with("serve --insecure"), "{calls}");
}
