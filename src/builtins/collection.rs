//! Built-in functions: collections (cty stdlib and Terraform 1.5.7 `lang/funcs`). Many of
//! these compute their result type from their argument types (a tuple in, a tuple out; a
//! list in, a list out; objects merged to objects), and those observable types are kept
//! exactly as cty produces them.

use super::{FuncDef, FuncError};
use crate::text::quote::go_quote;
use crate::text::unicode::grapheme_count;
use crate::value::convert::{convert, unify_unsafe};
use crate::value::number::Number;
use crate::value::ops::{Members, equals, make_set};
use crate::value::{Kind, Str, Type, Value, merge_runs};
use std::collections::HashMap;
use std::collections::hash_map::Entry;

/// gocty's conversion of a number to a Go `int`.
pub(crate) fn to_int(n: &Number) -> Result<i64, String> {
    n.to_i64().ok_or_else(|| {
        "value must be a whole number, between -9223372036854775808 and 9223372036854775807"
            .to_string()
    })
}

/// The error of a function Terraform v0.12 removed (`list`, `map`): what to write instead.
fn removed(name: &str, instead: &str) -> FuncError {
    FuncError::general(format!(
        "the \"{name}\" function was deprecated in Terraform v0.12 and is no longer available; use {instead} syntax to write a literal {name}"
    ))
}

fn arg(args: &[Value], i: usize) -> Result<&Value, FuncError> {
    args.get(i)
        .ok_or_else(|| FuncError::general("not enough arguments"))
}

fn items(v: &Value) -> &[Value] {
    v.as_seq().unwrap_or(&[])
}

fn elem_type(t: &Type) -> Type {
    t.element_type().cloned().unwrap_or(Type::Dynamic)
}

fn num_arg(args: &[Value], i: usize) -> Result<&Number, FuncError> {
    arg(args, i)?
        .as_number()
        .ok_or_else(|| FuncError::arg(i, "number required"))
}

/// The collection functions.
pub static FUNCS: &[FuncDef] = funcs! {
    alltrue(list: List(Bool)),
    anytrue(list: List(Bool)),
    chunklist(list: List(Any), size: Number),
    coalesce(..vals?: Any),
    coalescelist(..vals?: Any),
    compact(list: List(String)),
    concat(..seqs: Any),
    contains(list: Any, value: Any),
    distinct(list: List(Any)),
    element(list: Any, index: Number),
    flatten(list: Any),
    index(list: Any, value: Any),
    keys(inputMap: Any),
    length(value: Any),
    list(..vals?: Any) => |_| Err(removed("list", "tolist([ ... ])")),
    lookup(inputMap: Any, key: String, ..default?: Any),
    map(..vals?: Any) => |_| Err(removed("map", "tomap({ ... })")),
    matchkeys(values: List(Any), keys: List(Any), searchset: List(Any)),
    merge(..maps?: Any),
    one(list: Any),
    range(..params: Number),
    reverse(list: Any),
    setintersection(first_set: Set(Any), ..other_sets: Set(Any)) => |a| set_op(a, SetOp::Intersection),
    setproduct(..sets: Any),
    setsubtract(a: Set(Any), b: Set(Any)) => |a| set_op(a, SetOp::Subtract),
    setunion(first_set: Set(Any), ..other_sets: Set(Any)) => |a| set_op(a, SetOp::Union),
    slice(list: Any, start_index: Number, end_index: Number),
    sort(list: List(String)),
    sum(list: Any),
    transpose(values: Map(List(String))),
    values(mapping: Any),
    zipmap(keys: List(String), values: Any),
};

fn alltrue(args: &[Value]) -> Result<Value, FuncError> {
    let list = arg(args, 0)?;
    for v in items(list) {
        match v {
            Value::Unknown(_) => return Ok(Value::Unknown(Type::Bool)),
            Value::Bool(true) => {}
            _ => return Ok(Value::Bool(false)),
        }
    }
    Ok(Value::Bool(true))
}

/// A search that found nothing: `false`, or an unknown bool when an unknown element
/// might have matched.
fn false_unless_unknown(unknown: bool) -> Value {
    if unknown {
        Value::Unknown(Type::Bool)
    } else {
        Value::Bool(false)
    }
}

fn anytrue(args: &[Value]) -> Result<Value, FuncError> {
    let list = arg(args, 0)?;
    let mut unknown = false;
    for v in items(list) {
        match v {
            Value::Unknown(_) => unknown = true,
            Value::Bool(true) => return Ok(Value::Bool(true)),
            _ => {}
        }
    }
    Ok(false_unless_unknown(unknown))
}

fn chunklist(args: &[Value]) -> Result<Value, FuncError> {
    let list = arg(args, 0)?;
    let xs = items(list);
    let lt = list.type_of();
    let size =
        to_int(num_arg(args, 1)?).map_err(|e| FuncError::general(format!("invalid size: {e}")))?;
    if size < 0 {
        return Err(FuncError::general("the size argument must be positive"));
    }
    if xs.is_empty() {
        return Ok(Value::list(lt, Vec::new()));
    }
    if size == 0 {
        return Ok(Value::list(lt, vec![list.clone()]));
    }
    let size = usize::try_from(size).unwrap_or(usize::MAX);
    let ety = elem_type(&lt);
    // The chunks and the elements copied into them, charged before they are made
    // (`chunklist(l, 1)` makes two elements of each).
    let chunks = xs.len().div_ceil(size);
    crate::value::meter::elements("chunklist", (chunks + xs.len()) as u64)?;
    let chunks: Vec<Value> = xs
        .chunks(size)
        .map(|c| Value::list(ety.clone(), c.to_vec()))
        .collect();
    Ok(Value::list(lt, chunks))
}

fn coalesce(args: &[Value]) -> Result<Value, FuncError> {
    let tys: Vec<Type> = args.iter().map(Value::type_of).collect();
    let Some(ret) = unify_unsafe(&tys) else {
        return Err(FuncError::general("all arguments must have the same type"));
    };
    for a in args {
        let v = convert(a, &ret).unwrap_or_else(|_| a.clone());
        if v.is_null() {
            continue;
        }
        if ret == Type::String && v.as_str() == Some("") {
            continue;
        }
        return Ok(v);
    }
    Err(FuncError::general(
        "no non-null, non-empty-string arguments",
    ))
}

fn coalescelist(args: &[Value]) -> Result<Value, FuncError> {
    if args.is_empty() {
        return Err(FuncError::general("at least one argument is required"));
    }
    for a in args {
        if !matches!(a.type_of(), Type::List(_) | Type::Tuple(_)) {
            return Err(FuncError::general(
                "coalescelist arguments must be lists or tuples",
            ));
        }
    }
    for a in args {
        if a.length().is_some_and(|l| l > 0) {
            return Ok(a.clone());
        }
    }
    Err(FuncError::general("no non-null arguments"))
}

fn compact(args: &[Value]) -> Result<Value, FuncError> {
    let list = arg(args, 0)?;
    let out: Vec<Value> = items(list)
        .iter()
        .filter(|v| matches!(v, Value::String(s) if !s.is_empty()))
        .cloned()
        .collect();
    Ok(Value::list(Type::String, out))
}

fn concat(args: &[Value]) -> Result<Value, FuncError> {
    if args.is_empty() {
        return Err(FuncError::general("at least one argument is required"));
    }
    let tys: Vec<Type> = args.iter().map(Value::type_of).collect();
    if tys.iter().all(|t| matches!(t, Type::List(_)))
        && let Some(common) = unify_unsafe(&tys)
    {
        let mut out = Vec::new();
        for (i, a) in args.iter().enumerate() {
            let l = convert(a, &common).map_err(|e| FuncError::arg(i, e.to_string()))?;
            out.extend(items(&l).iter().cloned());
        }
        return Ok(Value::list(elem_type(&common), out));
    }
    let mut out = Vec::new();
    for (i, (a, t)) in args.iter().zip(&tys).enumerate() {
        match t {
            Type::Tuple(_) | Type::List(_) => out.extend(items(a).iter().cloned()),
            other => {
                return Err(FuncError::arg(
                    i,
                    format!(
                        "all arguments must be lists or tuples; got {}",
                        other.friendly_name()
                    ),
                ));
            }
        }
    }
    Ok(Value::tuple(out))
}

fn contains(args: &[Value]) -> Result<Value, FuncError> {
    let list = arg(args, 0)?;
    let v = arg(args, 1)?;
    // The kind alone (`type_of` would build the whole value's type).
    if !list.kind().is_sequence() {
        return Err(FuncError::general("argument must be list, tuple, or set"));
    }
    if items(list).is_empty() {
        return Ok(Value::Bool(false));
    }
    let mut unknown = false;
    for x in items(list) {
        crate::value::meter::tick("contains")?;
        match equals(v, x) {
            Value::Bool(true) => return Ok(Value::Bool(true)),
            Value::Bool(false) => {}
            _ => unknown = true,
        }
    }
    Ok(false_unless_unknown(unknown))
}

fn distinct(args: &[Value]) -> Result<Value, FuncError> {
    let list = arg(args, 0)?;
    let lt = list.type_of();
    // The first occurrence of each value, in order (cty compares with Equals).
    let xs = items(list);
    let mut seen = Members::new(&[]);
    let mut out: Vec<Value> = Vec::new();
    for v in xs {
        if seen.insert(v) {
            out.push(v.clone());
        }
    }
    Ok(Value::list(elem_type(&lt), out))
}

fn element(args: &[Value]) -> Result<Value, FuncError> {
    let list = arg(args, 0)?;
    // The kind alone decides (`type_of` would build a tuple's whole type on every call:
    // quadratic for `element(xs, i)` in a `for` over `xs`).
    if !matches!(
        list,
        Value::List(_) | Value::Null(Type::List(_)) | Value::Tuple(_) | Value::Null(Type::Tuple(_))
    ) {
        return Err(FuncError::general(format!(
            "cannot read elements from {}",
            list.type_of().friendly_name()
        )));
    }
    let idx =
        to_int(num_arg(args, 1)?).map_err(|e| FuncError::general(format!("invalid index: {e}")))?;
    let xs = items(list);
    if xs.is_empty() {
        return Err(FuncError::general(
            "cannot use element function with an empty list",
        ));
    }
    let l = i64::try_from(xs.len()).unwrap_or(i64::MAX);
    let i = idx.rem_euclid(l);
    Ok(xs[usize::try_from(i).unwrap_or(0)].clone())
}

/// cty's `flattener`: Some(elements) or None when unknowns hide the shape. Each element
/// is charged to the evaluation's meter before it is added (a nest of shared tuples can
/// flatten to far more elements than it holds).
fn flattener(v: &Value, out: &mut Vec<Value>) -> Result<bool, FuncError> {
    let mut known = true;
    for x in items(v) {
        crate::value::meter::tick("flatten")?;
        if matches!(x, Value::Unknown(Type::Dynamic)) {
            known = false;
        }
        // The kind alone: `type_of` would build each element's whole type.
        if !x.is_null() && x.kind().is_sequence() {
            if x.is_unknown() {
                known = false;
                continue;
            }
            if !flattener(x, out)? {
                known = false;
            }
        } else {
            crate::value::meter::elements("flatten", 1)?;
            out.push(x.clone());
        }
    }
    Ok(known)
}

fn flatten(args: &[Value]) -> Result<Value, FuncError> {
    let list = arg(args, 0)?;
    if !list.kind().is_sequence() {
        return Err(FuncError::general(
            "can only flatten lists, sets and tuples",
        ));
    }
    let mut out = Vec::new();
    if !flattener(list, &mut out)? {
        return Ok(Value::Unknown(Type::Dynamic));
    }
    Ok(Value::tuple(out))
}

fn index(args: &[Value]) -> Result<Value, FuncError> {
    let list = arg(args, 0)?;
    let v = arg(args, 1)?;
    if !matches!(list.kind(), Kind::List | Kind::Tuple) {
        return Err(FuncError::general("argument must be a list or tuple"));
    }
    let xs = items(list);
    if xs.is_empty() {
        return Err(FuncError::general("cannot search an empty list"));
    }
    for (i, x) in xs.iter().enumerate() {
        crate::value::meter::tick("index")?;
        match equals(x, v) {
            Value::Bool(true) => return Ok(Value::int(i64::try_from(i).unwrap_or(i64::MAX))),
            Value::Bool(false) => {}
            _ => return Ok(Value::Unknown(Type::Number)),
        }
    }
    Err(FuncError::general("item not found"))
}

fn keys(args: &[Value]) -> Result<Value, FuncError> {
    let m = arg(args, 0)?;
    // A known object: its keys, without building its (value-sized) type.
    if let Value::Object(f) = m {
        let ks = f.entries.iter().map(|(k, _)| Value::String(k.clone()));
        return Ok(Value::tuple(ks.collect()));
    }
    match m.type_of() {
        Type::Object(attrs) => Ok(Value::tuple(
            attrs
                .iter()
                .map(|(k, _)| Value::String(k.clone()))
                .collect(),
        )),
        Type::Map(_) => {
            let ks = m
                .as_fields()
                .unwrap_or(&[])
                .iter()
                .map(|(k, _)| Value::String(k.clone()))
                .collect();
            Ok(Value::list(Type::String, ks))
        }
        _ => Err(FuncError::arg(0, "must have map or object type")),
    }
}

fn length(args: &[Value]) -> Result<Value, FuncError> {
    let v = arg(args, 0)?;
    let count = |n: usize| Value::int(i64::try_from(n).unwrap_or(i64::MAX));
    // A known tuple or object: its length, without building its (value-sized) type.
    match v {
        Value::Tuple(s) => return Ok(count(s.items.len())),
        Value::Object(f) => return Ok(count(f.entries.len())),
        _ => {}
    }
    let t = v.type_of();
    match &t {
        Type::Tuple(ts) => Ok(count(ts.len())),
        Type::Object(attrs) => Ok(count(attrs.len())),
        Type::Dynamic => Ok(Value::Unknown(Type::Number)),
        Type::String => Ok(count(grapheme_count(v.as_str().unwrap_or("")))),
        Type::List(_) | Type::Set(_) | Type::Map(_) => Ok(count(v.length().unwrap_or(0))),
        _ => Err(FuncError::general(
            "argument must be a string, a collection type, or a structural type",
        )),
    }
}

fn lookup(args: &[Value]) -> Result<Value, FuncError> {
    if args.len() > 3 {
        return Err(FuncError::general(format!(
            "lookup() takes two or three arguments, got {}",
            args.len()
        )));
    }
    let m = arg(args, 0)?;
    let key = arg(args, 1)?;
    let default = args.get(2);
    // An object's type is as large as the object: only the attribute's is built (the
    // whole type, built and dropped per call, made `[for k in ks : lookup(o, k)]` 15
    // times slower at 20,000 keys).
    let kind = match m {
        Value::Null(t) | Value::Unknown(t) => t.clone(),
        Value::Object(_) => Type::empty_object(),
        _ => m.type_of(),
    };
    let ret = match kind {
        Type::Object(attrs) => {
            let Some(k) = key.as_str() else {
                return Ok(Value::Unknown(Type::Dynamic));
            };
            let attr = match m {
                Value::Object(f) => f.get(k).map(Value::type_of),
                _ => attrs
                    .iter()
                    .find(|(n, _)| &**n == k)
                    .map(|(_, t)| t.clone()),
            };
            match attr {
                Some(t) => t,
                None => match default {
                    Some(d) => d.type_of(),
                    None => {
                        return Err(FuncError::arg(
                            0,
                            format!("the given object has no attribute {}", go_quote(k)),
                        ));
                    }
                },
            }
        }
        Type::Map(e) => {
            if let Some(d) = default
                && convert(d, &e).is_err()
            {
                return Err(FuncError::arg(
                    2,
                    "the default value must have the same type as the map elements",
                ));
            }
            (*e).clone()
        }
        _ => {
            return Err(FuncError::arg(
                0,
                "lookup() requires a map as the first argument",
            ));
        }
    };
    if m.contains_unknown() {
        return Ok(Value::Unknown(ret));
    }
    let k = key.as_str().unwrap_or("");
    if let Some(v) = m.get_attr(k) {
        return Ok(v.clone());
    }
    match default {
        Some(d) => convert(d, &ret).map_err(|e| FuncError::general(e.to_string())),
        None => Err(FuncError::general(format!("lookup failed to find key {k}"))),
    }
}

fn matchkeys(args: &[Value]) -> Result<Value, FuncError> {
    let values = arg(args, 0)?;
    let keys = arg(args, 1)?;
    let search = arg(args, 2)?;
    let ret = values.type_of();
    let Some(kt) = unify_unsafe(&[keys.type_of(), search.type_of()]) else {
        return Err(FuncError::general(
            "keys and searchset must be of the same type",
        ));
    };
    let ety = elem_type(&ret);
    if items(values).len() != items(keys).len() {
        return Err(FuncError::general(
            "length of keys and values should be equal",
        ));
    }
    let keys = convert(keys, &kt).unwrap_or_else(|_| keys.clone());
    let search = convert(search, &kt).unwrap_or_else(|_| search.clone());
    if items(&search).is_empty() {
        return Ok(Value::list(ety, Vec::new()));
    }
    // A hashed membership test: what cty's scan of keys times searchset gives, without
    // its cost (minutes for 100,000 each). The arguments are wholly known
    // (`unknown_result`).
    let m = Members::new(items(&search));
    let out = items(&keys)
        .iter()
        .zip(items(values))
        .filter(|(k, _)| m.contains(k))
        .map(|(_, v)| v.clone())
        .collect();
    Ok(Value::list(ety, out))
}

fn merge(args: &[Value]) -> Result<Value, FuncError> {
    if args.is_empty() {
        return Ok(Value::object(Vec::new()));
    }
    // The result type, as cty's Type function computes it. Only the outer kind of each
    // argument is needed here (a whole object's type is costly to build).
    let mut dynamic = false;
    for a in args {
        let kind = match a {
            Value::Null(t) | Value::Unknown(t) => t,
            Value::Map(_) | Value::Object(_) => continue,
            _ => &Type::Bool,
        };
        if *kind == Type::Dynamic {
            dynamic = true;
            break;
        }
        if !matches!(kind, Type::Map(_) | Type::Object(_)) {
            return Err(FuncError::general(format!(
                "arguments must be maps or objects, got {}",
                go_quote(&a.type_of().friendly_name())
            )));
        }
    }
    // A map result when every argument has the first one's map type.
    let map_elem = match &args[0] {
        Value::Map(f) if !dynamic => Some(f.elem()),
        Value::Null(Type::Map(e)) if !dynamic => Some(&**e),
        _ => None,
    }
    .filter(|e| {
        args.iter().all(|a| match a {
            Value::Map(f) => *f.elem() == **e,
            Value::Null(Type::Map(x)) => **x == **e,
            _ => false,
        })
    });
    // Every argument's entries are sorted: merge them run by run, a later key winning.
    // The first run stays borrowed until a second one comes, so two arguments (the usual
    // call) are merged straight into one vector. Past two, merging run by run would copy
    // what is merged so far once per argument (quadratic for `merge(many...)`): all the
    // entries are sorted at once instead, the last of equal keys winning.
    fn fields_of(a: &Value) -> Result<&[(Str, Value)], FuncError> {
        a.as_fields().ok_or_else(|| {
            FuncError::general(format!(
                "arguments must be maps or objects, got {}",
                go_quote(&a.type_of().friendly_name())
            ))
        })
    }
    if args.iter().filter(|a| !a.is_null()).count() > 2 {
        let total = args
            .iter()
            .filter_map(Value::as_fields)
            .map(<[_]>::len)
            .sum();
        let mut all: Vec<(Str, Value)> = Vec::with_capacity(total);
        for a in args.iter().filter(|a| !a.is_null()) {
            let fields = fields_of(a)?;
            all.extend(fields.iter().cloned());
        }
        return Ok(match map_elem {
            Some(e) => Value::map(e.clone(), all),
            None => Value::object(all),
        });
    }
    let mut present = args.iter().filter(|a| !a.is_null());
    let out = match (present.next(), present.next()) {
        (None, _) => Vec::new(),
        (Some(a), None) => fields_of(a)?.to_vec(),
        (Some(a), Some(b)) => {
            merge_runs(fields_of(a)?.iter().cloned(), fields_of(b)?.iter().cloned())
        }
    };
    if let Some(e) = map_elem {
        return Ok(Value::map_sorted(e.clone(), out));
    }
    Ok(Value::object_sorted(out))
}

fn one(args: &[Value]) -> Result<Value, FuncError> {
    let v = arg(args, 0)?;
    let bad = || {
        FuncError::arg(
            0,
            "must be a list, set, or tuple value with either zero or one elements",
        )
    };
    let ret = match v.type_of() {
        Type::List(e) | Type::Set(e) => (*e).clone(),
        Type::Tuple(ts) => match ts.len() {
            0 => Type::Dynamic,
            1 => ts[0].clone(),
            _ => return Err(bad()),
        },
        _ => return Err(bad()),
    };
    match items(v) {
        [] => Ok(Value::Null(ret)),
        [x] => Ok(x.clone()),
        _ => Err(bad()),
    }
}

fn range(args: &[Value]) -> Result<Value, FuncError> {
    let nums: Vec<&Number> = (0..args.len())
        .map(|i| num_arg(args, i))
        .collect::<Result<_, _>>()?;
    let zero = Number::from_i64(0);
    let one = Number::from_i64(1);
    let minus_one = Number::from_i64(-1);
    let (start, end, step) = match nums.as_slice() {
        [e] => (
            zero.clone(),
            (*e).clone(),
            if **e < zero { minus_one } else { one },
        ),
        [s, e] => (
            (*s).clone(),
            (*e).clone(),
            if *e < *s { minus_one } else { one },
        ),
        [s, e, st] => ((*s).clone(), (*e).clone(), (*st).clone()),
        _ => {
            return Err(FuncError::general("must have one, two, or three arguments"));
        }
    };
    let down = step < zero;
    if down {
        if end > start {
            return Err(FuncError::arg(
                1,
                "end must be less than start when step is negative",
            ));
        }
    } else if end < start {
        return Err(FuncError::arg(
            1,
            "end must be greater than start when step is positive",
        ));
    }
    // Room for the values when their count is plain (integers; at most the 1,024 allowed,
    // so what is reserved before they are charged is bounded): growing one by one
    // copied the list seven times for `range(200)`.
    let count = match (start.exact_i64(), end.exact_i64(), step.exact_i64()) {
        (Some(a), Some(b), Some(s)) if s != 0 => {
            usize::try_from((i128::from(b) - i128::from(a)) / i128::from(s)).unwrap_or(0)
        }
        _ => 0,
    };
    let mut vals = Vec::with_capacity(count.saturating_add(1).min(1024));
    let mut num = start;
    loop {
        if (down && num <= end) || (!down && num >= end) {
            break;
        }
        if vals.len() >= 1024 {
            return Err(FuncError::general(
                "more than 1024 values were generated; either decrease the difference between start and end or use a smaller step",
            ));
        }
        let next = num
            .add(&step)
            .map_err(|e| FuncError::general(e.to_string()))?;
        // Charged before it is kept, as every builtin's elements are: past the budget the
        // call stops here, naming `range`.
        crate::value::meter::elements("range", 1)?;
        vals.push(Value::Number(num));
        num = next;
    }
    Ok(Value::list(Type::Number, vals))
}

fn reverse(args: &[Value]) -> Result<Value, FuncError> {
    let v = arg(args, 0)?;
    let t = v.type_of();
    let ret = match &t {
        Type::Tuple(ts) => Type::tuple(ts.iter().rev().cloned()),
        Type::List(e) | Type::Set(e) => Type::list((**e).clone()),
        other => {
            return Err(FuncError::arg(
                0,
                format!(
                    "can only reverse list or tuple values, not {}",
                    other.friendly_name()
                ),
            ));
        }
    };
    let out: Vec<Value> = items(v).iter().rev().cloned().collect();
    Ok(match ret {
        Type::Tuple(_) => Value::tuple(out),
        other => Value::list(elem_type(&other), out),
    })
}

#[derive(Clone, Copy, PartialEq)]
enum SetOp {
    Intersection,
    Subtract,
    Union,
}

fn set_op(args: &[Value], op: SetOp) -> Result<Value, FuncError> {
    let mut etys = Vec::new();
    for a in args {
        let e = elem_type(&a.type_of());
        if items(a).is_empty() && e == Type::Dynamic {
            continue;
        }
        etys.push(e);
    }
    let ety = if etys.is_empty() {
        Type::Dynamic
    } else {
        unify_unsafe(&etys).ok_or_else(|| {
            FuncError::general("given sets must all have compatible element types")
        })?
    };
    let ret = Type::set(ety.clone());
    let mut acc: Option<Vec<Value>> = None;
    for (i, a) in args.iter().enumerate() {
        let s = convert(a, &ret).map_err(|e| FuncError::arg(i, e.to_string()))?;
        let xs = items(&s);
        acc = Some(match acc {
            None => xs.to_vec(),
            Some(cur) => match op {
                SetOp::Union => {
                    let mut cur = cur;
                    cur.extend(xs.iter().cloned());
                    cur
                }
                SetOp::Intersection => {
                    let m = Members::new(xs);
                    cur.into_iter().filter(|v| m.contains(v)).collect()
                }
                SetOp::Subtract => {
                    let m = Members::new(xs);
                    cur.into_iter().filter(|v| !m.contains(v)).collect()
                }
            },
        });
    }
    Ok(make_set(ety, acc.unwrap_or_default()))
}

/// The most elements `setproduct` builds (its result is charged to the budgets too).
const MAX_PRODUCT: usize = 1 << 20;

fn setproduct(args: &[Value]) -> Result<Value, FuncError> {
    if args.len() < 2 {
        return Err(FuncError::general("at least two arguments are required"));
    }
    let mut list_count = 0;
    let mut etys = Vec::with_capacity(args.len());
    for (i, a) in args.iter().enumerate() {
        match a.type_of() {
            Type::Set(e) => etys.push((*e).clone()),
            Type::List(e) => {
                etys.push((*e).clone());
                list_count += 1;
            }
            Type::Tuple(ts) => {
                list_count += 1;
                if ts.is_empty() {
                    etys.push(Type::Dynamic);
                } else {
                    etys.push(unify_unsafe(&ts).ok_or_else(|| {
                        FuncError::arg(i, "all elements must be of the same type")
                    })?);
                }
            }
            _ => return Err(FuncError::arg(i, "a set or a list is required")),
        }
    }
    let tuple_ty = Type::tuple(etys.clone());
    let is_list = list_count == args.len();
    let ret = if is_list {
        Type::list(tuple_ty.clone())
    } else {
        Type::set(tuple_ty.clone())
    };
    if args.iter().any(Value::is_unknown) {
        return Ok(Value::Unknown(ret));
    }
    let total = args
        .iter()
        .try_fold(1usize, |acc, a| acc.checked_mul(items(a).len()))
        .filter(|&n| n <= MAX_PRODUCT)
        .ok_or_else(|| {
            FuncError::general(format!(
                "the result would have more than {MAX_PRODUCT} elements, fn-hcl's limit for setproduct"
            ))
        })?;
    crate::value::meter::elements(
        "setproduct",
        (total as u64).saturating_mul(args.len() as u64 + 1),
    )?;
    let mut product = Vec::with_capacity(total);
    let mut idx = vec![0usize; args.len()];
    for _ in 0..total {
        let mut tuple = Vec::with_capacity(args.len());
        for (j, &n) in idx.iter().enumerate() {
            let v = &items(&args[j])[n];
            let v = if v.type_of() == etys[j] {
                v.clone()
            } else {
                convert(v, &etys[j]).map_err(|e| FuncError::general(e.to_string()))?
            };
            tuple.push(v);
        }
        product.push(Value::tuple(tuple));
        for j in (0..idx.len()).rev() {
            idx[j] += 1;
            if idx[j] < items(&args[j]).len() {
                break;
            }
            idx[j] = 0;
        }
    }
    Ok(if is_list {
        Value::list(tuple_ty, product)
    } else {
        make_set(tuple_ty, product)
    })
}

fn slice(args: &[Value]) -> Result<Value, FuncError> {
    let list = arg(args, 0)?;
    let t = list.type_of();
    match &t {
        Type::Set(_) => {
            return Err(FuncError::arg(
                0,
                "cannot slice a set, because its elements do not have indices; explicitly convert to a list if the ordering of the result is not important",
            ));
        }
        Type::List(_) | Type::Tuple(_) => {}
        _ => return Err(FuncError::arg(0, "must be a list or tuple value")),
    }
    let length = match (&t, list) {
        (Type::Tuple(ts), _) => Some(ts.len()),
        _ => Some(items(list).len()),
    };
    let idx = |i: usize, what: &str| -> Result<Option<usize>, FuncError> {
        let v = arg(args, i)?;
        let n = v
            .as_number()
            .ok_or_else(|| FuncError::arg(i, "number required"))?;
        let n = to_int(n).map_err(|e| FuncError::arg(i, format!("invalid {what} index: {e}")))?;
        if n < 0 {
            return Err(FuncError::arg(
                i,
                format!("{what} index must not be less than zero"),
            ));
        }
        let n = usize::try_from(n).unwrap_or(usize::MAX);
        if length.is_some_and(|l| n > l) {
            return Err(FuncError::arg(
                i,
                format!("{what} index must not be greater than the length of the list"),
            ));
        }
        Ok(Some(n))
    };
    let start = idx(1, "start")?;
    let end = idx(2, "end")?;
    let (Some(start), Some(end)) = (start, end) else {
        return Ok(Value::Unknown(match t {
            Type::List(_) => t,
            _ => Type::Dynamic,
        }));
    };
    if start > end {
        return Err(FuncError::arg(
            1,
            "start index must not be greater than end index",
        ));
    }
    let out = items(list)[start..end].to_vec();
    Ok(match t {
        Type::Tuple(_) => Value::tuple(out),
        other => Value::list(elem_type(&other), out),
    })
}

fn sort(args: &[Value]) -> Result<Value, FuncError> {
    let list = arg(args, 0)?;
    let items = items(list);
    let mut strs: Vec<Str> = Vec::with_capacity(items.len());
    for (i, v) in items.iter().enumerate() {
        match v {
            Value::String(s) => strs.push(s.clone()),
            _ => {
                return Err(FuncError::general(format!(
                    "given list element {i} is null; a null string cannot be sorted"
                )));
            }
        }
    }
    strs.sort_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
    Ok(Value::list(
        Type::String,
        strs.into_iter().map(Value::String).collect(),
    ))
}

fn sum(args: &[Value]) -> Result<Value, FuncError> {
    let list = arg(args, 0)?;
    let t = list.type_of();
    let n = match list.length() {
        Some(n) => n,
        None => return Err(FuncError::arg(0, "cannot sum noniterable")),
    };
    if n == 0 {
        return Err(FuncError::arg(0, "cannot sum an empty list"));
    }
    if !matches!(t, Type::List(_) | Type::Set(_) | Type::Tuple(_)) {
        return Err(FuncError::arg(
            0,
            format!(
                "argument must be list, set, or tuple. Received {}",
                t.friendly_name()
            ),
        ));
    }
    let bad = || FuncError::arg(0, "argument must be list, set, or tuple of number values");
    let mut acc: Option<Number> = None;
    for v in items(list) {
        if v.is_null() {
            return Err(bad());
        }
        let Value::Number(x) = convert(v, &Type::Number).map_err(|_| bad())? else {
            return Err(bad());
        };
        acc = Some(match acc {
            None => x,
            Some(a) => a
                .add(&x)
                .map_err(|_| FuncError::general("can't compute sum of opposing infinities"))?,
        });
    }
    acc.map(Value::Number).ok_or_else(bad)
}

fn transpose(args: &[Value]) -> Result<Value, FuncError> {
    let m = arg(args, 0)?;
    // Each value's keys, found by a hash index (a scan of `out` per value was quadratic
    // in the number of distinct values: minutes for 100,000).
    let mut out: Vec<(Str, Vec<Value>)> = Vec::new();
    let mut index: HashMap<Str, usize> = HashMap::new();
    for (k, list) in m.as_fields().unwrap_or(&[]) {
        if list.is_null() {
            return Err(FuncError::general(
                "input must be a map of lists of strings",
            ));
        }
        for v in items(list) {
            let Value::String(s) = v else {
                return Err(FuncError::general(
                    "input must be a map of lists of strings",
                ));
            };
            match index.entry(s.clone()) {
                Entry::Occupied(i) => out[*i.get()].1.push(Value::String(k.clone())),
                Entry::Vacant(slot) => {
                    slot.insert(out.len());
                    out.push((s.clone(), vec![Value::String(k.clone())]));
                }
            }
        }
    }
    let entries = out
        .into_iter()
        .map(|(k, vs)| (k, Value::list(Type::String, vs)))
        .collect();
    Ok(Value::map(Type::list(Type::String), entries))
}

fn values(args: &[Value]) -> Result<Value, FuncError> {
    let m = arg(args, 0)?;
    let t = m.type_of();
    let ret = match &t {
        Type::Map(e) => Type::list((**e).clone()),
        Type::Object(attrs) => Type::tuple(attrs.iter().map(|(_, t)| t.clone())),
        _ => {
            return Err(FuncError::general(
                "values() requires a map as the first argument",
            ));
        }
    };
    let vals: Vec<Value> = m
        .as_fields()
        .unwrap_or(&[])
        .iter()
        .map(|(_, v)| v.clone())
        .collect();
    Ok(match ret {
        Type::Tuple(_) => Value::tuple(vals),
        other => Value::list(elem_type(&other), vals),
    })
}

fn zipmap(args: &[Value]) -> Result<Value, FuncError> {
    let keys = arg(args, 0)?;
    let vals = arg(args, 1)?;
    let vt = vals.type_of();
    if !matches!(vt, Type::List(_) | Type::Tuple(_)) {
        return Err(FuncError::general(
            "values argument must be a list or tuple value",
        ));
    }
    let mismatch = |k: usize, v: usize| {
        FuncError::general(format!(
            "number of keys ({k}) does not match number of values ({v})"
        ))
    };
    let ks = items(keys);
    if let Type::Tuple(ts) = &vt
        && ks.len() != ts.len()
    {
        return Err(mismatch(ks.len(), ts.len()));
    }
    for (i, k) in ks.iter().enumerate() {
        if k.is_null() {
            return Err(FuncError::general(format!(
                "keys list has null value at index {i}"
            )));
        }
    }
    let vs = items(vals);
    if ks.len() != vs.len() {
        return Err(mismatch(ks.len(), vs.len()));
    }
    let entries: Vec<(Str, Value)> = ks
        .iter()
        .zip(vs)
        .map(|(k, v)| (Str::from(k.as_str().unwrap_or("")), v.clone()))
        .collect();
    Ok(match &vt {
        Type::List(e) => Value::map_sorted((**e).clone(), sorted_last_wins(entries)),
        _ => Value::object_sorted(sorted_last_wins(entries)),
    })
}

/// Sort entries by key, keeping the last of duplicate keys (Go map assignment order).
fn sorted_last_wins(entries: Vec<(Str, Value)>) -> Vec<(Str, Value)> {
    match Value::object(entries) {
        Value::Object(f) => f.entries.to_vec(),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builtins::test_util::{err, n, ok, s, str_list as strs};
    fn f(x: f64) -> Value {
        Value::Number(Number::from_f64(x).expect("finite"))
    }
    fn b(x: bool) -> Value {
        Value::Bool(x)
    }
    fn tup(xs: Vec<Value>) -> Value {
        Value::tuple(xs)
    }
    fn obj(xs: Vec<(&str, Value)>) -> Value {
        Value::object(xs.into_iter().map(|(k, v)| (Str::from(k), v)).collect())
    }
    fn list(t: Type, xs: Vec<Value>) -> Value {
        Value::list(t, xs)
    }
    fn nums(xs: &[i64]) -> Value {
        list(Type::Number, xs.iter().map(|x| n(*x)).collect())
    }
    fn tt(ts: Vec<Type>) -> Type {
        Type::tuple(ts)
    }
    fn general(m: &str) -> FuncError {
        FuncError::general(m)
    }

    #[test]
    fn alltrue_anytrue() {
        ok("alltrue", vec![tup(vec![])], b(true));
        ok("alltrue", vec![tup(vec![b(true), b(true)])], b(true));
        ok("alltrue", vec![tup(vec![b(true), b(false)])], b(false));
        ok("alltrue", vec![tup(vec![s("true"), b(true)])], b(true));
        ok("alltrue", vec![tup(vec![Value::NULL])], b(false));
        err(
            "alltrue",
            vec![tup(vec![s("yes")])],
            FuncError::arg(0, "a bool is required"),
        );
        ok("anytrue", vec![tup(vec![])], b(false));
        ok("anytrue", vec![tup(vec![b(false), b(true)])], b(true));
        ok("anytrue", vec![tup(vec![b(false)])], b(false));
        ok(
            "anytrue",
            vec![make_set(Type::Bool, vec![b(false), b(true)])],
            b(true),
        );
    }

    #[test]
    fn chunklist_cases() {
        let ln = Type::list(Type::Number);
        ok(
            "chunklist",
            vec![tup(vec![n(1), n(2), n(3), n(4), n(5)]), n(2)],
            list(ln.clone(), vec![nums(&[1, 2]), nums(&[3, 4]), nums(&[5])]),
        );
        ok(
            "chunklist",
            vec![tup(vec![]), n(3)],
            list(Type::list(Type::Dynamic), vec![]),
        );
        ok(
            "chunklist",
            vec![tup(vec![s("a"), s("b")]), n(5)],
            list(Type::list(Type::String), vec![strs(&["a", "b"])]),
        );
        ok(
            "chunklist",
            vec![tup(vec![n(1), n(2)]), n(0)],
            list(ln, vec![nums(&[1, 2])]),
        );
        err(
            "chunklist",
            vec![tup(vec![]), n(-1)],
            general("the size argument must be positive"),
        );
        err(
            "chunklist",
            vec![tup(vec![n(1), n(2)]), n(-1)],
            general("the size argument must be positive"),
        );
    }

    #[test]
    fn coalesce_cases() {
        ok("coalesce", vec![s(""), s("a")], s("a"));
        ok("coalesce", vec![Value::NULL, s(""), s("b")], s("b"));
        ok("coalesce", vec![n(1), s("a")], s("1"));
        ok("coalesce", vec![n(0), n(1)], n(0));
        ok("coalesce", vec![b(false), b(true)], b(false));
        ok("coalesce", vec![Value::NULL, f(3.5)], f(3.5));
        ok(
            "coalesce",
            vec![tup(vec![]), tup(vec![s("a")])],
            list(Type::String, vec![]),
        );
        ok(
            "coalesce",
            vec![obj(vec![]), obj(vec![("a", n(1))])],
            Value::map(Type::Number, vec![]),
        );
        let none = general("no non-null, non-empty-string arguments");
        err("coalesce", vec![Value::NULL], none.clone());
        err("coalesce", vec![s(""), s("")], none);
        err(
            "coalesce",
            vec![],
            general("all arguments must have the same type"),
        );
    }

    #[test]
    fn coalescelist_cases() {
        ok(
            "coalescelist",
            vec![tup(vec![]), tup(vec![s("a")])],
            tup(vec![s("a")]),
        );
        ok(
            "coalescelist",
            vec![tup(vec![s("x")]), tup(vec![s("y")])],
            tup(vec![s("x")]),
        );
        ok(
            "coalescelist",
            vec![tup(vec![tup(vec![])]), tup(vec![n(1)])],
            tup(vec![tup(vec![])]),
        );
        ok(
            "coalescelist",
            vec![list(Type::Dynamic, vec![]), tup(vec![s("a")])],
            tup(vec![s("a")]),
        );
        err(
            "coalescelist",
            vec![tup(vec![]), tup(vec![])],
            general("no non-null arguments"),
        );
        err(
            "coalescelist",
            vec![s("a")],
            general("coalescelist arguments must be lists or tuples"),
        );
    }

    #[test]
    fn compact_concat() {
        ok(
            "compact",
            vec![tup(vec![s("a"), s(""), Value::NULL, s("b")])],
            strs(&["a", "b"]),
        );
        ok("compact", vec![tup(vec![])], strs(&[]));
        ok("compact", vec![tup(vec![n(1), n(2)])], strs(&["1", "2"]));
        ok(
            "concat",
            vec![tup(vec![n(1)]), tup(vec![n(2), n(3)])],
            tup(vec![n(1), n(2), n(3)]),
        );
        ok(
            "concat",
            vec![tup(vec![s("a")]), tup(vec![n(1)])],
            tup(vec![s("a"), n(1)]),
        );
        ok("concat", vec![tup(vec![]), tup(vec![])], tup(vec![]));
        ok(
            "concat",
            vec![tup(vec![tup(vec![n(1)])]), tup(vec![n(2)])],
            tup(vec![tup(vec![n(1)]), n(2)]),
        );
        ok("concat", vec![strs(&["a"]), nums(&[1])], strs(&["a", "1"]));
        ok(
            "concat",
            vec![strs(&["a"]), tup(vec![n(1)])],
            tup(vec![s("a"), n(1)]),
        );
        err(
            "concat",
            vec![s("a"), tup(vec![s("b")])],
            FuncError::arg(0, "all arguments must be lists or tuples; got string"),
        );
        err(
            "concat",
            vec![tup(vec![]), Value::NULL],
            FuncError::arg(1, "argument must not be null"),
        );
    }

    #[test]
    fn contains_distinct() {
        ok("contains", vec![tup(vec![n(1), n(2), n(3)]), n(2)], b(true));
        ok(
            "contains",
            vec![tup(vec![s("a"), s("b")]), s("c")],
            b(false),
        );
        ok("contains", vec![tup(vec![n(1), n(2)]), s("1")], b(false));
        ok(
            "contains",
            vec![make_set(Type::String, vec![s("a")]), s("a")],
            b(true),
        );
        ok(
            "contains",
            vec![tup(vec![obj(vec![("a", n(1))])]), obj(vec![("a", n(1))])],
            b(true),
        );
        err(
            "contains",
            vec![s("abc"), s("a")],
            general("argument must be list, tuple, or set"),
        );
        ok(
            "distinct",
            vec![tup(vec![n(1), n(2), n(1), n(3), n(2)])],
            nums(&[1, 2, 3]),
        );
        ok(
            "distinct",
            vec![tup(vec![s("b"), s("a"), s("b")])],
            strs(&["b", "a"]),
        );
        ok("distinct", vec![tup(vec![])], list(Type::Dynamic, vec![]));
        let t1 = tt(vec![Type::Number]);
        ok(
            "distinct",
            vec![tup(vec![tup(vec![n(1)]), tup(vec![n(1)]), tup(vec![n(2)])])],
            list(t1, vec![tup(vec![n(1)]), tup(vec![n(2)])]),
        );
    }

    #[test]
    fn element_flatten_index() {
        let abc = || tup(vec![s("a"), s("b"), s("c")]);
        ok("element", vec![abc(), n(1)], s("b"));
        ok("element", vec![abc(), n(5)], s("c"));
        ok("element", vec![abc(), n(-1)], s("c"));
        ok("element", vec![strs(&["x", "y"]), n(-4)], s("x"));
        err(
            "element",
            vec![tup(vec![]), n(0)],
            general("cannot use element function with an empty list"),
        );
        err(
            "element",
            vec![make_set(Type::String, vec![s("a")]), n(0)],
            general("cannot read elements from set of string"),
        );
        ok(
            "flatten",
            vec![tup(vec![tup(vec![n(1), tup(vec![n(2)])]), n(3)])],
            tup(vec![n(1), n(2), n(3)]),
        );
        ok("flatten", vec![tup(vec![])], tup(vec![]));
        ok(
            "flatten",
            vec![tup(vec![
                tup(vec![]),
                tup(vec![tup(vec![])]),
                tup(vec![s("x")]),
            ])],
            tup(vec![s("x")]),
        );
        ok(
            "flatten",
            vec![tup(vec![
                s("a"),
                tup(vec![s("b"), tup(vec![s("c"), tup(vec![s("d")])])]),
            ])],
            tup(vec![s("a"), s("b"), s("c"), s("d")]),
        );
        err(
            "flatten",
            vec![s("a")],
            general("can only flatten lists, sets and tuples"),
        );
        ok("index", vec![abc(), s("b")], n(1));
        ok("index", vec![tup(vec![n(1), n(2), n(3)]), n(3)], n(2));
        err(
            "index",
            vec![tup(vec![s("a")]), s("z")],
            general("item not found"),
        );
        err(
            "index",
            vec![tup(vec![]), n(1)],
            general("cannot search an empty list"),
        );
    }

    #[test]
    fn keys_values_length() {
        let o = || obj(vec![("b", n(1)), ("a", n(2)), ("c", n(3))]);
        ok("keys", vec![o()], tup(vec![s("a"), s("b"), s("c")]));
        ok("keys", vec![obj(vec![])], tup(vec![]));
        let m = Value::map(
            Type::String,
            vec![("z".into(), s("1")), ("y".into(), s("2"))],
        );
        ok("keys", vec![m.clone()], strs(&["y", "z"]));
        err(
            "keys",
            vec![tup(vec![s("a")])],
            FuncError::arg(0, "must have map or object type"),
        );
        ok("values", vec![o()], tup(vec![n(2), n(1), n(3)]));
        ok("values", vec![obj(vec![])], tup(vec![]));
        ok("values", vec![m], strs(&["2", "1"]));
        err(
            "values",
            vec![s("x")],
            general("values() requires a map as the first argument"),
        );
        ok("length", vec![tup(vec![n(1), n(2)])], n(2));
        ok("length", vec![obj(vec![("a", n(1)), ("b", n(2))])], n(2));
        ok(
            "length",
            vec![make_set(Type::Number, vec![n(1), n(1), n(2)])],
            n(2),
        );
        ok("length", vec![tup(vec![])], n(0));
        ok("length", vec![s("héllo")], n(5));
        ok("length", vec![s("👍🏽")], n(1));
        ok("length", vec![s("e\u{301}")], n(1));
        ok("length", vec![s("")], n(0));
        err(
            "length",
            vec![Value::NULL],
            FuncError::arg(0, "argument must not be null"),
        );
        err(
            "length",
            vec![n(5)],
            general("argument must be a string, a collection type, or a structural type"),
        );
        // A call answers an unknown argument before the implementation runs
        // (`unknown_result`).
        ok(
            "length",
            vec![Value::Unknown(Type::Dynamic)],
            Value::Unknown(Type::Dynamic),
        );
    }

    #[test]
    fn deprecated_list_map() {
        err(
            "list",
            vec![n(1), n(2)],
            general(
                "the \"list\" function was deprecated in Terraform v0.12 and is no longer available; use tolist([ ... ]) syntax to write a literal list",
            ),
        );
        err(
            "map",
            vec![s("a"), n(1)],
            general(
                "the \"map\" function was deprecated in Terraform v0.12 and is no longer available; use tomap({ ... }) syntax to write a literal map",
            ),
        );
    }

    #[test]
    fn lookup_cases() {
        ok("lookup", vec![obj(vec![("a", n(1))]), s("a"), n(0)], n(1));
        ok(
            "lookup",
            vec![obj(vec![("a", n(1))]), s("b"), s("dflt")],
            s("dflt"),
        );
        ok("lookup", vec![obj(vec![("a", s("x"))]), s("b"), n(5)], n(5));
        err(
            "lookup",
            vec![obj(vec![("a", n(1))]), s("b")],
            FuncError::arg(0, "the given object has no attribute \"b\""),
        );
        ok(
            "lookup",
            vec![
                obj(vec![("a", obj(vec![("n", n(1))]))]),
                s("a"),
                Value::NULL,
            ],
            obj(vec![("n", n(1))]),
        );
        let m = Value::map(Type::String, vec![("a".into(), s("x"))]);
        ok("lookup", vec![m.clone(), s("b"), n(5)], s("5"));
        err(
            "lookup",
            vec![m.clone(), s("b")],
            general("lookup failed to find key b"),
        );
        err(
            "lookup",
            vec![m.clone(), s("b"), tup(vec![])],
            FuncError::arg(
                2,
                "the default value must have the same type as the map elements",
            ),
        );
        err(
            "lookup",
            vec![m, s("a"), s("x"), s("y")],
            general("lookup() takes two or three arguments, got 4"),
        );
        err(
            "lookup",
            vec![tup(vec![]), s("a")],
            FuncError::arg(0, "lookup() requires a map as the first argument"),
        );
    }

    #[test]
    fn matchkeys_cases() {
        ok(
            "matchkeys",
            vec![
                tup(vec![s("a"), s("b"), s("c")]),
                tup(vec![s("x"), s("y"), s("x")]),
                tup(vec![s("x")]),
            ],
            strs(&["a", "c"]),
        );
        ok(
            "matchkeys",
            vec![
                tup(vec![s("a"), s("b")]),
                tup(vec![s("x"), s("y")]),
                tup(vec![]),
            ],
            strs(&[]),
        );
        err(
            "matchkeys",
            vec![
                tup(vec![s("a")]),
                tup(vec![s("x"), s("y")]),
                tup(vec![s("x")]),
            ],
            general("length of keys and values should be equal"),
        );
        // Keys and searchset are compared after conversion to their common type.
        ok(
            "matchkeys",
            vec![
                tup(vec![s("a"), s("b"), s("c")]),
                tup(vec![n(1), n(2), n(3)]),
                tup(vec![s("2"), s("9")]),
            ],
            strs(&["b"]),
        );
        // An unknown in the searchset: a call answers it before the implementation runs
        // (`unknown_result`: matchkeys does not take nested unknowns, as in Terraform).
        let search = tup(vec![s("y"), Value::Unknown(Type::String)]);
        ok(
            "matchkeys",
            vec![tup(vec![s("a"), s("b")]), tup(vec![s("x"), s("y")]), search],
            Value::Unknown(Type::Dynamic),
        );
    }

    /// Two arguments are merged run by run, more are sorted at once: both give what
    /// assigning every argument's entries in turn gives (the last of equal keys wins).
    #[test]
    fn merge_of_many_arguments_is_assignment_in_order() {
        let mut x: u32 = 0x2545_f491;
        for count in 2..=7 {
            for _ in 0..50 {
                let mut want = std::collections::BTreeMap::new();
                let args: Vec<Value> = (0..count)
                    .map(|i| {
                        x ^= x << 13;
                        x ^= x >> 17;
                        x ^= x << 5;
                        let keys = ["a", "b", "c", "d", "e", "f", "g"];
                        let entries: Vec<(&str, Value)> = keys
                            .iter()
                            .filter(|k| x >> (k.as_bytes()[0] - b'a') & 1 == 1)
                            .map(|k| (*k, n(i)))
                            .collect();
                        for (k, _) in &entries {
                            want.insert(*k, n(i));
                        }
                        obj(entries)
                    })
                    .collect();
                ok("merge", args, obj(want.into_iter().collect()));
            }
        }
    }

    #[test]
    fn merge_cases() {
        ok(
            "merge",
            vec![obj(vec![("a", n(1))]), obj(vec![("b", n(2))])],
            obj(vec![("a", n(1)), ("b", n(2))]),
        );
        ok(
            "merge",
            vec![obj(vec![("a", n(1))]), obj(vec![("a", n(2))])],
            obj(vec![("a", n(2))]),
        );
        ok("merge", vec![], obj(vec![]));
        ok(
            "merge",
            vec![obj(vec![("a", n(1))]), Value::NULL],
            obj(vec![("a", n(1))]),
        );
        ok(
            "merge",
            vec![
                obj(vec![("a", obj(vec![("x", n(1))]))]),
                obj(vec![("a", obj(vec![("y", n(2))]))]),
            ],
            obj(vec![("a", obj(vec![("y", n(2))]))]),
        );
        let m = |k: &str, v: &str| Value::map(Type::String, vec![(k.into(), s(v))]);
        ok(
            "merge",
            vec![m("a", "1"), obj(vec![("b", n(2))])],
            obj(vec![("a", s("1")), ("b", n(2))]),
        );
        ok(
            "merge",
            vec![m("a", "1"), m("b", "2")],
            Value::map(
                Type::String,
                vec![("a".into(), s("1")), ("b".into(), s("2"))],
            ),
        );
        ok(
            "merge",
            vec![
                obj(vec![("b", n(1)), ("d", n(1)), ("f", n(1))]),
                Value::Null(Type::Dynamic),
                obj(vec![("a", n(2)), ("d", n(2)), ("g", n(2))]),
                obj(vec![("f", n(3)), ("z", n(3))]),
            ],
            obj(vec![
                ("a", n(2)),
                ("b", n(1)),
                ("d", n(2)),
                ("f", n(3)),
                ("g", n(2)),
                ("z", n(3)),
            ]),
        );
        ok(
            "merge",
            vec![Value::Null(Type::map(Type::String)), m("a", "1")],
            m("a", "1"),
        );
        // Three maps and more: still a map, the last of equal keys winning.
        ok(
            "merge",
            vec![m("b", "1"), m("a", "2"), m("b", "3"), m("c", "4")],
            Value::map(
                Type::String,
                vec![
                    ("a".into(), s("2")),
                    ("b".into(), s("3")),
                    ("c".into(), s("4")),
                ],
            ),
        );
        err(
            "merge",
            vec![Value::Null(Type::String), m("a", "1")],
            general("arguments must be maps or objects, got \"string\""),
        );
        err(
            "merge",
            vec![tup(vec![n(1)]), tup(vec![n(2)])],
            general("arguments must be maps or objects, got \"tuple\""),
        );
    }

    #[test]
    fn one_cases() {
        ok("one", vec![tup(vec![])], Value::NULL);
        ok("one", vec![tup(vec![s("x")])], s("x"));
        ok("one", vec![make_set(Type::Dynamic, vec![])], Value::NULL);
        ok(
            "one",
            vec![list(Type::Dynamic, vec![Value::NULL])],
            Value::NULL,
        );
        ok("one", vec![strs(&[])], Value::Null(Type::String));
        err(
            "one",
            vec![tup(vec![n(1), n(2)])],
            FuncError::arg(
                0,
                "must be a list, set, or tuple value with either zero or one elements",
            ),
        );
    }

    #[test]
    fn range_cases() {
        ok("range", vec![n(3)], nums(&[0, 1, 2]));
        ok("range", vec![n(1), n(4)], nums(&[1, 2, 3]));
        ok("range", vec![n(0), n(10), n(3)], nums(&[0, 3, 6, 9]));
        ok("range", vec![n(5), n(0), n(-2)], nums(&[5, 3, 1]));
        ok("range", vec![n(0)], nums(&[]));
        ok("range", vec![n(1), n(1)], nums(&[]));
        ok("range", vec![n(-3)], nums(&[0, -1, -2]));
        ok(
            "range",
            vec![n(0), n(1), f(0.25)],
            list(Type::Number, vec![n(0), f(0.25), f(0.5), f(0.75)]),
        );
        err(
            "range",
            vec![n(0), n(1), n(0)],
            general(
                "more than 1024 values were generated; either decrease the difference between start and end or use a smaller step",
            ),
        );
        err(
            "range",
            vec![n(1), n(5), n(-1)],
            FuncError::arg(1, "end must be less than start when step is negative"),
        );
        err(
            "range",
            vec![n(5), n(1), n(1)],
            FuncError::arg(1, "end must be greater than start when step is positive"),
        );
        err(
            "range",
            vec![],
            general("must have one, two, or three arguments"),
        );
    }

    #[test]
    fn reverse_slice() {
        ok(
            "reverse",
            vec![tup(vec![n(1), n(2), n(3)])],
            tup(vec![n(3), n(2), n(1)]),
        );
        ok("reverse", vec![tup(vec![])], tup(vec![]));
        ok(
            "reverse",
            vec![tup(vec![s("a"), tup(vec![s("b")])])],
            tup(vec![tup(vec![s("b")]), s("a")]),
        );
        ok("reverse", vec![strs(&["a", "b"])], strs(&["b", "a"]));
        err(
            "reverse",
            vec![s("ab")],
            FuncError::arg(0, "can only reverse list or tuple values, not string"),
        );
        let abcd = || tup(vec![s("a"), s("b"), s("c"), s("d")]);
        ok("slice", vec![abcd(), n(1), n(3)], tup(vec![s("b"), s("c")]));
        ok(
            "slice",
            vec![tup(vec![n(1), n(2), n(3)]), n(0), n(0)],
            tup(vec![]),
        );
        ok(
            "slice",
            vec![tup(vec![n(1), n(2), n(3)]), n(3), n(3)],
            tup(vec![]),
        );
        ok("slice", vec![strs(&["a", "b"]), n(1), n(2)], strs(&["b"]));
        err(
            "slice",
            vec![tup(vec![n(1)]), n(2), n(1)],
            FuncError::arg(
                1,
                "start index must not be greater than the length of the list",
            ),
        );
        err(
            "slice",
            vec![tup(vec![n(1), n(2)]), n(0), n(5)],
            FuncError::arg(
                2,
                "end index must not be greater than the length of the list",
            ),
        );
        err(
            "slice",
            vec![tup(vec![n(1), n(2)]), n(2), n(1)],
            FuncError::arg(1, "start index must not be greater than end index"),
        );
    }

    #[test]
    fn set_functions() {
        let set = |t: Type, xs: Vec<Value>| make_set(t, xs);
        ok(
            "setintersection",
            vec![tup(vec![s("a"), s("b")]), tup(vec![s("b"), s("c")])],
            set(Type::String, vec![s("b")]),
        );
        ok(
            "setintersection",
            vec![tup(vec![n(1), n(2)]), tup(vec![n(3)])],
            set(Type::Number, vec![]),
        );
        ok(
            "setintersection",
            vec![tup(vec![s("a")])],
            set(Type::String, vec![s("a")]),
        );
        ok(
            "setsubtract",
            vec![tup(vec![s("a"), s("b"), s("c")]), tup(vec![s("b")])],
            set(Type::String, vec![s("a"), s("c")]),
        );
        ok(
            "setsubtract",
            vec![tup(vec![n(1), n(2)]), tup(vec![])],
            set(Type::Number, vec![n(1), n(2)]),
        );
        ok(
            "setunion",
            vec![tup(vec![s("b")]), tup(vec![s("a"), s("c")])],
            set(Type::String, vec![s("a"), s("b"), s("c")]),
        );
        ok(
            "setunion",
            vec![tup(vec![n(1)]), tup(vec![s("a")])],
            set(Type::String, vec![s("1"), s("a")]),
        );
        ok(
            "setunion",
            vec![tup(vec![n(3), n(1)]), tup(vec![n(20), n(2)])],
            set(Type::Number, vec![n(1), n(2), n(3), n(20)]),
        );
        ok(
            "setunion",
            vec![tup(vec![b(true)]), tup(vec![b(false)])],
            set(Type::Bool, vec![b(false), b(true)]),
        );
        ok(
            "setunion",
            vec![tup(vec![]), tup(vec![])],
            set(Type::Dynamic, vec![]),
        );
        err(
            "setunion",
            vec![tup(vec![n(1)]), tup(vec![tup(vec![])])],
            general("given sets must all have compatible element types"),
        );
    }

    #[test]
    fn setproduct_cases() {
        let pair = tt(vec![Type::String, Type::Number]);
        ok(
            "setproduct",
            vec![tup(vec![s("a"), s("b")]), tup(vec![n(1), n(2)])],
            list(
                pair,
                vec![
                    tup(vec![s("a"), n(1)]),
                    tup(vec![s("a"), n(2)]),
                    tup(vec![s("b"), n(1)]),
                    tup(vec![s("b"), n(2)]),
                ],
            ),
        );
        ok(
            "setproduct",
            vec![tup(vec![]), tup(vec![n(1)])],
            list(tt(vec![Type::Dynamic, Type::Number]), vec![]),
        );
        ok(
            "setproduct",
            vec![tup(vec![s("x")]), tup(vec![s("y")]), tup(vec![s("z")])],
            list(
                tt(vec![Type::String, Type::String, Type::String]),
                vec![tup(vec![s("x"), s("y"), s("z")])],
            ),
        );
        let st = make_set(Type::String, vec![s("b"), s("a")]);
        ok(
            "setproduct",
            vec![st, tup(vec![n(1)])],
            make_set(
                tt(vec![Type::String, Type::Number]),
                vec![tup(vec![s("a"), n(1)]), tup(vec![s("b"), n(1)])],
            ),
        );
        err(
            "setproduct",
            vec![tup(vec![])],
            general("at least two arguments are required"),
        );
        err(
            "setproduct",
            vec![tup(vec![]), s("a")],
            FuncError::arg(1, "a set or a list is required"),
        );
        // 128^3 = 2^21 tuples: refused before any is built, naming the limit.
        let l = nums(&(0..128).collect::<Vec<_>>());
        err(
            "setproduct",
            vec![l.clone(), l.clone(), l],
            general(
                "the result would have more than 1048576 elements, fn-hcl's limit for setproduct",
            ),
        );
    }

    #[test]
    fn sort_sum() {
        ok(
            "sort",
            vec![tup(vec![s("b"), s("a"), s("B"), s("10"), s("9")])],
            strs(&["10", "9", "B", "a", "b"]),
        );
        ok(
            "sort",
            vec![tup(vec![n(3), n(1), n(20), n(2)])],
            strs(&["1", "2", "20", "3"]),
        );
        ok("sort", vec![tup(vec![])], strs(&[]));
        ok(
            "sort",
            vec![tup(vec![s("é"), s("e"), s("z"), s("Z")])],
            strs(&["Z", "e", "z", "é"]),
        );
        err(
            "sort",
            vec![tup(vec![tup(vec![n(1)])])],
            FuncError::arg(0, "element 0: string required, but have tuple"),
        );
        err(
            "sort",
            vec![tup(vec![s("a"), Value::NULL])],
            general("given list element 1 is null; a null string cannot be sorted"),
        );
        ok("sum", vec![tup(vec![n(1), n(2), f(3.5)])], f(6.5));
        ok("sum", vec![tup(vec![s("1"), s("2")])], n(3));
        ok(
            "sum",
            vec![tup(vec![n(-5), n(i64::MAX / 2)])],
            n(i64::MAX / 2 - 5),
        );
        err(
            "sum",
            vec![tup(vec![])],
            FuncError::arg(0, "cannot sum an empty list"),
        );
        err(
            "sum",
            vec![tup(vec![n(1), Value::NULL])],
            FuncError::arg(0, "argument must be list, set, or tuple of number values"),
        );
        err(
            "sum",
            vec![s("1")],
            FuncError::arg(0, "cannot sum noniterable"),
        );
        err(
            "sum",
            vec![obj(vec![("a", n(1))])],
            FuncError::arg(0, "argument must be list, set, or tuple. Received object"),
        );
    }

    #[test]
    fn transpose_zipmap() {
        let lt = Type::list(Type::String);
        let input = obj(vec![
            ("a", tup(vec![s("1"), s("2")])),
            ("b", tup(vec![s("2"), s("3")])),
        ]);
        ok(
            "transpose",
            vec![input],
            Value::map(
                lt.clone(),
                vec![
                    ("1".into(), strs(&["a"])),
                    ("2".into(), strs(&["a", "b"])),
                    ("3".into(), strs(&["b"])),
                ],
            ),
        );
        ok(
            "transpose",
            vec![obj(vec![])],
            Value::map(lt.clone(), vec![]),
        );
        ok(
            "transpose",
            vec![obj(vec![("a", tup(vec![n(1)]))])],
            Value::map(lt, vec![("1".into(), strs(&["a"]))]),
        );
        ok(
            "zipmap",
            vec![tup(vec![s("a"), s("b")]), tup(vec![n(1), n(2)])],
            obj(vec![("a", n(1)), ("b", n(2))]),
        );
        ok("zipmap", vec![tup(vec![]), tup(vec![])], obj(vec![]));
        ok(
            "zipmap",
            vec![tup(vec![s("a"), s("a")]), tup(vec![n(1), n(2)])],
            obj(vec![("a", n(2))]),
        );
        ok(
            "zipmap",
            vec![strs(&["k"]), nums(&[7])],
            Value::map(Type::Number, vec![("k".into(), n(7))]),
        );
        err(
            "zipmap",
            vec![tup(vec![s("a")]), tup(vec![n(1), n(2)])],
            general("number of keys (1) does not match number of values (2)"),
        );
        err(
            "zipmap",
            vec![tup(vec![s("a")]), s("x")],
            general("values argument must be a list or tuple value"),
        );
    }
}
