//! Where the test corpus lives outside the repository, and walking it.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// The shared directory (spec, reference docs, conformance data): env `FN_HCL_SHARED`,
/// else `../shared` beside the crate (CI), else `/work/shared`, for the check named by
/// `what`. When none exists the check cannot run: under `CI=true` that fails the test;
/// elsewhere it says so on stderr (`SKIPPED: ...`) and the caller checks nothing else.
pub fn shared_dir(what: &str) -> Option<PathBuf> {
    let candidates = [
        std::env::var("FN_HCL_SHARED").ok().map(PathBuf::from),
        Some(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared")),
        Some(PathBuf::from("/work/shared")),
    ];
    let found = candidates
        .into_iter()
        .flatten()
        .find(|p| p.join("conformance").is_dir());
    if found.is_none() {
        missing(what, "no shared directory (../shared or FN_HCL_SHARED)");
    }
    found
}

/// A prerequisite of the check named `what` (data, a tool, a Python package) is absent;
/// `why` names it and how to get it. Under `CI=true` (`.ci/run` provides everything) that
/// fails the test; elsewhere it says so on stderr (`SKIPPED: ...`) and the caller returns
/// having checked nothing else. The one place for this rule.
pub fn missing(what: &str, why: &str) {
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "{what}: {why}, and CI=true requires it"
    );
    eprintln!("SKIPPED: {what}: {why}");
}

/// Every file below `dir`, in sorted order.
pub fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = rd.filter_map(Result::ok).map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            walk(&p, out);
        } else {
            out.push(p);
        }
    }
}

/// The sections of a case file that are not program files: the request, the expected
/// response, an explicit input, and an explain case's expected output (tests/cases/explain).
pub const CASE_DATA: [&str; 5] = [
    "request.yaml",
    "response.json",
    "input.yaml",
    "explain.hcl",
    "explain.json",
];

/// Every HCL text of the shared corpus, as (label, file name, text) in path order: the
/// `hcl` blocks of the markdown of `spec/` and `reference-docs/` (`PATH#N`, as `main.hcl`),
/// the `.hcl` files under `conformance/` (`PATH`) and the program files of its txtar cases
/// (`PATH:NAME`, read as function-hcl reads its input).
pub fn hcl_corpus(shared: &Path) -> Vec<(String, String, String)> {
    let mut files = Vec::new();
    walk(shared, &mut files);
    let mut out = Vec::new();
    for p in &files {
        let rel = p
            .strip_prefix(shared)
            .unwrap_or(p)
            .to_string_lossy()
            .into_owned();
        let ext = p.extension().and_then(|e| e.to_str()).unwrap_or("");
        let Ok(text) = std::fs::read_to_string(p) else {
            continue;
        };
        if ext == "md" && (rel.starts_with("spec/") || rel.starts_with("reference-docs/")) {
            for (i, block) in hcl_blocks(&text).into_iter().enumerate() {
                out.push((format!("{rel}#{}", i + 1), "main.hcl".to_string(), block));
            }
        } else if ext == "hcl" && rel.starts_with("conformance/") {
            out.push((rel, "main.hcl".to_string(), text));
        } else if ext == "txtar"
            && rel.starts_with("conformance/")
            && let Ok(sections) = fn_hcl::syntax::txtar::parse(&text)
        {
            for (name, data) in sections {
                if !CASE_DATA.contains(&name.as_str()) {
                    out.push((format!("{rel}:{name}"), name, data));
                }
            }
        }
    }
    out
}

/// The `hcl` fenced code blocks of a markdown text.
pub fn hcl_blocks(md: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur: Option<(String, String)> = None; // (fence, text)
    for line in md.lines() {
        let t = line.trim_start();
        match &mut cur {
            None => {
                let fence: String = t.chars().take_while(|&c| c == '`' || c == '~').collect();
                if fence.len() >= 3 && t[fence.len()..].split_whitespace().next() == Some("hcl") {
                    cur = Some((fence, String::new()));
                }
            }
            Some((fence, text)) => {
                if t.trim_end() == fence.as_str() {
                    out.push(std::mem::take(text));
                    cur = None;
                } else {
                    text.push_str(line);
                    text.push('\n');
                }
            }
        }
    }
    out
}
