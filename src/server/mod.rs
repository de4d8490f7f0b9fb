//! `fn-hcl serve`: the Crossplane function over gRPC.
//!
//! Serves `apiextensions.fn.proto.v1` and `v1beta1` FunctionRunnerService (Crossplane
//! falls back to v1beta1 on UNIMPLEMENTED), gRPC server reflection and the standard health
//! service, over mutual TLS (certificates from `--tls-server-certs-dir`, client
//! certificates required) or, with `--insecure`, plaintext. Prometheus metrics are served
//! on `--metrics-address`. SIGTERM/SIGINT stop accepting and let in-flight calls finish
//! within `--grace-period`.

pub mod lazy;
pub mod log;
pub mod metrics;
pub mod oversize;
pub mod service;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use tokio::net::TcpListener;
use tokio::sync::{Semaphore, oneshot};
use tonic::service::interceptor::InterceptedService;
use tonic::transport::server::TcpIncoming;
use tonic::transport::{Certificate, Identity, Server, ServerTlsConfig};

use crate::runtime::cache::CacheLimits;
use lazy::v1::function_runner_service_server::FunctionRunnerServiceServer as V1Server;
use lazy::v1beta1::function_runner_service_server::FunctionRunnerServiceServer as V1beta1Server;
use metrics::{Metrics, Readiness};
use service::{FunctionService, Shared};

/// Flags of `fn-hcl serve`: the Go function SDK's (`--debug`, `--network`, `--address`,
/// `--tls-certs-dir`/`TLS_SERVER_CERTS_DIR`, `--insecure`, `--max-recv-message-size`, so
/// the arguments Crossplane and function templates pass work unchanged), plus fn-hcl's own.
#[derive(Args, Debug, Clone)]
pub struct ServeArgs {
    /// Network to listen on: tcp, tcp4, tcp6 or unix (then --address is a socket path).
    #[arg(long, default_value = "tcp")]
    pub network: String,
    /// Address to listen on for gRPC (`:9443` means every interface).
    #[arg(long, default_value = "0.0.0.0:9443")]
    pub address: String,
    /// Serve plaintext gRPC without TLS (local development, `crossplane render`).
    /// Takes precedence over --tls-server-certs-dir.
    #[arg(long)]
    pub insecure: bool,
    /// Directory with the server certificate (`tls.crt`, `tls.key`) and the CA that signs
    /// client certificates (`ca.crt`); client certificates are required.
    /// An empty value counts as unset, as in the Go SDK.
    #[arg(long, alias = "tls-certs-dir", env = "TLS_SERVER_CERTS_DIR", value_parser = any_path)]
    pub tls_server_certs_dir: Option<PathBuf>,
    /// Debug logs, and the debug dump of every request and response.
    #[arg(long, short = 'd')]
    pub debug: bool,
    /// Address of the HTTP endpoint: Prometheus `/metrics` and the probes `/healthz`
    /// (liveness) and `/readyz` (readiness); empty to disable.
    #[arg(long, default_value = ":8080")]
    pub metrics_address: String,
    /// Largest request accepted, in MiB (the Go function SDK's flag; its default of 4
    /// refuses a composite with a thousand observed resources, about 9 MB with the
    /// desired state of earlier steps). Larger requests get RESOURCE_EXHAUSTED.
    #[arg(long, default_value_t = DEFAULT_MAX_RECV_MIB)]
    pub max_recv_message_size: usize,
    /// Memory budget of one evaluation, in MiB: that many MiB of string bytes and 62,500
    /// collection elements per MiB, covering the program's values, strings and the
    /// response. A call over it gets a Fatal result naming the budget.
    #[arg(long, default_value_t = DEFAULT_EVALUATION_MIB)]
    pub max_evaluation_mib: u64,
    /// Longest one evaluation may run (Go durations); it holds an evaluation slot no
    /// longer, so a hostile composite cannot starve the others.
    #[arg(long, default_value = DEFAULT_EVALUATION_TIME, value_parser = parse_duration)]
    pub max_evaluation_time: Duration,
    /// Evaluations run at once (default: the number of CPUs); further calls wait.
    #[arg(long)]
    pub max_concurrent_evaluations: Option<usize>,
    /// Most compiled programs kept in the program cache.
    #[arg(long, default_value_t = CacheLimits::default().max_entries)]
    pub cache_max_programs: usize,
    /// Most memory the program cache may hold, in MiB (estimated from the programs).
    #[arg(long, default_value_t = CacheLimits::default().max_bytes >> 20)]
    pub cache_max_mib: usize,
    /// Most memory, in MiB, for what observed bodies gave before (their checks and the
    /// values a program read of them), remembered by their bytes: in steady state
    /// Crossplane sends them again unchanged on every reconcile. 0 turns it off.
    #[arg(long, default_value_t = crate::protocol::body_cache::DEFAULT_MAX_BYTES >> 20)]
    pub body_cache_mib: usize,
    /// How long in-flight calls may take to finish after SIGTERM/SIGINT (Go durations:
    /// `25s`, `1m30s`, `500ms`). Keep it plus one second under the pod's
    /// terminationGracePeriodSeconds (30 by default), or the kubelet kills the calls.
    #[arg(long, default_value = "25s", value_parser = parse_duration)]
    pub grace_period: Duration,
    /// Honour the test-only request tags (panic, sleep). Never use in production.
    #[arg(long, hide = true)]
    pub enable_test_hooks: bool,
}

impl Default for ServeArgs {
    fn default() -> Self {
        ServeArgs {
            network: "tcp".into(),
            address: "0.0.0.0:9443".into(),
            insecure: false,
            tls_server_certs_dir: None,
            debug: false,
            metrics_address: ":8080".into(),
            max_recv_message_size: DEFAULT_MAX_RECV_MIB,
            max_evaluation_mib: DEFAULT_EVALUATION_MIB,
            max_evaluation_time: crate::bytecode::vm::Limits::default().max_wall,
            max_concurrent_evaluations: None,
            cache_max_programs: CacheLimits::default().max_entries,
            cache_max_mib: CacheLimits::default().max_bytes >> 20,
            body_cache_mib: crate::protocol::body_cache::DEFAULT_MAX_BYTES >> 20,
            grace_period: DEFAULT_GRACE_PERIOD,
            enable_test_hooks: false,
        }
    }
}

/// A path, empty allowed (clap's own path parser refuses an empty `TLS_SERVER_CERTS_DIR`).
fn any_path(s: &str) -> Result<PathBuf, String> {
    Ok(PathBuf::from(s))
}

/// The default `--max-recv-message-size`, MiB.
pub const DEFAULT_MAX_RECV_MIB: usize = 32;
/// The default `--max-evaluation-mib`.
pub const DEFAULT_EVALUATION_MIB: u64 = 64;
/// The default `--max-evaluation-time` of `serve` and `bench` (the VM's own default,
/// `Limits::default().max_wall`; a test holds them equal).
pub const DEFAULT_EVALUATION_TIME: &str = "1s";

/// The default `--grace-period`.
pub const DEFAULT_GRACE_PERIOD: Duration = Duration::from_secs(25);
/// How long the runtime waits, after the grace period, for evaluations abandoned on the
/// blocking pool.
pub const RUNTIME_STOP: Duration = Duration::from_secs(1);
/// Kubernetes' default `terminationGracePeriodSeconds`: SIGKILL follows SIGTERM after it.
pub const KUBERNETES_DEFAULT_TERMINATION_GRACE: Duration = Duration::from_secs(30);

/// Parses a Go duration (`time.ParseDuration`: a sequence of decimal numbers with units
/// `ns`, `us`/`µs`, `ms`, `s`, `m`, `h`, e.g. `1m30s`, `1.5h`, `300ms`; `0` alone) or a
/// bare number of seconds. Negative durations are refused.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let bad = || format!("invalid duration {s:?}: expected e.g. 30s, 1m30s, 500ms");
    if s.is_empty() {
        return Err(bad());
    }
    if let Ok(secs) = s.parse::<f64>() {
        return Duration::try_from_secs_f64(secs)
            .map_err(|e| format!("invalid duration {s:?}: {e}"));
    }
    let mut rest = s.strip_prefix('+').unwrap_or(s);
    let mut total = 0f64;
    while !rest.is_empty() {
        let num_len = rest
            .find(|c: char| !c.is_ascii_digit() && c != '.')
            .unwrap_or(rest.len());
        let (num, tail) = rest.split_at(num_len);
        if num.is_empty() || num == "." {
            return Err(bad());
        }
        let n: f64 = num.parse().map_err(|_| bad())?;
        let unit_len = tail
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(tail.len());
        let (unit, next) = tail.split_at(unit_len);
        let scale = match unit {
            "ns" => 1e-9,
            "us" | "\u{b5}s" | "\u{3bc}s" => 1e-6,
            "ms" => 1e-3,
            "s" => 1.0,
            "m" => 60.0,
            "h" => 3600.0,
            "" => {
                return Err(format!(
                    "missing unit in duration {s:?}: use ns, us, ms, s, m or h"
                ));
            }
            _ => {
                return Err(format!(
                    "unknown unit {unit:?} in duration {s:?}: use ns, us, ms, s, m or h"
                ));
            }
        };
        total += n * scale;
        rest = next;
    }
    Duration::try_from_secs_f64(total).map_err(|e| format!("invalid duration {s:?}: {e}"))
}

/// Go-style listen addresses: `:9443` means every interface (IPv6's for `tcp6`).
pub fn normalize_address(address: &str) -> String {
    if address.starts_with(':') {
        format!("0.0.0.0{address}")
    } else {
        address.to_string()
    }
}

/// Why the server could not start or stopped with an error.
#[derive(Debug)]
pub struct ServeError(pub String);

impl std::fmt::Display for ServeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ServeError {}

fn err(msg: impl Into<String>) -> ServeError {
    ServeError(msg.into())
}

/// The refusal when neither TLS nor `--insecure` is configured.
pub const NO_TLS_MESSAGE: &str = "refusing to serve without TLS: pass --tls-server-certs-dir \
(or set TLS_SERVER_CERTS_DIR) to a directory with tls.crt, tls.key and ca.crt, or pass \
--insecure to serve plaintext";

/// The mTLS configuration from `dir`: `tls.crt`/`tls.key` identify the server, `ca.crt`
/// verifies client certificates, which are required. rustls speaks TLS 1.2 and 1.3 only.
/// Every file is read and parsed here, so a wrong directory or a bad file is reported by
/// path before anything listens.
pub fn load_tls(dir: &Path) -> Result<ServerTlsConfig, ServeError> {
    use rustls_pki_types::pem::PemObject;
    use rustls_pki_types::{CertificateDer, PrivateKeyDer};
    let shown = dir.display();
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => {
            return Err(err(format!(
                "TLS certificates directory {shown}: not a directory (set by --tls-server-certs-dir or TLS_SERVER_CERTS_DIR)"
            )));
        }
        Err(e) => {
            return Err(err(format!(
                "TLS certificates directory {shown}: {e} (set by --tls-server-certs-dir or TLS_SERVER_CERTS_DIR)"
            )));
        }
    }
    let read = |name: &str| {
        let p = dir.join(name);
        std::fs::read(&p)
            .map(|b| (p.clone(), b))
            .map_err(|e| err(format!("cannot read {}: {e}", p.display())))
    };
    let certs = |name: &str| {
        let (p, bytes) = read(name)?;
        let n = CertificateDer::pem_slice_iter(&bytes)
            .map(|c| c.map(|_| ()))
            .collect::<Result<Vec<()>, _>>()
            .map_err(|e| err(format!("{}: not a PEM certificate file: {e}", p.display())))?
            .len();
        if n == 0 {
            return Err(err(format!(
                "{}: no PEM certificate (-----BEGIN CERTIFICATE-----) in the file",
                p.display()
            )));
        }
        Ok(bytes)
    };
    let cert = certs("tls.crt")?;
    let (key_path, key) = read("tls.key")?;
    PrivateKeyDer::from_pem_slice(&key).map_err(|e| {
        err(format!(
            "{}: no usable PEM private key: {e}",
            key_path.display()
        ))
    })?;
    let ca = certs("ca.crt")?;
    Ok(ServerTlsConfig::new()
        .identity(Identity::from_pem(cert, key))
        .client_ca_root(Certificate::from_pem(ca))
        .client_auth_optional(false)
        .timeout(Duration::from_secs(10)))
}

/// A server started by [`start`].
#[derive(Debug)]
pub struct Running {
    /// The bound gRPC address (`None` on a unix socket).
    pub grpc_addr: Option<SocketAddr>,
    /// The bound metrics address, when metrics are enabled.
    pub metrics_addr: Option<SocketAddr>,
    /// The server's counters.
    pub metrics: Arc<Metrics>,
    /// What `/readyz` reports.
    pub readiness: Arc<Readiness>,
    shutdown: Option<oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<Result<(), ServeError>>,
}

impl Running {
    /// The bound TCP address; panics on a unix socket (for tests, which listen on TCP).
    pub fn addr(&self) -> SocketAddr {
        self.grpc_addr.expect("the server listens on TCP")
    }

    /// Stops accepting, waits up to `grace` for in-flight calls, and returns whether they
    /// all finished in time.
    pub async fn shutdown(mut self, grace: Duration) -> Result<bool, ServeError> {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        match tokio::time::timeout(grace, &mut self.task).await {
            Ok(Ok(r)) => r.map(|()| true),
            Ok(Err(e)) => Err(err(format!("server task failed: {e}"))),
            Err(_) => {
                self.task.abort();
                Ok(false)
            }
        }
    }
}

/// Where the gRPC server listens.
enum Listener {
    Tcp(TcpListener),
    #[cfg(unix)]
    Unix(tokio::net::UnixListener, PathBuf),
}

async fn listen(network: &str, address: &str) -> Result<Listener, ServeError> {
    let tcp = |addr: String| async move {
        TcpListener::bind(addr.as_str())
            .await
            .map(Listener::Tcp)
            .map_err(|e| err(format!("cannot listen for tcp connections on {addr}: {e}")))
    };
    match network {
        "tcp" | "tcp4" => {
            let addr = normalize_address(address);
            if network == "tcp4" {
                check_family(&addr, true)?;
            }
            tcp(addr).await
        }
        "tcp6" => {
            let addr = if address.starts_with(':') {
                format!("[::]{address}")
            } else {
                address.to_string()
            };
            check_family(&addr, false)?;
            tcp(addr).await
        }
        #[cfg(unix)]
        "unix" => {
            let path = PathBuf::from(address);
            tokio::net::UnixListener::bind(&path)
                .map(|l| Listener::Unix(l, path))
                .map_err(|e| err(format!("cannot listen on unix socket {address}: {e}")))
        }
        other => Err(err(format!(
            "unsupported --network {other:?}: use tcp, tcp4, tcp6 or unix"
        ))),
    }
}

/// `tcp4`/`tcp6` take only addresses of their family (a host name is resolved by bind).
fn check_family(addr: &str, v4: bool) -> Result<(), ServeError> {
    match addr.parse::<SocketAddr>() {
        Ok(a) if a.is_ipv4() != v4 => Err(err(format!(
            "address {addr} is not an IPv{} address (--network tcp{})",
            if v4 { 4 } else { 6 },
            if v4 { 4 } else { 6 }
        ))),
        _ => Ok(()),
    }
}

/// Binds the listeners and starts serving in the background on the current runtime.
/// Everything that can be wrong with the configuration (TLS files, ports in use, sizes)
/// is reported here, before anything is served.
pub async fn start(args: &ServeArgs) -> Result<Running, ServeError> {
    let tls = if args.insecure {
        None
    } else {
        match &args.tls_server_certs_dir {
            Some(dir) if !dir.as_os_str().is_empty() => Some(load_tls(dir)?),
            _ => return Err(err(NO_TLS_MESSAGE)),
        }
    };
    let max_recv = args
        .max_recv_message_size
        .checked_mul(1024 * 1024)
        .filter(|n| *n > 0)
        .ok_or_else(|| err("--max-recv-message-size must be a positive number of MiB"))?;
    if args.max_evaluation_time.is_zero() {
        return Err(err("--max-evaluation-time must be positive"));
    }
    let slots = args
        .max_concurrent_evaluations
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .max(1);

    let listener = listen(&args.network, &args.address).await?;
    let grpc_addr = match &listener {
        Listener::Tcp(l) => Some(
            l.local_addr()
                .map_err(|e| err(format!("cannot read the listen address: {e}")))?,
        ),
        #[cfg(unix)]
        Listener::Unix(..) => None,
    };

    let metrics = Arc::new(Metrics::with_cache(Arc::new(GlobalCache)));
    let readiness = Arc::new(Readiness::default());
    let (stop_tx, stop_rx) = oneshot::channel::<()>();
    let (metrics_stop_tx, metrics_stop_rx) = oneshot::channel::<()>();
    let metrics_addr = if args.metrics_address.is_empty() {
        None
    } else {
        let (l, addr) = metrics::bind(&args.metrics_address).await.map_err(|e| {
            err(format!(
                "cannot listen for metrics on {}: {e}",
                normalize_address(&args.metrics_address)
            ))
        })?;
        tokio::spawn(metrics::serve_http(
            l,
            Arc::clone(&metrics),
            Arc::clone(&readiness),
            async {
                let _ = metrics_stop_rx.await;
            },
        ));
        Some(addr)
    };

    let shared = Arc::new(Shared {
        metrics: Arc::clone(&metrics),
        slots: Arc::new(Semaphore::new(slots)),
        penalty_slots: Arc::new(Semaphore::new(service::penalty_slots(slots))),
        offenders: service::Offenders::default(),
        limits: crate::bytecode::vm::Limits {
            max_wall: args.max_evaluation_time,
            ..crate::bytecode::vm::Limits::with_memory_mib(args.max_evaluation_mib.max(1))
        },
        debug: args.debug,
        test_hooks: args.enable_test_hooks,
    });
    let svc = FunctionService::new(shared);
    // Requests decode with their observed bodies left as bytes (see `lazy`).
    let v1svc = V1Server::new(svc.clone()).max_decoding_message_size(max_recv);
    let v1beta1svc = V1beta1Server::new(svc).max_decoding_message_size(max_recv);

    let (health, health_svc) = tonic_health::server::health_reporter();
    health.set_serving::<V1Server<FunctionService>>().await;
    health.set_serving::<V1beta1Server<FunctionService>>().await;

    let reflection = || {
        tonic_reflection::server::Builder::configure()
            .register_encoded_file_descriptor_set(crate::protocol::proto::FILE_DESCRIPTOR_SET)
            .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
    };
    let reflection_v1 = reflection()
        .build_v1()
        .map_err(|e| err(format!("reflection: {e}")))?;
    let reflection_v1alpha = reflection()
        .build_v1alpha()
        .map_err(|e| err(format!("reflection: {e}")))?;

    let mut builder = Server::builder();
    if let Some(tls) = tls {
        builder = builder.tls_config(tls).map_err(|e| {
            err(format!(
                "invalid TLS configuration in {}: {e}",
                args.tls_server_certs_dir
                    .as_deref()
                    .unwrap_or(Path::new(""))
                    .display()
            ))
        })?;
    }
    let router = builder
        .add_service(health_svc)
        .add_service(reflection_v1)
        .add_service(reflection_v1alpha)
        .add_service(oversize::ResourceExhausted(InterceptedService::new(
            v1svc,
            service::stamp,
        )))
        .add_service(oversize::ResourceExhausted(InterceptedService::new(
            v1beta1svc,
            service::stamp,
        )));

    tracing::info!(
        network = args.network.as_str(),
        address = grpc_addr.map_or_else(|| args.address.clone(), |a| a.to_string()),
        metrics_address = metrics_addr.map(|a| a.to_string()).unwrap_or_default(),
        tls = !args.insecure,
        max_concurrent_evaluations = slots,
        max_recv_message_bytes = max_recv,
        "fn-hcl listening"
    );
    let draining = Arc::clone(&readiness);
    let signal = async move {
        let _ = stop_rx.await;
        draining.set_draining();
        health.set_not_serving::<V1Server<FunctionService>>().await;
        health
            .set_not_serving::<V1beta1Server<FunctionService>>()
            .await;
        health
            .set_service_status("", tonic_health::ServingStatus::NotServing)
            .await;
    };
    let task = match listener {
        // TCP_NODELAY: with Nagle's algorithm on, a small response waits for the client's
        // delayed ACK (~40 ms on Linux); `fn-hcl loadgen` measured p50 48 ms for a 10 µs call.
        Listener::Tcp(l) => tokio::spawn(async move {
            let r = router
                .serve_with_incoming_shutdown(TcpIncoming::from(l).with_nodelay(Some(true)), signal)
                .await
                .map_err(|e| err(format!("gRPC server failed: {e}")));
            let _ = metrics_stop_tx.send(());
            r
        }),
        #[cfg(unix)]
        Listener::Unix(l, path) => tokio::spawn(async move {
            let incoming = tokio_stream::wrappers::UnixListenerStream::new(l);
            let r = router
                .serve_with_incoming_shutdown(incoming, signal)
                .await
                .map_err(|e| err(format!("gRPC server failed: {e}")));
            let _ = std::fs::remove_file(&path);
            let _ = metrics_stop_tx.send(());
            r
        }),
    };
    // The listener is bound and its accept loop spawned: connections are taken from here on.
    readiness.set_serving();
    Ok(Running {
        grpc_addr,
        metrics_addr,
        metrics,
        readiness,
        shutdown: Some(stop_tx),
        task,
    })
}

/// The metrics endpoint's view of the process-wide program cache.
struct GlobalCache;

impl metrics::CacheStatsSource for GlobalCache {
    fn cache_stats(&self) -> metrics::CacheSnapshot {
        use std::sync::atomic::Ordering::Relaxed;
        let c = crate::handler::program_cache();
        metrics::CacheSnapshot {
            hits: c.stats.hits.load(Relaxed),
            misses: c.stats.misses.load(Relaxed),
            evictions: c.stats.evictions.load(Relaxed),
            compiles: c.stats.compiles.load(Relaxed),
            compile_nanos: c.stats.compile_nanos.load(Relaxed),
            entries: c.len() as u64,
            bytes: c.bytes() as u64,
        }
    }

    fn body_cache_stats(&self) -> Option<crate::protocol::body_cache::Stats> {
        Some(crate::protocol::body_cache::stats())
    }
}

/// Sets up the logs on stderr: one JSON object a line with zap's keys, as functions built
/// on the Go SDK write them (see [`log`]); debug level with `debug`, else `RUST_LOG` or info.
pub fn init_logging(debug: bool) {
    let filter = if debug {
        tracing_subscriber::EnvFilter::new("debug,h2=info,hyper=info,tower=info,rustls=info")
    } else {
        tracing_subscriber::EnvFilter::try_from_default_env()
            .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"))
    };
    let _ = tracing_subscriber::fmt()
        .event_format(log::ZapJson)
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
}

/// Runs `fn-hcl serve` until SIGTERM or SIGINT; `Ok` once the server has stopped.
pub fn serve(args: ServeArgs) -> Result<(), ServeError> {
    init_logging(args.debug);
    crate::protocol::body_cache::set_max_bytes(args.body_cache_mib.saturating_mul(1 << 20));
    let limits = CacheLimits {
        max_entries: args.cache_max_programs.max(1),
        max_bytes: args.cache_max_mib.max(1).saturating_mul(1 << 20),
    };
    // Sized before the first call; created now so its counters are on the metrics
    // endpoint from the first scrape.
    let _ = crate::handler::init_program_cache(limits);

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("fn-hcl")
        .build()
        .map_err(|e| err(format!("cannot start the runtime: {e}")))?;
    let result = runtime.block_on(async {
        let running = start(&args).await?;
        wait_for_signal().await?;
        tracing::info!(grace_period = ?args.grace_period, "shutting down: no new calls, finishing in-flight calls");
        match running.shutdown(args.grace_period).await? {
            true => tracing::info!("shut down cleanly"),
            false => tracing::warn!("grace period over; abandoning calls still running"),
        }
        Ok(())
    });
    // Evaluations abandoned after their deadline may still run on the blocking pool.
    runtime.shutdown_timeout(RUNTIME_STOP);
    result
}

async fn wait_for_signal() -> Result<(), ServeError> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let mut term = signal(SignalKind::terminate())
            .map_err(|e| err(format!("cannot watch SIGTERM: {e}")))?;
        let mut int = signal(SignalKind::interrupt())
            .map_err(|e| err(format!("cannot watch SIGINT: {e}")))?;
        tokio::select! {
            _ = term.recv() => tracing::info!("received SIGTERM"),
            _ = int.recv() => tracing::info!("received SIGINT"),
        }
        Ok(())
    }
    #[cfg(not(unix))]
    {
        tokio::signal::ctrl_c()
            .await
            .map_err(|e| err(format!("cannot watch Ctrl-C: {e}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_evaluation_time_is_the_vms() {
        assert_eq!(
            parse_duration(DEFAULT_EVALUATION_TIME),
            Ok(crate::bytecode::vm::Limits::default().max_wall)
        );
    }

    #[test]
    fn durations() {
        let ok = |s: &str, d: Duration| assert_eq!(parse_duration(s), Ok(d), "{s}");
        ok("30s", Duration::from_secs(30));
        ok("500ms", Duration::from_millis(500));
        ok("2m", Duration::from_secs(120));
        ok("1m30s", Duration::from_secs(90));
        ok("1h2m3s", Duration::from_secs(3723));
        ok("1.5h", Duration::from_secs(5400));
        ok("2us", Duration::from_micros(2));
        ok("2\u{b5}s", Duration::from_micros(2));
        ok("7ns", Duration::from_nanos(7));
        ok("+5s", Duration::from_secs(5));
        ok("0", Duration::ZERO);
        ok("1.5", Duration::from_millis(1500));
        for bad in [
            "soon", "3d", "1e400s", "", "-1s", "1m30", "s", ".s", "1..5s", "5 s",
        ] {
            assert!(parse_duration(bad).is_err(), "{bad:?} accepted");
        }
        assert!(parse_duration("3d").unwrap_err().contains("\"d\""));
    }

    #[test]
    fn default_drain_fits_the_default_pod_termination_grace() {
        // SIGKILL comes terminationGracePeriodSeconds after SIGTERM; the server needs the
        // grace period plus the runtime's stop, and leaves a margin for the kubelet.
        let drain = DEFAULT_GRACE_PERIOD + RUNTIME_STOP;
        assert!(drain + Duration::from_secs(2) <= KUBERNETES_DEFAULT_TERMINATION_GRACE);
        assert_eq!(ServeArgs::default().grace_period, DEFAULT_GRACE_PERIOD);
    }

    #[test]
    fn sdk_flags_parse() {
        use clap::Parser;
        #[derive(Parser)]
        struct Cmd {
            #[command(flatten)]
            serve: ServeArgs,
        }
        let c = Cmd::try_parse_from([
            "fn-hcl",
            "--debug",
            "--network=tcp",
            "--address=:9443",
            "--tls-certs-dir=/tls",
            "--max-recv-message-size=8",
            "--grace-period=1m30s",
            "--cache-max-programs=64",
            "--cache-max-mib=32",
            "--body-cache-mib=0",
            "--max-evaluation-mib=8",
            "--max-evaluation-time=250ms",
        ])
        .expect("SDK-style flags");
        assert_eq!(c.serve.max_evaluation_mib, 8);
        assert_eq!(c.serve.max_evaluation_time, Duration::from_millis(250));
        assert!(c.serve.debug);
        assert_eq!(c.serve.network, "tcp");
        assert_eq!(c.serve.tls_server_certs_dir, Some(PathBuf::from("/tls")));
        assert_eq!(c.serve.max_recv_message_size, 8);
        assert_eq!(c.serve.grace_period, Duration::from_secs(90));
        assert_eq!(
            (c.serve.cache_max_programs, c.serve.cache_max_mib),
            (64, 32)
        );
        assert_eq!(c.serve.body_cache_mib, 0);
        let c = Cmd::try_parse_from(["fn-hcl", "--tls-server-certs-dir", "/x"]).expect("ours");
        assert_eq!(c.serve.tls_server_certs_dir, Some(PathBuf::from("/x")));
        assert_eq!(c.serve.body_cache_mib, 32);
    }

    #[tokio::test]
    async fn unsupported_network_is_named() {
        let args = ServeArgs {
            network: "udp".into(),
            insecure: true,
            metrics_address: String::new(),
            ..ServeArgs::default()
        };
        let Err(e) = start(&args).await else {
            panic!("started on udp");
        };
        assert!(e.0.contains("unsupported --network \"udp\""), "{e}");
        let args = ServeArgs {
            network: "tcp6".into(),
            address: "127.0.0.1:0".into(),
            ..args
        };
        let Err(e) = start(&args).await else {
            panic!("tcp6 on an IPv4 address");
        };
        assert!(e.0.contains("not an IPv6 address"), "{e}");
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn serves_on_a_unix_socket() {
        let dir = std::env::temp_dir().join(format!("fn-hcl-unix-{}", std::process::id()));
        let _ = std::fs::create_dir_all(&dir);
        let path = dir.join("fn.sock");
        let _ = std::fs::remove_file(&path);
        let args = ServeArgs {
            network: "unix".into(),
            address: path.display().to_string(),
            insecure: true,
            metrics_address: String::new(),
            ..ServeArgs::default()
        };
        let running = start(&args).await.expect("started");
        assert!(running.grpc_addr.is_none());
        assert!(tokio::net::UnixStream::connect(&path).await.is_ok());
        assert!(
            running
                .shutdown(Duration::from_secs(5))
                .await
                .expect("stopped")
        );
        assert!(!path.exists(), "the socket file is removed at shutdown");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn go_style_addresses() {
        assert_eq!(normalize_address(":8080"), "0.0.0.0:8080");
        assert_eq!(normalize_address("127.0.0.1:0"), "127.0.0.1:0");
    }

    #[tokio::test]
    async fn refuses_without_tls_or_insecure() {
        let args = ServeArgs {
            address: "127.0.0.1:0".into(),
            metrics_address: String::new(),
            ..ServeArgs::default()
        };
        let Err(e) = start(&args).await else {
            panic!("started without TLS");
        };
        assert!(e.0.contains("refusing to serve without TLS"), "{e}");
        assert!(e.0.contains("--insecure"), "{e}");
    }

    #[tokio::test]
    async fn missing_certificate_files_are_named() {
        let args = ServeArgs {
            address: "127.0.0.1:0".into(),
            metrics_address: String::new(),
            tls_server_certs_dir: Some(PathBuf::from("/nonexistent-fn-hcl-certs")),
            ..ServeArgs::default()
        };
        let Err(e) = start(&args).await else {
            panic!("started without certificates");
        };
        assert!(e.0.contains("/nonexistent-fn-hcl-certs"), "{e}");
        assert!(e.0.contains("TLS_SERVER_CERTS_DIR"), "{e}");
    }
}
