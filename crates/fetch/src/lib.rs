//! pinaudit's fetcher: getting the cited revisions onto disk, and reading them back.
//!
//! An audit needs, for each pinned source, the commit's objects and enough of the
//! remote's refs to decide reachability, without a checkout and ideally without
//! the network on a re-check. This crate is the only place that talks to
//! remotes (through libgit2 and reqwest) and the only place that knows the cache
//! layout (`cache/git/HOST/OWNER/REPO.git`, `cache/*.store`). It implements the
//! core crate's provider and memo traits; the checks never see it.
//!
//! - [`url`]: cache paths from clone URLs, and credential redaction.
//! - [`rewrite`]: `--rewrite FROM=TO` (git's `insteadOf`).
//! - [`git`]: [`GitCache::sync`], one bare mirror per remote.
//! - [`repo`]: [`CachedRepo`], offline questions about a mirror.
//! - [`hash`]: sha256, the `hash-mismatch` variants, the blob hash memo.
//! - [`tls`]: no CA bundle loaded at start-up when no TLS connection is planned.
//! - [`verified`]: the damage check skipped for a mirror unchanged since it was found whole.
//! - [`pageout`]: a fetched pack's pages released while libgit2's indexer reads it back.
//! - [`classify`]: libgit2 failures classified as [`FetchError`]s for the report.
//! - [`store`]: the authenticated store files and the check and drift memos.
//! - [`cache_key`]: the key that authenticates them, kept outside the cache.
//! - [`client`]: the one HTTP client and the one reading of rate-limit headers.
//! - [`net`]: where connections go (`--resolve` pins, the public-host check).
//! - [`sources`]: which commit of which remote each source needs, synced once per remote.
//! - [`provider`]: the git cache and the web as providers of cited documents.
//! - [`swh_save`]: asking Software Heritage to archive cited repositories, and
//!   which pinned commits it holds (`pinaudit preserve`).

/// libgit2 inflates every object it indexes or reads through zlib's C API.
/// `libz-rs-sys` (zlib-rs) defines that API itself (`export-symbols`), and
/// a definition in the executable is the one the linker binds libgit2's calls
/// to, ahead of the system's `libz.so`. Nothing calls zlib-rs by this name;
/// the reference is what makes the linker take its objects.
#[used]
static ZLIB_RS: unsafe extern "C-unwind" fn(*mut libz_rs_sys::z_stream, i32) -> i32 =
    libz_rs_sys::inflate;

mod alloc;
mod bounded;
pub mod cache_key;
mod classify;
mod client;
mod credentials;
pub mod git;
pub mod hash;
mod http;
pub mod lfs;
pub mod net;
mod options;
mod pageout;
pub mod progress;
pub mod provider;
pub mod repo;
pub mod rewrite;
pub mod setup;
pub mod sources;
pub mod store;
pub mod stream;
pub mod swh_save;
pub mod tls;
mod transport;
pub mod url;
mod verified;

pub use git::{FoundBy, GitCache, SyncReport, WantedStatus};
pub use hash::{
    matching_variant, sha256_hex, stream_sha256, stream_variant_hashes, variants, BlobHashCache,
};
pub use options::{
    SyncOptions, DEFAULT_DEADLINE, DEFAULT_MAX_FETCH_BYTES, DEFAULT_MAX_FETCH_OBJECTS,
    DEFAULT_MAX_REF_BYTES,
};
pub use pinaudit_core::error::{describe, FetchError, NetworkCause};
pub use provider::http::kept_version;
pub use repo::{Blob, CachedRepo, PathVersion};
pub use rewrite::{apply_rewrites, Rewrite, RewriteError};
pub use url::{cache_relpath, redact, redact_text};

#[cfg(all(test, target_os = "linux"))]
mod tests {
    /// The system's zlib is not even mapped: libgit2's zlib calls were all
    /// bound to zlib-rs (without [`super::ZLIB_RS`] they go to `libz.so`).
    #[test]
    fn libgit2_inflates_with_zlib_rs() {
        let dir = tempfile::tempdir().expect("tempdir");
        let repo = git2::Repository::init_bare(dir.path()).expect("init");
        let oid = repo.blob(&b"zlib ".repeat(1000)).expect("deflate");
        let blob = repo.find_blob(oid).expect("inflate");
        assert_eq!(blob.content().len(), 5000);
        let maps = std::fs::read_to_string("/proc/self/maps").expect("maps");
        assert!(
            !maps.lines().any(|l| l.contains("/libz.so")),
            "the system zlib is mapped"
        );
    }
}
