//! `malformed-hash`, `missing-hash`: can the recorded digests pin anything down?

use crate::finding::{Code, Finding};
use crate::record::{Record, Recorded};

use super::location::source_location;

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
                .at(source_location(s)),
            ),
            Some(Recorded::Malformed(text)) => out.push(malformed(&record.id, text).source(&s.id).at(source_location(s))),
            Some(Recorded::Valid(_)) => {}
        }
    }
    for a in &record.artifacts {
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
