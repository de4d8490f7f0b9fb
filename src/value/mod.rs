//! Runtime values with cty's observable semantics: typed nulls, lists vs tuples, maps vs
//! objects, sets in cty order, and exact numbers. Collections and long strings are shared
//! (`Arc`), so a constant of a compiled program or a part of a request is never copied;
//! short strings live inside the value ([`Str`]).

pub mod coll;
pub mod convert;
pub mod gofmt;
pub mod gotime;
pub mod json;
pub mod meter;
pub mod number;
pub mod ops;
pub mod yaml;

use crate::value::number::Number;
use std::cmp::Ordering;
use std::fmt;
use std::sync::Arc;

pub use crate::text::Str;
pub use coll::{Fields, MAX_DEPTH, Seq, Shared, Summary};

/// A cty type. Object attributes are sorted by name.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Type {
    /// cty's `DynamicPseudoType`: any type (only for nulls/unknowns and empty collections).
    Dynamic,
    Bool,
    Number,
    String,
    List(Arc<Type>),
    Set(Arc<Type>),
    Map(Arc<Type>),
    Tuple(Arc<Vec<Type>>),
    Object(Arc<Vec<(Str, Type)>>),
}

impl Type {
    pub fn list(t: Type) -> Type {
        Type::List(Arc::new(t))
    }
    pub fn set(t: Type) -> Type {
        Type::Set(Arc::new(t))
    }
    pub fn map(t: Type) -> Type {
        Type::Map(Arc::new(t))
    }
    /// A tuple type of these element types, in order.
    pub fn tuple(elems: impl IntoIterator<Item = Type>) -> Type {
        Type::Tuple(Arc::new(elems.into_iter().collect()))
    }
    /// An object type of these attributes, which come sorted by name (cty's order, which
    /// lookups and comparisons rely on).
    pub fn object(attrs: impl IntoIterator<Item = (Str, Type)>) -> Type {
        let attrs: Vec<(Str, Type)> = attrs.into_iter().collect();
        debug_assert!(
            attrs.windows(2).all(|w| w[0].0 < w[1].0),
            "unsorted attributes"
        );
        Type::Object(Arc::new(attrs))
    }
    pub fn empty_object() -> Type {
        Type::object([])
    }
    pub fn empty_tuple() -> Type {
        Type::tuple([])
    }

    /// cty's `FriendlyName`, used in error messages ("string", "list of number", "object", ...).
    pub fn friendly_name(&self) -> String {
        match self {
            Type::Dynamic => "dynamic".into(),
            Type::Bool => "bool".into(),
            Type::Number => "number".into(),
            Type::String => "string".into(),
            Type::List(e) => format!("list of {}", e.friendly_name()),
            Type::Set(e) => format!("set of {}", e.friendly_name()),
            Type::Map(e) => format!("map of {}", e.friendly_name()),
            Type::Tuple(_) => "tuple".into(),
            Type::Object(_) => "object".into(),
        }
    }

    /// True for types with no dynamic part anywhere inside.
    pub fn is_known_type(&self) -> bool {
        match self {
            Type::Dynamic => false,
            Type::Bool | Type::Number | Type::String => true,
            Type::List(e) | Type::Set(e) | Type::Map(e) => e.is_known_type(),
            Type::Tuple(ts) => ts.iter().all(Type::is_known_type),
            Type::Object(fs) => fs.iter().all(|(_, t)| t.is_known_type()),
        }
    }

    pub fn is_primitive(&self) -> bool {
        matches!(self, Type::Bool | Type::Number | Type::String)
    }

    /// How deeply the type nests (0 for a primitive or `Dynamic`): what a typed null or
    /// unknown, or an empty list of this type, adds to a value's depth ([`MAX_DEPTH`]).
    /// Walked, counted as walked elements; a primitive is answered without a call.
    #[inline]
    pub fn depth(&self) -> u32 {
        match self {
            Type::Dynamic | Type::Bool | Type::Number | Type::String => 0,
            _ => self.nested_depth(),
        }
    }

    #[inline(never)]
    fn nested_depth(&self) -> u32 {
        let inner = match self {
            Type::Dynamic | Type::Bool | Type::Number | Type::String => return 0,
            Type::List(e) | Type::Set(e) | Type::Map(e) => e.depth(),
            Type::Tuple(ts) => {
                meter::walked(ts.len());
                ts.iter().map(Type::depth).max().unwrap_or(0)
            }
            Type::Object(fs) => {
                meter::walked(fs.len());
                fs.iter().map(|(_, t)| t.depth()).max().unwrap_or(0)
            }
        };
        inner.saturating_add(1)
    }

    /// Element type of a list, set or map.
    pub fn element_type(&self) -> Option<&Type> {
        match self {
            Type::List(e) | Type::Set(e) | Type::Map(e) => Some(e),
            _ => None,
        }
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.friendly_name())
    }
}

/// The outermost constructor of a [`Type`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Dynamic,
    Bool,
    Number,
    String,
    List,
    Set,
    Map,
    Tuple,
    Object,
}

impl Kind {
    pub fn is_primitive(self) -> bool {
        matches!(self, Kind::Bool | Kind::Number | Kind::String)
    }

    /// A list, set or tuple.
    pub fn is_sequence(self) -> bool {
        matches!(self, Kind::List | Kind::Set | Kind::Tuple)
    }
}

/// A cty value.
#[derive(Clone, Debug)]
#[repr(u64)]
pub enum Value {
    /// A null of the given type (`Dynamic` for a bare `null`).
    Null(Type),
    /// A value not known yet, of the given type. Request data is always known: unknowns
    /// stand in for what could not be computed (the evaluator's result once a budget has
    /// stopped it, so no block runs on a wrong value) and propagate through operators,
    /// calls and constructors as cty's do, deferring the block that reads them.
    Unknown(Type),
    Bool(bool),
    Number(Number),
    String(Str),
    List(Shared<Seq>),
    Set(Shared<Seq>),
    Tuple(Shared<Seq>),
    Map(Shared<Fields>),
    Object(Shared<Fields>),
}

// A value is moved, cloned and dropped by every instruction: a `Type` of one tag and one
// pointer (tuple and object types behind a thin `Arc<Vec<_>>`, not a fat `Arc<[_]>`)
// keeps it at three words.
const _: () = assert!(std::mem::size_of::<Type>() == 16);
const _: () = assert!(std::mem::size_of::<Value>() == 24);
const _: () = assert!(std::mem::size_of::<Result<Value, ()>>() == 24);
const _: () = assert!(std::mem::size_of::<Option<Value>>() == 24);

impl Value {
    pub const NULL: Value = Value::Null(Type::Dynamic);

    /// A clone, made as a copy of the value's bytes plus one more reference to what it
    /// points to, which is what each payload's clone is. For the VM's loads: the copy goes
    /// into the stack's slot in two 16-byte moves, where the derived clone wrote it variant
    /// by variant and the push's 16-byte reads of it stalled (perf: the hottest
    /// instructions of `Vm::run`). Kept apart from `Clone`, which everywhere else measured
    /// slower this way.
    #[inline(always)]
    pub fn clone_for_push(&self) -> Value {
        use std::mem::forget;
        match self {
            Value::Null(t) | Value::Unknown(t) => forget(t.clone()),
            Value::Bool(_) => {}
            Value::Number(n) => forget(n.clone()),
            Value::String(s) => forget(s.clone()),
            Value::List(s) | Value::Set(s) | Value::Tuple(s) => forget(Shared::clone(s)),
            Value::Map(f) | Value::Object(f) => forget(Shared::clone(f)),
        }
        // SAFETY: the payload's clone, forgotten above, took the reference the copy owns;
        // each payload's clone copies its bits (an Arc's pointer, a Str's or a small
        // Number's bytes, a Type's Arcs), so the copy is that clone.
        unsafe { std::ptr::read(self) }
    }

    /// Whether dropping the value frees nothing: a bool, a small number, an inline or
    /// interned string, a null or unknown of a primitive type. See [`Value::discard`].
    #[inline(always)]
    pub fn owns_nothing(&self) -> bool {
        match self {
            Value::Null(t) | Value::Unknown(t) => {
                matches!(t, Type::Dynamic | Type::Bool | Type::Number | Type::String)
            }
            Value::Bool(_) => true,
            Value::Number(n) => n.is_small(),
            Value::String(s) => !s.is_counted(),
            _ => false,
        }
    }

    /// For a collection, whether no other value holds it (`Some(true)`: it is this
    /// value's own, and written out nothing of it is a copy); `None` for any other value.
    /// The VM's charges ask it: a collection held elsewhere too costs its expanded size.
    #[inline(always)]
    pub fn collection_unique(&self) -> Option<bool> {
        match self {
            Value::List(q) | Value::Set(q) | Value::Tuple(q) => Some(q.is_unique()),
            Value::Map(f) | Value::Object(f) => Some(f.is_unique()),
            _ => None,
        }
    }

    /// Drops the value, calling its drop only when it owns something. The VM drops most
    /// of its operands this way: the drop glue, called out of line for every value (and
    /// again for a null's type), was ~2% of a heavy collection's instructions.
    #[inline(always)]
    pub fn discard(self) {
        if self.owns_nothing() {
            std::mem::forget(self);
        } else {
            drop(self);
        }
    }

    /// Overwrites the value with `v`, the old one [discarded](Value::discard).
    #[inline(always)]
    pub fn assign(&mut self, v: Value) {
        std::mem::replace(self, v).discard();
    }

    /// Shortens `values` to `len` (as `Vec::truncate`), each removed value [discarded](
    /// Value::discard) where it lies: popped one by one, each was moved out piece by
    /// piece first (~20 instructions a value).
    #[inline(always)]
    pub fn truncate(values: &mut Vec<Value>, len: usize) {
        let Some(n) = values.len().checked_sub(len) else {
            return;
        };
        // SAFETY: the length is cut first, so the removed values belong to this loop
        // alone (a drop that unwound would leak the rest, never drop one twice); each
        // pointer is to one of the `n` initialized values past the new length, inside
        // the vector's buffer, and each is dropped at most once.
        unsafe {
            let tail = values.as_mut_ptr().add(len);
            values.set_len(len);
            for i in 0..n {
                let v = tail.add(i);
                if !(*v).owns_nothing() {
                    std::ptr::drop_in_place(v);
                }
            }
        }
    }

    /// Moves the value onto the end of `stack` as three whole words. A value the compiler
    /// holds in pieces (its second word as a byte and seven more: a bool, a small number's
    /// tag and an error's kind start there) was otherwise stored piece by piece into a
    /// temporary and reloaded with one 16-byte read, which the CPU cannot forward from
    /// them: a stall on every push of a builtin's or a template's result (perf samples;
    /// instruction counts do not show it).
    #[inline(always)]
    pub fn push_onto(self, stack: &mut Vec<Value>) {
        use std::mem::MaybeUninit;
        // SAFETY: a value is three words (asserted above); `MaybeUninit` words may hold
        // its padding. The bits move, ownership with them: `self` is not dropped.
        let words: [MaybeUninit<u64>; 3] = unsafe { std::mem::transmute(self) };
        stack.reserve(1);
        let len = stack.len();
        // SAFETY: `reserve` made room for one more value past `len`, aligned for a value
        // and so for its words; the three words written are a whole value's bits.
        unsafe {
            let slot = stack.as_mut_ptr().add(len).cast::<MaybeUninit<u64>>();
            slot.write(words[0]);
            slot.add(1).write(words[1]);
            slot.add(2).write(words[2]);
            stack.set_len(len + 1);
        }
    }

    /// A string value, in Unicode normal form C as cty makes every string it creates
    /// (`cty.StringVal`), so lengths, comparisons and output match Go. ASCII (the common
    /// case) is returned as is without a scan of its characters.
    pub fn string(s: impl Into<Str>) -> Value {
        let s: Str = s.into();
        if s.is_ascii() {
            return Value::String(s);
        }
        use unicode_normalization::{IsNormalized, UnicodeNormalization, is_nfc_quick};
        match is_nfc_quick(s.chars()) {
            IsNormalized::Yes => Value::String(s),
            _ => Value::String(s.nfc().collect::<String>().into()),
        }
    }

    pub fn int(i: i64) -> Value {
        Value::Number(Number::from_i64(i))
    }

    pub fn tuple(items: Vec<Value>) -> Value {
        Value::Tuple(Seq::new(Type::Dynamic, items))
    }

    /// A list; `elem` must be the (common) element type.
    pub fn list(elem: Type, items: Vec<Value>) -> Value {
        Value::List(Seq::new(elem, items))
    }

    /// A set of `items` already in cty's set order with no duplicates.
    pub fn set_ordered(elem: Type, items: Vec<Value>) -> Value {
        Value::Set(Seq::new(elem, items))
    }

    /// An object from entries in any order (later duplicates win, as in hcl).
    pub fn object(mut entries: Vec<(Str, Value)>) -> Value {
        sort_dedup_entries(&mut entries);
        Value::Object(Fields::sorted(Type::Dynamic, entries))
    }

    /// [`Value::object_sorted`] of the entries' summary (keys and values) the caller
    /// added up as it looked at each (the VM, charging them; see [`Seq::counted_iter`]).
    #[inline]
    pub fn object_sorted_counted(entries: Vec<(Str, Value)>, contents: Summary) -> Value {
        debug_assert!(sorted_unique(&entries));
        Value::Object(Fields::counted(Type::Dynamic, entries, contents))
    }

    /// An object from entries already sorted by key with no duplicates.
    pub fn object_sorted(entries: Vec<(Str, Value)>) -> Value {
        Value::Object(Fields::sorted(Type::Dynamic, entries))
    }

    /// A map from entries in any order; `elem` must be the (common) element type.
    pub fn map(elem: Type, mut entries: Vec<(Str, Value)>) -> Value {
        sort_dedup_entries(&mut entries);
        Value::Map(Fields::sorted(elem, entries))
    }

    /// A map from entries already sorted by key with no duplicates.
    pub fn map_sorted(elem: Type, entries: Vec<(Str, Value)>) -> Value {
        Value::Map(Fields::sorted(elem, entries))
    }

    /// How deeply the value nests ([`MAX_DEPTH`]): 0 for a scalar, a collection's own
    /// count, a typed null's or unknown's type's depth.
    #[inline]
    pub fn depth(&self) -> u32 {
        match self {
            Value::Null(t) | Value::Unknown(t) => t.depth(),
            Value::Bool(_) | Value::Number(_) | Value::String(_) => 0,
            Value::List(s) | Value::Set(s) | Value::Tuple(s) => s.depth(),
            Value::Map(f) | Value::Object(f) => f.depth(),
        }
    }

    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null(_))
    }

    pub fn is_unknown(&self) -> bool {
        matches!(self, Value::Unknown(_))
    }

    /// True if the value or anything inside it is unknown: a collection knows it
    /// ([`Summary`]), so no value is walked.
    #[inline]
    pub fn contains_unknown(&self) -> bool {
        match self {
            Value::Unknown(_) => true,
            v => v.summary().is_some_and(Summary::unknown),
        }
    }

    /// What a collection holds ([`Summary`]); `None` for a scalar, null or unknown.
    #[inline]
    pub fn summary(&self) -> Option<&Summary> {
        match self {
            Value::List(q) | Value::Set(q) | Value::Tuple(q) => Some(q.summary()),
            Value::Map(f) | Value::Object(f) => Some(f.summary()),
            _ => None,
        }
    }

    /// The value's cty type.
    pub fn type_of(&self) -> Type {
        match self {
            Value::Null(t) | Value::Unknown(t) => t.clone(),
            Value::Bool(_) => Type::Bool,
            Value::Number(_) => Type::Number,
            Value::String(_) => Type::String,
            Value::List(s) => Type::List(Arc::new(s.elem().clone())),
            Value::Set(s) => Type::Set(Arc::new(s.elem().clone())),
            Value::Map(f) => Type::Map(Arc::new(f.elem().clone())),
            Value::Tuple(s) => {
                meter::walked(s.items.len());
                Type::tuple(s.items.iter().map(Value::type_of))
            }
            Value::Object(f) => {
                meter::walked(f.entries.len());
                Type::object(f.entries.iter().map(|(k, v)| (k.clone(), v.type_of())))
            }
        }
    }

    /// Whether `self.type_of() == other.type_of()`, decided without building either type
    /// (an object's type is as large as the object).
    pub fn same_type(&self, other: &Value) -> bool {
        match (self, other) {
            (Value::Null(t) | Value::Unknown(t), v) | (v, Value::Null(t) | Value::Unknown(t)) => {
                v.has_type(t)
            }
            (Value::Bool(_), Value::Bool(_))
            | (Value::Number(_), Value::Number(_))
            | (Value::String(_), Value::String(_)) => true,
            (Value::List(a), Value::List(b)) | (Value::Set(a), Value::Set(b)) => {
                a.elem() == b.elem()
            }
            (Value::Map(a), Value::Map(b)) => a.elem() == b.elem(),
            (Value::Tuple(a), Value::Tuple(b)) => {
                meter::walked(a.items.len());
                a.items.len() == b.items.len()
                    && a.items.iter().zip(&b.items).all(|(x, y)| x.same_type(y))
            }
            (Value::Object(a), Value::Object(b)) => {
                meter::walked(a.entries.len());
                a.entries.len() == b.entries.len()
                    && a.entries
                        .iter()
                        .zip(&b.entries)
                        .all(|((ka, x), (kb, y))| ka == kb && x.same_type(y))
            }
            _ => false,
        }
    }

    /// Whether `self.type_of() == *t`, decided without building the value's type.
    pub fn has_type(&self, t: &Type) -> bool {
        match (self, t) {
            (Value::Null(vt) | Value::Unknown(vt), t) => vt == t,
            (Value::Bool(_), Type::Bool)
            | (Value::Number(_), Type::Number)
            | (Value::String(_), Type::String) => true,
            (Value::List(s), Type::List(e)) | (Value::Set(s), Type::Set(e)) => *s.elem() == **e,
            (Value::Map(f), Type::Map(e)) => *f.elem() == **e,
            (Value::Tuple(s), Type::Tuple(ts)) => {
                meter::walked(s.items.len());
                s.items.len() == ts.len()
                    && s.items.iter().zip(ts.iter()).all(|(x, t)| x.has_type(t))
            }
            (Value::Object(f), Type::Object(attrs)) => {
                meter::walked(f.entries.len());
                f.entries.len() == attrs.len()
                    && f.entries
                        .iter()
                        .zip(attrs.iter())
                        .all(|((k, x), (n, t))| k == n && x.has_type(t))
            }
            _ => false,
        }
    }

    /// The outermost constructor of the value's type (`type_of` without its contents).
    pub fn kind(&self) -> Kind {
        match self {
            Value::Null(t) | Value::Unknown(t) => match t {
                Type::Dynamic => Kind::Dynamic,
                Type::Bool => Kind::Bool,
                Type::Number => Kind::Number,
                Type::String => Kind::String,
                Type::List(_) => Kind::List,
                Type::Set(_) => Kind::Set,
                Type::Map(_) => Kind::Map,
                Type::Tuple(_) => Kind::Tuple,
                Type::Object(_) => Kind::Object,
            },
            Value::Bool(_) => Kind::Bool,
            Value::Number(_) => Kind::Number,
            Value::String(_) => Kind::String,
            Value::List(_) => Kind::List,
            Value::Set(_) => Kind::Set,
            Value::Tuple(_) => Kind::Tuple,
            Value::Map(_) => Kind::Map,
            Value::Object(_) => Kind::Object,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }

    pub fn as_number(&self) -> Option<&Number> {
        match self {
            Value::Number(n) => Some(n),
            _ => None,
        }
    }

    /// Elements of a list, set or tuple.
    pub fn as_seq(&self) -> Option<&[Value]> {
        match self {
            Value::List(s) | Value::Set(s) | Value::Tuple(s) => Some(&s.items),
            _ => None,
        }
    }

    /// Entries of a map or object.
    pub fn as_fields(&self) -> Option<&[(Str, Value)]> {
        match self {
            Value::Map(f) | Value::Object(f) => Some(&f.entries),
            _ => None,
        }
    }

    /// Attribute or map key lookup.
    pub fn get_attr(&self, key: &str) -> Option<&Value> {
        match self {
            Value::Map(f) | Value::Object(f) => f.get(key),
            _ => None,
        }
    }

    /// [`Value::get_attr`] by a key that is already a [`Str`] ([`Fields::get_key`]): a
    /// resource's name looked up among the observed ones.
    pub fn get_attr_key(&self, key: &Str) -> Option<&Value> {
        match self {
            Value::Map(f) | Value::Object(f) => f.get_key(key),
            _ => None,
        }
    }

    /// Number of elements of a collection (None for primitives, null, unknown).
    pub fn length(&self) -> Option<usize> {
        match self {
            Value::List(s) | Value::Set(s) | Value::Tuple(s) => Some(s.items.len()),
            Value::Map(f) | Value::Object(f) => Some(f.entries.len()),
            _ => None,
        }
    }

    /// cty's `RawEquals`-like structural equality including types (used by tests and sets).
    pub fn raw_equals(&self, other: &Value) -> bool {
        match (self, other) {
            (Value::Null(a), Value::Null(b)) | (Value::Unknown(a), Value::Unknown(b)) => a == b,
            (Value::Bool(a), Value::Bool(b)) => a == b,
            (Value::Number(a), Value::Number(b)) => a == b,
            (Value::String(a), Value::String(b)) => a == b,
            (Value::List(a), Value::List(b))
            | (Value::Set(a), Value::Set(b))
            | (Value::Tuple(a), Value::Tuple(b)) => {
                a.elem() == b.elem()
                    && a.items.len() == b.items.len()
                    && a.items.iter().zip(&b.items).all(|(x, y)| x.raw_equals(y))
            }
            (Value::Map(a), Value::Map(b)) | (Value::Object(a), Value::Object(b)) => {
                a.elem() == b.elem()
                    && a.entries.len() == b.entries.len()
                    && a.entries
                        .iter()
                        .zip(&b.entries)
                        .all(|((ka, va), (kb, vb))| ka == kb && va.raw_equals(vb))
            }
            _ => false,
        }
    }
}

impl Default for Value {
    /// A null of dynamic type, cty's zero value for an absent variable.
    fn default() -> Value {
        Value::NULL
    }
}

/// Two runs of entries, each sorted by key without duplicates, as one such run; on equal
/// keys `b`'s entry wins (what `merge` and a later object literal key do). Linear, one
/// allocation: the callers build objects from runs they already hold sorted.
pub fn merge_runs(
    a: impl ExactSizeIterator<Item = (Str, Value)>,
    b: impl ExactSizeIterator<Item = (Str, Value)>,
) -> Vec<(Str, Value)> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let mut b = b.peekable();
    for e in a {
        while let Some(x) = b.next_if(|x| x.0 < e.0) {
            out.push(x);
        }
        match b.next_if(|x| x.0 == e.0) {
            Some(x) => out.push(x),
            None => out.push(e),
        }
    }
    out.extend(b);
    out
}

/// True if the entries are in strictly increasing key order (byte order: [`cmp_str`], as
/// `Str` orders itself): the invariant of a map's or object's entries.
pub fn sorted_unique<V>(entries: &[(Str, V)]) -> bool {
    entries.windows(2).all(|w| w[0].0 < w[1].0)
}

/// Sorts entries by key, keeping the last of equal keys (Go's map assignment order): the
/// one way maps, objects and object types are built from entries in any order.
pub fn sort_dedup_entries<V>(entries: &mut Vec<(Str, V)>) {
    let kept = sort_dedup_slice(entries);
    entries.truncate(kept);
}

/// [`sort_dedup_entries`] of entries in any buffer (a vector on the stack): the kept
/// entries end up first, and their number is returned.
pub fn sort_dedup_slice<V>(entries: &mut [(Str, V)]) -> usize {
    if sorted_unique(entries) {
        return entries.len();
    }
    // Stable sort keeps source order among equal keys; keep the last of each run, in place.
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    let mut w = 0;
    for r in 0..entries.len() {
        if w > 0 && entries[w - 1].0 == entries[r].0 {
            entries.swap(w - 1, r);
        } else {
            // Until a duplicate is met every entry is where it is kept (no swap).
            if w != r {
                entries.swap(w, r);
            }
            w += 1;
        }
    }
    w
}

/// Orders two strings the way cty orders set elements and map keys: by bytes. Keys most
/// often differ in their first byte, which is compared inline (the rest is `memcmp`).
#[inline]
pub fn cmp_str(a: &str, b: &str) -> Ordering {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    match a.first().cmp(&b.first()) {
        Ordering::Equal => a.cmp(b),
        other => other,
    }
}

/// Helpers for unit tests of this layer and the ones above it.
#[cfg(test)]
pub(crate) mod test_util {
    use super::Value;

    /// The strings of a list, set or tuple of strings.
    pub fn strs(v: &Value) -> Vec<String> {
        v.as_seq()
            .expect("a sequence")
            .iter()
            .map(|x| x.as_str().expect("a string").to_string())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `clone_for_push` is a clone: equal to `Clone`'s for every kind of value, and each
    /// copy holds its own reference (counts go up with it and back down when it drops).
    #[test]
    fn clone_for_push_is_a_counted_clone() {
        let obj = Value::object(vec![("a".into(), Value::int(1))]);
        let big = Value::Number(Number::parse("1e400").expect("a number"));
        let values = [
            Value::NULL,
            Value::Unknown(Type::list(Type::String)),
            Value::Null(Type::object(vec![("k".into(), Type::Number)])),
            Value::Bool(true),
            Value::int(7),
            big,
            Value::string("short"),
            Value::string("a string longer than fifteen bytes"),
            Value::tuple(vec![Value::int(1)]),
            Value::list(Type::Number, vec![Value::int(1)]),
            obj.clone(),
            Value::map(Type::Number, vec![("b".into(), Value::int(2))]),
        ];
        for v in &values {
            let c = v.clone_for_push();
            assert_eq!(format!("{c:?}"), format!("{v:?}"));
            let same = matches!(ops::equals(&c, v), Value::Bool(true));
            assert!(same || v.is_null() || v.is_unknown(), "{v:?}");
        }
        let Value::Object(f) = &obj else {
            unreachable!()
        };
        let before = Shared::count(f);
        let copies: Vec<Value> = (0..3).map(|_| obj.clone_for_push()).collect();
        assert_eq!(Shared::count(f), before + 3);
        drop(copies);
        assert_eq!(Shared::count(f), before);
        let long = Str::from("another string longer than fifteen");
        let v = Value::String(long.clone());
        let c = v.clone_for_push();
        assert_eq!(Str::strong_count(&long), 3);
        drop((v, c));
        assert_eq!(Str::strong_count(&long), 1);
    }

    /// Exactly the values whose drop frees nothing are discarded without it: each is
    /// checked against a count it would change if it owned something.
    #[test]
    fn discard_drops_exactly_what_owns_something() {
        let long = Str::from("a string longer than fifteen bytes");
        let list = Value::list(Type::String, vec![Value::string("x")]);
        let Value::List(seq) = &list else {
            unreachable!()
        };
        let owners = [Value::String(long.clone()), list.clone()];
        for v in &owners {
            assert!(!v.owns_nothing(), "{v:?}");
        }
        assert_eq!((Str::strong_count(&long), Shared::count(seq)), (2, 2));
        let mut stack: Vec<Value> = owners.into_iter().collect();
        // Past the end: nothing removed.
        Value::truncate(&mut stack, 3);
        assert_eq!(stack.len(), 2);
        // The values kept stay as they were; the ones removed are dropped.
        Value::truncate(&mut stack, 1);
        assert_eq!((Str::strong_count(&long), Shared::count(seq)), (2, 1));
        assert!(matches!(&stack[..], [Value::String(s)] if *s == long));
        Value::truncate(&mut stack, 0);
        assert_eq!((Str::strong_count(&long), Shared::count(seq)), (1, 1));
        let free = [
            Value::NULL,
            Value::Unknown(Type::String),
            Value::Bool(true),
            Value::int(7),
            Value::string("short"),
            Value::String(Str::from("an interned string, longer than 15").intern()),
        ];
        for v in free {
            assert!(v.owns_nothing(), "{v:?}");
            v.discard();
        }
        for v in [
            Value::Null(Type::list(Type::String)),
            Value::Unknown(Type::tuple([])),
        ] {
            assert!(!v.owns_nothing(), "{v:?}");
        }
    }

    #[test]
    fn cmp_str_orders_by_bytes() {
        let words = [
            "",
            "a",
            "ab",
            "abc",
            "b",
            "ba",
            "\u{e9}",
            "e",
            "\u{e9}t\u{e9}",
            "Z",
            "a\0",
            "metadata",
            "metadatb",
            "meta",
            "example.org/tier",
            "example.org/hash",
        ];
        for x in words {
            for y in words {
                assert_eq!(cmp_str(x, y), x.as_bytes().cmp(y.as_bytes()), "{x:?} {y:?}");
            }
        }
    }

    /// A lookup by `Str` finds what the lookup by `&str` finds, in small objects (the scan)
    /// and large ones (the binary search, past 255 entries too), for keys inline and not,
    /// sharing prefixes, present and absent, hinted or not.
    #[test]
    fn get_key_finds_what_get_finds() {
        let names = |n: usize| -> Vec<String> {
            (0..n)
                .flat_map(|i| {
                    [
                        format!("svc-{i:03}"),
                        format!("a-much-longer-name-of-a-service-{i}"),
                        "x".repeat(i % 17),
                    ]
                })
                .collect()
        };
        for n in [1, 3, 8, 9, 40, 100, 150] {
            let entries = names(n)
                .into_iter()
                .map(|k| (Str::from(k.as_str()), Value::string(k)));
            let Value::Object(f) = Value::object(entries.collect()) else {
                panic!("an object");
            };
            // The last size has keys past what a one-byte hint can point at.
            assert_eq!(n == 150, f.entries.len() > 255, "{n}");
            for k in names(n + 2)
                .iter()
                .chain([&String::new(), &"svc-0".to_string()])
            {
                let want = f.get(k).map(|v| v.as_str().map(str::to_string));
                let key = Str::from(k.as_str());
                let got = f.get_key(&key);
                assert_eq!(got.map(|v| v.as_str().map(str::to_string)), want, "{n} {k}");
                // Whatever the hint holds (right, stale, past the end), the hinted lookup
                // finds the same, and leaves the hint at the entry it found (when its
                // index fits the hint).
                let at = f.entries.iter().position(|(e, _)| *e == key);
                for start in [0u8, 1, 7, 8, 41, 254, 255] {
                    let hint = std::sync::atomic::AtomicU8::new(start);
                    let got = f.get_key_hinted(&key, &hint);
                    assert_eq!(got.map(|v| v.as_str().map(str::to_string)), want, "{n} {k}");
                    let left = hint.load(std::sync::atomic::Ordering::Relaxed);
                    match at.map(u8::try_from) {
                        Some(Ok(i)) => assert_eq!(left, i, "{n} {k}"),
                        _ => assert_eq!(left, start, "{n} {k}"),
                    }
                }
            }
        }
    }

    #[test]
    fn merge_runs_is_the_sorted_union_with_b_winning() {
        let run = |ks: &[&str], tag: i64| -> Vec<(Str, Value)> {
            ks.iter()
                .map(|k| (Str::from(*k), Value::int(tag)))
                .collect()
        };
        let cases: [(&[&str], &[&str]); 5] = [
            (&["a", "c", "e"], &["b", "c", "d", "f"]),
            (&[], &["x"]),
            (&["y"], &[]),
            (&["a"], &["a"]),
            (&["m", "n"], &["a", "b"]),
        ];
        for (a, b) in cases {
            let (a, b) = (run(a, 1), run(b, 2));
            let got = merge_runs(a.clone().into_iter(), b.clone().into_iter());
            let want = Value::object(a.into_iter().chain(b).collect());
            assert!(Value::object_sorted(got).raw_equals(&want));
        }
    }

    /// `push_onto` moves each kind of value whole: what comes off the stack equals what
    /// went on, and references are neither taken nor lost (counted on a shared list), also
    /// across the stack's growth.
    #[test]
    fn push_onto_moves_every_kind_of_value_whole() {
        let shared = Seq::new(Type::String, vec![Value::string("x")]);
        let values = || {
            vec![
                Value::NULL,
                Value::Null(Type::list(Type::Number)),
                Value::Unknown(Type::String),
                Value::Bool(true),
                Value::int(-7),
                Value::Number(Number::from_f64(0.5).expect("finite")),
                Value::string("short"),
                Value::string("a string longer than fifteen bytes"),
                Value::List(Shared::clone(&shared)),
                Value::object(vec![("k".into(), Value::Tuple(Shared::clone(&shared)))]),
            ]
        };
        let mut stack = Vec::new();
        for _ in 0..10 {
            for v in values() {
                v.push_onto(&mut stack);
            }
        }
        assert_eq!(Shared::count(&shared), 1 + 2 * 10);
        let want: Vec<Value> = (0..10).flat_map(|_| values()).collect();
        assert_eq!(stack.len(), want.len());
        for (got, want) in stack.iter().zip(&want) {
            assert!(got.raw_equals(want), "{got:?} != {want:?}");
            assert_eq!(format!("{got:?}"), format!("{want:?}"));
        }
        drop((stack, want));
        assert_eq!(Shared::count(&shared), 1);
    }

    #[test]
    fn contains_unknown_finds_an_unknown_at_any_depth_without_a_walk() {
        let unknown = Value::Unknown(Type::String);
        let known = || Value::tuple(vec![Value::int(1), Value::string("a"), Value::NULL]);
        assert!(unknown.contains_unknown());
        assert!(!Value::Null(Type::String).contains_unknown());
        assert!(!known().contains_unknown());
        // An unknown as an element, an entry, and three collections down; each kind of
        // collection around it.
        let deep = |u: Value| {
            let list = Value::list(Type::Dynamic, vec![Value::int(2), u]);
            let map = Value::map(Type::Dynamic, vec![("k".into(), list)]);
            Value::object(vec![("a".into(), known()), ("b".into(), map)])
        };
        assert!(deep(unknown.clone()).contains_unknown());
        assert!(!deep(Value::int(3)).contains_unknown());
        let set = Value::Set(Seq::new(Type::Dynamic, vec![unknown.clone()]));
        assert!(Value::tuple(vec![known(), set]).contains_unknown());
        // Nothing is walked: each collection knows.
        let v = deep(Value::int(3));
        let before = meter::walked_so_far();
        assert!(!v.contains_unknown());
        assert_eq!(meter::walked_so_far() - before, 0);
    }

    #[test]
    fn object_sorts_and_last_duplicate_wins() {
        let v = Value::object(vec![
            ("b".into(), Value::int(1)),
            ("a".into(), Value::int(2)),
            ("b".into(), Value::int(3)),
        ]);
        let f = v.as_fields().unwrap();
        assert_eq!(f.len(), 2);
        assert_eq!(&*f[0].0, "a");
        assert!(f[1].1.raw_equals(&Value::int(3)));
    }

    #[test]
    fn strings_are_nfc_normalized_like_cty() {
        let decomposed = "e\u{301}";
        assert_eq!(Value::string(decomposed).as_str(), Some("\u{e9}"));
        assert_eq!(Value::string("plain").as_str(), Some("plain"));
        assert_eq!(Value::string("\u{e9}").as_str(), Some("\u{e9}"));
    }

    #[test]
    fn same_type_and_kind_agree_with_type_of() {
        let obj = |a: Value| Value::object(vec![("a".into(), a), ("b".into(), Value::int(1))]);
        let vals = [
            Value::NULL,
            Value::Unknown(Type::Dynamic),
            Value::Null(Type::String),
            Value::Unknown(Type::Number),
            Value::Bool(true),
            Value::int(1),
            Value::string("x"),
            Value::list(Type::String, vec![Value::string("x")]),
            Value::list(Type::Number, vec![]),
            Value::tuple(vec![Value::int(1), Value::string("x")]),
            Value::tuple(vec![Value::int(2), Value::string("y")]),
            Value::tuple(vec![Value::string("x"), Value::int(1)]),
            Value::map(Type::String, vec![("k".into(), Value::string("v"))]),
            obj(Value::string("s")),
            obj(Value::string("t")),
            obj(Value::int(3)),
            Value::Null(obj(Value::string("s")).type_of()),
            Value::object(vec![("a".into(), Value::string("s"))]),
        ];
        for a in &vals {
            for b in &vals {
                assert_eq!(a.same_type(b), a.type_of() == b.type_of(), "{a:?} {b:?}");
                assert_eq!(a.has_type(&b.type_of()), a.type_of() == b.type_of());
            }
            let kind_of_type = Value::Null(a.type_of()).kind();
            assert_eq!(a.kind(), kind_of_type, "{a:?}");
        }
    }

    #[test]
    fn types() {
        let t = Value::tuple(vec![Value::int(1), Value::string("a")]).type_of();
        assert_eq!(t, Type::tuple(vec![Type::Number, Type::String]));
        assert_eq!(Type::list(Type::String).friendly_name(), "list of string");
    }
}
