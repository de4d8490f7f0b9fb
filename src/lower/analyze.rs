//! `analyze`: every problem a program has, found without a request. The Go
//! implementation discovers many of these only while evaluating (and some never: an
//! unknown name in a resource body only defers that resource); a user's CI should catch
//! them all. `fn-hcl analyze`, `fn-hcl package` and the language server report this list.

use crate::lower::ir::{Composite, CompositeKind, Group, Item, Locals, Program, Sub};
use crate::syntax::diag::Diagnostic;
use crate::syntax::span::SourceMap;

/// All diagnostics of a compiled program, once each, in source order: deferred errors
/// (schema, locals, composite labels) and what lowering found (unknown names, functions,
/// `req` fields, `invoke` arguments, certain type errors as warnings).
pub fn analyze(p: &Program) -> Vec<Diagnostic> {
    let mut out = p.load_warnings.clone();
    group(&p.root, &mut out);
    out.extend(p.analysis.iter().cloned());
    let mut out = dedup(out);
    // Source order (file, then position); diagnostics without a range first.
    out.sort_by_key(|d| d.subject.map(|s| (s.file.0, s.start.byte)));
    out
}

fn dedup(v: Vec<Diagnostic>) -> Vec<Diagnostic> {
    let mut seen = std::collections::HashSet::new();
    v.into_iter()
        .filter(|d| {
            let at = d.subject.map(|s| (s.file.0, s.start.byte, s.end.byte));
            seen.insert((d.summary.clone(), d.detail.clone(), at))
        })
        .collect()
}

fn locals(l: &Locals, out: &mut Vec<Diagnostic>) {
    if let Some(e) = &l.error {
        let mut e = e.clone();
        if let Some(h) = &l.hint {
            e.detail = format!("{}. {h}", e.detail).into();
        }
        out.push(e);
    }
}

fn composite(c: &Composite, out: &mut Vec<Diagnostic>) {
    if let CompositeKind::Invalid(label) = &c.kind {
        out.push(Diagnostic::error(
            format!("invalid composite label: {label}"),
            "A composite block is either `composite status` or `composite connection`.",
            c.label_range,
        ));
    }
    locals(&c.locals, out);
}

fn subs(s: &[Sub], out: &mut Vec<Diagnostic>) {
    for x in s {
        match x {
            Sub::Composite(c) => composite(c, out),
            Sub::Ready(r) => locals(&r.locals, out),
            Sub::Context(c) => locals(&c.locals, out),
            Sub::Assert(_) => {}
            Sub::Fatal(d) => out.extend(d.iter().cloned()),
        }
    }
}

fn group(g: &Group, out: &mut Vec<Diagnostic>) {
    locals(&g.locals, out);
    for item in &g.items {
        match item {
            Item::Group(sub) => group(sub, out),
            Item::Resource(r) => {
                locals(&r.content.locals, out);
                subs(&r.content.subs, out);
            }
            Item::Collection(c) => {
                locals(&c.locals, out);
                locals(&c.template.locals, out);
                subs(&c.template.subs, out);
                subs(&c.subs, out);
            }
            Item::Composite(c) => composite(c, out),
            Item::Context(c) => locals(&c.locals, out),
            Item::Requirement(r) => locals(&r.locals, out),
            Item::Assert(_) => {}
            Item::Fatal(d) => out.extend(d.iter().cloned()),
        }
    }
}

/// Every diagnostic of a program given as files (load errors, or [`analyze`]'s list), with
/// the sources they point into.
pub fn diagnostics(files: &[(String, String)]) -> (Vec<Diagnostic>, std::sync::Arc<SourceMap>) {
    match crate::lower::ir::compile_files(files) {
        Ok(p) => (analyze(&p), p.sources.clone()),
        Err(e) => (e.diags, e.sources),
    }
}
