//! Fuzz target `eval`: see `checks::eval` (shared with tests/fuzz_regressions.rs).
#![no_main]

#[path = "checks.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = checks::eval(data);
});
