//! The audit pipeline, as named stages ([`stages`]): load the inputs, plan which
//! documents they cite, prefetch them through the registered providers (a [`Router`]), check each record,
//! finish with what made the audit incomplete. The result is domain data
//! ([`AuditResult`]); reports are built from it elsewhere.

mod document;
mod policy;
mod stages;

pub use policy::{Ignore, Policy};

use std::path::PathBuf;

pub use crate::exit::ExitStatus;
use crate::finding::Severity;
use crate::provider::http::WebOptions;
use crate::provider::{self, Router};
use crate::result::AuditResult;
use crate::sources::SyncPlan;

/// What `audit` was asked to do, beyond the inputs.
#[derive(Clone)]
pub(crate) struct Options {
    pub(crate) cache: PathBuf,
    /// How remotes are reached, held once: rewrites, `--offline`, timeouts, the
    /// budgets of each sync, `--jobs`, `--allow-local`, and the progress
    /// observer (`None`: no progress is drawn). Web fetching reads the same
    /// values.
    pub(crate) plan: SyncPlan,
    pub(crate) no_upstream: bool,
    /// Verify checksum manifests at each cited revision (`--manifests`).
    pub(crate) manifests: bool,
    /// The largest git document read, in bytes (`--max-document-size`; documents
    /// over the stream threshold are read as streams, so this bounds work).
    pub(crate) max_document_size: u64,
    /// The largest web document read, in bytes (`--max-document-size` too, with
    /// a smaller default: web documents are still read whole).
    pub(crate) max_web_document_size: u64,
    /// Audit only the records of this shard (`--shard K/N`).
    pub(crate) shard: Option<crate::shard::Shard>,
    /// Severity overrides, ignores and baseline, applied as the audit finishes.
    pub(crate) policy: Policy,
    /// How input directories are walked.
    pub(crate) walk: crate::input::WalkOptions,
    /// Whether Software Heritage is asked for what a forge lost (`--archive`).
    pub(crate) software_heritage: bool,
    /// The Software Heritage API (`--swh-url`), ending in `/`.
    pub(crate) swh_url: String,
    /// `SWH_TOKEN`, sent to the Software Heritage API's origin only.
    pub(crate) swh_token: Option<String>,
    /// Whether the Wayback Machine is asked for web documents gone from their host.
    pub(crate) wayback: bool,
    /// The Wayback Machine (`--wayback-url`), ending in `/`.
    pub(crate) wayback_url: String,
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
    let plan = &opts.plan;
    let web = WebOptions {
        cache: opts.cache.clone(),
        offline: plan.sync.offline,
        timeout: plan.sync.timeout,
        max_size: opts.max_web_document_size,
        allow_local: plan.allow_local,
        deadline: plan.sync.deadline,
        network: plan.sync.network.clone(),
    };
    // Both archives are reached like web documents, each at its own URL.
    let archive = |url: &str, token: Option<String>| provider::swh::ArchiveOptions {
        url: url.to_string(),
        cache: opts.cache.clone(),
        offline: plan.sync.offline,
        timeout: plan.sync.timeout,
        deadline: plan.sync.deadline,
        allow_local: plan.allow_local,
        max_size: opts.max_web_document_size,
        token,
        network: plan.sync.network.clone(),
    };
    let swh = opts
        .software_heritage
        .then(|| archive(&opts.swh_url, opts.swh_token.clone()));
    let wayback = opts.wayback.then(|| archive(&opts.wayback_url, None));
    let mut providers = provider::register(provider::Setup {
        cache: opts.cache.clone(),
        plan: plan.clone(),
        max_document_size: opts.max_document_size,
        web,
        progress: plan.progress.clone(),
        swh,
        wayback,
    });
    run_with(paths, opts, &mut providers)
}

/// Runs the audit with any providers: load, plan, prefetch, check, finish.
pub(crate) fn run_with(paths: &[PathBuf], opts: &Options, provider: &mut Router) -> AuditResult {
    // Reading pin files, fingerprints and the report use at most `--jobs` workers.
    crate::par::limit(opts.plan.jobs);
    let mut loaded = stages::load(paths, &opts.walk);
    if let Some(shard) = opts.shard {
        // Before planning, so that no other shard's repository is fetched.
        loaded.records.retain(|(r, _)| shard.holds(r));
        let rest = &mut loaded.rest;
        rest.orphan_findings
            .retain(|f| shard.holds_key(&format!("file:{}", f.file.as_deref().unwrap_or(""))));
        rest.unreadable_input = !rest.orphan_findings.is_empty();
    }
    let planned = stages::plan(loaded.records, opts.plan.allow_local);
    stages::prefetch(&planned, provider);
    let records = stages::check(planned, provider, opts);
    let mut result = stages::finish(loaded.rest, records, provider);
    opts.policy.apply(&mut result);
    result
}
