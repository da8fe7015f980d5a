//! Start-up without the CA bundle when no TLS connection is planned.
//!
//! libgit2 initialises OpenSSL once per process, and that initialisation loads
//! the whole system CA bundle (`SSL_CTX_set_default_verify_paths` parses every
//! certificate of the file `SSL_CERT_FILE` names): about 0.24 G instructions,
//! 12 % of an `--offline` re-check of 2,000 citations, paid even when nothing is
//! contacted. The binary calls [`defer_certificates`] first in `main`, before
//! any git2 call (opening the cache makes the first, before a run knows its
//! remotes): it points `SSL_CERT_FILE` at an empty file, so the initialisation
//! loads nothing. [`prepare`] runs before a run's fetches: when a remote of the
//! run may be reached over TLS (`https`, `http`), it loads the real
//! certificates then, through libgit2's own option
//! ([`git2::opts::set_ssl_cert_file`]), so TLS is never attempted without them.
//! (Without the early call, [`prepare`] makes the same choice itself when it
//! comes before the first git2 call.)
//!
//! A `SSL_CERT_FILE` the user set is honoured by that later loading (it is
//! only set aside while no TLS connection is planned).
//!
//! This is the one piece of the network setup that is held by the process
//! rather than handed down with a command's [`crate::net::Network`]: what it
//! records is libgit2's own process-wide state. libgit2 initialises OpenSSL once
//! per process, and every later command of the process shares the context it
//! made; so whether that context was made without the CA bundle ([`DEFERRED`]),
//! and the `SSL_CERT_FILE` set aside for it ([`DECIDED`]), are facts about the
//! process, which a second command must see to load the certificates it needs.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// Set when this process's OpenSSL was (or will be) initialised without the CA
/// bundle; cleared once the real certificates are loaded.
static DEFERRED: AtomicBool = AtomicBool::new(false);
/// Whether git2 may already have initialised OpenSSL (a first run decided),
/// and the `SSL_CERT_FILE` the process had before [`prepare`] set it aside.
static DECIDED: Mutex<Option<Option<std::ffi::OsString>>> = Mutex::new(None);

const ENV_CERT_FILE: &str = "SSL_CERT_FILE";
/// An empty file that exists everywhere libgit2 uses OpenSSL.
const EMPTY: &str = "/dev/null";

/// Whether fetching `url` (after `--rewrite`) may open a TLS connection: `https`,
/// and `http`, which a server may redirect to `https`.
pub(crate) fn may_use_tls(url: &str) -> bool {
    let lower = url.trim_start().to_ascii_lowercase();
    lower.starts_with("https:") || lower.starts_with("http:")
}

/// Call first in `main`, before any thread starts: libgit2's one-time OpenSSL
/// initialisation then loads no CA bundle, whichever git2 call comes first
/// (opening the cache makes one before any run knows its remotes). A run that
/// does plan a TLS fetch loads the certificates then ([`prepare`]).
pub fn defer_certificates() {
    prepare(false, std::iter::empty());
}

/// Call before the run's first git2 call, with whether the run contacts remotes
/// and the URLs it would fetch from (after `--rewrite`).
pub(crate) fn prepare<'a>(online: bool, mut urls: impl Iterator<Item = &'a str>) {
    let tls = online && urls.any(may_use_tls);
    let mut decided = DECIDED.lock().unwrap_or_else(|e| e.into_inner());
    let Some(users) = decided.as_ref() else {
        let users = std::env::var_os(ENV_CERT_FILE);
        if !tls && cfg!(unix) {
            // Before git2's one-time initialisation: no other thread reads the
            // environment yet (one that sets libgit2 up is waited for).
            crate::setup::settle();
            std::env::set_var(ENV_CERT_FILE, EMPTY);
            DEFERRED.store(true, Ordering::SeqCst);
        }
        *decided = Some(users);
        return;
    };
    if tls && DEFERRED.swap(false, Ordering::SeqCst) {
        load_real_certificates(users.clone());
    }
}

/// Loads the system's certificates into libgit2's OpenSSL context, as the
/// initialisation would have.
fn load_real_certificates(users: Option<std::ffi::OsString>) {
    // libgit2 (and OpenSSL, which reads the environment) set up first: it
    // may be being set up on another thread.
    crate::setup::isolate_user_config();
    match users {
        Some(file) => std::env::set_var(ENV_CERT_FILE, file),
        None => std::env::remove_var(ENV_CERT_FILE),
    }
    let found = openssl_probe::probe();
    // SAFETY: libgit2 is initialised (git2 does that before setting an option)
    // and no TLS connection of this run has started yet.
    unsafe {
        if let Some(file) = found.cert_file {
            let _ = git2::opts::set_ssl_cert_file(file);
        }
        if let Some(dir) = found.cert_dir {
            let _ = git2::opts::set_ssl_cert_dir(dir);
        }
    }
}

/// Certificates pinaudit's own HTTPS clients (git over smart HTTP, web
/// documents) trust beside the built-in Mozilla roots: those of the file the
/// user's `SSL_CERT_FILE` names, else the system's CA bundle (as libgit2's
/// OpenSSL trusted before pinaudit had its own transport), so a CA that is only
/// in the system store, such as a company's proxy, keeps working. Parsed once
/// per file per process.
pub(crate) fn extra_roots() -> Vec<reqwest::Certificate> {
    static PARSED: Mutex<Option<(std::path::PathBuf, Vec<reqwest::Certificate>)>> =
        Mutex::new(None);
    let users = match DECIDED.lock().unwrap_or_else(|e| e.into_inner()).as_ref() {
        Some(users) => users.clone(),
        None => std::env::var_os(ENV_CERT_FILE),
    };
    let file = match users.filter(|f| f != EMPTY) {
        Some(file) => std::path::PathBuf::from(file),
        None => match system_bundle() {
            Some(file) => file,
            None => return Vec::new(),
        },
    };
    let mut parsed = PARSED.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((seen, certs)) = parsed.as_ref() {
        if *seen == file {
            return certs.clone();
        }
    }
    let certs = parse_bundle(&file);
    *parsed = Some((file, certs.clone()));
    certs
}

/// The certificates of a PEM bundle; none when it can't be read or parsed.
fn parse_bundle(file: &std::path::Path) -> Vec<reqwest::Certificate> {
    std::fs::read(file)
        .ok()
        .and_then(|pem| reqwest::Certificate::from_pem_bundle(&pem).ok())
        .unwrap_or_default()
}

/// The system's CA bundle file, found where OpenSSL builds look for it.
fn system_bundle() -> Option<std::path::PathBuf> {
    const NAMES: [&str; 6] = [
        "cert.pem",
        "certs.pem",
        "ca-bundle.pem",
        "cacert.pem",
        "ca-certificates.crt",
        "certs/ca-certificates.crt",
    ];
    openssl_probe::candidate_cert_dirs()
        .flat_map(|dir| NAMES.iter().map(move |name| dir.join(name)))
        .find(|file| file.is_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn which_urls_may_need_tls() {
        assert!(may_use_tls("https://github.com/o/r"));
        assert!(may_use_tls("HTTP://127.0.0.1:8/r.git"));
        assert!(!may_use_tls("git://127.0.0.1:9418/r.git"));
        assert!(!may_use_tls("ssh://git@host/r.git"));
        assert!(!may_use_tls("/srv/git/r.git"));
    }

    #[test]
    fn the_system_bundle_is_read_where_there_is_one() {
        if let Some(file) = system_bundle() {
            assert!(!parse_bundle(&file).is_empty(), "{}", file.display());
        }
        assert!(parse_bundle(std::path::Path::new(EMPTY)).is_empty());
        assert!(parse_bundle(std::path::Path::new("/nonexistent/ca.pem")).is_empty());
    }
}
