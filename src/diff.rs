//! Comparing two v1 reports by fingerprint: what is new, resolved or unchanged
//! (issue 9). A scheduled re-check alerts on *new* findings only; `--baseline`
//! uses the same matching to stop counting findings a team already knows about.
//!
//! Reports are read back through the v1 DTO. A report from a pinaudit that wrote
//! no fingerprints is still accepted: each fingerprint is computed from the v1
//! fields with the same function the audit uses ([`crate::fingerprint::of_report`]).
//! Findings are matched as a multiset, so two findings with one fingerprint (two
//! unreadable blocks of one record) pair up one to one.

use std::collections::HashMap;
use std::fmt::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::finding::Severity;
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
    pub(crate) fn parse(bytes: &[u8], path: &Path) -> Result<ReportFile, ReadError> {
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

/// A multiset of fingerprints: what a baseline report already holds.
#[derive(Debug, Clone, Default)]
pub(crate) struct Baseline {
    counts: HashMap<String, usize>,
}

impl Baseline {
    pub(crate) fn new(report: &ReportFile) -> Baseline {
        let mut counts = HashMap::new();
        for f in &report.findings {
            *counts.entry(f.fingerprint.clone()).or_insert(0) += 1;
        }
        Baseline { counts }
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

/// The difference between two reports.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Diff {
    pub(crate) schema: &'static str,
    pub(crate) tool: Tool,
    pub(crate) summary: DiffSummary,
    /// In the new report only.
    pub(crate) new: Vec<FindingReport>,
    /// In the old report only.
    pub(crate) resolved: Vec<FindingReport>,
    /// In both (as the new report writes them).
    pub(crate) unchanged: Vec<FindingReport>,
}

#[derive(Debug, Clone, Copy, Serialize)]
pub(crate) struct DiffSummary {
    pub(crate) new: usize,
    pub(crate) resolved: usize,
    pub(crate) unchanged: usize,
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
    let resolved: Vec<FindingReport> = old
        .findings
        .iter()
        .filter(|f| !in_new.take(&f.fingerprint))
        .cloned()
        .collect();
    Diff {
        schema: SCHEMA,
        tool: Tool::default(),
        summary: DiffSummary {
            new: fresh.len(),
            resolved: resolved.len(),
            unchanged: unchanged.len(),
        },
        new: fresh,
        resolved,
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
    Unchanged,
}

impl Kind {
    fn as_str(self) -> &'static str {
        match self {
            Kind::New => "new",
            Kind::Resolved => "resolved",
            Kind::Unchanged => "unchanged",
        }
    }

    fn style(self) -> anstyle::Style {
        use anstyle::{AnsiColor, Style};
        match self {
            Kind::New => Style::new().fg_color(Some(AnsiColor::Red.into())).bold(),
            Kind::Resolved => Style::new().fg_color(Some(AnsiColor::Green.into())),
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

fn marks(f: &FindingReport) -> String {
    let mut m = String::new();
    if f.baseline {
        m.push_str(" (baseline)");
    }
    if let Some(i) = &f.ignored {
        let _ = write!(m, " (ignored: {})", i.reason);
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
    for (record, list) in d.by_record() {
        let _ = writeln!(out, "{record}");
        for (kind, f) in list {
            // Padded before painting, so columns line up on visible width.
            let label = paint(kind.style(), &format!("{:<9}", kind.as_str()));
            let _ = writeln!(
                out,
                "  {label} {}[{}] {}{}",
                f.severity,
                f.code,
                f.message,
                marks(f)
            );
        }
        out.push('\n');
    }
    let s = &d.summary;
    let _ = writeln!(
        out,
        "{} new, {} resolved, {} unchanged",
        s.new, s.resolved, s.unchanged
    );
    out
}

fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
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
    let _ = writeln!(
        out,
        "**{}** new · **{}** resolved · **{}** unchanged\n",
        s.new, s.resolved, s.unchanged
    );
    for (record, list) in d.by_record() {
        let _ = writeln!(out, "### `{}`\n", cell(record));
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
                cell(&marks(f))
            );
        }
        out.push('\n');
    }
    out
}
