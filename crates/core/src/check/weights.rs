//! `weight-hash-mismatch`, and the weights side of `path-missing`,
//! `repository-missing`, `revision-missing` and `unpinned-weights`: are
//! the weights a record names the ones in the model repository it names?
//!
//! Judged from the provider's [`ModelFacts`]: the weight files at the revision, by
//! their Git LFS pointers (sha256 and size), never by their bytes. A recorded hash
//! matches a single file's oid, any shard's oid of a multi-file set, or the set's
//! manifest hash ([`manifest_sha256`]).

use serde_json::{json, Value};

use serde::Serialize;

use super::artifacts::{SuggestedPin, Unpinned};
use crate::finding::{evidence, Code, Finding, Location, Shape};
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

/// Model weights against their model repository.
pub(crate) struct Weights;

impl super::Check for Weights {
    fn evidence(&self) -> &'static [Shape] {
        const SHAPES: &[Shape] = &[
            Shape::of::<WeightsAbsent<'static>>(),
            Shape::of::<WeightPathMissing<'static>>(),
            Shape::of::<WeightHashMismatch<'static>>(),
        ];
        SHAPES
    }
}

evidence! {
    /// `repository-missing` and `revision-missing` evidence of weights: the
    /// artifact, and the revision that is not there.
    #[derive(Serialize)]
    pub(crate) struct WeightsAbsent<'a> for(RepositoryMissing, RevisionMissing) identity(artifact, kind) {
        artifact: &'a str,
        kind: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        revision: Option<&'a str>,
    }
}

evidence! {
    /// `path-missing` evidence of weights: the file that is not there (none when
    /// no weight file at all is), at the commit read.
    #[derive(Serialize)]
    pub(crate) struct WeightPathMissing<'a> for(PathMissing) identity(artifact, kind) {
        artifact: &'a str,
        kind: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        path: Option<&'a str>,
        commit: &'a str,
    }
}

evidence! {
    /// `weight-hash-mismatch` evidence.
    #[derive(Serialize)]
    pub(crate) struct WeightHashMismatch<'a> for(WeightHashMismatch) identity(artifact, kind) {
        artifact: &'a str,
        kind: &'a str,
        expected: &'a str,
        commit: &'a str,
        files: Value,
        manifest_sha256: String,
    }
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
    let at = |revision: Option<&str>, path: Option<&str>| location(&repository, revision, path);
    let (artifact, kind) = (a.label.as_str(), a.kind.as_str());
    let base = |code: Code, message: String| Finding::new(code, &record.id, message);
    let named = m.revision.as_ref().map(|r| r.as_str().to_string());
    let (commit, files, missing) = match facts {
        ModelFacts::RepositoryMissing { described } => {
            out.push(
                base(
                    Code::RepositoryMissing,
                    format!("model repository of weights `{}`: {described}", a.label),
                )
                .at(at(named.as_deref(), None))
                .evidence(WeightsAbsent {
                    artifact,
                    kind,
                    revision: None,
                }),
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
                .evidence(WeightsAbsent {
                    artifact,
                    kind,
                    revision: Some(rev),
                }),
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
            .evidence(WeightPathMissing {
                artifact,
                kind,
                path: Some(path),
                commit,
            }),
        );
    }

    if a.revision.is_none() && a.sha256.is_none() {
        suggest_pin(a, &repository, commit, files, out);
    }

    hashes(record, a, &repository, (commit, files, missing), out);
}

/// Where a weights finding points: the model repository, at a revision, a path.
fn location(repository: &str, revision: Option<&str>, path: Option<&str>) -> Location {
    Location {
        repository: Some(repository.to_string()),
        revision: revision.map(str::to_string),
        path: path.map(str::to_string),
        line: None,
    }
}

/// `weight-hash-mismatch` (or `path-missing` when no weight file is there):
/// the recorded hash against the weight files at the commit read.
fn hashes(
    record: &Record,
    a: &Artifact,
    repository: &str,
    (commit, files, missing): (&str, &[WeightFile], &[String]),
    out: &mut Vec<Finding>,
) {
    let (artifact, kind) = (a.label.as_str(), a.kind.as_str());
    let base = |code: Code, message: String| Finding::new(code, &record.id, message);
    let at = |revision: Option<&str>, path: Option<&str>| location(repository, revision, path);
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
                .evidence(WeightPathMissing {
                    artifact,
                    kind,
                    path: None,
                    commit,
                }),
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
        .evidence(WeightHashMismatch {
            artifact,
            kind,
            expected: expected.as_str(),
            commit,
            files: files_evidence(files),
            manifest_sha256: manifest,
        }),
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
    let Some((f, mut facts)) = out.iter_mut().find_map(|f| {
        if f.code != Code::UnpinnedWeights {
            return None;
        }
        let facts = f.evidence_as::<Unpinned>()?;
        (facts.artifact == a.label).then_some((f, facts))
    }) else {
        return;
    };
    let sha = match files {
        [one] => Some(one.sha256.clone()),
        [] => None,
        many => Some(manifest_sha256(many)),
    };
    facts.suggested_pin = Some(SuggestedPin {
        repository: repository.to_string(),
        revision: commit.to_string(),
        files: files_evidence(files),
        manifest_sha256: (files.len() > 1).then(|| manifest_sha256(files)),
    });
    f.set_evidence(facts);
    f.hint = Some(match sha {
        Some(sha) => {
            format!("pin the weights at the head: `revision` `{commit}`, `sha256` `{sha}`")
        }
        None => format!("pin the weights at the head: `revision` `{commit}`"),
    });
}
