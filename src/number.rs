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
    pub fn cmp_num(&self, other: &Number) -> Ordering {
        self.to_f64().total_cmp(&other.to_f64())
    }
}

impl PartialEq for Number {
    fn eq(&self, other: &Number) -> bool {
        self.cmp_num(other) == Ordering::Equal
    }
}
