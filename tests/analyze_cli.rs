//! `fn-hcl analyze` as a user runs it: txtar on stdin (`-`) and a directory of `.hcl`
//! files; rich diagnostics, a summary line, exit 1 on errors and 0 otherwise.

mod common;

use common::dir::Dir;
use std::io::Write;
use std::process::{Command, Output, Stdio};

fn analyze_stdin(txtar: &str) -> Output {
    analyze_stdin_with(&[], txtar)
}

fn analyze_stdin_with(flags: &[&str], txtar: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_fn-hcl"))
        .arg("analyze")
        .args(flags)
        .arg("-")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("runs fn-hcl");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(txtar.as_bytes())
        .expect("writes stdin");
    child.wait_with_output().expect("finishes")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

const GOOD: &str = "-- main.hcl --\nlocals {\n  name = \"app\"\n}\n-- more.hcl --\nresource r {\n  body = { name = name }\n}\n";

const BAD: &str = "-- main.hcl --\nlocals {\n  name = \"app\"\n}\nresource r {\n  body = { name = nmae, up = upper([1]) }\n}\n";

#[test]
fn good_program_on_stdin_exits_zero() {
    let o = analyze_stdin(GOOD);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert_eq!(stdout(&o), "no problems found\n");
}

#[test]
fn bad_program_on_stdin_exits_one_with_rich_diagnostics() {
    let o = analyze_stdin(BAD);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(out.contains("error: Unknown variable"), "{out}");
    assert!(out.contains("main.hcl:5:19"), "{out}");
    assert!(
        out.contains("  body = { name = nmae, up = upper([1]) }"),
        "{out}"
    );
    assert!(
        out.contains("There is no variable named \"nmae\". Did you mean \"name\"?"),
        "{out}"
    );
    assert!(out.contains("warning: Invalid function argument"), "{out}");
    assert!(out.ends_with("1 error, 1 warning\n"), "{out}");
}

#[test]
fn warnings_alone_exit_zero() {
    let o = analyze_stdin("-- main.hcl --\nresource r {\n  body = [1]\n}\n");
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(out.contains("warning: Invalid body"), "{out}");
    assert!(out.ends_with("0 errors, 1 warning\n"), "{out}");
}

#[test]
fn directory_of_hcl_files() {
    let dir = Dir::new(
        "analyze-cli",
        &[
            ("a.hcl", "locals {\n  a = 1\n}\n"),
            ("b.hcl", "locals {\n  b = a + c\n}\n"),
            ("notes.txt", "not hcl"),
        ],
    );
    let o = Command::new(env!("CARGO_BIN_EXE_fn-hcl"))
        .arg("analyze")
        .arg(&dir.0)
        .output()
        .expect("runs fn-hcl");
    let out = stdout(&o);
    let b = dir.path("b.hcl");
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(
        out.contains("error: reference to non-existent variable"),
        "{out}"
    );
    assert!(out.contains(&format!("{b}:2:11")), "{out}");
    assert!(out.ends_with("1 error, 0 warnings\n"), "{out}");
}

#[test]
fn load_errors_are_reported_too() {
    let o = analyze_stdin("-- main.hcl --\nresourse r {\n}\n");
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(out.contains("error: Unsupported block type"), "{out}");
    assert!(out.contains("Did you mean \"resource\"?"), "{out}");
}

#[test]
fn composition_yaml_programs_are_analyzed() {
    let manifest = env!("CARGO_MANIFEST_DIR");
    let ok = Command::new(env!("CARGO_BIN_EXE_fn-hcl"))
        .arg("analyze")
        .arg(format!("{manifest}/examples/webapp/composition.yaml"))
        .output()
        .expect("runs fn-hcl");
    assert_eq!(ok.status.code(), Some(0), "{}", stdout(&ok));
    assert_eq!(stdout(&ok), "no problems found\n");

    let dir = Dir::new(
        "analyze-yaml",
        &[(
            "composition.yaml",
            "apiVersion: apiextensions.crossplane.io/v1\nkind: Composition\nspec:\n  pipeline:\n  - step: hcl\n    input:\n      hcl: |\n        -- main.hcl --\n        locals {\n          a = nosuch\n        }\n",
        )],
    );
    let o = Command::new(env!("CARGO_BIN_EXE_fn-hcl"))
        .arg("analyze")
        .arg(dir.path("composition.yaml"))
        .output()
        .expect("runs fn-hcl");
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(out.contains("reference to non-existent variable"), "{out}");
}

const ASSERTS: &str = "-- main.hcl --\nassert {\n  assertion = req.composite.spec.n > 1\n  message   = \"n\"\n}\ngroup {\n  assert {\n    assertion = true\n    message   = \"m\"\n    warning   = true\n  }\n}\n";

#[test]
fn assert_blocks_are_fine_unless_portable_is_asked() {
    let o = analyze_stdin(ASSERTS);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert_eq!(stdout(&o), "no problems found\n");
    let o = analyze_stdin_with(&["--portable"], ASSERTS);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert_eq!(
        out.matches("warning: Not portable: assert block").count(),
        2,
        "{out}"
    );
    assert!(out.contains("main.hcl:1:1"), "{out}");
    assert!(out.contains("main.hcl:6:3"), "{out}");
    assert!(out.ends_with("0 errors, 2 warnings\n"), "{out}");
}

#[test]
fn bad_assert_blocks_are_errors() {
    // No message; a message that is never a string; an assertion that is never a bool.
    let o = analyze_stdin(
        "-- main.hcl --\nassert {\n  assertion = true\n}\nresource r {\n  body = {}\n  assert {\n    assertion = \"yes\"\n    message   = [1]\n  }\n}\n",
    );
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(
        out.contains("error: Missing required argument") && out.contains("\"message\" is required"),
        "{out}"
    );
    assert!(
        out.contains("error: Invalid assertion") && out.contains("always string"),
        "{out}"
    );
    assert!(out.contains("error: Invalid assert message"), "{out}");
    assert!(out.ends_with("3 errors, 0 warnings\n"), "{out}");
}

#[test]
fn disassemble_prints_every_chunk_of_a_good_program() {
    let o = analyze_stdin_with(&["--disassemble"], GOOD);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let out = stdout(&o);
    assert!(out.starts_with("no problems found\n"), "{out}");
    // `name`'s chunk is its constant; the body reads the local from its slot.
    assert!(out.contains("\n== chunk 0\n"), "{out}");
    assert!(out.contains("const \"app\"\n"), "{out}");
    assert!(out.contains("make_object_const {name}"), "{out}");
    assert!(out.contains("return\n"), "{out}");
    // A program with errors is reported, not compiled.
    let bad = analyze_stdin_with(&["--disassemble"], BAD);
    assert_eq!(bad.status.code(), Some(1));
    assert!(!stdout(&bad).contains("== chunk"), "{}", stdout(&bad));
}
