//! `fn-hcl analyze`: every problem a program has, found without a request. The Go
//! implementation discovers many of these only while evaluating (and some never: an
//! unknown name in a resource body only defers that resource); a user's CI should catch
//! them all.

use crate::cli::{Failure, input_name, read_input};
pub use crate::lower::analyze::{analyze, diagnostics};
use crate::syntax::diag::{Diagnostic, Severity};
use crate::syntax::span::SourceMap;
use std::path::Path;

/// Read the program named by the CLI arguments: `-` (txtar on stdin), `.hcl` files,
/// directories (every `*.hcl` in them, sorted), Composition YAML files (their steps'
/// programs) or txtar files (anything else). Arguments that hold no program text at all
/// (an empty file or bundle, a directory without `*.hcl` files, no argument in such a
/// directory) are a usage failure naming them, so a CI step cannot pass having checked
/// nothing.
pub fn load_inputs(paths: &[String]) -> Result<Vec<(String, String)>, Failure> {
    let mut files = Vec::new();
    let paths: Vec<String> = if paths.is_empty() {
        vec![".".to_string()]
    } else {
        paths.to_vec()
    };
    for p in &paths {
        let path = Path::new(p);
        if p != "-" && path.is_dir() {
            let mut entries: Vec<_> = std::fs::read_dir(path)
                .map_err(|e| format!("cannot read {p}: {e}"))?
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|x| x.extension().is_some_and(|e| e == "hcl"))
                .collect();
            entries.sort();
            for e in entries {
                let text = std::fs::read_to_string(&e)
                    .map_err(|err| format!("cannot read {}: {err}", e.display()))?;
                files.push((e.display().to_string(), text));
            }
            continue;
        }
        let text = read_input(p)?;
        let name = input_name(p);
        if text.trim().is_empty() {
            continue; // nothing here: refused below unless another argument has a program
        }
        if p != "-" && path.extension().is_some_and(|e| e == "hcl") {
            files.push((p.clone(), text));
        } else if path.extension().is_some_and(|e| e == "yaml" || e == "yml") {
            files.extend(composition_programs(&text).map_err(|e| format!("{name}: {e}"))?);
        } else {
            files.extend(crate::syntax::txtar::parse(&text).map_err(|e| format!("{name}: {e}"))?);
        }
    }
    if files.iter().all(|(_, text)| text.trim().is_empty()) {
        let what: Vec<&str> = paths.iter().map(|p| input_name(p)).collect();
        return Err(Failure::usage(format!(
            "nothing to analyze: {} {} no HCL program text (give .hcl files, directories \
             holding them, txtar bundles or Composition YAML)",
            what.join(", "),
            if what.len() == 1 { "holds" } else { "hold" }
        )));
    }
    Ok(files)
}

/// The programs of a Composition YAML file: the txtar `hcl` of every pipeline step whose
/// input is an `HclInput` (all steps' files together, as one program per step would be
/// analyzed the same way).
fn composition_programs(text: &str) -> Result<Vec<(String, String)>, String> {
    let mut files = Vec::new();
    for doc in crate::protocol::yaml::load_documents(text)? {
        let steps = doc
            .get("spec")
            .and_then(|s| s.get("pipeline"))
            .and_then(|p| match p {
                crate::protocol::doc::Json::Array(a) => Some(a.as_slice()),
                _ => None,
            })
            .unwrap_or(&[]);
        for step in steps {
            if let Some(hcl) = step
                .get("input")
                .and_then(|i| i.get("hcl"))
                .and_then(|h| h.as_str())
            {
                files.extend(crate::syntax::txtar::parse(hcl)?);
            }
        }
    }
    if files.is_empty() {
        return Err("no pipeline step with an HclInput `hcl` program found".into());
    }
    Ok(files)
}

/// Run `analyze` over files; returns the report (each diagnostic in the rich form, then
/// a summary line) and whether it has errors.
pub fn run(files: &[(String, String)]) -> (String, bool) {
    run_with(files, false)
}

/// [`run`]; `portable` adds a warning at every construct the Go implementation would
/// reject (fn-hcl's extensions: `assert` blocks).
pub fn run_with(files: &[(String, String)], portable: bool) -> (String, bool) {
    let (mut diags, sm) = diagnostics(files);
    if portable && let Ok(p) = crate::lower::ir::compile_files(files) {
        diags.extend(p.portability.iter().cloned());
        diags.sort_by_key(|d| d.subject.map(|s| (s.file.0, s.start.byte)));
    }
    let errors = diags.iter().any(|d| d.severity == Severity::Error);
    (report(&diags, &sm), errors)
}

/// `analyze`'s report of diagnostics: each in the rich form, then the summary line.
pub fn report(diags: &[Diagnostic], sm: &SourceMap) -> String {
    let mut s = crate::syntax::diag::render_rich(diags, sm);
    let errors = diags.iter().filter(|d| d.is_error()).count();
    let warnings = diags.len() - errors;
    if diags.is_empty() {
        s.push_str("no problems found\n");
    } else {
        s.push_str(&format!(
            "{errors} error{}, {warnings} warning{}\n",
            if errors == 1 { "" } else { "s" },
            if warnings == 1 { "" } else { "s" }
        ));
    }
    s
}

/// The bytecode of a program (no errors), every chunk in order: what `--disassemble`
/// prints after the report.
pub fn disassembly(files: &[(String, String)]) -> Result<String, Failure> {
    let program = crate::lower::ir::compile_files(files)
        .map_err(|e| Failure::from(format!("cannot compile: {}", e.message())))?;
    let code = &program.code;
    let mut out = String::new();
    for i in 0..code.chunk_count() {
        let id = crate::bytecode::code::ChunkId(i as u32);
        out.push_str(&format!(
            "\n== chunk {i}\n{}",
            crate::bytecode::disasm::disassemble(code, id)
        ));
    }
    Ok(out)
}
