//! The frozen `pinaudit/report/v1` document, built from the domain
//! [`AuditResult`]: field names are frozen, new fields may be added, none renamed or
//! removed. Internal types never serialise into it directly, so refactoring them
//! cannot change what users parse.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Number, Value};

use crate::finding::{Code, Finding, Location, Severity};
use crate::fingerprint;
use crate::record::{Claim, Position, Source};
use crate::result::{self, AuditResult, SourceOutcome, SourceState, Verdict};

pub(crate) const SCHEMA: &str = "pinaudit/report/v1";

#[derive(Debug, Clone, Serialize)]
pub(crate) struct Report {
    pub(crate) schema: &'static str,
    pub(crate) tool: Tool,
    pub(crate) generated_at: String,
    pub(crate) summary: Summary,
    pub(crate) records: Vec<RecordReport>,
    pub(crate) findings: Vec<FindingReport>,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct Tool {
    pub(crate) name: &'static str,
    pub(crate) version: &'static str,
}

impl Default for Tool {
    fn default() -> Tool {
        Tool {
            name: "pinaudit",
            version: env!("CARGO_PKG_VERSION"),
        }
    }
}

#[derive(Debug, Clone, Default, Serialize)]
pub(crate) struct Summary {
    pub(crate) records: usize,
    pub(crate) sources: usize,
    pub(crate) claims: usize,
    pub(crate) verified_claims: usize,
    pub(crate) unchecked_sources: usize,
    /// Sources judged from the cache because their remote could not be reached
    /// (added in v1).
    #[serde(default)]
    pub(crate) stale_sources: usize,
    pub(crate) complete: bool,
    pub(crate) findings: Counts,
    /// Findings already in the `--baseline` report, not counted (added in v1).
    #[serde(default)]
    pub(crate) baseline_findings: usize,
    /// Findings the configuration ignores, not counted (added in v1).
    #[serde(default)]
    pub(crate) ignored_findings: usize,
    /// With `--baseline`: its findings this audit looked at again and did not
    /// find (added in v1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) baseline_resolved: Option<usize>,
    /// With `--baseline`: its findings about a source, claim or weights this
    /// audit could not check, so neither found nor resolved (added in v1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) baseline_not_rechecked: Option<usize>,
    /// The claims by status (added in v1): `verified_claims` counts the
    /// verified and the rounded together.
    pub(crate) claims_by_status: ClaimCounts,
}

/// How many claims have each status.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub(crate) struct ClaimCounts {
    pub(crate) verified: usize,
    pub(crate) rounded: usize,
    pub(crate) shifted: usize,
    pub(crate) missing: usize,
    pub(crate) unchecked: usize,
}

impl ClaimCounts {
    /// Counts one claim of status `s` in.
    pub(crate) fn add(&mut self, s: ClaimStatus) {
        match s {
            ClaimStatus::Verified => self.verified += 1,
            ClaimStatus::Rounded => self.rounded += 1,
            ClaimStatus::Shifted => self.shifted += 1,
            ClaimStatus::Missing => self.missing += 1,
            ClaimStatus::Unchecked => self.unchecked += 1,
        }
    }

    /// `3 verified, 1 rounded, ...`, the statuses that have claims (or `none`).
    pub(crate) fn words(&self) -> String {
        let parts: Vec<String> = [
            (self.verified, "verified"),
            (self.rounded, "rounded"),
            (self.shifted, "shifted"),
            (self.missing, "missing"),
            (self.unchecked, "unchecked"),
        ]
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, w)| format!("{n} {w}"))
        .collect();
        if parts.is_empty() {
            "none".to_string()
        } else {
            parts.join(", ")
        }
    }
}

/// The claims of `records` by status.
fn by_status(records: &[RecordReport]) -> ClaimCounts {
    let mut counts = ClaimCounts::default();
    for c in records.iter().flat_map(|r| &r.claims) {
        counts.add(c.status);
    }
    counts
}

impl Summary {
    fn baseline_left(&mut self, left: Option<crate::diff::Leftover>) {
        self.baseline_resolved = left.map(|l| l.resolved);
        self.baseline_not_rechecked = left.map(|l| l.not_rechecked);
    }
}

#[derive(Debug, Clone, Copy, Default, Serialize)]
pub(crate) struct Counts {
    pub(crate) error: usize,
    pub(crate) warning: usize,
    pub(crate) note: usize,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct RecordReport {
    pub(crate) id: String,
    /// The input file, as shown to people (a non-UTF-8 name is shown lossily).
    pub(crate) file: String,
    pub(crate) sources: Vec<SourceReport>,
    pub(crate) claims: Vec<ClaimReport>,
    /// Weights read in their model repositories by Git LFS pointer (added in v1;
    /// left out when the record names no model repository).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) artifacts: Vec<ArtifactReport>,
}

/// One weights artifact as read in its model repository.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct ArtifactReport {
    pub(crate) label: String,
    /// The model repository, credentials redacted.
    pub(crate) repository: Option<String>,
    /// The commit read (the head when the record names no revision).
    pub(crate) revision: Option<String>,
    pub(crate) status: SourceStatus,
    pub(crate) reason: Option<String>,
    /// Each weight file: path, sha256, size, and whether git holds an LFS pointer.
    pub(crate) files: Vec<WeightFileReport>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct WeightFileReport {
    pub(crate) path: String,
    pub(crate) sha256: String,
    pub(crate) size: u64,
    pub(crate) lfs: bool,
}

fn artifact_report(a: &result::ArtifactOutcome) -> ArtifactReport {
    ArtifactReport {
        label: a.label.clone(),
        repository: a.repository.as_deref().map(crate::url::redact),
        revision: a.commit.clone(),
        status: match (&a.unchecked, &a.commit) {
            (Some(_), _) => SourceStatus::Unchecked,
            (None, Some(_)) => SourceStatus::Checked,
            (None, None) => SourceStatus::Absent,
        },
        reason: a.unchecked.clone(),
        files: a
            .files
            .iter()
            .map(|f| WeightFileReport {
                path: f.path.clone(),
                sha256: f.sha256.clone(),
                size: f.size,
                lfs: f.lfs,
            })
            .collect(),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum SourceStatus {
    Checked,
    /// Its repository, commit or path does not exist (added in v1).
    Absent,
    Unchecked,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Sha256Pair {
    pub(crate) expected: Option<String>,
    pub(crate) actual: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Upstream {
    pub(crate) head: Option<String>,
    pub changed: Option<bool>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct SourceReport {
    pub(crate) id: String,
    pub(crate) url: Option<String>,
    pub(crate) repository: Option<String>,
    pub(crate) revision: Option<String>,
    pub(crate) path: Option<String>,
    pub(crate) status: SourceStatus,
    /// Why an `unchecked` source could not be checked (added in v1).
    #[serde(default)]
    pub(crate) reason: Option<String>,
    #[serde(default)]
    pub(crate) sha256: Sha256Pair,
    pub(crate) git_blob: Option<String>,
    pub(crate) commit_time: Option<String>,
    pub(crate) upstream: Option<Upstream>,
    /// Set when the remote could not be reached and the cache was judged instead:
    /// when the cache was last in step with the remote (added in v1).
    #[serde(default)]
    pub(crate) stale_since: Option<String>,
    /// A web document's `ETag` as served (added in v1; only for web
    /// sources).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) etag: Option<String>,
    /// A web document's `Last-Modified` as served (added in v1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) last_modified: Option<String>,
    /// The archive the document was read from, when the forge lost it (added in
    /// v1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) archive: Option<ArchiveReport>,
    /// A checked git source's durable citation: its SWHID with the repository,
    /// the pinned commit, the path and the cited lines as qualifiers, computed
    /// from `git_blob` without the network ([`crate::swhid`]; added in v1, left out
    /// for every other source).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) swhid: Option<String>,
}

impl SourceReport {
    /// The archive's page for the source's SWHID, when it has one.
    pub(crate) fn archive_url(&self) -> Option<String> {
        self.swhid
            .as_deref()
            .map(|s| format!("{}{s}", crate::swhid::ARCHIVE_WEB))
    }
}

/// `archive` of a source read from an archive: the service and how to cite
/// the archived copy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct ArchiveReport {
    /// `software-heritage`.
    pub(crate) service: String,
    /// The SWHID of the archived document (Software Heritage).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) swhid: Option<String>,
    /// The capture's URL (the Wayback Machine).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) url: Option<String>,
    /// When the capture was taken, RFC 3339 (the Wayback Machine).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) time: Option<String>,
}

impl ArchiveReport {
    fn of(a: &crate::provider::archive::ArchiveRef) -> ArchiveReport {
        use crate::provider::archive::ArchiveRef;
        match a {
            ArchiveRef::SoftwareHeritage { swhid } => ArchiveReport {
                service: a.service().to_string(),
                swhid: Some(swhid.clone()),
                url: None,
                time: None,
            },
            ArchiveRef::Wayback { url, time } => ArchiveReport {
                service: a.service().to_string(),
                swhid: None,
                url: Some(url.clone()),
                time: Some(time.clone()),
            },
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum ClaimStatus {
    Verified,
    Rounded,
    Shifted,
    Missing,
    Unchecked,
}

impl ClaimStatus {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            ClaimStatus::Verified => "verified",
            ClaimStatus::Rounded => "rounded",
            ClaimStatus::Shifted => "shifted",
            ClaimStatus::Missing => "missing",
            ClaimStatus::Unchecked => "unchecked",
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct ClaimReport {
    pub(crate) label: String,
    pub(crate) source: Option<String>,
    pub(crate) lines: Option<[u32; 2]>,
    /// The value as the record writes it (a JSON number with the same digits).
    pub(crate) value: Option<Value>,
    pub(crate) unit: Option<String>,
    pub(crate) status: ClaimStatus,
    pub(crate) found_line: Option<u32>,
    pub(crate) line_text: Option<String>,
    /// The claim's own figures disagree (`inconsistent-value`), whatever the line
    /// says (added in v1).
    #[serde(default)]
    pub(crate) inconsistent_value: bool,
}

impl Report {
    /// Builds a report, deriving the summary from its parts so the two never disagree.
    pub(crate) fn new(
        records: Vec<RecordReport>,
        findings: Vec<FindingReport>,
        generated_at: String,
    ) -> Report {
        let mut counts = Counts::default();
        for f in &findings {
            match f.severity {
                Severity::Error => counts.error += 1,
                Severity::Warning => counts.warning += 1,
                Severity::Note => counts.note += 1,
            }
        }
        let sources = records.iter().flat_map(|r| &r.sources);
        let claims = records.iter().flat_map(|r| &r.claims);
        let unchecked_sources = sources
            .clone()
            .filter(|s| s.status == SourceStatus::Unchecked)
            .count();
        let summary = Summary {
            records: records.len(),
            sources: sources.count(),
            claims: claims.clone().count(),
            verified_claims: claims
                .filter(|c| matches!(c.status, ClaimStatus::Verified | ClaimStatus::Rounded))
                .count(),
            unchecked_sources,
            stale_sources: records
                .iter()
                .flat_map(|r| &r.sources)
                .filter(|s| s.stale_since.is_some())
                .count(),
            complete: unchecked_sources == 0,
            findings: counts,
            baseline_findings: findings.iter().filter(|f| f.baseline).count(),
            ignored_findings: findings.iter().filter(|f| f.ignored.is_some()).count(),
            baseline_resolved: None,
            baseline_not_rechecked: None,
            claims_by_status: by_status(&records),
        };
        Report {
            schema: SCHEMA,
            tool: Tool::default(),
            generated_at,
            summary,
            records,
            findings,
        }
    }

    /// The findings of each record (`[i]` for `records[i]`, in report order) and
    /// those of inputs that yielded no record (an unreadable file), in one pass
    /// over the findings: a renderer asking record by record went through every
    /// finding for every record, quadratic in a large report.
    ///
    /// A finding belongs to the records with its id, and if it names a file, to
    /// the one read from that file (record ids need not be unique).
    pub(crate) fn findings_by_record(&self) -> FindingsByRecord<'_> {
        use std::collections::HashMap;
        let mut by_id: HashMap<&str, Vec<usize>> = HashMap::with_capacity(self.records.len());
        let mut by_file: HashMap<(&str, &str), Vec<usize>> =
            HashMap::with_capacity(self.records.len());
        for (i, r) in self.records.iter().enumerate() {
            by_id.entry(r.id.as_str()).or_default().push(i);
            by_file
                .entry((r.id.as_str(), r.file.as_str()))
                .or_default()
                .push(i);
        }
        let mut records = vec![Vec::new(); self.records.len()];
        let mut orphans = Vec::new();
        for f in &self.findings {
            let owners = match f.file.as_deref() {
                Some(file) => by_file.get(&(f.record.as_str(), file)),
                None => by_id.get(f.record.as_str()),
            };
            match owners {
                Some(owners) => owners.iter().for_each(|&i| records[i].push(f)),
                None => orphans.push(f),
            }
        }
        FindingsByRecord { records, orphans }
    }

    /// The most severe finding that counts (not baseline, not ignored), if any.
    pub(crate) fn worst(&self) -> Option<Severity> {
        self.findings
            .iter()
            .filter(|f| f.counts())
            .map(|f| f.severity)
            .max()
    }
}

/// A report's findings grouped by record ([`Report::findings_by_record`]).
pub(crate) struct FindingsByRecord<'a> {
    /// The findings of `records[i]`, in report order.
    pub(crate) records: Vec<Vec<&'a FindingReport>>,
    /// Findings of inputs that yielded no record, in report order.
    pub(crate) orphans: Vec<&'a FindingReport>,
}

/// Where a finding points, as v1 writes it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct LocationReport {
    pub(crate) repository: Option<String>,
    pub(crate) revision: Option<String>,
    pub(crate) path: Option<String>,
    pub(crate) line: Option<u32>,
}

/// One finding, as v1 writes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct FindingReport {
    pub(crate) code: Code,
    pub(crate) severity: Severity,
    pub(crate) record: String,
    /// The input file of the record (added in v1: record ids need not be unique).
    #[serde(default)]
    pub(crate) file: Option<String>,
    pub(crate) source: Option<String>,
    pub(crate) claim: Option<String>,
    pub(crate) message: String,
    #[serde(default)]
    pub(crate) location: LocationReport,
    #[serde(default)]
    pub(crate) evidence: Map<String, Value>,
    /// Advice with the real commit, path and target (added in v1).
    #[serde(default)]
    pub(crate) hint: String,
    /// Where in the record file the finding points: the figure, artifact or
    /// source it is about (added in v1). `null` only when the finding
    /// names no file.
    #[serde(default)]
    pub(crate) record_location: Option<RecordLocation>,
    /// Stable identity of what the finding is about ([`crate::fingerprint`]); the
    /// same across runs while the record and its pins stay the same (added in v1).
    #[serde(default)]
    pub(crate) fingerprint: String,
    /// Already in the `--baseline` report, so not counted (added in v1).
    #[serde(default)]
    pub(crate) baseline: bool,
    /// Ignored by the configuration, with its reason, so not counted (added in v1).
    #[serde(default)]
    pub(crate) ignored: Option<Ignored>,
}

impl RecordReport {
    /// The web page of a claim's cited lines at its source's pinned revision.
    pub(crate) fn claim_url(&self, c: &ClaimReport) -> Option<String> {
        let s = self
            .sources
            .iter()
            .find(|s| Some(&s.id) == c.source.as_ref())?;
        crate::record::url::source_web_url(
            s.url.as_deref(),
            s.repository.as_deref(),
            s.path.as_deref(),
            s.revision.as_deref()?,
            c.lines.map(|[first, _]| first),
        )
    }
}

impl FindingReport {
    /// The web page of the line the finding is about, at the revision its
    /// location names: the pinned commit, or the head for drift.
    pub fn web_url(&self) -> Option<String> {
        let l = &self.location;
        crate::record::url::source_web_url(
            None,
            l.repository.as_deref(),
            l.path.as_deref(),
            l.revision.as_deref()?,
            l.line,
        )
    }

    /// Where in the record file the finding points, with a fallback for a
    /// finding that names no file: its location's path, else the record id.
    pub(crate) fn record_position(&self) -> RecordLocation {
        self.record_location
            .clone()
            .unwrap_or_else(|| RecordLocation {
                file: self
                    .file
                    .clone()
                    .or_else(|| self.location.path.clone())
                    .unwrap_or_else(|| self.record.clone()),
                line: 1,
                column: 1,
            })
    }
}

/// A place in a record file, 1-based; the column counts characters.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub(crate) struct RecordLocation {
    pub(crate) file: String,
    pub(crate) line: usize,
    pub(crate) column: usize,
}

/// The finding's fingerprint ([`crate::fingerprint`]); SARIF's
/// `partialFingerprints` carry it.
pub(crate) fn fingerprint_of(f: &FindingReport) -> String {
    if f.fingerprint.is_empty() {
        fingerprint_of_report(f, None)
    } else {
        f.fingerprint.clone()
    }
}

/// Why a finding is ignored, as the configuration says.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Ignored {
    pub(crate) reason: String,
}

impl FindingReport {
    /// Whether the finding counts toward the exit status.
    pub(crate) fn counts(&self) -> bool {
        !self.baseline && self.ignored.is_none()
    }
}

impl From<&Location> for LocationReport {
    fn from(l: &Location) -> LocationReport {
        LocationReport {
            repository: l.repository.clone(),
            revision: l.revision.clone(),
            path: l.path.clone(),
            line: l.line,
        }
    }
}

impl From<&Finding> for FindingReport {
    fn from(f: &Finding) -> FindingReport {
        FindingReport {
            code: f.code,
            severity: f.severity,
            record: f.record.clone(),
            file: f.file.clone(),
            source: f.source.clone(),
            claim: f.claim.clone(),
            message: f.message.clone(),
            location: (&f.location).into(),
            evidence: f.evidence.clone(),
            hint: f.hint_text().to_string(),
            record_location: f.file.clone().map(|file| {
                let at = result::stated_position(f).unwrap_or(Position { line: 1, column: 1 });
                RecordLocation {
                    file,
                    line: at.line,
                    column: at.column,
                }
            }),
            fingerprint: f
                .fingerprint
                .clone()
                .unwrap_or_else(|| crate::fingerprint::of_finding(f, None)),
            baseline: f.baseline,
            ignored: f.ignored.clone().map(|reason| Ignored { reason }),
        }
    }
}

impl From<Finding> for FindingReport {
    /// [`From<&Finding>`], moving the finding's facts instead of copying them.
    fn from(f: Finding) -> FindingReport {
        let record_location = f.file.clone().map(|file| {
            let at = result::stated_position(&f).unwrap_or(Position { line: 1, column: 1 });
            RecordLocation {
                file,
                line: at.line,
                column: at.column,
            }
        });
        moved(f, record_location)
    }
}

/// The report of `f`, its facts moved, pointing at `record_location` (which
/// [`Report::from_result`] knows already: working it out again per finding
/// was a tenth of the conversion).
fn moved(mut f: Finding, record_location: Option<RecordLocation>) -> FindingReport {
    let fingerprint = match f.fingerprint.take() {
        Some(fp) => fp,
        None => crate::fingerprint::of_finding(&f, None),
    };
    let hint = match f.hint {
        Some(hint) => hint,
        None => f.code.meta().hint.to_string(),
    };
    let location = f.location;
    FindingReport {
        code: f.code,
        severity: f.severity,
        record: f.record,
        file: f.file,
        source: f.source,
        claim: f.claim,
        message: f.message,
        location: LocationReport {
            repository: location.repository,
            revision: location.revision,
            path: location.path,
            line: location.line,
        },
        evidence: f.evidence,
        hint,
        record_location,
        fingerprint,
        baseline: f.baseline,
        ignored: f.ignored.map(|reason| Ignored { reason }),
    }
}

impl From<result::ClaimStatus> for ClaimStatus {
    fn from(s: result::ClaimStatus) -> ClaimStatus {
        match s {
            result::ClaimStatus::Verified => ClaimStatus::Verified,
            result::ClaimStatus::Rounded => ClaimStatus::Rounded,
            result::ClaimStatus::Shifted => ClaimStatus::Shifted,
            result::ClaimStatus::Missing => ClaimStatus::Missing,
            result::ClaimStatus::Unchecked => ClaimStatus::Unchecked,
        }
    }
}

/// The value as the record writes it: a JSON number with the same digits.
fn claim_value(c: &Claim) -> Option<Value> {
    c.value
        .as_ref()
        .and_then(|v| v.text().parse::<Number>().ok())
        .map(Value::Number)
}

/// The durable citation of a checked git source: its document's blob at the
/// pinned commit, for `lines` (the span of the lines its claims cite).
fn swhid_of(
    at: &crate::record::Located,
    o: &SourceOutcome,
    lines: Option<(u32, u32)>,
) -> Option<String> {
    if !matches!(o.state, SourceState::Checked) {
        return None;
    }
    let revision = at.revision.as_ref()?.to_string();
    crate::swhid::Swhid::of_document(
        o.git_blob.as_deref()?,
        &revision,
        at.repository.as_deref(),
        at.path.as_deref()?,
        lines,
    )
    .map(|s| s.to_string())
}

fn source_report(s: &Source, o: &SourceOutcome, lines: Option<(u32, u32)>) -> SourceReport {
    let (status, reason) = match &o.state {
        SourceState::Checked => (SourceStatus::Checked, None),
        SourceState::Absent(what) => (SourceStatus::Absent, Some(what.reason().to_string())),
        SourceState::Unchecked(why) => (SourceStatus::Unchecked, Some(why.to_string())),
    };
    // A source given only as a URL is located by it.
    let at = s.located();
    let swhid = swhid_of(&at, o, lines);
    SourceReport {
        id: s.id.clone(),
        url: s.url.clone(),
        repository: at.repository,
        revision: at.revision.map(|r| r.to_string()),
        path: at.path,
        status,
        reason,
        sha256: Sha256Pair {
            expected: s.sha256.as_ref().map(|h| h.text()),
            actual: o.sha256.clone(),
        },
        git_blob: o.git_blob.clone(),
        commit_time: match o.state {
            SourceState::Unchecked(_) => s.commit_time.clone(),
            _ => o.commit_time.clone(),
        },
        upstream: o.upstream.as_ref().map(|u| Upstream {
            head: Some(u.head.clone()),
            changed: Some(u.changed),
        }),
        stale_since: o.stale_since.clone(),
        etag: o.web.as_ref().and_then(|w| w.etag.clone()),
        last_modified: o.web.as_ref().and_then(|w| w.last_modified.clone()),
        archive: o.archive.as_ref().map(ArchiveReport::of),
        swhid,
    }
}

/// The lines the claims of source `id` cite, from the first to the last.
fn cited_span(claims: &[Claim], id: &str) -> Option<(u32, u32)> {
    claims
        .iter()
        .filter(|c| c.source.as_deref() == Some(id))
        .filter_map(|c| c.lines)
        .map(|l| (l.first(), l.last()))
        .reduce(|(a, b), (c, d)| (a.min(c), b.max(d)))
}

fn claim_report(
    c: &Claim,
    v: &Verdict,
    inconsistent: &std::collections::HashSet<&str>,
) -> ClaimReport {
    ClaimReport {
        label: c.label.clone(),
        source: c.source.clone(),
        lines: c.lines.map(|l| [l.first(), l.last()]),
        value: claim_value(c),
        unit: c.unit.clone(),
        status: v.status.into(),
        found_line: v.found_line,
        line_text: v.line_text.clone(),
        inconsistent_value: inconsistent.contains(c.label.as_str()),
    }
}

impl From<AuditResult> for Report {
    /// [`From<&AuditResult>`] for a result that is not used after: each finding's
    /// facts (evidence, messages) are moved into the report rather than copied
    /// (a twelfth of a large re-check).
    fn from(a: AuditResult) -> Report {
        Report::from_result(a, crate::par::Pool::cores()).0
    }
}

impl Report {
    /// [`From<AuditResult>`], giving back what the report does not take: the
    /// result without its findings. A caller that exits right after may forget
    /// it rather than free every record piece by piece (records read on other
    /// threads are the slowest to free).
    pub(crate) fn from_result(mut a: AuditResult, pool: crate::par::Pool) -> (Report, AuditResult) {
        let generated_at = std::mem::take(&mut a.generated_at);
        let complete = a.complete();
        // The record reports, and where each finding points, on every core.
        let converted: Vec<(RecordReport, Vec<RecordLocation>)> =
            pool.map(&a.records, |r| (record_report(r), finding_locations(r)));
        let mut records = Vec::with_capacity(converted.len());
        // Sized once: growing 16,000 findings by doubling copied them over and over.
        let count = a.records.iter().map(|r| r.findings.len()).sum::<usize>();
        let mut findings = Vec::with_capacity(count + a.orphan_findings.len());
        for (r, (record, at)) in a.records.iter_mut().zip(converted) {
            records.push(record);
            for (f, at) in std::mem::take(&mut r.findings).into_iter().zip(at) {
                findings.push(moved(f, Some(at)));
            }
        }
        findings.extend(
            std::mem::take(&mut a.orphan_findings)
                .into_iter()
                .map(FindingReport::from),
        );
        let mut report = Report::new(records, findings, generated_at);
        report.summary.complete = complete;
        report.summary.baseline_left(a.baseline_left);
        (report, a)
    }
}

/// Where each finding of a record points in its record file.
fn finding_locations(r: &result::RecordResult) -> Vec<RecordLocation> {
    let positions = r.positions();
    r.findings
        .iter()
        .map(|f| {
            let at = positions.of(f);
            RecordLocation {
                file: f
                    .file
                    .clone()
                    .unwrap_or_else(|| r.record.file.display().to_string()),
                line: at.line,
                column: at.column,
            }
        })
        .collect()
}

/// The report of one checked record and of its findings (moved out of it), as
/// [`Report::from_result`] makes them.
pub(crate) fn record_and_findings(
    mut r: result::RecordResult,
) -> (RecordReport, Vec<FindingReport>) {
    let record = record_report(&r);
    let at = finding_locations(&r);
    let findings = std::mem::take(&mut r.findings)
        .into_iter()
        .zip(at)
        .map(|(f, at)| moved(f, Some(at)))
        .collect();
    (record, findings)
}

/// The report of one record's sources, claims and artifacts.
fn record_report(r: &result::RecordResult) -> RecordReport {
    // Labels with an `inconsistent-value` finding, once per record.
    let inconsistent: std::collections::HashSet<&str> = r
        .findings
        .iter()
        .filter(|f| f.code == Code::InconsistentValue)
        .filter_map(|f| f.claim.as_deref())
        .collect();
    RecordReport {
        id: r.record.id.clone(),
        file: r.record.file.display().to_string(),
        sources: r
            .record
            .sources
            .iter()
            .zip(&r.sources)
            .map(|(s, o)| source_report(s, o, cited_span(&r.record.claims, &s.id)))
            .collect(),
        claims: r
            .record
            .claims
            .iter()
            .zip(&r.claims)
            .map(|(c, v)| claim_report(c, v, &inconsistent))
            .collect(),
        artifacts: r.artifacts.iter().map(artifact_report).collect(),
    }
}

impl From<&AuditResult> for Report {
    /// Records are converted on one worker per core (a report of 20,000 citations
    /// is a sixth of a re-check), put together in input order.
    fn from(a: &AuditResult) -> Report {
        let pool = crate::par::Pool::cores();
        let converted: Vec<(RecordReport, Vec<FindingReport>)> = pool.map(&a.records, |r| {
            // Each finding about a record points at the entry it is about.
            let findings = r
                .findings
                .iter()
                .zip(finding_locations(r))
                .map(|(f, at)| {
                    let mut report = FindingReport::from(f);
                    report.record_location = Some(at);
                    report
                })
                .collect();
            (record_report(r), findings)
        });
        let mut records = Vec::with_capacity(converted.len());
        let mut findings = Vec::new();
        for (record, mine) in converted {
            records.push(record);
            findings.extend(mine);
        }
        findings.extend(a.orphan_findings.iter().map(FindingReport::from));
        let mut report = Report::new(records, findings, a.generated_at.clone());
        report.summary.complete = a.complete();
        report.summary.baseline_left(a.baseline_left);
        report
    }
}

/// The fingerprint of a v1 finding, with the pinned facts taken from its record in
/// the same report (`record` is `None` for an input that yielded no record). Gives
/// the same fingerprint as [`fingerprint::of_finding`] did when the report was written, so a
/// report without fingerprints (from an older pinaudit) can still be compared.
pub(crate) fn fingerprint_of_report(f: &FindingReport, record: Option<&RecordReport>) -> String {
    let claim = record.and_then(|r| {
        f.claim
            .as_deref()
            .and_then(|l| r.claims.iter().find(|c| c.label == l))
    });
    let source_id = f
        .source
        .as_deref()
        .or_else(|| claim.and_then(|c| c.source.as_deref()));
    let source =
        record.and_then(|r| source_id.and_then(|id| r.sources.iter().find(|s| s.id == id)));
    fingerprint::fingerprint(
        &fingerprint::Subject {
            code: f.code.as_str(),
            record: &f.record,
            source: f.source.as_deref(),
            claim: f.claim.as_deref(),
            repository: source.and_then(|s| s.repository.as_deref()),
            revision: source.and_then(|s| s.revision.as_deref()),
            path: source.and_then(|s| s.path.as_deref()),
            lines: claim.and_then(|c| c.lines),
            evidence: Vec::new(),
        }
        .with_evidence(&f.evidence),
    )
}
