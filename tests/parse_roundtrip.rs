//! Property: a generated expression tree, printed as HCL source, parses back to the same
//! tree (ranges aside). The generator only builds trees the printer can express: it
//! inserts `Paren` nodes wherever hcl's precedence or traversal rules would otherwise
//! regroup the printed text, exactly as a human would have to.

mod common;

use common::{parse_expr, print_expr, sexp};
use fn_hcl::syntax::ast::*;
use fn_hcl::syntax::span::Span;
use fn_hcl::text::Str;
use proptest::prelude::*;

fn mk(kind: ExprKind) -> Expr {
    Expr {
        kind,
        span: Span::default(),
    }
}

fn id(name: &str) -> Ident {
    Ident {
        name: Str::from(name),
        span: Span::default(),
    }
}

fn paren(e: Expr) -> Expr {
    mk(ExprKind::Paren(Box::new(e)))
}

/// Can this expression be followed directly by `.x` / `[k]` without changing meaning?
fn traversable(e: &Expr) -> bool {
    matches!(
        e.kind,
        ExprKind::Variable(_)
            | ExprKind::Paren(_)
            | ExprKind::Tuple(_)
            | ExprKind::Object(_)
            | ExprKind::Call { .. }
            | ExprKind::GetAttr { .. }
            | ExprKind::Index { .. }
            | ExprKind::Template(_)
            | ExprKind::TemplateWrap(_)
            | ExprKind::For(_)
    )
}

fn as_obj(e: Expr) -> Expr {
    if traversable(&e) { e } else { paren(e) }
}

fn prec(op: BinaryOp) -> u8 {
    match op {
        BinaryOp::Or => 0,
        BinaryOp::And => 1,
        BinaryOp::Eq | BinaryOp::Ne => 2,
        BinaryOp::Gt | BinaryOp::Ge | BinaryOp::Lt | BinaryOp::Le => 3,
        BinaryOp::Add | BinaryOp::Sub => 4,
        BinaryOp::Mul | BinaryOp::Div | BinaryOp::Mod => 5,
    }
}

fn binary(op: BinaryOp, l: Expr, r: Expr) -> Expr {
    let l = match &l.kind {
        ExprKind::Binary { op: lop, .. } if prec(*lop) < prec(op) => paren(l),
        ExprKind::Conditional { .. } => paren(l),
        _ => l,
    };
    let r = match &r.kind {
        ExprKind::Binary { op: rop, .. } if prec(*rop) <= prec(op) => paren(r),
        ExprKind::Conditional { .. } => paren(r),
        _ => r,
    };
    mk(ExprKind::Binary {
        op,
        lhs: Box::new(l),
        rhs: Box::new(r),
    })
}

fn unary(op: UnaryOp, e: Expr) -> Expr {
    let e = match e.kind {
        ExprKind::Binary { .. } | ExprKind::Conditional { .. } => paren(e),
        _ => e,
    };
    mk(ExprKind::Unary {
        op,
        operand: Box::new(e),
    })
}

fn cond(c: Expr, t: Expr, f: Expr) -> Expr {
    let c = if matches!(c.kind, ExprKind::Conditional { .. }) {
        paren(c)
    } else {
        c
    };
    mk(ExprKind::Conditional {
        cond: Box::new(c),
        then: Box::new(t),
        otherwise: Box::new(f),
    })
}

fn obj_key(k: Expr) -> Expr {
    match k.kind {
        ExprKind::Variable(_) | ExprKind::Null | ExprKind::Bool(_) => paren(k),
        _ => k,
    }
}

const NAMES: &[&str] = &["a", "b", "foo", "bar_baz", "x-y", "req"];
const ATTRS: &[&str] = &["a", "name", "spec", "x-y"];
const NUMBERS: &[&str] = &["0", "1", "42", "3.14", "1e3", "2.5e-2"];
const CHUNKS: &[&str] = &[
    "a", "b c", "é", "\"", "\\", "\n", "\t", "{", "}", ":", "${", "%{", "$x", "%y", " ",
];

fn leaf() -> impl Strategy<Value = Expr> {
    prop_oneof![
        Just(mk(ExprKind::Null)),
        any::<bool>().prop_map(|b| mk(ExprKind::Bool(b))),
        prop::sample::select(NUMBERS).prop_map(|n| mk(ExprKind::Number(Str::from(n)))),
        prop::sample::select(NAMES).prop_map(|n| mk(ExprKind::Variable(id(n)))),
        literal_text().prop_map(|t| mk(ExprKind::Template(Template {
            parts: vec![TemplatePart::Literal {
                text: Str::from(t),
                span: Span::default(),
            }],
        }))),
    ]
}

fn literal_text() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(CHUNKS), 1..4).prop_map(|v| v.concat())
}

/// Template parts with no two literals in a row and no empty literal.
fn template_parts(inner: BoxedStrategy<Expr>, depth: u32) -> BoxedStrategy<Vec<TemplatePart>> {
    let lit = literal_text().prop_map(|t| TemplatePart::Literal {
        text: Str::from(t),
        span: Span::default(),
    });
    let interp = inner.clone().prop_map(TemplatePart::Interp);
    let part = if depth == 0 {
        prop_oneof![3 => lit, 3 => interp].boxed()
    } else {
        let nested = template_parts(inner.clone(), depth - 1);
        let iff = (
            inner.clone(),
            nested.clone(),
            prop::option::of(nested.clone()),
        )
            .prop_map(|(c, t, o)| TemplatePart::If {
                cond: c,
                then: Template { parts: t },
                otherwise: o.map(|parts| Template { parts }),
                span: Span::default(),
            });
        let forr = (
            prop::option::of(prop::sample::select(NAMES)),
            prop::sample::select(NAMES),
            inner.clone(),
            nested,
        )
            .prop_map(|(k, v, c, b)| TemplatePart::For {
                key_var: k.map(id),
                value_var: id(v),
                collection: c,
                body: Template { parts: b },
                span: Span::default(),
            });
        prop_oneof![3 => lit, 3 => interp, 1 => iff, 1 => forr].boxed()
    };
    prop::collection::vec(part, 0..4)
        .prop_map(|parts| {
            let mut out: Vec<TemplatePart> = Vec::new();
            for p in parts {
                let lit_after_lit = matches!(p, TemplatePart::Literal { .. })
                    && matches!(out.last(), Some(TemplatePart::Literal { .. }));
                if !lit_after_lit {
                    out.push(p);
                }
            }
            out
        })
        .boxed()
}

#[derive(Clone, Debug)]
enum Step {
    Attr(&'static str),
    Legacy(&'static str),
    Index(Expr),
}

fn apply(e: Expr, step: Step) -> Expr {
    // `x.0.1` would lex as `x` `.` `0.1`: hcl rejects chained legacy indexes.
    let step = match (&e.kind, step) {
        (ExprKind::Index { legacy: true, .. }, Step::Legacy(_)) => Step::Attr("a"),
        (_, s) => s,
    };
    match step {
        Step::Attr(n) => mk(ExprKind::GetAttr {
            obj: Box::new(e),
            name: id(n),
        }),
        Step::Legacy(n) => mk(ExprKind::Index {
            obj: Box::new(e),
            key: Box::new(mk(ExprKind::Number(Str::from(n)))),
            legacy: true,
        }),
        Step::Index(k) => mk(ExprKind::Index {
            obj: Box::new(e),
            key: Box::new(k),
            legacy: false,
        }),
    }
}

fn expr() -> impl Strategy<Value = Expr> {
    leaf().prop_recursive(3, 24, 4, |inner| {
        let ops = prop::sample::select(BinaryOp::ALL.to_vec());
        let step = prop_oneof![
            prop::sample::select(ATTRS).prop_map(Step::Attr),
            prop::sample::select(&["0", "1", "7"][..]).prop_map(Step::Legacy),
            inner.clone().prop_map(Step::Index),
        ];
        let attr_step = prop_oneof![
            prop::sample::select(ATTRS).prop_map(Step::Attr),
            prop::sample::select(&["0", "3"][..]).prop_map(Step::Legacy),
        ];
        prop_oneof![
            (ops, inner.clone(), inner.clone()).prop_map(|(op, l, r)| binary(op, l, r)),
            (any::<bool>(), inner.clone())
                .prop_map(|(neg, e)| unary(if neg { UnaryOp::Neg } else { UnaryOp::Not }, e)),
            (inner.clone(), inner.clone(), inner.clone()).prop_map(|(c, t, f)| cond(c, t, f)),
            (inner.clone(), step.clone()).prop_map(|(e, s)| apply(as_obj(e), s)),
            (
                inner.clone(),
                any::<bool>(),
                prop::collection::vec(step, 0..3),
                prop::collection::vec(attr_step, 0..3)
            )
                .prop_map(|(src, full, fsteps, asteps)| {
                    let mut each = mk(ExprKind::SplatItem);
                    for s in if full { fsteps } else { asteps } {
                        each = apply(each, s);
                    }
                    mk(ExprKind::Splat {
                        source: Box::new(as_obj(src)),
                        each: Box::new(each),
                        full,
                    })
                }),
            (
                prop::sample::select(&["f", "upper", "ns::g"][..]),
                prop::collection::vec(inner.clone(), 0..3),
                any::<bool>()
            )
                .prop_map(|(n, args, expand)| {
                    let expand_final = expand && !args.is_empty();
                    mk(ExprKind::Call {
                        name: id(n),
                        args,
                        expand_final,
                        open_paren: Span::default(),
                        close_paren: Span::default(),
                    })
                }),
            prop::collection::vec(inner.clone(), 0..3).prop_map(|v| mk(ExprKind::Tuple(v))),
            prop::collection::vec(
                (
                    prop_oneof![
                        prop::sample::select(NAMES).prop_map(|n| ObjectKey::Ident(id(n))),
                        inner.clone().prop_map(|k| ObjectKey::Expr(obj_key(k))),
                    ],
                    inner.clone()
                ),
                0..3
            )
            .prop_map(|items| mk(ExprKind::Object(
                items
                    .into_iter()
                    .map(|(key, value)| ObjectItem { key, value })
                    .collect()
            ))),
            (
                prop::option::of(prop::sample::select(NAMES)),
                prop::sample::select(NAMES),
                inner.clone(),
                prop::option::of(inner.clone()),
                inner.clone(),
                prop::option::of(inner.clone()),
                any::<bool>()
            )
                .prop_map(|(k, v, coll, key_expr, value_expr, c, group)| {
                    let group = group && key_expr.is_some();
                    mk(ExprKind::For(Box::new(ForExpr {
                        key_var: k.map(id),
                        value_var: id(v),
                        collection: coll,
                        key_expr,
                        value_expr,
                        cond: c,
                        group,
                    })))
                }),
            inner.clone().prop_map(paren),
            inner
                .clone()
                .prop_map(|e| mk(ExprKind::TemplateWrap(Box::new(e)))),
            template_parts(inner.clone().boxed(), 1).prop_map(|parts| {
                // A lone interpolation is a TemplateWrap, and "" is one empty literal.
                let parts = match parts.as_slice() {
                    [] => vec![TemplatePart::Literal {
                        text: Str::from(""),
                        span: Span::default(),
                    }],
                    [TemplatePart::Interp(_)] => {
                        let mut p = parts;
                        p.push(TemplatePart::Literal {
                            text: Str::from("!"),
                            span: Span::default(),
                        });
                        p
                    }
                    _ => parts,
                };
                mk(ExprKind::Template(Template { parts }))
            }),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 96,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn printed_expressions_parse_back(e in expr()) {
        let src = print_expr(&e);
        let parsed = parse_expr(&src).map_err(|err| TestCaseError::fail(format!("{src}: {err}")))?;
        prop_assert_eq!(sexp(&parsed, false), sexp(&e, false), "source: {}", src);
    }
}
