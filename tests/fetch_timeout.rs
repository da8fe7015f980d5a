//! The network timeout, in a test process of its own: libgit2's timeouts are
//! process-wide, so a short one here must not race the other fetch tests.
//! That is why this file is not a module of the `cli` test binary
//! (`tests/cli/main.rs`); it borrows only that binary's hanging server.

#[path = "cli/common/hanging.rs"]
mod hanging;

use std::time::{Duration, Instant};

use pinaudit::fetch::{FetchError, GitCache, SyncOptions};

use hanging::HangingServer;

fn opts() -> SyncOptions {
    SyncOptions {
        offline: false,
        connect_timeout: Duration::from_secs(5),
        timeout: Duration::from_secs(3),
        max_other_refs: 50,
        ..SyncOptions::default()
    }
}

#[test]
fn hanging_server_fails_within_the_timeout() {
    let server = HangingServer::start();
    let dir = tempfile::tempdir().expect("tempdir");
    // Never the user's key file.
    let key = pinaudit::cache_key::CacheKey::from_secret(b"tests");
    let cache = GitCache::with_key(dir.path(), key);
    for scheme in ["git", "http"] {
        let url = server.url(scheme, "x.git");
        let start = Instant::now();
        let err = cache.sync(&url, &url, &[], &opts()).unwrap_err();
        let took = start.elapsed();
        assert!(matches!(err, FetchError::Network { .. }), "{scheme}: {err}");
        assert!(took < Duration::from_secs(15), "{scheme}: took {took:?}");
    }
}
