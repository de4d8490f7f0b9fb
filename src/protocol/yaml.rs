//! YAML in and out for the CLI: a loader that builds [`Json`] trees from yaml-rust2's event
//! stream without recursion (a 100k-deep document is an error, not a stack overflow), and a
//! block-style emitter in the shape `crossplane render` prints (keys sorted, lists not
//! indented under their key, strings quoted only when a YAML 1.1 or 1.2 reader could take
//! them for something else).

use crate::protocol::doc::{Json, MAX_JSON_DEPTH, format_number, parse_json, write_quoted};
use std::collections::{BTreeMap, HashMap};
use yaml_rust2::parser::{Event, Parser};
use yaml_rust2::scanner::TScalarStyle;

/// Most nodes an alias may expand to in one document (stops "billion laughs" inputs).
const MAX_NODES: usize = 10_000_000;

/// Parses every document of a YAML stream. Empty documents are `Json::Null`.
pub fn load_all(text: &str) -> Result<Vec<Json>, String> {
    let mut parser = Parser::new_from_str(text);
    let mut docs = Vec::new();
    // Containers under construction: (node, anchor id, pending mapping key).
    enum Frame {
        Seq(Vec<Json>, usize),
        Map(BTreeMap<String, Json>, usize, Option<String>),
    }
    let mut stack: Vec<Frame> = Vec::new();
    let mut anchors: HashMap<usize, Json> = HashMap::new();
    let mut nodes = 0usize;
    let mut doc: Option<Json> = None;
    loop {
        let (ev, mark) = parser.next_token().map_err(|e| e.to_string())?;
        let done: Option<Json> = match ev {
            Event::StreamEnd => break,
            Event::StreamStart | Event::Nothing => None,
            Event::DocumentStart => {
                anchors.clear();
                doc = None;
                None
            }
            Event::DocumentEnd => {
                docs.push(doc.take().unwrap_or(Json::Null));
                None
            }
            Event::Alias(id) => {
                let v = anchors
                    .get(&id)
                    .cloned()
                    .ok_or_else(|| format!("line {}: unknown alias", mark.line()))?;
                nodes = nodes.saturating_add(v.node_count());
                if nodes > MAX_NODES {
                    return Err("YAML document expands to too many nodes".into());
                }
                Some(v)
            }
            Event::Scalar(text, style, anchor, tag) => {
                nodes += 1;
                let v = scalar(&text, style, tag.as_ref().map(|t| t.suffix.as_str()))
                    .map_err(|e| format!("line {}: {e}", mark.line()))?;
                if anchor > 0 {
                    anchors.insert(anchor, v.clone());
                }
                Some(v)
            }
            Event::SequenceStart(anchor, _) | Event::MappingStart(anchor, _) => {
                nodes += 1;
                if stack.len() >= MAX_JSON_DEPTH {
                    return Err(format!(
                        "line {}: YAML nested deeper than {MAX_JSON_DEPTH} levels",
                        mark.line()
                    ));
                }
                stack.push(if matches!(ev, Event::SequenceStart(..)) {
                    Frame::Seq(Vec::new(), anchor)
                } else {
                    Frame::Map(BTreeMap::new(), anchor, None)
                });
                None
            }
            Event::SequenceEnd | Event::MappingEnd => {
                let (v, anchor) = match stack.pop() {
                    Some(Frame::Seq(items, a)) => (Json::Array(items), a),
                    Some(Frame::Map(m, a, _)) => (Json::Object(m), a),
                    None => return Err("unbalanced YAML events".into()),
                };
                if anchor > 0 {
                    anchors.insert(anchor, v.clone());
                }
                Some(v)
            }
        };
        if let Some(v) = done {
            match stack.last_mut() {
                None => doc = Some(v),
                Some(Frame::Seq(items, _)) => items.push(v),
                Some(Frame::Map(m, _, key)) => match key.take() {
                    None => {
                        *key = Some(key_text(v).map_err(|e| format!("line {}: {e}", mark.line()))?)
                    }
                    Some(k) => {
                        m.insert(k, v);
                    }
                },
            }
        }
    }
    Ok(docs)
}

/// Parses a YAML stream and returns its non-empty documents.
pub fn load_documents(text: &str) -> Result<Vec<Json>, String> {
    Ok(load_all(text)?
        .into_iter()
        .filter(|d| !matches!(d, Json::Null))
        .collect())
}

/// Parses one document that is either JSON or YAML (JSON when it starts with `{`).
pub fn parse_document(text: &str) -> Result<Json, String> {
    if text.trim_start().starts_with('{') {
        return parse_json(text);
    }
    let docs = load_documents(text)?;
    match docs.len() {
        0 => Ok(Json::Object(BTreeMap::new())),
        1 => Ok(docs.into_iter().next().unwrap_or(Json::Null)),
        n => Err(format!("expected one document, found {n}")),
    }
}

fn key_text(v: Json) -> Result<String, String> {
    match v {
        Json::String(s) => Ok(s),
        Json::Null => Ok("null".into()),
        Json::Bool(b) => Ok(b.to_string()),
        Json::Number(n) => Ok(format_number(n)),
        _ => Err("mapping keys must be scalars".into()),
    }
}

/// Resolves a scalar with YAML 1.2's core schema (what yaml-rust2 implements).
fn scalar(text: &str, style: TScalarStyle, tag: Option<&str>) -> Result<Json, String> {
    if style != TScalarStyle::Plain {
        return Ok(Json::String(text.to_string()));
    }
    match tag {
        Some("str") => return Ok(Json::String(text.to_string())),
        Some("null") => return Ok(Json::Null),
        Some("bool") => {
            return match text {
                "true" | "True" | "TRUE" => Ok(Json::Bool(true)),
                "false" | "False" | "FALSE" => Ok(Json::Bool(false)),
                _ => Err(format!("invalid !!bool {text:?}")),
            };
        }
        _ => {}
    }
    match text {
        "" | "~" | "null" | "Null" | "NULL" => return Ok(Json::Null),
        "true" | "True" | "TRUE" => return Ok(Json::Bool(true)),
        "false" | "False" | "FALSE" => return Ok(Json::Bool(false)),
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" | "-.inf" | "-.Inf" | "-.INF"
        | ".nan" | ".NaN" | ".NAN" => {
            return Err(format!("{text} is not a number JSON can hold"));
        }
        _ => {}
    }
    if let Some(n) = parse_yaml_number(text) {
        return Ok(Json::Number(n));
    }
    Ok(Json::String(text.to_string()))
}

fn parse_yaml_number(t: &str) -> Option<f64> {
    let (neg, body) = match t.as_bytes().first()? {
        b'-' => (true, &t[1..]),
        b'+' => (false, &t[1..]),
        _ => (false, t),
    };
    let sign = if neg { -1.0 } else { 1.0 };
    if let Some(h) = body.strip_prefix("0x") {
        return (!neg && t.starts_with('0'))
            .then(|| u64::from_str_radix(h, 16).ok().map(|v| v as f64))
            .flatten();
    }
    if let Some(o) = body.strip_prefix("0o") {
        return (!neg && t.starts_with('0'))
            .then(|| u64::from_str_radix(o, 8).ok().map(|v| v as f64))
            .flatten();
    }
    // [-+]? ( \. [0-9]+ | [0-9]+ ( \. [0-9]* )? ) ( [eE] [-+]? [0-9]+ )?
    let b = body.as_bytes();
    let mut i = 0;
    let digits = |i: &mut usize| {
        let s = *i;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
        *i - s
    };
    let int_digits = digits(&mut i);
    let mut frac_digits = 0;
    if i < b.len() && b[i] == b'.' {
        i += 1;
        frac_digits = digits(&mut i);
    }
    if int_digits == 0 && frac_digits == 0 {
        return None;
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        i += 1;
        if i < b.len() && (b[i] == b'-' || b[i] == b'+') {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return None;
        }
    }
    if i != b.len() {
        return None;
    }
    let v: f64 = body.parse().ok()?;
    v.is_finite().then_some(sign * v)
}

/// Writes one document in block style (`---` separators are the caller's).
pub fn emit(v: &Json) -> String {
    let mut out = String::new();
    match v {
        Json::Object(m) if !m.is_empty() => emit_map(&mut out, m, 0, false),
        Json::Array(a) if !a.is_empty() => emit_seq(&mut out, a, 0, false),
        other => {
            out.push_str(&scalar_text(other));
            out.push('\n');
        }
    }
    out
}

fn pad(out: &mut String, n: usize) {
    out.extend(std::iter::repeat_n(' ', n));
}

fn emit_map(out: &mut String, m: &BTreeMap<String, Json>, indent: usize, inline_first: bool) {
    for (i, (k, v)) in m.iter().enumerate() {
        if i > 0 || !inline_first {
            pad(out, indent);
        }
        out.push_str(&quote(k));
        out.push(':');
        match v {
            Json::Object(c) if !c.is_empty() => {
                out.push('\n');
                emit_map(out, c, indent + 2, false);
            }
            Json::Array(c) if !c.is_empty() => {
                out.push('\n');
                emit_seq(out, c, indent, false);
            }
            other => {
                out.push(' ');
                out.push_str(&scalar_text(other));
                out.push('\n');
            }
        }
    }
}

fn emit_seq(out: &mut String, a: &[Json], indent: usize, inline_first: bool) {
    for (i, v) in a.iter().enumerate() {
        if i > 0 || !inline_first {
            pad(out, indent);
        }
        out.push_str("- ");
        match v {
            Json::Object(c) if !c.is_empty() => emit_map(out, c, indent + 2, true),
            Json::Array(c) if !c.is_empty() => emit_seq(out, c, indent + 2, true),
            other => {
                out.push_str(&scalar_text(other));
                out.push('\n');
            }
        }
    }
}

fn scalar_text(v: &Json) -> String {
    match v {
        Json::Null => "null".into(),
        Json::Bool(b) => b.to_string(),
        Json::Number(n) => yaml_number(*n),
        Json::String(s) => quote(s),
        Json::Object(_) => "{}".into(),
        Json::Array(_) => "[]".into(),
    }
}

/// A float64 as YAML: integers plainly, exponents with a `.` and a signed exponent so
/// that YAML 1.1 readers (PyYAML) also read a float.
fn yaml_number(n: f64) -> String {
    let s = format_number(n);
    match s.split_once('e') {
        Some((mant, exp)) if !mant.contains('.') => format!("{mant}.0e{exp}"),
        _ => s,
    }
}

/// A string as a YAML scalar: plain when no YAML 1.1/1.2 reader could read it as anything
/// else, double-quoted (JSON escapes, which YAML accepts) otherwise.
pub fn quote(s: &str) -> String {
    if is_plain_safe(s) {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len() + 2);
    write_quoted(&mut out, s, true);
    out
}

fn is_plain_safe(s: &str) -> bool {
    let Some(first) = s.chars().next() else {
        return false;
    };
    if !(first.is_ascii_alphabetic() || first == '/' || first == '_') {
        return false;
    }
    if s.ends_with(' ') || s.ends_with(':') {
        return false;
    }
    if s.contains(": ") || s.contains(" #") {
        return false;
    }
    if !s
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || " _-./:()+=,@".contains(c))
    {
        return false;
    }
    // Words YAML 1.1 reads as booleans or null.
    !matches!(
        s.to_ascii_lowercase().as_str(),
        "y" | "n" | "yes" | "no" | "true" | "false" | "on" | "off" | "null"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_document_json_or_yaml() {
        assert_eq!(parse_document("{\"a\": 1}"), parse_document("a: 1\n"));
        assert_eq!(parse_document(""), Ok(Json::Object(BTreeMap::new())));
        assert!(parse_document("a: 1\n---\nb: 2\n").is_err());
        let deep = "[".repeat(100_000) + &"]".repeat(100_000);
        assert!(parse_document(&deep).is_err());
    }

    #[test]
    fn loads_multi_documents_and_scalars() {
        let docs =
            load_documents("---\na: 1\nb: [x, 'y', 2.5, true, null]\n---\n---\n- k: v\n  n: -3\n")
                .unwrap();
        assert_eq!(docs.len(), 2);
        let a = match &docs[0] {
            Json::Object(m) => m,
            d => panic!("{d:?}"),
        };
        assert_eq!(a["a"], Json::Number(1.0));
        assert_eq!(
            a["b"],
            Json::Array(vec![
                Json::String("x".into()),
                Json::String("y".into()),
                Json::Number(2.5),
                Json::Bool(true),
                Json::Null
            ])
        );
        assert!(matches!(&docs[1], Json::Array(v) if v.len() == 1));
    }

    #[test]
    fn deep_yaml_is_an_error_not_a_crash() {
        let deep = "[".repeat(100_000) + &"]".repeat(100_000);
        // yaml-rust2's scanner stops flow nesting itself; our own bound covers block nesting.
        assert!(load_all(&deep).is_err());
        let mut block = String::new();
        for i in 0..(MAX_JSON_DEPTH + 5) {
            block.push_str(&" ".repeat(i));
            block.push_str("k:\n");
        }
        let e = load_all(&block).unwrap_err();
        assert!(e.contains("deeper"), "{e}");
    }

    #[test]
    fn aliases_expand() {
        let docs = load_documents("a: &x {k: 1}\nb: *x\n").unwrap();
        match &docs[0] {
            Json::Object(m) => assert_eq!(m["a"], m["b"]),
            d => panic!("{d:?}"),
        }
    }

    #[test]
    fn emitter_round_trips_and_quotes() {
        let mut m = BTreeMap::new();
        m.insert("s".to_string(), Json::String("yes".into()));
        m.insert("t".to_string(), Json::String("2024-01-01T00:00:00Z".into()));
        m.insert("p".to_string(), Json::String("plain value".into()));
        m.insert("num".to_string(), Json::Number(1e21));
        m.insert("e".to_string(), Json::Object(BTreeMap::new()));
        m.insert(
            "l".to_string(),
            Json::Array(vec![
                Json::Object(
                    [
                        ("a".to_string(), Json::Number(1.0)),
                        ("b".to_string(), Json::String("multi\nline".into())),
                    ]
                    .into_iter()
                    .collect(),
                ),
                Json::Array(vec![Json::Bool(false)]),
            ]),
        );
        let doc = Json::Object(m);
        let text = emit(&doc);
        assert!(text.contains("s: \"yes\"\n"), "{text}");
        assert!(text.contains("p: plain value\n"), "{text}");
        assert!(
            text.contains("l:\n- a: 1\n  b: \"multi\\nline\"\n- - false\n"),
            "{text}"
        );
        assert!(text.contains("num: 1.0e+21\n"), "{text}");
        assert!(emit(&Json::String("n".into())).starts_with("\"n\""));
        let back = load_documents(&text).unwrap();
        assert_eq!(back, vec![doc]);
    }
}
