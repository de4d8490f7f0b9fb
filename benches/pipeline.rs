//! The whole pipeline, stage by stage, on the generated workloads (see `workloads/`):
//! lex+parse (bytes/s), IR+compile (per program), request → values (`req` and the
//! observed state as VM values, eagerly and lazily), evaluation on a warm cache, request
//! bytes to response bytes as the server does it (warm and cold cache) and as it did
//! before the lazy request and direct response (`wire_eager_warm`), protobuf decode+encode alone of the
//! same request and response (the floor no evaluator can beat), and the response's
//! desired resources encoded both ways (`encode_prost`: value → prost Struct → bytes, the
//! old path; `encode_direct`: value → bytes, `ResponseBuilder::finish_encoded`).
//!
//! Before criterion runs, it prints the allocations and bytes allocated per warm request of
//! every workload (this binary's global allocator counts them).
//!
//! `cargo bench --bench pipeline` (short settings are built in; criterion's flags such as
//! `--measurement-time` override them). `FN_HCL_WRITE_WORKLOADS=DIR cargo bench --bench
//! pipeline` only writes each workload's request to `DIR/<name>.json` (for `fn-hcl bench`
//! and `fn-hcl loadgen`) and exits. `FN_HCL_WORKLOADS=fleet,scale-1000` runs only the
//! named workloads.

use criterion::{BenchmarkId, Criterion, Throughput};
use fn_hcl::cli::bench::{CountingAlloc, Mode, bench_request};
use fn_hcl::handler::{default_limits, program_cache, run_function};
use fn_hcl::protocol::proto::v1;
use fn_hcl::protocol::response::ResponseBuilder;
use fn_hcl::runtime::eval::{Inputs, evaluate};
use fn_hcl::syntax::span::SourceMap;
use prost::Message;
use std::hint::black_box;
use std::time::Duration;

#[path = "workloads/mod.rs"]
mod workloads;
use workloads::Workload;

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc;

fn write_workloads(dir: &str) {
    if let Err(e) = std::fs::create_dir_all(dir) {
        panic!("cannot create {dir}: {e}");
    }
    for w in workloads::all().into_iter().chain(workloads::constructs()) {
        check(&w);
        let path = format!("{dir}/{}.json", w.name);
        if let Err(e) = std::fs::write(&path, &w.text) {
            panic!("cannot write {path}: {e}");
        }
        println!("{path}: {} bytes of protobuf", w.bytes.len());
    }
}

/// Checks that a workload runs cleanly: a benchmark of the failure path would mislead.
fn check(w: &Workload) -> v1::RunFunctionResponse {
    let rsp = run_function(&w.request);
    for r in &rsp.results {
        if r.severity == fn_hcl::protocol::response::Severity::Fatal as i32 {
            panic!("workload {}: Fatal result: {}", w.name, r.message);
        }
    }
    rsp
}

/// Allocations per warm request, printed for the README's table.
fn report_allocations(all: &[Workload]) {
    println!("allocations per warm request (counting global allocator):");
    for w in all {
        let n = if w.bytes.len() > 1 << 20 || w.name == "scale-10000" {
            5
        } else {
            50
        };
        for mode in [Mode::Wire, Mode::WireEager, Mode::Handler, Mode::Eval] {
            match bench_request(&w.request, mode, false, n, default_limits()) {
                Ok(r) => println!(
                    "  {:<12} {:<8} {:>12.0} allocs/op {:>14.0} B/op {:>12.0} ns/op",
                    w.name,
                    format!("{mode:?}").to_lowercase(),
                    r.allocs_per_op,
                    r.bytes_per_op,
                    r.ns_per_op
                ),
                Err(e) => panic!("workload {}: {e}", w.name),
            }
        }
    }
}

fn program_files(hcl: &str) -> (SourceMap, Vec<fn_hcl::syntax::span::FileId>, u64) {
    let files = match fn_hcl::syntax::txtar::parse(hcl) {
        Ok(f) => f,
        Err(e) => panic!("txtar: {e}"),
    };
    let mut sm = SourceMap::new();
    let mut ids = Vec::new();
    let mut bytes = 0;
    for (name, text) in &files {
        bytes += text.len() as u64;
        ids.push(sm.add(name.as_str(), text.as_str()));
    }
    (sm, ids, bytes)
}

/// The evaluated output of a workload, ready for the encode stages.
fn evaluated(w: &Workload) -> fn_hcl::runtime::eval::Output {
    let program = match fn_hcl::lower::ir::compile_txtar(&w.hcl) {
        Ok(p) => p,
        Err(e) => panic!("{}: {}", w.name, e.message()),
    };
    let request = match fn_hcl::protocol::request::Request::from_proto(&w.request) {
        Ok(r) => r,
        Err(e) => panic!("{}: {e}", w.name),
    };
    match evaluate(&program, &Inputs::from_request(&request), default_limits()) {
        Ok(o) => o,
        Err(e) => panic!("{}: {}", w.name, e.0),
    }
}

/// The old response path for the desired resources: each body to a prost Struct, then
/// prost's encoding of the whole response.
fn encode_prost(req: &v1::RunFunctionRequest, out: &fn_hcl::runtime::eval::Output) -> Vec<u8> {
    let mut b = ResponseBuilder::new(req);
    for (name, body, ready) in &out.resources {
        match fn_hcl::protocol::response::value_to_struct(body) {
            Ok(s) => b.set_resource(name, s),
            Err(e) => panic!("{name}: {e}"),
        }
        b.set_ready(name, *ready);
    }
    b.finish().encode_to_vec()
}

/// The direct path: bodies stay values and the response bytes are written from them.
fn encode_direct(req: &v1::RunFunctionRequest, out: &fn_hcl::runtime::eval::Output) -> Vec<u8> {
    let mut b = ResponseBuilder::new(req);
    for (name, body, ready) in &out.resources {
        if let Err(e) = b.set_resource_value(name.clone(), body) {
            panic!("{name}: {e}");
        }
        b.set_ready(name, *ready);
    }
    b.finish_encoded()
}

/// Allocations of one response encoding each way, printed for the README's table.
fn report_encode_allocations(all: &[Workload]) {
    println!("allocations per response encoding (desired resources):");
    for w in all {
        let out = evaluated(w);
        for (label, f) in [
            ("prost", encode_prost as fn(&_, &_) -> Vec<u8>),
            ("direct", encode_direct),
        ] {
            let (bytes, allocs, b) = fn_hcl::cli::bench::measure(|| f(&w.request, &out));
            println!(
                "  {:<12} {:<7} {:>9} allocs {:>12} B allocated, {} B out",
                w.name,
                label,
                allocs,
                b,
                bytes.len()
            );
        }
        // The whole handler (warm cache) with the response encoded each way.
        let ((), a0, b0) = fn_hcl::cli::bench::measure(|| {
            black_box(run_function(&w.request).encode_to_vec());
        });
        let ((), a1, b1) = fn_hcl::cli::bench::measure(|| {
            black_box(fn_hcl::handler::run_function_encoded(&w.request));
        });
        println!(
            "  {:<12} handler+encode: prost {a0} allocs {b0} B, direct {a1} allocs {b1} B",
            w.name
        );
    }
}

fn benches(c: &mut Criterion, all: &[Workload]) {
    // Distinct programs: observed shares fleet's, the scale workloads share one.
    let programs: Vec<&Workload> = all
        .iter()
        .filter(|w| matches!(w.name.as_str(), "small" | "fleet" | "scale-10"))
        .collect();

    let mut g = c.benchmark_group("parse");
    for w in &programs {
        let (sm, ids, bytes) = program_files(&w.hcl);
        g.throughput(Throughput::Bytes(bytes));
        g.bench_function(BenchmarkId::from_parameter(&w.name), |b| {
            b.iter(|| {
                ids.iter()
                    .map(|&f| {
                        fn_hcl::syntax::parser::parse_file(black_box(&sm), f).is_ok() as usize
                    })
                    .sum::<usize>()
            })
        });
    }
    g.finish();

    let mut g = c.benchmark_group("compile");
    for w in &programs {
        g.bench_function(BenchmarkId::from_parameter(&w.name), |b| {
            b.iter(|| fn_hcl::lower::ir::compile_txtar(black_box(&w.hcl)).is_ok())
        });
    }
    g.finish();

    let mut g = c.benchmark_group("request_values");
    for w in all {
        g.bench_function(BenchmarkId::from_parameter(&w.name), |b| {
            b.iter(|| {
                let r = fn_hcl::protocol::request::Request::from_proto(black_box(&w.request));
                r.map(|r| Inputs::from_request(&r))
            })
        });
    }
    g.finish();

    // The server's request path: prost-compatible decode with the observed bodies kept as
    // bytes, then `req` with only the bodies the program reads turned into values.
    let mut g = c.benchmark_group("request_lazy");
    for w in all {
        let reads = match fn_hcl::lower::ir::compile_txtar(&w.hcl) {
            Ok(p) => p.reads,
            Err(e) => panic!("{}: {}", w.name, e.message()),
        };
        let bytes = prost::bytes::Bytes::from(w.bytes.clone());
        g.throughput(Throughput::Bytes(w.bytes.len() as u64));
        g.bench_function(BenchmarkId::from_parameter(&w.name), |b| {
            b.iter(|| {
                let lazy = fn_hcl::protocol::proto::LazyRequest::decode(black_box(bytes.clone()));
                lazy.ok().map(|l| {
                    fn_hcl::protocol::request::Request::from_lazy(&l, &reads)
                        .map(|r| Inputs::from_request(&r))
                })
            })
        });
    }
    g.finish();

    let mut g = c.benchmark_group("eval_warm");
    for w in all {
        let program = match fn_hcl::lower::ir::compile_txtar(&w.hcl) {
            Ok(p) => p,
            Err(e) => panic!("{}: {}", w.name, e.message()),
        };
        let request = match fn_hcl::protocol::request::Request::from_proto(&w.request) {
            Ok(r) => r,
            Err(e) => panic!("{}: {e}", w.name),
        };
        let inputs = Inputs::from_request(&request);
        g.bench_function(BenchmarkId::from_parameter(&w.name), |b| {
            b.iter(|| evaluate(&program, black_box(&inputs), default_limits()).is_ok())
        });
    }
    g.finish();

    // Request bytes → response bytes as `fn-hcl serve` does it: observed bodies kept as
    // bytes until the program reads them, the response written straight from VM values.
    let wire = |bytes: &prost::bytes::Bytes| {
        fn_hcl::protocol::proto::LazyRequest::decode(bytes.clone()).map(|r| {
            fn_hcl::handler::run_function_lazy_builder(&r)
                .finish_encoded()
                .len()
        })
    };
    let mut g = c.benchmark_group("wire_warm");
    for w in all {
        let bytes = prost::bytes::Bytes::from(w.bytes.clone());
        g.throughput(Throughput::Bytes(w.bytes.len() as u64));
        g.bench_function(BenchmarkId::from_parameter(&w.name), |b| {
            b.iter(|| wire(black_box(&bytes)))
        });
    }
    g.finish();

    // The path before the lazy request and the direct response: prost's eager decode,
    // `run_function`, prost's encode of the response message (kept for comparison).
    let mut g = c.benchmark_group("wire_eager_warm");
    for w in all {
        g.throughput(Throughput::Bytes(w.bytes.len() as u64));
        g.bench_function(BenchmarkId::from_parameter(&w.name), |b| {
            b.iter(|| {
                v1::RunFunctionRequest::decode(black_box(w.bytes.as_slice()))
                    .map(|r| run_function(&r).encode_to_vec().len())
            })
        });
    }
    g.finish();

    let mut g = c.benchmark_group("wire_cold");
    for w in all {
        let bytes = prost::bytes::Bytes::from(w.bytes.clone());
        g.throughput(Throughput::Bytes(w.bytes.len() as u64));
        g.bench_function(BenchmarkId::from_parameter(&w.name), |b| {
            b.iter(|| {
                program_cache().clear();
                wire(black_box(&bytes))
            })
        });
    }
    g.finish();

    let mut g = c.benchmark_group("protobuf_floor");
    for w in all {
        let rsp = check(w);
        g.throughput(Throughput::Bytes(w.bytes.len() as u64));
        g.bench_function(BenchmarkId::from_parameter(&w.name), |b| {
            b.iter(|| {
                let req = v1::RunFunctionRequest::decode(black_box(w.bytes.as_slice()));
                (req.is_ok(), black_box(&rsp).encode_to_vec().len())
            })
        });
    }
    g.finish();

    for (group, f) in [
        ("encode_prost", encode_prost as fn(&_, &_) -> Vec<u8>),
        ("encode_direct", encode_direct),
    ] {
        let mut g = c.benchmark_group(group);
        for w in all {
            let out = evaluated(w);
            g.bench_function(BenchmarkId::from_parameter(&w.name), |b| {
                b.iter(|| f(black_box(&w.request), black_box(&out)).len())
            });
        }
        g.finish();
    }
}

fn main() {
    if let Ok(dir) = std::env::var("FN_HCL_WRITE_WORKLOADS") {
        write_workloads(&dir);
        return;
    }
    // FN_HCL_WORKLOADS=fleet,scale-1000 keeps only those workloads (e.g. under callgrind,
    // where the large ones exceed the evaluation time budget).
    let mut all = workloads::all();
    if let Ok(only) = std::env::var("FN_HCL_WORKLOADS") {
        all.retain(|w| only.split(',').any(|n| n == w.name));
    }
    for w in &all {
        let rsp = check(w);
        println!(
            "workload {:<12} request {:>9} B, response {:>9} B, {} desired resources",
            w.name,
            w.bytes.len(),
            rsp.encoded_len(),
            rsp.desired.as_ref().map_or(0, |d| d.resources.len())
        );
    }
    // `cargo bench` passes `--bench`; without it criterion only tests each bench once.
    if std::env::args().any(|a| a == "--bench") {
        report_allocations(&all);
        report_encode_allocations(&all);
    }
    let mut c = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .sample_size(10)
        .configure_from_args();
    benches(&mut c, &all);
    c.final_summary();
}
