//! The damage check, skipped when a mirror has not changed since it was last
//! found whole.
//!
//! Reading back every cited commit, tree and blob and walking every branch and
//! tag costs as much as the audit itself on a re-check. A mirror's objects and
//! refs live in a few files (`objects/pack/*`, loose objects, `packed-refs`,
//! `refs/**`, `HEAD`); git and libgit2 replace them by writing a new file and
//! renaming it in. So a digest of their names, sizes, inodes and modification and
//! change times (and the content of the small ref files) says whether the mirror
//! is still the one verified: when it is, and the documents asked for were read
//! back in that state, nothing is read (`CACHE/verified.store`, see
//! [`crate::store::VerifiedMemo`]).
//!
//! The trust model is git's index stat data: a deliberate tamper that restores
//! sizes and times, ctime included, is not seen. A file whose time is within
//! [`RACY`] of the moment it was stamped could still change without its time
//! moving (a coarse file-system clock), so such a state is recorded only when the
//! run ends and the mirror, stamped again, is unchanged and no longer that recent.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use git2::{Oid, Repository};
use sha2::{Digest, Sha256};

use crate::store::{VerifiedDoc, VerifiedMemo};

/// A file changed less than this before it was stamped may change again
/// without its times moving (the coarsest kernel clock tick is 10 ms).
pub(crate) const RACY: Duration = Duration::from_millis(20);

/// Ref files up to this size are stamped by content as well as stat data.
const CONTENT_MAX: u64 = 1 << 20;

/// The state of a mirror's object and ref files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stamp {
    pub(crate) digest: [u8; 32],
    /// Some file (not stamped by content) changed within [`RACY`] of the stamp.
    pub(crate) racy: bool,
}

/// The stamp of the mirror at `dir`; `None` when a file can't be listed or
/// read (the caller then verifies the mirror).
pub(crate) fn stamp(dir: &Path) -> Option<Stamp> {
    let now = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .ok()?
        .as_nanos();
    let racy_after = now.saturating_sub(RACY.as_nanos());
    let mut h = Sha256::new();
    let mut racy = false;
    let mut add = |rel: &Path, by_content: bool| -> Option<()> {
        let path = dir.join(rel);
        let meta = match fs::symlink_metadata(&path) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                h.update(b"absent\0");
                h.update(rel.as_os_str().as_encoded_bytes());
                h.update(b"\0");
                return Some(());
            }
            Err(_) => return None,
        };
        let (mtime, ctime, ino, mode) = stat_of(&meta);
        h.update(rel.as_os_str().as_encoded_bytes());
        h.update(b"\0");
        for n in [meta.len() as u128, mtime, ctime, ino as u128, mode as u128] {
            h.update(n.to_le_bytes());
        }
        let content = by_content && meta.is_file() && meta.len() <= CONTENT_MAX;
        if content {
            h.update(Sha256::digest(fs::read(&path).ok()?));
        } else if mtime >= racy_after || ctime >= racy_after {
            racy = true;
        }
        Some(())
    };
    add(Path::new("HEAD"), true)?;
    add(Path::new("packed-refs"), true)?;
    for (top, by_content) in [("refs", true), ("objects", false)] {
        for entry in walkdir::WalkDir::new(dir.join(top))
            .follow_links(false)
            .sort_by_file_name()
        {
            let entry = entry.ok()?;
            if entry.file_type().is_dir() {
                continue;
            }
            let rel = entry.path().strip_prefix(dir).ok()?;
            add(rel, by_content)?;
        }
    }
    Some(Stamp {
        digest: h.finalize().into(),
        racy,
    })
}

#[cfg(unix)]
fn stat_of(meta: &fs::Metadata) -> (u128, u128, u64, u32) {
    use std::os::unix::fs::MetadataExt;
    let ns = |s: i64, n: i64| (s as i128 * 1_000_000_000 + n as i128).max(0) as u128;
    (
        ns(meta.mtime(), meta.mtime_nsec()),
        ns(meta.ctime(), meta.ctime_nsec()),
        meta.ino(),
        meta.mode(),
    )
}

#[cfg(not(unix))]
fn stat_of(meta: &fs::Metadata) -> (u128, u128, u64, u32) {
    let ns = |t: std::io::Result<SystemTime>| {
        t.ok()
            .and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos())
    };
    // No change time here: the creation time stands in.
    (ns(meta.modified()), ns(meta.created()), 0, 0)
}

/// The verified-mirror memo of a cache, and the mirrors verified this run whose
/// stamp was too recent to record yet.
#[derive(Debug)]
pub(crate) struct Verifier {
    memo: VerifiedMemo,
    pending: Mutex<Vec<Pending>>,
}

#[derive(Debug)]
struct Pending {
    key: String,
    dir: PathBuf,
    digest: [u8; 32],
    docs: Vec<VerifiedDoc>,
}

fn docs_of(docs: &[(Oid, Option<String>)]) -> Vec<VerifiedDoc> {
    docs.iter()
        .filter_map(|(oid, path)| Some((oid.as_bytes().try_into().ok()?, path.clone())))
        .collect()
}

fn from_docs(docs: &[VerifiedDoc]) -> Vec<(Oid, Option<String>)> {
    docs.iter()
        .filter_map(|(id, path)| Some((Oid::from_bytes(id).ok()?, path.clone())))
        .collect()
}

impl Verifier {
    pub(crate) fn new(cache_root: &Path, key: crate::cache_key::CacheKey) -> Verifier {
        Verifier {
            memo: VerifiedMemo::new(cache_root, key),
            pending: Mutex::default(),
        }
    }

    /// Why the mirror `repo` (at `dir`, known as `key` in the memo) is damaged,
    /// if it is, as `damage` says (`refs_and_docs(repo, docs)`, or only the
    /// documents with `docs_only`); not asked when the mirror is unchanged
    /// since it was found whole with these documents.
    pub(crate) fn damage(
        &self,
        key: &str,
        dir: &Path,
        repo: &Repository,
        docs: &[(Oid, Option<String>)],
        check: impl Fn(&Repository, &[(Oid, Option<String>)], bool) -> Option<String>,
    ) -> Option<String> {
        let wanted = docs_of(docs);
        let before = stamp(dir);
        if let Some(before) = before {
            if let Some(missing) = self.memo.missing(key, &before.digest, &wanted) {
                if missing.is_empty() {
                    return None;
                }
                // Refs and history were verified in this very state.
                if let Some(reason) = check(repo, &from_docs(&missing), true) {
                    self.memo.forget(key);
                    return Some(reason);
                }
                self.memo.record(key, before.digest, &missing);
                return None;
            }
        }
        if let Some(reason) = check(repo, docs, false) {
            self.memo.forget(key);
            return Some(reason);
        }
        // Recorded only when nothing changed while it was read back.
        let (Some(before), Some(after)) = (before, stamp(dir)) else {
            return None;
        };
        if before.digest != after.digest {
            return None;
        }
        if after.racy {
            let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
            pending.retain(|p| p.key != key);
            pending.push(Pending {
                key: key.to_string(),
                dir: dir.to_path_buf(),
                digest: after.digest,
                docs: wanted,
            });
        } else {
            self.memo.record(key, after.digest, &wanted);
        }
        None
    }

    /// Forgets the mirror `key` (it is being replaced).
    pub(crate) fn forget(&self, key: &str) {
        self.memo.forget(key);
        let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        pending.retain(|p| p.key != key);
    }

    /// Moves the mirror verified at `from` to `to` (a new mirror's scratch
    /// directory renamed into place keeps its files, so its stamp).
    pub(crate) fn moved(&self, from: &Path, to: &Path) {
        let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        for p in pending.iter_mut().filter(|p| p.dir == from) {
            p.dir = to.to_path_buf();
        }
    }

    /// Records the mirrors whose stamp was too recent when verified, if they
    /// are unchanged and no longer recent, then writes the memo (once per run).
    pub(crate) fn persist(&self) -> std::io::Result<()> {
        let pending = std::mem::take(&mut *self.pending.lock().unwrap_or_else(|e| e.into_inner()));
        for p in pending {
            match stamp(&p.dir) {
                Some(now) if now.digest == p.digest && !now.racy => {
                    self.memo.record(&p.key, now.digest, &p.docs);
                }
                _ => {}
            }
        }
        self.memo.persist()
    }
}

impl Drop for Verifier {
    fn drop(&mut self) {
        let _ = self.persist();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;

    type Docs = [(Oid, Option<String>)];
    type Calls = RefCell<Vec<(Vec<(Oid, Option<String>)>, bool)>>;

    /// A bare repository with one commit of `README` and a fake pack file,
    /// old enough not to be racy.
    fn mirror(dir: &Path) -> (Repository, Oid) {
        let repo = Repository::init_bare(dir).expect("init");
        let blob = repo.blob(b"hello\n").expect("blob");
        let commit = {
            let mut builder = repo.treebuilder(None).expect("treebuilder");
            builder.insert("README", blob, 0o100644).expect("insert");
            let tree = repo
                .find_tree(builder.write().expect("tree"))
                .expect("tree");
            let sig = git2::Signature::now("t", "t@example.com").expect("sig");
            repo.commit(Some("refs/heads/main"), &sig, &sig, "c", &tree, &[])
                .expect("commit")
        };
        fs::create_dir_all(dir.join("objects/pack")).expect("pack dir");
        fs::write(dir.join("objects/pack/pack-1.pack"), b"PACK0123").expect("pack");
        std::thread::sleep(RACY * 2);
        (repo, commit)
    }

    fn check<'a>(calls: &'a Calls) -> impl Fn(&Repository, &Docs, bool) -> Option<String> + 'a {
        move |_, docs, docs_only| {
            calls.borrow_mut().push((docs.to_vec(), docs_only));
            None
        }
    }

    #[test]
    fn an_unchanged_mirror_is_not_read_again_and_any_change_is() {
        let root = tempfile::tempdir().expect("tempdir");
        let dir = root.path().join("git/m.git");
        let (repo, commit) = mirror(&dir);
        let readme = vec![(commit, Some("README".to_string()))];
        let calls = Calls::default();
        let verifier = Verifier::new(root.path(), crate::cache_key::CacheKey::from_secret(b"t"));
        assert_eq!(
            verifier.damage("m", &dir, &repo, &readme, check(&calls)),
            None
        );
        assert_eq!(calls.borrow().len(), 1, "the first check reads");
        verifier.damage("m", &dir, &repo, &readme, check(&calls));
        // The commit alone is covered by a document read there.
        verifier.damage("m", &dir, &repo, &[(commit, None)], check(&calls));
        assert_eq!(calls.borrow().len(), 1, "an unchanged mirror is not read");
        verifier.persist().expect("persist");

        // Another run: the store says the same.
        let verifier = Verifier::new(root.path(), crate::cache_key::CacheKey::from_secret(b"t"));
        verifier.damage("m", &dir, &repo, &readme, check(&calls));
        assert_eq!(calls.borrow().len(), 1, "nor in the next run");
        // A document not yet read back: only it is, not the refs.
        let other = vec![(commit, Some("OTHER".to_string()))];
        let both: Vec<_> = readme.iter().chain(&other).cloned().collect();
        verifier.damage("m", &dir, &repo, &both, check(&calls));
        assert_eq!(calls.borrow().last(), Some(&(other, true)));
        verifier.damage("m", &dir, &repo, &both, check(&calls));
        assert_eq!(calls.borrow().len(), 2);

        // Any change to a pack, a ref or a loose object, even of the same size
        // and content, reads the whole mirror back.
        let loose = walkdir::WalkDir::new(dir.join("objects"))
            .into_iter()
            .flatten()
            .find(|e| e.file_type().is_file() && !e.path().starts_with(dir.join("objects/pack")))
            .expect("a loose object")
            .into_path();
        let pack = dir.join("objects/pack/pack-1.pack");
        let main_ref = dir.join("refs/heads/main");
        let same = |p: &Path| fs::read(p).expect("read");
        let mut flipped = same(&pack);
        flipped[5] ^= 1;
        let edits: Vec<(PathBuf, Vec<u8>)> = vec![
            (pack.clone(), flipped),
            (pack, b"PACK0123".to_vec()),
            (main_ref.clone(), same(&main_ref)),
            (loose.clone(), same(&loose)),
        ];
        for (n, (path, bytes)) in edits.into_iter().enumerate() {
            let before = calls.borrow().len();
            make_writable(&path);
            fs::write(&path, bytes).expect("write");
            std::thread::sleep(RACY * 2);
            verifier.damage("m", &dir, &repo, &readme, check(&calls));
            assert_eq!(calls.borrow().len(), before + 1, "edit {n} of {path:?}");
            assert_eq!(calls.borrow().last(), Some(&(readme.clone(), false)));
            verifier.damage("m", &dir, &repo, &readme, check(&calls));
            assert_eq!(calls.borrow().len(), before + 1, "then verified");
        }
        // A new file (a fetched pack) too.
        fs::write(dir.join("objects/pack/pack-2.pack"), b"PACK").expect("pack");
        std::thread::sleep(RACY * 2);
        verifier.damage("m", &dir, &repo, &readme, check(&calls));
        assert_eq!(calls.borrow().len(), 7);
    }

    #[test]
    fn a_damaged_mirror_or_a_recent_change_is_not_recorded() {
        let root = tempfile::tempdir().expect("tempdir");
        let dir = root.path().join("git/m.git");
        let (repo, commit) = mirror(&dir);
        let docs = vec![(commit, Some("README".to_string()))];
        let verifier = Verifier::new(root.path(), crate::cache_key::CacheKey::from_secret(b"t"));
        let count = std::cell::Cell::new(0);
        let damaged = |_: &Repository, _: &[(Oid, Option<String>)], _: bool| {
            count.set(count.get() + 1);
            Some("has a flipped byte".to_string())
        };
        for _ in 0..2 {
            assert!(verifier.damage("m", &dir, &repo, &docs, damaged).is_some());
        }
        assert_eq!(count.get(), 2, "damage is never remembered as whole");

        // Just written: recorded only when the run ends and it is no longer recent.
        fs::write(dir.join("objects/pack/pack-3.pack"), b"PACK").expect("pack");
        let calls = Calls::default();
        verifier.damage("m", &dir, &repo, &docs, check(&calls));
        verifier.damage("m", &dir, &repo, &docs, check(&calls));
        assert_eq!(calls.borrow().len(), 2, "a racy stamp is not trusted");
        std::thread::sleep(RACY * 2);
        verifier.persist().expect("persist");
        let verifier = Verifier::new(root.path(), crate::cache_key::CacheKey::from_secret(b"t"));
        verifier.damage("m", &dir, &repo, &docs, check(&calls));
        assert_eq!(calls.borrow().len(), 2, "recorded at the end of the run");
    }

    fn make_writable(path: &Path) {
        if let Ok(meta) = fs::metadata(path) {
            let mut perms = meta.permissions();
            #[allow(clippy::permissions_set_readonly_false)]
            perms.set_readonly(false);
            let _ = fs::set_permissions(path, perms);
        }
    }
}
