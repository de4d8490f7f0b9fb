//! The debug dump of one call: the request and its response in the txtar form
//! function-hcl prints (`## start request ##`, `-- xr.yaml --`, ...), `crossplane render`
//! inputs and output that a user can paste into a local `fn-hcl render` test. The one dump
//! of the crate: the handler prints it when [`crate::protocol::input::Input::debug_requested`]
//! says so (the input's `debug`/`debugNew`, the XR's annotation, the server's `--debug`).
//!
//! Secrets never appear: connection details and credentials are not printed at all, and the
//! `data`/`stringData` values of any `Secret` object are replaced by [`REDACTED`] (the one
//! redaction; Go prints them as they are).

use std::collections::BTreeMap;

use prost_types::value::Kind;

use crate::protocol::doc::Json;
use crate::protocol::proto::v1;
use crate::protocol::protojson;
use crate::protocol::yaml;

/// What a redacted Secret value is replaced with.
pub const REDACTED: &str = "REDACTED";

/// The observed composite resource's body.
pub fn observed_composite(req: &v1::RunFunctionRequest) -> Option<&prost_types::Struct> {
    req.observed.as_ref()?.composite.as_ref()?.resource.as_ref()
}

/// The value at `path` inside `s` (object keys only).
pub fn field<'a>(s: &'a prost_types::Struct, path: &[&str]) -> Option<&'a prost_types::Value> {
    let (first, rest) = path.split_first()?;
    let mut v = s.fields.get(*first)?;
    for key in rest {
        match &v.kind {
            Some(Kind::StructValue(inner)) => v = inner.fields.get(*key)?,
            _ => return None,
        }
    }
    Some(v)
}

/// The string at `path` inside `s`, or "".
pub fn field_str<'a>(s: &'a prost_types::Struct, path: &[&str]) -> &'a str {
    match field(s, path).and_then(|v| v.kind.as_ref()) {
        Some(Kind::StringValue(x)) => x,
        _ => "",
    }
}

/// Writes a dump to stderr in one piece, so that concurrent calls' dumps do not interleave
/// and each block stays extractable as txtar.
pub fn print(text: &str) {
    use std::io::Write;
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(text.as_bytes());
    let _ = err.flush();
}

/// A txtar archive being written: files, each of YAML documents separated by `---`.
struct Dump {
    out: String,
    first_doc: bool,
}

impl Dump {
    fn new(kind: &str) -> Dump {
        Dump {
            out: format!("## start {kind} ##\n"),
            first_doc: true,
        }
    }

    fn file(&mut self, name: &str) {
        self.first_doc = true;
        self.out.push_str("\n-- ");
        self.out.push_str(name);
        self.out.push_str(" --\n");
    }

    fn comment(&mut self, text: &str) {
        self.out.push_str("# ");
        // A newline in a name would end the comment and inject lines into the archive.
        self.out.push_str(&text.replace(['\n', '\r'], " "));
        self.out.push('\n');
    }

    fn doc(&mut self, v: &Json, comment: Option<&str>) {
        if !self.first_doc {
            self.out.push_str("---\n");
        }
        self.first_doc = false;
        if let Some(c) = comment {
            self.comment(c);
        }
        self.out.push_str(&yaml::emit(v));
    }

    fn raw(&mut self, text: &str) {
        self.out.push_str(text);
        if !text.ends_with('\n') {
            self.out.push('\n');
        }
    }

    fn finish(mut self, kind: &str) -> String {
        self.out.push_str("\n## end ");
        self.out.push_str(kind);
        self.out.push_str(" ##\n");
        self.out
    }
}

fn body_json(s: Option<&prost_types::Struct>) -> Json {
    s.and_then(|s| protojson::struct_to_json(s).ok())
        .unwrap_or_else(|| Json::Object(BTreeMap::new()))
}

/// Replaces the values of a Secret's `data` and `stringData` (anywhere a `kind: Secret`
/// object appears at the top level of `v`).
pub fn redact(v: &mut Json) {
    let Json::Object(m) = v else { return };
    if m.get("kind").and_then(Json::as_str) != Some("Secret") {
        return;
    }
    for key in ["data", "stringData"] {
        match m.get_mut(key) {
            Some(Json::Object(d)) => {
                for val in d.values_mut() {
                    *val = Json::String(REDACTED.into());
                }
            }
            Some(other @ (Json::String(_) | Json::Array(_) | Json::Number(_) | Json::Bool(_))) => {
                *other = Json::String(REDACTED.into());
            }
            _ => {}
        }
    }
}

/// Drops the metadata noise kubectl and the API server add (as function-hcl does).
fn clean(v: &mut Json) {
    redact(v);
    let Json::Object(m) = v else { return };
    let Some(Json::Object(meta)) = m.get_mut("metadata") else {
        return;
    };
    for k in [
        "managedFields",
        "creationTimestamp",
        "generation",
        "resourceVersion",
        "uid",
    ] {
        meta.remove(k);
    }
    if let Some(Json::Object(ann)) = meta.get_mut("annotations") {
        ann.remove("kubectl.kubernetes.io/last-applied-configuration");
    }
}

fn resource_doc(r: &v1::Resource) -> Json {
    let mut j = body_json(r.resource.as_ref());
    clean(&mut j);
    j
}

/// The request dump: `xr.yaml`, `observed.yaml`, one `context-<key>.json` per context key,
/// and `extra-resources.yaml` (extra and required resources).
pub fn request_dump(req: &v1::RunFunctionRequest) -> String {
    let mut d = Dump::new("request");
    d.file("xr.yaml");
    let mut xr = body_json(observed_composite(req));
    clean(&mut xr);
    d.doc(&xr, None);

    d.file("observed.yaml");
    if let Some(obs) = &req.observed {
        let names: BTreeMap<_, _> = obs.resources.iter().collect();
        for (name, r) in names {
            d.doc(&resource_doc(r), Some(&format!("crossplane name: {name}")));
        }
    }

    if let Some(ctx) = &req.context {
        let keys: BTreeMap<_, _> = ctx.fields.iter().collect();
        for (key, v) in keys {
            let j = protojson::proto_value_to_json(v).unwrap_or(Json::Null);
            d.file(&format!(
                "context-{}.json",
                key.replace('/', "--").replace(['\n', '\r'], " ")
            ));
            d.raw(&crate::protocol::doc::to_pretty(&j));
        }
    }

    let mut extra: BTreeMap<&String, &v1::Resources> = req.extra_resources.iter().collect();
    extra.extend(req.required_resources.iter());
    if !extra.is_empty() {
        d.file("extra-resources.yaml");
        for (key, rs) in extra {
            d.comment(&format!("key: {key}"));
            for r in &rs.items {
                d.doc(&resource_doc(r), None);
            }
        }
    }
    d.finish("request")
}

fn object(pairs: impl IntoIterator<Item = (&'static str, Json)>) -> Json {
    Json::Object(pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
}

fn string(s: &str) -> Json {
    Json::String(s.to_string())
}

fn status_name(status: i32) -> &'static str {
    match v1::Status::try_from(status) {
        Ok(v1::Status::ConditionTrue) => "True",
        Ok(v1::Status::ConditionFalse) => "False",
        Ok(v1::Status::ConditionUnknown) => "Unknown",
        _ => "Unspecified",
    }
}

/// Sets `metadata.<bag>.<key> = value`, creating the maps as needed.
fn set_meta(r: &mut Json, bag: &str, key: &str, value: Json) {
    let Json::Object(m) = r else { return };
    let meta = m
        .entry("metadata".to_string())
        .or_insert_with(|| Json::Object(BTreeMap::new()));
    if !matches!(meta, Json::Object(_)) {
        *meta = Json::Object(BTreeMap::new());
    }
    let Json::Object(meta) = meta else { return };
    if bag.is_empty() {
        meta.insert(key.to_string(), value);
        return;
    }
    let b = meta
        .entry(bag.to_string())
        .or_insert_with(|| Json::Object(BTreeMap::new()));
    if !matches!(b, Json::Object(_)) {
        *b = Json::Object(BTreeMap::new());
    }
    if let Json::Object(b) = b {
        b.insert(key.to_string(), value);
    }
}

/// The response dump: `rendered.yaml` (the XR with its status and conditions as
/// `crossplane render` shows it, the desired resources with the metadata Crossplane adds,
/// the context and the results) and `requirements.yaml`.
pub fn response_dump(req: &v1::RunFunctionRequest, rsp: &v1::RunFunctionResponse) -> String {
    let mut d = Dump::new("response");
    let comp = observed_composite(req);
    let comp_field = |path: &[&str]| comp.map(|c| field_str(c, path)).unwrap_or_default();
    let (api_version, kind) = (comp_field(&["apiVersion"]), comp_field(&["kind"]));
    let (name, namespace) = (
        comp_field(&["metadata", "name"]),
        comp_field(&["metadata", "namespace"]),
    );

    let desired = rsp.desired.as_ref();
    let mut xr = body_json(
        desired
            .and_then(|s| s.composite.as_ref())
            .and_then(|c| c.resource.as_ref()),
    );
    redact(&mut xr);
    let mut conditions = vec![object([
        ("type", string("Ready")),
        ("status", string("True")),
        ("reason", string("Available")),
        ("lastTransitionTime", string("2024-01-01T00:00:00Z")),
    ])];
    for c in &rsp.conditions {
        conditions.push(object([
            ("type", string(&c.r#type)),
            ("status", string(status_name(c.status))),
            ("message", c.message.as_deref().map_or(Json::Null, string)),
            ("reason", string(&c.reason)),
            ("lastTransitionTime", string("2024-01-01T00:00:00Z")),
        ]));
    }
    if let Json::Object(m) = &mut xr {
        m.insert("apiVersion".into(), string(api_version));
        m.insert("kind".into(), string(kind));
        let mut meta = vec![("name", string(name))];
        if !namespace.is_empty() {
            meta.push(("namespace", string(namespace)));
        }
        m.insert("metadata".into(), object(meta));
        match m.get_mut("status") {
            Some(Json::Object(s)) => {
                s.insert("conditions".into(), Json::Array(conditions));
            }
            _ => {
                m.insert(
                    "status".into(),
                    object([("conditions", Json::Array(conditions))]),
                );
            }
        }
    }
    d.file("rendered.yaml");
    d.doc(&xr, Some("returned composite status"));

    let mut oref = vec![
        ("apiVersion", string(api_version)),
        ("kind", string(kind)),
        ("name", string(name)),
        ("blockOwnerDeletion", Json::Bool(true)),
        ("controller", Json::Bool(true)),
        ("uid", string("")),
    ];
    if !namespace.is_empty() {
        oref.push(("namespace", string(namespace)));
    }
    let oref = Json::Array(vec![object(oref)]);
    let claim_name = comp_field(&["spec", "claimRef", "name"]);
    let claim_ns = comp_field(&["spec", "claimRef", "namespace"]);
    if let Some(state) = desired {
        let names: BTreeMap<_, _> = state.resources.iter().collect();
        for (rname, r) in names {
            let mut j = body_json(r.resource.as_ref());
            redact(&mut j);
            set_meta(&mut j, "", "generateName", string(&format!("{name}-")));
            set_meta(&mut j, "", "ownerReferences", oref.clone());
            set_meta(
                &mut j,
                "annotations",
                "crossplane.io/composition-resource-name",
                string(rname),
            );
            set_meta(&mut j, "labels", "crossplane.io/composite", string(name));
            if !claim_name.is_empty() {
                set_meta(
                    &mut j,
                    "labels",
                    "crossplane.io/claim-name",
                    string(claim_name),
                );
                set_meta(
                    &mut j,
                    "labels",
                    "crossplane.io/claim-namespace",
                    string(claim_ns),
                );
            }
            d.doc(&j, Some(&format!("desired object: {rname}")));
        }
    }

    let ctx = rsp
        .context
        .as_ref()
        .map_or(Json::Null, |c| body_json(Some(c)));
    d.doc(
        &object([
            ("apiVersion", string("render.crossplane.io/v1beta1")),
            ("kind", string("Context")),
            ("metadata", object([("name", string("context"))])),
            ("fields", ctx),
        ]),
        Some("context"),
    );
    for (i, r) in rsp.results.iter().enumerate() {
        let severity = v1::Severity::try_from(r.severity)
            .map(|s| s.as_str_name().to_string())
            .unwrap_or_else(|_| r.severity.to_string());
        d.doc(
            &object([
                ("apiVersion", string("render.crossplane.io/v1beta1")),
                ("kind", string("Result")),
                (
                    "metadata",
                    object([("name", string(&format!("result-{i}")))]),
                ),
                ("message", string(&r.message)),
                ("severity", Json::String(severity)),
                ("step", string("run hcl composition")),
            ]),
            Some("result"),
        );
    }

    if let Ok(j) = protojson::response_to_json(rsp)
        && let Some(reqs) = j.get("requirements")
        && !matches!(reqs, Json::Object(m) if m.is_empty())
    {
        d.file("requirements.yaml");
        d.doc(reqs, None);
    }
    d.finish("response")
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost_types::{Struct, Value};

    fn s(pairs: &[(&str, Value)]) -> Struct {
        Struct {
            fields: pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect(),
        }
    }
    fn st(x: &str) -> Value {
        Value {
            kind: Some(Kind::StringValue(x.into())),
        }
    }
    fn obj(pairs: &[(&str, Value)]) -> Value {
        Value {
            kind: Some(Kind::StructValue(s(pairs))),
        }
    }

    fn xr() -> Struct {
        s(&[
            ("apiVersion", st("example.com/v1")),
            ("kind", st("XS3Bucket")),
            (
                "metadata",
                obj(&[("name", st("bucket-36f7e")), ("uid", st("1234"))]),
            ),
            (
                "spec",
                obj(&[("parameters", obj(&[("region", st("eu-west-1"))]))]),
            ),
        ])
    }

    fn request() -> v1::RunFunctionRequest {
        let secret = s(&[
            ("apiVersion", st("v1")),
            ("kind", st("Secret")),
            ("metadata", obj(&[("name", st("creds"))])),
            ("data", obj(&[("password", st("c2VjcmV0LXB3"))])),
            ("stringData", obj(&[("token", st("plain-token"))])),
        ]);
        v1::RunFunctionRequest {
            observed: Some(v1::State {
                composite: Some(v1::Resource {
                    resource: Some(xr()),
                    connection_details: [("pw".to_string(), b"xr-conn-secret".to_vec())].into(),
                    ..Default::default()
                }),
                resources: [(
                    "the-secret".to_string(),
                    v1::Resource {
                        resource: Some(secret),
                        connection_details: [("k".to_string(), b"conn-secret".to_vec())].into(),
                        ..Default::default()
                    },
                )]
                .into(),
            }),
            context: Some(s(&[(
                "apiextensions.crossplane.io/environment",
                obj(&[("foo", st("bar"))]),
            )])),
            ..Default::default()
        }
    }

    #[test]
    fn request_dump_is_txtar_and_redacted() {
        let text = request_dump(&request());
        assert!(
            text.starts_with("## start request ##\n\n-- xr.yaml --\napiVersion: example.com/v1\n")
        );
        assert!(text.ends_with("\n## end request ##\n"));
        assert!(text.contains("-- observed.yaml --\n# crossplane name: the-secret\n"));
        assert!(text.contains(
            "-- context-apiextensions.crossplane.io--environment.json --\n{\n  \"foo\": \"bar\"\n}\n"
        ));
        assert!(!text.contains("uid: \"1234\""), "{text}");
        for secret in [
            "c2VjcmV0LXB3",
            "plain-token",
            "xr-conn-secret",
            "conn-secret",
        ] {
            assert!(!text.contains(secret), "{secret} leaked:\n{text}");
        }
        assert!(text.contains("password: REDACTED"));
        assert!(text.contains("token: REDACTED"));
    }

    #[test]
    fn response_dump_has_render_metadata() {
        let req = request();
        let mut rsp = crate::protocol::response::fatal_response(&req, "boom");
        {
            let d = rsp.desired.get_or_insert_with(Default::default);
            d.resources.insert(
                "my-bucket".into(),
                v1::Resource {
                    resource: Some(s(&[
                        ("apiVersion", st("s3.aws.upbound.io/v1beta1")),
                        ("kind", st("Bucket")),
                    ])),
                    connection_details: [("k".to_string(), b"desired-secret".to_vec())].into(),
                    ..Default::default()
                },
            );
        }
        let text = response_dump(&req, &rsp);
        assert!(text.starts_with(
            "## start response ##\n\n-- rendered.yaml --\n# returned composite status\napiVersion: example.com/v1\nkind: XS3Bucket\nmetadata:\n  name: bucket-36f7e\nstatus:\n  conditions:\n  - lastTransitionTime: \"2024-01-01T00:00:00Z\"\n"
        ), "{text}");
        assert!(text.contains("---\n# desired object: my-bucket\n"));
        assert!(text.contains("  generateName: bucket-36f7e-\n"));
        assert!(text.contains("    crossplane.io/composition-resource-name: my-bucket\n"));
        assert!(text.contains(
            "# result\napiVersion: render.crossplane.io/v1beta1\nkind: Result\nmessage: boom\n"
        ));
        assert!(text.contains("severity: SEVERITY_FATAL\n"));
        assert!(!text.contains("desired-secret"));
        assert!(text.ends_with("\n## end response ##\n"));
    }
}
