//! What an audit established, in domain terms: per record, each source's outcome,
//! each claim's verdict and the findings; plus what made the audit incomplete.
//!
//! This is the one result every output is built from. The frozen JSON report is a
//! separate type (the v1 report of the binary) converted from it, so that changing
//! anything here never changes what users parse (zizmor's `json/v1` lesson).

use std::collections::HashMap;
use std::sync::Arc;

use crate::error::FetchError;
use crate::finding::{Finding, Severity};
use crate::provider::Unchecked;
use crate::record::Record;

/// A claim's verdict, as the report names them (README, "Statuses").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClaimStatus {
    /// A cited line carries the value.
    Verified,
    /// A cited line carries the value at another precision, or marked approximate.
    Rounded,
    /// Only another line carries it.
    Shifted,
    /// The document does not carry it.
    Missing,
    /// The document could not be read, or the claim names nothing to look for.
    Unchecked,
}

/// What checking one claim against its document found.
#[derive(Debug, Clone)]
pub struct Verdict {
    pub status: ClaimStatus,
    /// The 1-based line carrying the value, cited or not.
    pub found_line: Option<u32>,
    pub line_text: Option<String>,
}

impl Verdict {
    /// The document was read and does not carry the value.
    pub(crate) fn missing() -> Verdict {
        Verdict {
            status: ClaimStatus::Missing,
            ..Verdict::unchecked()
        }
    }

    pub fn unchecked() -> Verdict {
        Verdict {
            status: ClaimStatus::Unchecked,
            found_line: None,
            line_text: None,
        }
    }
}

/// Where a source stands after the audit.
#[derive(Debug, Clone)]
pub enum SourceState {
    /// Its document was read and judged.
    Checked,
    /// Its repository, commit or path does not exist (a finding says which).
    Absent(Absence),
    /// It could not be judged; the audit is incomplete.
    Unchecked(Unchecked),
}

/// What of a source does not exist.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Absence {
    Repository,
    Commit,
    Path,
}

impl Absence {
    /// Why the source is absent, in words for a report.
    pub fn reason(self) -> &'static str {
        match self {
            Absence::Repository => "the repository does not exist",
            Absence::Commit => "the commit is not in the repository",
            Absence::Path => "the document does not exist at the commit",
        }
    }
}

/// The drift of a source's document at the head.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Upstream {
    pub head: String,
    pub changed: bool,
}

/// What the audit established about one source.
#[derive(Debug, Clone)]
pub struct SourceOutcome {
    pub state: SourceState,
    /// sha256 of the document at the revision, when it was read.
    pub sha256: Option<String>,
    pub git_blob: Option<String>,
    /// The commit's committer time, RFC 3339.
    pub commit_time: Option<String>,
    pub upstream: Option<Upstream>,
    /// Set when the remote could not be reached and the cache stood in: when the
    /// cache was last in step with it (RFC 3339). Reachability and upstream
    /// judgments are then as of that time.
    pub stale_since: Option<String>,
    /// A web document's `ETag` and `Last-Modified` as served.
    pub web: Option<WebValidators>,
    /// Set when the document was read from an archive (the forge lost it).
    pub archive: Option<crate::provider::archive::ArchiveRef>,
}

/// What identified a web document's version when it was fetched.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WebValidators {
    pub etag: Option<String>,
    pub last_modified: Option<String>,
}

impl SourceOutcome {
    pub fn unchecked(why: Unchecked) -> SourceOutcome {
        SourceOutcome {
            state: SourceState::Unchecked(why),
            sha256: None,
            git_blob: None,
            commit_time: None,
            upstream: None,
            stale_since: None,
            web: None,
            archive: None,
        }
    }

    /// The repository, commit or path does not exist; `commit_time` is the
    /// committer time when the commit does.
    pub fn absent(what: Absence, commit_time: Option<String>) -> SourceOutcome {
        SourceOutcome {
            state: SourceState::Absent(what),
            sha256: None,
            git_blob: None,
            commit_time,
            upstream: None,
            stale_since: None,
            web: None,
            archive: None,
        }
    }

    pub fn is_unchecked(&self) -> bool {
        matches!(self.state, SourceState::Unchecked(_))
    }
}

/// One record, audited. `sources` and `claims` run parallel to the record's own.
#[derive(Debug)]
pub struct RecordResult {
    pub record: Record,
    pub sources: Vec<SourceOutcome>,
    pub claims: Vec<Verdict>,
    pub findings: Vec<Finding>,
    /// Weights read in their model repositories, in artifact order.
    pub artifacts: Vec<ArtifactOutcome>,
    /// What the checks left out and people should hear (a limit reached), for
    /// stderr.
    pub notices: Vec<String>,
}

/// The weight files of one artifact as read in its model repository.
#[derive(Debug, Clone, PartialEq)]
pub struct ArtifactOutcome {
    pub label: String,
    /// The model repository as the record names it.
    pub repository: Option<String>,
    /// The commit read; `None` when nothing could be read.
    pub commit: Option<String>,
    pub files: Vec<crate::provider::WeightFile>,
    /// Why the repository could not be read (the audit is incomplete).
    pub unchecked: Option<String>,
}

/// A remote that could not be synced.
#[derive(Debug, Clone)]
pub struct RemoteFailure {
    pub remote: String,
    pub error: Arc<FetchError>,
}

/// The whole audit.
#[derive(Debug)]
pub struct AuditResult {
    pub records: Vec<RecordResult>,
    /// Findings of inputs that yielded no record (an unreadable file).
    pub orphan_findings: Vec<Finding>,
    /// Paths that could not be walked.
    pub walk_errors: Vec<WalkError>,
    /// Files found while walking that carry no record, skipped.
    pub skipped_inputs: Vec<std::path::PathBuf>,
    /// Whether some input could not be read as a record at all.
    pub unreadable_input: bool,
    /// Remotes that could not be synced (not counting missing repositories, which
    /// are findings).
    pub remote_failures: Vec<RemoteFailure>,
    /// Remotes that could not be reached, whose cached copy was judged instead.
    pub stale_remotes: Vec<RemoteFailure>,
    /// RFC 3339.
    pub generated_at: String,
    /// With `--baseline`: its findings this audit did not find, resolved or not
    /// re-checked.
    pub baseline_left: Option<Leftover>,
}

/// What became of the baseline's findings that an audit did not find again.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Leftover {
    /// Looked at again and gone.
    pub resolved: usize,
    /// About a source, claim or weights the audit could not check.
    pub not_rechecked: usize,
}

impl AuditResult {
    /// Every finding, in report order: per record, then the unreadable inputs'.
    pub(crate) fn findings(&self) -> impl Iterator<Item = &Finding> + '_ {
        self.records
            .iter()
            .flat_map(|r| &r.findings)
            .chain(&self.orphan_findings)
    }

    /// Whether every source was judged and every input read. A source that
    /// names no full commit is a finding of the record (`unpinned-url`), not
    /// something a retry could check: it leaves the audit complete.
    pub fn complete(&self) -> bool {
        self.walk_errors.is_empty()
            && !self.unreadable_input
            && self.records.iter().all(RecordResult::complete)
    }

    /// The most severe finding that counts (not baseline, not ignored), if any.
    pub fn worst(&self) -> Option<Severity> {
        self.findings()
            .filter(|f| f.counts())
            .map(|f| f.severity)
            .max()
    }
}

impl RecordResult {
    /// Whether every source and weights artifact of the record was judged (a
    /// source that names no full commit is its `unpinned-url` finding, not
    /// something a retry could check).
    pub fn complete(&self) -> bool {
        self.sources
            .iter()
            .enumerate()
            .all(|(i, s)| !s.is_unchecked() || self.unpinned(i))
            && self.artifacts.iter().all(|a| a.unchecked.is_none())
    }

    /// The most severe finding of the record that counts, if any.
    pub fn worst(&self) -> Option<Severity> {
        self.findings
            .iter()
            .filter(|f| f.counts())
            .map(|f| f.severity)
            .max()
    }

    /// Whether source `i` went unchecked because it names no full commit, which
    /// an `unpinned-url` finding about it says.
    fn unpinned(&self, i: usize) -> bool {
        let (Some(source), Some(outcome)) = (self.record.sources.get(i), self.sources.get(i))
        else {
            return false;
        };
        matches!(
            outcome.state,
            SourceState::Unchecked(Unchecked::Unresolvable(_))
        ) && self.findings.iter().any(|f| {
            f.code == crate::codes::Code::UnpinnedUrl && f.source.as_deref() == Some(&source.id)
        })
    }

    /// Where each claim, artifact and source stands, by label and id (the first
    /// of a duplicate winning), for [`Positions::of`] on every finding of the
    /// record without a scan per finding (records of 100k figures).
    pub fn positions(&self) -> Positions<'_> {
        fn first<'a>(
            entries: impl Iterator<Item = (&'a str, crate::record::At)>,
        ) -> HashMap<&'a str, crate::record::At> {
            let mut map = HashMap::new();
            for (k, at) in entries {
                map.entry(k).or_insert(at);
            }
            map
        }
        let r = &self.record;
        Positions {
            claims: first(r.claims.iter().map(|c| (c.label.as_str(), c.at))),
            artifacts: first(r.artifacts.iter().map(|a| (a.label.as_str(), a.at))),
            sources: first(r.sources.iter().map(|s| (s.id.as_str(), s.at))),
        }
    }
}

/// The positions of a record's entries, by label and id (see
/// [`RecordResult::positions`]).
pub struct Positions<'r> {
    claims: HashMap<&'r str, crate::record::At>,
    artifacts: HashMap<&'r str, crate::record::At>,
    sources: HashMap<&'r str, crate::record::At>,
}

impl Positions<'_> {
    /// What [`RecordResult::position_of`] says for `f`.
    pub fn of(&self, f: &Finding) -> crate::record::Position {
        let claim = f
            .claim
            .as_deref()
            .and_then(|l| self.claims.get(l))
            .and_then(|at| at.0);
        let artifact = || {
            f.evidence
                .get("artifact")
                .and_then(|v| v.as_str())
                .and_then(|l| self.artifacts.get(l))
                .and_then(|at| at.0)
        };
        let source = || {
            f.source
                .as_deref()
                .and_then(|id| self.sources.get(id))
                .and_then(|at| at.0)
        };
        claim
            .or_else(artifact)
            .or_else(source)
            .or_else(|| stated_position(f))
            .unwrap_or(crate::record::Position { line: 1, column: 1 })
    }
}

/// The position an input finding states in its evidence (`line`, `column`) or
/// location, if any.
pub fn stated_position(f: &Finding) -> Option<crate::record::Position> {
    let num = |k: &str| {
        f.evidence
            .get(k)
            .and_then(|v| v.as_u64())
            .map(|n| n as usize)
    };
    match (num("line"), num("column")) {
        (Some(line), column) if line > 0 => Some(crate::record::Position {
            line,
            column: column.filter(|c| *c > 0).unwrap_or(1),
        }),
        _ => f
            .location
            .line
            .filter(|_| f.code == crate::finding::Code::InvalidRecord && f.location.line > Some(0))
            .map(|l| crate::record::Position {
                line: l as usize,
                column: 1,
            }),
    }
}

/// A path that could not be walked (it does not exist, or a directory loops).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WalkError {
    pub path: std::path::PathBuf,
    pub message: String,
}
