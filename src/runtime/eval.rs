//! DSL evaluation: runs the blocks of a compiled program against one request, in source
//! order, with the Go implementation's rules: conditions, deferral of incomplete blocks
//! (with a discard per block), the safety rule for observed resources, collections,
//! composite status/connection and context merging, requirements, readiness.
//!
//! Evaluation never fails halfway with a panic: every problem is a [`Diagnostic`]; an
//! error diagnostic ends evaluation with a Fatal result, as in Go.

use crate::bytecode::code::ChunkId;
use crate::bytecode::vm::{Limits, Vm};
use crate::lower::ir::{
    Assert, CAttr, CExpr, Collection, Composite, CompositeKind, ContextBlock, Group, Item, Locals,
    Matcher, Program, Ready, Requirement, Resource, ResourceContent, Special, Sub,
};
use crate::protocol::doc::Json;
use crate::protocol::response::Ready as Readiness;
use crate::protocol::{ANNOTATION_BASE_NAME, ANNOTATION_INDEX};
use crate::runtime::gojson::{
    go_object_check, number_encodes_as_json, round_trip_error, to_go_object, unify,
};
use crate::syntax::diag::{Diagnostic, Severity, Text};
use crate::syntax::span::Span;
use crate::text::quote::go_quote;
use crate::value::gofmt::go_struct_text;
use crate::value::{Fields, Shared, Str, Summary, Type, Value};
use std::collections::{BTreeMap, HashSet};
use std::sync::LazyLock;

/// What evaluation reads from the request, already converted to values.
#[derive(Clone, Debug, Default)]
pub struct Inputs {
    /// The `req` object (its 8 fields).
    pub req: Value,
    /// `req.resource`: observed bodies by composed resource name.
    pub resource: Value,
    /// `req.connection`: observed connection details by name.
    pub connection: Value,
    /// `req.resources`: observed collection members by base name (by index).
    pub resources: Value,
    /// `req.connections`: their connection details.
    pub connections: Value,
    /// The observed bodies as the request carried them, decoded on first use, when
    /// `resource` holds only the bodies the program reads (`None`: it holds them all).
    pub bodies: Option<std::sync::Arc<crate::protocol::request::ObservedBodies>>,
}

impl Inputs {
    /// The inputs of a decoded request.
    pub fn from_request(r: &crate::protocol::request::Request) -> Inputs {
        Inputs {
            req: r.to_value(),
            resource: r.resource.clone(),
            connection: r.connection.clone(),
            resources: r.resources.clone(),
            connections: r.connections.clone(),
            bodies: r.bodies.clone(),
        }
    }

    /// The observed body of `name` (`self.resource`; null when not observed), for a
    /// reader of `paths` only (the rest of the body may be left out, see
    /// [`crate::lower::reads::Paths`]).
    fn observed_body(&self, name: &Str, paths: &crate::lower::reads::Paths) -> Value {
        match &self.bodies {
            Some(b) => b.get_paths(name, paths).unwrap_or_default(),
            None => self
                .resource
                .get_attr_key(name)
                .cloned()
                .unwrap_or_default(),
        }
    }

    fn is_observed(&self, name: &Str) -> bool {
        self.resource.get_attr_key(name).is_some()
    }
}

/// A result the function reports.
#[derive(Clone, Debug, PartialEq)]
pub struct ResultMsg {
    pub severity: ResultSeverity,
    pub message: Text,
    pub reason: Option<Text>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResultSeverity {
    Fatal,
    Warning,
    Normal,
}

/// A condition the function reports (always targeting the composite).
#[derive(Clone, Debug, PartialEq)]
pub struct CondMsg {
    pub kind: &'static str,
    pub status: bool,
    pub reason: &'static str,
    pub message: Text,
}

/// A requirement selector.
#[derive(Clone, Debug, PartialEq)]
pub struct Selector {
    pub api_version: String,
    pub kind: String,
    pub matcher: SelectorMatch,
}

#[derive(Clone, Debug, PartialEq)]
pub enum SelectorMatch {
    Name(String),
    Labels(BTreeMap<String, String>),
}

/// The outcome of a successful evaluation.
#[derive(Clone, Debug, Default)]
pub struct Output {
    /// Desired resources in the order they were produced, with their readiness.
    pub resources: Vec<(Str, Value, Readiness)>,
    /// The unified composite status (an object whose numbers are finite float64s), if any
    /// block wrote one.
    pub status: Option<Value>,
    /// The unified composite connection details, if any block wrote them.
    pub connection: Option<BTreeMap<String, Vec<u8>>>,
    /// The unified context keys (an object whose numbers are finite float64s), if any
    /// block wrote one.
    pub context: Option<Value>,
    pub requirements: Vec<(Str, Selector)>,
    pub results: Vec<ResultMsg>,
    pub conditions: Vec<CondMsg>,
}

/// Why evaluation failed: the message of the Fatal result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fatal(pub String);

/// The kind of block part discarded (Go's names, [`DiscardType::as_str`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DiscardType {
    Resource,
    Resources,
    Group,
    Status,
    Connection,
    Ready,
    Context,
    Requirement,
    Assert,
}

impl DiscardType {
    /// Go's name of the kind, as the discard warnings and `FullyResolved` write it.
    pub fn as_str(self) -> &'static str {
        match self {
            DiscardType::Resource => "resource",
            DiscardType::Resources => "resources",
            DiscardType::Group => "group",
            DiscardType::Status => "composite-status",
            DiscardType::Connection => "composite-connection",
            DiscardType::Ready => "resource-ready",
            DiscardType::Context => "context",
            DiscardType::Requirement => "requirement",
            DiscardType::Assert => "assert",
        }
    }
}

/// Why a block part was discarded (Go's reason strings, [`DiscardReason::as_str`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DiscardReason {
    UserCondition,
    Incomplete,
    BadSecret,
}

impl DiscardReason {
    /// Go's name of the reason, as `FullyResolved` reports it.
    pub fn as_str(self) -> &'static str {
        match self {
            DiscardReason::UserCondition => "user-condition",
            DiscardReason::Incomplete => "incomplete",
            DiscardReason::BadSecret => "bad-secret",
        }
    }
}

/// A block part the evaluation skipped: its kind, why, its name, the range Go reports it
/// at, and the messages that explain it.
#[derive(Clone, Debug)]
pub struct Discard {
    pub kind: DiscardType,
    pub reason: DiscardReason,
    pub name: String,
    /// The range Go reports the discard at.
    pub span: Span,
    pub context: Vec<String>,
}

impl Discard {
    fn message(&self, sm: &crate::syntax::span::SourceMap) -> String {
        let mut s = format!(
            "{}:discarded {} {}",
            sm.range(self.span),
            self.kind.as_str(),
            self.name
        );
        for c in &self.context {
            s.push('\n');
            s.push_str(c);
        }
        s
    }
}

type Diags = Vec<Diagnostic>;

fn has_errors(d: &[Diagnostic]) -> bool {
    crate::syntax::diag::has_errors(d)
}

fn downgrade(mut d: Diags) -> Diags {
    for x in &mut d {
        x.severity = Severity::Warning;
    }
    d
}

fn err_no_range(summary: impl Into<Text>) -> Diagnostic {
    Diagnostic::error_no_range(summary, "")
}

fn err_at(summary: impl Into<Text>, detail: impl Into<Text>, range: Span) -> Diagnostic {
    Diagnostic::error(summary, detail, range)
}

/// A value for the response, as [`Evaluator::eval_output`] charged it.
struct Emitted {
    value: Value,
    /// Something inside is unknown.
    unknown: bool,
    /// Known, and every number survives `ctyjson.Marshal` + `json.Unmarshal`.
    json: bool,
}

/// Per-request evaluation state.
struct Evaluator<'p, 'o> {
    program: &'p Program,
    vm: Vm<'p>,
    inputs: &'p Inputs,
    frame: Vec<Value>,
    /// Where the desired resources go as they are made: the caller's sink
    /// ([`evaluate_streamed`]) or the list [`Output::resources`] returns.
    desired: &'o mut dyn ResourceSink,
    /// Every desired resource's name (a second one is an error).
    desired_names: HashSet<Str, ahash::RandomState>,
    /// The objects of the `composite status` blocks, checked as Go converts them.
    statuses: Vec<Value>,
    /// The buffer a body's diagnostics are gathered in, kept from one body to the next: a
    /// `try` over a path absent on the first reconcile (`try(self.resource.status...)`)
    /// reports the failed step there before it falls back, and a new buffer cost an
    /// allocation each time (~400 instructions a `heavy-200` member).
    body_diags: Vec<Diagnostic>,
    /// Each `composite connection` block's secrets, decoded, in key order.
    connections: Vec<Vec<(String, Vec<u8>)>>,
    /// Each `context` block's key and value as a one-key object, checked.
    contexts: Vec<Value>,
    requirements: Vec<(Str, Selector)>,
    requirement_names: HashSet<Str, ahash::RandomState>,
    discards: Vec<Discard>,
    budget_error: Option<String>,
    /// What [`evaluate_traced`] records (none for [`evaluate`]).
    trace: Option<Trace>,
    /// Who follows the evaluation block by block ([`evaluate_observed`]).
    observer: Option<&'o mut dyn Observer>,
}

/// Where an evaluation's desired resources go as each is made ([`evaluate_streamed`]):
/// the server writes a body into its response at once and drops the value, so a
/// collection's members do not all live until the end (their memory is reused, still in
/// the caches, by the next member).
pub trait ResourceSink {
    /// A desired resource, made; its readiness is unspecified until [`ResourceSink::ready`].
    fn resource(&mut self, name: &Str, body: Value);
    /// A `ready` block's readiness for the resource `name`, the one given last (the
    /// block runs right after its resource is added).
    fn ready(&mut self, name: &Str, ready: Readiness);
    /// Room for `n` more resources (a collection's members, bounded by the caller).
    fn reserve(&mut self, n: usize);
}

/// The list [`Output::resources`] returns: each resource as it was made, with its
/// readiness.
impl ResourceSink for Vec<(Str, Value, Readiness)> {
    fn resource(&mut self, name: &Str, body: Value) {
        self.push((name.clone(), body, Readiness::Unspecified));
    }

    fn ready(&mut self, name: &Str, ready: Readiness) {
        if let Some(last) = self.last_mut()
            && last.0 == *name
        {
            last.2 = ready;
        }
    }

    fn reserve(&mut self, n: usize) {
        Vec::reserve(self, n);
    }
}

/// Follows an evaluation block by block and expression by expression: what `explain`
/// needs to fold a program against a request with the VM's own values (it evaluates the
/// parts of each expression again in the frame the evaluator used).
pub trait Observer {
    /// A block starts: its whole source range; `item`: the iteration of a collection's
    /// template it is (index, `each`, the member's name).
    fn enter(&mut self, block: Span, item: Option<(usize, Value, Str)>);
    /// An expression was evaluated: its chunk and range, the frame's slots at that moment
    /// and its value.
    fn evaluated(&mut self, e: &CExpr, frame: &[Value], value: &Value);
    /// A part of the current block was discarded.
    fn discarded(&mut self, discard: &Discard);
    /// The block that started last ends with these diagnostics.
    fn exit(&mut self, diags: &[Diagnostic]);
}

/// What an evaluation computed along the way, for tools (the language server shows a
/// local's value and why a block was deferred): every local's value (each evaluation of
/// it, at most [`TRACE_VALUES`] per local) and every discarded block.
#[derive(Clone, Debug, Default)]
pub struct Trace {
    /// (the local's expression range, its value), in evaluation order.
    pub locals: Vec<(Span, Value)>,
    pub discards: Vec<Discard>,
}

/// The most values kept for one local (a local of a collection's template is evaluated
/// once per member).
pub const TRACE_VALUES: usize = 3;

/// Evaluate a program against a request.
pub fn evaluate(program: &Program, inputs: &Inputs, limits: Limits) -> Result<Output, Fatal> {
    evaluate_with(program, inputs, limits, None, None, None).0
}

/// [`evaluate`], giving each desired resource to `sink` as it is made (the output's
/// `resources` stay empty). On `Err`, what the sink was given is of no use.
pub fn evaluate_streamed(
    program: &Program,
    inputs: &Inputs,
    limits: Limits,
    sink: &mut dyn ResourceSink,
) -> Result<Output, Fatal> {
    evaluate_with(program, inputs, limits, None, None, Some(sink)).0
}

/// [`evaluate`], also saying what the evaluation charged to its budgets.
pub fn evaluate_metered(
    program: &Program,
    inputs: &Inputs,
    limits: Limits,
) -> (Result<Output, Fatal>, crate::bytecode::vm::Usage) {
    let (out, _, usage) = evaluate_with(program, inputs, limits, None, None, None);
    (out, usage)
}

/// [`evaluate`], also returning its [`Trace`].
pub fn evaluate_traced(
    program: &Program,
    inputs: &Inputs,
    limits: Limits,
) -> (Result<Output, Fatal>, Trace) {
    let (out, trace, _) =
        evaluate_with(program, inputs, limits, Some(Trace::default()), None, None);
    (out, trace.unwrap_or_default())
}

/// [`evaluate`], telling `observer` what happens block by block (see [`Observer`]).
pub fn evaluate_observed(
    program: &Program,
    inputs: &Inputs,
    limits: Limits,
    observer: &mut dyn Observer,
) -> Result<Output, Fatal> {
    evaluate_with(program, inputs, limits, None, Some(observer), None).0
}

/// The evaluation; the desired resources go to `sink`, or without one to
/// [`Output::resources`].
fn evaluate_with(
    program: &Program,
    inputs: &Inputs,
    limits: Limits,
    trace: Option<Trace>,
    observer: Option<&mut dyn Observer>,
    sink: Option<&mut dyn ResourceSink>,
) -> (
    Result<Output, Fatal>,
    Option<Trace>,
    crate::bytecode::vm::Usage,
) {
    // One random state for the three tables keyed by names from the request (seeded: no
    // crafted names can make them collide), made once: making one costs ~100 instructions.
    let hasher = ahash::RandomState::new();
    let mut kept: Vec<(Str, Value, Readiness)> = Vec::new();
    let mut e = Evaluator {
        program,
        vm: Vm::new(&program.code, limits),
        inputs,
        frame: Vec::with_capacity(program.frame_size as usize),
        desired: match sink {
            Some(sink) => sink,
            None => &mut kept,
        },
        desired_names: HashSet::with_hasher(hasher.clone()),
        statuses: Vec::new(),
        body_diags: Vec::new(),
        connections: Vec::new(),
        contexts: Vec::new(),
        requirements: Vec::new(),
        requirement_names: HashSet::with_hasher(hasher),
        discards: Vec::new(),
        budget_error: None,
        trace,
        // Borrowed for as long as `kept` is.
        observer: match observer {
            Some(o) => Some(&mut *o),
            None => None,
        },
    };
    e.frame.push(inputs.req.clone());
    let mut diags: Diags = program.load_warnings.clone();
    let ds = e.group(&program.root);
    diags.extend(ds);
    let mut trace = e.trace.take();
    if let Some(t) = &mut trace {
        t.discards = e.discards.clone();
    }
    let usage = e.vm.usage();
    if let Some(b) = e.budget_error.take() {
        return (Err(Fatal(format!("evaluate hcl: {b}"))), trace, usage);
    }
    if has_errors(&diags) {
        return (
            Err(Fatal(format!(
                "evaluate hcl: {}",
                crate::syntax::diag::plain_all(&sort_by_severity(diags), &program.sources)
            ))),
            trace,
            usage,
        );
    }
    let out = e.finish(diags).map(|out| Output {
        resources: kept,
        ..out
    });
    (out, trace, usage)
}

/// Errors first, keeping the order within each severity (Go's sortDiagsBySeverity).
fn sort_by_severity(mut d: Diags) -> Diags {
    d.sort_by_key(|x| match x.severity {
        Severity::Error => 0,
        Severity::Warning => 1,
    });
    d
}

impl<'p, 'o> Evaluator<'p, 'o> {
    /// Run one block's evaluation, telling the observer (if any) where it starts and ends.
    fn observed(
        &mut self,
        block: Span,
        item: Option<(usize, Value, Str)>,
        f: impl FnOnce(&mut Self) -> Diags,
    ) -> Diags {
        if let Some(o) = self.observer.as_deref_mut() {
            o.enter(block, item);
        }
        let out = f(self);
        if let Some(o) = self.observer.as_deref_mut() {
            o.exit(&out);
        }
        out
    }

    /// Record a discarded block part (and tell the observer).
    fn discard(&mut self, d: Discard) {
        if let Some(o) = self.observer.as_deref_mut() {
            o.discarded(&d);
        }
        self.discards.push(d);
    }

    /// Record a block part as incomplete: its value is not known yet (or did not
    /// evaluate); `context`: the messages that say why.
    fn incomplete(&mut self, kind: DiscardType, name: &str, span: Span, context: Vec<String>) {
        self.discard(Discard {
            kind,
            reason: DiscardReason::Incomplete,
            name: name.to_string(),
            span,
            context,
        });
    }

    /// Adds the diagnostics of a block's part to the block's: true when the block stops
    /// there (the part failed, or a budget ran out).
    fn part_stops(&self, diags: &mut Diags, part: Diags) -> bool {
        let stop = has_errors(&part) || self.budget_error.is_some();
        diags.extend(part);
        stop
    }

    /// [`Evaluator::eval`], its diagnostics added to `diags`: `None` when they hold errors.
    fn eval_checked(&mut self, e: &CExpr, diags: &mut Diags) -> Option<Value> {
        let mut ds = Vec::new();
        let v = self.eval(e, &mut ds);
        let failed = has_errors(&ds);
        diags.extend(ds);
        (!failed).then_some(v)
    }

    /// Evaluate a chunk in the current frame.
    fn eval(&mut self, e: &CExpr, diags: &mut Diags) -> Value {
        if self.budget_error.is_some() {
            return Value::Unknown(Type::Dynamic);
        }
        match self.vm.eval(e.chunk, &self.frame, diags) {
            Ok(v) => {
                if let Some(o) = self.observer.as_deref_mut() {
                    o.evaluated(e, &self.frame, &v);
                }
                v
            }
            Err(err) => {
                self.budget_error = Some(err.to_string());
                diags.push(err_no_range(err.to_string()));
                Value::Unknown(Type::Dynamic)
            }
        }
    }

    /// Evaluates an expression whose value goes into the response (a body, the composite's
    /// status or connection, a context value): what it becomes when written out is charged
    /// to the evaluation's budgets first, so the response is bounded by them too (a body of
    /// shared parts, or one shared local as the body of many resources, is written once per
    /// use). Over budget, the evaluation stops as for any budget. The walk that measures
    /// the value also says whether it holds an unknown and whether every number in it
    /// survives the JSON round trip (`Emitted`), so a body is walked once before it is
    /// written, not three times.
    fn eval_output(&mut self, e: &CExpr, diags: &mut Diags) -> Emitted {
        let v = self.eval(e, diags);
        let unknown = Emitted {
            value: Value::Unknown(Type::Dynamic),
            unknown: true,
            json: false,
        };
        if self.budget_error.is_some() {
            return Emitted {
                value: v,
                ..unknown
            };
        }
        match self.vm.charge_output(&v, e.range, number_encodes_as_json) {
            Ok(facts) => Emitted {
                value: v,
                unknown: facts.unknown,
                json: !facts.unknown && !facts.refused_number,
            },
            Err(err) => {
                self.budget_error = Some(err.to_string());
                diags.push(err_no_range(err.to_string()));
                unknown
            }
        }
    }

    fn eval_chunk(&mut self, chunk: ChunkId, diags: &mut Diags) -> Value {
        self.eval(
            &CExpr {
                chunk,
                range: Span::default(),
            },
            diags,
        )
    }

    /// function-hcl's `messagesFromDiags`: the source of the expression each diagnostic
    /// is about, then the diagnostic's text.
    fn messages(&self, diags: &[Diagnostic]) -> Vec<String> {
        diags
            .iter()
            .map(|d| {
                let sm = &self.program.sources;
                let mut parts = Vec::new();
                if let Some(r) = d.expression.or(d.context) {
                    parts.push(source_or_unknown(sm, r));
                }
                parts.push(d.plain(sm));
                parts.join(", ")
            })
            .collect()
    }

    /// Push a scope's locals onto the frame. Errors are fatal; a local that fails is
    /// unknown, its diagnostics kept as warnings.
    fn locals(&mut self, l: &Locals) -> Result<Diags, Diags> {
        if let Some(e) = &l.error {
            return Err(vec![e.clone()]);
        }
        debug_assert_eq!(self.frame.len() as u32, l.base);
        let mut diags = Vec::new();
        for def in &l.defs {
            let mut ds = Vec::new();
            let v = self.eval(&def.expr, &mut ds);
            diags.extend(downgrade(ds));
            if let Some(t) = &mut self.trace
                && t.locals
                    .iter()
                    .filter(|(r, _)| *r == def.expr.range)
                    .count()
                    < TRACE_VALUES
            {
                t.locals.push((def.expr.range, v.clone()));
            }
            self.frame.push(v);
        }
        Ok(diags)
    }

    /// function-hcl's `evaluateCondition`: Ok(true) to go on, Ok(false) to skip.
    fn condition(
        &mut self,
        cond: Option<&CAttr>,
        kind: DiscardType,
        name: &str,
        diags: &mut Diags,
    ) -> Result<bool, ()> {
        let Some(c) = cond else { return Ok(true) };
        let mut ds = Vec::new();
        let v = self.eval(&c.expr, &mut ds);
        if has_errors(&ds) || v.contains_unknown() {
            let context = self.messages(&ds);
            self.incomplete(kind, name, c.range, context);
            // Go appends the (downgraded) diagnostics twice; they are deduplicated later.
            let ds = downgrade(ds);
            diags.extend(ds.iter().cloned());
            diags.extend(ds);
            return Ok(false);
        }
        diags.extend(ds);
        // cty's `True()` on a null bool is false (`null == true` is false): the block is
        // skipped as a user condition. A bare `null` has the dynamic type and is refused.
        let truth = match v {
            Value::Bool(b) => Some(b),
            Value::Null(Type::Bool) => Some(false),
            _ => None,
        };
        match truth {
            Some(b) => {
                if !b {
                    self.discard(Discard {
                        kind,
                        reason: DiscardReason::UserCondition,
                        name: name.to_string(),
                        span: c.range,
                        context: Vec::new(),
                    });
                }
                Ok(b)
            }
            None => {
                diags.push(err_no_range(format!(
                    "got type {}, expected {}",
                    go_struct_text(&v.type_of()),
                    go_struct_text(&Type::Bool)
                )));
                Err(())
            }
        }
    }

    fn group(&mut self, g: &Group) -> Diags {
        self.block(g.span, &g.locals, |e, diags| e.group_inner(g, diags))
    }

    fn group_inner(&mut self, g: &Group, mut diags: Diags) -> Diags {
        let mut cd = Vec::new();
        match self.condition(g.condition.as_ref(), DiscardType::Group, "", &mut cd) {
            Err(()) => {
                diags.extend(cd);
                diags.push(err_no_range("unable to evaluate condition"));
                return diags;
            }
            Ok(false) => {
                // fn-hcl: an incomplete group condition keeps its warnings.
                diags.extend(cd);
                return diags;
            }
            Ok(true) => diags.extend(cd),
        }
        for item in &g.items {
            let cur = match item {
                Item::Group(sub) => self.group(sub),
                Item::Resource(r) => self.resource(r),
                Item::Collection(c) => self.collection(c),
                Item::Composite(c) => self.composite(c),
                Item::Context(c) => self.context(c),
                Item::Requirement(r) => self.requirement(r),
                Item::Assert(a) => self.assert(a),
                Item::Fatal(d) => d.clone(),
            };
            if self.part_stops(&mut diags, cur) {
                return diags;
            }
        }
        diags
    }

    /// Attribute `key` of the `self` of a resource named `name`, of its own ones
    /// (`connection`, `name`, `resource`; a collection's are [`CollectionSelf`]). `own_body`: what the block can read of
    /// `self.resource` (`crate::lower::reads`): where it reads nothing, or not all,
    /// `self.resource` may hold placeholders.
    fn own_attr(
        inputs: &Inputs,
        key: &str,
        name: &Str,
        own_body: Option<&crate::lower::reads::Paths>,
    ) -> Value {
        match key {
            "connection" => inputs
                .connection
                .get_attr_key(name)
                .cloned()
                .unwrap_or_default(),
            "name" => Value::string(name.clone()),
            "resource" => match own_body {
                Some(paths) => inputs.observed_body(name, paths),
                None => inputs
                    .resource
                    .get_attr_key(name)
                    .cloned()
                    .unwrap_or_default(),
            },
            _ => Value::NULL,
        }
    }

    fn resource(&mut self, r: &Resource) -> Diags {
        let own_body = self.program.reads.own_paths(&r.content);
        let inputs = self.inputs;
        self.observed(r.content.span, None, |e| {
            e.with_scope(|e| {
                push_special(&mut e.frame, &r.self_, |k| {
                    Self::own_attr(inputs, k, &r.name, own_body)
                });
                e.add_resource(&r.name, &r.content, None)
            })
        })
    }

    /// function-hcl's `addResource` (the caller has pushed `self`).
    fn add_resource(
        &mut self,
        name: &Str,
        c: &ResourceContent,
        annotations: Option<(Str, Str)>,
    ) -> Diags {
        if self.desired_names.contains(name) {
            return vec![err_no_range(format!(
                "duplicate resource {}",
                go_quote(name)
            ))];
        }
        let mut diags = match self.locals(&c.locals) {
            Ok(d) => d,
            Err(d) => return d,
        };
        let mut cd = Vec::new();
        match self.condition(c.condition.as_ref(), DiscardType::Resource, name, &mut cd) {
            Err(()) => {
                diags.extend(cd);
                diags.push(err_no_range(format!(
                    "unable to evaluate condition for resource {name}"
                )));
                return diags;
            }
            // Go drops the condition's diagnostics when it skips a resource.
            Ok(false) => return Vec::new(),
            Ok(true) => diags.extend(cd),
        }
        if self.asserts(&c.subs, &mut diags) {
            return diags;
        }
        let mut ds = std::mem::take(&mut self.body_diags);
        let Emitted {
            value: out,
            unknown,
            json,
        } = self.eval_output(&c.body, &mut ds);
        if has_errors(&ds) || unknown {
            let context = self.messages(&ds);
            let mut incomplete = Vec::new();
            for (sp, chunk) in &c.body_vars {
                let mut td = Vec::new();
                let v = self.eval_chunk(*chunk, &mut td);
                ds.extend(td);
                if v.contains_unknown() {
                    let source = source_or_unknown(&self.program.sources, *sp);
                    let mut paths = Vec::new();
                    unknown_paths(&v, &mut String::new(), &mut paths);
                    incomplete.extend(paths.iter().map(|p| format!("{source}{p}")));
                }
            }
            let unknown = incomplete.join(", ");
            if self.inputs.is_observed(name) {
                diags.extend(ds);
                diags.push(
                    err_at(
                        format!(
                            "existing resource {name} could not be evaluated, abort (unknown values: {unknown})"
                        ),
                        "",
                        c.body.range,
                    ),
                );
                return diags;
            }
            let mut context = context;
            context.push(format!("unknown values: {unknown}"));
            self.incomplete(DiscardType::Resource, name, c.body.range, context);
            diags.extend(downgrade(ds));
            return diags;
        }
        diags.append(&mut ds);
        self.body_diags = ds;
        // The annotations added here (not compiled into the body, which charged them with
        // it) are charged before they are, as the rest of the body was.
        if json
            && let Some((base, index)) = &annotations
            && let Err(err) = self.vm.charge_written(
                2,
                (ANNOTATION_BASE_NAME.len() + base.len() + ANNOTATION_INDEX.len() + index.len())
                    as u64,
                c.body.range,
            )
        {
            self.budget_error = Some(err.to_string());
            diags.push(err_no_range(err.to_string()));
            return diags;
        }
        // Annotations add strings only: the body round-trips through JSON if `out` does.
        let body = match with_annotations(out, annotations).filter(|_| json) {
            Some(b) => b,
            None => {
                diags.push(err_at(
                    format!("unable to convert resource body to struct: {name}"),
                    "",
                    c.body.range,
                ));
                return diags;
            }
        };
        self.desired_names.insert(name.clone());
        self.desired.resource(name, body);
        for s in &c.subs {
            let cur = match s {
                Sub::Composite(x) => self.composite(x),
                Sub::Ready(x) => self.ready_block(name, x),
                Sub::Context(x) => self.context(x),
                Sub::Assert(_) => Vec::new(),
                Sub::Fatal(d) => d.clone(),
            };
            if self.part_stops(&mut diags, cur) {
                return diags;
            }
        }
        diags
    }

    fn collection(&mut self, c: &Collection) -> Diags {
        self.observed(c.span, None, |e| e.with_scope(|e| e.collection_inner(c)))
    }

    fn collection_inner(&mut self, c: &Collection) -> Diags {
        let base_name = &c.base;
        let own_body = self.program.reads.own_paths(&c.template);
        let inputs = self.inputs;
        // The collection's attributes of `self`, looked up once: every member's `self`
        // has them too.
        let shared = CollectionSelf::of(inputs, base_name);
        push_special(&mut self.frame, &c.self_, |k| {
            shared.attr(k).unwrap_or_default()
        });
        let mut diags = match self.locals(&c.locals) {
            Ok(d) => d,
            Err(d) => return d,
        };
        match self.condition(
            c.condition.as_ref(),
            DiscardType::Resources,
            base_name,
            &mut diags,
        ) {
            Err(()) => {
                diags.push(err_at(
                    format!("unable to evaluate condition for resource collection {base_name}"),
                    "",
                    c.def_range,
                ));
                return diags;
            }
            Ok(false) => return diags,
            Ok(true) => {}
        }
        if self.asserts(&c.subs, &mut diags) {
            return diags;
        }
        let Some(for_each) = self.eval_checked(&c.for_each, &mut diags) else {
            diags.push(err_at(
                format!("unable to evaluate for_each for resource collection {base_name}"),
                "",
                c.for_each.range,
            ));
            return diags;
        };
        let Some(iters) = iterations(&for_each) else {
            diags.push(err_at(
                format!("unable to extract iterations for resource collection {base_name}"),
                "",
                c.for_each.range,
            ));
            return diags;
        };
        let iter_base = self.frame.len();
        // Room for the members (and their statuses) up front: the index grew by rehashing
        // as they came (~2% of a small template's work). Bounded: `iters` is a charged
        // value's length, and the reservation stops at `MEMBERS_RESERVED` beyond which
        // growth is cheap by comparison.
        let room = iters.len().min(MEMBERS_RESERVED);
        self.desired.reserve(room);
        self.desired_names.reserve(room);
        if c.template
            .subs
            .iter()
            .any(|s| matches!(s, Sub::Composite(_)))
        {
            self.statuses.reserve(room);
        }
        // The template's expressions that read nothing a member binds are computed by
        // the first member that needs them, for this collection only.
        self.vm.forget_memos();
        for (i, (key, value)) in iters.into_iter().enumerate() {
            Value::truncate(&mut self.frame, iter_base);
            // `explain` is told each member's `each` whole.
            let each = self
                .observer
                .is_some()
                .then(|| Value::object_sorted(vec![(KEY, key.clone()), (VALUE, value.clone())]));
            let mut kv = [Some(key), Some(value)];
            push_special(&mut self.frame, &c.each, |k| {
                let i = usize::from(k == "value");
                kv[i].take().unwrap_or_default()
            });
            let Some(name_val) = self.eval_checked(&c.name, &mut diags) else {
                diags.push(err_at(
                    format!(
                        "unable to evaluate name expression for resource collection {base_name}"
                    ),
                    "",
                    c.name.range,
                ));
                return diags;
            };
            let name: Str = match name_val {
                Value::String(s) => s,
                _ => {
                    diags.push(err_at(
                        format!(
                            "name produced from evaluating the name expression for collection {base_name} was not a string"
                        ),
                        "",
                        c.name.range,
                    ));
                    return diags;
                }
            };
            push_special(&mut self.frame, &c.template_self, |k| {
                shared
                    .attr(k)
                    .unwrap_or_else(|| Self::own_attr(inputs, k, &name, own_body))
            });
            // The annotations: compiled into the body, which reads the index from its slot,
            // or added to the body by `add_resource`.
            let index = item_index(i);
            let annotations = match c.member_index {
                Some(slot) => {
                    debug_assert_eq!(self.frame.len() as u32, slot);
                    self.frame.push(Value::String(index));
                    None
                }
                None => Some((base_name.clone(), index)),
            };
            let item = each.map(|each| (i, each, name.clone()));
            let ds = self.observed(c.template.span, item, |e| {
                e.add_resource(&name, &c.template, annotations)
            });
            if self.part_stops(&mut diags, ds) {
                return diags;
            }
        }
        Value::truncate(&mut self.frame, iter_base);
        for s in &c.subs {
            let cur = match s {
                Sub::Composite(x) => self.composite(x),
                Sub::Context(x) => self.context(x),
                Sub::Ready(_) | Sub::Assert(_) => Vec::new(),
                Sub::Fatal(d) => d.clone(),
            };
            if self.part_stops(&mut diags, cur) {
                return diags;
            }
        }
        diags
    }

    /// Run `f`, then drop the slots it pushed onto the frame (a block's locals, `self`).
    fn with_scope<T>(&mut self, f: impl FnOnce(&mut Self) -> T) -> T {
        let base = self.frame.len();
        let out = f(self);
        Value::truncate(&mut self.frame, base);
        out
    }

    /// A block that only reads its locals (no `self`): observed, in its own scope, its
    /// locals first (the block ends when one fails), then `f` with their diagnostics.
    fn block(
        &mut self,
        span: Span,
        locals: &Locals,
        f: impl FnOnce(&mut Self, Diags) -> Diags,
    ) -> Diags {
        self.observed(span, None, |e| {
            e.with_scope(|e| match e.locals(locals) {
                Ok(diags) => f(e, diags),
                Err(diags) => diags,
            })
        })
    }

    fn composite(&mut self, c: &Composite) -> Diags {
        self.block(c.span, &c.locals, |e, diags| e.composite_inner(c, diags))
    }

    fn composite_inner(&mut self, c: &Composite, mut diags: Diags) -> Diags {
        let kind = match &c.kind {
            CompositeKind::Status => DiscardType::Status,
            CompositeKind::Connection => DiscardType::Connection,
            CompositeKind::Invalid(label) => {
                diags.push(err_no_range(format!("invalid composite label: {label}")));
                return diags;
            }
        };
        let mut ds = std::mem::take(&mut self.body_diags);
        let Emitted {
            value: v,
            unknown,
            json,
        } = self.eval_output(&c.body, &mut ds);
        if has_errors(&ds) || unknown {
            let context = self.messages(&ds);
            self.incomplete(kind, "", c.body.range, context);
            diags.extend(downgrade(ds));
            return diags;
        }
        diags.append(&mut ds);
        self.body_diags = ds;
        if kind == DiscardType::Status {
            // Kept as a value: merged with the others and written to the response as is.
            // (An object that round-trips, as the charging walk found, needs no more look.)
            let checked = if json && matches!(v, Value::Object(_) | Value::Map(_)) {
                Ok(true)
            } else {
                go_object_check(&v)
            };
            match checked {
                Ok(true) => self.statuses.push(v),
                Ok(false) => {}
                Err(msg) => diags.push(err_at(msg, "", c.body.range)),
            }
            return diags;
        }
        // An object of strings (the usual body) is read as it is: the Go object it
        // round-trips to holds the same keys and strings, in the same (byte) order. Only
        // one of the two sources is present; the secrets are read from it directly.
        let strings = match &v {
            Value::Object(f) | Value::Map(f)
                if json && f.entries.iter().all(|(_, x)| matches!(x, Value::String(_))) =>
            {
                Some(&f.entries)
            }
            _ => None,
        };
        let go_object = match strings {
            Some(_) => None,
            None => match to_go_object(&v) {
                Ok(Some(o)) => Some(o),
                Ok(None) => return diags,
                Err(msg) => {
                    diags.push(err_at(msg, "", c.body.range));
                    return diags;
                }
            },
        };
        let secrets = (strings.into_iter().flatten().map(value_secret))
            .chain(go_object.iter().flatten().map(json_secret));
        let count = strings.map_or(0, <[_]>::len) + go_object.as_ref().map_or(0, |o| o.len());
        let mut values = Vec::with_capacity(count);
        let mut bad = false;
        for (k, s) in secrets {
            let s = match s {
                Ok(s) => s,
                Err(other) => {
                    diags.push(err_no_range(format!(
                        "connection key {} was not a string, got {}",
                        go_quote(k),
                        Json::go_type(other)
                    )));
                    continue;
                }
            };
            match base64_std_decode(s) {
                Some(b) => values.push((k.to_string(), b)),
                None => {
                    let msg = format!("connection secret key {} not in base64 format", go_quote(k));
                    self.discard(Discard {
                        kind: DiscardType::Connection,
                        reason: DiscardReason::BadSecret,
                        name: k.to_string(),
                        span: c.body.range,
                        context: vec![msg.clone()],
                    });
                    diags.push(Diagnostic {
                        severity: Severity::Warning,
                        ..err_no_range(msg)
                    });
                    bad = true;
                }
            }
        }
        if !bad && !has_errors(&diags) {
            self.connections.push(values);
        }
        diags
    }

    fn context(&mut self, c: &ContextBlock) -> Diags {
        self.block(c.span, &c.locals, |e, diags| e.context_inner(c, diags))
    }

    fn context_inner(&mut self, c: &ContextBlock, mut diags: Diags) -> Diags {
        let mut ds = Vec::new();
        let key = self.eval(&c.key, &mut ds);
        let failed = has_errors(&ds);
        diags.extend(ds.iter().cloned());
        if failed {
            diags.push(err_at(
                "unable to evaluate context key",
                crate::syntax::diag::plain_all(&ds, &self.program.sources),
                c.key.range,
            ));
            return diags;
        }
        if key.contains_unknown() {
            diags.push(err_at("context key is unknown", "", c.key.range));
            return diags;
        }
        let Value::String(key) = key else {
            diags.push(err_at(
                format!(
                    "context key was not a string, got {}",
                    key.type_of().friendly_name()
                ),
                "",
                c.key.range,
            ));
            return diags;
        };
        let mut vd = Vec::new();
        let Emitted {
            value: v,
            unknown,
            json,
        } = self.eval_output(&c.value, &mut vd);
        if has_errors(&diags) || has_errors(&vd) || unknown {
            let context = self.messages(&diags);
            self.incomplete(DiscardType::Context, "", c.value.range, context);
            diags.extend(downgrade(vd));
            return diags;
        }
        diags.extend(vd);
        match if json { None } else { round_trip_error(&v) } {
            None => self.contexts.push(Value::object_sorted(vec![(key, v)])),
            Some(e) => diags.push(err_at(
                "cannot convert value to interface",
                e.to_string(),
                c.value.range,
            )),
        }
        diags
    }

    /// The `assert` blocks among a block's subs, before its body: true to stop (an error).
    fn asserts(&mut self, subs: &[Sub], diags: &mut Diags) -> bool {
        for s in subs {
            if let Sub::Assert(a) = s {
                let cur = self.assert(a);
                if self.part_stops(diags, cur) {
                    return true;
                }
            }
        }
        false
    }

    /// An `assert` block: nothing when its assertion holds; an error carrying the message
    /// when it does not (a warning when `warning` is true); deferred, like any block, when
    /// the assertion, message or warning cannot be evaluated yet.
    fn assert(&mut self, a: &Assert) -> Diags {
        self.observed(a.span, None, |e| e.assert_inner(a))
    }

    fn assert_inner(&mut self, a: &Assert) -> Diags {
        let mut diags = Vec::new();
        let mut ds = Vec::new();
        let v = self.eval(&a.assertion, &mut ds);
        if has_errors(&ds) || v.contains_unknown() {
            return self.defer_assert(a.assertion.range, ds);
        }
        diags.extend(ds);
        let holds = match v {
            Value::Bool(b) => b,
            other => {
                diags.push(not_a(&other, "assertion", "a bool", a.assertion.range));
                return diags;
            }
        };
        if holds {
            return diags;
        }
        let mut ds = Vec::new();
        let message = self.eval(&a.message, &mut ds);
        let warning = match &a.warning {
            Some(w) => self.eval(w, &mut ds),
            None => Value::Bool(false),
        };
        if has_errors(&ds) || message.contains_unknown() || warning.contains_unknown() {
            let range = if message.contains_unknown() || a.warning.is_none() {
                a.message.range
            } else {
                a.warning.as_ref().map_or(a.message.range, |w| w.range)
            };
            return self.defer_assert(range, ds);
        }
        diags.extend(ds);
        let message = match crate::value::convert::convert(&message, &Type::String) {
            Ok(Value::String(s)) => s,
            _ => {
                diags.push(not_a(
                    &message,
                    "assert message",
                    "a string",
                    a.message.range,
                ));
                return diags;
            }
        };
        let warning = match warning {
            Value::Bool(b) => b,
            other => {
                let range = a.warning.as_ref().map_or(a.message.range, |w| w.range);
                diags.push(not_a(&other, "assert warning", "a bool", range));
                return diags;
            }
        };
        // The message in the summary: a warning is listed by its summary alone.
        let summary = format!("assertion failed: {message}");
        let d = if warning {
            Diagnostic::warning(summary, "", a.def_range)
        } else {
            Diagnostic::error(summary, "", a.def_range)
        };
        diags.push(d);
        diags
    }

    /// An assert that depends on something unknown: a discard, its diagnostics warnings.
    fn defer_assert(&mut self, range: Span, ds: Diags) -> Diags {
        let context = self.messages(&ds);
        self.incomplete(DiscardType::Assert, "", range, context);
        downgrade(ds)
    }

    fn ready_block(&mut self, name: &Str, r: &Ready) -> Diags {
        self.block(r.span, &r.locals, |e, diags| e.ready_inner(name, r, diags))
    }

    fn ready_inner(&mut self, name: &Str, r: &Ready, mut diags: Diags) -> Diags {
        let mut ds = Vec::new();
        let v = self.eval(&r.value, &mut ds);
        if has_errors(&ds) || v.contains_unknown() {
            let context = self.messages(&diags);
            self.incomplete(DiscardType::Ready, name, r.value.range, context);
            diags.extend(downgrade(ds));
            return diags;
        }
        diags.extend(ds);
        let Value::String(s) = v else {
            diags.push(err_at(
                format!("attribute \"value\" not a string in ready block for {name}"),
                "",
                r.value.range,
            ));
            return diags;
        };
        let code = match &*s {
            "READY_UNSPECIFIED" => Readiness::Unspecified,
            "READY_TRUE" => Readiness::True,
            "READY_FALSE" => Readiness::False,
            _ => {
                diags.push(err_at(
                    format!(
                        "attribute \"value\" does not have a valid value in ready block for {name}, must be one of \"READY_FALSE, READY_TRUE, READY_UNSPECIFIED\""
                    ),
                    "",
                    r.value.range,
                ));
                return diags;
            }
        };
        // The block runs after its resource was added: it sets that entry's readiness.
        self.desired.ready(name, code);
        diags
    }

    fn requirement(&mut self, r: &Requirement) -> Diags {
        self.observed(r.span, None, |e| e.with_scope(|e| e.requirement_inner(r)))
    }

    fn requirement_inner(&mut self, r: &Requirement) -> Diags {
        let name = &r.name;
        let fail = |summary: String, range: Span| {
            vec![Diagnostic::error_at(summary, name.to_string(), range)]
        };
        if self.requirement_names.contains(name) {
            return fail("multiple requirements with name".into(), r.def_range);
        }
        // Go type-checks constant selector values before anything else.
        let mut diags = Vec::new();
        let exprs = [
            ("api version", &r.api_version),
            ("kind", &r.kind),
            (
                "matchName",
                match &r.matcher {
                    Matcher::Name(e) | Matcher::Labels(e) => e,
                },
            ),
        ];
        for (i, (what, e)) in exprs.iter().enumerate() {
            if !r.constant[i] {
                continue;
            }
            let mut ignored = Vec::new();
            let v = self.eval(e, &mut ignored);
            if v.contains_unknown() {
                continue;
            }
            if i < 2 || matches!(r.matcher, Matcher::Name(_)) {
                if !matches!(v, Value::String(_)) {
                    diags.extend(fail(
                        format!("{what} in requirement selector was not a string"),
                        e.range,
                    ));
                }
            } else if let Err(msg) = label_map(&v) {
                diags.extend(fail(msg, e.range));
            }
        }
        if has_errors(&diags) {
            return diags;
        }
        let mut cur = match self.locals(&r.locals) {
            Ok(d) => d,
            Err(d) => return d,
        };
        match self.condition(
            r.condition.as_ref(),
            DiscardType::Requirement,
            name,
            &mut cur,
        ) {
            Err(()) => return cur,
            Ok(false) => return cur,
            Ok(true) => {}
        }
        self.requirement_names.insert(name.clone());
        // A selector value, or None when it is unknown: the requirement is then incomplete
        // (with its diagnostics as warnings; a known value's are dropped, as in Go).
        let known = |e: &mut Self, cur: &mut Diags, x: &CExpr| {
            let mut ds = Vec::new();
            let v = e.eval(x, &mut ds);
            if v.contains_unknown() {
                e.incomplete(DiscardType::Requirement, name, r.select_range, Vec::new());
                cur.extend(downgrade(ds));
                return None;
            }
            Some(v)
        };
        let mut strings = Vec::new();
        for (what, e) in [("api version", &r.api_version), ("kind", &r.kind)] {
            let Some(v) = known(self, &mut cur, e) else {
                return cur;
            };
            let Value::String(s) = v else {
                return fail(
                    format!("{what} in requirement selector was not a string"),
                    e.range,
                );
            };
            strings.push(s.to_string());
        }
        let matcher = match &r.matcher {
            Matcher::Name(e) => {
                let Some(v) = known(self, &mut cur, e) else {
                    return cur;
                };
                let Value::String(s) = v else {
                    return fail(
                        "matchName in requirement selector was not a string".into(),
                        e.range,
                    );
                };
                SelectorMatch::Name(s.to_string())
            }
            Matcher::Labels(e) => {
                let Some(v) = known(self, &mut cur, e) else {
                    return cur;
                };
                match label_map(&v) {
                    Ok(m) => SelectorMatch::Labels(m),
                    Err(msg) => return fail(msg, e.range),
                }
            }
        };
        let kind = strings.pop().unwrap_or_default();
        let api_version = strings.pop().unwrap_or_default();
        self.requirements.push((
            name.clone(),
            Selector {
                api_version,
                kind,
                matcher,
            },
        ));
        cur
    }

    /// function-hcl's `toResponse` minus the protobuf: unify, conditions and results.
    fn finish(self, diags: Diags) -> Result<Output, Fatal> {
        let mut out = Output {
            ..Output::default()
        };
        if !self.statuses.is_empty() {
            out.status = Some(
                unify(&self.statuses)
                    .map_err(|e| Fatal(format!("evaluate hcl: unify composite status: {e}")))?,
            );
        }
        if !self.connections.is_empty() {
            out.connection = Some(merge_connections(self.connections)?);
        }
        if !self.contexts.is_empty() {
            out.context = Some(
                unify(&self.contexts)
                    .map_err(|e| Fatal(format!("evaluate hcl: unify context: {e}")))?,
            );
        }
        out.requirements = self.requirements;
        let mut shown = Vec::new();
        for d in &self.discards {
            if d.reason == DiscardReason::UserCondition {
                continue;
            }
            out.results.push(ResultMsg {
                severity: ResultSeverity::Warning,
                message: d.message(&self.program.sources).into(),
                reason: Some(d.reason.as_str().into()),
            });
            if shown.len() < 3 {
                shown.push(format!("{} {}", d.kind.as_str(), d.name));
            }
        }
        let incomplete = !out.results.is_empty();
        let message: Text = if shown.is_empty() {
            "all items complete".into()
        } else if out.results.len() > 3 {
            format!(
                "{} and {} more items incomplete",
                shown.join(", "),
                out.results.len() - 3
            )
            .into()
        } else {
            format!("{} incomplete", shown.join(", ")).into()
        };
        out.conditions.push(CondMsg {
            kind: "FullyResolved",
            status: !incomplete,
            reason: if incomplete {
                "IncompleteItemsPresent"
            } else {
                "AllItemsProcessed"
            },
            message,
        });
        // HclDiagnostics: unique (severity, range, summary), errors first, then by file
        // and offset.
        let sm = &self.program.sources;
        let mut seen = HashSet::new();
        let mut uniques: Vec<&Diagnostic> = Vec::new();
        for d in &diags {
            let r = d.subject.or(d.context);
            let key = (
                d.severity == Severity::Error,
                r.map(|r| (r.file, r.start, r.end)),
                d.summary.clone(),
            );
            if seen.insert(key) {
                uniques.push(d);
            }
        }
        uniques.sort_by(|a, b| {
            let sev = |d: &Diagnostic| u8::from(d.severity != Severity::Error);
            let ra = a.subject.or(a.context);
            let rb = b.subject.or(b.context);
            let fname =
                |r: Option<Span>| r.map(|r| sm.name(r.file).to_string()).unwrap_or_default();
            sev(a)
                .cmp(&sev(b))
                .then_with(|| fname(ra).cmp(&fname(rb)))
                .then_with(|| {
                    ra.map(|r| r.start.byte)
                        .unwrap_or(0)
                        .cmp(&rb.map(|r| r.start.byte).unwrap_or(0))
                })
        });
        let summaries: Vec<String> = uniques
            .iter()
            .filter(|d| d.severity == Severity::Warning)
            .map(|d| d.short(sm))
            .collect();
        if summaries.is_empty() {
            out.results.push(ResultMsg {
                severity: ResultSeverity::Normal,
                message: "no warnings".into(),
                reason: Some("HclDiagnostics".into()),
            });
            out.conditions.push(CondMsg {
                kind: "HclDiagnostics",
                status: true,
                reason: "Eval",
                message: "hcl.Diagnostics contains no warnings".into(),
            });
        } else {
            out.results.push(ResultMsg {
                severity: ResultSeverity::Warning,
                message: format!("warnings: [{}]", summaries.join("; ")).into(),
                reason: Some("HclDiagnostics".into()),
            });
            out.conditions.push(CondMsg {
                kind: "HclDiagnostics",
                status: false,
                reason: "Eval",
                message: format!(
                    "hcl.Diagnostics contains {} warnings; {}",
                    summaries.len(),
                    summaries.join("; ")
                )
                .into(),
            });
        }
        Ok(out)
    }
}

/// An assert attribute whose value has the wrong type (or is null).
fn not_a(v: &Value, what: &str, want: &str, range: Span) -> Diagnostic {
    let got = if v.is_null() {
        "null".to_string()
    } else {
        v.type_of().friendly_name()
    };
    err_at(
        format!("Invalid {what}"),
        format!("The {what} must be {want}, got {got}."),
        range,
    )
}

/// The source text of a range, or Go's placeholder.
fn source_or_unknown(sm: &crate::syntax::span::SourceMap, r: Span) -> String {
    let s = sm.slice(r);
    if s.is_empty() && r.start.byte != r.end.byte {
        "[unknown source]".to_string()
    } else {
        s.to_string()
    }
}

/// The iterations of a `for_each` value: (key, value) pairs, or None if it cannot be
/// iterated (unknown, null, or not a collection).
/// The most members a collection reserves room for before it evaluates them.
const MEMBERS_RESERVED: usize = 4096;

fn iterations(v: &Value) -> Option<Vec<(Value, Value)>> {
    if v.contains_unknown() {
        return None;
    }
    match v {
        Value::List(s) | Value::Tuple(s) => Some(
            s.items
                .iter()
                .enumerate()
                .map(|(i, x)| (Value::int(i as i64), x.clone()))
                .collect(),
        ),
        Value::Set(s) => Some(s.items.iter().map(|x| (x.clone(), x.clone())).collect()),
        Value::Map(f) | Value::Object(f) => Some(
            f.entries
                .iter()
                .map(|(k, x)| (Value::String(k.clone()), x.clone()))
                .collect(),
        ),
        _ => None,
    }
}

/// Add the collection annotations to a resource body. None if the body is not an object.
fn with_annotations(body: Value, annotations: Option<(Str, Str)>) -> Option<Value> {
    let (Value::Object(_) | Value::Map(_)) = &body else {
        return None;
    };
    let Some((base, index)) = annotations else {
        return Some(body);
    };
    // The body, its metadata and their annotations are objects just built (not shared):
    // a value is replaced where it lies; an object given a new key is made again with it
    // in its place (`Fields::with_entries`).
    const METADATA: Str = Str::inline("metadata");
    const ANNOTATIONS: Str = Str::inline("annotations");
    static BASE_NAME: LazyLock<Str> = LazyLock::new(|| Str::from(ANNOTATION_BASE_NAME));
    static INDEX: LazyLock<Str> = LazyLock::new(|| Str::from(ANNOTATION_INDEX));
    // `item_index` is ASCII: in normal form already.
    let two = [
        (BASE_NAME.clone(), Value::String(base)),
        (INDEX.clone(), Value::String(index)),
    ];
    let body = update_entry(object_fields(Some(body)), &METADATA, |meta| {
        let meta = update_entry(object_fields(Some(meta)), &ANNOTATIONS, |ann| match ann {
            // No annotations (or null): the two, already in order.
            Value::Null(_) => Value::object_sorted(two.into()),
            given => Value::Object(Fields::with_entries(object_fields(Some(given)), two)),
        });
        Value::Object(meta)
    });
    Some(Value::Object(body))
}

/// `fields` with the value of `key` (null if absent) replaced by what `f` makes of it:
/// where it lies if the entries are not shared (a body just built), the summary updated
/// by what left and came; a new key by [`Fields::with_entries`].
fn update_entry(
    mut fields: Shared<Fields>,
    key: &Str,
    f: impl FnOnce(Value) -> Value,
) -> Shared<Fields> {
    let Ok(i) = fields.entries.binary_search_by(|(k, _)| k.cmp(key)) else {
        return Fields::with_entries(fields, [(key.clone(), f(Value::NULL))]);
    };
    let m = Fields::make_mut(&mut fields);
    let old = std::mem::take(&mut m.entries[i].1);
    let (mut out, mut added) = (Summary::default(), Summary::default());
    out.add(&old);
    let new = f(old);
    added.add(&new);
    m.entries[i].1 = new;
    m.changed(out, added, 0);
    fields
}

/// A collection item's index annotation, `s` and six digits at least (`s000042`), formatted
/// on the stack and allocated once.
fn item_index(i: usize) -> Str {
    let mut digits = itoa::Buffer::new();
    let digits = digits.format(i).as_bytes();
    // 's', zeros up to six digits, the digits: 27 bytes at most.
    let mut buf = [b'0'; 27];
    buf[0] = b's';
    let start = 1 + 6usize.saturating_sub(digits.len());
    let end = start + digits.len();
    buf[start..end].copy_from_slice(digits);
    // Only 's' and ASCII digits were written.
    Str::from(crate::text::words::str_of(&buf[..end]).unwrap_or_default())
}

/// The entries of a map or object as an object's (anything else: none).
fn object_fields(v: Option<Value>) -> Shared<Fields> {
    match v {
        Some(Value::Object(f)) => f,
        Some(Value::Map(mut f)) => {
            Fields::make_mut(&mut f).forget_elem();
            f
        }
        _ => Fields::new(Type::Dynamic, Vec::new()),
    }
}

/// The attribute names of a collection item's `each`.
const KEY: Str = Str::inline("key");
const VALUE: Str = Str::inline("value");

/// A collection's attributes of `self` (`basename`, `connections`, `resources`), which
/// its members' `self` shares.
struct CollectionSelf {
    basename: Value,
    connections: Value,
    resources: Value,
}

impl CollectionSelf {
    fn of(inputs: &Inputs, base: &Str) -> Self {
        let of = |v: &Value| v.get_attr(base).cloned().unwrap_or_default();
        CollectionSelf {
            basename: Value::string(base.clone()),
            connections: of(&inputs.connections),
            resources: of(&inputs.resources),
        }
    }

    /// Attribute `key`, `None` for one that is not the collection's.
    fn attr(&self, key: &str) -> Option<Value> {
        match key {
            "basename" => Some(self.basename.clone()),
            "connections" => Some(self.connections.clone()),
            "resources" => Some(self.resources.clone()),
            _ => None,
        }
    }
}

/// Push `self` or `each` onto the frame, in `special`'s slots: its object only when
/// something reads it whole, each attribute's value (`value(key)`) only when read, null
/// in the slots nothing reads.
fn push_special(frame: &mut Vec<Value>, special: &Special, mut value: impl FnMut(&str) -> Value) {
    debug_assert_eq!(frame.len() as u32, special.slot);
    let at = frame.len();
    frame.push(Value::NULL);
    let mut entries = Vec::with_capacity(if special.whole { special.keys.len() } else { 0 });
    for (i, k) in special.keys.iter().enumerate() {
        if !special.needs(i) {
            frame.push(Value::NULL);
            continue;
        }
        let v = value(k);
        if special.whole {
            entries.push((k.clone(), v.clone()));
        }
        frame.push(v);
    }
    if special.whole
        && let Some(slot) = frame.get_mut(at)
    {
        *slot = Value::object_sorted(entries);
    }
    debug_assert_eq!(frame.len() as u32, special.slot + special.slots());
}

/// function-hcl's `findUnknownPaths` and `path2String`: where the unknowns inside a value are,
/// in cty.Walk order (attributes and map keys sorted, elements in order), as `.attr`,
/// `[key]` (unquoted) or `[index]`. A wholly unknown value gives one empty path.
fn unknown_paths(v: &Value, path: &mut String, out: &mut Vec<String>) {
    let visit = |step: &str, x: &Value, path: &mut String, out: &mut Vec<String>| {
        let len = path.len();
        path.push_str(step);
        unknown_paths(x, path, out);
        path.truncate(len);
    };
    match v {
        Value::Unknown(_) => out.push(path.clone()),
        Value::Object(f) => {
            for (k, x) in &f.entries {
                visit(&format!(".{k}"), x, path, out);
            }
        }
        Value::Map(f) => {
            for (k, x) in &f.entries {
                visit(&format!("[{k}]"), x, path, out);
            }
        }
        Value::List(s) | Value::Tuple(s) => {
            for (i, x) in s.items.iter().enumerate() {
                visit(&format!("[{i}]"), x, path, out);
            }
        }
        Value::Set(s) => {
            for x in &s.items {
                let step = match x {
                    Value::String(k) => format!("[{k}]"),
                    Value::Number(n) => format!("[{}]", n.text(b'f', 0)),
                    _ => "<?>".to_string(),
                };
                visit(&step, x, path, out);
            }
        }
        _ => {}
    }
}

/// A connection secret of an object of strings: its key and text.
fn value_secret((k, x): &(Str, Value)) -> (&str, Result<&str, &Json>) {
    (k, Ok(x.as_str().unwrap_or_default()))
}

/// A connection secret of the Go object: its key, and its text or what it is instead.
fn json_secret<'a>((k, x): (&'a String, &'a Json)) -> (&'a str, Result<&'a str, &'a Json>) {
    match x {
        Json::String(s) => (k, Ok(s)),
        other => (k, Err(other)),
    }
}

/// Go's `base64.StdEncoding.DecodeString`: padding required, `\r`/`\n` anywhere skipped
/// (line-wrapped secrets are valid), non-zero trailing bits tolerated.
fn base64_std_decode(s: &str) -> Option<Vec<u8>> {
    crate::text::base64::go_base64_decode(s.as_bytes()).ok()
}

/// function-hcl's unification of the `composite connection` entries: one map, where a
/// key given twice must have equal values (otherwise the first key found given two is
/// named). Entries already in strictly increasing key order (a collection over a map
/// giving each member its own key: the usual case) are taken in one pass, without a
/// search per key (1.4% of the instructions of a request composing 500 services).
fn merge_connections(
    parts: Vec<Vec<(String, Vec<u8>)>>,
) -> Result<BTreeMap<String, Vec<u8>>, Fatal> {
    let increasing = parts
        .iter()
        .flatten()
        .zip(parts.iter().flatten().skip(1))
        .all(|((a, _), (b, _))| a < b);
    if increasing {
        // No key twice: nothing to compare; the map is built from sorted entries.
        return Ok(parts.into_iter().flatten().collect());
    }
    let mut merged: BTreeMap<String, Vec<u8>> = BTreeMap::new();
    for (k, v) in parts.into_iter().flatten() {
        // One search per key: the entry either takes the value or holds an equal one.
        match merged.entry(k) {
            std::collections::btree_map::Entry::Vacant(e) => {
                e.insert(v);
            }
            std::collections::btree_map::Entry::Occupied(e) if *e.get() != v => {
                return Err(Fatal(format!(
                    "evaluate hcl: unify composite connection: values for key {} not equal",
                    e.key()
                )));
            }
            std::collections::btree_map::Entry::Occupied(_) => {}
        }
    }
    Ok(merged)
}

/// The labels of a `matchLabels` value.
fn label_map(v: &Value) -> Result<BTreeMap<String, String>, String> {
    let Value::Object(f) = v else {
        return Err("matchLabels in requirement selector was not an object".into());
    };
    let mut m = BTreeMap::new();
    for (k, x) in &f.entries {
        match x {
            Value::String(s) => {
                m.insert(k.to_string(), s.to_string());
            }
            _ => {
                return Err(format!(
                    "match label {} in requirement selector was not an string",
                    go_quote(k)
                ));
            }
        }
    }
    Ok(m)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::doc::parse_json;
    use crate::runtime::gojson::to_json;

    #[test]
    fn connection_entries_unify_in_any_order() {
        let e = |k: &str, v: &str| (k.to_string(), v.as_bytes().to_vec());
        let m = |parts: Vec<Vec<(String, Vec<u8>)>>| merge_connections(parts);
        let want: BTreeMap<_, _> = [e("a", "1"), e("b", "2"), e("c", "3")].into();
        // In order, out of order, a key given twice with one value: the same map.
        let sorted = vec![vec![e("a", "1")], vec![e("b", "2"), e("c", "3")]];
        assert_eq!(m(sorted).ok(), Some(want.clone()));
        let shuffled = vec![vec![e("c", "3")], vec![e("a", "1"), e("b", "2")]];
        assert_eq!(m(shuffled).ok(), Some(want.clone()));
        let twice = vec![
            vec![e("a", "1"), e("b", "2")],
            vec![e("b", "2"), e("c", "3")],
        ];
        assert_eq!(m(twice).ok(), Some(want));
        // Two values for a key: the first key found so is named.
        let clash = vec![
            vec![e("b", "1"), e("c", "1")],
            vec![e("c", "2"), e("b", "2")],
        ];
        let err = m(clash).err().map(|f| f.0);
        assert_eq!(
            err.as_deref(),
            Some("evaluate hcl: unify composite connection: values for key c not equal")
        );
    }

    #[test]
    fn unknown_paths_follow_cty_walk() {
        let unknown = Value::Unknown(Type::Dynamic);
        let mut out = Vec::new();
        unknown_paths(&unknown, &mut String::new(), &mut out);
        assert_eq!(out, vec![String::new()]);
        let v = Value::object(vec![
            ("b".into(), Value::int(1)),
            (
                "a".into(),
                Value::tuple(vec![Value::int(0), unknown.clone()]),
            ),
            (
                "m".into(),
                Value::object(vec![("k.1".into(), unknown.clone())]),
            ),
        ]);
        let mut out = Vec::new();
        unknown_paths(&v, &mut String::new(), &mut out);
        assert_eq!(out, vec![".a[1]".to_string(), ".m.k.1".to_string()]);
        let mut out = Vec::new();
        unknown_paths(&Value::int(3), &mut String::new(), &mut out);
        assert!(out.is_empty());
    }

    #[test]
    fn iterations_of_collections() {
        let t = Value::tuple(vec![Value::string("a"), Value::string("b")]);
        let it = iterations(&t).unwrap();
        assert!(it[1].0.raw_equals(&Value::int(1)));
        assert!(iterations(&Value::string("x")).is_none());
        assert!(iterations(&Value::NULL).is_none());
        assert!(iterations(&Value::Unknown(Type::Dynamic)).is_none());
    }

    #[test]
    fn special_variables_fill_only_the_slots_read() {
        let keys = ["a", "b", "c"].map(Str::from).to_vec();
        let value = |k: &str| Value::string(format!("v{k}"));
        let frame_of = |whole: bool, read: [bool; 3]| {
            let sp = Special {
                slot: 1,
                keys: keys.clone(),
                whole,
                read: read.to_vec(),
            };
            let mut frame = vec![Value::NULL];
            push_special(&mut frame, &sp, value);
            frame
        };
        // Read whole: the object of every attribute, and each attribute in its slot.
        let f = frame_of(true, [false; 3]);
        assert_eq!(f.len(), 5);
        let want = Value::object(keys.iter().map(|k| (k.clone(), value(k))).collect());
        assert!(f[1].raw_equals(&want));
        assert!(f[4].raw_equals(&value("c")));
        // Only `b` read: no object, null in the other slots.
        let f = frame_of(false, [false, true, false]);
        assert_eq!(f.len(), 5);
        assert!(f[1].is_null() && f[2].is_null() && f[4].is_null());
        assert!(f[3].raw_equals(&value("b")));
    }

    #[test]
    fn item_indexes_have_six_digits_at_least() {
        assert_eq!(&*item_index(0), "s000000");
        assert_eq!(&*item_index(42), "s000042");
        assert_eq!(&*item_index(999_999), "s999999");
        assert_eq!(&*item_index(1_000_000), "s1000000");
        assert_eq!(&*item_index(1_234_567), "s1234567");
        assert_eq!(&*item_index(usize::MAX), format!("s{}", usize::MAX));
    }

    #[test]
    fn annotations_keep_the_depth_of_the_body_exact() {
        // Each value the annotations replace (a deep annotation, deep annotations, deep
        // metadata) or deepen: the body's depth is recounted as it changes.
        let deep = |n: usize| {
            let mut v = Value::int(1);
            for _ in 0..n {
                v = Value::tuple(vec![v]);
            }
            v
        };
        let meta = |ann: Value| {
            Value::object(vec![(
                "metadata".into(),
                Value::object(vec![("annotations".into(), ann), ("n".into(), deep(1))]),
            )])
        };
        let cases = [
            (Value::object(vec![]), 3),
            (meta(deep(5)), 3),
            (
                meta(Value::object(vec![(ANNOTATION_INDEX.into(), deep(4))])),
                3,
            ),
            (meta(Value::object(vec![("other".into(), deep(4))])), 7),
            (Value::object(vec![("metadata".into(), deep(6))]), 3),
        ];
        for (body, depth) in cases {
            let out = with_annotations(body, Some(("b".into(), "s000001".into()))).unwrap();
            assert_eq!(out.depth(), depth, "{out:?}");
        }
    }

    #[test]
    fn annotations_are_added() {
        let body = Value::object(vec![(
            "metadata".into(),
            Value::object(vec![("name".into(), Value::string("x"))]),
        )]);
        let out = with_annotations(body, Some(("nat".into(), "s000002".into()))).unwrap();
        let j = to_json(&out).unwrap();
        assert_eq!(
            j,
            parse_json(
                r#"{"metadata": {"name": "x", "annotations": {
                "hcl.fn.crossplane.io/collection-base-name": "nat",
                "hcl.fn.crossplane.io/collection-index": "s000002"}}}"#
            )
            .unwrap()
        );
        assert!(with_annotations(Value::string("x"), None).is_none());

        // Existing annotations (a map) keep their other keys; the body stays sorted.
        let ann = Value::map(
            Type::String,
            vec![
                ("x".into(), Value::string("1")),
                (ANNOTATION_INDEX.into(), Value::string("old")),
            ],
        );
        let body = Value::map(
            Type::Dynamic,
            vec![
                ("a".into(), Value::int(1)),
                (
                    "metadata".into(),
                    Value::object(vec![("annotations".into(), ann), ("z".into(), Value::NULL)]),
                ),
                ("zz".into(), Value::int(2)),
            ],
        );
        let shared = body.clone();
        let out = with_annotations(body, Some(("b".into(), "s000001".into()))).unwrap();
        assert!(matches!(out, Value::Object(_)));
        let keys = |v: &Value| -> Vec<String> {
            v.as_fields()
                .unwrap()
                .iter()
                .map(|(k, _)| k.to_string())
                .collect()
        };
        assert_eq!(keys(&out), ["a", "metadata", "zz"]);
        let meta = out.get_attr("metadata").unwrap();
        assert_eq!(keys(meta), ["annotations", "z"]);
        let ann = meta.get_attr("annotations").unwrap();
        assert!(matches!(ann, Value::Object(_)));
        assert_eq!(keys(ann), [ANNOTATION_BASE_NAME, ANNOTATION_INDEX, "x"]);
        assert_eq!(
            ann.get_attr(ANNOTATION_INDEX).unwrap().as_str(),
            Some("s000001")
        );
        // A body shared elsewhere is copied, not changed.
        assert_eq!(
            keys(shared.get_attr("metadata").unwrap()),
            ["annotations", "z"]
        );
        assert!(matches!(shared, Value::Map(_)));
    }
}
