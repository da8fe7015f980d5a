//! The stages of an audit, each a function of the previous one's output.

mod memo;
mod whole;

pub(crate) use whole::{Keep, Whole};
use whole::{Placed, Remembered};

use std::collections::HashMap;
use std::path::PathBuf;

use crate::check::revision::{self, Established};
use crate::check::{self, claims, document, manifests, upstream, weights, SourceText};
use crate::finding::{Code, Finding};
use crate::input::{self, WalkError};
use crate::par::Pool;
use crate::provider::archive::{ArchiveAnswer, ArchiveRef, Archived};
use crate::provider::{
    model, web, DocRef, FoundBy, ModelFacts, Models, RevisionFacts, Router, Snapshot, Target,
    Unchecked,
};
use crate::record::{Claim, Record, Source};
use crate::result::{
    Absence, ArtifactOutcome, AuditResult, RecordResult, RemoteFailure, SourceOutcome, SourceState,
    Verdict, WebValidators,
};
use crate::sources::{self, Skip};
use pinaudit_core::memo::CheckMemo;

use super::document::Document;
use super::Options;

/// What makes the record memo's results: its encoding and the derivation of
/// the code that makes them (the records store of another reads as empty).
pub(crate) fn records_version() -> String {
    format!("{}-{}", memo::VERSION, memo::derivation())
}

/// What makes the whole-record report memo's entries: its encoding and the
/// digest of the sources the binary was built from (the fragment store of
/// another reads as empty).
pub(crate) fn fragments_version() -> String {
    whole::version()
}

/// The inputs, read: records with their record-level findings (or what the
/// whole-record memo holds for them), and the rest.
pub(crate) struct Loaded {
    pub(crate) records: Vec<Entry>,
    pub(crate) rest: Rest,
}

/// An input that carries a record.
pub(crate) enum Entry {
    /// Read and parsed, with the findings of loading it and its key in the
    /// whole-record memo (when the memo may keep it).
    Read {
        record: Record,
        findings: Vec<Finding>,
        whole: Option<[u8; 32]>,
    },
    /// Not parsed: the whole-record memo holds it.
    Remembered(Remembered),
}

impl Entry {
    /// Whether the record falls in `shard`.
    pub(crate) fn in_shard(&self, shard: &crate::shard::Shard) -> bool {
        match self {
            Entry::Read { record, .. } => shard.holds(record),
            Entry::Remembered(r) => shard.holds_key(&r.shard_key),
        }
    }

    fn file(&self) -> &std::path::Path {
        match self {
            Entry::Read { record, .. } => &record.file,
            Entry::Remembered(r) => &r.file,
        }
    }
}

/// One input file, read: what the memo holds for it, or its input and the
/// checks of its record (with its key in the memo).
enum Got {
    Remembered(Remembered),
    Read(input::Input, Vec<Finding>, Option<[u8; 32]>),
}

/// One input file as the first pass over the inputs leaves it: settled
/// (`None`: it carries no record), or keyed while the whole-record memo was
/// still loading, to be looked up once it has. Only the key waits: a file the
/// memo does not answer is read again (a re-check of unchanged inputs reads
/// each once; holding their bytes meanwhile cost a copy of every file and as
/// much fresh memory, 8 MB for 2,000 pin files).
#[allow(clippy::large_enum_variant)]
enum Reading {
    Settled(Option<Got>),
    Waiting([u8; 32]),
}

/// Reads one input file (`named` on the command line, else found while
/// walking: `None` when it carries no record), looked up in the whole-record
/// memo first when there is one.
fn read_one<U>(
    file: &std::path::Path,
    named: bool,
    whole: Option<(&Whole<U>, &dyn CheckMemo)>,
) -> Reading {
    let read = whole
        .filter(|_| file.as_os_str() != "-")
        .and_then(|(w, memo)| {
            with_input(file, |bytes| {
                let key = w.key(file, named, bytes);
                match memo.ready() {
                    true => Reading::Settled(look_up(file, named, (w, memo), bytes, key)),
                    false => Reading::Waiting(key),
                }
            })
            .ok()
        });
    read.unwrap_or_else(|| Reading::Settled(parsed(file, named)))
}

/// `file` read and parsed here, its record's checks run (what a file the
/// memo cannot answer comes to, an unreadable one's finding included).
fn parsed(file: &std::path::Path, named: bool) -> Option<Got> {
    parse(file, named, None).map(|(loaded, checks)| Got::Read(loaded, checks, None))
}

/// `f` of the bytes of the input file `file`, read to the end without asking
/// its size first: one system call fewer than `std::fs::read` on each of
/// thousands of small files (a pin file is a few kilobytes). They are read
/// into room the thread keeps (grown for a longer file, let go past a
/// megabyte), so nothing is copied or allocated per file.
fn with_input<R>(file: &std::path::Path, f: impl FnOnce(&[u8]) -> R) -> std::io::Result<R> {
    use std::io::Read;
    thread_local! {
        static ROOM: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    let mut opened = std::fs::File::open(file)?;
    ROOM.with(|room| {
        let mut room = room.try_borrow_mut().map_err(std::io::Error::other)?;
        room.clear();
        room.reserve(64 << 10);
        // Through `take`: `File`'s own `read_to_end` asks the size first.
        let read = (&mut opened).take(u64::MAX).read_to_end(&mut room);
        drop(opened);
        let done = read.map(|_| f(&room));
        // Room a long input needed is not kept for the rest of the run.
        if room.capacity() > 1 << 20 {
            *room = Vec::new();
        }
        done
    })
}

/// What the whole-record memo holds for `file` (its `bytes` are keyed
/// `key`), else the file parsed from `bytes`.
fn look_up<U>(
    file: &std::path::Path,
    named: bool,
    (w, memo): (&Whole<U>, &dyn CheckMemo),
    bytes: &[u8],
    key: [u8; 32],
) -> Option<Got> {
    if let Some(r) = w.recall(memo, key, file, named) {
        return Some(Got::Remembered(r));
    }
    let (loaded, checks) = parse(file, named, Some(bytes))?;
    Some(Got::Read(loaded, checks, Some(key)))
}

/// Reads every input file on `readers`, in input order: files keyed while
/// the whole-record memo was loading are looked up in a second pass, on
/// `pool` (CPU work, but for the files it does not answer, read again).
fn read_all<U>(
    files: &[(PathBuf, bool)],
    (pool, readers): (Pool, Pool),
    whole: Option<(&Whole<U>, &dyn CheckMemo)>,
) -> Vec<Option<Got>> {
    let reading = readers.map(files, |(f, named)| read_one(f, *named, whole));
    let mut read = Vec::with_capacity(reading.len());
    let mut waiting = Vec::new();
    for (i, r) in reading.into_iter().enumerate() {
        match r {
            Reading::Settled(got) => read.push(got),
            Reading::Waiting(key) => {
                read.push(None);
                waiting.push((i, key));
            }
        }
    }
    if let Some(whole) = whole.filter(|_| !waiting.is_empty()) {
        let looked = pool.map(&waiting, |(i, key)| {
            let (file, named) = &files[*i];
            look_up_again(file, *named, whole, *key)
        });
        for ((i, _), got) in waiting.iter().zip(looked) {
            read[*i] = got;
        }
    }
    read
}

/// What the whole-record memo holds for `file`, keyed `key` when it was
/// first read, else the file read again and parsed (looked up again first
/// if its bytes changed since).
fn look_up_again<U>(
    file: &std::path::Path,
    named: bool,
    (w, memo): (&Whole<U>, &dyn CheckMemo),
    key: [u8; 32],
) -> Option<Got> {
    if let Some(r) = w.recall(memo, key, file, named) {
        return Some(Got::Remembered(r));
    }
    let read = with_input(file, |bytes| match w.key(file, named, bytes) {
        now if now == key => parse(file, named, Some(bytes))
            .map(|(loaded, checks)| Got::Read(loaded, checks, Some(key))),
        now => look_up(file, named, (w, memo), bytes, now),
    });
    read.unwrap_or_else(|_| parsed(file, named))
}

/// Parses one input file from `bytes` (`None`: read here) and runs the
/// checks its record alone answers; `None` for a file found while walking
/// that carries no record.
fn parse(
    file: &std::path::Path,
    named: bool,
    bytes: Option<&[u8]>,
) -> Option<(input::Input, Vec<Finding>)> {
    let loaded = match (named, bytes) {
        (true, Some(b)) => input::load_bytes(file, b),
        (false, Some(b)) => input::load_found_bytes(file, b)?,
        (true, None) => input::load(file),
        (false, None) => input::load_found(file)?,
    };
    let checks = loaded
        .record
        .as_ref()
        .map(check::record_checks)
        .unwrap_or_default();
    Some((loaded, checks))
}

/// `findings` of the input `file`, each naming it.
fn stamped(file: &std::path::Path, findings: Vec<Finding>) -> Vec<Finding> {
    let shown = file.display().to_string();
    findings
        .into_iter()
        .map(|mut f| {
            f.file = Some(shown.clone());
            f
        })
        .collect()
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
/// Files are read, parsed and checked on `--jobs` workers, more than the
/// cores when `--jobs` says so and the memo may answer them (`readers`:
/// reading pin files is most of a re-check of unchanged inputs, and a read
/// waits on the disk once the page cache has let the file go), else on the
/// cores; the results are put together in input order, so nothing depends
/// on the number of workers. The walk and the second pass of lookups run on
/// `pool`.
///
/// A file the whole-record memo holds (`whole`) is neither parsed nor
/// checked: its entry stands for it, the checks' findings included.
pub(crate) fn load<U>(
    paths: &[PathBuf],
    walk: &input::WalkOptions,
    (pool, readers): (Pool, Pool),
    whole: Option<(&Whole<U>, &dyn CheckMemo)>,
) -> Loaded {
    let collected = input::collect(paths, walk, pool);
    // Reading waits on the disk when the memo answers the inputs; when
    // nothing can answer them (a first audit), it is mostly parsing them:
    // CPU work, on the cores (more workers only held more memory, 12 MiB
    // with 20,000 records).
    let readers = match whole {
        Some((_, memo)) if memo.may_answer() => readers,
        _ => pool,
    };
    let mut walk_errors = collected.errors;
    // Per file: skipped (no record in it), or what the memo holds, or its
    // input and the checks of its record.
    let read = read_all(&collected.files, (pool, readers), whole);
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
    let mut records: Vec<Entry> = Vec::new();
    // The first record with each id, by position in `records`.
    let mut first_with_id: HashMap<String, usize> = HashMap::new();
    for (file, got) in inputs {
        let (loaded, checks, whole) = match got {
            Got::Read(loaded, checks, whole) => (loaded, checks, whole),
            Got::Remembered(r) => {
                if !first_with_id.contains_key(&r.id) {
                    first_with_id.insert(r.id.clone(), records.len());
                    records.push(Entry::Remembered(r));
                    continue;
                }
                // Its id is another record's: read it, for the finding that
                // says so (no entry is made of a record found so).
                match parse(&file, r.named, None) {
                    Some((loaded, checks)) => (loaded, checks, None),
                    None => {
                        skipped.push(file);
                        continue;
                    }
                }
            }
        };
        let shown = file.display().to_string();
        match loaded.record {
            Some(mut r) => {
                // Judged as written above; checked below at the revisions its
                // figures cite.
                r.at_cited_revisions();
                let mut mine = stamped(&file, loaded.findings);
                let mut whole = whole;
                match first_with_id.get(r.id.as_str()) {
                    Some(&at) => {
                        let first = records[at].file().display().to_string();
                        mine.extend(stamped(&file, vec![
                            Finding::new(
                                Code::InvalidRecord,
                                &r.id,
                                format!(
                                    "`{shown}`: record id `{}` is also the id of `{first}`; give each record its own id",
                                    r.id,
                                ),
                            )
                            .with("other_file", first),
                        ]));
                        // What it says depends on another file.
                        whole = None;
                    }
                    None => {
                        first_with_id.insert(r.id.clone(), records.len());
                    }
                }
                mine.extend(stamped(&file, checks));
                records.push(Entry::Read {
                    record: r,
                    findings: mine,
                    whole,
                });
            }
            None => {
                unreadable_input = true;
                orphan_findings.extend(stamped(&file, loaded.findings));
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

/// A record with what each of its sources and artifacts asks to be fetched.
pub(crate) struct Planned {
    pub(crate) record: Record,
    pub(crate) findings: Vec<Finding>,
    /// One target per source, in source order.
    pub(crate) sources: Vec<Target>,
    /// Per artifact, the model repository its weights are read from, if it names one.
    pub(crate) artifacts: Vec<Option<Target>>,
    /// Its key in the whole-record memo, when the memo may keep it.
    pub(crate) whole: Option<[u8; 32]>,
}

/// A record to check: planned, or remembered whole (checked only when a
/// remote it cites moved).
pub(crate) enum Work {
    Planned(Planned),
    Remembered(Remembered),
}

impl Work {
    /// The first git remote the record cites (the key its records are grouped by).
    fn first_remote(&self) -> Option<&str> {
        match self {
            Work::Planned(p) => whole::first_remote(&p.sources),
            Work::Remembered(r) => whole::first_remote(&r.targets),
        }
    }

    /// How many sources the record has.
    fn sources(&self) -> usize {
        match self {
            Work::Planned(p) => p.sources.len(),
            Work::Remembered(r) => r.sources,
        }
    }

    /// Everything the record asks to be fetched.
    fn targets(&self) -> impl Iterator<Item = &Target> {
        let (sources, artifacts): (&[Target], &[Option<Target>]) = match self {
            Work::Planned(p) => (&p.sources, &p.artifacts),
            Work::Remembered(r) => (&r.targets, &[]),
        };
        sources.iter().chain(artifacts.iter().flatten())
    }
}

/// Works out, for every source, which document at which revision it cites
/// (URLs parsed and hosts checked on every worker of `pool`); a record the
/// whole-record memo holds needs no plan (its entry names what it cites).
pub(crate) fn plan(records: Vec<Entry>, allow_local: bool, pool: Pool) -> Vec<Work> {
    // Only the records read are planned on the workers: on a re-check that
    // the memo answers whole, no thread is started for nothing (starting one
    // while the stores load waits for a core).
    let read: Vec<&Record> = records
        .iter()
        .filter_map(|e| match e {
            Entry::Read { record, .. } => Some(record),
            Entry::Remembered(_) => None,
        })
        .collect();
    let mut targets = pool
        .map(&read, |record| targets_of(record, allow_local))
        .into_iter();
    records
        .into_iter()
        .map(|e| match e {
            Entry::Read {
                record,
                findings,
                whole,
            } => {
                let (sources, artifacts) = targets.next().unwrap_or_default();
                Work::Planned(Planned {
                    record,
                    findings,
                    sources,
                    artifacts,
                    whole,
                })
            }
            Entry::Remembered(r) => Work::Remembered(r),
        })
        .collect()
}

/// What a record's sources and artifacts ask to be fetched.
fn targets_of(record: &Record, allow_local: bool) -> (Vec<Target>, Vec<Option<Target>>) {
    let sources: Vec<Target> = record
        .sources
        .iter()
        .map(|s| source_target(s, allow_local))
        .collect();
    let artifacts: Vec<Option<Target>> = record
        .artifacts
        .iter()
        .map(|a| {
            model::resolve(a, allow_local)
                .map(|m| m.map_or_else(Target::Unfetchable, Target::Model))
        })
        .collect();
    (sources, artifacts)
}

/// What a source cites: a git document, else a web document, else nothing that
/// can be fetched (and why not).
fn source_target(s: &Source, allow_local: bool) -> Target {
    match sources::resolve(s, allow_local) {
        Ok(d) => Target::Git(d),
        Err(skip) => match web::web_url(s) {
            Some(url) => Target::Web(url),
            None => Target::Unfetchable(skip),
        },
    }
}

/// Gets every cited document in one go: one sync per repository, one request
/// per URL. The git cache goes on syncing after this returns (online): the
/// check stage takes each record once the repositories it cites have landed.
pub(crate) fn prefetch(planned: &[Work], provider: &mut Router) {
    let targets: Vec<&Target> = planned.iter().flat_map(Work::targets).collect();
    provider.prefetch(&targets);
}

/// Checks every record against what the provider holds, handing each result
/// to `prepare` on the worker that checked it (in any order) and what that
/// gives to `accept` on the calling thread, in record order.
///
/// Records are checked on up to `--jobs` worker threads (no more than the
/// cores), each with its own fork of the provider: reading, hashing, matching and
/// diffing are CPU work. Records of one repository go to one worker (what a
/// check remembers per repository is then written by one thread), which takes
/// them in input order, at most [`WINDOW`] per worker ahead of the oldest
/// result not yet accepted: what waits to be accepted is bounded by the
/// workers, not by the records, and a report is written as its records are
/// checked, in the same order for any `--jobs`.
///
/// Checking starts while repositories still sync: a worker skips, within its
/// window, the records whose repositories have not landed yet
/// ([`crate::provider::Revisions::landed`]) and comes back to them once they
/// have, so no core idles while a sync waits on its server. One worker (one
/// job, or `--manifests`) takes records strictly in input order, each
/// waiting for its repositories.
///
/// A record the whole-record memo holds is handed on as it holds it when the
/// remotes it cites have not moved, else read and checked; a record checked
/// is kept in the memo when it may be.
pub(crate) fn check<T: Send>(
    planned: Vec<Work>,
    provider: &Router,
    opts: &Options,
    whole: Option<&Whole<T>>,
    prepare: &(dyn Fn(RecordResult) -> T + Sync),
    accept: &mut dyn FnMut(T),
) {
    let documents: usize = planned.iter().map(Work::sources).sum();
    if let Some(memo) = provider.documents().check_memo() {
        // About one answer per claim and one per source (the drift facts).
        let answers = planned.iter().map(|w| match w {
            Work::Planned(p) => p.record.claims.len() + p.sources.len(),
            Work::Remembered(_) => 0,
        });
        memo.expect_answers(answers.sum());
    }
    // Offline, checking reads only the cache and is over at once: no bar, as for
    // fetching.
    let shown = opts
        .plan
        .progress
        .as_ref()
        .filter(|_| !opts.plan.sync.offline);
    let bar = crate::progress::checking(shown, documents as u64);
    // A manifest is judged once per revision, by the first record that cites it:
    // with --manifests, records are checked in input order on one thread.
    let workers = if opts.manifests {
        1
    } else {
        opts.pool().workers().min(planned.len())
    };
    let forks: Option<Vec<Router>> = if workers > 1 {
        (0..workers).map(|_| provider.fork()).collect()
    } else {
        None
    };
    let Some(forks) = forks else {
        let mut seen = manifests::Seen::new();
        for w in planned {
            let n = w.sources() as u64;
            let done = handed_on(w, provider, opts, whole, prepare, &mut seen);
            bar.inc(n);
            accept(done);
        }
        bar.finish();
        return;
    };
    let window = WINDOW * forks.len();
    let queue = Queue::new(planned, forks.len());
    // Results go to the writing thread a few at a time (see [`HAND_ON_MAX`]).
    let (send, receive) = std::sync::mpsc::channel::<Vec<(usize, T)>>();
    std::thread::scope(|scope| {
        for (worker, fork) in forks.into_iter().enumerate() {
            let (bar, send, queue) = (bar.clone(), send.clone(), &queue);
            scope.spawn(move || {
                // A worker that panics stops the others (its record is never
                // accepted, so they would wait for it forever).
                let _stop = StopOnPanic(queue);
                let mut seen = manifests::Seen::new();
                let ready = |w: &Work| landed(w, fork.revisions());
                let (mut held, mut since) = (Vec::new(), std::time::Instant::now());
                // Hands on what is held; `false` once the writer is gone.
                let hand_on = |held: &mut Vec<(usize, T)>| {
                    held.is_empty() || send.send(std::mem::take(held)).is_ok()
                };
                loop {
                    let (i, w) = match queue.take(worker, window, &ready, !held.is_empty()) {
                        Taken::Record(i, w) => (i, w),
                        Taken::HandOn => match hand_on(&mut held) {
                            true => continue,
                            false => return,
                        },
                        Taken::Done => break,
                    };
                    let n = w.sources() as u64;
                    // A record the memo answers is held with the others; one
                    // to check (milliseconds, or a fetch) is not started
                    // while results wait that the writer may need.
                    let done = match answered(w, &fork, whole) {
                        Ok(done) => done,
                        Err(w) => match hand_on(&mut held) {
                            true => checked(w, &fork, opts, whole, prepare, &mut seen),
                            false => return,
                        },
                    };
                    bar.inc(n);
                    if held.is_empty() {
                        since = std::time::Instant::now();
                    }
                    held.push((i, done));
                    let due = held.len() >= HAND_ON_MAX || since.elapsed() >= HAND_ON_AFTER;
                    if due && !hand_on(&mut held) {
                        return;
                    }
                }
                hand_on(&mut held);
            });
        }
        drop(send);
        // Results that came before an earlier one, by index.
        let mut waiting: std::collections::BTreeMap<usize, T> = Default::default();
        let mut next = 0;
        for handed in receive {
            for (i, done) in handed {
                waiting.insert(i, done);
            }
            while let Some(done) = waiting.remove(&next) {
                accept(done);
                next += 1;
            }
            queue.accepted(next);
        }
    });
    bar.finish();
}

/// What is handed on for one record: what the whole-record memo holds for it
/// when that still holds, else its result checked and prepared (and kept in
/// the memo when it may be).
fn handed_on<T>(
    w: Work,
    provider: &Router,
    opts: &Options,
    whole: Option<&Whole<T>>,
    prepare: &(dyn Fn(RecordResult) -> T + Sync),
    seen: &mut manifests::Seen,
) -> T {
    match answered(w, provider, whole) {
        Ok(done) => done,
        Err(w) => checked(w, provider, opts, whole, prepare, seen),
    }
}

/// A record the whole-record memo did not answer, checked and prepared
/// (and kept in the memo when it may be): a remembered one whose remotes
/// moved is read again first.
fn checked<T>(
    w: Work,
    provider: &Router,
    opts: &Options,
    whole: Option<&Whole<T>>,
    prepare: &(dyn Fn(RecordResult) -> T + Sync),
    seen: &mut manifests::Seen,
) -> T {
    let p = match w {
        Work::Planned(p) => p,
        Work::Remembered(r) => match reread(&r, whole, opts) {
            Ok(p) => p,
            Err(result) => return prepare(*result),
        },
    };
    let Some((whole, key)) = whole.zip(p.whole) else {
        return prepare(check_record(p, provider, opts, seen).0);
    };
    let (targets, sources) = (p.sources.clone(), p.sources.len());
    let (id, shard_key) = (p.record.id.clone(), crate::shard::key_of(&p.record));
    let file = p.record.file.clone();
    let (result, kept) = check_record(p, provider, opts, seen);
    let done = prepare(result);
    if kept.may() {
        let placed = Placed {
            file: &file,
            id: &id,
            shard_key,
            sources,
            targets: &targets,
        };
        let whole_kept = whole.keep(provider, key, placed, &done).is_some();
        if let (false, memo::Kept::Whole(fallback)) = (whole_kept, kept) {
            fallback.put(provider);
        }
    }
    done
}

/// What the whole-record memo holds for `w` when that still holds (a
/// lookup: microseconds), else `w` back, to be checked (handed straight on,
/// never stored: as large as the record it is).
#[allow(clippy::result_large_err)]
fn answered<T>(w: Work, provider: &Router, whole: Option<&Whole<T>>) -> Result<T, Work> {
    match w {
        Work::Remembered(r) => match whole.and_then(|w| w.answer(&r, provider)) {
            Some(done) => Ok(done),
            None => Err(Work::Remembered(r)),
        },
        planned => Err(planned),
    }
}

/// A remembered record whose remotes moved, read again and planned. Kept
/// anew only when its bytes are still those it was looked up by (its id and
/// shard were placed by them); a file that changed since is audited as it
/// is now, and one that no longer holds a record gives the result that says
/// so.
fn reread<T>(
    r: &Remembered,
    whole: Option<&Whole<T>>,
    opts: &Options,
) -> Result<Planned, Box<RecordResult>> {
    let bytes = std::fs::read(&r.file).ok();
    let unchanged = whole
        .zip(bytes.as_deref())
        .is_some_and(|(w, b)| w.key(&r.file, r.named, b) == r.key);
    let parsed = parse(&r.file, r.named, bytes.as_deref());
    let (loaded, checks) = parsed.unwrap_or_default();
    let mut findings = stamped(&r.file, loaded.findings);
    let Some(mut record) = loaded.record else {
        findings.extend(stamped(
            &r.file,
            vec![Finding::new(
                Code::InvalidRecord,
                &r.id,
                format!(
                    "`{}` changed while it was audited and no longer holds a record; audit it again",
                    r.file.display()
                ),
            )],
        ));
        let record = Record {
            id: r.id.clone(),
            title: None,
            file: r.file.clone(),
            sources: Vec::new(),
            claims: Vec::new(),
            artifacts: Vec::new(),
            references: Vec::new(),
            input: crate::record::InputDigest(None),
        };
        return Err(Box::new(RecordResult {
            record,
            sources: Vec::new(),
            claims: Vec::new(),
            findings,
            artifacts: Vec::new(),
            notices: Vec::new(),
        }));
    };
    record.at_cited_revisions();
    findings.extend(stamped(&r.file, checks));
    let (sources, artifacts) = targets_of(&record, opts.plan.allow_local);
    Ok(Planned {
        record,
        findings,
        sources,
        artifacts,
        whole: unchanged.then_some(r.key),
    })
}

/// Whether every repository `w` cites (its documents' and its weights') has
/// landed, so that checking it waits for no sync.
fn landed(w: &Work, revisions: &dyn crate::provider::Revisions) -> bool {
    let mut last = "";
    w.targets().all(|t| {
        let remote = match t {
            Target::Git(d) => d.remote.as_str(),
            Target::Model(m) => m.remote.as_str(),
            Target::Web(_) | Target::Unfetchable(_) => return true,
        };
        // A record's sources mostly cite one repository: asked once.
        let asked = remote == last;
        last = remote;
        asked || revisions.landed(remote)
    })
}

/// How long a worker whose records in its window all wait for a sync waits
/// before looking again (a landing does not wake it: the fetcher knows
/// nothing of the queue).
const LANDING_POLL: std::time::Duration = std::time::Duration::from_millis(5);

/// How many records each checking worker may be ahead of the oldest result
/// not yet accepted (a result waiting is a record's fragment of the report:
/// a few kilobytes).
const WINDOW: usize = 256;

/// The records left to check, each worker's share handed out in input order.
struct Queue {
    state: std::sync::Mutex<Dispense>,
    moved: std::sync::Condvar,
}

struct Dispense {
    items: Vec<Option<Work>>,
    /// Per worker, the indices of its records not yet taken, in input order.
    shares: Vec<std::collections::VecDeque<usize>>,
    /// How many results were accepted (all those before this index).
    accepted: usize,
    /// A worker failed: hand nothing more out.
    stopped: bool,
}

impl Queue {
    /// Groups the records by the first repository they cite and gives the
    /// largest groups first to the least loaded of `workers` (cost ~ sources).
    fn new(planned: Vec<Work>, workers: usize) -> Queue {
        let mut groups: Vec<(&str, Vec<usize>, usize)> = Vec::new();
        let mut at: HashMap<&str, usize> = HashMap::new();
        for (i, p) in planned.iter().enumerate() {
            let key = p.first_remote().unwrap_or_default();
            let g = *at.entry(key).or_insert_with(|| {
                groups.push((key, Vec::new(), 0));
                groups.len() - 1
            });
            groups[g].1.push(i);
            groups[g].2 += p.sources() + 1;
        }
        groups.sort_by(|a, b| b.2.cmp(&a.2).then_with(|| a.0.cmp(b.0)));
        let mut shares: Vec<(usize, Vec<usize>)> = vec![(0, Vec::new()); workers.max(1)];
        for (_, g, weight) in groups {
            if let Some(least) = shares.iter_mut().min_by_key(|(load, _)| *load) {
                least.0 += weight;
                least.1.extend(g);
            }
        }
        let shares = shares
            .into_iter()
            .map(|(_, mut share)| {
                share.sort_unstable();
                share.into()
            })
            .collect();
        Queue {
            state: std::sync::Mutex::new(Dispense {
                items: planned.into_iter().map(Some).collect(),
                shares,
                accepted: 0,
                stopped: false,
            }),
            moved: std::sync::Condvar::new(),
        }
    }

    /// `worker`'s first record within `window` of the oldest not accepted
    /// that is `ready` (whose repositories have landed); [`Taken::Done`] when
    /// its share is done or a worker failed. A worker `holding` results it
    /// has not handed on is told to hand them on ([`Taken::HandOn`]) instead
    /// of waiting for a record. (The oldest record not accepted is always in
    /// its worker's window and taken once its repositories land, which they
    /// all do, and no worker waits holding a result, so no worker waits on
    /// one that waits.)
    fn take(
        &self,
        worker: usize,
        window: usize,
        ready: &dyn Fn(&Work) -> bool,
        holding: bool,
    ) -> Taken {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if state.stopped {
                return Taken::Done;
            }
            let limit = state.accepted + window;
            let Some(share) = state.shares.get(worker).filter(|s| !s.is_empty()) else {
                return Taken::Done;
            };
            let mut within = share.iter().enumerate().take_while(|(_, &i)| i < limit);
            let found = within.find(|(_, &i)| state.items[i].as_ref().is_some_and(ready));
            let waiting = share.front().is_some_and(|&i| i < limit);
            if let Some((at, _)) = found {
                let taken = state.shares[worker]
                    .remove(at)
                    .and_then(|next| Some((next, state.items[next].take()?)));
                return match taken {
                    Some((next, work)) => Taken::Record(next, work),
                    None => Taken::Done,
                };
            }
            if holding {
                return Taken::HandOn;
            }
            state = match waiting {
                // Records in the window wait for their syncs: look again soon.
                true => {
                    let waited = self.moved.wait_timeout(state, LANDING_POLL);
                    waited.unwrap_or_else(|e| e.into_inner()).0
                }
                false => self.moved.wait(state).unwrap_or_else(|e| e.into_inner()),
            };
        }
    }

    /// Results before index `n` are accepted: workers may go further.
    fn accepted(&self, n: usize) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if state.accepted != n {
            state.accepted = n;
            self.moved.notify_all();
        }
    }
}

/// What a worker is given by [`Queue::take`] (as large as the record it
/// hands over, which goes on at once).
#[allow(clippy::large_enum_variant)]
enum Taken {
    /// The record at this index, to check.
    Record(usize, Work),
    /// Nothing to check yet: hand on the results held, then ask again.
    HandOn,
    /// Its share is done (or a worker failed).
    Done,
}

/// The most results a worker holds before it hands them on together (one
/// wake-up of the writing thread for each, where a result is as quick to
/// answer as a record the whole-record memo holds, was a third of the
/// check stage). Only results the memo answered are held: a worker hands on
/// what it holds before it checks a record.
const HAND_ON_MAX: usize = 32;

/// How long a worker holds results before it hands them on, counted from the
/// first (checked after each answer).
const HAND_ON_AFTER: std::time::Duration = std::time::Duration::from_millis(2);

/// Stops the queue when the worker holding it unwinds.
struct StopOnPanic<'q>(&'q Queue);

impl Drop for StopOnPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            let mut state = self.0.state.lock().unwrap_or_else(|e| e.into_inner());
            state.stopped = true;
            self.0.moved.notify_all();
        }
    }
}

/// A record's result: remembered from an earlier run when nothing it depends
/// on changed ([`memo`]), else checked source by source.
/// Says too whether the result may be remembered (see [`memo::checked`]).
fn check_record(
    p: Planned,
    provider: &Router,
    opts: &Options,
    manifests_seen: &mut manifests::Seen,
) -> (RecordResult, memo::Kept) {
    memo::checked(p, provider, opts, |p| {
        check_afresh(p, provider, opts, manifests_seen)
    })
}

fn check_afresh(
    p: Planned,
    provider: &Router,
    opts: &Options,
    manifests_seen: &mut manifests::Seen,
) -> RecordResult {
    let Planned {
        record: r,
        mut findings,
        sources,
        artifacts,
        whole: _,
    } = p;
    let from = findings.len();
    let mut verdicts: Vec<Verdict> = r.claims.iter().map(|_| Verdict::unchecked()).collect();
    let mut outcomes = Vec::with_capacity(r.sources.len());
    let mut reported = revision::Reported::new();
    let mut notices = Vec::new();
    let mut citing = Citing::new(&r);
    for (index, (s, target)) in r.sources.iter().zip(&sources).enumerate() {
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
        let outcome = match target {
            Target::Git(d) => source.git(d, opts, &mut reported, manifests_seen),
            Target::Web(url) => source.web(url),
            Target::Model(_) => {
                SourceOutcome::unchecked(Unchecked::Unresolvable(Skip::ModelNotDocument))
            }
            Target::Unfetchable(skip) => {
                SourceOutcome::unchecked(Unchecked::Unresolvable(skip.clone()))
            }
        };
        outcomes.push(outcome);
    }
    let artifacts = check_weights(&r, &artifacts, provider.models(), &mut findings);
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

/// The pinned document, its commit time, and the archive it was read from
/// when the forge lost it.
type Pinned = (Snapshot, Option<String>, Option<ArchiveRef>);

/// One source of a record being checked, with the claims that cite it.
struct SourceCheck<'a> {
    r: &'a Record,
    s: &'a Source,
    cited: &'a [usize],
    provider: &'a Router,
    verdicts: &'a mut Vec<Verdict>,
    findings: &'a mut Vec<Finding>,
    /// What the manifest check says of itself (manifests not read, and why).
    notices: &'a mut Vec<String>,
}

impl SourceCheck<'_> {
    /// The outcome of a git source: the pinned revision, the document at it, the
    /// manifests beside it, the cited claims on it and its drift at the head.
    fn git(
        &mut self,
        d: &DocRef,
        opts: &Options,
        reported: &mut revision::Reported,
        manifests_seen: &mut manifests::Seen,
    ) -> SourceOutcome {
        let (snapshot, commit_time, archive) = match self.pinned(d, reported) {
            Ok(pinned) => pinned,
            Err(outcome) => return *outcome,
        };
        // An archived copy has no tree to list and no head to compare with.
        let from_forge = archive.is_none();
        if opts.manifests && from_forge {
            self.manifests(d, opts, manifests_seen);
        }
        let mut doc = Document::new(self.provider.documents(), d, snapshot);
        if let Err(outcome) = self.claims(&mut doc) {
            return *outcome;
        }
        let upstream = match opts.no_upstream || !from_forge {
            true => None,
            false => self.upstream(d, &mut doc),
        };
        let snapshot = doc.into_snapshot();
        SourceOutcome {
            state: SourceState::Checked,
            sha256: Some(snapshot.sha256),
            git_blob: snapshot.git_blob,
            commit_time,
            upstream,
            stale_since: match from_forge {
                true => self.provider.revisions().stale_since(d),
                false => None,
            },
            web: None,
            archive,
        }
    }

    /// The checksum manifests beside the cited document (`--manifests`).
    fn manifests(&mut self, d: &DocRef, opts: &Options, seen: &mut manifests::Seen) {
        let bounds = manifests::Bounds {
            max_size: opts.max_document_size,
            max_count: manifests::MAX_MANIFESTS,
        };
        let docs = self.provider.documents();
        let said = manifests::check(self.r, self.s, d, docs, bounds, seen, self.findings);
        self.notices.extend(said);
    }

    /// The document at the pinned revision (its bytes possibly unread), the
    /// commit time and the archive it was read from when the forge lost it,
    /// after the revision and document checks; the source's outcome when there
    /// is no document to read the cited values from.
    fn pinned(
        &mut self,
        d: &DocRef,
        reported: &mut revision::Reported,
    ) -> Result<Pinned, Box<SourceOutcome>> {
        let (r, s) = (self.r, self.s);
        let (revisions, docs) = (self.provider.revisions(), self.provider.documents());
        let unchecked = |why| Box::new(SourceOutcome::unchecked(why));
        let facts = match revisions.revision(d) {
            Ok(facts) => facts,
            // The forge could not be reached and the cache lacks the pin: an
            // archive may stand in.
            Err(why) => {
                return match self.archived(d) {
                    ArchiveAnswer::Found(a) => Ok(self.judge_archived(d, *a, None, reported)),
                    _ => Err(unchecked(why)),
                }
            }
        };
        // The forge lost the repository or the commit: what an archive holds.
        let lost = match &facts {
            RevisionFacts::RepositoryMissing { described, .. } => Some(described.clone()),
            RevisionFacts::CommitMissing { .. } => Some(format!(
                "commit `{}` is not in the repository",
                d.commit.short()
            )),
            RevisionFacts::Present { .. } => None,
        };
        // What the archive said, kept for the finding: the forge's "not found" is
        // a verdict even when no archive could be asked.
        let mut not_archived = None;
        let mut archive_failed = None;
        if let Some(lost) = lost {
            match self.archived(d) {
                ArchiveAnswer::Found(a) => {
                    return Ok(self.judge_archived(d, *a, Some(&lost), reported))
                }
                ArchiveAnswer::NotArchived(said) => not_archived = Some(said),
                ArchiveAnswer::Failed(why) => archive_failed = Some(why.to_string()),
                ArchiveAnswer::NotAsked => {}
            }
        }
        let said = match (&not_archived, &archive_failed) {
            (Some(said), _) => revision::ArchiveSaid::NotArchived(said),
            (_, Some(why)) => revision::ArchiveSaid::Unreachable(why),
            _ => revision::ArchiveSaid::NotAsked,
        };
        let commit_time = match revision::check(r, s, d, &facts, said, reported, self.findings) {
            Established::Absent(what) => {
                // No document to read: the cited values stay unchecked, the finding is
                // the source's.
                return Err(Box::new(SourceOutcome {
                    stale_since: revisions.stale_since(d),
                    ..SourceOutcome::absent(what, s.commit_time.clone())
                }));
            }
            Established::Present { commit_time } => commit_time,
        };
        // The bytes are read only when a check needs them: a re-check of a blob
        // whose answers are remembered reads nothing.
        let snapshot = docs.snapshot_lazy(d).map_err(unchecked)?;
        document::check(
            r,
            s,
            d,
            snapshot.as_ref(),
            |expected| docs.matching_variant(d, snapshot.as_ref()?, expected),
            |expected| docs.hash_elsewhere(d, snapshot.as_ref()?, expected),
            self.findings,
        );
        let commit_time = commit_time.or_else(|| s.commit_time.clone());
        match snapshot {
            Some(snapshot) => Ok((snapshot, commit_time, None)),
            // No document at the commit: nothing to read the cited values from.
            None => Err(Box::new(SourceOutcome {
                stale_since: revisions.stale_since(d),
                ..SourceOutcome::absent(Absence::Path, commit_time)
            })),
        }
    }

    /// What the registered archive answers for `d` (not asked when none is).
    fn archived(&self, d: &DocRef) -> ArchiveAnswer {
        self.provider
            .archives()
            .map_or(ArchiveAnswer::NotAsked, |a| a.archived(d))
    }

    /// The pinned document as an archive holds it, judged as from git: the
    /// commit time, `source-vanished` when the forge said it lost it (`lost`),
    /// the document's hash.
    fn judge_archived(
        &mut self,
        d: &DocRef,
        a: Archived,
        lost: Option<&str>,
        reported: &mut revision::Reported,
    ) -> Pinned {
        let (r, s) = (self.r, self.s);
        let facts = RevisionFacts::Present {
            reachable: true,
            found_by: FoundBy::Cache,
            commit_time: a.commit_time,
        };
        let commit_time = match revision::check(
            r,
            s,
            d,
            &facts,
            revision::ArchiveSaid::NotAsked,
            reported,
            self.findings,
        ) {
            Established::Present { commit_time } => commit_time,
            Established::Absent(_) => None,
        };
        if let Some(lost) = lost {
            check::archive::vanished(r, s, d, &a, lost, reported, self.findings);
        }
        let bytes = &a.snapshot.bytes;
        document::check(
            r,
            s,
            d,
            Some(&a.snapshot),
            |expected| pinaudit_core::hash::matching_variant(bytes, expected),
            |_| None,
            self.findings,
        );
        let commit_time = commit_time.or_else(|| s.commit_time.clone());
        (a.snapshot, commit_time, Some(a.at))
    }

    /// Judges every cited claim on the document; when the document cannot be
    /// read after all, the source's outcome: unchecked, its findings on the
    /// claims withdrawn.
    fn claims(&mut self, doc: &mut Document) -> Result<(), Box<SourceOutcome>> {
        let (r, s) = (self.r, self.s);
        let mark = self.findings.len();
        for &i in self.cited {
            let outcome = match doc.outcome(r, self.cited, i) {
                Ok(Some(o)) => o,
                Ok(None) => continue,
                Err(why) => {
                    self.findings.truncate(mark);
                    for &i in self.cited {
                        self.verdicts[i] = Verdict::unchecked();
                    }
                    return Err(Box::new(SourceOutcome::unchecked(why)));
                }
            };
            self.verdicts[i] = claims::report(r, s, &r.claims[i], &outcome, self.findings);
        }
        Ok(())
    }

    /// The source at the head it is compared with, when there is one; `None` also
    /// when the cache cannot give the head's document (no drift to tell).
    fn upstream(&mut self, d: &DocRef, doc: &mut Document) -> Option<crate::result::Upstream> {
        let r = self.r;
        let mut head = self.provider.heads().head(d)?;
        let mine: Vec<(&Claim, &Verdict)> = self
            .cited
            .iter()
            .map(|&i| (&r.claims[i], &self.verdicts[i]))
            .collect();
        let facts = match head.unchanged {
            true => None,
            false => Some(doc.drift(&mut head, &mine).ok()?),
        };
        Some(upstream::report(
            r,
            self.s,
            d,
            &head,
            &mine,
            facts.as_ref(),
            self.findings,
        ))
    }

    /// The outcome of a source that cites a web document: its hash and its
    /// cited lines, read from the body as served.
    fn web(&mut self, url: &str) -> SourceOutcome {
        let (r, s) = (self.r, self.s);
        let doc = match self.provider.web().web(url) {
            Ok(doc) => doc,
            Err(why) => {
                return self
                    .web_from_capture(url, &why)
                    .unwrap_or_else(|| SourceOutcome::unchecked(why))
            }
        };
        // The version the record recorded, when kept and the page changed
        // since: the claims are judged against it, as against a pinned commit.
        let kept = s
            .sha256
            .as_ref()
            .and_then(|h| h.valid())
            .filter(|h| h.as_str() != doc.sha256)
            .and_then(|h| self.provider.web().recorded(h.as_str()));
        document::check_web(
            r,
            s,
            url,
            (&doc.bytes, &doc.sha256),
            kept.is_some(),
            self.findings,
        );
        let text = SourceText::new(kept.as_deref().unwrap_or(&doc.bytes));
        for &i in self.cited {
            self.verdicts[i] = claims::check(r, s, &r.claims[i], &text, self.findings);
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
            archive: None,
        }
    }
}

impl SourceCheck<'_> {
    /// A web document its host answered `404` or `410` for (or, offline, that
    /// the cache lacks), judged from a capture with the recorded bytes when an
    /// archive holds one; `None` when none stands in (the source stays unchecked
    /// for `why`).
    fn web_from_capture(&mut self, url: &str, why: &Unchecked) -> Option<SourceOutcome> {
        let (r, s) = (self.r, self.s);
        let said = why.to_string();
        let gone = said.contains("answered `404") || said.contains("answered `410");
        // Offline, what the cache holds from an archive is still read.
        if !gone && !matches!(why, Unchecked::NotCached) {
            return None;
        }
        let sha256 = s.sha256.as_ref()?.valid()?.to_string();
        let answer = self
            .provider
            .web_archives()?
            .capture(url, &sha256, s.commit_time.as_deref());
        let ArchiveAnswer::Found(a) = answer else {
            return None;
        };
        let a = *a;
        if gone {
            check::archive::vanished_page(r, s, url, &a, &said, self.findings);
        }
        let bytes = &a.snapshot.bytes;
        document::check_web(r, s, url, (bytes, &a.snapshot.sha256), false, self.findings);
        let text = SourceText::new(bytes);
        for &i in self.cited {
            self.verdicts[i] = claims::check(r, s, &r.claims[i], &text, self.findings);
        }
        Some(SourceOutcome {
            state: SourceState::Checked,
            sha256: Some(a.snapshot.sha256),
            git_blob: None,
            commit_time: None,
            upstream: None,
            stale_since: None,
            web: None,
            archive: Some(a.at),
        })
    }
}

/// Reads each weights artifact's files in its model repository and
/// judges them; returns what was read, for the report.
fn check_weights(
    r: &Record,
    targets: &[Option<Target>],
    models: &dyn Models,
    findings: &mut Vec<Finding>,
) -> Vec<ArtifactOutcome> {
    let mut out = Vec::new();
    for (a, target) in r.artifacts.iter().zip(targets) {
        let Some(target) = target else {
            continue;
        };
        let mut outcome = ArtifactOutcome {
            label: a.label.clone(),
            repository: a.repository.clone(),
            commit: None,
            files: Vec::new(),
            unchecked: None,
        };
        let facts = match target {
            Target::Model(m) => models.model(m).map(|facts| (m, facts)),
            Target::Unfetchable(skip) => Err(Unchecked::Unresolvable(skip.clone())),
            _ => Err(Unchecked::Unresolvable(Skip::WeightsNeedModel)),
        };
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

/// Gathers what made the audit incomplete beside the records (which went on
/// one by one as they were checked: `records` is left empty).
pub(crate) fn finish(rest: Rest, provider: &Router) -> AuditResult {
    let remote_failures = provider
        .failures()
        .into_iter()
        .filter(|(_, e)| !matches!(**e, crate::fetch::FetchError::RepositoryMissing { .. }))
        .map(|(remote, error)| RemoteFailure { remote, error })
        .collect();
    AuditResult {
        records: Vec::new(),
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

    /// A memo that holds nothing and says it is loading until told otherwise;
    /// it counts the lookups made while it was.
    #[derive(Default)]
    struct Loading {
        ready: AtomicBool,
        early: AtomicUsize,
        lookups: AtomicUsize,
    }

    impl CheckMemo for Loading {
        fn peek_with(&self, _: &[u8; 32], _: &mut dyn FnMut(&[u8])) {
            self.lookups.fetch_add(1, Ordering::SeqCst);
            if !self.ready.load(Ordering::SeqCst) {
                self.early.fetch_add(1, Ordering::SeqCst);
            }
        }
        fn put(&self, _: [u8; 32], _: Vec<u8>) -> bool {
            false
        }
        fn forget(&self, _: &[u8; 32]) {}
        fn ready(&self) -> bool {
            // Ready once the first pass is over: the test flips it after
            // every file was read once.
            self.ready.load(Ordering::SeqCst)
        }
    }

    struct NoForm;

    impl Keep<()> for NoForm {
        fn depends(&self) -> Vec<u8> {
            Vec::new()
        }
        fn encode(&self, _: &(), _: &mut Enc) -> Option<()> {
            None
        }
        fn decode(&self, _: &mut Dec, _: &bytes::Bytes) -> Option<()> {
            None
        }
    }

    use pinaudit_core::memo::{Dec, Enc};

    /// A worker holding results it has not handed on is told to hand them on
    /// instead of waiting for a record past its window; one holding none
    /// waits until the results before the window are accepted, then gets the
    /// next record; a worker whose share is done is done.
    #[test]
    fn a_worker_hands_on_what_it_holds_before_it_waits() {
        let work = |i: usize| {
            Work::Planned(Planned {
                record: Record {
                    id: format!("r{i}"),
                    title: None,
                    file: PathBuf::from(format!("r{i}.json")),
                    sources: Vec::new(),
                    claims: Vec::new(),
                    artifacts: Vec::new(),
                    references: Vec::new(),
                    input: crate::record::InputDigest(None),
                },
                findings: Vec::new(),
                sources: Vec::new(),
                artifacts: Vec::new(),
                whole: None,
            })
        };
        let queue = Queue::new((0..3).map(work).collect(), 1);
        let ready = |_: &Work| true;
        let index = |t: Taken| match t {
            Taken::Record(i, _) => Some(i),
            Taken::HandOn => None,
            Taken::Done => Some(usize::MAX),
        };
        assert_eq!(index(queue.take(0, 2, &ready, false)), Some(0));
        assert_eq!(index(queue.take(0, 2, &ready, true)), Some(1));
        // Record 2 is past the window of two: holding 0 and 1, hand them on.
        assert_eq!(index(queue.take(0, 2, &ready, true)), None);
        std::thread::scope(|scope| {
            let waiting = scope.spawn(|| index(queue.take(0, 2, &ready, false)));
            std::thread::sleep(std::time::Duration::from_millis(30));
            assert!(!waiting.is_finished(), "waits for the window to move");
            queue.accepted(1);
            assert_eq!(waiting.join().expect("joins"), Some(2));
        });
        assert_eq!(index(queue.take(0, 2, &ready, true)), Some(usize::MAX));
    }

    /// Files read while the whole-record memo loads are held, not looked up,
    /// and looked up once it has, each in its place: the result is the one a
    /// loaded memo gives, file by file.
    #[test]
    fn files_read_while_the_memo_loads_are_looked_up_after_in_order() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut files = Vec::new();
        for i in 0..12 {
            // Every fourth file, found while walking, is notes, no record:
            // skipped either way.
            let (name, body) = match i % 4 {
                3 => (format!("notes{i}.md"), "Some notes, no figures.\n".to_string()),
                _ => (
                    format!("r{i:02}.json"),
                    format!(
                        "{{\"schema\": \"pinaudit/pins/v1\", \"id\": \"r{i}\", \"title\": \"t\", \"sources\": [], \"claims\": [], \"artifacts\": []}}"
                    ),
                ),
            };
            let path = dir.path().join(name);
            std::fs::write(&path, body).expect("write");
            files.push((path, i % 4 != 3));
        }
        let keep = NoForm;
        let whole = Whole::with_shared(&keep as &dyn Keep<()>, [7; 32]);
        let summary = |read: Vec<Option<Got>>| -> Vec<Option<(String, Option<[u8; 32]>)>> {
            read.into_iter()
                .map(|g| match g? {
                    Got::Read(input, _, key) => {
                        Some((input.record.map(|r| r.id).unwrap_or_default(), key))
                    }
                    Got::Remembered(r) => Some((format!("remembered {}", r.id), None)),
                })
                .collect()
        };
        let loaded = Loading::default();
        loaded.ready.store(true, Ordering::SeqCst);
        let want = summary(read_all(
            &files,
            (Pool::new(3), Pool::waiting(5)),
            Some((&whole, &loaded)),
        ));
        assert_eq!(want.iter().filter(|g| g.is_none()).count(), 3, "{want:?}");
        assert!(want.iter().flatten().all(|(_, key)| key.is_some()));

        // Not ready during the first pass: nothing is looked up then.
        let loading = Loading::default();
        let reading = Pool::new(3).map(&files, |(f, named)| {
            read_one(f, *named, Some((&whole, &loading)))
        });
        assert!(reading.iter().all(|r| matches!(r, Reading::Waiting(..))));
        assert_eq!(loading.lookups.load(Ordering::SeqCst), 0);

        // The whole way, with the memo turning ready between the passes.
        struct Flip<'m>(&'m Loading, AtomicUsize, usize);
        impl CheckMemo for Flip<'_> {
            fn peek_with(&self, k: &[u8; 32], f: &mut dyn FnMut(&[u8])) {
                self.0.peek_with(k, f)
            }
            fn put(&self, _: [u8; 32], _: Vec<u8>) -> bool {
                false
            }
            fn forget(&self, _: &[u8; 32]) {}
            fn ready(&self) -> bool {
                // Asked once per file read: ready after the last.
                if self.1.fetch_add(1, Ordering::SeqCst) + 1 >= self.2 {
                    self.0.ready.store(true, Ordering::SeqCst);
                }
                false
            }
        }
        let memo = Loading::default();
        let flip = Flip(&memo, AtomicUsize::new(0), files.len());
        let got = summary(read_all(
            &files,
            (Pool::new(3), Pool::waiting(5)),
            Some((&whole, &flip)),
        ));
        assert_eq!(got, want, "the same, file by file");
        assert_eq!(
            memo.early.load(Ordering::SeqCst),
            0,
            "no lookup while loading"
        );
        assert_eq!(memo.lookups.load(Ordering::SeqCst), 12, "every file, once");

        // Only the key waited: a file that changed after it was keyed is
        // read again and audited as it is now, under its new key.
        let (path, named) = &files[0];
        let stale = whole.key(path, *named, b"what the file held when first read");
        let got = look_up_again(path, *named, (&whole, &memo as &dyn CheckMemo), stale);
        let now = whole.key(path, *named, &std::fs::read(path).expect("read"));
        match got {
            Some(Got::Read(input, _, key)) => {
                assert_eq!(input.record.map(|r| r.id).as_deref(), Some("r0"));
                assert_eq!(key, Some(now));
            }
            _ => panic!("read again and parsed"),
        }
    }
}
