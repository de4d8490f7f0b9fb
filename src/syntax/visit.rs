//! Questions about expressions that several stages ask of the syntax tree: hcl's
//! `Variables()` (the root traversals an expression reads), what a traversal step may be,
//! and the value of a literal string.

use crate::syntax::ast::{self, Expr, ExprKind, Template, TemplatePart, UnaryOp};
use crate::syntax::span::Span;
use std::sync::Arc;

type Str = Arc<str>;

/// One root traversal of an expression (hcl `Variables()`): its root name and ranges.
#[derive(Clone, Debug)]
pub struct VarRef {
    pub name: Str,
    pub root: Span,
    pub traversal: Span,
}

/// hcl's `Variables()`: root traversals in source order, without the names a `for`
/// expression declares for its own body.
pub fn variables(e: &Expr) -> Vec<VarRef> {
    traversals(e)
        .into_iter()
        .filter_map(|t| {
            traversal_root(t).map(|root| VarRef {
                name: root.name.clone(),
                root: root.span,
                traversal: t.span,
            })
        })
        .collect()
}

/// The root traversal expressions of hcl's `Variables()` (each a variable with its chain
/// of attribute and literal-index steps), in source order; the compiler compiles each on
/// its own to explain incomplete blocks.
pub fn traversals(e: &Expr) -> Vec<&Expr> {
    let mut out = Vec::new();
    let mut bound: Vec<Str> = Vec::new();
    walk_vars(e, &mut bound, &mut out);
    out
}

/// The traversal an expression starts with, if it is a variable traversal: hcl folds
/// `a.b[0]["c"]` into one `ScopeTraversalExpr`; index keys must be literals.
fn traversal_root(e: &Expr) -> Option<&ast::Ident> {
    match &e.kind {
        ExprKind::Variable(id) => Some(id),
        ExprKind::GetAttr { obj, .. } => traversal_root(obj),
        ExprKind::Index { obj, key, .. } if is_literal_key(key) => traversal_root(obj),
        _ => None,
    }
}

fn walk_vars<'a>(e: &'a Expr, bound: &mut Vec<Str>, out: &mut Vec<&'a Expr>) {
    if let Some(root) = traversal_root(e) {
        if !bound.iter().any(|b| **b == *root.name) {
            out.push(e);
        }
        return;
    }
    match &e.kind {
        ExprKind::Null
        | ExprKind::Bool(_)
        | ExprKind::Number(_)
        | ExprKind::SplatItem
        | ExprKind::Variable(_) => {}
        ExprKind::Template(t) => walk_template(t, bound, out),
        ExprKind::TemplateWrap(x) | ExprKind::Paren(x) => walk_vars(x, bound, out),
        ExprKind::GetAttr { obj, .. } => walk_vars(obj, bound, out),
        ExprKind::Index { obj, key, .. } => {
            walk_vars(obj, bound, out);
            walk_vars(key, bound, out);
        }
        ExprKind::Splat { source, each, .. } => {
            walk_vars(source, bound, out);
            walk_vars(each, bound, out);
        }
        ExprKind::Call { args, .. } => args.iter().for_each(|a| walk_vars(a, bound, out)),
        ExprKind::Tuple(items) => items.iter().for_each(|a| walk_vars(a, bound, out)),
        ExprKind::Object(items) => {
            for it in items {
                if let ast::ObjectKey::Expr(k) = &it.key {
                    walk_vars(k, bound, out);
                }
                walk_vars(&it.value, bound, out);
            }
        }
        ExprKind::Unary { operand, .. } => walk_vars(operand, bound, out),
        ExprKind::Binary { lhs, rhs, .. } => {
            walk_vars(lhs, bound, out);
            walk_vars(rhs, bound, out);
        }
        ExprKind::Conditional {
            cond,
            then,
            otherwise,
        } => {
            walk_vars(cond, bound, out);
            walk_vars(then, bound, out);
            walk_vars(otherwise, bound, out);
        }
        ExprKind::For(f) => {
            walk_vars(&f.collection, bound, out);
            let n = bound.len();
            if let Some(k) = &f.key_var {
                bound.push(k.name.clone());
            }
            bound.push(f.value_var.name.clone());
            if let Some(k) = &f.key_expr {
                walk_vars(k, bound, out);
            }
            walk_vars(&f.value_expr, bound, out);
            if let Some(c) = &f.cond {
                walk_vars(c, bound, out);
            }
            bound.truncate(n);
        }
    }
}

fn walk_template<'a>(t: &'a ast::Template, bound: &mut Vec<Str>, out: &mut Vec<&'a Expr>) {
    for p in &t.parts {
        match p {
            TemplatePart::Literal { .. } => {}
            TemplatePart::Interp(e) => walk_vars(e, bound, out),
            TemplatePart::If {
                cond,
                then,
                otherwise,
                ..
            } => {
                walk_vars(cond, bound, out);
                walk_template(then, bound, out);
                if let Some(o) = otherwise {
                    walk_template(o, bound, out);
                }
            }
            TemplatePart::For {
                key_var,
                value_var,
                collection,
                body,
                ..
            } => {
                walk_vars(collection, bound, out);
                let n = bound.len();
                if let Some(k) = key_var {
                    bound.push(k.name.clone());
                }
                bound.push(value_var.name.clone());
                walk_template(body, bound, out);
                bound.truncate(n);
            }
        }
    }
}

/// The text of a template made only of literal parts.
pub fn literal_template(t: &Template) -> Option<String> {
    let mut s = String::new();
    for p in &t.parts {
        match p {
            TemplatePart::Literal { text, .. } => s.push_str(text),
            _ => return None,
        }
    }
    Some(s)
}

/// A key hcl's parser would make a traversal step: a literal value or a literal string.
pub fn is_literal_key(key: &Expr) -> bool {
    match &key.kind {
        ExprKind::Null | ExprKind::Bool(_) | ExprKind::Number(_) => true,
        ExprKind::Template(t) => literal_template(t).is_some(),
        ExprKind::Unary {
            op: UnaryOp::Neg,
            operand,
        } => matches!(operand.kind, ExprKind::Number(_)),
        _ => false,
    }
}

/// The value of a static string expression (the first argument of `invoke`).
pub fn static_string(e: &Expr) -> Option<Str> {
    match &e.kind {
        ExprKind::Template(t) => literal_template(t).map(Str::from),
        ExprKind::TemplateWrap(inner) | ExprKind::Paren(inner) => static_string(inner),
        _ => None,
    }
}
