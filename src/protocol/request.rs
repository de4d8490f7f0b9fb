//! The `req` variable: the RunFunctionRequest as the DSL sees it.
//!
//! The Go implementation builds `req` by marshalling a Go map to JSON and decoding it with
//! cty's JSON decoder, so JSON objects become cty objects, arrays become tuples and numbers
//! are parsed from the float64's shortest decimal text at 512-bit precision. This module
//! gives the same values without the JSON round trip: `google.protobuf.Struct` values go
//! straight to [`Value`]s.
//!
//! Shapes (from Go's `makeVars`): `req.context`, `req.composite`, `req.resource` and
//! `req.connection` and `req.extra_resources` are objects (empty when absent); a missing
//! connection-details map is `null` (Go marshals a nil map as JSON `null`), and so is an
//! extra resource with no items (a nil slice); `metadata.managedFields` is dropped from
//! every resource body; connection details are base64 strings (Go marshals `[]byte` that
//! way). Observed resources carrying the collection annotations are grouped, sorted by
//! index, into `req.resources`/`req.connections` and stay in `req.resource` too.

use crate::lower::reads::{Paths, Reads, WHOLE};
use crate::protocol::body_cache;
use crate::protocol::proto::v1;
use crate::protocol::raw::{RawBody, Rd, Role, skip};
use crate::protocol::{ANNOTATION_BASE_NAME, ANNOTATION_INDEX, MAX_DEPTH};
use crate::value::number::Number;
use crate::value::{Str, Value};
use base64::Engine as _;
use prost_types::value::Kind;
use std::collections::BTreeMap;
use std::fmt;

/// Why the request could not be turned into `req` (a Fatal error in Go's `makeVars`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RequestError {
    /// A number that JSON cannot hold (NaN or ±Inf): Go's `json: unsupported value: NaN`.
    UnsupportedNumber(String),
    /// Nesting deeper than [`MAX_DEPTH`].
    TooDeep,
    /// Observed annotations that are not a map of strings (Go: `get base collections`).
    BadAnnotations { resource: String, detail: String },
}

impl fmt::Display for RequestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestError::UnsupportedNumber(v) => {
                write!(f, "marshal variables to json: json: unsupported value: {v}")
            }
            RequestError::TooDeep => write!(
                f,
                "marshal variables to json: request data nested deeper than {MAX_DEPTH} levels"
            ),
            RequestError::BadAnnotations { resource, detail } => write!(
                f,
                "get base collections: accessing observed resource annotations: \
                 observed resource {resource:?}: {detail}"
            ),
        }
    }
}

impl std::error::Error for RequestError {}

/// The attribute names of the objects every request builds (`req`), allocated
/// once per process rather than once per request.
pub(crate) struct Keys {
    pub composite: Str,
    pub composite_connection: Str,
    pub connection: Str,
    pub connections: Str,
    pub context: Str,
    pub extra_resources: Str,
    pub resource: Str,
    pub resources: Str,
}

/// The shared [`Keys`].
pub(crate) fn keys() -> &'static Keys {
    static KEYS: std::sync::OnceLock<Keys> = std::sync::OnceLock::new();
    KEYS.get_or_init(|| Keys {
        composite: Str::from("composite"),
        composite_connection: Str::from("composite_connection"),
        connection: Str::from("connection"),
        connections: Str::from("connections"),
        context: Str::from("context"),
        extra_resources: Str::from("extra_resources"),
        resource: Str::from("resource"),
        resources: Str::from("resources"),
    })
}

/// The empty object (`{}`): one shared value (values are immutable), so the empty parts
/// of a request cost no allocation.
pub(crate) fn empty_object() -> Value {
    static EMPTY: std::sync::OnceLock<Value> = std::sync::OnceLock::new();
    EMPTY.get_or_init(|| Value::object(Vec::new())).clone()
}

/// `Value::object`, sharing the empty object.
fn object(entries: Vec<(Str, Value)>) -> Value {
    if entries.is_empty() {
        empty_object()
    } else {
        Value::object(entries)
    }
}

/// `Value::object_sorted`, sharing the empty object.
fn object_sorted(entries: Vec<(Str, Value)>) -> Value {
    if entries.is_empty() {
        empty_object()
    } else {
        Value::object_sorted(entries)
    }
}

/// One observed member of a collection.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CollectionMember {
    /// The composed resource name (the key in `observed.resources`).
    pub name: Str,
    /// The `collection-index` annotation (`""` when missing; it only affects sorting).
    pub index: Str,
    /// Where its entry is in `req.resource` and `req.connection` (sorted by name): found
    /// there without a search.
    pub at: usize,
}

/// The observed members of one collection, sorted by index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Collection {
    pub base_name: Str,
    pub members: Vec<CollectionMember>,
}

/// The request as the DSL's `req` sees it: the eight fields as values, plus the lookups the
/// evaluator needs (`self.resource`, collections, whether a resource is observed).
#[derive(Clone, Debug)]
pub struct Request {
    /// `req.context`: the pipeline context (an object; empty when absent).
    pub context: Value,
    /// `req.composite`: the observed XR body (an object; empty when absent).
    pub composite: Value,
    /// `req.composite_connection`: the XR's connection details (object of base64 strings, or null).
    pub composite_connection: Value,
    /// `req.resource`: observed bodies by composed resource name.
    pub resource: Value,
    /// `req.connection`: observed connection details by name (each an object or null).
    pub connection: Value,
    /// `req.resources`: collection base name → tuple of observed member bodies.
    pub resources: Value,
    /// `req.connections`: collection base name → tuple of member connection details.
    pub connections: Value,
    /// `req.extra_resources`: requirement name → tuple of bodies (null when none matched).
    pub extra_resources: Value,
    /// Collections found among the observed resources, sorted by base name.
    pub collections: Vec<Collection>,
    /// The observed bodies as the request carried them, when `resource` holds only the
    /// ones a program reads ([`Request::from_lazy`]); `None` when it holds them all.
    pub bodies: Option<std::sync::Arc<ObservedBodies>>,
}

impl Request {
    /// Builds `req` from a request. Fails only on data JSON cannot carry (NaN, ±Inf),
    /// nesting deeper than [`MAX_DEPTH`], or malformed collection annotations.
    pub fn from_proto(req: &v1::RunFunctionRequest) -> Result<Request, RequestError> {
        let context = context_value(req)?;
        let observed = req.observed.as_ref();
        let composite = resource_body(observed.and_then(|o| o.composite.as_ref()))?;

        let mut resource = Vec::new();
        let mut connection = Vec::new();
        let mut by_base: BTreeMap<Str, Vec<CollectionMember>> = BTreeMap::new();
        if let Some(o) = observed {
            // In name order, as the objects keep them (a member's `at`).
            let mut sorted: Vec<_> = o.resources.iter().collect();
            sorted.sort_unstable_by(|a, b| a.0.cmp(b.0));
            for (name, r) in sorted {
                let name: Str = Str::from(name.as_str());
                let body = resource_body(Some(r))?;
                if let Some((base, index)) = collection_annotations(&name, &body)? {
                    by_base.entry(base).or_default().push(CollectionMember {
                        name: name.clone(),
                        index,
                        at: resource.len(),
                    });
                }
                resource.push((name.clone(), body));
                connection.push((name, connection_value(Some(&r.connection_details))));
            }
        }
        let observed = Observed {
            resource: object_sorted(resource),
            connection: object_sorted(connection),
            by_base,
        };
        Request::assemble(req, context, composite, observed, None)
    }

    /// What both constructors share once the observed state is values: the XR's
    /// connection details, collections grouped by base, extra resources.
    fn assemble(
        env: &v1::RunFunctionRequest,
        context: Value,
        composite: Value,
        observed: Observed,
        bodies: Option<std::sync::Arc<ObservedBodies>>,
    ) -> Result<Request, RequestError> {
        let xr = env.observed.as_ref().and_then(|o| o.composite.as_ref());
        let composite_connection = connection_value(xr.map(|r| &r.connection_details));
        let Observed {
            resource,
            connection,
            by_base,
        } = observed;
        let (collections, coll_resources, coll_connections) =
            group_collections(by_base, &resource, &connection);
        let extra_resources = extra_resources_value(env)?;
        Ok(Request {
            context,
            composite,
            composite_connection,
            resource,
            connection,
            resources: object_sorted(coll_resources),
            connections: object_sorted(coll_connections),
            extra_resources,
            collections,
            bodies,
        })
    }

    /// The `req` object itself.
    pub fn to_value(&self) -> Value {
        let k = keys();
        Value::object_sorted(vec![
            (k.composite.clone(), self.composite.clone()),
            (
                k.composite_connection.clone(),
                self.composite_connection.clone(),
            ),
            (k.connection.clone(), self.connection.clone()),
            (k.connections.clone(), self.connections.clone()),
            (k.context.clone(), self.context.clone()),
            (k.extra_resources.clone(), self.extra_resources.clone()),
            (k.resource.clone(), self.resource.clone()),
            (k.resources.clone(), self.resources.clone()),
        ])
    }

    /// The observed body of the composed resource `name` (`self.resource`), if observed
    /// (decoded now when it was deferred).
    pub fn observed_resource(&self, name: &str) -> Option<Value> {
        match &self.bodies {
            Some(b) => b.get(&Str::from(name)),
            None => self.resource.get_attr(name).cloned(),
        }
    }

    /// The observed connection details of `name` (`self.connection`; null when it has none).
    pub fn observed_connection(&self, name: &str) -> Option<&Value> {
        self.connection.get_attr(name)
    }

    /// True if a composed resource of this name is in observed state (the safety rule:
    /// an observed resource must never be silently dropped).
    pub fn is_observed(&self, name: &str) -> bool {
        self.resource.get_attr(name).is_some()
    }

    /// Names of all observed composed resources, sorted.
    pub fn observed_names(&self) -> impl Iterator<Item = &str> {
        self.resource
            .as_fields()
            .unwrap_or(&[])
            .iter()
            .map(|(k, _)| &**k)
    }

    /// The observed members of the collection `base_name`.
    pub fn collection(&self, base_name: &str) -> Option<&Collection> {
        self.collections
            .binary_search_by(|c| (*c.base_name).cmp(base_name))
            .ok()
            .map(|i| &self.collections[i])
    }
}

/// Extra resources by requirement name: the deprecated `extra_resources` field (what
/// Crossplane fills for `requirements.extraResources`), completed by `required_resources`
/// for names only present there (newer Crossplane fills both).
fn merged_extra_resources(req: &v1::RunFunctionRequest) -> BTreeMap<&str, &[v1::Resource]> {
    let mut out: BTreeMap<&str, &[v1::Resource]> = BTreeMap::new();
    for (k, v) in &req.required_resources {
        out.insert(k, &v.items);
    }
    for (k, v) in &req.extra_resources {
        out.insert(k, &v.items);
    }
    out
}

/// Collections sorted by base name, their member bodies and connection details, from the
/// members found among the observed resources.
type Grouped = (Vec<Collection>, Vec<(Str, Value)>, Vec<(Str, Value)>);

/// `req.context`: the pipeline context (an empty object when absent).
fn context_value(req: &v1::RunFunctionRequest) -> Result<Value, RequestError> {
    match &req.context {
        Some(s) => struct_to_value(s),
        None => Ok(empty_object()),
    }
}

/// The observed composed resources as values (`req.resource`, `req.connection`) and the
/// collection members found among them.
struct Observed {
    resource: Value,
    connection: Value,
    by_base: BTreeMap<Str, Vec<CollectionMember>>,
}

fn group_collections(
    by_base: BTreeMap<Str, Vec<CollectionMember>>,
    resource: &Value,
    connection: &Value,
) -> Grouped {
    let mut collections = Vec::with_capacity(by_base.len());
    let mut coll_resources = Vec::with_capacity(by_base.len());
    let mut coll_connections = Vec::with_capacity(by_base.len());
    for (base_name, mut members) in by_base {
        members.sort_by(|a, b| a.index.cmp(&b.index).then_with(|| a.name.cmp(&b.name)));
        let bodies = members.iter().map(|m| member_entry(resource, m)).collect();
        let conns = members
            .iter()
            .map(|m| member_entry(connection, m))
            .collect();
        coll_resources.push((base_name.clone(), Value::tuple(bodies)));
        coll_connections.push((base_name.clone(), Value::tuple(conns)));
        collections.push(Collection { base_name, members });
    }
    (collections, coll_resources, coll_connections)
}

/// A collection member's entry in `req.resource` or `req.connection`: at its place (a
/// search among hundreds of names cost ~240 instructions), searched for by name should
/// the place hold another.
fn member_entry(observed: &Value, m: &CollectionMember) -> Value {
    match observed.as_fields().and_then(|f| f.get(m.at)) {
        Some((k, v)) if *k == m.name => v.clone(),
        _ => observed
            .get_attr_key(&m.name)
            .cloned()
            .unwrap_or(Value::NULL),
    }
}

/// `req.extra_resources`.
fn extra_resources_value(req: &v1::RunFunctionRequest) -> Result<Value, RequestError> {
    Ok(object(
        merged_extra_resources(req)
            .into_iter()
            .map(|(name, items)| {
                let v = if items.is_empty() {
                    Value::NULL
                } else {
                    Value::tuple(
                        items
                            .iter()
                            .map(|r| resource_body(Some(r)))
                            .collect::<Result<Vec<_>, _>>()?,
                    )
                };
                Ok((Str::from(name), v))
            })
            .collect::<Result<Vec<_>, RequestError>>()?,
    ))
}

/// A resource body as a value, without `metadata.managedFields`; `{}` when absent.
fn resource_body(r: Option<&v1::Resource>) -> Result<Value, RequestError> {
    struct_body(r.and_then(|r| r.resource.as_ref()))
}

/// A body `Struct` as a value, without `metadata.managedFields`; `{}` when absent.
fn struct_body(s: Option<&prost_types::Struct>) -> Result<Value, RequestError> {
    let Some(s) = s else {
        return Ok(empty_object());
    };
    let mut entries = Vec::with_capacity(s.fields.len());
    for (k, v) in &s.fields {
        let val = if k == "metadata" {
            match &v.kind {
                Some(Kind::StructValue(m)) => {
                    let mut me = Vec::with_capacity(m.fields.len());
                    for (mk, mv) in &m.fields {
                        if mk != "managedFields" {
                            me.push((Str::from(mk.as_str()), proto_value_at(mv, 2)?));
                        }
                    }
                    Value::object(me)
                }
                _ => proto_value_at(v, 1)?,
            }
        } else {
            proto_value_at(v, 1)?
        };
        entries.push((Str::from(k.as_str()), val));
    }
    Ok(Value::object(entries))
}

/// Connection details as an object of base64 strings, or null when there are none.
fn connection_value(details: Option<&BTreeMap<String, Vec<u8>>>) -> Value {
    match details {
        Some(d) if !d.is_empty() => Value::object(
            d.iter()
                .map(|(k, v)| {
                    (
                        Str::from(k.as_str()),
                        Value::string(base64::engine::general_purpose::STANDARD.encode(v)),
                    )
                })
                .collect(),
        ),
        _ => Value::NULL,
    }
}

/// The collection annotations of an observed body, if it names a base.
fn collection_annotations<'a>(
    name: &str,
    body: &'a Value,
) -> Result<Option<(Str, Str)>, RequestError> {
    let bad = |detail: String| RequestError::BadAnnotations {
        resource: name.to_string(),
        detail,
    };
    // The object at `path` (`.metadata`, ...) of `v`: `None` when absent.
    let object = |v: &'a Value, key: &str, path: &str| match v.get_attr(key) {
        None => Ok(None),
        Some(o @ Value::Object(_)) => Ok(Some(o)),
        Some(other) => Err(bad(format!(
            "{path} accessor error: {} is not an object",
            kind_name(other)
        ))),
    };
    let Some(meta) = object(body, "metadata", ".metadata")? else {
        return Ok(None);
    };
    let Some(ann) = object(meta, "annotations", ".metadata.annotations")? else {
        return Ok(None);
    };
    for (k, v) in ann.as_fields().unwrap_or(&[]) {
        if v.as_str().is_none() {
            return Err(bad(format!(
                ".metadata.annotations accessor error: contains non-string value in the map \
                 under key {k:?}: {} is not a string",
                kind_name(v)
            )));
        }
    }
    let base = ann.get_attr(ANNOTATION_BASE_NAME).and_then(Value::as_str);
    match base {
        None | Some("") => Ok(None),
        Some(b) => {
            let idx = ann
                .get_attr(ANNOTATION_INDEX)
                .and_then(Value::as_str)
                .unwrap_or("");
            Ok(Some((Str::from(b), Str::from(idx))))
        }
    }
}

fn kind_name(v: &Value) -> &'static str {
    match v {
        Value::Null(_) => "null",
        Value::Bool(_) => "a bool",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::List(_) | Value::Set(_) | Value::Tuple(_) => "a list",
        _ => "an object",
    }
}

/// A `google.protobuf.Struct` as a cty object value.
pub fn struct_to_value(s: &prost_types::Struct) -> Result<Value, RequestError> {
    struct_at(s, 1)
}

/// A `google.protobuf.Value` as a cty value (objects, tuples, numbers as cty parses JSON).
pub fn proto_value_to_value(v: &prost_types::Value) -> Result<Value, RequestError> {
    proto_value_at(v, 0)
}

fn struct_at(s: &prost_types::Struct, depth: usize) -> Result<Value, RequestError> {
    if depth > MAX_DEPTH {
        return Err(RequestError::TooDeep);
    }
    let mut entries = Vec::with_capacity(s.fields.len());
    for (k, v) in &s.fields {
        entries.push((Str::from(k.as_str()), proto_value_at(v, depth)?));
    }
    Ok(Value::object(entries))
}

fn proto_value_at(v: &prost_types::Value, depth: usize) -> Result<Value, RequestError> {
    Ok(match &v.kind {
        None | Some(Kind::NullValue(_)) => Value::NULL,
        Some(Kind::BoolValue(b)) => Value::Bool(*b),
        Some(Kind::StringValue(s)) => Value::string(s.as_str()),
        Some(Kind::NumberValue(n)) => Value::Number(number_from_json_f64(*n)?),
        Some(Kind::StructValue(s)) => struct_at(s, depth + 1)?,
        Some(Kind::ListValue(l)) => {
            if depth + 1 > MAX_DEPTH {
                return Err(RequestError::TooDeep);
            }
            let mut items = Vec::with_capacity(l.values.len());
            for x in &l.values {
                items.push(proto_value_at(x, depth + 1)?);
            }
            Value::tuple(items)
        }
    })
}

/// The cty number Go gets for a float64 that went through `encoding/json` and cty's JSON
/// decoder: the shortest decimal text of the float, parsed at 512 bits (so `0.1` is the
/// decimal 0.1, not the binary double). Integers up to 2^53 are exact either way.
pub fn number_from_json_f64(f: f64) -> Result<Number, RequestError> {
    if f.is_nan() {
        return Err(RequestError::UnsupportedNumber("NaN".into()));
    }
    if f.is_infinite() {
        let s = if f > 0.0 { "+Inf" } else { "-Inf" };
        return Err(RequestError::UnsupportedNumber(s.into()));
    }
    const EXACT: f64 = 9_007_199_254_740_992.0; // 2^53
    if f.fract() == 0.0 && f.abs() <= EXACT && !(f == 0.0 && f.is_sign_negative()) {
        // In range and integral, so the cast is exact.
        return Ok(Number::from_i64(f as i64));
    }
    let text = format!("{f:e}");
    Number::parse(&text).ok_or(RequestError::UnsupportedNumber(text))
}

// ---- Observed bodies turned into values from their bytes (see `crate::protocol::raw`) ----

/// The value of a body `raw::scan_body` accepted without marking it `exact`: the same value
/// `Request::from_proto` makes of it (`metadata.managedFields` dropped).
pub(crate) fn decode_body(bytes: &[u8]) -> Result<Value, RequestError> {
    decode_struct(bytes, Role::Root, 1, &WHOLE)
}

/// The value of `paths` of a body as [`decode_body`] makes it, for a program that reads
/// only those (`crate::lower::reads`): objects on the paths have every key, the attributes
/// no path reads are null.
pub(crate) fn decode_body_paths(bytes: &[u8], paths: &Paths) -> Result<Value, RequestError> {
    decode_struct(bytes, Role::Root, 1, paths)
}

fn decode_struct(b: &[u8], role: Role, depth: usize, paths: &Paths) -> Result<Value, RequestError> {
    if depth > MAX_DEPTH {
        return Err(RequestError::TooDeep);
    }
    let mut rd = Rd(b);
    let mut entries = Vec::new();
    // Bytes the scan accepted: reading them cannot fail.
    while let Ok(Some((key, value))) = rd.next_entry() {
        let child = match role {
            Role::Root if key == "metadata" => Role::Metadata,
            Role::Metadata if key == "managedFields" => continue,
            _ => Role::Plain,
        };
        let v = match paths.attr(key) {
            // A missing value (empty bytes) decodes as null.
            Some(p) => decode_value(value, child, depth, p)?,
            // Not read: a placeholder (the key stays, for hcl's suggestions).
            None => Value::NULL,
        };
        entries.push((Str::from(key), v));
    }
    Ok(Value::object(entries))
}

fn decode_value(b: &[u8], role: Role, depth: usize, paths: &Paths) -> Result<Value, RequestError> {
    let mut rd = Rd(b);
    let mut out = Value::NULL;
    while !rd.done() {
        let Ok((tag, wt)) = rd.key() else { break };
        out = match tag {
            1 => {
                let _ = rd.varint();
                Value::NULL
            }
            2 => {
                let mut a = [0u8; 8];
                if let Ok(raw) = rd.fixed(8) {
                    a.copy_from_slice(raw);
                }
                Value::Number(number_from_json_f64(f64::from_le_bytes(a))?)
            }
            3 => Value::string(rd.string().unwrap_or_default()),
            4 => Value::Bool(rd.varint().unwrap_or_default() != 0),
            5 => decode_struct(rd.bytes().unwrap_or_default(), role, depth + 1, paths)?,
            6 => {
                if depth + 1 > MAX_DEPTH {
                    return Err(RequestError::TooDeep);
                }
                let mut items = Vec::new();
                let mut lr = Rd(rd.bytes().unwrap_or_default());
                while !lr.done() {
                    let Ok((t, w)) = lr.key() else { break };
                    if t == 1 {
                        items.push(decode_value(
                            lr.bytes().unwrap_or_default(),
                            Role::Plain,
                            depth + 1,
                            &WHOLE,
                        )?);
                    } else if skip(&mut lr, w, t, u32::MAX).is_err() {
                        break;
                    }
                }
                Value::tuple(items)
            }
            _ => {
                if skip(&mut rd, wt, tag, u32::MAX).is_err() {
                    break;
                }
                continue;
            }
        };
    }
    Ok(out)
}

/// A body as a value, exactly as `Request::from_proto` makes it.
fn body_value(raw: &RawBody) -> Result<Value, RequestError> {
    if !raw.scan().exact {
        return body_cache::decoded(raw.digest(), &WHOLE, || decode_body(raw.bytes()));
    }
    // The scan accepted these bytes with a smaller budget than a fresh decode has.
    let s = raw.to_struct().ok().flatten();
    struct_body(s.as_ref())
}

/// [`decode_body_paths`] of a body the scan accepted, remembered by its bytes.
fn body_paths(raw: &RawBody, paths: &Paths) -> Result<Value, RequestError> {
    body_cache::decoded(raw.digest(), paths, || {
        decode_body_paths(raw.bytes(), paths)
    })
}

/// A body's collection annotations, as `collection_annotations` finds them (`value`: the
/// body converted already, for bodies the scan left to the exact path).
fn body_collection(
    raw: &RawBody,
    name: &str,
    value: Option<&Value>,
) -> Result<Option<(Str, Str)>, RequestError> {
    match value {
        Some(v) => collection_annotations(name, v),
        None => Ok(raw.scan().collection.clone()),
    }
}

/// The observed bodies of one request, decoded on first use (at most once each).
#[derive(Debug, Default)]
pub struct ObservedBodies {
    /// Sorted by name.
    entries: Vec<(Str, RawBody, std::sync::OnceLock<Value>)>,
}

impl ObservedBodies {
    /// Where the body of `name` is (names compared as [`Str`]s: two words each when
    /// inline, as the entries are ordered).
    fn index(&self, name: &Str) -> Option<usize> {
        self.entries.binary_search_by(|(n, _, _)| n.cmp(name)).ok()
    }

    /// The body of `name` as a value (decoded now if it was not yet), if observed.
    pub fn get(&self, name: &Str) -> Option<Value> {
        self.get_at(self.index(name)?)
    }

    /// [`ObservedBodies::get`] of the body at `i` in name order.
    fn get_at(&self, i: usize) -> Option<Value> {
        let (_, raw, cell) = self.entries.get(i)?;
        // The scan ruled out every error for bodies it did not mark exact, and exact ones
        // were converted (and their errors reported) while building the request.
        Some(
            cell.get_or_init(|| body_value(raw).unwrap_or_default())
                .clone(),
        )
    }

    /// The body of `name` for a reader of `paths` only (see [`decode_body_paths`]): the
    /// whole value when it was decoded already, when `paths` is whole or when the scan
    /// left the body to the exact path; otherwise only those paths, decoded now and not
    /// kept (a body is read this way once per request, by its own resource block).
    pub fn get_paths(&self, name: &Str, paths: &Paths) -> Option<Value> {
        self.get_paths_at(self.index(name)?, paths)
    }

    /// [`ObservedBodies::get_paths`] of the body at `i` in name order.
    fn get_paths_at(&self, i: usize, paths: &Paths) -> Option<Value> {
        let (_, raw, cell) = self.entries.get(i)?;
        if let Some(v) = cell.get() {
            return Some(v.clone());
        }
        if *paths == Paths::Whole || raw.scan().exact {
            return self.get_at(i);
        }
        Some(body_paths(raw, paths).unwrap_or_default())
    }

    /// How many bodies have been turned into values so far (for tests and benchmarks).
    pub fn decoded(&self) -> usize {
        self.entries
            .iter()
            .filter(|(_, _, c)| c.get().is_some())
            .count()
    }
}

impl Request {
    /// Builds `req` from a request whose observed bodies are still bytes, turning into
    /// values only the bodies the program `reads`; the others are placeholders (null) that the
    /// program cannot reach, and [`Request::bodies`] decodes any of them on demand. The
    /// outcome (values read, errors) is `from_proto`'s for the same request.
    pub fn from_lazy(
        req: &crate::protocol::proto::LazyRequest,
        reads: &Reads,
    ) -> Result<Request, RequestError> {
        let env = &req.envelope;
        let context = context_value(env)?;
        let observed = env.observed.as_ref();
        let composite = if req.composite.is_present() {
            // Only what the program reads of the XR, as for observed bodies; the scan
            // leaves a body it cannot vouch for (NaN, too deep, repeated fields) to the
            // exact path, whose errors are Go's whatever the program reads.
            match reads.composite_paths() {
                _ if req.composite.scan().exact => body_value(&req.composite)?,
                Some(Paths::Whole) => body_value(&req.composite)?,
                Some(paths) => body_paths(&req.composite, paths)?,
                None => empty_object(),
            }
        } else {
            resource_body(observed.and_then(|o| o.composite.as_ref()))?
        };

        let n = req.bodies.len();
        let mut entries: Vec<(Str, RawBody, std::sync::OnceLock<Value>)> = Vec::with_capacity(n);
        let mut by_base: BTreeMap<Str, Vec<CollectionMember>> = BTreeMap::new();
        // The collection each body belongs to (by position in `entries`).
        let mut member_of: Vec<Option<Str>> = Vec::with_capacity(n);
        for (name, raw) in &req.bodies {
            let cell = std::sync::OnceLock::new();
            let exact = if raw.scan().exact {
                Some(body_value(raw)?)
            } else {
                None
            };
            let base = match body_collection(raw, name, exact.as_ref())? {
                Some((base, index)) => {
                    by_base
                        .entry(base.clone())
                        .or_default()
                        .push(CollectionMember {
                            name: name.clone(),
                            index,
                            at: entries.len(),
                        });
                    Some(base)
                }
                None => None,
            };
            member_of.push(base);
            if let Some(v) = exact {
                let _ = cell.set(v);
            }
            entries.push((name.clone(), raw.clone(), cell));
        }
        let bodies = ObservedBodies { entries };

        let all = reads.all;
        let mut resource = Vec::with_capacity(n);
        let mut connection = Vec::with_capacity(n);
        // Looked up by name only when some resource has connection details (a hashed
        // lookup for every body cost ~210 instructions; most resources have none).
        let conns = observed
            .map(|o| &o.resources)
            .filter(|r| r.values().any(|r| !r.connection_details.is_empty()));
        // The bodies are read by their place: they are in name order, as `resource` is.
        for (i, ((name, _, _), base)) in bodies.entries.iter().zip(&member_of).enumerate() {
            let body = if all || base.as_ref().is_some_and(|b| reads.base(b)) {
                bodies.get_at(i).unwrap_or_default()
            } else if let Some(paths) = reads.body_paths(name) {
                bodies.get_paths_at(i, paths).unwrap_or_default()
            } else {
                Value::NULL
            };
            resource.push((name.clone(), body));
            let details = conns
                .and_then(|c| c.get(&**name))
                .map(|r| &r.connection_details);
            connection.push((name.clone(), connection_value(details)));
        }
        let observed = Observed {
            resource: object_sorted(resource),
            connection: object_sorted(connection),
            by_base,
        };
        // With no observed resources there is nothing to defer.
        let bodies = (!bodies.entries.is_empty()).then(|| std::sync::Arc::new(bodies));
        Request::assemble(env, context, composite, observed, bodies)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost_types::{ListValue, Struct};

    /// A member's entry is taken at its place, and found by name when the place holds
    /// another (or nothing): the place only saves the search.
    #[test]
    fn member_entry_at_its_place_or_by_name() {
        let observed = object_sorted(vec![
            ("a".into(), Value::int(1)),
            ("b".into(), Value::int(2)),
        ]);
        let member = |name: &str, at| CollectionMember {
            name: name.into(),
            index: Str::default(),
            at,
        };
        let found = |name, at| member_entry(&observed, &member(name, at));
        assert!(found("b", 1).raw_equals(&Value::int(2)));
        assert!(found("b", 0).raw_equals(&Value::int(2)));
        assert!(found("a", 9).raw_equals(&Value::int(1)));
        assert!(found("c", 1).is_null());
    }

    fn sv(s: &str) -> prost_types::Value {
        prost_types::Value {
            kind: Some(Kind::StringValue(s.into())),
        }
    }
    fn nv(n: f64) -> prost_types::Value {
        prost_types::Value {
            kind: Some(Kind::NumberValue(n)),
        }
    }
    fn obj(entries: Vec<(&str, prost_types::Value)>) -> Struct {
        Struct {
            fields: entries
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
        }
    }
    fn ov(entries: Vec<(&str, prost_types::Value)>) -> prost_types::Value {
        prost_types::Value {
            kind: Some(Kind::StructValue(obj(entries))),
        }
    }
    fn res(s: Struct) -> v1::Resource {
        v1::Resource {
            resource: Some(s),
            ..Default::default()
        }
    }

    #[test]
    fn empty_request_shapes() {
        let r = Request::from_proto(&v1::RunFunctionRequest::default()).unwrap();
        let req = r.to_value();
        for k in [
            "context",
            "composite",
            "resource",
            "connection",
            "resources",
            "connections",
            "extra_resources",
        ] {
            assert_eq!(req.get_attr(k).and_then(Value::length), Some(0), "{k}");
        }
        assert!(req.get_attr("composite_connection").unwrap().is_null());
        assert_eq!(req.length(), Some(8));
    }

    #[test]
    fn numbers_and_lists() {
        let s = obj(vec![
            ("i", nv(42.0)),
            ("f", nv(0.5)),
            (
                "l",
                prost_types::Value {
                    kind: Some(Kind::ListValue(ListValue {
                        values: vec![nv(1.0), sv("a")],
                    })),
                },
            ),
        ]);
        let v = struct_to_value(&s).unwrap();
        assert_eq!(v.get_attr("i").unwrap().as_number().unwrap().to_f64(), 42.0);
        assert_eq!(v.get_attr("f").unwrap().as_number().unwrap().to_f64(), 0.5);
        let l = v.get_attr("l").unwrap();
        assert!(matches!(l, Value::Tuple(_)));
        assert_eq!(l.length(), Some(2));
        // 0.1 arrives as the decimal 0.1 text, which round-trips to the same double.
        assert_eq!(number_from_json_f64(0.1).unwrap().to_f64(), 0.1);
        assert_eq!(number_from_json_f64(1e300).unwrap().to_f64(), 1e300);
    }

    #[test]
    fn nan_and_inf_are_errors() {
        let e = struct_to_value(&obj(vec![("x", nv(f64::NAN))])).unwrap_err();
        assert_eq!(
            e.to_string(),
            "marshal variables to json: json: unsupported value: NaN"
        );
        let e = number_from_json_f64(f64::NEG_INFINITY).unwrap_err();
        assert_eq!(
            e.to_string(),
            "marshal variables to json: json: unsupported value: -Inf"
        );
    }

    #[test]
    fn deep_nesting_is_bounded() {
        let mut v = nv(1.0);
        for _ in 0..(MAX_DEPTH + 10) {
            v = prost_types::Value {
                kind: Some(Kind::ListValue(ListValue { values: vec![v] })),
            };
        }
        assert_eq!(proto_value_to_value(&v).unwrap_err(), RequestError::TooDeep);
        // Dropping this deep value is fine at this depth; deeper ones never get built by us.
    }

    #[test]
    fn observed_collections_and_managed_fields() {
        let member = |idx: &str| {
            res(obj(vec![
                ("kind", sv("Bucket")),
                (
                    "metadata",
                    ov(vec![
                        (
                            "annotations",
                            ov(vec![
                                (ANNOTATION_BASE_NAME, sv("bkt")),
                                (ANNOTATION_INDEX, sv(idx)),
                            ]),
                        ),
                        ("managedFields", sv("junk")),
                    ]),
                ),
            ]))
        };
        let mut observed = v1::State::default();
        observed.resources.insert("bkt-1".into(), member("s000001"));
        let mut m0 = member("s000000");
        m0.connection_details.insert("pw".into(), b"hi".to_vec());
        observed.resources.insert("bkt-0".into(), m0);
        observed
            .resources
            .insert("plain".into(), res(obj(vec![("kind", sv("X"))])));
        let req = v1::RunFunctionRequest {
            observed: Some(observed),
            ..Default::default()
        };
        let r = Request::from_proto(&req).unwrap();
        let c = r.collection("bkt").unwrap();
        let names: Vec<&str> = c.members.iter().map(|m| &*m.name).collect();
        assert_eq!(names, ["bkt-0", "bkt-1"]);
        let bodies = r.resources.get_attr("bkt").unwrap().as_seq().unwrap();
        assert_eq!(bodies.len(), 2);
        let conns = r.connections.get_attr("bkt").unwrap().as_seq().unwrap();
        assert_eq!(conns[0].get_attr("pw").unwrap().as_str(), Some("aGk="));
        assert!(conns[1].is_null());
        // members stay in req.resource; managedFields is gone
        let b0 = r.observed_resource("bkt-0").unwrap();
        assert!(
            b0.get_attr("metadata")
                .unwrap()
                .get_attr("managedFields")
                .is_none()
        );
        assert!(r.is_observed("plain"));
        assert_eq!(
            r.observed_names().collect::<Vec<_>>(),
            ["bkt-0", "bkt-1", "plain"]
        );
        assert!(r.observed_connection("plain").unwrap().is_null());
    }

    #[test]
    fn extra_resources_null_when_empty() {
        let mut req = v1::RunFunctionRequest::default();
        req.extra_resources
            .insert("none".into(), v1::Resources { items: vec![] });
        req.required_resources.insert(
            "some".into(),
            v1::Resources {
                items: vec![res(obj(vec![("kind", sv("Cfg"))]))],
            },
        );
        let r = Request::from_proto(&req).unwrap();
        assert!(r.extra_resources.get_attr("none").unwrap().is_null());
        assert_eq!(
            r.extra_resources.get_attr("some").unwrap().length(),
            Some(1)
        );
    }

    /// Random bodies (keys that matter to the eager path included, edge-case numbers,
    /// strings that are not NFC): the scan plus the direct decoder give exactly the eager
    /// conversion's value or error, and the same collection annotations.
    #[test]
    fn direct_decoder_matches_the_eager_conversion() {
        use prost::Message as _;
        const KEYS: [&str; 8] = [
            "metadata",
            "annotations",
            "managedFields",
            ANNOTATION_BASE_NAME,
            ANNOTATION_INDEX,
            "spec",
            "e\u{301}",
            "",
        ];
        const NUMS: [f64; 12] = [
            0.0,
            -0.0,
            0.1,
            1e300,
            5e-324,
            9_007_199_254_740_993.0,
            -42.0,
            1.5,
            f64::MAX,
            f64::NAN,
            f64::INFINITY,
            123_456.789,
        ];
        let mut rng = crate::text::Xorshift(0x2545_f491_4f6c_dd1d);
        let mut rnd = move |n: u64| rng.below(n);
        fn gen_value(rnd: &mut dyn FnMut(u64) -> u64, depth: u32) -> prost_types::Value {
            let k = if depth > 4 { rnd(5) } else { rnd(8) };
            let kind = match k {
                0 => None,
                1 => Some(Kind::NullValue(0)),
                2 => Some(Kind::BoolValue(rnd(2) == 0)),
                3 => Some(Kind::NumberValue(if rnd(12) == 0 {
                    NUMS[rnd(12) as usize]
                } else {
                    NUMS[rnd(9) as usize]
                })),
                4 => Some(Kind::StringValue(
                    ["s000001", "web", "", "e\u{301}", "x"][rnd(5) as usize].into(),
                )),
                5 | 6 => Some(Kind::StructValue(gen_struct(rnd, depth + 1))),
                _ => Some(Kind::ListValue(prost_types::ListValue {
                    values: (0..rnd(3)).map(|_| gen_value(rnd, depth + 1)).collect(),
                })),
            };
            prost_types::Value { kind }
        }
        fn gen_struct(rnd: &mut dyn FnMut(u64) -> u64, depth: u32) -> Struct {
            Struct {
                fields: (0..rnd(5))
                    .map(|_| (KEYS[rnd(8) as usize].to_string(), gen_value(rnd, depth)))
                    .collect(),
            }
        }
        let (mut exact, mut regular, mut members) = (0, 0, 0);
        for i in 0..3000 {
            let mut s = gen_struct(&mut rnd, 0);
            if i % 3 == 0 {
                // A likely collection member: string annotations, sometimes one that is not.
                let sv = |v: &str| prost_types::Value {
                    kind: Some(Kind::StringValue(v.into())),
                };
                let mut ann = gen_struct(&mut rnd, 3);
                ann.fields
                    .retain(|_, v| rnd(8) == 0 || matches!(v.kind, Some(Kind::StringValue(_))));
                ann.fields.insert(
                    ANNOTATION_BASE_NAME.into(),
                    sv(["web", "", "e\u{301}"][rnd(3) as usize]),
                );
                if rnd(3) > 0 {
                    ann.fields.insert(ANNOTATION_INDEX.into(), sv("s000002"));
                }
                let mut meta = gen_struct(&mut rnd, 2);
                meta.fields.insert(
                    "annotations".into(),
                    prost_types::Value {
                        kind: Some(Kind::StructValue(ann)),
                    },
                );
                s.fields.insert(
                    "metadata".into(),
                    prost_types::Value {
                        kind: Some(Kind::StructValue(meta)),
                    },
                );
            }
            let bytes = s.encode_to_vec();
            let eager = struct_body(Some(&s));
            let mut raw = RawBody::default();
            raw.push(bytes.into(), crate::protocol::raw::BODY_BUDGET)
                .expect("valid bytes");
            if raw.scan().exact {
                exact += 1;
            } else {
                regular += 1;
            }
            let lazy = body_value(&raw);
            assert_eq!(format!("{lazy:?}"), format!("{eager:?}"), "case {i}: {s:?}");
            if let Ok(v) = &eager {
                let want = collection_annotations("n", v);
                let exact_value = raw.scan().exact.then(|| v.clone());
                let got = body_collection(&raw, "n", exact_value.as_ref());
                assert_eq!(got, want, "case {i}: {s:?}");
                members += usize::from(matches!(want, Ok(Some(_))));
            }
        }
        assert!(
            exact > 100 && regular > 100,
            "{exact} exact, {regular} regular"
        );
        assert!(members > 0, "no collection member generated");
    }

    #[test]
    fn bad_annotations_are_errors() {
        let mut observed = v1::State::default();
        observed.resources.insert(
            "x".into(),
            res(obj(vec![(
                "metadata",
                ov(vec![("annotations", ov(vec![("a", nv(1.0))]))]),
            )])),
        );
        let req = v1::RunFunctionRequest {
            observed: Some(observed),
            ..Default::default()
        };
        let e = Request::from_proto(&req).unwrap_err();
        assert!(e.to_string().starts_with("get base collections: "), "{e}");
    }
}
