//! The JSON/YAML document tree of the CLI, the protojson mapping and the debug dump: one
//! type, [`Json`], below both its readers and writers (`yaml` loads and emits it,
//! `protojson` maps the protocol messages to and from it), so neither reaches into the
//! other. Objects keep their keys sorted, the order every output prints them in.

use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Deepest nesting accepted in JSON/YAML input (and the bound of every recursive walk here).
pub const MAX_JSON_DEPTH: usize = 512;

/// A JSON document. Objects keep their keys sorted, which is the order we print them in.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum Json {
    #[default]
    Null,
    Bool(bool),
    Number(f64),
    String(String),
    Array(Vec<Json>),
    Object(BTreeMap<String, Json>),
}

impl Json {
    /// Number of nodes (for bounding YAML alias expansion).
    pub fn node_count(&self) -> usize {
        let mut n = 0usize;
        let mut stack = vec![self];
        while let Some(v) = stack.pop() {
            n += 1;
            match v {
                Json::Array(a) => stack.extend(a.iter()),
                Json::Object(m) => stack.extend(m.values()),
                _ => {}
            }
        }
        n
    }

    /// The member `key` of an object.
    pub fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Object(m) => m.get(key),
            _ => None,
        }
    }

    /// The string, if this is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Json::String(s) => Some(s),
            _ => None,
        }
    }

    /// Go's `%T` of this value decoded by `encoding/json` into `any` (`float64`,
    /// `map[string]interface {}`, ...), as function-hcl's merge errors name it.
    pub fn go_type(&self) -> &'static str {
        match self {
            Json::Null => "<nil>",
            Json::Bool(_) => "bool",
            Json::Number(_) => "float64",
            Json::String(_) => "string",
            Json::Array(_) => "[]interface {}",
            Json::Object(_) => "map[string]interface {}",
        }
    }

    /// What Go's messages call this kind of value ("a bool", "an object").
    pub fn type_name(&self) -> &'static str {
        match self {
            Json::Null => "null",
            Json::Bool(_) => "a bool",
            Json::Number(_) => "a number",
            Json::String(_) => "a string",
            Json::Array(_) => "a list",
            Json::Object(_) => "an object",
        }
    }
}

/// Parses JSON text nested at most [`MAX_JSON_DEPTH`] levels, as YAML is, so `fn-hcl eval`
/// and `render` take the request data the documented limit promises (serde_json's own
/// limit of 128 is lifted once a byte scan has bounded the nesting, so the recursive
/// parser's stack stays bounded).
pub fn parse_json(text: &str) -> Result<Json, String> {
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for &b in text.as_bytes() {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > MAX_JSON_DEPTH + 1 {
                    return Err(format!("JSON nested deeper than {MAX_JSON_DEPTH} levels"));
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    let mut de = serde_json::Deserializer::from_str(text);
    de.disable_recursion_limit();
    let mut values = de.into_iter::<serde_json::Value>();
    let v = match values.next() {
        Some(v) => v.map_err(|e| e.to_string())?,
        None => return Err("EOF while parsing a value at line 1 column 0".into()),
    };
    if let Some(extra) = values.next() {
        return Err(match extra {
            Err(e) => e.to_string(),
            Ok(_) => "trailing characters after the JSON value".into(),
        });
    }
    from_serde(&v, 0)
}

fn from_serde(v: &serde_json::Value, depth: usize) -> Result<Json, String> {
    if depth > MAX_JSON_DEPTH {
        return Err(format!("JSON nested deeper than {MAX_JSON_DEPTH} levels"));
    }
    Ok(match v {
        serde_json::Value::Null => Json::Null,
        serde_json::Value::Bool(b) => Json::Bool(*b),
        serde_json::Value::Number(n) => Json::Number(
            n.as_f64()
                .ok_or_else(|| format!("number {n} does not fit a float64"))?,
        ),
        serde_json::Value::String(s) => Json::String(s.clone()),
        serde_json::Value::Array(a) => Json::Array(
            a.iter()
                .map(|x| from_serde(x, depth + 1))
                .collect::<Result<_, _>>()?,
        ),
        serde_json::Value::Object(m) => Json::Object(
            m.iter()
                .map(|(k, x)| Ok((k.clone(), from_serde(x, depth + 1)?)))
                .collect::<Result<_, String>>()?,
        ),
    })
}

/// A float64 as Go's protojson writes it: shortest digits, plain for 1e-6 <= |n| < 1e21,
/// exponent form (`1e+21`, `1e-7`) outside that range.
pub fn format_number(n: f64) -> String {
    if n == 0.0 {
        return if n.is_sign_negative() {
            "-0".into()
        } else {
            "0".into()
        };
    }
    let a = n.abs();
    if (1e-6..1e21).contains(&a) {
        return format!("{n}");
    }
    let e = format!("{n:e}");
    match e.split_once('e') {
        Some((mant, exp)) => match exp.strip_prefix('-') {
            Some(neg) => format!("{mant}e-{neg}"),
            None => format!("{mant}e+{exp}"),
        },
        None => e,
    }
}

/// Pretty-prints JSON: sorted keys, 2-space indentation, `": "` after keys, non-ASCII kept.
pub fn to_pretty(v: &Json) -> String {
    let mut out = String::new();
    write_pretty(&mut out, v, 0);
    out
}

fn write_pretty(out: &mut String, v: &Json, indent: usize) {
    match v {
        Json::Null => out.push_str("null"),
        Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Json::Number(n) => out.push_str(&format_number(*n)),
        Json::String(s) => write_quoted(out, s, false),
        Json::Array(a) if a.is_empty() => out.push_str("[]"),
        Json::Object(m) if m.is_empty() => out.push_str("{}"),
        Json::Array(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                out.push_str(if i == 0 { "\n" } else { ",\n" });
                out.extend(std::iter::repeat_n(' ', indent + 2));
                write_pretty(out, x, indent + 2);
            }
            out.push('\n');
            out.extend(std::iter::repeat_n(' ', indent));
            out.push(']');
        }
        Json::Object(m) => {
            out.push('{');
            for (i, (k, x)) in m.iter().enumerate() {
                out.push_str(if i == 0 { "\n" } else { ",\n" });
                out.extend(std::iter::repeat_n(' ', indent + 2));
                write_quoted(out, k, false);
                out.push_str(": ");
                write_pretty(out, x, indent + 2);
            }
            out.push('\n');
            out.extend(std::iter::repeat_n(' ', indent));
            out.push('}');
        }
    }
}

/// Writes `s` as a JSON string. A YAML double-quoted scalar takes the same escapes; with
/// `yaml`, backspace and form feed are written as `\u0008` and `\u000c`, and DEL, the C1
/// controls, the line and paragraph separators and the byte-order mark are escaped too,
/// so that no YAML reader folds or drops them.
pub(crate) fn write_quoted(out: &mut String, s: &str, yaml: bool) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' if !yaml => out.push_str("\\b"),
            '\u{c}' if !yaml => out.push_str("\\f"),
            c if (c as u32) < 0x20 || (yaml && yaml_escaped(c)) => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// The printable-looking characters a YAML reader would not keep as they are.
fn yaml_escaped(c: char) -> bool {
    matches!(
        c,
        '\u{7f}'..='\u{9f}' | '\u{2028}' | '\u{2029}' | '\u{feff}'
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_strings_for_json_and_yaml() {
        let quoted = |s: &str, yaml: bool| {
            let mut out = String::new();
            write_quoted(&mut out, s, yaml);
            out
        };
        let s = "a\"\\\n\r\t\u{8}\u{c}\u{1}\u{7f}\u{85}\u{2028}\u{feff}é";
        assert_eq!(
            quoted(s, false),
            "\"a\\\"\\\\\\n\\r\\t\\b\\f\\u0001\u{7f}\u{85}\u{2028}\u{feff}é\""
        );
        assert_eq!(
            quoted(s, true),
            "\"a\\\"\\\\\\n\\r\\t\\u0008\\u000c\\u0001\\u007f\\u0085\\u2028\\ufeffé\""
        );
    }

    #[test]
    fn numbers_like_go() {
        assert_eq!(format_number(60.0), "60");
        assert_eq!(format_number(0.5), "0.5");
        assert_eq!(format_number(1e21), "1e+21");
        assert_eq!(format_number(1.5e-7), "1.5e-7");
        assert_eq!(format_number(0.000001), "0.000001");
        assert_eq!(format_number(-0.0), "-0");
        assert_eq!(
            format_number(12345678901234567890.0),
            "12345678901234567000"
        );
    }

    #[test]
    fn deep_json_is_an_error() {
        let deep = "[".repeat(100_000) + &"]".repeat(100_000);
        assert!(parse_json(&deep).is_err());
    }

    #[test]
    fn json_nesting_is_bounded_by_the_documented_limit_not_serde_jsons() {
        let nest = |n: usize| "[".repeat(n) + &"]".repeat(n);
        assert!(parse_json(&nest(MAX_JSON_DEPTH)).is_ok());
        let e = parse_json(&nest(MAX_JSON_DEPTH + 5)).unwrap_err();
        assert!(e.contains("nested deeper than 512 levels"), "{e}");
        // Brackets inside strings do not count; hostile depth is refused before parsing.
        assert!(parse_json(&format!("[\"{}\\\"\"]", "[".repeat(5000))).is_ok());
        assert!(parse_json(&"[".repeat(1_000_000)).is_err());
        assert!(parse_json("{} {}").is_err());
        assert!(parse_json("").is_err());
    }
}
