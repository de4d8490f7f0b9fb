//! The generator of the `structured` fuzz target: fuzz bytes, read through `arbitrary`'s
//! `Unstructured`, choose a well-formed function-hcl program and the request it runs
//! against. Shared with `tests/fuzz_regressions.rs`, which replays the committed inputs
//! through it.
//!
//! Programs follow the DSL's block shapes (locals, resource, resources with `for_each`,
//! `name` and `template`, group, composite status and connection, context, ready,
//! requirement, assert, function with arg, locals and body) and hcl's expression grammar
//! (literals, quoted templates with interpolation and `%{if}`/`%{for}` directives and
//! strip markers (no heredocs: the `parse` and `eval` targets' corpus has them), for expressions, splats, conditionals, operators, index
//! and attribute traversal, calls of the real builtins by name with arguments of their
//! parameter types, `invoke` of the generated functions, `try`/`can`). Every name a program
//! reads exists where it reads it: locals defined before (so no cycles), iterator and
//! `each`/`self` variables inside their blocks, function arguments, and `req` paths that
//! the generated request holds.
//!
//! Values are generated with sharing: the composite's spec reuses subtrees it generated
//! before (so a small input describes a large tree), strings hold YAML documents whose
//! anchors alias each other, JSON and base64 texts, and long runs; programs build locals
//! from copies of earlier locals. Every choice is bounded (depth, node counts, string
//! lengths), and exhausted input gives the smallest choice, so any byte string makes a case.
#![allow(dead_code)]

use arbitrary::Unstructured;
use fn_hcl::builtins::{FuncDef, ParamType};
use fn_hcl::protocol::proto::v1;
use prost_types::value::Kind;
use std::fmt::Write;

/// A generated program (txtar, as a step's input) and the request it is sent with (input
/// set).
pub struct Case {
    pub program: String,
    pub request: v1::RunFunctionRequest,
}

/// The case `data` describes.
pub fn case(data: &[u8]) -> Case {
    let mut g = Gen {
        u: Unstructured::new(data),
        ids: 0,
        nodes: 0,
        paths: Vec::new(),
        functions: Vec::new(),
        resources: Vec::new(),
        collections: Vec::new(),
        requirements: Vec::new(),
        pool: Vec::new(),
        val_nodes: 0,
        nonfinite: false,
    };
    g.nonfinite = g.chance(6);
    let spec = g.spec();
    g.collect_paths(&spec);
    let program = g.program();
    let request = g.request(spec, &program);
    Case { program, request }
}

/// The type an expression is generated to have (a hint: operators and builtins may still
/// fail, which is a program error the response must report).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ty {
    Any,
    Bool,
    Num,
    Str,
    List,
    Map,
}

const TYS: [Ty; 6] = [Ty::Any, Ty::Bool, Ty::Num, Ty::Str, Ty::List, Ty::Map];

/// A request value (the composite's spec and everything else the request holds).
#[derive(Clone, Debug)]
enum Val {
    Null,
    Bool(bool),
    Num(f64),
    Str(String),
    List(Vec<Val>),
    Obj(Vec<(String, Val)>),
}

impl Val {
    fn size(&self) -> usize {
        match self {
            Val::List(v) => 1 + v.iter().map(Val::size).sum::<usize>(),
            Val::Obj(v) => 1 + v.iter().map(|(_, x)| x.size()).sum::<usize>(),
            _ => 1,
        }
    }
    fn ty(&self) -> Ty {
        match self {
            Val::Null => Ty::Any,
            Val::Bool(_) => Ty::Bool,
            Val::Num(_) => Ty::Num,
            Val::Str(_) => Ty::Str,
            Val::List(_) => Ty::List,
            Val::Obj(_) => Ty::Map,
        }
    }
    fn to_proto(&self) -> prost_types::Value {
        let kind = match self {
            Val::Null => Kind::NullValue(0),
            Val::Bool(b) => Kind::BoolValue(*b),
            Val::Num(n) => Kind::NumberValue(*n),
            Val::Str(s) => Kind::StringValue(s.clone()),
            Val::List(v) => Kind::ListValue(prost_types::ListValue {
                values: v.iter().map(Val::to_proto).collect(),
            }),
            Val::Obj(v) => Kind::StructValue(to_struct(v)),
        };
        prost_types::Value { kind: Some(kind) }
    }
    fn json(&self, out: &mut String) {
        match self {
            Val::Null => out.push_str("null"),
            Val::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Val::Num(n) if n.is_finite() => {
                let _ = write!(out, "{n}");
            }
            Val::Num(_) => out.push_str("1e999"),
            Val::Str(s) => json_string(s, out),
            Val::List(v) => {
                out.push('[');
                for (i, x) in v.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    x.json(out);
                }
                out.push(']');
            }
            Val::Obj(v) => {
                out.push('{');
                for (i, (k, x)) in v.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    json_string(k, out);
                    out.push(':');
                    x.json(out);
                }
                out.push('}');
            }
        }
    }
}

fn to_struct(fields: &[(String, Val)]) -> prost_types::Struct {
    prost_types::Struct {
        fields: fields
            .iter()
            .map(|(k, v)| (k.clone(), v.to_proto()))
            .collect(),
    }
}

fn json_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

fn obj(fields: Vec<(&str, Val)>) -> Val {
    Val::Obj(
        fields
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
    )
}

fn s(v: &str) -> Val {
    Val::Str(v.to_string())
}

/// Keys of request objects and program objects: identifiers, and a few that need `["..."]`.
const KEYS: &[&str] = &[
    "name",
    "items",
    "region",
    "count",
    "tags",
    "nested",
    "a",
    "b",
    "c",
    "enabled",
    "size",
    "labels",
    "doc",
    "data",
    "x",
    "my-key",
    "with.dot",
    "with space",
    "é",
    "",
    "0",
    "apiVersion",
];

const WORDS: &[&str] = &[
    "",
    "a",
    "abc",
    "hello world",
    "eu-west-1",
    "prod",
    "dev",
    "true",
    "false",
    "null",
    "42",
    "-3.5",
    "1e3",
    "0x1F",
    "010",
    " padded ",
    "MiXeD",
    "日本語",
    "e\u{301}",
    "\u{1F600}",
    "a,b,c",
    "k=v",
    "line1\nline2",
    "tab\there",
    "quote\"d",
    "back\\slash",
    "${not}",
    "%{not}",
    "\u{0}",
    "10.0.0.0/16",
    "192.168.1.0/24",
    "fd00::/8",
    "2001:db8::/32",
    "10.1.2.3",
    "2024-01-02T03:04:05Z",
    "1h30m",
    "-5m",
    "c2VjcmV0",
    "not base64!",
    "{\"a\":1}",
    "[1,2]",
    "a: 1",
    "- x",
    "READY_TRUE",
    "READY_FALSE",
    "READY_UNSPECIFIED",
    "UTF-8",
    "UTF-16LE",
];

const NUMBERS: &[&str] = &[
    "0",
    "1",
    "2",
    "3",
    "5",
    "7",
    "10",
    "16",
    "42",
    "100",
    "255",
    "1000",
    "1e3",
    "1.5",
    "0.1",
    "2.5e-3",
    "65536",
    "1e9",
    "4294967296",
    "9007199254740993",
    "1e100",
    "1e308",
    "1e-308",
    "123456789012345678901234567890",
    "0.000000000000000000001",
    "3.14159265358979323846",
];

/// Format strings for `format`/`formatlist`.
const FORMATS: &[&str] = &[
    "%s",
    "%d",
    "%v",
    "%#v",
    "%q",
    "%t",
    "%f",
    "%.2f",
    "%5.1f",
    "%-8s|",
    "%08d",
    "%x",
    "%X",
    "%o",
    "%b",
    "%e",
    "%g",
    "%%",
    "%[2]s %[1]s",
    "%s-%s",
    "%*d",
    "%9999d",
    "%.9999f",
    "%s%s%s",
    "%",
    "%[9]s",
    "%!",
    "a%sb%dc",
];

const REGEXES: &[&str] = &[
    "[a-z]+",
    "^(\\w+)-(\\d+)$",
    "(?P<k>\\w+)=(?P<v>\\w*)",
    ".*",
    "()",
    "(a|b)*c",
    "\\s+",
    "[",
    "(?i)ABC",
    "^$",
    "x{2,5}",
    "(((((((((a)))))))))",
    "\\pL+",
    "(a*)*b",
    "\\",
    "a{1000}{1000}",
];

const DATE_FORMATS: &[&str] = &[
    "YYYY-MM-DD",
    "DD MMM YYYY hh:mm ZZZ",
    "EEEE, hh:mm:ssaa",
    "'quoted' YY",
    "h:m:s",
    "",
    "'unterminated",
];

const ENCODINGS: &[&str] = &[
    "UTF-8",
    "UTF-16LE",
    "UTF-16BE",
    "ISO-8859-1",
    "SHIFT_JIS",
    "windows-1252",
    "GB18030",
    "nonesuch",
];

const IDENT_RESERVED: &[&str] = &[
    "for", "if", "in", "null", "true", "false", "endfor", "endif",
];

/// A user function: its name and its arguments (name, type, has a default).
struct Func {
    name: String,
    args: Vec<(String, Ty, bool)>,
}

/// What an expression may read.
#[derive(Clone, Default)]
struct Scope {
    /// Variables and their likely types (locals, iterators, `each.*`, `self.*`, args).
    vars: Vec<(String, Ty)>,
    /// `req.*` is readable (not inside functions).
    req: bool,
    /// User functions that may be invoked (inside a function: the ones defined before it,
    /// and itself for guarded recursion).
    funcs: usize,
}

struct Gen<'a> {
    u: Unstructured<'a>,
    ids: usize,
    /// Expression nodes generated: past [`MAX_NODES`] only atoms are made.
    nodes: usize,
    /// `req.*` paths the request holds, with the type of what is there.
    paths: Vec<(String, Ty)>,
    functions: Vec<Func>,
    resources: Vec<String>,
    collections: Vec<String>,
    requirements: Vec<String>,
    /// Request subtrees generated so far, reused for sharing.
    pool: Vec<Val>,
    val_nodes: usize,
    /// The request may hold infinities and NaN (JSON has none: Go refuses the request).
    nonfinite: bool,
}

const MAX_NODES: usize = 1500;
const MAX_DEPTH: u32 = 5;
const MAX_VAL_NODES: usize = 40_000;

impl Gen<'_> {
    // ---- choices -------------------------------------------------------------------

    fn byte(&mut self) -> u8 {
        self.u.arbitrary::<u8>().unwrap_or(0)
    }

    /// An index below `n` (0 when the input is exhausted).
    fn pick(&mut self, n: usize) -> usize {
        if n <= 1 {
            return 0;
        }
        self.u.int_in_range(0..=n - 1).unwrap_or(0)
    }

    /// True with probability `pct`/256 (false when the input is exhausted).
    fn chance(&mut self, pct: u8) -> bool {
        let b = self.byte();
        b > 255 - pct
    }

    fn upto(&mut self, max: usize) -> usize {
        self.pick(max + 1)
    }

    fn one<'s>(&mut self, items: &[&'s str]) -> &'s str {
        items[self.pick(items.len())]
    }

    fn id(&mut self) -> usize {
        self.ids += 1;
        self.ids
    }

    // ---- request values ------------------------------------------------------------

    fn spec(&mut self) -> Val {
        let mut fields = vec![
            ("name".to_string(), s("demo")),
            ("items".to_string(), Val::List(vec![s("x"), s("y"), s("z")])),
            ("count".to_string(), Val::Num(3.0)),
            ("yaml".to_string(), Val::Str(self.yaml_doc())),
        ];
        for _ in 0..self.upto(6) {
            let k = self.key();
            let v = self.val(0);
            fields.push((k, v));
        }
        if self.chance(60) {
            let n = 1usize << self.upto(20);
            let c = self.one(&["x", "é", "ab", "\n", "${"]);
            fields.push(("long".to_string(), Val::Str(c.repeat(n))));
        }
        if self.chance(60) {
            let v = self.val(1);
            let mut j = String::new();
            v.json(&mut j);
            fields.push(("json".to_string(), Val::Str(j)));
        }
        if self.chance(20) {
            let depth = self.upto(1200);
            fields.push((
                "deep".to_string(),
                Val::Str(format!("{}{}", "[".repeat(depth), "]".repeat(depth))),
            ));
        }
        Val::Obj(fields)
    }

    fn key(&mut self) -> String {
        self.one(KEYS).to_string()
    }

    /// A value, reusing an earlier subtree now and then (the request is a tree on the
    /// wire, but repeated subtrees are how shared data arrives).
    fn val(&mut self, depth: u32) -> Val {
        if !self.pool.is_empty() && self.chance(70) {
            let i = self.pick(self.pool.len());
            let size = self.pool[i].size();
            if self.val_nodes + size <= MAX_VAL_NODES {
                self.val_nodes += size;
                return self.pool[i].clone();
            }
        }
        self.val_nodes += 1;
        let leaf = depth >= 6 || self.val_nodes >= MAX_VAL_NODES;
        let v = match if leaf { self.pick(5) } else { self.pick(8) } {
            0 => Val::Null,
            1 => Val::Bool(self.chance(128)),
            2 => Val::Num(self.num_val()),
            3 | 4 => Val::Str(self.str_val()),
            5 => Val::Str(self.yaml_doc()),
            6 => {
                let n = self.upto(5);
                Val::List((0..n).map(|_| self.val(depth + 1)).collect())
            }
            _ => {
                let n = self.upto(5);
                Val::Obj(
                    (0..n)
                        .map(|_| {
                            let k = self.key();
                            (k, self.val(depth + 1))
                        })
                        .collect(),
                )
            }
        };
        if matches!(v, Val::List(_) | Val::Obj(_)) {
            self.pool.push(v.clone());
        }
        v
    }

    fn num_val(&mut self) -> f64 {
        match self.pick(8) {
            0 => f64::from(self.byte()),
            1 => -f64::from(self.byte()) / 4.0,
            2 => 1e300,
            3 => 9007199254740993.0,
            4 => 0.1,
            5 if self.nonfinite => f64::INFINITY,
            6 if self.nonfinite => f64::NAN,
            _ => f64::from(self.u.arbitrary::<i32>().unwrap_or(0)),
        }
    }

    fn str_val(&mut self) -> String {
        match self.pick(6) {
            0 => {
                let n = 1usize << self.upto(16);
                self.one(&["a", "xy", "é", "\u{1F600}"]).repeat(n)
            }
            1 => {
                let n = self.upto(4);
                (0..n)
                    .map(|_| self.one(WORDS))
                    .collect::<Vec<_>>()
                    .join(",")
            }
            _ => self.one(WORDS).to_string(),
        }
    }

    /// A YAML document: anchors aliasing each other (each level `fan` copies of the one
    /// before, the "billion laughs"), merge keys, tags, block scalars and odd scalars.
    fn yaml_doc(&mut self) -> String {
        let mut y = String::new();
        if self.chance(40) {
            y.push_str("%YAML 1.2\n---\n");
        }
        let levels = self.upto(9);
        let fan = 1 + self.upto(9);
        let _ = writeln!(
            y,
            "a0: &a0 {}",
            self.one(&["\"lol\"", "lol", "{k: v}", "[1, 2]", "!!binary aGk=", "~"])
        );
        for i in 1..=levels {
            let refs = vec![format!("*a{}", i - 1); fan];
            match self.pick(4) {
                0 => {
                    let _ = writeln!(y, "a{i}: &a{i} [{}]", refs.join(", "));
                }
                1 => {
                    let fields: Vec<String> = refs
                        .iter()
                        .enumerate()
                        .map(|(j, r)| format!("k{j}: {r}"))
                        .collect();
                    let _ = writeln!(y, "a{i}: &a{i} {{{}}}", fields.join(", "));
                }
                2 => {
                    let _ = writeln!(y, "a{i}: &a{i}");
                    for r in &refs {
                        let _ = writeln!(y, "  - {r}");
                    }
                }
                _ => {
                    let _ = writeln!(y, "a{i}: &a{i}\n  <<: *a{}\n  extra: {i}", i - 1);
                }
            }
        }
        for _ in 0..self.upto(3) {
            let line = self.one(&[
                "s: |\n  block\n  text\n",
                "f: >-\n  folded\n  text\n",
                "n: 0x1F\n",
                "o: 0o17\n",
                "inf: .inf\n",
                "nan: .NaN\n",
                "t: !!str 123\n",
                "d: 2001-12-14t21:59:43.10-05:00\n",
                "y: yes\n",
                "? [complex, key]\n: value\n",
                "dup: 1\ndup: 2\n",
                "u: \"\\u00e9\\x41\"\n",
                "bad: [unclosed\n",
                "---\nsecond: doc\n",
                "big: 123456789012345678901234567890\n",
                "neg: -.5e3\n",
                "tagged: !custom x\n",
                "alias_undefined: *nope\n",
                "l: [*a0, {x: *a0}]\n",
            ]);
            y.push_str(line);
        }
        y
    }

    /// Every `req.composite.spec...` path (to depth 3), with what it holds.
    fn collect_paths(&mut self, spec: &Val) {
        fn walk(v: &Val, path: String, depth: u32, out: &mut Vec<(String, Ty)>) {
            if out.len() >= 200 {
                return;
            }
            out.push((path.clone(), v.ty()));
            if depth >= 3 {
                return;
            }
            match v {
                Val::List(items) => {
                    for (i, x) in items.iter().enumerate().take(3) {
                        walk(x, format!("{path}[{i}]"), depth + 1, out);
                    }
                }
                Val::Obj(fields) => {
                    for (k, x) in fields.iter().take(6) {
                        walk(x, traverse(&path, k), depth + 1, out);
                    }
                }
                _ => {}
            }
        }
        let mut out = Vec::new();
        walk(spec, "req.composite.spec".to_string(), 0, &mut out);
        out.extend(
            [
                ("req.composite", Ty::Map),
                ("req.composite.metadata.name", Ty::Str),
                ("req.composite.metadata.labels", Ty::Map),
                ("req.composite_connection", Ty::Map),
                ("req.context", Ty::Map),
                (
                    "req.context[\"apiextensions.crossplane.io/environment\"]",
                    Ty::Map,
                ),
                ("req.resource", Ty::Map),
                ("req.connection", Ty::Map),
                ("req.resources", Ty::Map),
                ("req.connections", Ty::Map),
                ("req.extra_resources", Ty::Map),
            ]
            .map(|(p, t)| (p.to_string(), t)),
        );
        self.paths = out;
    }

    // ---- the request ---------------------------------------------------------------

    fn request(&mut self, spec: Val, program: &str) -> v1::RunFunctionRequest {
        let mut composite = vec![
            ("apiVersion", s("example.org/v1")),
            ("kind", s("XApp")),
            (
                "metadata",
                obj(vec![
                    ("name", s("demo")),
                    ("labels", obj(vec![("team", s("a")), ("tier", s("gold"))])),
                ]),
            ),
            ("spec", spec),
        ];
        if self.chance(80) {
            let st = self.val(2);
            composite.push(("status", obj(vec![("observed", st), ("vpcId", s("vpc-1"))])));
        }
        let mut cd = std::collections::BTreeMap::new();
        cd.insert("password".to_string(), b"secret".to_vec());
        if self.chance(40) {
            cd.insert("bin".to_string(), vec![0xff, 0, 0xfe]);
        }
        let mut resources = std::collections::HashMap::new();
        let names = self.resources.clone();
        for name in names {
            if self.chance(140) {
                resources.insert(name.clone(), self.observed(&name, None));
            }
        }
        let bases = self.collections.clone();
        for base in bases {
            for i in 0..self.upto(3) {
                let name = format!("{base}-{i}");
                let index = if self.chance(30) {
                    "x".to_string()
                } else {
                    i.to_string()
                };
                resources.insert(name.clone(), self.observed(&name, Some((&base, &index))));
            }
        }
        if self.chance(10) {
            // Annotations that are not strings: a request error (Go: get base collections).
            let body = obj(vec![
                ("apiVersion", s("v1")),
                ("kind", s("X")),
                (
                    "metadata",
                    obj(vec![("annotations", obj(vec![("n", Val::Num(1.0))]))]),
                ),
            ]);
            resources.insert(
                "bad-annotations".to_string(),
                v1::Resource {
                    resource: Some(struct_of(&body)),
                    ..Default::default()
                },
            );
        }
        let mut required = std::collections::HashMap::new();
        let reqs = self.requirements.clone();
        for r in reqs {
            if self.chance(160) {
                let items = (0..self.upto(2))
                    .map(|i| {
                        let data = self.val(3);
                        v1::Resource {
                            resource: Some(struct_of(&obj(vec![
                                ("apiVersion", s("v1")),
                                ("kind", s("ConfigMap")),
                                ("metadata", obj(vec![("name", Val::Str(format!("cm{i}")))])),
                                ("data", data),
                            ]))),
                            ..Default::default()
                        }
                    })
                    .collect();
                required.insert(r, v1::Resources { items });
            }
        }
        let desired = self.chance(50).then(|| {
            let mut d = v1::State {
                composite: Some(v1::Resource {
                    resource: Some(struct_of(&obj(vec![(
                        "status",
                        obj(vec![("upstream", s("yes"))]),
                    )]))),
                    ..Default::default()
                }),
                ..Default::default()
            };
            d.resources.insert(
                "upstream".to_string(),
                v1::Resource {
                    resource: Some(struct_of(&obj(vec![
                        ("apiVersion", s("v1")),
                        ("kind", s("ConfigMap")),
                    ]))),
                    ..Default::default()
                },
            );
            d
        });
        let env = self.val(2);
        let context = struct_of(&obj(vec![
            (
                "apiextensions.crossplane.io/environment",
                obj(vec![("env", s("dev")), ("data", env)]),
            ),
            ("example.org/previous", obj(vec![("k", s("v"))])),
        ]));
        let mut req = v1::RunFunctionRequest {
            meta: Some(v1::RequestMeta {
                tag: "structured".to_string(),
                ..Default::default()
            }),
            observed: Some(v1::State {
                composite: Some(v1::Resource {
                    resource: Some(struct_of(&obj(composite))),
                    connection_details: cd,
                    ..Default::default()
                }),
                resources,
            }),
            desired,
            context: Some(context),
            ..Default::default()
        };
        if self.chance(128) {
            req.required_resources = required;
        } else {
            #[allow(deprecated)]
            {
                req.extra_resources = required;
            }
        }
        let mut input = prost_types::Struct::default();
        for (k, v) in [
            ("apiVersion", "function-hcl/v1"),
            ("kind", "HclInput"),
            ("source", "Inline"),
            ("hcl", program),
        ] {
            input.fields.insert(
                k.to_string(),
                prost_types::Value {
                    kind: Some(Kind::StringValue(v.to_string())),
                },
            );
        }
        req.input = Some(input);
        req
    }

    fn observed(&mut self, name: &str, collection: Option<(&str, &str)>) -> v1::Resource {
        let mut meta = vec![("name", Val::Str(name.to_string()))];
        if let Some((base, index)) = collection {
            meta.push((
                "annotations",
                obj(vec![
                    (
                        "hcl.fn.crossplane.io/collection-base-name",
                        Val::Str(base.to_string()),
                    ),
                    (
                        "hcl.fn.crossplane.io/collection-index",
                        Val::Str(index.to_string()),
                    ),
                ]),
            ));
        }
        let extra = self.val(3);
        let body = obj(vec![
            ("apiVersion", s("example.org/v1")),
            ("kind", s("Thing")),
            ("metadata", obj(meta)),
            (
                "status",
                obj(vec![
                    (
                        "atProvider",
                        obj(vec![
                            ("arn", s("arn:x")),
                            ("id", s("id-1")),
                            ("url", s("https://example.org")),
                        ]),
                    ),
                    ("extra", extra),
                ]),
            ),
        ]);
        let mut cd = std::collections::BTreeMap::new();
        cd.insert("password".to_string(), b"c2VjcmV0".to_vec());
        if self.chance(60) {
            cd.insert("url".to_string(), b"https://example.org".to_vec());
        }
        v1::Resource {
            resource: Some(struct_of(&body)),
            connection_details: cd,
            ..Default::default()
        }
    }

    // ---- the program ---------------------------------------------------------------

    fn program(&mut self) -> String {
        let mut files = vec![String::new()];
        for _ in 0..self.upto(3) {
            let f = self.function();
            files[0].push_str(&f);
        }
        let top = Scope {
            vars: Vec::new(),
            req: true,
            funcs: self.functions.len(),
        };
        let mut scope = top;
        let n = 1 + self.upto(5);
        for _ in 0..n {
            if files.len() < 3 && self.chance(20) {
                files.push(String::new());
            }
            let item = self.top_item(&mut scope);
            let last = files.len() - 1;
            files[last].push_str(&item);
        }
        let mut out = String::new();
        if self.chance(30) {
            out.push_str("A generated program.\n");
        }
        for (i, f) in files.iter().enumerate() {
            let name = if i == 0 {
                "main.hcl".to_string()
            } else {
                format!("part{i}.hcl")
            };
            let _ = write!(out, "-- {name} --\n{f}");
        }
        out
    }

    fn top_item(&mut self, scope: &mut Scope) -> String {
        match self.pick(10) {
            0 | 1 => self.locals(scope, 0),
            2 | 3 => self.resource(scope, 0),
            4 => self.resources(scope, 0),
            5 => self.group(scope, 0),
            6 => self.composite(scope, 0, "status"),
            7 => self.composite(scope, 0, "connection"),
            8 => self.context(scope, 0),
            _ => {
                if self.chance(128) {
                    self.requirement(scope, 0)
                } else {
                    self.assert(scope, 0)
                }
            }
        }
    }

    /// A `locals` block; its names join `scope` (each value reads only names made before
    /// it, so there are no cycles).
    fn locals(&mut self, scope: &mut Scope, ind: usize) -> String {
        let pad = "  ".repeat(ind);
        let mut out = format!("{pad}locals {{\n");
        for _ in 0..1 + self.upto(3) {
            let name = format!("l{}", self.id());
            let ty = TYS[self.pick(TYS.len())];
            let value = if scope.vars.is_empty() || !self.chance(50) {
                self.expr(scope, ty, MAX_DEPTH)
            } else {
                self.copies(scope, ty)
            };
            out.push_str(&self.attr(ind + 1, &name, value));
            scope.vars.push((name, ty));
        }
        out.push_str(&format!("{pad}}}\n"));
        out
    }

    /// Sharing: a tuple (`ty` List) or object (`ty` Map; else either) of several copies of
    /// one earlier name.
    fn copies(&mut self, scope: &Scope, ty: Ty) -> String {
        let (v, _) = scope.vars[self.pick(scope.vars.len())].clone();
        let n = 2 + self.upto(8);
        let tuple = match ty {
            Ty::List => true,
            Ty::Map => false,
            _ => self.chance(128),
        };
        if tuple {
            format!("[{}]", vec![v; n].join(", "))
        } else {
            let fields: Vec<String> = (0..n).map(|i| format!("k{i} = {v}")).collect();
            format!("{{ {} }}", fields.join(", "))
        }
    }

    fn attr(&mut self, ind: usize, name: &str, value: String) -> String {
        format!("{}{name} = {value}\n", "  ".repeat(ind))
    }

    fn condition(&mut self, scope: &Scope, ind: usize) -> String {
        if self.chance(50) {
            let c = self.expr(scope, Ty::Bool, 3);
            self.attr(ind, "condition", c)
        } else {
            String::new()
        }
    }

    fn resource_name(&mut self) -> String {
        let id = self.id();
        let name = if self.chance(80) {
            format!("res-{id}")
        } else {
            format!("r{id}")
        };
        if !self.resources.is_empty() && self.chance(4) {
            // A duplicate name: a program error.
            let i = self.pick(self.resources.len());
            return self.resources[i].clone();
        }
        self.resources.push(name.clone());
        name
    }

    fn resource(&mut self, parent: &Scope, ind: usize) -> String {
        let pad = "  ".repeat(ind);
        let name = self.resource_name();
        let mut scope = parent.clone();
        scope.vars.extend([
            ("self.name".to_string(), Ty::Str),
            ("self.resource".to_string(), Ty::Map),
            ("self.resource.status.atProvider.arn".to_string(), Ty::Str),
            ("self.connection".to_string(), Ty::Map),
            ("self.connection.password".to_string(), Ty::Str),
        ]);
        let mut out = format!("{pad}resource {name} {{\n");
        out.push_str(&self.condition(&scope, ind + 1));
        let body = self.resource_content(&mut scope, ind + 1);
        out.push_str(&body);
        out.push_str(&format!("{pad}}}\n"));
        out
    }

    /// What a resource block and a template hold: locals, body, nested blocks.
    fn resource_content(&mut self, scope: &mut Scope, ind: usize) -> String {
        let mut out = String::new();
        if self.chance(100) {
            out.push_str(&self.locals(scope, ind));
        }
        out.push_str(&self.body(scope, ind));
        for _ in 0..self.upto(3) {
            let block = match self.pick(6) {
                0 => self.composite(scope, ind, "status"),
                1 => self.composite(scope, ind, "connection"),
                2 => self.ready(scope, ind),
                3 => self.context(scope, ind),
                4 => self.assert(scope, ind),
                _ => self.locals(scope, ind),
            };
            out.push_str(&block);
        }
        out
    }

    fn body(&mut self, scope: &Scope, ind: usize) -> String {
        let pad = "  ".repeat(ind);
        if self.chance(12) {
            // Any expression: a body that is not an object is a program error.
            let e = self.expr(scope, Ty::Any, 3);
            return self.attr(ind, "body", e);
        }
        let name = if self.chance(128) {
            "\"${self.name}\"".to_string()
        } else {
            self.expr(scope, Ty::Str, 2)
        };
        let mut fields = vec![
            format!("apiVersion = \"example.org/v1\""),
            format!("kind = \"{}\"", self.one(&["ConfigMap", "Bucket", "Queue"])),
            format!("metadata = {{ name = {name} }}"),
        ];
        for _ in 0..self.upto(4) {
            let k = self.object_key(scope);
            let ty = TYS[self.pick(TYS.len())];
            let v = self.expr(scope, ty, MAX_DEPTH);
            fields.push(format!("{k} = {v}"));
        }
        let inner = "  ".repeat(ind + 1);
        if self.chance(4) {
            // Block syntax, `body { ... }`: a schema error.
            let mut out = format!("{pad}body {{\n");
            for f in &fields {
                let _ = writeln!(out, "{inner}{f}");
            }
            let _ = writeln!(out, "{pad}}}");
            return out;
        }
        let mut out = format!("{pad}body = {{\n");
        for f in &fields {
            let _ = writeln!(out, "{inner}{f}");
        }
        let _ = writeln!(out, "{pad}}}");
        out
    }

    fn composite(&mut self, scope: &Scope, ind: usize, what: &str) -> String {
        let pad = "  ".repeat(ind);
        let mut fields = Vec::new();
        for _ in 0..1 + self.upto(2) {
            let k = self.one(&["a", "b", "nested", "url", "id", "x"]);
            let v = if what == "connection" && self.chance(200) {
                let inner = self.expr(scope, Ty::Str, 3);
                format!("base64encode({inner})")
            } else if self.chance(60) {
                // Nested objects that merge with other blocks' (or conflict).
                let leaf = self.expr(scope, Ty::Any, 2);
                format!("{{ deep = {{ {} = {leaf} }} }}", self.one(&["p", "q"]))
            } else {
                self.expr(scope, Ty::Any, 4)
            };
            fields.push(format!("{pad}    {k} = {v}"));
        }
        format!(
            "{pad}composite {what} {{\n{pad}  body = {{\n{}\n{pad}  }}\n{pad}}}\n",
            fields.join("\n")
        )
    }

    fn ready(&mut self, scope: &Scope, ind: usize) -> String {
        let pad = "  ".repeat(ind);
        let v = if self.chance(220) {
            format!(
                "\"{}\"",
                self.one(&["READY_TRUE", "READY_FALSE", "READY_UNSPECIFIED"])
            )
        } else {
            self.expr(scope, Ty::Str, 2)
        };
        format!("{pad}ready {{\n{pad}  value = {v}\n{pad}}}\n")
    }

    fn context(&mut self, scope: &Scope, ind: usize) -> String {
        let pad = "  ".repeat(ind);
        let key = if self.chance(200) {
            format!("\"example.org/{}\"", self.one(&["a", "b", "previous"]))
        } else {
            self.expr(scope, Ty::Str, 2)
        };
        let ty = TYS[self.pick(TYS.len())];
        let value = self.expr(scope, ty, 4);
        format!("{pad}context {{\n{pad}  key   = {key}\n{pad}  value = {value}\n{pad}}}\n")
    }

    fn assert(&mut self, scope: &Scope, ind: usize) -> String {
        let pad = "  ".repeat(ind);
        let assertion = if self.chance(200) {
            "true".to_string()
        } else {
            self.expr(scope, Ty::Bool, 3)
        };
        let message = self.template(scope, 2);
        let warning = if self.chance(100) {
            format!("{pad}  warning   = true\n")
        } else {
            String::new()
        };
        format!(
            "{pad}assert {{\n{pad}  assertion = {assertion}\n{pad}  message   = {message}\n{warning}{pad}}}\n"
        )
    }

    fn requirement(&mut self, parent: &Scope, ind: usize) -> String {
        let pad = "  ".repeat(ind);
        let name = format!("req-{}", self.id());
        self.requirements.push(name.clone());
        let mut scope = parent.clone();
        let mut out = format!("{pad}requirement {name} {{\n");
        out.push_str(&self.condition(&scope, ind + 1));
        if self.chance(80) {
            out.push_str(&self.locals(&mut scope, ind + 1));
        }
        let selector = match self.pick(5) {
            0 => {
                let labels = self.expr(&scope, Ty::Map, 2);
                format!("matchLabels = {labels}")
            }
            1 => "matchLabels = { team = \"a\", \"example.org/x\" = \"y\" }".to_string(),
            2 => {
                let n = self.expr(&scope, Ty::Str, 2);
                format!("matchName = {n}")
            }
            3 if self.chance(30) => "matchName = \"a\"\n    matchLabels = {}".to_string(),
            _ => "matchName = \"platform\"".to_string(),
        };
        let _ = write!(
            out,
            "{pad}  select {{\n{pad}    apiVersion = \"v1\"\n{pad}    kind = \"ConfigMap\"\n{pad}    {selector}\n{pad}  }}\n{pad}}}\n"
        );
        out
    }

    fn resources(&mut self, parent: &Scope, ind: usize) -> String {
        let pad = "  ".repeat(ind);
        let base = format!("coll-{}", self.id());
        self.collections.push(base.clone());
        let mut scope = parent.clone();
        scope.vars.extend([
            ("self.basename".to_string(), Ty::Str),
            ("self.resources".to_string(), Ty::List),
            ("self.connections".to_string(), Ty::List),
        ]);
        let mut out = format!("{pad}resources {base} {{\n");
        out.push_str(&self.condition(&scope, ind + 1));
        if self.chance(80) {
            out.push_str(&self.locals(&mut scope, ind + 1));
        }
        let for_each = match self.pick(6) {
            0 => format!("range({})", self.upto(4)),
            1 => "[\"a\", \"b\", \"c\"]".to_string(),
            2 => "{ x = 1, y = 2 }".to_string(),
            3 => "toset([\"p\", \"q\", \"p\"])".to_string(),
            _ => {
                let ty = if self.chance(128) { Ty::List } else { Ty::Map };
                self.expr(&scope, ty, 3)
            }
        };
        out.push_str(&self.attr(ind + 1, "for_each", for_each));
        scope.vars.extend([
            ("each.key".to_string(), Ty::Any),
            ("each.value".to_string(), Ty::Any),
        ]);
        if self.chance(80) {
            let name = if self.chance(128) {
                "\"${self.basename}-x${each.key}\"".to_string()
            } else {
                self.expr(&scope, Ty::Str, 2)
            };
            out.push_str(&self.attr(ind + 1, "name", name));
        }
        if self.chance(20) {
            out.push_str(&self.assert(&scope, ind + 1));
        }
        scope.vars.push(("self.name".to_string(), Ty::Str));
        let _ = writeln!(out, "{pad}  template {{");
        let content = self.resource_content(&mut scope, ind + 2);
        out.push_str(&content);
        let _ = writeln!(out, "{pad}  }}\n{pad}}}");
        out
    }

    fn group(&mut self, parent: &Scope, ind: usize) -> String {
        let pad = "  ".repeat(ind);
        let mut scope = parent.clone();
        let mut out = format!("{pad}group {{\n");
        out.push_str(&self.condition(&scope, ind + 1));
        if self.chance(128) {
            out.push_str(&self.locals(&mut scope, ind + 1));
        }
        for _ in 0..1 + self.upto(2) {
            let item = match self.pick(5) {
                0 | 1 => self.resource(&scope, ind + 1),
                2 => self.resources(&scope, ind + 1),
                3 if ind < 4 => self.group(&scope, ind + 1),
                _ => self.composite(&scope, ind + 1, "status"),
            };
            out.push_str(&item);
        }
        out.push_str(&format!("{pad}}}\n"));
        out
    }

    /// A user function; its arguments and locals are all it reads.
    fn function(&mut self) -> String {
        let name = format!("f{}", self.id());
        let mut args = Vec::new();
        let mut out = format!("function {name} {{\n");
        let nargs = 1 + self.upto(2);
        for i in 0..nargs {
            let arg = if i == 0 {
                "n".to_string()
            } else {
                format!("a{i}")
            };
            let ty = if i == 0 {
                Ty::Num
            } else {
                TYS[self.pick(TYS.len())]
            };
            let default = self.chance(80);
            if default {
                let d = self.literal(ty);
                let _ = writeln!(
                    out,
                    "  arg {arg} {{\n    default = {d}\n    description = \"arg {i}\"\n  }}"
                );
            } else {
                let _ = writeln!(out, "  arg {arg} {{}}");
            }
            args.push((arg, ty, default));
        }
        let mut scope = Scope {
            vars: args.iter().map(|(a, t, _)| (a.clone(), *t)).collect(),
            req: false,
            funcs: self.functions.len(),
        };
        if self.chance(128) {
            out.push_str(&self.locals(&mut scope, 1));
        }
        let base = self.expr(&scope, Ty::Any, 4);
        let body = if self.chance(60) {
            // Guarded recursion on `n` (a call bomb when it calls itself twice).
            let others: Vec<String> = args
                .iter()
                .skip(1)
                .filter(|_| self.chance(200))
                .map(|(a, _, _)| format!("{a} = {a}"))
                .collect();
            let call = format!(
                "invoke(\"{name}\", {{ n = n - 1{} }})",
                others.iter().map(|o| format!(", {o}")).collect::<String>()
            );
            if self.chance(30) {
                format!("n <= 0 ? 1 : {call} + {call}")
            } else {
                format!("n <= 0 ? {base} : [{call}]")
            }
        } else {
            base
        };
        let _ = writeln!(out, "  body = {body}\n}}");
        self.functions.push(Func { name, args });
        out
    }

    // ---- expressions ---------------------------------------------------------------

    fn literal(&mut self, ty: Ty) -> String {
        match ty {
            Ty::Bool => self.one(&["true", "false"]).to_string(),
            Ty::Num => self.number(),
            Ty::Str => self.quoted(),
            Ty::List => self
                .one(&[
                    "[]",
                    "[\"a\", \"b\"]",
                    "[1, 2, 3]",
                    "[\"x\", 1, true]",
                    "[[1], [2, 3]]",
                ])
                .to_string(),
            Ty::Map => self
                .one(&[
                    "{}",
                    "{ k = \"v\", n = \"1\" }",
                    "{ a = 1, b = 2 }",
                    "{ a = [\"x\"] }",
                ])
                .to_string(),
            Ty::Any => self.one(&["null", "1", "\"s\"", "[]", "{}"]).to_string(),
        }
    }

    fn number(&mut self) -> String {
        if self.chance(128) {
            self.upto(32).to_string()
        } else {
            self.one(NUMBERS).to_string()
        }
    }

    /// A string literal (no interpolation) with escapes.
    fn quoted(&mut self) -> String {
        let mut out = String::from("\"");
        for _ in 0..self.upto(3) {
            let w = self.one(WORDS);
            escape_into(w, &mut out);
            if self.chance(40) {
                out.push_str(self.one(&[
                    "\\n",
                    "\\t",
                    "\\\"",
                    "\\\\",
                    "\\u00e9",
                    "\\U0001F600",
                    "$${x}",
                    "%%{y}",
                    "e\\u0301",
                    "\\r",
                ]));
            }
        }
        if self.chance(8) {
            let n = 1usize << self.upto(14);
            out.push_str(&"x".repeat(n));
        }
        out.push('"');
        out
    }

    fn object_key(&mut self, scope: &Scope) -> String {
        match self.pick(6) {
            0 => {
                let k = self.one(KEYS);
                format!("\"{}\"", k)
            }
            1 => {
                let e = self.expr(scope, Ty::Str, 1);
                format!("({e})")
            }
            _ => {
                let k = self.one(&["a", "b", "c", "name", "data", "spec", "x-y", "_u"]);
                k.to_string()
            }
        }
    }

    fn var(&mut self, scope: &Scope, ty: Ty) -> Option<String> {
        let fits = |t: Ty| ty == Ty::Any || t == ty || t == Ty::Any;
        let vars = scope.vars.iter().filter(|(_, t)| fits(*t)).count();
        let paths = if scope.req {
            self.paths.iter().filter(|(_, t)| fits(*t)).count()
        } else {
            0
        };
        if vars + paths == 0 {
            return None;
        }
        let i = self.pick(vars + paths);
        let found = if i < vars {
            scope.vars.iter().filter(|(_, t)| fits(*t)).nth(i)
        } else {
            self.paths.iter().filter(|(_, t)| fits(*t)).nth(i - vars)
        };
        found.map(|(v, _)| v.clone())
    }

    fn atom(&mut self, scope: &Scope, ty: Ty) -> String {
        if self.chance(150)
            && let Some(v) = self.var(scope, ty)
        {
            return v;
        }
        match ty {
            Ty::Str if self.chance(100) => self.template(scope, 0),
            Ty::Any => {
                let t = TYS[1 + self.pick(TYS.len() - 1)];
                self.literal(t)
            }
            t => self.literal(t),
        }
    }

    /// An expression likely of type `ty`, at most `depth` levels deep.
    fn expr(&mut self, scope: &Scope, ty: Ty, depth: u32) -> String {
        self.nodes += 1;
        if depth == 0 || self.nodes > MAX_NODES {
            return self.atom(scope, ty);
        }
        let d = depth - 1;
        match self.pick(16) {
            0 | 1 => self.atom(scope, ty),
            2 => {
                let c = self.expr(scope, Ty::Bool, d);
                let a = self.expr(scope, ty, d);
                let b = self.expr(scope, ty, d);
                format!("{c} ? {a} : {b}")
            }
            3 => self.traversal(scope, d),
            4 => {
                let a = self.expr(scope, ty, d);
                let b = self.expr(scope, ty, d);
                if self.chance(200) {
                    format!("try({a}, {b})")
                } else {
                    format!("try({a})")
                }
            }
            5 => self.invoke(scope, ty, d),
            6 => {
                let a = self.expr(scope, ty, d);
                format!("({a})")
            }
            7 | 8 => self.call(scope, ty, d),
            _ => self.typed(scope, ty, d),
        }
    }

    fn typed(&mut self, scope: &Scope, ty: Ty, d: u32) -> String {
        match ty {
            Ty::Bool => match self.pick(5) {
                0 => {
                    let a = self.expr(scope, Ty::Any, d);
                    format!("can({a})")
                }
                1 => {
                    let a = self.expr(scope, Ty::Bool, d);
                    let b = self.expr(scope, Ty::Bool, d);
                    let op = self.one(&["&&", "||"]);
                    format!("{a} {op} {b}")
                }
                2 => {
                    let a = self.expr(scope, Ty::Bool, d);
                    format!("!{a}")
                }
                _ => {
                    let t = TYS[self.pick(TYS.len())];
                    let a = self.expr(scope, t, d);
                    let b = self.expr(scope, t, d);
                    let op = self.one(&["==", "!=", "<", "<=", ">", ">="]);
                    format!("{a} {op} {b}")
                }
            },
            Ty::Num => match self.pick(3) {
                0 => {
                    let a = self.expr(scope, Ty::Num, d);
                    format!("-{a}")
                }
                _ => {
                    let a = self.expr(scope, Ty::Num, d);
                    let b = self.expr(scope, Ty::Num, d);
                    let op = self.one(&["+", "-", "*", "/", "%"]);
                    format!("{a} {op} {b}")
                }
            },
            Ty::Str => match self.pick(3) {
                0 => self.quoted(),
                _ => self.template(scope, d),
            },
            Ty::List => match self.pick(4) {
                0 => {
                    let n = self.upto(4);
                    let items: Vec<String> = (0..n).map(|_| self.expr(scope, Ty::Any, d)).collect();
                    let trail = if n > 0 && self.chance(60) { "," } else { "" };
                    format!("[{}{trail}]", items.join(", "))
                }
                1 if !scope.vars.is_empty() => self.copies(scope, Ty::List),
                _ => self.for_expr(scope, false, d),
            },
            Ty::Map => match self.pick(3) {
                0 => self.for_expr(scope, true, d),
                _ => {
                    let n = self.upto(4);
                    let mut fields = Vec::new();
                    for _ in 0..n {
                        let k = self.object_key(scope);
                        let v = self.expr(scope, Ty::Any, d);
                        let sep = if self.chance(60) { ":" } else { "=" };
                        fields.push(format!("{k} {sep} {v}"));
                    }
                    if self.chance(80) {
                        format!("{{\n{}\n}}", fields.join("\n"))
                    } else {
                        format!("{{ {} }}", fields.join(", "))
                    }
                }
            },
            Ty::Any => {
                let t = TYS[1 + self.pick(TYS.len() - 1)];
                self.typed(scope, t, d)
            }
        }
    }

    /// A name followed by attribute, index and splat steps.
    fn traversal(&mut self, scope: &Scope, d: u32) -> String {
        let mut e = match self.var(scope, Ty::Any) {
            Some(v) => v,
            None => {
                let inner = self.expr(scope, Ty::Map, d);
                format!("({inner})")
            }
        };
        let mut splat = false;
        let mut legacy = false;
        for _ in 0..1 + self.upto(2) {
            let step = self.pick(7);
            // hcl allows one splat per traversal, and no legacy index (`.0`) after another.
            let step = match step {
                2 | 3 if splat => 6,
                4 if legacy => 0,
                s => s,
            };
            legacy = step == 4;
            match step {
                0 => {
                    let _ = write!(e, "[{}]", self.upto(3));
                }
                1 => {
                    let _ = write!(e, "[\"{}\"]", self.one(KEYS));
                }
                2 => {
                    splat = true;
                    e.push_str("[*]");
                }
                3 => {
                    splat = true;
                    e.push_str(".*");
                }
                4 => {
                    let _ = write!(e, ".{}", self.upto(2));
                }
                5 => {
                    let i = self.expr(scope, Ty::Any, d.min(1));
                    let _ = write!(e, "[{i}]");
                }
                _ => {
                    let k = self.one(&["name", "a", "items", "status", "metadata", "value", "x"]);
                    let _ = write!(e, ".{k}");
                }
            }
        }
        e
    }

    fn for_expr(&mut self, scope: &Scope, object: bool, d: u32) -> String {
        let coll_ty = if self.chance(160) { Ty::List } else { Ty::Map };
        let coll = self.expr(scope, coll_ty, d);
        let k = format!("k{}", self.id());
        let v = format!("v{}", self.id());
        let mut inner = scope.clone();
        let two = self.chance(128);
        if two {
            inner.vars.push((k.clone(), Ty::Any));
        }
        inner.vars.push((v.clone(), Ty::Any));
        let head = if two {
            format!("for {k}, {v} in {coll}")
        } else {
            format!("for {v} in {coll}")
        };
        let cond = if self.chance(60) {
            let c = self.expr(&inner, Ty::Bool, d.min(2));
            format!(" if {c}")
        } else {
            String::new()
        };
        if object {
            let key = if two && self.chance(128) {
                format!("tostring({k})")
            } else {
                self.expr(&inner, Ty::Str, d.min(2))
            };
            let val = self.expr(&inner, Ty::Any, d);
            let group = if self.chance(40) { "..." } else { "" };
            format!("{{ {head} : {key} => {val}{group}{cond} }}")
        } else {
            let val = self.expr(&inner, Ty::Any, d);
            format!("[{head} : {val}{cond}]")
        }
    }

    /// A quoted template: literal text, interpolations (with strip markers), `%{if}` and
    /// `%{for}` directives.
    fn template(&mut self, scope: &Scope, d: u32) -> String {
        let mut out = String::from("\"");
        self.template_parts(scope, d, &mut out);
        out.push('"');
        out
    }

    fn template_parts(&mut self, scope: &Scope, d: u32, out: &mut String) {
        for _ in 0..1 + self.upto(3) {
            match self.pick(6) {
                0 | 1 => escape_into(self.one(WORDS), out),
                2 | 3 => {
                    let e = self.expr(scope, Ty::Any, d.min(2));
                    let (l, r) = self.strip();
                    let _ = write!(out, "${{{l}{e}{r}}}");
                }
                4 if d > 0 => {
                    let c = self.expr(scope, Ty::Bool, d.min(2));
                    let (l, r) = self.strip();
                    let _ = write!(out, "%{{{l}if {c}{r}}}");
                    self.template_parts(scope, d - 1, out);
                    if self.chance(128) {
                        out.push_str("%{ else }");
                        self.template_parts(scope, d - 1, out);
                    }
                    let (l, r) = self.strip();
                    let _ = write!(out, "%{{{l}endif{r}}}");
                }
                5 if d > 0 => {
                    let coll = self.expr(scope, Ty::List, d.min(2));
                    let v = format!("t{}", self.id());
                    let mut inner = scope.clone();
                    inner.vars.push((v.clone(), Ty::Any));
                    let _ = write!(out, "%{{ for {v} in {coll} }}");
                    self.template_parts(&inner, d - 1, out);
                    out.push_str("%{ endfor }");
                }
                _ => escape_into(self.one(WORDS), out),
            }
        }
    }

    fn strip(&mut self) -> (&'static str, &'static str) {
        match self.pick(6) {
            0 => ("~", ""),
            1 => ("", "~"),
            2 => ("~", "~"),
            _ => (" ", " "),
        }
    }

    fn invoke(&mut self, scope: &Scope, ty: Ty, d: u32) -> String {
        if scope.funcs == 0 {
            return self.call(scope, ty, d);
        }
        let i = self.pick(scope.funcs);
        let name = self.functions[i].name.clone();
        let args: Vec<(String, Ty, bool)> = self.functions[i].args.clone();
        let mut fields = Vec::new();
        for (a, t, has_default) in &args {
            if *has_default && self.chance(100) {
                continue;
            }
            let v = if a == "n" {
                self.upto(12).to_string()
            } else {
                self.expr(scope, *t, d)
            };
            fields.push(format!("{a} = {v}"));
        }
        if self.chance(6) {
            fields.push("unknown_arg = 1".to_string());
        }
        format!("invoke(\"{name}\", {{ {} }})", fields.join(", "))
    }

    /// A call of a real builtin, with arguments of its parameters' types.
    fn call(&mut self, scope: &Scope, ty: Ty, d: u32) -> String {
        let all = fn_hcl::builtins::all();
        let preferred: &[&str] = match ty {
            Ty::Str => &[
                "format",
                "join",
                "replace",
                "upper",
                "substr",
                "jsonencode",
                "yamlencode",
                "base64encode",
                "base64decode",
                "tostring",
                "indent",
                "formatdate",
                "cidrhost",
                "regex",
                "trimspace",
                "textencodebase64",
                "sha256",
                "urlencode",
                "strrev",
                "timeadd",
                "title",
                "element",
                "lookup",
                "coalesce",
            ],
            Ty::Num => &[
                "length", "max", "min", "parseint", "pow", "abs", "ceil", "log", "sum", "index",
                "tonumber", "signum", "timecmp",
            ],
            Ty::Bool => &[
                "contains",
                "startswith",
                "endswith",
                "alltrue",
                "anytrue",
                "strcontains",
                "tobool",
            ],
            Ty::List => &[
                "range",
                "split",
                "concat",
                "keys",
                "values",
                "flatten",
                "distinct",
                "reverse",
                "sort",
                "chunklist",
                "setproduct",
                "regexall",
                "formatlist",
                "slice",
                "compact",
                "tolist",
                "cidrsubnets",
                "csvdecode",
                "toset",
                "setunion",
                "matchkeys",
            ],
            Ty::Map => &[
                "merge",
                "zipmap",
                "tomap",
                "transpose",
                "jsondecode",
                "yamldecode",
                "lookup",
            ],
            Ty::Any => &[],
        };
        let def: &FuncDef = if !preferred.is_empty() && self.chance(180) {
            let name = self.one(preferred);
            match all.iter().find(|f| f.name == name) {
                Some(f) => f,
                None => &all[self.pick(all.len())],
            }
        } else {
            &all[self.pick(all.len())]
        };
        let mut args = Vec::new();
        for (i, p) in def.params.iter().enumerate() {
            let a = self.arg(scope, def.name, i, p.ty, d);
            args.push(a);
        }
        let mut spread = "";
        if let Some(p) = def.var_param {
            if self.chance(40) {
                let l = self.expr(scope, Ty::List, d);
                args.push(l);
                spread = "...";
            } else {
                for j in 0..self.upto(3) {
                    let a = self.arg(scope, def.name, def.params.len() + j, p.ty, d);
                    args.push(a);
                }
            }
        }
        if self.chance(4) {
            // Wrong arity: a program error.
            args.push("1".to_string());
        }
        format!("{}({}{spread})", def.name, args.join(", "))
    }

    /// An argument of builtin `name` at `index`: a plausible literal for the parameters
    /// that take formats, patterns, dates, networks or sizes; else an expression of the
    /// parameter's type.
    fn arg(&mut self, scope: &Scope, name: &str, index: usize, ty: ParamType, d: u32) -> String {
        let vocab: Option<&[&str]> = match (name, index) {
            ("format" | "formatlist", 0) => Some(FORMATS),
            ("regex" | "regexall", 0) => Some(REGEXES),
            ("replace", 1) => Some(&["/[aeiou]/", "/(\\w)/", "a", "", "/^/", "/$/", "x"]),
            ("replace", 2) => Some(&["$1$1", "", "[$0]", "${1}x", "long-long-long"]),
            ("formatdate", 0) => Some(DATE_FORMATS),
            ("formatdate", 1) | ("timecmp", 0 | 1) => Some(&[
                "2024-01-02T03:04:05Z",
                "2024-02-29T23:59:59+05:30",
                "bad",
                "9999-12-31T23:59:59Z",
            ]),
            ("timeadd", 0) => Some(&["2024-01-02T03:04:05Z", "0001-01-01T00:00:00Z"]),
            ("timeadd", 1) => Some(&["1h", "-30m", "1.5s", "2562047h", "99999999999h", "x"]),
            ("cidrhost" | "cidrnetmask" | "cidrsubnet" | "cidrsubnets", 0) => Some(&[
                "10.0.0.0/8",
                "192.168.0.0/24",
                "fd00::/8",
                "0.0.0.0/0",
                "::/0",
                "bad",
            ]),
            ("textencodebase64" | "textdecodebase64", 1) => Some(ENCODINGS),
            ("parseint", 1) => Some(&["2", "10", "16", "36", "1", "37"]),
            (
                "range" | "chunklist" | "indent" | "substr" | "pow" | "cidrsubnet" | "cidrhost",
                _,
            )
            | ("cidrsubnets", _) => Some(&[
                "0", "1", "2", "3", "-1", "8", "20", "64", "1000", "100000", "1e7",
            ]),
            ("csvdecode", 0) => Some(&["\"a,b\\n1,2\\n\"", "\"a\\n\\\"x\\\"\\n\""]),
            _ => None,
        };
        if let Some(v) = vocab
            && self.chance(200)
        {
            let lit = self.one(v);
            let numeric = matches!(ty, ParamType::Number);
            if numeric || lit.starts_with('"') {
                return lit.to_string();
            }
            let mut q = String::from("\"");
            escape_into(lit, &mut q);
            q.push('"');
            return q;
        }
        let t = match ty {
            ParamType::Any => Ty::Any,
            ParamType::Bool => Ty::Bool,
            ParamType::Number => Ty::Num,
            ParamType::String => Ty::Str,
            ParamType::List(_) | ParamType::Set(_) => Ty::List,
            ParamType::Map(_) => Ty::Map,
        };
        if matches!(name, "yamldecode" | "jsondecode" | "base64decode")
            && scope.req
            && self.chance(180)
        {
            let key = self.one(&["yaml", "json", "long", "deep", "name"]);
            return format!("try(req.composite.spec.{key}, \"\")");
        }
        self.expr(scope, t, d)
    }
}

/// `path` followed by the traversal step for key `k`.
fn traverse(path: &str, k: &str) -> String {
    let ident = !k.is_empty()
        && k.chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        && !IDENT_RESERVED.contains(&k);
    if ident {
        format!("{path}.{k}")
    } else {
        let mut q = String::new();
        escape_into(k, &mut q);
        format!("{path}[\"{q}\"]")
    }
}

/// `text` as the inside of a quoted hcl template (explain's escaping: quotes,
/// backslashes and control characters escaped, `${` and `%{` doubled).
fn escape_into(text: &str, out: &mut String) {
    out.push_str(&fn_hcl::runtime::explain::escape(text));
}

fn struct_of(v: &Val) -> prost_types::Struct {
    match v {
        Val::Obj(fields) => to_struct(fields),
        _ => prost_types::Struct::default(),
    }
}
