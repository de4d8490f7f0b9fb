//! Positions between the protocol and the source: LSP counts lines and UTF-16 code units
//! (its default encoding, the only one every client supports); fn-hcl's spans carry byte
//! offsets. Every conversion clamps: a position past the end of a line or of the text
//! (clients send them) maps to the nearest valid offset, never a panic.

use lsp_types::{Position, Range};

/// Where each line of a text starts (`\n`, `\r\n` and a lone `\r` end lines, as LSP says).
#[derive(Clone, Debug)]
pub struct LineIndex {
    starts: Vec<u32>,
    len: u32,
}

impl LineIndex {
    pub fn new(text: &str) -> LineIndex {
        let mut starts = vec![0];
        let b = text.as_bytes();
        let mut i = 0;
        while i < b.len() {
            match b[i] {
                b'\n' => starts.push(i as u32 + 1),
                b'\r' if b.get(i + 1) != Some(&b'\n') => starts.push(i as u32 + 1),
                _ => {}
            }
            i += 1;
        }
        LineIndex {
            starts,
            len: text.len() as u32,
        }
    }

    /// The byte range of a line without its terminator (empty past the last line).
    fn line_bytes(&self, text: &str, line: usize) -> (usize, usize) {
        let Some(&start) = self.starts.get(line) else {
            return (text.len(), text.len());
        };
        let mut end = self
            .starts
            .get(line + 1)
            .map_or(self.len as usize, |&s| s as usize);
        let bytes = text.as_bytes();
        while end > start as usize && matches!(bytes.get(end - 1), Some(b'\n' | b'\r')) {
            end -= 1;
        }
        (start as usize, end.min(text.len()))
    }

    /// The byte offset of a position (clamped to its line's end and the text's end).
    pub fn offset(&self, text: &str, p: Position) -> u32 {
        let (start, end) = self.line_bytes(text, p.line as usize);
        let line = text.get(start..end).unwrap_or("");
        let mut units = 0u32;
        for (i, c) in line.char_indices() {
            if units >= p.character {
                return (start + i) as u32;
            }
            units += c.len_utf16() as u32;
            if units > p.character {
                // Inside a surrogate pair: the character's start.
                return (start + i) as u32;
            }
        }
        end as u32
    }

    /// The position of a byte offset (clamped to the text, moved back to a character
    /// boundary).
    pub fn position(&self, text: &str, byte: u32) -> Position {
        let mut byte = (byte as usize).min(text.len());
        while !text.is_char_boundary(byte) {
            byte -= 1;
        }
        let line = match self.starts.binary_search(&(byte as u32)) {
            Ok(i) => i,
            Err(i) => i.saturating_sub(1),
        };
        let start = self.starts.get(line).copied().unwrap_or(0) as usize;
        let character = text
            .get(start..byte)
            .map_or(0, |s| s.chars().map(|c| c.len_utf16() as u32).sum());
        Position {
            line: line as u32,
            character,
        }
    }

    /// The range of a byte range.
    pub fn range(&self, text: &str, start: u32, end: u32) -> Range {
        Range {
            start: self.position(text, start),
            end: self.position(text, end.max(start)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pos(line: u32, character: u32) -> Position {
        Position { line, character }
    }

    #[test]
    fn ascii_round_trips() {
        let t = "ab\ncd\n";
        let ix = LineIndex::new(t);
        for b in 0..=t.len() as u32 {
            assert_eq!(ix.offset(t, ix.position(t, b)), b, "{b}");
        }
        assert_eq!(ix.position(t, 4), pos(1, 1));
        assert_eq!(ix.offset(t, pos(1, 1)), 4);
    }

    #[test]
    fn utf16_units_not_bytes_or_chars() {
        // é is 2 bytes, 1 unit; 😀 is 4 bytes, 2 units.
        let t = "é😀x\n";
        let ix = LineIndex::new(t);
        assert_eq!(ix.position(t, 2), pos(0, 1));
        assert_eq!(ix.position(t, 6), pos(0, 3));
        assert_eq!(ix.offset(t, pos(0, 3)), 6);
        // Inside the surrogate pair: the emoji's start.
        assert_eq!(ix.offset(t, pos(0, 2)), 2);
        // A byte inside a character moves back to its start.
        assert_eq!(ix.position(t, 3), pos(0, 1));
    }

    #[test]
    fn crlf_and_lone_cr_end_lines() {
        let t = "a\r\nb\rc";
        let ix = LineIndex::new(t);
        assert_eq!(ix.position(t, 3), pos(1, 0));
        assert_eq!(ix.position(t, 5), pos(2, 0));
        // Past the end of line 0: its end, before \r\n.
        assert_eq!(ix.offset(t, pos(0, 99)), 1);
    }

    #[test]
    fn out_of_range_positions_clamp() {
        let t = "abc";
        let ix = LineIndex::new(t);
        assert_eq!(ix.offset(t, pos(7, 3)), 3);
        assert_eq!(ix.offset(t, pos(0, u32::MAX)), 3);
        assert_eq!(ix.position(t, 99), pos(0, 3));
        let empty = LineIndex::new("");
        assert_eq!(empty.offset("", pos(3, 3)), 0);
        assert_eq!(empty.position("", 5), pos(0, 0));
    }
}
