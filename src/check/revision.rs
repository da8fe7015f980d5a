//! `repository-missing`, `revision-missing`, `revision-unreachable`,
//! `commit-time-mismatch`: is the pinned revision there, and is it the one the
//! record describes? Judged from the provider's [`RevisionFacts`] alone.

use std::collections::HashSet;

use serde::Serialize;

use crate::finding::{Code, Finding};
use crate::provider::{DocRef, FoundBy, RevisionFacts};
use crate::record::{Record, Source};
use crate::result::Absence;

use super::location::source_location;

/// What a record was already told about a repository or commit: several sources in
/// one repository (six in the seed) share one missing repository or commit, and get
/// one finding for it, naming the first source.
pub type Reported = HashSet<(String, Option<String>, Code)>;

/// `repository-missing` evidence.
#[derive(Serialize)]
struct RepositoryMissing<'a> {
    /// The repository the record cites (redacted).
    url: String,
    /// The URL it was fetched from, after `--rewrite`.
    fetched_from: &'a str,
    remote_said: &'a str,
}

/// `revision-missing` evidence.
#[derive(Serialize)]
struct RevisionMissing<'a> {
    commit: &'a str,
    /// Why the server would not give the commit by id, when that was tried.
    fetch_by_id_error: Option<&'a str>,
}

/// `revision-unreachable` evidence.
#[derive(Serialize)]
struct RevisionUnreachable<'a> {
    commit: &'a str,
    found_by: &'a str,
}

/// `commit-time-mismatch` evidence.
#[derive(Serialize)]
struct CommitTimeMismatch<'a> {
    recorded: &'a str,
    actual: Option<&'a str>,
}

/// Whether the revision is there to read a document from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Established {
    /// The repository or the commit does not exist.
    Absent(Absence),
    /// The commit is there; its committer time, RFC 3339.
    Present { commit_time: Option<String> },
}

/// Judges the revision a source pins.
pub fn check(
    record: &Record,
    s: &Source,
    r: &DocRef,
    facts: &RevisionFacts,
    reported: &mut Reported,
    out: &mut Vec<Finding>,
) -> Established {
    let loc = source_location(s);
    let commit = r.commit.as_str().to_string();
    let mut first = |code: Code, commit: Option<&String>| {
        reported.insert((r.remote.clone(), commit.cloned(), code))
    };
    match facts {
        RevisionFacts::RepositoryMissing {
            fetched_from,
            remote_said,
            described,
        } => {
            if first(Code::RepositoryMissing, None) {
                out.push(
                    Finding::new(Code::RepositoryMissing, &record.id, described.as_str())
                        .source(&s.id)
                        .at(loc)
                        .evidence(RepositoryMissing {
                            url: crate::fetch::redact(&r.remote),
                            fetched_from,
                            remote_said,
                        }),
                );
            }
            Established::Absent(Absence::Repository)
        }
        RevisionFacts::CommitMissing { by_id_error } => {
            if first(Code::RevisionMissing, Some(&commit)) {
                let message = match by_id_error {
                    Some(_) => format!(
                        "commit `{}` is in no branch or tag of the repository, and the server would not give it by id",
                        r.commit.short()
                    ),
                    None => format!("commit `{}` is not in the repository", r.commit.short()),
                };
                out.push(
                    Finding::new(Code::RevisionMissing, &record.id, message)
                        .source(&s.id)
                        .at(loc)
                        .evidence(RevisionMissing {
                            commit: r.commit.as_str(),
                            fetch_by_id_error: by_id_error.as_deref(),
                        }),
                );
            }
            Established::Absent(Absence::Commit)
        }
        RevisionFacts::Present {
            reachable,
            found_by,
            commit_time,
        } => {
            if !reachable && first(Code::RevisionUnreachable, Some(&commit)) {
                let how = match found_by {
                    FoundBy::Id => "fetched by id",
                    FoundBy::OtherRefs => "found through a non-branch ref such as a pull request",
                    FoundBy::Quarantine => {
                        "carried over from a quarantined copy of the cached mirror"
                    }
                    _ => "in the cache",
                };
                out.push(
                    Finding::new(
                        Code::RevisionUnreachable,
                        &record.id,
                        format!(
                            "commit `{}` exists ({how}) but no branch or tag reaches it",
                            r.commit.short()
                        ),
                    )
                    .source(&s.id)
                    .at(loc.clone())
                    .evidence(RevisionUnreachable {
                        commit: r.commit.as_str(),
                        found_by: how,
                    }),
                );
            }
            let actual = commit_time.and_then(|(secs, offset)| rfc3339(secs, offset));
            if let (Some((secs, _)), Some(recorded)) = (commit_time, &s.commit_time) {
                // `None`: unreadable, reported as invalid-record by the record checks.
                if commit_time_differs(recorded, *secs) == Some(true) {
                    out.push(
                        Finding::new(
                            Code::CommitTimeMismatch,
                            &record.id,
                            format!(
                                "recorded commit time `{recorded}` differs from the committer time `{}` of `{}`",
                                actual.as_deref().unwrap_or("?"),
                                r.commit.short()
                            ),
                        )
                        .source(&s.id)
                        .at(loc)
                        .evidence(CommitTimeMismatch {
                            recorded,
                            actual: actual.as_deref(),
                        }),
                    );
                }
            }
            Established::Present {
                commit_time: actual,
            }
        }
    }
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
