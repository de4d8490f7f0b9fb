//! `fn-hcl eval` end to end on recorded conformance cases whose answer does not depend on
//! the evaluator, and request reading of a few recorded requests.

#[path = "common/dir.rs"]
#[allow(dead_code)] // only `Dir::new` and `path` here
mod dir;
mod txtar_cases;

use dir::Dir;
use txtar_cases::{request_json, sections, shared_dir};

use fn_hcl::protocol::doc::{Json, parse_json};
use fn_hcl::protocol::proto::v1;
use fn_hcl::protocol::protojson::{request_from_json, request_from_text};
use fn_hcl::protocol::request::Request;
use std::process::Command;

/// The case's request as the conformance harness builds it, and the recorded response text.
fn load_case(dir: &std::path::Path, name: &str) -> (Json, String) {
    let text =
        std::fs::read_to_string(dir.join(format!("conformance/cases/{name}.txtar"))).unwrap();
    let secs = sections(&text);
    let response = secs.iter().find(|(k, _)| k == "response.json").unwrap();
    (request_json(&secs).unwrap(), response.1.clone())
}

#[test]
fn eval_input_empty_hcl_prints_the_recorded_response() {
    let Some(dir) = shared_dir("cli_eval") else {
        return;
    };
    let (req, expected) = load_case(&dir, "input-empty-hcl");
    let tmp = Dir::new(
        "cli-eval",
        &[("req.json", fn_hcl::protocol::doc::to_pretty(&req).as_str())],
    );
    let out = Command::new(env!("CARGO_BIN_EXE_fn-hcl"))
        .args(["eval", "--request"])
        .arg(tmp.path("req.json"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8(out.stdout).unwrap().trim_end(),
        expected.trim_end()
    );
}

#[test]
fn eval_reads_yaml_from_stdin_and_fails_only_on_unreadable_requests() {
    use std::io::Write as _;
    let mut child = Command::new(env!("CARGO_BIN_EXE_fn-hcl"))
        .args(["eval", "--request", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"meta:\n  tag: abc\ninput:\n  hcl: \"\"\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let rsp = parse_json(&String::from_utf8(out.stdout).unwrap()).unwrap();
    assert_eq!(
        rsp.get("meta").unwrap().get("tag").unwrap().as_str(),
        Some("abc")
    );

    let bad = Command::new(env!("CARGO_BIN_EXE_fn-hcl"))
        .args(["eval", "--request", "/nonexistent/req.yaml"])
        .output()
        .unwrap();
    assert!(!bad.status.success());
}

#[test]
fn recorded_requests_read_into_req_values() {
    let Some(dir) = shared_dir("cli_eval") else {
        return;
    };
    let (req, _) = load_case(&dir, "connection-passthrough-observed");
    let req: v1::RunFunctionRequest = request_from_json(&req).unwrap();
    let r = Request::from_proto(&req).unwrap();
    assert_eq!(
        r.composite_connection
            .get_attr("user")
            .and_then(|v| v.as_str()),
        Some("YWRtaW4=")
    );
    let db = r.observed_connection("db").unwrap();
    assert_eq!(
        db.get_attr("password").and_then(|v| v.as_str()),
        Some("czNjcjN0")
    );
    assert_eq!(
        r.composite
            .get_attr("metadata")
            .and_then(|m| m.get_attr("name"))
            .and_then(|v| v.as_str()),
        Some("demo")
    );

    let (req, _) = load_case(&dir, "status-upstream-desired-kept");
    let req = request_from_json(&req).unwrap();
    let desired = req.desired.as_ref().unwrap().composite.as_ref().unwrap();
    assert_eq!(desired.connection_details["token"], b"secret");

    let (req, _) = load_case(&dir, "collection-req-resources");
    let req = request_from_json(&req).unwrap();
    let r = Request::from_proto(&req).unwrap();
    for c in &r.collections {
        let idx: Vec<&str> = c.members.iter().map(|m| &*m.index).collect();
        let mut sorted = idx.clone();
        sorted.sort();
        assert_eq!(idx, sorted, "members of {} sorted by index", c.base_name);
    }
    assert!(!r.collections.is_empty());

    // every recorded request reads
    for e in std::fs::read_dir(dir.join("conformance/cases")).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_stem().unwrap().to_str().unwrap().to_string();
        let (req, _) = load_case(&dir, &name);
        let text = fn_hcl::protocol::doc::to_pretty(&req);
        let req = request_from_text(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
        Request::from_proto(&req).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}

/// A JSON request of the given data nesting whose program reads the innermost value.
fn deep_request(levels: usize) -> String {
    let mut data = "\"leaf\"".to_string();
    let mut path = String::new();
    for _ in 0..levels {
        data = format!("{{\"a\":{data}}}");
        path.push_str(".a");
    }
    let hcl = format!(
        "-- main.hcl --\ncontext {{\n  key = \"k\"\n  value = req.composite.spec{path}\n}}\n"
    );
    format!(
        "{{\"observed\":{{\"composite\":{{\"resource\":{{\"apiVersion\":\"v1\",\"kind\":\"X\",\
         \"metadata\":{{\"name\":\"n\"}},\"spec\":{data}}}}}}},\"input\":{{\"apiVersion\":\
         \"function-hcl/v1\",\"kind\":\"HclInput\",\"source\":\"Inline\",\"hcl\":{}}}}}",
        serde_json::to_string(&hcl).unwrap()
    )
}

#[test]
fn eval_takes_json_requests_nested_as_deep_as_the_documented_limit() {
    // docs/limits.md: request data up to 512 levels (serde_json alone stopped at 128).
    let dir = Dir::new(
        "deep",
        &[
            ("ok.json", deep_request(500).as_str()),
            ("deep.json", deep_request(600).as_str()),
        ],
    );
    let out = Command::new(env!("CARGO_BIN_EXE_fn-hcl"))
        .args(["eval", "--request", &dir.path("ok.json")])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rsp = String::from_utf8_lossy(&out.stdout);
    assert!(rsp.contains("\"k\": \"leaf\""), "{rsp}");
    let out = Command::new(env!("CARGO_BIN_EXE_fn-hcl"))
        .args(["eval", "--request", &dir.path("deep.json")])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("nested deeper than 512 levels"), "{err}");
}
