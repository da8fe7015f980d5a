//! Helpers shared by the `foundation_*` acceptance tests (issue "Foundation").
//!
//! Every test builds its inputs in a temp dir, runs the real binary with `--offline`
//! (no test touches the network) and reads the JSON report back. Inputs are passed
//! by paths relative to the temp dir, so reports name `pins/x.json`, not a random
//! absolute path. Every run checks that pinaudit did not panic: no input may make
//! it panic, whatever else the test asserts.

// Each test binary uses its own subset of these helpers.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use assert_cmd::Command;
use serde_json::{json, Value};
use tempfile::TempDir;

use run::{pinaudit_with_timeout, write_file};

/// The run of the binary and its report, shared with the tests in `common`
/// (loaded alone: the offline tests need none of `common`'s git servers).
#[path = "../common/run.rs"]
pub mod run;

pub use run::{run, Run};

/// The commit the seed record pins; used as "the" well-formed revision.
pub const REV: &str = "de1fa14ea798512f54dafc8b8795eb3ef1a6c367";
/// Another well-formed commit id, for conflicts.
pub const OTHER_REV: &str = "0123456789abcdef0123456789abcdef01234567";
/// A well-formed sha256 (the seed README's).
pub const SHA: &str = "4bccb5ffc313f08ca53f62b6c8fc880c1317c07f79fed53c522bfc8e99bea20d";
pub const REPO: &str = "https://github.com/owner/repo";

/// The seed record, from the copy kept in the repository (`shared/` may be absent in CI).
pub fn seed_path() -> PathBuf {
    manifest_dir().join("tests/data/seed.txt")
}

pub fn manifest_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The binary, with a clean environment for what pinaudit reads, and a timeout so
/// that a hang fails the test instead of stalling the suite.
pub fn pinaudit() -> Command {
    let mut cmd = pinaudit_with_timeout(Duration::from_secs(30));
    cmd.env_remove("NO_COLOR");
    cmd
}

/// A temp dir holding inputs; pinaudit runs inside it.
pub struct Fixture {
    dir: TempDir,
}

impl Default for Fixture {
    fn default() -> Self {
        Fixture::new()
    }
}

impl Fixture {
    pub fn new() -> Fixture {
        Fixture {
            dir: tempfile::tempdir().expect("a temp dir"),
        }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Writes a file (creating its directories) and returns its relative path.
    pub fn write(&self, name: &str, contents: impl AsRef<[u8]>) -> PathBuf {
        write_file(self.path(), name, contents)
    }

    /// Writes a pin file as pretty JSON.
    pub fn write_json(&self, name: &str, value: &Value) -> PathBuf {
        self.write(name, serde_json::to_string_pretty(value).unwrap() + "\n")
    }

    /// `pinaudit` with the fixture as working directory.
    pub fn cmd(&self) -> Command {
        let mut cmd = pinaudit();
        cmd.current_dir(self.path());
        cmd
    }

    /// `pinaudit audit --offline --cache cache --format json EXTRA...`.
    pub fn audit<I, S>(&self, extra: I) -> Run
    where
        I: IntoIterator<Item = S>,
        S: AsRef<std::ffi::OsStr>,
    {
        let mut cmd = self.cmd();
        cmd.args(["audit", "--offline", "--cache", "cache", "--format", "json"])
            .args(extra);
        run(&mut cmd)
    }

    /// Writes `pin` to `pins/ID.json` and audits that file alone.
    pub fn audit_pin(&self, pin: &Value) -> Run {
        let id = pin["id"].as_str().unwrap_or("record");
        let file = self.write_json(&format!("pins/{id}.json"), pin);
        self.audit([file])
    }

    /// Writes a record document and audits it alone.
    pub fn audit_doc(&self, name: &str, text: &str) -> Run {
        let file = self.write(name, text);
        self.audit([file])
    }
}

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
