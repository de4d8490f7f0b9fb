//! `fn-hcl explain`: a program partially evaluated against one request, as Terramate's
//! `generate_hcl` does (`spec/terramate-generate-hcl.md`, "Partial Evaluation").
//!
//! It is not a second evaluator. The program is compiled with every foldable
//! sub-expression on a chunk of its own ([`crate::lower::ir::compile_for_explain`]), the
//! ordinary evaluator runs it ([`evaluate_observed`]), and an [`Observer`] records each
//! block it enters and each expression it evaluates with the frame it used. Printing then
//! walks the syntax tree: an expression whose value the VM found known (and the same in
//! every evaluation, e.g. for every item of a collection) becomes that value as an HCL
//! literal; any other keeps its shape with its known parts folded, its sub-expressions
//! evaluated by the VM in the recorded frames. A reference that is not known (`self.resource
//! .status.x` before the resource is observed) stays as written, whole; those are the
//! "unknown references" that defer a block. Not folded: the inside of `for` expressions and
//! splats (they read names of their own), template directives, the branch a known
//! condition does not take, user function bodies. Comments of the source are not kept.
//!
//! Each block is marked (a `# explain:` comment before it, and [`BlockReport`]) with what
//! happened to it: emitted, deferred (with the unknown references and their ranges),
//! discarded (its condition is false), failed (the diagnostic), or not evaluated; a
//! collection's template lists its items with their keys.
//!
//! A program all of whose blocks are emitted prints as a program that evaluates to the
//! same response (tests/explain_roundtrip.rs checks this over every conformance case).

use crate::bytecode::code::ChunkId;
use crate::bytecode::vm::{Limits, Vm};
use crate::lower::ir::{CExpr, Program};
use crate::protocol::doc::Json;
use crate::runtime::eval::{Discard, DiscardReason, Inputs, Observer, evaluate_observed};
use crate::syntax::ast::{self, Block, Body, BodyItem, Expr, ExprKind, TemplatePart};
use crate::syntax::diag::{Diagnostic, Severity};
use crate::syntax::span::{SourceMap, Span};
use crate::syntax::visit::{foldable_children, is_reference};
use crate::value::{Str, Type, Value};
use std::collections::{BTreeMap, HashMap, HashSet};

/// What happened to a block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    Emitted,
    Deferred,
    Discarded,
    Failed,
    NotEvaluated,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Emitted => "emitted",
            Status::Deferred => "deferred",
            Status::Discarded => "discarded",
            Status::Failed => "failed",
            Status::NotEvaluated => "not-evaluated",
        }
    }
}

/// A reference whose value is not known, as written, with its range.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unknown {
    pub reference: String,
    pub range: String,
}

/// One evaluation of a block (a collection's template: one item).
#[derive(Clone, Debug)]
pub struct Outcome {
    pub status: Status,
    /// Why, in words (the condition, the discard reason, ...).
    pub reason: String,
    pub unknown: Vec<Unknown>,
    /// The block's own diagnostics (errors when it failed; an assert's warning).
    pub diagnostics: Vec<String>,
}

/// An item of a collection (one evaluation of its template).
#[derive(Clone, Debug)]
pub struct ItemReport {
    pub index: usize,
    /// `each.key`, as an HCL literal.
    pub key: String,
    /// The member resource's name.
    pub name: String,
    pub outcome: Outcome,
    /// The template's body folded for this item alone.
    pub body: Option<String>,
}

/// A block of the program and what happened to it.
#[derive(Clone, Debug)]
pub struct BlockReport {
    pub kind: String,
    pub labels: Vec<String>,
    pub range: String,
    pub outcome: Outcome,
    /// A collection's template: one entry per item.
    pub items: Vec<ItemReport>,
    pub blocks: Vec<BlockReport>,
}

/// The explanation of one program against one request.
#[derive(Clone, Debug)]
pub struct Explanation {
    /// The program folded, file by file (name, formatted text).
    pub files: Vec<(String, String)>,
    /// The top-level blocks (nested ones inside).
    pub blocks: Vec<BlockReport>,
    /// The Fatal message when evaluation failed.
    pub fatal: Option<String>,
    /// Remarks about the explanation itself (a limit that stopped folding).
    pub notes: Vec<String>,
}

impl Explanation {
    /// The folded program: its one file, or txtar (`-- NAME --` sections) for several.
    pub fn program_text(&self) -> String {
        if let [(_, text)] = self.files.as_slice() {
            return text.clone();
        }
        let mut s = String::new();
        for (name, text) in &self.files {
            s.push_str(&format!("-- {name} --\n{text}"));
        }
        s
    }

    /// The same facts, for tools.
    pub fn to_json(&self) -> Json {
        let mut m = BTreeMap::new();
        m.insert(
            "files".into(),
            Json::Array(
                self.files
                    .iter()
                    .map(|(n, t)| obj([("name", s(n)), ("text", s(t))]))
                    .collect(),
            ),
        );
        m.insert(
            "blocks".into(),
            Json::Array(self.blocks.iter().map(block_json).collect()),
        );
        m.insert("fatal".into(), self.fatal.as_deref().map_or(Json::Null, s));
        m.insert(
            "notes".into(),
            Json::Array(self.notes.iter().map(|n| s(n)).collect()),
        );
        Json::Object(m)
    }
}

fn s(x: &str) -> Json {
    Json::String(x.to_string())
}

fn obj<const N: usize>(entries: [(&str, Json); N]) -> Json {
    Json::Object(
        entries
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
    )
}

fn outcome_json(o: &Outcome, m: &mut BTreeMap<String, Json>) {
    m.insert("status".into(), s(o.status.as_str()));
    m.insert("reason".into(), s(&o.reason));
    m.insert(
        "unknown".into(),
        Json::Array(
            o.unknown
                .iter()
                .map(|u| obj([("reference", s(&u.reference)), ("range", s(&u.range))]))
                .collect(),
        ),
    );
    m.insert(
        "diagnostics".into(),
        Json::Array(o.diagnostics.iter().map(|d| s(d)).collect()),
    );
}

fn block_json(b: &BlockReport) -> Json {
    let mut m = BTreeMap::new();
    m.insert("type".into(), s(&b.kind));
    m.insert(
        "labels".into(),
        Json::Array(b.labels.iter().map(|l| s(l)).collect()),
    );
    m.insert("range".into(), s(&b.range));
    outcome_json(&b.outcome, &mut m);
    if !b.items.is_empty() {
        m.insert(
            "items".into(),
            Json::Array(
                b.items
                    .iter()
                    .map(|it| {
                        let mut im = BTreeMap::new();
                        im.insert("index".into(), Json::Number(it.index as f64));
                        im.insert("key".into(), s(&it.key));
                        im.insert("name".into(), s(&it.name));
                        im.insert("body".into(), it.body.as_deref().map_or(Json::Null, s));
                        outcome_json(&it.outcome, &mut im);
                        Json::Object(im)
                    })
                    .collect(),
            ),
        );
    }
    m.insert(
        "blocks".into(),
        Json::Array(b.blocks.iter().map(block_json).collect()),
    );
    Json::Object(m)
}

// ---- recording ----

/// One evaluation of an expression: the chunk, the frame it ran in, the block run.
struct Eval {
    chunk: ChunkId,
    frame: Vec<Value>,
    run: usize,
}

/// One evaluation of one block.
struct Run {
    block: Span,
    item: Option<(usize, Value, Str)>,
    parent: Option<usize>,
    /// What was discarded in this run.
    discards: Vec<Discard>,
    /// The diagnostics the block returned.
    diags: Vec<Diagnostic>,
    /// It returned errors that no block inside it returned.
    failed: bool,
    /// A block inside it failed.
    child_failed: bool,
}

/// The most frame slots `explain` records, over all evaluations (each keeps a copy of the
/// frame it ran in, to fold its parts in it later, and counts one more): about 30 MB.
/// The largest benchmark workload (10,000 resources) records 130,000; without a bound, a
/// block of `n` locals alone would record `n²/2` (every local sees those before it).
/// Past it, an expression evaluated is kept as written.
pub const EXPLAIN_FRAME_SLOTS: usize = 1_000_000;

struct Recorder {
    runs: Vec<Run>,
    stack: Vec<usize>,
    evals: HashMap<Span, Vec<Eval>>,
    /// The evaluations whose value was not known, by run: (range, index in `evals`).
    unknown: HashMap<usize, Vec<(Span, usize)>>,
    /// What is left of [`EXPLAIN_FRAME_SLOTS`].
    slots_left: usize,
    /// Expressions with an evaluation not recorded ([`EXPLAIN_FRAME_SLOTS`]): not folded.
    unrecorded: HashSet<Span>,
}

impl Recorder {
    fn new(slots: usize) -> Recorder {
        Recorder {
            runs: Vec::new(),
            stack: Vec::new(),
            evals: HashMap::new(),
            unknown: HashMap::new(),
            slots_left: slots,
            unrecorded: HashSet::new(),
        }
    }
}

impl Observer for Recorder {
    fn enter(&mut self, block: Span, item: Option<(usize, Value, Str)>) {
        let id = self.runs.len();
        self.runs.push(Run {
            block,
            item,
            parent: self.stack.last().copied(),
            discards: Vec::new(),
            diags: Vec::new(),
            failed: false,
            child_failed: false,
        });
        self.stack.push(id);
    }

    fn evaluated(&mut self, e: &CExpr, frame: &[Value], value: &Value) {
        let Some(left) = self.slots_left.checked_sub(frame.len() + 1) else {
            self.unrecorded.insert(e.range);
            return;
        };
        self.slots_left = left;
        let run = self.stack.last().copied().unwrap_or(0);
        let known = !value.contains_unknown();
        let evals = self.evals.entry(e.range).or_default();
        if !known {
            let at = (e.range, evals.len());
            self.unknown.entry(run).or_default().push(at);
        }
        evals.push(Eval {
            chunk: e.chunk,
            frame: frame.to_vec(),
            run,
        });
    }

    fn discarded(&mut self, discard: &Discard) {
        if let Some(r) = self.stack.last().and_then(|&i| self.runs.get_mut(i)) {
            r.discards.push(discard.clone());
        }
    }

    fn exit(&mut self, diags: &[Diagnostic]) {
        let Some(id) = self.stack.pop() else { return };
        let errors = crate::syntax::diag::has_errors(diags);
        let parent = {
            let r = &mut self.runs[id];
            r.diags = diags.to_vec();
            r.failed = errors && !r.child_failed;
            r.parent
        };
        if errors && let Some(p) = parent {
            self.runs[p].child_failed = true;
        }
    }
}

/// Explain `program` (compiled by [`crate::lower::ir::compile_for_explain`], `trees` its
/// syntax trees) against one request's inputs.
pub fn explain(program: &Program, trees: &[ast::File], inputs: &Inputs) -> Explanation {
    explain_recording(program, trees, inputs, EXPLAIN_FRAME_SLOTS)
}

/// [`explain`], recording at most `slots` frame slots.
fn explain_recording(
    program: &Program,
    trees: &[ast::File],
    inputs: &Inputs,
    slots: usize,
) -> Explanation {
    let mut rec = Recorder::new(slots);
    let result = evaluate_observed(program, inputs, Limits::default(), &mut rec);
    let mut by_block: HashMap<Span, Vec<usize>> = HashMap::new();
    for (i, r) in rec.runs.iter().enumerate() {
        by_block.entry(r.block).or_default().push(i);
    }
    let parts: HashMap<ChunkId, HashMap<Span, ChunkId>> = program
        .parts
        .by_root
        .iter()
        .map(|(root, ps)| (*root, ps.iter().copied().collect()))
        .collect();
    let mut p = Printer {
        trees,
        sm: &program.sources,
        rec: &rec,
        by_block,
        parts,
        vm: Vm::new(&program.code, Limits::default()),
        budget_hit: false,
    };
    let mut files = Vec::new();
    let mut blocks = Vec::new();
    for (i, tree) in trees.iter().enumerate() {
        let mut out = String::new();
        let reports = p.body(&tree.body, &[0], &mut out);
        blocks.extend(reports);
        let name = program
            .sources
            .get(crate::syntax::span::FileId(i as u32))
            .map(|f| f.name.to_string())
            .unwrap_or_default();
        let text = crate::syntax::fmt::format_source(&out, Default::default());
        files.push((name, text));
    }
    let mut notes = Vec::new();
    if program.parts.truncated {
        notes.push(format!(
            "the program has more than {} sub-expression nodes to fold: the rest is folded only as whole expressions",
            crate::lower::ir::EXPLAIN_NODES
        ));
    }
    if !rec.unrecorded.is_empty() {
        notes.push(format!(
            "the evaluation used more than {slots} frame slots: {} expression(s) evaluated past them are kept as written",
            rec.unrecorded.len()
        ));
    }
    if p.budget_hit {
        notes.push(
            "an evaluation budget was exceeded while folding: some expressions are kept as written"
                .to_string(),
        );
    }
    let fatal = result.err().map(|f| f.0);
    if let Some(f) = &fatal
        && let Some((_, text)) = files.last_mut()
    {
        text.push_str(&format!(
            "\n# explain: evaluation failed: {}\n",
            one_line(f)
        ));
    }
    Explanation {
        files,
        blocks,
        fatal,
        notes,
    }
}

/// An expression's text laid out as `fn-hcl fmt` would (as an attribute's value).
fn formatted_expr(text: &str) -> String {
    let f = crate::syntax::fmt::format_source(&format!("x = {text}\n"), Default::default());
    f.strip_prefix("x = ").unwrap_or(&f).trim_end().to_string()
}

fn one_line(s: &str) -> String {
    s.replace('\n', " ")
}

/// Blocks whose evaluation `explain` marks (the others are folded, not marked).
const MARKED: &[&str] = &[
    "group",
    "resource",
    "resources",
    "template",
    "composite",
    "context",
    "ready",
    "requirement",
    "assert",
];

struct Printer<'a> {
    trees: &'a [ast::File],
    sm: &'a SourceMap,
    rec: &'a Recorder,
    by_block: HashMap<Span, Vec<usize>>,
    parts: HashMap<ChunkId, HashMap<Span, ChunkId>>,
    /// Evaluates the parts of expressions: one VM, so that all the folding together is
    /// bounded by one evaluation's budgets (each fold by the wall time: the printing
    /// between folds does not count). A part is evaluated once per level of nesting it is
    /// in, so budgets of its own per fold would let a deep expression cost its depth
    /// times the budgets.
    vm: Vm<'a>,
    budget_hit: bool,
}

/// Which evaluations of an expression a fold looks at.
type Evals<'e> = Vec<&'e Eval>;

impl<'a> Printer<'a> {
    fn src(&self, sp: Span) -> &'a str {
        self.sm.slice(sp)
    }

    fn range(&self, sp: Span) -> String {
        self.sm.range(sp).to_string()
    }

    /// Print a body's items into `out`; returns the reports of its marked blocks.
    /// `runs`: the runs of the enclosing block.
    fn body(&mut self, body: &Body, parent_runs: &[usize], out: &mut String) -> Vec<BlockReport> {
        let mut reports = Vec::new();
        // A failure the enclosing block returned that points into a block of this body
        // that never ran (a schema error raised when it was reached) belongs to that block.
        let mut failed_here: HashMap<Span, Vec<String>> = HashMap::new();
        for &r in parent_runs {
            let Some(run) = self.rec.runs.get(r) else {
                continue;
            };
            if !run.failed {
                continue;
            }
            for d in run.diags.iter().filter(|d| d.is_error()) {
                let Some(at) = d.subject.or(d.context) else {
                    continue;
                };
                for b in body.blocks() {
                    if contains(b.span, at) && !self.by_block.contains_key(&b.span) {
                        failed_here
                            .entry(b.span)
                            .or_default()
                            .push(d.plain(self.sm));
                    }
                }
            }
        }
        let mut first = true;
        for item in &body.items {
            match item {
                BodyItem::Attribute(a) => {
                    let text = self.attribute(&a.expr, None);
                    out.push_str(&format!("{} = {}\n", a.name.name, text));
                }
                BodyItem::Block(b) => {
                    if !first {
                        out.push('\n');
                    }
                    if let Some(r) = self.block(b, failed_here.get(&b.span), out) {
                        reports.push(r);
                    }
                }
            }
            first = false;
        }
        reports
    }

    fn block(
        &mut self,
        b: &Block,
        failed_here: Option<&Vec<String>>,
        out: &mut String,
    ) -> Option<BlockReport> {
        let kind = &*b.kind.name;
        let header_end = Span::new(b.span.file, b.span.start, b.open_brace.end);
        if kind == "function" {
            // User functions run once per call with their own arguments: kept as written.
            out.push_str(self.src(b.span));
            out.push('\n');
            return None;
        }
        let runs: Vec<usize> = self.by_block.get(&b.span).cloned().unwrap_or_default();
        if !MARKED.contains(&kind) {
            out.push_str(self.src(header_end));
            out.push('\n');
            self.body(&b.body, &runs, out);
            out.push_str("}\n");
            return None;
        }
        let mut report = BlockReport {
            kind: kind.to_string(),
            labels: b.labels.iter().map(|l| l.value.to_string()).collect(),
            range: self.range(b.span),
            outcome: Outcome {
                status: Status::NotEvaluated,
                reason: "not evaluated".into(),
                unknown: Vec::new(),
                diagnostics: Vec::new(),
            },
            items: Vec::new(),
            blocks: Vec::new(),
        };
        let item_runs: Vec<usize> = runs
            .iter()
            .copied()
            .filter(|&r| self.rec.runs[r].item.is_some())
            .collect();
        if let Some(ds) = failed_here {
            report.outcome = Outcome {
                status: Status::Failed,
                reason: "evaluation stopped here with an error".into(),
                unknown: Vec::new(),
                diagnostics: ds.clone(),
            };
        } else if !item_runs.is_empty() {
            for &r in &item_runs {
                let Some((index, each, name)) = self.rec.runs[r].item.clone() else {
                    continue;
                };
                let key = each
                    .get_attr("key")
                    .map(literal)
                    .unwrap_or_else(|| "null".into());
                let body = b
                    .body
                    .attributes()
                    .find(|a| &*a.name.name == "body")
                    .map(|a| formatted_expr(&self.attribute(&a.expr, Some(r))));
                report.items.push(ItemReport {
                    index,
                    key,
                    name: name.to_string(),
                    outcome: self.outcome(r),
                    body,
                });
            }
            let deferred = report
                .items
                .iter()
                .filter(|i| i.outcome.status != Status::Emitted)
                .count();
            report.outcome = Outcome {
                status: if deferred == 0 {
                    Status::Emitted
                } else {
                    report.items[0].outcome.status
                },
                reason: format!("{} item(s), {} not emitted", report.items.len(), deferred),
                unknown: Vec::new(),
                diagnostics: Vec::new(),
            };
            if let Some(i) = report
                .items
                .iter()
                .find(|i| i.outcome.status != Status::Emitted)
            {
                report.outcome.status = i.outcome.status;
            }
        } else if let Some(&r) = runs.first() {
            report.outcome = self.outcome(r);
            if runs.len() > 1 {
                // A block inside a template: one run per item; the first that was not
                // emitted speaks for all.
                if let Some(&bad) = runs
                    .iter()
                    .find(|&&x| self.outcome(x).status != Status::Emitted)
                {
                    report.outcome = self.outcome(bad);
                }
                report.outcome.reason = format!(
                    "{} (evaluated {} times, once per item)",
                    report.outcome.reason,
                    runs.len()
                );
            }
        }
        // Marks.
        out.push_str(&mark_lines(&report));
        out.push_str(self.src(header_end));
        out.push('\n');
        report.blocks = self.body(&b.body, &runs, out);
        out.push_str("}\n");
        Some(report)
    }

    /// What happened in one run of a block.
    fn outcome(&mut self, r: usize) -> Outcome {
        let run = &self.rec.runs[r];
        if run.failed {
            let ds: Vec<String> = run
                .diags
                .iter()
                .filter(|d| d.is_error())
                .map(|d| d.plain(self.sm))
                .collect();
            return Outcome {
                status: Status::Failed,
                reason: "evaluation stopped here with an error".into(),
                unknown: Vec::new(),
                diagnostics: ds,
            };
        }
        let warnings: Vec<String> = if self.is_assert(run.block) {
            run.diags
                .iter()
                .filter(|d| {
                    d.severity == Severity::Warning && d.summary.starts_with("assertion failed")
                })
                .map(|d| d.plain(self.sm))
                .collect()
        } else {
            Vec::new()
        };
        if let Some(d) = run
            .discards
            .iter()
            .find(|d| d.reason == DiscardReason::UserCondition)
        {
            return Outcome {
                status: Status::Discarded,
                reason: format!("its condition is false ({})", self.range(d.span)),
                unknown: Vec::new(),
                diagnostics: Vec::new(),
            };
        }
        if let Some(d) = run.discards.first() {
            return Outcome {
                status: if d.reason == DiscardReason::Incomplete {
                    Status::Deferred
                } else {
                    Status::Discarded
                },
                reason: format!(
                    "{} {} at {}",
                    d.kind.as_str(),
                    d.reason.as_str(),
                    self.range(d.span)
                ),
                unknown: self.unknowns(r, d.span),
                diagnostics: d.context.clone(),
            };
        }
        Outcome {
            status: Status::Emitted,
            reason: if warnings.is_empty() {
                "evaluated".into()
            } else {
                "assertion failed (a warning)".into()
            },
            unknown: Vec::new(),
            diagnostics: warnings,
        }
    }

    fn is_assert(&self, block: Span) -> bool {
        self.src(block).starts_with("assert")
    }

    /// The unknown references that made run `r` discard the expression at `span`: those
    /// kept as written when the expressions evaluated there are folded (any unknown
    /// expression of the run when none lies there).
    fn unknowns(&mut self, r: usize, span: Span) -> Vec<Unknown> {
        let rec = self.rec;
        let roots: Vec<(Span, &Eval)> = rec
            .unknown
            .get(&r)
            .into_iter()
            .flatten()
            .filter_map(|&(at, i)| Some((at, rec.evals.get(&at)?.get(i)?)))
            .collect();
        let inside: Vec<(Span, &Eval)> = roots
            .iter()
            .copied()
            .filter(|(at, _)| contains(span, *at))
            .collect();
        let mut chosen = if inside.is_empty() { roots } else { inside };
        chosen.sort_by_key(|(at, _)| (at.file.0, at.start.byte));
        let trees = self.find_exprs(&chosen.iter().map(|(at, _)| *at).collect::<Vec<_>>());
        let mut refs = Vec::new();
        for ((_, e), tree) in chosen.iter().zip(trees) {
            if let Some(x) = tree {
                self.fold(x, &[*e], &mut refs);
            }
        }
        let mut out: Vec<Unknown> = Vec::new();
        for (text, sp) in refs {
            let u = Unknown {
                reference: text,
                range: self.range(sp),
            };
            if !out.contains(&u) {
                out.push(u);
            }
        }
        out
    }

    /// The syntax trees of expressions by range (None where no expression has it).
    fn find_exprs(&self, spans: &[Span]) -> Vec<Option<&'a Expr>> {
        spans.iter().map(|sp| find_expr(self.trees, *sp)).collect()
    }

    /// An attribute's expression folded over all its evaluations (or those of run `only`).
    fn attribute(&mut self, x: &Expr, only: Option<usize>) -> String {
        let rec = self.rec;
        if rec.unrecorded.contains(&x.span) {
            return self.src(x.span).to_string();
        }
        let evs: Evals<'_> = rec
            .evals
            .get(&x.span)
            .map(|v| {
                v.iter()
                    .filter(|e| only.is_none_or(|r| e.run == r))
                    .collect()
            })
            .unwrap_or_default();
        if evs.is_empty() {
            return self.src(x.span).to_string();
        }
        let mut refs = Vec::new();
        self.fold(x, &evs, &mut refs)
    }

    /// The value of `x` (a part of the expression `evs` evaluated) if it is known and
    /// the same in every evaluation.
    fn known(&mut self, x: &Expr, evs: &[&Eval]) -> Option<(Value, String)> {
        if self.budget_hit {
            return None;
        }
        let mut found: Option<(Value, String)> = None;
        for e in evs {
            let chunk = *self.parts.get(&e.chunk)?.get(&x.span)?;
            let mut diags = Vec::new();
            self.vm.restart_clock();
            let v = match self.vm.eval(chunk, &e.frame, &mut diags) {
                Ok(v) => v,
                Err(_) => {
                    self.budget_hit = true;
                    return None;
                }
            };
            if crate::syntax::diag::has_errors(&diags) || !has_literal(&v) {
                return None;
            }
            let text = literal(&v);
            match &found {
                Some((_, t)) if *t != text => return None,
                Some(_) => {}
                None => found = Some((v, text)),
            }
        }
        found
    }

    /// `x` partially evaluated: its value when known; otherwise its shape with known
    /// parts folded. Unknown references kept as written go to `refs`.
    fn fold(&mut self, x: &Expr, evs: &[&Eval], refs: &mut Vec<(String, Span)>) -> String {
        if matches!(
            x.kind,
            ExprKind::Null | ExprKind::Bool(_) | ExprKind::Number(_)
        ) {
            return self.src(x.span).to_string();
        }
        if let Some((_, text)) = self.known(x, evs) {
            return text;
        }
        if is_reference(x) {
            refs.push((self.src(x.span).to_string(), x.span));
            return self.splice(x, evs, None, refs);
        }
        match &x.kind {
            ExprKind::Template(t) if !self.src(x.span).starts_with("<<") => {
                self.template(t, evs, refs)
            }
            ExprKind::Conditional {
                cond,
                then,
                otherwise,
            } => {
                // A known condition: the branch it does not take is kept as written.
                let skip = match self.known(cond, evs) {
                    Some((Value::Bool(true), _)) => Some(otherwise.span),
                    Some((Value::Bool(false), _)) => Some(then.span),
                    _ => None,
                };
                self.splice(x, evs, skip, refs)
            }
            _ => self.splice(x, evs, None, refs),
        }
    }

    /// `x`'s source with each foldable child replaced by its fold (`skip` kept as written).
    fn splice(
        &mut self,
        x: &Expr,
        evs: &[&Eval],
        skip: Option<Span>,
        refs: &mut Vec<(String, Span)>,
    ) -> String {
        let mut kids = Vec::new();
        foldable_children(x, &mut |c| kids.push(c));
        let text = self.sm.get(x.span.file).map(|f| f.text.clone());
        let Some(text) = text else {
            return String::new();
        };
        let mut out = String::new();
        let mut pos = x.span.start.byte as usize;
        for c in kids {
            let (start, end) = (c.span.start.byte as usize, c.span.end.byte as usize);
            if start < pos || end > x.span.end.byte as usize {
                continue;
            }
            out.push_str(text.get(pos..start).unwrap_or(""));
            if Some(c.span) == skip {
                out.push_str(self.src(c.span));
            } else {
                out.push_str(&self.fold(c, evs, refs));
            }
            pos = end;
        }
        out.push_str(text.get(pos..x.span.end.byte as usize).unwrap_or(""));
        out
    }

    /// A quoted template rebuilt: known interpolations of primitive values become text.
    fn template(
        &mut self,
        t: &ast::Template,
        evs: &[&Eval],
        refs: &mut Vec<(String, Span)>,
    ) -> String {
        let mut out = String::from("\"");
        for p in &t.parts {
            match p {
                TemplatePart::Literal { text, .. } => out.push_str(&escape(text)),
                TemplatePart::Interp(e) => {
                    let known =
                        self.known(e, evs)
                            .and_then(|(v, _)| {
                                match crate::value::convert::convert(&v, &Type::String) {
                                    Ok(Value::String(s)) if v.kind().is_primitive() => Some(s),
                                    _ => None,
                                }
                            });
                    match known {
                        Some(s) => out.push_str(&escape(&s)),
                        None => {
                            out.push_str("${");
                            out.push_str(&self.fold(e, evs, refs));
                            out.push('}');
                        }
                    }
                }
                TemplatePart::If { span, .. } | TemplatePart::For { span, .. } => {
                    out.push_str(self.src(*span));
                }
            }
        }
        out.push('"');
        out
    }
}

fn contains(outer: Span, inner: Span) -> bool {
    outer.file == inner.file
        && outer.start.byte <= inner.start.byte
        && inner.end.byte <= outer.end.byte
}

/// The `# explain:` comment lines before a block.
fn mark_lines(r: &BlockReport) -> String {
    let mut s = String::new();
    let o = &r.outcome;
    if o.status == Status::Emitted && o.reason == "evaluated" {
        s.push_str("# explain: emitted\n");
    } else {
        s.push_str(&format!(
            "# explain: {}: {}\n",
            o.status.as_str(),
            one_line(&o.reason)
        ));
    }
    for u in &o.unknown {
        s.push_str(&format!("#   unknown: {} ({})\n", u.reference, u.range));
    }
    for d in &o.diagnostics {
        s.push_str(&format!("#   {}\n", one_line(d)));
    }
    for it in &r.items {
        s.push_str(&format!(
            "#   item {} (key {}, resource {:?}): {}\n",
            it.index,
            one_line(&it.key),
            it.name,
            it.outcome.status.as_str()
        ));
        for u in &it.outcome.unknown {
            s.push_str(&format!("#     unknown: {} ({})\n", u.reference, u.range));
        }
        if it.outcome.status == Status::Failed {
            for d in &it.outcome.diagnostics {
                s.push_str(&format!("#     {}\n", one_line(d)));
            }
        }
    }
    s
}

/// hcl's quoted-template escapes, plus `$${` and `%%{` for literal `${` and `%{`.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '$' | '%' if chars.peek() == Some(&'{') => {
                out.push(c);
                out.push(c);
            }
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                out.push_str(&format!("\\u{:04x}", c as u32))
            }
            c => out.push(c),
        }
    }
    out
}

/// Whether [`literal`] can write `v`: known, finite numbers, nulls untyped or of a
/// primitive type (an infinity or a typed null of a collection type has no literal).
pub fn has_literal(v: &Value) -> bool {
    match v {
        Value::Unknown(_) => false,
        Value::Null(t) => matches!(t, Type::Dynamic | Type::Bool | Type::Number | Type::String),
        Value::Number(n) => !n.is_infinite(),
        Value::Bool(_) | Value::String(_) => true,
        Value::List(q) | Value::Set(q) | Value::Tuple(q) => q.items.iter().all(has_literal),
        Value::Map(f) | Value::Object(f) => f.entries.iter().all(|(_, x)| has_literal(x)),
    }
}

/// A known value as an HCL expression that evaluates to the same value, type included:
/// lists, sets and maps through `tolist`, `toset` and `tomap`.
pub fn literal(v: &Value) -> String {
    let mut s = String::new();
    write_literal(v, &mut s);
    s
}

fn write_literal(v: &Value, out: &mut String) {
    match v {
        Value::Null(Type::Bool) => out.push_str("tobool(null)"),
        Value::Null(Type::Number) => out.push_str("tonumber(null)"),
        Value::Null(Type::String) => out.push_str("tostring(null)"),
        Value::Null(_) | Value::Unknown(_) => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&n.to_string()),
        Value::String(x) => {
            out.push('"');
            out.push_str(&escape(x));
            out.push('"');
        }
        Value::Tuple(seq) => write_seq(&seq.items, out),
        Value::List(seq) => {
            out.push_str("tolist(");
            write_seq(&seq.items, out);
            out.push(')');
        }
        Value::Set(seq) => {
            out.push_str("toset(");
            write_seq(&seq.items, out);
            out.push(')');
        }
        Value::Object(f) => write_fields(&f.entries, out),
        Value::Map(f) => {
            out.push_str("tomap(");
            write_fields(&f.entries, out);
            out.push(')');
        }
    }
}

fn write_seq(items: &[Value], out: &mut String) {
    out.push('[');
    for (i, x) in items.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        write_literal(x, out);
    }
    out.push(']');
}

fn write_fields(entries: &[(Str, Value)], out: &mut String) {
    if entries.is_empty() {
        out.push_str("{}");
        return;
    }
    out.push_str("{\n");
    for (k, x) in entries {
        if is_bare_key(k) {
            out.push_str(k);
        } else {
            out.push('"');
            out.push_str(&escape(k));
            out.push('"');
        }
        out.push_str(" = ");
        write_literal(x, out);
        out.push('\n');
    }
    out.push('}');
}

/// A key hcl reads as the same string when written bare.
fn is_bare_key(k: &str) -> bool {
    let mut cs = k.chars();
    matches!(cs.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && cs.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        && !matches!(k, "for" | "in" | "if" | "null" | "true" | "false")
}

/// The expression of the syntax trees whose range is `span`.
fn find_expr(trees: &[ast::File], span: Span) -> Option<&Expr> {
    fn in_body(b: &Body, span: Span) -> Option<&Expr> {
        for item in &b.items {
            match item {
                BodyItem::Attribute(a) => {
                    if a.expr.span == span {
                        return Some(&a.expr);
                    }
                }
                BodyItem::Block(bl) => {
                    if contains(bl.span, span)
                        && let Some(e) = in_body(&bl.body, span)
                    {
                        return Some(e);
                    }
                }
            }
        }
        None
    }
    let f = trees.get(span.file.0 as usize)?;
    in_body(&f.body, span)
}

/// Why a request cannot be explained.
#[derive(Debug)]
pub enum ExplainError {
    /// The program has errors: `analyze`'s diagnostics (or the load errors), with the
    /// sources they point into.
    Program(Vec<Diagnostic>, std::sync::Arc<SourceMap>),
    /// The request or its input cannot be read.
    Request(String),
}

/// Explain the program of a RunFunctionRequest's input against that request. A program
/// `analyze` finds errors in is refused with those diagnostics.
pub fn explain_request(
    req: &crate::protocol::proto::v1::RunFunctionRequest,
) -> Result<Explanation, ExplainError> {
    let input = crate::protocol::input::Input::from_request(req).map_err(ExplainError::Request)?;
    if input.hcl.is_empty() {
        return Err(ExplainError::Request("input HCL was not specified".into()));
    }
    let files = crate::syntax::txtar::parse(input.hcl).map_err(ExplainError::Request)?;
    if files.is_empty() {
        return Err(ExplainError::Request(
            "no HCL input files found, are you using the txtar format?".into(),
        ));
    }
    let (program, trees) = crate::lower::ir::compile_for_explain(&files)
        .map_err(|e| ExplainError::Program(e.diags, e.sources))?;
    let diags = crate::lower::analyze::analyze(&program);
    if crate::syntax::diag::has_errors(&diags) {
        return Err(ExplainError::Program(diags, program.sources.clone()));
    }
    let request = crate::protocol::request::Request::from_proto(req)
        .map_err(|e| ExplainError::Request(e.to_string()))?;
    let inputs = Inputs::from_request(&request);
    Ok(explain(&program, &trees, &inputs))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn explained(hcl: &str, slots: usize) -> Explanation {
        let files = vec![("main.hcl".to_string(), hcl.to_string())];
        let (program, trees) = crate::lower::ir::compile_for_explain(&files)
            .unwrap_or_else(|e| panic!("{}", e.message()));
        explain_recording(&program, &trees, &Inputs::default(), slots)
    }

    const LOCALS: &str = "locals {\n  a = 1\n  b = a + 1\n}\n";

    #[test]
    fn expressions_evaluated_past_the_frame_slots_are_kept_as_written() {
        let all = explained(LOCALS, EXPLAIN_FRAME_SLOTS);
        assert!(all.notes.is_empty(), "{:?}", all.notes);
        assert!(
            all.program_text().contains("b = 2"),
            "{}",
            all.program_text()
        );
        // `a` runs in a frame of one slot (`req`) and costs two; `b` would cost three.
        let capped = explained(LOCALS, 2);
        let text = capped.program_text();
        assert!(
            text.contains("a = 1") && text.contains("b = a + 1"),
            "{text}"
        );
        assert_eq!(
            capped.notes,
            [
                "the evaluation used more than 2 frame slots: 1 expression(s) evaluated past \
              them are kept as written"
            ]
        );
    }

    #[test]
    fn a_block_of_thousands_of_locals_stays_within_the_frame_slots() {
        // Every local sees those before it: 2,000 of them would record 2 million slots.
        let mut hcl = String::from("locals {\n  l0 = 0\n");
        for i in 1..2000 {
            hcl.push_str(&format!("  l{i} = l{} + 1\n", i - 1));
        }
        hcl.push_str("}\n");
        let x = explained(&hcl, EXPLAIN_FRAME_SLOTS);
        let text = x.program_text();
        let words = text.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(words.contains("l1 = 1 l2 = 2"), "{text}");
        assert!(words.contains("l1999 = l1998 + 1 }"), "{text}");
        assert!(
            x.notes[0].contains("more than 1000000 frame slots"),
            "{:?}",
            x.notes
        );
    }

    #[test]
    fn folding_a_deep_expression_is_bounded_by_one_budget() {
        // Each level of nesting is not known (`req` is null): folding evaluates every level
        // again, and with it the 300,000 elements made inside; 40 levels would cost 12
        // million elements, three times the budget of all the folding (with a VM and its
        // budgets for each fold, the time grew with the depth: 160 levels took 7 times
        // longer than 40).
        let heavy = "length([for i in range(1000) : range(300)])";
        let mut e = format!("[{heavy}, req.missing]");
        for _ in 0..40 {
            e = format!("[{e}, req.missing]");
        }
        let x = explained(
            &format!("locals {{\n  deep = {e}\n}}\n"),
            EXPLAIN_FRAME_SLOTS,
        );
        assert!(
            x.notes
                .iter()
                .any(|n| n.contains("evaluation budget was exceeded while folding")),
            "{:?}",
            x.notes
        );
    }
}
