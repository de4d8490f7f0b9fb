//! Built-in functions: network.

use super::FuncDef;

/// The network functions.
pub static FUNCS: &[FuncDef] = &[];
