//! sha256 of cited documents, the near-miss variants a `hash-mismatch` names, and
//! a persisted store of sha256 by git blob id.
//!
//! Records state the sha256 of a document as the author's checkout saw it, which
//! is not always the blob git stores: a Windows checkout adds CRLF, an editor adds
//! or strips a BOM or the final newline. When the hash at the pinned revision
//! differs, the evidence says which of these [`variants`] does match, so a reader
//! can tell "same text, different bytes" from "different text".
//!
//! A git blob never changes, so its sha256 is computed once and kept for good in
//! one self-validating store, `cache/blobs.store` ([`BlobHashCache`]), written once
//! per run.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use git2::Oid;
use sha2::{Digest, Sha256};

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// Lowercase hex sha256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    to_hex(&Sha256::digest(bytes))
}

pub(crate) fn to_hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(char::from(DIGITS[usize::from(b >> 4)]));
        s.push(char::from(DIGITS[usize::from(b & 0xf)]));
    }
    s
}

/// The document variants that a `hash-mismatch` evidence can name, each with
/// its bytes; only those that differ from `bytes` (and from one another).
///
/// - `crlf`: every lone LF becomes CRLF
/// - `lf`: every CRLF becomes LF
/// - `bom`: a UTF-8 byte order mark is added
/// - `no-bom`: the byte order mark is removed
/// - `trailing-newline`: a final line ending is added (CRLF when the document
///   already uses CRLF, else LF)
/// - `no-trailing-newline`: the final line ending is removed
pub fn variants(bytes: &[u8]) -> Vec<(&'static str, Vec<u8>)> {
    let crlf_doc = contains(bytes, b"\r\n");
    let candidates: [(&'static str, Vec<u8>); 6] = [
        ("crlf", lf_to_crlf(bytes)),
        ("lf", crlf_to_lf(bytes)),
        ("bom", [BOM, bytes].concat()),
        ("no-bom", bytes.strip_prefix(BOM).unwrap_or(bytes).to_vec()),
        ("trailing-newline", {
            let mut v = bytes.to_vec();
            if !bytes.ends_with(b"\n") {
                v.extend_from_slice(if crlf_doc { b"\r\n" } else { b"\n" });
            }
            v
        }),
        ("no-trailing-newline", {
            let trimmed = bytes
                .strip_suffix(b"\r\n")
                .or_else(|| bytes.strip_suffix(b"\n"))
                .unwrap_or(bytes);
            trimmed.to_vec()
        }),
    ];
    let mut out: Vec<(&'static str, Vec<u8>)> = Vec::new();
    for (name, v) in candidates {
        if v != bytes && out.iter().all(|(_, seen)| *seen != v) {
            out.push((name, v));
        }
    }
    out
}

/// The name of the first variant of `bytes` whose sha256 is `expected_hex`.
pub fn matching_variant(bytes: &[u8], expected_hex: &str) -> Option<&'static str> {
    let expected = expected_hex.to_ascii_lowercase();
    variants(bytes)
        .into_iter()
        .find(|(_, v)| sha256_hex(v) == expected)
        .map(|(name, _)| name)
}

/// A document's length and sha256, and its variants' sha256 by index into
/// [`VARIANT_NAMES`].
pub type VariantHashes = (u64, [u8; 32], Vec<(u8, [u8; 32])>);

/// A sha256 and a byte count, fed in pieces.
#[derive(Clone, Default)]
struct Counted {
    sha: Sha256,
    len: u64,
}

impl Counted {
    fn feed(&mut self, bytes: &[u8]) {
        self.sha.update(bytes);
        self.len += bytes.len() as u64;
    }

    fn done(self) -> (u64, [u8; 32]) {
        (self.len, self.sha.finalize().into())
    }
}

/// The sha256 of a document and of each of its [`variants`], computed in one
/// pass over a stream (issue 13: a 1 GB document with a wrong hash took six
/// copies of itself in memory): each variant is a small transformer that feeds
/// its own hasher, holding back at most the last two bytes.
#[derive(Default)]
pub struct VariantHasher {
    base: Counted,
    crlf: Counted,
    lf: Counted,
    bom: Counted,
    no_bom: Counted,
    no_trailing: Counted,
    /// The last byte seen (for a line end split across pieces).
    last: Option<u8>,
    /// `lf`: a `\r` at the end of the last piece, not yet known to end a CRLF.
    pending_cr: bool,
    /// `no-bom`: the first bytes, until three are known.
    head: Vec<u8>,
    head_done: bool,
    /// `no-trailing-newline`: the last two bytes, held back.
    tail: Vec<u8>,
    /// Whether the document contains a CRLF.
    crlf_doc: bool,
}

impl VariantHasher {
    pub fn new() -> VariantHasher {
        let mut h = VariantHasher::default();
        h.bom.feed(BOM);
        h
    }

    pub fn update(&mut self, chunk: &[u8]) {
        if chunk.is_empty() {
            return;
        }
        self.base.feed(chunk);
        self.bom.feed(chunk);
        if self.last == Some(b'\r') && chunk[0] == b'\n'
            || memchr::memmem::find(chunk, b"\r\n").is_some()
        {
            self.crlf_doc = true;
        }
        // crlf: every lone LF becomes CRLF.
        let mut start = 0;
        for p in memchr::memchr_iter(b'\n', chunk) {
            self.crlf.feed(&chunk[start..p]);
            let prev = if p > 0 { Some(chunk[p - 1]) } else { self.last };
            self.crlf
                .feed(if prev == Some(b'\r') { b"\n" } else { b"\r\n" });
            start = p + 1;
        }
        self.crlf.feed(&chunk[start..]);
        // lf: every CRLF becomes LF.
        let mut from = 0;
        if self.pending_cr {
            self.pending_cr = false;
            if chunk[0] != b'\n' {
                self.lf.feed(b"\r");
            }
        }
        for p in memchr::memchr_iter(b'\r', chunk) {
            self.lf.feed(&chunk[from..p]);
            from = p + 1;
            match chunk.get(p + 1) {
                Some(b'\n') => {}
                Some(_) => self.lf.feed(b"\r"),
                None => self.pending_cr = true,
            }
        }
        self.lf.feed(&chunk[from..]);
        // no-bom: the first three bytes decide.
        if self.head_done {
            self.no_bom.feed(chunk);
        } else {
            self.head.extend_from_slice(chunk);
            if self.head.len() >= BOM.len() {
                self.head_done = true;
                let head = std::mem::take(&mut self.head);
                self.no_bom.feed(head.strip_prefix(BOM).unwrap_or(&head));
            }
        }
        // no-trailing-newline: all but the last two bytes.
        if chunk.len() >= 2 {
            let tail = std::mem::take(&mut self.tail);
            self.no_trailing.feed(&tail);
            self.no_trailing.feed(&chunk[..chunk.len() - 2]);
            self.tail.extend_from_slice(&chunk[chunk.len() - 2..]);
        } else {
            self.tail.extend_from_slice(chunk);
            if self.tail.len() > 2 {
                let cut = self.tail.len() - 2;
                self.no_trailing.feed(&self.tail[..cut]);
                self.tail.drain(..cut);
            }
        }
        self.last = chunk.last().copied();
    }

    /// The document's length and sha256, and each variant's sha256 by index into
    /// [`VARIANT_NAMES`], as [`variants`] gives them: only those that differ from
    /// the document and from one another (compared by length and hash).
    pub fn finish(mut self) -> VariantHashes {
        if self.pending_cr {
            self.lf.feed(b"\r");
        }
        if !self.head_done {
            let head = std::mem::take(&mut self.head);
            self.no_bom.feed(head.strip_prefix(BOM).unwrap_or(&head));
        }
        let tail = std::mem::take(&mut self.tail);
        let kept = tail
            .strip_suffix(b"\r\n")
            .or_else(|| tail.strip_suffix(b"\n"))
            .unwrap_or(&tail);
        self.no_trailing.feed(kept);
        let mut trailing = self.base.clone();
        if self.last != Some(b'\n') {
            trailing.feed(if self.crlf_doc { b"\r\n" } else { b"\n" });
        }
        let base = self.base.done();
        let candidates = [
            self.crlf.done(),
            self.lf.done(),
            self.bom.done(),
            self.no_bom.done(),
            trailing.done(),
            self.no_trailing.done(),
        ];
        let mut seen = vec![base];
        let mut out = Vec::new();
        for (i, v) in candidates.into_iter().enumerate() {
            if !seen.contains(&v) {
                seen.push(v);
                out.push((i as u8, v.1));
            }
        }
        (base.0, base.1, out)
    }
}

/// The length and sha256 of what `reader` gives, read in pieces.
pub fn stream_sha256(mut reader: impl std::io::Read) -> std::io::Result<(u64, [u8; 32])> {
    let mut h = Counted::default();
    let mut buf = vec![0u8; 256 << 10];
    loop {
        match reader.read(&mut buf) {
            Ok(0) => return Ok(h.done()),
            Ok(n) => h.feed(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

/// [`VariantHasher`] over what `reader` gives.
pub fn stream_variant_hashes(mut reader: impl std::io::Read) -> std::io::Result<VariantHashes> {
    let mut h = VariantHasher::new();
    let mut buf = vec![0u8; 256 << 10];
    loop {
        match reader.read(&mut buf) {
            Ok(0) => return Ok(h.finish()),
            Ok(n) => h.update(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

fn lf_to_crlf(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len() + bytes.len() / 16);
    let mut prev = 0u8;
    for &b in bytes {
        if b == b'\n' && prev != b'\r' {
            out.push(b'\r');
        }
        out.push(b);
        prev = b;
    }
    out
}

fn crlf_to_lf(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\r' && bytes.get(i + 1) == Some(&b'\n') {
            i += 1;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    out
}

/// The store's file under the cache root.
const STORE_FILE: &str = "blobs.store";
/// First line of the store; a store of another version is ignored and rebuilt.
const STORE_MAGIC: &[u8] = b"pinaudit-blob-store v1\n";
/// One entry: blob id (20), blob size (8, little endian), sha256 (32).
const ENTRY: usize = 20 + 8 + 32;

/// sha256 by git blob id: one persisted store, `CACHE/blobs.store`, read once when
/// a run starts and written once when it ends ([`BlobHashCache::persist`]) — never
/// a file, let alone an fsync, per blob.
///
/// The store validates itself: a magic line, fixed-size entries and a trailing
/// sha256 of everything before it. A store that is truncated, torn or tampered
/// with fails the check and is ignored as a whole (then rebuilt); it is never
/// trusted in part. Each entry also keeps the blob's size: an entry whose size
/// disagrees with the bytes just read is ignored and the fresh hash wins, so a
/// memo never overrides a fresh read. A git blob id names its content (libgit2
/// verifies object ids on read), so an entry that passes both checks is sound.
///
/// Safe for concurrent runs: the store is written to a unique temporary file and
/// renamed into place, so a reader sees one whole store or another; two runs
/// that race lose at most each other's new entries (the memo only saves time).
/// Failing to write is not an error. The handle is cheap to clone and shared
/// between threads (one map behind a mutex).
#[derive(Debug, Clone)]
pub struct BlobHashCache {
    path: PathBuf,
    inner: std::sync::Arc<std::sync::Mutex<Memo>>,
}

#[derive(Debug, Default)]
struct Memo {
    entries: HashEntries,
    /// Entries added this run (nothing to write when zero).
    added: usize,
    /// Per blob: its sha256 and those of its [`variants`], by index into
    /// [`VARIANT_NAMES`] (`CACHE/variants.store`).
    variants: VariantEntries,
    variants_added: usize,
    /// Whether `variants.store` was read: only on first use (a hash mismatch).
    variants_loaded: bool,
}

/// The names [`variants`] gives, in its order.
const VARIANT_NAMES: [&str; 6] = [
    "crlf",
    "lf",
    "bom",
    "no-bom",
    "trailing-newline",
    "no-trailing-newline",
];
const VARIANTS_MAGIC: &[u8] = b"pinaudit-variant-store v1\n";
const VARIANTS_FILE: &str = "variants.store";

impl BlobHashCache {
    /// The store under `cache_root` (the directory that also holds `git/`), loaded
    /// now; an unreadable or damaged store loads as empty.
    pub fn new(cache_root: &Path) -> Self {
        let path = cache_root.join(STORE_FILE);
        let entries = crate::store::load(&path, STORE_MAGIC)
            .and_then(|body| decode(&body))
            .unwrap_or_default();
        BlobHashCache {
            path,
            inner: std::sync::Arc::new(std::sync::Mutex::new(Memo {
                entries,
                ..Memo::default()
            })),
        }
    }

    fn memo(&self) -> std::sync::MutexGuard<'_, Memo> {
        // A panic elsewhere cannot leave the map half-updated: recover it.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// How many blobs the store knows.
    pub fn len(&self) -> usize {
        self.memo().entries.len()
    }

    /// Whether the store knows no blob.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The remembered sha256 of `blob` when it is `size` bytes long.
    pub fn get(&self, blob: Oid, size: usize) -> Option<String> {
        let memo = self.memo();
        let (known, sha) = memo.entries.get(&key(blob)?)?;
        (*known == size as u64).then(|| to_hex(sha))
    }

    /// The remembered sha256 of `blob`, whatever its size: a blob id names its
    /// content, so this is what reading it would give (used to leave a blob
    /// unread when nothing else needs its bytes).
    pub fn known(&self, blob: Oid) -> Option<String> {
        let memo = self.memo();
        let (_, sha) = memo.entries.get(&key(blob)?)?;
        Some(to_hex(sha))
    }

    /// The remembered size of `blob`: checked against the bytes whenever they
    /// are read (see [`get`](Self::get)), and signed with the rest of the store.
    pub fn known_size(&self, blob: Oid) -> Option<u64> {
        let memo = self.memo();
        memo.entries.get(&key(blob)?).map(|(size, _)| *size)
    }

    /// Remember `sha256` for `blob` of `size` bytes (kept in memory until
    /// [`persist`](Self::persist)).
    pub fn put(&self, blob: Oid, size: usize, sha256: [u8; 32]) {
        let Some(k) = key(blob) else { return };
        let mut memo = self.memo();
        if memo.entries.insert(k, (size as u64, sha256)) != Some((size as u64, sha256)) {
            memo.added += 1;
        }
    }

    /// The sha256 of `blob`, whose content is `bytes`: from the store when it has
    /// a sound entry for a blob of this size, else computed and remembered.
    pub fn sha256(&self, blob: Oid, bytes: &[u8]) -> String {
        if let Some(hex) = self.get(blob, bytes.len()) {
            return hex;
        }
        let digest: [u8; 32] = Sha256::digest(bytes).into();
        self.put(blob, bytes.len(), digest);
        to_hex(&digest)
    }

    /// The sha256 of `blob` and of each of its [`variants`] (name, hex), from the
    /// store when known (then `read` is not called: nothing is read), else from
    /// the bytes `read` returns, then remembered. `None` when it cannot be read.
    pub fn with_variants(
        &self,
        blob: Oid,
        read: impl FnOnce() -> Option<Vec<u8>>,
    ) -> Option<(String, Vec<(&'static str, String)>)> {
        self.with_variant_hashes(blob, || {
            let bytes = read()?;
            let mut h = VariantHasher::new();
            h.update(&bytes);
            Some(h.finish())
        })
    }

    /// [`Self::with_variants`], with `compute` giving the length, sha256 and
    /// variant hashes itself (a streamed document: see [`VariantHasher`]).
    pub fn with_variant_hashes(
        &self,
        blob: Oid,
        compute: impl FnOnce() -> Option<VariantHashes>,
    ) -> Option<(String, Vec<(&'static str, String)>)> {
        let k = key(blob)?;
        let shown = |(sha, vars): &([u8; 32], Vec<(u8, [u8; 32])>)| {
            let named = vars
                .iter()
                .filter_map(|(i, h)| Some((*VARIANT_NAMES.get(usize::from(*i))?, to_hex(h))))
                .collect();
            (to_hex(sha), named)
        };
        {
            let mut memo = self.memo();
            if !memo.variants_loaded {
                memo.variants_loaded = true;
                let path = self.path.with_file_name(VARIANTS_FILE);
                let theirs = crate::store::load(&path, VARIANTS_MAGIC)
                    .and_then(|body| decode_variants(&body))
                    .unwrap_or_default();
                for (k, v) in theirs {
                    memo.variants.entry(k).or_insert(v);
                }
            }
            if let Some(known) = memo.variants.get(&k) {
                return Some(shown(known));
            }
        }
        let (len, sha, vars) = compute()?;
        let entry = (sha, vars);
        let out = shown(&entry);
        self.put(blob, usize::try_from(len).unwrap_or(usize::MAX), sha);
        let mut memo = self.memo();
        memo.variants.insert(k, entry);
        memo.variants_added += 1;
        Some(out)
    }

    /// Writes the store once, atomically (temporary file, then rename), when this
    /// run added entries. Entries another run persisted meanwhile are kept.
    pub fn persist(&self) -> std::io::Result<()> {
        let mut memo = self.memo();
        if memo.variants_added > 0 {
            if let Some(dir) = self.path.parent() {
                let path = dir.join(VARIANTS_FILE);
                if let Some(theirs) =
                    crate::store::load(&path, VARIANTS_MAGIC).and_then(|b| decode_variants(&b))
                {
                    for (k, v) in theirs {
                        memo.variants.entry(k).or_insert(v);
                    }
                }
                crate::store::save(&path, VARIANTS_MAGIC, &encode_variants(&memo.variants))?;
                memo.variants_added = 0;
            }
        }
        if memo.added == 0 {
            return Ok(());
        }
        if let Some(theirs) = crate::store::load(&self.path, STORE_MAGIC).and_then(|b| decode(&b)) {
            for (k, v) in theirs {
                memo.entries.entry(k).or_insert(v);
            }
        }
        crate::store::save(&self.path, STORE_MAGIC, &encode(&memo.entries))?;
        memo.added = 0;
        Ok(())
    }
}

fn key(blob: Oid) -> Option<[u8; 20]> {
    blob.as_bytes().try_into().ok()
}

/// The store's body: entries sorted by blob id.
fn encode(entries: &HashEntries) -> Vec<u8> {
    let mut sorted: Vec<_> = entries.iter().collect();
    sorted.sort_unstable_by_key(|(k, _)| **k);
    let mut out = Vec::with_capacity(sorted.len() * ENTRY);
    for (k, (size, sha)) in sorted {
        out.extend_from_slice(k);
        out.extend_from_slice(&size.to_le_bytes());
        out.extend_from_slice(sha);
    }
    out
}

/// The entries of a sound store's body; `None` for anything else.
fn decode(entries: &[u8]) -> Option<HashEntries> {
    if !entries.len().is_multiple_of(ENTRY) {
        return None;
    }
    let mut out = HashMap::with_capacity(entries.len() / ENTRY);
    for e in entries.chunks_exact(ENTRY) {
        let k: [u8; 20] = e[..20].try_into().ok()?;
        let size = u64::from_le_bytes(e[20..28].try_into().ok()?);
        let sha: [u8; 32] = e[28..].try_into().ok()?;
        out.insert(k, (size, sha));
    }
    Some(out)
}

/// Blob id to (size, sha256).
type HashEntries = HashMap<[u8; 20], (u64, [u8; 32])>;
/// Blob id to (sha256, [(variant index, sha256)]).
type VariantEntries = HashMap<[u8; 20], ([u8; 32], Vec<(u8, [u8; 32])>)>;

/// The variant store's body: per blob (sorted), id, sha256, count, then each
/// variant's index and sha256.
fn encode_variants(entries: &VariantEntries) -> Vec<u8> {
    let mut sorted: Vec<_> = entries.iter().collect();
    sorted.sort_unstable_by_key(|(k, _)| **k);
    let mut out = Vec::new();
    for (k, (sha, vars)) in sorted {
        out.extend_from_slice(k);
        out.extend_from_slice(sha);
        out.push(u8::try_from(vars.len()).unwrap_or(0));
        for (i, h) in vars.iter().take(usize::from(u8::MAX)) {
            out.push(*i);
            out.extend_from_slice(h);
        }
    }
    out
}

fn decode_variants(mut b: &[u8]) -> Option<VariantEntries> {
    fn take<'a>(b: &mut &'a [u8], n: usize) -> Option<&'a [u8]> {
        if b.len() < n {
            return None;
        }
        let (head, rest) = b.split_at(n);
        *b = rest;
        Some(head)
    }
    let mut out = HashMap::new();
    while !b.is_empty() {
        let k: [u8; 20] = take(&mut b, 20)?.try_into().ok()?;
        let sha: [u8; 32] = take(&mut b, 32)?.try_into().ok()?;
        let n = take(&mut b, 1)?[0];
        let mut vars = Vec::with_capacity(usize::from(n));
        for _ in 0..n {
            let i = take(&mut b, 1)?[0];
            if usize::from(i) >= VARIANT_NAMES.len() {
                return None;
            }
            vars.push((i, take(&mut b, 32)?.try_into().ok()?));
        }
        out.insert(k, (sha, vars));
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn names(bytes: &[u8]) -> Vec<&'static str> {
        variants(bytes).into_iter().map(|(n, _)| n).collect()
    }

    #[test]
    fn sha256_of_known_input() {
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn lf_document_variants() {
        let v = variants(b"a\nb\n");
        let get = |n: &str| {
            v.iter()
                .find(|(name, _)| *name == n)
                .map(|(_, b)| b.clone())
        };
        assert_eq!(get("crlf").as_deref(), Some(&b"a\r\nb\r\n"[..]));
        assert_eq!(get("bom").as_deref(), Some(&b"\xEF\xBB\xBFa\nb\n"[..]));
        assert_eq!(get("no-trailing-newline").as_deref(), Some(&b"a\nb"[..]));
        assert_eq!(names(b"a\nb\n"), ["crlf", "bom", "no-trailing-newline"]);
    }

    #[test]
    fn crlf_bom_document_variants() {
        let doc = b"\xEF\xBB\xBFa\r\nb";
        let v = variants(doc);
        let get = |n: &str| {
            v.iter()
                .find(|(name, _)| *name == n)
                .map(|(_, b)| b.clone())
        };
        assert_eq!(get("lf").as_deref(), Some(&b"\xEF\xBB\xBFa\nb"[..]));
        assert_eq!(get("no-bom").as_deref(), Some(&b"a\r\nb"[..]));
        assert_eq!(
            get("trailing-newline").as_deref(),
            Some(&b"\xEF\xBB\xBFa\r\nb\r\n"[..])
        );
        assert_eq!(get("crlf"), None);
    }

    #[test]
    fn matching_variant_names_the_transformation() {
        let stored = b"x = 2.9\n";
        let author = sha256_hex(b"x = 2.9\r\n");
        assert_eq!(matching_variant(stored, &author), Some("crlf"));
        assert_eq!(matching_variant(stored, &sha256_hex(b"other")), None);
    }

    #[test]
    fn empty_document_has_only_additive_variants() {
        assert_eq!(names(b""), ["bom", "trailing-newline"]);
    }

    #[test]
    fn blob_store_round_trip_and_corruption() {
        let dir = tempfile::tempdir().expect("tempdir");
        let blob = Oid::from_str("0123456789abcdef0123456789abcdef01234567").expect("oid");
        let other = Oid::from_str("89abcdef0123456789abcdef0123456789abcdef").expect("oid");
        let cache = BlobHashCache::new(dir.path());
        assert_eq!(cache.get(blob, 3), None);
        let hex = cache.sha256(blob, b"abc");
        assert_eq!(hex, sha256_hex(b"abc"));
        cache.sha256(other, b"de");
        // Nothing is written per blob: one store, written once.
        let store = dir.path().join(STORE_FILE);
        assert!(!store.exists());
        cache.persist().expect("persist");
        assert!(store.is_file());
        assert!(!dir.path().join("blobs").exists());

        let again = BlobHashCache::new(dir.path());
        assert_eq!(again.len(), 2);
        assert_eq!(again.get(blob, 3), Some(hex.clone()));
        // An entry for a blob of another size never overrides a fresh read.
        assert_eq!(again.get(blob, 4), None);
        assert_eq!(again.sha256(blob, b"abcd"), sha256_hex(b"abcd"));

        // A damaged store, anywhere, is ignored as a whole, then rebuilt.
        let good = fs::read(&store).expect("read");
        for at in [0, STORE_MAGIC.len() + 3, good.len() - 1] {
            let mut bad = good.clone();
            bad[at] ^= 0x20;
            fs::write(&store, &bad).expect("write");
            assert!(BlobHashCache::new(dir.path()).is_empty(), "flip at {at}");
        }
        fs::write(&store, &good[..good.len() - 7]).expect("truncate");
        let rebuilt = BlobHashCache::new(dir.path());
        assert!(rebuilt.is_empty());
        assert_eq!(rebuilt.sha256(blob, b"abc"), hex);
        rebuilt.persist().expect("persist");
        assert_eq!(BlobHashCache::new(dir.path()).get(blob, 3), Some(hex));
    }

    #[test]
    fn variant_hashes_are_remembered_and_read_nothing_when_known() {
        let dir = tempfile::tempdir().expect("tempdir");
        let blob = Oid::from_str("0123456789abcdef0123456789abcdef01234567").expect("oid");
        let cache = BlobHashCache::new(dir.path());
        let (sha, vars) = cache
            .with_variants(blob, || Some(b"a\nb\n".to_vec()))
            .expect("read");
        assert_eq!(sha, sha256_hex(b"a\nb\n"));
        let names: Vec<&str> = vars.iter().map(|(n, _)| *n).collect();
        assert_eq!(names, ["crlf", "bom", "no-trailing-newline"]);
        assert_eq!(vars[0].1, sha256_hex(b"a\r\nb\r\n"));
        cache.persist().expect("persist");
        let again = BlobHashCache::new(dir.path());
        let known = again.with_variants(blob, || panic!("read although known"));
        assert_eq!(known, Some((sha.clone(), vars)));
        assert_eq!(again.get(blob, 4), Some(sha));
    }

    #[test]
    fn streamed_variant_hashes_equal_the_in_memory_variants_whatever_the_pieces() {
        let docs: [&[u8]; 12] = [
            b"",
            b"\n",
            b"\r",
            b"\r\n",
            b"a\nb\n",
            b"a\r\nb",
            b"\xEF\xBB\xBFa\r\nb\r\n",
            b"\xEF\xBB",
            b"\xEF\xBB\xBF",
            b"x\r\r\n\n\ry\r",
            b"mixed\r\nand\nlone\rends\n\n",
            b"\xEF\xBB\xBF\n",
        ];
        for doc in docs {
            let want: Vec<(u8, String)> = variants(doc)
                .into_iter()
                .map(|(name, v)| {
                    let i = VARIANT_NAMES.iter().position(|n| *n == name).expect("name");
                    (i as u8, sha256_hex(&v))
                })
                .collect();
            for piece in [1, 2, 3, 5, 64] {
                let mut h = VariantHasher::new();
                for c in doc.chunks(piece) {
                    h.update(c);
                }
                let (len, sha, got) = h.finish();
                assert_eq!(len, doc.len() as u64);
                assert_eq!(to_hex(&sha), sha256_hex(doc));
                let got: Vec<(u8, String)> =
                    got.into_iter().map(|(i, h)| (i, to_hex(&h))).collect();
                assert_eq!(got, want, "{doc:?} in pieces of {piece}");
            }
        }
    }

    #[test]
    fn persist_keeps_what_another_run_stored() {
        let dir = tempfile::tempdir().expect("tempdir");
        let a = Oid::from_str("0123456789abcdef0123456789abcdef01234567").expect("oid");
        let b = Oid::from_str("89abcdef0123456789abcdef0123456789abcdef").expect("oid");
        let first = BlobHashCache::new(dir.path());
        let second = BlobHashCache::new(dir.path());
        first.sha256(a, b"one");
        second.sha256(b, b"two");
        first.persist().expect("persist");
        second.persist().expect("persist");
        let merged = BlobHashCache::new(dir.path());
        assert_eq!(merged.len(), 2);
    }
}
