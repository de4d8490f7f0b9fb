//! Oversize requests are answered `RESOURCE_EXHAUSTED`, as gRPC's own servers (grpc-go,
//! which the Go function SDK runs) answer a message over the receive limit. tonic refuses
//! it as `OUT_OF_RANGE` after reading only the 5-byte message header (nothing of the body is
//! buffered); this wrapper rewrites that one status, leaving every other response alone.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use tonic::body::Body;
use tonic::codegen::{Service, http};
use tonic::server::NamedService;

/// The start of tonic's message for a request over `max_decoding_message_size`.
const TONIC_TOO_LARGE: &str = "Error, decoded message length too large";

/// A gRPC service whose oversize-request refusals say `RESOURCE_EXHAUSTED`.
#[derive(Clone, Debug)]
pub struct ResourceExhausted<S>(pub S);

impl<S: NamedService> NamedService for ResourceExhausted<S> {
    const NAME: &'static str = S::NAME;
}

impl<S, B> Service<http::Request<Body>> for ResourceExhausted<S>
where
    S: Service<http::Request<Body>, Response = http::Response<B>, Error = Infallible>,
    S::Future: Send + 'static,
{
    type Response = http::Response<B>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Infallible>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.0.poll_ready(cx)
    }

    fn call(&mut self, req: http::Request<Body>) -> Self::Future {
        let fut = self.0.call(req);
        Box::pin(async move {
            let mut rsp = fut.await?;
            rewrite(rsp.headers_mut());
            Ok(rsp)
        })
    }
}

/// `grpc-status: 11` (OUT_OF_RANGE) with tonic's oversize message becomes 8
/// (RESOURCE_EXHAUSTED); the message is kept.
fn rewrite(headers: &mut http::HeaderMap) {
    let out_of_range = headers
        .get("grpc-status")
        .is_some_and(|v| v.as_bytes() == b"11");
    let too_large = headers.get("grpc-message").is_some_and(|v| {
        // grpc-message is percent-encoded: spaces are `%20`.
        let m = v.to_str().unwrap_or("").replace("%20", " ");
        m.starts_with(TONIC_TOO_LARGE)
    });
    if out_of_range && too_large {
        headers.insert("grpc-status", http::HeaderValue::from_static("8"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_oversize_refusal_changes() {
        let mut h = http::HeaderMap::new();
        h.insert("grpc-status", http::HeaderValue::from_static("11"));
        h.insert(
            "grpc-message",
            http::HeaderValue::from_static(
                "Error,%20decoded%20message%20length%20too%20large:%20found%205%20bytes",
            ),
        );
        rewrite(&mut h);
        assert_eq!(h["grpc-status"], "8");
        let mut other = http::HeaderMap::new();
        other.insert("grpc-status", http::HeaderValue::from_static("11"));
        other.insert(
            "grpc-message",
            http::HeaderValue::from_static("index%20out%20of%20range"),
        );
        rewrite(&mut other);
        assert_eq!(other["grpc-status"], "11");
    }
}
