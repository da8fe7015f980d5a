//! The git cache: one bare mirror per remote, filled with libgit2.
//!
//! A record pins a commit; to judge it we need that commit's objects *and* enough
//! of the remote's refs to say whether a branch or tag still reaches it. So a
//! sync mirrors all branches and tags (full history, pruned so a force-pushed
//! commit stops being reachable), then asks for each still-missing pinned commit
//! by id, and, when the server refuses ids, through other advertised refs such as
//! `refs/pull/*/head` (that is where fork-network commits live).
//!
//! A warm re-check must be cheap: the remote's refs are listed once, and when
//! every branch and tag already matches the mirror and every pinned commit is
//! present nothing is fetched. Concurrent pinaudit runs on one cache take an
//! advisory lock per repository, and a new mirror is initialised and first
//! filled beside its final place, then renamed in, so a crash can't leave a
//! half-made repository that later opens as if it were whole.
//!
//! What libgit2 (1.9, protocol v0/v1 only) does with each kind of server,
//! as the tests in `tests/fetch.rs` pin down:
//!
//! - Fetching by id needs the server to advertise `allow-tip-sha1-in-want` or
//!   `allow-reachable-sha1-in-want` (large hosts such as GitHub do). A stock
//!   `git daemon` or `git http-backend` advertises neither, and libgit2 then
//!   fails before asking: "cannot fetch a specific object from the remote
//!   repository" (libgit2/libgit2#7078). Only then are other refs fetched
//!   wholesale; a later libgit2 that drops this check (libgit2/libgit2#7123)
//!   would turn it into the refusal below.
//! - A server that does allow ids but refuses one (not reachable, or not
//!   there at all) just closes the connection: libgit2 reports "Broken pipe"
//!   over `git://` and "could not read from remote repository" over HTTP.
//!   That looks like a network failure, so the sync asks the remote for its
//!   refs again: if it answers, the id was refused.
//! - The `file://` transport sends every object its refs reach, whatever the
//!   refspecs, and ignores wants by id for anything else.
//! - libgit2 writes to sockets that the peer may have closed; the process
//!   must keep Rust's default of ignoring `SIGPIPE`.

use std::cell::Cell;
use std::collections::{BTreeMap, BTreeSet};
use std::fs::{self, File, OpenOptions};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use git2::{
    AutotagOption, Cred, CredentialType, Direction, FetchOptions, FetchPrune, Oid, RemoteCallbacks,
    Repository,
};

use super::bounded::Budget;
use super::classify::{classify, clean_message, local_io_kind, AuthOutcome, FetchError};
use super::hash::BlobHashCache;
use super::repo::{CachedRepo, HEAD_REF, OTHER_NS, PINNED_NS};
use super::transport::register as register_git_transport;
use super::url::{cache_relpath, redact, LOCK_SUFFIX};
use crate::NetworkCause;

/// Refspecs of the mirror: every branch and tag, forced, under the same name.
const MIRROR_SPECS: [&str; 2] = ["+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*"];

/// The message libgit2 gives when the server does not allow wants by id.
const NO_WANT_BY_ID: &str = "cannot fetch a specific object";

use super::options::SyncOptions;
pub use pinaudit_core::provider::FoundBy;

/// The outcome for one wanted commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WantedStatus {
    /// The commit id.
    pub oid: Oid,
    /// `None` when the commit is still not in the cache.
    pub found: Option<FoundBy>,
    /// Why fetching it by id failed, when that was tried and failed
    /// (e.g. "remote error: upload-pack: not our ref …").
    pub by_id_error: Option<String>,
}

/// What a sync did and what the cache now holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyncReport {
    /// The mirror's directory.
    pub path: PathBuf,
    /// Nothing was asked of the network (`SyncOptions::offline`).
    pub offline: bool,
    /// At least one fetch was attempted: false on a warm re-check whose
    /// refs had not moved and whose wanted commits were all present.
    pub fetched: bool,
    /// How many fetch operations were run (mirror, by id, other refs).
    pub fetches: usize,
    /// Objects received over all fetches.
    pub received_objects: usize,
    /// The remote's default-branch head, as now recorded.
    pub head: Option<Oid>,
    /// The remote's default branch (`refs/heads/main`), as now recorded.
    pub default_branch: Option<String>,
    /// One entry per wanted commit, in the order given.
    pub wanted: Vec<WantedStatus>,
    /// Other refs fetched to find commits the server would not give by id.
    pub other_refs_fetched: usize,
    /// Other refs left out because of `SyncOptions::max_other_refs`.
    pub other_refs_skipped: usize,
    /// Why the mirror was found damaged and fetched afresh, when it was, and
    /// where the damaged copy was moved aside (`CACHE/quarantine/...`).
    pub(crate) repaired: Option<(String, PathBuf)>,
    /// Wanted commits the remote no longer gives, carried over from a
    /// quarantined copy of the mirror.
    pub(crate) carried: Vec<Oid>,
    /// Advertised refs skipped because their names are not UTF-8 (shown lossily).
    pub(crate) skipped_refs: Vec<String>,
    /// A digest of every ref of the mirror as the sync left it: what the
    /// memos that depend on the refs compare, made once per run (where the
    /// mirror is open already).
    pub(crate) all_refs: Option<[u8; 32]>,
}

impl SyncReport {
    /// Whether `oid` is in the cache after this sync.
    pub fn is_present(&self, oid: Oid) -> bool {
        self.wanted
            .iter()
            .any(|w| w.oid == oid && w.found.is_some())
    }
}

/// A directory of bare mirrors (`CACHE/git/HOST/OWNER/REPO.git`) and the
/// blob hash store beside them (`CACHE/blobs.store`).
#[derive(Debug, Clone)]
pub struct GitCache {
    root: PathBuf,
    /// The key its stores are authenticated under, worked out when the cache
    /// was opened.
    key: crate::cache_key::CacheKey,
    /// Which mirrors were found whole, and in what state (`CACHE/verified.store`).
    verified: std::sync::Arc<super::verified::Verifier>,
}

impl GitCache {
    /// A cache rooted at `root` (created on first sync), its stores under the
    /// user's key ([`CacheKey::for_user`](crate::cache_key::CacheKey::for_user),
    /// read now).
    pub fn new(root: impl Into<PathBuf>) -> Self {
        GitCache::with_key(root, crate::cache_key::CacheKey::for_user())
    }

    /// A cache rooted at `root` whose stores are authenticated under `key`.
    pub fn with_key(root: impl Into<PathBuf>, key: crate::cache_key::CacheKey) -> Self {
        crate::setup::isolate_user_config_aside();
        let root = root.into();
        let verified = std::sync::Arc::new(super::verified::Verifier::new(&root, key.clone()));
        GitCache {
            root,
            key,
            verified,
        }
    }

    /// The key this cache's stores are authenticated under.
    pub fn key(&self) -> &crate::cache_key::CacheKey {
        &self.key
    }

    /// The cache root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Where the mirror of `remote` (the original, pre-rewrite URL) lives.
    pub fn repo_path(&self, remote: &str) -> PathBuf {
        self.root.join(cache_relpath(remote))
    }

    /// Writes which mirrors this run found whole (`CACHE/verified.store`), once;
    /// also done when the last clone of this cache is dropped.
    pub(crate) fn persist_verified(&self) -> std::io::Result<()> {
        self.verified.persist()
    }

    /// [`damage`], unless the mirror at `dir` (the mirror of `path`) is unchanged
    /// since it was found whole with these documents.
    fn damage_unless_verified(
        &self,
        path: &Path,
        dir: &Path,
        repo: &Repository,
        docs: &[(Oid, Option<String>)],
    ) -> Option<String> {
        self.verified.damage(
            &self.verified_key(path),
            dir,
            repo,
            docs,
            |repo, docs, docs_only| damage(repo, docs, docs_only, true),
        )
    }

    fn verified_key(&self, path: &Path) -> String {
        let rel = path.strip_prefix(&self.root).unwrap_or(path);
        rel.to_string_lossy().into_owned()
    }

    /// The sha256 memo of this cache.
    pub fn blob_hashes(&self) -> BlobHashCache {
        BlobHashCache::new(&self.root, self.key.clone())
    }

    /// Open the mirror of `remote` for reading, without any network.
    pub fn open(&self, remote: &str) -> Result<CachedRepo, FetchError> {
        let path = self.repo_path(remote);
        check_dirs(&self.root, &path)?;
        match fs::symlink_metadata(&path) {
            Ok(_) => {
                check_owned(&path, remote, false)?;
                Ok(CachedRepo::new(open_mirror(&path)?, path))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(FetchError::NotCached {
                url: redact(remote),
                path,
            }),
            Err(e) => Err(FetchError::io(path, e)),
        }
    }

    /// Bring the mirror of `remote` up to date from `fetch_url` (the URL
    /// after `--rewrite`) and make sure the `wanted` commits are in it when
    /// the remote can provide them.
    ///
    /// Blocking; run it on a blocking thread. Holds the mirror's lock for the
    /// whole operation, so a second run on the same cache waits.
    pub fn sync(
        &self,
        remote: &str,
        fetch_url: &str,
        wanted: &[Oid],
        opts: &SyncOptions,
    ) -> Result<SyncReport, FetchError> {
        let docs: Vec<(Oid, Option<String>)> = wanted.iter().map(|&o| (o, None)).collect();
        self.sync_docs(remote, fetch_url, &docs, opts, None)
    }

    /// [`GitCache::sync`] for the documents `docs` (a commit, and the path a
    /// verdict will read there): besides the commits, their trees and those
    /// blobs are checked to read back whole, so a damaged mirror is told apart
    /// from a finding against the record (issue "Reliability and security").
    /// Online a damaged mirror is fetched afresh; offline it is
    /// [`FetchError::CacheDamaged`]. Objects and bytes received go to `progress`.
    pub(crate) fn sync_docs(
        &self,
        remote: &str,
        fetch_url: &str,
        docs: &[(Oid, Option<String>)],
        opts: &SyncOptions,
        progress: Option<std::sync::Arc<dyn crate::progress::Line>>,
    ) -> Result<SyncReport, FetchError> {
        let mut wanted: Vec<Oid> = Vec::with_capacity(docs.len());
        for (oid, _) in docs {
            if !wanted.contains(oid) {
                wanted.push(*oid);
            }
        }
        let wanted = &wanted[..];
        let path = self.repo_path(remote);
        // Every git2 call below comes after libgit2's set-up.
        crate::setup::isolate_user_config();
        if opts.offline {
            return self.sync_offline(remote, path, docs, wanted);
        }

        apply_timeouts(opts);
        crate::alloc::set_limit(crate::alloc::limit_for(
            opts.max_object_bytes,
            opts.max_fetch_objects,
        ));
        register_git_transport();
        check_dirs(&self.root, &path)?;
        let _lock = lock_beside(&path)?;
        // Why the mirror in place failed its check, when it did: it is then
        // fetched afresh beside it and moved aside only once that succeeded,
        // never deleted.
        let damaged = self.damage_in_place(&path, remote, docs)?;
        let (repo, scratch) = match damaged {
            Some(_) => {
                self.verified.forget(&self.verified_key(&path));
                let (repo, scratch) = init_scratch(&path, remote)?;
                (repo, Some(scratch))
            }
            None => open_or_init(&path, remote)?,
        };
        let result = run_with_retries(&repo, fetch_url, wanted, opts, progress);
        // Pinned commits the remote no longer gives, from the copy being
        // replaced or one quarantined before: read back whole and carried over.
        let result = result.map(|mut report| {
            let old = damaged.is_some().then(|| path.clone());
            report.carried = self.carry_over(&repo, old.as_deref(), &path, &mut report.wanted);
            report
        });
        let dir = scratch.clone().unwrap_or_else(|| path.clone());
        // A new mirror holds only what this fetch indexed, and indexing computed
        // the id of every object it holds: its blobs need only be there, not be
        // inflated and hashed again. Objects of an older mirror are read back.
        let read_back = scratch.is_none();
        let check = |repo: &Repository, docs: &[(Oid, Option<String>)], docs_only: bool| {
            damage(repo, docs, docs_only, read_back)
        };
        let key = self.verified_key(&path);
        let result = result.and_then(|report| {
            match self.verified.damage(&key, &dir, &repo, docs, check) {
                // What the remote just sent does not read back either.
                Some(reason) => Err(FetchError::CacheDamaged {
                    path: path.clone(),
                    reason,
                }),
                None => Ok(report),
            }
        });
        drop(repo);
        let mut report = self.settle(result, scratch, damaged, &path)?;
        let mirror = open_mirror(&path)?;
        keep_pinned(&mirror, &report.wanted);
        if has_loose_refs(&mirror) {
            pack_refs(&mirror, None).map_err(|e| FetchError::io(&path, e))?;
        }
        let cached = CachedRepo::new(mirror, path.clone());
        mark_synced(&path);
        report.path = path;
        report.head = cached.head();
        report.default_branch = cached.default_branch();
        report.all_refs = cached.all_refs_digest();
        Ok(report)
    }

    /// [`GitCache::sync_docs`] under `--offline`: what the mirror at `path`
    /// holds, once it reads back whole.
    fn sync_offline(
        &self,
        remote: &str,
        path: PathBuf,
        docs: &[(Oid, Option<String>)],
        wanted: &[Oid],
    ) -> Result<SyncReport, FetchError> {
        let cached = self.open(remote)?;
        if let Some(reason) = self.damage_unless_verified(&path, &path, cached.repo(), docs) {
            return Err(FetchError::CacheDamaged { path, reason });
        }
        Ok(offline_report(&cached, path, wanted))
    }

    /// Why the mirror in place at `path` fails its check for `docs`, if it
    /// does (`None` too when there is no mirror yet). An error that is no
    /// proof of damage (permissions, the environment) is returned as it is:
    /// the mirror is then left alone.
    fn damage_in_place(
        &self,
        path: &Path,
        remote: &str,
        docs: &[(Oid, Option<String>)],
    ) -> Result<Option<String>, FetchError> {
        if fs::symlink_metadata(path).is_err() {
            return Ok(None);
        }
        check_owned(path, remote, true)?;
        clean_temporary_packs(path);
        match open_mirror(path) {
            Ok(repo) => Ok(self.damage_unless_verified(path, path, &repo, docs)),
            Err(FetchError::CacheDamaged { reason, .. }) => Ok(Some(reason)),
            Err(e) => Err(e),
        }
    }

    /// The sync's outcome made the cache's: a mirror fetched afresh into
    /// `scratch` takes the place of the one at `path` (moved into quarantine
    /// when it was `damaged`) once its sync succeeded; a failed one's scratch
    /// is removed, and the mirror in place is left as it was.
    fn settle(
        &self,
        result: Result<SyncReport, FetchError>,
        scratch: Option<PathBuf>,
        damaged: Option<String>,
        path: &Path,
    ) -> Result<SyncReport, FetchError> {
        match (result, scratch) {
            (Ok(report), None) => Ok(report),
            (Ok(mut report), Some(scratch)) => {
                if let Some(reason) = damaged {
                    let aside = self.quarantine(path)?;
                    report.repaired = Some((reason, aside));
                }
                // The first sync succeeded: only now does the mirror appear.
                fs::rename(&scratch, path).map_err(|e| FetchError::io(path, e))?;
                self.verified.moved(&scratch, path);
                Ok(report)
            }
            (Err(err), scratch) => {
                if let Some(scratch) = scratch {
                    // Only the scratch of this fetch, never a mirror: a damaged
                    // one stays in place, and what of it reads back whole is
                    // still judged from it. Best effort: the next init clears
                    // any leftover scratch.
                    let _ = fs::remove_dir_all(&scratch);
                }
                Err(err)
            }
        }
    }

    /// Where the copies of the mirror at `path` that failed their check are
    /// kept: `CACHE/quarantine/git/HOST/OWNER/REPO.git/`.
    fn quarantine_dir(&self, path: &Path) -> PathBuf {
        let rel = path.strip_prefix(&self.root).unwrap_or(path);
        self.root.join(QUARANTINE_DIR).join(rel)
    }

    /// Moves the mirror at `path` aside into its quarantine directory, under a
    /// new name (the time and this process), and returns where it went.
    fn quarantine(&self, path: &Path) -> Result<PathBuf, FetchError> {
        let dir = self.quarantine_dir(path);
        // Never moved out of the cache through a planted link.
        check_dirs(&self.root, &dir.join("copy"))?;
        fs::create_dir_all(&dir).map_err(|e| FetchError::io(&dir, e))?;
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let aside = dir.join(format!("{now}-{}", std::process::id()));
        fs::rename(path, &aside).map_err(|e| FetchError::io(&aside, e))?;
        Ok(aside)
    }

    /// Carries the `wanted` commits that are still missing from `into` over from
    /// `old` (the copy being replaced) or a quarantined copy of the mirror at
    /// `path`, newest first, marking them found there; returns those carried.
    fn carry_over(
        &self,
        into: &Repository,
        old: Option<&Path>,
        path: &Path,
        wanted: &mut [WantedStatus],
    ) -> Vec<Oid> {
        let mut carried = Vec::new();
        if old.is_none() && wanted.iter().all(|w| w.found.is_some()) {
            return carried;
        }
        let mut copies: Vec<PathBuf> = fs::read_dir(self.quarantine_dir(path))
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .collect();
        copies.sort_unstable_by(|a, b| b.cmp(a));
        let from: Vec<Repository> = old
            .map(Path::to_path_buf)
            .into_iter()
            .chain(copies)
            .filter_map(|p| open_mirror(&p).ok())
            .collect();
        for w in wanted.iter_mut().filter(|w| w.found.is_none()) {
            if from.iter().any(|repo| carry_commit(repo, into, w.oid)) {
                w.found = Some(FoundBy::Quarantine);
                carried.push(w.oid);
            }
        }
        // A repair: every commit any record ever had judged in the copy being
        // replaced comes along, not only this run's (another record set's
        // force-pushed commit may live nowhere else).
        if let Some(old) = old.and_then(|_| from.first()) {
            for oid in pinned_commits(old) {
                if into.find_commit(oid).is_err() && carry_commit(old, into, oid) {
                    carried.push(oid);
                }
            }
        }
        carried
    }
}

/// What `pinaudit cache gc` did.
#[derive(Debug, Default)]
pub struct GcOutcome {
    /// The quarantined copies deleted.
    pub deleted: Vec<PathBuf>,
    /// The copies kept, each with the commits some record had judged that
    /// only it holds (the live mirror lacks them): deleting it would delete
    /// their last copy.
    pub kept: Vec<(PathBuf, Vec<Oid>)>,
}

impl GitCache {
    /// Deletes the quarantined mirror copies (`pinaudit cache gc`), each under
    /// the lock of the mirror it was moved aside from (a sync may be carrying a
    /// commit over from it). A copy holding a commit some record had judged
    /// (one pinned under `refs/pinaudit/pinned/`) that the live mirror lacks is
    /// the last copy of that commit: it is kept, unless `force`.
    pub fn gc(&self, force: bool) -> Result<GcOutcome, FetchError> {
        let base = self.root.join(QUARANTINE_DIR);
        let mut copies = Vec::new();
        let mut walk = walkdir::WalkDir::new(&base).follow_links(false).into_iter();
        while let Some(entry) = walk.next() {
            let entry = match entry {
                Ok(entry) => entry,
                Err(e)
                    if e.io_error().map(std::io::Error::kind)
                        == Some(std::io::ErrorKind::NotFound) =>
                {
                    continue
                }
                Err(e) => return Err(FetchError::io(&base, e.into())),
            };
            // A copy carries the ownership marker of the mirror it was.
            if entry.file_type().is_dir() && entry.path().join(OWNER_MARKER).is_file() {
                copies.push(entry.path().to_path_buf());
                walk.skip_current_dir();
            }
        }
        copies.sort();
        let mut outcome = GcOutcome::default();
        for copy in copies {
            let Some(parent) = copy.parent() else {
                continue;
            };
            let mirror = self.root.join(parent.strip_prefix(&base).unwrap_or(parent));
            let _lock = lock_beside(&mirror)?;
            let only_here = if force {
                Vec::new()
            } else {
                last_copies(&copy, &mirror)
            };
            if only_here.is_empty() {
                fs::remove_dir_all(&copy).map_err(|e| FetchError::io(&copy, e))?;
                outcome.deleted.push(copy);
            } else {
                outcome.kept.push((copy, only_here));
            }
        }
        Ok(outcome)
    }
}

/// The judged commits the quarantined `copy` holds that the live `mirror`
/// can't give (all of them when there is no live mirror). A copy that can't be
/// opened holds nothing that can be carried over, so nothing is lost with it.
fn last_copies(copy: &Path, mirror: &Path) -> Vec<Oid> {
    let Ok(old) = open_mirror(copy) else {
        return Vec::new();
    };
    let live = open_mirror(mirror).ok();
    let mut only = pinned_commits(&old);
    only.retain(|&oid| {
        old.find_commit(oid).is_ok()
            && live
                .as_ref()
                .is_none_or(|l| l.find_commit(oid).and_then(|c| c.tree()).is_err())
    });
    only
}

/// The commits pinned under `refs/pinaudit/pinned/` in `repo`: every commit
/// some record had judged there.
fn pinned_commits(repo: &Repository) -> Vec<Oid> {
    let Ok(refs) = repo.references_glob(&format!("{PINNED_NS}*")) else {
        return Vec::new();
    };
    refs.flatten().filter_map(|r| r.target()).collect()
}

/// Pins every wanted commit the mirror holds under `refs/pinaudit/pinned/`
/// (those not pinned yet): a commit a record had judged is kept by every
/// repair and never deleted by `cache gc` while it lives nowhere else, even
/// once no branch reaches it. Best effort: a ref that can't be written costs
/// only that protection.
fn keep_pinned(repo: &Repository, wanted: &[WantedStatus]) {
    for w in wanted.iter().filter(|w| w.found.is_some()) {
        let name = format!("{PINNED_NS}{}", w.oid);
        if repo.find_reference(&name).is_err() && repo.find_commit(w.oid).is_ok() {
            let _ = repo.reference(&name, w.oid, false, "pinaudit: judged");
        }
    }
}

/// Writes every direct ref of `repo` into its `packed-refs`, one file, with
/// the branches and tags replaced by `mirrored` when given (those whose
/// object the mirror holds), and removes the loose ref files it holds: a
/// forge advertising 300,000 branches costs one file of some 20 MB, not
/// 300,000 files. Symbolic refs (`HEAD`) stay as they are.
fn pack_refs(repo: &Repository, mirrored: Option<&BTreeMap<String, Oid>>) -> std::io::Result<()> {
    let git = |e: git2::Error| std::io::Error::other(e.message().to_string());
    let mut all: BTreeMap<String, Oid> = BTreeMap::new();
    for r in repo.references().map_err(git)? {
        let r = r.map_err(git)?;
        if let (Some(git2::ReferenceType::Direct), Some(name), Some(oid)) =
            (r.kind(), r.name(), r.target())
        {
            all.insert(name.to_string(), oid);
        }
    }
    let mirrored_name = |n: &str| n.starts_with("refs/heads/") || n.starts_with("refs/tags/");
    if let Some(mirrored) = mirrored {
        let odb = repo.odb().map_err(git)?;
        all.retain(|n, _| !mirrored_name(n));
        for (name, &oid) in mirrored {
            if odb.exists(oid) {
                all.insert(name.clone(), oid);
            }
        }
    }
    let mut text = String::with_capacity(all.len() * 64 + 32);
    text.push_str("# pack-refs with: sorted \n");
    for (name, oid) in &all {
        text.push_str(&format!("{oid} {name}\n"));
    }
    let dir = repo.path();
    crate::store::write_atomically(&dir.join("packed-refs"), &[text.as_bytes()])?;
    // The loose files now packed (or, for branches and tags, pruned).
    let refs = dir.join("refs");
    let mut walk = walkdir::WalkDir::new(&refs)
        .follow_links(false)
        .contents_first(true)
        .into_iter();
    while let Some(Ok(entry)) = walk.next() {
        let path = entry.path();
        let Ok(rel) = path.strip_prefix(dir) else {
            continue;
        };
        let name = rel.to_string_lossy().replace('\\', "/");
        if entry.file_type().is_file() {
            if all.contains_key(&name) || (mirrored.is_some() && mirrored_name(&name)) {
                let _ = fs::remove_file(path);
            }
        } else if entry.file_type().is_dir()
            && !matches!(name.as_str(), "refs" | "refs/heads" | "refs/tags")
        {
            // Only an empty one goes.
            let _ = fs::remove_dir(path);
        }
    }
    Ok(())
}

/// Whether `repo` holds loose ref files beside the remote head's (which every
/// sync writes): refs pinned or fetched since the last [`pack_refs`].
fn has_loose_refs(repo: &Repository) -> bool {
    let head = repo.path().join(HEAD_REF);
    walkdir::WalkDir::new(repo.path().join("refs"))
        .follow_links(false)
        .into_iter()
        .flatten()
        .any(|e| e.file_type().is_file() && e.path() != head)
}

/// Where mirrors that failed their check are moved aside, under the cache
/// root: an audit never deletes a mirror, `pinaudit cache gc` prunes them.
pub const QUARANTINE_DIR: &str = "quarantine";

/// Copies `commit`, with the history and trees it reaches that `into` lacks,
/// from `from`, every object read back whole (libgit2 checks its id), and pins
/// it under `refs/pinaudit/pinned/`. Objects are written ancestors first and
/// the commit last, so a copy cut short never leaves a commit without its
/// history. False when `from` can't give all of it.
fn carry_commit(from: &Repository, into: &Repository, commit: Oid) -> bool {
    let (Ok(src), Ok(dst)) = (from.odb(), into.odb()) else {
        return false;
    };
    let mut order = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut stack = vec![commit];
    while let Some(id) = stack.pop() {
        if !seen.insert(id) || dst.exists(id) {
            continue;
        }
        let Ok(object) = from.find_object(id, None) else {
            return false;
        };
        if let Some(c) = object.as_commit() {
            stack.push(c.tree_id());
            stack.extend(c.parent_ids());
        } else if let Some(t) = object.as_tree() {
            for e in t.iter() {
                match e.kind() {
                    // Read once, when written.
                    Some(git2::ObjectType::Blob) => {
                        if seen.insert(e.id()) && !dst.exists(e.id()) {
                            order.push(e.id());
                        }
                    }
                    // A gitlink names a commit of another repository.
                    Some(git2::ObjectType::Commit) => {}
                    _ => stack.push(e.id()),
                }
            }
        } else if let Some(t) = object.as_tag() {
            stack.push(t.target_id());
        }
        order.push(id);
    }
    for id in order.into_iter().rev() {
        let Ok(object) = src.read(id) else {
            return false;
        };
        if dst.write(object.kind(), object.data()).ok() != Some(id) {
            return false;
        }
    }
    into.reference(
        &format!("{PINNED_NS}{commit}"),
        commit,
        true,
        "pinaudit: carried over from a quarantined mirror",
    )
    .is_ok()
}

/// How many times a sync that failed on the network is tried again, and the
/// first wait between tries (doubled each time): a blip on a nightly run must not
/// cost the run, and a dead host must not hold it for long.
const NETWORK_RETRIES: u32 = 2;
const RETRY_BACKOFF: Duration = Duration::from_millis(250);

/// One sync session, tried again on a transient network failure (a refused or
/// reset connection). A timeout is not tried again: it has already waited the
/// whole `--timeout`.
fn run_with_retries(
    repo: &Repository,
    fetch_url: &str,
    wanted: &[Oid],
    opts: &SyncOptions,
    progress: Option<std::sync::Arc<dyn crate::progress::Line>>,
) -> Result<SyncReport, FetchError> {
    let budget = Budget::new(opts);
    super::transport::lend(&budget, || {
        retry_loop(repo, fetch_url, wanted, opts, &budget, progress)
    })
}

fn retry_loop(
    repo: &Repository,
    fetch_url: &str,
    wanted: &[Oid],
    opts: &SyncOptions,
    budget: &Budget,
    progress: Option<std::sync::Arc<dyn crate::progress::Line>>,
) -> Result<SyncReport, FetchError> {
    let mut wait = RETRY_BACKOFF;
    let mut tries = 0;
    loop {
        let mut session = Session::new(repo, fetch_url, budget);
        session.auth.progress = progress.clone().map(|bar| (bar, session.shown_url.clone()));
        match session.run(wanted, opts) {
            Err(FetchError::Network {
                cause: NetworkCause::Unreachable,
                ..
            }) if tries < NETWORK_RETRIES && std::time::Instant::now() + wait < budget.deadline => {
                tries += 1;
                std::thread::sleep(wait);
                wait *= 2;
            }
            other => return other,
        }
    }
}

/// The file in a mirror that records when it last synced with its remote.
const SYNCED_AT: &str = "pinaudit-synced-at";

/// Records that the mirror at `path` is in step with its remote now (best
/// effort: written beside, then renamed, so a reader never sees half of it).
fn mark_synced(path: &Path) {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let _ = crate::store::write_atomically(&path.join(SYNCED_AT), &[format!("{now}\n").as_bytes()]);
}

impl GitCache {
    /// When the mirror of `remote` last synced with its remote (seconds since the
    /// epoch): its own record, else when git last fetched into it.
    pub(crate) fn last_synced(&self, remote: &str) -> Option<i64> {
        let path = self.repo_path(remote);
        if let Some(t) = crate::store::read_regular(&path.join(SYNCED_AT))
            .and_then(|b| String::from_utf8(b).ok())
            .and_then(|s| s.trim().parse::<i64>().ok())
        {
            return Some(t);
        }
        let modified = ["FETCH_HEAD", "packed-refs", "HEAD"]
            .iter()
            .find_map(|f| fs::metadata(path.join(f)).and_then(|m| m.modified()).ok())?;
        let secs = modified
            .duration_since(std::time::UNIX_EPOCH)
            .ok()?
            .as_secs();
        i64::try_from(secs).ok()
    }
}

/// A report of what the cache holds, for `--offline`.
fn offline_report(cached: &CachedRepo, path: PathBuf, wanted: &[Oid]) -> SyncReport {
    SyncReport {
        path,
        offline: true,
        fetched: false,
        fetches: 0,
        received_objects: 0,
        head: cached.head(),
        default_branch: cached.default_branch(),
        wanted: wanted
            .iter()
            .map(|&oid| WantedStatus {
                oid,
                found: cached.has_commit(oid).then_some(FoundBy::Cache),
                by_id_error: None,
            })
            .collect(),
        other_refs_fetched: 0,
        other_refs_skipped: 0,
        repaired: None,
        carried: Vec::new(),
        skipped_refs: Vec::new(),
        all_refs: cached.all_refs_digest(),
    }
}

/// Set libgit2's process-wide socket timeouts to those of `opts`.
///
/// libgit2 keeps them in globals that it reads whenever it opens a socket.
/// They are written here only under a lock and only when they change, so
/// concurrent syncs with the same options never write at all after the
/// first; syncs in one process are expected to share one set of timeouts.
/// A zero duration means "no limit" (libgit2's default).
fn apply_timeouts(opts: &SyncOptions) {
    static CURRENT: Mutex<Option<(i32, i32)>> = Mutex::new(None);
    let ms = |d: Duration| i32::try_from(d.as_millis()).unwrap_or(i32::MAX);
    let want = (ms(opts.connect_timeout), ms(opts.timeout));
    let mut current = CURRENT.lock().unwrap_or_else(PoisonError::into_inner);
    if *current == Some(want) {
        return;
    }
    // SAFETY: these store an int in a libgit2 global. The mutex serialises
    // our writes; libgit2 only reads the value when it creates a socket
    // stream, and an aligned int store cannot be observed torn.
    unsafe {
        // Documented as infallible ("cannot actually fail").
        let _ = git2::opts::set_server_connect_timeout_in_milliseconds(want.0);
        let _ = git2::opts::set_server_timeout_in_milliseconds(want.1);
    }
    *current = Some(want);
}

/// Whether the cache directory `root` can be used at all, asked once before an
/// audit: it is a directory (or can be made one), this user's and written by no
/// one else, and, unless the audit only reads it (`--offline`), writable. An
/// unusable cache is a setup error, not something a retry could fix.
pub fn check_cache_root(root: &Path, read_only: bool) -> Result<(), FetchError> {
    check_dirs(root, &root.join("probe"))?;
    // The directories below it that every mirror, page and answer goes
    // through: one another user may write makes every source unusable, which
    // is a setup to fix (exit 3), not a source that could not be checked.
    for sub in ["git", "http", "http/sha256", "archive", "quarantine"] {
        check_dirs(root, &root.join(sub).join("probe"))?;
    }
    for host in fs::read_dir(root.join("git"))
        .into_iter()
        .flatten()
        .flatten()
    {
        check_dirs(root, &host.path().join("probe"))?;
        if host.file_type().is_ok_and(|t| t.is_dir()) {
            for owner in fs::read_dir(host.path()).into_iter().flatten().flatten() {
                check_dirs(root, &owner.path().join("probe"))?;
            }
        }
    }
    if read_only {
        return Ok(());
    }
    fs::create_dir_all(root).map_err(|e| FetchError::io(root, e))?;
    tempfile::Builder::new()
        .prefix(".pinaudit-probe-")
        .tempfile_in(root)
        .map(drop)
        .map_err(|e| FetchError::io(root, e))
}

/// Refuses the cache unless every directory from `root` down to the one
/// holding the mirror at `path` is safe: not a symbolic link (pinaudit makes
/// none; `root` itself may be one, the user's choice), this user's (or root's),
/// and writable by no one else (group-writable only for this user's group). Directories not made yet are not checked.
fn check_dirs(root: &Path, path: &Path) -> Result<(), FetchError> {
    use std::os::unix::fs::MetadataExt;
    // SAFETY: geteuid and getegid only read the process's credentials.
    let (me, my_group) = unsafe { (libc::geteuid(), libc::getegid()) };
    let Ok(rel) = path.strip_prefix(root) else {
        return Ok(());
    };
    let mut dir = root.to_path_buf();
    let mut below = rel.parent().into_iter().flat_map(Path::components);
    loop {
        let unsafe_because = |reason: String| FetchError::CacheUnsafe {
            path: dir.clone(),
            reason,
        };
        let meta = if dir == root {
            fs::metadata(&dir)
        } else {
            fs::symlink_metadata(&dir)
        };
        match meta {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(FetchError::io(&dir, e)),
            Ok(m) if m.file_type().is_symlink() => {
                return Err(unsafe_because(
                    "it is a symbolic link, and pinaudit makes none in its cache".to_string(),
                ))
            }
            Ok(m) if !m.is_dir() => {
                return Err(unsafe_because("it is not a directory".to_string()))
            }
            Ok(m) if m.uid() != me && m.uid() != 0 => {
                return Err(unsafe_because(format!(
                    "it belongs to another user (uid {})",
                    m.uid()
                )))
            }
            // Group-writable is fine for the user's own group (a umask of 002
            // with a group per user, Debian's default, makes every directory so).
            Ok(m) if m.mode() & 0o002 != 0 || (m.mode() & 0o020 != 0 && m.gid() != my_group) => {
                return Err(unsafe_because(format!(
                    "others may write to it (mode {:o})",
                    m.mode() & 0o7777
                )))
            }
            Ok(_) => {}
        }
        match below.next() {
            Some(c) => dir.push(c),
            None => return Ok(()),
        }
    }
}

/// Take the exclusive advisory lock of the mirror at `path`, creating its
/// parent directories. The lock file sits beside the mirror (it must exist
/// before the mirror does) and is never removed: removing a lock file lets
/// two processes lock two different files.
fn lock_beside(path: &Path) -> Result<File, FetchError> {
    let parent = path.parent().ok_or_else(|| FetchError::CacheBroken {
        path: path.to_path_buf(),
        reason: "the cache path has no parent directory".to_string(),
    })?;
    fs::create_dir_all(parent).map_err(|e| FetchError::io(parent, e))?;
    let lock_path = sibling(path, "", LOCK_SUFFIX);
    // Never through a planted link: `O_NOFOLLOW` fails on one.
    let file = {
        use std::os::unix::fs::OpenOptionsExt;
        OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
            .open(&lock_path)
    }
    .map_err(|e| match e.raw_os_error() {
        Some(libc::ELOOP) => FetchError::CacheUnsafe {
            path: lock_path.clone(),
            reason: "it is a symbolic link, and pinaudit makes none in its cache".to_string(),
        },
        _ => FetchError::io(&lock_path, e),
    })?;
    if !file.metadata().is_ok_and(|m| m.is_file()) {
        return Err(FetchError::CacheUnsafe {
            path: lock_path,
            reason: "it is not a regular file".to_string(),
        });
    }
    match file.try_lock() {
        Ok(()) => {}
        Err(std::fs::TryLockError::WouldBlock) => {
            // Another run holds it: say who, then wait.
            let mut buf = [0u8; 24];
            let n = std::os::unix::fs::FileExt::read_at(&file, &mut buf, 0).unwrap_or(0);
            let pid = String::from_utf8_lossy(&buf[..n])
                .trim()
                .parse::<u32>()
                .map_or_else(|_| String::new(), |p| format!(" held by PID {p}"));
            eprintln!(
                "waiting for the cache lock on `{}`{pid} (another pinaudit run is using this mirror)",
                pinaudit_core::escape::terminal(&path.display().to_string())
            );
            file.lock().map_err(|e| FetchError::io(&lock_path, e))?;
        }
        Err(std::fs::TryLockError::Error(e)) => return Err(FetchError::io(&lock_path, e)),
    }
    // Who holds it now, for a run that waits for it (best effort).
    let _ = file.set_len(0);
    let me = format!("{}\n", std::process::id());
    let _ = std::os::unix::fs::FileExt::write_all_at(&file, me.as_bytes(), 0);
    Ok(file)
}

/// `dir/PREFIXnameSUFFIX` for `path = dir/name`.
fn sibling(path: &Path, prefix: &str, suffix: &str) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!("{prefix}{name}{suffix}"))
}

/// Open an existing mirror, or explain why it can't be used.
fn open_mirror(path: &Path) -> Result<Repository, FetchError> {
    let broken = |reason: String| FetchError::CacheBroken {
        path: path.to_path_buf(),
        reason,
    };
    // A directory pinaudit may not read is a permission problem, not a broken
    // cache: "delete it" would be the wrong advice for a good cache.
    if let Err(e) = fs::read_dir(path) {
        if e.kind() == std::io::ErrorKind::PermissionDenied {
            return Err(FetchError::io(path, e));
        }
    }
    crate::setup::isolate_user_config();
    let repo = Repository::open_bare(path).map_err(|e| {
        let reason = clean_message(e.message(), &[]);
        // The repository's own files say it is not whole: damage. Anything
        // else (the environment, a configuration libgit2 can't read) is not.
        if is_proof(&e) {
            FetchError::CacheDamaged {
                path: path.to_path_buf(),
                reason: format!("can't be opened: {reason}"),
            }
        } else {
            broken(reason)
        }
    })?;
    if !repo.is_bare() {
        return Err(broken("it is not a bare repository".to_string()));
    }
    Ok(repo)
}

/// The file a mirror pinaudit made carries, naming its remote: pinaudit writes
/// (fetches into, prunes) only repositories that carry it, so a symbolic link or
/// another tool's repository in the cache is never damaged (issue "Reliability
/// and security": a symlinked repository lost all its branches to a prune).
const OWNER_MARKER: &str = "pinaudit-mirror";

fn marker_text(remote: &str) -> String {
    format!("pinaudit mirror of {}\n", redact(remote))
}

/// Refuses the cache entry at `path` unless it is a directory that pinaudit made
/// for `remote`. A mirror made before the marker existed is recognised by the
/// `pinaudit.remote` it recorded in its config, and (when `adopt`, under the
/// lock) given the marker.
fn check_owned(path: &Path, remote: &str, adopt: bool) -> Result<(), FetchError> {
    let foreign = |reason: &str| FetchError::CacheForeign {
        path: path.to_path_buf(),
        reason: reason.to_string(),
    };
    let meta = fs::symlink_metadata(path).map_err(|e| FetchError::io(path, e))?;
    if meta.file_type().is_symlink() {
        return Err(foreign("it is a symbolic link"));
    }
    if !meta.is_dir() {
        return Err(foreign("it is not a directory"));
    }
    let marker = path.join(OWNER_MARKER);
    if fs::symlink_metadata(&marker).is_ok_and(|m| !m.is_file()) {
        return Err(foreign("its ownership marker is not a regular file"));
    }
    match fs::read_to_string(&marker) {
        Ok(text) if text == marker_text(remote) => Ok(()),
        Ok(_) => Err(foreign("its ownership marker names another remote")),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            // Not a repository at all: nothing to protect, and nothing pinaudit
            // will write to (or move aside) either; say it is broken.
            let repo = open_mirror(path).map_err(|e| match e {
                FetchError::CacheDamaged { path, reason } => {
                    FetchError::CacheBroken { path, reason }
                }
                e => e,
            })?;
            let recorded = repo
                .config()
                .ok()
                .and_then(|c| c.get_string("pinaudit.remote").ok());
            if recorded.as_deref() != Some(redact(remote).as_str()) {
                return Err(foreign("it has no pinaudit ownership marker"));
            }
            if adopt {
                crate::store::write_atomically(&marker, &[marker_text(remote).as_bytes()])
                    .map_err(|e| FetchError::io(&marker, e))?;
            }
            Ok(())
        }
        Err(e) => Err(FetchError::io(&marker, e)),
    }
}

/// Removes the temporary pack files an interrupted fetch leaves in
/// `objects/pack/` (libgit2's `pack_git2_*`, git's `tmp_pack_*`/`tmp_idx_*`).
/// Runs under the mirror's lock, so no fetch is writing them. Best effort.
fn clean_temporary_packs(path: &Path) {
    let Ok(entries) = fs::read_dir(path.join("objects/pack")) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if ["pack_git2_", "tmp_pack_", "tmp_idx_"]
            .iter()
            .any(|p| name.starts_with(p))
        {
            let _ = fs::remove_file(entry.path());
        }
    }
}

/// Whether a libgit2 error is proof, from the object store itself, that a mirror
/// is damaged: an object that is missing or fails its id, a pack or ref file
/// that does not parse. An error of the operating system (permissions, a file
/// that can't be opened), of configuration or of an invalid argument (a path
/// no tree can hold) is not: it says nothing about the mirror.
fn is_proof(e: &git2::Error) -> bool {
    use git2::ErrorClass as C;
    matches!(
        e.class(),
        C::Odb | C::Zlib | C::Object | C::Reference | C::Repository | C::Sha1 | C::Indexer
    ) && !matches!(e.code(), git2::ErrorCode::Invalid)
}

/// Why the mirror is damaged, if it is: a ref that can't be read or names a
/// missing object, history of a branch or tag that can't be walked, or a
/// document (commit, tree, blob at the path) that can't be read back whole.
/// libgit2 verifies object ids on read, so a flipped byte shows here.
///
/// With `docs_only` the refs and history are taken as verified (the mirror is
/// unchanged since they were) and only the documents are checked. Without
/// `read_back` (a mirror just made by one fetch, whose pack the indexer verified
/// object by object) cited blobs must be there, not be read back.
fn damage(
    repo: &Repository,
    docs: &[(Oid, Option<String>)],
    docs_only: bool,
    read_back: bool,
) -> Option<String> {
    let odb = match repo.odb() {
        Ok(odb) => odb,
        Err(e) if is_proof(&e) => {
            return Some(format!(
                "has an unreadable object database: {}",
                e.message()
            ))
        }
        // Nothing proven about the mirror; reading it will say what fails.
        Err(_) => return None,
    };
    if !docs_only {
        if let Some(reason) = refs_damage(repo, &odb) {
            return Some(reason);
        }
    }
    docs_damage(repo, &odb, docs, read_back)
}

/// Why the refs or the branch and tag history of `repo` are damaged, if they are.
fn refs_damage(repo: &Repository, odb: &git2::Odb<'_>) -> Option<String> {
    let refs = match repo.references() {
        Ok(refs) => refs,
        Err(e) if is_proof(&e) => {
            return Some(format!("has refs that can't be listed: {}", e.message()))
        }
        Err(_) => return None,
    };
    for r in refs {
        let r = match r {
            Ok(r) => r,
            Err(e) if is_proof(&e) => {
                return Some(format!("has a ref that can't be read: {}", e.message()))
            }
            Err(_) => continue,
        };
        if let Some(oid) = r.target() {
            if !odb.exists(oid) {
                let name = String::from_utf8_lossy(r.name_bytes()).into_owned();
                return Some(format!(
                    "has ref `{name}` naming object `{oid}`, which is missing"
                ));
            }
        }
    }
    // libgit2's ref iterator skips a loose ref file it can't parse; ask for
    // each one by name.
    for entry in walkdir::WalkDir::new(repo.path().join("refs"))
        .follow_links(false)
        .into_iter()
        .flatten()
        .filter(|e| e.file_type().is_file())
    {
        let Ok(rel) = entry.path().strip_prefix(repo.path()) else {
            continue;
        };
        let Some(name) = rel.to_str() else { continue };
        if name.ends_with(".lock") {
            continue;
        }
        if let Err(e) = repo.find_reference(name).map_err(|e| (is_proof(&e), e)) {
            let (true, e) = e else { continue };
            return Some(format!(
                "has ref `{name}` that can't be read: {}",
                e.message()
            ));
        }
    }
    let walked = (|| -> Result<(), git2::Error> {
        let mut walk = repo.revwalk()?;
        walk.push_glob("refs/heads/*")?;
        walk.push_glob("refs/tags/*")?;
        for seen in walk {
            seen?;
        }
        Ok(())
    })();
    match walked {
        Err(e) if is_proof(&e) => Some(format!(
            "has branch or tag history that can't be read: {}",
            e.message()
        )),
        _ => None,
    }
}

/// Why a document of `docs` (commit, tree, blob at the path) can't be read back
/// whole, if one can't.
fn docs_damage(
    repo: &Repository,
    odb: &git2::Odb<'_>,
    docs: &[(Oid, Option<String>)],
    read_blobs: bool,
) -> Option<String> {
    for (oid, path) in docs {
        let commit = match repo.find_commit(*oid) {
            Ok(c) => c,
            Err(e) if e.code() == git2::ErrorCode::NotFound || !is_proof(&e) => continue,
            Err(e) => {
                return Some(format!(
                    "has commit `{oid}` that can't be read: {}",
                    e.message()
                ))
            }
        };
        let tree = match commit.tree() {
            Ok(t) => t,
            Err(e) if !is_proof(&e) => continue,
            Err(e) => {
                return Some(format!(
                    "has the tree of `{oid}` unreadable: {}",
                    e.message()
                ))
            }
        };
        let Some(path) = path else { continue };
        let entry = match tree.get_path(Path::new(path)) {
            Ok(entry) => entry,
            // A path the tree does not name (or no tree could hold) is the
            // record's business; a subtree object that is missing is the cache's.
            Err(e) if e.class() == git2::ErrorClass::Tree || !is_proof(&e) => continue,
            Err(e) => {
                return Some(format!(
                    "has `{path}` at `{oid}` unreadable: {}",
                    e.message()
                ))
            }
        };
        if entry.kind() == Some(git2::ObjectType::Blob) {
            if !read_blobs {
                if !odb.exists(entry.id()) {
                    return Some(format!(
                        "has `{path}` at `{oid}` missing: blob `{}` is not in the mirror",
                        entry.id()
                    ));
                }
                continue;
            }
            // A blob over the stream threshold is not read whole here (that
            // would hold it in memory): every streamed read checks it against
            // its id (`fetch::stream`), so its damage is still said, never
            // judged from.
            if odb
                .read_header(entry.id())
                .is_ok_and(|(size, _)| size as u64 > super::stream::STREAM_THRESHOLD)
            {
                continue;
            }
            if let Err(e) = odb.read(entry.id()).map_err(|e| (is_proof(&e), e)) {
                let (true, e) = e else { continue };
                return Some(format!(
                    "has `{path}` at `{oid}` unreadable: {}",
                    e.message()
                ));
            }
        }
    }
    None
}

/// Open the mirror at `path`; or, when there is none, initialise a new one
/// in a scratch directory beside it and return that with its path. The
/// caller renames the scratch into place once the first sync has succeeded,
/// so a crash or a failure at any point before leaves no mirror that would
/// pass for a cached remote. Runs under the caller's lock.
fn open_or_init(path: &Path, remote: &str) -> Result<(Repository, Option<PathBuf>), FetchError> {
    match fs::symlink_metadata(path) {
        Ok(_) => return open_mirror(path).map(|repo| (repo, None)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(FetchError::io(path, e)),
    }
    let (repo, scratch) = init_scratch(path, remote)?;
    Ok((repo, Some(scratch)))
}

/// A new, empty mirror for `remote` in the scratch directory beside `path`
/// (whatever is at `path` is left alone), and the scratch's path.
fn init_scratch(path: &Path, remote: &str) -> Result<(Repository, PathBuf), FetchError> {
    let scratch = sibling(path, ".", ".init");
    if fs::symlink_metadata(&scratch).is_ok() {
        // Left by a run that crashed while holding the lock we now hold.
        fs::remove_dir_all(&scratch).map_err(|e| FetchError::io(&scratch, e))?;
    }
    write_skeleton(&scratch, remote).map_err(|e| FetchError::io(&scratch, e))?;
    crate::setup::isolate_user_config();
    let repo = Repository::open_bare(&scratch).map_err(|e| FetchError::Git {
        url: scratch.display().to_string(),
        reason: clean_message(e.message(), &[]),
    })?;
    Ok((repo, scratch))
}

/// The files of an empty bare repository, written in one go. libgit2's
/// `git_repository_init` writes a template (hooks, `description`,
/// `info/exclude`), probes the filesystem (a symbolic link, a case test) and
/// rewrites `config` through a lock five times: a hundred path operations and
/// a dozen new files a mirror. Writing the files directly took a cold audit of
/// 20 repositories about 4 % less CPU. The scratch directory is new and under
/// the mirror's lock, and only renamed into place after the first sync, so
/// plain writes are enough. What is written is what
/// `git init --bare` leaves that a repository needs (`HEAD`, `config`,
/// `objects/pack`, `refs/heads`, `refs/tags`), the ownership marker, and the
/// settings `init_scratch` always made. Of libgit2's probes only the case
/// test means anything to a bare repository (symbolic links and file modes
/// are a work tree's), and here it is one `stat`.
fn write_skeleton(scratch: &Path, remote: &str) -> std::io::Result<()> {
    fs::create_dir(scratch)?;
    for dir in ["objects", "objects/pack", "refs", "refs/heads", "refs/tags"] {
        fs::create_dir(scratch.join(dir))?;
    }
    fs::write(scratch.join("HEAD"), "ref: refs/heads/main\n")?;
    // libgit2's own case test, without a file of its own: on a filesystem
    // that ignores case, `objects` answers to `OBJECTS`, and refs that differ
    // only in case are then compared as git would there.
    let ignorecase = fs::symlink_metadata(scratch.join("OBJECTS")).is_ok();
    fs::write(scratch.join("config"), mirror_config(remote, ignorecase))?;
    fs::write(scratch.join(OWNER_MARKER), marker_text(remote))
}

/// A new mirror's `config`. Reflogs would store the fetch URL; a bare mirror
/// needs none. The remote is for people who look inside the cache; it never
/// holds a credential.
fn mirror_config(remote: &str, ignorecase: bool) -> String {
    format!(
        "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = true\n\
         \tlogallrefupdates = false\n{}[pinaudit]\n\tremote = {}\n",
        if ignorecase {
            "\tignorecase = true\n"
        } else {
            ""
        },
        config_quoted(&redact(remote))
    )
}

/// `value` as a double-quoted git config value. Control characters other than
/// a tab or a newline can't be written in one, and this value is only shown to
/// people, so they become `?`.
fn config_quoted(value: &str) -> String {
    let mut out = String::with_capacity(value.len() + 2);
    out.push('"');
    for c in value.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => out.push('?'),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn is_timeout(e: &git2::Error) -> bool {
    e.code() == git2::ErrorCode::Timeout || e.message().contains("timed out")
}

/// A ref the remote advertised.
#[derive(Debug, Clone)]
struct Advertised {
    name: String,
    oid: Oid,
}

/// The remote's advertisement, reduced to what a sync needs.
#[derive(Debug, Default)]
struct Advertisement {
    /// `refs/heads/*` and `refs/tags/*` (peeled `^{}` entries dropped).
    mirrored: BTreeMap<String, Oid>,
    /// Everything else except `HEAD` (pull and merge-request refs, notes…).
    other: Vec<Advertised>,
    /// HEAD's oid and the branch it points to.
    head: Option<Oid>,
    head_target: Option<String>,
    /// Refs whose names are not UTF-8, skipped (shown lossily).
    skipped: Vec<String>,
}

impl Advertisement {
    fn from_raw(heads: Vec<RawHead>) -> Self {
        let mut adv = Advertisement::default();
        for h in heads {
            let Ok(name) = String::from_utf8(h.name.clone()) else {
                // git2's `RemoteHead::name` would panic on it; git itself
                // would not store it as a ref anyway.
                adv.skipped
                    .push(String::from_utf8_lossy(&h.name).into_owned());
                continue;
            };
            if name.ends_with("^{}") {
                continue;
            }
            if name == "HEAD" {
                adv.head = Some(h.oid);
                adv.head_target = h.symref_target.and_then(|t| String::from_utf8(t).ok());
            } else if !git2::Reference::is_valid_name(&name) {
                // libgit2 would not store it, so it could never match.
                continue;
            } else if name.starts_with("refs/heads/") || name.starts_with("refs/tags/") {
                adv.mirrored.insert(name, h.oid);
            } else if name.starts_with("refs/") {
                adv.other.push(Advertised { name, oid: h.oid });
            }
        }
        adv
    }
}

/// One advertised ref as libgit2 holds it, name as bytes.
struct RawHead {
    name: Vec<u8>,
    oid: Oid,
    symref_target: Option<Vec<u8>>,
}

/// The connected remote's advertisement with names as bytes: git2's
/// `RemoteHead::name` unwraps UTF-8 and so panicked (a backtrace, a scratch
/// directory left behind) on a server advertising a non-UTF-8 ref name.
fn list_raw(remote: &git2::Remote<'_>) -> Result<Vec<RawHead>, git2::Error> {
    let heads = remote.list()?;
    // SAFETY: git2's `Remote::list` builds this slice by transmuting libgit2's
    // own `git_remote_ls` array of `*const git_remote_head` (it asserts the
    // sizes match), so the memory behind it is that array. libgit2 keeps the
    // heads alive while the remote is connected, which the borrow of `remote`
    // guarantees; everything is copied out before returning.
    unsafe {
        let base = heads.as_ptr().cast::<*const libgit2_sys::git_remote_head>();
        let raw = std::slice::from_raw_parts(base, heads.len());
        let mut out = Vec::with_capacity(raw.len());
        for &head in raw {
            if head.is_null() {
                continue;
            }
            let head: &libgit2_sys::git_remote_head = &*head;
            if head.name.is_null() {
                continue;
            }
            let name = std::ffi::CStr::from_ptr(head.name).to_bytes().to_vec();
            let symref_target = (!head.symref_target.is_null()).then(|| {
                std::ffi::CStr::from_ptr(head.symref_target)
                    .to_bytes()
                    .to_vec()
            });
            let Ok(oid) = Oid::from_bytes(&head.oid.id[..20]) else {
                continue;
            };
            out.push(RawHead {
                name,
                oid,
                symref_target,
            });
        }
        Ok(out)
    }
}

/// Credentials for one remote, tried at most once each: libgit2 calls the
/// callback again after a refusal, which would loop forever otherwise.
struct Auth {
    github_token: Option<String>,
    asked: Cell<bool>,
    attempts: Cell<u32>,
    /// The remote's progress line, and its name as shown there.
    progress: Option<(std::sync::Arc<dyn crate::progress::Line>, String)>,
}

impl Auth {
    /// `token` is `GITHUB_TOKEN`; it goes only to github.com over https,
    /// never to a mirror that a rewrite points at.
    fn new(fetch_url: &str, token: Option<String>) -> Self {
        let github_token = token
            .filter(|t| super::credentials::is_github_https(fetch_url) && !t.trim().is_empty());
        Auth {
            github_token,
            asked: Cell::new(false),
            attempts: Cell::new(0),
            progress: None,
        }
    }

    /// The token for a request to `url`, the URL libgit2 asks about.
    fn token_for(&self, url: &str) -> Option<&str> {
        self.github_token
            .as_deref()
            .filter(|_| super::credentials::is_github_https(url))
    }

    fn secrets(&self) -> Vec<&str> {
        self.github_token.iter().map(String::as_str).collect()
    }

    fn outcome(&self) -> AuthOutcome {
        AuthOutcome {
            asked: self.asked.get(),
        }
    }

    fn credentials(
        &self,
        url: &str,
        username: Option<&str>,
        allowed: CredentialType,
    ) -> Result<Cred, git2::Error> {
        self.asked.set(true);
        let attempt = self.attempts.get();
        self.attempts.set(attempt + 1);
        if attempt > 0 {
            return Err(git2::Error::from_str(
                "authentication failed: the credentials were refused",
            ));
        }
        if allowed.contains(CredentialType::USER_PASS_PLAINTEXT) {
            // libgit2 asks about the URL it is talking to now, which after a
            // redirect may be another host: the token goes to github.com only
            // (issue "Reliability and security": a cross-host redirect must
            // not collect it).
            if let Some(token) = self.token_for(url) {
                return Cred::userpass_plaintext("x-access-token", token);
            }
            crate::setup::isolate_user_config();
            if let Ok(config) = git2::Config::open_default() {
                if let Ok(cred) = Cred::credential_helper(&config, url, username) {
                    return Ok(cred);
                }
            }
        }
        if allowed.contains(CredentialType::DEFAULT) {
            return Cred::default();
        }
        Err(git2::Error::from_str(
            "authentication required but no credentials are available",
        ))
    }

    fn callbacks(&self) -> RemoteCallbacks<'_> {
        let mut cb = RemoteCallbacks::new();
        cb.credentials(move |url, username, allowed| self.credentials(url, username, allowed));
        cb
    }

    /// Shows objects and bytes received so far on the remote's progress line.
    fn show_progress(&self, p: &git2::Progress<'_>) {
        if let Some((bar, shown)) = &self.progress {
            bar.message(format!(
                "{shown}: {}/{} objects, {}",
                p.received_objects(),
                p.total_objects(),
                crate::progress::human_bytes(p.received_bytes() as u64)
            ));
        }
    }
}

/// One sync of one mirror.
struct Session<'r> {
    repo: &'r Repository,
    budget: &'r Budget,
    fetch_url: String,
    shown_url: String,
    auth: Auth,
    fetches: Cell<usize>,
    received_objects: Cell<usize>,
    /// The bytes the running fetch has received, for its [`Pager`](super::pageout::Pager).
    received_bytes: std::sync::Arc<std::sync::atomic::AtomicU64>,
}

impl<'r> Session<'r> {
    fn new(repo: &'r Repository, fetch_url: &str, budget: &'r Budget) -> Self {
        Session {
            repo,
            budget,
            fetch_url: fetch_url.to_string(),
            shown_url: redact(fetch_url),
            auth: Auth::new(fetch_url, std::env::var("GITHUB_TOKEN").ok()),
            fetches: Cell::new(0),
            received_objects: Cell::new(0),
            received_bytes: Default::default(),
        }
    }

    /// Credentials, and on every transfer the progress line and the budget.
    /// libgit2 keeps one transfer-progress callback: a second one set would
    /// replace the first, so both jobs share this one.
    fn callbacks(&self) -> RemoteCallbacks<'_> {
        let mut cb = self.auth.callbacks();
        cb.transfer_progress(|stats| {
            self.auth.show_progress(&stats);
            self.received_bytes.store(
                stats.received_bytes() as u64,
                std::sync::atomic::Ordering::Relaxed,
            );
            self.budget.allows(
                stats.received_bytes() as u64,
                stats.received_objects() as u64,
                stats.total_objects() as u64,
            )
        });
        cb
    }

    fn fetch_options(&self) -> FetchOptions<'_> {
        let mut fo = FetchOptions::new();
        fo.remote_callbacks(self.callbacks())
            .download_tags(AutotagOption::None)
            .prune(FetchPrune::Off)
            .update_fetchhead(false);
        fo
    }

    fn classify(&self, e: &git2::Error) -> FetchError {
        if let Some(reason) = self.budget.tripped() {
            return FetchError::Network {
                url: self.shown_url.clone(),
                reason,
                cause: NetworkCause::Limit,
            };
        }
        if let Some(size) = crate::alloc::take_refused() {
            let mib = |n: u64| format!("{:.1} MiB", n as f64 / f64::from(1 << 20));
            return FetchError::Network {
                url: self.shown_url.clone(),
                reason: format!(
                    "indexing the pack needs {} at once (an object it expands to, or the \
                     table of the objects it announces), over the {} one allocation may take: \
                     the fetch was stopped before it was built (raise --max-document-size or \
                     --max-fetch-objects if you trust the server)",
                    mib(size as u64),
                    mib(crate::alloc::limit())
                ),
                cause: NetworkCause::Limit,
            };
        }
        // A full disk or a permission problem in the cache is not the network's.
        if let Some(kind) = local_io_kind(e.message()) {
            let reason = clean_message(e.message(), &self.auth.secrets());
            return FetchError::io(self.repo.path(), std::io::Error::new(kind, reason));
        }
        classify(
            e,
            &self.shown_url,
            self.auth.outcome(),
            &self.auth.secrets(),
        )
    }

    fn local_error(&self, e: &git2::Error) -> FetchError {
        FetchError::Git {
            url: self.repo.path().display().to_string(),
            reason: clean_message(e.message(), &self.auth.secrets()),
        }
    }

    fn has_object(&self, oid: Oid) -> bool {
        self.repo.odb().is_ok_and(|odb| odb.exists(oid))
    }

    fn run(&self, wanted: &[Oid], opts: &SyncOptions) -> Result<SyncReport, FetchError> {
        let before: Vec<bool> = wanted.iter().map(|&oid| self.has_object(oid)).collect();
        let adv = self.mirror()?;
        self.prune(&adv.mirrored)?;
        self.record_head(&adv)?;

        let mut statuses: Vec<WantedStatus> = wanted
            .iter()
            .zip(&before)
            .map(|(&oid, &was_here)| WantedStatus {
                oid,
                found: if was_here {
                    Some(FoundBy::Cache)
                } else if self.has_object(oid) {
                    Some(FoundBy::BranchesOrTags)
                } else {
                    None
                },
                by_id_error: None,
            })
            .collect();
        let by_id_supported = self.fetch_by_id(&mut statuses)?;
        let (other_fetched, other_skipped) =
            self.fetch_other_refs(&adv, &mut statuses, by_id_supported, opts)?;

        Ok(SyncReport {
            path: PathBuf::new(),
            offline: false,
            fetched: self.fetches.get() > 0,
            fetches: self.fetches.get(),
            received_objects: self.received_objects.get(),
            head: None,
            default_branch: None,
            wanted: statuses,
            other_refs_fetched: other_fetched,
            other_refs_skipped: other_skipped,
            repaired: None,
            carried: Vec::new(),
            skipped_refs: adv.skipped.clone(),
            all_refs: None,
        })
    }

    /// On one connection: lists the remote's refs and, when they moved, fetches
    /// the branches and tags over it. What the remote advertised.
    fn mirror(&self) -> Result<Advertisement, FetchError> {
        let mut remote = self.new_remote()?;
        let mut conn = remote
            .connect_auth(Direction::Fetch, Some(self.callbacks()), None)
            .map_err(|e| self.classify(&e))?;
        let heads = list_raw(conn.remote()).map_err(|e| self.classify(&e))?;
        let adv = Advertisement::from_raw(heads);
        // Matching refs mean the mirror can't gain anything; missing
        // wanted commits are asked for by id after.
        if !self.mirror_matches(&adv.mirrored) {
            let mut fo = self.fetch_options();
            let _pager = super::pageout::Pager::start(self.repo.path(), &self.received_bytes);
            let _ = crate::alloc::take_refused();
            // The objects only: the branches and tags are then written
            // packed, in one file, not one file each (a forge may advertise
            // hundreds of thousands).
            let result = conn.remote().download(&MIRROR_SPECS, Some(&mut fo));
            self.count(conn.remote(), result.is_ok());
            result.map_err(|e| self.classify(&e))?;
            pack_refs(self.repo, Some(&adv.mirrored))
                .map_err(|e| FetchError::io(self.repo.path(), e))?;
        }
        Ok(adv)
    }

    /// Asks for each wanted commit still missing by its id, one commit per
    /// fetch (a server refuses the whole request when it refuses one id),
    /// noting in `statuses` what came and why the rest did not. Whether the
    /// remote serves commits by id at all.
    fn fetch_by_id(&self, statuses: &mut [WantedStatus]) -> Result<bool, FetchError> {
        let mut by_id_supported = true;
        for status in statuses.iter_mut().filter(|s| s.found.is_none()) {
            if !by_id_supported {
                status.by_id_error = Some(format!("{NO_WANT_BY_ID} from the remote repository"));
                continue;
            }
            let hex = status.oid.to_string();
            let spec = format!("+{hex}:{PINNED_NS}{hex}");
            match self.fetch(&[spec], "pinaudit: by id") {
                Ok(()) if self.has_object(status.oid) => status.found = Some(FoundBy::Id),
                Ok(()) => {
                    status.by_id_error = Some("the remote sent no such commit".to_string());
                }
                Err(e) => {
                    if self.budget.tripped().is_some() {
                        return Err(self.classify(&e));
                    }
                    let reason = clean_message(e.message(), &self.auth.secrets());
                    match self.classify(&e) {
                        err @ FetchError::Authentication { .. } => return Err(err),
                        FetchError::Network { .. } if !is_timeout(&e) => {
                            // A stock server refuses a want by closing the
                            // connection (git:// and smart HTTP send no ERR
                            // line libgit2 can read), which looks like a
                            // network failure. If the server still answers,
                            // it was a refusal.
                            self.probe()?;
                            status.by_id_error = Some(format!(
                                "the remote closed the connection instead of sending it ({reason})"
                            ));
                        }
                        err @ FetchError::Network { .. } => return Err(err),
                        _ => {
                            by_id_supported = !reason.contains(NO_WANT_BY_ID);
                            status.by_id_error = Some(reason);
                        }
                    }
                }
            }
        }
        Ok(by_id_supported)
    }

    /// A fresh anonymous remote: never saved in the mirror's config (so the
    /// fetch URL, which may hold a credential, never reaches the disk), and
    /// with transfer statistics of its own.
    fn new_remote(&self) -> Result<git2::Remote<'r>, FetchError> {
        self.repo
            .remote_anonymous(&self.fetch_url)
            .map_err(|e| self.classify(&e))
    }

    /// One fetch of `specs` on its own connection, counted.
    fn fetch(&self, specs: &[String], reflog: &str) -> Result<(), git2::Error> {
        let mut remote = self.repo.remote_anonymous(&self.fetch_url)?;
        let mut fo = self.fetch_options();
        let _pager = super::pageout::Pager::start(self.repo.path(), &self.received_bytes);
        // A refusal this fetch did not cause is not its reason.
        let _ = crate::alloc::take_refused();
        let result = remote.fetch(specs, Some(&mut fo), Some(reflog));
        self.count(&remote, result.is_ok());
        result
    }

    /// Connect and list the refs again: `Ok` when the remote answers.
    fn probe(&self) -> Result<(), FetchError> {
        let mut remote = self.new_remote()?;
        let conn = remote
            .connect_auth(Direction::Fetch, Some(self.callbacks()), None)
            .map_err(|e| self.classify(&e))?;
        conn.list().map_err(|e| self.classify(&e))?;
        Ok(())
    }

    /// Count a fetch run on `remote`. libgit2 fills a remote's statistics
    /// only when a pack is downloaded, so they are read only after a
    /// successful fetch on a remote that ran no other.
    fn count(&self, remote: &git2::Remote<'_>, succeeded: bool) {
        self.fetches.set(self.fetches.get() + 1);
        if !succeeded {
            return;
        }
        let stats = remote.stats();
        self.received_objects
            .set(self.received_objects.get() + stats.received_objects());
    }

    /// Whether every mirrored ref of the mirror equals the advertisement
    /// (same names, same ids).
    fn mirror_matches(&self, advertised: &BTreeMap<String, Oid>) -> bool {
        let local = match self.local_mirrored() {
            Ok(local) => local,
            Err(_) => return false,
        };
        local == *advertised
    }

    fn local_mirrored(&self) -> Result<BTreeMap<String, Oid>, git2::Error> {
        let mut local = BTreeMap::new();
        for glob in ["refs/heads/*", "refs/tags/*"] {
            for r in self.repo.references_glob(glob)? {
                let r = r?;
                if let (Some(name), Some(oid)) = (r.name(), r.target()) {
                    local.insert(name.to_string(), oid);
                }
            }
        }
        Ok(local)
    }

    /// Delete mirrored refs the remote no longer has, so a commit that only
    /// a deleted or force-pushed branch reached stops being reachable.
    fn prune(&self, advertised: &BTreeMap<String, Oid>) -> Result<(), FetchError> {
        let local = self.local_mirrored().map_err(|e| self.local_error(&e))?;
        for name in local.keys().filter(|n| !advertised.contains_key(*n)) {
            if let Ok(mut r) = self.repo.find_reference(name) {
                r.delete().map_err(|e| self.local_error(&e))?;
            }
        }
        Ok(())
    }

    /// Record the remote's HEAD: `refs/pinaudit/head` holds its commit, the
    /// mirror's own HEAD names the default branch (as `git clone --mirror`).
    fn record_head(&self, adv: &Advertisement) -> Result<(), FetchError> {
        match adv.head.filter(|&oid| self.has_object(oid)) {
            Some(oid) => {
                self.repo
                    .reference(HEAD_REF, oid, true, "pinaudit: remote head")
                    .map_err(|e| self.local_error(&e))?;
            }
            None => {
                if let Ok(mut r) = self.repo.find_reference(HEAD_REF) {
                    r.delete().map_err(|e| self.local_error(&e))?;
                }
            }
        }
        if let Some(target) = adv
            .head_target
            .as_deref()
            .filter(|t| t.starts_with("refs/heads/"))
        {
            self.repo
                .set_head(target)
                .map_err(|e| self.local_error(&e))?;
        }
        Ok(())
    }

    /// Fetch other advertised refs into `refs/pinaudit/other/` to find
    /// commits the server would not hand out by id.
    ///
    /// Refs that point exactly at a missing commit always go first. The
    /// others (which may contain it) are only worth fetching when the server
    /// refuses ids outright: a server that allows reachable ids has already
    /// said no ref reaches the commit. They are bounded by
    /// `max_other_refs`, pull-request heads before merge refs, so a large
    /// GitHub repository is not asked for thousands of refs.
    fn fetch_other_refs(
        &self,
        adv: &Advertisement,
        statuses: &mut [WantedStatus],
        by_id_supported: bool,
        opts: &SyncOptions,
    ) -> Result<(usize, usize), FetchError> {
        let missing: BTreeSet<Oid> = statuses
            .iter()
            .filter(|s| s.found.is_none())
            .map(|s| s.oid)
            .collect();
        if missing.is_empty() || adv.other.is_empty() {
            return Ok((0, 0));
        }
        let rank = |r: &Advertised| -> u8 {
            if missing.contains(&r.oid) {
                0
            } else if r.name.ends_with("/merge") {
                2
            } else {
                1
            }
        };
        let mut candidates: Vec<&Advertised> = adv
            .other
            .iter()
            .filter(|r| !by_id_supported || rank(r) == 0)
            .filter(|r| !self.has_object(r.oid) || missing.contains(&r.oid))
            .collect();
        candidates.sort_by_key(|r| rank(r));
        let skipped = candidates.len().saturating_sub(opts.max_other_refs);
        candidates.truncate(opts.max_other_refs);
        if candidates.is_empty() {
            return Ok((0, skipped));
        }
        let specs: Vec<String> = candidates
            .iter()
            .map(|r| {
                let rest = r.name.strip_prefix("refs/").unwrap_or(&r.name);
                format!("+{}:{OTHER_NS}{rest}", r.name)
            })
            .collect();
        self.fetch(&specs, "pinaudit: other refs")
            .map_err(|e| self.classify(&e))?;
        for status in statuses.iter_mut().filter(|s| s.found.is_none()) {
            if self.has_object(status.oid) {
                status.found = Some(FoundBy::OtherRefs);
            }
        }
        Ok((candidates.len(), skipped))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scratch_mirror_is_a_bare_repository_that_names_its_remote() {
        let dir = tempfile::tempdir().expect("tempdir");
        // Quotes, backslashes, a comment character and a control character:
        // what the config parser would misread if written bare.
        let remote = "https://host.example/o/r\"x\\y;#z\u{7}.git";
        let path = dir.path().join("r.git");
        let (repo, scratch) = init_scratch(&path, remote).expect("init");
        assert!(repo.is_bare());
        assert_eq!(scratch, dir.path().join(".r.git.init"));
        let config = repo.config().expect("config");
        assert_eq!(
            config.get_string("pinaudit.remote").expect("remote"),
            "https://host.example/o/r\"x\\y;#z?.git"
        );
        assert!(!config.get_bool("core.logAllRefUpdates").expect("set"));
        assert!(config.get_bool("core.bare").expect("set"));
        // Writable: an object and a ref, read back through a fresh open.
        let oid = repo.blob(b"x\n").expect("blob");
        repo.reference("refs/pinaudit/t", oid, false, "t")
            .expect("ref");
        drop(repo);
        let again = Repository::open_bare(&scratch).expect("reopen");
        assert!(again.find_blob(oid).is_ok());
        assert_eq!(again.refname_to_id("refs/pinaudit/t").ok(), Some(oid));
        assert_eq!(
            fs::read_to_string(scratch.join(OWNER_MARKER)).expect("marker"),
            marker_text(remote)
        );
        check_owned(&scratch, remote, false).expect("owned");
        // This filesystem minds case, so the config does not say otherwise.
        assert!(config.get_bool("core.ignorecase").is_err());
    }

    #[test]
    fn a_mirror_on_a_filesystem_that_ignores_case_says_so() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("config");
        fs::write(&path, mirror_config("https://h.example/o/r", true)).expect("write");
        let config = git2::Config::open(&path).expect("parse");
        assert!(config.get_bool("core.ignorecase").expect("set"));
        assert!(config.get_bool("core.bare").expect("set"));
        assert_eq!(
            config.get_string("pinaudit.remote").expect("remote"),
            "https://h.example/o/r"
        );
    }

    #[test]
    fn github_token_goes_only_to_github_over_https() {
        let token = || Some("ghp_t0ken".to_string());
        assert!(Auth::new("https://github.com/o/r.git", token())
            .github_token
            .is_some());
        assert!(Auth::new("https://x:y@GitHub.com/o/r", token())
            .github_token
            .is_some());
        for url in [
            "http://github.com/o/r.git",
            "https://github.com.evil.example/o/r.git",
            "https://mirror.example/github.com/o/r.git",
            "git://github.com/o/r.git",
        ] {
            assert!(Auth::new(url, token()).github_token.is_none(), "{url}");
        }
        assert!(Auth::new("https://github.com/o/r", Some(" ".to_string()))
            .github_token
            .is_none());
    }

    #[test]
    fn token_is_not_offered_to_a_redirect_target() {
        let auth = Auth::new("https://github.com/o/r.git", Some("ghp_t0ken".to_string()));
        assert_eq!(
            auth.token_for("https://github.com/o/r.git"),
            Some("ghp_t0ken")
        );
        assert_eq!(
            auth.token_for("HTTPS://GitHub.com:443/o/r"),
            Some("ghp_t0ken")
        );
        for asked in [
            "https://evil.example/o/r.git",
            "http://github.com/o/r.git",
            "https://github.com:8443/o/r.git",
            "https://github.com.evil.example/o/r.git",
            "https://user@127.0.0.2/github.com/o/r.git",
        ] {
            assert_eq!(auth.token_for(asked), None, "{asked}");
        }
    }

    /// The progress line shows objects and bytes: the budget's callback on the
    /// same transfer must not replace it.
    #[test]
    fn a_cold_fetch_shows_objects_and_bytes_on_the_progress_line() {
        let dir = tempfile::tempdir().expect("tempdir");
        let origin = Repository::init(dir.path().join("origin")).expect("init");
        let sig = git2::Signature::now("T", "t@example.invalid").expect("signature");
        let blob = origin.blob(b"decode: 2.9 tok/s\n").expect("blob");
        let mut tree = origin.treebuilder(None).expect("treebuilder");
        tree.insert("notes.md", blob, 0o100644).expect("insert");
        let tree = origin.find_tree(tree.write().expect("tree")).expect("tree");
        let commit = origin
            .commit(Some("HEAD"), &sig, &sig, "notes", &tree, &[])
            .expect("commit");
        let url = format!("file://{}", dir.path().join("origin").display());
        let cache = GitCache::new(dir.path().join("cache"));
        /// A progress line that keeps the last message it was told.
        #[derive(Default)]
        struct Recorded(std::sync::Mutex<String>);
        impl crate::progress::Line for Recorded {
            fn message(&self, message: String) {
                *self.0.lock().unwrap_or_else(|e| e.into_inner()) = message;
            }
            fn inc(&self, _: u64) {}
            fn finish(&self) {}
        }
        let line = std::sync::Arc::new(Recorded::default());
        cache
            .sync_docs(
                "https://example.invalid/o/r.git",
                &url,
                &[(commit, None)],
                &SyncOptions::default(),
                Some(line.clone() as std::sync::Arc<dyn crate::progress::Line>),
            )
            .expect("sync");
        let shown = line.0.lock().unwrap_or_else(|e| e.into_inner()).clone();
        assert!(
            shown.contains(" objects, ") && shown.ends_with('B'),
            "{shown:?}"
        );
    }

    #[test]
    fn credentials_are_offered_once() {
        let auth = Auth::new("https://github.com/o/r.git", Some("ghp_t0ken".to_string()));
        let url = "https://github.com/o/r.git";
        assert!(auth
            .credentials(url, None, CredentialType::USER_PASS_PLAINTEXT)
            .is_ok());
        let again = auth.credentials(url, None, CredentialType::USER_PASS_PLAINTEXT);
        let message = again
            .err()
            .map(|e| e.message().to_string())
            .unwrap_or_default();
        assert!(message.contains("refused"), "{message}");
        assert!(!message.contains("ghp_t0ken"));
        assert!(auth.outcome().asked);
        assert_eq!(auth.secrets(), ["ghp_t0ken"]);
    }
}
