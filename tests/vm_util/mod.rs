//! Test support for the VM tests: a small parser for hcl expressions (enough for the tests,
//! with hcl's ranges) until the real parser lands, and helpers to compile and run.
#![allow(dead_code)]

use fn_hcl::bytecode::code::ChunkId;
use fn_hcl::bytecode::compile::{CodeBuilder, Scope};
use fn_hcl::bytecode::vm::{Limits, Vm, VmError};
use fn_hcl::syntax::ast::*;
use fn_hcl::syntax::diag::Diagnostic;
use fn_hcl::syntax::span::{FileId, Pos, SourceMap, Span};
use fn_hcl::value::Value;
use std::sync::Arc;

pub struct Parser<'a> {
    src: &'a str,
    file: FileId,
    pos: Pos,
}

type R<T> = Result<T, String>;

impl<'a> Parser<'a> {
    pub fn new(src: &'a str, file: FileId) -> Self {
        Parser {
            src,
            file,
            pos: Pos::START,
        }
    }

    fn rest(&self) -> &'a str {
        &self.src[self.pos.byte as usize..]
    }

    fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos.byte += c.len_utf8() as u32;
        if c == '\n' {
            self.pos.line += 1;
            self.pos.col = 1;
        } else {
            self.pos.col += 1;
        }
        Some(c)
    }

    fn ws(&mut self) {
        while let Some(c) = self.peek() {
            if c.is_whitespace() {
                self.bump();
            } else {
                break;
            }
        }
    }

    fn eat(&mut self, s: &str) -> bool {
        self.ws();
        if self.rest().starts_with(s) {
            for _ in s.chars() {
                self.bump();
            }
            true
        } else {
            false
        }
    }

    fn expect(&mut self, s: &str) -> R<Span> {
        self.ws();
        let start = self.pos;
        if self.eat(s) {
            Ok(self.span(start))
        } else {
            Err(format!(
                "expected {s:?} at {:?}: {:?}",
                self.pos,
                self.rest()
            ))
        }
    }

    fn span(&self, start: Pos) -> Span {
        Span::new(self.file, start, self.pos)
    }

    fn peek_op(&mut self, ops: &[&'static str]) -> Option<&'static str> {
        self.ws();
        let r = self.rest();
        ops.iter()
            .copied()
            .find(|o| r.starts_with(o) && !(*o == "=" && r.starts_with("==")))
    }

    pub fn parse(&mut self) -> R<Expr> {
        let e = self.expr()?;
        self.ws();
        if !self.rest().is_empty() {
            return Err(format!("trailing input: {:?}", self.rest()));
        }
        Ok(e)
    }

    pub fn expr(&mut self) -> R<Expr> {
        self.ws();
        let start = self.pos;
        let c = self.binary(0)?;
        if self.peek_op(&["?"]).is_some() {
            self.eat("?");
            let t = self.expr()?;
            self.expect(":")?;
            let f = self.expr()?;
            return Ok(Expr {
                kind: ExprKind::Conditional {
                    cond: Box::new(c),
                    then: Box::new(t),
                    otherwise: Box::new(f),
                },
                span: self.span(start),
            });
        }
        Ok(c)
    }

    fn binary(&mut self, level: usize) -> R<Expr> {
        const LEVELS: &[&[(&str, BinaryOp)]] = &[
            &[("||", BinaryOp::Or)],
            &[("&&", BinaryOp::And)],
            &[("==", BinaryOp::Eq), ("!=", BinaryOp::Ne)],
            &[
                (">=", BinaryOp::Ge),
                ("<=", BinaryOp::Le),
                (">", BinaryOp::Gt),
                ("<", BinaryOp::Lt),
            ],
            &[("+", BinaryOp::Add), ("-", BinaryOp::Sub)],
            &[
                ("*", BinaryOp::Mul),
                ("/", BinaryOp::Div),
                ("%", BinaryOp::Mod),
            ],
        ];
        if level == LEVELS.len() {
            return self.unary();
        }
        self.ws();
        let start = self.pos;
        let mut lhs = self.binary(level + 1)?;
        loop {
            self.ws();
            let r = self.rest();
            let Some((sym, op)) = LEVELS[level].iter().find(|(s, _)| {
                r.starts_with(s) && !(*s == ">" && r.starts_with("=>")) && !r.starts_with("...")
            }) else {
                break;
            };
            self.eat(sym);
            let rhs = self.binary(level + 1)?;
            lhs = Expr {
                kind: ExprKind::Binary {
                    op: *op,
                    lhs: Box::new(lhs),
                    rhs: Box::new(rhs),
                },
                span: self.span(start),
            };
        }
        Ok(lhs)
    }

    fn unary(&mut self) -> R<Expr> {
        self.ws();
        let start = self.pos;
        let op = if self.rest().starts_with('-') {
            Some(UnaryOp::Neg)
        } else if self.rest().starts_with('!') && !self.rest().starts_with("!=") {
            Some(UnaryOp::Not)
        } else {
            None
        };
        if let Some(op) = op {
            self.bump();
            let operand = self.unary()?;
            return Ok(Expr {
                kind: ExprKind::Unary {
                    op,
                    operand: Box::new(operand),
                },
                span: self.span(start),
            });
        }
        self.postfix()
    }

    fn postfix(&mut self) -> R<Expr> {
        self.ws();
        let start = self.pos;
        let mut e = self.primary()?;
        loop {
            if self.rest().starts_with(".*") || self.rest().starts_with("[*]") {
                let full = self.rest().starts_with('[');
                self.eat(if full { "[*]" } else { ".*" });
                let marker_end = self.pos;
                let each_start = self.pos;
                let mut each = Expr {
                    kind: ExprKind::SplatItem,
                    span: Span::new(self.file, marker_end, marker_end),
                };
                loop {
                    let r = self.rest();
                    let attr = r.starts_with('.') && !r.starts_with(".*");
                    let index = full && r.starts_with('[') && !r.starts_with("[*]");
                    if !(attr || index) {
                        break;
                    }
                    each = self.step(each, each_start)?;
                }
                e = Expr {
                    kind: ExprKind::Splat {
                        source: Box::new(e),
                        each: Box::new(each),
                        full,
                    },
                    span: self.span(start),
                };
                continue;
            }
            if self.rest().starts_with('.') && !self.rest().starts_with("...")
                || self.rest().starts_with('[')
            {
                e = self.step(e, start)?;
                continue;
            }
            break;
        }
        Ok(e)
    }

    fn step(&mut self, obj: Expr, start: Pos) -> R<Expr> {
        if self.eat("[") {
            let key = self.expr()?;
            self.expect("]")?;
            return Ok(Expr {
                kind: ExprKind::Index {
                    obj: Box::new(obj),
                    key: Box::new(key),
                    legacy: false,
                },
                span: self.span(start),
            });
        }
        self.expect(".")?;
        if self.peek().is_some_and(|c| c.is_ascii_digit()) {
            let ks = self.pos;
            while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                self.bump();
            }
            let text = &self.src[ks.byte as usize..self.pos.byte as usize];
            let key = Expr {
                kind: ExprKind::Number(text.into()),
                span: self.span(ks),
            };
            return Ok(Expr {
                kind: ExprKind::Index {
                    obj: Box::new(obj),
                    key: Box::new(key),
                    legacy: true,
                },
                span: self.span(start),
            });
        }
        let name = self.ident()?;
        Ok(Expr {
            kind: ExprKind::GetAttr {
                obj: Box::new(obj),
                name,
            },
            span: self.span(start),
        })
    }

    fn ident(&mut self) -> R<Ident> {
        self.ws();
        let start = self.pos;
        if !self.peek().is_some_and(|c| c.is_alphabetic() || c == '_') {
            return Err(format!("expected identifier at {:?}", self.rest()));
        }
        while self
            .peek()
            .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '-')
        {
            self.bump();
        }
        Ok(Ident {
            name: self.src[start.byte as usize..self.pos.byte as usize].into(),
            span: self.span(start),
        })
    }

    fn primary(&mut self) -> R<Expr> {
        self.ws();
        let start = self.pos;
        let c = self.peek().ok_or("unexpected end")?;
        if c.is_ascii_digit() {
            while self
                .peek()
                .is_some_and(|c| c.is_ascii_digit() || c == '.' || c == 'e')
            {
                if self.rest().starts_with('.')
                    && !self.rest()[1..].starts_with(|c: char| c.is_ascii_digit())
                {
                    break;
                }
                self.bump();
            }
            let text = &self.src[start.byte as usize..self.pos.byte as usize];
            return Ok(Expr {
                kind: ExprKind::Number(text.into()),
                span: self.span(start),
            });
        }
        if c == '"' {
            self.bump();
            let t = self.template_parts(&["\""])?;
            self.expect("\"")?;
            let span = self.span(start);
            if let [TemplatePart::Interp(e)] = t.parts.as_slice() {
                return Ok(Expr {
                    kind: ExprKind::TemplateWrap(Box::new(e.clone())),
                    span,
                });
            }
            return Ok(Expr {
                kind: ExprKind::Template(t),
                span,
            });
        }
        if c == '(' {
            self.bump();
            let inner = self.expr()?;
            self.expect(")")?;
            return Ok(Expr {
                kind: ExprKind::Paren(Box::new(inner)),
                span: self.span(start),
            });
        }
        if c == '[' {
            self.bump();
            if self.for_ahead() {
                return self.for_expr(start, false);
            }
            let mut items = Vec::new();
            loop {
                if self.eat("]") {
                    break;
                }
                items.push(self.expr()?);
                self.eat(",");
            }
            return Ok(Expr {
                kind: ExprKind::Tuple(items),
                span: self.span(start),
            });
        }
        if c == '{' {
            self.bump();
            if self.for_ahead() {
                return self.for_expr(start, true);
            }
            let mut items = Vec::new();
            loop {
                if self.eat("}") {
                    break;
                }
                self.ws();
                let key = if self.peek().is_some_and(|c| c.is_alphabetic()) {
                    let save = (self.pos,);
                    let id = self.ident()?;
                    self.ws();
                    if self.rest().starts_with('=') || self.rest().starts_with(':') {
                        ObjectKey::Ident(id)
                    } else {
                        self.pos = save.0;
                        ObjectKey::Expr(self.expr()?)
                    }
                } else {
                    ObjectKey::Expr(self.expr()?)
                };
                if !self.eat("=") {
                    self.expect(":")?;
                }
                let value = self.expr()?;
                items.push(ObjectItem { key, value });
                self.eat(",");
            }
            return Ok(Expr {
                kind: ExprKind::Object(items),
                span: self.span(start),
            });
        }
        let id = self.ident()?;
        match &*id.name {
            "null" => {
                return Ok(Expr {
                    kind: ExprKind::Null,
                    span: id.span,
                });
            }
            "true" | "false" => {
                return Ok(Expr {
                    kind: ExprKind::Bool(&*id.name == "true"),
                    span: id.span,
                });
            }
            _ => {}
        }
        if self.rest().starts_with('(') {
            let op_start = self.pos;
            self.bump();
            let open_paren = self.span(op_start);
            let mut args = Vec::new();
            let mut expand_final = false;
            loop {
                self.ws();
                let cs = self.pos;
                if self.eat(")") {
                    let close_paren = self.span(cs);
                    return Ok(Expr {
                        kind: ExprKind::Call {
                            name: id,
                            args,
                            expand_final,
                            open_paren,
                            close_paren,
                        },
                        span: self.span(start),
                    });
                }
                args.push(self.expr()?);
                if self.eat("...") {
                    expand_final = true;
                }
                self.eat(",");
            }
        }
        Ok(Expr {
            kind: ExprKind::Variable(id),
            span: self.span(start),
        })
    }

    fn for_ahead(&mut self) -> bool {
        self.ws();
        let r = self.rest();
        r.starts_with("for ") || r.starts_with("for\t")
    }

    fn for_expr(&mut self, start: Pos, object: bool) -> R<Expr> {
        self.eat("for");
        let first = self.ident()?;
        let (key_var, value_var) = if self.eat(",") {
            (Some(first), self.ident()?)
        } else {
            (None, first)
        };
        self.expect("in")?;
        let collection = self.expr()?;
        self.expect(":")?;
        let (key_expr, value_expr) = if object {
            let k = self.expr()?;
            self.expect("=>")?;
            (Some(k), self.expr()?)
        } else {
            (None, self.expr()?)
        };
        let group = self.eat("...");
        let cond = if self.eat("if") {
            Some(self.expr()?)
        } else {
            None
        };
        self.expect(if object { "}" } else { "]" })?;
        Ok(Expr {
            kind: ExprKind::For(Box::new(ForExpr {
                key_var,
                value_var,
                collection,
                key_expr,
                value_expr,
                cond,
                group,
            })),
            span: self.span(start),
        })
    }

    /// Template parts up to (not including) one of `stops` (`"` or a directive keyword).
    fn template_parts(&mut self, stops: &[&str]) -> R<Template> {
        let mut parts = Vec::new();
        let mut lit = String::new();
        let mut lit_start = self.pos;
        loop {
            let r = self.rest();
            if r.is_empty() {
                return Err("unterminated template".into());
            }
            let at_stop = stops.iter().any(|s| {
                if *s == "\"" {
                    r.starts_with('"')
                } else {
                    r.starts_with("%{") && r[2..].trim_start().starts_with(s)
                }
            });
            if at_stop || r.starts_with("${") || r.starts_with("%{") {
                if !lit.is_empty() {
                    parts.push(TemplatePart::Literal {
                        text: std::mem::take(&mut lit).into(),
                        span: self.span(lit_start),
                    });
                }
                if at_stop {
                    return Ok(Template { parts });
                }
                if r.starts_with("${") {
                    self.bump();
                    self.bump();
                    let e = self.expr()?;
                    self.expect("}")?;
                    parts.push(TemplatePart::Interp(e));
                } else {
                    let ds = self.pos;
                    self.bump();
                    self.bump();
                    self.ws();
                    if self.eat("if") {
                        let cond = self.expr()?;
                        self.expect("}")?;
                        let then = self.template_parts(&["else", "endif"])?;
                        let otherwise = if self.rest()[2..].trim_start().starts_with("else") {
                            self.eat("%{");
                            self.eat("else");
                            self.expect("}")?;
                            Some(self.template_parts(&["endif"])?)
                        } else {
                            None
                        };
                        self.eat("%{");
                        self.eat("endif");
                        self.expect("}")?;
                        parts.push(TemplatePart::If {
                            cond,
                            then,
                            otherwise,
                            span: self.span(ds),
                        });
                    } else if self.eat("for") {
                        let first = self.ident()?;
                        let (key_var, value_var) = if self.eat(",") {
                            (Some(first), self.ident()?)
                        } else {
                            (None, first)
                        };
                        self.expect("in")?;
                        let collection = self.expr()?;
                        self.expect("}")?;
                        let body = self.template_parts(&["endfor"])?;
                        self.eat("%{");
                        self.eat("endfor");
                        self.expect("}")?;
                        parts.push(TemplatePart::For {
                            key_var,
                            value_var,
                            collection,
                            body,
                            span: self.span(ds),
                        });
                    } else {
                        return Err("unknown directive".into());
                    }
                }
                lit_start = self.pos;
                continue;
            }
            if lit.is_empty() {
                lit_start = self.pos;
            }
            let c = self.bump().ok_or("eof")?;
            if c == '\\' {
                match self.bump() {
                    Some('n') => lit.push('\n'),
                    Some('t') => lit.push('\t'),
                    Some(other) => lit.push(other),
                    None => return Err("bad escape".into()),
                }
            } else {
                lit.push(c);
            }
        }
    }
}

/// A scope over named slots, in order.
pub struct Names(pub Vec<&'static str>);

impl Scope for Names {
    fn resolve(&self, name: &str) -> Option<u32> {
        self.0.iter().position(|n| *n == name).map(|i| i as u32)
    }
    fn visible_names(&self) -> Vec<Arc<str>> {
        self.0.iter().map(|n| Arc::from(*n)).collect()
    }
}

/// Parse one expression from `src` as file `main.hcl`.
pub fn parse(src: &str) -> Expr {
    let mut sm = SourceMap::new();
    let f = sm.add("main.hcl", src);
    Parser::new(src, f)
        .parse()
        .unwrap_or_else(|e| panic!("test parser: {e} in {src:?}"))
}

/// A compiled expression with its program.
pub struct Compiled {
    pub program: fn_hcl::bytecode::code::Code,
    pub chunk: ChunkId,
}

/// Compile `src` (file `main.hcl`) against the slot names `names`.
pub fn compile(src: &str, names: &[&'static str]) -> Compiled {
    let mut sm = SourceMap::new();
    let f = sm.add("main.hcl", src);
    let e = Parser::new(src, f)
        .parse()
        .unwrap_or_else(|e| panic!("test parser: {e} in {src:?}"));
    let mut b = CodeBuilder::new(Arc::new(sm));
    let chunk = b.compile_expr(&e, &Names(names.to_vec()));
    Compiled {
        program: b.finish(),
        chunk,
    }
}

/// Evaluate `src` with the given slot bindings.
pub fn eval_with(
    src: &str,
    vars: &[(&'static str, Value)],
    limits: Limits,
) -> (Result<Value, VmError>, Vec<Diagnostic>) {
    let names: Vec<&'static str> = vars.iter().map(|(n, _)| *n).collect();
    let c = compile(src, &names);
    let frame: Vec<Value> = vars.iter().map(|(_, v)| v.clone()).collect();
    let mut vm = Vm::new(&c.program, limits);
    let mut diags = Vec::new();
    let r = vm.eval(c.chunk, &frame, &mut diags);
    (r, diags)
}

/// Evaluate `src` with default limits; panics on a budget error.
pub fn eval(src: &str, vars: &[(&'static str, Value)]) -> (Value, Vec<Diagnostic>) {
    let (r, d) = eval_with(src, vars, Limits::default());
    (r.unwrap_or_else(|e| panic!("budget: {e}")), d)
}

/// The plain texts (`main.hcl:1,2-3: Summary; Detail`) of diagnostics.
pub fn texts(d: &[Diagnostic]) -> Vec<String> {
    let mut sm = SourceMap::new();
    sm.add("main.hcl", "");
    d.iter().map(|d| d.plain(&sm)).collect()
}

/// A compact rendering of a value with its kind (`tuple[1, "a"]`, `object{a = 1}`).
pub fn show(v: &Value) -> String {
    match v {
        Value::Null(t) => format!("null({t})"),
        Value::Unknown(t) => format!("unknown({t})"),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_cty_string(),
        Value::String(s) => format!("{s:?}"),
        Value::List(s) => format!("list{}", seq(&s.items)),
        Value::Set(s) => format!("set{}", seq(&s.items)),
        Value::Tuple(s) => format!("tuple{}", seq(&s.items)),
        Value::Map(f) => format!("map{}", fields(&f.entries)),
        Value::Object(f) => format!("object{}", fields(&f.entries)),
    }
}

fn seq(items: &[Value]) -> String {
    format!(
        "[{}]",
        items.iter().map(show).collect::<Vec<_>>().join(", ")
    )
}

fn fields(entries: &[(Arc<str>, Value)]) -> String {
    format!(
        "{{{}}}",
        entries
            .iter()
            .map(|(k, v)| format!("{k} = {}", show(v)))
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// Evaluate and render: value, then each diagnostic's plain text.
pub fn run(src: &str, vars: &[(&'static str, Value)]) -> String {
    let (v, d) = eval(src, vars);
    let mut out = show(&v);
    for t in texts(&d) {
        out.push('\n');
        out.push_str(&t);
    }
    out
}

/// Build an object value from pairs.
pub fn obj(pairs: Vec<(&str, Value)>) -> Value {
    Value::object(pairs.into_iter().map(|(k, v)| (Arc::from(k), v)).collect())
}

pub fn s(x: &str) -> Value {
    Value::string(x)
}

pub fn n(x: i64) -> Value {
    Value::int(x)
}
