//! The upstream libraries' own test tables as fixtures (tests/upstream/*.jsonl, written by
//! tests/upstream/extract.py from go-cty v1.17.0's function/stdlib, Terraform 1.5.7's
//! lang/funcs, ...): each case calls a function through the DSL's expression evaluator
//! and expects upstream's value (type included) or error. Cases that differ for a known
//! reason are listed in tests/upstream/known.tsv, with the reason; a listed case that
//! passes, or an unlisted one that fails, fails this test. The README's table "The
//! upstream libraries' own tests" has the counts.

mod common;

use common::expr::eval_expr;
use fn_hcl::value::number::Number;
use fn_hcl::value::ops::make_set;
use fn_hcl::value::{Str, Type, Value};
use serde_json::Value as J;
use std::collections::{BTreeMap, BTreeSet};

fn dir() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/upstream")
}

fn ty(j: &J) -> Type {
    match j {
        J::String(s) => match s.as_str() {
            "string" => Type::String,
            "number" => Type::Number,
            "bool" => Type::Bool,
            _ => Type::Dynamic,
        },
        J::Array(a) => match a[0].as_str().unwrap_or("") {
            "list" => Type::list(ty(&a[1])),
            "set" => Type::set(ty(&a[1])),
            "map" => Type::map(ty(&a[1])),
            "object" => {
                let mut f: Vec<(Str, Type)> = a[1]
                    .as_object()
                    .map(|m| {
                        m.iter()
                            .map(|(k, v)| (Str::from(k.as_str()), ty(v)))
                            .collect()
                    })
                    .unwrap_or_default();
                f.sort_by(|x, y| x.0.cmp(&y.0));
                Type::Object(f.into())
            }
            _ => Type::Tuple(
                a[1].as_array()
                    .map(|v| v.iter().map(ty).collect::<Vec<_>>())
                    .unwrap_or_default()
                    .into(),
            ),
        },
        _ => Type::Dynamic,
    }
}

/// A cty value from the fixtures' form (`{"k": kind, "v": ..., "t": type}`).
fn val(j: &J) -> Value {
    let k = j["k"].as_str().unwrap_or("");
    let v = &j["v"];
    let items = || {
        v.as_array()
            .map(|a| a.iter().map(val).collect::<Vec<_>>())
            .unwrap_or_default()
    };
    let fields = || {
        v.as_object()
            .map(|m| {
                m.iter()
                    .map(|(k, x)| (Str::from(k.as_str()), val(x)))
                    .collect::<Vec<_>>()
            })
            .unwrap_or_default()
    };
    let elem = |xs: &[Value]| match xs.first() {
        Some(x) => x.type_of(),
        None => ty(&j["t"]),
    };
    match k {
        "string" => Value::string(v.as_str().unwrap_or("")),
        "bool" => Value::Bool(v.as_bool().unwrap_or(false)),
        "number" => {
            let text = v.as_str().unwrap_or("");
            let n = if j["float"].as_bool() == Some(true) {
                text.parse::<f64>().ok().and_then(Number::from_f64)
            } else {
                Number::parse_cty(text)
            };
            Value::Number(n.unwrap_or_else(|| panic!("fixture number {text}")))
        }
        "null" => Value::Null(ty(&j["t"])),
        "list" => {
            let xs = items();
            Value::list(elem(&xs), xs)
        }
        "set" => {
            let xs = items();
            make_set(elem(&xs), xs)
        }
        "tuple" => Value::tuple(items()),
        "map" => {
            let xs = fields();
            let e = match xs.first() {
                Some((_, x)) => x.type_of(),
                None => ty(&j["t"]),
            };
            Value::map(e, xs)
        }
        "object" => Value::object(fields()),
        other => panic!("fixture value kind {other}"),
    }
}

fn show(v: &Value) -> String {
    format!(
        "{} : {}",
        fn_hcl::value::json::encode(v).unwrap_or_else(|e| format!("<{e}>")),
        v.type_of().friendly_name()
    )
}

/// Runs one case: Ok(()) when it agrees with upstream, Err(what differs).
fn run_case(c: &J) -> Result<(), String> {
    let fname = c["fn"].as_str().unwrap_or("");
    let args: Vec<(String, Value)> = c["args"]
        .as_array()
        .map(|a| {
            a.iter()
                .enumerate()
                .map(|(i, x)| (format!("a{i}"), val(x)))
                .collect()
        })
        .unwrap_or_default();
    // hcl's operators are stdlib functions too: the fixtures name them by symbol.
    let names: Vec<&str> = args.iter().map(|(n, _)| n.as_str()).collect();
    let call = match (fname, args.len()) {
        ("neg", 1) => "-a0".to_string(),
        ("!", 1) => "!a0".to_string(),
        (op, 2) if !op.starts_with(|c: char| c.is_ascii_alphabetic()) => format!("a0 {op} a1"),
        _ => format!("{fname}({})", names.join(", ")),
    };
    let got = eval_expr(&call, &args);
    match (&c["error"], got) {
        (J::Null, Ok(v)) if c.get("want_type").is_some() => {
            let want = ty(&c["want_type"]);
            if v.type_of() == want {
                Ok(())
            } else {
                Err(format!(
                    "got {}, want type {}",
                    show(&v),
                    want.friendly_name()
                ))
            }
        }
        (J::Null, Ok(v)) => {
            // go-cty-yaml's Unmarshal to a given type converts the decoded value to it.
            let v = match c.get("convert_to") {
                Some(t) => match fn_hcl::value::convert::convert(&v, &ty(t)) {
                    Ok(x) => x,
                    Err(e) => return Err(format!("got {}, not convertible: {e}", show(&v))),
                },
                None => v,
            };
            let want = val(&c["want"]);
            if v.raw_equals(&want) {
                Ok(())
            } else {
                Err(format!("got {}, want {}", show(&v), show(&want)))
            }
        }
        (J::Null, Err(d)) => Err(format!("error {}", d.join(" | "))),
        (e, Ok(v)) => Err(format!("got {}, want error {e}", show(&v))),
        (J::String(msg), Err(d)) => {
            if d.iter().any(|x| x.contains(msg.as_str())) {
                Ok(())
            } else {
                Err(format!(
                    "error {}, want one containing {msg:?}",
                    d.join(" | ")
                ))
            }
        }
        (_, Err(_)) => Ok(()),
    }
}

fn case_id(c: &J) -> String {
    format!(
        "{}\t{}\t{}",
        c["suite"].as_str().unwrap_or(""),
        c["test"].as_str().unwrap_or(""),
        c["n"]
    )
}

/// tests/upstream/known.tsv: case id (suite, test, index) to the reason it differs.
fn known() -> BTreeMap<String, String> {
    std::fs::read_to_string(dir().join("known.tsv"))
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .filter_map(|l| {
            let mut p = l.splitn(4, '\t');
            let id = format!("{}\t{}\t{}", p.next()?, p.next()?, p.next()?);
            Some((id, p.next().unwrap_or("").to_string()))
        })
        .collect()
}

#[test]
fn upstream_function_tests() {
    let known = known();
    let mut unexpected = Vec::new();
    let mut stale = Vec::new();
    let mut seen = BTreeSet::new();
    let mut summary = Vec::new();
    for suite in ["go-cty", "terraform", "go-cty-yaml"] {
        let path = dir().join(format!("{suite}.jsonl"));
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{}: {e} (run tests/upstream/extract.py)", path.display()));
        let (mut total, mut applicable, mut pass) = (0, 0, 0);
        for line in text.lines() {
            let c: J = serde_json::from_str(line).expect("fixture line is JSON");
            total += 1;
            if c.get("skip").is_some() {
                continue;
            }
            applicable += 1;
            let id = case_id(&c);
            seen.insert(id.clone());
            let r = run_case(&c);
            match (&r, known.contains_key(&id)) {
                (Ok(()), false) => pass += 1,
                (Ok(()), true) => stale.push(id),
                (Err(why), false) => {
                    unexpected.push(format!("{id}\t{}({}): {why}", c["fn"], c["args"]))
                }
                (Err(_), true) => {}
            }
        }
        println!("{suite}: {total} cases, {applicable} applicable, {pass} pass");
        summary.push((suite, total, applicable, pass));
    }
    // Entries of the other fixtures (hcl/..., libyaml) are checked by their own tests.
    let missing: Vec<&String> = known
        .keys()
        .filter(|k| {
            ["go-cty/", "terraform/", "go-cty-yaml/"]
                .iter()
                .any(|p| k.starts_with(p))
        })
        .filter(|k| !seen.contains(*k))
        .collect();
    assert!(
        unexpected.is_empty() && stale.is_empty() && missing.is_empty(),
        "{} unexpected failures:\n{}\n{} listed in known.tsv but passing:\n{}\n{} listed but not in the fixtures:\n{:?}",
        unexpected.len(),
        unexpected.join("\n"),
        stale.len(),
        stale.join("\n"),
        missing.len(),
        missing
    );
}

/// go-textseg v15's grapheme cluster tests (Unicode 15.0.0's GraphemeBreakTest.txt, as
/// the version hcl v2.24 and cty v1.17 count columns and `length` with).
#[test]
fn upstream_grapheme_clusters() {
    let path = dir().join("go-textseg.jsonl");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (run tests/upstream/extract.py)", path.display()));
    let (mut total, mut pass) = (0, 0);
    let mut failures = Vec::new();
    for line in text.lines() {
        let c: J = serde_json::from_str(line).expect("fixture line is JSON");
        let input = c["input"].as_str().unwrap_or("");
        let want: Vec<&str> = c["clusters"]
            .as_array()
            .map(|a| a.iter().filter_map(J::as_str).collect())
            .unwrap_or_default();
        let got: Vec<&str> = fn_hcl::text::unicode::graphemes(input).collect();
        total += 1;
        if got == want {
            pass += 1;
        } else {
            failures.push(format!("{input:?}: got {got:?}, want {want:?}"));
        }
    }
    println!("go-textseg: {total} cases, {total} applicable, {pass} pass");
    assert!(total > 500, "the fixture has the whole table");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Runs every case of `tests/upstream/{name}.jsonl` through `check` (None: the case is
/// not applicable); a failure must be listed in known.tsv and a listed case must fail.
/// Prints the counts; fails with every difference.
fn run_fixture(
    name: &str,
    min_applicable: usize,
    check: impl Fn(&J) -> Option<Result<(), String>>,
) {
    let known = known();
    let path = dir().join(format!("{name}.jsonl"));
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (run tests/upstream/extract.py)", path.display()));
    let (mut total, mut applicable, mut pass) = (0, 0, 0);
    let mut bad = Vec::new();
    for line in text.lines() {
        let c: J = serde_json::from_str(line).expect("fixture line is JSON");
        total += 1;
        let Some(r) = check(&c) else {
            continue;
        };
        applicable += 1;
        let id = case_id(&c);
        match (r, known.contains_key(&id)) {
            (Ok(()), false) => pass += 1,
            (Ok(()), true) => bad.push(format!("{id}: listed in known.tsv but passes")),
            (Err(why), false) => bad.push(format!(
                "{id}\t{}: {why}",
                c["input"].as_str().or(c["expr"].as_str()).unwrap_or("")
            )),
            (Err(_), true) => {}
        }
    }
    println!("{name}: {total} cases, {applicable} applicable, {pass} pass");
    assert!(
        applicable >= min_applicable,
        "the fixture has the whole table"
    );
    assert!(bad.is_empty(), "{} differ:\n{}", bad.len(), bad.join("\n"));
}

/// hclwrite's TestFormat (hcl v2.24.0): `fmt`'s token-level formatter on each input.
#[test]
fn upstream_hclwrite_format() {
    run_fixture("hclwrite-format", 51, |c| {
        let (input, want) = (c["input"].as_str()?, c["want"].as_str()?);
        let got = fn_hcl::syntax::fmt::format(input);
        Some(if got == want {
            Ok(())
        } else {
            Err(format!("\n  got  {got:?}\n  want {want:?}"))
        })
    });
}

/// hclsyntax's expression and template tests (hcl v2.24.0: TestExpressionParseAndValue,
/// TestTemplateExprParseAndValue, TestExpressionErrorMessages): each expression parsed and
/// evaluated as a program's expression is, with the test's variables bound. Upstream's
/// value (type included) when it expects no diagnostics, as many error diagnostics as it
/// counts otherwise, and its summary and detail where it names them.
#[test]
fn upstream_hclsyntax_expressions() {
    run_fixture("hclsyntax-expressions", 201, |c| {
        let expr = c["expr"].as_str()?;
        let vars: Vec<(String, Value)> = c["vars"]
            .as_object()
            .map(|m| m.iter().map(|(k, v)| (k.clone(), val(v))).collect())
            .unwrap_or_default();
        let got = eval_expr(expr, &vars);
        Some(match (got, c["diags"].as_u64()) {
            (Ok(v), Some(0)) => {
                let want = val(&c["want"]);
                if v.raw_equals(&want) {
                    Ok(())
                } else {
                    Err(format!("got {}, want {}", show(&v), show(&want)))
                }
            }
            (Err(d), Some(0)) => Err(format!("error {}", d.join(" | "))),
            (Ok(v), _) => Err(format!("got {}, want an error", show(&v))),
            (Err(d), Some(n)) if d.len() as u64 != n => Err(format!(
                "{} diagnostics, want {n}: {}",
                d.len(),
                d.join(" | ")
            )),
            (Err(_), Some(_)) => Ok(()),
            (Err(d), None) => {
                let want = format!(
                    "{}; {}",
                    c["summary"].as_str().unwrap_or(""),
                    c["detail"].as_str().unwrap_or("")
                );
                if d.len() == 1 && d[0].ends_with(&format!(": {want}")) {
                    Ok(())
                } else {
                    Err(format!("error {}, want {want:?}", d.join(" | ")))
                }
            }
        })
    });
}

/// A parsed body as the parser fixtures describe it: sorted attribute names, blocks in order.
fn body_shape(b: &fn_hcl::syntax::ast::Body) -> J {
    use fn_hcl::syntax::ast::BodyItem;
    let mut attrs: Vec<&str> = Vec::new();
    let mut blocks = Vec::new();
    for item in &b.items {
        match item {
            BodyItem::Attribute(a) => attrs.push(&a.name.name),
            BodyItem::Block(k) => blocks.push(serde_json::json!({
                "type": &*k.kind.name,
                "labels": k.labels.iter().map(|l| &*l.value).collect::<Vec<_>>(),
                "body": body_shape(&k.body),
            })),
        }
    }
    attrs.sort_unstable();
    serde_json::json!({ "attrs": attrs, "blocks": blocks })
}

fn range_json(sp: fn_hcl::syntax::span::Span) -> [J; 2] {
    let p = |p: fn_hcl::syntax::span::Pos| serde_json::json!([p.byte, p.line, p.col]);
    [p(sp.start), p(sp.end)]
}

/// hcl's scanner splits a quoted string's literal text at `$` and `%` and its parser
/// melds the pieces again; fn-hcl's lexer emits the melded token (its module doc): the
/// expected tokens melded the same way (same type, adjacent ranges).
fn meld_quoted_lits(want: &J) -> J {
    let mut out: Vec<J> = Vec::new();
    for t in want.as_array().into_iter().flatten() {
        if let Some(last) = out.last_mut()
            && t[0] == "TokenQuotedLit"
            && last[0] == "TokenQuotedLit"
            && last[3] == t[2]
        {
            let text = format!(
                "{}{}",
                last[1].as_str().unwrap_or(""),
                t[1].as_str().unwrap_or("")
            );
            last[1] = J::String(text);
            last[3] = t[3].clone();
            continue;
        }
        out.push(t.clone());
    }
    J::Array(out)
}

/// hclsyntax's scanner and parser tests (hcl v2.24.0): TestScanTokens_normal (each
/// token's type, bytes and range), TestParseConfig (the body's attributes and blocks, or
/// the number of diagnostics), TestParseConfigDiagnostics (summary, detail and subject
/// range of each diagnostic).
#[test]
fn upstream_hclsyntax_parser() {
    use fn_hcl::syntax::lexer::tokenize;
    use fn_hcl::syntax::parser::parse_file_partial;
    use fn_hcl::syntax::span::SourceMap;
    run_fixture("hclsyntax-parser", 101, |c| {
        let input = c["input"].as_str()?;
        let mut sm = SourceMap::new();
        let f = sm.add("test.hcl", input);
        Some(if let Some(want) = c.get("tokens") {
            let got: Vec<J> = tokenize(input, f)
                .iter()
                .map(|t| {
                    let [s, e] = range_json(t.span);
                    let kind = match t.kind {
                        fn_hcl::syntax::lexer::TokenKind::Eof => "TokenEOF".to_string(),
                        k => format!("Token{k:?}"),
                    };
                    serde_json::json!([
                        kind,
                        &input[t.span.start.byte as usize..t.span.end.byte as usize],
                        s,
                        e
                    ])
                })
                .collect();
            let got = J::Array(got);
            let want = &meld_quoted_lits(want);
            if &got == want {
                Ok(())
            } else {
                Err(format!("tokens {got}\n  want {want}"))
            }
        } else {
            let (file, diags) = parse_file_partial(&sm, f);
            let errors: Vec<_> = diags.iter().filter(|d| d.is_error()).collect();
            if let Some(want) = c.get("diagnostics") {
                let got = J::Array(
                    errors
                        .iter()
                        .map(|d| {
                            let [s, e] = d.subject.map(range_json).unwrap_or_default();
                            serde_json::json!([d.summary, d.detail, s, e])
                        })
                        .collect(),
                );
                if &got == want {
                    Ok(())
                } else {
                    Err(format!("diagnostics {got}\n  want {want}"))
                }
            } else {
                let n = c["diags"].as_u64().unwrap_or(0) as usize;
                if errors.len() != n {
                    Err(format!(
                        "{} diagnostics, want {n}: {}",
                        errors.len(),
                        errors
                            .iter()
                            .map(|d| d.plain(&sm))
                            .collect::<Vec<_>>()
                            .join(" | ")
                    ))
                } else if n == 0 && body_shape(&file.body) != c["shape"] {
                    Err(format!(
                        "shape {}\n  want {}",
                        body_shape(&file.body),
                        c["shape"]
                    ))
                } else {
                    Ok(())
                }
            }
        })
    });
}

/// yamldecode's syntax errors against libyaml's own (tests/upstream/libyaml-errors.jsonl,
/// written by libyaml_errors.py from libyaml-inputs.jsonl): the problem text, and the
/// line and column go-cty-yaml derives from libyaml's marks.
#[test]
fn upstream_libyaml_errors() {
    run_fixture("libyaml-errors", 40, |c| {
        let got = fn_hcl::value::yaml::decode(c["input"].as_str()?).err();
        Some(if got.as_deref() == c["error"].as_str() {
            Ok(())
        } else {
            Err(format!("got {got:?}, want {}", c["error"]))
        })
    });
}
