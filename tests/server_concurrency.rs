//! 64 concurrent calls with a mix of programs answer exactly as the same calls made one
//! after another; when a program cache is registered with the metrics, each program is
//! compiled exactly once (concurrent first calls included). Its own test binary, so the
//! process-wide cache counters see only these calls.

mod server_support;

use std::time::Duration;

use fn_hcl::server::ServeArgs;
use server_support::*;

const PROGRAMS: usize = 8;
const CALLS: usize = 64;

/// Distinct programs (the marker makes them distinct from any other test's).
fn program(i: usize) -> String {
    format!(
        "-- main.hcl --\n# fn-hcl concurrency test program {i} {pid}\nresource r{i} {{\n  body = {{\n    apiVersion = \"example.com/v1\"\n    kind = \"Thing\"\n    spec = {{ n = {i} * 2, s = \"p-${{req.composite.metadata.name}}\" }}\n  }}\n}}\n",
        pid = std::process::id()
    )
}

fn call_for(n: usize) -> (String, fn_hcl::protocol::proto::v1::RunFunctionRequest) {
    let p = n % PROGRAMS;
    let tag = format!("call-{n}");
    let req = request(&tag, &program(p));
    (tag, req)
}

/// The process-wide program cache's counters (the one the metrics endpoint reports).
fn cache_counters() -> CacheCounters {
    use std::sync::atomic::Ordering::Relaxed;
    let stats = &fn_hcl::handler::program_cache().stats;
    CacheCounters {
        compiles: stats.compiles.load(Relaxed),
        hits: stats.hits.load(Relaxed),
    }
}

#[derive(Clone, Copy, Debug)]
struct CacheCounters {
    compiles: u64,
    hits: u64,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_calls_match_sequential_calls() {
    let args = ServeArgs {
        max_concurrent_evaluations: Some(4),
        ..insecure_args()
    };
    let srv = start(&args).await;
    let before = cache_counters();

    let mut tasks = Vec::with_capacity(CALLS);
    for n in 0..CALLS {
        let addr = srv.addr();
        tasks.push(tokio::spawn(async move {
            let mut c = client(addr).await;
            let (_, req) = call_for(n);
            call(&mut c, req).await
        }));
    }
    let mut concurrent = Vec::with_capacity(CALLS);
    for t in tasks {
        concurrent.push(t.await.expect("task").expect("concurrent call"));
    }
    let after_concurrent = cache_counters();

    let mut c = client(srv.addr()).await;
    for (n, got) in concurrent.iter().enumerate() {
        let (tag, req) = call_for(n);
        let want = call(&mut c, req).await.expect("sequential call");
        assert_eq!(got, &want, "call {n} differs when run concurrently");
        assert_eq!(
            got.meta.as_ref().map(|m| m.tag.as_str()),
            Some(tag.as_str())
        );
    }
    let after_sequential = cache_counters();

    let (b, c, s) = (before, after_concurrent, after_sequential);
    assert_eq!(
        c.compiles - b.compiles,
        PROGRAMS as u64,
        "each program compiles exactly once, even when first called concurrently"
    );
    assert_eq!(
        s.compiles, c.compiles,
        "sequential calls reuse the compiled programs"
    );
    assert!(s.hits - b.hits >= (2 * CALLS - PROGRAMS) as u64);
    let text = http_get(srv.metrics_addr.expect("metrics"), "/metrics").await;
    assert_eq!(
        sample(&text, "fnhcl_cache_compiles_total"),
        Some(s.compiles as f64)
    );
    assert_eq!(
        srv.metrics
            .requests(fn_hcl::server::metrics::ApiVersion::V1),
        2 * CALLS as u64
    );
    srv.shutdown(Duration::from_secs(5))
        .await
        .expect("shutdown");
}
