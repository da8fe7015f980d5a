//! The audit pipeline: read inputs → record checks → sources → claims → report.

use std::path::PathBuf;

use serde_json::{Number, Value};

use crate::check;
use crate::finding::{Finding, Severity};
use crate::input::{self, WalkError};
use crate::record::{Claim, Record, Source};
use crate::report::{
    ClaimReport, ClaimStatus, RecordReport, Report, Sha256Pair, SourceReport, SourceStatus,
};

/// What `audit` was asked to do, beyond the inputs.
#[derive(Debug, Clone)]
pub struct Options {
    pub cache: PathBuf,
    pub offline: bool,
}

/// An audit's report, plus what went wrong outside of any record.
#[derive(Debug)]
pub struct Outcome {
    pub report: Report,
    /// Paths that could not be walked; they make the audit incomplete.
    pub walk_errors: Vec<WalkError>,
}

/// The minimum severity that fails the run, as `--fail-on` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FailOn {
    Error,
    Warning,
    Note,
    Never,
}

impl FailOn {
    fn threshold(self) -> Option<Severity> {
        match self {
            FailOn::Error => Some(Severity::Error),
            FailOn::Warning => Some(Severity::Warning),
            FailOn::Note => Some(Severity::Note),
            FailOn::Never => None,
        }
    }
}

/// Exit status of `audit` (DESIGN.md): findings first, then completeness.
pub fn exit_code(report: &Report, fail_on: FailOn) -> u8 {
    let failed = match (fail_on.threshold(), report.worst()) {
        (Some(t), Some(w)) => w >= t,
        _ => false,
    };
    if failed {
        1
    } else if !report.summary.complete {
        2
    } else {
        0
    }
}

/// `generated_at`: now, or `SOURCE_DATE_EPOCH` for reproducible reports.
pub fn timestamp() -> String {
    let now = std::env::var("SOURCE_DATE_EPOCH")
        .ok()
        .and_then(|s| s.parse::<i64>().ok())
        .and_then(|t| time::OffsetDateTime::from_unix_timestamp(t).ok())
        .unwrap_or_else(time::OffsetDateTime::now_utc);
    now.format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}

fn claim_value(c: &Claim) -> Option<Value> {
    c.value
        .as_ref()
        .and_then(|v| v.text().parse::<Number>().ok())
        .map(Value::Number)
}

fn unchecked_source(s: &Source, reason: &str) -> SourceReport {
    SourceReport {
        id: s.id.clone(),
        url: s.url.clone(),
        repository: s.repository.clone(),
        revision: s.revision.as_ref().map(|r| r.to_string()),
        path: s.path.clone(),
        status: SourceStatus::Unchecked,
        reason: Some(reason.to_string()),
        sha256: Sha256Pair {
            expected: s.sha256.as_ref().map(|h| h.text()),
            actual: None,
        },
        git_blob: None,
        commit_time: s.commit_time.clone(),
        upstream: None,
    }
}

fn unchecked_claim(c: &Claim) -> ClaimReport {
    ClaimReport {
        label: c.label.clone(),
        source: c.source.clone(),
        lines: c.lines.map(|l| [l.first(), l.last()]),
        value: claim_value(c),
        unit: c.unit.clone(),
        status: ClaimStatus::Unchecked,
        found_line: None,
        line_text: None,
    }
}

/// Runs the audit over input paths.
pub fn run(paths: &[PathBuf], opts: &Options) -> Outcome {
    let (files, walk_errors) = input::collect(paths);
    let mut records: Vec<Record> = Vec::new();
    let mut findings: Vec<Finding> = Vec::new();
    let mut unreadable = false;
    for file in &files {
        let loaded = input::load(file);
        unreadable |= loaded.record.is_none();
        findings.extend(loaded.findings);
        if let Some(r) = loaded.record {
            findings.extend(check::record_checks(&r));
            records.push(r);
        }
    }

    let reason = if opts.offline {
        "not in cache"
    } else {
        "source fetching not built yet"
    };
    let reports = records
        .iter()
        .map(|r| RecordReport {
            id: r.id.clone(),
            file: r.file.clone(),
            sources: r
                .sources
                .iter()
                .map(|s| unchecked_source(s, reason))
                .collect(),
            claims: r.claims.iter().map(unchecked_claim).collect(),
        })
        .collect();

    let mut report = Report::new(reports, sort(findings, &records), timestamp());
    report.summary.complete &= walk_errors.is_empty() && !unreadable;
    Outcome {
        report,
        walk_errors,
    }
}

/// Orders findings by record (input order), keeping each record's check order.
fn sort(findings: Vec<Finding>, records: &[Record]) -> Vec<Finding> {
    let rank = |f: &Finding| {
        records
            .iter()
            .position(|r| r.id == f.record)
            .unwrap_or(usize::MAX)
    };
    let mut indexed: Vec<(usize, usize, Finding)> = findings
        .into_iter()
        .enumerate()
        .map(|(i, f)| (rank(&f), i, f))
        .collect();
    indexed.sort_by_key(|(r, i, _)| (*r, *i));
    indexed.into_iter().map(|(_, _, f)| f).collect()
}
