//! `fn-hcl explain` folds only what the VM knows: a program whose every block ran to
//! completion prints as a program that gives the same response. Checked over every
//! conformance case (`../shared/conformance/cases`), fn-hcl's own cases (`tests/cases`)
//! and every conformance example (each step's request as `render` builds it): where the
//! original response is fully resolved without warnings or a Fatal result, the explained
//! program replaces the input's `hcl` and must answer the same, byte for byte as JSON.
//! Every other case must still explain without a panic and print a program that parses.

mod txtar_cases;

use fn_hcl::protocol::doc::Json;
use fn_hcl::protocol::proto::v1;
use fn_hcl::protocol::protojson::{json_to_struct, response_to_json, struct_to_json};
use fn_hcl::runtime::explain::{ExplainError, explain_request};
use std::path::PathBuf;
use txtar_cases::{case_files, case_request, shared_dir};

fn response(req: &v1::RunFunctionRequest) -> Json {
    response_to_json(&fn_hcl::handler::run_function(req)).expect("response encodes")
}

/// Fully resolved, no warnings, no Fatal result.
fn fully_known(rsp: &v1::RunFunctionResponse) -> bool {
    let fatal = rsp.results.iter().any(|r| {
        r.severity == v1::Severity::Fatal as i32 || r.severity == v1::Severity::Warning as i32
    });
    let conditions_true = rsp
        .conditions
        .iter()
        .filter(|c| c.r#type == "FullyResolved" || c.r#type == "HclDiagnostics")
        .all(|c| c.status == v1::Status::ConditionTrue as i32);
    !fatal && conditions_true && !rsp.conditions.is_empty()
}

/// The request with its input's `hcl` replaced.
fn with_hcl(req: &v1::RunFunctionRequest, hcl: &str) -> v1::RunFunctionRequest {
    let mut input = struct_to_json(req.input.as_ref().expect("has input")).expect("input");
    if let Json::Object(m) = &mut input {
        m.insert("hcl".into(), Json::String(hcl.to_string()));
    }
    let mut out = req.clone();
    out.input = Some(json_to_struct(&input, "input").expect("input struct"));
    out
}

#[derive(Default)]
struct Tally {
    compared: usize,
    explained: usize,
    refused: usize,
    failures: Vec<String>,
}

fn check(name: &str, req: &v1::RunFunctionRequest, t: &mut Tally) {
    let original = fn_hcl::handler::run_function(req);
    let x = match explain_request(req) {
        Ok(x) => x,
        Err(ExplainError::Program(..)) | Err(ExplainError::Request(_)) => {
            // Programs with errors are refused with analyze's diagnostics (bad_input.rs).
            t.refused += 1;
            return;
        }
    };
    t.explained += 1;
    let txtar = fn_hcl::syntax::txtar::format(&x.files);
    // The printed program must parse.
    if let Err(e) = fn_hcl::lower::ir::compile_txtar(&txtar) {
        t.failures.push(format!(
            "{name}: the explained program does not load: {}\n{txtar}",
            e.message()
        ));
        return;
    }
    if !fully_known(&original) {
        return;
    }
    t.compared += 1;
    let again = response(&with_hcl(req, &txtar));
    let want = response_to_json(&original).expect("encodes");
    if again != want {
        t.failures.push(format!(
            "{name}: the explained program answers differently\n--- explained:\n{txtar}\n--- want:\n{}\n--- got:\n{}",
            fn_hcl::protocol::doc::to_pretty(&want),
            fn_hcl::protocol::doc::to_pretty(&again)
        ));
    }
}

#[test]
fn explained_programs_answer_the_same() {
    let mut t = Tally::default();
    let own = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/cases");
    let mut dirs = vec![own];
    let shared = shared_dir("explain_roundtrip");
    if let Some(s) = &shared {
        dirs.push(s.join("conformance/cases"));
    }
    for dir in dirs {
        for f in case_files(&dir) {
            let text = std::fs::read_to_string(&f).expect("reads case");
            let Ok(req) = case_request(&text) else {
                continue;
            };
            check(&f.display().to_string(), &req, &mut t);
        }
    }
    if let Some(s) = &shared {
        let mut examples: Vec<PathBuf> = std::fs::read_dir(s.join("conformance/examples"))
            .expect("examples")
            .filter_map(|e| e.ok().map(|e| e.path()))
            .collect();
        examples.sort();
        for ex in examples {
            let opt = |n: &str| Some(ex.join(n)).filter(|p| p.exists());
            let inputs = fn_hcl::cli::render::Inputs::read(
                &ex.join("xr.yaml"),
                &ex.join("composition.yaml"),
                None,
                opt("observed.yaml").as_deref(),
                opt("extra-resources.yaml").as_deref(),
            )
            .expect("example inputs");
            let steps = fn_hcl::cli::explain::step_requests(&inputs).expect("steps");
            for (step, req) in steps {
                check(&format!("{} step {step}", ex.display()), &req, &mut t);
            }
        }
    }
    eprintln!(
        "explain round trip: {} explained, {} compared, {} refused",
        t.explained, t.compared, t.refused
    );
    assert!(t.failures.is_empty(), "{}", t.failures.join("\n\n"));
    // fn-hcl's own cases alone give dozens of fully known programs.
    assert!(t.compared >= 40, "only {} programs compared", t.compared);
    if shared.is_some() {
        assert!(t.compared >= 100, "only {} programs compared", t.compared);
    }
}
