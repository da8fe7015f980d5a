//! pinaudit's transports, installed in libgit2: `git://` ([`super::bounded`]) and
//! smart HTTP(S) ([`super::http`]), both counting against the sync's budget.
//!
//! Each transport is made with the [`Budget`] of the sync that asked for it,
//! as a value, and reads no other. libgit2 only lets a process register one
//! factory per scheme, called with the remote and nothing of the caller's, on
//! the thread that fetches; so a sync hands its budget to that factory with
//! [`lend`] around its fetches, and this file is the one place the two meet.
//! A fetch that no sync lent a budget to is refused, never run unbounded.
//! The budget carries the sync's [`crate::net::Network`] too, so a transport
//! connects where the `--resolve` pins of the command that asked say.

use std::cell::RefCell;
use std::sync::{Arc, Once};

use git2::transport::Transport;

use super::bounded::{Budget, GitSubtransport};
use super::http::HttpSubtransport;

thread_local! {
    /// The budget a sync on this thread lent to the transports it is about
    /// to make (see the module docs).
    static LENT: RefCell<Option<Arc<Budget>>> = const { RefCell::new(None) };
}

/// Runs `f` (a sync's fetches) with `budget` handed to every transport libgit2
/// makes on this thread meanwhile.
pub(crate) fn lend<R>(budget: &Arc<Budget>, f: impl FnOnce() -> R) -> R {
    let previous = LENT.with(|c| c.replace(Some(budget.clone())));
    let out = f();
    LENT.with(|c| *c.borrow_mut() = previous);
    out
}

/// The budget lent for the transport being made.
fn lent() -> Result<Arc<Budget>, git2::Error> {
    LENT.with(|c| c.borrow().clone())
        .ok_or_else(|| git2::Error::from_str("pinaudit fetches only within a sync's budget"))
}

/// Installs pinaudit's `git://` transport in libgit2, once per process.
pub(crate) fn register() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // SAFETY: `register` must not race other libgit2 transport lookups;
        // it runs once, before this process's first fetch (every sync calls
        // this before touching the network, under `Once`).
        let _ = unsafe {
            git2::transport::register("git", |remote| {
                Transport::smart(remote, false, GitSubtransport::new(lent()?))
            })
        };
        for scheme in ["http", "https"] {
            // SAFETY: as above.
            let _ = unsafe {
                git2::transport::register(scheme, |remote| {
                    Transport::smart(remote, true, HttpSubtransport::new(lent()?))
                })
            };
        }
    });
}
