//! `fn-hcl package`: function-hcl's `fn-hcl-tools package`: bundle HCL files as the txtar
//! text a Composition step's `input.hcl` holds, after analyzing them (a program with
//! errors is refused, so mistakes surface at authoring time, not in the cluster).
//!
//! Output: golang.org/x/tools/txtar's `Format` of the files in argument order, each
//! `-- NAME --` line followed by the file's bytes (a newline added if it lacks one).
//! A file argument is named exactly as given, as the Go tool names it. A directory
//! argument (which the Go tool cannot read) contributes its `*.hcl` files, not
//! recursively, in name order, each named by its file name, so that `fn-hcl package dir/`
//! produces the `-- main.hcl --` bundle function-hcl's documentation shows.

use crate::syntax::diag::Severity;
use std::path::Path;

/// `fn-hcl package` arguments (the Go tool's).
#[derive(Debug, clap::Args)]
pub struct PackageArgs {
    /// HCL files (named as given), directories (their `*.hcl` files), or `-`: standard
    /// input, a txtar bundle or one HCL file (named main.hcl).
    pub paths: Vec<String>,
    /// Skip the analysis of the files before packaging.
    #[arg(long = "skip-analysis")]
    pub skip_analysis: bool,
}

/// Runs `fn-hcl package`: the bundle on standard output; diagnostics on standard error
/// as the Go tool logs them, then `Error: analysis failed` and exit code 1 when there are
/// errors (any other failure: `Error: <why>`, exit code 1, as cobra reports it).
pub fn main(args: &PackageArgs) -> std::process::ExitCode {
    use std::io::Write as _;
    match package(&args.paths, args.skip_analysis) {
        Ok((text, warnings)) => {
            eprint!("{warnings}");
            let mut out = std::io::stdout().lock();
            if out
                .write_all(text.as_bytes())
                .and_then(|()| out.flush())
                .is_err()
            {
                return std::process::ExitCode::FAILURE;
            }
            std::process::ExitCode::SUCCESS
        }
        Err(PackageError::Analysis(report)) => {
            eprint!("{report}");
            eprintln!("Error: analysis failed");
            std::process::ExitCode::FAILURE
        }
        Err(PackageError::Read(e)) => {
            eprintln!("Error: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// Why packaging failed.
#[derive(Debug)]
pub enum PackageError {
    /// A file or directory could not be read (the message names it).
    Read(String),
    /// Analysis found errors: every diagnostic in the Go tool's form, one a line
    /// (`\t ERROR: main.hcl:3,5-9: Summary; Detail`, warnings as `\t WARN : ...`).
    Analysis(String),
}

/// The files to package, in order: `(name in the bundle, contents)`.
pub fn collect(paths: &[String]) -> Result<Vec<(String, String)>, PackageError> {
    if paths.is_empty() {
        return Err(PackageError::Read("no files to package".into()));
    }
    let mut files = Vec::new();
    for p in paths {
        let path = Path::new(p);
        if path.is_dir() {
            let mut entries: Vec<_> = std::fs::read_dir(path)
                .map_err(|e| PackageError::Read(format!("read {p}: {e}")))?
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|x| x.is_file() && x.extension().is_some_and(|e| e == "hcl"))
                .collect();
            entries.sort();
            for e in entries {
                let text = std::fs::read_to_string(&e)
                    .map_err(|err| PackageError::Read(format!("open {}: {err}", e.display())))?;
                let name = e
                    .file_name()
                    .map_or_else(|| e.display().to_string(), |n| n.to_string_lossy().into());
                files.push((name, text));
            }
        } else if p == "-" {
            // Standard input: a txtar bundle (its files, re-packaged) or one HCL file,
            // named main.hcl as function-hcl's examples name a single file.
            let text = crate::cli::read_input(p).map_err(PackageError::Read)?;
            if crate::handler::has_txtar_files(&text) {
                files.extend(
                    crate::syntax::txtar::parse(&text)
                        .map_err(|e| PackageError::Read(format!("standard input: {e}")))?,
                );
            } else {
                files.push(("main.hcl".to_string(), text));
            }
        } else {
            let text = std::fs::read_to_string(path)
                .map_err(|e| PackageError::Read(format!("open {p}: {e}")))?;
            files.push((p.clone(), text));
        }
    }
    Ok(files)
}

/// The diagnostics of the files as the Go tool logs them, and whether any is an error.
pub fn analysis_report(files: &[(String, String)]) -> (String, bool) {
    let (diags, sm) = crate::cli::analyze::diagnostics(files);
    let mut out = String::new();
    for d in &diags {
        let sev = match d.severity {
            Severity::Error => "ERROR:",
            Severity::Warning => "WARN :",
        };
        out.push_str(&format!("\t {sev} {}\n", d.plain(&sm)));
    }
    (out, diags.iter().any(|d| d.is_error()))
}

/// Packages the files named by `paths`: the txtar text and the analysis warnings (empty
/// when there are none, or when `skip_analysis`).
pub fn package(paths: &[String], skip_analysis: bool) -> Result<(String, String), PackageError> {
    let files = collect(paths)?;
    let mut warnings = String::new();
    if !skip_analysis {
        let (report, errors) = analysis_report(&files);
        if errors {
            return Err(PackageError::Analysis(report));
        }
        warnings = report;
    }
    Ok((crate::syntax::txtar::format(&files), warnings))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(files: &[(&str, &str)]) -> tempdir::Dir {
        tempdir::Dir::new(files)
    }

    /// A scratch directory removed on drop (no extra dependency).
    mod tempdir {
        pub struct Dir(pub std::path::PathBuf);
        impl Dir {
            pub fn new(files: &[(&str, &str)]) -> Dir {
                static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
                let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let p =
                    std::env::temp_dir().join(format!("fn-hcl-package-{}-{n}", std::process::id()));
                std::fs::create_dir_all(&p).unwrap();
                for (name, text) in files {
                    std::fs::write(p.join(name), text).unwrap();
                }
                Dir(p)
            }
            pub fn path(&self, name: &str) -> String {
                self.0.join(name).display().to_string()
            }
        }
        impl Drop for Dir {
            fn drop(&mut self) {
                let _ = std::fs::remove_dir_all(&self.0);
            }
        }
    }

    const GOOD: &str = "resource r {\n  body = { apiVersion = \"v1\", kind = \"K\" }\n}\n";

    #[test]
    fn a_directory_gives_its_hcl_files_by_name_in_order() {
        let d = dir(&[
            ("b.hcl", GOOD),
            ("a.hcl", "locals {\n  x = 1\n}"),
            ("notes.txt", "x"),
        ]);
        let (text, warnings) = package(&[d.0.display().to_string()], false).unwrap();
        assert_eq!(
            text,
            format!("-- a.hcl --\nlocals {{\n  x = 1\n}}\n-- b.hcl --\n{GOOD}")
        );
        assert_eq!(warnings, "");
    }

    #[test]
    fn files_keep_their_argument_names_and_order() {
        let d = dir(&[("b.hcl", GOOD), ("a.hcl", "locals {\n  x = 1\n}\n")]);
        let (b, a) = (d.path("b.hcl"), d.path("a.hcl"));
        let (text, _) = package(&[b.clone(), a.clone()], false).unwrap();
        assert!(
            text.starts_with(&format!("-- {b} --\n{GOOD}-- {a} --\n")),
            "{text}"
        );
    }

    #[test]
    fn errors_refuse_to_package() {
        let d = dir(&[("main.hcl", "resource r {\n  body = parms.x\n}\n")]);
        match package(&[d.0.display().to_string()], false) {
            Err(PackageError::Analysis(report)) => {
                assert!(report.starts_with("\t ERROR: main.hcl:2,"), "{report}");
            }
            other => panic!("expected an analysis error, got {other:?}"),
        }
        // --skip-analysis packages it anyway.
        assert!(package(&[d.0.display().to_string()], true).is_ok());
    }

    #[test]
    fn unreadable_paths_are_read_errors() {
        assert!(matches!(
            package(&["/nonexistent/x.hcl".to_string()], false),
            Err(PackageError::Read(_))
        ));
        assert!(matches!(package(&[], false), Err(PackageError::Read(_))));
    }
}
