//! The built `fn-hcl serve` binary: refusing to start without TLS, graceful shutdown on
//! SIGTERM with calls in flight, and logs that are JSON and never carry secrets.

mod server_support;

use std::process::Command;
use std::time::{Duration, Instant};

use fn_hcl::protocol::proto::v1;
use server_support::process::{BIN, Proc};
use server_support::*;

/// [`request`] with `debug: true` in its input.
fn debug_request(tag: &str, program: &str) -> v1::RunFunctionRequest {
    let mut req = request(tag, program);
    if let Some(input) = req.input.as_mut() {
        input.fields.insert(
            "debug".into(),
            prost_types::Value {
                kind: Some(prost_types::value::Kind::BoolValue(true)),
            },
        );
    }
    req
}

/// How many stderr lines are exactly `marker`.
fn count(lines: &[String], marker: &str) -> usize {
    lines.iter().filter(|l| l.as_str() == marker).count()
}

/// Exactly one request block and one response block, in that order, and one redaction.
fn assert_one_dump(lines: &[String]) {
    let all = lines.join("\n");
    for marker in [
        "## start request ##",
        "## end request ##",
        "## start response ##",
        "## end response ##",
    ] {
        assert_eq!(count(lines, marker), 1, "{marker}:\n{all}");
    }
    let at = |m: &str| lines.iter().position(|l| l == m);
    assert!(
        at("## end request ##") < at("## start response ##"),
        "{all}"
    );
    assert!(!all.contains("<redacted>"), "a second redaction:\n{all}");
}

/// One gRPC call with `debug: true` prints one dump (request and response, each once,
/// secrets redacted); a call without a debug switch prints none.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_call_with_debug_prints_one_dump() {
    let p = Proc::spawn(&[]);
    let mut req = debug_request("dump-tag", "-- main.hcl --\n# dump\n");
    let secret = structure([
        ("apiVersion", string("v1")),
        ("kind", string("Secret")),
        ("metadata", object([("name", string("db"))])),
        ("stringData", object([("token", string("dump-SECRET"))])),
    ]);
    if let Some(obs) = req.observed.as_mut() {
        obs.resources.insert(
            "db-secret".into(),
            v1::Resource {
                resource: Some(secret),
                ..Default::default()
            },
        );
    }
    let mut c = client(p.grpc).await;
    let rsp = call(&mut c, req).await.expect("call");
    assert_eq!(fatal_message(&rsp), None);
    let quiet = request("quiet-tag", "-- main.hcl --\n# no dump\n");
    call(&mut c, quiet).await.expect("call");
    p.signal("-INT");
    let (status, lines) = tokio::task::spawn_blocking(move || p.wait(Duration::from_secs(15)))
        .await
        .expect("wait");
    assert!(status.success(), "{status:?}");
    assert_one_dump(&lines);
    let all = lines.join("\n");
    assert!(!all.contains("dump-SECRET"), "{all}");
    assert!(all.contains("token: REDACTED"), "{all}");
    assert!(all.contains("# crossplane name: db-secret"), "{all}");
}

#[test]
fn refuses_to_start_without_tls_or_insecure() {
    let out = Command::new(BIN)
        .args(["serve", "--address", "127.0.0.1:0", "--metrics-address", ""])
        .env_remove("TLS_SERVER_CERTS_DIR")
        .output()
        .expect("run");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("refusing to serve without TLS"), "{err}");
    assert!(err.contains("--insecure"), "{err}");
    assert!(err.contains("--tls-server-certs-dir"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_lets_in_flight_calls_finish_and_exits_zero() {
    let p = Proc::spawn(&["--enable-test-hooks", "--max-concurrent-evaluations", "4"]);
    let addr = p.grpc;
    let mut calls = Vec::new();
    for i in 0..3 {
        calls.push(tokio::spawn(async move {
            let mut c = client(addr).await;
            let tag = "fn-hcl-test:sleep-ms=800".to_string();
            let r = call(&mut c, request(&tag, &format!("-- main.hcl --\n# {i}\n"))).await;
            (tag, r)
        }));
    }
    // Wait until all three are evaluating.
    let started = Instant::now();
    loop {
        let text = http_get(p.metrics, "/metrics").await;
        if sample(&text, "fnhcl_evaluations_in_flight") == Some(3.0) {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(10), "{text}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    p.signal("-TERM");
    for c in calls {
        let (tag, r) = c.await.expect("task");
        let rsp = r.expect("an in-flight call completes during shutdown");
        assert_eq!(rsp.meta.map(|m| m.tag), Some(tag));
    }
    let (status, lines) = tokio::task::spawn_blocking(move || p.wait(Duration::from_secs(15)))
        .await
        .expect("wait");
    assert!(status.success(), "exit status {status:?}: {lines:?}");
    assert!(
        lines.iter().any(|l| l.contains("received SIGTERM")),
        "{lines:?}"
    );
    assert!(
        lines.iter().any(|l| l.contains("shut down cleanly")),
        "{lines:?}"
    );
    // Nothing listens any more.
    assert!(tokio::net::TcpStream::connect(addr).await.is_err());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn logs_are_json_with_xr_fields_and_never_carry_secrets() {
    const SECRETS: [&str; 5] = [
        "xr-connection-SECRET-1",
        "observed-connection-SECRET-2",
        "secret-data-SECRET-3",
        "string-data-SECRET-4",
        "credential-SECRET-5",
    ];
    use base64::Engine as _;
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);

    let p = Proc::spawn(&["--debug"]);
    let mut req = debug_request("log-tag-123", "-- main.hcl --\n# logs\n");
    let secret_obj = structure([
        ("apiVersion", string("v1")),
        ("kind", string("Secret")),
        ("metadata", object([("name", string("db"))])),
        ("data", object([("password", string(&b64(SECRETS[2])))])),
        ("stringData", object([("token", string(SECRETS[3]))])),
    ]);
    if let Some(obs) = req.observed.as_mut() {
        if let Some(xr) = obs.composite.as_mut() {
            xr.connection_details
                .insert("password".into(), SECRETS[0].as_bytes().to_vec());
        }
        obs.resources.insert(
            "db-secret".into(),
            v1::Resource {
                resource: Some(secret_obj.clone()),
                connection_details: [("pw".to_string(), SECRETS[1].as_bytes().to_vec())].into(),
                ..Default::default()
            },
        );
    }
    req.desired = Some(v1::State {
        composite: Some(v1::Resource {
            connection_details: [("pw".to_string(), SECRETS[0].as_bytes().to_vec())].into(),
            ..Default::default()
        }),
        resources: [(
            "db-secret".to_string(),
            v1::Resource {
                resource: Some(secret_obj),
                ..Default::default()
            },
        )]
        .into(),
    });
    req.credentials.insert(
        "creds".into(),
        v1::Credentials {
            source: Some(v1::credentials::Source::CredentialData(
                v1::CredentialData {
                    data: [("key".to_string(), SECRETS[4].as_bytes().to_vec())].into(),
                },
            )),
        },
    );
    let mut c = client(p.grpc).await;
    let rsp = call(&mut c, req).await.expect("call");
    assert_eq!(rsp.meta.map(|m| m.tag), Some("log-tag-123".into()));
    p.signal("-INT");
    let (status, lines) = tokio::task::spawn_blocking(move || p.wait(Duration::from_secs(15)))
        .await
        .expect("wait");
    assert!(status.success(), "{status:?}");
    let all = lines.join("\n");
    for s in SECRETS {
        assert!(!all.contains(s), "{s} leaked into the logs:\n{all}");
        assert!(
            !all.contains(&b64(s)),
            "{s} (base64) leaked into the logs:\n{all}"
        );
    }
    // The debug dump was printed once (the server's --debug and the input's debug: true
    // are two switches of one dump), with the Secret's values redacted.
    assert_one_dump(&lines);
    assert!(all.contains("password: REDACTED"), "{all}");
    // The request's log line is JSON with the XR's identity and the tag.
    let running = lines
        .iter()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|j| j["msg"] == "Running Function")
        .expect("a Running Function log line");
    // zap's keys, as functions on the Go SDK log: level, ts, caller, msg, then the fields.
    assert!(running["ts"].as_f64().is_some(), "{running}");
    assert!(running["caller"].as_str().is_some(), "{running}");
    let f = &running;
    assert_eq!(f["tag"], "log-tag-123");
    assert_eq!(f["xr_api_version"], "example.com/v1");
    assert_eq!(f["xr_kind"], "XBucket");
    assert_eq!(f["xr_name"], "bucket-1");
    assert_eq!(running["level"], "info");
}

/// Runs `fn-hcl serve` with `args` (and `env`) expecting it to refuse to start: exit code 1,
/// no panic, nothing served; returns stderr.
fn refused(args: &[&str], env: &[(&str, &str)]) -> String {
    let mut cmd = Command::new(BIN);
    cmd.arg("serve")
        .args(args)
        .env_remove("TLS_SERVER_CERTS_DIR")
        .env_remove("RUST_LOG");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("run fn-hcl serve");
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(
        !err.contains("fn-hcl listening"),
        "served before failing: {err}"
    );
    err
}

#[test]
fn a_wrong_tls_server_certs_dir_is_named_and_exits_1() {
    let err = refused(
        &["--address", "127.0.0.1:0", "--metrics-address", ""],
        &[("TLS_SERVER_CERTS_DIR", "/nonexistent/fn-hcl-certs")],
    );
    assert!(err.contains("/nonexistent/fn-hcl-certs"), "{err}");
    assert!(err.contains("TLS_SERVER_CERTS_DIR"), "{err}");
    // An empty TLS_SERVER_CERTS_DIR is no directory at all: the refusal says what to do.
    let err = refused(
        &["--address", "127.0.0.1:0", "--metrics-address", ""],
        &[("TLS_SERVER_CERTS_DIR", "")],
    );
    assert!(err.contains("refusing to serve without TLS"), "{err}");
}

#[test]
fn ports_in_use_are_named_and_exit_1() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = taken.local_addr().expect("addr").port();
    let at = format!("127.0.0.1:{port}");
    let err = refused(
        &["--insecure", "--address", &at, "--metrics-address", ""],
        &[],
    );
    assert!(
        err.contains(&format!("cannot listen for tcp connections on {at}")),
        "{err}"
    );
    let err = refused(
        &[
            "--insecure",
            "--address",
            "127.0.0.1:0",
            "--metrics-address",
            &at,
        ],
        &[],
    );
    assert!(
        err.contains(&format!("cannot listen for metrics on {at}")),
        "{err}"
    );
    drop(taken);
}

#[test]
fn sdk_style_arguments_start_the_server() {
    // What functions built from Crossplane's templates accept (`--tls-certs-dir` is kong's
    // name for TLSCertsDir; --insecure makes it ignored, as in Go).
    let p = Proc::spawn(&[
        "--network=tcp",
        "--debug",
        "--max-recv-message-size=4",
        "--tls-certs-dir=/ignored-with-insecure",
    ]);
    let (status, lines) = {
        p.signal("-TERM");
        p.wait(Duration::from_secs(20))
    };
    assert!(status.success(), "{lines:?}");
}
