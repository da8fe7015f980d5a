//! Pin files and record documents built in code, for the offline tests: each
//! writes one into a `Scratch` directory and runs `pinaudit audit --offline`.
//! Offline, every source is `unchecked`, so only the record-level checks
//! speak; no test here touches the network.

use serde_json::{json, Value};

/// The commit the seed record pins; used as "the" well-formed revision.
pub const REV: &str = "de1fa14ea798512f54dafc8b8795eb3ef1a6c367";
/// Another well-formed commit id, for conflicts.
pub const OTHER_REV: &str = "0123456789abcdef0123456789abcdef01234567";
/// A well-formed sha256 (the seed README's).
pub const SHA: &str = "4bccb5ffc313f08ca53f62b6c8fc880c1317c07f79fed53c522bfc8e99bea20d";
pub const REPO: &str = "https://github.com/owner/repo";

pub fn blob_url(rev: &str, path: &str) -> String {
    format!("{REPO}/blob/{rev}/{path}")
}

/// A pinned, hashed source with nothing wrong with it.
pub fn source(id: &str) -> Value {
    json!({
        "id": id,
        "url": blob_url(REV, "README.md"),
        "repository": REPO,
        "revision": REV,
        "path": "README.md",
        "sha256": SHA,
        "commit_time": "2026-08-07T15:45:04Z"
    })
}

/// A figure citing line 3 of `source` at the pinned revision, with nothing wrong with it.
pub fn claim(label: &str, source: &str) -> Value {
    json!({
        "label": label,
        "source": source,
        "lines": [3, 3],
        "value": 2.9,
        "unit": "tokens/s",
        "metric": "decode_rate",
        "url": format!("{}#L3", blob_url(REV, "README.md")),
        "correct": null,
        "total": null
    })
}

/// A pin file with one good source and one good claim: no record-level finding.
pub fn pin_file(id: &str) -> Value {
    json!({
        "schema": "pinaudit/pins/v1",
        "id": id,
        "title": "A clean record",
        "sources": [source("readme")],
        "claims": [claim("decode", "readme")],
        "artifacts": []
    })
}

/// A pin file with no sources, no claims and no artifacts.
pub fn empty_pin_file(id: &str) -> Value {
    json!({
        "schema": "pinaudit/pins/v1",
        "id": id,
        "title": null,
        "sources": [],
        "claims": [],
        "artifacts": []
    })
}

/// Removes a key from a JSON object.
pub fn remove(v: &mut Value, key: &str) {
    v.as_object_mut().expect("an object").remove(key);
}

/// A record document in the external format: header bullets, then ```json blocks.
pub fn record_doc(blocks: &[&str]) -> String {
    let mut doc = format!(
        "# A small record\n\n\
         - Type: Performance report\n\
         - Original project: {REPO}\n\
         - Pinned document: {}\n\
         - Source revision: {REV}\n\
         - Source commit time (not experiment date): 2026-08-07T15:45:04Z\n\n\
         ## Figures\n",
        blob_url(REV, "README.md")
    );
    for b in blocks {
        doc.push_str("\n```json\n");
        doc.push_str(b);
        doc.push_str("\n```\n");
    }
    doc
}

/// A figure object as record documents write it, citing the header's README.
pub fn figure(label: &str, value: f64, line: u32) -> Value {
    json!({
        "label": label,
        "metric": "decode_rate",
        "value": value,
        "unit": "tokens/s",
        "source_document_id": "readme",
        "source_document_sha256": SHA,
        "source_line": line,
        "evidence_url": format!("{}#L{line}", blob_url(REV, "README.md"))
    })
}

/// A `{"figures": [...]}` block.
pub fn figures_block(figures: &[Value]) -> String {
    serde_json::to_string_pretty(&json!({ "figures": figures })).unwrap()
}
