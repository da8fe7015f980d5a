//! libgit2's failures classified as [`FetchError`]s: libgit2 reports them as
//! strings with a class and a code, so the mapping lives here, in one place, next
//! to the messages it produced in tests.

pub(crate) use pinaudit_core::error::{local_io_kind, FetchError, NetworkCause};
use pinaudit_core::url::redact_text;

/// What we know about the credential callback when an operation failed.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct AuthOutcome {
    /// libgit2 asked for credentials at least once.
    pub(crate) asked: bool,
}

/// Map a libgit2 failure on `url` (already redacted) to a [`FetchError`].
///
/// `secrets` are scrubbed from the message as well, in case a transport
/// echoes what it was given.
pub(crate) fn classify(
    err: &git2::Error,
    url: &str,
    auth: AuthOutcome,
    secrets: &[&str],
) -> FetchError {
    let reason = clean_message(err.message(), secrets);
    let lower = reason.to_ascii_lowercase();
    let url = url.to_string();

    let missing = lower.contains("not exported")
        || lower.contains("repository not found")
        || lower.contains("does not appear to be a git repository")
        || lower.contains("could not find repository")
        || lower.contains("no such repository")
        || lower.contains("failed to resolve path")
        || lower.contains("http status code: 404")
        || lower.contains("http status code: 410");
    if missing {
        return FetchError::RepositoryMissing { url, reason };
    }

    if err.code() == git2::ErrorCode::Auth
        || lower.contains("authentication")
        || lower.contains("credentials")
        || (auth.asked && err.class() == git2::ErrorClass::Callback)
        || lower.contains("http status code: 401")
        || lower.contains("http status code: 403")
    {
        return FetchError::Authentication { url, reason };
    }

    let network_words = [
        crate::net::REFUSED_MARK,
        "failed to connect",
        "failed to resolve",
        "cannot resolve",
        "timed out",
        "connection refused",
        "connection reset",
        "broken pipe",
        "error receiving data",
        "error sending data",
        "could not read from socket",
        "could not write to socket",
        "early eof",
        "could not read from remote repository",
        "unexpected eof",
        "http status code: 5",
    ];
    if matches!(
        err.code(),
        git2::ErrorCode::Timeout | git2::ErrorCode::Certificate | git2::ErrorCode::Eof
    ) || matches!(err.class(), git2::ErrorClass::Os | git2::ErrorClass::Ssl)
        || network_words.iter().any(|w| lower.contains(w))
    {
        // libgit2 hands over words only: they are read here, once.
        let cause = if lower.contains(crate::net::REFUSED_MARK) {
            NetworkCause::Refused
        } else if lower.contains("timed out") {
            NetworkCause::TimedOut
        } else {
            NetworkCause::Unreachable
        };
        return FetchError::Network { url, reason, cause };
    }

    FetchError::Git { url, reason }
}

/// A libgit2 message made safe for an error string: URLs redacted, secrets
/// removed, trailing whitespace dropped.
pub(crate) fn clean_message(message: &str, secrets: &[&str]) -> String {
    let mut text = redact_text(message.trim_end());
    for secret in secrets {
        if !secret.is_empty() {
            text = text.replace(secret, "***");
        }
    }
    text
}

/// `parts` followed by the messages of an error's chain of causes from `source`
/// on, each kept only when no message before it already says it.
pub(crate) fn causes(
    mut parts: Vec<String>,
    mut source: Option<&(dyn std::error::Error + 'static)>,
) -> Vec<String> {
    while let Some(s) = source {
        let text = s.to_string();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        source = s.source();
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::*;
    use git2::{Error, ErrorClass, ErrorCode};

    fn err(code: ErrorCode, class: ErrorClass, msg: &str) -> Error {
        Error::new(code, class, msg)
    }

    #[test]
    fn daemon_not_exported_is_repository_missing() {
        let e = err(
            ErrorCode::GenericError,
            ErrorClass::Net,
            "remote error: access denied or repository not exported: /nope.git",
        );
        assert!(matches!(
            classify(&e, "git://h/nope.git", AuthOutcome::default(), &[]),
            FetchError::RepositoryMissing { .. }
        ));
    }

    #[test]
    fn connection_refused_is_network() {
        let e = err(
            ErrorCode::GenericError,
            ErrorClass::Os,
            "failed to connect to 127.0.0.1: Connection refused",
        );
        assert!(matches!(
            classify(&e, "git://h/x", AuthOutcome::default(), &[]),
            FetchError::Network { .. }
        ));
    }

    #[test]
    fn an_unresolvable_host_is_network() {
        // As pinaudit's smart HTTP transport words it (class Net, not Os).
        let e = err(
            ErrorCode::GenericError,
            ErrorClass::Net,
            "cannot resolve `github.com`: Name or service not known",
        );
        let got = classify(
            &e,
            "https://github.com/o/r.git",
            AuthOutcome::default(),
            &[],
        );
        assert!(matches!(got, FetchError::Network { .. }), "{got:?}");
    }

    /// What a network failure was is decided here, from libgit2's words, once:
    /// the retries and the advice read the cause.
    #[test]
    fn a_network_failure_knows_its_cause() {
        let cause = |msg: &str| match classify(
            &err(ErrorCode::GenericError, ErrorClass::Net, msg),
            "git://h/x",
            AuthOutcome::default(),
            &[],
        ) {
            FetchError::Network { cause, .. } => cause,
            other => panic!("not a network failure: {other:?}"),
        };
        assert_eq!(
            cause("failed to connect to 127.0.0.1: Connection refused"),
            NetworkCause::Unreachable
        );
        assert_eq!(
            cause("failed to connect to h: timed out"),
            NetworkCause::TimedOut
        );
        assert_eq!(
            cause("host `h` refused: it resolves to a loopback address (`127.0.0.1`), not a public host (records may only name public hosts; pass --allow-local to fetch from it)"),
            NetworkCause::Refused
        );
    }

    #[test]
    fn server_refusal_is_git() {
        let e = err(
            ErrorCode::GenericError,
            ErrorClass::Net,
            "remote error: upload-pack: not our ref 0123",
        );
        assert!(matches!(
            classify(&e, "git://h/x", AuthOutcome::default(), &[]),
            FetchError::Git { .. }
        ));
    }

    #[test]
    fn secrets_never_reach_the_message() {
        let e = err(
            ErrorCode::GenericError,
            ErrorClass::Http,
            "request to https://x-access-token:ghp_SECRET@github.com/o/r failed, token ghp_SECRET",
        );
        let shown = classify(
            &e,
            "https://github.com/o/r",
            AuthOutcome::default(),
            &["ghp_SECRET"],
        )
        .to_string();
        assert!(!shown.contains("ghp_SECRET"), "{shown}");
        assert!(!shown.contains("x-access-token"), "{shown}");
    }
}
