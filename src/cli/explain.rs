//! `fn-hcl explain`: the program of each fn-hcl step partially evaluated against the
//! request that step gets ([`crate::runtime::explain`]). The requests are `render`'s (the
//! pipeline run in-process, so a later step sees the earlier steps' desired state), or
//! one given with `--request` as `eval` takes it.
//!
//! Exit codes: 0 when the program ran, whatever was deferred or failed at run time; 1
//! when a program has errors (`analyze`'s diagnostics on stderr) or the inputs cannot be
//! read.

use crate::cli::render;
use crate::protocol::proto::v1;
use crate::runtime::explain::{ExplainError, Explanation, explain_request};
use std::path::PathBuf;
use std::process::ExitCode;

/// The output forms.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// The folded program, each block preceded by `# explain:` comments.
    #[default]
    Hcl,
    /// The same facts as one JSON document.
    Json,
}

/// `fn-hcl explain` arguments: render's inputs, or `--request`.
#[derive(Debug, clap::Args)]
pub struct ExplainArgs {
    /// The composite resource (XR).
    #[arg(required_unless_present = "request")]
    pub xr: Option<PathBuf>,
    /// The Composition (a Pipeline of HclInput steps).
    #[arg(required_unless_present = "request")]
    pub composition: Option<PathBuf>,
    /// Function packages; when given, every step's functionRef must name one.
    pub functions: Option<PathBuf>,
    /// Observed composed resources (a YAML file or a directory of them).
    #[arg(short = 'o', long = "observed-resources", value_name = "PATH")]
    pub observed: Option<PathBuf>,
    /// Objects that can satisfy requirements (a YAML file or a directory of them).
    #[arg(short = 'e', long = "extra-resources", value_name = "PATH")]
    pub extra: Option<PathBuf>,
    /// One RunFunctionRequest (YAML or protojson JSON, `-` for stdin) instead of render's
    /// inputs.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["xr", "composition", "functions", "observed", "extra"])]
    pub request: Option<String>,
    /// `hcl` (the folded program with marks) or `json`.
    #[arg(long, value_enum, default_value_t = Format::Hcl)]
    pub format: Format,
}

/// Runs `fn-hcl explain`.
pub fn main(args: &ExplainArgs) -> ExitCode {
    let steps = match requests(args) {
        Ok(s) => s,
        Err(e) => return crate::cli::fail(&e.into()),
    };
    let mut done: Vec<(String, Explanation)> = Vec::new();
    for (step, req) in &steps {
        match explain_request(req) {
            Ok(x) => done.push((step.clone(), x)),
            Err(ExplainError::Request(e)) => {
                return crate::cli::fail(&format!("step {step:?}: {e}").into());
            }
            Err(ExplainError::Program(diags, sm)) => {
                eprint!("{}", crate::cli::analyze::report(&diags, &sm));
                return crate::cli::fail(&format!("step {step:?}: the program has errors").into());
            }
        }
    }
    print!("{}", output(&done, args.format));
    ExitCode::SUCCESS
}

/// The explanations as printed: the folded programs (under `# step "NAME"` when there are
/// several steps), or one JSON document `{"steps": [{"step", ...explanation}]}`.
pub fn output(done: &[(String, Explanation)], format: Format) -> String {
    match format {
        Format::Hcl => {
            let mut s = String::new();
            for (step, x) in done {
                if done.len() > 1 {
                    s.push_str(&format!("# step {step:?}\n"));
                }
                s.push_str(&x.program_text());
            }
            s
        }
        Format::Json => {
            use crate::protocol::doc::Json;
            let steps = done
                .iter()
                .map(|(step, x)| {
                    let mut j = x.to_json();
                    if let Json::Object(m) = &mut j {
                        m.insert("step".into(), Json::String(step.clone()));
                    }
                    j
                })
                .collect();
            let mut m = std::collections::BTreeMap::new();
            m.insert("steps".to_string(), Json::Array(steps));
            crate::protocol::doc::to_pretty(&Json::Object(m)) + "\n"
        }
    }
}

/// The request of every fn-hcl step to explain, by step name.
pub fn requests(args: &ExplainArgs) -> Result<Vec<(String, v1::RunFunctionRequest)>, String> {
    if let Some(path) = &args.request {
        return Ok(vec![(
            "request".to_string(),
            crate::cli::read_request(path)?,
        )]);
    }
    let (Some(xr), Some(comp)) = (&args.xr, &args.composition) else {
        return Err("give XR and COMPOSITION, or --request FILE".into());
    };
    let inputs = render::Inputs::read(
        xr,
        comp,
        args.functions.as_deref(),
        args.observed.as_deref(),
        args.extra.as_deref(),
    )?;
    step_requests(&inputs)
}

/// Runs the pipeline as `render` does and keeps, for each step it reached, the last
/// request that step got (after the requirements loop).
pub fn step_requests(
    inputs: &render::Inputs,
) -> Result<Vec<(String, v1::RunFunctionRequest)>, String> {
    let steps = render::pipeline_steps(&inputs.composition, inputs.functions.as_deref())?;
    let mut seen: Vec<v1::RunFunctionRequest> = Vec::new();
    let rendered = render::render(inputs, &mut |req| {
        seen.push(req.clone());
        crate::handler::run_function(req)
    });
    // A step's calls are consecutive and share its input.
    let mut groups: Vec<v1::RunFunctionRequest> = Vec::new();
    for req in seen {
        match groups.last_mut() {
            Some(last) if last.input == req.input => *last = req,
            _ => groups.push(req),
        }
    }
    if groups.is_empty() {
        return Err(match rendered {
            Err(e) => e,
            Ok(_) => "the composition has no pipeline step to explain".into(),
        });
    }
    Ok(steps.into_iter().map(|s| s.name).zip(groups).collect())
}
