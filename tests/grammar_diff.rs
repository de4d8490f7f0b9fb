//! Differential tests: the LR grammar (`fn_hcl::syntax::grammar`) and the hand-written parser
//! (`fn_hcl::syntax::parser::parse_file`) must agree on every input: both accept it and build
//! identical trees (spans included), or both reject it.
//!
//! Inputs: every HCL text of the shared corpus (the `hcl` code blocks of `spec/` and
//! `reference-docs/`, every `.hcl` and every HCL section of the txtar cases under
//! `conformance/`), generated programs (bodies, blocks, every expression form, templates
//! and heredocs, comments and newlines in every position), and mutations of them.
//!
//! The shared corpus is found by `common::shared_dir` (missing: a loud skip, a failure
//! under CI=true).

mod common;

use common::{hcl_corpus, shared_dir};

use fn_hcl::syntax::parser::parse_file as parse_file_hand;
use fn_hcl::syntax::span::SourceMap;
use fn_hcl_grammar as grammar;
use proptest::prelude::*;

/// Ok(true) when both accept with equal trees, Ok(false) when both reject.
fn agree(name: &str, src: &str) -> Result<bool, String> {
    let mut sm = SourceMap::new();
    let f = sm.add(name, src);
    let g = grammar::parse_file(&sm, f);
    let h = parse_file_hand(&sm, f);
    match (g, h) {
        (Ok(g), Ok(h)) => {
            if g == h {
                Ok(true)
            } else {
                Err(format!(
                    "trees differ for {src:?}\n grammar: {g:?}\n hand:    {h:?}"
                ))
            }
        }
        (Err(()), Err(_)) => Ok(false),
        (Ok(_), Err(d)) => Err(format!(
            "grammar accepts, hand parser rejects {src:?}: {}",
            fn_hcl::syntax::diag::plain_all(&d, &sm)
        )),
        (Err(()), Ok(_)) => Err(format!("grammar rejects, hand parser accepts {src:?}")),
    }
}

#[test]
fn corpus_parses_identically() {
    let Some(shared) = shared_dir("grammar_diff") else {
        return;
    };
    let texts = hcl_corpus(&shared);
    assert!(texts.len() > 100, "found only {} HCL texts", texts.len());
    let mut problems = Vec::new();
    let (mut accepted, mut rejected) = (0, 0);
    for (label, name, text) in &texts {
        match agree(name, text) {
            Ok(true) => accepted += 1,
            Ok(false) => rejected += 1,
            Err(e) => problems.push(format!("{label}: {e}")),
        }
    }
    eprintln!("corpus: {accepted} accepted by both, {rejected} rejected by both");
    assert!(accepted > 100, "only {accepted} corpus texts parsed");
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

// ----- generated programs ------------------------------------------------------------------

const NAMES: &[&str] = &["a", "b", "x-y", "req", "for", "in", "if", "null", "true"];
const NUMBERS: &[&str] = &["0", "1", "42", "3.14", "1e3", "2.5e-2"];
const OPS: &[&str] = &[
    "+", "-", "*", "/", "%", "==", "!=", "<", "<=", ">", ">=", "&&", "||",
];
/// Whitespace between tokens inside brackets, where newlines and comments are allowed.
const GAPS: &[&str] = &["", " ", "\n", " # c\n", " /* c */ ", "\n\n", "// c\n"];
const LITS: &[&str] = &[
    "a", "b c", "é", "\\\"", "\\\\", "\\n", "\\u00e9", " ", "$${x}", "%%{y}", "$x", "\\t",
];

fn gap() -> impl Strategy<Value = &'static str> {
    prop::sample::select(GAPS)
}

fn leaf() -> BoxedStrategy<String> {
    prop_oneof![
        prop::sample::select(NAMES).prop_map(str::to_string),
        prop::sample::select(NUMBERS).prop_map(str::to_string),
        prop::collection::vec(prop::sample::select(LITS), 0..3)
            .prop_map(|v| format!("\"{}\"", v.concat())),
    ]
    .boxed()
}

/// Template content: literals, interpolations and directives, with strip markers.
fn template_body(inner: BoxedStrategy<String>, depth: u32) -> BoxedStrategy<String> {
    let lit = prop::sample::select(LITS).prop_map(str::to_string);
    let strip = || prop::sample::select(&["", "~"][..]);
    let interp =
        (strip(), inner.clone(), strip()).prop_map(|(a, e, b)| format!("${{{a} {e} {b}}}"));
    if depth == 0 {
        return prop::collection::vec(prop_oneof![lit, interp], 0..4)
            .prop_map(|v| v.concat())
            .boxed();
    }
    let nested = template_body(inner.clone(), depth - 1);
    let iff = (
        strip(),
        inner.clone(),
        nested.clone(),
        prop::option::of(nested.clone()),
        strip(),
    )
        .prop_map(|(s1, c, t, e, s2)| match e {
            Some(e) => format!("%{{{s1} if {c} {s1}}}{t}%{{ else }}{e}%{{{s2} endif {s2}}}"),
            None => format!("%{{{s1} if {c} }}{t}%{{ endif {s2}}}"),
        });
    let forr =
        (inner, nested).prop_map(|(c, b)| format!("%{{ for k, v in {c} ~}}{b}%{{~ endfor }}"));
    prop::collection::vec(
        prop_oneof![3 => lit, 3 => interp, 1 => iff, 1 => forr],
        0..4,
    )
    .prop_map(|v| v.concat())
    .boxed()
}

fn expr() -> BoxedStrategy<String> {
    leaf()
        .prop_recursive(4, 40, 4, |inner| {
            let list = |inner: BoxedStrategy<String>| {
                prop::collection::vec((gap(), inner, gap()), 0..3).prop_map(|v| {
                    v.into_iter()
                        .map(|(a, e, b)| format!("{a}{e}{b}"))
                        .collect::<Vec<_>>()
                })
            };
            prop_oneof![
                (inner.clone(), prop::sample::select(OPS), inner.clone())
                    .prop_map(|(l, op, r)| format!("{l} {op} {r}")),
                (prop::sample::select(&["-", "!"][..]), inner.clone())
                    .prop_map(|(op, e)| format!("{op}{e}")),
                (inner.clone(), inner.clone(), inner.clone())
                    .prop_map(|(c, t, f)| format!("{c} ? {t} : {f}")),
                (gap(), inner.clone(), gap()).prop_map(|(a, e, b)| format!("({a}{e}{b})")),
                (
                    inner.clone(),
                    prop::sample::select(
                        &[
                            ".b",
                            ".0",
                            ".*.c",
                            "[*].d",
                            ".*",
                            "[*]",
                            ".*.0.e",
                            "[*][0].f[*]"
                        ][..]
                    )
                )
                    .prop_map(|(e, s)| format!("{e}{s}")),
                (inner.clone(), gap(), inner.clone()).prop_map(|(e, g, k)| format!("{e}[{g}{k}]")),
                (list(inner.clone()), any::<bool>()).prop_map(|(v, trailing)| {
                    let mut s = format!("[{}", v.join(","));
                    if trailing && !v.is_empty() {
                        s.push(',');
                    }
                    s.push(']');
                    s
                }),
                (
                    prop::sample::select(&["f", "upper", "ns::g"][..]),
                    list(inner.clone()),
                    any::<bool>()
                )
                    .prop_map(|(n, v, expand)| {
                        let dots = if expand && !v.is_empty() { "..." } else { "" };
                        format!("{n}({}{dots})", v.join(","))
                    }),
                (
                    prop::collection::vec(
                        (
                            prop_oneof![
                                prop::sample::select(NAMES).prop_map(str::to_string),
                                inner.clone().prop_map(|k| format!("({k})")),
                                Just("\"k\"".to_string()),
                            ],
                            prop::sample::select(&[" = ", ": "][..]),
                            inner.clone(),
                            prop::sample::select(&[",", "\n", ",\n", "\n\n", " # c\n"][..]),
                        ),
                        0..3
                    ),
                    prop::sample::select(&["", "\n"][..]),
                )
                    .prop_map(|(items, lead)| {
                        let body: String = items
                            .into_iter()
                            .map(|(k, s, v, sep)| format!("{k}{s}{v}{sep}"))
                            .collect();
                        format!("{{{lead}{body}}}")
                    }),
                (
                    gap(),
                    inner.clone(),
                    inner.clone(),
                    prop::option::of(inner.clone())
                )
                    .prop_map(|(g, c, v, cond)| {
                        let cond = cond.map(|c| format!(" if {c}")).unwrap_or_default();
                        format!("[{g}for k, v in {c} :{g}{v}{cond}]")
                    }),
                (
                    gap(),
                    inner.clone(),
                    inner.clone(),
                    inner.clone(),
                    any::<bool>()
                )
                    .prop_map(|(g, c, k, v, group)| {
                        let dots = if group { "..." } else { "" };
                        format!("{{{g}for v in {c} : {k} =>{g}{v}{dots}}}")
                    }),
                template_body(inner.clone(), 1).prop_map(|t| format!("\"{t}\"")),
                (
                    prop::sample::select(&["<<EOT", "<<-EOT"][..]),
                    template_body(inner.clone(), 1)
                )
                    .prop_map(|(intro, t)| {
                        let t = t.replace("\\n", "\n").replace(['"', '\\'], "");
                        format!("[{intro}\n    {t}\n  line two\n  EOT\n]")
                    }),
            ]
        })
        .boxed()
}

fn body(depth: u32) -> BoxedStrategy<String> {
    let attr = (
        prop::sample::select(NAMES),
        expr(),
        prop::sample::select(&["\n", " # c\n", "\n\n"][..]),
    )
        .prop_map(|(n, e, end)| format!("{n} = {e}{end}"));
    let one_line =
        (prop::sample::select(NAMES), expr()).prop_map(|(n, e)| format!("blk {{ {n} = {e} }}\n"));
    let comment =
        prop::sample::select(&["# note\n", "\n", "/* block */\n"][..]).prop_map(str::to_string);
    if depth == 0 {
        return prop::collection::vec(prop_oneof![4 => attr, 1 => one_line, 1 => comment], 0..4)
            .prop_map(|v| v.concat())
            .boxed();
    }
    let block = (
        prop::sample::select(&["blk", "resource", "for"][..]),
        prop::sample::select(&["", " x", " \"y\"", " a \"b c\""][..]),
        body(depth - 1),
    )
        .prop_map(|(kind, labels, b)| format!("{kind}{labels} {{\n{b}}}\n"));
    prop::collection::vec(
        prop_oneof![4 => attr, 1 => one_line, 1 => comment, 2 => block],
        0..4,
    )
    .prop_map(|v| v.concat())
    .boxed()
}

/// Small edits that usually break a program: delete, duplicate or insert a token.
fn mutate(src: &str, at: usize, kind: u8) -> String {
    let chars: Vec<char> = src.chars().collect();
    if chars.is_empty() {
        return "}".to_string();
    }
    let i = at % chars.len();
    let mut out: Vec<char> = chars.clone();
    match kind % 4 {
        0 => {
            out.remove(i);
        }
        1 => out.insert(i, chars[i]),
        2 => {
            let ins = [
                "\n", "{", "}", "(", "]", ",", "=", "for ", "\"", "${", "%{", "~", ".",
            ];
            let s = ins[(at / chars.len().max(1)) % ins.len()];
            for (j, c) in s.chars().enumerate() {
                out.insert(i + j, c);
            }
        }
        _ => {
            let end = (i + 3).min(out.len());
            out.drain(i..end);
        }
    }
    out.into_iter().collect()
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 160,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn generated_programs_parse_identically(src in body(2)) {
        agree("gen.hcl", &src).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn mutated_programs_agree(src in body(1), at in any::<usize>(), kind in any::<u8>()) {
        let m = mutate(&src, at, kind);
        agree("mut.hcl", &m).map_err(TestCaseError::fail)?;
    }
}

/// Like [`agree`], for standalone expressions (hcl's `ParseExpression`).
fn agree_expr(src: &str) -> Result<bool, String> {
    let mut sm = SourceMap::new();
    let f = sm.add("expr.hcl", src);
    match (
        grammar::parse_expression(&sm, f),
        fn_hcl::syntax::parser::parse_expression(&sm, f),
    ) {
        (Ok(g), Ok(h)) if g == h => Ok(true),
        (Ok(g), Ok(h)) => Err(format!(
            "trees differ for {src:?}\n grammar: {g:?}\n hand:    {h:?}"
        )),
        (Err(()), Err(_)) => Ok(false),
        (Ok(_), Err(_)) => Err(format!("grammar accepts, hand parser rejects {src:?}")),
        (Err(()), Ok(_)) => Err(format!("grammar rejects, hand parser accepts {src:?}")),
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 160,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn generated_expressions_parse_identically(src in expr()) {
        agree_expr(&src).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn mutated_expressions_agree(src in expr(), at in any::<usize>(), kind in any::<u8>()) {
        agree_expr(&mutate(&src, at, kind)).map_err(TestCaseError::fail)?;
    }
}

#[test]
fn generated_programs_are_mostly_valid() {
    // The generator must exercise the success path, not only rejections.
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let strat = body(2);
    let mut ok = 0;
    for _ in 0..60 {
        let Ok(tree) = strat.new_tree(&mut runner) else {
            continue;
        };
        if agree("gen.hcl", &tree.current()) == Ok(true) {
            ok += 1;
        }
    }
    eprintln!("{ok} of 60 generated programs parsed");
    assert!(ok >= 20, "only {ok} of 60 generated programs parsed");
}

#[test]
fn hand_picked_corner_cases_agree() {
    let cases = [
        "a = {\n  for = 1\n}\n",
        "for {\n  for = 1\n}\n",
        "a = { for k in x : k => k }\n",
        "a = [\n  for x in y : x\n]\n",
        "a = x[for]\n",
        "a = in.if\n",
        "a = [for in in in : in]\n",
        "a = \"%{ if x }a%{ endif }\"\n",
        "a = \"%{ if x }a%{ endif}%{for x in y}${x}%{endfor}\"\n",
        "a = <<EOT\n%{ if x }\n  a\n%{ endif }\nEOT\n",
        "a = <<-EOT\n  \ta\n    b ${c}\n  EOT\n",
        "a = x.*.b[0].c\n",
        "a = x.*[0]\n",
        "a = x[*].*.b\n",
        "a = f(\n  1,\n  2...\n)\n",
        "a = 1 # trailing\n# only\nb {\n  # inside\n}\n",
        "a = { x = 1 # c\n}\n",
        "a = 1 /* x\n */\n",
        "a = (1 # c\n)\n",
        "a = { a = 1, b = 2, }\n",
        "a = { a = 1\n, b = 2 }\n",
        "a = -1.5e3\n",
        "a = !!true\n",
        "a = 1 ? 2 : 3 ? 4 : 5\n",
        "a = (1 ? 2 : 3) ? 4 : 5\n",
        "blk \"\" {}\n",
        "blk \"a\\nb\" {}\n",
        "a = \"${x}\"\nb = \"${x} \"\nc = \" ${~x}\"\n",
        "a = \"\"\n",
        "\u{feff}a = 1\n",
        "a = 1\r\nb = 2\r\n",
        "a = <<EOT\r\nx\r\nEOT\r\n",
        "a = x.0\nb = x.*.0\nc = x.1e3\n",
        "a = {}.a\n",
        "a = [1][0]\n",
        "a = \"s\".x\n",
        "a = ~x\n",
        "a = x ~}\n",
        "a = \"${ {a = 1~} }\"\n",
    ];
    let mut problems = Vec::new();
    for c in cases {
        if let Err(e) = agree("main.hcl", c) {
            problems.push(e);
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

/// Throughput of both parsers on the valid corpus texts (each wrapped in its own block,
/// repeated to about 1 MB). Ignored by default: run it in an optimized build, e.g.
/// `cargo test --release --test grammar_diff -- --ignored --nocapture`.
#[test]
#[ignore]
fn timing_grammar_vs_hand() {
    let Some(shared) = shared_dir("grammar_diff") else {
        return;
    };
    let mut src = String::new();
    let valid: Vec<String> = hcl_corpus(&shared)
        .into_iter()
        .filter(|(_, name, text)| agree(name, text) == Ok(true))
        .map(|(_, _, text)| text)
        .collect();
    let mut i = 0;
    while src.len() < 1 << 20 {
        for t in &valid {
            src.push_str(&format!("wrap_{i} {{\n{t}\n}}\n"));
            i += 1;
        }
    }
    let mut sm = SourceMap::new();
    let f = sm.add("big.hcl", src.as_str());
    assert_eq!(agree("big.hcl", &src), Ok(true));
    let mb = src.len() as f64 / (1 << 20) as f64;
    let time = |label: &str, run: &dyn Fn() -> bool| {
        let n = 10;
        let start = std::time::Instant::now();
        for _ in 0..n {
            assert!(run());
        }
        let secs = start.elapsed().as_secs_f64() / n as f64;
        eprintln!(
            "{label}: {:.1} ms per {mb:.2} MB, {:.1} MB/s",
            secs * 1e3,
            mb / secs
        );
    };
    time("tokenize", &|| {
        !fn_hcl::syntax::lexer::tokenize(&src, f).is_empty()
    });
    time("hand parser (with tokenize)", &|| {
        parse_file_hand(&sm, f).is_ok()
    });
    time("grammar (with tokenize)", &|| {
        grammar::parse_file(&sm, f).is_ok()
    });
}

/// Hand-picked inputs on which the two parsers must agree.
mod hand_picked {
    use fn_hcl::syntax::ast::File;
    use fn_hcl::syntax::span::SourceMap;
    use fn_hcl_grammar::{parse_expression, parse_file};

    fn both(src: &str) -> (Result<File, ()>, bool) {
        let mut sm = SourceMap::new();
        let f = sm.add("main.hcl", src);
        let g = parse_file(&sm, f);
        let hand = fn_hcl::syntax::parser::parse_file(&sm, f);
        if let (Ok(g), Ok(h)) = (&g, &hand) {
            assert_eq!(g, h, "trees differ for {src:?}");
        }
        (g, hand.is_ok())
    }

    #[track_caller]
    fn accepts(src: &str) {
        let (g, hand) = both(src);
        assert!(hand, "hand parser rejects {src:?}");
        assert!(g.is_ok(), "grammar rejects {src:?}");
    }

    #[track_caller]
    fn rejects(src: &str) {
        let (g, hand) = both(src);
        assert!(!hand, "hand parser accepts {src:?}");
        assert!(g.is_err(), "grammar accepts {src:?}");
    }

    #[test]
    fn bodies_and_blocks() {
        accepts("");
        accepts("\n\n# c\n");
        accepts("a = 1");
        accepts("a = 1\nb = 2\n");
        accepts("blk x \"y\" {\n  a = 1\n\n  inner {}\n}\n");
        accepts("blk { a = 1 }\n");
        accepts("a = 1 # comment\nb = 2 // other\n");
        accepts("/* lead */ a = 1\n");
        rejects("a = 1\na = 2\n");
        rejects("blk {\n a = 1 }\n");
        rejects("blk { a = 1\n}\n");
        rejects("blk\n{\n}\n");
        rejects("blk {} x = 1\n");
        rejects("a = 1, b = 2\n");
        rejects("\"a\" = 1\n");
        rejects("blk \"x${y}\" {}\n");
    }

    #[test]
    fn expressions() {
        accepts("a = -x.y[0] * 2 + 3 % 4 >= 5 == !true && null || false ? 1 : b ? 2 : 3\n");
        accepts("a = f(1, 2,)\nb = ns::g(x...)\nc = f()\n");
        accepts("a = [1, 2,]\nb = []\nc = [\n  1,\n  2\n]\n");
        accepts("a = {\n  x = 1\n  \"y\" = 2, (z) : 3\n\n  null = 4\n}\n");
        accepts("a = {}\nb = {\n}\n");
        accepts("a = (\n 1 +\n 2\n)\n");
        accepts("a = x.*.b.0.c[1]\nb = x[*].b.*.c[0][*].d\nc = x.0\n");
        accepts("a = [for k, v in m : v if k != \"\"]\n");
        accepts("a = {\n for k, v in m :\n k => v... if v\n}\n");
        accepts("a = x[for]\n");
        rejects("a = [for]\n");
        rejects("a = {for = 1}\n");
        rejects("a = 1 +\n 2\n");
        rejects("a = x.*.*\n");
        rejects("a = x.0.1\n");
        rejects("a = 1.2.3\n");
        rejects("a = f(x..., y)\n");
        rejects("a = [for x in y : k => v]\n");
        rejects("a = {for x in y : v}\n");
        rejects("a = [foo x in y : v]\n");
        rejects("a = [for x of y : v]\n");
        rejects("a = {\n x = 1 y = 2 }\n");
    }

    #[test]
    fn templates() {
        accepts("a = \"x ${y} z\"\nb = \"${y}\"\nc = \"\"\n");
        accepts("a = \"\\n\\t\\\"\\\\ \\u00e9 \\U0001F600 $${x} %%{y} $$ %\"\n");
        accepts("a = \"a %{ if x ~} b %{~ else } c %{ endif } d\"\n");
        accepts("a = \"%{for k, v in m}${k}=${v},%{endfor}\"\n");
        accepts("a = <<EOT\nhello ${x}\n  world\nEOT\n");
        accepts("a = <<-EOT\n    one\n      two ${x}\n\n    three\n    EOT\n");
        accepts("a = <<-EOT\nEOT\n");
        accepts("a = \"${ \"b ${c}\" } d\"\n");
        accepts("a = \" ${~ x ~} \"\n");
        rejects("a = \"\\q\"\n");
        rejects("a = \"\\u12\"\n");
        rejects("a = \"%{ if x }y\"\n");
        rejects("a = \"%{ endif }\"\n");
        rejects("a = \"%{ iff x }%{ endif }\"\n");
        rejects("a = \"%{ for x on y }%{ endfor }\"\n");
        rejects("a = \"%{ if x }%{ else }%{ else }%{ endif }\"\n");
    }

    #[test]
    fn standalone_expressions() {
        for (src, ok) in [
            ("a +\n b", true),
            ("{\n a = 1\n b = [\n 2 ]\n}", true),
            ("\n x.y[*].z \n", true),
            ("\"${a}\"", true),
            ("1 2", false),
            ("{ a = 1 b = 2 }", false),
            ("", false),
        ] {
            let mut sm = SourceMap::new();
            let f = sm.add("expr.hcl", src);
            let g = parse_expression(&sm, f);
            let h = fn_hcl::syntax::parser::parse_expression(&sm, f);
            assert_eq!(h.is_ok(), ok, "hand parser on {src:?}");
            match (g, h) {
                (Ok(g), Ok(h)) => assert_eq!(g, h, "trees differ for {src:?}"),
                (Err(()), Err(_)) => {}
                (g, _) => panic!("grammar disagrees on {src:?}: {g:?}"),
            }
        }
    }

    #[test]
    fn limits_match_the_hand_parser() {
        for n in [200usize, 254, 255, 256, 257, 300] {
            let src = format!("a = {}1{}\n", "[".repeat(n), "]".repeat(n));
            let (g, hand) = both(&src);
            assert_eq!(g.is_ok(), hand, "tuples nested {n}");
            let src = format!("a = {}1{}\n", "(".repeat(n), ")".repeat(n));
            let (g, hand) = both(&src);
            assert_eq!(g.is_ok(), hand, "parens nested {n}");
            let src = format!("a = {}x\n", "-".repeat(n));
            let (g, hand) = both(&src);
            assert_eq!(g.is_ok(), hand, "unary nested {n}");
            let src = format!("{}{}\n", "b {\n".repeat(n), "}\n".repeat(n));
            let (g, hand) = both(&src);
            assert_eq!(g.is_ok(), hand, "blocks nested {n}");
            let src = format!("a = \"{}x{}\"\n", "%{if c}".repeat(n), "%{endif}".repeat(n));
            let (g, hand) = both(&src);
            assert_eq!(g.is_ok(), hand, "directives nested {n}");
        }
        for n in [1000usize, 1023, 1024, 1025, 1100] {
            let src = format!("a = x{}\n", " + x".repeat(n));
            let (g, hand) = both(&src);
            assert_eq!(g.is_ok(), hand, "binary chain {n}");
            let src = format!("a = x{}\n", ".y".repeat(n));
            let (g, hand) = both(&src);
            assert_eq!(g.is_ok(), hand, "traversal chain {n}");
        }
        // Far beyond the limits: rejected without deep recursion.
        let deep = format!("a = {}1\n", "[".repeat(100_000));
        rejects(&deep);
        let long = format!("a = x{}\n", " + x".repeat(200_000));
        rejects(&long);
        let n = 100_000;
        let directives = format!("a = \"{}x{}\"\n", "%{if c}".repeat(n), "%{endif}".repeat(n));
        rejects(&directives);
        let blocks = format!("{}{}", "b {\n".repeat(n), "}\n".repeat(n));
        rejects(&blocks);
    }
}
