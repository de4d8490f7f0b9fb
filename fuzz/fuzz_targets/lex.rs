//! Fuzz target `lex`: see `checks::lex` (shared with tests/fuzz_regressions.rs).
#![no_main]

#[path = "checks.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = checks::lex(data);
});
