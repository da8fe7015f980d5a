//! `malformed-hash`, `missing-hash`: can the recorded digests pin anything down?

use serde::Serialize;

use super::citation::InvalidRecord;
use crate::finding::{evidence, Code, Finding, Shape};
use crate::record::{Record, Recorded};

use super::location::{hash_command, source_location};

evidence! {
    /// `malformed-hash` evidence: the text recorded, how many hex digits it has
    /// (for a sha256), and the artifact it belongs to (none for a source's).
    #[derive(Serialize)]
    pub(crate) struct MalformedHash<'a> for(MalformedHash) identity(artifact, recorded) {
        recorded: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        length: Option<usize>,
        #[serde(skip_serializing_if = "Option::is_none")]
        artifact: Option<&'a str>,
    }
}

/// Recorded digests that can pin something down.
pub(crate) struct Hashes;

impl super::Check for Hashes {
    fn evidence(&self) -> &'static [Shape] {
        const SHAPES: &[Shape] = &[Shape::of::<MalformedHash<'static>>()];
        SHAPES
    }

    fn record(&self, record: &Record, out: &mut Vec<Finding>) {
        check(record, out);
    }
}

pub fn check(record: &Record, out: &mut Vec<Finding>) {
    for s in &record.sources {
        match &s.sha256 {
            None => out.push(
                Finding::new(
                    Code::MissingHash,
                    &record.id,
                    format!(
                        "source `{}` has no recorded sha256, so a changed document would go unnoticed",
                        s.id
                    ),
                )
                .source(&s.id)
                .at(source_location(s))
                .with_hint(hash_command(s).map(|c| format!("record the document's sha256: `{c}`"))),
            ),
            Some(Recorded::Malformed(text)) => out.push(
                malformed(&record.id, text, None)
                    .source(&s.id)
                    .at(source_location(s))
                    .with_hint(hash_command(s).map(|c| format!("recompute the digest: `{c}`"))),
            ),
            Some(Recorded::Valid(_)) => {}
        }
    }
    for a in &record.artifacts {
        if let Some(rev) = &a.revision {
            if let Some(why) = malformed_revision(rev) {
                out.push(
                    Finding::new(
                        Code::InvalidRecord,
                        &record.id,
                        format!("revision `{rev}` of `{}` {why}", a.label),
                    )
                    .evidence(InvalidRecord {
                        recorded: Some(rev.as_str()),
                        artifact: Some(a.label.as_str()),
                        ..InvalidRecord::default()
                    }),
                );
            }
        }
        if let Some(Recorded::Malformed(text)) = &a.sha256 {
            out.push(malformed(&record.id, text, Some(&a.label)));
        }
        if let Some(d) = &a.digest {
            let (algo, hex) = d.split_once(':').unwrap_or(("", d));
            let ok =
                algo == "sha256" && hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit());
            if !ok {
                out.push(
                    Finding::new(
                        Code::MalformedHash,
                        &record.id,
                        format!("image digest `{d}` of `{}` is not of the form `sha256:` and 64 hex digits", a.label),
                    )
                    .evidence(MalformedHash {
                        recorded: d,
                        length: None,
                        artifact: Some(&a.label),
                    }),
                );
            }
        }
    }
}

/// Why a recorded revision cannot name anything: white space or control
/// characters, or a hex id too long to be a commit and not a sha256 one. A branch
/// name or a short id is well-formed (just not pinned).
fn malformed_revision(rev: &str) -> Option<String> {
    let t = rev.trim();
    if t.is_empty() || t.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Some("is not a revision: it holds white space".to_string());
    }
    let hex = t.bytes().all(|b| b.is_ascii_hexdigit());
    if hex && t.len() > 40 && t.len() != 64 {
        return Some(format!(
            "has {} hex digits: a commit id has 40 (or 64)",
            t.len()
        ));
    }
    None
}

fn malformed(record: &str, text: &str, artifact: Option<&str>) -> Finding {
    let hex = text.strip_prefix("sha256:").unwrap_or(text);
    let why = if !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        "has characters that are not hex digits".to_string()
    } else {
        format!("has {} hex digits, not 64", hex.len())
    };
    Finding::new(
        Code::MalformedHash,
        record,
        format!("recorded sha256 `{text}` {why}"),
    )
    .evidence(MalformedHash {
        recorded: text,
        length: Some(hex.len()),
        artifact,
    })
}
