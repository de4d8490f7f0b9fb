//! `fn-hcl render` inputs: every conformance example's composition, XR, observed and extra
//! resources parse, and the expected output is readable by our YAML loader.

use fn_hcl::protojson::Json;
use fn_hcl::render::{self, ANNOTATION_RESOURCE_NAME};
use std::path::PathBuf;
use std::process::Command;

fn shared_dir() -> Option<PathBuf> {
    let candidates = [
        std::env::var_os("FN_HCL_SHARED").map(PathBuf::from),
        Some(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared")),
        Some(PathBuf::from("/work/shared")),
    ];
    candidates
        .into_iter()
        .flatten()
        .find(|p| p.join("conformance/examples").is_dir())
}

#[test]
fn examples_parse() {
    let Some(dir) = shared_dir() else {
        eprintln!("skipped: shared conformance data not found");
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
        assert!(fn_hcl::function::has_txtar_files(hcl), "{name}");
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
    let Some(dir) = shared_dir() else {
        eprintln!("skipped: shared conformance data not found");
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
        let docs = fn_hcl::yaml::load_documents(&String::from_utf8_lossy(&out.stdout)).unwrap();
        assert!(docs.len() >= 2);
    }
    let tmp = std::env::temp_dir().join(format!("fn-hcl-cli-render-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    std::fs::write(
        tmp.join("comp.yaml"),
        "apiVersion: apiextensions.crossplane.io/v1\nkind: Composition\nmetadata:\n  name: c\nspec:\n  mode: Pipeline\n  pipeline:\n  - step: templ\n    functionRef:\n      name: function-go-templating\n    input:\n      kind: GoTemplate\n",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_fn-hcl"))
        .args(["render"])
        .arg(ex.join("xr.yaml"))
        .arg(tmp.join("comp.yaml"))
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&tmp);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("\"templ\"") && err.contains("not an HclInput"),
        "{err}"
    );
}
