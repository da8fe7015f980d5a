//! `manifest-mismatch`, `manifest-unlisted` (`audit --manifests`): do
//! the checksum manifests at a cited revision vouch for the files there?
//!
//! Which manifests: every file named `SHA256SUMS` or `sha256sums.txt` (any case)
//! anywhere in the tree at a cited revision (a release's sits beside what it
//! covers, a patch series' in its own directory, a repository-wide one at the
//! top), up to [`MAX_MANIFESTS`] per revision, each no larger than
//! `--max-document-size`; a manifest left out for either bound is said, never
//! skipped in silence. Each revision's manifests are checked once, however many
//! sources cite it; their findings go to the first source that does. Paths in a
//! manifest are relative to its directory.
//!
//! A mismatch gets the same diagnosis as `hash-mismatch`: the variant of the file
//! the listed hash matches (`crlf` when the manifest was made from a CRLF
//! checkout) and the commit whose version of the file it matches.

use std::collections::HashSet;

use serde::Serialize;

use crate::finding::{evidence, Code, Finding, Location, Shape};
use crate::hash::matching_variant;
use crate::provider::{DocRef, Documents, OtherVersion};
use crate::record::{Record, Source};

/// One line of a manifest: a file and the sha256 it lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// 1-based line in the manifest.
    pub line: u32,
    /// Relative to the manifest's directory, `./` removed.
    pub(crate) path: String,
    /// Lowercase hex.
    pub(crate) sha256: String,
}

/// Whether a file name is a checksum manifest pinaudit reads.
pub(crate) fn is_manifest(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    n == "sha256sums" || n == "sha256sums.txt"
}

fn hex64(s: &str) -> Option<String> {
    (s.len() == 64 && s.bytes().all(|b| b.is_ascii_hexdigit())).then(|| s.to_ascii_lowercase())
}

/// `sha256sum` escapes a name holding `\` or a newline by starting the line with
/// `\` and writing `\\` and `\n`.
fn unescape(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut chars = name.chars();
    while let Some(c) = chars.next() {
        match (c, chars.clone().next()) {
            ('\\', Some('\\')) => {
                out.push('\\');
                chars.next();
            }
            ('\\', Some('n')) => {
                out.push('\n');
                chars.next();
            }
            _ => out.push(c),
        }
    }
    out
}

/// Reads a manifest in `sha256sum` forms: `HASH  NAME` (text), `HASH *NAME`
/// (binary), `SHA256 (NAME) = HASH` (`--tag`), each optionally `\`-escaped.
/// Blank lines and `#` comments are skipped; the numbers of lines in no such form
/// are returned beside the entries.
pub fn parse(text: &str) -> (Vec<Entry>, Vec<u32>) {
    let mut entries = Vec::new();
    let mut unreadable = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line_no = i as u32 + 1;
        let line = raw.strip_suffix('\r').unwrap_or(raw);
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let (escaped, line) = match line.strip_prefix('\\') {
            Some(rest) => (true, rest),
            None => (false, line),
        };
        let parsed = if let Some(rest) = line.strip_prefix("SHA256 (") {
            rest.rsplit_once(") = ")
                .and_then(|(name, hash)| Some((name, hex64(hash.trim_end())?)))
        } else {
            line.split_once(' ').and_then(|(hash, rest)| {
                let name = rest.strip_prefix(' ').or_else(|| rest.strip_prefix('*'))?;
                Some((name, hex64(hash)?))
            })
        };
        match parsed {
            Some((name, sha256)) if !name.is_empty() => {
                let name = if escaped {
                    unescape(name)
                } else {
                    name.to_string()
                };
                let path = name.trim_start_matches("./").to_string();
                entries.push(Entry {
                    line: line_no,
                    path,
                    sha256,
                });
            }
            _ => unreadable.push(line_no),
        }
    }
    (entries, unreadable)
}

/// Revisions whose manifests were already checked this run: (remote, commit).
pub type Seen = HashSet<(String, String)>;

/// The most manifests read at one revision: a tree of thousands (vendored
/// packages each shipping one) must not turn an audit into a crawl.
pub const MAX_MANIFESTS: usize = 100;

/// How much of a tree's manifests is read.
#[derive(Debug, Clone, Copy)]
pub struct Bounds {
    /// `--max-document-size`: a larger manifest is not read.
    pub max_size: u64,
    /// Manifests read per revision, in path order.
    pub max_count: usize,
}

/// Checks every manifest in the tree at `d`'s commit (`d` a document of source
/// `s`), unless that revision's were checked already. Returns what was left out
/// because a bound was reached, in words for a warning.
pub fn check(
    record: &Record,
    s: &Source,
    d: &DocRef,
    provider: &dyn Documents,
    bounds: Bounds,
    seen: &mut Seen,
    out: &mut Vec<Finding>,
) -> Vec<String> {
    let mut said = Vec::new();
    if !seen.insert((d.remote.clone(), d.commit.to_string())) {
        return said;
    }
    let Some(files) = provider.files(d) else {
        return said;
    };
    let manifests: Vec<&(String, u64)> = files
        .iter()
        .filter(|(p, _)| is_manifest(name_of(p)))
        .collect();
    let repo = crate::url::redact(&d.remote);
    let commit = d.commit.short();
    if manifests.len() > bounds.max_count {
        said.push(format!(
            "`--manifests`: `{repo}` has `{}` checksum manifests at `{commit}`; read the first `{}` in path order, not `{}`",
            manifests.len(),
            bounds.max_count,
            manifests[bounds.max_count].0
        ));
    }
    for (manifest, size) in manifests.into_iter().take(bounds.max_count) {
        if *size > bounds.max_size {
            said.push(format!(
                "`--manifests`: `{manifest}` of `{repo}` at `{commit}` is `{size}` bytes, over --max-document-size (`{}`); not read",
                bounds.max_size
            ));
            continue;
        }
        let dir = manifest.rsplit_once('/').map_or("", |(dir, _)| dir);
        let beside: Vec<String> = files
            .iter()
            .map(|(p, _)| p)
            .filter(|p| p.rsplit_once('/').map_or("", |(d, _)| d) == dir)
            .cloned()
            .collect();
        check_one(record, s, d, provider, dir, manifest, &beside, out);
    }
    said
}

fn name_of(path: &str) -> &str {
    path.rsplit_once('/').map_or(path, |(_, n)| n)
}

fn join(dir: &str, name: &str) -> String {
    if dir.is_empty() {
        name.to_string()
    } else {
        format!("{dir}/{name}")
    }
}

/// Checksum manifests beside a cited document.
pub(crate) struct Manifests;

impl super::Check for Manifests {
    fn evidence(&self) -> &'static [Shape] {
        const SHAPES: &[Shape] = &[
            Shape::of::<ManifestMismatch<'static>>(),
            Shape::of::<ManifestUnlisted<'static>>(),
        ];
        SHAPES
    }
}

evidence! {
    /// `manifest-mismatch` evidence: the entry, what is wrong with it (`missing`
    /// or `hash`) and, for a hash, what the file has.
    #[derive(Serialize)]
    pub(crate) struct ManifestMismatch<'a> for(ManifestMismatch) identity() {
        manifest: &'a str,
        path: &'a str,
        commit: &'a str,
        expected: &'a str,
        problem: &'static str,
        actual: Option<&'a str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        git_blob: Option<Option<&'a str>>,
        #[serde(skip_serializing_if = "Option::is_none")]
        matching_variant: Option<Option<&'static str>>,
        #[serde(skip_serializing_if = "Option::is_none")]
        matching_commit: Option<Option<OtherVersion>>,
    }
}

evidence! {
    /// `manifest-unlisted` evidence.
    #[derive(Serialize)]
    pub(crate) struct ManifestUnlisted<'a> for(ManifestUnlisted) identity() {
        manifest: &'a str,
        commit: &'a str,
        unlisted: Vec<&'a str>,
    }
}

#[allow(clippy::too_many_arguments)]
fn check_one(
    record: &Record,
    s: &Source,
    d: &DocRef,
    provider: &dyn Documents,
    dir: &str,
    manifest: &str,
    beside: &[String],
    out: &mut Vec<Finding>,
) {
    let at = |path: &str| DocRef {
        path: path.to_string(),
        ..d.clone()
    };
    let Ok(Some(text)) = provider.snapshot(&at(manifest)) else {
        return;
    };
    let (entries, _) = parse(&String::from_utf8_lossy(&text.bytes));
    let location = |line: Option<u32>| Location {
        repository: s
            .repository
            .clone()
            .or_else(|| Some(crate::url::redact(&d.remote))),
        revision: Some(d.commit.to_string()),
        path: Some(manifest.to_string()),
        line,
    };
    let commit = d.commit.short();
    let mut listed: HashSet<String> = HashSet::new();
    for e in &entries {
        let path = join(dir, &e.path);
        listed.insert(path.clone());
        let base = |message: String| {
            Finding::new(Code::ManifestMismatch, &record.id, message)
                .source(&s.id)
                .at(location(Some(e.line)))
        };
        let facts = ManifestMismatch {
            manifest,
            path: path.as_str(),
            commit: d.commit.as_str(),
            expected: e.sha256.as_str(),
            problem: "missing",
            actual: None,
            git_blob: None,
            matching_variant: None,
            matching_commit: None,
        };
        let Ok(snapshot) = provider.snapshot(&at(&path)) else {
            continue;
        };
        let Some(file) = snapshot else {
            out.push(
                base(format!(
                    "`{manifest}` lists `{}`, which does not exist at `{commit}`",
                    e.path
                ))
                .hint("drop the entry, or regenerate the manifest from the files as committed")
                .evidence(facts),
            );
            continue;
        };
        if file.sha256 == e.sha256 {
            continue;
        }
        let variant = matching_variant(&file.bytes, &e.sha256);
        let other = provider.hash_elsewhere(&at(&path), &file, &e.sha256);
        let message = hash_message(manifest, e, commit, &file.sha256, variant, other.as_ref());
        out.push(
            base(message)
                .hint(format!(
                    "regenerate the entry from the blob: `git show {commit}:{} | sha256sum`",
                    super::location::shell_quote(&path)
                ))
                .evidence(ManifestMismatch {
                    problem: "hash",
                    actual: Some(file.sha256.as_str()),
                    git_blob: Some(file.git_blob.as_deref()),
                    matching_variant: Some(variant),
                    matching_commit: Some(other),
                    ..facts
                }),
        );
    }
    out.extend(unlisted(record, s, d, manifest, beside, &listed).map(|f| f.at(location(None))));
}

/// The message of a `manifest-mismatch` of hashes.
fn hash_message(
    manifest: &str,
    e: &Entry,
    commit: &str,
    actual: &str,
    variant: Option<&str>,
    other: Option<&OtherVersion>,
) -> String {
    let mut message = format!(
        "`{manifest}` lists sha256 `{}` for `{}`, the file at `{commit}` has `{actual}`",
        e.sha256, e.path
    );
    if let Some(v) = variant {
        message.push_str(&format!("; the listed hash is of the `{v}` variant"));
    }
    if let Some(o) = other {
        message.push_str(&format!(
            "; it matches the file at commit `{}`",
            o.commit.get(..7).unwrap_or(&o.commit)
        ));
    }
    message
}

/// `manifest-unlisted`: the files beside the manifest that it does not list
/// (signatures of it and other manifests aside).
fn unlisted(
    record: &Record,
    s: &Source,
    d: &DocRef,
    manifest: &str,
    beside: &[String],
    listed: &HashSet<String>,
) -> Option<Finding> {
    let unlisted: Vec<&str> = beside
        .iter()
        .filter(|p| !listed.contains(*p) && *p != manifest && !is_signature(p, manifest))
        .filter(|p| !is_manifest(name_of(p)))
        .map(String::as_str)
        .collect();
    if unlisted.is_empty() {
        return None;
    }
    let names: Vec<String> = unlisted.iter().map(|p| format!("`{p}`")).collect();
    Some(
        Finding::new(
            Code::ManifestUnlisted,
            &record.id,
            format!(
                "`{manifest}` at `{}` does not list {} beside it",
                d.commit.short(),
                names.join(", ")
            ),
        )
        .source(&s.id)
        .evidence(ManifestUnlisted {
            manifest,
            commit: d.commit.as_str(),
            unlisted,
        }),
    )
}

/// `SHA256SUMS.asc`, `.sig`, `.gpg`, `.minisig`: a signature of the manifest.
fn is_signature(path: &str, manifest: &str) -> bool {
    path.strip_prefix(manifest)
        .is_some_and(|ext| matches!(ext, ".asc" | ".sig" | ".gpg" | ".minisig"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const H: &str = "4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393";

    #[test]
    fn reads_every_sha256sum_form() {
        let text = format!(
            "# made by sha256sum\n{H}  a.txt\n{} *./bin/b.gguf\nSHA256 (c d.txt) = {H}\n\\{H}  e\\\\f\\ng\r\nnot a line\n{H} missing-marker\n",
            H.to_uppercase()
        );
        let (entries, bad) = parse(&text);
        let got: Vec<(u32, &str)> = entries.iter().map(|e| (e.line, e.path.as_str())).collect();
        assert_eq!(
            got,
            [
                (2, "a.txt"),
                (3, "bin/b.gguf"),
                (4, "c d.txt"),
                (5, "e\\f\ng")
            ]
        );
        assert!(entries.iter().all(|e| e.sha256 == H));
        assert_eq!(bad, [6, 7]);
    }

    #[test]
    fn manifest_names() {
        for n in ["SHA256SUMS", "sha256sums.txt", "SHA256SUMS.txt"] {
            assert!(is_manifest(n), "{n}");
        }
        for n in ["SHA256SUMS.asc", "README.md", "sha512sums"] {
            assert!(!is_manifest(n), "{n}");
        }
        assert!(is_signature("d/SHA256SUMS.asc", "d/SHA256SUMS"));
        assert!(!is_signature("d/SHA256SUMS", "d/SHA256SUMS"));
    }
}
