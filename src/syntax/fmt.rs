//! `fn-hcl fmt`: the formatter of function-hcl's `fn-hcl-tools fmt`, which is hcl's
//! `hclwrite.Format` (hashicorp/hcl v2 `hclwrite/format.go`) preceded by function-hcl's
//! object-literal normalization (`internal/format`: `key: value` → `key = value` inside
//! object constructors of attribute values, on by default).
//!
//! It runs on the token stream of [`crate::syntax::lexer`], as hclwrite runs on hclsyntax's:
//!
//! 1. the source must parse (otherwise it is returned unchanged, as function-hcl does);
//! 2. normalization rewrites the chosen `:` tokens to `=`, and every gap between tokens
//!    becomes that many spaces (hclwrite's `SpacesBefore`, so tabs become spaces);
//! 3. the result is lexed again and `format` adjusts only the spaces before tokens:
//!    - indentation: two spaces per level, a level opened by each line with a net
//!      surplus of opening brackets (`{ [ ( ${ %{`, counting a line only up to a heredoc
//!      opener) and closed by lines with a net deficit, through hclwrite's indent stack;
//!    - spacing between token pairs within a line (`spaceAfterToken`: no space around
//!      `.`, before `,` `...` `:` or a closing bracket, after an opening bracket, after
//!      `!` or a negating `-`, between a name and `(` or `::`, inside templates; one
//!      space inside `{ }` except `{}`; one space otherwise);
//!    - alignment of `=` in runs of consecutive lines that hold a single-line attribute
//!      (the line's brackets balance after the `=`), then of trailing line comments in
//!      runs of consecutive lines that end with one; blank lines never hold spaces.
//!
//! Comments are tokens and are kept; heredoc bodies and template literals are never
//! touched. Everything of hclwrite's `format` is implemented; what hclwrite never does
//! (reflow long lines, add or remove newlines, normalize blank lines) this does not either.

use crate::syntax::ast::{Body, BodyItem};
use crate::syntax::lexer::{TokenKind as K, tokenize};
use crate::syntax::span::{FileId, SourceMap};
use crate::text::unicode::graphemes;

/// `fn-hcl fmt` arguments (the Go tool's flags; booleans accept `--flag=false`).
#[derive(Debug, clap::Args)]
pub struct FmtArgs {
    /// Files, directories (their `*.hcl` files) or `-` (standard input to standard
    /// output); the current directory by default.
    pub paths: Vec<String>,
    /// List unformatted files on standard error and exit 1 if there are any, writing
    /// nothing.
    #[arg(short = 'c', long)]
    pub check: bool,
    /// Look for `*.hcl` files in subdirectories too.
    #[arg(short = 'r', long, num_args = 0..=1, default_value_t = true,
          default_missing_value = "true", action = clap::ArgAction::Set)]
    pub recursive: bool,
    /// Normalize object literals to always use `key = value`.
    #[arg(long = "normalize-literals", num_args = 0..=1, default_value_t = true,
          default_missing_value = "true", action = clap::ArgAction::Set)]
    pub normalize_literals: bool,
}

/// Runs `fn-hcl fmt` as function-hcl's `FormatCmd.Execute`: `-` alone prints the
/// formatted standard input followed by a newline (Go's `Fprintln`); otherwise every
/// file whose formatting differs is rewritten, or with `--check` listed on standard
/// error, ending with `Error: N unformatted files found` and exit code 1. Files that do
/// not parse are left as they are. Other failures: `Error: <why>`, exit code 1.
pub fn main(args: &FmtArgs) -> std::process::ExitCode {
    match run(
        args,
        &mut std::io::stdin().lock(),
        &mut std::io::stdout().lock(),
    ) {
        Ok(unformatted) => {
            for f in &unformatted {
                eprintln!("{f}");
            }
            if args.check && !unformatted.is_empty() {
                eprintln!("Error: {} unformatted files found", unformatted.len());
                return std::process::ExitCode::FAILURE;
            }
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("Error: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// The work of [`main`] over explicit streams; returns, under `--check`, the files that
/// would change (without `--check` they are rewritten and the list is empty).
pub fn run(
    args: &FmtArgs,
    stdin: &mut dyn std::io::Read,
    stdout: &mut dyn std::io::Write,
) -> Result<Vec<String>, String> {
    let opts = Options {
        normalize_literals: args.normalize_literals,
    };
    let files = collect_files(&args.paths, args.recursive)?;
    if files.len() == 1 && files[0] == "-" {
        let mut text = String::new();
        stdin
            .read_to_string(&mut text)
            .map_err(|e| format!("read stdin: {e}"))?;
        let out = format_source(&text, opts);
        writeln!(stdout, "{out}").map_err(|e| format!("write stdout: {e}"))?;
        return Ok(Vec::new());
    }
    let mut unformatted = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).map_err(|e| format!("open {file}: {e}"))?;
        let out = format_source(&text, opts);
        if out != text {
            if args.check {
                unformatted.push(file);
            } else {
                std::fs::write(&file, out).map_err(|e| format!("open {file}: {e}"))?;
            }
        }
    }
    Ok(unformatted)
}

/// The files to format: each file argument as given, each directory's `*.hcl` files in
/// `filepath.Walk` order (names sorted, subdirectories where they sort, only when
/// `recursive`), named as Go's `filepath.Join` names them.
pub fn collect_files(paths: &[String], recursive: bool) -> Result<Vec<String>, String> {
    let default = [".".to_string()];
    let paths = if paths.is_empty() {
        &default[..]
    } else {
        paths
    };
    let mut files = Vec::new();
    for p in paths {
        if p == "-" {
            if paths.len() > 1 {
                return Err("cannot mix stdin with other files".into());
            }
            return Ok(vec!["-".into()]);
        }
        let meta = std::fs::metadata(p).map_err(|e| format!("stat {p}: {e}"))?;
        if !meta.is_dir() {
            files.push(p.clone());
            continue;
        }
        walk(p, recursive, &mut files).map_err(|e| format!("error walking directory: {e}"))?;
    }
    Ok(files)
}

fn walk(dir: &str, recursive: bool, out: &mut Vec<String>) -> Result<(), String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map_err(|e| format!("open {dir}: {e}"))?
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    for name in names {
        let path = go_join(dir, &name);
        let meta = std::fs::symlink_metadata(&path).map_err(|e| format!("lstat {path}: {e}"))?;
        if meta.is_dir() {
            if recursive {
                walk(&path, recursive, out)?;
            }
        } else if name.ends_with(".hcl") {
            out.push(path);
        }
    }
    Ok(())
}

/// Go's `filepath.Join(dir, name)` for a plain name: the cleaned path.
fn go_join(dir: &str, name: &str) -> String {
    go_clean(&format!("{dir}/{name}"))
}

/// Go's `path.Clean`: no empty or `.` elements, `..` applied lexically.
fn go_clean(p: &str) -> String {
    let rooted = p.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for el in p.split('/') {
        match el {
            "" | "." => {}
            ".." => {
                if parts.last().is_some_and(|l| *l != "..") {
                    parts.pop();
                } else if !rooted {
                    parts.push("..");
                }
            }
            _ => parts.push(el),
        }
    }
    let body = parts.join("/");
    match (rooted, body.is_empty()) {
        (true, _) => format!("/{body}"),
        (false, true) => ".".into(),
        (false, false) => body,
    }
}

/// Options of function-hcl's formatter.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// `--normalize-literals` (default on): object constructors use `key = value`.
    pub normalize_literals: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            normalize_literals: true,
        }
    }
}

/// function-hcl's `format.Source`: the formatted text, or `src` unchanged when it does
/// not parse.
pub fn format_source(src: &str, opts: Options) -> String {
    let mut sm = SourceMap::new();
    let file = sm.add("fmt.hcl", src);
    let Ok(ast) = crate::syntax::parser::parse_file(&sm, file) else {
        return src.to_string();
    };
    let mut colons = Vec::new();
    if opts.normalize_literals {
        let toks = tokenize(src, FileId(0));
        let mut ranges = Vec::new();
        attribute_values(&ast.body, &mut ranges);
        for (start, end) in ranges {
            let lo = toks.partition_point(|t| (t.span.start.byte as usize) < start);
            let hi = toks.partition_point(|t| (t.span.end.byte as usize) <= end);
            if lo < hi {
                normalize(src, &toks[lo..hi], &mut colons);
            }
        }
    }
    format(&rebuild(src, &colons))
}

/// hclwrite's `Format`: canonical spacing of already valid hcl text.
pub fn format(src: &str) -> String {
    let mut toks = lex(src);
    let lines = lines_for_format(&toks);
    format_indent(&lines, &mut toks);
    format_spaces(&lines, &mut toks);
    format_cells(&lines, &mut toks);
    let mut out = String::with_capacity(src.len() + src.len() / 8);
    for t in &toks {
        for _ in 0..t.spaces {
            out.push(' ');
        }
        out.push_str(t.text);
    }
    out
}

/// One token of the formatter: hclwrite's `Token` (type, bytes, spaces before it).
struct FTok<'a> {
    kind: K,
    text: &'a str,
    spaces: usize,
}

fn lex(src: &str) -> Vec<FTok<'_>> {
    let mut last = 0;
    tokenize(src, FileId(0))
        .into_iter()
        .map(|t| {
            let r = t.span.bytes();
            let spaces = r.start.saturating_sub(last);
            last = r.end;
            FTok {
                kind: t.kind,
                text: src.get(r).unwrap_or(""),
                spaces,
            }
        })
        .collect()
}

/// The text hclwrite's parser hands to `Format`: each token preceded by as many spaces
/// as the bytes between it and the previous token, with the given `:` tokens (byte
/// offsets) written as `=`.
fn rebuild(src: &str, colons: &[usize]) -> String {
    let mut out = String::with_capacity(src.len());
    let mut last = 0;
    for t in tokenize(src, FileId(0)) {
        let r = t.span.bytes();
        for _ in last..r.start {
            out.push(' ');
        }
        if t.kind == K::Colon && colons.binary_search(&r.start).is_ok() {
            out.push('=');
        } else {
            out.push_str(src.get(r.clone()).unwrap_or(""));
        }
        last = r.end.max(last);
    }
    out
}

/// Byte ranges of every attribute's value (after its `=`), in every body, in order.
fn attribute_values(body: &Body, out: &mut Vec<(usize, usize)>) {
    for item in &body.items {
        match item {
            BodyItem::Attribute(a) => {
                out.push((a.equals.end.byte as usize, a.expr.span.end.byte as usize))
            }
            BodyItem::Block(b) => attribute_values(&b.body, out),
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Ctx {
    None,
    Object,
    For,
    Ternary,
}

/// function-hcl's `fixObjectLiteralStyle` over one attribute value: a `:` directly in an
/// object constructor becomes `=`; `:` of a `for` or `? :` closes that context. Any
/// mismatch (a `}` that closes no object, a `:` with no context) leaves the whole value
/// unchanged, as function-hcl does.
fn normalize(src: &str, toks: &[crate::syntax::lexer::Token], colons: &mut Vec<usize>) {
    let mut stack = vec![Ctx::None];
    let mut found = Vec::new();
    for t in toks {
        match t.kind {
            K::OBrace => stack.push(Ctx::Object),
            K::Question => stack.push(Ctx::Ternary),
            K::Ident if src.get(t.span.bytes()) == Some("for") => stack.push(Ctx::For),
            K::CBrace => {
                if stack.last() != Some(&Ctx::Object) {
                    return;
                }
                stack.pop();
            }
            K::Colon => match stack.last().copied().unwrap_or(Ctx::None) {
                Ctx::Object => found.push(t.span.start.byte as usize),
                Ctx::For | Ctx::Ternary => {
                    stack.pop();
                }
                Ctx::None => return,
            },
            _ => {}
        }
    }
    colons.extend(found);
    colons.sort_unstable();
}

/// One line's cells as token index ranges (hclwrite's `formatLine`).
#[derive(Default, Clone)]
struct Line {
    lead: std::ops::Range<usize>,
    assign: Option<std::ops::Range<usize>>,
    comment: Option<std::ops::Range<usize>>,
}

fn is_newline(t: &FTok) -> bool {
    match t.kind {
        K::Newline => true,
        K::Comment => t.text.ends_with('\n'),
        _ => false,
    }
}

fn bracket_change(k: K) -> i32 {
    match k {
        K::OBrace | K::OBrack | K::OParen | K::TemplateControl | K::TemplateInterp => 1,
        K::CBrace | K::CBrack | K::CParen | K::TemplateSeqEnd => -1,
        _ => 0,
    }
}

fn lines_for_format(toks: &[FTok]) -> Vec<Line> {
    let mut lines = Vec::new();
    let mut start = 0;
    for (i, t) in toks.iter().enumerate() {
        if t.kind == K::Eof {
            break;
        }
        if is_newline(t) {
            lines.push(Line {
                lead: start..i + 1,
                ..Line::default()
            });
            start = i + 1;
        }
    }
    let end = toks
        .iter()
        .position(|t| t.kind == K::Eof)
        .unwrap_or(toks.len());
    lines.push(Line {
        lead: start..end.max(start),
        ..Line::default()
    });
    for line in &mut lines {
        let lead = line.lead.clone();
        if lead.is_empty() {
            continue;
        }
        if lead.len() > 1 && toks[lead.end - 1].kind == K::Comment {
            line.comment = Some(lead.end - 1..lead.end);
            line.lead = lead.start..lead.end - 1;
        }
        let lead = line.lead.clone();
        for i in lead.clone() {
            if i > lead.start && toks[i].kind == K::Equal {
                let net: i32 = toks[i..lead.end]
                    .iter()
                    .map(|t| bracket_change(t.kind))
                    .sum();
                if net == 0 {
                    line.assign = Some(i..lead.end);
                    line.lead = lead.start..i;
                }
                break;
            }
        }
    }
    lines
}

fn format_indent(lines: &[Line], toks: &mut [FTok]) {
    let mut indents: Vec<i32> = Vec::new();
    for line in lines {
        if line.lead.is_empty() {
            continue;
        }
        let first = line.lead.start;
        if toks[first].kind == K::Newline {
            toks[first].spaces = 0;
            continue;
        }
        let mut net = 0;
        for t in &toks[line.lead.clone()] {
            net += bracket_change(t.kind);
            if t.kind == K::OHeredoc {
                break;
            }
        }
        if let Some(a) = &line.assign {
            net += toks[a.clone()]
                .iter()
                .map(|t| bracket_change(t.kind))
                .sum::<i32>();
        }
        if net > 0 {
            toks[first].spaces = 2 * indents.len();
            indents.push(net);
        } else {
            if net < 0 {
                let mut closed = -net;
                while closed > 0 {
                    let Some(top) = indents.last_mut() else { break };
                    if closed > *top {
                        closed -= *top;
                        indents.pop();
                    } else if closed < *top {
                        *top -= closed;
                        closed = 0;
                    } else {
                        indents.pop();
                        closed = 0;
                    }
                }
            }
            toks[first].spaces = 2 * indents.len();
        }
    }
}

fn format_spaces(lines: &[Line], toks: &mut [FTok]) {
    for line in lines {
        space_cell(toks, line.lead.clone(), false);
        if let Some(a) = &line.assign {
            space_cell(toks, a.clone(), true);
        }
    }
}

fn space_cell(toks: &mut [FTok], cell: std::ops::Range<usize>, assign: bool) {
    for i in cell.clone() {
        if assign && i == cell.start {
            toks[i].spaces = 1;
        }
        if i + 1 >= cell.end {
            continue;
        }
        let before = if i > cell.start {
            Some((toks[i - 1].kind, toks[i - 1].text))
        } else {
            None
        };
        let space = space_after((toks[i].kind, toks[i].text), before, toks[i + 1].kind);
        toks[i + 1].spaces = usize::from(space);
    }
}

/// hclwrite's `spaceAfterToken` (`before` is `None` at the start of a cell).
fn space_after(subject: (K, &str), before: Option<(K, &str)>, after: K) -> bool {
    let (s, s_text) = subject;
    let b = before.map(|(k, _)| k);
    match () {
        _ if after == K::Newline => false,
        _ if s == K::Ident && after == K::OParen => false,
        _ if (s == K::Ident && after == K::DoubleColon)
            || (s == K::DoubleColon && after == K::Ident) =>
        {
            false
        }
        _ if s == K::Dot || after == K::Dot => false,
        _ if after == K::Comma || after == K::Ellipsis => false,
        _ if s == K::Comma => true,
        _ if matches!(s, K::QuotedLit | K::StringLit | K::OQuote | K::OHeredoc)
            || matches!(after, K::QuotedLit | K::StringLit | K::CQuote | K::CHeredoc) =>
        {
            false
        }
        _ if s == K::Ident && s_text == "in" && b == Some(K::Ident) => true,
        _ if after == K::OBrack
            && (s == K::Ident || s == K::NumberLit || bracket_change(s) < 0) =>
        {
            false
        }
        _ if s == K::Bang => false,
        _ if s == K::Minus => !matches!(
            b,
            None | Some(
                K::OParen
                    | K::OBrace
                    | K::OBrack
                    | K::Equal
                    | K::Colon
                    | K::Comma
                    | K::Question
                    | K::Plus
                    | K::Star
                    | K::Slash
                    | K::Percent
                    | K::Minus
                    | K::EqualOp
                    | K::NotEqual
                    | K::GreaterThan
                    | K::GreaterThanEq
                    | K::LessThan
                    | K::LessThanEq
                    | K::And
                    | K::Or
                    | K::Bang
            )
        ),
        _ if s == K::OBrace || after == K::CBrace => !(s == K::OBrace && after == K::CBrace),
        _ if matches!(s, K::TemplateInterp | K::TemplateControl) && after == K::OBrace => true,
        _ if s == K::CBrace && after == K::TemplateSeqEnd => true,
        _ if s == K::TemplateSeqEnd && matches!(after, K::TemplateInterp | K::TemplateControl) => {
            false
        }
        _ if bracket_change(s) > 0 => false,
        _ if bracket_change(after) < 0 => false,
        _ => true,
    }
}

/// hclwrite's `Tokens.Columns`: spaces plus grapheme clusters.
fn columns(toks: &[FTok], cell: Option<&std::ops::Range<usize>>) -> usize {
    cell.map_or(0, |c| {
        toks[c.clone()]
            .iter()
            .map(|t| t.spaces + graphemes(t.text).count())
            .sum()
    })
}

fn format_cells(lines: &[Line], toks: &mut [FTok]) {
    // `=` of consecutive single-line attributes, then trailing comments.
    align_runs(
        lines,
        toks,
        |l| l.assign.as_ref(),
        |toks, l| columns(toks, Some(&l.lead)),
    );
    align_runs(
        lines,
        toks,
        |l| l.comment.as_ref(),
        |toks, l| columns(toks, Some(&l.lead)) + columns(toks, l.assign.as_ref()),
    );
}

/// hclwrite's alignment of one kind of cell (`cell`: a line's `=` or trailing comment):
/// in each run of consecutive lines that have one, every cell starts one column after
/// the widest `before` it.
fn align_runs(
    lines: &[Line],
    toks: &mut [FTok],
    cell: impl Fn(&Line) -> Option<&std::ops::Range<usize>>,
    before: impl Fn(&[FTok], &Line) -> usize,
) {
    for run in lines.chunk_by(|a, b| cell(a).is_some() == cell(b).is_some()) {
        let max = run.iter().map(|l| before(toks, l)).max().unwrap_or(0);
        for l in run {
            let cols = before(toks, l);
            if let Some(c) = cell(l) {
                toks[c.start].spaces = max - cols + 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(src: &str) -> String {
        format_source(src, Options::default())
    }

    #[test]
    fn spacing_between_token_pairs() {
        assert_eq!(f("a=1\n"), "a = 1\n");
        assert_eq!(f("a    =    b.c  .  d\n"), "a = b.c.d\n");
        assert_eq!(f("a = f( 1 ,2,  3 )\n"), "a = f(1, 2, 3)\n");
        assert_eq!(f("a = [ 1, 2 ]\n"), "a = [1, 2]\n");
        assert_eq!(f("a = x[ 0 ]\n"), "a = x[0]\n");
        assert_eq!(f("a = {b=1}\n"), "a = { b = 1 }\n");
        assert_eq!(f("a = {}\n"), "a = {}\n");
        assert_eq!(f("a = !  b\n"), "a = !b\n");
        assert_eq!(f("a = - 1\n"), "a = -1\n");
        assert_eq!(f("a = b -1\n"), "a = b - 1\n");
        assert_eq!(f("a = (b)*-1\n"), "a = (b) * -1\n");
        assert_eq!(f("a = f(x ...)\n"), "a = f(x...)\n");
        assert_eq!(f("a = x ?  1 :2\n"), "a = x ? 1 : 2\n");
        assert_eq!(f("a = [for x in[1]: x]\n"), "a = [for x in [1] : x]\n");
        assert_eq!(f("a = \"${ x }-${y}\"\n"), "a = \"${x}-${y}\"\n");
        assert_eq!(f("a = \"${ {b=1} }\"\n"), "a = \"${ { b = 1 } }\"\n");
        assert_eq!(f("a = x[*] .id\n"), "a = x[*].id\n");
    }

    #[test]
    fn deep_or_huge_inputs_neither_overflow_nor_change_meaning() {
        // Past the parser's nesting limit: not a program, left as it is.
        let deep = format!("x = {}{}\n", "[".repeat(100_000), "]".repeat(100_000));
        assert_eq!(format_source(&deep, Options::default()), deep);
        // At the limit's order of magnitude: formatted, and formatting again changes nothing.
        let nested = format!("x = {}1{}\n", "{a: ".repeat(200), " }".repeat(200));
        let once = format_source(&nested, Options::default());
        assert!(once.starts_with("x = { a = { a = "), "{}", &once[..40]);
        assert_eq!(format_source(&once, Options::default()), once);
        // Many lines: the alignment runs stay linear.
        let wide: String = (0..20_000).map(|i| format!("a{i} = {i}\n")).collect();
        let out = format_source(&wide, Options::default());
        assert_eq!(out.lines().count(), 20_000);
        assert!(out.starts_with("a0     = 0\n"), "{}", &out[..20]);
    }

    #[test]
    fn indentation_by_nesting() {
        assert_eq!(
            f("r {\nb {\nx = 1\n}\n}\n"),
            "r {\n  b {\n    x = 1\n  }\n}\n"
        );
        assert_eq!(
            f("a = {\n      b = [\n1,\n      2,\n]\n    }\n"),
            "a = {\n  b = [\n    1,\n    2,\n  ]\n}\n"
        );
        // Blank lines lose their spaces; tabs between tokens become spaces.
        assert_eq!(f("r {\n   \n\tx\t= 1\n}\n"), "r {\n\n  x = 1\n}\n");
    }

    #[test]
    fn aligns_equals_in_runs_of_single_line_attributes() {
        assert_eq!(
            f("r {\na = 1\nlong_name = 2\n\nc = 3\nd = {\ne = 1\n}\n}\n"),
            "r {\n  a         = 1\n  long_name = 2\n\n  c = 3\n  d = {\n    e = 1\n  }\n}\n"
        );
    }

    #[test]
    fn aligns_trailing_comments_and_keeps_comments() {
        assert_eq!(
            f("a = 1 # one\nbbb = 2 // two\n# alone\n/* block */\nc=3\n"),
            "a   = 1 # one\nbbb = 2 // two\n# alone\n/* block */\nc = 3\n"
        );
    }

    #[test]
    fn heredocs_are_untouched() {
        let src = "r {\nx = <<-EOT\n    keep   this\n  ${ y }\n    EOT\n}\n";
        assert_eq!(
            f(src),
            "r {\n  x = <<-EOT\n    keep   this\n  ${y}\n    EOT\n}\n"
        );
    }

    #[test]
    fn normalizes_object_literals() {
        assert_eq!(
            f("a = { b: 1, c: { d: 2 } }\n"),
            "a = { b = 1, c = { d = 2 } }\n"
        );
        assert_eq!(
            f("a = { for k, v in x : k => v }\n"),
            "a = { for k, v in x : k => v }\n"
        );
        assert_eq!(f("a = x ? { b: 1 } : {}\n"), "a = x ? { b = 1 } : {}\n");
        // A template `for` never closed by a `:` makes function-hcl give up on the value.
        assert_eq!(
            f("a = { b: \"%{for x in y}${x}%{endfor}\" }\n"),
            "a = { b : \"%{for x in y}${x}%{endfor}\" }\n"
        );
        let off = Options {
            normalize_literals: false,
        };
        assert_eq!(format_source("a = {b: 1}\n", off), "a = { b : 1 }\n");
    }

    /// hclwrite's `TestFormat` cases (hcl v2 rules: a space before the `:` of a `for`).
    #[test]
    fn hclwrite_format_cases() {
        let cases: &[(&str, &str)] = &[
            ("", ""),
            ("a=1", "a = 1"),
            ("a=b.c", "a = b.c"),
            ("a=b[c]", "a = b[c]"),
            ("a=b()[c]", "a = b()[c]"),
            (r#"a=["hello"][0]"#, r#"a = ["hello"][0]"#),
            ("( a+2 )", "(a + 2)"),
            ("( a*2 )", "(a * 2)"),
            ("( a+-2 )", "(a + -2)"),
            ("( a*-2 )", "(a * -2)"),
            ("(-2+1)", "(-2 + 1)"),
            ("foo(1, -2,a*b, b,c)", "foo(1, -2, a * b, b, c)"),
            (r#"a="hello ${ name }""#, r#"a = "hello ${name}""#),
            (r#"a="hello ${~ name ~}""#, r#"a = "hello ${~name~}""#),
            ("b{}", "b {}"),
            ("\n\"${\nhello\n}\"\n", "\n\"${\n  hello\n}\"\n"),
            (
                "\nfoo(\n1,\n- 2,\na*b,\nb,\nc,\n)\n",
                "\nfoo(\n  1,\n  -2,\n  a * b,\n  b,\n  c,\n)\n",
            ),
            ("[ [ ] ]", "[[]]"),
            ("[for x in y: x]", "[for x in y : x]"),
            ("[for x in [y]: x]", "[for x in [y] : x]"),
            ("\n[\n[\na\n]\n]\n", "\n[\n  [\n    a\n  ]\n]\n"),
            ("\n[[\na\n]]\n", "\n[[\n  a\n]]\n"),
            ("\n[[\n[\na\n]\n]]\n", "\n[[\n  [\n    a\n  ]\n]]\n"),
            // Degenerate, asymmetrical brackets.
            ("\n[[\n[\na\n]]\n]\n", "\n[[\n  [\n    a\n  ]]\n]\n"),
            ("\nb {\na = 1\n}\n", "\nb {\n  a = 1\n}\n"),
            ("\nb {a = 1}\n", "\nb { a = 1 }\n"),
            ("\na = 1\nbungle = 2\n", "\na      = 1\nbungle = 2\n"),
            ("\na = 1\n\nbungle = 2\n", "\na = 1\n\nbungle = 2\n"),
            (
                "\na = 1 # foo\nbungle = 2\n",
                "\na      = 1 # foo\nbungle = 2\n",
            ),
            (
                "\na = 1 # foo\nbungle = \"bonce\" # baz\n",
                "\na      = 1       # foo\nbungle = \"bonce\" # baz\n",
            ),
            (
                "\n# here we go\na = 1 # foo\nbungle = \"bonce\" # baz\n",
                "\n# here we go\na      = 1       # foo\nbungle = \"bonce\" # baz\n",
            ),
            (
                "\nfoo {} # here we go\na = 1 # foo\nbungle = \"bonce\" # baz\n",
                "\nfoo {}           # here we go\na      = 1       # foo\nbungle = \"bonce\" # baz\n",
            ),
            (
                "\na = 1 # foo\nbungle = \"bonce\" # baz\nzebra = \"striped\" # baz\n",
                "\na      = 1         # foo\nbungle = \"bonce\"   # baz\nzebra  = \"striped\" # baz\n",
            ),
            (
                "\na = 1 # foo\nbungle = (\n    \"bonce\"\n) # baz\nzebra = \"striped\" # baz\n",
                "\na = 1 # foo\nbungle = (\n  \"bonce\"\n)                 # baz\nzebra = \"striped\" # baz\n",
            ),
            (
                "\na=\"apple\"# foo\nbungle=(# woo parens\n\"bonce\"\n)# baz\nzebra=\"striped\"# baz\n",
                "\na = \"apple\" # foo\nbungle = (  # woo parens\n  \"bonce\"\n)                 # baz\nzebra = \"striped\" # baz\n",
            ),
            (
                "\n\u{1d49c} = 1 # foo\nbungle = \"\u{1f1ec}\u{1f1e7}\" # baz\nzebra = \"striped\" # baz\n",
                "\n\u{1d49c}      = 1         # foo\nbungle = \"\u{1f1ec}\u{1f1e7}\"       # baz\nzebra  = \"striped\" # baz\n",
            ),
            ("\nfoo {\n# ...\n}\n", "\nfoo {\n  # ...\n}\n"),
            ("\nfoo = {\n# ...\n}\n", "\nfoo = {\n  # ...\n}\n"),
            ("\nfoo = [\n# ...\n]\n", "\nfoo = [\n  # ...\n]\n"),
            ("\nfoo = [{\n# ...\n}]\n", "\nfoo = [{\n  # ...\n}]\n"),
            (
                "\nfoo {\nbar {\n# ...\n}\n}\n",
                "\nfoo {\n  bar {\n    # ...\n  }\n}\n",
            ),
            (
                "\nfoo {\nbar = {\n# ...\n}\n}\n",
                "\nfoo {\n  bar = {\n    # ...\n  }\n}\n",
            ),
            (
                "\nfoo {\nbar = [\n# ...\n]\n}\n",
                "\nfoo {\n  bar = [\n    # ...\n  ]\n}\n",
            ),
        ];
        for (input, want) in cases {
            assert_eq!(format(input), *want, "input {input:?}");
        }
    }

    #[test]
    fn never_panics_on_fragments() {
        let src = "r \"x\" {\n  a = <<-EOT\n    ${ b }\n  %{ if c }d%{ endif }\n  EOT # c\n  e = [for k, v in f : { (k) : v... } if v != null]\n  /* g */ h = !i ? -1 : j[*].k\n}\n";
        for (i, _) in src.char_indices() {
            let piece = &src[..i];
            let _ = format(piece);
            let _ = format_source(piece, Options::default());
            let _ = format(&src[i..]);
        }
    }

    #[test]
    fn go_paths() {
        assert_eq!(go_join(".", "a.hcl"), "a.hcl");
        assert_eq!(go_join("dir/", "a.hcl"), "dir/a.hcl");
        assert_eq!(go_join("./x/../dir", "a.hcl"), "dir/a.hcl");
        assert_eq!(go_join("/", "a.hcl"), "/a.hcl");
        assert_eq!(go_clean("../a/./b"), "../a/b");
    }

    #[test]
    fn unparsable_input_is_returned_unchanged() {
        assert_eq!(f("a = = 1\n  b {"), "a = = 1\n  b {");
    }
}
