//! Getting the cited revisions onto disk, and reading them back.
//!
//! An audit needs, for each pinned source, the commit's objects and enough of the
//! remote's refs to decide reachability, without a checkout and ideally without
//! the network on a re-check. This module is the only place that talks to
//! remotes (through libgit2) and the only place that knows the cache layout
//! (`cache/git/HOST/OWNER/REPO.git`, `cache/blobs.store`). Its API is in terms of
//! [`git2::Oid`] and strings so it does not depend on the record model.
//!
//! - [`url`]: cache paths from clone URLs, and credential redaction.
//! - [`rewrite`]: `--rewrite FROM=TO` (git's `insteadOf`).
//! - [`git`]: [`GitCache::sync`], one bare mirror per remote.
//! - [`repo`]: [`CachedRepo`], offline questions about a mirror.
//! - [`hash`]: sha256, the `hash-mismatch` variants, the blob hash memo.
//! - [`tls`]: no CA bundle loaded at start-up when no TLS connection is planned.
//! - [`verified`]: the damage check skipped for a mirror unchanged since it was found whole.
//! - [`pageout`]: a fetched pack's pages released while libgit2's indexer reads it back.
//! - [`error`]: [`FetchError`], libgit2 failures classified for the report.

mod bounded;
pub mod error;
pub mod git;
pub mod hash;
mod http;
pub mod lfs;
mod pageout;
pub mod repo;
pub mod rewrite;
pub mod stream;
pub mod tls;
pub mod url;
mod verified;

pub use error::{describe, FetchError};
pub use git::{
    FoundBy, GitCache, SyncOptions, SyncReport, WantedStatus, DEFAULT_DEADLINE,
    DEFAULT_MAX_FETCH_BYTES, DEFAULT_MAX_REF_BYTES,
};
pub use hash::{
    matching_variant, sha256_hex, stream_sha256, stream_variant_hashes, variants, BlobHashCache,
};
pub use repo::{Blob, CachedRepo, PathVersion};
pub use rewrite::{apply_rewrites, Rewrite, RewriteError};
pub use url::{cache_relpath, redact, redact_text};
