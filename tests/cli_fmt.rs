//! `fn-hcl fmt`: formatting is idempotent and never changes the parsed program, over
//! every HCL text the project has (`.hcl` files, txtar members and `hcl` blocks of the
//! markdown under `tests/` and the shared corpus); and the command behaves as
//! `fn-hcl-tools fmt` does (in place, `--check`, `-` as a filter, directory walks).

mod common;

use common::dir::Dir;
use common::{hcl_blocks, shared_dir, walk};

use fn_hcl::syntax::fmt::{Options, format_source};
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

/// Every HCL snippet: (label, text).
fn corpus() -> Vec<(String, String)> {
    let mut files = Vec::new();
    walk(
        &PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests"),
        &mut files,
    );
    if let Some(d) = shared_dir("cli_fmt") {
        walk(&d, &mut files);
    }
    let mut out = Vec::new();
    for f in files {
        let Ok(text) = std::fs::read_to_string(&f) else {
            continue;
        };
        let label = f.display().to_string();
        match f.extension().and_then(|e| e.to_str()) {
            Some("hcl") => out.push((label, text)),
            Some("txtar") => {
                for (name, data) in fn_hcl::syntax::txtar::parse(&text).unwrap_or_default() {
                    if name.ends_with(".hcl") {
                        out.push((format!("{label}:{name}"), data));
                    }
                }
            }
            Some("md") => {
                for (i, b) in hcl_blocks(&text).into_iter().enumerate() {
                    out.push((format!("{label}#{i}"), b));
                }
            }
            _ => {}
        }
    }
    out
}

#[test]
fn formatting_is_idempotent_and_keeps_the_ast() {
    let mut checked = 0;
    let mut changed = 0;
    for (label, text) in corpus() {
        let Ok(before) = common::parse(&text) else {
            // Unparsable input is returned as it is.
            assert_eq!(format_source(&text, Options::default()), text, "{label}");
            continue;
        };
        let once = format_source(&text, Options::default());
        let twice = format_source(&once, Options::default());
        assert_eq!(twice, once, "{label}: formatting is not idempotent");
        let after = match common::parse(&once) {
            Ok(a) => a,
            Err(e) => panic!("{label}: the formatted text does not parse: {e}\n{once}"),
        };
        assert_eq!(
            common::body_sexp(&after.body, false),
            common::body_sexp(&before.body, false),
            "{label}: formatting changed the program\n{once}"
        );
        checked += 1;
        changed += usize::from(once != text);
    }
    assert!(checked > 200, "only {checked} snippets found");
    eprintln!("{checked} snippets formatted ({changed} changed)");
}

fn fn_hcl(args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_fn-hcl"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("runs fn-hcl");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin.as_bytes())
        .expect("writes stdin");
    child.wait_with_output().expect("finishes")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

const UGLY: &str = "resource r {\nbody = {\napiVersion: \"v1\"\nkind=\"K\"\n}\n}\n";
const PRETTY: &str =
    "resource r {\n  body = {\n    apiVersion = \"v1\"\n    kind       = \"K\"\n  }\n}\n";

#[test]
fn stdin_is_filtered_to_stdout_with_a_trailing_newline() {
    let o = fn_hcl(&["fmt", "-"], UGLY);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    // function-hcl prints the result with Fprintln.
    assert_eq!(text(&o.stdout), format!("{PRETTY}\n"));
    let o = fn_hcl(&["fmt", "--normalize-literals=false", "-"], "a = {b: 1}\n");
    assert_eq!(text(&o.stdout), "a = { b : 1 }\n\n");
    let o = fn_hcl(&["fmt", "-", "x.hcl"], "");
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        text(&o.stderr),
        "Error: cannot mix stdin with other files\n"
    );
}

#[test]
fn directories_are_formatted_in_place_recursively() {
    let d = Dir::new(
        "cli-fmt-inplace",
        &[
            ("main.hcl", UGLY),
            ("sub/more.hcl", "locals {\nx=1\n}\n"),
            ("notes.txt", "a=1\n"),
            ("broken.hcl", "a = = 1\n"),
        ],
    );
    let o = fn_hcl(&["fmt", &d.0.display().to_string()], "");
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(d.read("main.hcl"), PRETTY);
    assert_eq!(d.read("sub/more.hcl"), "locals {\n  x = 1\n}\n");
    assert_eq!(d.read("notes.txt"), "a=1\n");
    assert_eq!(d.read("broken.hcl"), "a = = 1\n");

    let d = Dir::new(
        "cli-fmt-flat",
        &[("main.hcl", UGLY), ("sub/more.hcl", "x=1\n")],
    );
    let o = fn_hcl(
        &["fmt", "--recursive=false", &d.0.display().to_string()],
        "",
    );
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(d.read("main.hcl"), PRETTY);
    assert_eq!(d.read("sub/more.hcl"), "x=1\n");
}

#[test]
fn check_lists_unformatted_files_and_writes_nothing() {
    let d = Dir::new(
        "cli-fmt-check",
        &[("a.hcl", UGLY), ("b.hcl", PRETTY), ("c/d.hcl", "x=1\n")],
    );
    let o = fn_hcl(&["fmt", "--check", &d.0.display().to_string()], "");
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        text(&o.stderr),
        format!(
            "{}\n{}\nError: 2 unformatted files found\n",
            d.path("a.hcl"),
            d.path("c/d.hcl")
        )
    );
    assert_eq!(d.read("a.hcl"), UGLY);
    let o = fn_hcl(&["fmt", "-c", &d.path("b.hcl")], "");
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(text(&o.stderr), "");
}

#[test]
fn a_missing_path_is_an_error() {
    let o = fn_hcl(&["fmt", "/nonexistent/x.hcl"], "");
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stderr).starts_with("Error: stat /nonexistent/x.hcl: "),
        "{}",
        text(&o.stderr)
    );
}
