//! Fuzzing on the stable toolchain: every committed fuzz input (the seed corpus in
//! `fuzz/seeds/<target>/` and the minimized findings in `tests/fuzz_regressions/<target>/`)
//! replays through the very checks the cargo-fuzz targets run (`fuzz/fuzz_targets/checks.rs`),
//! and each finding has its own test of the result it must give.
//!
//! `write_seed_corpus` (ignored; run by `fuzz/seed.sh`) builds the full seed corpus from the
//! conformance data and the HCL in `tests/` into `$FUZZ_SEED_OUT/<target>/`.

mod common;

use common::{CASE_DATA, shared_dir};

#[path = "../fuzz/fuzz_targets/checks.rs"]
mod checks;
#[path = "../fuzz/fuzz_targets/structured_gen.rs"]
mod structured_gen;

use checks::EvalOutcome;
use fn_hcl::bytecode::vm::Limits;
use prost::Message;
use std::path::{Path, PathBuf};

const TARGETS: [&str; 6] = ["lex", "parse", "compile", "eval", "request", "structured"];

/// The default budgets but the wall clock's: tests that assert no budget fired run in a
/// debug build on a shared machine, where a second is not what it is in release.
fn unhurried() -> Limits {
    Limits {
        max_wall: std::time::Duration::from_secs(120),
        ..Limits::default()
    }
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn files_in(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    v.retain(|p| p.is_file());
    v.sort();
    v
}

fn run_target(target: &str, data: &[u8]) {
    match target {
        "lex" => checks::lex(data),
        "parse" => checks::parse(data),
        "compile" => checks::compile(data),
        "eval" => {
            checks::eval(data);
        }
        "request" => {
            checks::request(data);
        }
        "structured" => {
            checks::structured(&structured_gen::case(data).request, Limits::default());
        }
        other => panic!("unknown fuzz target {other}"),
    }
}

#[test]
fn committed_fuzz_inputs_replay_without_panics() {
    for target in TARGETS {
        let seeds = files_in(&root().join("fuzz/seeds").join(target));
        assert!(!seeds.is_empty(), "no committed seeds for {target}");
        let found = files_in(&root().join("tests/fuzz_regressions").join(target));
        for f in seeds.iter().chain(&found) {
            let data = std::fs::read(f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
            let outcome = std::panic::catch_unwind(|| run_target(target, &data));
            assert!(outcome.is_ok(), "{target} panicked on {}", f.display());
        }
    }
}

#[test]
fn the_fixed_program_succeeds_against_the_fixed_request() {
    let rsp = checks::request(&checks::fixed_request().encode_to_vec());
    let rsp = rsp.expect("the fixed request decodes");
    assert_eq!(
        rsp.results.last().map(|r| r.message.as_str()),
        Some(fn_hcl::handler::SUCCESS_MESSAGE)
    );
    let cm = rsp
        .desired
        .as_ref()
        .and_then(|d| d.resources.get("cm"))
        .and_then(|r| r.resource.as_ref())
        .and_then(|b| b.fields.get("metadata"));
    assert!(cm.is_some(), "resource cm is composed: {rsp:?}");
}

/// The structured target's seeds kept for its findings still generate the constructs
/// they were kept for (a change of the generator changes what every input means: re-pick
/// them from a new run's corpus then, fuzz/README.md). The fixes themselves are tested
/// where they are: tests/encode_direct.rs (deterministic bytes), tests/cases/
/// expr-template-for-in-if.txtar, the regex and indent unit tests of src/builtins/string.rs,
/// the grapheme unit tests of src/text/unicode.rs (strrev-emoji-run), tests/adversarial.rs
/// and `a_nan_in_the_context_is_the_same_answer_both_ways` below (context-nan).
#[test]
fn structured_seeds_generate_what_they_were_kept_for() {
    let dir = root().join("fuzz/seeds/structured");
    for (seed, construct) in [
        (
            "requirement-labels",
            "matchLabels = { team = \"a\", \"example.org/x\" = \"y\" }",
        ),
        (
            "template-for-in-if",
            "%{~if can(req.composite.spec.data[\"with.dot\"][0].value)}%{ for t36 in ",
        ),
        ("regex-nested-repetition", "(\"a{1000}{1000}\""),
        (
            "yamldecode-aliases",
            "yamldecode(try(req.composite.spec.yaml",
        ),
        ("functions-connection-details", "composite connection {"),
        ("indent-2-53-spaces", "indent(req.composite.spec."),
        ("indent-2-6-gb", "indent(req.composite.spec."),
        ("strrev-emoji-run", "strrev(req.composite.spec.name)"),
    ] {
        let data = std::fs::read(dir.join(seed)).unwrap_or_else(|e| panic!("{seed}: {e}"));
        let case = structured_gen::case(&data);
        assert!(
            case.program.contains(construct),
            "seed {seed} no longer generates {construct:?}:\n{}",
            case.program
        );
        let rsp = checks::structured(&case.request, unhurried()).expect("the answer decodes");
        if let Some(m) = checks::fatal_message(&rsp) {
            assert!(!m.contains("budget exceeded"), "{seed}: {m}");
        }
    }
    // A request whose context holds a NaN, which comes back in the answer's context.
    fn holds_nan(v: &prost_types::Value) -> bool {
        use prost_types::value::Kind;
        match &v.kind {
            Some(Kind::NumberValue(n)) => n.is_nan(),
            Some(Kind::StructValue(s)) => s.fields.values().any(holds_nan),
            Some(Kind::ListValue(l)) => l.values.iter().any(holds_nan),
            _ => false,
        }
    }
    let data = std::fs::read(dir.join("context-nan")).expect("context-nan");
    let rsp = checks::structured(&structured_gen::case(&data).request, unhurried())
        .expect("the answer decodes");
    let context = rsp.context.as_ref().expect("a context");
    assert!(
        context.fields.values().any(holds_nan),
        "context-nan: {context:?}"
    );
}

/// A NaN in the request's context comes back in the answer's context, the same from the
/// lazy and the eager path: the structured run 3's two crashes were the check comparing
/// the two answers with `==`, under which a NaN differs from itself.
#[test]
fn a_nan_in_the_context_is_the_same_answer_both_ways() {
    use prost_types::value::Kind;
    let nan = prost_types::Value {
        kind: Some(Kind::NumberValue(f64::NAN)),
    };
    for program in [
        checks::FIXED_PROGRAM,
        "-- main.hcl --\nresource r {\n  body {\n    (\"k\") = 1\n  }\n}\n",
    ] {
        let mut req = checks::with_program(checks::fixed_request(), program);
        let context = req.context.get_or_insert_with(Default::default);
        context
            .fields
            .insert("example.org/nan".to_string(), nan.clone());
        let rsp = checks::structured(&req, unhurried()).expect("the answer decodes");
        let back = rsp
            .context
            .as_ref()
            .and_then(|c| c.fields.get("example.org/nan"));
        assert!(
            matches!(back.and_then(|v| v.kind.as_ref()), Some(Kind::NumberValue(n)) if n.is_nan()),
            "{rsp:?}"
        );
    }
}

#[test]
fn eval_budgets_stop_a_runaway_program_quickly() {
    let start = std::time::Instant::now();
    let program = b"locals {\n  x = [for i in range(1000) : [for j in range(1000) : i * j]]\n}\n";
    match checks::eval(program) {
        EvalOutcome::Budget(m) => {
            assert!(m.starts_with("evaluate hcl: evaluation budget exceeded"))
        }
        other => panic!("expected a budget error, got {other:?}"),
    }
    assert!(start.elapsed() < std::time::Duration::from_secs(5));
}

// ---------------------------------------------------------------------------------------
// The seed corpus

/// The HCL sections of a conformance case, and its request (input not set).
fn case_parts(text: &str) -> (Vec<(String, String)>, Option<String>) {
    let Ok(sections) = fn_hcl::syntax::txtar::parse(text) else {
        return (Vec::new(), None);
    };
    let req = sections
        .iter()
        .find(|(name, _)| name == "request.yaml")
        .map(|(_, data)| data.clone());
    let hcl = sections
        .into_iter()
        .filter(|(name, _)| !CASE_DATA.contains(&name.as_str()))
        .collect();
    (hcl, req)
}

/// Raw string literals of the integration tests that look like HCL.
fn test_snippets() -> Vec<String> {
    let re = regex::Regex::new(r##"(?s)r#"(.*?)"#"##).expect("a valid regex");
    let mut out = Vec::new();
    for f in files_in(&root().join("tests")) {
        if f.extension().is_none_or(|e| e != "rs") || f.ends_with("fuzz_regressions.rs") {
            continue;
        }
        let text = std::fs::read_to_string(&f).unwrap_or_default();
        for c in re.captures_iter(&text) {
            let s = &c[1];
            if s.len() > 8 && (s.contains('=') || s.contains('{')) {
                out.push(s.to_string());
            }
        }
    }
    out
}

#[test]
#[ignore = "writes the seed corpus; run by fuzz/seed.sh"]
fn write_seed_corpus() {
    let Ok(out) = std::env::var("FUZZ_SEED_OUT") else {
        panic!("set FUZZ_SEED_OUT to the corpus directory");
    };
    let out = PathBuf::from(out);
    let mut written = std::collections::BTreeMap::<&str, usize>::new();
    let mut put = |target: &'static str, name: &str, data: &[u8]| {
        let dir = out.join(target);
        std::fs::create_dir_all(&dir).expect("create the corpus directory");
        std::fs::write(dir.join(name), data).expect("write a seed");
        *written.entry(target).or_default() += 1;
    };
    let mut texts: Vec<(String, String)> = Vec::new(); // (name, one HCL file)
    let mut programs: Vec<(String, String)> = Vec::new(); // (name, txtar)
    for (i, s) in test_snippets().into_iter().enumerate() {
        texts.push((format!("tests-{i}"), s.clone()));
        programs.push((format!("tests-{i}"), format!("-- main.hcl --\n{s}")));
    }
    let base = checks::fixed_request();
    put(
        "request",
        "fixed",
        &checks::with_program(base.clone(), checks::FIXED_PROGRAM).encode_to_vec(),
    );
    if let Some(shared) = shared_dir("fuzz_regressions") {
        let conf = shared.join("conformance");
        for f in files_in(&conf.join("cases")) {
            let name = f
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            let text = std::fs::read_to_string(&f).unwrap_or_default();
            let (hcl, req) = case_parts(&text);
            for (sec, data) in &hcl {
                texts.push((format!("{name}-{sec}"), data.clone()));
            }
            let program = fn_hcl::syntax::txtar::format(&hcl);
            if !hcl.is_empty() {
                programs.push((name.clone(), program.clone()));
            }
            if let Some(r) =
                req.and_then(|r| fn_hcl::protocol::protojson::request_from_text(&r).ok())
            {
                let r = checks::with_program(r, &program);
                put("request", &name, &r.encode_to_vec());
            }
        }
        for d in std::fs::read_dir(conf.join("examples"))
            .into_iter()
            .flatten()
            .flatten()
        {
            let main = d.path().join("src/main.hcl");
            if let Ok(t) = std::fs::read_to_string(&main) {
                let name = format!("example-{}", d.file_name().to_string_lossy());
                programs.push((name.clone(), format!("-- main.hcl --\n{t}")));
                texts.push((name, t));
            }
        }
    }
    for (n, t) in &texts {
        put("lex", n, t.as_bytes());
        put("parse", n, t.as_bytes());
    }
    for (n, p) in &programs {
        put("compile", n, p.as_bytes());
        put("eval", n, p.as_bytes());
    }
    // The structured target's seeds are generator input bytes: fuzz/seeds/structured only.
    for t in TARGETS.into_iter().filter(|t| *t != "structured") {
        let n = written.get(t).copied().unwrap_or(0);
        println!("{t}: {n} seeds");
        assert!(n > 0, "no seeds for {t}");
    }
}
