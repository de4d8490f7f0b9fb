//! Questions about expressions that several stages ask of the syntax tree: hcl's
//! `Variables()` (the root traversals an expression reads), what a traversal step may be,
//! and the value of a literal string.

use crate::syntax::ast::{self, Expr, ExprKind, Template, TemplatePart, UnaryOp};
use crate::syntax::span::Span;

use crate::text::Str;

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
        ExprKind::Template(t) => walk_template(t, bound, out),
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
        _ => children(e, &mut |c| walk_vars(c, bound, out)),
    }
}

/// [`walk_vars`] over a template: a `%{for}` directive's names are bound in its body,
/// also where the directive sits inside an `%{if}`.
fn walk_template<'a>(t: &'a Template, bound: &mut Vec<Str>, out: &mut Vec<&'a Expr>) {
    for p in &t.parts {
        match p {
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
            _ => part_children(p, &mut |c| walk_vars(c, bound, out)),
        }
    }
}

/// Calls `f` on each direct sub-expression of `e`, in source order. A template's
/// sub-expressions are those of its parts (interpolations, directive conditions and
/// collections), nested directives included: templates are not expressions of their own.
pub fn children<'a>(e: &'a Expr, f: &mut dyn FnMut(&'a Expr)) {
    match &e.kind {
        ExprKind::Null
        | ExprKind::Bool(_)
        | ExprKind::Number(_)
        | ExprKind::SplatItem
        | ExprKind::Variable(_) => {}
        ExprKind::Template(t) => t.parts.iter().for_each(|p| part_children(p, f)),
        ExprKind::TemplateWrap(x) | ExprKind::Paren(x) => f(x),
        ExprKind::GetAttr { obj, .. } => f(obj),
        ExprKind::Index { obj, key, .. } => {
            f(obj);
            f(key);
        }
        ExprKind::Splat { source, each, .. } => {
            f(source);
            f(each);
        }
        ExprKind::Call { args, .. } | ExprKind::Tuple(args) => args.iter().for_each(f),
        ExprKind::Object(items) => {
            for it in items {
                if let ast::ObjectKey::Expr(k) = &it.key {
                    f(k);
                }
                f(&it.value);
            }
        }
        ExprKind::Unary { operand, .. } => f(operand),
        ExprKind::Binary { lhs, rhs, .. } => {
            f(lhs);
            f(rhs);
        }
        ExprKind::Conditional {
            cond,
            then,
            otherwise,
        } => {
            f(cond);
            f(then);
            f(otherwise);
        }
        ExprKind::For(fe) => {
            f(&fe.collection);
            if let Some(k) = &fe.key_expr {
                f(k);
            }
            f(&fe.value_expr);
            if let Some(c) = &fe.cond {
                f(c);
            }
        }
    }
}

/// [`children`] of one template part.
fn part_children<'a>(p: &'a TemplatePart, f: &mut dyn FnMut(&'a Expr)) {
    match p {
        TemplatePart::Literal { .. } => {}
        TemplatePart::Interp(e) => f(e),
        TemplatePart::If {
            cond,
            then,
            otherwise,
            ..
        } => {
            f(cond);
            then.parts.iter().for_each(|p| part_children(p, f));
            if let Some(o) = otherwise {
                o.parts.iter().for_each(|p| part_children(p, f));
            }
        }
        TemplatePart::For {
            collection, body, ..
        } => {
            f(collection);
            body.parts.iter().for_each(|p| part_children(p, f));
        }
    }
}

/// Whether `e` is a reference: a root variable followed by attribute and index steps
/// (with any keys). Partial evaluation keeps an unknown reference whole, as written.
pub fn is_reference(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Variable(_) => true,
        ExprKind::GetAttr { obj, .. } | ExprKind::Index { obj, .. } => is_reference(obj),
        _ => false,
    }
}

/// The direct sub-expressions of `e` that partial evaluation may fold on their own, in
/// source order: those evaluated in `e`'s own scope. A reference's are its computed index
/// keys; a `for` expression's only its collection (its other parts read its names), a
/// splat's only its source; a template's its interpolations but not its directives.
/// Literals have none.
pub fn foldable_children<'a>(e: &'a Expr, f: &mut dyn FnMut(&'a Expr)) {
    if is_reference(e) {
        let mut cur = e;
        let mut keys = Vec::new();
        loop {
            match &cur.kind {
                ExprKind::GetAttr { obj, .. } => cur = obj,
                ExprKind::Index { obj, key, .. } => {
                    if !is_literal_key(key) {
                        keys.push(&**key);
                    }
                    cur = obj;
                }
                _ => break,
            }
        }
        keys.into_iter().rev().for_each(f);
        return;
    }
    match &e.kind {
        ExprKind::For(fe) => f(&fe.collection),
        ExprKind::Splat { source, .. } => f(source),
        ExprKind::Template(t) => {
            for p in &t.parts {
                if let TemplatePart::Interp(x) = p {
                    f(x);
                }
            }
        }
        _ => children(e, f),
    }
}

/// Pre-order visit of every expression node of `e`, templates included.
pub fn visit<'a>(e: &'a Expr, f: &mut dyn FnMut(&'a Expr)) {
    f(e);
    children(e, &mut |c| visit(c, f));
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::parser::parse_expression;
    use crate::syntax::span::SourceMap;

    /// The root names of `src`'s free traversals, in source order.
    fn free(src: &str) -> Vec<String> {
        let mut sm = SourceMap::new();
        let f = sm.add("e.hcl", src);
        let e = parse_expression(&sm, f).expect("parses");
        traversals(&e)
            .iter()
            .filter_map(|t| traversal_root(t).map(|id| id.name.to_string()))
            .collect()
    }

    #[test]
    fn template_for_names_are_bound_in_their_body() {
        assert_eq!(free(r#""%{for x in xs}${x}${y}%{endfor}""#), ["xs", "y"]);
        // Found by the structured fuzz target: a `%{for}` inside an `%{if}` (either
        // branch) lost its names, so `${x}` was "reference to non-existent variable".
        assert_eq!(
            free(
                r#""%{if c}%{for x in xs}${x}${y}%{endfor}%{else}%{for k, v in m}${k}${v}%{endfor}%{endif}""#
            ),
            ["c", "xs", "y", "m"]
        );
        assert_eq!(
            free(r#""%{for a in as}%{if a}%{for b in a}${b}${a}${z}%{endfor}%{endif}%{endfor}""#),
            ["as", "z"]
        );
    }
}
