//! `path-missing`, `hash-mismatch`: is the document at the pinned revision the one
//! the record describes? Judged from the provider's [`Snapshot`].

use serde::Serialize;

use crate::finding::{evidence, Code, Finding, Shape};
use crate::hash::matching_variant;
use crate::provider::{DocRef, OtherVersion, Snapshot};
use crate::record::{Record, Recorded, Source};

use super::location::source_location;

/// The documents a source cites: there, and with the recorded bytes.
pub(crate) struct Document;

impl super::Check for Document {
    fn evidence(&self) -> &'static [Shape] {
        const SHAPES: &[Shape] = &[
            Shape::of::<PathMissing<'static>>(),
            Shape::of::<HashMismatch<'static>>(),
            Shape::of::<WebHashMismatch<'static>>(),
        ];
        SHAPES
    }
}

evidence! {
    /// `path-missing` evidence.
    #[derive(Serialize)]
    pub(crate) struct PathMissing<'a> for(PathMissing) identity() {
        path: &'a str,
        commit: &'a str,
    }
}

evidence! {
    /// `hash-mismatch` evidence.
    #[derive(Serialize)]
    pub(crate) struct HashMismatch<'a> for(HashMismatch) identity() {
        expected: &'a str,
        actual: &'a str,
        git_blob: Option<&'a str>,
        /// The variant of the document (`crlf`, `bom`, ...) whose hash was recorded.
        matching_variant: Option<&'static str>,
        /// The version, at another commit, whose hash was recorded.
        matching_commit: Option<OtherVersion>,
    }
}

evidence! {
    /// `hash-mismatch` evidence of a web document: the URL (redacted) where a
    /// git document has its blob; no blob, no other version.
    #[derive(Serialize)]
    pub(crate) struct WebHashMismatch<'a> for(HashMismatch) identity() {
        expected: &'a str,
        actual: &'a str,
        url: &'a str,
        git_blob: Option<&'a str>,
        matching_variant: Option<&'static str>,
        matching_commit: Option<OtherVersion>,
        /// The recorded version is kept in the cache (by its sha256): the
        /// claims were judged against it, not against the page as served.
        recorded_kept: bool,
    }
}

/// Judges the document a source cites. `snapshot` is `None` when the path does not
/// exist at the revision; `variant` names the variant of its bytes (`crlf`, ...)
/// and `elsewhere` the version at another commit whose bytes have the recorded
/// hash, for the evidence.
pub fn check(
    record: &Record,
    s: &Source,
    r: &DocRef,
    snapshot: Option<&Snapshot>,
    variant: impl FnOnce(&str) -> Option<&'static str>,
    elsewhere: impl FnOnce(&str) -> Option<OtherVersion>,
    out: &mut Vec<Finding>,
) {
    let loc = source_location(s);
    let Some(doc) = snapshot else {
        out.push(
            Finding::new(
                Code::PathMissing,
                &record.id,
                format!("`{}` does not exist at `{}`", r.path, r.commit.short()),
            )
            .source(&s.id)
            .at(loc)
            .evidence(PathMissing {
                path: &r.path,
                commit: r.commit.as_str(),
            }),
        );
        return;
    };
    let Some(Recorded::Valid(expected)) = &s.sha256 else {
        return;
    };
    if expected.as_str() == doc.sha256 {
        return;
    }
    let variant = variant(expected.as_str());
    let other = elsewhere(expected.as_str());
    let mut message = format!(
        "sha256 of `{}` at `{}` is `{}`, the record says `{expected}`",
        r.path,
        r.commit.short(),
        doc.sha256,
    );
    if let Some(v) = variant {
        message.push_str(&format!("; the recorded hash is of the `{v}` variant"));
    }
    if let Some(c) = &other {
        message.push_str(&format!(
            "; it matches the document at commit `{}`",
            c.commit.get(..7).unwrap_or(&c.commit)
        ));
    }
    out.push(
        Finding::new(Code::HashMismatch, &record.id, message)
            .hint(format!(
                "hash the blob at the pinned commit: `git show {}:{} | sha256sum`",
                r.commit.short(),
                super::location::shell_quote(&r.path)
            ))
            .source(&s.id)
            .at(loc)
            .evidence(HashMismatch {
                expected: expected.as_str(),
                actual: &doc.sha256,
                git_blob: doc.git_blob.as_deref(),
                matching_variant: variant,
                matching_commit: other,
            }),
    );
}

/// `hash-mismatch` for a web document: the body as served against the
/// recorded hash, with the variant the recorded hash does match; `kept` when
/// the recorded version is kept in the cache, so the claims were judged
/// against it.
pub fn check_web(
    record: &Record,
    s: &Source,
    url: &str,
    (bytes, actual): (&[u8], &str),
    kept: bool,
    out: &mut Vec<Finding>,
) {
    let Some(Recorded::Valid(expected)) = &s.sha256 else {
        return;
    };
    if expected.as_str() == actual {
        return;
    }
    let shown = crate::url::redact(url);
    let variant = matching_variant(bytes, expected.as_str());
    let mut message =
        format!("sha256 of `{shown}` as served is `{actual}`, the record says `{expected}`");
    if let Some(v) = variant {
        message.push_str(&format!("; the recorded hash is of the `{v}` variant"));
    }
    if kept {
        message
            .push_str("; the claims were judged against the recorded version, kept in the cache");
    }
    out.push(
        Finding::new(Code::HashMismatch, &record.id, message)
            .hint(format!(
                "the page changed since it was hashed: cite an archived snapshot (`https://web.archive.org/web/<time>/{shown}`) or re-hash it: `curl -s {} | sha256sum`",
                super::location::shell_quote(&shown)
            ))
            .source(&s.id)
            .at(crate::finding::Location {
                repository: None,
                revision: None,
                path: Some(shown.clone()),
                line: None,
            })
            .evidence(WebHashMismatch {
                expected: expected.as_str(),
                actual,
                url: &shown,
                git_blob: None,
                matching_variant: variant,
                matching_commit: None,
                recorded_kept: kept,
            }),
    );
}
