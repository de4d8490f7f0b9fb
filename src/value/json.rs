//! cty's JSON: `jsonencode` (go-cty `json.Marshal` with Go's `encoding/json` string escaping)
//! and `jsondecode` (go-cty `json.ImpliedType` + `json.Unmarshal`, driven by Go's
//! `json.Decoder.Token` state machine so that syntax errors carry Go's exact messages).

use crate::text::quote::{go_quote, go_quote_rune};
use crate::value::number::Number;
use crate::value::{Str, Type, Value, sort_dedup_entries};

/// Deepest nesting `decode` accepts. Go has no limit on the token path; ours keeps the
/// recursion that builds values bounded.
pub const MAX_DEPTH: usize = 1000;

/// encoding/json's `quoteChar`, used in its syntax error messages.
fn json_quote_char(c: u8) -> String {
    match c {
        b'\'' => "'\\''".into(),
        b'"' => "'\"'".into(),
        _ => {
            let q = go_quote(&char::from(c).to_string());
            format!("'{}'", &q[1..q.len() - 1])
        }
    }
}

// ---------------------------------------------------------------------------------------
// Encoding

/// The length of `s` written by [`push_json_string`], quotes included, counted without
/// writing it: an escape makes a byte up to six (`\u0001`, `\u003c`), so a writer that
/// charges a budget charges this, not the input's length.
pub fn json_string_len(s: &str) -> usize {
    json_string_measure(s).0
}

/// [`json_string_len`], and whether `s` has no byte that may start an escape (it is then
/// copied as it is).
fn json_string_measure(s: &str) -> (usize, bool) {
    let b = s.as_bytes();
    // The usual string (a name, a label) has no such byte: one pass the compiler runs
    // over whole words, before the count of escapes byte by byte.
    if b.iter().all(is_plain_json_byte) {
        return (b.len() + 2, true);
    }
    let (mut n, mut plain) = (b.len() + 2, true);
    for (i, &c) in b.iter().enumerate() {
        let more = match c {
            b'"' | b'\\' | b'\n' | b'\r' | b'\t' | 0x08 | 0x0c => 1,
            0..0x20 | b'<' | b'>' | b'&' => 5,
            // U+2028 and U+2029 (E2 80 A8, E2 80 A9): three bytes written as six.
            0xE2 => {
                plain = false;
                let line_sep =
                    b.get(i + 1) == Some(&0x80) && matches!(b.get(i + 2), Some(0xA8 | 0xA9));
                if line_sep { 3 } else { 0 }
            }
            _ => continue,
        };
        n += more;
        plain &= more == 0;
    }
    (n, plain)
}

/// Whether a byte is written as it is and starts no escaped character (0xE2 may start
/// U+2028 or U+2029).
#[inline(always)]
fn is_plain_json_byte(b: &u8) -> bool {
    *b >= 0x20 && !matches!(*b, b'"' | b'\\' | b'<' | b'>' | b'&' | 0xE2)
}

/// Appends `s` as a JSON string the way Go's `encoding/json` writes it (HTML-safe).
pub fn push_json_string(out: &mut String, s: &str) {
    if s.as_bytes().iter().all(is_plain_json_byte) {
        push_plain_json_string(out, s);
        return;
    }
    push_escaped_json_string(out, s);
}

/// A string with nothing to escape, in quotes.
fn push_plain_json_string(out: &mut String, s: &str) {
    out.reserve(s.len() + 2);
    out.push('"');
    out.push_str(s);
    out.push('"');
}

/// [`push_json_string`]'s escaping loop.
fn push_escaped_json_string(out: &mut String, s: &str) {
    out.push('"');
    let mut start = 0;
    for (i, c) in s.char_indices() {
        let esc: Option<&str> = match c {
            '"' => Some("\\\""),
            '\\' => Some("\\\\"),
            '\n' => Some("\\n"),
            '\r' => Some("\\r"),
            '\t' => Some("\\t"),
            '\u{8}' => Some("\\b"),
            '\u{c}' => Some("\\f"),
            _ => None,
        };
        let needs = esc.is_some()
            || (c as u32) < 0x20
            || c == '<'
            || c == '>'
            || c == '&'
            || c == '\u{2028}'
            || c == '\u{2029}';
        if !needs {
            continue;
        }
        out.push_str(&s[start..i]);
        match esc {
            Some(e) => out.push_str(e),
            None => out.push_str(&format!("\\u{:04x}", c as u32)),
        }
        start = i + c.len_utf8();
    }
    out.push_str(&s[start..]);
    out.push('"');
}

/// go-cty's `json.Marshal(v, v.Type())`: compact, object keys sorted, exact numbers.
/// Errors carry cty's message (`cannot serialize infinity as JSON`).
pub fn encode(v: &Value) -> Result<String, String> {
    let mut out = String::new();
    encode_into(&mut out, v)?;
    Ok(out)
}

/// Appends the JSON form of `v` to `out` (see [`encode`]). The text is charged to the
/// evaluation's string budget as it is written, before it grows (a value of shared parts
/// can encode to far more text than it occupies).
pub fn encode_into(out: &mut String, v: &Value) -> Result<(), String> {
    let charge = |n: usize| {
        crate::value::meter::bytes("jsonencode", n as u64)
            .and_then(|()| crate::value::meter::tick("jsonencode"))
            .map_err(|e| e.to_string())
    };
    match v {
        // A string as it is written, escapes and all: counted, charged, then copied.
        Value::String(s) => {
            let (len, plain) = json_string_measure(s);
            charge(len)?;
            if plain {
                push_plain_json_string(out, s);
            } else {
                push_escaped_json_string(out, s);
            }
            return Ok(());
        }
        Value::List(s) | Value::Set(s) | Value::Tuple(s) => charge(s.items.len() + 2)?,
        Value::Map(f) | Value::Object(f) => charge(
            f.entries
                .iter()
                .map(|(k, _)| json_string_len(k) + 2)
                .sum::<usize>()
                + 2,
        )?,
        _ => charge(8)?,
    }
    match v {
        Value::Null(_) => out.push_str("null"),
        Value::Unknown(_) => return Err("value is not known".into()),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => {
            if n.is_infinite() {
                return Err("cannot serialize infinity as JSON".into());
            }
            // Its text may be far longer than the 8 bytes charged (1e39000 has 39,001
            // digits): the rest is charged before it is copied, or, for a long one, made.
            n.with_charged_cty_text(
                |len| if len > 8 { charge(len - 8) } else { Ok(()) },
                |t| out.push_str(t),
            )?;
        }
        Value::String(_) => {}
        Value::List(s) | Value::Set(s) | Value::Tuple(s) => {
            out.push('[');
            for (i, item) in s.items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                encode_into(out, item)?;
            }
            out.push(']');
        }
        Value::Map(f) | Value::Object(f) => {
            out.push('{');
            for (i, (k, item)) in f.entries.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                push_json_string(out, k);
                out.push(':');
                encode_into(out, item)?;
            }
            out.push('}');
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Decoding

/// A parsed JSON document, keeping duplicate keys and number text as written.
#[derive(Debug)]
enum Node {
    Null,
    Bool(bool),
    Num(String),
    Str(String),
    Arr(Vec<Node>),
    Obj(Vec<(String, Node)>),
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum TokState {
    TopValue,
    ArrayStart,
    ArrayValue,
    ArrayComma,
    ObjectStart,
    ObjectKey,
    ObjectColon,
    ObjectValue,
    ObjectComma,
}

enum Tok {
    Delim(u8),
    Key(String),
    Scalar(Node),
}

/// Go's `json.Decoder` driven through `Token()` (with `UseNumber`).
struct Decoder<'a> {
    buf: &'a [u8],
    pos: usize,
    state: TokState,
    stack: Vec<TokState>,
}

fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\r' | b'\n')
}

impl<'a> Decoder<'a> {
    fn new(buf: &'a [u8]) -> Self {
        Decoder {
            buf,
            pos: 0,
            state: TokState::TopValue,
            stack: Vec::new(),
        }
    }

    fn peek(&mut self) -> Option<u8> {
        while self.pos < self.buf.len() {
            let c = self.buf[self.pos];
            if !is_space(c) {
                return Some(c);
            }
            self.pos += 1;
        }
        None
    }

    fn value_allowed(&self) -> bool {
        matches!(
            self.state,
            TokState::TopValue
                | TokState::ArrayStart
                | TokState::ArrayValue
                | TokState::ObjectValue
        )
    }

    fn value_end(&mut self) {
        match self.state {
            TokState::ArrayStart | TokState::ArrayValue => self.state = TokState::ArrayComma,
            TokState::ObjectValue => self.state = TokState::ObjectComma,
            _ => {}
        }
    }

    fn token_error(&self, c: u8) -> String {
        let ctx = match self.state {
            TokState::TopValue
            | TokState::ArrayStart
            | TokState::ArrayValue
            | TokState::ObjectValue => " looking for beginning of value",
            TokState::ArrayComma => " after array element",
            TokState::ObjectKey => " looking for beginning of object key string",
            TokState::ObjectColon => " after object key",
            TokState::ObjectComma => " after object key:value pair",
            TokState::ObjectStart => "",
        };
        format!("invalid character {}{}", json_quote_char(c), ctx)
    }

    fn pop(&mut self) {
        self.state = self.stack.pop().unwrap_or(TokState::TopValue);
        self.value_end();
    }

    /// `Decoder.Token()`; `Ok(None)` never happens: end of input is the error "EOF".
    fn token(&mut self) -> Result<Tok, String> {
        loop {
            let Some(c) = self.peek() else {
                return Err("EOF".into());
            };
            match c {
                b'[' | b'{' => {
                    if !self.value_allowed() {
                        return Err(self.token_error(c));
                    }
                    self.pos += 1;
                    self.stack.push(self.state);
                    self.state = if c == b'[' {
                        TokState::ArrayStart
                    } else {
                        TokState::ObjectStart
                    };
                    return Ok(Tok::Delim(c));
                }
                b']' => {
                    if self.state != TokState::ArrayStart && self.state != TokState::ArrayComma {
                        return Err(self.token_error(c));
                    }
                    self.pos += 1;
                    self.pop();
                    return Ok(Tok::Delim(c));
                }
                b'}' => {
                    if self.state != TokState::ObjectStart && self.state != TokState::ObjectComma {
                        return Err(self.token_error(c));
                    }
                    self.pos += 1;
                    self.pop();
                    return Ok(Tok::Delim(c));
                }
                b':' => {
                    if self.state != TokState::ObjectColon {
                        return Err(self.token_error(c));
                    }
                    self.pos += 1;
                    self.state = TokState::ObjectValue;
                }
                b',' => {
                    if self.state == TokState::ArrayComma {
                        self.pos += 1;
                        self.state = TokState::ArrayValue;
                    } else if self.state == TokState::ObjectComma {
                        self.pos += 1;
                        self.state = TokState::ObjectKey;
                    } else {
                        return Err(self.token_error(c));
                    }
                }
                b'"' if matches!(self.state, TokState::ObjectStart | TokState::ObjectKey) => {
                    let node = self.scan_value()?;
                    self.state = TokState::ObjectColon;
                    return match node {
                        Node::Str(s) => Ok(Tok::Key(s)),
                        _ => Err("expected string".into()),
                    };
                }
                _ => {
                    if !self.value_allowed() {
                        return Err(self.token_error(c));
                    }
                    let node = self.scan_value()?;
                    self.value_end();
                    return Ok(Tok::Scalar(node));
                }
            }
        }
    }

    fn syntax(&self, c: u8, ctx: &str) -> String {
        format!("invalid character {} {}", json_quote_char(c), ctx)
    }

    fn at(&self, i: usize) -> Option<u8> {
        self.buf.get(i).copied()
    }

    /// Scans one scalar value starting at `pos` (the Decoder's `readValue` for a value
    /// that is not an array or object), as Go's scanner does.
    fn scan_value(&mut self) -> Result<Node, String> {
        let start = self.pos;
        let Some(c) = self.at(start) else {
            return Err("EOF".into());
        };
        match c {
            b'"' => {
                let (s, end) = self.scan_string(start)?;
                self.pos = end;
                Ok(Node::Str(s))
            }
            b't' => self.scan_literal(start, b"true", Node::Bool(true)),
            b'f' => self.scan_literal(start, b"false", Node::Bool(false)),
            b'n' => self.scan_literal(start, b"null", Node::Null),
            b'-' | b'0'..=b'9' => {
                let end = self.scan_number(start)?;
                self.pos = end;
                Ok(Node::Num(
                    String::from_utf8_lossy(&self.buf[start..end]).into_owned(),
                ))
            }
            _ => Err(self.syntax(c, "looking for beginning of value")),
        }
    }

    fn scan_literal(&mut self, start: usize, word: &[u8], node: Node) -> Result<Node, String> {
        let name = String::from_utf8_lossy(word).into_owned();
        for (k, want) in word.iter().enumerate().skip(1) {
            match self.at(start + k) {
                None => return Err("unexpected EOF".into()),
                Some(c) if c == *want => {}
                Some(c) => {
                    return Err(self.syntax(
                        c,
                        &format!("in literal {} (expecting {})", name, json_quote_char(*want)),
                    ));
                }
            }
        }
        self.pos = start + word.len();
        Ok(node)
    }

    fn scan_number(&self, start: usize) -> Result<usize, String> {
        let mut i = start;
        if self.at(i) == Some(b'-') {
            i += 1;
            match self.at(i) {
                None => return Err("unexpected EOF".into()),
                Some(b'0'..=b'9') => {}
                Some(c) => return Err(self.syntax(c, "in numeric literal")),
            }
        }
        if self.at(i) == Some(b'0') {
            i += 1;
        } else {
            while matches!(self.at(i), Some(b'0'..=b'9')) {
                i += 1;
            }
        }
        if self.at(i) == Some(b'.') {
            i += 1;
            match self.at(i) {
                None => return Err("unexpected EOF".into()),
                Some(b'0'..=b'9') => {}
                Some(c) => return Err(self.syntax(c, "after decimal point in numeric literal")),
            }
            while matches!(self.at(i), Some(b'0'..=b'9')) {
                i += 1;
            }
        }
        if matches!(self.at(i), Some(b'e' | b'E')) {
            i += 1;
            if matches!(self.at(i), Some(b'+' | b'-')) {
                i += 1;
            }
            match self.at(i) {
                None => return Err("unexpected EOF".into()),
                Some(b'0'..=b'9') => {}
                Some(c) => return Err(self.syntax(c, "in exponent of numeric literal")),
            }
            while matches!(self.at(i), Some(b'0'..=b'9')) {
                i += 1;
            }
        }
        Ok(i)
    }

    fn hex4(&self, i: usize) -> Result<u32, String> {
        let mut v = 0u32;
        for k in 0..4 {
            match self.at(i + k) {
                None => return Err("unexpected EOF".into()),
                Some(c) => match (c as char).to_digit(16) {
                    Some(d) => v = v * 16 + d,
                    None => return Err(self.syntax(c, "in \\u hexadecimal character escape")),
                },
            }
        }
        Ok(v)
    }

    fn scan_string(&self, start: usize) -> Result<(String, usize), String> {
        let mut out: Vec<u8> = Vec::new();
        let mut i = start + 1;
        loop {
            let Some(c) = self.at(i) else {
                return Err("unexpected EOF".into());
            };
            match c {
                b'"' => {
                    let s = String::from_utf8(out)
                        .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
                    return Ok((s, i + 1));
                }
                b'\\' => {
                    let Some(e) = self.at(i + 1) else {
                        return Err("unexpected EOF".into());
                    };
                    i += 2;
                    let simple = match e {
                        b'"' => Some(b'"'),
                        b'\\' => Some(b'\\'),
                        b'/' => Some(b'/'),
                        b'b' => Some(8),
                        b'f' => Some(12),
                        b'n' => Some(b'\n'),
                        b'r' => Some(b'\r'),
                        b't' => Some(b'\t'),
                        b'u' => None,
                        _ => return Err(self.syntax(e, "in string escape code")),
                    };
                    if let Some(b) = simple {
                        out.push(b);
                        continue;
                    }
                    let mut r = self.hex4(i)?;
                    i += 4;
                    if (0xD800..0xDC00).contains(&r)
                        && self.at(i) == Some(b'\\')
                        && self.at(i + 1) == Some(b'u')
                        && let Ok(r2) = self.hex4(i + 2)
                        && (0xDC00..0xE000).contains(&r2)
                    {
                        r = 0x10000 + ((r - 0xD800) << 10) + (r2 - 0xDC00);
                        i += 6;
                    }
                    let ch = char::from_u32(r).unwrap_or('\u{fffd}');
                    let mut b = [0u8; 4];
                    out.extend_from_slice(ch.encode_utf8(&mut b).as_bytes());
                }
                c if c < 0x20 => return Err(self.syntax(c, "in string literal")),
                c => {
                    out.push(c);
                    i += 1;
                }
            }
        }
    }

    /// `dec.More()`: is there another value before a closing delimiter or the end?
    fn more(&mut self) -> bool {
        matches!(self.peek(), Some(c) if c != b']' && c != b'}')
    }
}

/// One more element of a decoded array or object, charged to the evaluation's budget
/// before it is read: a long document is stopped at the budget, not after its whole tree
/// (and its values) were built.
fn charge_element() -> Result<(), String> {
    crate::value::meter::elements("jsondecode", 1)
        .and_then(|()| crate::value::meter::tick("jsondecode"))
        .map_err(|e| e.to_string())
}

fn read_node(dec: &mut Decoder<'_>, tok: Tok, depth: usize) -> Result<Node, String> {
    if depth > MAX_DEPTH {
        return Err("exceeded max depth".into());
    }
    match tok {
        Tok::Scalar(n) => Ok(n),
        Tok::Key(s) => Ok(Node::Str(s)),
        Tok::Delim(b'[') => {
            let mut items = Vec::new();
            loop {
                let t = dec.token()?;
                if let Tok::Delim(b']') = t {
                    break;
                }
                charge_element()?;
                items.push(read_node(dec, t, depth + 1)?);
            }
            Ok(Node::Arr(items))
        }
        Tok::Delim(b'{') => {
            let mut entries = Vec::new();
            loop {
                let t = dec.token()?;
                let key = match t {
                    Tok::Delim(b'}') => break,
                    Tok::Delim(d) => {
                        return Err(format!("unexpected delimiter {}", go_quote_rune(d as char)));
                    }
                    Tok::Key(k) => k,
                    Tok::Scalar(_) => return Err("expected string but found value".into()),
                };
                let t = dec.token()?;
                charge_element()?;
                entries.push((key, read_node(dec, t, depth + 1)?));
            }
            Ok(Node::Obj(entries))
        }
        Tok::Delim(d) => Err(format!("unexpected token {}", go_quote_rune(d as char))),
    }
}

fn implied_type(n: &Node) -> Type {
    match n {
        Node::Null => Type::Dynamic,
        Node::Bool(_) => Type::Bool,
        Node::Num(_) => Type::Number,
        Node::Str(_) => Type::String,
        Node::Arr(items) => Type::tuple(items.iter().map(implied_type)),
        Node::Obj(entries) => {
            // A repeated key takes the last one's type (sorted at once: a scan per key
            // was quadratic in the number of keys, minutes for 100,000).
            let mut fields: Vec<(Str, Type)> = entries
                .iter()
                .map(|(k, v)| (Str::from(k.as_str()), implied_type(v)))
                .collect();
            sort_dedup_entries(&mut fields);
            Type::object(fields)
        }
    }
}

fn parse_number(text: &str) -> Result<Number, String> {
    match Number::parse_in_range(text) {
        Some(r) => r.map_err(|e| e.to_string()),
        None => Err("a number is required".to_string()),
    }
}

/// go-cty's `json.Unmarshal` of one value against its implied type.
fn unmarshal(n: &Node, ty: &Type) -> Result<Value, String> {
    if let Node::Null = n {
        return Ok(Value::Null(ty.clone()));
    }
    match ty {
        Type::Dynamic => match n {
            Node::Obj(entries) => match entries.first() {
                Some((k, _)) if k != "type" && k != "value" => Err(format!(
                    "invalid key {} in dynamically-typed value",
                    go_quote(k)
                )),
                _ => Err("missing type in dynamically-typed value".into()),
            },
            _ => Err("missing expected {".into()),
        },
        Type::Bool => match n {
            Node::Bool(b) => Ok(Value::Bool(*b)),
            Node::Str(s) if s == "true" => Ok(Value::Bool(true)),
            Node::Str(s) if s == "false" => Ok(Value::Bool(false)),
            Node::Str(_) => Err("a bool is required".into()),
            _ => Err("bool is required".into()),
        },
        Type::Number => match n {
            Node::Num(t) | Node::Str(t) => parse_number(t).map(Value::Number),
            _ => Err("number is required".into()),
        },
        Type::String => match n {
            Node::Str(s) | Node::Num(s) => Ok(Value::string(s.as_str())),
            Node::Bool(b) => Ok(Value::string(if *b { "true" } else { "false" })),
            _ => Err("string is required".into()),
        },
        Type::Tuple(etys) => {
            let Node::Arr(items) = n else {
                return Err("missing expected [".into());
            };
            if items.len() > etys.len() {
                return Err(format!("too many tuple elements (need {})", etys.len()));
            }
            if items.len() < etys.len() {
                return Err(format!("not enough tuple elements (need {})", etys.len()));
            }
            let vals = items
                .iter()
                .zip(etys.iter())
                .map(|(i, t)| unmarshal(i, t))
                .collect::<Result<Vec<_>, _>>()?;
            Ok(Value::tuple(vals))
        }
        Type::Object(atys) => {
            let Node::Obj(entries) = n else {
                return Err("missing expected {".into());
            };
            let mut vals: Vec<Option<Value>> = vec![None; atys.len()];
            for (k, v) in entries {
                let Ok(idx) = atys.binary_search_by(|(ak, _)| (**ak).cmp(k.as_str())) else {
                    return Err(format!("unsupported attribute {}", go_quote(k)));
                };
                vals[idx] = Some(unmarshal(v, &atys[idx].1)?);
            }
            let entries = atys
                .iter()
                .zip(vals)
                .map(|((k, t), v)| (k.clone(), v.unwrap_or_else(|| Value::Null(t.clone()))))
                .collect();
            Ok(Value::object_sorted(entries))
        }
        // Implied types never contain collection types.
        _ => Err(format!("unsupported type {}", ty.friendly_name())),
    }
}

/// `jsondecode`: the value with cty's implied type (objects, tuples, exact numbers);
/// errors carry Go's/cty's messages (`EOF`, `invalid character 'b'`, `extraneous data
/// after JSON object`).
pub fn decode(text: &str) -> Result<Value, String> {
    let mut dec = Decoder::new(text.as_bytes());
    let tok = dec.token()?;
    let node = read_node(&mut dec, tok, 0)?;
    if dec.more() {
        return Err("extraneous data after JSON object".into());
    }
    let ty = implied_type(&node);
    unmarshal(&node, &ty)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc(v: &Value) -> String {
        encode(v).unwrap()
    }

    #[test]
    fn json_string_len_is_what_is_written() {
        // Every ASCII byte, the escaped line separators, their lead byte in other
        // characters, and multi-byte text: counted as written.
        let mut cases: Vec<String> = (0u8..0x80).map(|b| char::from(b).to_string()).collect();
        let all: String = cases.concat();
        cases.extend(
            [
                "",
                "\u{2028}",
                "\u{2029}",
                "\u{2027}",
                "\u{20ac}",
                "é✓😀",
                "a<b>&c",
                "\u{2028}x\u{2029}",
            ]
            .map(String::from),
        );
        cases.push(all);
        for s in &cases {
            let mut out = String::new();
            push_json_string(&mut out, s);
            assert_eq!(json_string_len(s), out.len(), "{s:?}");
            assert_eq!(enc(&Value::string(s.as_str())), out, "{s:?}");
        }
        // A number's whole text is written (and charged).
        let big = Number::parse_in_range("1e400").unwrap().unwrap();
        assert_eq!(enc(&Value::Number(big)).len(), 401);
    }

    #[test]
    fn quoting() {
        assert_eq!(json_quote_char(b'b'), "'b'");
        assert_eq!(json_quote_char(b'\n'), "'\\n'");
    }

    #[test]
    fn encode_strings_like_go() {
        let s = |x: &str| enc(&Value::string(x));
        assert_eq!(
            s("<a href='x'>&</a>"),
            "\"\\u003ca href='x'\\u003e\\u0026\\u003c/a\\u003e\""
        );
        assert_eq!(s("é ✓ \u{0} \t"), "\"é ✓ \\u0000 \\t\"");
        assert_eq!(s("\u{8}\u{c}\u{2028}"), "\"\\b\\f\\u2028\"");
        assert_eq!(s(""), "\"\"");
    }

    #[test]
    fn encode_structures() {
        let v = Value::object(vec![
            ("b".into(), Value::int(1)),
            (
                "a".into(),
                Value::tuple(vec![Value::int(1), Value::string("x"), Value::NULL]),
            ),
        ]);
        assert_eq!(enc(&v), r#"{"a":[1,"x",null],"b":1}"#);
        assert_eq!(enc(&Value::tuple(vec![])), "[]");
        assert_eq!(enc(&Value::object(vec![])), "{}");
        assert_eq!(enc(&Value::Null(Type::String)), "null");
        assert_eq!(
            encode(&Value::Number(Number::infinity(false))),
            Err("cannot serialize infinity as JSON".into())
        );
    }

    fn dec_err(s: &str) -> String {
        decode(s).unwrap_err()
    }

    #[test]
    fn decode_types() {
        let v = decode(r#"[1,"a",null,true,{"k":[]}]"#).unwrap();
        let want = Type::tuple(vec![
            Type::Number,
            Type::String,
            Type::Dynamic,
            Type::Bool,
            Type::object(vec![(Str::from("k"), Type::empty_tuple())]),
        ]);
        assert_eq!(v.type_of(), want);
        let v = decode(r#"{"a":1,"a":2}"#).unwrap();
        assert!(v.get_attr("a").unwrap().raw_equals(&Value::int(2)));
        // A repeated key has the last one's type, whatever the keys around it.
        let v = decode(r#"{"b":1,"a":1,"b":"x"}"#).unwrap();
        assert_eq!(
            v.type_of(),
            Type::object(vec![
                (Str::from("a"), Type::Number),
                (Str::from("b"), Type::String),
            ])
        );
        assert_eq!(v.get_attr("b").and_then(Value::as_str), Some("x"));
        assert!(decode("null").unwrap().raw_equals(&Value::NULL));
        assert_eq!(decode("\"\\u00e9\\n\"").unwrap().as_str(), Some("é\n"));
        assert_eq!(decode("\"\\ud83d\\ude00\"").unwrap().as_str(), Some("😀"));
        assert!(decode(" [1] ]").is_ok());
    }

    #[test]
    fn decode_errors_like_go() {
        assert_eq!(dec_err("{bad"), "invalid character 'b'");
        assert_eq!(dec_err(""), "EOF");
        assert_eq!(dec_err("  "), "EOF");
        assert_eq!(dec_err("[1] [2]"), "extraneous data after JSON object");
        assert_eq!(dec_err("[1,"), "EOF");
        assert_eq!(
            dec_err("[1,]"),
            "invalid character ']' looking for beginning of value"
        );
        assert_eq!(dec_err("[01]"), "invalid character '1' after array element");
        assert_eq!(dec_err("tru"), "unexpected EOF");
        assert_eq!(
            dec_err("trux"),
            "invalid character 'x' in literal true (expecting 'e')"
        );
        assert_eq!(
            dec_err(r#"{"a" 1}"#),
            "invalid character '1' after object key"
        );
        assert_eq!(
            dec_err(r#"{"a":1 "b":2}"#),
            "invalid character '\"' after object key:value pair"
        );
        assert_eq!(
            dec_err(r#"{"a":1,}"#),
            "invalid character '}' looking for beginning of object key string"
        );
        assert_eq!(
            dec_err("\"a\nb\""),
            "invalid character '\\n' in string literal"
        );
        assert_eq!(
            dec_err("1.x"),
            "invalid character 'x' after decimal point in numeric literal"
        );
        assert_eq!(dec_err("-"), "unexpected EOF");
        assert_eq!(
            dec_err(r#"{"a":{"x":1},"a":{"y":2}}"#),
            "unsupported attribute \"x\""
        );
    }

    #[test]
    fn decode_deep_nesting_is_bounded() {
        let s = "[".repeat(5000);
        assert_eq!(dec_err(&s), "exceeded max depth");
    }
}
