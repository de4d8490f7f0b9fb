//! The language server's latency: diagnostics of a 2,000-line program after a
//! one-character edit (apply the change, analyze the program as `fn-hcl analyze` does,
//! turn the diagnostics into the protocol's form), and the requests an editor makes on
//! every keystroke (completion, hover, semantic tokens) on the same program.
//!
//! Before criterion runs it applies 1,000 edits and prints the process's resident memory
//! every 100 (it stays flat: each analysis replaces the previous one).
//!
//! `cargo bench --bench lsp`.

use criterion::Criterion;
use fn_hcl::lsp::features;
use fn_hcl::lsp::server::to_lsp_diagnostic;
use fn_hcl::lsp::workspace::{Analysis, ProgramKey, Workspace};
use lsp_types::{Position, Range, TextDocumentContentChangeEvent};
use std::hint::black_box;
use std::time::Duration;

#[path = "workloads/mod.rs"]
#[allow(dead_code)]
mod workloads;

#[global_allocator]
static ALLOC: fn_hcl::cli::bench::CountingAlloc = fn_hcl::cli::bench::CountingAlloc;

const URI: &str = "untitled:bench.hcl";

/// The `fleet` workload's files as one file, grown with more resources to 2,000 lines.
fn program() -> String {
    let files = fn_hcl::syntax::txtar::parse(&workloads::fleet_program()).expect("txtar");
    let mut s: String = files.iter().map(|(_, t)| t.as_str()).collect();
    let mut i = 1000;
    while s.lines().count() < 2000 {
        s.push_str(&format!(
            "resource extra-{i} {{\n  locals {{\n    n = {i}\n  }}\n  body = invoke(\"object\", {{\n    kind   = \"Bucket\"\n    name   = \"${{xrName}}-extra-{i}\"\n    labels = merge(baseTags, {{ n = tostring(n) }})\n    spec   = {{ region = region, size = n * 2 }}\n  }})\n}}\n\n"
        ));
        i += 1;
    }
    s
}

fn one_char(line: u32, character: u32, insert: bool) -> TextDocumentContentChangeEvent {
    let start = Position { line, character };
    let end = Position {
        line,
        character: if insert { character } else { character + 1 },
    };
    TextDocumentContentChangeEvent {
        range: Some(Range { start, end }),
        range_length: None,
        text: if insert { "x".into() } else { String::new() },
    }
}

/// Everything a keystroke costs until the diagnostics are ready to send.
fn edit_and_diagnose(ws: &mut Workspace, key: &ProgramKey, version: i32, line: u32) -> usize {
    ws.change(URI, version, vec![one_char(line, 4, version % 2 == 1)]);
    let a = ws.analysis(key);
    let out: Vec<lsp_types::Diagnostic> = a
        .diagnostics
        .iter()
        .map(|d| to_lsp_diagnostic(d, d.subject.map(|s| a.range(s).1).unwrap_or_default()))
        .collect();
    out.len()
}

fn rss_kib() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    s.lines()
        .find(|l| l.starts_with("VmRSS:"))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

fn main() {
    let text = program();
    let lines = text.lines().count();
    // A line in the middle long enough to type into at column 4.
    let mid = text
        .lines()
        .enumerate()
        .skip(lines / 2)
        .find(|(_, l)| l.len() > 8)
        .map_or(0, |(i, _)| i as u32);
    let mut ws = Workspace::default();
    let key = ws.open(URI, text.clone(), 0);
    let a = ws.analysis(&key);
    assert!(a.program.is_some(), "the program compiles");
    assert!(a.diagnostics.is_empty(), "{:?}", a.diagnostics);
    println!("program: {lines} lines, {} bytes", text.len());

    let mut version = 0;
    // `FN_HCL_LSP_EDITS=N`: only N edits, then exit (for callgrind: instructions per
    // edit are the difference of two runs divided by the difference of N).
    if let Some(n) = std::env::var("FN_HCL_LSP_EDITS")
        .ok()
        .and_then(|v| v.parse::<i32>().ok())
    {
        for _ in 0..n {
            version += 1;
            black_box(edit_and_diagnose(&mut ws, &key, version, mid));
        }
        return;
    }
    // Allocations of one edit (this binary's allocator counts them).
    let (_, allocs, bytes) = fn_hcl::cli::bench::measure(|| {
        let mut n = 0;
        for _ in 0..10 {
            version += 1;
            n += edit_and_diagnose(&mut ws, &key, version, mid);
        }
        n
    });
    println!(
        "per edit: {} allocations, {} KiB allocated",
        allocs / 10,
        bytes / 10 / 1024
    );
    // Memory over 1,000 edits.
    let mut samples = Vec::new();
    for n in 0..=1000 {
        if n % 100 == 0 {
            samples.push((n, rss_kib().unwrap_or(0)));
        }
        version += 1;
        black_box(edit_and_diagnose(&mut ws, &key, version, mid));
    }
    println!("RSS (KiB) after N edits: {samples:?}");

    let mut c = Criterion::default()
        .configure_from_args()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5))
        .sample_size(50);
    c.bench_function("lsp/edit_to_diagnostics_2000_lines", |b| {
        b.iter(|| {
            version += 1;
            black_box(edit_and_diagnose(&mut ws, &key, version, mid))
        })
    });
    let a: std::sync::Arc<Analysis> = ws.analysis(&key);
    let f = a.file_of(URI).expect("file");
    let byte = a.offset(
        f,
        Position {
            line: mid,
            character: 6,
        },
    );
    c.bench_function("lsp/completion_2000_lines", |b| {
        b.iter(|| black_box(features::completion(&a, f, byte).len()))
    });
    c.bench_function("lsp/hover_2000_lines", |b| {
        b.iter(|| black_box(features::hover(&a, f, byte)))
    });
    c.bench_function("lsp/semantic_tokens_2000_lines", |b| {
        b.iter(|| black_box(features::semantic_tokens(&a, f).len()))
    });
    c.final_summary();
}
