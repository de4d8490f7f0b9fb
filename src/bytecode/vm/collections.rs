//! Tuple and object constructors.

use super::{DYN, Flow, Step, Stop, Vm, err_diag, has_errors_since};
use crate::bytecode::code::{ItemSite, SiteId};
use crate::syntax::diag::Diagnostic;
use crate::value::convert::convert;
use crate::value::{Summary, Type, Value};

impl Vm<'_> {
    /// [`crate::bytecode::code::Op::MakeTuple`]
    pub(super) fn op_make_tuple(&mut self, n: u32) -> Step {
        let items = self.pop_n(n as usize)?;
        self.alloc(u64::from(n), 0)?;
        let sum = Self::check_contents(self.charge_shared(Summary::default(), items.iter())?)?;
        self.push_with(|| Value::tuple_counted(items, sum))
    }

    /// [`crate::bytecode::code::Op::KeyDone`]
    pub(super) fn op_key_done(&mut self, diags: &[Diagnostic]) -> Step {
        let mark = self.pop_mark()?;
        let top = self.top_mut()?;
        if has_errors_since(diags, mark) {
            *top = DYN;
        }
        Ok(Flow::Next)
    }

    /// [`crate::bytecode::code::Op::ObjItem`]: the key (below the value) becomes a string,
    /// or unknown with a diagnostic.
    pub(super) fn op_obj_item(
        &mut self,
        site: SiteId<ItemSite>,
        diags: &mut Vec<Diagnostic>,
    ) -> Step {
        let at = self.top_n(2)?;
        let s = self.site(site)?;
        let key = std::mem::replace(&mut self.stack[at], DYN);
        self.stack[at] = if key.is_unknown() {
            DYN
        } else if key.is_null() {
            diags.push(
                err_diag(
                    "Null value as key",
                    "Can't use a null value as a key.",
                    s.value,
                )
                .with_expression(s.key),
            );
            DYN
        } else {
            match convert(&key, &Type::String) {
                Ok(v) => v,
                Err(e) => {
                    diags.push(
                        err_diag(
                            "Incorrect key type",
                            format!("Can't use this value as a key: {e}."),
                            s.key,
                        )
                        .with_expression(s.key),
                    );
                    DYN
                }
            }
        };
        Ok(Flow::Next)
    }

    /// [`crate::bytecode::code::Op::MakeObject`]: an unknown key makes the whole object
    /// unknown.
    pub(super) fn op_make_object(&mut self, n: u32) -> Step {
        // Taken from the stack in place (`pop_n` would allocate a vector of the 2n
        // operands only to take them apart).
        let at = self.top_n(2 * n as usize)?;
        let mut known = true;
        let mut entries = Vec::with_capacity(n as usize);
        let mut keys = Summary::default();
        let mut it = self.stack.drain(at..);
        while let (Some(k), Some(v)) = (it.next(), it.next()) {
            match k {
                Value::String(s) => {
                    keys.add_key(&s);
                    entries.push((s, v));
                }
                _ => known = false,
            }
        }
        drop(it);
        self.alloc(u64::from(n), 0)?;
        let values = entries.iter().map(|(_, v)| v);
        let sum = Self::check_contents(self.charge_shared(keys, values)?)?;
        self.push_with(|| {
            if known {
                Value::object_counted(entries, sum)
            } else {
                DYN
            }
        })
    }

    /// [`crate::bytecode::code::Op::MakeObjectConst`]: the values are taken in key order.
    pub(super) fn op_make_object_const(&mut self, i: u32) -> Step {
        let prog = self.program;
        let shape = prog.shapes.get(i as usize);
        let shape = shape.ok_or(Stop::Fault(&"missing object shape"))?;
        let base = self.top_n(shape.values as usize)?;
        let mut entries = Vec::with_capacity(shape.keys.len());
        for (k, at) in &shape.keys {
            let v = self.stack.get_mut(base + *at as usize);
            let v = v.ok_or(Stop::Fault(&"object shape names a value it does not have"))?;
            entries.push((k.clone(), std::mem::replace(v, DYN)));
        }
        self.stack.truncate(base);
        self.alloc(u64::from(shape.values), 0)?;
        let values = entries.iter().map(|(_, v)| v);
        let sum = Self::check_contents(self.charge_shared(shape.keys_sum, values)?)?;
        self.push_with(|| Value::object_sorted_counted(entries, sum))
    }
}
