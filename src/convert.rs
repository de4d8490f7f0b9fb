//! cty's type conversion and unification (go-cty `convert`): the rules behind function
//! arguments, `?:` results, templates, operators and the `to*` functions.
//! OWNED BY the conversion task: this provisional version converts only identical types.

use crate::value::{Type, Value};
use std::fmt;

/// A failed conversion, with cty's message (e.g. `string required`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConvertError(pub String);

impl fmt::Display for ConvertError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ConvertError {}

/// Convert `v` to `want` (cty `convert.Convert`).
pub fn convert(v: &Value, want: &Type) -> Result<Value, ConvertError> {
    if *want == Type::Dynamic || v.type_of() == *want {
        return Ok(v.clone());
    }
    // Provisional primitive conversions (the conversion task replaces this file).
    match (v, want) {
        (Value::Number(n), Type::String) => return Ok(Value::string(n.to_cty_string())),
        (Value::Bool(b), Type::String) => {
            return Ok(Value::string(if *b { "true" } else { "false" }));
        }
        (Value::String(s), Type::Number) => {
            return crate::number::Number::parse(s)
                .map(Value::Number)
                .ok_or_else(|| ConvertError("a number is required".into()));
        }
        (Value::String(s), Type::Bool) => {
            return match &**s {
                "true" => Ok(Value::Bool(true)),
                "false" => Ok(Value::Bool(false)),
                _ => Err(ConvertError("a bool is required".into())),
            };
        }
        (Value::Null(_), _) => return Ok(Value::Null(want.clone())),
        _ => {}
    }
    Err(ConvertError(format!("{} required", want.friendly_name())))
}
