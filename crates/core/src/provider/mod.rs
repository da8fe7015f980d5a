//! The snapshot seam: where cited documents come from.
//!
//! Checks never talk to a cache, a remote or git2. Planning turns each source and
//! artifact of a record into a [`Target`]; a [`Router`] hands the targets to the
//! registered [`Provider`]s to fetch, then answers each kind of question from the
//! first provider that serves it, through small traits: the facts of a pinned
//! revision ([`Revisions`]), the document at it ([`Documents`]), the same document
//! at the head ([`Heads`]), model weights by LFS pointer ([`Models`]) and web
//! documents ([`Web`]). The git cache serves the first four, the web provider the
//! last; a new provider (an archive of documents) implements only what it serves.
//!
//! A provider distinguishes what the *source* says ("the commit is not in the
//! repository": a fact for a finding) from what went wrong with the *tool* ("the
//! object is unreadable", "the network is down": [`Unchecked`], never a finding).

pub mod archive;
pub mod model;
pub mod web;

use std::fmt;
use std::sync::Arc;

use crate::error::FetchError;
use crate::record::CommitId;
pub use model::{ModelFacts, ModelRef, WeightFile};

/// One cited document: a path at a commit of a remote.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct DocRef {
    /// The clone URL before `--rewrite` (also the cache key).
    pub remote: String,
    pub commit: CommitId,
    pub path: String,
}

/// How a wanted commit came to be in the cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FoundBy {
    /// It was already there before this sync.
    Cache,
    /// Fetching the branches and tags brought it.
    BranchesOrTags,
    /// Fetched by its id.
    Id,
    /// Brought by one of the remote's other refs (e.g. `refs/pull/1/head`).
    OtherRefs,
    /// The remote no longer gives it: carried over from a quarantined copy of
    /// the mirror, where it read back whole.
    Quarantine,
}

/// What the provider knows of a pinned revision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RevisionFacts {
    /// The remote answered that the repository does not exist.
    RepositoryMissing {
        /// The URL it was fetched from (after `--rewrite`, redacted).
        fetched_from: String,
        /// What the remote said.
        remote_said: String,
        /// The whole story, for the finding's message.
        described: String,
    },
    /// The repository exists but the commit is not in it.
    CommitMissing {
        /// Why fetching it by id failed, when that was tried.
        by_id_error: Option<String>,
    },
    Present {
        /// Whether a branch or tag reaches the commit.
        reachable: bool,
        found_by: FoundBy,
        /// Committer time: seconds since the epoch and offset in minutes.
        commit_time: Option<(i64, i32)>,
    },
}

/// A document at a revision: its bytes and what identifies them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    /// The document's bytes; empty until read when `loaded` is false (see
    /// [`Documents::load`]).
    pub bytes: Vec<u8>,
    /// Whether `bytes` holds the document. A provider may leave the bytes of a
    /// blob whose sha256 it knows unread: checks whose answers are remembered
    /// need no more.
    pub loaded: bool,
    /// sha256 of `bytes`, lowercase hex.
    pub sha256: String,
    /// The git blob id, where the document is a git blob.
    pub git_blob: Option<String>,
    /// Whether the document is too large to hold (over
    /// the fetcher's streaming threshold): its bytes are never loaded,
    /// checks read it as a stream through [`Documents::open`].
    pub streamed: bool,
}

/// Another version of a document whose bytes (or a variant of them) have a
/// recorded hash: `hash-mismatch` evidence.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct OtherVersion {
    pub commit: String,
    pub git_blob: String,
    pub commit_time: Option<String>,
    /// `None` when the bytes themselves match; else the variant that does.
    pub variant: Option<&'static str>,
}

/// The cited document at the head of the branch it is compared with: the default
/// branch when that contains the pinned commit, else a branch that does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Head {
    pub commit: String,
    /// The default branch's name (the remote's `HEAD`), the branch compared with,
    /// when the remote names it.
    pub branch: Option<String>,
    /// Whether the default branch contains the pinned commit: a commit pinned on
    /// a side branch is compared with the default branch all the same, where a
    /// reader following the repository looks.
    pub pinned_on_default: bool,
    /// Whether the head holds the very same document (same commit or same blob).
    pub unchanged: bool,
    /// The document at the head; `None` when the path is gone there. Its bytes
    /// may be unread (and its sha256 empty): see [`Documents::load`].
    pub document: Option<Snapshot>,
}

/// Why a source cannot be looked up at all, or why a document of it was not
/// read: a reason callers match on by its variant, never by its words. Its
/// [`Display`](fmt::Display) is the sentence reports and messages show.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Skip {
    /// The source gives neither a URL nor a repository that is understood.
    NoRepository,
    /// A `file:` URL or a path, without `--allow-local`.
    LocalRefused,
    /// A host that is not on the public internet, without `--allow-local`.
    HostRefused {
        /// The host as the record wrote it.
        host: String,
        /// What it is, in words ("a loopback address", ...).
        what: String,
    },
    /// A branch, tag or short commit id instead of a full commit id.
    NotPinned { name: String },
    /// The source names no commit at all.
    NoRevision,
    /// The source names no document path.
    NoPath,
    /// The document path is unusable (`why` completes "it ...").
    InvalidPath { path: String, why: String },
    /// A commit id git cannot parse.
    UnsupportedCommitId { commit: String },
    /// A model repository URL no forge grammar reads (shown redacted).
    UnknownModelRepository { written: String },
    /// A document over `--max-document-size`, in bytes.
    TooLarge { size: u64, max: u64 },
    /// A blob that can't be streamed and is over `--max-document-size` whole.
    NotStreamable { blob: String, max: u64 },
    /// The document is too large to read whole; it is read as a stream.
    StreamedOnly,
    /// A snapshot without a git blob id, where one is needed to read it.
    NoBlobId,
    /// The remote or URL was not among those fetched.
    NotFetched,
    /// The document's lines can't be indexed (the whole sentence).
    Unindexable(String),
    /// An archive's answer did not check out (`why` says how).
    ArchiveDamaged { why: String },
    /// A model repository cited as a document.
    ModelNotDocument,
    /// An artifact's weights cited by something other than a model repository.
    WeightsNeedModel,
    /// The provider answering has no streaming reader.
    NoStreaming,
    /// No provider reads git revisions.
    NoRevisionProvider,
    /// No provider reads git documents.
    NoDocumentProvider,
    /// No provider reads model repositories (the remote, redacted when shown).
    NoModelProvider { remote: String },
    /// No provider fetches web documents (the URL, redacted when shown).
    NoWebProvider { url: String },
}

impl fmt::Display for Skip {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mib = |n: u64| format!("{:.1} MiB", n as f64 / (1024.0 * 1024.0));
        let shown = crate::escape::terminal;
        match self {
            Skip::NoRepository => f.write_str(
                "no repository: the source gives neither a URL nor a repository pinaudit understands",
            ),
            Skip::LocalRefused => f.write_str(
                "local repository refused (pass --allow-local to read file: URLs and paths)",
            ),
            Skip::HostRefused { host, what } => write!(
                f,
                "host `{}` refused: it is {what}, not a public host (records may only name public hosts; pass --allow-local to fetch from it)",
                shown(host)
            ),
            Skip::NotPinned { name } => write!(f, "not pinned: `{name}` is not a full commit id"),
            Skip::NoRevision => f.write_str("no revision: the source names no commit"),
            Skip::NoPath => f.write_str("no document path"),
            Skip::InvalidPath { path, why } => {
                write!(f, "invalid document path `{}`: it {why}", shown(path))
            }
            Skip::UnsupportedCommitId { commit } => {
                write!(f, "commit id `{commit}` is not supported by this git build")
            }
            Skip::UnknownModelRepository { written } => write!(
                f,
                "model repository `{}` is not a repository URL pinaudit understands",
                crate::url::redact(written)
            ),
            Skip::TooLarge { size, max } => write!(
                f,
                "document is `{}`, over --max-document-size (`{}`); not read (raise --max-document-size to check it)",
                mib(*size),
                mib(*max)
            ),
            Skip::NotStreamable { blob, max } => write!(
                f,
                "blob `{blob}` can't be read as a stream (a delta whose base is in no pack of the cache) and reading it whole is over --max-document-size (`{max}` bytes); not read (raise --max-document-size to check it)"
            ),
            Skip::StreamedOnly => {
                f.write_str("document is too large to read whole; it is read as a stream")
            }
            Skip::NoBlobId => f.write_str("no blob id"),
            Skip::NotFetched => f.write_str("not fetched"),
            Skip::Unindexable(why) => f.write_str(why),
            Skip::ArchiveDamaged { why } => write!(f, "archive answered damaged content: {why}"),
            Skip::ModelNotDocument => f.write_str("a model repository is not a document"),
            Skip::WeightsNeedModel => {
                f.write_str("an artifact's weights are read from a model repository")
            }
            Skip::NoStreaming => f.write_str("this provider does not stream documents"),
            Skip::NoRevisionProvider => f.write_str("no provider reads git revisions"),
            Skip::NoDocumentProvider => f.write_str("no provider reads git documents"),
            Skip::NoModelProvider { remote } => write!(
                f,
                "this provider does not read model repositories (`{}`)",
                crate::url::redact(remote)
            ),
            Skip::NoWebProvider { url } => write!(
                f,
                "this provider does not fetch web documents (`{}`)",
                crate::url::redact(url)
            ),
        }
    }
}

/// Why a source could not be judged. Never a finding: the audit is incomplete.
#[derive(Debug, Clone)]
pub enum Unchecked {
    /// The source cannot be looked up at all (no repository, not pinned, ...).
    Unresolvable(Skip),
    /// The remote could not be synced (network, credentials, git).
    Fetch {
        remote: String,
        error: Arc<FetchError>,
    },
    /// Offline, and the cache does not hold the commit.
    NotCached,
    /// The tool itself failed reading the cache.
    Tool {
        remote: String,
        error: Arc<FetchError>,
    },
}

impl fmt::Display for Unchecked {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unchecked::Unresolvable(skip) => skip.fmt(f),
            Unchecked::Fetch { remote, error } | Unchecked::Tool { remote, error } => {
                f.write_str(&crate::error::describe(error, remote))
            }
            Unchecked::NotCached => f.write_str("not in cache"),
        }
    }
}

/// Why reading a streamed document of `remote` failed part way: the cache's
/// problem (damaged object, unreadable file), never a finding.
pub fn read_failed(remote: &str, e: std::io::Error) -> Unchecked {
    let error = match e.into_inner().map(|inner| inner.downcast::<FetchError>()) {
        Some(Ok(fetch)) => *fetch,
        Some(Err(other)) => FetchError::Git {
            url: crate::url::redact(remote),
            reason: other.to_string(),
        },
        None => FetchError::Git {
            url: crate::url::redact(remote),
            reason: "reading the document failed".into(),
        },
    };
    Unchecked::Tool {
        remote: remote.to_string(),
        error: Arc::new(error),
    }
}

/// What one source (or one artifact) of a record asks to be fetched, as the
/// planner worked it out: the router hands every target to every provider, and
/// each takes the kinds it serves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A document at a pinned revision of a git remote.
    Git(DocRef),
    /// A web document, by its URL (fragment dropped).
    Web(String),
    /// The weight files of a model repository.
    Model(ModelRef),
    /// Why the source cannot be fetched at all.
    Unfetchable(Skip),
}

/// The facts of pinned revisions (see [`RevisionFacts`]).
pub trait Revisions {
    /// The facts of the pinned revision.
    fn revision(&self, r: &DocRef) -> Result<RevisionFacts, Unchecked>;

    /// When the cached copy standing in for `r`'s unreachable remote was last in
    /// step with it (RFC 3339); `None` when the remote answered this run.
    fn stale_since(&self, _r: &DocRef) -> Option<String> {
        None
    }

    /// A digest of everything about `remote` that a judgment of one of its
    /// documents depends on besides the document's own commit: its refs and
    /// default branch as this run synced them (offline: as stored). `None` when
    /// the remote was not synced whole this run (it failed, or the cache stood
    /// in for it), so nothing about it may be answered from a memo.
    fn refs_digest(&self, _remote: &str) -> Option<[u8; 32]> {
        None
    }

    /// Whether questions about `remote` are answered without waiting: `false`
    /// while a provider that syncs in the background (its
    /// [`Provider::prefetch`] returned before every remote was synced) is still
    /// syncing `remote`, whose questions wait until that sync is over. The
    /// check stage takes first the records whose remotes have all landed.
    fn landed(&self, _remote: &str) -> bool {
        true
    }
}

/// The documents at pinned revisions, and what is remembered of them.
pub trait Documents {
    /// The document at the pinned revision; `Ok(None)` when the path does not exist
    /// there.
    fn snapshot(&self, r: &DocRef) -> Result<Option<Snapshot>, Unchecked>;

    /// [`Documents::snapshot`], but the bytes may be left unread (`loaded` false)
    /// when the provider knows the document's sha256 without them.
    fn snapshot_lazy(&self, r: &DocRef) -> Result<Option<Snapshot>, Unchecked> {
        self.snapshot(r)
    }

    /// Reads the bytes of a snapshot of `r` (the pinned document or the one at
    /// its head) when they are still unread.
    fn load(&self, r: &DocRef, snapshot: &mut Snapshot) -> Result<(), Unchecked> {
        let _ = (r, snapshot);
        Ok(())
    }

    /// The bytes of `snapshot` (a document of `r`) as a stream: its bytes when
    /// loaded, else read afresh, piece by piece, for a [`Snapshot::streamed`]
    /// document. Read errors are turned into [`Unchecked`] by [`read_failed`].
    fn open<'a>(
        &'a self,
        r: &DocRef,
        snapshot: &'a Snapshot,
    ) -> Result<Box<dyn std::io::Read + 'a>, Unchecked> {
        let _ = r;
        if snapshot.loaded {
            return Ok(Box::new(snapshot.bytes.as_slice()));
        }
        Err(Unchecked::Unresolvable(Skip::NoStreaming))
    }

    /// The name of the first variant (`crlf`, `bom`, ...) of the pinned document
    /// whose sha256 is `expected` (see [`crate::hash::variants`]).
    fn matching_variant(
        &self,
        r: &DocRef,
        pinned: &Snapshot,
        expected: &str,
    ) -> Option<&'static str> {
        if pinned.loaded {
            return crate::hash::matching_variant(&pinned.bytes, expected);
        }
        let mut read = pinned.clone();
        self.load(r, &mut read).ok()?;
        crate::hash::matching_variant(&read.bytes, expected)
    }

    /// The version of the document, at another commit, whose bytes (or a variant
    /// of them) have the sha256 `expected`.
    fn hash_elsewhere(
        &self,
        _r: &DocRef,
        _pinned: &Snapshot,
        _expected: &str,
    ) -> Option<OtherVersion> {
        None
    }

    /// Every file in the tree at `r`'s commit (symbolic links aside), with its
    /// size in bytes, in path order; `None` when they cannot be listed.
    fn files(&self, _r: &DocRef) -> Option<Vec<(String, u64)>> {
        None
    }

    /// Where whole records' results are remembered, when the provider keeps them.
    fn record_memo(&self) -> Option<&dyn crate::memo::CheckMemo> {
        None
    }

    /// Where whole records' parts of a report are remembered, when the
    /// provider keeps them.
    fn fragment_memo(&self) -> Option<&dyn crate::memo::CheckMemo> {
        None
    }

    /// Where what checks derived from documents is remembered, when this
    /// provider keeps it (the git cache does, in `CACHE/checks.store`).
    fn check_memo(&self) -> Option<&dyn crate::memo::CheckMemo> {
        None
    }

    /// Where line fates between two blobs are remembered, when this provider
    /// keeps them (the git cache does, in `CACHE/drift.store`).
    fn drift_memo(&self) -> Option<&dyn crate::memo::DriftMemo> {
        None
    }
}

/// The cited documents at the heads they are compared with.
pub trait Heads {
    /// The document at the head it is compared with, or `None` when there is no
    /// head to compare with.
    fn head(&self, r: &DocRef) -> Option<Head>;
}

/// Model repositories, read by their Git LFS pointers.
pub trait Models {
    /// The weight files of `m` at its revision (the head when it names none), by
    /// their Git LFS pointers.
    fn model(&self, m: &ModelRef) -> Result<ModelFacts, Unchecked>;
}

/// Web documents.
pub trait Web {
    /// A web document fetched by [`Provider::prefetch`].
    fn web(&self, url: &str) -> Result<self::web::WebDoc, Unchecked>;
    /// The bytes of a version of a web document whose sha256 is `sha256`
    /// (lowercase hex), when a fetch ever kept them: every version fetched is
    /// kept by its sha256 and never overwritten, so the version a record
    /// recorded can be judged after the page changed. The bytes hash to
    /// `sha256` (checked when read).
    fn recorded(&self, sha256: &str) -> Option<Vec<u8>> {
        let _ = sha256;
        None
    }
}

/// One provider of cited documents, registered in a [`Router`]: it fetches the
/// [`Target`]s it serves and answers through the small traits it implements
/// (an archive of documents need not serve heads or models).
pub trait Provider: Send {
    /// Gets everything the targets this provider serves need onto disk, each
    /// remote or URL once however many sources cite it; ignores the others.
    /// Failures are kept and answered per source later. A provider may go on
    /// fetching after it returns, each question waiting for what it needs
    /// (see [`Revisions::landed`]).
    fn prefetch(&mut self, targets: &[&Target]);

    /// Remotes that could not be fetched, with the reason, in a stable order.
    fn failures(&self) -> Vec<(String, Arc<FetchError>)> {
        Vec::new()
    }

    /// Remotes that could not be reached but whose cached copy stood in for them.
    fn stale(&self) -> Vec<(String, Arc<FetchError>)> {
        Vec::new()
    }

    /// A provider for another thread that answers exactly as this one does (its
    /// own handles on the same cache, sharing the same stores), when this one can
    /// make one. The check stage runs records on forks in parallel.
    fn fork(&self) -> Option<Box<dyn Provider>>;

    fn revisions(&self) -> Option<&dyn Revisions> {
        None
    }
    fn documents(&self) -> Option<&dyn Documents> {
        None
    }
    fn heads(&self) -> Option<&dyn Heads> {
        None
    }
    fn models(&self) -> Option<&dyn Models> {
        None
    }
    fn web(&self) -> Option<&dyn Web> {
        None
    }
    fn archives(&self) -> Option<&dyn archive::Archives> {
        None
    }
    fn web_archives(&self) -> Option<&dyn archive::WebArchives> {
        None
    }
}

/// The providers of an audit, in the order they were registered: each question
/// goes to the first provider that answers that kind of question; a kind that
/// no provider answers is answered by [`Missing`].
#[derive(Default)]
pub struct Router {
    providers: Vec<Box<dyn Provider>>,
}

impl Router {
    pub fn new() -> Router {
        Router::default()
    }

    /// Registers `provider` after those already registered.
    pub fn with(mut self, provider: impl Provider + 'static) -> Router {
        self.providers.push(Box::new(provider));
        self
    }

    /// Every provider fetches what it serves of `targets`, in registration order.
    pub fn prefetch(&mut self, targets: &[&Target]) {
        for p in &mut self.providers {
            p.prefetch(targets);
        }
    }

    /// Every provider's failures, in registration order.
    pub fn failures(&self) -> Vec<(String, Arc<FetchError>)> {
        self.providers.iter().flat_map(|p| p.failures()).collect()
    }

    /// Every provider's stale remotes, in registration order.
    pub fn stale(&self) -> Vec<(String, Arc<FetchError>)> {
        self.providers.iter().flat_map(|p| p.stale()).collect()
    }

    /// A router of every provider's fork; `None` when one cannot fork.
    pub fn fork(&self) -> Option<Router> {
        let providers: Option<Vec<Box<dyn Provider>>> =
            self.providers.iter().map(|p| p.fork()).collect();
        Some(Router {
            providers: providers?,
        })
    }

    pub fn revisions(&self) -> &dyn Revisions {
        self.providers
            .iter()
            .find_map(|p| p.revisions())
            .unwrap_or(&Missing)
    }
    pub fn documents(&self) -> &dyn Documents {
        self.providers
            .iter()
            .find_map(|p| p.documents())
            .unwrap_or(&Missing)
    }
    pub fn heads(&self) -> &dyn Heads {
        self.providers
            .iter()
            .find_map(|p| p.heads())
            .unwrap_or(&Missing)
    }
    pub fn models(&self) -> &dyn Models {
        self.providers
            .iter()
            .find_map(|p| p.models())
            .unwrap_or(&Missing)
    }
    pub fn web(&self) -> &dyn Web {
        self.providers
            .iter()
            .find_map(|p| p.web())
            .unwrap_or(&Missing)
    }
    /// The archive asked when a forge lost a source; `None` when none is registered.
    pub fn archives(&self) -> Option<&dyn archive::Archives> {
        self.providers.iter().find_map(|p| p.archives())
    }
    /// The archive asked when a web document is gone; `None` when none is registered.
    pub fn web_archives(&self) -> Option<&dyn archive::WebArchives> {
        self.providers.iter().find_map(|p| p.web_archives())
    }
}

/// The answer to a kind of question no registered provider answers: every
/// source asking it is unchecked, with the reason.
pub struct Missing;

impl Revisions for Missing {
    fn revision(&self, _r: &DocRef) -> Result<RevisionFacts, Unchecked> {
        Err(Unchecked::Unresolvable(Skip::NoRevisionProvider))
    }
}

impl Documents for Missing {
    fn snapshot(&self, _r: &DocRef) -> Result<Option<Snapshot>, Unchecked> {
        Err(Unchecked::Unresolvable(Skip::NoDocumentProvider))
    }
}

impl Heads for Missing {
    fn head(&self, _r: &DocRef) -> Option<Head> {
        None
    }
}

impl Models for Missing {
    fn model(&self, m: &ModelRef) -> Result<ModelFacts, Unchecked> {
        Err(Unchecked::Unresolvable(Skip::NoModelProvider {
            remote: m.remote.clone(),
        }))
    }
}

impl Web for Missing {
    fn web(&self, url: &str) -> Result<self::web::WebDoc, Unchecked> {
        Err(Unchecked::Unresolvable(Skip::NoWebProvider {
            url: url.to_string(),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::Skip;

    /// Reports, snapshots and messages show a skip by these words: a reason
    /// given a variant keeps the sentence it had as text.
    #[test]
    fn skips_read_as_the_sentences_reports_show() {
        let s = |x: &str| x.to_string();
        for (skip, shown) in [
            (Skip::NoRepository, "no repository: the source gives neither a URL nor a repository pinaudit understands"),
            (Skip::LocalRefused, "local repository refused (pass --allow-local to read file: URLs and paths)"),
            (
                Skip::HostRefused { host: s("127.0.0.1\x1b"), what: s("a loopback address") },
                "host `127.0.0.1\\u{1b}` refused: it is a loopback address, not a public host (records may only name public hosts; pass --allow-local to fetch from it)",
            ),
            (Skip::NotPinned { name: s("main") }, "not pinned: `main` is not a full commit id"),
            (Skip::NoRevision, "no revision: the source names no commit"),
            (Skip::NoPath, "no document path"),
            (
                Skip::InvalidPath { path: s("../a"), why: s("leaves the tree") },
                "invalid document path `../a`: it leaves the tree",
            ),
            (
                Skip::UnsupportedCommitId { commit: s("abc") },
                "commit id `abc` is not supported by this git build",
            ),
            (
                Skip::UnknownModelRepository { written: s("https://u:p@h/x") },
                "model repository `https://h/x` is not a repository URL pinaudit understands",
            ),
            (
                Skip::TooLarge { size: 3 << 20, max: 1 << 20 },
                "document is `3.0 MiB`, over --max-document-size (`1.0 MiB`); not read (raise --max-document-size to check it)",
            ),
            (
                Skip::NotStreamable { blob: s("ab12"), max: 7 },
                "blob `ab12` can't be read as a stream (a delta whose base is in no pack of the cache) and reading it whole is over --max-document-size (`7` bytes); not read (raise --max-document-size to check it)",
            ),
            (Skip::StreamedOnly, "document is too large to read whole; it is read as a stream"),
            (Skip::NoBlobId, "no blob id"),
            (Skip::NotFetched, "not fetched"),
            (Skip::Unindexable(s("document has `9` lines")), "document has `9` lines"),
            (Skip::ArchiveDamaged { why: s("short") }, "archive answered damaged content: short"),
            (Skip::ModelNotDocument, "a model repository is not a document"),
            (Skip::WeightsNeedModel, "an artifact's weights are read from a model repository"),
            (Skip::NoStreaming, "this provider does not stream documents"),
            (Skip::NoRevisionProvider, "no provider reads git revisions"),
            (Skip::NoDocumentProvider, "no provider reads git documents"),
            (
                Skip::NoModelProvider { remote: s("https://h/m") },
                "this provider does not read model repositories (`https://h/m`)",
            ),
            (
                Skip::NoWebProvider { url: s("https://h/d") },
                "this provider does not fetch web documents (`https://h/d`)",
            ),
        ] {
            assert_eq!(skip.to_string(), shown, "{skip:?}");
        }
    }
}
