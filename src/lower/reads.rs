//! What a program reads from the request: which observed composed resources' bodies it
//! can reach, so that the request path turns only those into values (an observed body is
//! most of a steady-state request, and most programs read a few fields of a few bodies).
//!
//! The analysis runs once per compiled program, on its bytecode, where every variable is
//! already resolved to a frame slot: in the chunks of the blocks, slot 0 is `req`, and a
//! block's `self` is the slot the IR names. A use of a slot is the instruction that
//! follows it; the steps that are understood are constant attribute (or string index)
//! steps: `req.resource.NAME`, `req.resources.BASE`, `self.resource`, ... Any other use
//! of `req`, `req.resource`, `req.resources` (the whole value, a dynamic index, a `for`,
//! a function argument, a local holding it, a splat, ...) means every body: the analysis
//! never guesses. Attribute names stay complete either way (only bodies are deferred), so
//! hcl's errors and suggestions do not change.
//!
//! Within a body, the analysis also records the paths read ([`Paths`]): a use followed by
//! constant steps (`self.resource.status.atProvider.arn`) reads the value at the end of
//! them whole, and of the objects on the way only their keys and that one attribute. The
//! decoder then builds those objects with every key but only the attributes on some path
//! (the others are null placeholders the program cannot reach), so a steady-state request
//! does not decode a body's `managedFields`, spec and conditions to read one status field.

use crate::bytecode::code::{ChunkId, Op};
use crate::lower::ir::{Group, Item, Locals, Program, ResourceContent, Special, Sub};
use crate::value::{Str, Value};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

/// What a program reads of one observed body (see the module documentation).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Paths {
    /// The whole value.
    #[default]
    Whole,
    /// An object's keys, and the listed attributes (sorted by name, each once) as their
    /// own paths say; any other value (a list, a string, ...) whole. A sorted vector, not
    /// a map: a program's paths stay in its cached compilation, and most nodes have one
    /// attribute (a map's node costs ten times as much).
    Attrs(Vec<(Str, Paths)>),
}

impl Paths {
    /// The paths of a body's uses, each of which reads the value at the end of its steps
    /// whole (no steps: the whole body). Sorted first, the uses below one attribute are
    /// adjacent and a use comes before those it is a prefix of, so the tree is built in
    /// one pass, each node once, however many uses a program has.
    fn build(mut uses: Uses) -> Paths {
        uses.sort_unstable();
        Paths::below(&uses, 0)
    }

    /// [`Paths::build`] for sorted uses that share their first `depth` steps.
    fn below(uses: &[Vec<&Str>], depth: usize) -> Paths {
        if uses.first().is_none_or(|u| u.len() == depth) {
            return Paths::Whole;
        }
        let mut attrs = Vec::new();
        let mut rest = uses;
        while let Some(key) = rest.first().and_then(|u| u.get(depth)) {
            let n = rest
                .iter()
                .take_while(|u| u.get(depth) == Some(key))
                .count();
            attrs.push((Str::clone(key), Paths::below(&rest[..n], depth + 1)));
            rest = &rest[n..];
        }
        Paths::Attrs(attrs)
    }

    /// Makes sure the objects along `steps` are there (their keys, and each next step's
    /// attribute), without reading the value at the end: what evaluating an alias
    /// (`xr = req.composite`) needs for itself, its uses being counted where they are.
    fn touch(&mut self, steps: &[&Str]) {
        let Some((key, rest)) = steps.split_first() else {
            return;
        };
        let Paths::Attrs(attrs) = self else {
            return;
        };
        let at = match attrs.binary_search_by(|(n, _)| (**n).cmp(&***key)) {
            Ok(i) => i,
            Err(i) => {
                attrs.insert(i, (Str::clone(key), Paths::Attrs(Vec::new())));
                i
            }
        };
        attrs[at].1.touch(rest);
    }

    /// The paths below attribute `key` (`None`: not read).
    pub fn attr(&self, key: &str) -> Option<&Paths> {
        match self {
            Paths::Whole => Some(self),
            Paths::Attrs(m) => m
                .binary_search_by(|(n, _)| (**n).cmp(key))
                .ok()
                .map(|i| &m[i].1),
        }
    }
}

/// The constant steps of each use of one body, until [`Paths::build`] turns them into
/// its paths.
type Uses<'p> = Vec<Vec<&'p Str>>;

/// [`Paths::Whole`], to lend.
pub static WHOLE: Paths = Paths::Whole;

/// The observed bodies a program can read (see the module documentation).
#[derive(Clone, Debug)]
pub struct Reads {
    /// Every body may be read (also what an unanalysed program gets).
    pub all: bool,
    /// Collections whose members' bodies may be read (`req.resources.BASE`, or a
    /// collection's `self.resources`).
    pub bases: BTreeSet<Str>,
    /// Bodies read as `req.resource.NAME`, with the paths read in them.
    name_paths: BTreeMap<Str, Paths>,
    /// Resource blocks and templates (by their body chunk) that read their own observed
    /// body (`self.resource`, or `self` other than through `.name`, `.connection`, ...),
    /// with the paths they read in it.
    own_body: HashMap<ChunkId, Paths>,
    /// What the program reads of the observed composite (`req.composite...`; `None`:
    /// nothing).
    composite: Option<Paths>,
}

impl Default for Reads {
    /// Everything: the safe answer when nothing was analysed.
    fn default() -> Self {
        Reads {
            all: true,
            bases: BTreeSet::new(),
            name_paths: BTreeMap::new(),
            own_body: HashMap::new(),
            composite: Some(Paths::Whole),
        }
    }
}

impl Reads {
    /// Whether the body of the observed resource `name` may be read as `req.resource.NAME`
    /// (what the request decoder asks before it turns the body into a value).
    pub fn body(&self, name: &str) -> bool {
        self.all || self.name_paths.contains_key(name)
    }

    /// What the program reads of the body of `name` through `req.resource.NAME` (`None`:
    /// nothing).
    pub fn body_paths(&self, name: &str) -> Option<&Paths> {
        if self.all {
            return Some(&WHOLE);
        }
        self.name_paths.get(name)
    }

    /// Whether the bodies of the members of collection `base` may be read.
    pub fn base(&self, base: &str) -> bool {
        self.all || self.bases.contains(base)
    }

    /// What the program reads of the observed composite (`None`: nothing). Real XRs
    /// carry their `managedFields`, their status and a reference to every composed
    /// resource; most programs read a few fields of their spec and metadata.
    pub fn composite_paths(&self) -> Option<&Paths> {
        if self.all {
            return Some(&WHOLE);
        }
        self.composite.as_ref()
    }
}

/// The fields of `req` that hold no observed body.
const REQ_OTHER: &[&str] = &[
    "composite",
    "composite_connection",
    "connection",
    "connections",
    "context",
    "extra_resources",
];

impl Reads {
    /// Whether the resource block or template with this content reads its own body.
    pub fn own_body(&self, content: &ResourceContent) -> bool {
        self.own_paths(content).is_some()
    }

    /// What the resource block or template with this content reads of its own body
    /// (`None`: nothing).
    pub fn own_paths(&self, content: &ResourceContent) -> Option<&Paths> {
        if self.all {
            return Some(&WHOLE);
        }
        self.own_body.get(&content.body.chunk)
    }

    /// Analyses a compiled program.
    pub fn of<'p>(program: &'p Program) -> Reads {
        let code = &program.code;
        let mut all = false;
        let mut bases = BTreeSet::new();
        let mut name_uses: BTreeMap<Str, Uses> = BTreeMap::new();
        // User functions run on their own frames (their slot 0 is an argument).
        let mut in_function: HashSet<u32> = HashSet::new();
        for f in &code.functions {
            in_function.extend(f.args.iter().filter_map(|(_, d)| d.map(|c| c.0)));
            in_function.extend(f.locals.iter().map(|(_, c)| c.0));
            in_function.extend(f.body.map(|c| c.0));
        }
        let aliases = Aliases::of(program);
        let mut composite_uses: Uses = Vec::new();
        for id in 0..code.chunks.len() as u32 {
            if in_function.contains(&id) || aliases.chunks.contains(&id) {
                continue;
            }
            let on_use = |mut steps: Vec<&'p Str>| {
                match first(&steps) {
                    Some("composite") => {
                        steps.remove(0);
                        composite_uses.push(steps);
                    }
                    Some("resource") => match steps.get(1).copied() {
                        Some(name) => {
                            steps.drain(..2);
                            name_uses.entry(Str::clone(name)).or_default().push(steps);
                        }
                        None => all = true,
                    },
                    Some("resources") => match steps.get(1) {
                        Some(base) => {
                            bases.insert(Str::clone(base));
                        }
                        None => all = true,
                    },
                    Some(f) if REQ_OTHER.contains(&f) => {}
                    // A name `req` does not have is an error that reads nothing.
                    Some(_) => {}
                    None => all = true,
                }
            };
            // `req` and the aliases of its parts, in one pass over the chunk.
            uses_in(program, ChunkId(id), |s| aliases.prefix(s), on_use);
        }
        let mut own_uses = HashMap::new();
        group(program, &program.root, &mut bases, &mut own_uses);
        let mut name_paths: BTreeMap<Str, Paths> = name_uses
            .into_iter()
            .map(|(name, uses)| (name, Paths::build(uses)))
            .collect();
        let mut composite = (!composite_uses.is_empty()).then(|| Paths::build(composite_uses));
        // Each alias is evaluated whatever its uses read: what it names must be there.
        for steps in aliases.by_local.iter().flatten() {
            match steps.as_slice() {
                [c, rest @ ..] if &***c == "composite" => composite
                    .get_or_insert_with(|| Paths::Attrs(Vec::new()))
                    .touch(rest),
                [r, name, rest @ ..] if &***r == "resource" => name_paths
                    .entry(Str::clone(name))
                    .or_insert_with(|| Paths::Attrs(Vec::new()))
                    .touch(rest),
                [r, base, ..] if &***r == "resources" => {
                    bases.insert(Str::clone(base));
                }
                _ => {}
            }
        }
        Reads {
            all,
            bases,
            name_paths,
            own_body: own_uses
                .into_iter()
                .map(|(chunk, uses)| (chunk, Paths::build(uses)))
                .collect(),
            composite,
        }
    }
}

/// The top-level locals that name a part of `req` and nothing else (`xr = req.composite`,
/// `params = xr.spec.parameters`): a use of one is a use of `req` with its steps first.
/// Only the root's locals: their frame slots are never reused by another block's.
struct Aliases<'p> {
    /// The slot of the first root local.
    base: u32,
    /// Each root local's steps from `req`, when it is an alias.
    by_local: Vec<Option<Vec<&'p Str>>>,
    /// The aliases' own chunks (their read of `req` is counted at the aliases' uses).
    chunks: HashSet<u32>,
}

/// How many steps from `req` an alias may name: a longer chain of locals is not followed
/// (the local past it reads what it names whole), so a program of many chained locals
/// costs linear time and memory here.
const MAX_ALIAS_STEPS: usize = 16;

impl<'p> Aliases<'p> {
    /// The root locals that are aliases, found in order (a local can only name one before
    /// it), each looked up by slot.
    fn of(program: &'p Program) -> Self {
        let code = &program.code;
        let locals = &program.root.locals;
        let mut out = Aliases {
            base: locals.base,
            by_local: Vec::with_capacity(locals.defs.len()),
            chunks: HashSet::new(),
        };
        for def in &locals.defs {
            let chunk = def.expr.chunk;
            let alias = code.chunks.get(chunk.0 as usize).and_then(|info| {
                let at = info.start as usize;
                let (s, path) = root(code, code.code.get(at))?;
                let mut steps = out.prefix(s)?.to_vec();
                steps.extend(path);
                let mut pc = at + 1;
                while let Some(name) = step(code, code.code.get(pc)) {
                    steps.push(name);
                    pc += 1;
                }
                let whole = matches!(code.code.get(pc), Some(Op::Return));
                (whole && steps.len() <= MAX_ALIAS_STEPS).then_some(steps)
            });
            if alias.is_some() {
                out.chunks.insert(chunk.0);
            }
            out.by_local.push(alias);
        }
        out
    }

    /// The steps from `req` that frame slot `slot` of a root chunk holds: none for `req`
    /// itself, an alias's, or `None` for any other slot.
    fn prefix(&self, slot: u32) -> Option<&[&'p Str]> {
        if slot == 0 {
            return Some(&[]);
        }
        let i = slot.checked_sub(self.base)?;
        self.by_local.get(i as usize)?.as_deref()
    }
}

/// The name of a use's first step.
fn first<'p>(steps: &[&'p Str]) -> Option<&'p str> {
    steps.first().map(|s| &***s)
}

/// The uses of `self` in the blocks of `g`: the collections whose members' bodies are
/// read go to `bases`, what each resource block or template reads of its own body to
/// `own` (by its body chunk).
fn group<'p>(
    p: &'p Program,
    g: &'p Group,
    bases: &mut BTreeSet<Str>,
    own: &mut HashMap<ChunkId, Uses<'p>>,
) {
    for item in &g.items {
        match item {
            Item::Group(sub) => group(p, sub, bases, own),
            Item::Resource(res) => {
                let mut chunks = Vec::new();
                content_chunks(&res.content, &mut chunks);
                for c in &chunks {
                    for_each_special_use(p, *c, &res.self_, |mut steps| {
                        match first(&steps) {
                            Some("name" | "connection") => return,
                            Some("resource") => {
                                steps.remove(0);
                            }
                            _ => steps.clear(),
                        }
                        own.entry(res.content.body.chunk).or_default().push(steps);
                    });
                }
            }
            Item::Collection(c) => {
                let mut chunks = Vec::new();
                locals_chunks(&c.locals, &mut chunks);
                chunks.extend(c.condition.as_ref().map(|a| a.expr.chunk));
                chunks.push(c.for_each.chunk);
                chunks.push(c.name.chunk);
                subs_chunks(&c.subs, &mut chunks);
                let mut template = Vec::new();
                content_chunks(&c.template, &mut template);
                let mut members = false;
                for ch in chunks.iter().chain(&template) {
                    for_each_special_use(p, *ch, &c.self_, |steps| {
                        members |= !matches!(first(&steps), Some("basename" | "connections"));
                    });
                }
                for ch in &template {
                    for_each_special_use(p, *ch, &c.template_self, |mut steps| {
                        match first(&steps) {
                            Some("basename" | "connections" | "connection" | "name") => return,
                            Some("resource") => {
                                steps.remove(0);
                            }
                            Some("resources") => {
                                members = true;
                                return;
                            }
                            _ => {
                                members = true;
                                steps.clear();
                            }
                        }
                        own.entry(c.template.body.chunk).or_default().push(steps);
                    });
                }
                if members {
                    bases.insert(c.base.clone());
                }
            }
            Item::Composite(_)
            | Item::Context(_)
            | Item::Requirement(_)
            | Item::Assert(_)
            | Item::Fatal(_) => {}
        }
    }
}

fn locals_chunks(l: &Locals, out: &mut Vec<ChunkId>) {
    out.extend(l.defs.iter().map(|d| d.expr.chunk));
}

fn subs_chunks(subs: &[Sub], out: &mut Vec<ChunkId>) {
    for s in subs {
        match s {
            Sub::Composite(c) => {
                locals_chunks(&c.locals, out);
                out.push(c.body.chunk);
            }
            Sub::Ready(r) => {
                locals_chunks(&r.locals, out);
                out.push(r.value.chunk);
            }
            Sub::Context(c) => {
                locals_chunks(&c.locals, out);
                out.push(c.key.chunk);
                out.push(c.value.chunk);
            }
            Sub::Assert(a) => {
                out.push(a.assertion.chunk);
                out.push(a.message.chunk);
                out.extend(a.warning.as_ref().map(|w| w.chunk));
            }
            Sub::Fatal(_) => {}
        }
    }
}

/// Every chunk the evaluator may run for a resource block or template.
fn content_chunks(c: &ResourceContent, out: &mut Vec<ChunkId>) {
    let ResourceContent {
        span: _,
        locals,
        condition,
        body,
        body_vars,
        subs,
    } = c;
    locals_chunks(locals, out);
    out.extend(condition.as_ref().map(|a| a.expr.chunk));
    out.push(body.chunk);
    out.extend(body_vars.iter().map(|(_, c)| *c));
    subs_chunks(subs, out);
}

/// The frame slot an instruction reads and the attribute steps it takes from it
/// (`Slot`, `SlotPath`).
fn root<'a>(
    code: &'a crate::bytecode::code::Code,
    op: Option<&Op>,
) -> Option<(u32, impl Iterator<Item = &'a Str>)> {
    let (slot, path) = match op? {
        Op::Slot { slot, .. } => (*slot, None),
        Op::SlotPath { slot, path, .. } => (*slot, Some(code.paths.get(*path as usize)?)),
        _ => return None,
    };
    let names = path
        .into_iter()
        .flat_map(|steps| steps.iter())
        .map(|s| &s.key);
    Some((slot, names))
}

/// A constant step's name: `.name`, or `["name"]`.
fn step<'a>(code: &'a crate::bytecode::code::Code, op: Option<&Op>) -> Option<&'a Str> {
    match op? {
        Op::Attr { name, .. } => code.names.get(*name as usize),
        Op::IndexConst { key, .. } => match code.consts.get(*key as usize)? {
            Value::String(s) => Some(s),
            _ => None,
        },
        _ => None,
    }
}

/// Calls `f(steps)` for every read of `self` or `each` in the chunk: the names of the
/// constant steps that follow it, up to the first instruction that is not one (the value
/// reached there is used whole); a read of an attribute's own slot is a use with the
/// attribute's name first.
fn for_each_special_use<'p>(
    program: &'p Program,
    chunk: ChunkId,
    special: &'p Special,
    f: impl FnMut(Vec<&'p Str>),
) {
    let keys: Vec<[&'p Str; 1]> = special.keys.iter().map(|k| [k]).collect();
    uses_in(
        program,
        chunk,
        |s| {
            if s == special.slot {
                return Some(&[][..]);
            }
            let i = s.checked_sub(special.slot + 1)? as usize;
            keys.get(i).map(|k| &k[..])
        },
        f,
    );
}

/// [`for_each_special_use`] for every slot `prefix` knows, each use's steps after the prefix
/// the slot stands for.
fn uses_in<'p, 'a>(
    program: &'p Program,
    chunk: ChunkId,
    prefix: impl Fn(u32) -> Option<&'a [&'p Str]>,
    mut f: impl FnMut(Vec<&'p Str>),
) where
    'p: 'a,
{
    let code = &program.code;
    let Some(info) = code.chunks.get(chunk.0 as usize) else {
        return;
    };
    let ops = &code.code;
    let mut i = info.start as usize;
    while let Some(op) = ops.get(i) {
        if matches!(op, Op::Return) {
            break;
        }
        if let Some((s, path)) = root(code, Some(op))
            && let Some(p) = prefix(s)
        {
            let mut steps = p.to_vec();
            steps.extend(path);
            let mut next = i + 1;
            while let Some(name) = step(code, ops.get(next)) {
                steps.push(name);
                next += 1;
            }
            f(steps);
        }
        i += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reads(src: &str) -> Reads {
        let p = crate::lower::ir::compile_txtar(&format!("-- main.hcl --\n{src}"))
            .unwrap_or_else(|e| panic!("does not compile: {}", e.message()));
        Reads::of(&p)
    }

    fn names(r: &Reads) -> Vec<&str> {
        r.name_paths.keys().map(|s| &**s).collect()
    }

    fn bases(r: &Reads) -> Vec<&str> {
        r.bases.iter().map(|s| &**s).collect()
    }

    #[test]
    fn literal_names_are_read_alone() {
        let r = reads(
            r#"resource a {
  body = {
    x = req.resource.one.status.id
    y = req.resource["two"].spec
    z = try(req.resource.three, null)
    c = req.connection.four
    k = req.composite.spec
  }
}"#,
        );
        assert!(!r.all);
        assert_eq!(names(&r), ["one", "three", "two"]);
        assert!(r.bases.is_empty());
    }

    #[test]
    fn other_uses_of_req_resource_read_everything() {
        for body in [
            "x = req.resource",
            "x = req",
            "x = keys(req.resource)",
            "x = [for k, v in req.resource : v]",
            "x = req.resource[*]",
            "x = req.resource[req.composite.name]",
            "x = jsonencode(req)",
            "x = req[\"resource\"]",
            "x = req.resources",
            "x = length(req.resources)",
            "x = req.resources[req.composite.b]",
        ] {
            let r = reads(&format!("resource a {{\n  body = {{ {body} }}\n}}"));
            assert!(r.all, "{body}");
        }
        // through a top-level local that only names a part of `req`: as if written out
        let r = reads("locals {\n  r = req.resource\n}\nresource a {\n  body = { x = r.b }\n}");
        assert!(!r.all);
        assert_eq!(names(&r), ["b"]);
        let r = reads("locals {\n  q = req\n}\nresource a {\n  body = { x = q.resource.b }\n}");
        assert_eq!((r.all, names(&r)), (false, vec!["b"]));
        // ... but such a local used whole, or a local that computes, reads everything
        for locals in [
            "r = req.resource\n  n = length(r)",
            "r = req.resource\n  s = [for k, v in r : v]",
            "q = req\n  n = keys(q.resource)",
            "r = merge(req.resource, {})",
            "r = try(req.resource, {})",
        ] {
            let r = reads(&format!(
                "locals {{\n  {locals}\n}}\nresource a {{\n  body = {{ x = 1 }}\n}}"
            ));
            assert!(r.all, "{locals}");
        }
    }

    #[test]
    fn composite_paths() {
        let paths = |src: &str| reads(src).composite_paths().cloned();
        // the spec's example: two paths
        let want = attrs(vec![
            ("metadata", attrs(vec![("name", Paths::Whole)])),
            ("spec", attrs(vec![("parameters", Paths::Whole)])),
        ]);
        let direct = "resource a {\n  locals {\n    n = \"${req.composite.metadata.name}-b\"\n    p = req.composite.spec.parameters\n  }\n  body = { x = n, y = p.region }\n}";
        assert_eq!(paths(direct), Some(want.clone()));
        // through a chain of top-level aliases, down to the attribute used
        let aliased = "locals {\n  xr = req.composite\n  params = xr.spec.parameters\n  name = xr.metadata.name\n}\nresource a {\n  body = { x = name, y = params.region }\n}";
        let region = attrs(vec![("region", Paths::Whole)]);
        assert_eq!(
            paths(aliased),
            Some(attrs(vec![
                ("metadata", attrs(vec![("name", Paths::Whole)])),
                ("spec", attrs(vec![("parameters", region)])),
            ]))
        );
        // an alias nobody uses is still evaluated: the objects it names are there, with
        // their keys, and nothing more is read
        let unused = "locals {\n  xr = req.composite\n}\nresource a {\n  body = { x = 1 }\n}";
        assert_eq!(paths(unused), Some(attrs(vec![])));
        let unused = "locals {\n  n = req.composite.metadata.name\n  b = req.resource.b.spec\n}\nresource a {\n  body = { x = 1 }\n}";
        let r = reads(unused);
        let name = attrs(vec![("name", attrs(vec![]))]);
        assert_eq!(r.composite_paths(), Some(&attrs(vec![("metadata", name)])));
        assert_eq!(
            r.body_paths("b"),
            Some(&attrs(vec![("spec", attrs(vec![]))]))
        );
        // not read at all
        assert_eq!(paths("resource a {\n  body = { x = 1 }\n}"), None);
        // read whole: directly, through an alias used whole, or all of `req`; a `for`
        // reads what it iterates whole
        let spec_whole = attrs(vec![("spec", Paths::Whole)]);
        for (body, want) in [
            ("x = req.composite", &Paths::Whole),
            ("x = jsonencode(req.composite)", &Paths::Whole),
            ("x = req.composite[req.composite.k]", &Paths::Whole),
            ("x = [for k, v in req.composite.spec : k]", &spec_whole),
            ("x = req", &Paths::Whole),
        ] {
            let r = reads(&format!("resource a {{\n  body = {{ {body} }}\n}}"));
            assert_eq!(r.composite_paths(), Some(want), "{body}");
        }
        let r = reads("locals {\n  xr = req.composite\n}\nresource a {\n  body = { x = xr }\n}");
        assert_eq!(r.composite_paths(), Some(&Paths::Whole));
        // A long chain of aliases is followed for MAX_ALIAS_STEPS steps: the first local
        // past them reads what it names whole (and the analysis stays linear).
        let mut chain = "locals {\n  l0 = req.composite\n".to_string();
        for i in 1..2_000 {
            chain.push_str(&format!("  l{i} = l{}.a\n", i - 1));
        }
        chain.push_str("}\nresource r {\n  body = { v = l1999 }\n}\n");
        let r = reads(&chain);
        // (`composite` is the first of an alias's steps from `req`)
        let mut p = r.composite_paths().expect("read");
        for _ in 0..MAX_ALIAS_STEPS {
            p = match p {
                Paths::Attrs(a) if a.len() == 1 && &*a[0].0 == "a" => &a[0].1,
                other => panic!("{other:?}"),
            };
        }
        assert_eq!(p, &Paths::Whole);
        // A block's own locals are not followed (their slots are reused by other blocks):
        // the local reads what it names whole.
        let r = reads(
            "resource a {\n  locals {\n    xr = req.composite\n  }\n  body = { x = xr.spec.a }\n}",
        );
        assert_eq!(r.composite_paths(), Some(&Paths::Whole));
    }

    #[test]
    fn req_index_steps_count_like_attributes() {
        let r = reads("resource a {\n  body = { x = req[\"resource\"][\"b\"].c }\n}");
        assert!(!r.all);
        assert_eq!(names(&r), ["b"]);
        let r = reads("resource a {\n  body = { x = req.resource[0] }\n}");
        assert!(r.all);
    }

    #[test]
    fn collections_by_base() {
        let r = reads(
            "resource a {\n  body = { x = req.resources.web[0].status, y = req.connections.db }\n}",
        );
        assert!(!r.all);
        assert_eq!(bases(&r), ["web"]);
        assert!(names(&r).is_empty());
    }

    #[test]
    fn functions_do_not_see_req() {
        let r = reads(
            r#"function f {
  arg x {}
  body = x
}
resource a {
  body = invoke("f", { v = req.resource.one.a })
}"#,
        );
        assert!(!r.all);
        assert_eq!(names(&r), ["one"]);
    }

    fn first_resource(p: &Program) -> &crate::lower::ir::Resource {
        p.root
            .items
            .iter()
            .find_map(|i| match i {
                Item::Resource(r) => Some(r),
                _ => None,
            })
            .expect("a resource")
    }

    #[test]
    fn resource_self() {
        for (body, own) in [
            ("body = { n = self.name }", false),
            ("body = { n = self.connection }", false),
            ("body = { n = self.resource.status }", true),
            ("body = { n = self }", true),
            ("body = { n = self[\"resource\"] }", true),
            (
                "body = { n = 1 }\n  ready {\n    value = self.resource.ready\n  }",
                true,
            ),
            ("locals {\n    s = self\n  }\n  body = { n = s.name }", true),
            ("condition = self.resource != null\n  body = {}", true),
            (
                "body = { n = 1 }\n  composite status {\n    body = { x = self.resource.x }\n  }",
                true,
            ),
        ] {
            let src = format!("resource a {{\n  {body}\n}}");
            let p = crate::lower::ir::compile_txtar(&format!("-- main.hcl --\n{src}"))
                .unwrap_or_else(|e| panic!("{src}: {}", e.message()));
            let r = Reads::of(&p);
            assert_eq!(r.own_body(&first_resource(&p).content), own, "{src}");
            assert!(!r.all, "{src}");
        }
    }

    fn collection(p: &Program) -> &crate::lower::ir::Collection {
        p.root
            .items
            .iter()
            .find_map(|i| match i {
                Item::Collection(c) => Some(&**c),
                _ => None,
            })
            .expect("a collection")
    }

    #[test]
    fn collection_self() {
        for (coll, tmpl, own, members) in [
            ("", "n = self.name", false, false),
            (
                "",
                "n = self.basename, c = self.connection, d = self.connections",
                false,
                false,
            ),
            ("", "n = self.resource.status", true, false),
            ("", "n = self.resources[0]", false, true),
            ("", "n = self", true, true),
            (
                "locals {\n    r = self.resources\n  }",
                "n = 1",
                false,
                true,
            ),
            (
                "locals {\n    r = self.basename\n  }",
                "n = 1",
                false,
                false,
            ),
            ("locals {\n    r = self\n  }", "n = 1", false, true),
        ] {
            let src = format!(
                "resources web {{\n  {coll}\n  for_each = [1]\n  template {{\n    body = {{ {tmpl} }}\n  }}\n}}"
            );
            let p = crate::lower::ir::compile_txtar(&format!("-- main.hcl --\n{src}"))
                .unwrap_or_else(|e| panic!("{src}: {}", e.message()));
            let r = Reads::of(&p);
            let c = collection(&p);
            assert_eq!(r.own_body(&c.template), own, "{src}");
            assert_eq!(r.bases.contains("web"), members, "{src}");
            assert!(!r.all, "{src}");
        }
    }

    #[test]
    fn every_block_kind_is_scanned() {
        let r = reads(
            r#"locals {
  l = length(req.resources.fromlocal)
}
group {
  condition = req.resource.cond != null
  composite status {
    body = { x = req.resource.status.a }
  }
  context {
    key   = "k"
    value = req.resource.ctx.v
  }
  requirement r {
    select {
      apiVersion = "v1"
      kind       = req.resource.req.kind
      matchName  = "n"
    }
  }
}
resource a {
  body = { x = false ? req.resource.untaken.x : 1 }
}"#,
        );
        assert!(!r.all);
        assert_eq!(names(&r), ["cond", "ctx", "req", "status", "untaken"]);
        assert_eq!(bases(&r), ["fromlocal"]);
    }

    fn attrs(entries: Vec<(&str, Paths)>) -> Paths {
        let mut entries: Vec<(Str, Paths)> = entries
            .into_iter()
            .map(|(k, p)| (Str::from(k), p))
            .collect();
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        Paths::Attrs(entries)
    }

    #[test]
    fn paths_within_bodies() {
        let src = r#"resource a {
  body = {
    x = self.resource.status.atProvider.arn
    y = try(self.resource.status.id, 1)
    z = req.resource.b.spec
    w = req.resource.b["metadata"].name
  }
}"#;
        let p = crate::lower::ir::compile_txtar(&format!("-- main.hcl --\n{src}"))
            .unwrap_or_else(|e| panic!("{src}: {}", e.message()));
        let r = Reads::of(&p);
        let own = r.own_paths(&first_resource(&p).content).cloned();
        let status = attrs(vec![
            ("atProvider", attrs(vec![("arn", Paths::Whole)])),
            ("id", Paths::Whole),
        ]);
        assert_eq!(own, Some(attrs(vec![("status", status)])));
        let b = attrs(vec![
            ("metadata", attrs(vec![("name", Paths::Whole)])),
            ("spec", Paths::Whole),
        ]);
        assert_eq!(r.body_paths("b"), Some(&b));
        assert_eq!(r.body_paths("c"), None);
        // A use that is not a constant step reads the value reached whole.
        for (body, want) in [
            ("x = self.resource", Paths::Whole),
            ("x = self", Paths::Whole),
            (
                "x = self.resource.spec[0].a",
                attrs(vec![("spec", Paths::Whole)]),
            ),
            (
                "x = jsonencode(self.resource.spec), y = self.resource.spec.a",
                attrs(vec![("spec", Paths::Whole)]),
            ),
        ] {
            let src = format!("resource a {{\n  body = {{ {body} }}\n}}");
            let p = crate::lower::ir::compile_txtar(&format!("-- main.hcl --\n{src}"))
                .unwrap_or_else(|e| panic!("{src}: {}", e.message()));
            let r = Reads::of(&p);
            assert_eq!(
                r.own_paths(&first_resource(&p).content),
                Some(&want),
                "{body}"
            );
        }
        // Everything read: every path whole.
        assert_eq!(Reads::default().body_paths("x"), Some(&Paths::Whole));
    }

    #[test]
    fn paths_are_built_from_uses_in_any_order() {
        let names: Vec<Str> = ["a", "b", "c", "z"].map(Str::from).to_vec();
        let [a, b, c, z] = [&names[0], &names[1], &names[2], &names[3]];
        let uses = vec![
            vec![z, a],
            vec![b, c, a],
            vec![z, a],
            vec![b],
            vec![a, c],
            vec![b, a],
            vec![a, b],
        ];
        let want = attrs(vec![
            ("a", attrs(vec![("b", Paths::Whole), ("c", Paths::Whole)])),
            ("b", Paths::Whole),
            ("z", attrs(vec![("a", Paths::Whole)])),
        ]);
        let got = Paths::build(uses);
        assert_eq!(got, want);
        assert_eq!(got.attr("z").and_then(|p| p.attr("a")), Some(&Paths::Whole));
        assert_eq!(got.attr("a").and_then(|p| p.attr("a")), None);
        assert_eq!(got.attr("y"), None);
        // A use of the whole body covers every other.
        assert_eq!(Paths::build(vec![vec![a, b], vec![]]), Paths::Whole);
    }

    #[test]
    fn default_reads_everything() {
        let r = Reads::default();
        assert!(r.all);
        assert!(r.body("x") && r.base("y"));
    }
}
