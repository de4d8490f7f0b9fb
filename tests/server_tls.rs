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
    c.run_function(request("tls", "x = 1"))
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
