//! End-to-end audits: the real `pinaudit` binary run against fixture remotes on
//! loopback, the way a scheduled re-check runs against GitHub.
//!
//! A [`Forge`] is a base directory of bare `OWNER/REPO.git` repositories, laid
//! out as GitHub's paths are, so one `--rewrite https://github.com/=SERVER/`
//! points every cited `https://github.com/OWNER/REPO` at a `GitDaemon`, an
//! `HttpGitServer` or a `file://` URL. A `Scratch` holds the pin files and
//! the cache of one scenario; the cache key is the *original* GitHub URL
//! (`cache/git/github.com/OWNER/REPO.git`), whatever the rewrite.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use git2::Oid;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use tempfile::TempDir;

use super::run::Run;
use super::{FixtureRepo, GitDaemon};

/// Committer time of the first fixture commit; later ones add seconds.
pub const T0: i64 = 1_700_000_000;
/// [`T0`] as RFC 3339 (checked with `date -u -d @1700000000`), written out
/// rather than computed so that pinaudit's own formatting is what is tested.
pub const T0_RFC3339: &str = "2023-11-14T22:13:20Z";

/// A README whose line 5 carries `2.9 tok/s` in a markdown table.
pub const README: &str = "# Decode benchmark\n\
\n\
| phase | rate |\n\
|---|---|\n\
| decode | 2.9 tok/s |\n\
| prefill | 41.3 tok/s |\n\
\n\
Measured on one node.\n";

/// The line of [`README`] that carries the decode figure, and its text.
pub const README_LINE: u32 = 5;
pub const README_LINE_TEXT: &str = "| decode | 2.9 tok/s |";

/// sha256 of `bytes` as lowercase hex, computed independently of pinaudit.
pub fn sha256_hex(bytes: impl AsRef<[u8]>) -> String {
    Sha256::digest(bytes.as_ref())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The repository of the usual scenario.
pub const NAME: &str = "acme/bench";

/// `--rewrite` sending GitHub to `daemon`.
pub fn to_daemon(daemon: &GitDaemon) -> String {
    Forge::rewrite(&daemon.url(""))
}

/// About `bytes` of text that does not compress (hex of a sha256 chain): a
/// pack at least that large.
pub fn incompressible_text(bytes: usize) -> String {
    let mut text = String::with_capacity(bytes + 65);
    let mut h = sha256_hex("seed");
    while text.len() < bytes {
        h = sha256_hex(&h);
        text.push_str(&h);
        text.push('\n');
    }
    text
}

/// A forge holding `acme/bench` with [`README`] committed at [`T0`] on `main`.
pub fn forge_with_readme() -> (Forge, FixtureRepo, Oid) {
    let forge = Forge::new();
    let repo = forge.repo(NAME);
    let commit = repo.commit(&[("README.md", README)], "add results", T0);
    (forge, repo, commit)
}

/// The usual pin of [`README`] line 5 at `commit`, with the right hash and time.
pub fn good_pin(id: &str, commit: Oid) -> Value {
    readme_pin(id, NAME, commit, &sha256_hex(README), T0_RFC3339)
}

/// Asserts that `record`'s `readme` source was checked at `commit` with the
/// true hash of [`README`], and that its `decode` claim was verified on line 5.
pub fn assert_clean(run: &Run, record: &str, commit: Oid) {
    let s = run.source(record, "readme");
    assert_eq!(s["status"], "checked", "{s:#}");
    assert_eq!(s["reason"], Value::Null, "{s:#}");
    assert_eq!(s["revision"], commit.to_string());
    assert_eq!(s["sha256"]["expected"], sha256_hex(README));
    assert_eq!(s["sha256"]["actual"], sha256_hex(README));
    let blob = Oid::hash_object(git2::ObjectType::Blob, README.as_bytes()).expect("blob id");
    assert_eq!(s["git_blob"], blob.to_string());
    assert_eq!(s["commit_time"], T0_RFC3339);
    let c = run.claim(record, "decode");
    assert_eq!(c["status"], "verified", "{c:#}");
    assert_eq!(c["found_line"], README_LINE);
    assert_eq!(c["line_text"], README_LINE_TEXT);
}

/// A directory of bare repositories named like GitHub's (`OWNER/REPO.git`).
pub struct Forge {
    base: TempDir,
}

impl Default for Forge {
    fn default() -> Self {
        Forge::new()
    }
}

impl Forge {
    pub fn new() -> Self {
        Forge {
            base: tempfile::tempdir().expect("tempdir"),
        }
    }

    /// The directory servers serve (their base path / project root).
    pub fn path(&self) -> &Path {
        self.base.path()
    }

    /// A new bare repository `OWNER/REPO.git` (`name = "OWNER/REPO"`).
    pub fn repo(&self, name: &str) -> FixtureRepo {
        FixtureRepo::create(self.base.path(), &format!("{name}.git"))
    }

    /// `--rewrite` sending GitHub to `root` (e.g. `git://127.0.0.1:PORT/`).
    pub fn rewrite(root: &str) -> String {
        format!("https://github.com/={root}")
    }

    /// `--rewrite` sending GitHub to this forge over `file://`.
    pub fn file_rewrite(&self) -> String {
        Forge::rewrite(&format!("file://{}/", self.base.path().display()))
    }
}

/// `https://github.com/NAME/blob/COMMIT/PATH`.
pub fn blob_url(name: &str, commit: Oid, path: &str) -> String {
    format!("https://github.com/{name}/blob/{commit}/{path}")
}

/// A pinned source of repository `name` (`OWNER/REPO`) at `commit`.
pub fn source(
    id: &str,
    name: &str,
    commit: Oid,
    path: &str,
    sha256: &str,
    commit_time: &str,
) -> Value {
    json!({
        "id": id,
        "url": blob_url(name, commit, path),
        "repository": format!("https://github.com/{name}"),
        "revision": commit.to_string(),
        "path": path,
        "sha256": sha256,
        "commit_time": commit_time,
    })
}

/// A claim of `value` tokens/s on line `line` of `source` (whose URL is
/// `source_url`; the claim's own URL carries the `#L` anchor).
pub fn claim(label: &str, source: &Value, line: u32, value: f64) -> Value {
    json!({
        "label": label,
        "source": source["id"],
        "lines": [line, line],
        "value": value,
        "unit": "tokens/s",
        "metric": "decode_rate",
        "url": format!("{}#L{line}", source["url"].as_str().expect("source url")),
        "correct": null,
        "total": null,
    })
}

/// A pin file (`pinaudit/pins/v1`).
pub fn pin(id: &str, sources: &[Value], claims: &[Value]) -> Value {
    json!({
        "schema": "pinaudit/pins/v1",
        "id": id,
        "title": format!("Fixture record {id}"),
        "sources": sources,
        "claims": claims,
        "artifacts": [],
    })
}

/// The usual one-source, one-claim pin: `README` line 5 of `name` at
/// `commit`, recorded with `sha256` and `commit_time`.
pub fn readme_pin(id: &str, name: &str, commit: Oid, sha256: &str, commit_time: &str) -> Value {
    let s = source("readme", name, commit, "README.md", sha256, commit_time);
    let c = claim("decode", &s, README_LINE, 2.9);
    pin(id, &[s], &[c])
}

/// Every file under `dir` with its size and modification time, by relative
/// path. Two equal snapshots of a mirror's `objects/` mean nothing was
/// written into its object database in between.
pub fn snapshot(dir: &Path) -> BTreeMap<PathBuf, (u64, SystemTime)> {
    let mut files = BTreeMap::new();
    for entry in walkdir::WalkDir::new(dir) {
        let entry = entry.expect("walk");
        if entry.file_type().is_file() {
            let meta = entry.metadata().expect("metadata");
            let rel = entry
                .path()
                .strip_prefix(dir)
                .expect("under dir")
                .to_path_buf();
            files.insert(rel, (meta.len(), meta.modified().expect("mtime")));
        }
    }
    files
}
