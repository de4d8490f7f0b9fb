//! The Crossplane function protocol: the messages, the request decoded into values, the
//! response written from them, and their JSON/YAML forms.

pub mod observed;
pub mod proto;
pub mod protojson;
pub mod request;
pub mod response;
pub mod yaml;
