//! Built-in functions: encoding.

use super::FuncDef;

/// The encoding functions.
pub static FUNCS: &[FuncDef] = &[];
