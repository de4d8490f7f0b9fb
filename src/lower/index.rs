//! A program's names as an editor sees them: where each local, function argument, user
//! function, resource, collection and requirement is defined, which scope every position
//! is in, what is visible there, and which uses refer to which definition.
//!
//! The index is built from syntax trees, possibly incomplete ones (hcl's recovery after a
//! syntax error), so that navigation keeps working while a file is being typed; the
//! lowerer ([`crate::lower::ir`]) needs a program that parses. Its scoping follows the
//! lowerer's: locals of one body see each other in any order, `self` exists in
//! `resource` and `resources` blocks, `each` in a collection's `name` and `template`, a
//! `function` sees only its arguments and locals, `req` everything else. A test checks
//! that both agree on every variable of the examples and test cases.

use crate::lower::ir::{COLLECTION_SELF, EACH_FIELDS, RESOURCE_SELF, TEMPLATE_SELF};
use crate::syntax::ast::{self, Block, Body, BodyItem, Expr, ExprKind, TemplatePart};
use crate::syntax::span::{FileId, Span};
use crate::syntax::visit::{static_string, variables, visit};
use crate::value::Str;

/// Index of a [`Symbol`] in [`Index::symbols`].
pub type SymbolId = usize;
/// Index of a [`Scope`] in [`Index::scopes`].
pub type ScopeId = usize;

/// What a name defines.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SymbolKind {
    /// An attribute of a `locals` block.
    Local,
    /// A `function` block (called with `invoke("name", {...})`).
    Function,
    /// An `arg` block of a function.
    Arg,
    /// A `resource` block (read as `req.resource.NAME`).
    Resource,
    /// A `resources` block (read as `req.resources.NAME`).
    Collection,
    /// A `requirement` block (read as `req.extra_resources.NAME`).
    Requirement,
}

/// One definition.
#[derive(Clone, Debug)]
pub struct Symbol {
    pub name: Str,
    pub kind: SymbolKind,
    /// The name as written: the attribute name, or a label without its quotes.
    pub name_span: Span,
    /// The whole definition: the attribute, or the block.
    pub span: Span,
    /// A local's expression, an argument's default, a function's body.
    pub value: Option<Span>,
    /// A function's or argument's `description` expression.
    pub description: Option<Span>,
    /// The scope the name is declared in.
    pub scope: ScopeId,
    /// A function's arguments, in order.
    pub args: Vec<SymbolId>,
}

/// The kinds of scopes, each with the implicit variables it declares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScopeKind {
    /// The program (all files): `req` and the top-level locals.
    Top,
    Group,
    /// A `resource` block: `self` with [`RESOURCE_SELF`].
    Resource,
    /// A `resources` block: `self` with [`COLLECTION_SELF`].
    Collection,
    /// A collection's `name` expression: `each`.
    CollectionName,
    /// A collection's `template`: `each`, and `self` with [`TEMPLATE_SELF`].
    Template,
    Composite,
    Context,
    Ready,
    Requirement,
    /// A `function` block: its arguments and locals, nothing of the program.
    Function,
    /// A block the DSL does not know: its expressions are resolved in the outer scope.
    Other,
}

impl ScopeKind {
    /// The implicit variables this scope declares, with their fields.
    pub fn implicit(self) -> &'static [(&'static str, &'static [&'static str])] {
        match self {
            ScopeKind::Top => &[("req", crate::lower::ir::REQ_FIELDS)],
            ScopeKind::Resource => &[("self", RESOURCE_SELF)],
            ScopeKind::Collection => &[("self", COLLECTION_SELF)],
            ScopeKind::CollectionName => &[("each", EACH_FIELDS)],
            ScopeKind::Template => &[("each", EACH_FIELDS), ("self", TEMPLATE_SELF)],
            _ => &[],
        }
    }
}

/// A region where a set of names is visible.
#[derive(Clone, Debug)]
pub struct Scope {
    pub kind: ScopeKind,
    pub parent: Option<ScopeId>,
    /// Where it applies; `None` for the top scope (every file).
    pub span: Option<Span>,
    /// Locals and arguments declared here.
    pub names: Vec<SymbolId>,
}

/// A use of a definition: a variable, `req.resource.NAME`, or `invoke("NAME", ...)`'s
/// name (the span is the name alone, without quotes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reference {
    pub span: Span,
    pub symbol: SymbolId,
}

/// The body of a block (or a file): what may be written in it depends on `kind`.
#[derive(Clone, Debug)]
pub struct BodyInfo {
    /// The block type (`""` for a file's top level).
    pub kind: Str,
    /// Inside the braces (a whole file for the top level).
    pub span: Span,
    pub scope: ScopeId,
    /// The block's labels (e.g. `status` of `composite status`).
    pub labels: Vec<Str>,
    /// The attributes and block types already written in it.
    pub attrs: Vec<Str>,
}

/// Names a `for` expression (or template directive) binds inside `span`.
#[derive(Clone, Debug)]
pub struct ForBinding {
    pub span: Span,
    pub names: Vec<Str>,
}

/// A variable visible at a position.
#[derive(Clone, Debug)]
pub struct Visible {
    pub name: Str,
    /// The definition, for locals and arguments (none for `req`, `self`, `each` and
    /// names bound by `for`).
    pub symbol: Option<SymbolId>,
    /// The fields of an implicit variable.
    pub fields: &'static [&'static str],
}

/// The names of a program. See the module documentation.
#[derive(Clone, Debug, Default)]
pub struct Index {
    pub symbols: Vec<Symbol>,
    pub scopes: Vec<Scope>,
    pub references: Vec<Reference>,
    pub bodies: Vec<BodyInfo>,
    pub fors: Vec<ForBinding>,
    /// Variables that name nothing visible where they are used (what `analyze` reports
    /// as "Unknown variable").
    pub unresolved: Vec<Span>,
}

/// Expressions whose names are resolved once every definition is known.
struct Pending<'a> {
    expr: &'a Expr,
    scope: ScopeId,
}

impl Index {
    /// Index the files of one program (each a parsed, possibly partial, body); `files[i]`
    /// is the tree of `FileId(i)` unless the trees carry their own ids.
    pub fn build(files: &[&ast::File]) -> Index {
        let mut ix = Index {
            scopes: vec![Scope {
                kind: ScopeKind::Top,
                parent: None,
                span: None,
                names: Vec::new(),
            }],
            ..Index::default()
        };
        let mut pending = Vec::new();
        for f in files {
            ix.bodies.push(BodyInfo {
                kind: Str::from(""),
                span: f.body.span,
                scope: 0,
                labels: Vec::new(),
                attrs: body_names(&f.body),
            });
            ix.body(&f.body, 0, &mut pending);
        }
        let mut by_name: std::collections::HashMap<(SymbolKind, &str), SymbolId> =
            std::collections::HashMap::new();
        let named: Vec<(SymbolKind, Str, SymbolId)> = ix
            .symbols
            .iter()
            .enumerate()
            .filter(|(_, s)| s.kind != SymbolKind::Local && s.kind != SymbolKind::Arg)
            .map(|(i, s)| (s.kind, s.name.clone(), i))
            .collect();
        for (k, n, i) in &named {
            by_name.entry((*k, &**n)).or_insert(*i);
        }
        for p in pending {
            ix.resolve(p.expr, p.scope, &by_name);
        }
        ix.references
            .sort_by_key(|r| (r.span.file, r.span.start.byte));
        ix
    }

    fn new_scope(&mut self, kind: ScopeKind, parent: Option<ScopeId>, span: Span) -> ScopeId {
        self.scopes.push(Scope {
            kind,
            parent,
            span: Some(span),
            names: Vec::new(),
        });
        self.scopes.len() - 1
    }

    fn define(&mut self, s: Symbol) -> SymbolId {
        let scope = s.scope;
        let kind = s.kind;
        self.symbols.push(s);
        let id = self.symbols.len() - 1;
        if matches!(kind, SymbolKind::Local | SymbolKind::Arg) {
            self.scopes[scope].names.push(id);
        }
        id
    }

    /// The items of a body in scope `scope`: locals are declared there, blocks open
    /// their own scopes, attributes are resolved there.
    fn body<'a>(&mut self, body: &'a Body, scope: ScopeId, pending: &mut Vec<Pending<'a>>) {
        for item in &body.items {
            match item {
                BodyItem::Attribute(a) => pending.push(Pending {
                    expr: &a.expr,
                    scope,
                }),
                BodyItem::Block(b) => self.block(b, scope, pending),
            }
        }
    }

    fn block<'a>(&mut self, b: &'a Block, parent: ScopeId, pending: &mut Vec<Pending<'a>>) {
        let inner = inner_span(b);
        let kind: &str = &b.kind.name;
        let scope_kind = match kind {
            "locals" => {
                for a in b.body.attributes() {
                    self.define(Symbol {
                        name: a.name.name.clone(),
                        kind: SymbolKind::Local,
                        name_span: a.name.span,
                        span: a.span,
                        value: Some(a.expr.span),
                        description: None,
                        scope: parent,
                        args: Vec::new(),
                    });
                    pending.push(Pending {
                        expr: &a.expr,
                        scope: parent,
                    });
                }
                self.push_body(b, parent);
                // Blocks inside `locals` are errors; their contents still resolve.
                for nested in b.body.blocks() {
                    self.block(nested, parent, pending);
                }
                return;
            }
            "group" => ScopeKind::Group,
            "resource" => ScopeKind::Resource,
            "resources" => ScopeKind::Collection,
            "template" => ScopeKind::Template,
            "composite" => ScopeKind::Composite,
            "context" => ScopeKind::Context,
            "ready" => ScopeKind::Ready,
            "requirement" => ScopeKind::Requirement,
            "function" => ScopeKind::Function,
            _ => ScopeKind::Other,
        };
        let symbol_kind = match kind {
            "resource" => Some(SymbolKind::Resource),
            "resources" => Some(SymbolKind::Collection),
            "requirement" => Some(SymbolKind::Requirement),
            "function" => Some(SymbolKind::Function),
            _ => None,
        };
        let scope = match scope_kind {
            ScopeKind::Other => parent,
            ScopeKind::Function => self.new_scope(ScopeKind::Function, None, inner),
            k => self.new_scope(k, Some(parent), inner),
        };
        let symbol = match (symbol_kind, b.labels.first()) {
            (Some(k), Some(label)) => Some(self.define(Symbol {
                name: label.value.clone(),
                kind: k,
                name_span: label_text_span(label),
                span: b.span,
                value: None,
                description: None,
                scope: parent,
                args: Vec::new(),
            })),
            _ => None,
        };
        self.push_body(b, scope);
        for item in &b.body.items {
            match item {
                BodyItem::Attribute(a) => {
                    let name: &str = &a.name.name;
                    match (scope_kind, name) {
                        (ScopeKind::Collection, "name") => {
                            let s =
                                self.new_scope(ScopeKind::CollectionName, Some(scope), a.expr.span);
                            pending.push(Pending {
                                expr: &a.expr,
                                scope: s,
                            });
                        }
                        (ScopeKind::Function, "description") => {
                            if let Some(id) = symbol {
                                self.symbols[id].description = Some(a.expr.span);
                            }
                        }
                        (ScopeKind::Function, "body") => {
                            if let Some(id) = symbol {
                                self.symbols[id].value = Some(a.expr.span);
                            }
                            pending.push(Pending {
                                expr: &a.expr,
                                scope,
                            });
                        }
                        _ => pending.push(Pending {
                            expr: &a.expr,
                            scope,
                        }),
                    }
                }
                BodyItem::Block(nested) if scope_kind == ScopeKind::Function => {
                    if &*nested.kind.name == "arg" {
                        self.arg(nested, scope, symbol);
                    } else {
                        self.block(nested, scope, pending);
                    }
                }
                BodyItem::Block(nested) if &*nested.kind.name == "select" => {
                    // A requirement's selector is evaluated in the requirement's scope.
                    self.push_body(nested, scope);
                    self.body(&nested.body, scope, pending);
                }
                BodyItem::Block(nested) => self.block(nested, scope, pending),
            }
        }
    }

    fn arg(&mut self, b: &Block, scope: ScopeId, function: Option<SymbolId>) {
        self.push_body(b, scope);
        let Some(label) = b.labels.first() else {
            return;
        };
        let attr = |n: &str| b.body.attributes().find(|a| &*a.name.name == n);
        let id = self.define(Symbol {
            name: label.value.clone(),
            kind: SymbolKind::Arg,
            name_span: label_text_span(label),
            span: b.span,
            value: attr("default").map(|a| a.expr.span),
            description: attr("description").map(|a| a.expr.span),
            scope,
            args: Vec::new(),
        });
        if let Some(f) = function {
            self.symbols[f].args.push(id);
        }
    }

    fn push_body(&mut self, b: &Block, scope: ScopeId) {
        self.bodies.push(BodyInfo {
            kind: b.kind.name.clone(),
            span: inner_span(b),
            scope,
            labels: b.labels.iter().map(|l| l.value.clone()).collect(),
            attrs: body_names(&b.body),
        });
    }

    /// Record the references of one expression evaluated in `scope`.
    fn resolve(
        &mut self,
        e: &Expr,
        scope: ScopeId,
        by_name: &std::collections::HashMap<(SymbolKind, &str), SymbolId>,
    ) {
        for v in variables(e) {
            if let Some(id) = self.lookup(&v.name, scope) {
                self.references.push(Reference {
                    span: v.root,
                    symbol: id,
                });
            } else if !self.is_implicit(&v.name, scope) {
                self.unresolved.push(v.root);
            }
        }
        let mut found: Vec<(Span, SymbolKind, Str)> = Vec::new();
        let mut fors: Vec<ForBinding> = Vec::new();
        visit(e, &mut |x| match &x.kind {
            ExprKind::GetAttr { obj, name } => {
                if let Some(kind) = req_collection(obj) {
                    found.push((name.span, kind, name.name.clone()));
                }
            }
            ExprKind::Index { obj, key, .. } => {
                if let (Some(kind), Some(s)) = (req_collection(obj), static_string(key))
                    && let Some(span) = string_text_span(key)
                {
                    found.push((span, kind, Str::from(&*s)));
                }
            }
            ExprKind::Call { name, args, .. } if &*name.name == "invoke" => {
                if let Some(first) = args.first()
                    && let Some(s) = static_string(first)
                    && let Some(span) = string_text_span(first)
                {
                    found.push((span, SymbolKind::Function, Str::from(&*s)));
                }
            }
            ExprKind::For(f) => {
                let mut names: Vec<Str> = f.key_var.iter().map(|k| k.name.clone()).collect();
                names.push(f.value_var.name.clone());
                fors.push(ForBinding {
                    span: x.span,
                    names,
                });
            }
            ExprKind::Template(t) => template_fors(t, &mut fors),
            _ => {}
        });
        for (span, kind, name) in found {
            if let Some(&id) = by_name.get(&(kind, &*name)) {
                self.references.push(Reference { span, symbol: id });
            }
        }
        self.fors.extend(fors);
    }

    /// The local or argument `name` resolves to from `scope`.
    pub fn lookup(&self, name: &str, scope: ScopeId) -> Option<SymbolId> {
        let mut cur = Some(scope);
        while let Some(s) = cur {
            let sc = self.scopes.get(s)?;
            if let Some(&id) = sc.names.iter().find(|&&id| &*self.symbols[id].name == name) {
                return Some(id);
            }
            if sc.kind.implicit().iter().any(|(n, _)| *n == name) {
                return None;
            }
            cur = sc.parent;
        }
        None
    }

    /// True if `name` is an implicit variable (`req`, `self`, `each`) visible from `scope`.
    pub fn is_implicit(&self, name: &str, scope: ScopeId) -> bool {
        let mut cur = Some(scope);
        while let Some(s) = cur {
            let Some(sc) = self.scopes.get(s) else {
                return false;
            };
            if sc.kind.implicit().iter().any(|(n, _)| *n == name) {
                return true;
            }
            cur = sc.parent;
        }
        false
    }

    /// The innermost scope at a byte offset of a file.
    pub fn scope_at(&self, file: FileId, byte: u32) -> ScopeId {
        let mut best: ScopeId = 0;
        let mut best_len = u32::MAX;
        for (i, s) in self.scopes.iter().enumerate() {
            if let Some(sp) = s.span
                && contains(sp, file, byte)
            {
                let len = sp.end.byte - sp.start.byte;
                if len <= best_len {
                    best = i;
                    best_len = len;
                }
            }
        }
        best
    }

    /// The innermost block body at a byte offset (a file's top level if none).
    pub fn body_at(&self, file: FileId, byte: u32) -> Option<&BodyInfo> {
        self.bodies
            .iter()
            .filter(|b| contains(b.span, file, byte))
            .min_by_key(|b| b.span.end.byte - b.span.start.byte)
    }

    /// Every variable visible at a position, innermost first, each name once.
    pub fn visible_at(&self, file: FileId, byte: u32) -> Vec<Visible> {
        let mut out: Vec<Visible> = Vec::new();
        let push = |v: Visible, out: &mut Vec<Visible>| {
            if !out.iter().any(|o| o.name == v.name) {
                out.push(v);
            }
        };
        let mut fors: Vec<&ForBinding> = self
            .fors
            .iter()
            .filter(|f| contains(f.span, file, byte))
            .collect();
        fors.sort_by_key(|f| f.span.end.byte - f.span.start.byte);
        for f in fors {
            for n in &f.names {
                push(
                    Visible {
                        name: n.clone(),
                        symbol: None,
                        fields: &[],
                    },
                    &mut out,
                );
            }
        }
        let mut cur = Some(self.scope_at(file, byte));
        while let Some(s) = cur {
            let Some(sc) = self.scopes.get(s) else {
                break;
            };
            for (name, fields) in sc.kind.implicit() {
                push(
                    Visible {
                        name: Str::from(*name),
                        symbol: None,
                        fields,
                    },
                    &mut out,
                );
            }
            for &id in &sc.names {
                push(
                    Visible {
                        name: self.symbols[id].name.clone(),
                        symbol: Some(id),
                        fields: &[],
                    },
                    &mut out,
                );
            }
            cur = sc.parent;
        }
        out
    }

    /// The definition whose name, or a reference to which, covers a byte offset.
    pub fn symbol_at(&self, file: FileId, byte: u32) -> Option<SymbolId> {
        let touches = |sp: Span| sp.file == file && sp.start.byte <= byte && byte <= sp.end.byte;
        if let Some(r) = self.references.iter().find(|r| touches(r.span)) {
            return Some(r.symbol);
        }
        self.symbols.iter().position(|s| touches(s.name_span))
    }

    /// The uses of a definition, in file and source order.
    pub fn references_to(&self, id: SymbolId) -> impl Iterator<Item = Span> + '_ {
        self.references
            .iter()
            .filter(move |r| r.symbol == id)
            .map(|r| r.span)
    }

    /// The definitions of a kind, in source order of their files.
    pub fn symbols_of(&self, kind: SymbolKind) -> impl Iterator<Item = &Symbol> + '_ {
        self.symbols.iter().filter(move |s| s.kind == kind)
    }
}

/// `req.resource`, `req.connection` (resources) or `req.resources`, `req.connections`
/// (collections), `req.extra_resources` (requirements).
fn req_collection(e: &Expr) -> Option<SymbolKind> {
    let ExprKind::GetAttr { obj, name } = &e.kind else {
        return None;
    };
    let ExprKind::Variable(root) = &obj.kind else {
        return None;
    };
    if &*root.name != "req" {
        return None;
    }
    match &*name.name {
        "resource" | "connection" => Some(SymbolKind::Resource),
        "resources" | "connections" => Some(SymbolKind::Collection),
        "extra_resources" => Some(SymbolKind::Requirement),
        _ => None,
    }
}

fn template_fors(t: &ast::Template, out: &mut Vec<ForBinding>) {
    for p in &t.parts {
        match p {
            TemplatePart::For {
                key_var,
                value_var,
                body,
                span,
                ..
            } => {
                let mut names: Vec<Str> = key_var.iter().map(|k| k.name.clone()).collect();
                names.push(value_var.name.clone());
                out.push(ForBinding { span: *span, names });
                template_fors(body, out);
            }
            TemplatePart::If {
                then, otherwise, ..
            } => {
                template_fors(then, out);
                if let Some(o) = otherwise {
                    template_fors(o, out);
                }
            }
            _ => {}
        }
    }
}

/// The text of a quoted string literal without its quotes (`"name"` → `name`).
fn string_text_span(e: &Expr) -> Option<Span> {
    match &e.kind {
        ExprKind::Template(t) => match t.parts.as_slice() {
            [TemplatePart::Literal { span, .. }] => Some(*span),
            [] => {
                let mut sp = e.span;
                sp.start.byte += 1;
                sp.start.col += 1;
                sp.end = sp.start;
                Some(sp)
            }
            _ => None,
        },
        _ => None,
    }
}

/// A label's text: without the quotes of a quoted label.
fn label_text_span(l: &ast::Label) -> Span {
    let mut sp = l.span;
    if l.quoted && sp.end.byte >= sp.start.byte + 2 {
        sp.start.byte += 1;
        sp.start.col += 1;
        sp.end.byte -= 1;
        sp.end.col -= 1;
    }
    sp
}

/// Inside a block's braces.
fn inner_span(b: &Block) -> Span {
    Span::new(b.span.file, b.open_brace.end, b.close_brace.start)
}

fn body_names(b: &Body) -> Vec<Str> {
    b.items
        .iter()
        .map(|i| match i {
            BodyItem::Attribute(a) => a.name.name.clone(),
            BodyItem::Block(b) => b.kind.name.clone(),
        })
        .collect()
}

fn contains(sp: Span, file: FileId, byte: u32) -> bool {
    sp.file == file && sp.start.byte <= byte && byte <= sp.end.byte
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::span::SourceMap;

    fn index(files: &[(&str, &str)]) -> (Index, SourceMap) {
        let mut sm = SourceMap::new();
        let ids: Vec<FileId> = files.iter().map(|(n, t)| sm.add(*n, *t)).collect();
        let trees: Vec<ast::File> = ids
            .iter()
            .map(|id| crate::syntax::parser::parse_file_partial(&sm, *id).0)
            .collect();
        let refs: Vec<&ast::File> = trees.iter().collect();
        (Index::build(&refs), sm)
    }

    fn at(src: &str, needle: &str) -> u32 {
        src.find(needle).expect("needle") as u32
    }

    const PROG: &str = r#"locals {
  region = "eu"
  name   = "${region}-x"
}

function tag {
  arg key {
    default = "k"
  }
  locals {
    k2 = key
  }
  body = { (k2) = 1 }
}

resource bucket {
  locals {
    full = "${name}/${self.name}"
  }
  body = {
    tags  = invoke("tag", { key = full })
    items = [for i, v in [1] : v + i]
  }
}

resources queues {
  for_each = [1, 2]
  name     = "q-${each.key}"
  template {
    body = { ref = req.resource.bucket, q = each.value }
  }
}
"#;

    #[test]
    fn definitions_and_references() {
        let (ix, sm) = index(&[("main.hcl", PROG)]);
        let locals: Vec<&str> = ix.symbols_of(SymbolKind::Local).map(|s| &*s.name).collect();
        assert_eq!(locals, ["region", "name", "k2", "full"]);
        let region = ix
            .symbol_at(FileId(0), at(PROG, "region ="))
            .expect("region");
        let uses: Vec<&str> = ix.references_to(region).map(|s| sm.slice(s)).collect();
        assert_eq!(uses, ["region"]);
        // invoke("tag", ...) refers to the function by its string.
        let tag = ix.symbol_at(FileId(0), at(PROG, "tag {")).expect("tag");
        assert_eq!(ix.symbols[tag].kind, SymbolKind::Function);
        let uses: Vec<Span> = ix.references_to(tag).collect();
        assert_eq!(uses.len(), 1);
        assert_eq!(sm.slice(uses[0]), "tag");
        assert_eq!(ix.symbol_at(FileId(0), uses[0].start.byte), Some(tag));
        // req.resource.bucket refers to the resource.
        let bucket = ix
            .symbols_of(SymbolKind::Resource)
            .next()
            .expect("bucket")
            .clone();
        let b = ix
            .symbol_at(FileId(0), bucket.name_span.start.byte)
            .expect("b");
        assert_eq!(ix.references_to(b).count(), 1);
        // The function's arg is its own scope's name.
        let key = ix
            .symbol_at(FileId(0), at(PROG, "= key") + 2)
            .expect("key use");
        assert_eq!(ix.symbols[key].kind, SymbolKind::Arg);
        assert_eq!(ix.symbols[tag].args, vec![key]);
    }

    #[test]
    fn visible_names_follow_the_scopes() {
        let (ix, _) = index(&[("main.hcl", PROG)]);
        let names = |needle: &str| -> Vec<String> {
            ix.visible_at(FileId(0), at(PROG, needle))
                .iter()
                .map(|v| v.name.to_string())
                .collect()
        };
        assert_eq!(names("${region}"), ["req", "region", "name"]);
        assert_eq!(
            names("{ (k2)"),
            ["key", "k2"],
            "a function sees no program names"
        );
        assert_eq!(names("${name}/"), ["self", "full", "req", "region", "name"]);
        assert_eq!(
            names("v + i"),
            ["i", "v", "self", "full", "req", "region", "name"]
        );
        assert_eq!(names("each.key"), ["each", "self", "req", "region", "name"]);
        assert_eq!(
            names("each.value"),
            ["each", "self", "req", "region", "name"]
        );
        let tmpl = ix.visible_at(FileId(0), at(PROG, "each.value"));
        assert_eq!(tmpl[1].fields, TEMPLATE_SELF);
        assert_eq!(names("for_each"), ["self", "req", "region", "name"]);
    }

    #[test]
    fn bodies_know_their_block_kind() {
        let (ix, _) = index(&[("main.hcl", PROG)]);
        let b = ix
            .body_at(FileId(0), at(PROG, "body = { ref"))
            .expect("body");
        assert_eq!(&*b.kind, "template");
        let top = ix.body_at(FileId(0), 0).expect("top");
        assert_eq!(&*top.kind, "");
        assert_eq!(
            top.attrs.iter().map(|s| &**s).collect::<Vec<_>>(),
            ["locals", "function", "resource", "resources"]
        );
    }

    #[test]
    fn locals_of_two_files_are_one_scope() {
        let a = "locals {\n  a = b\n}\n";
        let b = "locals {\n  b = 1\n}\n";
        let (ix, sm) = index(&[("a.hcl", a), ("b.hcl", b)]);
        let def = ix.symbol_at(FileId(1), at(b, "b =")).expect("b");
        let uses: Vec<Span> = ix.references_to(def).collect();
        assert_eq!(uses.len(), 1);
        assert_eq!(uses[0].file, FileId(0));
        assert_eq!(sm.slice(uses[0]), "b");
    }

    #[test]
    fn a_broken_file_still_indexes_what_parsed() {
        let src = "locals {\n  a = 1\n}\nresource r {\n  body = { x = a. }\n}\n";
        let (ix, _) = index(&[("main.hcl", src)]);
        assert!(ix.symbols_of(SymbolKind::Local).any(|s| &*s.name == "a"));
    }
}
