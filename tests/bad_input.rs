//! Hostile and malformed requests (issue 6, "Bad input"): every one gets a response, either a
//! correct one or one with a clear Fatal result; none panics, overflows the stack or hangs.
//! And connection details / Secret data never show up in results, conditions or debug output.

#[path = "common/proto.rs"]
mod proto;

use base64::Engine as _;
use fn_hcl::handler::run_function;
use fn_hcl::protocol::doc::{Json, to_pretty};
use fn_hcl::protocol::proto::v1;
use fn_hcl::protocol::protojson::response_to_json;
use prost_types::value::Kind;
use prost_types::{Struct, Value};
use proto::{hcl_input, main_hcl, object as obj, resource, string as s, structure as strukt};
use std::collections::HashMap;

const FATAL: i32 = v1::Severity::Fatal as i32;

fn xr(name: &str) -> Struct {
    strukt(vec![
        ("apiVersion", s("example.org/v1")),
        ("kind", s("XApp")),
        ("metadata", obj(vec![("name", s(name))])),
    ])
}

/// A request running the one-file `program` for the observed composite `composite`.
fn request(program: &str, composite: Option<v1::Resource>) -> v1::RunFunctionRequest {
    proto::request(&main_hcl(program), composite)
}

fn fatal_messages(rsp: &v1::RunFunctionResponse) -> Vec<&str> {
    rsp.results
        .iter()
        .filter(|r| r.severity == FATAL)
        .map(|r| r.message.as_str())
        .collect()
}

fn assert_success(rsp: &v1::RunFunctionResponse) {
    assert!(
        fatal_messages(rsp).is_empty(),
        "unexpected fatal: {:?}",
        fatal_messages(rsp)
    );
    assert_eq!(
        rsp.results.last().map(|r| r.message.as_str()),
        Some("hcl module executed successfully")
    );
}

/// The response as protojson text, which is what a user or a log would see.
fn text(rsp: &v1::RunFunctionResponse) -> String {
    to_pretty(&response_to_json(rsp).unwrap_or(Json::Null))
}

fn status_field<'a>(rsp: &'a v1::RunFunctionResponse, key: &str) -> Option<&'a Kind> {
    let status = rsp
        .desired
        .as_ref()?
        .composite
        .as_ref()?
        .resource
        .as_ref()?
        .fields
        .get("status")?;
    match status.kind.as_ref()? {
        Kind::StructValue(st) => st.fields.get(key)?.kind.as_ref(),
        _ => None,
    }
}

fn number(k: Option<&Kind>) -> Option<f64> {
    match k {
        Some(Kind::NumberValue(n)) => Some(*n),
        _ => None,
    }
}

fn string(k: Option<&Kind>) -> Option<&str> {
    match k {
        Some(Kind::StringValue(s)) => Some(s),
        _ => None,
    }
}

#[test]
fn ten_thousand_observed_resources() {
    const N: usize = 10_000;
    let mut resources = HashMap::with_capacity(N);
    for i in 0..N {
        let mut meta = vec![("name", s(&format!("obj-{i}")))];
        // Every other resource is a member of the collection `m`.
        if i % 2 == 0 {
            meta.push((
                "annotations",
                obj(vec![
                    ("hcl.fn.crossplane.io/collection-base-name", s("m")),
                    (
                        "hcl.fn.crossplane.io/collection-index",
                        s(&format!("s{:06}", i / 2)),
                    ),
                ]),
            ));
        }
        let body = strukt(vec![
            ("apiVersion", s("v1")),
            ("kind", s("ConfigMap")),
            ("metadata", obj(meta)),
            ("data", obj(vec![("i", s(&i.to_string()))])),
        ]);
        resources.insert(format!("r-{i}"), resource(body));
    }
    let program = r#"
composite status {
  body = {
    observed = length(req.resource)
    members  = length(req.resources.m)
    first    = req.resources.m[0].metadata.name
    last     = req.resources.m[4999].data.i
    picked   = req.resource["r-9999"].metadata.name
  }
}
resource keep {
  body = req.resource["r-1234"]
}
"#;
    let mut req = request(program, Some(resource(xr("big"))));
    if let Some(o) = req.observed.as_mut() {
        o.resources = resources;
    }
    let rsp = run_function(&req);
    assert_success(&rsp);
    assert_eq!(number(status_field(&rsp, "observed")), Some(N as f64));
    assert_eq!(number(status_field(&rsp, "members")), Some((N / 2) as f64));
    assert_eq!(string(status_field(&rsp, "first")), Some("obj-0"));
    assert_eq!(string(status_field(&rsp, "last")), Some("9998"));
    assert_eq!(string(status_field(&rsp, "picked")), Some("obj-9999"));
    let desired = rsp.desired.as_ref().map(|d| d.resources.len());
    assert_eq!(desired, Some(1), "only `keep` is desired");
}

/// A Struct nested `depth` levels deep under `spec`, built without recursion.
fn deep_value(depth: usize) -> Value {
    let mut v = s("bottom");
    for _ in 0..depth {
        v = obj(vec![("n", v)]);
    }
    v
}

/// Tears a deep Value down iteratively (the default drop is recursive).
fn drop_deep(mut v: Value) {
    let mut stack = Vec::new();
    loop {
        if let Some(Kind::StructValue(st)) = v.kind.take() {
            stack.extend(st.fields.into_values());
        }
        match stack.pop() {
            Some(next) => v = next,
            None => break,
        }
    }
}

#[test]
fn ten_thousand_levels_of_nesting_in_the_xr() {
    let program = r#"
composite status {
  body = { name = req.composite.metadata.name }
}
"#;
    let mut body = xr("deep");
    body.fields.insert("spec".into(), deep_value(10_000));
    let req = request(program, Some(resource(body)));
    // Run on a thread with a server-sized stack (tokio workers get 2 MiB): a recursive
    // conversion of the request would overflow it.
    let rsp = std::thread::scope(|sc| {
        std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn_scoped(sc, || run_function(&req))
            .map(|h| h.join())
    });
    let rsp = match rsp {
        Ok(Ok(r)) => r,
        Ok(Err(_)) => panic!("run_function panicked on a deeply nested XR"),
        Err(e) => panic!("could not spawn the test thread: {e}"),
    };
    let fatals = fatal_messages(&rsp);
    if fatals.is_empty() {
        assert_eq!(string(status_field(&rsp, "name")), Some("deep"));
    } else {
        assert!(
            fatals
                .iter()
                .all(|m| m.contains("deep") || m.contains("nest")),
            "the Fatal result should say the input is nested too deeply: {fatals:?}"
        );
    }
    // Tear the request down without recursing 10,000 frames.
    let v1::RunFunctionRequest { observed, .. } = req;
    if let Some(body) = observed.and_then(|o| o.composite).and_then(|c| c.resource) {
        for (_, v) in body.fields {
            drop_deep(v);
        }
    }
}

#[test]
fn nan_and_infinities_in_a_struct_are_a_clear_fatal() {
    let program = r#"
composite status {
  body = { v = req.composite.spec.value }
}
"#;
    for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        let mut body = xr("nums");
        body.fields.insert(
            "spec".into(),
            obj(vec![(
                "value",
                Value {
                    kind: Some(Kind::NumberValue(bad)),
                },
            )]),
        );
        let rsp = run_function(&request(program, Some(resource(body))));
        let fatals = fatal_messages(&rsp);
        assert_eq!(fatals.len(), 1, "{bad}: expected one Fatal, got {rsp:?}");
        assert!(
            fatals[0].contains("unsupported value"),
            "{bad}: unclear message {:?}",
            fatals[0]
        );
        // The response itself must still be representable as protojson.
        assert!(
            response_to_json(&rsp).is_ok(),
            "{bad}: response not encodable"
        );
    }
    // In the context too (it is echoed back on a fatal, so it must not break encoding).
    let mut req = request("locals {\n}\n", Some(resource(xr("ctx"))));
    req.context = Some(strukt(vec![(
        "k",
        Value {
            kind: Some(Kind::NumberValue(f64::NAN)),
        },
    )]));
    let rsp = run_function(&req);
    assert_eq!(fatal_messages(&rsp).len(), 1, "{rsp:?}");
}

#[test]
fn non_utf8_connection_details_pass_through_as_bytes() {
    let program = r#"
composite connection {
  body = { raw = req.composite_connection.raw }
}
composite status {
  body = { encoded = req.composite_connection.raw }
}
"#;
    let mut xr_res = resource(xr("bytes"));
    xr_res
        .connection_details
        .insert("raw".into(), vec![0xff, 0xfe, 0x00, 0x80]);
    let rsp = run_function(&request(program, Some(xr_res)));
    assert_success(&rsp);
    let conn = rsp
        .desired
        .as_ref()
        .and_then(|d| d.composite.as_ref())
        .and_then(|c| c.connection_details.get("raw"));
    assert_eq!(conn, Some(&vec![0xff, 0xfe, 0x00, 0x80]));
    assert_eq!(string(status_field(&rsp, "encoded")), Some("//4AgA=="));
}

#[test]
fn xr_without_metadata() {
    let program = r#"
composite status {
  body = { name = try(req.composite.metadata.name, "unnamed"), kind = req.composite.kind }
}
resource named {
  body = {
    apiVersion = "v1"
    kind       = "ConfigMap"
    metadata   = { name = req.composite.metadata.name }
  }
}
"#;
    let body = strukt(vec![
        ("apiVersion", s("example.org/v1")),
        ("kind", s("XApp")),
    ]);
    let rsp = run_function(&request(program, Some(resource(body))));
    assert_success(&rsp);
    assert_eq!(string(status_field(&rsp, "name")), Some("unnamed"));
    assert_eq!(string(status_field(&rsp, "kind")), Some("XApp"));
    // `named` is deferred, not fatal: it is not observed.
    let warned = rsp
        .results
        .iter()
        .any(|r| r.message.contains("discarded resource named"));
    assert!(warned, "{rsp:?}");
}

#[test]
fn missing_composite_and_missing_observed_state() {
    let program = r#"
composite status {
  body = { ok = true, name = try(req.composite.metadata.name, "none") }
}
resource r {
  body = {
    apiVersion = "v1"
    kind       = "ConfigMap"
    metadata   = { name = req.composite.metadata.name }
  }
}
"#;
    // No observed state at all.
    let rsp = run_function(&request(program, None));
    assert_success(&rsp);
    assert_eq!(string(status_field(&rsp, "name")), Some("none"));
    // Observed state without a composite, and a composite without a body.
    let mut req = request(program, None);
    req.observed = Some(v1::State::default());
    assert_success(&run_function(&req));
    let rsp = run_function(&request(program, Some(v1::Resource::default())));
    assert_success(&rsp);
    assert_eq!(string(status_field(&rsp, "name")), Some("none"));
}

#[test]
fn missing_empty_and_garbage_input() {
    let base = request("locals {\n}\n", Some(resource(xr("in"))));
    let with_input = |input: Option<Struct>| v1::RunFunctionRequest {
        input,
        ..base.clone()
    };
    let cases: Vec<(&str, Option<Struct>, &str)> = vec![
        ("no input", None, "input HCL was not specified"),
        (
            "empty input",
            Some(Struct::default()),
            "input HCL was not specified",
        ),
        (
            "empty hcl",
            Some(strukt(vec![("hcl", s(""))])),
            "input HCL was not specified",
        ),
        (
            "hcl is a number",
            Some(strukt(vec![(
                "hcl",
                Value {
                    kind: Some(Kind::NumberValue(42.0)),
                },
            )])),
            "cannot unmarshal",
        ),
        (
            "hcl is not txtar",
            Some(strukt(vec![("hcl", s("\u{0}\u{1}garbage {{{"))])),
            "are you using the txtar format?",
        ),
        (
            "hcl is binary garbage in txtar",
            Some(strukt(vec![(
                "hcl",
                s("-- main.hcl --\n\u{0}\u{7f}}}}{{ \"unterminated\n"),
            )])),
            "main.hcl:",
        ),
    ];
    for (what, input, expected) in cases {
        let rsp = run_function(&with_input(input));
        let fatals = fatal_messages(&rsp);
        assert_eq!(fatals.len(), 1, "{what}: {rsp:?}");
        assert!(
            fatals[0].contains(expected),
            "{what}: {:?} should mention {expected:?}",
            fatals[0]
        );
        assert!(
            rsp.conditions.is_empty(),
            "{what}: no conditions on a fatal"
        );
    }
}

const SECRET: &str = "hunter2-Zq9-TOPSECRET";

fn assert_secret_absent(what: &str, out: &str) {
    let b64 = base64::engine::general_purpose::STANDARD.encode(SECRET);
    let b64_raw = base64::engine::general_purpose::STANDARD_NO_PAD.encode(SECRET);
    for needle in [SECRET, b64.as_str(), b64_raw.as_str()] {
        assert!(
            !out.contains(needle),
            "{what}: the secret ({needle}) leaked into:\n{out}"
        );
    }
}

#[test]
fn bad_secret_value_is_never_printed() {
    let program = format!(
        r#"
composite connection {{
  body = {{ token = "{SECRET}" }}
}}
"#
    );
    let rsp = run_function(&request(&program, Some(resource(xr("sec")))));
    assert_success(&rsp);
    assert!(
        rsp.results
            .iter()
            .any(|r| r.reason.as_deref() == Some("bad-secret")),
        "{rsp:?}"
    );
    assert_secret_absent("bad-secret discard", &text(&rsp));
}

#[test]
fn fatal_on_observed_resource_with_secret_connection_details() {
    let program = r#"
resource db {
  body = {
    apiVersion = "v1"
    kind       = "Secret"
    metadata   = { name = "db" }
    data       = {
      password = self.connection.password
      copy     = req.connection.db.password
      missing  = req.composite.spec.doesNotExist
    }
  }
  composite connection {
    body = { password = self.connection.password }
  }
}
"#;
    let mut req = request(program, Some(resource(xr("sec"))));
    let mut db = resource(strukt(vec![
        ("apiVersion", s("v1")),
        ("kind", s("Secret")),
        ("metadata", obj(vec![("name", s("db"))])),
        (
            "data",
            obj(vec![(
                "password",
                s(&base64::engine::general_purpose::STANDARD.encode(SECRET)),
            )]),
        ),
    ]));
    db.connection_details
        .insert("password".into(), SECRET.as_bytes().to_vec());
    if let Some(o) = req.observed.as_mut() {
        o.resources.insert("db".into(), db);
        if let Some(c) = o.composite.as_mut() {
            c.connection_details
                .insert("xr-secret".into(), SECRET.as_bytes().to_vec());
        }
    }
    let rsp = run_function(&req);
    assert_eq!(fatal_messages(&rsp).len(), 1, "{rsp:?}");
    assert_secret_absent("safety-rule fatal", &text(&rsp));

    // The debug dumps (stderr, so a log) redact secrets and connection details too.
    assert_secret_absent(
        "debug request dump",
        &fn_hcl::handler::debug::request_dump(&req),
    );
    // A successful response carrying the secret as connection details: its debug dump
    // must not show it either.
    let ok_program = r#"
composite connection {
  body = { password = req.connection.db.password }
}
"#;
    let mut ok_req = req.clone();
    ok_req.input = Some(hcl_input(&main_hcl(ok_program)));
    let ok = run_function(&ok_req);
    assert_success(&ok);
    assert_secret_absent(
        "debug response dump",
        &fn_hcl::handler::debug::response_dump(&ok_req, &ok),
    );
    // Messages and conditions of the successful response carry no secret either.
    let mut messages: Vec<&str> = ok.results.iter().map(|r| r.message.as_str()).collect();
    messages.extend(ok.conditions.iter().filter_map(|c| c.message.as_deref()));
    assert_secret_absent("result and condition messages", &messages.join("\n"));
}
