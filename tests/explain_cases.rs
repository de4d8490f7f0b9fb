//! `fn-hcl explain` end to end: every `tests/cases/explain/*.txtar` is a program and a
//! request (the sections of `tests/cases`, see tests/txtar_cases) and, last, the expected
//! output: `-- explain.hcl --` (the folded program with its marks) or `-- explain.json --`
//! (`--format json`). A program explain refuses expects `exit 1` then analyze's report.
//! The cases live in a subdirectory so that the response corpus (tests/cases.rs and
//! ../shared/tools/case-conformance) does not read them.
//!
//! `FN_HCL_BLESS=1 cargo test --test explain_cases` rewrites the expected sections
//! (an absent one becomes `explain.hcl`); review every change.

mod txtar_cases;

use fn_hcl::cli::explain::{Format, output};
use fn_hcl::runtime::explain::{ExplainError, explain_request};
use std::path::PathBuf;
use txtar_cases::{case_files, case_request, sections, with_section};

/// What `fn-hcl explain --request` prints for the case (stdout, or `exit 1` and the
/// diagnostics it prints on stderr).
fn run(text: &str, format: Format) -> String {
    let req = match case_request(text) {
        Ok(r) => r,
        Err(e) => return format!("bad case: {e}\n"),
    };
    match explain_request(&req) {
        Ok(x) => output(&[("request".to_string(), x)], format),
        Err(ExplainError::Program(diags, sm)) => {
            format!("exit 1\n{}", fn_hcl::cli::analyze::report(&diags, &sm))
        }
        Err(ExplainError::Request(e)) => format!("exit 1\n{e}\n"),
    }
}

#[test]
fn explain_cases() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/cases/explain");
    let files = case_files(&dir);
    assert!(files.len() >= 10, "only {} explain cases", files.len());
    let bless = std::env::var("FN_HCL_BLESS").is_ok_and(|v| v == "1");
    let mut failures = Vec::new();
    for path in &files {
        let text = std::fs::read_to_string(path).expect("reads case");
        let secs = sections(&text);
        let (section, format) = match secs.last().map(|(n, _)| n.as_str()) {
            Some("explain.json") => ("explain.json", Format::Json),
            _ => ("explain.hcl", Format::Hcl),
        };
        let got = run(&text, format);
        let want = secs
            .iter()
            .find(|(n, _)| n == section)
            .map(|(_, v)| v.clone());
        if bless {
            std::fs::write(path, with_section(&text, section, &got)).expect("writes case");
            continue;
        }
        match want {
            Some(w) if w == got => {}
            Some(w) => failures.push(format!(
                "{}: explain output differs\n--- want:\n{w}\n--- got:\n{got}",
                path.display()
            )),
            None => failures.push(format!(
                "{}: no {section} section (run with FN_HCL_BLESS=1, then review)",
                path.display()
            )),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
