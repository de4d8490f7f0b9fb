//! `fn-hcl serve`: the Crossplane function over gRPC.
//!
//! Serves `apiextensions.fn.proto.v1` and `v1beta1` FunctionRunnerService (Crossplane
//! falls back to v1beta1 on UNIMPLEMENTED), gRPC server reflection and the standard health
//! service, over mutual TLS (certificates from `--tls-server-certs-dir`, client
//! certificates required) or, with `--insecure`, plaintext. Prometheus metrics are served
//! on `--metrics-address`. SIGTERM/SIGINT stop accepting and let in-flight calls finish
//! within `--grace-period`.

pub mod lazy;
pub mod metrics;
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

use lazy::v1::function_runner_service_server::FunctionRunnerServiceServer as V1Server;
use lazy::v1beta1::function_runner_service_server::FunctionRunnerServiceServer as V1beta1Server;
use metrics::Metrics;
use service::{FunctionService, Shared};

/// Flags of `fn-hcl serve` (the Go function SDK's, plus a few of fn-hcl's own).
#[derive(Args, Debug, Clone)]
pub struct ServeArgs {
    /// Address to listen on for gRPC (`:9443` means every interface).
    #[arg(long, default_value = "0.0.0.0:9443")]
    pub address: String,
    /// Serve plaintext gRPC without TLS (local development, `crossplane render`).
    /// Takes precedence over --tls-server-certs-dir.
    #[arg(long)]
    pub insecure: bool,
    /// Directory with the server certificate (`tls.crt`, `tls.key`) and the CA that signs
    /// client certificates (`ca.crt`); client certificates are required.
    #[arg(long, env = "TLS_SERVER_CERTS_DIR")]
    pub tls_server_certs_dir: Option<PathBuf>,
    /// Debug logs, and the debug dump of every request and response.
    #[arg(long, short = 'd')]
    pub debug: bool,
    /// Address of the Prometheus metrics endpoint (`/metrics`); empty to disable.
    #[arg(long, default_value = ":8080")]
    pub metrics_address: String,
    /// Largest request accepted, in MiB (as the Go function SDK's flag).
    #[arg(long, default_value_t = 4)]
    pub max_recv_message_size: usize,
    /// Evaluations run at once (default: the number of CPUs); further calls wait.
    #[arg(long)]
    pub max_concurrent_evaluations: Option<usize>,
    /// How long in-flight calls may take to finish after SIGTERM/SIGINT, e.g. `30s`.
    #[arg(long, default_value = "30s", value_parser = parse_duration)]
    pub grace_period: Duration,
    /// Honour the test-only request tags (panic, sleep). Never use in production.
    #[arg(long, hide = true)]
    pub enable_test_hooks: bool,
}

impl Default for ServeArgs {
    fn default() -> Self {
        ServeArgs {
            address: "0.0.0.0:9443".into(),
            insecure: false,
            tls_server_certs_dir: None,
            debug: false,
            metrics_address: ":8080".into(),
            max_recv_message_size: 4,
            max_concurrent_evaluations: None,
            grace_period: Duration::from_secs(30),
            enable_test_hooks: false,
        }
    }
}

/// Parses `500ms`, `30s`, `2m`, `1h` or a bare number of seconds.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let split = s
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let n: f64 = num
        .parse()
        .map_err(|_| format!("invalid duration {s:?}: expected e.g. 30s, 500ms, 2m"))?;
    let secs = match unit {
        "" | "s" => n,
        "ms" => n / 1e3,
        "m" => n * 60.0,
        "h" => n * 3600.0,
        _ => return Err(format!("invalid duration unit in {s:?}: use ms, s, m or h")),
    };
    Duration::try_from_secs_f64(secs).map_err(|e| format!("invalid duration {s:?}: {e}"))
}

/// Go-style listen addresses: `:9443` means every interface.
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
pub fn load_tls(dir: &Path) -> Result<ServerTlsConfig, ServeError> {
    let read = |name: &str| {
        let p = dir.join(name);
        std::fs::read(&p).map_err(|e| err(format!("cannot read {}: {e}", p.display())))
    };
    let (cert, key, ca) = (read("tls.crt")?, read("tls.key")?, read("ca.crt")?);
    Ok(ServerTlsConfig::new()
        .identity(Identity::from_pem(cert, key))
        .client_ca_root(Certificate::from_pem(ca))
        .client_auth_optional(false)
        .timeout(Duration::from_secs(10)))
}

/// A server started by [`start`].
#[derive(Debug)]
pub struct Running {
    /// The bound gRPC address.
    pub grpc_addr: SocketAddr,
    /// The bound metrics address, when metrics are enabled.
    pub metrics_addr: Option<SocketAddr>,
    /// The server's counters.
    pub metrics: Arc<Metrics>,
    shutdown: Option<oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<Result<(), ServeError>>,
}

impl Running {
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

/// Binds the listeners and starts serving in the background on the current runtime.
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
    let slots = args
        .max_concurrent_evaluations
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .max(1);

    let address = normalize_address(&args.address);
    let listener = TcpListener::bind(address.as_str())
        .await
        .map_err(|e| err(format!("cannot listen on {address}: {e}")))?;
    let grpc_addr = listener
        .local_addr()
        .map_err(|e| err(format!("cannot read the listen address: {e}")))?;

    let metrics = Arc::new(Metrics::new());
    let (stop_tx, stop_rx) = oneshot::channel::<()>();
    let (metrics_stop_tx, metrics_stop_rx) = oneshot::channel::<()>();
    let metrics_addr = if args.metrics_address.is_empty() {
        None
    } else {
        let (l, addr) = metrics::bind(&args.metrics_address).await.map_err(|e| {
            err(format!(
                "cannot listen for metrics on {}: {e}",
                args.metrics_address
            ))
        })?;
        tokio::spawn(metrics::serve_metrics(l, Arc::clone(&metrics), async {
            let _ = metrics_stop_rx.await;
        }));
        Some(addr)
    };

    let shared = Arc::new(Shared {
        metrics: Arc::clone(&metrics),
        slots: Arc::new(Semaphore::new(slots)),
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
        builder = builder
            .tls_config(tls)
            .map_err(|e| err(format!("invalid TLS configuration: {e}")))?;
    }
    let router = builder
        .add_service(health_svc)
        .add_service(reflection_v1)
        .add_service(reflection_v1alpha)
        .add_service(InterceptedService::new(v1svc, service::stamp))
        .add_service(InterceptedService::new(v1beta1svc, service::stamp));

    tracing::info!(
        address = %grpc_addr,
        metrics_address = metrics_addr.map(|a| a.to_string()).unwrap_or_default(),
        tls = !args.insecure,
        max_concurrent_evaluations = slots,
        max_recv_message_bytes = max_recv,
        "fn-hcl listening"
    );
    let task = tokio::spawn(async move {
        let signal = async move {
            let _ = stop_rx.await;
            health.set_not_serving::<V1Server<FunctionService>>().await;
            health
                .set_not_serving::<V1beta1Server<FunctionService>>()
                .await;
            health
                .set_service_status("", tonic_health::ServingStatus::NotServing)
                .await;
        };
        // TCP_NODELAY: with Nagle's algorithm on, a small response waits for the client's
        // delayed ACK (~40 ms on Linux); `fn-hcl loadgen` measured p50 48 ms for a 10 µs call.
        let r = router
            .serve_with_incoming_shutdown(
                TcpIncoming::from(listener).with_nodelay(Some(true)),
                signal,
            )
            .await
            .map_err(|e| err(format!("gRPC server failed: {e}")));
        let _ = metrics_stop_tx.send(());
        r
    });
    Ok(Running {
        grpc_addr,
        metrics_addr,
        metrics,
        shutdown: Some(stop_tx),
        task,
    })
}

/// Sets up JSON logs on stderr (debug level with `debug`, else `RUST_LOG` or info).
pub fn init_logging(debug: bool) {
    let filter = if debug {
        tracing_subscriber::EnvFilter::new("debug,h2=info,hyper=info,tower=info,rustls=info")
    } else {
        tracing_subscriber::EnvFilter::try_from_default_env()
            .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"))
    };
    let _ = tracing_subscriber::fmt()
        .json()
        .with_current_span(false)
        .with_span_list(false)
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
}

/// Runs `fn-hcl serve` until SIGTERM or SIGINT; `Ok` once the server has stopped.
pub fn serve(args: ServeArgs) -> Result<(), ServeError> {
    init_logging(args.debug);
    // Create the program cache now, so its counters are on the metrics endpoint from the
    // first scrape.
    let _ = crate::handler::program_cache();
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
    runtime.shutdown_timeout(Duration::from_secs(1));
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
    fn durations() {
        assert_eq!(parse_duration("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("1.5"), Ok(Duration::from_millis(1500)));
        assert!(parse_duration("soon").is_err());
        assert!(parse_duration("3d").is_err());
        assert!(parse_duration("1e400s").is_err());
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
        assert!(e.0.contains("/nonexistent-fn-hcl-certs/tls.crt"), "{e}");
    }
}
