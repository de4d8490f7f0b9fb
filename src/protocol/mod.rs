//! The Crossplane function protocol: the messages, the request decoded into values, the
//! response written from them, and their JSON/YAML forms.
//!
//! Inside the layer, one way down as well: [`doc`] (the JSON/YAML document tree) →
//! [`yaml`] → [`protojson`] (messages as documents); [`raw`] (Struct bodies kept as bytes)
//! → [`proto`] (the messages; the request decoded lazily) → [`input`] (the step's
//! `HclInput`, the debug switches) and [`request`] (`req` as values) → [`response`];
//! [`observed`] assembles the observed state `render` and the language server's sample
//! requests describe.

pub mod body_cache;
pub mod doc;
pub mod input;
pub mod observed;
pub mod proto;
pub mod protojson;
pub mod raw;
pub mod request;
pub mod response;
pub mod yaml;

pub use crate::lower::annotate::{ANNOTATION_BASE_NAME, ANNOTATION_INDEX};
/// Annotation on an XR that turns the debug dump on for it (when set to `"true"`).
pub const DEBUG_ANNOTATION: &str = "hcl.fn.crossplane.io/debug";

/// Deepest nesting of objects and lists accepted in request data (and in values sent back).
/// Bounds recursion so that no input can overflow the stack.
pub const MAX_DEPTH: usize = 512;
