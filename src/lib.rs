//! fn-hcl: a Crossplane composition function that runs the function-hcl DSL.
//!
//! One layer a directory, each importing only the layers listed before it:
//! [`text`] (message helpers) → [`syntax`] (text to syntax trees) → [`value`] (cty's values) → [`builtins`] (the
//! function library) → [`bytecode`] (expressions to bytecode, the VM) → [`lower`] (the
//! DSL's blocks, scopes, compiled programs) → [`protocol`] (the function protocol's
//! messages) → [`runtime`] (a program run against a request; the program cache) →
//! [`handler`] (one RunFunction call) → [`server`] (gRPC) → [`lsp`] (the language server)
//! → [`cli`] (the commands).

pub mod builtins;
pub mod bytecode;
pub mod cli;
pub mod handler;
pub mod lower;
pub mod lsp;
pub mod protocol;
pub mod runtime;
pub mod server;
pub mod syntax;
pub mod text;
pub mod value;
