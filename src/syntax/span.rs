//! Source positions and ranges, counted the way hcl counts them, so that every
//! diagnostic prints like the Go implementation's (`main.hcl:20,32-39`).

use std::fmt;
use std::sync::Arc;

/// A position in a source file. `line` and `col` start at 1; `col` counts
/// characters (not bytes), as hcl does; `byte` is the 0-based byte offset.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Pos {
    pub byte: u32,
    pub line: u32,
    pub col: u32,
}

impl Pos {
    /// The position of the first byte of a file.
    pub const START: Pos = Pos {
        byte: 0,
        line: 1,
        col: 1,
    };
}

/// Index of a file in a [`SourceMap`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct FileId(pub u32);

/// A half-open range `[start, end)` in one file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Span {
    pub file: FileId,
    pub start: Pos,
    pub end: Pos,
}

impl Span {
    pub fn new(file: FileId, start: Pos, end: Pos) -> Span {
        Span { file, start, end }
    }

    /// A span of tests, from (byte, line, column) to (byte, line, column).
    #[cfg(test)]
    pub(crate) fn at(file: FileId, start: (u32, u32, u32), end: (u32, u32, u32)) -> Span {
        let pos = |(byte, line, col)| Pos { byte, line, col };
        Span::new(file, pos(start), pos(end))
    }

    /// The smallest span covering both `self` and `other` (same file assumed).
    pub fn to(self, other: Span) -> Span {
        let start = if other.start.byte < self.start.byte {
            other.start
        } else {
            self.start
        };
        let end = if other.end.byte > self.end.byte {
            other.end
        } else {
            self.end
        };
        Span {
            file: self.file,
            start,
            end,
        }
    }

    /// Byte range, for slicing the source text.
    pub fn bytes(&self) -> std::ops::Range<usize> {
        self.start.byte as usize..self.end.byte as usize
    }
}

/// One named source file.
#[derive(Clone, Debug)]
pub struct SourceFile {
    pub name: Arc<str>,
    pub text: Arc<str>,
}

/// The files of one program, indexed by [`FileId`].
#[derive(Clone, Debug, Default)]
pub struct SourceMap {
    pub files: Vec<SourceFile>,
}

impl SourceMap {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn add(&mut self, name: impl Into<Arc<str>>, text: impl Into<Arc<str>>) -> FileId {
        self.files.push(SourceFile {
            name: name.into(),
            text: text.into(),
        });
        FileId((self.files.len() - 1) as u32)
    }

    pub fn get(&self, id: FileId) -> Option<&SourceFile> {
        self.files.get(id.0 as usize)
    }

    pub fn name(&self, id: FileId) -> &str {
        self.get(id).map(|f| &*f.name).unwrap_or("<unknown>")
    }

    /// The source text a span covers ("" if out of range).
    pub fn slice(&self, span: Span) -> &str {
        self.get(span.file)
            .and_then(|f| f.text.get(span.bytes()))
            .unwrap_or("")
    }

    /// A printable range in hcl's format: `file:l,c-c` or `file:l,c-l,c`.
    pub fn range(&self, span: Span) -> RangeDisplay<'_> {
        RangeDisplay {
            name: self.name(span.file),
            span,
        }
    }
}

/// hcl's `Range.String()`: `main.hcl:9,50-55` on one line, `main.hcl:9,12-19,6` across lines.
pub struct RangeDisplay<'a> {
    pub name: &'a str,
    pub span: Span,
}

impl fmt::Display for RangeDisplay<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = self.span;
        if s.start.line == s.end.line {
            write!(
                f,
                "{}:{},{}-{}",
                self.name, s.start.line, s.start.col, s.end.col
            )
        } else {
            write!(
                f,
                "{}:{},{}-{},{}",
                self.name, s.start.line, s.start.col, s.end.line, s.end.col
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn range_formats_like_hcl() {
        let mut sm = SourceMap::new();
        let f = sm.add("main.hcl", "x");
        let one = Span::at(f, (0, 9, 50), (5, 9, 55));
        assert_eq!(sm.range(one).to_string(), "main.hcl:9,50-55");
        let multi = Span::at(f, (0, 9, 12), (90, 19, 6));
        assert_eq!(sm.range(multi).to_string(), "main.hcl:9,12-19,6");
    }
}
