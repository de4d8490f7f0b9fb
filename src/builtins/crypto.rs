//! Built-in functions: crypto.

use super::FuncDef;

/// The crypto functions.
pub static FUNCS: &[FuncDef] = &[];
