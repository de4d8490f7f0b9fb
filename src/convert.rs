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
    Err(ConvertError(format!("{} required", want.friendly_name())))
}
