//! Built-in functions: `format` and `formatlist` (go-cty stdlib). The format string is
//! scanned exactly as cty's ragel machine does (flags, width, precision, `[n]` index, verb
//! letter, in that order); number verbs follow Go's `fmt` formatting of `*big.Int` and
//! `*big.Float`, strings are padded and truncated by grapheme clusters as cty does.

use super::{FuncDef, FuncError};
use crate::text::quote::{go_quote, go_quote_rune};
use crate::text::unicode::{clusters_prefix_len, grapheme_count};
use crate::value::convert::convert;
use crate::value::json::{
    encode as json_encode, encode_into as json_encode_into, json_string_len, push_json_string,
};
use crate::value::number::{Number, SHORT_TEXT};
use crate::value::{Type, Value};
use num_bigint::BigInt;
use num_traits::Signed;

/// The format functions.
pub static FUNCS: &[FuncDef] = funcs! {
    format(format: String, ..args?: Any) => format_impl,
    formatlist(format: String, ..args?: Any) => formatlist_impl,
};

/// Widths and precisions above this are refused (Go would try to build the giant string).
const MAX_WIDTH: usize = 1_000_000;

fn format_impl(args: &[Value]) -> Result<Value, FuncError> {
    let Some(fmt) = args.first().and_then(Value::as_str) else {
        return Ok(Value::Unknown(Type::String));
    };
    super::string_in_buffer(|out| format_into(fmt, &args[1..], out))
}

fn formatlist_impl(args: &[Value]) -> Result<Value, FuncError> {
    let Some(fmt) = args.first().and_then(Value::as_str) else {
        return Ok(Value::Unknown(Type::list(Type::String)));
    };
    let rest = &args[1..];
    if rest.is_empty() {
        let s = format_str(fmt, rest)?;
        return Ok(Value::list(Type::String, vec![Value::string(s)]));
    }
    let mut iter_len: Option<(usize, usize)> = None; // (length, which argument)
    let mut seqs: Vec<Option<&[Value]>> = Vec::with_capacity(rest.len());
    let mut unknown = false;
    for (i, arg) in rest.iter().enumerate() {
        let is_seq_type = arg.kind().is_sequence();
        if is_seq_type && !arg.is_null() {
            let Some(items) = arg.as_seq() else {
                // An unknown list or set: nothing can be produced yet.
                unknown = true;
                seqs.push(None);
                continue;
            };
            match iter_len {
                None => iter_len = Some((items.len(), i)),
                Some((len, chooser)) if len != items.len() => {
                    return Err(FuncError::arg(
                        i + 1,
                        format!(
                            "argument {} has length {}, which is inconsistent with argument {} of length {}",
                            i + 1,
                            items.len(),
                            chooser + 1,
                            len
                        ),
                    ));
                }
                Some(_) => {}
            }
            seqs.push(Some(items));
        } else {
            seqs.push(None);
        }
    }
    if unknown {
        return Ok(Value::Unknown(Type::list(Type::String)));
    }
    let n = match iter_len {
        Some((0, _)) => return Ok(Value::list(Type::String, Vec::new())),
        Some((n, _)) => n,
        None => 1,
    };
    let mut out = Vec::with_capacity(n);
    let mut fmt_args: Vec<Value> = Vec::with_capacity(rest.len());
    for idx in 0..n {
        fmt_args.clear();
        for (arg, seq) in rest.iter().zip(&seqs) {
            fmt_args.push(match seq {
                Some(items) => items[idx].clone(),
                None => arg.clone(),
            });
        }
        if fmt_args.iter().any(Value::contains_unknown) {
            out.push(Value::Unknown(Type::String));
            continue;
        }
        match format_str(fmt, &fmt_args) {
            Ok(s) => out.push(Value::string(s)),
            Err(e) => {
                let msg = match e {
                    FuncError::Arg { message, .. } | FuncError::General(message) => message,
                };
                return Err(FuncError::general(format!(
                    "error on format iteration {idx}: {msg}"
                )));
            }
        }
    }
    Ok(Value::list(Type::String, out))
}

/// One `%` sequence, as cty's scanner records it.
#[derive(Default, Debug)]
struct Verb<'a> {
    raw: &'a str,
    offset: usize,
    arg_num: usize,
    mode: char,
    zero: bool,
    sharp: bool,
    plus: bool,
    minus: bool,
    space: bool,
    width: Option<usize>,
    prec: Option<usize>,
}

/// cty's `format`: formats `args` by `fmt`. Errors carry cty's messages; "too many
/// arguments" is an argument error on the first unused argument (index 1 = first value).
pub fn format_str(fmt: &str, args: &[Value]) -> Result<String, FuncError> {
    let mut out = String::with_capacity(fmt.len() + 16);
    format_into(fmt, args, &mut out)?;
    Ok(out)
}

/// [`format_str`] appending to `out` (which may be a reused buffer).
fn format_into(fmt: &str, args: &[Value], out: &mut String) -> Result<(), FuncError> {
    // The literal text copied is at most the format string (each verb charges what it
    // appends): charged first, so that `formatlist` of a long format over a long list
    // stops at the budget instead of after building every string.
    crate::value::meter::bytes("format", fmt.len() as u64)?;
    let b = fmt.as_bytes();
    let len = b.len();
    let mut p = 0usize;
    let mut next_arg = 1usize;
    let mut highest = 0usize;
    let eof_err = || FuncError::general(format!("invalid format string starting at offset {len}"));
    let char_err = |p: usize| {
        let c = fmt[p..].chars().next().unwrap_or('\u{fffd}');
        FuncError::general(format!(
            "unrecognized format character {} at offset {}",
            go_quote_rune(c),
            p
        ))
    };
    while p < len {
        if b[p] != b'%' {
            // Copy the literal run up to the next '%'.
            let end = fmt[p..].find('%').map_or(len, |i| p + i);
            out.push_str(&fmt[p..end]);
            p = end;
            continue;
        }
        let ts = p;
        p += 1;
        if p == len {
            return Err(eof_err());
        }
        if b[p] == b'%' {
            out.push('%');
            p += 1;
            continue;
        }
        let mut verb = Verb {
            arg_num: next_arg,
            ..Verb::default()
        };
        // Flags.
        loop {
            if p == len {
                return Err(eof_err());
            }
            match b[p] {
                b' ' => verb.space = true,
                b'#' => verb.sharp = true,
                b'+' => verb.plus = true,
                b'-' => verb.minus = true,
                b'0' => verb.zero = true,
                _ => break,
            }
            p += 1;
        }
        // Width: a number without a leading zero.
        if b[p].is_ascii_digit() && b[p] != b'0' {
            let mut w = 0usize;
            while p < len && b[p].is_ascii_digit() {
                w = w.saturating_mul(10).saturating_add((b[p] - b'0') as usize);
                p += 1;
            }
            verb.width = Some(w);
            if p == len {
                return Err(eof_err());
            }
            if !matches!(b[p], b'.' | b'[') && !b[p].is_ascii_alphabetic() {
                return Err(char_err(p));
            }
        }
        // Precision: '.' and any digits.
        if b[p] == b'.' {
            p += 1;
            let mut pr = 0usize;
            while p < len && b[p].is_ascii_digit() {
                pr = pr.saturating_mul(10).saturating_add((b[p] - b'0') as usize);
                p += 1;
            }
            verb.prec = Some(pr);
            if p == len {
                return Err(eof_err());
            }
            if b[p] != b'[' && !b[p].is_ascii_alphabetic() {
                return Err(char_err(p));
            }
        }
        // Explicit argument index.
        if b[p] == b'[' {
            p += 1;
            if p == len {
                return Err(eof_err());
            }
            if !(b'1'..=b'9').contains(&b[p]) {
                return Err(char_err(p));
            }
            let mut n = 0usize;
            while p < len && b[p].is_ascii_digit() {
                n = n.saturating_mul(10).saturating_add((b[p] - b'0') as usize);
                p += 1;
            }
            if p == len {
                return Err(eof_err());
            }
            if b[p] != b']' {
                return Err(char_err(p));
            }
            p += 1;
            if p == len {
                return Err(eof_err());
            }
            verb.arg_num = n;
        }
        if !b[p].is_ascii_alphabetic() {
            return Err(char_err(p));
        }
        verb.mode = b[p] as char;
        verb.raw = &fmt[ts..p + 1];
        verb.offset = ts;
        p += 1;
        highest = highest.max(verb.arg_num);
        append_verb(&verb, out, args)?;
        next_arg = verb.arg_num.saturating_add(1);
    }
    if highest < args.len() {
        let first_bad = highest + 1;
        let msg = if highest == 0 {
            "too many arguments; no verbs in format string".to_string()
        } else {
            format!("too many arguments; only {highest} used by format string")
        };
        return Err(FuncError::arg(first_bad, msg));
    }
    Ok(())
}

fn unsupported(verb: &Verb<'_>, msg: &str) -> FuncError {
    FuncError::general(format!(
        "unsupported value for {} at {}: {}",
        go_quote(verb.raw),
        verb.offset,
        msg
    ))
}

fn append_verb(verb: &Verb<'_>, out: &mut String, args: &[Value]) -> Result<(), FuncError> {
    let Some(arg) = verb.arg_num.checked_sub(1).and_then(|i| args.get(i)) else {
        return Err(FuncError::general(format!(
            "not enough arguments for {} at {}: need index {} but have {} total",
            go_quote(verb.raw),
            verb.offset,
            verb.arg_num,
            args.len()
        )));
    };
    if verb.mode != 'v' && arg.is_null() {
        return Err(unsupported(verb, "null value cannot be formatted"));
    }
    if verb.width.is_some_and(|w| w > MAX_WIDTH) || verb.prec.is_some_and(|w| w > MAX_WIDTH) {
        return Err(unsupported(verb, "width or precision too large"));
    }
    // Each verb charges what it appends, measured before it is appended (`charge`): a
    // string's bytes and padding, a number's digits with their zeros and padding (`%b` of
    // 2^131071 writes 131,072 digits, `%.999999d` a million zeros, from a few bytes of
    // format), a quoted string with its escapes (up to six bytes a byte). A number's
    // digits that may be many (up to ~1 MB: the range, `MAX_WIDTH`) are charged their
    // bound before they are made (`ahead`), the rest of what is appended after.
    match verb.mode {
        'v' => append_as_is(verb, out, arg),
        't' => {
            let v = convert(arg, &Type::Bool).map_err(|e| unsupported(verb, &e.0))?;
            let t = if v.as_bool() == Some(true) {
                "true"
            } else {
                "false"
            };
            charge(t.len())?;
            out.push_str(t);
            Ok(())
        }
        'b' | 'd' | 'o' | 'x' | 'X' | 'e' | 'E' | 'f' | 'g' | 'G' => {
            let v = convert(arg, &Type::Number).map_err(|e| unsupported(verb, &e.0))?;
            let Some(n) = v.as_number() else {
                return Err(unsupported(verb, "a number is required"));
            };
            if matches!(verb.mode, 'b' | 'd' | 'o' | 'x' | 'X') {
                // An exact i64 (the common case) without a big integer.
                if let Some(i) = n.to_i64() {
                    let m = i.unsigned_abs();
                    let mut buf = itoa::Buffer::new();
                    let digits = match verb.mode {
                        'b' => format!("{m:b}"),
                        'o' => format!("{m:o}"),
                        'x' | 'X' => format!("{m:x}"),
                        _ => return append_int_digits(verb, out, i < 0, buf.format(m), 0),
                    };
                    return append_int_digits(verb, out, i < 0, &digits, 0);
                }
                let Some(i) = n.to_bigint() else {
                    return Err(unsupported(verb, "an integer is required"));
                };
                append_int(verb, out, &i)
            } else {
                append_float(verb, out, n)
            }
        }
        's' | 'q' => {
            let v = convert(arg, &Type::String).map_err(|e| unsupported(verb, &e.0))?;
            let s = v.as_str().unwrap_or_default();
            let s = match verb.prec {
                Some(prec) if prec > 0 => &s[..clusters_prefix_len(s, prec)],
                _ => s,
            };
            if verb.mode == 's' {
                return pad_width(verb, out, s);
            }
            // Quoted: measured with its escapes first; without a width written in place.
            let len = json_string_len(s);
            charge(len)?;
            if verb.width.is_none() {
                push_json_string(out, s);
                return Ok(());
            }
            let mut q = String::with_capacity(len);
            push_json_string(&mut q, s);
            pad_width(verb, out, &q)
        }
        m => Err(FuncError::general(format!(
            "unsupported format verb {} in {} at offset {}",
            go_quote_rune(m),
            go_quote(verb.raw),
            verb.offset
        ))),
    }
}

fn append_as_is(verb: &Verb<'_>, out: &mut String, arg: &Value) -> Result<(), FuncError> {
    if !verb.sharp {
        match arg {
            Value::String(s) => return pad_width(verb, out, s),
            Value::Number(n) => {
                let ahead = n.charge_long_text(b'g', -1, charge)?;
                return pad_width_after(verb, out, &n.text(b'g', -1), ahead);
            }
            _ => {}
        }
    }
    // JSON charges what it writes as it writes it: without a width, written in place.
    if verb.width.is_none() {
        return json_encode_into(out, arg).map_err(|e| unsupported(verb, &e));
    }
    let j = json_encode(arg).map_err(|e| unsupported(verb, &e))?;
    pad_width(verb, out, &j)
}

/// Charges `n` bytes a verb is about to append.
fn charge(n: usize) -> Result<(), FuncError> {
    crate::value::meter::bytes("format", n as u64)?;
    Ok(())
}

/// cty's `formatPadWidth`: pads to the width in grapheme clusters (charged first).
fn pad_width(verb: &Verb<'_>, out: &mut String, s: &str) -> Result<(), FuncError> {
    pad_width_after(verb, out, s, 0)
}

/// [`pad_width`] of a text of which `ahead` bytes were charged before it was made.
fn pad_width_after(
    verb: &Verb<'_>,
    out: &mut String,
    s: &str,
    ahead: usize,
) -> Result<(), FuncError> {
    let charge = |n: usize| charge(n.saturating_sub(ahead));
    let Some(width) = verb.width else {
        charge(s.len())?;
        out.push_str(s);
        return Ok(());
    };
    let given = grapheme_count(s);
    if given >= width {
        charge(s.len())?;
        out.push_str(s);
        return Ok(());
    }
    charge(s.len() + (width - given))?;
    let pad = if verb.zero { '0' } else { ' ' };
    if verb.minus {
        out.push_str(s);
        push_repeat(out, pad, width - given);
    } else {
        push_repeat(out, pad, width - given);
        out.push_str(s);
    }
    Ok(())
}

fn push_repeat(out: &mut String, c: char, n: usize) {
    out.extend(std::iter::repeat_n(c, n));
}

/// Go's `(*big.Int).Format` for the verbs b, d, o, x, X.
fn append_int(verb: &Verb<'_>, out: &mut String, x: &BigInt) -> Result<(), FuncError> {
    let (base, bits_a_digit) = match verb.mode {
        'b' => (2, 1.0),
        'o' => (8, 3.0),
        'x' | 'X' => (16, 4.0),
        _ => (10, std::f64::consts::LOG2_10),
    };
    // A big integer's digits (1e39000 has 129,555 binary ones), charged before they are
    // made when they may be many: their count from its bits, one over for the rounding.
    let mut ahead = 0;
    let most = (x.bits() as f64 / bits_a_digit).ceil() as usize + 1;
    if most > SHORT_TEXT {
        charge(most)?;
        ahead = most;
    }
    append_int_digits(
        verb,
        out,
        x.is_negative(),
        &x.magnitude().to_str_radix(base),
        ahead,
    )
}

/// [`append_int`] from the magnitude's digits (lower case) and the sign, `ahead` bytes of
/// which were charged before the digits were made.
fn append_int_digits(
    verb: &Verb<'_>,
    out: &mut String,
    negative: bool,
    digits: &str,
    ahead: usize,
) -> Result<(), FuncError> {
    // Go's fmt only lets '0' pad to the left.
    let zero_flag = verb.zero && !verb.minus;
    let sign = if negative {
        "-"
    } else if verb.plus {
        "+"
    } else if verb.space {
        " "
    } else {
        ""
    };
    let prefix = if verb.sharp {
        match verb.mode {
            'b' => "0b",
            'o' => "0",
            'x' => "0x",
            'X' => "0X",
            _ => "",
        }
    } else {
        ""
    };
    let upper;
    let digits = if verb.mode == 'X' {
        upper = digits.to_ascii_uppercase();
        &upper
    } else {
        digits
    };
    let mut zeros = 0usize;
    if let Some(prec) = verb.prec {
        if digits.len() < prec {
            zeros = prec - digits.len();
        } else if digits == "0" && prec == 0 {
            return Ok(());
        }
    }
    let length = sign.len() + prefix.len() + zeros + digits.len();
    let (mut left, mut right) = (0usize, 0usize);
    if let Some(width) = verb.width
        && length < width
    {
        let d = width - length;
        if verb.minus {
            right = d;
        } else if zero_flag && verb.prec.is_none() {
            zeros = d;
        } else {
            left = d;
        }
    }
    charge(
        (left + sign.len() + prefix.len() + zeros + digits.len() + right).saturating_sub(ahead),
    )?;
    push_repeat(out, ' ', left);
    out.push_str(sign);
    out.push_str(prefix);
    push_repeat(out, '0', zeros);
    out.push_str(digits);
    push_repeat(out, ' ', right);
    Ok(())
}

/// Go's `(*big.Float).Format` for the verbs e, E, f, g, G.
fn append_float(verb: &Verb<'_>, out: &mut String, x: &Number) -> Result<(), FuncError> {
    let prec: i32 = match (verb.prec, verb.mode) {
        (Some(p), _) => p as i32,
        (None, 'g' | 'G') => -1,
        (None, _) => 6,
    };
    // A text that may be long (a million digits of precision, 1e39000's integer digits)
    // is charged its bound before it is made.
    let ahead = x.charge_long_text(verb.mode as u8, prec, charge)?;
    let text = x.text(verb.mode as u8, prec);
    let zero_flag = verb.zero && !verb.minus;
    let (sign, body) = if let Some(rest) = text.strip_prefix('-') {
        ("-", rest)
    } else if let Some(rest) = text.strip_prefix('+') {
        (if verb.space { " " } else { "+" }, rest)
    } else if verb.plus {
        ("+", text.as_str())
    } else if verb.space {
        (" ", text.as_str())
    } else {
        ("", text.as_str())
    };
    let mut padding = 0usize;
    if let Some(width) = verb.width
        && width > sign.len() + body.len()
    {
        padding = width - sign.len() - body.len();
    }
    charge((sign.len() + padding + body.len()).saturating_sub(ahead))?;
    if zero_flag && !x.is_infinite() {
        out.push_str(sign);
        push_repeat(out, '0', padding);
        out.push_str(body);
    } else if verb.minus {
        out.push_str(sign);
        out.push_str(body);
        push_repeat(out, ' ', padding);
    } else {
        push_repeat(out, ' ', padding);
        out.push_str(sign);
        out.push_str(body);
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::approx_constant)] // 3.14159 is a recorded conformance input
mod tests {
    use super::*;
    use crate::value::Str;
    use crate::value::test_util::strs;

    fn s(x: &str) -> Value {
        Value::string(x)
    }
    fn n(i: i64) -> Value {
        Value::int(i)
    }
    fn f(x: f64) -> Value {
        Value::Number(Number::from_f64(x).unwrap())
    }

    fn fmt_ok(f: &str, args: &[Value]) -> String {
        let mut all = vec![s(f)];
        all.extend_from_slice(args);
        match format_impl(&all) {
            Ok(v) => v.as_str().unwrap().to_string(),
            Err(e) => panic!("format({f:?}) failed: {e:?}"),
        }
    }

    fn fmt_err(f: &str, args: &[Value]) -> FuncError {
        let mut all = vec![s(f)];
        all.extend_from_slice(args);
        format_impl(&all).unwrap_err()
    }

    fn general(m: &str) -> FuncError {
        FuncError::general(m)
    }

    #[test]
    fn recorded_cases() {
        // From conformance/builtins/string.jsonl.
        assert_eq!(fmt_ok("%s-%d", &[s("a"), n(5)]), "a-5");
        assert_eq!(fmt_ok("%05.2f", &[f(3.14159)]), "03.14");
        assert_eq!(fmt_ok("%q", &[s("say \"hi\"")]), "\"say \\\"hi\\\"\"");
        assert_eq!(fmt_ok("%t", &[Value::Bool(true)]), "true");
        assert_eq!(fmt_ok("%x", &[n(255)]), "ff");
        assert_eq!(fmt_ok("%X", &[n(255)]), "FF");
        assert_eq!(fmt_ok("%o", &[n(8)]), "10");
        assert_eq!(fmt_ok("%b", &[n(5)]), "101");
        assert_eq!(fmt_ok("%e", &[f(1234.5)]), "1.234500e+03");
        assert_eq!(fmt_ok("%g", &[f(1234.5)]), "1234.5");
        assert_eq!(fmt_ok("%10s|", &[s("hi")]), "        hi|");
        assert_eq!(fmt_ok("%-10s|", &[s("hi")]), "hi        |");
        assert_eq!(fmt_ok("%%d", &[]), "%d");
        assert_eq!(
            fmt_ok("%v", &[Value::tuple(vec![n(1), s("a")])]),
            "[1,\"a\"]"
        );
        assert_eq!(
            fmt_ok("%#v", &[Value::object(vec![("a".into(), n(1))])]),
            "{\"a\":1}"
        );
        assert_eq!(fmt_ok("%s", &[n(12)]), "12");
        assert_eq!(fmt_ok("%d", &[s("12")]), "12");
        assert_eq!(fmt_ok("%[2]s %[1]s", &[s("a"), s("b")]), "b a");
        assert_eq!(
            fmt_err("%d", &[f(1.5)]),
            general("unsupported value for \"%d\" at 0: an integer is required")
        );
        assert_eq!(
            fmt_err("%s", &[]),
            general("not enough arguments for \"%s\" at 0: need index 1 but have 0 total")
        );
        assert_eq!(
            fmt_err("%z", &[n(1)]),
            general("unsupported format verb 'z' in \"%z\" at offset 0")
        );
        assert_eq!(
            fmt_err("%s %s", &[s("a")]),
            general("not enough arguments for \"%s\" at 3: need index 2 but have 1 total")
        );
    }

    #[test]
    fn scanner_errors() {
        assert_eq!(
            fmt_err("abc%", &[]),
            general("invalid format string starting at offset 4")
        );
        assert_eq!(
            fmt_err("%-%", &[n(1)]),
            general("unrecognized format character '%' at offset 2")
        );
        assert_eq!(
            fmt_err("%é", &[n(1)]),
            general("unrecognized format character 'é' at offset 1")
        );
        assert_eq!(
            fmt_err("%[0]d", &[n(1)]),
            general("unrecognized format character '0' at offset 2")
        );
        assert_eq!(
            fmt_err("%5[1", &[n(1)]),
            general("invalid format string starting at offset 4")
        );
        assert_eq!(
            fmt_err("%[1]5d", &[n(1)]),
            general("unrecognized format character '5' at offset 4")
        );
    }

    #[test]
    fn argument_count_errors() {
        assert_eq!(
            fmt_err("plain", &[n(1)]),
            FuncError::arg(1, "too many arguments; no verbs in format string")
        );
        assert_eq!(
            fmt_err("%s", &[s("a"), s("b")]),
            FuncError::arg(2, "too many arguments; only 1 used by format string")
        );
        // An explicit index moves the implicit counter on.
        assert_eq!(fmt_ok("%[2]s %s", &[s("a"), s("b"), s("c")]), "b c");
        assert_eq!(
            fmt_err("%s", &[Value::Null(Type::String)]),
            general("unsupported value for \"%s\" at 0: null value cannot be formatted")
        );
        assert_eq!(
            fmt_err("%z", &[Value::NULL]),
            general("unsupported value for \"%z\" at 0: null value cannot be formatted")
        );
        assert_eq!(
            fmt_err("%d", &[Value::tuple(vec![])]),
            general("unsupported value for \"%d\" at 0: number required, but have tuple")
        );
    }

    #[test]
    fn numbers() {
        assert_eq!(fmt_ok("%d", &[n(-42)]), "-42");
        assert_eq!(fmt_ok("%+d", &[n(42)]), "+42");
        assert_eq!(fmt_ok("% d", &[n(42)]), " 42");
        assert_eq!(fmt_ok("%5d|", &[n(-42)]), "  -42|");
        assert_eq!(fmt_ok("%-5d|", &[n(42)]), "42   |");
        assert_eq!(fmt_ok("%05d", &[n(-42)]), "-0042");
        assert_eq!(fmt_ok("%-05d|", &[n(42)]), "42   |");
        assert_eq!(fmt_ok("%.4d", &[n(7)]), "0007");
        assert_eq!(fmt_ok("%8.4d|", &[n(7)]), "    0007|");
        assert_eq!(fmt_ok("%.0d|", &[n(0)]), "|");
        assert_eq!(
            fmt_ok("%#x %#o %#b %#X", &[n(255), n(8), n(5), n(255)]),
            "0xff 010 0b101 0XFF"
        );
        assert_eq!(
            fmt_ok("%d", &[Value::Number(Number::from_i64(i64::MIN))]),
            "-9223372036854775808"
        );
        assert_eq!(fmt_ok("%f", &[n(1)]), "1.000000");
        assert_eq!(fmt_ok("%.2f", &[f(-2.5)]), "-2.50");
        assert_eq!(fmt_ok("%+.1f", &[f(2.25)]), "+2.2");
        assert_eq!(fmt_ok("%8.3f|", &[f(3.14159)]), "   3.142|");
        assert_eq!(fmt_ok("%-8.3f|", &[f(3.14159)]), "3.142   |");
        assert_eq!(fmt_ok("%08.3f", &[f(-3.14159)]), "-003.142");
        assert_eq!(fmt_ok("%E", &[f(1234.5)]), "1.234500E+03");
        assert_eq!(fmt_ok("%.2e", &[f(0.000123)]), "1.23e-04");
        assert_eq!(fmt_ok("%g", &[f(0.00001)]), "1e-05");
        assert_eq!(fmt_ok("%g", &[n(1000000)]), "1e+06");
        assert_eq!(fmt_ok("%G", &[f(1e-7)]), "1E-07");
        assert_eq!(fmt_ok("%.3g", &[f(3.14159)]), "3.14");
        assert_eq!(fmt_ok("%v", &[f(0.5)]), "0.5");
        assert_eq!(fmt_ok("%v", &[n(1000000)]), "1e+06");
        assert_eq!(fmt_ok("%5v|", &[n(12)]), "   12|");
        assert_eq!(fmt_ok("%05v", &[n(-5)]), "000-5");
        assert_eq!(
            fmt_ok("%f", &[Value::Number(Number::infinity(false))]),
            "+Inf"
        );
        assert_eq!(
            fmt_ok("%06f", &[Value::Number(Number::infinity(true))]),
            "  -Inf"
        );
        assert_eq!(
            fmt_err("%d", &[Value::Number(Number::infinity(false))]),
            general("unsupported value for \"%d\" at 0: an integer is required")
        );
    }

    #[test]
    fn strings_and_others() {
        assert_eq!(fmt_ok("%.2s", &[s("héllo")]), "hé");
        assert_eq!(fmt_ok("%.0s", &[s("abc")]), "abc");
        assert_eq!(fmt_ok("%.10s", &[s("abc")]), "abc");
        // Width counts grapheme clusters, not bytes or code points.
        assert_eq!(
            fmt_ok("%4s|", &[s("\u{1f44d}\u{1f3fd}")]),
            "   \u{1f44d}\u{1f3fd}|"
        );
        assert_eq!(fmt_ok("%-4s|", &[s("✓")]), "✓   |");
        assert_eq!(fmt_ok("%04s", &[s("ab")]), "00ab");
        assert_eq!(fmt_ok("%-04s|", &[s("ab")]), "ab00|");
        assert_eq!(fmt_ok("%q", &[s("<&>")]), "\"\\u003c\\u0026\\u003e\"");
        assert_eq!(fmt_ok("%8q|", &[s("a")]), "     \"a\"|");
        assert_eq!(fmt_ok("%s", &[Value::Bool(false)]), "false");
        assert_eq!(fmt_ok("%t", &[s("true")]), "true");
        assert_eq!(fmt_ok("%v", &[Value::NULL]), "null");
        assert_eq!(fmt_ok("%v", &[Value::Bool(true)]), "true");
        assert_eq!(fmt_ok("%#v", &[s("a")]), "\"a\"");
        assert_eq!(fmt_ok("%#v", &[n(5)]), "5");
        assert_eq!(fmt_ok("", &[]), "");
        assert_eq!(fmt_ok("héllo ✓ %s", &[s("ü")]), "héllo ✓ ü");
        assert_eq!(
            fmt_ok(
                "%v",
                &[Value::map(
                    Type::String,
                    vec![(Str::from("b"), s("<")), (Str::from("a"), s("x"))]
                )]
            ),
            "{\"a\":\"x\",\"b\":\"\\u003c\"}"
        );
        assert_eq!(
            fmt_err("%s", &[Value::tuple(vec![n(1)])]),
            general("unsupported value for \"%s\" at 0: string required, but have tuple")
        );
        assert_eq!(
            fmt_err("%999999999s", &[s("a")]),
            general("unsupported value for \"%999999999s\" at 0: width or precision too large")
        );
    }

    #[test]
    fn unknowns_pass_through() {
        // The call applies cty's rule before the implementation runs: an unknown, at the
        // top or inside an argument, makes the result unknown.
        use crate::builtins::test_util::run;
        let unknown = Value::Unknown(Type::String);
        assert!(
            run("format", vec![s("%s"), unknown.clone()])
                .unwrap()
                .is_unknown()
        );
        let inside = Value::tuple(vec![s("a"), unknown.clone()]);
        assert!(
            run("format", vec![s("%v"), inside.clone()])
                .unwrap()
                .is_unknown()
        );
        assert!(
            run("join", vec![s(","), inside.clone()])
                .unwrap()
                .is_unknown()
        );
        assert!(
            run("jsonencode", vec![inside.clone()])
                .unwrap()
                .is_unknown()
        );
        assert!(
            run("flatten", vec![Value::tuple(vec![inside])])
                .unwrap()
                .is_unknown()
        );
        // A function that takes nested unknowns keeps the known parts known.
        let obj = Value::object(vec![("a".into(), s("x")), ("b".into(), unknown)]);
        let len = run("length", vec![obj]).unwrap();
        assert!(!len.is_unknown());
    }

    fn list(items: Vec<Value>) -> Value {
        Value::list(Type::String, items)
    }

    #[test]
    fn formatlist_cases() {
        let r = formatlist_impl(&[
            s("%s=%s"),
            list(vec![s("a"), s("b")]),
            list(vec![s("1"), s("2")]),
        ])
        .unwrap();
        assert_eq!(strs(&r), ["a=1", "b=2"]);
        assert_eq!(r.type_of(), Type::list(Type::String));
        let r = formatlist_impl(&[s("%s:%s"), s("fixed"), list(vec![s("a"), s("b")])]).unwrap();
        assert_eq!(strs(&r), ["fixed:a", "fixed:b"]);
        let r = formatlist_impl(&[s("%s"), Value::tuple(vec![])]).unwrap();
        assert!(strs(&r).is_empty());
        let r = formatlist_impl(&[s("x")]).unwrap();
        assert_eq!(strs(&r), ["x"]);
        let r = formatlist_impl(&[s("%s"), s("one")]).unwrap();
        assert_eq!(strs(&r), ["one"]);
        // A null list is a single value, printed by %v as null.
        let r = formatlist_impl(&[s("%v"), Value::Null(Type::list(Type::String))]).unwrap();
        assert_eq!(strs(&r), ["null"]);
        assert_eq!(
            formatlist_impl(&[
                s("%s %s"),
                Value::tuple(vec![s("a")]),
                Value::tuple(vec![s("b"), s("c")])
            ])
            .unwrap_err(),
            FuncError::arg(
                2,
                "argument 2 has length 2, which is inconsistent with argument 1 of length 1"
            )
        );
        assert_eq!(
            formatlist_impl(&[s("%d"), Value::tuple(vec![n(1), f(1.5)])]).unwrap_err(),
            general(
                "error on format iteration 1: unsupported value for \"%d\" at 0: an integer is required"
            )
        );
        assert_eq!(
            formatlist_impl(&[s("x"), Value::tuple(vec![n(1)])]).unwrap_err(),
            general("error on format iteration 0: too many arguments; no verbs in format string")
        );
    }
}
