//! The audit report: the frozen `pinaudit/report/v1` model and its renderers.
//!
//! The report types here *are* the v1 JSON (DESIGN.md): field names are frozen, new
//! fields may be added, none renamed or removed. Renderers only render; they never
//! decide severity or status.

pub mod json;
pub mod markdown;
pub mod text;

use serde::Serialize;
use serde_json::Value;

use crate::finding::{Finding, Severity};

pub const SCHEMA: &str = "pinaudit/report/v1";

#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub schema: &'static str,
    pub tool: Tool,
    pub generated_at: String,
    pub summary: Summary,
    pub records: Vec<RecordReport>,
    pub findings: Vec<Finding>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Tool {
    pub name: &'static str,
    pub version: &'static str,
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
pub struct Summary {
    pub records: usize,
    pub sources: usize,
    pub claims: usize,
    pub verified_claims: usize,
    pub unchecked_sources: usize,
    pub complete: bool,
    pub findings: Counts,
}

#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct Counts {
    pub error: usize,
    pub warning: usize,
    pub note: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct RecordReport {
    pub id: String,
    /// The input file, as shown to people (a non-UTF-8 name is shown lossily).
    pub file: String,
    pub sources: Vec<SourceReport>,
    pub claims: Vec<ClaimReport>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SourceStatus {
    Checked,
    Unchecked,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Sha256Pair {
    pub expected: Option<String>,
    pub actual: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Upstream {
    pub head: Option<String>,
    pub changed: Option<bool>,
}

#[derive(Debug, Clone, Serialize)]
pub struct SourceReport {
    pub id: String,
    pub url: Option<String>,
    pub repository: Option<String>,
    pub revision: Option<String>,
    pub path: Option<String>,
    pub status: SourceStatus,
    /// Why an `unchecked` source could not be checked (added in v1).
    pub reason: Option<String>,
    pub sha256: Sha256Pair,
    pub git_blob: Option<String>,
    pub commit_time: Option<String>,
    pub upstream: Option<Upstream>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ClaimStatus {
    Verified,
    Rounded,
    Shifted,
    Missing,
    Unchecked,
}

impl ClaimStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            ClaimStatus::Verified => "verified",
            ClaimStatus::Rounded => "rounded",
            ClaimStatus::Shifted => "shifted",
            ClaimStatus::Missing => "missing",
            ClaimStatus::Unchecked => "unchecked",
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct ClaimReport {
    pub label: String,
    pub source: Option<String>,
    pub lines: Option<[u32; 2]>,
    /// The value as the record writes it (a JSON number with the same digits).
    pub value: Option<Value>,
    pub unit: Option<String>,
    pub status: ClaimStatus,
    pub found_line: Option<u32>,
    pub line_text: Option<String>,
}

impl Report {
    /// Builds a report, deriving the summary from its parts so the two never disagree.
    pub fn new(records: Vec<RecordReport>, findings: Vec<Finding>, generated_at: String) -> Report {
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
            complete: unchecked_sources == 0,
            findings: counts,
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

    /// The findings about one record, in report order.
    pub fn findings_of<'a>(
        &'a self,
        r: &'a RecordReport,
    ) -> impl Iterator<Item = &'a Finding> + 'a {
        self.findings.iter().filter(move |f| {
            f.record == r.id && f.file.as_deref().is_none_or(|file| file == r.file)
        })
    }

    /// Findings of inputs that yielded no record (an unreadable file).
    pub fn orphan_findings(&self) -> impl Iterator<Item = &Finding> + '_ {
        self.findings.iter().filter(|f| {
            !self
                .records
                .iter()
                .any(|r| r.id == f.record && f.file.as_deref().is_none_or(|file| file == r.file))
        })
    }

    /// The most severe finding, if any.
    pub fn worst(&self) -> Option<Severity> {
        self.findings.iter().map(|f| f.severity).max()
    }
}

/// An output format, as `--format` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Text,
    Json,
    Markdown,
}

/// Renders a report in a format. `color` applies to text only.
pub fn render(report: &Report, format: Format, color: bool) -> String {
    match format {
        Format::Text => text::render(report, color),
        Format::Json => json::render(report),
        Format::Markdown => markdown::render(report),
    }
}

/// The first seven characters of a revision, as git abbreviates commit ids; a
/// revision that is not hex (a branch name) is cut at a character boundary.
pub fn short_rev(rev: &str) -> &str {
    rev.char_indices().nth(7).map_or(rev, |(i, _)| &rev[..i])
}

/// A short hint for each code, shown under findings in text and markdown.
pub fn hint(code: crate::finding::Code) -> &'static str {
    crate::explain::entry(code).fix_short
}
