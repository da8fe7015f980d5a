//! The stages of an audit, each a function of the previous one's output.

use std::collections::HashMap;
use std::path::PathBuf;

use crate::check::revision::{self, Established};
use crate::check::{self, claims, document, manifests, upstream, weights, SourceText};
use crate::finding::{Code, Finding};
use crate::input::{self, WalkError};
use crate::provider::{http, model, DocRef, ModelFacts, ModelRef, Provider, Unchecked};
use crate::record::{Claim, Record, Source};
use crate::result::{
    Absence, ArtifactOutcome, AuditResult, RecordResult, RemoteFailure, SourceOutcome, SourceState,
    Verdict, WebValidators,
};
use crate::sources::{self, Skip};

use super::Options;

/// The inputs, read: records with their record-level findings, and the rest.
pub(crate) struct Loaded {
    pub(crate) records: Vec<(Record, Vec<Finding>)>,
    pub(crate) rest: Rest,
}

/// What loading found outside of any record.
pub(crate) struct Rest {
    /// Files found while walking that carry no record.
    pub(crate) skipped: Vec<PathBuf>,
    pub(crate) walk_errors: Vec<WalkError>,
    pub(crate) orphan_findings: Vec<Finding>,
    pub(crate) unreadable_input: bool,
}

/// Reads every input and runs the checks a record alone can answer. Each input's
/// findings stay with it, so the report lists them in input order.
///
/// Files are read, parsed and checked on up to `--jobs` workers, one per core
/// (reading pin files is most of a re-check of unchanged inputs); the results
/// are put together in input order, so nothing depends on the number of workers.
pub(crate) fn load(paths: &[PathBuf], walk: &input::WalkOptions) -> Loaded {
    let collected = input::collect(paths, walk);
    let mut walk_errors = collected.errors;
    // Per file: skipped (no record in it), or its input and the checks of its
    // record.
    let read = crate::par::map(&collected.files, |(f, named)| {
        let loaded = match named {
            true => input::load(f),
            false => input::load_found(f)?,
        };
        let checks = loaded
            .record
            .as_ref()
            .map(check::record_checks)
            .unwrap_or_default();
        Some((loaded, checks))
    });
    let mut skipped = Vec::new();
    let mut inputs = Vec::with_capacity(read.len());
    for ((file, _), got) in collected.files.into_iter().zip(read) {
        match got {
            Some(got) => inputs.push((file, got)),
            None => skipped.push(file),
        }
    }
    // Under `--changed-since`, a change that touches no record is nothing to audit.
    if inputs.is_empty() && walk_errors.is_empty() && walk.only.is_none() {
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
    let mut unreadable_input = false;
    let mut orphan_findings: Vec<Finding> = Vec::new();
    let mut records: Vec<(Record, Vec<Finding>)> = Vec::new();
    // The first record with each id, by position in `records`.
    let mut first_with_id: HashMap<String, usize> = HashMap::new();
    for (file, (loaded, checks)) in inputs {
        let shown = file.display().to_string();
        let stamp = |mut f: Finding| {
            f.file = Some(shown.clone());
            f
        };
        match loaded.record {
            Some(mut r) => {
                // Judged as written above; checked below at the revisions its
                // figures cite.
                r.at_cited_revisions();
                let mut mine: Vec<Finding> = loaded.findings.into_iter().map(stamp).collect();
                match first_with_id.get(r.id.as_str()) {
                    Some(&at) => {
                        let first = &records[at].0;
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
                    None => {
                        first_with_id.insert(r.id.clone(), records.len());
                    }
                }
                mine.extend(checks.into_iter().map(stamp));
                records.push((r, mine));
            }
            None => {
                unreadable_input = true;
                orphan_findings.extend(loaded.findings.into_iter().map(stamp));
            }
        }
    }
    Loaded {
        records,
        rest: Rest {
            skipped,
            walk_errors,
            orphan_findings,
            unreadable_input,
        },
    }
}

/// A record with the document each of its sources cites (or why none can be).
pub(crate) struct Planned {
    pub(crate) record: Record,
    pub(crate) findings: Vec<Finding>,
    pub(crate) docs: Vec<Result<DocRef, Skip>>,
    /// Per artifact, the model repository its weights are read from, if it names one.
    pub(crate) models: Vec<Option<Result<ModelRef, Skip>>>,
    /// Per source, the web document it cites when it cites no git document.
    pub(crate) web: Vec<Option<String>>,
}

/// Works out, for every source, which document at which revision it cites.
pub(crate) fn plan(records: Vec<(Record, Vec<Finding>)>, allow_local: bool) -> Vec<Planned> {
    records
        .into_iter()
        .map(|(record, findings)| {
            let docs = record
                .sources
                .iter()
                .map(|s| sources::resolve(s, allow_local))
                .collect();
            let models = record
                .artifacts
                .iter()
                .map(|a| model::resolve(a, allow_local))
                .collect();
            let web = record
                .sources
                .iter()
                .zip(&docs)
                .map(|(s, d): (&Source, &Result<DocRef, Skip>)| {
                    d.is_err().then(|| http::web_url(s)).flatten()
                })
                .collect();
            Planned {
                record,
                findings,
                docs,
                models,
                web,
            }
        })
        .collect()
}

/// Gets every cited document in one go: one sync per repository.
pub(crate) fn prefetch(planned: &[Planned], provider: &mut dyn Provider) {
    let wanted: Vec<&DocRef> = planned
        .iter()
        .flat_map(|p| &p.docs)
        .filter_map(|d| d.as_ref().ok())
        .collect();
    let models: Vec<&ModelRef> = planned
        .iter()
        .flat_map(|p| &p.models)
        .filter_map(|m| m.as_ref()?.as_ref().ok())
        .collect();
    provider.prefetch_with_models(&wanted, &models);
    let urls: Vec<String> = planned
        .iter()
        .flat_map(|p| &p.web)
        .filter_map(|u| u.clone())
        .collect();
    provider.prefetch_web(&urls);
}

/// Checks every record against what the provider holds.
///
/// Records are checked on up to `--jobs` worker threads (no more than the
/// cores), each with its own fork of the provider: reading, hashing, matching and
/// diffing are CPU work. Records of one repository go to one worker, so each
/// repository's objects are read by one thread; results come back in input
/// order, so the report does not depend on the number of workers.
pub(crate) fn check(
    planned: Vec<Planned>,
    provider: &dyn Provider,
    opts: &Options,
) -> Vec<RecordResult> {
    let documents: usize = planned.iter().map(|p| p.docs.len()).sum();
    // Offline, checking reads only the cache and is over at once: no bar, as for
    // fetching.
    let bar = checking_bar(documents as u64, opts.progress && !opts.offline);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    // A manifest is judged once per revision, by the first record that cites it:
    // with --manifests, records are checked in input order on one thread.
    let workers = if opts.manifests {
        1
    } else {
        opts.jobs.min(cores).min(planned.len())
    };
    let forks: Option<Vec<Box<dyn Provider + Send>>> = if workers > 1 {
        (0..workers).map(|_| provider.fork()).collect()
    } else {
        None
    };
    let Some(forks) = forks else {
        let mut manifests_seen = manifests::Seen::new();
        let out = planned
            .into_iter()
            .map(|p| {
                let n = p.docs.len() as u64;
                let result = check_record(p, provider, opts, &mut manifests_seen);
                bar.inc(n);
                result
            })
            .collect();
        bar.finish_and_clear();
        return out;
    };
    // Group by the first repository a record cites; the largest groups first to
    // the least loaded worker (cost ~ sources).
    let mut groups: Vec<(String, Vec<(usize, Planned)>)> = Vec::new();
    for (i, p) in planned.into_iter().enumerate() {
        let key = p
            .docs
            .iter()
            .find_map(|d| d.as_ref().ok().map(|d| d.remote.clone()))
            .unwrap_or_default();
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, g)) => g.push((i, p)),
            None => groups.push((key, vec![(i, p)])),
        }
    }
    let weight = |g: &[(usize, Planned)]| g.iter().map(|(_, p)| p.docs.len() + 1).sum::<usize>();
    groups.sort_by(|a, b| weight(&b.1).cmp(&weight(&a.1)).then_with(|| a.0.cmp(&b.0)));
    let mut shares: Vec<(usize, Vec<(usize, Planned)>)> =
        (0..forks.len()).map(|_| (0, Vec::new())).collect();
    for (_, g) in groups {
        let w = weight(&g);
        if let Some(least) = shares.iter_mut().min_by_key(|(load, _)| *load) {
            least.0 += w;
            least.1.extend(g);
        }
    }
    let mut done: Vec<(usize, RecordResult)> = std::thread::scope(|scope| {
        let handles: Vec<_> = shares
            .into_iter()
            .zip(forks)
            .map(|((_, share), fork)| {
                let bar = bar.clone();
                scope.spawn(move || {
                    let mut manifests_seen = manifests::Seen::new();
                    share
                        .into_iter()
                        .map(|(i, p)| {
                            let n = p.docs.len() as u64;
                            let result = check_record(p, &*fork, opts, &mut manifests_seen);
                            bar.inc(n);
                            (i, result)
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    });
    bar.finish_and_clear();
    done.sort_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, r)| r).collect()
}

/// The overall bar of documents checked: only on a terminal, only
/// when progress is wanted (not `--quiet`), only ever on stderr.
fn checking_bar(len: u64, wanted: bool) -> indicatif::ProgressBar {
    use std::io::IsTerminal;
    if !wanted || len == 0 || !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::with_draw_target(
        Some(len),
        indicatif::ProgressDrawTarget::stderr(),
    );
    if let Ok(style) =
        indicatif::ProgressStyle::with_template("{bar:30} checked {pos}/{len} documents")
    {
        bar.set_style(style);
    }
    bar
}

fn check_record(
    p: Planned,
    provider: &dyn Provider,
    opts: &Options,
    manifests_seen: &mut manifests::Seen,
) -> RecordResult {
    let Planned {
        record: r,
        mut findings,
        docs,
        models,
        web,
    } = p;
    let from = findings.len();
    let mut verdicts: Vec<Verdict> = r.claims.iter().map(|_| Verdict::unchecked()).collect();
    let mut outcomes = Vec::with_capacity(r.sources.len());
    let mut reported = revision::Reported::new();
    let mut notices = Vec::new();
    let mut citing = Citing::new(&r);
    for (index, (s, doc)) in r.sources.iter().zip(&docs).enumerate() {
        let cited = citing.take(s, index);
        let mut source = SourceCheck {
            r: &r,
            s,
            cited: &cited,
            provider,
            verdicts: &mut verdicts,
            findings: &mut findings,
            notices: &mut notices,
        };
        let outcome = match doc {
            Ok(d) => source.git(d, opts, &mut reported, manifests_seen),
            Err(skip) => match &web[index] {
                Some(url) => check_web(&r, s, url, &cited, provider, &mut verdicts, &mut findings),
                None => SourceOutcome::unchecked(Unchecked::Unresolvable(skip.clone())),
            },
        };
        outcomes.push(outcome);
    }
    let artifacts = check_weights(&r, &models, provider, &mut findings);
    let shown = r.file.display().to_string();
    for f in &mut findings[from..] {
        f.file = Some(shown.clone());
    }
    RecordResult {
        record: r,
        sources: outcomes,
        claims: verdicts,
        findings,
        artifacts,
        notices,
    }
}

/// A record's claims by the source they cite, once per record rather than a scan
/// of every claim per source.
struct Citing<'r> {
    first_index: HashMap<&'r str, usize>,
    citing: HashMap<&'r str, Vec<usize>>,
}

impl<'r> Citing<'r> {
    fn new(r: &'r Record) -> Citing<'r> {
        let mut first_index: HashMap<&str, usize> = HashMap::with_capacity(r.sources.len());
        for (i, s) in r.sources.iter().enumerate() {
            first_index.entry(s.id.as_str()).or_insert(i);
        }
        let mut citing: HashMap<&str, Vec<usize>> = HashMap::new();
        for (i, c) in r.claims.iter().enumerate() {
            if let Some(id) = c.source.as_deref() {
                citing.entry(id).or_default().push(i);
            }
        }
        Citing {
            first_index,
            citing,
        }
    }

    /// The claims citing source `s` (at `index`): claims cite a source by id, and
    /// with duplicate ids the first one counts.
    fn take(&mut self, s: &Source, index: usize) -> Vec<usize> {
        if self.first_index.get(s.id.as_str()) == Some(&index) {
            self.citing.remove(s.id.as_str()).unwrap_or_default()
        } else {
            Vec::new()
        }
    }
}

/// One git source of a record being checked, with the claims that cite it.
struct SourceCheck<'a> {
    r: &'a Record,
    s: &'a Source,
    cited: &'a [usize],
    provider: &'a dyn Provider,
    verdicts: &'a mut Vec<Verdict>,
    findings: &'a mut Vec<Finding>,
    /// What the manifest check says of itself (manifests not read, and why).
    notices: &'a mut Vec<String>,
}

impl SourceCheck<'_> {
    /// The source's outcome: the pinned revision, the document at it, the cited
    /// claims on it and its drift at the head.
    fn git(
        &mut self,
        d: &DocRef,
        opts: &Options,
        reported: &mut revision::Reported,
        manifests_seen: &mut manifests::Seen,
    ) -> SourceOutcome {
        let (mut snapshot, commit_time) = match self.pinned(d, reported) {
            Ok(pinned) => pinned,
            Err(outcome) => return *outcome,
        };
        if opts.manifests {
            let (r, s) = (self.r, self.s);
            let bounds = manifests::Bounds {
                max_size: opts.max_document_size,
                max_count: manifests::MAX_MANIFESTS,
            };
            let said = manifests::check(
                r,
                s,
                d,
                self.provider,
                bounds,
                manifests_seen,
                self.findings,
            );
            self.notices.extend(said);
        }
        let git_blob = snapshot.git_blob.clone();
        let mut text: Option<SourceText> = None;
        let mark = self.findings.len();
        if let Err(why) = self.claims(d, &mut snapshot, &mut text) {
            // The document could not be read after all: the source is unchecked.
            self.findings.truncate(mark);
            for &i in self.cited {
                self.verdicts[i] = Verdict::unchecked();
            }
            return SourceOutcome::unchecked(why);
        }
        let upstream = if opts.no_upstream {
            None
        } else {
            self.upstream(d, &mut snapshot, &mut text)
        };
        SourceOutcome {
            state: SourceState::Checked,
            sha256: Some(snapshot.sha256),
            git_blob,
            commit_time,
            upstream,
            stale_since: self.provider.stale_since(d),
            web: None,
        }
    }

    /// The document at the pinned revision (its bytes possibly unread) and the
    /// commit time, after the revision and document checks; the source's outcome
    /// when there is no document to read the cited values from.
    fn pinned(
        &mut self,
        d: &DocRef,
        reported: &mut revision::Reported,
    ) -> Result<(crate::provider::Snapshot, Option<String>), Box<SourceOutcome>> {
        let (r, s, provider) = (self.r, self.s, self.provider);
        let unchecked = |why| Box::new(SourceOutcome::unchecked(why));
        let facts = provider.revision(d).map_err(unchecked)?;
        let commit_time = match revision::check(r, s, d, &facts, reported, self.findings) {
            Established::Absent(what) => {
                // No document to read: the cited values stay unchecked, the finding is
                // the source's.
                return Err(Box::new(SourceOutcome {
                    stale_since: provider.stale_since(d),
                    ..SourceOutcome::absent(what, s.commit_time.clone())
                }));
            }
            Established::Present { commit_time } => commit_time,
        };
        // The bytes are read only when a check needs them: a re-check of a blob
        // whose answers are remembered reads nothing.
        let snapshot = provider.snapshot_lazy(d).map_err(unchecked)?;
        document::check(
            r,
            s,
            d,
            snapshot.as_ref(),
            |expected| {
                let pinned = snapshot.as_ref()?;
                provider.matching_variant(d, pinned, expected)
            },
            |expected| {
                let pinned = snapshot.as_ref()?;
                provider.hash_elsewhere(d, pinned, expected)
            },
            self.findings,
        );
        let commit_time = commit_time.or_else(|| s.commit_time.clone());
        match snapshot {
            Some(snapshot) => Ok((snapshot, commit_time)),
            // No document at the commit: nothing to read the cited values from.
            None => Err(Box::new(SourceOutcome {
                stale_since: provider.stale_since(d),
                ..SourceOutcome::absent(Absence::Path, commit_time)
            })),
        }
    }

    /// Judges every cited claim on the document, from the memo when it holds the
    /// answer; an error when the document cannot be read after all.
    fn claims(
        &mut self,
        d: &DocRef,
        snapshot: &mut crate::provider::Snapshot,
        text: &mut Option<SourceText>,
    ) -> Result<(), Unchecked> {
        let (r, s, provider) = (self.r, self.s, self.provider);
        let memo = provider.check_memo();
        let git_blob = snapshot.git_blob.clone();
        // A document too large to hold: every claim judged in one streamed pass.
        let mut judged: Option<HashMap<usize, claims::Outcome>> = None;
        for &i in self.cited {
            let c = &r.claims[i];
            let key = memo
                .zip(git_blob.as_deref())
                .and_then(|(_, b)| claims::memo_key(b, c));
            let known = memo
                .zip(key.as_ref())
                .and_then(|(m, k)| claims::remembered(m, k, c));
            let outcome = match known {
                Some(o) => o,
                None => {
                    let (Some(lines), Some(exp)) = (c.lines, claims::expected(c)) else {
                        continue;
                    };
                    let o = if snapshot.streamed {
                        streamed_outcome(provider, d, snapshot, r, self.cited, i, &mut judged)?
                    } else {
                        let doc = text_of(provider, d, snapshot, text)?;
                        claims::judge(doc, lines.first() as usize, lines.last() as usize, &exp)
                    };
                    if let (Some(m), Some(k)) = (memo, key) {
                        claims::remember(m, k, &o);
                    }
                    o
                }
            };
            self.verdicts[i] = claims::report(r, s, c, &outcome, self.findings);
        }
        Ok(())
    }

    /// The source at the head it is compared with, when there is one; `None` also
    /// when the cache cannot give the head's document (no drift to tell).
    fn upstream(
        &mut self,
        d: &DocRef,
        snapshot: &mut crate::provider::Snapshot,
        text: &mut Option<SourceText>,
    ) -> Option<crate::result::Upstream> {
        let (r, s, provider) = (self.r, self.s, self.provider);
        let mut head = provider.head(d)?;
        let mine: Vec<(&Claim, &Verdict)> = self
            .cited
            .iter()
            .map(|&i| (&r.claims[i], &self.verdicts[i]))
            .collect();
        let facts = if head.unchanged {
            None
        } else {
            Some(drift_facts(provider, d, snapshot, text, &mut head, &mine).ok()?)
        };
        Some(upstream::report(
            r,
            s,
            d,
            &head,
            &mine,
            facts.as_ref(),
            self.findings,
        ))
    }
}

/// Checks a source that cites a web document: its hash and its cited
/// lines, read from the body as served.
fn check_web(
    r: &Record,
    s: &Source,
    url: &str,
    cited: &[usize],
    provider: &dyn Provider,
    verdicts: &mut [Verdict],
    findings: &mut Vec<Finding>,
) -> SourceOutcome {
    let doc = match provider.web(url) {
        Ok(doc) => doc,
        Err(why) => return SourceOutcome::unchecked(why),
    };
    document::check_web(r, s, url, &doc.bytes, &doc.sha256, findings);
    let text = SourceText::new(&doc.bytes);
    for &i in cited {
        verdicts[i] = claims::check(r, s, &r.claims[i], &text, findings);
    }
    SourceOutcome {
        state: SourceState::Checked,
        sha256: Some(doc.sha256),
        git_blob: None,
        commit_time: None,
        upstream: None,
        stale_since: None,
        web: Some(WebValidators {
            etag: doc.etag,
            last_modified: doc.last_modified,
        }),
    }
}

/// Reads each weights artifact's files in its model repository and
/// judges them; returns what was read, for the report.
fn check_weights(
    r: &Record,
    models: &[Option<Result<ModelRef, Skip>>],
    provider: &dyn Provider,
    findings: &mut Vec<Finding>,
) -> Vec<ArtifactOutcome> {
    let mut out = Vec::new();
    for (a, m) in r.artifacts.iter().zip(models) {
        let Some(m) = m else {
            continue;
        };
        let mut outcome = ArtifactOutcome {
            label: a.label.clone(),
            repository: a.repository.clone(),
            commit: None,
            files: Vec::new(),
            unchecked: None,
        };
        let facts = m
            .as_ref()
            .map_err(|skip| Unchecked::Unresolvable(skip.clone()))
            .and_then(|m| Ok((m, provider.model(m)?)));
        match facts {
            Ok((m, facts)) => {
                weights::check(r, a, m, &facts, findings);
                if let ModelFacts::Present { commit, files, .. } = facts {
                    outcome.commit = Some(commit);
                    outcome.files = files;
                }
            }
            Err(why) => outcome.unchecked = Some(why.to_string()),
        }
        out.push(outcome);
    }
    out
}

/// The pinned document's text, read (once) when a check needs it.
fn text_of<'t>(
    provider: &dyn Provider,
    d: &DocRef,
    snapshot: &mut crate::provider::Snapshot,
    text: &'t mut Option<SourceText>,
) -> Result<&'t SourceText, Unchecked> {
    if text.is_none() {
        provider.load(d, snapshot)?;
        // The bytes become the text without a copy: one copy of a large document.
        // A line index that can't be allocated is this source's problem, not an
        // abort of the run.
        *text = Some(
            SourceText::try_from_bytes(std::mem::take(&mut snapshot.bytes))
                .map_err(|why| Unchecked::Unresolvable(crate::sources::Skip(why)))?,
        );
    }
    text.as_ref().ok_or(Unchecked::NotCached)
}

/// What the pinned and head documents say about the cited lines: remembered by
/// (pinned blob, head blob, citations) when the provider keeps a memo, else
/// read from both documents (then remembered).
fn drift_facts(
    provider: &dyn Provider,
    d: &DocRef,
    snapshot: &mut crate::provider::Snapshot,
    text: &mut Option<SourceText>,
    head: &mut crate::provider::Head,
    mine: &[(&Claim, &Verdict)],
) -> Result<upstream::Facts, Unchecked> {
    let memo = provider.check_memo();
    let pinned_blob = snapshot.git_blob.clone();
    let head_blob = match &head.document {
        Some(doc) => doc.git_blob.clone().map(Some),
        None => Some(None),
    };
    let key = match (memo, pinned_blob.as_deref(), &head_blob) {
        (Some(_), Some(p), Some(h)) => Some(upstream::facts_key(p, h.as_deref(), mine)),
        _ => None,
    };
    if let (Some(m), Some(k)) = (memo, key.as_ref()) {
        match m.peek(k, |raw| upstream::decode_facts(raw, mine)) {
            Some(Some(facts)) => return Ok(facts),
            // Unsound for these citations: never trusted, recomputed.
            Some(None) => m.forget(k),
            None => {}
        }
    }
    if snapshot.streamed || head.document.as_ref().is_some_and(|doc| doc.streamed) {
        let facts = drift_by_lookup(provider, d, snapshot, text, head, mine)?;
        if let (Some(m), Some(k)) = (memo, key) {
            m.put(k, upstream::encode_facts(&facts));
        }
        return Ok(facts);
    }
    let head_text = match head.document.as_mut() {
        Some(doc) => {
            provider.load(d, doc)?;
            Some(SourceText::new(&doc.bytes))
        }
        None => None,
    };
    let pinned = text_of(provider, d, snapshot, text)?;
    let drift = provider.drift_memo().zip(pinned_blob.as_deref());
    let head_blob = head
        .document
        .as_ref()
        .and_then(|doc| doc.git_blob.as_deref());
    let facts = upstream::facts(pinned, head_text.as_ref(), head_blob, mine, drift);
    if let (Some(m), Some(k)) = (memo, key) {
        m.put(k, upstream::encode_facts(&facts));
    }
    Ok(facts)
}

/// The outcome of claim `i` of `r` in a streamed document: all of `cited`
/// (the claims citing it) are judged in the first call, in one pass over it
/// (two when a value is not on its cited lines), and kept in `judged`.
fn streamed_outcome(
    provider: &dyn Provider,
    d: &DocRef,
    snapshot: &crate::provider::Snapshot,
    r: &Record,
    cited: &[usize],
    i: usize,
    judged: &mut Option<HashMap<usize, claims::Outcome>>,
) -> Result<claims::Outcome, Unchecked> {
    if judged.is_none() {
        let (ids, wanted): (Vec<usize>, Vec<_>) = cited
            .iter()
            .filter_map(|&k| {
                let c = &r.claims[k];
                let (Some(lines), Some(exp)) = (c.lines, claims::expected(c)) else {
                    return None;
                };
                Some((k, (lines.first() as usize, lines.last() as usize, exp)))
            })
            .unzip();
        let mut open_failed = None;
        let outcomes = claims::judge_stream(
            || {
                provider.open(d, snapshot).map_err(|why| {
                    open_failed = Some(why);
                    std::io::Error::other("the document could not be opened")
                })
            },
            &wanted,
        );
        let outcomes = match outcomes {
            Ok(o) => o,
            Err(e) => {
                return Err(open_failed
                    .take()
                    .unwrap_or_else(|| crate::provider::read_failed(&d.remote, e)))
            }
        };
        *judged = Some(ids.into_iter().zip(outcomes).collect());
    }
    judged
        .as_ref()
        .and_then(|j| j.get(&i).cloned())
        .ok_or(Unchecked::NotCached)
}

/// [`upstream::facts_by_lookup`] for a source whose pinned or head document is
/// too large to hold: the wanted pinned lines are read (streamed when the
/// pinned document is), then looked up by text while the head's lines go by.
fn drift_by_lookup(
    provider: &dyn Provider,
    d: &DocRef,
    snapshot: &mut crate::provider::Snapshot,
    text: &mut Option<SourceText>,
    head: &mut crate::provider::Head,
    mine: &[(&Claim, &Verdict)],
) -> Result<upstream::Facts, Unchecked> {
    let failed = |e| crate::provider::read_failed(&d.remote, e);
    let wanted = upstream::wanted_lines(mine);
    let mut old = std::collections::BTreeMap::new();
    let old_len = if snapshot.streamed {
        let reader = provider.open(d, snapshot)?;
        check::for_each_line(reader, |i, bytes| {
            let n = i as u32 + 1;
            if wanted.contains(&n) {
                old.insert(n, String::from_utf8_lossy(bytes).into_owned());
            }
        })
        .map_err(failed)?
    } else {
        let pinned = text_of(provider, d, snapshot, text)?;
        for &n in &wanted {
            if let Some(line) = pinned.line(n) {
                old.insert(n, line.to_string());
            }
        }
        pinned.len()
    };
    let mut lookup = upstream::Lookup::new(&old);
    match head.document.as_mut() {
        None => {}
        Some(doc) if doc.streamed => {
            let reader = provider.open(d, doc)?;
            check::for_each_line(reader, |i, bytes| lookup.see(i, bytes)).map_err(failed)?;
        }
        Some(doc) => {
            provider.load(d, doc)?;
            for (i, line) in SourceText::new(&doc.bytes).lines().iter().enumerate() {
                lookup.see(i, line.as_bytes());
            }
        }
    }
    Ok(upstream::facts_by_lookup(&old, old_len, &lookup, mine))
}

/// Gathers what made the audit incomplete beside the records.
pub(crate) fn finish(
    rest: Rest,
    records: Vec<RecordResult>,
    provider: &dyn Provider,
) -> AuditResult {
    let remote_failures = provider
        .failures()
        .into_iter()
        .filter(|(_, e)| !matches!(**e, crate::fetch::FetchError::RepositoryMissing { .. }))
        .map(|(remote, error)| RemoteFailure { remote, error })
        .collect();
    AuditResult {
        records,
        orphan_findings: rest.orphan_findings,
        walk_errors: rest.walk_errors,
        skipped_inputs: rest.skipped,
        unreadable_input: rest.unreadable_input,
        remote_failures,
        stale_remotes: provider
            .stale()
            .into_iter()
            .map(|(remote, error)| RemoteFailure { remote, error })
            .collect(),
        generated_at: super::timestamp(),
        baseline_left: None,
    }
}
