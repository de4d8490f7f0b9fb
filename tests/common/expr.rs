//! One expression evaluated as a program's expression is: hcl's parser, the compiler and
//! the VM, with named slots bound to values (so tests can pass values no literal makes,
//! such as typed nulls and empty typed collections).
#![allow(dead_code)]

use fn_hcl::bytecode::compile::{CodeBuilder, Scope};
use fn_hcl::bytecode::vm::{Limits, Vm};
use fn_hcl::syntax::parser::parse_expression;
use fn_hcl::syntax::span::SourceMap;
use fn_hcl::value::Value;
use std::sync::Arc;

struct Slots<'a>(&'a [(String, Value)]);

impl Scope for Slots<'_> {
    fn resolve(&self, name: &str) -> Option<u32> {
        self.0.iter().position(|(n, _)| n == name).map(|i| i as u32)
    }
    fn visible_names(&self) -> Vec<Arc<str>> {
        self.0.iter().map(|(n, _)| Arc::from(n.as_str())).collect()
    }
}

/// Evaluates `src` (file `main.hcl`) with `vars` bound: the value, or the diagnostics as
/// `main.hcl:1,2-3: Summary; Detail` (a parse error, an evaluation error or a budget).
pub fn eval_expr(src: &str, vars: &[(String, Value)]) -> Result<Value, Vec<String>> {
    let mut sm = SourceMap::new();
    let f = sm.add("main.hcl", src);
    let e = match parse_expression(&sm, f) {
        Ok(e) => e,
        Err(d) => return Err(d.iter().map(|d| d.plain(&sm)).collect()),
    };
    let sm = Arc::new(sm);
    let mut b = CodeBuilder::new(sm.clone());
    let chunk = b.compile_expr(&e, &Slots(vars));
    let program = b.finish();
    let frame: Vec<Value> = vars.iter().map(|(_, v)| v.clone()).collect();
    let mut vm = Vm::new(&program, Limits::default());
    let mut diags = Vec::new();
    match vm.eval(chunk, &frame, &mut diags) {
        Err(e) => Err(vec![format!("budget: {e}")]),
        Ok(_) if diags.iter().any(|d| d.is_error()) => {
            Err(diags.iter().map(|d| d.plain(&sm)).collect())
        }
        Ok(v) => Ok(v),
    }
}
