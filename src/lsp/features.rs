//! The requests an editor makes about a program: completion, hover, definition,
//! references, rename, document symbols, semantic tokens, signature help, formatting.
//! Each takes an [`Analysis`] and a byte offset (already clamped) and never fails on odd
//! input: an answer it cannot give is `None` or empty.

use crate::lower::index::{Index, Symbol, SymbolKind, Visible};
use crate::lower::ir::REQ_FIELDS;
use crate::lower::schema;
use crate::lsp::workspace::Analysis;
use crate::runtime::eval::DiscardReason;
use crate::syntax::ast::{self, Body, BodyItem, Expr, ExprKind};
use crate::syntax::lexer::{Token, TokenKind as K};
use crate::syntax::span::{FileId, Span};
use lsp_types::*;
use std::collections::HashMap;

/// What each field of `req` holds.
pub fn req_field_doc(name: &str) -> Option<&'static str> {
    Some(match name {
        "composite" => "The observed composite resource (XR).",
        "composite_connection" => "The observed composite's connection details.",
        "resource" => "Observed composed resources, by resource name: `req.resource.NAME`.",
        "connection" => "Connection details of observed resources, by resource name.",
        "resources" => "Observed members of each collection, by base name: `req.resources.NAME`.",
        "connections" => "Connection details of collection members, by base name.",
        "context" => "The pipeline context.",
        "extra_resources" => "Objects matched by `requirement` blocks, by requirement name.",
        _ => return None,
    })
}

/// What each block type is for.
pub fn block_doc(kind: &str) -> &'static str {
    match kind {
        "locals" => "Local variables of this scope.",
        "group" => "Blocks that share locals and a condition.",
        "resource" => "A composed resource: `body` is its manifest.",
        "resources" => "A collection of composed resources, one per element of `for_each`.",
        "template" => "The resource template of a collection (`each.key`, `each.value`).",
        "composite" => {
            "`composite status` or `composite connection`: the composite's status or connection details."
        }
        "context" => "A value written to the pipeline context.",
        "requirement" => "Extra resources this function needs, by selector.",
        "select" => "A requirement's selector: apiVersion, kind, matchName or matchLabels.",
        "ready" => "Whether the resource is ready.",
        "function" => "A user function, called with `invoke(\"name\", { args })`.",
        "arg" => "An argument of a user function.",
        _ => "",
    }
}

/// The text of a span of the analysis.
fn src(a: &Analysis, sp: Span) -> &str {
    a.sources.slice(sp)
}

fn is_ident_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || b >= 0x80
}

/// The identifier ending at `byte` (its start).
fn ident_start(text: &[u8], byte: usize) -> usize {
    let mut i = byte;
    while i > 0 && is_ident_byte(text[i - 1]) {
        i -= 1;
    }
    i
}

/// `a.b.c.` before `end` (which is just after a dot): the names, or none.
fn chain_before_dot(text: &[u8], end: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut i = end;
    while i > 0 && text[i - 1] == b'.' {
        let stop = i - 1;
        let start = ident_start(text, stop);
        if start == stop {
            break;
        }
        out.push(String::from_utf8_lossy(&text[start..stop]).to_string());
        i = start;
    }
    out.reverse();
    out
}

/// The token that covers `byte` (or ends at it).
fn token_at(tokens: &[Token], byte: u32) -> Option<&Token> {
    tokens
        .iter()
        .find(|t| t.span.start.byte <= byte && byte < t.span.end.byte)
        .or_else(|| {
            tokens
                .iter()
                .rev()
                .find(|t| t.span.end.byte == byte && t.kind == K::Ident)
        })
}

/// Tokens of one file of the analysis.
fn tokens(a: &Analysis, f: FileId) -> Vec<Token> {
    crate::syntax::lexer::tokenize(a.text(f), f)
}

/// The attribute whose expression covers `byte`.
fn attr_expr_at(trees: &[ast::File], f: FileId, byte: u32) -> Option<&ast::Attribute> {
    fn body_attr(b: &Body, f: FileId, byte: u32) -> Option<&ast::Attribute> {
        for item in &b.items {
            match item {
                BodyItem::Attribute(at) => {
                    let sp = at.expr.span;
                    if sp.file == f && sp.start.byte < byte && byte <= sp.end.byte {
                        return Some(at);
                    }
                }
                BodyItem::Block(bl) => {
                    if bl.span.file == f
                        && bl.span.start.byte <= byte
                        && byte <= bl.span.end.byte
                        && let Some(x) = body_attr(&bl.body, f, byte)
                    {
                        return Some(x);
                    }
                }
            }
        }
        None
    }
    trees
        .get(f.0 as usize)
        .and_then(|t| body_attr(&t.body, f, byte))
}

// ----- completion ------------------------------------------------------------------

/// Completion items at a position.
pub fn completion(a: &Analysis, f: FileId, byte: u32) -> Vec<CompletionItem> {
    let text = a.text(f);
    let bytes = text.as_bytes();
    let byte = (byte as usize).min(bytes.len());
    let toks = tokens(a, f);
    let start = ident_start(bytes, byte);
    let in_string = toks.iter().any(|t| {
        matches!(t.kind, K::QuotedLit | K::StringLit | K::Comment | K::CQuote)
            && t.span.start.byte < byte as u32
            && byte as u32 <= t.span.end.byte
            && !(t.kind == K::Comment
                && text[t.span.bytes()].ends_with('\n')
                && t.span.end.byte == byte as u32)
    });
    let line_start = text[..start].rfind(['\n', '\r']).map_or(0, |i| i + 1);
    let before = &text[line_start..start];
    // invoke("|
    let trimmed = before.trim_end();
    if let Some(rest) = trimmed.strip_suffix('"')
        && rest
            .trim_end()
            .strip_suffix('(')
            .is_some_and(|r| r.trim_end().ends_with("invoke"))
    {
        return a
            .index
            .symbols_of(SymbolKind::Function)
            .map(|s| function_item(a, &a.index, s))
            .collect();
    }
    if in_string {
        return Vec::new();
    }
    if start > 0 && bytes[start - 1] == b'.' {
        return members(a, f, start as u32, &chain_before_dot(bytes, start));
    }
    let in_expr = attr_expr_at(&a.trees, f, byte as u32).is_some()
        || before.contains([
            '=', '(', '[', ',', '?', ':', '{', '+', '*', '/', '!', '<', '>', '&', '|',
        ])
        || before.contains("${");
    if in_expr {
        return expression_items(a, f, byte as u32);
    }
    // The first word on the line: a block type or attribute; the second: a label.
    let words: Vec<&str> = before.split_whitespace().collect();
    if words.len() == 1 && words[0] == "composite" {
        return ["status", "connection"]
            .iter()
            .map(|l| CompletionItem {
                label: l.to_string(),
                kind: Some(CompletionItemKind::ENUM_MEMBER),
                detail: Some(format!("composite {l}")),
                ..Default::default()
            })
            .collect();
    }
    if !words.is_empty() {
        return Vec::new();
    }
    body_items(&a.index, f, byte as u32)
}

/// Block types and attributes valid in the body at `byte`.
fn body_items(ix: &Index, f: FileId, byte: u32) -> Vec<CompletionItem> {
    let Some(body) = ix.body_at(f, byte) else {
        return Vec::new();
    };
    let sch: &schema::Schema = if body.kind.is_empty() {
        &schema::TOP
    } else {
        match schema::of_block(&body.kind) {
            Some(s) => s,
            None => return Vec::new(),
        }
    };
    let mut out = Vec::new();
    for at in sch.attrs {
        if body.attrs.iter().any(|x| &**x == at.name) {
            continue;
        }
        out.push(CompletionItem {
            label: at.name.to_string(),
            kind: Some(CompletionItemKind::PROPERTY),
            detail: Some(if at.required {
                "attribute (required)".to_string()
            } else {
                "attribute".to_string()
            }),
            insert_text: Some(format!("{} = ", at.name)),
            ..Default::default()
        });
    }
    for b in sch.blocks {
        let labels: Vec<String> = if b.kind == "composite" {
            vec!["status".into(), "connection".into()]
        } else {
            b.labels.iter().map(|l| format!("<{l}>")).collect()
        };
        if b.kind == "composite" {
            for l in &labels {
                out.push(block_item(
                    b.kind,
                    &format!("composite {l}"),
                    &format!("composite {l} {{\n}}"),
                ));
            }
            continue;
        }
        let label = if labels.is_empty() {
            b.kind.to_string()
        } else {
            format!("{} {}", b.kind, labels.join(" "))
        };
        let insert = if b.labels.is_empty() {
            format!("{} {{\n}}", b.kind)
        } else {
            format!("{} \"\" {{\n}}", b.kind)
        };
        out.push(block_item(b.kind, &label, &insert));
    }
    out
}

fn block_item(kind: &str, label: &str, insert: &str) -> CompletionItem {
    CompletionItem {
        label: label.to_string(),
        kind: Some(CompletionItemKind::KEYWORD),
        detail: Some("block".into()),
        documentation: Some(Documentation::String(block_doc(kind).to_string())),
        filter_text: Some(kind.to_string()),
        insert_text: Some(insert.to_string()),
        ..Default::default()
    }
}

/// Variables in scope, built-in functions, `invoke`.
fn expression_items(a: &Analysis, f: FileId, byte: u32) -> Vec<CompletionItem> {
    let mut out = Vec::new();
    for v in a.index.visible_at(f, byte) {
        out.push(variable_item(a, &v));
    }
    for name in ["true", "false", "null"] {
        out.push(CompletionItem {
            label: name.into(),
            kind: Some(CompletionItemKind::KEYWORD),
            ..Default::default()
        });
    }
    for def in crate::builtins::all() {
        out.push(CompletionItem {
            label: def.name.to_string(),
            kind: Some(CompletionItemKind::FUNCTION),
            detail: Some(builtin_signature(def.name)),
            documentation: crate::builtins::docs::description(def.name)
                .map(|d| Documentation::String(d.to_string())),
            insert_text: Some(format!("{}(", def.name)),
            ..Default::default()
        });
    }
    for name in ["try", "can", "invoke"] {
        if crate::builtins::lookup(name).is_none() {
            out.push(CompletionItem {
                label: name.to_string(),
                kind: Some(CompletionItemKind::FUNCTION),
                detail: Some(builtin_signature(name)),
                documentation: crate::builtins::docs::description(name)
                    .map(|d| Documentation::String(d.to_string())),
                insert_text: Some(format!("{name}(")),
                ..Default::default()
            });
        }
    }
    out
}

fn variable_item(a: &Analysis, v: &Visible) -> CompletionItem {
    let (kind, detail) = match v.symbol.map(|id| &a.index.symbols[id]) {
        Some(s) if s.kind == SymbolKind::Arg => {
            (CompletionItemKind::VARIABLE, "argument".to_string())
        }
        Some(s) => (
            CompletionItemKind::VARIABLE,
            match local_type(a, s) {
                Some(t) => format!("local: {t}"),
                None => "local".to_string(),
            },
        ),
        None if !v.fields.is_empty() => (
            CompletionItemKind::MODULE,
            format!("{{ {} }}", v.fields.join(", ")),
        ),
        None => (CompletionItemKind::VARIABLE, "for variable".to_string()),
    };
    CompletionItem {
        label: v.name.to_string(),
        kind: Some(kind),
        detail: Some(detail),
        ..Default::default()
    }
}

fn function_item(a: &Analysis, ix: &Index, s: &Symbol) -> CompletionItem {
    CompletionItem {
        label: s.name.to_string(),
        kind: Some(CompletionItemKind::FUNCTION),
        detail: Some(function_signature(a, ix, s)),
        ..Default::default()
    }
}

/// Fields after `chain.` (e.g. `req.`, `self.`, `each.`, `req.resource.`).
fn members(a: &Analysis, f: FileId, byte: u32, chain: &[String]) -> Vec<CompletionItem> {
    let visible = a.index.visible_at(f, byte);
    let names: Vec<&str> = chain.iter().map(String::as_str).collect();
    let field = |name: &str, detail: String, doc: Option<&str>| CompletionItem {
        label: name.to_string(),
        kind: Some(CompletionItemKind::FIELD),
        detail: Some(detail),
        documentation: doc.map(|d| Documentation::String(d.to_string())),
        ..Default::default()
    };
    let symbols = |kind: SymbolKind, what: &str| -> Vec<CompletionItem> {
        let mut seen = Vec::new();
        a.index
            .symbols_of(kind)
            .filter(|s| {
                let new = !seen.contains(&s.name);
                seen.push(s.name.clone());
                new
            })
            .map(|s| field(&s.name, what.to_string(), None))
            .collect()
    };
    match names.as_slice() {
        ["req", "resource" | "connection"] => symbols(SymbolKind::Resource, "resource"),
        ["req", "resources" | "connections"] => symbols(SymbolKind::Collection, "collection"),
        ["req", "extra_resources"] => symbols(SymbolKind::Requirement, "requirement"),
        [root] => {
            let Some(v) = visible.iter().find(|v| &*v.name == *root) else {
                return Vec::new();
            };
            if &*v.name == "req" && v.symbol.is_none() {
                return REQ_FIELDS
                    .iter()
                    .map(|n| field(n, "req field".into(), req_field_doc(n)))
                    .collect();
            }
            if !v.fields.is_empty() {
                return v
                    .fields
                    .iter()
                    .map(|n| field(n, format!("{} field", v.name), None))
                    .collect();
            }
            // A local whose static type is an object: its attributes.
            let Some(id) = v.symbol else {
                return Vec::new();
            };
            match local_stype(a, &a.index.symbols[id]) {
                Some(crate::lower::types::SType::Object(fields)) => fields
                    .iter()
                    .map(|(n, t)| field(n, t.to_string(), None))
                    .collect(),
                _ => Vec::new(),
            }
        }
        _ => Vec::new(),
    }
}

// ----- hover and signatures --------------------------------------------------------

/// `name(param type, ...)` of a built-in function (or `try`, `can`, `invoke`).
pub fn builtin_signature(name: &str) -> String {
    match known_builtin_params(name) {
        Some(params) => format!("{name}({})", params.join(", ")),
        None => format!("{name}(...)"),
    }
}

/// The parameter labels of a built-in function (none for an unknown name).
fn builtin_params(name: &str) -> Vec<String> {
    known_builtin_params(name).unwrap_or_default()
}

/// The parameter labels (`name type`) of a built-in function, `None` if there is none by
/// that name.
fn known_builtin_params(name: &str) -> Option<Vec<String>> {
    match name {
        "try" => return Some(vec!["expressions...".into()]),
        "can" => return Some(vec!["expression".into()]),
        "invoke" => return Some(vec!["name string".into(), "args object".into()]),
        _ => {}
    }
    let def = crate::builtins::lookup(name).map(crate::builtins::get)?;
    let mut params: Vec<String> = def
        .params
        .iter()
        .map(|p| format!("{} {}", p.name, p.ty.to_type().friendly_name()))
        .collect();
    if let Some(v) = def.var_param {
        params.push(format!("{}... {}", v.name, v.ty.to_type().friendly_name()));
    }
    Some(params)
}

/// `function name(arg = default, ...)`.
fn function_signature(a: &Analysis, ix: &Index, s: &Symbol) -> String {
    let args: Vec<String> = s
        .args
        .iter()
        .map(|&id| {
            let arg = &ix.symbols[id];
            match arg.value {
                Some(d) => format!("{} = {}", arg.name, src(a, d)),
                None => arg.name.to_string(),
            }
        })
        .collect();
    format!("function {}({})", s.name, args.join(", "))
}

fn local_stype<'a>(a: &'a Analysis, s: &Symbol) -> Option<&'a crate::lower::types::SType> {
    let p = a.program.as_ref()?;
    let value = s.value?;
    p.all_local_defs()
        .into_iter()
        .find(|d| d.expr.range == value && d.name == s.name)
        .map(|d| p.type_of(&d.expr))
}

fn local_type(a: &Analysis, s: &Symbol) -> Option<String> {
    local_stype(a, s).map(|t| t.to_string())
}

fn markdown(text: String) -> Hover {
    Hover {
        contents: HoverContents::Markup(MarkupContent {
            kind: MarkupKind::Markdown,
            value: text,
        }),
        range: None,
    }
}

/// Hover text for a definition.
pub fn symbol_markdown(a: &Analysis, s: &Symbol) -> String {
    match s.kind {
        SymbolKind::Local => {
            let mut out = format!("local `{}`", s.name);
            if let Some(t) = local_type(a, s) {
                out.push_str(&format!(": `{t}`"));
            }
            out.push_str(&format!("\n\n```hcl\n{}\n```", src(a, s.span)));
            if let (Some(Ok(run)), Some(value)) = (&a.sample, s.value) {
                let values = crate::lsp::sample::local_values(run, value);
                if !values.is_empty() {
                    out.push_str(&format!(
                        "\n\nWith the sample request ({}):",
                        crate::lsp::sample::XR_FILE
                    ));
                    for v in values {
                        out.push_str(&format!(
                            "\n```json\n{}\n```",
                            crate::lsp::sample::show_value(v)
                        ));
                    }
                }
            }
            out
        }
        SymbolKind::Function => {
            let mut out = format!("```hcl\n{}\n```", function_signature(a, &a.index, s));
            if let Some(d) = s.description {
                out.push_str(&format!("\n\n{}", src(a, d).trim_matches('"')));
            }
            out
        }
        SymbolKind::Arg => {
            let mut out = format!("argument `{}`", s.name);
            if let Some(d) = s.value {
                out.push_str(&format!(" (default `{}`)", src(a, d)));
            }
            if let Some(d) = s.description {
                out.push_str(&format!("\n\n{}", src(a, d).trim_matches('"')));
            }
            out
        }
        SymbolKind::Resource => format!("resource `{}`\n\n{}", s.name, block_doc("resource")),
        SymbolKind::Collection => {
            format!("resources `{}`\n\n{}", s.name, block_doc("resources"))
        }
        SymbolKind::Requirement => {
            format!("requirement `{}`\n\n{}", s.name, block_doc("requirement"))
        }
    }
}

/// Hover at a position: a definition or use, a built-in function, `req`/`self`/`each`
/// or one of their fields, a block type.
pub fn hover(a: &Analysis, f: FileId, byte: u32) -> Option<Hover> {
    let text = a.text(f);
    let toks = tokens(a, f);
    let tok = token_at(&toks, byte)?;
    if tok.kind != K::Ident && tok.kind != K::QuotedLit {
        return None;
    }
    let range = Some(a.range(tok.span).1);
    if let Some(id) = a.index.symbol_at(f, byte) {
        let mut h = markdown(symbol_markdown(a, &a.index.symbols[id]));
        h.range = range;
        return Some(h);
    }
    if tok.kind != K::Ident {
        return None;
    }
    let name = &text[tok.span.bytes()];
    let after = text[tok.span.end.byte as usize..].trim_start();
    let bytes = text.as_bytes();
    let start = tok.span.start.byte as usize;
    let value = if after.starts_with('(') {
        let doc = crate::builtins::docs::description(name)?;
        format!("```hcl\n{}\n```\n\n{doc}", builtin_signature(name))
    } else if start > 0 && bytes[start - 1] == b'.' {
        let chain = chain_before_dot(bytes, start);
        match chain.as_slice() {
            [r] if r == "req" => format!("`req.{name}`\n\n{}", req_field_doc(name)?),
            _ => return None,
        }
    } else if let Some(v) = a
        .index
        .visible_at(f, byte)
        .into_iter()
        .find(|v| &*v.name == name && v.symbol.is_none() && !v.fields.is_empty())
    {
        format!("`{}`: {{ {} }}", v.name, v.fields.join(", "))
    } else if let Some(b) = block_keyword_at(&a.trees, f, tok.span) {
        format!("block `{b}`\n\n{}", block_doc(b))
    } else {
        return None;
    };
    let mut h = markdown(value);
    h.range = range;
    Some(h)
}

/// The block type whose keyword is at `span`.
fn block_keyword_at(trees: &[ast::File], f: FileId, span: Span) -> Option<&str> {
    fn walk(b: &Body, span: Span) -> Option<&str> {
        for bl in b.blocks() {
            if bl.kind.span == span {
                return Some(&bl.kind.name);
            }
            if bl.span.start.byte <= span.start.byte
                && span.end.byte <= bl.span.end.byte
                && let Some(x) = walk(&bl.body, span)
            {
                return Some(x);
            }
        }
        None
    }
    walk(&trees.get(f.0 as usize)?.body, span)
}

/// Signature help inside a call's parentheses: the innermost unclosed `name(` before the
/// cursor, and the argument the cursor is in.
pub fn signature_help(a: &Analysis, f: FileId, byte: u32) -> Option<SignatureHelp> {
    let text = a.text(f);
    let toks = tokens(a, f);
    let mut depth = 0i32;
    let mut commas = 0u32;
    let before: Vec<&Token> = toks.iter().filter(|t| t.span.end.byte <= byte).collect();
    let mut i = before.len();
    while i > 0 {
        i -= 1;
        let t = before[i];
        match t.kind {
            K::CParen | K::CBrack | K::CBrace => depth += 1,
            K::OBrack | K::OBrace if depth > 0 => depth -= 1,
            K::OBrack | K::OBrace => return None,
            K::OParen if depth > 0 => depth -= 1,
            K::OParen => {
                let name_tok = before.get(i.checked_sub(1)?)?;
                if name_tok.kind != K::Ident {
                    return None;
                }
                let name = &text[name_tok.span.bytes()];
                let (label, params, doc) = (
                    builtin_signature(name),
                    builtin_params(name),
                    crate::builtins::docs::description(name),
                );
                if params.is_empty() && doc.is_none() {
                    return None;
                }
                let active = if params.is_empty() {
                    0
                } else {
                    commas.min(params.len() as u32 - 1)
                };
                return Some(SignatureHelp {
                    signatures: vec![SignatureInformation {
                        label,
                        documentation: doc.map(|d| Documentation::String(d.to_string())),
                        parameters: Some(
                            params
                                .into_iter()
                                .map(|p| ParameterInformation {
                                    label: ParameterLabel::Simple(p),
                                    documentation: None,
                                })
                                .collect(),
                        ),
                        active_parameter: Some(active),
                    }],
                    active_signature: Some(0),
                    active_parameter: Some(active),
                });
            }
            K::Comma if depth == 0 => commas += 1,
            K::OQuote | K::CQuote | K::QuotedLit | K::TemplateInterp | K::TemplateSeqEnd => {}
            _ => {}
        }
    }
    None
}

// ----- navigation ------------------------------------------------------------------

/// The definition of the name at a position.
pub fn definition(a: &Analysis, f: FileId, byte: u32) -> Option<Location> {
    let id = a.index.symbol_at(f, byte)?;
    a.location(a.index.symbols[id].name_span)
}

/// The uses of the name at a position (and its definition when asked).
pub fn references(a: &Analysis, f: FileId, byte: u32, declaration: bool) -> Vec<Location> {
    let Some(id) = a.index.symbol_at(f, byte) else {
        return Vec::new();
    };
    let mut spans: Vec<Span> = Vec::new();
    if declaration {
        spans.push(a.index.symbols[id].name_span);
    }
    spans.extend(a.index.references_to(id));
    spans.into_iter().filter_map(|s| a.location(s)).collect()
}

/// The range of a renamable name at a position (locals, arguments, functions).
pub fn prepare_rename(a: &Analysis, f: FileId, byte: u32) -> Option<Range> {
    let id = a.index.symbol_at(f, byte)?;
    let s = &a.index.symbols[id];
    if !matches!(
        s.kind,
        SymbolKind::Local | SymbolKind::Function | SymbolKind::Arg
    ) {
        return None;
    }
    let span = if s.name_span.file == f
        && s.name_span.start.byte <= byte
        && byte <= s.name_span.end.byte
    {
        s.name_span
    } else {
        a.index
            .references_to(id)
            .find(|r| r.file == f && r.start.byte <= byte && byte <= r.end.byte)?
    };
    Some(a.range(span).1)
}

/// The edits that rename the name at a position, or why not.
#[allow(clippy::mutable_key_type)] // lsp-types keys WorkspaceEdit::changes by Uri.
pub fn rename(a: &Analysis, f: FileId, byte: u32, new_name: &str) -> Result<WorkspaceEdit, String> {
    let id = a
        .index
        .symbol_at(f, byte)
        .ok_or("there is no local, argument or function here")?;
    let s = &a.index.symbols[id];
    if !matches!(
        s.kind,
        SymbolKind::Local | SymbolKind::Function | SymbolKind::Arg
    ) {
        return Err(format!("a {:?} cannot be renamed", s.kind).to_lowercase());
    }
    if !schema::is_identifier(new_name) {
        return Err(format!("{new_name:?} is not an identifier"));
    }
    if matches!(
        new_name,
        "req" | "self" | "each" | "true" | "false" | "null"
    ) {
        return Err(format!("{new_name:?} is reserved"));
    }
    let taken = match s.kind {
        SymbolKind::Function => a
            .index
            .symbols_of(SymbolKind::Function)
            .any(|x| &*x.name == new_name),
        _ => {
            a.index.lookup(new_name, s.scope).is_some()
                || a.index.scopes[s.scope]
                    .names
                    .iter()
                    .any(|&n| &*a.index.symbols[n].name == new_name)
                || a.index.references_to(id).any(|r| {
                    let sc = a.index.scope_at(r.file, r.start.byte);
                    a.index.lookup(new_name, sc).is_some() || a.index.is_implicit(new_name, sc)
                })
        }
    };
    if taken {
        return Err(format!(
            "{new_name:?} is already defined where this name is used"
        ));
    }
    let mut changes: HashMap<Uri, Vec<TextEdit>> = HashMap::new();
    for span in std::iter::once(s.name_span).chain(a.index.references_to(id)) {
        if let Some(loc) = a.location(span) {
            changes.entry(loc.uri).or_default().push(TextEdit {
                range: loc.range,
                new_text: new_name.to_string(),
            });
        }
    }
    Ok(WorkspaceEdit {
        changes: Some(changes),
        ..Default::default()
    })
}

// ----- symbols, formatting, tokens -------------------------------------------------

/// The outline of a file: blocks (resources, collections, groups, functions, ...) with
/// their locals and nested blocks.
pub fn document_symbols(a: &Analysis, f: FileId) -> Vec<DocumentSymbol> {
    let Some(tree) = a.trees.get(f.0 as usize) else {
        return Vec::new();
    };
    body_symbols(a, &tree.body)
}

#[allow(deprecated)] // `DocumentSymbol::deprecated` must be set; it is None.
fn body_symbols(a: &Analysis, b: &Body) -> Vec<DocumentSymbol> {
    let mut out = Vec::new();
    for item in &b.items {
        let BodyItem::Block(bl) = item else {
            continue;
        };
        if &*bl.kind.name == "locals" {
            for at in bl.body.attributes() {
                out.push(DocumentSymbol {
                    name: at.name.name.to_string(),
                    detail: Some("local".into()),
                    kind: lsp_types::SymbolKind::VARIABLE,
                    tags: None,
                    deprecated: None,
                    range: a.range(at.span).1,
                    selection_range: a.range(at.name.span).1,
                    children: None,
                });
            }
            continue;
        }
        let kind = match &*bl.kind.name {
            "resource" | "template" => lsp_types::SymbolKind::OBJECT,
            "resources" => lsp_types::SymbolKind::ARRAY,
            "group" => lsp_types::SymbolKind::NAMESPACE,
            "function" => lsp_types::SymbolKind::FUNCTION,
            "arg" => lsp_types::SymbolKind::VARIABLE,
            "requirement" | "select" => lsp_types::SymbolKind::INTERFACE,
            _ => lsp_types::SymbolKind::STRUCT,
        };
        let mut name = bl.kind.name.to_string();
        for l in &bl.labels {
            name.push(' ');
            name.push_str(&l.value);
        }
        let children = body_symbols(a, &bl.body);
        out.push(DocumentSymbol {
            name,
            detail: None,
            kind,
            tags: None,
            deprecated: None,
            range: a.range(bl.span).1,
            selection_range: a
                .range(bl.labels.first().map_or(bl.kind.span, |l| l.span))
                .1,
            children: (!children.is_empty()).then_some(children),
        });
    }
    out
}

/// `fmt`'s output for a document, as one edit (none when it is already formatted or does
/// not parse).
pub fn formatting(text: &str, lines: &crate::lsp::position::LineIndex) -> Vec<TextEdit> {
    let formatted = crate::syntax::fmt::format(text);
    if formatted == text {
        return Vec::new();
    }
    vec![TextEdit {
        range: lines.range(text, 0, text.len() as u32),
        new_text: formatted,
    }]
}

/// The token types of [`semantic_tokens`], in legend order.
pub const TOKEN_TYPES: &[SemanticTokenType] = &[
    SemanticTokenType::KEYWORD,
    SemanticTokenType::VARIABLE,
    SemanticTokenType::PARAMETER,
    SemanticTokenType::FUNCTION,
    SemanticTokenType::PROPERTY,
    SemanticTokenType::STRING,
    SemanticTokenType::NUMBER,
    SemanticTokenType::COMMENT,
    SemanticTokenType::OPERATOR,
    SemanticTokenType::CLASS,
];
/// The token modifiers of [`semantic_tokens`], in legend order (bit i = entry i).
pub const TOKEN_MODIFIERS: &[SemanticTokenModifier] = &[
    SemanticTokenModifier::DECLARATION,
    SemanticTokenModifier::READONLY,
    SemanticTokenModifier::DEFAULT_LIBRARY,
];

const T_KEYWORD: u32 = 0;
const T_VARIABLE: u32 = 1;
const T_PARAMETER: u32 = 2;
const T_FUNCTION: u32 = 3;
const T_PROPERTY: u32 = 4;
const T_STRING: u32 = 5;
const T_NUMBER: u32 = 6;
const T_COMMENT: u32 = 7;
const T_OPERATOR: u32 = 8;
const T_CLASS: u32 = 9;
const M_DECLARATION: u32 = 1;
const M_READONLY: u32 = 2;
const M_DEFAULT_LIBRARY: u32 = 4;

/// Semantic tokens of a file: the DSL's block types as keywords, labels, attribute names
/// and object keys, locals, arguments, `req`/`self`/`each`, built-in and user functions,
/// strings, numbers, comments and operators. Tokens across lines are split per line.
pub fn semantic_tokens(a: &Analysis, f: FileId) -> Vec<SemanticToken> {
    let text = a.text(f);
    let Some(pf) = a.files.get(f.0 as usize) else {
        return Vec::new();
    };
    // Identifier classes from the tree and the index, by start byte.
    let mut idents: HashMap<u32, (u32, u32)> = HashMap::new();
    if let Some(tree) = a.trees.get(f.0 as usize) {
        classify_body(&tree.body, &mut idents);
    }
    for s in &a.index.symbols {
        if s.name_span.file == f {
            let t = match s.kind {
                SymbolKind::Local => T_VARIABLE,
                SymbolKind::Arg => T_PARAMETER,
                SymbolKind::Function => T_FUNCTION,
                _ => T_CLASS,
            };
            idents.insert(s.name_span.start.byte, (t, M_DECLARATION));
        }
    }
    for r in &a.index.references {
        if r.span.file == f {
            let t = match a.index.symbols[r.symbol].kind {
                SymbolKind::Local => T_VARIABLE,
                SymbolKind::Arg => T_PARAMETER,
                SymbolKind::Function => T_FUNCTION,
                _ => T_CLASS,
            };
            idents.insert(r.span.start.byte, (t, 0));
        }
    }
    let mut raw: Vec<(u32, u32, u32, u32)> = Vec::new(); // start, end, type, mods
    for t in crate::syntax::lexer::tokenize(text, f) {
        let (s, e) = (t.span.start.byte, t.span.end.byte);
        let class = match t.kind {
            K::Ident => idents.get(&s).copied().or_else(|| {
                let name = &text[t.span.bytes()];
                matches!(name, "true" | "false" | "null").then_some((T_KEYWORD, 0))
            }),
            K::QuotedLit | K::StringLit | K::OQuote | K::CQuote | K::OHeredoc | K::CHeredoc => {
                Some((T_STRING, 0))
            }
            K::NumberLit => Some((T_NUMBER, 0)),
            K::Comment => Some((T_COMMENT, 0)),
            K::Plus
            | K::Minus
            | K::Star
            | K::Slash
            | K::Percent
            | K::EqualOp
            | K::NotEqual
            | K::LessThan
            | K::LessThanEq
            | K::GreaterThan
            | K::GreaterThanEq
            | K::And
            | K::Or
            | K::Bang
            | K::Question
            | K::FatArrow
            | K::Ellipsis => Some((T_OPERATOR, 0)),
            _ => None,
        };
        if let Some((ty, m)) = class {
            // A string token that holds an invoke name or a reference keeps that class.
            if matches!(t.kind, K::QuotedLit)
                && let Some(c) = idents.get(&s)
            {
                raw.push((s, e, c.0, c.1));
                continue;
            }
            raw.push((s, e, ty, m));
        }
    }
    // Encode relative to the previous token, one line at a time.
    let mut out = Vec::with_capacity(raw.len());
    let (mut prev_line, mut prev_char) = (0u32, 0u32);
    for (s, e, ty, m) in raw {
        let mut start = s;
        while start < e {
            let p = pf.lines.position(text, start);
            let line_end = text[start as usize..e as usize]
                .find(['\n', '\r'])
                .map_or(e, |i| start + i as u32);
            let end_pos = pf.lines.position(text, line_end);
            let len = end_pos.character.saturating_sub(p.character);
            if len > 0 {
                let delta_line = p.line.saturating_sub(prev_line);
                let delta_start = if delta_line == 0 {
                    p.character.saturating_sub(prev_char)
                } else {
                    p.character
                };
                out.push(SemanticToken {
                    delta_line,
                    delta_start,
                    length: len,
                    token_type: ty,
                    token_modifiers_bitset: m,
                });
                prev_line = p.line;
                prev_char = p.character;
            }
            // Skip the line break.
            let mut next = line_end;
            while next < e && matches!(text.as_bytes()[next as usize], b'\n' | b'\r') {
                next += 1;
            }
            if next == start {
                break;
            }
            start = next;
        }
    }
    out
}

fn classify_body(b: &Body, out: &mut HashMap<u32, (u32, u32)>) {
    for item in &b.items {
        match item {
            BodyItem::Attribute(at) => {
                out.insert(at.name.span.start.byte, (T_PROPERTY, 0));
                classify_expr(&at.expr, out);
            }
            BodyItem::Block(bl) => {
                out.insert(bl.kind.span.start.byte, (T_KEYWORD, 0));
                for l in &bl.labels {
                    if !l.quoted {
                        out.insert(l.span.start.byte, (T_CLASS, M_DECLARATION));
                    }
                }
                classify_body(&bl.body, out);
            }
        }
    }
}

fn classify_expr(e: &Expr, out: &mut HashMap<u32, (u32, u32)>) {
    crate::syntax::visit::visit(e, &mut |x| match &x.kind {
        ExprKind::Variable(id) => {
            let class = match &*id.name {
                "req" | "self" | "each" => (T_VARIABLE, M_READONLY | M_DEFAULT_LIBRARY),
                _ => (T_VARIABLE, 0),
            };
            out.entry(id.span.start.byte).or_insert(class);
        }
        ExprKind::GetAttr { name, .. } => {
            out.insert(name.span.start.byte, (T_PROPERTY, 0));
        }
        ExprKind::Call { name, .. } => {
            let builtin = crate::builtins::lookup(&name.name).is_some()
                || matches!(&*name.name, "try" | "can" | "invoke");
            out.insert(
                name.span.start.byte,
                (T_FUNCTION, if builtin { M_DEFAULT_LIBRARY } else { 0 }),
            );
        }
        ExprKind::Object(items) => {
            for it in items {
                if let ast::ObjectKey::Ident(k) = &it.key {
                    out.insert(k.span.start.byte, (T_PROPERTY, 0));
                }
            }
        }
        ExprKind::For(fe) => {
            if let Some(k) = &fe.key_var {
                out.insert(k.span.start.byte, (T_VARIABLE, M_DECLARATION));
            }
            out.insert(fe.value_var.span.start.byte, (T_VARIABLE, M_DECLARATION));
        }
        _ => {}
    });
}

/// Code lenses from the sample request: the blocks its evaluation deferred or skipped
/// (with why), and at the top of each file what the run produced.
pub fn code_lenses(a: &Analysis, f: FileId) -> Vec<CodeLens> {
    let lens = |range: Range, title: String| CodeLens {
        range,
        command: Some(Command {
            title,
            command: String::new(),
            arguments: None,
        }),
        data: None,
    };
    let top = Range::default();
    let run = match &a.sample {
        None => return Vec::new(),
        Some(Err(e)) => return vec![lens(top, format!("sample request: {e}"))],
        Some(Ok(run)) => run,
    };
    let mut out = Vec::new();
    let deferred = run
        .trace
        .discards
        .iter()
        .filter(|d| d.reason != DiscardReason::UserCondition)
        .count();
    out.push(lens(
        top,
        match &run.fatal {
            Some(m) => format!("sample request: {m}"),
            None => format!(
                "sample request ({}): {} resources, {} deferred",
                crate::lsp::sample::XR_FILE,
                run.resources,
                deferred
            ),
        },
    ));
    for d in &run.trace.discards {
        if d.span.file != f {
            continue;
        }
        let (_, mut range) = a.range(d.span);
        range.end = range.start;
        let why = match d.reason {
            DiscardReason::UserCondition => "skipped: its condition is false".to_string(),
            DiscardReason::Incomplete => match d.context.first() {
                Some(c) => format!("deferred: incomplete ({})", first_line(c)),
                None => "deferred: incomplete".to_string(),
            },
            other => format!("deferred: {}", other.as_str()),
        };
        out.push(lens(
            range,
            format!("{} {}: {why}", d.kind.as_str(), d.name),
        ));
    }
    out
}

fn first_line(s: &str) -> &str {
    let l = s.lines().next().unwrap_or("");
    match l.char_indices().nth(120) {
        Some((i, _)) => &l[..i],
        None => l,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn analysis(files: &[(&str, &str)]) -> Analysis {
        Analysis::new(
            files
                .iter()
                .map(|(n, t)| (format!("file:///p/{n}"), n.to_string(), Arc::from(*t)))
                .collect(),
            None,
        )
    }

    fn at(text: &str, needle: &str, plus: usize) -> u32 {
        (text.find(needle).expect("needle") + plus) as u32
    }

    fn labels(items: &[CompletionItem]) -> Vec<String> {
        items.iter().map(|i| i.label.clone()).collect()
    }

    /// A program that compiles (static types known).
    const SRC: &str = "locals {\n  base = { team = \"a\" }\n}\n\nresource bucket {\n  body = {\n    a = base.team\n    b = req.composite\n    c = upper(base.team)\n  }\n  \n}\n";

    #[test]
    fn completion_knows_where_it_is() {
        let a = analysis(&[("main.hcl", SRC)]);
        let f = FileId(0);
        // Inside the resource's body, on an empty line: its attributes and blocks, without
        // `body` (already there).
        let items = labels(&completion(&a, f, at(SRC, "  \n}", 2)));
        assert!(items.contains(&"condition".to_string()), "{items:?}");
        assert!(items.contains(&"ready".to_string()), "{items:?}");
        assert!(items.contains(&"composite status".to_string()), "{items:?}");
        assert!(!items.contains(&"body".to_string()), "{items:?}");
        assert!(!items.contains(&"resource <name>".to_string()), "{items:?}");
        // After `base.`: the local's object attributes from its static type.
        let items = labels(&completion(&a, f, at(SRC, "base.team\n", 5)));
        assert_eq!(items, ["team"]);
        // After `req.`, even while the file does not parse: its fields.
        let broken = SRC.replace("req.composite", "req.");
        let b = analysis(&[("main.hcl", &broken)]);
        let items = labels(&completion(&b, f, at(&broken, "req.\n", 4)));
        assert_eq!(items.len(), REQ_FIELDS.len());
        // In an expression: names in scope and functions.
        let items = labels(&completion(&a, f, at(SRC, "upper(", 6)));
        for want in ["base", "self", "req", "upper", "invoke"] {
            assert!(items.contains(&want.to_string()), "{want}: {items:?}");
        }
        assert!(!items.contains(&"each".to_string()));
        // Inside a string or comment: nothing.
        assert!(completion(&a, f, at(SRC, "\"a\"", 2)).is_empty());
    }

    #[test]
    fn completion_in_a_broken_file_and_past_the_end() {
        let src = "resource x {\n  body = { a = \"abc\n";
        let a = analysis(&[("main.hcl", src)]);
        for byte in 0..=src.len() as u32 + 10 {
            let _ = completion(&a, FileId(0), byte);
            let _ = hover(&a, FileId(0), byte);
            let _ = signature_help(&a, FileId(0), byte);
        }
    }

    #[test]
    fn hover_and_signature_help_of_builtins() {
        let a = analysis(&[("main.hcl", SRC)]);
        let f = FileId(0);
        let h = hover(&a, f, at(SRC, "upper", 1)).expect("hover");
        let HoverContents::Markup(m) = h.contents else {
            panic!("markup")
        };
        assert!(m.value.contains("upper(str string)"), "{}", m.value);
        assert!(m.value.contains("Uppercase"), "{}", m.value);
        let sh = signature_help(&a, f, at(SRC, "upper(", 6)).expect("signature");
        assert_eq!(sh.active_parameter, Some(0));
        let two = "locals {\n  x = join(\",\", [1], \n";
        let b = analysis(&[("main.hcl", two)]);
        let sh = signature_help(&b, f, at(two, "[1], ", 5)).expect("signature");
        assert_eq!(
            sh.active_parameter,
            Some(1),
            "the second argument, clamped to `lists...`"
        );
        let h = hover(&a, f, at(SRC, "base =", 0)).expect("local");
        let HoverContents::Markup(m) = h.contents else {
            panic!("markup")
        };
        assert!(m.value.contains("local `base`"), "{}", m.value);
    }

    #[test]
    fn rename_checks_the_new_name() {
        let a = analysis(&[("main.hcl", SRC)]);
        let f = FileId(0);
        let byte = at(SRC, "base =", 0);
        assert!(rename(&a, f, byte, "2x").is_err());
        assert!(rename(&a, f, byte, "req").is_err());
        let e = rename(&a, f, byte, "common").expect("rename");
        let edits: usize = e
            .changes
            .iter()
            .flat_map(|c| c.values())
            .map(Vec::len)
            .sum();
        assert_eq!(edits, 3, "the definition and its two uses");
        assert!(
            prepare_rename(&a, f, at(SRC, "bucket", 0)).is_none(),
            "resources are not renamed"
        );
    }

    #[test]
    fn semantic_tokens_split_multiline_tokens() {
        let src = "locals {\n  h = <<EOT\nline one\nline two\nEOT\n}\n";
        let a = analysis(&[("main.hcl", src)]);
        let toks = semantic_tokens(&a, FileId(0));
        // `locals` is a keyword at 0:0; no token spans a line break.
        assert_eq!(
            (toks[0].delta_line, toks[0].delta_start, toks[0].length),
            (0, 0, 6)
        );
        assert_eq!(toks[0].token_type, T_KEYWORD);
        let mut line = 0;
        let mut lines_with_strings = Vec::new();
        for t in &toks {
            line += t.delta_line;
            if t.token_type == T_STRING {
                lines_with_strings.push(line);
            }
        }
        lines_with_strings.dedup();
        assert_eq!(lines_with_strings, [1, 2, 3, 4]);
    }

    #[test]
    fn symbols_outline_blocks_and_locals() {
        let a = analysis(&[("main.hcl", SRC)]);
        let syms = document_symbols(&a, FileId(0));
        let names: Vec<&str> = syms.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["base", "resource bucket"]);
    }
}
