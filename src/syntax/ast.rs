//! The syntax tree of hcl's native syntax, as the parser produces it. It mirrors
//! hashicorp/hcl's `hclsyntax` node kinds so that later stages can reproduce hcl's
//! evaluation results and error ranges. Every node carries its [`Span`].

use crate::syntax::span::Span;
use crate::text::Str;

/// One parsed file.
#[derive(Clone, Debug, PartialEq)]
pub struct File {
    pub body: Body,
}

/// A sequence of attributes and blocks, in source order.
#[derive(Clone, Debug, PartialEq)]
pub struct Body {
    pub items: Vec<BodyItem>,
    /// From the first byte of the body's content to its end (for a file, the whole file).
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum BodyItem {
    Attribute(Attribute),
    Block(Block),
}

/// `name = expr`.
#[derive(Clone, Debug, PartialEq)]
pub struct Attribute {
    pub name: Ident,
    pub expr: Expr,
    /// The `=` sign.
    pub equals: Span,
    /// From the name to the end of the expression.
    pub span: Span,
}

/// `type label* { body }`.
#[derive(Clone, Debug, PartialEq)]
pub struct Block {
    pub kind: Ident,
    pub labels: Vec<Label>,
    pub body: Body,
    pub open_brace: Span,
    pub close_brace: Span,
    /// From the type name to the closing brace.
    pub span: Span,
}

/// A block label: an identifier or a quoted string (without escapes or templates).
#[derive(Clone, Debug, PartialEq)]
pub struct Label {
    pub value: Str,
    pub quoted: bool,
    pub span: Span,
}

/// An identifier (may contain dashes, like hcl's).
#[derive(Clone, Debug, PartialEq)]
pub struct Ident {
    pub name: Str,
    pub span: Span,
}

/// An expression with its source range.
#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    /// `null`, `true`, `false`.
    Null,
    Bool(bool),
    /// A number literal, kept as its source text (parsed exactly later).
    Number(Str),
    /// A quoted string or heredoc with more than a lone interpolation.
    Template(Template),
    /// A quoted string or heredoc that is exactly one interpolation (`"${x}"`):
    /// hcl's `TemplateWrapExpr`, which yields the value unconverted.
    TemplateWrap(Box<Expr>),
    /// A root variable reference, e.g. `req`, `self`, `foo`.
    Variable(Ident),
    /// `obj.name`
    GetAttr {
        obj: Box<Expr>,
        name: Ident,
    },
    /// `obj[key]`, or the legacy `obj.0` form (`legacy` = true; the key is a number literal).
    Index {
        obj: Box<Expr>,
        key: Box<Expr>,
        legacy: bool,
    },
    /// `source.*.each` (attribute-only splat, `full` = false) or `source[*].each` (full splat).
    /// `each` is evaluated once per element with [`ExprKind::SplatItem`] standing for it.
    Splat {
        source: Box<Expr>,
        each: Box<Expr>,
        full: bool,
    },
    /// The element in the `each` part of a splat (hcl's `AnonSymbolExpr`).
    SplatItem,
    /// `name(args...)`, `expand_final` when the last argument is followed by `...`.
    Call {
        name: Ident,
        args: Vec<Expr>,
        expand_final: bool,
        /// The parentheses, for hcl's "Not enough function arguments" ranges.
        open_paren: Span,
        close_paren: Span,
    },
    /// `[a, b, ...]`
    Tuple(Vec<Expr>),
    /// `{ k = v, ... }`
    Object(Vec<ObjectItem>),
    Unary {
        op: UnaryOp,
        operand: Box<Expr>,
    },
    Binary {
        op: BinaryOp,
        lhs: Box<Expr>,
        rhs: Box<Expr>,
    },
    Conditional {
        cond: Box<Expr>,
        then: Box<Expr>,
        otherwise: Box<Expr>,
    },
    /// `[for k, v in coll : expr if cond]` and `{for k, v in coll : key => value... if cond}`.
    For(Box<ForExpr>),
    /// `( expr )`: kept so ranges and object-key rules match hcl.
    Paren(Box<Expr>),
}

#[derive(Clone, Debug, PartialEq)]
pub struct ForExpr {
    pub key_var: Option<Ident>,
    pub value_var: Ident,
    pub collection: Expr,
    /// Present for the object form (`{for ...: key => value}`).
    pub key_expr: Option<Expr>,
    pub value_expr: Expr,
    pub cond: Option<Expr>,
    /// `...` after the value: group values with the same key into tuples.
    pub group: bool,
}

/// One `key = value` (or `key: value`) in an object constructor.
#[derive(Clone, Debug, PartialEq)]
pub struct ObjectItem {
    pub key: ObjectKey,
    pub value: Expr,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ObjectKey {
    /// A bare identifier: the key is its name as a literal string (hcl's keyword rule).
    Ident(Ident),
    /// Any other expression (template, number, parenthesized expression, ...), evaluated and
    /// converted to a string.
    Expr(Expr),
}

impl ObjectKey {
    pub fn span(&self) -> Span {
        match self {
            ObjectKey::Ident(i) => i.span,
            ObjectKey::Expr(e) => e.span,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnaryOp {
    Neg,
    Not,
}

/// Binary operators. Precedence (highest first), all left-associative as in hcl:
/// `* / %`, `+ -`, `> >= < <=`, `== !=`, `&&`, `||`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinaryOp {
    Mul,
    Div,
    Mod,
    Add,
    Sub,
    Gt,
    Ge,
    Lt,
    Le,
    Eq,
    Ne,
    And,
    Or,
}

impl BinaryOp {
    /// Every operator, by precedence (for tests and tables over all of them).
    pub const ALL: [BinaryOp; 13] = [
        BinaryOp::Mul,
        BinaryOp::Div,
        BinaryOp::Mod,
        BinaryOp::Add,
        BinaryOp::Sub,
        BinaryOp::Gt,
        BinaryOp::Ge,
        BinaryOp::Lt,
        BinaryOp::Le,
        BinaryOp::Eq,
        BinaryOp::Ne,
        BinaryOp::And,
        BinaryOp::Or,
    ];

    pub fn symbol(self) -> &'static str {
        match self {
            BinaryOp::Mul => "*",
            BinaryOp::Div => "/",
            BinaryOp::Mod => "%",
            BinaryOp::Add => "+",
            BinaryOp::Sub => "-",
            BinaryOp::Gt => ">",
            BinaryOp::Ge => ">=",
            BinaryOp::Lt => "<",
            BinaryOp::Le => "<=",
            BinaryOp::Eq => "==",
            BinaryOp::Ne => "!=",
            BinaryOp::And => "&&",
            BinaryOp::Or => "||",
        }
    }
}

/// A template: literal text and interpolations/directives. Strip markers (`~`) have
/// already been applied to the neighbouring literals by the parser, and escapes decoded.
#[derive(Clone, Debug, PartialEq)]
pub struct Template {
    pub parts: Vec<TemplatePart>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum TemplatePart {
    Literal {
        text: Str,
        span: Span,
    },
    Interp(Expr),
    If {
        cond: Expr,
        then: Template,
        otherwise: Option<Template>,
        span: Span,
    },
    For {
        key_var: Option<Ident>,
        value_var: Ident,
        collection: Expr,
        body: Template,
        span: Span,
    },
}

impl Body {
    /// Attributes of this body, in order.
    pub fn attributes(&self) -> impl Iterator<Item = &Attribute> {
        self.items.iter().filter_map(|i| match i {
            BodyItem::Attribute(a) => Some(a),
            _ => None,
        })
    }

    /// Blocks of this body, in order.
    pub fn blocks(&self) -> impl Iterator<Item = &Block> {
        self.items.iter().filter_map(|i| match i {
            BodyItem::Block(b) => Some(b),
            _ => None,
        })
    }
}

impl Expr {
    /// hcl's `Expression.StartRange()`: the range hcl points at when a diagnostic is
    /// about the start of this expression (e.g. "Invalid function argument").
    ///
    /// Two node kinds store less than hcl keeps, so their start ranges are derived:
    /// an `Index` with a computed key starts at its `[`, taken to be the character right
    /// before the key (exact unless there is space after `[`); a template `for`
    /// directive's range is approximated by the directive up to its collection.
    pub fn start_range(&self) -> Span {
        match &self.kind {
            ExprKind::Null
            | ExprKind::Bool(_)
            | ExprKind::Number(_)
            | ExprKind::Variable(_)
            | ExprKind::GetAttr { .. }
            | ExprKind::SplatItem
            | ExprKind::TemplateWrap(_) => self.span,
            ExprKind::Index { key, legacy, .. } => {
                if *legacy || key.is_traversal_index_key() {
                    self.span
                } else {
                    let end = key.span.start;
                    let mut start = end;
                    start.byte = start.byte.saturating_sub(1);
                    start.col = start.col.saturating_sub(1).max(1);
                    Span::new(self.span.file, start, end)
                }
            }
            ExprKind::Template(t) => t.start_range().unwrap_or(self.span),
            ExprKind::Splat { each, .. } => splat_marker(each).unwrap_or(self.span),
            ExprKind::Call {
                name, open_paren, ..
            } => name.span.to(*open_paren),
            ExprKind::Tuple(_) | ExprKind::Object(_) | ExprKind::For(_) => {
                let mut end = self.span.start;
                end.byte += 1;
                end.col += 1;
                Span::new(self.span.file, self.span.start, end)
            }
            ExprKind::Unary { .. } => {
                let mut end = self.span.start;
                end.byte += 1;
                end.col += 1;
                Span::new(self.span.file, self.span.start, end)
            }
            ExprKind::Binary { lhs, .. } => lhs.start_range(),
            ExprKind::Conditional { cond, .. } => cond.start_range(),
            ExprKind::Paren(inner) => inner.start_range(),
        }
    }

    /// True for index keys hcl folds into a static traversal step (`a[0]`, `a["k"]`,
    /// `a[true]`): number, bool and null literals and quoted strings without
    /// interpolation. Other keys make hcl's `IndexExpr`, which evaluates and reports
    /// errors differently.
    pub fn is_traversal_index_key(&self) -> bool {
        match &self.kind {
            ExprKind::Null | ExprKind::Bool(_) | ExprKind::Number(_) => true,
            ExprKind::Template(t) => {
                t.parts.len() == 1 && matches!(t.parts[0], TemplatePart::Literal { .. })
            }
            _ => false,
        }
    }
}

/// The `.*` / `[*]` marker of a splat: the range of the [`ExprKind::SplatItem`] at the
/// root of its `each` expression.
fn splat_marker(each: &Expr) -> Option<Span> {
    let mut cur = each;
    loop {
        match &cur.kind {
            ExprKind::SplatItem => return Some(cur.span),
            ExprKind::GetAttr { obj, .. } | ExprKind::Index { obj, .. } => cur = obj,
            ExprKind::Splat { source, .. } => cur = source,
            _ => return None,
        }
    }
}

impl Template {
    /// hcl's `TemplateExpr.StartRange()`: the start range of the first part.
    pub fn start_range(&self) -> Option<Span> {
        match self.parts.first()? {
            TemplatePart::Literal { span, .. } => Some(*span),
            TemplatePart::Interp(e) => Some(e.start_range()),
            TemplatePart::If { cond, .. } => Some(cond.start_range()),
            TemplatePart::For {
                span, collection, ..
            } => Some(span.to(collection.span)),
        }
    }
}
