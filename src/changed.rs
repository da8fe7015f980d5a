//! `audit --changed-since REF`: the files a pull request touches, so that its
//! check audits and annotates only the records it changes instead of the whole
//! corpus.
//!
//! "Changed since REF" is what `git diff REF...` shows plus the work tree: the
//! difference between the merge base of REF and `HEAD` and the files as they
//! stand now (staged, unstaged and untracked alike), so commits made on REF's
//! branch after the change forked off don't count. Deleted files are left out:
//! there is no record in them to audit.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// Why the changed files could not be listed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ChangedError {
    #[error("`--changed-since`: no git work tree here: {0}")]
    NoRepository(String),
    #[error("`--changed-since`: cannot resolve `{rev}` to a commit: {message}")]
    UnknownRevision { rev: String, message: String },
    #[error("`--changed-since`: cannot compare with `{rev}`: {message}")]
    Diff { rev: String, message: String },
}

impl ChangedError {
    pub(crate) fn hint(&self) -> &'static str {
        match self {
            ChangedError::NoRepository(_) => "run pinaudit inside the checkout of the records",
            ChangedError::UnknownRevision { .. } => {
                "fetch the base first (`git fetch origin main`); a shallow checkout needs `fetch-depth: 0`"
            }
            ChangedError::Diff { .. } => "check that the checkout is readable",
        }
    }
}

/// Every file of the work tree around `dir` that differs from the merge base of
/// `rev` and `HEAD`, canonicalised.
pub(crate) fn files_changed_since(rev: &str, dir: &Path) -> Result<HashSet<PathBuf>, ChangedError> {
    let repo = git2::Repository::discover(dir)
        .map_err(|e| ChangedError::NoRepository(e.message().to_string()))?;
    let workdir = repo
        .workdir()
        .ok_or_else(|| ChangedError::NoRepository("the repository is bare".into()))?
        .to_path_buf();
    let unknown = |e: git2::Error| ChangedError::UnknownRevision {
        rev: rev.to_string(),
        message: e.message().to_string(),
    };
    let diff_err = |e: git2::Error| ChangedError::Diff {
        rev: rev.to_string(),
        message: e.message().to_string(),
    };
    let base = repo
        .revparse_single(rev)
        .and_then(|o| o.peel_to_commit())
        .map_err(unknown)?;
    // On an unborn branch there is no HEAD to fork from: compare with REF itself.
    let base = match repo.head().and_then(|h| h.peel_to_commit()) {
        Ok(head) => match repo.merge_base(base.id(), head.id()) {
            Ok(id) => repo.find_commit(id).map_err(diff_err)?,
            Err(_) => base,
        },
        Err(_) => base,
    };
    let tree = base.tree().map_err(diff_err)?;
    let mut opts = git2::DiffOptions::new();
    opts.include_untracked(true).recurse_untracked_dirs(true);
    let diff = repo
        .diff_tree_to_workdir_with_index(Some(&tree), Some(&mut opts))
        .map_err(diff_err)?;
    let mut changed = HashSet::new();
    for delta in diff.deltas() {
        if delta.status() == git2::Delta::Deleted {
            continue;
        }
        if let Some(p) = delta.new_file().path() {
            let full = workdir.join(p);
            changed.insert(std::fs::canonicalize(&full).unwrap_or(full));
        }
    }
    Ok(changed)
}
