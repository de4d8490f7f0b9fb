//! Built-in functions: datetime.

use super::FuncDef;

/// The datetime functions.
pub static FUNCS: &[FuncDef] = &[];
