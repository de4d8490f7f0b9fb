//! The lazy request path (`function::run_function_bytes`: observed bodies kept as bytes,
//! only the read ones decoded) against the eager one (`run_function` on a prost-decoded
//! request): the same response for every case of tests/cases and of the shared
//! conformance corpus, the same Fatal errors for bad data in bodies the program never
//! reads, and the same accept/reject decisions as prost on malformed bytes.

use fn_hcl::handler::{run_function, run_function_bytes};
use fn_hcl::protocol::doc::to_pretty;
use fn_hcl::protocol::proto::{LazyRequest, v1};
use fn_hcl::protocol::protojson::response_to_json;
use prost::Message;
use prost::bytes::Bytes;
use prost_types::value::Kind;
use proto::{main_hcl, number as n, object as o, resource, string as s, structure as st};
use std::collections::BTreeMap;
use std::path::Path;
use txtar_cases::{case_files, case_request, shared_dir};

#[path = "common/proto.rs"]
mod proto;
mod txtar_cases;

/// Both paths on one request: responses equal as messages and as protojson text.
fn assert_same(req: &v1::RunFunctionRequest, what: &str) {
    let eager = run_function(req);
    let lazy = run_function_bytes(Bytes::from(req.encode_to_vec()))
        .unwrap_or_else(|e| panic!("{what}: the lazy path refused the request: {e}"));
    let text = |r: &v1::RunFunctionResponse| {
        response_to_json(r)
            .map(|j| to_pretty(&j))
            .unwrap_or_else(|e| format!("unencodable: {e}"))
    };
    assert_eq!(text(&lazy), text(&eager), "{what}");
    assert!(lazy == eager, "{what}: responses differ");
}

fn run_dir(dir: &Path) -> usize {
    let mut n = 0;
    for p in case_files(dir) {
        let text = std::fs::read_to_string(&p).unwrap_or_default();
        let Ok(req) = case_request(&text) else {
            continue;
        };
        assert_same(&req, &p.display().to_string());
        n += 1;
    }
    n
}

#[test]
fn every_case_answers_the_same() {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let n = run_dir(&here.join("tests/cases"));
    assert!(n > 100, "only {n} cases ran");
    // The shared conformance corpus, when present (it is outside the repository).
    if let Some(shared) = shared_dir("lazy_request") {
        let n = run_dir(&shared.join("conformance/cases"));
        assert!(n > 100, "only {n} conformance cases ran");
    }
}

// ---- targeted requests ----

fn member(base: &str, index: &str, extra: Vec<(&str, prost_types::Value)>) -> prost_types::Struct {
    let mut e = vec![
        ("kind", s("Bucket")),
        (
            "metadata",
            o(vec![
                (
                    "annotations",
                    o(vec![
                        ("hcl.fn.crossplane.io/collection-base-name", s(base)),
                        ("hcl.fn.crossplane.io/collection-index", s(index)),
                    ]),
                ),
                ("managedFields", o(vec![("junk", n(f64::NAN))])),
            ]),
        ),
    ];
    e.extend(extra);
    st(e)
}

fn request(program: &str, observed: Vec<(&str, prost_types::Struct)>) -> v1::RunFunctionRequest {
    let xr = st(vec![
        ("kind", s("XR")),
        ("metadata", o(vec![("name", s("xr"))])),
    ]);
    let mut req = proto::request(&main_hcl(program), Some(resource(xr)));
    let state = req.observed.get_or_insert_with(Default::default);
    for (name, body) in observed {
        let mut r = resource(body);
        r.connection_details = [("pw".to_string(), b"s3cret".to_vec())]
            .into_iter()
            .collect();
        r.ready = 1;
        state.resources.insert(name.to_string(), r);
    }
    req
}

const PROGRAMS: &[&str] = &[
    // reads nothing observed
    "resource a {\n  body = { kind = \"A\" }\n}\n",
    // one literal name
    "resource a {\n  body = { kind = \"A\", v = try(req.resource.b.spec.v, 0) }\n}\n",
    // a misspelt name: the error suggests observed names
    "resource a {\n  body = { kind = \"A\", v = req.resource.bb.spec }\n}\n",
    // the whole map
    "resource a {\n  body = { kind = \"A\", n = length(req.resource), k = keys(req.resource) }\n}\n",
    // collections
    "resource a {\n  body = { kind = \"A\", n = [for r in req.resources.web : r.spec.v] }\n}\n",
    // self.resource in a resource and in a template
    "resource b {\n  body = { kind = \"B\", v = self.resource.spec.v }\n}\nresources web {\n  for_each = [0, 1]\n  template {\n    body = { kind = \"W\", s = self.resource.kind, n = length(self.resources) }\n  }\n}\n",
    // a template that reads nothing observed, with observed members (safety rule applies)
    "resources web {\n  for_each = [0, 1, 2]\n  template {\n    body = { kind = \"W\", i = each.value }\n  }\n}\n",
    // self whole
    "resource b {\n  body = { kind = \"B\", s = jsonencode(self) }\n}\n",
    // paths into bodies (decoded along them only): deep, misspelt (suggestions), into a
    // primitive, ending at an object, through a list, by string index, under try
    "resource b {\n  body = { kind = \"B\", v = self.resource.spec.v, w = req.resource.plain.list[1] }\n}\n",
    "resource b {\n  body = { kind = \"B\", v = self.resource.spec.vv }\n}\n",
    "resource b {\n  body = { kind = \"B\", v = self.resource.kind.x }\n}\n",
    "resource b {\n  body = { kind = \"B\", v = jsonencode(self.resource.spec), k = keys(self.resource) }\n}\n",
    "resource b {\n  body = { kind = \"B\", v = self.resource[\"spec\"][\"v\"], n = req.resource.plain.kind }\n}\n",
    "resource b {\n  body = { kind = \"B\", v = try(self.resource.status.atProvider.arn, \"pending\"), w = can(self.resource.spec.v.x) }\n}\n",
    "resource b {\n  body = { kind = \"B\", v = [for k, x in self.resource.spec : \"${k}=${x}\"] }\n}\n",
    "resource b {\n  body = { kind = \"B\", v = (true ? self.resource : null).spec, w = self.resource.kind }\n}\n",
    "resource b {\n  locals {\n    r = self.resource.spec\n  }\n  body = { kind = \"B\", v = r.v, s = req.resource.b.kind }\n}\n",
    "resources web {\n  for_each = [0, 1]\n  template {\n    body = { kind = \"W\", v = self.resource.spec.v, m = self.resource.metadata.annotations }\n  }\n}\n",
    "resources web {\n  for_each = [0, 1]\n  template {\n    body = { kind = \"W\", v = self.resource.spec.w }\n  }\n}\nresource c {\n  body = { kind = \"C\", v = req.resource[\"web-0\"].spec.v }\n}\n",
];

fn observed_set(bad: Option<prost_types::Struct>) -> Vec<(&'static str, prost_types::Struct)> {
    let mut v = vec![
        (
            "b",
            st(vec![("kind", s("B")), ("spec", o(vec![("v", n(0.1))]))]),
        ),
        (
            "web-0",
            member("web", "s000000", vec![("spec", o(vec![("v", n(1.0))]))]),
        ),
        (
            "web-1",
            member("web", "s000001", vec![("spec", o(vec![("v", n(2.5))]))]),
        ),
        (
            "plain",
            st(vec![
                ("kind", s("P")),
                (
                    "list",
                    prost_types::Value {
                        kind: Some(Kind::ListValue(prost_types::ListValue {
                            values: vec![n(1.0), s("é"), o(vec![])],
                        })),
                    },
                ),
            ]),
        ),
    ];
    if let Some(b) = bad {
        v.push(("unread", b));
    }
    v
}

#[test]
fn programs_over_observed_state_answer_the_same() {
    for p in PROGRAMS {
        assert_same(&request(p, observed_set(None)), p);
    }
}

/// Steady state: the same bodies again (their checks and values found in the body
/// cache), then one body changed (`web-1`'s and `b`'s `spec.v`): every answer is still
/// the eager path's. Each body carries a filler, so that every one is long enough to be
/// remembered.
#[test]
fn bodies_sent_again_or_changed_answer_the_same() {
    let pad = |(name, mut body): (&'static str, prost_types::Struct)| {
        body.fields.insert("pad".into(), s(&"x".repeat(200)));
        (name, body)
    };
    let set = |v: f64| -> Vec<(&'static str, prost_types::Struct)> {
        let mut bodies: Vec<_> = observed_set(None).into_iter().map(pad).collect();
        for (name, body) in bodies.iter_mut() {
            if matches!(*name, "b" | "web-1") {
                body.fields.insert("spec".into(), o(vec![("v", n(v))]));
            }
        }
        bodies
    };
    for p in PROGRAMS {
        for round in 0..3 {
            assert_same(&request(p, set(2.5)), &format!("{p} (round {round})"));
        }
        assert_same(&request(p, set(7.25)), &format!("{p} (changed)"));
        assert_same(&request(p, set(2.5)), &format!("{p} (changed back)"));
    }
    // A program that reads `b`'s `spec.v` sees the change (not a remembered value).
    let answer = |v: f64| {
        let req = request(PROGRAMS[1], set(v));
        run_function_bytes(Bytes::from(req.encode_to_vec())).expect("answers")
    };
    assert!(answer(2.5) == answer(2.5));
    assert!(answer(2.5) != answer(7.25), "the changed body is read");
}

#[test]
fn bad_data_in_unread_bodies_is_the_same_fatal() {
    let bad_bodies = vec![
        st(vec![("x", n(f64::NAN))]),
        st(vec![("x", o(vec![("y", n(f64::INFINITY))]))]),
        st(vec![(
            "x",
            prost_types::Value {
                kind: Some(Kind::ListValue(prost_types::ListValue {
                    values: vec![n(f64::NEG_INFINITY)],
                })),
            },
        )]),
        // annotations that are not a map of strings
        st(vec![(
            "metadata",
            o(vec![("annotations", o(vec![("a", n(1.0))]))]),
        )]),
        st(vec![("metadata", o(vec![("annotations", s("x"))]))]),
        st(vec![("metadata", s("x"))]),
        st(vec![("metadata", prost_types::Value { kind: None })]),
        // NaN under managedFields is dropped, not an error
        st(vec![("metadata", o(vec![("managedFields", n(f64::NAN))]))]),
        // a collection member with an empty base name, or no index
        st(vec![(
            "metadata",
            o(vec![(
                "annotations",
                o(vec![("hcl.fn.crossplane.io/collection-base-name", s(""))]),
            )]),
        )]),
        st(vec![(
            "metadata",
            o(vec![(
                "annotations",
                o(vec![(
                    "hcl.fn.crossplane.io/collection-base-name",
                    s("web"),
                )]),
            )]),
        )]),
    ];
    for (i, bad) in bad_bodies.into_iter().enumerate() {
        for p in PROGRAMS {
            assert_same(
                &request(p, observed_set(Some(bad.clone()))),
                &format!("bad body {i}: {p}"),
            );
        }
    }
}

/// Programs that read parts of the XR (decoded along those paths only on the lazy path),
/// directly and through top-level aliases, against a composite shaped like a real one
/// (managedFields, status, resource references), with and without bad data in parts no
/// program reads.
#[test]
fn composite_paths_answer_the_same() {
    const XR_PROGRAMS: &[&str] = &[
        "resource a {\n  body = { kind = \"A\", n = \"${req.composite.metadata.name}-a\", r = req.composite.spec.parameters.region }\n}\n",
        "locals {\n  xr = req.composite\n  params = xr.spec.parameters\n  name = xr.metadata.name\n}\nresource a {\n  body = { kind = \"A\", n = name, r = params.region, z = try(params.zone, \"none\") }\n}\n",
        // misspelt (suggestions list every key), into a primitive, ending at an object
        "locals {\n  xr = req.composite\n}\nresource a {\n  body = { kind = \"A\", r = xr.spec.parameter }\n}\n",
        "resource a {\n  body = { kind = \"A\", r = req.composite.kind.x }\n}\n",
        "locals {\n  p = req.composite.spec\n}\nresource a {\n  body = { kind = \"A\", p = p.parameters, k = keys(p) }\n}\n",
        // whole: through an alias, an encode, a for, all of req
        "locals {\n  xr = req.composite\n}\nresource a {\n  body = { kind = \"A\", s = jsonencode(xr) }\n}\n",
        "resource a {\n  body = { kind = \"A\", s = [for k, v in req.composite.status : k] }\n}\n",
        "resource a {\n  body = { kind = \"A\", s = length(req) }\n}\n",
        // through an alias, uses that end a path: a splat, a dynamic index, a conditional,
        // a user function's argument, a `for`; a local written before the alias it names
        "locals {\n  xr = req.composite\n}\nresource a {\n  body = { kind = \"A\", n = xr.spec.resourceRefs[*].name }\n}\n",
        "locals {\n  p = req.composite.spec.parameters\n}\nresource a {\n  body = { kind = \"A\", r = p[req.composite.kind == \"XR\" ? \"region\" : \"size\"] }\n}\n",
        "locals {\n  xr = req.composite\n}\nresource a {\n  body = { kind = \"A\", r = (length(xr.spec.resourceRefs) > 0 ? xr : {}).spec.parameters.region }\n}\n",
        "function f {\n  arg a {}\n  body = a.spec.parameters.region\n}\nlocals {\n  xr = req.composite\n}\nresource a {\n  body = { kind = \"A\", r = invoke(\"f\", { a = xr }) }\n}\n",
        "locals {\n  xr = req.composite\n}\nresource a {\n  body = { kind = \"A\", k = [for k, v in xr.spec.parameters : \"${k}=${v}\"] }\n}\n",
        "locals {\n  n = xr.metadata.name\n  xr = req.composite\n}\nresource a {\n  body = { kind = \"A\", n = n, l = xr.metadata.labels }\n}\n",
        // not read at all; aliases nobody uses (still evaluated: what they name is there)
        "resource a {\n  body = { kind = \"A\" }\n}\n",
        "locals {\n  u = req.composite.metadata.name\n  v = req.composite.spec.nothing\n  w = req.resource.b.kind\n}\nresource a {\n  body = { kind = \"A\" }\n}\n",
        // the composite status read back, and a block-level alias
        "resource a {\n  locals {\n    xr = req.composite\n  }\n  body = { kind = \"A\", s = xr.status.ready }\n  composite status {\n    body = { seen = req.composite.status.ready }\n  }\n}\n",
    ];
    let refs = prost_types::Value {
        kind: Some(Kind::ListValue(prost_types::ListValue {
            values: (0..20)
                .map(|i| o(vec![("kind", s("B")), ("name", s(&format!("r-{i}")))]))
                .collect(),
        })),
    };
    let xr = |extra: Option<(&str, prost_types::Value)>| {
        let mut status = vec![(
            "ready",
            prost_types::Value {
                kind: Some(Kind::BoolValue(true)),
            },
        )];
        status.extend(extra);
        st(vec![
            ("apiVersion", s("example.org/v1")),
            ("kind", s("XR")),
            (
                "metadata",
                o(vec![
                    ("name", s("xr-1")),
                    ("labels", o(vec![("team", s("a"))])),
                    ("managedFields", o(vec![("f:spec", o(vec![]))])),
                ]),
            ),
            (
                "spec",
                o(vec![
                    ("parameters", o(vec![("region", s("eu")), ("size", n(3.0))])),
                    ("resourceRefs", refs.clone()),
                ]),
            ),
            ("status", o(status)),
        ])
    };
    let bad = [
        None,
        Some(("nan", n(f64::NAN))),
        Some(("inf", o(vec![("x", n(f64::INFINITY))]))),
    ];
    for extra in bad {
        for p in XR_PROGRAMS {
            let mut req = proto::request(&main_hcl(p), Some(resource(xr(extra.clone()))));
            req.observed
                .get_or_insert_with(Default::default)
                .resources
                .insert("b".into(), resource(st(vec![("kind", s("B"))])));
            assert_same(&req, &format!("{extra:?}: {p}"));
        }
    }
}

/// An observed resource sent more than once (a later `observed` merged into the request's,
/// or two entries of one name in a map): the last one counts, body and readiness, as in
/// prost's map; an entry whose key says another wire type is read as prost reads it.
#[test]
fn an_observed_resource_sent_again_is_the_last_one() {
    use prost::encoding::{WireType, encode_key, encode_varint};
    // request { observed: State { resources: <entries> } } appended, the entries given as
    // (wire type of the entry's key, name, body).
    let again = |req: &v1::RunFunctionRequest, entries: &[(u8, &str, f64)]| {
        let mut state = Vec::new();
        for &(wt, name, v) in entries {
            let mut r = resource(st(vec![("kind", s("B")), ("spec", o(vec![("v", n(v))]))]));
            r.ready = 1;
            let mut entry = Vec::new();
            prost::encoding::string::encode(1, &name.to_string(), &mut entry);
            prost::encoding::message::encode(2, &r, &mut entry);
            state.extend(key(2, wt));
            encode_varint(entry.len() as u64, &mut state);
            state.extend(entry);
        }
        let mut out = req.encode_to_vec();
        encode_key(2, WireType::LengthDelimited, &mut out);
        encode_varint(state.len() as u64, &mut out);
        out.extend(state);
        out
    };
    let base = request(PROGRAMS[1], observed_set(None));
    // (what, the entries sent again, the `spec.v` of `b` the program reads then)
    type Case<'a> = (&'a str, &'a [(u8, &'a str, f64)], f64);
    let cases: &[Case] = &[
        ("sent again", &[(2, "b", 7.25)], 7.25),
        ("twice in one map", &[(2, "b", 7.25), (2, "b", 9.5)], 9.5),
        (
            "members again",
            &[(2, "web-1", 3.0), (2, "b", 4.0), (2, "web-1", 5.0)],
            4.0,
        ),
        ("entry key with a varint wire type", &[(0, "b", 6.0)], 6.0),
    ];
    for &(what, entries, v) in cases {
        let bytes = again(&base, entries);
        check_bytes(&bytes, what);
        let lazy = LazyRequest::decode_lazy_only(Bytes::from(bytes.clone())).expect(what);
        let names: Vec<&str> = lazy.bodies.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(names, ["b", "plain", "web-0", "web-1"], "{what}");
        let answer = run_function_bytes(Bytes::from(bytes)).expect(what);
        let json = response_to_json(&answer)
            .map(|j| to_pretty(&j))
            .expect(what);
        assert!(json.contains(&format!("\"v\": {v}")), "{what}: {json}");
    }
}

/// The request's bytes with the observed body of `name` replaced by `body` (raw bytes).
fn with_raw_body(req: &v1::RunFunctionRequest, body: &[u8]) -> Vec<u8> {
    use prost::encoding::{WireType, encode_key, encode_varint};
    // resource { resource: <body> }
    let mut res = Vec::new();
    encode_key(1, WireType::LengthDelimited, &mut res);
    encode_varint(body.len() as u64, &mut res);
    res.extend_from_slice(body);
    // map entry { key: "raw", value: res }
    let mut entry = Vec::new();
    prost::encoding::string::encode(1, &"raw".to_string(), &mut entry);
    encode_key(2, WireType::LengthDelimited, &mut entry);
    encode_varint(res.len() as u64, &mut entry);
    entry.extend_from_slice(&res);
    // State { resources: entry }
    let mut state = Vec::new();
    encode_key(2, WireType::LengthDelimited, &mut state);
    encode_varint(entry.len() as u64, &mut state);
    state.extend_from_slice(&entry);
    // request { observed: state } appended: merges into the request's observed state
    let mut out = req.encode_to_vec();
    encode_key(2, WireType::LengthDelimited, &mut out);
    encode_varint(state.len() as u64, &mut out);
    out.extend_from_slice(&state);
    out
}

/// prost and the lazy decoder agree on `bytes`; when both accept, so do the responses.
fn check_bytes(bytes: &[u8], what: &str) {
    let eager = v1::RunFunctionRequest::decode(bytes);
    let alone = LazyRequest::decode_lazy_only(Bytes::copy_from_slice(bytes));
    assert_eq!(
        alone.is_ok(),
        eager.is_ok(),
        "{what}: the lazy decoder alone disagrees with prost"
    );
    let lazy = LazyRequest::decode(Bytes::copy_from_slice(bytes));
    match (&eager, &lazy) {
        (Ok(e), Ok(_)) => {
            let a = run_function(e);
            let b = run_function_bytes(Bytes::copy_from_slice(bytes)).expect("accepted");
            assert!(a == b, "{what}: responses differ");
        }
        (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{what}"),
        _ => panic!("{what}: prost {:?}, lazy {:?}", eager.is_ok(), lazy.is_ok()),
    }
}

fn key(tag: u32, wt: u8) -> Vec<u8> {
    let mut v = Vec::new();
    prost::encoding::encode_varint(u64::from(tag << 3 | u32::from(wt)), &mut v);
    v
}

fn len_field(tag: u32, payload: &[u8]) -> Vec<u8> {
    let mut v = key(tag, 2);
    prost::encoding::encode_varint(payload.len() as u64, &mut v);
    v.extend_from_slice(payload);
    v
}

/// A Struct with one entry `k` → value bytes.
fn entry(k: &str, value: &[u8]) -> Vec<u8> {
    raw_entry(k.as_bytes(), value)
}

/// A Struct with one entry: key bytes (maybe not UTF-8) → value bytes.
fn raw_entry(k: &[u8], value: &[u8]) -> Vec<u8> {
    let mut e = len_field(1, k);
    e.extend(len_field(2, value));
    len_field(1, &e)
}

/// A `Value` holding the number `f`.
fn num(f: f64) -> Vec<u8> {
    let mut v = key(2, 1);
    v.extend_from_slice(&f.to_le_bytes());
    v
}

/// A `Value` holding the string `x` (bytes, maybe not UTF-8).
fn str_val(x: &[u8]) -> Vec<u8> {
    len_field(3, x)
}

/// Bodies (`Struct` fields) prost accepts or rejects, regular and irregular.
fn malformed_bodies() -> Vec<(&'static str, Vec<u8>)> {
    vec![
        ("empty", vec![]),
        ("plain", entry("a", &str_val(b"x"))),
        ("bad utf-8 value", entry("a", &str_val(&[0xff, 0xfe]))),
        ("bad utf-8 key", {
            let mut e = len_field(1, &[0xc3]);
            e.extend(len_field(2, &str_val(b"x")));
            len_field(1, &e)
        }),
        ("truncated", entry("a", &str_val(b"x"))[..4].to_vec()),
        ("length past the end", vec![0x0a, 0x7f, 0x01]),
        ("bad wire type for string", entry("a", &[0x18, 0x01])),
        (
            "bad varint",
            vec![
                0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f,
            ],
        ),
        ("unknown fields", {
            let mut v = key(7, 0);
            v.push(5);
            v.extend(key(9, 5));
            v.extend([1, 2, 3, 4]);
            v.extend(entry("a", &{
                let mut x = num(2.0);
                x.extend(key(15, 1));
                x.extend([0; 8]);
                x
            }));
            v
        }),
        ("unknown group", {
            let mut v = key(7, 3);
            v.extend(key(8, 0));
            v.push(1);
            v.extend(key(7, 4));
            v
        }),
        ("mismatched end group", {
            let mut v = key(7, 3);
            v.extend(key(8, 4));
            v
        }),
        ("end group alone", key(7, 4)),
        ("map field with a varint wire type", {
            let e = {
                let mut e = len_field(1, b"a");
                e.extend(len_field(2, &str_val(b"x")));
                e
            };
            let mut v = key(1, 0);
            prost::encoding::encode_varint(e.len() as u64, &mut v);
            v.extend(e);
            v
        }),
        ("duplicate keys: last wins", {
            let mut v = entry("a", &str_val(b"one"));
            v.extend(entry("a", &num(f64::NAN)));
            v.extend(entry("a", &str_val(b"two")));
            v
        }),
        ("duplicate keys: NaN last", {
            let mut v = entry("a", &str_val(b"one"));
            v.extend(entry("a", &num(f64::NAN)));
            v
        }),
        (
            "two kinds in one value",
            entry("a", &{
                let mut x = num(f64::NAN);
                x.extend(str_val(b"s"));
                x
            }),
        ),
        (
            "two structs in one value merge",
            entry("a", &{
                let mut x = len_field(5, &entry("p", &num(1.0)));
                x.extend(len_field(5, &entry("q", &num(2.0))));
                x
            }),
        ),
        (
            "two lists in one value append",
            entry("a", &{
                let mut x = len_field(6, &len_field(1, &num(1.0)));
                x.extend(len_field(6, &len_field(1, &num(2.0))));
                x
            }),
        ),
        ("entry without key or value", len_field(1, &[])),
        ("value given twice in an entry", {
            let mut e = len_field(1, b"a");
            e.extend(len_field(2, &str_val(b"x")));
            e.extend(len_field(2, &num(3.0)));
            len_field(1, &e)
        }),
        ("null, bool", {
            let mut v = entry("n", &[0x08, 0x00]);
            v.extend(entry("b", &[0x20, 0x02]));
            v
        }),
        ("short double", entry("a", &[0x11, 0, 0, 0])),
        ("negative zero and big numbers", {
            let mut v = entry("z", &num(-0.0));
            v.extend(entry("b", &num(1e300)));
            v.extend(entry("t", &num(0.1)));
            v
        }),
    ]
}

#[test]
fn malformed_and_irregular_bodies_match_prost() {
    let base = request(PROGRAMS[3], observed_set(None));
    let cases = malformed_bodies();
    for (what, body) in &cases {
        check_bytes(&with_raw_body(&base, body), what);
    }
    // the same bodies as members read through req.resources and self
    let reader = request(PROGRAMS[5], observed_set(None));
    for (what, body) in &cases {
        check_bytes(&with_raw_body(&reader, body), what);
    }
}

/// `Value`s prost accepts or rejects, aimed at the checks of subtrees without a role
/// (`metadata.managedFields`, and every plain key): the shapes they match as bytes
/// (one-byte lengths, an entry of a key and a value, a value of one kind) and the loops
/// behind them.
fn malformed_values() -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<(String, Vec<u8>)> = Vec::new();
    let mut add = |what: &str, bytes: Vec<u8>| v.push((what.to_string(), bytes));
    // Strings and keys of every length around the word-sized ASCII checks and the
    // two-byte lengths: ASCII, UTF-8, a lone continuation byte, a cut sequence.
    for n in [
        0usize, 1, 2, 3, 4, 7, 8, 9, 15, 16, 17, 24, 31, 127, 128, 200,
    ] {
        let ascii = vec![b'k'; n];
        let mut forms = vec![("ascii", ascii.clone())];
        if n >= 2 {
            let mut u = ascii[..n - 2].to_vec();
            u.extend("é".as_bytes());
            forms.push(("utf-8 at the end", u));
            let mut u = "é".as_bytes().to_vec();
            u.extend(&ascii[2..]);
            forms.push(("utf-8 at the start", u));
        }
        for at in [0, n / 2, n.saturating_sub(1)] {
            if n > 0 {
                let mut b = ascii.clone();
                b[at] = 0x80;
                forms.push(("continuation byte", b));
                let mut b = ascii.clone();
                b[at] = 0xc3;
                forms.push(("cut sequence", b));
            }
        }
        for (form, bytes) in forms {
            add(&format!("string {n} {form}"), str_val(&bytes));
            add(
                &format!("key {n} {form}"),
                len_field(5, &raw_entry(&bytes, &len_field(5, &[]))),
            );
        }
    }
    let list = |items: &[Vec<u8>]| {
        len_field(
            6,
            &items
                .iter()
                .flat_map(|i| len_field(1, i))
                .collect::<Vec<_>>(),
        )
    };
    let ten_byte = |last: u8| [key(1, 0), vec![0xff; 9], vec![last]].concat();
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("no kind", vec![]),
        ("empty struct", len_field(5, &[])),
        ("empty list", len_field(6, &[])),
        ("null, bool 2", [key(1, 0), vec![5]].concat()),
        ("bool 2", [key(4, 0), vec![2]].concat()),
        ("ten-byte varint", ten_byte(1)),
        ("ten-byte varint overflowing", ten_byte(2)),
        ("eleven-byte varint", [ten_byte(0x81), vec![0]].concat()),
        ("NaN", num(f64::NAN)),
        ("+Inf", num(f64::INFINITY)),
        ("-Inf", num(f64::NEG_INFINITY)),
        ("short number", [key(2, 1), vec![0; 7]].concat()),
        ("number then a byte", [num(1.0), vec![0]].concat()),
        ("number as 32 bits", [key(2, 5), vec![0; 4]].concat()),
        ("string as a varint", [key(3, 0), vec![1]].concat()),
        ("null as bytes", len_field(1, b"x")),
        ("bool as bytes", len_field(4, b"x")),
        ("struct as a varint", [key(5, 0), vec![0]].concat()),
        ("list as a varint", [key(6, 0), vec![0]].concat()),
        ("struct as 64 bits", [key(5, 1), vec![0; 8]].concat()),
        (
            "string, two-byte length",
            [key(3, 2), vec![0x85, 0x00], b"hello".to_vec()].concat(),
        ),
        (
            "struct, two-byte length",
            [key(5, 2), vec![0x80, 0x00]].concat(),
        ),
        (
            "string length one long",
            [key(3, 2), vec![3], b"ab".to_vec()].concat(),
        ),
        (
            "string length one short",
            [key(3, 2), vec![1], b"ab".to_vec()].concat(),
        ),
        (
            "struct length one long",
            [key(5, 2), vec![3], entry("a", &[])].concat(),
        ),
        ("two kinds", [str_val(b"a"), num(1.0)].concat()),
        ("two strings", [str_val(b"a"), str_val(b"b")].concat()),
        (
            "two structs merge",
            [
                len_field(5, &entry("a", &num(1.0))),
                len_field(5, &entry("b", &num(f64::NAN))),
            ]
            .concat(),
        ),
        (
            "two lists append",
            [list(&[num(1.0)]), list(&[str_val(b"x")])].concat(),
        ),
        (
            "string then struct",
            [str_val(b"a"), len_field(5, &[])].concat(),
        ),
        (
            "unknown field",
            [str_val(b"a"), key(9, 0), vec![1]].concat(),
        ),
        (
            "unknown fields of every wire type",
            [
                key(9, 0),
                vec![1],
                key(10, 1),
                vec![0; 8],
                len_field(11, b"zz"),
                key(12, 5),
                vec![0; 4],
                str_val(b"a"),
            ]
            .concat(),
        ),
        (
            "group",
            [key(9, 3), key(1, 0), vec![1], key(9, 4), str_val(b"a")].concat(),
        ),
        (
            "nested groups",
            [key(9, 3), key(10, 3), key(10, 4), key(9, 4)].concat(),
        ),
        (
            "group ended by another tag",
            [key(9, 3), key(10, 4)].concat(),
        ),
        (
            "group never ended",
            [key(9, 3), key(1, 0), vec![1]].concat(),
        ),
        ("end group alone", key(9, 4)),
        ("tag 0", vec![0x00, 0x01]),
        ("wire type 6", key(9, 6)),
        ("wire type 7", key(9, 7)),
        (
            "key above u32",
            [vec![0x80, 0x80, 0x80, 0x80, 0x80, 0x01], vec![1]].concat(),
        ),
        ("truncated key", vec![0x80]),
        (
            "list of kinds",
            list(&[
                str_val(b"a"),
                num(f64::NAN),
                vec![],
                len_field(5, &[]),
                list(&[]),
            ]),
        ),
        (
            "list item as a varint",
            len_field(6, &[key(1, 0), vec![1]].concat()),
        ),
        (
            "list item as a group",
            len_field(6, &[key(1, 3), key(1, 4)].concat()),
        ),
        (
            "list with unknown fields",
            len_field(
                6,
                &[
                    key(2, 0),
                    vec![1],
                    len_field(1, &str_val(b"a")),
                    len_field(3, b"q"),
                ]
                .concat(),
            ),
        ),
        (
            "list with a group",
            len_field(6, &[key(7, 3), key(7, 4), len_field(1, &[])].concat()),
        ),
        ("list with an end group", len_field(6, &key(7, 4))),
        (
            "list item cut",
            len_field(6, &[key(1, 2), vec![5], b"ab".to_vec()].concat()),
        ),
        (
            "struct entry as a group",
            len_field(
                5,
                &[key(1, 3), entry("a", &str_val(b"x"))[1..].to_vec()].concat(),
            ),
        ),
        (
            "struct entry as a varint",
            len_field(
                5,
                &[key(1, 0), entry("a", &str_val(b"x"))[1..].to_vec()].concat(),
            ),
        ),
        (
            "struct with unknown fields",
            len_field(
                5,
                &[key(2, 0), vec![1], entry("a", &[]), len_field(3, b"q")].concat(),
            ),
        ),
        (
            "struct with a group",
            len_field(5, &[key(2, 3), key(2, 4), entry("a", &[])].concat()),
        ),
        ("struct with an end group", len_field(5, &key(2, 4))),
        (
            "struct entry cut",
            len_field(5, &entry("a", &str_val(b"x"))[..4]),
        ),
        (
            "entry key as a varint",
            len_field(
                5,
                &len_field(1, &[key(1, 0), vec![1], len_field(2, &[])].concat()),
            ),
        ),
        (
            "entry value as a varint",
            len_field(
                5,
                &len_field(1, &[len_field(1, b"a"), key(2, 0), vec![1]].concat()),
            ),
        ),
        (
            "entry value as a group",
            len_field(
                5,
                &len_field(1, &[len_field(1, b"a"), key(2, 3), key(2, 4)].concat()),
            ),
        ),
        (
            "entry value first",
            len_field(
                5,
                &len_field(
                    1,
                    &[len_field(2, &str_val(b"x")), len_field(1, b"a")].concat(),
                ),
            ),
        ),
        (
            "entry key twice",
            len_field(
                5,
                &len_field(
                    1,
                    &[
                        len_field(1, b"a"),
                        len_field(1, b"b"),
                        len_field(2, &num(1.0)),
                    ]
                    .concat(),
                ),
            ),
        ),
        (
            "entry value twice",
            len_field(
                5,
                &len_field(
                    1,
                    &[
                        len_field(1, b"a"),
                        len_field(2, &num(1.0)),
                        len_field(2, &num(f64::NAN)),
                    ]
                    .concat(),
                ),
            ),
        ),
        (
            "entry with an unknown field",
            len_field(
                5,
                &len_field(
                    1,
                    &[
                        len_field(1, b"a"),
                        len_field(2, &str_val(b"x")),
                        key(3, 0),
                        vec![7],
                    ]
                    .concat(),
                ),
            ),
        ),
        (
            "entry with a group",
            len_field(
                5,
                &len_field(
                    1,
                    &[key(3, 3), key(3, 4), len_field(1, b"a"), len_field(2, &[])].concat(),
                ),
            ),
        ),
        (
            "entry with no value",
            len_field(5, &len_field(1, &len_field(1, b"a"))),
        ),
        (
            "entry with no key",
            len_field(5, &len_field(1, &len_field(2, &num(2.0)))),
        ),
        (
            "entry key length past the value",
            len_field(
                5,
                &len_field(
                    1,
                    &[vec![0x0a, 9], b"a".to_vec(), len_field(2, &[])].concat(),
                ),
            ),
        ),
        (
            "entry value length one long",
            len_field(
                5,
                &len_field(
                    1,
                    &[len_field(1, b"a"), vec![0x12, 3], str_val(b"")].concat(),
                ),
            ),
        ),
        (
            "entry value length one short",
            len_field(
                5,
                &len_field(
                    1,
                    &[len_field(1, b"a"), vec![0x12, 1], str_val(b"")].concat(),
                ),
            ),
        ),
        (
            "entry key, two-byte length",
            len_field(
                5,
                &len_field(
                    1,
                    &[vec![0x0a, 0x81, 0x00, b'a'], len_field(2, &[])].concat(),
                ),
            ),
        ),
        (
            "entry, two-byte length",
            len_field(
                5,
                &[vec![0x0a, 0x84, 0x00], len_field(1, b"a"), vec![0x12, 0]].concat(),
            ),
        ),
    ];
    for (what, bytes) in cases {
        add(what, bytes);
    }
    v
}

/// Where a value sits in a body: under `metadata.managedFields` (checked for prost's
/// verdict alone) or under plain keys and annotations (checked for irregularities too).
fn placed(value: &[u8]) -> Vec<(&'static str, Vec<u8>)> {
    let in_metadata = |k: &str, v: &[u8]| entry("metadata", &len_field(5, &entry(k, v)));
    let one_list = |v: &[u8]| len_field(6, &len_field(1, v));
    vec![
        ("managedFields", in_metadata("managedFields", value)),
        (
            "managedFields[0]",
            in_metadata("managedFields", &one_list(value)),
        ),
        (
            "managedFields[0].fieldsV1",
            in_metadata(
                "managedFields",
                &one_list(&len_field(5, &entry("fieldsV1", value))),
            ),
        ),
        ("spec.x", entry("spec", &len_field(5, &entry("x", value)))),
        ("spec[0]", entry("spec", &one_list(value))),
        (
            "an annotation",
            in_metadata("annotations", &len_field(5, &entry("a", value))),
        ),
        ("metadata.labels", in_metadata("labels", value)),
    ]
}

/// The malformed and irregular values and bodies above, placed where the scan checks
/// them without roles: the lazy decoder accepts and rejects them as prost does, and
/// answers the same (the whole map read, and one path).
#[test]
fn values_without_a_role_match_prost() {
    let programs = [
        request(PROGRAMS[3], observed_set(None)),
        request(PROGRAMS[1], observed_set(None)),
    ];
    let mut values = malformed_values();
    values.extend(
        malformed_bodies()
            .into_iter()
            .map(|(what, body)| (format!("struct of body {what}"), len_field(5, &body))),
    );
    let (mut accepted, mut rejected) = (0, 0);
    for (what, value) in &values {
        for (at, body) in placed(value) {
            for base in &programs {
                let bytes = with_raw_body(base, &body);
                match v1::RunFunctionRequest::decode(bytes.as_slice()) {
                    Ok(_) => accepted += 1,
                    Err(_) => rejected += 1,
                }
                check_bytes(&bytes, &format!("{what} at {at}"));
            }
        }
    }
    assert!(
        accepted > 500 && rejected > 500,
        "{accepted} accepted, {rejected} rejected"
    );
}

/// Nesting under `metadata.managedFields` (checked without roles, for prost's verdict
/// alone) around prost's recursion limit.
#[test]
fn managed_fields_recursion_limit_is_prosts() {
    nesting_matches_prost("managedFields", |v| {
        entry("metadata", &len_field(5, &entry("managedFields", v)))
    });
}

/// Chains of nested values in a body (`place` puts one in), around prost's recursion
/// limit: structs, lists, an unknown field and groups at the bottom, `{}` and `[]` at the
/// bottom (matched as bytes), a struct chain in one and two lists (so that the limit
/// falls on each of the three places of a level: the entry, its value, the struct). The
/// lazy decoder decides as prost at every depth, and prost's verdict flips inside the
/// depths tried for each chain.
fn nesting_matches_prost(at: &str, place: impl Fn(&[u8]) -> Vec<u8>) {
    let base = request(PROGRAMS[3], observed_set(None));
    let in_lists =
        |v: &[u8], n: usize| (0..n).fold(v.to_vec(), |v, _| len_field(6, &len_field(1, &v)));
    let structs =
        |bottom: Vec<u8>, n: usize| (0..n).fold(bottom, |v, _| len_field(5, &entry("f:x", &v)));
    let mut verdicts = std::collections::BTreeSet::new();
    for depth in 26..56 {
        let unknown = [key(9, 0), vec![1]].concat();
        let groups = [key(9, 3), key(10, 3), key(10, 4), key(9, 4)].concat();
        let chains = [
            ("structs", structs(Vec::new(), depth)),
            ("lists", in_lists(&[], depth)),
            ("lists to an unknown field", in_lists(&unknown, depth)),
            ("lists to groups", in_lists(&groups, depth)),
            ("structs to {}", structs(len_field(5, &[]), depth)),
            (
                "structs to {} in a list",
                in_lists(&structs(len_field(5, &[]), depth), 1),
            ),
            (
                "structs to {} in two lists",
                in_lists(&structs(len_field(5, &[]), depth), 2),
            ),
            ("lists to []", in_lists(&len_field(6, &[]), depth)),
        ];
        for (what, value) in chains {
            let bytes = with_raw_body(&base, &place(&value));
            verdicts.insert((
                what,
                v1::RunFunctionRequest::decode(bytes.as_slice()).is_ok(),
            ));
            check_bytes(&bytes, &format!("{at}: {what} {depth}"));
        }
    }
    assert_eq!(
        verdicts.len(),
        16,
        "{at}: a limit outside the depths tried: {verdicts:?}"
    );
}

/// Byte-level mutations of a body whose `metadata.managedFields` looks like the API
/// server's (most of the bytes of a steady-state body).
#[test]
fn mutated_managed_fields_match_prost() {
    let empty = || o(vec![]);
    let fields = |keys: &[&str]| o(keys.iter().map(|k| (*k, empty())));
    let managed = prost_types::Value {
        kind: Some(Kind::ListValue(prost_types::ListValue {
            values: vec![
                o(vec![
                    (
                        "manager",
                        s("apiextensions.crossplane.io/composed/3f6f1a5e"),
                    ),
                    ("operation", s("Apply")),
                    ("fieldsType", s("FieldsV1")),
                    (
                        "fieldsV1",
                        o(vec![(
                            "f:metadata",
                            o(vec![
                                ("f:annotations", fields(&["f:example.org/tier", "f:é"])),
                                ("f:labels", fields(&["f:team", "f:env", "f:managed-by"])),
                            ]),
                        )]),
                    ),
                ]),
                o(vec![
                    ("manager", s("provider-example")),
                    ("subresource", s("status")),
                    (
                        "fieldsV1",
                        o(vec![(
                            "f:status",
                            o(vec![
                                (".", empty()),
                                ("f:atProvider", fields(&[".", "f:arn"])),
                            ]),
                        )]),
                    ),
                ]),
            ],
        })),
    };
    let body = st(vec![
        ("kind", s("B")),
        (
            "metadata",
            o(vec![("name", s("b")), ("managedFields", managed)]),
        ),
    ]);
    let mut base = request(PROGRAMS[5], Vec::new());
    base.observed
        .get_or_insert_with(Default::default)
        .resources
        .insert("b".into(), resource(body));
    mutations_match_prost(&base.encode_to_vec(), 0x2545_f491_4f6c_dd1d);
}

/// Nesting around prost's recursion limit: the lazy decoder must accept and reject at
/// exactly the same depth.
#[test]
fn recursion_limit_is_prosts() {
    nesting_matches_prost("top", |v| entry("top", v));
}

#[test]
fn the_request_round_trips_and_bodies_decode_on_demand() {
    let req = request(PROGRAMS[1], observed_set(None));
    let lazy = LazyRequest::decode(Bytes::from(req.encode_to_vec())).expect("decodes");
    // (compared as text: the bodies hold a NaN, which is not equal to itself)
    let full = lazy.to_full().expect("full");
    let text = |r: &v1::RunFunctionRequest| {
        let o = r.observed.as_ref().expect("observed");
        let sorted: BTreeMap<_, _> = o.resources.iter().collect();
        format!("{:?} {:?} {sorted:?}", r.input, o.composite)
    };
    assert_eq!(text(&full), text(&req));
    assert!(
        lazy.envelope
            .observed
            .as_ref()
            .is_some_and(|o| o.resources.values().all(|r| r.resource.is_none()))
    );
    let reads = fn_hcl::lower::ir::compile_txtar(&format!("-- main.hcl --\n{}", PROGRAMS[1]))
        .map(|p| p.reads)
        .unwrap_or_default();
    let r = fn_hcl::protocol::request::Request::from_lazy(&lazy, &reads).expect("request");
    let bodies = r.bodies.as_ref().expect("lazy bodies");
    // `req.resource.b.spec.v` alone is read: b is decoded along that path (every key of
    // the objects on it, the other attributes null) and not kept whole.
    assert_eq!(bodies.decoded(), 0, "no body is decoded whole");
    let b = r.resource.get_attr("b").expect("b observed");
    assert_eq!(
        format!("{b:?}"),
        format!(
            "{:?}",
            fn_hcl::value::Value::object(vec![
                ("kind".into(), fn_hcl::value::Value::NULL),
                (
                    "spec".into(),
                    fn_hcl::value::Value::object(vec![(
                        "v".into(),
                        fn_hcl::value::Value::Number(
                            fn_hcl::value::number::Number::parse("0.1").expect("number")
                        )
                    )])
                ),
            ])
        )
    );
    let eager = fn_hcl::protocol::request::Request::from_proto(&req).expect("eager");
    for name in ["b", "web-0", "web-1", "plain"] {
        assert_eq!(
            format!("{:?}", r.observed_resource(name)),
            format!("{:?}", eager.observed_resource(name)),
            "{name}"
        );
    }
    assert_eq!(bodies.decoded(), 4);
    assert_eq!(r.collections, eager.collections);
    assert_eq!(
        r.resource.as_fields().map(|f| f.len()),
        eager.resource.as_fields().map(|f| f.len())
    );
}

/// Byte-level mutations of a request with observed bodies (a deterministic xorshift):
/// the lazy decoder accepts and rejects exactly as prost does, with prost's errors, and
/// the accepted ones answer the same.
#[test]
fn mutated_requests_match_prost() {
    mutations_match_prost(
        &request(PROGRAMS[5], observed_set(None)).encode_to_vec(),
        0x9e37_79b9_7f4a_7c15,
    );
}

/// 3,000 byte-level mutations of `base` (a deterministic xorshift from `seed`): prost and
/// the lazy decoder accept and reject alike, and (every tenth) the accepted ones answer
/// the same.
fn mutations_match_prost(base: &[u8], seed: u64) {
    let mut x: u64 = seed;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let (mut accepted, mut rejected) = (0, 0);
    for i in 0..3000 {
        let mut b = base.to_vec();
        for _ in 0..(1 + next() % 3) {
            let at = (next() % b.len() as u64) as usize;
            match next() % 4 {
                0 => b[at] = next() as u8,
                1 => b[at] ^= 1 << (next() % 8),
                2 => {
                    b.remove(at);
                }
                _ => b.insert(at, next() as u8),
            }
        }
        let eager = v1::RunFunctionRequest::decode(b.as_slice());
        let lazy = LazyRequest::decode(Bytes::copy_from_slice(&b));
        let alone = LazyRequest::decode_lazy_only(Bytes::copy_from_slice(&b));
        assert_eq!(alone.is_ok(), eager.is_ok(), "mutation {i}: {b:?}");
        match (&eager, &lazy) {
            (Ok(e), Ok(l)) => {
                accepted += 1;
                if i % 10 == 0 {
                    let a = run_function(e);
                    let c = fn_hcl::handler::run_function_lazy(l);
                    assert!(a == c, "mutation {i}: responses differ\n{a:?}\n{c:?}");
                }
            }
            (Err(a), Err(c)) => {
                rejected += 1;
                assert_eq!(a.to_string(), c.to_string(), "mutation {i}");
            }
            _ => panic!(
                "mutation {i}: prost {:?}, lazy {:?}: {b:?}",
                eager.as_ref().err(),
                lazy.as_ref().err()
            ),
        }
    }
    assert!(
        accepted > 100 && rejected > 100,
        "{accepted} accepted, {rejected} rejected"
    );
}

/// The request's bytes with the observed composite's body replaced by `body` (raw bytes).
fn with_raw_composite(req: &v1::RunFunctionRequest, body: &[u8]) -> Vec<u8> {
    // request { observed: State { composite: Resource { resource: <body> } } } appended:
    // the composite merges with the request's (its body bytes concatenate).
    let mut out = req.encode_to_vec();
    out.extend(len_field(2, &len_field(1, &len_field(1, body))));
    out
}

/// The composite's body sits one level nearer the top than a composed resource's: the
/// lazy decoder must accept and reject it at exactly prost's depth too.
#[test]
fn composite_recursion_limit_is_prosts() {
    let mut base = request(PROGRAMS[3], observed_set(None));
    if let Some(c) = base.observed.as_mut().and_then(|o| o.composite.as_mut()) {
        c.resource = None;
    }
    for depth in 40..56 {
        let mut v: Vec<u8> = Vec::new();
        for _ in 0..depth {
            v = len_field(5, &entry("x", &v));
        }
        check_bytes(
            &with_raw_composite(&base, &entry("top", &v)),
            &format!("composite structs {depth}"),
        );
        let mut l: Vec<u8> = Vec::new();
        for _ in 0..depth {
            l = len_field(6, &len_field(1, &l));
        }
        check_bytes(
            &with_raw_composite(&base, &entry("top", &l)),
            &format!("composite lists {depth}"),
        );
    }
}

/// The debug annotation and the fields the server logs, read from the composite's bytes,
/// are what the decoded Struct holds (including duplicated and mistyped entries).
#[test]
fn composite_fields_read_from_bytes_match_the_struct() {
    use fn_hcl::handler::debug::{field_str, observed_composite};
    use fn_hcl::protocol::proto::RequestRef;
    let ann = |v: prost_types::Value| {
        o(vec![(
            "annotations",
            o(vec![("hcl.fn.crossplane.io/debug", v)]),
        )])
    };
    let mut base = request(PROGRAMS[0], Vec::new());
    if let Some(c) = base.observed.as_mut().and_then(|o| o.composite.as_mut()) {
        c.resource = None;
    }
    let bodies: Vec<Vec<u8>> = vec![
        st(vec![("metadata", ann(s("true"))), ("kind", s("K"))]).encode_to_vec(),
        st(vec![("metadata", ann(s("false")))]).encode_to_vec(),
        st(vec![("metadata", ann(n(1.0)))]).encode_to_vec(),
        st(vec![("metadata", s("x")), ("apiVersion", n(2.0))]).encode_to_vec(),
        // a key given twice: the last wins
        [
            entry("kind", &len_field(3, b"A")),
            entry("kind", &len_field(3, b"B")),
            entry(
                "metadata",
                &len_field(5, &entry("name", &len_field(3, b"n"))),
            ),
        ]
        .concat(),
        // the annotation given twice
        [
            entry(
                "metadata",
                &len_field(
                    5,
                    &entry(
                        "annotations",
                        &len_field(
                            5,
                            &entry("hcl.fn.crossplane.io/debug", &len_field(3, b"true")),
                        ),
                    ),
                ),
            ),
            entry(
                "metadata",
                &len_field(
                    5,
                    &entry(
                        "annotations",
                        &len_field(
                            5,
                            &entry("hcl.fn.crossplane.io/debug", &len_field(3, b"no")),
                        ),
                    ),
                ),
            ),
        ]
        .concat(),
        // a value with no kind, and one with an unknown field after the string
        [
            entry("kind", b""),
            entry(
                "apiVersion",
                &[len_field(3, b"v1"), key(9, 0), vec![1]].concat(),
            ),
        ]
        .concat(),
    ];
    for (i, body) in bodies.iter().enumerate() {
        let bytes = with_raw_composite(&base, body);
        let full = v1::RunFunctionRequest::decode(bytes.as_slice()).expect("prost accepts");
        let lazy = LazyRequest::decode_lazy_only(Bytes::from(bytes)).expect("lazy accepts");
        assert_eq!(
            RequestRef::Lazy(&lazy).composite_debug_annotation(),
            RequestRef::Decoded(&full).composite_debug_annotation(),
            "body {i}: debug annotation"
        );
        let xr = observed_composite(&full).expect("composite");
        for path in [
            &["apiVersion"][..],
            &["kind"],
            &["metadata", "name"],
            &["metadata"],
        ] {
            assert_eq!(
                lazy.composite_str(path),
                field_str(xr, path),
                "body {i}: {path:?}"
            );
        }
        assert!(
            run_function(&full)
                == run_function_bytes(Bytes::from(with_raw_composite(&base, body)))
                    .expect("accepted"),
            "body {i}: responses differ"
        );
    }
}

/// The input read from its bytes (field names case-insensitive, the last of a repeated key,
/// type errors in sorted key order, nulls, unknown fields) decides as the decoded Struct,
/// and so does the debug decision.
#[test]
fn input_read_from_bytes_matches_the_struct() {
    use fn_hcl::protocol::input::Input;
    use fn_hcl::protocol::proto::RequestRef;
    let decide = |r: RequestRef<'_>| {
        let mut decoded = None;
        Input::read(r, &mut decoded).map(|i| (i.hcl.to_string(), i.debug_requested(r, false)))
    };
    let program = len_field(3, format!("-- main.hcl --\n{}", PROGRAMS[0]).as_bytes());
    let b = |v: u8| [key(4, 0), vec![v]].concat();
    let inputs: Vec<Vec<u8>> = vec![
        entry("hcl", &program),
        [entry("HCL", &program), entry("debug", &b(1))].concat(),
        [entry("hcl", &program), entry("hcl", &len_field(3, b""))].concat(),
        [entry("hcl", &len_field(3, b"")), entry("hcl", &program)].concat(),
        [
            entry("hcl", &program),
            entry("debugNew", &b(1)),
            entry("kind", &b(0)),
        ]
        .concat(),
        [
            entry("hcl", &program),
            entry("source", &len_field(5, b"")),
            entry("apiVersion", &[key(1, 0), vec![0]].concat()),
        ]
        .concat(),
        [
            entry("Hcl", &program),
            entry("hcl", b""),
            entry("debug", &len_field(6, b"")),
        ]
        .concat(),
        [
            entry("hcl", &[program.clone(), key(9, 0), vec![3]].concat()),
            entry("metadata", &len_field(3, b"x")),
        ]
        .concat(),
        [
            entry("hcl", &program),
            entry("debug", &b(2)),
            entry("debug", &b(0)),
        ]
        .concat(),
        // irregular (a value with two kinds): read from the decoded Struct
        [
            entry("hcl", &[len_field(3, b"x"), program.clone()].concat()),
            entry("debug", &b(1)),
        ]
        .concat(),
    ];
    let mut base = request(PROGRAMS[0], Vec::new());
    base.input = None;
    let mut debug_on = 0;
    for (i, input) in inputs.iter().enumerate() {
        let mut bytes = base.encode_to_vec();
        bytes.extend(len_field(4, input));
        check_bytes(&bytes, &format!("input {i}"));
        let full = v1::RunFunctionRequest::decode(bytes.as_slice()).expect("prost accepts");
        let lazy = LazyRequest::decode_lazy_only(Bytes::from(bytes)).expect("lazy accepts");
        let lazy_decision = decide(RequestRef::Lazy(&lazy));
        assert_eq!(
            lazy_decision,
            decide(RequestRef::Decoded(&full)),
            "input {i}"
        );
        debug_on += usize::from(matches!(lazy_decision, Ok((_, true))));
        assert_eq!(lazy.to_full().expect("full"), full, "input {i}");
    }
    assert!(debug_on >= 2, "only {debug_on} inputs turned the dump on");
}
