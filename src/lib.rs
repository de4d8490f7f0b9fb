//! fn-hcl: a Crossplane composition function that runs the function-hcl DSL.
//!
//! The pipeline, one module a stage: [`txtar`] splits the input into files, [`lexer`]
//! and [`parser`] turn each into an [`ast`], [`ir`] checks the DSL's [`schema`]s and
//! resolves scopes, [`compile`] emits bytecode that [`vm`] runs over [`value`]s with
//! [`builtins`], [`eval`] runs the blocks of a program against a request, and the
//! [`cache`] keeps compiled programs across calls.

pub mod analyze;
pub mod ast;
pub mod bench;
pub mod builtins;
pub mod cache;
pub mod cli;
pub mod compile;
pub mod convert;
pub mod cty_yaml;
pub mod diag;
pub mod disasm;
pub mod eval;
pub mod fmt;
pub mod function;
pub mod grammar;
pub mod ir;
pub mod json;
pub mod lexer;
pub mod loadgen;
pub mod metrics;
pub mod number;
pub mod package;
pub mod parser;
pub mod proto;
pub mod protojson;
pub mod reads;
pub mod render;
pub mod request;
pub mod response;
pub mod schema;
pub mod server;
pub mod span;
pub mod txtar;
pub mod types;
pub mod value;
pub mod value_ops;
pub mod vm;
pub mod yaml;
