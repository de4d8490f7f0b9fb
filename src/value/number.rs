//! cty's numbers, exactly: Go `math/big.Float` values with their precision, rounding to
//! nearest even after every operation, formatted with Go's `Float.Text`.
//!
//! cty keeps every number as a `*big.Float`. Literals and JSON numbers are parsed at 512
//! bits (`big.ParseFloat(s, 10, 512, ToNearestEven)`), but values made by functions carry
//! other precisions: `NumberIntVal` 64 bits, `NumberFloatVal` 53 bits, `SetInt` the integer's
//! bit length (at least 64). The precision is observable: results of `+ - /` get the larger
//! operand precision, `*` keeps the exact 512-bit product, and `tostring` prints the shortest
//! decimal that round-trips *at the value's precision*. So every [`Number`] carries its
//! precision, as Go does.
//!
//! Representation: most numbers in Kubernetes documents are small integers, so a value that
//! is an integer fitting `i64` is stored inline (`Small`); everything else (fractions, huge
//! integers, ±Inf, -0) is an `Arc`ed sign/odd-mantissa/binary-exponent triple (`Big`).
//! `Number` is 16 bytes.
//!
//! Limits (documented divergences from Go, which only matter for absurd inputs):
//! - Go's exponent range is ±2³¹ bits; here a result whose magnitude reaches 2^[`EXP_LIMIT`]
//!   (about 1e39456) overflows to ±Inf and one below 2^-[`EXP_LIMIT`] underflows to ±0, the
//!   way Go does at its own bounds. This keeps printing and integer conversion bounded
//!   (`1e1000000000` is +Inf in Go and here; `1e100000` is finite in Go, refused here).
//!   Where Go's value would be finite and non-zero, fn-hcl refuses instead of answering
//!   ±Inf or 0: a literal beyond the range fails the program's load, text converted at run
//!   time (`tonumber`, `jsondecode`, ...) and arithmetic results fail with
//!   [`NumError::OutOfRange`] ([`Number::parse_in_range`], [`in_range`]).
//! - Decimal text with more than [`MAX_PARSE_DIGITS`] significant digits is parsed from its
//!   first digits plus a sticky digit, so rounding may differ from Go for crafted inputs.
//! - `parseint` results wider than [`EXP_LIMIT`] bits are rejected by the builtin.

use crate::value::meter;
use num_bigint::{BigInt, BigUint, Sign};
use num_integer::Integer;
use num_traits::{One, ToPrimitive, Zero};
use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

/// cty's precision for parsed numbers, in mantissa bits.
pub const PREC: u32 = 512;
/// Binary exponent bound: finite numbers satisfy 2^-EXP_LIMIT <= |x| < 2^EXP_LIMIT.
pub const EXP_LIMIT: i64 = 1 << 17;
/// Significant digits of decimal text parsed exactly (see the module docs).
pub const MAX_PARSE_DIGITS: usize = 40_000;

/// A failed arithmetic operation; `Display` is cty's message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NumError {
    /// `+Inf + -Inf`.
    OpposingInfinities,
    /// `Inf - Inf`.
    InfinityMinusInfinity,
    /// `0 * Inf`.
    ZeroTimesInfinity,
    /// `0 / 0` or `Inf / Inf`.
    ZeroByZero,
    /// `x % Inf` and similar.
    ModuloInfinity,
    /// `Inf % x`: a nil-pointer panic inside cty's Modulo, reported by its function wrapper
    /// (the Go stack trace that follows the message is not reproduced).
    ModuloOfInfinity,
    /// A float64 function produced NaN (`Float.SetFloat64(NaN)` panics in Go).
    NaN,
    /// A number outside float64's range passed to a float64 function.
    FloatRange,
    /// A finite, non-zero value beyond fn-hcl's exponent range ([`EXP_LIMIT`]): Go keeps
    /// it, fn-hcl refuses it rather than answer ±Inf or 0.
    OutOfRange,
}

impl fmt::Display for NumError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            NumError::OpposingInfinities => "can't compute sum of opposing infinities",
            NumError::InfinityMinusInfinity => "can't subtract infinity from itself",
            NumError::ZeroTimesInfinity => "can't multiply zero by infinity",
            NumError::ZeroByZero => "can't divide zero by zero or infinity by infinity",
            NumError::ModuloInfinity => "can't use modulo with zero and infinity",
            NumError::ModuloOfInfinity => {
                "panic in function implementation: runtime error: invalid memory address or nil pointer dereference"
            }
            NumError::NaN => "panic in function implementation: Float.SetFloat64(NaN)",
            NumError::FloatRange => FLOAT_RANGE_MSG,
            NumError::OutOfRange => OUT_OF_RANGE_MSG,
        })
    }
}

impl std::error::Error for NumError {}

/// gocty's message for a number that does not fit a float64.
const FLOAT_RANGE_MSG: &str = "value must be between -179769313486231570814527423731704356798070567525844996598917476803157260780028538760589558632766878171540458953514382464234321326889464182768467546703537516986049910576551282076245490090389328944075868508455133942304583236903222948165808559332123348274797826204144723168738177180919299881250404026184124858368.000000 and 179769313486231570814527423731704356798070567525844996598917476803157260780028538760589558632766878171540458953514382464234321326889464182768467546703537516986049910576551282076245490090389328944075868508455133942304583236903222948165808559332123348274797826204144723168738177180919299881250404026184124858368.000000 inclusive";

/// fn-hcl's message for a value beyond its number range (see [`NumError::OutOfRange`]).
pub const OUT_OF_RANGE_MSG: &str = "number out of range: fn-hcl holds magnitudes between 2^-131072 and 2^131072 (about 1e-39457 to 1e39456) exactly; this value is beyond them";

/// `r`, the result of an operation on `x` and `y`, unless the operation left fn-hcl's
/// range: ±Inf from finite operands, or 0 from a product or quotient of non-zero finite
/// ones (Go's exponent range is far wider and would keep a finite, non-zero value).
/// `x / 0` is ±Inf in Go too, so a zero divisor is not checked here.
fn in_range(
    x: &Number,
    y: &Number,
    r: Number,
    zero_is_underflow: bool,
) -> Result<Number, NumError> {
    let finite = |n: &Number| !n.is_infinite();
    let overflow = r.is_infinite() && finite(x) && finite(y) && !y.is_zero();
    let underflow =
        zero_is_underflow && r.is_zero() && finite(x) && finite(y) && !x.is_zero() && !y.is_zero();
    if overflow || underflow {
        Err(NumError::OutOfRange)
    } else {
        Ok(r)
    }
}

/// A cty number: a binary float with its own precision, like Go's `big.Float`.
#[derive(Clone)]
pub struct Number(Repr);

#[derive(Clone)]
enum Repr {
    /// An integer; invariant: `bitlen(|v|)` significant bits fit `prec`, and zero is +0.
    Small { v: i64, prec: u32 },
    /// Anything else.
    Big(Arc<F>),
}

/// Working form of a float (Go's `big.Float` without rounding mode/accuracy).
#[derive(Clone, Debug, PartialEq, Eq)]
struct F {
    prec: u32,
    neg: bool,
    k: K,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum K {
    Zero,
    Inf,
    /// `m * 2^e` with `m` odd.
    Fin {
        m: BigUint,
        e: i64,
    },
}

/// Bounds on Go's exponent (`x = 0.mant * 2^exp`).
#[derive(Clone, Copy)]
struct Lim {
    min: i64,
    max: i64,
}

const LIM_NUM: Lim = Lim {
    min: -EXP_LIMIT,
    max: EXP_LIMIT,
};
const LIM_GO: Lim = Lim {
    min: i32::MIN as i64,
    max: i32::MAX as i64,
};

/// Not-a-number marker from a Go operation that would panic with `ErrNaN`.
struct NaNErr;

fn bitlen_u64(x: u64) -> u32 {
    64 - x.leading_zeros()
}

/// Significant bits of `|v|` (bit length without trailing zeros).
fn sig_bits(v: i64) -> u32 {
    let a = v.unsigned_abs();
    if a == 0 {
        0
    } else {
        bitlen_u64(a >> a.trailing_zeros())
    }
}

impl F {
    fn zero(prec: u32, neg: bool) -> F {
        F {
            prec,
            neg,
            k: K::Zero,
        }
    }
    fn inf(prec: u32, neg: bool) -> F {
        F {
            prec,
            neg,
            k: K::Inf,
        }
    }
    fn is_zero(&self) -> bool {
        matches!(self.k, K::Zero)
    }
    fn is_inf(&self) -> bool {
        matches!(self.k, K::Inf)
    }
    /// Exact integer (prec is the caller's).
    fn from_u64(v: u64, prec: u32, neg: bool) -> F {
        if v == 0 {
            return F::zero(prec, neg);
        }
        let tz = v.trailing_zeros();
        F {
            prec,
            neg,
            k: K::Fin {
                m: BigUint::from(v >> tz),
                e: tz as i64,
            },
        }
    }
    /// Go's `MinPrec`: bits needed to represent the value exactly.
    fn min_prec(&self) -> u32 {
        match &self.k {
            K::Fin { m, .. } => m.bits() as u32,
            _ => 0,
        }
    }
}

/// Round `(-1)^neg * (m + sticky) * 2^e` to `prec` bits, nearest even (Go's
/// `setExpAndRound`), with exponent bounds `lim`. `m == 0` gives a zero of sign `neg`.
fn round(neg: bool, m: BigUint, e: i64, sticky: bool, prec: u32, lim: Lim) -> F {
    if m.is_zero() {
        return F::zero(prec, neg);
    }
    let b = m.bits() as i64;
    if e + b < lim.min {
        return F::zero(prec, neg);
    }
    let prec_i = prec.max(1) as i64;
    let (mut q, mut e2) = if b > prec_i {
        let sh = (b - prec_i) as u64;
        let half = m.bit(sh - 1);
        let below = sticky || m.trailing_zeros().is_some_and(|tz| tz < sh - 1);
        let mut q = &m >> sh;
        let mut e2 = e + sh as i64;
        if half && (below || q.bit(0)) {
            q += 1u32;
            if q.bits() as i64 > prec_i {
                q >>= 1u32;
                e2 += 1;
            }
        }
        (q, e2)
    } else {
        (m, e)
    };
    if let Some(tz) = q.trailing_zeros()
        && tz > 0
    {
        q >>= tz;
        e2 += tz as i64;
    }
    if e2 + q.bits() as i64 > lim.max {
        return F::inf(prec, neg);
    }
    F {
        prec,
        neg,
        k: K::Fin { m: q, e: e2 },
    }
}

/// `x` rounded to `prec` (Go's `z.Set(x)` into a receiver of precision `prec`).
fn set_prec(x: &F, prec: u32, lim: Lim) -> F {
    match &x.k {
        K::Fin { m, e } => round(x.neg, m.clone(), *e, false, prec, lim),
        _ => F {
            prec,
            neg: x.neg,
            k: x.k.clone(),
        },
    }
}

/// Compare magnitudes of two finite values.
fn cmp_abs_fin(m1: &BigUint, e1: i64, m2: &BigUint, e2: i64) -> Ordering {
    let g1 = e1 + m1.bits() as i64;
    let g2 = e2 + m2.bits() as i64;
    if g1 != g2 {
        return g1.cmp(&g2);
    }
    let e = e1.min(e2);
    let a = m1 << ((e1 - e) as u64);
    let b = m2 << ((e2 - e) as u64);
    a.cmp(&b)
}

/// Go's `Float.Add` into a receiver of precision `prec`.
fn go_add(x: &F, y: &F, prec: u32, lim: Lim) -> Result<F, NaNErr> {
    match (&x.k, &y.k) {
        (K::Fin { m: m1, e: e1 }, K::Fin { m: m2, e: e2 }) => {
            let e = (*e1).min(*e2);
            let a = m1 << ((e1 - e) as u64);
            let b = m2 << ((e2 - e) as u64);
            if x.neg == y.neg {
                Ok(round(x.neg, a + b, e, false, prec, lim))
            } else {
                match a.cmp(&b) {
                    Ordering::Greater => Ok(round(x.neg, a - b, e, false, prec, lim)),
                    Ordering::Equal => Ok(F::zero(prec, false)),
                    Ordering::Less => Ok(round(!x.neg, b - a, e, false, prec, lim)),
                }
            }
        }
        (K::Inf, K::Inf) if x.neg != y.neg => Err(NaNErr),
        (K::Zero, K::Zero) => Ok(F::zero(prec, x.neg && y.neg)),
        (K::Inf, _) | (_, K::Zero) => Ok(set_prec(x, prec, lim)),
        _ => Ok(set_prec(y, prec, lim)),
    }
}

fn negated(x: &F) -> F {
    F {
        prec: x.prec,
        neg: !x.neg,
        k: x.k.clone(),
    }
}

/// Go's `Float.Mul` into a receiver of precision `prec`.
fn go_mul(x: &F, y: &F, prec: u32, lim: Lim) -> Result<F, NaNErr> {
    let neg = x.neg != y.neg;
    match (&x.k, &y.k) {
        (K::Fin { m: m1, e: e1 }, K::Fin { m: m2, e: e2 }) => {
            Ok(round(neg, m1 * m2, e1 + e2, false, prec, lim))
        }
        (K::Zero, K::Inf) | (K::Inf, K::Zero) => Err(NaNErr),
        (K::Inf, _) | (_, K::Inf) => Ok(F::inf(prec, neg)),
        _ => Ok(F::zero(prec, neg)),
    }
}

/// Go's `Float.Quo` into a receiver of precision `prec`.
fn go_quo(x: &F, y: &F, prec: u32, lim: Lim) -> Result<F, NaNErr> {
    let neg = x.neg != y.neg;
    match (&x.k, &y.k) {
        (K::Fin { m: m1, e: e1 }, K::Fin { m: m2, e: e2 }) => {
            let want = prec.max(1) as i64 + 2;
            let s = (want + m2.bits() as i64 - m1.bits() as i64).max(0);
            let num = m1 << (s as u64);
            let (q, r) = num.div_rem(m2);
            Ok(round(neg, q, e1 - e2 - s, !r.is_zero(), prec, lim))
        }
        (K::Zero, K::Zero) | (K::Inf, K::Inf) => Err(NaNErr),
        (K::Zero, _) | (_, K::Inf) => Ok(F::zero(prec, neg)),
        _ => Ok(F::inf(prec, neg)),
    }
}

/// Truncation toward zero of a finite value (Go's `Float.Int`), and whether it was exact.
fn trunc_int(x: &F) -> Option<(BigInt, bool)> {
    match &x.k {
        K::Zero => Some((BigInt::zero(), true)),
        K::Inf => None,
        K::Fin { m, e } => {
            let (mag, exact) = if *e >= 0 {
                (m << (*e as u64), true)
            } else {
                let sh = (-*e) as u64;
                (m >> sh, false)
            };
            let sign = if x.neg { Sign::Minus } else { Sign::Plus };
            Some((BigInt::from_biguint(sign, mag), exact))
        }
    }
}

/// Go's `SetInt` into a receiver of precision `prec` (0: max(bitlen, 64), exact).
fn set_int(i: &BigInt, prec: u32, lim: Lim) -> F {
    let mag = i.magnitude().clone();
    let prec = if prec == 0 {
        (mag.bits() as u32).max(64)
    } else {
        prec
    };
    round(i.sign() == Sign::Minus, mag, 0, false, prec, lim)
}

impl Number {
    fn small(v: i64, prec: u32) -> Number {
        Number(Repr::Small { v, prec })
    }

    /// Canonical form: integers fitting i64 (and +0) inline.
    fn from_f(f: F) -> Number {
        match &f.k {
            K::Zero if !f.neg => return Number::small(0, f.prec),
            K::Fin { m, e } if *e >= 0 && m.bits() as i64 + *e <= 63 => {
                if let Some(u) = m.to_u64() {
                    let mag = (u << *e) as i64;
                    return Number::small(if f.neg { -mag } else { mag }, f.prec);
                }
            }
            _ => {}
        }
        Number(Repr::Big(Arc::new(f)))
    }

    fn to_f(&self) -> F {
        match &self.0 {
            Repr::Small { v, prec } => F::from_u64(v.unsigned_abs(), *prec, *v < 0),
            Repr::Big(f) => (**f).clone(),
        }
    }

    /// Borrow-or-build the working form.
    fn with_f<R>(&self, g: impl FnOnce(&F) -> R) -> R {
        match &self.0 {
            Repr::Small { .. } => g(&self.to_f()),
            Repr::Big(f) => g(f),
        }
    }

    /// The value's precision in bits (Go's `Prec`).
    pub fn prec(&self) -> u32 {
        match &self.0 {
            Repr::Small { prec, .. } => *prec,
            Repr::Big(f) => f.prec,
        }
    }

    /// cty `NumberIntVal`: exact, 64-bit precision.
    pub fn from_i64(i: i64) -> Number {
        Number::small(i, 64)
    }

    /// `SetUint64`: exact, 64-bit precision.
    pub fn from_u64(u: u64) -> Number {
        match i64::try_from(u) {
            Ok(i) => Number::small(i, 64),
            Err(_) => Number::from_f(F::from_u64(u, 64, false)),
        }
    }

    /// cty `NumberFloatVal`: the exact binary value at 53-bit precision; `None` for NaN.
    pub fn from_f64(x: f64) -> Option<Number> {
        if x.is_nan() {
            return None;
        }
        let neg = x.is_sign_negative();
        if x.is_infinite() {
            return Some(Number::from_f(F::inf(53, neg)));
        }
        if x == 0.0 {
            return Some(Number::from_f(F::zero(53, neg)));
        }
        let bits = x.to_bits();
        let exp_field = ((bits >> 52) & 0x7ff) as i64;
        let frac = bits & ((1u64 << 52) - 1);
        let (m, e) = if exp_field == 0 {
            (frac, -1074)
        } else {
            (frac | (1u64 << 52), exp_field - 1075)
        };
        let tz = m.trailing_zeros();
        Some(Number::from_f(F {
            prec: 53,
            neg,
            k: K::Fin {
                m: BigUint::from(m >> tz),
                e: e + tz as i64,
            },
        }))
    }

    /// The value of `x`'s shortest decimal form parsed at 512 bits: what a JSON number
    /// printed from a float64 becomes when cty reads it back. `None` for NaN.
    pub fn from_f64_decimal(x: f64) -> Option<Number> {
        if x.is_nan() {
            return None;
        }
        if x.is_infinite() {
            return Some(Number::infinity(x < 0.0));
        }
        Number::parse(&format!("{x:e}"))
    }

    /// Go's `SetInt` on a fresh float (cty `parseint`): exact, precision max(bitlen, 64).
    pub fn from_bigint(i: &BigInt) -> Number {
        if let Some(v) = i.to_i64() {
            return Number::small(v, 64);
        }
        Number::from_f(set_int(i, 0, LIM_GO_UNBOUNDED))
    }

    /// ±Inf (cty's `PositiveInfinity`/`NegativeInfinity`, precision 0).
    pub fn infinity(negative: bool) -> Number {
        Number::from_f(F::inf(0, negative))
    }

    /// Decimal text as `big.ParseFloat(s, 10, 512, ToNearestEven)` reads it: optional
    /// sign, digits with an optional point, optional `e`/`E` (decimal) or `p`/`P` (binary)
    /// exponent. `Inf` spellings are not accepted (see [`Number::parse_cty`]).
    pub fn parse(s: &str) -> Option<Number> {
        parse_decimal(s.as_bytes())
    }

    /// [`Number::parse`] for text whose value must be right or refused: `Some(Err)` when
    /// the text is a finite, non-zero number beyond fn-hcl's range (it would read as ±Inf
    /// or ±0 here; Go keeps it), `None` when it is not a number at all.
    pub fn parse_in_range(s: &str) -> Option<Result<Number, NumError>> {
        let n = Number::parse(s)?;
        let mantissa = s.split(['e', 'E', 'p', 'P']).next().unwrap_or("");
        let lost =
            n.is_infinite() || (n.is_zero() && mantissa.bytes().any(|b| matches!(b, b'1'..=b'9')));
        Some(if lost {
            Err(NumError::OutOfRange)
        } else {
            Ok(n)
        })
    }

    /// `cty.ParseNumberVal`: like [`Number::parse`] but also accepts Go's `Inf`, `inf`,
    /// `+Inf`, `-inf`, ... spellings, as cty's string-to-number conversion does.
    pub fn parse_cty(s: &str) -> Option<Number> {
        let body = s.strip_prefix(['+', '-']).unwrap_or(s);
        if (body == "Inf" || body == "inf") && (s.len() == 3 || s.len() == 4) {
            return Some(Number::from_f(F::inf(PREC, s.starts_with('-'))));
        }
        Number::parse(s)
    }

    /// Go's `Float64()`: nearest even, overflow to ±Inf, subnormals as IEEE.
    pub fn to_f64(&self) -> f64 {
        match &self.0 {
            Repr::Small { v, .. } => *v as f64,
            Repr::Big(f) => f_to_f64(f),
        }
    }

    /// gocty's float64 conversion: an error if the value rounds to ±Inf without being
    /// infinite already.
    pub fn to_f64_checked(&self) -> Result<f64, NumError> {
        let f = self.to_f64();
        if f.is_infinite() && !self.is_infinite() {
            return Err(NumError::FloatRange);
        }
        Ok(f)
    }

    /// The value as i64 if it is an integer in range.
    pub fn to_i64(&self) -> Option<i64> {
        match &self.0 {
            Repr::Small { v, .. } => Some(*v),
            Repr::Big(f) => match f.k {
                K::Zero => Some(0),
                K::Inf => None,
                // Integers the small form does not hold (i64::MIN) still fit.
                _ => self.to_bigint().and_then(|i| i64::try_from(i).ok()),
            },
        }
    }

    /// The value as an integer if it is finite and integral.
    pub fn to_bigint(&self) -> Option<BigInt> {
        match &self.0 {
            Repr::Small { v, .. } => Some(BigInt::from(*v)),
            Repr::Big(f) => match trunc_int(f) {
                Some((i, true)) => Some(i),
                _ => None,
            },
        }
    }

    /// An integer held inline: every one converts to a finite float64, so a writer of
    /// JSON or protobuf need not look at it (collections record whether they hold another
    /// kind, [`crate::value::coll::Summary`]).
    #[inline]
    pub fn is_small(&self) -> bool {
        matches!(self.0, Repr::Small { .. })
    }

    /// Finite and integral (Go's `IsInt`).
    pub fn is_integer(&self) -> bool {
        match &self.0 {
            Repr::Small { .. } => true,
            Repr::Big(f) => match &f.k {
                K::Zero => true,
                K::Inf => false,
                K::Fin { e, .. } => *e >= 0,
            },
        }
    }

    /// ±Inf.
    pub fn is_infinite(&self) -> bool {
        matches!(&self.0, Repr::Big(f) if f.is_inf())
    }

    /// ±0.
    pub fn is_zero(&self) -> bool {
        match &self.0 {
            Repr::Small { v, .. } => *v == 0,
            Repr::Big(f) => f.is_zero(),
        }
    }

    /// The sign bit (-0 counts as negative).
    pub fn is_negative(&self) -> bool {
        match &self.0 {
            Repr::Small { v, .. } => *v < 0,
            Repr::Big(f) => f.neg,
        }
    }

    /// -1, 0 or 1 (0 for ±0).
    pub fn signum(&self) -> i32 {
        if self.is_zero() {
            0
        } else if self.is_negative() {
            -1
        } else {
            1
        }
    }

    /// cty `Add`.
    pub fn add(&self, o: &Number) -> Result<Number, NumError> {
        if let (Repr::Small { v: a, prec: pa }, Repr::Small { v: b, prec: pb }) = (&self.0, &o.0) {
            let prec = (*pa).max(*pb);
            if let Some(s) = a.checked_add(*b)
                && sig_bits(s) <= prec
            {
                return Ok(Number::small(s, prec));
            }
        }
        let prec = self.prec().max(o.prec());
        let r = self
            .with_f(|x| o.with_f(|y| go_add(x, y, prec, LIM_NUM)))
            .map(Number::from_f)
            .map_err(|_| NumError::OpposingInfinities)?;
        in_range(self, o, r, false)
    }

    /// cty `Subtract` (`a + (-b)`).
    pub fn sub(&self, o: &Number) -> Result<Number, NumError> {
        if let (Repr::Small { v: a, prec: pa }, Repr::Small { v: b, prec: pb }) = (&self.0, &o.0) {
            let prec = (*pa).max(*pb);
            if let Some(s) = a.checked_sub(*b)
                && sig_bits(s) <= prec
            {
                return Ok(Number::small(s, prec));
            }
        }
        let prec = self.prec().max(o.prec());
        let r = self
            .with_f(|x| o.with_f(|y| go_add(x, &negated(y), prec, LIM_NUM)))
            .map(Number::from_f)
            .map_err(|_| NumError::InfinityMinusInfinity)?;
        in_range(self, o, r, false)
    }

    /// cty `Multiply`: the product rounded to 512 bits, with precision max(operands',
    /// product's minimum).
    pub fn mul(&self, o: &Number) -> Result<Number, NumError> {
        if let (Repr::Small { v: a, prec: pa }, Repr::Small { v: b, prec: pb }) = (&self.0, &o.0)
            && let Some(p) = a.checked_mul(*b)
        {
            let prec = (*pa).max(*pb);
            if p != 0 {
                return Ok(Number::small(p, prec.max(sig_bits(p))));
            }
            if (*a < 0) == (*b < 0) {
                return Ok(Number::small(0, prec));
            }
        }
        let res_prec = self.prec().max(o.prec());
        let r = self
            .with_f(|x| o.with_f(|y| go_mul(x, y, PREC, LIM_NUM)))
            .map_err(|_| NumError::ZeroTimesInfinity)?;
        let prec = res_prec.max(r.min_prec());
        in_range(self, o, Number::from_f(F { prec, ..r }), true)
    }

    /// cty `Divide`: `x/0` is ±Inf, `0/0` and `Inf/Inf` are errors.
    pub fn div(&self, o: &Number) -> Result<Number, NumError> {
        if let (Repr::Small { v: a, prec: pa }, Repr::Small { v: b, prec: pb }) = (&self.0, &o.0)
            && *b != 0
            && *a != 0
            && a.checked_rem(*b) == Some(0)
            && let Some(q) = a.checked_div(*b)
        {
            let prec = (*pa).max(*pb);
            if sig_bits(q) <= prec {
                return Ok(Number::small(q, prec));
            }
        }
        let prec = self.prec().max(o.prec());
        let r = self
            .with_f(|x| o.with_f(|y| go_quo(x, y, prec, LIM_NUM)))
            .map(Number::from_f)
            .map_err(|_| NumError::ZeroByZero)?;
        in_range(self, o, r, true)
    }

    /// cty `Modulo`: `a - trunc(a/b)*b` computed the way cty does (quotient rounded at
    /// the larger precision, the rest at `a`'s); `a % 0` is `a`.
    pub fn rem(&self, o: &Number) -> Result<Number, NumError> {
        if o.is_zero() {
            return Ok(self.clone());
        }
        if let (Repr::Small { v: a, prec: pa }, Repr::Small { v: b, .. }) = (&self.0, &o.0)
            && *pa >= 64
        {
            return Ok(Number::small(a.wrapping_rem(*b), *pa));
        }
        let pa = self.prec();
        let prec = pa.max(o.prec());
        self.with_f(|a| {
            o.with_f(|b| {
                let rat = go_quo(a, b, prec, LIM_NUM).map_err(|_| NumError::ModuloInfinity)?;
                let (i, _) = trunc_int(&rat).ok_or(NumError::ModuloOfInfinity)?;
                let work = set_int(&i, pa, LIM_NUM);
                let work = go_mul(b, &work, pa, LIM_NUM).map_err(|_| NumError::ModuloInfinity)?;
                go_add(a, &negated(&work), pa, LIM_NUM).map_err(|_| NumError::ModuloInfinity)
            })
        })
        .map(Number::from_f)
    }

    /// cty `Negate` (Go `Neg`: -0 for 0).
    pub fn neg(&self) -> Number {
        match &self.0 {
            Repr::Small { v, prec } if *v != 0 && *v != i64::MIN => Number::small(-v, *prec),
            _ => Number::from_f(negated(&self.to_f())),
        }
    }

    /// cty `Absolute`.
    pub fn abs(&self) -> Number {
        match &self.0 {
            Repr::Small { v, prec } if *v != i64::MIN => Number::small(v.abs(), *prec),
            _ => {
                let mut f = self.to_f();
                f.neg = false;
                Number::from_f(f)
            }
        }
    }

    /// cty's `floor`: Inf unchanged, else the integer rounded to the value's precision.
    pub fn floor(&self) -> Number {
        self.round_int(false)
    }

    /// cty's `ceil`.
    pub fn ceil(&self) -> Number {
        self.round_int(true)
    }

    fn round_int(&self, up: bool) -> Number {
        if let Repr::Small { .. } = self.0 {
            return self.clone();
        }
        let f = self.to_f();
        let Some((mut i, exact)) = trunc_int(&f) else {
            return self.clone();
        };
        if !exact {
            if up && !f.neg {
                i += 1;
            } else if !up && f.neg {
                i -= 1;
            }
        }
        Number::from_f(set_int(&i, f.prec, LIM_NUM))
    }

    /// Terraform's `pow`: float64 `math.Pow` of both values, as a 53-bit number.
    pub fn pow(&self, power: &Number) -> Result<Number, NumError> {
        let x = self.to_f64_checked()?;
        let y = power.to_f64_checked()?;
        Number::from_f64(gomath::pow(x, y)).ok_or(NumError::NaN)
    }

    /// Terraform's `log`: `math.Log(num) / math.Log(base)` in float64, as a 53-bit number.
    pub fn log(&self, base: &Number) -> Result<Number, NumError> {
        let x = self.to_f64_checked()?;
        let b = base.to_f64_checked()?;
        Number::from_f64(gomath::log(x) / gomath::log(b)).ok_or(NumError::NaN)
    }

    /// Go's `big.Float.Text(fmt, prec)` for `e E f g G` (other formats give `%` + fmt, as
    /// Go does for unknown ones). `prec < 0`: the fewest digits that read back to the same
    /// value at this number's precision.
    pub fn text(&self, fmt: u8, prec: i32) -> String {
        if let Repr::Small { v, prec: p } = &self.0
            && fmt == b'f'
            && prec < 0
            && bitlen_u64(v.unsigned_abs()) <= *p
        {
            return v.to_string();
        }
        self.with_f(|f| ftoa(f, fmt, prec))
    }

    /// How cty turns a number into a string (`Text('f', -1)`): `tostring`, templates,
    /// JSON, map keys, set hashing.
    pub fn to_cty_string(&self) -> String {
        self.text(b'f', -1)
    }

    /// [`Number::to_cty_string`] as a shared string, in one allocation for an exact integer
    /// (formatted on the stack) instead of a `String` copied into an `Arc`.
    pub fn to_cty_str(&self) -> crate::value::Str {
        self.with_cty_text(|t| crate::value::Str::from(t))
    }

    /// Appends [`Number::to_cty_string`] to `out`, without a `String` for an exact integer.
    pub fn push_cty_string(&self, out: &mut String) {
        self.with_cty_text(|t| out.push_str(t));
    }

    /// Calls `f` with [`Number::to_cty_string`]'s text: an exact integer formatted on the
    /// stack, anything else in a transient `String` (at most ~40 KB: the range is bounded).
    /// Writers that charge a budget measure the text with it before they copy it.
    pub fn with_cty_text<R>(&self, f: impl FnOnce(&str) -> R) -> R {
        if let Some(v) = self.exact_i64() {
            return f(itoa::Buffer::new().format(v));
        }
        f(&self.to_cty_string())
    }

    /// The integer whose decimal digits are this number's cty text, when it is one (a
    /// small integer held exactly): what writers can format without the general path.
    #[inline]
    pub fn exact_i64(&self) -> Option<i64> {
        match &self.0 {
            Repr::Small { v, prec } if bitlen_u64(v.unsigned_abs()) <= *prec => Some(*v),
            _ => None,
        }
    }

    /// [`Number::with_cty_text`] for a writer that charges a budget: `charge` is given the
    /// text's length before the text is copied anywhere, and, for a text that may be
    /// longer than [`SHORT_TEXT`] (1e39000 has 39,001 digits, 1e-39000 39,000 zeros), its
    /// bound ([`Number::text_len_bound`]) before its digits are made. An exact integer is
    /// formatted on the stack and charged its length; a short text is made, then charged
    /// exactly; a long one is charged its bound, a few bytes over it (for a tiny number,
    /// at most the digits its precision holds), and nothing more once made.
    pub fn with_charged_cty_text<R, E>(
        &self,
        mut charge: impl FnMut(usize) -> Result<(), E>,
        f: impl FnOnce(&str) -> R,
    ) -> Result<R, E> {
        if let Some(v) = self.exact_i64() {
            let mut buf = itoa::Buffer::new();
            let t = buf.format(v);
            charge(t.len())?;
            return Ok(f(t));
        }
        let ahead = self.charge_long_text(b'f', -1, &mut charge)?;
        let t = self.to_cty_string();
        charge(t.len().saturating_sub(ahead))?;
        Ok(f(&t))
    }

    /// For a writer about to make [`Number::text`]`(fmt, prec)` and charge it: when the
    /// text may be longer than [`SHORT_TEXT`], charges its bound now, before a digit is
    /// made, and returns it; otherwise charges nothing and returns 0. Either way the
    /// writer then charges what it writes beyond the returned length.
    pub fn charge_long_text<E>(
        &self,
        fmt: u8,
        prec: i32,
        charge: impl FnOnce(usize) -> Result<(), E>,
    ) -> Result<usize, E> {
        let bound = self.long_text_bound(fmt, prec);
        if bound > 0 {
            charge(bound)?;
        }
        Ok(bound)
    }

    /// [`Number::text_len_bound`] when it is over [`SHORT_TEXT`], else 0: what
    /// [`Number::charge_long_text`] charges, for a writer that charges several at once.
    pub fn long_text_bound(&self, fmt: u8, prec: i32) -> usize {
        // An integer of i64: a sign, 19 digits, a point, the precision's digits and an
        // exponent at most.
        if let Repr::Small { .. } = &self.0
            && i64::from(prec) + 28 <= SHORT_TEXT as i64
        {
            return 0;
        }
        let bound = self.text_len_bound(fmt, prec);
        if bound <= SHORT_TEXT { 0 } else { bound }
    }

    /// An upper bound on `self.text(fmt, prec).len()`, known without making a digit: from
    /// the binary exponent, the mantissa's bits and the precision. Over the text by a few
    /// bytes where the exponent decides its length (many integer digits, the zeros of a
    /// tiny number or of a precision), and by at most the digits the number's precision
    /// holds where its mantissa does (0.1 at 512 bits is "0.1", bounded at 160).
    pub fn text_len_bound(&self, fmt: u8, prec: i32) -> usize {
        self.with_f(|x| text_len_bound(x, fmt, prec))
    }

    /// cty's `Equals` on numbers: equal when their `to_cty_string` texts are equal
    /// (with -0 equal to 0). Differs from `==` (exact value) when precisions differ,
    /// e.g. a 53-bit 0.1 from `pow` is cty-equal to the literal 0.1.
    pub fn cty_equals(&self, other: &Number) -> bool {
        if let (Repr::Small { .. }, Repr::Small { .. }) = (&self.0, &other.0)
            && self.exact_i64().is_some()
            && other.exact_i64().is_some()
        {
            return self == other;
        }
        let norm = |s: String| if s == "-0" { "0".to_string() } else { s };
        norm(self.to_cty_string()) == norm(other.to_cty_string())
    }

    /// Total order by value: -Inf < finite < +Inf, -0 == 0 (alias of `Ord::cmp`).
    pub fn cmp_num(&self, other: &Number) -> Ordering {
        self.cmp(other)
    }
}

/// `SetInt` bounds for `from_bigint`: values beyond [`EXP_LIMIT`] become ±Inf.
const LIM_GO_UNBOUNDED: Lim = LIM_NUM;

impl fmt::Debug for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Number({}, prec {})", self.to_cty_string(), self.prec())
    }
}

impl fmt::Display for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_cty_string())
    }
}

fn cmp_f(x: &F, y: &F) -> Ordering {
    // rank: -Inf, negative finite, zero, positive finite, +Inf
    fn rank(f: &F) -> i8 {
        match f.k {
            K::Zero => 0,
            K::Inf => {
                if f.neg {
                    -2
                } else {
                    2
                }
            }
            K::Fin { .. } => {
                if f.neg {
                    -1
                } else {
                    1
                }
            }
        }
    }
    let (rx, ry) = (rank(x), rank(y));
    if rx != ry {
        return rx.cmp(&ry);
    }
    match (&x.k, &y.k) {
        (K::Fin { m: m1, e: e1 }, K::Fin { m: m2, e: e2 }) => {
            let c = cmp_abs_fin(m1, *e1, m2, *e2);
            if x.neg { c.reverse() } else { c }
        }
        _ => Ordering::Equal,
    }
}

impl Ord for Number {
    fn cmp(&self, other: &Number) -> Ordering {
        match (&self.0, &other.0) {
            (Repr::Small { v: a, .. }, Repr::Small { v: b, .. }) => a.cmp(b),
            _ => self.with_f(|x| other.with_f(|y| cmp_f(x, y))),
        }
    }
}

impl PartialOrd for Number {
    fn partial_cmp(&self, other: &Number) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Number {
    fn eq(&self, other: &Number) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Number {}

impl Hash for Number {
    fn hash<H: Hasher>(&self, state: &mut H) {
        match &self.0 {
            Repr::Small { v, .. } => {
                0u8.hash(state);
                v.hash(state);
            }
            Repr::Big(f) => match &f.k {
                // -0 == 0; Big never holds an i64 integer otherwise (canonical form).
                K::Zero => {
                    0u8.hash(state);
                    0i64.hash(state);
                }
                K::Inf => {
                    1u8.hash(state);
                    f.neg.hash(state);
                }
                K::Fin { m, e } => {
                    2u8.hash(state);
                    f.neg.hash(state);
                    e.hash(state);
                    for d in m.iter_u64_digits() {
                        d.hash(state);
                    }
                }
            },
        }
    }
}

// ---------------------------------------------------------------------------------------
// float64 conversion

fn f_to_f64(f: &F) -> f64 {
    let sign = if f.neg { -1.0 } else { 1.0 };
    let (m, e) = match &f.k {
        K::Zero => return if f.neg { -0.0 } else { 0.0 },
        K::Inf => return sign * f64::INFINITY,
        K::Fin { m, e } => (m, *e),
    };
    // Go: e = exp - 1 for a mantissa in [1, 2).
    let ge = e + m.bits() as i64 - 1;
    let mut p: i64 = 53;
    if ge < -1022 {
        p = 53 - (-1022 - ge);
        let half = m.bits() == 1; // mantissa exactly 0.5 (a power of two)
        if p < 0 || (p == 0 && half) {
            return if f.neg { -0.0 } else { 0.0 };
        }
        if p == 0 {
            return sign * f64::from_bits(1);
        }
    }
    let r = round(f.neg, m.clone(), e, false, p as u32, LIM_GO);
    let K::Fin { m: rm, e: re } = &r.k else {
        return sign * f64::INFINITY;
    };
    let rge = re + rm.bits() as i64 - 1;
    if rge > 1023 {
        return sign * f64::INFINITY;
    }
    let mu = rm.to_u64().unwrap_or(0);
    sign * exact_ldexp(mu, *re)
}

/// `m * 2^e` for values known to be exactly representable.
fn exact_ldexp(m: u64, e: i64) -> f64 {
    if m == 0 {
        return 0.0;
    }
    let b = bitlen_u64(m) as i64;
    let top = e + b - 1;
    if top >= -1022 {
        let frac = (m << (53 - b)) & ((1u64 << 52) - 1);
        f64::from_bits((((top + 1023) as u64) << 52) | frac)
    } else {
        let sh = e + 1074;
        if sh < 0 {
            return 0.0;
        }
        f64::from_bits(m << sh)
    }
}

// ---------------------------------------------------------------------------------------
// parsing

fn parse_decimal(s: &[u8]) -> Option<Number> {
    let mut i = 0;
    let mut neg = false;
    if let Some(&c) = s.first()
        && (c == b'+' || c == b'-')
    {
        neg = c == b'-';
        i = 1;
    }
    // mantissa
    let mut digits: Vec<u8> = Vec::new(); // significant digits (no leading zeros)
    let mut ndigits = 0usize;
    let mut seen_dot = false;
    let mut frac_digits: i64 = 0;
    let mut dropped_nonzero = false;
    let mut dropped: i64 = 0; // digits dropped beyond MAX_PARSE_DIGITS
    while i < s.len() {
        let c = s[i];
        if c.is_ascii_digit() {
            ndigits += 1;
            if seen_dot {
                frac_digits += 1;
            }
            if !(digits.is_empty() && c == b'0') {
                if digits.len() < MAX_PARSE_DIGITS {
                    digits.push(c);
                } else {
                    dropped += 1;
                    dropped_nonzero |= c != b'0';
                }
            }
        } else if c == b'.' && !seen_dot {
            seen_dot = true;
        } else {
            break;
        }
        i += 1;
    }
    if ndigits == 0 {
        return None;
    }
    // exponent
    let mut exp: i64 = 0;
    let mut ebase = 10;
    if i < s.len() {
        match s[i] {
            b'e' | b'E' => ebase = 10,
            b'p' | b'P' => ebase = 2,
            _ => return None,
        }
        i += 1;
        let mut eneg = false;
        if i < s.len() && (s[i] == b'+' || s[i] == b'-') {
            eneg = s[i] == b'-';
            i += 1;
        }
        let start = i;
        while i < s.len() && s[i].is_ascii_digit() {
            exp = exp.checked_mul(10)?.checked_add((s[i] - b'0') as i64)?;
            i += 1;
        }
        if i == start || i != s.len() {
            return None;
        }
        if eneg {
            exp = -exp;
        }
    }
    if digits.is_empty() {
        return Some(Number::from_f(F::zero(PREC, neg)));
    }
    // dropped digits: keep the value's scale, add a sticky digit
    let mut frac = frac_digits;
    if dropped > 0 {
        frac -= dropped;
        if dropped_nonzero {
            digits.push(b'1');
            frac += 1;
        }
    }
    // fast path: a plain integer that fits i64
    if frac == 0 && exp == 0 && digits.len() <= 18 {
        let mut v: i64 = 0;
        for &d in &digits {
            v = v * 10 + (d - b'0') as i64;
        }
        return Some(Number::small(if neg { -v } else { v }, PREC));
    }
    let d = BigUint::parse_bytes(&digits, 10)?;
    // Go: exp2 = bitlen(D) + (fcount + exp for base 10 | exp for base 2); exp5 likewise.
    let bl = d.bits() as i64;
    let (exp2, exp5) = if ebase == 10 {
        let e5 = exp.checked_sub(frac)?;
        (bl.checked_add(e5)?, e5)
    } else {
        (bl.checked_add(exp)?.checked_sub(frac)?, -frac)
    };
    if !(LIM_GO.min..=LIM_GO.max).contains(&exp2) {
        return None; // Go: "exponent overflow"
    }
    let e2 = exp2 - bl; // z = D * 2^e2 before the power of five
    if exp5 == 0 {
        return Some(Number::from_f(round(neg, d, e2, false, PREC, LIM_NUM)));
    }
    let z = F {
        prec: PREC,
        neg,
        k: K::Fin { m: d, e: e2 },
    };
    let p = pow5(exp5.unsigned_abs(), PREC + 64);
    let r = if exp5 < 0 {
        go_quo(&z, &p, PREC, LIM_NUM)
    } else {
        go_mul(&z, &p, PREC, LIM_NUM)
    };
    r.ok().map(Number::from_f)
}

/// Go's `Float.pow5` at precision `prec` (repeated squaring with rounding at each step).
fn pow5(n: u64, prec: u32) -> F {
    const M: u64 = 27;
    let p27 = 5u64.pow(27);
    if n <= M {
        return F::from_u64(5u64.pow(n as u32), prec, false);
    }
    let mut z = F::from_u64(p27, prec, false);
    let mut n = n - M;
    let mut f = F::from_u64(5, prec + 64, false);
    while n > 0 {
        if n & 1 != 0 {
            z = go_mul(&z, &f, prec, LIM_GO).unwrap_or_else(|_| F::inf(prec, false));
        }
        f = go_mul(&f, &f, prec + 64, LIM_GO).unwrap_or_else(|_| F::inf(prec + 64, false));
        n >>= 1;
    }
    z
}

// ---------------------------------------------------------------------------------------
// formatting (Go's math/big ftoa.go and decimal.go)

/// A number's text at most this long is made before it is charged (on the stack, or a
/// short string dropped once copied); a longer one is charged its bound first
/// ([`Number::charge_long_text`]).
pub const SHORT_TEXT: usize = 1024;

/// Where the clock look before a long decimal expansion is accounted ([`meter::tick`]).
const LONG_TEXT_SITE: &str = "number formatting";

/// From how many bits a decimal expansion looks at the clock first (~1,200 digits).
const LONG_EXPANSION_BITS: u64 = 4096;

/// [`Number::text_len_bound`] of `x`: what [`ftoa`] can write, case by case.
fn text_len_bound(x: &F, fmt: u8, prec: i32) -> usize {
    let sign = i64::from(x.neg);
    if x.is_inf() {
        return 4;
    }
    if !matches!(fmt, b'e' | b'E' | b'f' | b'g' | b'G') {
        return 2;
    }
    // x = 0.mant * 10^exp (Dec): exp in lo..=hi, mant at most `digits` long.
    let (lo, hi, digits, integer) = match &x.k {
        K::Fin { m, e } => {
            const LOG10_2: f64 = std::f64::consts::LOG10_2;
            const LOG10_5: f64 = 1.0 - LOG10_2;
            let bits = m.bits() as i64;
            // 2^(bits+e-1) <= |x| < 2^(bits+e), and exp = floor(log10 |x|) + 1; a margin
            // of one each way for the floating point, and one up for a rounding carry.
            let k = bits.saturating_add(*e);
            let lo = ((k - 1) as f64 * LOG10_2).floor() as i64;
            let hi = (k as f64 * LOG10_2).floor() as i64 + 3;
            // Decimal digits of the exact value: an integer's are at most its exp; a
            // fraction's those of m * 5^-e. The shortest text needs no more than those
            // that tell apart numbers of the precision's bits.
            let exact = if *e >= 0 {
                hi
            } else {
                (bits as f64 * LOG10_2 + (-*e) as f64 * LOG10_5).floor() as i64 + 2
            };
            let mut digits = exact;
            if prec < 0 {
                digits = digits.min((x.prec as f64 * LOG10_2).ceil() as i64 + 2);
            }
            (lo, hi, digits.max(1), *e >= 0)
        }
        _ => (0, 0, 0, true),
    };
    let p = i64::from(prec);
    let shortest = p < 0;
    // fmt_e with `fp` digits after the point: "d.ddd" "e" sign, two or more exponent digits.
    let exp_digits = {
        let most = (lo - 1).unsigned_abs().max((hi - 1).unsigned_abs()).max(10);
        i64::from(most.ilog10()) + 1
    };
    let len_e = |fp: i64| sign + 1 + if fp > 0 { 1 + fp } else { 0 } + 2 + exp_digits;
    // fmt_f: the integer digits ("0" below 1), then the point and `fp` digits.
    let len_f = |int: i64, fp: i64| sign + int.max(1) + if fp > 0 { 1 + fp } else { 0 };
    let n = match fmt {
        b'e' | b'E' if shortest => len_e(digits - 1),
        b'e' | b'E' => len_e(p),
        // Shortest: as many fraction digits as the mantissa has past the point (none for
        // an integer), leading zeros of a number below 1 included.
        b'f' if shortest => len_f(hi, if integer { 0 } else { (digits - lo).max(0) }),
        b'f' => len_f(hi, p),
        _ => {
            // %g: the e form with at most `most` digits (the precision's, and no more
            // than the exact value has), or the f form, chosen only for exponents from
            // -4 to the precision (6 for the shortest).
            let most = if shortest {
                digits
            } else {
                p.max(1).min(digits.max(1))
            };
            // The f form: the mantissa's digits and a point (an integer of at most 6
            // digits, for the shortest), after at most "0.000" below 1.
            len_e(most - 1).max(sign + most.max(6) + 5)
        }
    };
    usize::try_from(n).unwrap_or(0)
}

/// A decimal `0.mant * 10^exp`, mant without trailing zeros.
struct Dec {
    mant: Vec<u8>,
    exp: i64,
}

impl Dec {
    /// Exact decimal of `m * 2^e`.
    fn new(m: &BigUint, e: i64) -> Dec {
        if m.is_zero() {
            return Dec {
                mant: Vec::new(),
                exp: 0,
            };
        }
        // Expanding a large number is work far beyond what its text may show (1e39000's
        // 39,001 digits take ~10 ms: `%v` and `==` expand them all, even where the text
        // is short): the clock is looked at first. A spent wall budget is recorded in
        // the meter, and the next charge or tick of the call fails with it.
        let bits = if e >= 0 {
            m.bits().saturating_add(e as u64)
        } else {
            // m · 5^-e: log2(5) < 2.33 bits per power of five.
            m.bits()
                .saturating_add(e.unsigned_abs().saturating_mul(233) / 100)
        };
        if bits >= LONG_EXPANSION_BITS {
            meter::walked(usize::try_from(bits).unwrap_or(usize::MAX));
            let _ = meter::tick(LONG_TEXT_SITE);
        }
        let (digits, scale) = if e >= 0 {
            ((m << (e as u64)).to_str_radix(10), 0i64)
        } else {
            let mut n = -e;
            let mut m = m.clone();
            if let Some(tz) = m.trailing_zeros() {
                let t = (tz as i64).min(n);
                m >>= t as u64;
                n -= t;
            }
            let n32 = u32::try_from(n).unwrap_or(u32::MAX);
            ((m * BigUint::from(5u32).pow(n32)).to_str_radix(10), n)
        };
        let mut mant = digits.into_bytes();
        let exp = mant.len() as i64 - scale;
        while mant.last() == Some(&b'0') {
            mant.pop();
        }
        Dec { mant, exp }
    }

    fn at(&self, i: i64) -> u8 {
        if i >= 0 && (i as usize) < self.mant.len() {
            self.mant[i as usize]
        } else {
            b'0'
        }
    }

    fn should_round_up(&self, n: usize) -> bool {
        if self.mant[n] == b'5' && n + 1 == self.mant.len() {
            return n > 0 && (self.mant[n - 1] - b'0') & 1 != 0;
        }
        self.mant[n] >= b'5'
    }

    fn round(&mut self, n: i64) {
        if n < 0 || n as usize >= self.mant.len() {
            return;
        }
        if self.should_round_up(n as usize) {
            self.round_up(n);
        } else {
            self.round_down(n);
        }
    }

    fn round_up(&mut self, n: i64) {
        if n < 0 || n as usize >= self.mant.len() {
            return;
        }
        let mut n = n as usize;
        while n > 0 && self.mant[n - 1] >= b'9' {
            n -= 1;
        }
        if n == 0 {
            self.mant.truncate(1);
            self.mant[0] = b'1';
            self.exp += 1;
            return;
        }
        self.mant[n - 1] += 1;
        self.mant.truncate(n);
    }

    fn round_down(&mut self, n: i64) {
        if n < 0 || n as usize >= self.mant.len() {
            return;
        }
        self.mant.truncate(n as usize);
        while self.mant.last() == Some(&b'0') {
            self.mant.pop();
        }
        if self.mant.is_empty() {
            self.exp = 0;
        }
    }
}

fn round_shortest(d: &mut Dec, m: &BigUint, e: i64, prec: u32) {
    if d.mant.is_empty() {
        return;
    }
    // mantissa with prec+1 bits: lsb is half an ulp
    let s = m.bits() as i64 - (prec as i64 + 1);
    let (mm, ee) = if s < 0 {
        (m << ((-s) as u64), e + s)
    } else {
        (m >> (s as u64), e + s)
    };
    let lower = Dec::new(&(&mm - BigUint::one()), ee);
    let upper = Dec::new(&(&mm + BigUint::one()), ee);
    let inclusive = !mm.bit(1);
    for i in 0..d.mant.len() {
        let mi = d.mant[i];
        let l = lower.at(i as i64);
        let u = upper.at(i as i64);
        let okdown = l != mi || inclusive && i + 1 == lower.mant.len();
        let okup = mi != u && (inclusive || mi + 1 < u || i + 1 < upper.mant.len());
        let n = i as i64 + 1;
        match (okdown, okup) {
            (true, true) => return d.round(n),
            (true, false) => return d.round_down(n),
            (false, true) => return d.round_up(n),
            _ => {}
        }
    }
}

fn ftoa(x: &F, fmt: u8, prec: i32) -> String {
    let mut buf = String::new();
    if x.neg {
        buf.push('-');
    }
    if x.is_inf() {
        if !x.neg {
            buf.push('+');
        }
        buf.push_str("Inf");
        return buf;
    }
    if !matches!(fmt, b'e' | b'E' | b'f' | b'g' | b'G') {
        return format!("%{}", fmt as char);
    }
    let mut d = match &x.k {
        K::Fin { m, e } => Dec::new(m, *e),
        _ => Dec {
            mant: Vec::new(),
            exp: 0,
        },
    };
    let mut prec = prec as i64;
    let mut shortest = false;
    if prec < 0 {
        shortest = true;
        if let K::Fin { m, e } = &x.k {
            round_shortest(&mut d, m, *e, x.prec);
        }
        prec = match fmt {
            b'e' | b'E' => d.mant.len() as i64 - 1,
            b'f' => (d.mant.len() as i64 - d.exp).max(0),
            _ => d.mant.len() as i64,
        };
    } else {
        match fmt {
            b'e' | b'E' => d.round(1 + prec),
            b'f' => d.round(d.exp + prec),
            _ => {
                if prec == 0 {
                    prec = 1;
                }
                d.round(prec);
            }
        }
    }
    match fmt {
        b'e' | b'E' => fmt_e(&mut buf, fmt, prec, &d),
        b'f' => fmt_f(&mut buf, prec, &d),
        _ => {
            let mut eprec = prec;
            if eprec > d.mant.len() as i64 && d.mant.len() as i64 >= d.exp {
                eprec = d.mant.len() as i64;
            }
            if shortest {
                eprec = 6;
            }
            let exp = d.exp - 1;
            if exp < -4 || exp >= eprec {
                if prec > d.mant.len() as i64 {
                    prec = d.mant.len() as i64;
                }
                fmt_e(&mut buf, fmt + b'e' - b'g', prec - 1, &d);
            } else {
                if prec > d.exp {
                    prec = d.mant.len() as i64;
                }
                fmt_f(&mut buf, (prec - d.exp).max(0), &d);
            }
        }
    }
    buf
}

fn fmt_e(buf: &mut String, fmt: u8, prec: i64, d: &Dec) {
    buf.push(d.mant.first().map_or('0', |&c| c as char));
    if prec > 0 {
        buf.push('.');
        let mut i = 1i64;
        let m = (d.mant.len() as i64).min(prec + 1);
        if i < m {
            buf.extend(d.mant[i as usize..m as usize].iter().map(|&c| c as char));
            i = m;
        }
        while i <= prec {
            buf.push('0');
            i += 1;
        }
    }
    buf.push(fmt as char);
    let mut exp = if d.mant.is_empty() { 0 } else { d.exp - 1 };
    if exp < 0 {
        buf.push('-');
        exp = -exp;
    } else {
        buf.push('+');
    }
    if exp < 10 {
        buf.push('0');
    }
    buf.push_str(&exp.to_string());
}

fn fmt_f(buf: &mut String, prec: i64, d: &Dec) {
    if d.exp > 0 {
        let m = (d.mant.len() as i64).min(d.exp);
        buf.extend(d.mant[..m as usize].iter().map(|&c| c as char));
        for _ in m..d.exp {
            buf.push('0');
        }
    } else {
        buf.push('0');
    }
    if prec > 0 {
        buf.push('.');
        for i in 0..prec {
            buf.push(d.at(d.exp + i) as char);
        }
    }
}

// ---------------------------------------------------------------------------------------

/// Ports of Go's pure-Go `math.Log` and `math.Pow` (and what they use), so float64
/// results match Go's bit for bit where Go does not use assembly.
// The constants keep fdlibm's published digits.
#[allow(clippy::excessive_precision)]
pub mod gomath {
    const SQRT2: f64 = std::f64::consts::SQRT_2;

    /// Go's `math.Frexp`: `f = frac * 2^exp`, `0.5 <= |frac| < 1`.
    pub fn frexp(f: f64) -> (f64, i64) {
        if f == 0.0 || f.is_infinite() || f.is_nan() {
            return (f, 0);
        }
        let (mut f, mut exp) = (f, 0i64);
        if f.abs() < f64::MIN_POSITIVE {
            f *= (1u64 << 52) as f64;
            exp = -52;
        }
        let mut x = f.to_bits();
        exp += ((x >> 52) & 0x7ff) as i64 - 1022;
        x &= !(0x7ffu64 << 52);
        x |= 1022u64 << 52;
        (f64::from_bits(x), exp)
    }

    /// Go's `math.Ldexp`.
    pub fn ldexp(frac: f64, exp: i64) -> f64 {
        if frac == 0.0 || frac.is_infinite() || frac.is_nan() {
            return frac;
        }
        let (mut frac, mut exp) = (frac, exp);
        if frac.abs() < f64::MIN_POSITIVE {
            frac *= (1u64 << 52) as f64;
            exp -= 52;
        }
        let mut x = frac.to_bits();
        exp += ((x >> 52) & 0x7ff) as i64 - 1023;
        if exp < -1075 {
            return 0.0f64.copysign(frac);
        }
        if exp > 1023 {
            return if frac < 0.0 {
                f64::NEG_INFINITY
            } else {
                f64::INFINITY
            };
        }
        let mut m = 1.0;
        if exp < -1022 {
            exp += 53;
            m = 1.0 / (1u64 << 53) as f64;
        }
        x &= !(0x7ffu64 << 52);
        x |= ((exp + 1023) as u64) << 52;
        m * f64::from_bits(x)
    }

    /// Go's `math.Log` (FreeBSD's e_log.c).
    pub fn log(x: f64) -> f64 {
        const LN2_HI: f64 = 6.93147180369123816490e-01;
        const LN2_LO: f64 = 1.90821492927058770002e-10;
        const L1: f64 = 6.666666666666735130e-01;
        const L2: f64 = 3.999999999940941908e-01;
        const L3: f64 = 2.857142874366239149e-01;
        const L4: f64 = 2.222219843214978396e-01;
        const L5: f64 = 1.818357216161805012e-01;
        const L6: f64 = 1.531383769920937332e-01;
        const L7: f64 = 1.479819860511658591e-01;
        if x.is_nan() || x == f64::INFINITY {
            return x;
        }
        if x < 0.0 {
            return f64::NAN;
        }
        if x == 0.0 {
            return f64::NEG_INFINITY;
        }
        let (mut f1, mut ki) = frexp(x);
        if f1 < SQRT2 / 2.0 {
            f1 *= 2.0;
            ki -= 1;
        }
        let f = f1 - 1.0;
        let k = ki as f64;
        let s = f / (2.0 + f);
        let s2 = s * s;
        let s4 = s2 * s2;
        let t1 = s2 * (L1 + s4 * (L3 + s4 * (L5 + s4 * L7)));
        let t2 = s4 * (L2 + s4 * (L4 + s4 * L6));
        let r = t1 + t2;
        let hfsq = 0.5 * f * f;
        k * LN2_HI - ((hfsq - (s * (hfsq + r) + k * LN2_LO)) - f)
    }

    /// Go's `math.Exp`.
    pub fn exp(x: f64) -> f64 {
        const LN2_HI: f64 = 6.93147180369123816490e-01;
        const LN2_LO: f64 = 1.90821492927058770002e-10;
        const LOG2E: f64 = std::f64::consts::LOG2_E;
        const OVERFLOW: f64 = 7.09782712893383973096e+02;
        const UNDERFLOW: f64 = -7.45133219101941108420e+02;
        const NEAR_ZERO: f64 = 1.0 / (1u64 << 28) as f64;
        if x.is_nan() || x == f64::INFINITY {
            return x;
        }
        if x == f64::NEG_INFINITY {
            return 0.0;
        }
        if x > OVERFLOW {
            return f64::INFINITY;
        }
        if x < UNDERFLOW {
            return 0.0;
        }
        if -NEAR_ZERO < x && x < NEAR_ZERO {
            return 1.0 + x;
        }
        let k: i64 = if x < 0.0 {
            (LOG2E * x - 0.5) as i64
        } else if x > 0.0 {
            (LOG2E * x + 0.5) as i64
        } else {
            0
        };
        let hi = x - k as f64 * LN2_HI;
        let lo = k as f64 * LN2_LO;
        const P1: f64 = 1.66666666666666657415e-01;
        const P2: f64 = -2.77777777770155933842e-03;
        const P3: f64 = 6.61375632143793436117e-05;
        const P4: f64 = -1.65339022054652515390e-06;
        const P5: f64 = 4.13813679705723846039e-08;
        let r = hi - lo;
        let t = r * r;
        let c = r - t * (P1 + t * (P2 + t * (P3 + t * (P4 + t * P5))));
        let y = 1.0 - ((lo - (r * c) / (2.0 - c)) - hi);
        ldexp(y, k)
    }

    fn is_odd_int(x: f64) -> bool {
        if x.abs() >= (1u64 << 53) as f64 {
            return false;
        }
        let xi = x.trunc();
        x - xi == 0.0 && (xi as i64) & 1 == 1
    }

    /// Go's `math.Pow`.
    pub fn pow(x: f64, y: f64) -> f64 {
        if y == 0.0 || x == 1.0 {
            return 1.0;
        }
        if y == 1.0 {
            return x;
        }
        if x.is_nan() || y.is_nan() {
            return f64::NAN;
        }
        if x == 0.0 {
            if y < 0.0 {
                if x.is_sign_negative() && is_odd_int(y) {
                    return f64::NEG_INFINITY;
                }
                return f64::INFINITY;
            }
            if x.is_sign_negative() && is_odd_int(y) {
                return x;
            }
            return 0.0;
        }
        if y.is_infinite() {
            if x == -1.0 {
                return 1.0;
            }
            if (x.abs() < 1.0) == (y > 0.0) {
                return 0.0;
            }
            return f64::INFINITY;
        }
        if x.is_infinite() {
            if x < 0.0 {
                return pow(1.0 / x, -y);
            }
            return if y < 0.0 { 0.0 } else { f64::INFINITY };
        }
        if y == 0.5 {
            return x.sqrt();
        }
        if y == -0.5 {
            return 1.0 / x.sqrt();
        }
        let ya = y.abs();
        let mut yi = ya.trunc();
        let mut yf = ya - yi;
        if yf != 0.0 && x < 0.0 {
            return f64::NAN;
        }
        if yi >= 9.223372036854775808e18 {
            if x == -1.0 {
                return 1.0;
            }
            if (x.abs() < 1.0) == (y > 0.0) {
                return 0.0;
            }
            return f64::INFINITY;
        }
        let mut a1 = 1.0;
        let mut ae: i64 = 0;
        if yf != 0.0 {
            if yf > 0.5 {
                yf -= 1.0;
                yi += 1.0;
            }
            a1 = exp(yf * log(x));
        }
        let (mut x1, mut xe) = frexp(x);
        let mut i = yi as i64;
        while i != 0 {
            if !(-(1 << 12)..=(1 << 12)).contains(&xe) {
                ae += xe;
                break;
            }
            if i & 1 == 1 {
                a1 *= x1;
                ae += xe;
            }
            x1 *= x1;
            xe <<= 1;
            if x1 < 0.5 {
                x1 += x1;
                xe -= 1;
            }
            i >>= 1;
        }
        if y < 0.0 {
            a1 = 1.0 / a1;
            ae = -ae;
        }
        ldexp(a1, ae)
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn beyond_the_range_is_refused_not_rounded_to_inf_or_zero() {
        let p = |s: &str| Number::parse_in_range(s);
        let huge = "1".to_string() + &"0".repeat(100_000);
        assert_eq!(p(&huge).map(|r| r.err()), Some(Some(NumError::OutOfRange)));
        assert_eq!(
            p("1e-50000").map(|r| r.err()),
            Some(Some(NumError::OutOfRange))
        );
        assert_eq!(
            p("-1e39457").map(|r| r.err()),
            Some(Some(NumError::OutOfRange))
        );
        // In range, zero, and not numbers at all.
        assert_eq!(p("1e39456").map(|r| r.is_ok()), Some(true));
        assert_eq!(p("0e-99999").map(|r| r.is_ok()), Some(true));
        assert_eq!(p("0.000").map(|r| r.is_ok()), Some(true));
        assert!(p("x").is_none());
        let big = Number::parse("1e30000").unwrap();
        let tiny = Number::parse("1e-30000").unwrap();
        assert_eq!(big.mul(&big).err(), Some(NumError::OutOfRange));
        assert_eq!(big.add(&big).ok().map(|n| n.is_infinite()), Some(false));
        assert_eq!(tiny.mul(&tiny).err(), Some(NumError::OutOfRange));
        assert_eq!(big.div(&tiny).err(), Some(NumError::OutOfRange));
        assert_eq!(tiny.div(&big).err(), Some(NumError::OutOfRange));
        // Go's own infinities stay: x/0 and arithmetic on ±Inf.
        let one = Number::from_i64(1);
        assert!(one.div(&Number::from_i64(0)).unwrap().is_infinite());
        assert!(Number::infinity(false).mul(&big).unwrap().is_infinite());
        assert!(OUT_OF_RANGE_MSG.contains("2^131072"));
    }

    #[test]
    fn text_len_bound_bounds_the_text_and_is_close_where_it_is_long() {
        let mut ns: Vec<Number> = [0, 1, -1, 9, 10, 99, 100, i64::MAX, i64::MIN]
            .into_iter()
            .map(Number::from_i64)
            .collect();
        ns.extend(
            [
                "-0",
                "0.1",
                "0.5",
                "-7.25",
                "9.999999",
                "0.00001234",
                "1e30",
                "1e300",
                "-1e-300",
                "1e1000",
                "1e-1000",
                "1e39000",
                "-1e-39000",
                "1e39456",
                "1e-39456",
                "123456789012345678901234567890",
            ]
            .iter()
            .map(|s| Number::parse(s).unwrap_or_else(|| panic!("{s} is a number"))),
        );
        ns.extend(Number::from_f64(0.1));
        ns.extend(Number::from_f64(1e-300));
        ns.push(Number::from_i64(3).div(&Number::from_i64(7)).unwrap());
        ns.push(Number::infinity(true));
        // Precisions other than 512: a big integer at its own bit length, and a quotient
        // of it.
        let big = Number::from_bigint(&(BigInt::from(3) << 20_000u32));
        ns.push(big.div(&Number::from_i64(7)).unwrap());
        ns.push(big);
        for n in &ns {
            for fmt in *b"efgEGx" {
                for prec in [-1, 0, 1, 2, 5, 17, 100, 2_000] {
                    let len = n.text(fmt, prec).len();
                    let bound = n.text_len_bound(fmt, prec);
                    assert!(
                        bound >= len,
                        "{n:?} {} {prec}: {bound} < {len}",
                        fmt as char
                    );
                    // Where the exponent or the precision makes the text long, the bound
                    // is within the digits of a 512-bit mantissa of it.
                    if len > SHORT_TEXT && n.prec() <= PREC {
                        assert!(bound - len <= 200, "{n:?} {} {prec}: {bound}", fmt as char);
                    }
                }
            }
        }
        // The cty text of a large integer, exactly to a few bytes.
        let n = p("1e39000");
        assert_eq!(n.to_cty_string().len(), 39_001);
        assert!(n.text_len_bound(b'f', -1) <= 39_001 + 4);
        // A long text is charged its bound before it is made, a short one exactly after.
        let mut charged = Vec::new();
        let got = n.with_charged_cty_text(
            |len| {
                charged.push(len);
                Ok::<(), ()>(())
            },
            |t| t.len(),
        );
        assert_eq!(got, Ok(39_001));
        assert_eq!(charged, [n.text_len_bound(b'f', -1), 0]);
        for n in [i(-12), p("0.1"), p("1e300")] {
            let mut charged = Vec::new();
            let text = n.with_charged_cty_text(
                |len| {
                    charged.push(len);
                    Ok::<(), ()>(())
                },
                str::to_string,
            );
            assert_eq!(charged, [s(&n).len()]);
            assert_eq!(text, Ok(s(&n)));
        }
        // A refused charge: the text is not made.
        let r = n.with_charged_cty_text(|_| Err("over"), |_| unreachable!());
        assert_eq!(r, Err("over"));
    }

    #[test]
    fn to_cty_str_is_to_cty_string() {
        let mut ns: Vec<Number> = [
            0,
            1,
            -1,
            9,
            10,
            -10,
            42,
            1 << 53,
            (1 << 53) + 1,
            i64::MAX,
            i64::MIN,
        ]
        .into_iter()
        .map(Number::from_i64)
        .collect();
        ns.extend(
            [
                "0.5",
                "-0",
                "1e30",
                "123456789012345678901234567890",
                "-7.25",
            ]
            .iter()
            .filter_map(|s| Number::parse(s)),
        );
        ns.extend(Number::from_f64(1e300));
        ns.push(Number::from_i64(3).div(&Number::from_i64(7)).unwrap());
        for n in &ns {
            assert_eq!(&*n.to_cty_str(), n.to_cty_string());
            let mut out = String::from("x");
            n.push_cty_string(&mut out);
            assert_eq!(out, format!("x{}", n.to_cty_string()));
        }
    }
    use super::*;
    use std::collections::hash_map::DefaultHasher;

    fn p(s: &str) -> Number {
        Number::parse(s).unwrap()
    }
    fn i(v: i64) -> Number {
        Number::from_i64(v)
    }
    fn f(v: f64) -> Number {
        Number::from_f64(v).unwrap()
    }
    fn s(n: &Number) -> String {
        n.to_cty_string()
    }
    fn h(n: &Number) -> u64 {
        let mut st = DefaultHasher::new();
        n.hash(&mut st);
        st.finish()
    }

    #[test]
    fn size_is_16_bytes() {
        assert_eq!(std::mem::size_of::<Number>(), 16);
    }

    #[test]
    fn parse_integers_and_decimals() {
        assert_eq!(s(&p("0")), "0");
        assert_eq!(s(&p("-0")), "-0");
        assert!(p("-0").is_negative() && p("-0").is_zero());
        assert_eq!(s(&p("00012")), "12");
        assert_eq!(s(&p("+7")), "7");
        assert_eq!(s(&p("1.")), "1");
        assert_eq!(s(&p(".5")), "0.5");
        assert_eq!(s(&p("1.50")), "1.5");
        assert_eq!(s(&p("-12.5e3")), "-12500");
        assert_eq!(s(&p("1E2")), "100");
        assert_eq!(s(&p("1p3")), "8");
        assert_eq!(s(&p("1.5e-3")), "0.0015");
        assert_eq!(s(&p("0.1")), "0.1");
        assert_eq!(p("0.1").prec(), 512);
        assert_eq!(s(&p("9223372036854775807")), "9223372036854775807");
        assert_eq!(s(&p("9223372036854775808")), "9223372036854775808");
        assert_eq!(s(&p("-9223372036854775808")), "-9223372036854775808");
        assert_eq!(
            s(&p("123456789012345678901234567890")),
            "123456789012345678901234567890"
        );
        assert_eq!(s(&p("1180591620717411303424")), "1180591620717411303424"); // 2^70
        assert_eq!(
            p("1180591620717411303424").to_bigint(),
            Some(BigInt::from(1u128 << 70))
        );
        for bad in [
            "", ".", "-", "+", "e5", "1e", "1e+", "abc", "0x10", "1_000", " 1", "1 ", "1.2.3",
            "Inf", "inf", "NaN", "1e5x",
        ] {
            assert!(Number::parse(bad).is_none(), "{bad:?}");
        }
    }

    #[test]
    fn parse_exponent_extremes() {
        // Go: +Inf via pow5 overflow, 0 via underflow, an error past int32 exponents.
        assert!(p("1e1000000000").is_infinite());
        assert!(!p("1e1000000000").is_negative());
        assert!(p("-1e1000000000").is_negative());
        assert!(p("1e-1000000000").is_zero());
        assert!(Number::parse("1e3000000000").is_none());
        assert!(Number::parse("1e99999999999999999999").is_none());
        // the documented bound: |x| < 2^131072 (~1e39456)
        assert!(p("1e40000").is_infinite());
        assert!(p("1e-40000").is_zero());
        assert!(!p("1e39000").is_infinite());
        let huge = s(&p("1e400"));
        assert_eq!(huge.len(), 401);
        assert!(huge.starts_with('1') && huge[1..].bytes().all(|b| b == b'0'));
        assert_eq!(s(&p("1e-10")), "0.0000000001");
        // many digits: exact up to MAX_PARSE_DIGITS, then a sticky digit
        let long = format!("0.{}1", "0".repeat(1000));
        assert_eq!(s(&p(&long)), long);
        let longer = format!("0.{}", "1".repeat(MAX_PARSE_DIGITS + 10));
        let t = s(&p(&longer));
        assert!(t.starts_with("0.1111111111") && t.len() < 200, "{t}");
        let wide = format!(
            "{}e-{}",
            "9".repeat(MAX_PARSE_DIGITS + 10),
            MAX_PARSE_DIGITS + 9
        );
        assert_eq!(p(&wide).text(b'f', 3), "10.000");
    }

    #[test]
    fn parse_cty_accepts_go_infinities() {
        for (t, neg) in [
            ("Inf", false),
            ("inf", false),
            ("+Inf", false),
            ("-inf", true),
            ("-Inf", true),
        ] {
            let n = Number::parse_cty(t).unwrap();
            assert!(n.is_infinite() && n.is_negative() == neg, "{t}");
        }
        assert!(Number::parse_cty("INF").is_none());
        assert!(Number::parse_cty("infinity").is_none());
        assert_eq!(s(&Number::parse_cty("1.25").unwrap()), "1.25");
    }

    #[test]
    fn text_shortest_depends_on_precision() {
        let third = p("1").div(&p("3")).unwrap();
        assert_eq!(
            s(&third),
            "0.33333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333335"
        );
        // NumberIntVal operands: 64-bit precision
        let third64 = i(1).div(&i(3)).unwrap();
        assert_eq!(third64.prec(), 64);
        assert_eq!(s(&third64), "0.33333333333333333334");
        assert_eq!(i(1).div(&p("3")).unwrap().prec(), 512);
        // NumberFloatVal: 53 bits behaves like float64
        assert_eq!(s(&f(0.1)), "0.1");
        assert_eq!(s(&f(0.1).add(&f(0.2)).unwrap()), "0.30000000000000004");
        assert_eq!(s(&p("0.1").add(&p("0.2")).unwrap()), "0.3");
        assert_eq!(s(&f(2f64.powi(64))), "18446744073709550000");
        assert_eq!(s(&f(4611686018427387904.0)), "4611686018427388000");
        // 2^70 at 64 bits: Go's shortest is not the exact integer
        let two70 = i(1 << 35).mul(&i(1 << 35)).unwrap();
        assert_eq!(two70.prec(), 64);
        assert_eq!(s(&two70), "1180591620717411303400");
        assert_eq!(s(&p("1e21")), "1000000000000000000000");
        assert_eq!(s(&Number::infinity(false)), "+Inf");
        assert_eq!(s(&Number::infinity(true)), "-Inf");
        assert_eq!(s(&i(0).neg()), "-0");
    }

    #[test]
    fn text_formats() {
        let third = p("1").div(&p("3")).unwrap();
        assert_eq!(third.text(b'g', 10), "0.3333333333");
        assert_eq!(third.text(b'e', 5), "3.33333e-01");
        assert_eq!(third.text(b'f', 3), "0.333");
        assert_eq!(third.text(b'E', 2), "3.33E-01");
        assert_eq!(p("123456.789").text(b'e', 3), "1.235e+05");
        assert_eq!(p("123456.789").text(b'g', -1), "123456.789");
        assert_eq!(p("123456.789").text(b'G', 3), "1.23E+05");
        assert_eq!(p("1e21").text(b'g', -1), "1e+21");
        assert_eq!(p("1e-5").text(b'G', -1), "1E-05");
        assert_eq!(p("1e-7").text(b'E', -1), "1E-07");
        assert_eq!(p("0.0001").text(b'g', -1), "0.0001");
        assert_eq!(p("100").text(b'e', -1), "1e+02");
        assert_eq!(p("1e100").text(b'e', -1), "1e+100");
        // ties round to even in decimal rounding
        assert_eq!(p("0.125").text(b'f', 2), "0.12");
        assert_eq!(p("0.375").text(b'f', 2), "0.38");
        assert_eq!(p("-1.5").text(b'f', 0), "-2");
        assert_eq!(p("2.5").text(b'f', 0), "2");
        assert_eq!(p("0.6").text(b'f', 0), "1");
        // Go's quirk: no rounding when the position is left of the first digit
        assert_eq!(p("0.06").text(b'f', 0), "0");
        assert_eq!(p("0.001").text(b'f', 1), "0.0");
        assert_eq!(p("0.096").text(b'f', 1), "0.1");
        assert_eq!(p("99.96").text(b'f', 1), "100.0");
        assert_eq!(i(0).text(b'e', 2), "0.00e+00");
        assert_eq!(i(0).text(b'e', -1), "0e+00");
        assert_eq!(i(0).text(b'f', 3), "0.000");
        assert_eq!(i(0).text(b'g', -1), "0");
        assert_eq!(i(-42).text(b'f', 2), "-42.00");
        assert_eq!(i(1234567).text(b'g', 3), "1.23e+06");
        assert_eq!(Number::infinity(true).text(b'e', 3), "-Inf");
        assert_eq!(i(5).text(b'x', -1), "%x");
    }

    #[test]
    fn text_of_64_bit_ties() {
        let max = Number::from_u64(u64::MAX);
        assert_eq!(max.prec(), 64);
        assert_eq!(s(&max), "18446744073709551615");
        // 2^64+1 ties to even (2^64); 2^64+3 ties to even (2^64+4)
        assert_eq!(s(&max.add(&i(2)).unwrap()), "18446744073709551616");
        assert_eq!(s(&max.add(&i(3)).unwrap()), "18446744073709551618");
        assert_eq!(s(&max.add(&i(4)).unwrap()), "18446744073709551620");
        assert_eq!(
            max.add(&i(4)).unwrap().to_bigint(),
            Some(BigInt::from((1u128 << 64) + 4))
        );
        // the same sum at 512 bits is exact
        assert_eq!(s(&max.add(&p("2")).unwrap()), "18446744073709551617");
    }

    #[test]
    fn arithmetic_corners() {
        assert_eq!(s(&i(i64::MAX).add(&i(1)).unwrap()), "9223372036854775808");
        assert_eq!(
            s(&i(i64::MAX).add(&i(i64::MAX)).unwrap()),
            "18446744073709551614"
        );
        assert_eq!(s(&i(i64::MIN).sub(&i(1)).unwrap()), "-9223372036854775809");
        assert_eq!(s(&i(i64::MIN).neg()), "9223372036854775808");
        assert_eq!(s(&i(i64::MIN).abs()), "9223372036854775808");
        assert_eq!(
            s(&i(i64::MAX).mul(&i(i64::MAX)).unwrap()),
            "85070591730234615847396907784232501249"
        );
        assert_eq!(s(&p("0.1").sub(&p("0.1")).unwrap()), "0");
        assert!(!p("0.1").sub(&p("0.1")).unwrap().is_negative());
        assert_eq!(s(&p("-0").sub(&i(0)).unwrap()), "-0");
        assert_eq!(s(&p("-0").add(&i(0)).unwrap()), "0");
        assert_eq!(s(&i(0).mul(&i(-5)).unwrap()), "-0");
        assert_eq!(s(&i(0).div(&i(-5)).unwrap()), "-0");
        assert_eq!(s(&i(-6).div(&i(3)).unwrap()), "-2");
        assert_eq!(s(&i(7).div(&i(2)).unwrap()), "3.5");
        assert_eq!(s(&i(i64::MIN).div(&i(-1)).unwrap()), "9223372036854775808");
        // infinities
        let inf = Number::infinity(false);
        let ninf = Number::infinity(true);
        assert_eq!(s(&i(1).div(&i(0)).unwrap()), "+Inf");
        assert_eq!(s(&i(-1).div(&i(0)).unwrap()), "-Inf");
        assert_eq!(s(&i(1).div(&p("-0")).unwrap()), "-Inf");
        assert_eq!(s(&i(1).div(&inf).unwrap()), "0");
        assert_eq!(s(&inf.add(&i(1)).unwrap()), "+Inf");
        assert_eq!(s(&inf.mul(&i(-2)).unwrap()), "-Inf");
        assert_eq!(
            i(0).div(&i(0)).unwrap_err().to_string(),
            "can't divide zero by zero or infinity by infinity"
        );
        assert_eq!(inf.div(&ninf).unwrap_err(), NumError::ZeroByZero);
        assert_eq!(
            inf.add(&ninf).unwrap_err().to_string(),
            "can't compute sum of opposing infinities"
        );
        assert_eq!(
            inf.sub(&inf).unwrap_err().to_string(),
            "can't subtract infinity from itself"
        );
        assert_eq!(
            inf.mul(&i(0)).unwrap_err().to_string(),
            "can't multiply zero by infinity"
        );
        // Beyond fn-hcl's range (Go's is wider): refused, not ±Inf or 0.
        assert_eq!(
            p("1e39000").mul(&p("1e1000")).unwrap_err(),
            NumError::OutOfRange
        );
        assert_eq!(
            p("1e-39000").mul(&p("1e-1000")).unwrap_err(),
            NumError::OutOfRange
        );
        // multiplication keeps the 512-bit product and the larger precision
        let prod = p("0.1").mul(&i(3)).unwrap();
        assert_eq!(prod.prec(), 512);
        assert_eq!(s(&prod), "0.3");
        assert_eq!(f(0.5).mul(&f(0.5)).unwrap().prec(), 53);
        assert_eq!(i(3).mul(&i(5)).unwrap().prec(), 64);
        assert_eq!(
            s(&p("100000000000000000000").mul(&p("10")).unwrap()),
            "1000000000000000000000"
        );
    }

    #[test]
    fn modulo_like_cty() {
        assert_eq!(s(&p("10").rem(&p("3")).unwrap()), "1");
        assert_eq!(s(&p("-10").rem(&p("3")).unwrap()), "-1");
        assert_eq!(s(&p("10").rem(&p("-3")).unwrap()), "1");
        assert_eq!(s(&p("7.5").rem(&p("2")).unwrap()), "1.5");
        assert_eq!(s(&p("-7.5").rem(&p("2")).unwrap()), "-1.5");
        assert_eq!(s(&p("5.5").rem(&p("0.5")).unwrap()), "0");
        assert_eq!(s(&p("1").rem(&p("2.5")).unwrap()), "1");
        assert_eq!(s(&p("-6").rem(&p("3")).unwrap()), "0");
        assert!(!p("-6").rem(&p("3")).unwrap().is_negative());
        assert_eq!(s(&p("5").rem(&p("0")).unwrap()), "5");
        assert_eq!(s(&p("5.25").rem(&p("-0")).unwrap()), "5.25");
        assert_eq!(s(&i(i64::MIN).rem(&i(-1)).unwrap()), "0");
        assert_eq!(p("7").rem(&p("2")).unwrap().prec(), 512);
        assert_eq!(i(7).rem(&p("2")).unwrap().prec(), 64);
        let inf = Number::infinity(false);
        assert_eq!(
            p("1").rem(&inf).unwrap_err().to_string(),
            "can't use modulo with zero and infinity"
        );
        assert_eq!(inf.rem(&inf).unwrap_err(), NumError::ModuloInfinity);
        assert_eq!(inf.rem(&p("2")).unwrap_err(), NumError::ModuloOfInfinity);
        assert_eq!(s(&inf.rem(&p("0")).unwrap()), "+Inf");
        // a 53-bit dividend: the quotient is rounded at 53 bits as Go does
        // 2^60 % 3 at 53 bits: trunc(q) = 2^60/3 rounded to a multiple of 64, times 3 is
        // 2^60 - 64, which rounds (a tie, to even) back to 2^60: the remainder is 0.
        assert_eq!(s(&f(2f64.powi(60)).rem(&f(3.0)).unwrap()), "0");
        assert_eq!(s(&p("1152921504606846976").rem(&f(3.0)).unwrap()), "1");
    }

    #[test]
    fn floor_ceil_abs_neg() {
        assert_eq!(s(&p("1.2").ceil()), "2");
        assert_eq!(s(&p("-1.2").ceil()), "-1");
        assert_eq!(s(&p("-0.5").ceil()), "0");
        assert!(!p("-0.5").ceil().is_negative());
        assert_eq!(s(&p("-0.5").floor()), "-1");
        assert_eq!(s(&p("-0").floor()), "0"); // SetInt(0) is +0
        assert_eq!(
            s(&p("1e20").add(&p("0.5")).unwrap().floor()),
            "100000000000000000000"
        );
        assert_eq!(p("2.5").floor().prec(), 512);
        assert_eq!(f(2.5).floor().prec(), 53);
        assert!(Number::infinity(true).floor().is_infinite());
        assert_eq!(s(&p("-3.25").abs()), "3.25");
        assert_eq!(s(&p("-0").abs()), "0");
        assert_eq!(s(&p("3.25").neg()), "-3.25");
        assert_eq!(s(&p("-0").neg()), "0");
    }

    #[test]
    fn float64_conversion() {
        assert_eq!(p("0.1").to_f64(), 0.1);
        assert_eq!(p("1").div(&p("3")).unwrap().to_f64(), 1.0 / 3.0);
        assert_eq!(p("9007199254740993").to_f64(), 9007199254740992.0);
        assert_eq!(p("9007199254740995").to_f64(), 9007199254740996.0);
        assert_eq!(p("1e308").mul(&p("10")).unwrap().to_f64(), f64::INFINITY);
        assert_eq!(p("-1e400").to_f64(), f64::NEG_INFINITY);
        assert_eq!(p("4.9406564584124654e-324").to_f64(), 5e-324);
        assert_eq!(p("2.4703282292062327e-324").to_f64(), 0.0);
        assert_eq!(p("2.4703282292062328e-324").to_f64(), 5e-324);
        assert_eq!(
            p("2.2250738585072011e-308").to_f64(),
            2.225073858507201e-308
        );
        assert!(p("-0").to_f64().is_sign_negative());
        assert_eq!(p("1e-400").to_f64(), 0.0);
        assert_eq!(p("1.7976931348623157e308").to_f64(), f64::MAX);
        assert_eq!(p("1.7976931348623159e308").to_f64(), f64::INFINITY);
        assert_eq!(p("1e400").to_f64_checked(), Err(NumError::FloatRange));
        assert_eq!(Number::infinity(false).to_f64_checked(), Ok(f64::INFINITY));
        for x in [0.1, 1.5e-310, 123456.789, -2.5e300, 5e-324, f64::MAX] {
            assert_eq!(f(x).to_f64(), x);
            assert_eq!(Number::from_f64_decimal(x).unwrap().to_f64(), x);
        }
        assert_eq!(s(&Number::from_f64_decimal(0.1).unwrap()), "0.1");
        assert_eq!(Number::from_f64_decimal(0.1).unwrap().prec(), 512);
        assert!(Number::from_f64(f64::NAN).is_none());
        assert_eq!(s(&f(-0.0)), "-0");
        assert_eq!(
            f(f64::MAX).text(b'f', 0),
            "179769313486231570814527423731704356798070567525844996598917476803157260780028538760589558632766878171540458953514382464234321326889464182768467546703537516986049910576551282076245490090389328944075868508455133942304583236903222948165808559332123348274797826204144723168738177180919299881250404026184124858368"
        );
        assert_eq!(
            NumError::FloatRange.to_string(),
            format!(
                "value must be between -{0} and {0} inclusive",
                f(f64::MAX).text(b'f', 6)
            )
        );
    }

    #[test]
    fn integer_accessors() {
        assert_eq!(p("42").to_i64(), Some(42));
        assert_eq!(p("-0").to_i64(), Some(0));
        assert_eq!(p("4.5").to_i64(), None);
        assert_eq!(p("1e19").to_i64(), None);
        assert_eq!(
            p("1e19").to_bigint(),
            Some(BigInt::from(10_000_000_000_000_000_000u64))
        );
        assert_eq!(p("4.5").to_bigint(), None);
        assert_eq!(Number::infinity(false).to_bigint(), None);
        assert!(p("1e30").is_integer());
        assert!(!p("0.5").is_integer());
        assert!(!Number::infinity(false).is_integer());
        assert_eq!(p("-3").signum(), -1);
        assert_eq!(p("-0").signum(), 0);
        assert_eq!(p("0.001").signum(), 1);
        let b = BigInt::parse_bytes(b"-123456789012345678901234567890", 10).unwrap();
        let n = Number::from_bigint(&b);
        assert_eq!(n.prec(), 97);
        assert_eq!(n.to_bigint(), Some(b));
        assert_eq!(Number::from_bigint(&BigInt::from(5)).prec(), 64);
        assert_eq!(s(&Number::from_u64(u64::MAX)), "18446744073709551615");
    }

    #[test]
    fn ordering_and_equality() {
        let v = [
            Number::infinity(true),
            p("-1e400"),
            p("-1"),
            p("-0.5"),
            p("0"),
            p("0.1"),
            p("1").div(&p("3")).unwrap(),
            p("1"),
            p("9223372036854775808"),
            p("1e400"),
            Number::infinity(false),
        ];
        for (a, x) in v.iter().enumerate() {
            for (b, y) in v.iter().enumerate() {
                assert_eq!(x.cmp(y), a.cmp(&b), "{x:?} vs {y:?}");
            }
        }
        assert_eq!(p("-0"), p("0"));
        assert_eq!(p("-0").cmp_num(&p("0")), Ordering::Equal);
        assert!(f(0.1) > p("0.1"));
        assert_ne!(f(0.1), p("0.1"));
        assert!(f(0.1).cty_equals(&p("0.1")));
        assert!(p("-0").cty_equals(&i(0)));
        assert!(
            !i(1)
                .div(&i(3))
                .unwrap()
                .cty_equals(&p("1").div(&p("3")).unwrap())
        );
        assert!(i(5).cty_equals(&p("5")));
    }

    #[test]
    fn hashing_is_representation_independent() {
        let groups = [
            vec![
                i(5),
                p("5"),
                p("5.0"),
                p("50e-1"),
                f(5.0),
                Number::from_u64(5),
                Number::from_bigint(&BigInt::from(5)),
            ],
            vec![
                i(0),
                p("0"),
                p("-0"),
                f(-0.0),
                i(0).neg(),
                p("0.1").sub(&p("0.1")).unwrap(),
            ],
            vec![p("0.5"), f(0.5), i(1).div(&i(2)).unwrap()],
            vec![
                p("1e30"),
                Number::from_bigint(
                    &BigInt::parse_bytes(b"1000000000000000000000000000000", 10).unwrap(),
                ),
            ],
            vec![
                p("9223372036854775808"),
                i(i64::MIN).neg(),
                i(i64::MAX).add(&i(1)).unwrap(),
            ],
            vec![
                Number::infinity(false),
                i(1).div(&i(0)).unwrap(),
                Number::parse_cty("inf").unwrap(),
            ],
        ];
        for g in &groups {
            for x in g {
                for y in g {
                    assert_eq!(x, y);
                    assert_eq!(h(x), h(y), "{x:?} vs {y:?}");
                }
            }
        }
        assert_ne!(h(&i(5)), h(&i(6)));
    }
}
