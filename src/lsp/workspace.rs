//! Open documents and the programs they belong to. All `*.hcl` files of one directory are
//! one program (as `fn-hcl package` bundles them); an open document's text replaces its
//! file on disk. A document that is not a `file:` URI is a program of its own.
//!
//! A program is analyzed on demand, at most once per change: the syntax trees (kept even
//! when a file does not parse), the index of names, the diagnostics `fn-hcl analyze`
//! reports and, when it loads, the compiled program (for static types).

use crate::lower::index::Index;
use crate::lower::ir::Program;
use crate::lsp::position::LineIndex;
use crate::protocol::doc::Json;
use crate::syntax::ast;
use crate::syntax::diag::Diagnostic;
use crate::syntax::span::{FileId, SourceMap};
use lsp_types::{Position, Range, TextDocumentContentChangeEvent};
use ropey::Rope;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The most `*.hcl` files read from one directory.
pub const MAX_DIR_FILES: usize = 1000;
/// The most bytes of one open document (the parser's own limit is 16 MiB a file).
pub const MAX_DOCUMENT_BYTES: usize = 32 * 1024 * 1024;

/// An open document.
#[derive(Debug)]
pub struct Document {
    pub text: String,
    pub version: i32,
    pub lines: LineIndex,
}

/// Which program a document belongs to: a directory, or the document alone.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ProgramKey {
    Dir(PathBuf),
    Alone(String),
}

/// One file of an analyzed program.
#[derive(Debug)]
pub struct ProgramFile {
    pub uri: String,
    pub lines: LineIndex,
}

/// Everything known about a program after one analysis.
pub struct Analysis {
    pub files: Vec<ProgramFile>,
    pub sources: Arc<SourceMap>,
    pub trees: Vec<ast::File>,
    pub index: Index,
    pub diagnostics: Vec<Diagnostic>,
    /// The compiled program, when it loads.
    pub program: Option<Program>,
    /// The run against the sample request beside the program, if there is one (or why
    /// it could not run).
    pub sample: Option<Result<crate::lsp::sample::SampleRun, String>>,
}

impl Analysis {
    /// Analyze a program given as (uri, name, text) files, and run it against the sample
    /// (XR, observed) documents when given and the program loads.
    pub fn new(
        files: Vec<(String, String, Arc<str>)>,
        sample: Option<&Result<(Json, Vec<Json>), String>>,
    ) -> Analysis {
        let mut sm = SourceMap::new();
        let mut pfiles = Vec::with_capacity(files.len());
        for (uri, name, text) in &files {
            sm.add(name.as_str(), text.clone());
            pfiles.push(ProgramFile {
                uri: uri.clone(),
                lines: LineIndex::new(text),
            });
        }
        let mut trees = Vec::with_capacity(files.len());
        let mut syntax = Vec::new();
        for i in 0..files.len() {
            let (tree, diags) = crate::syntax::parser::parse_file_partial(&sm, FileId(i as u32));
            trees.push(tree);
            syntax.extend(diags);
        }
        let refs: Vec<&ast::File> = trees.iter().collect();
        let index = Index::build(&refs);
        // With syntax errors, every file's (analyze stops at the first broken file);
        // otherwise exactly what `fn-hcl analyze` reports.
        let (diagnostics, program) = if !syntax.is_empty() {
            (syntax, None)
        } else {
            match crate::lower::ir::compile_parsed(sm.clone(), &trees) {
                Ok(p) => (crate::lower::analyze::analyze(&p), Some(p)),
                Err(e) => (e.diags, None),
            }
        };
        let sample = match (sample, &program) {
            (Some(Ok((xr, observed))), Some(p)) => Some(crate::lsp::sample::run(p, xr, observed)),
            (Some(Err(e)), _) => Some(Err(e.clone())),
            _ => None,
        };
        Analysis {
            files: pfiles,
            sources: Arc::new(sm),
            trees,
            index,
            diagnostics,
            program,
            sample,
        }
    }

    /// The file of a URI.
    pub fn file_of(&self, uri: &str) -> Option<FileId> {
        self.files
            .iter()
            .position(|f| f.uri == uri)
            .map(|i| FileId(i as u32))
    }

    /// The text of a file.
    pub fn text(&self, f: FileId) -> &str {
        self.sources.get(f).map_or("", |s| &s.text)
    }

    /// The protocol range of a span (a span outside the program's files: the start of
    /// the first file).
    pub fn range(&self, span: crate::syntax::span::Span) -> (usize, Range) {
        match self.files.get(span.file.0 as usize) {
            Some(f) => {
                let text = self.text(span.file);
                (
                    span.file.0 as usize,
                    f.lines.range(text, span.start.byte, span.end.byte),
                )
            }
            None => (0, Range::default()),
        }
    }

    /// A span's location.
    pub fn location(&self, span: crate::syntax::span::Span) -> Option<lsp_types::Location> {
        let (i, range) = self.range(span);
        let f = self.files.get(i)?;
        Some(lsp_types::Location {
            uri: f.uri.parse().ok()?,
            range,
        })
    }

    /// The byte offset of a position in a file.
    pub fn offset(&self, f: FileId, p: Position) -> u32 {
        match self.files.get(f.0 as usize) {
            Some(pf) => pf.lines.offset(self.text(f), p),
            None => 0,
        }
    }
}

/// All open documents and the analyses of their programs.
#[derive(Default)]
pub struct Workspace {
    pub docs: HashMap<String, Document>,
    /// The contents of directories' `*.hcl` files as last read from disk.
    disk: HashMap<PathBuf, BTreeMap<String, Arc<str>>>,
    analyses: HashMap<ProgramKey, Arc<Analysis>>,
    /// The sample request files of each directory.
    samples: HashMap<PathBuf, crate::lsp::sample::SampleFiles>,
}

impl Workspace {
    /// Opens (or replaces) a document.
    pub fn open(&mut self, uri: &str, text: String, version: i32) -> ProgramKey {
        let text = clamp_text(text);
        let lines = LineIndex::new(&text);
        self.docs.insert(
            uri.to_string(),
            Document {
                text,
                version,
                lines,
            },
        );
        let key = program_key(uri);
        self.analyses.remove(&key);
        key
    }

    /// Applies a document's changes (ranges in UTF-16 positions, clamped).
    pub fn change(
        &mut self,
        uri: &str,
        version: i32,
        changes: Vec<TextDocumentContentChangeEvent>,
    ) -> Option<ProgramKey> {
        let doc = self.docs.get_mut(uri)?;
        // The edits apply one after another, each to the text the previous one left; on a
        // rope each costs O(log n), so a message of many edits to a large document costs
        // the document once (replacing in a String and re-indexing lines per edit made a
        // message of N edits cost N times the document: hours for a hostile one).
        let mut rope = Rope::from_str(&doc.text);
        for c in changes {
            match c.range {
                None => rope = Rope::from_str(&c.text),
                Some(r) => {
                    let start = rope_char(&rope, r.start);
                    let end = rope_char(&rope, r.end).max(start);
                    rope.remove(start..end);
                    rope.insert(start, &c.text);
                }
            }
            if rope.len_bytes() > MAX_DOCUMENT_BYTES {
                // Cut at the character holding the limit's byte: the text stays UTF-8.
                let cut = rope.byte_to_char(MAX_DOCUMENT_BYTES);
                rope.remove(cut..);
            }
        }
        doc.text = String::from(&rope);
        doc.lines = LineIndex::new(&doc.text);
        doc.version = version;
        let key = program_key(uri);
        self.analyses.remove(&key);
        Some(key)
    }

    /// Closes a document (its file on disk, if any, is the program's again).
    pub fn close(&mut self, uri: &str) -> ProgramKey {
        self.docs.remove(uri);
        let key = program_key(uri);
        self.analyses.remove(&key);
        if let ProgramKey::Dir(d) = &key {
            self.disk.remove(d);
            // The last open document of the directory: its sample goes too (kept, every
            // directory ever opened would hold its sample for the session).
            if !self.docs.keys().any(|u| program_key(u) == key) {
                self.samples.remove(d);
            }
        }
        key
    }

    /// A file of a directory changed on disk: read the directory again when next needed.
    pub fn changed_on_disk(&mut self, uri: &str) -> ProgramKey {
        let key = program_key(uri);
        if let ProgramKey::Dir(d) = &key {
            self.disk.remove(d);
        }
        self.analyses.remove(&key);
        key
    }

    /// The program of a document's URI.
    pub fn key_of(&self, uri: &str) -> ProgramKey {
        program_key(uri)
    }

    /// The analysis of a program (computed now if anything changed since the last one).
    pub fn analysis(&mut self, key: &ProgramKey) -> Arc<Analysis> {
        // The sample files are not watched by editors: their change shows in their stamps.
        if let ProgramKey::Dir(d) = key
            && self.samples.entry(d.clone()).or_default().refresh(d)
        {
            self.analyses.remove(key);
        }
        if let Some(a) = self.analyses.get(key) {
            return a.clone();
        }
        let files = self.files_of(key);
        // Read in place (the documents can be MiBs: not copied for every request).
        let sample = match key {
            ProgramKey::Dir(d) => self.samples.get(d).and_then(|s| s.docs.as_ref()),
            ProgramKey::Alone(_) => None,
        };
        let a = Arc::new(Analysis::new(files, sample));
        self.analyses.insert(key.clone(), a.clone());
        a
    }

    /// The keys of every program with an open document.
    pub fn open_programs(&self) -> Vec<ProgramKey> {
        let mut keys: Vec<ProgramKey> = self.docs.keys().map(|u| program_key(u)).collect();
        keys.sort();
        keys.dedup();
        keys
    }

    /// (uri, name, text) of a program's files: the directory's `*.hcl` files from disk,
    /// replaced or joined by the open documents in it, in name order.
    fn files_of(&mut self, key: &ProgramKey) -> Vec<(String, String, Arc<str>)> {
        match key {
            ProgramKey::Alone(uri) => {
                let text: Arc<str> = self
                    .docs
                    .get(uri)
                    .map_or(Arc::from(""), |d| Arc::from(d.text.as_str()));
                vec![(uri.clone(), file_name(uri), text)]
            }
            ProgramKey::Dir(dir) => {
                let disk = self
                    .disk
                    .entry(dir.clone())
                    .or_insert_with(|| read_dir_hcl(dir))
                    .clone();
                let mut by_name: BTreeMap<String, (String, Arc<str>)> = disk
                    .into_iter()
                    .map(|(name, text)| {
                        let uri = path_to_uri(&dir.join(&name));
                        (name, (uri, text))
                    })
                    .collect();
                for (uri, doc) in &self.docs {
                    if program_key(uri) == *key {
                        by_name.insert(file_name(uri), (uri.clone(), Arc::from(doc.text.as_str())));
                    }
                }
                by_name
                    .into_iter()
                    .map(|(name, (uri, text))| (uri, name, text))
                    .collect()
            }
        }
    }
}

/// The character index of an LSP position in a rope, as [`LineIndex::offset`] finds its byte
/// offset: the column counts UTF-16 units, clamped to the line's end (terminator excluded);
/// a line past the end is the text's end; inside a surrogate pair is the character's start.
fn rope_char(rope: &Rope, p: Position) -> usize {
    let line = p.line as usize;
    if line >= rope.len_lines() {
        return rope.len_chars();
    }
    let start = rope.line_to_char(line);
    let slice = rope.line(line);
    let mut n = slice.len_chars();
    while n > 0 && matches!(slice.char(n - 1), '\n' | '\r') {
        n -= 1;
    }
    let content = slice.slice(..n);
    let col = p.character as usize;
    if col >= content.len_utf16_cu() {
        return start + n;
    }
    start + content.utf16_cu_to_char(col)
}

fn clamp_text(mut text: String) -> String {
    if text.len() > MAX_DOCUMENT_BYTES {
        let mut end = MAX_DOCUMENT_BYTES;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
    }
    text
}

/// The `*.hcl` files of a directory (at most [`MAX_DIR_FILES`], each within the
/// document limit), by name.
fn read_dir_hcl(dir: &Path) -> BTreeMap<String, Arc<str>> {
    let mut out = BTreeMap::new();
    let Ok(rd) = std::fs::read_dir(dir) else {
        return out;
    };
    let mut paths: Vec<PathBuf> = rd
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "hcl") && p.is_file())
        .collect();
    paths.sort();
    for p in paths.into_iter().take(MAX_DIR_FILES) {
        let small = std::fs::metadata(&p).is_ok_and(|m| m.len() <= MAX_DOCUMENT_BYTES as u64);
        if let (true, Some(name), Ok(text)) = (
            small,
            p.file_name().map(|n| n.to_string_lossy().to_string()),
            std::fs::read_to_string(&p),
        ) {
            out.insert(name, Arc::from(text));
        }
    }
    out
}

/// The program a URI belongs to.
pub fn program_key(uri: &str) -> ProgramKey {
    match uri_to_path(uri) {
        Some(p) if p.extension().is_some_and(|e| e == "hcl") => match p.parent() {
            Some(d) => ProgramKey::Dir(d.to_path_buf()),
            None => ProgramKey::Alone(uri.to_string()),
        },
        _ => ProgramKey::Alone(uri.to_string()),
    }
}

/// The last segment of a URI (the file name diagnostics are printed with).
fn file_name(uri: &str) -> String {
    match uri_to_path(uri) {
        Some(p) => p
            .file_name()
            .map_or_else(|| uri.to_string(), |n| n.to_string_lossy().to_string()),
        None => uri
            .rsplit('/')
            .next()
            .filter(|s| !s.is_empty())
            .unwrap_or("main.hcl")
            .to_string(),
    }
}

/// The path of a `file:` URI (`file:///a/b%20c.hcl` → `/a/b c.hcl`); `None` for other
/// schemes, a remote host or a bad escape.
pub fn uri_to_path(uri: &str) -> Option<PathBuf> {
    let rest = uri.strip_prefix("file://")?;
    let path = if rest.starts_with('/') {
        rest
    } else {
        rest.strip_prefix("localhost")?
    };
    let path = path.split(['?', '#']).next().unwrap_or("");
    let bytes = path.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    let s = String::from_utf8(out).ok()?;
    Some(PathBuf::from(s))
}

/// The `file:` URI of an absolute path, escaping what a URI path may not contain.
pub fn path_to_uri(p: &Path) -> String {
    let mut out = String::from("file://");
    for b in p.to_string_lossy().bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~!$&'()*+,;=:@".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Texts of every kind of character and line end, from a small deterministic generator.
    fn texts() -> Vec<String> {
        let parts = ["a", "é", "😀", "\n", "\r", "\r\n", "  ", "x=1"];
        let mut seed = 7u64;
        let mut out = vec![String::new()];
        for len in 1..40 {
            let mut t = String::new();
            for _ in 0..len {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                t.push_str(parts[(seed >> 33) as usize % parts.len()]);
            }
            out.push(t);
        }
        out
    }

    #[test]
    fn rope_positions_are_line_index_positions() {
        for t in texts() {
            let rope = Rope::from_str(&t);
            let lines = LineIndex::new(&t);
            for line in 0..t.len() as u32 + 2 {
                for character in 0..12 {
                    let p = Position { line, character };
                    assert_eq!(
                        rope.char_to_byte(rope_char(&rope, p)) as u32,
                        lines.offset(&t, p),
                        "{t:?} at {p:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn many_edits_in_one_change_apply_in_order() {
        let mut ws = Workspace::default();
        let uri = "untitled:x.hcl";
        ws.open(uri, "ab\ncd\r\n😀e".into(), 1);
        let edit = |l1, c1, l2, c2, text: &str| TextDocumentContentChangeEvent {
            range: Some(Range {
                start: Position::new(l1, c1),
                end: Position::new(l2, c2),
            }),
            range_length: None,
            text: text.into(),
        };
        ws.change(
            uri,
            2,
            vec![
                edit(0, 1, 1, 1, "X\nY"), // "aX\nYd\r\n😀e"
                edit(2, 1, 2, 2, "!"),    // from inside the surrogate pair: the emoji goes
                edit(9, 0, 9, 0, "end"),  // past the last line: the text's end
                edit(0, 0, 0, 0, "é"),
            ],
        );
        assert_eq!(ws.docs[uri].text, "éaX\nYd\r\n!eend");
        // A message of many edits to a large document costs the document once, not edits x
        // size (10,000 edits to 4 MiB would move 40 GiB with a String per edit).
        let big = "x = 1\n".repeat(700_000);
        ws.open(uri, big.clone(), 3);
        let edits = (0..10_000).map(|i| edit(i, 0, i, 1, "y")).collect();
        ws.change(uri, 4, edits);
        let text = &ws.docs[uri].text;
        assert_eq!(text.len(), big.len());
        assert_eq!(text.matches("y = 1").count(), 10_000);
        assert_eq!(
            ws.docs[uri].lines.position(text, text.len() as u32).line,
            700_000
        );
    }

    #[test]
    fn file_uris_and_paths() {
        assert_eq!(
            uri_to_path("file:///a/b%20c.hcl"),
            Some(PathBuf::from("/a/b c.hcl"))
        );
        assert_eq!(
            uri_to_path("file://localhost/x.hcl"),
            Some(PathBuf::from("/x.hcl"))
        );
        assert_eq!(uri_to_path("untitled:Untitled-1"), None);
        assert_eq!(uri_to_path("file://host/x"), None);
        assert_eq!(uri_to_path("file:///%zz"), None);
        assert_eq!(uri_to_path("file:///%C3"), None);
        let p = Path::new("/tmp/a b/é.hcl");
        assert_eq!(uri_to_path(&path_to_uri(p)).as_deref(), Some(p));
    }

    #[test]
    fn programs_are_directories() {
        assert_eq!(
            program_key("file:///c/main.hcl"),
            ProgramKey::Dir(PathBuf::from("/c"))
        );
        assert_eq!(
            program_key("untitled:1"),
            ProgramKey::Alone("untitled:1".into())
        );
        assert_eq!(
            program_key("file:///c/x.yaml"),
            ProgramKey::Alone("file:///c/x.yaml".into())
        );
    }

    #[test]
    fn an_open_document_replaces_its_file_and_joins_the_directory() {
        let dir = std::env::temp_dir().join(format!("fn-hcl-ws-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        std::fs::write(dir.join("a.hcl"), "locals {\n  a = b\n}\n").expect("a");
        std::fs::write(dir.join("b.hcl"), "locals {\n  b = 1\n}\n").expect("b");
        let mut ws = Workspace::default();
        let uri = path_to_uri(&dir.join("b.hcl"));
        let key = ws.open(&uri, "locals {\n  c = 1\n}\n".into(), 1);
        let a = ws.analysis(&key);
        assert_eq!(a.files.len(), 2);
        assert_eq!(a.diagnostics.len(), 1, "b is gone from the open b.hcl");
        assert_eq!(
            a.diagnostics[0].summary,
            "reference to non-existent variable"
        );
        ws.change(
            &uri,
            2,
            vec![TextDocumentContentChangeEvent {
                range: Some(Range {
                    start: Position {
                        line: 1,
                        character: 2,
                    },
                    end: Position {
                        line: 1,
                        character: 3,
                    },
                }),
                range_length: None,
                text: "b".into(),
            }],
        );
        let a = ws.analysis(&key);
        assert!(a.diagnostics.is_empty(), "{:?}", a.diagnostics);
        // Closing the directory's last open document leaves nothing of it behind.
        assert_eq!(ws.samples.len(), 1);
        ws.close(&uri);
        assert!(ws.samples.is_empty() && ws.disk.is_empty() && ws.analyses.is_empty());
        std::fs::remove_dir_all(&dir).ok();
    }
}
