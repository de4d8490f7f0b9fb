//! `fn-hcl loadgen`: drives a running `fn-hcl serve --insecure` over loopback with N
//! concurrent gRPC clients (one HTTP/2 connection each) for a bounded time, and prints
//! throughput, latency percentiles, errors and the server's peak memory and CPU use.
//!
//! Only loopback addresses are accepted: this is a benchmark of one machine's server, not
//! a tool to load anyone else's. Every call has a deadline and the run stops by itself.

use crate::protocol::proto::v1;
use crate::protocol::proto::v1::function_runner_service_client::FunctionRunnerServiceClient;
use crate::protocol::response::Severity;
use clap::Args;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

/// Longest run accepted.
pub const MAX_DURATION: Duration = Duration::from_secs(600);
/// Most concurrent connections accepted.
pub const MAX_CONNECTIONS: usize = 1024;
/// Deadline of one call.
const CALL_TIMEOUT: Duration = Duration::from_secs(10);

/// Flags of `fn-hcl loadgen`.
#[derive(Args, Debug, Clone)]
pub struct LoadgenArgs {
    /// The server's gRPC address; loopback only (e.g. `127.0.0.1:9443`).
    #[arg(long)]
    pub address: String,
    /// The RunFunctionRequest sent on every call (YAML or protojson JSON).
    #[arg(long, value_name = "FILE")]
    pub request: String,
    /// Concurrent clients, each with its own connection and one call in flight.
    #[arg(long, default_value_t = 4)]
    pub connections: usize,
    /// How long to send calls, e.g. `30s` (at most 10m).
    #[arg(long, default_value = "30s", value_parser = crate::server::parse_duration)]
    pub duration: Duration,
    /// The server's process id, to report its peak RSS and CPU use (Linux /proc).
    #[arg(long, value_name = "PID")]
    pub server_pid: Option<u32>,
}

/// What a run measured.
#[derive(Clone, Debug, Default)]
pub struct Summary {
    pub connections: usize,
    pub elapsed: Duration,
    /// Latencies of the successful calls, sorted.
    pub latencies: Vec<Duration>,
    /// Calls that failed (gRPC error or deadline).
    pub errors: u64,
    /// The first error seen, for the report.
    pub first_error: Option<String>,
    /// Successful calls whose response carries a Fatal result.
    pub fatal: u64,
    /// The server's VmHWM (peak resident set), in KiB.
    pub server_peak_rss_kib: Option<u64>,
    /// The server's CPU time during the run, in seconds.
    pub server_cpu_secs: Option<f64>,
}

impl Summary {
    /// The latency at quantile `q` (0..=1) of the successful calls.
    pub fn percentile(&self, q: f64) -> Option<Duration> {
        if self.latencies.is_empty() {
            return None;
        }
        let rank = (q * self.latencies.len() as f64).ceil() as usize;
        let i = rank.clamp(1, self.latencies.len()) - 1;
        self.latencies.get(i).copied()
    }

    /// Successful calls per second.
    pub fn rate(&self) -> f64 {
        let secs = self.elapsed.as_secs_f64();
        if secs > 0.0 {
            self.latencies.len() as f64 / secs
        } else {
            0.0
        }
    }
}

impl std::fmt::Display for Summary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ms = |d: Option<Duration>| match d {
            Some(d) => format!("{:.3} ms", d.as_secs_f64() * 1e3),
            None => "-".to_string(),
        };
        writeln!(
            f,
            "connections   {} for {:.1}s",
            self.connections,
            self.elapsed.as_secs_f64()
        )?;
        writeln!(
            f,
            "requests      {} ({:.1}/s)",
            self.latencies.len(),
            self.rate()
        )?;
        writeln!(f, "errors        {}", self.errors)?;
        if let Some(e) = &self.first_error {
            writeln!(f, "first error   {e}")?;
        }
        writeln!(f, "fatal results {}", self.fatal)?;
        for (label, q) in [("p50", 0.5), ("p90", 0.9), ("p99", 0.99), ("p99.9", 0.999)] {
            writeln!(f, "latency {label:<6}{}", ms(self.percentile(q)))?;
        }
        writeln!(f, "latency max   {}", ms(self.latencies.last().copied()))?;
        if let Some(kib) = self.server_peak_rss_kib {
            writeln!(f, "server peak RSS (VmHWM) {:.1} MiB", kib as f64 / 1024.0)?;
        }
        if let Some(cpu) = self.server_cpu_secs {
            let secs = self.elapsed.as_secs_f64().max(1e-9);
            writeln!(f, "server CPU    {cpu:.1} s ({:.2} cores busy)", cpu / secs)?;
        }
        Ok(())
    }
}

/// Checks that `address` is a loopback socket address.
pub fn loopback_address(address: &str) -> Result<SocketAddr, String> {
    let addr: SocketAddr = address.parse().map_err(|_| {
        format!("invalid address {address:?}: expected IP:PORT, e.g. 127.0.0.1:9443")
    })?;
    if !addr.ip().is_loopback() {
        return Err(format!(
            "refusing to load {addr}: loadgen drives servers on this machine's loopback only"
        ));
    }
    Ok(addr)
}

/// A process's peak resident set (VmHWM) in KiB, from `/proc/PID/status`.
pub fn peak_rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    parse_vm_hwm(&status)
}

fn parse_vm_hwm(status: &str) -> Option<u64> {
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|rest| rest.trim().strip_suffix("kB"))
        .and_then(|n| n.trim().parse().ok())
}

/// A process's user + system CPU time in seconds, from `/proc/PID/stat`.
pub fn cpu_secs(pid: u32) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_cpu_ticks(&stat).map(|t| t as f64 / 100.0)
}

/// utime + stime (fields 14 and 15) of a `/proc/PID/stat` line, in clock ticks (USER_HZ,
/// 100 on Linux). The command name (field 2) may contain spaces, so count after its `)`.
fn parse_cpu_ticks(stat: &str) -> Option<u64> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // `rest` starts at field 3 (state): utime is field 14, i.e. index 11 here.
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    Some(utime + stime)
}

/// `fn-hcl loadgen`: validate the flags, run, and return the report to print.
pub fn run(args: &LoadgenArgs) -> Result<String, String> {
    let addr = loopback_address(&args.address)?;
    if args.connections == 0 || args.connections > MAX_CONNECTIONS {
        return Err(format!("--connections must be 1..={MAX_CONNECTIONS}"));
    }
    if args.duration.is_zero() || args.duration > MAX_DURATION {
        return Err(format!(
            "--duration must be more than 0 and at most {}s",
            MAX_DURATION.as_secs()
        ));
    }
    let req = crate::cli::read_request(&args.request)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the runtime: {e}"))?;
    let summary = runtime.block_on(drive(
        addr,
        req,
        args.connections,
        args.duration,
        args.server_pid,
    ))?;
    Ok(summary.to_string())
}

type Client = FunctionRunnerServiceClient<tonic::transport::Channel>;

async fn connect(addr: SocketAddr) -> Result<Client, String> {
    let channel = tonic::transport::Endpoint::from_shared(format!("http://{addr}"))
        .map_err(|e| e.to_string())?
        .connect_timeout(Duration::from_secs(5))
        .timeout(CALL_TIMEOUT)
        .tcp_nodelay(true)
        .connect()
        .await
        .map_err(|e| format!("cannot connect to {addr}: {e}"))?;
    Ok(FunctionRunnerServiceClient::new(channel)
        .max_decoding_message_size(256 << 20)
        .max_encoding_message_size(256 << 20))
}

/// One call; its latency, or why it failed; and whether the response is Fatal.
async fn call(client: &mut Client, req: &v1::RunFunctionRequest) -> Result<bool, String> {
    let rsp = client
        .run_function(req.clone())
        .await
        .map_err(|s| format!("{:?}: {}", s.code(), s.message()))?;
    Ok(rsp
        .get_ref()
        .results
        .iter()
        .any(|r| r.severity == Severity::Fatal as i32))
}

#[derive(Default)]
struct Worker {
    latencies: Vec<Duration>,
    errors: u64,
    fatal: u64,
    first_error: Option<String>,
}

/// Connects `connections` clients, warms the server up with one call, then keeps one call
/// in flight per client until `duration` has passed.
pub async fn drive(
    addr: SocketAddr,
    req: v1::RunFunctionRequest,
    connections: usize,
    duration: Duration,
    server_pid: Option<u32>,
) -> Result<Summary, String> {
    let mut clients = Vec::with_capacity(connections);
    for _ in 0..connections {
        clients.push(connect(addr).await?);
    }
    // One call first, so the program is compiled before the clock starts.
    if let Some(c) = clients.first_mut() {
        call(c, &req)
            .await
            .map_err(|e| format!("the warm-up call failed: {e}"))?;
    }
    let req = std::sync::Arc::new(req);
    let cpu_before = server_pid.and_then(cpu_secs);
    let progress = std::sync::Arc::new(crate::cli::progress::Progress::start(
        "loadgen",
        crate::cli::progress::Total::Time(duration),
    ));
    let start = Instant::now();
    let deadline = start + duration;
    let mut tasks = tokio::task::JoinSet::new();
    for mut client in clients {
        let req = req.clone();
        let progress = progress.clone();
        tasks.spawn(async move {
            let mut w = Worker::default();
            while Instant::now() < deadline {
                let t = Instant::now();
                match call(&mut client, &req).await {
                    Ok(fatal) => {
                        w.latencies.push(t.elapsed());
                        w.fatal += u64::from(fatal);
                        if let Some(c) = progress.counter() {
                            c.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        }
                    }
                    Err(e) => {
                        w.errors += 1;
                        w.first_error.get_or_insert(e);
                    }
                }
            }
            w
        });
    }
    let mut summary = Summary {
        connections,
        ..Summary::default()
    };
    // Every call has a deadline, so the workers end soon after `duration`; the outer
    // timeout is a second guard.
    let joined = tokio::time::timeout(duration + CALL_TIMEOUT + Duration::from_secs(5), async {
        while let Some(r) = tasks.join_next().await {
            match r {
                Ok(w) => {
                    summary.latencies.extend(w.latencies);
                    summary.errors += w.errors;
                    summary.fatal += w.fatal;
                    if summary.first_error.is_none() {
                        summary.first_error = w.first_error;
                    }
                }
                Err(e) => {
                    summary.errors += 1;
                    summary
                        .first_error
                        .get_or_insert(format!("worker failed: {e}"));
                }
            }
        }
    })
    .await;
    summary.elapsed = start.elapsed();
    drop(progress); // erases the status line before the report is printed
    if joined.is_err() {
        tasks.abort_all();
        return Err("clients did not stop in time".to_string());
    }
    summary.latencies.sort_unstable();
    if let Some(pid) = server_pid {
        summary.server_peak_rss_kib = peak_rss_kib(pid);
        summary.server_cpu_secs = match (cpu_before, cpu_secs(pid)) {
            (Some(a), Some(b)) => Some(b - a),
            _ => None,
        };
    }
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_addresses() {
        assert!(loopback_address("127.0.0.1:9443").is_ok());
        assert!(loopback_address("[::1]:9443").is_ok());
        let e = loopback_address("10.0.0.1:9443").unwrap_err();
        assert!(e.contains("loopback only"), "{e}");
        assert!(loopback_address("example.com:9443").is_err());
        assert!(loopback_address(":9443").is_err());
    }

    #[test]
    fn percentiles_by_nearest_rank() {
        let s = Summary {
            latencies: (1..=1000).map(Duration::from_micros).collect(),
            elapsed: Duration::from_secs(2),
            ..Summary::default()
        };
        assert_eq!(s.percentile(0.5), Some(Duration::from_micros(500)));
        assert_eq!(s.percentile(0.99), Some(Duration::from_micros(990)));
        assert_eq!(s.percentile(0.999), Some(Duration::from_micros(999)));
        assert_eq!(s.percentile(1.0), Some(Duration::from_micros(1000)));
        assert_eq!(s.rate(), 500.0);
        assert_eq!(Summary::default().percentile(0.5), None);
        let text = s.to_string();
        assert!(text.contains("requests      1000 (500.0/s)"), "{text}");
        assert!(text.contains("latency p99.9 0.999 ms"), "{text}");
    }

    #[test]
    fn proc_parsing() {
        let status = "Name:\tfn-hcl\nVmPeak:\t  100 kB\nVmHWM:\t   34816 kB\nVmRSS:\t 30000 kB\n";
        assert_eq!(parse_vm_hwm(status), Some(34816));
        assert_eq!(parse_vm_hwm("Name: x\n"), None);
        let stat = "1234 (fn hcl (x)) S 1 2 3 4 5 6 7 8 9 10 250 50 0 0 20 0 4 0 100";
        assert_eq!(parse_cpu_ticks(stat), Some(300));
        assert_eq!(parse_cpu_ticks("garbage"), None);
        // This process exists and has a peak RSS.
        assert!(peak_rss_kib(std::process::id()).is_some_and(|k| k > 0));
        assert!(cpu_secs(std::process::id()).is_some());
    }

    #[test]
    fn bounded_flags() {
        let args = |connections, duration| LoadgenArgs {
            address: "127.0.0.1:1".into(),
            request: "/nonexistent".into(),
            connections,
            duration,
            server_pid: None,
        };
        assert!(run(&args(0, Duration::from_secs(1))).is_err());
        assert!(run(&args(1, Duration::from_secs(3600))).is_err());
        let e = run(&args(1, Duration::from_secs(1))).unwrap_err();
        assert!(e.contains("cannot read /nonexistent"), "{e}");
    }

    #[tokio::test]
    async fn drives_a_server_on_loopback() {
        let args = crate::server::ServeArgs {
            address: "127.0.0.1:0".into(),
            insecure: true,
            metrics_address: String::new(),
            ..crate::server::ServeArgs::default()
        };
        let running = crate::server::start(&args).await.unwrap();
        let text = r#"{"observed": {"composite": {"resource": {"apiVersion": "x/v1", "kind": "X",
            "metadata": {"name": "demo"}}}},
          "input": {"apiVersion": "function-hcl/v1", "kind": "HclInput", "source": "Inline",
            "hcl": "-- main.hcl --\nresource a {\n  body = { apiVersion = \"v1\", kind = \"ConfigMap\", metadata = { name = req.composite.metadata.name } }\n}\n"}}"#;
        let req = crate::protocol::protojson::request_from_text(text).unwrap();
        let s = drive(
            running.addr(),
            req,
            2,
            Duration::from_millis(300),
            Some(std::process::id()),
        )
        .await
        .unwrap();
        assert_eq!(s.errors, 0, "{s}");
        assert_eq!(s.fatal, 0, "{s}");
        assert!(!s.latencies.is_empty());
        assert!(s.server_peak_rss_kib.is_some());
        running.shutdown(Duration::from_secs(1)).await.unwrap();
    }
}
