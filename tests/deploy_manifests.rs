//! The manifests a platform team applies (`examples/deploy/`) and the package metadata
//! (`package/crossplane.yaml`) validated against Crossplane's CRDs and the package
//! metadata schema in `../shared/crossplane`, the example XR against its XRD, and the
//! pieces checked to fit together: the Composition names the Function, the Function its
//! DeploymentRuntimeConfig, whose arguments `fn-hcl serve` accepts and whose termination
//! grace covers the drain.

mod common;

use clap::Parser;
use common::k8s::{KindSchema, load_kinds, schema_for, validate, xrd_kind_schemas, yaml_documents};
use serde_json::Value;
use std::path::{Path, PathBuf};

fn repo(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(p)
}

/// The kinds of ../shared/crossplane's CRDs and package metadata schema (`None`, after
/// `shared_dir` said SKIPPED or failed under CI=true, when ../shared is missing).
fn need_kinds() -> Option<Vec<KindSchema>> {
    let shared = common::shared_dir("deploy_manifests")?.join("crossplane");
    assert!(shared.is_dir(), "{} is missing", shared.display());
    Some(load_kinds(&[&shared.join("crds"), &shared.join("meta")]))
}

/// Every document of every YAML file under examples/deploy and package/, by file.
fn manifests() -> Vec<(PathBuf, Value)> {
    let mut files = Vec::new();
    common::walk(&repo("examples/deploy"), &mut files);
    files.push(repo("package/crossplane.yaml"));
    let mut out = Vec::new();
    for f in files
        .iter()
        .filter(|f| f.extension().is_some_and(|e| e == "yaml"))
    {
        let text = std::fs::read_to_string(f).expect("read manifest");
        for d in yaml_documents(&text).unwrap_or_else(|e| panic!("{}: {e}", f.display())) {
            out.push((f.clone(), d));
        }
    }
    out
}

#[test]
fn every_manifest_is_valid_against_the_crossplane_schemas() {
    let Some(mut kinds) = need_kinds() else {
        return;
    };
    let docs = manifests();
    // The XRD defines the XR's kind: the API server validates the XR against it. (The XRD
    // itself has no CRD in ../shared; its schema must compile and its names fit.)
    for (_, d) in &docs {
        if d["kind"] == "CompositeResourceDefinition" {
            kinds.extend(xrd_kind_schemas(d));
        }
    }
    let mut checked = Vec::new();
    for (file, d) in &docs {
        if d["kind"] == "CompositeResourceDefinition" {
            assert_eq!(d["apiVersion"], "apiextensions.crossplane.io/v2");
            let (group, plural) = (&d["spec"]["group"], &d["spec"]["names"]["plural"]);
            assert_eq!(
                d["metadata"]["name"].as_str(),
                Some(
                    format!(
                        "{}.{}",
                        plural.as_str().unwrap_or(""),
                        group.as_str().unwrap_or("")
                    )
                    .as_str()
                ),
                "an XRD is named PLURAL.GROUP"
            );
            continue;
        }
        let k = schema_for(&kinds, d).unwrap_or_else(|| {
            panic!(
                "{}: no schema for {} {} in ../shared/crossplane",
                file.display(),
                d["apiVersion"],
                d["kind"]
            )
        });
        let errors = validate(&k.schema, d);
        assert!(errors.is_empty(), "{}: {errors:#?}", file.display());
        checked.push(format!("{} {}", k.api_version, k.kind));
    }
    checked.sort();
    assert_eq!(
        checked,
        [
            "apiextensions.crossplane.io/v1 Composition",
            "meta.pkg.crossplane.io/v1 Function",
            "pkg.crossplane.io/v1 Function",
            "pkg.crossplane.io/v1beta1 DeploymentRuntimeConfig",
            "storage.example.org/v1alpha1 XBucket",
        ]
    );
}

/// The validation is strict: a misspelt field, a wrong type and a missing name are
/// caught (so the test above is not passing by accepting anything).
#[test]
fn the_validation_catches_typos_and_wrong_types() {
    let Some(kinds) = need_kinds() else {
        return;
    };
    let drc = manifests()
        .into_iter()
        .map(|(_, d)| d)
        .find(|d| d["kind"] == "DeploymentRuntimeConfig")
        .expect("a DeploymentRuntimeConfig");
    let k = schema_for(&kinds, &drc).expect("schema");
    assert!(validate(&k.schema, &drc).is_empty());

    let mut typo = drc.clone();
    typo["spec"]["deploymentTemplate"]["spec"]["replica"] = Value::from(3);
    let errors = validate(&k.schema, &typo);
    assert!(errors.iter().any(|e| e.contains("replica")), "{errors:?}");

    let mut wrong_type = drc.clone();
    wrong_type["spec"]["deploymentTemplate"]["spec"]["replicas"] = Value::from("three");
    assert!(!validate(&k.schema, &wrong_type).is_empty());

    let mut deep = drc.clone();
    deep["spec"]["deploymentTemplate"]["spec"]["template"]["spec"]["containers"][0]["readinessProbe"]
        ["httpGet"]["paht"] = Value::from("/readyz");
    assert!(!validate(&k.schema, &deep).is_empty());

    let mut unnamed = drc;
    unnamed["metadata"] = serde_json::json!({});
    assert!(!validate(&k.schema, &unnamed).is_empty());

    // The XR is held to its XRD's schema the same way.
    let docs: Vec<Value> = manifests().into_iter().map(|(_, d)| d).collect();
    let xrd = docs
        .iter()
        .find(|d| d["kind"] == "CompositeResourceDefinition")
        .expect("XRD");
    let xr = docs.iter().find(|d| d["kind"] == "XBucket").expect("XR");
    let xr_kinds = xrd_kind_schemas(xrd);
    let k = schema_for(&xr_kinds, xr).expect("XR schema");
    assert!(validate(&k.schema, xr).is_empty());
    let mut typo = xr.clone();
    typo["spec"]["regoin"] = Value::from("eu-west-1");
    assert!(
        validate(&k.schema, &typo)
            .iter()
            .any(|e| e.contains("regoin"))
    );
    let mut too_many = xr.clone();
    too_many["spec"]["replicas"] = Value::from(9);
    assert!(!validate(&k.schema, &too_many).is_empty(), "maximum: 5");
}

#[derive(Parser)]
struct Serve {
    #[command(flatten)]
    args: fn_hcl::server::ServeArgs,
}

#[test]
fn the_pieces_fit_together() {
    let docs: Vec<Value> = manifests().into_iter().map(|(_, d)| d).collect();
    let find = |api: &str, kind: &str| {
        docs.iter()
            .find(|d| d["apiVersion"] == api && d["kind"] == kind)
            .unwrap_or_else(|| panic!("no {api} {kind}"))
    };
    let function = find("pkg.crossplane.io/v1", "Function");
    let drc = find("pkg.crossplane.io/v1beta1", "DeploymentRuntimeConfig");
    let composition = find("apiextensions.crossplane.io/v1", "Composition");
    let xrd = find(
        "apiextensions.crossplane.io/v2",
        "CompositeResourceDefinition",
    );
    let xr = find("storage.example.org/v1alpha1", "XBucket");
    let meta = find("meta.pkg.crossplane.io/v1", "Function");

    assert_eq!(
        function["spec"]["runtimeConfigRef"]["name"],
        drc["metadata"]["name"]
    );
    assert_eq!(function["metadata"]["name"], meta["metadata"]["name"]);
    for step in composition["spec"]["pipeline"]
        .as_array()
        .expect("pipeline")
    {
        assert_eq!(step["functionRef"]["name"], function["metadata"]["name"]);
        assert_eq!(step["input"]["kind"], "HclInput");
    }
    let group = xrd["spec"]["group"].as_str().expect("group");
    assert_eq!(
        composition["spec"]["compositeTypeRef"]["apiVersion"],
        xr["apiVersion"]
    );
    assert!(
        xr["apiVersion"]
            .as_str()
            .expect("apiVersion")
            .starts_with(group)
    );

    // Crossplane's container is package-runtime; its args are `fn-hcl serve` flags.
    let pod = &drc["spec"]["deploymentTemplate"]["spec"]["template"]["spec"];
    let container = &pod["containers"][0];
    assert_eq!(container["name"], "package-runtime");
    let args: Vec<&str> = container["args"]
        .as_array()
        .expect("args")
        .iter()
        .map(|a| a.as_str().expect("string arg"))
        .collect();
    let serve = Serve::try_parse_from(std::iter::once("serve").chain(args.iter().copied()))
        .unwrap_or_else(|e| panic!("fn-hcl serve refuses the runtime config's args: {e}"))
        .args;
    // SIGKILL comes terminationGracePeriodSeconds after SIGTERM: the drain must fit.
    let termination = pod["terminationGracePeriodSeconds"].as_u64().expect("set");
    let drain = serve.grace_period + fn_hcl::server::RUNTIME_STOP;
    assert!(
        drain.as_secs_f64() + 2.0 <= termination as f64,
        "drain {drain:?} does not fit terminationGracePeriodSeconds {termination}"
    );
    // One evaluation slot per CPU the pod may use (the request, rounded up).
    let cpu = container["resources"]["requests"]["cpu"]
        .as_str()
        .expect("cpu request");
    let millis: f64 = cpu.strip_suffix('m').map_or_else(
        || cpu.parse::<f64>().expect("cpu") * 1000.0,
        |m| m.parse().expect("millicpu"),
    );
    assert!(
        serve
            .max_concurrent_evaluations
            .is_some_and(|n| n as f64 >= millis / 1000.0)
    );
    // The probes are the HTTP ones of the metrics port.
    for (probe, path) in [("readinessProbe", "/readyz"), ("livenessProbe", "/healthz")] {
        assert_eq!(container[probe]["httpGet"]["path"], path);
        assert_eq!(container[probe]["httpGet"]["port"], "metrics");
    }
    assert!(
        container["ports"]
            .as_array()
            .expect("ports")
            .iter()
            .any(|p| p["name"] == "metrics" && p["containerPort"] == 8080)
    );
}

/// The example Composition's program runs: `fn-hcl render` composes the XR.
#[test]
fn the_example_composition_renders() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_fn-hcl"))
        .args([
            "render",
            "examples/deploy/xr.yaml",
            "examples/deploy/composition.yaml",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("run fn-hcl render");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let docs = yaml_documents(&text).expect("render output is YAML");
    let kinds: Vec<&str> = docs.iter().filter_map(|d| d["kind"].as_str()).collect();
    assert_eq!(
        kinds.iter().filter(|k| **k == "Bucket").count(),
        3,
        "the bucket and its two replicas: {text}"
    );
    assert!(kinds.contains(&"BucketVersioning"), "{text}");
    assert!(!text.contains("SEVERITY_FATAL"), "{text}");
}
