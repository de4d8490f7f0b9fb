//! Prometheus metrics of the function server, in the text exposition format, served by a
//! tiny HTTP/1.1 endpoint (`GET /metrics`).
//!
//! Hand-written on purpose: a handful of counters, one gauge and one histogram do not need
//! a metrics framework, and the endpoint must stay cheap and dependency-free. The program
//! cache's counters are read from the handler's cache when the endpoint is scraped.

use std::fmt::Write as _;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// Upper bounds (seconds) of the evaluation latency histogram buckets.
pub const LATENCY_BUCKETS: [f64; 14] = [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

/// Which protocol package a call came in on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ApiVersion {
    /// `apiextensions.fn.proto.v1`
    V1,
    /// `apiextensions.fn.proto.v1beta1`
    V1beta1,
}

impl ApiVersion {
    /// The label value.
    pub fn as_str(self) -> &'static str {
        match self {
            ApiVersion::V1 => "v1",
            ApiVersion::V1beta1 => "v1beta1",
        }
    }
}

/// Why a call counts as an error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// Answered with a Fatal result (evaluation error, bad input).
    Fatal,
    /// The handler panicked; answered with a Fatal result.
    Panic,
    /// Refused before evaluation (undecodable request, shutting down).
    Rejected,
    /// The call's deadline passed before the answer was ready.
    Deadline,
}

impl ErrorKind {
    const ALL: [ErrorKind; 4] = [
        ErrorKind::Fatal,
        ErrorKind::Panic,
        ErrorKind::Rejected,
        ErrorKind::Deadline,
    ];

    fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Fatal => "fatal",
            ErrorKind::Panic => "panic",
            ErrorKind::Rejected => "rejected",
            ErrorKind::Deadline => "deadline",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

pub use crate::runtime::cache::CacheSnapshot;

/// The program cache's counters, once the cache exists.
pub fn cache_snapshot() -> Option<CacheSnapshot> {
    crate::handler::program_cache_snapshot()
}

/// The server's counters. All updates are lock-free atomics.
#[derive(Debug, Default)]
pub struct Metrics {
    requests_v1: AtomicU64,
    requests_v1beta1: AtomicU64,
    errors: [AtomicU64; 4],
    in_flight: AtomicI64,
    buckets: [AtomicU64; LATENCY_BUCKETS.len()],
    latency_count: AtomicU64,
    latency_sum_nanos: AtomicU64,
}

impl Metrics {
    /// Fresh counters.
    pub fn new() -> Metrics {
        Metrics::default()
    }

    /// Counts one call on `version`.
    pub fn request(&self, version: ApiVersion) {
        match version {
            ApiVersion::V1 => &self.requests_v1,
            ApiVersion::V1beta1 => &self.requests_v1beta1,
        }
        .fetch_add(1, Ordering::Relaxed);
    }

    /// Counts one error of `kind`.
    pub fn error(&self, kind: ErrorKind) {
        self.errors[kind.index()].fetch_add(1, Ordering::Relaxed);
    }

    /// Number of calls counted on `version`.
    pub fn requests(&self, version: ApiVersion) -> u64 {
        match version {
            ApiVersion::V1 => &self.requests_v1,
            ApiVersion::V1beta1 => &self.requests_v1beta1,
        }
        .load(Ordering::Relaxed)
    }

    /// Number of errors of `kind`.
    pub fn errors(&self, kind: ErrorKind) -> u64 {
        self.errors[kind.index()].load(Ordering::Relaxed)
    }

    /// Marks one evaluation as running until the guard is dropped (also on panic).
    pub fn in_flight(self: &Arc<Self>) -> InFlight {
        self.in_flight.fetch_add(1, Ordering::Relaxed);
        InFlight(Arc::clone(self))
    }

    /// Records one evaluation's duration.
    pub fn observe_latency(&self, d: Duration) {
        let secs = d.as_secs_f64();
        for (bound, bucket) in LATENCY_BUCKETS.iter().zip(&self.buckets) {
            if secs <= *bound {
                bucket.fetch_add(1, Ordering::Relaxed);
            }
        }
        self.latency_count.fetch_add(1, Ordering::Relaxed);
        let nanos = u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
        self.latency_sum_nanos.fetch_add(nanos, Ordering::Relaxed);
    }

    /// The exposition text: these counters and, when `cache` is given, the cache's.
    pub fn render(&self, cache: Option<CacheSnapshot>) -> String {
        let mut out = String::with_capacity(4096);
        header(
            &mut out,
            "fnhcl_requests_total",
            "counter",
            "RunFunction calls received, by protocol version.",
        );
        for v in [ApiVersion::V1, ApiVersion::V1beta1] {
            let _ = writeln!(
                out,
                "fnhcl_requests_total{{version=\"{}\"}} {}",
                v.as_str(),
                self.requests(v)
            );
        }
        header(
            &mut out,
            "fnhcl_errors_total",
            "counter",
            "Calls that failed: fatal results, handler panics, rejected requests, expired deadlines.",
        );
        for k in ErrorKind::ALL {
            let _ = writeln!(
                out,
                "fnhcl_errors_total{{kind=\"{}\"}} {}",
                k.as_str(),
                self.errors(k)
            );
        }
        header(
            &mut out,
            "fnhcl_evaluations_in_flight",
            "gauge",
            "Evaluations running now.",
        );
        let _ = writeln!(
            out,
            "fnhcl_evaluations_in_flight {}",
            self.in_flight.load(Ordering::Relaxed)
        );
        header(
            &mut out,
            "fnhcl_evaluation_duration_seconds",
            "histogram",
            "Time to evaluate one request (compile on a cache miss included).",
        );
        for (bound, bucket) in LATENCY_BUCKETS.iter().zip(&self.buckets) {
            let _ = writeln!(
                out,
                "fnhcl_evaluation_duration_seconds_bucket{{le=\"{bound}\"}} {}",
                bucket.load(Ordering::Relaxed)
            );
        }
        let count = self.latency_count.load(Ordering::Relaxed);
        let _ = writeln!(
            out,
            "fnhcl_evaluation_duration_seconds_bucket{{le=\"+Inf\"}} {count}"
        );
        let sum = self.latency_sum_nanos.load(Ordering::Relaxed) as f64 / 1e9;
        let _ = writeln!(out, "fnhcl_evaluation_duration_seconds_sum {sum}");
        let _ = writeln!(out, "fnhcl_evaluation_duration_seconds_count {count}");
        if let Some(c) = cache {
            let rows: [(&str, &str, &str, String); 7] = [
                (
                    "fnhcl_cache_hits_total",
                    "counter",
                    "Program cache lookups answered from the cache.",
                    c.hits.to_string(),
                ),
                (
                    "fnhcl_cache_misses_total",
                    "counter",
                    "Program cache lookups that compiled.",
                    c.misses.to_string(),
                ),
                (
                    "fnhcl_cache_evictions_total",
                    "counter",
                    "Programs evicted to keep the cache within its bounds.",
                    c.evictions.to_string(),
                ),
                (
                    "fnhcl_cache_compiles_total",
                    "counter",
                    "Programs compiled.",
                    c.compiles.to_string(),
                ),
                (
                    "fnhcl_cache_compile_seconds_total",
                    "counter",
                    "Time spent compiling programs.",
                    (c.compile_nanos as f64 / 1e9).to_string(),
                ),
                (
                    "fnhcl_cache_entries",
                    "gauge",
                    "Programs held in the cache.",
                    c.entries.to_string(),
                ),
                (
                    "fnhcl_cache_bytes",
                    "gauge",
                    "Estimated bytes held by the program cache.",
                    c.bytes.to_string(),
                ),
            ];
            for (name, kind, help, value) in rows {
                header(&mut out, name, kind, help);
                let _ = writeln!(out, "{name} {value}");
            }
        }
        out
    }
}

fn header(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}");
    let _ = writeln!(out, "# TYPE {name} {kind}");
}

/// Keeps the in-flight gauge raised while alive.
#[derive(Debug)]
pub struct InFlight(Arc<Metrics>);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Longest request head the endpoint reads; anything longer is answered 431 and closed.
const MAX_HEAD: usize = 8 * 1024;
/// How long a client may take to send its request head.
const READ_TIMEOUT: Duration = Duration::from_secs(5);

/// Serves `GET /metrics` on `listener` until `shutdown` resolves.
pub async fn serve_metrics(
    listener: TcpListener,
    metrics: Arc<Metrics>,
    shutdown: impl std::future::Future<Output = ()>,
) {
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        tokio::select! {
            _ = &mut shutdown => return,
            accepted = listener.accept() => {
                let Ok((stream, peer)) = accepted else { continue };
                let metrics = Arc::clone(&metrics);
                tokio::spawn(async move {
                    if let Err(e) = answer(stream, &metrics).await {
                        tracing::debug!(%peer, error = %e, "metrics connection failed");
                    }
                });
            }
        }
    }
}

async fn answer(mut stream: TcpStream, metrics: &Metrics) -> std::io::Result<()> {
    let mut head = Vec::with_capacity(512);
    let mut buf = [0u8; 1024];
    let complete = tokio::time::timeout(READ_TIMEOUT, async {
        loop {
            let n = stream.read(&mut buf).await?;
            if n == 0 {
                return Ok::<bool, std::io::Error>(false);
            }
            head.extend_from_slice(&buf[..n]);
            if head.windows(4).any(|w| w == b"\r\n\r\n") {
                return Ok(true);
            }
            if head.len() > MAX_HEAD {
                return Ok(false);
            }
        }
    })
    .await;
    let (status, body, content_type) = match complete {
        Ok(Ok(true)) => route(&head, metrics),
        Ok(Ok(false)) if head.len() > MAX_HEAD => (
            "431 Request Header Fields Too Large",
            String::new(),
            "text/plain",
        ),
        Ok(Ok(false)) | Err(_) => return Ok(()),
        Ok(Err(e)) => return Err(e),
    };
    let response = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(response.as_bytes()).await?;
    stream.shutdown().await
}

fn route(head: &[u8], metrics: &Metrics) -> (&'static str, String, &'static str) {
    let line = head.split(|b| *b == b'\r').next().unwrap_or_default();
    let mut parts = line.split(|b| *b == b' ');
    let method = parts.next().unwrap_or_default();
    let target = parts.next().unwrap_or_default();
    let path = target.split(|b| *b == b'?').next().unwrap_or_default();
    match (method, path) {
        (b"GET", b"/metrics") => (
            "200 OK",
            metrics.render(cache_snapshot()),
            "text/plain; version=0.0.4; charset=utf-8",
        ),
        (b"GET", _) => ("404 Not Found", "not found\n".into(), "text/plain"),
        _ => (
            "405 Method Not Allowed",
            "method not allowed\n".into(),
            "text/plain",
        ),
    }
}

/// Binds the metrics listener (`:8080` means all interfaces, as in Go).
pub async fn bind(address: &str) -> std::io::Result<(TcpListener, SocketAddr)> {
    let listener = TcpListener::bind(crate::server::normalize_address(address).as_str()).await?;
    let addr = listener.local_addr()?;
    Ok((listener, addr))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn render_counts_requests_errors_and_latency() {
        let m = Arc::new(Metrics::new());
        m.request(ApiVersion::V1);
        m.request(ApiVersion::V1);
        m.request(ApiVersion::V1beta1);
        m.error(ErrorKind::Panic);
        m.observe_latency(Duration::from_millis(3));
        let guard = m.in_flight();
        let text = m.render(None);
        assert!(text.contains("fnhcl_requests_total{version=\"v1\"} 2\n"));
        assert!(text.contains("fnhcl_requests_total{version=\"v1beta1\"} 1\n"));
        assert!(text.contains("fnhcl_errors_total{kind=\"panic\"} 1\n"));
        assert!(text.contains("fnhcl_errors_total{kind=\"fatal\"} 0\n"));
        assert!(text.contains("fnhcl_evaluations_in_flight 1\n"));
        assert!(text.contains("fnhcl_evaluation_duration_seconds_bucket{le=\"0.0025\"} 0\n"));
        assert!(text.contains("fnhcl_evaluation_duration_seconds_bucket{le=\"0.005\"} 1\n"));
        assert!(text.contains("fnhcl_evaluation_duration_seconds_bucket{le=\"+Inf\"} 1\n"));
        assert!(text.contains("fnhcl_evaluation_duration_seconds_count 1\n"));
        assert!(!text.contains("fnhcl_cache_"));
        drop(guard);
        assert!(m.render(None).contains("fnhcl_evaluations_in_flight 0\n"));
    }

    #[test]
    fn render_includes_cache_counters() {
        let snap = CacheSnapshot {
            hits: 7,
            misses: 2,
            evictions: 1,
            compiles: 2,
            compile_nanos: 1_500_000_000,
            entries: 1,
            bytes: 4096,
        };
        let text = Metrics::new().render(Some(snap));
        assert!(text.contains("fnhcl_cache_hits_total 7\n"));
        assert!(text.contains("fnhcl_cache_misses_total 2\n"));
        assert!(text.contains("fnhcl_cache_evictions_total 1\n"));
        assert!(text.contains("fnhcl_cache_compiles_total 2\n"));
        assert!(text.contains("fnhcl_cache_compile_seconds_total 1.5\n"));
        assert!(text.contains("fnhcl_cache_entries 1\n"));
        assert!(text.contains("fnhcl_cache_bytes 4096\n"));
        assert!(text.contains("# TYPE fnhcl_cache_bytes gauge\n"));
    }

    #[test]
    fn routes() {
        let m = Metrics::new();
        assert_eq!(route(b"GET /metrics HTTP/1.1\r\n\r\n", &m).0, "200 OK");
        assert_eq!(route(b"GET /metrics?x=1 HTTP/1.1\r\n\r\n", &m).0, "200 OK");
        assert_eq!(route(b"GET / HTTP/1.1\r\n\r\n", &m).0, "404 Not Found");
        assert_eq!(
            route(b"POST /metrics HTTP/1.1\r\n\r\n", &m).0,
            "405 Method Not Allowed"
        );
        assert_eq!(route(b"\xff\xfe", &m).0, "405 Method Not Allowed");
    }
}
