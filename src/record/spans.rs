//! Where each object and array of a JSON text starts, by JSON pointer.
//!
//! serde_json's `Value` forgets positions, and the readers of pin files and record
//! documents work on values (lenient, key by key). Findings must still point at the
//! line and column of the source or figure to fix (issue 10), so the text that was
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
pub struct Spans {
    offsets: HashMap<String, usize>,
}

/// serde_json refuses deeper nesting than this; the scanner never recurses further.
const MAX_DEPTH: usize = 256;

impl Spans {
    /// Scans `json`, a text serde_json accepted.
    pub fn scan(json: &str) -> Spans {
        let mut s = Scanner {
            text: json,
            bytes: json.as_bytes(),
            at: 0,
            spans: Spans::default(),
        };
        s.value(String::new(), 0);
        s.spans
    }

    /// The byte offset where the value at `pointer` starts (`""` is the whole text).
    pub fn offset(&self, pointer: &str) -> Option<usize> {
        self.offsets.get(pointer).copied()
    }
}

struct Scanner<'a> {
    text: &'a str,
    bytes: &'a [u8],
    at: usize,
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

    /// Scans one value; `None` when the text is not what JSON allows there.
    fn value(&mut self, ptr: String, depth: usize) -> Option<()> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.skip_ws();
        match self.peek()? {
            b'{' => {
                self.spans.offsets.insert(ptr.clone(), self.at);
                self.at += 1;
                self.skip_ws();
                if self.peek()? == b'}' {
                    self.at += 1;
                    return Some(());
                }
                loop {
                    self.skip_ws();
                    let key = self.string()?;
                    self.skip_ws();
                    (self.peek()? == b':').then_some(())?;
                    self.at += 1;
                    self.value(format!("{ptr}/{}", pointer_token(&key)), depth + 1)?;
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
                self.spans.offsets.insert(ptr.clone(), self.at);
                self.at += 1;
                self.skip_ws();
                if self.peek()? == b']' {
                    self.at += 1;
                    return Some(());
                }
                let mut i = 0usize;
                loop {
                    self.value(format!("{ptr}/{i}"), depth + 1)?;
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
            b'"' => self.string().map(|_| ()),
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

    /// Scans a string at the cursor and returns it decoded.
    fn string(&mut self) -> Option<String> {
        (self.peek()? == b'"').then_some(())?;
        let start = self.at;
        self.at += 1;
        loop {
            match self.peek()? {
                b'\\' => self.at += 2,
                b'"' => {
                    self.at += 1;
                    break;
                }
                _ => self.at += 1,
            }
        }
        let raw = self.text.get(start..self.at)?;
        serde_json::from_str(raw).ok()
    }
}

/// Line and column (in characters) of a byte offset of `text`; an offset inside a
/// character or past the end is taken back to the nearest character boundary.
pub fn position_of(text: &str, offset: usize) -> Position {
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
