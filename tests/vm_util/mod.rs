//! Test support for the VM tests: one expression compiled and run (tests/common/expr.rs,
//! panicking on a parse error here) and a compact rendering of values and diagnostics.
#![allow(dead_code)]

#[path = "../common/expr.rs"]
mod expr;

use fn_hcl::bytecode::vm::{Limits, VmError};
use fn_hcl::syntax::diag::Diagnostic;
use fn_hcl::syntax::span::SourceMap;
use fn_hcl::value::Value;

#[allow(unused_imports)]
pub use expr::{Compiled, Names};

/// Parse one expression from `src` as file `main.hcl`.
pub fn parse(src: &str) -> fn_hcl::syntax::ast::Expr {
    let mut sm = SourceMap::new();
    let f = sm.add("main.hcl", src);
    fn_hcl::syntax::parser::parse_expression(&sm, f).unwrap_or_else(|e| panic!("{e:?} in {src:?}"))
}

/// Compile `src` (file `main.hcl`) against the slot names `names`.
pub fn compile(src: &str, names: &[&str]) -> Compiled {
    expr::compile(src, names).unwrap_or_else(|e| panic!("{e:?} in {src:?}"))
}

/// Evaluate `src` with the given slot bindings.
pub fn eval_with(
    src: &str,
    vars: &[(&str, Value)],
    limits: Limits,
) -> (Result<Value, VmError>, Vec<Diagnostic>) {
    let run = expr::eval_with(src, vars, limits).unwrap_or_else(|e| panic!("{e:?} in {src:?}"));
    (run.result, run.diags)
}

/// Evaluate `src` with default limits; panics on a budget error.
pub fn eval(src: &str, vars: &[(&str, Value)]) -> (Value, Vec<Diagnostic>) {
    let (r, d) = eval_with(src, vars, Limits::default());
    (r.unwrap_or_else(|e| panic!("budget: {e}")), d)
}

/// The plain texts (`main.hcl:1,2-3: Summary; Detail`) of diagnostics.
pub fn texts(d: &[Diagnostic]) -> Vec<String> {
    let mut sm = SourceMap::new();
    sm.add("main.hcl", "");
    d.iter().map(|d| d.plain(&sm)).collect()
}

/// A compact rendering of a value with its kind (`tuple[1, "a"]`, `object{a = 1}`).
pub fn show(v: &Value) -> String {
    match v {
        Value::Null(t) => format!("null({t})"),
        Value::Unknown(t) => format!("unknown({t})"),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_cty_string(),
        Value::String(s) => format!("{s:?}"),
        Value::List(s) => format!("list{}", seq(&s.items)),
        Value::Set(s) => format!("set{}", seq(&s.items)),
        Value::Tuple(s) => format!("tuple{}", seq(&s.items)),
        Value::Map(f) => format!("map{}", fields(&f.entries)),
        Value::Object(f) => format!("object{}", fields(&f.entries)),
    }
}

fn seq(items: &[Value]) -> String {
    format!(
        "[{}]",
        items.iter().map(show).collect::<Vec<_>>().join(", ")
    )
}

fn fields(entries: &[(fn_hcl::value::Str, Value)]) -> String {
    format!(
        "{{{}}}",
        entries
            .iter()
            .map(|(k, v)| format!("{k} = {}", show(v)))
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// Evaluate and render: value, then each diagnostic's plain text.
pub fn run(src: &str, vars: &[(&str, Value)]) -> String {
    let (v, d) = eval(src, vars);
    let mut out = show(&v);
    for t in texts(&d) {
        out.push('\n');
        out.push_str(&t);
    }
    out
}

/// Build an object value from pairs.
pub fn obj(pairs: Vec<(&str, Value)>) -> Value {
    Value::object(
        pairs
            .into_iter()
            .map(|(k, v)| (fn_hcl::value::Str::from(k), v))
            .collect(),
    )
}

pub fn s(x: &str) -> Value {
    Value::string(x)
}

pub fn n(x: i64) -> Value {
    Value::int(x)
}
