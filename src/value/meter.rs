//! The budget meter of the evaluation running on this thread: work done below the VM
//! (builtins, YAML and JSON decoding and encoding, string building) is charged here, as it
//! happens and *before* the memory is allocated, so that a hostile input is stopped within
//! its budget instead of after it.
//!
//! The VM meters each builtin call ([`begin`]) with what is left of its budgets, and
//! reads back what was used and whether a budget was exceeded ([`end`]).
//! With no meter installed (unit tests, CLI helpers) charges are counted against no limit.
//!
//! Values share their parts (`Arc`), so a value may describe far more than it occupies: a
//! tuple of ten copies of a tuple of ten copies ... [`expanded_size`] measures what a value
//! becomes when it is written out (encoded, flattened, sent), walking through the sharing
//! but never further than the caller's cap, so measuring costs no more than the budget the
//! caller is about to charge.

use crate::value::number::Number;
use crate::value::{Summary, Value};
use std::cell::Cell;
use std::fmt;
use std::time::Instant;

/// Which budget a charge exceeded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Resource {
    /// Collection elements (values inside lists, sets, tuples, maps, objects).
    Elements,
    /// String bytes.
    Bytes,
    /// Wall time.
    Time,
}

/// A budget was exceeded by `site` (a builtin's or decoder's name, e.g. `yamldecode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Exceeded {
    pub resource: Resource,
    pub site: &'static str,
}

impl fmt::Display for Exceeded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self.resource {
            Resource::Elements => "collection elements",
            Resource::Bytes => "string bytes",
            Resource::Time => "time",
        };
        write!(
            f,
            "{} exceeded the evaluation's budget of {what}",
            self.site
        )
    }
}

/// What a builtin call charged to the meter ([`begin`] to [`end`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Used {
    pub elements: u64,
    pub bytes: u64,
    /// The first budget exceeded, if any.
    pub exceeded: Option<Exceeded>,
}

/// This thread's meter, one cell per field: a charge reads and writes the two or three
/// words it needs (a `Cell<Meter>` copied the whole meter out and back on every charge:
/// ~85 instructions for `yamlencode`'s two charges per node, measured).
struct Cells {
    elements_left: Cell<u64>,
    bytes_left: Cell<u64>,
    deadline: Cell<Option<Instant>>,
    elements_used: Cell<u64>,
    bytes_used: Cell<u64>,
    exceeded: Cell<Option<Exceeded>>,
    ticks: Cell<u32>,
    walk_mark: Cell<u64>,
    /// Elements visited by walks over values on this thread (see [`walked`]); only ever
    /// grows (wrapping), across every [`begin`] and [`end`].
    walked: Cell<u64>,
}

thread_local! {
    static METER: Cells = const {
        Cells {
            elements_left: Cell::new(u64::MAX),
            bytes_left: Cell::new(u64::MAX),
            deadline: Cell::new(None),
            elements_used: Cell::new(0),
            bytes_used: Cell::new(0),
            exceeded: Cell::new(None),
            ticks: Cell::new(0),
            walk_mark: Cell::new(0),
            walked: Cell::new(0),
        }
    };
}

impl Cells {
    /// Records the first budget exceeded (by `site`) and returns it.
    #[cold]
    fn stop(&self, resource: Resource, site: &'static str) -> Result<(), Exceeded> {
        let e = Exceeded { resource, site };
        self.exceeded.set(Some(e));
        Err(e)
    }

    /// Adds `n` to `used`; past `left`, the budget `resource` is exceeded by `site`.
    #[inline(always)]
    fn charge(
        &self,
        (used, left): (&Cell<u64>, &Cell<u64>),
        resource: Resource,
        n: u64,
        site: &'static str,
    ) -> Result<(), Exceeded> {
        self.stopped()?;
        let total = used.get().saturating_add(n);
        used.set(total);
        if total > left.get() {
            return self.stop(resource, site);
        }
        Ok(())
    }

    /// [`tick`] on these cells.
    #[inline(always)]
    fn tick(&self, site: &'static str) -> Result<(), Exceeded> {
        self.stopped()?;
        let ticks = self.ticks.get().wrapping_add(1);
        self.ticks.set(ticks);
        let walked = self.walked.get();
        if (ticks & 0x3ff == 0 || walked.wrapping_sub(self.walk_mark.get()) >= WALK_CLOCK)
            && let Some(d) = self.deadline.get()
        {
            self.walk_mark.set(walked);
            if Instant::now() > d {
                return self.stop(Resource::Time, site);
            }
        }
        Ok(())
    }

    /// The budget exceeded earlier, if any (later charges fail too).
    #[inline(always)]
    fn stopped(&self) -> Result<(), Exceeded> {
        match self.exceeded.get() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

/// Starts metering a builtin call on this thread, with what is left of the evaluation's
/// budgets: nothing charged yet, nothing exceeded. Only the fields a call needs are
/// written (a whole meter saved and restored around every call cost ~60 instructions and
/// a stalled copy of ~90 bytes). Calls do not nest: a builtin never runs the VM.
#[inline]
pub fn begin(elements_left: u64, bytes_left: u64, deadline: Option<Instant>) {
    METER.with(|c| {
        c.elements_left.set(elements_left);
        c.bytes_left.set(bytes_left);
        c.deadline.set(deadline);
        c.elements_used.set(0);
        c.bytes_used.set(0);
        c.exceeded.set(None);
        c.ticks.set(0);
        c.walk_mark.set(c.walked.get());
    })
}

/// Ends the call [`begin`] started: what it charged, and whether it exceeded a budget.
/// The meter limits nothing again until the next [`begin`] (unit tests and CLI helpers
/// run builtins without one).
#[inline]
pub fn end() -> Used {
    METER.with(|c| {
        c.elements_left.set(u64::MAX);
        c.bytes_left.set(u64::MAX);
        c.deadline.set(None);
        Used {
            elements: c.elements_used.get(),
            bytes: c.bytes_used.get(),
            exceeded: c.exceeded.take(),
        }
    })
}

/// Charges `n` collection elements about to be allocated.
pub fn elements(site: &'static str, n: u64) -> Result<(), Exceeded> {
    METER.with(|c| {
        let cells = (&c.elements_used, &c.elements_left);
        c.charge(cells, Resource::Elements, n, site)
    })
}

/// Charges `n` string bytes about to be allocated.
pub fn bytes(site: &'static str, n: u64) -> Result<(), Exceeded> {
    METER.with(|c| c.charge((&c.bytes_used, &c.bytes_left), Resource::Bytes, n, site))
}

/// [`bytes`] and then [`tick`], in one look at the meter: a writer's charge for each
/// piece it writes (`yamlencode`'s nodes).
pub fn bytes_and_tick(site: &'static str, n: u64) -> Result<(), Exceeded> {
    METER.with(|c| {
        c.charge((&c.bytes_used, &c.bytes_left), Resource::Bytes, n, site)?;
        c.tick(site)
    })
}

/// A unit of work of a loop: every 1024th call, or once [`WALK_CLOCK`] elements were
/// [`walked`] since the last look (one unit may walk a large value: `contains` compares
/// with `==`), compares the clock with the deadline.
pub fn tick(site: &'static str) -> Result<(), Exceeded> {
    METER.with(|c| c.tick(site))
}

/// Counts `n` elements visited by a walk over a value (comparing, typing, converting,
/// hashing, looking for unknowns), which goes through shared parts as many times as they
/// appear: a walk can do work proportional to a value's expanded size inside one VM
/// instruction or builtin call. The VM reads the clock when this has grown by
/// [`WALK_CLOCK`] since it last did (`Vm::run`), so such walks cannot run on past the
/// wall budget until the next periodic check, 4,096 instructions later.
#[inline]
pub fn walked(n: usize) {
    METER.with(|c| c.walked.set(c.walked.get().wrapping_add(n as u64)));
}

/// The elements [`walked`] on this thread so far.
#[inline]
pub fn walked_so_far() -> u64 {
    METER.with(|c| c.walked.get())
}

/// After how many elements walked the VM reads the clock (a few tens of microseconds of
/// walking; reading the clock costs about as much as walking 2 elements).
pub const WALK_CLOCK: u64 = 1 << 12;

/// What a value becomes when written out in full.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Size {
    /// Values inside collections (each element, map entry or attribute counts one).
    pub elements: u64,
    /// Bytes of strings and keys.
    pub bytes: u64,
}

impl Size {
    /// Whether this is more than `cap` in either measure.
    pub fn exceeds(&self, cap: Size) -> bool {
        self.elements > cap.elements || self.bytes > cap.bytes
    }
}

fn is_collection(v: &Value) -> bool {
    matches!(
        v,
        Value::List(_) | Value::Set(_) | Value::Tuple(_) | Value::Map(_) | Value::Object(_)
    )
}

/// The size of `v` written out, shared parts counted each time they appear: a collection
/// knows its own ([`Summary`]) unless it is larger in expansion than its counters hold,
/// and only then is it walked. The walk stops as soon as the size exceeds `cap` (the
/// result then exceeds it too), so it visits at most about `cap.elements` values whatever
/// the sharing. It allocates nothing for values nested up to [`RECURSION`] levels; deeper
/// parts continue on a heap stack.
pub fn expanded_size(v: &Value, cap: Size) -> Size {
    struct Measure;
    impl Visit for Measure {
        fn whole(&mut self, _: &Summary) -> bool {
            true
        }
        fn leaf(&mut self, _: &Value) {}
    }
    walk(v, cap, &mut Measure)
}

/// What [`output_facts`] learns of a value.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Facts {
    /// As [`expanded_size`].
    pub size: Size,
    /// Whether anything inside is unknown.
    pub unknown: bool,
    /// Whether a number inside was refused by the caller's test.
    pub refused_number: bool,
}

/// [`expanded_size`] of a value about to be written out, and whether anything in it is
/// unknown or a number the output cannot carry (`number_ok` false): what a response body
/// is checked for. The collections' summaries answer all three, except where a number
/// other than a small integer lies: there the numbers are looked at (a small integer is
/// carried by every output, and `number_ok` is not asked about it). Past the cap the walk
/// stops, and the flags then speak only of what it visited.
pub fn output_facts(v: &Value, cap: Size, number_ok: impl Fn(&Number) -> bool) -> Facts {
    struct Check<F> {
        number_ok: F,
        unknown: bool,
        refused_number: bool,
    }
    impl<F: Fn(&Number) -> bool> Visit for Check<F> {
        fn whole(&mut self, s: &Summary) -> bool {
            // A big number inside may be refused: walked, each number looked at.
            if s.big_number() {
                return false;
            }
            self.unknown |= s.unknown();
            true
        }
        fn leaf(&mut self, x: &Value) {
            match x {
                Value::Unknown(_) => self.unknown = true,
                Value::Number(n) if !self.refused_number && !(self.number_ok)(n) => {
                    self.refused_number = true
                }
                _ => {}
            }
        }
    }
    let mut check = Check {
        number_ok,
        unknown: false,
        refused_number: false,
    };
    let size = walk(v, cap, &mut check);
    Facts {
        size,
        unknown: check.unknown,
        refused_number: check.refused_number,
    }
}

/// What a walk does at each part of a value.
trait Visit {
    /// Whether a collection of this summary, whose size it holds exactly, is taken whole
    /// (its size added from the summary, nothing inside visited).
    fn whole(&mut self, s: &Summary) -> bool;
    /// Called on every value visited that is not a collection.
    fn leaf(&mut self, x: &Value);
}

/// Adds collection `v`'s size to `s` from its summary if it has it exactly and `visit`
/// takes it whole.
#[inline(always)]
fn taken_whole(v: &Value, s: &mut Size, visit: &mut impl Visit) -> bool {
    let Some(sum) = v.summary() else {
        return false;
    };
    match sum.size() {
        Some((e, b)) if visit.whole(sum) => {
            s.elements = s.elements.saturating_add(e);
            s.bytes = s.bytes.saturating_add(b);
            true
        }
        _ => false,
    }
}

/// The walk of [`expanded_size`] and [`output_facts`].
fn walk(v: &Value, cap: Size, visit: &mut impl Visit) -> Size {
    let mut s = Size::default();
    if taken_whole(v, &mut s, visit) {
        return s;
    }
    let mut deep: Vec<&Value> = Vec::new();
    add(v, cap, &mut s, 0, &mut deep, visit);
    while let Some(v) = deep.pop() {
        if s.exceeds(cap) {
            break;
        }
        add(v, cap, &mut s, 0, &mut deep, visit);
    }
    s
}

/// How deep [`expanded_size`] recurses before it uses a heap stack.
const RECURSION: u32 = 48;

/// Adds `v` (at recursion depth `depth`) to `s`; parts deeper than [`RECURSION`] go to
/// `deep`.
fn add<'v, V: Visit>(
    v: &'v Value,
    cap: Size,
    s: &mut Size,
    depth: u32,
    deep: &mut Vec<&'v Value>,
    visit: &mut V,
) {
    let mut child = |x: &'v Value, s: &mut Size, visit: &mut V| match x {
        Value::String(t) => s.bytes = s.bytes.saturating_add(t.len() as u64),
        _ if !is_collection(x) => visit.leaf(x),
        _ if s.exceeds(cap) => {}
        _ if taken_whole(x, s, visit) => {}
        _ if depth < RECURSION => add(x, cap, s, depth + 1, deep, visit),
        _ => deep.push(x),
    };
    match v {
        Value::List(q) | Value::Set(q) | Value::Tuple(q) => {
            s.elements = s.elements.saturating_add(q.items.len() as u64);
            for x in &q.items {
                child(x, s, visit);
            }
        }
        Value::Map(f) | Value::Object(f) => {
            s.elements = s.elements.saturating_add(f.entries.len() as u64);
            for (k, x) in &f.entries {
                s.bytes = s.bytes.saturating_add(k.len() as u64);
                child(x, s, visit);
            }
        }
        Value::String(x) if depth == 0 => s.bytes = s.bytes.saturating_add(x.len() as u64),
        _ if depth == 0 => visit.leaf(v),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn copies(v: Value, n: usize) -> Value {
        Value::tuple(vec![v; n])
    }

    #[test]
    fn output_facts_measure_as_expanded_size_and_see_unknowns_and_numbers() {
        use crate::value::Type;
        let all = Size {
            elements: u64::MAX,
            bytes: u64::MAX,
        };
        let finite = |n: &Number| n.to_f64().is_finite();
        let obj = |entries: Vec<(&str, Value)>| {
            Value::object(entries.into_iter().map(|(k, v)| (k.into(), v)).collect())
        };
        let plain = obj(vec![
            ("a", copies(Value::string("xy"), 3)),
            ("b", obj(vec![("c", Value::int(7)), ("d", Value::NULL)])),
        ]);
        let f = output_facts(&plain, all, finite);
        assert_eq!(f.size, expanded_size(&plain, all));
        assert_eq!((f.unknown, f.refused_number), (false, false));
        // An unknown deep inside, a number refused deep inside, each seen.
        let deep = |leaf: Value| obj(vec![("x", copies(copies(leaf, 2), 2))]);
        let f = output_facts(&deep(Value::Unknown(Type::String)), all, finite);
        assert_eq!((f.unknown, f.refused_number), (true, false));
        let half = || Value::Number(Number::from_f64(0.5).expect("finite"));
        let f = output_facts(&deep(half()), all, |_| false);
        assert_eq!((f.unknown, f.refused_number), (false, true));
        // A small integer is carried by every output: not asked about.
        let f = output_facts(&deep(Value::int(3)), all, |_| false);
        assert_eq!((f.unknown, f.refused_number), (false, false));
        // Where a part holds a number to look at, an unknown beside it is still seen,
        // and the size is the same.
        let both = obj(vec![
            ("n", deep(half())),
            ("u", deep(Value::Unknown(Type::String))),
        ]);
        let f = output_facts(&both, all, |_| false);
        assert_eq!((f.unknown, f.refused_number), (true, true));
        assert_eq!(f.size, expanded_size(&both, all));
        // A scalar on its own is a leaf too.
        let f = output_facts(&Value::Unknown(Type::Dynamic), all, finite);
        assert!(f.unknown);
        assert_eq!(f.size, Size::default());
        let f = output_facts(&Value::string("abc"), all, finite);
        assert_eq!(f.size.bytes, 3);
    }

    #[test]
    fn expanded_size_sees_through_sharing_and_stops_at_the_cap() {
        let mut v = Value::string("abc");
        for _ in 0..9 {
            v = copies(v, 10);
        }
        // 10^9 strings of 3 bytes, described by 9 tuples of 10 elements.
        let all = Size {
            elements: u64::MAX,
            bytes: u64::MAX,
        };
        let small = expanded_size(&copies(Value::string("abc"), 10), all);
        assert_eq!(
            small,
            Size {
                elements: 10,
                bytes: 30
            }
        );
        let cap = Size {
            elements: 1000,
            bytes: u64::MAX,
        };
        // Within the summaries' 32-bit counters: known without a walk.
        assert_eq!(
            expanded_size(&v, cap),
            Size {
                elements: 1_111_111_110,
                bytes: 3_000_000_000
            }
        );
        // Past them (10^10 strings), walked: the first part's summary is past the cap,
        // and the walk stops there.
        let w = copies(v.clone(), 10);
        let s = expanded_size(&w, cap);
        assert!(s.exceeds(cap));
        assert_eq!(s.elements, 10 + 1_111_111_110, "{s:?}");
        assert_eq!(expanded_size(&w, all).elements, 11_111_111_110);
    }

    #[test]
    fn deep_values_are_measured_without_deep_recursion() {
        let mut v = Value::string("ab");
        // Deeper than the recursion (values this deep cannot be built by a program: each
        // level is charged the levels below, so the budget stops it near 2,800 levels).
        for _ in 0..1_000 {
            v = Value::tuple(vec![v, Value::int(1)]);
        }
        let all = Size {
            elements: u64::MAX,
            bytes: u64::MAX,
        };
        assert_eq!(
            expanded_size(&v, all),
            Size {
                elements: 2_000,
                bytes: 2
            }
        );
        let obj = Value::object(vec![("key".into(), Value::string("value"))]);
        assert_eq!(
            expanded_size(&obj, all),
            Size {
                elements: 1,
                bytes: 8
            }
        );
        assert_eq!(expanded_size(&Value::string("abc"), all).bytes, 3);
    }

    #[test]
    fn charges_fail_past_the_budget_and_stay_failed() {
        begin(10, 5, None);
        assert_eq!(elements("flatten", 10), Ok(()));
        assert_eq!(bytes("join", 5), Ok(()));
        let e = elements("flatten", 1).unwrap_err();
        assert_eq!(e.resource, Resource::Elements);
        assert_eq!(
            e.to_string(),
            "flatten exceeded the evaluation's budget of collection elements"
        );
        assert_eq!(bytes("join", 0).unwrap_err(), e);
        let m = end();
        assert_eq!((m.elements, m.bytes), (11, 5));
        assert_eq!(m.exceeded, Some(e));
        // Without a meter nothing fails.
        assert_eq!(elements("flatten", u64::MAX / 2), Ok(()));
    }
}
