//! One model of the addresses pinaudit handles, below both the record model and
//! the fetcher.
//!
//! Records are published documents, so every URL in them is attacker-controlled
//! text, and the same text reaches the importer, the checks, the cache layout, the
//! `--rewrite` rules and every error message. Before this module, four hand-written
//! parsers (issue "Architecture", part "One URL model") disagreed on where an
//! authority ends, whether `FILE://` is a file URL and whether `git@host:o/r` is a
//! local path. Now there is one of each:
//!
//! - [`Remote`] / [`Authority`]: a git remote as git reads it (a `scheme://` URL, an
//!   scp-style `[user@]host:path`, or a local path), and the one authority parser
//!   (`[userinfo@]host[:port]`, IPv6 literals in brackets).
//! - [`redact`] / [`redact_text`]: credentials out of anything shown; `user:pw@`
//!   never survives, nor a token in a query string.
//! - [`normalize`]: the form a URL is compared in for checks (lowercase scheme and
//!   host, path percent-decoded once, `.` and `..` resolved), and
//!   [`Normalized::is_within`], which keeps a rewritten local path under its root.
//! - [`classify_host`]: public or local/private, from the host text alone.
//!
//! Forge grammars (which path segment is the revision) need the record model's
//! `Revision` and `Lines`, so they live in [`crate::record::url`], on top of the
//! `url` crate.

mod host;
mod normalize;
mod redact;
mod remote;

pub use host::{classify_host, classify_ip, HostClass};
pub use normalize::{normalize, Normalized};
pub use redact::{redact, redact_text, REDACTED};
pub use remote::{is_local, split_remote, split_userinfo, Authority, Remote, RemoteForm};

use std::borrow::Cow;

/// Decodes `%XX` escapes once; invalid escapes are kept as written, and bytes that
/// are not UTF-8 become U+FFFD.
pub(crate) fn percent_decode(s: &str) -> Cow<'_, str> {
    percent_encoding::percent_decode_str(s).decode_utf8_lossy()
}

/// Whether `scheme` is a URL scheme as RFC 3986 spells it
/// (`ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )`).
pub(crate) fn is_scheme(scheme: &str) -> bool {
    let mut bytes = scheme.bytes();
    bytes.next().is_some_and(|b| b.is_ascii_alphabetic())
        && bytes.all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'))
}

/// The scheme of `addr` when it is written `scheme://…`, lowercase: `FILE://x`
/// is a `file` URL.
pub fn scheme_of(addr: &str) -> Option<String> {
    let (scheme, _) = addr.split_once("://")?;
    is_scheme(scheme).then(|| scheme.to_ascii_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schemes_are_case_insensitive_and_well_formed() {
        for (addr, want) in [
            ("https://h/x", Some("https")),
            ("FILE:///srv/x", Some("file")),
            ("Git+SSH://h/x", Some("git+ssh")),
            ("git@h:o/r", None),
            ("/srv/x", None),
            ("/srv/x://y", None),
            ("1http://h", None),
            ("://h", None),
        ] {
            assert_eq!(scheme_of(addr).as_deref(), want, "{addr}");
        }
    }

    #[test]
    fn percent_decode_keeps_invalid_escapes() {
        assert_eq!(percent_decode("a%20b"), "a b");
        assert_eq!(percent_decode("a%2"), "a%2");
        assert_eq!(percent_decode("%"), "%");
        assert_eq!(percent_decode("%zz%2e"), "%zz.");
    }
}
