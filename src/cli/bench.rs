//! `fn-hcl bench`: runs one request many times in-process and prints the time, allocations
//! and bytes allocated per run, so that a user can measure fn-hcl on their own compositions
//! (and compare it with another function measured the same way).
//!
//! Allocations are counted by [`CountingAlloc`], a wrapper over mimalloc that the `fn-hcl`
//! binary (and the pipeline bench) installs as the global allocator. It counts only while
//! [`measure`] runs, so the server pays one relaxed load per allocation, and counts in
//! thread-local cells, so that counting adds no locked instruction to what is timed
//! (atomic counters added two per allocation, ~27,000 per heavy-200 request). mimalloc rather
//! than glibc's malloc: allocation and freeing were a third of a warm request's
//! instructions, and mimalloc measured 10-25% faster per request (benches/README.md).

use crate::bytecode::vm::Limits;
use crate::handler::{default_limits, program_cache};
use crate::protocol::input::HclInput;
use crate::protocol::proto::v1;
use crate::protocol::response::Severity;
use crate::runtime::eval::{Inputs, evaluate};
use clap::{Args, ValueEnum};
use mimalloc::MiMalloc;
use prost::Message;
use std::alloc::{GlobalAlloc, Layout};
use std::cell::Cell;
use std::hint::black_box;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::time::{Duration, Instant};

/// How many [`measure`]s are running (on any thread): allocations are counted while any is.
static COUNTING: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// Allocations and bytes this thread made while counting was on (no destructor, no
    /// allocation on first use: safe to touch from inside the allocator).
    static COUNTS: Cell<(u64, u64)> = const { Cell::new((0, 0)) };
}

/// This thread's counters.
fn counts() -> (u64, u64) {
    COUNTS.with(Cell::get)
}

/// A global allocator that counts allocations (and reallocations) and their bytes while
/// counting is switched on, and otherwise only forwards to [`MiMalloc`].
pub struct CountingAlloc;

impl CountingAlloc {
    #[inline]
    fn note(size: usize) {
        if COUNTING.load(Relaxed) > 0 {
            COUNTS.with(|c| {
                let (n, bytes) = c.get();
                c.set((n.wrapping_add(1), bytes.wrapping_add(size as u64)));
            });
        }
    }
}

/// Whether a block of `size` bytes from plain `mi_malloc` is aligned to `align`: mimalloc
/// aligns every block of 16 bytes or more to 16 (`MI_MAX_ALIGN_SIZE`) and smaller ones to
/// 8, so an alignment of at most 16 and at most the size is met (std's System allocator
/// applies the same rule to malloc). `mi_malloc_aligned`, which `MiMalloc` always calls,
/// costs ~25 instructions more per allocation (measured: heavy-200 −1.8%).
#[inline(always)]
fn plain(align: usize, size: usize) -> bool {
    align <= 16 && align <= size
}

// SAFETY: every method forwards to mimalloc (`MiMalloc`, or `mi_malloc`/`mi_realloc` for
// layouts whose alignment they give) with the caller's arguments unchanged; the
// counters are a const-initialized thread-local `Cell` without a destructor, which never
// allocates.
unsafe impl GlobalAlloc for CountingAlloc {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        Self::note(layout.size());
        if plain(layout.align(), layout.size()) {
            // SAFETY: a nonzero size (GlobalAlloc's contract) whose alignment every block
            // of that size has (see `plain`).
            return unsafe { libmimalloc_sys::mi_malloc(layout.size()) as *mut u8 };
        }
        // SAFETY: forwarded as is; the caller upholds `GlobalAlloc::alloc`'s contract.
        unsafe { MiMalloc.alloc(layout) }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        Self::note(layout.size());
        if plain(layout.align(), layout.size()) {
            // SAFETY: as for `alloc`.
            return unsafe { libmimalloc_sys::mi_zalloc(layout.size()) as *mut u8 };
        }
        // SAFETY: as for `alloc`.
        unsafe { MiMalloc.alloc_zeroed(layout) }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` was allocated by `MiMalloc` with `layout` (every path forwards).
        unsafe { MiMalloc.dealloc(ptr, layout) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // A reallocation counts as an allocation of the new size (Go's B/op does the same).
        Self::note(new_size);
        if plain(layout.align(), new_size) {
            // SAFETY: `ptr` is a live mimalloc block (every path allocates with mimalloc);
            // the new block has the alignment as in `alloc`.
            return unsafe {
                libmimalloc_sys::mi_realloc(ptr as *mut std::ffi::c_void, new_size) as *mut u8
            };
        }
        // SAFETY: as for `dealloc`; `new_size` is the caller's, unchanged.
        unsafe { MiMalloc.realloc(ptr, layout, new_size) }
    }
}

/// Allocations and bytes counted while running `f` on this thread (zero unless
/// [`CountingAlloc`] is the global allocator); other threads' allocations do not count.
/// Measurements may overlap (nested, or on several threads).
pub fn measure<T>(f: impl FnOnce() -> T) -> (T, u64, u64) {
    let (a0, b0) = counts();
    COUNTING.fetch_add(1, Relaxed);
    let out = f();
    COUNTING.fetch_sub(1, Relaxed);
    let (a1, b1) = counts();
    (out, a1.wrapping_sub(a0), b1.wrapping_sub(b0))
}

/// What one iteration runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum Mode {
    /// Request bytes → response bytes as the server does it: the request decoded with its
    /// observed bodies left as bytes (`proto::LazyRequest`), the response written straight
    /// from the program's values (`ResponseBuilder::finish_encoded`).
    #[default]
    Wire,
    /// The same with prost's eager decode of the whole request, `run_function` and prost's
    /// encode of the response message (what the server did before; kept for comparison).
    WireEager,
    /// The handler (`RunFunction`) on a decoded request.
    Handler,
    /// Evaluation of the compiled program only (the request already converted to values).
    Eval,
}

/// Flags of `fn-hcl bench`.
#[derive(Args, Debug, Clone)]
pub struct BenchArgs {
    /// The RunFunctionRequest (YAML or protojson JSON), as for `fn-hcl eval`.
    #[arg(long, value_name = "FILE")]
    pub request: String,
    /// Iterations measured (after one warm-up iteration).
    #[arg(long, short = 'n', default_value_t = 1000)]
    pub n: u64,
    /// What is measured.
    #[arg(long, value_enum, default_value_t = Mode::Wire)]
    pub mode: Mode,
    /// Empty the program cache before every iteration (in `eval` mode: compile every time).
    #[arg(long)]
    pub cold: bool,
    /// Longest one evaluation may run, as `serve --max-evaluation-time`. Raise it to measure
    /// under a profiler: callgrind runs about 50 times slower, and the default second then
    /// ends a large workload early with a Fatal result (the failure path is measured).
    #[arg(
        long,
        default_value = crate::server::DEFAULT_EVALUATION_TIME,
        value_parser = crate::server::parse_duration
    )]
    pub max_evaluation_time: std::time::Duration,
    /// Memory for observed bodies remembered between requests, as `serve
    /// --body-cache-mib`. Every iteration sends the same bodies, so by default this
    /// measures the steady state, where they are found; 0 measures requests whose bodies
    /// are all new (without the hashing a miss adds).
    #[arg(long, default_value_t = crate::protocol::body_cache::DEFAULT_MAX_BYTES >> 20)]
    pub body_cache_mib: usize,
}

/// What a run measured, per iteration.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Report {
    pub n: u64,
    pub ns_per_op: f64,
    pub allocs_per_op: f64,
    pub bytes_per_op: f64,
}

impl std::fmt::Display for Report {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}\t{:.0} ns/op\t{:.0} allocs/op\t{:.0} B/op",
            self.n, self.ns_per_op, self.allocs_per_op, self.bytes_per_op
        )
    }
}

/// `fn-hcl bench`: read the request, check that it runs, measure it; returns the line to print.
pub fn run(args: &BenchArgs) -> Result<String, String> {
    crate::protocol::body_cache::set_max_bytes(args.body_cache_mib.saturating_mul(1 << 20));
    let req = crate::cli::read_request(&args.request)?;
    let limits = Limits {
        max_wall: args.max_evaluation_time,
        ..default_limits()
    };
    let mut out = String::new();
    let options = crate::handler::Options {
        debug: false,
        limits,
    };
    let checked = crate::handler::run_function_with(&req, options).finish();
    if let Some(fatal) = fatal_message(&checked) {
        out.push_str(&format!(
            "warning: the response carries a Fatal result, so this measures the failure path: {fatal}\n"
        ));
    }
    let report = bench_request(&req, args.mode, args.cold, args.n.max(1), limits)?;
    let mode = match args.mode {
        Mode::Wire => "wire",
        Mode::WireEager => "wire-eager",
        Mode::Handler => "handler",
        Mode::Eval => "eval",
    };
    let cache = if args.cold { "cold" } else { "warm" };
    out.push_str(&format!("{mode}/{cache}\t{report}\n"));
    Ok(out)
}

fn fatal_message(rsp: &v1::RunFunctionResponse) -> Option<&str> {
    rsp.results
        .iter()
        .find(|r| r.severity == Severity::Fatal as i32)
        .map(|r| r.message.as_str())
}

/// Runs `req` `n` times in `mode` (after one warm-up run), each evaluation within
/// `limits`, and reports the cost per run.
pub fn bench_request(
    req: &v1::RunFunctionRequest,
    mode: Mode,
    cold: bool,
    n: u64,
    limits: Limits,
) -> Result<Report, String> {
    let options = crate::handler::Options {
        debug: false,
        limits,
    };
    let n = n.max(1);
    // Started before the measurement, so its thread's allocations are not counted.
    let progress =
        crate::cli::progress::Progress::start("bench", crate::cli::progress::Total::Count(n));
    let tick = progress.counter();
    let cold_cache = || {
        if cold {
            program_cache().clear();
        }
    };
    let (elapsed, allocs, bytes) = match mode {
        Mode::Wire => {
            let bytes = prost::bytes::Bytes::from(req.encode_to_vec());
            let once = || {
                crate::protocol::proto::LazyRequest::decode(bytes.clone())
                    .map(|r| crate::handler::run_function_lazy_with(&r, options).finish_encoded())
                    .map_err(|e| format!("cannot decode the request: {e}"))
            };
            black_box(once()?);
            timed(n, tick, || {
                cold_cache();
                black_box(once())
            })
        }
        Mode::WireEager => {
            let bytes = req.encode_to_vec();
            let once = || {
                let decoded = v1::RunFunctionRequest::decode(bytes.as_slice())
                    .map_err(|e| format!("cannot decode the request: {e}"))?;
                let rsp = crate::handler::run_function_with(&decoded, options).finish();
                Ok::<_, String>(rsp.encode_to_vec())
            };
            black_box(once()?);
            timed(n, tick, || {
                cold_cache();
                black_box(once())
            })
        }
        Mode::Handler => {
            let run = |r| crate::handler::run_function_with(r, options).finish();
            black_box(run(req));
            timed(n, tick, || {
                cold_cache();
                black_box(run(black_box(req)))
            })
        }
        Mode::Eval => {
            let input = HclInput::from_request(req)?;
            let program = crate::lower::ir::compile_txtar(&input.hcl)
                .map_err(|e| format!("the program does not compile: {}", e.message()))?;
            let request =
                crate::protocol::request::Request::from_proto(req).map_err(|e| e.to_string())?;
            let inputs = Inputs::from_request(&request);
            black_box(evaluate(&program, &inputs, limits).is_ok());
            if cold {
                timed(n, tick, || {
                    let p = crate::lower::ir::compile_txtar(black_box(&input.hcl));
                    black_box(p.map(|p| evaluate(&p, &inputs, limits).is_ok()))
                })
            } else {
                timed(n, tick, || {
                    black_box(evaluate(&program, black_box(&inputs), limits))
                })
            }
        }
    };
    progress.done();
    let per = |x: f64| x / n as f64;
    Ok(Report {
        n,
        ns_per_op: per(elapsed.as_nanos() as f64),
        allocs_per_op: per(allocs as f64),
        bytes_per_op: per(bytes as f64),
    })
}

/// Runs `f` `n` times; the elapsed time and the allocations counted meanwhile. `tick`
/// counts the iterations for the progress line (when one is shown).
fn timed<T>(
    n: u64,
    tick: Option<&std::sync::atomic::AtomicU64>,
    mut f: impl FnMut() -> T,
) -> (Duration, u64, u64) {
    let (elapsed, allocs, bytes) = measure(|| {
        let start = Instant::now();
        for _ in 0..n {
            drop(black_box(f()));
            if let Some(t) = tick {
                t.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
        }
        start.elapsed()
    });
    (elapsed, allocs, bytes)
}

/// The library's unit tests count allocations too, so that counting itself is tested.
#[cfg(test)]
#[global_allocator]
static TEST_ALLOC: CountingAlloc = CountingAlloc;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_layout_gets_its_alignment() {
        // The plain mi_malloc path and the aligned one, at and around the 16-byte switch;
        // sizes below their alignment too (a valid Layout), whose growth by `realloc` moves
        // a block made by the aligned path to the plain one.
        for align in [1usize, 2, 4, 8, 16, 32, 64, 4096] {
            for size in [1usize, 2, 3, 8, 12, 16, 24, 48, 100, 4096, 70_000] {
                let Ok(layout) = Layout::from_size_align(size, align) else {
                    continue;
                };
                // SAFETY: a nonzero size; every block is freed with the layout it has.
                unsafe {
                    let p = CountingAlloc.alloc(layout);
                    assert!(
                        !p.is_null() && (p as usize).is_multiple_of(align),
                        "{layout:?}"
                    );
                    let z = CountingAlloc.alloc_zeroed(layout);
                    assert!((z as usize).is_multiple_of(align), "{layout:?}");
                    assert!(std::slice::from_raw_parts(z, size).iter().all(|&b| b == 0));
                    let grown = size * 3;
                    let q = CountingAlloc.realloc(p, layout, grown);
                    assert!(
                        !q.is_null() && (q as usize).is_multiple_of(align),
                        "{layout:?} -> {grown}"
                    );
                    CountingAlloc.dealloc(q, Layout::from_size_align(grown, align).unwrap());
                    CountingAlloc.dealloc(z, layout);
                }
            }
        }
    }

    fn request() -> v1::RunFunctionRequest {
        let text = r#"{
  "observed": {"composite": {"resource": {"apiVersion": "x/v1", "kind": "X",
     "metadata": {"name": "demo"}, "spec": {"region": "eu"}}}},
  "input": {"apiVersion": "function-hcl/v1", "kind": "HclInput", "source": "Inline",
     "hcl": "-- main.hcl --\nresource a {\n  body = {\n    apiVersion = \"v1\"\n    kind = \"ConfigMap\"\n    metadata = { name = \"${req.composite.metadata.name}-a\" }\n    data = { region = req.composite.spec.region }\n  }\n}\n"}
}"#;
        crate::protocol::protojson::request_from_text(text).unwrap()
    }

    #[test]
    fn every_mode_reports_time_per_iteration() {
        let req = request();
        for mode in [Mode::Wire, Mode::Handler, Mode::Eval] {
            for cold in [false, true] {
                let r = bench_request(&req, mode, cold, 3, default_limits()).unwrap();
                assert_eq!(r.n, 3);
                assert!(r.ns_per_op > 0.0, "{mode:?} cold={cold}: {r}");
                assert!(r.allocs_per_op >= 1.0, "{mode:?} cold={cold}: {r}");
                assert!(
                    r.bytes_per_op >= r.allocs_per_op,
                    "{mode:?} cold={cold}: {r}"
                );
            }
        }
    }

    #[test]
    fn a_program_that_does_not_compile_is_an_error_in_eval_mode() {
        let mut req = request();
        let input = req.input.as_mut().unwrap();
        input.fields.insert(
            "hcl".into(),
            prost_types::Value {
                kind: Some(prost_types::value::Kind::StringValue(
                    "-- main.hcl --\nresource {\n".into(),
                )),
            },
        );
        let e = bench_request(&req, Mode::Eval, false, 1, default_limits()).unwrap_err();
        assert!(e.contains("does not compile"), "{e}");
        // The handler answers with a Fatal response instead, which `run` points out.
        assert!(fatal_message(&crate::handler::run_function(&req)).is_some());
    }

    #[test]
    fn measure_counts_allocations_and_bytes() {
        // Only this thread's allocations count, however many other tests run meanwhile:
        // one of 100 bytes, then its growth to 300 (a reallocation counts as one).
        let (v, allocs, bytes) = measure(|| {
            let mut v = Vec::<u8>::with_capacity(100);
            v.extend_from_slice(&[1u8; 100]);
            v.reserve_exact(200);
            v.extend_from_slice(&[2u8; 200]);
            v
        });
        assert_eq!(v.len(), 300);
        assert_eq!((allocs, bytes), (2, 400));
        // Another thread's allocations do not count (starting it allocates a little here).
        let ((), _, bytes) = measure(|| {
            std::thread::scope(|s| {
                s.spawn(|| black_box(vec![0u8; 4096]));
            })
        });
        assert!(bytes < 4096, "{bytes}");
    }

    #[test]
    fn report_line() {
        let r = Report {
            n: 10,
            ns_per_op: 1234.4,
            allocs_per_op: 12.0,
            bytes_per_op: 4096.0,
        };
        assert_eq!(r.to_string(), "10\t1234 ns/op\t12 allocs/op\t4096 B/op");
    }

    #[test]
    fn unreadable_request_is_an_error() {
        let args = BenchArgs {
            request: "/nonexistent/request.yaml".into(),
            n: 1,
            mode: Mode::Wire,
            cold: false,
            max_evaluation_time: Duration::from_secs(1),
            body_cache_mib: crate::protocol::body_cache::DEFAULT_MAX_BYTES >> 20,
        };
        assert!(run(&args).is_err());
    }

    #[test]
    fn the_evaluation_time_budget_is_the_flags() {
        let hcl = "-- main.hcl --\nlocals {\n  xs = [for i in range(1000) : [for j in range(1000) : i * j]]\n}\nresource r {\n  body = { apiVersion = \"v1\", kind = \"C\", n = length(xs) }\n}\n";
        let req = serde_json::json!({
            "input": { "apiVersion": "function-hcl/v1", "kind": "HclInput", "source": "Inline", "hcl": hcl },
            "observed": { "composite": { "resource": { "apiVersion": "v1", "kind": "XR" } } },
        });
        let path = std::env::temp_dir().join(format!("fn-hcl-bench-{}.json", std::process::id()));
        std::fs::write(&path, req.to_string()).expect("write the request");
        let args = |t: Duration| BenchArgs {
            request: path.display().to_string(),
            n: 1,
            mode: Mode::Wire,
            cold: false,
            max_evaluation_time: t,
            body_cache_mib: crate::protocol::body_cache::DEFAULT_MAX_BYTES >> 20,
        };
        let short = run(&args(Duration::from_nanos(1))).expect("runs");
        let long = run(&args(Duration::from_secs(600))).expect("runs");
        std::fs::remove_file(&path).ok();
        assert!(
            short.contains("evaluation took longer than 0 ms"),
            "{short}"
        );
        assert!(!long.contains("warning"), "{long}");
    }
}
