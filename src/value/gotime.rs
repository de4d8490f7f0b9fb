//! Pieces of Go's `time` package that two parsers here follow: YAML's timestamps
//! (go-cty-yaml, `time.Parse` with its layouts) and the date functions (`formatdate`,
//! `timeadd`): one copy of each.

/// Go's `isLeap`.
fn is_leap(year: i64) -> bool {
    year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
}

/// The days of `month` (1 to 12) in `year`.
pub fn days_in(month: i64, year: i64) -> i64 {
    match month {
        2 if is_leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Go's `getnum`: a number of one or two digits (exactly two when `fixed`) and the rest.
pub fn getnum(s: &[u8], fixed: bool) -> Option<(i64, &[u8])> {
    let d = |i: usize| s.get(i).is_some_and(u8::is_ascii_digit);
    if !d(0) {
        return None;
    }
    if !d(1) {
        if fixed {
            return None;
        }
        return Some((i64::from(s[0] - b'0'), &s[1..]));
    }
    Some((
        i64::from(s[0] - b'0') * 10 + i64::from(s[1] - b'0'),
        &s[2..],
    ))
}
