//! `fn-hcl explain` as a user runs it: render's inputs (examples/webapp before and after
//! the Deployment is observed, as the README shows), `--request`, `--format json`, and
//! bad input (analyze's diagnostics on stderr, exit 1, never a panic).

use std::io::Write;
use std::process::{Command, Output, Stdio};

fn fn_hcl(args: &[&str], stdin: Option<&str>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_fn-hcl"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("runs fn-hcl");
    let mut input = child.stdin.take().expect("stdin");
    if let Some(s) = stdin {
        input.write_all(s.as_bytes()).expect("writes stdin");
    }
    drop(input);
    child.wait_with_output().expect("finishes")
}

fn out(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

const WEBAPP: [&str; 3] = [
    "explain",
    "examples/webapp/xr.yaml",
    "examples/webapp/composition.yaml",
];

#[test]
fn webapp_before_and_after_the_deployment_is_observed() {
    let before = fn_hcl(&WEBAPP, None);
    let text = out(&before);
    assert_eq!(before.status.code(), Some(0), "{text}");
    assert!(
        text.contains("# explain: deferred: composite-status incomplete"),
        "{text}"
    );
    assert!(
        text.contains("#   unknown: self.resource.status.availableReplicas (main.hcl:26,27-65)"),
        "{text}"
    );
    assert!(
        text.contains("availableReplicas = self.resource.status.availableReplicas"),
        "{text}"
    );
    assert!(
        text.contains("#   item 0 (key \"invoices\", resource \"queue-invoices\"): emitted"),
        "{text}"
    );
    assert!(
        text.contains("name = format(\"%s-%s\", \"shop\", each.value)"),
        "{text}"
    );
    let mut args = WEBAPP.to_vec();
    args.extend(["-o", "examples/webapp/observed.yaml"]);
    let after = fn_hcl(&args, None);
    let text = out(&after);
    assert_eq!(after.status.code(), Some(0), "{text}");
    assert!(!text.contains("deferred"), "{text}");
    assert!(text.contains("availableReplicas = 3"), "{text}");
}

#[test]
fn json_format_and_request_from_stdin() {
    let req = "input:\n  apiVersion: function-hcl/v1\n  kind: HclInput\n  hcl: |\n    -- main.hcl --\n    resource r {\n      body = { name = req.composite.metadata.name, arn = self.resource.status.arn }\n    }\nobserved:\n  composite:\n    resource:\n      metadata:\n        name: shop\n";
    let o = fn_hcl(
        &["explain", "--request", "-", "--format", "json"],
        Some(req),
    );
    let text = out(&o);
    assert_eq!(o.status.code(), Some(0), "{text}");
    let j: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    let block = &j["steps"][0]["blocks"][0];
    assert_eq!(block["status"], "deferred", "{text}");
    assert_eq!(
        block["unknown"][0]["reference"], "self.resource.status.arn",
        "{text}"
    );
    assert_eq!(block["unknown"][0]["range"], "main.hcl:2,54-78", "{text}");
}

#[test]
fn bad_programs_get_analyze_diagnostics_and_exit_one() {
    for (hcl, want) in [
        ("resource r {\n  body = {\n", "Missing expression"),
        (
            "assert {\n  assertion = true\n}\n",
            "\"message\" is required",
        ),
        (
            "assert {\n  message = \"m\"\n}\n",
            "\"assertion\" is required",
        ),
        (
            "assert {\n  assertion = false\n  message = [1]\n}\n",
            "Invalid assert message",
        ),
    ] {
        let indented: String = hcl.lines().map(|l| format!("    {l}\n")).collect();
        let req = format!(
            "input:\n  apiVersion: function-hcl/v1\n  kind: HclInput\n  hcl: |\n    -- main.hcl --\n{indented}"
        );
        let o = fn_hcl(&["explain", "--request", "-"], Some(&req));
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{hcl}: {err}");
        assert!(err.contains(want), "{hcl}: {err}");
        assert!(!err.contains("panicked"), "{err}");
        assert!(out(&o).is_empty());
    }
    let o = fn_hcl(&["explain", "--request", "/nonexistent.yaml"], None);
    assert_eq!(o.status.code(), Some(1));
    let o = fn_hcl(&["explain"], None);
    assert_eq!(
        o.status.code(),
        Some(2),
        "clap: XR and COMPOSITION or --request"
    );
}
