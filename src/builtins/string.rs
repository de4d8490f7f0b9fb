//! Built-in functions: strings (cty stdlib and Terraform 1.5.7 `lang/funcs`). Lengths,
//! offsets and reversal work on grapheme clusters like cty; case mapping is Go's per-rune
//! mapping; regular expressions are RE2 (Go `regexp`) run on the `regex` crate, with Go's
//! ASCII meaning of `\d \w \s \b` and Go's error texts.

use super::collection::to_int;
use super::{FuncDef, FuncError, str_arg};
use crate::text::unicode::{self, graphemes};
use crate::value::{Str, Type, Value};
use regex::Regex;
use std::borrow::Cow;
use std::sync::Arc;

/// Largest string a function may build (a guard against `indent(1e9, ...)`-style bombs).
const MAX_RESULT_BYTES: usize = 64 << 20;

/// A result of `n` bytes is about to be built by `site`: refused past the fixed cap, and
/// charged to the evaluation's string budget first (see [`crate::value::meter`]).
fn result_bytes(site: &'static str, n: usize) -> Result<(), FuncError> {
    // The evaluation's budget first: when it is exceeded the VM stops the evaluation.
    crate::value::meter::bytes(site, n as u64)?;
    if n > MAX_RESULT_BYTES {
        return Err(FuncError::general(format!(
            "the resulting string would be {n} bytes long, more than fn-hcl's limit of {MAX_RESULT_BYTES} for one string"
        )));
    }
    Ok(())
}

/// The string functions.
pub static FUNCS: &[FuncDef] = funcs! {
    chomp(str: String) => |a| map_str(a, |s| s.trim_end_matches(['\r', '\n']).to_string()),
    endswith(str: String, suffix: String) => |a| str_pred(a, |s, x| s.ends_with(x)),
    indent(spaces: Number, str: String),
    join(separator: String, ..lists: List(String)),
    lower(str: String) => |a| LOWER.call(a),
    regex(pattern: String, string: String) => regex_fn,
    regexall(pattern: String, string: String),
    replace(str: String, substr: String, replace: String),
    split(separator: String, str: String),
    startswith(str: String, prefix: String) => |a| str_pred(a, |s, x| s.starts_with(x)),
    strcontains(str: String, substr: String) => |a| str_pred(a, |s, x| s.contains(x)),
    strrev(str: String) => |a| map_cow(a, strrev_str),
    substr(str: String, offset: Number, length: Number),
    title(str: String) => |a| map_cow(a, title_str),
    trim(str: String, cutset: String),
    trimprefix(str: String, prefix: String),
    trimsuffix(str: String, suffix: String),
    trimspace(str: String) => |a| map_str(a, |s| s.trim_matches(char::is_whitespace).to_string()),
    upper(str: String) => |a| UPPER.call(a),
};

fn map_str(args: &[Value], f: impl Fn(&str) -> String) -> Result<Value, FuncError> {
    Ok(Value::string(f(str_arg(args, 0)?)))
}

fn str2(
    args: &[Value],
    f: impl Fn(&str, &str) -> Result<Value, FuncError>,
) -> Result<Value, FuncError> {
    f(str_arg(args, 0)?, str_arg(args, 1)?)
}

fn str_pred(args: &[Value], f: impl Fn(&str, &str) -> bool) -> Result<Value, FuncError> {
    str2(args, |a, b| Ok(Value::Bool(f(a, b))))
}

fn trim(args: &[Value]) -> Result<Value, FuncError> {
    str2(args, |s, cut| {
        let set: Vec<char> = cut.chars().collect();
        Ok(Value::string(s.trim_matches(set.as_slice())))
    })
}

fn trimprefix(args: &[Value]) -> Result<Value, FuncError> {
    str2(args, |s, p| {
        Ok(Value::string(s.strip_prefix(p).unwrap_or(s)))
    })
}

fn trimsuffix(args: &[Value]) -> Result<Value, FuncError> {
    str2(args, |s, p| {
        Ok(Value::string(s.strip_suffix(p).unwrap_or(s)))
    })
}

/// A string function whose result may be its argument unchanged (`Cow::Borrowed` of the
/// whole argument): the argument's value is then returned as is, without a copy.
fn map_cow(args: &[Value], f: impl Fn(&str) -> Cow<'_, str>) -> Result<Value, FuncError> {
    let s = str_arg(args, 0)?;
    Ok(match f(s) {
        // Only ASCII comes back borrowed, and ASCII is its own normal form.
        Cow::Borrowed(b) if b.len() == s.len() => args[0].clone(),
        Cow::Borrowed(b) => Value::string(b),
        Cow::Owned(o) => Value::string(o),
    })
}

// The functions that count grapheme clusters or change case have two paths: the general
// one (cty's: clusters from go-textseg's rules, Go's per-rune case tables) and a fast one
// for ASCII (without CR for the cluster counters, see `unicode::bytes_are_clusters`),
// where they agree byte for byte; tests/string_fast_paths.rs checks it over the
// conformance corpus's strings and generated ones (ASCII, combining marks, emoji, CJK).

/// `upper` or `lower`: Go's per-rune case tables in general (`general`); for ASCII a
/// byte mapping (`ascii`), and a string with no byte it `changes` is its own result. One
/// definition serves the builtin ([`CaseMap::call`]) and the differential test's
/// [`upper_str`] and [`lower_str`].
struct CaseMap {
    changes: fn(&u8) -> bool,
    ascii: fn(&mut str),
    general: fn(&str) -> String,
    /// The first and last letter the mapping changes (`a`, `z` for upper), for
    /// [`flip_case_bits`].
    letters: (u8, u8),
}

const UPPER: CaseMap = CaseMap {
    changes: u8::is_ascii_lowercase,
    ascii: str::make_ascii_uppercase,
    general: upper_general,
    letters: (b'a', b'z'),
};

const LOWER: CaseMap = CaseMap {
    changes: u8::is_ascii_uppercase,
    ascii: str::make_ascii_lowercase,
    general: lower_general,
    letters: (b'A', b'Z'),
};

/// The bytes of an inline ASCII string ([`Str::inline_bits`]: each below 0x80, zero past
/// the string) with the case bit (0x20) of each letter from `lo` to `hi` flipped, all
/// sixteen at once: `upper`'s and `lower`'s ASCII mapping of a short string (a name, a
/// tier, a label) without copying it to a buffer and back. A byte plus `0x80 - lo` has
/// its high bit set exactly when it is at least `lo`, and stays below 0x100 (no carry
/// into the next byte); likewise for `hi + 1`. Of other bytes the answer means nothing,
/// but only case bits ever change: its high bits are the input's, so the string it
/// makes is ASCII exactly when the input was ([`Str::inline_ascii`] tells).
fn flip_case_bits(bits: u128, (lo, hi): (u8, u8)) -> u128 {
    const ONES: u128 = u128::from_ne_bytes([1; 16]);
    const HIGH: u128 = ONES * 0x80;
    let at_least_lo = bits + ONES * u128::from(0x80 - lo);
    let past_hi = bits + ONES * u128::from(0x80 - (hi + 1));
    let letters = at_least_lo & !past_hi & HIGH;
    bits ^ (letters >> 2)
}

/// Which path of a [`CaseMap`] a string takes.
enum CasePath {
    /// ASCII with no byte the mapping changes: the string is its own result.
    Same,
    /// ASCII that changes: the byte mapping.
    Ascii,
    /// Anything else: the per-rune tables.
    General,
}

impl CaseMap {
    fn path(&self, s: &str) -> CasePath {
        if !s.is_ascii() {
            CasePath::General
        } else if s.as_bytes().iter().any(self.changes) {
            CasePath::Ascii
        } else {
            CasePath::Same
        }
    }

    /// The mapping of `s`, borrowed when it is its own result.
    fn cow<'a>(&self, s: &'a str) -> Cow<'a, str> {
        match self.path(s) {
            CasePath::Same => Cow::Borrowed(s),
            CasePath::Ascii => {
                let mut o = s.to_owned();
                (self.ascii)(&mut o);
                Cow::Owned(o)
            }
            CasePath::General => Cow::Owned((self.general)(s)),
        }
    }

    /// The builtin: the argument itself when it is its own result; ASCII that changes
    /// mapped in the shared buffer, so a short result is built inline and a long one
    /// allocated once (a `String` first took one allocation more, and one for a short
    /// result too).
    fn call(&self, args: &[Value]) -> Result<Value, FuncError> {
        // An inline ASCII string: mapped as one number, its own result if nothing changed
        // (`inline_ascii` refuses the mapping of any other, which takes the paths below).
        if let Some(Value::String(s)) = args.first()
            && let Some((bits, len)) = s.inline_bits()
        {
            let mapped = flip_case_bits(bits, self.letters);
            if let Some(out) = Str::inline_ascii(mapped, len) {
                return Ok(if mapped == bits {
                    args[0].clone()
                } else {
                    Value::String(out)
                });
            }
        }
        let s = str_arg(args, 0)?;
        match self.path(s) {
            CasePath::Same => Ok(args[0].clone()),
            CasePath::Ascii => super::string_in_buffer(|out| {
                out.push_str(s);
                (self.ascii)(out);
                Ok(())
            }),
            CasePath::General => Ok(Value::string((self.general)(s))),
        }
    }
}

/// `upper`: Go's `unicode.ToUpper` per rune (see [`CaseMap`]).
pub fn upper_str(s: &str) -> Cow<'_, str> {
    UPPER.cow(s)
}

/// The general path (see above), public for the differential test.
pub fn upper_general(s: &str) -> String {
    s.chars().map(unicode::to_upper).collect()
}

/// `lower`: as [`upper_str`], with `unicode.ToLower`.
pub fn lower_str(s: &str) -> Cow<'_, str> {
    LOWER.cow(s)
}

/// The general path (see above), public for the differential test.
pub fn lower_general(s: &str) -> String {
    s.chars().map(unicode::to_lower).collect()
}

/// `title`: Go's (deprecated) `strings.Title`, which cty uses; for ASCII a byte loop.
pub fn title_str(s: &str) -> Cow<'_, str> {
    if !s.is_ascii() {
        return Cow::Owned(title_general(s));
    }
    let starts_word = |prev: u8| !(prev.is_ascii_alphanumeric() || prev == b'_');
    let mut prev = b' ';
    let mut out: Option<Vec<u8>> = None;
    for (i, &b) in s.as_bytes().iter().enumerate() {
        if starts_word(prev) && b.is_ascii_lowercase() {
            out.get_or_insert_with(|| s.as_bytes().to_vec())[i] = b.to_ascii_uppercase();
        }
        prev = b;
    }
    match out {
        // Only ASCII bytes were replaced by ASCII bytes.
        Some(v) => Cow::Owned(String::from_utf8(v).unwrap_or_default()),
        None => Cow::Borrowed(s),
    }
}

/// The general path (see above), public for the differential test.
pub fn title_general(s: &str) -> String {
    fn is_separator(r: char) -> bool {
        if r.is_ascii() {
            return !(r.is_ascii_alphanumeric() || r == '_');
        }
        if unicode::is_letter_or_digit(r) {
            return false;
        }
        r.is_whitespace()
    }
    let mut prev = ' ';
    s.chars()
        .map(|r| {
            let out = if is_separator(prev) {
                unicode::to_title(r)
            } else {
                r
            };
            prev = r;
            out
        })
        .collect()
}

/// `strrev`: the grapheme clusters in reverse order; bytes when each is one.
pub fn strrev_str(s: &str) -> Cow<'_, str> {
    if s.len() < 2 {
        return Cow::Borrowed(s);
    }
    if unicode::bytes_are_clusters(s) {
        let mut v = s.as_bytes().to_vec();
        v.reverse();
        // ASCII reversed is ASCII.
        return Cow::Owned(String::from_utf8(v).unwrap_or_default());
    }
    Cow::Owned(strrev_general(s))
}

/// The general path (see above), public for the differential test.
pub fn strrev_general(s: &str) -> String {
    let mut clusters: Vec<&str> = graphemes(s).collect();
    clusters.reverse();
    clusters.concat()
}

fn indent(args: &[Value]) -> Result<Value, FuncError> {
    let n = args
        .first()
        .and_then(Value::as_number)
        .ok_or_else(|| FuncError::arg(0, "number required"))?;
    let spaces = to_int(n).map_err(FuncError::general)?;
    let s = str_arg(args, 1)?;
    let Ok(spaces) = usize::try_from(spaces) else {
        return Err(FuncError::general(
            "panic in function implementation: strings: negative Repeat count",
        ));
    };
    let lines = s.matches('\n').count();
    result_bytes(
        "indent",
        spaces.saturating_mul(lines).saturating_add(s.len()),
    )?;
    if lines == 0 {
        // Nothing to pad: the padding (charged only per line) is never built.
        return Ok(Value::string(s));
    }
    let pad = format!("\n{}", " ".repeat(spaces));
    Ok(Value::string(s.replace('\n', &pad)))
}

fn join(args: &[Value]) -> Result<Value, FuncError> {
    let sep = str_arg(args, 0)?;
    let lists = &args[1..];
    if lists.is_empty() {
        return Err(FuncError::general("at least one list is required"));
    }
    // Checked and measured first, then built once at its exact size.
    let (mut count, mut len) = (0usize, 0usize);
    for (ai, list) in lists.iter().enumerate() {
        let elems = list.as_seq().unwrap_or(&[]);
        for (ei, v) in elems.iter().enumerate() {
            match v {
                Value::String(s) => {
                    count += 1;
                    len = len.saturating_add(s.len());
                }
                _ if lists.len() > 1 => {
                    return Err(FuncError::arg(
                        ai + 1,
                        format!(
                            "element {ei} of list {} is null; cannot concatenate null values",
                            ai + 1
                        ),
                    ));
                }
                _ => {
                    return Err(FuncError::arg(
                        ai + 1,
                        format!("element {ei} is null; cannot concatenate null values"),
                    ));
                }
            }
        }
    }
    let len = len.saturating_add(sep.len().saturating_mul(count.saturating_sub(1)));
    result_bytes("join", len)?;
    // Loops over the lists as they are (a chain of adapters took ~60 instructions a
    // string); every element is a string (checked above).
    super::string_in_buffer(|out| {
        out.reserve(len);
        let mut first = true;
        for list in lists {
            for v in list.as_seq().unwrap_or(&[]) {
                if let Value::String(s) = v {
                    if !first {
                        out.push_str(sep);
                    }
                    first = false;
                    out.push_str(s);
                }
            }
        }
        Ok(())
    })
}

fn split(args: &[Value]) -> Result<Value, FuncError> {
    let sep = str_arg(args, 0)?;
    let s = str_arg(args, 1)?;
    // One element a piece, up to one a byte of the string (10 MB split by "" would be ten
    // million strings): counted and charged before any is made.
    let pieces = if sep.is_empty() {
        s.chars().count()
    } else {
        s.matches(sep).count() + 1
    };
    crate::value::meter::elements("split", pieces as u64)?;
    let parts: Vec<Value> = if sep.is_empty() {
        s.chars().map(|c| Value::string(c.to_string())).collect()
    } else {
        s.split(sep).map(Value::string).collect()
    };
    Ok(Value::list(Type::String, parts))
}

fn substr(args: &[Value]) -> Result<Value, FuncError> {
    let s = str_arg(args, 0)?;
    let num = |i: usize| {
        args.get(i)
            .and_then(Value::as_number)
            .ok_or_else(|| FuncError::arg(i, "number required"))
            .and_then(|n| to_int(n).map_err(FuncError::general))
    };
    let offset = num(1)?;
    let length = num(2)?;
    let out = substr_str(s, offset, length);
    if out.len() == s.len() {
        // The whole argument (which is in normal form already).
        return Ok(args[0].clone());
    }
    Ok(Value::string(out))
}

/// `substr` on grapheme clusters, as cty counts them; a slice of `s` (clusters are
/// contiguous), found by byte arithmetic when every byte is a cluster.
pub fn substr_str(s: &str, offset: i64, length: i64) -> &str {
    if unicode::bytes_are_clusters(s) {
        return match substr_clusters(s.len(), offset, length) {
            Some((start, end)) => &s[start..end],
            None => "",
        };
    }
    substr_general(s, offset, length)
}

/// The general path (see above), public for the differential test.
pub fn substr_general(s: &str, offset: i64, length: i64) -> &str {
    let clusters: Vec<&str> = graphemes(s).collect();
    match substr_clusters(clusters.len(), offset, length) {
        Some((start, end)) => {
            let from: usize = clusters[..start].iter().map(|c| c.len()).sum();
            let len: usize = clusters[start..end].iter().map(|c| c.len()).sum();
            &s[from..from + len]
        }
        None => "",
    }
}

/// cty's `substr` on a string of `total` clusters: the range of clusters taken, `None`
/// for the empty string.
fn substr_clusters(total: usize, mut offset: i64, length: i64) -> Option<(usize, usize)> {
    let total_i = i64::try_from(total).unwrap_or(i64::MAX);
    if offset < 0 {
        offset = offset.saturating_add(total_i);
    } else if length == 0 {
        return None;
    }
    // Seek forward `offset` clusters (cty returns "" when the string ends first).
    let start = if offset > 0 {
        if offset > total_i {
            return None;
        }
        offset as usize
    } else {
        0
    };
    let rest = total - start;
    if length < 0 {
        return Some((start, total));
    }
    // cty's loop stops after `length` clusters, or at the end; a length of zero (reachable
    // only with a negative offset) never matches and so takes everything.
    let take = match usize::try_from(length) {
        Ok(0) | Err(_) => rest,
        Ok(n) => n.min(rest),
    };
    Some((start, start + take))
}

/// Go's regexp/syntax error for `pattern` as (code, expr), for the texts Go prints.
///
/// Repetitions follow Go's parser: a repetition operator right after another is "invalid
/// nested repetition operator" (the text from the first through the second), and a
/// `{n,m}` whose nested counts allow more than 1000 copies of the innermost expression is
/// "invalid repeat count" (Go's `repeatIsValid`). For the second, each expression carries
/// its *need*: the least budget of copies it passes `repeatIsValid` with (0 for a literal;
/// `m * max(1, need)` for a repetition of at most `m`; the largest of its parts for a
/// group).
fn go_regex_syntax_error(pattern: &str) -> Option<(&'static str, String)> {
    let chars: Vec<char> = pattern.chars().collect();
    let mut depth = 0usize;
    let mut i = 0;
    let mut prev_repeatable = false;
    // Where the operator just before started, if the last token was a repetition.
    let mut last_repeat: Option<usize> = None;
    // The need of the last expression (what a repetition applies to), of the current
    // group's content so far, and of each enclosing group's content.
    let mut atom = 0u64;
    let mut content = 0u64;
    let mut groups: Vec<u64> = Vec::new();
    // The next `:]` (searched once, forwards: linear in the pattern, whatever its `[:`s).
    let mut colon_bracket = None;
    while i < chars.len() {
        let c = chars[i];
        let after_repeat = last_repeat.take();
        // Most tokens are expressions of need 0; a repetition or `)` sets its own.
        if !matches!(c, '*' | '+' | '?' | '{' | ')' | '(' | '|') {
            atom = 0;
        }
        match c {
            '\\' => {
                if i + 1 >= chars.len() {
                    return Some(("trailing backslash at end of expression", String::new()));
                }
                if chars[i + 1] == 'Q' {
                    // \Q...\E literal text.
                    i += 2;
                    while i < chars.len() && !(chars[i] == '\\' && chars.get(i + 1) == Some(&'E')) {
                        i += 1;
                    }
                    i += 2;
                    prev_repeatable = true;
                    continue;
                }
                let e = chars[i + 1];
                if !e.is_ascii() || (e.is_ascii_alphanumeric() && !GO_ESCAPES.contains(e)) {
                    return Some(("invalid escape sequence", format!("\\{e}")));
                }
                let octal = |c: Option<&char>| c.is_some_and(|c| ('0'..='7').contains(c));
                let len = match e {
                    // Go: a lone `\1`..`\7` is a backreference, refused as an invalid
                    // escape; followed by an octal digit it is an octal escape.
                    '1'..='7' if !octal(chars.get(i + 2)) => {
                        return Some(("invalid escape sequence", format!("\\{e}")));
                    }
                    '0'..='7' => {
                        let mut n = 2;
                        while n < 4 && octal(chars.get(i + n)) {
                            n += 1;
                        }
                        n
                    }
                    'x' => match hex_escape(&chars[i + 2..]) {
                        Ok(n) => 2 + n,
                        Err(n) => {
                            let text: String =
                                chars[i..(i + 2 + n).min(chars.len())].iter().collect();
                            return Some(("invalid escape sequence", text));
                        }
                    },
                    _ => 2,
                };
                i += len;
                prev_repeatable = true;
                continue;
            }
            '{' => {
                if let Some((len, min, max)) = repeat_braces(&chars[i..]) {
                    let text: String = chars[i..i + len].iter().collect();
                    if min > 1000 || max.is_some_and(|m| m > 1000 || m < min) {
                        return Some(("invalid repeat count", text));
                    }
                    let mut end = i + len;
                    if chars.get(end) == Some(&'?') {
                        end += 1;
                    }
                    if let Some(e) = repetition_error(&chars, i..end, after_repeat, prev_repeatable)
                    {
                        return Some(e);
                    }
                    // Go's repeatIsValid(re, 1000), run for counts of 2 or more.
                    atom = match max.unwrap_or(min) {
                        _ if max == Some(0) => 0,
                        0 => atom,
                        m => m.saturating_mul(atom.max(1)),
                    };
                    if (min >= 2 || max.is_some_and(|m| m >= 2)) && atom > 1000 {
                        return Some(("invalid repeat count", text));
                    }
                    content = content.max(atom);
                    last_repeat = Some(i);
                    i = end;
                    prev_repeatable = false;
                    continue;
                }
                atom = 0;
                prev_repeatable = true;
            }
            '[' => {
                let start = i;
                i += 1;
                if i < chars.len() && chars[i] == '^' {
                    i += 1;
                }
                let mut first = true;
                let mut closed = false;
                while i < chars.len() {
                    match chars[i] {
                        ']' if !first => {
                            closed = true;
                            break;
                        }
                        lo if chars.get(i + 1) == Some(&'-')
                            && chars.get(i + 2).is_some_and(|&c| c != ']' && c != '\\')
                            && lo != '\\'
                            && lo != '[' =>
                        {
                            let hi = chars[i + 2];
                            if hi < lo {
                                return Some((
                                    "invalid character class range",
                                    format!("{lo}-{hi}"),
                                ));
                            }
                            i += 3;
                        }
                        '\\' => i += 2,
                        '[' if chars.get(i + 1) == Some(&':') => {
                            match next_colon_bracket(&chars, i + 2, &mut colon_bracket) {
                                Some(p) => {
                                    // Go's parseNamedClass: `[:name:]` must be a POSIX class.
                                    let name: String = chars[i..p + 2].iter().collect();
                                    if !is_posix_class(&name) {
                                        return Some(("invalid character class range", name));
                                    }
                                    i = p + 2;
                                }
                                None => i += 1,
                            }
                        }
                        _ => i += 1,
                    }
                    first = false;
                }
                if !closed {
                    return Some(("missing closing ]", chars[start..].iter().collect()));
                }
                i += 1;
                prev_repeatable = true;
                continue;
            }
            '(' => {
                if chars.get(i + 1) == Some(&'?') {
                    let starts = |s: &str| {
                        let n = s.chars().count();
                        chars.len() >= i + n && chars[i..i + n].iter().copied().eq(s.chars())
                    };
                    for look in ["(?=", "(?!", "(?<=", "(?<!"] {
                        if starts(look) {
                            return Some(("invalid or unsupported Perl syntax", look.to_string()));
                        }
                    }
                    // Skip the group header: `(?flags)`, `(?flags:`, `(?P<name>`, `(?<name>`.
                    // Only name and flag characters belong to it, so the scan stays short.
                    let mut j = i + 2;
                    while j < chars.len()
                        && (chars[j].is_alphanumeric() || matches!(chars[j], '_' | '-' | '<'))
                    {
                        j += 1;
                    }
                    if !matches!(chars.get(j), Some(')' | ':' | '>')) {
                        // Not a header Go accepts: the regex crate reports it.
                        depth += 1;
                        groups.push(content);
                        content = 0;
                        prev_repeatable = false;
                        i = j;
                        continue;
                    }
                    if chars.get(j) == Some(&')') {
                        i = j + 1;
                        prev_repeatable = false;
                        continue;
                    }
                    depth += 1;
                    groups.push(content);
                    content = 0;
                    prev_repeatable = false;
                    i = j + 1;
                    continue;
                }
                depth += 1;
                groups.push(content);
                content = 0;
                prev_repeatable = false;
            }
            ')' => {
                if depth == 0 {
                    return Some(("unexpected )", pattern.to_string()));
                }
                depth -= 1;
                atom = content;
                content = groups.pop().unwrap_or(0).max(atom);
                prev_repeatable = true;
            }
            '*' | '+' | '?' => {
                let mut end = i + 1;
                if chars.get(end) == Some(&'?') {
                    end += 1;
                }
                if let Some(e) = repetition_error(&chars, i..end, after_repeat, prev_repeatable) {
                    return Some(e);
                }
                // Not an OpRepeat: its need is its operand's.
                last_repeat = Some(i);
                i = end;
                prev_repeatable = false;
                continue;
            }
            '|' => prev_repeatable = false,
            _ => prev_repeatable = true,
        }
        i += 1;
    }
    if depth > 0 {
        return Some(("missing closing )", pattern.to_string()));
    }
    None
}

/// Go's refusals of the repetition operator `chars[op]` (its lazy `?` included): right
/// after another one (which started at `after_repeat`), a nested repetition (the text of
/// both); with nothing before it to repeat, a missing argument.
fn repetition_error(
    chars: &[char],
    op: std::ops::Range<usize>,
    after_repeat: Option<usize>,
    repeatable: bool,
) -> Option<(&'static str, String)> {
    if let Some(start) = after_repeat {
        let text = chars[start..op.end].iter().collect();
        return Some(("invalid nested repetition operator", text));
    }
    if !repeatable {
        let text = chars[op].iter().collect();
        return Some(("missing argument to repetition operator", text));
    }
    None
}

/// The index of the first `:]` at or after `from`. `cache` holds the last search (where
/// it started, what it found), so a pattern's searches, which go forwards, scan it once.
fn next_colon_bracket(
    chars: &[char],
    from: usize,
    cache: &mut Option<(usize, Option<usize>)>,
) -> Option<usize> {
    match *cache {
        Some((_, Some(p))) if p >= from => return Some(p),
        Some((start, None)) if start <= from => return None,
        _ => {}
    }
    let found =
        (from..chars.len().saturating_sub(1)).find(|&k| chars[k] == ':' && chars[k + 1] == ']');
    *cache = Some((from, found));
    found
}

/// Go's POSIX character classes (`posixGroup`), as `[:name:]` or `[:^name:]`.
fn is_posix_class(text: &str) -> bool {
    const NAMES: [&str; 14] = [
        "alnum", "alpha", "ascii", "blank", "cntrl", "digit", "graph", "lower", "print", "punct",
        "space", "upper", "word", "xdigit",
    ];
    text.strip_prefix("[:")
        .and_then(|t| t.strip_suffix(":]"))
        .map(|n| n.strip_prefix('^').unwrap_or(n))
        .is_some_and(|n| NAMES.contains(&n))
}

/// Go's `\\x` escape after the `x`: `{hex+}` (at most U+10FFFF) or two hex digits. Ok is
/// the length taken; Err the length Go had read when it gave up (its error's text).
fn hex_escape(cs: &[char]) -> Result<usize, usize> {
    let hex = |c: &char| c.to_digit(16);
    match cs.first() {
        None => Err(0),
        Some('{') => {
            let mut v: u32 = 0;
            let mut n = 1;
            loop {
                let Some(c) = cs.get(n) else { return Err(n) };
                n += 1;
                if *c == '}' {
                    return if n == 2 { Err(n) } else { Ok(n) };
                }
                match hex(c) {
                    Some(d) if v <= 0x10FFFF => {
                        v = v * 16 + d;
                        if v > 0x10FFFF {
                            return Err(n);
                        }
                    }
                    _ => return Err(n),
                }
            }
        }
        Some(c) => match (hex(c), cs.get(1)) {
            (Some(_), Some(d)) if hex(d).is_some() => Ok(2),
            (_, None) => Err(1),
            _ => Err(2),
        },
    }
}

/// Letters and digits Go's RE2 parser accepts after a backslash.
const GO_ESCAPES: &str = "01234567afnrtvxpPdDsSwWbBAzQE";

/// A `{n}`, `{n,}` or `{n,m}` repetition at the start of `cs`: (length, n, m).
fn repeat_braces(cs: &[char]) -> Option<(usize, u64, Option<u64>)> {
    // Only digits and one comma may stand between the braces (Go's parseRepeat stops at
    // anything else): no scan of the rest of the pattern for a `}`.
    let close = cs
        .iter()
        .skip(1)
        .position(|&c| !(c.is_ascii_digit() || c == ','))
        .map(|p| p + 1)
        .filter(|&p| cs[p] == '}')?;
    let body: String = cs[1..close].iter().collect();
    let num = |t: &str| -> Option<u64> {
        // Go's parseInt: digits, no leading zero (`{01}` is literal text).
        if t.is_empty()
            || !t.bytes().all(|b| b.is_ascii_digit())
            || t.len() > 1 && t.starts_with('0')
        {
            return None;
        }
        Some(t.parse::<u64>().unwrap_or(u64::MAX))
    };
    let (min, max) = match body.split_once(',') {
        None => {
            let n = num(&body)?;
            (n, Some(n))
        }
        Some((a, "")) => (num(a)?, None),
        Some((a, b)) => (num(a)?, Some(num(b)?)),
    };
    Some((close + 1, min, max))
}

/// Rewrite an RE2 pattern for the `regex` crate: Go's `\d \w \s \b` are ASCII-only and Go
/// supports `\Q...\E` literal runs.
fn translate_pattern(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len() + 8);
    let mut it = pattern.chars().peekable();
    while let Some(c) = it.next() {
        if c == '{' {
            // A brace that does not open a Go repetition is a literal (the regex crate
            // refuses it).
            let mut ahead = vec!['{'];
            for d in it.clone() {
                ahead.push(d);
                if !(d.is_ascii_digit() || d == ',') {
                    break;
                }
            }
            out.push_str(if repeat_braces(&ahead).is_some() {
                "{"
            } else {
                "\\{"
            });
            continue;
        }
        if c != '\\' {
            out.push(c);
            continue;
        }
        match it.next() {
            Some('d') => out.push_str("[0-9]"),
            Some('D') => out.push_str("[^0-9]"),
            Some('w') => out.push_str("[0-9A-Za-z_]"),
            Some('W') => out.push_str("[^0-9A-Za-z_]"),
            Some('s') => out.push_str("[\\t\\n\\f\\r ]"),
            Some('S') => out.push_str("[^\\t\\n\\f\\r ]"),
            Some('b') => out.push_str("(?-u:\\b)"),
            Some('B') => out.push_str("(?-u:\\B)"),
            Some('Q') => {
                let mut lit = String::new();
                while let Some(x) = it.next() {
                    if x == '\\' && it.peek() == Some(&'E') {
                        it.next();
                        break;
                    }
                    lit.push(x);
                }
                out.push_str(&regex::escape(&lit));
            }
            // Go's octal escapes (`\\0`, `\\012`); the syntax check let only valid ones by.
            Some(d @ '0'..='7') => {
                let mut v = d.to_digit(8).unwrap_or(0);
                for _ in 0..2 {
                    match it.peek().and_then(|c| c.to_digit(8)) {
                        Some(x) => {
                            v = v * 8 + x;
                            it.next();
                        }
                        None => break,
                    }
                }
                out.push_str(&format!("\\x{{{v:x}}}"));
            }
            // Escaped punctuation is always itself in Go (`\\<` is not a word boundary).
            Some(x) if x.is_ascii_punctuation() => out.push_str(&regex::escape(&x.to_string())),
            Some(x) => {
                out.push('\\');
                out.push(x);
            }
            None => out.push('\\'),
        }
    }
    out
}

/// Compile an RE2 pattern; the error is (Go code, Go expr) or the engine's own text.
/// Compiled patterns shared by every evaluation of the process: a `regexall` in a template
/// of 500 resources compiled its constant pattern 500 times per request (60% of that
/// workload's time). Bounded in entries and in what an entry may hold, so a program of
/// many or large patterns cannot make it grow: those are compiled for the call only.
struct PatternCache {
    /// (pattern as written, compiled, last use); at most [`PatternCache::ENTRIES`].
    entries: Vec<(Box<str>, Arc<Regex>, u64)>,
    clock: u64,
}

impl PatternCache {
    const ENTRIES: usize = 16;
    /// Patterns longer than this are not kept.
    const PATTERN_BYTES: usize = 1024;
    /// A kept pattern compiles within this size, and its lazy DFA's cache (per thread
    /// using it) stays within it too: the cache holds at most a few tens of MiB.
    const COMPILED_BYTES: usize = 1 << 20;

    fn get(&mut self, pattern: &str) -> Option<Arc<Regex>> {
        self.clock += 1;
        let e = self.entries.iter_mut().find(|e| &*e.0 == pattern)?;
        e.2 = self.clock;
        Some(e.1.clone())
    }

    fn put(&mut self, pattern: &str, re: Arc<Regex>) {
        if self.entries.len() >= Self::ENTRIES {
            let oldest = (0..self.entries.len()).min_by_key(|&i| self.entries[i].2);
            if let Some(i) = oldest {
                self.entries.swap_remove(i);
            }
        }
        self.entries.push((pattern.into(), re, self.clock));
    }
}

static PATTERNS: std::sync::Mutex<PatternCache> = std::sync::Mutex::new(PatternCache {
    entries: Vec::new(),
    clock: 0,
});

/// A pattern compiled as Go's RE2 syntax reads it (see [`translate_pattern`]), from
/// [`PATTERNS`] when it was compiled before; the error is Go's code and expression.
fn compile(pattern: &str) -> Result<Arc<Regex>, (String, String)> {
    let cacheable = pattern.len() <= PatternCache::PATTERN_BYTES;
    if cacheable && let Some(re) = PATTERNS.lock().ok().and_then(|mut c| c.get(pattern)) {
        return Ok(re);
    }
    if let Some((code, expr)) = go_regex_syntax_error(pattern) {
        return Err((code.to_string(), expr));
    }
    let translated = translate_pattern(pattern);
    let mut builder = regex::RegexBuilder::new(&translated);
    let kept = builder
        .size_limit(PatternCache::COMPILED_BYTES)
        .dfa_size_limit(PatternCache::COMPILED_BYTES);
    let once = match cacheable.then(|| kept.build()) {
        Some(Ok(re)) => {
            let re = Arc::new(re);
            if let Ok(mut c) = PATTERNS.lock() {
                c.put(pattern, re.clone());
            }
            return Ok(re);
        }
        // Too large to keep: compiled for this call within the larger bound. Any other
        // error is the pattern's own, compiled once.
        Some(Err(regex::Error::CompiledTooBig(_))) | None => regex::RegexBuilder::new(&translated)
            .size_limit(32 << 20)
            .build(),
        Some(Err(e)) => Err(e),
    };
    once.map(Arc::new).map_err(|e| {
        let msg = match e {
            regex::Error::Syntax(s) => s.lines().last().unwrap_or("").trim().to_string(),
            other => other.to_string(),
        };
        (msg, pattern.to_string())
    })
}

/// The result shape of a pattern, as cty's `regexPatternResultType`.
enum Shape {
    Whole,
    Tuple(usize),
    Object(Vec<(Str, usize)>),
}

fn pattern_shape(pattern: &str) -> Result<(Arc<Regex>, Shape), FuncError> {
    let re = compile(pattern).map_err(|(code, expr)| {
        FuncError::arg(0, format!("invalid regexp pattern: {code} in {expr}"))
    })?;
    let mut named: Vec<(Str, usize)> = Vec::new();
    let mut unnamed = 0;
    for (i, name) in re.capture_names().enumerate().skip(1) {
        match name {
            Some(n) => named.push((Str::from(n), i)),
            None => unnamed += 1,
        }
    }
    let shape = match (unnamed, named.is_empty()) {
        (0, true) => Shape::Whole,
        (u, false) if u > 0 => {
            return Err(FuncError::arg(
                0,
                "invalid regexp pattern: cannot mix both named and unnamed capture groups",
            ));
        }
        (u, true) => Shape::Tuple(u),
        _ => {
            named.sort_by(|a, b| a.0.cmp(&b.0));
            Shape::Object(named)
        }
    };
    Ok((re, shape))
}

fn shape_type(shape: &Shape) -> Type {
    match shape {
        Shape::Whole => Type::String,
        Shape::Tuple(n) => Type::tuple(vec![Type::String; *n]),
        Shape::Object(names) => Type::object(names.iter().map(|(n, _)| (n.clone(), Type::String))),
    }
}

/// The value of one match, charged to the evaluation's budgets before it is built: a
/// pattern of many groups makes each match many elements, and nested groups copy the
/// same text many times (`regexall("(((...)))", s)`), far more than the string holds.
fn capture_value(
    site: &'static str,
    caps: &regex::Captures<'_>,
    shape: &Shape,
) -> Result<Value, FuncError> {
    let (elements, bytes) = match shape {
        Shape::Whole => (0, caps.get(0).map_or(0, |m| m.len())),
        Shape::Tuple(n) => (
            *n,
            (1..=*n).filter_map(|i| caps.get(i)).map(|m| m.len()).sum(),
        ),
        Shape::Object(names) => (
            names.len(),
            names
                .iter()
                .filter_map(|(_, i)| caps.get(*i))
                .map(|m| m.len())
                .sum(),
        ),
    };
    crate::value::meter::elements(site, elements as u64)?;
    crate::value::meter::bytes(site, bytes as u64)?;
    let group = |i: usize| match caps.get(i) {
        Some(m) => Value::string(m.as_str()),
        None => Value::Null(Type::String),
    };
    Ok(match shape {
        Shape::Whole => group(0),
        Shape::Tuple(n) => Value::tuple((1..=*n).map(group).collect()),
        Shape::Object(names) => {
            Value::object(names.iter().map(|(n, i)| (n.clone(), group(*i))).collect())
        }
    })
}

fn regex_fn(args: &[Value]) -> Result<Value, FuncError> {
    let (re, shape) = pattern_shape(str_arg(args, 0)?)?;
    let s = str_arg(args, 1)?;
    match re.captures(s) {
        Some(caps) => capture_value("regex", &caps, &shape),
        None => Err(FuncError::general(
            "pattern did not match any part of the given string",
        )),
    }
}

fn regexall(args: &[Value]) -> Result<Value, FuncError> {
    let (re, shape) = pattern_shape(str_arg(args, 0)?)?;
    let ety = shape_type(&shape);
    let s = str_arg(args, 1)?;
    // Each match is one element of the list, and its value (charged by capture_value).
    let items: Vec<Value> = re
        .captures_iter(s)
        .map(|c| {
            crate::value::meter::elements("regexall", 1)?;
            capture_value("regexall", &c, &shape)
        })
        .collect::<Result<_, _>>()?;
    Ok(Value::list(ety, items))
}

fn replace(args: &[Value]) -> Result<Value, FuncError> {
    let s = str_arg(args, 0)?;
    let sub = str_arg(args, 1)?;
    let rep = str_arg(args, 2)?;
    if sub.len() > 1 && sub.starts_with('/') && sub.ends_with('/') {
        let re = compile(&sub[1..sub.len() - 1]).map_err(|(code, expr)| {
            FuncError::general(format!("error parsing regexp: {code}: `{expr}`"))
        })?;
        // Bound the result before building it: each match is replaced by the replacement,
        // whose every `$` reference is at most the match (matches do not overlap).
        let dollars = rep.matches('$').count();
        let matches = re.find_iter(s).count();
        let worst = s
            .len()
            .saturating_mul(dollars.saturating_add(1))
            .saturating_add(matches.saturating_mul(rep.len()));
        result_bytes("replace", worst)?;
        let out = re.replace_all(s, rep);
        return Ok(Value::string(out.as_ref()));
    }
    let count = if sub.is_empty() {
        s.chars().count() + 1
    } else {
        s.matches(sub).count()
    };
    result_bytes(
        "replace",
        count.saturating_mul(rep.len()).saturating_add(s.len()),
    )?;
    Ok(Value::string(s.replace(sub, rep)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builtins::test_util::{err, n, ok, run, s, str_list as strs};

    /// Every ASCII byte at every place of strings of every inline length (each next to
    /// bytes from all over the table): the one-number mapping of a short string is the
    /// byte mapping's, and its own result exactly when nothing changed.
    #[test]
    fn short_ascii_strings_map_case_as_the_byte_mapping_does() {
        for (map, name) in [(&UPPER, "upper"), (&LOWER, "lower")] {
            for first in 0u8..128 {
                for len in 0..=Str::INLINE {
                    let text: String = (0..len)
                        .map(|k| char::from((first as usize + k * 37) as u8 % 128))
                        .collect();
                    let arg = Value::String(Str::from(text.as_str()));
                    let got = map.call(std::slice::from_ref(&arg)).expect("a string");
                    let mut want = text.clone();
                    (map.ascii)(&mut want);
                    assert_eq!(got.as_str(), Some(want.as_str()), "{name}({text:?})");
                }
            }
            // Short strings that are not ASCII (bytes a carry would corrupt, letters with
            // a case, none) are left to the per-rune mapping.
            for text in [
                "é",
                "aé",
                "ÿz",
                "zÿ",
                "ß",
                "ǅa",
                "日本",
                "ÀÿÀÿÀÿÀ",
                "\u{7f}\u{80}",
            ] {
                let arg = Value::String(Str::from(text));
                let got = map.call(std::slice::from_ref(&arg)).expect("a string");
                let want = (map.general)(text);
                assert_eq!(got.as_str(), Some(want.as_str()), "{name}({text:?})");
            }
        }
    }

    #[test]
    fn patterns_compile_once_and_the_cache_stays_bounded() {
        let a = compile("^v([0-9]+)$").expect("compiles");
        let b = compile("^v([0-9]+)$").expect("compiles");
        assert!(Arc::ptr_eq(&a, &b), "the second call reuses the first's");
        let long = format!("^{}$", "a".repeat(PatternCache::PATTERN_BYTES));
        let (x, y) = (
            compile(&long).expect("compiles"),
            compile(&long).expect("compiles"),
        );
        assert!(
            !Arc::ptr_eq(&x, &y),
            "a long pattern is compiled for its call only"
        );
        for i in 0..100 {
            compile(&format!("^p{i}-[a-z]+$")).expect("compiles");
        }
        let held = PATTERNS
            .lock()
            .map(|c| c.entries.len())
            .unwrap_or(usize::MAX);
        assert!(held <= PatternCache::ENTRIES, "{held}");
        // A pattern too large to keep still works as before (within the 32 MiB limit).
        let big = "[a-z]{1,200}[0-9]{1,200}";
        assert!(compile(big).is_ok());
        // Errors are Go's, on every call.
        for _ in 0..2 {
            assert_eq!(
                compile("a(b").err(),
                Some(("missing closing )".into(), "a(b".into()))
            );
        }
    }

    #[track_caller]
    fn ok_s(name: &str, args: Vec<Value>, want: &str) {
        ok(name, args, s(want));
    }

    #[test]
    fn chomp_and_affixes() {
        ok_s("chomp", vec![s("hello\n")], "hello");
        ok_s("chomp", vec![s("hello\r\n")], "hello");
        ok_s("chomp", vec![s("hello\n\n\n")], "hello");
        ok_s("chomp", vec![s("\n")], "");
        ok("endswith", vec![s("hello"), s("")], Value::Bool(true));
        ok("endswith", vec![s(""), s("x")], Value::Bool(false));
        ok("endswith", vec![s("héllo"), s("llo")], Value::Bool(true));
        ok("startswith", vec![s("hello"), s("HE")], Value::Bool(false));
        ok("startswith", vec![s(""), s("")], Value::Bool(true));
        ok("strcontains", vec![s("hello"), s("ell")], Value::Bool(true));
        ok("strcontains", vec![s(""), s("")], Value::Bool(true));
        err(
            "startswith",
            vec![Value::NULL, s("")],
            FuncError::arg(0, "argument must not be null"),
        );
        ok("startswith", vec![n(12), s("1")], Value::Bool(true));
    }

    #[test]
    fn case_mapping() {
        ok_s("lower", vec![s("ÀBÇ HeLLo")], "àbç hello");
        ok_s("upper", vec![s("straße")], "STRAßE");
        ok_s("upper", vec![s("ǆ")], "Ǆ");
        ok_s("lower", vec![s("ΑΣ")], "ασ");
        ok_s("upper", vec![s("")], "");
        ok_s(
            "title",
            vec![s("hello world-foo bar_baz")],
            "Hello World-Foo Bar_baz",
        );
        ok_s("title", vec![s("ÉCOLE élève")], "ÉCOLE Élève");
        ok_s("title", vec![s("ǆemal")], "ǅemal");
        err(
            "upper",
            vec![Value::tuple(vec![])],
            FuncError::arg(0, "string required, but have tuple"),
        );
    }

    #[test]
    fn indent_cases() {
        ok_s("indent", vec![n(2), s("a\nb\nc")], "a\n  b\n  c");
        ok_s("indent", vec![n(4), s("single")], "single");
        ok_s("indent", vec![n(2), s("a\n\nb\n")], "a\n  \n  b\n  ");
        ok_s("indent", vec![s("1"), s("a\nb")], "a\n b");
        // Found by the structured fuzz target: without a newline the padding, never used,
        // was still built: 2^53 spaces aborted the process on a failed allocation.
        ok_s("indent", vec![n(1 << 53), s("single")], "single");
        assert!(run("indent", vec![n(-1), s("a\nb")]).is_err());
        err(
            "indent",
            vec![n(1 << 40), s("a\nb")],
            FuncError::general(
                "the resulting string would be 1099511627779 bytes long, more than fn-hcl's limit of 67108864 for one string",
            ),
        );
    }

    #[test]
    fn join_cases() {
        ok_s("join", vec![s(","), strs(&["a", "b", "c"])], "a,b,c");
        ok_s("join", vec![s(", "), Value::tuple(vec![])], "");
        ok_s(
            "join",
            vec![s("-"), strs(&["a"]), strs(&["b", "c"])],
            "a-b-c",
        );
        ok_s(
            "join",
            vec![s(","), Value::tuple(vec![n(1), Value::Bool(true), s("x")])],
            "1,true,x",
        );
        err(
            "join",
            vec![s(","), Value::tuple(vec![s("a"), Value::NULL])],
            FuncError::arg(1, "element 1 is null; cannot concatenate null values"),
        );
        err(
            "join",
            vec![s(","), strs(&["a"]), Value::tuple(vec![Value::NULL])],
            FuncError::arg(
                2,
                "element 0 of list 2 is null; cannot concatenate null values",
            ),
        );
        err(
            "join",
            vec![s(",")],
            FuncError::general("at least one list is required"),
        );
    }

    #[test]
    fn strrev_substr_length() {
        ok_s("strrev", vec![s("héllo")], "olléh");
        ok_s("strrev", vec![s("👍🏽ab")], "ba👍🏽");
        ok_s("strrev", vec![s("")], "");
        ok_s("substr", vec![s("hello"), n(1), n(3)], "ell");
        ok_s("substr", vec![s("hello"), n(-3), n(-1)], "llo");
        ok_s("substr", vec![s("hello"), n(0), n(100)], "hello");
        ok_s("substr", vec![s("héllo wörld"), n(6), n(5)], "wörld");
        ok_s("substr", vec![s("hello"), n(10), n(2)], "");
        ok_s("substr", vec![s("hello"), n(-10), n(2)], "he");
        ok_s("substr", vec![s("hello"), n(-2), n(0)], "lo");
        ok_s("substr", vec![s("hello"), n(5), n(1)], "");
        let frac = Value::Number(crate::value::number::Number::from_f64(1.5).expect("finite"));
        err(
            "substr",
            vec![s("hello"), frac, n(1)],
            FuncError::general(
                "value must be a whole number, between -9223372036854775808 and 9223372036854775807",
            ),
        );
    }

    #[test]
    fn trims() {
        ok_s("trim", vec![s("xxhixx"), s("x")], "hi");
        ok_s("trim", vec![s("  a  "), s(" ")], "a");
        ok_s("trim", vec![s("abcba"), s("ab")], "c");
        ok_s("trim", vec![s("hello"), s("")], "hello");
        ok_s("trimprefix", vec![s("helloworld"), s("hello")], "world");
        ok_s("trimprefix", vec![s("aaa"), s("a")], "aa");
        ok_s("trimsuffix", vec![s("file.tar.gz"), s(".gz")], "file.tar");
        ok_s("trimsuffix", vec![s("file"), s(".gz")], "file");
        ok_s("trimspace", vec![s("  \n\t hi \t\n")], "hi");
        ok_s("trimspace", vec![s("\u{a0}x\u{2003}")], "x");
    }

    #[test]
    fn split_cases() {
        ok(
            "split",
            vec![s(","), s("a,b,,c")],
            strs(&["a", "b", "", "c"]),
        );
        ok("split", vec![s(","), s("")], strs(&[""]));
        ok("split", vec![s(""), s("abc")], strs(&["a", "b", "c"]));
        ok("split", vec![s("::"), s("a::b::c")], strs(&["a", "b", "c"]));
        ok(
            "split",
            vec![s(""), s("")],
            Value::list(Type::String, vec![]),
        );
    }

    #[test]
    fn replace_cases() {
        ok_s(
            "replace",
            vec![s("hello world"), s("o"), s("0")],
            "hell0 w0rld",
        );
        ok_s("replace", vec![s("hello"), s("/l+/"), s("L")], "heLo");
        ok_s(
            "replace",
            vec![s("a-b-c"), s("/(\\w)-(\\w)/"), s("$2+$1")],
            "b+a-c",
        );
        ok_s("replace", vec![s("abc"), s(""), s("-")], "-a-b-c-");
        ok_s("replace", vec![s("x.y.z"), s("."), s("")], "xyz");
        ok_s("replace", vec![s("AbC"), s("/(?i)b/"), s("_")], "A_C");
        ok_s("replace", vec![s("a/b"), s("/"), s("|")], "a|b");
        err(
            "replace",
            vec![s("abc"), s("/[/"), s("x")],
            FuncError::general("error parsing regexp: missing closing ]: `[`"),
        );
    }

    #[test]
    fn regex_cases() {
        ok_s("regex", vec![s("[a-z]+"), s("123abc456")], "abc");
        ok(
            "regex",
            vec![s("(\\d+)-(\\d+)"), s("10-20")],
            Value::tuple(vec![s("10"), s("20")]),
        );
        ok(
            "regex",
            vec![s("(?P<year>\\d{4})-(?P<month>\\d{2})"), s("2024-05")],
            Value::object(vec![("month".into(), s("05")), ("year".into(), s("2024"))]),
        );
        ok(
            "regex",
            vec![
                s("^(?:https?://)?([^/:]+)"),
                s("https://example.com:8080/x"),
            ],
            Value::tuple(vec![s("example.com")]),
        );
        ok(
            "regex",
            vec![s("(a)|(b)"), s("b")],
            Value::tuple(vec![Value::Null(Type::String), s("b")]),
        );
        ok("regex", vec![s("\\d"), s("٣3")], s("3"));
        err(
            "regex",
            vec![s("x"), s("abc")],
            FuncError::general("pattern did not match any part of the given string"),
        );
        err(
            "regex",
            vec![s("("), s("x")],
            FuncError::arg(0, "invalid regexp pattern: missing closing ) in ("),
        );
        err(
            "regex",
            vec![s("(?P<a>x)(y)"), s("xy")],
            FuncError::arg(
                0,
                "invalid regexp pattern: cannot mix both named and unnamed capture groups",
            ),
        );
        err(
            "regex",
            vec![s("a)"), s("x")],
            FuncError::arg(0, "invalid regexp pattern: unexpected ) in a)"),
        );
        err(
            "regex",
            vec![s("a\\q"), s("x")],
            FuncError::arg(0, "invalid regexp pattern: invalid escape sequence in \\q"),
        );
        err(
            "regex",
            vec![s("[z-a]"), s("x")],
            FuncError::arg(
                0,
                "invalid regexp pattern: invalid character class range in z-a",
            ),
        );
        err(
            "regex",
            vec![s("a{1001}"), s("x")],
            FuncError::arg(0, "invalid regexp pattern: invalid repeat count in {1001}"),
        );
        ok("regex", vec![s("a{2,3}b"), s("xaaab")], s("aaab"));
        ok("regex", vec![s("[a-c-]+"), s("x-ab")], s("-ab"));
        ok("regex", vec![s("\\.\\Qa.b\\E"), s(".a.b")], s(".a.b"));
        err(
            "regex",
            vec![s("*a"), s("x")],
            FuncError::arg(
                0,
                "invalid regexp pattern: missing argument to repetition operator in *",
            ),
        );
    }

    /// Go's regexp/syntax refuses stacked repetition operators (Perl mode) with the text
    /// from the first operator to the end of the second, and a repetition whose nested
    /// `{n,m}` counts multiply past 1000 copies (`repeatIsValid`). The structured fuzz
    /// target found `a{1000}{1000}`: compiled as a million-state program (over a second,
    /// outside every budget) where Go refuses it at once.
    #[test]
    fn regex_repetition_rules_are_go_s() {
        let nested = |p: &str, expr: &str| {
            err(
                "regex",
                vec![s(p), s("x")],
                FuncError::arg(
                    0,
                    format!("invalid regexp pattern: invalid nested repetition operator in {expr}"),
                ),
            )
        };
        nested("a{1000}{1000}", "{1000}{1000}");
        nested("a**", "**");
        nested("a*?*", "*?*");
        nested("a???", "???");
        nested("a+{2}", "+{2}");
        nested("a{2}*", "{2}*");
        nested("a{2}?+", "{2}?+");
        nested("x(a*+)", "*+");
        let count = |p: &str, expr: &str| {
            err(
                "regex",
                vec![s(p), s("x")],
                FuncError::arg(
                    0,
                    format!("invalid regexp pattern: invalid repeat count in {expr}"),
                ),
            )
        };
        count("(a{1000}){2}", "{2}");
        count("((a{10}){10}){11}", "{11}");
        count("(a{2}|(b{3}c){400}){2}", "{400}");
        count("(?:a{501}){2,}", "{2,}");
        count("a*{2000}", "{2000}");
        for (p, op) in [("{2}?x", "{2}?"), ("x|{2}", "{2}"), ("(*?)", "*?")] {
            err(
                "regex",
                vec![s(p), s("x")],
                FuncError::arg(
                    0,
                    format!(
                        "invalid regexp pattern: missing argument to repetition operator in {op}"
                    ),
                ),
            );
        }
        // Within 1000 copies, or a repetition Go does not check (`*`, `{1}`, `{0}`).
        for p in [
            "(a{10}){100}",
            "((a{1000}){1})*",
            "(a{1000}){0}",
            "(a{2}b{500}){2}",
            "a{2}b{1000}",
            "a{,2}{3}",
        ] {
            ok(
                "replace",
                vec![s("xyz"), s(&format!("/{p}/")), s("")],
                s("xyz"),
            );
        }
        ok("regex", vec![s("a{,2}x"), s("-a{,2}x")], s("a{,2}x"));
        ok("regex", vec![s("a{01}"), s("a{01}")], s("a{01}"));
    }

    /// Go's POSIX classes by name; any other `[:name:]` is Go's "invalid character class
    /// range" with its text.
    #[test]
    fn regex_posix_classes_are_go_s() {
        ok("regex", vec![s("[[:alpha:]]+"), s("12ab3")], s("ab"));
        ok(
            "regex",
            vec![s("[[:^digit:][:space:]]+"), s("12a b3")],
            s("a b"),
        );
        err(
            "regex",
            vec![s("[[:foo:]]"), s("x")],
            FuncError::arg(
                0,
                "invalid regexp pattern: invalid character class range in [:foo:]",
            ),
        );
    }

    #[test]
    fn regexall_cases() {
        ok(
            "regexall",
            vec![s("\\d+"), s("a1b22c333")],
            strs(&["1", "22", "333"]),
        );
        let pair = |a: &str, b: &str| Value::tuple(vec![s(a), s(b)]);
        let tt = Type::tuple(vec![Type::String, Type::String]);
        ok(
            "regexall",
            vec![s("(\\w)(\\d)"), s("a1 b2")],
            Value::list(tt, vec![pair("a", "1"), pair("b", "2")]),
        );
        let kv = |k: &str, v: &str| Value::object(vec![("k".into(), s(k)), ("v".into(), s(v))]);
        let ot = kv("", "").type_of();
        ok(
            "regexall",
            vec![s("(?P<k>\\w+)=(?P<v>\\w+)"), s("a=1,b=2")],
            Value::list(ot, vec![kv("a", "1"), kv("b", "2")]),
        );
        ok(
            "regexall",
            vec![s("z"), s("abc")],
            Value::list(Type::String, vec![]),
        );
        ok("regexall", vec![s(""), s("ab")], strs(&["", "", ""]));
    }
}
