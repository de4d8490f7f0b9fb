//! A client no one here wrote: the generated stubs of the PyPI package
//! `crossplane-function-sdk-python` (grpcio) call the server over v1 and v1beta1.
//! Skipped (with a note) when Python or the package is not installed, except under CI=true,
//! where that fails (`.ci/run` installs it from `.ci/requirements.txt`).

mod common;
mod server_support;

use std::process::Command;
use std::time::Duration;

use server_support::*;

const SCRIPT: &str = r#"
import json, sys
import grpc
from google.protobuf import json_format
from crossplane.function.proto.v1 import run_function_pb2 as v1
from crossplane.function.proto.v1 import run_function_pb2_grpc as v1_grpc
from crossplane.function.proto.v1beta1 import run_function_pb2 as v1beta1
from crossplane.function.proto.v1beta1 import run_function_pb2_grpc as v1beta1_grpc

out = {}
with grpc.insecure_channel(sys.argv[1]) as ch:
    for name, pb, stubs in (("v1", v1, v1_grpc), ("v1beta1", v1beta1, v1beta1_grpc)):
        req = pb.RunFunctionRequest(meta=pb.RequestMeta(tag="py-" + name))
        req.observed.composite.resource.update({
            "apiVersion": "example.com/v1", "kind": "XBucket",
            "metadata": {"name": "bucket-1"}})
        req.desired.resources["kept"].resource.update({"apiVersion": "v1", "kind": "ConfigMap"})
        req.input.update({"hcl": "-- main.hcl --\n# python\n"})
        rsp = stubs.FunctionRunnerServiceStub(ch).RunFunction(req, timeout=10)
        out[name] = json_format.MessageToDict(rsp)
print(json.dumps(out))
"#;

fn python_with_sdk() -> Option<&'static str> {
    let ok = Command::new("python3")
        .args([
            "-c",
            "import grpc, crossplane.function.proto.v1.run_function_pb2_grpc",
        ])
        .output()
        .ok()?
        .status
        .success();
    ok.then_some("python3")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_sdk_stubs_call_the_server() {
    let Some(python) = python_with_sdk() else {
        common::missing(
            "server_python",
            "python3 with crossplane-function-sdk-python is not installed \
             (pip install -r .ci/requirements.txt)",
        );
        return;
    };
    let srv = start(&insecure_args()).await;
    let addr = srv.addr().to_string();
    let out = tokio::task::spawn_blocking(move || {
        Command::new(python)
            .args(["-c", SCRIPT, &addr])
            .output()
            .expect("run python")
    })
    .await
    .expect("join");
    assert!(
        out.status.success(),
        "python client failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json output");
    for version in ["v1", "v1beta1"] {
        let r = &j[version];
        assert_eq!(r["meta"]["tag"], format!("py-{version}"), "{j}");
        assert_eq!(r["meta"]["ttl"], "60s", "{j}");
        // The desired state of earlier pipeline steps is carried through.
        assert_eq!(
            r["desired"]["resources"]["kept"]["resource"]["kind"], "ConfigMap",
            "{j}"
        );
        let results = r["results"].as_array().expect("results");
        assert!(!results.is_empty(), "{j}");
        assert!(results.iter().all(|x| x["severity"].is_string()), "{j}");
    }
    let (mut a, mut b) = (j["v1"].clone(), j["v1beta1"].clone());
    a["meta"]["tag"] = serde_json::Value::Null;
    b["meta"]["tag"] = serde_json::Value::Null;
    assert_eq!(a, b, "v1beta1 answered like v1 (tags aside)");
    srv.shutdown(Duration::from_secs(5))
        .await
        .expect("shutdown");
}
