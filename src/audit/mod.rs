//! The audit pipeline, as named stages ([`stages`]): load the inputs, plan which
//! documents they cite, prefetch them through the registered providers (a [`Router`]), check each record,
//! finish with what made the audit incomplete. The result is domain data
//! ([`AuditResult`]); reports are built from it elsewhere.

mod document;
mod policy;
mod stages;

pub use policy::{Ignore, Policy};

use std::path::PathBuf;
use std::time::Duration;

pub use crate::exit::ExitStatus;
use crate::fetch::{Rewrite, SyncOptions};
use crate::finding::Severity;
use crate::provider::http::WebOptions;
use crate::provider::{self, Router};
use crate::result::AuditResult;
use crate::sources::SyncPlan;

/// What `audit` was asked to do, beyond the inputs.
#[derive(Debug, Clone)]
pub(crate) struct Options {
    pub(crate) cache: PathBuf,
    pub(crate) offline: bool,
    pub(crate) rewrites: Vec<Rewrite>,
    pub(crate) no_upstream: bool,
    /// Verify checksum manifests at each cited revision (`--manifests`).
    pub(crate) manifests: bool,
    /// The largest git document read, in bytes (`--max-document-size`; documents
    /// over the stream threshold are read as streams, so this bounds work).
    pub(crate) max_document_size: u64,
    /// The largest web document read, in bytes (`--max-document-size` too, with
    /// a smaller default: web documents are still read whole).
    pub(crate) max_web_document_size: u64,
    pub(crate) jobs: usize,
    pub(crate) allow_local: bool,
    /// Network timeout: the longest wait for a connection or for any answer.
    pub(crate) timeout: Duration,
    /// Show a progress bar (only ever on a terminal).
    pub(crate) progress: bool,
    /// Audit only the records of this shard (`--shard K/N`).
    pub(crate) shard: Option<crate::shard::Shard>,
    /// Severity overrides, ignores and baseline, applied as the audit finishes.
    pub(crate) policy: Policy,
    /// How input directories are walked.
    pub(crate) walk: crate::input::WalkOptions,
    /// Longest time one repository's sync may take in all.
    pub(crate) deadline: Duration,
    /// Most bytes one repository's sync may receive.
    pub(crate) max_fetch_bytes: u64,
    /// Most objects one repository's sync may receive.
    pub(crate) max_fetch_objects: u64,
    /// Most bytes a git:// ref advertisement may take.
    pub(crate) max_ref_bytes: u64,
}

impl Options {
    /// Defaults for a cache directory: network on, upstream checks on.
    pub(crate) fn new(cache: impl Into<PathBuf>) -> Options {
        Options {
            cache: cache.into(),
            offline: false,
            rewrites: Vec::new(),
            no_upstream: false,
            manifests: false,
            max_document_size: crate::provider::git::DEFAULT_MAX_SIZE,
            max_web_document_size: crate::provider::http::DEFAULT_MAX_SIZE,
            jobs: default_jobs(),
            allow_local: false,
            timeout: Duration::from_secs(60),
            progress: false,
            shard: None,
            policy: Policy::default(),
            walk: crate::input::WalkOptions::default(),
            deadline: crate::fetch::DEFAULT_DEADLINE,
            max_fetch_bytes: crate::fetch::DEFAULT_MAX_FETCH_BYTES,
            max_fetch_objects: crate::fetch::DEFAULT_MAX_FETCH_OBJECTS,
            max_ref_bytes: crate::fetch::DEFAULT_MAX_REF_BYTES,
        }
    }
}

/// Concurrent repositories by default: fetching waits on the network more than on
/// the CPU, so a few more than the cores, but never so many as to hammer a forge,
/// and fewer than `git daemon`'s listen backlog (5): more connections at once than
/// that are refused by a stock daemon under load. Checking uses at most the cores.
pub(crate) fn default_jobs() -> usize {
    std::thread::available_parallelism().map_or(4, |n| (n.get() * 2).clamp(2, 4))
}

/// The minimum severity that fails the run, as `--fail-on` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum FailOn {
    Error,
    Warning,
    Note,
    Never,
}

impl FailOn {
    /// The least severity that fails, or `None` for `never`.
    pub(crate) fn threshold(self) -> Option<Severity> {
        match self {
            FailOn::Error => Some(Severity::Error),
            FailOn::Warning => Some(Severity::Warning),
            FailOn::Note => Some(Severity::Note),
            FailOn::Never => None,
        }
    }
}

/// Exit status of `audit` (README, "Exit status"): findings first, then completeness.
pub(crate) fn exit_status(result: &AuditResult, fail_on: FailOn) -> ExitStatus {
    let failed = match (fail_on.threshold(), result.worst()) {
        (Some(t), Some(w)) => w >= t,
        _ => false,
    };
    if failed {
        ExitStatus::Findings
    } else if !result.complete() {
        ExitStatus::Incomplete
    } else {
        ExitStatus::Clean
    }
}

/// `generated_at`: now, or `SOURCE_DATE_EPOCH` for reproducible reports.
pub(crate) fn timestamp() -> String {
    let now = std::env::var("SOURCE_DATE_EPOCH")
        .ok()
        .and_then(|s| s.parse::<i64>().ok())
        .and_then(|t| time::OffsetDateTime::from_unix_timestamp(t).ok())
        .unwrap_or_else(time::OffsetDateTime::now_utc);
    now.format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}

/// Runs the audit over input paths, with the registered providers (the git
/// cache, the web).
pub(crate) fn run(paths: &[PathBuf], opts: &Options) -> AuditResult {
    let progress = crate::progress::terminal(opts.progress);
    let plan = SyncPlan {
        rewrites: opts.rewrites.clone(),
        sync: SyncOptions {
            offline: opts.offline,
            connect_timeout: opts.timeout.min(std::time::Duration::from_secs(30)),
            timeout: opts.timeout,
            deadline: opts.deadline,
            max_fetch_bytes: opts.max_fetch_bytes,
            max_fetch_objects: opts.max_fetch_objects,
            max_ref_bytes: opts.max_ref_bytes,
            ..SyncOptions::default()
        },
        jobs: opts.jobs,
        allow_local: opts.allow_local,
        progress: progress.clone(),
    };
    let web = WebOptions {
        cache: opts.cache.clone(),
        offline: opts.offline,
        timeout: opts.timeout,
        max_size: opts.max_web_document_size,
        allow_local: opts.allow_local,
        deadline: opts.deadline,
    };
    let mut providers = provider::register(provider::Setup {
        cache: opts.cache.clone(),
        plan,
        max_document_size: opts.max_document_size,
        web,
        progress,
    });
    run_with(paths, opts, &mut providers)
}

/// Runs the audit with any providers: load, plan, prefetch, check, finish.
pub(crate) fn run_with(paths: &[PathBuf], opts: &Options, provider: &mut Router) -> AuditResult {
    // Reading pin files, fingerprints and the report use at most `--jobs` workers.
    crate::par::limit(opts.jobs);
    let mut loaded = stages::load(paths, &opts.walk);
    if let Some(shard) = opts.shard {
        // Before planning, so that no other shard's repository is fetched.
        loaded.records.retain(|(r, _)| shard.holds(r));
        let rest = &mut loaded.rest;
        rest.orphan_findings
            .retain(|f| shard.holds_key(&format!("file:{}", f.file.as_deref().unwrap_or(""))));
        rest.unreadable_input = !rest.orphan_findings.is_empty();
    }
    let planned = stages::plan(loaded.records, opts.allow_local);
    stages::prefetch(&planned, provider);
    let records = stages::check(planned, provider, opts);
    let mut result = stages::finish(loaded.rest, records, provider);
    opts.policy.apply(&mut result);
    result
}
