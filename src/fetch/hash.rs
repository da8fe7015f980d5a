//! sha256 of cited documents, the near-miss variants a `hash-mismatch` names, and
//! an on-disk memo of sha256 by git blob id.
//!
//! Records state the sha256 of a document as the author's checkout saw it, which
//! is not always the blob git stores: a Windows checkout adds CRLF, an editor adds
//! or strips a BOM or the final newline. When the hash at the pinned revision
//! differs, the evidence says which of these [`variants`] does match, so a reader
//! can tell "same text, different bytes" from "different text".
//!
//! A git blob never changes, so its sha256 is computed once and kept for good in
//! `cache/blobs/` ([`BlobHashCache`]), which makes warm re-checks cheap.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use git2::Oid;
use sha2::{Digest, Sha256};

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// Lowercase hex sha256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    to_hex(&Sha256::digest(bytes))
}

fn to_hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(char::from(DIGITS[usize::from(b >> 4)]));
        s.push(char::from(DIGITS[usize::from(b & 0xf)]));
    }
    s
}

/// Whether `s` is a well-formed lowercase sha256 hex digest.
fn is_sha256_hex(s: &str) -> bool {
    s.len() == 64
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
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

/// sha256 by git blob id, kept in `CACHE/blobs/<2 hex>/<38 hex>.sha256`.
///
/// Safe for concurrent runs: an entry is written to a unique temporary file
/// in the same directory and renamed into place, so a reader sees either no
/// entry or a whole one. A damaged entry is ignored and recomputed. Failing
/// to write is not an error: the memo only saves time.
#[derive(Debug, Clone)]
pub struct BlobHashCache {
    dir: PathBuf,
}

impl BlobHashCache {
    /// The memo under `cache_root` (the directory that also holds `git/`).
    pub fn new(cache_root: &Path) -> Self {
        BlobHashCache {
            dir: cache_root.join("blobs"),
        }
    }

    fn entry(&self, blob: Oid) -> PathBuf {
        let hex = blob.to_string();
        let (fan, rest) = hex.split_at(2);
        self.dir.join(fan).join(format!("{rest}.sha256"))
    }

    /// The remembered sha256 of `blob`, if there is a sound entry.
    pub fn get(&self, blob: Oid) -> Option<String> {
        let text = fs::read_to_string(self.entry(blob)).ok()?;
        let hex = text.trim_end();
        is_sha256_hex(hex).then(|| hex.to_string())
    }

    /// Remember `sha256_hex` for `blob`.
    pub fn put(&self, blob: Oid, sha256_hex: &str) -> std::io::Result<()> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        if !is_sha256_hex(sha256_hex) {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("`{sha256_hex}` is not a sha256 hex digest"),
            ));
        }
        let path = self.entry(blob);
        let Some(dir) = path.parent() else {
            return Ok(());
        };
        fs::create_dir_all(dir)?;
        let tmp = dir.join(format!(
            ".{}.{}.{}.tmp",
            blob,
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        let written = fs::File::create(&tmp).and_then(|mut f| {
            f.write_all(format!("{sha256_hex}\n").as_bytes())?;
            f.sync_all()
        });
        let result = written.and_then(|()| fs::rename(&tmp, &path));
        if result.is_err() {
            // Best effort: a stray temporary file is harmless but untidy.
            let _ = fs::remove_file(&tmp);
        }
        result
    }

    /// The sha256 of `blob`, whose content is `bytes`: from the memo when it
    /// has a sound entry, else computed and remembered.
    pub fn sha256(&self, blob: Oid, bytes: &[u8]) -> String {
        if let Some(hex) = self.get(blob) {
            return hex;
        }
        let hex = sha256_hex(bytes);
        // Ignored on purpose: a read-only cache must not fail an audit.
        let _ = self.put(blob, &hex);
        hex
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn blob_cache_round_trip_and_corruption() {
        let dir = tempfile::tempdir().expect("tempdir");
        let cache = BlobHashCache::new(dir.path());
        let blob = Oid::from_str("0123456789abcdef0123456789abcdef01234567").expect("oid");
        assert_eq!(cache.get(blob), None);
        let hex = cache.sha256(blob, b"abc");
        assert_eq!(hex, sha256_hex(b"abc"));
        let entry = dir
            .path()
            .join("blobs/01/23456789abcdef0123456789abcdef01234567.sha256");
        assert!(entry.is_file());
        assert_eq!(cache.get(blob), Some(hex.clone()));

        // A memo entry is trusted: a later call does not rehash.
        assert_eq!(cache.sha256(blob, b"different bytes"), hex);

        // A damaged entry is ignored and replaced.
        fs::write(&entry, "garbage").expect("write");
        assert_eq!(cache.get(blob), None);
        assert_eq!(cache.sha256(blob, b"abc"), hex);
        assert_eq!(cache.get(blob), Some(hex));
    }
}
