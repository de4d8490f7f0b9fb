//! Attributes and indexing: hcl's traversal steps and `coll[key]`.

use super::{DYN, Flow, Step, Stop, Vm, err_diag};
use crate::bytecode::code::{PathStep, SiteId, StepSite};
use crate::syntax::diag::Diagnostic;
use crate::value::{Value, ops};

impl Vm<'_> {
    /// [`crate::bytecode::code::Op::Attr`]
    pub(super) fn op_attr(
        &mut self,
        name: u32,
        site: SiteId<StepSite>,
        diags: &mut Vec<Diagnostic>,
    ) -> Step {
        let prog = self.program;
        let name = prog.names.get(name as usize);
        let name = name.ok_or(Stop::Fault(&"missing attribute name"))?;
        // The object is replaced by its attribute where it lies on the stack.
        let r = match ops::get_attr(self.top()?, name) {
            Ok(r) => r,
            Err((summary, detail)) => {
                let s = self.site(site)?;
                diags.push(err_diag(summary, detail, s.step).with_expression(s.whole));
                DYN
            }
        };
        *self.top_mut()? = r;
        Ok(Flow::Next)
    }

    /// [`crate::bytecode::code::Op::SlotPath`]: what `Slot` then one `Attr` per step would
    /// do (the same values, diagnostics and instruction count), with the objects on the
    /// way read in place: only the value reached is cloned. At the first step that is not
    /// a present attribute of a known object or map (a missing one, null, unknown, a
    /// list), the rest is left to [`Self::op_attr`]'s general rules.
    pub(super) fn op_slot_path(
        &mut self,
        slot: u32,
        path: u32,
        frame: &[Value],
        diags: &mut Vec<Diagnostic>,
    ) -> Step {
        let prog = self.program;
        let steps = prog.paths.get(path as usize);
        let steps = steps.ok_or(Stop::Fault(&"missing attribute path"))?;
        let v = frame.get(slot as usize);
        let v = v.ok_or(Stop::Fault(&"frame slot out of range"))?;
        self.steps = self.steps.saturating_add(steps.len() as u64);
        let (v, taken) = present_attrs(v, steps);
        self.push(v.clone_for_push())?;
        for s in steps.iter().skip(taken) {
            // A failed step leaves `DynamicVal`, which every later step gives back as it
            // is, with no diagnostic ([`ops::get_attr`]): they are not taken one by one.
            if let Some(Value::Unknown(crate::value::Type::Dynamic)) = self.stack.last() {
                break;
            }
            self.op_attr(s.name, s.site, diags)?;
        }
        Ok(Flow::Next)
    }

    /// [`crate::bytecode::code::Op::IndexConst`]
    pub(super) fn op_index_const(
        &mut self,
        key: u32,
        site: SiteId<StepSite>,
        diags: &mut Vec<Diagnostic>,
    ) -> Step {
        let v = self.pop()?;
        let k = self.program.consts.get(key as usize);
        let k = k.ok_or(Stop::Fault(&"missing constant"))?;
        let r = self.index(&v, k, site, diags)?;
        self.push(r)
    }

    /// [`crate::bytecode::code::Op::Index`]
    pub(super) fn op_index(&mut self, site: SiteId<StepSite>, diags: &mut Vec<Diagnostic>) -> Step {
        let k = self.pop()?;
        let v = self.pop()?;
        let r = self.index(&v, &k, site, diags)?;
        self.push(r)
    }

    fn index(
        &self,
        v: &Value,
        k: &Value,
        site: SiteId<StepSite>,
        diags: &mut Vec<Diagnostic>,
    ) -> Result<Value, Stop> {
        Ok(match ops::index(v, k) {
            Ok(r) => r,
            Err((summary, detail)) => {
                let s = self.site(site)?;
                diags.push(err_diag(summary, detail, s.step).with_expression(s.whole));
                DYN
            }
        })
    }
}

/// Follows `steps` from `v` while each is a present attribute of a known object or map, by
/// reference: the value reached and how many steps were taken (the rest, if any, is for
/// `Attr`'s general rules).
#[inline(always)]
pub(super) fn present_attrs<'v>(mut v: &'v Value, steps: &[PathStep]) -> (&'v Value, usize) {
    for (taken, step) in steps.iter().enumerate() {
        v = match v {
            Value::Object(f) | Value::Map(f) => match f.get_key_hinted(&step.key, &step.hint) {
                Some(x) => x,
                None => return (v, taken),
            },
            _ => return (v, taken),
        };
    }
    (v, steps.len())
}
