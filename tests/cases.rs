//! fn-hcl's own end-to-end corpus: every `tests/cases/*.txtar` is one program, one request and
//! the full expected response, run in-process through `fn_hcl::handler::run_function`.
//!
//! A case file is txtar, in the format of `../shared/conformance/cases` (its README): text
//! before the first `-- NAME --` marker is a comment (one line saying what the case checks),
//! then one or more HCL files (`-- main.hcl --`, ...), `-- request.yaml --` (a
//! RunFunctionRequest in protojson-as-YAML, without `input`), optionally `-- input.yaml --`
//! (the whole `input` object, replacing the HclInput built from the HCL files), and
//! `-- response.json --` (the expected RunFunctionResponse in protojson: sorted keys, 2-space
//! indentation). Responses are compared as JSON values (numbers by value, maps unordered,
//! lists ordered, messages exactly).
//!
//! Regenerating expectations: `FN_HCL_BLESS=1 cargo test --test cases` rewrites every
//! response.json from the actual output instead of comparing. EVERY regenerated file must be
//! reviewed (`git diff tests/cases`) against what the Go implementation and DESIGN.md say the
//! answer must be; never accept a blessed file blindly, or the corpus stops testing anything.
//! A case whose expected response was written by hand because fn-hcl is known to be wrong
//! starts its comment with `KNOWN FAILURE`; blessing skips it, so it keeps failing until the
//! code is fixed (then drop the marker).
//!
//! The same files also run through `../shared/tools/case-conformance BINARY tests/cases`;
//! keep request scalars that YAML 1.1 and 1.2 read differently (`on`, `yes`, `n`, ...)
//! quoted or out of the requests, so that PyYAML and fn-hcl build the same request.

mod txtar_cases;

use fn_hcl::protocol::doc::{Json, to_pretty};
use fn_hcl::protocol::protojson::{request_from_json, response_to_json};
use serde_json::Value;
use std::path::PathBuf;
use txtar_cases::{case_files, request_json, sections, with_section};

/// Runs one case and returns the response as pretty protojson text.
fn run_case(secs: &[(String, String)]) -> Result<String, String> {
    let req = request_json(secs)?;
    let req = request_from_json(&req).map_err(|e| format!("request does not decode: {e}"))?;
    let rsp = fn_hcl::handler::run_function(&req);
    let json = response_to_json(&rsp).map_err(|e| format!("response does not encode: {e}"))?;
    Ok(to_pretty(&json))
}

fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 300 {
        let cut: String = s.chars().take(300).collect();
        format!("{cut}…")
    } else {
        s
    }
}

/// The first difference between expected and actual, as `path: expected X, got Y`.
fn first_diff(exp: &Value, got: &Value, path: &str) -> Option<String> {
    match (exp, got) {
        (Value::Object(a), Value::Object(b)) => {
            let keys: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
            for k in keys {
                let p = format!("{path}.{k}");
                match (a.get(k), b.get(k)) {
                    (Some(x), None) => {
                        return Some(format!("{p}: missing (expected {})", short(x)));
                    }
                    (None, Some(y)) => return Some(format!("{p}: unexpected {}", short(y))),
                    (Some(x), Some(y)) => {
                        if let Some(d) = first_diff(x, y, &p) {
                            return Some(d);
                        }
                    }
                    (None, None) => {}
                }
            }
            None
        }
        (Value::Array(a), Value::Array(b)) => {
            for (i, (x, y)) in a.iter().zip(b.iter()).enumerate() {
                if let Some(d) = first_diff(x, y, &format!("{path}[{i}]")) {
                    return Some(d);
                }
            }
            (a.len() != b.len()).then(|| {
                format!(
                    "{path}: {} items expected, got {}: {}",
                    a.len(),
                    b.len(),
                    short(got)
                )
            })
        }
        (Value::Number(a), Value::Number(b)) if a.as_f64() == b.as_f64() => None,
        (Value::String(a), Value::String(b)) if a != b => Some(format!(
            "{path}:\n      expected {a:?}\n      got      {b:?}"
        )),
        _ if exp == got => None,
        _ => Some(format!(
            "{path}: expected {}, got {}",
            short(exp),
            short(got)
        )),
    }
}

/// Top-level members in the order that matters most (the conformance README's order), then
/// anything else, so the first difference reported is the most important one.
const PRIORITY: [&str; 6] = [
    "desired",
    "context",
    "requirements",
    "conditions",
    "results",
    "meta",
];

fn first_response_diff(exp: &Value, got: &Value) -> Option<String> {
    let (Value::Object(a), Value::Object(b)) = (exp, got) else {
        return first_diff(exp, got, "");
    };
    for key in PRIORITY {
        let p = format!(".{key}");
        match (a.get(key), b.get(key)) {
            (Some(x), Some(y)) => {
                if let Some(d) = first_diff(x, y, &p) {
                    return Some(d);
                }
            }
            (Some(x), None) => return Some(format!("{p}: missing (expected {})", short(x))),
            (None, Some(y)) => return Some(format!("{p}: unexpected {}", short(y))),
            (None, None) => {}
        }
    }
    first_diff(exp, got, "")
}

/// Cases whose comment starts with this hold a hand-written expectation that fn-hcl does not
/// meet yet; blessing never overwrites them.
const KNOWN_FAILURE: &str = "KNOWN FAILURE";

/// The case's text with `response` as its response.json section.
fn blessed_text(text: &str, response: &str) -> String {
    with_section(text, "response.json", &format!("{}\n", response.trim_end()))
}

#[test]
fn corpus_cases() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/cases");
    let files = case_files(&dir);
    let bless = std::env::var("FN_HCL_BLESS").is_ok_and(|v| v == "1");
    let mut failures = Vec::new();
    let mut blessed = 0;
    for path in &files {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) => {
                failures.push(format!("{name}: cannot read: {e}"));
                continue;
            }
        };
        let secs = sections(&text);
        let actual = match run_case(&secs) {
            Ok(a) => a,
            Err(e) => {
                failures.push(format!("{name}: {e}"));
                continue;
            }
        };
        if bless && text.starts_with(KNOWN_FAILURE) {
            eprintln!("not blessed {name}: its expectation is hand-written (KNOWN FAILURE)");
        } else if bless {
            let new = blessed_text(&text, &actual);
            if new != text {
                if let Err(e) = std::fs::write(path, new) {
                    failures.push(format!("{name}: cannot write: {e}"));
                }
                blessed += 1;
                eprintln!("blessed {name}: REVIEW this diff before committing");
            }
            continue;
        }
        let Some((_, expected)) = secs.iter().find(|(k, _)| k == "response.json") else {
            failures.push(format!(
                "{name}: no response.json section (run with FN_HCL_BLESS=1, then review)"
            ));
            continue;
        };
        let exp: Value = match serde_json::from_str(expected) {
            Ok(v) => v,
            Err(e) => {
                failures.push(format!("{name}: response.json is not JSON: {e}"));
                continue;
            }
        };
        let got: Value = match serde_json::from_str(&actual) {
            Ok(v) => v,
            Err(e) => {
                failures.push(format!("{name}: actual response is not JSON: {e}"));
                continue;
            }
        };
        if let Some(d) = first_response_diff(&exp, &got) {
            failures.push(format!("{name}\n    {d}"));
        }
    }
    if bless {
        eprintln!(
            "FN_HCL_BLESS=1: rewrote {blessed} of {} response.json files; review every one",
            files.len()
        );
    }
    assert!(
        bless || files.len() >= 90,
        "expected the corpus of at least 90 cases in {}, found {}",
        dir.display(),
        files.len()
    );
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n  {}",
        failures.len(),
        files.len(),
        failures.join("\n  ")
    );
}

#[test]
fn harness_compares_values_not_text() {
    let a: Value = serde_json::from_str(r#"{"a": [1, 2.0, {"x": 1.5e-7}], "b": "s"}"#).unwrap();
    let b: Value = serde_json::from_str(r#"{"b": "s", "a": [1.0, 2, {"x": 1.5e-07}]}"#).unwrap();
    assert_eq!(first_diff(&a, &b, ""), None);
    let c: Value = serde_json::from_str(r#"{"b": "s", "a": [1, 3, {"x": 1.5e-07}]}"#).unwrap();
    assert_eq!(
        first_diff(&a, &c, "").as_deref(),
        Some(".a[1]: expected 2.0, got 3")
    );
    let d: Value = serde_json::from_str(r#"{"a": [1, 2]}"#).unwrap();
    assert!(
        first_diff(&a, &d, "")
            .unwrap()
            .starts_with(".a: 3 items expected, got 2")
    );
}

#[test]
fn harness_reads_comment_and_sections() {
    let secs = sections("what it checks\n-- main.hcl --\nlocals {}\n-- request.yaml --\n{}\n");
    assert_eq!(secs.len(), 2);
    assert_eq!(secs[0], ("main.hcl".to_string(), "locals {}\n".to_string()));
    let req = request_json(&secs).unwrap();
    let hcl = req
        .get("input")
        .and_then(|i| i.get("hcl"))
        .and_then(Json::as_str);
    assert_eq!(hcl, Some("-- main.hcl --\nlocals {}\n"));
    assert_eq!(
        blessed_text("c\n-- a --\nx\n-- response.json --\nold\n", "{}"),
        "c\n-- a --\nx\n-- response.json --\n{}\n"
    );
}
