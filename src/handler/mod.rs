//! One RunFunction call: read the `HclInput`, frame the response, hand the program to the
//! evaluator, and print the debug blocks (to stderr) when debugging is on. Mirrors the Go implementation's `fn.RunFunction`, in its order of checks:
//! input decoding, empty `hcl`, debug switches, txtar files, then evaluation.
//!
//! The evaluator plugs in through one function (see [`evaluate_program`]):
//!
//! ```text
//! crate::runtime::eval::evaluate(program: &str, req: &v1::RunFunctionRequest, out: &mut ResponseBuilder)
//!     -> Result<(), String>
//! ```
//!
//! `program` is the input's `hcl` text (txtar). The evaluator builds `req` with
//! [`crate::protocol::request::Request::from_proto`] (or, on the server's path, from the request
//! bytes with [`crate::protocol::request::Request::from_lazy`], decoding only the observed bodies the
//! program can read) when it is ready to (Go builds it after parsing,
//! so parse errors win over bad request data), and on success has added to `out` the
//! desired resources, readiness, composite status/connection, context keys, requirements,
//! its discard warnings and the FullyResolved/HclDiagnostics conditions and result.
//! `run_function` then appends the final Normal result. An `Err` carries the complete
//! Fatal message (Go prefixes evaluator errors with `evaluate hcl: `); the response is
//! then rebuilt from the request, so nothing the evaluator added leaks out.
//!
//! [`run_function_encoded`] is the same call answering with the response's wire bytes,
//! written from the program's values without intermediate protobuf trees (for the server);
//! [`run_function_builder`] repeats `run_function`'s steps (tests/encode_direct.rs checks
//! that both give the same response).

use crate::bytecode::vm::Limits;
use crate::protocol::proto::v1;
use crate::protocol::response::{Ready, ResponseBuilder, Severity, Status};
use crate::runtime::cache::{CacheLimits, ProgramCache};
use prost_types::value::Kind;
use std::sync::OnceLock;

/// Annotation on an XR that turns debug output on for it.
pub const DEBUG_ANNOTATION: &str = "hcl.fn.crossplane.io/debug";

/// The final result of a successful call.
pub const SUCCESS_MESSAGE: &str = "hcl module executed successfully";

/// The step's input object (Go: `v1beta1.HclInput`). `apiVersion`, `kind`, `source` and
/// `metadata` are read (and type-checked) but, as in Go, not otherwise validated.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HclInput {
    pub api_version: String,
    pub kind: String,
    pub source: String,
    /// The program: one or more files in txtar form.
    pub hcl: String,
    /// Print request and response for every XR.
    pub debug: bool,
    /// Print request and response for XRs with no observed composed resources yet.
    pub debug_new: bool,
}

/// Go's prefix for an input that does not decode into an `HclInput`.
const INPUT_ERROR_PREFIX: &str = "unable to get input: cannot get function input *v1beta1.HclInput from \
     *v1.RunFunctionRequest: cannot unmarshal JSON from *structpb.Struct into *v1beta1.HclInput: ";

impl HclInput {
    /// Decodes the request's `input` as Go's `encoding/json` would decode it into an
    /// `HclInput`: field names match case-insensitively, unknown fields are ignored, `null`
    /// leaves a field unset, and a value of the wrong type is an error naming the field.
    pub fn from_request(req: &v1::RunFunctionRequest) -> Result<HclInput, String> {
        InputView::from_request(req).map(|v| HclInput {
            api_version: v.api_version.to_string(),
            kind: v.kind.to_string(),
            source: v.source.to_string(),
            hcl: v.hcl.to_string(),
            debug: v.debug,
            debug_new: v.debug_new,
        })
    }

    /// Whether this call prints debug output: `debug`, `debugNew` for an XR with no
    /// observed composed resources, or the XR's debug annotation set to `"true"`.
    pub fn debug_requested(&self, req: &v1::RunFunctionRequest) -> bool {
        let view = InputView {
            debug: self.debug,
            debug_new: self.debug_new,
            ..InputView::default()
        };
        view.debug_requested(req, Source::Eager(req))
    }
}

/// [`HclInput`] borrowed from the request (what one call reads: no copy of the program
/// text per request).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct InputView<'a> {
    api_version: &'a str,
    kind: &'a str,
    source: &'a str,
    hcl: &'a str,
    debug: bool,
    debug_new: bool,
}

impl<'a> InputView<'a> {
    /// [`HclInput::from_request`], borrowing the strings.
    fn from_request(req: &'a v1::RunFunctionRequest) -> Result<InputView<'a>, String> {
        match &req.input {
            Some(s) => Self::from_entries(s.fields.iter().map(|(k, v)| (k.as_str(), kind_of(v)))),
            None => Ok(InputView::default()),
        }
    }

    /// [`HclInput::from_request`] for a lazily decoded request: read from the input's
    /// bytes (the Struct decoded into `decoded` first when its bytes are irregular).
    fn from_lazy(
        req: &'a crate::protocol::proto::LazyRequest,
        decoded: &'a mut Option<prost_types::Struct>,
    ) -> Result<InputView<'a>, String> {
        let raw = &req.input;
        if !raw.is_present() {
            return Ok(InputView::default());
        }
        match crate::protocol::request::struct_entries(raw) {
            Some(mut entries) => {
                // As the decoded Struct iterates them: sorted by key, one entry per key
                // (the last one given, as prost's map keeps).
                entries.reverse();
                entries.sort_by(|a, b| a.0.cmp(b.0));
                entries.dedup_by(|later, first| later.0 == first.0);
                Self::from_entries(entries.into_iter())
            }
            None => {
                *decoded = raw.to_struct().ok().flatten();
                match decoded {
                    Some(s) => {
                        Self::from_entries(s.fields.iter().map(|(k, v)| (k.as_str(), kind_of(v))))
                    }
                    None => Ok(InputView::default()),
                }
            }
        }
    }

    /// Go's decoding of the input's entries, given in sorted key order, one per key.
    fn from_entries(
        entries: impl Iterator<Item = (&'a str, InputKind<'a>)>,
    ) -> Result<InputView<'a>, String> {
        let mut input = InputView::default();
        let mut first_error: Option<String> = None;
        // Struct fields iterate in sorted key order, the order protojson marshals them in;
        // with two spellings of one field, the later one wins, as in Go.
        for (key, kind) in entries {
            let Some(field) = FIELDS.iter().find(|f| f.eq_ignore_ascii_case(key)).copied() else {
                continue;
            };
            let result = match (field, kind) {
                (_, InputKind::Null) => Ok(()),
                ("apiVersion", InputKind::String(v)) => {
                    input.api_version = v;
                    Ok(())
                }
                ("kind", InputKind::String(v)) => {
                    input.kind = v;
                    Ok(())
                }
                ("source", InputKind::String(v)) => {
                    input.source = v;
                    Ok(())
                }
                ("hcl", InputKind::String(v)) => {
                    input.hcl = v;
                    Ok(())
                }
                ("debug", InputKind::Bool(b)) => {
                    input.debug = b;
                    Ok(())
                }
                ("debugNew", InputKind::Bool(b)) => {
                    input.debug_new = b;
                    Ok(())
                }
                ("metadata", InputKind::Struct) => Ok(()),
                (f, k) => Err(type_error(f, k.json_name())),
            };
            if let Err(e) = result {
                first_error.get_or_insert(e);
            }
        }
        match first_error {
            Some(e) => Err(format!("{INPUT_ERROR_PREFIX}{e}")),
            None => Ok(input),
        }
    }

    /// [`HclInput::debug_requested`] of the request `req` (or its envelope, whose
    /// observed composite may still be bytes: `source` has them).
    fn debug_requested(&self, req: &v1::RunFunctionRequest, source: Source<'_>) -> bool {
        let observed = req.observed.as_ref();
        let no_resources = observed.is_none_or(|o| o.resources.is_empty());
        self.debug
            || (self.debug_new && no_resources)
            || xr_debug_annotation(req)
            || matches!(source, Source::Lazy(lazy) if lazy.composite_debug_annotation())
    }
}

const FIELDS: [&str; 7] = [
    "apiVersion",
    "kind",
    "metadata",
    "source",
    "hcl",
    "debug",
    "debugNew",
];

/// The kind of an input field's value (a `google.protobuf.Value`), with its string or
/// bool (what decoding an `HclInput` reads).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum InputKind<'a> {
    /// No kind, or `null_value`.
    Null,
    Number,
    String(&'a str),
    Bool(bool),
    Struct,
    List,
}

impl InputKind<'_> {
    /// The JSON type name Go's decoder reports.
    fn json_name(self) -> &'static str {
        match self {
            InputKind::Null => "null",
            InputKind::Number => "number",
            InputKind::String(_) => "string",
            InputKind::Bool(_) => "bool",
            InputKind::Struct => "object",
            InputKind::List => "array",
        }
    }
}

fn kind_of(v: &prost_types::Value) -> InputKind<'_> {
    match &v.kind {
        None | Some(Kind::NullValue(_)) => InputKind::Null,
        Some(Kind::NumberValue(_)) => InputKind::Number,
        Some(Kind::StringValue(s)) => InputKind::String(s),
        Some(Kind::BoolValue(b)) => InputKind::Bool(*b),
        Some(Kind::StructValue(_)) => InputKind::Struct,
        Some(Kind::ListValue(_)) => InputKind::List,
    }
}

/// Go's `json.UnmarshalTypeError` text for a field of the wrong type.
fn type_error(field: &str, value: &str) -> String {
    let go_type = match field {
        "debug" | "debugNew" => "bool",
        "source" => "v1beta1.ScriptSource",
        "metadata" => "v1.ObjectMeta",
        _ => "string",
    };
    format!(
        "json: cannot unmarshal {value} into Go struct field HclInput.{field} of type {go_type}"
    )
}

fn xr_debug_annotation(req: &v1::RunFunctionRequest) -> bool {
    let body = req
        .observed
        .as_ref()
        .and_then(|o| o.composite.as_ref())
        .and_then(|c| c.resource.as_ref());
    body.is_some_and(struct_debug_annotation)
}

/// Whether an XR body carries the debug annotation set to `"true"`.
pub(crate) fn struct_debug_annotation(body: &prost_types::Struct) -> bool {
    let ann = struct_field(body, "metadata").and_then(|m| struct_field(m, "annotations"));
    matches!(
        ann.and_then(|a| a.fields.get(DEBUG_ANNOTATION)).and_then(|v| v.kind.as_ref()),
        Some(Kind::StringValue(s)) if s == "true"
    )
}

fn struct_field<'a>(s: &'a prost_types::Struct, key: &str) -> Option<&'a prost_types::Struct> {
    match s.fields.get(key).and_then(|v| v.kind.as_ref()) {
        Some(Kind::StructValue(x)) => Some(x),
        _ => None,
    }
}

/// True if txtar text names at least one file (a line `-- NAME --` with a non-blank name,
/// golang.org/x/tools/txtar's marker rule). Text before the first marker is a comment.
pub fn has_txtar_files(text: &str) -> bool {
    text.split('\n').any(|line| {
        line.strip_prefix("-- ")
            .and_then(|rest| rest.strip_suffix(" --"))
            .is_some_and(|name| !name.trim().is_empty())
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
    let req = crate::protocol::proto::LazyRequest::decode(bytes)?;
    Ok(run_function_lazy(&req))
}

/// [`run_function`] for a request decoded by [`crate::protocol::proto::LazyRequest::decode`].
pub fn run_function_lazy(req: &crate::protocol::proto::LazyRequest) -> v1::RunFunctionResponse {
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
    build(req, Source::Eager(req))
}

/// [`run_function_builder`] for a lazily decoded request: what the gRPC server runs (it
/// sends [`ResponseBuilder::finish_encoded`]'s bytes as they are).
pub fn run_function_lazy_builder(req: &crate::protocol::proto::LazyRequest) -> ResponseBuilder {
    build(&req.envelope, Source::Lazy(req))
}

/// Where `req`'s observed bodies come from.
#[derive(Clone, Copy)]
enum Source<'a> {
    /// Decoded with the rest of the request.
    Eager(&'a v1::RunFunctionRequest),
    /// Still bytes (the envelope has no bodies).
    Lazy(&'a crate::protocol::proto::LazyRequest),
}

/// One call; `req` is the request, or its envelope without observed bodies (enough for
/// everything but `req` itself and the debug dump).
fn build(req: &v1::RunFunctionRequest, source: Source<'_>) -> ResponseBuilder {
    let fatal = |message: String| {
        let mut b = ResponseBuilder::new(req);
        b.add_result(Severity::Fatal, message, None);
        b
    };
    let mut decoded = None;
    let input = match source {
        Source::Eager(full) => InputView::from_request(full),
        Source::Lazy(lazy) => InputView::from_lazy(lazy, &mut decoded),
    };
    let input = match input {
        Ok(i) => i,
        Err(e) => return fatal(e),
    };
    if input.hcl.is_empty() {
        return fatal("input HCL was not specified".to_string());
    }
    // Go prints the request block before it looks at the program, and the response block
    // only for a successful call. Written to stderr in one piece so that concurrent calls
    // do not interleave and the block stays extractable as txtar.
    let debug = input.debug_requested(req, source);
    if debug {
        let text = match source {
            Source::Eager(full) => crate::cli::render::debug_request_text(full),
            // The dump shows every body: decode them all (a rare path). The bodies were
            // checked when the request was decoded, so this cannot fail.
            Source::Lazy(lazy) => match lazy.to_full() {
                Ok(full) => crate::cli::render::debug_request_text(&full),
                Err(_) => crate::cli::render::debug_request_text(req),
            },
        };
        eprint!("{text}");
    }
    if !has_txtar_files(input.hcl) {
        return fatal("no HCL input files found, are you using the txtar format?".to_string());
    }
    let mut out = ResponseBuilder::new(req);
    match evaluate_program(input.hcl, source, &mut out) {
        Ok(()) => {
            out.ensure_desired();
            out.push_result(Severity::Normal, SUCCESS_MESSAGE.into(), None);
            if debug {
                eprint!(
                    "{}",
                    crate::cli::render::debug_response_text(&out.to_response())
                );
            }
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
    source: Source<'_>,
    out: &mut ResponseBuilder,
) -> Result<(), String> {
    let compiled = program_cache()
        .get_or_compile(program, crate::lower::ir::compile_txtar)
        .map_err(|e| e.message())?;
    let request = match source {
        Source::Eager(req) => crate::protocol::request::Request::from_proto(req),
        Source::Lazy(req) => crate::protocol::request::Request::from_lazy(req, &compiled.reads),
    };
    let request = request.map_err(|e| {
        format!(
            "evaluate hcl: {}",
            crate::syntax::diag::Diagnostic::error_no_range(e.to_string(), "")
                .plain(&compiled.sources)
        )
    })?;
    let inputs = crate::runtime::eval::Inputs::from_request(&request);
    let output =
        crate::runtime::eval::evaluate(&compiled, &inputs, default_limits()).map_err(|f| f.0)?;
    write_output(output, out)
}

/// Copies an evaluation's output into the response (the program's resource bodies move
/// into the builder as values).
pub fn write_output(
    o: crate::runtime::eval::Output,
    out: &mut ResponseBuilder,
) -> Result<(), String> {
    use crate::runtime::eval::{ResultSeverity, SelectorMatch};
    for (name, body, ready) in o.resources {
        out.set_resource_value(name.clone(), body).map_err(|e| {
            format!("evaluate hcl: unable to convert resource body to struct: {name}: {e}")
        })?;
        let r = match ready {
            1 => Ready::True,
            2 => Ready::False,
            _ => Ready::Unspecified,
        };
        out.set_ready(&name, r);
    }
    if let Some(status) = &o.status
        && let prost_types::value::Kind::StructValue(s) = json_to_proto(status)
            .kind
            .unwrap_or(prost_types::value::Kind::StructValue(Default::default()))
    {
        out.merge_composite_status(s);
    }
    if let Some(c) = o.connection {
        out.merge_composite_connection(c);
    }
    if let Some(ctx) = &o.context {
        for (k, v) in ctx {
            out.set_context(k, json_to_proto(v));
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
        out.push_result(sev, r.message.into(), r.reason.map(Into::into));
    }
    for c in o.conditions {
        let status = if c.status {
            Status::ConditionTrue
        } else {
            Status::ConditionFalse
        };
        out.push_condition(
            c.kind.into(),
            status,
            c.reason.into(),
            Some(c.message.into()),
        );
    }
    Ok(())
}

/// A JSON value (as Go's `encoding/json` decodes it) as a protobuf Value.
fn json_to_proto(j: &serde_json::Value) -> prost_types::Value {
    use prost_types::value::Kind as K;
    let kind = match j {
        serde_json::Value::Null => K::NullValue(0),
        serde_json::Value::Bool(b) => K::BoolValue(*b),
        serde_json::Value::Number(n) => K::NumberValue(n.as_f64().unwrap_or(0.0)),
        serde_json::Value::String(s) => K::StringValue(s.clone()),
        serde_json::Value::Array(a) => K::ListValue(prost_types::ListValue {
            values: a.iter().map(json_to_proto).collect(),
        }),
        serde_json::Value::Object(m) => K::StructValue(prost_types::Struct {
            fields: m
                .iter()
                .map(|(k, v)| (k.clone(), json_to_proto(v)))
                .collect(),
        }),
    };
    prost_types::Value { kind: Some(kind) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::protojson::{json_to_struct, parse_json, request_from_text};

    fn with_input(input: &str) -> v1::RunFunctionRequest {
        v1::RunFunctionRequest {
            input: Some(json_to_struct(&parse_json(input).unwrap(), "input").unwrap()),
            ..Default::default()
        }
    }

    fn fatal_message(rsp: &v1::RunFunctionResponse) -> &str {
        assert_eq!(rsp.results.len(), 1);
        assert_eq!(rsp.results[0].severity, Severity::Fatal as i32);
        &rsp.results[0].message
    }

    #[test]
    fn input_fields_case_insensitive_and_typed() {
        let req = with_input(
            r#"{"apiVersion":"function-hcl/v1","kind":"HclInput","source":"Inline",
                "HCL":"-- a --\n","debugnew":true,"extra":1,"metadata":{"name":"x"}}"#,
        );
        let i = HclInput::from_request(&req).unwrap();
        assert_eq!(i.hcl, "-- a --\n");
        assert!(i.debug_new && !i.debug);
        assert!(i.debug_requested(&req));
        let e = HclInput::from_request(&with_input(r#"{"hcl": 5}"#)).unwrap_err();
        assert!(
            e.ends_with(
                "json: cannot unmarshal number into Go struct field HclInput.hcl of type string"
            ),
            "{e}"
        );
        assert!(e.starts_with("unable to get input: "));
        let e = HclInput::from_request(&with_input(r#"{"debug": "yes"}"#)).unwrap_err();
        assert!(e.ends_with("HclInput.debug of type bool"), "{e}");
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
    }

    #[test]
    fn debug_annotation() {
        let req = request_from_text(
            "observed:\n  composite:\n    resource:\n      metadata:\n        annotations:\n          hcl.fn.crossplane.io/debug: \"true\"\n",
        )
        .unwrap();
        assert!(HclInput::default().debug_requested(&req));
        assert!(!HclInput::default().debug_requested(&v1::RunFunctionRequest::default()));
    }
}
