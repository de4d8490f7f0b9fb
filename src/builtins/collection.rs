//! Built-in functions: collection.

use super::FuncDef;

/// The collection functions.
pub static FUNCS: &[FuncDef] = &[];
