//! PROVISIONAL: replaced by the exact cty number implementation (512-bit binary floats).
//! Only the public API here is stable; see the number task.

use std::cmp::Ordering;

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
    pub fn to_f64(&self) -> f64 {
        match self {
            Number::Int(i) => *i as f64,
            Number::Float(f) => *f,
        }
    }
    /// PROVISIONAL (protocol branch): see the Number API in COMMON.md.
    pub fn from_f64(f: f64) -> Option<Number> {
        if f.is_nan() {
            None
        } else {
            Some(Number::Float(f))
        }
    }
    /// PROVISIONAL (protocol branch): finite decimal text only.
    pub fn parse(s: &str) -> Option<Number> {
        if let Ok(i) = s.parse::<i64>() {
            return Some(Number::Int(i));
        }
        match s.parse::<f64>() {
            Ok(f)
                if f.is_finite()
                    && !s.contains(|c: char| c.is_ascii_alphabetic() && c != 'e' && c != 'E') =>
            {
                Some(Number::Float(f))
            }
            _ => None,
        }
    }
    /// PROVISIONAL (protocol branch).
    pub fn infinity(negative: bool) -> Number {
        Number::Float(if negative {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        })
    }
    /// PROVISIONAL (protocol branch).
    pub fn is_infinite(&self) -> bool {
        matches!(self, Number::Float(f) if f.is_infinite())
    }
    /// PROVISIONAL (protocol branch): not cty's exact text.
    pub fn to_cty_string(&self) -> String {
        match self {
            Number::Int(i) => i.to_string(),
            Number::Float(f) => f.to_string(),
        }
    }
    pub fn cmp_num(&self, other: &Number) -> Ordering {
        self.to_f64().total_cmp(&other.to_f64())
    }
}

impl PartialEq for Number {
    fn eq(&self, other: &Number) -> bool {
        self.cmp_num(other) == Ordering::Equal
    }
}
