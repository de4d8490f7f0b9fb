//! Build step: the Crossplane protocol in `proto/` (with protoc from the
//! `protoc-bin-vendored` crate: no network, no system protoc). The LR grammar is built by
//! its own crate (`grammar/`), a dev-dependency.

use std::path::Path;

fn main() {
    println!("cargo:rerun-if-changed=proto");
    proto();
}

/// Generate the protocol types when `proto/` holds the .proto files.
fn proto() {
    let v1 = Path::new("proto/v1/run_function.proto");
    let v1beta1 = Path::new("proto/v1beta1/run_function.proto");
    if !v1.exists() {
        return;
    }
    let protoc = protoc_bin_vendored::protoc_bin_path().expect("vendored protoc");
    // SAFETY: build scripts are single-threaded; setting PROTOC before codegen is the
    // documented way to point prost-build at a protoc binary.
    unsafe { std::env::set_var("PROTOC", protoc) };
    let mut files = vec![v1];
    if v1beta1.exists() {
        files.push(v1beta1);
    }
    // The maps a response carries besides the desired resources (which the direct
    // encoder writes sorted by name): BTreeMaps, which prost writes in key order, so the
    // same call answers with the same bytes (HashMaps are written in a per-map random
    // order). `State.resources` stays a HashMap: requests hold thousands of entries.
    let mut config = tonic_prost_build::configure();
    for package in ["v1", "v1beta1"] {
        for path in [
            "Resource.connection_details",
            "Requirements",
            "MatchLabels.labels",
        ] {
            config = config.btree_map(format!(".apiextensions.fn.proto.{package}.{path}"));
        }
    }
    config
        .build_client(true)
        .build_server(true)
        .file_descriptor_set_path(
            std::path::PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR"))
                .join("fn_descriptor.bin"),
        )
        .compile_protos(&files, &[Path::new("proto")])
        .expect("protobuf codegen");
    lazy_services();
}

/// The FunctionRunnerService of both versions as the server runs it: the same method
/// paths as the generated services, with `crate::protocol::proto::LazyCodec`, whose requests keep
/// the observed bodies as bytes (`crate::protocol::proto::LazyRequest`). v1 and v1beta1 share the
/// wire format, so both answer with a v1 response message. Written to
/// `OUT_DIR/<package>.FunctionRunnerService.rs` (included by src/server/lazy.rs).
fn lazy_services() {
    use tonic_prost_build::manual::{Builder, Method, Service};
    for package in [
        "apiextensions.fn.proto.v1",
        "apiextensions.fn.proto.v1beta1",
    ] {
        let service = Service::builder()
            .name("FunctionRunnerService")
            .package(package)
            .method(
                Method::builder()
                    .name("run_function")
                    .route_name("RunFunction")
                    .input_type("crate::protocol::proto::LazyRequest")
                    .output_type("crate::server::lazy::Reply")
                    .codec_path("crate::protocol::proto::LazyCodec")
                    .build(),
            )
            .build();
        Builder::new()
            .build_client(false)
            .build_server(true)
            .compile(&[service]);
    }
}
