//! The DSL: its blocks checked against their schemas, scopes resolved, every expression
//! compiled to a chunk, static types and what a program reads from a request.

pub mod analyze;
pub mod annotate;
pub mod index;
pub mod ir;
pub mod reads;
pub mod schema;
pub mod types;
