//! The lexer of hcl's native syntax: turns source text into the token stream that
//! hashicorp/hcl's `scanTokens` (scan_tokens.rl) produces, token for token, so that the
//! parser can reproduce hcl's diagnostics and ranges exactly.
//!
//! The "normal" mode (expressions and bodies) is a [`logos`] lexer; quoted templates and
//! heredocs are scanned by hand, with a mode stack that mirrors the Ragel scanner's
//! `fcall`/`fret` stack: `${`/`%{` enter normal mode until the matching `}` (counted with
//! the same brace counter hcl uses), `"` and `<<EOT` enter template modes.
//!
//! Positions: byte offsets, 1-based lines, and columns counted in extended grapheme
//! clusters as hcl does (`\r\n` counts as one newline).
//!
//! Differences from hcl, all on inputs that hcl itself rejects: consecutive literal pieces
//! of one quoted string come out as one `QuotedLit` token (hcl splits them at `$` and `%`
//! and melds them again in the parser; the values and ranges are the same), and a lone
//! `\r` inside a heredoc is literal text.

use crate::syntax::diag::Diagnostic;
use crate::syntax::span::{FileId, Pos, Span};
use crate::text::unicode::graphemes;
use logos::Logos;

/// Token types, named after hcl's `TokenType` constants.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TokenKind {
    OBrace,
    CBrace,
    OBrack,
    CBrack,
    OParen,
    CParen,
    OQuote,
    CQuote,
    OHeredoc,
    CHeredoc,
    Star,
    Slash,
    Plus,
    Minus,
    Percent,
    Equal,
    EqualOp,
    NotEqual,
    LessThan,
    LessThanEq,
    GreaterThan,
    GreaterThanEq,
    And,
    Or,
    Bang,
    Dot,
    Comma,
    DoubleColon,
    Ellipsis,
    FatArrow,
    Question,
    Colon,
    TemplateInterp,
    TemplateControl,
    TemplateSeqEnd,
    /// Literal text of a quoted template (may contain backslash escapes).
    QuotedLit,
    /// Literal text of a heredoc (no backslash escapes).
    StringLit,
    NumberLit,
    Ident,
    Comment,
    Newline,
    Eof,
    BitwiseAnd,
    BitwiseOr,
    BitwiseNot,
    BitwiseXor,
    Apostrophe,
    Backtick,
    Semicolon,
    Invalid,
    QuotedNewline,
}

/// One token: its type and source range (the text is `&src[span.bytes()]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Token {
    pub kind: TokenKind,
    pub span: Span,
}

/// Tokens of the normal ("main") scanner mode. Spaces and tabs are skipped.
#[derive(Logos, Clone, Copy, Debug, PartialEq, Eq)]
#[logos(skip r"[ \t]+")]
enum Main {
    #[regex(r"[0-9]", number_tail)]
    Number,
    #[regex(r"[\p{ID_Start}_][\p{ID_Continue}-]*")]
    Ident,
    #[regex(r"#[^\n]*\n?", allow_greedy = true)]
    #[regex(r"//[^\n]*\n?", allow_greedy = true)]
    LineComment,
    #[token("/*", block_comment)]
    BlockComment(bool),
    #[regex(r"\r?\n")]
    Newline,
    #[token("==")]
    EqualOp,
    #[token("!=")]
    NotEqual,
    #[token(">=")]
    GreaterThanEq,
    #[token("<=")]
    LessThanEq,
    #[token("&&")]
    And,
    #[token("||")]
    Or,
    #[token("::")]
    DoubleColon,
    #[token("...")]
    Ellipsis,
    #[token("=>")]
    FatArrow,
    #[token("[")]
    OBrack,
    #[token("]")]
    CBrack,
    #[token("(")]
    OParen,
    #[token(")")]
    CParen,
    #[token(".")]
    Dot,
    #[token(",")]
    Comma,
    #[token("*")]
    Star,
    #[token("/")]
    Slash,
    #[token("%")]
    Percent,
    #[token("+")]
    Plus,
    #[token("-")]
    Minus,
    #[token("=")]
    Equal,
    #[token("<", heredoc_or_less)]
    LessOrHeredoc(bool),
    #[token(">")]
    GreaterThan,
    #[token("!")]
    Bang,
    #[token("?")]
    Question,
    #[token(":")]
    Colon,
    #[token("&")]
    BitwiseAnd,
    #[token("|")]
    BitwiseOr,
    #[token("~")]
    BitwiseNot,
    #[token("^")]
    BitwiseXor,
    #[token(";")]
    Semicolon,
    #[token("`")]
    Backtick,
    #[token("'")]
    Apostrophe,
    #[token("{")]
    OBrace,
    #[token("}")]
    CBrace,
    #[token("~}")]
    TildeCBrace,
    #[token("\"")]
    OQuote,
}

/// Extends a number literal after its first digit: hcl's
/// `digit (NumberLitContinue* (NumberLitContinue - '.'))?` with
/// `NumberLitContinue = digit | '.' | [eE] [+-]? digit`.
fn number_tail(lex: &mut logos::Lexer<Main>) {
    let rest = lex.remainder().as_bytes();
    let mut i = 0;
    let mut good = 0;
    loop {
        match rest.get(i) {
            Some(b) if b.is_ascii_digit() => {
                i += 1;
                good = i;
            }
            Some(b'.') => i += 1,
            Some(b'e' | b'E') => {
                let mut j = i + 1;
                if matches!(rest.get(j), Some(b'+' | b'-')) {
                    j += 1;
                }
                if rest.get(j).is_some_and(u8::is_ascii_digit) {
                    i = j + 1;
                    good = i;
                } else {
                    break;
                }
            }
            _ => break,
        }
    }
    lex.bump(good);
}

/// `/* ... */`; `false` when the comment is never closed (hcl then scans a `/`).
fn block_comment(lex: &mut logos::Lexer<Main>) -> bool {
    match lex.remainder().find("*/") {
        Some(i) => {
            lex.bump(i + 2);
            true
        }
        None => false,
    }
}

/// `<<ID\n` or `<<-ID\n` starts a heredoc (returns `true`, the token covers the
/// introducer and its newline); anything else is a `<`.
fn heredoc_or_less(lex: &mut logos::Lexer<Main>) -> bool {
    let rest = lex.remainder();
    let Some(after) = rest.strip_prefix('<') else {
        return false;
    };
    let mut n = 1;
    let after = match after.strip_prefix('-') {
        Some(a) => {
            n += 1;
            a
        }
        None => after,
    };
    let id_len = ident_len(after);
    if id_len == 0 {
        return false;
    }
    let tail = &after[id_len..];
    let nl = if tail.starts_with("\r\n") {
        2
    } else if tail.starts_with('\n') {
        1
    } else {
        return false;
    };
    lex.bump(n + id_len + nl);
    true
}

/// Length in bytes of the identifier at the start of `s` (0 if none).
fn ident_len(s: &str) -> usize {
    let mut lex = Main::lexer(s);
    match lex.next() {
        Some(Ok(Main::Ident)) if lex.span().start == 0 => lex.span().end,
        _ => 0,
    }
}

/// One frame of the scanner's mode stack.
enum Mode {
    Main,
    Quoted,
    Heredoc { marker: String, start_of_line: bool },
}

/// Incremental byte → (line, column) conversion, counting as hcl does.
struct Cursor<'a> {
    src: &'a str,
    pos: Pos,
}

impl Cursor<'_> {
    /// Advance to byte offset `to` (never backwards) and return the position there.
    #[inline(always)]
    fn at(&mut self, to: usize) -> Pos {
        let from = self.pos.byte as usize;
        if to <= from {
            return self.pos;
        }
        // ASCII (the common case, checked as we go): every byte is one grapheme cluster
        // except `\r\n`, whose `\r` column is reset by its `\n` anyway. Any other byte
        // (or a range that is not on character boundaries) takes the grapheme path.
        let bytes = self.src.as_bytes().get(from..to).unwrap_or(&[]);
        let (mut line, mut col) = (self.pos.line, self.pos.col);
        let mut ascii = true;
        for &c in bytes {
            if c == b'\n' {
                line += 1;
                col = 1;
            } else if c < 0x80 {
                col += 1;
            } else {
                ascii = false;
                break;
            }
        }
        if ascii {
            self.pos.line = line;
            self.pos.col = col;
        } else {
            let seg = self.src.get(from..to).unwrap_or("");
            for g in graphemes(seg) {
                if g == "\n" || g == "\r\n" {
                    self.pos.line += 1;
                    self.pos.col = 1;
                } else {
                    self.pos.col += 1;
                }
            }
        }
        self.pos.byte = to as u32;
        self.pos
    }
}

struct Scanner<'a> {
    src: &'a str,
    file: FileId,
    cur: Cursor<'a>,
    toks: Vec<Token>,
    stack: Vec<Mode>,
    braces: i64,
    ret_braces: Vec<i64>,
    pos: usize,
    /// Tokens beyond `max + 1` are not kept (see [`tokenize_at_most`]).
    max: usize,
}

impl<'a> Scanner<'a> {
    /// Whether the token budget is spent: every scanning loop stops here, so input past
    /// the budget is not read at all.
    fn full(&self) -> bool {
        self.toks.len() > self.max
    }

    fn emit(&mut self, kind: TokenKind, start: usize, end: usize) {
        if self.full() && kind != TokenKind::Eof {
            return;
        }
        let s = self.cur.at(start);
        let e = self.cur.at(end);
        self.toks.push(Token {
            kind,
            span: Span::new(self.file, s, e),
        });
    }

    fn bytes(&self) -> &'a [u8] {
        self.src.as_bytes()
    }

    /// `${`, `${~`, `%{` or `%{~` at `at`: its length, or 0.
    fn seq_start(&self, at: usize) -> usize {
        let b = self.bytes();
        if matches!(b.get(at), Some(b'$' | b'%')) && b.get(at + 1) == Some(&b'{') {
            if b.get(at + 2) == Some(&b'~') { 3 } else { 2 }
        } else {
            0
        }
    }

    /// Emits the template-sequence opener at `pos`, if one starts there, and enters normal
    /// mode; false when none starts there.
    fn open_seq(&mut self) -> bool {
        let len = self.seq_start(self.pos);
        if len == 0 {
            return false;
        }
        let kind = if self.bytes()[self.pos] == b'$' {
            TokenKind::TemplateInterp
        } else {
            TokenKind::TemplateControl
        };
        self.emit(kind, self.pos, self.pos + len);
        self.pos += len;
        self.braces += 1;
        self.ret_braces.push(self.braces);
        if let Some(Mode::Heredoc { start_of_line, .. }) = self.stack.last_mut() {
            *start_of_line = false;
        }
        self.stack.push(Mode::Main);
        true
    }

    /// Where a template's text goes on (`pos`), or `None` when the text ends, the token
    /// limit is reached, or a sequence opener was emitted there (normal mode lexes the
    /// sequence next).
    fn text_at(&mut self) -> Option<usize> {
        if self.pos >= self.src.len() || self.full() || self.open_seq() {
            None
        } else {
            Some(self.pos)
        }
    }

    /// A `}` (or `~}`) ending at `end`: one brace level less. True when it closes the
    /// innermost template sequence, whose template mode then resumes after it.
    fn close_brace(&mut self, end: usize) -> bool {
        let closes_seq = self.ret_braces.last() == Some(&self.braces);
        self.braces -= 1;
        if closes_seq {
            self.ret_braces.pop();
            self.stack.pop();
            self.pos = end;
        }
        closes_seq
    }

    /// Normal mode: runs logos from `pos` until the mode changes or input ends.
    fn scan_main(&mut self) {
        let base = self.pos;
        let rest = self.src.get(base..).unwrap_or("");
        let mut lex = Main::lexer(rest);
        while let Some(res) = lex.next() {
            let sp = lex.span();
            let (s, e) = (base + sp.start, base + sp.end);
            if self.full() {
                self.pos = s;
                return;
            }
            let tok = match res {
                Ok(t) => t,
                Err(()) => {
                    // One invalid character at a time, as hcl's AnyUTF8 rule does.
                    let len = rest[sp.start..].chars().next().map_or(1, char::len_utf8);
                    self.emit(TokenKind::Invalid, s, s + len);
                    self.pos = s + len;
                    return;
                }
            };
            let kind = match tok {
                Main::Number => TokenKind::NumberLit,
                Main::Ident => TokenKind::Ident,
                Main::LineComment => TokenKind::Comment,
                Main::BlockComment(true) => TokenKind::Comment,
                Main::BlockComment(false) => {
                    self.emit(TokenKind::Slash, s, s + 1);
                    self.pos = s + 1;
                    return;
                }
                Main::Newline => TokenKind::Newline,
                Main::EqualOp => TokenKind::EqualOp,
                Main::NotEqual => TokenKind::NotEqual,
                Main::GreaterThanEq => TokenKind::GreaterThanEq,
                Main::LessThanEq => TokenKind::LessThanEq,
                Main::And => TokenKind::And,
                Main::Or => TokenKind::Or,
                Main::DoubleColon => TokenKind::DoubleColon,
                Main::Ellipsis => TokenKind::Ellipsis,
                Main::FatArrow => TokenKind::FatArrow,
                Main::OBrack => TokenKind::OBrack,
                Main::CBrack => TokenKind::CBrack,
                Main::OParen => TokenKind::OParen,
                Main::CParen => TokenKind::CParen,
                Main::Dot => TokenKind::Dot,
                Main::Comma => TokenKind::Comma,
                Main::Star => TokenKind::Star,
                Main::Slash => TokenKind::Slash,
                Main::Percent => TokenKind::Percent,
                Main::Plus => TokenKind::Plus,
                Main::Minus => TokenKind::Minus,
                Main::Equal => TokenKind::Equal,
                Main::LessOrHeredoc(false) => TokenKind::LessThan,
                Main::LessOrHeredoc(true) => {
                    self.emit(TokenKind::OHeredoc, s, e);
                    let intro = &self.src[s + 2..e];
                    let intro = intro.strip_prefix('-').unwrap_or(intro);
                    let marker = intro.trim_end_matches(['\r', '\n']).to_string();
                    self.stack.push(Mode::Heredoc {
                        marker,
                        start_of_line: true,
                    });
                    self.pos = e;
                    return;
                }
                Main::GreaterThan => TokenKind::GreaterThan,
                Main::Bang => TokenKind::Bang,
                Main::Question => TokenKind::Question,
                Main::Colon => TokenKind::Colon,
                Main::BitwiseAnd => TokenKind::BitwiseAnd,
                Main::BitwiseOr => TokenKind::BitwiseOr,
                Main::BitwiseNot => TokenKind::BitwiseNot,
                Main::BitwiseXor => TokenKind::BitwiseXor,
                Main::Semicolon => TokenKind::Semicolon,
                Main::Backtick => TokenKind::Backtick,
                Main::Apostrophe => TokenKind::Apostrophe,
                Main::OBrace => {
                    self.braces += 1;
                    TokenKind::OBrace
                }
                Main::CBrace => {
                    if self.close_brace(e) {
                        self.emit(TokenKind::TemplateSeqEnd, s, e);
                        return;
                    }
                    TokenKind::CBrace
                }
                Main::TildeCBrace => {
                    self.emit(TokenKind::TemplateSeqEnd, s, e);
                    if self.close_brace(e) {
                        return;
                    }
                    continue;
                }
                Main::OQuote => {
                    self.emit(TokenKind::OQuote, s, e);
                    self.stack.push(Mode::Quoted);
                    self.pos = e;
                    return;
                }
            };
            self.emit(kind, s, e);
        }
        self.pos = self.src.len();
    }

    /// Inside a quoted template: literal runs, escapes, sequences, the closing quote.
    fn scan_quoted(&mut self) {
        let b = self.bytes();
        while let Some(p) = self.text_at() {
            match b[p] {
                b'"' => {
                    self.emit(TokenKind::CQuote, p, p + 1);
                    self.pos = p + 1;
                    self.stack.pop();
                    return;
                }
                b'\r' | b'\n' => {
                    let mut q = p;
                    while q < b.len() && matches!(b[q], b'\r' | b'\n') {
                        q += 1;
                    }
                    self.emit(TokenKind::QuotedNewline, p, q);
                    self.pos = q;
                }
                b'\\' if matches!(b.get(p + 1), None | Some(b'\r' | b'\n')) => {
                    self.emit(TokenKind::Invalid, p, p + 1);
                    self.pos = p + 1;
                }
                _ => {
                    let q = self.quoted_run(p);
                    self.emit(TokenKind::QuotedLit, p, q);
                    self.pos = q;
                }
            }
        }
    }

    /// End of the literal run starting at `p` in a quoted template.
    fn quoted_run(&self, p: usize) -> usize {
        let b = self.bytes();
        let mut q = p;
        while q < b.len() {
            match b[q] {
                b'"' | b'\r' | b'\n' => break,
                b'\\' => match b.get(q + 1) {
                    None | Some(b'\r' | b'\n') => break,
                    Some(_) => q += 1 + self.char_len(q + 1),
                },
                b'$' | b'%' => match literal_marker_len(b, q) {
                    Some(n) => q += n,
                    None => break,
                },
                _ => q += self.char_len(q),
            }
        }
        q
    }

    fn char_len(&self, at: usize) -> usize {
        self.src
            .get(at..)
            .and_then(|s| s.chars().next())
            .map_or(1, char::len_utf8)
    }

    /// Inside a heredoc: one literal token per line (split at sequences), the closing
    /// marker line, and sequences.
    fn scan_heredoc(&mut self) {
        let b = self.bytes();
        while let Some(p) = self.text_at() {
            // A literal up to the end of the line or the next sequence opener.
            let mut q = p;
            let mut eol = None;
            while q < b.len() {
                match b[q] {
                    b'\n' => {
                        eol = Some(q);
                        break;
                    }
                    b'\r' if b.get(q + 1) == Some(&b'\n') => {
                        eol = Some(q);
                        break;
                    }
                    b'$' | b'%' => match literal_marker_len(b, q) {
                        Some(n) => q += n,
                        None => break,
                    },
                    _ => q += self.char_len(q),
                }
            }
            match eol {
                Some(nl) => {
                    let end = if b[nl] == b'\r' { nl + 2 } else { nl + 1 };
                    let (is_marker, _) = match self.stack.last() {
                        Some(Mode::Heredoc {
                            marker,
                            start_of_line,
                        }) => (
                            *start_of_line && self.src[p..nl].trim() == marker.as_str(),
                            (),
                        ),
                        _ => (false, ()),
                    };
                    if is_marker {
                        self.emit(TokenKind::CHeredoc, p, nl);
                        self.emit(TokenKind::Newline, nl, end);
                        self.pos = end;
                        self.stack.pop();
                        return;
                    }
                    if let Some(Mode::Heredoc { start_of_line, .. }) = self.stack.last_mut() {
                        *start_of_line = true;
                    }
                    self.emit(TokenKind::StringLit, p, end);
                    self.pos = end;
                }
                None => {
                    if q > p {
                        if let Some(Mode::Heredoc { start_of_line, .. }) = self.stack.last_mut() {
                            *start_of_line = false;
                        }
                        self.emit(TokenKind::StringLit, p, q);
                    }
                    self.pos = q;
                }
            }
        }
    }
}

/// Scans a whole file in normal mode, as hcl's `LexConfig`, always ending with an
/// `Eof` token. A leading UTF-8 byte order mark is skipped (it takes no column).
pub fn tokenize(src: &str, file: FileId) -> Vec<Token> {
    tokenize_into(src, file, Vec::new())
}

/// [`tokenize`] into a buffer the caller reuses (its contents are discarded): the
/// parser keeps one per thread, so a cold compile does not allocate the token list.
pub fn tokenize_into(src: &str, file: FileId, toks: Vec<Token>) -> Vec<Token> {
    tokenize_at_most(src, file, toks, usize::MAX)
}

/// [`tokenize_into`] that stops once more than `max` tokens were found (the list then
/// holds `max + 2` tokens, the last an `Eof` where scanning stopped, not at the end of
/// the text): a program over its token budget costs no more than the budget to refuse.
pub fn tokenize_at_most(src: &str, file: FileId, mut toks: Vec<Token>, max: usize) -> Vec<Token> {
    toks.clear();
    toks.reserve((src.len() / 4 + 1).min(max.saturating_add(2)));
    let start = if src.starts_with('\u{FEFF}') { 3 } else { 0 };
    let mut sc = Scanner {
        src,
        file,
        cur: Cursor {
            src,
            pos: Pos {
                byte: start as u32,
                line: 1,
                col: 1,
            },
        },
        toks,
        stack: vec![Mode::Main],
        braces: 0,
        ret_braces: Vec::new(),
        pos: start,
        max,
    };
    while sc.pos < src.len() && !sc.full() {
        match sc.stack.last() {
            Some(Mode::Quoted) => sc.scan_quoted(),
            Some(Mode::Heredoc { .. }) => sc.scan_heredoc(),
            _ => sc.scan_main(),
        }
    }
    // Over the budget, the end of the text would cost a walk over all of it (positions
    // count lines and graphemes).
    let end = if sc.full() { sc.pos } else { src.len() };
    sc.emit(TokenKind::Eof, end, end);
    sc.toks
}

/// hcl's `checkInvalidTokens`: diagnostics for tokens that never appear in valid
/// input, with the same repetition limits.
pub fn check_invalid_tokens(tokens: &[Token]) -> Vec<Diagnostic> {
    let mut diags = Vec::new();
    let mut told_bitwise = 0;
    let mut told_backtick = 0;
    let mut told_apostrophe = 0;
    let mut told_semicolon = 0;
    for tok in tokens {
        match tok.kind {
            TokenKind::BitwiseAnd
            | TokenKind::BitwiseOr
            | TokenKind::BitwiseXor
            | TokenKind::BitwiseNot
                if told_bitwise < 4 =>
            {
                let suggestion = match tok.kind {
                    TokenKind::BitwiseAnd => " Did you mean boolean AND (\"&&\")?",
                    TokenKind::BitwiseOr => " Did you mean boolean OR (\"||\")?",
                    TokenKind::BitwiseNot => " Did you mean boolean NOT (\"!\")?",
                    _ => "",
                };
                diags.push(Diagnostic::error(
                    "Unsupported operator",
                    format!("Bitwise operators are not supported.{suggestion}"),
                    tok.span,
                ));
                told_bitwise += 1;
            }
            TokenKind::Backtick | TokenKind::Apostrophe => {
                let (told, detail) = if tok.kind == TokenKind::Backtick {
                    (
                        &mut told_backtick,
                        "The \"`\" character is not valid. To create a multi-line string, use the \"heredoc\" syntax, like \"<<EOT\".",
                    )
                } else {
                    (
                        &mut told_apostrophe,
                        "Single quotes are not valid. Use double quotes (\") to enclose strings.",
                    )
                };
                // The opening quotes of the first two pairs (`told` stops at 3).
                if *told % 2 == 0 {
                    diags.push(Diagnostic::error("Invalid character", detail, tok.span));
                }
                if *told <= 2 {
                    *told += 1;
                }
            }
            TokenKind::Semicolon if told_semicolon < 1 => {
                diags.push(Diagnostic::error(
                    "Invalid character",
                    "The \";\" character is not valid. Use newlines to separate arguments and blocks, and commas to separate items in collection values.",
                    tok.span,
                ));
                told_semicolon += 1;
            }
            TokenKind::QuotedNewline => diags.push(Diagnostic::error(
                "Invalid multi-line string",
                "Quoted strings may not be split over multiple lines. To produce a multi-line string, either use the \\n escape to represent a newline character or use the \"heredoc\" multi-line template syntax.",
                tok.span,
            )),
            TokenKind::Invalid => diags.push(Diagnostic::error(
                "Invalid character",
                "This character is not used within the language.",
                tok.span,
            )),
            _ => {}
        }
    }
    diags
}

/// At a `$` or `%` inside template text: `None` when it opens a sequence (`${`, `%{`),
/// else how many bytes of literal text it starts: an escaped opener (`$${`, `%%{`, with
/// its `~`) as hcl's scanner reads it, or the lone marker.
fn literal_marker_len(b: &[u8], q: usize) -> Option<usize> {
    let c = b[q];
    if b.get(q + 1) == Some(&b'{') {
        return None;
    }
    Some(if b.get(q + 1) == Some(&c) && b.get(q + 2) == Some(&b'{') {
        if b.get(q + 3) == Some(&b'~') { 4 } else { 3 }
    } else {
        1
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use TokenKind as K;

    #[test]
    fn quote_characters_are_told_at_the_first_two_pairs() {
        for (q, detail) in [('`', "The \"`\""), ('\'', "Single quotes")] {
            let src = format!("a = {q}x{q} + {q}y{q} + {q}z{q}\n");
            let diags = check_invalid_tokens(&tokenize(&src, FileId(0)));
            let cols: Vec<u32> = diags
                .iter()
                .map(|d| d.subject.expect("a range").start.col)
                .collect();
            assert_eq!(cols, [5, 11], "{src}");
            assert!(
                diags.iter().all(|d| d.detail.starts_with(detail)),
                "{diags:?}"
            );
        }
    }

    #[test]
    fn scanning_stops_at_the_token_budget_in_every_mode() {
        for src in [
            "a = 1\n".repeat(100_000),
            format!("a = \"{}\"\n", "x\n".repeat(100_000)),
            format!("a = <<EOT\n{}EOT\n", "x\n".repeat(100_000)),
            format!("a = \"{}\"\n", "x${y}".repeat(100_000)),
        ] {
            let toks = tokenize_at_most(&src, FileId(0), Vec::new(), 100);
            assert_eq!(toks.len(), 102, "{}", &src[..20]);
            // The end is where scanning stopped: the rest of the text was not read.
            let eof = toks[101];
            assert_eq!(eof.kind, K::Eof);
            assert!(eof.span.start.byte < 1000, "{}: {eof:?}", &src[..20]);
            assert!(toks[100].span.end.byte <= eof.span.start.byte);
        }
        // Within the budget, `Eof` is at the end of the text.
        let toks = tokenize_at_most("a = 1\n", FileId(0), Vec::new(), 100);
        assert_eq!(
            toks.last().map(|t| (t.kind, t.span.start.byte)),
            Some((K::Eof, 6))
        );
    }

    /// hcl's position rule, one grapheme cluster at a time (the reference for `Cursor`).
    fn reference_pos(src: &str, to: usize) -> Pos {
        let mut pos = Pos::START;
        for g in graphemes(&src[..to]) {
            if g == "\n" || g == "\r\n" {
                pos.line += 1;
                pos.col = 1;
            } else {
                pos.col += 1;
            }
        }
        pos.byte = to as u32;
        pos
    }

    #[test]
    fn cursor_fast_path_counts_like_graphemes() {
        let srcs = [
            "a = 1\nb = 2\r\nc\r = \"x\"\n",
            "x = \"e\u{301}t\u{e9}\" # caf\u{e9}\r\n  y\t= 1\r",
            "\r\n\r\n\n\r\r\nz",
            "\u{1F468}\u{200D}\u{1F469} = 1\na\u{301}\r\nb",
        ];
        for src in srcs {
            // Token boundaries never split a grapheme cluster: test every pair of them.
            let mut bounds = vec![0];
            for g in graphemes(src) {
                bounds.push(bounds[bounds.len() - 1] + g.len());
            }
            for &mid in &bounds {
                for &end in bounds.iter().filter(|&&e| e >= mid) {
                    let mut cur = Cursor {
                        src,
                        pos: Pos::START,
                    };
                    cur.at(mid);
                    let got = cur.at(end);
                    assert_eq!(got, reference_pos(src, end), "{src:?} via {mid} to {end}");
                }
            }
        }
    }

    fn kinds(src: &str) -> Vec<(TokenKind, String)> {
        tokenize(src, FileId(0))
            .into_iter()
            .map(|t| (t.kind, src[t.span.bytes()].to_string()))
            .collect()
    }

    fn k(src: &str) -> Vec<TokenKind> {
        kinds(src).into_iter().map(|(k, _)| k).collect()
    }

    #[test]
    fn operators_and_idents() {
        assert_eq!(
            k("a-b == c != d >= <= && || :: ... => . , * / % + - = < > ! ? :"),
            vec![
                K::Ident,
                K::EqualOp,
                K::Ident,
                K::NotEqual,
                K::Ident,
                K::GreaterThanEq,
                K::LessThanEq,
                K::And,
                K::Or,
                K::DoubleColon,
                K::Ellipsis,
                K::FatArrow,
                K::Dot,
                K::Comma,
                K::Star,
                K::Slash,
                K::Percent,
                K::Plus,
                K::Minus,
                K::Equal,
                K::LessThan,
                K::GreaterThan,
                K::Bang,
                K::Question,
                K::Colon,
                K::Eof
            ]
        );
        assert_eq!(kinds("a-b")[0].1, "a-b");
        assert_eq!(kinds("_x9 héllo")[1].1, "héllo");
        assert_eq!(k(".."), vec![K::Dot, K::Dot, K::Eof]);
    }

    #[test]
    fn numbers() {
        let n = |s: &str| kinds(s)[0].1.clone();
        assert_eq!(n("1"), "1");
        assert_eq!(n("12.5"), "12.5");
        assert_eq!(n("1e5"), "1e5");
        assert_eq!(n("1E-5x"), "1E-5");
        assert_eq!(n("1.2.3"), "1.2.3");
        assert_eq!(n("1."), "1");
        assert_eq!(n("1e"), "1");
        assert_eq!(n("1.e5"), "1.e5");
        assert_eq!(k("1.a"), vec![K::NumberLit, K::Dot, K::Ident, K::Eof]);
    }

    #[test]
    fn comments_and_newlines() {
        assert_eq!(
            k("a # c\nb // d\r\nc /* e\n f */ d\n"),
            vec![
                K::Ident,
                K::Comment,
                K::Ident,
                K::Comment,
                K::Ident,
                K::Comment,
                K::Ident,
                K::Newline,
                K::Eof
            ]
        );
        // An unclosed block comment is a slash, then ordinary tokens.
        assert_eq!(k("/* x"), vec![K::Slash, K::Star, K::Ident, K::Eof]);
    }

    #[test]
    fn quoted_templates_nest() {
        let t = kinds(r#""a ${ "b ${c}" } d""#);
        let ks: Vec<_> = t.iter().map(|x| x.0).collect();
        assert_eq!(
            ks,
            vec![
                K::OQuote,
                K::QuotedLit,
                K::TemplateInterp,
                K::OQuote,
                K::QuotedLit,
                K::TemplateInterp,
                K::Ident,
                K::TemplateSeqEnd,
                K::CQuote,
                K::TemplateSeqEnd,
                K::QuotedLit,
                K::CQuote,
                K::Eof
            ]
        );
        assert_eq!(t[10].1, " d");
    }

    #[test]
    fn quoted_escapes_and_strip_markers() {
        let t = kinds(r#""a\"b $${x} %%{y} $x ${~ x ~}""#);
        assert_eq!(t[1], (K::QuotedLit, r#"a\"b $${x} %%{y} $x "#.to_string()));
        assert_eq!(t[2], (K::TemplateInterp, "${~".to_string()));
        assert_eq!(t[4], (K::TemplateSeqEnd, "~}".to_string()));
        // Object braces inside an interpolation do not end it.
        assert_eq!(
            k(r#""${ {a=1}.a }""#),
            vec![
                K::OQuote,
                K::TemplateInterp,
                K::OBrace,
                K::Ident,
                K::Equal,
                K::NumberLit,
                K::CBrace,
                K::Dot,
                K::Ident,
                K::TemplateSeqEnd,
                K::CQuote,
                K::Eof
            ]
        );
    }

    #[test]
    fn quoted_newline_and_unterminated() {
        assert_eq!(
            k("\"ab\ncd"),
            vec![
                K::OQuote,
                K::QuotedLit,
                K::QuotedNewline,
                K::QuotedLit,
                K::Eof
            ]
        );
    }

    #[test]
    fn heredocs() {
        let t = kinds("a = <<EOT\nhello\n  ${x} y\n  EOT\nb");
        let ks: Vec<_> = t.iter().map(|x| x.0).collect();
        assert_eq!(
            ks,
            vec![
                K::Ident,
                K::Equal,
                K::OHeredoc,
                K::StringLit,
                K::StringLit,
                K::TemplateInterp,
                K::Ident,
                K::TemplateSeqEnd,
                K::StringLit,
                K::CHeredoc,
                K::Newline,
                K::Ident,
                K::Eof
            ]
        );
        assert_eq!(t[2].1, "<<EOT\n");
        assert_eq!(t[9].1, "  EOT");
        // Not a heredoc without the newline.
        assert_eq!(
            k("<<EOT x"),
            vec![K::LessThan, K::LessThan, K::Ident, K::Ident, K::Eof]
        );
    }

    #[test]
    fn positions_count_graphemes_and_lines() {
        let toks = tokenize("é = \"🇫🇷x\"\n  b", FileId(0));
        let eq = toks[1].span;
        assert_eq!((eq.start.line, eq.start.col, eq.start.byte), (1, 3, 3));
        let lit = toks[3].span;
        assert_eq!((lit.start.col, lit.end.col), (6, 8));
        let b = toks[6].span;
        assert_eq!((b.start.line, b.start.col), (2, 3));
    }

    #[test]
    fn bom_is_skipped() {
        let toks = tokenize("\u{FEFF}a", FileId(0));
        assert_eq!(
            toks[0].span.start,
            Pos {
                byte: 3,
                line: 1,
                col: 1
            }
        );
    }

    #[test]
    fn invalid_characters() {
        let src = "a = 1 @ $ ; ' ` & \0";
        let toks = tokenize(src, FileId(0));
        let diags = check_invalid_tokens(&toks);
        let summaries: Vec<_> = diags.iter().map(|d| &*d.summary).collect();
        assert_eq!(
            summaries,
            vec![
                "Invalid character",
                "Invalid character",
                "Invalid character",
                "Invalid character",
                "Invalid character",
                "Unsupported operator",
                "Invalid character"
            ]
        );
    }
}
