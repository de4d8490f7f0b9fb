//! Static types: the cty type of each IR expression as far as the compiler can know it
//! without a request. Literals, templates, operators, constructors, `for` expressions,
//! conditionals, built-in calls and locals have types known at compile time; anything read
//! from the request (`req`, `self`, `each`, function arguments) is [`SType::Dynamic`].
//!
//! The types serve the lowerer's own checks (a user function's arguments must be an
//! object), the language server's hover, and `analyze`, which warns where a type error is
//! certain, e.g. `upper([1])` or `"a" * 2`. The compiler does not read them. Evaluation
//! never depends on them: such an expression still fails at run time exactly as in Go
//! (its block becomes incomplete and is deferred), so a program that runs there runs here.

use crate::syntax::ast::{
    BinaryOp, Expr, ExprKind, ForExpr, Ident, ObjectItem, ObjectKey, Template, TemplatePart,
    UnaryOp,
};
use crate::syntax::diag::Diagnostic;
use crate::syntax::span::Span;
use crate::value::{Str, Type};
use std::fmt;
use std::sync::Arc;

/// A statically known type. `Dynamic` (anywhere, also inside a collection) means "not
/// known at compile time"; `AnyTuple`/`AnyObject` are a tuple/object of unknown shape
/// (the result of a `for` expression or of an object with computed keys).
/// Tuples and objects share their parts (`Arc`): a local's type is cloned at every
/// reference to it, which must not copy an object of 100,000 attributes each time.
/// An object's attributes are sorted by name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SType {
    Dynamic,
    Bool,
    Number,
    String,
    List(Box<SType>),
    Set(Box<SType>),
    Map(Box<SType>),
    Tuple(Arc<[SType]>),
    Object(Arc<[(Str, SType)]>),
    AnyTuple,
    AnyObject,
}

impl SType {
    /// The cty type, with every unknown part as `DynamicPseudoType`.
    pub fn to_cty(&self) -> Type {
        match self {
            SType::Dynamic | SType::AnyTuple | SType::AnyObject => Type::Dynamic,
            SType::Bool => Type::Bool,
            SType::Number => Type::Number,
            SType::String => Type::String,
            SType::List(e) => Type::list(e.to_cty()),
            SType::Set(e) => Type::set(e.to_cty()),
            SType::Map(e) => Type::map(e.to_cty()),
            SType::Tuple(es) => Type::tuple(es.iter().map(SType::to_cty)),
            SType::Object(fs) => Type::object(fs.iter().map(|(k, t)| (k.clone(), t.to_cty()))),
        }
    }

    /// The static type of a cty type (a parameter's declared type, say).
    pub fn from_cty(t: &Type) -> SType {
        match t {
            Type::Dynamic => SType::Dynamic,
            Type::Bool => SType::Bool,
            Type::Number => SType::Number,
            Type::String => SType::String,
            Type::List(e) => SType::List(Box::new(SType::from_cty(e))),
            Type::Set(e) => SType::Set(Box::new(SType::from_cty(e))),
            Type::Map(e) => SType::Map(Box::new(SType::from_cty(e))),
            Type::Tuple(es) => SType::Tuple(es.iter().map(SType::from_cty).collect()),
            Type::Object(fs) => SType::Object(
                fs.iter()
                    .map(|(k, t)| (k.clone(), SType::from_cty(t)))
                    .collect(),
            ),
        }
    }

    /// True when every part of the type is known (no `Dynamic`, no shapeless tuple/object).
    pub fn is_exact(&self) -> bool {
        match self {
            SType::Dynamic | SType::AnyTuple | SType::AnyObject => false,
            SType::Bool | SType::Number | SType::String => true,
            SType::List(e) | SType::Set(e) | SType::Map(e) => e.is_exact(),
            SType::Tuple(es) => es.iter().all(SType::is_exact),
            SType::Object(fs) => fs.iter().all(|(_, t)| t.is_exact()),
        }
    }

    /// How deeply the type nests (0 for a primitive or an unknown shape), each tuple or
    /// object type shared by several parts walked once: a chain of locals of ten copies
    /// of the last describes a type far larger than it occupies.
    pub fn depth(&self) -> u32 {
        fn walk(t: &SType, seen: &mut ahash::AHashMap<usize, u32>) -> u32 {
            let (at, parts): (usize, &mut dyn Iterator<Item = &SType>) = match t {
                SType::List(e) | SType::Set(e) | SType::Map(e) => {
                    return walk(e, seen).saturating_add(1);
                }
                SType::Tuple(ts) => (ts.as_ptr() as usize, &mut ts.iter()),
                SType::Object(fs) => (fs.as_ptr() as usize, &mut fs.iter().map(|(_, t)| t)),
                _ => return 0,
            };
            if let Some(d) = seen.get(&at) {
                return *d;
            }
            let d = parts
                .map(|p| walk(p, seen))
                .max()
                .unwrap_or(0)
                .saturating_add(1);
            seen.insert(at, d);
            d
        }
        match self {
            SType::Dynamic | SType::Bool | SType::Number | SType::String => 0,
            _ => walk(self, &mut ahash::AHashMap::new()),
        }
    }

    /// Anything is known about the type (not `Dynamic`).
    pub fn is_known(&self) -> bool {
        *self != SType::Dynamic
    }

    fn is_primitive(&self) -> bool {
        matches!(self, SType::Bool | SType::Number | SType::String)
    }

    /// A value of this type is certainly not an object or map (what a resource or
    /// composite `body` must be).
    pub fn certainly_not_object(&self) -> bool {
        matches!(
            self,
            SType::Bool
                | SType::Number
                | SType::String
                | SType::List(_)
                | SType::Set(_)
                | SType::Tuple(_)
                | SType::AnyTuple
        )
    }

    /// A value of this type is certainly not a string (what a name, a key or a ready
    /// value must be).
    pub fn certainly_not_string(&self) -> bool {
        self.is_known() && *self != SType::String
    }

    /// A value of this type is certainly not a collection or structural value (what
    /// `for_each` must be).
    pub fn certainly_not_collection(&self) -> bool {
        self.is_primitive()
    }

    /// The type of every element of a collection as it is (a `for` variable, `element`):
    /// a structural value's elements keep their own types, so only a shared one counts.
    fn element(&self) -> SType {
        match self {
            SType::List(e) | SType::Set(e) | SType::Map(e) => (**e).clone(),
            SType::Tuple(es) => same(es.iter()),
            SType::Object(fs) => same(fs.iter().map(|(_, t)| t)),
            _ => SType::Dynamic,
        }
    }

    /// The element type after conversion to a collection (`tolist`, `toset`, `tomap`):
    /// structural elements are unified.
    fn converted_element(&self) -> SType {
        match self {
            SType::Tuple(es) => unify(es).unwrap_or(SType::Dynamic),
            SType::Object(fs) => {
                let ts: Vec<SType> = fs.iter().map(|(_, t)| t.clone()).collect();
                unify(&ts).unwrap_or(SType::Dynamic)
            }
            other => other.element(),
        }
    }
}

/// The type of attribute `name` of an object type (its attributes are sorted).
fn field<'t>(fs: &'t [(Str, SType)], name: &str) -> Option<&'t SType> {
    fs.binary_search_by(|(k, _)| (**k).cmp(name))
        .ok()
        .map(|i| &fs[i].1)
}

/// The one type all of `ts` have, else `Dynamic` (also for none).
fn same<'t>(mut ts: impl Iterator<Item = &'t SType>) -> SType {
    let Some(first) = ts.next() else {
        return SType::Dynamic;
    };
    if ts.all(|t| t == first) {
        first.clone()
    } else {
        SType::Dynamic
    }
}

impl fmt::Display for SType {
    /// cty's friendly names, with the attributes of objects spelled out, up to
    /// [`MAX_TYPE_TEXT`] bytes (then `...`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = Capped(String::new());
        // An error is the cap reached: the walk stopped there.
        if fmt::write(&mut out, format_args!("{}", Text(self))).is_err() {
            out.0.push_str("...");
        }
        f.write_str(&out.0)
    }
}

/// Longest text of a static type (hover, `analyze`, the IR dump): the type of a chain of
/// locals of ten copies of the one before describes 10^9 parts (shared), and printed whole
/// took minutes and gigabytes.
const MAX_TYPE_TEXT: usize = 2_000;

/// A string that refuses (`fmt::Error`) what would take it past [`MAX_TYPE_TEXT`].
struct Capped(String);

impl fmt::Write for Capped {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        if self.0.len() + s.len() > MAX_TYPE_TEXT {
            return Err(fmt::Error);
        }
        self.0.push_str(s);
        Ok(())
    }
}

/// A type's whole text, written part by part (stopped by the writer's error).
struct Text<'t>(&'t SType);

impl fmt::Display for Text<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            SType::Dynamic => f.write_str("dynamic"),
            SType::Bool => f.write_str("bool"),
            SType::Number => f.write_str("number"),
            SType::String => f.write_str("string"),
            SType::List(e) => write!(f, "list of {}", Text(e)),
            SType::Set(e) => write!(f, "set of {}", Text(e)),
            SType::Map(e) => write!(f, "map of {}", Text(e)),
            SType::AnyTuple => f.write_str("tuple"),
            SType::AnyObject => f.write_str("object"),
            SType::Tuple(es) => {
                f.write_str("tuple [")?;
                for (i, e) in es.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{}", Text(e))?;
                }
                f.write_str("]")
            }
            SType::Object(fs) => {
                f.write_str("object {")?;
                for (i, (k, t)) in fs.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, " {k}: {}", Text(t))?;
                }
                f.write_str(if fs.is_empty() { "}" } else { " }" })
            }
        }
    }
}

/// How many distinct types [`unify`] unifies at compile time.
const MAX_UNIFIED_TYPES: usize = 64;

/// The unification of static types (for `?:`, `try`, tuple elements): exact types go
/// through cty's `UnifyUnsafe`; anything unknown gives `Dynamic`. `None` only when the
/// types are exact and cty cannot unify them (a certain error in a conditional).
pub fn unify(ts: &[SType]) -> Option<SType> {
    let Some(first) = ts.first() else {
        return Some(SType::Dynamic);
    };
    if ts.iter().all(|t| t == first) {
        return Some(first.clone());
    }
    if !ts.iter().all(SType::is_exact) {
        return Some(SType::Dynamic);
    }
    // Unifying compares each distinct type with every other: a literal of thousands of
    // different objects is left to the run, where that work looks at the clock (a
    // compile has none), as a type not known here.
    let mut distinct: Vec<&SType> = Vec::new();
    for t in ts {
        if !distinct.contains(&t) {
            if distinct.len() == MAX_UNIFIED_TYPES {
                return Some(SType::Dynamic);
            }
            distinct.push(t);
        }
    }
    let cty: Vec<Type> = ts.iter().map(SType::to_cty).collect();
    crate::value::convert::unify_unsafe(&cty).map(|t| SType::from_cty(&t))
}

/// True when no non-null value of static type `from` converts to `to` (cty's
/// `convert.Convert`, safe and unsafe conversions). Unknown parts are never a mismatch.
pub fn cannot_convert(from: &SType, to: &Type) -> bool {
    match (from, to) {
        (SType::Dynamic, _) | (_, Type::Dynamic) => false,
        (_, Type::String | Type::Number | Type::Bool) if !from.is_primitive() => true,
        (SType::Bool, Type::Number) | (SType::Number, Type::Bool) => true,
        (_, Type::String | Type::Number | Type::Bool) => false,
        (_, Type::List(_) | Type::Set(_) | Type::Map(_) | Type::Tuple(_) | Type::Object(_))
            if from.is_primitive() =>
        {
            true
        }
        (SType::List(e) | SType::Set(e), Type::List(w) | Type::Set(w)) => cannot_convert(e, w),
        (SType::Tuple(es), Type::List(w) | Type::Set(w)) => es.iter().any(|e| cannot_convert(e, w)),
        (SType::Map(e), Type::Map(w)) => cannot_convert(e, w),
        (SType::Object(fs), Type::Map(w)) => fs.iter().any(|(_, t)| cannot_convert(t, w)),
        _ => false,
    }
}

/// What a variable name refers to while inferring: its static type, if it exists.
pub trait TypeEnv {
    fn var_type(&self, name: &str) -> Option<SType>;
    /// The result type of user function `name` (its body's type, inferred with unknown
    /// args), when known.
    fn function_type(&self, _name: &str) -> Option<SType> {
        None
    }
}

/// Infer the static type of an expression; certain type errors are pushed to `warnings`
/// (as warnings: evaluation keeps Go's behaviour).
pub fn infer(e: &Expr, env: &dyn TypeEnv, warnings: &mut Vec<Diagnostic>) -> SType {
    let mut inf = Inferer {
        env,
        warnings,
        bound: Vec::new(),
        quiet: 0,
        depth: 0,
    };
    let t = inf.expr(e);
    if t.depth() > MAX_TYPE_DEPTH {
        return SType::Dynamic;
    }
    t
}

/// Deepest static type kept for an expression (a local's, an attribute's, a function's
/// body): each local of a chain may wrap the last one's type in a few hundred levels, so
/// the types would nest without bound (20,000 levels overflowed a 2 MiB stack when the
/// program was dropped). A deeper type is `Dynamic`, as any type not inferred; no program
/// that is not built to be deep nests a fraction of this.
const MAX_TYPE_DEPTH: u32 = 128;

/// Deepest expression nesting inferred; deeper parts are `Dynamic` (the parser already
/// bounds expression depth, this keeps the walk's stack use small and fixed).
const MAX_DEPTH: u32 = 256;

struct Inferer<'a> {
    env: &'a dyn TypeEnv,
    warnings: &'a mut Vec<Diagnostic>,
    /// Names bound by enclosing `for` expressions and template `for` directives.
    bound: Vec<(Str, SType)>,
    /// Inside `try`/`can`: failures are caught, nothing is certain.
    quiet: u32,
    depth: u32,
}

/// A literal string (a template without interpolations).
fn literal_string(e: &Expr) -> Option<String> {
    crate::syntax::visit::static_string(e).map(|s| s.to_string())
}

/// Strings cty's string-to-number conversion certainly rejects (`big.ParseFloat` also
/// accepts infinities, which are left alone).
fn not_a_number(s: &str) -> bool {
    let t = s.trim_start_matches(['+', '-']).to_ascii_lowercase();
    crate::value::number::Number::parse(s).is_none() && t != "inf" && t != "infinity"
}

impl Inferer<'_> {
    fn warn(&mut self, summary: &'static str, detail: String, range: Span) {
        if self.quiet == 0 {
            self.warnings
                .push(Diagnostic::warning(summary, detail, range));
        }
    }

    /// True when a value of expression `e` (static type `t`) certainly fails to convert
    /// to `want`: by type, or because it is a literal string that does not parse.
    fn mismatch(e: &Expr, t: &SType, want: &Type) -> bool {
        if cannot_convert(t, want) {
            return true;
        }
        match (literal_string(e), want) {
            (Some(s), Type::Number) => not_a_number(&s),
            (Some(s), Type::Bool) => !matches!(s.as_str(), "true" | "false" | "1" | "0"),
            _ => false,
        }
    }

    fn operand(&mut self, e: &Expr, want: &Type, which: &str) {
        let t = self.expr(e);
        if Self::mismatch(e, &t, want) {
            let article = if *want == Type::Number {
                "a number"
            } else {
                "a bool"
            };
            self.warn(
                "Invalid operand",
                format!("Unsuitable value for {which} operand: {article} is required."),
                e.span,
            );
        }
    }

    fn expr(&mut self, e: &Expr) -> SType {
        if self.depth >= MAX_DEPTH {
            return SType::Dynamic;
        }
        self.depth += 1;
        let t = self.expr_inner(e);
        self.depth -= 1;
        t
    }

    /// One expression's type, by kind; each kind with its own certain errors.
    fn expr_inner(&mut self, e: &Expr) -> SType {
        match &e.kind {
            ExprKind::Null | ExprKind::SplatItem => SType::Dynamic,
            ExprKind::Bool(_) => SType::Bool,
            ExprKind::Number(_) => SType::Number,
            ExprKind::Template(t) => {
                self.template(t);
                SType::String
            }
            ExprKind::TemplateWrap(x) | ExprKind::Paren(x) => self.expr(x),
            ExprKind::Variable(id) => self.variable(&id.name),
            ExprKind::GetAttr { obj, name } => self.get_attr(obj, name),
            ExprKind::Index { obj, key, .. } => self.index(obj, key),
            ExprKind::Splat { source, each, .. } => {
                self.expr(source);
                self.expr(each);
                SType::Dynamic
            }
            ExprKind::Call {
                name,
                args,
                expand_final,
                ..
            } => self.call(name, args, *expand_final, e.span),
            ExprKind::Tuple(items) => SType::Tuple(items.iter().map(|x| self.expr(x)).collect()),
            ExprKind::Object(items) => self.object(items),
            ExprKind::Unary { op, operand } => match op {
                UnaryOp::Neg => {
                    self.operand(operand, &Type::Number, "unary");
                    SType::Number
                }
                UnaryOp::Not => {
                    self.operand(operand, &Type::Bool, "unary");
                    SType::Bool
                }
            },
            ExprKind::Binary { op, lhs, rhs } => self.binary(*op, lhs, rhs),
            ExprKind::Conditional {
                cond,
                then,
                otherwise,
            } => self.conditional(cond, then, otherwise),
            ExprKind::For(f) => self.for_expr(f),
        }
    }

    /// A `for` or template variable bound here, else the environment's variable.
    fn variable(&self, name: &str) -> SType {
        if let Some((_, t)) = self.bound.iter().rev().find(|(n, _)| **n == *name) {
            return t.clone();
        }
        self.env.var_type(name).unwrap_or(SType::Dynamic)
    }

    /// `obj.name`: an object's attribute (a missing one is certain), a map's element.
    fn get_attr(&mut self, obj: &Expr, name: &Ident) -> SType {
        let t = self.expr(obj);
        match &t {
            SType::Object(fs) => match field(fs, &name.name) {
                Some(a) => a.clone(),
                None => {
                    let names: Vec<&str> = fs
                        .iter()
                        .take(crate::text::suggest::MAX_CANDIDATES + 1)
                        .map(|(k, _)| &**k)
                        .collect();
                    let hint = crate::text::suggest::suggest(&name.name, names.iter().copied())
                        .map(|s| format!(" Did you mean {s:?}?"))
                        .unwrap_or_default();
                    self.warn(
                        "Unsupported attribute",
                        format!(
                            "This object does not have an attribute named {:?}.{hint}",
                            &*name.name
                        ),
                        name.span,
                    );
                    SType::Dynamic
                }
            },
            SType::Map(el) => (**el).clone(),
            SType::Bool | SType::Number | SType::String => {
                self.warn(
                    "Unsupported attribute",
                    format!("Can't access attributes on a primitive-typed value ({t})."),
                    name.span,
                );
                SType::Dynamic
            }
            SType::List(_) | SType::Set(_) | SType::Tuple(_) | SType::AnyTuple => {
                self.warn(
                    "Unsupported attribute",
                    "This value does not have any attributes.".to_string(),
                    name.span,
                );
                SType::Dynamic
            }
            _ => SType::Dynamic,
        }
    }

    /// `obj[key]`: an element's type where the key is a literal (or any key of a list or
    /// map).
    fn index(&mut self, obj: &Expr, key: &Expr) -> SType {
        let t = self.expr(obj);
        self.expr(key);
        match (&t, &key.kind) {
            (SType::List(el) | SType::Map(el), _) => (**el).clone(),
            (SType::Tuple(es), ExprKind::Number(n)) => n
                .parse::<usize>()
                .ok()
                .and_then(|i| es.get(i).cloned())
                .unwrap_or(SType::Dynamic),
            (SType::Object(fs), _) => match literal_string(key) {
                Some(k) => field(fs, &k).cloned().unwrap_or(SType::Dynamic),
                None => SType::Dynamic,
            },
            _ => SType::Dynamic,
        }
    }

    /// An object constructor: its shape when every key is a literal (the last of
    /// duplicates wins, as in hcl), else an object of unknown shape.
    fn object(&mut self, items: &[ObjectItem]) -> SType {
        let mut fields: Vec<(Str, SType)> = Vec::new();
        // Where each key sits in `fields`: a later duplicate replaces the earlier one in
        // place (a scan of `fields` per key made N attributes cost N²).
        let mut at: std::collections::HashMap<Str, usize, ahash::RandomState> = Default::default();
        let mut shaped = true;
        for it in items {
            let key: Option<Str> = match &it.key {
                ObjectKey::Ident(id) => Some(id.name.clone()),
                ObjectKey::Expr(k) => {
                    let kt = self.expr(k);
                    if !kt.is_primitive() && kt != SType::Dynamic {
                        self.warn(
                            "Incorrect key type",
                            format!("Can't use this value as a key: string required (got {kt})."),
                            k.span,
                        );
                    }
                    object_key_literal(k).map(Str::from)
                }
            };
            let vt = self.expr(&it.value);
            match key {
                Some(k) => match at.get(&k) {
                    Some(&i) => fields[i].1 = vt,
                    None => {
                        at.insert(k.clone(), fields.len());
                        fields.push((k, vt));
                    }
                },
                None => shaped = false,
            }
        }
        if shaped {
            fields.sort_by(|a, b| a.0.cmp(&b.0));
            SType::Object(fields.into())
        } else {
            SType::AnyObject
        }
    }

    /// A binary operator: its operands' required types, its result's type.
    fn binary(&mut self, op: BinaryOp, lhs: &Expr, rhs: &Expr) -> SType {
        let want = match op {
            BinaryOp::Eq | BinaryOp::Ne => {
                self.expr(lhs);
                self.expr(rhs);
                return SType::Bool;
            }
            BinaryOp::And | BinaryOp::Or => Type::Bool,
            _ => Type::Number,
        };
        self.operand(lhs, &want, "left");
        // `x != null && x.a`: the right operand may never be needed.
        let guarded = u32::from(matches!(op, BinaryOp::And | BinaryOp::Or));
        self.quiet += guarded;
        self.operand(rhs, &want, "right");
        self.quiet -= guarded;
        match op {
            BinaryOp::Mul | BinaryOp::Div | BinaryOp::Mod | BinaryOp::Add | BinaryOp::Sub => {
                SType::Number
            }
            _ => SType::Bool,
        }
    }

    /// `cond ? then : otherwise`: both branches' types unified, as hcl does.
    fn conditional(&mut self, cond: &Expr, then: &Expr, otherwise: &Expr) -> SType {
        let ct = self.expr(cond);
        if Self::mismatch(cond, &ct, &Type::Bool) {
            self.warn(
                "Incorrect condition type",
                format!("The condition expression must be of type bool, not {ct}."),
                cond.span,
            );
        }
        // hcl ignores failures in the branch not taken: neither branch's
        // errors are certain.
        self.quiet += 1;
        let a = self.expr(then);
        let b = self.expr(otherwise);
        self.quiet -= 1;
        match unify(&[a.clone(), b.clone()]) {
            Some(t) => t,
            None => {
                self.warn(
                    "Inconsistent conditional result types",
                    format!(
                        "The true and false result expressions must have consistent types: {a} and {b}."
                    ),
                    then.span.to(otherwise.span),
                );
                SType::Dynamic
            }
        }
    }

    /// A `for` expression: its variables bound to the collection's key and element types
    /// while its clauses are typed.
    fn for_expr(&mut self, f: &ForExpr) -> SType {
        let ct = self.expr(&f.collection);
        if ct.is_primitive() {
            self.warn(
                "Iteration over non-iterable value",
                format!(
                    "A value of type {ct} cannot be used as the collection in a 'for' expression."
                ),
                f.collection.span,
            );
        }
        let n = self.bound.len();
        let key_t = match &ct {
            SType::List(_) | SType::Tuple(_) | SType::AnyTuple => SType::Number,
            SType::Map(_) | SType::Object(_) | SType::AnyObject => SType::String,
            SType::Set(e) => (**e).clone(),
            _ => SType::Dynamic,
        };
        if let Some(k) = &f.key_var {
            self.bound.push((k.name.clone(), key_t));
        }
        self.bound.push((f.value_var.name.clone(), ct.element()));
        if let Some(k) = &f.key_expr {
            self.expr(k);
        }
        self.expr(&f.value_expr);
        if let Some(c) = &f.cond {
            let t = self.expr(c);
            if Self::mismatch(c, &t, &Type::Bool) {
                self.warn(
                    "Invalid 'for' condition",
                    format!("The 'if' clause value is invalid: bool required, not {t}."),
                    c.span,
                );
            }
        }
        self.bound.truncate(n);
        if f.key_expr.is_some() {
            SType::AnyObject
        } else {
            SType::AnyTuple
        }
    }

    fn template(&mut self, t: &Template) {
        for p in &t.parts {
            match p {
                TemplatePart::Literal { .. } => {}
                TemplatePart::Interp(x) => {
                    let it = self.expr(x);
                    if cannot_convert(&it, &Type::String) {
                        self.warn(
                            "Invalid template interpolation value",
                            format!(
                                "Cannot include the given value in a string template: string required, not {it}."
                            ),
                            x.span,
                        );
                    }
                }
                TemplatePart::If {
                    cond,
                    then,
                    otherwise,
                    ..
                } => {
                    self.expr(cond);
                    self.quiet += 1;
                    self.template(then);
                    if let Some(o) = otherwise {
                        self.template(o);
                    }
                    self.quiet -= 1;
                }
                TemplatePart::For {
                    key_var,
                    value_var,
                    collection,
                    body,
                    ..
                } => {
                    let ct = self.expr(collection);
                    let n = self.bound.len();
                    if let Some(k) = key_var {
                        self.bound.push((k.name.clone(), SType::Dynamic));
                    }
                    self.bound.push((value_var.name.clone(), ct.element()));
                    self.template(body);
                    self.bound.truncate(n);
                }
            }
        }
    }

    fn call(
        &mut self,
        name: &crate::syntax::ast::Ident,
        args: &[Expr],
        expand: bool,
        span: Span,
    ) -> SType {
        let fname = &*name.name;
        if fname == "try" || fname == "can" {
            self.quiet += 1;
            let ts: Vec<SType> = args.iter().map(|a| self.expr(a)).collect();
            self.quiet -= 1;
            if fname == "can" {
                return SType::Bool;
            }
            return match ts.first() {
                Some(f) if ts.iter().all(|t| t == f) => f.clone(),
                _ => SType::Dynamic,
            };
        }
        let ts: Vec<SType> = args.iter().map(|a| self.expr(a)).collect();
        if fname == "invoke" {
            return args
                .first()
                .and_then(literal_string)
                .and_then(|n| self.env.function_type(&n))
                .unwrap_or(SType::Dynamic);
        }
        let Some(def) =
            crate::builtins::lookup(fname).and_then(|id| crate::builtins::all().get(id.0 as usize))
        else {
            return SType::Dynamic;
        };
        if !expand {
            self.builtin_args(def, fname, args, &ts, span);
        }
        return_type(fname, &ts)
    }

    /// A builtin call's certain errors (without `...`): arity, and arguments whose type
    /// its parameter certainly rejects.
    fn builtin_args(
        &mut self,
        def: &crate::builtins::FuncDef,
        fname: &str,
        args: &[Expr],
        ts: &[SType],
        span: Span,
    ) {
        let min = def.params.len();
        let max = if def.var_param.is_some() {
            usize::MAX
        } else {
            min
        };
        if args.len() < min {
            self.warn(
                "Not enough function arguments",
                format!(
                    "Function {fname:?} expects {min} argument(s). Missing value for {:?}.",
                    def.params[args.len()].name
                ),
                span,
            );
        } else if args.len() > max {
            self.warn(
                "Too many function arguments",
                format!("Function {fname:?} expects only {min} argument(s)."),
                span,
            );
        }
        for (i, (a, t)) in args.iter().zip(ts).enumerate() {
            let Some(p) = def.params.get(i).or(def.var_param.as_ref()) else {
                break;
            };
            let want = p.ty.to_type();
            if Self::mismatch(a, t, &want) {
                self.warn(
                    "Invalid function argument",
                    format!(
                        "Invalid value for {:?} parameter: {} required, not {t}.",
                        p.name,
                        want.friendly_name()
                    ),
                    a.span,
                );
            }
        }
        if fname == "length"
            && let Some(t @ (SType::Bool | SType::Number)) = ts.first()
        {
            self.warn(
                "Invalid function argument",
                format!(
                    "Invalid value for \"value\" parameter: argument must be a string, a collection type, or a structural type, not {t}."
                ),
                args[0].span,
            );
        }
    }
}

/// A literal object key: an identifier-like variable is a key in hcl (`{ a = 1 }`), and
/// so are literal strings and numbers.
fn object_key_literal(k: &Expr) -> Option<String> {
    match &k.kind {
        ExprKind::Variable(id) => Some(id.name.to_string()),
        ExprKind::Number(n) => Some(n.to_string()),
        ExprKind::Bool(b) => Some(b.to_string()),
        ExprKind::Paren(x) => literal_string(x),
        _ => literal_string(k),
    }
}

/// The result type of a built-in function given its arguments' static types: the table
/// of common functions; anything else is `Dynamic`.
pub fn return_type(name: &str, args: &[SType]) -> SType {
    let first = args.first().cloned().unwrap_or(SType::Dynamic);
    match name {
        "upper" | "lower" | "title" | "trim" | "trimspace" | "trimprefix" | "trimsuffix"
        | "chomp" | "indent" | "format" | "formatdate" | "join" | "replace" | "substr"
        | "strrev" | "jsonencode" | "yamlencode" | "base64encode" | "base64decode"
        | "base64gzip" | "urlencode" | "md5" | "sha1" | "sha256" | "sha512" | "base64sha256"
        | "base64sha512" | "uuidv5" | "tostring" | "textencodebase64" | "textdecodebase64"
        | "cidrhost" | "cidrnetmask" | "cidrsubnet" | "timeadd" | "rsadecrypt" | "filebase64"
        | "bcrypt" => SType::String,
        "length" | "abs" | "ceil" | "floor" | "log" | "max" | "min" | "pow" | "signum"
        | "parseint" | "tonumber" | "index" | "sum" | "timecmp" => SType::Number,
        "contains" | "alltrue" | "anytrue" | "startswith" | "endswith" | "strcontains"
        | "tobool" | "can" => SType::Bool,
        "split" | "formatlist" | "cidrsubnets" | "sort" => SType::list(SType::String),
        "range" => SType::list(SType::Number),
        "keys" => match first {
            SType::Map(_) => SType::list(SType::String),
            SType::Object(fs) => SType::Tuple(fs.iter().map(|_| SType::String).collect()),
            _ => SType::Dynamic,
        },
        "tolist" => SType::list(first.converted_element()),
        "toset" => SType::Set(Box::new(first.converted_element())),
        "tomap" => SType::Map(Box::new(first.converted_element())),
        "compact" => SType::list(SType::String),
        "distinct" => match first {
            SType::List(e) | SType::Set(e) => SType::List(e),
            _ => SType::Dynamic,
        },
        "reverse" => match first {
            SType::List(e) => SType::List(e),
            _ => SType::Dynamic,
        },
        "element" => first.element(),
        "regexall" => SType::list(SType::Dynamic),
        _ => SType::Dynamic,
    }
}

impl SType {
    /// `list of t`.
    pub fn list(t: SType) -> SType {
        SType::List(Box::new(t))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct NoVars;
    impl TypeEnv for NoVars {
        fn var_type(&self, _: &str) -> Option<SType> {
            None
        }
    }

    fn ty(src: &str) -> (SType, Vec<String>) {
        let text = format!("x = {src}\n");
        let mut sm = crate::syntax::span::SourceMap::new();
        let f = sm.add("t.hcl", text.as_str());
        let file = crate::syntax::parser::parse_file(&sm, f).expect("parses");
        let Some(crate::syntax::ast::BodyItem::Attribute(a)) = file.body.items.first() else {
            panic!("no attribute");
        };
        let mut w = Vec::new();
        let t = infer(&a.expr, &NoVars, &mut w);
        (t, w.iter().map(|d| d.plain(&sm)).collect())
    }

    #[test]
    fn literals_and_operators() {
        assert_eq!(ty("1").0, SType::Number);
        assert_eq!(ty("\"a${1}\"").0, SType::String);
        assert_eq!(ty("1 + 2").0, SType::Number);
        assert_eq!(ty("1 < 2 && true").0, SType::Bool);
        assert_eq!(ty("!true").0, SType::Bool);
        assert_eq!(ty("null").0, SType::Dynamic);
        assert_eq!(ty("req.x").0, SType::Dynamic);
    }

    #[test]
    fn constructors_and_for() {
        assert_eq!(
            ty("{ b = 1, a = \"x\" }").0.to_string(),
            "object { a: string, b: number }"
        );
        assert_eq!(ty("[1, true]").0.to_string(), "tuple [number, bool]");
        assert_eq!(ty("[for x in [1] : x]").0, SType::AnyTuple);
        assert_eq!(ty("{for k, v in {} : k => v}").0, SType::AnyObject);
        assert_eq!(ty("{ (req.k) = 1 }").0, SType::AnyObject);
        // A repeated key: the last one's type, as the value the object gets.
        assert_eq!(
            ty("{ a = 1, b = true, a = \"x\" }").0.to_string(),
            "object { a: string, b: bool }"
        );
    }

    #[test]
    fn attribute_lookup_in_a_large_object() {
        // Attributes are found by binary search in the sorted fields (a scan per
        // reference made N references to an N-attribute local cost N²).
        let n = 2000;
        let obj: Vec<String> = (0..n).map(|i| format!("a{i} = {i}")).collect();
        let src = format!("{{ {} }}.a1234", obj.join(", "));
        assert_eq!(ty(&src).0, SType::Number);
        let (t, w) = ty(&format!("{{ {} }}.a20000", obj.join(", ")));
        assert_eq!(t, SType::Dynamic);
        assert_eq!(w.len(), 1, "{w:?}");
    }

    #[test]
    fn conditionals_unify() {
        assert_eq!(ty("true ? 1 : \"a\"").0, SType::String);
        assert_eq!(ty("true ? 1 : 2").0, SType::Number);
        assert_eq!(ty("true ? 1 : req.x").0, SType::Dynamic);
        let (t, w) = ty("true ? 1 : [1]");
        assert_eq!(t, SType::Dynamic);
        assert_eq!(
            w,
            [
                "t.hcl:1,12-19: Inconsistent conditional result types; The true and false result expressions must have consistent types: number and tuple [number]."
            ]
        );
    }

    #[test]
    fn calls_have_return_types() {
        assert_eq!(ty("upper(\"a\")").0, SType::String);
        assert_eq!(ty("length([1])").0, SType::Number);
        assert_eq!(ty("tolist([1, 2])").0.to_string(), "list of number");
        assert_eq!(ty("jsonencode(req)").0, SType::String);
        assert_eq!(ty("try(1, 2)").0, SType::Number);
        assert_eq!(ty("can(x)").0, SType::Bool);
        assert_eq!(ty("lookup({}, \"a\", 1)").0, SType::Dynamic);
    }

    #[test]
    fn certain_errors_warn() {
        assert_eq!(
            ty("upper([1])").1,
            [
                "t.hcl:1,11-14: Invalid function argument; Invalid value for \"str\" parameter: string required, not tuple [number]."
            ]
        );
        assert_eq!(
            ty("\"a\" * 2").1,
            [
                "t.hcl:1,5-8: Invalid operand; Unsuitable value for left operand: a number is required."
            ]
        );
        assert!(ty("\"1\" * 2").1.is_empty());
        assert!(ty("req.a * 2").1.is_empty());
        assert!(ty("try(upper([1]), \"x\")").1.is_empty());
        assert_eq!(ty("{ a = 1 }.b").1.len(), 1);
        assert_eq!(ty("length(1)").1.len(), 1);
        assert_eq!(ty("upper()").1.len(), 1);
    }

    #[test]
    fn guarded_and_branch_errors_are_not_certain() {
        assert!(ty("true ? { a = 1 }.b : 0").1.is_empty());
        assert!(ty("false && { a = 1 }.b").1.is_empty());
        assert!(ty("\"%{if false}${upper([1])}%{endif}\"").1.is_empty());
        assert!(ty("\"1\" && true").1.is_empty());
        assert_eq!(ty("\"yes\" && true").1.len(), 1);
    }

    #[test]
    fn structural_elements_keep_their_types() {
        assert_eq!(ty("element([1, \"a\"], 0)").0, SType::Dynamic);
        assert_eq!(ty("tolist([1, \"a\"])").0.to_string(), "list of string");
        assert!(ty("[for v in [true, \"x\"] : v ? 1 : 2]").1.is_empty());
        assert_eq!(
            ty("[for v in [[1]] : upper(v)]").1,
            [
                "t.hcl:1,29-30: Invalid function argument; Invalid value for \"str\" parameter: string required, not tuple [number]."
            ]
        );
    }

    #[test]
    fn number_literals_cty_accepts_are_not_flagged() {
        for s in ["1", "+5", "-1.5", ".5", "5.", "1E3", "1e-3", "Inf", "-inf"] {
            assert!(ty(&format!("\"{s}\" * 2")).1.is_empty(), "{s}");
        }
        for s in ["a", "", " 1", "1x", "0x10"] {
            assert_eq!(ty(&format!("\"{s}\" * 2")).1.len(), 1, "{s}");
        }
    }

    #[test]
    fn conversions() {
        assert!(cannot_convert(&SType::Tuple(Arc::from([])), &Type::String));
        assert!(cannot_convert(&SType::Bool, &Type::Number));
        assert!(!cannot_convert(&SType::String, &Type::Number));
        assert!(!cannot_convert(&SType::Dynamic, &Type::Number));
        assert!(cannot_convert(
            &SType::Tuple(Arc::from([SType::Tuple(Arc::from([]))])),
            &Type::list(Type::String)
        ));
        assert!(!cannot_convert(&SType::AnyObject, &Type::map(Type::String)));
    }
}
