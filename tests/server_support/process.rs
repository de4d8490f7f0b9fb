//! A `fn-hcl serve` child process on loopback ports, for the tests of the built binary (or
//! of the packaged image, started with `buildah run`).

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_fn-hcl");

/// A running `fn-hcl serve` with its stderr collected line by line and the addresses it
/// logged when it started listening.
pub struct Proc {
    pub child: Child,
    pub lines: Arc<Mutex<Vec<String>>>,
    reader: Option<std::thread::JoinHandle<()>>,
    pub grpc: SocketAddr,
    pub metrics: SocketAddr,
}

impl Proc {
    /// `fn-hcl serve --insecure` on ports the kernel picks, with `extra` flags.
    pub fn spawn(extra: &[&str]) -> Proc {
        Proc::start(
            Command::new(BIN)
                .args([
                    "serve",
                    "--insecure",
                    "--address",
                    "127.0.0.1:0",
                    "--metrics-address",
                    "127.0.0.1:0",
                    "--grace-period",
                    "10s",
                ])
                .args(extra)
                .env_remove("TLS_SERVER_CERTS_DIR")
                .env_remove("RUST_LOG"),
        )
    }

    /// Starts `cmd`, a command that runs `fn-hcl serve`, and waits (30 s at most) for its
    /// "fn-hcl listening" log line.
    // The child is waited for by `Proc`'s Drop, or killed and waited for before panicking.
    #[allow(clippy::zombie_processes)]
    pub fn start(cmd: &mut Command) -> Proc {
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn fn-hcl serve");
        let stderr = child.stderr.take().expect("stderr");
        let lines = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&lines);
        let reader = std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                sink.lock().expect("lock").push(line);
            }
        });
        let started = Instant::now();
        loop {
            let found = lines.lock().expect("lock").iter().find_map(|l| {
                let j: serde_json::Value = serde_json::from_str(l).ok()?;
                let f = &j;
                (f.get("msg")?.as_str()? == "fn-hcl listening").then(|| {
                    let a = f.get("address")?.as_str()?.parse().ok()?;
                    let m = f.get("metrics_address")?.as_str()?.parse().ok()?;
                    Some((a, m))
                })?
            });
            if let Some((grpc, metrics)) = found {
                return Proc {
                    child,
                    lines,
                    reader: Some(reader),
                    grpc,
                    metrics,
                };
            }
            if started.elapsed() > Duration::from_secs(30) {
                let _ = child.kill();
                let _ = child.wait();
                panic!("server did not start: {:?}", lines.lock().expect("lock"));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn signal(&self, sig: &str) {
        let ok = Command::new("kill")
            .args([sig, &self.child.id().to_string()])
            .status()
            .expect("kill")
            .success();
        assert!(ok, "kill {sig} failed");
    }

    /// Waits for the exit; the exit status and everything written to stderr.
    pub fn wait(mut self, limit: Duration) -> (std::process::ExitStatus, Vec<String>) {
        let started = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                if let Some(r) = self.reader.take() {
                    let _ = r.join();
                }
                let lines = self.lines.lock().expect("lock").clone();
                return (status, lines);
            }
            if started.elapsed() > limit {
                let _ = self.child.kill();
                panic!(
                    "server did not exit: {:?}",
                    self.lines.lock().expect("lock")
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}
