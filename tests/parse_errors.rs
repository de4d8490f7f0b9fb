//! Malformed inputs beyond the fixtures (tests/errors/parse/, run by error_fixtures.rs):
//! generated hostile inputs (deep nesting, huge strings, NUL bytes) must fail cleanly or
//! parse, never crash.

mod common;

use common::{parse, parse_expr};

#[test]
fn conformance_parse_error_cases() {
    assert_eq!(
        parse("locals {\n  name = req.composite.metadata.name\n}\n\nresource cm {\n  body = {\n    apiVersion = \"v1\"\n    kind       = \"ConfigMap\"\n    metadata   = { name = name\n  }\n}\n").unwrap_err(),
        "main.hcl:5,13-14: Unclosed configuration block; There is no closing brace for this block before the end of the file. This may be caused by incorrect brace nesting elsewhere in this file."
    );
    assert_eq!(
        parse("locals {\n  broken = \"unterminated\n}\n").unwrap_err(),
        "main.hcl:2,25-3,1: Invalid multi-line string; Quoted strings may not be split over multiple lines. To produce a multi-line string, either use the \\n escape to represent a newline character or use the \"heredoc\" multi-line template syntax., and 2 other diagnostic(s)"
    );
}

fn run_big<F: FnOnce() + Send + 'static>(f: F) {
    // Run on a thread with a modest stack, like a tokio worker, to prove no recursion
    // depends on input size.
    let h = std::thread::Builder::new()
        .stack_size(2 * 1024 * 1024)
        .spawn(f)
        .expect("spawn");
    h.join().expect("no panic, no overflow");
}

#[test]
fn deep_brackets_are_rejected_cleanly() {
    run_big(|| {
        for open in ["[", "(", "{a=", "\"${", "-", "!", "x[", "f("] {
            let src = format!("a = {}1\n", open.repeat(100_000));
            let err = parse(&src).unwrap_err();
            assert!(
                err.contains("Nesting too deep") || err.contains("Expression too complex"),
                "{open}: {}",
                &err[..err.len().min(300)]
            );
        }
        let blocks = format!("{}\n", "b {\n".repeat(100_000));
        assert!(parse(&blocks).unwrap_err().contains("Nesting too deep"));
        let tmpl = format!("a = \"{}\"\n", "%{ if x }".repeat(100_000));
        assert!(parse(&tmpl).unwrap_err().contains("Nesting too deep"));
    });
}

#[test]
fn nesting_limit_position() {
    let ok = format!("a = {}1{}\n", "[".repeat(200), "]".repeat(200));
    assert!(parse(&ok).is_ok());
    let bad = format!("a = {}1{}\n", "[".repeat(300), "]".repeat(300));
    let err = parse(&bad).unwrap_err();
    assert!(
        err.starts_with("main.hcl:1,261-262: Nesting too deep; "),
        "{}",
        &err[..200.min(err.len())]
    );
}

#[test]
fn long_chains_are_rejected_cleanly() {
    run_big(|| {
        let sum = format!("a = {}1\n", "1 + ".repeat(100_000));
        assert!(parse(&sum).unwrap_err().contains("Expression too complex"));
        let attrs = format!("a = x{}\n", ".y".repeat(100_000));
        assert!(
            parse(&attrs)
                .unwrap_err()
                .contains("Expression too complex")
        );
        let splat = format!("a = x.*{}\n", ".y".repeat(100_000));
        assert!(
            parse(&splat)
                .unwrap_err()
                .contains("Expression too complex")
        );
        let full = format!("a = x{}\n", "[*]".repeat(100_000));
        assert!(parse(&full).is_err());
        let idx = format!("a = x{}\n", "[0]".repeat(100_000));
        assert!(parse(&idx).unwrap_err().contains("Expression too complex"));
        // Moderate chains are fine.
        let ok = format!("a = {}1\n", "1 + ".repeat(500));
        assert!(parse(&ok).is_ok());
    });
}

#[test]
fn huge_string_parses() {
    run_big(|| {
        let s = "x".repeat(10 * 1024 * 1024);
        let src = format!("a = \"{s}\"\n");
        let f = parse(&src).expect("parses");
        assert_eq!(f.body.items.len(), 1);
        let unterminated = format!("a = \"{s}");
        assert!(
            parse(&unterminated)
                .unwrap_err()
                .contains("Unterminated template string")
        );
    });
}

#[test]
fn oversized_file_is_rejected() {
    let src = format!(
        "a = \"{}\"\n",
        "x".repeat(fn_hcl::syntax::parser::MAX_INPUT_BYTES)
    );
    let err = parse(&src).unwrap_err();
    assert!(
        err.starts_with("main.hcl:1,1-1: Input too large; "),
        "{err}"
    );
}

#[test]
fn nul_bytes() {
    assert_eq!(
        parse("a = 1\0\n").unwrap_err(),
        "main.hcl:1,6-7: Invalid character; This character is not used within the language., and 1 other diagnostic(s)"
    );
    // Inside a string a NUL is ordinary text.
    assert!(parse("a = \"x\0y\"\n").is_ok());
}

#[test]
fn extra_characters_after_expression() {
    assert_eq!(
        parse_expr("a b").unwrap_err(),
        "expr.hcl:1,3-4: Extra characters after expression; An expression was successfully parsed, but extra characters were found after it."
    );
}

#[test]
fn arbitrary_bytes_never_panic() {
    // A small deterministic sweep over short inputs built from tricky fragments.
    let frags = [
        "a", "=", "\"", "${", "%{", "}", "~}", "{", "[", "(", ")", "]", "<<EOT\n", "EOT\n", "\n",
        "/*", "*/", "#", "1.", ".", "*", "\\", "for", "in", ":", "if", "endif", "?", "...", "é",
        "\r\n", "<<-X\n", "X", "$", "%",
    ];
    let mut n = 0u64;
    for a in &frags {
        for b in &frags {
            for c in &frags {
                let src = format!("{a}{b}{c}{a}");
                let _ = parse(&src);
                let _ = parse_expr(&src);
                n += 1;
            }
        }
    }
    assert!(n > 1000);
}
