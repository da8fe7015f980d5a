//! `weight-hash-mismatch`, and the weights side of `path-missing`,
//! `repository-missing`, `revision-missing` and `unpinned-weights`: are
//! the weights a record names the ones in the model repository it names?
//!
//! Judged from the provider's [`ModelFacts`]: the weight files at the revision, by
//! their Git LFS pointers (sha256 and size), never by their bytes. A recorded hash
//! matches a single file's oid, any shard's oid of a multi-file set, or the set's
//! manifest hash ([`manifest_sha256`]).

use serde_json::{json, Value};

use crate::finding::{Code, Finding, Location};
use crate::provider::model::manifest_sha256;
use crate::provider::{ModelFacts, ModelRef, WeightFile};
use crate::record::{short_rev, Artifact, Record, Recorded};

/// The evidence list of weight files: path, sha256, size and whether git holds a
/// Git LFS pointer for it.
pub(crate) fn files_evidence(files: &[WeightFile]) -> Value {
    Value::Array(
        files
            .iter()
            .map(|f| json!({"path": f.path, "sha256": f.sha256, "size": f.size, "lfs": f.lfs}))
            .collect(),
    )
}

/// Judges one weights artifact against what its model repository holds. An
/// `unpinned-weights` finding already in `out` for the artifact gains the pin to
/// adopt: the head commit and each file's path, sha256 and size.
pub fn check(
    record: &Record,
    a: &Artifact,
    m: &ModelRef,
    facts: &ModelFacts,
    out: &mut Vec<Finding>,
) {
    let repository = crate::url::redact(&m.remote);
    let at = |revision: Option<&str>, path: Option<&str>| Location {
        repository: Some(repository.clone()),
        revision: revision.map(str::to_string),
        path: path.map(str::to_string),
        line: None,
    };
    let base = |code: Code, message: String| {
        Finding::new(code, &record.id, message)
            .with("artifact", a.label.as_str())
            .with("kind", a.kind.as_str())
    };
    let named = m.revision.as_ref().map(|r| r.as_str().to_string());
    let (commit, files, missing) = match facts {
        ModelFacts::RepositoryMissing { described } => {
            out.push(
                base(
                    Code::RepositoryMissing,
                    format!("model repository of weights `{}`: {described}", a.label),
                )
                .at(at(named.as_deref(), None)),
            );
            return;
        }
        ModelFacts::RevisionMissing => {
            let rev = named.as_deref().unwrap_or("HEAD");
            out.push(
                base(
                    Code::RevisionMissing,
                    format!(
                        "revision `{rev}` of weights `{}` is not in `{repository}`",
                        a.label
                    ),
                )
                .at(at(Some(rev), None))
                .with("revision", rev),
            );
            return;
        }
        ModelFacts::Present {
            commit,
            files,
            missing,
        } => (commit, files, missing),
    };
    for path in missing {
        out.push(
            base(
                Code::PathMissing,
                format!(
                    "weight file `{path}` of `{}` does not exist at `{}`",
                    a.label,
                    short_rev(commit)
                ),
            )
            .hint("list the weight files as they are named at that revision (`git ls-tree -r REV`)")
            .at(at(Some(commit), Some(path)))
            .with("path", path.as_str())
            .with("commit", commit.as_str()),
        );
    }

    if a.revision.is_none() && a.sha256.is_none() {
        suggest_pin(a, &repository, commit, files, out);
    }

    let Some(Recorded::Valid(expected)) = &a.sha256 else {
        return;
    };
    if files.is_empty() {
        if missing.is_empty() {
            out.push(
                base(
                    Code::PathMissing,
                    format!(
                        "no weight files (Git LFS pointers) in `{repository}` at `{}` to compare `{}`'s hash with",
                        short_rev(commit),
                        a.label
                    ),
                )
                .hint("name the weight files in the artifact's `files` (paths or globs)")
                .at(at(Some(commit), None))
                .with("commit", commit.as_str()),
            );
        }
        return;
    }
    let manifest = manifest_sha256(files);
    let matched = files.iter().find(|f| f.sha256 == expected.as_str());
    if matched.is_some() || manifest == expected.as_str() {
        return;
    }
    let what = match files.len() {
        1 => format!("the sha256 of `{}`", files[0].path),
        n => format!("the sha256 of any of its {n} files, nor their manifest hash"),
    };
    out.push(
        base(
            Code::WeightHashMismatch,
            format!(
                "weights `{}`: the recorded sha256 `{expected}` is not {what} at `{}`",
                a.label,
                short_rev(commit)
            ),
        )
        .hint(format!(
            "record the Git LFS oid of the weights at `{}` (`git show {}:FILE` shows `oid sha256:…`)",
            short_rev(commit),
            short_rev(commit)
        ))
        .at(at(Some(commit), (files.len() == 1).then(|| files[0].path.as_str())))
        .with("expected", expected.as_str())
        .with("commit", commit.as_str())
        .with("files", files_evidence(files))
        .with("manifest_sha256", manifest),
    );
}

/// Adds the pin to adopt to the artifact's `unpinned-weights` finding.
fn suggest_pin(
    a: &Artifact,
    repository: &str,
    commit: &str,
    files: &[WeightFile],
    out: &mut [Finding],
) {
    let Some(f) = out.iter_mut().find(|f| {
        f.code == Code::UnpinnedWeights
            && f.evidence.get("artifact").and_then(Value::as_str) == Some(a.label.as_str())
    }) else {
        return;
    };
    let mut pin = json!({
        "repository": repository,
        "revision": commit,
        "files": files_evidence(files),
    });
    if files.len() > 1 {
        pin["manifest_sha256"] = manifest_sha256(files).into();
    }
    let sha = match files {
        [one] => Some(one.sha256.clone()),
        [] => None,
        many => Some(manifest_sha256(many)),
    };
    f.evidence.insert("suggested_pin".into(), pin);
    f.hint = Some(match sha {
        Some(sha) => {
            format!("pin the weights at the head: `revision` `{commit}`, `sha256` `{sha}`")
        }
        None => format!("pin the weights at the head: `revision` `{commit}`"),
    });
}
