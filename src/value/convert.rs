//! cty's type conversion and unification (go-cty v1.17 `convert`): the rules behind function
//! arguments, `?:` results, templates, operators and the `to*` functions.
//!
//! cty builds a conversion function from the two types first (and fails with
//! `MismatchMessage` when there is none), then applies it to the value, which can still fail
//! for value-dependent reasons (`"abc"` to number). Here [`can_convert`] answers the first
//! question and [`convert`] does both; the messages are cty's.

use crate::text::quote::go_quote;
use crate::value::ops::make_set;
use crate::value::{Str, Type, Value, meter};
use std::fmt;
use std::sync::Arc;

/// A failed conversion, with cty's message (e.g. `string required`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConvertError(pub String);

impl fmt::Display for ConvertError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ConvertError {}

fn err<T>(msg: impl Into<String>) -> Result<T, ConvertError> {
    Err(ConvertError(msg.into()))
}

/// Convert `v` to `want` (cty `convert.Convert`: safe and unsafe conversions).
pub fn convert(v: &Value, want: &Type) -> Result<Value, ConvertError> {
    // Fast path, without building the value's type: it already has the wanted type.
    if *want == Type::Dynamic || has_type(v, want) {
        return Ok(v.clone());
    }
    if let Some(r) = tuple_of_the_element_type(v, want) {
        return Ok(r);
    }
    let got = v.type_of();
    if got == *want {
        return Ok(v.clone());
    }
    if !can_convert(&got, want, true) {
        return err(mismatch_message(&got, want));
    }
    apply(v, &got, want, true)
}

/// [`convert`] to a list type done in place, when `v` is a tuple held nowhere else whose
/// elements all have the list's element type (a `[for ...]` passed where `list(string)` is
/// wanted): it becomes that list without its elements being copied. False (and `v`
/// unchanged) otherwise.
pub fn tuple_to_list_in_place(v: &mut Value, want: &Type) -> bool {
    let (Value::Tuple(s), Type::List(we)) = (&mut *v, want) else {
        return false;
    };
    let Some(seq) = crate::value::Shared::get_mut(s) else {
        return false;
    };
    if !all_of_element_type(&seq.items, we) {
        return false;
    }
    seq.set_elem((**we).clone());
    if let Value::Tuple(s) = std::mem::take(v) {
        *v = Value::List(s);
    }
    true
}

/// A non-empty tuple whose elements all have the wanted list or set element type (a
/// `[for ...]` or a literal passed where `list(string)` is wanted): cty's conversion finds
/// that type as the target and converts no element, so the result is a list (set) of
/// the same elements. Found without building the tuple's type and the elements'.
fn tuple_of_the_element_type(v: &Value, want: &Type) -> Option<Value> {
    let (Value::Tuple(s), Type::List(we) | Type::Set(we)) = (v, want) else {
        return None;
    };
    if !all_of_element_type(&s.items, we) {
        return None;
    }
    let (elem, items) = ((**we).clone(), s.items.to_vec());
    Some(if matches!(want, Type::Set(_)) {
        make_set(elem, items)
    } else {
        Value::list(elem, items)
    })
}

/// Elements a tuple converts to a list or set of `elem` without converting any: at least
/// one, each of that (known) type.
fn all_of_element_type(items: &[Value], elem: &Type) -> bool {
    // A known primitive element (the usual one: `join`'s strings) is matched inline;
    // `has_type`, called out of line, answers the rest.
    let of_type = |x: &Value| match (x, elem) {
        (Value::String(_), Type::String)
        | (Value::Number(_), Type::Number)
        | (Value::Bool(_), Type::Bool) => true,
        _ => x.has_type(elem),
    };
    !items.is_empty() && elem.is_known_type() && items.iter().all(of_type)
}

/// Whether `v.type_of() == *t`, computed without allocating.
pub fn has_type(v: &Value, t: &Type) -> bool {
    v.has_type(t)
}

/// Primitive to string as cty does it (`tostring`, templates): strings as they are, numbers
/// in cty's decimal form, bools as `true`/`false`. Nulls, unknowns and other types are
/// errors: callers (templates) report those with their own messages first.
pub fn to_string_value(v: &Value) -> Result<Str, ConvertError> {
    match v {
        Value::String(s) => Ok(s.clone()),
        Value::Number(n) => number_text(n),
        Value::Bool(b) => Ok(Str::from(if *b { "true" } else { "false" })),
        Value::Null(_) => err("string required"),
        other => err(mismatch_message(&other.type_of(), &Type::String)),
    }
}

/// Where a conversion's charges are made ([`meter`]): a builtin's meter names the builtin
/// instead; the VM's conversions of values (a builtin's arguments, a conditional's
/// result) are named by this.
pub const SITE: &str = "type conversion";

/// A number's text as a string value, charged to the evaluation's string budget before
/// it is made: a shared number converted a hundred thousand times (a tuple of copies to
/// `list(string)`) is a hundred thousand texts of up to 39,457 digits each.
fn number_text(n: &crate::value::number::Number) -> Result<Str, ConvertError> {
    n.with_charged_cty_text(|len| meter::bytes(SITE, len as u64), |t| Str::from(t))
        .map_err(|e| ConvertError(e.to_string()))
}

/// cty's `FriendlyNameForConstraint`: like `friendly_name` but `any type` for the dynamic
/// pseudo-type and `list of any single type` for a collection of it.
pub fn friendly_name_for_constraint(t: &Type) -> String {
    fn coll(prefix: &str, e: &Type) -> String {
        if *e == Type::Dynamic {
            format!("{prefix} of any single type")
        } else {
            format!("{prefix} of {}", friendly_name_for_constraint(e))
        }
    }
    match t {
        Type::Dynamic => "any type".into(),
        Type::List(e) => coll("list", e),
        Type::Set(e) => coll("set", e),
        Type::Map(e) => coll("map", e),
        other => other.friendly_name(),
    }
}

fn is_collection(t: &Type) -> bool {
    matches!(t, Type::List(_) | Type::Set(_) | Type::Map(_))
}

fn attr_type<'a>(attrs: &'a [(Str, Type)], name: &str) -> Option<&'a Type> {
    attrs.iter().find(|(k, _)| &**k == name).map(|(_, t)| t)
}

/// Whether cty has a conversion from `got` to `want` (`getConversion(in, out, unsafe) != nil`).
/// Identical types always convert (cty's callers check equality first).
pub fn can_convert(got: &Type, want: &Type, unsafe_: bool) -> bool {
    if got == want || *want == Type::Dynamic {
        return true;
    }
    if unsafe_ && *got == Type::Dynamic {
        return true;
    }
    match (got, want) {
        (Type::Number | Type::Bool, Type::String) => true,
        (Type::String, Type::Number | Type::Bool) => unsafe_,
        (Type::Object(ga), Type::Object(wa)) => wa
            .iter()
            .all(|(name, wt)| attr_type(ga, name).is_some_and(|gt| can_convert(gt, wt, unsafe_))),
        (Type::Tuple(ge), Type::Tuple(we)) => {
            ge.len() == we.len()
                && ge
                    .iter()
                    .zip(we.iter())
                    .all(|(g, w)| can_convert(g, w, unsafe_))
        }
        (Type::List(ge) | Type::Set(ge), Type::List(we)) => can_convert(ge, we, unsafe_),
        (Type::Set(ge), Type::Set(we)) => can_convert(ge, we, unsafe_),
        (Type::List(ge), Type::Set(we)) => unsafe_ && can_convert(ge, we, unsafe_),
        (Type::Map(ge), Type::Map(we)) => can_convert(ge, we, unsafe_),
        (Type::Tuple(ge), Type::List(we) | Type::Set(we)) => {
            tuple_target_elem(ge, we, unsafe_).is_some()
        }
        (Type::Object(ga), Type::Map(we)) => {
            let tys: Vec<Type> = ga.iter().map(|(_, t)| t.clone()).collect();
            seq_target_elem(&tys, we, unsafe_, false).is_some()
        }
        (Type::Map(ge), Type::Object(wa)) => {
            unsafe_ && wa.iter().all(|(_, wt)| can_convert(ge, wt, unsafe_))
        }
        _ => false,
    }
}

/// The element type a tuple converts to for a list/set of `want` elements, if any.
fn tuple_target_elem(elems: &[Type], want: &Type, unsafe_: bool) -> Option<Type> {
    seq_target_elem(elems, want, unsafe_, true)
}

fn seq_target_elem(
    elems: &[Type],
    want: &Type,
    unsafe_: bool,
    strict_dynamic: bool,
) -> Option<Type> {
    if elems.is_empty() {
        return Some(want.clone());
    }
    let target = if *want == Type::Dynamic {
        let u = unify_impl(elems, unsafe_)?;
        if strict_dynamic && u == Type::Dynamic && elems.iter().any(|t| *t != Type::Dynamic) {
            return None;
        }
        u
    } else {
        want.clone()
    };
    if elems
        .iter()
        .all(|t| *t == target || can_convert(t, &target, unsafe_))
    {
        Some(target)
    } else {
        None
    }
}

/// cty's `dynamicReplace`: `out`, with dynamic parts filled in from `inp` (the type a null or
/// unknown takes when converted).
fn dynamic_replace(inp: &Type, out: &Type) -> Type {
    if *inp == Type::Dynamic {
        return out.clone();
    }
    match out {
        Type::Dynamic => inp.clone(),
        Type::Bool | Type::Number | Type::String => out.clone(),
        Type::Map(oe) => {
            let e = match inp {
                Type::Map(ie) => dynamic_replace(ie, oe),
                Type::Object(ia) => {
                    let tys: Vec<Type> = ia.iter().map(|(_, t)| t.clone()).collect();
                    match unify_impl(&tys, true) {
                        Some(u) => dynamic_replace(&u, oe),
                        None => (**oe).clone(),
                    }
                }
                _ => (**oe).clone(),
            };
            Type::map(e)
        }
        Type::Object(oa) => {
            let attrs: Vec<(Str, Type)> = oa
                .iter()
                .map(|(name, at)| {
                    let t = match inp {
                        Type::Map(ie) => dynamic_replace(ie, at),
                        Type::Object(ia) => match attr_type(ia, name) {
                            Some(it) => dynamic_replace(it, at),
                            None => at.clone(),
                        },
                        _ => at.clone(),
                    };
                    (name.clone(), t)
                })
                .collect();
            Type::object(attrs)
        }
        Type::Set(oe) | Type::List(oe) => {
            let e = match inp {
                Type::Set(ie) | Type::List(ie) => dynamic_replace(ie, oe),
                Type::Tuple(ie) => match unify_impl(ie, true) {
                    Some(u) => dynamic_replace(&u, oe),
                    None => (**oe).clone(),
                },
                _ => (**oe).clone(),
            };
            if matches!(out, Type::Set(_)) {
                Type::set(e)
            } else {
                Type::list(e)
            }
        }
        Type::Tuple(oe) => {
            let ie: &[Type] = match inp {
                Type::Tuple(ie) => ie,
                _ => &[],
            };
            Type::tuple(oe.iter().enumerate().map(|(i, o)| match ie.get(i) {
                Some(it) => dynamic_replace(it, o),
                None => o.clone(),
            }))
        }
    }
}

/// Apply a conversion known to exist (`can_convert(got, want, unsafe_)`): cty's wrapper
/// (passthrough to dynamic, nulls and unknowns re-typed) then the specific conversion.
fn apply(v: &Value, got: &Type, want: &Type, unsafe_: bool) -> Result<Value, ConvertError> {
    if *want == Type::Dynamic {
        return Ok(v.clone());
    }
    match v {
        Value::Unknown(t) => return Ok(Value::Unknown(dynamic_replace(t, want))),
        Value::Null(t) => return Ok(Value::Null(dynamic_replace(t, want))),
        _ => {}
    }
    if got == want {
        return Ok(v.clone());
    }
    if *got == Type::Dynamic {
        // Only nulls and unknowns have the dynamic type; handled above.
        return convert(v, want);
    }
    match (v, want) {
        (Value::Number(n), Type::String) => number_text(n).map(Value::String),
        (Value::Bool(b), Type::String) => Ok(Value::string(if *b { "true" } else { "false" })),
        // cty.ParseNumberVal is big.ParseFloat, which reads "Inf", "-inf", "+Inf" too; a
        // number beyond fn-hcl's range is refused rather than read as ±Inf or 0.
        (Value::String(s), Type::Number) => match crate::value::number::Number::parse_cty(s) {
            Some(n)
                if (n.is_infinite() || n.is_zero())
                    && crate::value::number::Number::parse_in_range(s)
                        .is_some_and(|r| r.is_err()) =>
            {
                err(crate::value::number::OUT_OF_RANGE_MSG)
            }
            Some(n) => Ok(Value::Number(n)),
            None => err("a number is required"),
        },
        (Value::String(s), Type::Bool) => match &**s {
            "true" | "1" => Ok(Value::Bool(true)),
            "false" | "0" => Ok(Value::Bool(false)),
            other => match other.to_lowercase().as_str() {
                "true" => err("a bool is required; to convert from string, use lowercase \"true\""),
                "false" => {
                    err("a bool is required; to convert from string, use lowercase \"false\"")
                }
                _ => err("a bool is required"),
            },
        },
        (Value::Object(f), Type::Object(wa)) => {
            let mut out = Vec::with_capacity(wa.len());
            for (name, wt) in wa.iter() {
                let Some(av) = f.get(name) else {
                    return err(format!("attribute {} is required", go_quote(name)));
                };
                out.push((name.clone(), elem_convert(av, wt, unsafe_)?));
            }
            Ok(Value::object_sorted(out))
        }
        (Value::Tuple(s), Type::Tuple(we)) => {
            let items = s
                .items
                .iter()
                .zip(we.iter())
                .map(|(x, w)| elem_convert(x, w, unsafe_))
                .collect::<Result<Vec<_>, _>>()?;
            Ok(Value::tuple(items))
        }
        (Value::List(s) | Value::Set(s), Type::List(we)) => {
            let items = s
                .items
                .iter()
                .map(|x| elem_convert(x, we, unsafe_))
                .collect::<Result<Vec<_>, _>>()?;
            finish_list(items, if **we == Type::Dynamic { s.elem() } else { we })
        }
        (Value::List(s) | Value::Set(s), Type::Set(we)) => {
            let items = s
                .items
                .iter()
                .map(|x| elem_convert(x, we, unsafe_))
                .collect::<Result<Vec<_>, _>>()?;
            finish_set(items, if **we == Type::Dynamic { s.elem() } else { we })
        }
        (Value::Map(f), Type::Map(we)) => {
            let entries = f
                .entries
                .iter()
                .map(|(k, x)| Ok((k.clone(), elem_convert(x, we, unsafe_)?)))
                .collect::<Result<Vec<_>, ConvertError>>()?;
            finish_map(
                entries,
                if **we == Type::Dynamic { f.elem() } else { we },
                false,
            )
        }
        (Value::Tuple(s), Type::List(we) | Type::Set(we)) => {
            let etys: Vec<Type> = s.items.iter().map(Value::type_of).collect();
            let is_set = matches!(want, Type::Set(_));
            if s.items.is_empty() {
                return Ok(if is_set {
                    make_set((**we).clone(), Vec::new())
                } else {
                    Value::list((**we).clone(), Vec::new())
                });
            }
            let Some(target) = tuple_target_elem(&etys, we, unsafe_) else {
                return err(mismatch_message(got, want));
            };
            let mut items = s
                .items
                .iter()
                .map(|x| elem_convert(x, &target, unsafe_))
                .collect::<Result<Vec<_>, _>>()?;
            if is_set {
                finish_set(items, &target)
            } else {
                items = unify_elements(items, unsafe_)?;
                finish_list(items, &target)
            }
        }
        (Value::Object(f), Type::Map(we)) => {
            if f.entries.is_empty() {
                return Ok(Value::map((**we).clone(), Vec::new()));
            }
            let tys: Vec<Type> = f.entries.iter().map(|(_, x)| x.type_of()).collect();
            let Some(target) = seq_target_elem(&tys, we, unsafe_, false) else {
                return err(mismatch_message(got, want));
            };
            let entries = f
                .entries
                .iter()
                .map(|(k, x)| Ok((k.clone(), elem_convert(x, &target, unsafe_)?)))
                .collect::<Result<Vec<_>, ConvertError>>()?;
            finish_map(entries, &target, true)
        }
        (Value::Map(f), Type::Object(wa)) => {
            let mut out = Vec::with_capacity(wa.len());
            for (name, wt) in wa.iter() {
                let Some(x) = f.get(name) else {
                    return err(format!(
                        "map has no element for required attribute {}",
                        go_quote(name)
                    ));
                };
                out.push((name.clone(), elem_convert(x, wt, unsafe_)?));
            }
            Ok(Value::object_sorted(out))
        }
        _ => err(mismatch_message(got, want)),
    }
}

/// Convert a nested element (cty's per-element conversion inside collections).
fn elem_convert(v: &Value, want: &Type, unsafe_: bool) -> Result<Value, ConvertError> {
    let got = v.type_of();
    if got == *want {
        return Ok(v.clone());
    }
    if !can_convert(&got, want, unsafe_) {
        return err(mismatch_message(&got, want));
    }
    apply(v, &got, want, unsafe_)
}

/// cty's `conversionUnifyListElements`: bring converted elements to one common type.
fn unify_elements(items: Vec<Value>, unsafe_: bool) -> Result<Vec<Value>, ConvertError> {
    let tys: Vec<Type> = items.iter().map(Value::type_of).collect();
    if tys.windows(2).all(|w| w[0] == w[1]) {
        return Ok(items);
    }
    let Some(u) = unify_impl(&tys, unsafe_) else {
        return err("cannot find a common base type for all elements");
    };
    items.iter().map(|x| elem_convert(x, &u, unsafe_)).collect()
}

fn finish_list(items: Vec<Value>, empty_elem: &Type) -> Result<Value, ConvertError> {
    let Some(first) = items.first() else {
        return Ok(Value::list(empty_elem.clone(), Vec::new()));
    };
    let t = first.type_of();
    if items.iter().any(|x| x.type_of() != t) {
        return err("element types must all match for conversion to list");
    }
    Ok(Value::list(t, items))
}

fn finish_set(items: Vec<Value>, empty_elem: &Type) -> Result<Value, ConvertError> {
    let Some(first) = items.first() else {
        return Ok(make_set(empty_elem.clone(), Vec::new()));
    };
    let t = first.type_of();
    if items.iter().any(|x| x.type_of() != t) {
        return err("element types must all match for conversion to set");
    }
    Ok(make_set(t, items))
}

fn finish_map(
    entries: Vec<(Str, Value)>,
    empty_elem: &Type,
    from_object: bool,
) -> Result<Value, ConvertError> {
    let Some(mut t) = entries.first().map(|(_, x)| x.type_of()) else {
        return Ok(Value::map(empty_elem.clone(), Vec::new()));
    };
    let mut entries = entries;
    if entries.iter().any(|(_, x)| x.type_of() != t)
        && matches!(
            t,
            Type::List(_) | Type::Set(_) | Type::Map(_) | Type::Object(_)
        )
    {
        let tys: Vec<Type> = entries.iter().map(|(_, x)| x.type_of()).collect();
        let Some(u) = unify_impl(&tys, from_object) else {
            return err("cannot find a common base type for all elements");
        };
        entries = entries
            .iter()
            .map(|(k, x)| Ok((k.clone(), elem_convert(x, &u, true)?)))
            .collect::<Result<Vec<_>, ConvertError>>()?;
        t = u;
    }
    if entries.iter().any(|(_, x)| x.type_of() != t) {
        return err(if from_object {
            "attribute types must all match for conversion to map"
        } else {
            "element types must all match for conversion to map"
        });
    }
    Ok(Value::map_sorted(t, entries))
}

/// cty's `MismatchMessage`: why `got` does not conform to `want`, in English.
pub fn mismatch_message(got: &Type, want: &Type) -> String {
    match (got, want) {
        (Type::Object(_), Type::Object(_)) => mismatch_objects(got, want),
        (Type::Tuple(_), Type::List(e)) if **e == Type::Dynamic => {
            "all list elements must have the same type".into()
        }
        (Type::Tuple(_), Type::Set(e)) if **e == Type::Dynamic => {
            "all set elements must have the same type".into()
        }
        (Type::Object(_), Type::Map(e)) if **e == Type::Dynamic => {
            "all map elements must have the same type".into()
        }
        (Type::Tuple(_) | Type::Object(_), w) if is_collection(w) => {
            mismatch_from_structural(got, want)
        }
        (g, w) if is_collection(g) && is_collection(w) => mismatch_collections(got, want),
        _ if !likely_confusing(got, want) => format!(
            "{} required, but have {}",
            want.friendly_name(),
            got.friendly_name()
        ),
        _ => format!("{} required", friendly_name_for_constraint(want)),
    }
}

fn mismatch_objects(got: &Type, want: &Type) -> String {
    let (Type::Object(ga), Type::Object(wa)) = (got, want) else {
        return "incorrect object attributes".into();
    };
    let mut missing: Vec<&str> = Vec::new();
    let mut unsafe_mismatch: Option<String> = None;
    let mut safe_mismatch: Option<String> = None;
    // Go iterates a map here; with several mismatching attributes the one reported is
    // unspecified. We take them in name order.
    for (name, wt) in wa.iter() {
        let Some(gt) = attr_type(ga, name) else {
            missing.push(name);
            continue;
        };
        if gt == wt {
            continue;
        }
        if unsafe_mismatch.is_some() {
            continue;
        }
        if !can_convert(gt, wt, true) {
            unsafe_mismatch = Some(format!(
                "attribute {}: {}",
                go_quote(name),
                mismatch_message(gt, wt)
            ));
        }
        if safe_mismatch.is_some() {
            continue;
        }
        if !can_convert(gt, wt, false) {
            safe_mismatch = Some(format!(
                "attribute {}: {}",
                go_quote(name),
                mismatch_message(gt, wt)
            ));
        }
    }
    missing.sort_unstable();
    match missing.len() {
        0 => {}
        1 => return format!("attribute {} is required", go_quote(missing[0])),
        2 => {
            return format!(
                "attributes {} and {} are required",
                go_quote(missing[0]),
                go_quote(missing[1])
            );
        }
        n => {
            let mut s = String::new();
            for name in &missing[..n - 1] {
                s.push_str(&go_quote(name));
                s.push_str(", ");
            }
            s.push_str("and ");
            s.push_str(&go_quote(missing[n - 1]));
            return format!("attributes {s} are required");
        }
    }
    unsafe_mismatch
        .or(safe_mismatch)
        .unwrap_or_else(|| "incorrect object attributes".into())
}

fn mismatch_from_structural(got: &Type, want: &Type) -> String {
    let required = || format!("{} required", friendly_name_for_constraint(want));
    let wety = match want {
        Type::List(e) | Type::Set(e) if matches!(got, Type::Tuple(_)) => e,
        Type::Map(e) if matches!(got, Type::Object(_)) => e,
        _ => return required(),
    };
    match got {
        Type::Tuple(ge) => {
            for (i, g) in ge.iter().enumerate() {
                if g == &**wety || can_convert(g, wety, true) {
                    continue;
                }
                return format!("element {i}: {}", mismatch_message(g, wety));
            }
        }
        Type::Object(ga) => {
            for (name, g) in ga.iter() {
                if g == &**wety || can_convert(g, wety, true) {
                    continue;
                }
                return format!("element {}: {}", go_quote(name), mismatch_message(g, wety));
            }
        }
        _ => return required(),
    }
    format!(
        "all elements must be {}",
        friendly_name_for_constraint(wety)
    )
}

fn mismatch_collections(got: &Type, want: &Type) -> String {
    let required = || format!("{} required", friendly_name_for_constraint(want));
    let (gety, wety, noun) = match (got, want) {
        (Type::List(g) | Type::Set(g), Type::List(w)) => (g, w, "list element type"),
        (Type::List(g) | Type::Set(g), Type::Set(w)) => (g, w, "set element type"),
        (Type::Map(g), Type::Map(w)) => (g, w, "map element type"),
        _ => return required(),
    };
    format!("incorrect {noun}: {}", mismatch_message(gety, wety))
}

fn has_dynamic(t: &Type) -> bool {
    !t.is_known_type()
}

/// cty's `typesAreLikelyToCauseConfusion` (including its object/tuple quirk).
fn likely_confusing(got: &Type, want: &Type) -> bool {
    if got.is_primitive() != want.is_primitive() {
        return false;
    }
    if *want == Type::String {
        return false;
    }
    if matches!(
        (got, want),
        (Type::Number, Type::Bool) | (Type::Bool, Type::Number)
    ) {
        return false;
    }
    if let (Some(ge), Some(we)) = (
        is_collection(got).then(|| got.element_type()).flatten(),
        is_collection(want).then(|| want.element_type()).flatten(),
    ) && !has_dynamic(ge)
        && has_dynamic(we)
    {
        return false;
    }
    if matches!(got, Type::Tuple(_)) && matches!(want, Type::Object(_)) {
        return false;
    }
    true
}

/// cty `convert.Unify` (safe conversions only): the common supertype of `types`, if any.
pub fn unify(types: &[Type]) -> Option<Type> {
    unify_impl(types, false)
}

/// cty `convert.UnifyUnsafe` (what hcl's conditional uses): unsafe conversions allowed, so
/// `1` and `"a"` unify to string and a string may become a number.
pub fn unify_unsafe(types: &[Type]) -> Option<Type> {
    unify_impl(types, true)
}

fn unify_impl(types: &[Type], unsafe_: bool) -> Option<Type> {
    if types.is_empty() {
        return None;
    }
    if types.windows(2).all(|w| w[0] == w[1]) {
        return Some(types[0].clone());
    }
    let (mut maps, mut lists, mut sets, mut objs, mut tups, mut dyns) = (0, 0, 0, 0, 0, 0);
    for t in types {
        match t {
            Type::Map(_) => maps += 1,
            Type::List(_) => lists += 1,
            Type::Set(_) => sets += 1,
            Type::Object(_) => objs += 1,
            Type::Tuple(_) => tups += 1,
            Type::Dynamic => dyns += 1,
            _ => {}
        }
    }
    let n = types.len();
    if maps > 0 && maps + dyns == n {
        return unify_collections(types, unsafe_, dyns > 0, Type::map);
    }
    if maps > 0 && maps + objs + dyns == n {
        if let Some(t @ Type::Map(_)) = unify_objects_as_maps(types, unsafe_) {
            return Some(t);
        }
    } else if lists > 0 && lists + dyns == n {
        return unify_collections(types, unsafe_, dyns > 0, Type::list);
    } else if lists > 0 && lists + tups + dyns == n {
        if let Some(t @ Type::List(_)) = unify_tuples_as_list(types, unsafe_) {
            return Some(t);
        }
    } else if sets > 0 && sets + dyns == n {
        return unify_collections(types, unsafe_, dyns > 0, Type::set);
    } else if objs > 0 && objs + dyns == n {
        return unify_object_types(types, unsafe_, dyns > 0);
    } else if tups > 0 && tups + dyns == n {
        return unify_tuple_types(types, unsafe_, dyns > 0);
    } else if objs > 0 && tups > 0 {
        return None;
    }
    prefer_convertible(types, unsafe_)
}

/// Where unification's loops account for their work ([`meter::tick`]).
const UNIFY_SITE: &str = "type unification";

/// unify's last resort (cty's `sortTypes` and the loop over its order): the first of the
/// types, most general first, that every other one converts to.
///
/// cty compares every pair of the n types and keeps the graph: n² comparisons and up to
/// n²/4 edges (a 100,000-element tuple of numbers and strings, 2.5 billion). Equal types
/// relate alike to every other, so this works on the k distinct types: the same order
/// ([`preference_order`]) in n·k comparisons and O(n) memory, then at most k² conversion
/// checks. A hostile tuple can still make k as large as n: the work is charged to the
/// clock as it goes, and a spent budget ends the search with no type (the meter names
/// the limit to the caller).
fn prefer_convertible(types: &[Type], unsafe_: bool) -> Option<Type> {
    let classes = Classes::of(types)?;
    let k = classes.reps.len();
    'pref: for w in preference_order(types, &classes)? {
        let want = &types[classes.reps[w]];
        meter::walked(k);
        meter::tick(UNIFY_SITE).ok()?;
        for (c, &r) in classes.reps.iter().enumerate() {
            if c != w && !can_convert(&types[r], want, unsafe_) {
                continue 'pref;
            }
        }
        return Some(want.clone());
    }
    None
}

/// The distinct types of a list of types: `reps[c]` is where class `c` first appears,
/// `of[i]` the class of the type at `i`, `members` the indices of each class in order.
struct Classes {
    reps: Vec<usize>,
    of: Vec<u32>,
    members: Vec<Vec<u32>>,
}

impl Classes {
    /// Found by comparing each type with the distinct ones before it: n·k comparisons,
    /// as many as [`preference_order`] makes anyway (and no hashing of types). `None`
    /// when the clock ran out.
    fn of(types: &[Type]) -> Option<Classes> {
        let (mut reps, mut members) = (Vec::<usize>::new(), Vec::<Vec<u32>>::new());
        let mut of = Vec::with_capacity(types.len());
        for (i, t) in types.iter().enumerate() {
            meter::walked(reps.len());
            meter::tick(UNIFY_SITE).ok()?;
            let c = match reps.iter().position(|&r| types[r] == *t) {
                Some(c) => c,
                None => {
                    reps.push(i);
                    members.push(Vec::new());
                    reps.len() - 1
                }
            };
            members[c].push(i as u32);
            of.push(c as u32);
        }
        Some(Classes { reps, of, members })
    }
}

/// cty's `sortTypes` order, each distinct type where it first appears in it: a topological
/// sort of "more general than" (Kahn's, a queue seeded with the unconstrained types in
/// order) that keeps the given order among unrelated types. Replayed type by type as cty
/// does, with the counts per class: processing any copy of a type lowers the count of
/// every type it is more general than, and when a class's count reaches zero all its
/// copies join the queue at once, in index order among the classes freed with them.
/// `None` when the clock ran out.
fn preference_order(types: &[Type], classes: &Classes) -> Option<Vec<usize>> {
    let k = classes.reps.len();
    let rep = |c: usize| &types[classes.reps[c]];
    // How many types (copies counted) are more general than each class.
    let mut waiting = vec![0usize; k];
    for p in 0..k {
        meter::walked(k);
        meter::tick(UNIFY_SITE).ok()?;
        for (s, w) in waiting.iter_mut().enumerate() {
            if s != p && compare_types(rep(p), rep(s)) < 0 {
                *w += classes.members[p].len();
            }
        }
    }
    let mut queue: Vec<u32> = (0..types.len() as u32)
        .filter(|&i| waiting[classes.of[i as usize] as usize] == 0)
        .collect();
    let (mut order, mut placed) = (Vec::new(), vec![false; k]);
    let mut freed: Vec<usize> = Vec::new();
    let mut q = 0;
    while let Some(&i) = queue.get(q) {
        q += 1;
        let c = classes.of[i as usize] as usize;
        if !std::mem::replace(&mut placed[c], true) {
            order.push(c);
        }
        meter::walked(k);
        meter::tick(UNIFY_SITE).ok()?;
        for (s, w) in waiting.iter_mut().enumerate() {
            if s != c && *w > 0 && compare_types(rep(c), rep(s)) < 0 {
                *w -= 1;
                if *w == 0 {
                    freed.push(s);
                }
            }
        }
        let start = queue.len();
        for s in freed.drain(..) {
            queue.extend_from_slice(&classes.members[s]);
        }
        queue[start..].sort_unstable();
    }
    Some(order)
}

fn all_convert(types: &[Type], to: &Type, unsafe_: bool) -> bool {
    types.iter().all(|t| t == to || can_convert(t, to, unsafe_))
}

fn unify_collections(
    types: &[Type],
    unsafe_: bool,
    has_dyn: bool,
    make: fn(Type) -> Type,
) -> Option<Type> {
    if has_dyn {
        return Some(Type::Dynamic);
    }
    let elems: Vec<Type> = types
        .iter()
        .filter_map(|t| t.element_type().cloned())
        .collect();
    let ret = make(unify_impl(&elems, unsafe_)?);
    all_convert(types, &ret, unsafe_).then_some(ret)
}

fn unify_objects_as_maps(types: &[Type], unsafe_: bool) -> Option<Type> {
    let objs: Vec<Type> = types
        .iter()
        .filter(|t| matches!(t, Type::Object(_)))
        .cloned()
        .collect();
    let mt = unify_objects_to_map(&objs, unsafe_)?;
    let mapped: Vec<Type> = types
        .iter()
        .map(|t| {
            if matches!(t, Type::Object(_)) {
                mt.clone()
            } else {
                t.clone()
            }
        })
        .collect();
    match unify_impl(&mapped, unsafe_)? {
        t @ Type::Map(_) => Some(t),
        _ => None,
    }
}

fn unify_tuples_as_list(types: &[Type], unsafe_: bool) -> Option<Type> {
    let tups: Vec<Type> = types
        .iter()
        .filter(|t| matches!(t, Type::Tuple(_)))
        .cloned()
        .collect();
    let lt = unify_tuples_to_list(&tups, unsafe_)?;
    let listed: Vec<Type> = types
        .iter()
        .map(|t| {
            if matches!(t, Type::Tuple(_)) {
                lt.clone()
            } else {
                t.clone()
            }
        })
        .collect();
    match unify_impl(&listed, unsafe_)? {
        t @ Type::List(_) => Some(t),
        _ => None,
    }
}

fn unify_object_types(types: &[Type], unsafe_: bool, has_dyn: bool) -> Option<Type> {
    if has_dyn {
        return Some(Type::Dynamic);
    }
    let attrs_of = |t: &Type| match t {
        Type::Object(a) => a.clone(),
        _ => Arc::from(Vec::new()),
    };
    let first = attrs_of(&types[0]);
    for t in &types[1..] {
        let a = attrs_of(t);
        if a.len() != first.len() || a.iter().zip(first.iter()).any(|(x, y)| x.0 != y.0) {
            return unify_objects_to_map(types, unsafe_);
        }
    }
    let mut ret = Vec::with_capacity(first.len());
    for (name, _) in first.iter() {
        let across: Vec<Type> = types
            .iter()
            .filter_map(|t| match t {
                Type::Object(a) => attr_type(a, name).cloned(),
                _ => None,
            })
            .collect();
        ret.push((name.clone(), unify_impl(&across, unsafe_)?));
    }
    let rt = Type::object(ret);
    if all_convert(types, &rt, unsafe_) {
        Some(rt)
    } else {
        unify_objects_to_map(types, unsafe_)
    }
}

fn unify_objects_to_map(types: &[Type], unsafe_: bool) -> Option<Type> {
    let mut atys = Vec::new();
    for t in types {
        if let Type::Object(a) = t {
            atys.extend(a.iter().map(|(_, t)| t.clone()));
        }
    }
    let rt = Type::map(unify_impl(&atys, unsafe_)?);
    all_convert(types, &rt, unsafe_).then_some(rt)
}

fn unify_tuple_types(types: &[Type], unsafe_: bool, has_dyn: bool) -> Option<Type> {
    if has_dyn {
        return Some(Type::Dynamic);
    }
    let elems_of = |t: &Type| match t {
        Type::Tuple(e) => e.clone(),
        _ => Arc::from(Vec::new()),
    };
    let first = elems_of(&types[0]);
    if types[1..].iter().any(|t| elems_of(t).len() != first.len()) {
        return unify_tuples_to_list(types, unsafe_);
    }
    let mut ret = Vec::with_capacity(first.len());
    for i in 0..first.len() {
        let across: Vec<Type> = types.iter().map(|t| elems_of(t)[i].clone()).collect();
        ret.push(unify_impl(&across, unsafe_)?);
    }
    let rt = Type::tuple(ret);
    if all_convert(types, &rt, unsafe_) {
        Some(rt)
    } else {
        unify_tuples_to_list(types, unsafe_)
    }
}

fn unify_tuples_to_list(types: &[Type], unsafe_: bool) -> Option<Type> {
    let mut etys = Vec::new();
    for t in types {
        if let Type::Tuple(e) = t {
            etys.extend(e.iter().cloned());
        }
    }
    let rt = Type::list(unify_impl(&etys, unsafe_)?);
    all_convert(types, &rt, unsafe_).then_some(rt)
}

/// cty's `compareTypes`: -1 if `a` is a supertype of `b`, 1 if the reverse, else 0.
fn compare_types(a: &Type, b: &Type) -> i32 {
    if *a == Type::Dynamic || *b == Type::Dynamic {
        return match (*a == Type::Dynamic, *b == Type::Dynamic) {
            (false, true) => -1,
            (true, false) => 1,
            _ => 0,
        };
    }
    if a.is_primitive() && b.is_primitive() && (*a == Type::String || *b == Type::String) {
        return match (*a == Type::String, *b == Type::String) {
            (false, true) => 1,
            (true, false) => -1,
            _ => 0,
        };
    }
    match (a, b) {
        (Type::List(x), Type::List(y))
        | (Type::Set(x), Type::Set(y))
        | (Type::Map(x), Type::Map(y)) => return compare_types(x, y),
        _ => {}
    }
    let (a, b, swap) = match (a, b) {
        (Type::Tuple(_), Type::List(_))
        | (Type::Object(_), Type::Map(_))
        | (Type::Set(_), Type::Tuple(_))
        | (Type::Set(_), Type::List(_)) => (b, a, -1),
        _ => (a, b, 1),
    };
    match (a, b) {
        (Type::Tuple(_) | Type::List(_), Type::Set(_)) => -swap,
        (Type::List(_), Type::Tuple(_)) => -swap,
        (Type::Map(_), Type::Object(_)) => -swap,
        (Type::Object(x), Type::Object(y)) => {
            if x.len() != y.len() {
                return 0;
            }
            let (mut a_super, mut b_super) = (false, false);
            for (name, xt) in x.iter() {
                let Some(yt) = attr_type(y, name) else {
                    return 0;
                };
                match compare_types(xt, yt) {
                    c if c < 0 => a_super = true,
                    c if c > 0 => b_super = true,
                    _ => {}
                }
            }
            super_result(a_super, b_super, swap)
        }
        (Type::Tuple(x), Type::Tuple(y)) => {
            if x.len() != y.len() {
                return 0;
            }
            let (mut a_super, mut b_super) = (false, false);
            for (xt, yt) in x.iter().zip(y.iter()) {
                match compare_types(xt, yt) {
                    c if c < 0 => a_super = true,
                    c if c > 0 => b_super = true,
                    _ => {}
                }
            }
            super_result(a_super, b_super, swap)
        }
        _ => 0,
    }
}

fn super_result(a_super: bool, b_super: bool, swap: i32) -> i32 {
    match (a_super, b_super) {
        (true, false) => -swap,
        (false, true) => swap,
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(x: &str) -> Value {
        Value::string(x)
    }
    fn tup(ts: Vec<Type>) -> Type {
        Type::tuple(ts)
    }
    fn obj(ts: Vec<(&str, Type)>) -> Type {
        Type::object(
            ts.into_iter()
                .map(|(k, t)| (Str::from(k), t))
                .collect::<Vec<_>>(),
        )
    }

    #[test]
    fn tuples_of_the_element_type_convert_as_the_general_path_does() {
        let l = |t: Type| Type::list(t);
        let st = |t: Type| Type::set(t);
        let tuples = [
            Value::tuple(vec![s("b"), s("a"), s("b")]),
            Value::tuple(vec![
                s("x"),
                Value::Null(Type::String),
                Value::Unknown(Type::String),
            ]),
            Value::tuple(vec![Value::int(2), Value::int(1)]),
            Value::tuple(vec![Value::Bool(true)]),
            Value::tuple(vec![
                Value::list(Type::String, vec![s("a")]),
                Value::list(Type::String, vec![]),
            ]),
            Value::tuple(vec![s("a"), Value::int(1)]),
            Value::tuple(vec![Value::NULL, s("a")]),
            Value::tuple(vec![]),
        ];
        let wants = [
            l(Type::String),
            st(Type::String),
            l(Type::Number),
            st(Type::Number),
            l(Type::Bool),
            l(l(Type::String)),
            st(l(Type::String)),
            l(Type::Dynamic),
        ];
        let mut fast = 0;
        for v in &tuples {
            for w in &wants {
                let general = can_convert(&v.type_of(), w, true)
                    .then(|| apply(v, &v.type_of(), w, true).ok())
                    .flatten();
                if let Some(f) = tuple_of_the_element_type(v, w) {
                    fast += 1;
                    let g = general.as_ref();
                    let g = g.unwrap_or_else(|| panic!("{v:?} to {w}: general path fails"));
                    assert!(
                        f.raw_equals(g) && f.type_of() == g.type_of(),
                        "{v:?} to {w}"
                    );
                }
                assert_eq!(
                    convert(v, w).ok().map(|c| (format!("{c:?}"), c.type_of())),
                    general.map(|c| (format!("{c:?}"), c.type_of())),
                    "{v:?} to {w}"
                );
            }
        }
        assert_eq!(fast, 9, "the fast path is taken where it applies");
        // In place: the same answer as `convert` for a tuple held nowhere else; a shared
        // one, or one `convert` changes, is left as it is.
        let mut in_place = 0;
        for v in &tuples {
            for w in &wants {
                let mut owned = Value::tuple(v.as_seq().unwrap_or(&[]).to_vec());
                if tuple_to_list_in_place(&mut owned, w) {
                    in_place += 1;
                    let c = convert(v, w).expect("converts");
                    assert!(
                        owned.raw_equals(&c) && owned.type_of() == c.type_of(),
                        "{v:?} to {w}"
                    );
                } else {
                    assert!(owned.raw_equals(v), "{v:?} to {w}: unchanged");
                }
                let mut shared = v.clone();
                assert!(!tuple_to_list_in_place(&mut shared, w), "{v:?} is shared");
            }
        }
        assert_eq!(in_place, 5, "lists, not sets");
    }

    #[test]
    fn primitives() {
        assert!(
            convert(&Value::int(5), &Type::String)
                .unwrap()
                .raw_equals(&s("5"))
        );
        assert!(
            convert(&Value::Bool(true), &Type::String)
                .unwrap()
                .raw_equals(&s("true"))
        );
        assert!(
            convert(&s("42"), &Type::Number)
                .unwrap()
                .raw_equals(&Value::int(42))
        );
        assert!(
            convert(&s("1"), &Type::Bool)
                .unwrap()
                .raw_equals(&Value::Bool(true))
        );
        assert_eq!(
            convert(&s("abc"), &Type::Number).unwrap_err().0,
            "a number is required"
        );
        assert_eq!(
            convert(&s("yes"), &Type::Bool).unwrap_err().0,
            "a bool is required"
        );
        assert_eq!(
            convert(&s("True"), &Type::Bool).unwrap_err().0,
            "a bool is required; to convert from string, use lowercase \"true\""
        );
        assert_eq!(
            convert(&Value::Bool(true), &Type::Number).unwrap_err().0,
            "number required, but have bool"
        );
        assert_eq!(
            convert(&Value::tuple(vec![]), &Type::String).unwrap_err().0,
            "string required, but have tuple"
        );
    }

    #[test]
    fn nulls_and_unknowns_take_target_type() {
        let n = convert(&Value::NULL, &Type::Number).unwrap();
        assert!(n.raw_equals(&Value::Null(Type::Number)));
        let n = convert(&Value::NULL, &Type::set(Type::Dynamic)).unwrap();
        assert!(n.raw_equals(&Value::Null(Type::set(Type::Dynamic))));
        let n = convert(
            &Value::Null(Type::list(Type::String)),
            &Type::set(Type::Dynamic),
        )
        .unwrap();
        assert!(n.raw_equals(&Value::Null(Type::set(Type::String))));
        let u = convert(&Value::Unknown(Type::Dynamic), &Type::String).unwrap();
        assert!(u.raw_equals(&Value::Unknown(Type::String)));
    }

    #[test]
    fn tuple_to_list() {
        let t = Value::tuple(vec![s("a"), Value::int(1)]);
        let l = convert(&t, &Type::list(Type::Dynamic)).unwrap();
        assert_eq!(l.type_of(), Type::list(Type::String));
        assert!(l.as_seq().unwrap()[1].raw_equals(&s("1")));
        let e = convert(&Value::tuple(vec![]), &Type::list(Type::Dynamic)).unwrap();
        assert_eq!(e.type_of(), Type::list(Type::Dynamic));
        let bad = Value::tuple(vec![s("a"), Value::object(vec![])]);
        assert_eq!(
            convert(&bad, &Type::list(Type::Dynamic)).unwrap_err().0,
            "all list elements must have the same type"
        );
        let nested = Value::tuple(vec![Value::tuple(vec![Value::int(1)])]);
        assert_eq!(
            convert(&nested, &Type::list(Type::String)).unwrap_err().0,
            "element 0: string required, but have tuple"
        );
        let with_null = Value::tuple(vec![Value::int(1), Value::NULL]);
        let l = convert(&with_null, &Type::list(Type::Dynamic)).unwrap();
        assert_eq!(l.type_of(), Type::list(Type::Number));
        assert!(l.as_seq().unwrap()[1].raw_equals(&Value::Null(Type::Number)));
    }

    #[test]
    fn tuple_to_set_orders_and_dedups() {
        let t = Value::tuple(vec![Value::int(1), s("1")]);
        let v = convert(&t, &Type::set(Type::Dynamic)).unwrap();
        assert_eq!(v.type_of(), Type::set(Type::String));
        assert_eq!(v.length(), Some(1));
    }

    #[test]
    fn objects_and_maps() {
        let o = Value::object(vec![("a".into(), Value::int(1)), ("b".into(), s("x"))]);
        let m = convert(&o, &Type::map(Type::Dynamic)).unwrap();
        assert_eq!(m.type_of(), Type::map(Type::String));
        let bad = Value::object(vec![
            ("a".into(), Value::int(1)),
            ("b".into(), Value::Bool(true)),
        ]);
        assert_eq!(
            convert(&bad, &Type::map(Type::Dynamic)).unwrap_err().0,
            "all map elements must have the same type"
        );
        let want = obj(vec![("a", Type::String), ("c", Type::Number)]);
        assert_eq!(
            convert(&o, &want).unwrap_err().0,
            "attribute \"c\" is required"
        );
        let want = obj(vec![("a", Type::String)]);
        let r = convert(&o, &want).unwrap();
        assert_eq!(r.type_of(), want);
        let e = convert(&Value::object(vec![]), &Type::map(Type::Dynamic)).unwrap();
        assert_eq!(e.type_of(), Type::map(Type::Dynamic));
        assert_eq!(
            convert(&Value::tuple(vec![]), &Type::map(Type::String))
                .unwrap_err()
                .0,
            "map of string required"
        );
    }

    #[test]
    fn collection_messages() {
        let l = Value::list(Type::list(Type::String), vec![]);
        assert_eq!(
            convert(&l, &Type::list(Type::Number)).unwrap_err().0,
            "incorrect list element type: number required, but have list of string"
        );
        let set = crate::value::ops::make_set(Type::String, vec![s("a")]);
        let l = convert(&set, &Type::list(Type::Dynamic)).unwrap();
        assert_eq!(l.type_of(), Type::list(Type::String));
    }

    /// cty's `sortTypes` as cty writes it (every pair compared, the graph kept): the
    /// reference [`preference_order`] is checked against.
    fn sort_types(tys: &[Type]) -> Vec<usize> {
        let l = tys.len();
        let mut edges: Vec<Vec<usize>> = vec![Vec::new(); l];
        for i in 0..l.saturating_sub(1) {
            for j in i + 1..l {
                match compare_types(&tys[i], &tys[j]) {
                    c if c < 0 => edges[i].push(j),
                    c if c > 0 => edges[j].push(i),
                    _ => {}
                }
            }
        }
        let mut indeg = vec![0usize; l];
        for outs in &edges {
            for &j in outs {
                indeg[j] += 1;
            }
        }
        let mut result: Vec<usize> = (0..l).filter(|&i| indeg[i] == 0).collect();
        let mut q = 0;
        while q < result.len() {
            let i = result[q];
            q += 1;
            for &j in &edges[i] {
                indeg[j] -= 1;
                if indeg[j] == 0 {
                    result.push(j);
                }
            }
        }
        result
    }

    /// Types to draw lists from: primitives, collections of them, structural types
    /// related to those, and `Dynamic`.
    fn type_pool() -> Vec<Type> {
        let p = [Type::String, Type::Number, Type::Bool, Type::Dynamic];
        let mut pool = p.to_vec();
        for t in &p {
            pool.push(Type::list(t.clone()));
            pool.push(Type::set(t.clone()));
            pool.push(Type::map(t.clone()));
            pool.push(tup(vec![t.clone()]));
            pool.push(tup(vec![t.clone(), Type::Number]));
            pool.push(obj(vec![("a", t.clone())]));
            pool.push(obj(vec![("a", t.clone()), ("b", Type::String)]));
        }
        pool.push(Type::list(Type::list(Type::String)));
        pool.push(tup(vec![]));
        pool.push(Type::empty_object());
        pool
    }

    #[test]
    fn preference_order_is_cty_sort_types_first_appearances() {
        let pool = type_pool();
        // A fixed xorshift: lists of 0 to 11 types drawn from a few of the pool's, so that
        // most lists repeat types.
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for _ in 0..50_000 {
            let pick: Vec<&Type> = (0..1 + next() % 6)
                .map(|_| &pool[(next() % pool.len() as u64) as usize])
                .collect();
            let tys: Vec<Type> = (0..next() % 16)
                .map(|_| pick[(next() % pick.len() as u64) as usize].clone())
                .collect();
            let classes = Classes::of(&tys).expect("no budget");
            let mut want = Vec::new();
            for i in sort_types(&tys) {
                let c = classes.of[i] as usize;
                if !want.contains(&c) {
                    want.push(c);
                }
            }
            assert_eq!(preference_order(&tys, &classes), Some(want), "{tys:?}");
            for unsafe_ in [false, true] {
                let reference = sort_types(&tys).into_iter().find(|&wi| {
                    tys.iter()
                        .enumerate()
                        .all(|(i, t)| i == wi || *t == tys[wi] || can_convert(t, &tys[wi], unsafe_))
                });
                assert_eq!(
                    prefer_convertible(&tys, unsafe_),
                    reference.map(|wi| tys[wi].clone()),
                    "{tys:?} unsafe={unsafe_}"
                );
            }
        }
    }

    #[test]
    fn compare_types_is_antisymmetric_and_zero_on_equal_types() {
        // The replay in preference_order relies on it: which of two types comes first in
        // the list does not change which is the more general.
        let pool = type_pool();
        for a in &pool {
            assert_eq!(compare_types(a, a), 0, "{a:?}");
            for b in &pool {
                assert_eq!(compare_types(a, b), -compare_types(b, a), "{a:?} {b:?}");
            }
        }
    }

    #[test]
    fn unifying_many_copies_of_few_types_is_linear() {
        // cty's graph of a 100,000-element tuple of numbers and strings has 2.5 billion
        // edges; here two classes, 200,000 comparisons.
        let tys: Vec<Type> = (0..100_000)
            .map(|i| {
                if i % 2 == 0 {
                    Type::Number
                } else {
                    Type::String
                }
            })
            .collect();
        assert_eq!(unify_unsafe(&tys), Some(Type::String));
        let tys: Vec<Type> = (0..100_000)
            .map(|i| if i % 2 == 0 { Type::Number } else { Type::Bool })
            .collect();
        assert_eq!(unify_unsafe(&tys), None);
    }

    #[test]
    fn unification() {
        assert_eq!(
            unify_unsafe(&[Type::Number, Type::String]),
            Some(Type::String)
        );
        assert_eq!(unify(&[Type::Number, Type::String]), Some(Type::String));
        assert_eq!(unify(&[Type::Number, Type::Bool]), None);
        assert_eq!(
            unify_unsafe(&[tup(vec![Type::Number]), Type::empty_object()]),
            None
        );
        assert_eq!(
            unify(&[tup(vec![Type::Number]), tup(vec![Type::String])]),
            Some(tup(vec![Type::String]))
        );
        assert_eq!(
            unify(&[
                tup(vec![Type::Number]),
                tup(vec![Type::String, Type::String])
            ]),
            Some(Type::list(Type::String))
        );
        assert_eq!(
            unify(&[
                obj(vec![("a", Type::Number)]),
                obj(vec![("b", Type::Number)])
            ]),
            Some(Type::map(Type::Number))
        );
        assert_eq!(
            unify(&[Type::list(Type::String), tup(vec![])]),
            Some(Type::list(Type::String))
        );
        assert_eq!(
            unify_unsafe(&[Type::Dynamic, Type::Number]),
            Some(Type::Number)
        );
        assert_eq!(unify(&[]), None);
    }

    #[test]
    fn has_type_matches_type_of() {
        let vals = vec![
            Value::int(1),
            s("a"),
            Value::NULL,
            Value::tuple(vec![Value::int(1), s("x")]),
            Value::object(vec![("a".into(), Value::tuple(vec![]))]),
            Value::list(Type::String, vec![s("a")]),
            Value::map(Type::Number, vec![]),
        ];
        for v in &vals {
            for w in &vals {
                assert_eq!(
                    has_type(v, &w.type_of()),
                    v.type_of() == w.type_of(),
                    "{v:?} {w:?}"
                );
            }
        }
    }

    #[test]
    fn constraint_names() {
        assert_eq!(
            friendly_name_for_constraint(&Type::list(Type::Dynamic)),
            "list of any single type"
        );
        assert_eq!(friendly_name_for_constraint(&Type::Dynamic), "any type");
        assert_eq!(go_quote("a\"b\n"), "\"a\\\"b\\n\"");
    }
}
