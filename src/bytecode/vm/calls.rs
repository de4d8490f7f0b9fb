//! Built-in function calls: argument conversion, expanded (`...`) arguments, cty's null
//! and unknown rules, and hcl's call diagnostics.

use super::{DYN, Flow, LimitKind, Step, Stop, Vm, err_diag, has_errors_since};
use crate::builtins::{self, FuncDef, FuncError, FuncId, Param, ParamType};
use crate::bytecode::code::{CallSite, Callee};
use crate::syntax::diag::Diagnostic;
use crate::syntax::span::Span;
use crate::text::quote::go_quote;
use crate::value::convert::{ConvertError, convert, tuple_to_list_in_place};
use crate::value::meter::Size;
use crate::value::{Kind, Value};

impl<'p> Vm<'p> {
    pub(super) fn call_site(&self, call: u32) -> Result<&'p CallSite, Stop> {
        let prog = self.program;
        let c = prog.calls.get(call as usize);
        c.ok_or(Stop::Fault(&"missing call site"))
    }

    /// A builtin call's site and function.
    fn builtin(&self, call: u32) -> Result<(&'p CallSite, FuncId), Stop> {
        let c = self.call_site(call)?;
        match c.callee {
            Callee::Builtin(id) => Ok((c, id)),
            _ => Err(Stop::Fault(
                &"a builtin instruction at a call site of another kind",
            )),
        }
    }

    /// [`crate::bytecode::code::Op::ConvArg`]
    pub(super) fn op_conv_arg(&mut self, call: u32, arg: u32, diags: &mut Vec<Diagnostic>) -> Step {
        let (c, id) = self.builtin(call)?;
        let def = builtins::get(id);
        let top = self.top_mut()?;
        let Some(p) = param(def, arg as usize) else {
            return Ok(Flow::Next);
        };
        // Already of the parameter's primitive type (most arguments): nothing to convert.
        let as_is = match p.ty {
            ParamType::Any => true,
            ParamType::String => matches!(top, Value::String(_)),
            ParamType::Number => matches!(top, Value::Number(_)),
            ParamType::Bool => matches!(top, Value::Bool(_)),
            _ => false,
        };
        if as_is {
            return Ok(Flow::Next);
        }
        let want = p.ty.to_type();
        if tuple_to_list_in_place(top, &want) {
            return Ok(Flow::Next);
        }
        let v = std::mem::take(top);
        let converted = self.convert_metered(&v, &want)?;
        let top = self.top_mut()?;
        match converted {
            Ok(cv) => *top = cv,
            Err(e) => {
                *top = v;
                let subject = c.arg_starts.get(arg as usize).copied().unwrap_or(c.range);
                let expr = c.arg_ranges.get(arg as usize).copied().unwrap_or(c.range);
                diags.push(
                    invalid_argument(p.name, e, subject)
                        .with_context(c.range)
                        .with_expression(expr),
                );
            }
        }
        Ok(Flow::Next)
    }

    /// [`crate::bytecode::code::Op::Call`]
    pub(super) fn op_call(&mut self, call: u32, argc: u32, diags: &mut Vec<Diagnostic>) -> Step {
        let at = self.top_n(argc as usize)?;
        let mark = self.pop_mark()?;
        let r = self.call_builtin(call, at, mark, diags);
        self.push_result(at, r)
    }

    /// [`crate::bytecode::code::Op::ExpandBegin`]
    pub(super) fn op_expand_begin(
        &mut self,
        call: u32,
        end: u32,
        diags: &mut Vec<Diagnostic>,
    ) -> Step {
        let v = self.pop()?;
        match self.expand_begin(call, v, diags)? {
            Some(items) => {
                self.alloc(items.len() as u64, 0)?;
                self.expands.push(items);
                Ok(Flow::Next)
            }
            None => {
                self.pop_mark()?;
                self.stack.push(DYN);
                Ok(Flow::Jump(end))
            }
        }
    }

    /// hcl's handling of a final `...` argument: the elements it expands to, or `None`
    /// (after any diagnostic) when the call yields `DynamicVal`. Also checks arity.
    fn expand_begin(
        &self,
        call: u32,
        v: Value,
        diags: &mut Vec<Diagnostic>,
    ) -> Result<Option<Vec<Value>>, Stop> {
        let (c, id) = self.builtin(call)?;
        let def = builtins::get(id);
        let mark = self.marks.last().copied();
        if has_errors_since(diags, mark.ok_or(Stop::Fault(&"mark stack underflow"))?) {
            return Ok(None);
        }
        let range = c.expand.unwrap_or(c.range);
        let bad = |detail: &str| {
            err_diag(
                "Invalid expanding argument value",
                detail.to_string(),
                range,
            )
            .with_context(c.range)
            .with_expression(range)
        };
        let items = match v.kind() {
            Kind::Dynamic => {
                if v.is_null() {
                    diags.push(bad(
                        "The expanding argument (indicated by ...) must not be null.",
                    ));
                }
                return Ok(None);
            }
            Kind::Tuple | Kind::List | Kind::Set => {
                if v.is_null() {
                    diags.push(bad(
                        "The expanding argument (indicated by ...) must not be null.",
                    ));
                    return Ok(None);
                }
                if v.is_unknown() {
                    return Ok(None);
                }
                v.as_seq().map(<[Value]>::to_vec).unwrap_or_default()
            }
            _ => {
                diags.push(bad(
                    "The expanding argument (indicated by ...) must be of a tuple, list, or set type.",
                ));
                return Ok(None);
            }
        };
        let nstatic = c.arg_starts.len().saturating_sub(1);
        let n = nstatic + items.len();
        if n < def.params.len() {
            let qual = if def.var_param.is_some() {
                " at least"
            } else {
                ""
            };
            diags.push(
                err_diag(
                    "Not enough function arguments",
                    format!(
                        "Function {} expects{qual} {} argument(s). Missing value for {}.",
                        go_quote(&c.name),
                        def.params.len(),
                        go_quote(def.params[n].name)
                    ),
                    c.close_paren,
                )
                .with_context(c.range)
                .with_expression(c.range),
            );
            return Ok(None);
        }
        if def.var_param.is_none() && n > def.params.len() {
            let i = def.params.len();
            let subject = if i < nstatic {
                c.arg_starts.get(i).copied().unwrap_or(range)
            } else {
                range
            };
            diags.push(
                err_diag(
                    "Too many function arguments",
                    format!(
                        "Function {} expects only {} argument(s).",
                        go_quote(&c.name),
                        def.params.len()
                    ),
                    subject,
                )
                .with_context(c.range)
                .with_expression(c.range),
            );
            return Ok(None);
        }
        Ok(Some(items))
    }

    /// [`crate::bytecode::code::Op::CallExpanded`]
    pub(super) fn op_call_expanded(
        &mut self,
        call: u32,
        nstatic: u32,
        diags: &mut Vec<Diagnostic>,
    ) -> Step {
        let at = self.top_n(nstatic as usize)?;
        let expanded = self.expands.pop();
        let expanded = expanded.ok_or(Stop::Fault(&"expand stack underflow"))?;
        let (c, id) = self.builtin(call)?;
        let def = builtins::get(id);
        let expand_range = c.expand.unwrap_or(c.range);
        for (j, mut v) in expanded.into_iter().enumerate() {
            if let Some(p) = param(def, nstatic as usize + j)
                && p.ty != ParamType::Any
            {
                match self.convert_metered(&v, &p.ty.to_type())? {
                    Ok(cv) => v = cv,
                    Err(e) => diags.push(
                        invalid_argument(p.name, e, expand_range)
                            .with_context(c.range)
                            .with_expression(expand_range),
                    ),
                }
            }
            self.stack.push(v);
        }
        let mark = self.pop_mark()?;
        let r = self.call_builtin(call, at, mark, diags);
        self.push_result(at, r)
    }

    /// Replaces a builtin's arguments (at `self.stack[at..]`) by its result, then charges
    /// the result where it lies on the stack. Charged before the push, the result was
    /// spilled word by word for the charge to read and then copied on with a 16-byte
    /// read, which the CPU cannot forward from those stores (perf: the hottest
    /// instruction of `Vm::run` on heavy-200, 2.6% of its time). A result over the budget
    /// stops the evaluation, which clears the stack.
    #[inline(always)]
    fn push_result(&mut self, at: usize, r: Result<Called, Stop>) -> Step {
        Value::truncate(&mut self.stack, at);
        let (v, charged) = r?;
        v.push_onto(&mut self.stack);
        if let Some(charged) = charged
            && let Some(v) = self.stack.last()
        {
            let (elements, bytes) = result_cost(v, charged, self.left())?;
            self.alloc(elements, bytes)?;
        }
        Ok(Flow::Next)
    }

    /// Call a builtin on the arguments at `self.stack[at..]` (the caller removes them).
    fn call_builtin(
        &mut self,
        call: u32,
        at: usize,
        mark: usize,
        diags: &mut Vec<Diagnostic>,
    ) -> Result<Called, Stop> {
        let (c, id) = self.builtin(call)?;
        let def = builtins::get(id);
        if has_errors_since(diags, mark) {
            return Ok((DYN, None));
        }
        let args = &self.stack[at..];
        // cty's Call: nulls are rejected first, then unknown arguments give an unknown result.
        let mut result = None;
        for (i, a) in args.iter().enumerate() {
            if a.is_null()
                && let Some(p) = param(def, i)
                && !p.allow_null
            {
                result = Some(Err(FuncError::arg(i, "argument must not be null")));
                break;
            }
        }
        // Unknown arguments give an unknown result (`builtins::unknown_result`: the
        // functions that take nested unknowns move them around without looking, so a
        // known part stays known: `merge(a, {x = unknown}).y`, `length(...)`).
        if result.is_none()
            && let Some(v) = builtins::unknown_result(def, args)
        {
            return Ok((v, None));
        }
        let argc = args.len();
        let (result, charged) = match result {
            Some(r) => (r, (0, 0)),
            None => self.call_metered(def, at)?,
        };
        match result {
            Ok(v) => Ok((v, Some(charged))),
            Err(FuncError::Arg { index, message }) => {
                diags.push(match param(def, index) {
                    Some(p) if index < argc => {
                        let subject = match c.arg_starts.get(index) {
                            Some(s) if c.expand.is_none() || index + 1 < c.arg_starts.len() => *s,
                            _ => c.expand.unwrap_or(c.range),
                        };
                        let expr = c.arg_ranges.get(index).copied().unwrap_or(subject);
                        invalid_argument(p.name, message, subject)
                            .with_context(c.range)
                            .with_expression(expr)
                    }
                    Some(p) => invalid_argument(p.name, message, c.range).with_expression(c.range),
                    None => call_failed(&c.name, &message, c.start, c.range),
                });
                Ok((DYN, None))
            }
            Err(FuncError::General(message)) => {
                diags.push(call_failed(&c.name, &message, c.start, c.range));
                Ok((DYN, None))
            }
        }
    }

    /// Runs a builtin with this evaluation's budgets on the thread's meter, so that the
    /// builtin's own loops (decoding, encoding, flattening, string building) charge them as
    /// they go and stop at them; what they charged (elements, bytes) counts here.
    #[allow(clippy::type_complexity)]
    fn call_metered(
        &mut self,
        def: &'static FuncDef,
        at: usize,
    ) -> Result<(Result<Value, FuncError>, (u64, u64)), Stop> {
        self.meter_begin();
        // Each argument went through `ConvArg` (or the expansion's conversion) and nulls
        // were checked by the caller: the implementation runs on them as they are.
        let r = builtins::call_converted(def, &self.stack[at..]);
        let charged = self.meter_end(def.name)?;
        Ok((r, charged))
    }

    /// Starts metering work below the VM (a builtin, a conversion) on this thread's
    /// meter, with what is left of this evaluation's budgets.
    fn meter_begin(&self) {
        let left = self.left();
        crate::value::meter::begin(left.elements, left.bytes, self.deadline);
    }

    /// Ends [`Vm::meter_begin`]'s metering: what was charged counts here (and is
    /// returned: elements, bytes), and a budget exceeded stops the evaluation, naming
    /// `name` (the builtin, or the conversion).
    pub(super) fn meter_end(&mut self, name: &'static str) -> Result<(u64, u64), Stop> {
        use crate::value::meter;
        let used = meter::end();
        self.elements = self.elements.saturating_add(used.elements);
        self.bytes = self.bytes.saturating_add(used.bytes);
        if let Some(e) = used.exceeded {
            let kind = match e.resource {
                meter::Resource::Elements => LimitKind::AllocElements,
                meter::Resource::Bytes => LimitKind::AllocBytes,
                meter::Resource::Time => LimitKind::WallTime,
            };
            return Err(Stop::LimitIn(Box::new((kind, name))));
        }
        Ok((used.elements, used.bytes))
    }

    /// [`convert`] metered: a conversion makes strings of numbers (a number's text may be
    /// 39,457 digits long, and a tuple may hold the same number a million times), each
    /// charged before it is made, as a builtin's are.
    pub(super) fn convert_metered(
        &mut self,
        v: &Value,
        want: &crate::value::Type,
    ) -> Result<Result<Value, ConvertError>, Stop> {
        self.meter_begin();
        let r = convert(v, want);
        self.meter_end(crate::value::convert::SITE)?;
        Ok(r)
    }
}

/// A builtin call's result, and what the builtin charged while making it (elements,
/// bytes) when the result is still to be charged ([`result_cost`]; `None` for an unknown
/// or an error's placeholder, which cost nothing).
type Called = (Value, Option<(u64, u64)>);

/// What a builtin's result costs (elements, bytes): a new collection its expanded size
/// (its parts may be shared: `concat(l, l, l)`), measured no further than what is `left`,
/// a string its bytes; an existing value handed back (`element`, `lookup`) nothing more.
/// What the builtin charged while making it (`charged`) is not charged twice.
#[inline(always)]
fn result_cost(v: &Value, charged: (u64, u64), left: Size) -> Result<(u64, u64), Stop> {
    if let Value::String(x) = v {
        return Ok((0, (x.len() as u64).saturating_sub(charged.1)));
    }
    if v.collection_unique() != Some(true) {
        return Ok((0, 0));
    }
    Vm::check_depth(v)?;
    let size = crate::value::meter::expanded_size(v, left);
    Ok((
        size.elements.saturating_sub(charged.0),
        size.bytes.saturating_sub(charged.1),
    ))
}

/// Parameter `i` of a builtin (its variadic parameter past the fixed ones).
fn param(def: &'static FuncDef, i: usize) -> Option<&'static Param> {
    def.params.get(i).or(def.var_param.as_ref())
}

/// hcl's diagnostic for an argument its parameter rejects.
pub(super) fn invalid_argument(
    param: &str,
    problem: impl std::fmt::Display,
    subject: Span,
) -> Diagnostic {
    err_diag(
        "Invalid function argument",
        format!(
            "Invalid value for {} parameter: {problem}.",
            go_quote(param)
        ),
        subject,
    )
}

/// hcl's diagnostic for a function that failed.
pub(super) fn call_failed(name: &str, msg: &str, start: Span, range: Span) -> Diagnostic {
    err_diag(
        "Error in function call",
        format!("Call to function {} failed: {msg}.", go_quote(name)),
        start,
    )
    .with_context(range)
    .with_expression(range)
}
