//! Building the RunFunctionResponse: value → `google.protobuf.Struct` conversion and a
//! [`ResponseBuilder`] that starts from the request (as function-sdk-go's `response.To`
//! does) and takes what the evaluator produces.
//!
//! Values leave the program the way Go's `ctyjson.Marshal` + `json.Unmarshal` send them:
//! objects and maps become Structs, lists, sets and tuples become lists, numbers become
//! the float64 Go's JSON decoder reads from cty's decimal text ([`json_f64`]), and an
//! infinity is the error `cannot serialize infinity as JSON`.
//!
//! The program's resource bodies (most of a response's bytes) are not converted to prost
//! messages on the server's path: the builder keeps them as values, checks them when they
//! are set (the same errors [`value_to_struct`] gives), and
//! their protobuf bytes are written when they are set, in one walk of each value (back to
//! front, so every length is known when it is written: [`Backward`]), and
//! [`ResponseBuilder::finish_encoded`] copies them into one buffer of the exact size.

use crate::protocol::MAX_DEPTH;
use crate::protocol::proto::v1;
use crate::syntax::diag::Text;
use crate::text::words::copy_short;
use crate::value::Value;
use prost_types::value::Kind;
use std::collections::HashMap;
use std::fmt;

/// The float64 a number becomes when it leaves the program. Go marshals the cty number as
/// its shortest decimal text at the number's own precision and `json.Unmarshal` parses that
/// text, so the result is the double nearest to the text, which can differ from the double
/// nearest to the exact value (`pow(2, 64)` leaves as 18446744073709549568, not 2^64).
/// Integers that fit a double exactly take the fast path.
pub fn json_f64(n: &crate::value::number::Number) -> f64 {
    if let Some(i) = n.to_i64()
        && i.unsigned_abs() <= (1u64 << 53)
    {
        return i as f64;
    }
    n.to_cty_string()
        .parse::<f64>()
        .unwrap_or_else(|_| n.to_f64())
}

/// The TTL Crossplane may cache a response for (function-sdk-go's `DefaultTTL`).
pub const DEFAULT_TTL_SECONDS: i64 = 60;

/// A value that cannot leave the program as protobuf/JSON data.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ValueError {
    /// ±Inf (cty's JSON marshaller refuses it).
    Infinity,
    /// A finite number beyond float64 range (Go's `json.Unmarshal` refuses it); holds its text.
    OutOfRange(String),
    /// An unknown value (only a compiler bug could send one out).
    Unknown,
    /// Nesting deeper than [`MAX_DEPTH`].
    TooDeep,
    /// The top-level value must be an object (resource bodies, status).
    NotAnObject(String),
}

impl fmt::Display for ValueError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ValueError::Infinity => f.write_str("cannot serialize infinity as JSON"),
            ValueError::OutOfRange(text) => write!(
                f,
                "json: cannot unmarshal number {text} into Go value of type float64"
            ),
            ValueError::Unknown => f.write_str("value is not known"),
            ValueError::TooDeep => write!(f, "value nested deeper than {MAX_DEPTH} levels"),
            ValueError::NotAnObject(t) => write!(f, "expected an object, got {t}"),
        }
    }
}

impl std::error::Error for ValueError {}

/// A value as a `google.protobuf.Value`.
pub fn value_to_proto(v: &Value) -> Result<prost_types::Value, ValueError> {
    to_proto_at(v, 0, MAX_DEPTH)
}

/// [`value_to_proto`] with its own bound on nesting: trees the program built (status,
/// context) have no bound but the evaluation's budgets (`usize::MAX`).
pub fn value_to_proto_within(
    v: &Value,
    max_depth: usize,
) -> Result<prost_types::Value, ValueError> {
    to_proto_at(v, 0, max_depth)
}

/// An object or map value as a `google.protobuf.Struct` (resource bodies, status, context).
pub fn value_to_struct(v: &Value) -> Result<prost_types::Struct, ValueError> {
    match v {
        Value::Object(f) | Value::Map(f) => fields_to_struct(&f.entries, 1, MAX_DEPTH),
        Value::Unknown(_) => Err(ValueError::Unknown),
        other => Err(ValueError::NotAnObject(other.type_of().friendly_name())),
    }
}

fn fields_to_struct(
    entries: &[(crate::value::Str, Value)],
    depth: usize,
    max: usize,
) -> Result<prost_types::Struct, ValueError> {
    if depth > max {
        return Err(ValueError::TooDeep);
    }
    let mut fields = std::collections::BTreeMap::new();
    for (k, x) in entries {
        fields.insert(k.to_string(), to_proto_at(x, depth, max)?);
    }
    Ok(prost_types::Struct { fields })
}

/// A number as the float64 of a `google.protobuf.Value`: an infinity, or a number past
/// float64's range, is an error.
#[inline]
pub(crate) fn proto_number(n: &crate::value::number::Number) -> Result<f64, ValueError> {
    if n.is_infinite() {
        return Err(ValueError::Infinity);
    }
    let f = json_f64(n);
    if f.is_infinite() {
        return Err(ValueError::OutOfRange(n.to_cty_string()));
    }
    Ok(f)
}

fn to_proto_at(v: &Value, depth: usize, max: usize) -> Result<prost_types::Value, ValueError> {
    let kind = match v {
        Value::Unknown(_) => return Err(ValueError::Unknown),
        Value::Null(_) => Kind::NullValue(0),
        Value::Bool(b) => Kind::BoolValue(*b),
        Value::String(s) => Kind::StringValue(s.to_string()),
        Value::Number(n) => Kind::NumberValue(proto_number(n)?),
        Value::List(s) | Value::Set(s) | Value::Tuple(s) => {
            if depth + 1 > max {
                return Err(ValueError::TooDeep);
            }
            let mut values = Vec::with_capacity(s.items.len());
            for x in &s.items {
                values.push(to_proto_at(x, depth + 1, max)?);
            }
            Kind::ListValue(prost_types::ListValue { values })
        }
        Value::Map(f) | Value::Object(f) => {
            Kind::StructValue(fields_to_struct(&f.entries, depth + 1, max)?)
        }
    };
    Ok(prost_types::Value { kind: Some(kind) })
}

/// Deep-merges `add` into `base`: objects merge key by key, anything else in `add` wins.
/// (This step's composite status over the status of earlier pipeline steps.)
pub fn merge_struct(base: &mut prost_types::Struct, add: prost_types::Struct) {
    for (k, v) in add.fields {
        match (base.fields.get_mut(&k), v) {
            (
                Some(prost_types::Value {
                    kind: Some(Kind::StructValue(b)),
                }),
                prost_types::Value {
                    kind: Some(Kind::StructValue(a)),
                },
            ) => merge_struct(b, a),
            (_, v) => {
                base.fields.insert(k, v);
            }
        }
    }
}

/// A result or condition severity/status, re-exported under clear names for the evaluator.
pub use v1::{Ready, Severity, Status, Target};

/// Builds the RunFunctionResponse of one call.
///
/// It starts as function-sdk-go's `response.To(req, DefaultTTL)`: `meta.tag` echoed, TTL
/// 60s, the request's desired state and context echoed. The evaluator then adds what the
/// program produced. The program's resource bodies are written as protobuf bytes when
/// they are set, straight from the VM values, which the caller then drops
/// ([`ResponseBuilder::set_resource_value`]); the response is either a message
/// ([`ResponseBuilder::finish`]: the CLI, render, debug output; those bytes decoded) or
/// its protobuf bytes ([`ResponseBuilder::finish_encoded`]: the server), so the hot path
/// builds no intermediate protobuf tree.
#[derive(Clone, Debug)]
pub struct ResponseBuilder {
    /// Everything but the program's resource bodies (the request's desired resources a
    /// program body replaced are removed from `desired.resources`).
    rsp: v1::RunFunctionResponse,
    /// The program's desired resources, in the order they were set.
    bodies: BodyList,
    /// The protobuf bytes of every body (a replaced body's stay unused).
    encoded: Backward,
    /// This step's composite status, still a value (see
    /// [`ResponseBuilder::merge_composite_status`]).
    status: Option<Value>,
    /// The results and conditions, kept with their fixed texts borrowed (`rsp.results`
    /// and `rsp.conditions` stay empty until [`ResponseBuilder::finish`]).
    results: Vec<ResultEntry>,
    conditions: Vec<CondEntry>,
}

/// A result of the response (it always targets the composite).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResultEntry {
    /// A [`Severity`] as its protobuf number.
    pub severity: i32,
    pub message: Text,
    pub reason: Option<Text>,
}

/// A condition of the response (it always targets the composite).
#[derive(Clone, Debug, PartialEq, Eq)]
struct CondEntry {
    type_: Text,
    status: i32,
    reason: Text,
    message: Option<Text>,
}

/// Bytes of an enum field (omitted when 0, as prost does).
fn enum_len(v: i32) -> usize {
    if v == 0 {
        0
    } else {
        1 + wire::varint_len(v as i64 as u64)
    }
}

/// Bytes of a string field that prost omits when empty.
fn text_len(t: &str) -> usize {
    if t.is_empty() {
        0
    } else {
        wire::delimited_len(t.len())
    }
}

/// Bytes of an optional string field, written whenever it is set.
fn opt_text_len(t: &Option<Text>) -> usize {
    t.as_ref().map_or(0, |t| wire::delimited_len(t.len()))
}

/// Bytes of the `target: Composite` field.
const TARGET_LEN: usize = 2;

fn put_enum(buf: &mut Vec<u8>, field: u8, v: i32) {
    if v != 0 {
        buf.push(wire::key(field, 0));
        wire::put_varint(buf, v as i64 as u64);
    }
}

fn put_str(buf: &mut Vec<u8>, field: u8, t: &str) {
    wire::put_delimited(buf, field, t.len());
    buf.extend_from_slice(t.as_bytes());
}

/// A string field that prost omits when empty.
fn put_text(buf: &mut Vec<u8>, field: u8, t: &str) {
    if !t.is_empty() {
        put_str(buf, field, t);
    }
}

/// An optional string field, written whenever it is set.
fn put_opt_text(buf: &mut Vec<u8>, field: u8, t: &Option<Text>) {
    if let Some(t) = t {
        put_str(buf, field, t);
    }
}

fn put_target(buf: &mut Vec<u8>, field: u8) {
    buf.push(wire::key(field, 0));
    buf.push(Target::Composite as u8);
}

impl ResultEntry {
    /// Content length of its `Result` message, as prost measures it.
    fn len(&self) -> usize {
        enum_len(self.severity) + text_len(&self.message) + opt_text_len(&self.reason) + TARGET_LEN
    }

    fn write(&self, buf: &mut Vec<u8>) {
        put_enum(buf, 1, self.severity);
        put_text(buf, 2, &self.message);
        put_opt_text(buf, 3, &self.reason);
        put_target(buf, 4);
    }

    fn into_proto(self) -> v1::Result {
        v1::Result {
            severity: self.severity,
            message: self.message.into_owned(),
            reason: self.reason.map(Text::into_owned),
            target: Some(Target::Composite as i32),
        }
    }
}

impl CondEntry {
    /// Content length of its `Condition` message, as prost measures it.
    fn len(&self) -> usize {
        text_len(&self.type_)
            + enum_len(self.status)
            + text_len(&self.reason)
            + opt_text_len(&self.message)
            + TARGET_LEN
    }

    fn write(&self, buf: &mut Vec<u8>) {
        put_text(buf, 1, &self.type_);
        put_enum(buf, 2, self.status);
        put_text(buf, 3, &self.reason);
        put_opt_text(buf, 4, &self.message);
        put_target(buf, 5);
    }

    fn into_proto(self) -> v1::Condition {
        v1::Condition {
            r#type: self.type_.into_owned(),
            status: self.status,
            reason: self.reason.into_owned(),
            message: self.message.map(Text::into_owned),
            target: Some(Target::Composite as i32),
        }
    }
}

/// One desired resource the program produced, with its encoding.
#[derive(Clone, Debug)]
struct Body {
    name: crate::value::Str,
    ready: i32,
    /// Content length of the body's Struct.
    len: usize,
    /// Where its Struct's bytes end in the builder's [`Backward`] buffer.
    end: usize,
}

impl Body {
    /// Content length of its `Resource` message (resource = 1, ready = 3).
    fn resource_len(&self) -> usize {
        wire::delimited_len(self.len) + enum_len(self.ready)
    }
}

/// The program's desired resources in the order they were set, and where each one is by
/// name: kept from one response to the next on the thread, emptied (as [`Backward`]'s
/// buffers are), so that neither is grown from nothing on every request.
#[derive(Clone, Debug, Default)]
struct BodyList {
    list: Vec<Body>,
    index: HashMap<crate::value::Str, usize, ahash::RandomState>,
}

/// The largest list kept for the next response (bodies): a huge response's is freed
/// rather than held by the thread.
const SPARE_BODIES_MAX: usize = 1 << 14;

thread_local! {
    /// The emptied list and index of the last [`BodyList`] dropped on this thread.
    static SPARE_BODIES: std::cell::Cell<SpareBodies> = std::cell::Cell::default();
}

/// A [`BodyList`]'s parts while they wait on the thread (no `Drop` of their own).
type SpareBodies = (
    Vec<Body>,
    HashMap<crate::value::Str, usize, ahash::RandomState>,
);

impl BodyList {
    /// An empty list on the thread's spare one, if it has one.
    fn reuse() -> Self {
        let (list, index) = SPARE_BODIES.try_with(|c| c.take()).unwrap_or_default();
        BodyList { list, index }
    }
}

impl Drop for BodyList {
    fn drop(&mut self) {
        if self.list.capacity() == 0 || self.list.capacity() > SPARE_BODIES_MAX {
            return;
        }
        let (mut list, mut index) = (
            std::mem::take(&mut self.list),
            std::mem::take(&mut self.index),
        );
        list.clear();
        index.clear();
        // Kept unless the thread already holds one (two builders alive at once).
        let _ = SPARE_BODIES.try_with(|c| {
            let kept = c.take();
            c.set(if kept.0.capacity() == 0 {
                (list, index)
            } else {
                kept
            });
        });
    }
}

/// A desired resource in the encoded State: the request's (a prost message) or the
/// program's (an encoded value).
enum DesiredEntry<'a> {
    Proto(&'a v1::Resource),
    Body(&'a Body),
}

impl ResponseBuilder {
    /// The response skeleton for `req`.
    pub fn new(req: &v1::RunFunctionRequest) -> Self {
        ResponseBuilder {
            rsp: skeleton(req),
            bodies: BodyList::reuse(),
            encoded: Backward::default(),
            status: None,
            results: Vec::new(),
            conditions: Vec::new(),
        }
    }

    /// Adds or replaces the desired composed resource `name` (its readiness is reset).
    pub fn set_resource(&mut self, name: &str, body: prost_types::Struct) {
        self.remove_body(name);
        let desired = self.desired();
        desired.resources.insert(
            name.to_string(),
            v1::Resource {
                resource: Some(body),
                ..Default::default()
            },
        );
    }

    /// Adds or replaces the desired composed resource `name` with a program value (its
    /// readiness is reset). The value is checked as [`value_to_struct`] would convert it,
    /// with the same error at the same point; on error nothing changes.
    pub fn set_resource_value(
        &mut self,
        name: crate::value::Str,
        body: &Value,
    ) -> Result<(), ValueError> {
        if self.encoded.buf.is_empty() {
            self.encoded = Backward::reuse();
        }
        let len = put_body(body, &mut self.encoded)?;
        let end = self.encoded.written();
        let resources = &mut self.desired().resources;
        if !resources.is_empty() {
            resources.remove(&*name);
        }
        let b = Body {
            name: name.clone(),
            ready: Ready::Unspecified as i32,
            len,
            end,
        };
        match self.bodies.index.entry(name) {
            std::collections::hash_map::Entry::Occupied(e) => self.bodies.list[*e.get()] = b,
            std::collections::hash_map::Entry::Vacant(e) => {
                e.insert(self.bodies.list.len());
                self.bodies.list.push(b);
            }
        }
        Ok(())
    }

    /// Room for `n` more resource bodies (their index grew by rehashing as they came).
    /// The caller's `n` is a count of bodies it already holds. A few fit the index's
    /// first allocation, made on the first insert.
    pub fn reserve_resources(&mut self, n: usize) {
        if n > 3 {
            self.bodies.list.reserve(n);
            self.bodies.index.reserve(n);
        }
    }

    fn remove_body(&mut self, name: &str) {
        if let Some(i) = self.bodies.index.remove(name) {
            self.bodies.list.swap_remove(i);
            if let Some(moved) = self.bodies.list.get(i) {
                self.bodies.index.insert(moved.name.clone(), i);
            }
        }
    }

    /// Sets the readiness of a desired resource; false if there is no such resource.
    pub fn set_ready(&mut self, name: &str, ready: Ready) -> bool {
        if let Some(&i) = self.bodies.index.get(name) {
            self.bodies.list[i].ready = ready as i32;
            return true;
        }
        match self.desired().resources.get_mut(name) {
            Some(r) => {
                r.ready = ready as i32;
                true
            }
            None => false,
        }
    }

    /// True if the response (the request's desired state or this program) has a desired
    /// resource of this name.
    pub fn has_resource(&self, name: &str) -> bool {
        self.bodies.index.contains_key(name)
            || self
                .rsp
                .desired
                .as_ref()
                .is_some_and(|d| d.resources.contains_key(name))
    }

    /// Merges this step's (already unified) composite status, an object whose numbers are
    /// finite float64s (the evaluator checks them), into the desired composite's `status`:
    /// objects merge recursively and this step wins a conflicting leaf. The status stays a
    /// value until the response is finished: [`ResponseBuilder::finish_encoded`] writes
    /// the merged composite straight from it.
    pub fn merge_composite_status(&mut self, status: Value) {
        self.desired()
            .composite
            .get_or_insert_with(Default::default);
        if let Some(earlier) = self.status.replace(status) {
            self.apply_status(&earlier);
        }
    }

    /// Merges a status value into the desired composite's message.
    fn apply_status(&mut self, status: &Value) {
        let (Value::Object(f) | Value::Map(f)) = status else {
            return;
        };
        // Checked by the evaluator: nothing in it fails to convert.
        let Ok(status) = fields_to_struct(&f.entries, 1, usize::MAX) else {
            return;
        };
        let composite = self
            .desired()
            .composite
            .get_or_insert_with(Default::default);
        let body = composite.resource.get_or_insert_with(Default::default);
        match body.fields.get_mut("status") {
            Some(prost_types::Value {
                kind: Some(Kind::StructValue(existing)),
            }) => merge_struct(existing, status),
            _ => {
                body.fields.insert(
                    "status".to_string(),
                    prost_types::Value {
                        kind: Some(Kind::StructValue(status)),
                    },
                );
            }
        }
    }

    /// Merges connection details into the desired composite's, key by key (this step wins).
    pub fn merge_composite_connection(
        &mut self,
        details: impl IntoIterator<Item = (String, Vec<u8>)>,
    ) {
        let composite = self
            .desired()
            .composite
            .get_or_insert_with(Default::default);
        if composite.connection_details.is_empty() {
            // Built at once (sorted, full nodes) rather than one insertion at a time.
            composite.connection_details = details.into_iter().collect();
        } else {
            composite.connection_details.extend(details);
        }
    }

    /// Sets a top-level context key (replacing the request's value for that key).
    pub fn set_context(&mut self, key: &str, value: prost_types::Value) {
        self.rsp
            .context
            .get_or_insert_with(Default::default)
            .fields
            .insert(key.to_string(), value);
    }

    /// Asks Crossplane for extra resources (`requirements.extraResources[name]`).
    pub fn add_requirement(&mut self, name: &str, selector: v1::ResourceSelector) {
        self.rsp
            .requirements
            .get_or_insert_with(Default::default)
            .extra_resources
            .insert(name.to_string(), selector);
    }

    /// Appends a result targeting the composite.
    pub fn add_result(
        &mut self,
        severity: Severity,
        message: impl Into<String>,
        reason: Option<&str>,
    ) {
        self.push_result(
            severity,
            Text::Owned(message.into()),
            reason.map(|r| Text::Owned(r.to_string())),
        );
    }

    /// [`ResponseBuilder::add_result`] taking fixed texts without copying them.
    pub fn push_result(&mut self, severity: Severity, message: Text, reason: Option<Text>) {
        self.results.push(ResultEntry {
            severity: severity as i32,
            message,
            reason,
        });
    }

    /// Appends a condition targeting the composite.
    pub fn add_condition(
        &mut self,
        type_: &str,
        status: Status,
        reason: &str,
        message: Option<String>,
    ) {
        self.push_condition(
            Text::Owned(type_.to_string()),
            status,
            Text::Owned(reason.to_string()),
            message.map(Text::Owned),
        );
    }

    /// [`ResponseBuilder::add_condition`] taking fixed texts without copying them.
    pub fn push_condition(
        &mut self,
        type_: Text,
        status: Status,
        reason: Text,
        message: Option<Text>,
    ) {
        self.conditions.push(CondEntry {
            type_,
            status: status as i32,
            reason,
            message,
        });
    }

    /// Makes sure the response has a desired state (Go's merge always sets one, so a
    /// successful response carries `"desired": {}` even when nothing is desired).
    pub fn ensure_desired(&mut self) {
        self.desired();
    }

    /// The results added so far (the server logs the Fatal one).
    pub fn results(&self) -> &[ResultEntry] {
        &self.results
    }

    /// The response built so far, as a message (a copy: for inspection and debug output).
    pub fn to_response(&self) -> v1::RunFunctionResponse {
        self.clone().finish()
    }

    /// The finished response as a message.
    pub fn finish(mut self) -> v1::RunFunctionResponse {
        if let Some(status) = self.status.take() {
            self.apply_status(&status);
        }
        let mut rsp = self.rsp;
        rsp.results = self
            .results
            .into_iter()
            .map(ResultEntry::into_proto)
            .collect();
        rsp.conditions = self
            .conditions
            .into_iter()
            .map(CondEntry::into_proto)
            .collect();
        if !self.bodies.list.is_empty() {
            let desired = rsp.desired.get_or_insert_with(Default::default);
            for b in &self.bodies.list {
                // The bytes written when it was set (the value is gone), read back: prost
                // decodes them to the Struct `value_to_struct` makes of the value.
                let bytes = self.encoded.bytes(b.end - b.len, b.end);
                if let Ok(s) = <prost_types::Struct as prost::Message>::decode(bytes) {
                    desired.resources.insert(
                        b.name.to_string(),
                        v1::Resource {
                            resource: Some(s),
                            ready: b.ready,
                            ..Default::default()
                        },
                    );
                }
            }
        }
        rsp
    }

    /// The finished response as protobuf wire bytes, written straight from the program's
    /// values: it decodes to exactly the message [`ResponseBuilder::finish`] returns.
    ///
    /// Every Struct is written in prost's order (sorted keys), so each resource body is
    /// byte-identical to prost's encoding of it. The response's other maps (requirements,
    /// match labels, connection details) are BTreeMaps (build.rs), which prost writes in key
    /// order; the desired resources (`map<string, Resource>`, a Rust HashMap, which prost
    /// writes in a per-map random order) are written here sorted by name. So one call
    /// answers with the same bytes every time, equal to prost's up to the order of the
    /// desired resources.
    pub fn finish_encoded(&self) -> Vec<u8> {
        let rsp = &self.rsp;
        let entries = self.desired_entries();
        let composite = rsp.desired.as_ref().and_then(|d| d.composite.as_ref());
        let merged = match (&self.status, composite) {
            (Some(status), Some(c)) => composite_with_status(c, status),
            _ => None,
        };
        let merged = merged.as_ref().map(|w| w.bytes(0, w.written()));
        let state_len = rsp.desired.as_ref().map(|d| {
            merged.map_or_else(
                || d.composite.as_ref().map_or(0, wire::message_len),
                |m| wire::delimited_len(m.len()),
            ) + entries
                .iter()
                .map(|(name, _, len)| resource_entry_len(name, *len))
                .sum::<usize>()
        });
        let total = rsp.meta.as_ref().map_or(0, wire::message_len)
            + state_len.map_or(0, wire::delimited_len)
            + self
                .results
                .iter()
                .map(|r| wire::delimited_len(r.len()))
                .sum::<usize>()
            + rsp.context.as_ref().map_or(0, wire::message_len)
            + rsp.requirements.as_ref().map_or(0, wire::message_len)
            + self
                .conditions
                .iter()
                .map(|c| wire::delimited_len(c.len()))
                .sum::<usize>()
            + rsp.output.as_ref().map_or(0, wire::message_len);
        let mut buf = Vec::with_capacity(total);
        if let Some(meta) = &rsp.meta {
            wire::put_message(&mut buf, 1, meta);
        }
        if let (Some(desired), Some(len)) = (&rsp.desired, state_len) {
            wire::put_delimited(&mut buf, 2, len);
            if let Some(m) = merged {
                wire::put_delimited(&mut buf, 1, m.len());
                buf.extend_from_slice(m);
            } else if let Some(c) = &desired.composite {
                wire::put_message(&mut buf, 1, c);
            }
            for (name, entry, len) in &entries {
                self.write_resource_entry(name, entry, *len, &mut buf);
            }
        }
        for r in &self.results {
            wire::put_delimited(&mut buf, 3, r.len());
            r.write(&mut buf);
        }
        if let Some(c) = &rsp.context {
            wire::put_message(&mut buf, 4, c);
        }
        if let Some(r) = &rsp.requirements {
            wire::put_message(&mut buf, 5, r);
        }
        for c in &self.conditions {
            wire::put_delimited(&mut buf, 6, c.len());
            c.write(&mut buf);
        }
        if let Some(o) = &rsp.output {
            wire::put_message(&mut buf, 7, o);
        }
        buf
    }

    /// Every desired resource sorted by name, with its Resource content length (0 for a
    /// default Resource, which prost leaves out of the map entry).
    fn desired_entries(&self) -> Vec<(&str, DesiredEntry<'_>, usize)> {
        let proto = self.rsp.desired.as_ref().map(|d| &d.resources);
        let mut out = Vec::with_capacity(self.bodies.list.len() + proto.map_or(0, |r| r.len()));
        if let Some(resources) = proto {
            for (name, r) in resources {
                let len = if *r == v1::Resource::default() {
                    0
                } else {
                    prost::Message::encoded_len(r)
                };
                out.push((name.as_str(), DesiredEntry::Proto(r), len));
            }
        }
        for b in &self.bodies.list {
            out.push((&*b.name, DesiredEntry::Body(b), b.resource_len()));
        }
        sort_by_name(&mut out);
        out
    }

    fn write_resource_entry(
        &self,
        name: &str,
        entry: &DesiredEntry<'_>,
        len: usize,
        buf: &mut Vec<u8>,
    ) {
        let value_len = match entry {
            DesiredEntry::Proto(r) if **r == v1::Resource::default() => 0,
            _ => wire::delimited_len(len),
        };
        wire::put_delimited(buf, 2, wire::map_key_len(name) + value_len);
        wire::put_map_key(buf, name);
        match entry {
            DesiredEntry::Proto(r) => {
                if value_len > 0 {
                    wire::put_delimited(buf, 2, len);
                    // A Vec grows as needed, so prost's capacity error cannot happen.
                    let _ = prost::Message::encode(*r, buf);
                }
            }
            DesiredEntry::Body(b) => {
                wire::put_delimited(buf, 2, len);
                wire::put_delimited(buf, 1, b.len);
                buf.extend_from_slice(self.encoded.bytes(b.end - b.len, b.end));
                if b.ready != 0 {
                    buf.push(wire::key(3, 0));
                    wire::put_varint(buf, b.ready as i64 as u64);
                }
            }
        }
    }

    fn desired(&mut self) -> &mut v1::State {
        self.rsp.desired.get_or_insert_with(Default::default)
    }
}

/// Sorts the desired entries by name. They come in evaluation order, which is mostly
/// sorted already (a collection's items, then a resource after them): the sorted run at
/// the front is kept and the few entries after it are put in place by binary search, in
/// place; a shuffled order is sorted whole.
fn sort_by_name<T>(entries: &mut [(&str, T, usize)]) {
    let run = 1 + entries.windows(2).take_while(|w| w[0].0 <= w[1].0).count();
    if run >= entries.len() {
        return;
    }
    if entries.len() - run > 8 {
        entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
        return;
    }
    for i in run..entries.len() {
        let at = entries[..i].partition_point(|e| e.0 <= entries[i].0);
        entries[at..=i].rotate_right(1);
    }
}

/// Bytes of one `resources` map entry (State field 2) whose Resource has `len` content
/// bytes (0: a default Resource, left out).
fn resource_entry_len(name: &str, len: usize) -> usize {
    let value = if len == 0 {
        0
    } else {
        wire::delimited_len(len)
    };
    wire::delimited_len(wire::map_key_len(name) + value)
}

/// The response a failed call returns: the skeleton (tag, TTL, the request's desired state
/// and context) and one Fatal result with `message`, no conditions.
pub fn fatal_response(
    req: &v1::RunFunctionRequest,
    message: impl Into<String>,
) -> v1::RunFunctionResponse {
    let mut b = ResponseBuilder::new(req);
    b.add_result(Severity::Fatal, message, None);
    b.finish()
}

#[cfg(test)]
impl ResponseBuilder {
    /// What a run that processed every item without a warning ends with (the evaluator's
    /// `FullyResolved` condition and `HclDiagnostics` result), for tests that build a
    /// response by hand.
    pub(crate) fn add_resolved_without_warnings(&mut self) {
        self.add_condition(
            "FullyResolved",
            Status::ConditionTrue,
            "AllItemsProcessed",
            Some("all items complete".into()),
        );
        self.add_result(Severity::Normal, "no warnings", Some("HclDiagnostics"));
    }
}

fn skeleton(req: &v1::RunFunctionRequest) -> v1::RunFunctionResponse {
    v1::RunFunctionResponse {
        meta: Some(v1::ResponseMeta {
            tag: req.meta.as_ref().map(|m| m.tag.clone()).unwrap_or_default(),
            ttl: Some(prost_types::Duration {
                seconds: DEFAULT_TTL_SECONDS,
                nanos: 0,
            }),
        }),
        desired: req.desired.clone(),
        context: req.context.clone(),
        ..Default::default()
    }
}

// ---------------------------------------------------------------------------------------
// Direct encoding: VM values → google.protobuf.Struct wire bytes, without prost trees.
// ---------------------------------------------------------------------------------------

/// Wire-format helpers for the hand-written part of the response encoding.
mod wire {
    /// Protobuf wire type of length-delimited fields (strings, bytes, messages).
    pub const LEN: u8 = 2;

    /// Bytes of `v` as a varint (prost's `encoded_len_varint`).
    pub fn varint_len(v: u64) -> usize {
        (((v | 1).leading_zeros() ^ 63) * 9 + 73) as usize / 64
    }

    pub fn put_varint(buf: &mut Vec<u8>, v: u64) {
        let mut b = [0; 10];
        let n = varint_into(&mut b, v);
        buf.extend_from_slice(&b[..n]);
    }

    /// Writes `v` as a varint at the start of `out` (10 bytes hold any); returns its length.
    pub fn varint_into(out: &mut [u8], mut v: u64) -> usize {
        let mut n = 0;
        while v >= 0x80 && n < out.len() {
            out[n] = (v as u8) | 0x80;
            v >>= 7;
            n += 1;
        }
        if let Some(b) = out.get_mut(n) {
            *b = v as u8;
            n += 1;
        }
        n
    }

    /// A field key for field numbers below 16 (every field written here), one byte.
    pub const fn key(field: u8, wire_type: u8) -> u8 {
        (field << 3) | wire_type
    }

    /// Bytes of a length-delimited field of `len` content bytes (key, length, content).
    pub fn delimited_len(len: usize) -> usize {
        1 + varint_len(len as u64) + len
    }

    /// Writes the key and length of a length-delimited field.
    pub fn put_delimited(buf: &mut Vec<u8>, field: u8, len: usize) {
        buf.push(key(field, LEN));
        put_varint(buf, len as u64);
    }

    /// Bytes of a map entry's string key as prost writes it (an empty key is omitted).
    pub fn map_key_len(k: &str) -> usize {
        if k.is_empty() {
            0
        } else {
            delimited_len(k.len())
        }
    }

    pub fn put_map_key(buf: &mut Vec<u8>, k: &str) {
        if !k.is_empty() {
            put_delimited(buf, 1, k.len());
            buf.extend_from_slice(k.as_bytes());
        }
    }

    /// Bytes of a prost message written as field `field` (< 16) of its parent.
    pub fn message_len<M: prost::Message>(m: &M) -> usize {
        delimited_len(m.encoded_len())
    }

    /// Writes a prost message as length-delimited field `field` (< 16).
    pub fn put_message<M: prost::Message>(buf: &mut Vec<u8>, field: u8, m: &M) {
        buf.push(key(field, LEN));
        // A Vec grows as needed, so prost's capacity error cannot happen.
        let _ = m.encode_length_delimited(buf);
    }
}

/// google.protobuf.Value's field numbers (its `kind` oneof).
mod kind {
    pub const NULL: u8 = 1;
    pub const NUMBER: u8 = 2;
    pub const STRING: u8 = 3;
    pub const BOOL: u8 = 4;
    pub const STRUCT: u8 = 5;
    pub const LIST: u8 = 6;
}

/// Protobuf bytes written back to front. A length-delimited field's content is written
/// before its key and length, so the length is known when it is written: one walk of a
/// value writes prost's exact bytes (minimal varints) with no measuring pass, no
/// placeholders and no shifting. The bytes are `buf[start..]`; positions are counted
/// from the end ([`Backward::written`]), so they stay valid when the buffer grows.
///
/// The buffer is taken from the thread's spares and given back when dropped, so a
/// steady stream of requests writes their bodies and merged status without allocating
/// (see [`SPARE_MAX`]).
#[derive(Clone, Debug, Default)]
struct Backward {
    buf: Vec<u8>,
    start: usize,
}

thread_local! {
    /// The buffers of the last [`Backward`]s dropped on this thread, for the next ones: a
    /// response writes its bodies in one and the composite's merged status in another, so
    /// with two kept neither is grown from nothing on every request.
    static SPARE: [std::cell::Cell<Vec<u8>>; 2] =
        const { [std::cell::Cell::new(Vec::new()), std::cell::Cell::new(Vec::new())] };
}

/// The length of a kept buffer (a `Cell` lends nothing: taken and put back).
fn spare_len(c: &std::cell::Cell<Vec<u8>>) -> usize {
    let v = c.take();
    let n = v.len();
    c.set(v);
    n
}

/// The largest buffer kept for the next response (bytes): a huge response's buffer is
/// freed rather than held by the thread.
const SPARE_MAX: usize = 4 << 20;

impl Drop for Backward {
    fn drop(&mut self) {
        let buf = std::mem::take(&mut self.buf);
        if buf.is_empty() || buf.len() > SPARE_MAX {
            return;
        }
        // During thread teardown the spares are gone: the buffer is simply freed. It takes
        // the smaller spare's place if it is larger (the smaller is freed).
        let _ = SPARE.try_with(|spares| {
            let [a, b] = spares;
            let small = if spare_len(a) <= spare_len(b) { a } else { b };
            let kept = small.take();
            small.set(if buf.len() >= kept.len() { buf } else { kept });
        });
    }
}

impl Backward {
    /// An empty writer on the larger of the thread's spare buffers (the bodies', kept
    /// from the last response), if it has one.
    fn reuse() -> Self {
        let buf = SPARE
            .try_with(|[a, b]| {
                if spare_len(a) >= spare_len(b) {
                    a.take()
                } else {
                    b.take()
                }
            })
            .unwrap_or_default();
        Backward {
            start: buf.len(),
            buf,
        }
    }

    /// Bytes written so far: a position that survives growth.
    fn written(&self) -> usize {
        self.buf.len() - self.start
    }

    /// The bytes written between positions `from` and `to` (`from` ≤ `to` ≤ written).
    fn bytes(&self, from: usize, to: usize) -> &[u8] {
        let end = self.buf.len();
        self.buf
            .get(end.saturating_sub(to)..end.saturating_sub(from))
            .unwrap_or(&[])
    }

    /// Forgets what was written after position `at`.
    fn truncate(&mut self, at: usize) {
        self.start = self.buf.len() - at.min(self.written());
    }

    /// The next `n` bytes in front of what was written, to be filled by the caller.
    fn front(&mut self, n: usize) -> &mut [u8] {
        if self.start < n {
            self.grow(n);
        }
        self.start -= n;
        &mut self.buf[self.start..self.start + n]
    }

    #[cold]
    fn grow(&mut self, n: usize) {
        let written = self.written();
        let cap = (self.buf.len() * 2).max(written + n).max(1024);
        let mut buf = vec![0; cap];
        buf[cap - written..].copy_from_slice(&self.buf[self.start..]);
        self.buf = buf;
        self.start = cap - written;
    }

    fn put(&mut self, bytes: &[u8]) {
        copy_short(self.front(bytes.len()), bytes);
    }

    /// The key and length of a length-delimited field whose `len` content bytes were just
    /// written.
    #[inline(always)]
    fn put_header(&mut self, field: u8, len: usize) {
        let out = self.front(1 + wire::varint_len(len as u64));
        out[0] = wire::key(field, wire::LEN);
        wire::varint_into(&mut out[1..], len as u64);
    }

    /// A string field, content and header.
    #[inline(always)]
    fn put_str(&mut self, field: u8, s: &str) {
        self.put(s.as_bytes());
        self.put_header(field, s.len());
    }
}

/// The entries a BTreeMap built from `entries` would hold (later duplicates win), in its
/// key order: only for entries that break the sorted invariant.
fn struct_order(entries: &[(crate::value::Str, Value)]) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..entries.len()).collect();
    idx.sort_by(|&a, &b| entries[a].0.cmp(&entries[b].0).then(a.cmp(&b)));
    let mut out: Vec<usize> = Vec::with_capacity(idx.len());
    for i in idx {
        match out.last_mut() {
            Some(last) if entries[*last].0 == entries[i].0 => *last = i,
            _ => out.push(i),
        }
    }
    out
}

/// What a backward walk answers: `Err` when it met a value [`value_to_struct`] refuses
/// (which one and why is found again by [`value_to_struct`]: a rare path, kept out of
/// the walk's way).
type Walk = Result<(), Refused>;

/// See [`Walk`].
#[derive(Debug)]
struct Refused;

impl From<ValueError> for Refused {
    fn from(_: ValueError) -> Self {
        Refused
    }
}

/// Writes a resource body (its Struct's content) in one backward walk and returns its
/// length. A bad value fails with [`value_to_struct`]'s error: the backward walk meets
/// bad values last first, so on failure the forward conversion names the first one, and
/// nothing stays written.
fn put_body(v: &Value, w: &mut Backward) -> Result<usize, ValueError> {
    let mark = w.written();
    let done = match v {
        Value::Object(f) | Value::Map(f) => put_struct(f, MAX_DEPTH, w),
        _ => Err(Refused),
    };
    match done {
        Ok(()) => Ok(w.written() - mark),
        Err(Refused) => {
            w.truncate(mark);
            Err(value_to_struct(v).err().unwrap_or(ValueError::Unknown))
        }
    }
}

/// A Struct's content (its `fields` entries: a map's or object's), with
/// [`fields_to_struct`]'s checks; `levels` is how many more levels of nesting are
/// allowed, this one included.
fn put_struct(f: &crate::value::Fields, levels: usize, w: &mut Backward) -> Walk {
    let Some(inner) = levels.checked_sub(1) else {
        return Err(Refused);
    };
    let entries = &f.entries;
    // Values keep their entries sorted, the order prost writes a Struct's (BTreeMap)
    // fields in; anything else is written in that order (see [`struct_order`]).
    if f.sorted_unique() {
        for (k, x) in entries.iter().rev() {
            put_field_entry(k, x, inner, w)?;
        }
    } else {
        let order = struct_order(entries);
        // value_to_struct checks every entry, the duplicates its map drops included: each
        // is written for its checks only, and taken back.
        let mut kept = vec![false; entries.len()];
        for &i in &order {
            kept[i] = true;
        }
        for ((k, x), _) in entries.iter().zip(kept).filter(|(_, kept)| !kept) {
            let mark = w.written();
            put_field_entry(k, x, inner, w)?;
            w.truncate(mark);
        }
        for i in order.into_iter().rev() {
            let (k, x) = &entries[i];
            put_field_entry(k, x, inner, w)?;
        }
    }
    Ok(())
}

/// Content length of a scalar google.protobuf.Value (None for a list or object).
fn scalar_len(v: &Value) -> Option<usize> {
    match v {
        Value::Null(_) | Value::Bool(_) | Value::Unknown(_) => Some(2),
        Value::Number(_) => Some(9),
        Value::String(s) => Some(wire::delimited_len(s.len())),
        _ => None,
    }
}

/// Fills a slice front to back: the pieces of a field whose size is known beforehand.
struct Fill<'a> {
    out: &'a mut [u8],
    at: usize,
}

impl Fill<'_> {
    #[inline(always)]
    fn bytes(&mut self, b: &[u8]) {
        if let Some(dst) = self.out.get_mut(self.at..self.at + b.len()) {
            copy_short(dst, b);
        }
        self.at += b.len();
    }

    /// The key and length of a length-delimited field.
    #[inline(always)]
    fn header(&mut self, field: u8, len: usize) {
        let rest = self.out.get_mut(self.at..).unwrap_or_default();
        if let Some((key, varint)) = rest.split_first_mut() {
            *key = wire::key(field, wire::LEN);
            self.at += 1 + wire::varint_into(varint, len as u64);
        }
    }

    /// A scalar google.protobuf.Value's content ([`scalar_len`] bytes), with
    /// [`to_proto_at`]'s checks.
    #[inline(always)]
    fn scalar(&mut self, v: &Value) -> Walk {
        match v {
            Value::Null(_) => self.bytes(&[wire::key(kind::NULL, 0), 0]),
            Value::Bool(b) => self.bytes(&[wire::key(kind::BOOL, 0), u8::from(*b)]),
            Value::Number(n) => {
                let mut b = [wire::key(kind::NUMBER, 1); 9];
                b[1..].copy_from_slice(&proto_number(n)?.to_le_bytes());
                self.bytes(&b);
            }
            Value::String(s) => {
                self.header(kind::STRING, s.len());
                self.bytes(s.as_bytes());
            }
            _ => return Err(Refused),
        }
        Ok(())
    }
}

/// One `fields` map entry: key (omitted when empty, as prost does) and Value. An entry
/// holding a scalar (most of a body's) is written front to back in one piece.
fn put_field_entry(k: &str, x: &Value, levels: usize, w: &mut Backward) -> Walk {
    // The usual leaf: a named string whose entry is shorter than 128 bytes, so that every
    // length in it is one byte: written at once (what the general path below writes).
    if let Value::String(s) = x
        && !k.is_empty()
    {
        let (kl, sl) = (k.len(), s.len());
        let inner = 6 + kl + sl;
        if inner < 0x80 {
            let out = w.front(2 + inner);
            out[..4].copy_from_slice(&[
                wire::key(1, wire::LEN),
                inner as u8,
                wire::key(1, wire::LEN),
                kl as u8,
            ]);
            let (key, rest) = out[4..].split_at_mut(kl);
            copy_short(key, k.as_bytes());
            rest[..4].copy_from_slice(&[
                wire::key(2, wire::LEN),
                (2 + sl) as u8,
                wire::key(kind::STRING, wire::LEN),
                sl as u8,
            ]);
            copy_short(&mut rest[4..], s.as_bytes());
            return Ok(());
        }
    }
    if let Some(vlen) = scalar_len(x) {
        let inner = wire::map_key_len(k) + wire::delimited_len(vlen);
        let mut f = Fill {
            out: w.front(wire::delimited_len(inner)),
            at: 0,
        };
        f.header(1, inner);
        if !k.is_empty() {
            f.header(1, k.len());
            f.bytes(k.as_bytes());
        }
        f.header(2, vlen);
        return f.scalar(x);
    }
    let end = w.written();
    put_container(x, levels, w)?;
    w.put_header(2, w.written() - end);
    if !k.is_empty() {
        w.put_str(1, k);
    }
    w.put_header(1, w.written() - end);
    Ok(())
}

/// The desired composite `c` with this step's status merged into its body's `status`
/// (as [`ResponseBuilder::merge_composite_status`] merges it into the message): its
/// `Resource` message's content, written back to front. The connection details are a
/// BTreeMap (build.rs), written in key order as prost writes them.
fn composite_with_status(c: &v1::Resource, status: &Value) -> Option<Backward> {
    let mut w = Backward::reuse();
    if c.ready != 0 {
        let mut b = [0; 11];
        b[0] = wire::key(3, 0);
        let n = 1 + wire::varint_into(&mut b[1..], c.ready as i64 as u64);
        w.put(&b[..n]);
    }
    for (k, v) in c.connection_details.iter().rev() {
        // prost leaves an empty key or value out of a map entry.
        let end = w.written();
        if !v.is_empty() {
            w.put(v);
            w.put_header(2, v.len());
        }
        if !k.is_empty() {
            w.put_str(1, k);
        }
        w.put_header(2, w.written() - end);
    }
    let end = w.written();
    let status = [(crate::value::Str::from("status"), status.clone())];
    // A status the evaluator would refuse is left out, as `apply_status` leaves it out.
    put_merged_struct(c.resource.as_ref(), &status, &mut w).ok()?;
    w.put_header(1, w.written() - end);
    Some(w)
}

/// The content of the Struct `base` (the request's) with `add` merged in as
/// [`merge_struct`] merges a converted value: a key both hold as objects merges
/// recursively, anything else in `add` wins. Written back to front (keys descending).
fn put_merged_struct(
    base: Option<&prost_types::Struct>,
    add: &[(crate::value::Str, Value)],
    w: &mut Backward,
) -> Walk {
    let order: Vec<usize> = if crate::value::sorted_unique(add) {
        (0..add.len()).collect()
    } else {
        struct_order(add)
    };
    let mut adds = order.into_iter().rev().map(|i| &add[i]).peekable();
    let mut bases = base
        .into_iter()
        .flat_map(|s| s.fields.iter().rev())
        .peekable();
    loop {
        let (from_base, from_add) = match (bases.peek(), adds.peek()) {
            (None, None) => return Ok(()),
            (Some(_), None) => (true, false),
            (None, Some(_)) => (false, true),
            (Some((bk, _)), Some((ak, _))) => match bk.as_str().cmp(&**ak) {
                std::cmp::Ordering::Greater => (true, false),
                std::cmp::Ordering::Less => (false, true),
                std::cmp::Ordering::Equal => (true, true),
            },
        };
        let b = if from_base { bases.next() } else { None };
        let a = if from_add { adds.next() } else { None };
        match (b, a) {
            (
                Some((
                    _,
                    prost_types::Value {
                        kind: Some(Kind::StructValue(inner)),
                    },
                )),
                Some((k, Value::Object(f) | Value::Map(f))),
            ) => {
                let end = w.written();
                put_merged_struct(Some(inner), &f.entries, w)?;
                w.put_header(kind::STRUCT, w.written() - end);
                w.put_header(2, w.written() - end);
                if !k.is_empty() {
                    w.put_str(1, k);
                }
                w.put_header(1, w.written() - end);
            }
            (_, Some((k, x))) => put_field_entry(k, x, usize::MAX, w)?,
            (Some((k, v)), None) => put_proto_entry(k, v, w),
            (None, None) => return Ok(()),
        }
    }
}

/// One `fields` map entry holding a prost Value (left out of the entry when it is the
/// default, as prost does).
fn put_proto_entry(k: &str, v: &prost_types::Value, w: &mut Backward) {
    let end = w.written();
    if v.kind.is_some() {
        let n = prost::Message::encoded_len(v);
        // Exactly the room it needs, so prost's capacity error cannot happen.
        let _ = prost::Message::encode(v, &mut w.front(n));
        w.put_header(2, n);
    }
    if !k.is_empty() {
        w.put_str(1, k);
    }
    w.put_header(1, w.written() - end);
}

/// A list's or object's google.protobuf.Value content, with [`to_proto_at`]'s checks.
fn put_container(v: &Value, levels: usize, w: &mut Backward) -> Walk {
    let end = w.written();
    match v {
        Value::List(s) | Value::Set(s) | Value::Tuple(s) => {
            let inner = levels.checked_sub(1).ok_or(Refused)?;
            for x in s.items.iter().rev() {
                if let Some(vlen) = scalar_len(x) {
                    let mut f = Fill {
                        out: w.front(wire::delimited_len(vlen)),
                        at: 0,
                    };
                    f.header(1, vlen);
                    f.scalar(x)?;
                } else {
                    let item_end = w.written();
                    put_container(x, inner, w)?;
                    w.put_header(1, w.written() - item_end);
                }
            }
            w.put_header(kind::LIST, w.written() - end);
        }
        Value::Map(f) | Value::Object(f) => {
            put_struct(f, levels, w)?;
            w.put_header(kind::STRUCT, w.written() - end);
        }
        _ => return Err(Refused),
    }
    Ok(())
}

#[cfg(test)]
mod tests {

    #[test]
    fn desired_entries_sort_as_a_whole_sort_would() {
        // Sorted runs with stragglers after them (kept run, binary insertion) and
        // shuffled orders (sorted whole), against the plain sort.
        let names: Vec<String> = (0..40).map(|i| format!("r-{:02}", (i * 7) % 40)).collect();
        let mut orders: Vec<Vec<&str>> = Vec::new();
        let mut sorted: Vec<&str> = names.iter().map(String::as_str).collect();
        sorted.sort_unstable();
        for stragglers in [0, 1, 2, 8, 9, 20, 40] {
            let (run, rest) = sorted.split_at(sorted.len() - stragglers);
            // The stragglers taken from everywhere in the order: every other name.
            let mut front: Vec<&str> = run.to_vec();
            let mut back: Vec<&str> = rest.to_vec();
            for (i, n) in run.iter().enumerate() {
                if i % 5 == 0 && back.len() < stragglers.max(1) * 2 {
                    back.push(n);
                    front.retain(|x| x != n);
                }
            }
            front.extend(back.iter().rev());
            orders.push(front);
        }
        orders.push(names.iter().map(String::as_str).collect());
        orders.push(sorted.iter().rev().copied().collect());
        orders.push(Vec::new());
        orders.push(vec!["only"]);
        for order in orders {
            let mut got: Vec<(&str, (), usize)> = order.iter().map(|n| (*n, (), 0)).collect();
            sort_by_name(&mut got);
            let mut want = order.clone();
            want.sort_unstable();
            let got: Vec<&str> = got.iter().map(|e| e.0).collect();
            assert_eq!(got, want, "{order:?}");
        }
    }

    #[test]
    fn numbers_leave_through_ctys_decimal_text() {
        use crate::value::number::Number;
        // 2^64 at float64 precision prints as 18446744073709550000, which Go re-reads as
        // the double below 2^64.
        let p = Number::from_f64(18446744073709551616.0).expect("finite");
        assert_eq!(json_f64(&p), 18446744073709549568.0);
        assert_eq!(json_f64(&Number::from_i64(42)), 42.0);
        let third = Number::from_i64(1)
            .div(&Number::from_i64(3))
            .expect("divides");
        assert_eq!(json_f64(&third), 1.0 / 3.0);
    }

    use super::*;
    use crate::value::number::Number;

    fn n(v: &prost_types::Value) -> f64 {
        match v.kind {
            Some(Kind::NumberValue(f)) => f,
            _ => panic!("not a number: {v:?}"),
        }
    }

    #[test]
    fn two_writers_at_a_time_reuse_both_buffers() {
        // On a fresh thread: the bodies' writer and the status's writer of one response
        // each find their buffer from the last response, the larger first; a buffer past
        // SPARE_MAX is not kept.
        std::thread::spawn(|| {
            let write = |n: usize| {
                let mut w = Backward::reuse();
                w.put(&vec![7; n]);
                w
            };
            let (big, small) = (write(5000), write(300));
            let sizes = (big.buf.len(), small.buf.len());
            drop((big, small));
            let (a, b) = (Backward::reuse(), Backward::reuse());
            assert_eq!((a.buf.len(), b.buf.len()), sizes);
            assert_eq!((a.written(), b.written()), (0, 0));
            drop((a, b));
            // It took the larger spare and grew past the bound: neither is kept.
            drop(write(SPARE_MAX + 1));
            SPARE.with(|[x, y]| assert_eq!((spare_len(x), spare_len(y)), (0, sizes.1)));
        })
        .join()
        .expect("runs");
    }

    #[test]
    fn values_to_struct() {
        let v = Value::object(vec![
            ("a".into(), Value::int(3)),
            (
                "b".into(),
                Value::tuple(vec![Value::string("x"), Value::NULL]),
            ),
            (
                "c".into(),
                Value::object(vec![("d".into(), Value::Bool(true))]),
            ),
        ]);
        let s = value_to_struct(&v).unwrap();
        assert_eq!(n(&s.fields["a"]), 3.0);
        match &s.fields["b"].kind {
            Some(Kind::ListValue(l)) => {
                assert_eq!(l.values.len(), 2);
                assert_eq!(l.values[1].kind, Some(Kind::NullValue(0)));
            }
            k => panic!("{k:?}"),
        }
        assert!(
            matches!(&s.fields["c"].kind, Some(Kind::StructValue(c)) if c.fields.contains_key("d"))
        );
        assert!(
            matches!(value_to_struct(&Value::int(1)), Err(ValueError::NotAnObject(t)) if t == "number")
        );
    }

    #[test]
    fn infinity_is_an_error() {
        let v = Value::Number(Number::infinity(false));
        let e = value_to_proto(&v).unwrap_err();
        assert_eq!(e.to_string(), "cannot serialize infinity as JSON");
        let v = Value::Number(Number::infinity(true));
        assert_eq!(value_to_proto(&v).unwrap_err(), ValueError::Infinity);
        assert_eq!(
            value_to_proto(&Value::Unknown(crate::value::Type::Number)).unwrap_err(),
            ValueError::Unknown
        );
    }

    #[test]
    fn deep_values_are_bounded() {
        let mut v = Value::int(1);
        for _ in 0..(MAX_DEPTH + 5) {
            v = Value::tuple(vec![v]);
        }
        assert_eq!(value_to_proto(&v).unwrap_err(), ValueError::TooDeep);
    }

    #[test]
    fn builder_starts_from_request_and_merges() {
        let mut req = v1::RunFunctionRequest {
            meta: Some(v1::RequestMeta {
                tag: "t1".into(),
                capabilities: vec![],
            }),
            ..Default::default()
        };
        let upstream = value_to_struct(&Value::object(vec![(
            "status".into(),
            Value::object(vec![
                ("keep".into(), Value::int(1)),
                ("over".into(), Value::int(1)),
            ]),
        )]))
        .unwrap();
        let desired = v1::State {
            composite: Some(v1::Resource {
                resource: Some(upstream),
                connection_details: [("a".to_string(), b"1".to_vec())].into_iter().collect(),
                ready: 0,
            }),
            ..Default::default()
        };
        req.desired = Some(desired);
        let mut b = ResponseBuilder::new(&req);
        b.merge_composite_status(Value::object(vec![
            ("over".into(), Value::int(2)),
            ("new".into(), Value::int(3)),
        ]));
        b.merge_composite_connection([("b".to_string(), b"2".to_vec())]);
        b.set_resource("r", value_to_struct(&Value::object(vec![])).unwrap());
        assert!(b.set_ready("r", Ready::True));
        assert!(!b.set_ready("missing", Ready::True));
        b.set_context("k", value_to_proto(&Value::string("v")).unwrap());
        b.add_result(Severity::Normal, "ok", Some("why"));
        b.add_condition(
            "FullyResolved",
            Status::ConditionTrue,
            "AllItemsProcessed",
            Some("m".into()),
        );
        let rsp = b.finish();
        let meta = rsp.meta.as_ref().unwrap();
        assert_eq!(meta.tag, "t1");
        assert_eq!(meta.ttl.unwrap().seconds, 60);
        let comp = rsp.desired.as_ref().unwrap().composite.as_ref().unwrap();
        assert_eq!(comp.connection_details.len(), 2);
        let status = match &comp.resource.as_ref().unwrap().fields["status"].kind {
            Some(Kind::StructValue(s)) => s.clone(),
            k => panic!("{k:?}"),
        };
        assert_eq!(n(&status.fields["keep"]), 1.0);
        assert_eq!(n(&status.fields["over"]), 2.0);
        assert_eq!(n(&status.fields["new"]), 3.0);
        assert_eq!(
            rsp.desired.as_ref().unwrap().resources["r"].ready,
            Ready::True as i32
        );
        assert_eq!(rsp.results[0].target, Some(Target::Composite as i32));
        assert_eq!(rsp.conditions[0].r#type, "FullyResolved");
        assert!(rsp.context.unwrap().fields.contains_key("k"));
    }

    #[test]
    fn success_always_has_desired() {
        let mut b = ResponseBuilder::new(&v1::RunFunctionRequest::default());
        assert!(b.to_response().desired.is_none());
        b.ensure_desired();
        let rsp = b.finish();
        assert_eq!(rsp.desired, Some(v1::State::default()));
        let json = crate::protocol::protojson::response_to_json(&rsp).unwrap();
        assert_eq!(
            json.get("desired"),
            Some(&crate::protocol::doc::Json::Object(Default::default()))
        );
    }

    #[test]
    fn fatal_echoes_desired_and_context() {
        let req = v1::RunFunctionRequest {
            context: Some(prost_types::Struct::default()),
            ..Default::default()
        };
        let rsp = fatal_response(&req, "boom");
        assert!(rsp.desired.is_none());
        assert!(rsp.context.is_some());
        assert_eq!(rsp.results.len(), 1);
        assert_eq!(rsp.results[0].severity, Severity::Fatal as i32);
        assert!(rsp.conditions.is_empty());
    }

    /// prost's bytes of the Struct a value converts to.
    fn prost_bytes(v: &Value) -> Result<Vec<u8>, ValueError> {
        value_to_struct(v).map(|s| prost::Message::encode_to_vec(&s))
    }

    /// The direct bytes of a body alone (its Struct), through the builder.
    fn direct_bytes(v: &Value) -> Result<Vec<u8>, ValueError> {
        let mut b = ResponseBuilder::new(&v1::RunFunctionRequest::default());
        b.set_resource_value("r".into(), v)?;
        let rsp =
            <v1::RunFunctionResponse as prost::Message>::decode(b.finish_encoded().as_slice())
                .expect("direct bytes decode");
        let body = rsp.desired.expect("desired").resources["r"]
            .resource
            .clone()
            .expect("body");
        // Re-encoding would hide a difference: compare the raw Struct bytes instead.
        let raw = b.finish_encoded();
        let enc = prost::Message::encode_to_vec(&body);
        assert!(
            enc.is_empty() || raw.windows(enc.len()).any(|w| w == enc.as_slice()),
            "the body's bytes are not prost's"
        );
        Ok(enc)
    }

    fn big_string(n: usize) -> Value {
        Value::string("é".repeat(n))
    }

    fn sample_bodies() -> Vec<Value> {
        let nested = {
            let mut v = Value::object(vec![("leaf".into(), Value::int(-7))]);
            // Within prost's decoding recursion limit (100 messages deep).
            for i in 0..20 {
                v = if i % 2 == 0 {
                    Value::tuple(vec![v, Value::NULL])
                } else {
                    Value::object(vec![("k".into(), v)])
                };
            }
            v
        };
        let third = Number::from_i64(1)
            .div(&Number::from_i64(3))
            .expect("divides");
        vec![
            Value::object(vec![]),
            Value::object(vec![
                ("".into(), Value::string("empty key")),
                ("a".into(), Value::int(3)),
                ("b".into(), Value::Bool(false)),
                ("c".into(), Value::Bool(true)),
                ("d".into(), Value::NULL),
                ("e".into(), Value::tuple(vec![])),
                ("f".into(), Value::object(vec![])),
                ("g".into(), Value::Number(third)),
                (
                    "h".into(),
                    Value::Number(Number::from_f64(-0.0).expect("finite")),
                ),
                (
                    "i".into(),
                    Value::Number(Number::from_f64(1e300).expect("finite")),
                ),
                ("j".into(), Value::int(i64::MIN)),
                ("k".into(), big_string(200)),
                ("ü".into(), Value::string("")),
            ]),
            Value::object(vec![
                (
                    "big".into(),
                    Value::tuple((0..300).map(Value::int).collect()),
                ),
                ("nested".into(), nested),
                (
                    "map".into(),
                    Value::map(
                        crate::value::Type::String,
                        vec![
                            ("z".into(), big_string(5000)),
                            ("a".into(), Value::string("x")),
                        ],
                    ),
                ),
            ]),
        ]
    }

    #[test]
    fn bodies_are_byte_identical_to_prost() {
        for v in sample_bodies() {
            assert_eq!(direct_bytes(&v).unwrap(), prost_bytes(&v).unwrap(), "{v:?}");
        }
    }

    /// String leaves whose entry is just under, at and over 128 bytes (one-byte lengths
    /// or not), with keys and values of every split of that size, ASCII and not.
    #[test]
    fn string_leaves_around_one_byte_lengths_are_prosts() {
        for total in [0usize, 1, 60, 119, 120, 121, 122, 127, 128, 129, 200] {
            for kl in [1usize, 2, total / 2, total.saturating_sub(1), total] {
                let sl = total.saturating_sub(kl);
                for (k, s) in [
                    ("k".repeat(kl), "v".repeat(sl)),
                    ("é".repeat(kl.div_ceil(2)), "ü".repeat(sl / 2)),
                ] {
                    let v = Value::object(vec![(k.as_str().into(), Value::string(s.as_str()))]);
                    assert_eq!(
                        direct_bytes(&v).unwrap(),
                        prost_bytes(&v).unwrap(),
                        "{kl} {sl}"
                    );
                }
            }
        }
    }

    /// Builders on one thread share a spare buffer (taken by one, given back when it is
    /// dropped): what one wrote never shows in another's bytes, alive at once or after.
    #[test]
    fn builders_reusing_a_buffer_write_their_own_bytes() {
        let bodies = sample_bodies();
        let encoded = |v: &Value| {
            let mut b = ResponseBuilder::new(&v1::RunFunctionRequest::default());
            b.set_resource_value("r".into(), v).unwrap();
            b
        };
        let want: Vec<Vec<u8>> = bodies.iter().map(|v| encoded(v).finish_encoded()).collect();
        let first = encoded(&bodies[2]);
        let second = encoded(&bodies[1]);
        assert_eq!(first.finish_encoded(), want[2]);
        assert_eq!(second.finish_encoded(), want[1]);
        drop(first);
        let third = encoded(&bodies[0]);
        assert_eq!(third.finish_encoded(), want[0]);
        drop(second);
        drop(third);
        for (v, want) in bodies.iter().zip(&want).rev() {
            assert_eq!(&encoded(v).finish_encoded(), want);
        }
    }

    #[test]
    fn unsorted_entries_are_written_as_prost_writes_them() {
        // Values keep their entries sorted; were one not, the response still matches prost's
        // map (sorted, the later duplicate wins).
        let v = Value::Object(crate::value::Fields::new(
            crate::value::Type::Dynamic,
            vec![
                ("b".into(), Value::int(1)),
                ("a".into(), Value::tuple(vec![Value::int(2)])),
                ("b".into(), Value::string("later")),
            ],
        ));
        assert_eq!(direct_bytes(&v).unwrap(), prost_bytes(&v).unwrap());
        let bad = Value::Object(crate::value::Fields::new(
            crate::value::Type::Dynamic,
            vec![
                ("b".into(), Value::Number(Number::infinity(false))),
                ("a".into(), Value::Unknown(crate::value::Type::Number)),
            ],
        ));
        assert_eq!(
            direct_bytes(&bad).unwrap_err(),
            prost_bytes(&bad).unwrap_err()
        );
    }

    /// Near the nesting limit, an unsorted object (whose dropped duplicate is checked too)
    /// and the lists and objects around it fail exactly where value_to_struct fails.
    #[test]
    fn unsorted_entries_near_the_depth_limit() {
        let unsorted = |dropped: Value| {
            Value::Object(crate::value::Fields::new(
                crate::value::Type::Dynamic,
                vec![
                    ("b".into(), dropped),
                    ("a".into(), Value::int(1)),
                    ("b".into(), Value::int(2)),
                ],
            ))
        };
        let mut dropped = Value::int(0);
        for _ in 0..3 {
            dropped = Value::tuple(vec![dropped]);
        }
        let mut seen = (false, false);
        for levels in MAX_DEPTH - 10..MAX_DEPTH + 2 {
            let mut v = unsorted(dropped.clone());
            for i in 0..levels {
                v = if i % 3 == 0 {
                    Value::tuple(vec![v])
                } else {
                    Value::object(vec![("k".into(), v)])
                };
            }
            let v = Value::object(vec![("top".into(), v)]);
            let mut b = ResponseBuilder::new(&v1::RunFunctionRequest::default());
            match (prost_bytes(&v), b.set_resource_value("r".into(), &v)) {
                (Ok(_), Ok(())) => seen.0 = true,
                (Err(want), got) => {
                    assert_eq!(got, Err(want), "{levels}");
                    seen.1 = true;
                }
                (Ok(_), Err(e)) => panic!("{levels}: refused: {e}"),
            }
        }
        assert_eq!(seen, (true, true), "both sides of the limit");
    }

    #[test]
    fn bodies_fail_as_value_to_struct_fails() {
        let deep_list = {
            let mut v = Value::int(1);
            for _ in 0..MAX_DEPTH {
                v = Value::tuple(vec![v]);
            }
            Value::object(vec![("x".into(), v)])
        };
        let deep_obj = {
            let mut v = Value::int(1);
            for _ in 0..=MAX_DEPTH {
                v = Value::object(vec![("x".into(), v)]);
            }
            v
        };
        let huge = Number::from_i64(10)
            .pow(&Number::from_i64(400))
            .expect("exact power");
        let bad = [
            Value::int(1),
            Value::string("s"),
            Value::tuple(vec![]),
            Value::Unknown(crate::value::Type::Dynamic),
            Value::object(vec![
                ("a".into(), Value::Number(Number::infinity(true))),
                ("b".into(), Value::Unknown(crate::value::Type::Number)),
            ]),
            Value::object(vec![
                (
                    "a".into(),
                    Value::tuple(vec![Value::Unknown(crate::value::Type::Bool)]),
                ),
                ("b".into(), Value::Number(Number::infinity(true))),
            ]),
            Value::object(vec![("n".into(), Value::Number(huge))]),
            deep_list,
            deep_obj,
        ];
        for v in bad {
            let Err(want) = prost_bytes(&v) else {
                panic!("value_to_struct accepts a bad value")
            };
            let mut b = ResponseBuilder::new(&v1::RunFunctionRequest::default());
            b.set_resource_value(
                "ok".into(),
                &Value::object(vec![("a".into(), Value::int(1))]),
            )
            .unwrap();
            assert_eq!(b.set_resource_value("r".into(), &v), Err(want), "{v:?}");
            // A refused body leaves the builder as it was.
            assert!(!b.has_resource("r"));
            let mut expect = ResponseBuilder::new(&v1::RunFunctionRequest::default());
            expect
                .set_resource_value(
                    "ok".into(),
                    &Value::object(vec![("a".into(), Value::int(1))]),
                )
                .unwrap();
            assert_eq!(b.finish_encoded(), expect.finish_encoded());
        }
    }

    /// A request whose desired state already holds resources, a composite with status and
    /// connection details, and context.
    fn upstream_request() -> v1::RunFunctionRequest {
        let body =
            |n: i64| value_to_struct(&Value::object(vec![("n".into(), Value::int(n))])).unwrap();
        let mut resources = std::collections::HashMap::new();
        for (name, ready) in [("kept", 1), ("replaced", 2), ("empty", 0)] {
            resources.insert(
                name.to_string(),
                v1::Resource {
                    resource: (name != "empty").then(|| body(ready.into())),
                    connection_details: [("u".to_string(), b"p".to_vec())].into_iter().collect(),
                    ready,
                },
            );
        }
        resources.insert("default".to_string(), v1::Resource::default());
        v1::RunFunctionRequest {
            meta: Some(v1::RequestMeta {
                tag: "tag".into(),
                capabilities: vec![],
            }),
            desired: Some(v1::State {
                composite: Some(v1::Resource {
                    resource: Some(body(9)),
                    ..Default::default()
                }),
                resources,
            }),
            context: Some(body(4)),
            ..Default::default()
        }
    }

    #[test]
    fn whole_response_decodes_to_finish() {
        let req = upstream_request();
        let mut b = ResponseBuilder::new(&req);
        for (i, v) in sample_bodies().into_iter().enumerate() {
            b.set_resource_value(format!("body-{i}").into(), &v)
                .unwrap();
        }
        b.set_resource_value("replaced".into(), &Value::object(vec![]))
            .unwrap();
        assert!(b.set_ready("replaced", Ready::True));
        assert!(b.set_ready("kept", Ready::False));
        assert!(b.set_ready("body-1", Ready::False));
        // Values then messages and back, under one name.
        b.set_resource_value("twice".into(), &Value::object(vec![]))
            .unwrap();
        b.set_resource("twice", prost_types::Struct::default());
        b.set_resource("thrice", prost_types::Struct::default());
        b.set_resource_value(
            "thrice".into(),
            &Value::object(vec![("t".into(), Value::int(3))]),
        )
        .unwrap();
        b.merge_composite_status(Value::object(vec![("s".into(), Value::int(1))]));
        b.merge_composite_connection([("c".to_string(), b"1".to_vec())]);
        b.set_context("k", value_to_proto(&Value::string("v")).unwrap());
        b.add_requirement(
            "req",
            v1::ResourceSelector {
                api_version: "v1".into(),
                kind: "ConfigMap".into(),
                r#match: Some(v1::resource_selector::Match::MatchName("x".into())),
                ..Default::default()
            },
        );
        b.add_result(Severity::Warning, "w", Some("why"));
        b.add_condition("C", Status::ConditionFalse, "R", None);
        let bytes = b.finish_encoded();
        let rsp = b.clone().finish();
        let decoded =
            <v1::RunFunctionResponse as prost::Message>::decode(bytes.as_slice()).unwrap();
        assert_eq!(decoded, rsp);
        assert_eq!(bytes.len(), prost::Message::encoded_len(&rsp));
        let d = rsp.desired.as_ref().unwrap();
        assert_eq!(d.resources["replaced"].ready, Ready::True as i32);
        assert!(d.resources["replaced"].connection_details.is_empty());
        assert_eq!(d.resources["kept"].ready, Ready::False as i32);
        assert_eq!(d.resources["twice"].resource, Some(Default::default()));
        assert_eq!(d.resources["default"], v1::Resource::default());
        // Deterministic: the same builder writes the same bytes.
        assert_eq!(b.finish_encoded(), bytes);
    }

    /// The status written straight from its value merges into the request's desired
    /// composite exactly as the message path merges it: recursively where both hold an
    /// object, this step's value winning anything else, the composite's other fields,
    /// connection details and readiness kept.
    #[test]
    fn composite_status_is_written_as_finish_merges_it() {
        let upstream = |status: Option<Value>, details: &[(&str, &[u8])], ready: i32| {
            let mut body = vec![
                ("apiVersion".into(), Value::string("v1")),
                ("zzz".into(), Value::tuple(vec![Value::int(1), Value::NULL])),
            ];
            body.extend(status.map(|s| ("status".into(), s)));
            let mut resource = value_to_struct(&Value::object(body)).unwrap();
            // A Value without a kind is left out of its map entry by prost.
            resource
                .fields
                .insert("nokind".into(), prost_types::Value::default());
            v1::RunFunctionRequest {
                desired: Some(v1::State {
                    composite: Some(v1::Resource {
                        resource: Some(resource),
                        connection_details: details
                            .iter()
                            .map(|(k, v)| (k.to_string(), v.to_vec()))
                            .collect(),
                        ready,
                    }),
                    ..Default::default()
                }),
                ..Default::default()
            }
        };
        let ours = Value::object(vec![
            (
                "nested".into(),
                Value::object(vec![
                    ("keep".into(), Value::int(2)),
                    (
                        "deep".into(),
                        Value::object(vec![("x".into(), Value::int(1))]),
                    ),
                ]),
            ),
            ("leaf".into(), Value::string("ours")),
            (
                "flat".into(),
                Value::object(vec![("o".into(), Value::Bool(true))]),
            ),
            ("".into(), Value::string("empty key")),
            (
                "arns".into(),
                Value::object(
                    (0..300)
                        .map(|i| (format!("svc-{i:03}").into(), Value::string("pending")))
                        .collect(),
                ),
            ),
        ]);
        let theirs = Value::object(vec![
            (
                "nested".into(),
                Value::object(vec![
                    ("other".into(), Value::string("kept")),
                    (
                        "deep".into(),
                        Value::object(vec![("y".into(), Value::int(2))]),
                    ),
                    ("keep".into(), Value::string("replaced")),
                ]),
            ),
            (
                "leaf".into(),
                Value::object(vec![("o".into(), Value::NULL)]),
            ),
            ("flat".into(), Value::int(5)),
            ("upstream".into(), Value::Bool(false)),
        ]);
        let requests = [
            upstream(None, &[], 0),
            upstream(Some(theirs.clone()), &[("a", b"1")], 1),
            upstream(
                Some(theirs.clone()),
                &[("b", b"2"), ("a", b""), ("", b"3")],
                2,
            ),
            upstream(Some(Value::string("not an object")), &[], 0),
            v1::RunFunctionRequest::default(),
        ];
        for (i, req) in requests.iter().enumerate() {
            let mut b = ResponseBuilder::new(req);
            b.merge_composite_status(ours.clone());
            b.merge_composite_connection([("c".to_string(), b"9".to_vec())]);
            b.ensure_desired();
            let bytes = b.finish_encoded();
            let rsp = b.clone().finish();
            let decoded =
                <v1::RunFunctionResponse as prost::Message>::decode(bytes.as_slice()).unwrap();
            assert_eq!(decoded, rsp, "request {i}");
            assert_eq!(
                bytes.len(),
                prost::Message::encoded_len(&rsp),
                "request {i}"
            );
            let composite = rsp.desired.as_ref().unwrap().composite.as_ref().unwrap();
            if composite.connection_details.len() <= 1 {
                // One map entry at most: prost's order is fixed, so are its bytes.
                assert_eq!(bytes, prost::Message::encode_to_vec(&rsp), "request {i}");
            }
            let status = &composite.resource.as_ref().unwrap().fields["status"];
            let Some(Kind::StructValue(status)) = &status.kind else {
                panic!("request {i}: status is not an object");
            };
            assert!(status.fields.contains_key("arns"));
            if i == 1 {
                assert!(status.fields.contains_key("upstream"));
                let Some(Kind::StructValue(nested)) = &status.fields["nested"].kind else {
                    panic!("nested");
                };
                assert_eq!(nested.fields.len(), 3);
                assert_eq!(n(&nested.fields["keep"]), 2.0);
            }
        }
        // A second status merges over the first.
        let mut b = ResponseBuilder::new(&requests[1]);
        b.merge_composite_status(Value::object(vec![("leaf".into(), Value::int(1))]));
        b.merge_composite_status(ours);
        let bytes = b.finish_encoded();
        let rsp = b.finish();
        assert_eq!(
            <v1::RunFunctionResponse as prost::Message>::decode(bytes.as_slice()).unwrap(),
            rsp
        );
    }

    #[test]
    fn one_resource_is_byte_identical_to_prost() {
        // With at most one entry in every protocol map, prost's order is fixed too.
        let mut b = ResponseBuilder::new(&v1::RunFunctionRequest {
            meta: Some(v1::RequestMeta {
                tag: "t".into(),
                capabilities: vec![],
            }),
            ..Default::default()
        });
        b.set_resource_value("only".into(), &sample_bodies().swap_remove(1))
            .unwrap();
        b.set_ready("only", Ready::True);
        b.add_result(Severity::Normal, "ok", None);
        let rsp = b.clone().finish();
        assert_eq!(b.finish_encoded(), prost::Message::encode_to_vec(&rsp));
        let empty = ResponseBuilder::new(&v1::RunFunctionRequest::default());
        assert_eq!(
            empty.finish_encoded(),
            prost::Message::encode_to_vec(&empty.clone().finish())
        );
    }

    #[test]
    fn varint_lengths_match_prost() {
        for v in [0u64, 1, 127, 128, 16383, 16384, u32::MAX as u64, u64::MAX] {
            let mut buf = Vec::new();
            wire::put_varint(&mut buf, v);
            assert_eq!(buf.len(), wire::varint_len(v), "{v}");
            let mut p = Vec::new();
            prost::encode_length_delimiter(v as usize, &mut p).unwrap();
            assert_eq!(buf, p, "{v}");
        }
    }

    /// Results and conditions written by hand are prost's bytes, for empty and fixed
    /// texts, a present empty reason or message, and every severity and status.
    #[test]
    fn results_and_conditions_encode_as_prost() {
        use prost::Message as _;
        let mut b = ResponseBuilder::new(&v1::RunFunctionRequest::default());
        b.push_result(
            Severity::Normal,
            "hcl module executed successfully".into(),
            None,
        );
        b.push_result(Severity::Warning, "".into(), Some("".into()));
        b.add_result(Severity::Fatal, String::from("m"), Some("r"));
        b.push_result(Severity::Unspecified, "x".into(), None);
        b.push_condition(
            "FullyResolved".into(),
            Status::ConditionTrue,
            "".into(),
            None,
        );
        b.push_condition(
            "".into(),
            Status::ConditionUnspecified,
            "r".into(),
            Some("".into()),
        );
        b.add_condition("T", Status::ConditionFalse, "R", Some("long ".repeat(40)));
        let bytes = b.finish_encoded();
        let rsp = b.finish();
        assert_eq!(rsp.results.len(), 4);
        assert_eq!(rsp.conditions.len(), 3);
        assert_eq!(bytes, rsp.encode_to_vec());
    }
}
