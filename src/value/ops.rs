//! Operations on values with cty's and hcl's exact semantics: `Value.Equals`, sets in cty's
//! iteration order, and hcl's index and attribute access with its diagnostic texts.

use crate::text::quote::go_quote;
use crate::value::convert::convert;
use crate::value::{Str, Type, Value, meter};
use std::cmp::Ordering;
use std::collections::HashMap;

/// cty `Value.Equals`: a Bool, or an unknown Bool when unknowns make it undecidable. Nulls of
/// any type are equal to each other; values of different types are never equal (a list is
/// not equal to a tuple with the same elements); numbers compare by value.
pub fn equals(a: &Value, b: &Value) -> Value {
    match (a.is_unknown(), b.is_unknown()) {
        (true, true) => return Value::Unknown(Type::Bool),
        (false, true) | (true, false) => {
            let (known, unknown) = if a.is_unknown() { (b, a) } else { (a, b) };
            let ut = unknown.type_of();
            if known.is_null() || !ut.is_known_type() {
                return Value::Unknown(Type::Bool);
            }
            if !known.has_type(&ut) {
                return Value::Bool(false);
            }
            return Value::Unknown(Type::Bool);
        }
        _ => {}
    }
    match (a.is_null(), b.is_null()) {
        (true, true) => return Value::Bool(true),
        (true, false) | (false, true) => return Value::Bool(false),
        _ => {}
    }
    if !wholly_known_type(a) || !wholly_known_type(b) {
        let (ta, tb) = (a.type_of(), b.type_of());
        if !could_conform(&ta, &tb) {
            return Value::Bool(false);
        }
        return Value::Unknown(Type::Bool);
    }
    if !a.same_type(b) {
        return Value::Bool(false);
    }
    match equal_same_type(a, b) {
        Some(r) => Value::Bool(r),
        None => Value::Unknown(Type::Bool),
    }
}

/// Equality of two known, non-null values of the same type; None if unknown.
fn equal_same_type(a: &Value, b: &Value) -> Option<bool> {
    fn elem(x: &Value, y: &Value) -> Option<bool> {
        match equals(x, y) {
            Value::Bool(r) => Some(r),
            _ => None,
        }
    }
    Some(match (a, b) {
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::Number(x), Value::Number(y)) => x == y,
        (Value::String(x), Value::String(y)) => x == y,
        (Value::List(x), Value::List(y)) | (Value::Tuple(x), Value::Tuple(y)) => {
            if x.items.len() != y.items.len() {
                return Some(false);
            }
            meter::walked(x.items.len());
            for (p, q) in x.items.iter().zip(&y.items) {
                if !elem(p, q)? {
                    return Some(false);
                }
            }
            true
        }
        (Value::Map(x), Value::Map(y)) | (Value::Object(x), Value::Object(y)) => {
            if x.entries.len() != y.entries.len() {
                return Some(false);
            }
            meter::walked(x.entries.len());
            for ((ka, va), (kb, vb)) in x.entries.iter().zip(&y.entries) {
                if ka != kb || !elem(va, vb)? {
                    return Some(false);
                }
            }
            true
        }
        (Value::Set(x), Value::Set(y)) => {
            meter::walked(x.items.len());
            let (mx, my) = (Members::new(&x.items), Members::new(&y.items));
            x.items.iter().all(|e| my.contains(e)) && y.items.iter().all(|e| mx.contains(e))
        }
        _ => false,
    })
}

/// cty's `HasWhollyKnownType`: no unknown of dynamic type anywhere inside.
fn wholly_known_type(v: &Value) -> bool {
    match v {
        Value::Null(_) => true,
        Value::Unknown(t) => t.is_known_type(),
        Value::List(s) | Value::Set(s) | Value::Tuple(s) => {
            meter::walked(s.items.len());
            s.items.iter().all(wholly_known_type)
        }
        Value::Map(f) | Value::Object(f) => {
            meter::walked(f.entries.len());
            f.entries.iter().all(|(_, x)| wholly_known_type(x))
        }
        _ => true,
    }
}

/// Whether two types could still become the same once their dynamic parts are known.
fn could_conform(a: &Type, b: &Type) -> bool {
    match (a, b) {
        (Type::Dynamic, _) | (_, Type::Dynamic) => true,
        (Type::List(x), Type::List(y))
        | (Type::Set(x), Type::Set(y))
        | (Type::Map(x), Type::Map(y)) => could_conform(x, y),
        (Type::Tuple(x), Type::Tuple(y)) => {
            x.len() == y.len() && x.iter().zip(y.iter()).all(|(p, q)| could_conform(p, q))
        }
        (Type::Object(x), Type::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y.iter())
                    .all(|((ka, ta), (kb, tb))| ka == kb && could_conform(ta, tb))
        }
        _ => a == b,
    }
}

/// True when `v` is certainly equal to some element of `items` (cty's set `Has`:
/// unknowns are never equivalent).
pub fn seq_has(items: &[Value], v: &Value) -> bool {
    items
        .iter()
        .any(|x| matches!(equals(x, v), Value::Bool(true)))
}

/// Set membership (cty `set.Has` / Terraform's `contains` on a set): Bool, or unknown when an
/// unknown element makes it undecidable.
pub fn set_has(set: &Value, v: &Value) -> Value {
    let Some(items) = set.as_seq() else {
        return Value::Bool(false);
    };
    let mut unknown = false;
    for x in items {
        match equals(x, v) {
            Value::Bool(true) => return Value::Bool(true),
            Value::Bool(false) => {}
            _ => unknown = true,
        }
    }
    if unknown {
        Value::Unknown(Type::Bool)
    } else {
        Value::Bool(false)
    }
}

/// A set of `elem` values from `items` (which must all be of type `elem`, or nulls/unknowns
/// of it), with duplicates removed and in the order cty iterates sets.
pub fn make_set(elem: Type, items: Vec<Value>) -> Value {
    let mut uniq: Vec<(u32, Vec<u8>, Value)> = Vec::with_capacity(items.len());
    // Equal values serialize identically, so duplicates are only searched among entries
    // with the same serialization.
    let mut by_key: HashMap<Vec<u8>, Vec<usize>> = HashMap::with_capacity(items.len());
    for v in items {
        let bytes = set_hash_bytes(&v);
        let same = by_key.entry(bytes.clone()).or_default();
        if !v.is_unknown()
            && same
                .iter()
                .any(|&k| matches!(equals(&uniq[k].2, &v), Value::Bool(true)))
        {
            continue;
        }
        same.push(uniq.len());
        let h = crc32(&bytes);
        uniq.push((h, bytes, v));
    }
    // Go iterates buckets in ascending hash order, each in insertion order, then sorts
    // stably with setRules.Less.
    uniq.sort_by_key(|e| e.0);
    uniq.sort_by(|a, b| set_order(&elem, (&a.1, &a.2), (&b.1, &b.2)));
    Value::set_ordered(elem, uniq.into_iter().map(|e| e.2).collect())
}

/// Membership tests against a fixed collection of values in near-constant time (cty's set
/// `Has`: `Equals` is true; unknowns never match).
pub struct Members<'a> {
    items: Vec<&'a Value>,
    by_key: HashMap<Vec<u8>, Vec<usize>>,
}

impl<'a> Members<'a> {
    pub fn new(items: &'a [Value]) -> Members<'a> {
        let mut m = Members {
            items: Vec::with_capacity(items.len()),
            by_key: HashMap::with_capacity(items.len()),
        };
        for v in items {
            let key = set_hash_bytes(v);
            m.by_key.entry(key).or_default().push(m.items.len());
            m.items.push(v);
        }
        m
    }

    pub fn contains(&self, v: &Value) -> bool {
        self.by_key.get(&set_hash_bytes(v)).is_some_and(|ix| {
            ix.iter()
                .any(|&i| matches!(equals(self.items[i], v), Value::Bool(true)))
        })
    }

    /// Add `v` unless an equal value is already present; true if it was added.
    pub fn insert(&mut self, v: &'a Value) -> bool {
        let key = set_hash_bytes(v);
        let items = &self.items;
        let same = self.by_key.entry(key).or_default();
        if same
            .iter()
            .any(|&i| matches!(equals(items[i], v), Value::Bool(true)))
        {
            return false;
        }
        same.push(self.items.len());
        self.items.push(v);
        true
    }
}

/// cty's `setRules.Less` as an ordering (Equal when neither is less).
fn set_order(elem: &Type, (ab, a): (&[u8], &Value), (bb, b): (&[u8], &Value)) -> Ordering {
    if set_less(elem, (ab, a), (bb, b)) {
        Ordering::Less
    } else if set_less(elem, (bb, b), (ab, a)) {
        Ordering::Greater
    } else {
        Ordering::Equal
    }
}

fn set_less(elem: &Type, (ab, a): (&[u8], &Value), (bb, b): (&[u8], &Value)) -> bool {
    if a.raw_equals(b) {
        return false;
    }
    if b.is_null() && !a.is_null() {
        return true;
    } else if a.is_null() {
        return false;
    }
    if !a.is_unknown() && b.is_unknown() {
        return true;
    } else if a.is_unknown() {
        return false;
    }
    match (elem, a, b) {
        (Type::String, Value::String(x), Value::String(y)) => x.as_bytes() < y.as_bytes(),
        (Type::Bool, Value::Bool(_), Value::Bool(y)) => *y || !a.as_bool().unwrap_or(false),
        (Type::Number, Value::Number(x), Value::Number(y)) => x < y,
        _ => ab < bb,
    }
}

/// The order cty gives two elements of one set type (for sorting helpers): strings by bytes,
/// numbers by value, false before true, nulls and unknowns last, others by cty's set-hash
/// serialization.
pub fn cmp_set_elems(elem: &Type, a: &Value, b: &Value) -> Ordering {
    let (ab, bb) = (set_hash_bytes(a), set_hash_bytes(b));
    set_order(elem, (&ab, a), (&bb, b))
}

/// cty's `appendSetHashBytes` serialization.
fn set_hash_bytes(v: &Value) -> Vec<u8> {
    let mut buf = Vec::new();
    append_hash_bytes(v, &mut buf);
    buf
}

fn append_hash_bytes(v: &Value, buf: &mut Vec<u8>) {
    match v {
        Value::Unknown(_) => buf.push(b'?'),
        Value::Null(_) => buf.push(b'~'),
        Value::Number(n) => buf.extend_from_slice(n.text(b'g', 10).as_bytes()),
        Value::Bool(b) => buf.push(if *b { b'T' } else { b'F' }),
        Value::String(s) => buf.extend_from_slice(go_quote(s).as_bytes()),
        Value::Map(f) => {
            meter::walked(f.entries.len());
            buf.push(b'{');
            for (k, x) in &f.entries {
                buf.extend_from_slice(go_quote(k).as_bytes());
                buf.push(b':');
                append_hash_bytes(x, buf);
                buf.push(b';');
            }
            buf.push(b'}');
        }
        Value::List(s) | Value::Set(s) => {
            meter::walked(s.items.len());
            buf.push(b'[');
            for x in &s.items {
                append_hash_bytes(x, buf);
                buf.push(b';');
            }
            buf.push(b']');
        }
        Value::Object(f) => {
            meter::walked(f.entries.len());
            buf.push(b'<');
            for (_, x) in &f.entries {
                append_hash_bytes(x, buf);
                buf.push(b';');
            }
            buf.push(b'>');
        }
        Value::Tuple(s) => {
            meter::walked(s.items.len());
            buf.push(b'<');
            for x in &s.items {
                append_hash_bytes(x, buf);
                buf.push(b';');
            }
            buf.push(b'>');
        }
    }
}

/// CRC-32 (IEEE), as Go's `crc32.ChecksumIEEE`, which cty uses to bucket set elements.
fn crc32(data: &[u8]) -> u32 {
    let mut crc = 0xffff_ffffu32;
    for &b in data {
        crc ^= u32::from(b);
        for _ in 0..8 {
            let mask = (crc & 1).wrapping_neg();
            crc = (crc >> 1) ^ (0xedb8_8320 & mask);
        }
    }
    !crc
}

/// An hcl diagnostic's summary and detail.
use crate::syntax::diag::Text;

pub type OpError = (&'static str, Text);

const INVALID_INDEX: &str = "Invalid index";

fn invalid_index(detail: impl Into<Text>) -> OpError {
    (INVALID_INDEX, detail.into())
}

/// hcl's `Index(collection, key)`: `collection[key]` with hcl's rules and messages.
pub fn index(collection: &Value, key: &Value) -> Result<Value, OpError> {
    if collection.is_null() {
        return Err((
            "Attempt to index null value",
            "This value is null, so it does not have any indices.".into(),
        ));
    }
    if key.is_null() {
        return Err(invalid_index("Can't use a null value as an indexing key."));
    }
    // Fast path (as in `get_attr`): an element that is there, found without computing the
    // collection's deep type; misses, conversions and unknowns take the typed path below.
    match (collection, key) {
        (Value::List(s) | Value::Tuple(s), Value::Number(n)) => {
            if let Some(v) = n
                .to_i64()
                .and_then(|i| usize::try_from(i).ok())
                .and_then(|i| s.items.get(i))
            {
                return Ok(v.clone());
            }
        }
        (Value::Map(f) | Value::Object(f), Value::String(k)) => {
            if let Some(v) = f.get_key(k) {
                return Ok(v.clone());
            }
        }
        _ => {}
    }
    let ty = collection.type_of();
    let kty = key.type_of();
    if kty == Type::Dynamic || ty == Type::Dynamic {
        return Ok(Value::Unknown(Type::Dynamic));
    }
    match &ty {
        Type::List(_) | Type::Tuple(_) | Type::Map(_) => {
            let want = if matches!(ty, Type::Map(_)) {
                Type::String
            } else {
                Type::Number
            };
            let key = convert(key, &want).map_err(|e| {
                invalid_index(format!(
                    "The given key does not identify an element in this collection value: {e}."
                ))
            })?;
            if collection.is_unknown() || key.is_unknown() {
                return Ok(match &ty {
                    Type::Tuple(_) => Value::Unknown(Type::Dynamic),
                    other => Value::Unknown(other.element_type().cloned().unwrap_or(Type::Dynamic)),
                });
            }
            match (collection, &key) {
                (Value::Map(f), Value::String(k)) => f.get_key(k).cloned().ok_or_else(|| {
                    invalid_index(
                        "The given key does not identify an element in this collection value.",
                    )
                }),
                (Value::List(s) | Value::Tuple(s), Value::Number(n)) => {
                    let len = s.items.len();
                    if let Some(i) = n.to_i64()
                        && i >= 0
                        && let Some(v) = usize::try_from(i).ok().and_then(|i| s.items.get(i))
                    {
                        return Ok(v.clone());
                    }
                    let detail = if !n.is_integer() && !n.is_infinite() {
                        "The given key does not identify an element in this collection value: indexing a sequence requires a whole number, but the given index has a fractional part."
                    } else if n.signum() < 0 {
                        "The given key does not identify an element in this collection value: a negative number is not a valid index for a sequence."
                    } else if n.is_infinite() {
                        "The given key does not identify an element in this collection value."
                    } else if len == 0 {
                        "The given key does not identify an element in this collection value: the collection has no elements."
                    } else {
                        "The given key does not identify an element in this collection value: the given index is greater than or equal to the length of the collection."
                    };
                    Err(invalid_index(detail))
                }
                _ => Err(invalid_index(
                    "The given key does not identify an element in this collection value.",
                )),
            }
        }
        Type::Object(attrs) => {
            let was_number = kty == Type::Number;
            let key = convert(key, &Type::String).map_err(|e| {
                invalid_index(format!(
                    "The given key does not identify an element in this collection value: {e}."
                ))
            })?;
            let Value::String(name) = &key else {
                return Ok(Value::Unknown(Type::Dynamic));
            };
            let Some((_, aty)) = attrs.iter().find(|(k, _)| k == name) else {
                let suggestion = if was_number {
                    " An object only supports looking up attributes by name, not by numeric index."
                } else {
                    ""
                };
                return Err(invalid_index(format!(
                    "The given key does not identify an element in this collection value.{suggestion}"
                )));
            };
            Ok(object_attr(collection, name, aty))
        }
        Type::Set(_) => Err(invalid_index(
            "Elements of a set are identified only by their value and don't have any separate index or key to select with, so it's only possible to perform operations across all elements of the set.",
        )),
        _ => Err(invalid_index("This value does not have any indices.")),
    }
}

/// Attribute `name` of `obj`, an object whose type gives the attribute the type `aty`:
/// an unknown of that type when `obj` is unknown.
#[inline]
fn object_attr(obj: &Value, name: &str, aty: &Type) -> Value {
    if obj.is_unknown() {
        return Value::Unknown(aty.clone());
    }
    obj.get_attr(name)
        .cloned()
        .unwrap_or(Value::Unknown(Type::Dynamic))
}

/// hcl's `GetAttr(obj, name)`: `obj.name` with hcl's rules and messages.
pub fn get_attr(obj: &Value, name: &Str) -> Result<Value, OpError> {
    // `DynamicVal` (what a failed step leaves: every later step meets it) answers itself
    // before anything is looked up.
    if let Value::Unknown(Type::Dynamic) = obj {
        return Ok(Value::Unknown(Type::Dynamic));
    }
    if obj.is_null() {
        return Err((
            "Attempt to get attribute from null value",
            "This value is null, so it does not have any attributes.".into(),
        ));
    }
    // Fast path: a known object or map that has the attribute answers without computing
    // its type, which walks the whole value (`req.composite.x` would cost the size of the
    // XR on every access). Everything else, errors included, takes the typed path below.
    if let Value::Object(f) | Value::Map(f) = obj
        && let Some(v) = f.get_key(name)
    {
        return Ok(v.clone());
    }
    const UNSUPPORTED: &str = "Unsupported attribute";
    let ty = obj.type_of();
    match &ty {
        Type::Object(attrs) => {
            let Some((_, aty)) = attrs.iter().find(|(k, _)| &**k == name) else {
                return Err((
                    UNSUPPORTED,
                    format!(
                        "This object does not have an attribute named {}.",
                        go_quote(name)
                    )
                    .into(),
                ));
            };
            Ok(object_attr(obj, name, aty))
        }
        Type::Map(e) => {
            if obj.is_unknown() {
                return Ok(Value::Unknown((**e).clone()));
            }
            obj.get_attr(name).cloned().ok_or_else(|| {
                (
                    "Missing map element",
                    format!(
                        "This map does not have an element with the key {}.",
                        go_quote(name)
                    )
                    .into(),
                )
            })
        }
        Type::Dynamic => Ok(Value::Unknown(Type::Dynamic)),
        Type::List(e) if matches!(**e, Type::Object(_)) => {
            let has = matches!(&**e, Type::Object(a) if a.iter().any(|(k, _)| &**k == name));
            Err((
                UNSUPPORTED,
                if has {
                    format!(
                        "Can't access attributes on a list of objects. Did you mean to access attribute {} for a specific element of the list, or across all elements of the list?",
                        go_quote(name)
                    )
                    .into()
                } else {
                    "Can't access attributes on a list of objects. Did you mean to access an attribute for a specific element of the list, or across all elements of the list?".into()
                },
            ))
        }
        Type::Set(e) if matches!(**e, Type::Object(_)) => Err((
            UNSUPPORTED,
            "Can't access attributes on a set of objects. Did you mean to access an attribute across all elements of the set?".into(),
        )),
        t if t.is_primitive() => Err((
            UNSUPPORTED,
            format!(
                "Can't access attributes on a primitive-typed value ({}).",
                t.friendly_name()
            )
            .into(),
        )),
        _ => Err((
            UNSUPPORTED,
            "This value does not have any attributes.".into(),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::test_util::strs;

    #[test]
    fn an_attribute_of_dynamic_val_is_dynamic_val_without_a_diagnostic() {
        let r = get_attr(&Value::Unknown(Type::Dynamic), &Str::from("any"));
        assert!(matches!(r, Ok(Value::Unknown(Type::Dynamic))));
    }

    fn s(x: &str) -> Value {
        Value::string(x)
    }

    #[test]
    fn crc32_matches_go() {
        assert_eq!(crc32(b""), 0);
        assert_eq!(crc32(b"123456789"), 0xcbf4_3926);
    }

    #[test]
    fn equality() {
        assert!(matches!(
            equals(&Value::int(5), &Value::int(5)),
            Value::Bool(true)
        ));
        assert!(matches!(
            equals(&s("5"), &Value::int(5)),
            Value::Bool(false)
        ));
        let t = Value::tuple(vec![Value::int(1), Value::int(2)]);
        let l = Value::list(Type::Number, vec![Value::int(1), Value::int(2)]);
        assert!(matches!(equals(&t, &l), Value::Bool(false)));
        assert!(matches!(equals(&t, &t.clone()), Value::Bool(true)));
        assert!(matches!(
            equals(&Value::NULL, &Value::Null(Type::String)),
            Value::Bool(true)
        ));
        assert!(matches!(equals(&Value::NULL, &s("")), Value::Bool(false)));
        assert!(equals(&Value::Unknown(Type::String), &s("a")).is_unknown());
        assert!(matches!(
            equals(&Value::Unknown(Type::String), &Value::int(1)),
            Value::Bool(false)
        ));
    }

    #[test]
    fn set_order_primitives() {
        let v = make_set(
            Type::String,
            vec![s("b"), s("a"), s("b"), s("B"), s("_"), s("Z")],
        );
        assert_eq!(strs(&v), ["B", "Z", "_", "a", "b"]);
        let n = make_set(
            Type::Number,
            vec![Value::int(3), Value::int(1), Value::int(20), Value::int(2)],
        );
        let got: Vec<i64> = n
            .as_seq()
            .unwrap()
            .iter()
            .map(|x| x.as_number().unwrap().to_i64().unwrap())
            .collect();
        assert_eq!(got, [1, 2, 3, 20]);
        let b = make_set(Type::Bool, vec![Value::Bool(true), Value::Bool(false)]);
        assert!(b.as_seq().unwrap()[0].raw_equals(&Value::Bool(false)));
        let e = make_set(Type::Dynamic, vec![]);
        assert_eq!(e.type_of(), Type::set(Type::Dynamic));
        let with_null = make_set(Type::String, vec![Value::Null(Type::String), s("a")]);
        assert!(with_null.as_seq().unwrap()[1].is_null());
    }

    #[test]
    fn set_order_composites() {
        // toset([{ b = 1 }, { a = 2 }]) is a set of map(number): {a=2} first.
        let m1 = Value::map(Type::Number, vec![("b".into(), Value::int(1))]);
        let m2 = Value::map(Type::Number, vec![("a".into(), Value::int(2))]);
        let v = make_set(Type::map(Type::Number), vec![m1, m2.clone()]);
        assert!(v.as_seq().unwrap()[0].raw_equals(&m2));
        // toset([["b"], ["a", "z"], ["a"]]): [["a","z"], ["a"], ["b"]] (`"a";"z"` < `"a";]`).
        let l = |xs: &[&str]| Value::list(Type::String, xs.iter().map(|x| s(x)).collect());
        let v = make_set(
            Type::list(Type::String),
            vec![l(&["b"]), l(&["a", "z"]), l(&["a"])],
        );
        let items = v.as_seq().unwrap();
        assert!(items[0].raw_equals(&l(&["a", "z"])));
        assert!(items[1].raw_equals(&l(&["a"])));
        assert!(items[2].raw_equals(&l(&["b"])));
    }

    #[test]
    fn membership() {
        let v = make_set(Type::String, vec![s("a")]);
        assert!(matches!(set_has(&v, &s("a")), Value::Bool(true)));
        assert!(matches!(set_has(&v, &s("b")), Value::Bool(false)));
    }

    #[test]
    fn indexing() {
        let t = Value::tuple(vec![s("a"), s("b")]);
        assert!(index(&t, &Value::int(1)).unwrap().raw_equals(&s("b")));
        assert!(index(&t, &s("0")).unwrap().raw_equals(&s("a")));
        assert_eq!(
            index(&t, &Value::int(5)).unwrap_err().1,
            "The given key does not identify an element in this collection value: the given index is greater than or equal to the length of the collection."
        );
        assert_eq!(
            index(&t, &Value::int(-1)).unwrap_err().1,
            "The given key does not identify an element in this collection value: a negative number is not a valid index for a sequence."
        );
        assert_eq!(
            index(&Value::tuple(vec![]), &Value::int(0)).unwrap_err().1,
            "The given key does not identify an element in this collection value: the collection has no elements."
        );
        assert_eq!(
            index(&t, &s("x")).unwrap_err().1,
            "The given key does not identify an element in this collection value: a number is required."
        );
        let o = Value::object(vec![("a".into(), Value::int(1))]);
        assert!(index(&o, &s("a")).unwrap().raw_equals(&Value::int(1)));
        assert_eq!(
            index(&o, &Value::int(0)).unwrap_err().1,
            "The given key does not identify an element in this collection value. An object only supports looking up attributes by name, not by numeric index."
        );
        assert_eq!(
            index(&Value::NULL, &s("a")).unwrap_err().0,
            "Attempt to index null value"
        );
        assert_eq!(
            index(&s("x"), &s("a")).unwrap_err().1,
            "This value does not have any indices."
        );
    }

    #[test]
    fn attributes() {
        let o = Value::object(vec![("a".into(), Value::int(1))]);
        assert!(
            get_attr(&o, &Str::from("a"))
                .unwrap()
                .raw_equals(&Value::int(1))
        );
        assert_eq!(
            get_attr(&o, &Str::from("x")).unwrap_err(),
            (
                "Unsupported attribute",
                "This object does not have an attribute named \"x\".".into()
            )
        );
        let m = Value::map(Type::Number, vec![("a".into(), Value::int(1))]);
        assert_eq!(
            get_attr(&m, &Str::from("b")).unwrap_err().0,
            "Missing map element"
        );
        assert_eq!(
            get_attr(&Value::int(1), &Str::from("b")).unwrap_err().1,
            "Can't access attributes on a primitive-typed value (number)."
        );
        assert_eq!(
            get_attr(&Value::NULL, &Str::from("b")).unwrap_err().0,
            "Attempt to get attribute from null value"
        );
    }
}
