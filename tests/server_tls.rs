//! mTLS with certificates generated here: a client with a certificate from the server's CA
//! is served; a client without a certificate and one signed by another CA are refused.

mod server_support;

use std::path::Path;
use std::time::Duration;

use fn_hcl::protocol::proto::v1;
use fn_hcl::server::ServeArgs;
use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, DnType, IsCa, KeyPair};
use server_support::*;
use tokio::io::AsyncWriteExt;
use tonic::transport::{Certificate, ClientTlsConfig, Endpoint, Identity};

struct Pki {
    ca_pem: String,
    issuer: CertifiedIssuer<'static, KeyPair>,
}

fn ca(name: &str) -> Pki {
    let mut params = CertificateParams::new(Vec::<String>::new()).expect("params");
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.distinguished_name.push(DnType::CommonName, name);
    let issuer =
        CertifiedIssuer::self_signed(params, KeyPair::generate().expect("key")).expect("ca");
    Pki {
        ca_pem: issuer.pem(),
        issuer,
    }
}

/// A certificate (PEM) and its key (PEM) for `names`, signed by `pki`.
fn leaf(pki: &Pki, names: &[&str]) -> (String, String) {
    let key = KeyPair::generate().expect("key");
    let names: Vec<String> = names.iter().map(|s| s.to_string()).collect();
    let mut params = CertificateParams::new(names).expect("params");
    params.distinguished_name.push(DnType::CommonName, "leaf");
    let cert = params.signed_by(&key, &pki.issuer).expect("sign");
    (cert.pem(), key.serialize_pem())
}

fn write_server_dir(dir: &Path, pki: &Pki) {
    let (cert, key) = leaf(pki, &["localhost", "127.0.0.1"]);
    std::fs::create_dir_all(dir).expect("mkdir");
    std::fs::write(dir.join("tls.crt"), cert).expect("write");
    std::fs::write(dir.join("tls.key"), key).expect("write");
    std::fs::write(dir.join("ca.crt"), &pki.ca_pem).expect("write");
}

async fn tls_call(
    addr: std::net::SocketAddr,
    server_ca: &str,
    identity: Option<(String, String)>,
) -> Result<v1::RunFunctionResponse, String> {
    tls_call_tagged(addr, server_ca, identity, "tls").await
}

async fn tls_call_tagged(
    addr: std::net::SocketAddr,
    server_ca: &str,
    identity: Option<(String, String)>,
    tag: &str,
) -> Result<v1::RunFunctionResponse, String> {
    let mut tls = ClientTlsConfig::new()
        .ca_certificate(Certificate::from_pem(server_ca))
        .domain_name("localhost");
    if let Some((cert, key)) = identity {
        tls = tls.identity(Identity::from_pem(cert, key));
    }
    let endpoint = Endpoint::from_shared(format!("https://{addr}"))
        .map_err(|e| e.to_string())?
        .tls_config(tls)
        .map_err(|e| e.to_string())?
        .connect_timeout(Duration::from_secs(5));
    let channel = endpoint
        .connect()
        .await
        .map_err(|e| format!("connect: {e:?}"))?;
    let mut c = v1::function_runner_service_client::FunctionRunnerServiceClient::new(channel);
    c.run_function(request(tag, "x = 1"))
        .await
        .map(|r| r.into_inner())
        .map_err(|e| format!("call: {e:?}"))
}

#[tokio::test]
async fn mutual_tls_accepts_only_clients_of_its_ca() {
    let pki = ca("fn-hcl test ca");
    let other = ca("some other ca");
    let dir = std::env::temp_dir().join(format!("fn-hcl-tls-{}", std::process::id()));
    write_server_dir(&dir, &pki);
    let args = ServeArgs {
        address: "127.0.0.1:0".into(),
        metrics_address: String::new(),
        tls_server_certs_dir: Some(dir.clone()),
        ..ServeArgs::default()
    };
    let srv = start(&args).await;

    let good = tls_call(srv.addr(), &pki.ca_pem, Some(leaf(&pki, &["client"]))).await;
    let rsp = good.expect("a client with a certificate from the CA is served");
    assert_eq!(rsp.meta.map(|m| m.tag), Some("tls".into()));

    let anonymous = tls_call(srv.addr(), &pki.ca_pem, None).await;
    let refused = anonymous.expect_err("a client without a certificate was served");
    assert!(refused.contains("CertificateRequired"), "{refused}");

    let stranger = tls_call(srv.addr(), &pki.ca_pem, Some(leaf(&other, &["client"]))).await;
    let refused = stranger.expect_err("a client signed by another CA was served");
    assert!(refused.contains("UnknownCA"), "{refused}");

    // Plaintext gRPC and garbage on the TLS port are refused without harm.
    let mut c = v1::function_runner_service_client::FunctionRunnerServiceClient::connect(format!(
        "http://{}",
        srv.addr()
    ))
    .await;
    if let Ok(c) = c.as_mut() {
        assert!(c.run_function(request("plain", "x = 1")).await.is_err());
    }
    let mut s = tokio::net::TcpStream::connect(srv.addr())
        .await
        .expect("connect");
    let _ = s.write_all(b"\x16\x03\x01\x02\x00garbage-handshake").await;
    drop(s);

    let again = tls_call(srv.addr(), &pki.ca_pem, Some(leaf(&pki, &["client"]))).await;
    assert!(again.is_ok(), "{again:?}");
    srv.shutdown(Duration::from_secs(5))
        .await
        .expect("shutdown");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The probes Kubernetes uses are plain HTTP on the metrics port, so they work while gRPC
/// requires client certificates (kubelet's gRPC probe cannot present one): `/healthz`
/// answers while the process runs, `/readyz` only while it takes calls, and turns 503 as
/// soon as a shutdown starts, while the in-flight call still finishes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn probes_work_with_tls_on_and_readiness_drops_when_draining() {
    let pki = ca("fn-hcl probe ca");
    let dir = std::env::temp_dir().join(format!("fn-hcl-tls-probe-{}", std::process::id()));
    write_server_dir(&dir, &pki);
    let args = ServeArgs {
        address: "127.0.0.1:0".into(),
        metrics_address: "127.0.0.1:0".into(),
        tls_server_certs_dir: Some(dir.clone()),
        enable_test_hooks: true,
        ..ServeArgs::default()
    };
    let srv = start(&args).await;
    let probe = srv.metrics_addr.expect("metrics endpoint");
    let healthz = http_get(probe, "/healthz").await;
    assert!(healthz.starts_with("HTTP/1.1 200"), "{healthz}");
    let readyz = http_get(probe, "/readyz").await;
    assert!(readyz.starts_with("HTTP/1.1 200"), "{readyz}");
    assert!(readyz.ends_with("ok\n"), "{readyz}");

    let (addr, ca_pem, id) = (srv.addr(), pki.ca_pem.clone(), leaf(&pki, &["client"]));
    let slow = tokio::spawn(async move {
        tls_call_tagged(addr, &ca_pem, Some(id), "fn-hcl-test:sleep-ms=1000").await
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    let stopping = tokio::spawn(srv.shutdown(Duration::from_secs(10)));
    tokio::time::sleep(Duration::from_millis(200)).await;
    let readyz = http_get(probe, "/readyz").await;
    assert!(readyz.starts_with("HTTP/1.1 503"), "{readyz}");
    assert!(readyz.contains("shutting down"), "{readyz}");
    let healthz = http_get(probe, "/healthz").await;
    assert!(healthz.starts_with("HTTP/1.1 200"), "{healthz}");

    let rsp = slow
        .await
        .expect("task")
        .expect("the in-flight call finishes");
    assert_eq!(
        rsp.meta.map(|m| m.tag),
        Some("fn-hcl-test:sleep-ms=1000".into())
    );
    assert!(
        stopping.await.expect("task").expect("shutdown"),
        "drained in time"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A certificates directory that is wrong in any way stops the server before it listens,
/// with the path of what is wrong.
#[tokio::test]
async fn bad_certificate_directories_are_named() {
    let pki = ca("fn-hcl bad-input ca");
    let base = std::env::temp_dir().join(format!("fn-hcl-tls-bad-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    let case = |name: &str, change: &dyn Fn(&Path)| {
        let dir = base.join(name);
        write_server_dir(&dir, &pki);
        change(&dir);
        dir
    };
    let write = |p: &Path, text: &str| std::fs::write(p, text).expect("write");
    let cases: Vec<(std::path::PathBuf, String)> = vec![
        (
            base.join("missing"),
            format!("{}: No such file", base.join("missing").display()),
        ),
        (
            case("file", &|d| {
                std::fs::remove_dir_all(d).expect("rm");
                write(d, "not a directory");
            }),
            format!("{}: not a directory", base.join("file").display()),
        ),
        (
            case("no-key", &|d| {
                std::fs::remove_file(d.join("tls.key")).expect("rm")
            }),
            format!("cannot read {}", base.join("no-key/tls.key").display()),
        ),
        (
            // Unreadable: a directory where the file should be (root reads any file).
            case("crt-is-dir", &|d| {
                std::fs::remove_file(d.join("tls.crt")).expect("rm");
                std::fs::create_dir(d.join("tls.crt")).expect("mkdir");
            }),
            format!("cannot read {}", base.join("crt-is-dir/tls.crt").display()),
        ),
        (
            case("garbage-crt", &|d| write(&d.join("tls.crt"), "garbage")),
            format!(
                "{}: no PEM certificate",
                base.join("garbage-crt/tls.crt").display()
            ),
        ),
        (
            case("garbage-key", &|d| write(&d.join("tls.key"), "garbage")),
            format!(
                "{}: no usable PEM private key",
                base.join("garbage-key/tls.key").display()
            ),
        ),
        (
            case("garbage-ca", &|d| {
                write(
                    &d.join("ca.crt"),
                    "-----BEGIN CERTIFICATE-----\n!!!\n-----END CERTIFICATE-----\n",
                )
            }),
            format!(
                "{}: not a PEM certificate file",
                base.join("garbage-ca/ca.crt").display()
            ),
        ),
    ];
    for (dir, want) in cases {
        let args = ServeArgs {
            address: "127.0.0.1:0".into(),
            metrics_address: String::new(),
            tls_server_certs_dir: Some(dir.clone()),
            ..ServeArgs::default()
        };
        match fn_hcl::server::start(&args).await {
            Ok(_) => panic!("{} was accepted", dir.display()),
            Err(e) => assert!(
                e.0.contains(&want),
                "{}: {e} (want {want:?})",
                dir.display()
            ),
        }
    }
    let _ = std::fs::remove_dir_all(&base);
}
