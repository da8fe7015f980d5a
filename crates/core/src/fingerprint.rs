//! Stable identities for findings (scheduled re-checks).
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
/// winning), built once for all its findings (records of 100k figures).
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

    /// The fingerprint hashes the evidence keys of [`IDENTITY_EVIDENCE`] (a v1
    /// report read back has nothing else to go by); each evidence struct
    /// declares its identity fields. They must be the same keys, in the same
    /// order, or a renamed field would change fingerprints users keep.
    #[test]
    fn every_code_declares_the_identity_fields_the_fingerprint_hashes() {
        use crate::codes::Code;
        let shapes: Vec<crate::finding::Shape> = crate::check::REGISTRY
            .iter()
            .flat_map(|c| c.evidence().iter().copied())
            .collect();
        let shapes_of = |code: Code| shapes.iter().filter(move |s| s.codes.contains(&code));
        for code in Code::ALL {
            for shape in shapes_of(*code) {
                let hashed: Vec<&str> = IDENTITY_EVIDENCE
                    .iter()
                    .copied()
                    .filter(|k| shape.fields.contains(k))
                    .collect();
                assert_eq!(
                    shape.identity,
                    hashed.as_slice(),
                    "{code}: {} declares identity {:?}, the fingerprint hashes {hashed:?}",
                    shape.name,
                    shape.identity
                );
                let mut fields = shape.fields.to_vec();
                fields.sort_unstable();
                fields.dedup();
                assert_eq!(fields.len(), shape.fields.len(), "{}", shape.name);
            }
        }
        // Every code but `missing-hash` (no evidence) has a struct.
        for code in Code::ALL {
            let has = shapes_of(*code).next().is_some();
            assert_eq!(has, *code != Code::MissingHash, "{code}");
        }
        // The identity of each code, as it was when evidence was a map.
        let identity = |code: Code| -> Vec<&str> {
            let mut keys: Vec<&str> = shapes_of(code)
                .flat_map(|s| s.identity.iter().copied())
                .collect();
            keys.sort_unstable();
            keys.dedup();
            keys
        };
        assert_eq!(identity(Code::InvalidRecord), ["artifact", "recorded"]);
        assert_eq!(identity(Code::UnpinnedUrl), ["reference"]);
        assert_eq!(identity(Code::MalformedHash), ["artifact", "recorded"]);
        assert_eq!(identity(Code::UnpinnedWeights), ["artifact", "kind"]);
        assert_eq!(identity(Code::UnpinnedRuntime), ["artifact", "kind"]);
        assert_eq!(identity(Code::RepositoryMissing), ["artifact", "kind"]);
        assert_eq!(identity(Code::RevisionMissing), ["artifact", "kind"]);
        assert_eq!(identity(Code::PathMissing), ["artifact", "kind"]);
        assert_eq!(identity(Code::WeightHashMismatch), ["artifact", "kind"]);
        assert_eq!(identity(Code::CommitTimeMismatch), ["recorded"]);
        for code in [
            Code::UncitedClaim,
            Code::RevisionConflict,
            Code::InconsistentValue,
            Code::RevisionUnreachable,
            Code::HashMismatch,
            Code::ManifestMismatch,
            Code::ManifestUnlisted,
            Code::LineOutOfRange,
            Code::ValueMissing,
            Code::ValueShifted,
            Code::UpstreamChanged,
            Code::ValueSuperseded,
        ] {
            assert!(identity(code).is_empty(), "{code}");
        }
    }

    /// Users keep fingerprints in their baselines, so a fingerprint must not
    /// change when the code that computes it, or the evidence behind it, is
    /// reorganised. These were computed by pinaudit 0.1.0 for one finding of every
    /// code, with the evidence facts its check writes (identity facts and others),
    /// about a record citing one pinned source.
    #[test]
    fn every_code_keeps_its_fingerprint() {
        use crate::codes::Code;
        let pin = serde_json::json!({
            "schema": "pinaudit/pins/v1",
            "id": "rec",
            "sources": [{
                "id": "s",
                "url": "https://github.com/o/r/blob/0123456789abcdef0123456789abcdef01234567/docs/a.md",
                "sha256": "4bccb5ffc313f08ca53f62b6c8fc880c1317c07f79fed53c522bfc8e99bea20d"
            }],
            "claims": [{"label": "c", "source": "s", "lines": [3, 4], "value": 2.9, "unit": "tok/s"}],
            "artifacts": []
        });
        let parsed =
            crate::record::pinfile::from_value(&pin, std::path::Path::new("pins/rec.json"))
                .expect("a pin file");
        let record = parsed.record;
        let identity = serde_json::json!({
            "artifact": "weights", "kind": "weights", "pointer": "/figures/0",
            "block": 2, "reference": "profile", "recorded": "abc123",
        });
        let observed = serde_json::json!({
            "actual": "f00d", "head": "89abcdef0123456789abcdef0123456789abcdef",
            "nearest_line": 9, "url": "git://127.0.0.1:1/o/r",
        });
        let mut got = Vec::new();
        for code in Code::ALL {
            // Each code with one of the identity facts, so that every key counts.
            let keys = [
                "artifact",
                "kind",
                "pointer",
                "block",
                "reference",
                "recorded",
            ];
            let key = keys[code.as_str().len() % keys.len()];
            let mut f = Finding::new(*code, "rec", "message").source("s").claim("c");
            f = f.with(key, identity[key].clone());
            for (k, v) in observed.as_object().expect("object") {
                f = f.with(k, v.clone());
            }
            let bare = Finding::new(*code, "rec", "other words");
            got.push(format!(
                "{} {} {}",
                code.as_str(),
                of_finding(&f, Some(&record)),
                of_finding(&bare, None)
            ));
        }
        // A code added later is not in the table; every code of today is.
        let want: &[&str] = &[
            "invalid-record 4c5605b2759c1bd4c2990bfb59b76793 78ac79fd6e9742ed82acdb18b17d2e2b",
            "uncited-claim d025cc3b1c6712a7c16a1e65243afc55 21b4c8c488dfe039547d540a192d7d2f",
            "unpinned-url a027d9aa1a31e121a67059021130c06f f453eeb38f186e773acac9a084451a34",
            "revision-conflict 27548583677503b96a69ffe8e19e397b fff998b4793b28f1ddfd30625ef6e690",
            "malformed-hash 52e4169ab2cc05b8d8a0808e32707109 39fb2c4b3cbc6ef42d97e8ec54dc5bb0",
            "missing-hash 399ebea2fd72226d9a2b818eb5babedf 784009e6b61c214817ba0f77adaaf7a0",
            "unpinned-weights 4c35282c7d63409a1a9c9bdf455296cb 3411fb93c195812ff3347b6d3698828f",
            "unpinned-runtime 881f37bc8024dda6e10b00a7212cafe1 47c057d1255abc602fcb2e4dc0005c15",
            "inconsistent-value e2e11c14019b566b50bb6259c3e4d87e a4bd1e833c29f070c4324fee9c697324",
            "repository-missing 2b4acdeb16c3ebff69d097370e43d406 8fc4f22371430b1aec11f666b67782eb",
            "revision-missing 677d127c8bac0446e97d4dba7ab06543 f7e6531463d371879c590f8cd14e8d7a",
            "revision-unreachable d7f210c79cf086afebdc96e452298ef5 4dd57a6e985e3f681e3c87e431ad1716",
            "path-missing 14c515c1cca9cfbbc4f3b25a7be57ad3 f811fb637a7248cc488fa8c3ce491fbe",
            "hash-mismatch 7d6643fd4713787087de898789a50c8c ad246826f58c8828089c547791181a20",
            "weight-hash-mismatch 48c3292bdf31844c254f257ca1a355fe b3b62100ad682fb394b75f1cc98b9fea",
            "manifest-mismatch c9242d37a2660310012db9f4ea736081 da7e42b47ec92f77054d4fed57fe04be",
            "manifest-unlisted 0b6bdfb110c34feb8a044ee201a183ec 411b00f1a1f0fbbcb10e2428e79d08ec",
            "commit-time-mismatch b5e15e32a1525e9bce005a541a8773cc d7fe9625d77ff7226322897e47dc27ea",
            "line-out-of-range 101940f680c52ba6047babe7eb1c5897 c580b15fdb5a5d744f9b5f156323ef35",
            "value-missing f4cfdb22bac0a5b199c3f440e8877b88 a72cf9ece9f8ef3e35dbfce394749b86",
            "value-shifted 911a8af9e5de42f6889e520bc2ad9b93 0b1ba86d7cad8cfc97acfabc9768100e",
            "upstream-changed f4887038dda11fa0ba7f23e2bf38cd95 755dfe1215cef6ba7cc85d5c02c75512",
            "value-superseded 79a50f5daf61518105044c5952cc7ea9 e215f96e0d7740004f86357aff1045ce",
        ];
        let got: Vec<&String> = got
            .iter()
            .filter(|g| {
                want.iter()
                    .any(|w| w.split(' ').next() == g.split(' ').next())
            })
            .collect();
        assert_eq!(
            want.len(),
            23,
            "every code of pinaudit 0.1.0 is in the table"
        );
        assert_eq!(
            got,
            want,
            "got:\n{}",
            got.iter()
                .map(|g| g.as_str())
                .collect::<Vec<_>>()
                .join("\n")
        );
    }
}
