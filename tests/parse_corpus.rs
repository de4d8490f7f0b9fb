//! Every HCL text the project has: `hcl` code blocks of the spec and the reference docs,
//! the examples' `main.hcl`, and the HCL sections of the conformance cases. Each must
//! parse, except the snippets listed in `EXPECTED_FAILURES` (deliberately broken, or
//! fragments that are not a whole file), which must fail exactly as recorded.
//!
//! The shared corpus is found by `common::shared_dir` (missing: a loud skip, a failure
//! under CI=true).

mod common;

use common::{hcl_corpus, shared_dir};

use fn_hcl::syntax::diag::plain_all;
use fn_hcl::syntax::parser::parse_file;
use fn_hcl::syntax::span::SourceMap;

/// (source label, first diagnostic line as function-hcl prints it) for snippets that
/// are meant to fail. The label is `<relative path>#<n>` for the n-th hcl block of a
/// markdown file, or `<case file>:<section>`.
const EXPECTED_FAILURES: &[(&str, &str)] = &[
    // Conformance cases whose recorded response is this parse error.
    (
        "conformance/cases/input-parse-error.txtar:main.hcl",
        "main.hcl:5,13-14: Unclosed configuration block; There is no closing brace for this block before the end of the file. This may be caused by incorrect brace nesting elsewhere in this file.",
    ),
    (
        "conformance/cases/input-parse-error-second-file.txtar:b.hcl",
        "b.hcl:2,25-3,1: Invalid multi-line string; Quoted strings may not be split over multiple lines. To produce a multi-line string, either use the \\n escape to represent a newline character or use the \"heredoc\" multi-line template syntax., and 2 other diagnostic(s)",
    ),
    // Documentation snippets that are not whole HCL files: `<placeholder>` syntax,
    // `{ ... }` elisions, bare expressions, and (gotchas #5, locals-duplicate-same-block)
    // a deliberately repeated argument, which hcl rejects at parse time.
    (
        "conformance/cases/locals-duplicate-same-block.txtar:main.hcl",
        "main.hcl:3,3-7: Attribute redefined; The argument \"name\" was already set at main.hcl:2,3-7. Each argument may be set only once.",
    ),
    (
        "reference-docs/language-guide/composite-connection.md#1",
        "main.hcl:3,5-6: Invalid expression; Expected the start of an expression, but found an invalid expression token.",
    ),
    (
        "reference-docs/language-guide/composite-connection.md#3",
        "main.hcl:2,12-15: Invalid expression; Expected the start of an expression, but found an invalid expression token.",
    ),
    (
        "reference-docs/language-guide/composite-status.md#2",
        "main.hcl:2,12-15: Invalid expression; Expected the start of an expression, but found an invalid expression token.",
    ),
    (
        "reference-docs/language-guide/composite-status.md#3",
        "main.hcl:2,12-15: Invalid expression; Expected the start of an expression, but found an invalid expression token.",
    ),
    (
        "reference-docs/language-guide/conditions.md#2",
        "main.hcl:6,14-17: Invalid expression; Expected the start of an expression, but found an invalid expression token.",
    ),
    (
        "reference-docs/language-guide/conditions.md#3",
        "main.hcl:4,36-39: Argument or block definition required; An argument or block definition is required here.",
    ),
    (
        "reference-docs/language-guide/conditions.md#4",
        "main.hcl:5,12-15: Invalid expression; Expected the start of an expression, but found an invalid expression token.",
    ),
    (
        "reference-docs/language-guide/context.md#1",
        "main.hcl:2,11-12: Invalid expression; Expected the start of an expression, but found an invalid expression token.",
    ),
    (
        "reference-docs/language-guide/groups.md#1",
        "main.hcl:2,15-16: Invalid expression; Expected the start of an expression, but found an invalid expression token., and 2 other diagnostic(s)",
    ),
    (
        "reference-docs/language-guide/groups.md#3",
        "main.hcl:4,21-24: Argument or block definition required; An argument or block definition is required here.",
    ),
    (
        "reference-docs/language-guide/hcl-basics.md#4",
        "main.hcl:1,1-2: Invalid argument name; Argument names must not be quoted.",
    ),
    (
        "reference-docs/language-guide/local-variables.md#4",
        "main.hcl:9,12-15: Invalid expression; Expected the start of an expression, but found an invalid expression token.",
    ),
    (
        "reference-docs/language-guide/local-variables.md#5",
        "main.hcl:5,12-15: Invalid expression; Expected the start of an expression, but found an invalid expression token.",
    ),
    (
        "reference-docs/language-guide/requirements.md#1",
        "main.hcl:1,1-12: Argument or block definition required; An argument or block definition is required here. To set an argument, use the equals sign \"=\" to introduce the argument value.",
    ),
    (
        "reference-docs/language-guide/resource-blocks.md#1",
        "main.hcl:1,1-9: Argument or block definition required; An argument or block definition is required here. To set an argument, use the equals sign \"=\" to introduce the argument value.",
    ),
    (
        "reference-docs/language-guide/resource-collections.md#1",
        "main.hcl:1,1-10: Argument or block definition required; An argument or block definition is required here. To set an argument, use the equals sign \"=\" to introduce the argument value.",
    ),
    (
        "reference-docs/language-guide/resource-collections.md#3",
        "main.hcl:6,14-17: Invalid expression; Expected the start of an expression, but found an invalid expression token.",
    ),
    (
        "reference-docs/reference/built-in-functions.md#1",
        "main.hcl:1,1-7: Argument or block definition required; An argument or block definition is required here. To set an argument, use the equals sign \"=\" to introduce the argument value.",
    ),
    (
        "reference-docs/reference/dsl-specification.md#1",
        "main.hcl:2,3-4: Argument or block definition required; An argument or block definition is required here.",
    ),
    (
        "reference-docs/reference/dsl-specification.md#2",
        "main.hcl:1,1-9: Argument or block definition required; An argument or block definition is required here. To set an argument, use the equals sign \"=\" to introduce the argument value.",
    ),
    (
        "reference-docs/reference/dsl-specification.md#3",
        "main.hcl:1,1-10: Argument or block definition required; An argument or block definition is required here. To set an argument, use the equals sign \"=\" to introduce the argument value.",
    ),
    (
        "reference-docs/reference/dsl-specification.md#4",
        "main.hcl:2,15-16: Invalid expression; Expected the start of an expression, but found an invalid expression token., and 1 other diagnostic(s)",
    ),
    (
        "reference-docs/reference/dsl-specification.md#5",
        "main.hcl:2,12-13: Invalid expression; Expected the start of an expression, but found an invalid expression token.",
    ),
    (
        "reference-docs/reference/dsl-specification.md#6",
        "main.hcl:2,12-13: Invalid expression; Expected the start of an expression, but found an invalid expression token.",
    ),
    (
        "reference-docs/reference/dsl-specification.md#7",
        "main.hcl:2,11-12: Invalid expression; Expected the start of an expression, but found an invalid expression token.",
    ),
    (
        "reference-docs/reference/dsl-specification.md#8",
        "main.hcl:1,1-12: Argument or block definition required; An argument or block definition is required here. To set an argument, use the equals sign \"=\" to introduce the argument value.",
    ),
    (
        "reference-docs/reference/dsl-specification.md#9",
        "main.hcl:1,1-9: Argument or block definition required; An argument or block definition is required here. To set an argument, use the equals sign \"=\" to introduce the argument value.",
    ),
    (
        "reference-docs/reference/dsl-specification.md#10",
        "main.hcl:2,11-12: Invalid expression; Expected the start of an expression, but found an invalid expression token.",
    ),
    (
        "reference-docs/tips-and-pitfalls/best-practices.md#3",
        "main.hcl:7,21-24: Argument or block definition required; An argument or block definition is required here.",
    ),
    (
        "reference-docs/tips-and-pitfalls/best-practices.md#4",
        "main.hcl:3,12-15: Invalid expression; Expected the start of an expression, but found an invalid expression token.",
    ),
    (
        "reference-docs/tips-and-pitfalls/best-practices.md#5",
        "main.hcl:6,14-17: Invalid expression; Expected the start of an expression, but found an invalid expression token.",
    ),
    (
        "reference-docs/tips-and-pitfalls/gotchas.md#5",
        "main.hcl:6,3-12: Attribute redefined; The argument \"condition\" was already set at main.hcl:3,3-12. Each argument may be set only once.",
    ),
];

struct Outcome {
    label: String,
    result: Result<(), String>,
}

fn check(label: String, name: &str, text: &str) -> Outcome {
    let mut sm = SourceMap::new();
    let f = sm.add(name, text);
    let result = parse_file(&sm, f)
        .map(|_| ())
        .map_err(|d| plain_all(&d, &sm));
    Outcome { label, result }
}

#[test]
fn every_hcl_text_in_the_corpus_parses() {
    let Some(shared) = shared_dir("parse_corpus") else {
        return;
    };
    let outcomes: Vec<Outcome> = hcl_corpus(&shared)
        .into_iter()
        .map(|(label, name, text)| check(label, &name, &text))
        .collect();

    assert!(
        outcomes.len() > 100,
        "found only {} HCL texts",
        outcomes.len()
    );
    let mut problems = Vec::new();
    for o in &outcomes {
        let expected = EXPECTED_FAILURES.iter().find(|(l, _)| *l == o.label);
        match (&o.result, expected) {
            (Ok(()), None) => {}
            (Err(e), Some((_, want))) if e == want => {}
            (Err(e), None) => problems.push(format!("{}: unexpected error: {e}", o.label)),
            (Ok(()), Some(_)) => problems.push(format!("{}: expected to fail, parsed", o.label)),
            (Err(e), Some((_, want))) => {
                problems.push(format!("{}:\n  want {want}\n  got  {e}", o.label))
            }
        }
    }
    for (label, _) in EXPECTED_FAILURES {
        if !outcomes.iter().any(|o| o.label == *label) {
            problems.push(format!("{label}: listed failure not found in the corpus"));
        }
    }
    eprintln!(
        "parsed {} HCL texts from {}",
        outcomes.len(),
        shared.display()
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
