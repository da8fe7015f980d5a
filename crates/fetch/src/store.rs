//! Authenticated files in the cache: written once per run, atomically, and
//! checked when read.
//!
//! A store file is a magic line naming its kind and version, a body, and a
//! MAC of both under the cache key (keyed BLAKE3, [`crate::cache_key`], kept
//! outside the cache; each store is handed its cache's key when it is made). [`load`] returns the body of a sound file only: a file that is
//! missing, truncated, torn, tampered with, written under another key (a cache
//! restored from elsewhere) or of another version reads as absent, so the caller
//! re-derives what it held and never trusts it in part. A checksum alone would
//! not do: whoever forges an entry recomputes it. The MAC costs one pass over
//! the file, nothing per entry.
//!
//! [`save`] writes a new temporary file of a random name in the same directory
//! and renames it into place, so a concurrent reader sees one whole file or
//! another, and a link planted under any name is never written through; [`load`]
//! reads no link and nothing but a regular file. There is no fsync: a file torn
//! by a crash fails the check and is rebuilt, which is all a memo needs.

use std::fs;
use std::io::{Read, Write};
use std::path::Path;

use crate::cache_key::CacheKey;

/// The body of the store at `path` when it is sound, of kind `magic`, and
/// authenticated under `key`.
pub(crate) fn load(key: &CacheKey, path: &Path, magic: &[u8]) -> Option<Vec<u8>> {
    let (mut bytes, body) = sound(key, path, magic)?;
    bytes.truncate(body.end);
    bytes.drain(..body.start);
    Some(bytes)
}

/// The bytes of the store at `path` and where its body lies in them, when
/// the store is sound, of kind `magic`, and authenticated under `key`.
fn sound(key: &CacheKey, path: &Path, magic: &[u8]) -> Option<(Vec<u8>, std::ops::Range<usize>)> {
    let bytes = read_regular(path)?;
    let body_len = bytes.len().checked_sub(32)?;
    if !key.verify(&[&bytes[..body_len]], &bytes[body_len..]) {
        return None;
    }
    if !bytes[..body_len].starts_with(magic) {
        return None;
    }
    Some((bytes, magic.len()..body_len))
}

/// The bytes of the regular file at `path`, read without following a link (a
/// link or a device planted in the cache reads as absent, never as whatever
/// it names).
pub fn read_regular(path: &Path) -> Option<Vec<u8>> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .ok()?;
    let meta = file.metadata().ok()?;
    if !meta.is_file() {
        return None;
    }
    read_ahead(&file, meta.len());
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    populate(&mut bytes);
    file.read_to_end(&mut bytes).ok()?;
    Some(bytes)
}

/// Asks the kernel to read all of `file` (`len` bytes) from the disk at
/// once, when it is a megabyte or more: a store the page cache has let go (a
/// scheduled re-check, hours after the last) is otherwise read in the
/// kernel's read-ahead steps, each waited for. Cached pages are left as they
/// are; nothing is read that is not asked for after.
fn read_ahead(file: &fs::File, len: u64) {
    #[cfg(target_os = "linux")]
    if len >= 1 << 20 {
        use std::os::fd::AsRawFd;
        // SAFETY: a hint on a descriptor this function borrows; it reads and
        // writes no memory of ours.
        unsafe {
            libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_WILLNEED);
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (file, len);
}

/// Has the kernel fill the pages of `v`'s spare room at once, when there
/// are a megabyte of them or more: reading a store of ten megabytes into
/// fresh memory otherwise faults each of its 2,500 pages in on its own
/// (about a millisecond more). Nothing is written; a kernel without
/// `MADV_POPULATE_WRITE` (before Linux 5.14) leaves it as it was.
fn populate(v: &mut Vec<u8>) {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: `sysconf` reads a constant of the system.
        let page = match unsafe { libc::sysconf(libc::_SC_PAGESIZE) } {
            n if n > 0 => n as usize,
            _ => return,
        };
        let spare = v.spare_capacity_mut();
        if spare.len() < 1 << 20 {
            return;
        }
        let (at, len) = (spare.as_mut_ptr() as usize, spare.len());
        let start = at.next_multiple_of(page);
        let end = (at + len) / page * page;
        if end <= start {
            return;
        }
        // SAFETY: the range lies within `v`'s own allocation, which nothing
        // else refers to; populating pages changes none of their bytes.
        unsafe {
            libc::madvise(
                start as *mut libc::c_void,
                end - start,
                libc::MADV_POPULATE_WRITE,
            );
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = v;
}

/// Writes `body` as a store of kind `magic` at `path`, atomically, with its MAC
/// under `key`.
pub(crate) fn save(key: &CacheKey, path: &Path, magic: &[u8], body: &[u8]) -> std::io::Result<()> {
    let tag = key.mac(&[magic, body]);
    write_atomically(path, &[magic, body, &tag])
}

/// [`save`] of a store whose magic line and body are the concatenation of
/// `parts` (the magic line first).
fn save_parts(key: &CacheKey, path: &Path, parts: &[&[u8]]) -> std::io::Result<()> {
    let tag = key.mac(parts);
    let mut all = parts.to_vec();
    all.push(&tag);
    write_atomically(path, &all)
}

/// Writes the concatenation of `parts` to `path` through a new temporary file
/// of a random name beside it (created exclusively, so never through a planted
/// link), renamed into place; the temporary file is removed on failure.
pub fn write_atomically(path: &Path, parts: &[&[u8]]) -> std::io::Result<()> {
    let Some(dir) = path.parent() else {
        return Ok(());
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    fs::create_dir_all(dir)?;
    // Readable by others as the files were before (0644 before the umask):
    // nothing here is secret, the key that authenticates it lives elsewhere.
    let mut tmp = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".tmp")
        .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o644))
        .tempfile_in(dir)?;
    {
        let mut w = std::io::BufWriter::new(tmp.as_file_mut());
        for p in parts {
            w.write_all(p)?;
        }
        w.flush()?;
    }
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Line fates from one document version to another, by (pinned blob, head blob):
/// the drift diff is computed once for good (`CACHE/drift.store`).
///
/// Each entry keeps both documents' line counts; an entry whose counts disagree
/// with the documents just read is ignored and the diff recomputed. Fates are
/// opaque `u32` codes (see `check::upstream::Fate`).
#[derive(Debug, Clone)]
pub(crate) struct DriftMemo {
    path: std::path::PathBuf,
    key: CacheKey,
    /// Its magic line, naming the checks' derivation version.
    magic: Vec<u8>,
    inner: std::sync::Arc<std::sync::Mutex<DriftEntries>>,
}

type DriftKey = ([u8; 20], [u8; 20]);

/// A map keyed by sha256 digests. The keys are already uniformly spread (and
/// no input can be made to collide in them), so their first eight bytes are the
/// hash: SipHash over every key was a twentieth of a large re-check.
type DigestMap<V> =
    std::collections::HashMap<[u8; 32], V, std::hash::BuildHasherDefault<DigestHasher>>;

/// The [`std::hash::Hasher`] of [`DigestMap`]: folds the key's bytes, eight
/// at a time, into the state (a digest's first eight bytes decide it).
#[derive(Default)]
struct DigestHasher(u64);

impl std::hash::Hasher for DigestHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.0 = self.0.rotate_left(5) ^ u64::from_le_bytes(word);
        }
    }

    fn write_usize(&mut self, _len: usize) {
        // The length prefix of a `[u8; 32]` is always 32: it tells keys nothing.
    }
}

#[derive(Debug, Default)]
struct DriftEntries {
    map: std::collections::HashMap<DriftKey, (u32, Vec<u32>)>,
    added: usize,
    /// Whether the file was read: only on first use, as a re-check whose
    /// answers are all remembered (`checks.store`) needs no fates.
    loaded: bool,
}

/// Bump when the encoding of `drift.store` changes. What the fates are derived
/// by (`check::upstream`, `check::myers`) is in the magic line too, as the
/// checks' derivation version: fates of another algorithm are never read back.
const DRIFT_VERSION: u32 = 1;
const DRIFT_FILE: &str = "drift.store";
/// Documents longer than this are diffed each run rather than remembered: the
/// memo must not grow with document size.
const DRIFT_MAX_LINES: usize = 100_000;

fn oid_key(hex: &str) -> Option<[u8; 20]> {
    let oid = git2::Oid::from_str(hex).ok()?;
    oid.as_bytes().try_into().ok()
}

impl DriftMemo {
    /// The memo under `cache_root`, read on first use, for fates derived at
    /// `version` (see [`pinaudit_core::check::derivation_version`]); a damaged
    /// memo, or one of another version, reads as empty.
    pub(crate) fn new(cache_root: &Path, version: &str, key: CacheKey) -> DriftMemo {
        DriftMemo {
            path: cache_root.join(DRIFT_FILE),
            key,
            magic: format!("pinaudit-drift-store v{DRIFT_VERSION} checks {version}\n").into_bytes(),
            inner: std::sync::Arc::default(),
        }
    }

    fn entries(&self) -> std::sync::MutexGuard<'_, DriftEntries> {
        let mut entries = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        if !entries.loaded {
            entries.loaded = true;
            let theirs = load(&self.key, &self.path, &self.magic)
                .and_then(|b| decode_drift(&b))
                .unwrap_or_default();
            for (k, v) in theirs {
                entries.map.entry(k).or_insert(v);
            }
        }
        entries
    }

    /// Writes the memo once, atomically, when this run added entries; entries
    /// another run persisted meanwhile are kept.
    pub(crate) fn persist(&self) -> std::io::Result<()> {
        // Not `entries()`: a memo never used is not read just to be left alone.
        let mut entries = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        if entries.added == 0 {
            return Ok(());
        }
        if let Some(theirs) =
            load(&self.key, &self.path, &self.magic).and_then(|b| decode_drift(&b))
        {
            for (k, v) in theirs {
                entries.map.entry(k).or_insert(v);
            }
        }
        let mut keys: Vec<&DriftKey> = entries.map.keys().collect();
        keys.sort_unstable();
        let mut body = Vec::new();
        for k in keys {
            let (n, fates) = &entries.map[k];
            body.extend_from_slice(&k.0);
            body.extend_from_slice(&k.1);
            body.extend_from_slice(&n.to_le_bytes());
            body.extend_from_slice(&(fates.len() as u32).to_le_bytes());
            for f in fates {
                body.extend_from_slice(&f.to_le_bytes());
            }
        }
        save(&self.key, &self.path, &self.magic, &body)?;
        entries.added = 0;
        Ok(())
    }
}

fn decode_drift(mut b: &[u8]) -> Option<std::collections::HashMap<DriftKey, (u32, Vec<u32>)>> {
    fn take<'a>(b: &mut &'a [u8], n: usize) -> Option<&'a [u8]> {
        if b.len() < n {
            return None;
        }
        let (head, rest) = b.split_at(n);
        *b = rest;
        Some(head)
    }
    let u32_of = |s: &[u8]| s.try_into().ok().map(u32::from_le_bytes);
    let mut map = std::collections::HashMap::new();
    while !b.is_empty() {
        let pinned: [u8; 20] = take(&mut b, 20)?.try_into().ok()?;
        let head: [u8; 20] = take(&mut b, 20)?.try_into().ok()?;
        let n = u32_of(take(&mut b, 4)?)?;
        let len = u32_of(take(&mut b, 4)?)? as usize;
        let raw = take(&mut b, len.checked_mul(4)?)?;
        let fates = raw.chunks_exact(4).filter_map(u32_of).collect();
        map.insert((pinned, head), (n, fates));
    }
    Some(map)
}

/// What the checks derived from documents, by a key that names everything the
/// answer depends on (`CACHE/checks.store`): a claim's verdict by (blob id, cited
/// lines, value, unit, score) and a source's drift facts by (pinned blob, head
/// blob, cited lines, found lines), so that a re-check of unchanged inputs reads
/// no document. Keys are sha256 digests of the inputs (see
/// [`CheckMemo::key`]); values are opaque bytes that the check that wrote them
/// decodes, and refuses (recomputing) when they do not make sense for the key.
///
/// The file's magic line carries [`CHECKS_VERSION`] and a digest of the source of
/// the matcher and of the checks that derive answers, so remembered answers of
/// another matcher are never read back.
#[derive(Debug, Clone)]
pub(crate) struct CheckMemo {
    path: std::path::PathBuf,
    key: CacheKey,
    magic: Vec<u8>,
    /// The largest answer kept.
    max_value: usize,
    /// The most bytes of answers kept in all (`usize::MAX`: no bound): what is
    /// held in memory and written back, whatever the number of records.
    max_total: usize,
    /// Every answer begins with its slot (32 bytes), what answers that
    /// supersede one another share: an answer this run did not use is not
    /// written back once this run used another of its slot.
    slotted: bool,
    /// Whether its file held more than its magic line and MAC when opened
    /// (one `stat`; the file itself is read later, maybe on a thread of its own).
    held_any: bool,
    /// Read far more than written (a re-check only reads): the workers checking
    /// records read it at once. Loaded when first asked (the record memo: on
    /// a thread of its own from the start), so a run that never asks never
    /// reads the file, and one that does reads it while the inputs load.
    inner: std::sync::Arc<Deferred<std::sync::RwLock<CheckEntries>>>,
}

/// A value made once, when first asked for: lazily, or on a thread of its own
/// started at once ([`Deferred::background`]) and waited for when asked.
pub(crate) struct Deferred<T> {
    value: std::sync::OnceLock<T>,
    make: std::sync::Mutex<Option<Maker<T>>>,
    /// Of one made on a thread of its own: set once that thread is done.
    aside: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
}

type Maker<T> = Box<dyn FnOnce() -> T + Send>;

impl<T: Default + Send + 'static> Deferred<T> {
    /// Made by `make` when first asked for.
    pub(crate) fn lazy(make: impl FnOnce() -> T + Send + 'static) -> Deferred<T> {
        Deferred {
            value: std::sync::OnceLock::new(),
            make: std::sync::Mutex::new(Some(Box::new(make))),
            aside: None,
        }
    }

    /// Made by `make` on a thread started now (here, when no thread can be
    /// started); asking waits for it. A `make` that panics leaves the default.
    pub(crate) fn background(make: impl FnOnce() -> T + Send + 'static) -> Deferred<T> {
        use std::sync::atomic::{AtomicBool, Ordering};
        let slot = std::sync::Arc::new(std::sync::Mutex::new(Some(Box::new(make) as Maker<T>)));
        let theirs = std::sync::Arc::clone(&slot);
        let done = std::sync::Arc::new(AtomicBool::new(false));
        let said = std::sync::Arc::clone(&done);
        let spawned = std::thread::Builder::new()
            .name("pinaudit-store".into())
            .spawn(move || {
                // Said done even when `make` panics (joining then gives the default).
                struct Done(std::sync::Arc<AtomicBool>);
                impl Drop for Done {
                    fn drop(&mut self) {
                        self.0.store(true, Ordering::Release);
                    }
                }
                let _done = Done(said);
                let make = theirs.lock().unwrap_or_else(|e| e.into_inner()).take();
                make.map(|m| m())
            });
        match spawned {
            // The thread takes `make` first thing: joined, it has made the
            // value (or panicked).
            Ok(handle) => Deferred {
                aside: Some(done),
                ..Deferred::lazy(move || handle.join().ok().flatten().unwrap_or_default())
            },
            Err(_) => {
                let make = slot.lock().unwrap_or_else(|e| e.into_inner()).take();
                Deferred::lazy(move || make.map(|m| m()).unwrap_or_default())
            }
        }
    }

    /// The value, made now if it is not yet.
    pub(crate) fn get(&self) -> &T {
        self.value.get_or_init(|| {
            let make = self.make.lock().unwrap_or_else(|e| e.into_inner()).take();
            // `None` only after a `make` that panicked: the default then.
            make.map(|m| m()).unwrap_or_default()
        })
    }

    /// The value when it was made (nothing is made to answer).
    pub(crate) fn made(&self) -> Option<&T> {
        self.value.get()
    }

    /// Whether asking now would not wait for another thread: the value is
    /// made, or is made when asked (lazily, here), or its thread is done.
    pub(crate) fn ready(&self) -> bool {
        self.value.get().is_some()
            || self
                .aside
                .as_ref()
                .is_none_or(|d| d.load(std::sync::atomic::Ordering::Acquire))
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for Deferred<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.value.get() {
            Some(v) => v.fmt(f),
            None => f.write_str("(not loaded)"),
        }
    }
}

#[derive(Debug, Default)]
struct CheckEntries {
    /// Entries read from the file are slices of its one buffer.
    map: DigestMap<bytes::Bytes>,
    added: usize,
    /// Bytes of the answers in `map`.
    total: usize,
    /// Answers not kept because the total was reached: then the memo is
    /// written back with only what this run used, making room for them.
    refused: usize,
    /// The answers this run read or wrote: with a bound on the total, the ones
    /// kept first when the memo is written back.
    used: std::sync::Mutex<DigestMap<()>>,
    /// The answers this run found unsound and did not replace.
    forgotten: DigestMap<()>,
}

/// Bump when the encoding of a remembered answer, or what a check derives from
/// a document, changes.
pub(crate) const CHECKS_VERSION: u32 = 1;
const CHECKS_FILE: &str = "checks.store";
/// A remembered answer larger than this is not kept (excerpts are short).
const CHECK_VALUE_MAX: usize = 64 << 10;
/// Bump when the encoding of a remembered record result changes.
const RECORDS_VERSION: u32 = 1;
const RECORDS_FILE: &str = "records.store";
/// A record's result larger than this is checked each run rather than kept
/// (records of many thousand figures): the memo must stay small beside the
/// report.
const RECORD_VALUE_MAX: usize = 4 << 20;
/// The most bytes of record results kept: the memo is held in memory while the
/// audit runs, so it is bounded whatever the number of records (about 10,000
/// records of ten figures fit). Beyond it a record is checked as without the
/// memo; when the memo is written back, the results this run used are kept
/// first, so what an edited record left behind goes before what is in use.
const RECORDS_TOTAL_MAX: usize = 64 << 20;
/// Bump when the encoding of a remembered record fragment changes.
const FRAGMENTS_VERSION: u32 = 1;
const FRAGMENTS_FILE: &str = "fragments.store";

/// Removes the whole-record memo's store from the cache at `cache_root`
/// (nothing there is no error): all it holds is derived, so the next run
/// checks every record afresh and keeps them anew.
pub fn discard_fragments(cache_root: &Path) -> std::io::Result<()> {
    match fs::remove_file(cache_root.join(FRAGMENTS_FILE)) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        done => done,
    }
}
/// The most bytes of report fragments kept (compressed; about 20,000 records
/// of ten figures in a JSON report fit): held in memory while the audit runs,
/// like the record results.
const FRAGMENTS_TOTAL_MAX: usize = 128 << 20;

impl CheckMemo {
    /// The memo under `cache_root`, loaded when first asked, for answers of the checks at
    /// `version` (see [`pinaudit_core::check::derivation_version`]); a damaged memo, or
    /// one of another version, loads as empty.
    pub(crate) fn new(cache_root: &Path, version: &str, key: CacheKey) -> CheckMemo {
        let magic =
            format!("pinaudit-check-store v{CHECKS_VERSION} checks {version}\n").into_bytes();
        CheckMemo::open(
            cache_root.join(CHECKS_FILE),
            key,
            magic,
            CHECK_VALUE_MAX,
            usize::MAX,
            false,
        )
    }

    /// The whole-record memo under `cache_root` (`CACHE/records.store`): per
    /// record, its finished result, by a key of everything the result depends
    /// on (the binary's `audit::stages::memo` makes the keys and the encoding), for
    /// results of the checks at `version` made as `records_version` says; a
    /// damaged memo, or one of another version of either, loads as empty (so a
    /// new build does not carry the last one's results along until the bound
    /// evicts them). It is [`CheckMemo`]'s file format under its own
    /// name and magic line, with room for larger answers; read on a thread
    /// of its own from the start when `background`, else when first asked.
    pub(crate) fn records(
        cache_root: &Path,
        version: &str,
        records_version: &str,
        key: CacheKey,
        background: bool,
    ) -> CheckMemo {
        let magic = format!(
            "pinaudit-record-store v{RECORDS_VERSION} checks {version} records {records_version}\n"
        )
        .into_bytes();
        CheckMemo::open(
            cache_root.join(RECORDS_FILE),
            key,
            magic,
            RECORD_VALUE_MAX,
            RECORDS_TOTAL_MAX,
            background,
        )
    }

    /// The whole-record report memo under `cache_root` (`CACHE/fragments.store`):
    /// per record file, its rendered part of a report and what it adds to the
    /// report's totals, by a key of the file's bytes, the options, the format
    /// and the policy (the binary's `audit::stages::whole` makes the keys and
    /// the encoding), valid while the refs of the remotes it cites stay as
    /// they were. Of another version of the checks or of the fragments (the
    /// binary's encoding and the digest of its sources), it loads as empty,
    /// so a new build does not carry the last one's entries along.
    /// [`CheckMemo`]'s file format under its own name and magic line, read on
    /// a thread of its own from the start when `background` (the inputs are
    /// looked up in it as they are read), else when first asked.
    pub(crate) fn fragments(
        cache_root: &Path,
        version: &str,
        fragments_version: &str,
        key: CacheKey,
        background: bool,
    ) -> CheckMemo {
        let magic = format!(
            "pinaudit-fragment-store v{FRAGMENTS_VERSION} checks {version} fragments {fragments_version}\n"
        )
        .into_bytes();
        CheckMemo::open(
            cache_root.join(FRAGMENTS_FILE),
            key,
            magic,
            RECORD_VALUE_MAX,
            FRAGMENTS_TOTAL_MAX,
            background,
        )
        .slotted()
    }

    fn open(
        path: std::path::PathBuf,
        key: CacheKey,
        magic: Vec<u8>,
        max_value: usize,
        max_total: usize,
        background: bool,
    ) -> CheckMemo {
        let (k, p, m) = (key.clone(), path.clone(), magic.clone());
        let make = move || {
            let map = load_shared(&k, &p, &m)
                .and_then(|b| decode_checks(b, max_value))
                .unwrap_or_default();
            let total = map.values().map(bytes::Bytes::len).sum();
            std::sync::RwLock::new(CheckEntries {
                map,
                added: 0,
                total,
                refused: 0,
                used: Default::default(),
                forgotten: Default::default(),
            })
        };
        let inner = match background {
            true => Deferred::background(make),
            false => Deferred::lazy(make),
        };
        let held_any = fs::symlink_metadata(&path)
            .is_ok_and(|m| m.is_file() && m.len() > (magic.len() + 32) as u64);
        CheckMemo {
            path,
            key,
            magic,
            max_value,
            max_total,
            slotted: false,
            held_any,
            inner: std::sync::Arc::new(inner),
        }
    }

    /// This memo with every answer beginning with its slot (see
    /// [`CheckMemo::slotted`](struct@CheckMemo)); bounded memos only, as
    /// only they note what a run used.
    fn slotted(self) -> CheckMemo {
        CheckMemo {
            slotted: self.max_total != usize::MAX,
            ..self
        }
    }

    /// Notes that this run used the answer for `key` (only when the total is
    /// bounded: it decides what is kept).
    fn used(&self, entries: &CheckEntries, key: &[u8; 32]) {
        if self.max_total != usize::MAX {
            let mut used = entries.used.lock().unwrap_or_else(|e| e.into_inner());
            used.insert(*key, ());
        }
    }

    /// The key of an answer (see [`pinaudit_core::memo::key`]).
    pub(crate) fn key(domain: &str, parts: &[&[u8]]) -> [u8; 32] {
        pinaudit_core::memo::key(domain, parts)
    }

    fn entries(&self) -> std::sync::RwLockWriteGuard<'_, CheckEntries> {
        self.inner.get().write().unwrap_or_else(|e| e.into_inner())
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, CheckEntries> {
        self.inner.get().read().unwrap_or_else(|e| e.into_inner())
    }

    /// The remembered answer for `key`.
    pub(crate) fn get(&self, key: &[u8; 32]) -> Option<Vec<u8>> {
        self.read().map.get(key).map(|v| v.to_vec())
    }

    /// `f` of the remembered answer for `key`, read in place (no copy).
    pub(crate) fn peek<R>(&self, key: &[u8; 32], f: impl FnOnce(&[u8]) -> R) -> Option<R> {
        let entries = self.read();
        let v = entries.map.get(key)?;
        self.used(&entries, key);
        Some(f(v))
    }

    /// Remembers an answer (kept in memory until [`persist`](Self::persist));
    /// whether it is kept (not when too large, or past the bound).
    pub(crate) fn put(&self, key: [u8; 32], value: Vec<u8>) -> bool {
        if value.len() > self.max_value {
            return false;
        }
        // A re-check puts back what it read: that needs no write lock.
        {
            let entries = self.read();
            if entries.map.get(&key).is_some_and(|v| v[..] == value[..]) {
                self.used(&entries, &key);
                return true;
            }
        }
        let mut entries = self.entries();
        let old = entries.map.get(&key).map_or(0, bytes::Bytes::len);
        if entries.total - old + value.len() > self.max_total {
            // Full: checked as without the memo (this time).
            entries.refused += 1;
            return false;
        }
        if entries.map.get(&key).is_none_or(|v| v[..] != value[..]) {
            entries.total = entries.total - old + value.len();
            self.used(&entries, &key);
            entries.map.insert(key, value.into());
            entries.added += 1;
        }
        entries.forgotten.remove(&key);
        true
    }

    /// Makes room at once for `answers` answers when the memo held none
    /// when opened (a first audit, where every answer is new) and keeps
    /// all it is given (no bound on the total). Grown step by step instead,
    /// its table would double a last time near the end, holding the old
    /// and the new table together: 51 MB at 200,000 citations, at the
    /// first audit's peak (after the kept report fragments, its largest
    /// holder).
    pub(crate) fn expect_answers(&self, answers: usize) {
        if self.held_any || self.max_total != usize::MAX {
            return;
        }
        let mut entries = self.entries();
        let more = answers.saturating_sub(entries.map.len());
        // A hint: without the room, the table grows as before.
        let _ = entries.map.try_reserve(more);
    }

    /// Forgets an answer found unsound (the run recomputes and remembers it;
    /// it is not taken back from the file when the memo is written).
    pub(crate) fn forget(&self, key: &[u8; 32]) {
        let mut entries = self.entries();
        if let Some(v) = entries.map.remove(key) {
            entries.total -= v.len();
            entries.added += 1;
        }
        entries.forgotten.insert(*key, ());
    }

    /// Writes the memo once, atomically, when this run changed it; entries
    /// another run persisted meanwhile are kept.
    pub(crate) fn persist(&self) -> std::io::Result<()> {
        // A memo never asked is not read just to be left alone.
        if self.inner.made().is_none() {
            return Ok(());
        }
        let mut entries = self.entries();
        if entries.added == 0 && entries.refused == 0 {
            return Ok(());
        }
        if let Some(theirs) = load_shared(&self.key, &self.path, &self.magic)
            .and_then(|b| decode_checks(b, self.max_value))
        {
            let entries = &mut *entries;
            for (k, v) in theirs {
                if !entries.forgotten.contains_key(&k) {
                    entries.map.entry(k).or_insert(v);
                }
            }
        }
        if self.slotted {
            let entries = &mut *entries;
            let used = entries.used.lock().unwrap_or_else(|e| e.into_inner());
            let slot = |v: &bytes::Bytes| v.get(..32).map(<[u8]>::to_vec);
            let slots: std::collections::HashSet<Vec<u8>> = (used.keys())
                .filter_map(|k| entries.map.get(k).and_then(slot))
                .collect();
            entries
                .map
                .retain(|k, v| used.contains_key(k) || slot(v).is_none_or(|s| !slots.contains(&s)));
            entries.total = entries.map.values().map(bytes::Bytes::len).sum();
        }
        let mut keys: Vec<&[u8; 32]> = entries.map.keys().collect();
        if self.max_total != usize::MAX {
            // Within the bound: what this run used first, then the rest, in
            // key order each.
            let used = entries.used.lock().unwrap_or_else(|e| e.into_inner());
            if entries.refused > 0 {
                keys.retain(|k| used.contains_key(*k));
            }
            keys.sort_unstable_by_key(|k| (!used.contains_key(*k), **k));
            let mut total = 0;
            keys.retain(|k| {
                total += entries.map[*k].len();
                total <= self.max_total
            });
        }
        keys.sort_unstable();
        // Written and authenticated piece by piece from the map: a body put
        // together first would hold the memo twice over.
        let lengths: Vec<[u8; 4]> = keys
            .iter()
            .map(|k| (entries.map[*k].len() as u32).to_le_bytes())
            .collect();
        let mut parts: Vec<&[u8]> = Vec::with_capacity(1 + 3 * keys.len());
        parts.push(&self.magic);
        for (k, len) in keys.iter().zip(&lengths) {
            parts.extend([&k[..], &len[..], &entries.map[*k][..]]);
        }
        save_parts(&self.key, &self.path, &parts)?;
        entries.added = 0;
        entries.refused = 0;
        Ok(())
    }
}

/// The entries of a check store's body, each a slice of it.
fn decode_checks(body: bytes::Bytes, max_value: usize) -> Option<DigestMap<bytes::Bytes>> {
    let mut map = DigestMap::default();
    let mut at = 0;
    while at < body.len() {
        let b = &body[at..];
        let k: [u8; 32] = b.get(..32)?.try_into().ok()?;
        let len = u32::from_le_bytes(b.get(32..36)?.try_into().ok()?) as usize;
        if len > max_value || b.len() < 36 + len {
            return None;
        }
        map.insert(k, body.slice(at + 36..at + 36 + len));
        at += 36 + len;
    }
    Some(map)
}

/// [`load`] of a store read into one shared buffer, sliced past its magic
/// line (nothing is moved).
fn load_shared(key: &CacheKey, path: &Path, magic: &[u8]) -> Option<bytes::Bytes> {
    let (bytes, body) = sound(key, path, magic)?;
    Some(bytes::Bytes::from(bytes).slice(body))
}

/// Which mirrors were last found whole, and in what state (`CACHE/verified.store`):
/// per mirror (its path under the cache root) a digest of the stat data of the
/// files its objects and refs live in (see `fetch::verified`), and the documents
/// (commit, path) that were read back whole in that state. A mirror whose files
/// still have that digest need not be read back again for those documents.
///
/// Stat data is git's own trust model for its index: a deliberate tamper that
/// restores sizes and timestamps (ctime included) is not seen. A damaged store
/// loads as empty, so every mirror is verified again.
#[derive(Debug)]
pub(crate) struct VerifiedMemo {
    path: std::path::PathBuf,
    key: CacheKey,
    inner: std::sync::Mutex<VerifiedEntries>,
}

/// A document read back whole: a commit, and the path read there (`None`: the
/// commit and its tree only).
pub(crate) type VerifiedDoc = ([u8; 20], Option<String>);

#[derive(Debug, Default)]
struct VerifiedEntries {
    map: std::collections::HashMap<String, ([u8; 32], std::collections::HashSet<VerifiedDoc>)>,
    /// Mirrors whose entry this run changed (only those replace what another
    /// run stored meanwhile).
    changed: std::collections::HashSet<String>,
    loaded: bool,
}

/// The magic line of `verified.store`: it names the damage check that found
/// the mirrors whole (`git.rs`'s `damage` and the stamp of `verified.rs`), so a
/// build whose check sees more reads every mirror back once, and a mirror
/// another build's check passed is never taken as whole by this one.
fn verified_magic() -> &'static [u8] {
    static MAGIC: std::sync::LazyLock<Vec<u8>> = std::sync::LazyLock::new(|| {
        let version = pinaudit_core::hash::sources_digest(&[
            include_str!("git.rs"),
            include_str!("verified.rs"),
        ]);
        format!("pinaudit-verified-store v1 damage {version}\n").into_bytes()
    });
    &MAGIC
}
const VERIFIED_FILE: &str = "verified.store";

impl VerifiedMemo {
    /// The memo under `cache_root`, read on first use.
    pub(crate) fn new(cache_root: &Path, key: CacheKey) -> VerifiedMemo {
        VerifiedMemo {
            path: cache_root.join(VERIFIED_FILE),
            key,
            inner: std::sync::Mutex::default(),
        }
    }

    fn entries(&self) -> std::sync::MutexGuard<'_, VerifiedEntries> {
        let mut entries = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        if !entries.loaded {
            entries.loaded = true;
            if let Some(theirs) =
                load(&self.key, &self.path, verified_magic()).and_then(|b| decode_verified(&b))
            {
                entries.map = theirs;
            }
        }
        entries
    }

    /// The documents of `docs` not yet verified for `mirror` in state `stamp`;
    /// `None` when the mirror was not verified in that state at all.
    pub(crate) fn missing(
        &self,
        mirror: &str,
        stamp: &[u8; 32],
        docs: &[VerifiedDoc],
    ) -> Option<Vec<VerifiedDoc>> {
        let entries = self.entries();
        let (known, seen) = entries.map.get(mirror)?;
        if known != stamp {
            return None;
        }
        let covered = |d: &VerifiedDoc| {
            seen.contains(d) || (d.1.is_none() && seen.iter().any(|s| s.0 == d.0))
        };
        Some(docs.iter().filter(|d| !covered(d)).cloned().collect())
    }

    /// Records that `docs` of `mirror` read back whole in state `stamp` (in
    /// memory until [`persist`](Self::persist)); a new state replaces the old.
    pub(crate) fn record(&self, mirror: &str, stamp: [u8; 32], docs: &[VerifiedDoc]) {
        let mut entries = self.entries();
        let entry = entries
            .map
            .entry(mirror.to_string())
            .or_insert_with(|| (stamp, std::collections::HashSet::new()));
        if entry.0 != stamp {
            *entry = (stamp, std::collections::HashSet::new());
        }
        entry.1.extend(docs.iter().cloned());
        entries.changed.insert(mirror.to_string());
    }

    /// Forgets `mirror` (found damaged, or about to be replaced).
    pub(crate) fn forget(&self, mirror: &str) {
        let mut entries = self.entries();
        if entries.map.remove(mirror).is_some() {
            entries.changed.insert(mirror.to_string());
        }
    }

    /// Writes the memo once, atomically, when this run changed it; the entries
    /// of mirrors this run did not touch are taken from the file as it is now.
    pub(crate) fn persist(&self) -> std::io::Result<()> {
        let mut entries = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        if entries.changed.is_empty() {
            return Ok(());
        }
        let mut merged = load(&self.key, &self.path, verified_magic())
            .and_then(|b| decode_verified(&b))
            .unwrap_or_default();
        for mirror in &entries.changed {
            match entries.map.get(mirror) {
                Some(entry) => merged.insert(mirror.clone(), entry.clone()),
                None => merged.remove(mirror),
            };
        }
        let mut mirrors: Vec<&String> = merged.keys().collect();
        mirrors.sort_unstable();
        let mut body = Enc::default();
        for mirror in mirrors {
            let (stamp, docs) = &merged[mirror];
            body.str(mirror);
            body.0.extend_from_slice(stamp);
            let mut docs: Vec<&VerifiedDoc> = docs.iter().collect();
            docs.sort_unstable();
            body.u32(docs.len() as u32);
            for (commit, path) in docs {
                body.0.extend_from_slice(commit);
                match path {
                    Some(p) => body.u32(1).str(p),
                    None => body.u32(0),
                };
            }
        }
        save(&self.key, &self.path, verified_magic(), &body.0)?;
        entries.map = merged;
        entries.changed.clear();
        Ok(())
    }
}

impl Drop for VerifiedMemo {
    /// Best effort: a read-only cache must not fail a run.
    fn drop(&mut self) {
        let _ = self.persist();
    }
}

type VerifiedMap =
    std::collections::HashMap<String, ([u8; 32], std::collections::HashSet<VerifiedDoc>)>;

fn decode_verified(b: &[u8]) -> Option<VerifiedMap> {
    fn bytes<const N: usize>(d: &mut Dec<'_>) -> Option<[u8; N]> {
        let v: [u8; N] = d.0.get(..N)?.try_into().ok()?;
        d.0 = &d.0[N..];
        Some(v)
    }
    let mut d = Dec(b);
    let mut map = VerifiedMap::new();
    while !d.done() {
        let mirror = d.string()?;
        let stamp = bytes::<32>(&mut d)?;
        let n = d.u32()? as usize;
        let mut docs = std::collections::HashSet::with_capacity(n.min(1 << 16));
        for _ in 0..n {
            let commit = bytes::<20>(&mut d)?;
            let path = match d.u32()? {
                0 => None,
                1 => Some(d.string()?),
                _ => return None,
            };
            docs.insert((commit, path));
        }
        map.insert(mirror, (stamp, docs));
    }
    Some(map)
}

pub use pinaudit_core::memo::{Dec, Enc};

/// What an archive answered, one file per question
/// (`CACHE/archive/<service>/<sha256 of the question>.store`): an archive's
/// objects never change, so what it gave for a commit, a path at a commit or a
/// blob is kept for good; "not archived" is kept for [`NOT_ARCHIVED_FOR`] only
/// (the archive may crawl the forge's copy later). Each file names its question,
/// so one moved under another name reads as absent; the caller checks what it
/// reads back (a blob against its id) as it checks what the archive sent.
#[derive(Debug, Clone)]
pub(crate) struct ArchiveStore {
    dir: std::path::PathBuf,
    key: CacheKey,
}

/// An answer kept in an [`ArchiveStore`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Kept {
    /// The archive's answer (opaque bytes).
    Found(Vec<u8>),
    /// The archive answered that it does not hold it.
    NotArchived,
}

const ARCHIVE_MAGIC: &[u8] = b"pinaudit-archive-store v1\n";
/// How long a "not archived" answer is kept, in seconds: a day.
pub(crate) const NOT_ARCHIVED_FOR: u64 = 86_400;

impl ArchiveStore {
    /// The answers of archive `service` under `cache_root`.
    pub(crate) fn new(cache_root: &Path, service: &str, key: CacheKey) -> ArchiveStore {
        ArchiveStore {
            dir: cache_root.join("archive").join(service),
            key,
        }
    }

    fn path(&self, question: &str) -> std::path::PathBuf {
        self.dir.join(format!(
            "{}.store",
            pinaudit_core::hash::sha256_hex(question.as_bytes())
        ))
    }

    /// The answer kept for `question` at time `now` (seconds since the epoch):
    /// a found answer whenever it was kept, "not archived" within a day of it.
    pub(crate) fn get(&self, question: &str, now: u64) -> Option<Kept> {
        let body = load(&self.key, &self.path(question), ARCHIVE_MAGIC)?;
        let mut d = Dec(&body);
        if d.string()? != question {
            return None;
        }
        match d.u32()? {
            1 => Some(Kept::Found(d.0.to_vec())),
            0 => {
                let high = u64::from(d.u32()?);
                let at = (high << 32) | u64::from(d.u32()?);
                let fresh =
                    at <= now.saturating_add(60) && now.saturating_sub(at) < NOT_ARCHIVED_FOR;
                (fresh && d.done()).then_some(Kept::NotArchived)
            }
            _ => None,
        }
    }

    /// Keeps the archive's answer to `question` for good.
    pub(crate) fn put_found(&self, question: &str, answer: &[u8]) -> std::io::Result<()> {
        let mut body = Enc::default();
        body.str(question).u32(1);
        body.0.extend_from_slice(answer);
        self.put(question, &body.0)
    }

    /// Keeps "not archived" for `question`, answered at `now`, for a day.
    pub(crate) fn put_not_archived(&self, question: &str, now: u64) -> std::io::Result<()> {
        let mut body = Enc::default();
        body.str(question)
            .u32(0)
            .u32((now >> 32) as u32)
            .u32(now as u32);
        self.put(question, &body.0)
    }

    fn put(&self, question: &str, body: &[u8]) -> std::io::Result<()> {
        // Never into a directory a planted link names, outside the cache.
        if fs::symlink_metadata(&self.dir).is_ok_and(|m| !m.is_dir()) {
            return Err(std::io::Error::other(format!(
                "`{}` is not a directory (a symbolic link?); not written",
                self.dir.display()
            )));
        }
        save(&self.key, &self.path(question), ARCHIVE_MAGIC, body)
    }
}

impl pinaudit_core::memo::CheckMemo for CheckMemo {
    fn peek_with(&self, key: &[u8; 32], f: &mut dyn FnMut(&[u8])) {
        self.peek(key, f);
    }
    fn put(&self, key: [u8; 32], value: Vec<u8>) -> bool {
        CheckMemo::put(self, key, value)
    }
    fn forget(&self, key: &[u8; 32]) {
        CheckMemo::forget(self, key)
    }
    fn ready(&self) -> bool {
        self.inner.ready()
    }
    fn may_answer(&self) -> bool {
        self.held_any
    }
    fn expect_answers(&self, answers: usize) {
        CheckMemo::expect_answers(self, answers)
    }
    fn shared(&self, key: &[u8; 32]) -> Option<bytes::Bytes> {
        let entries = self.read();
        let v = entries.map.get(key)?;
        self.used(&entries, key);
        Some(v.clone())
    }
}

impl pinaudit_core::memo::DriftMemo for DriftMemo {
    /// The fates of `old_lines` lines of blob `pinned` into the `new_lines` lines of
    /// blob `head`, when remembered for documents of these sizes.
    fn get(
        &self,
        pinned: &str,
        head: &str,
        old_lines: usize,
        new_lines: usize,
    ) -> Option<Vec<u32>> {
        let key = (oid_key(pinned)?, oid_key(head)?);
        let entries = self.entries();
        let (n, fates) = entries.map.get(&key)?;
        (fates.len() == old_lines && *n as usize == new_lines).then(|| fates.clone())
    }

    /// Remembers fates (kept in memory until [`persist`](Self::persist)).
    fn put(&self, pinned: &str, head: &str, new_lines: usize, fates: Vec<u32>) {
        if fates.len() > DRIFT_MAX_LINES || new_lines > DRIFT_MAX_LINES {
            return;
        }
        let (Some(a), Some(b)) = (oid_key(pinned), oid_key(head)) else {
            return;
        };
        let mut entries = self.entries();
        entries.map.insert((a, b), (new_lines as u32, fates));
        entries.added += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pinaudit_core::memo::DriftMemo as _;

    fn key() -> CacheKey {
        CacheKey::from_secret(b"store tests")
    }

    const A: &str = "0123456789abcdef0123456789abcdef01234567";
    const B: &str = "89abcdef0123456789abcdef0123456789abcdef";

    /// A store of megabytes, read into room whose pages were populated
    /// first, reads back byte for byte; so does the room populated on its
    /// own, however it lies against page boundaries.
    #[test]
    fn a_large_store_reads_back_whole() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("large.store");
        let body: Vec<u8> = (0..3_000_017u32).map(|i| (i * 7 % 251) as u8).collect();
        fs::write(&path, &body).expect("write");
        assert_eq!(read_regular(&path).as_deref(), Some(&body[..]));
        for held in [0, 1, 4095, 4097] {
            let mut v = vec![9u8; held];
            v.reserve(2 << 20);
            populate(&mut v);
            assert_eq!(v, vec![9u8; held]);
            v.extend_from_slice(&body);
            assert_eq!(&v[held..], &body[..]);
        }
    }

    #[test]
    fn store_round_trip_and_damage() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("x.store");
        save(&key(), &path, b"kind v1\n", b"body").expect("save");
        assert_eq!(
            load(&key(), &path, b"kind v1\n").as_deref(),
            Some(&b"body"[..])
        );
        assert_eq!(load(&key(), &path, b"kind v2\n"), None);
        let good = fs::read(&path).expect("read");
        for at in 0..good.len() {
            let mut bad = good.clone();
            bad[at] ^= 1;
            fs::write(&path, &bad).expect("write");
            assert_eq!(load(&key(), &path, b"kind v1\n"), None, "flip at {at}");
        }
        fs::write(&path, &good[..good.len() - 1]).expect("write");
        assert_eq!(load(&key(), &path, b"kind v1\n"), None);
    }

    #[test]
    fn archive_store_keeps_found_answers_for_good_and_not_archived_for_a_day() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = ArchiveStore::new(dir.path(), "software-heritage", key());
        let now = 1_800_000_000;
        assert_eq!(store.get("rev:a", now), None);
        store.put_found("rev:a", b"{}").expect("put");
        store.put_not_archived("rev:b", now).expect("put");
        assert_eq!(
            store.get("rev:a", now + 10 * NOT_ARCHIVED_FOR),
            Some(Kept::Found(b"{}".to_vec()))
        );
        assert_eq!(store.get("rev:b", now + 3600), Some(Kept::NotArchived));
        assert_eq!(store.get("rev:b", now + NOT_ARCHIVED_FOR), None);
        // A file moved under another question's name answers nothing.
        fs::copy(store.path("rev:a"), store.path("rev:c")).expect("copy");
        assert_eq!(store.get("rev:c", now), None);
        // Damaged: absent.
        let path = store.path("rev:a");
        let mut bytes = fs::read(&path).expect("read");
        bytes[30] ^= 1;
        fs::write(&path, &bytes).expect("write");
        assert_eq!(store.get("rev:a", now), None);
    }

    #[test]
    fn drift_memo_round_trip_checks_sizes() {
        let dir = tempfile::tempdir().expect("tempdir");
        let memo = DriftMemo::new(dir.path(), "d1", key());
        assert_eq!(memo.get(A, B, 3, 2), None);
        memo.put(A, B, 2, vec![2, 0, 5]);
        memo.persist().expect("persist");
        let again = DriftMemo::new(dir.path(), "d1", key());
        assert_eq!(again.get(A, B, 3, 2), Some(vec![2, 0, 5]));
        assert_eq!(again.get(A, B, 3, 9), None);
        assert_eq!(again.get(B, A, 3, 2), None);
        // Fates another derivation of the diff made are never read back.
        assert_eq!(
            DriftMemo::new(dir.path(), "d2", key()).get(A, B, 3, 2),
            None
        );
        // Damaged: ignored whole.
        let path = dir.path().join(DRIFT_FILE);
        let mut bytes = fs::read(&path).expect("read");
        let last = bytes.len() - 40;
        bytes[last] ^= 4;
        fs::write(&path, &bytes).expect("write");
        assert_eq!(
            DriftMemo::new(dir.path(), "d1", key()).get(A, B, 3, 2),
            None
        );
    }

    #[test]
    fn check_memo_round_trip_version_and_damage() {
        use pinaudit_core::memo::CheckMemo as _;
        let dir = tempfile::tempdir().expect("tempdir");
        let memo = CheckMemo::new(dir.path(), "m1", key());
        assert!(!memo.may_answer(), "no file: nothing to answer");
        let k = CheckMemo::key("claim", &[b"a", b"bc"]);
        assert_ne!(k, CheckMemo::key("claim", &[b"ab", b"c"]));
        assert_eq!(memo.get(&k), None);
        memo.put(k, b"answer".to_vec());
        memo.persist().expect("persist");
        assert!(CheckMemo::new(dir.path(), "m1", key()).may_answer());
        assert_eq!(
            CheckMemo::new(dir.path(), "m1", key()).get(&k).as_deref(),
            Some(&b"answer"[..])
        );
        // Another matcher's answers are never read back.
        assert_eq!(CheckMemo::new(dir.path(), "m2", key()).get(&k), None);
        let path = dir.path().join(CHECKS_FILE);
        let mut bytes = fs::read(&path).expect("read");
        let at = bytes.len() - 33;
        bytes[at] ^= 1;
        fs::write(&path, &bytes).expect("write");
        assert_eq!(CheckMemo::new(dir.path(), "m1", key()).get(&k), None);
    }

    /// A mirror found whole by another build's damage check is not taken as
    /// whole: its entry, stored under that check's magic line, reads as absent.
    #[test]
    fn verified_mirrors_of_another_damage_check_are_read_back_again() {
        let dir = tempfile::tempdir().expect("tempdir");
        let doc: VerifiedDoc = ([7; 20], Some("README.md".to_string()));
        let memo = VerifiedMemo::new(dir.path(), key());
        memo.record("git/m.git", [1; 32], std::slice::from_ref(&doc));
        memo.persist().expect("persist");
        let path = dir.path().join(VERIFIED_FILE);
        let (bytes, body) = sound(&key(), &path, verified_magic()).expect("stored");
        assert_eq!(
            VerifiedMemo::new(dir.path(), key()).missing(
                "git/m.git",
                &[1; 32],
                std::slice::from_ref(&doc)
            ),
            Some(vec![])
        );
        // The same entries, authenticated, under the magic line of the build
        // before the check was named.
        save(&key(), &path, b"pinaudit-verified-store v1\n", &bytes[body]).expect("save");
        assert_eq!(
            VerifiedMemo::new(dir.path(), key()).missing("git/m.git", &[1; 32], &[doc]),
            None
        );
        assert!(verified_magic().starts_with(b"pinaudit-verified-store v1 damage "));
    }

    /// A first audit's memo makes room at once for the answers it expects;
    /// one that holds answers, or a bounded one, is left to grow as it goes.
    #[test]
    fn check_memo_makes_room_only_when_it_held_nothing() {
        let dir = tempfile::tempdir().expect("tempdir");
        let first = CheckMemo::new(dir.path(), "m1", key());
        first.expect_answers(10_000);
        assert!(first.entries().map.capacity() >= 10_000);
        // A hint: the answers themselves are kept as before.
        let k = CheckMemo::key("claim", &[b"a"]);
        assert!(first.put(k, b"answer".to_vec()));
        first.persist().expect("persist");
        let again = CheckMemo::new(dir.path(), "m1", key());
        again.expect_answers(10_000);
        assert!(again.entries().map.capacity() < 10_000);
        assert_eq!(again.get(&k).as_deref(), Some(&b"answer"[..]));
        let bounded = CheckMemo::records(dir.path(), "m1", "r1", key(), false);
        bounded.expect_answers(10_000);
        assert!(bounded.entries().map.capacity() < 10_000);
    }

    /// A memo no check asks is never read, and never written back; one read
    /// on its own thread answers as one read when asked.
    #[test]
    fn a_memo_is_read_when_first_asked_or_on_its_own_thread() {
        let dir = tempfile::tempdir().expect("tempdir");
        let k = CheckMemo::key("t", &[b"a"]);
        let memo = CheckMemo::new(dir.path(), "m1", key());
        memo.put(k, vec![1, 2, 3]);
        memo.persist().expect("persist");
        let path = dir.path().join(CHECKS_FILE);
        let written = fs::read(&path).expect("written");

        // Not asked: not read (a file that is no store stays as it is, unread).
        fs::write(&path, b"not a store").expect("write");
        let untouched = CheckMemo::new(dir.path(), "m1", key());
        assert!(untouched.inner.made().is_none(), "read before asked");
        untouched.persist().expect("persist");
        assert_eq!(fs::read(&path).expect("read"), b"not a store");
        fs::write(&path, &written).expect("write");
        let asked = CheckMemo::new(dir.path(), "m1", key());
        assert_eq!(asked.get(&k), Some(vec![1, 2, 3]));

        // Read on its own thread: the same answers, the same bounds.
        let records = CheckMemo::records(dir.path(), "m1", "r1", key(), true);
        records.put(k, vec![4; 10]);
        records.persist().expect("persist");
        let again = CheckMemo::records(dir.path(), "m1", "r1", key(), true);
        assert_eq!(again.get(&k), Some(vec![4; 10]));
        let deferred = Deferred::background(|| 7u32);
        assert_eq!(*deferred.get(), 7);
        let panicked: Deferred<u32> = Deferred::background(|| panic!("a loader that panics"));
        assert_eq!(*panicked.get(), 0, "the default");
    }

    /// A value made on a thread of its own is ready once that thread is done
    /// (a panic included), not before; a lazy one is always ready (asking
    /// makes it here, waiting for nobody).
    #[test]
    fn a_deferred_value_is_ready_once_its_thread_is_done() {
        let (go, wait) = std::sync::mpsc::channel::<()>();
        let deferred = Deferred::background(move || {
            wait.recv().ok();
            7u32
        });
        assert!(!deferred.ready(), "still loading");
        go.send(()).expect("send");
        let settled = |d: &Deferred<u32>| {
            (0..2_000).any(|_| {
                std::thread::sleep(std::time::Duration::from_millis(5));
                d.ready()
            })
        };
        assert!(settled(&deferred), "done");
        assert_eq!(*deferred.get(), 7);
        let panicked: Deferred<u32> = Deferred::background(|| panic!("a loader that panics"));
        assert!(settled(&panicked), "a panic ends the thread too");
        assert!(Deferred::lazy(|| 1u32).ready());
    }

    /// An answer forgotten as unsound stays forgotten when the memo is
    /// written back (the file it was read from is not merged back over it),
    /// and what is put says whether it is kept.
    /// In the fragment store, an answer this run did not use is dropped when
    /// the memo is written back once this run used another of its slot (the
    /// first 32 bytes): what a later answer superseded is not kept and loaded
    /// run after run. Answers of slots this run did not touch are kept.
    #[test]
    fn a_superseded_fragment_is_not_written_back() {
        let dir = tempfile::tempdir().expect("tempdir");
        let k = |s: &[u8]| CheckMemo::key("t", &[s]);
        let value = |slot: u8, v: u8| [vec![slot; 32], vec![v; 8]].concat();
        let memo = CheckMemo::fragments(dir.path(), "m1", "f1", key(), true);
        assert!(memo.put(k(b"old"), value(1, 1)));
        assert!(memo.put(k(b"other"), value(2, 2)));
        memo.persist().expect("persist");
        let next = CheckMemo::fragments(dir.path(), "m1", "f1", key(), true);
        assert!(next.put(k(b"new"), value(1, 3)), "slot 1 again, new bytes");
        next.persist().expect("persist");
        let after = CheckMemo::fragments(dir.path(), "m1", "f1", key(), true);
        assert_eq!(after.get(&k(b"old")), None, "superseded");
        assert_eq!(after.get(&k(b"new")), Some(value(1, 3)));
        assert_eq!(after.get(&k(b"other")), Some(value(2, 2)), "untouched");
        // Both answers of a slot that a run used are kept.
        assert_eq!(after.peek(&k(b"other"), <[u8]>::to_vec), Some(value(2, 2)));
        assert!(after.put(k(b"another"), value(2, 4)));
        after.persist().expect("persist");
        let last = CheckMemo::fragments(dir.path(), "m1", "f1", key(), true);
        assert_eq!(last.get(&k(b"other")), Some(value(2, 2)), "used: kept");
        assert_eq!(last.get(&k(b"another")), Some(value(2, 4)));
        // The other memos have no slots: their answers are not dropped so.
        let checks = CheckMemo::new(dir.path(), "m1", key());
        assert!(checks.put(k(b"a"), value(5, 1)));
        checks.persist().expect("persist");
        let checks = CheckMemo::new(dir.path(), "m1", key());
        assert!(checks.put(k(b"b"), value(5, 2)));
        checks.persist().expect("persist");
        let checks = CheckMemo::new(dir.path(), "m1", key());
        assert_eq!(checks.get(&k(b"a")), Some(value(5, 1)), "not slotted");
    }

    #[test]
    fn a_forgotten_answer_is_not_taken_back_from_the_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (a, b) = (CheckMemo::key("t", &[b"a"]), CheckMemo::key("t", &[b"b"]));
        let memo = CheckMemo::fragments(dir.path(), "m1", "f1", key(), true);
        assert!(memo.put(a, vec![1; 8]));
        assert!(memo.put(b, vec![2; 8]));
        assert!(!memo.put(b, vec![0; RECORD_VALUE_MAX + 1]), "too large");
        memo.persist().expect("persist");
        let again = CheckMemo::fragments(dir.path(), "m1", "f1", key(), true);
        assert_eq!(again.get(&a), Some(vec![1; 8]), "slices of the file");
        again.forget(&a);
        again.persist().expect("persist");
        let after = CheckMemo::fragments(dir.path(), "m1", "f1", key(), true);
        assert_eq!(after.get(&a), None, "forgotten for good");
        assert_eq!(after.get(&b), Some(vec![2; 8]));
        assert!(dir.path().join(FRAGMENTS_FILE).is_file());
        // Another build's fragments read as empty (not carried along).
        let other = CheckMemo::fragments(dir.path(), "m1", "f2", key(), false);
        assert_eq!(other.get(&b), None, "another build");
    }

    #[test]
    fn record_memo_is_its_own_file_version_and_size() {
        let dir = tempfile::tempdir().expect("tempdir");
        let records = CheckMemo::records(dir.path(), "m1", "r1", key(), true);
        let k = CheckMemo::key("record", &[b"a"]);
        // Larger than a check's answer may be, within a record's.
        let big = vec![7u8; CHECK_VALUE_MAX + 1];
        records.put(k, big.clone());
        records.put(
            CheckMemo::key("record", &[b"b"]),
            vec![0; RECORD_VALUE_MAX + 1],
        );
        records.persist().expect("persist");
        assert!(dir.path().join(RECORDS_FILE).is_file());
        assert!(!dir.path().join(CHECKS_FILE).exists());
        let again = CheckMemo::records(dir.path(), "m1", "r1", key(), true);
        assert_eq!(again.get(&k), Some(big));
        assert_eq!(
            again.get(&CheckMemo::key("record", &[b"b"])),
            None,
            "too large"
        );
        // Another derivation's results, or the checks' store, are never read back.
        assert_eq!(
            CheckMemo::records(dir.path(), "m2", "r1", key(), true).get(&k),
            None
        );
        // Nor those another build of the record results made.
        assert_eq!(
            CheckMemo::records(dir.path(), "m1", "r2", key(), true).get(&k),
            None
        );
        assert_eq!(CheckMemo::new(dir.path(), "m1", key()).get(&k), None);
    }

    /// Two caches in one process, each with its own key file: neither accepts
    /// the other's stores (a cache copied from elsewhere plants nothing), and
    /// each still reads its own.
    #[test]
    fn caches_with_different_key_files_do_not_accept_each_others_stores() {
        let state = tempfile::tempdir().expect("tempdir");
        let (one, two) = (
            tempfile::tempdir().expect("a"),
            tempfile::tempdir().expect("b"),
        );
        let key_one = CacheKey::from_key_file(&state.path().join("one/cache.key")).expect("key");
        let key_two = CacheKey::from_key_file(&state.path().join("two/cache.key")).expect("key");
        let k = CheckMemo::key("claim", &[b"a"]);
        let memo = CheckMemo::new(one.path(), "m1", key_one.clone());
        memo.put(k, b"answer".to_vec());
        memo.persist().expect("persist");
        let archive = ArchiveStore::new(one.path(), "software-heritage", key_one.clone());
        archive.put_found("rev:a", b"{}").expect("put");
        // The second cache holds the first one's files, byte for byte.
        fs::copy(one.path().join(CHECKS_FILE), two.path().join(CHECKS_FILE)).expect("copy");
        let moved = ArchiveStore::new(two.path(), "software-heritage", key_two.clone());
        fs::create_dir_all(&moved.dir).expect("mkdir");
        fs::copy(archive.path("rev:a"), moved.path("rev:a")).expect("copy");
        assert_eq!(
            CheckMemo::new(two.path(), "m1", key_two.clone()).get(&k),
            None
        );
        assert_eq!(moved.get("rev:a", 0), None);
        // Each cache reads what was written under its own key.
        assert_eq!(
            CheckMemo::new(one.path(), "m1", key_one.clone())
                .get(&k)
                .as_deref(),
            Some(&b"answer"[..])
        );
        assert_eq!(archive.get("rev:a", 0), Some(Kept::Found(b"{}".to_vec())));
        assert_eq!(
            CheckMemo::new(two.path(), "m1", key_one).get(&k).as_deref(),
            Some(&b"answer"[..]),
            "the same file under the key it was written with"
        );
    }

    /// A memo bounded in bytes keeps no more than its bound, and when it
    /// turned answers away it is written back with only what the run used, so
    /// what an edited record left behind makes room for the answers in use.
    #[test]
    fn a_bounded_memo_keeps_what_is_used_within_its_bound() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("bounded.store");
        let open = || CheckMemo::open(path.clone(), key(), b"bounded v1\n".to_vec(), 100, 25, true);
        let k = |s: &str| CheckMemo::key("t", &[s.as_bytes()]);
        let memo = open();
        for name in ["a", "b", "c"] {
            memo.put(k(name), vec![1; 10]);
        }
        memo.persist().expect("persist");
        let again = open();
        assert!(again.get(&k("a")).is_some() && again.get(&k("b")).is_some());
        assert_eq!(again.get(&k("c")), None, "over the bound");
        // The next run uses `b` only and would keep `c`: `a` goes, `c` gets in
        // the run after.
        assert!(again.peek(&k("b"), |v| v.len()).is_some());
        again.put(k("c"), vec![1; 10]);
        again.persist().expect("persist");
        let third = open();
        assert_eq!(third.get(&k("a")), None, "unused, and room was wanted");
        assert!(third.get(&k("b")).is_some());
        third.put(k("c"), vec![1; 10]);
        third.persist().expect("persist");
        let fourth = open();
        assert!(fourth.get(&k("b")).is_some() && fourth.get(&k("c")).is_some());
    }
}
