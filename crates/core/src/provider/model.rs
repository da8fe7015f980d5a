//! Model weights as a provider sees them: a model repository is just
//! another git remote, and its weight files are read by their Git LFS pointers at
//! a revision, never downloaded.

use super::Skip;
use crate::record::url::{self, Forge};
use crate::record::{Artifact, ArtifactKind, Revision};

/// The weights of one artifact: which repository, which revision, which files.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ModelRef {
    /// The clone URL before `--rewrite` (also the cache key).
    pub remote: String,
    /// The revision the record names; `None`: the head of the default branch.
    pub revision: Option<Revision>,
    /// Paths or globs naming the weight files; empty: every Git LFS file.
    pub files: Vec<String>,
}

/// One weight file at a revision.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct WeightFile {
    pub path: String,
    /// sha256 of the file: the pointer's oid, or the blob's own hash.
    pub sha256: String,
    /// Size in bytes: the pointer's size, or the blob's.
    pub size: u64,
    /// Whether git holds a Git LFS pointer for it (else the file itself).
    pub lfs: bool,
}

/// What a revision of a model repository holds of an artifact's weights.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelFacts {
    /// The remote answered that the repository does not exist.
    RepositoryMissing { described: String },
    /// The revision is not in the repository (a commit) or names nothing (a name).
    RevisionMissing,
    Present {
        /// The commit read.
        commit: String,
        /// The matching files, in path order.
        files: Vec<WeightFile>,
        /// Files the artifact lists (paths and globs) that match nothing there.
        missing: Vec<String>,
    },
}

/// The model repository an artifact names, if it names one it can be read from.
/// `None` for runtimes and for weights without a repository.
pub fn resolve(a: &Artifact, allow_local: bool) -> Option<Result<ModelRef, Skip>> {
    if a.kind != ArtifactKind::Weights {
        return None;
    }
    let written = a.repository.as_deref()?;
    let Some(parsed) = url::parse_repository(written) else {
        return Some(Err(Skip::UnknownModelRepository {
            written: written.to_string(),
        }));
    };
    if parsed.forge == Forge::Local && !allow_local {
        return Some(Err(Skip::LocalRefused));
    }
    // The record's own revision wins over one in the URL; a `/blob/REV/FILE` or
    // `/resolve/REV/FILE` URL names a file when the record lists none.
    let revision = a
        .revision
        .as_deref()
        .map(Revision::parse)
        .or_else(|| parsed.revision.clone());
    let files = if a.files.is_empty() {
        parsed.path.clone().into_iter().collect()
    } else {
        a.files.clone()
    };
    Some(Ok(ModelRef {
        remote: parsed.clone_url(),
        revision,
        files,
    }))
}

/// The files of `tree` (path, size) that `files` selects: a path or glob each
/// (`*` within a directory, `**` across); `is_pointer` decides for an empty list.
/// Returns the selected paths and the entries of `files` that selected nothing.
pub fn select<'t>(
    files: &[String],
    tree: &'t [String],
    mut is_pointer: impl FnMut(&str) -> bool,
) -> (Vec<&'t str>, Vec<String>) {
    if files.is_empty() {
        let picked = tree
            .iter()
            .map(String::as_str)
            .filter(|p| is_pointer(p))
            .collect();
        return (picked, Vec::new());
    }
    let mut picked: Vec<&str> = Vec::new();
    let mut missing = Vec::new();
    for pattern in files {
        let pattern = pattern.trim_start_matches('/');
        let matcher = globset::GlobBuilder::new(pattern)
            .literal_separator(true)
            .build()
            .map(|g| g.compile_matcher());
        let hits: Vec<&str> = tree
            .iter()
            .map(String::as_str)
            .filter(|p| match &matcher {
                Ok(m) => m.is_match(p),
                Err(_) => *p == pattern,
            })
            .collect();
        if hits.is_empty() {
            missing.push(pattern.to_string());
        }
        for h in hits {
            if !picked.contains(&h) {
                picked.push(h);
            }
        }
    }
    picked.sort_unstable();
    (picked, missing)
}

/// The manifest hash of a multi-file set: sha256 of the `sha256sum` listing of
/// its files (`<sha256>  <path>\n`, in path order), so a set can be pinned by
/// one digest that `sha256sum` output reproduces.
pub(crate) fn manifest_sha256(files: &[WeightFile]) -> String {
    let mut sorted: Vec<&WeightFile> = files.iter().collect();
    sorted.sort_by(|a, b| a.path.cmp(&b.path));
    let listing: String = sorted
        .iter()
        .map(|f| format!("{}  {}\n", f.sha256, f.path))
        .collect();
    crate::hash::sha256_hex(listing.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn weights(repo: &str, rev: Option<&str>, files: &[&str]) -> Artifact {
        Artifact {
            kind: ArtifactKind::Weights,
            label: "w".into(),
            revision: rev.map(Into::into),
            sha256: None,
            digest: None,
            repository: Some(repo.into()),
            files: files.iter().map(|s| s.to_string()).collect(),
            at: Default::default(),
        }
    }

    const SHA: &str = "de1fa14ea798512f54dafc8b8795eb3ef1a6c367";

    #[test]
    fn hugging_face_urls() {
        let m = resolve(&weights("https://huggingface.co/org/m", None, &[]), false)
            .unwrap()
            .unwrap();
        assert_eq!(m.remote, "https://huggingface.co/org/m");
        assert_eq!(m.revision, None);
        let m = resolve(
            &weights(
                &format!("https://huggingface.co/org/m/tree/{SHA}"),
                None,
                &[],
            ),
            false,
        )
        .unwrap()
        .unwrap();
        assert_eq!(m.revision, Some(Revision::parse(SHA)));
        for view in ["blob", "resolve"] {
            let url = format!("https://huggingface.co/org/m/{view}/{SHA}/q/m-00001.gguf");
            let m = resolve(&weights(&url, None, &[]), false).unwrap().unwrap();
            assert_eq!(m.files, ["q/m-00001.gguf"]);
            assert_eq!(m.revision, Some(Revision::parse(SHA)));
        }
        // The record's own revision and file list win.
        let url = format!("https://huggingface.co/org/m/blob/{SHA}/a.gguf");
        let m = resolve(&weights(&url, Some("main"), &["*.gguf"]), false)
            .unwrap()
            .unwrap();
        assert_eq!(m.revision, Some(Revision::Ref("main".into())));
        assert_eq!(m.files, ["*.gguf"]);
    }

    #[test]
    fn forge_and_refused_urls() {
        let m = resolve(&weights("https://github.com/o/r", None, &[]), false)
            .unwrap()
            .unwrap();
        assert_eq!(m.remote, "https://github.com/o/r.git");
        assert!(resolve(&weights("file:///tmp/m", None, &[]), false)
            .unwrap()
            .is_err());
        assert!(resolve(&weights("not a url", None, &[]), false)
            .unwrap()
            .is_err());
        let mut runtime = weights("https://github.com/o/r", None, &[]);
        runtime.kind = ArtifactKind::Runtime;
        assert!(resolve(&runtime, false).is_none());
    }

    #[test]
    fn selects_by_path_and_glob() {
        let tree: Vec<String> = ["README.md", "a/x.gguf", "m-1.gguf", "m-2.gguf"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let (picked, missing) = select(&["*.gguf".into(), "m-3.gguf".into()], &tree, |_| false);
        assert_eq!(picked, ["m-1.gguf", "m-2.gguf"]);
        assert_eq!(missing, ["m-3.gguf"]);
        let (picked, _) = select(&["**/*.gguf".into()], &tree, |_| false);
        assert_eq!(picked, ["a/x.gguf", "m-1.gguf", "m-2.gguf"]);
        let (picked, missing) = select(&[], &tree, |p| p.ends_with(".gguf"));
        assert_eq!(picked.len(), 3);
        assert!(missing.is_empty());
    }
}
