//! The audit pipeline, as named stages ([`stages`]): load the inputs, plan which
//! documents they cite, prefetch them through the registered providers (a [`Router`]), check each record,
//! finish with what made the audit incomplete. Online, the git cache goes on
//! syncing after the prefetch stage returns, and each record is checked once
//! the repositories it cites have synced. Each record's result is domain
//! data ([`RecordResult`]) handed on in record order as it is checked (the
//! report is written from it elsewhere, as it comes); the rest is an
//! [`AuditResult`] in the [`Outcome`].

mod document;
mod policy;
mod stages;

pub use policy::{Ignore, Policy};
pub(crate) use stages::Keep;

use std::path::PathBuf;

pub use crate::exit::ExitStatus;
use crate::finding::Severity;
use crate::provider::http::WebOptions;
use crate::provider::{self, Router};
use crate::result::{AuditResult, RecordResult};
use crate::sources::SyncPlan;

/// What `audit` was asked to do, beyond the inputs.
#[derive(Clone)]
pub(crate) struct Options {
    pub(crate) cache: PathBuf,
    /// The user's key, read once for every store of this command's cache (the
    /// audit's, the proof sheet's excerpts, `--fix`).
    pub(crate) key: crate::cache_key::CacheKey,
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

impl Options {
    /// The workers of this audit's parallel stages: at most `--jobs`, never
    /// more than the cores.
    pub(crate) fn pool(&self) -> crate::par::Pool {
        crate::par::Pool::new(self.plan.jobs)
    }

    /// The workers that read the inputs: `--jobs` of them, as many as fetch,
    /// whatever the cores (a read waits on the disk when the page cache has
    /// let the file go).
    pub(crate) fn readers(&self) -> crate::par::Pool {
        crate::par::Pool::waiting(self.plan.jobs)
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
pub(crate) fn exit_status(outcome: &Outcome, fail_on: FailOn) -> ExitStatus {
    let failed = match (fail_on.threshold(), outcome.worst()) {
        (Some(t), Some(w)) => w >= t,
        _ => false,
    };
    if failed {
        ExitStatus::Findings
    } else if !outcome.complete() {
        ExitStatus::Incomplete
    } else {
        ExitStatus::Clean
    }
}

/// What an audit came to: the result of everything but the records (which
/// went one by one to whoever asked for them, see [`run_streamed`]), and what
/// the records said about the whole.
pub(crate) struct Outcome {
    /// The orphan findings, walk errors, failures; `records` holds the records
    /// only when [`run`] collected them.
    pub(crate) result: AuditResult,
    /// Whether every record's sources and weights were judged.
    pub(crate) records_complete: bool,
    /// The most severe finding of a record that counts.
    pub(crate) records_worst: Option<Severity>,
    /// What checks said of themselves, per record in record order (manifests
    /// not read, and why).
    pub(crate) notices: Vec<String>,
}

impl Outcome {
    /// Whether every source was judged and every input read.
    pub(crate) fn complete(&self) -> bool {
        self.records_complete && self.result.complete()
    }

    /// The most severe finding that counts (not baseline, not ignored), if any.
    pub(crate) fn worst(&self) -> Option<Severity> {
        self.records_worst.max(self.result.worst())
    }
}

/// `generated_at`: now, or `SOURCE_DATE_EPOCH` for reproducible reports.
pub(crate) fn timestamp() -> String {
    let now = std::env::var("SOURCE_DATE_EPOCH")
        .ok()
        .and_then(|s| s.parse::<i64>().ok())
        .and_then(|t| time::OffsetDateTime::from_unix_timestamp(t).ok())
        .unwrap_or_else(time::OffsetDateTime::now_utc);
    // To the second: a report's time is read by people, not by a profiler.
    let now = now.replace_nanosecond(0).unwrap_or(now);
    now.format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}

/// The registered providers (the git cache, the web, the archives) for an
/// audit; `fragments_first` when records are looked up whole first.
fn providers(opts: &Options, fragments_first: bool) -> Router {
    let plan = &opts.plan;
    let key = opts.key.clone();
    let web = WebOptions {
        cache: opts.cache.clone(),
        offline: plan.sync.offline,
        timeout: plan.sync.timeout,
        max_size: opts.max_web_document_size,
        allow_local: plan.allow_local,
        deadline: plan.sync.deadline,
        network: plan.sync.network.clone(),
        key: key.clone(),
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
        key: key.clone(),
    };
    let swh = opts
        .software_heritage
        .then(|| archive(&opts.swh_url, opts.swh_token.clone()));
    let wayback = opts.wayback.then(|| archive(&opts.wayback_url, None));
    provider::register(provider::Setup {
        cache: opts.cache.clone(),
        key,
        plan: plan.clone(),
        max_document_size: opts.max_document_size,
        web,
        progress: plan.progress.clone(),
        swh,
        wayback,
        records_version: stages::records_version(),
        fragments_version: stages::fragments_version(),
        fragments_first,
    })
}

/// Runs the audit over input paths with the registered providers, every
/// record's result kept in the outcome (for the reports that need them all at
/// once: the proof sheet, the in-toto statement).
pub(crate) fn run(paths: &[PathBuf], opts: &Options) -> Outcome {
    let mut records = Vec::new();
    let mut outcome = run_streamed(paths, opts, None, &|r| r, &mut |r| records.push(r));
    outcome.result.records = records;
    outcome
}

/// Runs the audit over input paths with the registered providers, handing each
/// record's result, the policy applied, to `prepare` on the worker that checked
/// it and what that gives to `accept` in record order (see [`run_with`]);
/// with `keep`, what `prepare` gives is kept whole for the next run.
pub(crate) fn run_streamed<T: Send>(
    paths: &[PathBuf],
    opts: &Options,
    keep: Option<&dyn Keep<T>>,
    prepare: &(dyn Fn(RecordResult) -> T + Sync),
    accept: &mut dyn FnMut(T),
) -> Outcome {
    let fragments_first = keep.is_some() && stages::Whole::<T>::applies(opts);
    let mut provider = providers(opts, fragments_first);
    run_with(paths, opts, &mut provider, keep, prepare, accept)
}

/// Runs the audit with any providers: load, plan, prefetch, check, finish.
///
/// Each record, once checked, is fingerprinted and its severity overrides and
/// ignores applied on the worker that checked it, then handed to `prepare`
/// there; `accept` gets what `prepare` gave, in record order, on this thread.
/// A baseline is taken in report order (the first of two findings with one
/// fingerprint is the one the baseline holds), so with `--baseline` a record
/// goes to `prepare` on this thread, after its findings are matched.
///
/// With `keep`, a record is kept whole in the whole-record memo (what
/// `prepare` gave, and what the record says about the audit), and a record
/// the memo holds, unchanged on unchanged refs, is handed to `accept` as it
/// was kept, neither parsed nor checked nor prepared again.
pub(crate) fn run_with<T: Send>(
    paths: &[PathBuf],
    opts: &Options,
    provider: &mut Router,
    keep: Option<&dyn Keep<T>>,
    prepare: &(dyn Fn(RecordResult) -> T + Sync),
    accept: &mut dyn FnMut(T),
) -> Outcome {
    let pool = opts.pool();
    let policy = &opts.policy;
    let settling = keep.map(|inner| Settling { inner, policy });
    let whole = stages::Whole::new(settling.as_ref().map(|k| k as &dyn Keep<_>), opts);
    let memo = provider.documents().fragment_memo();
    let pools = (pool, opts.readers());
    let mut loaded = stages::load(paths, &opts.walk, pools, whole.as_ref().zip(memo));
    if let Some(shard) = opts.shard {
        // Before planning, so that no other shard's repository is fetched.
        loaded.records.retain(|e| e.in_shard(&shard));
        let rest = &mut loaded.rest;
        rest.orphan_findings
            .retain(|f| shard.holds_key(&format!("file:{}", f.file.as_deref().unwrap_or(""))));
        rest.unreadable_input = !rest.orphan_findings.is_empty();
    }
    let planned = stages::plan(loaded.records, opts.plan.allow_local, pool);
    stages::prefetch(&planned, provider);
    let mut baseline = policy.baseline.clone();
    let mut not_checked = crate::diff::NotChecked::default();
    let (mut records_complete, mut records_worst, mut notices) = (true, None, Vec::new());
    let settle = |mut r: RecordResult| {
        policy.settle(&mut r);
        let said = Said {
            complete: r.complete(),
            // With a baseline, known once it is taken.
            worst: policy.baseline.is_none().then(|| r.worst()).flatten(),
            notices: std::mem::take(&mut r.notices),
        };
        match policy.baseline {
            None => (said, Settled::Prepared(prepare(r))),
            Some(_) => (said, Settled::Waiting(Box::new(r))),
        }
    };
    let mut take = |(said, settled): (Said, Settled<T>)| {
        let prepared = match settled {
            Settled::Prepared(t) => t,
            Settled::Waiting(mut r) => {
                if let Some(b) = &mut baseline {
                    Policy::take(b, &mut r.findings);
                    not_checked.add(&r);
                }
                said_worst(&mut records_worst, r.worst());
                prepare(*r)
            }
        };
        records_complete &= said.complete;
        said_worst(&mut records_worst, said.worst);
        notices.extend(said.notices);
        accept(prepared);
    };
    stages::check(planned, provider, opts, whole.as_ref(), &settle, &mut take);
    let mut result = stages::finish(loaded.rest, provider);
    // The unreadable inputs' findings come after every record's, as in the report.
    policy.settle_orphans(&mut result.orphan_findings);
    if let Some(b) = &mut baseline {
        Policy::take(b, &mut result.orphan_findings);
        result.baseline_left = Some(b.leftover(&not_checked));
    }
    Outcome {
        result,
        records_complete,
        records_worst,
        notices,
    }
}

fn said_worst(worst: &mut Option<Severity>, other: Option<Severity>) {
    *worst = (*worst).max(other);
}

/// What a record says about the whole audit, kept when the record goes on.
struct Said {
    complete: bool,
    worst: Option<Severity>,
    notices: Vec<String>,
}

/// A record settled on its worker: prepared, or waiting for the baseline
/// (taken in record order).
enum Settled<T> {
    Prepared(T),
    Waiting(Box<RecordResult>),
}

/// What the check stage hands on for a record, kept whole: what the record
/// says about the audit, then the caller's form ([`Keep`]); it depends on the
/// policy too (severity overrides and ignores; a run with a baseline keeps
/// nothing).
struct Settling<'a, T> {
    inner: &'a dyn Keep<T>,
    policy: &'a Policy,
}

impl<T> Keep<(Said, Settled<T>)> for Settling<'_, T> {
    fn depends(&self) -> Vec<u8> {
        let mut e = pinaudit_core::memo::Enc::default();
        e.bytes(&self.inner.depends());
        e.u32(self.policy.severity.len() as u32);
        for (code, severity) in &self.policy.severity {
            e.str(code.as_str()).opt_severity(Some(*severity));
        }
        e.str(&self.policy.show_flags);
        e.u32(self.policy.ignores.len() as u32);
        for i in &self.policy.ignores {
            e.str(i.code.as_str())
                .str(&i.record)
                .opt_str(i.source.as_deref())
                .opt_str(i.claim.as_deref())
                .str(&i.reason);
        }
        e.0
    }

    fn encode(&self, u: &(Said, Settled<T>), e: &mut pinaudit_core::memo::Enc) -> Option<()> {
        let (said, Settled::Prepared(t)) = u else {
            return None;
        };
        e.bool(said.complete).opt_severity(said.worst);
        e.u32(said.notices.len() as u32);
        for n in &said.notices {
            e.str(n);
        }
        self.inner.encode(t, e)
    }

    fn decode(
        &self,
        d: &mut pinaudit_core::memo::Dec,
        entry: &bytes::Bytes,
    ) -> Option<(Said, Settled<T>)> {
        let complete = d.bool()?;
        let worst = d.opt_severity()?;
        let n = d.u32()? as usize;
        if n > d.0.len() / 4 {
            return None;
        }
        let notices = (0..n).map(|_| d.string()).collect::<Option<Vec<_>>>()?;
        let t = self.inner.decode(d, entry)?;
        let said = Said {
            complete,
            worst,
            notices,
        };
        Some((said, Settled::Prepared(t)))
    }
}
