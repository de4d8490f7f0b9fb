//! The expression compiler: lowers each hcl expression ([`ast::Expr`]) to a flat chunk of
//! bytecode ([`Code`]) for the [`crate::bytecode::vm`]. Names are resolved here, once: root
//! variables become frame slots (through the caller's [`Scope`]), `for` and splat variables
//! become temporaries, built-in functions become [`crate::builtins::FuncId`]s and
//! `invoke("name", ...)` becomes a [`FnId`].
//!
//! The compiler also rebuilds what hcl's parser knows and our AST leaves implicit: which
//! `a.b[0].c` chains are hcl traversals (their errors carry the traversal's ranges), the
//! ranges of `.name` and `[key]` steps, and each expression's `StartRange`, so that every
//! diagnostic the VM produces has hcl's subject, context and expression ranges.

use crate::builtins;
use crate::bytecode::code::{
    ArgBinding, CallSite, Callee, ChunkId, ChunkInfo, Code, CondSite, FnId, ForSite, ItemSite,
    JoinSite, ObjShape, Op, OperatorSite, PathStep, Piece, SiteId, SiteKind, SplatSite, StepSite,
    TemplateSite, UnarySite, UserFn,
};
use crate::syntax::ast::{
    self, BinaryOp, Expr, ExprKind, ObjectKey, Template, TemplatePart, UnaryOp,
};
use crate::syntax::diag::Diagnostic;
use crate::syntax::span::{FileId, Pos, SourceMap, Span};
use crate::syntax::visit::{is_literal_key, literal_template, static_string, traversals};
use crate::text::suggest::{closest_first, suggest};
use crate::value::number::Number;
use crate::value::{Str, Type, Value};
use std::cell::Cell;
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::AtomicU8;

/// Name resolution for root variables, done at compile time by the caller (the IR).
pub trait Scope {
    /// The frame slot of a root variable (`req`, `self`, `each`, a local, a function arg).
    fn resolve(&self, name: &str) -> Option<u32>;
    /// Every name visible here, for hcl's "Did you mean" suggestions (more than
    /// [`crate::text::suggest::MAX_CANDIDATES`] need not be listed: none is suggested).
    fn visible_names(&self) -> Vec<Str>;
    /// The frame slot of one attribute of a root variable that has a slot per attribute
    /// (the IR gives `each.value` and `self.resource` one), so that a reference through
    /// it does not need the variable's object.
    fn resolve_field(&self, _name: &str, _attr: &str) -> Option<u32> {
        None
    }
}

/// Deepest expression nesting the compiler accepts (hostile input must not overflow the stack).
const MAX_NESTING: u32 = 400;

/// How deep in an expression [`CodeBuilder::worth_remembering`] looks: each look walks
/// the expression below, so compiling costs at most this many walks of it.
const MEMO_DEPTH: u32 = 8;

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

/// The pieces of a function call.
struct CallParts<'a> {
    name: &'a ast::Ident,
    args: &'a [Expr],
    /// The final argument is expanded (`f(xs...)`).
    expand_final: bool,
    open_paren: Span,
    close_paren: Span,
    whole: Span,
}

/// One step of an hcl traversal.
enum Step<'a> {
    Attr(&'a ast::Ident, Span),
    Index(Value, Span),
}

/// Accumulates compiled chunks, constants, interned names and user functions.
pub struct CodeBuilder {
    out: Code,
    name_ids: HashMap<Str, u32, ahash::RandomState>,
    fn_ids: HashMap<Str, FnId, ahash::RandomState>,
    /// `for`/splat variables in scope in the chunk being compiled (innermost last).
    locals: Vec<(Str, u32)>,
    splat_temps: Vec<u32>,
    temps_next: u32,
    temps_max: u32,
    depth: u32,
    /// See [`CodeBuilder::set_invariant_below`].
    invariant_below: Option<u32>,
    /// Compiling a remembered expression (its parts are not remembered again).
    in_memo: bool,
    /// The position after a `Mark` just emitted, while nothing has taken a position since:
    /// a load emitted there carries it ([`CodeBuilder::emit`]).
    fusable_mark: Cell<Option<usize>>,
}

impl CodeBuilder {
    pub fn new(sources: Arc<SourceMap>) -> Self {
        // Room for a program of this size up front (about one instruction per 8 source
        // bytes), so that a cold compile does not regrow the lists step by step.
        let bytes: usize = sources.files.iter().map(|f| f.text.len()).sum();
        let ops = (bytes / 8).clamp(16, 1 << 16);
        CodeBuilder {
            out: Code {
                code: Vec::with_capacity(ops),
                spans: Vec::with_capacity(ops),
                chunks: Vec::new(),
                consts: Vec::with_capacity(ops / 8),
                names: Vec::with_capacity(ops / 8),
                sites: Vec::with_capacity(ops / 4),
                calls: Vec::new(),
                templates: Vec::new(),
                shapes: Vec::new(),
                bindings: Vec::new(),
                paths: Vec::new(),
                diags: Vec::new(),
                functions: Vec::new(),
                memos: 0,
                sources,
            },
            name_ids: HashMap::default(),
            fn_ids: HashMap::default(),
            fusable_mark: Cell::new(None),
            locals: Vec::new(),
            splat_temps: Vec::new(),
            temps_next: 0,
            temps_max: 0,
            depth: 0,
            invariant_below: None,
            in_memo: false,
        }
    }

    /// While compiling a collection's name and template: the frame slots below `slot`
    /// hold what every member shares (`req`, locals outside the template, the
    /// collection's `self`), so an expression that reads only those is remembered
    /// (`MemoBegin`) instead of computed again for each member. `None` after.
    pub fn set_invariant_below(&mut self, slot: Option<u32>) {
        self.invariant_below = slot;
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
    pub fn declare_function(&mut self, name: &str, args: Vec<(Str, Option<ChunkId>)>) -> FnId {
        let id = FnId(self.out.functions.len() as u32);
        let frame_size = args.len() as u32;
        self.out.functions.push(UserFn {
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
        if let Some(f) = self.out.functions.get_mut(id.0 as usize) {
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
    pub fn finish(self) -> Code {
        self.out
    }

    // ---- chunk bookkeeping ----

    fn begin_chunk(&mut self) -> u32 {
        self.fusable_mark.set(None);
        self.locals.clear();
        self.splat_temps.clear();
        self.temps_next = 0;
        self.temps_max = 0;
        self.depth = 0;
        self.out.code.len() as u32
    }

    fn end_chunk(&mut self, start: u32, span: Span) -> ChunkId {
        self.emit(Op::Return, span);
        let id = ChunkId(self.out.chunks.len() as u32);
        self.out.chunks.push(ChunkInfo {
            start,
            temps: self.temps_max,
        });
        debug_assert_eq!(
            crate::bytecode::verify::verify(&self.out, id),
            Ok(()),
            "the compiler produced inconsistent code"
        );
        id
    }

    fn emit(&mut self, mut op: Op, span: Span) -> u32 {
        // A load straight after a `Mark` takes it over (`Op::Const`'s `mark`), unless a
        // position was taken between the two: a jump could land on the load, past the
        // mark, or code read from there (`slots_read_since`) would miss it.
        if self.fusable_mark.take() == Some(self.out.code.len())
            && let Some(mark) = op.mark_mut()
        {
            *mark = true;
            self.out.code.pop();
            self.out.spans.pop();
        }
        self.out.code.push(op);
        self.out.spans.push(span);
        let at = self.out.code.len();
        if op == Op::Mark {
            self.fusable_mark.set(Some(at));
        }
        (at - 1) as u32
    }

    fn here(&self) -> u32 {
        self.fusable_mark.set(None);
        self.out.code.len() as u32
    }

    /// Where the next instruction goes: with [`CodeBuilder::slots_read_since`], what the
    /// code compiled in between reads of the frame.
    pub fn code_len(&self) -> usize {
        self.fusable_mark.set(None);
        self.out.code.len()
    }

    /// The frame slots read (`Slot`, `SlotPath`) by the instructions from `at` on.
    pub fn slots_read_since(&self, at: usize) -> impl Iterator<Item = u32> + '_ {
        self.out
            .code
            .get(at..)
            .unwrap_or(&[])
            .iter()
            .filter_map(|op| match op {
                Op::Slot { slot: s, .. } | Op::SlotPath { slot: s, .. } => Some(*s),
                _ => None,
            })
    }

    /// Point the jump operand of the instruction at `at` to the current position.
    fn patch(&mut self, at: u32) {
        let target = self.here();
        if let Some(
            Op::ForBegin { end: t, .. }
            | Op::ForPreCheck { end: t, .. }
            | Op::ForNext { exit: t }
            | Op::SplatBegin { end: t, .. }
            | Op::SplatNext { exit: t, .. }
            | Op::ExpandBegin { end: t, .. }
            | Op::TryDepCheck { end: t, .. }
            | Op::TryArg { end: t, .. }
            | Op::TryTraversal { end: t, .. }
            | Op::MemoBegin { end: t, .. },
        ) = self.out.code.get_mut(at as usize)
        {
            *t = target;
        } else {
            debug_assert!(false, "patch of instruction {at}, which does not jump");
        }
    }

    fn konst(&mut self, v: Value) -> u32 {
        // A long constant string is interned: every evaluation clones it onto the stack
        // and drops it.
        let v = match v {
            Value::String(s) => Value::String(s.intern()),
            v => v,
        };
        self.out.consts.push(v);
        (self.out.consts.len() - 1) as u32
    }

    fn name(&mut self, n: &str) -> u32 {
        if let Some(&i) = self.name_ids.get(n) {
            return i;
        }
        let s = Str::from(n);
        self.out.names.push(s.clone());
        let i = (self.out.names.len() - 1) as u32;
        self.name_ids.insert(s, i);
        i
    }

    fn site<T: SiteKind>(&mut self, s: T) -> SiteId<T> {
        self.out.sites.push(s.wrap());
        SiteId::new((self.out.sites.len() - 1) as u32)
    }

    fn fail(&mut self, d: Diagnostic, span: Span) {
        self.out.diags.push(d);
        let i = (self.out.diags.len() - 1) as u32;
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
            self.emit(
                Op::Const {
                    index: k,
                    mark: false,
                },
                e.span,
            );
            return;
        }
        if self.worth_remembering(e, scope) {
            let memo = self.out.memos;
            self.out.memos += 1;
            let begin = self.emit(Op::MemoBegin { memo, end: 0 }, e.span);
            self.in_memo = true;
            self.expr_inner(e, scope);
            self.in_memo = false;
            self.emit(Op::MemoEnd { memo }, e.span);
            self.patch(begin);
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
                    let site = self.site(StepSite {
                        step: bracket,
                        whole: e.span,
                    });
                    self.emit(Op::Index { site }, e.span);
                }
            }
            ExprKind::SplatItem => {
                if let Some(&t) = self.splat_temps.last() {
                    self.emit(
                        Op::Temp {
                            temp: t,
                            mark: false,
                        },
                        e.span,
                    );
                } else {
                    let k = self.konst(Value::Unknown(Type::Dynamic));
                    self.emit(
                        Op::Const {
                            index: k,
                            mark: false,
                        },
                        e.span,
                    );
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
                CallParts {
                    name,
                    args,
                    expand_final: *expand_final,
                    open_paren: *open_paren,
                    close_paren: *close_paren,
                    whole: e.span,
                },
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
                let site = self.site(UnarySite {
                    operand: operand.span,
                    whole: e.span,
                });
                self.emit(Op::Unary { op: *op, site }, e.span);
            }
            ExprKind::Binary { op, lhs, rhs } => {
                let site = self.site(OperatorSite {
                    lhs: lhs.span,
                    rhs: rhs.span,
                    whole: e.span,
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
                self.emit(
                    Op::Const {
                        index: k,
                        mark: false,
                    },
                    span,
                );
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

    /// Whether `e`, inside a collection's template, is worth computing once for all the
    /// members: an expression that builds something (a call, a template, a `for`, an
    /// object or tuple) and reads only variables every member shares. Looked for near
    /// the top of the expression only ([`MEMO_DEPTH`]), so that compiling stays linear.
    fn worth_remembering(&self, e: &Expr, scope: &dyn Scope) -> bool {
        let Some(below) = self.invariant_below else {
            return false;
        };
        if self.in_memo || self.depth > MEMO_DEPTH {
            return false;
        }
        let builds = match &e.kind {
            ExprKind::Template(t) => literal_template(t).is_none(),
            ExprKind::Call { .. } | ExprKind::For(_) | ExprKind::Object(_) | ExprKind::Tuple(_) => {
                true
            }
            _ => false,
        };
        builds
            && crate::syntax::visit::variables(e).iter().all(|v| {
                !self.locals.iter().any(|(n, _)| **n == *v.name)
                    && scope.resolve(&v.name).is_some_and(|s| s < below)
            })
    }

    // ---- traversals ----

    /// A scope traversal (`a.b[0]`) or a relative one (`f(x).b`), as hcl's parser builds them.
    fn traversal(&mut self, e: &Expr, scope: &dyn Scope) {
        let (base, steps) = self.chain(e);
        let mut rest = &steps[..];
        match &base.kind {
            ExprKind::Variable(id) => {
                // `each.value.name`: from the slot of `each.value` when it has one.
                let mut root = self.frame_slot(id, scope);
                let mut from = 0;
                if root.is_some()
                    && let Some(Step::Attr(attr, _)) = steps.first()
                    && let Some(field) = scope.resolve_field(&id.name, &attr.name)
                {
                    root = Some(field);
                    from = 1;
                }
                let attrs = steps[from..]
                    .iter()
                    .take_while(|s| matches!(s, Step::Attr(..)))
                    .count();
                match root {
                    Some(slot) if attrs > 0 => {
                        let path = steps[from..from + attrs]
                            .iter()
                            .filter_map(|s| match s {
                                Step::Attr(id, span) => Some((*id, *span)),
                                Step::Index(..) => None,
                            })
                            .map(|(id, span)| {
                                let name = self.name(&id.name);
                                let key = self.out.names[name as usize].clone();
                                let site = self.site(StepSite {
                                    step: span,
                                    whole: e.span,
                                });
                                PathStep {
                                    name,
                                    key,
                                    site,
                                    hint: AtomicU8::new(0),
                                }
                            })
                            .collect();
                        self.out.paths.push(path);
                        let path = (self.out.paths.len() - 1) as u32;
                        self.emit(
                            Op::SlotPath {
                                slot,
                                path,
                                mark: false,
                            },
                            id.span,
                        );
                        rest = &steps[from + attrs..];
                    }
                    Some(slot) if from > 0 => {
                        self.emit(Op::Slot { slot, mark: false }, id.span);
                        rest = &steps[from..];
                    }
                    _ => self.load_var(id, e.span, scope),
                }
            }
            _ => self.expr(base, scope),
        }
        for step in rest {
            match step {
                Step::Attr(id, span) => {
                    let name = self.name(&id.name);
                    let site = self.site(StepSite {
                        step: *span,
                        whole: e.span,
                    });
                    self.emit(Op::Attr { name, site }, *span);
                }
                Step::Index(key, span) => {
                    let key = self.konst(key.clone());
                    let site = self.site(StepSite {
                        step: *span,
                        whole: e.span,
                    });
                    self.emit(Op::IndexConst { key, site }, *span);
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

    /// The frame slot a variable reads, unless a `for` or splat variable (a temporary)
    /// shadows it or it is unknown.
    fn frame_slot(&self, id: &ast::Ident, scope: &dyn Scope) -> Option<u32> {
        if self.locals.iter().any(|(n, _)| **n == *id.name) {
            return None;
        }
        scope.resolve(&id.name)
    }

    fn load_var(&mut self, id: &ast::Ident, trav: Span, scope: &dyn Scope) {
        if let Some(&(_, t)) = self.locals.iter().rev().find(|(n, _)| **n == *id.name) {
            self.emit(
                Op::Temp {
                    temp: t,
                    mark: false,
                },
                id.span,
            );
            return;
        }
        if let Some(slot) = scope.resolve(&id.name) {
            self.emit(Op::Slot { slot, mark: false }, id.span);
            return;
        }
        let mut names: Vec<Str> = scope.visible_names();
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
        let site = self.site(CondSite {
            cond: cond.span,
            then: then.span(),
            otherwise: otherwise.span(),
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
            self.emit(
                Op::Const {
                    index: k,
                    mark: false,
                },
                whole,
            );
            return;
        }
        let mut parts = Vec::with_capacity(t.parts.len());
        for p in &t.parts {
            match p {
                TemplatePart::Literal { text, .. } => parts.push(Piece::Text(text.clone())),
                TemplatePart::Interp(e) => {
                    self.expr(e, scope);
                    parts.push(Piece::Value(e.span));
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
                    parts.push(Piece::Value(*span));
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
                    let site = self.site(JoinSite { directive: *span });
                    self.emit(Op::TemplateJoin { site }, *span);
                    parts.push(Piece::Value(*span));
                }
            }
        }
        let site = TemplateSite::new(parts, whole);
        let n = site.values() as u32;
        self.out.templates.push(site);
        let site = (self.out.templates.len() - 1) as u32;
        self.emit(Op::Template { n, site }, whole);
    }

    // ---- objects ----

    fn object(&mut self, items: &[ast::ObjectItem], whole: Span, scope: &dyn Scope) {
        // Constant keys (names, keywords, literal strings) can neither fail nor need a
        // conversion: only the values are evaluated, in source order.
        if let Some(keys) = const_keys(items) {
            for it in items {
                self.expr(&it.value, scope);
            }
            self.out.shapes.push(ObjShape::new(keys));
            let shape = (self.out.shapes.len() - 1) as u32;
            self.emit(Op::MakeObjectConst(shape), whole);
            return;
        }
        for it in items {
            let key_is_expr = match &it.key {
                ObjectKey::Ident(id) => {
                    let k = self.konst(Value::String(id.name.clone()));
                    self.emit(
                        Op::Const {
                            index: k,
                            mark: false,
                        },
                        id.span,
                    );
                    false
                }
                ObjectKey::Expr(k) => {
                    if let Some(word) = keyword_key(k) {
                        let c = self.konst(Value::String(word));
                        self.emit(
                            Op::Const {
                                index: c,
                                mark: false,
                            },
                            k.span,
                        );
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
                let site = self.site(ItemSite {
                    key: it.key.span(),
                    value: it.value.span,
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
        let site = self.site(ForSite {
            coll: f.coll.span,
            cond: f.cond.map(|c| c.span).unwrap_or(f.whole),
            key: f.key.map(|k| k.span).unwrap_or(f.whole),
            whole: f.whole,
        });
        self.expr(f.coll, scope);
        let saved_locals = self.locals.len();
        let saved_temps = self.temps_next;
        // Without a key variable the key is not bound: its temporary is the value's.
        let key_temp = match f.key_var {
            Some(k) => {
                let t = self.alloc_temp();
                self.locals.push((k.name.clone(), t));
                t
            }
            None => self.temps_next,
        };
        let val_temp = self.alloc_temp();
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
        self.emit(Op::ForPush { site, next: top }, f.value.span());
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
        let site = self.site(SplatSite {
            source: source.span,
            marker,
            each: each.span,
            whole,
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

    /// A function call: the callee resolved (an unknown name is a diagnostic the chunk
    /// reports, as hcl does when it evaluates the call), the call site recorded, then the
    /// code of that kind of call.
    fn call(&mut self, c: CallParts<'_>, scope: &dyn Scope) {
        let name = &c.name.name;
        let callee = match &**name {
            "try" => Some(Callee::Try),
            "can" => Some(Callee::Can),
            "invoke" => Some(Callee::Invoke),
            n => builtins::lookup(n).map(Callee::Builtin),
        };
        let Some(callee) = callee else {
            let d = Diagnostic::error(
                "Call to unknown function",
                builtins::unknown_function_detail(name),
                c.name.span,
            )
            .with_context(c.whole)
            .with_expression(c.whole);
            self.fail(d, c.whole);
            return;
        };
        let start = Span::new(c.name.span.file, c.name.span.start, c.open_paren.end);
        self.out.calls.push(CallSite {
            callee,
            name: name.clone(),
            start,
            range: c.whole,
            close_paren: c.close_paren,
            arg_starts: c.args.iter().map(|a| self.start_range(a)).collect(),
            arg_ranges: c.args.iter().map(|a| a.span).collect(),
            expand: if c.expand_final {
                c.args.last().map(|a| a.span)
            } else {
                None
            },
        });
        let call = (self.out.calls.len() - 1) as u32;
        if c.expand_final && matches!(callee, Callee::Builtin(_)) {
            self.call_expanded(call, &c, scope);
            return;
        }
        if let Some(d) = self.arity_error(callee, &c) {
            self.fail(d.with_context(c.whole).with_expression(c.whole), c.whole);
            return;
        }
        match callee {
            Callee::Builtin(_) => self.call_builtin(call, &c, scope),
            Callee::Invoke => self.call_invoke(call, start, &c, scope),
            Callee::Try => self.call_try(call, false, &c, scope),
            Callee::Can => self.call_try(call, true, &c, scope),
        }
    }

    /// hcl's arity errors, known at compile time for a call without `...`.
    fn arity_error(&self, callee: Callee, c: &CallParts<'_>) -> Option<Diagnostic> {
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
        let quoted = crate::text::quote::go_quote(&c.name.name);
        let n = c.args.len();
        if n < params.len() {
            let qual = if var_param { " at least" } else { "" };
            return Some(Diagnostic::error(
                "Not enough function arguments",
                format!(
                    "Function {quoted} expects{qual} {} argument(s). Missing value for {}.",
                    params.len(),
                    crate::text::quote::go_quote(params[n])
                ),
                c.close_paren,
            ));
        }
        if !var_param && n > params.len() {
            return Some(Diagnostic::error(
                "Too many function arguments",
                format!(
                    "Function {quoted} expects only {} argument(s).",
                    params.len()
                ),
                self.start_range(&c.args[params.len()]),
            ));
        }
        None
    }

    /// A builtin call: each argument converted to its parameter's type, then the call.
    fn call_builtin(&mut self, call: u32, c: &CallParts<'_>, scope: &dyn Scope) {
        self.emit(Op::Mark, c.whole);
        self.args_converted(call, c.args, scope);
        let argc = c.args.len() as u32;
        self.emit(Op::Call { call, argc }, c.whole);
    }

    /// A builtin call whose final argument is expanded (`f(a, xs...)`): the expanded
    /// argument first (arity is checked when its length is known), then the others.
    fn call_expanded(&mut self, call: u32, c: &CallParts<'_>, scope: &dyn Scope) {
        self.emit(Op::Mark, c.whole);
        if let Some(last) = c.args.last() {
            self.expr(last, scope);
        }
        let begin = self.emit(Op::ExpandBegin { call, end: 0 }, c.whole);
        let nstatic = c.args.len().saturating_sub(1);
        self.args_converted(call, &c.args[..nstatic], scope);
        let nstatic = nstatic as u32;
        self.emit(Op::CallExpanded { call, nstatic }, c.whole);
        self.patch(begin);
    }

    /// Arguments of a builtin call, each converted to its parameter's type. No conversion
    /// is emitted where it would leave every value as it is: a parameter of any type (or
    /// none: an argument past the parameters, which the call rejects), a literal already
    /// of its parameter's primitive type (`format("%s", ...)`, `substr(x, 0, 16)`).
    fn args_converted(&mut self, call: u32, args: &[Expr], scope: &dyn Scope) {
        let def = match self.out.calls.get(call as usize).map(|c| &c.callee) {
            Some(Callee::Builtin(id)) => Some(builtins::get(*id)),
            _ => None,
        };
        for (i, a) in args.iter().enumerate() {
            self.expr(a, scope);
            let param = def.and_then(|d| d.params.get(i).or(d.var_param.as_ref()));
            let as_is = match param.map(|p| p.ty) {
                None | Some(builtins::ParamType::Any) => true,
                Some(builtins::ParamType::String) => {
                    matches!(self.const_value(a), Some(Value::String(_)))
                }
                Some(builtins::ParamType::Number) => {
                    matches!(self.const_value(a), Some(Value::Number(_)))
                }
                Some(builtins::ParamType::Bool) => {
                    matches!(self.const_value(a), Some(Value::Bool(_)))
                }
                Some(_) => false,
            };
            if !as_is {
                let arg = i as u32;
                self.emit(Op::ConvArg { call, arg }, a.span);
            }
        }
    }

    /// `invoke("name", args)`: the name must be a static string (function-hcl resolves it
    /// before evaluation); an undefined function fails when the call runs, as in Go.
    fn call_invoke(&mut self, call: u32, start: Span, c: &CallParts<'_>, scope: &dyn Scope) {
        let Some(fname) = static_string(&c.args[0]) else {
            let d = Diagnostic::error(
                "Error in function call",
                "Call to function \"invoke\" failed: user function invocation is not via a static string.",
                start,
            )
            .with_context(c.whole)
            .with_expression(c.whole);
            self.fail(d, c.whole);
            return;
        };
        let func = self.function(&fname).map(|f| f.0).unwrap_or(u32::MAX);
        self.emit(Op::Mark, c.whole);
        let k = self.konst(Value::String(fname));
        self.emit(
            Op::Const {
                index: k,
                mark: false,
            },
            c.args[0].span,
        );
        // A literal object of the function's own argument names (the common call) binds
        // its values to the frame directly; anything else is built and checked at run time.
        if let ExprKind::Object(items) = &c.args[1].kind
            && let Some(keys) = const_keys(items)
            && let Some(f) = self.out.functions.get(func as usize)
            && let Some(b) = ArgBinding::new(&ObjShape::new(keys), &f.args)
        {
            for it in items {
                self.expr(&it.value, scope);
            }
            self.out.bindings.push(b);
            let binding = (self.out.bindings.len() - 1) as u32;
            self.emit(
                Op::InvokeBound {
                    call,
                    func,
                    binding,
                },
                c.whole,
            );
            return;
        }
        self.expr(&c.args[1], scope);
        self.emit(Op::Invoke { call, func }, c.whole);
    }

    /// `try(a, b, ...)` / `can(a)`: each argument's traversals are probed first (one that
    /// depends on an unknown value makes the result unknown), then the argument runs; the
    /// first without errors is the result. An argument that is itself one traversal (the
    /// usual `try(self.resource.status.x, ...)`) is evaluated once, as its own probe.
    fn call_try(&mut self, call: u32, can: bool, c: &CallParts<'_>, scope: &dyn Scope) {
        self.emit(Op::TryBegin, c.whole);
        let mut ends = Vec::new();
        for a in c.args {
            let travs = traversals(a);
            if let [t] = travs[..]
                && std::ptr::eq(t, a)
            {
                self.emit(Op::Mark, a.span);
                self.expr(a, scope);
                ends.push(self.emit(Op::TryTraversal { end: 0, can }, a.span));
                continue;
            }
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
        self.emit(Op::TryFail { call, can }, c.whole);
        for at in ends {
            self.patch(at);
        }
    }

    // ---- source scanning for ranges the AST does not keep ----

    fn char_at(&self, file: FileId, p: Pos) -> Option<char> {
        let f = self.out.sources.get(file)?;
        f.text.get(p.byte as usize..)?.chars().next()
    }

    /// First position at or after `from` (and before byte `limit`) holding one of `chars`.
    fn find_char(&self, file: FileId, from: Pos, limit: u32, chars: &[char]) -> Option<Pos> {
        let f = self.out.sources.get(file)?;
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

/// The keys of an object constructor, when every one is a constant ([`const_key`]).
fn const_keys(items: &[ast::ObjectItem]) -> Option<Vec<Str>> {
    items.iter().map(|it| const_key(&it.key)).collect()
}

/// The key of an object item when it is a constant: a name, a keyword, or a literal string
/// (as its template evaluates it: in normal form C).
pub fn const_key(key: &ObjectKey) -> Option<Str> {
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

    /// A load emitted right after a `Mark` carries it; not once a position was taken in
    /// between (a jump may land there), nor for any other instruction.
    #[test]
    fn a_load_takes_over_the_mark_before_it_unless_a_position_was_taken() {
        let slot = |slot, mark| Op::Slot { slot, mark };
        let temp = |temp, mark| Op::Temp { temp, mark };
        let konst = |index, mark| Op::Const { index, mark };
        let path = |slot, mark| Op::SlotPath {
            slot,
            path: 0,
            mark,
        };
        let mut b = CodeBuilder::new(Arc::new(SourceMap::new()));
        let s = Span::default();
        b.emit(Op::Mark, s);
        assert_eq!(b.emit(slot(0, false), s), 0);
        assert_eq!(b.out.code, [slot(0, true)]);
        b.emit(Op::Mark, s);
        let _ = b.here();
        b.emit(slot(1, false), s);
        b.emit(Op::Mark, s);
        let _ = b.code_len();
        b.emit(temp(0, false), s);
        b.emit(Op::Mark, s);
        b.emit(Op::Mark, s);
        b.emit(konst(0, false), s);
        b.emit(Op::Mark, s);
        b.emit(Op::Fail(0), s);
        b.emit(Op::Mark, s);
        b.emit(Op::Return, s);
        b.begin_chunk();
        b.emit(path(2, false), s);
        assert_eq!(
            b.out.code[1..],
            [
                Op::Mark,
                slot(1, false),
                Op::Mark,
                temp(0, false),
                Op::Mark,
                konst(0, true),
                Op::Mark,
                Op::Fail(0),
                Op::Mark,
                Op::Return,
                path(2, false),
            ]
        );
        assert_eq!(b.out.spans.len(), b.out.code.len());
    }

    struct OneVar;
    impl Scope for OneVar {
        fn resolve(&self, name: &str) -> Option<u32> {
            (name == "x").then_some(0)
        }
        fn visible_names(&self) -> Vec<Str> {
            vec![Str::from("x")]
        }
    }

    /// Compiles `src` and evaluates it with `x` bound to `x`.
    fn run(src: &str, x: Value) -> (Code, ChunkId, Value, Vec<Diagnostic>) {
        let mut sm = SourceMap::new();
        let f = sm.add("t.hcl", src);
        let e = crate::syntax::parser::parse_expression(&sm, f).expect("parses");
        let mut b = CodeBuilder::new(Arc::new(sm));
        let chunk = b.compile_expr(&e, &OneVar);
        let p = b.finish();
        let mut d = Vec::new();
        let v = crate::bytecode::vm::Vm::new(&p, crate::bytecode::vm::Limits::default())
            .eval(chunk, &[x], &mut d)
            .expect("within budget");
        (p, chunk, v, d)
    }

    #[test]
    fn a_template_joins_its_literal_text_from_the_site_and_the_verifier_counts_its_values() {
        let (mut p, chunk, v, d) = run(r#""<${x}-${x}>""#, Value::string("a"));
        assert!(d.is_empty(), "{d:?}");
        assert_eq!(v.as_str(), Some("<a-a>"));
        let listing = crate::bytecode::disasm::disassemble(&p, chunk);
        assert!(listing.contains(r#"template 2 "<${}-${}>""#), "{listing}");
        assert!(!listing.contains("const"), "{listing}");
        assert_eq!(crate::bytecode::verify::verify(&p, chunk), Ok(()));
        // A join of more values than the site has places for is refused.
        for op in &mut p.code {
            if let Op::Template { n, .. } = op {
                *n = 3;
            }
        }
        let e = crate::bytecode::verify::verify(&p, chunk).expect_err("refused");
        assert!(e.contains("joins 3 values for a site of 2"), "{e}");
    }

    /// `x` in slot 0 (shared by every member), `m` in slot 1 (the member's).
    struct Member;
    impl Scope for Member {
        fn resolve(&self, name: &str) -> Option<u32> {
            match name {
                "x" => Some(0),
                "m" => Some(1),
                _ => None,
            }
        }
        fn visible_names(&self) -> Vec<Str> {
            vec![Str::from("x"), Str::from("m")]
        }
    }

    #[test]
    fn what_every_member_shares_is_computed_once_and_kept_only_without_diagnostics() {
        let src = r#"{ a = upper(x), b = "${upper(x)}-${m}", c = [for v in [1, 2] : "${x}${v}"], d = [for v in [m] : upper(x)] }"#;
        let mut sm = SourceMap::new();
        let f = sm.add("t.hcl", src);
        let e = crate::syntax::parser::parse_expression(&sm, f).expect("parses");
        let mut b = CodeBuilder::new(Arc::new(sm));
        b.set_invariant_below(Some(1));
        let chunk = b.compile_expr(&e, &Member);
        let p = b.finish();
        assert_eq!(crate::bytecode::verify::verify(&p, chunk), Ok(()));
        // Remembered: `upper(x)` (three times: alone, in the template, in the `for` over
        // a member's value), the `for` over constants; not the template or the `for`
        // that read `m`, nor anything inside a remembered expression.
        let listing = crate::bytecode::disasm::disassemble(&p, chunk);
        assert_eq!(listing.matches("memo_begin").count(), 4, "{listing}");
        assert_eq!(p.memos, 4);
        let mut vm = crate::bytecode::vm::Vm::new(&p, crate::bytecode::vm::Limits::default());
        let mut run = |x: Value, m: &str| {
            let mut d = Vec::new();
            let v = vm.eval(chunk, &[x, Value::string(m)], &mut d);
            (v.expect("within budget"), d)
        };
        let (v1, d) = run(Value::string("t"), "1");
        assert!(d.is_empty(), "{d:?}");
        // A second member: the shared parts are the first's (`x` changed here only to
        // show it; in a collection it cannot), the member's parts its own.
        let (v2, _) = run(Value::string("other"), "2");
        let get = |v: &Value, k: &str| v.get_attr(k).cloned().unwrap_or_default();
        assert_eq!(get(&v2, "a").as_str(), Some("T"));
        assert_eq!(get(&v2, "b").as_str(), Some("T-2"));
        assert!(get(&v1, "c").raw_equals(&get(&v2, "c")));
        // Failing (a number has no upper case): never kept, so reported each time.
        let mut vm = crate::bytecode::vm::Vm::new(&p, crate::bytecode::vm::Limits::default());
        for _ in 0..2 {
            let mut d = Vec::new();
            vm.eval(chunk, &[Value::tuple(vec![]), Value::string("m")], &mut d)
                .expect("within budget");
            assert!(!d.is_empty());
        }
        // Forgotten: computed again.
        vm.forget_memos();
        let mut d = Vec::new();
        let v = vm.eval(chunk, &[Value::string("u"), Value::string("3")], &mut d);
        assert_eq!(get(&v.expect("within budget"), "a").as_str(), Some("U"));
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

    #[test]
    fn arguments_are_converted_only_where_a_conversion_can_change_them() {
        let conv_args = |src: &str, x: Value| {
            let (p, chunk, v, d) = run(src, x);
            let listing = crate::bytecode::disasm::disassemble(&p, chunk);
            let args: Vec<String> = listing
                .lines()
                .filter_map(|l| l.split_once("conv_arg").map(|(_, a)| a.trim().to_string()))
                .collect();
            let texts: Vec<String> = d.iter().map(|d| d.plain(p.sources())).collect();
            (args, v, texts)
        };
        // Literals of the parameter's type, and parameters of any type: nothing to emit.
        let (args, v, d) = conv_args(r#"substr("abcdef", 1, 3)"#, Value::NULL);
        assert_eq!((args, d), (Vec::<String>::new(), vec![]));
        assert!(v.raw_equals(&Value::string("bcd")));
        let (args, _, _) = conv_args("coalesce(x, 1)", Value::NULL);
        assert!(args.is_empty(), "{args:?}");
        // A variable, or a literal of another type, is converted (and may fail) as before.
        let (args, v, _) = conv_args(r#"substr(x, "1", true)"#, Value::string("abc"));
        assert_eq!(args, ["#0", "#1", "#2"]);
        assert!(v.is_unknown());
        let (args, v, d) = conv_args(r#"upper(2)"#, Value::NULL);
        assert_eq!((args, d), (vec!["#0".to_string()], vec![]));
        assert!(v.raw_equals(&Value::string("2")));
    }
}
