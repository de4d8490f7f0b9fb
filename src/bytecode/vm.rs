//! The stack VM: runs compiled chunks over cty values with hcl's evaluation semantics.
//!
//! Evaluation never throws: like hcl, a failing operation records a [`Diagnostic`] and
//! yields an unknown value, and evaluation goes on so that every problem of an expression is
//! reported. Unknown values propagate as in cty. The only hard failure is a [`VmError`]: a
//! budget (instructions, allocation, wall time) was exceeded, which the caller turns into a
//! Fatal result.
//!
//! A conditional evaluates the branch it takes for real and the other one in *type-only*
//! mode, where `invoke` of a user function yields an unknown instead of running and every
//! diagnostic is discarded: hcl's results (both branches' types unified) at the cost of the
//! taken path only.

use crate::builtins::{self, FuncError, ParamType};
use crate::bytecode::compile::{Callee, ChunkId, Op, Program, Site};
use crate::syntax::ast::{BinaryOp, UnaryOp};
use crate::syntax::diag::{Diagnostic, plain_all};
use crate::syntax::span::Span;
use crate::text::quote::go_quote;
use crate::value::convert::{convert, unify_unsafe};
use crate::value::gofmt::go_syntax;
use crate::value::number::Number;
use crate::value::ops;
use crate::value::{Fields, Kind, Seq, Str, Type, Value};
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

pub use crate::bytecode::disasm::disassemble;

// A compiled program is shared across requests and threads.
const _: () = {
    const fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Program>();
};

/// Budgets of one [`Vm`] (one request). Exceeding any of them is a [`VmError`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Instructions executed, over all evaluations of this VM.
    pub max_instructions: u64,
    /// Collection elements created (tuples, objects, `for` results, splats, builtin results).
    pub max_alloc_elements: u64,
    /// String bytes created (templates, builtin results).
    pub max_alloc_bytes: u64,
    /// Wall time since the VM was created. The largest workloads measured evaluate in 7 ms
    /// (1,000 observed resources) and 72 ms (10,000 resources); the default of 1 s leaves
    /// ample headroom and bounds how long one call holds an evaluation slot.
    pub max_wall: Duration,
    /// User function call depth (function-hcl's limit is 100).
    pub max_depth: u32,
    /// User function calls, over all evaluations of this VM: exponential recursion (two
    /// calls per level, 99 levels) ends here in tens of milliseconds (a call costs about
    /// 3 µs), not at the wall clock. The default, 50,000, is 140 times what the `fleet`
    /// workload makes (350: one per resource) and lets `fib(20)` (21,891 calls) finish.
    /// A call that continues on a fresh native stack (every 12th level, a thread)
    /// counts 10 (fib(20) then costs about 40,000).
    pub max_invocations: u64,
}

impl Limits {
    /// Collection elements a MiB of the memory budget allows (an element holds about 16
    /// bytes): the default 64 MiB gives 4,000,000.
    pub const ELEMENTS_PER_MIB: u64 = 62_500;

    /// The defaults with a memory budget of `mib` MiB: that many MiB of string bytes and
    /// [`Limits::ELEMENTS_PER_MIB`] elements per MiB, which together bound the values,
    /// strings and response of one evaluation at about twice `mib`.
    pub fn with_memory_mib(mib: u64) -> Limits {
        Limits {
            max_alloc_elements: mib.saturating_mul(Self::ELEMENTS_PER_MIB),
            max_alloc_bytes: mib.saturating_mul(1 << 20),
            ..Limits::default()
        }
    }
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_instructions: 20_000_000,
            max_alloc_elements: 4_000_000,
            max_alloc_bytes: 64 << 20,
            max_wall: Duration::from_secs(1),
            max_depth: 100,
            max_invocations: 50_000,
        }
    }
}

/// What an evaluation charged to each budget of its [`Limits`] (the one exceeded ends a
/// little past its limit: the charge that crossed it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Usage {
    pub instructions: u64,
    pub elements: u64,
    pub bytes: u64,
    pub calls: u64,
}

/// Which budget was exceeded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LimitKind {
    Instructions,
    AllocElements,
    AllocBytes,
    WallTime,
    Invocations,
}

/// A budget was exceeded: evaluation stopped. Says which limit and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VmError {
    pub kind: LimitKind,
    /// The expression being evaluated when the limit was hit.
    pub span: Option<Span>,
    /// A complete message, e.g. `evaluation budget exceeded: more than 20000000
    /// instructions executed (at main.hcl:3,9-40)`.
    pub message: String,
}

impl fmt::Display for VmError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for VmError {}

#[derive(Clone, Copy, Debug, PartialEq)]
enum CondState {
    True,
    False,
    Unknown,
    Null,
    BadType,
}

struct Region {
    mark: usize,
    type_only: bool,
}

struct ForState {
    /// The collection iterated (a list, set, tuple, map or object) and its length.
    items: Value,
    len: usize,
    idx: usize,
    known: bool,
    key_temp: usize,
    val_temp: usize,
    object: bool,
    group: bool,
    tuple: Vec<Value>,
    fields: BTreeMap<Str, Value>,
    groups: BTreeMap<Str, Vec<Value>>,
    pending_key: Option<Str>,
}

struct SplatState {
    items: Vec<Value>,
    idx: usize,
    out: Vec<Value>,
    known: bool,
    list: bool,
    upgraded_unknown: bool,
    /// An empty list: the element expression ran once on an unknown element for the type.
    probe: bool,
}

struct TryState {
    failed: Vec<Diagnostic>,
    depends_on_unknown: bool,
}

/// A VM for one request: scratch stacks reused across evaluations, budgets, call depth.
pub struct Vm<'p> {
    program: &'p Program,
    limits: Limits,
    started: Instant,
    steps: u64,
    elements: u64,
    bytes: u64,
    depth: u32,
    invocations: u64,
    /// What the calls cost against [`Limits::max_invocations`].
    call_cost: u64,
    type_only: u32,
    stack: Vec<Value>,
    temps: Vec<Value>,
    marks: Vec<usize>,
    regions: Vec<Region>,
    conds: Vec<CondState>,
    fors: Vec<ForState>,
    splats: Vec<SplatState>,
    expands: Vec<Vec<Value>>,
    tries: Vec<TryState>,
    /// Scratch text of the template being joined.
    text: String,
    /// Frames of user function calls that returned, reused by the next calls.
    frame_pool: Vec<Vec<Value>>,
}

const DYN: Value = Value::Unknown(Type::Dynamic);

/// Nested user function calls run on one native stack before moving to a fresh one.
const STACK_SEGMENT: u32 = 12;
const SEGMENT_STACK_BYTES: usize = 64 << 20;
/// What a call on a fresh stack counts against [`Limits::max_invocations`].
const FRESH_STACK_CALL_COST: u64 = 10;

fn has_errors_since(diags: &[Diagnostic], mark: usize) -> bool {
    diags
        .get(mark..)
        .is_some_and(|d| d.iter().any(|d| d.is_error()))
}

fn err_diag(summary: &str, detail: String, subject: Span) -> Diagnostic {
    Diagnostic::error(summary, detail, subject)
}

impl<'p> Vm<'p> {
    pub fn new(program: &'p Program, limits: Limits) -> Self {
        Vm {
            program,
            limits,
            started: Instant::now(),
            steps: 0,
            elements: 0,
            bytes: 0,
            depth: 0,
            invocations: 0,
            call_cost: 0,
            type_only: 0,
            stack: Vec::with_capacity(64),
            temps: Vec::new(),
            marks: Vec::new(),
            regions: Vec::new(),
            conds: Vec::new(),
            fors: Vec::new(),
            splats: Vec::new(),
            expands: Vec::new(),
            tries: Vec::new(),
            text: String::new(),
            frame_pool: Vec::new(),
        }
    }

    /// Instructions executed so far (for tests and metrics).
    pub fn steps(&self) -> u64 {
        self.steps
    }

    /// User function invocations run so far (for tests and metrics).
    pub fn invocations(&self) -> u64 {
        self.invocations
    }

    /// What this VM has charged to its budgets so far.
    pub fn usage(&self) -> Usage {
        Usage {
            instructions: self.steps,
            elements: self.elements,
            bytes: self.bytes,
            calls: self.call_cost,
        }
    }

    /// Evaluate a chunk against a frame of slot values; diagnostics are appended to `diags`.
    /// `Err` only when a budget is exceeded.
    pub fn eval(
        &mut self,
        chunk: ChunkId,
        frame: &[Value],
        diags: &mut Vec<Diagnostic>,
    ) -> Result<Value, VmError> {
        let r = self.run(chunk, frame, diags);
        if r.is_err() {
            self.stack.clear();
            self.temps.clear();
            self.marks.clear();
            self.regions.clear();
            self.conds.clear();
            self.fors.clear();
            self.splats.clear();
            self.expands.clear();
            self.tries.clear();
            self.type_only = 0;
            self.depth = 0;
        }
        r
    }

    fn limit_error(&self, kind: LimitKind, span: Option<Span>) -> VmError {
        let what = match kind {
            LimitKind::Instructions => format!(
                "more than {} instructions executed",
                self.limits.max_instructions
            ),
            LimitKind::AllocElements => format!(
                "more than {} collection elements allocated",
                self.limits.max_alloc_elements
            ),
            LimitKind::AllocBytes => format!(
                "more than {} string bytes allocated",
                self.limits.max_alloc_bytes
            ),
            LimitKind::WallTime => format!(
                "evaluation took longer than {} ms",
                self.limits.max_wall.as_millis()
            ),
            LimitKind::Invocations => format!(
                "more than {} user function calls",
                self.limits.max_invocations
            ),
        };
        let at = match span {
            Some(s) => format!(" (at {})", self.program.sources.range(s)),
            None => String::new(),
        };
        VmError {
            kind,
            span,
            message: format!("evaluation budget exceeded: {what}{at}"),
        }
    }

    fn alloc(&mut self, elements: u64, bytes: u64, pc: usize) -> Result<(), VmError> {
        self.elements = self.elements.saturating_add(elements);
        self.bytes = self.bytes.saturating_add(bytes);
        if self.elements > self.limits.max_alloc_elements {
            return Err(self.limit_error(LimitKind::AllocElements, self.span_at(pc)));
        }
        if self.bytes > self.limits.max_alloc_bytes {
            return Err(self.limit_error(LimitKind::AllocBytes, self.span_at(pc)));
        }
        Ok(())
    }

    /// Charges what placing `vals` in a new collection really adds: a string or collection
    /// shared with another value (a local used twice, ten copies of a tuple) is a copy when
    /// the result is written out, so it costs its expanded size; a fresh value was charged
    /// when it was made. Measuring stops at the budget, so it costs no more than it charges.
    fn charge_shared<'v>(
        &mut self,
        vals: impl Iterator<Item = &'v Value>,
        pc: usize,
    ) -> Result<(), VmError> {
        use crate::value::meter::{Size, expanded_size};
        for v in vals {
            let shared = match v {
                Value::String(x) => {
                    if Arc::strong_count(x) > 1 {
                        self.bytes = self.bytes.saturating_add(x.len() as u64);
                    }
                    false
                }
                Value::List(q) | Value::Set(q) | Value::Tuple(q) => Arc::strong_count(q) > 1,
                Value::Map(f) | Value::Object(f) => Arc::strong_count(f) > 1,
                _ => false,
            };
            if shared {
                let cap = Size {
                    elements: self.limits.max_alloc_elements.saturating_sub(self.elements),
                    bytes: self.limits.max_alloc_bytes.saturating_sub(self.bytes),
                };
                let size = expanded_size(v, cap);
                self.alloc(size.elements, size.bytes, pc)?;
            }
        }
        self.alloc(0, 0, pc)
    }

    fn span_at(&self, pc: usize) -> Option<Span> {
        self.program.spans.get(pc).copied()
    }

    fn pop(&mut self) -> Value {
        self.stack.pop().unwrap_or(DYN)
    }

    fn pop_mark(&mut self) -> usize {
        self.marks.pop().unwrap_or(0)
    }

    fn site(&self, i: u32) -> Site {
        self.program
            .sites
            .get(i as usize)
            .copied()
            .unwrap_or_default()
    }

    fn run(
        &mut self,
        chunk: ChunkId,
        frame: &[Value],
        diags: &mut Vec<Diagnostic>,
    ) -> Result<Value, VmError> {
        let prog = self.program;
        let Some(info) = prog.chunks.get(chunk.0 as usize).copied() else {
            return Ok(DYN);
        };
        let temp_base = self.temps.len();
        self.temps
            .resize(temp_base + info.temps as usize, Value::NULL);
        let stack_base = self.stack.len();
        let mut pc = info.start as usize;
        loop {
            self.steps += 1;
            if self.steps > self.limits.max_instructions {
                return Err(self.limit_error(LimitKind::Instructions, self.span_at(pc)));
            }
            if self.steps & 0xfff == 0 && self.started.elapsed() > self.limits.max_wall {
                return Err(self.limit_error(LimitKind::WallTime, self.span_at(pc)));
            }
            let Some(op) = prog.code.get(pc).copied() else {
                break;
            };
            pc += 1;
            match op {
                Op::Return => break,
                Op::Const(i) => {
                    let v = prog.consts.get(i as usize).cloned().unwrap_or(DYN);
                    self.stack.push(v);
                }
                Op::Slot(i) => {
                    let v = frame.get(i as usize).cloned().unwrap_or(DYN);
                    self.stack.push(v);
                }
                Op::Temp(i) => {
                    let v = self
                        .temps
                        .get(temp_base + i as usize)
                        .cloned()
                        .unwrap_or(DYN);
                    self.stack.push(v);
                }
                Op::Fail(i) => {
                    if let Some(d) = prog.diags.get(i as usize) {
                        diags.push(d.clone());
                    }
                    self.stack.push(DYN);
                }
                Op::Attr { name, site } => {
                    let v = self.pop();
                    let name = prog.names.get(name as usize).map(|s| &**s).unwrap_or("");
                    let r = match ops::get_attr(&v, name) {
                        Ok(r) => r,
                        Err((summary, detail)) => {
                            let s = self.site(site);
                            diags.push(err_diag(summary, detail, s.a).with_expression(s.whole));
                            DYN
                        }
                    };
                    self.stack.push(r);
                }
                Op::IndexConst { key, site } => {
                    let v = self.pop();
                    let k = prog.consts.get(key as usize).cloned().unwrap_or(DYN);
                    let r = self.index(&v, &k, site, diags);
                    self.stack.push(r);
                }
                Op::Index { site } => {
                    let k = self.pop();
                    let v = self.pop();
                    let r = self.index(&v, &k, site, diags);
                    self.stack.push(r);
                }
                Op::Mark => self.marks.push(diags.len()),
                Op::Unary { op, site } => {
                    let v = self.pop();
                    let mark = self.pop_mark();
                    let r = self.unary(op, v, site, mark, diags);
                    self.stack.push(r);
                }
                Op::Binary { op, site } => {
                    let r = self.pop();
                    let l = self.pop();
                    let mark = self.pop_mark();
                    let v = self.binary(op, l, r, site, mark, diags);
                    self.stack.push(v);
                }
                Op::LogicRhs { op } => {
                    let controlling = match self.stack.last().map(|l| convert(l, &Type::Bool)) {
                        Some(Ok(Value::Bool(b))) => (op == BinaryOp::Or) == b,
                        _ => false,
                    };
                    self.begin_region(controlling, diags.len());
                }
                Op::Logic { op, site } => {
                    let r = self.pop();
                    let l = self.pop();
                    let region = self.regions.pop().unwrap_or(Region {
                        mark: diags.len(),
                        type_only: false,
                    });
                    if region.type_only {
                        diags.truncate(region.mark);
                        self.type_only = self.type_only.saturating_sub(1);
                    }
                    let mark = self.pop_mark();
                    let v = self.logic(op, l, r, site, mark, region.mark, diags);
                    self.stack.push(v);
                }
                Op::CondSelect => {
                    let c = self.pop();
                    let st = if c.is_null() {
                        CondState::Null
                    } else if c.is_unknown() {
                        CondState::Unknown
                    } else {
                        match convert(&c, &Type::Bool) {
                            Ok(Value::Bool(true)) => CondState::True,
                            Ok(Value::Bool(false)) => CondState::False,
                            Ok(_) => CondState::Unknown,
                            Err(_) => CondState::BadType,
                        }
                    };
                    self.conds.push(st);
                }
                Op::BranchBegin(which) => {
                    let st = self.conds.last().copied().unwrap_or(CondState::Unknown);
                    let taken = matches!((st, which), (CondState::True, 0) | (CondState::False, 1));
                    self.begin_region(!taken, diags.len());
                }
                Op::BranchEnd => self.end_region(diags),
                Op::CondMerge { site } => {
                    let f = self.pop();
                    let t = self.pop();
                    let st = self.conds.pop().unwrap_or(CondState::Unknown);
                    let mark = self.pop_mark();
                    let v = self.cond_merge(t, f, st, site, mark, diags);
                    self.stack.push(v);
                }
                Op::Jump(t) => pc = t as usize,
                Op::MakeTuple(n) => {
                    let items = self.pop_n(n as usize);
                    self.alloc(u64::from(n), 0, pc - 1)?;
                    self.charge_shared(items.iter(), pc - 1)?;
                    self.stack.push(Value::tuple(items));
                }
                Op::KeyDone => {
                    let mark = self.pop_mark();
                    if has_errors_since(diags, mark)
                        && let Some(top) = self.stack.last_mut()
                    {
                        *top = DYN;
                    }
                }
                Op::ObjItem { site } => {
                    let n = self.stack.len();
                    if n >= 2 {
                        let key = std::mem::replace(&mut self.stack[n - 2], DYN);
                        let s = self.site(site);
                        self.stack[n - 2] = if key.is_unknown() {
                            DYN
                        } else if key.is_null() {
                            diags.push(
                                err_diag(
                                    "Null value as key",
                                    "Can't use a null value as a key.".into(),
                                    s.b,
                                )
                                .with_expression(s.a),
                            );
                            DYN
                        } else {
                            match convert(&key, &Type::String) {
                                Ok(v) => v,
                                Err(e) => {
                                    diags.push(
                                        err_diag(
                                            "Incorrect key type",
                                            format!("Can't use this value as a key: {e}."),
                                            s.a,
                                        )
                                        .with_expression(s.a),
                                    );
                                    DYN
                                }
                            }
                        };
                    }
                }
                Op::MakeObject(n) => {
                    let flat = self.pop_n(2 * n as usize);
                    let mut known = true;
                    let mut entries = Vec::with_capacity(n as usize);
                    let mut it = flat.into_iter();
                    while let (Some(k), Some(v)) = (it.next(), it.next()) {
                        match k {
                            Value::String(s) => entries.push((s, v)),
                            _ => known = false,
                        }
                    }
                    self.alloc(u64::from(n), 0, pc - 1)?;
                    self.charge_shared(entries.iter().map(|(_, v)| v), pc - 1)?;
                    self.stack
                        .push(if known { Value::object(entries) } else { DYN });
                }
                Op::MakeObjectConst(i) => {
                    let Some(shape) = prog.shapes.get(i as usize) else {
                        self.stack.push(DYN);
                        continue;
                    };
                    let n = shape.values as usize;
                    let base = self.stack.len().saturating_sub(n);
                    let mut entries = Vec::with_capacity(shape.keys.len());
                    for (k, at) in &shape.keys {
                        let v = self
                            .stack
                            .get_mut(base + *at as usize)
                            .map(|v| std::mem::replace(v, DYN))
                            .unwrap_or(DYN);
                        entries.push((k.clone(), v));
                    }
                    self.stack.truncate(base);
                    self.alloc(u64::from(shape.values), 0, pc - 1)?;
                    self.charge_shared(entries.iter().map(|(_, v)| v), pc - 1)?;
                    self.stack.push(Value::object_sorted(entries));
                }
                Op::Template { n, site } => {
                    let at = self.stack.len().saturating_sub(n as usize);
                    let v = self.template(at, site, diags, pc - 1);
                    self.stack.truncate(at);
                    self.stack.push(v?);
                }
                Op::TemplateJoin { site } => {
                    let t = self.pop();
                    let v = self.template_join(t, site, diags, pc - 1)?;
                    self.stack.push(v);
                }
                Op::ForBegin {
                    site,
                    end,
                    key_temp,
                    val_temp,
                    object,
                    group,
                } => {
                    let coll = self.pop();
                    match self.for_items(coll, site, diags) {
                        None => {
                            self.stack.push(DYN);
                            pc = end as usize;
                        }
                        Some((items, len)) => {
                            self.alloc(len as u64, 0, pc - 1)?;
                            let kt = temp_base + key_temp as usize;
                            let vt = temp_base + val_temp as usize;
                            if let Some(t) = self.temps.get_mut(kt) {
                                *t = DYN;
                            }
                            if let Some(t) = self.temps.get_mut(vt) {
                                *t = DYN;
                            }
                            self.fors.push(ForState {
                                items,
                                len,
                                idx: 0,
                                known: true,
                                key_temp: kt,
                                val_temp: vt,
                                object,
                                group,
                                tuple: if object {
                                    Vec::new()
                                } else {
                                    Vec::with_capacity(len)
                                },
                                fields: BTreeMap::new(),
                                groups: BTreeMap::new(),
                                pending_key: None,
                            });
                        }
                    }
                }
                Op::ForPreCheck { site, end } => {
                    let r = self.pop();
                    let mark = self.pop_mark();
                    let s = self.site(site);
                    let mut fail = false;
                    if r.is_null() {
                        diags.push(
                            err_diag(
                                "Condition is null",
                                "The value of the 'if' clause must not be null.".into(),
                                s.b,
                            )
                            .with_context(s.whole)
                            .with_expression(s.b),
                        );
                        fail = true;
                    } else if let Err(e) = convert(&r, &Type::Bool) {
                        diags.push(
                            err_diag(
                                "Invalid 'for' condition",
                                format!("The 'if' clause value is invalid: {e}."),
                                s.b,
                            )
                            .with_context(s.whole)
                            .with_expression(s.b),
                        );
                        fail = true;
                    } else if has_errors_since(diags, mark) {
                        fail = true;
                    }
                    if fail {
                        self.fors.pop();
                        self.stack.push(DYN);
                        pc = end as usize;
                    }
                }
                Op::ForNext { exit } => {
                    let next = match self.fors.last_mut() {
                        Some(st) if st.idx < st.len => {
                            let (k, v) = for_item(&st.items, st.idx);
                            st.idx += 1;
                            Some((k, v, st.key_temp, st.val_temp))
                        }
                        _ => None,
                    };
                    match next {
                        Some((k, v, kt, vt)) => {
                            if let Some(t) = self.temps.get_mut(kt) {
                                *t = k;
                            }
                            if let Some(t) = self.temps.get_mut(vt) {
                                *t = v;
                            }
                        }
                        None => pc = exit as usize,
                    }
                }
                Op::ForFilter { site, next } => {
                    let inc = self.pop();
                    let s = self.site(site);
                    if let Some(st) = self.fors.last_mut() {
                        let problem = if inc.is_null() {
                            Some(Some(
                                "The value of the 'if' clause must not be null.".to_string(),
                            ))
                        } else if inc.is_unknown() && !st.object {
                            Some(None)
                        } else {
                            match convert(&inc, &Type::Bool) {
                                Err(e) => {
                                    Some(Some(format!("The 'if' clause value is invalid: {e}.")))
                                }
                                Ok(Value::Bool(b)) => {
                                    if !b {
                                        pc = next as usize;
                                    }
                                    None
                                }
                                Ok(_) => Some(None),
                            }
                        };
                        if let Some(msg) = problem {
                            if let Some(msg) = msg
                                && st.known
                            {
                                diags.push(
                                    err_diag("Invalid 'for' condition", msg, s.b)
                                        .with_context(s.whole)
                                        .with_expression(s.b),
                                );
                            }
                            st.known = false;
                            pc = next as usize;
                        }
                    }
                }
                Op::ForKey { site, next } => {
                    let k = self.pop();
                    let s = self.site(site);
                    if let Some(st) = self.fors.last_mut() {
                        let problem = if k.is_null() {
                            Some(Some(
                                "Key expression in 'for' expression must not produce a null value."
                                    .to_string(),
                            ))
                        } else if k.is_unknown() {
                            Some(None)
                        } else {
                            match convert(&k, &Type::String) {
                                Ok(Value::String(key)) => {
                                    st.pending_key = Some(key);
                                    None
                                }
                                Ok(_) => Some(None),
                                Err(e) => Some(Some(format!(
                                    "The key expression produced an invalid result: {e}."
                                ))),
                            }
                        };
                        if let Some(msg) = problem {
                            if let Some(msg) = msg
                                && st.known
                            {
                                diags.push(
                                    err_diag("Invalid object key", msg, s.c)
                                        .with_context(s.whole)
                                        .with_expression(s.c),
                                );
                            }
                            st.known = false;
                            pc = next as usize;
                        }
                    }
                }
                Op::ForPush { site } => {
                    let v = self.pop();
                    self.alloc(1, 0, pc - 1)?;
                    self.charge_shared(std::iter::once(&v), pc - 1)?;
                    let s = self.site(site);
                    if let Some(st) = self.fors.last_mut() {
                        if !st.object {
                            st.tuple.push(v);
                        } else if let Some(k) = st.pending_key.take() {
                            if st.group {
                                st.groups.entry(k).or_default().push(v);
                            } else {
                                match st.fields.entry(k) {
                                    std::collections::btree_map::Entry::Occupied(o) => {
                                        diags.push(
                                            err_diag(
                                                "Duplicate object key",
                                                format!("Two different items produced the key {} in this 'for' expression. If duplicates are expected, use the ellipsis (...) after the value expression to enable grouping by key.", go_quote(o.key())),
                                                s.c,
                                            )
                                            .with_context(s.whole)
                                            .with_expression(s.c),
                                        );
                                    }
                                    std::collections::btree_map::Entry::Vacant(slot) => {
                                        slot.insert(v);
                                    }
                                }
                            }
                        }
                    }
                }
                Op::ForEnd => {
                    let v = match self.fors.pop() {
                        None => DYN,
                        Some(st) if !st.known => DYN,
                        Some(st) if !st.object => Value::tuple(st.tuple),
                        Some(st) if st.group => Value::object_sorted(
                            st.groups
                                .into_iter()
                                .map(|(k, vs)| (k, Value::tuple(vs)))
                                .collect(),
                        ),
                        Some(st) => Value::object_sorted(st.fields.into_iter().collect()),
                    };
                    self.stack.push(v);
                }
                Op::SplatBegin { site, end } => {
                    let src = self.pop();
                    let mark = self.pop_mark();
                    match self.splat_begin(src, site, mark, diags) {
                        Ok(st) => {
                            self.alloc(st.items.len() as u64, 0, pc - 1)?;
                            self.splats.push(st);
                        }
                        Err(v) => {
                            self.stack.push(v);
                            pc = end as usize;
                        }
                    }
                }
                Op::SplatNext { temp, exit } => {
                    let item = match self.splats.last_mut() {
                        Some(st) if st.idx < st.items.len() => {
                            st.idx += 1;
                            Some(st.items[st.idx - 1].clone())
                        }
                        _ => None,
                    };
                    match item {
                        Some(v) => {
                            if let Some(t) = self.temps.get_mut(temp_base + temp as usize) {
                                *t = v;
                            }
                        }
                        None => pc = exit as usize,
                    }
                }
                Op::SplatPush { next } => {
                    let v = self.pop();
                    let mark = self.pop_mark();
                    let failed = has_errors_since(diags, mark);
                    if let Some(st) = self.splats.last_mut() {
                        if failed {
                            st.known = false;
                        }
                        st.out.push(v);
                    }
                    pc = next as usize;
                }
                Op::SplatEnd => {
                    let v = match self.splats.pop() {
                        None => DYN,
                        Some(st) => splat_result(st),
                    };
                    self.stack.push(v);
                }
                Op::ConvArg { call, arg } => {
                    let ty = self.param_type(call, arg as usize);
                    if let Some(ty) = ty
                        && let Some(top) = self.stack.last_mut()
                    {
                        match convert(top, &ty) {
                            Ok(v) => *top = v,
                            Err(e) => {
                                let c = &prog.calls[call as usize];
                                let pname = self.param_name(call, arg as usize);
                                let subject =
                                    c.arg_starts.get(arg as usize).copied().unwrap_or(c.range);
                                let expr =
                                    c.arg_ranges.get(arg as usize).copied().unwrap_or(c.range);
                                diags.push(
                                    err_diag(
                                        "Invalid function argument",
                                        format!(
                                            "Invalid value for {} parameter: {e}.",
                                            go_quote(pname)
                                        ),
                                        subject,
                                    )
                                    .with_context(c.range)
                                    .with_expression(expr),
                                );
                            }
                        }
                    }
                }
                Op::Call { call, argc } => {
                    let at = self.stack.len().saturating_sub(argc as usize);
                    let mark = self.pop_mark();
                    let v = self.call_builtin(call, at, mark, diags, pc - 1)?;
                    self.stack.push(v);
                }
                Op::ExpandBegin { call, end } => {
                    let v = self.pop();
                    match self.expand_begin(call, v, diags) {
                        Some(items) => {
                            self.alloc(items.len() as u64, 0, pc - 1)?;
                            self.expands.push(items);
                        }
                        None => {
                            self.pop_mark();
                            self.stack.push(DYN);
                            pc = end as usize;
                        }
                    }
                }
                Op::CallExpanded { call, nstatic } => {
                    let at = self.stack.len().saturating_sub(nstatic as usize);
                    let expanded = self.expands.pop().unwrap_or_default();
                    let c = &prog.calls[call as usize];
                    let expand_range = c.expand.unwrap_or(c.range);
                    for (j, mut v) in expanded.into_iter().enumerate() {
                        let i = nstatic as usize + j;
                        if let Some(ty) = self.param_type(call, i) {
                            match convert(&v, &ty) {
                                Ok(cv) => v = cv,
                                Err(e) => diags.push(
                                    err_diag(
                                        "Invalid function argument",
                                        format!(
                                            "Invalid value for {} parameter: {e}.",
                                            go_quote(self.param_name(call, i))
                                        ),
                                        expand_range,
                                    )
                                    .with_context(c.range)
                                    .with_expression(expand_range),
                                ),
                            }
                        }
                        self.stack.push(v);
                    }
                    let mark = self.pop_mark();
                    let v = self.call_builtin(call, at, mark, diags, pc - 1)?;
                    self.stack.push(v);
                }
                Op::Invoke { call, func } => {
                    let args = self.pop();
                    let name = self.pop();
                    let mark = self.pop_mark();
                    let v = self.invoke(call, func, &name, args, mark, diags)?;
                    self.stack.push(v);
                }
                Op::TryBegin => self.tries.push(TryState {
                    failed: Vec::new(),
                    depends_on_unknown: false,
                }),
                Op::Probe => {
                    let v = self.pop();
                    let mark = self.pop_mark();
                    if !has_errors_since(diags, mark)
                        && v.contains_unknown()
                        && let Some(t) = self.tries.last_mut()
                    {
                        t.depends_on_unknown = true;
                    }
                    diags.truncate(mark);
                }
                Op::TryDepCheck { end, can } => {
                    if self.tries.last().is_some_and(|t| t.depends_on_unknown) {
                        self.tries.pop();
                        self.stack
                            .push(if can { Value::Unknown(Type::Bool) } else { DYN });
                        pc = end as usize;
                    }
                }
                Op::TryArg { end, can } => {
                    let v = self.pop();
                    let mark = self.pop_mark();
                    if has_errors_since(diags, mark) {
                        let failed: Vec<Diagnostic> =
                            diags.drain(mark.min(diags.len())..).collect();
                        if let Some(t) = self.tries.last_mut() {
                            t.failed.extend(failed);
                        }
                    } else {
                        diags.truncate(mark);
                        self.tries.pop();
                        self.stack.push(if can { Value::Bool(true) } else { v });
                        pc = end as usize;
                    }
                }
                Op::TryFail { call, can } => {
                    let st = self.tries.pop().unwrap_or(TryState {
                        failed: Vec::new(),
                        depends_on_unknown: false,
                    });
                    if can {
                        self.stack.push(Value::Bool(false));
                    } else {
                        let c = &prog.calls[call as usize];
                        let msg = if c.arg_ranges.is_empty() {
                            "at least one argument is required".to_string()
                        } else {
                            let mut m = String::from("no expression succeeded:\n");
                            for d in &st.failed {
                                match d.subject {
                                    Some(s) => m.push_str(&format!(
                                        "- {} (at {})\n  {}\n",
                                        d.summary,
                                        prog.sources.range(s),
                                        d.detail
                                    )),
                                    None => {
                                        m.push_str(&format!("- {}\n  {}\n", d.summary, d.detail))
                                    }
                                }
                            }
                            // hcl's tryfunc ends the list with a blank line.
                            m.push_str(
                                "\nAt least one expression must produce a successful result",
                            );
                            m
                        };
                        diags.push(
                            err_diag(
                                "Error in function call",
                                format!("Call to function \"try\" failed: {msg}."),
                                c.start,
                            )
                            .with_context(c.range)
                            .with_expression(c.range),
                        );
                        self.stack.push(DYN);
                    }
                }
            }
        }
        let result = if self.stack.len() > stack_base {
            self.pop()
        } else {
            DYN
        };
        self.stack.truncate(stack_base);
        self.temps.truncate(temp_base);
        Ok(result)
    }

    fn pop_n(&mut self, n: usize) -> Vec<Value> {
        let at = self.stack.len().saturating_sub(n);
        self.stack.split_off(at)
    }

    fn begin_region(&mut self, type_only: bool, mark: usize) {
        if type_only {
            self.type_only += 1;
        }
        self.regions.push(Region { mark, type_only });
    }

    fn end_region(&mut self, diags: &mut Vec<Diagnostic>) {
        if let Some(r) = self.regions.pop()
            && r.type_only
        {
            diags.truncate(r.mark);
            self.type_only = self.type_only.saturating_sub(1);
        }
    }

    fn index(&self, v: &Value, k: &Value, site: u32, diags: &mut Vec<Diagnostic>) -> Value {
        match ops::index(v, k) {
            Ok(r) => r,
            Err((summary, detail)) => {
                let s = self.site(site);
                diags.push(err_diag(summary, detail, s.a).with_expression(s.whole));
                DYN
            }
        }
    }

    fn unary(
        &self,
        op: UnaryOp,
        v: Value,
        site: u32,
        mark: usize,
        diags: &mut Vec<Diagnostic>,
    ) -> Value {
        let s = self.site(site);
        let ty = match op {
            UnaryOp::Neg => Type::Number,
            UnaryOp::Not => Type::Bool,
        };
        let v = match convert(&v, &ty) {
            Ok(v) => v,
            Err(e) => {
                diags.push(
                    err_diag(
                        "Invalid operand",
                        format!("Unsuitable value for unary operand: {e}."),
                        s.a,
                    )
                    .with_context(s.whole)
                    .with_expression(s.a),
                );
                return Value::Unknown(ty);
            }
        };
        if has_errors_since(diags, mark) {
            return Value::Unknown(ty);
        }
        if v.is_null() {
            diags.push(op_failed("argument must not be null", s.whole));
            return Value::Unknown(ty);
        }
        match (op, v) {
            (UnaryOp::Neg, Value::Number(n)) => Value::Number(n.neg()),
            (UnaryOp::Not, Value::Bool(b)) => Value::Bool(!b),
            _ => Value::Unknown(ty),
        }
    }

    fn binary(
        &self,
        op: BinaryOp,
        l: Value,
        r: Value,
        site: u32,
        mark: usize,
        diags: &mut Vec<Diagnostic>,
    ) -> Value {
        let s = self.site(site);
        let (param, result) = match op {
            BinaryOp::Eq | BinaryOp::Ne => (Type::Dynamic, Type::Bool),
            BinaryOp::Gt | BinaryOp::Ge | BinaryOp::Lt | BinaryOp::Le => (Type::Number, Type::Bool),
            BinaryOp::And | BinaryOp::Or => (Type::Bool, Type::Bool),
            _ => (Type::Number, Type::Number),
        };
        let Some((l, r)) = self.convert_operands(&l, &r, &param, &s, mark, diags) else {
            return Value::Unknown(result);
        };
        if has_errors_since(diags, mark) {
            return Value::Unknown(result);
        }
        match op {
            BinaryOp::Eq => return ops::equals(&l, &r),
            BinaryOp::Ne => {
                return match ops::equals(&l, &r) {
                    Value::Bool(b) => Value::Bool(!b),
                    other => other,
                };
            }
            _ => {}
        }
        if l.is_null() || r.is_null() {
            diags.push(op_failed("argument must not be null", s.whole));
            return Value::Unknown(result);
        }
        let (Value::Number(a), Value::Number(b)) = (&l, &r) else {
            return Value::Unknown(result);
        };
        let res = match op {
            BinaryOp::Add => a.add(b),
            BinaryOp::Sub => a.sub(b),
            BinaryOp::Mul => a.mul(b),
            BinaryOp::Div => a.div(b),
            BinaryOp::Mod => a.rem(b),
            BinaryOp::Gt => return Value::Bool(a > b),
            BinaryOp::Ge => return Value::Bool(a >= b),
            BinaryOp::Lt => return Value::Bool(a < b),
            BinaryOp::Le => return Value::Bool(a <= b),
            _ => return Value::Unknown(result),
        };
        match res {
            Ok(n) => Value::Number(n),
            Err(e) => {
                diags.push(op_failed(&e.to_string(), s.whole));
                Value::Unknown(result)
            }
        }
    }

    /// Convert both operands to the operator's parameter type; conversion errors go before
    /// the operands' own diagnostics, as in hcl.
    fn convert_operands(
        &self,
        l: &Value,
        r: &Value,
        param: &Type,
        s: &Site,
        mark: usize,
        diags: &mut Vec<Diagnostic>,
    ) -> Option<(Value, Value)> {
        let mut conv = Vec::new();
        let lv = convert(l, param)
            .map_err(|e| {
                conv.push(
                    err_diag(
                        "Invalid operand",
                        format!("Unsuitable value for left operand: {e}."),
                        s.a,
                    )
                    .with_context(s.whole)
                    .with_expression(s.a),
                )
            })
            .ok();
        let rv = convert(r, param)
            .map_err(|e| {
                conv.push(
                    err_diag(
                        "Invalid operand",
                        format!("Unsuitable value for right operand: {e}."),
                        s.b,
                    )
                    .with_context(s.whole)
                    .with_expression(s.b),
                )
            })
            .ok();
        if !conv.is_empty() {
            let at = mark.min(diags.len());
            diags.splice(at..at, conv);
            return None;
        }
        Some((lv?, rv?))
    }

    #[allow(clippy::too_many_arguments)]
    fn logic(
        &self,
        op: BinaryOp,
        l: Value,
        r: Value,
        site: u32,
        mark: usize,
        rhs_mark: usize,
        diags: &mut Vec<Diagnostic>,
    ) -> Value {
        let s = self.site(site);
        let Some((l, r)) = self.convert_operands(&l, &r, &Type::Bool, &s, mark, diags) else {
            return Value::Unknown(Type::Bool);
        };
        let rhs_mark = rhs_mark.clamp(mark.min(diags.len()), diags.len());
        let keep_lhs = |diags: &mut Vec<Diagnostic>| diags.truncate(rhs_mark);
        let keep_rhs = |diags: &mut Vec<Diagnostic>| {
            diags.drain(mark.min(rhs_mark)..rhs_mark);
        };
        let decisive = op == BinaryOp::Or; // `true` decides `||`, `false` decides `&&`
        let (lk, rk) = (!l.is_unknown(), !r.is_unknown());
        if !lk && !rk {
            if !has_errors_since(&diags[..rhs_mark], mark) {
                keep_lhs(diags);
                return Value::Unknown(Type::Bool);
            }
        } else if lk && l.as_bool() == Some(decisive) {
            keep_lhs(diags);
            return Value::Bool(decisive);
        } else if rk && r.as_bool() == Some(decisive) {
            keep_rhs(diags);
            return Value::Bool(decisive);
        } else if !lk && r.as_bool() == Some(!decisive) {
            keep_lhs(diags);
            return Value::Unknown(Type::Bool);
        } else if !rk && l.as_bool() == Some(!decisive) {
            keep_rhs(diags);
            return Value::Unknown(Type::Bool);
        }
        if has_errors_since(diags, mark) {
            return Value::Unknown(Type::Bool);
        }
        if l.is_null() || r.is_null() {
            diags.push(op_failed("argument must not be null", s.whole));
            return Value::Unknown(Type::Bool);
        }
        match (l, r) {
            (Value::Bool(a), Value::Bool(b)) => Value::Bool(if decisive { a || b } else { a && b }),
            _ => Value::Unknown(Type::Bool),
        }
    }

    fn cond_merge(
        &self,
        t: Value,
        f: Value,
        st: CondState,
        site: u32,
        mark: usize,
        diags: &mut Vec<Diagnostic>,
    ) -> Value {
        // Both branches of one type (the common case): that type is the result's, and the
        // taken branch needs no conversion.
        if matches!(st, CondState::True | CondState::False) && t.same_type(&f) {
            return if st == CondState::True { t } else { f };
        }
        let s = self.site(site);
        let is_dyn_null = |v: &Value| matches!(v, Value::Null(Type::Dynamic));
        let (tt, ft) = (t.type_of(), f.type_of());
        let result_type = if is_dyn_null(&t) {
            ft.clone()
        } else if is_dyn_null(&f) {
            tt.clone()
        } else if tt == Type::Dynamic || ft == Type::Dynamic {
            Type::Dynamic
        } else {
            match unify_unsafe(&[tt.clone(), ft.clone()]) {
                Some(u) => u,
                None => {
                    diags.truncate(mark);
                    diags.push(
                        err_diag(
                            "Inconsistent conditional result types",
                            format!(
                                "The true and false result expressions must have consistent types. {}.",
                                describe_mismatch(&tt, &ft)
                            ),
                            s.b.to(s.c),
                        )
                        .with_context(s.whole)
                        .with_expression(s.whole),
                    );
                    return DYN;
                }
            }
        };
        let cond_diag = |summary: &str, detail: &str| {
            err_diag(summary, detail.to_string(), s.a)
                .with_context(s.whole)
                .with_expression(s.a)
        };
        match st {
            CondState::Unknown => Value::Unknown(result_type),
            CondState::Null => {
                diags.push(cond_diag(
                    "Null condition",
                    "The condition value is null. Conditions must either be true or false.",
                ));
                Value::Unknown(result_type)
            }
            CondState::BadType => {
                diags.push(cond_diag(
                    "Incorrect condition type",
                    "The condition expression must be of type bool.",
                ));
                Value::Unknown(result_type)
            }
            CondState::True | CondState::False => {
                let (v, which, range) = if st == CondState::True {
                    (t, "true", s.b)
                } else {
                    (f, "false", s.c)
                };
                if result_type == Type::Dynamic || v.type_of() == result_type {
                    return v;
                }
                match convert(&v, &result_type) {
                    Ok(v) => v,
                    Err(e) => {
                        diags.push(
                            err_diag(
                                "Inconsistent conditional result types",
                                format!("The {which} result value has the wrong type: {e}."),
                                range,
                            )
                            .with_context(s.whole)
                            .with_expression(range),
                        );
                        Value::Unknown(result_type)
                    }
                }
            }
        }
    }

    /// Join the template parts at `self.stack[at..]` (the caller removes them).
    fn template(
        &mut self,
        at: usize,
        site: u32,
        diags: &mut Vec<Diagnostic>,
        pc: usize,
    ) -> Result<Value, VmError> {
        let prog = self.program;
        let Some(ts) = prog.templates.get(site as usize) else {
            return Ok(Value::Unknown(Type::String));
        };
        // The string parts are charged before they are joined (the rest, numbers and bools,
        // are short): a template of ten copies of a large string must not be built first.
        let parts: u64 = self
            .stack
            .get(at..)
            .unwrap_or(&[])
            .iter()
            .map(|v| v.as_str().map_or(0, str::len) as u64)
            .sum();
        let cap = self.limits.max_alloc_bytes.saturating_sub(self.bytes);
        if parts > cap {
            return Err(self.limit_error(LimitKind::AllocBytes, self.span_at(pc)));
        }
        let mut known = true;
        let mut out = std::mem::take(&mut self.text);
        out.clear();
        for (i, v) in self.stack.get(at..).unwrap_or(&[]).iter().enumerate() {
            let span = ts.parts.get(i).copied().flatten().unwrap_or(ts.whole);
            if v.is_null() {
                diags.push(
                    err_diag(
                        "Invalid template interpolation value",
                        "The expression result is null. Cannot include a null value in a string template.".into(),
                        span,
                    )
                    .with_context(ts.whole)
                    .with_expression(span),
                );
                continue;
            }
            if v.is_unknown() {
                known = false;
                continue;
            }
            if let Value::String(s) = v {
                out.push_str(s);
                continue;
            }
            match convert(v, &Type::String) {
                Ok(Value::String(s)) => out.push_str(&s),
                Ok(_) => known = false,
                Err(e) => diags.push(
                    err_diag(
                        "Invalid template interpolation value",
                        format!("Cannot include the given value in a string template: {e}."),
                        span,
                    )
                    .with_context(ts.whole)
                    .with_expression(span),
                ),
            }
        }
        let r = if known {
            self.alloc(0, out.len() as u64, pc)
                .map(|()| Value::string(out.as_str()))
        } else {
            Ok(Value::Unknown(Type::String))
        };
        self.text = out;
        r
    }

    fn template_join(
        &mut self,
        t: Value,
        site: u32,
        diags: &mut Vec<Diagnostic>,
        pc: usize,
    ) -> Result<Value, VmError> {
        let s = self.site(site);
        let items = match &t {
            Value::Tuple(seq) => &seq.items,
            _ => return Ok(Value::Unknown(Type::String)),
        };
        let mut strs: Vec<Str> = Vec::with_capacity(items.len());
        for v in items {
            if v.is_null() {
                diags.push(
                    err_diag(
                        "Invalid template interpolation value",
                        "An iteration result is null. Cannot include a null value in a string template.".into(),
                        s.whole,
                    )
                    .with_expression(s.whole),
                );
                continue;
            }
            if v.kind() == Kind::Dynamic {
                return Ok(Value::Unknown(Type::String));
            }
            match convert(v, &Type::String) {
                Ok(Value::String(x)) => strs.push(x),
                Ok(_) => return Ok(Value::Unknown(Type::String)),
                Err(e) => diags.push(
                    err_diag(
                        "Invalid template interpolation value",
                        format!("Cannot include one of the interpolation results into the string template: {e}."),
                        s.whole,
                    )
                    .with_expression(s.whole),
                ),
            }
        }
        let len: usize = strs.iter().map(|s| s.len()).sum();
        self.alloc(0, len as u64, pc)?;
        Ok(Value::string(strs.concat()))
    }

    /// The collection a `for` iterates and its length, or `None` (after any diagnostic) when
    /// the result is `DynamicVal`.
    fn for_items(
        &self,
        coll: Value,
        site: u32,
        diags: &mut Vec<Diagnostic>,
    ) -> Option<(Value, usize)> {
        let s = self.site(site);
        if coll.is_null() {
            diags.push(
                err_diag(
                    "Iteration over null value",
                    "A null value cannot be used as the collection in a 'for' expression.".into(),
                    s.a,
                )
                .with_context(s.whole)
                .with_expression(s.a),
            );
            return None;
        }
        let kind = coll.kind();
        if kind == Kind::Dynamic {
            return None;
        }
        if kind.is_primitive() {
            diags.push(
                err_diag(
                    "Iteration over non-iterable value",
                    format!(
                        "A value of type {} cannot be used as the collection in a 'for' expression.",
                        coll.type_of().friendly_name()
                    ),
                    s.a,
                )
                .with_context(s.whole)
                .with_expression(s.a),
            );
            return None;
        }
        coll.length().map(|n| (coll, n))
    }

    fn splat_begin(
        &self,
        src: Value,
        site: u32,
        mark: usize,
        diags: &mut Vec<Diagnostic>,
    ) -> Result<SplatState, Value> {
        if has_errors_since(diags, mark) {
            return Err(DYN);
        }
        let s = self.site(site);
        let kind = src.kind();
        let seq = kind.is_sequence();
        if src.is_null() {
            if !seq {
                return Err(Value::tuple(Vec::new()));
            }
            diags.push(
                err_diag(
                    "Splat of null value",
                    "Splat expressions (with the * symbol) cannot be applied to null sequences."
                        .into(),
                    s.a,
                )
                .with_context(s.a.to(s.b))
                .with_expression(s.a),
            );
            return Err(DYN);
        }
        if kind == Kind::Dynamic {
            return Err(DYN);
        }
        let mut st = SplatState {
            items: Vec::new(),
            idx: 0,
            out: Vec::new(),
            known: true,
            list: matches!(kind, Kind::List | Kind::Set),
            upgraded_unknown: false,
            probe: false,
        };
        if !seq {
            st.upgraded_unknown = src.is_unknown();
            st.items = vec![src];
            return Ok(st);
        }
        if src.is_unknown() {
            return Err(DYN);
        }
        st.items = src.as_seq().map(<[Value]>::to_vec).unwrap_or_default();
        if st.list && st.items.is_empty() {
            st.probe = true;
            st.items = vec![Value::Unknown(
                src.type_of()
                    .element_type()
                    .cloned()
                    .unwrap_or(Type::Dynamic),
            )];
        }
        Ok(st)
    }

    /// hcl's handling of a final `...` argument: the elements it expands to, or `None`
    /// (after any diagnostic) when the call yields `DynamicVal`. Also checks arity.
    fn expand_begin(&self, call: u32, v: Value, diags: &mut Vec<Diagnostic>) -> Option<Vec<Value>> {
        let c = self.program.calls.get(call as usize)?;
        if has_errors_since(diags, self.marks.last().copied().unwrap_or(0)) {
            return None;
        }
        let range = c.expand.unwrap_or(c.range);
        let bad = |detail: &str| {
            err_diag(
                "Invalid expanding argument value",
                detail.to_string(),
                range,
            )
            .with_context(c.range)
            .with_expression(range)
        };
        let items = match v.kind() {
            Kind::Dynamic => {
                if v.is_null() {
                    diags.push(bad(
                        "The expanding argument (indicated by ...) must not be null.",
                    ));
                }
                return None;
            }
            Kind::Tuple | Kind::List | Kind::Set => {
                if v.is_null() {
                    diags.push(bad(
                        "The expanding argument (indicated by ...) must not be null.",
                    ));
                    return None;
                }
                if v.is_unknown() {
                    return None;
                }
                v.as_seq().map(<[Value]>::to_vec).unwrap_or_default()
            }
            _ => {
                diags.push(bad(
                    "The expanding argument (indicated by ...) must be of a tuple, list, or set type.",
                ));
                return None;
            }
        };
        let Callee::Builtin(id) = c.callee else {
            return Some(items);
        };
        let def = builtins::get(id);
        let nstatic = c.arg_starts.len().saturating_sub(1);
        let n = nstatic + items.len();
        let arg_start = |i: usize| {
            if i < nstatic {
                c.arg_starts.get(i).copied().unwrap_or(range)
            } else {
                range
            }
        };
        if n < def.params.len() {
            let qual = if def.var_param.is_some() {
                " at least"
            } else {
                ""
            };
            diags.push(
                err_diag(
                    "Not enough function arguments",
                    format!(
                        "Function {} expects{qual} {} argument(s). Missing value for {}.",
                        go_quote(&c.name),
                        def.params.len(),
                        go_quote(def.params[n].name)
                    ),
                    c.close_paren,
                )
                .with_context(c.range)
                .with_expression(c.range),
            );
            return None;
        }
        if def.var_param.is_none() && n > def.params.len() {
            diags.push(
                err_diag(
                    "Too many function arguments",
                    format!(
                        "Function {} expects only {} argument(s).",
                        go_quote(&c.name),
                        def.params.len()
                    ),
                    arg_start(def.params.len()),
                )
                .with_context(c.range)
                .with_expression(c.range),
            );
            return None;
        }
        Some(items)
    }

    fn param_type(&self, call: u32, i: usize) -> Option<Type> {
        let c = self.program.calls.get(call as usize)?;
        let Callee::Builtin(id) = c.callee else {
            return None;
        };
        let def = builtins::get(id);
        let p = def.params.get(i).or(def.var_param.as_ref())?;
        if p.ty == ParamType::Any {
            None
        } else {
            Some(p.ty.to_type())
        }
    }

    fn param_name(&self, call: u32, i: usize) -> &'static str {
        let Some(c) = self.program.calls.get(call as usize) else {
            return "";
        };
        match c.callee {
            Callee::Builtin(id) => {
                let def = builtins::get(id);
                def.params
                    .get(i)
                    .or(def.var_param.as_ref())
                    .map(|p| p.name)
                    .unwrap_or("")
            }
            Callee::Invoke => ["name", "args"].get(i).copied().unwrap_or(""),
            Callee::Try => "expressions",
            Callee::Can => "expression",
        }
    }

    /// Call a builtin on the arguments at `self.stack[at..]`, which it removes.
    fn call_builtin(
        &mut self,
        call: u32,
        at: usize,
        mark: usize,
        diags: &mut Vec<Diagnostic>,
        pc: usize,
    ) -> Result<Value, VmError> {
        let r = self.call_builtin_on_stack(call, at, mark, diags, pc);
        self.stack.truncate(at);
        r
    }

    fn call_builtin_on_stack(
        &mut self,
        call: u32,
        at: usize,
        mark: usize,
        diags: &mut Vec<Diagnostic>,
        pc: usize,
    ) -> Result<Value, VmError> {
        let prog = self.program;
        let at = at.min(self.stack.len());
        let args = &self.stack[at..];
        let Some(c) = prog.calls.get(call as usize) else {
            return Ok(DYN);
        };
        let Callee::Builtin(id) = c.callee else {
            return Ok(DYN);
        };
        if has_errors_since(diags, mark) {
            return Ok(DYN);
        }
        let def = builtins::get(id);
        // cty's Call: nulls are rejected first, then unknown arguments give an unknown result.
        let mut result = None;
        for (i, a) in args.iter().enumerate() {
            if a.is_null()
                && let Some(p) = def.params.get(i).or(def.var_param.as_ref())
                && !p.allow_null
            {
                result = Some(Err(FuncError::arg(i, "argument must not be null")));
                break;
            }
        }
        // cty returns an unknown result for an unknown argument; an argument that only
        // contains unknowns is passed on, and the function decides. The functions listed
        // in `passes_nested_unknowns` move elements around without looking into them (so a
        // known part stays known: `merge(a, {x = unknown}).y`, `length(...)`); every other
        // function here treats such an argument as unknown, which is what cty's
        // implementations of them do with a value that is not wholly known.
        if result.is_none()
            && args.iter().any(|a| {
                a.is_unknown() || (a.contains_unknown() && !passes_nested_unknowns(def.name))
            })
        {
            return Ok(DYN);
        }
        if result.is_none() && def.name == "range" {
            self.check_range(args, pc)?;
        }
        let argc = args.len();
        let (result, charged) = match result {
            Some(r) => (r, (0, 0)),
            None => self.call_metered(id, at, def.name, pc)?,
        };
        match result {
            Ok(v) => {
                self.charge_result(&v, charged, pc)?;
                Ok(v)
            }
            Err(FuncError::Arg { index, message }) => {
                let param = def.params.get(index).or(def.var_param.as_ref());
                match param {
                    Some(p) if index < argc => {
                        let subject = match c.arg_starts.get(index) {
                            Some(s) if c.expand.is_none() || index + 1 < c.arg_starts.len() => *s,
                            _ => c.expand.unwrap_or(c.range),
                        };
                        let expr = c.arg_ranges.get(index).copied().unwrap_or(subject);
                        diags.push(
                            err_diag(
                                "Invalid function argument",
                                format!(
                                    "Invalid value for {} parameter: {message}.",
                                    go_quote(p.name)
                                ),
                                subject,
                            )
                            .with_context(c.range)
                            .with_expression(expr),
                        );
                    }
                    Some(p) => diags.push(
                        err_diag(
                            "Invalid function argument",
                            format!(
                                "Invalid value for {} parameter: {message}.",
                                go_quote(p.name)
                            ),
                            c.range,
                        )
                        .with_expression(c.range),
                    ),
                    None => diags.push(call_failed(&c.name, &message, c.start, c.range)),
                }
                Ok(DYN)
            }
            Err(FuncError::General(message)) => {
                diags.push(call_failed(&c.name, &message, c.start, c.range));
                Ok(DYN)
            }
        }
    }

    /// Charges a value about to be written into the response (at `span`, the expression
    /// that made it) by its expanded size: the response counts against the same budgets
    /// as the values and strings of the evaluation.
    pub fn charge_output(&mut self, v: &Value, span: Span) -> Result<(), VmError> {
        use crate::value::meter::{Size, expanded_size};
        let cap = Size {
            elements: self.limits.max_alloc_elements.saturating_sub(self.elements),
            bytes: self.limits.max_alloc_bytes.saturating_sub(self.bytes),
        };
        let size = expanded_size(v, cap);
        self.elements = self.elements.saturating_add(size.elements);
        self.bytes = self.bytes.saturating_add(size.bytes);
        let kind = if self.elements > self.limits.max_alloc_elements {
            LimitKind::AllocElements
        } else if self.bytes > self.limits.max_alloc_bytes {
            LimitKind::AllocBytes
        } else {
            return Ok(());
        };
        let mut err = self.limit_error(kind, Some(span));
        err.message = format!("{} (writing the response)", err.message);
        Err(err)
    }

    /// Runs a builtin with this evaluation's budgets on the thread's meter, so that the
    /// builtin's own loops (decoding, encoding, flattening, string building) charge them as
    /// they go and stop at them; what they charged (elements, bytes) counts here.
    #[allow(clippy::type_complexity)]
    fn call_metered(
        &mut self,
        id: builtins::FuncId,
        at: usize,
        name: &str,
        pc: usize,
    ) -> Result<(Result<Value, FuncError>, (u64, u64)), VmError> {
        use crate::value::meter;
        let left = meter::Meter::new(
            self.limits.max_alloc_elements.saturating_sub(self.elements),
            self.limits.max_alloc_bytes.saturating_sub(self.bytes),
            self.started.checked_add(self.limits.max_wall),
        );
        let prev = meter::install(left);
        let r = builtins::call_in_place(id, &mut self.stack[at..]);
        let used = meter::finish(prev);
        self.elements = self.elements.saturating_add(used.elements_used);
        self.bytes = self.bytes.saturating_add(used.bytes_used);
        if let Some(e) = used.exceeded {
            let kind = match e.resource {
                meter::Resource::Elements => LimitKind::AllocElements,
                meter::Resource::Bytes => LimitKind::AllocBytes,
                meter::Resource::Time => LimitKind::WallTime,
            };
            let mut err = self.limit_error(kind, self.span_at(pc));
            err.message = format!("{} (in {name})", err.message);
            return Err(err);
        }
        Ok((r, (used.elements_used, used.bytes_used)))
    }

    /// Charges a builtin's result: a new collection costs its expanded size (its parts may
    /// be shared: `concat(l, l, l)`), a string its bytes; an existing value handed back
    /// (`element`, `lookup`) costs nothing more. What the builtin charged while making it
    /// (`charged`: elements, bytes) is not charged twice.
    fn charge_result(&mut self, v: &Value, charged: (u64, u64), pc: usize) -> Result<(), VmError> {
        use crate::value::meter::{Size, expanded_size};
        let fresh = match v {
            Value::String(x) => {
                return self.alloc(0, (x.len() as u64).saturating_sub(charged.1), pc);
            }
            Value::List(q) | Value::Set(q) | Value::Tuple(q) => Arc::strong_count(q) == 1,
            Value::Map(f) | Value::Object(f) => Arc::strong_count(f) == 1,
            _ => false,
        };
        if !fresh {
            return Ok(());
        }
        let cap = Size {
            elements: self.limits.max_alloc_elements.saturating_sub(self.elements),
            bytes: self.limits.max_alloc_bytes.saturating_sub(self.bytes),
        };
        let size = expanded_size(v, cap);
        self.alloc(
            size.elements.saturating_sub(charged.0),
            size.bytes.saturating_sub(charged.1),
            pc,
        )
    }

    /// `range(...)` would allocate its whole result: refuse before it does, if too large.
    fn check_range(&self, args: &[Value], pc: usize) -> Result<(), VmError> {
        let nums: Vec<f64> = args
            .iter()
            .filter_map(|a| a.as_number().map(Number::to_f64))
            .collect();
        let (start, limit, step) = match nums.as_slice() {
            [l] => (0.0, *l, 1.0),
            [s, l] => (*s, *l, if l >= s { 1.0 } else { -1.0 }),
            [s, l, st] => (*s, *l, *st),
            _ => return Ok(()),
        };
        if step == 0.0 || !step.is_finite() || !start.is_finite() || !limit.is_finite() {
            return Ok(());
        }
        let n = ((limit - start) / step).ceil();
        let remaining = self.limits.max_alloc_elements.saturating_sub(self.elements) as f64;
        if n > remaining {
            return Err(self.limit_error(LimitKind::AllocElements, self.span_at(pc)));
        }
        Ok(())
    }

    fn invoke(
        &mut self,
        call: u32,
        func: u32,
        name: &Value,
        args: Value,
        mark: usize,
        diags: &mut Vec<Diagnostic>,
    ) -> Result<Value, VmError> {
        let prog = self.program;
        let Some(c) = prog.calls.get(call as usize) else {
            return Ok(DYN);
        };
        if has_errors_since(diags, mark) {
            return Ok(DYN);
        }
        if args.is_null() {
            let subject = c.arg_starts.get(1).copied().unwrap_or(c.range);
            diags.push(
                err_diag(
                    "Invalid function argument",
                    "Invalid value for \"args\" parameter: argument must not be null.".into(),
                    subject,
                )
                .with_context(c.range)
                .with_expression(c.arg_ranges.get(1).copied().unwrap_or(c.range)),
            );
            return Ok(DYN);
        }
        // An unknown argument object gives an unknown result (cty's Call); unknowns inside
        // it are passed to the function, whose body decides (an unused one doesn't matter).
        if args.is_unknown() || self.type_only > 0 {
            return Ok(DYN);
        }
        // A call that continues on a fresh native stack (a thread) costs as much as many
        // plain calls, and a call bomb makes half of its calls there: it counts more.
        let fresh_stack = (self.depth + 1).is_multiple_of(STACK_SEGMENT);
        self.invocations += 1;
        self.call_cost += if fresh_stack {
            FRESH_STACK_CALL_COST
        } else {
            1
        };
        if self.call_cost > self.limits.max_invocations {
            return Err(self.limit_error(LimitKind::Invocations, Some(c.range)));
        }
        self.depth += 1;
        let r = if self.depth >= self.limits.max_depth {
            Ok(Err(format!(
                "user function calls: max depth {} exceeded",
                self.limits.max_depth
            )))
        } else if self.depth.is_multiple_of(STACK_SEGMENT) {
            self.invoke_on_fresh_stack(func, name.as_str().unwrap_or(""), &args)
        } else {
            self.invoke_inner(func, name.as_str().unwrap_or(""), &args)
        };
        self.depth = self.depth.saturating_sub(1);
        match r? {
            Ok(v) => Ok(v),
            Err(msg) => {
                diags.push(call_failed("invoke", &msg, c.start, c.range));
                Ok(DYN)
            }
        }
    }

    /// Every [`STACK_SEGMENT`] nested calls, continue on a new thread with a large stack, so
    /// that 100 nested user function calls never overflow the caller's (possibly small)
    /// stack, even in debug builds where VM frames are big.
    fn invoke_on_fresh_stack(
        &mut self,
        func: u32,
        name: &str,
        args: &Value,
    ) -> Result<Result<Value, String>, VmError> {
        let outcome = std::thread::scope(|scope| {
            let spawned = std::thread::Builder::new()
                .name("fn-hcl-vm".into())
                .stack_size(SEGMENT_STACK_BYTES)
                .spawn_scoped(scope, || self.invoke_inner(func, name, args));
            spawned.map(|h| h.join())
        });
        match outcome {
            Ok(Ok(r)) => r,
            Ok(Err(panic)) => std::panic::resume_unwind(panic),
            // No thread available: go on with the current stack.
            Err(_) => self.invoke_inner(func, name, args),
        }
    }

    /// Run a user function as function-hcl's `invoke` does; `Ok(Err(message))` is the
    /// error `invoke` reports.
    fn invoke_inner(
        &mut self,
        func: u32,
        name: &str,
        args: &Value,
    ) -> Result<Result<Value, String>, VmError> {
        let prog = self.program;
        let Some(f) = prog.functions.get(func as usize) else {
            return Ok(Err(format!("user function '{name}' not found")));
        };
        let Value::Object(given) = args else {
            return Ok(Err(format!(
                "arguments to user function '{}' is not an object, found {}",
                f.name,
                go_syntax(&args.type_of())
            )));
        };
        // Every given key is a declared argument when as many declared arguments are given
        // (keys are unique): N lookups, not N² comparisons. Only a bad call looks further.
        let declared_given = f
            .args
            .iter()
            .filter(|(a, _)| given.get(a).is_some())
            .count();
        if declared_given < given.entries.len() {
            let declared: std::collections::HashSet<&str> =
                f.args.iter().map(|(a, _)| &**a).collect();
            if let Some((k, _)) = given.entries.iter().find(|(k, _)| !declared.contains(&**k)) {
                return Ok(Err(format!(
                    "function: {}, invalid argument {}",
                    f.name,
                    go_quote(k)
                )));
            }
        }
        let mut frame = self.frame_pool.pop().unwrap_or_default();
        frame.resize(f.frame_size.max(f.args.len() as u32) as usize, Value::NULL);
        let r = self.invoke_in_frame(f, given, &mut frame);
        frame.clear();
        self.frame_pool.push(frame);
        r
    }

    /// The rest of [`Vm::invoke_inner`], in a cleared frame of the function's size.
    fn invoke_in_frame(
        &mut self,
        f: &'p crate::bytecode::compile::UserFn,
        given: &Fields,
        frame: &mut [Value],
    ) -> Result<Result<Value, String>, VmError> {
        let prog = self.program;
        for (i, (a, default)) in f.args.iter().enumerate() {
            let v = match given.get(a) {
                Some(v) => v.clone(),
                None => match default {
                    Some(chunk) => {
                        let mut scratch = Vec::new();
                        self.run(*chunk, &[], &mut scratch)?
                    }
                    None => {
                        return Ok(Err(format!(
                            "function: {}, argument {} expected but not supplied",
                            f.name,
                            go_quote(a)
                        )));
                    }
                },
            };
            frame[i] = v;
        }
        for (slot, chunk) in &f.locals {
            let mut local_diags = Vec::new();
            let v = self.run(*chunk, frame, &mut local_diags)?;
            let v = if crate::syntax::diag::has_errors(&local_diags) {
                DYN
            } else {
                v
            };
            if let Some(s) = frame.get_mut(*slot as usize) {
                *s = v;
            }
        }
        let Some(body) = f.body else {
            return Ok(Ok(DYN));
        };
        let mut body_diags = Vec::new();
        let v = self.run(body, frame, &mut body_diags)?;
        if crate::syntax::diag::has_errors(&body_diags) {
            return Ok(Err(plain_all(&body_diags, &prog.sources)));
        }
        Ok(Ok(v))
    }
}

/// The key and value of a `for` at position `i` of its collection: index and element of a
/// list or tuple, the element twice for a set, name and value for a map or object.
fn for_item(coll: &Value, i: usize) -> (Value, Value) {
    match coll {
        Value::List(seq) | Value::Tuple(seq) => (
            Value::int(i as i64),
            seq.items.get(i).cloned().unwrap_or(DYN),
        ),
        Value::Set(seq) => {
            let v = seq.items.get(i).cloned().unwrap_or(DYN);
            (v.clone(), v)
        }
        Value::Map(f) | Value::Object(f) => match f.entries.get(i) {
            Some((k, v)) => (Value::String(k.clone()), v.clone()),
            None => (DYN, DYN),
        },
        _ => (DYN, DYN),
    }
}

fn op_failed(msg: &str, whole: Span) -> Diagnostic {
    err_diag(
        "Operation failed",
        format!("Error during operation: {msg}."),
        whole,
    )
    .with_expression(whole)
}

fn call_failed(name: &str, msg: &str, start: Span, range: Span) -> Diagnostic {
    err_diag(
        "Error in function call",
        format!("Call to function {} failed: {msg}.", go_quote(name)),
        start,
    )
    .with_context(range)
    .with_expression(range)
}

fn splat_result(st: SplatState) -> Value {
    if st.upgraded_unknown {
        return DYN;
    }
    if !st.known && !st.probe {
        return DYN;
    }
    if !st.list {
        return Value::tuple(st.out);
    }
    if st.probe {
        let elem = st.out.first().map(Value::type_of).unwrap_or(Type::Dynamic);
        return Value::list(elem, Vec::new());
    }
    let elem = st.out.first().map(Value::type_of).unwrap_or(Type::Dynamic);
    if st.out.iter().all(|v| v.type_of() == elem) {
        Value::List(Arc::new(Seq {
            elem,
            items: st.out,
        }))
    } else {
        Value::tuple(st.out)
    }
}

/// hcl's `describeConditionalTypeMismatch`.
fn describe_mismatch(t: &Type, f: &Type) -> String {
    match (t, f) {
        (Type::Object(ta), Type::Object(fa)) => {
            for (name, tty) in ta.iter() {
                match fa.iter().find(|(n, _)| n == name) {
                    None => {
                        return format!(
                            "The 'true' value includes object attribute {}, which is absent in the 'false' value",
                            go_quote(name)
                        );
                    }
                    Some((_, fty)) if fty != tty => {
                        return format!(
                            "Type mismatch for object attribute {}: {}",
                            go_quote(name),
                            describe_mismatch(tty, fty)
                        );
                    }
                    _ => {}
                }
            }
            for (name, _) in fa.iter() {
                if !ta.iter().any(|(n, _)| n == name) {
                    return format!(
                        "The 'false' value includes object attribute {}, which is absent in the 'true' value",
                        go_quote(name)
                    );
                }
            }
        }
        (Type::Tuple(te), Type::Tuple(fe)) => {
            if te.len() != fe.len() {
                return format!(
                    "The 'true' tuple has length {}, but the 'false' tuple has length {}",
                    te.len(),
                    fe.len()
                );
            }
            for (i, (a, b)) in te.iter().zip(fe.iter()).enumerate() {
                if a != b {
                    return format!(
                        "Type mismatch for tuple element {i}: {}",
                        describe_mismatch(a, b)
                    );
                }
            }
        }
        (Type::List(a), Type::List(b))
        | (Type::Set(a), Type::Set(b))
        | (Type::Map(a), Type::Map(b))
            if matches!(
                (&**a, &**b),
                (Type::Object(_), Type::Object(_)) | (Type::Tuple(_), Type::Tuple(_))
            ) =>
        {
            let noun = match t {
                Type::List(_) => "list",
                Type::Set(_) => "set",
                _ => "map",
            };
            return format!(
                "Mismatched {noun} element types: {}",
                describe_mismatch(a, b)
            );
        }
        _ => {}
    }
    let (tn, fname) = (t.friendly_name(), f.friendly_name());
    if tn == fname {
        return "At least one deeply-nested attribute or element is not compatible across both the 'true' and the 'false' value".into();
    }
    format!("The 'true' value is {tn}, but the 'false' value is {fname}")
}

/// Built-ins whose implementations only move elements of their collection arguments, so
/// an unknown element stays where it is and the rest of the result is known (cty's
/// behaviour for them).
fn passes_nested_unknowns(name: &str) -> bool {
    matches!(
        name,
        "merge"
            | "length"
            | "keys"
            | "values"
            | "lookup"
            | "element"
            | "concat"
            | "slice"
            | "reverse"
            | "coalesce"
            | "coalescelist"
            | "tolist"
            | "tomap"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obj_type(fields: &[(&str, Type)]) -> Type {
        Type::Object(
            fields
                .iter()
                .map(|(k, t)| (Str::from(*k), t.clone()))
                .collect(),
        )
    }

    #[test]
    fn conditional_mismatch_descriptions() {
        let a = obj_type(&[("x", Type::Number)]);
        let b = obj_type(&[("y", Type::Number)]);
        assert_eq!(
            describe_mismatch(&a, &b),
            "The 'true' value includes object attribute \"x\", which is absent in the 'false' value"
        );
        let t1 = Type::Tuple(vec![Type::Number].into());
        let t2 = Type::Tuple(vec![Type::Number, Type::Bool].into());
        assert_eq!(
            describe_mismatch(&t1, &t2),
            "The 'true' tuple has length 1, but the 'false' tuple has length 2"
        );
        assert_eq!(
            describe_mismatch(&Type::list(a.clone()), &Type::list(b)),
            "Mismatched list element types: The 'true' value includes object attribute \"x\", which is absent in the 'false' value"
        );
        assert_eq!(
            describe_mismatch(&t1, &a),
            "The 'true' value is tuple, but the 'false' value is object"
        );
    }
}
