//! Shared helpers for the parser tests: a compact S-expression dump of the AST (with or
//! without ranges) and a printer from AST back to HCL source.
#![allow(dead_code)]

use fn_hcl::syntax::ast::*;
use fn_hcl::syntax::diag::{Diagnostic, plain_all};
use fn_hcl::syntax::parser::{parse_expression, parse_file};
use fn_hcl::syntax::span::{SourceMap, Span};
use std::fmt::Write;

pub mod dir;
pub mod k8s;
mod shared;
#[allow(unused_imports)]
pub use shared::{CASE_DATA, hcl_blocks, hcl_corpus, missing, shared_dir, walk};

/// The start of a `locals` block (left open) from `l0 = 1` to `l{n}`, each `per` brackets
/// around the one before: `l{n}` nests `n * per` levels deep, for a few instructions a
/// level (hostile-input tests of values and types nested deep).
pub fn nested_locals(n: usize, per: usize) -> String {
    let mut s = String::from("locals {\n  l0 = 1\n");
    for i in 1..=n {
        let (open, close) = ("[".repeat(per), "]".repeat(per));
        s.push_str(&format!("  l{i} = {open}l{}{close}\n", i - 1));
    }
    s
}

pub fn rng(s: Span) -> String {
    if s.start.line == s.end.line {
        format!("{},{}-{}", s.start.line, s.start.col, s.end.col)
    } else {
        format!(
            "{},{}-{},{}",
            s.start.line, s.start.col, s.end.line, s.end.col
        )
    }
}

/// Dumps an expression; `spans` adds `@range` to every node.
pub fn sexp(e: &Expr, spans: bool) -> String {
    let mut s = String::new();
    expr(&mut s, e, spans);
    s
}

fn at(out: &mut String, sp: Span, spans: bool) {
    if spans {
        let _ = write!(out, "@{}", rng(sp));
    }
}

fn ident(out: &mut String, i: &Ident, spans: bool) {
    out.push_str(&i.name);
    at(out, i.span, spans);
}

fn expr(out: &mut String, e: &Expr, spans: bool) {
    match &e.kind {
        ExprKind::Null => out.push_str("null"),
        ExprKind::Bool(b) => {
            let _ = write!(out, "{b}");
        }
        ExprKind::Number(n) => {
            let _ = write!(out, "num({n})");
        }
        ExprKind::Variable(i) => {
            let _ = write!(out, "var({})", i.name);
        }
        ExprKind::SplatItem => out.push_str("item"),
        ExprKind::GetAttr { obj, name } => {
            out.push_str("(. ");
            expr(out, obj, spans);
            out.push(' ');
            ident(out, name, spans);
            out.push(')');
        }
        ExprKind::Index { obj, key, legacy } => {
            out.push_str(if *legacy { "([.] " } else { "([] " });
            expr(out, obj, spans);
            out.push(' ');
            expr(out, key, spans);
            out.push(')');
        }
        ExprKind::Splat { source, each, full } => {
            out.push_str(if *full { "(splat[*] " } else { "(splat.* " });
            expr(out, source, spans);
            out.push(' ');
            expr(out, each, spans);
            out.push(')');
        }
        ExprKind::Call {
            name,
            args,
            expand_final,
            open_paren,
            close_paren,
        } => {
            out.push_str("(call ");
            ident(out, name, spans);
            if spans {
                let _ = write!(out, " ({} {})", rng(*open_paren), rng(*close_paren));
            }
            for a in args {
                out.push(' ');
                expr(out, a, spans);
            }
            if *expand_final {
                out.push_str(" ...");
            }
            out.push(')');
        }
        ExprKind::Tuple(items) => {
            out.push_str("(tuple");
            for a in items {
                out.push(' ');
                expr(out, a, spans);
            }
            out.push(')');
        }
        ExprKind::Object(items) => {
            out.push_str("(object");
            for it in items {
                out.push_str(" (");
                match &it.key {
                    ObjectKey::Ident(i) => {
                        out.push_str("k:");
                        ident(out, i, spans);
                    }
                    ObjectKey::Expr(k) => expr(out, k, spans),
                }
                out.push_str(" = ");
                expr(out, &it.value, spans);
                out.push(')');
            }
            out.push(')');
        }
        ExprKind::Unary { op, operand } => {
            out.push_str(match op {
                UnaryOp::Neg => "(neg ",
                UnaryOp::Not => "(not ",
            });
            expr(out, operand, spans);
            out.push(')');
        }
        ExprKind::Binary { op, lhs, rhs } => {
            let _ = write!(out, "({} ", op.symbol());
            expr(out, lhs, spans);
            out.push(' ');
            expr(out, rhs, spans);
            out.push(')');
        }
        ExprKind::Conditional {
            cond,
            then,
            otherwise,
        } => {
            out.push_str("(? ");
            expr(out, cond, spans);
            out.push(' ');
            expr(out, then, spans);
            out.push(' ');
            expr(out, otherwise, spans);
            out.push(')');
        }
        ExprKind::For(f) => {
            out.push_str("(for ");
            if let Some(k) = &f.key_var {
                ident(out, k, spans);
                out.push_str(", ");
            }
            ident(out, &f.value_var, spans);
            out.push_str(" in ");
            expr(out, &f.collection, spans);
            out.push_str(" : ");
            if let Some(k) = &f.key_expr {
                expr(out, k, spans);
                out.push_str(" => ");
            }
            expr(out, &f.value_expr, spans);
            if f.group {
                out.push_str("...");
            }
            if let Some(c) = &f.cond {
                out.push_str(" if ");
                expr(out, c, spans);
            }
            out.push(')');
        }
        ExprKind::Paren(x) => {
            out.push_str("(paren ");
            expr(out, x, spans);
            out.push(')');
        }
        ExprKind::TemplateWrap(x) => {
            out.push_str("(wrap ");
            expr(out, x, spans);
            out.push(')');
        }
        ExprKind::Template(t) => {
            out.push_str("(tmpl");
            template(out, t, spans);
            out.push(')');
        }
    }
    at(out, e.span, spans);
}

fn template(out: &mut String, t: &Template, spans: bool) {
    for p in &t.parts {
        out.push(' ');
        match p {
            TemplatePart::Literal { text, span } => {
                let _ = write!(out, "{text:?}");
                at(out, *span, spans);
            }
            TemplatePart::Interp(x) => {
                out.push_str("${");
                expr(out, x, spans);
                out.push('}');
            }
            TemplatePart::If {
                cond,
                then,
                otherwise,
                span,
            } => {
                out.push_str("(%if ");
                expr(out, cond, spans);
                out.push_str(" (then");
                template(out, then, spans);
                out.push(')');
                if let Some(o) = otherwise {
                    out.push_str(" (else");
                    template(out, o, spans);
                    out.push(')');
                }
                out.push(')');
                at(out, *span, spans);
            }
            TemplatePart::For {
                key_var,
                value_var,
                collection,
                body,
                span,
            } => {
                out.push_str("(%for ");
                if let Some(k) = key_var {
                    ident(out, k, spans);
                    out.push_str(", ");
                }
                ident(out, value_var, spans);
                out.push_str(" in ");
                expr(out, collection, spans);
                out.push_str(" (body");
                template(out, body, spans);
                out.push_str("))");
                at(out, *span, spans);
            }
        }
    }
}

/// Dumps a body, one item per line, nested blocks indented.
pub fn body_sexp(b: &Body, spans: bool) -> String {
    let mut out = String::new();
    body(&mut out, b, spans, 0);
    out
}

fn body(out: &mut String, b: &Body, spans: bool, indent: usize) {
    for item in &b.items {
        out.push_str(&"  ".repeat(indent));
        match item {
            BodyItem::Attribute(a) => {
                ident(out, &a.name, spans);
                out.push_str(" = ");
                out.push_str(&sexp(&a.expr, spans));
                if spans {
                    let _ = write!(out, " [attr {} eq {}]", rng(a.span), rng(a.equals));
                }
                out.push('\n');
            }
            BodyItem::Block(bl) => {
                ident(out, &bl.kind, spans);
                for l in &bl.labels {
                    if l.quoted {
                        let _ = write!(out, " {:?}", &*l.value);
                    } else {
                        let _ = write!(out, " {}", l.value);
                    }
                    at(out, l.span, spans);
                }
                out.push_str(" {");
                if spans {
                    let _ = write!(
                        out,
                        " [block {} open {} close {} body {}]",
                        rng(bl.span),
                        rng(bl.open_brace),
                        rng(bl.close_brace),
                        rng(bl.body.span)
                    );
                }
                out.push('\n');
                body(out, &bl.body, spans, indent + 1);
                out.push_str(&"  ".repeat(indent));
                out.push_str("}\n");
            }
        }
    }
}

pub fn parse(src: &str) -> Result<File, String> {
    let mut sm = SourceMap::new();
    let f = sm.add("main.hcl", src);
    parse_file(&sm, f).map_err(|d| plain_all(&d, &sm))
}

pub fn parse_diags(src: &str) -> (SourceMap, Result<File, Vec<Diagnostic>>) {
    let mut sm = SourceMap::new();
    let f = sm.add("main.hcl", src);
    let r = parse_file(&sm, f);
    (sm, r)
}

pub fn parse_expr(src: &str) -> Result<Expr, String> {
    let mut sm = SourceMap::new();
    let f = sm.add("expr.hcl", src);
    parse_expression(&sm, f).map_err(|d| plain_all(&d, &sm))
}

/// Prints an expression back to HCL source (single line; parentheses only where the
/// tree has `Paren` nodes).
pub fn print_expr(e: &Expr) -> String {
    let mut s = String::new();
    pr(&mut s, e);
    s
}

fn pr(out: &mut String, e: &Expr) {
    match &e.kind {
        ExprKind::Null => out.push_str("null"),
        ExprKind::Bool(b) => {
            let _ = write!(out, "{b}");
        }
        ExprKind::Number(n) => out.push_str(n),
        ExprKind::Variable(i) => out.push_str(&i.name),
        ExprKind::SplatItem => {}
        ExprKind::GetAttr { obj, name } => {
            pr(out, obj);
            out.push('.');
            out.push_str(&name.name);
        }
        ExprKind::Index { obj, key, legacy } => {
            pr(out, obj);
            if *legacy {
                out.push('.');
                pr(out, key);
            } else {
                out.push('[');
                pr(out, key);
                out.push(']');
            }
        }
        ExprKind::Splat { source, each, full } => {
            pr(out, source);
            out.push_str(if *full { "[*]" } else { ".*" });
            pr(out, each);
        }
        ExprKind::Call {
            name,
            args,
            expand_final,
            ..
        } => {
            out.push_str(&name.name);
            out.push('(');
            for (i, a) in args.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                pr(out, a);
            }
            if *expand_final {
                out.push_str("...");
            }
            out.push(')');
        }
        ExprKind::Tuple(items) => {
            out.push('[');
            for (i, a) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                pr(out, a);
            }
            out.push(']');
        }
        ExprKind::Object(items) => {
            out.push('{');
            for (i, it) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                match &it.key {
                    ObjectKey::Ident(k) => out.push_str(&k.name),
                    ObjectKey::Expr(k) => pr(out, k),
                }
                out.push_str(" = ");
                pr(out, &it.value);
            }
            out.push('}');
        }
        ExprKind::Unary { op, operand } => {
            out.push(match op {
                UnaryOp::Neg => '-',
                UnaryOp::Not => '!',
            });
            pr(out, operand);
        }
        ExprKind::Binary { op, lhs, rhs } => {
            pr(out, lhs);
            let _ = write!(out, " {} ", op.symbol());
            pr(out, rhs);
        }
        ExprKind::Conditional {
            cond,
            then,
            otherwise,
        } => {
            pr(out, cond);
            out.push_str(" ? ");
            pr(out, then);
            out.push_str(" : ");
            pr(out, otherwise);
        }
        ExprKind::For(f) => {
            out.push(if f.key_expr.is_some() { '{' } else { '[' });
            out.push_str("for ");
            if let Some(k) = &f.key_var {
                out.push_str(&k.name);
                out.push_str(", ");
            }
            out.push_str(&f.value_var.name);
            out.push_str(" in ");
            pr(out, &f.collection);
            out.push_str(" : ");
            if let Some(k) = &f.key_expr {
                pr(out, k);
                out.push_str(" => ");
            }
            pr(out, &f.value_expr);
            if f.group {
                out.push_str("...");
            }
            if let Some(c) = &f.cond {
                out.push_str(" if ");
                pr(out, c);
            }
            out.push(if f.key_expr.is_some() { '}' } else { ']' });
        }
        ExprKind::Paren(x) => {
            out.push('(');
            pr(out, x);
            out.push(')');
        }
        ExprKind::TemplateWrap(x) => {
            out.push_str("\"${");
            pr(out, x);
            out.push_str("}\"");
        }
        ExprKind::Template(t) => {
            out.push('"');
            pr_template(out, t);
            out.push('"');
        }
    }
}

fn pr_template(out: &mut String, t: &Template) {
    for p in &t.parts {
        match p {
            TemplatePart::Literal { text, .. } => {
                let mut chars = text.chars().peekable();
                while let Some(c) = chars.next() {
                    match c {
                        '"' => out.push_str("\\\""),
                        '\\' => out.push_str("\\\\"),
                        '\n' => out.push_str("\\n"),
                        '\t' => out.push_str("\\t"),
                        '$' | '%' if chars.peek() == Some(&'{') => {
                            out.push(c);
                            out.push(c);
                        }
                        c => out.push(c),
                    }
                }
            }
            TemplatePart::Interp(x) => {
                out.push_str("${");
                pr(out, x);
                out.push('}');
            }
            TemplatePart::If {
                cond,
                then,
                otherwise,
                ..
            } => {
                out.push_str("%{if ");
                pr(out, cond);
                out.push('}');
                pr_template(out, then);
                if let Some(o) = otherwise {
                    out.push_str("%{else}");
                    pr_template(out, o);
                }
                out.push_str("%{endif}");
            }
            TemplatePart::For {
                key_var,
                value_var,
                collection,
                body,
                ..
            } => {
                out.push_str("%{for ");
                if let Some(k) = key_var {
                    out.push_str(&k.name);
                    out.push_str(", ");
                }
                out.push_str(&value_var.name);
                out.push_str(" in ");
                pr(out, collection);
                out.push('}');
                pr_template(out, body);
                out.push_str("%{endfor}");
            }
        }
    }
}
pub mod expr;
