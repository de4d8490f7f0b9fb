//! Fuzz target `structured`: well-formed programs and requests generated from the fuzz
//! input (`structured_gen`), run through the server's entry under the default budgets
//! (`checks::structured`), with the memory each case takes measured by a counting
//! allocator: an evaluation may not take more than [`MAX_PEAK_BYTES`] beyond what the
//! request itself holds, whatever the program makes of it.
#![no_main]

#[path = "checks.rs"]
mod checks;
#[path = "structured_gen.rs"]
mod structured_gen;

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Bytes live now, and the most live since the last reset.
static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

struct Counting;

// SAFETY: every call is forwarded to the system allocator unchanged; only counters move.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let now = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            if new_size >= layout.size() {
                let grow = new_size - layout.size();
                let now = LIVE.fetch_add(grow, Ordering::Relaxed) + grow;
                PEAK.fetch_max(now, Ordering::Relaxed);
            } else {
                LIVE.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
            }
        }
        p
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// What one case may allocate beyond the live bytes at its start and its request: the
/// default memory budget (64 MiB of strings and 4,000,000 elements) bounds an evaluation's
/// values, strings and response at about twice 64 MiB (docs/limits.md); the case runs
/// three evaluations one after the other and keeps the first answer while it runs the
/// others, so four times that is the bound.
const MAX_PEAK_BYTES: usize = 4 * 128 << 20;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let case = structured_gen::case(data);
    if std::env::var_os("FN_HCL_FUZZ_PRINT").is_some() {
        eprintln!("{}", case.program);
    }
    let start = LIVE.load(Ordering::Relaxed);
    PEAK.store(start, Ordering::Relaxed);
    let rsp = checks::structured(&case.request, fn_hcl::handler::default_limits());
    let peak = PEAK.load(Ordering::Relaxed).saturating_sub(start);
    let request_bytes = prost::Message::encoded_len(&case.request);
    if std::env::var_os("FN_HCL_FUZZ_STATS").is_some() {
        let fatal = rsp
            .as_ref()
            .and_then(checks::fatal_message)
            .map(|m| m.chars().take(160).collect::<String>());
        eprintln!("stats peak={peak} request={request_bytes} fatal={fatal:?}");
    }
    assert!(
        peak <= MAX_PEAK_BYTES + 16 * request_bytes,
        "a case took {peak} bytes (request {request_bytes} bytes)"
    );
});
