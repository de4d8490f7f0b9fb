//! PROVISIONAL: replaced by the exact cty number implementation (512-bit binary floats).
//! Only the public API here is stable; see the number task. The bodies below are f64-based
//! stand-ins with the agreed signatures so that other modules can compile and be tested.

use std::cmp::Ordering;
use std::hash::{Hash, Hasher};

/// A cty number.
#[derive(Clone, Debug)]
pub enum Number {
    Int(i64),
    Float(f64),
}

/// A failed arithmetic operation, with cty's message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NumError(pub String);

impl std::fmt::Display for NumError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
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
        } else if f.fract() == 0.0 && f.abs() < 9.0e15 {
            Some(Number::Int(f as i64))
        } else {
            Some(Number::Float(f))
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
    pub fn add(&self, o: &Number) -> Result<Number, NumError> {
        if let (Number::Int(a), Number::Int(b)) = (self, o)
            && let Some(c) = a.checked_add(*b)
        {
            return Ok(Number::Int(c));
        }
        let r = self.to_f64() + o.to_f64();
        Number::from_f64(r).ok_or_else(|| NumError("can't compute infinity minus infinity".into()))
    }
    pub fn sub(&self, o: &Number) -> Result<Number, NumError> {
        self.add(&o.neg())
    }
    pub fn mul(&self, o: &Number) -> Result<Number, NumError> {
        if let (Number::Int(a), Number::Int(b)) = (self, o)
            && let Some(c) = a.checked_mul(*b)
        {
            return Ok(Number::Int(c));
        }
        Number::from_f64(self.to_f64() * o.to_f64())
            .ok_or_else(|| NumError("can't multiply zero by infinity".into()))
    }
    pub fn div(&self, o: &Number) -> Result<Number, NumError> {
        let (a, b) = (self.to_f64(), o.to_f64());
        if (a == 0.0 && b == 0.0) || (a.is_infinite() && b.is_infinite()) {
            return Err(NumError(
                "can't divide zero by zero or infinity by infinity".into(),
            ));
        }
        if let (Number::Int(x), Number::Int(y)) = (self, o)
            && *y != 0
            && x % y == 0
        {
            return Ok(Number::Int(x / y));
        }
        Number::from_f64(a / b).ok_or_else(|| NumError("division failed".into()))
    }
    pub fn rem(&self, o: &Number) -> Result<Number, NumError> {
        if let (Number::Int(x), Number::Int(y)) = (self, o)
            && *y != 0
        {
            return Ok(Number::Int(x % y));
        }
        let (a, b) = (self.to_f64(), o.to_f64());
        if b == 0.0 || a.is_infinite() {
            return Err(NumError(
                "can't use modulo with zero and infinity".into(),
            ));
        }
        Number::from_f64(a % b).ok_or_else(|| NumError("modulo failed".into()))
    }
    pub fn neg(&self) -> Number {
        match self {
            Number::Int(i) if *i != i64::MIN => Number::Int(-i),
            _ => Number::Float(-self.to_f64()),
        }
    }
    /// Go's `big.Float.Text(fmt, prec)` (stand-in: only what f64 formatting can give).
    pub fn text(&self, fmt: u8, prec: i32) -> String {
        let f = self.to_f64();
        if f.is_infinite() {
            return if f > 0.0 { "+Inf".into() } else { "-Inf".into() };
        }
        match fmt {
            b'g' | b'G' if prec > 0 => {
                if f == 0.0 {
                    return "0".into();
                }
                let s = format!("{:.*e}", (prec - 1) as usize, f);
                let (mant, exp) = s.split_once('e').unwrap_or((&s, "0"));
                let exp: i32 = exp.parse().unwrap_or(0);
                let mant = if mant.contains('.') {
                    mant.trim_end_matches('0').trim_end_matches('.')
                } else {
                    mant
                };
                if exp < -4 || exp >= prec {
                    let sign = if exp < 0 { '-' } else { '+' };
                    format!("{mant}e{sign}{:02}", exp.abs())
                } else {
                    let v: f64 = format!("{mant}e{exp}").parse().unwrap_or(f);
                    format!("{v}")
                }
            }
            _ => match self {
                Number::Int(i) => i.to_string(),
                Number::Float(f) => format!("{f}"),
            },
        }
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
