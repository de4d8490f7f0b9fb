//! Expression semantics of the VM: operators, conversions, templates, collections, `for`,
//! splats and conditionals, with hcl's exact diagnostics.

mod vm_util;
use vm_util::*;

#[test]
fn literals_and_arithmetic() {
    assert_eq!(run("1 + 2 * 3", &[]), "7");
    assert_eq!(run("\"5\" + 1", &[]), "6");
    assert_eq!(run("7 % 3", &[]), "1");
    assert_eq!(run("-(2 - 5)", &[]), "3");
    assert_eq!(run("10 / 4", &[]), "2.5");
}

#[test]
fn traversal_errors() {
    let req = obj(vec![("name", s("x"))]);
    assert_eq!(
        run("req.nosuch", &[("req", req.clone())]),
        "unknown(dynamic)\nmain.hcl:1,4-11: Unsupported attribute; This object does not have an attribute named \"nosuch\"."
    );
    assert_eq!(
        run("nmae", &[("name", s("x"))]),
        "unknown(dynamic)\nmain.hcl:1,1-5: Unknown variable; There is no variable named \"nmae\". Did you mean \"name\"?"
    );
}

#[test]
fn operators_convert_like_cty() {
    assert_eq!(
        run("\"a\" + 1", &[]),
        "unknown(number)\nmain.hcl:1,1-4: Invalid operand; Unsuitable value for left operand: a number is required."
    );
    assert_eq!(
        run("null + 1", &[]),
        "unknown(number)\nmain.hcl:1,1-9: Operation failed; Error during operation: argument must not be null."
    );
    assert_eq!(run("1 < 2", &[]), "true");
    assert_eq!(run("\"10\" > 9", &[]), "true");
    assert_eq!(run("1 == \"1\"", &[]), "false");
    assert_eq!(run("1 != \"1\"", &[]), "true");
    assert_eq!(run("null == null", &[]), "true");
    assert_eq!(run("[1, \"a\"] == [1, \"a\"]", &[]), "true");
    assert_eq!(run("{ a = 1 } == { a = 1 }", &[]), "true");
    assert_eq!(run("!true", &[]), "false");
    assert_eq!(
        run("!1", &[]),
        "unknown(bool)\nmain.hcl:1,2-3: Invalid operand; Unsuitable value for unary operand: bool required, but have number."
    );
}

#[test]
fn logical_operators_short_circuit_like_hcl() {
    // hcl v2.24 evaluates both sides, but a deciding side drops the other side's diagnostics.
    assert_eq!(run("true || nosuch", &[]), "true");
    assert_eq!(run("nosuch || true", &[]), "true");
    assert_eq!(run("false && nosuch", &[]), "false");
    assert_eq!(
        run("nosuch && true", &[]),
        "unknown(bool)\nmain.hcl:1,1-7: Unknown variable; There is no variable named \"nosuch\"."
    );
    assert_eq!(run("true && false", &[]), "false");
    assert_eq!(run("false || false", &[]), "false");
    assert_eq!(
        run("true || \"x\"", &[]),
        "unknown(bool)\nmain.hcl:1,9-12: Invalid operand; Unsuitable value for right operand: a bool is required."
    );
}

#[test]
fn conditional_unifies_branch_types() {
    assert_eq!(run("true ? 1 : \"a\"", &[]), "\"1\"");
    assert_eq!(run("false ? 1 : \"a\"", &[]), "\"a\"");
    assert_eq!(run("c ? 1 : \"a\"", &[("c", Value::Bool(true))]), "\"1\"");
    let req = obj(vec![("x", n(5))]);
    assert_eq!(
        run(
            "c ? req.x : \"d\"",
            &[("c", Value::Bool(true)), ("req", req)]
        ),
        "\"5\""
    );
    assert_eq!(
        run("c ? null : 5", &[("c", Value::Bool(true))]),
        "null(number)"
    );
    assert_eq!(run("c ? null : 5", &[("c", Value::Bool(false))]), "5");
    assert_eq!(run("\"true\" ? 1 : 2", &[]), "1");
    // Failures in the branch not taken are dropped.
    assert_eq!(run("true ? 1 : nosuch", &[]), "1");
    assert_eq!(
        run("true ? [1] : { a = 1 }", &[]),
        "unknown(dynamic)\nmain.hcl:1,8-23: Inconsistent conditional result types; The true and false result expressions must have consistent types. The 'true' value is tuple, but the 'false' value is object."
    );
    assert_eq!(
        run("null ? 1 : 2", &[]),
        "unknown(number)\nmain.hcl:1,1-5: Null condition; The condition value is null. Conditions must either be true or false."
    );
    assert_eq!(
        run("\"x\" ? 1 : 2", &[]),
        "unknown(number)\nmain.hcl:1,1-4: Incorrect condition type; The condition expression must be of type bool."
    );
}

#[test]
fn templates_convert_parts() {
    assert_eq!(run("\"a${1}b${true}\"", &[]), "\"a1btrue\"");
    // A lone interpolation yields its value unconverted.
    assert_eq!(run("\"${null}\"", &[]), "null(dynamic)");
    assert_eq!(run("\"${1}\"", &[]), "1");
    assert_eq!(
        run("\"x${null}\"", &[]),
        "\"x\"\nmain.hcl:1,5-9: Invalid template interpolation value; The expression result is null. Cannot include a null value in a string template."
    );
    assert_eq!(
        run("\"x${[1]}\"", &[]),
        "\"x\"\nmain.hcl:1,5-8: Invalid template interpolation value; Cannot include the given value in a string template: string required, but have tuple."
    );
    assert_eq!(run("\"%{if true}a%{else}b%{endif}\"", &[]), "\"a\"");
    assert_eq!(run("\"<%{if false}a%{endif}>\"", &[]), "\"<>\"");
    assert_eq!(run("\"%{for x in [1, 2]}${x},%{endfor}\"", &[]), "\"1,2,\"");
}

#[test]
fn templates_of_strings_short_and_long_join_alike() {
    // Joined on the stack when the result is ASCII of at most 15 bytes, in a buffer
    // otherwise: every length around the limit, and non-ASCII parts, which the result's
    // normalization may join ("e" and a combining acute accent are one "é").
    let join = |a: &str, b: &str| {
        let (v, d) = eval("\"${a}-${b}\"", &[("a", s(a)), ("b", s(b))]);
        assert!(d.is_empty(), "{a:?} {b:?}: {:?}", texts(&d));
        v.as_str().map(str::to_owned)
    };
    for n in 0..=20 {
        let a = "x".repeat(n);
        assert_eq!(join(&a, "yz").as_deref(), Some(format!("{a}-yz").as_str()));
        assert_eq!(join("", &a).as_deref(), Some(format!("-{a}").as_str()));
    }
    assert_eq!(join("e", "\u{301}").as_deref(), Some("e-\u{301}"));
    let (v, _) = eval("\"${a}${b}\"", &[("a", s("e")), ("b", s("\u{301}"))]);
    assert_eq!(v.as_str(), Some("\u{e9}"));
    assert_eq!(join("ünï", "çødé").as_deref(), Some("ünï-çødé"));
    // A number among strings takes the general path, with the same answer.
    assert_eq!(run("\"${a}${1}\"", &[("a", s("k="))]), "\"k=1\"");
}

#[test]
fn collections() {
    assert_eq!(
        run("[1, \"a\", null]", &[]),
        "tuple[1, \"a\", null(dynamic)]"
    );
    assert_eq!(run("{ b = 1, a = 2, b = 3 }", &[]), "object{a = 2, b = 3}");
    assert_eq!(run("{ (k) = 1 }", &[("k", s("x"))]), "object{x = 1}");
    assert_eq!(run("{ \"a.b\" = 1, 2 = 3 }", &[]), "object{2 = 3, a.b = 1}");
    assert_eq!(
        run("{ (k) = 1 }", &[("k", Value::NULL)]),
        "unknown(dynamic)\nmain.hcl:1,9-10: Null value as key; Can't use a null value as a key."
    );
    assert_eq!(
        run("{ a.b = 1 }", &[("a", obj(vec![("b", s("x"))]))]),
        "unknown(dynamic)\nmain.hcl:1,3-6: Ambiguous attribute key; If this expression is intended to be a reference, wrap it in parentheses. If it's instead intended as a literal name containing periods, wrap it in quotes to create a string literal."
    );
    // Every item is evaluated, so all diagnostics are collected.
    let (_, d) = eval("{ a = x.y, b = z }", &[("x", obj(vec![]))]);
    assert_eq!(d.len(), 2);
}

#[test]
fn index_and_attribute_errors() {
    assert_eq!(
        run("[1, 2][5]", &[]),
        "unknown(dynamic)\nmain.hcl:1,7-10: Invalid index; The given key does not identify an element in this collection value: the given index is greater than or equal to the length of the collection."
    );
    assert_eq!(run("[1, 2][i]", &[("i", n(1))]), "2");
    assert_eq!(run("[1, 2].1", &[]), "2");
    let req = obj(vec![
        ("n", Value::NULL),
        ("m", Value::map(Type::String, vec![("k".into(), s("v"))])),
    ]);
    assert_eq!(
        run("req.n.a", &[("req", req.clone())]),
        "unknown(dynamic)\nmain.hcl:1,6-8: Attempt to get attribute from null value; This value is null, so it does not have any attributes."
    );
    assert_eq!(
        run("req.m.x", &[("req", req.clone())]),
        "unknown(dynamic)\nmain.hcl:1,6-8: Missing map element; This map does not have an element with the key \"x\"."
    );
    assert_eq!(run("req.m[\"k\"]", &[("req", req.clone())]), "\"v\"");
    assert_eq!(
        run("req.n[0]", &[("req", req.clone())]),
        "unknown(dynamic)\nmain.hcl:1,6-9: Attempt to index null value; This value is null, so it does not have any indices."
    );
    // The traversal is the diagnostic's expression: function-hcl prints its source.
    let (_, d) = eval("req.nosuch.deeper", &[("req", req)]);
    assert_eq!(d.len(), 1);
    let e = d[0].expression.expect("expression range");
    assert_eq!((e.start.col, e.end.col), (1, 18));
}

#[test]
fn for_expressions() {
    assert_eq!(
        run("[for x in [1, 2, 3]: x * 2 if x > 1]", &[]),
        "tuple[4, 6]"
    );
    assert_eq!(
        run("{for k, v in { b = 1, a = 2 }: v => k}", &[]),
        "object{1 = \"b\", 2 = \"a\"}"
    );
    assert_eq!(
        run("[for k, v in { b = 1, a = 2 }: k]", &[]),
        "tuple[\"a\", \"b\"]"
    );
    assert_eq!(run("[for i, v in [\"x\", \"y\"]: i]", &[]), "tuple[0, 1]");
    assert_eq!(
        run("{for x in [\"a\", \"b\", \"a\"]: x => x...}", &[]),
        "object{a = tuple[\"a\", \"a\"], b = tuple[\"b\"]}"
    );
    assert_eq!(
        run("{for x in [\"a\", \"a\"]: x => 1}", &[]),
        "object{a = 1}\nmain.hcl:1,23-24: Duplicate object key; Two different items produced the key \"a\" in this 'for' expression. If duplicates are expected, use the ellipsis (...) after the value expression to enable grouping by key."
    );
    assert_eq!(
        run("[for x in null: x]", &[]),
        "unknown(dynamic)\nmain.hcl:1,11-15: Iteration over null value; A null value cannot be used as the collection in a 'for' expression."
    );
    assert_eq!(
        run("[for x in \"s\": x]", &[]),
        "unknown(dynamic)\nmain.hcl:1,11-14: Iteration over non-iterable value; A value of type string cannot be used as the collection in a 'for' expression."
    );
    assert_eq!(
        run("[for x in [1]: x if null]", &[]),
        "unknown(dynamic)\nmain.hcl:1,21-25: Condition is null; The value of the 'if' clause must not be null."
    );
    // Variables of a `for` shadow outer names and disappear after it.
    assert_eq!(
        run("[for x in [1]: [for x in [2]: x]]", &[("x", n(9))]),
        "tuple[tuple[2]]"
    );
}

/// Each element's key and value land in their own variables for every kind of collection,
/// with and without a key variable (a `for` without one binds the value alone), in nested
/// `for`s whose variables sit side by side, and with a string key and a bool condition
/// taken as they are.
#[test]
fn for_binds_keys_and_values_of_every_collection() {
    let set = run("toset([\"b\", \"a\"])", &[]);
    assert_eq!(set, "set[\"a\", \"b\"]");
    assert_eq!(
        run("[for k, v in toset([\"b\", \"a\"]): \"${k}=${v}\"]", &[]),
        "tuple[\"a=a\", \"b=b\"]"
    );
    assert_eq!(
        run("[for v in toset([2, 1]): v * 10]", &[]),
        "tuple[10, 20]"
    );
    assert_eq!(
        run("[for v in tomap({ b = 1, a = 2 }): v]", &[]),
        "tuple[2, 1]"
    );
    assert_eq!(
        run("[for k, v in tolist([\"x\", \"y\"]): \"${k}${v}\"]", &[]),
        "tuple[\"0x\", \"1y\"]"
    );
    assert_eq!(
        run(
            "[for k, v in { a = [1, 2], b = [3] }: [for x in v: \"${k}${x}\"]]",
            &[]
        ),
        "tuple[tuple[\"a1\", \"a2\"], tuple[\"b3\"]]"
    );
    assert_eq!(
        run(
            "[for v in [[1, 2], [3]]: [for i, x in v: [for y in [10]: i + x + y]]]",
            &[]
        ),
        "tuple[tuple[tuple[11], tuple[13]], tuple[tuple[13]]]"
    );
    assert_eq!(
        run(
            "{for v in [\"p\", \"q\"]: v => upper(v) if v != \"q\"}",
            &[]
        ),
        "object{p = \"P\"}"
    );
    assert_eq!(
        run("{for i, v in [\"p\", \"q\"]: v => i if true}", &[]),
        "object{p = 0, q = 1}"
    );
}

#[test]
fn splats() {
    assert_eq!(run("[{ a = 1 }, { a = 2 }][*].a", &[]), "tuple[1, 2]");
    assert_eq!(run("[{ a = 1 }, { a = 2 }].*.a", &[]), "tuple[1, 2]");
    // A single value is wrapped, null becomes an empty tuple.
    assert_eq!(run("x[*].a", &[("x", obj(vec![("a", n(1))]))]), "tuple[1]");
    assert_eq!(run("x[*].a", &[("x", Value::NULL)]), "tuple[]");
    let list = Value::list(
        Type::object(vec![(fn_hcl::value::Str::from("a"), Type::Number)]),
        vec![obj(vec![("a", n(3))])],
    );
    assert_eq!(run("l[*].a", &[("l", list)]), "list[3]");
    let empty = Value::list(
        Type::object(vec![(fn_hcl::value::Str::from("a"), Type::Number)]),
        vec![],
    );
    assert_eq!(run("l[*].a", &[("l", empty)]), "list[]");
}

#[test]
fn unknowns_propagate_without_diagnostics() {
    let u = Value::Unknown(Type::Dynamic);
    for (src, want) in [
        ("u.a.b", "unknown(dynamic)"),
        ("\"x${u}\"", "unknown(string)"),
        ("[u, 1]", "tuple[unknown(dynamic), 1]"),
        (
            "{ a = { b = u } }",
            "object{a = object{b = unknown(dynamic)}}",
        ),
        ("u + 1", "unknown(number)"),
        ("u ? 1 : 2", "unknown(number)"),
        ("[for x in u: x]", "unknown(dynamic)"),
        ("[for x in [1]: u]", "tuple[unknown(dynamic)]"),
        ("u[*].a", "unknown(dynamic)"),
        ("u == 1", "unknown(bool)"),
        ("u[0]", "unknown(dynamic)"),
        ("{ (u) = 1 }", "unknown(dynamic)"),
    ] {
        assert_eq!(run(src, &[("u", u.clone())]), want, "{src}");
    }
}

use fn_hcl::value::{Type, Value};

#[test]
fn realistic_resource_body() {
    let req = obj(vec![(
        "composite",
        obj(vec![
            (
                "metadata",
                obj(vec![("name", s("demo")), ("namespace", s("team-a"))]),
            ),
            (
                "spec",
                obj(vec![
                    ("region", s("us-east-1")),
                    ("replicas", n(3)),
                    (
                        "subnets",
                        Value::tuple(vec![obj(vec![("id", s("a"))]), obj(vec![("id", s("b"))])]),
                    ),
                ]),
            ),
        ]),
    )]);
    let src = r#"{
      metadata = { name = "${req.composite.metadata.name}-vpc", labels = { team = req.composite.metadata.namespace } }
      spec = {
        region    = req.composite.spec.region
        tags      = { for i, s in req.composite.spec.subnets : s.id => i if i % 2 == 0 }
        size      = req.composite.spec.replicas > 2 ? "large" : "small"
        subnetIds = try(req.composite.spec.subnets[*].id, [])
        missing   = req.composite.spec.nosuch
      }
    }"#;
    let out = run(src, &[("req", req)]);
    assert_eq!(
        out,
        "object{metadata = object{labels = object{team = \"team-a\"}, name = \"demo-vpc\"}, spec = object{missing = unknown(dynamic), region = \"us-east-1\", size = \"large\", subnetIds = tuple[\"a\", \"b\"], tags = object{a = 0}}}\nmain.hcl:8,39-46: Unsupported attribute; This object does not have an attribute named \"nosuch\"."
    );
}

#[test]
fn negative_literal_index_is_a_traversal_step() {
    assert_eq!(
        run("[1][-1]", &[]),
        "unknown(dynamic)\nmain.hcl:1,4-8: Invalid index; The given key does not identify an element in this collection value: a negative number is not a valid index for a sequence."
    );
    assert_eq!(run("-2 * 3", &[]), "-6");
}

#[test]
fn every_failure_of_an_expression_is_reported() {
    // Nested objects, templates, tuples, for bodies and splat items: every failure is a
    // diagnostic (with its range) and the failing parts are unknown.
    let req = obj(vec![
        ("a", obj(vec![("b", n(1))])),
        (
            "xs",
            Value::tuple(vec![obj(vec![("id", s("x"))]), obj(vec![])]),
        ),
    ]);
    let src = "{ o = { p = req.a.c }, t = \"v-${req.z}\", l = [for x in req.xs: x.name], s = req.xs[*].id, ok = req.a.b }";
    let (v, d) = eval(src, &[("req", req)]);
    assert_eq!(
        show(&v),
        "object{l = tuple[unknown(dynamic), unknown(dynamic)], o = object{p = unknown(dynamic)}, ok = 1, s = unknown(dynamic), t = unknown(string)}"
    );
    assert_eq!(
        texts(&d),
        [
            "main.hcl:1,18-20: Unsupported attribute; This object does not have an attribute named \"c\".",
            "main.hcl:1,36-38: Unsupported attribute; This object does not have an attribute named \"z\".",
            "main.hcl:1,65-70: Unsupported attribute; This object does not have an attribute named \"name\".",
            "main.hcl:1,65-70: Unsupported attribute; This object does not have an attribute named \"name\".",
            "main.hcl:1,86-89: Unsupported attribute; This object does not have an attribute named \"id\".",
        ]
    );
    // Each diagnostic's expression range is the traversal it came from; in a full splat
    // that traversal starts at the `[*]` it is relative to (hclsyntax's
    // makeRelativeTraversal: RangeBetween(the anonymous symbol, the step)).
    let exprs: Vec<(u32, u32)> = d
        .iter()
        .map(|d| {
            d.expression
                .map(|e| (e.start.col, e.end.col))
                .unwrap_or((0, 0))
        })
        .collect();
    assert_eq!(exprs, [(13, 20), (33, 38), (64, 70), (64, 70), (83, 89)]);
}

/// `x.a.b` compiles to one `slot_path` instruction that reads the objects on the way in
/// place (a chunk of only that is read without a run when every step is present);
/// `(x).a.b` to a slot and one `attr` per step. Both must give the same value, the same
/// diagnostics (`x  .a` keeps the columns of `(x).a`) and count the same number of
/// instructions against the budget, whichever step fails and however.
#[test]
fn slot_paths_read_like_attribute_steps() {
    use fn_hcl::bytecode::vm::Limits;
    let str_map = |pairs: Vec<(&str, Value)>| {
        Value::map(
            Type::String,
            pairs
                .into_iter()
                .map(|(k, v)| (fn_hcl::value::Str::from(k), v))
                .collect(),
        )
    };
    let x = obj(vec![
        ("a", obj(vec![("b", s("v")), ("n", Value::NULL)])),
        ("n", Value::NULL),
        ("u", Value::Unknown(Type::Dynamic)),
        (
            "o",
            Value::Unknown(Type::object(vec![(
                fn_hcl::value::Str::from("b"),
                Type::String,
            )])),
        ),
        ("l", Value::list(Type::String, vec![s("p"), s("q")])),
        ("t", Value::tuple(vec![obj(vec![("b", n(1))])])),
        ("m", str_map(vec![("k", s("v"))])),
        ("s", s("str")),
    ]);
    let vars = [("x", x)];
    let paths = [
        ".a", ".a.b", ".a.c", ".a.n", ".a.n.z", ".a.b.c", ".n", ".n.b", ".u.b.c", ".o.b", ".o.c",
        ".l.b", ".t.b", ".m.k", ".m.z", ".m.z.y", ".s.x", ".z", ".z.y.w",
    ];
    for path in paths {
        let fused = format!("x  {path}");
        let steps = format!("(x){path}");
        let listing = |src: &str| {
            let c = compile(src, &["x"]);
            fn_hcl::bytecode::disasm::disassemble(&c.program, c.chunk)
        };
        assert!(listing(&fused).contains("slot_path s0"), "{fused}");
        assert!(!listing(&steps).contains("slot_path"), "{steps}");
        assert_eq!(run(&fused, &vars), run(&steps, &vars), "{path}");
        for max in 1..8 {
            let limits = Limits {
                max_instructions: max,
                ..Limits::default()
            };
            let ok = |src: &str| eval_with(src, &vars, limits).0.is_ok();
            assert_eq!(ok(&fused), ok(&steps), "{path} within {max} instructions");
        }
    }
}
