//! VM throughput per instruction family and for a realistic resource body.
//! Run with `cargo bench --bench vm`.

use criterion::{Criterion, criterion_group, criterion_main};
use fn_hcl::bytecode::vm::{Limits, Vm};
use fn_hcl::value::Value;
use std::hint::black_box;

#[path = "../tests/vm_util/mod.rs"]
#[allow(dead_code, clippy::all)]
mod vm_util;
use vm_util::{compile, obj, s};

fn bench_expr(c: &mut Criterion, name: &str, src: &str, vars: &[(&'static str, Value)]) {
    let names: Vec<&'static str> = vars.iter().map(|(n, _)| *n).collect();
    let compiled = compile(src, &names);
    let (p, chunk) = (compiled.program, compiled.chunk);
    let frame: Vec<Value> = vars.iter().map(|(_, v)| v.clone()).collect();
    let mut diags = Vec::new();
    c.bench_function(name, |b| {
        b.iter(|| {
            let mut vm = Vm::new(&p, Limits::default());
            diags.clear();
            black_box(vm.eval(chunk, black_box(&frame), &mut diags))
        })
    });
}

fn request() -> Value {
    obj(vec![(
        "composite",
        obj(vec![
            (
                "metadata",
                obj(vec![("name", s("demo")), ("namespace", s("team-a"))]),
            ),
            (
                "spec",
                obj(vec![
                    ("region", s("us-east-1")),
                    ("replicas", Value::int(3)),
                    (
                        "subnets",
                        Value::tuple(
                            (0..8)
                                .map(|i| obj(vec![("id", s(&format!("subnet-{i}")))]))
                                .collect(),
                        ),
                    ),
                ]),
            ),
        ]),
    )])
}

fn families(c: &mut Criterion) {
    let req = request();
    bench_expr(c, "arith", "x * 2 + 1 - x / 4", &[("x", Value::int(21))]);
    bench_expr(
        c,
        "compare_logic",
        "x > 3 && x < 100 || x == 7",
        &[("x", Value::int(21))],
    );
    bench_expr(
        c,
        "traversal",
        "req.composite.spec.region",
        &[("req", req.clone())],
    );
    bench_expr(
        c,
        "template",
        "\"${req.composite.metadata.name}-${req.composite.spec.region}\"",
        &[("req", req.clone())],
    );
    bench_expr(
        c,
        "conditional",
        "x > 3 ? \"big\" : \"small\"",
        &[("x", Value::int(21))],
    );
    bench_expr(
        c,
        "for_tuple",
        "[for i, s in req.composite.spec.subnets: \"${i}:${s.id}\"]",
        &[("req", req.clone())],
    );
    bench_expr(
        c,
        "splat",
        "req.composite.spec.subnets[*].id",
        &[("req", req.clone())],
    );
    bench_expr(
        c,
        "resource_body",
        r#"{
          apiVersion = "ec2.aws.upbound.io/v1beta1"
          kind       = "VPC"
          metadata   = { name = "${req.composite.metadata.name}-vpc", labels = { team = req.composite.metadata.namespace } }
          spec = {
            forProvider = {
              region    = req.composite.spec.region
              cidrBlock = "10.0.0.0/16"
              tags      = { for i, s in req.composite.spec.subnets : s.id => i if i % 2 == 0 }
              size      = req.composite.spec.replicas > 2 ? "large" : "small"
              subnetIds = try(req.composite.spec.subnets[*].id, [])
            }
          }
        }"#,
        &[("req", req)],
    );
}

criterion_group!(benches, families);
criterion_main!(benches);
