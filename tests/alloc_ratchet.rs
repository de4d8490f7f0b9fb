//! Allocations per request as a ratchet (like `.ci/conformance-floor`): every benchmark
//! workload (`benches/workloads`) is run warm on the server's path (`wire`) and on the
//! evaluation alone (`eval`), and the allocations per request, which are deterministic,
//! may not exceed the floor committed in `.ci/alloc-floor`. A change that lowers a count
//! lowers its floor (`FN_HCL_BLESS=1 cargo test --test alloc_ratchet` rewrites the file
//! with the lower counts; it never raises one).
//!
//! One test only: the counting allocator counts every thread's allocations while it
//! measures, so nothing else may run in this binary meanwhile.

use fn_hcl::cli::bench::{CountingAlloc, Mode, bench_request};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

#[path = "../benches/workloads/mod.rs"]
#[allow(dead_code)]
mod workloads;

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc;

const FLOOR: &str = ".ci/alloc-floor";

/// `(workload, mode)` → allocations per request, from the floor file.
fn read_floor(text: &str) -> BTreeMap<(String, String), u64> {
    let mut out = BTreeMap::new();
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let f: Vec<&str> = line.split_whitespace().collect();
        let [w, m, n] = f[..] else {
            panic!("{FLOOR}: not `workload mode allocs`: {line}");
        };
        let n: u64 = n.parse().unwrap_or_else(|e| panic!("{FLOOR}: {e}: {line}"));
        out.insert((w.to_string(), m.to_string()), n);
    }
    out
}

#[test]
fn allocations_per_request_do_not_exceed_the_floor() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(FLOOR);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{FLOOR}: {e}"));
    let floor = read_floor(&text);
    let mut measured = BTreeMap::new();
    for w in workloads::all() {
        // The largest is slow in a debug build and scales like scale-1000.
        if w.name == "scale-10000" {
            continue;
        }
        for (mode, name) in [(Mode::Wire, "wire"), (Mode::Eval, "eval")] {
            let r = bench_request(
                &w.request,
                mode,
                false,
                2,
                // Counting, not timing: a debug build on a loaded machine must not reach
                // the wall budget (the allocations of the Fatal path would be counted).
                fn_hcl::bytecode::vm::Limits {
                    max_wall: std::time::Duration::from_secs(120),
                    ..fn_hcl::handler::default_limits()
                },
            )
            .unwrap_or_else(|e| panic!("{} {name}: {e}", w.name));
            let per = r.allocs_per_op;
            assert_eq!(
                per.fract(),
                0.0,
                "{} {name}: {per} allocations per request is not the same every run",
                w.name
            );
            measured.insert((w.name.clone(), name.to_string()), per as u64);
        }
    }
    let mut over = Vec::new();
    let mut under = Vec::new();
    for (key, &n) in &measured {
        match floor.get(key) {
            None => over.push(format!(
                "{} {}: {n} (no floor: add it to {FLOOR})",
                key.0, key.1
            )),
            Some(&f) if n > f => over.push(format!("{} {}: {n} > floor {f}", key.0, key.1)),
            Some(&f) if n < f => under.push(format!("{} {}: {n} < floor {f}", key.0, key.1)),
            Some(_) => {}
        }
    }
    for key in floor.keys().filter(|k| !measured.contains_key(*k)) {
        over.push(format!("{} {}: in {FLOOR} but not measured", key.0, key.1));
    }
    if std::env::var("FN_HCL_BLESS").as_deref() == Ok("1") && over.is_empty() && !under.is_empty() {
        let mut out = String::new();
        for line in text.lines() {
            let f: Vec<&str> = line.split_whitespace().collect();
            match f[..] {
                [w, m, _] if !line.starts_with('#') => {
                    let n = measured[&(w.to_string(), m.to_string())];
                    let _ = writeln!(out, "{w:<26} {m:<5} {n}");
                }
                _ => {
                    let _ = writeln!(out, "{line}");
                }
            }
        }
        std::fs::write(&path, out).unwrap_or_else(|e| panic!("{FLOOR}: {e}"));
        eprintln!("{FLOOR}: lowered: {}", under.join("; "));
        return;
    }
    if !under.is_empty() {
        eprintln!(
            "allocations fell below the floor: lower it (FN_HCL_BLESS=1 cargo test --test alloc_ratchet):\n  {}",
            under.join("\n  ")
        );
    }
    assert!(
        over.is_empty(),
        "allocations per request rose above {FLOOR}:\n  {}",
        over.join("\n  ")
    );
}
