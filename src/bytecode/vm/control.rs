//! Control flow with unknowns: conditionals (the taken branch for real, the other one in
//! type-only mode, both types unified as hcl does) and `try`/`can` (which keep or drop the
//! diagnostics of each argument).

use super::{DYN, Flow, Step, Stop, Vm, err_diag, has_errors_since};
use crate::bytecode::code::{CondSite, SiteId};
use crate::syntax::diag::Diagnostic;
use crate::text::quote::go_quote;
use crate::value::convert::{convert, unify_unsafe};
use crate::value::{Type, Value};

/// Which branch a conditional takes, decided by [`crate::bytecode::code::Op::CondSelect`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum CondState {
    True,
    False,
    Unknown,
    Null,
    BadType,
}

/// A stretch of code whose diagnostics are dropped when it runs in type-only mode (the
/// untaken branch of a conditional, the deciding right operand of `&&`/`||`).
pub(super) struct Region {
    mark: usize,
    type_only: bool,
}

/// The arguments of a `try`/`can` tried so far.
pub(super) struct TryState {
    /// Where this `try`'s failed arguments' diagnostics start among the evaluation's: a
    /// failed argument's stay where they were reported, for `try`'s message should every
    /// argument fail; the `try`'s end takes them away (the next argument's are after
    /// them, so its own mark sees only its own).
    failed_from: usize,
    depends_on_unknown: bool,
}

impl Vm<'_> {
    pub(super) fn begin_region(&mut self, type_only: bool, mark: usize) {
        if type_only {
            self.type_only += 1;
        }
        self.regions.push(Region { mark, type_only });
    }

    /// Close the innermost region, dropping its diagnostics if it ran type-only; returns
    /// where its diagnostics started.
    pub(super) fn end_region(&mut self, diags: &mut Vec<Diagnostic>) -> Result<usize, Stop> {
        let r = self.regions.pop();
        let r = r.ok_or(Stop::Fault(&"region stack underflow"))?;
        if r.type_only {
            diags.truncate(r.mark);
            self.type_only = self.type_only.saturating_sub(1);
        }
        Ok(r.mark)
    }

    /// [`crate::bytecode::code::Op::CondSelect`]
    pub(super) fn op_cond_select(&mut self) -> Step {
        let c = self.pop()?;
        let st = if c.is_null() {
            CondState::Null
        } else if c.is_unknown() {
            CondState::Unknown
        } else {
            match convert(&c, &Type::Bool) {
                Ok(Value::Bool(true)) => CondState::True,
                Ok(Value::Bool(false)) => CondState::False,
                Ok(_) => CondState::Unknown,
                Err(_) => CondState::BadType,
            }
        };
        self.conds.push(st);
        Ok(Flow::Next)
    }

    /// [`crate::bytecode::code::Op::BranchBegin`]
    pub(super) fn op_branch_begin(&mut self, which: u8, diags: &[Diagnostic]) -> Step {
        let st = self.conds.last().copied();
        let st = st.ok_or(Stop::Fault(&"a branch outside a conditional"))?;
        let taken = matches!((st, which), (CondState::True, 0) | (CondState::False, 1));
        self.begin_region(!taken, diags.len());
        Ok(Flow::Next)
    }

    /// [`crate::bytecode::code::Op::BranchEnd`]
    pub(super) fn op_branch_end(&mut self, diags: &mut Vec<Diagnostic>) -> Step {
        self.end_region(diags)?;
        Ok(Flow::Next)
    }

    /// [`crate::bytecode::code::Op::CondMerge`]
    pub(super) fn op_cond_merge(
        &mut self,
        site: SiteId<CondSite>,
        diags: &mut Vec<Diagnostic>,
    ) -> Step {
        let f = self.pop()?;
        let t = self.pop()?;
        let st = self.conds.pop();
        let st = st.ok_or(Stop::Fault(&"condition stack underflow"))?;
        let mark = self.pop_mark()?;
        let v = self.cond_merge(t, f, st, site, mark, diags)?;
        self.push(v)
    }

    fn cond_merge(
        &mut self,
        t: Value,
        f: Value,
        st: CondState,
        site: SiteId<CondSite>,
        mark: usize,
        diags: &mut Vec<Diagnostic>,
    ) -> Result<Value, Stop> {
        // Both branches of one type (the common case): that type is the result's, and the
        // taken branch needs no conversion.
        if matches!(st, CondState::True | CondState::False) && t.same_type(&f) {
            return Ok(if st == CondState::True { t } else { f });
        }
        let s = self.site(site)?;
        let is_dyn_null = |v: &Value| matches!(v, Value::Null(Type::Dynamic));
        let (tt, ft) = (t.type_of(), f.type_of());
        let result_type = if is_dyn_null(&t) {
            ft.clone()
        } else if is_dyn_null(&f) {
            tt.clone()
        } else if tt == Type::Dynamic || ft == Type::Dynamic {
            Type::Dynamic
        } else {
            match unify_unsafe(&[tt.clone(), ft.clone()]) {
                Some(u) => u,
                None => {
                    diags.truncate(mark);
                    diags.push(
                        err_diag(
                            "Inconsistent conditional result types",
                            format!(
                                "The true and false result expressions must have consistent types. {}.",
                                describe_mismatch(&tt, &ft)
                            ),
                            s.then.to(s.otherwise),
                        )
                        .with_context(s.whole)
                        .with_expression(s.whole),
                    );
                    return Ok(DYN);
                }
            }
        };
        let cond_diag = |summary: &'static str, detail: &str| {
            err_diag(summary, detail.to_string(), s.cond)
                .with_context(s.whole)
                .with_expression(s.cond)
        };
        Ok(match st {
            CondState::Unknown => Value::Unknown(result_type),
            CondState::Null => {
                diags.push(cond_diag(
                    "Null condition",
                    "The condition value is null. Conditions must either be true or false.",
                ));
                Value::Unknown(result_type)
            }
            CondState::BadType => {
                diags.push(cond_diag(
                    "Incorrect condition type",
                    "The condition expression must be of type bool.",
                ));
                Value::Unknown(result_type)
            }
            CondState::True | CondState::False => {
                let (v, which, range) = if st == CondState::True {
                    (t, "true", s.then)
                } else {
                    (f, "false", s.otherwise)
                };
                if result_type == Type::Dynamic || v.type_of() == result_type {
                    return Ok(v);
                }
                match self.convert_metered(&v, &result_type)? {
                    Ok(v) => v,
                    Err(e) => {
                        diags.push(
                            err_diag(
                                "Inconsistent conditional result types",
                                format!("The {which} result value has the wrong type: {e}."),
                                range,
                            )
                            .with_context(s.whole)
                            .with_expression(range),
                        );
                        Value::Unknown(result_type)
                    }
                }
            }
        })
    }

    // ---- try / can ----

    /// [`crate::bytecode::code::Op::TryBegin`]
    pub(super) fn op_try_begin(&mut self, diags: &[Diagnostic]) -> Step {
        self.tries.push(TryState {
            failed_from: diags.len(),
            depends_on_unknown: false,
        });
        Ok(Flow::Next)
    }

    /// Leaves the innermost `try`, dropping what its failed arguments reported.
    fn end_try(&mut self, diags: &mut Vec<Diagnostic>) {
        if let Some(st) = self.tries.pop() {
            diags.truncate(st.failed_from);
        }
    }

    fn try_state(&mut self) -> Result<&mut TryState, Stop> {
        let t = self.tries.last_mut();
        t.ok_or(Stop::Fault(&"a try argument outside try"))
    }

    /// [`crate::bytecode::code::Op::Probe`]
    pub(super) fn op_probe(&mut self, diags: &mut Vec<Diagnostic>) -> Step {
        let v = self.pop()?;
        let mark = self.pop_mark()?;
        let t = self.try_state()?;
        if !has_errors_since(diags, mark) && v.contains_unknown() {
            t.depends_on_unknown = true;
        }
        diags.truncate(mark);
        Ok(Flow::Next)
    }

    /// [`crate::bytecode::code::Op::TryDepCheck`]
    pub(super) fn op_try_dep_check(
        &mut self,
        end: u32,
        can: bool,
        diags: &mut Vec<Diagnostic>,
    ) -> Step {
        if !self.try_state()?.depends_on_unknown {
            return Ok(Flow::Next);
        }
        self.end_try(diags);
        self.stack
            .push(if can { Value::Unknown(Type::Bool) } else { DYN });
        Ok(Flow::Jump(end))
    }

    /// The end of a `try` argument: its value, and the diagnostics since its mark. With
    /// errors, they stay for `try`'s message and the next argument runs (`None`);
    /// otherwise the `try` ends, and the value is its result.
    fn try_argument(&mut self, diags: &mut Vec<Diagnostic>) -> Result<Option<Value>, Stop> {
        let v = self.pop()?;
        let mark = self.pop_mark()?;
        if has_errors_since(diags, mark) {
            self.try_state()?;
            v.discard();
            return Ok(None);
        }
        diags.truncate(mark);
        self.end_try(diags);
        Ok(Some(v))
    }

    /// [`crate::bytecode::code::Op::TryArg`]
    pub(super) fn op_try_arg(&mut self, end: u32, can: bool, diags: &mut Vec<Diagnostic>) -> Step {
        let Some(v) = self.try_argument(diags)? else {
            return Ok(Flow::Next);
        };
        self.stack.push(if can { Value::Bool(true) } else { v });
        Ok(Flow::Jump(end))
    }

    /// [`crate::bytecode::code::Op::TryTraversal`]: what `Probe` and `TryDepCheck` then
    /// `TryArg` do when the argument is the traversal probed (its second evaluation would
    /// give the same value and diagnostics): a value that holds an unknown makes the
    /// result unknown.
    pub(super) fn op_try_traversal(
        &mut self,
        end: u32,
        can: bool,
        diags: &mut Vec<Diagnostic>,
    ) -> Step {
        let Some(v) = self.try_argument(diags)? else {
            return Ok(Flow::Next);
        };
        let r = match (v.contains_unknown(), can) {
            (true, true) => Value::Unknown(Type::Bool),
            (true, false) => DYN,
            (false, true) => Value::Bool(true),
            (false, false) => v,
        };
        self.stack.push(r);
        Ok(Flow::Jump(end))
    }

    /// [`crate::bytecode::code::Op::TryFail`]
    pub(super) fn op_try_fail(
        &mut self,
        call: u32,
        can: bool,
        diags: &mut Vec<Diagnostic>,
    ) -> Step {
        let st = self.tries.pop();
        let st = st.ok_or(Stop::Fault(&"try stack underflow"))?;
        let failed_from = st.failed_from.min(diags.len());
        if can {
            diags.truncate(failed_from);
            return self.push(Value::Bool(false));
        }
        let prog = self.program;
        let c = self.call_site(call)?;
        let msg = if c.arg_ranges.is_empty() {
            "at least one argument is required".to_string()
        } else {
            let mut m = String::from("no expression succeeded:\n");
            for d in &diags[failed_from..] {
                match d.subject {
                    Some(s) => m.push_str(&format!(
                        "- {} (at {})\n  {}\n",
                        d.summary,
                        prog.sources.range(s),
                        d.detail
                    )),
                    None => m.push_str(&format!("- {}\n  {}\n", d.summary, d.detail)),
                }
            }
            // hcl's tryfunc ends the list with a blank line.
            m.push_str("\nAt least one expression must produce a successful result");
            m
        };
        diags.truncate(failed_from);
        diags.push(
            err_diag(
                "Error in function call",
                format!("Call to function \"try\" failed: {msg}."),
                c.start,
            )
            .with_context(c.range)
            .with_expression(c.range),
        );
        self.push(DYN)
    }

    /// [`crate::bytecode::code::Op::MemoBegin`]
    pub(super) fn op_memo_begin(&mut self, memo: u32, end: u32, diags: &[Diagnostic]) -> Step {
        if let Some(Some(v)) = self.memos.get(memo as usize) {
            let v = v.clone_for_push();
            self.push(v)?;
            return Ok(Flow::Jump(end));
        }
        self.marks.push(diags.len());
        Ok(Flow::Next)
    }

    /// [`crate::bytecode::code::Op::MemoEnd`]
    pub(super) fn op_memo_end(&mut self, memo: u32, diags: &[Diagnostic]) -> Step {
        let mark = self.pop_mark()?;
        // Only a value made without a diagnostic is the same for every member; otherwise
        // each member computes it (and reports) again. Nor one made for its type only
        // (an untaken branch, where `invoke` gives an unknown): a member that takes the
        // branch needs the value.
        if diags.len() != mark || self.type_only > 0 {
            return Ok(Flow::Next);
        }
        let i = memo as usize;
        if i >= self.program.memos as usize {
            return Err(Stop::Fault(&"memo out of range"));
        }
        let v = self.stack.last().ok_or(Stop::Fault(&"stack underflow"))?;
        let v = v.clone();
        if self.memos.len() <= i {
            self.memos.resize(i + 1, None);
        }
        if let Some(slot) = self.memos.get_mut(i) {
            *slot = Some(v);
        }
        Ok(Flow::Next)
    }
}

/// hcl's `describeConditionalTypeMismatch`.
fn describe_mismatch(t: &Type, f: &Type) -> String {
    match (t, f) {
        (Type::Object(ta), Type::Object(fa)) => {
            for (name, tty) in ta.iter() {
                match fa.iter().find(|(n, _)| n == name) {
                    None => {
                        return format!(
                            "The 'true' value includes object attribute {}, which is absent in the 'false' value",
                            go_quote(name)
                        );
                    }
                    Some((_, fty)) if fty != tty => {
                        return format!(
                            "Type mismatch for object attribute {}: {}",
                            go_quote(name),
                            describe_mismatch(tty, fty)
                        );
                    }
                    _ => {}
                }
            }
            for (name, _) in fa.iter() {
                if !ta.iter().any(|(n, _)| n == name) {
                    return format!(
                        "The 'false' value includes object attribute {}, which is absent in the 'true' value",
                        go_quote(name)
                    );
                }
            }
        }
        (Type::Tuple(te), Type::Tuple(fe)) => {
            if te.len() != fe.len() {
                return format!(
                    "The 'true' tuple has length {}, but the 'false' tuple has length {}",
                    te.len(),
                    fe.len()
                );
            }
            for (i, (a, b)) in te.iter().zip(fe.iter()).enumerate() {
                if a != b {
                    return format!(
                        "Type mismatch for tuple element {i}: {}",
                        describe_mismatch(a, b)
                    );
                }
            }
        }
        (Type::List(a), Type::List(b))
        | (Type::Set(a), Type::Set(b))
        | (Type::Map(a), Type::Map(b))
            if matches!(
                (&**a, &**b),
                (Type::Object(_), Type::Object(_)) | (Type::Tuple(_), Type::Tuple(_))
            ) =>
        {
            let noun = match t {
                Type::List(_) => "list",
                Type::Set(_) => "set",
                _ => "map",
            };
            return format!(
                "Mismatched {noun} element types: {}",
                describe_mismatch(a, b)
            );
        }
        _ => {}
    }
    let (tn, fname) = (t.friendly_name(), f.friendly_name());
    if tn == fname {
        return "At least one deeply-nested attribute or element is not compatible across both the 'true' and the 'false' value".into();
    }
    format!("The 'true' value is {tn}, but the 'false' value is {fname}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::Str;

    fn obj_type(fields: &[(&str, Type)]) -> Type {
        Type::object(fields.iter().map(|(k, t)| (Str::from(*k), t.clone())))
    }

    #[test]
    fn conditional_mismatch_descriptions() {
        let a = obj_type(&[("x", Type::Number)]);
        let b = obj_type(&[("y", Type::Number)]);
        assert_eq!(
            describe_mismatch(&a, &b),
            "The 'true' value includes object attribute \"x\", which is absent in the 'false' value"
        );
        let t1 = Type::tuple(vec![Type::Number]);
        let t2 = Type::tuple(vec![Type::Number, Type::Bool]);
        assert_eq!(
            describe_mismatch(&t1, &t2),
            "The 'true' tuple has length 1, but the 'false' tuple has length 2"
        );
        assert_eq!(
            describe_mismatch(&Type::list(a.clone()), &Type::list(b)),
            "Mismatched list element types: The 'true' value includes object attribute \"x\", which is absent in the 'false' value"
        );
        assert_eq!(
            describe_mismatch(&t1, &a),
            "The 'true' value is tuple, but the 'false' value is object"
        );
    }
}
