//! Parser throughput on a generated ~1 MB function-hcl program (blocks, objects,
//! templates, for expressions, function calls, heredocs), in bytes per second.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use fn_hcl::lexer::tokenize;
use fn_hcl::parser::parse_file;
use fn_hcl::span::{FileId, SourceMap};
use std::fmt::Write;
use std::hint::black_box;

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

fn bench(c: &mut Criterion) {
    let src = program(1 << 20);
    let mut sm = SourceMap::new();
    let file = sm.add("main.hcl", src.as_str());
    assert!(
        parse_file(&sm, file).is_ok(),
        "the generated program must parse"
    );

    let mut group = c.benchmark_group("parse");
    group.throughput(Throughput::Bytes(src.len() as u64));
    group.sample_size(20);
    group.bench_function("tokenize", |b| {
        b.iter(|| tokenize(black_box(&src), FileId(0)).len())
    });
    group.bench_function("parse_file", |b| {
        b.iter(|| parse_file(black_box(&sm), file).map(|f| f.body.items.len()))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
