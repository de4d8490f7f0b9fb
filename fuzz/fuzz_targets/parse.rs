//! The parser must turn any input (also txtar archives and invalid UTF-8) into a tree or
//! diagnostics without panicking, overflowing the stack or hanging.
#![no_main]

use fn_hcl::diag::{plain_all, render_rich};
use fn_hcl::parser::{parse_expression, parse_file};
use fn_hcl::span::SourceMap;
use fn_hcl::txtar;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = txtar::parse_bytes(data);
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut sm = SourceMap::new();
    let f = sm.add("main.hcl", text);
    if let Err(diags) = parse_file(&sm, f) {
        assert!(!diags.is_empty());
        let _ = plain_all(&diags, &sm);
        let _ = render_rich(&diags, &sm);
    }
    let _ = parse_expression(&sm, f);
});
