//! The stack VM: runs compiled chunks over cty values with hcl's evaluation semantics.
//!
//! Evaluation never throws: like hcl, a failing operation records a [`Diagnostic`] and
//! yields an unknown value, and evaluation goes on so that every problem of an expression is
//! reported. Unknown values propagate as in cty. The only hard failure is a [`VmError`]: a
//! budget (instructions, allocation, wall time) was exceeded, which the caller turns into a
//! Fatal result, or the code broke an invariant the compiler guarantees (a compiler/VM
//! disagreement: a debug build panics naming the instruction and its chunk; a release build
//! answers that request with a Fatal result).
//!
//! A conditional evaluates the branch it takes for real and the other one in *type-only*
//! mode, where `invoke` of a user function yields an unknown instead of running and every
//! diagnostic is discarded: hcl's results (both branches' types unified) at the cost of the
//! taken path only.
//!
//! This module is the run loop: `Vm::run` dispatches each instruction to its family,
//! one module each: [`load`] (constants, slots, temporaries, marks), [`access`] (attributes
//! and indexing), [`operators`], [`control`] (conditionals, `try`/`can`), [`collections`]
//! (tuples and objects), [`iterate`] (`for` and splats), [`template`], [`calls`] (built-in
//! functions) and [`userfn`] (`invoke`). Each instruction's stack effect is documented on
//! [`Op`] and checked in debug builds.

mod access;
mod calls;
mod collections;
mod control;
mod iterate;
mod load;
mod operators;
mod template;
mod userfn;

#[cfg(debug_assertions)]
use crate::bytecode::code::Aux;
use crate::bytecode::code::{ChunkId, Code, Op, SiteId, SiteKind};
use crate::syntax::diag::{Diagnostic, Text};
use crate::syntax::span::Span;
use crate::value::meter::{self, Facts, Size, expanded_size, output_facts};
use crate::value::{Str, Summary, Type, Value};
use control::{CondState, Region, TryState};
use iterate::{ForState, SplatState};
use std::fmt;
use std::time::{Duration, Instant};

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
    /// 1 µs), not at the wall clock. The default, 50,000, is 140 times what the `fleet`
    /// workload makes (350: one per resource) and lets `fib(20)` (21,891 calls) finish.
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
    /// A value nested deeper than [`crate::value::MAX_DEPTH`] (not configurable: every
    /// walk over a value must fit the evaluating thread's stack).
    Depth,
}

/// Why evaluation stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VmErrorKind {
    /// A budget was exceeded.
    Limit(LimitKind),
    /// The code broke an invariant the compiler guarantees (a bug, not an input problem;
    /// only release builds get here, debug builds panic).
    Internal,
}

/// Evaluation stopped: says why and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VmError {
    pub kind: VmErrorKind,
    /// The expression being evaluated when it stopped.
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

/// Why an instruction stopped evaluation; [`Vm::run`] turns it into a [`VmError`] naming
/// the instruction.
///
/// Each variant's payload is one word (a pair is boxed, on the rare path), so a [`Step`]
/// is two words, returned in registers.
enum Stop {
    /// A budget ran out at this instruction.
    Limit(LimitKind),
    /// A budget ran out inside this builtin (named in the message).
    LimitIn(Box<(LimitKind, &'static str)>),
    /// The code is not what the compiler produces: what the VM found wrong.
    Fault(&'static &'static str),
    /// A nested evaluation (a user function's chunk) stopped; its error says where.
    Nested(Box<VmError>),
}

impl From<VmError> for Stop {
    fn from(e: VmError) -> Stop {
        Stop::Nested(Box::new(e))
    }
}

/// What the run loop does after an instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Flow {
    Next,
    Jump(u32),
    Return,
}

/// The result of an instruction.
type Step = Result<Flow, Stop>;
const _: () = assert!(
    std::mem::size_of::<Step>() <= 16,
    "a Step fits two registers"
);

/// A VM for one request: scratch stacks reused across evaluations, budgets, call depth.
pub struct Vm<'p> {
    program: &'p Code,
    limits: Limits,
    started: Instant,
    /// `started` plus the wall-time budget, for the builtins' meter (`None` past the
    /// clock's range: no deadline).
    deadline: Option<Instant>,
    steps: u64,
    /// When `steps` reaches this, [`Vm::run`] asks the budgets ([`Vm::budget_check`]): at
    /// the next multiple of 64 or just past the instruction budget, whichever is first,
    /// so each instruction costs one comparison.
    next_check: u64,
    /// When `steps` reaches this (a multiple of 4,096), the budget check reads the clock.
    next_clock: u64,
    /// When [`meter::walked_so_far`] reaches this, the clock is read after the instruction.
    walk_clock: u64,
    elements: u64,
    bytes: u64,
    depth: u32,
    invocations: u64,
    type_only: u32,
    stack: Vec<Value>,
    /// Where the running chunk's part of `stack` starts (below: its callers').
    base: usize,
    temps: Vec<Value>,
    /// Where the running chunk's temporaries start in `temps`.
    temp_base: usize,
    marks: Vec<usize>,
    regions: Vec<Region>,
    conds: Vec<CondState>,
    fors: Vec<ForState>,
    /// The values of the tuple `for`s being evaluated, each `for`'s above the enclosing
    /// one's (see `ForState`): moved into the tuple at its end, one allocation, and the
    /// buffer kept for the next `for`.
    for_values: Vec<Value>,
    splats: Vec<SplatState>,
    expands: Vec<Vec<Value>>,
    tries: Vec<TryState>,
    /// Scratch text of the template being joined.
    text: String,
    /// Frames of user function calls that returned, reused by the next calls.
    frame_pool: Vec<Vec<Value>>,
    /// The values of the expressions [`Op::MemoBegin`] remembers, by memo, for the
    /// collection being evaluated ([`Vm::forget_memos`]).
    memos: Vec<Option<Value>>,
}

const DYN: Value = Value::Unknown(Type::Dynamic);

/// Debug builds check the first this many instructions of each VM against the stack
/// effects [`Op::effects`] documents: every test program, without slowing down the long
/// loops of the budget tests.
#[cfg(debug_assertions)]
const CHECKED_STEPS: u64 = 1 << 16;

fn has_errors_since(diags: &[Diagnostic], mark: usize) -> bool {
    diags
        .get(mark..)
        .is_some_and(|d| d.iter().any(|d| d.is_error()))
}

fn err_diag(summary: &'static str, detail: impl Into<Text>, subject: Span) -> Diagnostic {
    Diagnostic::error(summary, detail, subject)
}

impl<'p> Vm<'p> {
    pub fn new(program: &'p Code, limits: Limits) -> Self {
        let started = Instant::now();
        Vm {
            program,
            limits,
            started,
            deadline: started.checked_add(limits.max_wall),
            steps: 0,
            next_check: 64u64.min(limits.max_instructions.saturating_add(1)),
            next_clock: 4096,
            walk_clock: meter::walked_so_far().saturating_add(meter::WALK_CLOCK),
            elements: 0,
            bytes: 0,
            depth: 0,
            invocations: 0,
            type_only: 0,
            stack: Vec::with_capacity(64),
            base: 0,
            temps: Vec::new(),
            temp_base: 0,
            marks: Vec::new(),
            regions: Vec::new(),
            conds: Vec::new(),
            fors: Vec::new(),
            for_values: Vec::new(),
            splats: Vec::new(),
            expands: Vec::new(),
            tries: Vec::new(),
            text: String::new(),
            frame_pool: Vec::new(),
            memos: Vec::new(),
        }
    }

    /// Forgets the expressions remembered for a collection's members
    /// ([`Op::MemoBegin`]): the next collection (or evaluation) computes its own.
    pub fn forget_memos(&mut self) {
        self.memos.clear();
    }

    /// Starts the wall-time budget again; the other budgets go on. For a caller that runs
    /// many short evaluations between work of its own (`explain` folding the parts of the
    /// expressions it prints): their instructions, allocation and calls stay bounded
    /// together, and each by the wall time alone.
    pub fn restart_clock(&mut self) {
        self.started = Instant::now();
        self.deadline = self.started.checked_add(self.limits.max_wall);
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
            calls: self.invocations,
        }
    }

    /// Charges a value about to be written into the response (at `span`, the expression
    /// that made it) by its expanded size: the response counts against the same budgets
    /// as the values and strings of the evaluation. The same walk tells whether the value
    /// holds an unknown or a number `number_ok` refuses ([`output_facts`]); when it is
    /// charged, it was walked whole.
    pub fn charge_output(
        &mut self,
        v: &Value,
        span: Span,
        number_ok: impl Fn(&crate::value::number::Number) -> bool,
    ) -> Result<Facts, VmError> {
        let facts = output_facts(v, self.left(), number_ok);
        self.charge_written(facts.size.elements, facts.size.bytes, span)?;
        Ok(facts)
    }

    /// Charges `elements` and `bytes` about to be written into the response for the
    /// expression at `span` (by [`Vm::charge_output`], and for what the evaluator adds to
    /// a value it charged: a collection member's annotations).
    #[inline]
    pub fn charge_written(&mut self, elements: u64, bytes: u64, span: Span) -> Result<(), VmError> {
        match self.alloc(elements, bytes) {
            Err(Stop::Limit(kind)) => {
                let mut err = self.limit_error(kind, Some(span));
                err.message = format!("{} (writing the response)", err.message);
                Err(err)
            }
            _ => Ok(()),
        }
    }

    /// Evaluate a chunk against a frame of slot values; diagnostics are appended to `diags`.
    /// `Err` only when a budget is exceeded (or the code is broken, see the module docs).
    pub fn eval(
        &mut self,
        chunk: ChunkId,
        frame: &[Value],
        diags: &mut Vec<Diagnostic>,
    ) -> Result<Value, VmError> {
        if let Some(v) = self.slot_read(chunk, frame) {
            return Ok(v);
        }
        let r = self.run(chunk, frame, diags);
        if r.is_err() {
            self.stack.clear();
            self.base = 0;
            self.temps.clear();
            self.temp_base = 0;
            self.marks.clear();
            self.regions.clear();
            self.conds.clear();
            self.fors.clear();
            self.for_values.clear();
            self.splats.clear();
            self.expands.clear();
            self.tries.clear();
            self.type_only = 0;
            self.depth = 0;
        }
        r
    }

    /// The value of a chunk that only reads a slot, or a slot's attribute chain
    /// (`each.value.name`, a local `it = each.value`), when every step is a present
    /// attribute: what [`Vm::run`] gives for it, the same instructions counted, without
    /// setting up a run. `None` leaves the chunk to [`Vm::run`] (a step that fails, the
    /// instruction budget about to run out, any other chunk).
    fn slot_read(&mut self, chunk: ChunkId, frame: &[Value]) -> Option<Value> {
        let prog = self.program;
        let start = prog.chunks.get(chunk.0 as usize)?.start as usize;
        let (slot, steps) = match (prog.code.get(start)?, prog.code.get(start + 1)?) {
            (Op::Slot { slot, mark: false }, Op::Return) => (*slot, &[][..]),
            (
                Op::SlotPath {
                    slot,
                    path,
                    mark: false,
                },
                Op::Return,
            ) => (*slot, &prog.paths.get(*path as usize)?[..]),
            _ => return None,
        };
        // `run` counts the read (one per step besides) and the `Return`.
        let counted = self.steps.checked_add(2 + steps.len() as u64)?;
        if counted > self.limits.max_instructions {
            return None;
        }
        let (v, taken) = access::present_attrs(frame.get(slot as usize)?, steps);
        if taken < steps.len() {
            return None;
        }
        self.steps = counted;
        Some(v.clone())
    }

    /// Run one chunk to its `Return`, on top of whatever the caller has on the stacks.
    fn run(
        &mut self,
        chunk: ChunkId,
        frame: &[Value],
        diags: &mut Vec<Diagnostic>,
    ) -> Result<Value, VmError> {
        let prog = self.program;
        let Some(info) = prog.chunks.get(chunk.0 as usize).copied() else {
            return Err(self.fault("no such chunk", chunk, None));
        };
        let (outer_base, outer_temps) = (self.base, self.temp_base);
        self.base = self.stack.len();
        self.temp_base = self.temps.len();
        // Nulls made in place: `resize` cloned one for each and dropped it out of line.
        self.temps
            .resize_with(self.temp_base + info.temps as usize, || DYN);
        let mut pc = info.start as usize;
        // The table as a slice held here: read through `prog` on every instruction, it
        // cost a load more (the vector's pointer and length behind the reference).
        let code: &[Op] = &prog.code;
        // `None` at `Return`; the stop of an instruction that stopped evaluation.
        let stopped: Option<Stop> = loop {
            self.steps += 1;
            if self.steps >= self.next_check
                && let Some(kind) = self.budget_check()
            {
                return Err(self.limit_error(kind, self.span_at(pc)));
            }
            let Some(op) = code.get(pc) else {
                return Err(self.fault("ran past the end of the code", chunk, None));
            };
            #[cfg(debug_assertions)]
            let before = (self.steps <= CHECKED_STEPS).then(|| self.depths());
            // Each instruction's result is taken where it is made, so an instruction that
            // can only go on jumps straight back here (one shared result would be written
            // to the stack and read back on every step).
            macro_rules! step {
                ($e:expr) => {{
                    let step: Step = $e;
                    match step {
                        Ok(flow) => {
                            #[cfg(debug_assertions)]
                            if let Some(before) = &before {
                                self.check_effect(*op, flow, before, chunk, pc);
                            }
                            match flow {
                                Flow::Next => pc += 1,
                                Flow::Jump(t) => pc = t as usize,
                                Flow::Return => break None,
                            }
                        }
                        Err(stop) => break Some(stop),
                    }
                }};
            }
            // The `Mark` a load carries (see `Op::Const`), with its own budget check.
            macro_rules! carried {
                ($mark:expr) => {
                    if $mark && let Some(kind) = self.carried_mark(diags) {
                        return Err(self.limit_error(kind, self.span_at(pc)));
                    }
                };
            }
            // One instruction, by family. Matched where it lies: each arm reads its own
            // operands (a copy of the instruction read all of its words before the jump,
            // five loads on every dispatch; benches/README.md, session 30).
            match *op {
                Op::Return => step!(Ok(Flow::Return)),
                Op::Const { index, mark } => {
                    carried!(mark);
                    step!(self.op_const(index))
                }
                Op::Slot { slot, mark } => {
                    carried!(mark);
                    step!(self.op_slot(slot, frame))
                }
                Op::Temp { temp, mark } => {
                    carried!(mark);
                    step!(self.op_temp(temp))
                }
                Op::SlotPath { slot, path, mark } => {
                    carried!(mark);
                    step!(self.op_slot_path(slot, path, frame, diags))
                }
                Op::Fail(i) => step!(self.op_fail(i, diags)),
                Op::Mark => step!(self.op_mark(diags)),
                Op::Attr { name, site } => step!(self.op_attr(name, site, diags)),
                Op::IndexConst { key, site } => step!(self.op_index_const(key, site, diags)),
                Op::Index { site } => step!(self.op_index(site, diags)),
                Op::Unary { op, site } => step!(self.op_unary(op, site, diags)),
                Op::Binary { op, site } => step!(self.op_binary(op, site, diags)),
                Op::LogicRhs { op } => step!(self.op_logic_rhs(op, diags)),
                Op::Logic { op, site } => step!(self.op_logic(op, site, diags)),
                Op::CondSelect => step!(self.op_cond_select()),
                Op::BranchBegin(which) => step!(self.op_branch_begin(which, diags)),
                Op::BranchEnd => step!(self.op_branch_end(diags)),
                Op::CondMerge { site } => step!(self.op_cond_merge(site, diags)),
                Op::TryBegin => step!(self.op_try_begin(diags)),
                Op::Probe => step!(self.op_probe(diags)),
                Op::TryDepCheck { end, can } => {
                    step!(self.op_try_dep_check(end, can, diags))
                }
                Op::TryArg { end, can } => step!(self.op_try_arg(end, can, diags)),
                Op::TryTraversal { end, can } => step!(self.op_try_traversal(end, can, diags)),
                Op::TryFail { call, can } => step!(self.op_try_fail(call, can, diags)),
                Op::MemoBegin { memo, end } => step!(self.op_memo_begin(memo, end, diags)),
                Op::MemoEnd { memo } => step!(self.op_memo_end(memo, diags)),
                Op::MakeTuple(n) => step!(self.op_make_tuple(n)),
                Op::KeyDone => step!(self.op_key_done(diags)),
                Op::ObjItem { site } => step!(self.op_obj_item(site, diags)),
                Op::MakeObject(n) => step!(self.op_make_object(n)),
                Op::MakeObjectConst(i) => step!(self.op_make_object_const(i)),
                Op::ForBegin {
                    site,
                    end,
                    key_temp,
                    val_temp,
                    object,
                    group,
                } => {
                    step!(self.op_for_begin(site, end, [key_temp, val_temp], object, group, diags))
                }
                Op::ForPreCheck { site, end } => step!(self.op_for_pre_check(site, end, diags)),
                Op::ForNext { exit } => step!(self.op_for_next(exit)),
                Op::ForFilter { site, next } => step!(self.op_for_filter(site, next, diags)),
                Op::ForKey { site, next } => step!(self.op_for_key(site, next, diags)),
                Op::ForPush { site, next } => step!(self.op_for_push(site, next, diags)),
                Op::ForEnd => step!(self.op_for_end()),
                Op::SplatBegin { site, end } => step!(self.op_splat_begin(site, end, diags)),
                Op::SplatNext { temp, exit } => step!(self.op_splat_next(temp, exit)),
                Op::SplatPush { next } => step!(self.op_splat_push(next, diags)),
                Op::SplatEnd => step!(self.op_splat_end(diags)),
                Op::Template { n, site } => step!(self.op_template(n, site, diags)),
                Op::TemplateJoin { site } => step!(self.op_template_join(site, diags)),
                Op::ConvArg { call, arg } => step!(self.op_conv_arg(call, arg, diags)),
                Op::Call { call, argc } => step!(self.op_call(call, argc, diags)),
                Op::ExpandBegin { call, end } => step!(self.op_expand_begin(call, end, diags)),
                Op::CallExpanded { call, nstatic } => {
                    step!(self.op_call_expanded(call, nstatic, diags))
                }
                Op::Invoke { call, func } => step!(self.op_invoke(call, func, diags)),
                Op::InvokeBound {
                    call,
                    func,
                    binding,
                } => step!(self.op_invoke_bound(call, func, binding, diags)),
            }
        };
        if let Some(stop) = stopped {
            return Err(self.stopped(stop, chunk, pc));
        }
        if self.stack.len() != self.base + 1 {
            return Err(self.fault("a chunk must leave exactly one value", chunk, Some(pc)));
        }
        let result = self.stack.pop().unwrap_or_default();
        Value::truncate(&mut self.temps, self.temp_base);
        self.base = outer_base;
        self.temp_base = outer_temps;
        Ok(result)
    }

    // ---- the stacks ----

    fn push(&mut self, v: Value) -> Step {
        v.push_onto(&mut self.stack);
        Ok(Flow::Next)
    }

    /// Refuses a new collection nested deeper than [`crate::value::MAX_DEPTH`]: one
    /// level past it at most is ever made (each constructor and builtin adds a level or
    /// two to values within it), and no walk reaches it but its drop.
    #[inline(always)]
    fn check_depth(v: &Value) -> Result<(), Stop> {
        if v.depth() > crate::value::MAX_DEPTH {
            return Err(Stop::Limit(LimitKind::Depth));
        }
        Ok(())
    }

    /// [`Vm::check_depth`] of a tuple or object about to be made of contents summed up
    /// as `contents` (one level deeper than they are), which it returns.
    #[inline(always)]
    fn check_contents(contents: Summary) -> Result<Summary, Stop> {
        if contents.depth() >= crate::value::MAX_DEPTH {
            return Err(Stop::Limit(LimitKind::Depth));
        }
        Ok(contents)
    }

    /// The top value of the running chunk's part of the stack.
    fn pop(&mut self) -> Result<Value, Stop> {
        if self.stack.len() > self.base
            && let Some(v) = self.stack.pop()
        {
            return Ok(v);
        }
        Err(Stop::Fault(&"value stack underflow"))
    }

    fn top(&self) -> Result<&Value, Stop> {
        if self.stack.len() > self.base
            && let Some(v) = self.stack.last()
        {
            return Ok(v);
        }
        Err(Stop::Fault(&"value stack underflow"))
    }

    fn top_mut(&mut self) -> Result<&mut Value, Stop> {
        if self.stack.len() > self.base
            && let Some(v) = self.stack.last_mut()
        {
            return Ok(v);
        }
        Err(Stop::Fault(&"value stack underflow"))
    }

    /// Where the top `n` values of the running chunk's part of the stack start.
    fn top_n(&self, n: usize) -> Result<usize, Stop> {
        match self.stack.len().checked_sub(n) {
            Some(at) if at >= self.base => Ok(at),
            _ => Err(Stop::Fault(&"value stack underflow")),
        }
    }

    fn pop_mark(&mut self) -> Result<usize, Stop> {
        self.marks.pop().ok_or(Stop::Fault(&"mark stack underflow"))
    }

    /// The ranges an instruction's site names.
    fn site<T: SiteKind>(&self, id: SiteId<T>) -> Result<T, Stop> {
        self.program
            .site(id)
            .ok_or(Stop::Fault(&"missing site, or a site of another kind"))
    }

    // ---- budgets and errors ----

    fn alloc(&mut self, elements: u64, bytes: u64) -> Result<(), Stop> {
        self.elements = self.elements.saturating_add(elements);
        self.bytes = self.bytes.saturating_add(bytes);
        if self.elements > self.limits.max_alloc_elements {
            return Err(Stop::Limit(LimitKind::AllocElements));
        }
        if self.bytes > self.limits.max_alloc_bytes {
            return Err(Stop::Limit(LimitKind::AllocBytes));
        }
        Ok(())
    }

    /// What is left of the element and string budgets.
    fn left(&self) -> Size {
        Size {
            elements: self.limits.max_alloc_elements.saturating_sub(self.elements),
            bytes: self.limits.max_alloc_bytes.saturating_sub(self.bytes),
        }
    }

    /// Charges what placing `vals` in a new collection really adds: a string or collection
    /// shared with another value (a local used twice, ten copies of a tuple) is a copy when
    /// the result is written out, so it costs its expanded size; a fresh value was charged
    /// when it was made. Measuring stops at the budget, so it costs no more than it charges.
    /// A string of up to 15 bytes is never shared (it lives in its element, copied with
    /// it): its copies are bounded by the element budget, at 15 bytes each.
    ///
    /// The same look at each element adds up the summary of the tuple or object they
    /// make, from `start` (an object's keys): returned, its contents ([`Summary`]; see
    /// [`Vm::check_contents`]).
    fn charge_shared<'v>(
        &mut self,
        start: Summary,
        vals: impl Iterator<Item = &'v Value>,
    ) -> Result<Summary, Stop> {
        let mut sum = start;
        for v in vals {
            match v {
                Value::String(x) => sum.add_str(x),
                Value::List(q) | Value::Set(q) | Value::Tuple(q) => sum.include(q.summary()),
                Value::Map(f) | Value::Object(f) => sum.include(f.summary()),
                Value::Number(n) => sum.add_number(n),
                Value::Null(t) => sum.add_type(t),
                Value::Unknown(t) => sum.add_unknown(t),
                Value::Bool(_) => {}
            }
            match held_elsewhere(v) {
                Held::Own => {}
                Held::Bytes(n) => self.bytes = self.bytes.saturating_add(n),
                Held::Collection => self.charge_expanded(v, 0)?,
            }
        }
        self.alloc(0, 0)?;
        Ok(sum)
    }

    /// Charges `v` its expanded size (measured no further than what is left of the
    /// budgets), and `bytes_per_element` more bytes for each element: for work that
    /// writes a value out, before it is done.
    fn charge_expanded(&mut self, v: &Value, bytes_per_element: u64) -> Result<(), Stop> {
        let size = expanded_size(v, self.left());
        let extra = size.elements.saturating_mul(bytes_per_element);
        self.alloc(size.elements, size.bytes.saturating_add(extra))
    }

    /// The budget [`Vm::run`] has spent, if any; asked every 64th instruction and past
    /// the instruction budget. The wall clock is read every 4,096th instruction, and
    /// sooner when walks over values visited [`meter::WALK_CLOCK`] elements since it last
    /// was ([`meter::walked`]): comparing, typing or converting a large or shared value
    /// takes one instruction (or one builtin call) however long it walks, and a few
    /// thousand of them ran for minutes before the 4,096th instruction. Asking here costs
    /// no more per instruction than reading the clock every 4,096th did.
    #[cold]
    #[inline(never)]
    fn budget_check(&mut self) -> Option<LimitKind> {
        if self.steps > self.limits.max_instructions {
            return Some(LimitKind::Instructions);
        }
        // Instructions that count several (an attribute path) may step over a multiple.
        self.next_check = (self.steps | 0x3f)
            .saturating_add(1)
            .min(self.limits.max_instructions.saturating_add(1));
        let walked = meter::walked_so_far();
        if self.steps < self.next_clock && walked < self.walk_clock {
            return None;
        }
        self.next_clock = (self.steps | 0xfff).saturating_add(1);
        self.walk_clock = walked.saturating_add(meter::WALK_CLOCK);
        (self.started.elapsed() > self.limits.max_wall).then_some(LimitKind::WallTime)
    }

    fn span_at(&self, pc: usize) -> Option<Span> {
        self.program.spans.get(pc).copied()
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
            LimitKind::Depth => format!(
                "a value nested more than {} levels deep",
                crate::value::MAX_DEPTH
            ),
        };
        let at = match span {
            Some(s) => format!(" (at {})", self.program.sources.range(s)),
            None => String::new(),
        };
        VmError {
            kind: VmErrorKind::Limit(kind),
            span,
            message: format!("evaluation budget exceeded: {what}{at}"),
        }
    }

    /// The error of an instruction that stopped evaluation.
    #[cold]
    fn stopped(&self, stop: Stop, chunk: ChunkId, pc: usize) -> VmError {
        match stop {
            Stop::Limit(kind) => self.limit_error(kind, self.span_at(pc)),
            Stop::LimitIn(k) => {
                let (kind, name) = *k;
                let mut e = self.limit_error(kind, self.span_at(pc));
                e.message = format!("{} (in {name})", e.message);
                e
            }
            Stop::Nested(e) => *e,
            Stop::Fault(what) => self.fault(what, chunk, Some(pc)),
        }
    }

    /// A compiler/VM disagreement at instruction `pc` of `chunk`: a panic in debug builds,
    /// an [`VmErrorKind::Internal`] error (a Fatal result for the request) in release.
    #[cold]
    fn fault(&self, what: &str, chunk: ChunkId, pc: Option<usize>) -> VmError {
        let prog = self.program;
        let start = prog
            .chunks
            .get(chunk.0 as usize)
            .map_or(0, |c| c.start as usize);
        let at = match pc {
            Some(pc) => format!(
                ", instruction {} ({:?})",
                pc.saturating_sub(start),
                prog.code.get(pc)
            ),
            None => String::new(),
        };
        let span = pc.and_then(|pc| self.span_at(pc));
        let range = span.map_or(String::new(), |s| format!(" at {}", prog.sources.range(s)));
        let message = format!(
            "internal error: bytecode chunk {}{at}{range}: {what}",
            chunk.0
        );
        if cfg!(debug_assertions) {
            panic!("{message}");
        }
        VmError {
            kind: VmErrorKind::Internal,
            span,
            message,
        }
    }

    // ---- debug checks of the documented stack effects ----

    /// The depth of the value stack and of each bookkeeping stack, in [`Aux`] order.
    #[cfg(debug_assertions)]
    fn depths(&self) -> [usize; 8] {
        [
            self.stack.len(),
            self.marks.len(),
            self.regions.len(),
            self.conds.len(),
            self.fors.len(),
            self.splats.len(),
            self.expands.len(),
            self.tries.len(),
        ]
    }

    /// Panics when an instruction did not do to the stacks what [`Op::effects`] says.
    #[cfg(debug_assertions)]
    fn check_effect(&self, op: Op, flow: Flow, before: &[usize; 8], chunk: ChunkId, pc: usize) {
        if flow == Flow::Return {
            return;
        }
        let effects = op.effects(self.program);
        let effect = match (effects, flow) {
            (Some(e), Flow::Jump(t)) => e.jump.filter(|(to, _)| *to == t).map(|(_, e)| e),
            (Some(e), _) => e.next,
            (None, _) => None,
        };
        let Some(e) = effect else {
            panic!(
                "chunk {}, pc {pc}: {op:?} continued as {flow:?}, which it does not",
                chunk.0
            );
        };
        let after = self.depths();
        let mut ok = before[0] + e.pushes as usize == after[0] + e.pops as usize;
        for a in Aux::ALL {
            let i = a as usize;
            ok &= before[i + 1] as isize + e.aux[i] as isize == after[i + 1] as isize;
        }
        assert!(
            ok,
            "chunk {}, pc {pc}: {op:?} ({flow:?}) changed the stacks from {before:?} to \
             {after:?}, not as documented ({e:?})",
            chunk.0
        );
    }
}

/// What a value placed in a new collection holds together with other values: written out,
/// it is a copy, which [`Vm::charge_shared`] (and `MakeObjectConst`, in its one pass)
/// charges. See there for strings of up to 15 bytes.
pub(super) enum Held {
    /// Nothing another value holds (or nothing that a copy costs more than its element).
    Own,
    /// A string another value holds: its bytes.
    Bytes(u64),
    /// A collection another value holds: its expanded size.
    Collection,
}

/// See [`Held`].
#[inline(always)]
pub(super) fn held_elsewhere(v: &Value) -> Held {
    match v {
        Value::String(x) if Str::strong_count(x) > 1 => Held::Bytes(x.len() as u64),
        _ if v.collection_unique() == Some(false) => Held::Collection,
        _ => Held::Own,
    }
}
