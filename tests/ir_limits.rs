//! Hostile shapes: deep nesting of groups and blocks, thousands of locals in one scope,
//! long dependency chains. Lowering, analysis and the dump must neither overflow the stack
//! nor take long; nesting beyond the parser's limit is a clear error.

mod common;

use fn_hcl::lower::ir::{Item, compile_files, dump};
use std::time::{Duration, Instant};

/// Runs `f` on a thread with a tokio worker's 2 MiB stack: what a request's compilation
/// gets in the server (an overflow fails the test).
fn on_worker_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(f)
        .expect("spawns")
        .join()
        .expect("no stack overflow")
}

/// Compiles `src` (no problem expected) on a worker's stack ([`on_worker_stack`]) and
/// gives what `then` makes of the program there.
fn compiled_on_worker_stack<T: Send + 'static>(
    src: String,
    then: impl FnOnce(&fn_hcl::lower::ir::Program) -> T + Send + 'static,
) -> T {
    on_worker_stack(move || {
        let p = compile_files(&files(src)).expect("loads");
        assert!(fn_hcl::cli::analyze::analyze(&p).is_empty());
        then(&p)
    })
}

fn files(src: String) -> Vec<(String, String)> {
    vec![("main.hcl".to_string(), src)]
}

fn nested_groups(depth: usize) -> String {
    let mut s = String::new();
    for i in 0..depth {
        s.push_str(&format!(
            "group {{\nlocals {{\n  l{i} = {}\n}}\n",
            if i == 0 {
                "1".to_string()
            } else {
                format!("l{} + 1", i - 1)
            }
        ));
    }
    s.push_str("resource deep {\n  body = { v = l0 }\n}\n");
    for _ in 0..depth {
        s.push_str("}\n");
    }
    s
}

#[test]
fn two_hundred_nested_groups() {
    let start = Instant::now();
    let p = compile_files(&files(nested_groups(200))).expect("loads");
    let diags = fn_hcl::cli::analyze::analyze(&p);
    assert!(diags.is_empty(), "{diags:?}");
    let d = dump(&p);
    assert!(d.contains("resource \"deep\" (self @201 unread)"), "{d}");
    // The innermost group's local sits in slot 200.
    assert!(d.contains("local @200 l199: number"), "{d}");
    let mut depth = 0;
    let mut g = &p.root;
    while let Some(Item::Group(inner)) = g.items.first() {
        depth += 1;
        g = inner;
    }
    assert_eq!(depth, 200);
    assert!(start.elapsed() < Duration::from_secs(10));
}

#[test]
fn deepest_accepted_nesting_fits_a_worker_stack() {
    // 250 nested groups (near the parser's limit of 256 levels) parsed, lowered, analyzed
    // and dumped on a 2 MiB stack (what a tokio worker thread gets), in a debug build.
    assert!(compiled_on_worker_stack(nested_groups(250), |p| dump(p).len()) > 0);
}

#[test]
fn nesting_beyond_the_parser_limit_is_a_clear_error() {
    let err = match compile_files(&files(nested_groups(300))) {
        Ok(_) => panic!("300 nested groups must not load"),
        Err(e) => e.message(),
    };
    assert!(
        err.contains("Nesting too deep; This construct is nested more than 256 levels deep"),
        "{err}"
    );
}

#[test]
fn ten_thousand_locals_in_one_scope() {
    let mut s = String::from("locals {\n");
    for i in 0..10_000 {
        s.push_str(&format!("  v{i} = \"{i}\"\n"));
    }
    s.push_str("}\nresource r {\n  body = { last = v9999 }\n}\n");
    let start = Instant::now();
    let p = compile_files(&files(s)).expect("loads");
    assert_eq!(p.root.locals.defs.len(), 10_000);
    assert!(fn_hcl::cli::analyze::analyze(&p).is_empty());
    assert!(start.elapsed() < Duration::from_secs(10));
}

#[test]
fn dependency_chain_of_ten_thousand_locals() {
    // Written last-first, so that dependency order is the reverse of the text.
    let mut s = String::from("locals {\n");
    for i in (1..10_000).rev() {
        s.push_str(&format!("  c{i} = c{} + 1\n", i - 1));
    }
    s.push_str("  c0 = 0\n}\n");
    let start = Instant::now();
    let p = compile_files(&files(s)).expect("loads");
    let names: Vec<&str> = p.root.locals.defs.iter().map(|d| &*d.name).collect();
    assert_eq!(names.first(), Some(&"c0"));
    assert_eq!(names.last(), Some(&"c9999"));
    assert!(fn_hcl::cli::analyze::analyze(&p).is_empty());
    let last = &p.root.locals.defs[9_999].expr;
    assert_eq!(p.type_of(last).to_string(), "number");
    assert!(start.elapsed() < Duration::from_secs(10));
}

#[test]
fn types_of_a_chain_of_deep_locals_stay_shallow() {
    // 100 locals, each 200 brackets around the one before: the inferred types nested
    // 20,000 levels, and dropping the program overflowed a 2 MiB stack. Past 128 levels a
    // type is not kept (dynamic); below, it is inferred. Ten copies of the one before, nine
    // deep, describe 10^9 types: their depth is found, and their text written, without
    // walking them all.
    let deep = |n: usize, per: usize| {
        let mut s = common::nested_locals(n, per);
        s.push_str("  c0 = \"x\"\n");
        for i in 1..=9 {
            let refs = vec![format!("c{}", i - 1); 10].join(", ");
            s.push_str(&format!("  c{i} = [{refs}]\n"));
        }
        s + "}\n"
    };
    let (l0, l1, l100, c0, c9) = on_worker_stack(move || {
        let start = Instant::now();
        let p = compile_files(&files(deep(100, 200))).expect("loads");
        let ty = |i: usize| p.type_of(&p.root.locals.defs[i].expr);
        let got = (
            ty(0).to_string(),
            ty(1).depth(),
            ty(100).to_string(),
            ty(101).to_string(),
            ty(110).depth(),
        );
        // Printed (hover, the dump, analyze), its text stops at 2,000 bytes.
        let text = ty(110).to_string();
        assert!(
            text.len() < 2_100 && text.ends_with("..."),
            "{}",
            text.len()
        );
        assert!(text.starts_with("tuple [tuple [tuple ["), "{text}");
        assert!(dump(&p).contains(&format!("c9: {text}")));
        fn_hcl::cli::analyze::analyze(&p);
        assert!(start.elapsed() < Duration::from_secs(10));
        got
    });
    assert_eq!(l0, "number");
    assert_eq!(l1, 0, "a type of 200 levels is not kept");
    assert_eq!(l100, "dynamic");
    assert_eq!(c0, "string");
    assert_eq!(c9, 9);
}

#[test]
fn cycle_through_ten_thousand_locals() {
    let mut s = String::from("locals {\n");
    for i in 0..10_000 {
        s.push_str(&format!("  c{i} = c{}\n", (i + 1) % 10_000));
    }
    s.push_str("}\n");
    let p = compile_files(&files(s)).expect("loads (the cycle is deferred)");
    let err = p.root.locals.error.as_ref().expect("cycle found");
    assert!(
        err.summary
            .starts_with("cycle found: c0 \u{2192} c1 \u{2192} c2")
    );
    assert!(err.summary.ends_with("c9999 \u{2192} c0"));
}

#[test]
fn thousands_of_diagnostics_are_reported_quickly() {
    let mut s = String::new();
    for i in 0..5_000 {
        s.push_str(&format!(
            "resource r{i} {{\n  body = {{ v = missing{i} }}\n}}\n"
        ));
    }
    let start = Instant::now();
    let p = compile_files(&files(s)).expect("loads");
    let d = fn_hcl::cli::analyze::analyze(&p);
    assert_eq!(d.len(), 5_000);
    assert!(start.elapsed() < Duration::from_secs(10));
}

#[test]
fn a_template_of_deep_and_wide_shared_expressions_compiles_quickly_on_a_worker_stack() {
    // What a collection's members share is looked for (and each candidate's variables
    // walked) near the top of each expression only: a template nested 240 levels deep,
    // shared and member parts alternating, beside 20,000 shared calls, compiles on a
    // 2 MiB stack (a tokio worker's) in a debug build.
    let mut deep = String::from("upper(x)");
    for i in 0..240 {
        deep = if i % 2 == 0 {
            format!("[{deep}, each.key]")
        } else {
            format!("[upper(x), {deep}]")
        };
    }
    let wide: Vec<String> = (0..20_000)
        .map(|i| format!("upper(\"${{x}}{i}\")"))
        .collect();
    let src = format!(
        "locals {{\n  x = req.composite.metadata.name\n}}\nresources r {{\n  for_each = [\"a\", \"b\"]\n  template {{\n    body = {{\n      deep = {deep}\n      wide = [{}]\n    }}\n  }}\n}}\n",
        wide.join(", ")
    );
    let start = Instant::now();
    assert!(compiled_on_worker_stack(src, |p| dump(p).len()) > 0);
    assert!(start.elapsed() < Duration::from_secs(10));
}

#[test]
fn a_collection_body_given_its_annotations_fits_a_worker_stack() {
    // A template body whose literal `metadata.annotations` gets the collection's two
    // annotations is copied with them at compile time (`lower::annotate`): a body nested
    // 240 levels deep inside those annotations, beside 20,000 items, is copied, compiled
    // and dropped on a 2 MiB stack (a tokio worker's) in a debug build, and its members
    // are annotated.
    let mut deep = String::from("each.key");
    for _ in 0..240 {
        deep = format!("[{deep}]");
    }
    let wide: Vec<String> = (0..20_000).map(|i| format!("\"w{i}\"")).collect();
    let src = format!(
        "resources r {{\n  for_each = [\"a\", \"b\"]\n  template {{\n    body = {{\n      metadata = {{ annotations = {{ deep = jsonencode({deep}) }} }}\n      wide = [{}]\n    }}\n  }}\n}}\n",
        wide.join(", ")
    );
    let start = Instant::now();
    let compiled_in = compiled_on_worker_stack(src, |p| match p.root.items.first() {
        Some(Item::Collection(c)) => c.member_index.is_some(),
        _ => panic!("a collection"),
    });
    assert!(compiled_in, "annotations compiled in");
    assert!(start.elapsed() < Duration::from_secs(10));
}
