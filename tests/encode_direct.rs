//! Differential test of the direct response encoding: for every case of `tests/cases`, of
//! the shared conformance corpus (`../shared/conformance/cases`, when present) and the
//! benchmark workloads, the bytes of `function::run_function_encoded` must decode to exactly
//! the message `function::run_function` returns, and equal prost's encoding of that message
//! byte for byte once the entries of the protocol's `map<...>` fields (the desired
//! resources are a Rust HashMap, which prost writes in a random order) are put in one order
//! on both sides.

mod txtar_cases;

use fn_hcl::handler::{run_function, run_function_encoded};
use fn_hcl::protocol::proto::v1;
use prost::Message;
use std::path::Path;
use txtar_cases::{case_files, case_request, shared_dir};

#[path = "../benches/workloads/mod.rs"]
#[allow(dead_code)]
mod workloads;

/// Message types whose fields the canonical form descends into.
#[derive(Clone, Copy)]
enum Msg {
    Response,
    State,
    Resource,
    Requirements,
    Selector,
    MatchLabels,
    /// A map entry whose value (field 2) is of the given type.
    Entry(&'static Msg),
    /// Kept as it is (Structs are BTreeMaps: prost's order is already deterministic).
    Opaque,
}

/// What field `field` of `m` holds, and whether it is a map (entries sorted).
fn field_type(m: Msg, field: u64) -> (Msg, bool) {
    match (m, field) {
        (Msg::Response, 2) => (Msg::State, false),
        (Msg::Response, 5) => (Msg::Requirements, false),
        (Msg::State, 1) => (Msg::Resource, false),
        (Msg::State, 2) => (Msg::Entry(&Msg::Resource), true),
        (Msg::Resource, 2) => (Msg::Opaque, true),
        (Msg::Requirements, 1 | 2) => (Msg::Entry(&Msg::Selector), true),
        (Msg::Requirements, 3) => (Msg::Opaque, true),
        (Msg::Selector, 4) => (Msg::MatchLabels, false),
        (Msg::MatchLabels, 1) => (Msg::Opaque, true),
        (Msg::Entry(v), 2) => (*v, false),
        _ => (Msg::Opaque, false),
    }
}

fn varint(b: &[u8], at: &mut usize) -> u64 {
    let mut v = 0u64;
    let mut shift = 0;
    loop {
        let byte = b[*at];
        *at += 1;
        v |= u64::from(byte & 0x7f) << shift;
        if byte < 0x80 {
            return v;
        }
        shift += 7;
    }
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// The message's bytes with the entries of every map field sorted (by their canonical
/// bytes); everything else as it was, byte for byte.
fn canonical(b: &[u8], m: Msg) -> Vec<u8> {
    if matches!(m, Msg::Opaque) {
        return b.to_vec();
    }
    let mut out = Vec::new();
    let mut group: Vec<Vec<u8>> = Vec::new();
    let mut group_field = None;
    let mut at = 0;
    while at < b.len() {
        let start = at;
        let key = varint(b, &mut at);
        let (field, wt) = (key >> 3, key & 7);
        let mut chunk = Vec::new();
        let mut is_map = false;
        match wt {
            0 => {
                varint(b, &mut at);
                chunk.extend_from_slice(&b[start..at]);
            }
            1 => {
                at += 8;
                chunk.extend_from_slice(&b[start..at]);
            }
            5 => {
                at += 4;
                chunk.extend_from_slice(&b[start..at]);
            }
            2 => {
                let len = varint(b, &mut at) as usize;
                let payload = &b[at..at + len];
                at += len;
                let (ty, map) = field_type(m, field);
                is_map = map;
                let inner = canonical(payload, ty);
                put_varint(&mut chunk, key);
                put_varint(&mut chunk, inner.len() as u64);
                chunk.extend_from_slice(&inner);
            }
            other => panic!("unexpected wire type {other}"),
        }
        if group_field.is_some() && group_field != Some(field) {
            group.sort();
            out.extend(group.drain(..).flatten());
            group_field = None;
        }
        if is_map {
            group_field = Some(field);
            group.push(chunk);
        } else {
            out.extend_from_slice(&chunk);
        }
    }
    group.sort();
    out.extend(group.into_iter().flatten());
    out
}

/// Checks one request; returns a description of the first difference.
fn check(name: &str, req: &v1::RunFunctionRequest) -> Result<(), String> {
    let message = run_function(req);
    let bytes = run_function_encoded(req);
    let decoded = v1::RunFunctionResponse::decode(bytes.as_slice())
        .map_err(|e| format!("{name}: direct bytes do not decode: {e}"))?;
    if decoded != message {
        let cut = |m: &v1::RunFunctionResponse| {
            let s = format!("{m:?}");
            s.chars().take(2000).collect::<String>()
        };
        return Err(format!(
            "{name}: direct bytes decode to a different message\n  direct: {}\n  prost:  {}",
            cut(&decoded),
            cut(&message)
        ));
    }
    let prost = message.encode_to_vec();
    if bytes.len() != prost.len() {
        return Err(format!(
            "{name}: {} bytes direct, {} bytes prost",
            bytes.len(),
            prost.len()
        ));
    }
    if canonical(&bytes, Msg::Response) != canonical(&prost, Msg::Response) {
        return Err(format!("{name}: bytes differ beyond map-entry order"));
    }
    Ok(())
}

fn check_dir(dir: &Path) -> usize {
    let files = case_files(dir);
    let mut failures = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap_or_default();
        let name = f.display().to_string();
        match case_request(&text) {
            // A request that does not decode is the CLI's error, not a response.
            Err(_) => {}
            Ok(req) => {
                if let Err(e) = check(&name, &req) {
                    failures.push(e);
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases differ:\n{}",
        failures.len(),
        files.len(),
        failures.join("\n")
    );
    files.len()
}

#[test]
fn own_cases_encode_identically() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cases");
    assert!(check_dir(&dir) > 100);
}

#[test]
fn conformance_cases_encode_identically() {
    if let Some(d) = shared_dir("encode_direct") {
        assert!(check_dir(&d.join("conformance/cases")) > 100);
    }
}

#[test]
fn workloads_encode_identically() {
    for w in [
        workloads::small(),
        workloads::fleet(),
        workloads::observed(),
        workloads::scale(100),
    ] {
        if let Err(e) = check(&w.name, &w.request) {
            panic!("{e}");
        }
    }
}

/// Found by the `structured` fuzz target: two evaluations of one request answered with
/// different bytes, because requirements, match labels and connection details were Rust
/// HashMaps, which prost writes in a per-map random order. They are BTreeMaps now (written
/// in key order), and the desired resources are written sorted by name.
#[test]
fn the_same_call_answers_with_the_same_bytes() {
    let keys = ["k7", "k2", "k9", "k1", "k5", "k3", "k8", "k0", "k6", "k4"];
    let labels: Vec<String> = keys.iter().map(|k| format!("{k} = \"v\"")).collect();
    let details: Vec<String> = keys
        .iter()
        .map(|k| format!("{k} = base64encode(\"{k}\")"))
        .collect();
    let mut hcl = String::new();
    for r in ["zeta", "alpha", "mid", "beta", "omega"] {
        hcl.push_str(&format!(
            "requirement {r} {{\n  select {{\n    apiVersion = \"v1\"\n    kind = \"ConfigMap\"\n    matchLabels = {{ {} }}\n  }}\n}}\n",
            labels.join(", ")
        ));
    }
    hcl.push_str(&format!(
        "composite connection {{\n  body = {{ {} }}\n}}\n",
        details.join(", ")
    ));
    let mut desired = String::from(
        "desired:\n  resources:\n    upstream:\n      resource:\n        kind: ConfigMap\n      connectionDetails:\n",
    );
    for k in keys {
        desired.push_str(&format!("        {k}: dg==\n"));
    }
    let case = format!(
        "-- main.hcl --\n{hcl}-- request.yaml --\nobserved:\n  composite:\n    resource:\n      apiVersion: example.org/v1\n      kind: XApp\n      metadata:\n        name: app\n{desired}"
    );
    let req = case_request(&case).expect("the request decodes");
    let first = run_function_encoded(&req);
    for _ in 0..5 {
        assert!(run_function_encoded(&req) == first, "the bytes differ");
    }
    let rsp = v1::RunFunctionResponse::decode(first.as_slice()).expect("decodes");
    let requirements = rsp.requirements.as_ref().expect("requirements");
    assert_eq!(requirements.extra_resources.len(), 5, "{rsp:?}");
    // Every map is written in key order: the five requirements, and the ten labels of
    // each selector (between its name and the next requirement's).
    let at = |needle: &[u8], within: &[u8]| within.windows(needle.len()).position(|w| w == needle);
    let names = ["alpha", "beta", "mid", "omega", "zeta"];
    let starts: Vec<usize> = names
        .iter()
        .map(|r| at(r.as_bytes(), &first).expect("a requirement"))
        .collect();
    assert!(starts.is_sorted(), "requirements out of order: {starts:?}");
    for (i, start) in starts.iter().enumerate() {
        let end = starts.get(i + 1).copied().unwrap_or(first.len());
        let selector = &first[*start..end];
        let found: Vec<usize> = ["k0", "k1", "k2", "k3", "k4", "k5", "k6", "k7", "k8", "k9"]
            .iter()
            .map(|k| at(k.as_bytes(), selector).expect("a label"))
            .collect();
        assert!(found.is_sorted(), "labels of {} out of order", names[i]);
    }
    let xr = rsp.desired.as_ref().and_then(|d| d.composite.as_ref());
    assert_eq!(xr.map(|c| c.connection_details.len()), Some(10), "{rsp:?}");
}

#[test]
fn canonical_form_sorts_only_map_entries() {
    // Two map entries in either order are one canonical form; repeated fields are not.
    let mut a = v1::State::default();
    for n in ["a", "b", "c"] {
        a.resources.insert(n.to_string(), v1::Resource::default());
    }
    let bytes = a.encode_to_vec();
    let mut swapped = Vec::new();
    // Entries are `0x12 len 0x0a 1 <name>`: five bytes each.
    for chunk in bytes.chunks(5).rev() {
        swapped.extend_from_slice(chunk);
    }
    assert_ne!(bytes, swapped);
    assert_eq!(
        canonical(&bytes, Msg::State),
        canonical(&swapped, Msg::State)
    );
    let r1 = v1::RunFunctionResponse {
        results: vec![
            v1::Result {
                message: "x".into(),
                ..Default::default()
            },
            v1::Result {
                message: "y".into(),
                ..Default::default()
            },
        ],
        ..Default::default()
    };
    let mut r2 = r1.clone();
    r2.results.reverse();
    assert_ne!(
        canonical(&r1.encode_to_vec(), Msg::Response),
        canonical(&r2.encode_to_vec(), Msg::Response)
    );
}
