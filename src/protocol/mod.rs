//! The Crossplane function protocol: the messages, the request decoded into values, the
//! response written from them, and their JSON/YAML forms.
//!
//! Inside the layer, one way down as well: [`doc`] (the JSON/YAML document tree) →
//! [`yaml`] → [`protojson`] (messages as documents).

pub mod doc;
pub mod proto;
pub mod protojson;
pub mod request;
pub mod response;
pub mod yaml;
