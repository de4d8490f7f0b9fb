//! The shape of `src/`: one layer a directory, each importing only the layers before it
//! (README "Layout"). Reads every `crate::LAYER` path in `src/` (tests included) and fails
//! on an import from a later layer, so the pipeline stays readable from the tree.

mod common;

use std::collections::BTreeSet;
use std::path::Path;

/// The layers, first to last. A layer may use any layer before it, never one after it.
const LAYERS: &[&str] = &[
    "text", "syntax", "value", "builtins", "bytecode", "lower", "protocol", "runtime", "handler",
    "server", "lsp", "cli",
];

/// Upward edges still being cut (file, imported layer). Each entry must still occur, so
/// the list can only shrink.
const KNOWN: &[(&str, &str)] = &[];

fn rank(layer: &str) -> Option<usize> {
    LAYERS.iter().position(|l| *l == layer)
}

/// The layers a file names as `crate::LAYER` or in a group `crate::{LAYER::..., LAYER}`
/// (over lines too), with the line number of one use each. Line comments are not code.
fn imports(text: &str) -> Vec<(String, usize)> {
    let code: String = text
        .lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n");
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    let mut out: Vec<(String, usize)> = Vec::new();
    let mut add = |name: String, at: usize| {
        if !name.is_empty() && !out.iter().any(|(l, _)| *l == name) {
            out.push((name, code[..at].matches('\n').count() + 1));
        }
    };
    let mut from = 0;
    while let Some(i) = code[from..].find("crate::") {
        let at = from + i + "crate::".len();
        from = at;
        let Some(group) = code[at..].strip_prefix('{') else {
            add(ident(&code[at..]), at);
            continue;
        };
        // The first segment of each item of the group, at its top level.
        let (mut depth, mut item_start) = (1, true);
        for (j, c) in group.char_indices() {
            match c {
                '{' => depth += 1,
                '}' if depth == 1 => break,
                '}' => depth -= 1,
                ',' if depth == 1 => item_start = true,
                c if item_start && !c.is_whitespace() => {
                    add(ident(&group[j..]), at + 1 + j);
                    item_start = false;
                }
                _ => {}
            }
        }
    }
    out
}

#[test]
fn layers_import_only_earlier_layers() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    common::walk(&src, &mut files);
    files.retain(|p| p.extension().is_some_and(|x| x == "rs"));
    let mut violations = Vec::new();
    let mut seen_known = BTreeSet::new();
    let mut layers_seen = BTreeSet::new();
    for f in &files {
        let rel = f.strip_prefix(&src).expect("under src");
        let mut parts = rel.components();
        let first = parts
            .next()
            .expect("a path")
            .as_os_str()
            .to_string_lossy()
            .into_owned();
        if parts.next().is_none() {
            // lib.rs, main.rs: the crate's roots, above every layer.
            continue;
        }
        if first == "bin" {
            continue;
        }
        let Some(own) = rank(&first) else {
            panic!("src/{first}/ is not a layer: add it to LAYERS in tests/layers.rs, in order");
        };
        layers_seen.insert(first.clone());
        let text = std::fs::read_to_string(f).expect("readable source");
        let file = format!("src/{}", rel.display());
        for (layer, line) in imports(&text) {
            let Some(r) = rank(&layer) else { continue };
            if r > own {
                if KNOWN.contains(&(file.as_str(), layer.as_str())) {
                    seen_known.insert((file.clone(), layer));
                } else {
                    violations.push(format!(
                        "{file}:{line}: `{first}` imports the later layer `{layer}`"
                    ));
                }
            }
        }
    }
    assert!(
        layers_seen.len() >= 10,
        "too few layers found under src/: {layers_seen:?}"
    );
    assert!(
        violations.is_empty(),
        "imports from later layers:\n{}",
        violations.join("\n")
    );
    for (file, layer) in KNOWN {
        assert!(
            seen_known.contains(&(file.to_string(), layer.to_string())),
            "{file} no longer imports `{layer}`: remove it from KNOWN in tests/layers.rs"
        );
    }
}

#[test]
fn imports_are_read_from_code_not_comments() {
    let text = "use crate::syntax::ast;\n// crate::cli here is prose\nlet x = crate::value::Value::Null; // crate::server\n";
    let names: Vec<String> = imports(text).into_iter().map(|(l, _)| l).collect();
    assert_eq!(names, ["syntax", "value"]);
}

#[test]
fn grouped_imports_name_every_layer() {
    let text = "use crate::{\n    cli::run,\n    // server here is prose\n    value::{self, Value},\n    lsp,\n};\n";
    assert_eq!(
        imports(text),
        [
            ("cli".to_string(), 2),
            ("value".to_string(), 4),
            ("lsp".to_string(), 5)
        ]
    );
}
