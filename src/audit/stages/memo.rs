//! The record memo: a record whose bytes have not changed, citing
//! repositories whose refs have not moved, gets the result it got last time,
//! for the cost of a lookup, instead of being checked source by source.
//!
//! The result is the record's finished domain result (each source's outcome,
//! each claim's verdict, the findings the checks made, the artifacts' outcomes
//! and notices) encoded with the core memo codec and kept in
//! `CACHE/records.store` (unless the record is kept whole, report fragment
//! and all, by [`super::whole`]: then only when that fails), authenticated
//! like every store: a store that fails
//! its MAC, is cut short or is of another version reads as empty, and an entry
//! that does not decode or does not fit the record is dropped and the record
//! checked afresh. What loading found (`invalid-record`, duplicate ids) is
//! never taken from the memo: loading runs anyway.
//!
//! Results that depend on something the key does not hold are not remembered
//! at all (see [`rememberable`]): anything judged from a cache that stood in
//! for an unreachable remote (`stale_since`, which carries a time), anything
//! unchecked but for what planning alone decided, web documents and model
//! repositories (their state is the network's, not a mirror's refs), and
//! `revision-unreachable` (its message says how this run found the commit:
//! fetched by id, or already in the cache), and what an archive answered or
//! would be asked (a source read from Software Heritage, or one the forge lost
//! while an archive is asked: "not archived" holds for a day only). Such a record is checked as today,
//! every run. Nothing else a result holds depends on the time: staleness is
//! the one judgment that does.

use super::Planned;
use crate::audit::Options;
use crate::codes::{Code, Severity};
use crate::finding::{Finding, Location};
use crate::provider::{Router, Target, Unchecked};
use crate::result::{
    Absence, ArtifactOutcome, ClaimStatus, RecordResult, SourceOutcome, SourceState, Upstream,
    Verdict,
};
use crate::sources::Skip;
use pinaudit_core::memo::{CheckMemo, Dec, Enc};

/// Bump when the encoding below, or what goes into the key, changes.
pub(super) const VERSION: u32 = 4;

/// The record's result: from the memo when it holds one for this key, else
/// from `afresh` (remembered for the next run when it may be); and whether
/// the result may be remembered (so the record may be kept whole, its report
/// fragment included).
pub(super) fn checked(
    p: Planned,
    provider: &Router,
    opts: &Options,
    afresh: impl FnOnce(Planned) -> RecordResult,
) -> (RecordResult, Kept) {
    let memo = provider.documents().record_memo();
    let key = memo.and_then(|_| key(&p, provider, opts));
    let (Some(memo), Some(key)) = (memo, key) else {
        return (afresh(p), Kept::No);
    };
    if let Some(remembered) = recall(memo, &key, &p) {
        return (remembered.into_result(p), Kept::Yes);
    }
    let (from, targets) = (p.findings.len(), p.sources.clone());
    let whole = p.whole.is_some();
    let result = afresh(p);
    if !rememberable(&result, &targets, opts.software_heritage) {
        return (result, Kept::No);
    }
    let Some(value) = encode(&result, from) else {
        return (result, Kept::No);
    };
    // A record kept whole (its report fragment) is answered whole next time:
    // its result is kept here only when that fails (the memos are held in
    // memory; one form is enough).
    if whole {
        return (result, Kept::Whole(Fallback { key, value }));
    }
    memo.put(key, value);
    (result, Kept::Yes)
}

/// Whether a record's result may be remembered, and where it is.
pub(super) enum Kept {
    /// Not: it depends on something no key holds.
    No,
    /// In the record memo (answered from it, or put there).
    Yes,
    /// Not yet: the record is to be kept whole; when it cannot be, the result
    /// goes into the record memo ([`Fallback::put`]).
    Whole(Fallback),
}

impl Kept {
    pub(super) fn may(&self) -> bool {
        !matches!(self, Kept::No)
    }
}

/// A result the record memo keeps when the record is not kept whole.
pub(super) struct Fallback {
    key: [u8; 32],
    value: Vec<u8>,
}

impl Fallback {
    pub(super) fn put(self, provider: &Router) {
        if let Some(memo) = provider.documents().record_memo() {
            memo.put(self.key, self.value);
        }
    }
}

/// What the memo holds for `p`, when it holds something that fits it (an
/// unsound entry is forgotten).
fn recall(memo: &dyn CheckMemo, key: &[u8; 32], p: &Planned) -> Option<Decoded> {
    match memo.peek(key, |raw| decode(raw, p))? {
        Some(d) => Some(d),
        None => {
            memo.forget(key);
            None
        }
    }
}

impl Decoded {
    /// The record's result: what loading found, then what the memo held.
    fn into_result(self, p: Planned) -> RecordResult {
        let Planned {
            record,
            mut findings,
            ..
        } = p;
        findings.extend(self.findings);
        RecordResult {
            record,
            sources: self.sources,
            claims: self.claims,
            findings,
            artifacts: self.artifacts,
            notices: self.notices,
        }
    }
}

/// The key of a record's result, when it may be answered from the memo: a
/// sha256 of everything the result depends on.
///
/// - this encoding's [`VERSION`] and [`derivation`] (the tool's version, the
///   checks' derivation version and the source of the code that makes the
///   result);
/// - the record file as reports name it (findings carry it) and the sha256 of
///   its bytes;
/// - per source, in order: a git document's remote and the digest of that
///   remote's refs and default branch as this run synced them (offline: as
///   stored; `Revisions::refs_digest`, `None` for a remote that failed or that
///   the cache stood in for, which leaves the record without a key); why
///   planning found nothing to fetch;
/// - the options that change a verdict: `--no-upstream` (no drift findings),
///   `--max-document-size` (a larger document is unchecked), `--allow-local`
///   (which sources planning can fetch, and the web limit for completeness),
///   the archives asked (`--archive`: with none asked, a lost document is
///   absent and remembered so; with one asked, it is asked every run);
///   `--manifests` leaves the record without a key (the manifest check shares
///   what it read between records).
///
/// Not in it, as they change no verdict: `--offline` (on the same refs an
/// offline run judges as an online one; what it changes, a commit the cache
/// lacks, is unchecked and never remembered), `--rewrite` (where a remote is
/// fetched from, not what its refs are: the mirror is the remote's), `--jobs`,
/// `--timeout` and the fetch budgets (a sync they cut short leaves its remote
/// failed, so no key), and what is applied after the checks: `--fail-on`,
/// `--min-severity`, `--baseline`, ignores and severity overrides, `--format`,
/// `--output`, `--shard`, `--changed-since`.
fn key(p: &Planned, provider: &Router, opts: &Options) -> Option<[u8; 32]> {
    let input = p.record.input.0?;
    if opts.manifests || p.artifacts.iter().flatten().any(|t| !unfetchable(t)) {
        return None;
    }
    let mut e = Enc::default();
    e.u32(VERSION).str(derivation());
    e.str(&p.record.file.display().to_string());
    e.0.extend_from_slice(&input);
    let revisions = provider.revisions();
    for target in &p.sources {
        match target {
            Target::Git(d) => {
                e.u32(0).str(&d.remote);
                e.0.extend_from_slice(&revisions.refs_digest(&d.remote)?);
            }
            Target::Unfetchable(skip) => {
                e.u32(1).str(&skip_code(skip)?);
            }
            Target::Web(_) | Target::Model(_) => return None,
        }
    }
    e.bool(opts.no_upstream)
        .bool(opts.plan.allow_local)
        .str(&opts.max_document_size.to_string())
        .str(&opts.max_web_document_size.to_string())
        .bool(opts.software_heritage)
        .bool(opts.wayback);
    Some(pinaudit_core::memo::key("record", &[&e.0]))
}

/// A skip reason as the memo keeps it: its variant's name and its fields (JSON,
/// so a reason that gains a variant or a field is still read back by its name;
/// a text that no longer reads as one is a miss, never a wrong reason).
fn skip_code(skip: &Skip) -> Option<String> {
    serde_json::to_string(skip).ok()
}

fn skip_decoded(code: &str) -> Option<Skip> {
    serde_json::from_str(code).ok()
}

fn unfetchable(t: &Target) -> bool {
    matches!(t, Target::Unfetchable(_))
}

/// What the result of a record is made by: the tool's version, the checks'
/// derivation version and every source the binary is built from (`build.rs`'s
/// digest: reading and parsing a record, the checks, the matcher, the code
/// that runs them on a record), so a build that changes any of them never
/// reads back another's results. A list of the files that decide a result
/// stood here before and left out the record parsers and the hash variants: a
/// build that read a record's values otherwise would have answered its
/// unchanged bytes with an older build's verdicts.
pub(super) fn derivation() -> &'static str {
    static VERSION: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
        let checks = crate::check::derivation_version();
        let parts: [&[u8]; 3] = [
            env!("CARGO_PKG_VERSION").as_bytes(),
            checks.as_bytes(),
            env!("PINAUDIT_SOURCE_DIGEST").as_bytes(),
        ];
        pinaudit_core::hash::to_hex(&pinaudit_core::memo::key("derivation", &parts))
    });
    &VERSION
}

/// Whether a record's result holds only what its key decides (see the module
/// docs); `targets` are its sources' targets, `archived` whether an archive is
/// asked for what a forge lost: its answer is the archive's state, not the
/// mirror's ("not archived" is kept a day, then asked again), so a source read
/// from an archive, or lost with an archive to ask, leaves the record to be
/// checked every run.
fn rememberable(result: &RecordResult, targets: &[Target], archived: bool) -> bool {
    let sources_fit = result.sources.iter().zip(targets).all(|(o, t)| {
        o.stale_since.is_none()
            && o.web.is_none()
            && o.archive.is_none()
            && !(archived && matches!(o.state, SourceState::Absent(_)))
            && matches!(
                (t, &o.state),
                (
                    Target::Git(_),
                    SourceState::Checked | SourceState::Absent(_)
                ) | (
                    Target::Unfetchable(_),
                    SourceState::Unchecked(Unchecked::Unresolvable(_))
                )
            )
    });
    sources_fit
        && result.sources.len() == targets.len()
        && !result
            .findings
            .iter()
            .any(|f| f.code == Code::RevisionUnreachable)
}

/// The result as the memo keeps it: each source's outcome, each claim's
/// verdict, the findings from `from` on (those the checks made; loading's are
/// made again each run), the artifacts' outcomes and the notices.
fn encode(result: &RecordResult, from: usize) -> Option<Vec<u8>> {
    let mut e = Enc::default();
    e.u32(result.sources.len() as u32);
    for o in &result.sources {
        match &o.state {
            SourceState::Checked => e.u32(0),
            SourceState::Absent(Absence::Repository) => e.u32(1),
            SourceState::Absent(Absence::Commit) => e.u32(2),
            SourceState::Absent(Absence::Path) => e.u32(3),
            SourceState::Unchecked(Unchecked::Unresolvable(skip)) => {
                e.u32(4).str(&skip_code(skip)?)
            }
            SourceState::Unchecked(_) => return None,
        };
        e.opt_str(o.sha256.as_deref())
            .opt_str(o.git_blob.as_deref())
            .opt_str(o.commit_time.as_deref());
        e.bool(o.upstream.is_some());
        if let Some(u) = &o.upstream {
            e.str(&u.head).bool(u.changed);
        }
    }
    e.u32(result.claims.len() as u32);
    for v in &result.claims {
        e.u32(status_tag(v.status))
            .opt_u32(v.found_line)
            .opt_str(v.line_text.as_deref());
    }
    let findings = result.findings.get(from..)?;
    e.u32(findings.len() as u32);
    for f in findings {
        encode_finding(&mut e, f)?;
    }
    e.u32(result.artifacts.len() as u32);
    for a in &result.artifacts {
        if !a.files.is_empty() {
            return None;
        }
        e.str(&a.label)
            .opt_str(a.repository.as_deref())
            .opt_str(a.commit.as_deref())
            .opt_str(a.unchecked.as_deref());
    }
    e.u32(result.notices.len() as u32);
    for n in &result.notices {
        e.str(n);
    }
    Some(e.0)
}

fn status_tag(s: ClaimStatus) -> u32 {
    match s {
        ClaimStatus::Verified => 0,
        ClaimStatus::Rounded => 1,
        ClaimStatus::Shifted => 2,
        ClaimStatus::Missing => 3,
        ClaimStatus::Unchecked => 4,
    }
}

fn status_of(tag: u32) -> Option<ClaimStatus> {
    Some(match tag {
        0 => ClaimStatus::Verified,
        1 => ClaimStatus::Rounded,
        2 => ClaimStatus::Shifted,
        3 => ClaimStatus::Missing,
        4 => ClaimStatus::Unchecked,
        _ => return None,
    })
}

fn encode_finding(e: &mut Enc, f: &Finding) -> Option<()> {
    let severity = match f.severity {
        Severity::Note => 0,
        Severity::Warning => 1,
        Severity::Error => 2,
    };
    e.str(f.code.as_str()).u32(severity).str(&f.record);
    e.opt_str(f.file.as_deref())
        .opt_str(f.source.as_deref())
        .opt_str(f.claim.as_deref())
        .str(&f.message);
    let l = &f.location;
    e.opt_str(l.repository.as_deref())
        .opt_str(l.revision.as_deref())
        .opt_str(l.path.as_deref())
        .opt_u32(l.line);
    e.map(&f.evidence);
    e.opt_str(f.hint.as_deref())
        .opt_str(f.fingerprint.as_deref())
        .bool(f.baseline)
        .opt_str(f.ignored.as_deref());
    Some(())
}

fn decode_finding(d: &mut Dec<'_>) -> Option<Finding> {
    let code: Code = d.string()?.parse().ok()?;
    let severity = match d.u32()? {
        0 => Severity::Note,
        1 => Severity::Warning,
        2 => Severity::Error,
        _ => return None,
    };
    let record = d.string()?;
    let (file, source, claim) = (d.opt_string()?, d.opt_string()?, d.opt_string()?);
    let message = d.string()?;
    let location = Location {
        repository: d.opt_string()?,
        revision: d.opt_string()?,
        path: d.opt_string()?,
        line: d.opt_u32()?,
    };
    let evidence = d.map()?;
    Some(Finding {
        code,
        severity,
        record,
        file,
        source,
        claim,
        message,
        location,
        evidence,
        hint: d.opt_string()?,
        fingerprint: d.opt_string()?,
        baseline: d.bool()?,
        ignored: d.opt_string()?,
    })
}

/// What [`encode`] kept, read back.
struct Decoded {
    sources: Vec<SourceOutcome>,
    claims: Vec<Verdict>,
    findings: Vec<Finding>,
    artifacts: Vec<ArtifactOutcome>,
    notices: Vec<String>,
}

/// [`encode`]'s bytes read back for `p`; `None` when they do not decode, or do
/// not fit the record (a source, claim or artifact count that is not its own, a
/// finding about another record).
fn decode(raw: &[u8], p: &Planned) -> Option<Decoded> {
    let r = &p.record;
    // No count is trusted beyond what the record and the bytes can hold.
    let count = |d: &mut Dec<'_>, want: usize| d.u32().filter(|&n| n as usize == want);
    let mut d = Dec(raw);
    let n = count(&mut d, r.sources.len())?;
    let mut sources = Vec::with_capacity(n as usize);
    for _ in 0..n {
        sources.push(decode_source(&mut d)?);
    }
    let n = count(&mut d, r.claims.len())?;
    let mut claims = Vec::with_capacity(n as usize);
    for _ in 0..n {
        claims.push(Verdict {
            status: status_of(d.u32()?)?,
            found_line: d.opt_u32()?,
            line_text: d.opt_string()?,
        });
    }
    let n = d.u32()? as usize;
    let mut findings = Vec::with_capacity(n.min(raw.len()));
    for _ in 0..n {
        let f = decode_finding(&mut d)?;
        if f.record != r.id {
            return None;
        }
        findings.push(f);
    }
    let n = count(&mut d, p.artifacts.iter().flatten().count())?;
    let mut artifacts = Vec::with_capacity(n as usize);
    for _ in 0..n {
        artifacts.push(ArtifactOutcome {
            label: d.string()?,
            repository: d.opt_string()?,
            commit: d.opt_string()?,
            files: Vec::new(),
            unchecked: d.opt_string()?,
        });
    }
    let n = d.u32()? as usize;
    let mut notices = Vec::with_capacity(n.min(raw.len()));
    for _ in 0..n {
        notices.push(d.string()?);
    }
    d.done().then_some(Decoded {
        sources,
        claims,
        findings,
        artifacts,
        notices,
    })
}

fn decode_source(d: &mut Dec<'_>) -> Option<SourceOutcome> {
    let state = match d.u32()? {
        0 => SourceState::Checked,
        1 => SourceState::Absent(Absence::Repository),
        2 => SourceState::Absent(Absence::Commit),
        3 => SourceState::Absent(Absence::Path),
        4 => SourceState::Unchecked(Unchecked::Unresolvable(skip_decoded(&d.string()?)?)),
        _ => return None,
    };
    let (sha256, git_blob, commit_time) = (d.opt_string()?, d.opt_string()?, d.opt_string()?);
    let upstream = match d.bool()? {
        true => Some(Upstream {
            head: d.string()?,
            changed: d.bool()?,
        }),
        false => None,
    };
    Some(SourceOutcome {
        state,
        sha256,
        git_blob,
        commit_time,
        upstream,
        stale_since: None,
        web: None,
        archive: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_derivation_is_worked_out_once() {
        assert_eq!(derivation().len(), 64);
        assert_eq!(derivation(), derivation(), "worked out once");
    }

    #[test]
    fn statuses_round_trip() {
        for s in [
            ClaimStatus::Verified,
            ClaimStatus::Rounded,
            ClaimStatus::Shifted,
            ClaimStatus::Missing,
            ClaimStatus::Unchecked,
        ] {
            assert_eq!(status_of(status_tag(s)), Some(s));
        }
        assert_eq!(status_of(5), None);
    }

    /// A skip comes back from the memo as the same variant with the same
    /// fields; words that no longer read as one are a miss, not a reason.
    #[test]
    fn skips_round_trip_by_variant() {
        for skip in [
            Skip::NoRepository,
            Skip::NotPinned {
                name: "main".into(),
            },
            Skip::HostRefused {
                host: "10.0.0.1".into(),
                what: "a private-network address".into(),
            },
            Skip::TooLarge { size: 9, max: 3 },
            Skip::Unindexable("document has `9` lines".into()),
        ] {
            let code = skip_code(&skip).expect("encodes");
            assert_eq!(skip_decoded(&code), Some(skip));
        }
        assert_eq!(
            skip_decoded("not pinned: `main` is not a full commit id"),
            None
        );
        assert_eq!(skip_decoded("{\"NoSuchReason\":null}"), None);
    }
}
