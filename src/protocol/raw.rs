//! Observed bodies (and the step's input) kept as the bytes of their
//! `google.protobuf.Struct`, checked once and read without building them.
//!
//! The gRPC fast path decodes the request envelope eagerly but keeps every observed
//! resource's body as its bytes (see [`crate::protocol::proto::LazyRequest`]).
//! [`scan_body`] checks those bytes once, without building anything: it accepts exactly
//! what prost's decoder accepts at that position (wire format, UTF-8, prost's recursion
//! limit) and finds what `Request::from_proto` would need from a body it never reads (a
//! NaN or ±Inf number is a Fatal error in Go even there, the collection annotations group
//! members, the debug annotation turns the dump on). `request`'s decoder then turns only
//! the bodies a program can read into values, in one pass, with the eager path's results.
//!
//! Anything unusual (a field of a `Value` or map entry given twice, where protobuf merges,
//! a non-finite number, annotations that are not a map of strings, deep nesting) marks the
//! body `exact`: it is then decoded with prost and converted by the eager code, so every
//! outcome, error or not, is the eager path's. Under `metadata.managedFields`, which both
//! paths drop, only prost's verdict matters: that subtree is checked for it alone.

use crate::protocol::{ANNOTATION_BASE_NAME, ANNOTATION_INDEX, DEBUG_ANNOTATION, MAX_DEPTH};
use crate::value::{Str, Value};
use prost_types::value::Kind;

/// prost's recursion budget left for the fields of an observed body's `Struct`: the
/// request (100) → `observed` State (99) → `resources` map entry (98) → Resource (97)
/// → `resource` Struct (96). Checked against prost by the tests.
pub(crate) const BODY_BUDGET: u32 = 96;

/// A byte string prost would reject (the exact error comes from prost itself).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Reject;

/// What [`scan_body`] found in a body.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct BodyScan {
    /// Convert this body with prost and the eager code (see above).
    pub exact: bool,
    /// The collection annotations (base name, index), when the body names a base.
    pub collection: Option<(Str, Str)>,
    /// The debug annotation ([`DEBUG_ANNOTATION`]) is the string `"true"`.
    pub debug: bool,
}

/// The role of a value in the body, for what the scan must look at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Role {
    /// The body's top-level `Struct`.
    Root,
    /// `metadata` (its `Value`, and its `Struct`).
    Metadata,
    /// `metadata.annotations`.
    Annotations,
    /// One annotation: 0 other, 1 collection base name, 2 collection index, 3 debug.
    Annotation(u8),
    /// `metadata.managedFields`: dropped by the eager path, only validated here.
    Exempt,
    Plain,
}

#[derive(Default)]
struct ScanState<'a> {
    exact: bool,
    /// The collection annotations' values (checked UTF-8).
    base: Option<&'a [u8]>,
    index: Option<&'a [u8]>,
    debug: Option<&'a [u8]>,
}

/// A cursor over protobuf wire data, with prost's own varint and key decoding.
pub(crate) struct Rd<'a>(pub(crate) &'a [u8]);

impl<'a> Rd<'a> {
    pub(crate) fn done(&self) -> bool {
        self.0.is_empty()
    }

    #[inline(always)]
    pub(crate) fn varint(&mut self) -> Result<u64, Reject> {
        // One or two bytes (keys, and lengths under 16 KiB) inline; longer ones as prost
        // decodes them (which reads these the same way).
        match self.0 {
            [b, rest @ ..] if *b < 0x80 => {
                self.0 = rest;
                Ok(u64::from(*b))
            }
            [b0, b1, rest @ ..] if *b1 < 0x80 => {
                self.0 = rest;
                Ok(u64::from(b0 & 0x7f) | u64::from(*b1) << 7)
            }
            _ => prost::encoding::decode_varint(&mut self.0).map_err(|_| Reject),
        }
    }

    /// A field key, with prost's checks (`decode_key`): a key above u32::MAX, wire types
    /// 6 and 7 and tag 0 are errors.
    #[inline(always)]
    pub(crate) fn key(&mut self) -> Result<(u32, WireType), Reject> {
        let key = self.varint()?;
        if key > u64::from(u32::MAX) {
            return Err(Reject);
        }
        let wt = match key & 7 {
            0 => WireType::Varint,
            1 => WireType::SixtyFourBit,
            2 => WireType::LengthDelimited,
            3 => WireType::StartGroup,
            4 => WireType::EndGroup,
            5 => WireType::ThirtyTwoBit,
            _ => return Err(Reject),
        };
        let tag = (key >> 3) as u32;
        if tag == 0 {
            return Err(Reject);
        }
        Ok((tag, wt))
    }

    #[inline(always)]
    pub(crate) fn fixed(&mut self, n: usize) -> Result<&'a [u8], Reject> {
        if self.0.len() < n {
            return Err(Reject);
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Ok(a)
    }

    /// A length-delimited payload (its length must fit in what is left).
    #[inline(always)]
    pub(crate) fn bytes(&mut self) -> Result<&'a [u8], Reject> {
        let len = self.varint()?;
        if len > self.0.len() as u64 {
            return Err(Reject);
        }
        self.fixed(len as usize)
    }

    /// A string field's bytes, checked to be UTF-8 as prost checks them.
    #[inline(always)]
    fn text(&mut self) -> Result<&'a [u8], Reject> {
        let b = self.bytes()?;
        if utf8(b) { Ok(b) } else { Err(Reject) }
    }

    /// A string field (for the decoder, after the scan checked it).
    pub(crate) fn string(&mut self) -> Result<&'a str, Reject> {
        crate::text::words::str_of(self.bytes()?).ok_or(Reject)
    }

    /// Moves past the fields before the next occurrence of field 1 (the repeated field of
    /// `Struct` and `ListValue`; prost's `skip_field` with `budget` for the others) and
    /// reads its key: its wire type, or `None` at the end.
    #[inline(always)]
    fn next_field1(&mut self, budget: u32) -> Result<Option<WireType>, Reject> {
        while let Some((&b, rest)) = self.0.split_first() {
            // Field 1, length-delimited: the usual key.
            if b == 0x0a {
                self.0 = rest;
                return Ok(Some(WireType::LengthDelimited));
            }
            let (tag, wt) = self.key()?;
            if tag == 1 {
                return Ok(Some(wt));
            }
            skip(self, wt, tag, budget)?;
        }
        Ok(None)
    }

    /// The next entry of the fields of a `Struct` that [`scan_body`] accepted: its key and
    /// its value's bytes (empty, that is null, when missing), or `None` at the end.
    pub(crate) fn next_entry(&mut self) -> Result<Option<(&'a str, &'a [u8])>, Reject> {
        if self.next_field1(u32::MAX)?.is_none() {
            return Ok(None);
        }
        let mut er = Rd(self.bytes()?);
        let (mut key, mut value): (&str, &[u8]) = ("", b"");
        while !er.done() {
            let (t, w) = er.key()?;
            match t {
                1 => key = er.string()?,
                2 => value = er.bytes()?,
                _ => skip(&mut er, w, t, u32::MAX)?,
            }
        }
        Ok(Some((key, value)))
    }
}

use prost::encoding::WireType;

fn want(wt: WireType, expected: WireType) -> Result<(), Reject> {
    if wt == expected { Ok(()) } else { Err(Reject) }
}

/// prost's `skip_field` with `budget` as its recursion budget.
pub(crate) fn skip(rd: &mut Rd<'_>, wt: WireType, tag: u32, budget: u32) -> Result<(), Reject> {
    if budget == 0 {
        return Err(Reject);
    }
    match wt {
        WireType::Varint => {
            rd.varint()?;
        }
        WireType::ThirtyTwoBit => {
            rd.fixed(4)?;
        }
        WireType::SixtyFourBit => {
            rd.fixed(8)?;
        }
        WireType::LengthDelimited => {
            rd.bytes()?;
        }
        WireType::StartGroup => loop {
            let (t, w) = rd.key()?;
            if w == WireType::EndGroup {
                if t != tag {
                    return Err(Reject);
                }
                break;
            }
            skip(rd, w, t, budget - 1)?;
        },
        WireType::EndGroup => return Err(Reject),
    }
    Ok(())
}

/// Checks the bytes of an observed body (`Struct` fields, with `budget` as prost's
/// recursion budget for them) and finds what the eager path needs from it.
pub(crate) fn scan_body(bytes: &[u8], budget: u32) -> Result<BodyScan, Reject> {
    let mut st = ScanState::default();
    scan_struct(bytes, budget, Role::Root, 1, &mut st)?;
    fn text(b: Option<&[u8]>) -> &str {
        std::str::from_utf8(b.unwrap_or_default()).unwrap_or_default()
    }
    let collection = match (st.exact, st.base) {
        (false, Some(b)) => {
            // As `collection_annotations` sees them: strings made by `Value::string`.
            let as_str = |v: Value| match v {
                Value::String(s) => s,
                _ => Str::from(""),
            };
            let base = as_str(Value::string(text(Some(b))));
            if base.is_empty() {
                None
            } else {
                Some((base, as_str(Value::string(text(st.index)))))
            }
        }
        _ => None,
    };
    Ok(BodyScan {
        exact: st.exact,
        collection,
        debug: !st.exact && st.debug == Some(b"true"),
    })
}

/// The fields of a `Struct` with a role (the body, `metadata`, its annotations; budget:
/// prost's, for these fields). Every other subtree goes to [`check_value`].
fn scan_struct<'a>(
    b: &'a [u8],
    budget: u32,
    role: Role,
    depth: usize,
    st: &mut ScanState<'a>,
) -> Result<(), Reject> {
    if depth > MAX_DEPTH / 2 {
        st.exact = true;
    }
    let mut rd = Rd(b);
    let (mut metadata, mut annotations) = (0u32, 0u32);
    // A map field: prost reads a length whatever the wire type says.
    while rd.next_field1(budget)?.is_some() {
        if budget == 0 {
            return Err(Reject);
        }
        let e = budget - 1;
        let (key, value, twice) = entry_fields(rd.bytes()?, e)?;
        // Merged or replaced by prost: left to the exact path.
        st.exact |= twice;
        let child = match role {
            Role::Root if key == b"metadata" => {
                metadata += 1;
                Role::Metadata
            }
            Role::Metadata if key == b"annotations" => {
                annotations += 1;
                Role::Annotations
            }
            Role::Metadata if key == b"managedFields" => Role::Exempt,
            Role::Annotations => {
                let which = if key == ANNOTATION_BASE_NAME.as_bytes() {
                    1
                } else if key == ANNOTATION_INDEX.as_bytes() {
                    2
                } else if key == DEBUG_ANNOTATION.as_bytes() {
                    3
                } else {
                    0
                };
                Role::Annotation(which)
            }
            _ => Role::Plain,
        };
        match (value, child) {
            (Some(v), Role::Exempt) => check_value::<false>(v, e - 1, depth).map(drop)?,
            (Some(v), Role::Plain) => st.exact |= check_value::<true>(v, e - 1, depth)?,
            (Some(v), _) => scan_value(v, e - 1, child, depth, st)?,
            // A missing value is null.
            (None, Role::Metadata | Role::Annotations | Role::Annotation(_)) => st.exact = true,
            (None, _) => {}
        }
    }
    if metadata > 1 || annotations > 1 {
        st.exact = true;
    }
    Ok(())
}

/// The fields of a `Value` with a role (`metadata`, its annotations, one annotation;
/// budget: prost's, for these fields).
fn scan_value<'a>(
    b: &'a [u8],
    budget: u32,
    role: Role,
    depth: usize,
    st: &mut ScanState<'a>,
) -> Result<(), Reject> {
    let (kinds, last) = value_fields(b, budget, |tag, payload| {
        match tag {
            2 => st.exact |= !finite(payload),
            3 => {
                let seen = match role {
                    Role::Annotation(1) => st.base.replace(payload).is_some(),
                    Role::Annotation(2) => st.index.replace(payload).is_some(),
                    Role::Annotation(3) => st.debug.replace(payload).is_some(),
                    _ => false,
                };
                // Given twice (two entries, or two strings in one value): exact path.
                st.exact |= seen;
            }
            5 if matches!(role, Role::Metadata | Role::Annotations) => {
                scan_struct(payload, budget - 1, role, depth + 1, st)?;
            }
            5 => st.exact |= check_struct::<true>(payload, budget - 1, depth + 1)?,
            6 => st.exact |= check_list::<true>(payload, budget - 1, depth + 1)?,
            _ => {}
        }
        Ok(())
    })?;
    let expected = match role {
        Role::Metadata | Role::Annotations => Some(5),
        Role::Annotation(_) => Some(3),
        _ => None,
    };
    // A oneof set twice merges or replaces; metadata, annotations and annotation values
    // of another kind are errors: both are left to the exact path.
    if kinds > 1 || expected.is_some_and(|k| kinds != 1 || last != k) {
        st.exact = true;
    }
    Ok(())
}

/// The fields of a `Value` (budget: prost's, for these fields) as prost reads them: each
/// kind's wire type, varint, 8 bytes, UTF-8 string, and the budget a `Struct` or
/// `ListValue` needs are checked here; `kind(tag, payload)` gets the number's 8 bytes
/// (tag 2), the string (3) and the struct's or list's fields (5, 6: to check with
/// `budget - 1`). Returns how many kinds were given and the last one's tag.
#[inline(always)]
fn value_fields<'a>(
    b: &'a [u8],
    budget: u32,
    mut kind: impl FnMut(u32, &'a [u8]) -> Result<(), Reject>,
) -> Result<(u32, u32), Reject> {
    let mut rd = Rd(b);
    let (mut kinds, mut last) = (0u32, 0u32);
    while !rd.done() {
        let (tag, wt) = rd.key()?;
        match tag {
            1 | 4 => {
                want(wt, WireType::Varint)?;
                rd.varint()?;
            }
            2 => {
                want(wt, WireType::SixtyFourBit)?;
                kind(tag, rd.fixed(8)?)?;
            }
            3 => {
                want(wt, WireType::LengthDelimited)?;
                kind(tag, rd.text()?)?;
            }
            5 | 6 => {
                want(wt, WireType::LengthDelimited)?;
                if budget == 0 {
                    return Err(Reject);
                }
                kind(tag, rd.bytes()?)?;
            }
            _ => {
                skip(&mut rd, wt, tag, budget)?;
                continue;
            }
        }
        kinds += 1;
        last = tag;
    }
    Ok((kinds, last))
}

// ---- Subtrees without a role: checked, with one bit of outcome ----
//
// Below the roles, a body's values need no state: only whether prost accepts them (the
// same rules and budget as above) and, with `WATCH`, whether the fast path can trust them
// (`Ok(true)`, irregular: a non-finite number, a field of a `Value` or map entry given
// twice, nesting past `MAX_DEPTH / 2`). `metadata.managedFields` is checked without
// `WATCH`: both paths drop it (`request::struct_body`, `request::decode_struct`) and no
// reader of the bytes looks into it, so there only prost's verdict matters. The common
// shapes (an entry of a key and a value, a value of one kind with a one-byte length) are
// matched as bytes; anything else takes the general loops.

/// Whether a float64's little-endian bytes are finite.
#[inline(always)]
fn finite(raw: &[u8]) -> bool {
    let mut a = [0u8; 8];
    a.copy_from_slice(raw);
    f64::from_le_bytes(a).is_finite()
}

/// Whether `b` is UTF-8, cheaply for short ASCII (most keys and strings of a body): see
/// [`crate::text::words::str_of`].
#[inline(always)]
fn utf8(b: &[u8]) -> bool {
    crate::text::words::str_of(b).is_some()
}

/// The payload of `b` when `b` is one length-delimited field whose key is the byte `key`
/// and nothing else (the usual shape of a value).
#[inline(always)]
fn only_field(b: &[u8], key: u8) -> Option<&[u8]> {
    match b {
        [k, rest @ ..] if *k == key => {
            let mut rd = Rd(rest);
            match rd.bytes() {
                Ok(p) if rd.done() => Some(p),
                _ => None,
            }
        }
        _ => None,
    }
}

/// A map entry: its key, its value (`None` when missing: null), a field of it given twice.
type Entry<'a> = (&'a [u8], Option<&'a [u8]>, bool);

/// Field 1 of a `Struct` or `ListValue`: its key's wire type, its payload, what follows.
type Field1<'a> = (WireType, &'a [u8], &'a [u8]);

/// A map entry's key and value (`None` when missing: null) as prost's map reads them, and
/// whether a field of it was given twice (merged or replaced by prost). Budget `e`:
/// prost's, for the entry's fields; a value other than the one returned is checked here.
#[inline(always)]
fn entry_fields(entry: &[u8], e: u32) -> Result<Entry<'_>, Reject> {
    // The usual entry: its key (a one-byte length), then its value, nothing else.
    if let [0x0a, kl, rest @ ..] = entry
        && *kl < 0x80
        && let Some((k, v)) = rest.split_at_checked(usize::from(*kl))
        && let Some(v) = only_field(v, 0x12)
    {
        return if utf8(k) && e > 0 {
            Ok((k, Some(v), false))
        } else {
            Err(Reject)
        };
    }
    entry_fields_in_any_order(entry, e)
}

/// [`entry_fields`] for entries of another shape.
#[inline(never)]
fn entry_fields_in_any_order(entry: &[u8], e: u32) -> Result<Entry<'_>, Reject> {
    let mut er = Rd(entry);
    let (mut key, mut keys): (&[u8], u32) = (b"", 0);
    let (mut value, mut values) = (None, 0u32);
    while !er.done() {
        let (t, w) = er.key()?;
        match t {
            1 => {
                want(w, WireType::LengthDelimited)?;
                key = er.text()?;
                keys += 1;
            }
            2 => {
                want(w, WireType::LengthDelimited)?;
                if e == 0 {
                    return Err(Reject);
                }
                let v = er.bytes()?;
                values += 1;
                match value {
                    // The value that reaches the caller is the first; prost merges the
                    // others into it, so they must be valid too.
                    Some(_) => {
                        check_value::<false>(v, e - 1, 0)?;
                    }
                    None => value = Some(v),
                }
            }
            _ => skip(&mut er, w, t, e)?,
        }
    }
    Ok((key, value, keys > 1 || values > 1))
}

/// The fields of a `Value` without a role (budget: prost's, for these fields): the usual
/// leaves here, the rest in [`check_value_fields`].
#[inline(always)]
fn check_value<const WATCH: bool>(b: &[u8], budget: u32, depth: usize) -> Result<bool, Reject> {
    if let [0x2a, 0] = b
        && budget > 0
    {
        // `{}`
        return Ok(WATCH && depth + 1 > MAX_DEPTH / 2);
    }
    if let Some(s) = only_field(b, 0x1a) {
        return if utf8(s) { Ok(false) } else { Err(Reject) };
    }
    check_value_fields::<WATCH>(b, budget, depth)
}

/// [`check_value`] for values other than a string or an empty `Struct`.
fn check_value_fields<const WATCH: bool>(
    b: &[u8],
    budget: u32,
    depth: usize,
) -> Result<bool, Reject> {
    if budget > 0 {
        if let Some(inner) = only_field(b, 0x2a) {
            return check_struct::<WATCH>(inner, budget - 1, depth + 1);
        }
        if let Some(inner) = only_field(b, 0x32) {
            return check_list::<WATCH>(inner, budget - 1, depth + 1);
        }
    }
    if let [0x11, rest @ ..] = b
        && rest.len() == 8
    {
        return Ok(WATCH && !finite(rest));
    }
    let mut odd = false;
    let (kinds, _) = value_fields(b, budget, |tag, payload| {
        odd |= match tag {
            2 => WATCH && !finite(payload),
            5 => check_struct::<WATCH>(payload, budget - 1, depth + 1)?,
            6 => check_list::<WATCH>(payload, budget - 1, depth + 1)?,
            _ => false,
        };
        Ok(())
    })?;
    Ok(WATCH && (odd || kinds > 1))
}

/// The next occurrence of field 1 (the repeated field of `Struct` and `ListValue`) in
/// `b`: the wire type of its key, its payload (prost reads a length whatever the wire
/// type) and the bytes after it; `None` at the end. Fields before it are skipped as prost
/// skips them (with `budget`). The usual key and a one-byte length are read here.
#[inline(always)]
fn next_field1(b: &[u8], budget: u32) -> Result<Option<Field1<'_>>, Reject> {
    if let [0x0a, len, rest @ ..] = b
        && *len < 0x80
        && let Some((payload, rest)) = rest.split_at_checked(usize::from(*len))
    {
        return Ok(Some((WireType::LengthDelimited, payload, rest)));
    }
    if b.is_empty() {
        return Ok(None);
    }
    next_field1_any(b, budget)
}

/// [`next_field1`] for other keys and lengths (kept out of the callers' loops).
#[inline(never)]
fn next_field1_any(b: &[u8], budget: u32) -> Result<Option<Field1<'_>>, Reject> {
    let mut rd = Rd(b);
    match rd.next_field1(budget)? {
        Some(wt) => {
            let payload = rd.bytes()?;
            Ok(Some((wt, payload, rd.0)))
        }
        None => Ok(None),
    }
}

/// The fields of a `Struct` without a role (budget: prost's, for these fields).
fn check_struct<const WATCH: bool>(b: &[u8], budget: u32, depth: usize) -> Result<bool, Reject> {
    let mut odd = WATCH && depth > MAX_DEPTH / 2;
    let mut rest = b;
    // A map field: its entries are read whatever the wire type says.
    while let Some((_, entry, after)) = next_field1(rest, budget)? {
        rest = after;
        if budget == 0 {
            return Err(Reject);
        }
        let e = budget - 1;
        let (_, value, twice) = entry_fields(entry, e)?;
        odd |= WATCH && twice;
        if let Some(v) = value {
            odd |= check_value::<WATCH>(v, e - 1, depth)?;
        }
    }
    Ok(odd)
}

/// The fields of a `ListValue` without a role (budget: prost's, for these fields).
fn check_list<const WATCH: bool>(b: &[u8], budget: u32, depth: usize) -> Result<bool, Reject> {
    let mut odd = WATCH && depth > MAX_DEPTH / 2;
    let mut rest = b;
    while let Some((wt, v, after)) = next_field1(rest, budget)? {
        rest = after;
        want(wt, WireType::LengthDelimited)?;
        if budget == 0 {
            return Err(Reject);
        }
        odd |= check_value::<WATCH>(v, budget - 1, depth)?;
    }
    Ok(odd)
}

/// The string at `path` in the fields of a Struct that [`scan_body`] accepted without
/// marking it exact (the last entry of a key wins, as in prost's map).
fn str_in_struct<'a>(bytes: &'a [u8], path: &[&str]) -> Option<&'a str> {
    let (first, rest) = path.split_first()?;
    let mut rd = Rd(bytes);
    let mut found: Option<&'a [u8]> = None;
    while let Some((key, value)) = rd.next_entry().ok()? {
        if key == *first {
            found = Some(value);
        }
    }
    // The value's kind (one at most: the scan marks repeated kinds exact).
    let mut vr = Rd(found?);
    let mut out = None;
    while !vr.done() {
        let (tag, wt) = vr.key().ok()?;
        match (tag, rest.is_empty()) {
            (3, true) => out = Some(vr.string().ok()?),
            (5, false) => out = str_in_struct(vr.bytes().ok()?, rest),
            _ => skip(&mut vr, wt, tag, u32::MAX).ok()?,
        }
    }
    out
}

/// The top-level entries of a Struct's bytes (key, kind of its value) in wire order, or
/// `None` when the scan marked them exact (read those from the decoded Struct). With the
/// scan's guarantees a value has at most one kind, as prost would decode it.
pub(crate) fn struct_entries(raw: &RawBody) -> Option<Vec<(&str, EntryKind<'_>)>> {
    if raw.scan.exact {
        return None;
    }
    let mut out = Vec::new();
    let mut rd = Rd(&raw.bytes);
    while let Some((key, value)) = rd.next_entry().ok()? {
        let mut vr = Rd(value);
        let mut kind = EntryKind::Null;
        while !vr.done() {
            let (t, w) = vr.key().ok()?;
            kind = match t {
                1 => {
                    vr.varint().ok()?;
                    EntryKind::Null
                }
                2 => {
                    vr.fixed(8).ok()?;
                    EntryKind::Number
                }
                3 => EntryKind::String(vr.string().ok()?),
                4 => EntryKind::Bool(vr.varint().ok()? != 0),
                5 => {
                    vr.bytes().ok()?;
                    EntryKind::Struct
                }
                6 => {
                    vr.bytes().ok()?;
                    EntryKind::List
                }
                _ => {
                    skip(&mut vr, w, t, u32::MAX).ok()?;
                    continue;
                }
            };
        }
        out.push((key, kind));
    }
    Some(out)
}

/// An observed resource's body (or the step's input) as the request carried it: the bytes
/// of its `google.protobuf.Struct` (shared with the request buffer, not copied).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RawBody {
    bytes: prost::bytes::Bytes,
    /// Whether the request had the field at all (`resource` unset vs an empty Struct).
    present: bool,
    scan: BodyScan,
    /// Who the bytes are, for a resource's body long enough to remember what they gave
    /// ([`crate::protocol::body_cache`]).
    digest: Option<crate::protocol::body_cache::Digest>,
}

impl RawBody {
    /// Adds one occurrence of the `resource` field (protobuf merges repeated occurrences
    /// of a message field, which is the same as concatenating them).
    /// `budget` is prost's recursion budget for the Struct's fields at this position.
    pub(crate) fn push(&mut self, piece: prost::bytes::Bytes, budget: u32) -> Result<(), Reject> {
        let scan = scan_body(&piece, budget)?;
        self.push_scanned(piece, scan);
        Ok(())
    }

    /// [`RawBody::push`] of a resource's body, whose scan and values are remembered by
    /// its bytes ([`crate::protocol::body_cache`]: the composite and observed resources
    /// come again unchanged on every reconcile). The step's input is not: it is mostly
    /// the program's text, whose check costs less than hashing it.
    pub(crate) fn push_resource(
        &mut self,
        piece: prost::bytes::Bytes,
        budget: u32,
    ) -> Result<(), Reject> {
        use crate::protocol::body_cache;
        // A body given in pieces is joined and left to the exact path: no digest.
        let digest = if self.present {
            None
        } else {
            body_cache::digest(&piece)
        };
        let scan = body_cache::scan_body(&piece, budget, digest)?;
        self.push_scanned(piece, scan);
        self.digest = digest;
        Ok(())
    }

    fn push_scanned(&mut self, piece: prost::bytes::Bytes, scan: BodyScan) {
        if !self.present {
            self.bytes = piece;
            self.scan = scan;
            self.present = true;
        } else {
            let mut joined = Vec::with_capacity(self.bytes.len() + piece.len());
            joined.extend_from_slice(&self.bytes);
            joined.extend_from_slice(&piece);
            self.bytes = joined.into();
            self.scan = BodyScan {
                exact: true,
                collection: None,
                debug: false,
            };
        }
    }

    /// A body from a decoded `Struct` (encoded again; for requests that arrive decoded,
    /// with bodies nested within prost's recursion limit).
    pub(crate) fn set_decoded(&mut self, s: prost_types::Struct) {
        use prost::Message as _;
        let bytes = s.encode_to_vec();
        self.digest = None;
        self.scan = scan_body(&bytes, u32::MAX / 2).unwrap_or(BodyScan {
            exact: true,
            collection: None,
            debug: false,
        });
        self.bytes = bytes.into();
        self.present = true;
    }

    /// The encoded `Struct`.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Whether the resource carried a body at all.
    pub fn is_present(&self) -> bool {
        self.present
    }

    /// The body as prost decodes it (`None` when the resource had none).
    pub fn to_struct(&self) -> Result<Option<prost_types::Struct>, prost::DecodeError> {
        use prost::Message as _;
        if !self.present {
            return Ok(None);
        }
        prost_types::Struct::decode(self.bytes.as_ref()).map(Some)
    }

    /// What the scan found.
    pub(crate) fn scan(&self) -> &BodyScan {
        &self.scan
    }

    /// Who the bytes are, when what they give is remembered (see [`RawBody::push_resource`]).
    pub(crate) fn digest(&self) -> Option<crate::protocol::body_cache::Digest> {
        self.digest
    }

    /// Whether the body's `metadata.annotations[DEBUG_ANNOTATION]` is the string
    /// `"true"`, as [`struct_debug_annotation`] finds it on the decoded Struct.
    pub(crate) fn debug_annotation(&self) -> bool {
        if !self.present {
            return false;
        }
        if !self.scan.exact {
            return self.scan.debug;
        }
        let s = self.to_struct().ok().flatten();
        s.as_ref().is_some_and(struct_debug_annotation)
    }

    /// The string at `path` (object keys) in the body; `""` when missing or not a string.
    pub(crate) fn str_at(&self, path: &[&str]) -> std::borrow::Cow<'_, str> {
        use std::borrow::Cow;
        if !self.present {
            return Cow::Borrowed("");
        }
        if !self.scan.exact {
            return Cow::Borrowed(str_in_struct(&self.bytes, path).unwrap_or(""));
        }
        // The exact path: decode, then take the string out (the decoded body is not kept).
        let Some(mut s) = self.to_struct().ok().flatten() else {
            return Cow::Borrowed("");
        };
        let Some((last, parents)) = path.split_last() else {
            return Cow::Borrowed("");
        };
        for key in parents {
            s = match s.fields.remove(*key).and_then(|v| v.kind) {
                Some(Kind::StructValue(inner)) => inner,
                _ => return Cow::Borrowed(""),
            };
        }
        match s.fields.remove(*last).and_then(|v| v.kind) {
            Some(Kind::StringValue(x)) => Cow::Owned(x),
            _ => Cow::Borrowed(""),
        }
    }
}

/// The kind of a Struct entry's value (a `google.protobuf.Value`), with its string or bool
/// (what decoding the step's input reads).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum EntryKind<'a> {
    /// No kind, or `null_value`.
    Null,
    Number,
    String(&'a str),
    Bool(bool),
    Struct,
    List,
}

impl<'a> EntryKind<'a> {
    /// The kind of a decoded value.
    pub(crate) fn of(v: &'a prost_types::Value) -> EntryKind<'a> {
        match &v.kind {
            None | Some(Kind::NullValue(_)) => EntryKind::Null,
            Some(Kind::NumberValue(_)) => EntryKind::Number,
            Some(Kind::StringValue(s)) => EntryKind::String(s),
            Some(Kind::BoolValue(b)) => EntryKind::Bool(*b),
            Some(Kind::StructValue(_)) => EntryKind::Struct,
            Some(Kind::ListValue(_)) => EntryKind::List,
        }
    }
}

/// Whether a decoded body carries the debug annotation ([`DEBUG_ANNOTATION`]) set to
/// `"true"` (what the scan finds in a body's bytes).
pub fn struct_debug_annotation(body: &prost_types::Struct) -> bool {
    let ann = struct_field(body, "metadata").and_then(|m| struct_field(m, "annotations"));
    matches!(
        ann.and_then(|a| a.fields.get(DEBUG_ANNOTATION)).and_then(|v| v.kind.as_ref()),
        Some(Kind::StringValue(s)) if s == "true"
    )
}

fn struct_field<'a>(s: &'a prost_types::Struct, key: &str) -> Option<&'a prost_types::Struct> {
    match s.fields.get(key).and_then(|v| v.kind.as_ref()) {
        Some(Kind::StructValue(x)) => Some(x),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `utf8` decides as `std::str::from_utf8` for every length around its word checks,
    /// with a non-ASCII byte (or a whole character) at every position.
    #[test]
    fn utf8_is_stds() {
        let mut tried = 0;
        for n in 0..40 {
            let base = vec![b'a'; n];
            assert!(utf8(&base));
            for at in 0..n {
                for byte in [0x7f, 0x80, 0xbf, 0xc3, 0xe2, 0xf0, 0xff] {
                    let mut b = base.clone();
                    b[at] = byte;
                    assert_eq!(utf8(&b), std::str::from_utf8(&b).is_ok(), "{b:?}");
                    tried += 1;
                }
                for ch in ["é", "€", "😀"] {
                    let mut b = base.clone();
                    b.splice(at..at, ch.bytes());
                    assert!(utf8(&b), "{b:?}");
                    // cut short: no longer UTF-8
                    b.remove(at + ch.len() - 1);
                    assert!(!utf8(&b), "{b:?}");
                }
            }
        }
        assert!(tried > 5000);
    }

    /// `Rd::varint` reads what prost's `decode_varint` reads (value, bytes used, errors),
    /// one- and two-byte forms included, non-canonical ones too.
    #[test]
    fn varint_is_prosts() {
        let mut inputs: Vec<Vec<u8>> = vec![
            vec![],
            vec![0x80],
            vec![0x80, 0x00],
            vec![0xff, 0x7f],
            vec![0x80, 0x80, 0x00],
            vec![0xff; 10],
            [vec![0xff; 9], vec![0x01]].concat(),
            [vec![0xff; 9], vec![0x02]].concat(),
            [vec![0x80; 10], vec![0x00]].concat(),
        ];
        for v in [0u64, 1, 127, 128, 300, 16_383, 16_384, 1 << 35, u64::MAX] {
            let mut b = Vec::new();
            prost::encoding::encode_varint(v, &mut b);
            inputs.push(b.clone());
            b.push(0x05);
            inputs.push(b);
        }
        for b in inputs {
            let mut ours = Rd(&b);
            let mut theirs: &[u8] = &b;
            let a = ours.varint().ok();
            let p = prost::encoding::decode_varint(&mut theirs).ok();
            assert_eq!(a, p, "{b:?}");
            if a.is_some() {
                assert_eq!(ours.0.len(), theirs.len(), "{b:?}");
            }
        }
    }
}
