//! The git cache as a [`Provider`] of revisions, documents, heads and models: one
//! bare mirror per remote, synced once per run.

use std::cell::{OnceCell, RefCell};
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};

use git2::Oid;

use super::{
    model, DocRef, Documents, Head, Heads, ModelFacts, ModelRef, Models, OtherVersion, Provider,
    RevisionFacts, Revisions, Snapshot, Target, Unchecked, WeightFile,
};
use crate::sources::{self, SyncPlan};
use crate::stream::STREAM_THRESHOLD;
use crate::{BlobHashCache, CachedRepo, FetchError, FoundBy, GitCache, SyncReport};

/// A synced remote and the mirror it left.
struct Remote {
    sync: SyncReport,
    repo: CachedRepo,
    /// Every commit a branch or tag reaches, walked once on first use.
    reachable: OnceCell<Result<HashSet<Oid>, Arc<FetchError>>>,
    /// A digest of the branch and tag tips the reachable set depends on.
    tips: OnceCell<Option<[u8; 32]>>,
    /// Every version of a path (for `hash_elsewhere`), walked once per path.
    versions: RefCell<HashMap<String, Arc<Vec<crate::PathVersion>>>>,
    /// `hash_elsewhere`'s answer per (path, pinned blob, expected sha256): the
    /// sources citing one document with one wrong hash get it once.
    elsewhere: RefCell<HashMap<ElsewhereKey, Option<OtherVersion>>>,
    /// Each cited commit's committer time (`None`: not in the cache), read once:
    /// the sources of a run cite far fewer commits than they number.
    commits: RefCell<HashMap<Oid, Option<(i64, i32)>>>,
    /// The blob at (commit, path), looked up once (a commit and tree read each).
    blob_ids: RefCell<HashMap<(Oid, String), Option<Oid>>>,
    /// The commits the default-branch head contains, walked once on first use.
    in_default: OnceCell<Option<(Oid, HashSet<Oid>)>>,
    /// The recorded default-branch head, read once (a ref file read per source
    /// was a tenth of a large re-check).
    default_head: OnceCell<Option<Oid>>,
    /// Head documents already read this run, by (head commit, path): many sources
    /// cite one document, whose head is read once. Documents over
    /// [`HEAD_MEMO_BYTES`] are read again rather than kept.
    heads: RefCell<HashMap<(Oid, String), HeadSeen>>,
    /// Set when the remote could not be reached and the cache stood in for it:
    /// when the mirror last synced, RFC 3339.
    stale_since: Option<String>,
}

impl Remote {
    /// A mirror opened for a run, with nothing read from it yet.
    fn new(sync: SyncReport, repo: CachedRepo, stale_since: Option<String>) -> Self {
        Remote {
            sync,
            repo,
            reachable: OnceCell::new(),
            tips: OnceCell::new(),
            versions: RefCell::default(),
            elsewhere: RefCell::default(),
            commits: RefCell::default(),
            blob_ids: RefCell::default(),
            in_default: OnceCell::new(),
            default_head: OnceCell::new(),
            heads: RefCell::default(),
            stale_since,
        }
    }

    /// [`CachedRepo::commit_time`], remembered for the run.
    fn commit_time(&self, oid: Oid) -> Option<(i64, i32)> {
        if let Some(known) = self.commits.borrow().get(&oid) {
            return *known;
        }
        let time = self.repo.commit_time(oid);
        self.commits.borrow_mut().insert(oid, time);
        time
    }

    /// Whether the cache holds commit `oid` (as [`CachedRepo::has_commit`]).
    fn has_commit(&self, oid: Oid) -> bool {
        self.commit_time(oid).is_some()
    }

    /// [`CachedRepo::blob_id_at`], its answers remembered for the run (an
    /// error is not: it is asked again).
    fn blob_id_at(&self, oid: Oid, path: &str) -> Result<Option<Oid>, FetchError> {
        let key = (oid, path.to_string());
        if let Some(known) = self.blob_ids.borrow().get(&key) {
            return Ok(*known);
        }
        let id = self.repo.blob_id_at(oid, path)?;
        self.blob_ids.borrow_mut().insert(key, id);
        Ok(id)
    }
}

/// A `hash_elsewhere` question: (path, pinned blob, expected sha256 in lower case).
type ElsewhereKey = (String, Option<String>, String);

/// A head's blob at a path, and the document it holds when readable.
type HeadSeen = (Option<Oid>, Option<Snapshot>);

/// The largest head or pinned document kept in memory for the rest of a run.
const HEAD_MEMO_BYTES: usize = 1 << 20;
/// The most bytes of pinned documents kept in memory for the rest of a run.
const SNAPSHOT_MEMO_BYTES: usize = 64 << 20;

pub struct GitProvider {
    cache: GitCache,
    plan: SyncPlan,
    hashes: BlobHashCache,
    drift: crate::store::DriftMemo,
    checks: crate::store::CheckMemo,
    /// Whole records' results (`CACHE/records.store`).
    records: crate::store::CheckMemo,
    /// Whole records' report fragments (`CACHE/fragments.store`).
    fragments: crate::store::CheckMemo,
    /// Every remote of the run, opened on first use once its sync has landed
    /// (each provider and fork opens its own handle).
    remotes: HashMap<String, OnceCell<Result<Remote, Arc<FetchError>>>>,
    /// How the run's syncs went, remote by remote as they land; shared with
    /// the forks.
    landing: Arc<Landing>,
    /// Pinned documents already read this run, by blob id (small ones, up to
    /// [`SNAPSHOT_MEMO_BYTES`] in all).
    snapshots: RefCell<HashMap<Oid, Snapshot>>,
    snapshot_bytes: std::cell::Cell<usize>,
    /// Each remote's refs digest as its sync reported it, once asked
    /// ([`Revisions::refs_digest`]).
    refs_keys: RefCell<HashMap<String, Option<[u8; 32]>>>,
    /// Whether dropping this provider writes the stores (a fork leaves that to
    /// the provider it was forked from).
    persist: bool,
    /// The largest document read, in bytes (`--max-document-size`): a blob over it
    /// is never inflated, so a small pack of a huge document can't exhaust memory.
    max_document_size: u64,
}

/// `--max-document-size` for git documents by default: 4 GiB. Documents over
/// [`STREAM_THRESHOLD`] are read as streams, so the ceiling bounds the work
/// (each pass over a 4 GiB document takes seconds), not the memory.
pub const DEFAULT_MAX_SIZE: u64 = 4 << 30;

/// Why a document over `--max-document-size` was not read.
fn too_large(size: u64, max: u64) -> Unchecked {
    Unchecked::Unresolvable(sources::Skip::TooLarge { size, max })
}

/// The version of what this provider remembers in `checks.store` and
/// `drift.store`: the checks' derivation version, and a digest of the code of
/// this crate that answers there too (a cited commit's reachability, a path's
/// versions in history, a blob's size: `repo.rs` and this file), so that a
/// build that reads them otherwise never takes an older build's answers.
fn answers_version() -> String {
    let fetch =
        pinaudit_core::hash::sources_digest(&[include_str!("../repo.rs"), include_str!("git.rs")]);
    format!("{}-{fetch}", pinaudit_core::check::derivation_version())
}

impl GitProvider {
    /// The provider of `cache`'s mirrors, synced as `plan` says; whole-record
    /// results are kept for `records_version` (see [`super::Setup`]).
    /// With `fragments_first`, records are looked up whole first, so the
    /// fragments are read from the start and the record results when first
    /// asked; else the other way round. Fragments are kept for
    /// `fragments_version`.
    pub fn new(
        cache: GitCache,
        plan: SyncPlan,
        records_version: &str,
        fragments_version: &str,
        fragments_first: bool,
    ) -> GitProvider {
        let hashes = cache.blob_hashes();
        let key = cache.key().clone();
        let version = answers_version();
        let drift = crate::store::DriftMemo::new(cache.root(), &version, key.clone());
        let checks = crate::store::CheckMemo::new(cache.root(), &version, key.clone());
        let records = crate::store::CheckMemo::records(
            cache.root(),
            &version,
            records_version,
            key.clone(),
            !fragments_first,
        );
        let fragments = crate::store::CheckMemo::fragments(
            cache.root(),
            &version,
            fragments_version,
            key,
            fragments_first,
        );
        GitProvider {
            cache,
            plan,
            hashes,
            drift,
            checks,
            records,
            fragments,
            remotes: HashMap::new(),
            landing: Landing::start(Vec::new()),
            snapshots: RefCell::default(),
            snapshot_bytes: std::cell::Cell::new(0),
            refs_keys: RefCell::default(),
            persist: true,
            max_document_size: DEFAULT_MAX_SIZE,
        }
    }

    /// Documents over `max` bytes are not read: their sources are `unchecked`.
    pub fn with_max_document_size(mut self, max: u64) -> GitProvider {
        self.max_document_size = max;
        self
    }

    /// Blob `id` of `r`'s repository as a stream that checks the blob id at its
    /// end (see [`CachedRepo::blob_stream`]).
    fn blob_reader(
        &self,
        r: &DocRef,
        repo: &CachedRepo,
        id: Oid,
    ) -> Result<Box<dyn std::io::Read + Send>, Unchecked> {
        match repo.blob_stream(id, self.max_document_size) {
            Ok(Some(reader)) => Ok(reader),
            Ok(None) => Err(Unchecked::Unresolvable(sources::Skip::NotStreamable {
                blob: id.to_string(),
                max: self.max_document_size,
            })),
            Err(e) => Err(tool(r, e)),
        }
    }

    /// The snapshot of a blob too large to hold: its sha256 from the store, or
    /// computed from a stream (issues 12, 13); its bytes are never kept.
    fn streamed_snapshot(
        &self,
        r: &DocRef,
        repo: &CachedRepo,
        id: Oid,
        size: u64,
    ) -> Result<Snapshot, Unchecked> {
        let sha256 = match self
            .hashes
            .get(id, usize::try_from(size).unwrap_or(usize::MAX))
        {
            Some(hex) => hex,
            None => {
                let reader = self.blob_reader(r, repo, id)?;
                let (len, sha) =
                    crate::stream_sha256(reader).map_err(|e| super::read_failed(&r.remote, e))?;
                self.hashes
                    .put(id, usize::try_from(len).unwrap_or(usize::MAX), sha);
                crate::hash::to_hex(&sha)
            }
        };
        Ok(Snapshot {
            bytes: Vec::new(),
            loaded: false,
            sha256,
            git_blob: Some(id.to_string()),
            streamed: true,
        })
    }

    /// The sha256 and variant hashes of a blob too large to hold, streamed.
    fn streamed_variants(
        &self,
        r: &DocRef,
        repo: &CachedRepo,
        id: Oid,
    ) -> Option<(String, Vec<(&'static str, String)>)> {
        self.hashes.with_variant_hashes(id, || {
            let reader = self.blob_reader(r, repo, id).ok()?;
            crate::stream_variant_hashes(reader).ok()
        })
    }

    /// Keeps a document read whole in the run's memo of read blobs (one of at
    /// most [`HEAD_MEMO_BYTES`], while the memo holds less than
    /// [`SNAPSHOT_MEMO_BYTES`]), so it is not read again.
    fn remember(&self, id: Oid, snapshot: &Snapshot) {
        let size = snapshot.bytes.len();
        let used = self.snapshot_bytes.get();
        if snapshot.loaded
            && !snapshot.streamed
            && size <= HEAD_MEMO_BYTES
            && used + size <= SNAPSHOT_MEMO_BYTES
            && !self.snapshots.borrow().contains_key(&id)
        {
            self.snapshot_bytes.set(used + size);
            self.snapshots.borrow_mut().insert(id, snapshot.clone());
        }
    }

    /// The bytes of blob `id` for `hash_elsewhere`, from the run's memo of
    /// read blobs when there (a version is often another source's pinned
    /// document), else read when it fits the size cap. Not kept: holding every
    /// version looked at took 10 MiB more at 20,000 citations.
    fn version_bytes(&self, repo: &CachedRepo, id: Oid) -> Option<Vec<u8>> {
        if let Some(seen) = self.snapshots.borrow().get(&id) {
            return Some(seen.bytes.clone());
        }
        self.fits(repo, id).then(|| repo.blob(id)).flatten()
    }

    /// Whether blob `id` of `repo` is within `--max-document-size` (a blob whose
    /// size can't be read is left to the read to report).
    fn fits(&self, repo: &CachedRepo, id: Oid) -> bool {
        self.blob_size(repo, id)
            .is_none_or(|size| size <= self.max_document_size)
    }

    /// `remote` as this run synced it, opened on first use (waiting for its
    /// sync to land); `None` for a remote the run did not sync.
    fn remote_named(&self, remote: &str) -> Option<&Result<Remote, Arc<FetchError>>> {
        let slot = self.remotes.get(remote)?;
        Some(slot.get_or_init(|| {
            let (sync, stale_since) = self.landing.wait(remote)?;
            let repo = self.cache.open(remote).map_err(Arc::new)?;
            Ok(Remote::new(sync, repo, stale_since))
        }))
    }

    fn remote(&self, r: &DocRef) -> Result<&Remote, Unchecked> {
        match self.remote_named(&r.remote) {
            Some(Ok(remote)) => Ok(remote),
            Some(Err(error)) => Err(Unchecked::Fetch {
                remote: r.remote.clone(),
                error: error.clone(),
            }),
            None => Err(Unchecked::Unresolvable(sources::Skip::NotFetched)),
        }
    }

    /// The repository and commit of a document that the cache holds.
    fn at(&self, r: &DocRef) -> Result<(&Remote, Oid), Unchecked> {
        let remote = self.remote(r)?;
        let oid = oid(r)?;
        if !remote.repo.has_commit(oid) {
            return Err(Unchecked::NotCached);
        }
        Ok((remote, oid))
    }
}

impl GitProvider {
    /// Whether `oid` is in a set of commits that depends only on `tips` (the
    /// reachable set of the branch and tag tips, the ancestry of the default
    /// branch), as remembered for `r`'s remote in `checks.store`: one entry per
    /// remote, replaced when its tips move, so it does not grow with syncs.
    fn remembered_membership(
        &self,
        domain: &str,
        r: &DocRef,
        tips: [u8; 32],
        oid: Oid,
    ) -> Option<bool> {
        let key = crate::store::CheckMemo::key(domain, &[r.remote.as_bytes()]);
        self.checks
            .peek(&key, |entry| {
                let rest = entry.strip_prefix(tips.as_slice())?;
                rest.chunks_exact(21).find_map(|c| match c.split_at(20) {
                    (id, [answer]) if id == oid.as_bytes() => Some(*answer == 1),
                    _ => None,
                })
            })
            .flatten()
    }

    fn remember_membership(&self, domain: &str, r: &DocRef, tips: [u8; 32], oid: Oid, yes: bool) {
        let key = crate::store::CheckMemo::key(domain, &[r.remote.as_bytes()]);
        let mut entry = match self.checks.get(&key) {
            Some(e) if e.starts_with(&tips) && (e.len() - 32) % 21 == 0 => e,
            _ => tips.to_vec(),
        };
        // In commit order, not in the order records were checked (which
        // depends on when each remote landed): the store's bytes stay the same.
        let before = entry[32..]
            .chunks_exact(21)
            .take_while(|c| c[..20] < *oid.as_bytes())
            .count();
        let at = 32 + before * 21;
        let answer = oid.as_bytes().iter().copied().chain([u8::from(yes)]);
        entry.splice(at..at, answer);
        self.checks.put(key, entry);
    }
}

impl GitProvider {
    /// The size of blob `id`: remembered in `checks.store` (reading a packed
    /// blob's header rebuilds its delta chain's headers, a tenth of a re-check).
    /// Only a size within `--max-document-size` is taken from the store; one over
    /// it is read again, so a wrong entry can't make a document unchecked.
    /// The size `blobs.store` holds with the blob's sha256 comes first: a
    /// `checks.store` entry alone must not decide whether a document is read as
    /// a stream (that changes how drift is found).
    fn blob_size(&self, repo: &CachedRepo, id: Oid) -> Option<u64> {
        if let Some(size) = self
            .hashes
            .known_size(id)
            .filter(|&size| size <= self.max_document_size)
        {
            return Some(size);
        }
        let key = crate::store::CheckMemo::key("blob-size", &[id.as_bytes()]);
        let remembered = self
            .checks
            .peek(&key, |v| {
                <[u8; 8]>::try_from(v).ok().map(u64::from_le_bytes)
            })
            .flatten()
            .filter(|&size| size <= self.max_document_size);
        if remembered.is_some() {
            return remembered;
        }
        let size = repo.blob_size(id)?;
        self.checks.put(key, size.to_le_bytes().to_vec());
        Some(size)
    }
}

impl GitProvider {
    /// A version of `r`'s path other than the pinned one whose content (or a
    /// variant of it) hashes to `expected` (lower case). The blob size that
    /// decides whether a version is streamed comes from `blobs.store` when it
    /// holds the blob, else from the object header.
    fn find_elsewhere(
        &self,
        remote: &Remote,
        r: &DocRef,
        pinned: &Snapshot,
        expected: &str,
    ) -> Option<OtherVersion> {
        let repo = &remote.repo;
        let known = remote.versions.borrow().get(&r.path).cloned();
        let versions = match known {
            Some(v) => v,
            None => {
                let v = Arc::new(self.path_versions(remote, r)?);
                remote
                    .versions
                    .borrow_mut()
                    .insert(r.path.clone(), v.clone());
                v
            }
        };
        versions.iter().find_map(|v| {
            if Some(v.blob.to_string()) == pinned.git_blob {
                return None;
            }
            // From the store when this blob was seen before: nothing is read.
            let size = self
                .hashes
                .known_size(v.blob)
                .or_else(|| repo.blob_size(v.blob))
                .unwrap_or(0);
            let (sha, variants) = if size > STREAM_THRESHOLD && self.fits(repo, v.blob) {
                self.streamed_variants(r, repo, v.blob)?
            } else {
                self.hashes
                    .with_variants(v.blob, || self.version_bytes(repo, v.blob))?
            };
            let variant = if sha == *expected {
                None
            } else {
                Some(variants.into_iter().find(|(_, h)| *h == *expected)?.0)
            };
            Some(OtherVersion {
                commit: v.commit.to_string(),
                git_blob: v.blob.to_string(),
                commit_time: pinaudit_core::check::revision::rfc3339(v.time, 0),
                variant,
            })
        })
    }
}

impl GitProvider {
    /// Every version of `r`'s path in its remote's history: remembered in
    /// `checks.store` while every ref of the mirror stands still (the walk reads
    /// every commit's tree, a twentieth of a large re-check).
    fn path_versions(&self, remote: &Remote, r: &DocRef) -> Option<Vec<crate::PathVersion>> {
        // Every ref, as the sync left them (what path histories are walked from).
        let refs = remote.sync.all_refs;
        let key = crate::store::CheckMemo::key(
            "path-versions",
            &[r.remote.as_bytes(), r.path.as_bytes()],
        );
        if let Some(refs) = refs {
            let remembered = self
                .checks
                .peek(&key, |v| decode_versions(v, &refs))
                .flatten();
            if remembered.is_some() {
                return remembered;
            }
        }
        let versions = remote.repo.path_versions(&r.path).ok()?;
        if let Some(refs) = refs {
            let mut v = refs.to_vec();
            for pv in &versions {
                v.extend_from_slice(pv.commit.as_bytes());
                v.extend_from_slice(pv.blob.as_bytes());
                v.extend_from_slice(&pv.time.to_le_bytes());
            }
            self.checks.put(key, v);
        }
        Some(versions)
    }
}

/// Path versions remembered for the refs digest `refs`; `None` for another
/// digest or bytes that do not decode.
fn decode_versions(v: &[u8], refs: &[u8; 32]) -> Option<Vec<crate::PathVersion>> {
    let rest = v.strip_prefix(refs.as_slice())?;
    if rest.len() % 48 != 0 {
        return None;
    }
    rest.chunks_exact(48)
        .map(|c| {
            Some(crate::PathVersion {
                commit: Oid::from_bytes(&c[..20]).ok()?,
                blob: Oid::from_bytes(&c[20..40]).ok()?,
                time: i64::from_le_bytes(c[40..48].try_into().ok()?),
            })
        })
        .collect()
}

impl Drop for GitProvider {
    /// The blob store is written once, when the run is over (best effort: a
    /// read-only cache must not fail an audit).
    fn drop(&mut self) {
        if !self.persist {
            return;
        }
        // The syncs write the cache too: they are over first.
        self.landing.settle();
        let _ = self.hashes.persist();
        let _ = self.drift.persist();
        let _ = self.checks.persist();
        let _ = self.records.persist();
        let _ = self.fragments.persist();
        let _ = self.cache.persist_verified();
    }
}

fn oid(r: &DocRef) -> Result<Oid, Unchecked> {
    Oid::from_str(r.commit.as_str()).map_err(|_| {
        Unchecked::Unresolvable(sources::Skip::UnsupportedCommitId {
            commit: r.commit.to_string(),
        })
    })
}

fn tool(r: &DocRef, error: FetchError) -> Unchecked {
    Unchecked::Tool {
        remote: r.remote.clone(),
        error: Arc::new(error),
    }
}

impl GitProvider {
    /// Syncs the remotes of the git documents and of the model repositories:
    /// one sync per repository, however many sources cite it. Online, the
    /// syncs run on a thread of their own and this returns at once: each
    /// question about a remote waits until its sync has landed, so a record is
    /// checked as soon as its own remotes are synced, while the others are
    /// still syncing. Offline (nothing to wait for) they run here.
    fn prefetch_git(&mut self, refs: &[&DocRef], models: &[&ModelRef]) {
        // Before the first git2 call (`Oid::from_str` included): OpenSSL's
        // start-up loads the CA bundle only when a remote may be reached over
        // TLS. Each remote is rewritten once, and not at all offline (a
        // re-check cites tens of thousands of documents in a few dozen
        // repositories).
        let online = !self.plan.sync.offline;
        let urls: Vec<String> = match online {
            true => {
                let remotes: foldhash::HashSet<&str> = refs
                    .iter()
                    .map(|r| r.remote.as_str())
                    .chain(models.iter().map(|m| m.remote.as_str()))
                    .collect();
                remotes
                    .into_iter()
                    .map(|remote| crate::apply_rewrites(&self.plan.rewrites, remote))
                    .collect()
            }
            false => Vec::new(),
        };
        crate::tls::prepare(online, urls.iter().map(String::as_str));
        let extra: Vec<(String, Option<Oid>)> = models
            .iter()
            .map(|m| {
                let commit = m.revision.as_ref().and_then(|r| r.commit());
                let oid = commit.and_then(|c| Oid::from_str(c.as_str()).ok());
                (m.remote.clone(), oid)
            })
            .collect();
        let wanted = sources::wanted(refs, &extra);
        // A second prefetch waits for the first to be over.
        self.landing.settle();
        let names: Vec<String> = wanted.iter().map(|(remote, _)| remote.clone()).collect();
        self.remotes = names.iter().map(|r| (r.clone(), OnceCell::new())).collect();
        self.landing = Landing::start(names);
        self.refs_keys = RefCell::default();
        let syncs = Syncs {
            cache: self.cache.clone(),
            plan: self.plan.clone(),
            landing: self.landing.clone(),
        };
        if self.plan.sync.offline {
            return syncs.run(wanted);
        }
        // Handed over through a cell, so that it is still here when no thread starts.
        let wanted = Arc::new(Mutex::new(Some(wanted)));
        let (run, theirs) = (syncs.clone(), wanted.clone());
        let started = std::thread::Builder::new()
            .name("pinaudit-sync".into())
            .spawn(move || run.run(take(&theirs)));
        match started {
            Ok(thread) => self.landing.syncing_on(thread),
            // No thread to spare: synced here, before anything is checked.
            Err(_) => syncs.run(take(&wanted)),
        }
    }
}

/// What a cell holds, taken out of it.
fn take(cell: &Mutex<Option<sources::Wanted>>) -> sources::Wanted {
    cell.lock()
        .unwrap_or_else(PoisonError::into_inner)
        .take()
        .unwrap_or_default()
}

/// One remote's sync as the provider keeps it: its report and, when the
/// cache stood in for an unreachable remote, since when it is stale (RFC
/// 3339); or why it failed.
type Landed = Result<(SyncReport, Option<String>), Arc<FetchError>>;

/// The syncs of a run as they land, shared by the provider that started them
/// and its forks: who asks about a remote waits for that remote only.
struct Landing {
    state: Mutex<Board>,
    moved: Condvar,
    /// Every remote has landed: asking takes no lock.
    all: AtomicBool,
    /// The thread syncing in the background, joined before the stores are
    /// written.
    syncing: Mutex<Option<std::thread::JoinHandle<()>>>,
}

/// What has landed.
#[derive(Default)]
struct Board {
    /// Per remote of the run, how its sync went, once it is over.
    remotes: HashMap<String, Option<Landed>>,
    /// How many have not landed yet.
    waiting: usize,
    /// Remotes that could not be reached but that the cache stood in for.
    stale: Vec<(String, Arc<FetchError>)>,
}

impl Landing {
    /// The landing of the syncs of `remotes`, none landed yet.
    fn start(remotes: Vec<String>) -> Arc<Landing> {
        let waiting = remotes.len();
        Arc::new(Landing {
            state: Mutex::new(Board {
                remotes: remotes.into_iter().map(|r| (r, None)).collect(),
                waiting,
                stale: Vec::new(),
            }),
            moved: Condvar::new(),
            all: AtomicBool::new(waiting == 0),
            syncing: Mutex::new(None),
        })
    }

    fn board(&self) -> MutexGuard<'_, Board> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn syncing_on(&self, thread: std::thread::JoinHandle<()>) {
        *self.syncing.lock().unwrap_or_else(PoisonError::into_inner) = Some(thread);
    }

    /// `remote`'s sync is over: those waiting for it go on.
    fn land(&self, remote: String, landed: Landed, stale: Option<Arc<FetchError>>) {
        let mut board = self.board();
        if let Some(error) = stale {
            board.stale.push((remote.clone(), error));
        }
        if let Some(slot @ None) = board.remotes.get_mut(&remote) {
            *slot = Some(landed);
            board.waiting -= 1;
        }
        if board.waiting == 0 {
            self.all.store(true, Ordering::Release);
        }
        self.moved.notify_all();
    }

    /// Every remote not landed yet failed with `reason` (the syncs stopped
    /// short): nobody waits for them forever.
    fn land_the_rest(&self, reason: &str) {
        let rest: Vec<String> = {
            let board = self.board();
            let left = board.remotes.iter().filter(|(_, l)| l.is_none());
            left.map(|(r, _)| r.clone()).collect()
        };
        for remote in rest {
            let error = FetchError::Git {
                url: crate::redact(&remote),
                reason: reason.to_string(),
            };
            self.land(remote, Err(Arc::new(error)), None);
        }
    }

    /// Whether `remote` has landed (or is not one of the run's).
    fn landed(&self, remote: &str) -> bool {
        self.all.load(Ordering::Acquire)
            || self.board().remotes.get(remote).is_none_or(|l| l.is_some())
    }

    /// How `remote`'s sync went, once it has landed.
    fn wait(&self, remote: &str) -> Landed {
        let mut board = self.board();
        loop {
            match board.remotes.get(remote) {
                Some(Some(landed)) => return landed.clone(),
                Some(None) => {}
                None => {
                    return Err(Arc::new(FetchError::Git {
                        url: crate::redact(remote),
                        reason: "not synced by this run".into(),
                    }))
                }
            }
            board = self
                .moved
                .wait(board)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }

    /// Waits until every remote has landed and the syncing thread is over.
    fn settle(&self) {
        let thread = self
            .syncing
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(thread) = thread {
            let _ = thread.join();
        }
        let mut board = self.board();
        while board.waiting > 0 {
            board = self
                .moved
                .wait(board)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }
}

/// The syncs of a run, wherever they run.
#[derive(Clone)]
struct Syncs {
    cache: GitCache,
    plan: SyncPlan,
    landing: Arc<Landing>,
}

impl Syncs {
    /// Syncs every remote of `wanted`, landing each as its sync ends.
    fn run(self, wanted: sources::Wanted) {
        // Whatever happens here (a panic included), nobody waits forever.
        let _rest = LandTheRest(&self.landing);
        // For a remote the network fails on, the commits its cached copy is
        // asked for (offline, no sync reaches the network).
        let docs: HashMap<String, Vec<Oid>> = match self.plan.sync.offline {
            true => HashMap::new(),
            false => wanted
                .iter()
                .map(|(remote, list)| {
                    let mut seen = std::collections::HashSet::new();
                    let oids = list
                        .iter()
                        .filter(|(oid, path)| path.is_some() && seen.insert(*oid))
                        .map(|(oid, _)| *oid)
                        .collect();
                    (remote.clone(), oids)
                })
                .collect(),
        };
        sources::sync_streamed(&self.cache, wanted, &self.plan, &mut |remote, result| {
            let oids = docs.get(&remote).map_or(&[][..], Vec::as_slice);
            let (landed, stale) = self.settle(&remote, result, oids);
            self.landing.land(remote, landed, stale);
        });
    }

    /// What a sync's result leaves the run: the mirror, which opened; when
    /// the network failed, or the forge answered something that is not git's
    /// protocol (garbage, a shallow repository libgit2 cannot fetch from: a
    /// forge that answers garbage is a forge that is down), what the cache
    /// already holds, judged as `--offline` would and marked stale (the
    /// failure still told); else the failure. A forge's verdict (the
    /// repository is missing, credentials are wanted) and the cache's own
    /// failures never stand in.
    fn settle(
        &self,
        remote: &str,
        result: Result<SyncReport, FetchError>,
        oids: &[Oid],
    ) -> (Landed, Option<Arc<FetchError>>) {
        match result {
            // A sync ends by opening the mirror (`GitCache::sync_docs`).
            Ok(sync) => (Ok((sync, None)), None),
            Err(e @ (FetchError::Network { .. } | FetchError::Git { .. })) => {
                let error = Arc::new(e);
                match self.stand_in(remote, oids) {
                    Some(stale) => (Ok(stale), Some(error)),
                    None => (Err(error), None),
                }
            }
            Err(e) => (Err(Arc::new(e)), None),
        }
    }

    /// The mirror of `remote` read offline, for a remote the network failed on,
    /// with when it last synced; `None` when the cache has no mirror of it.
    fn stand_in(&self, remote: &str, oids: &[Oid]) -> Option<(SyncReport, Option<String>)> {
        let offline = crate::SyncOptions {
            offline: true,
            ..self.plan.sync.clone()
        };
        // An offline sync opens the mirror: what it gives opens.
        let sync = self.cache.sync(remote, "", oids, &offline).ok()?;
        let since = self
            .cache
            .last_synced(remote)
            .and_then(|t| pinaudit_core::check::revision::rfc3339(t, 0));
        // Unknown age still means stale.
        Some((sync, Some(since.unwrap_or_else(|| "unknown".to_string()))))
    }
}

/// Lands every remote still waiting when the syncs are over, however they end.
struct LandTheRest<'a>(&'a Landing);

impl Drop for LandTheRest<'_> {
    fn drop(&mut self) {
        self.0
            .land_the_rest("the sync stopped before this remote's was over");
    }
}

impl Provider for GitProvider {
    fn prefetch(&mut self, targets: &[&Target]) {
        let refs: Vec<&DocRef> = targets
            .iter()
            .filter_map(|t| match t {
                Target::Git(d) => Some(d),
                _ => None,
            })
            .collect();
        let models: Vec<&ModelRef> = targets
            .iter()
            .filter_map(|t| match t {
                Target::Model(m) => Some(m),
                _ => None,
            })
            .collect();
        self.prefetch_git(&refs, &models);
    }

    /// Once every sync has landed.
    fn failures(&self) -> Vec<(String, Arc<FetchError>)> {
        self.landing.settle();
        let mut out: Vec<(String, Arc<FetchError>)> = self
            .landing
            .board()
            .remotes
            .iter()
            .filter_map(|(remote, l)| Some((remote.clone(), l.as_ref()?.as_ref().err()?.clone())))
            .collect();
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out
    }

    /// Once every sync has landed.
    fn stale(&self) -> Vec<(String, Arc<FetchError>)> {
        self.landing.settle();
        let mut out = self.landing.board().stale.clone();
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out
    }

    /// The fork opens its own handle on each mirror when it first asks about
    /// it, once the mirror's sync has landed.
    fn fork(&self) -> Option<Box<dyn Provider>> {
        let remotes = self
            .remotes
            .keys()
            .map(|name| (name.clone(), OnceCell::new()))
            .collect();
        Some(Box::new(GitProvider {
            cache: self.cache.clone(),
            plan: self.plan.clone(),
            hashes: self.hashes.clone(),
            drift: self.drift.clone(),
            checks: self.checks.clone(),
            records: self.records.clone(),
            fragments: self.fragments.clone(),
            remotes,
            landing: self.landing.clone(),
            snapshots: RefCell::default(),
            snapshot_bytes: std::cell::Cell::new(0),
            refs_keys: RefCell::default(),
            persist: false,
            max_document_size: self.max_document_size,
        }))
    }

    fn revisions(&self) -> Option<&dyn Revisions> {
        Some(self)
    }
    fn documents(&self) -> Option<&dyn Documents> {
        Some(self)
    }
    fn heads(&self) -> Option<&dyn Heads> {
        Some(self)
    }
    fn models(&self) -> Option<&dyn Models> {
        Some(self)
    }
}

impl Revisions for GitProvider {
    fn stale_since(&self, r: &DocRef) -> Option<String> {
        self.remote(r).ok()?.stale_since.clone()
    }

    fn landed(&self, remote: &str) -> bool {
        self.landing.landed(remote)
    }

    /// Every ref of the mirror (branches, tags, other refs, the recorded
    /// default-branch head, the pinned commits) and the default branch's name:
    /// what reachability, the head compared with and the history searched for
    /// a recorded hash are read from. `None` for a remote that failed or that
    /// the cache stood in for.
    fn refs_digest(&self, remote: &str) -> Option<[u8; 32]> {
        // From the sync's report, without opening the mirror: a re-check the
        // memos answer opens none on the workers. Once per remote and fork
        // (every record a memo answers asks it).
        if let Some(known) = self.refs_keys.borrow().get(remote) {
            return *known;
        }
        let key = match self.landing.wait(remote) {
            Ok((sync, None)) => sync.all_refs.map(|refs| {
                let branch = sync.default_branch.as_deref().unwrap_or("");
                pinaudit_core::memo::key("refs", &[&refs, branch.as_bytes()])
            }),
            // Failed, or stale: the cache stood in for the remote.
            _ => None,
        };
        self.refs_keys.borrow_mut().insert(remote.to_string(), key);
        key
    }

    fn revision(&self, r: &DocRef) -> Result<RevisionFacts, Unchecked> {
        let remote = match self.remote(r) {
            Ok(remote) => remote,
            Err(Unchecked::Fetch { remote, error }) => {
                return match error.as_ref() {
                    FetchError::RepositoryMissing { url, reason } => {
                        Ok(RevisionFacts::RepositoryMissing {
                            fetched_from: url.clone(),
                            remote_said: reason.clone(),
                            described: crate::describe(&error, &remote),
                        })
                    }
                    _ => Err(Unchecked::Fetch { remote, error }),
                }
            }
            Err(e) => return Err(e),
        };
        let oid = oid(r)?;
        let wanted = remote.sync.wanted.iter().find(|w| w.oid == oid);
        if !remote.has_commit(oid) {
            // Offline, a commit the cache lacks may well exist upstream: say so, don't judge.
            if remote.sync.offline {
                return Err(Unchecked::NotCached);
            }
            return Ok(RevisionFacts::CommitMissing {
                by_id_error: wanted.and_then(|w| w.by_id_error.clone()),
            });
        }
        // Remembered per remote for the refs as they are: no history walk while
        // no branch or tag moved.
        let tips = *remote.tips.get_or_init(|| remote.repo.ref_tips_digest());
        let known = tips.and_then(|t| self.remembered_membership("reach", r, t, oid));
        let reachable = match known {
            Some(answer) => answer,
            None => {
                let answer = remote
                    .reachable
                    .get_or_init(|| remote.repo.reachable_set().map_err(Arc::new))
                    .as_ref()
                    .map_err(|e| Unchecked::Tool {
                        remote: r.remote.clone(),
                        error: e.clone(),
                    })?
                    .contains(&oid);
                if let Some(t) = tips {
                    self.remember_membership("reach", r, t, oid, answer);
                }
                answer
            }
        };
        Ok(RevisionFacts::Present {
            reachable,
            found_by: wanted.and_then(|w| w.found).unwrap_or(FoundBy::Cache),
            commit_time: remote.commit_time(oid),
        })
    }
}

impl Documents for GitProvider {
    fn snapshot(&self, r: &DocRef) -> Result<Option<Snapshot>, Unchecked> {
        let (remote, oid) = self.at(r)?;
        // Many sources cite one blob: read (inflate, verify, hash) it once a run.
        if let Ok(Some(id)) = remote.blob_id_at(oid, &r.path) {
            if let Some(seen) = self.snapshots.borrow().get(&id) {
                return Ok(Some(seen.clone()));
            }
            // The size from the object header, before anything is inflated
            // (not from a store: the bytes are read now anyway, and the size
            // decides whether they are read as a stream).
            if let Some(size) = remote.repo.blob_size(id) {
                if size > self.max_document_size {
                    return Err(too_large(size, self.max_document_size));
                }
                if size > STREAM_THRESHOLD {
                    return self.streamed_snapshot(r, &remote.repo, id, size).map(Some);
                }
            }
        }
        let Some(blob) = remote
            .repo
            .read_blob(oid, &r.path)
            .map_err(|e| tool(r, e))?
        else {
            return Ok(None);
        };
        let snapshot = Snapshot {
            sha256: self.hashes.sha256(blob.id, &blob.bytes),
            git_blob: Some(blob.id.to_string()),
            bytes: blob.bytes,
            loaded: true,
            streamed: false,
        };
        self.remember(blob.id, &snapshot);
        Ok(Some(snapshot))
    }

    fn hash_elsewhere(
        &self,
        r: &DocRef,
        pinned: &Snapshot,
        expected: &str,
    ) -> Option<OtherVersion> {
        let (remote, _) = self.at(r).ok()?;
        let expected = expected.to_ascii_lowercase();
        let memo_key = (r.path.clone(), pinned.git_blob.clone(), expected);
        if let Some(found) = remote.elsewhere.borrow().get(&memo_key) {
            return found.clone();
        }
        let found = self.find_elsewhere(remote, r, pinned, &memo_key.2);
        remote
            .elsewhere
            .borrow_mut()
            .insert(memo_key, found.clone());
        found
    }

    fn drift_memo(&self) -> Option<&dyn pinaudit_core::memo::DriftMemo> {
        Some(&self.drift)
    }

    fn check_memo(&self) -> Option<&dyn pinaudit_core::memo::CheckMemo> {
        Some(&self.checks)
    }

    fn record_memo(&self) -> Option<&dyn pinaudit_core::memo::CheckMemo> {
        Some(&self.records)
    }

    fn fragment_memo(&self) -> Option<&dyn pinaudit_core::memo::CheckMemo> {
        Some(&self.fragments)
    }

    fn matching_variant(
        &self,
        r: &DocRef,
        pinned: &Snapshot,
        expected: &str,
    ) -> Option<&'static str> {
        let id = pinned
            .git_blob
            .as_deref()
            .and_then(|b| Oid::from_str(b).ok());
        let Some(id) = id else {
            return crate::matching_variant(&pinned.bytes, expected);
        };
        // From `variants.store` when this blob was seen before: nothing is read.
        let known = if pinned.streamed {
            self.streamed_variants(r, &self.remote(r).ok()?.repo, id)
        } else {
            None
        };
        let (_, variants) = match known {
            Some(found) => found,
            None if pinned.streamed => return None,
            None => self.hashes.with_variants(id, || {
                if pinned.loaded {
                    return Some(pinned.bytes.clone());
                }
                self.remote(r).ok()?.repo.blob(id)
            })?,
        };
        let expected = expected.to_ascii_lowercase();
        variants
            .into_iter()
            .find(|(_, h)| *h == expected)
            .map(|(name, _)| name)
    }

    fn snapshot_lazy(&self, r: &DocRef) -> Result<Option<Snapshot>, Unchecked> {
        let (remote, oid) = self.at(r)?;
        let Some(id) = remote.blob_id_at(oid, &r.path).map_err(|e| tool(r, e))? else {
            return Ok(None);
        };
        if let Some(seen) = self.snapshots.borrow().get(&id) {
            return Ok(Some(seen.clone()));
        }
        // Over the size cap: never read, whatever a store remembers of it.
        let size = self.blob_size(&remote.repo, id);
        if let Some(size) = size {
            if size > self.max_document_size {
                return Err(too_large(size, self.max_document_size));
            }
        }
        // A blob seen by an earlier run: its sha256 is known, its bytes are read
        // only if a check needs them.
        match self.hashes.known(id) {
            Some(sha256) => Ok(Some(Snapshot {
                bytes: Vec::new(),
                loaded: false,
                sha256,
                git_blob: Some(id.to_string()),
                streamed: size.is_some_and(|s| s > STREAM_THRESHOLD),
            })),
            None => self.snapshot(r),
        }
    }

    fn load(&self, r: &DocRef, snapshot: &mut Snapshot) -> Result<(), Unchecked> {
        if snapshot.loaded {
            return Ok(());
        }
        if snapshot.streamed {
            // Read piece by piece through `open`, never whole.
            return Err(Unchecked::Unresolvable(sources::Skip::StreamedOnly));
        }
        let id = snapshot
            .git_blob
            .as_deref()
            .and_then(|b| Oid::from_str(b).ok())
            .ok_or(Unchecked::Unresolvable(sources::Skip::NoBlobId))?;
        if let Some(seen) = self.snapshots.borrow().get(&id) {
            snapshot.bytes = seen.bytes.clone();
            snapshot.loaded = true;
            return Ok(());
        }
        let remote = self.remote(r)?;
        let bytes = remote.repo.blob_bytes(id).map_err(|e| tool(r, e))?;
        if snapshot.sha256.is_empty() {
            // A head document whose hash was not known when it was named.
            snapshot.sha256 = self.hashes.sha256(id, &bytes);
        }
        snapshot.bytes = bytes;
        snapshot.loaded = true;
        self.remember(id, snapshot);
        Ok(())
    }

    fn open<'a>(
        &'a self,
        r: &DocRef,
        snapshot: &'a Snapshot,
    ) -> Result<Box<dyn std::io::Read + 'a>, Unchecked> {
        if snapshot.loaded {
            return Ok(Box::new(snapshot.bytes.as_slice()));
        }
        let id = snapshot
            .git_blob
            .as_deref()
            .and_then(|b| Oid::from_str(b).ok())
            .ok_or(Unchecked::Unresolvable(sources::Skip::NoBlobId))?;
        let remote = self.remote(r)?;
        Ok(self.blob_reader(r, &remote.repo, id)?)
    }

    fn files(&self, r: &DocRef) -> Option<Vec<(String, u64)>> {
        let (remote, oid) = self.at(r).ok()?;
        let files = remote.repo.files_at(oid).ok()?;
        Some(files.into_iter().map(|(p, _, size)| (p, size)).collect())
    }
}

impl Heads for GitProvider {
    fn head(&self, r: &DocRef) -> Option<Head> {
        let (remote, oid) = self.at(r).ok()?;
        let repo = &remote.repo;
        // Always the default branch (the remote's `HEAD`): what a reader
        // following the repository sees. A document pinned on a side branch and
        // absent there is said to be so.
        let default = remote
            .default_head
            .get_or_init(|| repo.head())
            .as_ref()
            .copied()?;
        // One walk of the default branch per repository, not one per source.
        let mut tip = [0u8; 32];
        tip[..20].copy_from_slice(default.as_bytes());
        let in_default = match self.remembered_membership("in-default", r, tip, oid) {
            Some(answer) => Some(answer),
            None => {
                let answer = remote
                    .in_default
                    .get_or_init(|| Some((default, repo.ancestors(default).ok()?)))
                    .as_ref()
                    .filter(|(tip, _)| *tip == default)
                    .map(|(_, set)| set.contains(&oid));
                if let Some(a) = answer {
                    self.remember_membership("in-default", r, tip, oid, a);
                }
                answer
            }
        };
        let pinned_on_default = in_default.unwrap_or_else(|| repo.contains(default, oid));
        let head = default;
        let branch = remote
            .sync
            .default_branch
            .as_deref()
            .map(|b| b.trim_start_matches("refs/heads/").to_string());
        let commit = head.to_string();
        let unchanged = |document| Head {
            commit: commit.clone(),
            branch: branch.clone(),
            pinned_on_default,
            unchanged: true,
            document,
        };
        if head == oid {
            return Some(unchanged(None));
        }
        let pinned_blob = remote.blob_id_at(oid, &r.path).ok().flatten();
        let memo_key = (head, r.path.clone());
        let remembered = remote.heads.borrow().get(&memo_key).cloned();
        let (head_blob, document) = match remembered {
            Some(seen) => seen,
            None => {
                let head_blob = remote.blob_id_at(head, &r.path).ok()?;
                // A head document over the size cap is not read: no drift check.
                if head_blob.is_some_and(|b| !self.fits(repo, b)) {
                    return None;
                }
                // Read only when a check needs it ([`Documents::load`]).
                let document = head_blob.map(|b| Snapshot {
                    sha256: self.hashes.known(b).unwrap_or_default(),
                    git_blob: Some(b.to_string()),
                    bytes: Vec::new(),
                    loaded: false,
                    streamed: repo.blob_size(b).is_some_and(|s| s > STREAM_THRESHOLD),
                });
                let seen = (head_blob, document);
                remote.heads.borrow_mut().insert(memo_key, seen.clone());
                seen
            }
        };
        if head_blob.is_some() && head_blob == pinned_blob {
            return Some(unchanged(None));
        }
        Some(Head {
            commit,
            branch,
            pinned_on_default,
            unchanged: false,
            document,
        })
    }
}

impl Models for GitProvider {
    fn model(&self, m: &ModelRef) -> Result<ModelFacts, Unchecked> {
        let as_doc = |commit| DocRef {
            remote: m.remote.clone(),
            commit,
            path: String::new(),
        };
        let remote = match self.remote_named(&m.remote) {
            Some(Ok(remote)) => remote,
            Some(Err(error)) => {
                return match error.as_ref() {
                    FetchError::RepositoryMissing { .. } => Ok(ModelFacts::RepositoryMissing {
                        described: crate::describe(error, &m.remote),
                    }),
                    _ => Err(Unchecked::Fetch {
                        remote: m.remote.clone(),
                        error: error.clone(),
                    }),
                }
            }
            None => return Err(Unchecked::Unresolvable(sources::Skip::NotFetched)),
        };
        let repo = &remote.repo;
        let commit = match &m.revision {
            None => repo.head(),
            Some(pinaudit_core::record::Revision::Commit(c)) => {
                let oid = Oid::from_str(c.as_str()).map_err(|_| {
                    Unchecked::Unresolvable(sources::Skip::UnsupportedCommitId {
                        commit: c.to_string(),
                    })
                })?;
                if !repo.has_commit(oid) && remote.sync.offline {
                    return Err(Unchecked::NotCached);
                }
                repo.has_commit(oid).then_some(oid)
            }
            Some(pinaudit_core::record::Revision::Ref(name)) => repo.resolve_name(name),
        };
        let Some(commit) = commit else {
            return Ok(ModelFacts::RevisionMissing);
        };
        let tool = |e| {
            let c = pinaudit_core::record::CommitId::parse(&commit.to_string());
            match c {
                Some(c) => tool(&as_doc(c), e),
                None => Unchecked::NotCached,
            }
        };
        let tree = repo.files_at(commit).map_err(tool)?;
        let paths: Vec<String> = tree.iter().map(|(p, _, _)| p.clone()).collect();
        let by_path: HashMap<&str, &(String, Oid, u64)> =
            tree.iter().map(|e| (e.0.as_str(), e)).collect();
        let entry = |p: &str| by_path.get(p).copied();
        let pointer = |p: &str| {
            let (_, id, size) = entry(p)?;
            if *size as usize > crate::lfs::MAX_POINTER_SIZE {
                return None;
            }
            crate::lfs::parse(&repo.blob(*id)?)
        };
        let (picked, missing) = model::select(&m.files, &paths, |p| pointer(p).is_some());
        let mut files = Vec::with_capacity(picked.len());
        for p in picked {
            let Some(&(_, id, size)) = entry(p) else {
                continue;
            };
            let file = match pointer(p) {
                Some(ptr) => WeightFile {
                    path: p.to_string(),
                    sha256: ptr.sha256,
                    size: ptr.size,
                    lfs: true,
                },
                // Not a pointer: the file itself is in git, hashed as the blob.
                None => {
                    let bytes = repo.blob(id).unwrap_or_default();
                    WeightFile {
                        path: p.to_string(),
                        sha256: self.hashes.sha256(id, &bytes),
                        size,
                        lfs: false,
                    }
                }
            };
            files.push(file);
        }
        Ok(ModelFacts::Present {
            commit: commit.to_string(),
            files,
            missing,
        })
    }
}
