//! Golden disassembly of a few expressions, and hcl's `Variables()` as the IR uses them.

mod vm_util;
use fn_hcl::bytecode::compile::CodeBuilder;
use fn_hcl::bytecode::disasm::disassemble;
use fn_hcl::bytecode::vm::{Limits, Vm};
use fn_hcl::syntax::span::SourceMap;
use fn_hcl::value::{Type, Value};
use std::sync::Arc;
use vm_util::*;

fn listing(src: &str, names: &[&'static str]) -> String {
    let c = compile(src, names);
    disassemble(&c.program, c.chunk)
}

#[test]
fn golden_disassembly() {
    insta::assert_snapshot!(
        "literal_object_is_one_constant",
        listing("{ a = 1, b = [true, \"x\"] }", &[])
    );
    insta::assert_snapshot!(
        "traversal_and_template",
        listing("\"${req.spec.name}-${each.key}\"", &["req", "each"])
    );
    insta::assert_snapshot!("conditional", listing("c ? 1 : \"a\"", &["c"]));
    insta::assert_snapshot!(
        "for_with_filter",
        listing("[for k, v in m: v.name if k != \"x\"]", &["m"])
    );
    insta::assert_snapshot!("splat_and_try", listing("try(xs[*].id, [])", &["xs"]));
    // An argument that is one traversal is evaluated once, as its own probe.
    insta::assert_snapshot!(
        "try_of_a_traversal",
        listing("try(r.status.arn, r.name, \"pending\")", &["r"])
    );
}

#[test]
fn traversals_of_an_expression() {
    let src = "\"${req.resource.vpc.status.id}\" == local1 ? [for x in xs: x.a + y] : f(z[0].b)";
    let mut sm = SourceMap::new();
    let f = sm.add("main.hcl", src);
    let e = fn_hcl::syntax::parser::parse_expression(&sm, f).expect("parse");
    let mut b = CodeBuilder::new(Arc::new(sm.clone()));
    let scope = Names(vec!["req", "local1", "xs", "y", "z"]);
    let travs = b.compile_traversals(&e, &scope);
    let texts: Vec<&str> = travs.iter().map(|(s, _)| sm.slice(*s)).collect();
    assert_eq!(
        texts,
        ["req.resource.vpc.status.id", "local1", "xs", "y", "z[0].b"]
    );
    // Each traversal is its own chunk: evaluate `z[0].b` with z unknown and with z known.
    let p = b.finish();
    let frame = vec![
        Value::NULL,
        Value::NULL,
        Value::NULL,
        Value::NULL,
        Value::Unknown(Type::Dynamic),
    ];
    let mut vm = Vm::new(&p, Limits::default());
    let mut d = Vec::new();
    let v = vm.eval(travs[4].1, &frame, &mut d).expect("budget");
    assert!(v.is_unknown() && d.is_empty());
    let frame4 = vec![
        Value::NULL,
        Value::NULL,
        Value::NULL,
        Value::NULL,
        Value::tuple(vec![obj(vec![("b", s("B"))])]),
    ];
    let v = vm.eval(travs[4].1, &frame4, &mut d).expect("budget");
    assert_eq!(show(&v), "\"B\"");
}
