//! The LR grammar of hcl's native syntax (`grammar/hcl.lalrpop`, generated into OUT_DIR by
//! `grammar/build.rs`) and its glue: a token filter between [`fn_hcl::syntax::lexer`] and the generated
//! parser, and the semantic actions ([`Cx`]) that build exactly the [`ast::File`] that
//! [`fn_hcl::syntax::parser::parse_file`] builds, spans included.
//!
//! Why two parsers: the hand-written parser reproduces hcl's error recovery, so it is the
//! source of every diagnostic; the grammar is the declarative, checked statement of what
//! hcl accepts. `tests/grammar_diff.rs` checks that both give identical trees and accept
//! the same inputs. The hand parser stays the entry point (`parser::parse_file`): on
//! valid programs it measured 10-25% faster than this grammar (see
//! `timing_grammar_vs_hand` in that test file), so a grammar-first fast path would only
//! add a second parse for invalid input. [`parse_tokens`] takes the lexer's tokens so
//! that such a path needs no second lexing if the balance changes.
//!
//! The token filter does what hcl's peeker does with its newline-sensitivity stack:
//! newlines (and comments that end a line) count in bodies and object constructors and
//! are dropped inside parentheses, brackets, template sequences and `{for ...}`; it also
//! marks the `{` of a `{for ...}` expression and the keyword right after `%{`, the two
//! places where hcl decides by looking ahead.
//!
//! It is a crate of its own, a dev-dependency of fn-hcl: the checked specification is
//! compiled for the tests that check it, not into the shipped binary.
//!
//! Limits: the actions track each expression's depth and the nesting the hand parser
//! would need for it, and reject exactly the programs that exceed
//! [`MAX_EXPR_DEPTH`] or [`MAX_NESTING`] (so no tree deeper than the limits is ever
//! built, and the hand parser reports the error).

use fn_hcl::syntax::ast::{self, *};
use fn_hcl::syntax::lexer::{self, Token, TokenKind as K};
use fn_hcl::syntax::parser::{MAX_EXPR_DEPTH, MAX_INPUT_BYTES, MAX_NESTING};
use fn_hcl::syntax::span::{FileId, SourceMap, Span};
use fn_hcl::text::Str;
use fn_hcl::text::unicode::graphemes;
use lalrpop_util::ParseError;
use std::collections::HashSet;

lalrpop_util::lalrpop_mod!(
    #[allow(
        clippy::all,
        clippy::pedantic,
        unused_parens,
        unused_imports,
        dead_code
    )]
    hcl_lr,
    "/hcl.rs"
);

/// Parses one file of the source map with the LR grammar. `Ok` holds exactly the tree
/// that [`fn_hcl::syntax::parser::parse_file`] returns for the same input; `Err` means the input
/// has an error (or exceeds a limit): the hand parser gives hcl's diagnostics for it.
#[allow(clippy::result_unit_err)]
pub fn parse_file(sm: &SourceMap, file: FileId) -> Result<File, ()> {
    let f = sm.get(file).ok_or(())?;
    if f.text.len() > MAX_INPUT_BYTES {
        return Err(());
    }
    let raw = lexer::tokenize(&f.text, file);
    parse_tokens(&f.text, &raw)
}

/// Parses one file of the source map as a standalone expression with the LR grammar:
/// exactly the tree of [`fn_hcl::syntax::parser::parse_expression`] (hcl's `ParseExpression`,
/// where newlines are insignificant), or `Err` where that reports an error.
#[allow(clippy::result_unit_err)]
pub fn parse_expression(sm: &SourceMap, file: FileId) -> Result<Expr, ()> {
    let f = sm.get(file).ok_or(())?;
    if f.text.len() > MAX_INPUT_BYTES {
        return Err(());
    }
    let raw = lexer::tokenize(&f.text, file);
    let toks = filter(&f.text, &raw, Frame::NoNl(K::Eof))?;
    let cx = Cx {
        src: &f.text,
        toks: &toks,
    };
    let input = toks.iter().enumerate().map(|(i, t)| Ok((i, *t, i + 1)));
    hcl_lr::ExpressionParser::new()
        .parse(&cx, input)
        .map(|x| x.e)
        .map_err(|_| ())
}

/// Parses an already tokenized file (the tokens of [`lexer::tokenize`], ending with
/// `Eof`), so that a caller that falls back to the hand parser lexes only once.
#[allow(clippy::result_unit_err)]
pub fn parse_tokens(src: &str, raw: &[Token]) -> Result<File, ()> {
    let eof = raw.last().filter(|t| t.kind == K::Eof).ok_or(())?.span;
    let toks = filter(src, raw, Frame::Body { expr: false })?;
    let cx = Cx { src, toks: &toks };
    let input = toks.iter().enumerate().map(|(i, t)| Ok((i, *t, i + 1)));
    let items = hcl_lr::FileParser::new()
        .parse(&cx, input)
        .map_err(|_| ())?;
    check_duplicates(&items.items).map_err(|_| ())?;
    let first = toks.first().map_or(eof, |t| t.span);
    Ok(File {
        body: Body {
            items: items.items,
            span: first.to(eof),
        },
    })
}

// ----- tokens ----------------------------------------------------------------------------

/// Token kinds the grammar sees: the lexer's (but comments, which become newlines
/// where they end a line, and the invalid tokens, which fail at once), plus the
/// context-dependent classifications described in the module docs.
#[allow(missing_docs)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gk {
    Lex(K),
    /// The `{` of a `{for ...}` expression.
    OBraceFor,
    /// Template directive keywords (only right after `%{`).
    KwIf,
    KwElse,
    KwEndif,
    KwFor,
    KwEndfor,
}

/// One token for the grammar: its kind and source range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tk {
    pub kind: Gk,
    pub span: Span,
}

/// The grammar's error: the input is not accepted (details come from the hand parser).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fail;

/// One level of the filter's context stack.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Frame {
    /// A body; `expr` while inside an attribute's expression (until its newline).
    Body { expr: bool },
    /// An object constructor: newlines separate items.
    Object,
    /// Newlines are insignificant until the given closer.
    NoNl(K),
    /// A quoted template or heredoc.
    Template,
}

/// Turns the lexer's tokens into the grammar's, as described in the module docs; `outer`
/// is the context of the whole input (a body, or a standalone expression).
/// Invalid tokens (which hcl always reports) fail at once.
fn filter(src: &str, raw: &[Token], outer: Frame) -> Result<Vec<Tk>, ()> {
    let text = |t: &Token| src.get(t.span.bytes()).unwrap_or("");
    let mut out = Vec::with_capacity(raw.len());
    let mut frames = vec![outer];
    let mut after_control = false;
    for (i, t) in raw.iter().enumerate() {
        let top = frames
            .last()
            .copied()
            .unwrap_or(Frame::Body { expr: false });
        let newlines = !matches!(top, Frame::NoNl(_));
        let kind = match t.kind {
            K::Eof => break,
            K::Comment | K::Newline => {
                if !newlines || (t.kind == K::Comment && !text(t).ends_with('\n')) {
                    continue;
                }
                if let Some(Frame::Body { expr }) = frames.last_mut() {
                    *expr = false;
                }
                Gk::Lex(K::Newline)
            }
            K::OBrace => {
                if top == (Frame::Body { expr: false }) {
                    frames.push(Frame::Body { expr: false });
                    Gk::Lex(K::OBrace)
                } else if next_is_for(src, &raw[i + 1..]) {
                    frames.push(Frame::NoNl(K::CBrace));
                    Gk::OBraceFor
                } else {
                    frames.push(Frame::Object);
                    Gk::Lex(K::OBrace)
                }
            }
            K::CBrace => {
                if frames.len() > 1
                    && matches!(
                        top,
                        Frame::Body { .. } | Frame::Object | Frame::NoNl(K::CBrace)
                    )
                {
                    frames.pop();
                }
                Gk::Lex(K::CBrace)
            }
            K::OBrack if newlines && star_on_a_later_line(src, &raw[i + 1..]) => return Err(()),
            K::OBrack | K::OParen => {
                let close = if t.kind == K::OBrack {
                    K::CBrack
                } else {
                    K::CParen
                };
                frames.push(Frame::NoNl(close));
                Gk::Lex(t.kind)
            }
            K::CBrack | K::CParen | K::TemplateSeqEnd => {
                if top == Frame::NoNl(t.kind) {
                    frames.pop();
                }
                Gk::Lex(t.kind)
            }
            K::TemplateInterp | K::TemplateControl => {
                frames.push(Frame::NoNl(K::TemplateSeqEnd));
                if t.kind == K::TemplateControl {
                    out.push(Tk {
                        kind: Gk::Lex(t.kind),
                        span: t.span,
                    });
                    after_control = true;
                    continue;
                }
                Gk::Lex(t.kind)
            }
            K::OQuote | K::OHeredoc => {
                frames.push(Frame::Template);
                Gk::Lex(t.kind)
            }
            K::CQuote | K::CHeredoc => {
                if top == Frame::Template {
                    frames.pop();
                }
                Gk::Lex(t.kind)
            }
            K::Equal => {
                if let Some(Frame::Body { expr }) = frames.last_mut() {
                    *expr = true;
                }
                Gk::Lex(K::Equal)
            }
            K::Ident if after_control => match text(t) {
                "if" => Gk::KwIf,
                "else" => Gk::KwElse,
                "endif" => Gk::KwEndif,
                "for" => Gk::KwFor,
                "endfor" => Gk::KwEndfor,
                _ => Gk::Lex(K::Ident),
            },
            K::BitwiseAnd
            | K::BitwiseOr
            | K::BitwiseNot
            | K::BitwiseXor
            | K::Apostrophe
            | K::Backtick
            | K::Semicolon
            | K::Invalid
            | K::QuotedNewline => return Err(()),
            k => Gk::Lex(k),
        };
        after_control = false;
        out.push(Tk { kind, span: t.span });
    }
    Ok(out)
}

/// After a `[` where newlines count: does a newline come first and then `*`? hcl looks
/// for the `*` of a splat `[*]` before it ignores newlines, so it reads `x[` newline `*`
/// as an index starting with `*`, an invalid expression (as is a tuple starting with
/// `*`). A block comment is skipped; a line comment is a newline.
fn star_on_a_later_line(src: &str, rest: &[Token]) -> bool {
    let ends_line = |t: &Token| {
        t.kind == K::Newline
            || (t.kind == K::Comment && src.get(t.span.bytes()).is_some_and(|c| c.ends_with('\n')))
    };
    let mut toks = rest
        .iter()
        .skip_while(|t| t.kind == K::Comment && !ends_line(t));
    toks.next().is_some_and(ends_line)
        && toks
            .find(|t| !matches!(t.kind, K::Newline | K::Comment))
            .is_some_and(|t| t.kind == K::Star)
}

/// hcl's test after `{`: is the next token (newlines and comments skipped) `for`?
fn next_is_for(src: &str, rest: &[Token]) -> bool {
    rest.iter()
        .find(|t| !matches!(t.kind, K::Newline | K::Comment))
        .is_some_and(|t| t.kind == K::Ident && src.get(t.span.bytes()) == Some("for"))
}

// ----- semantic values -------------------------------------------------------------------

/// An expression with its tree depth (as [`fn_hcl::syntax::parser::expr_depth`] counts it) and the
/// nesting the hand parser reaches below the start of its operand chain (`p`: parsing it
/// with `parse_expression` needs `1 + p` levels).
#[derive(Debug)]
pub struct X {
    pub e: Expr,
    pub d: u32,
    pub p: u32,
}

/// An attribute-only splat being extended by `.name` / `.0` steps.
#[derive(Debug)]
pub struct ASp {
    source: X,
    each: X,
    /// The range of the first step's dot (hcl's ranges for the steps start there).
    first: Option<Span>,
    last: Span,
}

/// `for [k,] v in collection`.
#[derive(Debug)]
pub struct ForHead {
    key: Option<Ident>,
    value: Ident,
    coll: X,
}

/// A block's body with its braces and the nesting it needs.
#[derive(Debug)]
pub struct BlockBody {
    body: Body,
    open: Span,
    close: Span,
    need: u32,
}

/// Body items in order, with the most nesting any of them needs.
#[derive(Debug, Default)]
pub struct Items {
    pub items: Vec<BodyItem>,
    need: u32,
}

impl Items {
    /// Appends an item with the nesting it needs.
    pub fn push(&mut self, (item, need): (BodyItem, u32)) {
        self.need = self.need.max(need);
        self.items.push(item);
    }
}

/// One flat piece of a template, in source order.
#[derive(Debug)]
pub enum Piece {
    Lit(Tk),
    Interp {
        open: Tk,
        expr: X,
        close: Tk,
    },
    If {
        open: Tk,
        cond: X,
        close: Tk,
    },
    Else {
        open: Tk,
        close: Tk,
    },
    EndIf {
        open: Tk,
        close: Tk,
    },
    For {
        open: Tk,
        head: Box<ForHead>,
        close: Tk,
    },
    EndFor {
        open: Tk,
        close: Tk,
    },
    /// The pieces inside a directive, kept as a group so that nesting costs no copying.
    Group(Vec<Piece>),
}

/// A run of template pieces and the deepest directive nesting inside it.
#[derive(Debug, Default)]
pub struct Pieces {
    pub v: Vec<Piece>,
    depth: u32,
}

impl Pieces {
    /// Appends `other` (a directive) after these pieces.
    pub fn append(&mut self, mut other: Pieces) {
        self.depth = self.depth.max(other.depth);
        self.v.append(&mut other.v);
    }
}

type R<T> = Result<T, ParseError<usize, Tk, Fail>>;

fn fail<T>() -> R<T> {
    Err(ParseError::User { error: Fail })
}

/// A template literal decoded, with its range (hcl's flat template token).
struct FlatLit {
    text: String,
    span: Span,
}

/// The flat template sequence after decoding (hcl's templateToken list).
enum Flat {
    Lit(FlatLit),
    Interp(X),
    If { cond: X, span: Span },
    Else,
    EndIf { span: Span },
    For { head: Box<ForHead>, span: Span },
    EndFor { span: Span },
}

/// The grammar's context: the source text and the filtered tokens.
pub struct Cx<'s> {
    src: &'s str,
    toks: &'s [Tk],
}

impl<'s> Cx<'s> {
    fn text(&self, t: Tk) -> &'s str {
        self.src.get(t.span.bytes()).unwrap_or("")
    }

    fn ident(&self, t: Tk) -> Ident {
        Ident {
            name: Str::from(self.text(t)),
            span: t.span,
        }
    }

    /// Wraps a node, rejecting it when it exceeds the depth or nesting limits.
    fn mk(&self, kind: ExprKind, span: Span, d: u32, p: u32) -> R<X> {
        if d > MAX_EXPR_DEPTH || p >= MAX_NESTING {
            return fail();
        }
        Ok(X {
            e: Expr { kind, span },
            d,
            p,
        })
    }

    // ----- bodies ----------------------------------------------------------------------

    pub fn attribute(&self, n: Tk, eq: Tk, e: X) -> R<Box<(BodyItem, u32)>> {
        let need = 1 + e.p;
        let span = n.span.to(e.e.span);
        Ok(Box::new((
            BodyItem::Attribute(Attribute {
                name: self.ident(n),
                expr: e.e,
                equals: eq.span,
                span,
            }),
            need,
        )))
    }

    pub fn block(&self, n: Tk, labels: Vec<Label>, b: BlockBody) -> R<Box<(BodyItem, u32)>> {
        let need = 1 + b.need;
        if need > MAX_NESTING {
            return fail();
        }
        Ok(Box::new((
            BodyItem::Block(Block {
                kind: self.ident(n),
                labels,
                body: b.body,
                open_brace: b.open,
                close_brace: b.close,
                span: n.span.to(b.close),
            }),
            need,
        )))
    }

    pub fn label_ident(&self, t: Tk) -> Label {
        Label {
            value: Str::from(self.text(t)),
            quoted: false,
            span: t.span,
        }
    }

    pub fn label_quoted(&self, o: Tk, lits: Vec<Tk>, c: Tk) -> R<Label> {
        let mut value = String::new();
        for l in lits {
            match decode(self.text(l), true) {
                Some(s) => value.push_str(&s),
                None => return fail(),
            }
        }
        Ok(Label {
            value: Str::from(value),
            quoted: true,
            span: o.span.to(c.span),
        })
    }

    pub fn body_lines(&self, o: Tk, items: Items, c: Tk) -> R<BlockBody> {
        if check_duplicates(&items.items).is_err() {
            return fail();
        }
        Ok(BlockBody {
            body: Body {
                items: items.items,
                span: o.span.to(c.span),
            },
            open: o.span,
            close: c.span,
            need: items.need,
        })
    }

    pub fn body_single(&self, o: Tk, n: Tk, eq: Tk, e: X, c: Tk) -> R<BlockBody> {
        let (item, need) = *self.attribute(n, eq, e)?;
        let span = match &item {
            BodyItem::Attribute(a) => a.span,
            BodyItem::Block(b) => b.span,
        };
        Ok(BlockBody {
            body: Body {
                items: vec![item],
                span,
            },
            open: o.span,
            close: c.span,
            need,
        })
    }

    // ----- operators -------------------------------------------------------------------

    pub fn cond(&self, c: X, t: X, f: X) -> R<X> {
        let span = c.e.span.to(f.e.span);
        let d = 1 + c.d.max(t.d).max(f.d);
        let p = c.p.max(1 + t.p).max(1 + f.p);
        self.mk(
            ExprKind::Conditional {
                cond: Box::new(c.e),
                then: Box::new(t.e),
                otherwise: Box::new(f.e),
            },
            span,
            d,
            p,
        )
    }

    pub fn bin(&self, op: BinaryOp, l: X, r: X) -> R<X> {
        let span = l.e.span.to(r.e.span);
        self.mk(
            ExprKind::Binary {
                op,
                lhs: Box::new(l.e),
                rhs: Box::new(r.e),
            },
            span,
            1 + l.d.max(r.d),
            l.p.max(r.p),
        )
    }

    pub fn unary(&self, op: UnaryOp, o: Tk, x: X) -> R<X> {
        let span = o.span.to(x.e.span);
        self.mk(
            ExprKind::Unary {
                op,
                operand: Box::new(x.e),
            },
            span,
            1 + x.d,
            1 + x.p,
        )
    }

    // ----- traversals ------------------------------------------------------------------

    pub fn get_attr(&self, o: X, n: Tk) -> R<X> {
        let span = o.e.span.to(n.span);
        self.mk(
            ExprKind::GetAttr {
                obj: Box::new(o.e),
                name: self.ident(n),
            },
            span,
            1 + o.d,
            o.p,
        )
    }

    /// The key of a legacy index `.0`: a plain integer literal.
    fn legacy_key(&self, n: Tk) -> R<Expr> {
        let text = self.text(n);
        if text.contains('.') || !valid_number(text) {
            return fail();
        }
        Ok(Expr {
            kind: ExprKind::Number(Str::from(text)),
            span: n.span,
        })
    }

    pub fn legacy_index(&self, o: X, n: Tk) -> R<X> {
        let key = self.legacy_key(n)?;
        let span = o.e.span.to(n.span);
        self.mk(
            ExprKind::Index {
                obj: Box::new(o.e),
                key: Box::new(key),
                legacy: true,
            },
            span,
            1 + o.d.max(1),
            o.p,
        )
    }

    pub fn index(&self, o: X, a: Tk, k: X, b: Tk) -> R<X> {
        let span = o.e.span.to(a.span.to(b.span));
        self.mk(
            ExprKind::Index {
                obj: Box::new(o.e),
                key: Box::new(k.e),
                legacy: false,
            },
            span,
            1 + o.d.max(k.d),
            o.p.max(1 + k.p),
        )
    }

    pub fn asplat_start(&self, o: X, d: Tk, st: Tk) -> R<Box<ASp>> {
        let item = self.mk(ExprKind::SplatItem, d.span.to(st.span), 1, 0)?;
        Ok(Box::new(ASp {
            source: o,
            each: item,
            first: None,
            last: st.span,
        }))
    }

    pub fn asplat_attr(&self, mut s: Box<ASp>, d: Tk, n: Tk) -> R<Box<ASp>> {
        let first = s.first.unwrap_or(d.span);
        let each = std::mem::replace(&mut s.each, self.splat_item(d, d));
        s.each = self.mk(
            ExprKind::GetAttr {
                obj: Box::new(each.e),
                name: self.ident(n),
            },
            first.to(n.span),
            1 + each.d,
            0,
        )?;
        s.first = Some(first);
        s.last = n.span;
        Ok(s)
    }

    pub fn asplat_legacy(&self, mut s: Box<ASp>, d: Tk, n: Tk) -> R<Box<ASp>> {
        let key = self.legacy_key(n)?;
        let first = s.first.unwrap_or(d.span);
        let each = std::mem::replace(&mut s.each, self.splat_item(d, d));
        s.each = self.mk(
            ExprKind::Index {
                obj: Box::new(each.e),
                key: Box::new(key),
                legacy: true,
            },
            first.to(n.span),
            1 + each.d.max(1),
            0,
        )?;
        s.first = Some(first);
        s.last = n.span;
        Ok(s)
    }

    pub fn finish_asplat(&self, s: Box<ASp>) -> R<X> {
        let s = *s;
        let span = s.source.e.span.to(s.last);
        let d = 1 + s.source.d.max(s.each.d);
        let p = s.source.p;
        self.mk(
            ExprKind::Splat {
                source: Box::new(s.source.e),
                each: Box::new(s.each.e),
                full: false,
            },
            span,
            d,
            p,
        )
    }

    pub fn splat_item(&self, a: Tk, b: Tk) -> X {
        X {
            e: Expr {
                kind: ExprKind::SplatItem,
                span: a.span.to(b.span),
            },
            d: 1,
            p: 0,
        }
    }

    pub fn fsplat(&self, o: X, e: X) -> R<X> {
        let span = o.e.span.to(e.e.span);
        let d = 1 + o.d.max(e.d);
        let p = o.p.max(1 + e.p);
        self.mk(
            ExprKind::Splat {
                source: Box::new(o.e),
                each: Box::new(e.e),
                full: true,
            },
            span,
            d,
            p,
        )
    }

    // ----- terms -----------------------------------------------------------------------

    pub fn number(&self, n: Tk) -> R<X> {
        let text = self.text(n);
        if !valid_number(text) {
            return fail();
        }
        self.mk(ExprKind::Number(Str::from(text)), n.span, 1, 0)
    }

    pub fn ident_term(&self, i: Tk) -> X {
        let kind = match self.text(i) {
            "true" => ExprKind::Bool(true),
            "false" => ExprKind::Bool(false),
            "null" => ExprKind::Null,
            _ => ExprKind::Variable(self.ident(i)),
        };
        X {
            e: Expr { kind, span: i.span },
            d: 1,
            p: 0,
        }
    }

    pub fn func_name(&self, i: Tk) -> (String, Span) {
        (self.text(i).to_string(), i.span)
    }

    pub fn func_name_more(&self, (mut name, span): (String, Span), i: Tk) -> (String, Span) {
        name.push_str("::");
        name.push_str(self.text(i));
        (name, span.to(i.span))
    }

    pub fn call(&self, name: (String, Span), a: Tk, args: (Vec<X>, bool), b: Tk) -> R<X> {
        let (args, expand_final) = args;
        let (d, p) = list_dp(&args);
        let span = name.1.to(b.span);
        self.mk(
            ExprKind::Call {
                name: Ident {
                    name: Str::from(name.0),
                    span: name.1,
                },
                args: args.into_iter().map(|x| x.e).collect(),
                expand_final,
                open_paren: a.span,
                close_paren: b.span,
            },
            span,
            d,
            p,
        )
    }

    pub fn paren(&self, a: Tk, e: X, b: Tk) -> R<X> {
        self.mk(
            ExprKind::Paren(Box::new(e.e)),
            a.span.to(b.span),
            1 + e.d,
            1 + e.p,
        )
    }

    /// Does this expression start with the identifier `for`? After `[` or `{`, hcl reads
    /// that as the start of a `for` expression.
    fn starts_with_for(&self, e: &Expr) -> bool {
        let at = e.span.start.byte;
        match self.toks.binary_search_by_key(&at, |t| t.span.start.byte) {
            Ok(i) => self
                .toks
                .get(i)
                .is_some_and(|t| t.kind == Gk::Lex(K::Ident) && self.text(*t) == "for"),
            Err(_) => false,
        }
    }

    pub fn tuple(&self, a: Tk, items: Vec<X>, b: Tk) -> R<X> {
        if items.first().is_some_and(|x| self.starts_with_for(&x.e)) {
            return fail();
        }
        let (d, p) = list_dp(&items);
        self.mk(
            ExprKind::Tuple(items.into_iter().map(|x| x.e).collect()),
            a.span.to(b.span),
            d,
            p,
        )
    }

    pub fn object(&self, a: Tk, items: Vec<(X, X)>, b: Tk) -> R<X> {
        if items
            .first()
            .is_some_and(|(k, _)| self.starts_with_for(&k.e))
        {
            return fail();
        }
        let mut d = 1;
        let mut p = 0;
        let mut out = Vec::with_capacity(items.len());
        for (k, v) in items {
            p = p.max(1 + k.p).max(1 + v.p);
            d = d.max(1 + v.d);
            let key = match &k.e.kind {
                ExprKind::Variable(i) => ObjectKey::Ident(Ident {
                    name: i.name.clone(),
                    span: k.e.span,
                }),
                ExprKind::Null => key_ident("null", k.e.span),
                ExprKind::Bool(true) => key_ident("true", k.e.span),
                ExprKind::Bool(false) => key_ident("false", k.e.span),
                _ => {
                    d = d.max(1 + k.d);
                    ObjectKey::Expr(k.e)
                }
            };
            out.push(ObjectItem { key, value: v.e });
        }
        self.mk(ExprKind::Object(out), a.span.to(b.span), d, p)
    }

    pub fn for_head(&self, key: Option<Tk>, v: Tk, kw: Tk, coll: X) -> R<Box<ForHead>> {
        if self.text(kw) != "in" {
            return fail();
        }
        Ok(Box::new(ForHead {
            key: key.map(|k| self.ident(k)),
            value: self.ident(v),
            coll,
        }))
    }

    #[allow(clippy::too_many_arguments)]
    fn for_expr(
        &self,
        a: Tk,
        kw: Tk,
        h: Box<ForHead>,
        key: Option<X>,
        v: X,
        group: bool,
        c: Option<Box<(Tk, X)>>,
        b: Tk,
    ) -> R<X> {
        let h = *h;
        let c = c.map(|c| *c);
        if self.text(kw) != "for" || c.as_ref().is_some_and(|(k, _)| self.text(*k) != "if") {
            return fail();
        }
        let mut d = h.coll.d.max(v.d);
        let mut p = h.coll.p.max(v.p);
        if let Some(k) = &key {
            d = d.max(k.d);
            p = p.max(k.p);
        }
        if let Some((_, c)) = &c {
            d = d.max(c.d);
            p = p.max(c.p);
        }
        self.mk(
            ExprKind::For(Box::new(ForExpr {
                key_var: h.key,
                value_var: h.value,
                collection: h.coll.e,
                key_expr: key.map(|k| k.e),
                value_expr: v.e,
                cond: c.map(|(_, c)| c.e),
                group,
            })),
            a.span.to(b.span),
            1 + d,
            1 + p,
        )
    }

    pub fn for_tuple(
        &self,
        a: Tk,
        kw: Tk,
        h: Box<ForHead>,
        v: X,
        c: Option<Box<(Tk, X)>>,
        b: Tk,
    ) -> R<X> {
        self.for_expr(a, kw, h, None, v, false, c, b)
    }

    #[allow(clippy::too_many_arguments)]
    pub fn for_object(
        &self,
        a: Tk,
        kw: Tk,
        h: Box<ForHead>,
        k: X,
        v: X,
        group: bool,
        c: Option<Box<(Tk, X)>>,
        b: Tk,
    ) -> R<X> {
        self.for_expr(a, kw, h, Some(k), v, group, c, b)
    }

    // ----- templates -------------------------------------------------------------------

    #[allow(clippy::too_many_arguments)]
    pub fn if_dir(
        &self,
        o: Tk,
        cond: X,
        e: Tk,
        then: Pieces,
        otherwise: Option<(Tk, Tk, Pieces)>,
        o2: Tk,
        e2: Tk,
    ) -> R<Pieces> {
        let mut depth = then.depth;
        let mut v = Vec::with_capacity(5);
        v.push(Piece::If {
            open: o,
            cond,
            close: e,
        });
        v.push(Piece::Group(then.v));
        if let Some((o3, e3, f)) = otherwise {
            depth = depth.max(f.depth);
            v.push(Piece::Else {
                open: o3,
                close: e3,
            });
            v.push(Piece::Group(f.v));
        }
        v.push(Piece::EndIf {
            open: o2,
            close: e2,
        });
        self.directive(v, depth)
    }

    pub fn for_dir(
        &self,
        o: Tk,
        head: Box<ForHead>,
        e: Tk,
        body: Pieces,
        o2: Tk,
        e2: Tk,
    ) -> R<Pieces> {
        let v = vec![
            Piece::For {
                open: o,
                head,
                close: e,
            },
            Piece::Group(body.v),
            Piece::EndFor {
                open: o2,
                close: e2,
            },
        ];
        self.directive(v, body.depth)
    }

    fn directive(&self, v: Vec<Piece>, inner: u32) -> R<Pieces> {
        let depth = inner + 1;
        if depth >= MAX_NESTING {
            return fail();
        }
        Ok(Pieces { v, depth })
    }

    /// A quoted template or heredoc: hcl's template parser, from the flat pieces the
    /// grammar has checked for balance.
    pub fn template(&self, o: Tk, pieces: Pieces, c: Tk) -> R<X> {
        let mut flat = self.flatten(pieces.v)?;
        if flat.is_empty() {
            // As the hand parser: the zero-width range just after the closing marker.
            let at = c.span.end;
            flat.push(Flat::Lit(FlatLit {
                text: String::new(),
                span: Span::new(c.span.file, at, at),
            }));
        }
        if o.kind == Gk::Lex(K::OHeredoc) && self.text(o).starts_with("<<-") {
            flush_heredoc(&mut flat);
        }
        let flat = meld(flat);
        let span = o.span.to(c.span);
        if flat.len() == 1 && matches!(flat[0], Flat::Interp(_)) {
            if let Some(Flat::Interp(x)) = flat.into_iter().next() {
                return self.mk(
                    ExprKind::TemplateWrap(Box::new(x.e)),
                    span,
                    1 + x.d,
                    2 + x.p,
                );
            }
            return fail();
        }
        self.nest_template(flat, span)
    }

    /// Decodes literals and applies strip markers, in source order.
    fn flatten(&self, pieces: Vec<Piece>) -> R<Vec<Flat>> {
        let mut flat: Vec<Flat> = Vec::with_capacity(pieces.len());
        let mut ltrim_next = false;
        let mut next_can_trim_prev = false;
        let mut groups = vec![pieces.into_iter()];
        while let Some(group) = groups.last_mut() {
            let Some(piece) = group.next() else {
                groups.pop();
                continue;
            };
            let piece = match piece {
                Piece::Group(inner) => {
                    groups.push(inner.into_iter());
                    continue;
                }
                p => p,
            };
            let ltrim = std::mem::take(&mut ltrim_next);
            let can_trim_prev = std::mem::take(&mut next_can_trim_prev);
            let (open, close) = match &piece {
                Piece::Lit(t) => {
                    let Some(mut text) = decode(self.text(*t), t.kind == Gk::Lex(K::QuotedLit))
                    else {
                        return fail();
                    };
                    if ltrim {
                        text = text.trim_start_matches(char::is_whitespace).to_string();
                    }
                    flat.push(Flat::Lit(FlatLit { text, span: t.span }));
                    next_can_trim_prev = true;
                    continue;
                }
                Piece::Interp { open, close, .. }
                | Piece::If { open, close, .. }
                | Piece::Else { open, close }
                | Piece::EndIf { open, close }
                | Piece::For { open, close, .. }
                | Piece::EndFor { open, close } => (*open, *close),
                Piece::Group(_) => return fail(),
            };
            if can_trim_prev
                && self.text(open).ends_with('~')
                && let Some(Flat::Lit(l)) = flat.last_mut()
            {
                let keep = l.text.trim_end_matches(char::is_whitespace).len();
                l.text.truncate(keep);
            }
            if self.text(close).starts_with('~') {
                ltrim_next = true;
            }
            let span = open.span.to(close.span);
            flat.push(match piece {
                Piece::Interp { expr, .. } => Flat::Interp(expr),
                Piece::If { cond, .. } => Flat::If { cond, span },
                Piece::Else { .. } => Flat::Else,
                Piece::EndIf { .. } => Flat::EndIf { span },
                Piece::For { head, .. } => Flat::For { head, span },
                Piece::EndFor { .. } => Flat::EndFor { span },
                Piece::Lit(_) | Piece::Group(_) => return fail(),
            });
        }
        Ok(flat)
    }

    /// Builds the nested template parts (hcl's templateParser over the flat tokens).
    fn nest_template(&self, flat: Vec<Flat>, span: Span) -> R<X> {
        enum Open {
            If {
                cond: Expr,
                span: Span,
                then: Option<Vec<TemplatePart>>,
            },
            For {
                key: Option<Ident>,
                value: Ident,
                coll: Expr,
                span: Span,
            },
        }
        let mut stack: Vec<(Open, Vec<TemplatePart>)> = Vec::new();
        let mut root: Vec<TemplatePart> = Vec::new();
        // Tree depth below the template node and the hand parser's nesting.
        let mut d = 1u32;
        let mut p = 0u32;
        for f in flat {
            let k = stack.len() as u32;
            let part = match f {
                Flat::Lit(l) => Some(TemplatePart::Literal {
                    text: Str::from(l.text),
                    span: l.span,
                }),
                Flat::Interp(x) => {
                    d = d.max(1 + k + x.d);
                    p = p.max(1 + x.p);
                    Some(TemplatePart::Interp(x.e))
                }
                Flat::If { cond, span } => {
                    d = d.max(2 + k + cond.d);
                    p = p.max(1 + cond.p).max(k + 1);
                    stack.push((
                        Open::If {
                            cond: cond.e,
                            span,
                            then: None,
                        },
                        Vec::new(),
                    ));
                    None
                }
                Flat::For { head, span } => {
                    d = d.max(2 + k + head.coll.d);
                    p = p.max(1 + head.coll.p).max(k + 1);
                    stack.push((
                        Open::For {
                            key: head.key,
                            value: head.value,
                            coll: head.coll.e,
                            span,
                        },
                        Vec::new(),
                    ));
                    None
                }
                Flat::Else => {
                    match stack.last_mut() {
                        Some((Open::If { then, .. }, parts)) if then.is_none() => {
                            *then = Some(std::mem::take(parts));
                        }
                        _ => return fail(),
                    }
                    None
                }
                Flat::EndIf { span: end } => match stack.pop() {
                    Some((Open::If { cond, span, then }, parts)) => {
                        let (then, otherwise) = match then {
                            Some(t) => (t, Some(Template { parts })),
                            None => (parts, None),
                        };
                        Some(TemplatePart::If {
                            cond,
                            then: Template { parts: then },
                            otherwise,
                            span: span.to(end),
                        })
                    }
                    _ => return fail(),
                },
                Flat::EndFor { span: end } => match stack.pop() {
                    Some((
                        Open::For {
                            key,
                            value,
                            coll,
                            span,
                        },
                        parts,
                    )) => Some(TemplatePart::For {
                        key_var: key,
                        value_var: value,
                        collection: coll,
                        body: Template { parts },
                        span: span.to(end),
                    }),
                    _ => return fail(),
                },
            };
            if let Some(part) = part {
                match stack.last_mut() {
                    Some((_, parts)) => parts.push(part),
                    None => root.push(part),
                }
            }
        }
        if !stack.is_empty() {
            return fail();
        }
        self.mk(
            ExprKind::Template(ast::Template { parts: root }),
            span,
            d,
            1 + p,
        )
    }
}

fn key_ident(name: &str, span: Span) -> ObjectKey {
    ObjectKey::Ident(Ident {
        name: Str::from(name),
        span,
    })
}

/// Depth and nesting of a node whose children are all parsed with `parse_expression`.
fn list_dp(items: &[X]) -> (u32, u32) {
    let d = 1 + items.iter().map(|x| x.d).max().unwrap_or(0);
    let p = items.iter().map(|x| 1 + x.p).max().unwrap_or(0);
    (d, p)
}

/// hcl rejects an argument set twice in one body ("Attribute redefined").
fn check_duplicates(items: &[BodyItem]) -> Result<(), Fail> {
    let mut seen: HashSet<&str> = HashSet::new();
    for a in items.iter().filter_map(|i| match i {
        BodyItem::Attribute(a) => Some(a),
        BodyItem::Block(_) => None,
    }) {
        if !seen.insert(&a.name.name) {
            return Err(Fail);
        }
    }
    Ok(())
}

/// hcl's string-literal decoding: escapes in quoted templates (`\n \r \t \" \\ \uNNNN
/// \UNNNNNNNN`), and `$${` / `%%{` in both kinds; `None` where hcl reports an error.
fn decode(text: &str, quoted: bool) -> Option<String> {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == b'\\' && quoted {
            match *b.get(i + 1)? {
                b'n' => out.push('\n'),
                b'r' => out.push('\r'),
                b't' => out.push('\t'),
                b'"' => out.push('"'),
                b'\\' => out.push('\\'),
                sel @ (b'u' | b'U') => {
                    let max = if sel == b'u' { 4 } else { 8 };
                    let mut n = 0;
                    while n < max && b.get(i + 2 + n).is_some_and(u8::is_ascii_hexdigit) {
                        n += 1;
                    }
                    if n != max {
                        return None;
                    }
                    let hex = text.get(i + 2..i + 2 + n)?;
                    out.push(char::from_u32(u32::from_str_radix(hex, 16).ok()?)?);
                    i += 2 + n;
                    continue;
                }
                _ => return None,
            }
            i += 2;
        } else if (c == b'$' || c == b'%')
            && b.get(i + 1) == Some(&c)
            && b.get(i + 2) == Some(&b'{')
        {
            // `$${`/`%%{` is the escape; any other `$`/`%` is literal (hcl's tokens).
            out.push(c as char);
            out.push('{');
            i += 3;
        } else {
            let ch = text.get(i..)?.chars().next()?;
            out.push(ch);
            i += ch.len_utf8();
        }
    }
    Some(out)
}

/// hcl's `flushHeredocTemplateParts` (for `<<-`): removes the smallest indentation of
/// the template's lines (in grapheme clusters) from the literal that starts each line.
fn flush_heredoc(flat: &mut [Flat]) {
    let mut min_spaces = usize::MAX;
    let mut newline = true;
    let mut adjust = Vec::new();
    for (i, f) in flat.iter().enumerate() {
        if newline {
            newline = false;
            let mut spaces = 0;
            if let Flat::Lit(l) = f {
                let trimmed = l.text.trim_start_matches(char::is_whitespace);
                if trimmed.is_empty() && l.text.ends_with('\n') {
                    spaces = usize::MAX;
                } else {
                    let n = l.text.len() - trimmed.len();
                    spaces = graphemes(&l.text[..n]).count();
                    adjust.push(i);
                }
            }
            min_spaces = min_spaces.min(spaces);
        }
        if let Flat::Lit(l) = f
            && l.text.ends_with('\n')
        {
            newline = true;
        }
    }
    if min_spaces == usize::MAX {
        return;
    }
    for i in adjust {
        if let Some(Flat::Lit(l)) = flat.get_mut(i) {
            let cut: usize = graphemes(&l.text).take(min_spaces).map(str::len).sum();
            l.text.drain(..cut);
            l.span.start.col += min_spaces as u32;
            l.span.start.byte += cut as u32;
        }
    }
}

/// hcl's `meldConsecutiveStringLiterals`.
fn meld(flat: Vec<Flat>) -> Vec<Flat> {
    let mut out: Vec<Flat> = Vec::with_capacity(flat.len());
    for f in flat {
        if let Flat::Lit(l) = &f
            && let Some(Flat::Lit(prev)) = out.last_mut()
        {
            prev.text.push_str(&l.text);
            prev.span.end = l.span.end;
            continue;
        }
        out.push(f);
    }
    out
}

/// A number literal that `big.ParseFloat` accepts: digits, an optional fraction, an
/// optional exponent.
fn valid_number(s: &str) -> bool {
    let b = s.as_bytes();
    let digits = |i: &mut usize| {
        let st = *i;
        while b.get(*i).is_some_and(u8::is_ascii_digit) {
            *i += 1;
        }
        *i - st
    };
    let mut i = 0;
    if digits(&mut i) == 0 {
        return false;
    }
    if b.get(i) == Some(&b'.') {
        i += 1;
        digits(&mut i);
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return false;
        }
    }
    i == b.len()
}
