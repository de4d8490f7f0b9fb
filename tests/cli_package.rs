//! `fn-hcl package`: the txtar bundle exactly as `fn-hcl-tools package` prints it, and
//! its refusal (exit 1, the diagnostics, `Error: analysis failed`) of a program with
//! errors.

mod common;

use common::dir::Dir;
use std::process::{Command, Output};

fn fn_hcl(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fn-hcl"))
        .args(args)
        .output()
        .expect("runs fn-hcl")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

const MAIN: &str = "locals {\n  params = req.composite.spec.parameters\n}\n";
const BUCKET: &str = "resource my-bucket {\n  body = {\n    apiVersion = \"s3.aws.upbound.io/v1beta1\"\n    kind       = \"Bucket\"\n    spec       = { forProvider = { region = params.region } }\n  }\n}";

#[test]
fn a_directory_is_bundled_by_file_name() {
    let d = Dir::new(
        "cli-pkg-dir",
        &[
            ("main.hcl", MAIN),
            ("bucket.hcl", BUCKET),
            ("README.md", "x"),
        ],
    );
    let o = fn_hcl(&["package", &d.0.display().to_string()]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    // Name order; a file without a final newline gets one.
    assert_eq!(
        text(&o.stdout),
        format!("-- bucket.hcl --\n{BUCKET}\n-- main.hcl --\n{MAIN}")
    );
    assert_eq!(text(&o.stderr), "");
    // The bundle is what the function reads back.
    let files = fn_hcl::syntax::txtar::parse(&text(&o.stdout)).expect("txtar");
    assert_eq!(files.len(), 2);
    assert_eq!(files[1], ("main.hcl".to_string(), MAIN.to_string()));
}

#[test]
fn files_are_bundled_in_argument_order_under_their_given_names() {
    let d = Dir::new(
        "cli-pkg-files",
        &[("main.hcl", MAIN), ("bucket.hcl", BUCKET)],
    );
    let (m, b) = (d.path("main.hcl"), d.path("bucket.hcl"));
    let o = fn_hcl(&["package", &m, &b]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(
        text(&o.stdout),
        format!("-- {m} --\n{MAIN}-- {b} --\n{BUCKET}\n")
    );
}

#[test]
fn a_program_with_errors_is_refused() {
    let d = Dir::new(
        "cli-pkg-bad",
        &[(
            "main.hcl",
            "resource r {\n  body = { name = parms.name }\n}\n",
        )],
    );
    let o = fn_hcl(&["package", &d.0.display().to_string()]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(text(&o.stdout), "");
    let err = text(&o.stderr);
    assert!(err.starts_with("\t ERROR: main.hcl:2,19-24: "), "{err}");
    assert!(err.ends_with("\nError: analysis failed\n"), "{err}");
    // --skip-analysis packages it anyway.
    let o = fn_hcl(&["package", "--skip-analysis", &d.0.display().to_string()]);
    assert_eq!(o.status.code(), Some(0));
    assert!(text(&o.stdout).starts_with("-- main.hcl --\nresource r {"));
}

#[test]
fn unreadable_or_missing_arguments_fail() {
    let o = fn_hcl(&["package"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(text(&o.stderr), "Error: no files to package\n");
    let o = fn_hcl(&["package", "/nonexistent/main.hcl"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stderr).starts_with("Error: open /nonexistent/main.hcl: "),
        "{}",
        text(&o.stderr)
    );
}
