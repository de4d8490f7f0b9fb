//! Running a compiled program against one request, and the cache of compiled programs.

pub mod cache;
pub mod eval;
pub mod explain;
pub mod gojson;
