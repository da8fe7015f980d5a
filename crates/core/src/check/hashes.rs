//! `malformed-hash`, `missing-hash`: can the recorded digests pin anything down?

use crate::finding::{Code, Finding};
use crate::record::{Record, Recorded};

use super::location::{hash_command, source_location};

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
                malformed(&record.id, text)
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
                    .with("recorded", rev.as_str())
                    .with("artifact", a.label.as_str()),
                );
            }
        }
        if let Some(Recorded::Malformed(text)) = &a.sha256 {
            out.push(malformed(&record.id, text).with("artifact", a.label.as_str()));
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
                    .with("recorded", d.as_str())
                    .with("artifact", a.label.as_str()),
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

fn malformed(record: &str, text: &str) -> Finding {
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
    .with("recorded", text)
    .with("length", hex.len())
}
