//! Number arithmetic and formatting on the fast (inline i64) and precise (512-bit) paths.

use criterion::{Criterion, criterion_group, criterion_main};
use fn_hcl::value::number::Number;
use std::hint::black_box;

fn num(s: &str) -> Number {
    Number::parse(s).unwrap_or_else(|| Number::from_i64(0))
}

fn bench(c: &mut Criterion) {
    let (a, b) = (num("123456"), num("789"));
    let (x, y) = (num("0.1"), num("3.7"));
    let third = num("1")
        .div(&num("3"))
        .unwrap_or_else(|_| Number::from_i64(0));

    c.bench_function("add/fast", |z| z.iter(|| black_box(&a).add(black_box(&b))));
    c.bench_function("add/precise", |z| {
        z.iter(|| black_box(&x).add(black_box(&y)))
    });
    c.bench_function("mul/fast", |z| z.iter(|| black_box(&a).mul(black_box(&b))));
    c.bench_function("mul/precise", |z| {
        z.iter(|| black_box(&x).mul(black_box(&y)))
    });
    c.bench_function("div/fast", |z| z.iter(|| black_box(&a).div(black_box(&b))));
    c.bench_function("div/precise", |z| {
        z.iter(|| black_box(&x).div(black_box(&y)))
    });
    c.bench_function("to_cty_string/fast", |z| {
        z.iter(|| black_box(&a).to_cty_string())
    });
    c.bench_function("to_cty_string/precise", |z| {
        z.iter(|| black_box(&third).to_cty_string())
    });
    c.bench_function("parse/fast", |z| {
        z.iter(|| Number::parse(black_box("123456")))
    });
    c.bench_function("parse/precise", |z| {
        z.iter(|| Number::parse(black_box("12.345e-3")))
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
