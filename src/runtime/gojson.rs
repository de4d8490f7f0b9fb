//! Values as the Go implementation holds what its `composite status`, `composite
//! connection` and `context` blocks produce: each value through `ctyjson.Marshal` and
//! `json.Unmarshal` into `any`, and the objects merged by function-hcl's `unify`. Here the
//! round trip's errors, its equality and `unify` are computed on the values themselves,
//! without building the JSON trees (the status of a 200-item collection is merged from 200
//! objects on every request).

use crate::protocol::doc::Json;
use crate::protocol::response::{ValueError, json_f64, proto_number};
use crate::value::number::Number;
use crate::value::{Fields, Str, Value};
use std::collections::BTreeMap;

/// True if the round trip accepts `v` (nothing unknown, every number a finite float64):
/// one walk, no allocation.
pub fn encodes_as_json(v: &Value) -> bool {
    match v {
        Value::Unknown(_) => false,
        Value::Number(n) => number_encodes_as_json(n),
        Value::List(s) | Value::Set(s) | Value::Tuple(s) => s.items.iter().all(encodes_as_json),
        Value::Map(f) | Value::Object(f) => f.entries.iter().all(|(_, x)| encodes_as_json(x)),
        Value::Null(_) | Value::Bool(_) | Value::String(_) => true,
    }
}

/// True if the round trip accepts the number `n` (finite, and a finite float64 as Go's
/// JSON decoder reads cty's text of it).
pub fn number_encodes_as_json(n: &Number) -> bool {
    proto_number(n).is_ok()
}

/// The round trip's error for `v`, None when it converts. `ctyjson.Marshal` walks the whole
/// value before `json.Unmarshal` reads a number, so an unknown or an infinity anywhere is
/// reported before a number too large for a float64, wherever that is; each is the first
/// in the order both walk (entries by key, elements in order).
pub fn round_trip_error(v: &Value) -> Option<ValueError> {
    if encodes_as_json(v) {
        return None;
    }
    marshal_error(v).or_else(|| float_range_error(v))
}

/// `ctyjson.Marshal`'s error: an unknown value or an infinity.
fn marshal_error(v: &Value) -> Option<ValueError> {
    match v {
        Value::Unknown(_) => Some(ValueError::Unknown),
        Value::Number(n) if n.is_infinite() => Some(ValueError::Infinity),
        Value::List(s) | Value::Set(s) | Value::Tuple(s) => s.items.iter().find_map(marshal_error),
        Value::Map(f) | Value::Object(f) => f.entries.iter().find_map(|(_, x)| marshal_error(x)),
        _ => None,
    }
}

/// `json.Unmarshal`'s error for a number beyond float64.
fn float_range_error(v: &Value) -> Option<ValueError> {
    match v {
        Value::Number(n) if !json_f64(n).is_finite() => {
            Some(ValueError::OutOfRange(n.to_cty_string()))
        }
        Value::List(s) | Value::Set(s) | Value::Tuple(s) => {
            s.items.iter().find_map(float_range_error)
        }
        Value::Map(f) | Value::Object(f) => {
            f.entries.iter().find_map(|(_, x)| float_range_error(x))
        }
        _ => None,
    }
}

/// `v` as Go holds it after the round trip (the tests' reference for the value paths).
#[cfg(test)]
pub fn to_json(v: &Value) -> Result<Json, ValueError> {
    match round_trip_error(v) {
        Some(e) => Err(e),
        None => Ok(json_of(v)),
    }
}

/// [`to_json`] of a value the round trip accepts.
fn json_of(v: &Value) -> Json {
    match v {
        Value::Null(_) | Value::Unknown(_) => Json::Null,
        Value::Bool(b) => Json::Bool(*b),
        Value::Number(n) => Json::Number(json_f64(n)),
        Value::String(s) => Json::String(s.to_string()),
        Value::List(s) | Value::Set(s) | Value::Tuple(s) => {
            Json::Array(s.items.iter().map(json_of).collect())
        }
        Value::Map(f) | Value::Object(f) => {
            let mut m = BTreeMap::new();
            for (k, x) in &f.entries {
                m.insert(k.to_string(), json_of(x));
            }
            Json::Object(m)
        }
    }
}

/// What `json.Unmarshal` of a value into `map[string]any` (function-hcl's
/// `attributesToValueMap`) gives: `Ok(true)` an object, `Ok(false)` null (no object), or the
/// error message, stage included: the marshal error first, then a top-level value that is
/// not an object (decoding skips it whole), then a number beyond float64.
pub fn go_object_check(v: &Value) -> Result<bool, String> {
    if encodes_as_json(v) && matches!(v, Value::Object(_) | Value::Map(_)) {
        return Ok(true);
    }
    if let Some(m) = marshal_error(v) {
        return Err(format!("error marshaling cty value: {m}"));
    }
    let kind = match v {
        Value::Null(_) => return Ok(false),
        Value::Object(_) | Value::Map(_) => None,
        Value::List(_) | Value::Set(_) | Value::Tuple(_) => Some("array"),
        Value::String(_) => Some("string"),
        Value::Number(_) => Some("number"),
        _ => Some("bool"),
    };
    if let Some(kind) = kind {
        return Err(format!(
            "error unmarshaling cty value: json: cannot unmarshal {kind} into Go value of type map[string]interface {{}}"
        ));
    }
    match float_range_error(v) {
        Some(e) => Err(format!("error unmarshaling cty value: {e}")),
        None => Ok(true),
    }
}

/// The object [`go_object_check`] accepts, as Go holds it (None for null).
pub fn to_go_object(v: &Value) -> Result<Option<BTreeMap<String, Json>>, String> {
    if !go_object_check(v)? {
        return Ok(None);
    }
    match json_of(v) {
        Json::Object(m) => Ok(Some(m)),
        _ => Ok(None),
    }
}

/// The kinds of value the round trip produces (Go's dynamic types in `any`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Null,
    Bool,
    Number,
    String,
    Array,
    Object,
}

fn kind(v: &Value) -> Kind {
    match v {
        Value::Null(_) | Value::Unknown(_) => Kind::Null,
        Value::Bool(_) => Kind::Bool,
        Value::Number(_) => Kind::Number,
        Value::String(_) => Kind::String,
        Value::List(_) | Value::Set(_) | Value::Tuple(_) => Kind::Array,
        Value::Map(_) | Value::Object(_) => Kind::Object,
    }
}

/// `reflect.TypeOf(x)` printed with `%s`, as `unify`'s message shows it (a nil type is
/// fmt's `%!s(<nil>)`).
fn go_type_text(k: Kind) -> &'static str {
    match k {
        Kind::Null => "%!s(<nil>)",
        Kind::Bool => "bool",
        Kind::Number => "float64",
        Kind::String => "string",
        Kind::Array => "[]interface {}",
        Kind::Object => "map[string]interface {}",
    }
}

/// Go's `reflect.DeepEqual` of two values after the round trip: numbers as float64s,
/// every null alike, lists, sets and tuples as arrays, maps and objects as maps.
pub fn json_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Null(_) | Value::Unknown(_), Value::Null(_) | Value::Unknown(_)) => true,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::Number(x), Value::Number(y)) => json_f64(x) == json_f64(y),
        (Value::String(x), Value::String(y)) => x == y,
        (
            Value::List(x) | Value::Set(x) | Value::Tuple(x),
            Value::List(y) | Value::Set(y) | Value::Tuple(y),
        ) => {
            x.items.len() == y.items.len()
                && x.items.iter().zip(&y.items).all(|(p, q)| json_equal(p, q))
        }
        (Value::Map(x) | Value::Object(x), Value::Map(y) | Value::Object(y)) => {
            let (x, y) = (json_entries(x), json_entries(y));
            x.len() == y.len()
                && x.iter()
                    .zip(y.iter())
                    .all(|((kx, vx), (ky, vy))| kx == ky && json_equal(vx, vy))
        }
        _ => false,
    }
}

/// An object's entries as Go's map holds them: by key, a later duplicate winning (values
/// keep their entries that way already; anything else is put in that order).
fn json_entries(f: &Fields) -> std::borrow::Cow<'_, [(Str, Value)]> {
    if f.sorted_unique() {
        return std::borrow::Cow::Borrowed(&f.entries);
    }
    let mut entries = f.entries.to_vec();
    crate::value::sort_dedup_entries(&mut entries);
    std::borrow::Cow::Owned(entries)
}

/// function-hcl's `unify` of objects (anything else is ignored): objects merge key by key,
/// recursively; a key's non-object values must be equal (Go's `reflect.DeepEqual`) and of
/// one type. The first conflict, in the objects' order and then by key, is the error:
/// `type mismatch for key a.b:  T1 v/s T2` or `values for key a.b not equal`. Go merges
/// a nested level as `unifyObjects(path, new, existing)`, so the two types of a mismatch
/// swap places at every level: the new value's type first at the top, the merged one's
/// first a level down, and so on.
///
/// Every object's entries at one level are merged at once (one sort of all of them, then
/// each key once), so n objects of one entry each cost n log n, not n².
pub fn unify(objs: &[Value]) -> Result<Value, String> {
    let objects: Vec<(usize, &Fields)> = objs
        .iter()
        .enumerate()
        .filter_map(|(j, v)| match v {
            Value::Object(f) | Value::Map(f) => Some((j, &**f)),
            _ => None,
        })
        .collect();
    // One object merges with nothing: it is the result as it is (the usual composite
    // status of a single resource). A map goes the general way, which makes it an object.
    if let [(j, _)] = objects[..]
        && let Some(v @ Value::Object(_)) = objs.get(j)
    {
        return Ok(v.clone());
    }
    let mut u = Unifier {
        path: Vec::new(),
        conflict: None,
    };
    let merged = u.level(&objects);
    match u.conflict {
        Some((_, message)) => Err(message),
        None => Ok(merged),
    }
}

struct Unifier {
    /// The keys down to the level being merged.
    path: Vec<Str>,
    /// The first conflict: the index of the object that meets it, and the message.
    conflict: Option<(usize, String)>,
}

impl Unifier {
    /// Merges one level of `objects` (each with the index of the object it came from).
    fn level(&mut self, objects: &[(usize, &Fields)]) -> Value {
        let mut all: Vec<(&Str, usize, &Value)> =
            Vec::with_capacity(objects.iter().map(|(_, f)| f.entries.len()).sum());
        for &(j, f) in objects {
            for (k, v) in &f.entries {
                all.push((k, j, v));
            }
        }
        // Stable: within a key, the objects stay in order.
        all.sort_by(|a, b| a.0.cmp(b.0));
        // At most one entry per entry seen: grown from nothing, the 200 keys of a
        // collection's statuses were copied seven times.
        let mut out: Vec<(Str, Value)> = Vec::with_capacity(all.len());
        for group in all.chunk_by(|a, b| a.0 == b.0) {
            // An object holding a key twice (values do not) keeps the later, as Go's map.
            let deduped: Vec<(&Str, usize, &Value)>;
            let group = if group.windows(2).any(|w| w[0].1 == w[1].1) {
                deduped = group
                    .iter()
                    .zip(group.iter().skip(1).map(Some).chain([None]))
                    .filter(|(e, next)| next.is_none_or(|n| n.1 != e.1))
                    .map(|(e, _)| *e)
                    .collect();
                &deduped[..]
            } else {
                group
            };
            let &(key, _, first) = &group[0];
            if group.len() == 1 {
                out.push((key.clone(), first.clone()));
                continue;
            }
            self.path.push(key.clone());
            let merged = if kind(first) == Kind::Object {
                let mut subs = Vec::with_capacity(group.len());
                for &(_, j, v) in group {
                    match v {
                        Value::Object(f) | Value::Map(f) => subs.push((j, &**f)),
                        _ => self.mismatch(j, kind(v), Kind::Object),
                    }
                }
                self.level(&subs)
            } else {
                for &(_, j, v) in &group[1..] {
                    if kind(v) != kind(first) {
                        self.mismatch(j, kind(v), kind(first));
                    } else if !json_equal(v, first) {
                        self.note(j, |p| format!("values for key {p} not equal"));
                    }
                }
                first.clone()
            };
            self.path.pop();
            out.push((key.clone(), merged));
        }
        Value::object_sorted(out)
    }

    /// A type conflict of object `j`'s value (`new`) with what the objects before it
    /// merged to (`acc`) at the current path.
    fn mismatch(&mut self, j: usize, new: Kind, acc: Kind) {
        // Top level (one key in the path): Go's message names the new type first.
        let (a, b) = if self.path.len() % 2 == 1 {
            (new, acc)
        } else {
            (acc, new)
        };
        self.note(j, |p| {
            format!(
                "type mismatch for key {p}:  {} v/s {}",
                go_type_text(a),
                go_type_text(b)
            )
        });
    }

    /// Keeps the conflict of object `j` if no earlier object has one: Go stops at the
    /// first object that conflicts.
    fn note(&mut self, j: usize, message: impl FnOnce(&str) -> String) {
        if self.conflict.as_ref().is_none_or(|(at, _)| j < *at) {
            let path: Vec<&str> = self.path.iter().map(|k| &**k).collect();
            self.conflict = Some((j, message(&path.join("."))));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::doc::parse_json;
    use crate::value::number::Number;

    /// A value from JSON text (objects, arrays, numbers, strings, bools, null).
    fn v(text: &str) -> Value {
        fn conv(j: &Json) -> Value {
            match j {
                Json::Null => Value::NULL,
                Json::Bool(b) => Value::Bool(*b),
                Json::Number(n) => Value::Number(Number::from_f64(*n).expect("finite")),
                Json::String(s) => Value::string(s.as_str()),
                Json::Array(a) => Value::tuple(a.iter().map(conv).collect()),
                Json::Object(m) => Value::object(
                    m.iter()
                        .map(|(k, x)| (Str::from(k.as_str()), conv(x)))
                        .collect(),
                ),
            }
        }
        conv(&parse_json(text).expect("json"))
    }

    fn unify_text(objs: &[&str]) -> Result<Json, String> {
        let objs: Vec<Value> = objs.iter().map(|t| v(t)).collect();
        unify(&objs).map(|u| to_json(&u).expect("converts"))
    }

    #[test]
    fn unify_merges_and_reports_conflicts() {
        let a = r#"{"shared": {"owner": "a", "x": 1}}"#;
        assert_eq!(
            unify_text(&[a, r#"{"shared": {"owner": "a", "y": 2}}"#]).unwrap(),
            parse_json(r#"{"shared": {"owner": "a", "x": 1, "y": 2}}"#).unwrap()
        );
        assert_eq!(
            unify_text(&[a, r#"{"shared": {"owner": "b"}}"#]).unwrap_err(),
            "values for key shared.owner not equal"
        );
        assert_eq!(
            unify_text(&[a, r#"{"shared": "flat"}"#]).unwrap_err(),
            "type mismatch for key shared:  string v/s map[string]interface {}"
        );
        assert_eq!(unify_text(&[]).unwrap(), parse_json("{}").unwrap());
    }

    /// Go merges a nested level as `unifyObjects(path, new, existing)`: the types of a
    /// mismatch swap places at every level down.
    #[test]
    fn mismatch_types_swap_at_every_level() {
        let cases = [
            (r#"{"a": 1}"#, r#"{"a": "x"}"#, "a:  string v/s float64"),
            (
                r#"{"a": {"b": 1}}"#,
                r#"{"a": {"b": "x"}}"#,
                "a.b:  float64 v/s string",
            ),
            (
                r#"{"a": {"b": {"c": 1}}}"#,
                r#"{"a": {"b": {"c": "x"}}}"#,
                "a.b.c:  string v/s float64",
            ),
            (
                r#"{"a": {"b": {"c": {"d": [1]}}}}"#,
                r#"{"a": {"b": {"c": {"d": {}}}}}"#,
                "a.b.c.d:  []interface {} v/s map[string]interface {}",
            ),
            (
                r#"{"a": null}"#,
                r#"{"a": true}"#,
                "a:  bool v/s %!s(<nil>)",
            ),
        ];
        for (first, second, want) in cases {
            assert_eq!(
                unify_text(&[first, second]).unwrap_err(),
                format!("type mismatch for key {want}"),
                "{first} {second}"
            );
        }
        // Three objects: the merged value stands for the earlier two.
        assert_eq!(
            unify_text(&[
                r#"{"a": {"b": 1}}"#,
                r#"{"a": {"c": 2}}"#,
                r#"{"a": {"c": "x"}}"#
            ])
            .unwrap_err(),
            "type mismatch for key a.c:  float64 v/s string"
        );
    }

    /// The conflict reported is the first object's that conflicts, then the first by key.
    #[test]
    fn the_first_conflicting_object_is_reported() {
        let objs = [
            r#"{"z": 1, "m": {"k": 1}}"#,
            r#"{"z": 1, "m": {"k": 1}, "a": 1}"#,
            r#"{"z": 2, "m": {"k": 1}}"#,
            r#"{"a": "s", "m": {"k": 2}}"#,
        ];
        assert_eq!(unify_text(&objs).unwrap_err(), "values for key z not equal");
        assert_eq!(
            unify_text(&[objs[0], objs[1], objs[3], objs[2]]).unwrap_err(),
            "type mismatch for key a:  string v/s float64"
        );
        assert_eq!(
            unify_text(&[objs[0], r#"{"m": {"k": 2}, "z": 3}"#]).unwrap_err(),
            "values for key m.k not equal"
        );
    }

    #[test]
    fn one_object_unifies_to_itself() {
        // The shortcut for one object gives what merging it with an equal copy gives.
        for text in [
            r#"{}"#,
            r#"{"arns": {"svc-000": "pending"}, "n": null}"#,
            r#"{"l": [1, {"a": [true]}], "m": {"k": {"j": 0.5}}, "s": "x"}"#,
        ] {
            let o = v(text);
            let json = |x: &Value| to_json(x).expect("converts");
            let alone = unify(std::slice::from_ref(&o)).unwrap();
            assert!(matches!(alone, Value::Object(_)), "{text}");
            assert_eq!(json(&alone), json(&o), "{text}");
            let twice = unify(&[o.clone(), o.clone()]).unwrap();
            assert_eq!(json(&twice), json(&alone), "{text}");
            let among = unify(&[Value::string("ignored"), o.clone()]).unwrap();
            assert_eq!(json(&among), json(&alone), "{text}");
        }
    }

    #[test]
    fn equal_leaves_merge_as_go_compares_them() {
        // Arrays compare element by element (objects inside too), numbers as float64s,
        // nulls of any type alike.
        let ok = [
            r#"{"l": [1, {"a": [true]}], "n": null, "f": 0.5}"#,
            r#"{"l": [1.0, {"a": [true]}], "n": null, "f": 0.50}"#,
        ];
        assert_eq!(
            unify_text(&ok).unwrap(),
            parse_json(r#"{"l": [1, {"a": [true]}], "n": null, "f": 0.5}"#).unwrap()
        );
        let typed_null = Value::object(vec![("n".into(), Value::Null(crate::value::Type::String))]);
        assert!(unify(&[typed_null, v(r#"{"n": null}"#)]).is_ok());
        for other in [
            r#"{"l": [1, {"a": [false]}]}"#,
            r#"{"l": [1]}"#,
            r#"{"l": [1, {"a": [true], "b": 1}]}"#,
        ] {
            assert_eq!(
                unify_text(&[ok[0], other]).unwrap_err(),
                "values for key l not equal"
            );
        }
        // 1/3 and its float64 are one number once they are float64s.
        let third = Number::from_i64(1).div(&Number::from_i64(3)).unwrap();
        let exact = Value::object(vec![("t".into(), Value::Number(third))]);
        let float = Value::object(vec![(
            "t".into(),
            Value::Number(Number::from_f64(1.0 / 3.0).unwrap()),
        )]);
        assert!(unify(&[exact, float]).is_ok());
    }

    #[test]
    fn many_objects_of_one_key_each() {
        let objs: Vec<Value> = (0..500)
            .rev()
            .map(|i| {
                v(&format!(
                    r#"{{"arns": {{"svc-{i:03}": "pending"}}, "count": 1}}"#
                ))
            })
            .collect();
        let u = to_json(&unify(&objs).unwrap()).unwrap();
        let arns = u.get("arns").and_then(|a| match a {
            Json::Object(m) => Some(m.len()),
            _ => None,
        });
        assert_eq!(arns, Some(500));
        assert_eq!(u.get("count"), Some(&Json::Number(1.0)));
    }

    #[test]
    fn round_trip_errors_in_gos_order() {
        let inf = Value::Number(Number::infinity(false));
        let huge = Value::Number(Number::parse("1e400").expect("parses"));
        let unknown = Value::Unknown(crate::value::Type::Number);
        let error = |v: &Value| round_trip_error(v).map(|e| e.to_string());
        let marshal = |m: &str| Some(m.to_string());
        // Marshalling fails before decoding reads any number.
        let v1 = Value::object(vec![("a".into(), huge.clone()), ("b".into(), inf.clone())]);
        assert_eq!(error(&v1), marshal("cannot serialize infinity as JSON"));
        let v2 = Value::tuple(vec![unknown.clone(), inf.clone()]);
        assert_eq!(error(&v2), marshal("value is not known"));
        let v3 = Value::tuple(vec![Value::int(1), huge.clone()]);
        let text = Number::parse("1e400").expect("parses").to_cty_string();
        assert_eq!(
            round_trip_error(&v3),
            Some(ValueError::OutOfRange(text.clone()))
        );
        assert_eq!(
            error(&v3),
            Some(format!(
                "json: cannot unmarshal number {text} into Go value of type float64"
            ))
        );
        assert_eq!(round_trip_error(&Value::int(1)), None);
        for (x, ok) in [
            (&v1, false),
            (&v2, false),
            (&v3, false),
            (&Value::NULL, true),
        ] {
            assert_eq!(encodes_as_json(x), ok);
            assert_eq!(to_json(x).is_ok(), ok);
        }
        // As a status body: marshal error, then a top level that is not an object, then a
        // number beyond float64.
        assert_eq!(
            go_object_check(&Value::tuple(vec![huge.clone()])).unwrap_err(),
            "error unmarshaling cty value: json: cannot unmarshal array into Go value of type map[string]interface {}"
        );
        assert_eq!(
            go_object_check(&Value::tuple(vec![inf])).unwrap_err(),
            "error marshaling cty value: cannot serialize infinity as JSON"
        );
        assert!(
            go_object_check(&Value::object(vec![("n".into(), huge)]))
                .unwrap_err()
                .starts_with("error unmarshaling cty value: json: cannot unmarshal number ")
        );
        assert_eq!(go_object_check(&Value::NULL), Ok(false));
        assert_eq!(go_object_check(&v(r#"{"a": [1]}"#)), Ok(true));
        assert_eq!(
            go_object_check(&Value::Bool(true)).unwrap_err(),
            "error unmarshaling cty value: json: cannot unmarshal bool into Go value of type map[string]interface {}"
        );
    }
}
