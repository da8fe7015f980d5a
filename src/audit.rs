//! The audit pipeline: read inputs → record checks → sources → claims → report.

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Number, Value};

use crate::check::claims::{self, Verdict};
use crate::check::integrity::{self, Established};
use crate::check::{self, upstream};
use crate::fetch::{CachedRepo, FetchError, GitCache, Rewrite, SyncOptions};
use crate::finding::{Code, Finding, Severity};
use crate::input::{self, WalkError};
use crate::record::{Claim, Record, Source};
use crate::report::{
    ClaimReport, ClaimStatus, RecordReport, Report, Sha256Pair, SourceReport, SourceStatus,
    Upstream,
};
use crate::sources::{self, Skip, SyncPlan, Target};

/// What `audit` was asked to do, beyond the inputs.
#[derive(Debug, Clone)]
pub struct Options {
    pub cache: PathBuf,
    pub offline: bool,
    pub rewrites: Vec<Rewrite>,
    pub no_upstream: bool,
    pub jobs: usize,
    pub allow_local: bool,
    /// Network timeout: the longest wait for a connection or for any answer.
    pub timeout: Duration,
    /// Show a progress bar (only ever on a terminal).
    pub progress: bool,
}

impl Options {
    /// Defaults for a cache directory: network on, upstream checks on.
    pub fn new(cache: impl Into<PathBuf>) -> Options {
        Options {
            cache: cache.into(),
            offline: false,
            rewrites: Vec::new(),
            no_upstream: false,
            jobs: default_jobs(),
            allow_local: false,
            timeout: Duration::from_secs(60),
            progress: false,
        }
    }
}

/// Concurrent repositories by default: fetching waits on the network more than on
/// the CPU, so a few more than the cores, but never so many as to hammer a forge.
pub fn default_jobs() -> usize {
    std::thread::available_parallelism().map_or(4, |n| (n.get() * 2).clamp(2, 8))
}

/// An audit's report, plus what went wrong outside of any record.
#[derive(Debug)]
pub struct Outcome {
    pub report: Report,
    /// Paths that could not be walked; they make the audit incomplete.
    pub walk_errors: Vec<WalkError>,
    /// Repositories that could not be synced, with hints, for stderr.
    pub problems: Vec<String>,
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
    let (files, mut walk_errors) = input::collect(paths);
    if files.is_empty() && walk_errors.is_empty() {
        // A CI gate pointed at the wrong directory must not pass.
        walk_errors.push(WalkError {
            path: paths.first().cloned().unwrap_or_default(),
            message: format!(
                "no pin files (*.json) or record documents (*.md, *.txt) under {}",
                paths
                    .iter()
                    .map(|p| format!("`{}`", p.display()))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        });
    }

    // Each input's findings stay with it, so the report lists them in input order.
    let mut unreadable = false;
    let mut orphans: Vec<Finding> = Vec::new();
    let mut records: Vec<(Record, Vec<Finding>)> = Vec::new();
    for file in &files {
        let loaded = input::load(file);
        let shown = file.display().to_string();
        let stamp = |mut f: Finding| {
            f.file = Some(shown.clone());
            f
        };
        match loaded.record {
            Some(r) => {
                let mut mine: Vec<Finding> = loaded.findings.into_iter().map(stamp).collect();
                if let Some((first, _)) = records.iter().find(|(x, _)| x.id == r.id) {
                    mine.push(stamp(
                        Finding::new(
                            Code::InvalidRecord,
                            &r.id,
                            format!(
                                "`{shown}`: record id `{}` is also the id of `{}`; give each record its own id",
                                r.id,
                                first.file.display()
                            ),
                        )
                        .with("other_file", first.file.display().to_string()),
                    ));
                }
                mine.extend(check::record_checks(&r).into_iter().map(stamp));
                records.push((r, mine));
            }
            None => {
                unreadable = true;
                orphans.extend(loaded.findings.into_iter().map(stamp));
            }
        }
    }

    // One sync per repository, however many records and sources cite it.
    let targets: Vec<Vec<Result<Target, Skip>>> = records
        .iter()
        .map(|(r, _)| {
            r.sources
                .iter()
                .map(|s| sources::resolve(s, opts.allow_local))
                .collect()
        })
        .collect();
    let cache = GitCache::new(&opts.cache);
    let wanted: Vec<&Target> = targets
        .iter()
        .flatten()
        .filter_map(|t| t.as_ref().ok())
        .collect();
    let plan = SyncPlan {
        rewrites: opts.rewrites.clone(),
        sync: SyncOptions {
            offline: opts.offline,
            connect_timeout: opts.timeout.min(std::time::Duration::from_secs(30)),
            timeout: opts.timeout,
            ..SyncOptions::default()
        },
        jobs: opts.jobs,
        allow_local: opts.allow_local,
        progress: opts.progress,
    };
    let synced = sources::sync_all(&cache, &wanted, &plan);
    // Remotes that could not be synced: the report says so per source; stderr says
    // it once per remote, with advice.
    let mut problems: Vec<String> = synced
        .iter()
        .filter_map(|(remote, result)| Some((remote, result.as_ref().err()?)))
        .filter(|(_, e)| !matches!(e, FetchError::RepositoryMissing { .. }))
        .map(|(remote, e)| match e.hint() {
            Some(h) => format!("{}\n  hint: {h}", integrity::describe(e, remote)),
            None => integrity::describe(e, remote),
        })
        .collect();
    problems.sort();
    let mut repos: HashMap<String, CachedRepo> = HashMap::new();
    let hashes = cache.blob_hashes();

    let mut reports = Vec::new();
    let mut findings = Vec::new();
    for ((r, mut found), targets) in records.into_iter().zip(&targets) {
        let from = found.len();
        let mut verdicts: Vec<Verdict> = r.claims.iter().map(|_| Verdict::unchecked()).collect();
        let mut source_reports = Vec::new();
        let mut reported = integrity::Reported::new();
        for (index, (s, target)) in r.sources.iter().zip(targets).enumerate() {
            // Claims cite a source by id; with duplicate ids the first one counts.
            let first_with_id = r.sources.iter().position(|x| x.id == s.id) == Some(index);
            let cited: Vec<usize> = r
                .claims
                .iter()
                .enumerate()
                .filter(|(_, c)| first_with_id && c.source.as_deref() == Some(s.id.as_str()))
                .map(|(i, _)| i)
                .collect();
            let t = match target {
                Ok(t) => t,
                Err(Skip(reason)) => {
                    source_reports.push(unchecked_source(s, reason));
                    continue;
                }
            };
            let sync = match synced.get(&t.remote) {
                Some(Ok(sync)) => sync,
                Some(Err(e)) => {
                    if integrity::fetch_failed(&r, s, t, e, &mut reported, &mut found) {
                        source_reports.push(checked_source(s, &Established::default(), None));
                        // The repository is not there, so neither is any cited value.
                        cited.iter().for_each(|&i| verdicts[i] = Verdict::absent());
                    } else {
                        source_reports
                            .push(unchecked_source(s, &integrity::describe(e, &t.remote)));
                    }
                    continue;
                }
                None => {
                    source_reports.push(unchecked_source(s, "not fetched"));
                    continue;
                }
            };
            if !repos.contains_key(&t.remote) {
                match cache.open(&t.remote) {
                    Ok(repo) => {
                        repos.insert(t.remote.clone(), repo);
                    }
                    Err(e) => {
                        source_reports
                            .push(unchecked_source(s, &integrity::describe(&e, &t.remote)));
                        continue;
                    }
                }
            }
            let Some(repo) = repos.get(&t.remote) else {
                continue;
            };
            let cx = integrity::Synced {
                repo,
                sync,
                hashes: &hashes,
            };
            let est = integrity::check(&cx, &r, s, t, &mut reported, &mut found);
            if let Some(reason) = &est.unchecked {
                source_reports.push(unchecked_source(s, reason));
                continue;
            }
            let mut upstream = None;
            match &est.document {
                Some(doc) => {
                    for &i in &cited {
                        verdicts[i] = claims::check(&r, s, &r.claims[i], doc, &mut found);
                    }
                    if !opts.no_upstream {
                        let mine: Vec<(&Claim, &Verdict)> = cited
                            .iter()
                            .map(|&i| (&r.claims[i], &verdicts[i]))
                            .collect();
                        upstream = upstream::check(&r, s, t, repo, doc, &mine, &mut found);
                    }
                }
                // No commit or no document at it: the cited values are not there.
                None => cited.iter().for_each(|&i| verdicts[i] = Verdict::absent()),
            }
            source_reports.push(checked_source(s, &est, upstream));
        }
        let shown = r.file.display().to_string();
        for f in &mut found[from..] {
            f.file = Some(shown.clone());
        }
        findings.extend(found);
        reports.push(RecordReport {
            id: r.id.clone(),
            file: shown,
            sources: source_reports,
            claims: r
                .claims
                .iter()
                .zip(verdicts)
                .map(|(c, v)| claim_report(c, v))
                .collect(),
        });
    }
    findings.extend(orphans);

    let mut report = Report::new(reports, findings, timestamp());
    report.summary.complete &= walk_errors.is_empty() && !unreadable;
    Outcome {
        report,
        walk_errors,
        problems,
    }
}

fn checked_source(s: &Source, est: &Established, upstream: Option<Upstream>) -> SourceReport {
    SourceReport {
        status: SourceStatus::Checked,
        reason: None,
        sha256: Sha256Pair {
            expected: s.sha256.as_ref().map(|h| h.text()),
            actual: est.sha256.clone(),
        },
        git_blob: est.blob.map(|b| b.to_string()),
        commit_time: est.commit_time.clone().or_else(|| s.commit_time.clone()),
        upstream,
        ..unchecked_source(s, "")
    }
}

fn claim_report(c: &Claim, v: Verdict) -> ClaimReport {
    ClaimReport {
        status: v.status,
        found_line: v.found_line,
        line_text: v.line_text,
        ..unchecked_claim(c)
    }
}
