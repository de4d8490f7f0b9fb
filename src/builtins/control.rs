//! Built-in functions: control.

use super::FuncDef;

/// The control functions.
pub static FUNCS: &[FuncDef] = &[];
