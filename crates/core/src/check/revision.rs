//! `repository-missing`, `revision-missing`, `revision-unreachable`,
//! `commit-time-mismatch`: is the pinned revision there, and is it the one the
//! record describes? Judged from the provider's [`RevisionFacts`] alone.

use std::collections::HashSet;

use serde::Serialize;

use crate::finding::{evidence, Code, Finding, Shape};
use crate::provider::{DocRef, FoundBy, RevisionFacts};
use crate::record::{Record, Source};
use crate::result::Absence;

use super::location::source_location;

/// What a record was already told about a repository or commit: several sources in
/// one repository (six in the seed) share one missing repository or commit, and get
/// one finding for it, naming the first source.
pub type Reported = HashSet<(String, Option<String>, Code)>;

/// The pinned revisions: there, reachable, at the recorded time.
pub(crate) struct Revision;

impl super::Check for Revision {
    fn evidence(&self) -> &'static [Shape] {
        const SHAPES: &[Shape] = &[
            Shape::of::<RepositoryMissing<'static>>(),
            Shape::of::<RevisionMissing<'static>>(),
            Shape::of::<RevisionUnreachable<'static>>(),
            Shape::of::<CommitTimeMismatch<'static>>(),
        ];
        SHAPES
    }
}

evidence! {
    /// `repository-missing` evidence.
    #[derive(Serialize)]
    pub(crate) struct RepositoryMissing<'a> for(RepositoryMissing) identity() {
        /// The repository the record cites (redacted).
        url: String,
        /// The URL it was fetched from, after `--rewrite`.
        fetched_from: &'a str,
        remote_said: &'a str,
        /// What the archive answered when asked for the commit (added in v1).
        #[serde(skip_serializing_if = "Option::is_none")]
        archive: Option<&'a str>,
    }
}

evidence! {
    /// `revision-missing` evidence.
    #[derive(Serialize)]
    pub(crate) struct RevisionMissing<'a> for(RevisionMissing) identity() {
        commit: &'a str,
        /// Why the server would not give the commit by id, when that was tried.
        fetch_by_id_error: Option<&'a str>,
        /// What the archive answered when asked for the commit (added in v1).
        #[serde(skip_serializing_if = "Option::is_none")]
        archive: Option<&'a str>,
    }
}

evidence! {
    /// `revision-unreachable` evidence.
    #[derive(Serialize)]
    pub(crate) struct RevisionUnreachable<'a> for(RevisionUnreachable) identity() {
        commit: &'a str,
        found_by: &'a str,
    }
}

evidence! {
    /// `commit-time-mismatch` evidence.
    #[derive(Serialize)]
    pub(crate) struct CommitTimeMismatch<'a> for(CommitTimeMismatch) identity(recorded) {
        recorded: &'a str,
        actual: Option<&'a str>,
    }
}

/// Whether the revision is there to read a document from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Established {
    /// The repository or the commit does not exist.
    Absent(Absence),
    /// The commit is there; its committer time, RFC 3339.
    Present { commit_time: Option<String> },
}

/// What an archive answered when asked for a repository or commit the forge lost.
#[derive(Debug, Clone, Copy, Default)]
pub enum ArchiveSaid<'a> {
    /// No archive was asked.
    #[default]
    NotAsked,
    /// It does not hold the content: its words.
    NotArchived(&'a str),
    /// It could not be asked (why): the forge's verdict stands all the same.
    Unreachable(&'a str),
}

impl<'a> ArchiveSaid<'a> {
    /// The evidence's `archive` field.
    fn evidence(self) -> Option<&'a str> {
        match self {
            ArchiveSaid::NotAsked => None,
            ArchiveSaid::NotArchived(said) => Some(said),
            ArchiveSaid::Unreachable(_) => Some("unreachable"),
        }
    }

    /// What the message adds.
    fn note(self) -> String {
        match self {
            ArchiveSaid::Unreachable(why) => {
                format!("; the archive could not be asked for a copy ({why})")
            }
            _ => String::new(),
        }
    }
}

/// Judges the revision a source pins; `said` is what an archive answered when
/// asked for a repository or commit the forge lost (evidence). A forge's "not
/// found" is a verdict, whatever the archive answered.
pub fn check(
    record: &Record,
    s: &Source,
    r: &DocRef,
    facts: &RevisionFacts,
    said: ArchiveSaid<'_>,
    reported: &mut Reported,
    out: &mut Vec<Finding>,
) -> Established {
    let archive = said.evidence();
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
                    Finding::new(
                        Code::RepositoryMissing,
                        &record.id,
                        format!("{described}{}", said.note()),
                    )
                    .source(&s.id)
                    .at(loc)
                    .evidence(RepositoryMissing {
                        url: crate::url::redact(&r.remote),
                        fetched_from,
                        remote_said,
                        archive,
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
                } + &said.note();
                out.push(
                    Finding::new(Code::RevisionMissing, &record.id, message)
                        .source(&s.id)
                        .at(loc)
                        .evidence(RevisionMissing {
                            commit: r.commit.as_str(),
                            fetch_by_id_error: by_id_error.as_deref(),
                            archive,
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
                out.push(unreachable(record, s, r, found_by).at(loc.clone()));
            }
            let actual = commit_time.and_then(|(secs, offset)| rfc3339(secs, offset));
            if let (Some((secs, offset)), Some(recorded)) = (commit_time, &s.commit_time) {
                // `None`: unreadable, reported as invalid-record by the record checks.
                if commit_time_differs(recorded, *secs) == Some(true) {
                    let times = (recorded.as_str(), *secs, *offset, actual.as_deref());
                    out.push(time_mismatch(record, s, r, times).at(loc));
                }
            }
            Established::Present {
                commit_time: actual,
            }
        }
    }
}

/// `revision-unreachable`: the commit is there, found some other way than
/// through a branch or tag.
fn unreachable(record: &Record, s: &Source, r: &DocRef, found_by: &FoundBy) -> Finding {
    let how = match found_by {
        FoundBy::Id => "fetched by id",
        FoundBy::OtherRefs => "found through a non-branch ref such as a pull request",
        FoundBy::Quarantine => "carried over from a quarantined copy of the cached mirror",
        _ => "in the cache",
    };
    Finding::new(
        Code::RevisionUnreachable,
        &record.id,
        format!(
            "commit `{}` exists ({how}) but no branch or tag reaches it",
            r.commit.short()
        ),
    )
    .source(&s.id)
    .evidence(RevisionUnreachable {
        commit: r.commit.as_str(),
        found_by: how,
    })
}

/// `commit-time-mismatch`, of the recorded time against the committer time
/// (seconds, offset in minutes, and as RFC 3339).
fn time_mismatch(
    record: &Record,
    s: &Source,
    r: &DocRef,
    (recorded, secs, offset, actual): (&str, i64, i32, Option<&str>),
) -> Finding {
    let mut message = format!(
        "recorded commit time `{recorded}` differs from the committer time `{}` of `{}`",
        actual.unwrap_or("?"),
        r.commit.short()
    );
    if let Some(apart) = compare_times(recorded, secs, offset) {
        message.push_str(": ");
        message.push_str(&apart);
    }
    Finding::new(Code::CommitTimeMismatch, &record.id, message)
        .source(&s.id)
        .evidence(CommitTimeMismatch { recorded, actual })
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

/// Two times that look alike at a glance (`18:27:58Z` and `18:27:58-08:00`) said
/// so that the difference shows: both in UTC, each with its own offset beside it
/// when it has one, the day of the commit relative to the recorded one, and how
/// far apart they are: "recorded 18:27:58Z, committed 02:27:58Z next day
/// (18:27:58−08:00), 8 h apart". `None` when the recorded text is no time.
pub(crate) fn compare_times(
    recorded: &str,
    actual_secs: i64,
    offset_minutes: i32,
) -> Option<String> {
    use time::format_description::well_known::Rfc3339;
    use time::{OffsetDateTime, UtcOffset};
    let clock = time::macros::format_description!("[hour]:[minute]:[second]");
    let day = time::macros::format_description!("[year]-[month]-[day]");
    let actual = OffsetDateTime::from_unix_timestamp(actual_secs).ok()?;
    let local = UtcOffset::from_whole_seconds(offset_minutes * 60)
        .ok()
        .map(|o| actual.to_offset(o));
    // A time in its own offset, when that is not UTC: `(18:27:58−08:00)`.
    let own = |t: OffsetDateTime| -> String {
        let o = t.offset().whole_minutes();
        if o == 0 {
            return String::new();
        }
        let sign = if o < 0 { '\u{2212}' } else { '+' };
        let o = o.unsigned_abs();
        format!(
            " ({}{sign}{:02}:{:02})",
            t.format(clock).unwrap_or_default(),
            o / 60,
            o % 60
        )
    };
    let committed_local = local.map(own).unwrap_or_default();
    if let Ok(r) = OffsetDateTime::parse(recorded.trim(), &Rfc3339) {
        let r_utc = r.to_offset(UtcOffset::UTC);
        let when = match (actual.date() - r_utc.date()).whole_days() {
            0 => String::new(),
            1 => " next day".to_string(),
            -1 => " the day before".to_string(),
            _ => format!(" on {}", actual.date().format(day).ok()?),
        };
        return Some(format!(
            "recorded {}Z{}, committed {}Z{when}{committed_local}, {} apart",
            r_utc.format(clock).ok()?,
            own(r),
            actual.format(clock).ok()?,
            span(actual_secs.abs_diff(r.unix_timestamp()))
        ));
    }
    let date = time::Date::parse(recorded.trim(), day).ok()?;
    Some(format!(
        "recorded the day {}, committed {} at {}Z{committed_local} (days compared in UTC)",
        date.format(day).ok()?,
        actual.date().format(day).ok()?,
        actual.format(clock).ok()?,
    ))
}

/// A duration in its two largest units: `8 h`, `1 d 2 h`, `5 min 3 s`.
fn span(secs: u64) -> String {
    let units = [(86_400, "d"), (3_600, "h"), (60, "min"), (1, "s")];
    let mut left = secs;
    let mut parts = Vec::new();
    for (size, name) in units {
        let n = left / size;
        left %= size;
        if n > 0 || !parts.is_empty() {
            parts.push((n, name));
        }
    }
    let shown: Vec<String> = parts
        .into_iter()
        .take(2)
        .filter(|(n, _)| *n > 0)
        .map(|(n, name)| format!("{n} {name}"))
        .collect();
    if shown.is_empty() {
        "0 s".to_string()
    } else {
        shown.join(" ")
    }
}

/// Whether pinaudit can read a recorded commit time (RFC 3339, or a date).
pub(crate) fn is_time(recorded: &str) -> bool {
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
    fn compared_times_show_the_difference() {
        // 2025-11-18T18:27:58-08:00 is 2025-11-19T02:27:58Z.
        let t = 1_763_519_278;
        assert_eq!(
            compare_times("2025-11-18T18:27:58Z", t, -480).as_deref(),
            Some("recorded 18:27:58Z, committed 02:27:58Z next day (18:27:58\u{2212}08:00), 8 h apart")
        );
        assert_eq!(
            compare_times("2025-11-19T04:57:58+02:00", t, 0).as_deref(),
            Some("recorded 02:57:58Z (04:57:58+02:00), committed 02:27:58Z, 30 min apart")
        );
        assert_eq!(
            compare_times("2025-11-21T03:28:59Z", t, 420).as_deref(),
            Some("recorded 03:28:59Z, committed 02:27:58Z on 2025-11-19 (09:27:58+07:00), 2 d 1 h apart")
        );
        assert_eq!(
            compare_times("2025-11-18", t, -480).as_deref(),
            Some("recorded the day 2025-11-18, committed 2025-11-19 at 02:27:58Z (18:27:58\u{2212}08:00) (days compared in UTC)")
        );
        assert_eq!(compare_times("yesterday", t, 0), None);
        assert_eq!(span(0), "0 s");
        assert_eq!(span(3_601), "1 h");
        assert_eq!(span(61), "1 min 1 s");
    }

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
