//! Comparing two v1 reports by fingerprint: what is new, resolved or unchanged.
//! A scheduled re-check alerts on *new* findings only; `--baseline`
//! uses the same matching to stop counting findings a team already knows about.
//!
//! Reports are read back through the v1 DTO. A report from a pinaudit that wrote
//! no fingerprints is still accepted: each fingerprint is computed from the v1
//! fields with the same function the audit uses ([`crate::fingerprint::of_report`]).
//! Findings are matched as a multiset, so two findings with one fingerprint (two
//! unreadable blocks of one record) pair up one to one.
//!
//! A finding of the old report that the new one lacks is *resolved* only when the
//! new run looked again: when its source, claim or weights were `unchecked` in the
//! new report (an offline re-check with the commit not in the cache, a remote that
//! could not be reached), it is *not re-checked* instead, counted apart, so that a
//! job that alerts on change never hears "fixed" from a run that could not look
//! (`docs/diff.md`).

use std::collections::{HashMap, HashSet};
use std::fmt::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::finding::Severity;
use crate::report::escape::{md_cell, md_code, md_text, terminal as t};
use crate::report::v1::{FindingReport, RecordReport, Tool};

pub(crate) const SCHEMA: &str = "pinaudit/diff/v1";

/// A v1 report read back from a file: what diffing and baselines need of it.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct ReportFile {
    pub(crate) schema: String,
    #[serde(default)]
    pub(crate) records: Vec<RecordReport>,
    pub(crate) findings: Vec<FindingReport>,
}

/// Why a report could not be read.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ReadError {
    #[error("cannot read `{}`: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("`{}` is not a pinaudit JSON report: line {} column {}: {source}", path.display(), source.line(), source.column())]
    Json {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    #[error("`{}` has schema `{found}`, not `{}`", path.display(), crate::report::v1::SCHEMA)]
    Schema { path: PathBuf, found: String },
}

impl ReadError {
    pub(crate) fn hint(&self) -> &'static str {
        "give a report written by `pinaudit audit --format json`"
    }
}

impl ReportFile {
    /// Reads a v1 report, computing the fingerprints it lacks.
    pub(crate) fn read(path: &Path) -> Result<ReportFile, ReadError> {
        let text = std::fs::read(path).map_err(|source| ReadError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        ReportFile::parse(&text, path)
    }

    /// Parses a v1 report (`path` only names it in errors).
    pub fn parse(bytes: &[u8], path: &Path) -> Result<ReportFile, ReadError> {
        let mut report: ReportFile =
            serde_json::from_slice(bytes).map_err(|source| ReadError::Json {
                path: path.to_path_buf(),
                source,
            })?;
        if report.schema != crate::report::v1::SCHEMA {
            return Err(ReadError::Schema {
                path: path.to_path_buf(),
                found: report.schema,
            });
        }
        let fingerprints: Vec<String> = report
            .findings
            .iter()
            .map(|f| {
                if f.fingerprint.is_empty() {
                    let record = report.records.iter().find(|r| {
                        r.id == f.record && f.file.as_deref().is_none_or(|file| file == r.file)
                    });
                    crate::report::v1::fingerprint_of_report(f, record)
                } else {
                    f.fingerprint.clone()
                }
            })
            .collect();
        for (f, fp) in report.findings.iter_mut().zip(fingerprints) {
            f.fingerprint = fp;
        }
        Ok(report)
    }
}

/// A multiset of fingerprints: what a baseline report already holds, with its
/// findings, so that those the audit does not find again can be told apart.
#[derive(Debug, Clone, Default)]
pub(crate) struct Baseline {
    counts: HashMap<String, usize>,
    findings: Vec<FindingReport>,
}

pub use crate::result::Leftover;

impl Baseline {
    pub(crate) fn new(report: &ReportFile) -> Baseline {
        let mut counts = HashMap::new();
        for f in &report.findings {
            *counts.entry(f.fingerprint.clone()).or_insert(0) += 1;
        }
        Baseline {
            counts,
            findings: report.findings.clone(),
        }
    }

    /// The findings not taken, split by whether `now` checked what they are
    /// about; in baseline order, each fingerprint's later copies being the ones
    /// left (as [`diff`] pairs them).
    pub(crate) fn leftover(&self, now: &NotChecked) -> Leftover {
        let mut left = self.counts.clone();
        let mut total: HashMap<&str, usize> = HashMap::new();
        for f in &self.findings {
            *total.entry(f.fingerprint.as_str()).or_insert(0) += 1;
        }
        let mut out = Leftover::default();
        for f in self.findings.iter().rev() {
            match left.get_mut(&f.fingerprint) {
                Some(n) if *n > 0 => *n -= 1,
                _ => continue,
            }
            if now.covers(f) {
                out.not_rechecked += 1;
            } else {
                out.resolved += 1;
            }
        }
        out
    }

    /// Takes one occurrence of a fingerprint; whether there was one to take.
    pub(crate) fn take(&mut self, fingerprint: &str) -> bool {
        match self.counts.get_mut(fingerprint) {
            Some(n) if *n > 0 => {
                *n -= 1;
                true
            }
            _ => false,
        }
    }
}

/// What a report could not check, per record: the ids of its `unchecked`
/// sources, the labels of its `unchecked` claims, the labels of its `unchecked`
/// weights.
#[derive(Debug, Clone, Default)]
pub(crate) struct NotChecked {
    records: HashMap<String, Vec<Unlooked>>,
}

#[derive(Debug, Clone, Default)]
struct Unlooked {
    file: String,
    sources: HashSet<String>,
    claims: HashSet<String>,
    artifacts: HashSet<String>,
}

impl NotChecked {
    fn add_unlooked(&mut self, id: &str, file: String, u: Unlooked) {
        if !(u.sources.is_empty() && u.claims.is_empty() && u.artifacts.is_empty()) {
            self.records
                .entry(id.to_string())
                .or_default()
                .push(Unlooked { file, ..u });
        }
    }

    /// What the records of a v1 report could not check.
    pub(crate) fn of_report(report: &ReportFile) -> NotChecked {
        use crate::report::v1::{ClaimStatus, SourceStatus};
        let mut out = NotChecked::default();
        for r in &report.records {
            let u = Unlooked {
                file: String::new(),
                sources: (r.sources.iter())
                    .filter(|s| s.status == SourceStatus::Unchecked)
                    .map(|s| s.id.clone())
                    .collect(),
                claims: (r.claims.iter())
                    .filter(|c| c.status == ClaimStatus::Unchecked)
                    .map(|c| c.label.clone())
                    .collect(),
                artifacts: (r.artifacts.iter())
                    .filter(|a| a.status == SourceStatus::Unchecked)
                    .map(|a| a.label.clone())
                    .collect(),
            };
            out.add_unlooked(&r.id, r.file.clone(), u);
        }
        out
    }

    /// Adds what one record of an audit could not check.
    pub(crate) fn add(&mut self, r: &crate::result::RecordResult) {
        use crate::result::ClaimStatus;
        let rec = &r.record;
        let u = Unlooked {
            file: String::new(),
            sources: (rec.sources.iter().zip(&r.sources))
                .filter(|(_, o)| o.is_unchecked())
                .map(|(s, _)| s.id.clone())
                .collect(),
            claims: (rec.claims.iter().zip(&r.claims))
                .filter(|(_, v)| v.status == ClaimStatus::Unchecked)
                .map(|(c, _)| c.label.clone())
                .collect(),
            artifacts: (r.artifacts.iter())
                .filter(|a| a.unchecked.is_some())
                .map(|a| a.label.clone())
                .collect(),
        };
        self.add_unlooked(&rec.id, rec.file.display().to_string(), u);
    }

    /// Whether `f` is about something this report could not check: its claim,
    /// else its source, else the weights its evidence names.
    pub(crate) fn covers(&self, f: &FindingReport) -> bool {
        let Some(records) = self.records.get(&f.record) else {
            return false;
        };
        let artifact = f
            .evidence
            .get("artifact")
            .and_then(serde_json::Value::as_str);
        records
            .iter()
            .filter(|u| f.file.as_deref().is_none_or(|file| file == u.file))
            .any(|u| {
                f.claim.as_ref().is_some_and(|c| u.claims.contains(c))
                    || f.source.as_ref().is_some_and(|s| u.sources.contains(s))
                    || artifact.is_some_and(|a| u.artifacts.contains(a))
            })
    }
}

/// The difference between two reports.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Diff {
    pub(crate) schema: &'static str,
    pub(crate) tool: Tool,
    pub(crate) summary: DiffSummary,
    /// In the new report only.
    pub(crate) new: Vec<FindingReport>,
    /// In the old report only, and looked at again.
    pub(crate) resolved: Vec<FindingReport>,
    /// In the old report only, about a source, claim or weights the new report
    /// could not check: neither new nor resolved (added in diff v1).
    pub(crate) not_rechecked: Vec<FindingReport>,
    /// In both (as the new report writes them).
    pub(crate) unchanged: Vec<FindingReport>,
}

#[derive(Debug, Clone, Copy, Serialize)]
pub(crate) struct DiffSummary {
    pub(crate) new: usize,
    pub(crate) resolved: usize,
    pub(crate) unchanged: usize,
    pub(crate) not_rechecked: usize,
}

/// Compares two reports by fingerprint, keeping each report's order.
pub(crate) fn diff(old: &ReportFile, new: &ReportFile) -> Diff {
    let mut in_old = Baseline::new(old);
    let mut in_new = Baseline::new(new);
    let (mut fresh, mut unchanged) = (Vec::new(), Vec::new());
    for f in &new.findings {
        if in_old.take(&f.fingerprint) {
            unchanged.push(f.clone());
        } else {
            fresh.push(f.clone());
        }
    }
    let unlooked = NotChecked::of_report(new);
    let (not_rechecked, resolved): (Vec<FindingReport>, Vec<FindingReport>) = old
        .findings
        .iter()
        .filter(|f| !in_new.take(&f.fingerprint))
        .cloned()
        .partition(|f| unlooked.covers(f));
    Diff {
        schema: SCHEMA,
        tool: Tool::default(),
        summary: DiffSummary {
            new: fresh.len(),
            resolved: resolved.len(),
            unchanged: unchanged.len(),
            not_rechecked: not_rechecked.len(),
        },
        new: fresh,
        resolved,
        not_rechecked,
        unchanged,
    }
}

impl Diff {
    /// The most severe new finding that counts (not baseline, not ignored).
    pub(crate) fn worst_new(&self) -> Option<Severity> {
        self.new
            .iter()
            .filter(|f| f.counts())
            .map(|f| f.severity)
            .max()
    }

    /// Records in order of first appearance, each with its findings by kind.
    fn by_record(&self) -> Vec<(&str, Vec<(Kind, &FindingReport)>)> {
        let mut groups: Vec<(&str, Vec<(Kind, &FindingReport)>)> = Vec::new();
        let all = self
            .new
            .iter()
            .map(|f| (Kind::New, f))
            .chain(self.resolved.iter().map(|f| (Kind::Resolved, f)))
            .chain(self.not_rechecked.iter().map(|f| (Kind::NotRechecked, f)))
            .chain(self.unchanged.iter().map(|f| (Kind::Unchanged, f)));
        for (kind, f) in all {
            match groups.iter_mut().find(|(r, _)| *r == f.record) {
                Some((_, list)) => list.push((kind, f)),
                None => groups.push((&f.record, vec![(kind, f)])),
            }
        }
        groups
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    New,
    Resolved,
    NotRechecked,
    Unchanged,
}

impl Kind {
    fn as_str(self) -> &'static str {
        match self {
            Kind::New => "new",
            Kind::Resolved => "resolved",
            Kind::NotRechecked => "not re-checked",
            Kind::Unchanged => "unchanged",
        }
    }

    fn style(self) -> anstyle::Style {
        use anstyle::{AnsiColor, Style};
        match self {
            Kind::New => Style::new().fg_color(Some(AnsiColor::Red.into())).bold(),
            Kind::Resolved => Style::new().fg_color(Some(AnsiColor::Green.into())),
            Kind::NotRechecked => Style::new().fg_color(Some(AnsiColor::Yellow.into())),
            Kind::Unchanged => Style::new().dimmed(),
        }
    }
}

/// A `diff` output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum DiffFormat {
    Text,
    Json,
    Markdown,
}

/// Renders a diff; `color` only affects text.
pub(crate) fn render(d: &Diff, format: DiffFormat, color: bool) -> String {
    match format {
        DiffFormat::Text => render_text(d, color),
        DiffFormat::Json => {
            // Serialising plain data with string keys cannot fail.
            let mut s = serde_json::to_string_pretty(d).unwrap_or_default();
            s.push('\n');
            s
        }
        DiffFormat::Markdown => render_markdown(d),
    }
}

/// Why a finding does not count, if it does not; `reason` escapes the reason.
fn marks(f: &FindingReport, reason: impl Fn(&str) -> String) -> String {
    let mut m = String::new();
    if f.baseline {
        m.push_str(" (baseline)");
    }
    if let Some(i) = &f.ignored {
        let _ = write!(m, " (ignored: {})", reason(&i.reason));
    }
    m
}

fn render_text(d: &Diff, color: bool) -> String {
    let mut out = String::new();
    let paint = |style: anstyle::Style, text: &str| {
        if color {
            format!("{style}{text}{style:#}")
        } else {
            text.to_string()
        }
    };
    // As wide as the widest change shown.
    let width = if d.not_rechecked.is_empty() { 9 } else { 14 };
    for (record, list) in d.by_record() {
        let _ = writeln!(out, "{}", t(record));
        for (kind, f) in list {
            // Padded before painting, so columns line up on visible width.
            let label = paint(kind.style(), &format!("{:<width$}", kind.as_str()));
            let _ = writeln!(
                out,
                "  {label} {}[{}] {}{}",
                f.severity,
                f.code,
                t(&f.message),
                marks(f, |r| t(r).into_owned())
            );
        }
        out.push('\n');
    }
    let s = &d.summary;
    let _ = write!(
        out,
        "{} new, {} resolved, {} unchanged",
        s.new, s.resolved, s.unchanged
    );
    if s.not_rechecked > 0 {
        let _ = write!(
            out,
            ", {} not re-checked (their source could not be checked this time)",
            s.not_rechecked
        );
    }
    out.push('\n');
    out
}

/// Prose in a table cell: inert Markdown on one line (see [`crate::report::escape`]).
fn cell(s: &str) -> String {
    md_cell(&md_text(s))
}

fn render_markdown(d: &Diff) -> String {
    let s = &d.summary;
    let mut out = String::new();
    let verdict = if s.new > 0 {
        "❌ new findings"
    } else {
        "✅ no new findings"
    };
    let _ = writeln!(out, "## pinaudit diff: {verdict}\n");
    let _ = write!(
        out,
        "**{}** new · **{}** resolved · **{}** unchanged",
        s.new, s.resolved, s.unchanged
    );
    if s.not_rechecked > 0 {
        let _ = write!(out, " · **{}** not re-checked", s.not_rechecked);
    }
    out.push_str("\n\n");
    for (record, list) in d.by_record() {
        let _ = writeln!(out, "### {}\n", md_code(record));
        let _ = writeln!(out, "| change | severity | code | message |");
        let _ = writeln!(out, "|---|---|---|---|");
        for (kind, f) in list {
            let _ = writeln!(
                out,
                "| {} | {} | `{}` | {}{} |",
                kind.as_str(),
                f.severity,
                f.code,
                cell(&f.message),
                md_cell(&marks(f, md_text))
            );
        }
        out.push('\n');
    }
    out
}
