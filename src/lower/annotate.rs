//! A collection member's two annotations, written into its template's body when it is
//! compiled.
//!
//! Every member of a `resources` collection carries [`ANNOTATION_BASE_NAME`] and
//! [`ANNOTATION_INDEX`] in `metadata.annotations`, over whatever the body says there. When
//! the body spells `metadata` (and its `annotations`, if any) out as object constructors
//! with constant keys, which is the usual shape, the two are compiled into that constructor:
//! the base name as a literal, the index read from a frame slot the evaluator fills for
//! each member ([`MEMBER_INDEX`]). The VM then builds the annotations object once, with
//! them, where the evaluator otherwise makes it again with two more entries for every
//! member after the body is evaluated (about 1,200 instructions a member of `heavy-200`).
//! Any other shape keeps the evaluator's way; both make the same body.

use crate::bytecode::compile::const_key;
use crate::syntax::ast::{Expr, ExprKind, Ident, ObjectItem, ObjectKey, Template, TemplatePart};
use crate::syntax::span::Span;
use crate::value::Str;

/// Annotation naming the collection (`resources` block) a composed resource belongs to
/// (read on observed resources, written on desired ones).
pub const ANNOTATION_BASE_NAME: &str = "hcl.fn.crossplane.io/collection-base-name";
/// Annotation holding a collection member's position (`s000000`).
pub const ANNOTATION_INDEX: &str = "hcl.fn.crossplane.io/collection-index";

/// The variable that holds a member's index annotation while its template is evaluated:
/// no program can name it (it is not an identifier), and no suggestion offers it.
pub const MEMBER_INDEX: &str = "\0collection-index";

/// `body` with the two annotations as the last items of its literal
/// `metadata.annotations` (an `annotations` item added to `metadata` if it has none), or
/// `None` when the body is not of that shape (see `target`). Decided before the template is
/// lowered, which then declares [`MEMBER_INDEX`] and compiles this body.
pub fn annotated(body: &Expr, base: &str) -> Option<Expr> {
    let (m, a) = target(body, base)?;
    let mut out = body.clone();
    let ExprKind::Object(items) = &mut out.kind else {
        return None;
    };
    let meta = &mut items.get_mut(m)?.value;
    let span = meta.span;
    let two = [
        ObjectItem {
            key: literal_key(ANNOTATION_BASE_NAME, span),
            value: literal(base, span),
        },
        ObjectItem {
            key: literal_key(ANNOTATION_INDEX, span),
            value: Expr {
                kind: ExprKind::Variable(Ident {
                    name: Str::from(MEMBER_INDEX),
                    span,
                }),
                span,
            },
        },
    ];
    let ExprKind::Object(meta_items) = &mut meta.kind else {
        return None;
    };
    match a {
        Some(a) => match &mut meta_items.get_mut(a)?.value.kind {
            ExprKind::Object(ann) => ann.extend(two),
            _ => return None,
        },
        None => meta_items.push(ObjectItem {
            key: literal_key("annotations", span),
            value: Expr {
                kind: ExprKind::Object(two.into()),
                span,
            },
        }),
    }
    Some(out)
}

/// Where the annotations go: the index of the body's `metadata` item and of its
/// `annotations` item (`None`: it has none). The body, `metadata` and `annotations` must
/// be object constructors whose keys are all constants, each named item there once, and
/// `annotations` must not name either annotation itself (the evaluator's way then decides
/// which value stands, after evaluating both). The base name must be ASCII, so that the
/// literal it becomes is the string the evaluator would write (no normal form to apply).
fn target(body: &Expr, base: &str) -> Option<(usize, Option<usize>)> {
    if !base.is_ascii() {
        return None;
    }
    let ExprKind::Object(items) = &body.kind else {
        return None;
    };
    let m = position(items, "metadata")??;
    let ExprKind::Object(meta) = &items.get(m)?.value.kind else {
        return None;
    };
    let a = position(meta, "annotations")?;
    if let Some(a) = a {
        let ExprKind::Object(ann) = &meta.get(a)?.value.kind else {
            return None;
        };
        for it in ann {
            let k = const_key(&it.key)?;
            if &*k == ANNOTATION_BASE_NAME || &*k == ANNOTATION_INDEX {
                return None;
            }
        }
    }
    Some((m, a))
}

/// The one item of `items` whose key is `key` (`Some(None)`: none); `None` if a key is not
/// a constant or `key` is there twice.
fn position(items: &[ObjectItem], key: &str) -> Option<Option<usize>> {
    let mut at = None;
    for (i, it) in items.iter().enumerate() {
        if &*const_key(&it.key)? == key {
            if at.is_some() {
                return None;
            }
            at = Some(i);
        }
    }
    Some(at)
}

/// A literal string expression.
fn literal(text: &str, span: Span) -> Expr {
    Expr {
        kind: ExprKind::Template(Template {
            parts: vec![TemplatePart::Literal {
                text: Str::from(text),
                span,
            }],
        }),
        span,
    }
}

/// A literal string as an object key.
fn literal_key(text: &str, span: Span) -> ObjectKey {
    ObjectKey::Expr(literal(text, span))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(src: &str) -> Expr {
        let mut sm = crate::syntax::span::SourceMap::new();
        let f = sm.add("t.hcl", src);
        crate::syntax::parser::parse_expression(&sm, f).expect("parses")
    }

    fn keys(e: &Expr) -> Vec<String> {
        match &e.kind {
            ExprKind::Object(items) => items
                .iter()
                .map(|it| {
                    const_key(&it.key)
                        .map(|k| k.to_string())
                        .unwrap_or_default()
                })
                .collect(),
            _ => Vec::new(),
        }
    }

    fn item<'e>(e: &'e Expr, key: &str) -> &'e Expr {
        let ExprKind::Object(items) = &e.kind else {
            panic!("not an object: {e:?}")
        };
        let at = items
            .iter()
            .position(|it| const_key(&it.key).as_deref() == Some(key))
            .unwrap_or_else(|| panic!("no {key}"));
        &items[at].value
    }

    #[test]
    fn written_into_literal_annotations_or_added_to_metadata() {
        let body =
            parse(r#"{ kind = "A", metadata = { name = "n", annotations = { "x/y" = 1 } } }"#);
        let out = annotated(&body, "svc").expect("the usual shape");
        let ann = item(item(&out, "metadata"), "annotations");
        assert_eq!(keys(ann), ["x/y", ANNOTATION_BASE_NAME, ANNOTATION_INDEX]);
        let ExprKind::Variable(v) = &item(ann, ANNOTATION_INDEX).kind else {
            panic!("the index is read from its variable")
        };
        assert_eq!(&*v.name, MEMBER_INDEX);

        let body = parse(r#"{ metadata = { name = "n" } }"#);
        let out = annotated(&body, "svc").expect("metadata without annotations");
        let ann = item(item(&out, "metadata"), "annotations");
        assert_eq!(keys(ann), [ANNOTATION_BASE_NAME, ANNOTATION_INDEX]);
    }

    #[test]
    fn other_shapes_are_left_to_the_evaluator() {
        for body in [
            // Not literal objects all the way down.
            r#"local.body"#,
            r#"{ kind = "A" }"#,
            r#"{ metadata = local.meta }"#,
            r#"{ metadata = { annotations = local.ann } }"#,
            r#"{ metadata = { annotations = null } }"#,
            // A key that is computed, or said twice.
            r#"{ (local.k) = 1, metadata = { name = "n" } }"#,
            r#"{ metadata = { (local.k) = 1 } }"#,
            r#"{ metadata = { annotations = { (local.k) = 1 } } }"#,
            r#"{ metadata = {}, "metadata" = {} }"#,
            r#"{ metadata = { annotations = {}, annotations = {} } }"#,
            // The annotations themselves, given by the program.
            r#"{ metadata = { annotations = { "hcl.fn.crossplane.io/collection-index" = "x" } } }"#,
            r#"{ metadata = { annotations = { "hcl.fn.crossplane.io/collection-base-name" = "x" } } }"#,
        ] {
            assert!(annotated(&parse(body), "svc").is_none(), "{body}");
        }
        assert!(annotated(&parse(r#"{ metadata = {} }"#), "sérvice").is_none());
        assert!(annotated(&parse(r#"{ "metadata" = {} }"#), "svc").is_some());
    }
}
