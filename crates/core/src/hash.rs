//! sha256 of cited documents and the near-miss variants a `hash-mismatch` names.
//!
//! Records state the sha256 of a document as the author's checkout saw it, which
//! is not always the blob git stores: a Windows checkout adds CRLF, an editor adds
//! or strips a BOM or the final newline. When the hash at the pinned revision
//! differs, the evidence says which of these [`variants`] does match, so a reader
//! can tell "same text, different bytes" from "different text".

use sha2::{Digest, Sha256};

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// A digest of this file, which says what the [`variants`] are and in what
/// order they are named: the version of what `CACHE/variants.store` remembers,
/// so that a build that changes a variant never reads back an older build's
/// hashes of them.
pub fn variants_version() -> String {
    sources_digest(&[include_str!("hash.rs")])
}

/// A short digest (16 hex digits) of source texts, each taken with its length:
/// what the memo stores name as the version of the code that made them.
pub fn sources_digest(sources: &[&str]) -> String {
    let mut h = Sha256::new();
    for s in sources {
        h.update((s.len() as u64).to_le_bytes());
        h.update(s.as_bytes());
    }
    to_hex(&h.finalize()[..8])
}

/// Lowercase hex sha256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    to_hex(&Sha256::digest(bytes))
}

pub fn to_hex(bytes: &[u8]) -> String {
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
/// pass over a stream (a 1 GB document with a wrong hash took six
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

/// The names [`variants`] gives, in its order.
pub const VARIANT_NAMES: [&str; 6] = [
    "crlf",
    "lf",
    "bom",
    "no-bom",
    "trailing-newline",
    "no-trailing-newline",
];

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
}
