//! The string builtins' ASCII fast paths give byte-identical answers to their general
//! paths (go-textseg's grapheme clusters, Go's per-rune case tables), over every string of
//! the conformance builtin corpus (literals of its expressions and string results) and
//! generated strings: ASCII with every control character, combining marks, emoji (with
//! modifiers, ZWJ sequences, flags), CJK, Hangul jamo, Indic, CR LF.

mod common;

use fn_hcl::builtins;
use fn_hcl::builtins::string::{
    lower_general, lower_str, strrev_general, strrev_str, substr_general, substr_str,
    title_general, title_str, upper_general, upper_str,
};
use fn_hcl::text::unicode::{clusters_prefix_len, grapheme_count, graphemes};
use fn_hcl::value::Value;

/// The contents of the double-quoted literals of an HCL expression (escapes of the
/// corpus: `\n \r \t \" \\ \uXXXX \UXXXXXXXX`; templates are taken as their text).
fn literals(expr: &str, out: &mut Vec<String>) {
    let mut chars = expr.chars();
    while let Some(c) = chars.next() {
        if c != '"' {
            continue;
        }
        let mut s = String::new();
        while let Some(c) = chars.next() {
            match c {
                '"' => break,
                '\\' => match chars.next() {
                    Some('n') => s.push('\n'),
                    Some('r') => s.push('\r'),
                    Some('t') => s.push('\t'),
                    Some(u @ ('u' | 'U')) => {
                        let n = if u == 'u' { 4 } else { 8 };
                        let hex: String = chars.by_ref().take(n).collect();
                        if let Some(c) = u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32)
                        {
                            s.push(c);
                        }
                    }
                    Some(c) => s.push(c),
                    None => break,
                },
                c => s.push(c),
            }
        }
        out.push(s);
    }
}

/// Every string of the builtin corpus (`conformance/builtins/*.jsonl`).
fn corpus() -> Vec<String> {
    let Some(shared) = common::shared_dir("string fast paths over the builtin corpus") else {
        return Vec::new();
    };
    let dir = shared.join("conformance/builtins");
    let mut files = Vec::new();
    common::walk(&dir, &mut files);
    let mut out = Vec::new();
    for f in files
        .iter()
        .filter(|f| f.extension().is_some_and(|e| e == "jsonl"))
    {
        let text = std::fs::read_to_string(f).unwrap_or_else(|e| panic!("{f:?}: {e}"));
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            match serde_json::from_str::<serde_json::Value>(line) {
                Ok(j) => {
                    if let Some(e) = j["expr"].as_str() {
                        literals(e, &mut out);
                    }
                    collect_strings(&j["result"], &mut out);
                }
                // Numbers beyond f64 (`1e400`): the expression alone, which comes first.
                Err(_) => {
                    let e = line
                        .strip_prefix("{\"expr\": ")
                        .and_then(|r| r.split_once(", \"result\"").map(|(e, _)| e))
                        .and_then(|e| serde_json::from_str::<String>(e).ok())
                        .unwrap_or_else(|| panic!("{f:?}: unreadable line: {line}"));
                    literals(&e, &mut out);
                }
            }
        }
    }
    assert!(out.len() > 300, "the corpus has {} strings", out.len());
    out
}

fn collect_strings(j: &serde_json::Value, out: &mut Vec<String>) {
    match j {
        serde_json::Value::String(s) => out.push(s.clone()),
        serde_json::Value::Array(a) => a.iter().for_each(|x| collect_strings(x, out)),
        serde_json::Value::Object(o) => o.values().for_each(|x| collect_strings(x, out)),
        _ => {}
    }
}

/// Pieces the generated strings are made of.
const PIECES: &[&str] = &[
    "a",
    "Z",
    "m",
    "0",
    "9",
    "_",
    " ",
    "-",
    ".",
    "'",
    "\t",
    "\n",
    "\r",
    "\r\n",
    "\u{0}",
    "\u{7f}",
    "é",
    "e\u{301}",
    "\u{301}",
    "\u{308}",
    "\u{200D}",
    "👍",
    "👍🏽",
    "👩\u{200D}👩\u{200D}👦",
    "🇫🇷",
    "🇩",
    "中",
    "文",
    "한",
    "\u{1100}\u{1161}\u{11A8}",
    "ǆ",
    "ǅ",
    "ß",
    "İ",
    "ı",
    "ᾳ",
    "क्षि",
    "\u{600}",
    "\u{FFFD}",
    "Ω",
    "ﬁ",
    "a\u{200D}b",
    "\u{1F1FA}\u{1F1F8}",
    "ა",
];

/// Deterministic pseudo-random strings of 0 to 11 pieces, every ASCII character alone
/// and in pairs, and the pieces alone.
fn generated() -> Vec<String> {
    let mut out: Vec<String> = PIECES.iter().map(|p| p.to_string()).collect();
    for a in 0u8..128 {
        out.push((a as char).to_string());
        out.push(format!("{}x{}", a as char, a as char));
    }
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = |n: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % n as u64) as usize
    };
    for _ in 0..4000 {
        let len = next(12);
        // Half the strings ASCII only (the fast paths' domain), half anything.
        let ascii = next(2) == 0;
        let mut s = String::new();
        for _ in 0..len {
            let p = PIECES[next(PIECES.len())];
            if !ascii || p.is_ascii() {
                s.push_str(p);
            }
        }
        out.push(s);
    }
    out.push("a".repeat(300));
    out.push("0123456789abcdef".repeat(4));
    out
}

fn check(s: &str) {
    assert_eq!(upper_str(s), upper_general(s), "upper({s:?})");
    assert_eq!(lower_str(s), lower_general(s), "lower({s:?})");
    // The builtins, which map ASCII in their own buffer, answer as the general paths do
    // (on the string as a value holds it: in normal form C).
    let v = Value::string(s);
    let arg = v.as_str().unwrap_or_default();
    for (name, general) in [
        ("upper", upper_general as fn(&str) -> String),
        ("lower", lower_general),
    ] {
        let id = builtins::lookup(name).expect("a builtin");
        let got = builtins::call(id, vec![v.clone()]).expect("a string");
        let want = Value::string(general(arg));
        assert_eq!(got.as_str(), want.as_str(), "{name}({s:?}) as a builtin");
    }
    assert_eq!(title_str(s), title_general(s), "title({s:?})");
    assert_eq!(strrev_str(s), strrev_general(s), "strrev({s:?})");
    let n = graphemes(s).count();
    assert_eq!(grapheme_count(s), n, "length({s:?})");
    for k in 0..=n + 1 {
        let general: usize = graphemes(s).take(k).map(str::len).sum();
        assert_eq!(clusters_prefix_len(s, k), general, "%.{k}s of {s:?}");
    }
    let n = i64::try_from(n).unwrap_or(i64::MAX);
    // Every offset and length around the string's; every 7th of a long string's.
    let step = if n > 40 { 7 } else { 1 };
    for offset in ((-n - 2)..=(n + 2)).step_by(step) {
        for length in (-2..=(n + 2)).step_by(step) {
            assert_eq!(
                substr_str(s, offset, length),
                substr_general(s, offset, length),
                "substr({s:?}, {offset}, {length})"
            );
        }
    }
    for (offset, length) in [(i64::MIN, 1), (0, i64::MAX), (i64::MAX, 1), (1, i64::MIN)] {
        assert_eq!(
            substr_str(s, offset, length),
            substr_general(s, offset, length),
            "substr({s:?}, {offset}, {length})"
        );
    }
}

#[test]
fn fast_paths_agree_with_general_paths_on_the_builtin_corpus() {
    for s in corpus() {
        check(&s);
    }
}

#[test]
fn fast_paths_agree_with_general_paths_on_generated_strings() {
    let all = generated();
    let ascii = all.iter().filter(|s| s.is_ascii()).count();
    assert!(
        ascii > 2000 && all.len() - ascii > 1000,
        "both domains covered"
    );
    for s in &all {
        check(s);
    }
}

/// Known answers from cty (the general paths are the ones the conformance suite checks;
/// these pin the fast paths on their own too).
#[test]
fn fast_paths_known_answers() {
    assert_eq!(substr_str("0123456789abcdef", 0, 4), "0123");
    assert_eq!(substr_str("hello", -3, -1), "llo");
    assert_eq!(substr_str("hello", 1, 0), "");
    assert_eq!(substr_str("hello", -1, 0), "o");
    assert_eq!(substr_str("hello", 10, 1), "");
    assert_eq!(upper_str("svc-007"), "SVC-007");
    assert!(matches!(
        lower_str("svc-007"),
        std::borrow::Cow::Borrowed(_)
    ));
    assert_eq!(title_str("hello wOrld_x y-z"), "Hello WOrld_x Y-Z");
    assert_eq!(strrev_str("a\r\nb"), "b\r\na");
    assert_eq!(strrev_str("abc"), "cba");
}
