//! What can go wrong while filling or reading the cache, classified the way the
//! audit needs it.
//!
//! The classes map onto the report: [`FetchError::RepositoryMissing`] is the
//! `repository-missing` finding, [`FetchError::Network`] and
//! [`FetchError::NotCached`] leave a source `unchecked` (the audit is incomplete,
//! exit 2), [`FetchError::CacheBroken`] is the user's to repair. The type is here,
//! below the checks and the fetcher both; the fetcher maps libgit2's failures onto it.
//!
//! Every URL in a message is redacted when the error is built (see
//! [`crate::url::redact`]): a credential must never reach an error string.

use std::path::PathBuf;

/// A failure of the git cache (filling it, or reading a mirror back).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FetchError {
    /// The remote answered that the repository does not exist
    /// (git daemon: "no such repository" or "repository not exported", HTTP
    /// 404, "repository not found", a `file:` path that is not a repository).
    #[error("repository `{url}` does not exist: {reason}")]
    RepositoryMissing {
        /// The redacted URL that was asked.
        url: String,
        /// What the remote said.
        reason: String,
    },
    /// The remote could not be reached or stopped answering (refused, timed
    /// out, DNS, TLS, connection reset, HTTP 5xx).
    #[error("cannot reach `{url}`: {reason}")]
    Network {
        /// The redacted URL that was asked.
        url: String,
        /// What failed.
        reason: String,
        /// Why, as the advice and the retries go by it.
        cause: NetworkCause,
    },
    /// The remote asked for credentials and none (or no valid ones) were
    /// available. GitHub answers this way for private repositories *and* for
    /// ones that do not exist, so an anonymous run cannot tell the two apart.
    #[error("`{url}` asked for credentials: {reason}")]
    Authentication {
        /// The redacted URL that was asked.
        url: String,
        /// What failed.
        reason: String,
    },
    /// The cache directory for a remote exists but is not a usable bare
    /// repository.
    #[error("cache repository `{}` can't be used: {reason}", path.display())]
    CacheBroken {
        /// The repository directory inside the cache.
        path: PathBuf,
        /// Why it cannot be used.
        reason: String,
    },
    /// A mirror in the cache fails its integrity check (a ref that can't be
    /// read or names a missing object, a commit, tree or blob that can't be
    /// read back): not a fact about the record. Online, pinaudit fetches the
    /// mirror afresh; offline the sources it holds stay `unchecked`.
    #[error("cache damaged: repository `{}` {reason}", path.display())]
    CacheDamaged {
        /// The repository directory inside the cache.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// The cache entry is not a mirror pinaudit made (a symbolic link, or a
    /// repository without pinaudit's ownership marker): it is never written to.
    #[error("cache entry `{}` is not a mirror pinaudit made: {reason}; refusing to touch it", path.display())]
    CacheForeign {
        /// The repository directory inside the cache.
        path: PathBuf,
        /// Why it is not ours.
        reason: String,
    },
    /// A directory of the cache that others may write, that is not this
    /// user's, or that is a symbolic link pinaudit did not make: refused, as
    /// ssh refuses such key files, since whoever can write there can plant
    /// what pinaudit reads or writes through.
    #[error("cache directory `{}` is not safe to use: {reason}", path.display())]
    CacheUnsafe {
        /// The directory concerned.
        path: PathBuf,
        /// What makes it unsafe.
        reason: String,
    },
    /// `--offline` and the remote has never been fetched into this cache.
    #[error("`{url}` is not in the cache (looked in `{}`)", path.display())]
    NotCached {
        /// The redacted original URL.
        url: String,
        /// Where its repository would be.
        path: PathBuf,
    },
    /// A file system operation on the cache failed (permissions, disk full).
    #[error("cannot use `{}`: {source}", path.display())]
    Io {
        /// The file or directory concerned.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// A tree on the way to the cited path is one git refuses (`git fsck`:
    /// an entry listed twice, entries out of order, a name or mode git never
    /// writes): libgit2 and git could read different files there, so nothing
    /// is judged.
    #[error(
        "commit `{commit}` has a tree git refuses on the way to `{path}`: {reason}; not judged"
    )]
    TreeRefused {
        /// The commit cited.
        commit: String,
        /// The path cited.
        path: String,
        /// What git fsck would say, and in which directory.
        reason: String,
    },
    /// Any other git failure (protocol error, the server refused a request,
    /// a corrupt object).
    #[error("git failed on `{url}`: {reason}")]
    Git {
        /// The redacted URL (or cache path) concerned.
        url: String,
        /// What libgit2 said.
        reason: String,
    },
}

/// Why the network failed: decided where the failure is made (a limit of the
/// sync tripping) or where libgit2's or reqwest's message first comes in, so
/// nothing after reads the words of a reason to know what happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum NetworkCause {
    /// The remote could not be reached or stopped answering (refused, reset,
    /// DNS, TLS, HTTP 5xx): worth a retry.
    Unreachable,
    /// No answer within `--timeout`: a retry would wait as long again.
    TimedOut,
    /// A limit of the run cut it off (`--deadline`, `--max-fetch-mib`,
    /// `--max-fetch-objects`, `--max-refs-mib`, `--max-document-size`): the
    /// reason names the flag that raises it.
    Limit,
    /// The host leads to this machine or its network and was refused before
    /// any connection ([`REFUSED_MARK`]).
    Refused,
}

/// The words of a network refusal of a host that leads to this machine or its
/// network: the resolver and the source planner both say it, and [`FetchError::hint`]
/// recognises it.
pub const REFUSED_MARK: &str = "not a public host";

impl FetchError {
    /// Advice for a `hint:` line, when there is some.
    pub fn hint(&self) -> Option<String> {
        match self {
            FetchError::CacheBroken { path, .. } => Some(format!(
                "pinaudit leaves `{}` as it is: check that it can be read (permissions, ownership), or audit with another --cache DIR",
                path.display()
            )),
            FetchError::CacheDamaged { .. } => Some(
                "run again without --offline: pinaudit fetches a damaged mirror afresh".to_string(),
            ),
            FetchError::CacheForeign { path, .. } => Some(format!(
                "move `{}` out of the cache (pinaudit left it as it was), or pass another --cache",
                path.display()
            )),
            FetchError::CacheUnsafe { path, .. } => Some(format!(
                "make `{}` a directory of this user that only it may write (`chmod go-w`), or pass another --cache",
                path.display()
            )),
            FetchError::Io { path, source } => io_hint(path, source),
            FetchError::TreeRefused { .. } => Some(
                "`git fsck` rejects this commit; cite a commit whose tree git accepts".to_string(),
            ),
            FetchError::NotCached { .. } => {
                Some("run once without --offline to fill the cache".to_string())
            }
            FetchError::Authentication { .. } => Some(
                "check the URL; for a private GitHub repository set GITHUB_TOKEN, \
                 elsewhere configure a git credential helper"
                    .to_string(),
            ),
            FetchError::Network {
                cause: NetworkCause::Limit,
                ..
            } => Some(
                "the server sent too much or too slowly; if you trust it, raise the limit named above"
                    .to_string(),
            ),
            FetchError::Network {
                cause: NetworkCause::Refused,
                ..
            } => Some(
                "the host leads to this machine or its network; pass --allow-local only if you trust the record"
                    .to_string(),
            ),
            FetchError::Network { .. } => {
                Some("check the network or use --offline with a filled cache".to_string())
            }
            _ => None,
        }
    }

    /// Whether the failure means the source could not be checked at all
    /// (network down, not cached), as opposed to an answer about the source.
    pub fn is_unavailable(&self) -> bool {
        matches!(
            self,
            FetchError::Network { .. }
                | FetchError::NotCached { .. }
                | FetchError::Authentication { .. }
                | FetchError::CacheDamaged { .. }
        )
    }

    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        FetchError::Io {
            path: path.into(),
            source,
        }
    }
}

/// Advice for a file system failure, by its cause: a permission problem must
/// never be answered with "delete the cache" (that would destroy a good one).
fn io_hint(path: &std::path::Path, e: &std::io::Error) -> Option<String> {
    use std::io::ErrorKind;
    let shown = path.display();
    match e.kind() {
        ErrorKind::PermissionDenied => Some(format!(
            "permission denied: make `{shown}` readable and writable by this user, or pass --cache DIR (the cache itself is fine; don't delete it)"
        )),
        ErrorKind::StorageFull | ErrorKind::QuotaExceeded => Some(format!(
            "the disk holding `{shown}` is full: free some space, or pass --cache DIR on another disk"
        )),
        ErrorKind::ReadOnlyFilesystem => Some(format!(
            "`{shown}` is on a read-only file system: pass --cache DIR somewhere writable, or use --offline"
        )),
        _ => None,
    }
}

/// Whether libgit2's message is a local disk or permission problem, which must
/// not be mistaken for the network's.
pub fn local_io_kind(message: &str) -> Option<std::io::ErrorKind> {
    let lower = message.to_ascii_lowercase();
    if lower.contains("no space left on device") || lower.contains("disk quota exceeded") {
        Some(std::io::ErrorKind::StorageFull)
    } else if lower.contains("permission denied") {
        Some(std::io::ErrorKind::PermissionDenied)
    } else if lower.contains("read-only file system") {
        Some(std::io::ErrorKind::ReadOnlyFilesystem)
    } else {
        None
    }
}

/// A fetch error for people: about the remote the record cites, and through which
/// URL it was fetched when `--rewrite` changed it.
pub fn describe(e: &FetchError, remote: &str) -> String {
    let (url, reason) = match e {
        FetchError::RepositoryMissing { url, reason }
        | FetchError::Network { url, reason, .. }
        | FetchError::Authentication { url, reason }
        | FetchError::Git { url, reason } => (url, reason),
        FetchError::NotCached { .. } => return "not in cache".to_string(),
        other => return other.to_string(),
    };
    let shown = crate::url::redact(remote);
    let via = if *url == shown {
        String::new()
    } else {
        format!(" (fetched as `{url}`)")
    };
    match e {
        FetchError::RepositoryMissing { .. } => {
            format!("repository `{shown}`{via} does not exist: {reason}")
        }
        FetchError::Network { .. } => format!("cannot reach `{shown}`{via}: {reason}"),
        FetchError::Authentication { .. } => {
            format!("`{shown}`{via} asked for credentials: {reason}")
        }
        _ => format!("git failed on `{shown}`{via}: {reason}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_system_failures_point_at_their_cause() {
        let io = |kind: std::io::ErrorKind| FetchError::Io {
            path: PathBuf::from("/home/u/.cache/pinaudit"),
            source: std::io::Error::new(kind, "x"),
        };
        let denied = io(std::io::ErrorKind::PermissionDenied)
            .hint()
            .unwrap_or_default();
        assert!(denied.contains("permission denied"), "{denied}");
        assert!(denied.contains("don't delete"), "{denied}");
        let full = io(std::io::ErrorKind::StorageFull)
            .hint()
            .unwrap_or_default();
        assert!(full.contains("disk") && full.contains("full"), "{full}");
        assert!(!full.contains("network"), "{full}");
        assert_eq!(
            local_io_kind("failed to write pack: No space left on device"),
            Some(std::io::ErrorKind::StorageFull)
        );
        assert_eq!(
            local_io_kind("could not open '/c/x.lock': Permission denied"),
            Some(std::io::ErrorKind::PermissionDenied)
        );
        assert_eq!(local_io_kind("connection refused"), None);
        let damaged = FetchError::CacheDamaged {
            path: PathBuf::from("c/git/h/o/r.git"),
            reason: "has ref `refs/heads/main` that can't be read".into(),
        };
        assert!(damaged.to_string().starts_with("cache damaged:"));
        assert!(damaged.is_unavailable());
        assert!(!damaged.hint().unwrap_or_default().contains("delete"));
    }

    /// The advice goes by the cause, never by the words of the reason.
    #[test]
    fn network_advice_goes_by_the_cause() {
        let failed = |reason: &str, cause| FetchError::Network {
            url: "git://h/x".into(),
            reason: reason.into(),
            cause,
        };
        let limit = failed("the server sent more data (raise it)", NetworkCause::Limit);
        assert!(limit.hint().unwrap_or_default().contains("raise the limit"));
        let refused = failed("host `h` refused", NetworkCause::Refused);
        assert!(refused.hint().unwrap_or_default().contains("--allow-local"));
        // Words that look like a limit do not make one.
        let down = failed("see --deadline in the docs", NetworkCause::Unreachable);
        assert!(down
            .hint()
            .unwrap_or_default()
            .contains("check the network"));
        assert!(down.is_unavailable() && limit.is_unavailable());
    }
}
