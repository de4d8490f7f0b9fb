//! Expressions to bytecode and the VM that runs them over values, with unknowns and budgets.
//! Knows expressions and builtins, not the DSL's blocks.

pub mod compile;
pub mod disasm;
pub mod vm;
