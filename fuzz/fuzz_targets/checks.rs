//! The body of every fuzz target, shared with `tests/fuzz_regressions.rs` (which replays
//! committed inputs through the same checks on the stable toolchain). Each function takes
//! the raw fuzz input and panics only on a bug: a panic in fn-hcl, or a broken invariant.
#![allow(dead_code)]

use fn_hcl::bytecode::vm::Limits;
use fn_hcl::handler::{SUCCESS_MESSAGE, has_txtar_files, run_function, run_function_encoded};
use fn_hcl::lower::ir::{compile_files, compile_txtar};
use fn_hcl::protocol::proto::v1;
use fn_hcl::protocol::request::Request;
use fn_hcl::runtime::eval::{Inputs, evaluate};
use fn_hcl::syntax::diag::{plain_all, render_rich};
use fn_hcl::syntax::lexer::{TokenKind, check_invalid_tokens, tokenize};
use fn_hcl::syntax::parser::{parse_expression, parse_file};
use fn_hcl::syntax::span::{FileId, SourceMap};
use prost::Message;
use std::sync::OnceLock;
use std::time::Duration;

/// `lex`: any UTF-8 text ends with one Eof token, tokens come in order and stay inside the
/// input, and the invalid-token check never panics.
pub fn lex(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let toks = tokenize(text, FileId(0));
    assert_eq!(toks.last().map(|t| t.kind), Some(TokenKind::Eof));
    let mut prev = 0;
    for t in &toks {
        assert!(t.span.start.byte <= t.span.end.byte);
        assert!(prev <= t.span.start.byte);
        assert!(text.get(t.span.bytes()).is_some());
        prev = t.span.end.byte;
    }
    let _ = check_invalid_tokens(&toks);
}

/// `parse`: any input (also txtar archives and invalid UTF-8) gives a tree or
/// diagnostics, which must print both ways.
pub fn parse(data: &[u8]) {
    let _ = fn_hcl::syntax::txtar::parse_bytes(data);
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut sm = SourceMap::new();
    let f = sm.add("main.hcl", text);
    if let Err(diags) = parse_file(&sm, f) {
        assert!(!diags.is_empty(), "a failed parse without diagnostics");
        let _ = plain_all(&diags, &sm);
        let _ = render_rich(&diags, &sm);
    }
    let _ = parse_expression(&sm, f);
}

/// `compile`: text to IR to bytecode, as txtar (the service's path) and as one file named
/// main.hcl. A load error must carry diagnostics and print; a program must disassemble and
/// every chunk must pass the bytecode verifier (the stack effects the VM relies on).
pub fn compile(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match compile_txtar(text) {
        Ok(p) => {
            for c in 0..p.code.chunk_count() {
                let id = fn_hcl::bytecode::code::ChunkId(u32::try_from(c).unwrap_or(u32::MAX));
                let _ = fn_hcl::bytecode::disasm::disassemble(&p.code, id);
                if let Err(e) = fn_hcl::bytecode::verify::verify(&p.code, id) {
                    panic!("the compiler produced inconsistent code: {e}");
                }
            }
        }
        Err(e) => {
            let _ = e.message();
        }
    }
    if let Err(e) = compile_files(&[("main.hcl".to_string(), text.to_string())]) {
        assert!(!e.diags.is_empty(), "a failed load without diagnostics");
        let _ = e.message();
    }
}

/// `eval`: an arbitrary program (txtar, or one file wrapped as `main.hcl`) against the
/// fixed request, under [`fuzz_limits`]. A program that stays inside them also goes
/// through `run_function`, the service's whole path (under its own, larger budgets).
/// Returns what happened, for the regression tests.
pub fn eval(data: &[u8]) -> EvalOutcome {
    let Ok(text) = std::str::from_utf8(data) else {
        return EvalOutcome::NotUtf8;
    };
    let program = if has_txtar_files(text) {
        text.to_string()
    } else {
        format!("-- main.hcl --\n{text}")
    };
    let compiled = match compile_txtar(&program) {
        Ok(c) => c,
        Err(e) => return EvalOutcome::LoadError(e.message()),
    };
    let f = fixed();
    match evaluate(&compiled, &f.inputs, fuzz_limits()) {
        Err(fatal) if fatal.0.contains("budget exceeded") => EvalOutcome::Budget(fatal.0),
        _ => {
            let req = with_program(f.req.clone(), &program);
            let rsp = run_function(&req);
            check_response(&rsp);
            check_encoded(&req, &rsp);
            EvalOutcome::Response(Box::new(rsp))
        }
    }
}

/// What [`eval`] saw.
#[derive(Debug)]
pub enum EvalOutcome {
    NotUtf8,
    LoadError(String),
    Budget(String),
    Response(Box<v1::RunFunctionResponse>),
}

/// `request`: bytes decoded as a RunFunctionRequest (as the gRPC server does) and handled
/// once as they are (their own input, usually none or invalid; a raw program runs under
/// the service's budgets) and once with [`FIXED_PROGRAM`] as input, so that request
/// decoding reaches the evaluator. Returns the second response (None if undecodable).
///
/// Differential: the lazy decoder (the server's, observed bodies kept as bytes) must accept
/// exactly what prost accepts, with prost's error, and answer both calls as `run_function`.
pub fn request(data: &[u8]) -> Option<v1::RunFunctionResponse> {
    let lazy =
        fn_hcl::protocol::proto::LazyRequest::decode(prost::bytes::Bytes::copy_from_slice(data));
    let alone = fn_hcl::protocol::proto::LazyRequest::decode_lazy_only(
        prost::bytes::Bytes::copy_from_slice(data),
    );
    let eager = v1::RunFunctionRequest::decode(data);
    assert_eq!(
        alone.is_ok(),
        eager.is_ok(),
        "the lazy decoder alone disagrees with prost"
    );
    let req = match eager {
        Ok(r) => r,
        Err(e) => {
            let lazy_err = lazy.err().map(|l| l.to_string());
            assert_eq!(
                lazy_err,
                Some(e.to_string()),
                "lazy decode accepted what prost refused"
            );
            return None;
        }
    };
    let Ok(lazy) = lazy else {
        panic!("lazy decode refused what prost accepted");
    };
    let rsp = run_function(&req);
    check_response(&rsp);
    check_encoded(&req, &rsp);
    same_answer(&rsp, &fn_hcl::handler::run_function_lazy(&lazy));
    let req = with_program(req, FIXED_PROGRAM);
    let rsp = run_function(&req);
    check_response(&rsp);
    check_encoded(&req, &rsp);
    let lazy = fn_hcl::handler::run_function_bytes(req.encode_to_vec().into());
    same_answer(
        &rsp,
        &lazy.unwrap_or_else(|e| panic!("lazy decode refused a re-encoded request: {e}")),
    );
    Some(rsp)
}

/// `structured`: a generated request (`structured_gen`) through the server's entry, as
/// `fn-hcl serve` runs it: the request's wire bytes decoded lazily, then
/// `run_function_lazy_with` under `limits` (the fuzz target's: the defaults), answered as
/// wire bytes. Checks:
/// no panic; the answer decodes and is a success or one Fatal result, and a Fatal names a
/// program error or an exceeded budget (never an internal error); a second evaluation
/// (the program now cached) gives the same bytes; the eager path (`run_function`) gives
/// the same answer. Only an answer cut by the wall-clock budget may differ between runs.
/// Returns the response (None when prost cannot decode the generated request or the
/// response: nesting beyond its recursion limit).
pub fn structured(req: &v1::RunFunctionRequest, limits: Limits) -> Option<v1::RunFunctionResponse> {
    use fn_hcl::handler::{Options, run_function_lazy_with};
    let bytes = prost::bytes::Bytes::from(req.encode_to_vec());
    let lazy = match fn_hcl::protocol::proto::LazyRequest::decode(bytes) {
        Ok(l) => l,
        Err(e) => {
            assert!(
                e.to_string().contains("recursion limit"),
                "a generated request does not decode: {e}"
            );
            return None;
        }
    };
    let options = Options {
        debug: false,
        limits,
    };
    let first = run_function_lazy_with(&lazy, options).finish_encoded();
    let second = run_function_lazy_with(&lazy, options).finish_encoded();
    let rsp = match v1::RunFunctionResponse::decode(first.as_slice()) {
        Ok(r) => r,
        Err(e) => {
            assert!(
                e.to_string().contains("recursion limit"),
                "the answer does not decode: {e}"
            );
            assert!(first == second || wall_clock(&second), "two runs differ");
            return None;
        }
    };
    check_response(&rsp);
    if let Some(m) = fatal_message(&rsp) {
        check_fatal(m);
    }
    if wall_clock(&first) || wall_clock(&second) {
        return Some(rsp);
    }
    if first != second {
        let again = match v1::RunFunctionResponse::decode(second.as_slice()) {
            Ok(r) => format!("{r:?}"),
            Err(e) => format!("undecodable: {e}"),
        };
        panic!(
            "a second evaluation answered differently: {}",
            difference(&format!("{rsp:?}"), &again)
        );
    }
    let eager = run_function(req);
    if !wall_clock(&eager.encode_to_vec()) {
        same_answer(&eager, &rsp);
    }
    Some(rsp)
}

/// Where two texts first differ, with some context of each.
fn difference(a: &str, b: &str) -> String {
    let at = a
        .char_indices()
        .zip(b.chars())
        .find(|((_, x), y)| x != y)
        .map_or(a.len().min(b.len()), |((i, _), _)| i);
    let from = a[..at].char_indices().rev().nth(200).map_or(0, |(i, _)| i);
    let show = |s: &str| {
        s.get(from..)
            .unwrap_or("")
            .chars()
            .take(600)
            .collect::<String>()
    };
    format!("\n  first:  ...{}\n  second: ...{}", show(a), show(b))
}

/// The message of a response's Fatal result, if it has one.
pub fn fatal_message(rsp: &v1::RunFunctionResponse) -> Option<&str> {
    let fatal = v1::Severity::Fatal as i32;
    rsp.results
        .iter()
        .find(|r| r.severity == fatal)
        .map(|r| r.message.as_str())
}

/// A Fatal result of an evaluation names what went wrong in the program or the request
/// (Go's `evaluate hcl: ` prefix) or the budget that was exceeded; an internal error (a
/// compiler/VM disagreement, a caught panic) is a bug.
pub fn check_fatal(message: &str) {
    assert!(
        !message.contains("internal error"),
        "an internal error: {message}"
    );
    assert!(
        message.starts_with("evaluate hcl: "),
        "a Fatal result that is neither a program error nor a budget: {message}"
    );
}

/// True if an answer (wire bytes) was cut by the wall-clock budget, the one budget whose
/// outcome depends on the machine.
fn wall_clock(answer: &[u8]) -> bool {
    const WALL: &[u8] = b"evaluation budget exceeded: evaluation took longer than";
    answer.windows(WALL.len()).any(|w| w == WALL)
}

/// The eager and lazy answers agree. The one tolerated difference: with several bad
/// observed bodies, which one's error is reported (the eager path takes them in hash-map
/// order, which varies between runs).
fn same_answer(eager: &v1::RunFunctionResponse, lazy: &v1::RunFunctionResponse) {
    if same_message(eager, lazy) {
        return;
    }
    let request_error = |r: &v1::RunFunctionResponse| {
        r.results.len() == 1
            && ["marshal variables to json: ", "get base collections: "]
                .iter()
                .any(|p| r.results[0].message.contains(p))
    };
    assert!(
        request_error(eager) && request_error(lazy),
        "the lazy request path answered differently:\n{eager:?}\n{lazy:?}"
    );
}

/// Whether two responses are the same message, a NaN equal to a NaN: a request's NaN
/// comes back as it came (in the context), and `==` on the messages, which compares
/// numbers as f64, finds two equal answers different (the structured run 3's two crashes).
fn same_message(a: &v1::RunFunctionResponse, b: &v1::RunFunctionResponse) -> bool {
    a == b || nan_marked(a) == nan_marked(b)
}

/// `r` with every NaN number replaced by a string that no answer holds.
fn nan_marked(r: &v1::RunFunctionResponse) -> v1::RunFunctionResponse {
    use prost_types::value::Kind;
    fn value(v: &mut prost_types::Value) {
        if let Some(Kind::NumberValue(n)) = v.kind
            && n.is_nan()
        {
            v.kind = Some(Kind::StringValue("\u{0}NaN".to_string()));
        }
        match &mut v.kind {
            Some(Kind::StructValue(s)) => fields(s),
            Some(Kind::ListValue(l)) => l.values.iter_mut().for_each(value),
            _ => {}
        }
    }
    fn fields(s: &mut prost_types::Struct) {
        s.fields.values_mut().for_each(value);
    }
    let mut r = r.clone();
    if let Some(d) = r.desired.as_mut() {
        let composed = d.resources.values_mut();
        for res in d.composite.iter_mut().chain(composed) {
            res.resource.iter_mut().for_each(fields);
        }
    }
    r.context
        .iter_mut()
        .chain(r.output.iter_mut())
        .for_each(fields);
    r
}

/// The observed state every `eval` input runs against: an XR with a few typed fields, one
/// observed composed resource with connection details, and a context key.
pub const FIXED_REQUEST: &str = r#"{
  "meta": {"tag": "fuzz"},
  "observed": {
    "composite": {
      "resource": {
        "apiVersion": "example.com/v1", "kind": "XApp",
        "metadata": {"name": "demo", "labels": {"team": "a"}},
        "spec": {"parameters": {"region": "eu", "count": 3, "items": ["x", "y"],
                 "flags": {"on": true, "ratio": 0.5}}}
      }
    },
    "resources": {
      "bucket": {
        "resource": {"apiVersion": "s3/v1", "kind": "Bucket", "metadata": {"name": "b"},
                     "status": {"atProvider": {"arn": "arn:x"}}},
        "connectionDetails": {"password": "c2VjcmV0"}
      }
    }
  },
  "context": {"apiextensions.crossplane.io/environment": {"env": "dev"}}
}"#;

/// A valid program that reads the request and composes one resource.
pub const FIXED_PROGRAM: &str = r#"-- main.hcl --
locals {
  params = req.composite.spec.parameters
  name   = "${req.composite.metadata.name}-${try(params.region, "none")}"
}
resource cm {
  body = {
    apiVersion = "v1"
    kind       = "ConfigMap"
    metadata   = { name = name }
    data       = { n = tostring(length(try(params.items, []))), j = jsonencode(req.composite) }
  }
  composite status {
    body = { seen = try(req.resource.bucket.status.atProvider.arn, null) }
  }
}
"#;

/// Budgets far below the service's defaults: any program inside them runs in
/// milliseconds, so a slow input cannot stall the fuzzer.
pub fn fuzz_limits() -> Limits {
    Limits {
        max_instructions: 200_000,
        max_alloc_elements: 100_000,
        max_alloc_bytes: 4 << 20,
        max_wall: Duration::from_secs(1),
        max_depth: 100,
        max_invocations: 10_000,
    }
}

struct Fixed {
    req: v1::RunFunctionRequest,
    inputs: Inputs,
}

static FIXED: OnceLock<Fixed> = OnceLock::new();

fn fixed() -> &'static Fixed {
    FIXED.get_or_init(|| {
        let req = match fn_hcl::protocol::protojson::request_from_text(FIXED_REQUEST) {
            Ok(r) => r,
            Err(e) => panic!("the fixed request does not decode: {e}"),
        };
        let decoded = match Request::from_proto(&req) {
            Ok(r) => r,
            Err(e) => panic!("the fixed request is invalid: {e}"),
        };
        let inputs = Inputs::from_request(&decoded);
        Fixed { req, inputs }
    })
}

/// The fixed request.
pub fn fixed_request() -> v1::RunFunctionRequest {
    fixed().req.clone()
}

/// `req` with its input replaced by an `HclInput` carrying `hcl`.
pub fn with_program(mut req: v1::RunFunctionRequest, hcl: &str) -> v1::RunFunctionRequest {
    use prost_types::value::Kind;
    let s = |v: &str| prost_types::Value {
        kind: Some(Kind::StringValue(v.to_string())),
    };
    let mut input = prost_types::Struct::default();
    input
        .fields
        .insert("apiVersion".into(), s("function-hcl/v1"));
    input.fields.insert("kind".into(), s("HclInput"));
    input.fields.insert("source".into(), s("Inline"));
    input.fields.insert("hcl".into(), s(hcl));
    req.input = Some(input);
    req
}

/// A response ends with the final Normal result of a success, or is one Fatal result:
/// anything else means `run_function` lost track of its outcome. It must also encode.
/// The server's direct encoding of the same call decodes to the same message (and has the
/// same length; prost's decoder refuses nesting deeper than 100 messages, which programs
/// can produce, so only the length is compared then).
pub fn check_encoded(req: &v1::RunFunctionRequest, rsp: &v1::RunFunctionResponse) {
    let bytes = run_function_encoded(req);
    assert_eq!(bytes.len(), rsp.encoded_len(), "direct encoding length");
    match v1::RunFunctionResponse::decode(bytes.as_slice()) {
        Ok(decoded) => assert!(
            same_message(&decoded, rsp),
            "direct encoding decodes to another message"
        ),
        Err(e) => assert!(
            e.to_string().contains("recursion limit"),
            "direct encoding does not decode: {e}"
        ),
    }
}

pub fn check_response(rsp: &v1::RunFunctionResponse) {
    let fatal = v1::Severity::Fatal as i32;
    match rsp.results.last() {
        None => panic!("a response without results"),
        Some(r) if r.severity == fatal => {
            assert_eq!(rsp.results.len(), 1, "a fatal response carries one result")
        }
        Some(r) => assert_eq!(r.message, SUCCESS_MESSAGE),
    }
    let _ = rsp.encode_to_vec();
}
