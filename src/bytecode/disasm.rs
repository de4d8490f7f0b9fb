//! A readable listing of compiled chunks, for tests and debugging (`fn-hcl analyze --disassemble`).

use crate::bytecode::code::{ChunkId, Code, Op, Piece};
use crate::value::Value;
use std::fmt::Write as _;

/// The instructions of one chunk, one per line, with constants and names resolved.
/// Jump targets are printed relative to the chunk's first instruction.
pub fn disassemble(program: &Code, chunk: ChunkId) -> String {
    let Some(info) = program.chunks.get(chunk.0 as usize) else {
        return String::new();
    };
    let base = info.start as usize;
    let rel = |t: u32| (t as usize).saturating_sub(base);
    let mut out = String::new();
    if info.temps > 0 {
        let _ = writeln!(out, "; temps: {}", info.temps);
    }
    let mut pc = base;
    while let Some(op) = program.code.get(pc) {
        let text = match *op {
            Op::Const { index, .. } => format!(
                "const {}",
                program
                    .consts
                    .get(index as usize)
                    .map(show)
                    .unwrap_or_default()
            ),
            Op::Attr { name, .. } => format!(
                "attr .{}",
                program
                    .names
                    .get(name as usize)
                    .map(|s| &**s)
                    .unwrap_or("?")
            ),
            Op::IndexConst { key, .. } => format!(
                "index [{}]",
                program
                    .consts
                    .get(key as usize)
                    .map(show)
                    .unwrap_or_default()
            ),
            Op::SlotPath { slot, path, .. } => {
                let names = program.paths.get(path as usize).map(|steps| {
                    steps
                        .iter()
                        .map(|s| format!(".{}", s.key))
                        .collect::<String>()
                });
                format!("slot_path s{slot}{}", names.unwrap_or_default())
            }
            Op::MakeObjectConst(i) => format!(
                "make_object_const {{{}}}",
                program
                    .shapes
                    .get(i as usize)
                    .map(|s| s
                        .keys
                        .iter()
                        .map(|(k, _)| &**k)
                        .collect::<Vec<_>>()
                        .join(", "))
                    .unwrap_or_default()
            ),
            // The parts as the template reads: literal text, and `${}` for each value
            // taken from the stack.
            Op::Template { n, site } => format!(
                "template {n} {:?}",
                program
                    .templates
                    .get(site as usize)
                    .map(|t| t
                        .parts
                        .iter()
                        .map(|p| match p {
                            Piece::Text(s) => s.to_string(),
                            Piece::Value(_) => "${}".to_string(),
                        })
                        .collect::<String>())
                    .unwrap_or_default()
            ),
            Op::ForBegin {
                end, object, group, ..
            } => {
                format!("for_begin end={} object={object} group={group}", rel(end))
            }
            Op::ForPreCheck { end, .. } => format!("for_precheck end={}", rel(end)),
            Op::ForNext { exit } => format!("for_next exit={}", rel(exit)),
            Op::ForFilter { next, .. } => format!("for_filter next={}", rel(next)),
            Op::ForPush { next, .. } => format!("for_push next={}", rel(next)),
            Op::ForKey { next, .. } => format!("for_key next={}", rel(next)),
            Op::SplatBegin { end, .. } => format!("splat_begin end={}", rel(end)),
            Op::SplatNext { temp, exit } => format!("splat_next t{temp} exit={}", rel(exit)),
            Op::SplatPush { next } => format!("splat_push next={}", rel(next)),
            Op::ExpandBegin { end, .. } => format!("expand_begin end={}", rel(end)),
            Op::TryDepCheck { end, can } => format!("try_dep_check end={} can={can}", rel(end)),
            Op::TryArg { end, can } => format!("try_arg end={} can={can}", rel(end)),
            Op::TryTraversal { end, can } => {
                format!("try_traversal end={} can={can}", rel(end))
            }
            Op::Call { call, argc } => format!(
                "call {}/{argc}",
                program
                    .calls
                    .get(call as usize)
                    .map(|c| &*c.name)
                    .unwrap_or("?")
            ),
            Op::Invoke { func, .. } => format!(
                "invoke {}",
                program
                    .functions
                    .get(func as usize)
                    .map(|f| &*f.name)
                    .unwrap_or("<missing>")
            ),
            Op::InvokeBound { func, binding, .. } => format!(
                "invoke_bound {} slots={:?}",
                program
                    .functions
                    .get(func as usize)
                    .map(|f| &*f.name)
                    .unwrap_or("<missing>"),
                program.bindings.get(binding as usize).map(|b| &b.slots)
            ),
            Op::Fail(i) => format!(
                "fail {:?}",
                program
                    .diags
                    .get(i as usize)
                    .map(|d| &*d.summary)
                    .unwrap_or("")
            ),
            other => {
                let debug = format!("{other:?}");
                snake(debug.split(['{', '(']).next().unwrap_or("").trim()) + &operand_suffix(&other)
            }
        };
        // A load that carries the `Mark` before it reads as the two it replaces.
        let text = if op.carries_mark() {
            format!("mark_{text}")
        } else {
            text
        };
        let _ = writeln!(out, "{:04} {text}", pc - base);
        if *op == Op::Return {
            break;
        }
        pc += 1;
    }
    out
}

fn operand_suffix(op: &Op) -> String {
    match op {
        Op::Slot { slot, .. } => format!(" s{slot}"),
        Op::Temp { temp, .. } => format!(" t{temp}"),
        Op::Unary { op, .. } => format!(" {op:?}"),
        Op::Binary { op, .. } | Op::Logic { op, .. } | Op::LogicRhs { op } => {
            format!(" {}", op.symbol())
        }
        Op::BranchBegin(b) => format!(" {b}"),
        Op::MakeTuple(n) | Op::MakeObject(n) => format!(" {n}"),
        Op::ConvArg { arg, .. } => format!(" #{arg}"),
        Op::CallExpanded { nstatic, .. } => format!(" static={nstatic}"),
        _ => String::new(),
    }
}

/// `CondSelect` -> `cond_select`.
fn snake(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    for (i, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// A compact rendering of a constant.
fn show(v: &Value) -> String {
    match v {
        Value::Null(_) => "null".into(),
        Value::Unknown(t) => format!("unknown({t})"),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_cty_string(),
        Value::String(s) => format!("{s:?}"),
        Value::List(s) | Value::Set(s) | Value::Tuple(s) => format!(
            "[{}]",
            s.items.iter().map(show).collect::<Vec<_>>().join(", ")
        ),
        Value::Map(f) | Value::Object(f) => format!(
            "{{{}}}",
            f.entries
                .iter()
                .map(|(k, v)| format!("{k} = {}", show(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}
