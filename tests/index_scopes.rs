//! The editor's index of names (`lower::index`) and the lowerer agree on scoping: over
//! every end-to-end case and example, the variables the index cannot resolve are
//! exactly those `analyze` reports as "Unknown variable".

mod txtar_cases;

use fn_hcl::lower::index::Index;
use fn_hcl::syntax::ast;
use fn_hcl::syntax::parser::parse_file_partial;
use fn_hcl::syntax::span::SourceMap;
use std::path::PathBuf;

/// Checks one program; `Some(number of unknown variables)` when it could be checked.
fn check(files: &[(String, String)]) -> Option<usize> {
    let p = fn_hcl::lower::ir::compile_files(files).ok()?;
    // A locals error stops the lowerer before it resolves that scope's uses.
    let diags = fn_hcl::lower::analyze::analyze(&p);
    if diags.iter().any(|d| {
        d.summary.contains("local")
            || d.summary.contains("variable") && d.summary != "Unknown variable"
            || d.summary.contains("shadow")
            || d.summary.contains("cycle")
    }) {
        return None;
    }
    let mut want: Vec<(u32, u32, u32)> = diags
        .iter()
        .filter(|d| d.summary == "Unknown variable")
        .filter_map(|d| d.subject)
        .map(|s| (s.file.0, s.start.byte, s.end.byte))
        .collect();
    let mut sm = SourceMap::new();
    let ids: Vec<_> = files
        .iter()
        .map(|(n, t)| sm.add(n.as_str(), t.as_str()))
        .collect();
    let trees: Vec<ast::File> = ids
        .iter()
        .map(|id| parse_file_partial(&sm, *id).0)
        .collect();
    let refs: Vec<&ast::File> = trees.iter().collect();
    let ix = Index::build(&refs);
    let mut got: Vec<(u32, u32, u32)> = ix
        .unresolved
        .iter()
        .map(|s| (s.file.0, s.start.byte, s.end.byte))
        .collect();
    want.sort();
    want.dedup();
    got.sort();
    got.dedup();
    assert_eq!(got, want, "{files:?}");
    Some(want.len())
}

#[test]
fn index_and_lowerer_agree_on_every_case() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/cases");
    let (mut checked, mut unknown) = (0, 0);
    let mut paths = txtar_cases::case_files(&dir);
    if let Some(shared) = txtar_cases::shared_dir("index_scopes") {
        paths.extend(txtar_cases::case_files(&shared.join("conformance/cases")));
    }
    for path in paths {
        let text = std::fs::read_to_string(&path).expect("case");
        let files: Vec<(String, String)> = txtar_cases::sections(&text)
            .into_iter()
            .filter(|(n, _)| n.ends_with(".hcl"))
            .collect();
        if let Some(n) = (!files.is_empty()).then(|| check(&files)).flatten() {
            checked += 1;
            unknown += n;
        }
    }
    let own = r#"locals {
  a = 1
}
resource r {
  body = { x = each.key, y = self.name, z = nope, f = [for i in [1] : i + a] }
  composite status {
    body = { v = self.name, w = each }
  }
}
resources c {
  for_each = [1]
  name     = "${each.key}-${self.basename}"
  template {
    body = { k = each.value, s = self.resource, t = "%{for x in [1]}${x}${y}%{endfor}" }
  }
}
composite status {
  body = { v = self.name }
}
group {
  locals {
    g = a
  }
  resource r2 {
    body = { q = g, w = missing }
  }
}
"#;
    let n = check(&[("main.hcl".to_string(), own.to_string())]).expect("own program");
    assert_eq!(n, 6);
    unknown += n;
    eprintln!("{checked} programs, {unknown} unknown variables");
    assert!(checked > 100, "only {checked} programs checked");
    assert!(
        unknown > 0,
        "no program with an unknown variable was checked"
    );
}
