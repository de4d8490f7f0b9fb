//! User functions: `invoke("name", { args })` runs a `function` block's locals and body in
//! a frame of its own, with function-hcl's checks of the argument object and its depth
//! limit.

use super::calls::{call_failed, invalid_argument};
use super::{DYN, Step, Stop, Vm, has_errors_since};
use crate::bytecode::code::{ArgBinding, UserFn};
use crate::syntax::diag::{Diagnostic, has_errors, plain_all};
use crate::text::quote::go_quote;
use crate::value::Value;
use crate::value::gofmt::go_syntax;

/// Every this many nested user function calls, the VM checks that the native stack has at
/// least [`STACK_RED_ZONE`] left (a check costs a thread-local read; calls at the top level
/// never pay it).
const STACK_CHECK_EVERY: u32 = 8;
/// One nested call's VM frames take about 7 KiB in a debug build (100 nested calls:
/// 0.7 MiB), so 1 MiB holds the next [`STACK_CHECK_EVERY`] levels with ample room for what
/// their bodies do (a builtin walking a deeply nested value); tests in tests/vm_userfn.rs
/// run 99 nested calls on stacks smaller than this and just larger.
const STACK_RED_ZONE: usize = 1 << 20;
/// When less is left, the call continues on a new stack segment of this size (on the same
/// thread: `stacker` maps it, switches to it and unmaps it after the call), so that 100
/// nested calls never overflow the caller's stack, however small it is.
const STACK_SEGMENT_BYTES: usize = 16 << 20;

/// What running a user function gave: its value, or the message `invoke` fails with.
type Invoked = Result<Result<Value, String>, Stop>;

/// The arguments of an `invoke`.
enum Args<'p> {
    /// The argument object, as any expression made it.
    Object(Value),
    /// A literal object's values, on the stack from this index, bound as the binding says
    /// ([`crate::bytecode::code::Op::InvokeBound`]).
    Bound(&'p ArgBinding, usize),
}

impl<'p> Vm<'p> {
    /// [`crate::bytecode::code::Op::Invoke`]
    pub(super) fn op_invoke(&mut self, call: u32, func: u32, diags: &mut Vec<Diagnostic>) -> Step {
        let args = self.pop()?;
        let name = self.pop()?;
        let mark = self.pop_mark()?;
        let v = self.invoke(call, func, &name, Args::Object(args), mark, diags)?;
        self.push(v)
    }

    /// [`crate::bytecode::code::Op::InvokeBound`]
    pub(super) fn op_invoke_bound(
        &mut self,
        call: u32,
        func: u32,
        binding: u32,
        diags: &mut Vec<Diagnostic>,
    ) -> Step {
        let prog = self.program;
        let b = prog.bindings.get(binding as usize);
        let b = b.ok_or(Stop::Fault(&"missing argument binding"))?;
        let at = self.top_n(b.values as usize + 1)?;
        let name = std::mem::replace(&mut self.stack[at], DYN);
        let mark = self.pop_mark()?;
        let v = self.invoke(call, func, &name, Args::Bound(b, at + 1), mark, diags);
        Value::truncate(&mut self.stack, at);
        self.push(v?)
    }

    fn invoke(
        &mut self,
        call: u32,
        func: u32,
        name: &Value,
        args: Args<'p>,
        mark: usize,
        diags: &mut Vec<Diagnostic>,
    ) -> Result<Value, Stop> {
        let c = self.call_site(call)?;
        if has_errors_since(diags, mark) {
            return Ok(DYN);
        }
        if let Args::Object(args) = &args
            && args.is_null()
        {
            let subject = c.arg_starts.get(1).copied().unwrap_or(c.range);
            diags.push(
                invalid_argument("args", "argument must not be null", subject)
                    .with_context(c.range)
                    .with_expression(c.arg_ranges.get(1).copied().unwrap_or(c.range)),
            );
            return Ok(DYN);
        }
        // An unknown argument object gives an unknown result (cty's Call); unknowns inside
        // it are passed to the function, whose body decides (an unused one doesn't matter).
        if matches!(&args, Args::Object(a) if a.is_unknown()) || self.type_only > 0 {
            return Ok(DYN);
        }
        self.invocations += 1;
        if self.invocations > self.limits.max_invocations {
            return Err(Stop::Limit(super::LimitKind::Invocations));
        }
        self.depth += 1;
        let name = name.as_str().unwrap_or("");
        let r = if self.depth >= self.limits.max_depth {
            Ok(Err(format!(
                "user function calls: max depth {} exceeded",
                self.limits.max_depth
            )))
        } else if self.depth.is_multiple_of(STACK_CHECK_EVERY) {
            stacker::maybe_grow(STACK_RED_ZONE, STACK_SEGMENT_BYTES, || {
                self.invoke_inner(func, name, &args)
            })
        } else {
            self.invoke_inner(func, name, &args)
        };
        self.depth = self.depth.saturating_sub(1);
        match r? {
            Ok(v) => Ok(v),
            Err(msg) => {
                diags.push(call_failed("invoke", &msg, c.start, c.range));
                Ok(DYN)
            }
        }
    }

    /// Run a user function as function-hcl's `invoke` does.
    fn invoke_inner(&mut self, func: u32, name: &str, args: &Args<'p>) -> Invoked {
        let prog = self.program;
        let Some(f) = prog.functions.get(func as usize) else {
            return Ok(Err(format!("user function '{name}' not found")));
        };
        let args = match args {
            Args::Object(v) => v,
            Args::Bound(b, at) => return self.invoke_bound(f, b, *at),
        };
        let Value::Object(given) = args else {
            // Go's message prints the argument's whole type, a text as large as the value
            // written out (a shared value describes far more than it holds): charged first,
            // each element's type name (`cty.String, `) as 16 bytes.
            self.charge_expanded(args, 16)?;
            return Ok(Err(format!(
                "arguments to user function '{}' is not an object, found {}",
                f.name,
                go_syntax(&args.type_of())
            )));
        };
        // The frame: the given arguments in declared order (a default's place left null
        // for now), then the locals' slots. Every given key is a declared argument when as
        // many declared arguments are given (keys are unique): N lookups, not N²
        // comparisons. Only a bad call looks further.
        let mut frame = self.new_frame(f);
        let mut declared_given = 0;
        frame.extend(f.args.iter().map(|(a, _)| match given.get(a) {
            Some(v) => {
                declared_given += 1;
                v.clone()
            }
            None => Value::NULL,
        }));
        if declared_given < given.entries.len() {
            let declared: std::collections::HashSet<&str> =
                f.args.iter().map(|(a, _)| &**a).collect();
            if let Some((k, _)) = given.entries.iter().find(|(k, _)| !declared.contains(&**k)) {
                return Ok(Err(format!(
                    "function: {}, invalid argument {}",
                    f.name,
                    go_quote(k)
                )));
            }
        }
        let is_given = |_: usize, a: &str| given.get(a).is_some();
        self.invoke_in_frame(f, is_given, declared_given, frame)
    }

    /// [`Vm::invoke_inner`] of a literal argument object's values at `self.stack[at..]`,
    /// each moved to its argument's place in the frame.
    fn invoke_bound(&mut self, f: &'p UserFn, b: &'p ArgBinding, at: usize) -> Invoked {
        if b.slots.len() != f.args.len() {
            return Err(Stop::Fault(&"an argument binding of another function"));
        }
        let mut frame = self.new_frame(f);
        let mut given = 0;
        for slot in &b.slots {
            frame.push(match slot {
                Some(i) => {
                    given += 1;
                    let v = self.stack.get_mut(at + *i as usize);
                    std::mem::replace(v.ok_or(Stop::Fault(&"a bound value off the stack"))?, DYN)
                }
                None => Value::NULL,
            });
        }
        let is_given = |i: usize, _: &str| b.slots.get(i).is_some_and(Option::is_some);
        self.invoke_in_frame(f, is_given, given, frame)
    }

    /// An empty frame from the pool, with room for `f`'s arguments and locals; the
    /// caller pushes the arguments in declared order (null for one not given).
    fn new_frame(&mut self, f: &UserFn) -> Vec<Value> {
        let mut frame = self.frame_pool.pop().unwrap_or_default();
        frame.reserve(frame_len(f));
        frame
    }

    /// The rest of an `invoke`, in a frame from [`Vm::new_frame`] holding the arguments
    /// (`declared_given` of them given): the frame is completed with the locals' slots,
    /// the function runs in it, and the frame goes back to the pool.
    fn invoke_in_frame(
        &mut self,
        f: &'p UserFn,
        is_given: impl Fn(usize, &str) -> bool,
        declared_given: usize,
        mut frame: Vec<Value>,
    ) -> Invoked {
        frame.resize_with(frame_len(f), || DYN);
        let r = self.run_in_frame(f, is_given, declared_given, &mut frame);
        Value::truncate(&mut frame, 0);
        self.frame_pool.push(frame);
        r
    }

    /// [`Vm::invoke_in_frame`]'s run: each argument not given takes its default
    /// (evaluated in declared order), then the locals and the body run.
    fn run_in_frame(
        &mut self,
        f: &'p UserFn,
        is_given: impl Fn(usize, &str) -> bool,
        declared_given: usize,
        frame: &mut [Value],
    ) -> Invoked {
        // Only a call leaving arguments out looks up which ones.
        if declared_given < f.args.len() {
            for (i, (a, default)) in f.args.iter().enumerate() {
                if is_given(i, a) {
                    continue;
                }
                let v = match default {
                    Some(chunk) => {
                        let mut scratch = Vec::new();
                        self.run(*chunk, &[], &mut scratch)?
                    }
                    None => {
                        return Ok(Err(format!(
                            "function: {}, argument {} expected but not supplied",
                            f.name,
                            go_quote(a)
                        )));
                    }
                };
                frame[i] = v;
            }
        }
        for (slot, chunk) in &f.locals {
            let mut local_diags = Vec::new();
            let v = self.run(*chunk, frame, &mut local_diags)?;
            let v = if has_errors(&local_diags) { DYN } else { v };
            if let Some(s) = frame.get_mut(*slot as usize) {
                *s = v;
            }
        }
        let Some(body) = f.body else {
            return Ok(Ok(DYN));
        };
        let mut body_diags = Vec::new();
        let v = self.run(body, frame, &mut body_diags)?;
        if has_errors(&body_diags) {
            return Ok(Err(plain_all(&body_diags, &self.program.sources)));
        }
        Ok(Ok(v))
    }
}

/// The slots of `f`'s frame: its arguments, then its locals.
fn frame_len(f: &UserFn) -> usize {
    f.frame_size.max(f.args.len() as u32) as usize
}
