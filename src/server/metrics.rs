//! Prometheus metrics of the function server and its HTTP endpoint on `--metrics-address`:
//! `GET /metrics`, and the probes `GET /healthz` and `GET /readyz` (see [`Readiness`]).
//!
//! The exposition is the Prometheus text format (0.0.4), as the Go function SDK's
//! `promhttp` handler serves it, written by `prometheus-client`; the endpoint is an axum
//! router on hyper (both already under tonic). Three groups of series:
//! - the SDK's: go-grpc-middleware's `grpc_server_started_total`,
//!   `grpc_server_handled_total{grpc_code,...}`, `grpc_server_msg_received_total` and
//!   `grpc_server_msg_sent_total` for the RunFunction calls, pre-created at zero as the SDK's
//!   `InitializeMetrics` does, and the `process_*` series of client_golang's process
//!   collector (read from `/proc/self`);
//! - fn-hcl's own `fnhcl_*`: calls by protocol version, errors by kind, evaluations in
//!   flight, evaluation latency;
//! - the program cache's `fnhcl_cache_*` and the body cache's `fnhcl_body_cache_*`, read
//!   from a [`CacheStatsSource`] at each scrape.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::Duration;

use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::get;
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{
    DescriptorEncoder, EncodeCounterValue, EncodeGaugeValue, EncodeLabelSet, EncodeMetric,
};
use prometheus_client::metrics::MetricType;
use prometheus_client::metrics::counter::{ConstCounter, Counter};
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::{ConstGauge, Gauge};
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;
use tokio::net::TcpListener;

use crate::protocol::body_cache;

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

    /// The gRPC service name, as the `grpc_service` label carries it.
    pub fn service(self) -> &'static str {
        match self {
            ApiVersion::V1 => "apiextensions.fn.proto.v1.FunctionRunnerService",
            ApiVersion::V1beta1 => "apiextensions.fn.proto.v1beta1.FunctionRunnerService",
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
}

/// A point-in-time copy of the program cache's counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheSnapshot {
    /// Lookups answered from the cache.
    pub hits: u64,
    /// Lookups that had to compile.
    pub misses: u64,
    /// Entries dropped to stay within the bounds.
    pub evictions: u64,
    /// Compilations run (concurrent first calls of one program compile once).
    pub compiles: u64,
    /// Total time spent compiling, in nanoseconds.
    pub compile_nanos: u64,
    /// Entries held now.
    pub entries: u64,
    /// Estimated bytes held now.
    pub bytes: u64,
}

/// Anything that can report program cache counters (the server passes the process-wide
/// program cache; tests pass their own).
pub trait CacheStatsSource: Send + Sync {
    /// The current counters.
    fn cache_stats(&self) -> CacheSnapshot;

    /// The body cache's counters ([`crate::protocol::body_cache`]), when there is one to
    /// report.
    fn body_cache_stats(&self) -> Option<body_cache::Stats> {
        None
    }
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct VersionLabel {
    version: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct CacheLabel {
    cache: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct KindLabel {
    kind: &'static str,
}

/// go-grpc-middleware's labels (in the order client_golang prints them: sorted).
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct GrpcLabels {
    grpc_method: &'static str,
    grpc_service: &'static str,
    grpc_type: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct GrpcCodeLabels {
    grpc_code: &'static str,
    grpc_method: &'static str,
    grpc_service: &'static str,
    grpc_type: &'static str,
}

/// Every gRPC code as Go's `codes.Code.String()` names it (the `grpc_code` label values).
const GO_CODES: [(tonic::Code, &str); 17] = [
    (tonic::Code::Ok, "OK"),
    (tonic::Code::Cancelled, "Canceled"),
    (tonic::Code::Unknown, "Unknown"),
    (tonic::Code::InvalidArgument, "InvalidArgument"),
    (tonic::Code::DeadlineExceeded, "DeadlineExceeded"),
    (tonic::Code::NotFound, "NotFound"),
    (tonic::Code::AlreadyExists, "AlreadyExists"),
    (tonic::Code::PermissionDenied, "PermissionDenied"),
    (tonic::Code::ResourceExhausted, "ResourceExhausted"),
    (tonic::Code::FailedPrecondition, "FailedPrecondition"),
    (tonic::Code::Aborted, "Aborted"),
    (tonic::Code::OutOfRange, "OutOfRange"),
    (tonic::Code::Unimplemented, "Unimplemented"),
    (tonic::Code::Internal, "Internal"),
    (tonic::Code::Unavailable, "Unavailable"),
    (tonic::Code::DataLoss, "DataLoss"),
    (tonic::Code::Unauthenticated, "Unauthenticated"),
];

/// Go's name of a gRPC code.
pub fn go_code_name(code: tonic::Code) -> &'static str {
    GO_CODES
        .iter()
        .find(|(c, _)| *c == code)
        .map_or("Unknown", |(_, n)| n)
}

fn run_function_labels(version: ApiVersion) -> GrpcLabels {
    GrpcLabels {
        grpc_method: "RunFunction",
        grpc_service: version.service(),
        grpc_type: "unary",
    }
}

/// go-grpc-middleware's server metrics for the RunFunction calls.
#[derive(Debug, Default)]
struct GrpcServerMetrics {
    started: Family<GrpcLabels, Counter>,
    handled: Family<GrpcCodeLabels, Counter>,
    msg_received: Family<GrpcLabels, Counter>,
    msg_sent: Family<GrpcLabels, Counter>,
}

impl GrpcServerMetrics {
    fn register(&self, registry: &mut Registry) {
        registry.register(
            "grpc_server_started",
            "Total number of RPCs started on the server",
            self.started.clone(),
        );
        registry.register(
            "grpc_server_handled",
            "Total number of RPCs completed on the server, regardless of success or failure",
            self.handled.clone(),
        );
        registry.register(
            "grpc_server_msg_received",
            "Total number of RPC stream messages received on the server",
            self.msg_received.clone(),
        );
        registry.register(
            "grpc_server_msg_sent",
            "Total number of gRPC stream messages sent by the server",
            self.msg_sent.clone(),
        );
        // Every series exists from the first scrape, as after the SDK's InitializeMetrics.
        for v in [ApiVersion::V1, ApiVersion::V1beta1] {
            let l = run_function_labels(v);
            for family in [&self.started, &self.msg_received, &self.msg_sent] {
                let _ = family.get_or_create(&l);
            }
            for (_, code) in GO_CODES {
                let _ = self.handled.get_or_create(&with_code(&l, code));
            }
        }
    }
}

fn with_code(l: &GrpcLabels, code: &'static str) -> GrpcCodeLabels {
    GrpcCodeLabels {
        grpc_code: code,
        grpc_method: l.grpc_method,
        grpc_service: l.grpc_service,
        grpc_type: l.grpc_type,
    }
}

/// The server's metrics: counters are lock-free atomics; a scrape encodes the registry.
#[derive(Debug)]
pub struct Metrics {
    registry: Registry,
    requests: Family<VersionLabel, Counter>,
    errors: Family<KindLabel, Counter>,
    in_flight: Gauge,
    latency: Histogram,
    grpc: GrpcServerMetrics,
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}

impl Metrics {
    /// Fresh counters, the process collector, no cache counters.
    pub fn new() -> Metrics {
        Metrics::build(None)
    }

    /// Fresh counters that also report `cache`'s counters at each scrape.
    pub fn with_cache(cache: Arc<dyn CacheStatsSource>) -> Metrics {
        Metrics::build(Some(cache))
    }

    fn build(cache: Option<Arc<dyn CacheStatsSource>>) -> Metrics {
        let mut registry = Registry::default();
        let grpc = GrpcServerMetrics::default();
        grpc.register(&mut registry);
        let requests = Family::<VersionLabel, Counter>::default();
        registry.register(
            "fnhcl_requests",
            "RunFunction calls received, by protocol version",
            requests.clone(),
        );
        for v in [ApiVersion::V1, ApiVersion::V1beta1] {
            let _ = requests.get_or_create(&VersionLabel {
                version: v.as_str(),
            });
        }
        let errors = Family::<KindLabel, Counter>::default();
        registry.register(
            "fnhcl_errors",
            "Calls that failed: fatal results, handler panics, rejected requests, expired deadlines",
            errors.clone(),
        );
        for k in ErrorKind::ALL {
            let _ = errors.get_or_create(&KindLabel { kind: k.as_str() });
        }
        let in_flight = Gauge::default();
        registry.register(
            "fnhcl_evaluations_in_flight",
            "Evaluations running now",
            in_flight.clone(),
        );
        let latency = Histogram::new(LATENCY_BUCKETS);
        registry.register(
            "fnhcl_evaluation_duration_seconds",
            "Time to evaluate one request (compile on a cache miss included)",
            latency.clone(),
        );
        if let Some(source) = cache {
            registry.register_collector(Box::new(CacheCollector(source)));
        }
        registry.register_collector(Box::new(ProcessCollector));
        Metrics {
            registry,
            requests,
            errors,
            in_flight,
            latency,
            grpc,
        }
    }

    /// Counts one call on `version`.
    pub fn request(&self, version: ApiVersion) {
        self.requests
            .get_or_create(&VersionLabel {
                version: version.as_str(),
            })
            .inc();
    }

    /// Counts one error of `kind`.
    pub fn error(&self, kind: ErrorKind) {
        self.errors
            .get_or_create(&KindLabel {
                kind: kind.as_str(),
            })
            .inc();
    }

    /// Number of calls counted on `version`.
    pub fn requests(&self, version: ApiVersion) -> u64 {
        self.requests
            .get(&VersionLabel {
                version: version.as_str(),
            })
            .map_or(0, |c| c.get())
    }

    /// Number of errors of `kind`.
    pub fn errors(&self, kind: ErrorKind) -> u64 {
        self.errors
            .get(&KindLabel {
                kind: kind.as_str(),
            })
            .map_or(0, |c| c.get())
    }

    /// Marks one evaluation as running until the guard is dropped (also on panic).
    pub fn in_flight(self: &Arc<Self>) -> InFlight {
        self.in_flight.inc();
        InFlight(Arc::clone(self))
    }

    /// Records one evaluation's duration.
    pub fn observe_latency(&self, d: Duration) {
        self.latency.observe(d.as_secs_f64());
    }

    /// Starts counting one RunFunction call as go-grpc-middleware's unary interceptor does:
    /// started and one message received now; one message sent and `handled` with the
    /// call's code when it ends ([`GrpcCall::finish`]), or `Canceled` if the call is
    /// dropped first (the client went away).
    pub fn grpc_call(self: &Arc<Self>, version: ApiVersion) -> GrpcCall {
        let labels = run_function_labels(version);
        self.grpc.started.get_or_create(&labels).inc();
        self.grpc.msg_received.get_or_create(&labels).inc();
        GrpcCall {
            metrics: Arc::clone(self),
            labels,
            done: false,
        }
    }

    /// `grpc_server_handled_total` of RunFunction on `version` with `code`.
    pub fn grpc_handled(&self, version: ApiVersion, code: tonic::Code) -> u64 {
        let l = with_code(&run_function_labels(version), go_code_name(code));
        self.grpc.handled.get(&l).map_or(0, |c| c.get())
    }

    /// The exposition text (Prometheus text format 0.0.4).
    pub fn render(&self) -> String {
        let mut out = String::with_capacity(8192);
        // Writing to a String cannot fail; a collector's error leaves a partial scrape.
        let _ = prometheus_client::encoding::prometheus_text::encode(&mut out, &self.registry);
        out
    }
}

/// One RunFunction call being counted (see [`Metrics::grpc_call`]).
#[derive(Debug)]
pub struct GrpcCall {
    metrics: Arc<Metrics>,
    labels: GrpcLabels,
    done: bool,
}

impl GrpcCall {
    /// The call ended with `code`.
    pub fn finish(mut self, code: tonic::Code) {
        self.record(code);
    }

    fn record(&mut self, code: tonic::Code) {
        if self.done {
            return;
        }
        self.done = true;
        let g = &self.metrics.grpc;
        g.msg_sent.get_or_create(&self.labels).inc();
        g.handled
            .get_or_create(&with_code(&self.labels, go_code_name(code)))
            .inc();
    }
}

impl Drop for GrpcCall {
    fn drop(&mut self) {
        self.record(tonic::Code::Cancelled);
    }
}

/// Keeps the in-flight gauge raised while alive.
#[derive(Debug)]
pub struct InFlight(Arc<Metrics>);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.in_flight.dec();
    }
}

/// The program cache's counters, read at each scrape.
struct CacheCollector(Arc<dyn CacheStatsSource>);

impl std::fmt::Debug for CacheCollector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CacheCollector")
    }
}

fn counter<V: EncodeCounterValue>(
    e: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    v: V,
) -> std::fmt::Result {
    let c = ConstCounter::new(v);
    c.encode(e.encode_descriptor(name, help, None, MetricType::Counter)?)
}

fn gauge<V: EncodeGaugeValue>(
    e: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    v: V,
) -> std::fmt::Result {
    let g = ConstGauge::new(v);
    g.encode(e.encode_descriptor(name, help, None, MetricType::Gauge)?)
}

impl Collector for CacheCollector {
    fn encode(&self, mut e: DescriptorEncoder) -> std::fmt::Result {
        let c = self.0.cache_stats();
        counter(
            &mut e,
            "fnhcl_cache_hits",
            "Program cache lookups answered from the cache",
            c.hits,
        )?;
        counter(
            &mut e,
            "fnhcl_cache_misses",
            "Program cache lookups that compiled",
            c.misses,
        )?;
        counter(
            &mut e,
            "fnhcl_cache_evictions",
            "Programs evicted to keep the cache within its bounds",
            c.evictions,
        )?;
        counter(
            &mut e,
            "fnhcl_cache_compiles",
            "Programs compiled",
            c.compiles,
        )?;
        counter(
            &mut e,
            "fnhcl_cache_compile_seconds",
            "Time spent compiling programs",
            c.compile_nanos as f64 / 1e9,
        )?;
        gauge(
            &mut e,
            "fnhcl_cache_entries",
            "Programs held in the cache",
            c.entries,
        )?;
        gauge(
            &mut e,
            "fnhcl_cache_bytes",
            "Estimated bytes held by the program cache",
            c.bytes,
        )?;
        match self.0.body_cache_stats() {
            Some(b) => encode_body_cache(&mut e, &b),
            None => Ok(()),
        }
    }
}

/// One series per cache (`cache="scan"`, `cache="value"`) of one of the body cache's
/// counters.
fn body_series(
    e: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    kind: MetricType,
    b: &body_cache::Stats,
    field: fn(&body_cache::Counts) -> u64,
) -> std::fmt::Result {
    let mut m = e.encode_descriptor(name, help, None, kind)?;
    for (cache, c) in [("scan", &b.scans), ("value", &b.values)] {
        let label = CacheLabel { cache };
        let series = m.encode_family(&label)?;
        match kind {
            MetricType::Counter => ConstCounter::new(field(c)).encode(series)?,
            _ => ConstGauge::new(field(c)).encode(series)?,
        }
    }
    Ok(())
}

fn encode_body_cache(e: &mut DescriptorEncoder, b: &body_cache::Stats) -> std::fmt::Result {
    use MetricType::{Counter, Gauge};
    body_series(
        e,
        "fnhcl_body_cache_hits",
        "Resource bodies whose scan or decoded value was found in the body cache",
        Counter,
        b,
        |c| c.hits,
    )?;
    body_series(
        e,
        "fnhcl_body_cache_misses",
        "Resource bodies looked up in the body cache and not found (then scanned or decoded)",
        Counter,
        b,
        |c| c.misses,
    )?;
    body_series(
        e,
        "fnhcl_body_cache_flushes",
        "Body cache shards emptied to stay within --body-cache-mib",
        Counter,
        b,
        |c| c.flushes,
    )?;
    body_series(
        e,
        "fnhcl_body_cache_entries",
        "Resource bodies remembered in the body cache",
        Gauge,
        b,
        |c| c.entries,
    )?;
    body_series(
        e,
        "fnhcl_body_cache_bytes",
        "Bytes charged for what the body cache holds",
        Gauge,
        b,
        |c| c.bytes,
    )?;
    gauge(
        e,
        "fnhcl_body_cache_max_bytes",
        "What the body cache may hold, in bytes (--body-cache-mib; 0: off)",
        b.max_bytes,
    )
}

/// client_golang's process collector, read from `/proc/self` at each scrape (Linux; on
/// other systems, or when `/proc` is not mounted, the series are absent).
#[derive(Debug, Default)]
struct ProcessCollector;

/// The kernel's user-visible clock tick (`USER_HZ`), fixed at 100 on Linux, as the Go
/// procfs library also assumes.
const USER_HZ: f64 = 100.0;

/// What the process collector reports.
#[derive(Debug, Default, PartialEq)]
pub struct ProcessStats {
    /// User plus system CPU time, seconds.
    pub cpu_seconds: f64,
    /// Resident memory, bytes.
    pub resident_bytes: f64,
    /// Virtual memory, bytes.
    pub virtual_bytes: f64,
    /// Start time, seconds since the Unix epoch.
    pub start_time_seconds: f64,
    /// Open file descriptors.
    pub open_fds: Option<f64>,
    /// The soft limit on open file descriptors.
    pub max_fds: Option<f64>,
    /// The soft limit on the address space, bytes (`unlimited` as u64::MAX, as Go).
    pub max_virtual_bytes: Option<f64>,
}

/// Reads the process's figures from `/proc/self` (`None` where there is no procfs).
pub fn process_stats() -> Option<ProcessStats> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let boot = std::fs::read_to_string("/proc/stat").ok()?;
    let limits = std::fs::read_to_string("/proc/self/limits").unwrap_or_default();
    let open_fds = std::fs::read_dir("/proc/self/fd")
        .ok()
        .map(|d| d.count() as f64);
    parse_process_stats(&stat, &status, &boot, &limits).map(|mut s| {
        s.open_fds = open_fds;
        s
    })
}

/// Parses `/proc/self/stat`, `/proc/self/status` (for `VmRSS`: no page size needed),
/// `/proc/stat` (for `btime`) and `/proc/self/limits`.
pub fn parse_process_stats(
    stat: &str,
    status: &str,
    proc_stat: &str,
    limits: &str,
) -> Option<ProcessStats> {
    // The command name (field 2) is in parentheses and may hold spaces: split after it.
    let rest = &stat[stat.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    // `rest` starts at field 3 (state); field N is f[N - 3].
    let field = |n: usize| f.get(n - 3).and_then(|v| v.parse::<f64>().ok());
    let (utime, stime) = (field(14)?, field(15)?);
    let (starttime, vsize) = (field(22)?, field(23)?);
    let rss_kib = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())?;
    let btime = proc_stat
        .lines()
        .find_map(|l| l.strip_prefix("btime "))
        .and_then(|v| v.trim().parse::<f64>().ok())?;
    let limit = |name: &str| {
        limits.lines().find_map(|l| {
            let soft = l.strip_prefix(name)?.split_whitespace().next()?;
            Some(if soft == "unlimited" {
                u64::MAX as f64
            } else {
                soft.parse::<f64>().ok()?
            })
        })
    };
    Some(ProcessStats {
        cpu_seconds: (utime + stime) / USER_HZ,
        resident_bytes: rss_kib * 1024.0,
        virtual_bytes: vsize,
        start_time_seconds: btime + starttime / USER_HZ,
        open_fds: None,
        max_fds: limit("Max open files"),
        max_virtual_bytes: limit("Max address space"),
    })
}

impl Collector for ProcessCollector {
    fn encode(&self, mut e: DescriptorEncoder) -> std::fmt::Result {
        let Some(p) = process_stats() else {
            return Ok(());
        };
        counter(
            &mut e,
            "process_cpu_seconds",
            "Total user and system CPU time spent in seconds",
            p.cpu_seconds,
        )?;
        if let Some(v) = p.open_fds {
            gauge(
                &mut e,
                "process_open_fds",
                "Number of open file descriptors",
                v,
            )?;
        }
        if let Some(v) = p.max_fds {
            gauge(
                &mut e,
                "process_max_fds",
                "Maximum number of open file descriptors",
                v,
            )?;
        }
        gauge(
            &mut e,
            "process_virtual_memory_bytes",
            "Virtual memory size in bytes",
            p.virtual_bytes,
        )?;
        if let Some(v) = p.max_virtual_bytes {
            gauge(
                &mut e,
                "process_virtual_memory_max_bytes",
                "Maximum amount of virtual memory available in bytes",
                v,
            )?;
        }
        gauge(
            &mut e,
            "process_resident_memory_bytes",
            "Resident memory size in bytes",
            p.resident_bytes,
        )?;
        gauge(
            &mut e,
            "process_start_time_seconds",
            "Start time of the process since unix epoch in seconds",
            p.start_time_seconds,
        )
    }
}

/// Whether the server takes calls, for `GET /readyz`: starting, serving, or draining after
/// SIGTERM (then Kubernetes stops routing new connections to the pod while in-flight
/// calls finish).
#[derive(Debug, Default)]
pub struct Readiness(AtomicU8);

const STARTING: u8 = 0;
const SERVING: u8 = 1;
const DRAINING: u8 = 2;

impl Readiness {
    /// The gRPC listener is bound and served.
    pub fn set_serving(&self) {
        self.0.store(SERVING, Ordering::SeqCst);
    }

    /// Shutting down: in-flight calls finish, no new calls are wanted.
    pub fn set_draining(&self) {
        self.0.store(DRAINING, Ordering::SeqCst);
    }

    /// True while serving.
    pub fn is_ready(&self) -> bool {
        self.0.load(Ordering::SeqCst) == SERVING
    }

    fn describe(&self) -> &'static str {
        match self.0.load(Ordering::SeqCst) {
            STARTING => "starting",
            SERVING => "ok",
            _ => "shutting down",
        }
    }
}

#[derive(Clone)]
struct HttpState {
    metrics: Arc<Metrics>,
    readiness: Arc<Readiness>,
}

/// The HTTP endpoint's routes: `/metrics`, `/healthz` (the process answers: liveness) and
/// `/readyz` (200 only while serving gRPC: readiness). Plain HTTP, so kubelet's probes work
/// whether or not gRPC is behind mTLS.
pub fn router(metrics: Arc<Metrics>, readiness: Arc<Readiness>) -> axum::Router {
    axum::Router::new()
        .route("/metrics", get(metrics_handler))
        .route("/healthz", get(|| async { "ok\n" }))
        .route("/readyz", get(readyz_handler))
        .with_state(HttpState { metrics, readiness })
}

async fn metrics_handler(State(s): State<HttpState>) -> impl IntoResponse {
    (
        [(
            header::CONTENT_TYPE,
            prometheus_client::encoding::prometheus_text::CONTENT_TYPE,
        )],
        s.metrics.render(),
    )
}

async fn readyz_handler(State(s): State<HttpState>) -> impl IntoResponse {
    let code = if s.readiness.is_ready() {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    (code, format!("{}\n", s.readiness.describe()))
}

/// Serves [`router`] on `listener` until `shutdown` resolves.
pub async fn serve_http(
    listener: TcpListener,
    metrics: Arc<Metrics>,
    readiness: Arc<Readiness>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) {
    let app = router(metrics, readiness);
    if let Err(e) = axum::serve(listener, app)
        .with_graceful_shutdown(shutdown)
        .await
    {
        tracing::error!(error = %e, "metrics endpoint failed");
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

    struct Fixed(CacheSnapshot, Option<body_cache::Stats>);
    impl Fixed {
        fn with_body(self, b: body_cache::Stats) -> Fixed {
            Fixed(self.0, Some(b))
        }
    }
    impl CacheStatsSource for Fixed {
        fn cache_stats(&self) -> CacheSnapshot {
            self.0
        }
        fn body_cache_stats(&self) -> Option<body_cache::Stats> {
            self.1
        }
    }

    #[test]
    fn render_counts_requests_errors_and_latency() {
        let m = Arc::new(Metrics::new());
        m.request(ApiVersion::V1);
        m.request(ApiVersion::V1);
        m.request(ApiVersion::V1beta1);
        m.error(ErrorKind::Panic);
        m.observe_latency(Duration::from_millis(3));
        let guard = m.in_flight();
        let text = m.render();
        assert!(
            text.contains("fnhcl_requests_total{version=\"v1\"} 2\n"),
            "{text}"
        );
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
        assert!(m.render().contains("fnhcl_evaluations_in_flight 0\n"));
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
        let text = Metrics::with_cache(Arc::new(Fixed(snap, None))).render();
        assert!(text.contains("fnhcl_cache_hits_total 7\n"), "{text}");
        assert!(text.contains("fnhcl_cache_misses_total 2\n"));
        assert!(text.contains("fnhcl_cache_evictions_total 1\n"));
        assert!(text.contains("fnhcl_cache_compiles_total 2\n"));
        assert!(text.contains("fnhcl_cache_compile_seconds_total 1.5\n"));
        assert!(text.contains("fnhcl_cache_entries 1\n"));
        assert!(text.contains("fnhcl_cache_bytes 4096\n"));
        assert!(text.contains("# TYPE fnhcl_cache_bytes gauge\n"));
        assert!(!text.contains("fnhcl_body_cache_"), "{text}");
    }

    #[test]
    fn render_includes_body_cache_counters() {
        let counts = |n: u64| body_cache::Counts {
            hits: n,
            misses: n + 1,
            flushes: n + 2,
            entries: n + 3,
            bytes: n + 4,
        };
        let body = body_cache::Stats {
            max_bytes: 32 << 20,
            scans: counts(10),
            values: counts(20),
        };
        let text = Metrics::with_cache(Arc::new(
            Fixed(CacheSnapshot::default(), None).with_body(body),
        ))
        .render();
        for (line, v) in [
            ("fnhcl_body_cache_hits_total{cache=\"scan\"}", 10),
            ("fnhcl_body_cache_misses_total{cache=\"scan\"}", 11),
            ("fnhcl_body_cache_flushes_total{cache=\"scan\"}", 12),
            ("fnhcl_body_cache_entries{cache=\"scan\"}", 13),
            ("fnhcl_body_cache_bytes{cache=\"scan\"}", 14),
            ("fnhcl_body_cache_hits_total{cache=\"value\"}", 20),
            ("fnhcl_body_cache_bytes{cache=\"value\"}", 24),
            ("fnhcl_body_cache_max_bytes", 32 << 20),
        ] {
            assert!(text.contains(&format!("{line} {v}\n")), "{line}: {text}");
        }
        assert!(
            text.contains("# TYPE fnhcl_body_cache_hits_total counter\n"),
            "{text}"
        );
        assert!(text.contains("# TYPE fnhcl_body_cache_entries gauge\n"));
    }

    #[test]
    fn grpc_series_exist_from_the_start_and_count_like_the_sdk() {
        let m = Arc::new(Metrics::new());
        let text = m.render();
        let v1 = "grpc_method=\"RunFunction\",grpc_service=\"apiextensions.fn.proto.v1.FunctionRunnerService\",grpc_type=\"unary\"";
        assert!(
            text.contains(&format!("grpc_server_started_total{{{v1}}} 0\n")),
            "{text}"
        );
        for (_, code) in GO_CODES {
            assert!(
                text.contains(&format!(
                    "grpc_server_handled_total{{grpc_code=\"{code}\",{v1}}} 0\n"
                )),
                "{code}: {text}"
            );
        }
        assert!(text.contains("# TYPE grpc_server_handled_total counter\n"));
        m.grpc_call(ApiVersion::V1).finish(tonic::Code::Ok);
        m.grpc_call(ApiVersion::V1)
            .finish(tonic::Code::DeadlineExceeded);
        drop(m.grpc_call(ApiVersion::V1));
        let text = m.render();
        assert!(text.contains(&format!("grpc_server_started_total{{{v1}}} 3\n")));
        assert!(text.contains(&format!("grpc_server_msg_received_total{{{v1}}} 3\n")));
        assert!(text.contains(&format!("grpc_server_msg_sent_total{{{v1}}} 3\n")));
        assert!(text.contains(&format!(
            "grpc_server_handled_total{{grpc_code=\"OK\",{v1}}} 1\n"
        )));
        assert!(text.contains(&format!(
            "grpc_server_handled_total{{grpc_code=\"DeadlineExceeded\",{v1}}} 1\n"
        )));
        assert!(text.contains(&format!(
            "grpc_server_handled_total{{grpc_code=\"Canceled\",{v1}}} 1\n"
        )));
        assert_eq!(m.grpc_handled(ApiVersion::V1, tonic::Code::Ok), 1);
        assert_eq!(m.grpc_handled(ApiVersion::V1beta1, tonic::Code::Ok), 0);
    }

    #[test]
    fn process_stats_parse_procfs() {
        let stat = "4242 (fn hcl) S 1 4242 4242 0 -1 4194560 1000 0 0 0 250 50 0 0 20 0 \
                    12 0 500000 104857600 2560 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0";
        let proc_stat = "cpu  1 2 3\nbtime 1700000000\nprocesses 10\n";
        let limits = "Limit                     Soft Limit           Hard Limit           Units\n\
                      Max open files            1048576              1048576              files\n\
                      Max address space         unlimited            unlimited            bytes\n";
        let status = "Name:\tfn-hcl\nVmRSS:\t   10240 kB\nThreads:\t3\n";
        let p = parse_process_stats(stat, status, proc_stat, limits).expect("parsed");
        assert_eq!(p.cpu_seconds, 3.0);
        assert_eq!(p.resident_bytes, 10240.0 * 1024.0);
        assert_eq!(p.virtual_bytes, 104_857_600.0);
        assert_eq!(p.start_time_seconds, 1_700_000_000.0 + 5000.0);
        assert_eq!(p.max_fds, Some(1_048_576.0));
        assert_eq!(p.max_virtual_bytes, Some(u64::MAX as f64));
        assert!(parse_process_stats("garbage", status, proc_stat, limits).is_none());
        assert!(parse_process_stats(stat, status, "no btime", limits).is_none());
        assert!(parse_process_stats(stat, "", proc_stat, limits).is_none());
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn process_series_are_scraped_on_linux() {
        let text = Metrics::new().render();
        for name in [
            "process_cpu_seconds_total ",
            "process_resident_memory_bytes ",
            "process_virtual_memory_bytes ",
            "process_start_time_seconds ",
            "process_open_fds ",
            "process_max_fds ",
        ] {
            assert!(text.contains(name), "{name} missing: {text}");
        }
    }

    #[test]
    fn readiness_states() {
        let r = Readiness::default();
        assert!(!r.is_ready());
        assert_eq!(r.describe(), "starting");
        r.set_serving();
        assert!(r.is_ready());
        r.set_draining();
        assert!(!r.is_ready());
        assert_eq!(r.describe(), "shutting down");
    }
}
