//! protojson: the JSON mapping of the protocol messages, for the CLI and tests.
//!
//! Output follows Go's protojson as the conformance corpus records it (README
//! "response.json"): lowerCamelCase names, enums as their names, bytes as base64, Duration
//! as `"60s"`, unpopulated fields omitted; printed with sorted keys, 2-space indentation and
//! non-ASCII characters as they are. Input accepts what protojson accepts for
//! RunFunctionRequest (both field-name spellings, enum names or numbers, any base64), from
//! JSON or YAML text.

use crate::protocol::doc::{Json, MAX_JSON_DEPTH};
use crate::protocol::proto::v1;
use base64::Engine as _;
use prost_types::value::Kind;
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;

// ---------------------------------------------------------------------------------------
// Messages → JSON

fn obj() -> BTreeMap<String, Json> {
    BTreeMap::new()
}

fn b64(bytes: &[u8]) -> Json {
    Json::String(base64::engine::general_purpose::STANDARD.encode(bytes))
}

fn enum_json(name: Option<&str>, n: i32) -> Json {
    match name {
        Some(s) => Json::String(s.to_string()),
        None => Json::Number(f64::from(n)),
    }
}

/// A `google.protobuf.Struct` as JSON. NaN and ±Inf cannot be written (protojson refuses
/// them too).
pub fn struct_to_json(s: &prost_types::Struct) -> Result<Json, String> {
    struct_json_at(s, 0)
}

fn struct_json_at(s: &prost_types::Struct, depth: usize) -> Result<Json, String> {
    if depth > MAX_JSON_DEPTH {
        return Err(format!("value nested deeper than {MAX_JSON_DEPTH} levels"));
    }
    let mut m = obj();
    for (k, v) in &s.fields {
        m.insert(k.clone(), value_json_at(v, depth + 1)?);
    }
    Ok(Json::Object(m))
}

/// A `google.protobuf.Value` as JSON.
pub fn proto_value_to_json(v: &prost_types::Value) -> Result<Json, String> {
    value_json_at(v, 0)
}

fn value_json_at(v: &prost_types::Value, depth: usize) -> Result<Json, String> {
    if depth > MAX_JSON_DEPTH {
        return Err(format!("value nested deeper than {MAX_JSON_DEPTH} levels"));
    }
    Ok(match &v.kind {
        None | Some(Kind::NullValue(_)) => Json::Null,
        Some(Kind::BoolValue(b)) => Json::Bool(*b),
        Some(Kind::NumberValue(n)) => {
            if !n.is_finite() {
                return Err(format!(
                    "google.protobuf.Value: invalid {} value",
                    format_nonfinite(*n)
                ));
            }
            Json::Number(*n)
        }
        Some(Kind::StringValue(s)) => Json::String(s.clone()),
        Some(Kind::StructValue(s)) => struct_json_at(s, depth + 1)?,
        Some(Kind::ListValue(l)) => Json::Array(
            l.values
                .iter()
                .map(|x| value_json_at(x, depth + 1))
                .collect::<Result<_, _>>()?,
        ),
    })
}

fn format_nonfinite(n: f64) -> &'static str {
    if n.is_nan() {
        "NaN"
    } else if n > 0.0 {
        "Infinity"
    } else {
        "-Infinity"
    }
}

/// A Duration as protojson writes it (`60s`, `1.500s`).
pub fn duration_text(d: &prost_types::Duration) -> String {
    let neg = d.seconds < 0 || d.nanos < 0;
    let secs = d.seconds.unsigned_abs();
    let nanos = d.nanos.unsigned_abs();
    let mut s = String::new();
    if neg {
        s.push('-');
    }
    let _ = write!(s, "{secs}");
    if nanos != 0 {
        let frac = format!("{nanos:09}");
        let frac = if frac.ends_with("000000") {
            &frac[..3]
        } else if frac.ends_with("000") {
            &frac[..6]
        } else {
            &frac[..]
        };
        s.push('.');
        s.push_str(frac);
    }
    s.push('s');
    s
}

fn resource_json(r: &v1::Resource) -> Result<Json, String> {
    let mut m = obj();
    if let Some(s) = &r.resource {
        m.insert("resource".into(), struct_to_json(s)?);
    }
    if !r.connection_details.is_empty() {
        let cd: BTreeMap<String, Json> = r
            .connection_details
            .iter()
            .map(|(k, v)| (k.clone(), b64(v)))
            .collect();
        m.insert("connectionDetails".into(), Json::Object(cd));
    }
    if r.ready != 0 {
        let name = v1::Ready::try_from(r.ready).ok().map(|e| e.as_str_name());
        m.insert("ready".into(), enum_json(name, r.ready));
    }
    Ok(Json::Object(m))
}

fn state_json(s: &v1::State) -> Result<Json, String> {
    let mut m = obj();
    if let Some(c) = &s.composite {
        m.insert("composite".into(), resource_json(c)?);
    }
    if !s.resources.is_empty() {
        let mut rs = obj();
        for (k, r) in &s.resources {
            rs.insert(k.clone(), resource_json(r)?);
        }
        m.insert("resources".into(), Json::Object(rs));
    }
    Ok(Json::Object(m))
}

fn target_json(t: Option<i32>, m: &mut BTreeMap<String, Json>) {
    if let Some(t) = t {
        let name = v1::Target::try_from(t).ok().map(|e| e.as_str_name());
        m.insert("target".into(), enum_json(name, t));
    }
}

fn selector_json(s: &v1::ResourceSelector) -> Json {
    let mut m = obj();
    if !s.api_version.is_empty() {
        m.insert("apiVersion".into(), Json::String(s.api_version.clone()));
    }
    if !s.kind.is_empty() {
        m.insert("kind".into(), Json::String(s.kind.clone()));
    }
    match &s.r#match {
        Some(v1::resource_selector::Match::MatchName(n)) => {
            m.insert("matchName".into(), Json::String(n.clone()));
        }
        Some(v1::resource_selector::Match::MatchLabels(l)) => {
            let mut ml = obj();
            if !l.labels.is_empty() {
                ml.insert(
                    "labels".into(),
                    Json::Object(
                        l.labels
                            .iter()
                            .map(|(k, v)| (k.clone(), Json::String(v.clone())))
                            .collect(),
                    ),
                );
            }
            m.insert("matchLabels".into(), Json::Object(ml));
        }
        None => {}
    }
    if let Some(ns) = &s.namespace {
        m.insert("namespace".into(), Json::String(ns.clone()));
    }
    Json::Object(m)
}

fn requirements_json(r: &v1::Requirements) -> Json {
    let mut m = obj();
    let sel_map = |x: &BTreeMap<String, v1::ResourceSelector>| {
        Json::Object(
            x.iter()
                .map(|(k, s)| (k.clone(), selector_json(s)))
                .collect(),
        )
    };
    if !r.extra_resources.is_empty() {
        m.insert("extraResources".into(), sel_map(&r.extra_resources));
    }
    if !r.resources.is_empty() {
        m.insert("resources".into(), sel_map(&r.resources));
    }
    if !r.schemas.is_empty() {
        let mut sm = obj();
        for (k, s) in &r.schemas {
            let mut x = obj();
            if !s.api_version.is_empty() {
                x.insert("apiVersion".into(), Json::String(s.api_version.clone()));
            }
            if !s.kind.is_empty() {
                x.insert("kind".into(), Json::String(s.kind.clone()));
            }
            sm.insert(k.clone(), Json::Object(x));
        }
        m.insert("schemas".into(), Json::Object(sm));
    }
    Json::Object(m)
}

/// A RunFunctionResponse in protojson form.
pub fn response_to_json(r: &v1::RunFunctionResponse) -> Result<Json, String> {
    let mut m = obj();
    if let Some(meta) = &r.meta {
        let mut mm = obj();
        if !meta.tag.is_empty() {
            mm.insert("tag".into(), Json::String(meta.tag.clone()));
        }
        if let Some(ttl) = &meta.ttl {
            mm.insert("ttl".into(), Json::String(duration_text(ttl)));
        }
        m.insert("meta".into(), Json::Object(mm));
    }
    if let Some(d) = &r.desired {
        m.insert("desired".into(), state_json(d)?);
    }
    if !r.results.is_empty() {
        let mut rs = Vec::with_capacity(r.results.len());
        for x in &r.results {
            let mut o = obj();
            if x.severity != 0 {
                let name = v1::Severity::try_from(x.severity)
                    .ok()
                    .map(|e| e.as_str_name());
                o.insert("severity".into(), enum_json(name, x.severity));
            }
            if !x.message.is_empty() {
                o.insert("message".into(), Json::String(x.message.clone()));
            }
            if let Some(reason) = &x.reason {
                o.insert("reason".into(), Json::String(reason.clone()));
            }
            target_json(x.target, &mut o);
            rs.push(Json::Object(o));
        }
        m.insert("results".into(), Json::Array(rs));
    }
    if let Some(c) = &r.context {
        m.insert("context".into(), struct_to_json(c)?);
    }
    if let Some(req) = &r.requirements {
        m.insert("requirements".into(), requirements_json(req));
    }
    if !r.conditions.is_empty() {
        let mut cs = Vec::with_capacity(r.conditions.len());
        for c in &r.conditions {
            let mut o = obj();
            if !c.r#type.is_empty() {
                o.insert("type".into(), Json::String(c.r#type.clone()));
            }
            if c.status != 0 {
                let name = v1::Status::try_from(c.status).ok().map(|e| e.as_str_name());
                o.insert("status".into(), enum_json(name, c.status));
            }
            if !c.reason.is_empty() {
                o.insert("reason".into(), Json::String(c.reason.clone()));
            }
            if let Some(msg) = &c.message {
                o.insert("message".into(), Json::String(msg.clone()));
            }
            target_json(c.target, &mut o);
            cs.push(Json::Object(o));
        }
        m.insert("conditions".into(), Json::Array(cs));
    }
    if let Some(o) = &r.output {
        m.insert("output".into(), struct_to_json(o)?);
    }
    Ok(Json::Object(m))
}

// ---------------------------------------------------------------------------------------
// JSON → RunFunctionRequest

/// Reads a RunFunctionRequest from JSON or YAML text (protojson field names).
pub fn request_from_text(text: &str) -> Result<v1::RunFunctionRequest, String> {
    let doc = crate::protocol::yaml::parse_document(text)?;
    request_from_json(&doc)
}

/// A RunFunctionRequest from its protojson form.
pub fn request_from_json(j: &Json) -> Result<v1::RunFunctionRequest, String> {
    let mut req = v1::RunFunctionRequest::default();
    for (k, v) in fields(j, "RunFunctionRequest")? {
        if matches!(v, Json::Null) {
            continue;
        }
        let at = |f: &str| format!("RunFunctionRequest.{f}");
        match k.as_str() {
            "meta" => req.meta = Some(request_meta(v)?),
            "observed" => req.observed = Some(state(v, &at("observed"))?),
            "desired" => req.desired = Some(state(v, &at("desired"))?),
            "input" => req.input = Some(json_to_struct(v, &at("input"))?),
            "context" => req.context = Some(json_to_struct(v, &at("context"))?),
            "extraResources" | "extra_resources" => {
                req.extra_resources = resources_map(v, &at("extraResources"))?
            }
            "requiredResources" | "required_resources" => {
                req.required_resources = resources_map(v, &at("requiredResources"))?
            }
            "credentials" => {
                for (name, c) in fields(v, &at("credentials"))? {
                    let path = format!("RunFunctionRequest.credentials.{name}");
                    let mut cred = v1::Credentials::default();
                    for (ck, cv) in fields(c, &path)? {
                        match ck.as_str() {
                            "credentialData" | "credential_data" => {
                                let mut data = HashMap::new();
                                for (dk, dv) in fields(cv, &path)? {
                                    if dk != "data" {
                                        return Err(unknown(&path, dk));
                                    }
                                    data = bytes_map(dv, &format!("{path}.data"))?
                                        .into_iter()
                                        .collect();
                                }
                                cred.source = Some(v1::credentials::Source::CredentialData(
                                    v1::CredentialData { data },
                                ));
                            }
                            _ => return Err(unknown(&path, ck)),
                        }
                    }
                    req.credentials.insert(name.clone(), cred);
                }
            }
            "requiredSchemas" | "required_schemas" => {
                for (name, s) in fields(v, &at("requiredSchemas"))? {
                    let path = format!("RunFunctionRequest.requiredSchemas.{name}");
                    let mut schema = v1::Schema::default();
                    for (sk, sv) in fields(s, &path)? {
                        match sk.as_str() {
                            "openapiV3" | "openapi_v3" => {
                                schema.openapi_v3 = Some(json_to_struct(sv, &path)?)
                            }
                            _ => return Err(unknown(&path, sk)),
                        }
                    }
                    req.required_schemas.insert(name.clone(), schema);
                }
            }
            _ => return Err(unknown("RunFunctionRequest", k)),
        }
    }
    Ok(req)
}

fn unknown(path: &str, field: &str) -> String {
    format!("{path}: unknown field {field:?}")
}

fn fields<'a>(j: &'a Json, path: &str) -> Result<&'a BTreeMap<String, Json>, String> {
    match j {
        Json::Object(m) => Ok(m),
        other => Err(format!(
            "{path}: expected an object, got {}",
            other.type_name()
        )),
    }
}

fn string(j: &Json, path: &str) -> Result<String, String> {
    match j {
        Json::String(s) => Ok(s.clone()),
        other => Err(format!(
            "{path}: expected a string, got {}",
            other.type_name()
        )),
    }
}

fn enum_value(
    j: &Json,
    path: &str,
    from_name: impl Fn(&str) -> Option<i32>,
) -> Result<i32, String> {
    match j {
        Json::String(s) => from_name(s).ok_or_else(|| format!("{path}: invalid enum value {s:?}")),
        Json::Number(n) if n.fract() == 0.0 && n.abs() <= f64::from(i32::MAX) => Ok(*n as i32),
        other => Err(format!(
            "{path}: expected an enum, got {}",
            other.type_name()
        )),
    }
}

fn request_meta(j: &Json) -> Result<v1::RequestMeta, String> {
    let path = "RunFunctionRequest.meta";
    let mut meta = v1::RequestMeta::default();
    for (k, v) in fields(j, path)? {
        match k.as_str() {
            "tag" => meta.tag = string(v, path)?,
            "capabilities" => match v {
                Json::Array(a) => {
                    for c in a {
                        meta.capabilities.push(enum_value(c, path, |s| {
                            v1::Capability::from_str_name(s).map(|e| e as i32)
                        })?);
                    }
                }
                Json::Null => {}
                other => {
                    return Err(format!(
                        "{path}.capabilities: expected a list, got {}",
                        other.type_name()
                    ));
                }
            },
            _ => return Err(unknown(path, k)),
        }
    }
    Ok(meta)
}

fn state(j: &Json, path: &str) -> Result<v1::State, String> {
    let mut s = v1::State::default();
    for (k, v) in fields(j, path)? {
        if matches!(v, Json::Null) {
            continue;
        }
        match k.as_str() {
            "composite" => s.composite = Some(resource(v, &format!("{path}.composite"))?),
            "resources" => {
                for (name, r) in fields(v, path)? {
                    s.resources.insert(
                        name.clone(),
                        resource(r, &format!("{path}.resources.{name}"))?,
                    );
                }
            }
            _ => return Err(unknown(path, k)),
        }
    }
    Ok(s)
}

fn resource(j: &Json, path: &str) -> Result<v1::Resource, String> {
    let mut r = v1::Resource::default();
    for (k, v) in fields(j, path)? {
        if matches!(v, Json::Null) {
            continue;
        }
        match k.as_str() {
            "resource" => r.resource = Some(json_to_struct(v, &format!("{path}.resource"))?),
            "connectionDetails" | "connection_details" => {
                r.connection_details = bytes_map(v, &format!("{path}.connectionDetails"))?
            }
            "ready" => {
                r.ready = enum_value(v, path, |s| v1::Ready::from_str_name(s).map(|e| e as i32))?
            }
            _ => return Err(unknown(path, k)),
        }
    }
    Ok(r)
}

fn resources_map(j: &Json, path: &str) -> Result<HashMap<String, v1::Resources>, String> {
    let mut out = HashMap::new();
    for (name, rs) in fields(j, path)? {
        let p = format!("{path}.{name}");
        let mut items = Vec::new();
        for (k, v) in fields(rs, &p)? {
            match (k.as_str(), v) {
                ("items", Json::Array(a)) => {
                    for (i, x) in a.iter().enumerate() {
                        items.push(resource(x, &format!("{p}.items[{i}]"))?);
                    }
                }
                ("items", Json::Null) => {}
                ("items", other) => {
                    return Err(format!(
                        "{p}.items: expected a list, got {}",
                        other.type_name()
                    ));
                }
                _ => return Err(unknown(&p, k)),
            }
        }
        out.insert(name.clone(), v1::Resources { items });
    }
    Ok(out)
}

fn bytes_map(j: &Json, path: &str) -> Result<BTreeMap<String, Vec<u8>>, String> {
    let mut out = BTreeMap::new();
    for (k, v) in fields(j, path)? {
        let s = string(v, &format!("{path}.{k}"))?;
        out.insert(
            k.clone(),
            decode_base64(&s).map_err(|e| format!("{path}.{k}: {e}"))?,
        );
    }
    Ok(out)
}

/// Decodes protojson `bytes`: standard or URL-safe base64, padded or not.
pub fn decode_base64(s: &str) -> Result<Vec<u8>, String> {
    use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};
    let url = s.contains(['-', '_']);
    let padded = s.ends_with('=');
    let engine = match (url, padded) {
        (false, true) => &STANDARD,
        (false, false) => &STANDARD_NO_PAD,
        (true, true) => &URL_SAFE,
        (true, false) => &URL_SAFE_NO_PAD,
    };
    engine.decode(s).map_err(|e| format!("invalid base64: {e}"))
}

/// A JSON object as a `google.protobuf.Struct`.
pub fn json_to_struct(j: &Json, path: &str) -> Result<prost_types::Struct, String> {
    match j {
        Json::Object(m) => {
            let mut fields = BTreeMap::new();
            for (k, v) in m {
                fields.insert(k.clone(), json_to_value(v, 1, MAX_JSON_DEPTH)?);
            }
            Ok(prost_types::Struct { fields })
        }
        other => Err(format!(
            "{path}: expected an object, got {}",
            other.type_name()
        )),
    }
}

/// Any JSON value as a `google.protobuf.Value` (nested at most [`MAX_JSON_DEPTH`] deep).
pub fn json_to_proto_value(j: &Json) -> Result<prost_types::Value, String> {
    json_to_value(j, 0, MAX_JSON_DEPTH)
}

fn json_to_value(j: &Json, depth: usize, max: usize) -> Result<prost_types::Value, String> {
    if depth > max {
        return Err(format!("value nested deeper than {max} levels"));
    }
    let kind = match j {
        Json::Null => Kind::NullValue(0),
        Json::Bool(b) => Kind::BoolValue(*b),
        Json::Number(n) => Kind::NumberValue(*n),
        Json::String(s) => Kind::StringValue(s.clone()),
        Json::Array(a) => {
            let mut values = Vec::with_capacity(a.len());
            for x in a {
                values.push(json_to_value(x, depth + 1, max)?);
            }
            Kind::ListValue(prost_types::ListValue { values })
        }
        Json::Object(m) => {
            // Entries first, then one bulk build of the map: fewer allocations than
            // inserting one by one into a large map.
            let mut entries = Vec::with_capacity(m.len());
            for (k, v) in m {
                entries.push((k.clone(), json_to_value(v, depth + 1, max)?));
            }
            Kind::StructValue(prost_types::Struct {
                fields: entries.into_iter().collect(),
            })
        }
    };
    Ok(prost_types::Value { kind: Some(kind) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::doc::{parse_json, to_pretty};
    use crate::protocol::response::{ResponseBuilder, Severity};

    #[test]
    fn durations() {
        let d = |seconds, nanos| prost_types::Duration { seconds, nanos };
        assert_eq!(duration_text(&d(60, 0)), "60s");
        assert_eq!(duration_text(&d(1, 500_000_000)), "1.500s");
        assert_eq!(duration_text(&d(0, 1)), "0.000000001s");
        assert_eq!(duration_text(&d(-2, 0)), "-2s");
    }

    #[test]
    fn hand_built_response_prints_like_the_corpus() {
        let req = request_from_text("meta:\n  tag: abc\n").unwrap();
        let mut b = ResponseBuilder::new(&req);
        b.set_resource(
            "r",
            json_to_struct(&parse_json(r#"{"kind":"X","n":2,"é":"ü"}"#).unwrap(), "").unwrap(),
        );
        b.add_resolved_without_warnings();
        b.add_result(Severity::Normal, "hcl module executed successfully", None);
        let text = to_pretty(&response_to_json(&b.finish()).unwrap());
        let expected = r#"{
  "conditions": [
    {
      "message": "all items complete",
      "reason": "AllItemsProcessed",
      "status": "STATUS_CONDITION_TRUE",
      "target": "TARGET_COMPOSITE",
      "type": "FullyResolved"
    }
  ],
  "desired": {
    "resources": {
      "r": {
        "resource": {
          "kind": "X",
          "n": 2,
          "é": "ü"
        }
      }
    }
  },
  "meta": {
    "tag": "abc",
    "ttl": "60s"
  },
  "results": [
    {
      "message": "no warnings",
      "reason": "HclDiagnostics",
      "severity": "SEVERITY_NORMAL",
      "target": "TARGET_COMPOSITE"
    },
    {
      "message": "hcl module executed successfully",
      "severity": "SEVERITY_NORMAL",
      "target": "TARGET_COMPOSITE"
    }
  ]
}"#;
        assert_eq!(text, expected);
    }

    #[test]
    fn request_fields_and_bytes() {
        let req = request_from_text(
            r#"{"meta":{"tag":"t","capabilities":["CAPABILITY_CONDITIONS", 2]},
               "observed":{"composite":{"resource":{"a":1},"connectionDetails":{"k":"aGk"}},
                 "resources":{"r":{"resource":{},"ready":"READY_TRUE"}}},
               "extra_resources":{"e":{"items":[{"resource":{"x":true}}]}},
               "credentials":{"c":{"credentialData":{"data":{"p":"-_8="}}}},
               "requiredSchemas":{"s":{"openapiV3":{"type":"object"}}}}"#,
        )
        .unwrap();
        assert_eq!(req.meta.as_ref().unwrap().capabilities, vec![4, 2]);
        let obs = req.observed.as_ref().unwrap();
        assert_eq!(
            obs.composite.as_ref().unwrap().connection_details["k"],
            b"hi"
        );
        assert_eq!(obs.resources["r"].ready, v1::Ready::True as i32);
        assert_eq!(req.extra_resources["e"].items.len(), 1);
        match &req.credentials["c"].source {
            Some(v1::credentials::Source::CredentialData(d)) => {
                assert_eq!(d.data["p"], [0xfb, 0xff])
            }
            s => panic!("{s:?}"),
        }
        assert!(req.required_schemas["s"].openapi_v3.is_some());
        let e = request_from_text(r#"{"bogus": 1}"#).unwrap_err();
        assert!(e.contains("unknown field \"bogus\""), "{e}");
        let e = request_from_text("observed:\n  composite:\n    resource: 5\n").unwrap_err();
        assert!(e.contains("expected an object"), "{e}");
    }

    #[test]
    fn nonfinite_struct_values_cannot_be_written() {
        let v = prost_types::Value {
            kind: Some(Kind::NumberValue(f64::NAN)),
        };
        assert!(proto_value_to_json(&v).is_err());
    }
}
