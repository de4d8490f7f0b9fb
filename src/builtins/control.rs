//! Built-in functions: control.
//!
//! `try` and `can` are the only control functions, and they are not plain functions: they
//! must see evaluation failures of their argument expressions, so the VM compiles them as
//! special forms and they have no entry in this table. (`coalesce` and `coalescelist` are
//! collection functions.)

use super::FuncDef;

/// The control functions (none: `try` and `can` are VM special forms).
pub static FUNCS: &[FuncDef] = &[];
