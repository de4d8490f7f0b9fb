//! Every example composition in the shared conformance corpus analyzes clean: the `hcl`
//! of its `HclInput` step compiles and `analyze` reports no errors (and no warnings).

mod common;

use common::shared_dir;

use fn_hcl::protocol::doc::Json;
use std::path::PathBuf;

/// The `hcl` text of every `HclInput` object in a YAML tree.
fn hcl_inputs(j: &Json, out: &mut Vec<String>) {
    match j {
        Json::Object(m) => {
            if matches!(m.get("kind"), Some(Json::String(k)) if k == "HclInput")
                && let Some(Json::String(h)) = m.get("hcl")
            {
                out.push(h.clone());
            }
            m.values().for_each(|v| hcl_inputs(v, out));
        }
        Json::Array(a) => a.iter().for_each(|v| hcl_inputs(v, out)),
        _ => {}
    }
}

#[test]
fn conformance_examples_analyze_clean() {
    let Some(shared) = shared_dir("analyze_examples") else {
        return;
    };
    let entries = std::fs::read_dir(shared.join("conformance/examples"))
        .expect("the shared directory has conformance/examples");
    let mut dirs: Vec<PathBuf> = entries.filter_map(Result::ok).map(|e| e.path()).collect();
    dirs.sort();
    let mut checked = 0;
    for dir in dirs {
        let Ok(text) = std::fs::read_to_string(dir.join("composition.yaml")) else {
            continue;
        };
        let docs = fn_hcl::protocol::yaml::load_all(&text).expect("composition.yaml is YAML");
        let mut inputs = Vec::new();
        docs.iter().for_each(|d| hcl_inputs(d, &mut inputs));
        assert_eq!(inputs.len(), 1, "{}: one HclInput", dir.display());
        let files = fn_hcl::syntax::txtar::parse(&inputs[0]).expect("txtar");
        let (diags, sm) = fn_hcl::cli::analyze::diagnostics(&files);
        let shown: Vec<String> = diags.iter().map(|d| d.plain(&sm)).collect();
        assert!(shown.is_empty(), "{}: {shown:#?}", dir.display());
        checked += 1;
    }
    assert!(checked >= 10, "only {checked} examples found");
}
