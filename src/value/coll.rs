//! The collections inside values: a [`Seq`] (list, set, tuple) and [`Fields`] (map,
//! object), each knowing how deeply it nests.
//!
//! A value's depth bounds every recursive walk over it (comparing, hashing, converting,
//! encoding, typing, dropping), and a value nested ten thousand levels deep is cheap to
//! build (a chain of locals, each wrapping the last in brackets) and overflows the stack
//! of the thread that walks it: the process aborts. So each collection records its depth
//! when it is made, from its elements' (one read each, as they are placed), and the
//! evaluator refuses to make one deeper than [`MAX_DEPTH`], naming the limit. The fields
//! that decide the depth are private: a collection is made only by [`Seq::new`] and
//! [`Fields::new`], and code that changes one in place recounts it.

use super::{Str, Type, Value, cmp_str};

/// The deepest a value may nest: collections inside collections, and the types of typed
/// nulls, unknowns and empty collections inside them, counted alike. Request bodies are
/// refused past 512 levels and `jsondecode`/`yamldecode` past 1,000; a program may wrap
/// those a little further. Every walk over a value at this depth fits a 2 MiB thread
/// stack (tested on one), the smallest an evaluation runs on.
pub const MAX_DEPTH: u32 = 1024;

/// Elements of a list, set or tuple. For lists and sets `elem` is the element type
/// (which matters when the collection is empty); for tuples it is unused (`Dynamic`).
/// `items` may be changed in place only if followed by [`Seq::recount_depth`] (a
/// converted element may be deeper: a null given a type).
#[derive(Clone, Debug)]
pub struct Seq {
    elem: Type,
    pub items: Vec<Value>,
    depth: u32,
}

/// Entries of a map or object, sorted by key (cty iterates both in key order).
/// For maps `elem` is the element type; for objects it is unused (`Dynamic`).
/// `entries` may be changed in place only if followed by [`Fields::recount_depth`] or
/// [`Fields::entry_replaced`].
#[derive(Clone, Debug)]
pub struct Fields {
    elem: Type,
    pub entries: Vec<(Str, Value)>,
    depth: u32,
}

/// One more than the deepest of `elem` and the elements.
#[inline]
fn depth_over<'a>(elem: &Type, items: impl Iterator<Item = &'a Value>) -> u32 {
    let mut d = elem.depth();
    for v in items {
        d = d.max(v.depth());
    }
    d.saturating_add(1)
}

impl Seq {
    /// A list's, set's or tuple's elements (`elem` `Dynamic` for a tuple).
    #[inline]
    pub fn new(elem: Type, items: Vec<Value>) -> Seq {
        let depth = depth_over(&elem, items.iter());
        Seq { elem, items, depth }
    }

    /// [`Seq::new`] of a `depth` the caller counted as it looked at each item (the VM,
    /// which charges them), checked in debug builds.
    #[inline]
    pub fn counted(elem: Type, items: Vec<Value>, depth: u32) -> Seq {
        debug_assert_eq!(depth, depth_over(&elem, items.iter()));
        Seq { elem, items, depth }
    }

    /// The element type of a list or set (`Dynamic` for a tuple).
    #[inline]
    pub fn elem(&self) -> &Type {
        &self.elem
    }

    /// How deeply the collection nests: 1 for one of scalars (see [`MAX_DEPTH`]).
    #[inline]
    pub fn depth(&self) -> u32 {
        self.depth
    }

    /// Gives a list or set another element type. One at least as deep as the old one
    /// (a tuple's `Dynamic` becoming a list's element type) deepens the collection to it
    /// at most, without a look at the items.
    pub fn set_elem(&mut self, elem: Type) {
        let (old, new) = (self.elem.depth(), elem.depth());
        self.elem = elem;
        if new >= old {
            self.depth = self.depth.max(new.saturating_add(1));
        } else {
            self.recount_depth();
        }
    }

    /// Counts the depth again, after `items` were changed in place.
    pub fn recount_depth(&mut self) {
        self.depth = depth_over(&self.elem, self.items.iter());
    }
}

impl Fields {
    /// A map's or object's entries (`elem` `Dynamic` for an object), sorted by key with
    /// no duplicates.
    #[inline]
    pub fn new(elem: Type, entries: Vec<(Str, Value)>) -> Fields {
        let depth = depth_over(&elem, entries.iter().map(|(_, v)| v));
        Fields {
            elem,
            entries,
            depth,
        }
    }

    /// [`Fields::new`] of a `depth` the caller counted (see [`Seq::counted`]).
    #[inline]
    pub fn counted(elem: Type, entries: Vec<(Str, Value)>, depth: u32) -> Fields {
        debug_assert_eq!(depth, depth_over(&elem, entries.iter().map(|(_, v)| v)));
        Fields {
            elem,
            entries,
            depth,
        }
    }

    /// The element type of a map (`Dynamic` for an object).
    #[inline]
    pub fn elem(&self) -> &Type {
        &self.elem
    }

    /// How deeply the collection nests: 1 for one of scalars (see [`MAX_DEPTH`]).
    #[inline]
    pub fn depth(&self) -> u32 {
        self.depth
    }

    /// Makes a map's entries an object's.
    pub fn forget_elem(&mut self) {
        self.elem = Type::Dynamic;
        self.recount_depth();
    }

    /// Counts the depth again, after `entries` were changed in place.
    pub fn recount_depth(&mut self) {
        self.depth = depth_over(&self.elem, self.entries.iter().map(|(_, v)| v));
    }

    /// Counts the depth again after one entry's value, `old` levels deep, was replaced
    /// in place by one `new` levels deep (an added entry replaced nothing: 0). A value at
    /// least as deep needs no look at the other entries.
    pub fn entry_replaced(&mut self, old: u32, new: u32) {
        if new >= old {
            self.depth = self.depth.max(new.saturating_add(1));
        } else {
            self.recount_depth();
        }
        debug_assert_eq!(
            self.depth,
            depth_over(&self.elem, self.entries.iter().map(|(_, v)| v))
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
        if self.entries.len() <= 8 {
            return self.entries.iter().find(|(k, _)| k == key).map(|(_, v)| v);
        }
        // `Str`'s order is the entries' (bytes), and compares two inline strings as words
        // (`cmp_str` called `memcmp` for every pair sharing a first byte: ~575
        // instructions a lookup of `svc-NNN` among 201 observed resources).
        self.entries
            .binary_search_by(|(k, _)| k.cmp(key))
            .ok()
            .map(|i| &self.entries[i].1)
    }
}

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
    use std::sync::Arc;

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
        s.set_elem(deep_type.clone());
        assert_eq!(s.depth(), 4);
        let mut f = Fields::new(Type::Dynamic, vec![("a".into(), one)]);
        f.entries[0].1 = t;
        f.recount_depth();
        assert_eq!(f.depth(), 3);
        f.entries[0].1 = Value::Map(Arc::new(Fields::new(deep_type, vec![])));
        f.forget_elem();
        assert_eq!(f.depth(), 5);
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
