//! Operators: unary, arithmetic, comparison, equality, and `&&`/`||` with hcl's
//! short-circuit rules.

use super::{Flow, Step, Vm, err_diag, has_errors_since};
use crate::bytecode::code::{OperatorSite, SiteId, UnarySite};
use crate::syntax::ast::{BinaryOp, UnaryOp};
use crate::syntax::diag::Diagnostic;
use crate::syntax::span::Span;
use crate::value::convert::convert;
use crate::value::{Type, Value, ops};

impl Vm<'_> {
    /// [`crate::bytecode::code::Op::Unary`]
    pub(super) fn op_unary(
        &mut self,
        op: UnaryOp,
        site: SiteId<UnarySite>,
        diags: &mut Vec<Diagnostic>,
    ) -> Step {
        let v = self.pop()?;
        let mark = self.pop_mark()?;
        let s = self.site(site)?;
        let r = unary(op, v, s, mark, diags);
        self.push(r)
    }

    /// [`crate::bytecode::code::Op::Binary`]
    pub(super) fn op_binary(
        &mut self,
        op: BinaryOp,
        site: SiteId<OperatorSite>,
        diags: &mut Vec<Diagnostic>,
    ) -> Step {
        let mark = self.pop_mark()?;
        // Operands that did not fail, already of the operator's type: no conversion or
        // diagnostic can arise but the operation's own (which the general path makes).
        // They are read where they are and the result takes the left one's slot (moved
        // out and the result pushed, each was copied twice, and the result read back
        // wider than it had been written).
        let n = self.stack.len();
        if diags.len() <= mark
            && n >= self.base + 2
            && let [.., l, r] = &self.stack[..]
            && let Some(v) = primitive_binary(op, l, r)
        {
            Value::truncate(&mut self.stack, n - 1);
            if let Some(slot) = self.stack.last_mut() {
                std::mem::replace(slot, v).discard();
            }
            return Ok(Flow::Next);
        }
        let r = self.pop()?;
        let l = self.pop()?;
        let s = self.site(site)?;
        let v = binary(op, l, r, &s, mark, diags);
        self.push(v)
    }

    /// [`crate::bytecode::code::Op::LogicRhs`]
    pub(super) fn op_logic_rhs(&mut self, op: BinaryOp, diags: &[Diagnostic]) -> Step {
        let controlling = match convert(self.top()?, &Type::Bool) {
            Ok(Value::Bool(b)) => (op == BinaryOp::Or) == b,
            _ => false,
        };
        self.begin_region(controlling, diags.len());
        Ok(Flow::Next)
    }

    /// [`crate::bytecode::code::Op::Logic`]
    pub(super) fn op_logic(
        &mut self,
        op: BinaryOp,
        site: SiteId<OperatorSite>,
        diags: &mut Vec<Diagnostic>,
    ) -> Step {
        let r = self.pop()?;
        let l = self.pop()?;
        let region = self.end_region(diags)?;
        let mark = self.pop_mark()?;
        let s = self.site(site)?;
        let v = logic(op, l, r, &s, mark, region, diags);
        self.push(v)
    }
}

fn unary(op: UnaryOp, v: Value, s: UnarySite, mark: usize, diags: &mut Vec<Diagnostic>) -> Value {
    let ty = match op {
        UnaryOp::Neg => Type::Number,
        UnaryOp::Not => Type::Bool,
    };
    let v = match convert(&v, &ty) {
        Ok(v) => v,
        Err(e) => {
            diags.push(
                err_diag(
                    "Invalid operand",
                    format!("Unsuitable value for unary operand: {e}."),
                    s.operand,
                )
                .with_context(s.whole)
                .with_expression(s.operand),
            );
            return Value::Unknown(ty);
        }
    };
    if has_errors_since(diags, mark) {
        return Value::Unknown(ty);
    }
    if v.is_null() {
        diags.push(op_failed("argument must not be null", s.whole));
        return Value::Unknown(ty);
    }
    match (op, v) {
        (UnaryOp::Neg, Value::Number(n)) => Value::Number(n.neg()),
        (UnaryOp::Not, Value::Bool(b)) => Value::Bool(!b),
        _ => Value::Unknown(ty),
    }
}

fn binary(
    op: BinaryOp,
    l: Value,
    r: Value,
    s: &OperatorSite,
    mark: usize,
    diags: &mut Vec<Diagnostic>,
) -> Value {
    let (param, result) = match op {
        BinaryOp::Eq | BinaryOp::Ne => (Type::Dynamic, Type::Bool),
        BinaryOp::Gt | BinaryOp::Ge | BinaryOp::Lt | BinaryOp::Le => (Type::Number, Type::Bool),
        BinaryOp::And | BinaryOp::Or => (Type::Bool, Type::Bool),
        _ => (Type::Number, Type::Number),
    };
    let Some((l, r)) = convert_operands(&l, &r, &param, s, mark, diags) else {
        return Value::Unknown(result);
    };
    if has_errors_since(diags, mark) {
        return Value::Unknown(result);
    }
    if matches!(op, BinaryOp::Eq | BinaryOp::Ne) {
        return equality(op, &l, &r);
    }
    if l.is_null() || r.is_null() {
        diags.push(op_failed("argument must not be null", s.whole));
        return Value::Unknown(result);
    }
    let (Value::Number(a), Value::Number(b)) = (&l, &r) else {
        return Value::Unknown(result);
    };
    let res = match op {
        BinaryOp::Add => a.add(b),
        BinaryOp::Sub => a.sub(b),
        BinaryOp::Mul => a.mul(b),
        BinaryOp::Div => a.div(b),
        BinaryOp::Mod => a.rem(b),
        BinaryOp::Gt => return Value::Bool(a > b),
        BinaryOp::Ge => return Value::Bool(a >= b),
        BinaryOp::Lt => return Value::Bool(a < b),
        BinaryOp::Le => return Value::Bool(a <= b),
        _ => return Value::Unknown(result),
    };
    match res {
        Ok(n) => Value::Number(n),
        Err(e) => {
            diags.push(op_failed(&e.to_string(), s.whole));
            Value::Unknown(result)
        }
    }
}

/// [`binary`] of two known, non-null operands the operator takes as they are (numbers for
/// arithmetic and comparison; strings, numbers or bools for equality), when it succeeds:
/// `None` sends everything else (conversions, nulls, unknowns, an arithmetic error and its
/// diagnostic) down the general path.
#[inline]
fn primitive_binary(op: BinaryOp, l: &Value, r: &Value) -> Option<Value> {
    match (l, r) {
        (Value::Number(a), Value::Number(b)) => {
            let n = match op {
                BinaryOp::Add => a.add(b),
                BinaryOp::Sub => a.sub(b),
                BinaryOp::Mul => a.mul(b),
                BinaryOp::Div => a.div(b),
                BinaryOp::Mod => a.rem(b),
                BinaryOp::Gt => return Some(Value::Bool(a > b)),
                BinaryOp::Ge => return Some(Value::Bool(a >= b)),
                BinaryOp::Lt => return Some(Value::Bool(a < b)),
                BinaryOp::Le => return Some(Value::Bool(a <= b)),
                BinaryOp::Eq => return Some(Value::Bool(a == b)),
                BinaryOp::Ne => return Some(Value::Bool(a != b)),
                _ => return None,
            };
            n.ok().map(Value::Number)
        }
        // Known, non-null and of one primitive type: `ops::equals` comes down to
        // comparing the two (its checks for unknowns, nulls and types cost ~100
        // instructions a comparison, more than the comparison).
        (Value::String(a), Value::String(b)) => match op {
            BinaryOp::Eq => Some(Value::Bool(a == b)),
            BinaryOp::Ne => Some(Value::Bool(a != b)),
            _ => None,
        },
        (Value::Bool(a), Value::Bool(b)) => match op {
            BinaryOp::Eq => Some(Value::Bool(a == b)),
            BinaryOp::Ne => Some(Value::Bool(a != b)),
            _ => None,
        },
        _ => None,
    }
}

/// `==` or `!=` of two values, as [`binary`] answers it once the operands are converted.
fn equality(op: BinaryOp, l: &Value, r: &Value) -> Value {
    match (op, ops::equals(l, r)) {
        (BinaryOp::Ne, Value::Bool(b)) => Value::Bool(!b),
        (_, v) => v,
    }
}

/// Convert both operands to the operator's parameter type; conversion errors go before
/// the operands' own diagnostics, as in hcl.
fn convert_operands(
    l: &Value,
    r: &Value,
    param: &Type,
    s: &OperatorSite,
    mark: usize,
    diags: &mut Vec<Diagnostic>,
) -> Option<(Value, Value)> {
    let mut conv = Vec::new();
    let mut operand = |v: &Value, which: &str, range: Span| {
        convert(v, param)
            .map_err(|e| {
                conv.push(
                    err_diag(
                        "Invalid operand",
                        format!("Unsuitable value for {which} operand: {e}."),
                        range,
                    )
                    .with_context(s.whole)
                    .with_expression(range),
                )
            })
            .ok()
    };
    let lv = operand(l, "left", s.lhs);
    let rv = operand(r, "right", s.rhs);
    if !conv.is_empty() {
        let at = mark.min(diags.len());
        diags.splice(at..at, conv);
        return None;
    }
    Some((lv?, rv?))
}

/// `&&`/`||`: `rhs_mark` is where the right operand's diagnostics start (what the region
/// of its type-only evaluation recorded).
fn logic(
    op: BinaryOp,
    l: Value,
    r: Value,
    s: &OperatorSite,
    mark: usize,
    rhs_mark: usize,
    diags: &mut Vec<Diagnostic>,
) -> Value {
    let Some((l, r)) = convert_operands(&l, &r, &Type::Bool, s, mark, diags) else {
        return Value::Unknown(Type::Bool);
    };
    let rhs_mark = rhs_mark.clamp(mark.min(diags.len()), diags.len());
    let keep_lhs = |diags: &mut Vec<Diagnostic>| diags.truncate(rhs_mark);
    let keep_rhs = |diags: &mut Vec<Diagnostic>| {
        diags.drain(mark.min(rhs_mark)..rhs_mark);
    };
    let decisive = op == BinaryOp::Or; // `true` decides `||`, `false` decides `&&`
    let (lk, rk) = (!l.is_unknown(), !r.is_unknown());
    if !lk && !rk {
        if !has_errors_since(&diags[..rhs_mark], mark) {
            keep_lhs(diags);
            return Value::Unknown(Type::Bool);
        }
    } else if lk && l.as_bool() == Some(decisive) {
        keep_lhs(diags);
        return Value::Bool(decisive);
    } else if rk && r.as_bool() == Some(decisive) {
        keep_rhs(diags);
        return Value::Bool(decisive);
    } else if !lk && r.as_bool() == Some(!decisive) {
        keep_lhs(diags);
        return Value::Unknown(Type::Bool);
    } else if !rk && l.as_bool() == Some(!decisive) {
        keep_rhs(diags);
        return Value::Unknown(Type::Bool);
    }
    if has_errors_since(diags, mark) {
        return Value::Unknown(Type::Bool);
    }
    if l.is_null() || r.is_null() {
        diags.push(op_failed("argument must not be null", s.whole));
        return Value::Unknown(Type::Bool);
    }
    match (l, r) {
        (Value::Bool(a), Value::Bool(b)) => Value::Bool(if decisive { a || b } else { a && b }),
        _ => Value::Unknown(Type::Bool),
    }
}

pub(super) fn op_failed(msg: &str, whole: Span) -> Diagnostic {
    err_diag(
        "Operation failed",
        format!("Error during operation: {msg}."),
        whole,
    )
    .with_expression(whole)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fast path answers every operator on known primitives as the general path does
    /// (or leaves it to the general path: `None`).
    #[test]
    fn primitive_operands_take_the_general_paths_answer() {
        use crate::value::number::Number;
        let num = |s: &str| Value::Number(Number::parse(s).expect("number"));
        let vals = [
            num("0"),
            num("-0"),
            num("1"),
            num("1.0"),
            num("3"),
            num("0.1"),
            num("1e400"),
            num("-7.25"),
            Value::string(""),
            Value::string("a"),
            Value::string("bronze"),
            Value::string("a-string-longer-than-fifteen"),
            Value::string("a-string-longer-than-fifteen"),
            Value::string("e\u{301}"),
            Value::string("\u{e9}"),
            Value::Bool(true),
            Value::Bool(false),
        ];
        let site = OperatorSite {
            lhs: Span::default(),
            rhs: Span::default(),
            whole: Span::default(),
        };
        let mut fast = 0;
        for op in BinaryOp::ALL {
            for l in &vals {
                for r in &vals {
                    let Some(got) = primitive_binary(op, l, r) else {
                        continue;
                    };
                    fast += 1;
                    let mut diags = Vec::new();
                    let want = binary(op, l.clone(), r.clone(), &site, 0, &mut diags);
                    assert!(diags.is_empty(), "{op:?} {l:?} {r:?}: {diags:?}");
                    assert!(
                        got.raw_equals(&want),
                        "{op:?} {l:?} {r:?}: {got:?} {want:?}"
                    );
                }
            }
        }
        assert!(fast > 300, "the fast path answered only {fast} cases");
    }
}
