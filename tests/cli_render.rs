//! `fn-hcl render` inputs: every conformance example's composition, XR, observed and extra
//! resources parse, and the expected output is readable by our YAML loader.

mod common;

use common::shared_dir;

use fn_hcl::cli::render::{self, ANNOTATION_RESOURCE_NAME};
use fn_hcl::protocol::doc::Json;
use std::process::Command;

#[test]
fn examples_parse() {
    let Some(dir) = shared_dir("cli_render") else {
        return;
    };
    let mut seen = 0;
    for e in std::fs::read_dir(dir.join("conformance/examples")).unwrap() {
        let ex = e.unwrap().path();
        if !ex.is_dir() {
            continue;
        }
        seen += 1;
        let name = ex.display().to_string();
        let xr = render::read_object(&ex.join("xr.yaml")).unwrap();
        assert!(
            xr.get("metadata").and_then(|m| m.get("name")).is_some(),
            "{name}"
        );
        let comp = render::read_object(&ex.join("composition.yaml")).unwrap();
        let fns = render::read_documents(&ex.join("functions.yaml")).unwrap();
        let steps = render::pipeline_steps(&comp, Some(&fns)).unwrap();
        assert_eq!(steps.len(), 1, "{name}");
        assert_eq!(steps[0].name, "run hcl composition");
        let hcl = steps[0].input.get("hcl").and_then(Json::as_str).unwrap();
        assert!(fn_hcl::handler::has_txtar_files(hcl), "{name}");
        if ex.join("observed.yaml").exists() {
            let obs = render::read_documents(&ex.join("observed.yaml")).unwrap();
            assert!(!obs.is_empty());
            for o in &obs {
                let ann = o
                    .get("metadata")
                    .and_then(|m| m.get("annotations"))
                    .unwrap();
                assert!(ann.get(ANNOTATION_RESOURCE_NAME).is_some(), "{name}");
            }
        }
        if ex.join("extra-resources.yaml").exists() {
            let extra = render::read_documents(&ex.join("extra-resources.yaml")).unwrap();
            assert!(extra.iter().all(|d| d.get("kind").is_some()), "{name}");
        }
        let expected = render::read_documents(&ex.join("src/expected.yaml")).unwrap();
        assert!(expected.len() >= 2, "{name}");
        assert_eq!(
            expected[0].get("kind").and_then(Json::as_str),
            xr.get("kind").and_then(Json::as_str),
            "{name}"
        );
    }
    assert!(seen >= 10);
}

#[test]
fn render_reports_a_fatal_step_and_foreign_functions() {
    let Some(dir) = shared_dir("cli_render") else {
        return;
    };
    let ex = dir.join("conformance/examples/basic-resource");
    let out = Command::new(env!("CARGO_BIN_EXE_fn-hcl"))
        .current_dir(&ex)
        .args(["render", "xr.yaml", "composition.yaml", "functions.yaml"])
        .output()
        .unwrap();
    // Until the evaluator lands, the step answers with a Fatal result, which stops render
    // exactly as crossplane render stops.
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("returned a fatal result"), "{err}");
    } else {
        let docs =
            fn_hcl::protocol::yaml::load_documents(&String::from_utf8_lossy(&out.stdout)).unwrap();
        assert!(docs.len() >= 2);
    }
    let tmp = common::dir::Dir::new(
        "cli-render",
        &[(
            "comp.yaml",
            "apiVersion: apiextensions.crossplane.io/v1\nkind: Composition\nmetadata:\n  name: c\nspec:\n  mode: Pipeline\n  pipeline:\n  - step: templ\n    functionRef:\n      name: function-go-templating\n    input:\n      kind: GoTemplate\n",
        )],
    );
    let out = Command::new(env!("CARGO_BIN_EXE_fn-hcl"))
        .args(["render"])
        .arg(ex.join("xr.yaml"))
        .arg(tmp.path("comp.yaml"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("\"templ\"") && err.contains("not an HclInput"),
        "{err}"
    );
}

// ---------------------------------------------------------------------------------------
// Render output against crossplane's, with the function's answer reconstructed from the
// expected output (so this checks render's framing, not the evaluator).

use fn_hcl::protocol::proto::v1;
use fn_hcl::protocol::protojson::{json_to_proto_value, json_to_struct};
use fn_hcl::protocol::response::{ResponseBuilder, Severity, Status};
use std::collections::BTreeMap;

fn remove_path(doc: &mut Json, path: &[&str]) {
    let Json::Object(m) = doc else { return };
    if path.len() == 1 {
        m.remove(path[0]);
        return;
    }
    if let Some(child) = m.get_mut(path[0]) {
        remove_path(child, &path[1..]);
        if matches!(child, Json::Object(c) if c.is_empty()) {
            m.remove(path[0]);
        }
    }
}

/// The response a function must have given for crossplane render to print `expected`.
fn response_from_expected(
    expected: &[Json],
    req: &v1::RunFunctionRequest,
) -> v1::RunFunctionResponse {
    let mut b = ResponseBuilder::new(req);
    for (i, d) in expected.iter().enumerate() {
        match d.get("kind").and_then(Json::as_str) {
            _ if i == 0 => {
                let mut status = d.get("status").cloned().unwrap_or_default();
                if let Some(Json::Array(conds)) = status.get("conditions") {
                    for c in conds {
                        let t = c.get("type").and_then(Json::as_str).unwrap();
                        if t == "Ready" {
                            continue;
                        }
                        let st = match c.get("status").and_then(Json::as_str) {
                            Some("True") => Status::ConditionTrue,
                            Some("False") => Status::ConditionFalse,
                            _ => Status::ConditionUnknown,
                        };
                        b.add_condition(
                            t,
                            st,
                            c.get("reason").and_then(Json::as_str).unwrap_or(""),
                            c.get("message").and_then(Json::as_str).map(str::to_string),
                        );
                    }
                }
                remove_path(&mut status, &["conditions"]);
                if matches!(&status, Json::Object(m) if !m.is_empty()) {
                    let status = json_to_struct(&status, "status").unwrap();
                    b.merge_composite_status(
                        fn_hcl::protocol::request::struct_to_value(&status).unwrap(),
                    );
                }
            }
            Some("Result") => {
                let sev = match d.get("severity").and_then(Json::as_str) {
                    Some("SEVERITY_WARNING") => Severity::Warning,
                    _ => Severity::Normal,
                };
                b.add_result(
                    sev,
                    d.get("message").and_then(Json::as_str).unwrap_or(""),
                    None,
                );
            }
            Some("Context") => {
                if let Some(Json::Object(fields)) = d.get("fields") {
                    for (k, v) in fields {
                        b.set_context(k, json_to_proto_value(v).unwrap());
                    }
                }
            }
            _ => {
                let name = d
                    .get("metadata")
                    .and_then(|m| m.get("annotations"))
                    .and_then(|a| a.get(ANNOTATION_RESOURCE_NAME))
                    .and_then(Json::as_str)
                    .unwrap()
                    .to_string();
                let mut body = d.clone();
                remove_path(&mut body, &["metadata", "generateName"]);
                remove_path(&mut body, &["metadata", "ownerReferences"]);
                remove_path(
                    &mut body,
                    &["metadata", "labels", "crossplane.io/composite"],
                );
                remove_path(
                    &mut body,
                    &["metadata", "annotations", ANNOTATION_RESOURCE_NAME],
                );
                b.set_resource(&name, json_to_struct(&body, "body").unwrap());
            }
        }
    }
    b.finish()
}

/// The render-conformance tool's comparable form: documents keyed by (apiVersion, kind,
/// name) without lastTransitionTime, and the results in order without metadata.
fn normalize(docs: &[Json]) -> (BTreeMap<String, Json>, Vec<Json>) {
    fn strip(j: &Json) -> Json {
        match j {
            Json::Object(m) => Json::Object(
                m.iter()
                    .filter(|(k, _)| *k != "lastTransitionTime")
                    .map(|(k, v)| (k.clone(), strip(v)))
                    .collect(),
            ),
            Json::Array(a) => Json::Array(a.iter().map(strip).collect()),
            other => other.clone(),
        }
    }
    let mut keyed = BTreeMap::new();
    let mut results = Vec::new();
    for d in docs {
        let d = strip(d);
        let kind = d.get("kind").and_then(Json::as_str).unwrap_or("");
        match kind {
            "Result" => {
                let mut r = d.clone();
                for k in ["metadata", "apiVersion", "kind"] {
                    remove_path(&mut r, &[k]);
                }
                results.push(r);
            }
            "Context" => {
                keyed.insert(
                    "Context".into(),
                    d.get("fields").cloned().unwrap_or_default(),
                );
            }
            _ => {
                let meta = d.get("metadata");
                let name = meta
                    .and_then(|m| m.get("annotations"))
                    .and_then(|a| a.get(ANNOTATION_RESOURCE_NAME))
                    .or_else(|| meta.and_then(|m| m.get("name")))
                    .and_then(Json::as_str)
                    .unwrap_or("");
                let key = format!(
                    "{}/{kind}/{name}",
                    d.get("apiVersion").and_then(Json::as_str).unwrap_or("")
                );
                keyed.insert(key, d);
            }
        }
    }
    (keyed, results)
}

#[test]
fn render_output_matches_crossplane_for_each_example() {
    let Some(dir) = shared_dir("cli_render") else {
        return;
    };
    for e in std::fs::read_dir(dir.join("conformance/examples")).unwrap() {
        let ex = e.unwrap().path();
        if !ex.is_dir() {
            continue;
        }
        let name = ex.display().to_string();
        let opt = |f: &str| {
            let p = ex.join(f);
            if p.exists() {
                render::read_documents(&p).unwrap()
            } else {
                Vec::new()
            }
        };
        let inputs = render::Inputs {
            xr: render::read_object(&ex.join("xr.yaml")).unwrap(),
            composition: render::read_object(&ex.join("composition.yaml")).unwrap(),
            functions: Some(render::read_documents(&ex.join("functions.yaml")).unwrap()),
            observed: opt("observed.yaml"),
            extra: opt("extra-resources.yaml"),
            ..Default::default()
        };
        let expected = render::read_documents(&ex.join("src/expected.yaml")).unwrap();
        let docs = render::render(&inputs, &mut |req| response_from_expected(&expected, req))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        // what we print must read back as what we rendered
        let printed = fn_hcl::protocol::yaml::load_documents(&render::to_yaml(&docs)).unwrap();
        assert_eq!(printed, docs, "{name}");
        let (ek, er) = normalize(&expected);
        let (ak, ar) = normalize(&printed);
        assert_eq!(
            ek.keys().collect::<Vec<_>>(),
            ak.keys().collect::<Vec<_>>(),
            "{name}"
        );
        for (k, v) in &ek {
            assert_eq!(Some(v), ak.get(k), "{name}: {k}");
        }
        assert_eq!(er, ar, "{name}: results");
    }
}
