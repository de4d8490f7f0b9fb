//! The parser of hcl's native syntax. It follows hashicorp/hcl v2.24's `hclsyntax`
//! parser (parser.go, parser_template.go) decision for decision, including its error
//! recovery, so that a broken program yields the same diagnostics, in the same order and
//! number, with the same ranges as the Go implementation (function-hcl prints the first
//! one and counts the others: "..., and 2 other diagnostic(s)").
//!
//! Why not an LR grammar: hcl's diagnostics depend on the parser's exact path through the
//! token stream (its "recovery" flag, the newline-sensitivity stack, which token it was
//! looking at when it gave up); an LR parser's errors cannot be mapped onto those.
//!
//! Limits (fn-hcl's own, hcl has none): [`MAX_NESTING`] levels of brackets, blocks,
//! templates and operators parsed recursively, [`MAX_EXPR_DEPTH`] levels in any one
//! expression tree (long operator or traversal chains build deep trees without
//! recursion), [`MAX_INPUT_BYTES`] per file and [`MAX_PROGRAM_TOKENS`] per program.
//! Parsing is linear in the input, so these bound its time and memory as well. Exceeding one is an ordinary error
//! diagnostic; no input can overflow the stack.

use crate::syntax::ast::*;
use crate::syntax::diag::Diagnostic;
use crate::syntax::lexer::{self, Token, TokenKind as K};
use crate::syntax::span::{FileId, Pos, RangeDisplay, SourceMap, Span};
use crate::text::Str;
use std::collections::HashMap;

/// Maximum nesting of brackets, parentheses, blocks, templates and unary operators.
pub const MAX_NESTING: u32 = 256;
/// Maximum depth of one expression tree (every operator, traversal step and bracket
/// counts one level), so that later stages may walk expressions recursively.
pub const MAX_EXPR_DEPTH: u32 = 1024;
/// Maximum size of one source file (and of one program, see [`crate::syntax::txtar`]).
pub const MAX_INPUT_BYTES: usize = 16 * 1024 * 1024;
/// Maximum number of tokens (names, numbers, symbols, string pieces) in one program, all
/// its files together: the size of everything later built from it (syntax tree, IR,
/// bytecode) grows with it. A Composition is stored in etcd (1.5 MB per object), which
/// holds at most ~750,000 tokens, so no program that can be deployed reaches it.
pub const MAX_PROGRAM_TOKENS: usize = 1_000_000;

thread_local! {
    /// The token list of the last file parsed on this thread, kept for the next one
    /// (a cold compile then lexes without allocating it; see [`TOKEN_BUF_MAX`]).
    static TOKEN_BUF: std::cell::Cell<Vec<Token>> = const { std::cell::Cell::new(Vec::new()) };
}

/// The largest token list (in tokens) kept between parses: a huge file's buffer is
/// freed rather than held by the thread.
const TOKEN_BUF_MAX: usize = 1 << 14;

/// Bodies with fewer items find a redefined attribute by scanning them (no map).
const SMALL_BODY: usize = 32;

/// Parses one file of the source map as an hcl config body (hcl's `ParseConfig`).
/// Any diagnostic is an error: the result is either a complete tree or the diagnostics.
pub fn parse_file(sm: &SourceMap, file: FileId) -> Result<File, Vec<Diagnostic>> {
    let mut left = MAX_PROGRAM_TOKENS;
    parse_program_file(sm, file, &mut left)
}

/// [`parse_file`] for one file of a program whose files share a budget of tokens
/// (`tokens_left`, starting at [`MAX_PROGRAM_TOKENS`]): this file's tokens are taken from
/// it, and a file that needs more than is left is refused with a diagnostic naming the
/// limit, lexed no further than the budget.
pub fn parse_program_file(
    sm: &SourceMap,
    file: FileId,
    tokens_left: &mut usize,
) -> Result<File, Vec<Diagnostic>> {
    let (file, diags) = parse_partial_within(sm, file, tokens_left);
    if diags.is_empty() {
        Ok(file)
    } else {
        Err(diags)
    }
}

/// [`parse_file`] that keeps what hcl's recovery built: the (possibly incomplete) tree
/// together with all diagnostics, as hcl's `ParseConfig` returns both. An editor needs
/// the blocks around a syntax error while it is being typed. A file past
/// [`MAX_INPUT_BYTES`] or [`MAX_PROGRAM_TOKENS`] (or missing) gives an empty body.
pub fn parse_file_partial(sm: &SourceMap, file: FileId) -> (File, Vec<Diagnostic>) {
    let mut left = MAX_PROGRAM_TOKENS;
    parse_partial_within(sm, file, &mut left)
}

/// [`parse_file_partial`] within a program's budget of tokens (see [`parse_program_file`]).
fn parse_partial_within(
    sm: &SourceMap,
    file: FileId,
    tokens_left: &mut usize,
) -> (File, Vec<Diagnostic>) {
    let empty = |d: Diagnostic| {
        let body = Body {
            items: Vec::new(),
            span: Span::new(file, Pos::START, Pos::START),
        };
        (File { body }, vec![d])
    };
    let Some(f) = sm.get(file) else {
        return empty(Diagnostic::error_no_range(
            "Missing source file",
            "The source file to parse is not in the source map.",
        ));
    };
    if let Some(d) = size_check(&f.text, file) {
        return empty(d);
    }
    let toks = lexer::tokenize_at_most(&f.text, file, TOKEN_BUF.take(), *tokens_left);
    let found = toks.len().saturating_sub(1);
    if found > *tokens_left {
        let at = toks
            .get(*tokens_left)
            .map_or(Span::new(file, Pos::START, Pos::START), |t| t.span);
        return empty(Diagnostic::error(
            "Program too large",
            format!(
                "This program has more than {MAX_PROGRAM_TOKENS} tokens (names, numbers, symbols and string pieces, all files together); fn-hcl accepts at most {MAX_PROGRAM_TOKENS}. This is where the limit is reached."
            ),
            at,
        ));
    }
    *tokens_left -= found;
    let mut diags = lexer::check_invalid_tokens(&toks);
    let mut p = Parser::new(&f.text, &f.name, toks);
    let body = p.parse_body(K::Eof);
    diags.append(&mut p.diags);
    let toks = std::mem::take(&mut p.toks);
    if toks.capacity() <= TOKEN_BUF_MAX {
        TOKEN_BUF.set(toks);
    }
    (File { body }, diags)
}

/// Parses one file of the source map as a standalone expression (hcl's
/// `ParseExpression`: newlines are insignificant, extra tokens after it are an error).
pub fn parse_expression(sm: &SourceMap, file: FileId) -> Result<Expr, Vec<Diagnostic>> {
    let Some(f) = sm.get(file) else {
        return Err(vec![Diagnostic::error_no_range(
            "Missing source file",
            "The source file to parse is not in the source map.",
        )]);
    };
    if let Some(d) = size_check(&f.text, file) {
        return Err(vec![d]);
    }
    let toks = lexer::tokenize(&f.text, file);
    let mut diags = lexer::check_invalid_tokens(&toks);
    let mut p = Parser::new(&f.text, &f.name, toks);
    p.nl_stack.push(false);
    let mut expr = p.parse_expression();
    p.check_expr_depth(&mut expr);
    let next = p.peek();
    if next.kind != K::Eof && !p.recovery {
        p.err(
            "Extra characters after expression",
            "An expression was successfully parsed, but extra characters were found after it.",
            next.span,
        );
    }
    p.nl_stack.pop();
    diags.append(&mut p.diags);
    if diags.is_empty() {
        Ok(expr)
    } else {
        dismantle(expr);
        Err(diags)
    }
}

fn size_check(text: &str, file: FileId) -> Option<Diagnostic> {
    if text.len() <= MAX_INPUT_BYTES {
        return None;
    }
    let at = crate::syntax::span::Pos::START;
    Some(Diagnostic::error(
        "Input too large",
        format!(
            "This file is {} bytes long; fn-hcl accepts at most {} bytes of HCL per program.",
            text.len(),
            MAX_INPUT_BYTES
        ),
        Span::new(file, at, at),
    ))
}

/// A "template token": the flat form of a template before directives are matched
/// (hcl's templateToken kinds).
enum TT {
    Lit {
        text: String,
        span: Span,
    },
    Interp {
        expr: Expr,
    },
    If {
        cond: Expr,
        span: Span,
    },
    For {
        key: Option<Ident>,
        val: Ident,
        coll: Expr,
        span: Span,
    },
    EndCtrl {
        kind: Ctrl,
        span: Span,
    },
    End {
        span: Span,
    },
}

/// The clauses of a template directive, up to its end directive.
struct Clauses {
    /// The parts of a `%{for}`, or of an `%{if}` before its `%{else}`.
    then: Vec<TemplatePart>,
    /// The parts after an `%{if}`'s `%{else}`.
    otherwise: Option<Vec<TemplatePart>>,
    /// The end directive's range.
    end: Span,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Ctrl {
    EndIf,
    Else,
    EndFor,
}

impl Ctrl {
    fn name(self) -> &'static str {
        match self {
            Ctrl::EndIf => "endif",
            Ctrl::Else => "else",
            Ctrl::EndFor => "endfor",
        }
    }
}

struct Parser<'a> {
    src: &'a str,
    name: &'a str,
    toks: Vec<Token>,
    next: usize,
    nl_stack: Vec<bool>,
    recovery: bool,
    diags: Vec<Diagnostic>,
    nest: u32,
    nest_reported: bool,
}

fn between(a: Span, b: Span) -> Span {
    a.to(b)
}

fn placeholder(span: Span) -> Expr {
    Expr {
        kind: ExprKind::Null,
        span,
    }
}

impl<'a> Parser<'a> {
    fn new(src: &'a str, name: &'a str, mut toks: Vec<Token>) -> Self {
        // hcl's peeker turns a line comment (which holds its newline) into a newline and
        // skips every other comment; doing it once here keeps peeking a plain index step.
        toks.retain_mut(|t| {
            if t.kind != K::Comment {
                return true;
            }
            let is_line = src
                .get(t.span.bytes())
                .is_some_and(|text| text.ends_with('\n'));
            if is_line {
                t.kind = K::Newline;
            }
            is_line
        });
        Parser {
            src,
            name,
            toks,
            next: 0,
            nl_stack: vec![true],
            recovery: false,
            diags: Vec::new(),
            nest: 0,
            nest_reported: false,
        }
    }

    // ----- the peeker -------------------------------------------------------------

    fn including_newlines(&self) -> bool {
        self.nl_stack.last().copied().unwrap_or(true)
    }

    fn next_token(&self) -> (Token, usize) {
        // Comments were resolved in `new`: only newlines may need skipping.
        let mut i = self.next;
        if self.including_newlines() {
            if let Some(&tok) = self.toks.get(i) {
                return (tok, i + 1);
            }
        } else {
            while let Some(&tok) = self.toks.get(i) {
                if tok.kind != K::Newline {
                    return (tok, i + 1);
                }
                i += 1;
            }
        }
        let last = self.toks.last().copied().unwrap_or(Token {
            kind: K::Eof,
            span: Span::default(),
        });
        (last, self.toks.len())
    }

    fn peek(&self) -> Token {
        self.next_token().0
    }

    fn read(&mut self) -> Token {
        let (t, n) = self.next_token();
        self.next = n;
        t
    }

    fn prev_range(&self) -> Span {
        if self.next == 0 {
            // hcl v2.24: the next token's range when nothing has been read yet.
            return self.peek().span;
        }
        self.toks
            .get(self.next - 1)
            .map(|t| t.span)
            .unwrap_or_else(|| self.peek().span)
    }

    fn text(&self, tok: Token) -> &'a str {
        self.src.get(tok.span.bytes()).unwrap_or("")
    }

    fn is_keyword(&self, tok: Token, kw: &str) -> bool {
        tok.kind == K::Ident && self.text(tok) == kw
    }

    fn ident(&self, tok: Token) -> Ident {
        Ident {
            name: Str::from(self.text(tok)),
            span: tok.span,
        }
    }

    fn range_str(&self, span: Span) -> String {
        RangeDisplay {
            name: self.name,
            span,
        }
        .to_string()
    }

    fn err(&mut self, summary: &str, detail: impl Into<String>, subject: Span) {
        let (summary, detail) = (summary.to_string(), detail.into());
        self.diags.push(Diagnostic::error(summary, detail, subject));
    }

    /// [`Parser::err`] unless the parser is already recovering from an error (hcl reports
    /// only the first error of a recovery).
    fn err_once(&mut self, summary: &str, detail: impl Into<String>, subject: Span) {
        if !self.recovery {
            self.err(summary, detail, subject);
        }
    }

    // ----- recovery ---------------------------------------------------------------

    fn opposite(kind: K) -> Option<K> {
        Some(match kind {
            K::OBrace => K::CBrace,
            K::OBrack => K::CBrack,
            K::OParen => K::CParen,
            K::OQuote => K::CQuote,
            K::OHeredoc => K::CHeredoc,
            K::CBrace => K::OBrace,
            K::CBrack => K::OBrack,
            K::CParen => K::OParen,
            K::CQuote => K::OQuote,
            K::CHeredoc => K::OHeredoc,
            K::TemplateControl | K::TemplateInterp => K::TemplateSeqEnd,
            K::TemplateSeqEnd => K::TemplateInterp,
            _ => return None,
        })
    }

    /// hcl's `recover`: skip to just after the `end` that closes the current nesting level.
    fn recover(&mut self, end: K) -> Token {
        let start = Self::opposite(end);
        self.recovery = true;
        let mut nest = 0;
        loop {
            let tok = self.read();
            let mut ty = tok.kind;
            if end == K::TemplateSeqEnd && ty == K::TemplateControl {
                ty = K::TemplateInterp;
            }
            if Some(ty) == start {
                nest += 1;
            } else if ty == end {
                if nest < 1 {
                    return tok;
                }
                nest -= 1;
            } else if ty == K::Eof {
                return tok;
            }
        }
    }

    /// hcl's `recoverOver`: skip past the next `start ... end` group.
    fn recover_over(&mut self, start: K) {
        loop {
            let tok = self.read();
            if tok.kind == start || tok.kind == K::Eof {
                break;
            }
        }
        if let Some(end) = Self::opposite(start) {
            self.recover(end);
        }
    }

    /// hcl's `recoverAfterBodyItem`: skip to the next newline outside any brackets.
    fn recover_after_body_item(&mut self) {
        self.recovery = true;
        let mut open: Vec<K> = Vec::new();
        loop {
            let tok = self.read();
            match tok.kind {
                K::Newline if open.is_empty() => break,
                K::Eof => break,
                K::OBrace
                | K::OBrack
                | K::OParen
                | K::OQuote
                | K::OHeredoc
                | K::TemplateInterp
                | K::TemplateControl => open.push(tok.kind),
                K::CBrace | K::CBrack | K::CParen | K::CQuote | K::CHeredoc => {
                    let opener = Self::opposite(tok.kind);
                    while let Some(&top) = open.last() {
                        if Some(top) == opener {
                            break;
                        }
                        open.pop();
                    }
                    open.pop();
                }
                K::TemplateSeqEnd => {
                    while let Some(&top) = open.last() {
                        if top == K::TemplateInterp || top == K::TemplateControl {
                            break;
                        }
                        open.pop();
                    }
                    open.pop();
                }
                _ => {}
            }
        }
    }

    // ----- limits -----------------------------------------------------------------

    /// Enter one level of recursive nesting; `false` (after reporting it once) when the
    /// limit is reached, in which case the caller must not recurse.
    fn enter(&mut self, at: Span) -> bool {
        if self.nest >= MAX_NESTING {
            if !self.nest_reported {
                self.nest_reported = true;
                self.err(
                    "Nesting too deep",
                    format!(
                        "This construct is nested more than {MAX_NESTING} levels deep, which is more than fn-hcl supports."
                    ),
                    at,
                );
            }
            self.recovery = true;
            return false;
        }
        self.nest += 1;
        true
    }

    /// Reports an operator or traversal chain that would make a tree deeper than
    /// [`MAX_EXPR_DEPTH`]; the caller stops extending it.
    fn too_complex(&mut self, at: Span) {
        if !self.nest_reported {
            self.nest_reported = true;
            self.err(
                "Expression too complex",
                format!(
                    "This expression is nested more than {MAX_EXPR_DEPTH} levels deep (counting operators, attribute accesses and brackets), which is more than fn-hcl supports."
                ),
                at,
            );
        }
        self.recovery = true;
    }

    fn leave(&mut self) {
        self.nest = self.nest.saturating_sub(1);
    }

    /// Rejects (and takes apart without recursion) an expression tree deeper than
    /// [`MAX_EXPR_DEPTH`].
    fn check_expr_depth(&mut self, expr: &mut Expr) {
        if expr_depth(expr) > MAX_EXPR_DEPTH {
            self.err(
                "Expression too complex",
                format!(
                    "This expression is nested more than {MAX_EXPR_DEPTH} levels deep (counting operators, attribute accesses and brackets), which is more than fn-hcl supports."
                ),
                expr.span,
            );
            self.recovery = true;
            let span = expr.span;
            dismantle(std::mem::replace(expr, placeholder(span)));
        }
    }

    // ----- bodies -----------------------------------------------------------------

    fn parse_body(&mut self, end: K) -> Body {
        let mut items = Vec::new();
        // Attribute names seen, for "Attribute redefined"; only used (`by_map`) once the
        // body has SMALL_BODY items.
        let mut attrs: HashMap<Str, Span, ahash::RandomState> = HashMap::default();
        let mut by_map = false;
        let start_range = self.prev_range();
        let end_range;
        loop {
            let next = self.peek();
            if next.kind == end {
                end_range = next.span;
                self.read();
                break;
            }
            match next.kind {
                K::Newline => {
                    self.read();
                }
                K::Ident => match self.parse_body_item() {
                    Some(BodyItem::Attribute(a)) => {
                        // Small bodies look for an earlier attribute of the same name
                        // among the items; large ones switch to a map once.
                        if !by_map && items.len() >= SMALL_BODY {
                            by_map = true;
                            for it in &items {
                                if let BodyItem::Attribute(x) = it {
                                    attrs.entry(x.name.name.clone()).or_insert(x.name.span);
                                }
                            }
                        }
                        let existing = if by_map {
                            attrs.get(&a.name.name).copied()
                        } else {
                            items.iter().find_map(|it| match it {
                                BodyItem::Attribute(x) if x.name.name == a.name.name => {
                                    Some(x.name.span)
                                }
                                _ => None,
                            })
                        };
                        if let Some(existing) = existing {
                            let detail = format!(
                                "The argument {:?} was already set at {}. Each argument may be set only once.",
                                &*a.name.name,
                                self.range_str(existing)
                            );
                            self.err("Attribute redefined", detail, a.name.span);
                        } else if by_map {
                            attrs.insert(a.name.name.clone(), a.name.span);
                        }
                        items.push(BodyItem::Attribute(a));
                    }
                    Some(b) => items.push(b),
                    None => {}
                },
                _ => {
                    let bad = self.read();
                    if !self.recovery {
                        match bad.kind {
                            K::OQuote => self.err(
                                "Invalid argument name",
                                "Argument names must not be quoted.",
                                bad.span,
                            ),
                            K::Eof => {
                                if end == K::CBrace {
                                    self.err(
                                        "Unclosed configuration block",
                                        "There is no closing brace for this block before the end of the file. This may be caused by incorrect brace nesting elsewhere in this file.",
                                        start_range,
                                    );
                                } else {
                                    self.err(
                                        "Unclosed configuration body",
                                        "Found end of file before the end of this configuration body.",
                                        start_range,
                                    );
                                }
                            }
                            _ => self.err(
                                "Argument or block definition required",
                                "An argument or block definition is required here.",
                                bad.span,
                            ),
                        }
                    }
                    end_range = self.prev_range();
                    self.recover(end);
                    break;
                }
            }
        }
        Body {
            items,
            span: between(start_range, end_range),
        }
    }

    fn parse_body_item(&mut self) -> Option<BodyItem> {
        let ident = self.read();
        if ident.kind != K::Ident {
            self.recover_after_body_item();
            self.err(
                "Argument or block definition required",
                "An argument or block definition is required here.",
                ident.span,
            );
            return None;
        }
        let next = self.peek();
        match next.kind {
            K::Equal => Some(BodyItem::Attribute(
                self.finish_parsing_body_attribute(ident, false),
            )),
            K::OQuote | K::OBrace | K::Ident => self.finish_parsing_body_block(ident),
            _ => {
                self.recover_after_body_item();
                self.err(
                    "Argument or block definition required",
                    "An argument or block definition is required here. To set an argument, use the equals sign \"=\" to introduce the argument value.",
                    ident.span,
                );
                None
            }
        }
    }

    /// The body of a one-line block `name { attr = expr }`.
    fn parse_single_attr_body(&mut self, open: Token) -> Body {
        let ident = self.read();
        if ident.kind != K::Ident {
            self.recover_after_body_item();
            self.err(
                "Argument or block definition required",
                "An argument or block definition is required here.",
                ident.span,
            );
            return Body {
                items: Vec::new(),
                span: open.span,
            };
        }
        let next = self.peek();
        match next.kind {
            K::Equal => {
                let attr = self.finish_parsing_body_attribute(ident, true);
                let span = attr.span;
                Body {
                    items: vec![BodyItem::Attribute(attr)],
                    span,
                }
            }
            K::OQuote | K::OBrace | K::Ident => {
                self.recover_after_body_item();
                let detail = format!(
                    "A single-line block definition can contain only a single argument. If you meant to define argument {:?}, use an equals sign to assign it a value. To define a nested block, place it on a line of its own within its parent block.",
                    self.text(ident)
                );
                self.err(
                    "Argument definition required",
                    detail,
                    between(ident.span, next.span),
                );
                Body {
                    items: Vec::new(),
                    span: open.span,
                }
            }
            _ => {
                self.recover_after_body_item();
                self.err(
                    "Argument or block definition required",
                    "An argument or block definition is required here. To set an argument, use the equals sign \"=\" to introduce the argument value.",
                    ident.span,
                );
                Body {
                    items: Vec::new(),
                    span: open.span,
                }
            }
        }
    }

    fn finish_parsing_body_attribute(&mut self, ident: Token, single_line: bool) -> Attribute {
        let eq = self.read();
        let mark = self.diags.len();
        let mut expr = self.parse_expression();
        self.check_expr_depth(&mut expr);
        let had_errors = self.diags.len() > mark;
        let end_range;
        if self.recovery && had_errors {
            end_range = self.prev_range();
            self.recover_after_body_item();
        } else {
            end_range = self.prev_range();
            if !single_line {
                let end = self.peek();
                if end.kind != K::Newline && end.kind != K::Eof {
                    if !self.recovery {
                        if end.kind == K::Comma {
                            self.err(
                                "Unexpected comma after argument",
                                "Argument definitions must be separated by newlines, not commas. An argument definition must end with a newline.",
                                end.span,
                            );
                        } else {
                            self.err(
                                "Missing newline after argument",
                                "An argument definition must end with a newline.",
                                end.span,
                            );
                        }
                    }
                    self.recover_after_body_item();
                } else {
                    self.read();
                }
            }
        }
        Attribute {
            name: self.ident(ident),
            expr,
            equals: eq.span,
            span: between(ident.span, end_range),
        }
    }

    fn finish_parsing_body_block(&mut self, ident: Token) -> Option<BodyItem> {
        let mut labels = Vec::new();
        let open;
        loop {
            let tok = self.peek();
            match tok.kind {
                K::OBrace => {
                    open = self.read();
                    break;
                }
                K::OQuote => {
                    let (value, span) = self.parse_quoted_string_literal();
                    labels.push(Label {
                        value: Str::from(value),
                        quoted: true,
                        span,
                    });
                }
                K::Ident => {
                    let t = self.read();
                    labels.push(Label {
                        value: Str::from(self.text(t)),
                        quoted: false,
                        span: t.span,
                    });
                }
                _ => {
                    match tok.kind {
                        K::Equal => self.err(
                            "Invalid block definition",
                            "The equals sign \"=\" indicates an argument definition, and must not be used when defining a block.",
                            tok.span,
                        ),
                        K::Newline => self.err(
                            "Invalid block definition",
                            "A block definition must have block content delimited by \"{\" and \"}\", starting on the same line as the block header.",
                            tok.span,
                        ),
                        _ => {
                            self.err_once(
                                "Invalid block definition",
                                "Either a quoted string block label or an opening brace (\"{\") is expected here.",
                                tok.span,
                            );
                        }
                    }
                    self.recover_after_body_item();
                    return None;
                }
            }
        }

        let body_mark = self.diags.len();
        let body;
        if !self.enter(open.span) {
            self.recover(K::CBrace);
            body = Body {
                items: Vec::new(),
                span: open.span,
            };
        } else {
            match self.peek().kind {
                K::Newline | K::Eof | K::CBrace => {
                    body = self.parse_body(K::CBrace);
                }
                _ => {
                    body = self.parse_single_attr_body(open);
                    let body_diags = self.diags.split_off(body_mark);
                    let next = self.peek();
                    match next.kind {
                        K::CBrace => {
                            self.read();
                        }
                        K::Comma => {
                            self.err(
                                "Invalid single-argument block definition",
                                "Single-line block syntax can include only one argument definition. To define multiple arguments, use the multi-line block syntax with one argument definition per line.",
                                next.span,
                            );
                            self.recover(K::CBrace);
                        }
                        K::Newline => {
                            self.err(
                                "Invalid single-argument block definition",
                                "An argument definition on the same line as its containing block creates a single-line block definition, which must also be closed on the same line. Place the block's closing brace immediately after the argument definition.",
                                next.span,
                            );
                            self.recover(K::CBrace);
                        }
                        _ => {
                            if !self.recovery {
                                if next.kind == K::Eof {
                                    self.err(
                                        "Unclosed configuration block",
                                        "There is no closing brace for this block before the end of the file. This may be caused by incorrect brace nesting elsewhere in this file.",
                                        open.span,
                                    );
                                } else {
                                    self.err(
                                        "Invalid single-argument block definition",
                                        "A single-line block definition must end with a closing brace immediately after its single argument definition.",
                                        next.span,
                                    );
                                }
                            }
                            self.recover(K::CBrace);
                        }
                    }
                    self.diags.extend(body_diags);
                }
            }
            self.leave();
        }
        let close = self.prev_range();

        let eol = self.peek();
        if eol.kind == K::Newline || eol.kind == K::Eof {
            self.read();
        } else {
            self.err_once(
                "Missing newline after block definition",
                "A block definition must end with a newline.",
                eol.span,
            );
            self.recover_after_body_item();
        }

        // A one-line block's body range is its attribute's; hcl's Body range for the
        // multi-line form runs from the opening to the closing brace.
        Some(BodyItem::Block(Block {
            kind: self.ident(ident),
            labels,
            body,
            open_brace: open.span,
            close_brace: close,
            span: between(ident.span, close),
        }))
    }

    // ----- expressions ------------------------------------------------------------

    fn parse_expression(&mut self) -> Expr {
        if self.nest >= MAX_NESTING {
            return self.nest_exceeded();
        }
        self.nest += 1;
        let e = self.parse_ternary_conditional();
        self.nest -= 1;
        e
    }

    #[inline(never)]
    fn nest_exceeded(&mut self) -> Expr {
        let at = self.peek().span;
        self.enter(at);
        placeholder(at)
    }

    fn parse_ternary_conditional(&mut self) -> Expr {
        let mark = self.diags.len();
        let cond = self.parse_binary_ops();
        if (self.recovery && self.diags.len() > mark) || self.peek().kind != K::Question {
            return cond;
        }
        self.finish_conditional(cond)
    }

    /// The `? then : otherwise` part of a conditional (kept out of the common path to
    /// keep the per-nesting-level stack small).
    #[inline(never)]
    fn finish_conditional(&mut self, cond: Expr) -> Expr {
        self.read();
        let mark = self.diags.len();
        let then = self.parse_expression();
        if self.recovery && self.diags.len() > mark {
            return cond;
        }
        let colon = self.peek();
        if colon.kind != K::Colon {
            self.err(
                "Missing false expression in conditional",
                "The conditional operator (...?...:...) requires a false expression, delimited by a colon.",
                colon.span,
            );
            return cond;
        }
        self.read();
        let mark = self.diags.len();
        let otherwise = self.parse_expression();
        if self.recovery && self.diags.len() > mark {
            return cond;
        }
        let span = between(cond.span, otherwise.span);
        Expr {
            kind: ExprKind::Conditional {
                cond: Box::new(cond),
                then: Box::new(then),
                otherwise: Box::new(otherwise),
            },
            span,
        }
    }

    /// A chain of binary operators, with hcl's six precedence levels (all
    /// left-associative). hcl recurses once per level; this is the equivalent operator
    /// precedence loop, which consumes the same tokens and builds the same tree (and
    /// gives up on the whole chain at the first operand error once in recovery mode,
    /// as hcl's levels all do).
    fn parse_binary_ops(&mut self) -> Expr {
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
        fn op_of(k: K) -> Option<BinaryOp> {
            Some(match k {
                K::Or => BinaryOp::Or,
                K::And => BinaryOp::And,
                K::EqualOp => BinaryOp::Eq,
                K::NotEqual => BinaryOp::Ne,
                K::GreaterThan => BinaryOp::Gt,
                K::GreaterThanEq => BinaryOp::Ge,
                K::LessThan => BinaryOp::Lt,
                K::LessThanEq => BinaryOp::Le,
                K::Plus => BinaryOp::Add,
                K::Minus => BinaryOp::Sub,
                K::Star => BinaryOp::Mul,
                K::Slash => BinaryOp::Div,
                K::Percent => BinaryOp::Mod,
                _ => return None,
            })
        }
        fn reduce(operands: &mut Vec<(Expr, u32)>, op: BinaryOp) -> u32 {
            let (rhs, dr) = operands.pop().unwrap_or((placeholder(Span::default()), 1));
            let (lhs, dl) = operands.pop().unwrap_or((placeholder(rhs.span), 1));
            let span = between(lhs.span, rhs.span);
            let d = 1 + dl.max(dr);
            operands.push((
                Expr {
                    kind: ExprKind::Binary {
                        op,
                        lhs: Box::new(lhs),
                        rhs: Box::new(rhs),
                    },
                    span,
                },
                d,
            ));
            d
        }

        let mark = self.diags.len();
        let first = self.parse_expression_with_traversals();
        if self.recovery && self.diags.len() > mark {
            return first;
        }
        if op_of(self.peek().kind).is_none() {
            return first;
        }
        let d0 = expr_depth(&first);
        let mut operands: Vec<(Expr, u32)> = vec![(first, d0)];
        let mut ops: Vec<BinaryOp> = Vec::new();
        let mut failed = false;
        while let Some(op) = op_of(self.peek().kind) {
            let at = self.peek().span;
            let mut too_deep = false;
            while let Some(&top) = ops.last() {
                if prec(top) < prec(op) {
                    break;
                }
                ops.pop();
                if reduce(&mut operands, top) >= MAX_EXPR_DEPTH {
                    too_deep = true;
                }
            }
            if too_deep {
                self.too_complex(at);
                failed = true;
                break;
            }
            self.read();
            let mark = self.diags.len();
            let rhs = self.parse_expression_with_traversals();
            if self.recovery && self.diags.len() > mark {
                failed = true;
                break;
            }
            let d = expr_depth(&rhs);
            operands.push((rhs, d));
            ops.push(op);
        }
        if failed {
            // The result is discarded with the error; return the first operand.
            return operands
                .into_iter()
                .next()
                .map_or_else(|| placeholder(Span::default()), |(e, _)| e);
        }
        while let Some(top) = ops.pop() {
            reduce(&mut operands, top);
        }
        operands
            .pop()
            .map_or_else(|| placeholder(Span::default()), |(e, _)| e)
    }

    fn parse_expression_with_traversals(&mut self) -> Expr {
        let term = self.parse_expression_term();
        self.parse_expression_traversals(term)
    }

    fn number_check(&mut self, tok: Token) {
        if !valid_number(self.text(tok)) {
            self.err(
                "Invalid number literal",
                "Failed to recognize the value of this number literal.",
                tok.span,
            );
        }
    }

    fn parse_expression_traversals(&mut self, from: Expr) -> Expr {
        let from_span = from.span;
        let mut ret = from;
        let mut depth: Option<u32> = None;
        loop {
            let next = self.peek();
            if matches!(next.kind, K::Dot | K::OBrack) {
                let d = match depth {
                    None => expr_depth(&ret),
                    Some(d) => 1 + d.max(last_child_depth(&ret)),
                };
                depth = Some(d);
                if d >= MAX_EXPR_DEPTH {
                    self.too_complex(next.span);
                    break;
                }
            }
            ret = match next.kind {
                K::Dot => self.trav_dot(ret, from_span),
                K::OBrack => self.trav_bracket(ret, from_span),
                _ => break,
            };
        }
        ret
    }

    /// One `.name`, `.0` or `.*...` step of a traversal.
    #[inline(never)]
    fn trav_dot(&mut self, mut ret: Expr, from_span: Span) -> Expr {
        let dot = self.read();
        let attr = self.peek();
        match attr.kind {
            K::Ident => {
                let attr = self.read();
                let span = between(ret.span, attr.span);
                ret = Expr {
                    kind: ExprKind::GetAttr {
                        obj: Box::new(ret),
                        name: self.ident(attr),
                    },
                    span,
                };
            }
            K::NumberLit => {
                let num = self.read();
                let text = self.text(num);
                if let Some((a, b)) = text.split_once('.') {
                    let detail = format!(
                        "When using the legacy index syntax, chaining two indexes together is not permitted. Use the proper index syntax instead, like [{a}][{b}]."
                    );
                    self.err("Invalid legacy index syntax", detail, num.span);
                } else {
                    self.number_check(num);
                }
                let span = between(ret.span, num.span);
                ret = Expr {
                    kind: ExprKind::Index {
                        obj: Box::new(ret),
                        key: Box::new(Expr {
                            kind: ExprKind::Number(Str::from(text)),
                            span: num.span,
                        }),
                        legacy: true,
                    },
                    span,
                };
            }
            K::Star => {
                let marker = self.read();
                let item = Expr {
                    kind: ExprKind::SplatItem,
                    span: between(dot.span, marker.span),
                };
                let first_range = self.peek().span;
                let mut last_range = marker.span;
                let mut each = item;
                let mut broken = false;
                let mut steps = 0u32;
                while self.peek().kind == K::Dot {
                    steps += 1;
                    if steps >= MAX_EXPR_DEPTH {
                        let at = self.peek().span;
                        self.too_complex(at);
                        broken = true;
                        break;
                    }
                    let dot2 = self.read();
                    if self.peek().kind == K::NumberLit {
                        let num = self.read();
                        let text = self.text(num);
                        if let Some((a, b)) = text.split_once('.') {
                            let detail = format!(
                                "When using the legacy index syntax, chaining two indexes together is not permitted. Use the proper index syntax with a full splat expression [*] instead, like [{a}][{b}]."
                            );
                            // hcl reports this at the token after the splat's dot.
                            self.err("Invalid legacy index syntax", detail, attr.span);
                        } else {
                            self.number_check(num);
                        }
                        let _ = dot2;
                        each = Expr {
                            kind: ExprKind::Index {
                                obj: Box::new(each),
                                key: Box::new(Expr {
                                    kind: ExprKind::Number(Str::from(text)),
                                    span: num.span,
                                }),
                                legacy: true,
                            },
                            span: between(first_range, num.span),
                        };
                        last_range = num.span;
                        continue;
                    }
                    if self.peek().kind != K::Ident {
                        if !self.recovery {
                            let p = self.peek();
                            if p.kind == K::Star {
                                self.err(
                                    "Nested splat expression not allowed",
                                    "A splat expression (*) cannot be used inside another attribute-only splat expression.",
                                    p.span,
                                );
                            } else {
                                self.err(
                                    "Invalid attribute name",
                                    "An attribute name is required after a dot.",
                                    attr.span,
                                );
                            }
                        }
                        self.recovery = true;
                        broken = true;
                        break;
                    }
                    let name = self.read();
                    each = Expr {
                        kind: ExprKind::GetAttr {
                            obj: Box::new(each),
                            name: self.ident(name),
                        },
                        span: between(first_range, name.span),
                    };
                    last_range = name.span;
                }
                if broken {
                    return ret;
                }
                let span = between(from_span, last_range);
                ret = Expr {
                    kind: ExprKind::Splat {
                        source: Box::new(ret),
                        each: Box::new(each),
                        full: false,
                    },
                    span,
                };
            }
            _ => {
                self.err(
                    "Invalid attribute name",
                    "An attribute name is required after a dot.",
                    attr.span,
                );
                let span = between(from_span, dot.span);
                ret = placeholder(span);
                self.recovery = true;
            }
        }
        ret
    }

    /// One `[key]` or `[*]...` step of a traversal.
    #[inline(never)]
    fn trav_bracket(&mut self, mut ret: Expr, from_span: Span) -> Expr {
        let open = self.read();
        if self.peek().kind == K::Star {
            self.read();
            let mut close = self.read();
            if close.kind != K::CBrack && !self.recovery {
                self.err(
                    "Missing close bracket on splat index",
                    "The star for a full splat operator must be immediately followed by a closing bracket (\"]\").",
                    close.span,
                );
                close = self.recover(K::CBrack);
            }
            let item = Expr {
                kind: ExprKind::SplatItem,
                span: between(open.span, close.span),
            };
            let each = if self.enter(item.span) {
                let e = self.parse_expression_traversals(item);
                self.leave();
                e
            } else {
                item
            };
            let span = between(from_span, each.span);
            ret = Expr {
                kind: ExprKind::Splat {
                    source: Box::new(ret),
                    each: Box::new(each),
                    full: true,
                },
                span,
            };
        } else {
            self.nl_stack.push(false);
            let mark = self.diags.len();
            let key = self.parse_expression();
            let close;
            if self.recovery && self.diags.len() > mark {
                close = self.recover(K::CBrack);
            } else {
                let c = self.read();
                if c.kind != K::CBrack && !self.recovery {
                    self.err(
                        "Missing close bracket on index",
                        "The index operator must end with a closing bracket (\"]\").",
                        c.span,
                    );
                    close = self.recover(K::CBrack);
                } else {
                    close = c;
                }
            }
            self.nl_stack.pop();
            let span = between(ret.span, between(open.span, close.span));
            ret = Expr {
                kind: ExprKind::Index {
                    obj: Box::new(ret),
                    key: Box::new(key),
                    legacy: false,
                },
                span,
            };
        }
        ret
    }

    fn parse_expression_term(&mut self) -> Expr {
        // Each kind of term is its own function so that the recursion path for nested
        // brackets only carries the frames of the terms actually being parsed.
        let start = self.peek();
        match start.kind {
            K::OParen => self.term_paren(),
            K::NumberLit => self.term_number(),
            K::Ident => self.term_ident(),
            K::OQuote | K::OHeredoc => self.term_template(),
            K::Minus | K::Bang => self.term_unary(),
            K::OBrack => self.parse_tuple_cons(),
            K::OBrace => self.parse_object_cons(),
            _ => self.term_invalid(start),
        }
    }

    #[inline(never)]
    fn term_paren(&mut self) -> Expr {
        let open = self.read();
        self.nl_stack.push(false);
        let mark = self.diags.len();
        let expr = self.parse_expression();
        if self.diags.len() > mark {
            self.recover(K::CParen);
            self.nl_stack.pop();
            return expr;
        }
        let close = self.peek();
        if close.kind != K::CParen {
            self.err(
                "Unbalanced parentheses",
                "Expected a closing parenthesis to terminate the expression.",
                close.span,
            );
            self.recovery = true;
        }
        let cparen = self.read();
        self.nl_stack.pop();
        Expr {
            kind: ExprKind::Paren(Box::new(expr)),
            span: between(open.span, cparen.span),
        }
    }

    #[inline(never)]
    fn term_number(&mut self) -> Expr {
        let tok = self.read();
        self.number_check(tok);
        Expr {
            kind: ExprKind::Number(Str::from(self.text(tok))),
            span: tok.span,
        }
    }

    #[inline(never)]
    fn term_ident(&mut self) -> Expr {
        let tok = self.read();
        let nk = self.peek().kind;
        if nk == K::OParen || nk == K::DoubleColon {
            return self.finish_parsing_function_call(tok);
        }
        let kind = match self.text(tok) {
            "true" => ExprKind::Bool(true),
            "false" => ExprKind::Bool(false),
            "null" => ExprKind::Null,
            _ => ExprKind::Variable(self.ident(tok)),
        };
        Expr {
            kind,
            span: tok.span,
        }
    }

    /// A quoted template or heredoc. Templates count two nesting levels: their parser
    /// needs more stack per level than brackets do.
    #[inline(never)]
    fn term_template(&mut self) -> Expr {
        let at = self.peek().span;
        if !self.enter(at) {
            let open = self.read();
            let closer = if open.kind == K::OQuote {
                K::CQuote
            } else {
                K::CHeredoc
            };
            self.recover(closer);
            return placeholder(at);
        }
        let e = self.term_template_inner();
        self.leave();
        e
    }

    fn term_template_inner(&mut self) -> Expr {
        let open = self.read();
        let closer = if open.kind == K::OQuote {
            K::CQuote
        } else {
            K::CHeredoc
        };
        let flush = open.kind == K::OHeredoc && self.text(open).starts_with("<<-");
        let (parts, passthru) = self.parse_template_inner(closer, flush);
        let close_range = self.prev_range();
        let span = between(open.span, close_range);
        match passthru {
            Some(e) => Expr {
                kind: ExprKind::TemplateWrap(Box::new(e)),
                span,
            },
            None => Expr {
                kind: ExprKind::Template(Template { parts }),
                span,
            },
        }
    }

    #[inline(never)]
    fn term_unary(&mut self) -> Expr {
        let tok = self.read();
        if !self.enter(tok.span) {
            return placeholder(tok.span);
        }
        let operand = self.parse_expression_with_traversals();
        self.leave();
        let op = if tok.kind == K::Minus {
            UnaryOp::Neg
        } else {
            UnaryOp::Not
        };
        let span = between(tok.span, operand.span);
        Expr {
            kind: ExprKind::Unary {
                op,
                operand: Box::new(operand),
            },
            span,
        }
    }

    #[inline(never)]
    fn term_invalid(&mut self, start: Token) -> Expr {
        if !self.recovery {
            if start.kind == K::Eof {
                self.err(
                    "Missing expression",
                    "Expected the start of an expression, but found the end of the file.",
                    start.span,
                );
            } else {
                self.err(
                    "Invalid expression",
                    "Expected the start of an expression, but found an invalid expression token.",
                    start.span,
                );
            }
        }
        self.recovery = true;
        placeholder(start.span)
    }

    fn finish_parsing_function_call(&mut self, name: Token) -> Expr {
        let mut open = self.read();
        let mut name_str = self.text(name).to_string();
        let mut name_end = name.span;
        while open.kind == K::DoubleColon {
            let next_name = self.read();
            if next_name.kind != K::Ident {
                self.err(
                    "Missing function name",
                    "Function scope resolution symbol :: must be followed by a function name in this scope.",
                    next_name.span,
                );
                self.recover_over(K::OParen);
                return placeholder(between(name.span, next_name.span));
            }
            name_str.push_str("::");
            name_str.push_str(self.text(next_name));
            name_end = next_name.span;
            open = self.read();
        }
        let name_span = between(name.span, name_end);
        if open.kind != K::OParen {
            self.err(
                "Missing open parenthesis",
                "Function selector must be followed by an open parenthesis to begin the function call.",
                open.span,
            );
            self.recover_over(K::OParen);
            return placeholder(between(name.span, open.span));
        }

        let mut args = Vec::new();
        let mut expand_final = false;
        let mut close: Option<Token> = None;
        self.nl_stack.push(false);
        loop {
            let tok = self.peek();
            if tok.kind == K::CParen {
                close = Some(self.read());
                break;
            }
            let mark = self.diags.len();
            let arg = self.parse_expression();
            args.push(arg);
            if self.recovery && self.diags.len() > mark {
                let rt = self.recover(K::CParen);
                if rt.kind == K::CParen {
                    close = Some(rt);
                }
                break;
            }
            let sep = self.read();
            if sep.kind == K::CParen {
                close = Some(sep);
                break;
            }
            if sep.kind == K::Ellipsis {
                expand_final = true;
                if self.peek().kind != K::CParen {
                    self.err_once(
                        "Missing closing parenthesis",
                        "An expanded function argument (with ...) must be immediately followed by closing parentheses.",
                        sep.span,
                    );
                    close = Some(self.recover(K::CParen));
                } else {
                    close = Some(self.read());
                }
                break;
            }
            if sep.kind != K::Comma {
                if sep.kind == K::Eof {
                    self.err(
                        "Unterminated function call",
                        "There is no closing parenthesis for this function call before the end of the file. This may be caused by incorrect parenthesis nesting elsewhere in this file.",
                        between(name.span, open.span),
                    );
                } else {
                    self.err(
                        "Missing argument separator",
                        "A comma is required to separate each function argument from the next.",
                        sep.span,
                    );
                }
                close = Some(self.recover(K::CParen));
                break;
            }
            if self.peek().kind == K::CParen {
                close = Some(self.read());
                break;
            }
        }
        self.nl_stack.pop();
        let close_span = close.map_or(Span::default(), |t| t.span);
        let span = if close.is_some() {
            between(name_span, close_span)
        } else {
            name_span
        };
        Expr {
            kind: ExprKind::Call {
                name: Ident {
                    name: Str::from(name_str),
                    span: name_span,
                },
                args,
                expand_final,
                open_paren: open.span,
                close_paren: close_span,
            },
            span,
        }
    }

    fn parse_tuple_cons(&mut self) -> Expr {
        let open = self.read();
        self.nl_stack.push(false);
        let r = self.parse_tuple_cons_inner(open);
        self.nl_stack.pop();
        r
    }

    fn parse_tuple_cons_inner(&mut self, open: Token) -> Expr {
        if self.is_keyword(self.peek(), "for") {
            return self.finish_parsing_for_expr(open);
        }
        let mut exprs = Vec::new();
        let close;
        loop {
            let next = self.peek();
            if next.kind == K::CBrack {
                close = self.read();
                break;
            }
            let mark = self.diags.len();
            let e = self.parse_expression();
            exprs.push(e);
            if self.recovery && self.diags.len() > mark {
                close = self.recover(K::CBrack);
                break;
            }
            let next = self.peek();
            if next.kind == K::CBrack {
                close = self.read();
                break;
            }
            if next.kind != K::Comma {
                close = self.tuple_separator_error(next, open);
                break;
            }
            self.read();
        }
        Expr {
            kind: ExprKind::Tuple(exprs),
            span: between(open.span, close.span),
        }
    }

    #[inline(never)]
    fn tuple_separator_error(&mut self, next: Token, open: Token) -> Token {
        if !self.recovery {
            if next.kind == K::Eof {
                self.err(
                    "Unterminated tuple constructor expression",
                    "There is no corresponding closing bracket before the end of the file. This may be caused by incorrect bracket nesting elsewhere in this file.",
                    open.span,
                );
            } else {
                self.err(
                    "Missing item separator",
                    "Expected a comma to mark the beginning of the next item.",
                    next.span,
                );
            }
        }
        self.recover(K::CBrack)
    }

    fn parse_object_cons(&mut self) -> Expr {
        let open = self.read();
        self.nl_stack.push(false);
        let is_for = self.is_keyword(self.peek(), "for");
        self.nl_stack.pop();
        if is_for {
            self.nl_stack.push(false);
            let r = self.finish_parsing_for_expr(open);
            self.nl_stack.pop();
            return r;
        }
        self.nl_stack.push(true);
        let r = self.parse_object_cons_inner(open);
        self.nl_stack.pop();
        r
    }

    fn parse_object_cons_inner(&mut self, open: Token) -> Expr {
        let mut items = Vec::new();
        let close;
        loop {
            let next = self.peek();
            if next.kind == K::Newline {
                self.read();
                continue;
            }
            if next.kind == K::CBrace {
                close = self.read();
                break;
            }
            let force_non_literal = next.kind == K::OParen;
            let mark = self.diags.len();
            let key = self.parse_expression();
            if self.recovery && self.diags.len() > mark {
                close = self.recover(K::CBrace);
                break;
            }
            let next = self.peek();
            if next.kind != K::Equal && next.kind != K::Colon {
                if !self.recovery {
                    match next.kind {
                        K::Newline | K::Comma => self.err(
                            "Missing attribute value",
                            "Expected an attribute value, introduced by an equals sign (\"=\").",
                            next.span,
                        ),
                        K::Ident => self.err(
                            "Missing key/value separator",
                            "Expected an equals sign (\"=\") to mark the beginning of the attribute value. If you intended to given an attribute name containing periods or spaces, write the name in quotes to create a string literal.",
                            next.span,
                        ),
                        K::Eof => self.err(
                            "Unterminated object constructor expression",
                            "There is no corresponding closing brace before the end of the file. This may be caused by incorrect brace nesting elsewhere in this file.",
                            open.span,
                        ),
                        _ => self.err(
                            "Missing key/value separator",
                            "Expected an equals sign (\"=\") to mark the beginning of the attribute value.",
                            next.span,
                        ),
                    }
                }
                close = self.recover(K::CBrace);
                break;
            }
            self.read();
            let mark = self.diags.len();
            let value = self.parse_expression();
            let key = object_key(key, force_non_literal);
            items.push(ObjectItem { key, value });
            if self.recovery && self.diags.len() > mark {
                close = self.recover(K::CBrace);
                break;
            }
            let next = self.peek();
            if next.kind == K::CBrace {
                close = self.read();
                break;
            }
            if next.kind != K::Comma && next.kind != K::Newline {
                if !self.recovery {
                    if next.kind == K::Eof {
                        self.err(
                            "Unterminated object constructor expression",
                            "There is no corresponding closing brace before the end of the file. This may be caused by incorrect brace nesting elsewhere in this file.",
                            open.span,
                        );
                    } else {
                        self.err(
                            "Missing attribute separator",
                            "Expected a newline or comma to mark the beginning of the next attribute.",
                            next.span,
                        );
                    }
                }
                close = self.recover(K::CBrace);
                break;
            }
            self.read();
        }
        Expr {
            kind: ExprKind::Object(items),
            span: between(open.span, close.span),
        }
    }

    fn for_error(&mut self, detail: &str, close_kind: K, open: Token) -> Expr {
        let at = self.peek().span;
        self.err_once("Invalid 'for' expression", detail, at);
        let close = self.recover(close_kind);
        placeholder(between(open.span, close.span))
    }

    fn finish_parsing_for_expr(&mut self, open: Token) -> Expr {
        self.read(); // "for"
        let make_obj = open.kind == K::OBrace;
        let close_kind = if make_obj { K::CBrace } else { K::CBrack };

        if self.peek().kind != K::Ident {
            return self.for_error(
                "For expression requires variable name after 'for'.",
                close_kind,
                open,
            );
        }
        let first = self.read();
        let mut key_var = None;
        let mut value_var = self.ident(first);
        if self.peek().kind == K::Comma {
            self.read();
            if self.peek().kind != K::Ident {
                return self.for_error(
                    "For expression requires value variable name after comma.",
                    close_kind,
                    open,
                );
            }
            let v = self.read();
            key_var = Some(value_var);
            value_var = self.ident(v);
        }
        if !self.is_keyword(self.peek(), "in") {
            return self.for_error(
                "For expression requires the 'in' keyword after its name declarations.",
                close_kind,
                open,
            );
        }
        self.read();

        let mark = self.diags.len();
        let collection = self.parse_expression();
        if self.recovery && self.diags.len() > mark {
            let close = self.recover(close_kind);
            return placeholder(between(open.span, close.span));
        }
        if self.peek().kind != K::Colon {
            return self.for_error(
                "For expression requires a colon after the collection expression.",
                close_kind,
                open,
            );
        }
        self.read();

        let mark = self.diags.len();
        let mut value_expr = self.parse_expression();
        let mut key_expr = None;
        if self.peek().kind == K::FatArrow {
            self.read();
            key_expr = Some(value_expr);
            value_expr = self.parse_expression();
        }
        if self.recovery && self.diags.len() > mark {
            let close = self.recover(close_kind);
            return placeholder(between(open.span, close.span));
        }

        let mut group = false;
        let mut ellipsis = None;
        if self.peek().kind == K::Ellipsis {
            ellipsis = Some(self.read());
            group = true;
        }

        let mut cond = None;
        if self.is_keyword(self.peek(), "if") {
            self.read();
            let mark = self.diags.len();
            let c = self.parse_expression();
            if self.recovery && self.diags.len() > mark {
                let close = self.recover(close_kind);
                return placeholder(between(open.span, close.span));
            }
            cond = Some(c);
        }

        let close = if self.peek().kind == close_kind {
            self.read()
        } else {
            let at = self.peek().span;
            self.err_once(
                "Invalid 'for' expression",
                "Extra characters after the end of the 'for' expression.",
                at,
            );
            self.recover(close_kind)
        };

        if !make_obj {
            if let Some(k) = &key_expr {
                let at = k.span;
                self.err(
                    "Invalid 'for' expression",
                    "Key expression is not valid when building a tuple.",
                    at,
                );
            }
            if let Some(e) = ellipsis {
                self.err(
                    "Invalid 'for' expression",
                    "Grouping ellipsis (...) cannot be used when building a tuple.",
                    e.span,
                );
            }
        } else if key_expr.is_none() {
            let at = value_expr.span;
            self.err(
                "Invalid 'for' expression",
                "Key expression is required when building an object.",
                at,
            );
        }

        Expr {
            kind: ExprKind::For(Box::new(ForExpr {
                key_var,
                value_var,
                collection,
                key_expr,
                value_expr,
                cond,
                group,
            })),
            span: between(open.span, close.span),
        }
    }

    /// A quoted string without template sequences (block labels).
    fn parse_quoted_string_literal(&mut self) -> (String, Span) {
        let oquote = self.read();
        let mut ret = String::new();
        let end_range;
        loop {
            let tok = self.read();
            match tok.kind {
                K::CQuote => {
                    end_range = tok.span;
                    break;
                }
                K::QuotedLit => {
                    let s = self.decode_literal(tok, true);
                    ret.push_str(&s);
                }
                K::TemplateControl | K::TemplateInterp => {
                    let which = if tok.kind == K::TemplateControl {
                        "%"
                    } else {
                        "$"
                    };
                    self.err(
                        "Invalid string literal",
                        format!(
                            "Template sequences are not allowed in this string. To include a literal {which:?}, double it (as \"{which}{which}\") to escape it."
                        ),
                        tok.span,
                    );
                    ret.push_str(which);
                    ret.push_str("{ ... }");
                    self.recover(K::TemplateSeqEnd);
                }
                K::Eof => {
                    self.err(
                        "Unterminated string literal",
                        "Unable to find the closing quote mark before the end of the file.",
                        tok.span,
                    );
                    end_range = tok.span;
                    break;
                }
                _ => {
                    self.err(
                        "Invalid string literal",
                        "This item is not valid in a string literal.",
                        tok.span,
                    );
                    self.recover(K::CQuote);
                    end_range = tok.span;
                    break;
                }
            }
        }
        (ret, between(oquote.span, end_range))
    }

    /// hcl's `ParseStringLiteralToken`: decodes escapes (quoted) or only `$${`/`%%{`
    /// (heredoc), reporting bad escapes with the range of the escape.
    fn decode_literal(&mut self, tok: Token, quoted: bool) -> String {
        let text = self.text(tok);
        let b = text.as_bytes();
        let mut out = String::with_capacity(text.len());
        let mut pos = tok.span.start;
        let mut i = 0;
        let mut lit_start = 0;
        while i < b.len() {
            let c = b[i];
            // Length of a special slice starting here (0 = ordinary character).
            let special = match c {
                b'\\' if quoted => {
                    if i + 1 >= b.len() {
                        1
                    } else if b[i + 1] == b'u' || b[i + 1] == b'U' {
                        let max = if b[i + 1] == b'u' { 4 } else { 8 };
                        let mut n = 0;
                        while n < max && b.get(i + 2 + n).is_some_and(u8::is_ascii_hexdigit) {
                            n += 1;
                        }
                        2 + n
                    } else {
                        1 + text[i + 1..].chars().next().map_or(0, char::len_utf8)
                    }
                }
                // hcl's scanner makes every `$`/`%` its own token unless it starts
                // `$${`/`%%{`, so `$$` before anything but `{` is two literal
                // characters and `$$${` is `$` then the escape `$${`.
                b'$' | b'%' => {
                    if b.get(i + 1) == Some(&c) && b.get(i + 2) == Some(&b'{') {
                        3
                    } else {
                        1
                    }
                }
                b'\r' | b'\n' => {
                    if c == b'\r' && b.get(i + 1) == Some(&b'\n') {
                        2
                    } else {
                        1
                    }
                }
                _ => 0,
            };
            if special == 0 {
                i += text[i..].chars().next().map_or(1, char::len_utf8);
                continue;
            }
            // Flush the ordinary text before this slice.
            if lit_start < i {
                let lit = &text[lit_start..i];
                out.push_str(lit);
                pos = advance(pos, lit);
            }
            let slice = &text[i..i + special];
            let start = pos;
            pos = advance(pos, slice);
            let rng = Span::new(tok.span.file, start, pos);
            i += special;
            lit_start = i;
            let sb = slice.as_bytes();
            match sb[0] {
                b'\\' => {
                    if sb.len() < 2 {
                        self.err(
                            "Invalid escape sequence",
                            "Backslash must be followed by an escape sequence selector character.",
                            rng,
                        );
                        out.push_str(slice);
                        continue;
                    }
                    match sb[1] {
                        b'n' => out.push('\n'),
                        b'r' => out.push('\r'),
                        b't' => out.push('\t'),
                        b'"' => out.push('"'),
                        b'\\' => out.push('\\'),
                        b'u' | b'U' => {
                            if sb[1] == b'u' && sb.len() != 6 {
                                self.err(
                                    "Invalid escape sequence",
                                    "The \\u escape sequence must be followed by four hexadecimal digits.",
                                    rng,
                                );
                                out.push_str(slice);
                                continue;
                            }
                            if sb[1] == b'U' && sb.len() != 10 {
                                self.err(
                                    "Invalid escape sequence",
                                    "The \\U escape sequence must be followed by eight hexadecimal digits.",
                                    rng,
                                );
                                out.push_str(slice);
                                continue;
                            }
                            let num = u32::from_str_radix(&slice[2..], 16).unwrap_or(u32::MAX);
                            match char::from_u32(num) {
                                Some(ch) => out.push(ch),
                                None => {
                                    self.err(
                                        "Invalid escape sequence",
                                        format!("Cannot encode character U+{num:04x} in UTF-8."),
                                        rng,
                                    );
                                    out.push_str(slice);
                                }
                            }
                        }
                        _ => {
                            let rest = &slice[1..];
                            self.err(
                                "Invalid escape sequence",
                                format!(
                                    "The symbol {} is not a valid escape sequence selector.",
                                    crate::text::quote::go_quote(rest)
                                ),
                                rng,
                            );
                            out.push_str(rest);
                        }
                    }
                }
                b'$' | b'%' if sb.len() == 3 => {
                    out.push(sb[0] as char);
                    out.push('{');
                }
                _ => out.push_str(slice),
            }
        }
        if lit_start < b.len() {
            out.push_str(&text[lit_start..]);
        }
        out
    }

    // ----- templates --------------------------------------------------------------

    /// Parses template content up to `end`; returns the parts, or the lone interpolated
    /// expression when the template is exactly one `${...}` (hcl's TemplateWrapExpr).
    fn parse_template_inner(&mut self, end: K, flush: bool) -> (Vec<TemplatePart>, Option<Expr>) {
        let mut parts = self.parse_template_parts(end);
        if flush {
            flush_heredoc(&mut parts, self.src);
        }
        meld_literals(&mut parts);
        if parts.len() == 2 && matches!(parts[0], TT::Interp { .. }) {
            if let Some(TT::Interp { expr }) = parts.into_iter().next() {
                return (Vec::new(), Some(expr));
            }
            return (Vec::new(), None);
        }
        let mut it = parts.into_iter().peekable();
        let out = self.tmpl_root(&mut it);
        (out, None)
    }

    fn parse_template_parts(&mut self, end: K) -> Vec<TT> {
        let mut parts: Vec<TT> = Vec::new();
        let start_range = self.peek().span;
        let mut ltrim_next = false;
        let mut next_can_trim_prev = false;
        let end_range;
        loop {
            let next = self.read();
            if next.kind == end {
                end_range = next.span;
                break;
            }
            let ltrim = ltrim_next;
            ltrim_next = false;
            let can_trim_prev = next_can_trim_prev;
            next_can_trim_prev = false;
            match next.kind {
                K::StringLit | K::QuotedLit => {
                    let mut s = self.decode_literal(next, next.kind == K::QuotedLit);
                    if ltrim {
                        s = s.trim_start_matches(char::is_whitespace).to_string();
                    }
                    parts.push(TT::Lit {
                        text: s,
                        span: next.span,
                    });
                    next_can_trim_prev = true;
                }
                K::TemplateInterp => {
                    self.tmpl_interp(
                        next,
                        end,
                        start_range,
                        can_trim_prev,
                        &mut parts,
                        &mut ltrim_next,
                    );
                }
                K::TemplateControl => {
                    self.tmpl_control(next, can_trim_prev, &mut parts, &mut ltrim_next);
                }
                _ => {
                    self.err_once(
                        "Unterminated template string",
                        "No closing marker was found for the string.",
                        next.span,
                    );
                    let fin = self.recover(end);
                    end_range = fin.span;
                    break;
                }
            }
        }
        if parts.is_empty() {
            // Go (hcl v2.24) reports an empty template's literal at the zero-width range
            // just after its closing marker (`tonumber("")` points after the `""`).
            let at = end_range.end;
            parts.push(TT::Lit {
                text: String::new(),
                span: Span::new(start_range.file, at, at),
            });
        }
        parts.push(TT::End { span: end_range });
        parts
    }

    /// A `${ ... }` sequence inside a template.
    #[inline(never)]
    fn tmpl_interp(
        &mut self,
        next: Token,
        end: K,
        start_range: Span,
        can_trim_prev: bool,
        parts: &mut Vec<TT>,
        ltrim_next: &mut bool,
    ) {
        self.open_seq(next, can_trim_prev, parts);
        let expr = self.parse_expression();
        self.close_seq(ltrim_next, |p, close| match close.kind {
            K::Eof => p.err(
                "Unclosed template interpolation sequence",
                "There is no closing brace for this interpolation sequence before the end of the file. This might be caused by incorrect nesting inside the given expression.",
                start_range,
            ),
            K::Colon => p.err(
                "Extra characters after interpolation expression",
                "Template interpolation doesn't expect a colon at this location. Did you intend this to be a literal sequence to be processed as part of another language? If so, you can escape it by starting with \"$${\" instead of just \"${\".",
                close.span,
            ),
            K::CQuote | K::OQuote if end == K::CQuote => p.err(
                "Unclosed template interpolation sequence",
                "There is no closing brace for this interpolation sequence before the end of the quoted template. This might be caused by incorrect nesting inside the given expression.",
                start_range,
            ),
            _ => p.err(
                "Extra characters after interpolation expression",
                "Expected a closing brace to end the interpolation expression, but found extra characters.\n\nThis can happen when you include interpolation syntax for another language, such as shell scripting, but forget to escape the interpolation start token. If this is an embedded sequence for another language, escape it by starting with \"$${\" instead of just \"${\".",
                close.span,
            ),
        });
        parts.push(TT::Interp { expr });
    }

    /// A `%{ ... }` directive inside a template.
    #[inline(never)]
    fn tmpl_control(
        &mut self,
        next: Token,
        can_trim_prev: bool,
        parts: &mut Vec<TT>,
        ltrim_next: &mut bool,
    ) {
        self.open_seq(next, can_trim_prev, parts);
        let kw = self.peek();
        let part = if kw.kind != K::Ident {
            self.err_once(
                "Invalid template directive",
                "A template directive keyword (\"if\", \"for\", etc) is expected at the beginning of a %{ sequence.",
                kw.span,
            );
            None
        } else {
            self.read();
            self.directive(next, kw)
        };
        let Some(part) = part else {
            self.recover(K::TemplateSeqEnd);
            self.nl_stack.pop();
            return;
        };
        parts.push(part);
        let kw_text = self.text(kw);
        self.close_seq(ltrim_next, |p, close| {
            p.err(
                &format!("Extra characters in {kw_text} marker"),
                "Expected a closing brace to end the sequence, but found extra characters.",
                close.span,
            )
        });
    }

    /// The start of a `${` or `%{` sequence (`next`): `${~` trims the literal before it.
    fn open_seq(&mut self, next: Token, can_trim_prev: bool, parts: &mut [TT]) {
        if can_trim_prev && self.text(next).ends_with('~') {
            trim_prev_literal(parts);
        }
        self.nl_stack.push(false);
    }

    /// The end of a template sequence: its closing brace (`~}` trims the literal after
    /// it), or whatever stands there instead, reported by `extra` unless recovering.
    fn close_seq(&mut self, ltrim_next: &mut bool, extra: impl FnOnce(&mut Self, Token)) {
        let close = self.peek();
        if close.kind != K::TemplateSeqEnd {
            if !self.recovery {
                extra(self, close);
            }
            self.recover(K::TemplateSeqEnd);
        } else {
            self.read();
            if self.text(close).starts_with('~') {
                *ltrim_next = true;
            }
        }
        self.nl_stack.pop();
    }

    /// The directive the keyword `kw` (read) of the sequence opened by `open` starts, up
    /// to its closing brace; `None` after reporting an invalid one.
    fn directive(&mut self, open: Token, kw: Token) -> Option<TT> {
        let kw_text = self.text(kw);
        Some(match kw_text {
            "if" => {
                let cond = self.parse_expression();
                let span = between(open.span, self.peek().span);
                TT::If { cond, span }
            }
            "else" | "endif" | "endfor" => {
                let kind = match kw_text {
                    "else" => Ctrl::Else,
                    "endif" => Ctrl::EndIf,
                    _ => Ctrl::EndFor,
                };
                let span = between(open.span, self.peek().span);
                TT::EndCtrl { kind, span }
            }
            "for" => return self.for_directive(open),
            _ => {
                let suggestion = crate::text::suggest::suggest(
                    kw_text,
                    ["if", "for", "else", "endif", "endfor"],
                )
                .map(|s| format!(" Did you mean {s:?}?"))
                .unwrap_or_default();
                self.err_once(
                    "Invalid template control keyword",
                    format!("{kw_text:?} is not a valid template control keyword.{suggestion}"),
                    kw.span,
                );
                return None;
            }
        })
    }

    /// A `%{ for KEY, VALUE in COLLECTION }` directive after its keyword; `None` after
    /// reporting an invalid one.
    fn for_directive(&mut self, open: Token) -> Option<TT> {
        let invalid = |p: &mut Self, detail: &str| {
            let at = p.peek().span;
            p.err_once("Invalid 'for' directive", detail, at);
            None
        };
        if self.peek().kind != K::Ident {
            return invalid(self, "For directive requires variable name after 'for'.");
        }
        let first = self.read();
        let mut key = None;
        let mut val = self.ident(first);
        if self.peek().kind == K::Comma {
            self.read();
            if self.peek().kind != K::Ident {
                return invalid(
                    self,
                    "For directive requires value variable name after comma.",
                );
            }
            let v = self.read();
            key = Some(val);
            val = self.ident(v);
        }
        if !self.is_keyword(self.peek(), "in") {
            return invalid(self, "For directive requires 'in' keyword after names.");
        }
        self.read();
        let coll = self.parse_expression();
        let span = between(open.span, self.peek().span);
        Some(TT::For {
            key,
            val,
            coll,
            span,
        })
    }

    fn tmpl_root(
        &mut self,
        it: &mut std::iter::Peekable<std::vec::IntoIter<TT>>,
    ) -> Vec<TemplatePart> {
        let mut out = Vec::new();
        while let Some(t) = it.peek() {
            if matches!(t, TT::End { .. }) {
                break;
            }
            if let Some(p) = self.tmpl_expr(it) {
                out.push(p);
            }
        }
        out
    }

    fn tmpl_expr(
        &mut self,
        it: &mut std::iter::Peekable<std::vec::IntoIter<TT>>,
    ) -> Option<TemplatePart> {
        let tok = it.next()?;
        match tok {
            TT::Lit { text, span } => Some(TemplatePart::Literal {
                text: Str::from(text),
                span,
            }),
            TT::Interp { expr } => Some(TemplatePart::Interp(expr)),
            TT::If { cond, span } => {
                let c = self.tmpl_directive(Ctrl::EndIf, span, it)?;
                Some(TemplatePart::If {
                    cond,
                    then: Template { parts: c.then },
                    otherwise: c.otherwise.map(|parts| Template { parts }),
                    span: between(span, c.end),
                })
            }
            TT::For {
                key,
                val,
                coll,
                span,
            } => {
                let c = self.tmpl_directive(Ctrl::EndFor, span, it)?;
                Some(TemplatePart::For {
                    key_var: key,
                    value_var: val,
                    collection: coll,
                    body: Template { parts: c.then },
                    span: between(span, c.end),
                })
            }
            TT::End { span } => {
                self.err(
                    "Unexpected end of template",
                    "The control directives within this template are unbalanced.",
                    span,
                );
                None
            }
            TT::EndCtrl { kind, span } => {
                self.err(
                    &format!("Unexpected {} directive", kind.name()),
                    "The control directives within this template are unbalanced.",
                    span,
                );
                None
            }
        }
    }

    /// The parts of an `%{if}` (`end`: [`Ctrl::EndIf`]) or `%{for}` ([`Ctrl::EndFor`])
    /// directive opened at `open`, up to its end directive. `None` after an error
    /// (reported with hcl's messages) or past the nesting limit.
    fn tmpl_directive(
        &mut self,
        end: Ctrl,
        open: Span,
        it: &mut std::iter::Peekable<std::vec::IntoIter<TT>>,
    ) -> Option<Clauses> {
        if !self.enter(open) {
            skip_to_end(it);
            return None;
        }
        let r = self.tmpl_clauses(end, open, it);
        self.leave();
        r
    }

    /// [`Parser::tmpl_directive`] within the nesting limit.
    fn tmpl_clauses(
        &mut self,
        end: Ctrl,
        open: Span,
        it: &mut std::iter::Peekable<std::vec::IntoIter<TT>>,
    ) -> Option<Clauses> {
        let is_if = end == Ctrl::EndIf;
        let mut then = Vec::new();
        let mut otherwise: Option<Vec<TemplatePart>> = None;
        loop {
            match it.peek() {
                None => return None,
                Some(TT::End { span }) => {
                    let span = *span;
                    let (kw, end_kw) = if is_if {
                        ("if", "endif")
                    } else {
                        ("for", "endfor")
                    };
                    let detail = format!(
                        "The {kw} directive at {} is missing its corresponding {end_kw} directive.",
                        self.range_str(open)
                    );
                    self.err("Unexpected end of template", detail, span);
                    return None;
                }
                Some(TT::EndCtrl { kind, span }) => {
                    let (kind, span) = (*kind, *span);
                    it.next();
                    if kind == end {
                        return Some(Clauses {
                            then,
                            otherwise,
                            end: span,
                        });
                    }
                    if kind == Ctrl::Else && is_if && otherwise.is_none() {
                        otherwise = Some(Vec::new());
                        continue;
                    }
                    let at = self.range_str(open);
                    let detail = match kind {
                        Ctrl::Else if is_if => {
                            format!("Already in the else clause for the if started at {at}.")
                        }
                        Ctrl::Else => "An else clause is not expected for a for directive.".into(),
                        Ctrl::EndFor => {
                            format!("Expecting an endif directive for the if started at {at}.")
                        }
                        Ctrl::EndIf => format!(
                            "Expecting an endfor directive corresponding to the for directive at {at}."
                        ),
                    };
                    self.err(
                        &format!("Unexpected {} directive", kind.name()),
                        detail,
                        span,
                    );
                    return None;
                }
                Some(_) => {
                    if let Some(p) = self.tmpl_expr(it) {
                        otherwise.as_mut().unwrap_or(&mut then).push(p);
                    }
                }
            }
        }
    }
}

/// After the nesting limit: drop the rest of a template's directives (the error is
/// already reported).
fn skip_to_end(it: &mut std::iter::Peekable<std::vec::IntoIter<TT>>) {
    while let Some(t) = it.peek() {
        if matches!(t, TT::End { .. }) {
            break;
        }
        if let Some(t) = it.next() {
            dismantle_tt(t);
        }
    }
}

fn dismantle_tt(t: TT) {
    match t {
        TT::Interp { expr } | TT::If { cond: expr, .. } | TT::For { coll: expr, .. } => {
            dismantle(expr)
        }
        _ => {}
    }
}

/// `${~`/`%{~`: trim trailing whitespace of the literal just before.
fn trim_prev_literal(parts: &mut [TT]) {
    if let Some(TT::Lit { text, .. }) = parts.last_mut() {
        let t = text.trim_end_matches(char::is_whitespace).len();
        text.truncate(t);
    }
}

/// hcl's `flushHeredocTemplateParts` for `<<-` heredocs: remove the smallest common
/// leading whitespace (counted in grapheme clusters) from each line's first literal.
fn flush_heredoc(parts: &mut [TT], _src: &str) {
    let mut min_spaces = usize::MAX;
    let mut newline = true;
    let mut adjust = Vec::new();
    for (i, t) in parts.iter().enumerate() {
        if newline {
            newline = false;
            let mut spaces = 0;
            match t {
                TT::Lit { text, .. } => {
                    let trimmed = text.trim_start_matches(char::is_whitespace);
                    if trimmed.is_empty() && text.ends_with('\n') {
                        spaces = usize::MAX;
                    } else {
                        let n = text.len() - trimmed.len();
                        spaces = grapheme_count(&text[..n]);
                        adjust.push(i);
                    }
                }
                TT::End { .. } => break,
                _ => {}
            }
            if spaces < min_spaces {
                min_spaces = spaces;
            }
        }
        if let TT::Lit { text, .. } = t
            && text.ends_with('\n')
        {
            newline = true;
        }
    }
    if min_spaces == usize::MAX {
        return;
    }
    for i in adjust {
        if let Some(TT::Lit { text, span }) = parts.get_mut(i) {
            let cut = grapheme_prefix_len(text, min_spaces);
            text.drain(..cut);
            span.start.col += min_spaces as u32;
            span.start.byte += cut as u32;
        }
    }
}

/// The number of extended grapheme clusters in `s` (bytes, for ASCII without `\r`).
fn grapheme_count(s: &str) -> usize {
    use crate::text::unicode::graphemes;
    if s.is_ascii() && !s.contains('\r') {
        return s.len();
    }
    graphemes(s).count()
}

/// The byte length of the first `n` grapheme clusters of `s` (all of `s` if fewer).
fn grapheme_prefix_len(s: &str, n: usize) -> usize {
    use crate::text::unicode::graphemes;
    let b = s.as_bytes();
    let k = n.min(b.len());
    // Byte k must also not continue a cluster (a multi-byte char or `\r\n` across it).
    if b[..k].iter().all(|&c| c.is_ascii() && c != b'\r') && b.get(k).is_none_or(u8::is_ascii) {
        return k;
    }
    graphemes(s).take(n).map(str::len).sum()
}

/// hcl's `meldConsecutiveStringLiterals`.
fn meld_literals(parts: &mut Vec<TT>) {
    let mut out: Vec<TT> = Vec::with_capacity(parts.len());
    for t in parts.drain(..) {
        if let TT::Lit { text, span } = &t
            && let Some(TT::Lit { text: pt, span: ps }) = out.last_mut()
        {
            pt.push_str(text);
            ps.end = span.end;
            continue;
        }
        out.push(t);
    }
    *parts = out;
}

/// The object-constructor key rule: a bare identifier (or `null`/`true`/`false`) not
/// wrapped in parentheses is a literal name.
fn object_key(key: Expr, force_non_literal: bool) -> ObjectKey {
    if !force_non_literal {
        let name = match &key.kind {
            ExprKind::Variable(i) => Some(i.name.clone()),
            ExprKind::Null => Some(Str::from("null")),
            ExprKind::Bool(true) => Some(Str::from("true")),
            ExprKind::Bool(false) => Some(Str::from("false")),
            _ => None,
        };
        if let Some(name) = name {
            return ObjectKey::Ident(Ident {
                name,
                span: key.span,
            });
        }
    }
    ObjectKey::Expr(key)
}

/// A number literal's text is one that `big.ParseFloat` accepts.
fn valid_number(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    let digits = |i: &mut usize| {
        let st = *i;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
        *i - st
    };
    if digits(&mut i) == 0 {
        return false;
    }
    if i < b.len() && b[i] == b'.' {
        i += 1;
        digits(&mut i);
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        i += 1;
        if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return false;
        }
    }
    i == b.len()
}

/// Advances a position over `text`, counting lines as hcl's string-literal decoder does.
fn advance(mut pos: crate::syntax::span::Pos, text: &str) -> crate::syntax::span::Pos {
    use crate::text::unicode::graphemes;
    if text.is_ascii() {
        // ASCII: one grapheme per byte, except `\r\n`.
        let b = text.as_bytes();
        let mut i = 0;
        while i < b.len() {
            match b[i] {
                b'\r' | b'\n' => {
                    pos.line += 1;
                    pos.col = 1;
                    if b[i] == b'\r' && b.get(i + 1) == Some(&b'\n') {
                        i += 1;
                    }
                }
                _ => pos.col += 1,
            }
            i += 1;
        }
        pos.byte += b.len() as u32;
        return pos;
    }
    for g in graphemes(text) {
        pos.byte += g.len() as u32;
        if g.starts_with(['\r', '\n']) {
            pos.line += 1;
            pos.col = 1;
        } else {
            pos.col += 1;
        }
    }
    pos
}

/// Calls `f` on each direct sub-expression of `e` together with how many levels below
/// `e` it sits (template directives add a level).
fn for_each_child<'e>(e: &'e Expr, f: &mut impl FnMut(&'e Expr, u32)) {
    fn tmpl<'e>(t: &'e Template, d: u32, f: &mut impl FnMut(&'e Expr, u32)) {
        for p in &t.parts {
            match p {
                TemplatePart::Literal { .. } => {}
                TemplatePart::Interp(x) => f(x, d),
                TemplatePart::If {
                    cond,
                    then,
                    otherwise,
                    ..
                } => {
                    f(cond, d + 1);
                    tmpl(then, d + 1, f);
                    if let Some(o) = otherwise {
                        tmpl(o, d + 1, f);
                    }
                }
                TemplatePart::For {
                    collection, body, ..
                } => {
                    f(collection, d + 1);
                    tmpl(body, d + 1, f);
                }
            }
        }
    }
    match &e.kind {
        ExprKind::Null
        | ExprKind::Bool(_)
        | ExprKind::Number(_)
        | ExprKind::Variable(_)
        | ExprKind::SplatItem => {}
        ExprKind::Template(t) => tmpl(t, 1, f),
        ExprKind::TemplateWrap(x) | ExprKind::Paren(x) => f(x, 1),
        ExprKind::GetAttr { obj, .. } => f(obj, 1),
        ExprKind::Index { obj, key, .. } => {
            f(obj, 1);
            f(key, 1);
        }
        ExprKind::Splat { source, each, .. } => {
            f(source, 1);
            f(each, 1);
        }
        ExprKind::Call { args, .. } | ExprKind::Tuple(args) => {
            for a in args {
                f(a, 1);
            }
        }
        ExprKind::Object(items) => {
            for it in items {
                if let ObjectKey::Expr(k) = &it.key {
                    f(k, 1);
                }
                f(&it.value, 1);
            }
        }
        ExprKind::Unary { operand, .. } => f(operand, 1),
        ExprKind::Binary { lhs, rhs, .. } => {
            f(lhs, 1);
            f(rhs, 1);
        }
        ExprKind::Conditional {
            cond,
            then,
            otherwise,
        } => {
            f(cond, 1);
            f(then, 1);
            f(otherwise, 1);
        }
        ExprKind::For(fe) => {
            f(&fe.collection, 1);
            if let Some(k) = &fe.key_expr {
                f(k, 1);
            }
            f(&fe.value_expr, 1);
            if let Some(c) = &fe.cond {
                f(c, 1);
            }
        }
    }
}

/// Depth of the newest non-chain child of a traversal/splat node (its key or `each`).
fn last_child_depth(e: &Expr) -> u32 {
    match &e.kind {
        ExprKind::Index { key, .. } => expr_depth(key),
        ExprKind::Splat { each, .. } => expr_depth(each),
        _ => 0,
    }
}

/// Depth of an expression tree, computed without recursion (1 for a leaf).
pub fn expr_depth(e: &Expr) -> u32 {
    if matches!(
        e.kind,
        ExprKind::Null
            | ExprKind::Bool(_)
            | ExprKind::Number(_)
            | ExprKind::Variable(_)
            | ExprKind::SplatItem
    ) {
        // Leaves (most operands and traversal roots): no walk, no stack allocation.
        return 1;
    }
    let mut max = 0;
    let mut stack = vec![(e, 1u32)];
    while let Some((x, d)) = stack.pop() {
        max = max.max(d);
        for_each_child(x, &mut |c, extra| stack.push((c, d + extra)));
    }
    max
}

/// Drops an expression tree of any depth without recursion.
fn dismantle(e: Expr) {
    let mut stack = vec![e];
    while let Some(mut x) = stack.pop() {
        take_children(&mut x, &mut stack);
    }
}

fn take_children(e: &mut Expr, out: &mut Vec<Expr>) {
    fn take(b: &mut Expr, out: &mut Vec<Expr>) {
        let span = b.span;
        out.push(std::mem::replace(b, placeholder(span)));
    }
    fn tmpl(t: &mut Template, out: &mut Vec<Expr>) {
        for p in t.parts.drain(..) {
            match p {
                TemplatePart::Literal { .. } => {}
                TemplatePart::Interp(x) => out.push(x),
                TemplatePart::If {
                    cond,
                    mut then,
                    otherwise,
                    ..
                } => {
                    out.push(cond);
                    tmpl(&mut then, out);
                    if let Some(mut o) = otherwise {
                        tmpl(&mut o, out);
                    }
                }
                TemplatePart::For {
                    collection,
                    mut body,
                    ..
                } => {
                    out.push(collection);
                    tmpl(&mut body, out);
                }
            }
        }
    }
    match &mut e.kind {
        ExprKind::Template(t) => tmpl(t, out),
        ExprKind::TemplateWrap(x) | ExprKind::Paren(x) => take(x, out),
        ExprKind::GetAttr { obj, .. } => take(obj, out),
        ExprKind::Index { obj, key, .. } => {
            take(obj, out);
            take(key, out);
        }
        ExprKind::Splat { source, each, .. } => {
            take(source, out);
            take(each, out);
        }
        ExprKind::Call { args, .. } | ExprKind::Tuple(args) => out.append(args),
        ExprKind::Object(items) => {
            for it in items.drain(..) {
                if let ObjectKey::Expr(k) = it.key {
                    out.push(k);
                }
                out.push(it.value);
            }
        }
        ExprKind::Unary { operand, .. } => take(operand, out),
        ExprKind::Binary { lhs, rhs, .. } => {
            take(lhs, out);
            take(rhs, out);
        }
        ExprKind::Conditional {
            cond,
            then,
            otherwise,
        } => {
            take(cond, out);
            take(then, out);
            take(otherwise, out);
        }
        ExprKind::For(fe) => {
            take(&mut fe.collection, out);
            if let Some(k) = fe.key_expr.take() {
                out.push(k);
            }
            take(&mut fe.value_expr, out);
            if let Some(c) = fe.cond.take() {
                out.push(c);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::unicode::graphemes;

    const SAMPLES: [&str; 7] = [
        "",
        "  plain ascii\n",
        "a\r\nb\rc\n\r\n",
        "\t \r\n  x",
        "  caf\u{e9} e\u{301}\n",
        " \u{1F468}\u{200D}\u{1F469}\r\n",
        "   \u{301}x",
    ];

    #[test]
    fn advance_fast_path_counts_like_graphemes() {
        for s in SAMPLES {
            let mut want = crate::syntax::span::Pos::START;
            for g in graphemes(s) {
                want.byte += g.len() as u32;
                if g.starts_with(['\r', '\n']) {
                    want.line += 1;
                    want.col = 1;
                } else {
                    want.col += 1;
                }
            }
            assert_eq!(advance(crate::syntax::span::Pos::START, s), want, "{s:?}");
        }
    }

    #[test]
    fn grapheme_helpers_match_segmentation() {
        for s in SAMPLES {
            assert_eq!(grapheme_count(s), graphemes(s).count(), "{s:?}");
            for n in 0..=s.len() + 1 {
                let want: usize = graphemes(s).take(n).map(str::len).sum();
                assert_eq!(grapheme_prefix_len(s, n), want, "{s:?} {n}");
            }
        }
    }
}

#[cfg(test)]
mod redefined_tests {
    use super::*;

    /// The "Attribute redefined" diagnostics of `src`: (subject line, detail).
    fn redefined(src: &str) -> Vec<(u32, String)> {
        let mut sm = SourceMap::new();
        let id = sm.add("main.hcl", src);
        match parse_file(&sm, id) {
            Ok(_) => Vec::new(),
            Err(diags) => diags
                .into_iter()
                .filter(|d| d.summary == "Attribute redefined")
                .map(|d| (d.subject.map_or(0, |s| s.start.line), d.detail.into_owned()))
                .collect(),
        }
    }

    #[test]
    fn redefined_attribute_names_the_first_definition_in_small_and_large_bodies() {
        for n in [3, SMALL_BODY - 1, SMALL_BODY, SMALL_BODY + 10] {
            let mut src = String::new();
            for i in 0..n {
                src.push_str(&format!("a{i} = {i}\n"));
            }
            // Two more definitions of a1 (line 2): both name line 2.
            src.push_str("a1 = 0\na1 = 1\n");
            let got = redefined(&src);
            let want: Vec<(u32, String)> = [n as u32 + 1, n as u32 + 2]
                .into_iter()
                .map(|line| {
                    (
                        line,
                        "The argument \"a1\" was already set at main.hcl:2,1-3. Each argument may be set only once."
                            .to_string(),
                    )
                })
                .collect();
            assert_eq!(got, want, "body of {n} attributes");
        }
    }
}

#[cfg(test)]
mod budget_tests {
    use super::*;

    /// Parses `files` as one program with a budget of `budget` tokens.
    fn parse_all(files: &[&str], budget: usize) -> Result<usize, Box<Diagnostic>> {
        let mut sm = SourceMap::new();
        let ids: Vec<FileId> = files
            .iter()
            .enumerate()
            .map(|(i, t)| sm.add(format!("f{i}.hcl").as_str(), *t))
            .collect();
        let mut left = budget;
        for id in ids {
            if let Err(mut d) = parse_program_file(&sm, id, &mut left) {
                return Err(Box::new(d.remove(0)));
            }
        }
        Ok(budget - left)
    }

    #[test]
    fn tokens_are_charged_per_program() {
        // `a = 1` + newline: 4 tokens, Eof not counted.
        assert_eq!(parse_all(&["a = 1\n"], 100), Ok(4));
        assert_eq!(parse_all(&["a = 1\n", "b = [1, 2]\n"], 100), Ok(4 + 8));
        assert_eq!(parse_all(&["a = 1\n"], 4), Ok(4));
    }

    #[test]
    fn over_budget_is_refused_where_the_limit_is_reached() {
        let err = parse_all(&["a = 1\n", "b = [1, 2]\n"], 8).unwrap_err();
        assert_eq!(err.summary, "Program too large");
        assert!(
            err.detail.contains(&MAX_PROGRAM_TOKENS.to_string()),
            "{}",
            err.detail
        );
        // The second file's 5th token (the first `,`) is the first one over.
        let at = err.subject.expect("a range");
        assert_eq!((at.file.0, at.start.line, at.start.col), (1, 1, 7));
    }

    #[test]
    fn lexing_stops_at_the_budget() {
        let src = "x = [".to_string() + &"1,".repeat(10_000) + "]\n";
        let toks = lexer::tokenize_at_most(&src, FileId(0), Vec::new(), 100);
        assert!(toks.len() > 101 && toks.len() < 110, "{}", toks.len());
    }
}

#[cfg(test)]
mod partial_tests {
    use super::*;

    fn partial(src: &str) -> (File, Vec<Diagnostic>) {
        let mut sm = SourceMap::new();
        let id = sm.add("main.hcl", src);
        parse_file_partial(&sm, id)
    }

    #[test]
    fn a_broken_file_keeps_the_blocks_recovery_built() {
        let (f, d) = partial("locals {\n  a = 1\n}\nresource x {\n  body = {\n    n = \n  }\n}\n");
        assert!(!d.is_empty());
        let kinds: Vec<&str> = f.body.blocks().map(|b| &*b.kind.name).collect();
        assert_eq!(kinds, ["locals", "resource"]);
        let mut sm = SourceMap::new();
        let id = sm.add(
            "main.hcl",
            "locals {\n  a = 1\n}\nresource x {\n  body = {\n    n = \n  }\n}\n",
        );
        assert_eq!(parse_file(&sm, id).err(), Some(d));
    }

    #[test]
    fn a_valid_file_parses_as_parse_file_does() {
        let src = "a = 1\nb { c = \"x\" }\n";
        let (f, d) = partial(src);
        assert!(d.is_empty());
        let mut sm = SourceMap::new();
        let id = sm.add("main.hcl", src);
        assert_eq!(parse_file(&sm, id).ok(), Some(f));
    }

    #[test]
    fn unterminated_strings_and_heredocs_give_a_tree_and_diagnostics() {
        for src in [
            "a = \"abc\n",
            "a = <<EOT\nabc\n",
            "b {\n a = \"${x\n",
            "a = [1, 2",
        ] {
            let (_, d) = partial(src);
            assert!(!d.is_empty(), "{src:?}");
        }
    }
}
