//! Built-in functions: numeric (Terraform 1.5.7 / go-cty stdlib: abs ceil floor log max
//! min parseint pow signum), with cty's exact numbers and error messages.

use super::{FuncDef, FuncError, Param, ParamType};
use crate::value::Value;
use crate::value::number::{EXP_LIMIT, NumError, Number};
use num_bigint::{BigInt, BigUint};
use num_traits::Zero;

/// The numeric functions.
pub static FUNCS: &[FuncDef] = &[
    FuncDef {
        name: "abs",
        params: &[Param::new("num", ParamType::Number)],
        var_param: None,
        imp: abs,
    },
    FuncDef {
        name: "ceil",
        params: &[Param::new("num", ParamType::Number)],
        var_param: None,
        imp: ceil,
    },
    FuncDef {
        name: "floor",
        params: &[Param::new("num", ParamType::Number)],
        var_param: None,
        imp: floor,
    },
    FuncDef {
        name: "log",
        params: &[
            Param::new("num", ParamType::Number),
            Param::new("base", ParamType::Number),
        ],
        var_param: None,
        imp: log,
    },
    FuncDef {
        name: "max",
        params: &[],
        var_param: Some(Param::new("numbers", ParamType::Number)),
        imp: max,
    },
    FuncDef {
        name: "min",
        params: &[],
        var_param: Some(Param::new("numbers", ParamType::Number)),
        imp: min,
    },
    FuncDef {
        name: "parseint",
        params: &[
            Param::new("number", ParamType::Any),
            Param::new("base", ParamType::Number),
        ],
        var_param: None,
        imp: parseint,
    },
    FuncDef {
        name: "pow",
        params: &[
            Param::new("num", ParamType::Number),
            Param::new("power", ParamType::Number),
        ],
        var_param: None,
        imp: pow,
    },
    FuncDef {
        name: "signum",
        params: &[Param::new("num", ParamType::Number)],
        var_param: None,
        imp: signum,
    },
];

/// gocty's message for a number that does not fit Go's `int`.
const WHOLE_NUMBER_MSG: &str =
    "value must be a whole number, between -9223372036854775808 and 9223372036854775807";

/// Argument `i` as a number (arguments arrive converted, so anything else is a bug in the
/// caller; report it instead of panicking).
fn num(args: &[Value], i: usize) -> Result<&Number, FuncError> {
    match args.get(i) {
        Some(Value::Number(n)) => Ok(n),
        Some(v) => Err(FuncError::arg(
            i,
            format!("number required, but have {}", v.type_of().friendly_name()),
        )),
        None => Err(FuncError::general("not enough arguments")),
    }
}

fn general(e: NumError) -> FuncError {
    FuncError::general(e.to_string())
}

fn abs(args: &[Value]) -> Result<Value, FuncError> {
    Ok(Value::Number(num(args, 0)?.abs()))
}

fn ceil(args: &[Value]) -> Result<Value, FuncError> {
    Ok(Value::Number(num(args, 0)?.ceil()))
}

fn floor(args: &[Value]) -> Result<Value, FuncError> {
    Ok(Value::Number(num(args, 0)?.floor()))
}

fn log(args: &[Value]) -> Result<Value, FuncError> {
    let n = num(args, 0)?;
    let base = num(args, 1)?;
    n.log(base).map(Value::Number).map_err(general)
}

fn pow(args: &[Value]) -> Result<Value, FuncError> {
    let n = num(args, 0)?;
    let power = num(args, 1)?;
    n.pow(power).map(Value::Number).map_err(general)
}

/// cty's `max`: the first argument greater than all before it (starting from -Inf).
fn max(args: &[Value]) -> Result<Value, FuncError> {
    extreme(args, std::cmp::Ordering::Greater)
}

/// cty's `min`.
fn min(args: &[Value]) -> Result<Value, FuncError> {
    extreme(args, std::cmp::Ordering::Less)
}

fn extreme(args: &[Value], want: std::cmp::Ordering) -> Result<Value, FuncError> {
    if args.is_empty() {
        return Err(FuncError::general("must pass at least one number"));
    }
    let mut best = Number::infinity(want == std::cmp::Ordering::Greater);
    for i in 0..args.len() {
        let n = num(args, i)?;
        if n.cmp(&best) == want {
            best = n.clone();
        }
    }
    Ok(Value::Number(best))
}

/// Terraform's `signum`: the argument must convert to a Go `int`.
fn signum(args: &[Value]) -> Result<Value, FuncError> {
    let n = num(args, 0)?;
    let i = n
        .to_i64()
        .ok_or_else(|| FuncError::general(WHOLE_NUMBER_MSG))?;
    Ok(Value::Number(Number::from_i64(i.signum())))
}

/// cty's `parseint`: Go's `big.Int.SetString(s, base)` for bases 2 to 62.
fn parseint(args: &[Value]) -> Result<Value, FuncError> {
    let s = match args.first() {
        Some(Value::String(s)) => s,
        Some(v) => {
            return Err(FuncError::arg(
                0,
                format!(
                    "first argument must be a string, not {}",
                    v.type_of().friendly_name()
                ),
            ));
        }
        None => return Err(FuncError::general("not enough arguments")),
    };
    let base = num(args, 1)?
        .to_i64()
        .ok_or_else(|| FuncError::arg(1, WHOLE_NUMBER_MSG))?;
    if !(2..=62).contains(&base) {
        return Err(FuncError::arg(
            1,
            "base must be a whole number between 2 and 62 inclusive",
        ));
    }
    let fail = || {
        FuncError::arg(
            0,
            format!(
                "cannot parse {} as a base {} integer",
                crate::text::quote::go_quote(s),
                base
            ),
        )
    };
    let i = parse_big_int(s, base as u32).ok_or_else(fail)?;
    if i.bits() >= EXP_LIMIT as u64 {
        return Err(fail());
    }
    Ok(Value::Number(Number::from_bigint(&i)))
}

/// Go's `big.Int.SetString(s, base)` with 2 <= base <= 62: optional sign, then digits
/// `0-9`, `a-z`, `A-Z` (letters case-insensitive up to base 36; above it `A-Z` are 36..61),
/// no prefixes or underscores.
fn parse_big_int(s: &str, base: u32) -> Option<BigInt> {
    let (neg, body) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    if body.is_empty() {
        return None;
    }
    // Reject digit strings too long to fit EXP_LIMIT bits before the quadratic conversion.
    let significant = body.trim_start_matches('0').len();
    if significant > 1 && (significant - 1) as f64 * f64::from(base).log2() >= EXP_LIMIT as f64 {
        return None;
    }
    let mut digits = Vec::with_capacity(body.len());
    for c in body.bytes() {
        let d = match c {
            b'0'..=b'9' => (c - b'0') as u32,
            b'a'..=b'z' => (c - b'a') as u32 + 10,
            b'A'..=b'Z' if base <= 36 => (c - b'A') as u32 + 10,
            b'A'..=b'Z' => (c - b'A') as u32 + 36,
            _ => return None,
        };
        if d >= base {
            return None;
        }
        digits.push(d as u8);
    }
    let mag = BigUint::from_radix_be(&digits, base)?;
    let i = BigInt::from(mag);
    Some(if neg && !i.is_zero() { -i } else { i })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::Value;

    fn n(s: &str) -> Value {
        Value::Number(Number::parse(s).unwrap())
    }

    fn call(name: &str, args: Vec<Value>) -> Result<Value, FuncError> {
        let def = FUNCS.iter().find(|f| f.name == name).unwrap();
        (def.imp)(&args)
    }

    fn err(r: Result<Value, FuncError>) -> Result<(), FuncError> {
        r.map(|v| panic!("expected an error, got {v:?}"))
    }

    fn ok_str(name: &str, args: Vec<Value>) -> String {
        match call(name, args) {
            Ok(Value::Number(x)) => x.to_cty_string(),
            other => panic!("{name}: unexpected {other:?}"),
        }
    }

    #[test]
    fn abs_cases() {
        assert_eq!(ok_str("abs", vec![n("-5")]), "5");
        assert_eq!(ok_str("abs", vec![n("0")]), "0");
        assert_eq!(ok_str("abs", vec![n("-0.5")]), "0.5");
        assert_eq!(ok_str("abs", vec![n("3.7")]), "3.7");
        assert_eq!(
            ok_str("abs", vec![n("-12345678901234567890")]),
            "12345678901234567890"
        );
        assert_eq!(
            ok_str("abs", vec![Value::Number(Number::infinity(true))]),
            "+Inf"
        );
    }

    #[test]
    fn ceil_floor_cases() {
        assert_eq!(ok_str("ceil", vec![n("1.2")]), "2");
        assert_eq!(ok_str("ceil", vec![n("-1.2")]), "-1");
        assert_eq!(ok_str("ceil", vec![n("5")]), "5");
        assert_eq!(ok_str("ceil", vec![n("-0.5")]), "0");
        assert_eq!(ok_str("floor", vec![n("1.8")]), "1");
        assert_eq!(ok_str("floor", vec![n("-1.2")]), "-2");
        assert_eq!(ok_str("floor", vec![n("-0.5")]), "-1");
        let big = Number::parse("1e20")
            .unwrap()
            .add(&Number::parse("0.5").unwrap())
            .unwrap();
        assert_eq!(
            ok_str("floor", vec![Value::Number(big)]),
            "100000000000000000000"
        );
        assert_eq!(
            ok_str("ceil", vec![Value::Number(Number::infinity(false))]),
            "+Inf"
        );
    }

    #[test]
    fn log_cases() {
        assert_eq!(ok_str("log", vec![n("100"), n("10")]), "2");
        assert_eq!(ok_str("log", vec![n("8"), n("2")]), "3");
        assert_eq!(ok_str("log", vec![n("1"), n("10")]), "0");
        assert_eq!(ok_str("log", vec![n("16"), n("4")]), "2");
        assert_eq!(ok_str("log", vec![n("10"), n("3")]), "2.095903274289385");
        assert_eq!(ok_str("log", vec![n("0"), n("10")]), "-Inf");
        assert_eq!(
            err(call("log", vec![n("-1"), n("10")])),
            Err(FuncError::general(
                "panic in function implementation: Float.SetFloat64(NaN)"
            ))
        );
        assert_eq!(
            err(call("log", vec![n("1e400"), n("10")])),
            Err(FuncError::general(NumError::FloatRange.to_string()))
        );
    }

    #[test]
    fn max_min_cases() {
        assert_eq!(ok_str("max", vec![n("1"), n("5"), n("3")]), "5");
        assert_eq!(ok_str("max", vec![n("-1"), n("-5")]), "-1");
        assert_eq!(ok_str("max", vec![n("1.5"), n("1.25")]), "1.5");
        assert_eq!(ok_str("min", vec![n("1"), n("5"), n("3")]), "1");
        assert_eq!(ok_str("min", vec![n("-1e10"), n("0")]), "-10000000000");
        assert_eq!(ok_str("min", vec![n("0.1"), n("0.2")]), "0.1");
        assert_eq!(
            err(call("max", vec![])),
            Err(FuncError::general("must pass at least one number"))
        );
        assert_eq!(
            err(call("min", vec![])),
            Err(FuncError::general("must pass at least one number"))
        );
        assert_eq!(
            err(call("min", vec![Value::string("x")])),
            Err(FuncError::arg(0, "number required, but have string"))
        );
    }

    #[test]
    fn parseint_cases() {
        let s = Value::string;
        assert_eq!(ok_str("parseint", vec![s("100"), n("10")]), "100");
        assert_eq!(ok_str("parseint", vec![s("FF"), n("16")]), "255");
        assert_eq!(ok_str("parseint", vec![s("ff"), n("16")]), "255");
        assert_eq!(ok_str("parseint", vec![s("-1010"), n("2")]), "-10");
        assert_eq!(ok_str("parseint", vec![s("zz"), n("36")]), "1295");
        assert_eq!(ok_str("parseint", vec![s("777"), n("8")]), "511");
        assert_eq!(ok_str("parseint", vec![s("12"), n("37")]), "39");
        assert_eq!(ok_str("parseint", vec![s("Z"), n("62")]), "61");
        assert_eq!(ok_str("parseint", vec![s("+7"), n("10")]), "7");
        assert_eq!(
            ok_str(
                "parseint",
                vec![s("123456789012345678901234567890"), n("10")]
            ),
            "123456789012345678901234567890"
        );
        assert_eq!(
            err(call("parseint", vec![s("zz"), n("10")])),
            Err(FuncError::arg(
                0,
                "cannot parse \"zz\" as a base 10 integer"
            ))
        );
        assert_eq!(
            err(call("parseint", vec![s("1.5"), n("10")])),
            Err(FuncError::arg(
                0,
                "cannot parse \"1.5\" as a base 10 integer"
            ))
        );
        assert_eq!(
            err(call("parseint", vec![s(""), n("10")])),
            Err(FuncError::arg(0, "cannot parse \"\" as a base 10 integer"))
        );
        assert_eq!(
            err(call("parseint", vec![s("-"), n("10")])),
            Err(FuncError::arg(0, "cannot parse \"-\" as a base 10 integer"))
        );
        assert_eq!(
            err(call("parseint", vec![s("a\tb"), n("16")])),
            Err(FuncError::arg(
                0,
                "cannot parse \"a\\tb\" as a base 16 integer"
            ))
        );
        assert_eq!(
            err(call("parseint", vec![s("12"), n("1")])),
            Err(FuncError::arg(
                1,
                "base must be a whole number between 2 and 62 inclusive"
            ))
        );
        assert_eq!(
            err(call("parseint", vec![s("12"), n("63")])),
            Err(FuncError::arg(
                1,
                "base must be a whole number between 2 and 62 inclusive"
            ))
        );
        assert_eq!(
            err(call("parseint", vec![s("12"), n("2.5")])),
            Err(FuncError::arg(1, WHOLE_NUMBER_MSG))
        );
        assert_eq!(
            err(call("parseint", vec![n("12"), n("10")])),
            Err(FuncError::arg(
                0,
                "first argument must be a string, not number"
            ))
        );
        // past the documented bound (EXP_LIMIT bits) parseint fails like a bad string
        let huge = "1".repeat(200_000);
        assert_eq!(
            err(call("parseint", vec![s(&huge), n("2")])),
            Err(FuncError::arg(
                0,
                format!("cannot parse \"{huge}\" as a base 2 integer")
            ))
        );
        let padded = format!("{}101", "0".repeat(300_000));
        assert_eq!(ok_str("parseint", vec![s(&padded), n("2")]), "5");
        // parseint results are exact with precision max(bits, 64)
        let v = call("parseint", vec![s("ffffffffffffffffffff"), n("16")]).unwrap();
        let Value::Number(x) = v else { panic!() };
        assert_eq!(x.prec(), 80);
    }

    #[test]
    fn pow_cases() {
        assert_eq!(ok_str("pow", vec![n("2"), n("10")]), "1024");
        assert_eq!(ok_str("pow", vec![n("2"), n("0.5")]), "1.4142135623730951");
        assert_eq!(ok_str("pow", vec![n("10"), n("-2")]), "0.01");
        assert_eq!(ok_str("pow", vec![n("0"), n("0")]), "1");
        assert_eq!(ok_str("pow", vec![n("2"), n("64")]), "18446744073709550000");
        assert_eq!(ok_str("pow", vec![n("-2"), n("3")]), "-8");
        assert_eq!(ok_str("pow", vec![n("10"), n("400")]), "+Inf");
        assert_eq!(
            err(call("pow", vec![n("-8"), n("0.5")])),
            Err(FuncError::general(
                "panic in function implementation: Float.SetFloat64(NaN)"
            ))
        );
    }

    #[test]
    fn signum_cases() {
        assert_eq!(ok_str("signum", vec![n("-3")]), "-1");
        assert_eq!(ok_str("signum", vec![n("0")]), "0");
        assert_eq!(ok_str("signum", vec![n("7")]), "1");
        assert_eq!(ok_str("signum", vec![n("-0")]), "0");
        assert_eq!(
            err(call("signum", vec![n("2.5")])),
            Err(FuncError::general(WHOLE_NUMBER_MSG))
        );
        assert_eq!(
            err(call("signum", vec![n("-0.001")])),
            Err(FuncError::general(WHOLE_NUMBER_MSG))
        );
        assert_eq!(
            err(call("signum", vec![n("1e30")])),
            Err(FuncError::general(WHOLE_NUMBER_MSG))
        );
    }

    #[test]
    fn registry_has_all_numeric_functions() {
        let names: Vec<&str> = FUNCS.iter().map(|f| f.name).collect();
        assert_eq!(
            names,
            [
                "abs", "ceil", "floor", "log", "max", "min", "parseint", "pow", "signum"
            ]
        );
    }

    #[test]
    fn go_quote_escapes() {
        assert_eq!(crate::text::quote::go_quote("a\"b\\c"), "\"a\\\"b\\\\c\"");
        assert_eq!(crate::text::quote::go_quote("\u{1}é"), "\"\\x01é\"");
        assert_eq!(crate::text::quote::go_quote("\u{a0}"), "\"\\u00a0\"");
    }
}
