//! Go's `strconv.Quote` and `QuoteRune`: hcl, cty and Terraform quote names and values
//! this way in their messages, so every layer that words a message uses these.

use std::sync::OnceLock;

fn go_is_print(c: char) -> bool {
    if c.is_ascii() {
        return (' '..='~').contains(&c);
    }
    static RE: OnceLock<Option<regex::Regex>> = OnceLock::new();
    let re = RE.get_or_init(|| regex::Regex::new(r"^[\p{L}\p{M}\p{N}\p{P}\p{S}]$").ok());
    let mut buf = [0u8; 4];
    match re {
        Some(re) => re.is_match(c.encode_utf8(&mut buf)),
        None => !c.is_control(),
    }
}

fn push_escaped_rune(out: &mut String, c: char, quote: char) {
    if c == quote || c == '\\' {
        out.push('\\');
        out.push(c);
        return;
    }
    if go_is_print(c) {
        out.push(c);
        return;
    }
    match c {
        '\u{7}' => out.push_str("\\a"),
        '\u{8}' => out.push_str("\\b"),
        '\u{c}' => out.push_str("\\f"),
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        '\u{b}' => out.push_str("\\v"),
        c if (c as u32) < 0x20 || c == '\u{7f}' => {
            out.push_str(&format!("\\x{:02x}", c as u32));
        }
        c if (c as u32) < 0x10000 => out.push_str(&format!("\\u{:04x}", c as u32)),
        c => out.push_str(&format!("\\U{:08x}", c as u32)),
    }
}

/// Go's `strconv.Quote` (`%q` of a string).
pub fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        push_escaped_rune(&mut out, c, '"');
    }
    out.push('"');
    out
}

/// Go's `strconv.QuoteRune` (`%q` of a rune).
pub fn go_quote_rune(c: char) -> String {
    let mut out = String::from("'");
    push_escaped_rune(&mut out, c, '\'');
    out.push('\'');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_like_strconv() {
        assert_eq!(
            go_quote("a\"b\\\n\u{1}é\u{a0}"),
            "\"a\\\"b\\\\\\n\\x01é\\u00a0\""
        );
        // strconv's own test table: escapes by name, other controls as \x, Go's IsPrint
        // (letters, marks, numbers, punctuation, symbols; spaces other than U+0020 escape).
        assert_eq!(
            go_quote("\u{7}\u{8}\u{c}\r\n\t\u{b}"),
            r#""\a\b\f\r\n\t\v""#
        );
        assert_eq!(go_quote("\u{7f}\u{4}"), r#""\x7f\x04""#);
        assert_eq!(go_quote("\u{263a}"), "\"\u{263a}\"");
        assert_eq!(go_quote("\u{10ffff}"), r#""\U0010ffff""#);
        assert_eq!(
            go_quote("!\u{a0}!\u{2000}!\u{3000}!"),
            r#""!\u00a0!\u2000!\u3000!""#
        );
        assert_eq!(go_quote("\u{200b}\u{feff}"), r#""\u200b\ufeff""#);
        assert_eq!(go_quote_rune('z'), "'z'");
        assert_eq!(go_quote_rune('\''), "'\\''");
    }
}
