//! User functions (`invoke`), `try`/`can`, budgets and the conditional's type-only branch.

mod vm_util;
use fn_hcl::bytecode::code::{ChunkId, Code};
use fn_hcl::bytecode::compile::CodeBuilder;
use fn_hcl::bytecode::vm::{LimitKind, Limits, Vm, VmErrorKind};
use fn_hcl::syntax::span::SourceMap;
use fn_hcl::value::Value;
use std::sync::Arc;
use std::time::{Duration, Instant};
use vm_util::*;

/// A user function for tests: name, args (name, optional default source), locals
/// (name, source) and body source.
struct Func {
    name: &'static str,
    args: Vec<(&'static str, Option<&'static str>)>,
    locals: Vec<(&'static str, &'static str)>,
    body: &'static str,
}

fn func(name: &'static str, args: &[&'static str], body: &'static str) -> Func {
    Func {
        name,
        args: args.iter().map(|a| (*a, None)).collect(),
        locals: vec![],
        body,
    }
}

/// Compile functions and a main expression (each snippet its own file `main.hcl`).
fn program(funcs: &[Func], main: &str) -> (Code, ChunkId) {
    let mut texts: Vec<String> = vec![main.to_string()];
    for f in funcs {
        for (_, d) in &f.args {
            texts.push(d.unwrap_or("null").to_string());
        }
        for (_, l) in &f.locals {
            texts.push(l.to_string());
        }
        texts.push(f.body.to_string());
    }
    let mut sm = SourceMap::new();
    let ids: Vec<_> = texts
        .iter()
        .map(|t| sm.add("main.hcl", t.as_str()))
        .collect();
    let exprs: Vec<_> = ids
        .iter()
        .map(|&f| {
            fn_hcl::syntax::parser::parse_expression(&sm, f).unwrap_or_else(|e| panic!("{e:?}"))
        })
        .collect();
    let parse = |i: usize| &exprs[i];
    let mut b = CodeBuilder::new(Arc::new(sm));
    let mut next = 1;
    let mut decls = Vec::new();
    for f in funcs {
        let mut args = Vec::new();
        for (a, d) in &f.args {
            let def = d.map(|_| b.compile_expr(parse(next), &Names(vec![])));
            next += 1;
            args.push((fn_hcl::value::Str::from(*a), def));
        }
        decls.push((b.declare_function(f.name, args), next));
        next += f.locals.len() + 1;
    }
    for (f, (id, first)) in funcs.iter().zip(decls) {
        let mut names: Vec<&'static str> = f.args.iter().map(|(a, _)| *a).collect();
        let mut locals = Vec::new();
        for (i, (l, _)) in f.locals.iter().enumerate() {
            names.push(l);
            let slot = names.len() as u32 - 1;
            locals.push((
                slot,
                b.compile_expr(parse(first + i), &Names(names.clone())),
            ));
        }
        let body = b.compile_expr(parse(first + f.locals.len()), &Names(names.clone()));
        b.define_function(id, locals, body, names.len() as u32);
    }
    let main = b.compile_expr(parse(0), &Names(vec![]));
    (b.finish(), main)
}

fn call(funcs: &[Func], main: &str) -> String {
    let (p, c) = program(funcs, main);
    // The default budgets but the wall clock's (1 s): a debug build on a loaded machine
    // may take longer than that for fib(20); the budget tests below set their own.
    let limits = Limits {
        max_wall: Duration::from_secs(60),
        ..Limits::default()
    };
    let mut vm = Vm::new(&p, limits);
    let mut d = Vec::new();
    let v = vm.eval(c, &[], &mut d).expect("within budget");
    let mut out = show(&v);
    for t in texts(&d) {
        out.push('\n');
        out.push_str(&t);
    }
    out
}

fn fact() -> Func {
    func(
        "fact",
        &["n"],
        "n <= 1 ? 1 : n * invoke(\"fact\", { n = n - 1 })",
    )
}

fn fib() -> Func {
    func(
        "fib",
        &["n"],
        "n < 2 ? n : invoke(\"fib\", { n = n - 1 }) + invoke(\"fib\", { n = n - 2 })",
    )
}

#[test]
fn recursion_works() {
    assert_eq!(call(&[fact()], "invoke(\"fact\", { n = 10 })"), "3628800");
    assert_eq!(call(&[fib()], "invoke(\"fib\", { n = 15 })"), "610");
    let start = Instant::now();
    assert_eq!(call(&[fib()], "invoke(\"fib\", { n = 20 })"), "6765");
    assert!(start.elapsed() < Duration::from_secs(5));
}

#[test]
fn fib_costs_only_the_taken_paths() {
    let (p, c) = program(&[fib()], "invoke(\"fib\", { n = 15 })");
    let mut vm = Vm::new(&p, Limits::default());
    let v = vm.eval(c, &[], &mut Vec::new()).expect("within budget");
    assert_eq!(show(&v), "610");
    assert_eq!(vm.invocations(), 1973);
}

#[test]
fn default_budgets_stop_nested_loops_fast() {
    let big = Value::tuple((0..100_000).map(Value::int).collect());
    let start = Instant::now();
    let (r, _) = eval_with(
        "[for a in x: [for b in x: b]]",
        &[("x", big)],
        Limits::default(),
    );
    let e = r.expect_err("budget");
    // The element budget; in a debug build the 1 s wall budget may come first.
    assert!(
        matches!(
            e.kind,
            VmErrorKind::Limit(LimitKind::AllocElements | LimitKind::WallTime)
        ),
        "{e:?}"
    );
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "{:?}",
        start.elapsed()
    );
}

#[test]
fn fact_99_works_and_fact_100_fails() {
    let ok = call(&[fact()], "invoke(\"fact\", { n = 99 })");
    assert!(!ok.contains('\n') && !ok.starts_with("unknown"), "{ok}");
    let failed = call(&[fact()], "invoke(\"fact\", { n = 100 })");
    assert!(failed.starts_with("unknown(dynamic)\n"), "{failed}");
    assert!(failed.contains("user function calls: max depth 100 exceeded"));
}

#[test]
fn mutual_recursion() {
    let even = func(
        "even",
        &["n"],
        "n == 0 ? true : invoke(\"odd\", { n = n - 1 })",
    );
    let odd = func(
        "odd",
        &["n"],
        "n == 0 ? false : invoke(\"even\", { n = n - 1 })",
    );
    assert_eq!(call(&[even, odd], "invoke(\"even\", { n = 10 })"), "true");
}

#[test]
fn depth_limit_is_100_calls_and_does_not_leak() {
    let countdown = || {
        func(
            "countdown",
            &["n"],
            "n <= 0 ? 0 : 1 + invoke(\"countdown\", { n = n - 1 })",
        )
    };
    // 99 nested invocations work.
    assert_eq!(
        call(&[countdown()], "invoke(\"countdown\", { n = 98 })"),
        "98"
    );
    // The 100th fails; the message nests one "Call to function" per level.
    let out = call(&[countdown()], "invoke(\"countdown\", { n = 99 })");
    assert!(out.starts_with("unknown(dynamic)\nmain.hcl:1,1-8: Error in function call; Call to function \"invoke\" failed: main.hcl:1,18-25: Error in function call;"), "{out}");
    assert_eq!(out.matches("Call to function").count(), 100);
    let tail = format!(
        "failed: user function calls: max depth 100 exceeded{}",
        ".".repeat(100)
    );
    assert!(out.ends_with(&tail), "{out}");
    // A failed deep call leaves later calls in the same evaluation unaffected.
    let out = call(
        &[countdown()],
        "[invoke(\"countdown\", { n = 99 }), invoke(\"countdown\", { n = 98 })]",
    );
    assert!(out.starts_with("tuple[unknown(dynamic), 98]"), "{out}");
}

#[test]
fn argument_errors_match_function_hcl() {
    let pair = Func {
        name: "pair",
        args: vec![("left", None), ("right", Some("\"R\""))],
        locals: vec![],
        body: "\"${left}/${right}\"",
    };
    let pair = || Func {
        name: pair.name,
        args: pair.args.clone(),
        locals: vec![],
        body: pair.body,
    };
    assert_eq!(
        call(&[pair()], "invoke(\"pair\", { left = \"l\" })"),
        "\"l/R\""
    );
    assert_eq!(
        call(&[pair()], "invoke(\"pair\", { right = \"x\" })"),
        "unknown(dynamic)\nmain.hcl:1,1-8: Error in function call; Call to function \"invoke\" failed: function: pair, argument \"left\" expected but not supplied."
    );
    assert_eq!(
        call(
            &[pair()],
            "invoke(\"pair\", { left = \"l\", middle = \"m\" })"
        ),
        "unknown(dynamic)\nmain.hcl:1,1-8: Error in function call; Call to function \"invoke\" failed: function: pair, invalid argument \"middle\"."
    );
    // A key given twice wrong and an argument left out: the wrong key is reported.
    assert_eq!(
        call(
            &[pair()],
            "invoke(\"pair\", { right = \"x\", middle = \"m\" })"
        ),
        "unknown(dynamic)\nmain.hcl:1,1-8: Error in function call; Call to function \"invoke\" failed: function: pair, invalid argument \"middle\"."
    );
    // Given as null, an argument with a default stays null (given is given).
    assert_eq!(
        call(
            &[pair()],
            "invoke(\"pair\", { left = \"l\", right = null })"
        ),
        "unknown(dynamic)\nmain.hcl:1,1-8: Error in function call; Call to function \"invoke\" failed: main.hcl:1,12-17: Invalid template interpolation value; The expression result is null. Cannot include a null value in a string template.."
    );
    assert_eq!(
        call(&[pair()], "invoke(\"pair\", [\"l\", \"r\"])"),
        "unknown(dynamic)\nmain.hcl:1,1-8: Error in function call; Call to function \"invoke\" failed: arguments to user function 'pair' is not an object, found cty.Tuple([]cty.Type{cty.String, cty.String})."
    );
    assert_eq!(
        call(&[pair()], "invoke(\"missing\", {})"),
        "unknown(dynamic)\nmain.hcl:1,1-8: Error in function call; Call to function \"invoke\" failed: user function 'missing' not found."
    );
    // Unknown arguments make an unknown result without calling.
    assert_eq!(
        call(&[pair()], "invoke(\"pair\", nosuch)").lines().next(),
        Some("unknown(dynamic)")
    );
}

/// `pair(left, right = "R")`, returning `"left/right"`.
fn pair() -> Func {
    Func {
        name: "pair",
        args: vec![("left", None), ("right", Some("\"R\""))],
        locals: vec![],
        body: "\"${left}/${right}\"",
    }
}

#[test]
fn a_literal_argument_object_is_bound_without_being_built() {
    // A literal naming only declared arguments binds its values to the frame; anything
    // else (an undeclared key, an object not written as a literal) builds the object.
    let listing = |main: &str| {
        let (p, c) = program(&[pair()], main);
        fn_hcl::bytecode::disasm::disassemble(&p, c)
    };
    let bound = listing("invoke(\"pair\", { right = 1, left = 2 })");
    assert!(
        bound.contains("invoke_bound pair slots=Some([Some(1), Some(0)])"),
        "{bound}"
    );
    for generic in [
        "invoke(\"pair\", { left = 1, middle = 2 })",
        "invoke(\"pair\", merge({ left = 1 }))",
        "invoke(\"pair\", { (\"le${\"ft\"}\") = 1 })",
    ] {
        let l = listing(generic);
        assert!(
            l.contains("invoke pair") && !l.contains("invoke_bound"),
            "{l}"
        );
    }
    // Both ways answer alike: every argument given, one left to its default, one left
    // out without a default, a null given, a key given twice (the last one counts), an
    // unknown value, an argument that fails.
    for args in [
        "left = \"l\", right = \"r\"",
        "left = \"l\"",
        "right = \"r\"",
        "left = \"l\", right = null",
        "left = \"a\", left = \"b\"",
        "left = nosuch",
        "left = \"l\", right = [1]",
        "",
    ] {
        // Spaces where the other has `merge(`: the diagnostics' columns match.
        let literal = call(&[pair()], &format!("invoke(\"pair\",       {{ {args} }} )"));
        let built = call(&[pair()], &format!("invoke(\"pair\", merge({{ {args} }}))"));
        assert_eq!(literal, built, "{{ {args} }}");
    }
    assert_eq!(
        call(
            &[pair()],
            "invoke(\"pair\", { left = \"a\", left = \"b\" })"
        ),
        "\"b/R\""
    );
}

#[test]
fn locals_of_user_functions() {
    let f = Func {
        name: "add",
        args: vec![("a", None), ("b", Some("1"))],
        locals: vec![("output", "a + b"), ("twice", "output * 2")],
        body: "twice",
    };
    assert_eq!(call(&[f], "invoke(\"add\", { a = 2 })"), "6");
    // A failing local is unknown; the body's error is the invoke's error.
    let g = Func {
        name: "g",
        args: vec![("a", None)],
        locals: vec![("bad", "a.nosuch")],
        body: "\"x${bad}\"",
    };
    assert_eq!(call(&[g], "invoke(\"g\", { a = {} })"), "unknown(string)");
}

#[test]
fn untaken_branch_does_not_recurse() {
    // An untaken branch that would recurse forever: evaluated for its type only.
    let forever = func(
        "forever",
        &["n"],
        "true ? n : invoke(\"forever\", { n = n + 1 })",
    );
    let start = Instant::now();
    assert_eq!(call(&[forever], "invoke(\"forever\", { n = 1 })"), "1");
    assert!(start.elapsed() < Duration::from_secs(1));
}

#[test]
fn try_and_can() {
    assert_eq!(run("try(nosuch, \"fallback\")", &[]), "\"fallback\"");
    assert_eq!(run("try([\"a\", \"b\"][5], \"oob\")", &[]), "\"oob\"");
    assert_eq!(run("try({ a = 1 }.b, \"missing\")", &[]), "\"missing\"");
    assert_eq!(run("try(null, \"x\")", &[]), "null(dynamic)");
    assert_eq!(run("can([1][5])", &[]), "false");
    assert_eq!(run("can(1 / 0)", &[]), "true");
    assert_eq!(run("can(nosuch)", &[]), "false");
    // Depending on unknown values: the result is unknown.
    let u = Value::Unknown(fn_hcl::value::Type::Dynamic);
    assert_eq!(
        run("try(u.x, \"d\")", &[("u", u.clone())]),
        "unknown(dynamic)"
    );
    assert_eq!(run("can(u)", &[("u", u.clone())]), "unknown(bool)");
    assert_eq!(
        run("try(nosuch)", &[]),
        "unknown(dynamic)\nmain.hcl:1,1-5: Error in function call; Call to function \"try\" failed: no expression succeeded:\n- Unknown variable (at main.hcl:1,5-11)\n  There is no variable named \"nosuch\".\n\nAt least one expression must produce a successful result."
    );
    // An argument that is one traversal is evaluated once, as its own probe (hcl's
    // `dependsOnUnknowns` traverses it, then the argument is evaluated). Probed as the
    // traversal `o` when parenthesized, the unknown `o.u` makes the whole result unknown.
    let o = Value::object(vec![
        ("a".into(), Value::NULL),
        ("b".into(), Value::object(vec![("c".into(), Value::int(1))])),
        ("u".into(), u.clone()),
    ]);
    let with_o = |src: &str| run(src, &[("o", o.clone())]);
    assert_eq!(with_o("try(o.b.c, \"d\")"), "1");
    assert_eq!(with_o("try((o).b.c, \"d\")"), "unknown(dynamic)");
    assert_eq!(with_o("try(o.a.x, \"d\")"), "\"d\"");
    assert_eq!(with_o("try(o.zz, o.b.c)"), "1");
    assert_eq!(with_o("try(o.u, \"d\")"), "unknown(dynamic)");
    assert_eq!(with_o("try(o.b, \"d\")"), "object{c = 1}");
    assert_eq!(with_o("can(o.b.c)"), "true");
    assert_eq!(with_o("can(o.a.x)"), "false");
    assert_eq!(with_o("can(o.u)"), "unknown(bool)");
    assert_eq!(
        with_o("try(o.a.x)"),
        "unknown(dynamic)\nmain.hcl:1,1-5: Error in function call; Call to function \"try\" failed: no expression succeeded:\n- Attempt to get attribute from null value (at main.hcl:1,8-10)\n  This value is null, so it does not have any attributes.\n\nAt least one expression must produce a successful result."
    );
    assert_eq!(
        run("try()", &[]),
        "unknown(dynamic)\nmain.hcl:1,1-5: Error in function call; Call to function \"try\" failed: at least one argument is required."
    );
    assert_eq!(
        run("can()", &[]),
        "unknown(dynamic)\nmain.hcl:1,5-6: Not enough function arguments; Function \"can\" expects 1 argument(s). Missing value for \"expression\"."
    );
    assert_eq!(
        run("can(1, 2)", &[]),
        "unknown(dynamic)\nmain.hcl:1,8-9: Too many function arguments; Function \"can\" expects only 1 argument(s)."
    );
}

#[test]
fn unknown_function() {
    assert_eq!(
        run("nosuchfn(1)", &[]),
        "unknown(dynamic)\nmain.hcl:1,1-9: Call to unknown function; There is no function named \"nosuchfn\"."
    );
    assert_eq!(
        run("tryy(1)", &[]),
        "unknown(dynamic)\nmain.hcl:1,1-5: Call to unknown function; There is no function named \"tryy\". Did you mean \"try\"?"
    );
    // Functions left out on purpose say why (the DSL is hermetic and pure).
    assert_eq!(
        run("timestamp()", &[]),
        "unknown(dynamic)\nmain.hcl:1,1-10: Call to unknown function; There is no function named \"timestamp\". impure functions are not available: a function-hcl program must give the same output for the same input."
    );
    assert_eq!(
        run("file(\"x\")", &[]),
        "unknown(dynamic)\nmain.hcl:1,1-5: Call to unknown function; There is no function named \"file\". file functions are not available: a function-hcl program is evaluated in memory."
    );
}

#[test]
fn start_ranges_follow_hcl() {
    // A template argument starts at its first part; a call at its name through "(".
    let e = parse("parseint(\"zz\", 10)");
    let fn_hcl::syntax::ast::ExprKind::Call { args, .. } = &e.kind else {
        panic!("not a call")
    };
    let r = fn_hcl::bytecode::compile::start_range(&args[0]);
    assert_eq!((r.start.col, r.end.col), (11, 13));
    let e = parse("f(g(1))");
    let fn_hcl::syntax::ast::ExprKind::Call { args, .. } = &e.kind else {
        panic!("not a call")
    };
    let r = fn_hcl::bytecode::compile::start_range(&args[0]);
    assert_eq!((r.start.col, r.end.col), (3, 5));
}

fn budget(src: &str, limits: Limits) -> fn_hcl::bytecode::vm::VmError {
    let start = Instant::now();
    let (r, _) = eval_with(src, &[], limits);
    assert!(
        start.elapsed() < Duration::from_secs(3),
        "{src} took {:?}",
        start.elapsed()
    );
    r.expect_err("budget exceeded")
}

#[test]
fn budgets_stop_pathological_expressions() {
    let limits = Limits {
        max_instructions: 2_000_000,
        max_alloc_elements: 200_000,
        ..Limits::default()
    };
    let e = budget(
        "[for a in [for i in [0,1,2,3,4,5,6,7,8,9]: i]: [for b in [for x in [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20]: [for y in [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20]: [for z in [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20]: z]]]: b]]",
        Limits {
            max_alloc_elements: 1000,
            ..limits
        },
    );
    assert_eq!(e.kind, VmErrorKind::Limit(LimitKind::AllocElements));
    assert!(
        e.message.starts_with(
            "evaluation budget exceeded: more than 1000 collection elements allocated (at main.hcl:"
        ),
        "{}",
        e.message
    );
    // Instruction budget: deep recursion through every branch.
    let (p, c) = program(&[fib()], "invoke(\"fib\", { n = 40 })");
    let mut vm = Vm::new(
        &p,
        Limits {
            max_instructions: 100_000,
            ..Limits::default()
        },
    );
    let e = vm.eval(c, &[], &mut Vec::new()).expect_err("instructions");
    assert_eq!(e.kind, VmErrorKind::Limit(LimitKind::Instructions));
    assert!(
        e.message.contains("more than 100000 instructions executed"),
        "{}",
        e.message
    );
    // ... exactly at the instruction past the budget, whatever the budget (the loop looks
    // at its budgets only at the steps where one may run out).
    assert_eq!(vm.usage().instructions, 100_001);
    for max in [1, 7, 4095, 4096, 4097, 12_345] {
        let (p, c) = program(&[fib()], "invoke(\"fib\", { n = 40 })");
        let mut vm = Vm::new(
            &p,
            Limits {
                max_instructions: max,
                ..Limits::default()
            },
        );
        let e = vm.eval(c, &[], &mut Vec::new()).expect_err("instructions");
        assert_eq!(e.kind, VmErrorKind::Limit(LimitKind::Instructions), "{max}");
        assert_eq!(vm.usage().instructions, max + 1);
    }
    // Wall time.
    let (p, c) = program(&[fib()], "invoke(\"fib\", { n = 40 })");
    let mut vm = Vm::new(
        &p,
        Limits {
            max_wall: Duration::from_millis(50),
            max_invocations: u64::MAX,
            ..Limits::default()
        },
    );
    let e = vm.eval(c, &[], &mut Vec::new()).expect_err("wall");
    assert_eq!(e.kind, VmErrorKind::Limit(LimitKind::WallTime));
}

/// The wall clock is read even when no step count lands on a multiple of 64: each inner
/// iteration here counts 64 steps (`ForNext`, the 62 of a 61-attribute path, `ForPush`),
/// so a check of "steps a multiple of 64" met the same residue a thousand times in a
/// row. With the budget spent from the start, the VM stops at the first clock reading
/// (4,096 steps and less than a path more), not at the instruction budget.
#[test]
fn wall_budget_is_read_when_paths_step_over_the_check() {
    let path = ".a".repeat(61);
    let nested = (0..61).fold("1".to_string(), |v, _| format!("{{ a = {v} }}"));
    let body = format!("[for i in range(1000) : [for j in range(1000) : x{path}]]");
    let main = format!("invoke(\"f\", {{ x = {nested} }})");
    let f = Func {
        name: "f",
        args: vec![("x", None)],
        locals: vec![],
        body: Box::leak(body.into_boxed_str()),
    };
    let (p, c) = program(&[f], &main);
    let mut vm = Vm::new(
        &p,
        Limits {
            max_wall: Duration::ZERO,
            ..Limits::default()
        },
    );
    let e = vm.eval(c, &[], &mut Vec::new()).expect_err("wall");
    assert_eq!(e.kind, VmErrorKind::Limit(LimitKind::WallTime));
    let used = vm.usage().instructions;
    assert!((4096..4096 + 200).contains(&used), "{used} instructions");
}

#[test]
fn budget_stops_string_doubling() {
    // A string doubled 60 times through nested user-function calls.
    let dbl = func(
        "dbl",
        &["s", "n"],
        "n == 0 ? s : invoke(\"dbl\", { s = \"${s}${s}\", n = n - 1 })",
    );
    let (p, c) = program(&[dbl], "invoke(\"dbl\", { s = \"ab\", n = 60 })");
    let start = Instant::now();
    let mut vm = Vm::new(&p, Limits::default());
    let e = vm.eval(c, &[], &mut Vec::new()).expect_err("bytes");
    assert_eq!(e.kind, VmErrorKind::Limit(LimitKind::AllocBytes));
    assert!(start.elapsed() < Duration::from_secs(3));
}

#[test]
fn call_budget_stops_exponential_recursion() {
    // Two calls a level, 60 levels: 2^60 calls, each cheap; the call budget ends it.
    let bomb = func(
        "bomb",
        &["n"],
        "n == 0 ? 0 : invoke(\"bomb\", { n = n - 1 }) + invoke(\"bomb\", { n = n - 1 })",
    );
    let (p, c) = program(&[bomb], "invoke(\"bomb\", { n = 60 })");
    let mut vm = Vm::new(
        &p,
        Limits {
            max_invocations: 5_000,
            ..Limits::default()
        },
    );
    let e = vm.eval(c, &[], &mut Vec::new()).expect_err("calls");
    assert_eq!(e.kind, VmErrorKind::Limit(LimitKind::Invocations));
    assert!(vm.invocations() <= 5_001, "{}", vm.invocations());
    assert!(
        e.message.starts_with(
            "evaluation budget exceeded: more than 5000 user function calls (at main.hcl:"
        ),
        "{}",
        e.message
    );
}

#[test]
fn nested_calls_run_on_small_stacks() {
    // Below the red zone every call continues on a fresh segment; just above it the first
    // calls run on the thread's own stack and the rest move: a level that used more than
    // the red zone between two checks would overflow here. (Compiled here, run there.)
    let (p, c) = program(&[fact()], "invoke(\"fact\", { n = 99 })");
    for stack in [128 << 10, (1 << 20) + (64 << 10), (1 << 20) + (512 << 10)] {
        let out = std::thread::scope(|s| {
            std::thread::Builder::new()
                .stack_size(stack)
                .spawn_scoped(s, || {
                    let mut vm = Vm::new(&p, Limits::default());
                    vm.eval(c, &[], &mut Vec::new()).map(|v| show(&v))
                })
                .expect("thread")
                .join()
                .expect("no overflow")
        });
        let out = out.expect("within budget");
        assert!(
            out.starts_with("933262154439441526816992388562667"),
            "{stack}: {out}"
        );
    }
}

/// `range` charges each value it makes before keeping it, as every builtin charges what
/// it allocates: over the budget it stops there, naming itself; within the budget, a
/// range past cty's 1,024 values gets cty's error, as the Go implementation gives it.
#[test]
fn range_charges_its_values_as_it_makes_them() {
    let elements = |n| Limits {
        max_alloc_elements: n,
        ..Limits::default()
    };
    let e = budget("range(5000)", elements(100));
    assert_eq!(e.kind, VmErrorKind::Limit(LimitKind::AllocElements));
    assert!(e.message.ends_with("(in range)"), "{}", e.message);
    let (r, diags) = eval_with("range(0, 1000000)", &[], elements(5_000));
    assert!(r.is_ok(), "{r:?}");
    assert!(
        texts(&diags)
            .iter()
            .any(|t| t.contains("more than 1024 values were generated")),
        "{diags:?}"
    );
    // Within both, the values are charged once (by range as it makes them, not again
    // for its result): 1,000 elements fit a budget of exactly 1,000.
    let (r, diags) = eval_with("range(1000)", &[], elements(1_000));
    assert!(r.is_ok() && diags.is_empty(), "{r:?} {diags:?}");
}

#[test]
fn a_templates_literal_text_counts_toward_its_bytes() {
    // The literal text stays in the template's site (not pushed with the values): it is
    // charged with them, before the join.
    let long = "a".repeat(300);
    let src = format!("\"${{x}}-{long}\"");
    let vars = [("x", Value::string("y"))];
    let bytes = |n| Limits {
        max_alloc_bytes: n,
        ..Limits::default()
    };
    let e = eval_with(&src, &vars, bytes(250))
        .0
        .expect_err("over the budget");
    assert_eq!(e.kind, VmErrorKind::Limit(LimitKind::AllocBytes));
    let (r, diags) = eval_with(&src, &vars, bytes(1000));
    let v = r.expect("within the budget");
    assert_eq!(v.as_str(), Some(format!("y-{long}").as_str()), "{diags:?}");
    // Literal text between values of every kind, in order.
    let (v, _) = eval("\"<${1}|${true}|${\"s\"}>${2.5}.\"", &[]);
    assert_eq!(v.as_str(), Some("<1|true|s>2.5."));
}
