//! The expression compiler: lowers each hcl expression ([`ast::Expr`]) to a flat chunk of
//! bytecode for the [`crate::bytecode::vm`]. Names are resolved here, once: root variables become frame
//! slots (through the caller's [`Scope`]), `for` and splat variables become temporaries,
//! built-in functions become [`FuncId`]s and `invoke("name", ...)` becomes a [`FnId`].
//!
//! The compiler also rebuilds what hcl's parser knows and our AST leaves implicit: which
//! `a.b[0].c` chains are hcl traversals (their errors carry the traversal's ranges), the
//! ranges of `.name` and `[key]` steps, and each expression's `StartRange`, so that every
//! diagnostic the VM produces has hcl's subject, context and expression ranges.

use crate::builtins::{self, FuncId};
use crate::syntax::ast::{
    self, BinaryOp, Expr, ExprKind, ObjectKey, Template, TemplatePart, UnaryOp,
};
use crate::syntax::diag::Diagnostic;
use crate::syntax::span::{FileId, Pos, SourceMap, Span};
use crate::syntax::visit::{is_literal_key, literal_template, static_string, traversals};
use crate::text::suggest::{closest_first, suggest};
use crate::value::number::Number;
use crate::value::{Str, Type, Value};
use std::collections::HashMap;
use std::sync::Arc;

/// Name resolution for root variables, done at compile time by the caller (the IR).
pub trait Scope {
    /// The frame slot of a root variable (`req`, `self`, `each`, a local, a function arg).
    fn resolve(&self, name: &str) -> Option<u32>;
    /// Every name visible here, for hcl's "Did you mean" suggestions (more than
    /// [`crate::text::suggest::MAX_CANDIDATES`] need not be listed: none is suggested).
    fn visible_names(&self) -> Vec<Arc<str>>;
}

/// A compiled expression: an entry point into the program's code table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ChunkId(pub u32);

/// A user function (`function name { ... }`), called through `invoke`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FnId(pub u32);

/// Deepest expression nesting the compiler accepts (hostile input must not overflow the stack).
const MAX_NESTING: u32 = 400;

/// One VM instruction. Jump targets are absolute indices in the program's code table.
/// `site` operands index [`Program::sites`] (the ranges a diagnostic needs).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Op {
    /// Push a constant.
    Const(u32),
    /// Push a frame slot (root variable).
    Slot(u32),
    /// Push a temporary (`for` or splat variable) of the running chunk.
    Temp(u32),
    /// Record a prebuilt diagnostic and push `DynamicVal`.
    Fail(u32),
    /// hcl `GetAttr` with a traversal step's ranges: site.a = step, whole = traversal.
    Attr {
        name: u32,
        site: u32,
    },
    /// hcl `Index` with a constant key (a traversal step).
    IndexConst {
        key: u32,
        site: u32,
    },
    /// hcl `Index` of `coll[key]` (both on the stack).
    Index {
        site: u32,
    },
    /// Remember the current number of diagnostics (for "did this part fail?").
    Mark,
    /// `-x`, `!x`; pops a mark. site.a = operand, whole = expression.
    Unary {
        op: UnaryOp,
        site: u32,
    },
    /// Arithmetic, comparison, equality; pops a mark. site.a = lhs, site.b = rhs.
    Binary {
        op: BinaryOp,
        site: u32,
    },
    /// After the lhs of `&&`/`||`: evaluates the rhs for its type only when the lhs decides.
    LogicRhs {
        op: BinaryOp,
    },
    /// Combine `&&`/`||` with hcl's short-circuit rules; pops the region and a mark.
    Logic {
        op: BinaryOp,
        site: u32,
    },
    /// Pop a condition and remember which branch is taken.
    CondSelect,
    /// Start branch 0 (true) or 1 (false); the untaken one runs in type-only mode.
    BranchBegin(u8),
    BranchEnd,
    /// Unify both branch results as hcl does; pops the condition and a mark.
    /// site.a = condition, site.b = true branch, site.c = false branch.
    CondMerge {
        site: u32,
    },
    Jump(u32),
    MakeTuple(u32),
    /// After an object key expression: pops a mark; a key whose evaluation failed becomes
    /// an unknown key.
    KeyDone,
    /// Check an object item's key (below the value). site.a = key, site.b = value.
    ObjItem {
        site: u32,
    },
    /// Pops n (key, value) pairs.
    MakeObject(u32),
    /// Pops the values of an object whose keys are all constant; the operand indexes
    /// [`Program::shapes`] (sorted keys and where each one's value is).
    MakeObjectConst(u32),
    /// Pops n template parts; `site` indexes [`Program::templates`].
    Template {
        n: u32,
        site: u32,
    },
    /// Join the tuple a template `%{for}` produced. site.whole = the directive.
    TemplateJoin {
        site: u32,
    },
    /// Start a `for`: site.a = collection, site.b = condition, site.c = key expression.
    ForBegin {
        site: u32,
        end: u32,
        key_temp: u32,
        val_temp: u32,
        object: bool,
        group: bool,
    },
    /// hcl's early check of the `if` clause with unknown variables; pops a mark.
    ForPreCheck {
        site: u32,
        end: u32,
    },
    ForNext {
        exit: u32,
    },
    ForFilter {
        site: u32,
        next: u32,
    },
    ForKey {
        site: u32,
        next: u32,
    },
    ForPush {
        site: u32,
    },
    ForEnd,
    /// Start a splat; pops a mark. site.a = source, site.b = marker.
    SplatBegin {
        site: u32,
        end: u32,
    },
    SplatNext {
        temp: u32,
        exit: u32,
    },
    /// Pops the element result and a mark.
    SplatPush {
        next: u32,
    },
    SplatEnd,
    /// Convert the argument on top of the stack to its parameter type (builtin calls).
    ConvArg {
        call: u32,
        arg: u32,
    },
    /// Call a builtin with `argc` arguments; pops a mark.
    Call {
        call: u32,
        argc: u32,
    },
    /// Expand the final `...` argument (on the stack) and check arity.
    ExpandBegin {
        call: u32,
        end: u32,
    },
    /// Call a builtin with `nstatic` arguments plus the expanded ones; pops a mark.
    CallExpanded {
        call: u32,
        nstatic: u32,
    },
    /// `invoke(name, args)`: name and args on the stack; pops a mark.
    Invoke {
        call: u32,
        func: u32,
    },
    /// Start `try`/`can`.
    TryBegin,
    /// After a traversal of a `try` argument: is it (wholly) known? Pops a mark.
    Probe,
    /// If an argument depends on unknown values, the result is unknown.
    TryDepCheck {
        end: u32,
        can: bool,
    },
    /// After a `try` argument: done if it had no errors; pops a mark.
    TryArg {
        end: u32,
        can: bool,
    },
    /// No argument succeeded.
    TryFail {
        call: u32,
        can: bool,
    },
    /// End of a chunk: the value on top of the stack is the result.
    Return,
}

/// Ranges an instruction needs for its diagnostics (meaning per instruction, see [`Op`]).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Site {
    pub a: Span,
    pub b: Span,
    pub c: Span,
    pub whole: Span,
}

/// What a call site calls.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Callee {
    Builtin(FuncId),
    Invoke,
    Try,
    Can,
}

/// Ranges and names of one function call, for hcl's call diagnostics.
#[derive(Clone, Debug)]
pub(crate) struct CallSite {
    pub callee: Callee,
    pub name: Str,
    /// Name through open paren (hcl `StartRange`).
    pub start: Span,
    /// Whole call (hcl `Range`).
    pub range: Span,
    pub close_paren: Span,
    pub arg_starts: Vec<Span>,
    pub arg_ranges: Vec<Span>,
    /// The `...` argument's range, if the call expands its final argument.
    pub expand: Option<Span>,
}

/// Ranges of a template's parts (`None` for literal text).
#[derive(Clone, Debug)]
pub(crate) struct TemplateSite {
    pub parts: Vec<Option<Span>>,
    pub whole: Span,
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct ChunkInfo {
    pub start: u32,
    pub temps: u32,
}

/// The keys of an object constructor whose keys are all constants, known at compile time:
/// the object's entries are built in key order without sorting or converting keys, and the
/// names are shared by every object built.
#[derive(Clone, Debug)]
pub(crate) struct ObjShape {
    /// The number of values on the stack (items in source order, duplicates included).
    pub values: u32,
    /// Distinct keys in cty order, each with the source index of its value (the last of
    /// duplicates, as hcl keeps).
    pub keys: Vec<(Str, u32)>,
}

impl ObjShape {
    fn new(keys: Vec<Str>) -> ObjShape {
        let values = keys.len() as u32;
        let mut sorted: Vec<(Str, u32)> = keys.into_iter().zip(0u32..).collect();
        // Stable: among equal keys the last in source order ends up last.
        sorted.sort_by(|a, b| a.0.cmp(&b.0));
        let mut out: Vec<(Str, u32)> = Vec::with_capacity(sorted.len());
        for e in sorted {
            match out.last_mut() {
                Some(last) if last.0 == e.0 => *last = e,
                _ => out.push(e),
            }
        }
        ObjShape { values, keys: out }
    }
}

/// A user function as the VM runs it.
#[derive(Clone, Debug)]
pub(crate) struct UserFn {
    pub name: Str,
    /// Declared args in declaration order; their frame slots are 0..n.
    pub args: Vec<(Str, Option<ChunkId>)>,
    /// Locals: (slot, chunk) in evaluation order.
    pub locals: Vec<(u32, ChunkId)>,
    pub body: Option<ChunkId>,
    pub frame_size: u32,
}

/// A compiled program: code, constants and metadata, immutable and shared across requests.
#[derive(Debug)]
pub struct Program {
    pub(crate) code: Vec<Op>,
    /// The source range each instruction belongs to (budget errors say where).
    pub(crate) spans: Vec<Span>,
    pub(crate) chunks: Vec<ChunkInfo>,
    pub(crate) consts: Vec<Value>,
    pub(crate) names: Vec<Str>,
    pub(crate) sites: Vec<Site>,
    pub(crate) calls: Vec<CallSite>,
    pub(crate) templates: Vec<TemplateSite>,
    pub(crate) shapes: Vec<ObjShape>,
    pub(crate) diags: Vec<Diagnostic>,
    pub(crate) functions: Vec<UserFn>,
    pub(crate) sources: Arc<SourceMap>,
}

impl Program {
    /// The source files the program was compiled from (for formatting diagnostics).
    pub fn sources(&self) -> &Arc<SourceMap> {
        &self.sources
    }

    /// Number of chunks compiled.
    pub fn chunk_count(&self) -> usize {
        self.chunks.len()
    }
}

/// A branch of a conditional: an expression, a template (from `%{if}`) or nothing.
#[derive(Clone, Copy)]
enum Branch<'a> {
    Expr(&'a Expr),
    Tmpl(&'a Template, Span),
    Empty(Span),
}

impl Branch<'_> {
    fn span(&self) -> Span {
        match self {
            Branch::Expr(e) => e.span,
            Branch::Tmpl(_, s) | Branch::Empty(s) => *s,
        }
    }
}

/// The pieces of a `for` expression or a template `%{for}` directive.
struct ForParts<'a> {
    key_var: Option<&'a ast::Ident>,
    value_var: &'a ast::Ident,
    coll: &'a Expr,
    key: Option<&'a Expr>,
    value: Branch<'a>,
    cond: Option<&'a Expr>,
    group: bool,
    whole: Span,
}

/// One step of an hcl traversal.
enum Step<'a> {
    Attr(&'a ast::Ident, Span),
    Index(Value, Span),
}

/// Accumulates compiled chunks, constants, interned names and user functions.
pub struct ProgramBuilder {
    prog: Program,
    name_ids: HashMap<Str, u32, ahash::RandomState>,
    fn_ids: HashMap<Str, FnId, ahash::RandomState>,
    /// `for`/splat variables in scope in the chunk being compiled (innermost last).
    locals: Vec<(Str, u32)>,
    splat_temps: Vec<u32>,
    temps_next: u32,
    temps_max: u32,
    depth: u32,
}

impl ProgramBuilder {
    pub fn new(sources: Arc<SourceMap>) -> Self {
        // Room for a program of this size up front (about one instruction per 8 source
        // bytes), so that a cold compile does not regrow the lists step by step.
        let bytes: usize = sources.files.iter().map(|f| f.text.len()).sum();
        let ops = (bytes / 8).clamp(16, 1 << 16);
        ProgramBuilder {
            prog: Program {
                code: Vec::with_capacity(ops),
                spans: Vec::with_capacity(ops),
                chunks: Vec::new(),
                consts: Vec::with_capacity(ops / 8),
                names: Vec::with_capacity(ops / 8),
                sites: Vec::with_capacity(ops / 4),
                calls: Vec::new(),
                templates: Vec::new(),
                shapes: Vec::new(),
                diags: Vec::new(),
                functions: Vec::new(),
                sources,
            },
            name_ids: HashMap::default(),
            fn_ids: HashMap::default(),
            locals: Vec::new(),
            splat_temps: Vec::new(),
            temps_next: 0,
            temps_max: 0,
            depth: 0,
        }
    }

    /// Compile one expression to its own chunk.
    pub fn compile_expr(&mut self, e: &Expr, scope: &dyn Scope) -> ChunkId {
        let start = self.begin_chunk();
        self.expr(e, scope);
        self.end_chunk(start, e.span)
    }

    /// hcl's `Variables()` of an expression: each root traversal (`req.resource.x`, a local
    /// name, ...) with its range, compiled on its own chunk.
    pub fn compile_traversals(&mut self, e: &Expr, scope: &dyn Scope) -> Vec<(Span, ChunkId)> {
        traversals(e)
            .into_iter()
            .map(|t| {
                let start = self.begin_chunk();
                self.expr(t, scope);
                (t.span, self.end_chunk(start, t.span))
            })
            .collect()
    }

    /// Declare a user function so that bodies compiled later can `invoke` it (mutual
    /// recursion). Args get frame slots 0..n in this order; defaults are chunks evaluated
    /// with an empty frame.
    pub fn declare_function(&mut self, name: &str, args: Vec<(Arc<str>, Option<ChunkId>)>) -> FnId {
        let id = FnId(self.prog.functions.len() as u32);
        let frame_size = args.len() as u32;
        self.prog.functions.push(UserFn {
            name: Str::from(name),
            args,
            locals: Vec::new(),
            body: None,
            frame_size,
        });
        self.fn_ids.insert(Str::from(name), id);
        id
    }

    /// Give a declared function its locals (slot, chunk; in evaluation order), its body and
    /// the size of its frame (args + locals).
    pub fn define_function(
        &mut self,
        id: FnId,
        locals: Vec<(u32, ChunkId)>,
        body: ChunkId,
        frame_size: u32,
    ) {
        if let Some(f) = self.prog.functions.get_mut(id.0 as usize) {
            f.frame_size = frame_size.max(f.args.len() as u32);
            f.locals = locals;
            f.body = Some(body);
        }
    }

    /// The function declared under `name`, if any.
    pub fn function(&self, name: &str) -> Option<FnId> {
        self.fn_ids.get(name).copied()
    }

    /// The finished, immutable program.
    pub fn finish(self) -> Program {
        self.prog
    }

    // ---- chunk bookkeeping ----

    fn begin_chunk(&mut self) -> u32 {
        self.locals.clear();
        self.splat_temps.clear();
        self.temps_next = 0;
        self.temps_max = 0;
        self.depth = 0;
        self.prog.code.len() as u32
    }

    fn end_chunk(&mut self, start: u32, span: Span) -> ChunkId {
        self.emit(Op::Return, span);
        let id = ChunkId(self.prog.chunks.len() as u32);
        self.prog.chunks.push(ChunkInfo {
            start,
            temps: self.temps_max,
        });
        id
    }

    fn emit(&mut self, op: Op, span: Span) -> u32 {
        self.prog.code.push(op);
        self.prog.spans.push(span);
        (self.prog.code.len() - 1) as u32
    }

    fn here(&self) -> u32 {
        self.prog.code.len() as u32
    }

    /// Point the jump operand of the instruction at `at` to the current position.
    fn patch(&mut self, at: u32) {
        let target = self.here();
        if let Some(
            Op::Jump(t)
            | Op::ForBegin { end: t, .. }
            | Op::ForPreCheck { end: t, .. }
            | Op::ForNext { exit: t }
            | Op::SplatBegin { end: t, .. }
            | Op::SplatNext { exit: t, .. }
            | Op::ExpandBegin { end: t, .. }
            | Op::TryDepCheck { end: t, .. }
            | Op::TryArg { end: t, .. },
        ) = self.prog.code.get_mut(at as usize)
        {
            *t = target;
        }
    }

    fn konst(&mut self, v: Value) -> u32 {
        self.prog.consts.push(v);
        (self.prog.consts.len() - 1) as u32
    }

    fn name(&mut self, n: &str) -> u32 {
        if let Some(&i) = self.name_ids.get(n) {
            return i;
        }
        let s = Str::from(n);
        self.prog.names.push(s.clone());
        let i = (self.prog.names.len() - 1) as u32;
        self.name_ids.insert(s, i);
        i
    }

    fn site(&mut self, s: Site) -> u32 {
        self.prog.sites.push(s);
        (self.prog.sites.len() - 1) as u32
    }

    fn fail(&mut self, d: Diagnostic, span: Span) {
        self.prog.diags.push(d);
        let i = (self.prog.diags.len() - 1) as u32;
        self.emit(Op::Fail(i), span);
    }

    fn alloc_temp(&mut self) -> u32 {
        let t = self.temps_next;
        self.temps_next += 1;
        self.temps_max = self.temps_max.max(self.temps_next);
        t
    }

    // ---- expressions ----

    fn expr(&mut self, e: &Expr, scope: &dyn Scope) {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            self.fail(
                Diagnostic::error(
                    "Expression too deeply nested",
                    format!("This expression nests more than {MAX_NESTING} levels deep."),
                    e.span,
                ),
                e.span,
            );
        } else {
            self.expr_inner(e, scope);
        }
        self.depth -= 1;
    }

    fn expr_inner(&mut self, e: &Expr, scope: &dyn Scope) {
        if let Some(v) = self.const_value(e) {
            let k = self.konst(v);
            self.emit(Op::Const(k), e.span);
            return;
        }
        match &e.kind {
            ExprKind::Null | ExprKind::Bool(_) => {} // always constant
            ExprKind::Number(text) => {
                // const_value failed: not a number hcl could parse.
                self.fail(
                    Diagnostic::error(
                        "Invalid number literal",
                        format!("{text:?} is not a valid number."),
                        e.span,
                    ),
                    e.span,
                );
            }
            ExprKind::Template(t) => self.template(t, e.span, scope),
            ExprKind::TemplateWrap(inner) | ExprKind::Paren(inner) => self.expr(inner, scope),
            ExprKind::Variable(_) | ExprKind::GetAttr { .. } => self.traversal(e, scope),
            ExprKind::Index { obj, key, legacy } => {
                if *legacy || is_literal_key(key) {
                    self.traversal(e, scope);
                } else {
                    self.expr(obj, scope);
                    self.expr(key, scope);
                    let bracket = self.bracket_range(obj, key, e.span);
                    let site = self.site(Site {
                        a: bracket,
                        whole: e.span,
                        ..Site::default()
                    });
                    self.emit(Op::Index { site }, e.span);
                }
            }
            ExprKind::SplatItem => {
                if let Some(&t) = self.splat_temps.last() {
                    self.emit(Op::Temp(t), e.span);
                } else {
                    let k = self.konst(Value::Unknown(Type::Dynamic));
                    self.emit(Op::Const(k), e.span);
                }
            }
            ExprKind::Splat { source, each, .. } => self.splat(source, each, e.span, scope),
            ExprKind::Call {
                name,
                args,
                expand_final,
                open_paren,
                close_paren,
            } => self.call(
                e,
                name,
                args,
                *expand_final,
                *open_paren,
                *close_paren,
                scope,
            ),
            ExprKind::Tuple(items) => {
                for it in items {
                    self.expr(it, scope);
                }
                self.emit(Op::MakeTuple(items.len() as u32), e.span);
            }
            ExprKind::Object(items) => self.object(items, e.span, scope),
            ExprKind::Unary { op, operand } => {
                self.emit(Op::Mark, e.span);
                self.expr(operand, scope);
                let site = self.site(Site {
                    a: operand.span,
                    whole: e.span,
                    ..Site::default()
                });
                self.emit(Op::Unary { op: *op, site }, e.span);
            }
            ExprKind::Binary { op, lhs, rhs } => {
                let site = self.site(Site {
                    a: lhs.span,
                    b: rhs.span,
                    whole: e.span,
                    ..Site::default()
                });
                self.emit(Op::Mark, e.span);
                self.expr(lhs, scope);
                match op {
                    BinaryOp::And | BinaryOp::Or => {
                        self.emit(Op::LogicRhs { op: *op }, e.span);
                        self.expr(rhs, scope);
                        self.emit(Op::Logic { op: *op, site }, e.span);
                    }
                    _ => {
                        self.expr(rhs, scope);
                        self.emit(Op::Binary { op: *op, site }, e.span);
                    }
                }
            }
            ExprKind::Conditional {
                cond,
                then,
                otherwise,
            } => self.conditional(
                cond,
                Branch::Expr(then),
                Branch::Expr(otherwise),
                e.span,
                scope,
            ),
            ExprKind::For(f) => self.for_expr(
                ForParts {
                    key_var: f.key_var.as_ref(),
                    value_var: &f.value_var,
                    coll: &f.collection,
                    key: f.key_expr.as_ref(),
                    value: Branch::Expr(&f.value_expr),
                    cond: f.cond.as_ref(),
                    group: f.group,
                    whole: e.span,
                },
                scope,
            ),
        }
    }

    fn branch(&mut self, b: Branch<'_>, scope: &dyn Scope) {
        match b {
            Branch::Expr(e) => self.expr(e, scope),
            Branch::Tmpl(t, span) => self.template(t, span, scope),
            Branch::Empty(span) => {
                let k = self.konst(Value::string(""));
                self.emit(Op::Const(k), span);
            }
        }
    }

    /// A literal subtree's value (constant folding), if the whole subtree is literal.
    fn const_value(&self, e: &Expr) -> Option<Value> {
        match &e.kind {
            ExprKind::Null => Some(Value::NULL),
            ExprKind::Bool(b) => Some(Value::Bool(*b)),
            ExprKind::Number(t) => Number::parse(t).map(Value::Number),
            // hcl's parser folds a minus sign into a number literal.
            ExprKind::Unary {
                op: UnaryOp::Neg,
                operand,
            } => match &operand.kind {
                ExprKind::Number(t) => Number::parse(t).map(|n| Value::Number(n.neg())),
                _ => None,
            },
            ExprKind::Template(t) => literal_template(t).map(Value::string),
            ExprKind::TemplateWrap(inner) | ExprKind::Paren(inner) => self.const_value(inner),
            ExprKind::Tuple(items) => items
                .iter()
                .map(|i| self.const_value(i))
                .collect::<Option<Vec<_>>>()
                .map(Value::tuple),
            ExprKind::Object(items) => {
                let mut entries = Vec::with_capacity(items.len());
                for it in items {
                    let key: Str = match &it.key {
                        ObjectKey::Ident(id) => id.name.clone(),
                        ObjectKey::Expr(k) => match &k.kind {
                            ExprKind::Template(t) => Str::from(literal_template(t)?),
                            _ => return None,
                        },
                    };
                    entries.push((key, self.const_value(&it.value)?));
                }
                Some(Value::object(entries))
            }
            _ => None,
        }
    }

    // ---- traversals ----

    /// A scope traversal (`a.b[0]`) or a relative one (`f(x).b`), as hcl's parser builds them.
    fn traversal(&mut self, e: &Expr, scope: &dyn Scope) {
        let (base, steps) = self.chain(e);
        match &base.kind {
            ExprKind::Variable(id) => self.load_var(id, e.span, scope),
            _ => self.expr(base, scope),
        }
        for step in steps {
            match step {
                Step::Attr(id, span) => {
                    let name = self.name(&id.name);
                    let site = self.site(Site {
                        a: span,
                        whole: e.span,
                        ..Site::default()
                    });
                    self.emit(Op::Attr { name, site }, span);
                }
                Step::Index(key, span) => {
                    let key = self.konst(key);
                    let site = self.site(Site {
                        a: span,
                        whole: e.span,
                        ..Site::default()
                    });
                    self.emit(Op::IndexConst { key, site }, span);
                }
            }
        }
    }

    /// Split a traversal into its base expression and its steps (root first).
    fn chain<'a>(&self, mut e: &'a Expr) -> (&'a Expr, Vec<Step<'a>>) {
        let mut steps = Vec::new();
        loop {
            match &e.kind {
                ExprKind::GetAttr { obj, name } => {
                    let dot =
                        self.find_char(obj.span.file, obj.span.end, name.span.start.byte, &['.']);
                    let span = match dot {
                        Some(p) => Span::new(name.span.file, p, name.span.end),
                        None => name.span,
                    };
                    steps.push(Step::Attr(name, span));
                    e = obj;
                }
                ExprKind::Index { obj, key, legacy } if *legacy || is_literal_key(key) => {
                    let Some(k) = self.const_value(key) else {
                        break;
                    };
                    let span = if *legacy {
                        match self.find_char(
                            obj.span.file,
                            obj.span.end,
                            key.span.start.byte,
                            &['.'],
                        ) {
                            Some(p) => Span::new(e.span.file, p, e.span.end),
                            None => key.span,
                        }
                    } else {
                        self.bracket_range(obj, key, e.span)
                    };
                    steps.push(Step::Index(k, span));
                    e = obj;
                }
                _ => break,
            }
        }
        steps.reverse();
        (e, steps)
    }

    fn load_var(&mut self, id: &ast::Ident, trav: Span, scope: &dyn Scope) {
        if let Some(&(_, t)) = self.locals.iter().rev().find(|(n, _)| **n == *id.name) {
            self.emit(Op::Temp(t), id.span);
            return;
        }
        if let Some(slot) = scope.resolve(&id.name) {
            self.emit(Op::Slot(slot), id.span);
            return;
        }
        let mut names: Vec<Arc<str>> = scope.visible_names();
        names.extend(
            self.locals
                .iter()
                .take(crate::text::suggest::MAX_CANDIDATES + 1)
                .map(|(n, _)| n.clone()),
        );
        let suggestion = match suggest(&id.name, closest_first(&id.name, &mut names)) {
            Some(s) => format!(" Did you mean {}?", crate::text::quote::go_quote(s)),
            None => String::new(),
        };
        let d = Diagnostic::error(
            "Unknown variable",
            format!(
                "There is no variable named {}.{suggestion}",
                crate::text::quote::go_quote(&id.name)
            ),
            id.span,
        )
        .with_expression(trav);
        self.fail(d, id.span);
    }

    // ---- conditionals ----

    fn conditional(
        &mut self,
        cond: &Expr,
        then: Branch<'_>,
        otherwise: Branch<'_>,
        whole: Span,
        scope: &dyn Scope,
    ) {
        let site = self.site(Site {
            a: cond.span,
            b: then.span(),
            c: otherwise.span(),
            whole,
        });
        self.emit(Op::Mark, whole);
        self.expr(cond, scope);
        self.emit(Op::CondSelect, whole);
        self.emit(Op::BranchBegin(0), then.span());
        self.branch(then, scope);
        self.emit(Op::BranchEnd, then.span());
        self.emit(Op::BranchBegin(1), otherwise.span());
        self.branch(otherwise, scope);
        self.emit(Op::BranchEnd, otherwise.span());
        self.emit(Op::CondMerge { site }, whole);
    }

    // ---- templates ----

    fn template(&mut self, t: &Template, whole: Span, scope: &dyn Scope) {
        if let Some(s) = literal_template(t) {
            let k = self.konst(Value::string(s));
            self.emit(Op::Const(k), whole);
            return;
        }
        let mut parts = Vec::with_capacity(t.parts.len());
        for p in &t.parts {
            match p {
                TemplatePart::Literal { text, span } => {
                    let k = self.konst(Value::string(text.clone()));
                    self.emit(Op::Const(k), *span);
                    parts.push(None);
                }
                TemplatePart::Interp(e) => {
                    self.expr(e, scope);
                    parts.push(Some(e.span));
                }
                TemplatePart::If {
                    cond,
                    then,
                    otherwise,
                    span,
                } => {
                    let other = match otherwise {
                        Some(o) => Branch::Tmpl(o, *span),
                        None => Branch::Empty(*span),
                    };
                    self.conditional(cond, Branch::Tmpl(then, *span), other, *span, scope);
                    parts.push(Some(*span));
                }
                TemplatePart::For {
                    key_var,
                    value_var,
                    collection,
                    body,
                    span,
                } => {
                    self.for_expr(
                        ForParts {
                            key_var: key_var.as_ref(),
                            value_var,
                            coll: collection,
                            key: None,
                            value: Branch::Tmpl(body, *span),
                            cond: None,
                            group: false,
                            whole: *span,
                        },
                        scope,
                    );
                    let site = self.site(Site {
                        whole: *span,
                        ..Site::default()
                    });
                    self.emit(Op::TemplateJoin { site }, *span);
                    parts.push(Some(*span));
                }
            }
        }
        self.prog.templates.push(TemplateSite { parts, whole });
        let site = (self.prog.templates.len() - 1) as u32;
        self.emit(
            Op::Template {
                n: t.parts.len() as u32,
                site,
            },
            whole,
        );
    }

    // ---- objects ----

    fn object(&mut self, items: &[ast::ObjectItem], whole: Span, scope: &dyn Scope) {
        // Constant keys (names, keywords, literal strings) can neither fail nor need a
        // conversion: only the values are evaluated, in source order.
        let const_keys: Option<Vec<Str>> = items.iter().map(|it| const_key(&it.key)).collect();
        if let Some(keys) = const_keys {
            for it in items {
                self.expr(&it.value, scope);
            }
            self.prog.shapes.push(ObjShape::new(keys));
            let shape = (self.prog.shapes.len() - 1) as u32;
            self.emit(Op::MakeObjectConst(shape), whole);
            return;
        }
        for it in items {
            let key_is_expr = match &it.key {
                ObjectKey::Ident(id) => {
                    let k = self.konst(Value::String(id.name.clone()));
                    self.emit(Op::Const(k), id.span);
                    false
                }
                ObjectKey::Expr(k) => {
                    if let Some(word) = keyword_key(k) {
                        let c = self.konst(Value::String(word));
                        self.emit(Op::Const(c), k.span);
                        false
                    } else {
                        self.emit(Op::Mark, k.span);
                        if self.is_multi_step_scope_traversal(k) {
                            self.fail(
                                Diagnostic::error(
                                    "Ambiguous attribute key",
                                    "If this expression is intended to be a reference, wrap it in parentheses. If it's instead intended as a literal name containing periods, wrap it in quotes to create a string literal.",
                                    k.span,
                                ),
                                k.span,
                            );
                        } else {
                            self.expr(k, scope);
                        }
                        self.emit(Op::KeyDone, k.span);
                        true
                    }
                }
            };
            self.expr(&it.value, scope);
            if key_is_expr {
                let site = self.site(Site {
                    a: it.key.span(),
                    b: it.value.span,
                    ..Site::default()
                });
                self.emit(Op::ObjItem { site }, it.key.span());
            }
        }
        self.emit(Op::MakeObject(items.len() as u32), whole);
    }

    fn is_multi_step_scope_traversal(&self, e: &Expr) -> bool {
        match &e.kind {
            ExprKind::GetAttr { .. } | ExprKind::Index { .. } => {
                let (base, steps) = self.chain(e);
                !steps.is_empty() && matches!(base.kind, ExprKind::Variable(_))
            }
            _ => false,
        }
    }

    // ---- for expressions ----

    fn for_expr(&mut self, f: ForParts<'_>, scope: &dyn Scope) {
        let site = self.site(Site {
            a: f.coll.span,
            b: f.cond.map(|c| c.span).unwrap_or(f.whole),
            c: f.key.map(|k| k.span).unwrap_or(f.whole),
            whole: f.whole,
        });
        self.expr(f.coll, scope);
        let saved_locals = self.locals.len();
        let saved_temps = self.temps_next;
        let key_temp = self.alloc_temp();
        let val_temp = self.alloc_temp();
        if let Some(k) = f.key_var {
            self.locals.push((k.name.clone(), key_temp));
        }
        self.locals.push((f.value_var.name.clone(), val_temp));
        let begin = self.emit(
            Op::ForBegin {
                site,
                end: 0,
                key_temp,
                val_temp,
                object: f.key.is_some(),
                group: f.group,
            },
            f.whole,
        );
        let mut pre = None;
        if let Some(c) = f.cond {
            self.emit(Op::Mark, c.span);
            self.expr(c, scope);
            pre = Some(self.emit(Op::ForPreCheck { site, end: 0 }, c.span));
        }
        let top = self.here();
        let next = self.emit(Op::ForNext { exit: 0 }, f.whole);
        if let Some(c) = f.cond {
            self.expr(c, scope);
            self.emit(Op::ForFilter { site, next: top }, c.span);
        }
        if let Some(k) = f.key {
            self.expr(k, scope);
            self.emit(Op::ForKey { site, next: top }, k.span);
        }
        self.branch(f.value, scope);
        self.emit(Op::ForPush { site }, f.value.span());
        self.emit(Op::Jump(top), f.whole);
        self.patch(next);
        self.emit(Op::ForEnd, f.whole);
        self.patch(begin);
        if let Some(p) = pre {
            self.patch(p);
        }
        self.locals.truncate(saved_locals);
        self.temps_next = saved_temps;
    }

    // ---- splats ----

    fn splat(&mut self, source: &Expr, each: &Expr, whole: Span, scope: &dyn Scope) {
        let marker = self.splat_marker(source, each, whole);
        let site = self.site(Site {
            a: source.span,
            b: marker,
            whole,
            ..Site::default()
        });
        self.emit(Op::Mark, whole);
        self.expr(source, scope);
        let begin = self.emit(Op::SplatBegin { site, end: 0 }, whole);
        let saved_temps = self.temps_next;
        let t = self.alloc_temp();
        self.splat_temps.push(t);
        let top = self.here();
        let next = self.emit(Op::SplatNext { temp: t, exit: 0 }, whole);
        self.emit(Op::Mark, each.span);
        self.expr(each, scope);
        self.emit(Op::SplatPush { next: top }, each.span);
        self.patch(next);
        self.emit(Op::SplatEnd, whole);
        self.patch(begin);
        self.splat_temps.pop();
        self.temps_next = saved_temps;
    }

    fn splat_marker(&self, source: &Expr, each: &Expr, whole: Span) -> Span {
        let limit = whole.end.byte;
        let Some(open) = self.find_char(whole.file, source.span.end, limit, &['.', '[']) else {
            return whole;
        };
        let close_char = if self.char_at(whole.file, open) == Some('[') {
            ']'
        } else {
            '*'
        };
        let _ = each;
        match self.find_char(whole.file, open, limit, &[close_char]) {
            Some(p) => Span::new(whole.file, open, advance(p, 1)),
            None => whole,
        }
    }

    // ---- calls ----

    #[allow(clippy::too_many_arguments)]
    fn call(
        &mut self,
        e: &Expr,
        name: &ast::Ident,
        args: &[Expr],
        expand_final: bool,
        open_paren: Span,
        close_paren: Span,
        scope: &dyn Scope,
    ) {
        let callee = match &*name.name {
            "try" => Some(Callee::Try),
            "can" => Some(Callee::Can),
            "invoke" => Some(Callee::Invoke),
            n => builtins::lookup(n).map(Callee::Builtin),
        };
        let start = Span::new(name.span.file, name.span.start, open_paren.end);
        let mut site = CallSite {
            callee: Callee::Try,
            name: name.name.clone(),
            start,
            range: e.span,
            close_paren,
            arg_starts: args.iter().map(|a| self.start_range(a)).collect(),
            arg_ranges: args.iter().map(|a| a.span).collect(),
            expand: if expand_final {
                args.last().map(|a| a.span)
            } else {
                None
            },
        };
        let Some(callee) = callee else {
            let d = Diagnostic::error(
                "Call to unknown function",
                builtins::unknown_function_detail(&name.name),
                name.span,
            )
            .with_context(e.span)
            .with_expression(e.span);
            self.fail(d, e.span);
            return;
        };
        site.callee = callee;
        let (params, var_param): (Vec<&str>, bool) = match callee {
            Callee::Builtin(id) => {
                let def = builtins::get(id);
                (
                    def.params.iter().map(|p| p.name).collect(),
                    def.var_param.is_some(),
                )
            }
            Callee::Invoke => (vec!["name", "args"], false),
            Callee::Try => (vec![], true),
            Callee::Can => (vec!["expression"], false),
        };
        self.prog.calls.push(site);
        let call = (self.prog.calls.len() - 1) as u32;

        if expand_final && matches!(callee, Callee::Builtin(_)) {
            self.emit(Op::Mark, e.span);
            if let Some(last) = args.last() {
                self.expr(last, scope);
            }
            let begin = self.emit(Op::ExpandBegin { call, end: 0 }, e.span);
            let nstatic = args.len().saturating_sub(1);
            for (i, a) in args[..nstatic].iter().enumerate() {
                self.expr(a, scope);
                self.emit(
                    Op::ConvArg {
                        call,
                        arg: i as u32,
                    },
                    a.span,
                );
            }
            self.emit(
                Op::CallExpanded {
                    call,
                    nstatic: nstatic as u32,
                },
                e.span,
            );
            self.patch(begin);
            return;
        }

        // Arity, known statically without `...`.
        if args.len() < params.len() {
            let qual = if var_param { " at least" } else { "" };
            let d = Diagnostic::error(
                "Not enough function arguments",
                format!(
                    "Function {} expects{qual} {} argument(s). Missing value for {}.",
                    crate::text::quote::go_quote(&name.name),
                    params.len(),
                    crate::text::quote::go_quote(params[args.len()])
                ),
                close_paren,
            )
            .with_context(e.span)
            .with_expression(e.span);
            self.fail(d, e.span);
            return;
        }
        if !var_param && args.len() > params.len() {
            let d = Diagnostic::error(
                "Too many function arguments",
                format!(
                    "Function {} expects only {} argument(s).",
                    crate::text::quote::go_quote(&name.name),
                    params.len()
                ),
                self.start_range(&args[params.len()]),
            )
            .with_context(e.span)
            .with_expression(e.span);
            self.fail(d, e.span);
            return;
        }

        match callee {
            Callee::Builtin(_) => {
                self.emit(Op::Mark, e.span);
                for (i, a) in args.iter().enumerate() {
                    self.expr(a, scope);
                    self.emit(
                        Op::ConvArg {
                            call,
                            arg: i as u32,
                        },
                        a.span,
                    );
                }
                self.emit(
                    Op::Call {
                        call,
                        argc: args.len() as u32,
                    },
                    e.span,
                );
            }
            Callee::Invoke => {
                let Some(fname) = static_string(&args[0]) else {
                    let d = Diagnostic::error(
                        "Error in function call",
                        "Call to function \"invoke\" failed: user function invocation is not via a static string.",
                        start,
                    )
                    .with_context(e.span)
                    .with_expression(e.span);
                    self.fail(d, e.span);
                    return;
                };
                let func = self.function(&fname).map(|f| f.0).unwrap_or(u32::MAX);
                self.emit(Op::Mark, e.span);
                let k = self.konst(Value::String(fname));
                self.emit(Op::Const(k), args[0].span);
                self.expr(&args[1], scope);
                self.emit(Op::Invoke { call, func }, e.span);
            }
            Callee::Try | Callee::Can => {
                let can = callee == Callee::Can;
                self.emit(Op::TryBegin, e.span);
                let mut ends = Vec::new();
                for a in args {
                    let travs = traversals(a);
                    if !travs.is_empty() {
                        for t in travs {
                            self.emit(Op::Mark, t.span);
                            self.expr(t, scope);
                            self.emit(Op::Probe, t.span);
                        }
                        ends.push(self.emit(Op::TryDepCheck { end: 0, can }, a.span));
                    }
                    self.emit(Op::Mark, a.span);
                    self.expr(a, scope);
                    ends.push(self.emit(Op::TryArg { end: 0, can }, a.span));
                }
                self.emit(Op::TryFail { call, can }, e.span);
                for at in ends {
                    self.patch(at);
                }
            }
        }
    }

    // ---- source scanning for ranges the AST does not keep ----

    fn char_at(&self, file: FileId, p: Pos) -> Option<char> {
        let f = self.prog.sources.get(file)?;
        f.text.get(p.byte as usize..)?.chars().next()
    }

    /// First position at or after `from` (and before byte `limit`) holding one of `chars`.
    fn find_char(&self, file: FileId, from: Pos, limit: u32, chars: &[char]) -> Option<Pos> {
        let f = self.prog.sources.get(file)?;
        let text = f.text.get(from.byte as usize..limit as usize)?;
        let mut p = from;
        for c in text.chars() {
            if chars.contains(&c) {
                return Some(p);
            }
            if c == '\n' {
                p.line += 1;
                p.col = 1;
            } else {
                p.col += 1;
            }
            p.byte += c.len_utf8() as u32;
        }
        None
    }

    /// hcl's `StartRange()`, with the source at hand for the ranges the AST lacks: an index
    /// expression starts at its `[`, a splat at its marker.
    fn start_range(&self, e: &Expr) -> Span {
        match &e.kind {
            ExprKind::Index { obj, key, legacy } if !*legacy && !is_literal_key(key) => {
                match self.find_char(obj.span.file, obj.span.end, key.span.start.byte, &['[']) {
                    Some(p) => Span::new(e.span.file, p, advance(p, 1)),
                    None => start_range_of(e),
                }
            }
            ExprKind::Splat { source, each, .. } => self.splat_marker(source, each, e.span),
            ExprKind::Paren(inner) => self.start_range(inner),
            ExprKind::Binary { lhs, .. } => self.start_range(lhs),
            ExprKind::Conditional { cond, .. } => self.start_range(cond),
            _ => start_range_of(e),
        }
    }

    /// `[key]` of an index expression.
    fn bracket_range(&self, obj: &Expr, key: &Expr, whole: Span) -> Span {
        match self.find_char(obj.span.file, obj.span.end, key.span.start.byte, &['[']) {
            Some(p) => Span::new(whole.file, p, whole.end),
            None => Span::new(whole.file, key.span.start, whole.end),
        }
    }
}

/// One column/byte further on the same line.
fn advance(p: Pos, n: u32) -> Pos {
    Pos {
        byte: p.byte + n,
        line: p.line,
        col: p.col + n,
    }
}

/// A one-character span at the start of `s` (an opening bracket or operator symbol).
fn first_char(s: Span) -> Span {
    Span::new(s.file, s.start, advance(s.start, 1).min_end(s.end))
}

trait MinEnd {
    fn min_end(self, end: Pos) -> Pos;
}

impl MinEnd for Pos {
    fn min_end(self, end: Pos) -> Pos {
        if self.byte > end.byte { end } else { self }
    }
}

/// hcl's `StartRange()` of an expression: where diagnostics about an argument point.
pub fn start_range(e: &Expr) -> Span {
    start_range_of(e)
}

fn start_range_of(e: &Expr) -> Span {
    match &e.kind {
        ExprKind::Template(t) => match t.parts.first() {
            Some(TemplatePart::Literal { span, .. }) => *span,
            Some(TemplatePart::Interp(inner)) => start_range_of(inner),
            Some(TemplatePart::If { span, .. }) | Some(TemplatePart::For { span, .. }) => *span,
            None => e.span,
        },
        ExprKind::Call {
            name, open_paren, ..
        } => Span::new(name.span.file, name.span.start, open_paren.end),
        ExprKind::Tuple(_) | ExprKind::Object(_) | ExprKind::For(_) | ExprKind::Unary { .. } => {
            first_char(e.span)
        }
        ExprKind::Binary { lhs, .. } => start_range_of(lhs),
        ExprKind::Conditional { cond, .. } => start_range_of(cond),
        ExprKind::Paren(inner) => start_range_of(inner),
        ExprKind::Index { key, legacy, .. } if !*legacy && !is_literal_key(key) => {
            // hcl's IndexExpr.StartRange is its open bracket; without the source at hand the
            // key's start is the nearest we know (one column after the bracket).
            let s = key.span.start;
            let open = Pos {
                byte: s.byte.saturating_sub(1),
                line: s.line,
                col: s.col.saturating_sub(1).max(1),
            };
            Span::new(e.span.file, open, s)
        }
        _ => e.span,
    }
}

/// The key of an object item when it is a constant: a name, a keyword, or a literal string
/// (as its template evaluates it: in normal form C).
fn const_key(key: &ObjectKey) -> Option<Str> {
    match key {
        ObjectKey::Ident(id) => Some(id.name.clone()),
        ObjectKey::Expr(k) => keyword_key(k).or_else(|| match &k.kind {
            ExprKind::Template(t) => match Value::string(literal_template(t)?) {
                Value::String(s) => Some(s),
                _ => None,
            },
            _ => None,
        }),
    }
}

/// `null`, `true`, `false` written as an object key are literal names (hcl's ExprAsKeyword).
/// So is a lone identifier.
fn keyword_key(k: &Expr) -> Option<Str> {
    match &k.kind {
        ExprKind::Null => Some(Str::from("null")),
        ExprKind::Bool(true) => Some(Str::from("true")),
        ExprKind::Bool(false) => Some(Str::from("false")),
        ExprKind::Variable(id) => Some(id.name.clone()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct OneVar;
    impl Scope for OneVar {
        fn resolve(&self, name: &str) -> Option<u32> {
            (name == "x").then_some(0)
        }
        fn visible_names(&self) -> Vec<Arc<str>> {
            vec![Arc::from("x")]
        }
    }

    /// Compiles `src` and evaluates it with `x` bound to `x`.
    fn run(src: &str, x: Value) -> (Program, ChunkId, Value, Vec<Diagnostic>) {
        let mut sm = SourceMap::new();
        let f = sm.add("t.hcl", src);
        let e = crate::syntax::parser::parse_expression(&sm, f).expect("parses");
        let mut b = ProgramBuilder::new(Arc::new(sm));
        let chunk = b.compile_expr(&e, &OneVar);
        let p = b.finish();
        let mut d = Vec::new();
        let v = crate::bytecode::vm::Vm::new(&p, crate::bytecode::vm::Limits::default())
            .eval(chunk, &[x], &mut d)
            .expect("within budget");
        (p, chunk, v, d)
    }

    #[test]
    fn constant_keys_build_a_sorted_object_and_the_last_duplicate_wins() {
        let shape = ObjShape::new(vec!["b".into(), "a".into(), "b".into(), "c".into()]);
        assert_eq!(shape.values, 4);
        let keys: Vec<(&str, u32)> = shape.keys.iter().map(|(k, i)| (&**k, *i)).collect();
        assert_eq!(keys, [("a", 1), ("b", 2), ("c", 3)]);

        let src = r#"{ z = x, "a-b" = x + 1, null = 2, z = x * 10, "e\u0301" = 0 }"#;
        let (p, chunk, v, d) = run(src, Value::int(3));
        assert!(d.is_empty(), "{d:?}");
        assert!(crate::bytecode::disasm::disassemble(&p, chunk).contains("make_object_const"));
        let expected = Value::object(vec![
            ("z".into(), Value::int(30)),
            ("a-b".into(), Value::int(4)),
            ("null".into(), Value::int(2)),
            ("\u{e9}".into(), Value::int(0)),
        ]);
        let got = v.as_fields().expect("an object");
        assert_eq!(got.len(), 4);
        for (k, want) in expected.as_fields().unwrap_or(&[]) {
            assert!(v.get_attr(k).is_some_and(|g| g.raw_equals(want)), "{k}");
        }
    }

    #[test]
    fn a_key_expression_still_takes_the_general_path() {
        let (p, chunk, v, d) = run(r#"{ (x) = 1, b = 2 }"#, Value::string("a"));
        assert!(d.is_empty(), "{d:?}");
        assert!(!crate::bytecode::disasm::disassemble(&p, chunk).contains("make_object_const"));
        let expected = Value::object(vec![
            ("a".into(), Value::int(1)),
            ("b".into(), Value::int(2)),
        ]);
        assert!(v.raw_equals(&expected));
    }
}
