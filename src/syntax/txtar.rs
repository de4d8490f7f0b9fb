//! The txtar archive reader: function-hcl's `hcl` input holds its files as a txtar
//! archive (`-- main.hcl --` lines start files). This follows golang.org/x/tools/txtar's
//! `Parse`: text before the first marker is a comment and ignored, a marker line is
//! `-- NAME --` (the name trimmed of surrounding whitespace, a line ending in `\r` is not
//! a marker), each file's data runs to the next marker line and the last file gets a
//! trailing newline if it lacks one. Empty files are kept, as function-hcl keeps them.

use crate::syntax::parser::MAX_INPUT_BYTES;

/// What function-hcl answers when the input has no file marker at all.
pub const NO_FILES: &str = "no HCL input files found, are you using the txtar format?";

/// Splits a txtar archive into `(name, data)` pairs, in order.
pub fn parse(text: &str) -> Result<Vec<(String, String)>, String> {
    if text.len() > MAX_INPUT_BYTES {
        return Err(format!(
            "the HCL input is {} bytes long; fn-hcl accepts at most {} bytes per program",
            text.len(),
            MAX_INPUT_BYTES
        ));
    }
    let mut files = Vec::new();
    let (_comment, mut name, mut rest) = find_file_marker(text);
    while let Some(n) = name {
        let (data, next_name, after) = find_file_marker(rest);
        files.push((n.to_string(), data));
        name = next_name;
        rest = after;
    }
    if files.is_empty() {
        return Err(NO_FILES.to_string());
    }
    Ok(files)
}

/// golang.org/x/tools/txtar's `Format` of an archive without a comment: each file as a
/// `-- NAME --` line followed by its data, a newline added to data that lacks one.
pub fn format(files: &[(String, String)]) -> String {
    let mut out = String::with_capacity(files.iter().map(|(n, d)| n.len() + d.len() + 8).sum());
    for (name, data) in files {
        out.push_str("-- ");
        out.push_str(name);
        out.push_str(" --\n");
        out.push_str(data);
        if !data.is_empty() && !data.ends_with('\n') {
            out.push('\n');
        }
    }
    out
}

/// Like [`parse`] for raw bytes: invalid UTF-8 is reported with the file name and the
/// line and column (in characters) where it occurs, in hcl's diagnostic form.
pub fn parse_bytes(data: &[u8]) -> Result<Vec<(String, String)>, String> {
    match std::str::from_utf8(data) {
        Ok(s) => parse(s),
        Err(e) => {
            let bad = e.valid_up_to();
            // Which file is it in, and where?
            let valid = std::str::from_utf8(&data[..bad]).unwrap_or("");
            let (file, line, col) = locate(valid);
            Err(format!(
                "{file}:{line},{col}-{}: Invalid character encoding; All input files must be UTF-8 encoded. Ensure that UTF-8 encoding is selected in your editor.",
                col + 1
            ))
        }
    }
}

/// File name, line and column of the end of `valid` (a prefix of the archive).
fn locate(valid: &str) -> (String, usize, usize) {
    let mut file = String::from("<input>");
    let mut line_in_file = 0usize;
    let mut last_line = "";
    for l in valid.split('\n') {
        last_line = l;
        line_in_file += 1;
        if let Some(n) = marker_name(l) {
            file = n.to_string();
            line_in_file = 0;
        }
    }
    let col = last_line.chars().count() + 1;
    (file, line_in_file.max(1), col)
}

/// The name on a marker line (without its `\n`), if it is one.
fn marker_name(line: &str) -> Option<&str> {
    let inner = line.strip_prefix("-- ")?.strip_suffix(" --")?;
    let name = inner.trim();
    (!name.is_empty()).then_some(name)
}

/// Is `data` at a marker line? Returns the name and the text after the line.
fn is_marker(data: &str) -> Option<(&str, &str)> {
    if !data.starts_with("-- ") {
        return None;
    }
    let (line, after) = match data.find('\n') {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, ""),
    };
    if !(line.ends_with(" --") && line.len() >= 6) {
        return None;
    }
    let name = line[3..line.len() - 3].trim();
    if name.is_empty() {
        return None;
    }
    Some((name, after))
}

/// txtar's `findFileMarker`: the data before the next marker (newline-fixed when it is
/// the end of the archive), the marker's name, and the text after the marker line.
fn find_file_marker(data: &str) -> (String, Option<&str>, &str) {
    let mut i = 0;
    loop {
        if let Some((name, after)) = is_marker(&data[i..]) {
            return (data[..i].to_string(), Some(name), after);
        }
        // The next line that starts with "-- " (a byte scan: `str::find`'s two-way
        // searcher costs more to set up than a small program takes to scan).
        match next_dash_line(data.as_bytes(), i) {
            Some(j) => i = j,
            None => return (fix_nl(data), None, ""),
        }
    }
}

/// The start of the first line after `from` that begins with `-- `.
fn next_dash_line(b: &[u8], from: usize) -> Option<usize> {
    let mut i = from;
    while let Some(nl) = b.get(i..)?.iter().position(|&c| c == b'\n') {
        let start = i + nl + 1;
        if b.get(start..start + 3) == Some(b"-- ") {
            return Some(start);
        }
        i = start;
    }
    None
}

fn fix_nl(data: &str) -> String {
    let mut s = data.to_string();
    if !s.is_empty() && !s.ends_with('\n') {
        s.push('\n');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_is_gos_and_parses_back() {
        let files = vec![
            ("a.hcl".to_string(), "x = 1\n".to_string()),
            ("b.hcl".to_string(), "y = 2".to_string()),
            ("empty.hcl".to_string(), String::new()),
        ];
        let text = format(&files);
        assert_eq!(
            text,
            "-- a.hcl --\nx = 1\n-- b.hcl --\ny = 2\n-- empty.hcl --\n"
        );
        let back = parse(&text).unwrap();
        assert_eq!(back[0], files[0]);
        assert_eq!(back[1].1, "y = 2\n");
        assert_eq!(back[2], files[2]);
    }

    fn names(v: &[(String, String)]) -> Vec<(&str, &str)> {
        v.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect()
    }

    #[test]
    fn splits_files_and_keeps_newlines() {
        let a = parse("comment\n-- a.hcl --\nx = 1\n\n-- b.hcl --\ny = 2").unwrap();
        assert_eq!(
            names(&a),
            vec![("a.hcl", "x = 1\n\n"), ("b.hcl", "y = 2\n")]
        );
    }

    #[test]
    fn empty_files_are_kept() {
        let a = parse("-- main.hcl --\n-- other.hcl --\n").unwrap();
        assert_eq!(names(&a), vec![("main.hcl", ""), ("other.hcl", "")]);
    }

    #[test]
    fn marker_rules() {
        // Names are trimmed; "-- --" and lines with extra text are not markers.
        let a = parse("--   spaced.hcl   --\n-- --\n--x --\n-- a -- b\n").unwrap();
        assert_eq!(
            names(&a),
            vec![("spaced.hcl", "-- --\n--x --\n-- a -- b\n")]
        );
        // A marker with a trailing \r is not a marker in x/tools/txtar.
        assert_eq!(parse("-- a --\r\nx\n"), Err(NO_FILES.to_string()));
        // The marker may be the last line without a newline.
        let b = parse("-- a --\nx\n-- b --").unwrap();
        assert_eq!(names(&b), vec![("a", "x\n"), ("b", "")]);
    }

    #[test]
    fn no_marker_is_an_error() {
        assert_eq!(parse("x = 1\n"), Err(NO_FILES.to_string()));
        assert_eq!(parse(""), Err(NO_FILES.to_string()));
    }

    #[test]
    fn invalid_utf8_is_located() {
        let e = parse_bytes(b"-- main.hcl --\na = 1\nb = \"\xff\"\n").unwrap_err();
        assert!(
            e.starts_with("main.hcl:2,6-7: Invalid character encoding;"),
            "{e}"
        );
    }

    #[test]
    fn oversized_input_is_rejected() {
        let big = "a".repeat(MAX_INPUT_BYTES + 1);
        assert!(parse(&big).unwrap_err().contains("at most"));
    }
}
