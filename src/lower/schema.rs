//! hcl's body schemas (`hcl.BodySchema` + `Body.Content`): which attributes and blocks a
//! DSL block accepts, with hcl's exact diagnostics for everything else. The DSL's schemas
//! are the Go implementation's (`schemas.go`).

use crate::syntax::ast::{Attribute, Block, Body, BodyItem};
use crate::syntax::diag::Diagnostic;
use crate::syntax::span::{Pos, Span};
use crate::text::suggest::suggest;

/// An attribute a body may (or must) have.
#[derive(Clone, Copy, Debug)]
pub struct AttrSchema {
    pub name: &'static str,
    pub required: bool,
}

/// A block type a body may contain, with its label names.
#[derive(Clone, Copy, Debug)]
pub struct BlockSchema {
    pub kind: &'static str,
    pub labels: &'static [&'static str],
}

/// A body schema.
#[derive(Clone, Copy, Debug)]
pub struct Schema {
    pub attrs: &'static [AttrSchema],
    pub blocks: &'static [BlockSchema],
}

const fn attr(name: &'static str) -> AttrSchema {
    AttrSchema {
        name,
        required: false,
    }
}
const fn required(name: &'static str) -> AttrSchema {
    AttrSchema {
        name,
        required: true,
    }
}
const fn block(kind: &'static str) -> BlockSchema {
    BlockSchema { kind, labels: &[] }
}
const fn labeled(kind: &'static str, labels: &'static [&'static str]) -> BlockSchema {
    BlockSchema { kind, labels }
}

const BASE_GROUP_BLOCKS: [BlockSchema; 8] = [
    block("locals"),
    block("group"),
    labeled("resource", &["name"]),
    labeled("resources", &["baseName"]),
    labeled("composite", &["object"]),
    block("context"),
    labeled("requirement", &["name"]),
    block("assert"),
];

/// The top level takes a group's blocks and `function` (before `assert`: the order of
/// the candidates a misspelt block type is matched against).
const TOP_BLOCKS: [BlockSchema; 9] = inserted(BASE_GROUP_BLOCKS, 7, labeled("function", &["name"]));

/// `base` with `extra` at index `at` (`M` is one more than `N`, checked at compile time).
const fn inserted<const N: usize, const M: usize>(
    base: [BlockSchema; N],
    at: usize,
    extra: BlockSchema,
) -> [BlockSchema; M] {
    assert!(M == N + 1 && at <= N);
    let mut out = [extra; M];
    let mut i = 0;
    while i < N {
        out[if i < at { i } else { i + 1 }] = base[i];
        i += 1;
    }
    out
}

const RESOURCE_BLOCKS: [BlockSchema; 5] = [
    block("locals"),
    block("ready"),
    labeled("composite", &["object"]),
    block("context"),
    block("assert"),
];

pub const TOP: Schema = Schema {
    attrs: &[],
    blocks: &TOP_BLOCKS,
};
pub const GROUP: Schema = Schema {
    attrs: &[attr("condition")],
    blocks: &BASE_GROUP_BLOCKS,
};
pub const RESOURCES: Schema = Schema {
    attrs: &[attr("condition"), required("for_each"), attr("name")],
    blocks: &[
        block("locals"),
        labeled("composite", &["object"]),
        block("template"),
        block("context"),
        block("assert"),
    ],
};
pub const TEMPLATE: Schema = Schema {
    attrs: &[required("body")],
    blocks: &RESOURCE_BLOCKS,
};
pub const RESOURCE: Schema = Schema {
    attrs: &[required("body"), attr("condition")],
    blocks: &RESOURCE_BLOCKS,
};
pub const CONTEXT: Schema = Schema {
    attrs: &[required("key"), required("value")],
    blocks: &[block("locals")],
};
pub const READY: Schema = Schema {
    attrs: &[required("value")],
    blocks: &[block("locals")],
};
pub const COMPOSITE: Schema = Schema {
    attrs: &[required("body")],
    blocks: &[block("locals")],
};
pub const REQUIREMENT: Schema = Schema {
    attrs: &[attr("condition")],
    blocks: &[block("locals"), block("select")],
};
pub const SELECT: Schema = Schema {
    attrs: &[
        required("apiVersion"),
        required("kind"),
        attr("matchName"),
        attr("matchLabels"),
    ],
    blocks: &[],
};
pub const FUNCTION: Schema = Schema {
    attrs: &[attr("description"), required("body")],
    blocks: &[labeled("arg", &["name"]), block("locals")],
};
/// `assert { assertion = BOOL  message = STRING  warning = BOOL }`: fn-hcl's extension
/// (Terramate's names), allowed at the top level and in `group`, `resource`, `resources`
/// and `template`; the Go implementation rejects the block.
pub const ASSERT: Schema = Schema {
    attrs: &[required("assertion"), required("message"), attr("warning")],
    blocks: &[],
};
pub const ARG: Schema = Schema {
    attrs: &[attr("description"), attr("default")],
    blocks: &[],
};

/// The schema of a block's body, by block type (`locals` has none: any attributes).
pub fn of_block(kind: &str) -> Option<&'static Schema> {
    Some(match kind {
        "group" => &GROUP,
        "resources" => &RESOURCES,
        "template" => &TEMPLATE,
        "resource" => &RESOURCE,
        "context" => &CONTEXT,
        "ready" => &READY,
        "composite" => &COMPOSITE,
        "requirement" => &REQUIREMENT,
        "select" => &SELECT,
        "function" => &FUNCTION,
        "arg" => &ARG,
        "assert" => &ASSERT,
        _ => return None,
    })
}

/// What `Body.Content` returns: the attributes and the blocks the schema accepts.
#[derive(Debug, Default)]
pub struct Content<'a> {
    pub attrs: Vec<&'a Attribute>,
    pub blocks: Vec<&'a Block>,
}

impl<'a> Content<'a> {
    pub fn attr(&self, name: &str) -> Option<&'a Attribute> {
        self.attrs.iter().copied().find(|a| &*a.name.name == name)
    }

    pub fn blocks_of(&self, kind: &'a str) -> impl Iterator<Item = &'a Block> + '_ {
        self.blocks
            .iter()
            .copied()
            .filter(move |b| &*b.kind.name == kind)
    }

    /// The one block of type `kind` (a collection's template, a requirement's select):
    /// `Err(Some(second))` when there are more, `Err(None)` when there is none.
    pub fn only_block(&self, kind: &'a str) -> Result<&'a Block, Option<&'a Block>> {
        let mut of_kind = self.blocks_of(kind);
        let first = of_kind.next().ok_or(None)?;
        match of_kind.next() {
            Some(second) => Err(Some(second)),
            None => Ok(first),
        }
    }
}

/// [`content`] of a block's body (missing items reported at its open brace): the content
/// and its warnings, or the diagnostics when they hold errors.
pub fn block_content<'a>(
    b: &'a Block,
    schema: &Schema,
) -> Result<(Content<'a>, Vec<Diagnostic>), Vec<Diagnostic>> {
    let (c, d) = content(&b.body, schema, missing_item_range(b));
    if crate::syntax::diag::has_errors(&d) {
        Err(d)
    } else {
        Ok((c, d))
    }
}

/// A block's first label (its name: `resource NAME`), empty when it has none, and the
/// range to report it at (the block type's when it has none).
pub fn first_label(b: &Block) -> (crate::value::Str, Span) {
    match b.labels.first() {
        Some(l) => (l.value.clone(), l.span),
        None => (Default::default(), b.kind.span),
    }
}

/// hcl's `Block.DefRange()`: from the type name to the last label.
pub fn def_range(b: &Block) -> Span {
    match b.labels.last() {
        Some(l) => b.kind.span.to(l.span),
        None => b.kind.span,
    }
}

/// hcl's `Body.MissingItemRange()` of a block's body: the empty range at its open brace.
pub fn missing_item_range(b: &Block) -> Span {
    Span::new(b.open_brace.file, b.open_brace.start, b.open_brace.start)
}

/// The missing-item range of a file body (its first byte).
pub fn file_missing_item_range(body: &Body) -> Span {
    Span::new(body.span.file, Pos::START, Pos::START)
}

/// hcl's `Body.Content(schema)`, with its diagnostics in hcl's order: missing required
/// arguments, label problems, unsupported arguments, unsupported block types.
pub fn content<'a>(
    body: &'a Body,
    schema: &Schema,
    missing: Span,
) -> (Content<'a>, Vec<Diagnostic>) {
    let mut diags = Vec::new();
    let mut out = Content::default();
    for a in schema.attrs {
        match body.attributes().find(|x| &*x.name.name == a.name) {
            Some(x) => out.attrs.push(x),
            None if a.required => diags.push(Diagnostic::error(
                "Missing required argument",
                format!(
                    "The argument {:?} is required, but no definition was found.",
                    a.name
                ),
                missing,
            )),
            None => {}
        }
    }
    for item in &body.items {
        let BodyItem::Block(b) = item else { continue };
        let Some(bs) = schema.blocks.iter().find(|s| *s.kind == *b.kind.name) else {
            continue;
        };
        let header = b.kind.span.to(b.open_brace);
        let kind = &b.kind.name;
        if b.labels.len() > bs.labels.len() {
            let detail = if bs.labels.is_empty() {
                format!("No labels are expected for {kind} blocks.")
            } else {
                format!(
                    "Only {} labels ({}) are expected for {kind} blocks.",
                    bs.labels.len(),
                    bs.labels.join(", ")
                )
            };
            diags.push(
                Diagnostic::error(
                    format!("Extraneous label for {kind}"),
                    detail,
                    b.labels[bs.labels.len()].span,
                )
                .with_context(header),
            );
            continue;
        }
        if b.labels.len() < bs.labels.len() {
            diags.push(
                Diagnostic::error(
                    format!("Missing {} for {kind}", bs.labels[b.labels.len()]),
                    format!(
                        "All {kind} blocks must have {} labels ({}).",
                        bs.labels.len(),
                        bs.labels.join(", ")
                    ),
                    b.open_brace,
                )
                .with_context(header),
            );
            continue;
        }
        out.blocks.push(b);
    }
    for a in body.attributes() {
        let name = &*a.name.name;
        if schema.attrs.iter().any(|s| s.name == name) {
            continue;
        }
        let candidates: Vec<&str> = schema
            .attrs
            .iter()
            .filter(|s| out.attr(s.name).is_none())
            .map(|s| s.name)
            .collect();
        let suggestion = match suggest(name, candidates.iter().copied()) {
            Some(s) => format!(" Did you mean {s:?}?"),
            None if schema.blocks.iter().any(|b| b.kind == name) => {
                format!(" Did you mean to define a block of type {name:?}?")
            }
            None => String::new(),
        };
        diags.push(Diagnostic::error(
            "Unsupported argument",
            format!("An argument named {name:?} is not expected here.{suggestion}"),
            a.name.span,
        ));
    }
    for b in body.blocks() {
        let kind = &*b.kind.name;
        if schema.blocks.iter().any(|s| s.kind == kind) {
            continue;
        }
        let candidates: Vec<&str> = schema.blocks.iter().map(|s| s.kind).collect();
        let suggestion = match suggest(kind, candidates.iter().copied()) {
            Some(s) => format!(" Did you mean {s:?}?"),
            None if schema.attrs.iter().any(|a| a.name == kind) => format!(
                " Did you mean to define argument {kind:?}? If so, use the equals sign to assign it a value."
            ),
            None => String::new(),
        };
        diags.push(Diagnostic::error(
            "Unsupported block type",
            format!("Blocks of type {kind:?} are not expected here.{suggestion}"),
            b.kind.span,
        ));
    }
    (out, diags)
}

/// hcl's `Body.JustAttributes()` for a `locals` block: blocks are not allowed.
pub fn just_attributes(body: &Body) -> (Vec<&Attribute>, Vec<Diagnostic>) {
    let mut diags = Vec::new();
    if let Some(b) = body.blocks().next() {
        diags.push(Diagnostic::error(
            format!("Unexpected {:?} block", &*b.kind.name),
            "Blocks are not allowed here.",
            b.kind.span,
        ));
    }
    (body.attributes().collect(), diags)
}

/// function-hcl's identifier rule for function and argument names.
pub fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    match chars.next() {
        Some(c) if c.is_ascii_alphabetic() || c == '_' => {}
        _ => return false,
    }
    chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn top_level_blocks_are_a_groups_and_function() {
        let kinds = |s: &Schema| -> Vec<(&str, &[&str])> {
            s.blocks.iter().map(|b| (b.kind, b.labels)).collect()
        };
        assert_eq!(
            kinds(&TOP),
            [
                ("locals", &[][..]),
                ("group", &[]),
                ("resource", &["name"]),
                ("resources", &["baseName"]),
                ("composite", &["object"]),
                ("context", &[]),
                ("requirement", &["name"]),
                ("function", &["name"]),
                ("assert", &[]),
            ]
        );
        let mut group = kinds(&TOP);
        group.remove(7);
        assert_eq!(kinds(&GROUP), group);
    }

    #[test]
    fn identifiers() {
        assert!(is_identifier("make-name_2"));
        assert!(!is_identifier("make.name"));
        assert!(!is_identifier("2x"));
        assert!(!is_identifier(""));
    }
}
