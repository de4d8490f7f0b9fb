//! go-cty-yaml v1.1.0's YAML: `yamlencode` reproduces libyaml's emitter for the event
//! stream go-cty-yaml sends (block style, every string double-quoted or a literal block,
//! `...` after a bare root scalar), and `yamldecode` resolves scalars with YAML 1.1 rules
//! as go-cty-yaml does (`yes`/`on`/`y` are booleans, dates become RFC 3339 strings, keys
//! are converted to strings), on top of yaml-rust2's event parser.

use crate::text::quote::go_quote;
use crate::value::gotime::{days_in, getnum};
use crate::value::number::Number;
use crate::value::{Str, Value};
use std::collections::{HashMap, HashSet};
use yaml_rust2::parser::{Event, Parser, Tag};
use yaml_rust2::scanner::{Marker, ScanError, TScalarStyle};

/// Deepest nesting `decode` accepts (keeps recursion bounded on hostile input).
pub const MAX_DEPTH: usize = 1000;
/// Most aliases (`*name`) one document may use (fn-hcl's limit, as hardened YAML loaders
/// have one): real documents use a handful.
pub const MAX_ALIASES: u64 = 10_000;
/// Most values one document may expand to, every alias counted as the copy of its anchor
/// it stands for (a "billion laughs" document describes 10^9 values in a few hundred
/// bytes). The evaluation's element budget applies too when it is lower.
pub const MAX_EXPANDED_VALUES: u64 = 4_000_000;
/// Most string bytes one document may expand to, aliases counted as copies.
pub const MAX_EXPANDED_BYTES: u64 = 64 << 20;

// ---------------------------------------------------------------------------------------
// Encoding: libyaml's emitter, for the subset of events go-cty-yaml produces.

const BEST_INDENT: i64 = 2;
const BEST_WIDTH: i64 = 80;

#[derive(Clone, Copy, PartialEq)]
enum Style {
    Double,
    Literal,
}

struct Emitter {
    out: String,
    column: i64,
    indent: i64,
    indents: Vec<i64>,
    whitespace: bool,
    indention: bool,
    open_ended: bool,
    root_context: bool,
    mapping_context: bool,
    simple_key_context: bool,
    /// A number's text, reused from one number to the next.
    scratch: String,
}

/// What libyaml's `yaml_emitter_analyze_scalar` finds out about a scalar.
struct Analysis {
    multiline: bool,
    block_allowed: bool,
}

/// libyaml's `is_printable` on a code point.
fn is_printable(c: char) -> bool {
    let u = c as u32;
    u == 0x0A
        || (0x20..=0x7E).contains(&u)
        || (0xA0..=0xD7FF).contains(&u)
        || ((0xE000..=0xFFFD).contains(&u) && u != 0xFEFF)
}

fn is_break(c: char) -> bool {
    matches!(c, '\r' | '\n' | '\u{85}' | '\u{2028}' | '\u{2029}')
}

fn analyze(value: &str) -> Analysis {
    if value.is_empty() {
        return Analysis {
            multiline: false,
            block_allowed: false,
        };
    }
    // Printable ASCII (the common case) has no break and nothing special.
    if value.bytes().all(|b| (0x20..=0x7E).contains(&b)) {
        return Analysis {
            multiline: false,
            block_allowed: !value.ends_with(' '),
        };
    }
    analyze_chars(value)
}

/// [`analyze`] character by character, as libyaml does it.
fn analyze_chars(value: &str) -> Analysis {
    let trailing_space = value.ends_with(' ');
    let mut line_breaks = false;
    let mut special = false;
    let mut space_break = false;
    let mut previous_space = false;
    for c in value.chars() {
        if !is_printable(c) || c == '\u{FEFF}' {
            special = true;
        }
        if c == ' ' {
            previous_space = true;
        } else if is_break(c) {
            line_breaks = true;
            if previous_space {
                space_break = true;
            }
            previous_space = false;
        } else {
            previous_space = false;
        }
    }
    Analysis {
        multiline: line_breaks,
        block_allowed: !(trailing_space || space_break || special),
    }
}

/// Printable ASCII without a space, quote or backslash: written double-quoted as it is
/// (libyaml's character loop writes each as itself, and only a space may break a line).
fn quotes_as_is(value: &str) -> bool {
    value.bytes().all(|b| AS_IS[b as usize])
}

/// Printable ASCII without a quote or backslash, spaces allowed: written double-quoted
/// as it is wherever no space can fold the line (a simple key, or a scalar ending by
/// column 80).
fn spaced_as_is(value: &str) -> bool {
    value.bytes().all(|b| SPACED_AS_IS[b as usize])
}

/// The bytes [`spaced_as_is`] lets through: [`AS_IS`] and the space.
static SPACED_AS_IS: [bool; 256] = {
    let mut t = AS_IS;
    t[b' ' as usize] = true;
    t
};

/// The bytes [`quotes_as_is`] lets through, by value: a table look per byte instead of
/// three comparisons.
static AS_IS: [bool; 256] = {
    let mut t = [false; 256];
    let mut b = 0x21;
    while b <= 0x7E {
        t[b] = b != b'"' as usize && b != b'\\' as usize;
        b += 1;
    }
    t
};

/// `n` spaces (indentation), a run at a time.
fn push_spaces(out: &mut String, mut n: usize) {
    const SPACES: &str = "                                ";
    while n > 0 {
        let k = n.min(SPACES.len());
        out.push_str(&SPACES[..k]);
        n -= k;
    }
}

/// A number as go-cty-yaml writes it: cty's decimal text, and an infinity as
/// `big.Float.Text('f', -1)` spells it (not YAML's `.inf`). A node is charged 8 bytes
/// before it is written; a longer text (1e39000 has 39,001 digits) is charged the rest
/// before it is copied, or, for a long one, made.
fn push_number(out: &mut String, n: &Number) -> Result<(), String> {
    if n.is_infinite() {
        out.push_str(if n.is_negative() { "-Inf" } else { "+Inf" });
        return Ok(());
    }
    n.with_charged_cty_text(
        |len| {
            if len > 8 {
                charge_more(len - 8)
            } else {
                Ok(())
            }
        },
        |t| out.push_str(t),
    )
}

/// Charges `n` bytes written beyond a node's own charge (escapes, folded lines, the
/// indentation of a literal's lines, a long number), before they are written.
fn charge_more(n: usize) -> Result<(), String> {
    crate::value::meter::bytes("yamlencode", n as u64).map_err(|e| e.to_string())
}

impl Emitter {
    fn new() -> Self {
        Emitter {
            // Most documents are a few hundred bytes: one allocation instead of six.
            out: String::with_capacity(256),
            column: 0,
            indent: -1,
            indents: Vec::new(),
            whitespace: true,
            indention: true,
            open_ended: false,
            root_context: false,
            mapping_context: false,
            simple_key_context: false,
            scratch: String::new(),
        }
    }

    fn put(&mut self, c: char) {
        self.out.push(c);
        self.column += 1;
    }

    fn put_break(&mut self) {
        self.out.push('\n');
        self.column = 0;
    }

    fn write_str(&mut self, s: &str) {
        self.out.push_str(s);
        let chars = if s.is_ascii() {
            s.len()
        } else {
            s.chars().count()
        };
        self.column = self.column.saturating_add(chars as i64);
    }

    fn increase_indent(&mut self, flow: bool, indentless: bool) {
        self.indents.push(self.indent);
        if self.indent < 0 {
            self.indent = if flow { BEST_INDENT } else { 0 };
        } else if !indentless {
            self.indent += BEST_INDENT;
        }
    }

    fn restore_indent(&mut self) {
        self.indent = self.indents.pop().unwrap_or(-1);
    }

    fn write_indent(&mut self) {
        let indent = self.indent.max(0);
        if !self.indention || self.column > indent || (self.column == indent && !self.whitespace) {
            self.put_break();
        }
        if self.column < indent {
            push_spaces(&mut self.out, (indent - self.column) as usize);
            self.column = indent;
        }
        self.whitespace = true;
        self.indention = true;
    }

    fn write_indicator(
        &mut self,
        ind: &str,
        need_whitespace: bool,
        is_whitespace: bool,
        is_indention: bool,
    ) {
        if need_whitespace && !self.whitespace {
            self.put(' ');
        }
        // Every indicator is ASCII: one column per byte.
        self.out.push_str(ind);
        self.column = self.column.saturating_add(ind.len() as i64);
        self.whitespace = is_whitespace;
        self.indention = self.indention && is_indention;
        self.open_ended = false;
    }

    fn set_context(&mut self, root: bool, mapping: bool, simple_key: bool) {
        self.root_context = root;
        self.mapping_context = mapping;
        self.simple_key_context = simple_key;
    }

    fn emit_node(
        &mut self,
        v: &Value,
        root: bool,
        mapping: bool,
        simple_key: bool,
    ) -> Result<(), String> {
        self.set_context(root, mapping, simple_key);
        // Charged before it is written (see `json::encode_into`): a string's bytes, a few
        // for anything else, and its indentation.
        let n = match v {
            Value::String(s) => s.len() + 4,
            Value::List(q) | Value::Set(q) | Value::Tuple(q) => q.items.len() * 4 + 4,
            Value::Map(f) | Value::Object(f) => {
                f.entries.iter().map(|(k, _)| k.len() + 4).sum::<usize>() + 4
            }
            _ => 8,
        };
        self.charge(n)?;
        match v {
            // A plain scalar without a break stays plain in every context (`emit_scalar`
            // changes only multi-line or block styles), and writing it reads no
            // indentation: written straight.
            Value::Null(_) => {
                self.write_plain("null");
                Ok(())
            }
            Value::Unknown(_) => Err("cannot serialize unknown value as YAML".into()),
            Value::Bool(b) => {
                self.write_plain(if *b { "true" } else { "false" });
                Ok(())
            }
            Value::Number(n) => {
                let mut text = std::mem::take(&mut self.scratch);
                text.clear();
                let pushed = push_number(&mut text, n);
                if pushed.is_ok() {
                    self.write_plain(&text);
                }
                self.scratch = text;
                pushed
            }
            Value::String(s) if quotes_as_is(s) => {
                self.write_as_is(s);
                Ok(())
            }
            Value::String(s) => {
                let style = if s.contains('\n') {
                    Style::Literal
                } else {
                    Style::Double
                };
                self.emit_scalar(s, style)
            }
            Value::List(seq) | Value::Set(seq) | Value::Tuple(seq) => {
                if seq.items.is_empty() {
                    self.write_indicator("[", true, true, false);
                    self.increase_indent(true, false);
                    self.restore_indent();
                    self.write_indicator("]", false, false, false);
                    return Ok(());
                }
                let indentless = self.mapping_context && !self.indention;
                self.increase_indent(false, indentless);
                for item in &seq.items {
                    self.write_indent();
                    self.write_indicator("-", true, false, true);
                    self.emit_node(item, false, false, false)?;
                }
                self.restore_indent();
                Ok(())
            }
            Value::Map(f) | Value::Object(f) => {
                if f.entries.is_empty() {
                    self.write_indicator("{", true, true, false);
                    self.increase_indent(true, false);
                    self.restore_indent();
                    self.write_indicator("}", false, false, false);
                    return Ok(());
                }
                self.increase_indent(false, false);
                for (k, item) in &f.entries {
                    self.write_indent();
                    // A key that needs no analysis (`quotes_as_is`: no break) is simple.
                    let as_is = k.len() <= 128 && quotes_as_is(k);
                    let simple = as_is || (k.len() <= 128 && !analyze(k).multiline);
                    if simple {
                        if as_is {
                            // `emit_node` of the key as a simple key, its case known.
                            self.set_context(false, true, true);
                            self.charge(k.len() + 4)?;
                            self.write_as_is(k);
                        } else {
                            self.emit_node(&Value::String(k.clone()), false, true, true)?;
                        }
                        self.write_indicator(":", false, false, false);
                    } else {
                        self.write_indicator("?", true, false, true);
                        self.emit_node(&Value::String(k.clone()), false, true, false)?;
                        self.write_indent();
                        self.write_indicator(":", true, false, true);
                    }
                    self.emit_node(item, false, true, false)?;
                }
                self.restore_indent();
                Ok(())
            }
        }
    }

    /// Charges a node of `n` bytes, and its indentation, before it is written.
    fn charge(&self, n: usize) -> Result<(), String> {
        let n = n + self.indent.max(0) as usize;
        crate::value::meter::bytes_and_tick("yamlencode", n as u64).map_err(|e| e.to_string())
    }

    /// A string [`quotes_as_is`] holds for, in any context: `emit_scalar` without its
    /// analysis (no break, so double-quoted; no space, so no line break in it), and
    /// without the indentation it raises and restores around the scalar (a scalar written
    /// as it is never reads it).
    fn write_as_is(&mut self, s: &str) {
        self.write_indicator("\"", true, false, false);
        self.out.push_str(s);
        self.column = self.column.saturating_add(s.len() as i64);
        self.close_double_quoted();
    }

    fn emit_scalar(&mut self, value: &str, requested: Style) -> Result<(), String> {
        let a = analyze(value);
        let mut style = requested;
        if self.simple_key_context && a.multiline {
            style = Style::Double;
        }
        if style == Style::Literal && (!a.block_allowed || self.simple_key_context) {
            style = Style::Double;
        }
        self.increase_indent(true, false);
        let written = match style {
            Style::Double => {
                self.write_double_quoted(value, !self.simple_key_context, quotes_as_is(value))
            }
            Style::Literal => self.write_literal(value),
        };
        self.restore_indent();
        written
    }

    fn write_plain(&mut self, value: &str) {
        if !self.whitespace {
            self.put(' ');
        }
        self.write_str(value);
        self.whitespace = false;
        self.indention = false;
        if self.root_context {
            self.open_ended = true;
        }
    }

    /// A double-quoted scalar; `as_is`: [`quotes_as_is`] holds for `value` (the caller
    /// knows it), so its inside is itself, one column per byte.
    fn write_double_quoted(
        &mut self,
        value: &str,
        allow_breaks: bool,
        as_is: bool,
    ) -> Result<(), String> {
        if as_is {
            self.write_as_is(value);
            return Ok(());
        }
        self.write_indicator("\"", true, false, false);
        self.write_double_quoted_chars(value, allow_breaks)?;
        self.close_double_quoted();
        Ok(())
    }

    fn close_double_quoted(&mut self) {
        self.write_indicator("\"", false, false, false);
        self.whitespace = false;
        self.indention = false;
    }

    /// The inside of a double-quoted scalar, character by character as libyaml writes it.
    /// The node's charge covers the string's own bytes; what an escape or a folded line
    /// adds (a byte becomes up to four, `\x01`; a space past column 80 a line break and
    /// the indentation) is charged before it is written.
    fn write_double_quoted_chars(&mut self, value: &str, allow_breaks: bool) -> Result<(), String> {
        let mut spaces = false;
        let mut chars = value.char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            if !is_printable(c) || c == '\u{FEFF}' || is_break(c) || c == '"' || c == '\\' {
                let short = match c {
                    '\0' => Some('0'),
                    '\u{7}' => Some('a'),
                    '\u{8}' => Some('b'),
                    '\t' => Some('t'),
                    '\n' => Some('n'),
                    '\u{b}' => Some('v'),
                    '\u{c}' => Some('f'),
                    '\r' => Some('r'),
                    '\u{1b}' => Some('e'),
                    '"' => Some('"'),
                    '\\' => Some('\\'),
                    '\u{85}' => Some('N'),
                    '\u{a0}' => Some('_'),
                    '\u{2028}' => Some('L'),
                    '\u{2029}' => Some('P'),
                    _ => None,
                };
                let u = c as u32;
                let written = match (short, u) {
                    (Some(_), _) => 2,
                    (None, 0..=0xFF) => 4,
                    (None, 0x100..=0xFFFF) => 6,
                    _ => 10,
                };
                if written > c.len_utf8() {
                    charge_more(written - c.len_utf8())?;
                }
                self.put('\\');
                match short {
                    Some(e) => self.put(e),
                    None => {
                        let hex = if u <= 0xFF {
                            format!("x{u:02X}")
                        } else if u <= 0xFFFF {
                            format!("u{u:04X}")
                        } else {
                            format!("U{u:08X}")
                        };
                        self.write_str(&hex);
                    }
                }
                spaces = false;
            } else if c == ' ' {
                let next = chars.peek().map(|&(_, n)| n);
                if allow_breaks && !spaces && self.column > BEST_WIDTH && i != 0 && next.is_some() {
                    // The space becomes a line break, the indentation, and a backslash
                    // when a space follows.
                    let next_space = next == Some(' ');
                    charge_more(self.indent.max(0) as usize + usize::from(next_space))?;
                    self.write_indent();
                    if next_space {
                        self.put('\\');
                    }
                } else {
                    self.put(c);
                }
                spaces = true;
            } else {
                self.put(c);
                spaces = false;
            }
        }
        Ok(())
    }

    /// A literal block scalar. The node's charge covers the string's own bytes; the
    /// indentation of each line is charged before it is written.
    fn write_literal(&mut self, value: &str) -> Result<(), String> {
        self.write_indicator("|", true, false, false);
        // Block scalar hints.
        let first = value.chars().next();
        if first.is_some_and(|c| c == ' ' || is_break(c)) {
            let hint = char::from(b'0' + BEST_INDENT as u8).to_string();
            self.write_indicator(&hint, false, false, false);
        }
        self.open_ended = false;
        // The last two characters decide the chomping indicator.
        let mut from_end = value.chars().rev();
        let chomp = match (from_end.next(), from_end.next()) {
            (None, _) => Some('-'),
            (Some(last), _) if !is_break(last) => Some('-'),
            (Some(_), None) => {
                self.open_ended = true;
                Some('+')
            }
            (Some(_), Some(before)) if is_break(before) => {
                self.open_ended = true;
                Some('+')
            }
            _ => None,
        };
        if let Some(h) = chomp {
            let keep = self.open_ended;
            self.write_indicator(&h.to_string(), false, false, false);
            self.open_ended = keep;
        }
        self.put_break();
        self.indention = true;
        self.whitespace = true;
        let mut breaks = true;
        for c in value.chars() {
            if is_break(c) {
                if c == '\n' {
                    self.put_break();
                } else {
                    self.out.push(c);
                    self.column = 0;
                }
                self.indention = true;
                breaks = true;
            } else {
                if breaks {
                    charge_more(self.indent.max(0) as usize)?;
                    self.write_indent();
                }
                self.put(c);
                self.indention = false;
                breaks = false;
            }
        }
        Ok(())
    }
}

/// `yamlencode`: go-cty-yaml's `Marshal` output.
pub fn encode(v: &Value) -> Result<String, String> {
    Block::encode(v).unwrap_or_else(|| encode_emitted(v))
}

/// [`encode`] by the emitter, for any value.
fn encode_emitted(v: &Value) -> Result<String, String> {
    let mut e = Emitter::new();
    e.emit_node(v, true, false, false)?;
    // Document end (implicit), then stream end.
    e.write_indent();
    if e.open_ended {
        e.write_indicator("...", true, false, false);
        e.write_indent();
    }
    Ok(e.out)
}

/// The usual document, written without the emitter's state: a collection in which every
/// string is printable ASCII without a quote or backslash, written as it is (keys of at
/// most 128 bytes, simple keys; a value with a space only if it ends by column 80, where
/// no space can fold its line). For such a tree the emitter's choices are fixed: a key or
/// item on its own line at its indentation (the first of a collection that is a sequence
/// item on the item's line), a sequence in a mapping as indentless as the mapping,
/// scalars and empty collections (`[]`, `{}`) after one space, and one line break at the
/// end. The look that finds a tree fits also sums what the emitter would charge it, node
/// by node, and the sum is charged at once before anything is written (charges only add
/// up, so a budget refuses the document exactly when it refuses the emitter's). The
/// emitter's per-node state (contexts, the indentation stack, columns, flags, a charge)
/// cost ~300 instructions a node (`services-500`'s config);
/// `block_writes_what_the_emitter_writes` compares the two over generated trees.
struct Block {
    out: String,
}

/// What [`Block::fits`] learns of a tree.
struct Look {
    /// Nodes it may still visit.
    left: usize,
    /// What the emitter would charge.
    charge: usize,
}

impl Block {
    /// Most nodes [`Block::fits`] visits before it leaves a document to the emitter: the
    /// look charges nothing, and a value sharing its parts may describe far more nodes
    /// than it holds (the emitter charges as it goes).
    const MAX_NODES: usize = 1 << 14;

    /// The document of `v` if the block writer's rules cover it, charged first.
    fn encode(v: &Value) -> Option<Result<String, String>> {
        if !matches!(
            v,
            Value::List(_) | Value::Set(_) | Value::Tuple(_) | Value::Map(_) | Value::Object(_)
        ) {
            return None;
        }
        let mut look = Look {
            left: Self::MAX_NODES,
            charge: 0,
        };
        let fits = Self::fits(v, 0, Place::Start, 0, &mut look);
        crate::value::meter::walked(Self::MAX_NODES - look.left);
        if !fits {
            return None;
        }
        let charged = crate::value::meter::bytes_and_tick("yamlencode", look.charge as u64);
        if let Err(e) = charged {
            return Some(Err(e.to_string()));
        }
        let mut b = Block {
            out: String::with_capacity(look.charge.min(1 << 16)),
        };
        if let Err(e) = b.node(v, 0, Place::Start) {
            return Some(Err(e));
        }
        b.out.push('\n');
        Some(Ok(b.out))
    }

    /// The indentation of a collection whose parent is at `parent`, begun from `place`:
    /// the root's is 0, a sequence in a mapping keeps the mapping's, any other nested
    /// collection is two deeper.
    fn own_indent(v: &Value, parent: usize, place: Place) -> usize {
        match (place, v) {
            (Place::Start, _) => 0,
            (Place::Line, Value::List(_) | Value::Set(_) | Value::Tuple(_)) => parent,
            _ => parent + 2,
        }
    }

    /// Whether the node `v` (its parent at indentation `parent`, begun from `place`, the
    /// `:` or `-` before it ending at column `col`) and everything in it fit the block
    /// writer's rules; adds the emitter's charges to `look` (a node's with its parent's
    /// indentation, a key's with its mapping's).
    fn fits(v: &Value, parent: usize, place: Place, col: usize, look: &mut Look) -> bool {
        look.left = match look.left.checked_sub(1) {
            Some(n) => n,
            None => return false,
        };
        // `Emitter::emit_node`'s charge: a string's bytes and 4, a sequence's items and a
        // mapping's keys 4 each (and their bytes), 4 for either, 8 for anything else.
        let own = Self::own_indent(v, parent, place);
        match v {
            Value::Null(_) | Value::Bool(_) | Value::Number(_) => {
                look.charge += 8 + parent;
                true
            }
            Value::String(s) => {
                look.charge += s.len() + 4 + parent;
                // `write_double_quoted_chars` folds at a space past column 80 that is
                // neither the first nor the last character; the string starts at column
                // `col + 2`, after ` "`, so its last space but one is at most at
                // `col + len`.
                quotes_as_is(s) || (col + s.len() <= 80 && spaced_as_is(s))
            }
            Value::Unknown(_) => false,
            Value::List(q) | Value::Set(q) | Value::Tuple(q) => {
                look.charge += q.items.len() * 4 + 4 + parent;
                // An empty one is `[]` after a space, as a scalar is (not the root's).
                (place != Place::Start || !q.items.is_empty())
                    && q.items
                        .iter()
                        .all(|x| Self::fits(x, own, Place::AfterDash, own + 1, look))
            }
            Value::Map(f) | Value::Object(f) => {
                look.charge += 4 + parent;
                (place != Place::Start || !f.entries.is_empty())
                    && f.entries.iter().all(|(k, x)| {
                        // The key in the mapping's charge, and the key's own. A simple key
                        // is never folded: spaces in it are written as they are.
                        look.charge += 2 * (k.len() + 4) + own;
                        let col = own + k.len() + 3;
                        k.len() <= 128
                            && spaced_as_is(k)
                            && Self::fits(x, own, Place::Line, col, look)
                    })
            }
        }
    }

    /// Starts a line at `indent`, or goes on from where `place` says the writer is.
    fn line(&mut self, indent: usize, place: Place) {
        match place {
            Place::Start => {}
            Place::AfterDash => self.out.push(' '),
            Place::Line => {
                self.out.push('\n');
                push_spaces(&mut self.out, indent);
            }
        }
    }

    /// A node [`Block::fits`] accepted, as [`Block::fits`] describes its place: a
    /// collection's items start there, a scalar follows after one space.
    fn node(&mut self, v: &Value, parent: usize, place: Place) -> Result<(), String> {
        let own = Self::own_indent(v, parent, place);
        match v {
            Value::List(q) | Value::Set(q) | Value::Tuple(q) if q.items.is_empty() => {
                self.out.push_str(" []")
            }
            Value::Map(f) | Value::Object(f) if f.entries.is_empty() => self.out.push_str(" {}"),
            Value::List(q) | Value::Set(q) | Value::Tuple(q) => {
                let mut at = place;
                for item in &q.items {
                    self.line(own, at);
                    self.out.push('-');
                    self.node(item, own, Place::AfterDash)?;
                    at = Place::Line;
                }
            }
            Value::Map(f) | Value::Object(f) => {
                let mut at = place;
                for (k, x) in &f.entries {
                    self.line(own, at);
                    self.out.push('"');
                    self.out.push_str(k);
                    self.out.push_str("\":");
                    self.node(x, own, Place::Line)?;
                    at = Place::Line;
                }
            }
            Value::String(s) => {
                self.out.push_str(" \"");
                self.out.push_str(s);
                self.out.push('"');
            }
            Value::Bool(b) => self.out.push_str(if *b { " true" } else { " false" }),
            Value::Number(n) => {
                self.out.push(' ');
                push_number(&mut self.out, n)?;
            }
            _ => self.out.push_str(" null"),
        }
        Ok(())
    }
}

/// Where [`Block`] is when a node begins.
#[derive(Clone, Copy, PartialEq)]
enum Place {
    /// At the start of the document.
    Start,
    /// Right after a sequence item's `-`.
    AfterDash,
    /// After a key's `:` or a finished item: the next item takes a new line.
    Line,
}

// ---------------------------------------------------------------------------------------
// Decoding.

const STR_TAG: &str = "tag:yaml.org,2002:str";
const BOOL_TAG: &str = "tag:yaml.org,2002:bool";
const INT_TAG: &str = "tag:yaml.org,2002:int";
const FLOAT_TAG: &str = "tag:yaml.org,2002:float";
const NULL_TAG: &str = "tag:yaml.org,2002:null";
const TIMESTAMP_TAG: &str = "tag:yaml.org,2002:timestamp";
const BINARY_TAG: &str = "tag:yaml.org,2002:binary";
const MAP_TAG: &str = "tag:yaml.org,2002:map";
const SEQ_TAG: &str = "tag:yaml.org,2002:seq";

/// A resolved scalar: a value, or the `<<` merge key.
enum Scalar {
    Val(Value),
    Merge,
}

fn resolve_map(src: &str) -> Option<Value> {
    Some(match src {
        "y" | "Y" | "yes" | "Yes" | "YES" | "true" | "True" | "TRUE" | "on" | "On" | "ON" => {
            Value::Bool(true)
        }
        "n" | "N" | "no" | "No" | "NO" | "false" | "False" | "FALSE" | "off" | "Off" | "OFF" => {
            Value::Bool(false)
        }
        "" | "~" | "null" | "Null" | "NULL" => Value::NULL,
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => {
            Value::Number(Number::infinity(false))
        }
        "-.inf" | "-.Inf" | "-.INF" => Value::Number(Number::infinity(true)),
        _ => return None,
    })
}

fn is_bool_word(src: &str) -> bool {
    matches!(resolve_map(src), Some(Value::Bool(_)))
}

/// cty's `ParseNumberVal` (Go's `big.ParseFloat(s, 10, ...)`, which also reads "inf");
/// `Some(Err)` for a number beyond fn-hcl's range (see [`Number::parse_in_range`]).
fn parse_number_val(s: &str) -> Option<Result<Number, String>> {
    match s {
        "inf" | "Inf" | "+inf" | "+Inf" => Some(Ok(Number::infinity(false))),
        "-inf" | "-Inf" => Some(Ok(Number::infinity(true))),
        _ => Number::parse_in_range(s).map(|r| r.map_err(|e| e.to_string())),
    }
}

/// Go's `strconv.ParseInt(s, 0, 64)` then `ParseUint(s, 0, 64)`.
fn parse_go_int(s: &str) -> Option<Number> {
    let (neg, body) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let lower = body.to_ascii_lowercase();
    let (radix, digits) = if let Some(d) = lower.strip_prefix("0x") {
        (16, d)
    } else if let Some(d) = lower.strip_prefix("0o") {
        (8, d)
    } else if let Some(d) = lower.strip_prefix("0b") {
        (2, d)
    } else if lower.len() > 1 && lower.starts_with('0') {
        (8, &lower[1..])
    } else {
        (10, lower.as_str())
    };
    if digits.is_empty() {
        return None;
    }
    let mag = u64::from_str_radix(digits, radix).ok()?;
    if neg {
        if mag > 1u64 << 63 {
            return None;
        }
        Some(Number::from_i64((mag as i64).wrapping_neg()))
    } else {
        Some(Number::from_u64(mag))
    }
}

/// go-cty-yaml's `integerLiteralRegexp`: `[-+]?[0-9]+`, `0o[0-7]+` or `0x[0-9a-fA-F]+`.
fn is_yaml12_int(s: &str) -> bool {
    let all = |d: &str, f: fn(&u8) -> bool| !d.is_empty() && d.as_bytes().iter().all(f);
    if let Some(d) = s.strip_prefix("0o") {
        return all(d, |c| (b'0'..=b'7').contains(c));
    }
    if let Some(d) = s.strip_prefix("0x") {
        return all(d, u8::is_ascii_hexdigit);
    }
    all(s.strip_prefix(['-', '+']).unwrap_or(s), u8::is_ascii_digit)
}

/// go-cty-yaml's `floatLiteralRegexp`:
/// `[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?`.
fn is_yaml12_float(s: &str) -> bool {
    let b = s.strip_prefix(['-', '+']).unwrap_or(s).as_bytes();
    let digits = |from: usize| b[from..].iter().take_while(|c| c.is_ascii_digit()).count();
    let mut i = digits(0);
    if i == 0 {
        if b.first() != Some(&b'.') || digits(1) == 0 {
            return false;
        }
        i = 1 + digits(1);
    } else if b.get(i) == Some(&b'.') {
        i += 1 + digits(i + 1);
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        let mut j = i + 1;
        if matches!(b.get(j), Some(b'-' | b'+')) {
            j += 1;
        }
        let n = digits(j);
        if n == 0 {
            return false;
        }
        i = j + n;
    }
    i == b.len()
}

/// One of go-cty-yaml's timestamp layouts, parsed as Go's `time.Parse` would, formatted
/// as RFC 3339.
fn parse_timestamp_layout(s: &str, sep: Option<u8>, zone: bool) -> Option<String> {
    let mut v = s.as_bytes();
    if v.len() < 4 || !v[..4].iter().all(u8::is_ascii_digit) {
        return None;
    }
    let year: i64 = v[..4].iter().fold(0, |a, &c| a * 10 + i64::from(c - b'0'));
    v = v[4..].strip_prefix(b"-")?;
    let (month, rest) = getnum(v, false)?;
    if !(1..=12).contains(&month) {
        return None;
    }
    v = rest.strip_prefix(b"-")?;
    let (day, rest) = getnum(v, false)?;
    v = rest;
    let (mut hour, mut min, mut sec, mut offset) = (0, 0, 0, 0i64);
    if let Some(sep) = sep {
        if sep == b' ' {
            if v.first() != Some(&b' ') {
                return None;
            }
            while v.first() == Some(&b' ') {
                v = &v[1..];
            }
        } else {
            v = v.strip_prefix(&[sep])?;
        }
        let (h, rest) = getnum(v, false)?;
        if h >= 24 {
            return None;
        }
        v = rest.strip_prefix(b":")?;
        let (m, rest) = getnum(v, false)?;
        if m >= 60 {
            return None;
        }
        v = rest.strip_prefix(b":")?;
        let (sc, rest) = getnum(v, false)?;
        if sc >= 60 {
            return None;
        }
        v = rest;
        if v.len() >= 2 && (v[0] == b'.' || v[0] == b',') && v[1].is_ascii_digit() {
            let mut n = 1;
            while n < v.len() && v[n].is_ascii_digit() {
                n += 1;
            }
            v = &v[n..];
        }
        (hour, min, sec) = (h, m, sc);
        if zone {
            if v.first() == Some(&b'Z') {
                v = &v[1..];
            } else {
                if v.len() < 6 || v[3] != b':' {
                    return None;
                }
                let hr = getnum(&v[1..3], true)?.0;
                let mm = getnum(&v[4..6], true)?.0;
                if hr > 24 || mm > 60 {
                    return None;
                }
                offset = (hr * 60 + mm) * 60;
                match v[0] {
                    b'+' => {}
                    b'-' => offset = -offset,
                    _ => return None,
                }
                v = &v[6..];
            }
        }
    }
    if !v.is_empty() {
        return None;
    }
    if day < 1 || day > days_in(month, year) {
        return None;
    }
    let zone_text = if offset == 0 {
        "Z".to_string()
    } else {
        let sign = if offset < 0 { '-' } else { '+' };
        let a = offset.abs() / 60;
        format!("{sign}{:02}:{:02}", a / 60, a % 60)
    };
    Some(format!(
        "{year:04}-{month:02}-{day:02}T{hour:02}:{min:02}:{sec:02}{zone_text}"
    ))
}

/// go-cty-yaml's `parseTimestamp`.
fn parse_timestamp(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let digits = b.iter().take_while(|c| c.is_ascii_digit()).count();
    if digits != 4 || b.get(4) != Some(&b'-') {
        return None;
    }
    parse_timestamp_layout(s, Some(b'T'), true)
        .or_else(|| parse_timestamp_layout(s, Some(b't'), true))
        .or_else(|| parse_timestamp_layout(s, Some(b' '), false))
        .or_else(|| parse_timestamp_layout(s, None, false))
}

/// go-cty-yaml's `resolveScalar`.
fn resolve_scalar(tag: &str, src: &str, style: TScalarStyle) -> Result<Scalar, String> {
    let resolvable = matches!(
        tag,
        "" | STR_TAG | BOOL_TAG | INT_TAG | FLOAT_TAG | NULL_TAG | TIMESTAMP_TAG | BINARY_TAG
    );
    if !resolvable {
        return Err(format!("unsupported tag {}", go_quote(tag)));
    }
    let mut tag = tag;
    let hint = match src.as_bytes().first() {
        None => b'N',
        Some(b'+' | b'-') => b'S',
        Some(b'0'..=b'9') => b'D',
        Some(b'y' | b'Y' | b'n' | b'N' | b't' | b'T' | b'f' | b'F' | b'o' | b'O' | b'~') => b'M',
        Some(b'.') => b'.',
        Some(_) => 0,
    };
    if hint != 0 && tag != STR_TAG && tag != BINARY_TAG {
        if matches!(
            style,
            TScalarStyle::SingleQuoted | TScalarStyle::DoubleQuoted
        ) {
            return Ok(Scalar::Val(Value::string(src)));
        }
        if let Some(v) = resolve_map(src) {
            return Ok(Scalar::Val(v));
        }
        if tag.is_empty() && matches!(src, ".nan" | ".NaN" | ".NAN") {
            return Err("floating point NaN is not supported".into());
        }
        match hint {
            b'.' => {
                if let Some(n) = parse_number_val(src) {
                    return n.map(|n| Scalar::Val(Value::Number(n)));
                }
            }
            b'D' | b'S' => {
                if (tag.is_empty() || tag == TIMESTAMP_TAG)
                    && let Some(t) = parse_timestamp(src)
                {
                    return Ok(Scalar::Val(Value::string(t)));
                }
                // go-cty-yaml v1.1's YAML 1.2 core literals: no `0b`, no underscores.
                if is_yaml12_int(src) {
                    tag = INT_TAG;
                } else if is_yaml12_float(src) {
                    tag = FLOAT_TAG;
                }
            }
            _ => {}
        }
    }
    if tag.is_empty() && src == "<<" {
        return Ok(Scalar::Merge);
    }
    let cannot = || format!("cannot parse {} as {}", go_quote(src), tag);
    match tag {
        STR_TAG => Ok(Scalar::Val(Value::string(src))),
        BINARY_TAG => {
            if crate::text::base64::go_base64_decode(src.as_bytes()).is_err() {
                return Err(format!(
                    "cannot parse {} as {}: not valid base64",
                    go_quote(src),
                    tag
                ));
            }
            Ok(Scalar::Val(Value::string(src)))
        }
        BOOL_TAG => {
            if is_bool_word(src) {
                Ok(Scalar::Val(resolve_map(src).unwrap_or(Value::NULL)))
            } else {
                Err(cannot())
            }
        }
        INT_TAG | FLOAT_TAG => {
            let plain = src.replace('_', "");
            if let Some(n) = parse_number_val(&plain) {
                return n.map(|n| Scalar::Val(Value::Number(n)));
            }
            parse_go_int(&plain)
                .map(|n| Scalar::Val(Value::Number(n)))
                .ok_or_else(cannot)
        }
        TIMESTAMP_TAG => parse_timestamp(src)
            .map(|t| Scalar::Val(Value::string(t)))
            .ok_or_else(cannot),
        NULL_TAG => Ok(Scalar::Val(Value::NULL)),
        _ => Ok(Scalar::Val(Value::string(src))),
    }
}

/// A decode error: go-cty-yaml's `Error` ("on line L, column C: ...") or a bare message.
struct YamlErr(String);

/// An error at an event (go-cty-yaml's `parseEventErrorWrap`): libyaml's zero-based
/// line and a one-based column, and no position at all on the first line (line 0 is
/// taken for "no mark").
fn at(mark: &Marker, msg: &str) -> YamlErr {
    at_col(mark, mark.col(), msg)
}

fn at_col(mark: &Marker, col: usize, msg: &str) -> YamlErr {
    let line = mark.line().saturating_sub(1);
    if line == 0 {
        return YamlErr(msg.to_string());
    }
    YamlErr(format!("on line {line}, column {}: {msg}", col + 1))
}

/// The column where a node's properties (`!tag`, `&anchor`) start on its value's line:
/// libyaml's event starts at its first property, yaml-rust2's at the value.
fn node_col(src: &str, mark: &Marker) -> usize {
    let before: Vec<char> = src.chars().take(mark.index()).collect();
    let (mut i, mut col) = (before.len(), mark.col());
    for _ in 0..2 {
        let mut j = i;
        while j > 0 && matches!(before[j - 1], ' ' | '\t') {
            j -= 1;
        }
        let end = j;
        while j > 0 && !matches!(before[j - 1], ' ' | '\t' | '\n' | '\r') {
            j -= 1;
        }
        if end == j || !matches!(before[j], '!' | '&') || col < i - j {
            break;
        }
        col -= i - j;
        i = j;
    }
    col
}

/// libyaml's parser problems as yaml-rust2 words them (its parser's messages; every
/// other message comes from its scanner), with libyaml's wording.
const PARSER_PROBLEMS: &[(&str, &str)] = &[
    (
        "did not find expected <stream-start>",
        "did not find expected <stream-start>",
    ),
    (
        "did not find expected <document start>",
        "did not find expected <document start>",
    ),
    (
        "did not find expected <document-start>",
        "did not find expected <document start>",
    ),
    (
        "duplicate version directive",
        "found duplicate %YAML directive",
    ),
    (
        "the TAG directive must only be given at most once per handle in the same document",
        "found duplicate %TAG directive",
    ),
    (
        "found incompatible YAML document",
        "found incompatible YAML document",
    ),
    ("the handle wasn't declared", "found undefined tag handle"),
    ("did not find expected key", "did not find expected key"),
    (
        "did not find expected '-' indicator",
        "did not find expected '-' indicator",
    ),
    ("expected ',' or ']'", "did not find expected ',' or ']'"),
    (
        "did not find expected ',' or '}'",
        "did not find expected ',' or '}'",
    ),
    (
        "did not find expected node content",
        "did not find expected node content",
    ),
];

/// libyaml's scanner problems where yaml-rust2's scanner words them differently.
fn libyaml_scanner_problem(problem: &str) -> &str {
    match problem {
        p if p.starts_with("unexpected character: ") => {
            "found character that cannot start any token"
        }
        "tabs disallowed within this context (block indentation)" => {
            "found character that cannot start any token"
        }
        "simple key expected" | "simple key expect ':'" => "could not find expected ':'",
        // libyaml's own spelling.
        "did not find expected hexadecimal number" => "did not find expected hexdecimal number",
        p => p,
    }
}

/// A syntax error as go-cty-yaml reports libyaml's (`parserErrorWrap`): a parser error
/// at its token's zero-based line and one-based column; a scanner error at the
/// one-based line of where scanning stopped, column 1 (go-cty-yaml adds the line
/// libyaml had not advanced yet and drops the column); on the first line (zero-based
/// line 0 means "no mark" there) the bare problem.
fn scan_error(src: &str, e: &ScanError) -> YamlErr {
    let info = e.info();
    if info.contains("found unknown anchor") {
        let name = alias_name(src, e.marker());
        return at(
            e.marker(),
            &format!("reference to undefined anchor {}", go_quote(&name)),
        );
    }
    let problem = if info.starts_with("while ") {
        info.split_once(", ").map_or(info, |(_, p)| p)
    } else {
        info
    };
    let line = e.marker().line().saturating_sub(1);
    if let Some((_, libyaml)) = PARSER_PROBLEMS.iter().find(|(p, _)| *p == problem) {
        return at(e.marker(), libyaml);
    }
    let problem = libyaml_scanner_problem(problem);
    if line == 0 {
        return YamlErr(problem.to_string());
    }
    YamlErr(format!("on line {}, column 1: {problem}", line + 1))
}

/// The name of the alias (`*name`) at a marker.
fn alias_name(src: &str, mark: &Marker) -> String {
    src.chars()
        .skip(mark.index())
        .skip_while(|&c| c == '*')
        .take_while(|&c| !c.is_whitespace() && !matches!(c, ',' | '[' | ']' | '{' | '}'))
        .collect()
}

fn full_tag(tag: &Option<Tag>) -> String {
    match tag {
        Some(t) => format!("{}{}", t.handle, t.suffix),
        None => String::new(),
    }
}

struct Decoder<'a> {
    src: &'a str,
    parser: Parser<std::str::Chars<'a>>,
    /// Each anchor's value and its expanded size (values, bytes).
    anchors: HashMap<usize, (Value, u64, u64)>,
    pending: HashSet<usize>,
    /// Values and string bytes the document expands to so far, aliases as copies.
    values: u64,
    bytes: u64,
    aliases: u64,
}

impl<'a> Decoder<'a> {
    /// Whether the block scalar just read ends the input on a line without a break: the
    /// input's last line is content (not blank, not a comment) and the next event is an
    /// implicit end at the end of the input.
    fn block_scalar_runs_to_eof(&mut self) -> bool {
        if self.src.ends_with(['\n', '\r']) {
            return false;
        }
        let tail = self.src.rsplit(['\n', '\r']).next().unwrap_or("").trim();
        if tail.is_empty() || tail.starts_with('#') {
            return false;
        }
        let eof = self.src.chars().count();
        matches!(self.parser.peek(), Ok((_, m)) if m.index() >= eof)
    }

    fn next(&mut self) -> Result<(Event, Marker), YamlErr> {
        self.parser
            .next_token()
            .map_err(|e| scan_error(self.src, &e))
    }

    /// Records an anchor's value, which expanded to what was counted since `start`.
    fn complete(&mut self, anchor: usize, v: &Value, start: (u64, u64)) {
        if anchor != 0 {
            self.pending.remove(&anchor);
            self.anchors.insert(
                anchor,
                (v.clone(), self.values - start.0, self.bytes - start.1),
            );
        }
    }

    /// Counts `values` and `bytes` more of the expanded document, charged to the
    /// evaluation's meter before anything is built from them.
    fn count(&mut self, values: u64, bytes: u64, mark: &Marker) -> Result<(), YamlErr> {
        self.values = self.values.saturating_add(values);
        self.bytes = self.bytes.saturating_add(bytes);
        // The evaluation's budget first: when it is the one exceeded, the VM stops the
        // evaluation (a Fatal result) rather than fail this call alone.
        crate::value::meter::elements("yamldecode", values)
            .and_then(|()| crate::value::meter::bytes("yamldecode", bytes))
            .and_then(|()| crate::value::meter::tick("yamldecode"))
            .map_err(|e| at(mark, &e.to_string()))?;
        if self.values > MAX_EXPANDED_VALUES || self.bytes > MAX_EXPANDED_BYTES {
            return Err(at(
                mark,
                &format!(
                    "the document expands to more than {MAX_EXPANDED_VALUES} values or {MAX_EXPANDED_BYTES} string bytes through its aliases (fn-hcl's limit)"
                ),
            ));
        }
        Ok(())
    }

    fn node(&mut self, ev: Event, mark: Marker, depth: usize) -> Result<Value, YamlErr> {
        if depth > MAX_DEPTH {
            return Err(at(&mark, "exceeded max depth"));
        }
        let start = (self.values, self.bytes);
        match ev {
            Event::Scalar(mut text, style, anchor, tag) => {
                self.count(1, text.len() as u64, &mark)?;
                if matches!(style, TScalarStyle::Literal | TScalarStyle::Folded)
                    && text.ends_with('\n')
                    && self.block_scalar_runs_to_eof()
                {
                    // libyaml keeps (or clips to) the final line break only if the input
                    // has one: a block scalar whose last line ends the input has none.
                    text.pop();
                }
                let tag = full_tag(&tag);
                let v = match resolve_scalar(&tag, &text, style)
                    .map_err(|e| at_col(&mark, node_col(self.src, &mark), &e))?
                {
                    Scalar::Val(v) => v,
                    Scalar::Merge => Value::string("<<"),
                };
                self.complete(anchor, &v, start);
                Ok(v)
            }
            Event::Alias(id) => {
                self.aliases += 1;
                if self.aliases > MAX_ALIASES {
                    return Err(at(
                        &mark,
                        &format!(
                            "the document uses more than {MAX_ALIASES} aliases (fn-hcl's limit)"
                        ),
                    ));
                }
                if self.pending.contains(&id) {
                    let name = alias_name(self.src, &mark);
                    return Err(at(
                        &mark,
                        &format!(
                            "cannot refer to anchor {} from inside its own definition",
                            go_quote(&name)
                        ),
                    ));
                }
                match self.anchors.get(&id) {
                    Some((v, values, bytes)) => {
                        let (v, values, bytes) = (v.clone(), *values, *bytes);
                        self.count(values, bytes, &mark)?;
                        Ok(v)
                    }
                    None => {
                        let name = alias_name(self.src, &mark);
                        Err(at(
                            &mark,
                            &format!("reference to undefined anchor {}", go_quote(&name)),
                        ))
                    }
                }
            }
            Event::SequenceStart(anchor, tag) => {
                let tag = full_tag(&tag);
                if !tag.is_empty() && tag != SEQ_TAG {
                    return Err(at_col(
                        &mark,
                        node_col(self.src, &mark),
                        &format!("can't interpret sequence as {tag}"),
                    ));
                }
                if anchor != 0 {
                    self.pending.insert(anchor);
                }
                let mut items = Vec::new();
                loop {
                    let (ev, m) = self.next()?;
                    if let Event::SequenceEnd = ev {
                        break;
                    }
                    items.push(self.node(ev, m, depth + 1)?);
                }
                let v = Value::tuple(items);
                self.complete(anchor, &v, start);
                Ok(v)
            }
            Event::MappingStart(anchor, tag) => {
                let tag = full_tag(&tag);
                if !tag.is_empty() && tag != MAP_TAG {
                    return Err(at_col(
                        &mark,
                        node_col(self.src, &mark),
                        &format!("can't interpret mapping as {tag}"),
                    ));
                }
                if anchor != 0 {
                    self.pending.insert(anchor);
                }
                let mut entries: Vec<(Str, Value)> = Vec::new();
                loop {
                    let (ev, m) = self.next()?;
                    let (text, style, ktag) = match ev {
                        Event::MappingEnd => break,
                        Event::Scalar(text, style, _, ktag) => (text, style, ktag),
                        _ => return Err(at(&m, "only strings are allowed as mapping keys")),
                    };
                    self.count(1, text.len() as u64, &m)?;
                    let key = resolve_scalar(&full_tag(&ktag), &text, style).map_err(YamlErr)?;
                    let key = match key {
                        Scalar::Merge => {
                            let (ev, vm) = self.next()?;
                            let val = self.node(ev, vm, depth + 1)?;
                            match &val {
                                Value::Object(f) | Value::Map(f) => {
                                    for (k, v) in &f.entries {
                                        entries.push((k.clone(), v.clone()));
                                    }
                                }
                                Value::Null(_) => {
                                    return Err(at(&m, "cannot merge dynamic into mapping"));
                                }
                                other => {
                                    return Err(at(
                                        &m,
                                        &format!(
                                            "cannot merge {} into mapping",
                                            other.type_of().friendly_name()
                                        ),
                                    ));
                                }
                            }
                            continue;
                        }
                        Scalar::Val(Value::String(s)) => s,
                        Scalar::Val(Value::Bool(b)) => Str::from(if b { "true" } else { "false" }),
                        Scalar::Val(Value::Number(n)) => Str::from(n.to_cty_string().as_str()),
                        Scalar::Val(Value::Null(_)) => {
                            return Err(at(&m, "mapping key cannot be null"));
                        }
                        Scalar::Val(_) => {
                            return Err(at(&m, "only strings are allowed as mapping keys"));
                        }
                    };
                    let (ev, vm) = self.next()?;
                    let val = self.node(ev, vm, depth + 1)?;
                    entries.push((key, val));
                }
                // Later keys win, as in Go's map assignment.
                let v = Value::object(entries);
                self.complete(anchor, &v, start);
                Ok(v)
            }
            Event::DocumentStart => Err(at(&mark, "only a single document is allowed")),
            Event::StreamEnd => Err(at(&mark, "expecting value but found end of stream")),
            other => Err(at(&mark, &format!("unexpected parser event {other:?}"))),
        }
    }
}

/// `yamldecode`: one YAML document as a cty value (objects and tuples), with
/// go-cty-yaml's resolution rules and messages.
pub fn decode(src: &str) -> Result<Value, String> {
    let input = if src.is_empty() { "\n" } else { src };
    let mut d = Decoder {
        src: input,
        parser: Parser::new_from_str(input),
        anchors: HashMap::new(),
        pending: HashSet::new(),
        values: 0,
        bytes: 0,
        aliases: 0,
    };
    let run = |d: &mut Decoder<'_>| -> Result<Value, YamlErr> {
        let (ev, m) = d.next()?;
        if ev != Event::StreamStart {
            return Err(at(&m, "missing stream start token"));
        }
        let (ev, m) = d.next()?;
        if ev != Event::DocumentStart {
            return Err(at(&m, "missing start of document"));
        }
        let (ev, m) = d.next()?;
        let v = d.node(ev, m, 0)?;
        let (ev, m) = d.next()?;
        if ev == Event::DocumentStart {
            return Err(at(&m, "only a single document is allowed"));
        }
        if ev != Event::DocumentEnd {
            return Err(at(
                &m,
                &format!("unexpected extra content ({ev:?}) after value"),
            ));
        }
        let (ev, m) = d.next()?;
        if ev != Event::StreamEnd {
            return Err(at(&m, "unexpected extra content after value"));
        }
        Ok(v)
    };
    run(&mut d).map_err(|e| e.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::Type;

    fn enc(v: &Value) -> String {
        encode(v).unwrap()
    }
    #[test]
    fn ascii_fast_paths_write_what_the_character_loops_write() {
        let pieces = [
            "a",
            "Z9",
            "x-y_z.q",
            "~!#$%&'()*+,-./:;<=>?@[]^_`{|}",
            " ",
            "  ",
            "\"",
            "\\",
            "\t",
            "\n",
            "é",
            "\u{85}",
            "\u{feff}",
            "日本",
            "\u{7f}",
        ];
        let mut strings = Vec::new();
        for a in pieces {
            for b in pieces {
                strings.push(format!("{a}{b}"));
                strings.push(format!("{a}{}{b}", "word ".repeat(30)));
                strings.push(format!("{}{a}{b}", "k".repeat(90)));
            }
        }
        let mut fast = 0;
        for v in &strings {
            let (x, y) = (analyze(v), analyze_chars(v));
            assert_eq!(
                (x.multiline, x.block_allowed),
                (y.multiline, y.block_allowed),
                "{v:?}"
            );
            if v.bytes()
                .all(|b| (0x21..=0x7E).contains(&b) && b != b'"' && b != b'\\')
            {
                fast += 1;
                for column in [0, 40, 79, 80, 81, 200] {
                    let (mut e1, mut e2) = (Emitter::new(), Emitter::new());
                    e1.column = column;
                    e2.column = column;
                    e1.write_str(v);
                    e2.write_double_quoted_chars(v, true).unwrap();
                    assert_eq!((&e1.out, e1.column), (&e2.out, e2.column), "{v:?}");
                }
            }
        }
        assert!(fast > 30, "{fast}");
    }

    fn s(x: &str) -> Value {
        Value::string(x)
    }

    #[test]
    fn what_is_written_was_charged_before() {
        use crate::value::meter;
        // Deep: every space past column 80 folds to a line at the indentation.
        let mut deep = s(&"a ".repeat(200));
        for _ in 0..40 {
            deep = Value::tuple(vec![deep]);
        }
        let mut lines = s(&"x\n".repeat(50));
        for _ in 0..40 {
            lines = Value::object(vec![("k".into(), lines)]);
        }
        let big = Number::parse_in_range("1e400").unwrap().unwrap();
        for v in [
            deep,
            lines,
            s(&"\u{1}\u{85}\u{feff}\u{10ffff}\u{7f}\\\"".repeat(50)),
            Value::tuple(vec![s(&"\u{1}".repeat(100)), Value::Number(big.clone())]),
            Value::Number(big),
        ] {
            meter::begin(u64::MAX, u64::MAX, None);
            let out = encode(&v).unwrap();
            let used = meter::end();
            // (A document's end, `...` after a root scalar, is a few bytes more.)
            assert!(used.bytes + 8 >= out.len() as u64, "{used:?} {}", out.len());
            // The charges stay close to what is written.
            assert!(
                used.bytes <= 2 * out.len() as u64 + 64,
                "{used:?} {}",
                out.len()
            );
        }
    }

    #[test]
    fn encode_recorded() {
        let v = Value::object(vec![
            ("a".into(), Value::int(1)),
            ("b".into(), s("yes")),
            (
                "c".into(),
                Value::tuple(vec![Value::Bool(true), Value::NULL]),
            ),
        ]);
        assert_eq!(
            enc(&v),
            "\"a\": 1\n\"b\": \"yes\"\n\"c\":\n- true\n- null\n"
        );
        assert_eq!(enc(&s("multi\nline\n")), "|\n  multi\n  line\n");
        assert_eq!(enc(&Value::tuple(vec![])), "[]\n");
        assert_eq!(enc(&Value::object(vec![])), "{}\n");
        assert_eq!(enc(&s("123")), "\"123\"\n");
        assert_eq!(enc(&s("plain")), "\"plain\"\n");
        let nested = Value::object(vec![(
            "nested".into(),
            Value::object(vec![(
                "list".into(),
                Value::tuple(vec![Value::object(vec![("k".into(), s("v"))])]),
            )]),
        )]);
        assert_eq!(enc(&nested), "\"nested\":\n  \"list\":\n  - \"k\": \"v\"\n");
        assert_eq!(enc(&Value::NULL), "null\n...\n");
        assert_eq!(
            enc(&Value::list(Type::String, vec![s("a"), s("b")])),
            "- \"a\"\n- \"b\"\n"
        );
        assert_eq!(enc(&Value::int(-5)), "-5\n...\n");
    }

    /// Generated trees (maps, sequences and scalars nested four deep, with empty
    /// collections, strings that need quoting or folding, long and multi-line keys, shared
    /// parts): whatever [`Block`] writes, the emitter writes too, byte for byte, and the two
    /// charge the meter the same; and the usual documents take the block writer.
    #[test]
    fn block_writes_what_the_emitter_writes() {
        use crate::value::meter;
        let spaced = [
            "word ".repeat(12),
            "word ".repeat(14),
            "w ".repeat(36),
            "w ".repeat(40),
        ];
        let mut strings = vec![
            "",
            "a",
            "x-y",
            "8080",
            "true",
            "a b",
            "q\"",
            "\\",
            "multi\nline",
            "é",
            "~!#$%&'()*+,-./:;<=>?@[]^_`{|}",
            " lead",
            "trail ",
            "two  spaces",
            "a\tb",
        ];
        // Spaced strings whose line ends on either side of column 80.
        strings.extend(spaced.iter().map(String::as_str));
        let mut rng = crate::text::Xorshift(0x2545_f491_4f6c_dd1d);
        let mut next = move |n: u64| rng.below(n);
        fn tree(depth: u32, next: &mut dyn FnMut(u64) -> u64, strings: &[&str]) -> Value {
            let pick = next(if depth == 0 { 4 } else { 9 });
            let string = |i: u64| Value::string(strings[i as usize % strings.len()]);
            match pick {
                0 => string(next(strings.len() as u64 * 4)),
                1 => Value::int(next(100_000) as i64 - 50),
                2 => [Value::NULL, Value::Bool(true), Value::Bool(false)][next(3) as usize].clone(),
                3 => Value::Number(Number::infinity(next(2) == 0)),
                4..=6 => {
                    let n = next(4) as usize;
                    let mut keys: Vec<(Str, Value)> = Vec::new();
                    for _ in 0..n {
                        let k = match next(12) {
                            0 => "k".repeat(129),
                            1 => "a key ".repeat(next(30) as usize),
                            2 => "line\nbreak".to_string(),
                            i => format!("key{i}"),
                        };
                        keys.push((k.as_str().into(), tree(depth - 1, next, strings)));
                    }
                    Value::object(keys)
                }
                _ => {
                    let n = next(4) as usize;
                    let item = tree(depth - 1, next, strings);
                    // Shared items, and fresh ones.
                    let mut items = vec![item; n / 2];
                    items.extend((n / 2..n).map(|_| tree(depth - 1, next, strings)));
                    Value::tuple(items)
                }
            }
        }
        // What a run charges, and its output.
        let charged = |f: &dyn Fn() -> Option<Result<String, String>>| {
            meter::begin(u64::MAX, u64::MAX, None);
            let out = f();
            out.map(|o| (o, meter::end().bytes))
        };
        let mut block = 0;
        for _ in 0..20_000 {
            let v = tree(4, &mut next, &strings);
            let emitted = charged(&|| Some(encode_emitted(&v)));
            if let Some(written) = charged(&|| Block::encode(&v)) {
                block += 1;
                assert_eq!(Some(written), emitted, "{v:?}");
            }
            assert_eq!(charged(&|| Some(encode(&v))), emitted, "{v:?}");
        }
        assert!(block > 1_500, "{block}");
        // A space as the last character but one, on each side of the fold at column 80:
        // under a key, as an item, nested.
        for len in 60..90 {
            let text = Value::string(format!("{} b", "a".repeat(len - 2)));
            let item = Value::tuple(vec![text.clone()]);
            let nested = Value::object(vec![("k".into(), item.clone())]);
            for v in [
                Value::object(vec![("key".into(), text)]),
                item,
                Value::tuple(vec![nested]),
            ] {
                let emitted = charged(&|| Some(encode_emitted(&v)));
                assert_eq!(charged(&|| Some(encode(&v))), emitted, "{v:?}");
            }
        }
        // A budget refuses a document written either way alike.
        let v = Value::object(vec![
            (
                "a".into(),
                Value::tuple(vec![Value::int(1), Value::string("x")]),
            ),
            (
                "b".into(),
                Value::object(vec![("c".into(), Value::string("y"))]),
            ),
        ]);
        let full = charged(&|| Block::encode(&v)).map(|(_, n)| n);
        let full = full.expect("a block document");
        for budget in 0..=full + 1 {
            let run = |f: &dyn Fn() -> Option<Result<String, String>>| {
                meter::begin(u64::MAX, budget, None);
                let out = f().map(|r| r.map(|_| ()));
                meter::end();
                out
            };
            let (b, e) = (
                run(&|| Block::encode(&v)),
                run(&|| Some(encode_emitted(&v))),
            );
            assert_eq!(
                b.clone().map(|r| r.is_ok()),
                e.map(|r| r.is_ok()),
                "{budget}"
            );
            let refused = Some(Err(
                "yamlencode exceeded the evaluation's budget of string bytes".to_string(),
            ));
            assert_eq!(
                b,
                if budget >= full {
                    Some(Ok(()))
                } else {
                    refused
                }
            );
        }
    }

    #[test]
    fn encode_scalars_like_libyaml() {
        assert_eq!(enc(&s("")), "\"\"\n");
        assert_eq!(enc(&s("tab\there")), "\"tab\\there\"\n");
        assert_eq!(enc(&s("é ✓ \u{a0} 😀")), "\"é ✓ \u{a0} \\U0001F600\"\n");
        assert_eq!(enc(&s("q\"b\\")), "\"q\\\"b\\\\\"\n");
        assert_eq!(enc(&s("a\nb")), "|-\n  a\n  b\n");
        assert_eq!(enc(&s("a\n\n")), "|+\n  a\n\n...\n");
        assert_eq!(enc(&s(" lead\n")), "|2\n   lead\n");
        assert_eq!(enc(&s("x\n\ny\n")), "|\n  x\n\n  y\n");
        // A tab or a space before a line break rules out the literal style.
        assert_eq!(enc(&s("a\tb\nc")), "\"a\\tb\\nc\"\n");
        assert_eq!(enc(&s("a \nb")), "\"a \\nb\"\n");
        assert_eq!(enc(&Value::Bool(false)), "false\n...\n");
        assert_eq!(enc(&Value::Number(Number::infinity(true))), "-Inf\n...\n");
    }

    #[test]
    fn encode_long_strings_fold_like_libyaml() {
        let long = "word ".repeat(20) + "end";
        let out = enc(&s(&long));
        let want = format!(
            "\"{}\n  {}\"\n",
            "word ".repeat(17).trim_end(),
            "word ".repeat(3) + "end"
        );
        assert_eq!(out, want);
        // Keys are never folded.
        let v = Value::object(vec![(Str::from(long.as_str()), Value::int(1))]);
        assert_eq!(enc(&v), format!("\"{long}\": 1\n"));
    }

    #[test]
    fn encode_structures() {
        let v = Value::tuple(vec![
            Value::tuple(vec![Value::int(1), Value::int(2)]),
            Value::object(vec![
                ("a".into(), Value::int(1)),
                ("b".into(), Value::tuple(vec![])),
            ]),
            s("x\ny"),
        ]);
        assert_eq!(
            enc(&v),
            "- - 1\n  - 2\n- \"a\": 1\n  \"b\": []\n- |-\n  x\n  y\n"
        );
        let v = Value::object(vec![(
            "m".into(),
            Value::object(vec![("t".into(), s("a\nb\n"))]),
        )]);
        assert_eq!(enc(&v), "\"m\":\n  \"t\": |\n    a\n    b\n");
        let v = Value::object(vec![("k\nx".into(), Value::int(1))]);
        assert_eq!(enc(&v), "? |-\n  k\n  x\n: 1\n");
        assert!(encode(&Value::Unknown(Type::String)).is_err());
    }

    fn dec(x: &str) -> Value {
        match decode(x) {
            Ok(v) => v,
            Err(e) => panic!("decode({x:?}): {e}"),
        }
    }

    #[test]
    fn decode_recorded() {
        let v = dec("a: 1\nb: [x, y]");
        assert!(v.get_attr("a").unwrap().raw_equals(&Value::int(1)));
        assert!(
            v.get_attr("b")
                .unwrap()
                .raw_equals(&Value::tuple(vec![s("x"), Value::Bool(true)]))
        );
        assert!(dec("yes").raw_equals(&Value::Bool(true)));
        assert!(dec("on").raw_equals(&Value::Bool(true)));
        assert!(dec("0x10").raw_equals(&Value::int(16)));
        assert!(dec("1e3").raw_equals(&Value::int(1000)));
        assert!(dec("~").raw_equals(&Value::NULL));
        assert!(
            dec("- a\n- 2\n- true\n- null").raw_equals(&Value::tuple(vec![
                s("a"),
                Value::int(2),
                Value::Bool(true),
                Value::NULL
            ]))
        );
        assert!(dec("'quoted'").raw_equals(&s("quoted")));
        let v = dec("x: &anchor {k: v}\ny: *anchor");
        let inner = Value::object(vec![("k".into(), s("v"))]);
        assert!(v.raw_equals(&Value::object(vec![
            ("true".into(), inner.clone()),
            ("x".into(), inner)
        ])));
        assert!(dec("2024-01-02").raw_equals(&s("2024-01-02T00:00:00Z")));
        assert_eq!(
            decode("a: [").unwrap_err(),
            "on line 1, column 1: did not find expected node content"
        );
        assert_eq!(
            decode("").unwrap_err(),
            "on line 1, column 1: missing start of document"
        );
        assert_eq!(
            decode("a: 1\n---\nb: 2").unwrap_err(),
            "on line 1, column 1: unexpected extra content after value"
        );
    }

    #[test]
    fn decode_resolution() {
        assert!(dec("\"yes\"").raw_equals(&s("yes")));
        assert!(dec("!!str 12").raw_equals(&s("12")));
        assert!(dec("!!int '7'").raw_equals(&s("7")));
        // v1.1: YAML 1.2 core integers only (no underscores, no 0b, no signed hex).
        assert!(dec("1_000").raw_equals(&s("1_000")));
        assert!(dec("0b101").raw_equals(&s("0b101")));
        assert!(dec("-0x10").raw_equals(&s("-0x10")));
        assert!(dec("0x10").raw_equals(&Value::int(16)));
        assert!(dec("!!int 0b101").raw_equals(&Value::int(5)));
        assert!(dec(".5").raw_equals(&Value::Number(Number::parse("0.5").unwrap())));
        assert!(dec("Off").raw_equals(&Value::Bool(false)));
        assert!(dec("-.inf").raw_equals(&Value::Number(Number::infinity(true))));
        assert!(dec("hello world").raw_equals(&s("hello world")));
        assert!(dec("2001-12-14t21:59:43.10-05:00").raw_equals(&s("2001-12-14T21:59:43-05:00")));
        assert!(dec("2001-12-14 21:59:43.10").raw_equals(&s("2001-12-14T21:59:43Z")));
        assert!(dec("2023-02-29").raw_equals(&s("2023-02-29")));
        assert!(dec("|\n  text\n").raw_equals(&s("text\n")));
        assert!(dec("1: one\n~x: 2").get_attr("1").is_some());
        assert_eq!(
            decode(".nan").unwrap_err(),
            "floating point NaN is not supported"
        );
        assert_eq!(
            decode("!!bool maybe").unwrap_err(),
            "cannot parse \"maybe\" as tag:yaml.org,2002:bool"
        );
        assert_eq!(decode("!foo x").unwrap_err(), "unsupported tag \"!foo\"");
        assert_eq!(decode("~: 1").unwrap_err(), "mapping key cannot be null");
        assert_eq!(
            decode("[a]: 1").unwrap_err(),
            "only strings are allowed as mapping keys"
        );
        // go-cty-yaml gives a position only past libyaml's (zero-based) line 0.
        assert_eq!(
            decode("a: 1\nb: !!bool maybe").unwrap_err(),
            "on line 1, column 4: cannot parse \"maybe\" as tag:yaml.org,2002:bool"
        );
    }

    /// A "billion laughs": `n` levels, each a list of ten aliases of the level below.
    fn laughs(n: usize) -> String {
        let mut doc = "a0: &a0 \"lol\"\n".to_string();
        for i in 1..=n {
            let refs = vec![format!("*a{}", i - 1); 10].join(", ");
            doc.push_str(&format!("a{i}: &a{i} [{refs}]\n"));
        }
        doc
    }

    #[test]
    fn alias_expansion_is_counted_and_capped() {
        // 10^4 values: fine.
        assert!(decode(&laughs(4)).is_ok());
        // 10^9 values are refused while decoding, having built a few hundred.
        let err = decode(&laughs(9)).unwrap_err();
        assert!(err.contains("expands to more than 4000000 values"), "{err}");
        // So is a document with more aliases than any real one uses.
        let many = format!("a: &a 1\nb: [{}]\n", vec!["*a"; 10_001].join(", "));
        let err = decode(&many).unwrap_err();
        assert!(err.contains("more than 10000 aliases"), "{err}");
        // The evaluation's meter is charged as the document expands.
        crate::value::meter::begin(1000, u64::MAX, None);
        let err = decode(&laughs(4)).unwrap_err();
        let m = crate::value::meter::end();
        assert!(
            err.contains("yamldecode exceeded the evaluation's budget of collection elements"),
            "{err}"
        );
        assert_eq!(m.exceeded.map(|e| e.site), Some("yamldecode"));
        assert!(m.elements > 1000 && m.elements < 1200, "{}", m.elements);
    }

    #[test]
    fn decode_anchors_and_merges() {
        let v = dec("base: &b {p: 1, q: 2}\nderived:\n  <<: *b\n  q: 3");
        let d = v.get_attr("derived").unwrap();
        assert!(d.get_attr("p").unwrap().raw_equals(&Value::int(1)));
        assert!(d.get_attr("q").unwrap().raw_equals(&Value::int(3)));
        // YAML 1.1: `y` is a boolean, even as a key.
        assert!(dec("y: 1").get_attr("true").is_some());
        assert!(
            decode("a: &x [*x]")
                .unwrap_err()
                .ends_with("cannot refer to anchor \"x\" from inside its own definition")
        );
        assert!(
            decode("a: *nope")
                .unwrap_err()
                .ends_with("reference to undefined anchor \"nope\"")
        );
        assert!(decode(&"[".repeat(3000)).is_err());
        assert_eq!(
            decode("[1, 2").unwrap_err(),
            "on line 1, column 1: did not find expected ',' or ']'"
        );
    }
}
