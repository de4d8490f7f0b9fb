//! Loads: constants, frame slots, the chunk's temporaries, prebuilt failures and marks.

use super::{DYN, Flow, LimitKind, Step, Stop, Vm};
use crate::syntax::diag::Diagnostic;
use crate::value::Value;

impl Vm<'_> {
    /// [`crate::bytecode::code::Op::Const`]
    pub(super) fn op_const(&mut self, i: u32) -> Step {
        // Cloned straight onto the stack: through an `Option` and a `Result` the value
        // was moved piece by piece on the way (a stall reading it back).
        let Some(v) = self.program.consts.get(i as usize) else {
            return Err(Stop::Fault(&"missing constant"));
        };
        self.push(v.clone_for_push())
    }

    /// [`crate::bytecode::code::Op::Slot`]
    pub(super) fn op_slot(&mut self, i: u32, frame: &[Value]) -> Step {
        let Some(v) = frame.get(i as usize) else {
            return Err(Stop::Fault(&"frame slot out of range"));
        };
        self.push(v.clone_for_push())
    }

    /// [`crate::bytecode::code::Op::Temp`]
    pub(super) fn op_temp(&mut self, i: u32) -> Step {
        let Some(v) = self.temps.get(self.temp_base + i as usize) else {
            return Err(Stop::Fault(&"temporary out of range"));
        };
        self.push(v.clone_for_push())
    }

    /// [`crate::bytecode::code::Op::Fail`]
    pub(super) fn op_fail(&mut self, i: u32, diags: &mut Vec<Diagnostic>) -> Step {
        let d = self.program.diags.get(i as usize);
        diags.push(
            d.cloned()
                .ok_or(Stop::Fault(&"missing prebuilt diagnostic"))?,
        );
        self.push(DYN)
    }

    /// [`crate::bytecode::code::Op::Mark`]
    pub(super) fn op_mark(&mut self, diags: &[Diagnostic]) -> Step {
        self.marks.push(diags.len());
        Ok(Flow::Next)
    }

    /// The `Mark` a load carries: the dispatch counted (and checked the budgets for) the
    /// mark; this pushes it and counts the load as its own instruction, with the same
    /// check, so that a budget stops at exactly the instruction it did unfused. A budget
    /// that runs out is returned.
    #[inline(always)]
    pub(super) fn carried_mark(&mut self, diags: &[Diagnostic]) -> Option<LimitKind> {
        self.marks.push(diags.len());
        self.steps += 1;
        if self.steps >= self.next_check {
            return self.budget_check();
        }
        None
    }

    /// A temporary of the running chunk, to bind a `for` or splat variable.
    pub(super) fn temp_mut(&mut self, i: u32) -> Result<&mut Value, Stop> {
        let at = self.temp_base + i as usize;
        self.temps
            .get_mut(at)
            .ok_or(Stop::Fault(&"temporary out of range"))
    }
}
