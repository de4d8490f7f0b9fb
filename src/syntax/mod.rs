//! HCL's native syntax: text in, syntax trees with spans and hcl's diagnostics out.
//! Nothing here knows the DSL's blocks or evaluates anything.

pub mod ast;
pub mod diag;
pub mod fmt;
pub mod lexer;
pub mod parser;
pub mod span;
pub mod txtar;
pub mod visit;
