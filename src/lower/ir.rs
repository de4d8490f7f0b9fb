//! The DSL's intermediate representation: the blocks of a program (groups, resources,
//! collections, composite status/connection, context, requirements, user functions) with
//! every expression compiled to bytecode and every variable resolved to a frame slot.
//!
//! Lowering happens once per distinct program; the result is what the program cache keeps.
//! The Go implementation checks most nested blocks only when it reaches them while
//! evaluating (a schema error inside a group whose condition is false is never reported
//! there). fn-hcl finds them all here, but keeps each one at the place where Go would
//! raise it ([`Item::Fatal`], [`Locals::error`]), so that every program behaves the same;
//! `analyze` reports them all.
//!
//! Frame layout: slot 0 is `req`; every scope pushes its variables (`self`, `each`,
//! locals) on entry, in slot order, and pops them on exit, so sibling scopes reuse slots.
//!
//! Every compiled expression also gets its static type ([`crate::lower::types`], in
//! [`Program::types`]); [`dump`] prints the whole tree for review.

use crate::bytecode::code::{ChunkId, FnId};
use crate::bytecode::compile::{CodeBuilder, Scope};
use crate::lower::annotate;
use crate::lower::schema::{self, Content, Schema};
use crate::lower::types::{SType, TypeEnv};
use crate::syntax::ast::{self, Attribute, Block, Body, Expr, ExprKind, TemplatePart};
use crate::syntax::diag::Diagnostic;
use crate::syntax::span::{FileId, Pos, SourceMap, Span};
use crate::syntax::visit::{static_string, variables, visit};
use crate::value::Str;
use std::collections::HashMap;
use std::sync::Arc;

/// A compiled program: the block tree plus its bytecode.
pub struct Program {
    pub sources: Arc<SourceMap>,
    pub code: crate::bytecode::code::Code,
    pub root: Group,
    /// Largest frame any evaluation needs.
    pub frame_size: u32,
    /// Warnings found while loading (they join the request's diagnostics).
    pub load_warnings: Vec<Diagnostic>,
    /// Problems the Go implementation only finds at run time, or never: reported by
    /// `analyze`, not by evaluation.
    pub analysis: Vec<Diagnostic>,
    /// The static type of every compiled expression, by chunk (absent: not inferred, as
    /// for function argument defaults).
    pub types: HashMap<ChunkId, SType>,
    /// The user functions as lowered, in source order (their callable code is in `code`).
    pub functions: Vec<UserFunction>,
    /// Which observed bodies the program can read (the request path decodes only those).
    pub reads: crate::lower::reads::Reads,
    /// fn-hcl's extensions the program uses, which the Go implementation rejects (one
    /// warning each): reported by `analyze --portable`.
    pub portability: Vec<Diagnostic>,
    /// For `explain` only ([`compile_for_explain`]): the sub-expressions of each compiled
    /// expression, each compiled on its own chunk in the same scope.
    pub parts: Parts,
}

/// The sub-expressions `explain` may fold ([`crate::syntax::visit::foldable_children`],
/// recursively), by the chunk of the expression they belong to: (range, chunk).
#[derive(Debug, Default)]
pub struct Parts {
    pub by_root: HashMap<ChunkId, Vec<(Span, ChunkId)>>,
    /// False when [`EXPLAIN_NODES`] stopped the compilation of parts.
    pub truncated: bool,
}

/// A `function` block: args (slots 0..n, in order) with whether each has a default, its
/// locals (following the args) and its body.
#[derive(Debug)]
pub struct UserFunction {
    pub name: Str,
    pub args: Vec<(Str, bool)>,
    pub frame_size: u32,
    pub locals: Locals,
    pub body: CExpr,
}

impl Program {
    /// The static type of a compiled expression (`Dynamic` where nothing is known).
    pub fn type_of(&self, e: &CExpr) -> &SType {
        self.types.get(&e.chunk).unwrap_or(&SType::Dynamic)
    }

    /// Every compiled local of the program (all scopes, user functions included), so
    /// that tools can show a local's static type by its expression's range.
    pub fn all_local_defs(&self) -> Vec<&LocalDef> {
        fn content<'a>(c: &'a ResourceContent, out: &mut Vec<&'a LocalDef>) {
            out.extend(&c.locals.defs);
            subs(&c.subs, out);
        }
        fn subs<'a>(s: &'a [Sub], out: &mut Vec<&'a LocalDef>) {
            for x in s {
                match x {
                    Sub::Composite(c) => out.extend(&c.locals.defs),
                    Sub::Ready(r) => out.extend(&r.locals.defs),
                    Sub::Context(c) => out.extend(&c.locals.defs),
                    Sub::Assert(_) | Sub::Fatal(_) => {}
                }
            }
        }
        fn group<'a>(g: &'a Group, out: &mut Vec<&'a LocalDef>) {
            out.extend(&g.locals.defs);
            for item in &g.items {
                match item {
                    Item::Group(sub) => group(sub, out),
                    Item::Resource(r) => content(&r.content, out),
                    Item::Collection(c) => {
                        out.extend(&c.locals.defs);
                        content(&c.template, out);
                        subs(&c.subs, out);
                    }
                    Item::Composite(c) => out.extend(&c.locals.defs),
                    Item::Context(c) => out.extend(&c.locals.defs),
                    Item::Requirement(r) => out.extend(&r.locals.defs),
                    Item::Assert(_) | Item::Fatal(_) => {}
                }
            }
        }
        let mut out = Vec::new();
        group(&self.root, &mut out);
        for f in &self.functions {
            out.extend(&f.locals.defs);
        }
        out
    }
}

/// A compiled expression with its source range.
#[derive(Clone, Debug)]
pub struct CExpr {
    pub chunk: ChunkId,
    /// hcl's `Expr.Range()`.
    pub range: Span,
}

/// An attribute: its expression, plus the attribute's whole range (`name = expr`).
#[derive(Clone, Debug)]
pub struct CAttr {
    pub expr: CExpr,
    pub range: Span,
}

/// The locals of one scope, in evaluation (dependency) order; local `i` lives in slot
/// `base + i`.
#[derive(Clone, Debug, Default)]
pub struct Locals {
    pub base: u32,
    pub defs: Vec<LocalDef>,
    /// A problem Go reports when it processes this scope's locals (duplicate, shadowing,
    /// unknown reference, cycle, a block inside `locals`): fatal when reached.
    pub error: Option<Diagnostic>,
    /// For `analyze`: a "did you mean" hint completing `error` (Go's text has none).
    pub hint: Option<String>,
}

#[derive(Clone, Debug)]
pub struct LocalDef {
    pub name: Str,
    pub expr: CExpr,
}

/// A `group` (or the top level).
#[derive(Debug)]
pub struct Group {
    /// The block's whole source range (none for the top level) (`explain` matches blocks to the syntax tree by it).
    pub span: Span,
    pub locals: Locals,
    pub condition: Option<CAttr>,
    pub items: Vec<Item>,
}

/// One block of a group, in source order.
#[derive(Debug)]
pub enum Item {
    Group(Group),
    Resource(Resource),
    Collection(Box<Collection>),
    Composite(Composite),
    Context(ContextBlock),
    Requirement(Requirement),
    Assert(Assert),
    /// A block that is an error when evaluation reaches it (schema errors and the like).
    Fatal(Vec<Diagnostic>),
}

/// `resource NAME { ... }`.
#[derive(Debug)]
pub struct Resource {
    pub name: Str,
    /// `self`.
    pub self_: Special,
    pub content: ResourceContent,
}

/// `self` or `each` in the frame: the variable's object at `slot`, then one slot per
/// attribute, in the order of `keys`. A reference through an attribute
/// (`each.value.name`, `self.resource.status`) reads the attribute's slot, so the object
/// is built only when something reads it whole (`whole`), and an attribute is looked up
/// only when read (`read`); the slots of what is not read hold null.
#[derive(Debug, Clone)]
pub struct Special {
    pub slot: u32,
    /// The attributes, sorted (the object's order).
    pub keys: Vec<Str>,
    pub whole: bool,
    /// Which attributes are read through their own slot.
    pub read: Vec<bool>,
}

impl Special {
    /// How many frame slots the variable takes (its object's and one per attribute).
    pub fn slots(&self) -> u32 {
        1 + self.keys.len() as u32
    }

    /// Whether the frame needs attribute `i`'s value (in its slot or in the object).
    pub fn needs(&self, i: usize) -> bool {
        self.whole || self.read.get(i).copied().unwrap_or(false)
    }
}

/// The content shared by `resource` and a collection's `template`.
#[derive(Debug)]
pub struct ResourceContent {
    /// The `resource` or `template` block's whole source range (`explain` matches blocks
    /// to the syntax tree by it).
    pub span: Span,
    pub locals: Locals,
    pub condition: Option<CAttr>,
    pub body: CExpr,
    /// hcl's `Variables()` of the body: re-evaluated to list "unknown values".
    pub body_vars: Vec<(Span, ChunkId)>,
    pub subs: Vec<Sub>,
}

/// Blocks nested in a resource, template or collection, in source order.
#[derive(Debug)]
pub enum Sub {
    Composite(Composite),
    Ready(Ready),
    Context(ContextBlock),
    /// Evaluated before the body (or the `for_each`) of the block that holds it.
    Assert(Assert),
    Fatal(Vec<Diagnostic>),
}

/// `resources BASENAME { ... }`.
#[derive(Debug)]
pub struct Collection {
    /// The block's whole source range (`explain` matches blocks to the syntax tree by it).
    pub span: Span,
    pub base: Str,
    pub def_range: Span,
    /// The collection's `self` (basename, connections, resources).
    pub self_: Special,
    pub locals: Locals,
    pub condition: Option<CAttr>,
    pub for_each: CExpr,
    /// The name expression (the default `${self.basename}-${each.key}` when absent).
    pub name: CExpr,
    /// `each` in an iteration.
    pub each: Special,
    /// The template's `self` (the collection's and the member's attributes), declared
    /// after `each`.
    pub template_self: Special,
    /// The slot after the template's `self` that holds a member's index annotation, when
    /// the template's body has the collection's annotations compiled in
    /// ([`crate::lower::annotate`]); `None`: the evaluator adds them to each body.
    pub member_index: Option<u32>,
    pub template: ResourceContent,
    pub subs: Vec<Sub>,
}

/// `composite status|connection { ... }`.
#[derive(Debug)]
pub struct Composite {
    /// The block's whole source range (`explain` matches blocks to the syntax tree by it).
    pub span: Span,
    pub kind: CompositeKind,
    /// The label's range (for `analyze` to point at an invalid label).
    pub label_range: Span,
    pub locals: Locals,
    pub body: CExpr,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CompositeKind {
    Status,
    Connection,
    /// Any other label: an error when reached.
    Invalid(String),
}

/// `context { key = ..., value = ... }`.
#[derive(Debug)]
pub struct ContextBlock {
    /// The block's whole source range (`explain` matches blocks to the syntax tree by it).
    pub span: Span,
    pub locals: Locals,
    pub key: CExpr,
    pub value: CExpr,
}

/// `assert { assertion = ...  message = ...  warning = ... }` (fn-hcl's extension, from
/// Terramate): a false assertion is a Fatal result carrying the message, or a warning
/// when `warning` is true.
#[derive(Debug)]
pub struct Assert {
    /// The block's whole source range (`explain` matches blocks to the syntax tree by it).
    pub span: Span,
    /// hcl's `DefRange` of the block (the `assert` keyword): where the result points.
    pub def_range: Span,
    pub assertion: CExpr,
    pub message: CExpr,
    pub warning: Option<CExpr>,
}

/// `ready { value = ... }`.
#[derive(Debug)]
pub struct Ready {
    /// The block's whole source range (`explain` matches blocks to the syntax tree by it).
    pub span: Span,
    pub locals: Locals,
    pub value: CExpr,
}

/// `requirement NAME { ... }`.
#[derive(Debug)]
pub struct Requirement {
    /// The block's whole source range (`explain` matches blocks to the syntax tree by it).
    pub span: Span,
    pub name: Str,
    pub def_range: Span,
    /// Which of apiVersion, kind and the matcher are constants (no variables, no function
    /// calls): Go type-checks those before evaluating anything else in the requirement.
    pub constant: [bool; 3],
    pub locals: Locals,
    pub condition: Option<CAttr>,
    pub select_range: Span,
    pub api_version: CExpr,
    pub kind: CExpr,
    pub matcher: Matcher,
}

#[derive(Debug)]
pub enum Matcher {
    Name(CExpr),
    Labels(CExpr),
}

/// Name resolution while lowering: a stack of frames of (name, slot), with the static
/// type of what each slot holds.
///
/// The frames are one flat list (`marks` says where each frame starts) and `by_name`
/// maps a name to its innermost slot; each entry remembers the slot it shadowed, so
/// popping a frame restores the outer names without a list per name (declaring a name
/// is one map insert, no allocation beyond the map's growth).
struct Scopes {
    /// (name, slot, the slot of the same name this one shadows), in declaration order.
    entries: Vec<(Str, u32, Option<u32>)>,
    /// Where each pushed frame starts in `entries`.
    marks: Vec<usize>,
    /// Name → its innermost slot (O(1) lookups for huge scopes).
    by_name: HashMap<Str, u32, ahash::RandomState>,
    next: u32,
    max: u32,
    types: Vec<SType>,
    /// The declared variables with a slot per attribute (their object's slot and
    /// attributes, see [`Special`]), innermost last.
    specials: Vec<(u32, &'static [&'static str])>,
}

impl Scopes {
    fn new() -> Scopes {
        Scopes {
            entries: Vec::new(),
            marks: Vec::new(),
            by_name: HashMap::default(),
            next: 0,
            max: 0,
            types: Vec::new(),
            specials: Vec::new(),
        }
    }

    /// The program's top scope: room for a typical program's names up front, so that
    /// lowering does not regrow the map and lists name by name.
    fn for_program() -> Scopes {
        Scopes {
            entries: Vec::with_capacity(16),
            marks: Vec::with_capacity(8),
            by_name: HashMap::with_capacity_and_hasher(16, ahash::RandomState::default()),
            next: 0,
            max: 0,
            types: Vec::with_capacity(16),
            specials: Vec::new(),
        }
    }

    fn declare(&mut self, name: &str) -> u32 {
        self.declare_str(Str::from(name))
    }

    /// `declare` of a name the caller already holds as a shared string (no copy).
    fn declare_str(&mut self, name: Str) -> u32 {
        let slot = self.next;
        self.next += 1;
        self.max = self.max.max(self.next);
        let shadowed = self.by_name.insert(name.clone(), slot);
        self.entries.push((name, slot, shadowed));
        self.set_type(slot, SType::Dynamic);
        slot
    }

    /// Declare `self` or `each`: its object's slot, then one slot per attribute (in the
    /// order of `attrs`), which references through an attribute read instead.
    fn declare_special(&mut self, name: &str, attrs: &'static [&'static str]) -> u32 {
        let slot = self.declare(name);
        self.set_type(slot, self_type(attrs));
        self.next += attrs.len() as u32;
        self.max = self.max.max(self.next);
        self.specials.push((slot, attrs));
        slot
    }

    fn set_type(&mut self, slot: u32, t: SType) {
        let i = slot as usize;
        if self.types.len() <= i {
            self.types.resize(i + 1, SType::Dynamic);
        }
        self.types[i] = t;
    }

    fn push(&mut self) -> u32 {
        self.marks.push(self.entries.len());
        self.next
    }

    fn pop(&mut self, saved: u32) {
        let mark = self.marks.pop().unwrap_or(0);
        while self.entries.len() > mark {
            let Some((name, _, shadowed)) = self.entries.pop() else {
                break;
            };
            match shadowed {
                Some(outer) => {
                    if let Some(v) = self.by_name.get_mut(&name) {
                        *v = outer;
                    }
                }
                None => {
                    self.by_name.remove(&name);
                }
            }
        }
        self.specials.retain(|&(slot, _)| slot < saved);
        self.next = saved;
    }

    fn has(&self, name: &str) -> bool {
        self.resolve(name).is_some()
    }
}

impl Scope for Scopes {
    fn resolve(&self, name: &str) -> Option<u32> {
        self.by_name.get(name).copied()
    }

    fn resolve_field(&self, name: &str, attr: &str) -> Option<u32> {
        let slot = self.resolve(name)?;
        let &(_, attrs) = self.specials.iter().rev().find(|(s, _)| *s == slot)?;
        let i = attrs.iter().position(|a| *a == attr)?;
        Some(slot + 1 + i as u32)
    }

    fn visible_names(&self) -> Vec<Str> {
        // Enough to tell whether a suggestion is looked for at all (see `suggest`): a
        // program with many names and many mistakes must not copy all names per mistake.
        self.entries
            .iter()
            .filter(|(n, _, _)| &**n != annotate::MEMBER_INDEX)
            .take(crate::text::suggest::MAX_CANDIDATES + 1)
            .map(|(n, _, _)| n.clone())
            .collect()
    }
}

impl TypeEnv for Scopes {
    fn var_type(&self, name: &str) -> Option<SType> {
        let slot = self.resolve(name)?;
        Some(
            self.types
                .get(slot as usize)
                .cloned()
                .unwrap_or(SType::Dynamic),
        )
    }
}

/// Every `invoke(...)` call in an expression.
fn invokes<'a>(e: &'a Expr, out: &mut Vec<&'a Expr>) {
    visit(e, &mut |x| {
        if let ExprKind::Call { name, .. } = &x.kind
            && &*name.name == "invoke"
        {
            out.push(x);
        }
    });
}

/// True if an expression evaluates the same in an empty context: no variables and no
/// function calls (Go checks requirement selectors that way before evaluating them).
pub fn is_constant(e: &Expr) -> bool {
    let mut constant = variables(e).is_empty();
    visit(e, &mut |x| {
        if matches!(x.kind, ExprKind::Call { .. }) {
            constant = false;
        }
    });
    constant
}

/// A function block declared (name and arguments) but not yet defined (locals, body).
struct FnDecl<'a> {
    id: FnId,
    /// The function's name (kept here: finding it again by id scanned every function).
    name: String,
    content: Content<'a>,
    args: Vec<Str>,
}

/// Lowers a parsed program.
pub struct Lowerer<'a> {
    files: &'a [ast::File],
    builder: CodeBuilder,
    scopes: Scopes,
    default_name: Expr,
    functions: HashMap<String, FnId>,
    analysis: Vec<Diagnostic>,
    types: HashMap<ChunkId, SType>,
    /// Each user function's args: (name, has a default).
    fn_args: HashMap<String, Vec<(Str, bool)>>,
    user_functions: Vec<UserFunction>,
    /// Each lowered user function's body type (what `invoke` of it returns).
    fn_types: HashMap<String, SType>,
    /// See [`Program::portability`].
    portability: Vec<Diagnostic>,
    /// For `explain`: how many more nodes [`Program::parts`] may compile (`None`: none).
    explain_left: Option<usize>,
    parts: Parts,
}

/// The type environment while lowering: slots' types and user functions' result types.
struct Env<'s> {
    scopes: &'s Scopes,
    fns: &'s HashMap<String, SType>,
}

impl TypeEnv for Env<'_> {
    fn var_type(&self, name: &str) -> Option<SType> {
        self.scopes.var_type(name)
    }
    fn function_type(&self, name: &str) -> Option<SType> {
        self.fns.get(name).cloned()
    }
}

/// Build the AST of the default collection name `${self.basename}-${each.key}` in its own
/// file, `default-name.hcl`, as the Go implementation parses it.
fn default_name_expr(file: FileId) -> Expr {
    let pos = |col: u32| Pos {
        byte: col - 1,
        line: 1,
        col,
    };
    let sp = |a: u32, b: u32| Span::new(file, pos(a), pos(b));
    let var = |name: &str, a: u32, b: u32| Expr {
        kind: ExprKind::Variable(ast::Ident {
            name: Str::from(name),
            span: sp(a, b),
        }),
        span: sp(a, b),
    };
    let get = |obj: Expr, name: &str, a: u32, b: u32, end: u32| Expr {
        span: sp(obj.span.start.col, end),
        kind: ExprKind::GetAttr {
            obj: Box::new(obj),
            name: ast::Ident {
                name: Str::from(name),
                span: sp(a, b),
            },
        },
    };
    // ${self.basename}-${each.key}
    // 1234567890123456789012345678
    let basename = get(var("self", 3, 7), "basename", 8, 16, 16);
    let key = get(var("each", 20, 24), "key", 25, 28, 28);
    Expr {
        span: sp(1, 29),
        kind: ExprKind::Template(ast::Template {
            parts: vec![
                TemplatePart::Interp(basename),
                TemplatePart::Literal {
                    text: Str::from("-"),
                    span: sp(17, 18),
                },
                TemplatePart::Interp(key),
            ],
        }),
    }
}

/// Why a program could not be loaded: the diagnostics the Go implementation stops at
/// (parse errors, top-level schema, user functions), with the sources to print them.
#[derive(Debug)]
pub struct LoadError {
    pub diags: Vec<Diagnostic>,
    pub sources: Arc<SourceMap>,
}

impl LoadError {
    /// The Fatal result's message, as Go prints it: `evaluate hcl: ` then hcl's
    /// `Diagnostics.Error()` of the diagnostics, errors first.
    pub fn message(&self) -> String {
        let mut d = self.diags.clone();
        d.sort_by_key(|x| u8::from(!x.is_error()));
        format!(
            "evaluate hcl: {}",
            crate::syntax::diag::plain_all(&d, &self.sources)
        )
    }
}

/// Parse and lower a program given as named files. `Err` holds the diagnostics of a
/// program the Go implementation refuses to load (parse, top-level schema, functions).
pub fn compile_files(files: &[(String, String)]) -> Result<Program, LoadError> {
    let (sm, parsed) = parse_files(files)?;
    compile_parsed(sm, &parsed)
}

/// [`compile_files`] for `explain`: every sub-expression it may fold is compiled too
/// ([`Program::parts`]); also returns the syntax trees (file `i` is `FileId(i)`).
pub fn compile_for_explain(
    files: &[(String, String)],
) -> Result<(Program, Vec<ast::File>), LoadError> {
    let (sm, parsed) = parse_files(files)?;
    let program = lower_parsed(sm, &parsed, Some(EXPLAIN_NODES))?;
    Ok((program, parsed))
}

/// The most expression nodes compiled again as sub-expressions for `explain` (the sum
/// grows with nesting depth times size; past it, deeper parts are not folded).
pub const EXPLAIN_NODES: usize = 1_000_000;

fn parse_files(files: &[(String, String)]) -> Result<(SourceMap, Vec<ast::File>), LoadError> {
    let mut sm = SourceMap::new();
    let ids: Vec<FileId> = files
        .iter()
        .map(|(n, t)| sm.add(n.as_str(), t.as_str()))
        .collect();
    let mut parsed = Vec::with_capacity(ids.len());
    let mut tokens_left = crate::syntax::parser::MAX_PROGRAM_TOKENS;
    for id in &ids {
        match crate::syntax::parser::parse_program_file(&sm, *id, &mut tokens_left) {
            Ok(f) => parsed.push(f),
            Err(diags) => {
                return Err(LoadError {
                    diags,
                    sources: Arc::new(sm),
                });
            }
        }
    }
    Ok((sm, parsed))
}

/// Lower files already parsed without errors: `parsed[i]` is file `i` of `sm`, which
/// holds nothing else. The language server parses once, for its index and for this.
pub fn compile_parsed(sm: SourceMap, parsed: &[ast::File]) -> Result<Program, LoadError> {
    lower_parsed(sm, parsed, None)
}

/// [`compile_parsed`]; `explain`: the node budget of [`Program::parts`] (`None`: no parts).
fn lower_parsed(
    mut sm: SourceMap,
    parsed: &[ast::File],
    explain: Option<usize>,
) -> Result<Program, LoadError> {
    let huge = literals_out_of_range(parsed);
    if !huge.is_empty() {
        return Err(LoadError {
            diags: huge,
            sources: Arc::new(sm),
        });
    }
    let default_file = sm.add("default-name.hcl", "${self.basename}-${each.key}");
    let sm = Arc::new(sm);
    let lowerer = Lowerer {
        files: parsed,
        builder: CodeBuilder::new(sm.clone()),
        scopes: Scopes::for_program(),
        default_name: default_name_expr(default_file),
        functions: HashMap::new(),
        analysis: Vec::new(),
        types: HashMap::new(),
        fn_args: HashMap::new(),
        user_functions: Vec::new(),
        fn_types: HashMap::new(),
        portability: Vec::new(),
        explain_left: explain,
        parts: Parts::default(),
    };
    lowerer
        .lower(sm.clone())
        .map_err(|diags| LoadError { diags, sources: sm })
}

/// Number literals whose value Go keeps but fn-hcl's number range cannot hold (they
/// would read as ±Inf or 0, see [`crate::value::number::Number::parse_in_range`]): the
/// program is refused with one error naming each, never run with a wrong value.
fn literals_out_of_range(files: &[ast::File]) -> Vec<Diagnostic> {
    fn body<'b>(b: &'b Body, out: &mut Vec<&'b Expr>) {
        for item in &b.items {
            match item {
                ast::BodyItem::Attribute(a) => visit(&a.expr, &mut |e| {
                    if matches!(e.kind, ExprKind::Number(_)) {
                        out.push(e);
                    }
                }),
                ast::BodyItem::Block(b) => body(&b.body, out),
            }
        }
    }
    let mut literals = Vec::new();
    for f in files {
        body(&f.body, &mut literals);
    }
    literals
        .into_iter()
        .filter_map(|e| {
            let ExprKind::Number(text) = &e.kind else {
                return None;
            };
            crate::value::number::Number::parse_in_range(text)?.err()?;
            let shown: String = text.chars().take(24).collect();
            let shown = if shown.len() < text.len() {
                format!("{shown}… ({} characters)", text.len())
            } else {
                shown
            };
            Some(Diagnostic::error(
                "Number literal out of range",
                format!(
                    "The number {shown} is beyond the range fn-hcl holds exactly: magnitudes between 2^-{0} and 2^{0} (about 1e-39457 to 1e39456). Go's cty keeps it; fn-hcl refuses the program rather than compute with ±Inf or 0.",
                    crate::value::number::EXP_LIMIT
                ),
                e.span,
            ))
        })
        .collect()
}

/// A `function` or `arg` block's content and name, checked as Go loads them: the name
/// (its label) must be an identifier and a `description` a constant string. `who(name,
/// quoted)` names the block in the messages (the first one asks for a quoted name).
fn declared_block<'b>(
    b: &'b Block,
    schema: &schema::Schema,
    who: impl Fn(&str, bool) -> String,
) -> Result<(Content<'b>, String), Vec<Diagnostic>> {
    let (c, _) = schema::block_content(b, schema)?;
    let (name, range) = schema::first_label(b);
    if !schema::is_identifier(&name) {
        let summary = format!("{} : name must be an identifier", who(&name, true));
        return Err(vec![Diagnostic::error_at(summary, "", range)]);
    }
    if let Some(d) = c.attr("description")
        && static_string(&d.expr).is_none()
    {
        let summary = format!(
            "{} : description is not a constant string",
            who(&name, false)
        );
        return Err(vec![Diagnostic::error_at(summary, "", d.span)]);
    }
    Ok((c, name.to_string()))
}

/// Compile the `hcl` text of an `HclInput` (txtar).
pub fn compile_txtar(text: &str) -> Result<Program, LoadError> {
    let files = crate::syntax::txtar::parse(text).map_err(|e| LoadError {
        diags: vec![Diagnostic::error_no_range(e, "")],
        sources: Arc::new(SourceMap::new()),
    })?;
    compile_files(&files)
}

impl<'a> Lowerer<'a> {
    fn lower(mut self, sm: Arc<SourceMap>) -> Result<Program, Vec<Diagnostic>> {
        // Top-level schema of every file (load time in Go).
        let mut diags = Vec::new();
        let mut top: Vec<&'a Block> = Vec::new();
        let files = self.files;
        for f in files {
            let (c, d) = schema::content(
                &f.body,
                &schema::TOP,
                schema::file_missing_item_range(&f.body),
            );
            diags.extend(d);
            top.extend(c.blocks);
        }
        if crate::syntax::diag::has_errors(&diags) {
            return Err(diags);
        }
        // User functions (load time in Go).
        let fn_blocks: Vec<&Block> = top
            .iter()
            .copied()
            .filter(|b| &*b.kind.name == "function")
            .collect();
        let load_warnings = self.lower_functions(&fn_blocks)?;
        // fn-hcl: a non-literal invoke name is a load-time error everywhere.
        for b in &top {
            if let Some(d) = self.check_static_invokes(&b.body) {
                return Err(vec![d]);
            }
        }
        // The top level is a group with no condition.
        self.scopes.declare("req");
        let others: Vec<&'a Block> = top
            .iter()
            .copied()
            .filter(|b| &*b.kind.name != "function")
            .collect();
        let root = self.lower_group_blocks(Span::default(), None, &others);
        let frame_size = self.scopes.max.max(1);
        let mut program = Program {
            sources: sm,
            code: self.builder.finish(),
            root,
            frame_size,
            load_warnings,
            analysis: self.analysis,
            types: self.types,
            functions: self.user_functions,
            reads: crate::lower::reads::Reads::default(),
            portability: self.portability,
            parts: self.parts,
        };
        program.reads = crate::lower::reads::Reads::of(&program);
        Ok(program)
    }

    fn check_static_invokes(&self, body: &Body) -> Option<Diagnostic> {
        for item in &body.items {
            match item {
                ast::BodyItem::Attribute(a) => {
                    let mut calls = Vec::new();
                    invokes(&a.expr, &mut calls);
                    for c in calls {
                        if let ExprKind::Call { args, .. } = &c.kind
                            && let Some(first) = args.first()
                            && static_string(first).is_none()
                        {
                            return Some(Diagnostic::error_at(
                                "user function invocation is not via a static string",
                                "",
                                first.span,
                            ));
                        }
                    }
                }
                ast::BodyItem::Block(b) => {
                    if let Some(d) = self.check_static_invokes(&b.body) {
                        return Some(d);
                    }
                }
            }
        }
        None
    }

    fn compile(&mut self, e: &Expr) -> CExpr {
        self.compile_as(e, e)
    }

    /// [`Lowerer::compile`] of `e` whose chunk runs `run` instead: `e` with what no program
    /// can write (a collection's annotations, [`annotate`]). `e`, what the program says, is
    /// the one analyzed, typed and explained.
    fn compile_as(&mut self, e: &Expr, run: &Expr) -> CExpr {
        self.analyze_expr(e);
        let env = Env {
            scopes: &self.scopes,
            fns: &self.fn_types,
        };
        let ty = crate::lower::types::infer(e, &env, &mut self.analysis);
        let chunk = self.builder.compile_expr(run, &self.scopes);
        self.types.insert(chunk, ty);
        if self.explain_left.is_some() {
            let mut parts = vec![(e.span, chunk)];
            self.compile_parts(e, &mut parts);
            self.parts.by_root.insert(chunk, parts);
        }
        CExpr {
            chunk,
            range: e.span,
        }
    }

    /// `explain`: compile each foldable sub-expression of `e` on its own chunk.
    fn compile_parts(&mut self, e: &Expr, out: &mut Vec<(Span, ChunkId)>) {
        let mut kids = Vec::new();
        crate::syntax::visit::foldable_children(e, &mut |c| kids.push(c));
        for c in kids {
            if matches!(
                c.kind,
                ExprKind::Null | ExprKind::Bool(_) | ExprKind::Number(_)
            ) {
                continue;
            }
            let mut size = 0usize;
            visit(c, &mut |_| size += 1);
            let left = self.explain_left.unwrap_or(0);
            if size > left {
                self.explain_left = Some(0);
                self.parts.truncated = true;
                return;
            }
            self.explain_left = Some(left - size);
            let chunk = self.builder.compile_expr(c, &self.scopes);
            out.push((c.span, chunk));
            self.compile_parts(c, out);
        }
    }

    /// `analyze`: a block attribute whose static type certainly breaks the rule the
    /// block applies at run time (condition → bool, body → object, ...).
    fn check_type(&mut self, e: &CExpr, bad: fn(&SType) -> bool, what: &str, want: &str) {
        let t = self.types.get(&e.chunk).cloned().unwrap_or(SType::Dynamic);
        if bad(&t) {
            self.analysis.push(Diagnostic::warning(
                format!("Invalid {what}"),
                format!("The {what} must be {want}, but this expression is always {t}."),
                e.range,
            ));
        }
    }

    fn compile_condition(&mut self, a: &Attribute) -> CAttr {
        let c = self.compile_attr(a);
        self.check_type(
            &c.expr,
            |t| *t != SType::Bool && t.is_known(),
            "condition",
            "a bool",
        );
        c
    }

    /// Record what the Go implementation would only find at run time (or never): unknown
    /// names, unknown `req` fields, unknown functions, `invoke` of a missing function.
    fn analyze_expr(&mut self, e: &Expr) {
        for v in variables(e) {
            if !self.scopes.has(&v.name) {
                let names: Vec<Str> = self.scopes.visible_names();
                let names: Vec<&str> = names.iter().map(|n| &**n).collect();
                let hint = match special_hint(&v.name) {
                    Some(h) => format!(" {h}"),
                    None => crate::text::suggest::suggest(&v.name, names.iter().copied())
                        .map(|s| format!(" Did you mean {s:?}?"))
                        .unwrap_or_default(),
                };
                self.analysis.push(Diagnostic::error_at(
                    "Unknown variable",
                    format!("There is no variable named {:?}.{hint}", &*v.name),
                    v.root,
                ));
            }
        }
        let mut found = Vec::new();
        visit(e, &mut |x| match &x.kind {
            ExprKind::GetAttr { obj, name } => {
                if let ExprKind::Variable(root) = &obj.kind
                    && &*root.name == "req"
                    && !REQ_FIELDS.contains(&&*name.name)
                {
                    let hint =
                        crate::text::suggest::suggest(&name.name, REQ_FIELDS.iter().copied())
                            .map(|s| format!(" Did you mean {s:?}?"))
                            .unwrap_or_default();
                    found.push(Diagnostic::error(
                        "Unsupported attribute",
                        format!(
                            "`req` has no field named {:?}; the expression is always incomplete.{hint}",
                            &*name.name
                        ),
                        name.span,
                    ));
                }
            }
            ExprKind::Call { name, args, .. } => {
                let n = &*name.name;
                if n == "invoke" {
                    if let Some(fname) = args.first().and_then(static_string)
                        && !self.functions.contains_key(&*fname)
                    {
                        found.push(Diagnostic::error(
                            "Call to unknown user function",
                            format!(
                                "There is no function block named {fname:?}; the call always fails."
                            ),
                            x.span,
                        ));
                    }
                    found.extend(self.check_invoke_args(x));
                } else if n != "try" && n != "can" && crate::builtins::lookup(n).is_none() {
                    found.push(Diagnostic::error(
                        "Call to unknown function",
                        crate::builtins::unknown_function_detail(n),
                        name.span,
                    ));
                }
            }
            _ => {}
        });
        self.analysis.extend(found);
    }

    /// `analyze`: an `invoke` of a known function whose argument object certainly does not
    /// match the function's args (Go fails the call at run time, with these messages).
    fn check_invoke_args(&self, call: &Expr) -> Vec<Diagnostic> {
        let ExprKind::Call {
            name,
            args,
            open_paren,
            ..
        } = &call.kind
        else {
            return Vec::new();
        };
        let (Some(fname), Some(arg)) = (args.first().and_then(static_string), args.get(1)) else {
            return Vec::new();
        };
        let Some(params) = self.fn_args.get(&*fname) else {
            return Vec::new();
        };
        let range = name.span.to(*open_paren);
        let fail = |why: String| {
            Diagnostic::error(
                "Error in function call",
                format!("Call to function \"invoke\" failed: {why}."),
                range,
            )
        };
        let t = crate::lower::types::infer(arg, &self.scopes, &mut Vec::new());
        if t.certainly_not_object() {
            return vec![fail(format!(
                "arguments to user function '{fname}' is not an object, found {t}"
            ))];
        }
        let ExprKind::Object(items) = &arg.kind else {
            return Vec::new();
        };
        let mut keys: Vec<String> = Vec::new();
        for it in items {
            match &it.key {
                ast::ObjectKey::Ident(id) => keys.push(id.name.to_string()),
                ast::ObjectKey::Expr(k) => match (&k.kind, static_string(k)) {
                    (ExprKind::Variable(id), _) => keys.push(id.name.to_string()),
                    (_, Some(s)) => keys.push(s.to_string()),
                    _ => return Vec::new(),
                },
            }
        }
        // Sets, not scans: a call with N arguments must cost N, not N².
        let given: std::collections::HashSet<&str, ahash::RandomState> =
            keys.iter().map(String::as_str).collect();
        let declared: std::collections::HashSet<&str, ahash::RandomState> =
            params.iter().map(|(p, _)| &**p).collect();
        let mut out = Vec::new();
        for (p, has_default) in params {
            if !has_default && !given.contains(&**p) {
                out.push(fail(format!(
                    "function: {fname}, argument {:?} expected but not supplied",
                    &**p
                )));
            }
        }
        for k in &keys {
            if !declared.contains(k.as_str()) {
                out.push(fail(format!("function: {fname}, invalid argument {k:?}")));
            }
        }
        out
    }

    fn compile_attr(&mut self, a: &Attribute) -> CAttr {
        CAttr {
            expr: self.compile(&a.expr),
            range: a.span,
        }
    }

    /// Lower the locals blocks of a body (already in `content.blocks`), declaring their
    /// names in the current scope frame.
    fn lower_locals(&mut self, content: &Content<'a>) -> Locals {
        let base = self.scopes.next;
        let mut locals = Locals {
            base,
            ..Locals::default()
        };
        let mut attrs: Vec<&Attribute> = Vec::new();
        for b in content.blocks_of("locals") {
            let (a, d) = schema::just_attributes(&b.body);
            if let Some(first) = d.into_iter().next() {
                locals.error = Some(first);
                let all: Vec<&Attribute> = content
                    .blocks_of("locals")
                    .flat_map(|b| b.body.attributes())
                    .collect();
                self.declare_after_error(&all);
                return locals;
            }
            attrs.extend(a);
        }
        if attrs.is_empty() {
            return locals;
        }
        let mut index: HashMap<&str, usize> = HashMap::new();
        for (i, a) in attrs.iter().enumerate() {
            let name = &*a.name.name;
            if index.contains_key(name) {
                locals.error = Some(Diagnostic::error(
                    format!("local {name:?}: duplicate local declaration"),
                    "",
                    a.span,
                ));
                self.declare_after_error(&attrs);
                return locals;
            }
            if self.scopes.has(name) {
                locals.error = Some(Diagnostic::error_at(
                    "attempt to shadow variable",
                    name.to_string(),
                    a.span,
                ));
                self.declare_after_error(&attrs);
                return locals;
            }
            index.insert(name, i);
        }
        // Dependencies, checking for references to names that exist nowhere.
        let mut deps: Vec<Vec<usize>> = Vec::with_capacity(attrs.len());
        for a in &attrs {
            let mut d = Vec::new();
            for v in variables(&a.expr) {
                if let Some(&j) = index.get(&*v.name) {
                    d.push(j);
                } else if !self.scopes.has(&v.name) {
                    locals.error = Some(Diagnostic::error_at(
                        "reference to non-existent variable",
                        v.name.to_string(),
                        v.traversal,
                    ));
                    let mut names: Vec<Str> = self.scopes.visible_names();
                    names.extend(attrs.iter().map(|a| a.name.name.clone()));
                    let names: Vec<&str> = names.iter().map(|n| &**n).collect();
                    locals.hint = Some(match special_hint(&v.name) {
                        Some(h) => h.to_string(),
                        None => crate::text::suggest::suggest(&v.name, names.iter().copied())
                            .map(|s| format!("Did you mean {s:?}?"))
                            .unwrap_or_default(),
                    })
                    .filter(|h| !h.is_empty());
                    self.declare_after_error(&attrs);
                    return locals;
                }
            }
            deps.push(d);
        }
        // Dependency order, iteratively, reporting the first cycle as Go prints it.
        let order = match topo_order(&deps) {
            Ok(o) => o,
            Err(cycle) => {
                let names: Vec<&str> = cycle.iter().map(|&i| &*attrs[i].name.name).collect();
                let last = *cycle.last().unwrap_or(&0);
                let range = attrs[last].expr.span;
                locals.error = Some(Diagnostic::error_at(
                    format!("cycle found: {}", names.join(" \u{2192} ")),
                    "",
                    range,
                ));
                self.declare_after_error(&attrs);
                return locals;
            }
        };
        for &i in &order {
            self.scopes.declare_str(attrs[i].name.name.clone());
        }
        for &i in &order {
            let expr = self.compile(&attrs[i].expr);
            let t = self
                .types
                .get(&expr.chunk)
                .cloned()
                .unwrap_or(SType::Dynamic);
            self.scopes
                .set_type(locals.base + locals.defs.len() as u32, t);
            locals.defs.push(LocalDef {
                name: attrs[i].name.name.clone(),
                expr,
            });
        }
        locals
    }

    /// After a locals error (the scope is fatal when reached and never runs), declare its
    /// names anyway so that `analyze` does not also report every use of them as unknown.
    fn declare_after_error(&mut self, attrs: &[&Attribute]) {
        for a in attrs {
            if !self.scopes.has(&a.name.name) {
                self.scopes.declare_str(a.name.name.clone());
            }
        }
    }

    /// Lower the blocks of a group body (top level: `cond` is None).
    fn lower_group_blocks(
        &mut self,
        span: Span,
        cond: Option<&'a Attribute>,
        blocks: &[&'a Block],
    ) -> Group {
        let saved = self.scopes.push();
        let content = Content {
            attrs: cond.into_iter().collect(),
            blocks: blocks.to_vec(),
        };
        let locals = self.lower_locals(&content);
        let condition = cond.map(|a| self.compile_condition(a));
        let mut items = Vec::new();
        for b in blocks {
            let item = match &*b.kind.name {
                "locals" | "function" => continue,
                "group" => schema::block_content(b, &schema::GROUP).map(|(c, _)| {
                    Item::Group(self.lower_group_blocks(b.span, c.attr("condition"), &c.blocks))
                }),
                "resource" => self.lower_resource(b).map(Item::Resource),
                "resources" => self.lower_collection(b).map(Item::Collection),
                "composite" => self.lower_composite(b).map(Item::Composite),
                "context" => self.lower_context(b).map(Item::Context),
                "requirement" => self.lower_requirement(b).map(Item::Requirement),
                "assert" => self.lower_assert(b).map(Item::Assert),
                other => Err(vec![Diagnostic::error_at(
                    format!("unsupported block type {other}"),
                    "",
                    schema::def_range(b),
                )]),
            };
            items.push(item.unwrap_or_else(Item::Fatal));
        }
        self.scopes.pop(saved);
        Group {
            span,
            locals,
            condition,
            items,
        }
    }

    fn lower_resource(&mut self, b: &'a Block) -> Result<Resource, Vec<Diagnostic>> {
        let (name, _) = schema::first_label(b);
        let (c, _) = schema::block_content(b, &schema::RESOURCE)?;
        let saved = self.scopes.push();
        let self_slot = self.scopes.declare_special("self", RESOURCE_SELF);
        let mark = self.builder.code_len();
        let content = self.lower_resource_content(b.span, &c, true, None);
        let self_ = self.special(self_slot, RESOURCE_SELF, mark);
        self.scopes.pop(saved);
        Ok(Resource {
            name,
            self_,
            content,
        })
    }

    /// `self` or `each`, declared at `slot` with `attrs`, as the code compiled since
    /// `mark` (all of its scope's) reads it: whole, or which attributes.
    fn special(&self, slot: u32, attrs: &'static [&'static str], mark: usize) -> Special {
        let mut out = Special {
            slot,
            keys: attrs.iter().map(|a| Str::from(*a)).collect(),
            whole: false,
            read: vec![false; attrs.len()],
        };
        for s in self.builder.slots_read_since(mark) {
            if s == slot {
                out.whole = true;
            } else if let Some(r) = s
                .checked_sub(slot + 1)
                .and_then(|i| out.read.get_mut(i as usize))
            {
                *r = true;
            }
        }
        out
    }

    /// The content of a resource or template (the caller has declared `self`). `annotated`:
    /// the body with its collection's annotations, compiled in its place
    /// ([`annotate::annotated`]; the caller has declared [`annotate::MEMBER_INDEX`]).
    fn lower_resource_content(
        &mut self,
        span: Span,
        c: &Content<'a>,
        with_condition: bool,
        annotated: Option<&Expr>,
    ) -> ResourceContent {
        let saved = self.scopes.push();
        let locals = self.lower_locals(c);
        let condition = if with_condition {
            c.attr("condition").map(|a| self.compile_condition(a))
        } else {
            None
        };
        // Content guarantees the required body attribute is present.
        let body_attr = c.attr("body");
        let (body, body_vars) = match body_attr {
            Some(a) => {
                let body = self.compile_as(&a.expr, annotated.unwrap_or(&a.expr));
                self.check_type(&body, SType::certainly_not_object, "body", "an object");
                (body, self.builder.compile_traversals(&a.expr, &self.scopes))
            }
            None => (
                self.compile(&Expr {
                    kind: ExprKind::Null,
                    span: Span::default(),
                }),
                Vec::new(),
            ),
        };
        let subs = self.lower_subs(c);
        self.scopes.pop(saved);
        ResourceContent {
            span,
            locals,
            condition,
            body,
            body_vars,
            subs,
        }
    }

    /// The blocks a resource, template or collection holds besides its locals (and a
    /// collection's template), in order; the schema admits only the block types each has.
    fn lower_subs(&mut self, c: &Content<'a>) -> Vec<Sub> {
        let mut subs = Vec::new();
        for sb in &c.blocks {
            let sub = match &*sb.kind.name {
                "composite" => self.lower_composite(sb).map(Sub::Composite),
                "ready" => self.lower_ready(sb).map(Sub::Ready),
                "context" => self.lower_context(sb).map(Sub::Context),
                "assert" => self.lower_assert(sb).map(Sub::Assert),
                _ => continue,
            };
            subs.push(sub.unwrap_or_else(Sub::Fatal));
        }
        subs
    }

    fn lower_collection(&mut self, b: &'a Block) -> Result<Box<Collection>, Vec<Diagnostic>> {
        let (base, _) = schema::first_label(b);
        let (c, _) = schema::block_content(b, &schema::RESOURCES)?;
        let template = c.only_block("template").map_err(|second| {
            let (what, at) = match second {
                Some(t) => ("multiple template blocks", t),
                None => ("no template block", b),
            };
            vec![Diagnostic::error(
                format!("{what} for resource collection {base}"),
                "",
                schema::def_range(at),
            )]
        })?;
        let (tc, _) = schema::block_content(template, &schema::TEMPLATE)?;
        let saved = self.scopes.push();
        let self_slot = self.scopes.declare_special("self", COLLECTION_SELF);
        let self_mark = self.builder.code_len();
        let locals = self.lower_locals(&c);
        let condition = c.attr("condition").map(|a| self.compile_condition(a));
        let for_each = match c.attr("for_each") {
            Some(a) => {
                let e = self.compile(&a.expr);
                self.check_type(
                    &e,
                    SType::certainly_not_collection,
                    "for_each",
                    "a collection",
                );
                e
            }
            None => self.compile(&Expr {
                kind: ExprKind::Null,
                span: schema::missing_item_range(b),
            }),
        };
        // One iteration: `each`, then the template's own `self` (which shadows the
        // collection's: it is the merge of both).
        let iter_saved = self.scopes.push();
        let each_slot = self.scopes.declare_special("each", EACH_FIELDS);
        let each_mark = self.builder.code_len();
        // What the name and the template read below `each` is the same for every member.
        self.builder.set_invariant_below(Some(each_slot));
        let name = match c.attr("name") {
            Some(a) => self.compile(&a.expr),
            None => {
                let e = self.default_name.clone();
                self.compile(&e)
            }
        };
        self.check_type(
            &name,
            SType::certainly_not_string,
            "collection name",
            "a string",
        );
        let template_self = self.scopes.declare_special("self", TEMPLATE_SELF);
        let template_mark = self.builder.code_len();
        // `explain` matches the body's parts to its source: it gets the evaluator's way.
        let annotated = tc
            .attr("body")
            .filter(|_| self.explain_left.is_none())
            .and_then(|a| annotate::annotated(&a.expr, &base));
        let member_index = annotated
            .as_ref()
            .map(|_| self.scopes.declare(annotate::MEMBER_INDEX));
        let template = self.lower_resource_content(template.span, &tc, false, annotated.as_ref());
        self.builder.set_invariant_below(None);
        let template_self = self.special(template_self, TEMPLATE_SELF, template_mark);
        let each = self.special(each_slot, EACH_FIELDS, each_mark);
        self.scopes.pop(iter_saved);
        let subs = self.lower_subs(&c);
        let self_ = self.special(self_slot, COLLECTION_SELF, self_mark);
        self.scopes.pop(saved);
        Ok(Box::new(Collection {
            span: b.span,
            base,
            def_range: schema::def_range(b),
            self_,
            locals,
            condition,
            for_each,
            name,
            each,
            template_self,
            member_index,
            template,
            subs,
        }))
    }

    fn lower_composite(&mut self, b: &'a Block) -> Result<Composite, Vec<Diagnostic>> {
        let (c, d) = schema::block_content(b, &schema::COMPOSITE)?;
        let (label, label_range) = schema::first_label(b);
        let kind = match &*label {
            "status" => CompositeKind::Status,
            "connection" => CompositeKind::Connection,
            _ => CompositeKind::Invalid(label.to_string()),
        };
        let Some(body_attr) = c.attr("body") else {
            return Err(d);
        };
        let saved = self.scopes.push();
        let locals = self.lower_locals(&c);
        let body = self.compile(&body_attr.expr);
        self.check_type(&body, SType::certainly_not_object, "body", "an object");
        self.scopes.pop(saved);
        Ok(Composite {
            span: b.span,
            kind,
            label_range,
            locals,
            body,
        })
    }

    fn lower_context(&mut self, b: &'a Block) -> Result<ContextBlock, Vec<Diagnostic>> {
        let (c, d) = schema::block_content(b, &schema::CONTEXT)?;
        let (Some(k), Some(v)) = (c.attr("key"), c.attr("value")) else {
            return Err(d);
        };
        let saved = self.scopes.push();
        let locals = self.lower_locals(&c);
        let key = self.compile(&k.expr);
        self.check_type(&key, SType::certainly_not_string, "context key", "a string");
        let value = self.compile(&v.expr);
        self.scopes.pop(saved);
        Ok(ContextBlock {
            span: b.span,
            locals,
            key,
            value,
        })
    }

    fn lower_ready(&mut self, b: &'a Block) -> Result<Ready, Vec<Diagnostic>> {
        let (c, d) = schema::block_content(b, &schema::READY)?;
        let Some(v) = c.attr("value") else {
            return Err(d);
        };
        let saved = self.scopes.push();
        let locals = self.lower_locals(&c);
        let value = self.compile(&v.expr);
        self.check_type(
            &value,
            SType::certainly_not_string,
            "ready value",
            "a string",
        );
        self.scopes.pop(saved);
        Ok(Ready {
            span: b.span,
            locals,
            value,
        })
    }

    /// An `assert` block, in the scope that holds it. `analyze` reports an assertion that
    /// is never a bool and a message that is never a string as errors (the block fails
    /// whenever it runs), and `analyze --portable` the block itself.
    fn lower_assert(&mut self, b: &'a Block) -> Result<Assert, Vec<Diagnostic>> {
        let def_range = schema::def_range(b);
        self.portability.push(Diagnostic::warning(
            "Not portable: assert block",
            "`assert` is an fn-hcl extension; the Go implementation (function-hcl v0.2.0) \
             rejects it: Blocks of type \"assert\" are not expected here.",
            def_range,
        ));
        let (c, d) = schema::block_content(b, &schema::ASSERT)?;
        let (Some(a), Some(m)) = (c.attr("assertion"), c.attr("message")) else {
            return Err(d);
        };
        let assertion = self.compile(&a.expr);
        let message = self.compile(&m.expr);
        let warning = c.attr("warning").map(|w| self.compile(&w.expr));
        let never = |t: &SType, ok: &[SType]| t.is_known() && !ok.contains(t);
        for (e, what, want, ok) in [
            (Some(&assertion), "assertion", "a bool", &[SType::Bool][..]),
            (
                Some(&message),
                "assert message",
                "a string",
                &[SType::String, SType::Number, SType::Bool][..],
            ),
            (
                warning.as_ref(),
                "assert warning",
                "a bool",
                &[SType::Bool][..],
            ),
        ] {
            let Some(e) = e else { continue };
            let t = self.types.get(&e.chunk).cloned().unwrap_or(SType::Dynamic);
            if never(&t, ok) {
                self.analysis.push(Diagnostic::error(
                    format!("Invalid {what}"),
                    format!("The {what} must be {want}, but this expression is always {t}."),
                    e.range,
                ));
            }
        }
        Ok(Assert {
            span: b.span,
            def_range,
            assertion,
            message,
            warning,
        })
    }

    fn lower_requirement(&mut self, b: &'a Block) -> Result<Requirement, Vec<Diagnostic>> {
        let (name, _) = schema::first_label(b);
        let def_range = schema::def_range(b);
        let (c, _) = schema::block_content(b, &schema::REQUIREMENT)?;
        let err = |summary: &'static str, range: Span| {
            Err(vec![Diagnostic::error(summary, name.to_string(), range)])
        };
        let select = match c.only_block("select") {
            Ok(s) => s,
            Err(Some(second)) => {
                return err(
                    "multiple select blocks in requirement",
                    schema::def_range(second),
                );
            }
            Err(None) => return err("no select block in requirement", def_range),
        };
        let (sc, sd) = schema::block_content(select, &schema::SELECT)?;
        let select_range = schema::def_range(select);
        let (name_attr, labels_attr) = (sc.attr("matchName"), sc.attr("matchLabels"));
        let matcher_attr = match (name_attr, labels_attr) {
            (Some(_), Some(_)) => {
                return err(
                    "requirement selector has both matchName and matchLabels",
                    select_range,
                );
            }
            (None, None) => {
                return err(
                    "requirement selector has neither matchName nor matchLabels",
                    select_range,
                );
            }
            (Some(a), None) | (None, Some(a)) => a,
        };
        let (Some(av), Some(kd)) = (sc.attr("apiVersion"), sc.attr("kind")) else {
            return Err(sd);
        };
        let saved = self.scopes.push();
        let locals = self.lower_locals(&c);
        let condition = c.attr("condition").map(|a| self.compile_condition(a));
        let api_version = self.compile(&av.expr);
        let kind = self.compile(&kd.expr);
        let m = self.compile(&matcher_attr.expr);
        let not_string = SType::certainly_not_string;
        self.check_type(&api_version, not_string, "selector apiVersion", "a string");
        self.check_type(&kind, not_string, "selector kind", "a string");
        if name_attr.is_some() {
            self.check_type(&m, not_string, "selector matchName", "a string");
        } else {
            self.check_type(
                &m,
                SType::certainly_not_object,
                "selector matchLabels",
                "an object of strings",
            );
        }
        let matcher = if name_attr.is_some() {
            Matcher::Name(m)
        } else {
            Matcher::Labels(m)
        };
        self.scopes.pop(saved);
        Ok(Requirement {
            span: b.span,
            name,
            def_range,
            constant: [
                is_constant(&av.expr),
                is_constant(&kd.expr),
                is_constant(&matcher_attr.expr),
            ],
            locals,
            condition,
            select_range,
            api_version,
            kind,
            matcher,
        })
    }

    /// Function blocks: checked and compiled at load time, as Go does. Every function is
    /// declared first (its name and arguments), so that bodies may invoke any of them.
    fn lower_functions(
        &mut self,
        blocks: &[&'a Block],
    ) -> Result<Vec<Diagnostic>, Vec<Diagnostic>> {
        let mut decls: Vec<FnDecl<'a>> = Vec::new();
        for b in blocks {
            decls.push(self.declare_function(b)?);
        }
        for d in decls {
            self.define_function(d)?;
        }
        Ok(Vec::new())
    }

    /// A function block's name and arguments (defaults compiled), declared to the builder.
    fn declare_function(&mut self, b: &'a Block) -> Result<FnDecl<'a>, Vec<Diagnostic>> {
        // Go quotes the function's name in the first message only.
        let (c, fn_name) = declared_block(b, &schema::FUNCTION, |name, quoted| {
            if quoted {
                format!("function {name:?}")
            } else {
                format!("function {name}")
            }
        })?;
        let mut args: Vec<(Str, Option<ChunkId>)> = Vec::new();
        // A set, not a scan per argument: N arguments cost N, not N².
        let mut seen: std::collections::HashSet<String, ahash::RandomState> = Default::default();
        for ab in c.blocks_of("arg") {
            let (arg_name, default) = self.function_arg(&fn_name, ab)?;
            if !seen.insert(arg_name.clone()) {
                let dr = schema::def_range(ab);
                return Err(vec![Diagnostic::error_at(
                    format!("function {fn_name}: duplicate definition of argument"),
                    arg_name,
                    dr,
                )]);
            }
            args.push((Str::from(arg_name.as_str()), default));
        }
        if self.functions.contains_key(&fn_name) {
            let dr = schema::def_range(b);
            return Err(vec![Diagnostic::error_at(
                "duplicate function declaration",
                fn_name.to_string(),
                dr,
            )]);
        }
        let arg_names: Vec<Str> = args.iter().map(|(n, _)| n.clone()).collect();
        self.fn_args.insert(
            fn_name.clone(),
            args.iter().map(|(n, d)| (n.clone(), d.is_some())).collect(),
        );
        let id = self.builder.declare_function(&fn_name, args);
        self.functions.insert(fn_name.clone(), id);
        Ok(FnDecl {
            id,
            name: fn_name,
            content: c,
            args: arg_names,
        })
    }

    /// One `arg` block of function `fn_name`: its name and its default, compiled (a
    /// default must be a constant).
    fn function_arg(
        &mut self,
        fn_name: &str,
        ab: &Block,
    ) -> Result<(String, Option<ChunkId>), Vec<Diagnostic>> {
        let (ac, arg_name) = declared_block(ab, &schema::ARG, |name, _| {
            format!("function {fn_name:?}, arg {name:?}")
        })?;
        let Some(da) = ac.attr("default") else {
            return Ok((arg_name, None));
        };
        // Go evaluates a default with no variables and no functions: any reference or call
        // makes it "not a constant".
        if !is_constant(&da.expr) {
            return Err(vec![Diagnostic::error_at(
                format!("function {fn_name:?}, args {arg_name:?}: default is not a constant"),
                "",
                da.span,
            )]);
        }
        let empty = Scopes::new();
        let default = self.builder.compile_expr(&da.expr, &empty);
        Ok((arg_name, Some(default)))
    }

    /// A declared function's locals and body, compiled in a scope of its arguments and
    /// defined to the builder.
    fn define_function(&mut self, d: FnDecl<'a>) -> Result<(), Vec<Diagnostic>> {
        let mut scopes = Scopes::new();
        for a in &d.args {
            scopes.declare_str(a.clone());
        }
        std::mem::swap(&mut self.scopes, &mut scopes);
        let locals = self.lower_locals(&d.content);
        let result = match locals.error.clone() {
            Some(e) => Err(vec![e]),
            None => self.function_body(&d),
        };
        let frame = self.scopes.max;
        std::mem::swap(&mut self.scopes, &mut scopes);
        let body = result?;
        let order: Vec<(u32, ChunkId)> = locals
            .defs
            .iter()
            .enumerate()
            .map(|(i, l)| (locals.base + i as u32, l.expr.chunk))
            .collect();
        self.builder.define_function(d.id, order, body.chunk, frame);
        let name = d.name;
        if let Some(t) = self.types.get(&body.chunk) {
            self.fn_types.insert(name.clone(), t.clone());
        }
        self.user_functions.push(UserFunction {
            args: self.fn_args.get(&name).cloned().unwrap_or_default(),
            name: Str::from(name.as_str()),
            frame_size: frame,
            locals,
            body,
        });
        Ok(())
    }

    /// A function's body (in the function's scope): it reads only args and locals, and
    /// invokes only declared functions, by a static name with two arguments.
    fn function_body(&mut self, d: &FnDecl<'a>) -> Result<CExpr, Vec<Diagnostic>> {
        let Some(body) = d.content.attr("body") else {
            return Err(Vec::new());
        };
        let fn_name = &d.name;
        for v in variables(&body.expr) {
            if !self.scopes.has(&v.name) {
                return Err(vec![Diagnostic::error_at(
                    format!("function {fn_name}: reference to non-existent variable"),
                    v.name.to_string(),
                    v.traversal,
                )]);
            }
        }
        let mut calls = Vec::new();
        invokes(&body.expr, &mut calls);
        for call in &calls {
            self.check_invoke_call(call)?;
        }
        for call in calls {
            let found = self.check_invoke_args(call);
            self.analysis.extend(found);
        }
        let env = Env {
            scopes: &self.scopes,
            fns: &self.fn_types,
        };
        let ty = crate::lower::types::infer(&body.expr, &env, &mut self.analysis);
        let chunk = self.builder.compile_expr(&body.expr, &self.scopes);
        self.types.insert(chunk, ty);
        Ok(CExpr {
            chunk,
            range: body.expr.span,
        })
    }

    /// An `invoke` in a function body: two arguments, the first a static string naming a
    /// declared function.
    fn check_invoke_call(&self, call: &Expr) -> Result<(), Vec<Diagnostic>> {
        let ExprKind::Call { args, .. } = &call.kind else {
            return Ok(());
        };
        if args.len() != 2 {
            return Err(vec![
                Diagnostic::error_at(
                    "user function invocation has incorrect number of arguments",
                    format!("want 2, got {}", args.len()),
                    call.span,
                )
                .with_context(call.span),
            ]);
        }
        match static_string(&args[0]) {
            None => Err(vec![Diagnostic::error(
                "user function invocation is not via a static string",
                "",
                args[0].span,
            )]),
            Some(n) if !self.functions.contains_key(&*n) => Err(vec![Diagnostic::error_at(
                format!("invoke called on unknown function: {n:?}"),
                "",
                args[0].span,
            )]),
            Some(_) => Ok(()),
        }
    }
}

/// Topological order of `deps` (edges i → j: i needs j), visiting in index order.
/// On a cycle, returns the path from the repeated node back to itself (`a → b → a`).
fn topo_order(deps: &[Vec<usize>]) -> Result<Vec<usize>, Vec<usize>> {
    #[derive(Clone, Copy, PartialEq)]
    enum State {
        New,
        Active,
        Done,
    }
    let n = deps.len();
    let mut state = vec![State::New; n];
    let mut order = Vec::with_capacity(n);
    for start in 0..n {
        if state[start] != State::New {
            continue;
        }
        // Iterative DFS: (node, next dependency index).
        let mut stack: Vec<(usize, usize)> = vec![(start, 0)];
        state[start] = State::Active;
        while let Some(&mut (node, ref mut next)) = stack.last_mut() {
            if let Some(&dep) = deps[node].get(*next) {
                *next += 1;
                match state[dep] {
                    State::Done => {}
                    State::Active => {
                        let pos = stack.iter().position(|(x, _)| *x == dep).unwrap_or(0);
                        let mut cycle: Vec<usize> = stack[pos..].iter().map(|(x, _)| *x).collect();
                        cycle.push(dep);
                        return Err(cycle);
                    }
                    State::New => {
                        state[dep] = State::Active;
                        stack.push((dep, 0));
                    }
                }
            } else {
                state[node] = State::Done;
                order.push(node);
                stack.pop();
            }
        }
    }
    Ok(order)
}

/// A readable dump of a program's IR, for reviewers and golden tests: the block tree
/// with each scope's frame slots (`@n`), locals in evaluation order, the static type and
/// source of every attribute, the errors deferred to where Go raises them, and what
/// `analyze` found while lowering.
pub fn dump(p: &Program) -> String {
    let mut d = Dumper {
        p,
        out: String::new(),
    };
    d.line(0, &format!("frame: {} slots; @0 = req", p.frame_size));
    for w in &p.load_warnings {
        d.line(0, &format!("load warning: {}", w.plain(&p.sources)));
    }
    for f in &p.functions {
        let args: Vec<String> = f
            .args
            .iter()
            .enumerate()
            .map(|(i, (n, default))| {
                format!("@{i} {n}{}", if *default { " (default)" } else { "" })
            })
            .collect();
        d.line(
            0,
            &format!(
                "function {} ({} slots; args {})",
                &*f.name,
                f.frame_size,
                args.join(", ")
            ),
        );
        d.locals(1, &f.locals);
        d.attr(1, "body", &f.body);
    }
    d.group(0, "top level", &p.root);
    if !p.analysis.is_empty() {
        d.line(0, "analysis:");
        for a in &p.analysis {
            d.line(1, &a.plain(&p.sources));
        }
    }
    d.out
}

struct Dumper<'p> {
    p: &'p Program,
    out: String,
}

impl Dumper<'_> {
    fn line(&mut self, indent: usize, text: &str) {
        for _ in 0..indent {
            self.out.push_str("  ");
        }
        self.out.push_str(text);
        self.out.push('\n');
    }

    /// `TYPE = SOURCE (RANGE)` for an expression, its source on one line, shortened.
    fn expr(&self, e: &CExpr) -> String {
        let sm = &self.p.sources;
        let text = sm
            .get(e.range.file)
            .and_then(|f| f.text.get(e.range.bytes()))
            .unwrap_or("");
        let one: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
        let short = if one.chars().count() > 48 {
            format!("{}...", one.chars().take(45).collect::<String>())
        } else {
            one
        };
        format!("{} = {short} ({})", self.p.type_of(e), sm.range(e.range))
    }

    fn attr(&mut self, indent: usize, name: &str, e: &CExpr) {
        let s = format!("{name}: {}", self.expr(e));
        self.line(indent, &s);
    }

    fn fatal(&mut self, indent: usize, ds: &[Diagnostic]) {
        for x in ds {
            let s = format!("deferred error: {}", x.plain(&self.p.sources));
            self.line(indent, &s);
        }
    }

    fn locals(&mut self, indent: usize, l: &Locals) {
        if let Some(e) = &l.error {
            let s = format!("locals: deferred error: {}", e.plain(&self.p.sources));
            self.line(indent, &s);
            return;
        }
        for (i, def) in l.defs.iter().enumerate() {
            let s = format!(
                "local @{} {}: {}",
                l.base + i as u32,
                &*def.name,
                self.expr(&def.expr)
            );
            self.line(indent, &s);
        }
    }

    /// A block's locals, then its condition.
    fn scope(&mut self, indent: usize, locals: &Locals, condition: Option<&CAttr>) {
        self.locals(indent, locals);
        if let Some(c) = condition {
            self.attr(indent, "condition", &c.expr);
        }
    }

    fn group(&mut self, indent: usize, title: &str, g: &Group) {
        self.line(indent, title);
        let i = indent + 1;
        self.scope(i, &g.locals, g.condition.as_ref());
        for item in &g.items {
            match item {
                Item::Group(sub) => self.group(i, "group", sub),
                Item::Resource(r) => {
                    let s = format!("resource {:?} (self {})", &*r.name, dump_special(&r.self_));
                    self.line(i, &s);
                    self.content(i + 1, &r.content);
                }
                Item::Collection(c) => {
                    let annotations = match c.member_index {
                        Some(slot) => format!("compiled in, index @{slot}"),
                        None => "added per member".to_string(),
                    };
                    let s = format!(
                        "resources {:?} (self {}, each {}, template self {}, annotations {})",
                        &*c.base,
                        dump_special(&c.self_),
                        dump_special(&c.each),
                        dump_special(&c.template_self),
                        annotations,
                    );
                    self.line(i, &s);
                    self.scope(i + 1, &c.locals, c.condition.as_ref());
                    self.attr(i + 1, "for_each", &c.for_each);
                    self.attr(i + 1, "name", &c.name);
                    self.line(i + 1, "template");
                    self.content(i + 2, &c.template);
                    self.subs(i + 1, &c.subs);
                }
                Item::Composite(c) => self.composite(i, c),
                Item::Context(c) => self.context(i, c),
                Item::Requirement(r) => {
                    let s = format!("requirement {:?}", &*r.name);
                    self.line(i, &s);
                    self.scope(i + 1, &r.locals, r.condition.as_ref());
                    self.attr(i + 1, "apiVersion", &r.api_version);
                    self.attr(i + 1, "kind", &r.kind);
                    match &r.matcher {
                        Matcher::Name(m) => self.attr(i + 1, "matchName", m),
                        Matcher::Labels(m) => self.attr(i + 1, "matchLabels", m),
                    }
                }
                Item::Assert(a) => self.assert(i, a),
                Item::Fatal(ds) => self.fatal(i, ds),
            }
        }
    }

    fn assert(&mut self, indent: usize, a: &Assert) {
        self.line(indent, "assert");
        self.attr(indent + 1, "assertion", &a.assertion);
        self.attr(indent + 1, "message", &a.message);
        if let Some(w) = &a.warning {
            self.attr(indent + 1, "warning", w);
        }
    }

    fn content(&mut self, indent: usize, c: &ResourceContent) {
        self.scope(indent, &c.locals, c.condition.as_ref());
        self.attr(indent, "body", &c.body);
        self.subs(indent, &c.subs);
    }

    fn subs(&mut self, indent: usize, subs: &[Sub]) {
        for s in subs {
            match s {
                Sub::Composite(c) => self.composite(indent, c),
                Sub::Ready(r) => {
                    self.line(indent, "ready");
                    self.locals(indent + 1, &r.locals);
                    self.attr(indent + 1, "value", &r.value);
                }
                Sub::Context(c) => self.context(indent, c),
                Sub::Assert(a) => self.assert(indent, a),
                Sub::Fatal(ds) => self.fatal(indent, ds),
            }
        }
    }

    fn composite(&mut self, indent: usize, c: &Composite) {
        let label = match &c.kind {
            CompositeKind::Status => "status".to_string(),
            CompositeKind::Connection => "connection".to_string(),
            CompositeKind::Invalid(l) => format!("{l:?} (invalid: deferred error)"),
        };
        self.line(indent, &format!("composite {label}"));
        self.locals(indent + 1, &c.locals);
        self.attr(indent + 1, "body", &c.body);
    }

    fn context(&mut self, indent: usize, c: &ContextBlock) {
        self.line(indent, "context");
        self.locals(indent + 1, &c.locals);
        self.attr(indent + 1, "key", &c.key);
        self.attr(indent + 1, "value", &c.value);
    }
}

/// `@slot` and what of the variable is read: `whole`, then the attributes read through
/// their own slots.
fn dump_special(s: &Special) -> String {
    let mut out = format!("@{}", s.slot);
    let read: Vec<&str> = s
        .keys
        .iter()
        .zip(&s.read)
        .filter(|(_, r)| **r)
        .map(|(k, _)| &**k)
        .collect();
    match (s.whole, read.is_empty()) {
        (true, _) => out.push_str(" whole"),
        (false, true) => out.push_str(" unread"),
        (false, false) => {}
    }
    if !read.is_empty() {
        out.push_str(&format!(" .{}", read.join(" .")));
    }
    out
}

/// The static type of `self` (or `each`): an object with these attributes (sorted), where
/// `name` and `basename` are strings and the rest depends on the request.
fn self_type(attrs: &[&str]) -> SType {
    SType::Object(
        attrs
            .iter()
            .map(|a| {
                let t = if matches!(*a, "name" | "basename") {
                    SType::String
                } else {
                    SType::Dynamic
                };
                (Str::from(*a), t)
            })
            .collect(),
    )
}

/// Where the special variables exist, for diagnostics about using them elsewhere.
pub fn special_hint(name: &str) -> Option<&'static str> {
    match name {
        "self" => {
            Some("`self` exists only in resource and resources blocks (and what they contain).")
        }
        "each" => Some("`each` exists only in a resources block's name and template."),
        "req" => Some("`req` does not exist in a function: pass what it needs as arguments."),
        _ => None,
    }
}

/// The fields of `self` in a `resource` block.
pub const RESOURCE_SELF: &[&str] = &["connection", "name", "resource"];
/// The fields of `self` in a `resources` block (outside its template).
pub const COLLECTION_SELF: &[&str] = &["basename", "connections", "resources"];
/// The fields of `self` in a `resources` block's template (the collection's and the
/// member's merged).
pub const TEMPLATE_SELF: &[&str] = &[
    "basename",
    "connection",
    "connections",
    "name",
    "resource",
    "resources",
];
/// The fields of `each` in a `resources` block's name and template.
pub const EACH_FIELDS: &[&str] = &["key", "value"];

/// The fields of `req`.
pub const REQ_FIELDS: &[&str] = &[
    "composite",
    "composite_connection",
    "resource",
    "connection",
    "resources",
    "connections",
    "context",
    "extra_resources",
];

/// Schema used for a group body.
pub const GROUP_SCHEMA: &Schema = &schema::GROUP;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn topo_orders_dependencies_first() {
        // 0 needs 1, 1 needs 2
        assert_eq!(topo_order(&[vec![1], vec![2], vec![]]), Ok(vec![2, 1, 0]));
    }

    #[test]
    fn topo_reports_cycles_as_paths() {
        assert_eq!(topo_order(&[vec![0]]), Err(vec![0, 0]));
        assert_eq!(topo_order(&[vec![1], vec![0]]), Err(vec![0, 1, 0]));
    }

    #[test]
    fn topo_handles_long_chains_without_recursion() {
        let n = 100_000;
        let deps: Vec<Vec<usize>> = (0..n)
            .map(|i| if i + 1 < n { vec![i + 1] } else { vec![] })
            .collect();
        let order = topo_order(&deps).expect("no cycle");
        assert_eq!(order.first(), Some(&(n - 1)));
        assert_eq!(order.len(), n);
    }
}
