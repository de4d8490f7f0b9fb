//! Helpers shared by the `server_*` integration tests.
#![allow(dead_code)]

pub mod process;

#[path = "../common/proto.rs"]
mod proto;
#[allow(unused_imports)]
pub use proto::{number, object, resource, string, structure};

use std::net::SocketAddr;
use std::time::Duration;

use fn_hcl::protocol::proto::v1;
use fn_hcl::server::{self, Running, ServeArgs};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tonic::transport::Channel;

pub type Client = v1::function_runner_service_client::FunctionRunnerServiceClient<Channel>;

/// A request for the XR `bucket-1` running the bundle `program`, tagged `tag`.
pub fn request(tag: &str, program: &str) -> v1::RunFunctionRequest {
    request_for("bucket-1", tag, program)
}

/// [`request`] for the composite named `xr` (the server logs each call with its XR's name).
pub fn request_for(xr: &str, tag: &str, program: &str) -> v1::RunFunctionRequest {
    let xr = structure([
        ("apiVersion", string("example.com/v1")),
        ("kind", string("XBucket")),
        ("metadata", object([("name", string(xr))])),
        ("spec", object([("region", string("eu-west-1"))])),
    ]);
    let mut req = proto::request(program, Some(resource(xr)));
    req.meta = Some(v1::RequestMeta {
        tag: tag.into(),
        ..Default::default()
    });
    req
}

/// Loopback-only, metrics on an ephemeral port, test hooks on, two evaluation slots.
pub fn insecure_args() -> ServeArgs {
    ServeArgs {
        address: "127.0.0.1:0".into(),
        metrics_address: "127.0.0.1:0".into(),
        insecure: true,
        max_concurrent_evaluations: Some(2),
        enable_test_hooks: true,
        ..ServeArgs::default()
    }
}

pub async fn start(args: &ServeArgs) -> Running {
    match server::start(args).await {
        Ok(r) => r,
        Err(e) => panic!("server did not start: {e}"),
    }
}

pub async fn client(addr: SocketAddr) -> Client {
    let url = format!("http://{addr}");
    for _ in 0..50 {
        if let Ok(c) =
            v1::function_runner_service_client::FunctionRunnerServiceClient::connect(url.clone())
                .await
        {
            return c.max_decoding_message_size(64 * 1024 * 1024);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("cannot connect to {url}");
}

/// One v1 call; the response or the status.
pub async fn call(
    c: &mut Client,
    req: v1::RunFunctionRequest,
) -> Result<v1::RunFunctionResponse, tonic::Status> {
    c.run_function(req).await.map(|r| r.into_inner())
}

/// GETs `path` from a plain HTTP/1.1 server; the whole response (head and body).
pub async fn http_get(addr: SocketAddr, path: &str) -> String {
    http_request(addr, "GET", path).await
}

/// Sends `method path` to a plain HTTP/1.1 server (one request, then the connection
/// closes); the whole response (head and body).
pub async fn http_request(addr: SocketAddr, method: &str, path: &str) -> String {
    let mut s = tokio::net::TcpStream::connect(addr).await.expect("connect");
    let req = format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    s.write_all(req.as_bytes()).await.expect("write");
    let mut out = Vec::new();
    s.read_to_end(&mut out).await.expect("read");
    String::from_utf8_lossy(&out).into_owned()
}

/// The value of an unlabelled or labelled sample in a metrics text, e.g.
/// `fnhcl_requests_total{version="v1"}`.
pub fn sample(text: &str, name: &str) -> Option<f64> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.trim().parse().ok())
}

pub fn fatal_message(rsp: &v1::RunFunctionResponse) -> Option<&str> {
    rsp.results
        .iter()
        .find(|r| r.severity == v1::Severity::Fatal as i32)
        .map(|r| r.message.as_str())
}
