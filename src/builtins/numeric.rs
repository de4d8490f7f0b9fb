//! Built-in functions: numeric.

use super::FuncDef;

/// The numeric functions.
pub static FUNCS: &[FuncDef] = &[];
