//! Building the RunFunctionResponse: value → `google.protobuf.Struct` conversion and a
//! [`ResponseBuilder`] that starts from the request (as function-sdk-go's `response.To`
//! does) and takes what the evaluator produces.
//!
//! Values leave the program the way Go's `ctyjson.Marshal` + `json.Unmarshal` send them:
//! objects and maps become Structs, lists, sets and tuples become lists, numbers become
//! the float64 Go's JSON decoder reads from cty's decimal text ([`json_f64`]), and an
//! infinity is the error `cannot serialize infinity as JSON`.

use crate::proto::v1;
use crate::request::MAX_DEPTH;
use crate::value::Value;
use prost_types::value::Kind;
use std::fmt;

/// The float64 a number becomes when it leaves the program. Go marshals the cty number as
/// its shortest decimal text at the number's own precision and `json.Unmarshal` parses that
/// text, so the result is the double nearest to the text, which can differ from the double
/// nearest to the exact value (`pow(2, 64)` leaves as 18446744073709549568, not 2^64).
/// Integers that fit a double exactly take the fast path.
pub fn json_f64(n: &crate::number::Number) -> f64 {
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
    to_proto_at(v, 0)
}

/// An object or map value as a `google.protobuf.Struct` (resource bodies, status, context).
pub fn value_to_struct(v: &Value) -> Result<prost_types::Struct, ValueError> {
    match v {
        Value::Object(f) | Value::Map(f) => fields_to_struct(&f.entries, 1),
        Value::Unknown(_) => Err(ValueError::Unknown),
        other => Err(ValueError::NotAnObject(other.type_of().friendly_name())),
    }
}

fn fields_to_struct(
    entries: &[(crate::value::Str, Value)],
    depth: usize,
) -> Result<prost_types::Struct, ValueError> {
    if depth > MAX_DEPTH {
        return Err(ValueError::TooDeep);
    }
    let mut fields = std::collections::BTreeMap::new();
    for (k, x) in entries {
        fields.insert(k.to_string(), to_proto_at(x, depth)?);
    }
    Ok(prost_types::Struct { fields })
}

fn to_proto_at(v: &Value, depth: usize) -> Result<prost_types::Value, ValueError> {
    let kind = match v {
        Value::Unknown(_) => return Err(ValueError::Unknown),
        Value::Null(_) => Kind::NullValue(0),
        Value::Bool(b) => Kind::BoolValue(*b),
        Value::String(s) => Kind::StringValue(s.to_string()),
        Value::Number(n) => {
            if n.is_infinite() {
                return Err(ValueError::Infinity);
            }
            let f = json_f64(n);
            if f.is_infinite() {
                return Err(ValueError::OutOfRange(n.to_cty_string()));
            }
            Kind::NumberValue(f)
        }
        Value::List(s) | Value::Set(s) | Value::Tuple(s) => {
            if depth + 1 > MAX_DEPTH {
                return Err(ValueError::TooDeep);
            }
            let mut values = Vec::with_capacity(s.items.len());
            for x in &s.items {
                values.push(to_proto_at(x, depth + 1)?);
            }
            Kind::ListValue(prost_types::ListValue { values })
        }
        Value::Map(f) | Value::Object(f) => {
            Kind::StructValue(fields_to_struct(&f.entries, depth + 1)?)
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
/// program produced; [`ResponseBuilder::finish`] returns the response.
#[derive(Clone, Debug)]
pub struct ResponseBuilder {
    rsp: v1::RunFunctionResponse,
}

impl ResponseBuilder {
    /// The response skeleton for `req`.
    pub fn new(req: &v1::RunFunctionRequest) -> Self {
        ResponseBuilder { rsp: skeleton(req) }
    }

    /// Adds or replaces the desired composed resource `name` (its readiness is reset).
    pub fn set_resource(&mut self, name: &str, body: prost_types::Struct) {
        let desired = self.desired();
        desired.resources.insert(
            name.to_string(),
            v1::Resource {
                resource: Some(body),
                ..Default::default()
            },
        );
    }

    /// Sets the readiness of a desired resource; false if there is no such resource.
    pub fn set_ready(&mut self, name: &str, ready: Ready) -> bool {
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
        self.rsp
            .desired
            .as_ref()
            .is_some_and(|d| d.resources.contains_key(name))
    }

    /// Merges this step's (already unified) composite status into the desired composite's
    /// `status`: objects merge recursively and this step wins a conflicting leaf.
    pub fn merge_composite_status(&mut self, status: prost_types::Struct) {
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
        composite.connection_details.extend(details);
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
        self.rsp.results.push(v1::Result {
            severity: severity as i32,
            message: message.into(),
            reason: reason.map(str::to_string),
            target: Some(Target::Composite as i32),
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
        self.rsp.conditions.push(v1::Condition {
            r#type: type_.to_string(),
            status: status as i32,
            reason: reason.to_string(),
            message,
            target: Some(Target::Composite as i32),
        });
    }

    /// Makes sure the response has a desired state (Go's merge always sets one, so a
    /// successful response carries `"desired": {}` even when nothing is desired).
    pub fn ensure_desired(&mut self) {
        self.desired();
    }

    /// The response built so far (for inspection).
    pub fn response(&self) -> &v1::RunFunctionResponse {
        &self.rsp
    }

    /// The finished response.
    pub fn finish(self) -> v1::RunFunctionResponse {
        self.rsp
    }

    fn desired(&mut self) -> &mut v1::State {
        self.rsp.desired.get_or_insert_with(Default::default)
    }
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

#[cfg(test)]
mod tests {

    #[test]
    fn numbers_leave_through_ctys_decimal_text() {
        use crate::number::Number;
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
    use crate::number::Number;

    fn n(v: &prost_types::Value) -> f64 {
        match v.kind {
            Some(Kind::NumberValue(f)) => f,
            _ => panic!("not a number: {v:?}"),
        }
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
        b.merge_composite_status(
            value_to_struct(&Value::object(vec![
                ("over".into(), Value::int(2)),
                ("new".into(), Value::int(3)),
            ]))
            .unwrap(),
        );
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
        assert!(b.response().desired.is_none());
        b.ensure_desired();
        let rsp = b.finish();
        assert_eq!(rsp.desired, Some(v1::State::default()));
        let json = crate::protojson::response_to_json(&rsp).unwrap();
        assert_eq!(
            json.get("desired"),
            Some(&crate::protojson::Json::Object(Default::default()))
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
}
