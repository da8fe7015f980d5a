//! `repository-missing`, `revision-missing`, `revision-unreachable`, `path-missing`,
//! `hash-mismatch`, `commit-time-mismatch`: is the cited document the one the
//! record describes?

use std::collections::HashSet;

use git2::Oid;
use serde_json::{json, Value};

use crate::fetch::{matching_variant, BlobHashCache, CachedRepo, FetchError, FoundBy, SyncReport};
use crate::finding::{Code, Finding};
use crate::record::{Record, Recorded, Source};
use crate::sources::Target;

use super::location::source_location;
use super::SourceText;

/// A synced repository and what the checks read from it.
#[derive(Clone, Copy)]
pub struct Synced<'a> {
    pub repo: &'a CachedRepo,
    pub sync: &'a SyncReport,
    pub hashes: &'a BlobHashCache,
}

/// What checking one source established.
#[derive(Debug, Default)]
pub struct Established {
    /// Why the source could not be judged after all (offline, commit not cached).
    pub unchecked: Option<String>,
    /// The document at the pinned commit, when it could be read.
    pub document: Option<SourceText>,
    pub blob: Option<Oid>,
    pub sha256: Option<String>,
    /// The commit's committer time, RFC 3339.
    pub commit_time: Option<String>,
}

/// A fetch error for people: about the remote the record cites, and through which
/// URL it was fetched when `--rewrite` changed it.
pub fn describe(e: &FetchError, remote: &str) -> String {
    let (url, reason) = match e {
        FetchError::RepositoryMissing { url, reason }
        | FetchError::Network { url, reason }
        | FetchError::Authentication { url, reason }
        | FetchError::Git { url, reason } => (url, reason),
        FetchError::NotCached { .. } => return "not in cache".to_string(),
        other => return other.to_string(),
    };
    let shown = crate::fetch::redact(remote);
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

/// What a record was already told about a repository or commit: several sources in
/// one repository (six in the seed) share one missing repository or commit, and get
/// one finding for it, naming the first source.
pub type Reported = HashSet<(String, Option<Oid>, Code)>;

/// Whether a fetch answered about the source (the repository is not there). The
/// finding is pushed once per record and repository.
pub fn fetch_failed(
    record: &Record,
    s: &Source,
    t: &Target,
    e: &FetchError,
    reported: &mut Reported,
    out: &mut Vec<Finding>,
) -> bool {
    let Some(f) = repository_missing(record, s, t, e) else {
        return false;
    };
    if reported.insert((t.remote.clone(), None, Code::RepositoryMissing)) {
        out.push(f);
    }
    true
}

fn repository_missing(record: &Record, s: &Source, t: &Target, e: &FetchError) -> Option<Finding> {
    match e {
        FetchError::RepositoryMissing { url, reason } => Some(
            Finding::new(Code::RepositoryMissing, &record.id, describe(e, &t.remote))
                .source(&s.id)
                .at(source_location(s))
                .with("url", crate::fetch::redact(&t.remote))
                .with("fetched_from", url.as_str())
                .with("remote_said", reason.as_str()),
        ),
        _ => None,
    }
}

/// Checks one source whose repository was synced.
pub fn check(
    cx: &Synced<'_>,
    record: &Record,
    s: &Source,
    t: &Target,
    reported: &mut Reported,
    out: &mut Vec<Finding>,
) -> Established {
    let Synced { repo, sync, hashes } = *cx;
    let mut est = Established::default();
    let loc = source_location(s);
    let wanted = sync.wanted.iter().find(|w| w.oid == t.oid);
    let mut first = |code: Code| reported.insert((t.remote.clone(), Some(t.oid), code));
    if !repo.has_commit(t.oid) {
        // Offline, a commit the cache lacks may well exist upstream: say so, don't judge.
        if sync.offline {
            est.unchecked = Some("not in cache".to_string());
            return est;
        }
        if !first(Code::RevisionMissing) {
            return est;
        }
        let by_id = wanted.and_then(|w| w.by_id_error.clone());
        let message = match &by_id {
            Some(_) if !sync.offline => format!(
                "commit `{}` is in no branch or tag of the repository, and the server would not give it by id",
                t.commit.short()
            ),
            _ => format!("commit `{}` is not in the repository", t.commit.short()),
        };
        out.push(
            Finding::new(Code::RevisionMissing, &record.id, message)
                .source(&s.id)
                .at(loc)
                .with("commit", t.commit.as_str())
                .with("fetch_by_id_error", by_id),
        );
        return est;
    }
    match repo.reachable_from_branches_or_tags(t.oid) {
        Ok(true) => {}
        Ok(false) if !first(Code::RevisionUnreachable) => {}
        Ok(false) => {
            let how = match wanted.and_then(|w| w.found) {
                Some(FoundBy::Id) => "fetched by id",
                Some(FoundBy::OtherRefs) => "found through a non-branch ref such as a pull request",
                _ => "in the cache",
            };
            out.push(
                Finding::new(
                    Code::RevisionUnreachable,
                    &record.id,
                    format!(
                        "commit `{}` exists ({how}) but no branch or tag reaches it",
                        t.commit.short()
                    ),
                )
                .source(&s.id)
                .at(loc.clone())
                .with("commit", t.commit.as_str())
                .with("found_by", how),
            );
        }
        Err(e) => out.push(
            Finding::new(
                Code::RevisionUnreachable,
                &record.id,
                format!(
                    "cannot tell whether a branch or tag reaches `{}`: {e}",
                    t.commit.short()
                ),
            )
            .source(&s.id)
            .at(loc.clone()),
        ),
    }

    if let Some((secs, offset)) = repo.commit_time(t.oid) {
        let actual = rfc3339(secs, offset);
        if let Some(recorded) = &s.commit_time {
            match commit_time_differs(recorded, secs) {
                Some(true) => out.push(
                    Finding::new(
                        Code::CommitTimeMismatch,
                        &record.id,
                        format!(
                            "recorded commit time `{recorded}` differs from the committer time `{}` of `{}`",
                            actual.as_deref().unwrap_or("?"),
                            t.commit.short()
                        ),
                    )
                    .source(&s.id)
                    .at(loc.clone())
                    .with("recorded", recorded.as_str())
                    .with("actual", actual.clone()),
                ),
                Some(false) => {}
                // Unreadable: reported as invalid-record by the record checks.
                None => {}
            }
        }
        est.commit_time = actual;
    }

    let blob = match repo.read_blob(t.oid, &t.path) {
        Ok(Some(b)) => b,
        Ok(None) => {
            out.push(
                Finding::new(
                    Code::PathMissing,
                    &record.id,
                    format!("`{}` does not exist at `{}`", t.path, t.commit.short()),
                )
                .source(&s.id)
                .at(loc)
                .with("path", t.path.as_str())
                .with("commit", t.commit.as_str()),
            );
            return est;
        }
        Err(e) => {
            out.push(
                Finding::new(
                    Code::PathMissing,
                    &record.id,
                    format!("cannot read `{}` at `{}`: {e}", t.path, t.commit.short()),
                )
                .source(&s.id)
                .at(loc),
            );
            return est;
        }
    };
    let actual = hashes.sha256(blob.id, &blob.bytes);
    if let Some(Recorded::Valid(expected)) = &s.sha256 {
        if expected.as_str() != actual {
            let variant = matching_variant(&blob.bytes, expected.as_str());
            let other = other_commit(repo, hashes, &t.path, expected.as_str(), blob.id);
            let mut message = format!(
                "sha256 of `{}` at `{}` is `{actual}`, the record says `{expected}`",
                t.path,
                t.commit.short(),
            );
            if let Some(v) = variant {
                message.push_str(&format!("; the recorded hash is of the `{v}` variant"));
            }
            if let Some(c) = &other {
                message.push_str(&format!(
                    "; it matches the document at commit `{}`",
                    c["commit"].as_str().map_or("?", |c| &c[..7])
                ));
            }
            out.push(
                Finding::new(Code::HashMismatch, &record.id, message)
                    .source(&s.id)
                    .at(loc)
                    .with("expected", expected.as_str())
                    .with("actual", actual.as_str())
                    .with("git_blob", blob.id.to_string())
                    .with("matching_variant", variant)
                    .with("matching_commit", other.unwrap_or(Value::Null)),
            );
        }
    }
    est.blob = Some(blob.id);
    est.sha256 = Some(actual);
    est.document = Some(SourceText::new(&blob.bytes));
    est
}

/// The commit (in the path's history) whose document has the recorded hash.
fn other_commit(
    repo: &CachedRepo,
    hashes: &BlobHashCache,
    path: &str,
    expected: &str,
    pinned_blob: Oid,
) -> Option<Value> {
    let versions = repo.path_versions(path).ok()?;
    versions.iter().find_map(|v| {
        if v.blob == pinned_blob {
            return None;
        }
        let bytes = repo.blob(v.blob)?;
        let sha = hashes.sha256(v.blob, &bytes);
        let variant = if sha == expected {
            None
        } else {
            Some(matching_variant(&bytes, expected)?)
        };
        Some(json!({
            "commit": v.commit.to_string(),
            "git_blob": v.blob.to_string(),
            "commit_time": rfc3339(v.time, 0),
            "variant": variant,
        }))
    })
}

/// Committer time as RFC 3339 in its own offset.
pub fn rfc3339(secs: i64, offset_minutes: i32) -> Option<String> {
    let offset = time::UtcOffset::from_whole_seconds(offset_minutes * 60).ok()?;
    time::OffsetDateTime::from_unix_timestamp(secs)
        .ok()?
        .to_offset(offset)
        .format(&time::format_description::well_known::Rfc3339)
        .ok()
}

/// Whether pinaudit can read a recorded commit time (RFC 3339, or a date).
pub fn is_time(recorded: &str) -> bool {
    commit_time_differs(recorded, 0).is_some()
}

/// Whether a recorded time (RFC 3339, or a bare date compared in UTC) differs
/// from the commit's; `None` when the recorded text is neither.
fn commit_time_differs(recorded: &str, actual_secs: i64) -> Option<bool> {
    use time::format_description::well_known::Rfc3339;
    if let Ok(t) = time::OffsetDateTime::parse(recorded.trim(), &Rfc3339) {
        return Some(t.unix_timestamp() != actual_secs);
    }
    let date = time::Date::parse(
        recorded.trim(),
        time::macros::format_description!("[year]-[month]-[day]"),
    )
    .ok()?;
    let actual = time::OffsetDateTime::from_unix_timestamp(actual_secs)
        .ok()?
        .date();
    Some(date != actual)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times() {
        // 2026-08-07T15:45:04Z
        let t = 1_786_117_504;
        assert_eq!(rfc3339(t, 0).as_deref(), Some("2026-08-07T15:45:04Z"));
        assert_eq!(commit_time_differs("2026-08-07T15:45:04Z", t), Some(false));
        assert_eq!(
            commit_time_differs("2026-08-07T17:45:04+02:00", t),
            Some(false)
        );
        assert_eq!(commit_time_differs("2026-08-07T15:45:05Z", t), Some(true));
        assert_eq!(commit_time_differs("2026-08-07", t), Some(false));
        assert_eq!(commit_time_differs("2026-08-08", t), Some(true));
        assert_eq!(commit_time_differs("last tuesday", t), None);
    }
}
