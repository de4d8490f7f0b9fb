//! Error fixtures as data (ruff's way): every file under `tests/errors/parse/` is a
//! malformed program and every file under `tests/errors/lower/` a program the DSL layer
//! rejects or warns about. Each one's diagnostics are snapshotted in
//! `tests/errors/snapshots/`: hcl's plain text of each (the exact words and ranges the Go
//! implementation prints), then the rendered form a user sees. A new fixture is a new file;
//! `cargo insta review` (or `INSTA_UPDATE=always`) accepts its snapshot after review.
//!
//! - parse: `Error():` is hcl's `Diagnostics.Error()` (the first diagnostic and the count
//!   of the others: what a Fatal result carries), then every diagnostic;
//! - lower: `loads: no` when the program fails to load (Go refuses it) with the load
//!   diagnostics, `loads: yes` with what `fn-hcl analyze` reports.

use fn_hcl::lower::ir::compile_files;
use fn_hcl::syntax::diag::{Diagnostic, plain_all, render_rich};
use fn_hcl::syntax::parser::parse_file;
use fn_hcl::syntax::span::SourceMap;
use std::path::{Path, PathBuf};

fn fixtures(kind: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/errors")
        .join(kind);
    let mut out: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "hcl"))
        .collect();
    out.sort();
    out
}

fn listing(diags: &[Diagnostic], sm: &SourceMap) -> String {
    let mut out = String::new();
    for d in diags {
        out.push_str(&d.plain(sm));
        out.push('\n');
    }
    out.push_str("---\n");
    out.push_str(&render_rich(diags, sm));
    out
}

/// Snapshots `text` as `KIND__NAME` beside the fixture set, with the fixture as input.
fn check(kind: &str, path: &Path, text: String) {
    let name = path.file_stem().expect("a file name").to_string_lossy();
    insta::with_settings!({
        snapshot_path => Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/errors/snapshots"),
        prepend_module_to_snapshot => false,
        input_file => path,
        omit_expression => true,
    }, {
        insta::assert_snapshot!(format!("{kind}__{name}"), text);
    });
}

#[test]
fn parse_errors() {
    let files = fixtures("parse");
    assert!(files.len() >= 50, "only {} parse fixtures", files.len());
    for path in files {
        let src = std::fs::read_to_string(&path).expect("fixture text");
        let mut sm = SourceMap::new();
        let f = sm.add("main.hcl", src.as_str());
        let text = match parse_file(&sm, f) {
            Ok(_) => panic!("{} parses; a parse fixture must fail", path.display()),
            Err(d) => format!("Error(): {}\n{}", plain_all(&d, &sm), listing(&d, &sm)),
        };
        check("parse", &path, text);
    }
}

#[test]
fn lower_errors() {
    let files = fixtures("lower");
    assert!(files.len() >= 20, "only {} lower fixtures", files.len());
    for path in files {
        let src = std::fs::read_to_string(&path).expect("fixture text");
        let text = match compile_files(&[("main.hcl".to_string(), src)]) {
            Err(e) => format!("loads: no\n{}", listing(&e.diags, &e.sources)),
            Ok(p) => {
                let d = fn_hcl::cli::analyze::analyze(&p);
                assert!(
                    !d.is_empty(),
                    "{} loads clean; a lower fixture must report",
                    path.display()
                );
                format!("loads: yes\n{}", listing(&d, &p.sources))
            }
        };
        check("lower", &path, text);
    }
}
