//! Built-in functions: string.

use super::FuncDef;

/// The string functions.
pub static FUNCS: &[FuncDef] = &[];
