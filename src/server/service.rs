//! The FunctionRunnerService of both protocol versions, over one handler.
//!
//! A call waits for an evaluation slot (a semaphore bounds concurrent evaluations to the
//! CPUs), then runs on tokio's blocking pool so evaluation never stalls the reactor.
//! Everything that touches the request runs inside `catch_unwind`: a panic becomes a Fatal
//! result for that call and the server keeps serving. The call's deadline (`grpc-timeout`)
//! is honoured while waiting and while evaluating: when it passes the caller gets
//! DEADLINE_EXCEEDED at once; an evaluation already running is not interrupted (the
//! evaluation API takes no deadline): it finishes within its own budgets, holding its slot
//! so the CPU bound stays true, and its answer is dropped.
//!
//! Fairness: a composite whose last evaluation exceeded a budget (an offender, remembered
//! for [`OFFENCE_MEMORY`]) first waits for one of the few penalty slots (a quarter of the
//! evaluation slots, at least one) before it takes an evaluation slot, so hostile
//! composites compete among themselves and can never hold every slot: ordinary calls keep
//! the rest.

use std::collections::HashMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::Semaphore;
use tonic::{Request, Response, Status};

use super::lazy::Reply;
use crate::protocol::proto::{LazyRequest, v1};
use crate::server::metrics::{ApiVersion, ErrorKind, Metrics};
use prost::Message as _;

/// Request tags that trigger test behaviour when the server runs with test hooks enabled
/// (`--enable-test-hooks`, hidden; never in production).
pub const TEST_PANIC_TAG: &str = "fn-hcl-test:panic";
/// `fn-hcl-test:sleep-ms=N`: the evaluation sleeps N ms (at most 60 s) before answering.
pub const TEST_SLEEP_TAG: &str = "fn-hcl-test:sleep-ms=";

/// How much earlier than the client's deadline the server gives up, so that its own
/// DEADLINE_EXCEEDED answer wins over tonic's transport timeout (which says CANCELLED).
const DEADLINE_MARGIN: Duration = Duration::from_millis(2);

/// When the call arrived (stamped by an interceptor before the body is decoded).
#[derive(Clone, Copy, Debug)]
pub struct Arrived(pub Instant);

/// The interceptor that stamps [`Arrived`].
pub fn stamp(mut req: Request<()>) -> Result<Request<()>, Status> {
    req.extensions_mut().insert(Arrived(Instant::now()));
    Ok(req)
}

/// The shared state of the service.
#[derive(Debug)]
pub struct Shared {
    /// Counters for the metrics endpoint.
    pub metrics: Arc<Metrics>,
    /// Bounds concurrent evaluations.
    pub slots: Arc<Semaphore>,
    /// Taken first by offenders (see the module docs): a quarter of `slots`, at least one.
    pub penalty_slots: Arc<Semaphore>,
    /// Composites whose evaluation recently exceeded a budget.
    pub offenders: Offenders,
    /// The budgets of every evaluation.
    pub limits: crate::bytecode::vm::Limits,
    /// `--debug`: the debug dump of every call (printed by the handler).
    pub debug: bool,
    /// Honour the test tags.
    pub test_hooks: bool,
}

/// How long a composite that exceeded a budget waits in the penalty lane.
pub const OFFENCE_MEMORY: Duration = Duration::from_secs(600);
/// Most offenders remembered (beyond, the oldest offences are forgotten first).
const MAX_OFFENDERS: usize = 4096;

/// Composites (by apiVersion, kind, namespace and name) whose last evaluation exceeded a
/// budget, with when. Each is remembered by a [`CompositeKey`]: a fixed-size hash, so the
/// list holds at most [`MAX_OFFENDERS`] small entries however long the names a hostile
/// request gives (a name as the key would let 4096 offenders of a few MiB each pin GiBs).
#[derive(Debug, Default)]
pub struct Offenders {
    /// Seeded per process, so a request cannot aim its key at another composite's.
    seed: std::hash::RandomState,
    map: Mutex<HashMap<CompositeKey, Instant>>,
}

/// Who a call is for, as [`Offenders`] remembers it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CompositeKey(u64);

impl Offenders {
    fn map(&self) -> std::sync::MutexGuard<'_, HashMap<CompositeKey, Instant>> {
        self.map.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The key of the composite with this apiVersion, kind, namespace and name.
    pub fn key(&self, api_version: &str, kind: &str, namespace: &str, name: &str) -> CompositeKey {
        use std::hash::BuildHasher as _;
        CompositeKey(self.seed.hash_one((api_version, kind, namespace, name)))
    }

    /// Whether `key` offended within [`OFFENCE_MEMORY`].
    pub fn contains(&self, key: CompositeKey) -> bool {
        self.map()
            .get(&key)
            .is_some_and(|t| t.elapsed() < OFFENCE_MEMORY)
    }

    /// Whether nobody offended (the common case: no lookup of the composite needed).
    pub fn is_empty(&self) -> bool {
        self.map().is_empty()
    }

    /// Records an offence by `key` now.
    pub fn mark(&self, key: CompositeKey) {
        let mut map = self.map();
        if map.len() >= MAX_OFFENDERS && !map.contains_key(&key) {
            map.retain(|_, t| t.elapsed() < OFFENCE_MEMORY);
            if map.len() >= MAX_OFFENDERS
                && let Some(oldest) = map.iter().min_by_key(|(_, t)| **t).map(|(k, _)| *k)
            {
                map.remove(&oldest);
            }
        }
        map.insert(key, Instant::now());
    }

    /// Forgets `key` (its evaluation stayed within the budgets).
    pub fn forgive(&self, key: CompositeKey) {
        self.map().remove(&key);
    }
}

/// The penalty slots for `slots` evaluation slots.
pub fn penalty_slots(slots: usize) -> usize {
    (slots / 4).max(1)
}

/// The service implementation; cheap to clone.
#[derive(Clone, Debug)]
pub struct FunctionService {
    shared: Arc<Shared>,
}

impl FunctionService {
    /// A service over `shared`.
    pub fn new(shared: Arc<Shared>) -> Self {
        FunctionService { shared }
    }
}

/// One call: its protocol version and its request (v1 and v1beta1 requests have the same
/// wire format, so both decode into the same [`LazyRequest`], and both are answered with
/// the same response message).
#[derive(Clone)]
struct Call {
    version: ApiVersion,
    req: LazyRequest,
}

type Answer = Reply;

impl Call {
    fn version(&self) -> ApiVersion {
        self.version
    }

    /// Who the call is for: the observed composite's apiVersion, kind and name (what the
    /// log lines show; each is read from the body's bytes, so once per call).
    fn composite(&self) -> Composite<'_> {
        let s = |path: &[&str]| self.req.composite_str(path);
        Composite {
            api_version: s(&["apiVersion"]),
            kind: s(&["kind"]),
            name: s(&["metadata", "name"]),
        }
    }

    /// The composite's key in `offenders` (with its namespace, read only now: the common
    /// call, with no offenders, needs no key).
    fn composite_key(&self, xr: &Composite<'_>, offenders: &Offenders) -> CompositeKey {
        let namespace = self.req.composite_str(&["metadata", "namespace"]);
        offenders.key(&xr.api_version, &xr.kind, &namespace, &xr.name)
    }

    fn tag(&self) -> &str {
        self.req
            .envelope
            .meta
            .as_ref()
            .map(|m| m.tag.as_str())
            .unwrap_or_default()
    }
}

/// The observed composite's apiVersion, kind and name (`""` for what is missing).
struct Composite<'a> {
    api_version: std::borrow::Cow<'a, str>,
    kind: std::borrow::Cow<'a, str>,
    name: std::borrow::Cow<'a, str>,
}

/// The deadline of a call: its arrival plus its `grpc-timeout`, less a small margin.
fn deadline_of<T>(req: &Request<T>) -> Option<Instant> {
    let arrived = req
        .extensions()
        .get::<Arrived>()
        .map_or_else(Instant::now, |a| a.0);
    let timeout = parse_grpc_timeout(req.metadata().get("grpc-timeout")?.to_str().ok()?)?;
    Some(arrived + timeout.saturating_sub(DEADLINE_MARGIN))
}

/// Parses a `grpc-timeout` header value (1 to 8 digits and a unit: H M S m u n).
pub fn parse_grpc_timeout(v: &str) -> Option<Duration> {
    if v.len() < 2 || v.len() > 9 {
        return None;
    }
    let (digits, unit) = v.split_at(v.len() - 1);
    if !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n: u64 = digits.parse().ok()?;
    Some(match unit {
        "H" => Duration::from_secs(n.checked_mul(3600)?),
        "M" => Duration::from_secs(n.checked_mul(60)?),
        "S" => Duration::from_secs(n),
        "m" => Duration::from_millis(n),
        "u" => Duration::from_micros(n),
        "n" => Duration::from_nanos(n),
        _ => return None,
    })
}

impl FunctionService {
    /// One call, counted as go-grpc-middleware counts a unary call (see
    /// [`Metrics::grpc_call`]): a call dropped before it ends counts as `Canceled`.
    async fn run(&self, call: Call, deadline: Option<Instant>) -> Result<Answer, Status> {
        let counted = self.shared.metrics.grpc_call(call.version());
        let r = self.evaluate_call(call, deadline).await;
        counted.finish(r.as_ref().map_or_else(Status::code, |_| tonic::Code::Ok));
        r
    }

    async fn evaluate_call(&self, call: Call, deadline: Option<Instant>) -> Result<Answer, Status> {
        let shared = Arc::clone(&self.shared);
        shared.metrics.request(call.version());
        // An offender waits for a penalty slot first (and keeps it while it runs).
        let offender = !shared.offenders.is_empty()
            && shared
                .offenders
                .contains(call.composite_key(&call.composite(), &shared.offenders));
        let penalty = if offender {
            Some(acquire_slot(&shared, &shared.penalty_slots, deadline).await?)
        } else {
            None
        };
        let permit = acquire_slot(&shared, &shared.slots, deadline).await?;
        let worker = Arc::clone(&shared);
        let task = tokio::task::spawn_blocking(move || {
            let _permit = permit;
            let _penalty = penalty;
            let _in_flight = worker.metrics.in_flight();
            let started = Instant::now();
            let answer = process(&worker, call);
            worker.metrics.observe_latency(started.elapsed());
            answer
        });
        let joined = match deadline {
            Some(d) => match tokio::time::timeout_at(d.into(), task).await {
                Ok(j) => j,
                Err(_) => {
                    shared.metrics.error(ErrorKind::Deadline);
                    return Err(deadline_status());
                }
            },
            None => task.await,
        };
        match joined {
            Ok(answer) => answer,
            Err(e) => {
                // Only reachable when the runtime shuts down under the task: `process`
                // catches panics itself.
                shared.metrics.error(ErrorKind::Rejected);
                Err(Status::unavailable(format!(
                    "evaluation did not finish: {e}"
                )))
            }
        }
    }
}

fn deadline_status() -> Status {
    Status::deadline_exceeded("the call's deadline passed before the function answered")
}

/// A permit of `slots`, waited for until the call's deadline (DEADLINE_EXCEEDED after it,
/// UNAVAILABLE when the server is shutting down and the semaphore is closed).
async fn acquire_slot(
    shared: &Shared,
    slots: &Arc<Semaphore>,
    deadline: Option<Instant>,
) -> Result<tokio::sync::OwnedSemaphorePermit, Status> {
    let acquire = Arc::clone(slots).acquire_owned();
    let permit = match deadline {
        Some(d) => match tokio::time::timeout_at(d.into(), acquire).await {
            Ok(p) => p,
            Err(_) => {
                shared.metrics.error(ErrorKind::Deadline);
                return Err(deadline_status());
            }
        },
        None => acquire.await,
    };
    permit.map_err(|_| {
        shared.metrics.error(ErrorKind::Rejected);
        Status::unavailable("the function server is shutting down")
    })
}

/// Handles one call on the blocking pool; a panic anywhere becomes a Fatal result.
fn process(shared: &Shared, call: Call) -> Result<Answer, Status> {
    match catch_unwind(AssertUnwindSafe(|| process_call(shared, &call))) {
        Ok(answer) => answer,
        Err(payload) => {
            shared.metrics.error(ErrorKind::Panic);
            let msg = panic_message(payload.as_ref());
            tracing::error!(tag = call.tag(), panic = %msg, "panic while handling the request");
            Ok(minimal_fatal(&call, &msg))
        }
    }
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    let detail = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into());
    format!("internal error in fn-hcl while handling this request (please report it): {detail}")
}

/// A Fatal response carrying only the tag, for when even building the usual one failed.
fn minimal_fatal(call: &Call, msg: &str) -> Answer {
    let meta = v1::ResponseMeta {
        tag: call.tag().to_string(),
        ttl: Some(prost_types::Duration {
            seconds: crate::protocol::response::DEFAULT_TTL_SECONDS,
            nanos: 0,
        }),
    };
    let rsp = v1::RunFunctionResponse {
        meta: Some(meta),
        results: vec![v1::Result {
            severity: v1::Severity::Fatal as i32,
            message: msg.to_string(),
            ..Default::default()
        }],
        ..Default::default()
    };
    crate::protocol::proto::EncodedReply(rsp.encode_to_vec())
}

fn process_call(shared: &Shared, call: &Call) -> Result<Answer, Status> {
    // Everything but the observed composed resources' bodies (the evaluation reads those
    // it needs from the bytes).
    let req = &call.req.envelope;
    let tag = call.tag();
    let xr = call.composite();
    let (api_version, kind, name) = (&*xr.api_version, &*xr.kind, &*xr.name);
    tracing::info!(
        tag,
        xr_api_version = api_version,
        xr_kind = kind,
        xr_name = name,
        version = call.version().as_str(),
        "Running Function"
    );
    let started = Instant::now();
    let rsp = match catch_unwind(AssertUnwindSafe(|| evaluate(shared, &call.req))) {
        Ok(rsp) => rsp,
        Err(payload) => {
            shared.metrics.error(ErrorKind::Panic);
            let msg = panic_message(payload.as_ref());
            tracing::error!(tag, xr_kind = kind, xr_name = name, panic = %msg, "panic while evaluating");
            let mut b = crate::protocol::response::ResponseBuilder::new(req);
            b.add_result(crate::protocol::response::Severity::Fatal, msg, None);
            b
        }
    };
    let fatal = rsp
        .results()
        .iter()
        .find(|r| r.severity == v1::Severity::Fatal as i32);
    let elapsed_ms = started.elapsed().as_secs_f64() * 1e3;
    if fatal.is_some_and(|r| r.message.contains(BUDGET_EXCEEDED)) {
        shared
            .offenders
            .mark(call.composite_key(&xr, &shared.offenders));
    } else if !shared.offenders.is_empty() {
        shared
            .offenders
            .forgive(call.composite_key(&xr, &shared.offenders));
    }
    match fatal {
        Some(r) => {
            shared.metrics.error(ErrorKind::Fatal);
            tracing::info!(
                tag,
                xr_api_version = api_version,
                xr_kind = kind,
                xr_name = name,
                elapsed_ms,
                error = %r.message,
                "function returned a fatal result"
            );
        }
        None => tracing::info!(
            tag,
            xr_api_version = api_version,
            xr_kind = kind,
            xr_name = name,
            elapsed_ms,
            results = rsp.results().len(),
            "function ran"
        ),
    }
    Ok(crate::protocol::proto::EncodedReply(rsp.finish_encoded()))
}

/// What every Fatal message of an exceeded evaluation budget contains
/// ([`crate::bytecode::vm::VmError`]).
const BUDGET_EXCEEDED: &str = "evaluation budget exceeded";

/// The one place the server calls the evaluator (test hooks first, when enabled).
fn evaluate(shared: &Shared, req: &LazyRequest) -> crate::protocol::response::ResponseBuilder {
    if shared.test_hooks {
        let tag = req
            .envelope
            .meta
            .as_ref()
            .map(|m| m.tag.as_str())
            .unwrap_or_default();
        if tag == TEST_PANIC_TAG {
            panic!("test hook: panic requested by the request tag");
        }
        if let Some(ms) = tag
            .strip_prefix(TEST_SLEEP_TAG)
            .and_then(|n| n.parse::<u64>().ok())
        {
            std::thread::sleep(Duration::from_millis(ms.min(60_000)));
        }
    }
    // The handler prints the debug dump (the server's `--debug` is one of its switches).
    let options = crate::handler::Options {
        debug: shared.debug,
        limits: shared.limits,
    };
    crate::handler::run_function_lazy_with(req, options)
}

#[tonic::async_trait]
impl super::lazy::v1::function_runner_service_server::FunctionRunnerService for FunctionService {
    async fn run_function(&self, request: Request<LazyRequest>) -> Result<Response<Reply>, Status> {
        let deadline = deadline_of(&request);
        let call = Call {
            version: ApiVersion::V1,
            req: request.into_inner(),
        };
        self.run(call, deadline).await.map(Response::new)
    }
}

#[tonic::async_trait]
impl super::lazy::v1beta1::function_runner_service_server::FunctionRunnerService
    for FunctionService
{
    async fn run_function(&self, request: Request<LazyRequest>) -> Result<Response<Reply>, Status> {
        let deadline = deadline_of(&request);
        let call = Call {
            version: ApiVersion::V1beta1,
            req: request.into_inner(),
        };
        self.run(call, deadline).await.map(Response::new)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shared(test_hooks: bool) -> Arc<Shared> {
        Arc::new(Shared {
            metrics: Arc::new(Metrics::new()),
            slots: Arc::new(Semaphore::new(2)),
            penalty_slots: Arc::new(Semaphore::new(1)),
            offenders: Offenders::default(),
            limits: crate::bytecode::vm::Limits::default(),
            debug: false,
            test_hooks,
        })
    }

    #[test]
    fn offenders_are_remembered_until_they_behave() {
        let o = Offenders::default();
        let k = |name: &str| o.key("v1", "XR", "", name);
        assert!(o.is_empty());
        o.mark(k("a"));
        assert!(o.contains(k("a")));
        assert!(!o.contains(k("b")));
        o.forgive(k("a"));
        assert!(!o.contains(k("a")));
        // Bounded: the oldest offence goes first.
        for i in 0..=MAX_OFFENDERS {
            o.mark(k(&format!("k{i}")));
        }
        assert_eq!(o.map().len(), MAX_OFFENDERS);
        assert!(!o.contains(k("k0")));
        assert!(o.contains(k(&format!("k{MAX_OFFENDERS}"))));
        // The parts stay apart (a `/` in one does not make it another composite's key),
        // and a name's length costs the list nothing.
        assert_ne!(o.key("a/b", "c", "", "n"), o.key("a", "b/c", "", "n"));
        assert_ne!(o.key("v1", "XR", "ns", "n"), o.key("v1", "XR", "", "ns/n"));
        assert_eq!(std::mem::size_of::<CompositeKey>(), 8);
        assert_eq!(
            (penalty_slots(1), penalty_slots(2), penalty_slots(8)),
            (1, 1, 2)
        );
    }

    /// A call for the composite `name` running `program` (one file, main.hcl).
    fn program_call(name: &str, program: &str) -> Call {
        let hcl = format!("-- main.hcl --\n{program}");
        let text = serde_json::json!({
            "observed": { "composite": { "resource": {
                "apiVersion": "example.org/v1", "kind": "XR",
                "metadata": { "namespace": "ns", "name": name } } } },
            "input": { "hcl": hcl },
        })
        .to_string();
        let req = crate::protocol::protojson::request_from_text(&text).expect("a request");
        Call {
            version: ApiVersion::V1,
            req: LazyRequest::from_full(&req),
        }
    }

    #[test]
    fn a_composite_over_budget_takes_the_penalty_lane_until_it_behaves() {
        let mut sh = shared(false);
        if let Some(s) = Arc::get_mut(&mut sh) {
            s.limits.max_alloc_elements = 1000;
        }
        let heavy = "locals {\n  xs = [for i in range(100000) : i]\n}\nresource r {\n  body = {\n    apiVersion = \"v1\"\n    kind = \"ConfigMap\"\n    data = { n = tostring(length(xs)) }\n  }\n}\n";
        let light =
            "resource r {\n  body = {\n    apiVersion = \"v1\"\n    kind = \"ConfigMap\"\n  }\n}\n";
        let key = |c: &Call| c.composite_key(&c.composite(), &sh.offenders);
        let bad = program_call("a", heavy);
        assert!(process(&sh, bad.clone()).is_ok());
        assert!(sh.offenders.contains(key(&bad)), "over budget: an offender");
        assert!(!sh.offenders.contains(key(&program_call("b", heavy))));
        let good = program_call("a", light);
        assert_eq!(key(&good), key(&bad), "the same composite");
        assert!(process(&sh, good.clone()).is_ok());
        assert!(
            !sh.offenders.contains(key(&good)),
            "within budget: forgiven"
        );
    }

    fn tagged(tag: &str) -> v1::RunFunctionRequest {
        v1::RunFunctionRequest {
            meta: Some(v1::RequestMeta {
                tag: tag.into(),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    fn call(version: ApiVersion, tag: &str) -> Call {
        Call {
            version,
            req: LazyRequest::from_full(&tagged(tag)),
        }
    }

    #[test]
    fn grpc_timeout_header() {
        assert_eq!(parse_grpc_timeout("100m"), Some(Duration::from_millis(100)));
        assert_eq!(parse_grpc_timeout("2S"), Some(Duration::from_secs(2)));
        assert_eq!(parse_grpc_timeout("1H"), Some(Duration::from_secs(3600)));
        assert_eq!(parse_grpc_timeout("5u"), Some(Duration::from_micros(5)));
        assert_eq!(parse_grpc_timeout("m"), None);
        assert_eq!(parse_grpc_timeout("123456789m"), None);
        assert_eq!(parse_grpc_timeout("-1m"), None);
        assert_eq!(parse_grpc_timeout("10x"), None);
    }

    #[test]
    fn panic_becomes_fatal_result_with_the_tag() {
        let sh = shared(true);
        let answer = process(&sh, call(ApiVersion::V1, TEST_PANIC_TAG));
        let Ok(crate::protocol::proto::EncodedReply(bytes)) = answer else {
            panic!("expected an answer");
        };
        let rsp = v1::RunFunctionResponse::decode(bytes.as_slice()).expect("a response");
        assert_eq!(rsp.meta.map(|m| m.tag), Some(TEST_PANIC_TAG.to_string()));
        assert_eq!(rsp.results[0].severity, v1::Severity::Fatal as i32);
        assert!(rsp.results[0].message.contains("test hook: panic"));
        assert_eq!(sh.metrics.errors(ErrorKind::Panic), 1);
    }

    #[test]
    fn test_hooks_are_off_unless_enabled() {
        let sh = shared(false);
        let Ok(crate::protocol::proto::EncodedReply(bytes)) =
            process(&sh, call(ApiVersion::V1, TEST_PANIC_TAG))
        else {
            panic!("expected an answer");
        };
        let rsp = v1::RunFunctionResponse::decode(bytes.as_slice()).expect("a response");
        assert!(!rsp.results[0].message.contains("test hook"));
        assert_eq!(sh.metrics.errors(ErrorKind::Panic), 0);
    }

    #[test]
    fn v1beta1_is_answered_in_the_shared_wire_format() {
        let sh = shared(false);
        let Ok(crate::protocol::proto::EncodedReply(bytes)) =
            process(&sh, call(ApiVersion::V1beta1, "b"))
        else {
            panic!("expected an answer");
        };
        // The bytes read as a v1beta1 response.
        let beta = crate::protocol::proto::v1beta1::RunFunctionResponse::decode(bytes.as_slice())
            .expect("v1beta1 response");
        assert_eq!(beta.meta.map(|m| m.tag), Some("b".to_string()));
    }

    #[tokio::test]
    async fn deadline_while_evaluating_is_deadline_exceeded() {
        let svc = FunctionService::new(shared(true));
        let deadline = Instant::now() + Duration::from_millis(50);
        let r = svc
            .run(
                call(ApiVersion::V1, "fn-hcl-test:sleep-ms=400"),
                Some(deadline),
            )
            .await;
        let Err(status) = r else {
            panic!("expected an error");
        };
        assert_eq!(status.code(), tonic::Code::DeadlineExceeded);
        assert_eq!(svc.shared.metrics.errors(ErrorKind::Deadline), 1);
        let m = &svc.shared.metrics;
        assert_eq!(
            m.grpc_handled(ApiVersion::V1, tonic::Code::DeadlineExceeded),
            1
        );
        assert_eq!(m.grpc_handled(ApiVersion::V1, tonic::Code::Ok), 0);
    }
}
