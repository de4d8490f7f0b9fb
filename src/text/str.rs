//! [`Str`]: the crate's immutable string of names, keys and values, in 16 bytes like the
//! `Arc<str>` it replaces. Most strings a composition makes are short (keys, names,
//! labels, hashes cut to 16): up to [`Str::INLINE`] bytes live inside the value itself, so
//! making one allocates nothing and cloning or dropping one is a copy, with no reference
//! count to touch. Longer strings are an `Arc<str>`, shared as before, and
//! [`Str::strong_count`] still tells a budget whether a string is shared. A program's
//! long constant strings (object keys such as `example.org/tier`, constant values) are
//! [interned](Str::intern) once per process: cloning or dropping one is a copy too.
//!
//! Layout: sixteen bytes, the last a tag. An inline string is its bytes in the first
//! fifteen and `0x80 | len` in the tag; a heap string is the `Arc<str>`'s data pointer in
//! the first eight, its length in the next seven (little-endian: no string reaches 2^56
//! bytes) and tag 0. An interned string is laid out as a heap one with tag 1 (its bytes
//! live as long as the process and are not counted). The tag's unused values are a niche,
//! so `Option<Str>` and enums of strings stay as small as they were with `Arc<str>`.

use crate::text::words::{word4, word8};
use std::borrow::Borrow;
use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::mem::ManuallyDrop;
use std::ops::Deref;
use std::sync::Arc;

/// An immutable string: inline up to 15 bytes, a shared `Arc<str>` beyond.
#[repr(C)]
pub struct Str {
    head: Head,
    rest: [u8; 7],
    tag: Tag,
}

/// The first eight bytes: a heap string's data pointer (kept a pointer, with its
/// provenance) or an inline string's first eight bytes.
#[derive(Clone, Copy)]
#[repr(C)]
union Head {
    ptr: *const u8,
    bytes: [u8; 8],
}

/// `Heap`, `Static` (interned), or `0x80 | len` for an inline string of `len` bytes.
#[derive(Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
#[rustfmt::skip]
enum Tag {
    Heap = 0,
    Static = 1,
    I0 = 0x80, I1, I2, I3, I4, I5, I6, I7, I8, I9, I10, I11, I12, I13, I14, I15,
}

const LIMIT: usize = 15;

const INLINE_TAGS: [Tag; 16] = [
    Tag::I0,
    Tag::I1,
    Tag::I2,
    Tag::I3,
    Tag::I4,
    Tag::I5,
    Tag::I6,
    Tag::I7,
    Tag::I8,
    Tag::I9,
    Tag::I10,
    Tag::I11,
    Tag::I12,
    Tag::I13,
    Tag::I14,
    Tag::I15,
];

const _: () = assert!(std::mem::size_of::<Str>() == 16);
const _: () = assert!(std::mem::size_of::<Option<Str>>() == 16);
const _: () = assert!(std::mem::align_of::<Str>() == 8);

// SAFETY: a Str is either plain bytes or an Arc<str>, which is Send and Sync.
unsafe impl Send for Str {}
// SAFETY: as above; nothing is mutated through a shared reference.
unsafe impl Sync for Str {}

impl Str {
    /// The longest string kept inline.
    pub const INLINE: usize = LIMIT;

    /// The empty string.
    pub const EMPTY: Str = Str::inline("");

    /// A string of at most [`Str::INLINE`] bytes, in a `const` or `static` (a longer one
    /// fails to compile there, or panics elsewhere: use `Str::from`).
    pub const fn inline(s: &str) -> Str {
        let b = s.as_bytes();
        assert!(b.len() <= LIMIT, "Str::inline: longer than Str::INLINE");
        let mut all = [0u8; 16];
        let mut i = 0;
        while i < b.len() {
            all[i] = b[i];
            i += 1;
        }
        Str::assemble(all, b.len())
    }

    /// The string of the first `len` bytes of `bits` (the first byte lowest, as
    /// [`Str::inline_bits`] gives them), made inline when they are at most
    /// [`Str::INLINE`] bytes of ASCII (None otherwise): a short string joined in registers
    /// (a template's), which needs no allocation and no normalization. The bytes after
    /// `len` must be zero.
    #[inline]
    pub fn inline_ascii(bits: u128, len: usize) -> Option<Str> {
        const HIGH: u128 = u128::from_ne_bytes([0x80; 16]);
        if len > LIMIT || bits & HIGH != 0 {
            return None;
        }
        debug_assert!(bits >> (8 * len) == 0, "bytes after the string");
        Some(Str::from_bits(bits, len))
    }

    /// The inline string of the first `len` (at most 15) bytes of `bits`, the first byte
    /// lowest and the others zero: its two words, the tag put in the second's top byte.
    /// ([`Str::assemble`], for `const`s, takes the bytes apart and puts each in place:
    /// ~40 instructions a string where this is a few.)
    #[inline]
    fn from_bits(bits: u128, len: usize) -> Str {
        debug_assert!(len <= LIMIT);
        let head = bits as u64;
        let tail = (bits >> 64) as u64 | (0x80 | len as u64) << 56;
        // SAFETY: sixteen bytes in `Str`'s layout (`repr(C)`, aligned to 8 as the words
        // are): the head's eight bytes, the next seven, then the tag, `0x80 | len` with
        // `len` at most 15, which is one of `Tag`'s values; the words are written in
        // little-endian order, the order `tail` and `inline_bits` read.
        unsafe { std::mem::transmute::<[u64; 2], Str>([head.to_le(), tail.to_le()]) }
    }

    /// An inline string's bytes as one number, the first byte lowest and zero past its
    /// length, with the length; `None` for a string on the heap. Strings joined as numbers
    /// stay in registers: joined byte by byte in memory and read back whole, the CPU
    /// cannot forward the pieces to the wide read (a stall per short template).
    #[inline]
    pub fn inline_bits(&self) -> Option<(u128, usize)> {
        let tail = self.tail();
        if tail >> 63 == 0 {
            return None;
        }
        let len = (tail >> 56) as usize & 0x7f;
        let head = u64::from_le(self.head_word());
        Some((
            u128::from(head) | u128::from(tail & (u64::MAX >> 8)) << 64,
            len,
        ))
    }

    /// The inline string of the first `len` (at most 15) bytes of `all`, whose other
    /// bytes are zero (equality compares all sixteen).
    #[inline]
    const fn assemble(all: [u8; 16], len: usize) -> Str {
        let [
            a0,
            a1,
            a2,
            a3,
            a4,
            a5,
            a6,
            a7,
            r0,
            r1,
            r2,
            r3,
            r4,
            r5,
            r6,
            _,
        ] = all;
        Str {
            head: Head {
                bytes: [a0, a1, a2, a3, a4, a5, a6, a7],
            },
            rest: [r0, r1, r2, r3, r4, r5, r6],
            tag: INLINE_TAGS[len & 15],
        }
    }

    /// Held in its own sixteen bytes.
    #[inline]
    pub fn is_inline(&self) -> bool {
        self.tag as u8 & 0x80 != 0
    }

    /// Holds a reference count: an `Arc<str>`'s (neither inline nor interned). Only such a
    /// string's clone and drop do more than copy and forget its bytes.
    #[inline]
    pub fn is_counted(&self) -> bool {
        self.tag == Tag::Heap
    }

    /// The second eight bytes as one number: a heap or interned string's length in the
    /// low seven bytes and its tag (0 or 1) in the top one, or an inline string's tag in
    /// the top byte.
    #[inline]
    fn tail(&self) -> u64 {
        // SAFETY: `rest` and `tag` are the eight initialized bytes at offset 8 of a
        // `repr(C)` struct aligned to 8 (it holds a pointer); one load instead of eight.
        let word = unsafe { (self as *const Str).cast::<u64>().add(1).read() };
        u64::from_le(word)
    }

    /// The first eight bytes as one number (an inline string's first bytes).
    #[inline]
    fn head_word(&self) -> u64 {
        // SAFETY: only read for inline strings, whose head is eight initialized bytes.
        u64::from_ne_bytes(unsafe { self.head.bytes })
    }

    /// The length of a heap or interned string (the tag masked off).
    #[inline]
    fn heap_len(&self) -> usize {
        (self.tail() & (u64::MAX >> 8)) as usize
    }

    /// The string.
    #[inline]
    pub fn as_str(&self) -> &str {
        let tail = self.tail();
        // SAFETY: an inline string's first `len` bytes (head and rest are contiguous,
        // `repr(C)` with no padding) were copied from a str; a heap string's pointer and
        // length are those of a live Arc<str> this Str owns, an interned one's those of a
        // str never freed.
        unsafe {
            let (ptr, len) = if tail >> 63 != 0 {
                (
                    (self as *const Str).cast::<u8>(),
                    (tail >> 56) as usize & 0x7f,
                )
            } else {
                (self.head.ptr, (tail & (u64::MAX >> 8)) as usize)
            };
            std::str::from_utf8_unchecked(std::slice::from_raw_parts(ptr, len))
        }
    }

    /// How many values share this string's bytes: 1 for an inline string (a clone is a
    /// copy, so nothing is shared), the `Arc`'s strong count for a heap one, and
    /// `usize::MAX` for an interned one (shared by the whole process).
    pub fn strong_count(this: &Str) -> usize {
        match this.tag {
            Tag::Heap => {}
            Tag::Static => return usize::MAX,
            _ => return 1,
        }
        // SAFETY: a heap Str owns one strong reference of the Arc its parts came from; the
        // ManuallyDrop gives it back untouched.
        let arc = ManuallyDrop::new(unsafe { this.arc() });
        Arc::strong_count(&arc)
    }

    /// The raw `Arc<str>` pointer of a heap string (or an interned string's bytes).
    #[inline]
    fn raw(&self) -> *const str {
        // SAFETY: only called on heap and interned strings, whose head is the pointer.
        let ptr = unsafe { self.head.ptr };
        std::ptr::slice_from_raw_parts(ptr, self.heap_len()) as *const str
    }

    /// The Arc a heap string holds. Safety: `self` is a heap string, and the caller must not
    /// let the returned Arc drop unless it takes over `self`'s reference.
    unsafe fn arc(&self) -> Arc<str> {
        // SAFETY: the caller's contract; the parts are those Arc::into_raw gave.
        unsafe { Arc::from_raw(self.raw()) }
    }

    /// A heap string of `s` (longer than [`Str::INLINE`]), kept out of line so that the
    /// inline case of `Str::from` inlines where it is called.
    #[inline(never)]
    fn from_long(s: &str) -> Str {
        Str::from_arc(Arc::from(s))
    }

    fn from_arc(arc: Arc<str>) -> Str {
        let len = arc.len() as u64;
        assert!(len < 1 << 56, "Str: a string of 2^56 bytes");
        let ptr = Arc::into_raw(arc) as *const u8;
        let l = len.to_le_bytes();
        Str {
            head: Head { ptr },
            rest: [l[0], l[1], l[2], l[3], l[4], l[5], l[6]],
            tag: Tag::Heap,
        }
    }

    /// The string interned when it is a counted one (longer than [`Str::INLINE`], not
    /// interned yet) of at most [`INTERN_MAX`] bytes and there is room: for a program's
    /// constant keys and values, which every evaluation clones and drops. An interned
    /// string's clone and drop are a copy, where a counted string's touch its reference
    /// count: an atomic instruction each, which costs the CPU far more than its count of
    /// one says (benches/README.md, session 31). The process keeps at most
    /// [`INTERN_BYTES`] bytes of interned strings, never freed; any other string is
    /// returned as it is (not copied).
    pub fn intern(self) -> Str {
        if !self.is_counted() || self.len() > INTERN_MAX {
            return self;
        }
        static INTERNER: std::sync::LazyLock<std::sync::Mutex<Interner>> =
            std::sync::LazyLock::new(Default::default);
        // The set is consistent at every point a panic could leave it: a poisoned lock
        // is used as it is.
        let mut interner = INTERNER.lock().unwrap_or_else(|e| e.into_inner());
        match interner.get(&self, INTERN_BYTES) {
            Some(x) => Str::from_static(x),
            None => self,
        }
    }

    /// The interned string of `s` (longer than [`Str::INLINE`]).
    fn from_static(s: &'static str) -> Str {
        debug_assert!(s.len() > LIMIT);
        let l = (s.len() as u64).to_le_bytes();
        Str {
            head: Head { ptr: s.as_ptr() },
            rest: [l[0], l[1], l[2], l[3], l[4], l[5], l[6]],
            tag: Tag::Static,
        }
    }

    /// An inline string of `s` (at most 15 bytes), its two words put together in
    /// registers from at most two overlapping loads: built in memory (a byte array, then
    /// its fields) it was read back wider than it was written, and each read stalled.
    #[inline]
    fn from_short(s: &str) -> Str {
        let b = s.as_bytes();
        let n = b.len();
        debug_assert!(n <= LIMIT);
        // Little-endian words of `b` (in range for the lengths each is read at below).
        let u64_at = |i| u64::from_le(word8(b, i).unwrap_or(0));
        let u32_at = |i| u64::from(u32::from_le(word4(b, i).unwrap_or(0)));
        let (head, rest) = if n >= 8 {
            // Bytes 8.. are the top `n - 8` of the last eight.
            let rest = if n == 8 {
                0
            } else {
                u64_at(n - 8) >> (8 * (16 - n))
            };
            (u64_at(0), rest)
        } else if n >= 4 {
            (u32_at(0) | u32_at(n - 4) << (8 * (n - 4)), 0)
        } else {
            let w = b.iter().rev().fold(0, |w, &c| w << 8 | u64::from(c));
            (w, 0)
        };
        let tag = INLINE_TAGS[n & 15] as u64;
        // SAFETY: `repr(C)` of two 8-byte words (head; rest and tag), little-endian: the
        // string's bytes, zeros after them, and a valid tag in the last byte. The head is
        // only ever read as bytes, never as the pointer, for an inline string.
        unsafe { std::mem::transmute::<[u64; 2], Str>([head.to_le(), (rest | tag << 56).to_le()]) }
    }

    /// Whether every byte is ASCII: for an inline string, a test of its two words.
    #[inline]
    pub fn is_ascii(&self) -> bool {
        let tail = self.tail();
        if tail >> 63 != 0 {
            const HIGH: u64 = 0x8080_8080_8080_8080;
            return (self.head_word() | (tail & !(0xff << 56))) & HIGH == 0;
        }
        self.as_str().is_ascii()
    }
}

/// The most bytes of interned strings a process keeps ([`Str::intern`]): what a
/// hostile stream of programs can make it hold, besides the set's own table.
pub const INTERN_BYTES: usize = 1 << 20;

/// The longest string interned ([`Str::intern`]); a longer one stays a counted one.
pub const INTERN_MAX: usize = 1024;

/// The interned strings (leaked: they live as long as the process) and their bytes.
#[derive(Default)]
struct Interner {
    strings: std::collections::HashSet<&'static str>,
    bytes: usize,
}

impl Interner {
    /// The interned copy of `s`, made if there is room for it under `cap` bytes.
    fn get(&mut self, s: &str, cap: usize) -> Option<&'static str> {
        if let Some(&x) = self.strings.get(s) {
            return Some(x);
        }
        if s.len() > INTERN_MAX || self.bytes.saturating_add(s.len()) > cap {
            return None;
        }
        let x: &'static str = Box::leak(Box::from(s));
        self.bytes += x.len();
        self.strings.insert(x);
        Some(x)
    }
}

impl Drop for Str {
    #[inline]
    fn drop(&mut self) {
        if self.is_counted() {
            // SAFETY: a heap Str owns one strong reference; this gives it back.
            drop(unsafe { self.arc() });
        }
    }
}

impl Clone for Str {
    #[inline]
    fn clone(&self) -> Str {
        if self.is_counted() {
            // SAFETY: self holds a strong reference, so the Arc is alive; the clone owns
            // the new one.
            unsafe { Arc::increment_strong_count(self.raw()) };
        }
        // SAFETY: a bitwise copy is a valid Str: an inline string is plain bytes, an
        // interned one's bytes are never freed, and the reference a heap one owns was
        // counted above. One 16-byte copy, where a copy
        // field by field (8, 7 and 1 bytes) made the next wide read of it stall.
        unsafe { std::ptr::read(self) }
    }
}

impl Deref for Str {
    type Target = str;
    #[inline]
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl Default for Str {
    fn default() -> Str {
        Str::EMPTY
    }
}

impl From<&str> for Str {
    #[inline]
    fn from(s: &str) -> Str {
        if s.len() <= LIMIT {
            Str::from_short(s)
        } else {
            Str::from_long(s)
        }
    }
}

impl From<String> for Str {
    fn from(s: String) -> Str {
        Str::from(s.as_str())
    }
}

impl From<Arc<str>> for Str {
    fn from(s: Arc<str>) -> Str {
        if s.len() <= LIMIT {
            Str::from_short(&s)
        } else {
            Str::from_arc(s)
        }
    }
}

impl PartialEq for Str {
    /// Two inline strings are equal exactly when their sixteen bytes are (the tag holds
    /// the length, unused bytes are zero, and no string of 15 bytes or less is ever on
    /// the heap): two word compares, the common case of attribute names.
    #[inline]
    fn eq(&self, other: &Str) -> bool {
        let tail = self.tail();
        if tail >> 63 != 0 {
            // Equal tails make `other` inline too: both heads are bytes.
            return tail == other.tail() && self.head_word() == other.head_word();
        }
        other.tail() >> 63 == 0 && self.as_str() == other.as_str()
    }
}

impl Eq for Str {}

impl PartialEq<Str> for str {
    fn eq(&self, other: &Str) -> bool {
        self == other.as_str()
    }
}

impl PartialOrd for Str {
    fn partial_cmp(&self, other: &Str) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Str {
    /// Byte order. Two inline strings compare as two big-endian words each: their fifteen
    /// bytes (unused ones zero) then the tag, `0x80 | len`. Equal padded bytes mean the
    /// shorter is a prefix of the longer, and the tag then orders it first; a zero pad
    /// byte against a real byte orders the shorter first too (a real zero byte ties with
    /// the pad, and the difference is found later or by the tag). Keys are compared this
    /// way when objects are checked sorted, merged and written: a few instructions where
    /// two slices and a `memcmp` call cost ~40 (measured on heavy-200).
    #[inline]
    fn cmp(&self, other: &Str) -> Ordering {
        let (a, b) = (self.tail(), other.tail());
        if (a & b) >> 63 != 0 {
            // SAFETY: both are inline, so their heads are bytes.
            let (ha, hb) = unsafe { (self.head.bytes, other.head.bytes) };
            return u64::from_be_bytes(ha)
                .cmp(&u64::from_be_bytes(hb))
                .then(a.swap_bytes().cmp(&b.swap_bytes()));
        }
        self.as_bytes().cmp(other.as_bytes())
    }
}

impl Hash for Str {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_str().hash(state)
    }
}

impl Borrow<str> for Str {
    fn borrow(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for Str {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl fmt::Debug for Str {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for Str {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self.as_str(), f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_is_byte_order_inline_or_not() {
        // Prefixes, zero bytes against padding, bytes above 0x7f, the inline limit either
        // side, and pairs that differ only in the tag's word.
        let mut words: Vec<String> = [
            "",
            "\0",
            "\0\0",
            "a",
            "a\0",
            "a\0b",
            "ab",
            "b",
            "Z",
            "\u{e9}",
            "\u{7f}",
            "metadata",
            "metadatb",
            "meta",
            "example.org/tie",
            "example.org/tier",
            "example.org/hash",
            "abcdefgh",
            "abcdefghi",
            "abcdefgh\0",
            "abcdefghijklmn",
            "abcdefghijklmno",
            "abcdefghijklmnp",
            "abcdefghijklmnop",
            "abcdefghijklmno\0",
            "\u{10ffff}",
            "\u{ff}\u{ff}\u{ff}\u{ff}\u{ff}\u{ff}\u{ff}",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        for n in [7, 8, 9, 14, 15, 16, 17] {
            words.push("x".repeat(n));
            words.push(format!("{}\u{e9}", "x".repeat(n - 1)));
        }
        for x in &words {
            for y in &words {
                let (a, b) = (Str::from(x.as_str()), Str::from(y.as_str()));
                assert_eq!(a.cmp(&b), x.as_bytes().cmp(y.as_bytes()), "{x:?} {y:?}");
                assert_eq!(a == b, x == y, "{x:?} {y:?}");
            }
        }
    }

    #[test]
    fn inline_bits_are_the_bytes_in_order() {
        for s in ["", "a", "abcdefgh", "abcdefghi", "abcdefghijklmno", "é"] {
            let (bits, len) = Str::from(s).inline_bits().expect("inline");
            assert_eq!(len, s.len());
            let mut want = [0u8; 16];
            want[..len].copy_from_slice(s.as_bytes());
            assert_eq!(bits.to_le_bytes(), want, "{s:?}");
        }
        assert!(Str::from("abcdefghijklmnop").inline_bits().is_none());
    }

    #[test]
    fn inline_ascii_takes_short_ascii_only() {
        for n in 0..=16 {
            // A different byte at each place, so that one put in the wrong place shows.
            let mut buf = [0u8; 16];
            for (i, b) in buf[..n].iter_mut().enumerate() {
                *b = b'a' + i as u8;
            }
            let text: String = buf[..n].iter().map(|&b| char::from(b)).collect();
            let got = Str::inline_ascii(u128::from_le_bytes(buf), n);
            if n <= Str::INLINE {
                assert_eq!(got.as_deref(), Some(text.as_str()));
                assert_eq!(got, Some(Str::from(text.as_str())));
                assert_eq!(
                    got.and_then(|s| s.inline_bits()),
                    Some((u128::from_le_bytes(buf), n))
                );
            } else {
                assert!(got.is_none());
            }
        }
        let mut buf = [0u8; 16];
        buf[..2].copy_from_slice("é".as_bytes());
        assert!(Str::inline_ascii(u128::from_le_bytes(buf), 2).is_none());
    }

    /// Strings around the inline limit, empty, multi-byte: each reads back, compares,
    /// hashes and orders as its str, and is inline exactly when it fits.
    #[test]
    fn round_trips_at_every_length() {
        let samples: Vec<String> = (0..40)
            .map(|n| "abcdefghijklmnopqrstuvwxyz0123456789ABCD"[..n].to_string())
            .chain([
                "abcdefghijklmné".into(),
                "éabcdefghijklmn".into(),
                "abcdeéfghi".into(),
                "aé".into(),
                "é".repeat(7),
                "é".repeat(8),
                "日本語テキスト".into(),
                "🙂".repeat(4),
            ])
            .collect();
        for s in &samples {
            let x = Str::from(s.as_str());
            assert_eq!(x.as_str(), s);
            assert_eq!(x.len(), s.len());
            assert_eq!(x.is_inline(), s.len() <= Str::INLINE, "{s:?}");
            assert_eq!(x.is_ascii(), s.is_ascii(), "{s:?}");
            let y = x.clone();
            assert_eq!(x, y);
            assert_eq!(y.as_str(), s);
            assert_eq!(Str::from(s.clone()), x);
            assert_eq!(Str::from(Arc::<str>::from(s.as_str())), x);
            let h = |v: &dyn Fn(&mut std::collections::hash_map::DefaultHasher)| {
                let mut st = std::collections::hash_map::DefaultHasher::new();
                v(&mut st);
                st.finish()
            };
            assert_eq!(h(&|st| x.hash(st)), h(&|st| s.as_str().hash(st)));
        }
        for a in &samples {
            for b in &samples {
                assert_eq!(Str::from(a.as_str()).cmp(&Str::from(b.as_str())), a.cmp(b));
            }
        }
    }

    /// Equality of two Strs agrees with their strs whichever way each was made (a heap
    /// string is never 15 bytes or less, so the representation is canonical).
    #[test]
    fn equality_is_the_strs() {
        let texts = [
            "",
            "a",
            "ab",
            "abcdefgh",
            "abcdefghijklmno",
            "abcdefghijklmnop",
            "é",
        ];
        for a in texts {
            for b in texts {
                let made = [
                    Str::from(a),
                    Str::from(a.to_string()),
                    Str::from(Arc::<str>::from(a)),
                ];
                let y = Str::from(b);
                for x in &made {
                    assert_eq!(x.eq(&y), a == b, "{a:?} {b:?}");
                }
            }
        }
        assert_eq!(Str::inline("abc"), Str::from("abc"));
    }

    proptest::proptest! {
        /// Any text (ASCII, multi-byte, long or short) reads back, and two Strs compare,
        /// order and hash as their strs do, whether made from a str, a String or an Arc.
        #[test]
        fn behaves_as_its_str(a in "\\PC{0,40}", b in "\\PC{0,40}") {
            use std::collections::hash_map::DefaultHasher;
            let hash = |x: &dyn Fn(&mut DefaultHasher)| {
                let mut h = DefaultHasher::new();
                x(&mut h);
                h.finish()
            };
            let (x, y) = (Str::from(a.as_str()), Str::from(Arc::<str>::from(b.as_str())));
            proptest::prop_assert_eq!(x.as_str(), a.as_str());
            proptest::prop_assert_eq!(x.is_ascii(), a.is_ascii());
            let y2 = y.clone();
            proptest::prop_assert_eq!(y2.as_str(), b.as_str());
            proptest::prop_assert_eq!(x == y, a == b);
            proptest::prop_assert_eq!(x.cmp(&y), a.cmp(&b));
            proptest::prop_assert_eq!(hash(&|h| x.hash(h)), hash(&|h| a.as_str().hash(h)));
            proptest::prop_assert!(Str::from(a.clone()).eq(&x));
        }
    }

    /// A heap string's count follows its clones and drops; an inline one is never shared.
    #[test]
    fn strong_count_follows_clones_of_heap_strings() {
        let long = Str::from("a string longer than fifteen bytes");
        assert_eq!(Str::strong_count(&long), 1);
        let c = long.clone();
        assert_eq!(Str::strong_count(&long), 2);
        drop(c);
        assert_eq!(Str::strong_count(&long), 1);
        let short = Str::from("short");
        let _copy = short.clone();
        assert_eq!(Str::strong_count(&short), 1);
    }

    /// An interned string is the same string as a heap one (bytes, order, equality,
    /// hash) without a count; interning the same text again gives the same bytes.
    #[test]
    fn interned_strings_are_uncounted_copies_of_the_same_text() {
        use std::hash::BuildHasher;
        let text = "example.org/interned-key";
        let (i, h) = (Str::from(text).intern(), Str::from(text));
        assert!(!i.is_inline() && !i.is_counted() && h.is_counted());
        assert_eq!((i.as_str(), i.len()), (text, text.len()));
        assert_eq!(i, h);
        assert_eq!(
            i.cmp(&Str::from("example.org/interned-kez")),
            Ordering::Less
        );
        let hasher = std::collections::hash_map::RandomState::new();
        assert_eq!(hasher.hash_one(&i), hasher.hash_one(&h));
        assert_eq!(Str::strong_count(&i), usize::MAX);
        let again = Str::from(text).intern();
        assert_eq!(again.as_ptr(), i.as_ptr());
        let c = i.clone();
        drop(i);
        assert_eq!(c.as_str(), text);
        // Short text stays inline.
        assert!(Str::from("short").intern().is_inline());
        // Longer than INTERN_MAX: the same string back, still counted and not copied.
        let long = Str::from("x".repeat(INTERN_MAX + 1));
        let kept = long.clone().intern();
        assert!(kept.is_counted() && kept.as_ptr() == long.as_ptr());
    }

    /// The interner keeps no more than its cap, and nothing longer than `INTERN_MAX`.
    #[test]
    fn the_interner_is_bounded() {
        let mut t = Interner::default();
        let (a, b, c) = ("a".repeat(20), "b".repeat(20), "c".repeat(20));
        assert!(t.get(&a, 40).is_some());
        assert!(t.get(&b, 40).is_some());
        assert_eq!(t.get(&c, 40), None);
        assert_eq!(t.get(&a, 40), Some(a.as_str()));
        assert_eq!(t.bytes, 40);
        assert_eq!(t.get(&"d".repeat(INTERN_MAX + 1), usize::MAX), None);
        assert!(t.get(&"d".repeat(INTERN_MAX), usize::MAX).is_some());
    }

    #[test]
    fn constants_are_inline() {
        const K: Str = Str::inline("annotations");
        assert_eq!(K.as_str(), "annotations");
        assert_eq!(Str::EMPTY.as_str(), "");
        assert_eq!(Str::default(), Str::EMPTY);
    }

    /// Clones dropped on other threads leave the count right (the Arc's atomics).
    #[test]
    fn heap_strings_cross_threads() {
        let long = Str::from("x".repeat(100));
        let handles: Vec<_> = (0..4)
            .map(|_| {
                let c = long.clone();
                std::thread::spawn(move || c.len())
            })
            .collect();
        for h in handles {
            assert_eq!(h.join().ok(), Some(100));
        }
        assert_eq!(Str::strong_count(&long), 1);
    }
}
