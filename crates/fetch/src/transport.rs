//! pinaudit's transports, installed in libgit2: `git://` ([`super::bounded`]) and
//! smart HTTP(S) ([`super::http`]), both counting against the sync's budget.

use std::sync::Once;

use git2::transport::Transport;

use super::bounded::GitSubtransport;
use super::http::HttpSubtransport;

/// Installs pinaudit's `git://` transport in libgit2, once per process.
pub(crate) fn register() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // SAFETY: `register` must not race other libgit2 transport lookups;
        // it runs once, before this process's first fetch (every sync calls
        // this before touching the network, under `Once`).
        let _ = unsafe {
            git2::transport::register("git", |remote| {
                Transport::smart(remote, false, GitSubtransport::default())
            })
        };
        for scheme in ["http", "https"] {
            // SAFETY: as above.
            let _ = unsafe {
                git2::transport::register(scheme, |remote| {
                    Transport::smart(remote, true, HttpSubtransport::new())
                })
            };
        }
    });
}
