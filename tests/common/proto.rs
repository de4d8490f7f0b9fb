//! Requests built by hand: protobuf `Value`s and `Struct`s, the step's inline HclInput
//! and a RunFunctionRequest around them. Included by path (`#[path = "common/proto.rs"]
//! mod proto;`, and by tests/server_support), not through `mod common`, so that a test
//! that uses both loads it once.
#![allow(dead_code)]

use fn_hcl::protocol::proto::v1;
use prost_types::value::Kind;
use prost_types::{Struct, Value};

pub fn string(s: &str) -> Value {
    Value {
        kind: Some(Kind::StringValue(s.into())),
    }
}

pub fn number(n: f64) -> Value {
    Value {
        kind: Some(Kind::NumberValue(n)),
    }
}

pub fn object<'a>(pairs: impl IntoIterator<Item = (&'a str, Value)>) -> Value {
    Value {
        kind: Some(Kind::StructValue(structure(pairs))),
    }
}

pub fn structure<'a>(pairs: impl IntoIterator<Item = (&'a str, Value)>) -> Struct {
    Struct {
        fields: pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
    }
}

/// The step's input: an inline HclInput whose `hcl` is the txtar bundle `hcl`.
pub fn hcl_input(hcl: &str) -> Struct {
    structure([
        ("apiVersion", string("function-hcl/v1")),
        ("kind", string("HclInput")),
        ("source", string("Inline")),
        ("hcl", string(hcl)),
    ])
}

/// The bundle of a one-file program (`main.hcl`).
pub fn main_hcl(program: &str) -> String {
    format!("-- main.hcl --\n{program}")
}

/// An observed or desired resource with this body.
pub fn resource(body: Struct) -> v1::Resource {
    v1::Resource {
        resource: Some(body),
        ..Default::default()
    }
}

/// A request running the bundle `hcl` for the observed composite `composite` (none: the
/// request has no observed state).
pub fn request(hcl: &str, composite: Option<v1::Resource>) -> v1::RunFunctionRequest {
    v1::RunFunctionRequest {
        input: Some(hcl_input(hcl)),
        observed: composite.map(|c| v1::State {
            composite: Some(c),
            ..Default::default()
        }),
        ..Default::default()
    }
}
