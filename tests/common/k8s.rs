//! Kubernetes manifests checked the way the API server checks them: YAML documents as
//! JSON, each validated against the OpenAPI v3 schema of its kind's CRD in
//! `../shared/crossplane` (or of an XRD, for composite resources). Unknown fields are
//! errors, as `kubectl apply` (strict field validation) reports them.
#![allow(dead_code)]

use fn_hcl::protocol::doc::to_pretty;
use serde_json::{Map, Value};
use std::path::Path;

/// Every non-empty document of a YAML stream, as JSON: read by fn-hcl's own YAML loader
/// (what `fn-hcl render` reads these manifests with).
pub fn yaml_documents(text: &str) -> Result<Vec<Value>, String> {
    fn_hcl::protocol::yaml::load_documents(text)?
        .iter()
        .map(|d| serde_json::from_str(&to_pretty(d)).map_err(|e| e.to_string()))
        .collect()
}

/// A kind's schema: (apiVersion, kind) and the openAPIV3Schema of that version.
pub struct KindSchema {
    pub api_version: String,
    pub kind: String,
    pub schema: Value,
}

/// The served versions of a CRD (or an XRD, whose versions carry the same schema shape).
pub fn kind_schemas(definition: &Value) -> Vec<KindSchema> {
    let spec = &definition["spec"];
    let group = spec["group"].as_str().unwrap_or_default();
    let kind = spec["names"]["kind"].as_str().unwrap_or_default();
    let mut out = Vec::new();
    for v in spec["versions"].as_array().into_iter().flatten() {
        if v["served"] != Value::Bool(true) {
            continue;
        }
        out.push(KindSchema {
            api_version: format!("{group}/{}", v["name"].as_str().unwrap_or_default()),
            kind: kind.to_string(),
            schema: v["schema"]["openAPIV3Schema"].clone(),
        });
    }
    out
}

/// Every served kind of the CRDs in `dirs`.
pub fn load_kinds(dirs: &[&Path]) -> Vec<KindSchema> {
    let mut out = Vec::new();
    for dir in dirs {
        let mut files = Vec::new();
        super::walk(dir, &mut files);
        for f in files
            .iter()
            .filter(|f| f.extension().is_some_and(|e| e == "yaml"))
        {
            let text = std::fs::read_to_string(f).expect("read CRD");
            for d in yaml_documents(&text).unwrap_or_else(|e| panic!("{}: {e}", f.display())) {
                out.extend(kind_schemas(&d));
            }
        }
    }
    out
}

/// An OpenAPI v3 structural schema as a JSON schema (draft 4, which OpenAPI 3.0 follows):
/// `nullable` becomes a null type, and an object with `properties` accepts no other
/// field unless it has `x-kubernetes-preserve-unknown-fields` or `additionalProperties`.
pub fn to_json_schema(s: &Value) -> Value {
    let Value::Object(m) = s else {
        return s.clone();
    };
    let mut out = Map::new();
    for (k, v) in m {
        let v = match k.as_str() {
            "properties" | "patternProperties" | "definitions" => Value::Object(
                v.as_object()
                    .into_iter()
                    .flatten()
                    .map(|(name, sub)| (name.clone(), to_json_schema(sub)))
                    .collect(),
            ),
            "items" | "additionalProperties" | "not" => to_json_schema(v),
            "allOf" | "anyOf" | "oneOf" => Value::Array(
                v.as_array()
                    .into_iter()
                    .flatten()
                    .map(to_json_schema)
                    .collect(),
            ),
            // CEL rules and descriptions are not JSON schema.
            "x-kubernetes-validations" | "description" => continue,
            _ => v.clone(),
        };
        out.insert(k.clone(), v);
    }
    if m.get("nullable") == Some(&Value::Bool(true))
        && let Some(Value::String(t)) = m.get("type")
    {
        out.insert("type".into(), serde_json::json!([t, "null"]));
    }
    if m.get("x-kubernetes-int-or-string") == Some(&Value::Bool(true)) {
        out.remove("type");
        out.insert(
            "anyOf".into(),
            serde_json::json!([{"type": "integer"}, {"type": "string"}]),
        );
    }
    let preserve = m.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true));
    if m.contains_key("properties") && !preserve && !m.contains_key("additionalProperties") {
        out.insert("additionalProperties".into(), Value::Bool(false));
    }
    Value::Object(out)
}

/// Validates `doc` against `schema` (an openAPIV3Schema); the errors, by path.
pub fn validate(schema: &Value, doc: &Value) -> Vec<String> {
    let js = to_json_schema(schema);
    let validator = match jsonschema::draft4::new(&js) {
        Ok(v) => v,
        Err(e) => return vec![format!("the schema does not compile: {e}")],
    };
    let mut errors: Vec<String> = validator
        .iter_errors(doc)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect();
    // ObjectMeta is `type: object` in CRDs; the API server requires a name.
    let meta = &doc["metadata"];
    let named =
        meta["name"].as_str().is_some_and(dns_subdomain) || meta["generateName"].as_str().is_some();
    if !named {
        errors.push(format!(
            "/metadata/name: missing or not a DNS subdomain: {}",
            meta["name"]
        ));
    }
    errors
}

/// A DNS-1123 subdomain, as Kubernetes object names must be.
pub fn dns_subdomain(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 253
        && s.split('.').all(|label| {
            !label.is_empty()
                && label
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
                && !label.starts_with('-')
                && !label.ends_with('-')
        })
}

/// The schema of `doc`'s apiVersion and kind among `kinds`.
pub fn schema_for<'a>(kinds: &'a [KindSchema], doc: &Value) -> Option<&'a KindSchema> {
    kinds.iter().find(|k| {
        doc["apiVersion"].as_str() == Some(k.api_version.as_str())
            && doc["kind"].as_str() == Some(k.kind.as_str())
    })
}

/// The kinds an XRD defines, with what Crossplane adds to the CRD it generates from it:
/// `apiVersion`, `kind`, `metadata`, and (v2) `spec.crossplane` and status' conditions.
pub fn xrd_kind_schemas(xrd: &Value) -> Vec<KindSchema> {
    let mut kinds = kind_schemas(xrd);
    for k in &mut kinds {
        let s = &mut k.schema;
        s["properties"]["apiVersion"] = serde_json::json!({"type": "string"});
        s["properties"]["kind"] = serde_json::json!({"type": "string"});
        s["properties"]["metadata"] = serde_json::json!({"type": "object"});
        let open =
            serde_json::json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true});
        if s["properties"]["spec"].is_object() {
            s["properties"]["spec"]["properties"]["crossplane"] = open.clone();
        }
        if s["properties"]["status"].is_object() {
            s["properties"]["status"]["properties"]["conditions"] =
                serde_json::json!({"type": "array", "items": open});
        }
    }
    kinds
}
