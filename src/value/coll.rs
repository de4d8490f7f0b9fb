//! The collections inside values: a [`Seq`] (list, set, tuple) and [`Fields`] (map,
//! object), each knowing what is inside it ([`Summary`]): how deeply it nests, how large
//! it is written out, and whether it holds an unknown or a number that needs a closer look.
//!
//! A value's depth bounds every recursive walk over it (comparing, hashing, converting,
//! encoding, typing, dropping), and a value nested ten thousand levels deep is cheap to
//! build (a chain of locals, each wrapping the last in brackets) and overflows the stack
//! of the thread that walks it: the process aborts. So each collection records its depth
//! when it is made, from its elements' (one read each, as they are placed), and the
//! evaluator refuses to make one deeper than [`MAX_DEPTH`], naming the limit. The same
//! read adds up the rest of the summary, which the evaluation asks of most values it
//! handles (a builtin's arguments hold an unknown? what does a fresh result or a response
//! body cost written out?) and which was a walk over the whole value each time. The fields
//! that decide the summary are private: a collection is made only by [`Seq::new`] and
//! [`Fields::new`] (or their `counted` forms), and code that changes one in place
//! recounts it.

use super::{Str, Type, Value, cmp_str};
use std::sync::atomic::{AtomicU8, Ordering};

/// The deepest a value may nest: collections inside collections, and the types of typed
/// nulls, unknowns and empty collections inside them, counted alike. Request bodies are
/// refused past 512 levels and `jsondecode`/`yamldecode` past 1,000; a program may wrap
/// those a little further. Every walk over a value at this depth fits a 2 MiB thread
/// stack (tested on one), the smallest an evaluation runs on.
pub const MAX_DEPTH: u32 = 1024;

/// What a collection knows of everything inside it, added up from its elements as it is
/// made (an element that is itself a collection gives its own summary whole).
///
/// The size is what [`crate::value::meter::expanded_size`] measures, shared parts
/// counted each time they appear, in 32-bit counters that saturate: a saturated one says
/// only "at least this much", and the size is then measured by walking (a value that
/// large in expansion is made only of shared parts, and the walk stops at the budget).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    depth: u32,
    elements: u32,
    bytes: u32,
    /// [`UNKNOWN`] and [`BIG_NUMBER`], or'ed as parts are added.
    flags: u8,
}

/// A [`Summary`] flag: something inside is unknown.
const UNKNOWN: u8 = 1;
/// A [`Summary`] flag: a number inside is not a small integer.
const BIG_NUMBER: u8 = 2;

impl Summary {
    /// Adds what element `v` brings to the collection it is placed in (not the element
    /// itself, counted by [`Summary::finish`]).
    #[inline(always)]
    pub fn add(&mut self, v: &Value) {
        match v {
            Value::String(s) => self.add_str(s),
            Value::Number(n) => self.add_number(n),
            Value::Bool(_) => {}
            Value::Null(t) => self.add_type(t),
            Value::Unknown(t) => self.add_unknown(t),
            Value::List(q) | Value::Set(q) | Value::Tuple(q) => self.include(&q.head.sum),
            Value::Map(f) | Value::Object(f) => self.include(&f.head.sum),
        }
    }

    /// [`Summary::add`] of a string.
    #[inline(always)]
    pub fn add_str(&mut self, s: &Str) {
        self.bytes = self.bytes.saturating_add(len32(s.len()));
    }

    /// [`Summary::add`] of a number.
    #[inline(always)]
    pub fn add_number(&mut self, n: &super::number::Number) {
        if !n.is_small() {
            self.flags |= BIG_NUMBER;
        }
    }

    /// [`Summary::add`] of a typed null.
    #[inline(always)]
    pub fn add_type(&mut self, t: &Type) {
        self.depth = self.depth.max(t.depth());
    }

    /// [`Summary::add`] of an unknown.
    #[inline(always)]
    pub fn add_unknown(&mut self, t: &Type) {
        self.add_type(t);
        self.flags |= UNKNOWN;
    }

    /// Adds a collection's summary (an element's, or another part's being gathered).
    #[inline(always)]
    pub fn include(&mut self, s: &Summary) {
        self.depth = self.depth.max(s.depth);
        self.elements = self.elements.saturating_add(s.elements);
        self.bytes = self.bytes.saturating_add(s.bytes);
        self.flags |= s.flags;
    }

    /// Adds the bytes of a map's or object's key.
    #[inline(always)]
    pub fn add_key(&mut self, k: &Str) {
        self.add_str(k);
    }

    /// The summary of a collection of `n` elements whose contents were added, with
    /// element type `elem`: one level deeper than its deepest part, `n` elements more.
    #[inline(always)]
    fn finish(mut self, elem: &Type, n: usize) -> Summary {
        self.depth = self.depth.max(elem.depth()).saturating_add(1);
        self.elements = self.elements.saturating_add(len32(n));
        self
    }

    /// How deeply the collection nests: 1 for one of scalars (see [`MAX_DEPTH`]).
    #[inline]
    pub fn depth(&self) -> u32 {
        self.depth
    }

    /// Elements and bytes written out, if both counters are exact (not saturated).
    #[inline]
    pub fn size(&self) -> Option<(u64, u64)> {
        (self.elements != u32::MAX && self.bytes != u32::MAX)
            .then_some((u64::from(self.elements), u64::from(self.bytes)))
    }

    /// Whether anything inside is unknown.
    #[inline]
    pub fn unknown(&self) -> bool {
        self.flags & UNKNOWN != 0
    }

    /// Whether a number inside is not a small integer (a fraction, a huge or infinite
    /// number): one that may not survive being written out, so a writer looks.
    #[inline]
    pub fn big_number(&self) -> bool {
        self.flags & BIG_NUMBER != 0
    }
}

/// A length as a saturating 32-bit count.
#[inline(always)]
fn len32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// The summary of a collection of `items` with element type `elem`.
#[inline]
fn summarize<'a>(elem: &Type, items: impl ExactSizeIterator<Item = &'a Value>) -> Summary {
    let n = items.len();
    let mut s = Summary::default();
    for v in items {
        s.add(v);
    }
    s.finish(elem, n)
}

/// The summary of a map's or object's `entries` with element type `elem`.
#[inline]
fn summarize_entries(elem: &Type, entries: &[(Str, Value)]) -> Summary {
    let mut s = Summary::default();
    for (k, v) in entries {
        s.add_key(k);
        s.add(v);
    }
    s.finish(elem, entries.len())
}

/// The shared pointer of every collection: one allocation holding the count, the header
/// and the elements (`std`'s `Arc<Vec<_>>` was two, ~54% of heavy-200's allocations).
pub type Shared<T> = triomphe::Arc<T>;

/// What a [`Seq`] knows besides its items.
#[derive(Clone, Debug)]
struct SeqHead {
    elem: Type,
    sum: Summary,
}

/// What a [`Fields`] knows besides its entries.
#[derive(Clone, Debug)]
struct FieldsHead {
    elem: Type,
    sum: Summary,
    /// The entries are in strictly increasing key order (the invariant every constructor
    /// but [`Fields::new`] is given): known where they were made, so that writing them
    /// out needs no look at every pair of keys.
    sorted: bool,
}

/// Elements of a list, set or tuple. For lists and sets `elem` is the element type
/// (which matters when the collection is empty); for tuples it is unused (`Dynamic`).
/// `items` may be changed in place only if followed by [`Seq::recount`] (a converted
/// element may be deeper: a null given a type). Made only as a [`Shared`] one.
#[repr(C)]
pub struct Seq {
    head: SeqHead,
    pub items: [Value],
}

/// Entries of a map or object, sorted by key (cty iterates both in key order).
/// For maps `elem` is the element type; for objects it is unused (`Dynamic`).
/// `entries` may be changed in place only if followed by [`Fields::recount`]. Made only
/// as a [`Shared`] one.
#[repr(C)]
pub struct Fields {
    head: FieldsHead,
    pub entries: [(Str, Value)],
}

impl std::fmt::Debug for Seq {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Seq")
            .field("elem", &self.head.elem)
            .field("items", &&self.items)
            .finish()
    }
}

impl std::fmt::Debug for Fields {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Fields")
            .field("elem", &self.head.elem)
            .field("entries", &&self.entries)
            .finish()
    }
}

/// A header-and-slice `Arc` as the collection type of the same layout.
macro_rules! shared_as {
    ($arc:expr, $t:ty) => {{
        let raw = triomphe::Arc::into_raw($arc) as *const $t;
        // SAFETY: `$t` is `repr(C)` of its head and then its slice, the layout of
        // triomphe's `HeaderSlice` (`repr(C)`, header then slice) of the same two types;
        // the cast keeps the slice's length. The pointer came from `into_raw` of an `Arc`
        // whose count is the one this `Arc` takes over.
        unsafe { triomphe::Arc::from_raw(raw) }
    }};
}

fn seq_of_vec(head: SeqHead, items: Vec<Value>) -> Shared<Seq> {
    shared_as!(triomphe::Arc::from_header_and_vec(head, items), Seq)
}

fn seq_of_iter(head: SeqHead, items: impl ExactSizeIterator<Item = Value>) -> Shared<Seq> {
    shared_as!(triomphe::Arc::from_header_and_iter(head, items), Seq)
}

fn fields_of_vec(head: FieldsHead, entries: Vec<(Str, Value)>) -> Shared<Fields> {
    shared_as!(triomphe::Arc::from_header_and_vec(head, entries), Fields)
}

fn fields_of_iter(
    head: FieldsHead,
    entries: impl ExactSizeIterator<Item = (Str, Value)>,
) -> Shared<Fields> {
    shared_as!(triomphe::Arc::from_header_and_iter(head, entries), Fields)
}

impl Seq {
    /// A list's, set's or tuple's elements (`elem` `Dynamic` for a tuple).
    #[inline]
    pub fn new(elem: Type, items: Vec<Value>) -> Shared<Seq> {
        let sum = summarize(&elem, items.iter());
        seq_of_vec(SeqHead { elem, sum }, items)
    }

    /// [`Seq::new`] of items written straight into the collection (no vector first), of
    /// the contents' summary the caller added up as it looked at each item (the VM, which
    /// charges them), checked in debug builds.
    #[inline]
    pub fn counted_iter(
        elem: Type,
        items: impl ExactSizeIterator<Item = Value>,
        contents: Summary,
    ) -> Shared<Seq> {
        let sum = contents.finish(&elem, items.len());
        let s = seq_of_iter(SeqHead { elem, sum }, items);
        debug_assert_eq!(s.head.sum, summarize(&s.head.elem, s.items.iter()));
        s
    }

    /// The element type of a list or set (`Dynamic` for a tuple).
    #[inline]
    pub fn elem(&self) -> &Type {
        &self.head.elem
    }

    /// What is inside: depth, size written out, unknowns (checked against a recount of
    /// this level in debug builds: code that changed `items` in place recounted them).
    #[inline]
    pub fn summary(&self) -> &Summary {
        debug_assert_eq!(self.head.sum, summarize(&self.head.elem, self.items.iter()));
        &self.head.sum
    }

    /// How deeply the collection nests: 1 for one of scalars (see [`MAX_DEPTH`]).
    #[inline]
    pub fn depth(&self) -> u32 {
        self.head.sum.depth
    }

    /// The collection to change in place: this one if it is not shared, else a copy
    /// (`Arc::make_mut`, which a header-and-slice `Arc` does not have).
    pub fn make_mut(this: &mut Shared<Seq>) -> &mut Seq {
        if !this.is_unique() {
            *this = seq_of_iter(this.head.clone(), this.items.iter().cloned());
        }
        match Shared::get_mut(this) {
            Some(s) => s,
            None => unreachable!("a collection just copied is not shared"),
        }
    }

    /// Gives a list or set another element type. One at least as deep as the old one
    /// (a tuple's `Dynamic` becoming a list's element type) deepens the collection to it
    /// at most, without a look at the items (the rest of the summary is the items').
    pub fn set_elem(&mut self, elem: Type) {
        let (old, new) = (self.head.elem.depth(), elem.depth());
        self.head.elem = elem;
        if new >= old {
            self.head.sum.depth = self.head.sum.depth.max(new.saturating_add(1));
        } else {
            self.recount();
        }
    }

    /// Counts the summary again, after `items` were changed in place.
    pub fn recount(&mut self) {
        self.head.sum = summarize(&self.head.elem, self.items.iter());
    }
}

impl Fields {
    /// A map's or object's entries (`elem` `Dynamic` for an object), sorted by key with
    /// no duplicates.
    #[inline]
    pub fn new(elem: Type, entries: Vec<(Str, Value)>) -> Shared<Fields> {
        let sum = summarize_entries(&elem, &entries);
        let sorted = crate::value::sorted_unique(&entries);
        fields_of_vec(FieldsHead { elem, sum, sorted }, entries)
    }

    /// [`Fields::new`] of entries the caller sorted by key, with no duplicates.
    #[inline]
    pub fn sorted(elem: Type, entries: Vec<(Str, Value)>) -> Shared<Fields> {
        debug_assert!(crate::value::sorted_unique(&entries));
        let sum = summarize_entries(&elem, &entries);
        fields_of_vec(
            FieldsHead {
                elem,
                sum,
                sorted: true,
            },
            entries,
        )
    }

    /// [`Fields::new`] of the summary of the entries (keys and values) the caller added
    /// up (see [`Seq::counted_iter`]).
    #[inline]
    pub fn counted(elem: Type, entries: Vec<(Str, Value)>, contents: Summary) -> Shared<Fields> {
        let sum = contents.finish(&elem, entries.len());
        debug_assert_eq!(sum, summarize_entries(&elem, &entries));
        debug_assert!(crate::value::sorted_unique(&entries));
        let head = FieldsHead {
            elem,
            sum,
            sorted: true,
        };
        fields_of_vec(head, entries)
    }

    /// [`Fields::counted`] of entries written straight into the collection (no vector
    /// first), sorted by key with no duplicates.
    #[inline]
    pub fn counted_iter(
        elem: Type,
        entries: impl ExactSizeIterator<Item = (Str, Value)>,
        contents: Summary,
    ) -> Shared<Fields> {
        let sum = contents.finish(&elem, entries.len());
        let head = FieldsHead {
            elem,
            sum,
            sorted: true,
        };
        let f = fields_of_iter(head, entries);
        debug_assert_eq!(f.head.sum, summarize_entries(&f.head.elem, &f.entries));
        debug_assert!(crate::value::sorted_unique(&f.entries));
        f
    }

    /// [`Fields::counted_iter`] whose values are summed up as they are written into the
    /// collection, each shown to `see` on its way (the VM charges what it shares): one
    /// pass over them, where adding them up first was a second. `keys` is what the keys
    /// add ([`Summary::add_key`] of each).
    #[inline]
    pub fn gathered(
        elem: Type,
        entries: impl ExactSizeIterator<Item = (Str, Value)>,
        keys: Summary,
        see: impl FnMut(&Value),
    ) -> Shared<Fields> {
        let n = entries.len();
        let head = FieldsHead {
            elem,
            sum: Summary::default(),
            sorted: true,
        };
        let mut sum = keys;
        let g = Gather {
            entries,
            sum: &mut sum,
            see,
        };
        let mut f = fields_of_iter(head, g);
        // Made just now: no other reference can exist, and `get_mut` (a load, not an
        // atomic update) finds it so.
        if let Some(x) = Shared::get_mut(&mut f) {
            x.head.sum = sum.finish(&x.head.elem, n);
        }
        debug_assert_eq!(f.head.sum, summarize_entries(&f.head.elem, &f.entries));
        debug_assert!(crate::value::sorted_unique(&f.entries));
        f
    }

    /// The element type of a map (`Dynamic` for an object).
    #[inline]
    pub fn elem(&self) -> &Type {
        &self.head.elem
    }

    /// What is inside: depth, size written out, unknowns (checked as [`Seq::summary`]).
    #[inline]
    pub fn summary(&self) -> &Summary {
        debug_assert_eq!(
            self.head.sum,
            summarize_entries(&self.head.elem, &self.entries)
        );
        &self.head.sum
    }

    /// How deeply the collection nests: 1 for one of scalars (see [`MAX_DEPTH`]).
    #[inline]
    pub fn depth(&self) -> u32 {
        self.head.sum.depth
    }

    /// The entries to change in place: these if they are not shared, else a copy
    /// (`Arc::make_mut`, which a header-and-slice `Arc` does not have).
    pub fn make_mut(this: &mut Shared<Fields>) -> &mut Fields {
        if !this.is_unique() {
            *this = fields_of_iter(this.head.clone(), this.entries.iter().cloned());
        }
        match Shared::get_mut(this) {
            Some(f) => f,
            None => unreachable!("a collection just copied is not shared"),
        }
    }

    /// These entries with each of `new` (sorted by key, no duplicates) set: a key present
    /// has its value replaced where it lies (in a copy if these are shared); a new key
    /// makes the collection again with it in its place, in one allocation (a collection
    /// cannot grow where it lies). The summary is updated by what left and came ([`Fields::changed`]).
    pub fn with_entries<const N: usize>(
        mut this: Shared<Fields>,
        new: [(Str, Value); N],
    ) -> Shared<Fields> {
        debug_assert!(new.windows(2).all(|w| w[0].0 < w[1].0));
        // Where each new key is (true) or goes, in order: the keys are sorted.
        let mut at = [(0usize, false); N];
        let (mut out, mut added) = (Summary::default(), Summary::default());
        for (slot, (k, v)) in at.iter_mut().zip(&new) {
            *slot = match this.entries.binary_search_by(|(x, _)| x.cmp(k)) {
                Ok(i) => {
                    out.add(&this.entries[i].1);
                    (i, true)
                }
                Err(i) => {
                    added.add_key(k);
                    (i, false)
                }
            };
            added.add(v);
        }
        let grown = at.iter().filter(|(_, found)| !found).count();
        if grown == 0 {
            let f = Fields::make_mut(&mut this);
            for ((_, v), (i, _)) in new.into_iter().zip(at) {
                f.entries[i].1 = v;
            }
            f.changed(out, added, 0);
            return this;
        }
        let head = this.head.clone();
        let len = this.entries.len() + grown;
        let new = new.map(Some);
        // The entries moved out of these if nothing else holds them (a body just built),
        // else cloned from them (annotations shared by a collection's items): either way
        // written once, into the new collection.
        let mut f = match Shared::get_mut(&mut this) {
            Some(m) => {
                let take = |i: usize| m.entries.get_mut(i).map(std::mem::take);
                fields_of_iter(head, Inserted::new(take, new, at, len))
            }
            None => {
                let clone = |i: usize| this.entries.get(i).cloned();
                fields_of_iter(head, Inserted::new(clone, new, at, len))
            }
        };
        match Shared::get_mut(&mut f) {
            Some(m) => m.changed(out, added, grown),
            None => unreachable!("a collection just made is not shared"),
        }
        f
    }

    /// Makes a map's entries an object's.
    pub fn forget_elem(&mut self) {
        self.head.elem = Type::Dynamic;
        self.recount();
    }

    /// Counts the summary again, after `entries` were changed in place (one level: the
    /// values inside know their own).
    pub fn recount(&mut self) {
        self.head.sum = summarize_entries(&self.head.elem, &self.entries);
        self.head.sorted = crate::value::sorted_unique(&self.entries);
    }

    /// Whether the entries are in strictly increasing key order, no key twice: as every
    /// constructor but [`Fields::new`] makes them (that one looks).
    #[inline]
    pub fn sorted_unique(&self) -> bool {
        debug_assert_eq!(self.head.sorted, crate::value::sorted_unique(&self.entries));
        self.head.sorted
    }

    /// Updates the summary after entries were changed in place, from what was taken out
    /// (`removed`: the values replaced or removed, added up by [`Summary::add`], and the
    /// keys of entries removed) and what was put in (`added`, likewise), with `grown`
    /// entries more than before: a few additions instead of a look at every entry.
    /// Counted again where arithmetic cannot tell: a counter saturated, or what was taken
    /// out held an unknown, a number to look at, or maybe the deepest part.
    pub fn changed(&mut self, removed: Summary, added: Summary, grown: usize) {
        let s = &mut self.head.sum;
        let exact = s.size().is_some()
            && removed.flags == 0
            && (removed.depth.saturating_add(1) < s.depth || added.depth >= removed.depth);
        if exact {
            // Exact counters hold what was removed: the subtractions cannot go below 0.
            s.elements = (s.elements.saturating_sub(removed.elements))
                .saturating_add(added.elements)
                .saturating_add(len32(grown));
            s.bytes = (s.bytes.saturating_sub(removed.bytes)).saturating_add(added.bytes);
            s.depth = s.depth.max(added.depth.saturating_add(1));
            s.flags |= added.flags;
        } else {
            self.recount();
        }
        debug_assert_eq!(
            self.head.sum,
            summarize_entries(&self.head.elem, &self.entries)
        );
    }

    /// Lookup by key: a scan comparing lengths first for a small object (most attribute
    /// names differ in length, so few bytes are compared), a binary search otherwise.
    #[inline]
    pub fn get(&self, key: &str) -> Option<&Value> {
        if self.entries.len() <= 8 {
            return self
                .entries
                .iter()
                .find(|(k, _)| same_bytes(k.as_bytes(), key.as_bytes()))
                .map(|(_, v)| v);
        }
        self.entries
            .binary_search_by(|(k, _)| cmp_str(k, key))
            .ok()
            .map(|i| &self.entries[i].1)
    }

    /// [`Fields::get`] by a key that is already a [`Str`] (a compiled attribute name): a
    /// small object's keys are compared as two words each when the key is inline.
    #[inline]
    pub fn get_key(&self, key: &Str) -> Option<&Value> {
        self.key_index(key).map(|i| &self.entries[i].1)
    }

    /// Where `key` is among the entries.
    #[inline]
    fn key_index(&self, key: &Str) -> Option<usize> {
        if self.entries.len() <= 8 {
            return self.entries.iter().position(|(k, _)| k == key);
        }
        // `Str`'s order is the entries' (bytes), and compares two inline strings as words
        // (`cmp_str` called `memcmp` for every pair sharing a first byte: ~575
        // instructions a lookup of `svc-NNN` among 201 observed resources).
        self.entries.binary_search_by(|(k, _)| k.cmp(key)).ok()
    }

    /// [`Fields::get_key`] trying the entry at `hint` first (one comparison), and leaving
    /// there where the key was found: a compiled attribute step (`each.value.name`) meets
    /// objects of the same keys member after member, so its key is where it was the last
    /// time. The hint is shared by the threads that run the program; it is only a guess,
    /// checked against the key, so a stale or raced one costs the search it saves.
    #[inline]
    pub fn get_key_hinted(&self, key: &Str, hint: &AtomicU8) -> Option<&Value> {
        let h = usize::from(hint.load(Ordering::Relaxed));
        if let Some((k, v)) = self.entries.get(h)
            && k == key
        {
            return Some(v);
        }
        let i = self.key_index(key)?;
        if let Ok(b) = u8::try_from(i) {
            hint.store(b, Ordering::Relaxed);
        }
        Some(&self.entries[i].1)
    }
}

/// The entries of [`Fields::gathered`], summed up and shown to `see` as they pass (a
/// type of its own: as a closure in a `map`, its `next` was not inlined into the loop
/// that writes the entries, a call an entry).
struct Gather<'s, I, F> {
    entries: I,
    sum: &'s mut Summary,
    see: F,
}

impl<I: ExactSizeIterator<Item = (Str, Value)>, F: FnMut(&Value)> Iterator for Gather<'_, I, F> {
    type Item = (Str, Value);

    #[inline(always)]
    fn next(&mut self) -> Option<(Str, Value)> {
        let (k, v) = self.entries.next()?;
        self.sum.add(&v);
        (self.see)(&v);
        Some((k, v))
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.entries.size_hint()
    }
}

impl<I: ExactSizeIterator<Item = (Str, Value)>, F: FnMut(&Value)> ExactSizeIterator
    for Gather<'_, I, F>
{
}

/// Sorted entries with new ones put at the places found for them (replacing the entry
/// there when the key was found), the old ones given by `old` by index (moved or cloned):
/// an exact count of `left` items.
struct Inserted<F, const N: usize> {
    old: F,
    i: usize,
    new: [Option<(Str, Value)>; N],
    at: [(usize, bool); N],
    j: usize,
    left: usize,
}

impl<F: FnMut(usize) -> Option<(Str, Value)>, const N: usize> Inserted<F, N> {
    fn new(old: F, new: [Option<(Str, Value)>; N], at: [(usize, bool); N], left: usize) -> Self {
        Inserted {
            old,
            i: 0,
            new,
            at,
            j: 0,
            left,
        }
    }
}

impl<F: FnMut(usize) -> Option<(Str, Value)>, const N: usize> Iterator for Inserted<F, N> {
    type Item = (Str, Value);
    fn next(&mut self) -> Option<(Str, Value)> {
        let e = match self.at.get(self.j) {
            Some(&(at, found)) if at == self.i => {
                if found {
                    // The entry replaced is left behind (not moved, not cloned).
                    self.i += 1;
                }
                let e = self.new.get_mut(self.j).and_then(Option::take);
                self.j += 1;
                e
            }
            _ => {
                let e = (self.old)(self.i);
                self.i += 1;
                e
            }
        }?;
        self.left = self.left.saturating_sub(1);
        Some(e)
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl<F: FnMut(usize) -> Option<(Str, Value)>, const N: usize> ExactSizeIterator for Inserted<F, N> {}

/// Equality of two byte strings (lengths first), comparing short ones (attribute names)
/// inline: two overlapping words instead of a call to `memcmp`, which cost ~20
/// instructions a lookup (measured: 1% of heavy-200 in `Fields::get`).
#[inline(always)]
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    use crate::text::words::{word4, word8};
    let n = a.len();
    if n != b.len() {
        return false;
    }
    match n {
        0 => true,
        // Bytes 0, n/2 and n-1 are every byte of a string of 1 to 3.
        1..=3 => a[0] == b[0] && a[n / 2] == b[n / 2] && a[n - 1] == b[n - 1],
        4..=8 => word4(a, 0) == word4(b, 0) && word4(a, n - 4) == word4(b, n - 4),
        9..=16 => word8(a, 0) == word8(b, 0) && word8(a, n - 8) == word8(b, n - 8),
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a summary says, found by walking every part (shared ones each time).
    fn walked(v: &Value) -> (u64, u64, bool, bool) {
        let mut r = (0, 0, false, false);
        let add = |x: &Value, r: &mut (u64, u64, bool, bool)| {
            let (e, b, u, n) = walked(x);
            match x {
                Value::String(s) => r.1 += s.len() as u64,
                Value::Unknown(_) => r.2 = true,
                Value::Number(m) => r.3 |= !m.is_small(),
                _ => {}
            }
            *r = (r.0 + e, r.1 + b, r.2 | u, r.3 | n);
        };
        match v {
            Value::List(q) | Value::Set(q) | Value::Tuple(q) => {
                r.0 += q.items.len() as u64;
                for x in &q.items {
                    add(x, &mut r);
                }
            }
            Value::Map(f) | Value::Object(f) => {
                r.0 += f.entries.len() as u64;
                for (k, x) in &f.entries {
                    r.1 += k.len() as u64;
                    add(x, &mut r);
                }
            }
            _ => {}
        }
        r
    }

    fn summary(v: &Value) -> Summary {
        *v.summary().expect("a collection")
    }

    #[test]
    fn a_summary_is_what_walking_the_value_finds() {
        let s = |x: &str| Value::string(x);
        let half = Value::Number(crate::value::number::Number::from_f64(0.5).expect("finite"));
        let obj = |entries: Vec<(&str, Value)>| {
            Value::object(entries.into_iter().map(|(k, v)| (k.into(), v)).collect())
        };
        let inner = obj(vec![
            ("name", s("a-long-name-past-fifteen")),
            ("n", Value::int(3)),
        ]);
        let values = [
            Value::tuple(vec![]),
            Value::tuple(vec![s("ab"), Value::int(1), Value::NULL]),
            obj(vec![("k", inner.clone()), ("again", inner.clone())]),
            Value::tuple(vec![inner.clone(); 7]),
            Value::map(
                Type::String,
                vec![("x".into(), s("1")), ("yy".into(), s("22"))],
            ),
            Value::list(
                Type::Dynamic,
                vec![Value::tuple(vec![Value::Unknown(Type::String)])],
            ),
            obj(vec![(
                "deep",
                Value::tuple(vec![Value::tuple(vec![half.clone()])]),
            )]),
            Value::tuple(vec![half, Value::Unknown(Type::Dynamic), inner]),
        ];
        for v in &values {
            let (e, b, u, n) = walked(v);
            let sum = summary(v);
            assert_eq!(sum.size(), Some((e, b)), "{v:?}");
            assert_eq!((sum.unknown(), sum.big_number()), (u, n), "{v:?}");
            assert_eq!(sum.depth(), v.depth());
        }
        // Shared parts make a value far larger written out than in memory: the counters
        // saturate, and the summary then says it does not know the size.
        let mut v = s("x");
        for _ in 0..10 {
            v = Value::tuple(vec![v; 10]);
        }
        assert_eq!(summary(&v).size(), None);
        assert_eq!(summary(&v).depth(), 10);
        // Changed in place and recounted, the summary follows.
        let mut f = Fields::new(
            Type::Dynamic,
            vec![("a".into(), s("b")), ("c".into(), s("d"))],
        );
        let m = Fields::make_mut(&mut f);
        m.entries[1].1 = Value::Unknown(Type::String);
        m.recount();
        assert_eq!(f.summary().size(), Some((2, 3)));
        assert!(f.summary().unknown());
    }

    /// The sorted flag says what the entries are, however they were made or changed: the
    /// writers trust it instead of comparing every pair of keys.
    #[test]
    fn sorted_flag_follows_the_entries() {
        let s = |x: &str| Value::string(x);
        let unsorted = vec![("b".into(), s("1")), ("a".into(), s("2"))];
        assert!(!Fields::new(Type::Dynamic, unsorted.clone()).sorted_unique());
        let twice = vec![("a".into(), s("1")), ("a".into(), s("2"))];
        assert!(!Fields::new(Type::Dynamic, twice).sorted_unique());
        let Value::Object(f) = Value::object(unsorted) else {
            panic!("an object")
        };
        assert!(f.sorted_unique());
        // A new key goes where it belongs; a key changed in place is looked at again.
        let mut f = Fields::with_entries(f, [("aa".into(), s("3"))]);
        assert!(f.sorted_unique());
        let m = Fields::make_mut(&mut f);
        m.entries[0].0 = "z".into();
        m.recount();
        assert!(!f.sorted_unique());
    }

    #[test]
    fn depth_counts_collections_and_the_types_inside_them() {
        let one = Value::int(1);
        assert_eq!(one.depth(), 0);
        assert_eq!(Value::tuple(vec![]).depth(), 1);
        let t = Value::tuple(vec![one.clone(), Value::tuple(vec![one.clone()])]);
        assert_eq!(t.depth(), 2);
        assert_eq!(Value::object(vec![("a".into(), t.clone())]).depth(), 3);
        // A typed null or unknown counts its type; an empty list its element type.
        let deep_type = Type::list(Type::map(Type::tuple([Type::String])));
        assert_eq!(deep_type.depth(), 3);
        assert_eq!(Value::Null(deep_type.clone()).depth(), 3);
        assert_eq!(
            Value::tuple(vec![Value::Unknown(deep_type.clone())]).depth(),
            4
        );
        assert_eq!(Value::list(deep_type.clone(), vec![]).depth(), 4);
        assert_eq!(Value::Null(Type::String).depth(), 0);
        // Changed in place, then recounted.
        let mut s = Seq::new(Type::Dynamic, vec![one.clone()]);
        assert_eq!(s.depth(), 1);
        Seq::make_mut(&mut s).set_elem(deep_type.clone());
        assert_eq!(s.depth(), 4);
        let mut f = Fields::new(Type::Dynamic, vec![("a".into(), one)]);
        let m = Fields::make_mut(&mut f);
        m.entries[0].1 = t;
        m.recount();
        assert_eq!(f.depth(), 3);
        let m = Fields::make_mut(&mut f);
        m.entries[0].1 = Value::Map(Fields::new(deep_type, vec![]));
        m.forget_elem();
        assert_eq!(f.depth(), 5);
    }

    /// `with_entries` gives what an object of the entries and the new ones (the later
    /// winning) is, whatever keys stand around, between or on the new ones, shared or not.
    #[test]
    fn entries_set_as_an_object_of_all_of_them_would_be() {
        let (first, second) = (Str::from("p/b"), Str::from("p/i"));
        let others = ["a", "p/a", "p/b", "p/c", "p/i", "p/j", "z"];
        // Every subset of the other keys (as the entries already there).
        for mask in 0u32..(1 << others.len()) {
            let entries: Vec<(Str, Value)> = others
                .iter()
                .enumerate()
                .filter(|(i, _)| mask & (1 << i) != 0)
                .map(|(i, k)| (Str::from(*k), Value::int(i as i64)))
                .collect();
            let two = || {
                [
                    (first.clone(), Value::string("1")),
                    (
                        second.clone(),
                        Value::tuple(vec![Value::Unknown(Type::String)]),
                    ),
                ]
            };
            let want = Value::object(entries.iter().cloned().chain(two()).collect());
            let Value::Object(want) = want else {
                unreachable!("an object")
            };
            for shared in [false, true] {
                let f = Fields::new(Type::Dynamic, entries.clone());
                let held = shared.then(|| f.clone());
                let got = Fields::with_entries(f, two());
                assert_eq!(
                    format!("{:?}", &got.entries),
                    format!("{:?}", &want.entries)
                );
                // Updated by what left and came, or recounted: the summary of the entries.
                assert_eq!(got.summary(), want.summary(), "{mask:#b}");
                if let Some(h) = held {
                    assert_eq!(h.entries.len(), entries.len(), "the shared one unchanged");
                }
            }
            // One key: replaced in place when present, else inserted.
            let one = Fields::with_entries(
                Fields::new(Type::Dynamic, entries.clone()),
                [(first.clone(), Value::int(9))],
            );
            let Value::Object(want) = Value::object(
                entries
                    .iter()
                    .cloned()
                    .chain([(first.clone(), Value::int(9))])
                    .collect(),
            ) else {
                unreachable!("an object")
            };
            assert_eq!(
                format!("{:?}", &one.entries),
                format!("{:?}", &want.entries)
            );
            assert_eq!(one.summary(), want.summary(), "{mask:#b}");
        }
    }

    #[test]
    fn same_bytes_is_slice_equality() {
        // Every length around the word boundaries, each byte position changed in turn.
        for n in 0..=40usize {
            let a: Vec<u8> = (0..n as u8).map(|i| b'a' + i % 26).collect();
            assert!(same_bytes(&a, &a.clone()), "{n}");
            for i in 0..n {
                let mut b = a.clone();
                b[i] ^= 0x20;
                assert!(!same_bytes(&a, &b), "{n} at {i}");
            }
            assert!(!same_bytes(&a, &[a.as_slice(), b"x"].concat()));
        }
    }
}
