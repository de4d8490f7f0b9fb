//! Reading end-to-end case files (txtar in the format of `../shared/conformance/cases`):
//! shared by `tests/cases.rs` (the corpus) and the tests that run every case through a
//! second path and compare (`tests/lazy_request.rs`, `tests/encode_direct.rs`).
#![allow(dead_code)]

use fn_hcl::protocol::doc::Json;
use fn_hcl::protocol::proto::v1;
use fn_hcl::protocol::protojson::request_from_json;
use fn_hcl::protocol::yaml::parse_document;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[path = "../common/shared.rs"]
mod shared;
#[allow(unused_imports)]
pub use shared::{CASE_DATA, shared_dir};

/// Sections of a txtar file, in order; text before the first marker (the comment) is dropped.
/// A marker is a line `-- NAME --` (the same rule as ../shared/tools/case-conformance).
pub fn sections(text: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for line in text.split_inclusive('\n') {
        let marker = line
            .trim_end()
            .strip_prefix("-- ")
            .and_then(|r| r.strip_suffix(" --"))
            .map(str::trim)
            .filter(|n| !n.is_empty());
        match marker {
            Some(name) => out.push((name.to_string(), String::new())),
            None => {
                if let Some(last) = out.last_mut() {
                    last.1.push_str(line);
                }
            }
        }
    }
    out
}

/// The request as case-conformance builds it (protojson): request.yaml plus `input`
/// (input.yaml, or an inline HclInput whose `hcl` re-joins the HCL sections as txtar).
pub fn request_json(secs: &[(String, String)]) -> Result<Json, String> {
    let get = |n: &str| secs.iter().find(|(k, _)| k == n).map(|(_, v)| v.as_str());
    let hcl: String = secs
        .iter()
        .filter(|(k, _)| !CASE_DATA.contains(&k.as_str()))
        .map(|(k, v)| format!("-- {k} --\n{v}"))
        .collect();
    let mut req = match parse_document(get("request.yaml").unwrap_or(""))? {
        Json::Object(m) => m,
        Json::Null => BTreeMap::new(),
        other => return Err(format!("request.yaml is not a mapping: {other:?}")),
    };
    let input = match get("input.yaml") {
        Some(y) => parse_document(y)?,
        None => {
            let mut m = BTreeMap::new();
            m.insert("apiVersion".into(), Json::String("function-hcl/v1".into()));
            m.insert("kind".into(), Json::String("HclInput".into()));
            m.insert("source".into(), Json::String("Inline".into()));
            m.insert("hcl".into(), Json::String(hcl));
            Json::Object(m)
        }
    };
    req.insert("input".into(), input);
    Ok(Json::Object(req))
}

/// A case file's text with its section `name` (and anything after it) replaced by `body`,
/// or `body` appended as that section: everything before it kept verbatim (what blessing
/// writes).
pub fn with_section(text: &str, name: &str, body: &str) -> String {
    let marker = format!("-- {name} --");
    let mut kept = String::new();
    for line in text.split_inclusive('\n') {
        if line.trim_end() == marker {
            break;
        }
        kept.push_str(line);
    }
    if !kept.is_empty() && !kept.ends_with('\n') {
        kept.push('\n');
    }
    format!("{kept}{marker}\n{body}")
}

/// The decoded request of a case file's text.
pub fn case_request(text: &str) -> Result<v1::RunFunctionRequest, String> {
    request_from_json(&request_json(&sections(text))?).map_err(|e| e.to_string())
}

/// The `*.txtar` files of a directory, sorted (none if it cannot be read).
pub fn case_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "txtar"))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}
