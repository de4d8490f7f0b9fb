//! `fn-hcl render`: what `crossplane render` prints for a Pipeline Composition whose steps
//! run function-hcl, with the function run in-process.
//!
//! It follows crossplane's render: the observed XR and composed resources (keyed by their
//! `crossplane.io/composition-resource-name` annotation) form the observed state, desired
//! state and context start empty, each step is called again while its requirements change
//! (at most 5 re-calls, extra resources matched among the `-e` objects by name or labels),
//! a Fatal result stops the render, and the output is the XR (desired status plus the
//! `Ready` condition render computes and the function's conditions), the composed
//! resources with the metadata Crossplane adds, one `Result` per non-fatal result, and the
//! `Context`.

use crate::protocol::doc::Json;
use crate::protocol::proto::v1;
use crate::protocol::protojson::{json_to_proto_value, json_to_struct, struct_to_json};
use std::collections::BTreeMap;
use std::path::Path;

pub use crate::protocol::observed::ANNOTATION_RESOURCE_NAME;
/// Label naming the XR a composed resource belongs to.
pub const LABEL_COMPOSITE: &str = "crossplane.io/composite";
/// Most re-calls of a step while its requirements change (Crossplane's limit).
pub const MAX_REQUIREMENTS_ITERATIONS: usize = 5;
/// The fixed `lastTransitionTime` render puts on conditions.
pub const RENDER_TIME: &str = "2024-01-01T00:00:00Z";
const RENDER_API_VERSION: &str = "render.crossplane.io/v1beta1";

/// Everything render reads, already parsed.
#[derive(Clone, Debug, Default)]
pub struct Inputs {
    /// The observed composite resource.
    pub xr: Json,
    /// The Composition (must be a Pipeline of HclInput steps).
    pub composition: Json,
    /// Function packages, if a functions file was given (step references are checked).
    pub functions: Option<Vec<Json>>,
    /// Observed composed resources.
    pub observed: Vec<Json>,
    /// Objects that can satisfy requirements.
    pub extra: Vec<Json>,
    /// Initial context values.
    pub context: BTreeMap<String, Json>,
}

/// One pipeline step to run.
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    pub name: String,
    pub function: String,
    pub input: Json,
}

/// Reads the YAML documents of a file (`-`: standard input), or of every
/// `.yaml`/`.yml`/`.json` file of a directory.
pub fn read_documents(path: &Path) -> Result<Vec<Json>, String> {
    if path.as_os_str() == "-" {
        let text = crate::cli::read_input("-")?;
        return crate::protocol::yaml::load_documents(&text)
            .map_err(|e| format!("cannot parse standard input: {e}"));
    }
    let files = if path.is_dir() {
        let mut v: Vec<_> = std::fs::read_dir(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                p.extension()
                    .and_then(|x| x.to_str())
                    .is_some_and(|x| matches!(x, "yaml" | "yml" | "json"))
            })
            .collect();
        v.sort();
        v
    } else {
        vec![path.to_path_buf()]
    };
    let mut docs = Vec::new();
    for f in files {
        let text =
            std::fs::read_to_string(&f).map_err(|e| format!("cannot read {}: {e}", f.display()))?;
        docs.extend(
            crate::protocol::yaml::load_documents(&text)
                .map_err(|e| format!("cannot parse {}: {e}", f.display()))?,
        );
    }
    Ok(docs)
}

/// Reads one object from a file (the first document).
pub fn read_object(path: &Path) -> Result<Json, String> {
    read_documents(path)?
        .into_iter()
        .next()
        .ok_or_else(|| format!("{}: no document found", shown(path)))
}

fn shown(path: &Path) -> String {
    crate::cli::input_name(&path.display().to_string()).to_string()
}

/// A document's kind as messages show it: `Composition (apiextensions.crossplane.io/v1)`.
fn kind_of(doc: &Json) -> (String, &str, &str) {
    let kind = path_str(doc, &["kind"]).unwrap_or("");
    let api = path_str(doc, &["apiVersion"]).unwrap_or("");
    let group = api.split_once('/').map_or("", |(g, _)| g);
    let shown = match (kind, api) {
        ("", _) => "a document without a kind".to_string(),
        (k, "") => format!("{k} (no apiVersion)"),
        (k, a) => format!("{k} ({a})"),
    };
    (shown, kind, group)
}

/// Checks that each argument holds the kind its position takes (`XR COMPOSITION
/// [FUNCTIONS]`), so that swapped or wrong files are named as such instead of failing
/// later with a message about a missing `spec.pipeline`.
pub fn check_kinds(
    inputs: &Inputs,
    xr_path: &Path,
    comp_path: &Path,
    fn_path: Option<&Path>,
) -> Result<(), String> {
    const XP: &str = "apiextensions.crossplane.io";
    const PKG: &str = "pkg.crossplane.io";
    let (comp_shown, comp_kind, comp_group) = kind_of(&inputs.composition);
    let (xr_shown, xr_kind, xr_group) = kind_of(&inputs.xr);
    let is_comp = |k: &str, g: &str| k == "Composition" && g == XP;
    if !is_comp(comp_kind, comp_group) {
        let hint = if is_comp(xr_kind, xr_group) {
            "; the arguments are XR COMPOSITION [FUNCTIONS]: are the first two swapped?"
        } else {
            ""
        };
        return Err(format!(
            "{}: expected a Composition ({XP}/v1), got {comp_shown}{hint}",
            shown(comp_path)
        ));
    }
    if xr_kind.is_empty()
        || path_str(&inputs.xr, &["apiVersion"]).is_none()
        || xr_group == XP
        || xr_group == PKG
    {
        return Err(format!(
            "{}: expected a composite resource (XR), got {xr_shown}",
            shown(xr_path)
        ));
    }
    if let (Some(fns), Some(p)) = (&inputs.functions, fn_path) {
        for f in fns {
            let (shown_f, kind, group) = kind_of(f);
            if kind != "Function" || group != PKG {
                return Err(format!(
                    "{}: expected Function packages ({PKG}/v1), got {shown_f}",
                    shown(p)
                ));
            }
        }
    }
    Ok(())
}

/// The pipeline steps of a Composition, checked: Pipeline mode, HclInput inputs, and
/// (when `functions` is given) functions that exist.
pub fn pipeline_steps(composition: &Json, functions: Option<&[Json]>) -> Result<Vec<Step>, String> {
    let name = path_str(composition, &["metadata", "name"]).unwrap_or("");
    let spec = composition
        .get("spec")
        .ok_or_else(|| format!("Composition {name:?} has no spec"))?;
    if let Some(mode) = spec.get("mode").and_then(Json::as_str)
        && mode != "Pipeline"
    {
        return Err(format!(
            "render only supports Composition Function pipelines: Composition {name:?} must use spec.mode: Pipeline"
        ));
    }
    let Some(Json::Array(steps)) = spec.get("pipeline") else {
        return Err(format!("Composition {name:?} has no spec.pipeline"));
    };
    let mut out = Vec::with_capacity(steps.len());
    for s in steps {
        let step = s
            .get("step")
            .and_then(Json::as_str)
            .unwrap_or("")
            .to_string();
        let function = path_str(s, &["functionRef", "name"])
            .unwrap_or("")
            .to_string();
        if let Some(fns) = functions {
            let known = fns
                .iter()
                .any(|f| path_str(f, &["metadata", "name"]) == Some(function.as_str()));
            if !known {
                return Err(format!(
                    "cannot run pipeline step {step:?}: unknown Function {function:?} - does it exist in your Functions file?"
                ));
            }
        }
        let input = s.get("input").cloned().unwrap_or(Json::Null);
        if input.get("kind").and_then(Json::as_str) != Some("HclInput") {
            return Err(format!(
                "pipeline step {step:?} runs function {function:?} whose input is not an HclInput: \
                 fn-hcl render can only run function-hcl steps"
            ));
        }
        out.push(Step {
            name: step,
            function,
            input,
        });
    }
    Ok(out)
}

fn path_str<'a>(j: &'a Json, path: &[&str]) -> Option<&'a str> {
    let mut cur = j;
    for p in path {
        cur = cur.get(p)?;
    }
    cur.as_str()
}

impl Inputs {
    /// The files `crossplane render` takes: XR, Composition, optional Function packages,
    /// observed resources and extra resources (files or directories of YAML).
    pub fn read(
        xr: &Path,
        composition: &Path,
        functions: Option<&Path>,
        observed: Option<&Path>,
        extra: Option<&Path>,
    ) -> Result<Inputs, String> {
        let inputs = Inputs {
            xr: read_object(xr)?,
            composition: read_object(composition)?,
            functions: functions.map(read_documents).transpose()?,
            observed: match observed {
                Some(p) => read_documents(p)?,
                None => Vec::new(),
            },
            extra: match extra {
                Some(p) => read_documents(p)?,
                None => Vec::new(),
            },
            ..Default::default()
        };
        check_kinds(&inputs, xr, composition, functions)?;
        Ok(inputs)
    }
}

/// Runs the pipeline with `run` as the function and returns the output documents.
pub fn render(
    inputs: &Inputs,
    run: &mut dyn FnMut(&v1::RunFunctionRequest) -> v1::RunFunctionResponse,
) -> Result<Vec<Json>, String> {
    let steps = pipeline_steps(&inputs.composition, inputs.functions.as_deref())?;
    let observed = crate::protocol::observed::observed_state(&inputs.xr, &inputs.observed)?;
    let observed_by_name: BTreeMap<String, &Json> = inputs
        .observed
        .iter()
        .map(|o| {
            (
                crate::protocol::observed::composition_resource_name(o).to_string(),
                o,
            )
        })
        .collect();

    let mut desired: Option<v1::State> = Some(v1::State::default());
    let mut context = Some(prost_types::Struct {
        fields: inputs
            .context
            .iter()
            .map(|(k, v)| Ok((k.clone(), json_to_proto_value(v)?)))
            .collect::<Result<_, String>>()?,
    });
    let mut results: Vec<Json> = Vec::new();
    let mut conditions: Vec<v1::Condition> = Vec::new();

    for step in &steps {
        let mut req = v1::RunFunctionRequest {
            observed: Some(observed.clone()),
            desired: desired.clone(),
            context: context.clone(),
            input: Some(json_to_struct(&step.input, "input")?),
            ..Default::default()
        };
        let rsp = run_with_requirements(&mut req, &inputs.extra, run)?;
        for r in &rsp.results {
            if r.severity == v1::Severity::Fatal as i32 {
                return Err(format!(
                    "pipeline step {:?} returned a fatal result: {}",
                    step.name, r.message
                ));
            }
            let mut doc = BTreeMap::new();
            doc.insert("apiVersion".into(), Json::String(RENDER_API_VERSION.into()));
            doc.insert("kind".into(), Json::String("Result".into()));
            doc.insert("step".into(), Json::String(step.name.clone()));
            doc.insert("severity".into(), Json::String(severity_name(r.severity)));
            doc.insert("message".into(), Json::String(r.message.clone()));
            results.push(Json::Object(doc));
        }
        conditions.extend(rsp.conditions.iter().cloned());
        desired = rsp.desired;
        context = rsp.context;
    }

    let desired = desired.unwrap_or_default();
    let mut docs = Vec::new();
    docs.push(xr_document(&inputs.xr, &desired, &conditions)?);
    let mut names: Vec<&String> = desired.resources.keys().collect();
    names.sort();
    for name in names {
        let r = &desired.resources[name];
        docs.push(composed_document(
            name,
            r,
            &inputs.xr,
            observed_by_name.get(name.as_str()).copied(),
        )?);
    }
    docs.extend(results);
    if let Some(c) = context {
        let mut doc = BTreeMap::new();
        doc.insert("apiVersion".into(), Json::String(RENDER_API_VERSION.into()));
        doc.insert("kind".into(), Json::String("Context".into()));
        let fields = if c.fields.is_empty() {
            Json::Null
        } else {
            struct_to_json(&c)?
        };
        doc.insert("fields".into(), fields);
        docs.push(Json::Object(doc));
    }
    Ok(docs)
}

/// Calls the function, then again while its requirements change (Crossplane's
/// FetchingFunctionRunner): at most [`MAX_REQUIREMENTS_ITERATIONS`] re-calls.
fn run_with_requirements(
    req: &mut v1::RunFunctionRequest,
    extra: &[Json],
    run: &mut dyn FnMut(&v1::RunFunctionRequest) -> v1::RunFunctionResponse,
) -> Result<v1::RunFunctionResponse, String> {
    let mut previous: Option<v1::Requirements> = None;
    for _ in 0..=MAX_REQUIREMENTS_ITERATIONS {
        let rsp = run(req);
        if rsp
            .results
            .iter()
            .any(|r| r.severity == v1::Severity::Fatal as i32)
        {
            return Ok(rsp);
        }
        let Some(reqs) = &rsp.requirements else {
            return Ok(rsp);
        };
        if previous.as_ref() == Some(reqs) {
            return Ok(rsp);
        }
        previous = Some(reqs.clone());
        req.extra_resources = reqs
            .extra_resources
            .iter()
            .map(|(name, sel)| Ok((name.clone(), fetch(extra, sel)?)))
            .collect::<Result<_, String>>()?;
        req.required_resources = reqs
            .resources
            .iter()
            .map(|(name, sel)| Ok((name.clone(), fetch(extra, sel)?)))
            .collect::<Result<_, String>>()?;
        req.context = rsp.context.clone();
    }
    Err(format!(
        "requirements didn't stabilize after the maximum number of iterations ({MAX_REQUIREMENTS_ITERATIONS})"
    ))
}

/// The extra resources matching a selector (crossplane render's FilteringFetcher).
fn fetch(extra: &[Json], sel: &v1::ResourceSelector) -> Result<v1::Resources, String> {
    use v1::resource_selector::Match;
    let mut out = v1::Resources::default();
    let match_name = match &sel.r#match {
        Some(Match::MatchName(n)) => n.as_str(),
        _ => "",
    };
    for er in extra {
        if path_str(er, &["apiVersion"]).unwrap_or("") != sel.api_version
            || path_str(er, &["kind"]).unwrap_or("") != sel.kind
        {
            continue;
        }
        let as_resource = |j: &Json| -> Result<v1::Resource, String> {
            Ok(v1::Resource {
                resource: Some(json_to_struct(j, "extra resource")?),
                ..Default::default()
            })
        };
        if match_name == path_str(er, &["metadata", "name"]).unwrap_or("") {
            out.items = vec![as_resource(er)?];
            return Ok(out);
        }
        if let Some(Match::MatchLabels(ml)) = &sel.r#match {
            let labels = er.get("metadata").and_then(|m| m.get("labels"));
            let matches = ml
                .labels
                .iter()
                .all(|(k, v)| labels.and_then(|l| l.get(k)).and_then(Json::as_str) == Some(v));
            if matches {
                out.items.push(as_resource(er)?);
            }
        }
    }
    Ok(out)
}

fn severity_name(s: i32) -> String {
    v1::Severity::try_from(s)
        .map(|e| e.as_str_name().to_string())
        .unwrap_or_else(|_| s.to_string())
}

fn condition_json(type_: &str, status: &str, reason: &str, message: &str) -> Json {
    let mut c = BTreeMap::new();
    c.insert("type".into(), Json::String(type_.into()));
    c.insert("status".into(), Json::String(status.into()));
    c.insert(
        "lastTransitionTime".into(),
        Json::String(RENDER_TIME.into()),
    );
    c.insert("reason".into(), Json::String(reason.into()));
    if !message.is_empty() {
        c.insert("message".into(), Json::String(message.into()));
    }
    Json::Object(c)
}

/// Crossplane's `SetConditions`: a condition replaces the one of the same type, or is appended.
fn set_condition(conds: &mut Vec<Json>, c: Json) {
    let t = c.get("type").cloned();
    match conds.iter_mut().find(|x| x.get("type").cloned() == t) {
        Some(slot) => *slot = c,
        None => conds.push(c),
    }
}

/// `a, b, c, and N more` (crossplane-runtime's `StableNAndSomeMore` with N = 3).
fn n_and_some_more(mut names: Vec<&str>) -> String {
    names.sort_unstable();
    if names.len() <= 3 {
        return names.join(", ");
    }
    format!("{}, and {} more", names[..3].join(", "), names.len() - 3)
}

fn xr_document(
    xr: &Json,
    desired: &v1::State,
    conditions: &[v1::Condition],
) -> Result<Json, String> {
    let mut doc = match desired.composite.as_ref().and_then(|c| c.resource.as_ref()) {
        Some(s) => match struct_to_json(s)? {
            Json::Object(m) => m,
            _ => BTreeMap::new(),
        },
        None => BTreeMap::new(),
    };
    for key in ["apiVersion", "kind"] {
        match xr.get(key) {
            Some(v) => doc.insert(key.into(), v.clone()),
            None => doc.remove(key),
        };
    }
    let meta = object_entry(&mut doc, "metadata");
    match path_str(xr, &["metadata", "name"]) {
        Some(n) if !n.is_empty() => {
            meta.insert("name".into(), Json::String(n.into()));
        }
        _ => {
            meta.remove("name");
        }
    }
    if meta.is_empty() {
        doc.remove("metadata");
    }

    let unready: Vec<&str> = desired
        .resources
        .iter()
        .filter(|(_, r)| r.ready != v1::Ready::True as i32)
        .map(|(k, _)| k.as_str())
        .collect();
    let ready = if unready.is_empty() {
        condition_json("Ready", "True", "Available", "")
    } else {
        condition_json(
            "Ready",
            "False",
            "Creating",
            &format!("Unready resources: {}", n_and_some_more(unready)),
        )
    };
    let status = object_entry(&mut doc, "status");
    let mut conds = match status.remove("conditions") {
        Some(Json::Array(a)) => a,
        _ => Vec::new(),
    };
    set_condition(&mut conds, ready);
    for c in conditions {
        let st = match v1::Status::try_from(c.status) {
            Ok(v1::Status::ConditionTrue) => "True",
            Ok(v1::Status::ConditionFalse) => "False",
            _ => "Unknown",
        };
        set_condition(
            &mut conds,
            condition_json(&c.r#type, st, &c.reason, c.message.as_deref().unwrap_or("")),
        );
    }
    status.insert("conditions".into(), Json::Array(conds));
    Ok(Json::Object(doc))
}

/// The object at `key`, created (or replacing a non-object) if needed.
fn object_entry<'a>(
    m: &'a mut BTreeMap<String, Json>,
    key: &str,
) -> &'a mut BTreeMap<String, Json> {
    let slot = m
        .entry(key.to_string())
        .or_insert_with(|| Json::Object(BTreeMap::new()));
    if !matches!(slot, Json::Object(_)) {
        *slot = Json::Object(BTreeMap::new());
    }
    match slot {
        Json::Object(o) => o,
        _ => unreachable!("slot was just made an object"),
    }
}

fn composed_document(
    name: &str,
    r: &v1::Resource,
    xr: &Json,
    observed: Option<&Json>,
) -> Result<Json, String> {
    let mut doc = match r.resource.as_ref() {
        Some(s) => match struct_to_json(s)? {
            Json::Object(m) => m,
            _ => BTreeMap::new(),
        },
        None => BTreeMap::new(),
    };
    let xr_name = path_str(xr, &["metadata", "name"])
        .unwrap_or("")
        .to_string();
    let meta = object_entry(&mut doc, "metadata");
    if let Some(o) = observed {
        for key in ["namespace", "name"] {
            match path_str(o, &["metadata", key]) {
                Some(v) if !v.is_empty() => {
                    meta.insert(key.into(), Json::String(v.into()));
                }
                _ => {
                    meta.remove(key);
                }
            }
        }
    }
    meta.insert("generateName".into(), Json::String(format!("{xr_name}-")));
    object_entry(meta, "annotations")
        .insert(ANNOTATION_RESOURCE_NAME.into(), Json::String(name.into()));
    let labels = object_entry(meta, "labels");
    labels.insert(LABEL_COMPOSITE.into(), Json::String(xr_name.clone()));
    let claim = xr.get("spec").and_then(|s| s.get("claimRef"));
    if let Some(c) = claim {
        for (label, key) in [
            ("crossplane.io/claim-namespace", "namespace"),
            ("crossplane.io/claim-name", "name"),
        ] {
            let v = c.get(key).and_then(Json::as_str).unwrap_or("");
            labels.insert(label.into(), Json::String(v.into()));
        }
    }
    let uid = path_str(xr, &["metadata", "uid"]).unwrap_or("").to_string();
    let mut owner = BTreeMap::new();
    owner.insert(
        "apiVersion".into(),
        Json::String(path_str(xr, &["apiVersion"]).unwrap_or("").into()),
    );
    owner.insert(
        "kind".into(),
        Json::String(path_str(xr, &["kind"]).unwrap_or("").into()),
    );
    owner.insert("name".into(), Json::String(xr_name.clone()));
    owner.insert("uid".into(), Json::String(uid.clone()));
    owner.insert("controller".into(), Json::Bool(true));
    owner.insert("blockOwnerDeletion".into(), Json::Bool(true));
    let refs = match meta.remove("ownerReferences") {
        Some(Json::Array(a)) => a,
        _ => Vec::new(),
    };
    if let Some(c) = refs
        .iter()
        .find(|r| r.get("controller") == Some(&Json::Bool(true)))
        && c.get("uid").and_then(Json::as_str).unwrap_or("") != uid
    {
        return Err(format!(
            "cannot render composed resource {name:?} metadata: cannot set composite resource {xr_name:?} as controller ref of composed resource: it is already controlled by {} {}",
            c.get("kind").and_then(Json::as_str).unwrap_or(""),
            c.get("name").and_then(Json::as_str).unwrap_or("")
        ));
    }
    let mut refs: Vec<Json> = refs
        .into_iter()
        .filter(|r| r.get("uid").and_then(Json::as_str).unwrap_or("") != uid)
        .collect();
    refs.push(Json::Object(owner));
    meta.insert("ownerReferences".into(), Json::Array(refs));
    Ok(Json::Object(doc))
}

/// The output documents as a multi-document YAML stream.
pub fn to_yaml(docs: &[Json]) -> String {
    let mut out = String::new();
    for d in docs {
        out.push_str("---\n");
        out.push_str(&crate::protocol::yaml::emit(d));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::doc::parse_json;
    use crate::protocol::response::{ResponseBuilder, value_to_struct};
    use crate::value::Value;

    fn j(s: &str) -> Json {
        parse_json(s).unwrap()
    }

    fn inputs() -> Inputs {
        Inputs {
            xr: j(
                r#"{"apiVersion":"example.com/v1","kind":"XB","metadata":{"name":"b-1"},"spec":{"x":1}}"#,
            ),
            composition: j(
                r#"{"apiVersion":"apiextensions.crossplane.io/v1","kind":"Composition",
                "metadata":{"name":"c"},"spec":{"mode":"Pipeline","pipeline":[
                {"step":"run hcl","functionRef":{"name":"fn-hcl"},
                 "input":{"apiVersion":"function-hcl/v1","kind":"HclInput","source":"Inline","hcl":"-- a --\n"}}]}}"#,
            ),
            functions: Some(vec![j(
                r#"{"kind":"Function","metadata":{"name":"fn-hcl"}}"#,
            )]),
            extra: vec![
                j(
                    r#"{"apiVersion":"v1","kind":"Cfg","metadata":{"name":"a","labels":{"foo":"bar"}}}"#,
                ),
                j(
                    r#"{"apiVersion":"v1","kind":"Cfg","metadata":{"name":"b","labels":{"foo":"baz"}}}"#,
                ),
            ],
            ..Default::default()
        }
    }

    /// A stand-in function: asks for `Cfg` objects labelled foo=bar, then composes one
    /// resource per extra resource it got.
    fn fake(req: &v1::RunFunctionRequest) -> v1::RunFunctionResponse {
        let mut b = ResponseBuilder::new(req);
        b.add_requirement(
            "cfg",
            v1::ResourceSelector {
                api_version: "v1".into(),
                kind: "Cfg".into(),
                r#match: Some(v1::resource_selector::Match::MatchLabels(v1::MatchLabels {
                    labels: [("foo".to_string(), "bar".to_string())]
                        .into_iter()
                        .collect(),
                })),
                namespace: None,
            },
        );
        let got = req.extra_resources.get("cfg").map_or(0, |r| r.items.len());
        for i in 0..got {
            let body = Value::object(vec![
                ("apiVersion".into(), Value::string("v1")),
                ("kind".into(), Value::string("ConfigMap")),
            ]);
            b.set_resource(&format!("cm-{i}"), value_to_struct(&body).unwrap());
        }
        b.set_context(
            "seen",
            crate::protocol::protojson::json_to_proto_value(&Json::Number(got as f64)).unwrap(),
        );
        b.add_resolved_without_warnings();
        b.finish()
    }

    #[test]
    fn renders_with_requirements_loop() {
        let mut calls = 0;
        let docs = render(&inputs(), &mut |r| {
            calls += 1;
            fake(r)
        })
        .unwrap();
        assert_eq!(calls, 2, "called again once, then requirements were stable");
        let text = to_yaml(&docs);
        let back = crate::protocol::yaml::load_documents(&text).unwrap();
        assert_eq!(back, docs);
        // XR, one composed resource, one result, the context
        assert_eq!(docs.len(), 4, "{text}");
        let conds = docs[0]
            .get("status")
            .and_then(|s| s.get("conditions"))
            .unwrap();
        let Json::Array(conds) = conds else { panic!() };
        assert_eq!(conds[0].get("type").unwrap().as_str(), Some("Ready"));
        assert_eq!(
            conds[0].get("message").unwrap().as_str(),
            Some("Unready resources: cm-0")
        );
        assert_eq!(
            conds[1].get("type").unwrap().as_str(),
            Some("FullyResolved")
        );
        let meta = docs[1].get("metadata").unwrap();
        assert_eq!(meta.get("generateName").unwrap().as_str(), Some("b-1-"));
        assert_eq!(
            meta.get("annotations")
                .unwrap()
                .get(ANNOTATION_RESOURCE_NAME)
                .unwrap()
                .as_str(),
            Some("cm-0")
        );
        assert_eq!(
            meta.get("labels")
                .unwrap()
                .get(LABEL_COMPOSITE)
                .unwrap()
                .as_str(),
            Some("b-1")
        );
        assert!(matches!(meta.get("ownerReferences"), Some(Json::Array(a)) if a.len() == 1));
        assert_eq!(docs[2].get("step").unwrap().as_str(), Some("run hcl"));
        assert_eq!(
            docs[2].get("severity").unwrap().as_str(),
            Some("SEVERITY_NORMAL")
        );
        assert_eq!(
            docs[3].get("fields").unwrap().get("seen"),
            Some(&Json::Number(1.0))
        );
    }

    #[test]
    fn unstable_requirements_fail_after_five_recalls() {
        let mut n = 0;
        let e = render(&inputs(), &mut |req| {
            n += 1;
            let mut b = ResponseBuilder::new(req);
            b.add_requirement(&format!("r{n}"), v1::ResourceSelector::default());
            b.finish()
        })
        .unwrap_err();
        assert_eq!(n, 6);
        assert!(e.contains("didn't stabilize"), "{e}");
    }

    #[test]
    fn fatal_results_and_foreign_steps_are_errors() {
        let e = render(&inputs(), &mut |req| {
            crate::protocol::response::fatal_response(req, "boom")
        })
        .unwrap_err();
        assert_eq!(e, "pipeline step \"run hcl\" returned a fatal result: boom");
        let mut i = inputs();
        i.composition = j(
            r#"{"spec":{"pipeline":[{"step":"s","functionRef":{"name":"fn-hcl"},"input":{"kind":"GoTemplate"}}]}}"#,
        );
        let e = render(&i, &mut fake).unwrap_err();
        assert!(e.contains("\"s\"") && e.contains("not an HclInput"), "{e}");
        let mut i = inputs();
        i.functions = Some(vec![]);
        let e = render(&i, &mut fake).unwrap_err();
        assert!(e.contains("unknown Function \"fn-hcl\""), "{e}");
    }

    #[test]
    fn names_and_more() {
        assert_eq!(n_and_some_more(vec!["b", "a"]), "a, b");
        assert_eq!(
            n_and_some_more(vec!["e", "d", "c", "b", "a"]),
            "a, b, c, and 2 more"
        );
    }
}
