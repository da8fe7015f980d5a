//! Read-only questions about one cached repository, answered from its object
//! database without a network and without a checkout.
//!
//! Everything the checks ask about a revision goes through here: does the commit
//! exist, when was it committed, can a branch or tag reach it, what bytes does a
//! path hold there, what is the default-branch head, and how did a path change
//! over time. Answers about reachability look only at `refs/heads/*` and
//! `refs/tags/*`: the refs pinaudit keeps for itself (`refs/pinaudit/*`, which
//! hold commits fetched by id or through pull-request refs) must not make an
//! erased or fork-only commit look reachable.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use git2::{ObjectType, Oid, Repository, Sort};

use super::classify::{clean_message, FetchError};

/// Ref that records the remote's default-branch head at the last sync.
pub(crate) const HEAD_REF: &str = "refs/pinaudit/head";
/// Namespace of commits fetched by id.
pub(crate) const PINNED_NS: &str = "refs/pinaudit/pinned/";
/// Namespace of the remote's other refs (pull requests, merge requests).
pub(crate) const OTHER_NS: &str = "refs/pinaudit/other/";

/// A file's content at a revision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Blob {
    /// The git blob id (stable key for memoised facts such as the sha256).
    pub id: Oid,
    /// The stored bytes, exactly as git keeps them.
    pub bytes: Vec<u8>,
}

/// One version of a path: the blob, and the oldest commit (among those
/// reachable from local refs) that carries it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PathVersion {
    /// The commit where this version appears first.
    pub commit: Oid,
    /// The blob the path holds there.
    pub blob: Oid,
    /// That commit's committer time, seconds since the epoch.
    pub(crate) time: i64,
}

/// An opened bare mirror in the cache.
pub struct CachedRepo {
    repo: Repository,
    path: PathBuf,
}

impl std::fmt::Debug for CachedRepo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CachedRepo")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

impl CachedRepo {
    pub(crate) fn new(repo: Repository, path: PathBuf) -> Self {
        CachedRepo { repo, path }
    }

    /// The repository directory inside the cache.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn err(&self, e: &git2::Error) -> FetchError {
        FetchError::Git {
            url: self.path.display().to_string(),
            reason: clean_message(e.message(), &[]),
        }
    }

    /// The repository itself, for the checks of the cache that read it whole.
    pub(crate) fn repo(&self) -> &Repository {
        &self.repo
    }

    /// Whether the object database holds commit `oid`: its header names a
    /// commit. The object is not inflated and parsed (a re-check asks this of
    /// every pinned commit, most of whose verdicts are remembered); whether
    /// what a verdict reads is whole is the cache check's to say
    /// ([`crate::verified`]), and reading it fails loudly when it is not.
    pub fn has_commit(&self, oid: Oid) -> bool {
        self.repo
            .odb()
            .and_then(|odb| odb.read_header(oid))
            .is_ok_and(|(_, kind)| kind == git2::ObjectType::Commit)
    }

    /// Committer time of `oid` as (seconds since the epoch, UTC offset in
    /// minutes); `None` when the commit is not in the cache.
    pub fn commit_time(&self, oid: Oid) -> Option<(i64, i32)> {
        let commit = self.repo.find_commit(oid).ok()?;
        let time = commit.committer().when();
        Some((time.seconds(), time.offset_minutes()))
    }

    /// The committer date (`YYYY-MM-DD`, UTC) and subject line of `oid`, for
    /// listings such as `show --history`.
    pub fn commit_summary(&self, oid: Oid) -> Option<(String, String)> {
        let commit = self.repo.find_commit(oid).ok()?;
        let secs = commit.committer().when().seconds();
        let date = time::OffsetDateTime::from_unix_timestamp(secs)
            .ok()
            .map(|t| t.date().to_string())
            .unwrap_or_default();
        Some((date, commit.summary().unwrap_or("").to_string()))
    }

    /// The author's name of `oid`, for `show --history`.
    pub fn commit_author(&self, oid: Oid) -> Option<String> {
        let commit = self.repo.find_commit(oid).ok()?;
        let author = commit.author();
        author.name().map(str::to_string)
    }

    /// The files `oid` adds or changes against its first parent (every file of
    /// a root commit), in path order: where `show --history` looks for a
    /// figure whose line left its document.
    pub fn changed_files(&self, oid: Oid) -> Result<Vec<String>, FetchError> {
        let commit = self.repo.find_commit(oid).map_err(|e| self.err(&e))?;
        let tree = commit.tree().map_err(|e| self.err(&e))?;
        let parent = commit.parent(0).ok().and_then(|p| p.tree().ok());
        let diff = self
            .repo
            .diff_tree_to_tree(parent.as_ref(), Some(&tree), None)
            .map_err(|e| self.err(&e))?;
        let mut out: Vec<String> = diff
            .deltas()
            .filter(|d| {
                d.new_file().id() != Oid::zero() && d.new_file().mode() != git2::FileMode::Link
            })
            .filter_map(|d| {
                d.new_file()
                    .path()
                    .and_then(|p| p.to_str())
                    .map(str::to_string)
            })
            .collect();
        out.sort();
        out.dedup();
        Ok(out)
    }

    /// Whether some `refs/heads/*` or `refs/tags/*` reaches commit `oid`.
    ///
    /// One walk over the history of all branches and tags; it stops as soon
    /// as the commit is seen.
    pub fn reachable_from_branches_or_tags(&self, oid: Oid) -> Result<bool, FetchError> {
        if !self.has_commit(oid) {
            return Ok(false);
        }
        let mut walk = self.repo.revwalk().map_err(|e| self.err(&e))?;
        // Globs skip refs that do not peel to a commit (a tag of a blob).
        walk.push_glob("refs/heads/*").map_err(|e| self.err(&e))?;
        walk.push_glob("refs/tags/*").map_err(|e| self.err(&e))?;
        for seen in walk {
            if seen.map_err(|e| self.err(&e))? == oid {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Every commit some `refs/heads/*` or `refs/tags/*` reaches: one walk, so a
    /// repository cited by many sources is walked once, not once per source.
    pub(crate) fn reachable_set(&self) -> Result<std::collections::HashSet<Oid>, FetchError> {
        let mut walk = self.repo.revwalk().map_err(|e| self.err(&e))?;
        walk.push_glob("refs/heads/*").map_err(|e| self.err(&e))?;
        walk.push_glob("refs/tags/*").map_err(|e| self.err(&e))?;
        walk.map(|seen| seen.map_err(|e| self.err(&e))).collect()
    }

    /// A digest of every `refs/heads/*` and `refs/tags/*` and what it points at:
    /// what [`Self::reachable_set`] depends on. `None` when the refs cannot be
    /// listed.
    pub(crate) fn ref_tips_digest(&self) -> Option<[u8; 32]> {
        self.tips_digest(&["refs/heads/*", "refs/tags/*"])
    }

    /// A digest of every ref's name and target: what [`Self::path_versions`]
    /// walks from.
    pub(crate) fn all_refs_digest(&self) -> Option<[u8; 32]> {
        self.tips_digest(&["refs/*"])
    }

    fn tips_digest(&self, globs: &[&str]) -> Option<[u8; 32]> {
        use sha2::{Digest, Sha256};
        let mut tips: Vec<(Vec<u8>, Oid)> = Vec::new();
        for &glob in globs {
            for r in self.repo.references_glob(glob).ok()? {
                let r = r.ok()?;
                tips.push((r.name_bytes().to_vec(), r.target()?));
            }
        }
        tips.sort();
        let mut h = Sha256::new();
        for (name, oid) in &tips {
            h.update((name.len() as u64).to_le_bytes());
            h.update(name);
            h.update(oid.as_bytes());
        }
        Some(h.finalize().into())
    }

    /// Every commit `tip`'s history contains, `tip` included (one walk).
    pub(crate) fn ancestors(&self, tip: Oid) -> Result<std::collections::HashSet<Oid>, FetchError> {
        let mut walk = self.repo.revwalk().map_err(|e| self.err(&e))?;
        walk.push(tip).map_err(|e| self.err(&e))?;
        walk.map(|seen| seen.map_err(|e| self.err(&e))).collect()
    }

    /// Whether `tip`'s history contains `oid`.
    pub(crate) fn contains(&self, tip: Oid, oid: Oid) -> bool {
        tip == oid || self.repo.graph_descendant_of(tip, oid).unwrap_or(false)
    }

    /// The blob at `path` in commit `commit`; `None` when the path does not
    /// exist there or is not a file (a directory, a submodule).
    ///
    /// A leading `/` is ignored. The commit must be in the cache.
    pub fn read_blob(&self, commit: Oid, path: &str) -> Result<Option<Blob>, FetchError> {
        let Some(id) = self.blob_id_at(commit, path)? else {
            return Ok(None);
        };
        let blob = self.repo.find_blob(id).map_err(|e| self.err(&e))?;
        Ok(Some(Blob {
            id,
            bytes: blob.content().to_vec(),
        }))
    }

    /// The size of blob `id` in bytes, read from its object header without
    /// inflating it (a small pack can hold a huge, compressible blob).
    pub(crate) fn blob_size(&self, id: Oid) -> Option<u64> {
        let odb = self.repo.odb().ok()?;
        let (size, _) = odb.read_header(id).ok()?;
        u64::try_from(size).ok()
    }

    /// The size of the blob at `path` in `commit`, from its object header (nothing
    /// inflated): what a reader checks against its cap before [`Self::read_blob`].
    pub fn blob_size_at(&self, commit: Oid, path: &str) -> Result<Option<u64>, FetchError> {
        Ok(self
            .blob_id_at(commit, path)?
            .and_then(|id| self.blob_size(id)))
    }

    /// The content of blob `id`, when the object database holds it.
    pub fn blob(&self, id: Oid) -> Option<Vec<u8>> {
        self.repo.find_blob(id).ok().map(|b| b.content().to_vec())
    }

    /// The content of blob `id`; an error when the object database cannot give it.
    pub fn blob_bytes(&self, id: Oid) -> Result<Vec<u8>, FetchError> {
        let blob = self.repo.find_blob(id).map_err(|e| self.err(&e))?;
        Ok(blob.content().to_vec())
    }

    /// The content of blob `id` as a stream whose end checks the blob id (see
    /// [`super::stream`]): memory stays bounded whatever the blob's size. A blob
    /// the object files can't stream (a delta whose base is in no pack, an
    /// object in an alternate) is read whole through libgit2 when it is at most
    /// `max_whole` bytes, else `Ok(None)`. Read errors carry a [`FetchError`] (`CacheDamaged` for an
    /// object that does not inflate or hash to its id).
    pub(crate) fn blob_stream(
        &self,
        id: Oid,
        max_whole: u64,
    ) -> Result<Option<Box<dyn std::io::Read + Send>>, FetchError> {
        let dir = self.repo.path().to_path_buf();
        let opened = super::stream::open_blob(&dir, id).map_err(|e| damaged_or_io(&dir, e))?;
        match opened {
            super::stream::Opened::Stream(inner) => Ok(Some(Box::new(Checked { inner, dir }))),
            super::stream::Opened::Delta | super::stream::Opened::NotFound => {
                if self.blob_size(id).is_some_and(|size| size > max_whole) {
                    return Ok(None);
                }
                let bytes = self.blob_bytes(id)?;
                Ok(Some(Box::new(std::io::Cursor::new(bytes))))
            }
        }
    }

    /// The blob id at `path` in `commit`, or `None` (see [`Self::read_blob`]).
    /// A tree on the way that git would refuse is an error
    /// ([`FetchError::TreeRefused`]): never judged.
    pub(crate) fn blob_id_at(&self, commit: Oid, path: &str) -> Result<Option<Oid>, FetchError> {
        let found = self.repo.find_commit(commit).map_err(|e| self.err(&e))?;
        let tree = found.tree().map_err(|e| self.err(&e))?;
        lookup(&self.repo, &tree, path).map_err(|reason| FetchError::TreeRefused {
            commit: commit.to_string(),
            path: path.to_string(),
            reason,
        })
    }

    /// The remote's default-branch head as recorded at the last sync.
    pub fn head(&self) -> Option<Oid> {
        self.repo.refname_to_id(HEAD_REF).ok()
    }

    /// The commit a branch, tag or abbreviated commit id names in the mirror
    /// now (`pinaudit pin`; a model revision). A full ref
    /// name (`refs/tags/v1`) is taken as written; branches win over tags, as on
    /// forges; an abbreviated id must be unambiguous. Tags are peeled.
    pub fn resolve_name(&self, name: &str) -> Option<Oid> {
        if name == "HEAD" {
            return self.head();
        }
        let full = (name.starts_with("refs/heads/") || name.starts_with("refs/tags/"))
            .then(|| name.to_string());
        let candidates = [format!("refs/heads/{name}"), format!("refs/tags/{name}")];
        for r in full.iter().chain(&candidates) {
            if let Ok(c) = self.repo.find_reference(r).and_then(|r| r.peel_to_commit()) {
                return Some(c.id());
            }
        }
        let hex =
            name.len() >= 4 && name.len() <= 64 && name.bytes().all(|b| b.is_ascii_hexdigit());
        if !hex {
            return None;
        }
        let obj = self.repo.revparse_single(name).ok()?;
        obj.peel_to_commit().ok().map(|c| c.id())
    }

    /// The remote's default branch (`refs/heads/main`) as recorded at the
    /// last sync, when the remote advertised one.
    pub(crate) fn default_branch(&self) -> Option<String> {
        self.head()?;
        let head = self.repo.find_reference("HEAD").ok()?;
        head.symbolic_target().map(str::to_string)
    }

    /// Commits after `from` up to and including `to` whose version of `path`
    /// differs from their first parent's (added, changed or deleted), oldest
    /// first. Commits reachable from `from` are excluded.
    pub fn path_history(&self, path: &str, from: Oid, to: Oid) -> Result<Vec<Oid>, FetchError> {
        let mut walk = self.repo.revwalk().map_err(|e| self.err(&e))?;
        walk.set_sorting(Sort::TOPOLOGICAL | Sort::REVERSE)
            .map_err(|e| self.err(&e))?;
        walk.push(to).map_err(|e| self.err(&e))?;
        walk.hide(from).map_err(|e| self.err(&e))?;
        let mut changed = Vec::new();
        for oid in walk {
            let oid = oid.map_err(|e| self.err(&e))?;
            let commit = self.repo.find_commit(oid).map_err(|e| self.err(&e))?;
            let here = commit
                .tree()
                .ok()
                .and_then(|t| blob_in_tree(&self.repo, &t, path));
            let before = commit
                .parent(0)
                .ok()
                .and_then(|p| p.tree().ok())
                .and_then(|t| blob_in_tree(&self.repo, &t, path));
            if here != before {
                changed.push(oid);
            }
        }
        Ok(changed)
    }

    /// Every distinct version of `path` among the commits reachable from any
    /// local ref (branches, tags and pinaudit's own refs), newest first.
    ///
    /// Used to tell whether a recorded hash belongs to the document at some
    /// other commit. Each version names the oldest commit that carries it,
    /// i.e. where it appeared.
    pub fn path_versions(&self, path: &str) -> Result<Vec<PathVersion>, FetchError> {
        let mut walk = self.repo.revwalk().map_err(|e| self.err(&e))?;
        walk.set_sorting(Sort::TIME).map_err(|e| self.err(&e))?;
        walk.push_glob("*").map_err(|e| self.err(&e))?;
        let mut order: Vec<Oid> = Vec::new();
        let mut oldest: HashMap<Oid, (Oid, i64)> = HashMap::new();
        for oid in walk {
            let oid = oid.map_err(|e| self.err(&e))?;
            let commit = self.repo.find_commit(oid).map_err(|e| self.err(&e))?;
            let Some(blob) = commit
                .tree()
                .ok()
                .and_then(|t| blob_in_tree(&self.repo, &t, path))
            else {
                continue;
            };
            let time = commit.committer().when().seconds();
            if oldest.insert(blob, (oid, time)).is_none() {
                order.push(blob);
            }
        }
        let mut versions: Vec<PathVersion> = order
            .into_iter()
            .filter_map(|blob| {
                oldest
                    .get(&blob)
                    .map(|&(commit, time)| PathVersion { commit, blob, time })
            })
            .collect();
        // Newest first by the commit where each version appeared; the walk
        // order breaks ties, which keeps the result deterministic.
        versions.sort_by_key(|v| std::cmp::Reverse(v.time));
        Ok(versions)
    }

    /// Every file of `commit`'s tree (recursively) with its blob id and size, in
    /// path order; submodules and symlinks are left out. Sizes come from object
    /// headers, so large blobs are not read.
    pub(crate) fn files_at(&self, commit: Oid) -> Result<Vec<(String, Oid, u64)>, FetchError> {
        let commit = self.repo.find_commit(commit).map_err(|e| self.err(&e))?;
        let tree = commit.tree().map_err(|e| self.err(&e))?;
        let odb = self.repo.odb().map_err(|e| self.err(&e))?;
        let mut out = Vec::new();
        tree.walk(git2::TreeWalkMode::PreOrder, |dir, entry| {
            let file = entry.kind() == Some(ObjectType::Blob) && entry.filemode() != 0o120000;
            if let (true, Some(name)) = (file, entry.name()) {
                let size = odb.read_header(entry.id()).map_or(0, |(n, _)| n as u64);
                out.push((format!("{dir}{name}"), entry.id(), size));
            }
            git2::TreeWalkResult::Ok
        })
        .map_err(|e| self.err(&e))?;
        out.sort();
        Ok(out)
    }
}

/// The blob id at `path` in `tree`, if `path` names a file there and every
/// tree on the way is one git accepts (else `None`: see [`lookup`]).
fn blob_in_tree(repo: &Repository, tree: &git2::Tree<'_>, path: &str) -> Option<Oid> {
    lookup(repo, tree, path).ok().flatten()
}

/// The blob id at `path` in `tree`, `Ok(None)` when `path` names no file
/// there; `Err` with git fsck's words when a tree on the way is one git
/// refuses (see [`tree_refused`]). Entries are matched by exact name, one
/// component at a time, and only in trees found valid, so what is read is
/// what `git show COMMIT:PATH` reads.
fn lookup<'r>(
    repo: &'r Repository,
    tree: &git2::Tree<'r>,
    path: &str,
) -> Result<Option<Oid>, String> {
    let path = path.trim_start_matches('/');
    if path.is_empty() {
        return Ok(None);
    }
    let parts: Vec<&str> = path.split('/').collect();
    let mut here: git2::Tree<'r> = tree.clone();
    let mut dir = String::new();
    for (i, part) in parts.iter().enumerate() {
        if let Some(why) = tree_refused(&here) {
            let shown = if dir.is_empty() {
                "the root tree"
            } else {
                &dir
            };
            return Err(format!("{why}, in {shown}"));
        }
        if part.is_empty() {
            return Ok(None);
        }
        let Some((kind, id)) = here
            .iter()
            .find(|e| e.name_bytes() == part.as_bytes())
            .map(|e| (e.kind(), e.id()))
        else {
            return Ok(None);
        };
        if i + 1 == parts.len() {
            return Ok((kind == Some(ObjectType::Blob)).then_some(id));
        }
        if kind != Some(ObjectType::Tree) {
            return Ok(None);
        }
        let next = repo
            .find_tree(id)
            .map_err(|e| format!("tree `{id}` can't be read: {}", e.message()))?;
        dir.push_str(part);
        dir.push('/');
        here = next;
    }
    Ok(None)
}

/// Why git would refuse `tree` (`git fsck`'s message ids), or `None`: an
/// entry named twice (`duplicateEntries`, a file and a directory of one name
/// included), entries out of git's order (`treeNotSorted`: names compared as
/// bytes, a directory's as if it ended in `/`), an empty name, a name holding
/// `/`, `.`, `..` or `.git` (any case), or a mode git does not write. libgit2
/// finds an entry by binary search and git by its own scan, so in such a
/// tree they can read different files: neither is judged.
fn tree_refused(tree: &git2::Tree<'_>) -> Option<String> {
    // Every lookup of a path checks the trees on it: names are borrowed from
    // the entries, nothing is copied per entry.
    let entries: Vec<git2::TreeEntry<'_>> = tree.iter().collect();
    let mut names = std::collections::HashSet::with_capacity(entries.len());
    let mut before: Option<(&[u8], bool)> = None;
    for entry in &entries {
        let name = entry.name_bytes();
        let shown = || String::from_utf8_lossy(name);
        if name.is_empty() {
            return Some("an entry has an empty name (git fsck: emptyName)".into());
        }
        if name.contains(&b'/') {
            return Some(format!(
                "entry `{}` holds a `/` (git fsck: fullPathname)",
                shown()
            ));
        }
        if name == b"." || name == b".." || name.eq_ignore_ascii_case(b".git") {
            return Some(format!(
                "an entry is named `{}` (git fsck: hasDot, hasDotdot or hasDotgit)",
                shown()
            ));
        }
        let mode = entry.filemode_raw();
        if ![0o100644, 0o100755, 0o100664, 0o120000, 0o040000, 0o160000].contains(&mode) {
            return Some(format!(
                "entry `{}` has mode {mode:o} (git fsck: badFilemode)",
                shown()
            ));
        }
        if !names.insert(name) {
            return Some(format!(
                "`{}` is listed twice (git fsck: duplicateEntries)",
                shown()
            ));
        }
        let is_dir = mode == 0o040000;
        if let Some((prev, prev_dir)) = before {
            if git_order(prev, prev_dir, name, is_dir) == std::cmp::Ordering::Greater {
                return Some(format!(
                    "entry `{}` comes after `{}` (git fsck: treeNotSorted)",
                    shown(),
                    String::from_utf8_lossy(prev)
                ));
            }
        }
        before = Some((name, is_dir));
    }
    None
}

/// git's order of tree entries: names as bytes, a directory's as if it ended
/// in `/`.
fn git_order(a: &[u8], a_dir: bool, b: &[u8], b_dir: bool) -> std::cmp::Ordering {
    let slash = |dir: bool| dir.then_some(b'/');
    a.iter()
        .copied()
        .chain(slash(a_dir))
        .cmp(b.iter().copied().chain(slash(b_dir)))
}

/// A streamed blob whose read errors say what failed as a [`FetchError`].
struct Checked {
    inner: super::stream::BlobReader,
    dir: PathBuf,
}

impl std::io::Read for Checked {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.inner.read(buf).map_err(|e| {
            let kind = e.kind();
            std::io::Error::new(kind, damaged_or_io(&self.dir, e))
        })
    }
}

/// An object file that can't be read as git wrote it is damage; anything else
/// (permissions, a vanished file) an I/O failure.
fn damaged_or_io(dir: &Path, e: std::io::Error) -> FetchError {
    if matches!(
        e.kind(),
        std::io::ErrorKind::InvalidData | std::io::ErrorKind::UnexpectedEof
    ) {
        FetchError::CacheDamaged {
            path: dir.to_path_buf(),
            reason: format!("has an object that can't be read back: {e}"),
        }
    } else {
        FetchError::Io {
            path: dir.to_path_buf(),
            source: e,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cmp::Ordering::{Greater, Less};

    /// git sorts a directory as if its name ended in `/`: `foo.bar` (a file)
    /// comes before the directory `foo`, and after the file `foo`.
    #[test]
    fn git_orders_a_directory_as_if_it_ended_in_a_slash() {
        assert_eq!(git_order(b"foo.bar", false, b"foo", true), Less);
        assert_eq!(git_order(b"foo", false, b"foo.bar", false), Less);
        assert_eq!(git_order(b"foo", true, b"foo0", false), Less);
        assert_eq!(git_order(b"foo", true, b"foo-", false), Greater);
        assert_eq!(git_order(b"README.md", false, b"notes.md", false), Less);
    }

    /// Trees libgit2 writes are ones git accepts; a file and a directory of
    /// one name are a duplicate wherever they stand.
    #[test]
    fn trees_written_by_libgit2_pass_and_a_file_beside_its_namesake_directory_does_not() {
        let dir = tempfile::tempdir().expect("tempdir");
        let repo = Repository::init_bare(dir.path()).expect("init");
        let blob = repo.blob(b"x\n").expect("blob");
        let mut inner = repo.treebuilder(None).expect("builder");
        inner.insert("a", blob, 0o100644).expect("insert");
        let inner = inner.write().expect("tree");
        let mut outer = repo.treebuilder(None).expect("builder");
        for name in ["foo", "foo.bar", "foo-"] {
            outer.insert(name, blob, 0o100644).expect("insert");
        }
        outer.insert("foo0", inner, 0o040000).expect("insert");
        let good = repo.find_tree(outer.write().expect("tree")).expect("tree");
        assert_eq!(tree_refused(&good), None);
        assert_eq!(lookup(&repo, &good, "foo0/a"), Ok(Some(blob)));

        let mut raw = Vec::new();
        for (mode, name, id) in [("100644", "foo", blob), ("40000", "foo", inner)] {
            raw.extend_from_slice(format!("{mode} {name}\0").as_bytes());
            raw.extend_from_slice(id.as_bytes());
        }
        let odb = repo.odb().expect("odb");
        let twice = repo
            .find_tree(odb.write(ObjectType::Tree, &raw).expect("write"))
            .expect("tree");
        let why = tree_refused(&twice).expect("refused");
        assert!(why.contains("duplicateEntries"), "{why}");
        assert!(lookup(&repo, &twice, "foo/a").is_err());
    }
}
