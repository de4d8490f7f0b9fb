//! Iteration: `for` expressions (and template `%{for}` directives) and splats.

use super::{DYN, Flow, Step, Stop, Vm, err_diag, has_errors_since};
use crate::bytecode::code::{ForSite, SiteId, SplatSite};
use crate::syntax::diag::Diagnostic;
use crate::text::quote::go_quote;
use crate::value::convert::convert;
use crate::value::{Fields, Kind, Seq, Str, Summary, Type, Value};
use std::collections::BTreeMap;
use std::collections::btree_map::Entry;

/// A running `for`.
pub(super) struct ForState {
    /// The collection iterated (a list, set, tuple, map or object) and its length.
    items: Value,
    len: usize,
    idx: usize,
    known: bool,
    /// The temporaries of the key and value variables (absolute indices).
    key_temp: usize,
    val_temp: usize,
    object: bool,
    group: bool,
    /// Where this (tuple) `for`'s values start in the VM's `for_values`.
    tuple_base: usize,
    fields: Entries,
    /// The summary of the contents of the tuple or object (not grouped) made of the
    /// values pushed so far (kept ones: a duplicate key's value is dropped), added up as
    /// each is charged.
    contents: Summary,
    groups: BTreeMap<Str, Vec<Value>>,
    pending_key: Option<Str>,
}

/// The entries of a `for` object, by key: appended while the keys come in increasing order
/// (`{ for x in xs : x.name => x }` over sorted names), in a tree from the first key out of
/// order (each insertion in O(log n), whatever the order).
enum Entries {
    Sorted(Vec<(Str, Value)>),
    Tree(BTreeMap<Str, Value>),
}

impl Entries {
    /// Adds an entry; a key already present is refused (the first value stays) and given
    /// back.
    fn insert(&mut self, k: Str, v: Value) -> Option<Str> {
        match self {
            Entries::Sorted(entries) => {
                let order = match entries.last() {
                    Some((last, _)) => last.cmp(&k),
                    None => std::cmp::Ordering::Less,
                };
                match order {
                    std::cmp::Ordering::Less => entries.push((k, v)),
                    std::cmp::Ordering::Equal => return Some(k),
                    std::cmp::Ordering::Greater => {
                        let mut tree: BTreeMap<Str, Value> =
                            std::mem::take(entries).into_iter().collect();
                        let dup = Entries::tree_insert(&mut tree, k, v);
                        *self = Entries::Tree(tree);
                        return dup;
                    }
                }
                None
            }
            Entries::Tree(tree) => Entries::tree_insert(tree, k, v),
        }
    }

    fn tree_insert(tree: &mut BTreeMap<Str, Value>, k: Str, v: Value) -> Option<Str> {
        match tree.entry(k) {
            Entry::Occupied(o) => Some(o.key().clone()),
            Entry::Vacant(slot) => {
                slot.insert(v);
                None
            }
        }
    }
}

/// A running splat.
pub(super) struct SplatState {
    items: Vec<Value>,
    idx: usize,
    out: Vec<Value>,
    known: bool,
    list: bool,
    upgraded_unknown: bool,
    /// An empty list: the element expression ran once on an unknown element for the type.
    probe: bool,
    /// The splat, for the nested-splat diagnostic.
    site: SiteId<SplatSite>,
}

impl Vm<'_> {
    fn for_state(&mut self) -> Result<&mut ForState, Stop> {
        let st = self.fors.last_mut();
        st.ok_or(Stop::Fault(&"a for instruction outside a for"))
    }

    fn splat_state(&mut self) -> Result<&mut SplatState, Stop> {
        let st = self.splats.last_mut();
        st.ok_or(Stop::Fault(&"a splat instruction outside a splat"))
    }

    /// [`crate::bytecode::code::Op::ForBegin`]
    pub(super) fn op_for_begin(
        &mut self,
        site: SiteId<ForSite>,
        end: u32,
        [key_temp, val_temp]: [u32; 2],
        object: bool,
        group: bool,
        diags: &mut Vec<Diagnostic>,
    ) -> Step {
        let coll = self.pop()?;
        let Some((items, len)) = self.for_items(coll, site, diags)? else {
            self.stack.push(DYN);
            return Ok(Flow::Jump(end));
        };
        self.alloc(len as u64, 0)?;
        // Room for what the loop makes (charged just now): an object's entries grew one
        // by one, copied eight times over for a `for` of 200. A grouping `for` keeps its
        // values in `groups`, not in the entries.
        let fields = if !object {
            self.for_values.reserve(len);
            Vec::new()
        } else if group {
            Vec::new()
        } else {
            Vec::with_capacity(len)
        };
        *self.temp_mut(key_temp)? = DYN;
        *self.temp_mut(val_temp)? = DYN;
        self.fors.push(ForState {
            items,
            len,
            idx: 0,
            known: true,
            key_temp: self.temp_base + key_temp as usize,
            val_temp: self.temp_base + val_temp as usize,
            object,
            group,
            tuple_base: self.for_values.len(),
            fields: Entries::Sorted(fields),
            contents: Summary::default(),
            groups: BTreeMap::new(),
            pending_key: None,
        });
        Ok(Flow::Next)
    }

    /// The collection a `for` iterates and its length, or `None` (after any diagnostic) when
    /// the result is `DynamicVal`.
    fn for_items(
        &self,
        coll: Value,
        site: SiteId<ForSite>,
        diags: &mut Vec<Diagnostic>,
    ) -> Result<Option<(Value, usize)>, Stop> {
        let s = self.site(site)?;
        if coll.is_null() {
            diags.push(
                err_diag(
                    "Iteration over null value",
                    "A null value cannot be used as the collection in a 'for' expression.",
                    s.coll,
                )
                .with_context(s.whole)
                .with_expression(s.coll),
            );
            return Ok(None);
        }
        let kind = coll.kind();
        if kind == Kind::Dynamic {
            return Ok(None);
        }
        if kind.is_primitive() {
            diags.push(
                err_diag(
                    "Iteration over non-iterable value",
                    format!(
                        "A value of type {} cannot be used as the collection in a 'for' expression.",
                        coll.type_of().friendly_name()
                    ),
                    s.coll,
                )
                .with_context(s.whole)
                .with_expression(s.coll),
            );
            return Ok(None);
        }
        Ok(coll.length().map(|n| (coll, n)))
    }

    /// [`crate::bytecode::code::Op::ForPreCheck`]
    pub(super) fn op_for_pre_check(
        &mut self,
        site: SiteId<ForSite>,
        end: u32,
        diags: &mut Vec<Diagnostic>,
    ) -> Step {
        let r = self.pop()?;
        let mark = self.pop_mark()?;
        let s = self.site(site)?;
        let invalid = |summary: &'static str, detail: String| {
            err_diag(summary, detail, s.cond)
                .with_context(s.whole)
                .with_expression(s.cond)
        };
        let fail = if r.is_null() {
            diags.push(invalid(
                "Condition is null",
                "The value of the 'if' clause must not be null.".into(),
            ));
            true
        } else if let Err(e) = convert(&r, &Type::Bool) {
            diags.push(invalid(
                "Invalid 'for' condition",
                format!("The 'if' clause value is invalid: {e}."),
            ));
            true
        } else {
            has_errors_since(diags, mark)
        };
        if !fail {
            return Ok(Flow::Next);
        }
        let st = self.fors.pop().ok_or(Stop::Fault(&"for stack underflow"))?;
        self.for_values.truncate(st.tuple_base);
        self.stack.push(DYN);
        Ok(Flow::Jump(end))
    }

    /// [`crate::bytecode::code::Op::ForNext`]: the key and value of the next element,
    /// each written straight into its temporary (returned as a pair and moved, each was
    /// read back wider than it had been written: a stall per element in the samples). A
    /// `for` without a key variable binds the value alone.
    pub(super) fn op_for_next(&mut self, exit: u32) -> Step {
        let st = self.fors.last_mut();
        let st = st.ok_or(Stop::Fault(&"a for instruction outside a for"))?;
        if st.idx >= st.len {
            return Ok(Flow::Jump(exit));
        }
        let i = st.idx;
        st.idx += 1;
        let (kt, vt) = (st.key_temp, st.val_temp);
        let keyed = kt != vt;
        if kt.max(vt) >= self.temps.len() {
            return Err(Stop::Fault(&"temporary out of range"));
        }
        let temps = &mut self.temps[..];
        // The temporaries' previous values are discarded, not dropped out of line.
        match &st.items {
            Value::List(seq) | Value::Tuple(seq) => {
                if keyed {
                    temps[kt].assign(Value::int(i as i64));
                }
                temps[vt].assign(match seq.items.get(i) {
                    Some(v) => v.clone_for_push(),
                    None => DYN,
                });
            }
            Value::Set(seq) => {
                temps[vt].assign(match seq.items.get(i) {
                    Some(v) => v.clone_for_push(),
                    None => DYN,
                });
                if keyed {
                    let v = temps[vt].clone();
                    temps[kt].assign(v);
                }
            }
            Value::Map(f) | Value::Object(f) => match f.entries.get(i) {
                Some((k, v)) => {
                    if keyed {
                        temps[kt].assign(Value::String(k.clone()));
                    }
                    temps[vt].assign(v.clone_for_push());
                }
                None => (temps[kt], temps[vt]) = (DYN, DYN),
            },
            _ => (temps[kt], temps[vt]) = (DYN, DYN),
        }
        Ok(Flow::Next)
    }

    /// [`crate::bytecode::code::Op::ForFilter`]
    pub(super) fn op_for_filter(
        &mut self,
        site: SiteId<ForSite>,
        next: u32,
        diags: &mut Vec<Diagnostic>,
    ) -> Step {
        let inc = self.pop()?;
        // A bool (the usual condition) decides as it is.
        if let Value::Bool(b) = inc {
            return Ok(if b { Flow::Next } else { Flow::Jump(next) });
        }
        let s = self.site(site)?;
        let st = self.for_state()?;
        let problem = if inc.is_null() {
            Some(Some(
                "The value of the 'if' clause must not be null.".to_string(),
            ))
        } else if inc.is_unknown() && !st.object {
            Some(None)
        } else {
            match convert(&inc, &Type::Bool) {
                Err(e) => Some(Some(format!("The 'if' clause value is invalid: {e}."))),
                Ok(Value::Bool(true)) => return Ok(Flow::Next),
                Ok(Value::Bool(false)) => return Ok(Flow::Jump(next)),
                Ok(_) => Some(None),
            }
        };
        st.skip(problem, "Invalid 'for' condition", s.cond, s.whole, diags);
        Ok(Flow::Jump(next))
    }

    /// [`crate::bytecode::code::Op::ForKey`]
    pub(super) fn op_for_key(
        &mut self,
        site: SiteId<ForSite>,
        next: u32,
        diags: &mut Vec<Diagnostic>,
    ) -> Step {
        let k = self.pop()?;
        // A string key (the usual one) is the key as it is.
        if let Value::String(key) = k {
            self.for_state()?.pending_key = Some(key);
            return Ok(Flow::Next);
        }
        let s = self.site(site)?;
        let st = self.for_state()?;
        let problem = if k.is_null() {
            Some(Some(
                "Key expression in 'for' expression must not produce a null value.".to_string(),
            ))
        } else if k.is_unknown() {
            Some(None)
        } else {
            match convert(&k, &Type::String) {
                Ok(Value::String(key)) => {
                    st.pending_key = Some(key);
                    return Ok(Flow::Next);
                }
                Ok(_) => Some(None),
                Err(e) => Some(Some(format!(
                    "The key expression produced an invalid result: {e}."
                ))),
            }
        };
        st.skip(problem, "Invalid object key", s.key, s.whole, diags);
        Ok(Flow::Jump(next))
    }

    /// [`crate::bytecode::code::Op::ForPush`]: back to the loop's `ForNext` after it.
    pub(super) fn op_for_push(
        &mut self,
        site: SiteId<ForSite>,
        next: u32,
        diags: &mut Vec<Diagnostic>,
    ) -> Step {
        let v = self.pop()?;
        // `charge_shared` ends with the budget check that counts the element too.
        self.elements = self.elements.saturating_add(1);
        let mut one = self.charge_shared(Summary::default(), std::iter::once(&v))?;
        let prog = self.program;
        let st = self.fors.last_mut();
        let st = st.ok_or(Stop::Fault(&"a for instruction outside a for"))?;
        if !st.object {
            st.contents.include(&one);
            v.push_onto(&mut self.for_values);
            return Ok(Flow::Jump(next));
        }
        let Some(k) = st.pending_key.take() else {
            return Ok(Flow::Jump(next));
        };
        if st.group {
            st.groups.entry(k).or_default().push(v);
            return Ok(Flow::Jump(next));
        }
        one.add_key(&k);
        let Some(k) = st.fields.insert(k, v) else {
            st.contents.include(&one);
            return Ok(Flow::Jump(next));
        };
        let s = prog.site(site).ok_or(Stop::Fault(&"missing site"))?;
        diags.push(
            err_diag(
                "Duplicate object key",
                format!("Two different items produced the key {} in this 'for' expression. If duplicates are expected, use the ellipsis (...) after the value expression to enable grouping by key.", go_quote(&k)),
                s.key,
            )
            .with_context(s.whole)
            .with_expression(s.key),
        );
        Ok(Flow::Jump(next))
    }

    /// [`crate::bytecode::code::Op::ForEnd`]
    pub(super) fn op_for_end(&mut self) -> Step {
        let st = self.fors.pop().ok_or(Stop::Fault(&"for stack underflow"))?;
        let v = if !st.known {
            self.for_values.truncate(st.tuple_base);
            DYN
        } else if !st.object {
            let contents = Self::check_contents(st.contents)?;
            let values = self.for_values.drain(st.tuple_base..);
            Value::Tuple(Seq::counted_iter(Type::Dynamic, values, contents))
        } else if st.group {
            let v = Value::object_sorted(
                st.groups
                    .into_iter()
                    .map(|(k, vs)| (k, Value::tuple(vs)))
                    .collect(),
            );
            Self::check_depth(&v)?;
            v
        } else {
            let contents = Self::check_contents(st.contents)?;
            match st.fields {
                Entries::Sorted(entries) => Value::object_sorted_counted(entries, contents),
                // From the tree into the object, in key order: no vector between.
                Entries::Tree(tree) => Value::Object(Fields::counted_iter(
                    Type::Dynamic,
                    tree.into_iter(),
                    contents,
                )),
            }
        };
        self.push(v)
    }

    // ---- splats ----

    /// [`crate::bytecode::code::Op::SplatBegin`]
    pub(super) fn op_splat_begin(
        &mut self,
        site: SiteId<SplatSite>,
        end: u32,
        diags: &mut Vec<Diagnostic>,
    ) -> Step {
        let src = self.pop()?;
        let mark = self.pop_mark()?;
        match self.splat_begin(src, site, mark, diags)? {
            Ok(st) => {
                self.alloc(st.items.len() as u64, 0)?;
                self.splats.push(st);
                Ok(Flow::Next)
            }
            Err(v) => {
                self.stack.push(v);
                Ok(Flow::Jump(end))
            }
        }
    }

    /// A splat's state, or (`Err`) its result when there is nothing to iterate.
    fn splat_begin(
        &self,
        src: Value,
        site: SiteId<SplatSite>,
        mark: usize,
        diags: &mut Vec<Diagnostic>,
    ) -> Result<Result<SplatState, Value>, Stop> {
        if has_errors_since(diags, mark) {
            return Ok(Err(DYN));
        }
        let s = self.site(site)?;
        let kind = src.kind();
        let seq = kind.is_sequence();
        if src.is_null() {
            if !seq {
                return Ok(Err(Value::tuple(Vec::new())));
            }
            diags.push(
                err_diag(
                    "Splat of null value",
                    "Splat expressions (with the * symbol) cannot be applied to null sequences.",
                    s.source,
                )
                .with_context(s.source.to(s.marker))
                .with_expression(s.source),
            );
            return Ok(Err(DYN));
        }
        if kind == Kind::Dynamic {
            return Ok(Err(DYN));
        }
        let mut st = SplatState {
            items: Vec::new(),
            idx: 0,
            out: Vec::new(),
            known: true,
            list: matches!(kind, Kind::List | Kind::Set),
            upgraded_unknown: false,
            probe: false,
            site,
        };
        if !seq {
            st.upgraded_unknown = src.is_unknown();
            st.items = vec![src];
            return Ok(Ok(st));
        }
        if src.is_unknown() {
            return Ok(Err(DYN));
        }
        st.items = src.as_seq().map(<[Value]>::to_vec).unwrap_or_default();
        if st.list && st.items.is_empty() {
            st.probe = true;
            st.items = vec![Value::Unknown(
                src.type_of()
                    .element_type()
                    .cloned()
                    .unwrap_or(Type::Dynamic),
            )];
        }
        Ok(Ok(st))
    }

    /// [`crate::bytecode::code::Op::SplatNext`]
    pub(super) fn op_splat_next(&mut self, temp: u32, exit: u32) -> Step {
        let st = self.splat_state()?;
        let Some(item) = st.items.get(st.idx).cloned() else {
            return Ok(Flow::Jump(exit));
        };
        st.idx += 1;
        *self.temp_mut(temp)? = item;
        Ok(Flow::Next)
    }

    /// [`crate::bytecode::code::Op::SplatPush`]
    pub(super) fn op_splat_push(&mut self, next: u32, diags: &[Diagnostic]) -> Step {
        let v = self.pop()?;
        let mark = self.pop_mark()?;
        let failed = has_errors_since(diags, mark);
        let st = self.splat_state()?;
        if failed {
            st.known = false;
        }
        st.out.push(v);
        Ok(Flow::Jump(next))
    }

    /// [`crate::bytecode::code::Op::SplatEnd`]
    pub(super) fn op_splat_end(&mut self, diags: &mut Vec<Diagnostic>) -> Step {
        let st = self.splats.pop();
        let st = st.ok_or(Stop::Fault(&"splat stack underflow"))?;
        let site = self.site(st.site)?;
        let v = splat_result(st, site, diags);
        Self::check_depth(&v)?;
        self.push(v)
    }
}

impl ForState {
    /// Skip the current element for a `problem`: `Some(message)` is an error (reported
    /// once per `for`: only while the result is still known), `None` just makes the result
    /// unknown.
    fn skip(
        &mut self,
        problem: Option<Option<String>>,
        summary: &'static str,
        range: crate::syntax::span::Span,
        whole: crate::syntax::span::Span,
        diags: &mut Vec<Diagnostic>,
    ) {
        let Some(msg) = problem else {
            return;
        };
        if let Some(msg) = msg
            && self.known
        {
            diags.push(
                err_diag(summary, msg, range)
                    .with_context(whole)
                    .with_expression(range),
            );
        }
        self.known = false;
    }
}

fn splat_result(st: SplatState, s: SplatSite, diags: &mut Vec<Diagnostic>) -> Value {
    if st.upgraded_unknown {
        return DYN;
    }
    if !st.known && !st.probe {
        return DYN;
    }
    if !st.list {
        return Value::tuple(st.out);
    }
    if st.probe {
        let elem = st.out.first().map(Value::type_of).unwrap_or(Type::Dynamic);
        return Value::list(elem, Vec::new());
    }
    // cty.CanListVal: one element type, dynamic elements aside.
    let mut elem = Type::Dynamic;
    for v in &st.out {
        let t = v.type_of();
        if elem == Type::Dynamic {
            elem = t;
        } else if t != Type::Dynamic && t != elem {
            // A nested splat over scalars makes tuples of different lengths: hcl (since
            // v2.24) refuses the list it cannot build rather than answering a tuple.
            diags.push(
                err_diag(
                    "Invalid nested splat expressions",
                    "The second level of splat expression produced elements of different \
                     types, so it isn't possible to construct a valid list to represent the \
                     top-level result.\n\nConsider using a for expression instead, to produce \
                     a tuple-typed result which can therefore have non-homogenous element \
                     types.",
                    s.each,
                )
                .with_context(s.whole),
            );
            return DYN;
        }
    }
    Value::list(elem, st.out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_keep_the_first_of_a_key_in_key_order_whatever_the_insertion_order() {
        // Sorted input, reversed, shuffled, with duplicates at each place.
        let orders: [&[&str]; 6] = [
            &["a", "b", "c", "d"],
            &["d", "c", "b", "a"],
            &["b", "d", "a", "c", "b"],
            &["a", "a", "b"],
            &["a", "b", "c", "a", "d", "c"],
            &[],
        ];
        for keys in orders {
            let mut e = Entries::Sorted(Vec::new());
            let mut want: BTreeMap<Str, Value> = BTreeMap::new();
            for (i, k) in keys.iter().enumerate() {
                let dup = e.insert(Str::from(*k), Value::int(i as i64));
                let first = !want.contains_key(*k);
                want.entry(Str::from(*k)).or_insert(Value::int(i as i64));
                assert_eq!(dup.is_none(), first, "{keys:?} at {i}");
            }
            let got: Vec<(Str, Value)> = match e {
                Entries::Sorted(v) => v,
                Entries::Tree(t) => t.into_iter().collect(),
            };
            let want: Vec<(Str, Value)> = want.into_iter().collect();
            assert_eq!(got.len(), want.len(), "{keys:?}");
            for ((gk, gv), (wk, wv)) in got.iter().zip(&want) {
                assert!(gk == wk && gv.raw_equals(wv), "{keys:?}");
            }
        }
    }
}
