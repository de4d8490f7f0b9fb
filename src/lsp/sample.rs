//! A sample request beside the program: with `xr.yaml` (the observed composite, as
//! `fn-hcl render` takes it) and optionally `observed.yaml` (observed composed resources,
//! one YAML document each, named by their `crossplane.io/composition-resource-name`
//! annotation) in a program's directory, the server evaluates the program against that
//! request after every change: hover shows each local's value and a code lens marks
//! every block the evaluation deferred (or skipped), with why.

use crate::lower::ir::Program;
use crate::protocol::doc::Json;
use crate::runtime::eval::Trace;
use crate::syntax::span::Span;
use crate::value::Value;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// The observed composite of the sample request.
pub const XR_FILE: &str = "xr.yaml";
/// The observed composed resources of the sample request (optional).
pub const OBSERVED_FILE: &str = "observed.yaml";
/// The largest sample file read.
pub const MAX_SAMPLE_BYTES: u64 = 8 * 1024 * 1024;

/// The sample files' contents, as last read (with what they were read at).
#[derive(Clone, Debug, Default)]
pub struct SampleFiles {
    stamp: Vec<Option<(SystemTime, u64)>>,
    /// The XR and observed documents, or why they could not be read.
    pub docs: Option<Result<(Json, Vec<Json>), String>>,
}

fn stamp(p: &Path) -> Option<(SystemTime, u64)> {
    let m = std::fs::metadata(p).ok()?;
    Some((m.modified().ok()?, m.len()))
}

impl SampleFiles {
    /// Re-reads the files of `dir` if they changed since the last read; true if they did.
    pub fn refresh(&mut self, dir: &Path) -> bool {
        let paths: [PathBuf; 2] = [dir.join(XR_FILE), dir.join(OBSERVED_FILE)];
        let now: Vec<Option<(SystemTime, u64)>> = paths.iter().map(|p| stamp(p)).collect();
        if now == self.stamp {
            return false;
        }
        self.stamp = now.clone();
        self.docs = now[0].map(|_| read(&paths[0], &paths[1], now[1].is_some()));
        true
    }
}

fn read_docs(p: &Path) -> Result<Vec<Json>, String> {
    let name = p
        .file_name()
        .map_or(String::new(), |n| n.to_string_lossy().to_string());
    if stamp(p).is_some_and(|(_, len)| len > MAX_SAMPLE_BYTES) {
        return Err(format!("{name} is larger than {MAX_SAMPLE_BYTES} bytes"));
    }
    let text = std::fs::read_to_string(p).map_err(|e| format!("{name}: {e}"))?;
    crate::protocol::yaml::load_documents(&text).map_err(|e| format!("{name}: {e}"))
}

fn read(xr: &Path, observed: &Path, with_observed: bool) -> Result<(Json, Vec<Json>), String> {
    let xr = read_docs(xr)?
        .into_iter()
        .find(|d| *d != Json::Null)
        .ok_or_else(|| format!("{XR_FILE} holds no document"))?;
    let observed = if with_observed {
        read_docs(observed)?
            .into_iter()
            .filter(|d| *d != Json::Null)
            .collect()
    } else {
        Vec::new()
    };
    Ok((xr, observed))
}

/// The outcome of evaluating a program against the sample request.
#[derive(Clone, Debug)]
pub struct SampleRun {
    pub trace: Trace,
    /// The Fatal result's message, when evaluation failed.
    pub fatal: Option<String>,
    /// How many composed resources the run produced.
    pub resources: usize,
}

/// Evaluates a program against the sample (XR, observed) documents.
pub fn run(program: &Program, xr: &Json, observed: &[Json]) -> Result<SampleRun, String> {
    let state = crate::protocol::observed::observed_state(xr, observed)?;
    let req = crate::protocol::proto::v1::RunFunctionRequest {
        observed: Some(state),
        desired: Some(Default::default()),
        ..Default::default()
    };
    let request = crate::protocol::request::Request::from_proto(&req).map_err(|e| e.to_string())?;
    let inputs = crate::runtime::eval::Inputs::from_request(&request);
    let (out, trace) =
        crate::runtime::eval::evaluate_traced(program, &inputs, crate::handler::default_limits());
    Ok(match out {
        Ok(o) => SampleRun {
            trace,
            fatal: None,
            resources: o.resources.len(),
        },
        Err(f) => SampleRun {
            trace,
            fatal: Some(f.0),
            resources: 0,
        },
    })
}

/// A value as hover shows it: its JSON (as `jsonencode` writes it, cut at 2,000 bytes),
/// or why it is not known.
pub fn show_value(v: &Value) -> String {
    if v.contains_unknown() {
        return "(not known from this sample request)".into();
    }
    match crate::value::json::encode(v) {
        Ok(mut s) => {
            if s.len() > 2000 {
                let mut end = 2000;
                while !s.is_char_boundary(end) {
                    end -= 1;
                }
                s.truncate(end);
                s.push('…');
            }
            s
        }
        Err(e) => format!("({e})"),
    }
}

/// The values a local (by its expression's range) took in the sample run.
pub fn local_values(run: &SampleRun, value: Span) -> Vec<&Value> {
    run.trace
        .locals
        .iter()
        .filter(|(r, _)| *r == value)
        .map(|(_, v)| v)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sample_run_records_values_and_deferred_blocks() {
        let p = crate::lower::ir::compile_files(&[(
            "main.hcl".into(),
            "locals {\n  n = req.composite.spec.n * 2\n}\nresource a {\n  body = { x = n }\n}\nresource b {\n  body = { y = req.resource.a.status.id }\n}\n".into(),
        )])
        .expect("compiles");
        let xr = crate::protocol::yaml::load_documents("kind: XR\nspec:\n  n: 21\n").expect("xr");
        let r = run(&p, &xr[0], &[]).expect("run");
        assert_eq!(r.fatal, None);
        assert_eq!(r.resources, 1);
        assert_eq!(r.trace.locals.len(), 1);
        assert_eq!(show_value(&r.trace.locals[0].1), "42");
        assert_eq!(r.trace.discards.len(), 1);
        assert_eq!(r.trace.discards[0].name, "b");
        assert_eq!(r.trace.discards[0].reason.as_str(), "incomplete");
    }
}
