//! One expression evaluated as a program's expression is: hcl's parser, the compiler and
//! the VM, with named slots bound to values (so tests can pass values no literal makes,
//! such as typed nulls and empty typed collections).
#![allow(dead_code)]

use fn_hcl::bytecode::code::{ChunkId, Code};
use fn_hcl::bytecode::compile::{CodeBuilder, Scope};
use fn_hcl::bytecode::vm::{Limits, Vm, VmError};
use fn_hcl::syntax::diag::Diagnostic;
use fn_hcl::syntax::parser::parse_expression;
use fn_hcl::syntax::span::SourceMap;
use fn_hcl::value::{Str, Value};
use std::sync::Arc;

/// A scope over named slots, in order.
pub struct Names<'a>(pub Vec<&'a str>);

impl Scope for Names<'_> {
    fn resolve(&self, name: &str) -> Option<u32> {
        self.0.iter().position(|n| *n == name).map(|i| i as u32)
    }
    fn visible_names(&self) -> Vec<Str> {
        self.0.iter().map(|n| Str::from(*n)).collect()
    }
}

/// A compiled expression with its program.
pub struct Compiled {
    pub program: Code,
    pub chunk: ChunkId,
    pub sources: Arc<SourceMap>,
}

/// Parses `src` (file `main.hcl`) and compiles it against the slots `names`; a parse
/// error as its diagnostics' texts (`main.hcl:1,2-3: Summary; Detail`).
pub fn compile(src: &str, names: &[&str]) -> Result<Compiled, Vec<String>> {
    let mut sm = SourceMap::new();
    let f = sm.add("main.hcl", src);
    let e = match parse_expression(&sm, f) {
        Ok(e) => e,
        Err(d) => return Err(d.iter().map(|d| d.plain(&sm)).collect()),
    };
    let sources = Arc::new(sm);
    let mut b = CodeBuilder::new(sources.clone());
    let chunk = b.compile_expr(&e, &Names(names.to_vec()));
    Ok(Compiled {
        program: b.finish(),
        chunk,
        sources,
    })
}

/// One evaluation: what the VM returned (a budget error or the value), every diagnostic
/// it reported, and the source map they point into.
pub struct Run {
    pub result: Result<Value, VmError>,
    pub diags: Vec<Diagnostic>,
    pub sources: Arc<SourceMap>,
}

/// Evaluates `src` with `vars` bound under `limits`; a parse error as [`compile`]'s texts.
pub fn eval_with(src: &str, vars: &[(&str, Value)], limits: Limits) -> Result<Run, Vec<String>> {
    let names: Vec<&str> = vars.iter().map(|(n, _)| *n).collect();
    let c = compile(src, &names)?;
    let frame: Vec<Value> = vars.iter().map(|(_, v)| v.clone()).collect();
    let mut vm = Vm::new(&c.program, limits);
    let mut diags = Vec::new();
    let result = vm.eval(c.chunk, &frame, &mut diags);
    Ok(Run {
        result,
        diags,
        sources: c.sources,
    })
}

/// Evaluates `src` with `vars` bound: the value, or the diagnostics as
/// `main.hcl:1,2-3: Summary; Detail` (a parse error, an evaluation error or a budget).
pub fn eval_expr(src: &str, vars: &[(String, Value)]) -> Result<Value, Vec<String>> {
    let vars: Vec<(&str, Value)> = vars.iter().map(|(n, v)| (n.as_str(), v.clone())).collect();
    let run = eval_with(src, &vars, Limits::default())?;
    match run.result {
        Err(e) => Err(vec![format!("budget: {e}")]),
        Ok(_) if run.diags.iter().any(|d| d.is_error()) => {
            Err(run.diags.iter().map(|d| d.plain(&run.sources)).collect())
        }
        Ok(v) => Ok(v),
    }
}
