//! Compiled code: the instruction set ([`Op`]), what each instruction does to the VM's
//! stacks ([`Op::effects`]), and [`Code`], the flat result of compiling a program's
//! expressions (instructions, constants and the side tables instructions index), immutable
//! but for its attribute hints.
//!
//! The VM has one value stack and seven bookkeeping stacks ([`Aux`]): diagnostic marks,
//! type-only regions, conditions, `for` loops, splats, expanded arguments and `try` calls.
//! In the documentation of each instruction, `[.., a, b] → [.., r]` is its effect on the
//! value stack (top at the right) and `marks −1` (say) on a bookkeeping stack; a jump's
//! effect on its taken path is given after "jumps". [`crate::bytecode::verify`] checks
//! every chunk against these effects when it is compiled (debug builds), and the VM checks
//! each instruction it runs against them (debug builds).

use crate::builtins::FuncId;
use crate::syntax::ast::{BinaryOp, UnaryOp};
use crate::syntax::diag::Diagnostic;
use crate::syntax::span::{SourceMap, Span};
use crate::value::{Str, Summary, Value};
use std::marker::PhantomData;
use std::sync::Arc;
use std::sync::atomic::AtomicU8;

/// A compiled expression: an entry point into the code table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ChunkId(pub u32);

/// A user function (`function name { ... }`), called through `invoke`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FnId(pub u32);

/// The index of an instruction's [`Site`] in [`Code::sites`], typed by the kind of site
/// the instruction reads (so the compiler cannot give an operator a `for` loop's ranges).
#[derive(Debug, PartialEq)]
pub(crate) struct SiteId<T>(pub u32, PhantomData<T>);

impl<T> SiteId<T> {
    pub(crate) fn new(i: u32) -> SiteId<T> {
        SiteId(i, PhantomData)
    }
}

impl<T> Clone for SiteId<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for SiteId<T> {}

/// One VM instruction. Jump targets are absolute indices in the code table; `u32` operands
/// index [`Code`]'s tables (`consts`, `names`, `diags`, `calls`, `templates`, `shapes`,
/// `paths`, `functions`) or the running frame (`Slot`, `SlotPath`) and chunk's temporaries
/// (`Temp`, `*_temp`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Op {
    /// Push a constant. `[..] → [.., c]`; with `mark`, a [`Op::Mark`] first (see below).
    ///
    /// The four loads (`Const`, `Slot`, `Temp`, `SlotPath`) carry the `Mark` the compiler
    /// emitted just before one, as `mark`: an expression's first operand is most often a
    /// load, and a separate `Mark` cost a dispatch (~20 instructions) for one push. The
    /// instruction still counts as two against the instruction budget (a budget that
    /// runs out at its mark names the load's range, where the `Mark` named the
    /// expression's).
    Const { index: u32, mark: bool },
    /// Push a frame slot (root variable). `[..] → [.., v]`
    Slot { slot: u32, mark: bool },
    /// Push a temporary (`for` or splat variable) of the running chunk. `[..] → [.., v]`
    Temp { temp: u32, mark: bool },
    /// A frame slot followed by attribute steps (`each.value.name`), one instruction: the
    /// steps are taken by reference and only the attribute reached is cloned (a `Slot`
    /// then `Attr`s would clone every object on the way only to drop it). `path` indexes
    /// [`Code::paths`]. `[..] → [.., v]`
    SlotPath { slot: u32, path: u32, mark: bool },
    /// Record a prebuilt diagnostic and push `DynamicVal`. `[..] → [.., dyn]`
    Fail(u32),
    /// hcl `GetAttr`, a traversal step. `[.., v] → [.., v.name]`
    Attr { name: u32, site: SiteId<StepSite> },
    /// hcl `Index` with a constant key (a traversal step). `[.., v] → [.., v[key]]`
    IndexConst { key: u32, site: SiteId<StepSite> },
    /// hcl `Index` of `coll[key]`. `[.., coll, key] → [.., coll[key]]`
    Index { site: SiteId<StepSite> },
    /// Remember the number of diagnostics (for "did this part fail?"). marks +1
    Mark,
    /// `-x`, `!x`. `[.., x] → [.., r]`, marks −1
    Unary {
        op: UnaryOp,
        site: SiteId<UnarySite>,
    },
    /// Arithmetic, comparison, equality. `[.., l, r] → [.., v]`, marks −1
    Binary {
        op: BinaryOp,
        site: SiteId<OperatorSite>,
    },
    /// After the lhs of `&&`/`||` (left on the stack): the rhs runs in type-only mode when
    /// the lhs decides. `[.., l] → [.., l]`, regions +1
    LogicRhs { op: BinaryOp },
    /// Combine `&&`/`||` with hcl's short-circuit rules. `[.., l, r] → [.., v]`, regions −1,
    /// marks −1
    Logic {
        op: BinaryOp,
        site: SiteId<OperatorSite>,
    },
    /// Decide which branch of a conditional is taken. `[.., c] → [..]`, conds +1
    CondSelect,
    /// Start branch 0 (true) or 1 (false); the untaken one runs in type-only mode.
    /// regions +1
    BranchBegin(u8),
    /// regions −1
    BranchEnd,
    /// Unify both branch results as hcl does. `[.., t, f] → [.., v]`, conds −1, marks −1
    CondMerge { site: SiteId<CondSite> },
    /// `[.., x1 .. xn] → [.., tuple]`
    MakeTuple(u32),
    /// After an object key expression: a key whose evaluation failed becomes unknown.
    /// `[.., k] → [.., k']`, marks −1
    KeyDone,
    /// Check an object item's key (below the value). `[.., k, v] → [.., k', v]`
    ObjItem { site: SiteId<ItemSite> },
    /// `[.., k1, v1 .. kn, vn] → [.., object]`
    MakeObject(u32),
    /// An object whose keys are all constant; the operand indexes [`Code::shapes`] (sorted
    /// keys and where each one's value is). `[.., v1 .. vn] → [.., object]`, n = the
    /// shape's `values`
    MakeObjectConst(u32),
    /// Join a template's parts: its literal text from the site (indexing
    /// [`Code::templates`]) and the values of the other `n` parts.
    /// `[.., p1 .. pn] → [.., s]`
    Template { n: u32, site: u32 },
    /// Join the tuple a template `%{for}` produced. `[.., tuple] → [.., s]`
    TemplateJoin { site: SiteId<JoinSite> },
    /// Start a `for` over the collection. `[.., coll] → [..]`, fors +1; jumps to `end` when
    /// there is nothing to iterate: `[.., coll] → [.., dyn]`. A `key_temp` equal to
    /// `val_temp` is a `for` without a key variable: only the value is bound.
    ForBegin {
        site: SiteId<ForSite>,
        end: u32,
        key_temp: u32,
        val_temp: u32,
        object: bool,
        group: bool,
    },
    /// hcl's early check of the `if` clause with unknown variables. `[.., c] → [..]`,
    /// marks −1; jumps to `end` when it fails: `[.., c] → [.., dyn]`, marks −1, fors −1
    ForPreCheck { site: SiteId<ForSite>, end: u32 },
    /// Bind the next element's key and value, or jump to `exit` after the last. No stack
    /// effect either way.
    ForNext { exit: u32 },
    /// The `if` clause of an element. `[.., c] → [..]`, jumps to `next` to skip it
    ForFilter { site: SiteId<ForSite>, next: u32 },
    /// The key of an element of a `for` object. `[.., k] → [..]`, jumps to `next` to skip it
    ForKey { site: SiteId<ForSite>, next: u32 },
    /// Add an element's value to the result, then jump to `next` (the loop's `ForNext`).
    /// jumps: `[.., v] → [..]`
    ForPush { site: SiteId<ForSite>, next: u32 },
    /// `[..] → [.., result]`, fors −1
    ForEnd,
    /// Start a splat over the source. `[.., src] → [..]`, marks −1, splats +1; jumps to
    /// `end` when there is nothing to iterate: `[.., src] → [.., r]`, marks −1
    SplatBegin { site: SiteId<SplatSite>, end: u32 },
    /// Bind the next element to `temp`, or jump to `exit` after the last. No stack effect.
    SplatNext { temp: u32, exit: u32 },
    /// Add an element's result, then jump to `next`. `[.., v] → [..]`, marks −1
    SplatPush { next: u32 },
    /// `[..] → [.., result]`, splats −1
    SplatEnd,
    /// Convert the argument on top of the stack to its parameter type (builtin calls).
    /// `[.., a] → [.., a']`
    ConvArg { call: u32, arg: u32 },
    /// Call a builtin. `[.., a1 .. a_argc] → [.., r]`, marks −1
    Call { call: u32, argc: u32 },
    /// Expand the final `...` argument and check arity. `[.., last] → [..]`, expands +1;
    /// jumps to `end` when the call yields `DynamicVal`: `[.., last] → [.., dyn]`, marks −1
    ExpandBegin { call: u32, end: u32 },
    /// Call a builtin with `nstatic` arguments plus the expanded ones.
    /// `[.., a1 .. a_nstatic] → [.., r]`, expands −1, marks −1
    CallExpanded { call: u32, nstatic: u32 },
    /// `invoke(name, args)`. `[.., name, args] → [.., r]`, marks −1
    Invoke { call: u32, func: u32 },
    /// `invoke(name, { k = v, .. })` of a declared function whose argument object is a
    /// literal naming only its arguments: the values go to the frame as they are, without
    /// the object. `binding` indexes [`Code::bindings`].
    /// `[.., name, v1 .. v_values] → [.., r]`, marks −1
    InvokeBound { call: u32, func: u32, binding: u32 },
    /// Start `try`/`can`. tries +1
    TryBegin,
    /// After a traversal of a `try` argument: is it (wholly) known? `[.., v] → [..]`,
    /// marks −1
    Probe,
    /// If an argument depends on unknown values, the result is unknown: jumps to `end`,
    /// `[..] → [.., r]`, tries −1. No stack effect otherwise.
    TryDepCheck { end: u32, can: bool },
    /// After a `try` argument: `[.., v] → [..]`, marks −1; jumps to `end` if it had no
    /// errors: `[.., v] → [.., r]`, marks −1, tries −1
    TryArg { end: u32, can: bool },
    /// After a `try` argument that is one traversal, evaluated once as its own probe
    /// (`Probe`, `TryDepCheck` and `TryArg` of a second evaluation, in one): `[.., v] → [..]`,
    /// marks −1, when it had errors; jumps to `end` when it depends on an unknown value or
    /// had no errors: `[.., v] → [.., r]`, marks −1, tries −1
    TryTraversal { end: u32, can: bool },
    /// No argument succeeded. `[..] → [.., r]`, tries −1
    TryFail { call: u32, can: bool },
    /// Start of an expression of a collection's template that reads nothing a member
    /// binds (see [`Code::memos`]): when an earlier member computed it without a
    /// diagnostic, its value, jumping to `end` (the instruction after `MemoEnd`):
    /// `[..] → [.., v]`; otherwise marks +1.
    MemoBegin { memo: u32, end: u32 },
    /// End of such an expression: its value is kept for the next members when it made no
    /// diagnostic. `[.., v] → [.., v]`, marks −1
    MemoEnd { memo: u32 },
    /// End of a chunk: the value on top of the stack, the only one the chunk left, is the
    /// result. `[v] → []`
    Return,
}

/// The VM's bookkeeping stacks (besides the value stack), as [`Effect::aux`] indexes them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Aux {
    /// Diagnostic counts (`Mark`).
    Marks,
    /// Type-only regions (conditional branches, `&&`/`||` right operands).
    Regions,
    /// Taken branches of conditionals.
    Conds,
    /// `for` loops.
    Fors,
    /// Splats.
    Splats,
    /// Expanded `...` arguments.
    Expands,
    /// `try`/`can` calls.
    Tries,
}

impl Aux {
    /// Every bookkeeping stack, in [`Effect::aux`] order.
    pub const ALL: [Aux; 7] = [
        Aux::Marks,
        Aux::Regions,
        Aux::Conds,
        Aux::Fors,
        Aux::Splats,
        Aux::Expands,
        Aux::Tries,
    ];
}

/// What one path through an instruction does to the stacks: values popped, then pushed,
/// and the change of each bookkeeping stack's depth.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Effect {
    pub pops: u32,
    pub pushes: u32,
    pub aux: [i8; 7],
}

impl Effect {
    const fn values(pops: u32, pushes: u32) -> Effect {
        Effect {
            pops,
            pushes,
            aux: [0; 7],
        }
    }

    const NONE: Effect = Effect::values(0, 0);

    /// The same with bookkeeping stack `a` changed by `delta`.
    const fn and(mut self, a: Aux, delta: i8) -> Effect {
        self.aux[a as usize] += delta;
        self
    }
}

/// An instruction's effects on each way it can continue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Effects {
    /// Going on with the next instruction (`None`: it never does).
    pub next: Option<Effect>,
    /// Jumping: the target and the effect on that path.
    pub jump: Option<(u32, Effect)>,
}

impl Op {
    /// The `mark` of a load (`Const`, `Slot`, `Temp`, `SlotPath`): whether it carries the
    /// `Mark` emitted before it. `None` for every other instruction.
    pub(crate) fn mark_mut(&mut self) -> Option<&mut bool> {
        match self {
            Op::Const { mark, .. }
            | Op::Slot { mark, .. }
            | Op::Temp { mark, .. }
            | Op::SlotPath { mark, .. } => Some(mark),
            _ => None,
        }
    }

    /// Whether this is a load carrying the `Mark` emitted before it.
    pub(crate) fn carries_mark(&self) -> bool {
        let mut op = *self;
        op.mark_mut().is_some_and(|m| *m)
    }

    /// The instruction's stack effects (the table its documentation spells out). `None`
    /// for [`Op::Return`], which ends the chunk, and for an object shape the code lacks.
    pub(crate) fn effects(&self, code: &Code) -> Option<Effects> {
        use Aux::*;
        let next = |e: Effect| Effects {
            next: Some(e),
            jump: None,
        };
        let either = |e: Effect, target: u32, j: Effect| Effects {
            next: Some(e),
            jump: Some((target, j)),
        };
        let v = Effect::values;
        Some(match *self {
            Op::Const { .. } | Op::Slot { .. } | Op::Temp { .. } | Op::SlotPath { .. } => {
                next(v(0, 1).and(Marks, i8::from(self.carries_mark())))
            }
            Op::Fail(_) => next(v(0, 1)),
            Op::Attr { .. } | Op::IndexConst { .. } | Op::ConvArg { .. } => next(v(1, 1)),
            Op::TemplateJoin { .. } => next(v(1, 1)),
            Op::Index { .. } => next(v(2, 1)),
            Op::Mark => next(Effect::NONE.and(Marks, 1)),
            Op::Unary { .. } | Op::KeyDone => next(v(1, 1).and(Marks, -1)),
            Op::Binary { .. } | Op::Invoke { .. } => next(v(2, 1).and(Marks, -1)),
            Op::InvokeBound { binding, .. } => {
                let values = code.bindings.get(binding as usize)?.values;
                next(v(values.checked_add(1)?, 1).and(Marks, -1))
            }
            Op::LogicRhs { .. } => next(v(1, 1).and(Regions, 1)),
            Op::Logic { .. } => next(v(2, 1).and(Regions, -1).and(Marks, -1)),
            Op::CondSelect => next(v(1, 0).and(Conds, 1)),
            Op::BranchBegin(_) => next(Effect::NONE.and(Regions, 1)),
            Op::BranchEnd => next(Effect::NONE.and(Regions, -1)),
            Op::CondMerge { .. } => next(v(2, 1).and(Conds, -1).and(Marks, -1)),
            Op::MakeTuple(n) => next(v(n, 1)),
            Op::ObjItem { .. } => next(v(2, 2)),
            Op::MakeObject(n) => next(v(n.checked_mul(2)?, 1)),
            Op::MakeObjectConst(i) => next(v(code.shapes.get(i as usize)?.values, 1)),
            Op::Template { n, .. } => next(v(n, 1)),
            Op::ForBegin { end, .. } => either(v(1, 0).and(Fors, 1), end, v(1, 1)),
            Op::ForPreCheck { end, .. } => either(
                v(1, 0).and(Marks, -1),
                end,
                v(1, 1).and(Marks, -1).and(Fors, -1),
            ),
            Op::ForNext { exit } => either(Effect::NONE, exit, Effect::NONE),
            Op::ForFilter { next: to, .. } | Op::ForKey { next: to, .. } => {
                either(v(1, 0), to, v(1, 0))
            }
            Op::ForPush { next: to, .. } => Effects {
                next: None,
                jump: Some((to, v(1, 0))),
            },
            Op::ForEnd => next(v(0, 1).and(Fors, -1)),
            Op::SplatBegin { end, .. } => either(
                v(1, 0).and(Marks, -1).and(Splats, 1),
                end,
                v(1, 1).and(Marks, -1),
            ),
            Op::SplatNext { exit, .. } => either(Effect::NONE, exit, Effect::NONE),
            Op::SplatPush { next: to } => Effects {
                next: None,
                jump: Some((to, v(1, 0).and(Marks, -1))),
            },
            Op::SplatEnd => next(v(0, 1).and(Splats, -1)),
            Op::Call { argc, .. } => next(v(argc, 1).and(Marks, -1)),
            Op::ExpandBegin { end, .. } => {
                either(v(1, 0).and(Expands, 1), end, v(1, 1).and(Marks, -1))
            }
            Op::CallExpanded { nstatic, .. } => next(v(nstatic, 1).and(Expands, -1).and(Marks, -1)),
            Op::TryBegin => next(Effect::NONE.and(Tries, 1)),
            Op::Probe => next(v(1, 0).and(Marks, -1)),
            Op::TryDepCheck { end, .. } => either(Effect::NONE, end, v(0, 1).and(Tries, -1)),
            Op::TryArg { end, .. } | Op::TryTraversal { end, .. } => either(
                v(1, 0).and(Marks, -1),
                end,
                v(1, 1).and(Marks, -1).and(Tries, -1),
            ),
            Op::TryFail { .. } => next(v(0, 1).and(Tries, -1)),
            Op::MemoBegin { end, .. } => either(Effect::NONE.and(Marks, 1), end, v(0, 1)),
            Op::MemoEnd { .. } => next(v(1, 1).and(Marks, -1)),
            Op::Return => return None,
        })
    }
}

/// One attribute step of an [`Op::SlotPath`]: the name (in [`Code::names`]), its site, and
/// where among an object's entries the step last found its attribute
/// ([`crate::value::Fields::get_key_hinted`]): the one part of the code that changes as it
/// runs, a guess any thread may update, checked where it is used.
#[derive(Debug)]
pub(crate) struct PathStep {
    pub name: u32,
    /// `names[name]` itself: the step reads it without a look in the table.
    pub key: Str,
    pub site: SiteId<StepSite>,
    pub hint: AtomicU8,
}

/// A traversal step (`.name`, `[key]`) within its traversal.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct StepSite {
    pub step: Span,
    pub whole: Span,
}

/// A unary operator's operand.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct UnarySite {
    pub operand: Span,
    pub whole: Span,
}

/// A binary operator's operands.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct OperatorSite {
    pub lhs: Span,
    pub rhs: Span,
    pub whole: Span,
}

/// A conditional (`c ? a : b`, or a template `%{if}`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct CondSite {
    pub cond: Span,
    pub then: Span,
    pub otherwise: Span,
    pub whole: Span,
}

/// An object constructor's item whose key is an expression.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct ItemSite {
    pub key: Span,
    pub value: Span,
}

/// A template `%{for}` directive.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct JoinSite {
    pub directive: Span,
}

/// A `for` expression: its collection, `if` clause and key expression (the whole range
/// where it has none).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct ForSite {
    pub coll: Span,
    pub cond: Span,
    pub key: Span,
    pub whole: Span,
}

/// A splat (`src[*].x`, `src.*.x`): its source, its `[*]`/`.*` marker and what each
/// element is put through (from the marker on: hcl's `Each` range).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct SplatSite {
    pub source: Span,
    pub marker: Span,
    pub each: Span,
    pub whole: Span,
}

/// A kind of [`Site`]: how [`Code::site`] finds it in the table.
pub(crate) trait SiteKind: Copy {
    fn wrap(self) -> Site;
    fn unwrap(s: &Site) -> Option<Self>;
}

/// [`Site`], one variant per kind, and each kind's [`SiteKind`].
macro_rules! site_kinds {
    ($($variant:ident($ty:ty)),* $(,)?) => {
        /// The ranges an instruction needs for its diagnostics, one kind per family of
        /// instructions; [`Code::sites`] holds them and each instruction names its own kind.
        #[derive(Clone, Copy, Debug, PartialEq)]
        pub(crate) enum Site {
            $($variant($ty)),*
        }

        $(impl SiteKind for $ty {
            fn wrap(self) -> Site {
                Site::$variant(self)
            }
            fn unwrap(s: &Site) -> Option<Self> {
                match s {
                    Site::$variant(x) => Some(*x),
                    _ => None,
                }
            }
        })*
    };
}

site_kinds!(
    Step(StepSite),
    Unary(UnarySite),
    Operator(OperatorSite),
    Cond(CondSite),
    Item(ItemSite),
    Join(JoinSite),
    For(ForSite),
    Splat(SplatSite),
);

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

/// A template's parts in order: its literal text, kept here (not pushed as constants
/// for every join), and the ranges of the parts whose values are on the stack.
#[derive(Clone, Debug)]
pub(crate) struct TemplateSite {
    pub parts: Vec<Piece>,
    /// Bytes of the literal parts, charged with the interpolated strings before a join.
    pub literal_len: u64,
    /// Whether a join may give a short ASCII string (its literal text is short ASCII):
    /// the VM tries one only then.
    pub may_be_short: bool,
    pub whole: Span,
}

impl TemplateSite {
    /// A site of these parts; the literal bytes are counted here, once.
    pub(crate) fn new(parts: Vec<Piece>, whole: Span) -> Self {
        let literal_len = parts
            .iter()
            .map(|p| match p {
                Piece::Text(t) => t.len() as u64,
                Piece::Value(_) => 0,
            })
            .sum();
        let may_be_short = literal_len <= Str::INLINE as u64
            && parts.iter().all(|p| match p {
                Piece::Text(t) => t.is_ascii(),
                Piece::Value(_) => true,
            });
        TemplateSite {
            parts,
            literal_len,
            may_be_short,
            whole,
        }
    }

    /// How many values the join takes from the stack (the `n` of its `Op::Template`).
    pub(crate) fn values(&self) -> usize {
        self.parts
            .iter()
            .filter(|p| matches!(p, Piece::Value(_)))
            .count()
    }
}

/// One part of a template.
#[derive(Clone, Debug)]
pub(crate) enum Piece {
    /// Literal text.
    Text(Str),
    /// The next value on the stack: an interpolation or a directive, at this range.
    Value(Span),
}

/// Where a chunk starts in the code table and how many temporaries it uses.
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
    /// What the keys add to the summary of an object of this shape (their bytes).
    pub keys_sum: Summary,
}

impl ObjShape {
    pub(crate) fn new(keys: Vec<Str>) -> ObjShape {
        let values = keys.len() as u32;
        // Interned: every object of the shape clones its keys.
        let mut sorted: Vec<(Str, u32)> = keys.into_iter().map(Str::intern).zip(0u32..).collect();
        // Stable: among equal keys the last in source order ends up last.
        sorted.sort_by(|a, b| a.0.cmp(&b.0));
        let mut out: Vec<(Str, u32)> = Vec::with_capacity(sorted.len());
        for e in sorted {
            match out.last_mut() {
                Some(last) if last.0 == e.0 => *last = e,
                _ => out.push(e),
            }
        }
        let mut keys_sum = Summary::default();
        for (k, _) in &out {
            keys_sum.add_key(k);
        }
        ObjShape {
            values,
            keys: out,
            keys_sum,
        }
    }
}

/// Where the values of an `invoke`'s literal argument object go in the function's frame
/// ([`Op::InvokeBound`]): the compiler checked that every key is a declared argument, so
/// the call needs neither the object nor a lookup by name.
#[derive(Clone, Debug)]
pub(crate) struct ArgBinding {
    /// The number of values on the stack (the literal's items in source order,
    /// duplicates included).
    pub values: u32,
    /// For each declared argument in order, the source index of its value (the last of
    /// duplicates, as the object would keep), or None when the call leaves it out.
    pub slots: Vec<Option<u32>>,
}

impl ArgBinding {
    /// The binding of a literal of this shape (its distinct keys, each with the value the
    /// object would keep) to a function with these declared arguments; None if a key is
    /// not one of them (the call then builds the object, and the generic path reports the
    /// key as the Go implementation does). One binary search per argument: a program of
    /// 50,000 arguments binds at once (comparing every key with every argument took
    /// seconds).
    pub(crate) fn new(shape: &ObjShape, args: &[(Str, Option<ChunkId>)]) -> Option<ArgBinding> {
        let mut bound = vec![false; shape.keys.len()];
        let slots = args
            .iter()
            .map(|(a, _)| {
                let i = shape.keys.binary_search_by(|(k, _)| k.cmp(a)).ok()?;
                bound[i] = true;
                Some(shape.keys[i].1)
            })
            .collect();
        if !bound.iter().all(|&b| b) {
            return None;
        }
        Some(ArgBinding {
            values: shape.values,
            slots,
        })
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

/// Compiled code: every chunk's instructions in one table, with the constants, names and
/// ranges they index. Immutable (but for [`PathStep::hint`], guesses any thread may
/// update) and shared across requests (and threads).
#[derive(Debug)]
pub struct Code {
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
    pub(crate) bindings: Vec<ArgBinding>,
    /// The attribute steps of each [`Op::SlotPath`] ([`PathStep`]).
    pub(crate) paths: Vec<Box<[PathStep]>>,
    pub(crate) diags: Vec<Diagnostic>,
    pub(crate) functions: Vec<UserFn>,
    /// How many expressions [`Op::MemoBegin`] remembers: each computed once per
    /// evaluation of its collection (the VM forgets them when a collection starts),
    /// because all it reads is the same for every member and every builtin is pure.
    pub(crate) memos: u32,
    pub(crate) sources: Arc<SourceMap>,
}

// Compiled code is shared across requests and threads.
const _: () = {
    const fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Code>();
};

impl Code {
    /// The source files the code was compiled from (for formatting diagnostics).
    pub fn sources(&self) -> &Arc<SourceMap> {
        &self.sources
    }

    /// Number of chunks compiled.
    pub fn chunk_count(&self) -> usize {
        self.chunks.len()
    }

    /// The instructions of a chunk: from its start to the next chunk's (each chunk is one
    /// contiguous run ending in its only [`Op::Return`]).
    pub(crate) fn chunk_range(&self, chunk: ChunkId) -> Option<std::ops::Range<usize>> {
        let i = chunk.0 as usize;
        let start = self.chunks.get(i)?.start as usize;
        let end = self
            .chunks
            .get(i + 1)
            .map_or(self.code.len(), |c| c.start as usize);
        Some(start..end)
    }

    /// The site `id` names, if the table holds one of that kind there.
    pub(crate) fn site<T: SiteKind>(&self, id: SiteId<T>) -> Option<T> {
        self.sites.get(id.0 as usize).and_then(T::unwrap)
    }
}
