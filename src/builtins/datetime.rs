//! Built-in functions: `formatdate`, `timeadd` (go-cty stdlib) and `timecmp` (Terraform).
//! cty parses timestamps strictly (its inlined RFC 3339 parser) and falls back to Go's
//! `time.Parse` only to describe what is wrong; Terraform's `timecmp` uses Go's lenient
//! `time.Parse` directly. Both parsers are reproduced here with the `time.ParseError`
//! fields their messages are built from.

use super::{FuncDef, FuncError, str_arg};
use crate::text::quote::go_quote;
use crate::value::Value;
use crate::value::gotime::{days_in, getnum};
use chrono::{Datelike, Duration, NaiveDate, NaiveDateTime, Timelike};

/// The date and time functions.
pub static FUNCS: &[FuncDef] = funcs! {
    formatdate(format: String, time: String),
    timeadd(timestamp: String, duration: String),
    timecmp(timestamp_a: String, timestamp_b: String),
};

/// A parsed timestamp: the local wall time and its UTC offset in seconds.
#[derive(Clone, Copy, Debug)]
struct Stamp {
    local: NaiveDateTime,
    offset: i64,
}

impl Stamp {
    fn instant(&self) -> NaiveDateTime {
        self.local - Duration::seconds(self.offset)
    }
}

/// The fields of Go's `time.ParseError` that cty and Terraform look at.
#[derive(Debug, PartialEq)]
struct ParseError {
    layout_elem: &'static str,
    value_elem: String,
    message: String,
}

fn perr(layout_elem: &'static str, value_elem: &str, message: &str) -> ParseError {
    ParseError {
        layout_elem,
        value_elem: value_elem.to_string(),
        message: message.to_string(),
    }
}

fn is_digit(s: &[u8], i: usize) -> bool {
    s.get(i).is_some_and(u8::is_ascii_digit)
}

fn as_str(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Nanoseconds from a fraction `.ddd` of `n` bytes (Go's `parseNanoseconds`).
fn nanos(value: &[u8], n: usize) -> i64 {
    let n = n.min(10);
    let mut ns: i64 = 0;
    for &c in &value[1..n] {
        ns = ns * 10 + i64::from(c - b'0');
    }
    for _ in 0..(10 - n) {
        ns *= 10;
    }
    ns
}

fn build(
    year: i64,
    month: i64,
    day: i64,
    (hour, min, sec, nsec): (i64, i64, i64, i64),
    offset: i64,
) -> Option<Stamp> {
    let date = NaiveDate::from_ymd_opt(year as i32, month as u32, day as u32)?;
    // Go's Date normalises hour 24 and second overflow; add them as a duration.
    let local = date.and_hms_opt(0, 0, 0)?
        + Duration::hours(hour)
        + Duration::minutes(min)
        + Duration::seconds(sec)
        + Duration::nanoseconds(nsec);
    Some(Stamp { local, offset })
}

/// One number of a layout (Go's `getnum` for the layout element `elem`; `fixed`: two
/// digits required) and what follows it; one outside `range` is Go's "`what` out of
/// range", reported at what follows it.
fn field<'a>(
    v: &'a [u8],
    elem: &'static str,
    fixed: bool,
    range: impl std::ops::RangeBounds<i64>,
    what: &str,
) -> Result<(i64, &'a [u8]), ParseError> {
    let (n, rest) = getnum(v, fixed).ok_or_else(|| perr(elem, &as_str(v), ""))?;
    if !range.contains(&n) {
        return Err(perr(elem, &as_str(rest), &format!(": {what} out of range")));
    }
    Ok((n, rest))
}

/// Go's `time.Parse(time.RFC3339, s)`, lenient as Go is (one-digit hours, a comma before
/// fractional seconds, offsets up to 24:60).
fn go_parse_rfc3339(s: &str) -> Result<Stamp, ParseError> {
    let mut v = s.as_bytes();
    fn skip<'a>(v: &'a [u8], c: u8, elem: &'static str) -> Result<&'a [u8], ParseError> {
        match v.first() {
            Some(&x) if x == c => Ok(&v[1..]),
            _ => Err(perr(elem, &as_str(v), "")),
        }
    }
    // 2006
    if v.len() < 4 || !is_digit(v, 0) || !v[..4].iter().all(u8::is_ascii_digit) {
        return Err(perr("2006", &as_str(v), ""));
    }
    let year: i64 = v[..4].iter().fold(0, |a, &c| a * 10 + i64::from(c - b'0'));
    v = &v[4..];
    v = skip(v, b'-', "-")?;
    let (month, rest) = field(v, "01", true, 1..=12, "month")?;
    v = skip(rest, b'-', "-")?;
    // The day is checked against its month below.
    let (day, rest) = field(v, "02", true, .., "day")?;
    v = skip(rest, b'T', "T")?;
    let (hour, rest) = field(v, "15", false, ..24, "hour")?;
    v = skip(rest, b':', ":")?;
    let (min, rest) = field(v, "04", true, ..60, "minute")?;
    v = skip(rest, b':', ":")?;
    // 05 (and an optional fraction, which RFC3339's layout does not spell out)
    let (sec, rest) = field(v, "05", true, ..60, "second")?;
    v = rest;
    let mut nsec = 0;
    if v.len() >= 2 && (v[0] == b'.' || v[0] == b',') && is_digit(v, 1) {
        let mut n = 2;
        while is_digit(v, n) {
            n += 1;
        }
        nsec = nanos(v, n);
        v = &v[n..];
    }
    // Z07:00
    let hold = v;
    let offset;
    if v.first() == Some(&b'Z') {
        v = &v[1..];
        offset = 0;
    } else {
        let bad = || perr("Z07:00", &as_str(hold), "");
        if v.len() < 6 || v[3] != b':' {
            return Err(bad());
        }
        let (sign, hh, mm) = (v[0], &v[1..3], &v[4..6]);
        v = &v[6..];
        let hr = getnum(hh, true).ok_or_else(bad)?.0;
        let mn = getnum(mm, true).ok_or_else(bad)?.0;
        let mut range = "";
        if hr > 24 {
            range = ": time zone offset hour out of range";
        }
        if mn > 60 {
            range = ": time zone offset minute out of range";
        }
        let mut off = (hr * 60 + mn) * 60;
        match sign {
            b'+' => {}
            b'-' => off = -off,
            _ => return Err(bad()),
        }
        if !range.is_empty() {
            return Err(perr("Z07:00", &as_str(v), range));
        }
        offset = off;
    }
    if !v.is_empty() {
        let extra = as_str(v);
        return Err(perr(
            "",
            &extra,
            &format!(": extra text: {}", go_quote(&extra)),
        ));
    }
    if day < 1 || day > days_in(month, year) {
        return Err(perr("", "", ": day out of range"));
    }
    build(year, month, day, (hour, min, sec, nsec), offset)
        .ok_or_else(|| perr("", "", ": day out of range"))
}

/// cty's inlined strict RFC 3339 parser (`parseRFC3339`).
fn strict_rfc3339(s: &str) -> Option<Stamp> {
    let b = s.as_bytes();
    if b.len() < 19 {
        return None;
    }
    let mut ok = true;
    let mut num = |sl: &[u8], min: i64, max: i64| -> i64 {
        let mut x: i64 = 0;
        for &c in sl {
            if !c.is_ascii_digit() {
                ok = false;
                return min;
            }
            x = x * 10 + i64::from(c - b'0');
        }
        if x < min || x > max {
            ok = false;
            return min;
        }
        x
    };
    let year = num(&b[0..4], 0, 9999);
    let month = num(&b[5..7], 1, 12);
    let day = num(&b[8..10], 1, days_in(month, year));
    let hour = num(&b[11..13], 0, 23);
    let min = num(&b[14..16], 0, 59);
    let sec = num(&b[17..19], 0, 59);
    let seps = b[4] == b'-' && b[7] == b'-' && b[10] == b'T' && b[13] == b':' && b[16] == b':';
    if !ok || !seps {
        return None;
    }
    let mut r = &b[19..];
    let mut nsec = 0;
    if r.len() >= 2 && r[0] == b'.' && is_digit(r, 1) {
        let mut n = 2;
        while is_digit(r, n) {
            n += 1;
        }
        nsec = nanos(r, n);
        r = &r[n..];
    }
    let mut offset = 0;
    if r.len() != 1 || r[0] != b'Z' {
        if r.len() != 6 {
            return None;
        }
        let mut ok2 = true;
        let mut num2 = |sl: &[u8], max: i64| -> i64 {
            let mut x = 0;
            for &c in sl {
                if !c.is_ascii_digit() {
                    ok2 = false;
                    return 0;
                }
                x = x * 10 + i64::from(c - b'0');
            }
            if x > max {
                ok2 = false;
                return 0;
            }
            x
        };
        let hr = num2(&r[1..3], 23);
        let mm = num2(&r[4..6], 59);
        if !ok2 || !((r[0] == b'-' || r[0] == b'+') && r[3] == b':') {
            return None;
        }
        offset = (hr * 60 + mm) * 60;
        if r[0] == b'-' {
            offset = -offset;
        }
    }
    build(year, month, day, (hour, min, sec, nsec), offset)
}

/// cty's `parseStrictRFC3339`.
fn cty_parse_strict(s: &str) -> Result<Stamp, ParseError> {
    if let Some(t) = strict_rfc3339(s) {
        return Ok(t);
    }
    go_parse_rfc3339(s)?;
    let b = s.as_bytes();
    let num2 =
        |x: &[u8]| i64::from(x[0].wrapping_sub(b'0')) * 10 + i64::from(x[1].wrapping_sub(b'0'));
    if b.get(12) == Some(&b':') {
        return Err(perr(
            "15",
            &as_str(&b[11..12]),
            ": hour must have two digits",
        ));
    }
    if b.get(19) == Some(&b',') {
        return Err(perr(".", ",", ": sub-second separator must be a period"));
    }
    if b.last() != Some(&b'Z') && b.len() >= 6 {
        let tz = &b[b.len() - 6..];
        if num2(&tz[1..3]) >= 24 {
            return Err(perr("Z07:00", &as_str(tz), ": timezone hour out of range"));
        }
        if num2(&tz[4..6]) >= 60 {
            return Err(perr(
                "Z07:00",
                &as_str(tz),
                ": timezone minute out of range",
            ));
        }
        // cty falls through here with its zero time.
        return build(1, 1, 1, (0, 0, 0, 0), 0).ok_or_else(|| perr("", "", ""));
    }
    Err(perr("2006-01-02T15:04:05Z07:00", s, ""))
}

/// The message cty/Terraform give for a `time.ParseError`; `strict` adds cty's special
/// cases for hours and minutes.
fn describe(e: &ParseError, strict: bool) -> String {
    const P: &str = "not a valid RFC3339 timestamp";
    if e.layout_elem.is_empty() && e.value_elem.is_empty() && !e.message.is_empty() {
        return format!("{P}{}", e.message);
    }
    let what = match e.layout_elem {
        "2006" => "year",
        "01" => "month",
        "02" => "day of month",
        "15" => "hour",
        "04" => "minute",
        "05" => "second",
        "Z07:00" => "UTC offset",
        "T" => return format!("{P}: missing required time introducer 'T'"),
        ":" | "-" => {
            return if e.value_elem.is_empty() {
                format!(
                    "{P}: end of string where {} is expected",
                    go_quote(e.layout_elem)
                )
            } else {
                format!(
                    "{P}: found {} where {} is expected",
                    go_quote(&e.value_elem),
                    go_quote(e.layout_elem)
                )
            };
        }
        _ => "timestamp segment",
    };
    if e.value_elem.is_empty() {
        return format!("{P}: end of string before {what}");
    }
    if strict {
        if what == "hour" && e.value_elem.contains(':') {
            return format!("{P}: hour must be between 0 and 23 inclusive");
        }
        if what == "hour" && e.value_elem.len() != 2 {
            return format!("{P}: hour must have exactly two digits");
        }
        if what == "minute" && e.value_elem.len() != 2 {
            return format!("{P}: minute must have exactly two digits");
        }
    }
    format!("{P}: cannot use {} as {what}", go_quote(&e.value_elem))
}

/// cty's `parseTimestamp`.
fn cty_parse_timestamp(s: &str) -> Result<Stamp, String> {
    cty_parse_strict(s).map_err(|e| describe(&e, true))
}

/// Terraform's `parseTimestamp` (used by `timecmp`).
fn tf_parse_timestamp(s: &str) -> Result<Stamp, String> {
    go_parse_rfc3339(s).map_err(|e| describe(&e, false))
}

const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];
const WEEKDAYS: [&str; 7] = [
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
    "Sunday",
];

/// Go's `-0700` / `-07:00` offset layouts.
fn offset_text(offset: i64, colon: bool) -> String {
    let sign = if offset < 0 { '-' } else { '+' };
    let a = offset.abs() / 60;
    if colon {
        format!("{sign}{:02}:{:02}", a / 60, a % 60)
    } else {
        format!("{sign}{:02}{:02}", a / 60, a % 60)
    }
}

/// Go's `Time.Format(time.RFC3339)`.
fn rfc3339(t: &Stamp) -> String {
    let l = &t.local;
    let y = i64::from(l.year());
    let year = if y < 0 {
        format!("-{:04}", -y)
    } else {
        format!("{y:04}")
    };
    let zone = if t.offset == 0 {
        "Z".to_string()
    } else {
        offset_text(t.offset, true)
    };
    format!(
        "{year}-{:02}-{:02}T{:02}:{:02}:{:02}{zone}",
        l.month(),
        l.day(),
        l.hour(),
        l.minute(),
        l.second()
    )
}

/// Splits a formatdate layout into tokens as cty's `splitDateFormat` does.
fn split_date_format(f: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    let mut data = f;
    while !data.is_empty() {
        let n = if data[0] == b'\'' {
            if data.len() > 1 && data[1] == b'\'' {
                2
            } else {
                let mut i = 1;
                let mut end = data.len();
                while i < data.len() {
                    if data[i] == b'\'' {
                        if i + 1 == data.len() {
                            break;
                        }
                        if data[i + 1] == b'\'' {
                            i += 2;
                            continue;
                        }
                        end = i + 1;
                        break;
                    }
                    i += 1;
                }
                end
            }
        } else if data[0].is_ascii_alphabetic() {
            let rep = data[0];
            data.iter().position(|&c| c != rep).unwrap_or(data.len())
        } else {
            data.iter()
                .skip(1)
                .position(|&c| c == b'\'' || c.is_ascii_alphabetic())
                .map_or(data.len(), |p| p + 1)
        };
        out.push(&data[..n]);
        data = &data[n..];
    }
    out
}

fn verb_err(tok: &[u8], what: &str) -> FuncError {
    FuncError::arg(
        0,
        format!(
            "invalid date format verb {}{what}",
            go_quote(&String::from_utf8_lossy(tok))
        ),
    )
}

/// What Go's `formatdate` says a verb of the letter `c` must be (nothing for a letter
/// that is no verb).
fn verb_forms(c: u8) -> std::borrow::Cow<'static, str> {
    std::borrow::Cow::Borrowed(match c {
        b'Y' => ": year must either be \"YY\" or \"YYYY\"",
        b'M' => ": month must be \"M\", \"MM\", \"MMM\", or \"MMMM\"",
        b'D' => ": day of month must either be \"D\" or \"DD\"",
        b'E' => ": day of week must either be \"EEE\" or \"EEEE\"",
        b'h' => ": 24-hour must either be \"h\" or \"hh\"",
        b'H' => ": 12-hour must either be \"H\" or \"HH\"",
        b'A' | b'a' => {
            let c = c as char;
            return format!(": must be \"{c}{c}\"").into();
        }
        b'm' => ": minute must either be \"m\" or \"mm\"",
        b's' => ": second must either be \"s\" or \"ss\"",
        b'Z' => ": timezone must be Z, ZZZZ, or ZZZZZ",
        _ => "",
    })
}

fn formatdate(args: &[Value]) -> Result<Value, FuncError> {
    let fmt = str_arg(args, 0)?;
    let t = cty_parse_timestamp(str_arg(args, 1)?).map_err(|e| FuncError::arg(1, e))?;
    let l = t.local;
    let mut buf: Vec<u8> = Vec::with_capacity(fmt.len() + 8);
    // A verb writes up to six bytes a letter (`Z` is `+05:30`): each piece is charged
    // before it is added (pieces are at most a literal's length, or nine bytes).
    let mut push = |s: String| -> Result<(), FuncError> {
        crate::value::meter::bytes("formatdate", s.len() as u64)?;
        buf.extend_from_slice(s.as_bytes());
        Ok(())
    };
    let mut literal: Vec<u8> = Vec::new();
    for tok in split_date_format(fmt.as_bytes()) {
        let n = tok.len();
        match tok[0] {
            b'\'' => {
                if tok[n - 1] != b'\'' || n == 1 {
                    return Err(FuncError::arg(0, "unterminated literal '"));
                }
                if n == 2 {
                    push("'".into())?;
                } else {
                    literal.clear();
                    let raw = &tok[1..n - 1];
                    let mut i = 0;
                    while i < raw.len() {
                        literal.push(raw[i]);
                        if raw[i] == b'\'' {
                            i += 1;
                        }
                        i += 1;
                    }
                    push(String::from_utf8_lossy(&literal).into_owned())?;
                }
            }
            c if c.is_ascii_alphabetic() => {
                // The verbs of one or two letters: the number, two digits when doubled.
                let num = |v: u32| {
                    if n == 1 {
                        format!("{v}")
                    } else {
                        format!("{v:02}")
                    }
                };
                push(match (c, n) {
                    (b'Y', 2) => format!("{:02}", l.year() % 100),
                    (b'Y', 4) => format!("{:04}", l.year()),
                    (b'M', 1 | 2) => num(l.month()),
                    (b'M', 3) => MONTHS[l.month0() as usize][..3].to_string(),
                    (b'M', 4) => MONTHS[l.month0() as usize].to_string(),
                    (b'D', 1 | 2) => num(l.day()),
                    (b'E', 3) => {
                        WEEKDAYS[l.weekday().num_days_from_monday() as usize][..3].to_string()
                    }
                    (b'E', 4) => WEEKDAYS[l.weekday().num_days_from_monday() as usize].to_string(),
                    (b'h', 1 | 2) => num(l.hour()),
                    (b'H', 1 | 2) => num(match l.hour() % 12 {
                        0 => 12,
                        h => h,
                    }),
                    (b'A' | b'a', 2) => match (c == b'A', l.hour() >= 12) {
                        (true, false) => "AM",
                        (true, true) => "PM",
                        (false, false) => "am",
                        (false, true) => "pm",
                    }
                    .to_string(),
                    (b'm', 1 | 2) => num(l.minute()),
                    (b's', 1 | 2) => num(l.second()),
                    (b'Z', 1) if t.offset == 0 => "Z".to_string(),
                    (b'Z', 3) if t.offset == 0 => "UTC".to_string(),
                    (b'Z', 1 | 5) => offset_text(t.offset, true),
                    (b'Z', 3 | 4) => offset_text(t.offset, false),
                    _ => return Err(verb_err(tok, &verb_forms(c))),
                })?;
            }
            _ => push(String::from_utf8_lossy(tok).into_owned())?,
        }
    }
    Ok(Value::string(String::from_utf8_lossy(&buf).into_owned()))
}

/// The `time` package's own `quote` (non-ASCII and control bytes as `\xNN`).
fn time_quote(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        if (c as u32) >= 0x80 || (c as u32) < 0x20 {
            let mut b = [0u8; 4];
            for byte in c.encode_utf8(&mut b).bytes() {
                out.push_str(&format!("\\x{byte:02x}"));
            }
        } else {
            if c == '"' || c == '\\' {
                out.push('\\');
            }
            out.push(c);
        }
    }
    out.push('"');
    out
}

/// Go's `time.ParseDuration`, in nanoseconds.
fn parse_duration(orig: &str) -> Result<i64, String> {
    let invalid = || format!("time: invalid duration {}", time_quote(orig));
    let mut s = orig;
    let mut neg = false;
    if let Some(c) = s.chars().next()
        && (c == '-' || c == '+')
    {
        neg = c == '-';
        s = &s[1..];
    }
    if s == "0" {
        return Ok(0);
    }
    if s.is_empty() {
        return Err(invalid());
    }
    const LIMIT: u64 = 1 << 63;
    let mut d: u64 = 0;
    while !s.is_empty() {
        let b = s.as_bytes();
        if !(b[0] == b'.' || b[0].is_ascii_digit()) {
            return Err(invalid());
        }
        // Leading integer.
        let mut i = 0;
        let mut v: u64 = 0;
        while i < b.len() && b[i].is_ascii_digit() {
            if v > LIMIT / 10 {
                return Err(invalid());
            }
            v = v * 10 + u64::from(b[i] - b'0');
            if v > LIMIT {
                return Err(invalid());
            }
            i += 1;
        }
        let pre = i > 0;
        s = &s[i..];
        // Fraction.
        let (mut f, mut scale, mut post) = (0u64, 1f64, false);
        if s.starts_with('.') {
            s = &s[1..];
            let b = s.as_bytes();
            let mut j = 0;
            let mut overflow = false;
            while j < b.len() && b[j].is_ascii_digit() {
                if !overflow {
                    if f > (LIMIT - 1) / 10 {
                        overflow = true;
                    } else {
                        let y = f * 10 + u64::from(b[j] - b'0');
                        if y > LIMIT {
                            overflow = true;
                        } else {
                            f = y;
                            scale *= 10.0;
                        }
                    }
                }
                j += 1;
            }
            post = j > 0;
            s = &s[j..];
        }
        if !pre && !post {
            return Err(invalid());
        }
        // Unit.
        let ub = s.as_bytes();
        let mut k = 0;
        while k < ub.len() && !(ub[k] == b'.' || ub[k].is_ascii_digit()) {
            k += 1;
        }
        if k == 0 {
            return Err(format!(
                "time: missing unit in duration {}",
                time_quote(orig)
            ));
        }
        let u = &s[..k];
        s = &s[k..];
        let unit: u64 = match u {
            "ns" => 1,
            "us" | "\u{b5}s" | "\u{3bc}s" => 1_000,
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            "m" => 60_000_000_000,
            "h" => 3_600_000_000_000,
            _ => {
                return Err(format!(
                    "time: unknown unit {} in duration {}",
                    time_quote(u),
                    time_quote(orig)
                ));
            }
        };
        if v > LIMIT / unit {
            return Err(invalid());
        }
        v *= unit;
        if f > 0 {
            v += (f as f64 * (unit as f64 / scale)) as u64;
            if v > LIMIT {
                return Err(invalid());
            }
        }
        d += v;
        if d > LIMIT {
            return Err(invalid());
        }
    }
    if neg {
        return Ok((d as i64).wrapping_neg());
    }
    if d > LIMIT - 1 {
        return Err(invalid());
    }
    Ok(d as i64)
}

fn timeadd(args: &[Value]) -> Result<Value, FuncError> {
    let t = cty_parse_timestamp(str_arg(args, 0)?).map_err(FuncError::General)?;
    let d = parse_duration(str_arg(args, 1)?).map_err(FuncError::General)?;
    let local = t
        .local
        .checked_add_signed(Duration::nanoseconds(d))
        .ok_or_else(|| FuncError::general("time out of range"))?;
    Ok(Value::string(rfc3339(&Stamp {
        local,
        offset: t.offset,
    })))
}

fn timecmp(args: &[Value]) -> Result<Value, FuncError> {
    let a = tf_parse_timestamp(str_arg(args, 0)?).map_err(|e| FuncError::arg(0, e))?;
    let b = tf_parse_timestamp(str_arg(args, 1)?).map_err(|e| FuncError::arg(1, e))?;
    let r = match a.instant().cmp(&b.instant()) {
        std::cmp::Ordering::Equal => 0,
        std::cmp::Ordering::Less => -1,
        std::cmp::Ordering::Greater => 1,
    };
    Ok(Value::int(r))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builtins::test_util::s;

    fn fd(f: &str, t: &str) -> Result<String, FuncError> {
        formatdate(&[s(f), s(t)]).map(|v| v.as_str().unwrap().to_string())
    }
    const T: &str = "2024-03-05T14:07:09Z";

    #[test]
    fn formatdate_recorded() {
        for (format, time, want) in [
            ("YYYY-MM-DD", T, "2024-03-05"),
            ("DD MMM YYYY hh:mm ZZZ", T, "05 Mar 2024 14:07 UTC"),
            ("EEEE, MMMM D, YY", T, "Tuesday, March 5, 24"),
            ("EEE", T, "Tue"),
            ("h:mm aa", T, "14:07 pm"),
            ("h:mm AA", "2024-03-05T00:07:09Z", "0:07 AM"),
            ("HH:mm:ss", "2024-03-05T04:07:09Z", "04:07:09"),
            ("H:m:s", "2024-03-05T04:07:09Z", "4:7:9"),
            ("M/D/YY", T, "3/5/24"),
            ("'Date:' YYYY 'at' hh'h'", T, "Date: 2024 at 14h"),
            ("''", T, "'"),
            ("ZZZZZ", "2024-03-05T14:07:09+05:30", "+05:30"),
            ("ZZZZ", "2024-03-05T14:07:09-08:00", "-0800"),
            ("Z", T, "Z"),
            ("ZZZ", "2024-03-05T14:07:09+02:00", "+0200"),
            ("hh:mm:ss.ss", "2024-03-05T14:07:09.125Z", "14:07:09.09"),
            (
                "YYYY-MM-DD'T'hh:mm:ssZ",
                "2024-12-31T23:59:59Z",
                "2024-12-31T23:59:59Z",
            ),
            ("YYYY", "1999-12-31T23:59:59-01:00", "1999"),
            ("DD", "2024-02-29T00:00:00Z", "29"),
            ("", T, ""),
            ("é YYYY ✓", T, "é 2024 ✓"),
            ("'it''s' HH", "2024-03-05T12:00:00Z", "it's 12"),
        ] {
            assert_eq!(fd(format, time).unwrap(), want, "{format} {time}");
        }
    }

    #[test]
    fn formatdate_errors() {
        let not_rfc3339 = "not a valid RFC3339 timestamp";
        for (format, time, arg, want) in [
            (
                "YYYY-MM-DD",
                "2024-03-05",
                1,
                format!("{not_rfc3339}: missing required time introducer 'T'"),
            ),
            (
                "YYYY",
                "2023-02-29T00:00:00Z",
                1,
                format!("{not_rfc3339}: day out of range"),
            ),
            (
                "YYYY",
                "not a date",
                1,
                format!("{not_rfc3339}: cannot use \"not a date\" as year"),
            ),
            ("'unterminated", T, 0, "unterminated literal '".into()),
            ("'", T, 0, "unterminated literal '".into()),
        ] {
            assert_eq!(
                fd(format, time),
                Err(FuncError::arg(arg, want)),
                "{format} {time}"
            );
        }
        for (verb, forms) in [
            ("x", ""),
            ("YYY", ": year must either be \"YY\" or \"YYYY\""),
            (
                "MMMMM",
                ": month must be \"M\", \"MM\", \"MMM\", or \"MMMM\"",
            ),
            ("DDD", ": day of month must either be \"D\" or \"DD\""),
            ("EE", ": day of week must either be \"EEE\" or \"EEEE\""),
            ("hhh", ": 24-hour must either be \"h\" or \"hh\""),
            ("HHH", ": 12-hour must either be \"H\" or \"HH\""),
            ("a", ": must be \"aa\""),
            ("AAA", ": must be \"AA\""),
            ("mmm", ": minute must either be \"m\" or \"mm\""),
            ("sss", ": second must either be \"s\" or \"ss\""),
            ("ZZ", ": timezone must be Z, ZZZZ, or ZZZZZ"),
        ] {
            let want = format!("invalid date format verb \"{verb}\"{forms}");
            assert_eq!(fd(verb, T), Err(FuncError::arg(0, want)), "{verb}");
        }
    }

    #[test]
    fn cty_timestamp_messages() {
        // cty's own test table for parseTimestamp.
        let cases = [
            (
                "2017-01-02T00:00:00",
                "not a valid RFC3339 timestamp: end of string before UTC offset",
            ),
            (
                "2017-01-02T26:00:00Z",
                "not a valid RFC3339 timestamp: hour must be between 0 and 23 inclusive",
            ),
            (
                "2017-13-02T00:00:00Z",
                "not a valid RFC3339 timestamp: cannot use \"-02T00:00:00Z\" as month",
            ),
            (
                "2017-02-31T00:00:00Z",
                "not a valid RFC3339 timestamp: day out of range",
            ),
            (
                "\"2017-12-02T00:00:00Z\"",
                "not a valid RFC3339 timestamp: cannot use \"\\\"2017-12-02T00:00:00Z\\\"\" as year",
            ),
            (
                "2-12-02T00:00:00Z",
                "not a valid RFC3339 timestamp: cannot use \"2-12-02T00:00:00Z\" as year",
            ),
            (
                "2000-01-01T1:12:34Z",
                "not a valid RFC3339 timestamp: hour must have exactly two digits",
            ),
            (
                "2000-01-01T01:1:34Z",
                "not a valid RFC3339 timestamp: minute must have exactly two digits",
            ),
            (
                "2000-01-01T01:01:1Z",
                "not a valid RFC3339 timestamp: cannot use \"1Z\" as second",
            ),
            (
                "2000-01-01T00:00:00,000Z",
                "not a valid RFC3339 timestamp: cannot use \",\" as timestamp segment",
            ),
            (
                "2000-01-01T00:00:00+24:00",
                "not a valid RFC3339 timestamp: cannot use \"+24:00\" as UTC offset",
            ),
            (
                "2000-01-01T00:00:00+00:60",
                "not a valid RFC3339 timestamp: cannot use \"+00:60\" as UTC offset",
            ),
            (
                "2017/01/02T00:00:00Z",
                "not a valid RFC3339 timestamp: found \"/01/02T00:00:00Z\" where \"-\" is expected",
            ),
            (
                "2017-01-02T00:00:00Zjunk",
                "not a valid RFC3339 timestamp: cannot use \"junk\" as timestamp segment",
            ),
            (
                "2017-01",
                "not a valid RFC3339 timestamp: end of string where \"-\" is expected",
            ),
            (
                "",
                "not a valid RFC3339 timestamp: end of string before year",
            ),
        ];
        for (input, want) in cases {
            assert_eq!(cty_parse_timestamp(input).unwrap_err(), want, "{input}");
        }
        // Empty is "end of string before year" since ValueElem is empty.
        let t = cty_parse_timestamp("2000-01-01T00:00:00.123456789123-01:30").unwrap();
        assert_eq!(t.offset, -5400);
        assert_eq!(t.local.nanosecond(), 123_456_789);
    }

    fn ta(t: &str, d: &str) -> Result<String, FuncError> {
        timeadd(&[s(t), s(d)]).map(|v| v.as_str().unwrap().to_string())
    }

    #[test]
    fn timeadd_cases() {
        for case in [
            "2024-01-31T00:00:00Z + 24h = 2024-02-01T00:00:00Z",
            "2024-03-10T12:00:00Z + -1h30m = 2024-03-10T10:30:00Z",
            "2024-01-01T00:00:00+05:00 + 10m = 2024-01-01T00:10:00+05:00",
            "2024-01-01T00:00:00Z + 1.5h = 2024-01-01T01:30:00Z",
            "2024-01-01T00:00:00.9Z + 100ms = 2024-01-01T00:00:01Z",
            "9999-12-31T23:59:59Z + 1s = 10000-01-01T00:00:00Z",
            "2024-01-01T00:00:00-00:00 + 0 = 2024-01-01T00:00:00Z",
        ] {
            let (sum, want) = case.split_once(" = ").unwrap();
            let (time, duration) = sum.split_once(" + ").unwrap();
            assert_eq!(ta(time, duration).unwrap(), want, "{case}");
        }
        for (time, duration, want) in [
            (
                "2024-01-01T00:00:00Z",
                "1d",
                "time: unknown unit \"d\" in duration \"1d\"",
            ),
            (
                "2024-01-01",
                "1h",
                "not a valid RFC3339 timestamp: missing required time introducer 'T'",
            ),
            ("2024-01-01T00:00:00Z", "", "time: invalid duration \"\""),
            (
                "2024-01-01T00:00:00Z",
                "5",
                "time: missing unit in duration \"5\"",
            ),
            (
                "2024-01-01T00:00:00Z",
                "9999999999999h",
                "time: invalid duration \"9999999999999h\"",
            ),
            (
                "2024-01-01T00:00:00Z",
                "1é",
                "time: unknown unit \"\\xc3\\xa9\" in duration \"1\\xc3\\xa9\"",
            ),
        ] {
            let got = ta(time, duration);
            assert_eq!(got, Err(FuncError::general(want)), "{time} + {duration}");
        }
        assert_eq!(parse_duration("1µs"), Ok(1000));
        assert_eq!(parse_duration("-.5s"), Ok(-500_000_000));
        assert_eq!(parse_duration("+3ns"), Ok(3));
    }

    fn tc(a: &str, b: &str) -> Result<i64, FuncError> {
        timecmp(&[s(a), s(b)]).map(|v| v.as_number().unwrap().to_i64().unwrap())
    }

    #[test]
    fn timecmp_cases() {
        for (a, b, want) in [
            ("2024-01-01T00:00:00Z", "2024-01-01T01:00:00+01:00", 0),
            ("2024-01-01T00:00:00Z", "2024-01-02T00:00:00Z", -1),
            ("2024-01-02T00:00:00Z", "2024-01-01T00:00:00Z", 1),
            // Terraform's parser is Go's lenient one: a one-digit hour is accepted.
            ("2024-01-01T1:00:00Z", "2024-01-01T01:00:00Z", 0),
            ("2024-01-01T00:00:00.5Z", "2024-01-01T00:00:00,5Z", 0),
        ] {
            assert_eq!(tc(a, b).unwrap(), want, "{a} {b}");
        }
        for (a, b, arg, want) in [
            (
                "bad",
                "2024-01-01T00:00:00Z",
                0,
                "cannot use \"bad\" as year",
            ),
            (
                "2024-01-01T00:00:00Z",
                "2024-01-01T01:1:34Z",
                1,
                "cannot use \"1:34Z\" as minute",
            ),
        ] {
            let want = format!("not a valid RFC3339 timestamp: {want}");
            assert_eq!(tc(a, b), Err(FuncError::arg(arg, want)), "{a} {b}");
        }
    }
}
