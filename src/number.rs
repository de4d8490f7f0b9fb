//! PROVISIONAL: replaced by the exact cty number implementation (512-bit binary floats).
//! Only the public API here is stable; see the number task. The bodies below are f64-based
//! stand-ins with the agreed signatures so that other modules can compile and be tested.

use num_bigint::BigInt;
use num_traits::{FromPrimitive, ToPrimitive};
use std::cmp::Ordering;
use std::hash::{Hash, Hasher};

/// A cty number.
#[derive(Clone, Debug)]
pub enum Number {
    Int(i64),
    Float(f64),
}

impl Number {
    pub fn from_i64(i: i64) -> Number {
        Number::Int(i)
    }
    pub fn from_u64(u: u64) -> Number {
        i64::try_from(u)
            .map(Number::Int)
            .unwrap_or(Number::Float(u as f64))
    }
    pub fn from_f64(f: f64) -> Option<Number> {
        if f.is_nan() {
            None
        } else if f.fract() == 0.0 && f.abs() < 9.0e15 && !(f == 0.0 && f.is_sign_negative()) {
            Some(Number::Int(f as i64))
        } else {
            Some(Number::Float(f))
        }
    }
    pub fn from_bigint(b: &BigInt) -> Number {
        match b.to_i64() {
            Some(i) => Number::Int(i),
            None => Number::Float(b.to_f64().unwrap_or(f64::INFINITY)),
        }
    }
    pub fn infinity(negative: bool) -> Number {
        Number::Float(if negative {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        })
    }
    /// Decimal text (finite syntax only).
    pub fn parse(s: &str) -> Option<Number> {
        let b = s.as_bytes();
        let mut i = 0;
        if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
            i += 1;
        }
        let ds = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        let mut nd = i - ds;
        if i < b.len() && b[i] == b'.' {
            i += 1;
            let fs = i;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            nd += i - fs;
        }
        if nd == 0 {
            return None;
        }
        if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
            i += 1;
            if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
                i += 1;
            }
            let es = i;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            if i == es {
                return None;
            }
        }
        if i != b.len() {
            return None;
        }
        if let Ok(v) = s.parse::<i64>() {
            return Some(Number::Int(v));
        }
        s.parse::<f64>().ok().and_then(Number::from_f64)
    }
    pub fn to_f64(&self) -> f64 {
        match self {
            Number::Int(i) => *i as f64,
            Number::Float(f) => *f,
        }
    }
    pub fn to_i64(&self) -> Option<i64> {
        match self {
            Number::Int(i) => Some(*i),
            Number::Float(f) => {
                if f.fract() == 0.0 && f.abs() < 9.2e18 {
                    Some(*f as i64)
                } else {
                    None
                }
            }
        }
    }
    pub fn to_bigint(&self) -> Option<BigInt> {
        match self {
            Number::Int(i) => Some(BigInt::from(*i)),
            Number::Float(f) if f.is_finite() && f.fract() == 0.0 => BigInt::from_f64(*f),
            Number::Float(_) => None,
        }
    }
    pub fn is_integer(&self) -> bool {
        match self {
            Number::Int(_) => true,
            Number::Float(f) => f.is_finite() && f.fract() == 0.0,
        }
    }
    pub fn is_infinite(&self) -> bool {
        matches!(self, Number::Float(f) if f.is_infinite())
    }
    pub fn is_zero(&self) -> bool {
        self.to_f64() == 0.0
    }
    pub fn is_negative(&self) -> bool {
        self.to_f64().is_sign_negative()
    }
    pub fn signum(&self) -> i32 {
        match self.to_f64() {
            f if f > 0.0 => 1,
            f if f < 0.0 => -1,
            _ => 0,
        }
    }
    pub fn neg(&self) -> Number {
        match self {
            Number::Int(i) if *i != i64::MIN && *i != 0 => Number::Int(-i),
            _ => Number::Float(-self.to_f64()),
        }
    }

    /// Go's `big.Float.Text(fmt, prec)` (stand-in: f64 digits, Go's layout rules).
    pub fn text(&self, fmt: u8, prec: i32) -> String {
        let f = self.to_f64();
        if f.is_infinite() {
            return if f > 0.0 {
                "+Inf".into()
            } else {
                "-Inf".into()
            };
        }
        let neg = f.is_sign_negative();
        let a = f.abs();
        let mut out = String::new();
        if neg {
            out.push('-');
        }
        let upper = fmt == b'E' || fmt == b'G';
        let e_char = if upper { 'E' } else { 'e' };
        match fmt {
            b'f' => {
                if prec < 0 {
                    match self {
                        Number::Int(i) => out.push_str(&i.unsigned_abs().to_string()),
                        Number::Float(_) => out.push_str(&format!("{a}")),
                    }
                } else {
                    out.push_str(&format!("{:.*}", prec as usize, a));
                }
            }
            b'e' | b'E' => {
                let (digits, exp) = decimal_digits(a, if prec < 0 { None } else { Some(prec + 1) });
                let p = if prec < 0 {
                    digits.len() as i32 - 1
                } else {
                    prec
                };
                fmt_e(&mut out, &digits, exp, p, e_char);
            }
            _ => {
                let shortest = prec < 0;
                let mut prec = if prec == 0 { 1 } else { prec };
                let (digits, exp) = decimal_digits(a, if shortest { None } else { Some(prec) });
                if shortest {
                    prec = digits.len() as i32;
                }
                let mut eprec = prec;
                if eprec > digits.len() as i32 && digits.len() as i32 >= exp {
                    eprec = digits.len() as i32;
                }
                if shortest {
                    eprec = 6;
                }
                let x = exp - 1;
                if a != 0.0 && (x < -4 || x >= eprec) {
                    if prec > digits.len() as i32 {
                        prec = digits.len() as i32;
                    }
                    fmt_e(&mut out, &digits, exp, prec - 1, e_char);
                } else {
                    if prec > exp {
                        prec = digits.len() as i32;
                    }
                    let fp = (prec - exp).max(0);
                    fmt_f(&mut out, &digits, exp, fp);
                }
            }
        }
        out
    }
    /// How cty turns a number into a string (`text(b'f', -1)`).
    pub fn to_cty_string(&self) -> String {
        self.text(b'f', -1)
    }
    pub fn cmp_num(&self, other: &Number) -> Ordering {
        match (self, other) {
            (Number::Int(a), Number::Int(b)) => a.cmp(b),
            _ => self.to_f64().total_cmp(&other.to_f64()),
        }
    }
}

/// Significant digits (no trailing zeros) and decimal-point position of a non-negative
/// finite f64: value = 0.DIGITS × 10^exp.
fn decimal_digits(a: f64, sig: Option<i32>) -> (Vec<u8>, i32) {
    if a == 0.0 {
        return (Vec::new(), 0);
    }
    let s = match sig {
        None => format!("{a:e}"),
        Some(n) => format!("{:.*e}", (n.max(1) - 1) as usize, a),
    };
    let (m, e) = s.split_once('e').unwrap_or((&s, "0"));
    let e: i32 = e.parse().unwrap_or(0);
    let mut digits: Vec<u8> = m.bytes().filter(u8::is_ascii_digit).collect();
    while digits.last() == Some(&b'0') {
        digits.pop();
    }
    (digits, e + 1)
}

fn fmt_e(out: &mut String, digits: &[u8], exp: i32, prec: i32, e_char: char) {
    let first = digits.first().copied().unwrap_or(b'0');
    out.push(first as char);
    if prec > 0 {
        out.push('.');
        let mut i = 1;
        let m = (digits.len() as i32).min(prec + 1);
        while i < m {
            out.push(digits[i as usize] as char);
            i += 1;
        }
        while i <= prec {
            out.push('0');
            i += 1;
        }
    }
    out.push(e_char);
    let x = if digits.is_empty() { 0 } else { exp - 1 };
    if x < 0 {
        out.push('-');
    } else {
        out.push('+');
    }
    let xa = x.unsigned_abs();
    if xa < 10 {
        out.push('0');
    }
    out.push_str(&xa.to_string());
}

fn fmt_f(out: &mut String, digits: &[u8], exp: i32, prec: i32) {
    if exp > 0 {
        for i in 0..exp {
            out.push(digits.get(i as usize).copied().unwrap_or(b'0') as char);
        }
    } else {
        out.push('0');
    }
    if prec > 0 {
        out.push('.');
        for i in 0..prec {
            let idx = exp + i;
            let ch = if idx >= 0 {
                digits.get(idx as usize).copied().unwrap_or(b'0')
            } else {
                b'0'
            };
            out.push(ch as char);
        }
    }
}

impl PartialEq for Number {
    fn eq(&self, other: &Number) -> bool {
        self.cmp_num(other) == Ordering::Equal
    }
}
impl Eq for Number {}
impl PartialOrd for Number {
    fn partial_cmp(&self, other: &Number) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Number {
    fn cmp(&self, other: &Number) -> Ordering {
        self.cmp_num(other)
    }
}
impl Hash for Number {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.to_f64().to_bits().hash(state)
    }
}
