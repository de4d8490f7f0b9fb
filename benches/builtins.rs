//! Benchmarks for the builtins implemented by the `builtins-b` helper: format,
//! jsonencode, base64encode, cidrsubnet and yamlencode, called through the registry the
//! way the VM calls them.

use criterion::{Criterion, criterion_group, criterion_main};
use fn_hcl::builtins::{call, lookup};
use fn_hcl::value::{Str, Type, Value};
use std::hint::black_box;

fn sample_object() -> Value {
    let tags = Value::map(
        Type::String,
        vec![
            (Str::from("env"), Value::string("production")),
            (Str::from("team"), Value::string("platform <infra>")),
        ],
    );
    let subnets = Value::tuple(
        (0..8)
            .map(|i| Value::string(format!("10.0.{i}.0/24")))
            .collect(),
    );
    Value::object(vec![
        ("name".into(), Value::string("my-bucket")),
        ("replicas".into(), Value::int(3)),
        ("enabled".into(), Value::Bool(true)),
        ("tags".into(), tags),
        ("subnets".into(), subnets),
        ("note".into(), Value::string("line one\nline two\n")),
    ])
}

fn bench(c: &mut Criterion) {
    let (Some(format), Some(jsonencode), Some(base64encode), Some(cidrsubnet), Some(yamlencode)) = (
        lookup("format"),
        lookup("jsonencode"),
        lookup("base64encode"),
        lookup("cidrsubnet"),
        lookup("yamlencode"),
    ) else {
        return;
    };
    let obj = sample_object();
    c.bench_function("format", |b| {
        b.iter(|| {
            call(
                format,
                vec![
                    Value::string("%s-%03d.%-8s|%.2f"),
                    Value::string("web"),
                    Value::int(7),
                    Value::string("eu"),
                    Value::int(42),
                ],
            )
        })
    });
    c.bench_function("jsonencode", |b| {
        b.iter(|| call(jsonencode, vec![black_box(obj.clone())]))
    });
    let text = Value::string("hello world ".repeat(64));
    c.bench_function("base64encode", |b| {
        b.iter(|| call(base64encode, vec![black_box(text.clone())]))
    });
    c.bench_function("cidrsubnet", |b| {
        b.iter(|| {
            call(
                cidrsubnet,
                vec![Value::string("10.0.0.0/16"), Value::int(8), Value::int(42)],
            )
        })
    });
    c.bench_function("yamlencode", |b| {
        b.iter(|| call(yamlencode, vec![black_box(obj.clone())]))
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
