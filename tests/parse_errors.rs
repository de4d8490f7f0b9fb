//! Malformed inputs: each must fail with hcl's diagnostic text and range, printed the way
//! function-hcl prints them (hcl's `Diagnostics.Error()`), and hostile inputs (deep
//! nesting, huge strings, NUL bytes) must fail cleanly or parse, never crash.

mod common;

use common::{parse, parse_expr};

/// (source, hcl's `Diagnostics.Error()` text). Each expectation was derived by walking
/// hashicorp/hcl v2.24's parser.go / parser_template.go / token.go on the input.
const CASES: &[(&str, &str)] = &[
    (
        "a = \"abc",
        "main.hcl:1,9-9: Unterminated template string; No closing marker was found for the string.",
    ),
    (
        "a = \"${x\"",
        "main.hcl:1,6-8: Unclosed template interpolation sequence; There is no closing brace for this interpolation sequence before the end of the quoted template. This might be caused by incorrect nesting inside the given expression.",
    ),
    (
        "a = <<EOT\nhello",
        "main.hcl:2,6-6: Unterminated template string; No closing marker was found for the string.",
    ),
    (
        "a = 1\n/* comment",
        "main.hcl:2,1-2: Argument or block definition required; An argument or block definition is required here.",
    ),
    (
        "resource \"x\" {\n  a = 1",
        "main.hcl:1,14-15: Unclosed configuration block; There is no closing brace for this block before the end of the file. This may be caused by incorrect brace nesting elsewhere in this file.",
    ),
    (
        "a = \"\\q\"",
        "main.hcl:1,6-8: Invalid escape sequence; The symbol \"q\" is not a valid escape sequence selector.",
    ),
    (
        "a =\n",
        "main.hcl:1,4-2,1: Invalid expression; Expected the start of an expression, but found an invalid expression token.",
    ),
    (
        "a = ",
        "main.hcl:1,5-5: Missing expression; Expected the start of an expression, but found the end of the file.",
    ),
    (
        "a = 1 2",
        "main.hcl:1,7-8: Missing newline after argument; An argument definition must end with a newline.",
    ),
    (
        "a = 1.2.3",
        "main.hcl:1,5-10: Invalid number literal; Failed to recognize the value of this number literal.",
    ),
    (
        "resource 1 {}",
        "main.hcl:1,1-9: Argument or block definition required; An argument or block definition is required here. To set an argument, use the equals sign \"=\" to introduce the argument value.",
    ),
    (
        "a = 1, b = 2",
        "main.hcl:1,6-7: Unexpected comma after argument; Argument definitions must be separated by newlines, not commas. An argument definition must end with a newline.",
    ),
    (
        "\"a\" = 1",
        "main.hcl:1,1-2: Invalid argument name; Argument names must not be quoted.",
    ),
    (
        "a b",
        "main.hcl:1,4-4: Invalid block definition; Either a quoted string block label or an opening brace (\"{\") is expected here.",
    ),
    (
        "a = [1, 2",
        "main.hcl:1,5-6: Unterminated tuple constructor expression; There is no corresponding closing bracket before the end of the file. This may be caused by incorrect bracket nesting elsewhere in this file.",
    ),
    (
        "a = {b = 1",
        "main.hcl:1,5-6: Unterminated object constructor expression; There is no corresponding closing brace before the end of the file. This may be caused by incorrect brace nesting elsewhere in this file.",
    ),
    (
        "a = {b 1}",
        "main.hcl:1,8-9: Missing key/value separator; Expected an equals sign (\"=\") to mark the beginning of the attribute value.",
    ),
    (
        "a = {b}",
        "main.hcl:1,7-8: Missing key/value separator; Expected an equals sign (\"=\") to mark the beginning of the attribute value.",
    ),
    (
        "a = f(1 2)",
        "main.hcl:1,9-10: Missing argument separator; A comma is required to separate each function argument from the next.",
    ),
    (
        "a = f(1",
        "main.hcl:1,5-7: Unterminated function call; There is no closing parenthesis for this function call before the end of the file. This may be caused by incorrect parenthesis nesting elsewhere in this file.",
    ),
    (
        "a = (1 + 2",
        "main.hcl:1,11-11: Unbalanced parentheses; Expected a closing parenthesis to terminate the expression.",
    ),
    (
        "a = x.",
        "main.hcl:1,7-7: Invalid attribute name; An attribute name is required after a dot.",
    ),
    (
        "a = x ? y",
        "main.hcl:1,10-10: Missing false expression in conditional; The conditional operator (...?...:...) requires a false expression, delimited by a colon.",
    ),
    (
        "a = [for x in y]",
        "main.hcl:1,16-17: Invalid 'for' expression; For expression requires a colon after the collection expression.",
    ),
    (
        "a = {for x in y : x}",
        "main.hcl:1,19-20: Invalid 'for' expression; Key expression is required when building an object.",
    ),
    (
        "a = \"%{ if x }a\"",
        "main.hcl:1,16-17: Unexpected end of template; The if directive at main.hcl:1,6-15 is missing its corresponding endif directive.",
    ),
    (
        "a = \"%{ endif }\"",
        "main.hcl:1,6-16: Unexpected endif directive; The control directives within this template are unbalanced.",
    ),
    (
        "a = \"%{ iff x }\"",
        "main.hcl:1,9-12: Invalid template control keyword; \"iff\" is not a valid template control keyword. Did you mean \"if\"?",
    ),
    (
        "a = 'x'",
        "main.hcl:1,5-6: Invalid character; Single quotes are not valid. Use double quotes (\") to enclose strings., and 1 other diagnostic(s)",
    ),
    (
        "a = 1 @",
        "main.hcl:1,7-8: Invalid character; This character is not used within the language., and 1 other diagnostic(s)",
    ),
    (
        "a = \"\\u00\"",
        "main.hcl:1,6-10: Invalid escape sequence; The \\u escape sequence must be followed by four hexadecimal digits.",
    ),
    (
        "a = 1\na = 2",
        "main.hcl:2,1-2: Attribute redefined; The argument \"a\" was already set at main.hcl:1,1-2. Each argument may be set only once.",
    ),
    (
        "a = x[*",
        "main.hcl:1,8-8: Missing close bracket on splat index; The star for a full splat operator must be immediately followed by a closing bracket (\"]\").",
    ),
    (
        "a = x[1",
        "main.hcl:1,8-8: Missing close bracket on index; The index operator must end with a closing bracket (\"]\").",
    ),
    (
        "b { a = 1\n}",
        "main.hcl:1,10-2,1: Invalid single-argument block definition; An argument definition on the same line as its containing block creates a single-line block definition, which must also be closed on the same line. Place the block's closing brace immediately after the argument definition.",
    ),
    (
        "a = x.0.1",
        "main.hcl:1,7-10: Invalid legacy index syntax; When using the legacy index syntax, chaining two indexes together is not permitted. Use the proper index syntax instead, like [0][1].",
    ),
    (
        "a = \"${x:y}\"",
        "main.hcl:1,9-10: Extra characters after interpolation expression; Template interpolation doesn't expect a colon at this location. Did you intend this to be a literal sequence to be processed as part of another language? If so, you can escape it by starting with \"$${\" instead of just \"${\".",
    ),
    (
        "a = 1 ** 2",
        "main.hcl:1,8-9: Invalid expression; Expected the start of an expression, but found an invalid expression token.",
    ),
    (
        "a = 1;",
        "main.hcl:1,6-7: Invalid character; The \";\" character is not valid. Use newlines to separate arguments and blocks, and commas to separate items in collection values., and 1 other diagnostic(s)",
    ),
    (
        "a = <<EOT x",
        "main.hcl:1,5-6: Invalid expression; Expected the start of an expression, but found an invalid expression token.",
    ),
    (
        "resource \"a\" \"b\" = {}",
        "main.hcl:1,18-19: Invalid block definition; The equals sign \"=\" indicates an argument definition, and must not be used when defining a block.",
    ),
    (
        "resource \"a\" \"b\"\n{\n}",
        "main.hcl:1,17-2,1: Invalid block definition; A block definition must have block content delimited by \"{\" and \"}\", starting on the same line as the block header.",
    ),
    (
        "b { a = 1, c = 2 }",
        "main.hcl:1,10-11: Invalid single-argument block definition; Single-line block syntax can include only one argument definition. To define multiple arguments, use the multi-line block syntax with one argument definition per line.",
    ),
    (
        "b { c {} }",
        "main.hcl:1,5-8: Argument definition required; A single-line block definition can contain only a single argument. If you meant to define argument \"c\", use an equals sign to assign it a value. To define a nested block, place it on a line of its own within its parent block.",
    ),
    (
        "a = \"${x} ${\"",
        "main.hcl:1,14-14: Unterminated template string; No closing marker was found for the string.",
    ),
    (
        "a = \"\\U0011FFFF\"",
        "main.hcl:1,6-16: Invalid escape sequence; Cannot encode character U+11ffff in UTF-8.",
    ),
    (
        "a = x.*.*",
        "main.hcl:1,9-10: Nested splat expression not allowed; A splat expression (*) cannot be used inside another attribute-only splat expression.",
    ),
    (
        "a = !",
        "main.hcl:1,6-6: Missing expression; Expected the start of an expression, but found the end of the file.",
    ),
    (
        "a = f::",
        "main.hcl:1,8-8: Missing function name; Function scope resolution symbol :: must be followed by a function name in this scope.",
    ),
    (
        "a = [for x in y : x...]",
        "main.hcl:1,20-23: Invalid 'for' expression; Grouping ellipsis (...) cannot be used when building a tuple.",
    ),
    (
        "a = [for k, v in y : k => v]",
        "main.hcl:1,22-23: Invalid 'for' expression; Key expression is not valid when building a tuple.",
    ),
    (
        "resource \"x\" \"${y}\" {}",
        "main.hcl:1,15-17: Invalid string literal; Template sequences are not allowed in this string. To include a literal \"$\", double it (as \"$$\") to escape it.",
    ),
    (
        "a = \"x\" \"y\"",
        "main.hcl:1,9-10: Missing newline after argument; An argument definition must end with a newline.",
    ),
    (
        "a = \"%{ else }\"",
        "main.hcl:1,6-15: Unexpected else directive; The control directives within this template are unbalanced.",
    ),
    (
        "a = \"%{ if x }%{ endfor }\"",
        "main.hcl:1,15-26: Unexpected endfor directive; Expecting an endif directive for the if started at main.hcl:1,6-15.",
    ),
    (
        "a = \"%{ for x y }\"",
        "main.hcl:1,15-16: Invalid 'for' directive; For directive requires 'in' keyword after names.",
    ),
    (
        "a = x[*].y[",
        "main.hcl:1,12-12: Missing expression; Expected the start of an expression, but found the end of the file.",
    ),
    (
        "a = {\n  b = 1,,\n}\n",
        "main.hcl:2,9-10: Invalid expression; Expected the start of an expression, but found an invalid expression token.",
    ),
];

#[test]
fn malformed_inputs_fail_like_hcl() {
    let mut failures = Vec::new();
    for (src, want) in CASES {
        let got = match parse(src) {
            Ok(_) => "OK".to_string(),
            Err(e) => e,
        };
        if &got != want {
            failures.push(format!("input {src:?}\n  want {want}\n  got  {got}"));
        }
    }
    assert!(CASES.len() >= 25);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

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
