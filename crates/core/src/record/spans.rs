//! Where each object and array of a JSON text starts, by JSON pointer.
//!
//! serde_json's `Value` forgets positions, and the readers of pin files and record
//! documents work on values (lenient, key by key). Findings must still point at the
//! line and column of the source or figure to fix, so the text that was
//! parsed is scanned once more for the offsets of its containers. Scalars are not
//! indexed: what a finding points at is always an entry (an object).
//!
//! The scanner runs only on text serde_json has accepted; on anything else it stops
//! where it is lost and keeps what it found, never panicking.

use std::collections::HashMap;

use super::lenient::pointer_token;
use super::Position;

/// Byte offsets of the objects and arrays of one JSON text, by JSON pointer.
#[derive(Debug, Default)]
pub(crate) struct Spans {
    offsets: HashMap<String, usize>,
}

/// serde_json refuses deeper nesting than this; the scanner never recurses further.
const MAX_DEPTH: usize = 256;

impl Spans {
    /// Scans `json`, a text serde_json accepted.
    pub(crate) fn scan(json: &str) -> Spans {
        let mut s = Scanner {
            text: json,
            bytes: json.as_bytes(),
            at: 0,
            path: String::new(),
            spans: Spans::default(),
        };
        s.value(0);
        s.spans
    }

    /// The byte offset where the value at `pointer` starts (`""` is the whole text).
    pub(crate) fn offset(&self, pointer: &str) -> Option<usize> {
        self.offsets.get(pointer).copied()
    }
}

struct Scanner<'a> {
    text: &'a str,
    bytes: &'a [u8],
    at: usize,
    /// The pointer of the value being scanned (tokens pushed and popped as the
    /// scan goes in and out, so no pointer is built for a scalar).
    path: String,
    spans: Spans,
}

impl Scanner<'_> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    /// Scans the value at [`Self::path`]; `None` when the text is not what JSON
    /// allows there.
    fn value(&mut self, depth: usize) -> Option<()> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.skip_ws();
        match self.peek()? {
            b'{' => {
                self.spans.offsets.insert(self.path.clone(), self.at);
                self.at += 1;
                self.skip_ws();
                if self.peek()? == b'}' {
                    self.at += 1;
                    return Some(());
                }
                loop {
                    self.skip_ws();
                    let (start, end, escaped) = self.raw_string()?;
                    self.skip_ws();
                    (self.peek()? == b':').then_some(())?;
                    self.at += 1;
                    let len = self.path.len();
                    self.path.push('/');
                    let raw = self.text.get(start..end)?;
                    if escaped || raw.contains(['~', '/']) {
                        let key: String = serde_json::from_str(raw).ok()?;
                        self.path.push_str(&pointer_token(&key));
                    } else {
                        self.path.push_str(&raw[1..raw.len() - 1]);
                    }
                    let scanned = self.value(depth + 1);
                    self.path.truncate(len);
                    scanned?;
                    self.skip_ws();
                    match self.peek()? {
                        b',' => self.at += 1,
                        b'}' => {
                            self.at += 1;
                            return Some(());
                        }
                        _ => return None,
                    }
                }
            }
            b'[' => {
                self.spans.offsets.insert(self.path.clone(), self.at);
                self.at += 1;
                self.skip_ws();
                if self.peek()? == b']' {
                    self.at += 1;
                    return Some(());
                }
                let mut i = 0usize;
                loop {
                    let len = self.path.len();
                    {
                        use std::fmt::Write;
                        let _ = write!(self.path, "/{i}");
                    }
                    let scanned = self.value(depth + 1);
                    self.path.truncate(len);
                    scanned?;
                    i += 1;
                    self.skip_ws();
                    match self.peek()? {
                        b',' => self.at += 1,
                        b']' => {
                            self.at += 1;
                            return Some(());
                        }
                        _ => return None,
                    }
                }
            }
            b'"' => self.raw_string().map(|_| ()),
            _ => {
                // A number, `true`, `false` or `null`: up to the next delimiter.
                let start = self.at;
                while self.peek().is_some_and(|b| {
                    !matches!(b, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')
                }) {
                    self.at += 1;
                }
                (self.at > start).then_some(())
            }
        }
    }

    /// Skips a string at the cursor: its byte range, quotes included, and
    /// whether it has escapes (only then must it be decoded).
    fn raw_string(&mut self) -> Option<(usize, usize, bool)> {
        (self.peek()? == b'"').then_some(())?;
        let start = self.at;
        let mut escaped = false;
        self.at += 1;
        loop {
            match self.peek()? {
                b'\\' => {
                    escaped = true;
                    self.at += 2;
                }
                b'"' => {
                    self.at += 1;
                    break;
                }
                _ => self.at += 1,
            }
        }
        Some((start, self.at, escaped))
    }
}

/// Line and column (in characters) of a byte offset of `text`; an offset inside a
/// character or past the end is taken back to the nearest character boundary.
///
/// This scans `text` up to `offset`: for many positions in one text, build a
/// [`LineIndex`] once instead, so that an import stays linear in its input.
#[cfg(test)]
pub(crate) fn position_of(text: &str, offset: usize) -> Position {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    Position {
        line,
        column: before[line_start..].chars().count() + 1,
    }
}

/// Positions of many byte offsets of one text, each found in time independent of
/// the text's length: the start of every line (binary-searched), and the number of
/// characters before every `CHUNK`-th byte, so that a column in a flattened
/// one-line document costs at most `CHUNK` bytes of counting.
#[derive(Debug)]
pub(crate) struct LineIndex<'a> {
    text: &'a str,
    line_starts: Vec<usize>,
    /// Characters before byte `i * CHUNK`.
    chars_before: Vec<usize>,
}

const CHUNK: usize = 256;

/// Characters in UTF-8 bytes: the bytes that are not continuation bytes.
fn count_chars(bytes: &[u8]) -> usize {
    bytes.iter().filter(|&&b| (b as i8) >= -0x40).count()
}

impl<'a> LineIndex<'a> {
    /// One pass over `text`.
    pub(crate) fn new(text: &'a str) -> LineIndex<'a> {
        let bytes = text.as_bytes();
        let mut line_starts = vec![0];
        line_starts.extend(memchr_all(b'\n', bytes).map(|i| i + 1));
        let mut chars_before = Vec::with_capacity(bytes.len() / CHUNK + 1);
        let mut count = 0;
        for chunk in bytes.chunks(CHUNK) {
            chars_before.push(count);
            count += count_chars(chunk);
        }
        chars_before.push(count);
        LineIndex {
            text,
            line_starts,
            chars_before,
        }
    }

    /// Characters before byte `at` (a character boundary).
    fn chars_to(&self, at: usize) -> usize {
        let chunk = at / CHUNK;
        let from = chunk * CHUNK;
        self.chars_before[chunk] + count_chars(&self.text.as_bytes()[from..at])
    }

    /// What [`position_of`] says for `offset`, without scanning the text before it.
    pub(crate) fn position(&self, offset: usize) -> Position {
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        // The last line start at or before the offset.
        let line = self.line_starts.partition_point(|&s| s <= offset);
        let line_start = self.line_starts[line - 1];
        let chars = if offset - line_start <= CHUNK {
            count_chars(&self.text.as_bytes()[line_start..offset])
        } else {
            self.chars_to(offset) - self.chars_to(line_start)
        };
        Position {
            line,
            column: chars + 1,
        }
    }
}

/// Offsets of every `needle` byte in `haystack`.
fn memchr_all(needle: u8, haystack: &[u8]) -> impl Iterator<Item = usize> + '_ {
    haystack
        .iter()
        .enumerate()
        .filter(move |(_, &b)| b == needle)
        .map(|(i, _)| i)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn containers_are_found_by_pointer() {
        let text = "{\"a\": [ {\"x\": 1}, {\"y\": \"]}\"} ],\n \"b/c\": {\"é\": []}}";
        let s = Spans::scan(text);
        assert_eq!(s.offset(""), Some(0));
        assert_eq!(s.offset("/a"), Some(6));
        assert_eq!(s.offset("/a/0"), Some(8));
        assert_eq!(s.offset("/a/1"), Some(18));
        assert_eq!(
            position_of(text, s.offset("/b~1c").unwrap()),
            Position { line: 2, column: 9 }
        );
        assert!(s.offset("/b~1c/é").is_some());
        assert_eq!(s.offset("/a/0/x"), None, "scalars are not indexed");
    }

    #[test]
    fn columns_count_characters() {
        let text = "ééé {\"k\": 1}";
        let s = Spans::scan(&text[7..]);
        assert_eq!(
            position_of(text, 7 + s.offset("").unwrap()),
            Position { line: 1, column: 5 }
        );
    }

    #[test]
    fn line_index_agrees_with_position_of() {
        let mut text = String::new();
        for i in 0..3000 {
            text.push_str(if i % 7 == 0 { "é\n" } else { "ab€" });
        }
        text.push_str("\n\nz");
        let index = LineIndex::new(&text);
        for offset in (0..=text.len() + 2).step_by(3).chain([0, 1, 2, text.len()]) {
            assert_eq!(
                index.position(offset),
                position_of(&text, offset),
                "offset {offset}"
            );
        }
        let empty = LineIndex::new("");
        assert_eq!(empty.position(5), Position { line: 1, column: 1 });
    }

    #[test]
    fn broken_text_does_not_panic() {
        for t in [
            "{",
            "[1,",
            "{\"a\"",
            "{\"a\":}",
            "\"\\",
            "[[[",
            "{\"a\": [1 2]}",
        ] {
            let _ = Spans::scan(t);
        }
        assert_eq!(position_of("aé", 2), Position { line: 1, column: 2 });
    }
}
