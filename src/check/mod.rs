//! Checks: one file per family of finding codes, each code named as DESIGN.md names it.
//!
//! Record-level checks ([`record_checks`]) need nothing but the record. Revision
//! checks ([`revision`]) read the provider's commit facts, document checks
//! ([`document`], [`claims`], [`upstream`]) its snapshots; none of them knows where
//! a document came from, and none of them formats output.

pub mod artifacts;
pub mod citation;
pub mod claims;
pub mod document;
pub mod hashes;
pub mod location;
pub mod manifests;
pub mod revision;
pub mod upstream;
pub mod values;
pub mod weights;

use crate::finding::Finding;
use crate::record::Record;

/// Every check that a record alone can answer, in a fixed order.
pub fn record_checks(record: &Record) -> Vec<Finding> {
    let mut out = Vec::new();
    citation::check(record, &mut out);
    hashes::check(record, &mut out);
    values::check(record, &mut out);
    artifacts::check(record, &mut out);
    out
}

/// A document's text, split into lines once (a cited document is read many times).
#[derive(Debug, Clone)]
pub struct SourceText {
    text: String,
    /// Byte ranges of each line, without the line end (`\n` or `\r\n`).
    spans: Vec<(usize, usize)>,
}

impl SourceText {
    /// Decodes as UTF-8 (invalid bytes replaced) and indexes the lines. A final
    /// line end does not start another line; a leading BOM is not part of line 1.
    pub fn new(bytes: &[u8]) -> SourceText {
        let bytes = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes);
        let text = String::from_utf8_lossy(bytes).into_owned();
        let mut spans = Vec::new();
        let mut start = 0;
        for (i, b) in text.bytes().enumerate() {
            if b == b'\n' {
                let end = if i > start && text.as_bytes()[i - 1] == b'\r' {
                    i - 1
                } else {
                    i
                };
                spans.push((start, end));
                start = i + 1;
            }
        }
        if start < text.len() {
            spans.push((start, text.len()));
        }
        SourceText { text, spans }
    }

    /// How many lines the document has.
    pub fn len(&self) -> usize {
        self.spans.len()
    }

    /// Line `n`, 1-based.
    pub fn line(&self, n: u32) -> Option<&str> {
        let (a, b) = *self.spans.get((n as usize).checked_sub(1)?)?;
        Some(&self.text[a..b])
    }

    /// All lines, in order.
    pub fn lines(&self) -> Vec<&str> {
        self.spans.iter().map(|&(a, b)| &self.text[a..b]).collect()
    }
}

/// Trims a line for a report and caps its length (in characters).
pub fn excerpt(line: &str) -> String {
    const MAX: usize = 200;
    let t = line.trim();
    if t.chars().count() <= MAX {
        t.to_string()
    } else {
        format!("{}…", t.chars().take(MAX).collect::<String>())
    }
}
