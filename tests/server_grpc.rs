//! The function server in-process over plaintext gRPC on loopback: both protocol versions,
//! reflection, health, panics, deadlines, size limits, hostile clients and metrics.

mod server_support;

use std::time::Duration;

use fn_hcl::protocol::proto::{self, v1beta1};
use fn_hcl::server::metrics::ErrorKind;
use server_support::*;
use tokio::io::AsyncWriteExt;

const PROGRAM: &str = "-- main.hcl --\nresource bucket {\n  body = {\n    apiVersion = \"s3.aws.upbound.io/v1beta1\"\n    kind = \"Bucket\"\n  }\n}\n";

#[tokio::test]
async fn insecure_v1_and_v1beta1_answer_alike() {
    let srv = start(&insecure_args()).await;
    let mut c = client(srv.addr()).await;
    let req = request("tag-1", PROGRAM);
    let rsp = call(&mut c, req.clone()).await.expect("v1 call");
    assert_eq!(rsp.meta.as_ref().map(|m| m.tag.as_str()), Some("tag-1"));
    assert!(
        !rsp.results.is_empty(),
        "a response always carries a result"
    );

    let channel = tonic::transport::Endpoint::from_shared(format!("http://{}", srv.addr()))
        .expect("endpoint")
        .connect()
        .await
        .expect("connect");
    let mut beta =
        v1beta1::function_runner_service_client::FunctionRunnerServiceClient::new(channel);
    let beta_req: v1beta1::RunFunctionRequest = proto::transcode(&req).expect("transcode");
    let beta_rsp = beta
        .run_function(beta_req)
        .await
        .expect("v1beta1 call")
        .into_inner();
    let as_v1: proto::v1::RunFunctionResponse =
        proto::transcode(&beta_rsp).expect("transcode back");
    assert_eq!(as_v1, rsp);
    assert_eq!(
        srv.metrics
            .requests(fn_hcl::server::metrics::ApiVersion::V1),
        1
    );
    assert_eq!(
        srv.metrics
            .requests(fn_hcl::server::metrics::ApiVersion::V1beta1),
        1
    );
    srv.shutdown(Duration::from_secs(5))
        .await
        .expect("shutdown");
}

#[tokio::test]
async fn reflection_lists_the_services_and_health_is_serving() {
    use tonic_reflection::pb::v1::ServerReflectionRequest;
    use tonic_reflection::pb::v1::server_reflection_client::ServerReflectionClient;
    use tonic_reflection::pb::v1::server_reflection_request::MessageRequest;
    use tonic_reflection::pb::v1::server_reflection_response::MessageResponse;

    let srv = start(&insecure_args()).await;
    let url = format!("http://{}", srv.addr());
    let channel = tonic::transport::Endpoint::from_shared(url)
        .expect("endpoint")
        .connect()
        .await
        .expect("connect");
    let mut refl = ServerReflectionClient::new(channel.clone());
    let outbound = tokio_stream_once(ServerReflectionRequest {
        host: String::new(),
        message_request: Some(MessageRequest::ListServices(String::new())),
    });
    let mut inbound = refl
        .server_reflection_info(outbound)
        .await
        .expect("reflection call")
        .into_inner();
    let msg = inbound
        .message()
        .await
        .expect("message")
        .expect("one response");
    let Some(MessageResponse::ListServicesResponse(list)) = msg.message_response else {
        panic!("unexpected reflection answer: {msg:?}");
    };
    let names: Vec<String> = list.service.into_iter().map(|s| s.name).collect();
    for want in [
        "apiextensions.fn.proto.v1.FunctionRunnerService",
        "apiextensions.fn.proto.v1beta1.FunctionRunnerService",
        "grpc.health.v1.Health",
    ] {
        assert!(
            names.iter().any(|n| n == want),
            "{want} missing from {names:?}"
        );
    }

    let mut health = tonic_health::pb::health_client::HealthClient::new(channel);
    for service in ["", "apiextensions.fn.proto.v1.FunctionRunnerService"] {
        let status = health
            .check(tonic_health::pb::HealthCheckRequest {
                service: service.into(),
            })
            .await
            .expect("health check")
            .into_inner()
            .status;
        assert_eq!(
            status,
            tonic_health::pb::health_check_response::ServingStatus::Serving as i32,
            "service {service:?}"
        );
    }
    srv.shutdown(Duration::from_secs(5))
        .await
        .expect("shutdown");
}

/// A one-message request stream for the reflection call.
fn tokio_stream_once<T: Send + 'static>(
    item: T,
) -> impl tonic::codegen::tokio_stream::Stream<Item = T> + Send + 'static {
    tonic::codegen::tokio_stream::iter(vec![item])
}

#[tokio::test]
async fn a_panic_is_a_fatal_result_and_the_next_call_succeeds() {
    let srv = start(&insecure_args()).await;
    let mut c = client(srv.addr()).await;
    let rsp = call(
        &mut c,
        request(fn_hcl::server::service::TEST_PANIC_TAG, PROGRAM),
    )
    .await
    .expect("a panic is answered, not a transport error");
    let msg = fatal_message(&rsp).expect("fatal result");
    assert!(msg.contains("internal error"), "{msg}");
    assert_eq!(srv.metrics.errors(ErrorKind::Panic), 1);
    let next = call(&mut c, request("after-panic", PROGRAM))
        .await
        .expect("server still serving");
    assert_eq!(next.meta.map(|m| m.tag), Some("after-panic".into()));
    srv.shutdown(Duration::from_secs(5))
        .await
        .expect("shutdown");
}

#[tokio::test]
async fn an_expired_deadline_is_deadline_exceeded() {
    let srv = start(&insecure_args()).await;
    let mut c = client(srv.addr()).await;
    // The handler sleeps far longer than the deadline: an error, not the answer.
    let mut req = tonic::Request::new(request("fn-hcl-test:sleep-ms=4000", PROGRAM));
    req.set_timeout(Duration::from_millis(100));
    let err = c.run_function(req).await.expect_err("deadline");
    // The server answers DEADLINE_EXCEEDED just before the deadline; the tonic client runs
    // its own timer on the same deadline and may report first ("Timeout expired").
    assert!(
        matches!(
            err.code(),
            tonic::Code::DeadlineExceeded | tonic::Code::Cancelled
        ),
        "{err:?}"
    );
    // That the server itself gives up (DEADLINE_EXCEEDED, counted in its metrics) is
    // checked without a racing client timer by the service's unit test
    // (`server::service::tests`); here, on a loaded machine, either timer may fire first.
    srv.shutdown(Duration::from_secs(5))
        .await
        .expect("shutdown");
}

#[tokio::test]
async fn a_50_mb_request_is_refused_by_the_size_limit() {
    let srv = start(&insecure_args()).await;
    let mut c = client(srv.addr()).await;
    let big = "x".repeat(50 * 1024 * 1024);
    let err = call(&mut c, request("big", &big))
        .await
        .expect_err("refused");
    // As gRPC's own servers answer an oversize message (tonic says OUT_OF_RANGE).
    assert_eq!(err.code(), tonic::Code::ResourceExhausted, "{err:?}");
    assert!(err.message().contains("too large"), "{err:?}");
    assert!(
        err.message().contains("the limit is: 33554432 bytes"),
        "{err:?}"
    );
    // A fleet-sized request (a thousand observed resources is about 9 MB) fits the default.
    let mut c = client(srv.addr()).await;
    let fleet = format!("{PROGRAM}\n# {}\n", "x".repeat(9 * 1024 * 1024));
    call(&mut c, request("fleet-sized", &fleet))
        .await
        .expect("a 9 MB request is served");
    // The server is unharmed.
    let mut c = client(srv.addr()).await;
    call(&mut c, request("small", PROGRAM))
        .await
        .expect("small call");
    srv.shutdown(Duration::from_secs(5))
        .await
        .expect("shutdown");
}

#[tokio::test]
async fn garbage_and_vanishing_clients_do_not_take_the_server_down() {
    let srv = start(&insecure_args()).await;
    // Garbage bytes, a truncated HTTP/2 preface, and a preface followed by garbage.
    let payloads: [&[u8]; 3] = [
        b"\x16\x03\x01\x00\xff garbage \x00\x01\x02",
        b"PRI * HTTP/2.0\r\n\r\nSM",
        b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x12\x04\x00\x00\x00\x00\x00garbagegarbage",
    ];
    for p in payloads {
        let mut s = tokio::net::TcpStream::connect(srv.addr())
            .await
            .expect("connect");
        let _ = s.write_all(p).await;
        drop(s);
    }
    // A client that gives up mid-call (its evaluation is still running).
    let mut c = client(srv.addr()).await;
    let abandoned = tokio::time::timeout(
        Duration::from_millis(100),
        call(&mut c, request("fn-hcl-test:sleep-ms=300", PROGRAM)),
    )
    .await;
    assert!(
        abandoned.is_err(),
        "the call should still have been running"
    );
    drop(c);

    let mut c = client(srv.addr()).await;
    let rsp = call(&mut c, request("still-alive", PROGRAM))
        .await
        .expect("server alive");
    assert_eq!(rsp.meta.map(|m| m.tag), Some("still-alive".into()));
    // The abandoned evaluation finishes and releases its slot.
    tokio::time::sleep(Duration::from_millis(400)).await;
    let text = http_get(srv.metrics_addr.expect("metrics"), "/metrics").await;
    assert_eq!(
        sample(&text, "fnhcl_evaluations_in_flight"),
        Some(0.0),
        "{text}"
    );
    srv.shutdown(Duration::from_secs(5))
        .await
        .expect("shutdown");
}

#[tokio::test]
async fn the_metrics_endpoint_serves_the_counters() {
    let srv = start(&insecure_args()).await;
    let mut c = client(srv.addr()).await;
    let mut fatal_answers = 0.0;
    for i in 0..3 {
        let rsp = call(&mut c, request(&format!("m{i}"), PROGRAM))
            .await
            .expect("call");
        if fatal_message(&rsp).is_some() {
            fatal_answers += 1.0;
        }
    }
    let rsp = call(
        &mut c,
        request(fn_hcl::server::service::TEST_PANIC_TAG, PROGRAM),
    )
    .await
    .expect("panic call answered");
    assert!(fatal_message(&rsp).is_some());
    fatal_answers += 1.0;
    let addr = srv.metrics_addr.expect("metrics enabled");
    let text = http_get(addr, "/metrics").await;
    assert!(text.starts_with("HTTP/1.1 200 OK\r\n"), "{text}");
    assert!(
        text.to_ascii_lowercase()
            .contains("content-type: text/plain; version=0.0.4"),
        "{text}"
    );
    assert_eq!(
        sample(&text, "fnhcl_requests_total{version=\"v1\"}"),
        Some(4.0)
    );
    assert_eq!(
        sample(&text, "fnhcl_requests_total{version=\"v1beta1\"}"),
        Some(0.0)
    );
    assert_eq!(
        sample(&text, "fnhcl_errors_total{kind=\"panic\"}"),
        Some(1.0)
    );
    // Every answer with a Fatal result counts as an error (the panic's included).
    assert_eq!(
        sample(&text, "fnhcl_errors_total{kind=\"fatal\"}"),
        Some(fatal_answers)
    );
    assert_eq!(
        sample(&text, "fnhcl_evaluation_duration_seconds_count"),
        Some(4.0)
    );
    assert_eq!(sample(&text, "fnhcl_evaluations_in_flight"), Some(0.0));
    // The Go SDK's series: go-grpc-middleware's, with Go's code names, and the process's.
    let v1 = "grpc_method=\"RunFunction\",grpc_service=\"apiextensions.fn.proto.v1.FunctionRunnerService\",grpc_type=\"unary\"";
    assert_eq!(
        sample(&text, &format!("grpc_server_started_total{{{v1}}}")),
        Some(4.0)
    );
    assert_eq!(
        sample(
            &text,
            &format!("grpc_server_handled_total{{grpc_code=\"OK\",{v1}}}")
        ),
        Some(4.0)
    );
    assert_eq!(
        sample(&text, &format!("grpc_server_msg_received_total{{{v1}}}")),
        Some(4.0)
    );
    assert_eq!(
        sample(&text, &format!("grpc_server_msg_sent_total{{{v1}}}")),
        Some(4.0)
    );
    assert!(sample(&text, "process_resident_memory_bytes").is_some_and(|v| v > 0.0));
    assert!(sample(&text, "process_cpu_seconds_total").is_some());
    // The program cache of the process, compiled on the first call.
    assert!(sample(&text, "fnhcl_cache_compiles_total").is_some_and(|v| v >= 1.0));
    assert!(sample(&text, "fnhcl_cache_entries").is_some_and(|v| v >= 1.0));
    // The body cache: a composite long enough to be remembered, sent twice, is found the
    // second time (the counters are the process's: other tests only add to them).
    let scan_hits = "fnhcl_body_cache_hits_total{cache=\"scan\"}";
    let before = sample(&text, scan_hits).expect("body cache series");
    let mut big = request("body-cache", PROGRAM);
    if let Some(c) = big
        .observed
        .as_mut()
        .and_then(|o| o.composite.as_mut())
        .and_then(|r| r.resource.as_mut())
    {
        c.fields.insert("padding".into(), string(&"x".repeat(300)));
    }
    for _ in 0..2 {
        call(&mut c, big.clone()).await.expect("call");
    }
    let text = http_get(addr, "/metrics").await;
    assert!(
        sample(&text, scan_hits).is_some_and(|v| v >= before + 1.0),
        "{text}"
    );
    assert_eq!(
        sample(&text, "fnhcl_body_cache_max_bytes"),
        Some((32 << 20) as f64)
    );
    let not_found = http_get(addr, "/nope").await;
    assert!(not_found.starts_with("HTTP/1.1 404"), "{not_found}");
    let wrong_method = http_request(addr, "POST", "/metrics").await;
    assert!(wrong_method.starts_with("HTTP/1.1 405"), "{wrong_method}");
    srv.shutdown(Duration::from_secs(5))
        .await
        .expect("shutdown");
}
