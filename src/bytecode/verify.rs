//! A check of compiled chunks against the stack effects [`Op::effects`] documents: every
//! path through a chunk keeps each stack's depth consistent (the same depth wherever two
//! paths meet, never below empty), jumps stay in the chunk, operands name entries that
//! exist, and the chunk returns exactly one value with every bookkeeping stack empty.
//!
//! The compiler runs it on each chunk it finishes in debug builds, so a compiler/VM
//! disagreement fails at compile time, where it is made; the fuzzers run it too.

use crate::bytecode::code::{Aux, ChunkId, Code, Op};

/// The depth of the value stack and of each bookkeeping stack.
type Depths = (u32, [u32; 7]);

/// `Ok` when the chunk is consistent; otherwise the first problem found, naming the chunk
/// and the instruction (its index relative to the chunk's start).
pub fn verify(code: &Code, chunk: ChunkId) -> Result<(), String> {
    let Some(range) = code.chunk_range(chunk) else {
        return Err(format!("chunk {}: no such chunk", chunk.0));
    };
    let temps = code.chunks[chunk.0 as usize].temps;
    let mut seen: Vec<Option<Depths>> = vec![None; range.len()];
    let mut work: Vec<(usize, Depths)> = vec![(range.start, (0, [0; 7]))];
    let fail = |pc: usize, problem: String| {
        let op = code.code.get(pc);
        Err(format!(
            "chunk {}, instruction {} ({op:?}): {problem}",
            chunk.0,
            pc - range.start
        ))
    };
    while let Some((pc, depths)) = work.pop() {
        if !range.contains(&pc) {
            return fail(pc, "jump out of the chunk".into());
        }
        match seen[pc - range.start] {
            Some(d) if d == depths => continue,
            Some(d) => {
                return fail(pc, format!("reached with depths {depths:?} and {d:?}"));
            }
            None => seen[pc - range.start] = Some(depths),
        }
        let op = code.code[pc];
        if let Err(problem) = operands(code, op, temps) {
            return fail(pc, problem);
        }
        let Some(effects) = op.effects(code) else {
            // Return: the chunk's one value, nothing else left.
            if depths != (1, [0; 7]) {
                return fail(pc, format!("returns with depths {depths:?}"));
            }
            if pc + 1 != range.end {
                return fail(pc, "a return before the chunk's end".into());
            }
            continue;
        };
        let apply = |e: crate::bytecode::code::Effect| -> Result<Depths, String> {
            let values = depths
                .0
                .checked_sub(e.pops)
                .ok_or_else(|| format!("pops {} of {} values", e.pops, depths.0))?
                + e.pushes;
            let mut aux = depths.1;
            for a in Aux::ALL {
                let i = a as usize;
                aux[i] = aux[i]
                    .checked_add_signed(i32::from(e.aux[i]))
                    .ok_or_else(|| format!("pops the empty {a:?} stack"))?;
            }
            Ok((values, aux))
        };
        if let Some(e) = effects.next {
            match apply(e) {
                Ok(d) => work.push((pc + 1, d)),
                Err(problem) => return fail(pc, problem),
            }
        }
        if let Some((target, e)) = effects.jump {
            match apply(e) {
                Ok(d) => work.push((target as usize, d)),
                Err(problem) => return fail(pc, problem),
            }
        }
    }
    Ok(())
}

/// The operands of `op` name entries the code has (a user function may be missing: a call
/// to it fails at run time, as in Go).
fn operands(code: &Code, op: Op, temps: u32) -> Result<(), String> {
    let has = |what: &str, i: u32, len: usize| {
        if (i as usize) < len {
            Ok(())
        } else {
            Err(format!("{what} {i} of {len}"))
        }
    };
    let site = |ok: bool| {
        if ok {
            Ok(())
        } else {
            Err("a missing site, or a site of another kind".to_string())
        }
    };
    let call = |i: u32| has("call site", i, code.calls.len());
    match op {
        Op::Const { index: i, .. } | Op::IndexConst { key: i, .. } => {
            has("constant", i, code.consts.len())?;
            if let Op::IndexConst { site: s, .. } = op {
                site(code.site(s).is_some())?;
            }
            Ok(())
        }
        Op::Temp { temp: i, .. } | Op::SplatNext { temp: i, .. } => {
            has("temporary", i, temps as usize)
        }
        Op::Fail(i) => has("diagnostic", i, code.diags.len()),
        Op::SlotPath { path, .. } => {
            let steps = code.paths.get(path as usize);
            let steps = steps.ok_or_else(|| format!("path {path} of {}", code.paths.len()))?;
            for s in steps.iter() {
                has("name", s.name, code.names.len())?;
                site(code.site(s.site).is_some())?;
            }
            Ok(())
        }
        Op::Attr { name, site: s } => {
            has("name", name, code.names.len())?;
            site(code.site(s).is_some())
        }
        Op::Index { site: s } => site(code.site(s).is_some()),
        Op::Unary { site: s, .. } => site(code.site(s).is_some()),
        Op::Binary { site: s, .. } | Op::Logic { site: s, .. } => site(code.site(s).is_some()),
        Op::CondMerge { site: s } => site(code.site(s).is_some()),
        Op::ObjItem { site: s } => site(code.site(s).is_some()),
        Op::TemplateJoin { site: s } => site(code.site(s).is_some()),
        Op::ForBegin {
            site: s,
            key_temp,
            val_temp,
            ..
        } => {
            has("temporary", key_temp, temps as usize)?;
            has("temporary", val_temp, temps as usize)?;
            site(code.site(s).is_some())
        }
        Op::ForPreCheck { site: s, .. }
        | Op::ForFilter { site: s, .. }
        | Op::ForKey { site: s, .. }
        | Op::ForPush { site: s, .. } => site(code.site(s).is_some()),
        Op::SplatBegin { site: s, .. } => site(code.site(s).is_some()),
        Op::MakeObjectConst(i) => has("object shape", i, code.shapes.len()),
        Op::InvokeBound {
            call: c,
            func,
            binding,
        } => {
            call(c)?;
            has("argument binding", binding, code.bindings.len())?;
            has("user function", func, code.functions.len())?;
            let (b, f) = (
                &code.bindings[binding as usize],
                &code.functions[func as usize],
            );
            if b.slots.len() != f.args.len() {
                return Err(format!(
                    "binds {} arguments of a function of {}",
                    b.slots.len(),
                    f.args.len()
                ));
            }
            match b.slots.iter().flatten().find(|&&i| i >= b.values) {
                Some(i) => Err(format!("binds value {i} of {}", b.values)),
                None => Ok(()),
            }
        }
        Op::Template { n, site: s } => {
            has("template site", s, code.templates.len())?;
            let values = code.templates[s as usize].values();
            if values == n as usize {
                Ok(())
            } else {
                Err(format!("joins {n} values for a site of {values}"))
            }
        }
        Op::ConvArg { call: c, .. }
        | Op::Call { call: c, .. }
        | Op::ExpandBegin { call: c, .. }
        | Op::CallExpanded { call: c, .. }
        | Op::Invoke { call: c, .. }
        | Op::TryFail { call: c, .. } => call(c),
        Op::MemoBegin { memo, .. } | Op::MemoEnd { memo } => has("memo", memo, code.memos as usize),
        Op::Slot { .. }
        | Op::Mark
        | Op::LogicRhs { .. }
        | Op::CondSelect
        | Op::BranchBegin(_)
        | Op::BranchEnd
        | Op::MakeTuple(_)
        | Op::KeyDone
        | Op::MakeObject(_)
        | Op::ForNext { .. }
        | Op::ForEnd
        | Op::SplatPush { .. }
        | Op::SplatEnd
        | Op::TryBegin
        | Op::Probe
        | Op::TryDepCheck { .. }
        | Op::TryArg { .. }
        | Op::TryTraversal { .. }
        | Op::Return => Ok(()),
    }
}
