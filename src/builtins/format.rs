//! Built-in functions: format.

use super::FuncDef;

/// The format functions.
pub static FUNCS: &[FuncDef] = &[];
