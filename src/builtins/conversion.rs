//! Built-in functions: type conversion (`tobool`, `tolist`, `tomap`, `tonumber`, `toset`,
//! `tostring`), cty's `MakeToFunc`: an unsafe conversion to the target type, with friendlier
//! messages for the failures users actually hit.

use super::{FuncDef, FuncError};
use crate::text::quote::go_quote;
use crate::value::convert::{
    can_convert, convert, friendly_name_for_constraint, mismatch_message, to_string_value,
};
use crate::value::{Type, Value};

/// The conversion functions.
pub static FUNCS: &[FuncDef] = funcs! {
    tobool(v?: Any) => |a| to(a, Type::Bool),
    tolist(v?: Any) => |a| to(a, Type::list(Type::Dynamic)),
    tomap(v?: Any) => |a| to(a, Type::map(Type::Dynamic)),
    tonumber(v?: Any) => |a| to(a, Type::Number),
    toset(v?: Any) => |a| to(a, Type::set(Type::Dynamic)),
    tostring(v?: Any) => |a| to(a, Type::String),
};

/// cty's `MakeToFunc(want)`.
fn to(args: &[Value], want: Type) -> Result<Value, FuncError> {
    let Some(v) = args.first() else {
        return Err(FuncError::general("not enough arguments"));
    };
    // The common cases without building types: already the wanted type, or a number
    // (or bool) to string, which cty always converts the way `convert` does.
    if v.has_type(&want) {
        return Ok(v.clone());
    }
    if want == Type::String
        && let Ok(s) = to_string_value(v)
    {
        return Ok(Value::string(s));
    }
    let got = v.type_of();
    if got == want {
        return Ok(v.clone());
    }
    if !can_convert(&got, &want, true) {
        let msg = match (&got, &want) {
            (Type::Tuple(_), Type::Tuple(_)) => format!(
                "incompatible tuple type for conversion: {}",
                mismatch_message(&got, &want)
            ),
            (Type::Object(_), Type::Object(_)) => format!(
                "incompatible object type for conversion: {}",
                mismatch_message(&got, &want)
            ),
            _ => format!(
                "cannot convert {} to {}",
                got.friendly_name(),
                friendly_name_for_constraint(&want)
            ),
        };
        return Err(FuncError::arg(0, msg));
    }
    convert(v, &want).map_err(|e| {
        let what = || match v {
            Value::String(s) => go_quote(s),
            _ => "string".to_string(),
        };
        let msg = match (&got, &want) {
            (Type::String, Type::Bool) => format!(
                "cannot convert {} to bool; only the strings \"true\" or \"false\" are allowed",
                what()
            ),
            (Type::String, Type::Number)
                if e.to_string() != crate::value::number::OUT_OF_RANGE_MSG =>
            {
                format!(
                    "cannot convert {} to number; given string must be a decimal representation of a number",
                    what()
                )
            }
            _ => e.to_string(),
        };
        FuncError::arg(0, msg)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builtins::test_util::{ok, run, s};
    use crate::value::Str;
    use crate::value::ops::make_set;

    fn arg_err(name: &str, args: Vec<Value>, msg: &str) {
        match run(name, args) {
            Err(FuncError::Arg { index: 0, message }) => assert_eq!(message, msg),
            other => panic!("{name}: unexpected {other:?}"),
        }
    }

    #[test]
    fn tostring_cases() {
        ok("tostring", vec![Value::int(1)], s("1"));
        ok("tostring", vec![Value::Bool(true)], s("true"));
        ok("tostring", vec![Value::NULL], Value::Null(Type::String));
        ok("tostring", vec![s("x")], s("x"));
        ok("tostring", vec![Value::int(-12)], s("-12"));
        arg_err(
            "tostring",
            vec![Value::tuple(vec![Value::int(1)])],
            "cannot convert tuple to string",
        );
        arg_err(
            "tostring",
            vec![Value::object(vec![("a".into(), Value::int(1))])],
            "cannot convert object to string",
        );
    }

    #[test]
    fn tonumber_cases() {
        ok("tonumber", vec![s("42")], Value::int(42));
        ok("tonumber", vec![s("1e3")], Value::int(1000));
        ok("tonumber", vec![Value::int(7)], Value::int(7));
        ok("tonumber", vec![Value::NULL], Value::Null(Type::Number));
        let bad = "given string must be a decimal representation of a number";
        arg_err(
            "tonumber",
            vec![s("0x10")],
            &format!("cannot convert \"0x10\" to number; {bad}"),
        );
        arg_err(
            "tonumber",
            vec![s(" 5")],
            &format!("cannot convert \" 5\" to number; {bad}"),
        );
        arg_err(
            "tonumber",
            vec![s("")],
            &format!("cannot convert \"\" to number; {bad}"),
        );
        arg_err(
            "tonumber",
            vec![Value::Bool(true)],
            "cannot convert bool to number",
        );
    }

    #[test]
    fn tobool_cases() {
        ok("tobool", vec![s("true")], Value::Bool(true));
        ok("tobool", vec![s("false")], Value::Bool(false));
        ok("tobool", vec![Value::Bool(true)], Value::Bool(true));
        ok("tobool", vec![Value::NULL], Value::Null(Type::Bool));
        let only = "only the strings \"true\" or \"false\" are allowed";
        arg_err(
            "tobool",
            vec![s("yes")],
            &format!("cannot convert \"yes\" to bool; {only}"),
        );
        arg_err(
            "tobool",
            vec![s("True")],
            &format!("cannot convert \"True\" to bool; {only}"),
        );
        arg_err(
            "tobool",
            vec![Value::int(1)],
            "cannot convert number to bool",
        );
    }

    #[test]
    fn tolist_toset_tomap_cases() {
        ok(
            "tolist",
            vec![Value::tuple(vec![s("a"), Value::int(1)])],
            Value::list(Type::String, vec![s("a"), s("1")]),
        );
        ok(
            "tolist",
            vec![Value::tuple(vec![])],
            Value::list(Type::Dynamic, vec![]),
        );
        ok(
            "tolist",
            vec![make_set(Type::String, vec![s("b"), s("a")])],
            Value::list(Type::String, vec![s("a"), s("b")]),
        );
        ok(
            "tolist",
            vec![Value::tuple(vec![Value::int(1), Value::NULL])],
            Value::list(Type::Number, vec![Value::int(1), Value::Null(Type::Number)]),
        );
        arg_err(
            "tolist",
            vec![Value::object(vec![("a".into(), Value::int(1))])],
            "cannot convert object to list of any single type",
        );
        arg_err(
            "tolist",
            vec![Value::tuple(vec![s("a"), Value::object(vec![])])],
            "cannot convert tuple to list of any single type",
        );
        arg_err(
            "tolist",
            vec![s("a")],
            "cannot convert string to list of any single type",
        );
        ok(
            "toset",
            vec![Value::tuple(vec![Value::int(1), s("1")])],
            make_set(Type::String, vec![s("1")]),
        );
        ok(
            "toset",
            vec![Value::NULL],
            Value::Null(Type::set(Type::Dynamic)),
        );
        ok(
            "toset",
            vec![Value::tuple(vec![s("a"), Value::int(1), Value::Bool(true)])],
            make_set(Type::String, vec![s("1"), s("a"), s("true")]),
        );
        arg_err(
            "toset",
            vec![s("a")],
            "cannot convert string to set of any single type",
        );
        let o: Vec<(Str, Value)> = vec![("a".into(), Value::int(1)), ("b".into(), s("x"))];
        ok(
            "tomap",
            vec![Value::object(o)],
            Value::map(
                Type::String,
                vec![("a".into(), s("1")), ("b".into(), s("x"))],
            ),
        );
        ok(
            "tomap",
            vec![Value::object(vec![])],
            Value::map(Type::Dynamic, vec![]),
        );
        ok(
            "tomap",
            vec![Value::NULL],
            Value::Null(Type::map(Type::Dynamic)),
        );
        arg_err(
            "tomap",
            vec![Value::object(vec![
                ("a".into(), Value::int(1)),
                ("b".into(), Value::Bool(true)),
            ])],
            "cannot convert object to map of any single type",
        );
        arg_err(
            "tomap",
            vec![Value::tuple(vec![s("a")])],
            "cannot convert tuple to map of any single type",
        );
    }
}
