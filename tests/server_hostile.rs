//! Hostile and ordinary calls mixed over loopback (issue 13): while composites whose
//! programs or specs exhaust a budget keep arriving, every ordinary call is answered
//! correctly, every hostile one gets a Fatal result naming its budget, no call is lost and
//! the process's peak memory stays bounded. Latencies are printed, not asserted.

mod common;
mod server_support;

use std::time::{Duration, Instant};

use fn_hcl::protocol::proto::v1;
use server_support::*;

const ORDINARY: &str = "-- main.hcl --\nresource bucket {\n  body = {\n    apiVersion = \"s3.aws.upbound.io/v1beta1\"\n    kind = \"Bucket\"\n    spec = { forProvider = { region = req.composite.spec.region } }\n  }\n}\n";

/// Hostile programs, each with the text its Fatal result must contain, and the XR spec
/// field `doc` it reads (the YAML bomb comes from the XR, as an XR author would send it).
fn hostile() -> Vec<(&'static str, String, &'static str)> {
    let chain = {
        let mut s = "-- main.hcl --\nlocals {\n  l0 = \"xxxxxxxxxx\"\n".to_string();
        for i in 1..=9 {
            s.push_str(&format!(
                "  l{i} = [{}]\n",
                vec![format!("l{}", i - 1); 10].join(", ")
            ));
        }
        s + "}\nresource r {\n  body = { apiVersion = \"v1\", kind = \"C\", n = length(flatten(l9)) }\n}\n"
    };
    let bomb = "-- main.hcl --\nfunction bomb {\n  arg n {}\n  body = n == 0 ? 0 : invoke(\"bomb\", { n = n - 1 }) + invoke(\"bomb\", { n = n - 1 })\n}\nresource r {\n  body = { apiVersion = \"v1\", kind = \"C\", n = invoke(\"bomb\", { n = 60 }) }\n}\n".to_string();
    let yaml = "-- main.hcl --\nresource r {\n  body = { apiVersion = \"v1\", kind = \"C\", n = length(yamldecode(req.composite.spec.doc)) }\n}\n".to_string();
    let strings = {
        let mut s = format!(
            "-- main.hcl --\nlocals {{\n  s0 = \"{}\"\n",
            "x".repeat(1000)
        );
        for i in 1..=6 {
            s.push_str(&format!(
                "  s{i} = \"{}\"\n",
                vec![format!("${{s{}}}", i - 1); 10].join("")
            ));
        }
        s + "}\nresource r {\n  body = { apiVersion = \"v1\", kind = \"C\", n = length(s6) }\n}\n"
    };
    // 20,000 levels of brackets through 100 locals: every walk over such a value
    // overflowed an evaluation thread's stack and aborted the server.
    let deep = format!(
        "-- main.hcl --\n{}}}\nresource r {{\n  body = {{ apiVersion = \"v1\", kind = \"C\", n = l100 == l100 }}\n}}\n",
        common::nested_locals(100, 200)
    );
    vec![
        ("deep", deep, "a value nested more than 1024 levels deep"),
        ("chain", chain, "collection elements allocated"),
        ("bomb", bomb, "user function calls"),
        ("yaml", yaml, "(in yamldecode)"),
        ("strings", strings, "string bytes allocated"),
    ]
}

fn billion_laughs() -> String {
    let mut doc = "a0: &a0 \"lol\"\n".to_string();
    for i in 1..=9 {
        doc.push_str(&format!(
            "a{i}: &a{i} [{}]\n",
            vec![format!("*a{}", i - 1); 10].join(", ")
        ));
    }
    doc
}

/// The request as the hostile composite `name` sends it, its spec carrying `doc`.
fn hostile_xr(mut req: v1::RunFunctionRequest, name: &str, doc: &str) -> v1::RunFunctionRequest {
    if let Some(xr) = req
        .observed
        .as_mut()
        .and_then(|o| o.composite.as_mut())
        .and_then(|c| c.resource.as_mut())
    {
        xr.fields
            .insert("metadata".into(), object([("name", string(name))]));
        xr.fields.insert(
            "spec".into(),
            object([("region", string("eu-west-1")), ("doc", string(doc))]),
        );
    }
    req
}

fn fatal(rsp: &v1::RunFunctionResponse) -> Option<&str> {
    rsp.results
        .iter()
        .find(|r| r.severity == v1::Severity::Fatal as i32)
        .map(|r| r.message.as_str())
}

/// The ordinary call's bucket region, as the response carries it.
fn region(rsp: &v1::RunFunctionResponse) -> Option<String> {
    let body = rsp
        .desired
        .as_ref()?
        .resources
        .get("bucket")?
        .resource
        .as_ref()?;
    let spec = body.fields.get("spec")?;
    let Some(prost_types::value::Kind::StructValue(spec)) = &spec.kind else {
        return None;
    };
    let Some(prost_types::value::Kind::StructValue(fp)) = &spec.fields.get("forProvider")?.kind
    else {
        return None;
    };
    match &fp.fields.get("region")?.kind {
        Some(prost_types::value::Kind::StringValue(s)) => Some(s.clone()),
        _ => None,
    }
}

/// Peak resident memory of this process (the server runs in it), in KiB.
fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1).and_then(|n| n.parse().ok()))
        })
        .unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ordinary_calls_are_served_while_hostile_ones_are_refused() {
    // The wall budget far away: a debug build on a loaded machine may need more than the
    // default second to reach the budget each hostile program is refused by.
    let srv = start(&fn_hcl::server::ServeArgs {
        max_evaluation_time: Duration::from_secs(60),
        ..insecure_args()
    })
    .await;
    let addr = srv.addr();
    let rss_before = peak_rss_kib();
    let doc = billion_laughs();

    // Two hostile composites at a time (as many as there are evaluation slots), each
    // cycling through the hostile programs.
    let mut hostile_tasks = Vec::new();
    for w in 0..2 {
        let doc = doc.clone();
        hostile_tasks.push(tokio::spawn(async move {
            let mut c = client(addr).await;
            let mut refused = Vec::new();
            for (i, (name, program, want)) in
                hostile().into_iter().cycle().skip(w).take(8).enumerate()
            {
                let req = hostile_xr(
                    request(&format!("hostile-{w}-{i}"), &program),
                    &format!("hostile-{w}"),
                    &doc,
                );
                let t = Instant::now();
                let rsp = call(&mut c, req).await.expect("a hostile call is answered");
                let m = fatal(&rsp)
                    .unwrap_or_else(|| panic!("{name}: no Fatal result"))
                    .to_string();
                assert!(m.contains(want), "{name}: {m}");
                refused.push((name, t.elapsed()));
            }
            refused
        }));
    }
    // Ordinary composites meanwhile.
    let mut ordinary_tasks = Vec::new();
    for w in 0..3 {
        ordinary_tasks.push(tokio::spawn(async move {
            let mut c = client(addr).await;
            let mut latencies = Vec::new();
            for i in 0..20 {
                let tag = format!("ordinary-{w}-{i}");
                let t = Instant::now();
                let rsp = call(&mut c, request(&tag, ORDINARY))
                    .await
                    .expect("an ordinary call is answered");
                latencies.push(t.elapsed());
                assert_eq!(
                    rsp.meta.as_ref().map(|m| m.tag.as_str()),
                    Some(tag.as_str())
                );
                assert_eq!(fatal(&rsp), None, "{tag}");
                assert_eq!(region(&rsp).as_deref(), Some("eu-west-1"), "{tag}");
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            latencies
        }));
    }
    let mut refused = Vec::new();
    for t in hostile_tasks {
        refused.extend(t.await.expect("hostile worker"));
    }
    let mut latencies = Vec::new();
    for t in ordinary_tasks {
        latencies.extend(t.await.expect("ordinary worker"));
    }
    assert_eq!(refused.len(), 16, "every hostile call answered");
    assert_eq!(latencies.len(), 60, "every ordinary call answered");
    latencies.sort();
    let rss_after = peak_rss_kib();
    println!(
        "ordinary calls: p50 {:?}, p90 {:?}, max {:?}; hostile calls: {:?}; peak RSS {} -> {} MiB",
        latencies[latencies.len() / 2],
        latencies[latencies.len() * 9 / 10],
        latencies[latencies.len() - 1],
        refused,
        rss_before / 1024,
        rss_after / 1024
    );
    // Each hostile call stops at its budget (64 MiB of strings, 4M elements); unbounded,
    // the chain alone would need gigabytes.
    assert!(
        rss_after < rss_before + 1024 * 1024,
        "peak RSS grew from {rss_before} KiB to {rss_after} KiB"
    );
    srv.shutdown(Duration::from_secs(5))
        .await
        .expect("shutdown");
}

#[tokio::test]
async fn the_memory_budget_flag_sets_the_evaluation_budgets() {
    // 1 MiB: 62,500 elements and 1 MiB of strings.
    let srv = start(&fn_hcl::server::ServeArgs {
        max_evaluation_mib: 1,
        ..insecure_args()
    })
    .await;
    let mut c = client(srv.addr()).await;
    let program = "-- main.hcl --\nlocals {\n  xs = [for i in range(1000) : [for j in range(100) : j]]\n}\nresource r {\n  body = { apiVersion = \"v1\", kind = \"C\", n = length(xs) }\n}\n";
    let rsp = call(&mut c, request("small-budget", program))
        .await
        .expect("answered");
    let m = fatal(&rsp).expect("a Fatal result");
    assert!(
        m.contains("more than 62500 collection elements allocated"),
        "{m}"
    );
    // The ordinary program fits.
    let rsp = call(&mut c, request("ordinary", ORDINARY))
        .await
        .expect("answered");
    assert_eq!(fatal(&rsp), None);
    srv.shutdown(Duration::from_secs(5))
        .await
        .expect("shutdown");
}
