//! Scale-out as Crossplane does it: two `fn-hcl serve` processes behind a client that
//! spreads calls round-robin over the ready ones (Crossplane dials a function's headless
//! Service with gRPC round-robin and wait-for-ready). Both take calls; one is stopped with
//! SIGTERM mid-load, as in a rolling update, and no call it accepted is lost: each one it
//! logged as started is answered, and every call the client made is answered by one of
//! the two.

mod server_support;

use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use server_support::process::Proc;
use server_support::{Client, call, client, request_for};
use tokio::sync::Mutex;

const WORKERS: usize = 4;
/// Bounds of the load: it stops after this many calls or this long, whichever is first.
const MAX_CALLS: usize = 4000;
const DURATION: Duration = Duration::from_secs(3);
const STOP_AFTER: Duration = Duration::from_millis(1200);
/// Every call's tag: the test hook makes each evaluation sleep this long.
const SLEEP: &str = "fn-hcl-test:sleep-ms=3";
/// Echoes the call's XR name into the composite's status: each answer is checked to be
/// its own call's (the tag, the same for every call, cannot tell them apart).
const PROGRAM: &str =
    "-- main.hcl --\ncomposite status {\n  body = { seen = req.composite.metadata.name }\n}\n";

/// The `status.seen` of the desired composite a response carries.
fn seen(rsp: &fn_hcl::protocol::proto::v1::RunFunctionResponse) -> Option<String> {
    let json = fn_hcl::protocol::protojson::response_to_json(rsp).ok()?;
    let path = ["desired", "composite", "resource", "status", "seen"];
    let seen = path.iter().try_fold(&json, |j, k| j.get(k))?;
    seen.as_str().map(str::to_string)
}

struct Backend {
    client: Mutex<Client>,
    down: AtomicBool,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_replicas_share_the_load_and_a_stopped_one_loses_no_accepted_call() {
    let a = Proc::spawn(&["--enable-test-hooks", "--max-concurrent-evaluations", "4"]);
    let b = Proc::spawn(&["--enable-test-hooks", "--max-concurrent-evaluations", "4"]);
    let backends = Arc::new([
        Backend {
            client: Mutex::new(client(a.grpc).await),
            down: AtomicBool::new(false),
        },
        Backend {
            client: Mutex::new(client(b.grpc).await),
            down: AtomicBool::new(false),
        },
    ]);
    let next = Arc::new(AtomicUsize::new(0));
    let issued = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let mut workers = Vec::new();
    for w in 0..WORKERS {
        let (backends, next, issued) = (
            Arc::clone(&backends),
            Arc::clone(&next),
            Arc::clone(&issued),
        );
        workers.push(tokio::spawn(async move {
            // (call, which backend answered), and what A refused with before another
            // answered (what a failure below prints: a call A logged as started but
            // refused to the client is a different fault from one it never answered).
            let mut answered: Vec<(String, usize)> = Vec::new();
            let mut refused: Vec<(String, String)> = Vec::new();
            loop {
                let n = issued.fetch_add(1, Ordering::SeqCst);
                if n >= MAX_CALLS || started.elapsed() > DURATION {
                    break;
                }
                // A few milliseconds of work each, so calls are in flight at the SIGTERM;
                // each call is its own XR (the server logs every call with its XR's name).
                let id = format!("xr-{w}-{n}");
                let mut tries = 0;
                loop {
                    tries += 1;
                    assert!(tries <= 4, "call {id} found no ready backend");
                    // Round-robin over the backends not known to be down (as gRPC's
                    // round_robin picks only READY subchannels).
                    let pick = next.fetch_add(1, Ordering::SeqCst) % 2;
                    let i = if backends[pick].down.load(Ordering::SeqCst) {
                        1 - pick
                    } else {
                        pick
                    };
                    let mut c = backends[i].client.lock().await.clone();
                    match call(&mut c, request_for(&id, SLEEP, PROGRAM)).await {
                        Ok(rsp) => {
                            assert_eq!(seen(&rsp).as_deref(), Some(id.as_str()), "{rsp:?}");
                            answered.push((id.clone(), i));
                            break;
                        }
                        // Refused before it was accepted: the backend is going away.
                        // A stream the server's GOAWAY (NO_ERROR) did not take surfaces
                        // in tonic as Internal carrying h2's GoAway; HTTP/2 guarantees a
                        // stream above GOAWAY's last-stream-id was not processed, so it
                        // is safe to retry, as gRPC's transparent retry does.
                        Err(status) => {
                            let refused_by_goaway = status.code() == tonic::Code::Internal
                                && format!("{status:?}").contains("GoAway(");
                            assert!(
                                refused_by_goaway
                                    || matches!(
                                        status.code(),
                                        tonic::Code::Unavailable
                                            | tonic::Code::Unknown
                                            | tonic::Code::Cancelled
                                    ),
                                "{id}: {status:?}"
                            );
                            if i == 0 {
                                refused.push((id.clone(), format!("{status:?}")));
                            }
                            backends[i].down.store(true, Ordering::SeqCst);
                        }
                    }
                }
            }
            (answered, refused)
        }));
    }
    tokio::time::sleep(STOP_AFTER).await;
    a.signal("-TERM");
    let (mut answered, mut refused_by_a) = (Vec::new(), Vec::new());
    for w in workers {
        let (a, r) = w.await.expect("worker");
        answered.extend(a);
        refused_by_a.extend(r);
    }
    let (status, a_lines) = tokio::task::spawn_blocking(move || a.wait(Duration::from_secs(30)))
        .await
        .expect("wait");
    assert!(status.success(), "the stopped replica exits 0: {a_lines:?}");

    let by_a: BTreeSet<&str> = answered
        .iter()
        .filter(|(_, i)| *i == 0)
        .map(|(t, _)| t.as_str())
        .collect();
    let by_b = answered.iter().filter(|(_, i)| *i == 1).count();
    assert!(
        by_a.len() > 10 && by_b > 10,
        "both replicas take calls: a {}, b {by_b}",
        by_a.len()
    );
    // Every call A started (it logs "Running Function" with the XR's name when it accepts
    // one) was answered by A.
    let accepted_by_a: Vec<String> = a_lines
        .iter()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|j| j["msg"] == "Running Function")
        .filter_map(|j| j["xr_name"].as_str().map(str::to_string))
        .collect();
    assert!(!accepted_by_a.is_empty());
    for id in &accepted_by_a {
        let refusal = refused_by_a.iter().find(|(t, _)| t == id).map(|(_, s)| s);
        let quoted = format!("\"{id}\"");
        let about: Vec<&String> = a_lines
            .iter()
            .filter(|l| l.contains(&quoted) || l.contains("SIGTERM") || l.contains("shut"))
            .collect();
        assert!(
            by_a.contains(id.as_str()),
            "{id} was accepted by the stopped replica but lost (the client saw from it: \
             {refusal:?}; the replica's log of it and of its stop: {about:?})"
        );
    }
    assert_eq!(
        accepted_by_a.len(),
        by_a.len(),
        "A answered exactly what it accepted"
    );
    // Every call the client made was answered (a worker fails on a call no replica
    // answers), and after the stop B took them all.
    eprintln!(
        "scale-out: {} calls in {:?}: {} by the stopped replica, {by_b} by the other",
        answered.len(),
        started.elapsed(),
        by_a.len()
    );
    drop(b);
}
