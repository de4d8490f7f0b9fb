//! fn-hcl: a Crossplane composition function that runs the function-hcl DSL.
//!
//! The pipeline, one module a stage: [`txtar`] splits the input into files, [`lexer`]
//! and [`parser`] turn each into an [`ast`], `ir` lowers the DSL and resolves scopes,
//! `compile` emits bytecode that `vm` runs over [`value`]s with [`builtins`], `eval`
//! runs the blocks of a program against a request and `response` builds the answer.

pub mod ast;
pub mod builtins;
pub mod compile;
pub mod convert;
pub mod diag;
pub mod disasm;
pub mod number;
pub mod span;
pub mod value;
pub mod value_ops;
pub mod vm;
