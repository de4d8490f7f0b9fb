//! Expressions to bytecode and the VM that runs them over values, with unknowns and budgets.
//! Knows expressions and builtins, not the DSL's blocks.
//!
//! [`code`] is the instruction set and the compiled form ([`Code`]); [`compile`] turns
//! expressions into it; [`verify`] checks what the compiler produced against each
//! instruction's documented stack effect; [`vm`] runs it; [`disasm`] prints it.

pub mod code;
pub mod compile;
pub mod disasm;
pub mod verify;
pub mod vm;
