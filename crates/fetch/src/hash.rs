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

pub use pinaudit_core::hash::{
    matching_variant, sha256_hex, stream_sha256, stream_variant_hashes, to_hex, variants,
    VariantHasher, VariantHashes, VARIANT_NAMES,
};

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
    /// The cache's key, which its store files are authenticated under.
    cache_key: crate::cache_key::CacheKey,
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

/// The magic line of `variants.store`: its encoding's version and what the
/// variants are ([`pinaudit_core::hash::variants_version`]), so a store another
/// definition of them wrote reads as empty.
static VARIANTS_MAGIC: std::sync::LazyLock<Vec<u8>> = std::sync::LazyLock::new(|| {
    format!(
        "pinaudit-variant-store v1 variants {}\n",
        pinaudit_core::hash::variants_version()
    )
    .into_bytes()
});
const VARIANTS_FILE: &str = "variants.store";

impl BlobHashCache {
    /// The store under `cache_root` (the directory that also holds `git/`), loaded
    /// now; an unreadable or damaged store loads as empty.
    pub(crate) fn new(cache_root: &Path, cache_key: crate::cache_key::CacheKey) -> Self {
        let path = cache_root.join(STORE_FILE);
        let entries = crate::store::load(&cache_key, &path, STORE_MAGIC)
            .and_then(|body| decode(&body))
            .unwrap_or_default();
        BlobHashCache {
            path,
            cache_key,
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
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.memo().entries.len()
    }

    /// Whether the store knows no blob.
    #[cfg(test)]
    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The remembered sha256 of `blob` when it is `size` bytes long.
    pub(crate) fn get(&self, blob: Oid, size: usize) -> Option<String> {
        let memo = self.memo();
        let (known, sha) = memo.entries.get(&key(blob)?)?;
        (*known == size as u64).then(|| to_hex(sha))
    }

    /// The remembered sha256 of `blob`, whatever its size: a blob id names its
    /// content, so this is what reading it would give (used to leave a blob
    /// unread when nothing else needs its bytes).
    pub(crate) fn known(&self, blob: Oid) -> Option<String> {
        let memo = self.memo();
        let (_, sha) = memo.entries.get(&key(blob)?)?;
        Some(to_hex(sha))
    }

    /// The remembered size of `blob`: checked against the bytes whenever they
    /// are read (see [`get`](Self::get)), and signed with the rest of the store.
    pub(crate) fn known_size(&self, blob: Oid) -> Option<u64> {
        let memo = self.memo();
        memo.entries.get(&key(blob)?).map(|(size, _)| *size)
    }

    /// Remember `sha256` for `blob` of `size` bytes (kept in memory until
    /// [`persist`](Self::persist)).
    pub(crate) fn put(&self, blob: Oid, size: usize, sha256: [u8; 32]) {
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
    pub(crate) fn with_variants(
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
    pub(crate) fn with_variant_hashes(
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
                let theirs = crate::store::load(&self.cache_key, &path, &VARIANTS_MAGIC)
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
                if let Some(theirs) = crate::store::load(&self.cache_key, &path, &VARIANTS_MAGIC)
                    .and_then(|b| decode_variants(&b))
                {
                    for (k, v) in theirs {
                        memo.variants.entry(k).or_insert(v);
                    }
                }
                crate::store::save(
                    &self.cache_key,
                    &path,
                    &VARIANTS_MAGIC,
                    &encode_variants(&memo.variants),
                )?;
                memo.variants_added = 0;
            }
        }
        if memo.added == 0 {
            return Ok(());
        }
        if let Some(theirs) =
            crate::store::load(&self.cache_key, &self.path, STORE_MAGIC).and_then(|b| decode(&b))
        {
            for (k, v) in theirs {
                memo.entries.entry(k).or_insert(v);
            }
        }
        crate::store::save(
            &self.cache_key,
            &self.path,
            STORE_MAGIC,
            &encode(&memo.entries),
        )?;
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

    #[test]
    fn blob_store_round_trip_and_corruption() {
        let dir = tempfile::tempdir().expect("tempdir");
        let blob = Oid::from_str("0123456789abcdef0123456789abcdef01234567").expect("oid");
        let other = Oid::from_str("89abcdef0123456789abcdef0123456789abcdef").expect("oid");
        let cache = BlobHashCache::new(dir.path(), crate::cache_key::CacheKey::from_secret(b"t"));
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

        let again = BlobHashCache::new(dir.path(), crate::cache_key::CacheKey::from_secret(b"t"));
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
            assert!(
                BlobHashCache::new(dir.path(), crate::cache_key::CacheKey::from_secret(b"t"))
                    .is_empty(),
                "flip at {at}"
            );
        }
        fs::write(&store, &good[..good.len() - 7]).expect("truncate");
        let rebuilt = BlobHashCache::new(dir.path(), crate::cache_key::CacheKey::from_secret(b"t"));
        assert!(rebuilt.is_empty());
        assert_eq!(rebuilt.sha256(blob, b"abc"), hex);
        rebuilt.persist().expect("persist");
        assert_eq!(
            BlobHashCache::new(dir.path(), crate::cache_key::CacheKey::from_secret(b"t"))
                .get(blob, 3),
            Some(hex)
        );
    }

    #[test]
    fn variant_hashes_are_remembered_and_read_nothing_when_known() {
        let dir = tempfile::tempdir().expect("tempdir");
        let blob = Oid::from_str("0123456789abcdef0123456789abcdef01234567").expect("oid");
        let cache = BlobHashCache::new(dir.path(), crate::cache_key::CacheKey::from_secret(b"t"));
        let (sha, vars) = cache
            .with_variants(blob, || Some(b"a\nb\n".to_vec()))
            .expect("read");
        assert_eq!(sha, sha256_hex(b"a\nb\n"));
        let names: Vec<&str> = vars.iter().map(|(n, _)| *n).collect();
        assert_eq!(names, ["crlf", "bom", "no-trailing-newline"]);
        assert_eq!(vars[0].1, sha256_hex(b"a\r\nb\r\n"));
        cache.persist().expect("persist");
        let again = BlobHashCache::new(dir.path(), crate::cache_key::CacheKey::from_secret(b"t"));
        let known = again.with_variants(blob, || panic!("read although known"));
        assert_eq!(known, Some((sha.clone(), vars)));
        assert_eq!(again.get(blob, 4), Some(sha));
    }

    /// Hashes of variants as another definition of them made (the store's
    /// body intact, its magic line an older build's) are never answered from.
    #[test]
    fn variants_another_definition_stored_are_worked_out_again() {
        let dir = tempfile::tempdir().expect("tempdir");
        let blob = Oid::from_str("0123456789abcdef0123456789abcdef01234567").expect("oid");
        let key = || crate::cache_key::CacheKey::from_secret(b"t");
        let cache = BlobHashCache::new(dir.path(), key());
        let made = cache.with_variants(blob, || Some(b"a\nb\n".to_vec()));
        cache.persist().expect("persist");
        let path = dir.path().join(VARIANTS_FILE);
        let body = crate::store::load(&key(), &path, &VARIANTS_MAGIC).expect("stored");
        crate::store::save(&key(), &path, b"pinaudit-variant-store v1\n", &body).expect("save");
        let again = BlobHashCache::new(dir.path(), key());
        let read = std::cell::Cell::new(false);
        let known = again.with_variants(blob, || {
            read.set(true);
            Some(b"a\nb\n".to_vec())
        });
        assert!(read.get(), "answered from another definition's store");
        assert_eq!(known, made);
    }

    #[test]
    fn persist_keeps_what_another_run_stored() {
        let dir = tempfile::tempdir().expect("tempdir");
        let a = Oid::from_str("0123456789abcdef0123456789abcdef01234567").expect("oid");
        let b = Oid::from_str("89abcdef0123456789abcdef0123456789abcdef").expect("oid");
        let first = BlobHashCache::new(dir.path(), crate::cache_key::CacheKey::from_secret(b"t"));
        let second = BlobHashCache::new(dir.path(), crate::cache_key::CacheKey::from_secret(b"t"));
        first.sha256(a, b"one");
        second.sha256(b, b"two");
        first.persist().expect("persist");
        second.persist().expect("persist");
        let merged = BlobHashCache::new(dir.path(), crate::cache_key::CacheKey::from_secret(b"t"));
        assert_eq!(merged.len(), 2);
    }
}
