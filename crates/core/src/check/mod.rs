//! Checks: one file per family of finding codes, each code named as the README's table names it.
//!
//! Record-level checks ([`record_checks`]) need nothing but the record. Revision
//! checks ([`revision`]) read the provider's commit facts, document checks
//! ([`document`], [`claims`], [`upstream`]) its snapshots; none of them knows where
//! a document came from, and none of them formats output.

pub mod archive;
pub mod artifacts;
pub mod citation;
pub mod claims;
pub mod document;
pub mod hashes;
pub mod location;
pub mod manifests;
mod myers;
pub mod revision;
pub mod upstream;
pub mod values;
pub mod weights;

use crate::finding::{Finding, Shape};
use crate::record::Record;

/// A check: one file of this module, with the hooks it answers and the
/// evidence structs of the codes it raises (zizmor's `Audit` is the model). Each
/// check registers in one line of [`REGISTRY`]; its codes are rows of
/// [`crate::codes`].
///
/// Only the record hook runs from the registry: the revision, document, claim
/// and artifact checks need the provider's facts and are called by the audit's
/// stages.
pub trait Check: Sync {
    /// The evidence structs of the findings this check raises.
    fn evidence(&self) -> &'static [Shape];

    /// The findings a record alone can answer.
    fn record(&self, _record: &Record, _out: &mut Vec<Finding>) {}
}

/// Every check, in the order their record findings are listed.
pub(crate) const REGISTRY: &[&dyn Check] = &[
    &citation::Citation,
    &hashes::Hashes,
    &values::Values,
    &artifacts::Artifacts,
    &revision::Revision,
    &archive::Archive,
    &document::Document,
    &manifests::Manifests,
    &claims::Claims,
    &upstream::UpstreamCheck,
    &weights::Weights,
];

/// Every check that a record alone can answer, in a fixed order.
pub fn record_checks(record: &Record) -> Vec<Finding> {
    let mut out = Vec::new();
    for check in REGISTRY {
        check.record(record, &mut out);
    }
    out
}

/// A document's text, split into lines once (a cited document is read many times).
///
/// Memory: the text itself, and 8 bytes a line for its span (16 for documents
/// over 4 GiB); [`SourceText::try_from_bytes`] takes the bytes without copying them
/// when they are UTF-8.
#[derive(Debug, Clone)]
pub struct SourceText {
    text: String,
    /// Byte ranges of each line, without the line end (`\n` or `\r\n`).
    spans: Spans,
    /// The document's structure (tables, headers, captions), read once, on the
    /// first claim that needs it.
    layout: std::sync::OnceLock<crate::matcher::Layout>,
}

#[derive(Debug, Clone)]
enum Spans {
    Small(Vec<(u32, u32)>),
    Large(Vec<(usize, usize)>),
}

impl SourceText {
    /// Decodes as UTF-8 (invalid bytes replaced) and indexes the lines. A final
    /// line end does not start another line; a leading BOM is not part of line 1.
    pub fn new(bytes: &[u8]) -> SourceText {
        let bytes = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes);
        SourceText::index(String::from_utf8_lossy(bytes).into_owned())
            .unwrap_or_else(|_| SourceText::empty())
    }

    /// A document with no lines (what an unindexable one reads as).
    fn empty() -> SourceText {
        SourceText {
            text: String::new(),
            spans: Spans::Small(Vec::new()),
            layout: std::sync::OnceLock::new(),
        }
    }

    /// [`SourceText::new`] of owned bytes, without a copy when they are UTF-8; an
    /// error when the line index can't be allocated (hundreds of millions of
    /// lines) instead of an abort of the run: the caller makes that one source
    /// `unchecked`.
    pub fn try_from_bytes(mut bytes: Vec<u8>) -> Result<SourceText, String> {
        if bytes.starts_with(b"\xef\xbb\xbf") {
            bytes.drain(..3);
        }
        let text = match String::from_utf8(bytes) {
            Ok(text) => text,
            Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
        };
        SourceText::index(text)
    }

    fn index(text: String) -> Result<SourceText, String> {
        /// Line spans, in a vector reserved up front for every line, fallibly.
        fn spans_of<T: TryFrom<usize>>(text: &str) -> Option<Result<Vec<(T, T)>, String>> {
            let bytes = text.as_bytes();
            let lines = bytes.iter().filter(|&&b| b == b'\n').count() + 1;
            let mut spans = Vec::new();
            if let Err(e) = spans.try_reserve_exact(lines) {
                return Some(Err(format!(
                    "document has `{lines}` lines, more than memory can index ({e}); not read"
                )));
            }
            let mut start = 0;
            for (i, &b) in bytes.iter().enumerate() {
                if b == b'\n' {
                    let end = if i > start && bytes[i - 1] == b'\r' {
                        i - 1
                    } else {
                        i
                    };
                    spans.push((T::try_from(start).ok()?, T::try_from(end).ok()?));
                    start = i + 1;
                }
            }
            if start < bytes.len() {
                spans.push((T::try_from(start).ok()?, T::try_from(bytes.len()).ok()?));
            }
            Some(Ok(spans))
        }
        let spans = match spans_of::<u32>(&text) {
            Some(small) => Spans::Small(small?),
            None => Spans::Large(spans_of::<usize>(&text).unwrap_or(Ok(Vec::new()))?),
        };
        Ok(SourceText {
            text,
            spans,
            layout: std::sync::OnceLock::new(),
        })
    }

    /// Whether the document has no lines at all.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// How many lines the document has.
    pub fn len(&self) -> usize {
        match &self.spans {
            Spans::Small(s) => s.len(),
            Spans::Large(s) => s.len(),
        }
    }

    fn span(&self, i: usize) -> Option<(usize, usize)> {
        match &self.spans {
            Spans::Small(s) => s.get(i).map(|&(a, b)| (a as usize, b as usize)),
            Spans::Large(s) => s.get(i).copied(),
        }
    }

    /// Line `n`, 1-based.
    pub fn line(&self, n: u32) -> Option<&str> {
        let (a, b) = self.span((n as usize).checked_sub(1)?)?;
        self.text.get(a..b)
    }

    /// The document's structure, read on first use.
    pub fn layout(&self) -> &crate::matcher::Layout {
        self.layout
            .get_or_init(|| crate::matcher::Layout::new(&self.lines()))
    }

    /// All lines, in order.
    pub fn lines(&self) -> Vec<&str> {
        (0..self.len())
            .filter_map(|i| self.span(i).and_then(|(a, b)| self.text.get(a..b)))
            .collect()
    }
}

/// Calls `f` with each line of the document `reader` gives (0-based index, bytes
/// without the line end), split exactly as [`SourceText`] splits: a final line
/// end does not start another line, a leading BOM is not part of line 1, `\r` is
/// dropped only before `\n`. Memory: one read buffer and the longest line (issues
/// 12, 13: documents too large to hold are read as streams). Returns the number
/// of lines.
pub fn for_each_line(
    mut reader: impl std::io::Read,
    mut f: impl FnMut(usize, &[u8]),
) -> std::io::Result<usize> {
    let mut buf = vec![0u8; 256 << 10];
    let mut carry: Vec<u8> = Vec::new();
    let mut index = 0;
    let mut first = true;
    let mut emit = |line: &[u8], index: &mut usize| {
        f(*index, line.strip_suffix(b"\r").unwrap_or(line));
        *index += 1;
    };
    loop {
        let mut n = match reader.read(&mut buf) {
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if first && n > 0 {
            // Enough bytes to tell a BOM (a read may give fewer).
            while n < 3 {
                match reader.read(&mut buf[n..]) {
                    Ok(0) => break,
                    Ok(m) => n += m,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(e),
                }
            }
        }
        if n == 0 {
            break;
        }
        let mut chunk = &buf[..n];
        if first {
            first = false;
            chunk = chunk.strip_prefix(b"\xef\xbb\xbf").unwrap_or(chunk);
        }
        let mut start = 0;
        for p in memchr::memchr_iter(b'\n', chunk) {
            if carry.is_empty() {
                emit(&chunk[start..p], &mut index);
            } else {
                carry.extend_from_slice(&chunk[start..p]);
                emit(&carry, &mut index);
                carry.clear();
            }
            start = p + 1;
        }
        carry.extend_from_slice(&chunk[start..]);
    }
    if !carry.is_empty() {
        // The last line has no line end: its `\r` (if any) stays.
        f(index, &carry);
        index += 1;
    }
    Ok(index)
}

/// The version of what checks derive from documents: a digest of the source of
/// the matcher and of the checks (`CACHE/checks.store`, `CACHE/drift.store`), so
/// that any change to them invalidates every remembered answer without anyone
/// having to remember to bump a number.
///
/// Every file of `check/` and `matcher/` is in it, whether or not it makes a
/// remembered answer today (a test holds the list to the directories): the
/// digest once named five files, and a change to the matcher's reading of a
/// table (`matcher/structure.rs`) or to the line diff (`check/myers.rs`) left
/// an older build's claim verdicts and line fates to be read back.
pub fn derivation_version() -> &'static str {
    // Worked out once a process (some 370 KB of source to digest).
    static VERSION: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
        let sources: Vec<&str> = DERIVED_FROM.iter().map(|(_, s)| *s).collect();
        crate::hash::sources_digest(&sources)
    });
    &VERSION
}

/// What [`derivation_version`] digests: each file by its path under the core's
/// `src/`.
const DERIVED_FROM: &[(&str, &str)] = &[
    ("matcher.rs", include_str!("../matcher.rs")),
    ("matcher/context.rs", include_str!("../matcher/context.rs")),
    ("matcher/role.rs", include_str!("../matcher/role.rs")),
    ("matcher/label.rs", include_str!("../matcher/label.rs")),
    (
        "matcher/structure.rs",
        include_str!("../matcher/structure.rs"),
    ),
    ("check/archive.rs", include_str!("archive.rs")),
    ("check/artifacts.rs", include_str!("artifacts.rs")),
    ("check/citation.rs", include_str!("citation.rs")),
    ("check/claims.rs", include_str!("claims.rs")),
    ("check/document.rs", include_str!("document.rs")),
    ("check/hashes.rs", include_str!("hashes.rs")),
    ("check/location.rs", include_str!("location.rs")),
    ("check/manifests.rs", include_str!("manifests.rs")),
    ("check/mod.rs", include_str!("mod.rs")),
    ("check/myers.rs", include_str!("myers.rs")),
    ("check/revision.rs", include_str!("revision.rs")),
    ("check/upstream.rs", include_str!("upstream.rs")),
    ("check/values.rs", include_str!("values.rs")),
    ("check/weights.rs", include_str!("weights.rs")),
];

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

/// Record-level checks, in process: a record built from a pin file's JSON, its
/// findings read back as codes and evidence.
#[cfg(test)]
mod tests {
    use std::path::Path;

    use serde_json::{json, Value};

    use super::record_checks;
    use crate::finding::{Code, Finding};
    use crate::record::pinfile;

    /// Every file of the matcher and of the checks is in what remembered
    /// answers are derived by: one added and not listed would let a changed
    /// build read back an older build's verdicts.
    #[test]
    fn every_check_and_matcher_file_is_in_the_derivation_version() {
        use super::{derivation_version, DERIVED_FROM};
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut seen = 0;
        for dir in ["check", "matcher"] {
            for entry in std::fs::read_dir(src.join(dir)).expect("dir").flatten() {
                let name = format!("{dir}/{}", entry.file_name().to_string_lossy());
                if name.ends_with(".rs") {
                    seen += 1;
                    assert!(
                        DERIVED_FROM.iter().any(|(n, _)| *n == name),
                        "{name} is missing from DERIVED_FROM"
                    );
                }
            }
        }
        assert_eq!(DERIVED_FROM.len(), seen + 1, "a listed file that is gone");
        for (name, text) in DERIVED_FROM {
            let on_disk = std::fs::read_to_string(src.join(name)).expect("listed file");
            assert_eq!(*text, on_disk, "{name} is listed under another file's name");
        }
        assert_eq!(derivation_version().len(), 16);
    }

    const SHA: &str = "de1fa14ea798512f54dafc8b8795eb3ef1a6c367";
    const HASH: &str = "4bccb5ffc313f08ca53f62b6c8fc880c1317c07f79fed53c522bfc8e99bea20d";

    /// A reader that gives at most `piece` bytes a read.
    struct Pieces<'a>(&'a [u8], usize);
    impl std::io::Read for Pieces<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = self.0.len().min(self.1).min(buf.len());
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    #[test]
    fn streamed_lines_are_the_lines_of_source_text() {
        let docs: [&[u8]; 10] = [
            b"",
            b"\n",
            b"a",
            b"a\r",
            b"a\r\nb\r\n",
            b"\xef\xbb\xbfx = 2.9\n\ny\n",
            b"\xef\xbb",
            b"one\ntwo\r\nthree",
            b"bad \xff\xfe utf-8\r\n\xe2\x82\nend",
            b"\n\n\r\n\r",
        ];
        for doc in docs {
            let text = super::SourceText::new(doc);
            for piece in [1, 2, 3, 7, 1 << 20] {
                let mut got = Vec::new();
                let n = super::for_each_line(Pieces(doc, piece), |i, l| {
                    assert_eq!(i, got.len());
                    got.push(String::from_utf8_lossy(l).into_owned());
                })
                .expect("read");
                assert_eq!(got, text.lines(), "{doc:?} in pieces of {piece}");
                assert_eq!(n, text.len());
            }
        }
    }

    fn findings(pin: Value) -> Vec<Finding> {
        let parsed = pinfile::from_value(&pin, Path::new("pins/r.json")).expect("a pin file");
        assert!(parsed.problems.is_empty(), "{:?}", parsed.problems);
        record_checks(&parsed.record)
    }

    fn codes(f: &[Finding]) -> Vec<Code> {
        f.iter().map(|f| f.code).collect()
    }

    fn pin(source: Value, claims: Value, artifacts: Value) -> Value {
        json!({
            "schema": "pinaudit/pins/v1",
            "id": "r",
            "sources": [source],
            "claims": claims,
            "artifacts": artifacts,
        })
    }

    fn source(revision: &str, sha256: Option<&str>) -> Value {
        json!({
            "id": "readme",
            "url": format!("https://github.com/o/r/blob/{revision}/README.md"),
            "repository": "https://github.com/o/r",
            "revision": revision,
            "path": "README.md",
            "sha256": sha256,
        })
    }

    fn claim(value: Value, unit: &str, lines: Value) -> Value {
        json!({"label": "decode", "source": "readme", "lines": lines, "value": value, "unit": unit})
    }

    #[test]
    fn a_clean_record_has_no_finding() {
        let f = findings(pin(
            source(SHA, Some(HASH)),
            json!([claim(json!(2.9), "tokens/s", json!([43, 43]))]),
            json!([]),
        ));
        assert_eq!(codes(&f), []);
    }

    #[test]
    fn a_branch_is_unpinned_and_a_missing_hash_is_said() {
        let f = findings(pin(
            source("main", None),
            json!([claim(json!(2.9), "tokens/s", json!([43, 43]))]),
            json!([]),
        ));
        assert!(codes(&f).contains(&Code::UnpinnedUrl), "{f:?}");
        assert!(codes(&f).contains(&Code::MissingHash), "{f:?}");
    }

    #[test]
    fn a_short_hash_is_malformed() {
        let f = findings(pin(source(SHA, Some("abc123")), json!([]), json!([])));
        let m = f
            .iter()
            .find(|f| f.code == Code::MalformedHash)
            .expect("malformed");
        assert_eq!(m.evidence["recorded"], "abc123");
        assert_eq!(m.source.as_deref(), Some("readme"));
    }

    #[test]
    fn a_claim_without_lines_is_uncited() {
        let f = findings(pin(
            source(SHA, Some(HASH)),
            json!([claim(json!(2.9), "tokens/s", Value::Null)]),
            json!([]),
        ));
        assert_eq!(codes(&f), [Code::UncitedClaim]);
    }

    #[test]
    fn a_percentage_must_agree_with_its_counts() {
        let mut c = claim(json!(95.0), "percent", json!([5, 5]));
        c["correct"] = json!(49);
        c["total"] = json!(50);
        let f = findings(pin(source(SHA, Some(HASH)), json!([c]), json!([])));
        let m = f
            .iter()
            .find(|f| f.code == Code::InconsistentValue)
            .expect("inconsistent");
        assert_eq!(m.evidence["expected"], "98.0");
        assert_eq!(m.claim.as_deref(), Some("decode"));
    }

    #[test]
    fn unpinned_weights_and_runtimes_are_said_once_each() {
        let f = findings(pin(
            source(SHA, Some(HASH)),
            json!([]),
            json!([
                {"kind": "weights", "label": "k3 IQ1_S"},
                {"kind": "runtime", "label": "llama.cpp fork"},
                {"kind": "runtime", "label": "vllm", "digest": format!("sha256:{HASH}")},
            ]),
        ));
        assert_eq!(codes(&f), [Code::UnpinnedWeights, Code::UnpinnedRuntime]);
    }
}
