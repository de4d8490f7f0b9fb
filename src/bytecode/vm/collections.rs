//! Tuple and object constructors.

use super::{DYN, Flow, Held, Step, Stop, Vm, err_diag, has_errors_since, held_elsewhere};
use crate::bytecode::code::{ItemSite, SiteId};
use crate::syntax::diag::Diagnostic;
use crate::value::convert::convert;
use crate::value::{Fields, Seq, Str, Summary, Type, Value, sort_dedup_slice};
use smallvec::SmallVec;

impl Vm<'_> {
    /// [`crate::bytecode::code::Op::MakeTuple`]
    pub(super) fn op_make_tuple(&mut self, n: u32) -> Step {
        let at = self.top_n(n as usize)?;
        self.alloc(u64::from(n), 0)?;
        // The items are charged where they lie (the stack set aside while the charge
        // looks at them), then moved straight into the tuple: one allocation.
        let stack = std::mem::take(&mut self.stack);
        let sum = self.charge_shared(Summary::default(), stack[at..].iter());
        self.stack = stack;
        let sum = Self::check_contents(sum?)?;
        let items = self.stack.drain(at..);
        let v = Value::Tuple(Seq::counted_iter(Type::Dynamic, items, sum));
        self.push(v)
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
        // Taken from the stack in place (not a vector of the 2n operands, only to take
        // them apart).
        let at = self.top_n(2 * n as usize)?;
        let mut known = true;
        // On the stack for a few entries (`{ (self.name) = ... }`), moved into the object
        // from there: one allocation, the object's.
        let mut entries: SmallVec<[(Str, Value); 4]> = SmallVec::with_capacity(n as usize);
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
        if !known {
            return self.push(DYN);
        }
        let n = entries.len();
        let kept = sort_dedup_slice(&mut entries);
        let v = if kept == n {
            Value::Object(Fields::counted_iter(
                Type::Dynamic,
                entries.into_iter(),
                sum,
            ))
        } else {
            // A duplicate key's entry was dropped: counted again.
            entries.truncate(kept);
            Value::object_sorted(entries.into_vec())
        };
        self.push(v)
    }

    /// [`crate::bytecode::code::Op::MakeObjectConst`]: the values are taken in key order.
    pub(super) fn op_make_object_const(&mut self, i: u32) -> Step {
        let prog = self.program;
        let shape = prog.shapes.get(i as usize);
        let shape = shape.ok_or(Stop::Fault(&"missing object shape"))?;
        let base = self.top_n(shape.values as usize)?;
        self.alloc(u64::from(shape.values), 0)?;
        // Each kept value (the last of duplicate keys) is moved straight into the object
        // (one allocation), summed up and looked at on the way (one pass: charged first,
        // they were read twice): what it shares is charged once the object is made, and
        // an object over a budget or nested too deeply is dropped at once, refused. A
        // shape's value indices are below its `values` (`ObjShape::new`).
        let (mut shared_bytes, mut shared_collection) = (0u64, false);
        let stack = &mut self.stack;
        let entries = shape.keys.iter().map(|(k, at)| {
            let v = stack.get_mut(base + *at as usize).map(std::mem::take);
            (k.clone(), v.unwrap_or_default())
        });
        let f = Fields::gathered(
            Type::Dynamic,
            entries,
            shape.keys_sum,
            |v| match held_elsewhere(v) {
                Held::Own => {}
                Held::Bytes(n) => shared_bytes = shared_bytes.saturating_add(n),
                Held::Collection => shared_collection = true,
            },
        );
        // What `charge_shared` charges, in the same totals, while the stack's copies of
        // what the object shares are still there (a duplicate key's value).
        self.bytes = self.bytes.saturating_add(shared_bytes);
        if shared_collection {
            for (_, v) in f
                .entries
                .iter()
                .filter(|(_, v)| matches!(held_elsewhere(v), Held::Collection))
            {
                self.charge_expanded(v, 0)?;
            }
        }
        self.alloc(0, 0)?;
        if shape.keys.len() == shape.values as usize {
            // Every value was moved out, leaving nulls that own nothing: forgotten, not
            // dropped one by one (a tenth of the instruction's work).
            debug_assert!(
                self.stack[base..]
                    .iter()
                    .all(|v| matches!(v, Value::Null(Type::Dynamic)))
            );
            // SAFETY: shrinking the length only forgets the elements past it; they stay
            // initialized memory the vector no longer reads, and forgetting a value is
            // sound (at worst a leak; these own nothing).
            unsafe { self.stack.set_len(base) }
        } else {
            // A duplicate key's earlier value is still there.
            Value::truncate(&mut self.stack, base);
        }
        let v = Value::Object(f);
        Self::check_depth(&v)?;
        self.push(v)
    }
}
