//! Stable identities for findings (issue 9: scheduled re-checks).
//!
//! A scheduled re-check only helps if it can say what is *new*. A finding's
//! message names the head SHA and its location follows the head, so both move on
//! their own after an unrelated push upstream. The fingerprint hashes only what the
//! finding is about: its code, the record, source and claim it concerns, the
//! pinned facts of that source and claim (repository, pinned revision, path, cited
//! lines) and the few evidence facts that tell two findings of one subject apart
//! (which artifact, which JSON pointer, which reference). Never the head,
//! times, wording or line numbers at the head.
//!
//! One function ([`fingerprint`]) over one [`Subject`] serves both the domain
//! (at the finish stage of an audit) and v1 reports read back from disk (for
//! `diff` and `--baseline` over reports written by a pinaudit that had no
//! fingerprints), so the two always agree.

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::finding::Finding;
use crate::record::Record;

/// Evidence keys that name *which* thing of a record a finding is about, as
/// opposed to what was observed (which may change at every run).
///
/// Not `url`: for `repository-missing` it is the fetch URL after `--rewrite`, which
/// changes with the mirror, not with the record.
const IDENTITY_EVIDENCE: &[&str] = &[
    "artifact",
    "kind",
    "pointer",
    "block",
    "reference",
    "recorded",
];

/// What a finding is about: the facts its fingerprint is computed from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Subject<'a> {
    pub code: &'a str,
    pub record: &'a str,
    pub source: Option<&'a str>,
    pub claim: Option<&'a str>,
    pub repository: Option<&'a str>,
    /// The source's pinned (declared) revision, never the head.
    pub revision: Option<&'a str>,
    pub path: Option<&'a str>,
    /// The claim's cited lines at the pinned revision.
    pub lines: Option<[u32; 2]>,
    /// The identity evidence facts, in [`IDENTITY_EVIDENCE`] order.
    pub evidence: Vec<(&'static str, &'a Value)>,
}

impl<'a> Subject<'a> {
    pub fn with_evidence(mut self, evidence: &'a Map<String, Value>) -> Self {
        self.evidence = IDENTITY_EVIDENCE
            .iter()
            .filter_map(|k| evidence.get(*k).map(|v| (*k, v)))
            .collect();
        self
    }
}

/// The fingerprint of a subject: the first 32 hex digits of the sha256 of its
/// facts written as one canonical JSON array.
pub fn fingerprint(s: &Subject<'_>) -> String {
    // Written straight into the hash: the same bytes as the `Value` array
    // `["pinaudit/fingerprint/v1", code, …, {evidence}]` printed compactly, without
    // building it (a fingerprint per finding is a share of every re-check).
    struct Evidence<'e>(&'e [(&'static str, &'e Value)]);
    impl serde::Serialize for Evidence<'_> {
        fn serialize<S: serde::Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
            use serde::ser::SerializeMap;
            let mut map = ser.serialize_map(Some(self.0.len()))?;
            for (k, v) in self.0 {
                map.serialize_entry(k, v)?;
            }
            map.end()
        }
    }
    struct Hashing(Sha256);
    impl std::io::Write for Hashing {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.update(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let facts = (
        "pinaudit/fingerprint/v1",
        s.code,
        s.record,
        s.source,
        s.claim,
        s.repository,
        s.revision,
        s.path,
        s.lines,
        Evidence(&s.evidence),
    );
    let mut hashing = Hashing(Sha256::new());
    // Writing into a hash can't fail, nor can serialising strings and values.
    let _ = serde_json::to_writer(&mut hashing, &facts);
    let digest = hashing.0.finalize();
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut hex = String::with_capacity(32);
    for b in &digest[..16] {
        hex.push(HEX[usize::from(b >> 4)] as char);
        hex.push(HEX[usize::from(b & 15)] as char);
    }
    hex
}

/// The fingerprint as it was first defined: the `Value` array printed and hashed
/// (kept to show that [`fingerprint`] writes the same bytes).
#[cfg(test)]
fn fingerprint_by_value(s: &Subject<'_>) -> String {
    let evidence: Map<String, Value> = s
        .evidence
        .iter()
        .map(|(k, v)| ((*k).to_string(), (*v).clone()))
        .collect();
    let facts = serde_json::json!([
        "pinaudit/fingerprint/v1",
        s.code,
        s.record,
        s.source,
        s.claim,
        s.repository,
        s.revision,
        s.path,
        s.lines,
        evidence,
    ]);
    let digest = Sha256::digest(facts.to_string().as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    hex[..32].to_string()
}

/// The fingerprint of a domain finding, with the pinned facts taken from its record.
pub fn of_finding(f: &Finding, record: Option<&Record>) -> String {
    of_finding_in(f, record.map(Lookup::new).as_ref())
}

/// A record's claims by label and sources by id (the first of a duplicate
/// winning), built once for all its findings (issue 13: records of 100k figures).
pub struct Lookup<'r> {
    claims: std::collections::HashMap<&'r str, &'r crate::record::Claim>,
    sources: std::collections::HashMap<&'r str, &'r crate::record::Source>,
}

impl<'r> Lookup<'r> {
    pub fn new(r: &'r Record) -> Lookup<'r> {
        let mut claims = std::collections::HashMap::with_capacity(r.claims.len());
        for c in &r.claims {
            claims.entry(c.label.as_str()).or_insert(c);
        }
        Lookup {
            claims,
            sources: r.sources_by_id(),
        }
    }
}

/// [`of_finding`] with the record's [`Lookup`].
pub fn of_finding_in(f: &Finding, record: Option<&Lookup<'_>>) -> String {
    let claim = record.and_then(|r| f.claim.as_deref().and_then(|l| r.claims.get(l).copied()));
    let source_id = f
        .source
        .as_deref()
        .or_else(|| claim.and_then(|c| c.source.as_deref()));
    let source = record.and_then(|r| source_id.and_then(|id| r.sources.get(id).copied()));
    let revision = source
        .and_then(|s| s.revision.as_ref())
        .map(|r| r.to_string());
    fingerprint(
        &Subject {
            code: f.code.as_str(),
            record: &f.record,
            source: f.source.as_deref(),
            claim: f.claim.as_deref(),
            repository: source.and_then(|s| s.repository.as_deref()),
            revision: revision.as_deref(),
            path: source.and_then(|s| s.path.as_deref()),
            lines: claim.and_then(|c| c.lines).map(|l| [l.first(), l.last()]),
            evidence: Vec::new(),
        }
        .with_evidence(&f.evidence),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streamed_fingerprint_is_the_value_one() {
        let weird = Value::String("quote \" back\\slash \u{7} é \u{2028}".into());
        let nested = serde_json::json!({"b": [1, 2.5, null], "a": {"x": "y"}});
        let number: Value = serde_json::from_str("12345678901234567890.5e3").expect("n");
        let subjects = [
            Subject::default(),
            Subject {
                code: "hash-mismatch",
                record: "r \"1\"",
                source: Some("s/ü"),
                claim: None,
                repository: Some("https://github.com/o/r"),
                revision: Some("0123abcd"),
                path: Some("a\tb.md"),
                lines: Some([3, 4_000_000_000]),
                evidence: vec![
                    ("artifact", &weird),
                    ("pointer", &nested),
                    ("block", &number),
                ],
            },
        ];
        for s in &subjects {
            assert_eq!(fingerprint(s), fingerprint_by_value(s), "{s:?}");
        }
    }

    #[test]
    fn fingerprint_ignores_message_and_head_facts() {
        let mut unrelated = Map::new();
        unrelated.insert("head".into(), Value::String("b".repeat(40)));
        let a = Subject {
            code: "value-superseded",
            record: "r",
            source: Some("readme"),
            claim: Some("decode"),
            revision: Some("abc"),
            lines: Some([43, 43]),
            ..Subject::default()
        };
        let b = a.clone().with_evidence(&unrelated);
        assert_eq!(fingerprint(&a), fingerprint(&b));
        assert_eq!(fingerprint(&a).len(), 32);
    }

    #[test]
    fn fingerprint_tells_subjects_apart() {
        let a = Subject {
            code: "value-missing",
            record: "r",
            claim: Some("decode"),
            lines: Some([43, 43]),
            ..Subject::default()
        };
        let b = Subject {
            lines: Some([44, 44]),
            ..a.clone()
        };
        let c = Subject {
            claim: Some("prefill"),
            ..a.clone()
        };
        assert_ne!(fingerprint(&a), fingerprint(&b));
        assert_ne!(fingerprint(&a), fingerprint(&c));
    }
}
