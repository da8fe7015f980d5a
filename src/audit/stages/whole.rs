//! The whole-record report memo: a record file whose bytes have not changed,
//! citing repositories whose refs have not moved, is neither parsed nor
//! checked nor rendered. What the check stage hands on for it (its part of the
//! report and what it adds to the report's totals) is what it was last time,
//! for the cost of a lookup and a decompression.
//!
//! An entry is kept in `CACHE/fragments.store` (authenticated like every
//! store) under a key of everything it depends on but the refs: this
//! encoding's [`VERSION`], a digest of the sources the binary was built from
//! (loading, the checks, the policy and the renderers all shape it), the
//! options that change a verdict (as the record memo takes them, and the
//! archives asked), what the caller's form depends on ([`Keep::depends`]: the
//! format, how it renders, the policy), the record file as reports name it
//! and the BLAKE3 digest of its bytes. The entry holds the record's id and shard key
//! (loading places it by them without parsing it), the git documents its
//! sources cite (they are synced as if it had been parsed), the digest of each
//! cited remote's refs when it was made, and the caller's form (a report
//! fragment's parts are compressed).
//! It answers only when every one of those remotes synced whole this run with
//! the same refs digest ([`crate::provider::Revisions::refs_digest`]); else
//! the record is read and checked as it would be without it.
//!
//! An entry is made only for a record whose result the record memo could keep
//! (see `memo::rememberable`: nothing that depends on the time, the network
//! or an archive) and whose loading found nothing that depends on another
//! file (a duplicate id). A run with a baseline or `--manifests` makes and
//! reads none; stdin (`-`) is never looked up or kept.

use std::path::{Path, PathBuf};

use pinaudit_core::memo::{CheckMemo, Dec, Enc};

use crate::audit::Options;
use crate::provider::{DocRef, Router, Target};
use crate::record::CommitId;

/// Bump when the encoding below, or what goes into the key, changes.
const VERSION: u32 = 3;

/// The sources the binary was built from, digested (see `build.rs`).
const SOURCE_DIGEST: &str = env!("PINAUDIT_SOURCE_DIGEST");

/// Input files smaller than this go into their key whole (SHA-256); larger
/// ones by their BLAKE3 digest. Measured on 1.5 KB pin files, SHA-256 with
/// the CPU's SHA instructions takes 0.8 µs where BLAKE3 takes 2.2 µs; BLAKE3
/// is ahead past about 5 KB (8 GB/s against 1.9 on large files).
const WHOLE_IN_KEY_MAX: usize = 8 << 10;

/// The encoding's version and the build's source digest, as the store's
/// magic line names them.
pub(super) fn version() -> String {
    format!("{VERSION}-{SOURCE_DIGEST}")
}

/// How what the check stage hands on for a record (`U`) is kept whole.
pub(crate) trait Keep<U>: Sync {
    /// What `U` depends on beyond the record's result: the format and how it
    /// renders, the policy applied.
    fn depends(&self) -> Vec<u8>;
    /// `u` as the memo keeps it; `None` when it cannot be kept.
    fn encode(&self, u: &U, e: &mut Enc) -> Option<()>;
    /// What [`Keep::encode`] wrote, read from `d`, a part of `entry` (what
    /// it keeps of the entry it slices from `entry`, no copy); `None` when it
    /// does not read as one.
    fn decode(&self, d: &mut Dec, entry: &bytes::Bytes) -> Option<U>;
}

/// The memo as one run uses it (the store is the provider's:
/// [`crate::provider::Documents::fragment_memo`]).
pub(crate) struct Whole<'a, U> {
    keep: &'a dyn Keep<U>,
    /// The parts of the key that every record of the run shares.
    shared: [u8; 32],
}

/// A record file the memo holds an entry for, not yet read: what places and
/// syncs it (the form it is handed on in is read from the entry once its
/// remotes' refs are found unchanged).
pub(crate) struct Remembered {
    pub(crate) file: PathBuf,
    /// Named on the command line (else found while walking).
    pub(crate) named: bool,
    pub(crate) key: [u8; 32],
    pub(crate) id: String,
    pub(crate) shard_key: String,
    /// How many sources the record has (the progress bar counts them).
    pub(crate) sources: usize,
    /// The git documents its sources cite, in source order.
    pub(crate) targets: Vec<Target>,
    /// Each remote it cites, once, with its refs digest when the entry was made.
    refs: Vec<(String, [u8; 32])>,
    /// Where the handed-on form starts in the entry.
    form_at: usize,
}

/// What an entry is made of, beside the form handed on.
pub(crate) struct Placed<'p> {
    /// The record's file, as given (its entry's slot: see [`Whole::slot`]).
    pub(crate) file: &'p Path,
    pub(crate) id: &'p str,
    pub(crate) shard_key: String,
    pub(crate) sources: usize,
    pub(crate) targets: &'p [Target],
}

impl<'a, U> Whole<'a, U> {
    /// The memo of this run, when it keeps anything: not with `--manifests`
    /// (the manifest check shares what it read between records) or a
    /// baseline (taken in report order, across records).
    pub(crate) fn new(keep: Option<&'a dyn Keep<U>>, opts: &Options) -> Option<Whole<'a, U>> {
        if !Self::applies(opts) {
            return None;
        }
        let keep = keep?;
        let mut e = Enc::default();
        e.u32(VERSION)
            .str(SOURCE_DIGEST)
            .bool(opts.no_upstream)
            .bool(opts.plan.allow_local)
            .u64(opts.max_document_size)
            .u64(opts.max_web_document_size)
            .bool(opts.software_heritage)
            .bool(opts.wayback)
            .bytes(&keep.depends());
        let shared = pinaudit_core::memo::key("whole-shared", &[&e.0]);
        Some(Whole { keep, shared })
    }

    /// A memo of `keep` whose shared key is `shared` (tests of the stages).
    #[cfg(test)]
    pub(crate) fn with_shared(keep: &'a dyn Keep<U>, shared: [u8; 32]) -> Whole<'a, U> {
        Whole { keep, shared }
    }

    /// Whether a run with these options keeps records whole at all.
    pub(crate) fn applies(opts: &Options) -> bool {
        !opts.manifests && opts.policy.baseline.is_none()
    }

    /// The key of the record file `file` (as given; `named` on the command
    /// line, else found while walking) whose bytes are `bytes`.
    pub(crate) fn key(&self, file: &Path, named: bool, bytes: &[u8]) -> [u8; 32] {
        let shown = file.display().to_string();
        let named = [u8::from(named)];
        let digest: [u8; 32];
        let (kind, content): (&[u8], &[u8]) = if bytes.len() < WHOLE_IN_KEY_MAX {
            // A small file (a pin file is a few kilobytes) goes into the
            // key's SHA-256 as it is: with the CPU's SHA instructions that is
            // a third of what a BLAKE3 digest of it costs first, whose SIMD
            // pays only past a few chunks.
            (b"bytes", bytes)
        } else {
            // BLAKE3 for a large one: a re-check hashes every input file,
            // megabytes of them. The kind is part of the key, so the two
            // never meet.
            digest = *blake3::hash(bytes).as_bytes();
            (b"blake3", &digest)
        };
        pinaudit_core::memo::key(
            "whole",
            &[&self.shared, &named, shown.as_bytes(), kind, content],
        )
    }

    /// The slot of the record file `file` (as given): what the entries of
    /// every version of its bytes share. Each entry begins with it, and the
    /// store drops an entry this run did not use once this run used another
    /// of its slot (the file was edited, or read once named and once walked),
    /// so superseded entries are not loaded run after run.
    fn slot(&self, file: &Path) -> [u8; 32] {
        let shown = file.display().to_string();
        pinaudit_core::memo::key("whole-slot", &[&self.shared, shown.as_bytes()])
    }

    /// The entry for `key`, when the memo holds one that reads (one that does
    /// not is forgotten).
    pub(crate) fn recall(
        &self,
        memo: &dyn CheckMemo,
        key: [u8; 32],
        file: &Path,
        named: bool,
    ) -> Option<Remembered> {
        match memo.peek(&key, |raw| decode_entry(raw, key, file, named))? {
            Some(r) => Some(r),
            None => {
                memo.forget(&key);
                None
            }
        }
    }

    /// The form `r` is handed on in, when every remote it cites synced whole
    /// this run with the refs it had; `None`: read and check it afresh.
    pub(crate) fn answer(&self, r: &Remembered, provider: &Router) -> Option<U> {
        let memo = provider.documents().fragment_memo()?;
        let revisions = provider.revisions();
        let unmoved = r
            .refs
            .iter()
            .all(|(remote, digest)| revisions.refs_digest(remote).as_ref() == Some(digest));
        if !unmoved {
            return None;
        }
        // The form is read where the entry is kept, and what it keeps of it
        // stays there (its header was read when the file was looked up).
        let entry = memo
            .shared(&r.key)
            .or_else(|| memo.peek(&r.key, bytes::Bytes::copy_from_slice))?;
        let decoded = entry.get(r.form_at..).and_then(|form| {
            let mut d = Dec(form);
            let u = self.keep.decode(&mut d, &entry)?;
            d.0.is_empty().then_some(u)
        });
        if decoded.is_none() {
            memo.forget(&r.key);
        }
        decoded
    }

    /// Keeps `u`, the form a record placed as `placed` is handed on in, under
    /// `key`, when every remote it cites synced whole this run; `None` when
    /// it is not kept (a remote not synced whole, a form that cannot be kept,
    /// the memo full).
    pub(crate) fn keep(
        &self,
        provider: &Router,
        key: [u8; 32],
        placed: Placed,
        u: &U,
    ) -> Option<()> {
        let memo = provider.documents().fragment_memo()?;
        let revisions = provider.revisions();
        // What is fetched for it: its git documents (a record whose result
        // may be kept cites nothing else that is fetched).
        let documents: Vec<&DocRef> = placed
            .targets
            .iter()
            .filter_map(|t| match t {
                Target::Git(d) => Some(d),
                _ => None,
            })
            .collect();
        let mut refs: Vec<(&str, [u8; 32])> = Vec::new();
        for d in &documents {
            if !refs.iter().any(|(r, _)| *r == d.remote) {
                refs.push((&d.remote, revisions.refs_digest(&d.remote)?));
            }
        }
        let mut form = Enc::default();
        self.keep.encode(u, &mut form)?;
        let mut e = Enc::default();
        e.0.extend_from_slice(&self.slot(placed.file));
        e.str(placed.id)
            .str(&placed.shard_key)
            .u32(u32::try_from(placed.sources).ok()?);
        e.u32(documents.len() as u32);
        for d in &documents {
            e.str(&d.remote).str(d.commit.as_str()).str(&d.path);
        }
        e.u32(refs.len() as u32);
        for (remote, digest) in &refs {
            e.str(remote);
            e.0.extend_from_slice(digest);
        }
        e.0.extend_from_slice(&form.0);
        memo.put(key, e.0).then_some(())
    }
}

fn decode_entry(raw: &[u8], key: [u8; 32], file: &Path, named: bool) -> Option<Remembered> {
    let mut d = Dec(raw);
    d.take(32)?; // its slot
    let id = d.string()?;
    let shard_key = d.string()?;
    let sources = d.u32()? as usize;
    let n = d.u32()? as usize;
    // No count is trusted beyond what the bytes can hold.
    if n > d.0.len() / 12 {
        return None;
    }
    let mut targets = Vec::with_capacity(n);
    for _ in 0..n {
        let remote = d.string()?;
        let commit = CommitId::parse(d.str()?)?;
        let path = d.string()?;
        targets.push(Target::Git(DocRef {
            remote,
            commit,
            path,
        }));
    }
    let n = d.u32()? as usize;
    if n > d.0.len() / 36 {
        return None;
    }
    let mut refs = Vec::with_capacity(n);
    for _ in 0..n {
        let remote = d.string()?;
        let digest: [u8; 32] = d.take(32)?.try_into().ok()?;
        refs.push((remote, digest));
    }
    if targets.len() > sources {
        return None;
    }
    Some(Remembered {
        file: file.to_path_buf(),
        named,
        key,
        id,
        shard_key,
        sources,
        targets,
        refs,
        form_at: raw.len() - d.0.len(),
    })
}

/// The first git remote that `targets` name (the key a record's checks are
/// grouped by).
pub(crate) fn first_remote(targets: &[Target]) -> Option<&str> {
    targets.iter().find_map(|t| match t {
        Target::Git(d) => Some(d.remote.as_str()),
        _ => None,
    })
}
