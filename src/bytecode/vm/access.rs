//! Attributes and indexing: hcl's traversal steps and `coll[key]`.

use super::{DYN, Flow, Step, Stop, Vm, err_diag};
use crate::bytecode::code::{SiteId, StepSite};
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
        let name = name.ok_or(Stop::Fault("missing attribute name"))?;
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

    /// [`crate::bytecode::code::Op::IndexConst`]
    pub(super) fn op_index_const(
        &mut self,
        key: u32,
        site: SiteId<StepSite>,
        diags: &mut Vec<Diagnostic>,
    ) -> Step {
        let v = self.pop()?;
        let k = self.program.consts.get(key as usize);
        let k = k.ok_or(Stop::Fault("missing constant"))?;
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
