//! One RunFunction call, in the Go implementation's order (`fn.RunFunction`): decode the
//! step's input ([`crate::protocol::input`]), refuse an empty `hcl`, decide the debug dump
//! and print its request block ([`debug`]), refuse text without txtar files, then
//! evaluate and answer.
//!
//! Evaluation ([`evaluate_program`]) fetches the compiled program from the process-wide
//! cache ([`program_cache`]; compile errors are answered from it too), builds `req` after
//! the program loaded (Go builds it after parsing, so parse errors win over bad request
//! data) with [`crate::protocol::request::Request::from_proto`], or on the server's path
//! from the request bytes with [`crate::protocol::request::Request::from_lazy`] (only the
//! observed bodies the program reads become values), runs it
//! ([`crate::runtime::eval::evaluate_streamed`]: each resource body is written into the
//! response a few at a time as the program makes them, and dropped) and copies the rest
//! of its output into the response ([`write_output`]). A failure at any step is a response holding the request's desired
//! state and one Fatal result (Go prefixes evaluator errors with `evaluate hcl: `), built
//! afresh so nothing the program added leaks out; a success gets the response dump, then
//! the final Normal result.
//!
//! The entry points differ only in the request's form and the answer's:
//! [`run_function`] (decoded request, response message), [`run_function_encoded`] (the
//! response's wire bytes, written from the program's values without intermediate protobuf
//! trees), [`run_function_bytes`]/[`run_function_lazy`] (request bytes), and the builders
//! behind them; the server calls [`run_function_lazy_with`] with its [`Options`].
//! tests/encode_direct.rs checks that the forms give the same response.

pub mod debug;

use crate::bytecode::vm::Limits;
use crate::protocol::input::Input;
use crate::protocol::proto::{LazyRequest, RequestRef, v1};
use crate::protocol::response::{Ready, ResponseBuilder, Severity, Status};
use crate::runtime::cache::{CacheLimits, ProgramCache};
use crate::value::Str;
use std::sync::OnceLock;

/// The final result of a successful call.
pub const SUCCESS_MESSAGE: &str = "hcl module executed successfully";

/// True if txtar text names at least one file (a line `-- NAME --` with a non-blank name,
/// golang.org/x/tools/txtar's marker rule). Text before the first marker is a comment.
/// Asked of every request: its lines are cut as bytes (a `str` split by a `char` set up a
/// searcher that cost ~500 instructions for a program whose first line is the marker).
pub fn has_txtar_files(text: &str) -> bool {
    text.as_bytes().split(|&b| b == b'\n').any(|line| {
        line.strip_prefix(b"-- ")
            .and_then(|rest| rest.strip_suffix(b" --"))
            .is_some_and(|name| {
                if name.is_ascii() {
                    // Go's TrimSpace of ASCII: tab, newline, VT, FF, CR and space.
                    name.iter().any(|b| !matches!(b, b' ' | b'\t'..=b'\r'))
                } else {
                    // Cut at ASCII bytes, the name is whole UTF-8.
                    std::str::from_utf8(name).is_ok_and(|n| !n.trim().is_empty())
                }
            })
    })
}

/// Runs the function for one request. Always answers with a response: a failure is a
/// response with one Fatal result (never a panic, never a gRPC error).
pub fn run_function(req: &v1::RunFunctionRequest) -> v1::RunFunctionResponse {
    run_function_builder(req).finish()
}

/// Runs the function for one request given as protobuf bytes (what gRPC delivers): the
/// request is decoded with its observed bodies left as bytes, and only the bodies the
/// program can read become values. The response is `run_function`'s for the same request;
/// the error is prost's, for bytes that are not a RunFunctionRequest.
pub fn run_function_bytes(
    bytes: prost::bytes::Bytes,
) -> Result<v1::RunFunctionResponse, prost::DecodeError> {
    let req = LazyRequest::decode(bytes)?;
    Ok(run_function_lazy(&req))
}

/// [`run_function`] for a request decoded by [`LazyRequest::decode`].
pub fn run_function_lazy(req: &LazyRequest) -> v1::RunFunctionResponse {
    run_function_lazy_builder(req).finish()
}

/// Runs the function for one request and returns the response as protobuf wire bytes,
/// written straight from the program's values (no intermediate protobuf tree for the
/// desired resources). The bytes decode to exactly the message [`run_function`] returns.
pub fn run_function_encoded(req: &v1::RunFunctionRequest) -> Vec<u8> {
    run_function_builder(req).finish_encoded()
}

/// [`run_function`]'s checks and evaluation, stopping at the response builder, so the
/// caller picks the form: [`ResponseBuilder::finish`] (a message, what `run_function`
/// returns) or [`ResponseBuilder::finish_encoded`] (wire bytes). A failure is a builder
/// holding the Fatal response.
pub fn run_function_builder(req: &v1::RunFunctionRequest) -> ResponseBuilder {
    build(RequestRef::Decoded(req), Options::default())
}

/// [`run_function_builder`] for a lazily decoded request (it sends
/// [`ResponseBuilder::finish_encoded`]'s bytes as they are).
pub fn run_function_lazy_builder(req: &LazyRequest) -> ResponseBuilder {
    build(RequestRef::Lazy(req), Options::default())
}

/// What the process running the calls asks of every call.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Options {
    /// The server's `--debug`: print the debug dump of every call (as the input's
    /// `debug: true` does for its calls).
    pub debug: bool,
    /// The budgets of every evaluation (the server's `--max-evaluation-mib` and
    /// `--max-evaluation-time`).
    pub limits: Limits,
}

/// [`run_function_builder`] with the process's [`Options`].
pub fn run_function_with(req: &v1::RunFunctionRequest, options: Options) -> ResponseBuilder {
    build(RequestRef::Decoded(req), options)
}

/// [`run_function_lazy_builder`] with the process's [`Options`]: what the gRPC server runs.
pub fn run_function_lazy_with(req: &LazyRequest, options: Options) -> ResponseBuilder {
    build(RequestRef::Lazy(req), options)
}

/// One call, in Go's order of checks: input decoding, empty `hcl`, the debug switches
/// (the request dump), txtar files, evaluation (the response dump of a successful call,
/// before its final result is added, as Go prints it).
fn build(source: RequestRef<'_>, options: Options) -> ResponseBuilder {
    let req = source.envelope();
    let fatal = |message: String| {
        let mut b = ResponseBuilder::new(req);
        b.add_result(Severity::Fatal, message, None);
        b
    };
    let mut decoded = None;
    let input = match Input::read(source, &mut decoded) {
        Ok(i) => i,
        Err(e) => return fatal(e),
    };
    if input.hcl.is_empty() {
        return fatal("input HCL was not specified".to_string());
    }
    // The dump shows every body: with a lazy request, all of them are decoded (a rare path).
    let dumped = input
        .debug_requested(source, options.debug)
        .then(|| source.to_full());
    if let Some(full) = &dumped {
        debug::print(&debug::request_dump(full));
    }
    if !has_txtar_files(input.hcl) {
        return fatal("no HCL input files found, are you using the txtar format?".to_string());
    }
    let mut out = ResponseBuilder::new(req);
    match evaluate_program(input.hcl, source, options.limits, &mut out) {
        Ok(()) => {
            out.ensure_desired();
            if let Some(full) = &dumped {
                debug::print(&debug::response_dump(full, &out.to_response()));
            }
            out.push_result(Severity::Normal, SUCCESS_MESSAGE.into(), None);
            out
        }
        Err(message) => fatal(message),
    }
}

/// The process-wide program cache: every call of one program shares its compilation.
pub fn program_cache() -> &'static ProgramCache {
    CACHE.get_or_init(|| ProgramCache::new(CacheLimits::default()))
}

static CACHE: OnceLock<ProgramCache> = OnceLock::new();

/// Size the program cache; effective only before the first call (the server calls it at
/// start-up). Returns false if the cache already existed.
pub fn init_program_cache(limits: CacheLimits) -> bool {
    CACHE.set(ProgramCache::new(limits)).is_ok()
}

/// Budgets of one evaluation.
pub fn default_limits() -> Limits {
    Limits::default()
}

/// The evaluator boundary: compile (or fetch) the program, build `req`, evaluate, and
/// write what the program produced into `out`. `Err` is the complete Fatal message.
fn evaluate_program(
    program: &str,
    source: RequestRef<'_>,
    limits: Limits,
    out: &mut ResponseBuilder,
) -> Result<(), String> {
    let compiled = program_cache()
        .get_or_compile(program, crate::lower::ir::compile_txtar)
        .map_err(|e| e.message())?;
    let request = match source {
        RequestRef::Decoded(req) => crate::protocol::request::Request::from_proto(req),
        RequestRef::Lazy(req) => crate::protocol::request::Request::from_lazy(req, &compiled.reads),
    };
    let request = request.map_err(|e| {
        format!(
            "evaluate hcl: {}",
            crate::syntax::diag::Diagnostic::error_no_range(e.to_string(), "")
                .plain(&compiled.sources)
        )
    })?;
    let inputs = crate::runtime::eval::Inputs::from_request(&request);
    // The bodies are written into the response a few at a time as they are made, and
    // dropped (see `Bodies`).
    let mut bodies = Bodies {
        out,
        pending: Vec::new(),
        error: None,
    };
    let output = crate::runtime::eval::evaluate_streamed(&compiled, &inputs, limits, &mut bodies)
        .map_err(|f| f.0)?;
    bodies.flush();
    if let Some(e) = bodies.error {
        return Err(e);
    }
    write_output(output, out)
}

/// The evaluation's desired resources, written into the response in batches of
/// [`BODY_BATCH`] as they are made, then dropped: a collection's members do not all live
/// until the response is written, and their memory is reused by the next members while
/// it is still in the caches. The first body the response refuses is the Fatal message,
/// once the evaluation has not failed for its own reasons (the order [`write_output`]
/// reports them in).
struct Bodies<'a> {
    out: &'a mut ResponseBuilder,
    /// Bodies made and not written yet, with their readiness.
    pending: Vec<(Str, crate::value::Value, Ready)>,
    error: Option<String>,
}

/// How many bodies are written at a time. One at a time, the writer's code and the VM's
/// took turns in the instruction cache (cachegrind, collection-200: simulated instruction
/// misses 56.7 K -> 88.7 K a request, +7% time, while its data misses halved); all at the
/// end, every body lived until the response was written (heavy-200: ~1 MB, the size of
/// the L2 cache), so they were written, and their blocks reused, after they had left it.
/// Sixteen bodies are tens of KiB (benches/README.md, session 36).
const BODY_BATCH: usize = 16;

impl Bodies<'_> {
    /// Writes the pending bodies in the order they were made.
    fn flush(&mut self) {
        for (name, body, ready) in self.pending.drain(..) {
            if self.error.is_some() {
                break;
            }
            match self.out.set_resource_value(name.clone(), &body) {
                Ok(()) if ready != Ready::Unspecified => {
                    self.out.set_ready(&name, ready);
                }
                Ok(()) => {}
                Err(e) => self.error = Some(refused(&name, &e)),
            }
        }
    }
}

impl crate::runtime::eval::ResourceSink for Bodies<'_> {
    fn resource(&mut self, name: &Str, body: crate::value::Value) {
        // The batch's room at once (one allocation, not one per doubling).
        if self.pending.capacity() == 0 {
            self.pending.reserve_exact(BODY_BATCH);
        }
        self.pending.push((name.clone(), body, Ready::Unspecified));
        if self.pending.len() >= BODY_BATCH {
            self.flush();
        }
    }

    fn ready(&mut self, name: &Str, ready: Ready) {
        // The body given last: still pending, or written by the flush it completed.
        match self.pending.last_mut() {
            Some(p) if p.0 == *name => p.2 = ready,
            _ if self.error.is_none() => {
                self.out.set_ready(name, ready);
            }
            _ => {}
        }
    }

    fn reserve(&mut self, n: usize) {
        self.out.reserve_resources(n);
    }
}

/// The Fatal message of a resource body the response refuses.
fn refused(name: &str, e: &crate::protocol::response::ValueError) -> String {
    format!("evaluate hcl: unable to convert resource body to struct: {name}: {e}")
}

/// Copies an evaluation's output into the response (the program's resource bodies move
/// into the builder as values).
pub fn write_output(
    o: crate::runtime::eval::Output,
    out: &mut ResponseBuilder,
) -> Result<(), String> {
    use crate::runtime::eval::{ResultSeverity, SelectorMatch};
    out.reserve_resources(o.resources.len());
    for (name, body, ready) in o.resources {
        out.set_resource_value(name.clone(), &body)
            .map_err(|e| refused(&name, &e))?;
        out.set_ready(&name, ready);
    }
    if let Some(status) = o.status {
        out.merge_composite_status(status);
    }
    if let Some(c) = o.connection {
        out.merge_composite_connection(c);
    }
    if let Some(crate::value::Value::Object(ctx) | crate::value::Value::Map(ctx)) = &o.context {
        for (k, v) in &ctx.entries {
            // A tree the program built: no nesting bound but the evaluation's own budgets.
            let v = crate::protocol::response::value_to_proto_within(v, usize::MAX)
                .map_err(|e| format!("evaluate hcl: {e}"))?;
            out.set_context(k, v);
        }
    }
    for (name, sel) in &o.requirements {
        let matcher = match &sel.matcher {
            SelectorMatch::Name(n) => v1::resource_selector::Match::MatchName(n.clone()),
            SelectorMatch::Labels(l) => {
                v1::resource_selector::Match::MatchLabels(v1::MatchLabels {
                    labels: l.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
                })
            }
        };
        out.add_requirement(
            name,
            v1::ResourceSelector {
                api_version: sel.api_version.clone(),
                kind: sel.kind.clone(),
                r#match: Some(matcher),
                ..Default::default()
            },
        );
    }
    for r in o.results {
        let sev = match r.severity {
            ResultSeverity::Fatal => Severity::Fatal,
            ResultSeverity::Warning => Severity::Warning,
            ResultSeverity::Normal => Severity::Normal,
        };
        out.push_result(sev, r.message, r.reason);
    }
    for c in o.conditions {
        let status = if c.status {
            Status::ConditionTrue
        } else {
            Status::ConditionFalse
        };
        out.push_condition(c.kind.into(), status, c.reason.into(), Some(c.message));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::input::tests::with_input;

    fn fatal_message(rsp: &v1::RunFunctionResponse) -> &str {
        assert_eq!(rsp.results.len(), 1);
        assert_eq!(rsp.results[0].severity, Severity::Fatal as i32);
        &rsp.results[0].message
    }

    #[test]
    fn missing_or_empty_hcl_is_fatal() {
        for req in [
            v1::RunFunctionRequest::default(),
            with_input(r#"{"hcl": ""}"#),
        ] {
            let rsp = run_function(&req);
            assert_eq!(fatal_message(&rsp), "input HCL was not specified");
            assert_eq!(rsp.meta.as_ref().unwrap().ttl.unwrap().seconds, 60);
        }
    }

    #[test]
    fn no_txtar_files_is_fatal() {
        let rsp = run_function(&with_input(r#"{"hcl": "resource x {}\n-- --\n"}"#));
        assert_eq!(
            fatal_message(&rsp),
            "no HCL input files found, are you using the txtar format?"
        );
        assert!(has_txtar_files("comment\n-- main.hcl --\nx"));
        assert!(has_txtar_files("-- main.hcl --"));
        assert!(!has_txtar_files("--main.hcl--\n"));
        // golang.org/x/tools/txtar: a name trimmed of (Unicode) space must remain.
        assert!(!has_txtar_files("--  --\n-- \u{3000} --\n-- --"));
        assert!(has_txtar_files("x\n-- \u{e9}.hcl --\n"));
        assert!(has_txtar_files("-- a --"));
        assert!(!has_txtar_files("-- \t\u{b}\u{c}\r --\n-- \u{a0}\u{85} --"));
        assert!(has_txtar_files("-- \u{1c} --"));
        assert!(!has_txtar_files(""));
    }
}
