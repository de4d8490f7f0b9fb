//! The lexer must accept any UTF-8 text: end with one Eof token, never panic, and
//! produce tokens in order that stay inside the input.
#![no_main]

use fn_hcl::lexer::{TokenKind, check_invalid_tokens, tokenize};
use fn_hcl::span::FileId;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let toks = tokenize(text, FileId(0));
    assert_eq!(toks.last().map(|t| t.kind), Some(TokenKind::Eof));
    let mut prev = 0;
    for t in &toks {
        assert!(t.span.start.byte <= t.span.end.byte);
        assert!(prev <= t.span.start.byte);
        assert!(text.get(t.span.bytes()).is_some());
        prev = t.span.end.byte;
    }
    let _ = check_invalid_tokens(&toks);
});
