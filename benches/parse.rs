//! Parser throughput, in bytes per second, on the `small` and `fleet` programs of the
//! pipeline workloads and on a generated ~1 MB function-hcl program (blocks, objects,
//! templates, for expressions, function calls, heredocs).
//!
//! `FN_HCL_PARSE_PROFILE=<small|fleet|1mb>:<N> cargo bench --bench parse` parses that
//! program N times and exits without criterion: a fixed amount of work to run under
//! `valgrind --tool=callgrind` (run the bench binary directly with the variable set).

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use fn_hcl::syntax::lexer::tokenize;
use fn_hcl::syntax::parser::parse_file;
use fn_hcl::syntax::span::{FileId, SourceMap};
use std::fmt::Write;
use std::hint::black_box;

#[path = "workloads/mod.rs"]
#[allow(dead_code)]
mod workloads;

/// A program of about `target` bytes made of varied, realistic resource blocks.
fn program(target: usize) -> String {
    let mut s = String::with_capacity(target + 4096);
    s.push_str("locals {\n  region = req.composite.spec.region\n  tags   = { team = \"platform\", env = req.composite.spec.env }\n}\n\n");
    let mut i = 0;
    while s.len() < target {
        let _ = write!(
            s,
            r#"# resource number {i}
resource bucket-{i} {{
  locals {{
    name  = "${{req.composite.metadata.name}}-{i}"
    count = length(req.composite.spec.items) * 2 + {i} % 7
  }}
  condition = req.composite.spec.enabled && !(try(req.composite.spec.skip[{i}], false))
  body = {{
    apiVersion = "s3.aws.upbound.io/v1beta1"
    kind       = "Bucket"
    metadata = {{
      name   = name
      labels = merge(tags, {{ index = "{i}" }})
    }}
    spec = {{
      forProvider = {{
        region  = region == "" ? "us-east-1" : region
        items   = [for k, v in req.composite.spec.items : upper(v.name) if v.enabled]
        byName  = {{ for x in req.composite.spec.items : x.name => x.size... }}
        ids     = req.composite.spec.items[*].id
        policy  = <<-EOT
          {{
            "Version": "2012-10-17",
            "Statement": [%{{ for s in req.composite.spec.statements ~}}"${{s}}",%{{ endfor ~}}]
          }}
        EOT
      }}
    }}
  }}
}}

"#
        );
        i += 1;
    }
    s
}

/// The files of a workload program (txtar) in one source map.
fn txtar_files(txtar: &str) -> Vec<(String, String)> {
    match fn_hcl::syntax::txtar::parse(txtar) {
        Ok(files) => files,
        Err(e) => panic!("txtar: {e}"),
    }
}

/// The measured programs: name → files.
fn programs() -> Vec<(&'static str, Vec<(String, String)>)> {
    vec![
        ("small", txtar_files(&workloads::small().hcl)),
        ("fleet", txtar_files(&workloads::fleet_program())),
        ("1mb", vec![("main.hcl".to_string(), program(1 << 20))]),
    ]
}

fn source_map(files: &[(String, String)]) -> (SourceMap, Vec<FileId>, u64) {
    let mut sm = SourceMap::new();
    let mut ids = Vec::new();
    let mut bytes = 0;
    for (name, text) in files {
        bytes += text.len() as u64;
        ids.push(sm.add(name.as_str(), text.as_str()));
    }
    (sm, ids, bytes)
}

/// Parses every file; the number of top-level body items (0 for a file that fails).
fn parse_all(sm: &SourceMap, ids: &[FileId]) -> usize {
    ids.iter()
        .map(|&f| parse_file(sm, f).map_or(0, |f| f.body.items.len()))
        .sum()
}

/// `FN_HCL_PARSE_PROFILE=name:N`: parse one program N times (for callgrind); true if set.
fn profile_only() -> bool {
    let Ok(spec) = std::env::var("FN_HCL_PARSE_PROFILE") else {
        return false;
    };
    let (name, n) = spec.split_once(':').unwrap_or((spec.as_str(), "1"));
    let n: usize = n.parse().unwrap_or(1);
    let Some((_, files)) = programs().into_iter().find(|(p, _)| *p == name) else {
        panic!("FN_HCL_PARSE_PROFILE: unknown program {name}");
    };
    let (sm, ids, bytes) = source_map(&files);
    let mut items = 0;
    for _ in 0..n {
        items += parse_all(&sm, &ids);
    }
    println!("{name}: {bytes} bytes, {n} parses, {items} items");
    true
}

fn bench(c: &mut Criterion) {
    if profile_only() {
        return;
    }
    let mut group = c.benchmark_group("parse");
    group.sample_size(20);
    for (name, files) in programs() {
        let (sm, ids, bytes) = source_map(&files);
        for &f in &ids {
            assert!(parse_file(&sm, f).is_ok(), "the program {name} must parse");
        }
        group.throughput(Throughput::Bytes(bytes));
        group.bench_function(format!("tokenize/{name}"), |b| {
            b.iter(|| {
                files
                    .iter()
                    .map(|(_, text)| tokenize(black_box(text), FileId(0)).len())
                    .sum::<usize>()
            })
        });
        group.bench_function(format!("parse_file/{name}"), |b| {
            b.iter(|| parse_all(black_box(&sm), &ids))
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
