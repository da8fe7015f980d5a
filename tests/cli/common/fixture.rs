//! `FixtureRepo`: a bare repository built commit by commit with git2, so tests
//! can shape history exactly (branches, tags, pull refs, force pushes).

use std::cell::Cell;
use std::path::{Path, PathBuf};

use git2::{Index, IndexEntry, IndexTime, Oid, Repository, Signature, Time};
use tempfile::TempDir;

/// A bare repository in a temporary directory (or in a caller's directory,
/// e.g. the base directory a `GitDaemon` serves).
pub struct FixtureRepo {
    repo: Repository,
    path: PathBuf,
    offset_minutes: Cell<i32>,
    _dir: Option<TempDir>,
}

impl FixtureRepo {
    /// A bare repository `repo.git` in a fresh temporary directory, whose
    /// HEAD names `refs/heads/main`.
    pub fn new() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut repo = Self::create(dir.path(), "repo.git");
        repo._dir = Some(dir);
        repo
    }

    /// A bare repository at `base/name` (e.g. `name = "proj.git"`).
    pub fn create(base: &Path, name: &str) -> Self {
        let path = base.join(name);
        let repo = Repository::init_bare(&path).expect("init bare");
        repo.set_head("refs/heads/main").expect("set HEAD");
        FixtureRepo {
            repo,
            path,
            offset_minutes: Cell::new(0),
            _dir: None,
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// `file://` URL of the repository.
    pub fn file_url(&self) -> String {
        format!("file://{}", self.path.display())
    }

    /// Commit `files` (added or replaced) on `main`; returns the commit.
    pub fn commit<C: AsRef<[u8]>>(&self, files: &[(&str, C)], message: &str, time: i64) -> Oid {
        self.commit_on("main", files, message, time)
    }

    /// Commit `files` on `branch` (created when missing, parent = its tip).
    pub fn commit_on<C: AsRef<[u8]>>(
        &self,
        branch: &str,
        files: &[(&str, C)],
        message: &str,
        time: i64,
    ) -> Oid {
        let parent = self.tip(branch);
        let oid = self.build(parent, files, &[], message, time);
        self.set_ref(&format!("refs/heads/{branch}"), oid);
        oid
    }

    /// Delete `paths` on `main`; returns the commit.
    pub fn delete(&self, paths: &[&str], message: &str, time: i64) -> Oid {
        self.delete_on("main", paths, message, time)
    }

    /// Delete `paths` on `branch`; returns the commit.
    pub fn delete_on(&self, branch: &str, paths: &[&str], message: &str, time: i64) -> Oid {
        let parent = self.tip(branch);
        let none: &[(&str, &[u8])] = &[];
        let oid = self.build(parent, none, paths, message, time);
        self.set_ref(&format!("refs/heads/{branch}"), oid);
        oid
    }

    /// A commit on top of `parent` that no ref points at (yet).
    pub fn commit_detached<C: AsRef<[u8]>>(
        &self,
        parent: Option<Oid>,
        files: &[(&str, C)],
        message: &str,
        time: i64,
    ) -> Oid {
        self.build(parent, files, &[], message, time)
    }

    /// The commit `branch` points at, if it exists.
    pub fn tip(&self, branch: &str) -> Option<Oid> {
        self.repo
            .refname_to_id(&format!("refs/heads/{branch}"))
            .ok()
    }

    /// Create or move `branch` to `target`.
    pub fn branch(&self, name: &str, target: Oid) {
        self.set_ref(&format!("refs/heads/{name}"), target);
    }

    /// Move `branch` to `target` as a force push does: commits only the old
    /// tip reached become unreachable but stay in the object database.
    pub fn reset_branch(&self, name: &str, target: Oid) {
        self.branch(name, target);
    }

    /// An annotated tag; returns the tag object.
    pub fn annotated_tag(&self, name: &str, target: Oid, message: &str) -> Oid {
        let object = self.repo.find_object(target, None).expect("tag target");
        self.repo
            .tag(name, &object, &self.signature(0), message, true)
            .expect("annotated tag")
    }

    /// Point any ref (`refs/pull/1/head`, `refs/merge-requests/7/head`) at
    /// `target`.
    pub fn set_ref(&self, refname: &str, target: Oid) {
        self.repo
            .reference(refname, target, true, "fixture")
            .expect("set ref");
    }

    pub fn delete_ref(&self, refname: &str) {
        if let Ok(mut r) = self.repo.find_reference(refname) {
            r.delete().expect("delete ref");
        }
    }

    /// Make `branch` the default branch (what HEAD names).
    pub fn set_default_branch(&self, branch: &str) {
        self.repo
            .set_head(&format!("refs/heads/{branch}"))
            .expect("set HEAD");
    }

    /// UTC offset of the author and committer times of later commits.
    pub fn set_offset_minutes(&self, minutes: i32) {
        self.offset_minutes.set(minutes);
    }

    fn build<C: AsRef<[u8]>>(
        &self,
        parent: Option<Oid>,
        files: &[(&str, C)],
        removed: &[&str],
        message: &str,
        time: i64,
    ) -> Oid {
        let mut index = Index::new().expect("in-memory index");
        let parent = parent.map(|p| self.repo.find_commit(p).expect("parent commit"));
        if let Some(p) = &parent {
            index
                .read_tree(&p.tree().expect("parent tree"))
                .expect("read tree");
        }
        for (path, content) in files {
            let bytes = content.as_ref();
            let id = self.repo.blob(bytes).expect("write blob");
            index
                .add(&IndexEntry {
                    ctime: IndexTime::new(0, 0),
                    mtime: IndexTime::new(0, 0),
                    dev: 0,
                    ino: 0,
                    mode: 0o100644,
                    uid: 0,
                    gid: 0,
                    file_size: u32::try_from(bytes.len()).unwrap_or(u32::MAX),
                    id,
                    flags: 0,
                    flags_extended: 0,
                    path: path.as_bytes().to_vec(),
                })
                .expect("index add");
        }
        for path in removed {
            index.remove_path(Path::new(path)).expect("index remove");
        }
        let tree_id = index.write_tree_to(&self.repo).expect("write tree");
        let tree = self.repo.find_tree(tree_id).expect("tree");
        let sig = self.signature(time);
        let parents: Vec<&git2::Commit<'_>> = parent.iter().collect();
        self.repo
            .commit(None, &sig, &sig, message, &tree, &parents)
            .expect("commit")
    }

    fn signature(&self, time: i64) -> Signature<'static> {
        let when = Time::new(time, self.offset_minutes.get());
        Signature::new("Fixture", "fixture@example.invalid", &when).expect("signature")
    }
}

impl Default for FixtureRepo {
    fn default() -> Self {
        Self::new()
    }
}
