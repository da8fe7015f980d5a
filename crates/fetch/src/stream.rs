//! Large blobs read as streams, straight from the object files (issues 12, 13).
//!
//! libgit2 materialises a whole object to read it (`git_odb_open_rstream` is not
//! supported for packs), so a 1 GB document took 1 GB of memory before pinaudit
//! looked at a byte of it. A blob over [`STREAM_THRESHOLD`] is instead inflated
//! here, chunk by chunk:
//!
//! - a loose object (`objects/xx/yyyy…`) is one zlib stream whose content follows
//!   a `blob <len>\0` header;
//! - a packed object is found through the pack's `.idx` (version 2: fan-out
//!   table, sorted ids, CRCs, 4-byte offsets, 8-byte large offsets; git's
//!   `Documentation/gitformat-pack.txt`), its entry header (type, then the size as
//!   a varint) is read, and the zlib stream after it is inflated. Blobs over
//!   git's `core.bigFileThreshold` (512 MiB) are stored whole; smaller ones that
//!   have several versions are usually deltas (an edited 150 MB document). A
//!   delta is applied as a stream too: its base (itself resolved the same way,
//!   down the chain) is spilled to an anonymous temporary file in the
//!   repository, which the delta's copy instructions seek in, so memory stays
//!   bounded and disk holds at most two versions at a time. An entry that can't
//!   be resolved so (a base outside every pack) is [`Opened::Delta`]: the caller
//!   reads it through libgit2 when that is affordable.
//!
//! While the bytes go by, [`BlobReader`] hashes `blob <len>\0` + content with sha1
//! and, at the end, compares the result with the blob id and the length with the
//! header's: a damaged object is an error ("cache damaged"), never bytes to judge.

use std::fs::File;
use std::io::{self, BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use flate2::bufread::ZlibDecoder;
use git2::Oid;
use sha1::{Digest, Sha1};

/// Blobs over this many bytes are read as streams; smaller ones in memory, as
/// before (same code path, same reports).
pub(crate) const STREAM_THRESHOLD: u64 = 16 << 20;

/// The content of one blob as it is inflated, checked against its id at the end.
pub(crate) struct BlobReader {
    inner: Box<dyn Read + Send>,
    id: Oid,
    /// The size the object header declares.
    size: u64,
    read: u64,
    sha1: Sha1,
    /// Where the object lives, for messages.
    origin: PathBuf,
    done: bool,
}

impl std::fmt::Debug for BlobReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BlobReader")
            .field("id", &self.id)
            .field("size", &self.size)
            .field("origin", &self.origin)
            .finish_non_exhaustive()
    }
}

/// What opening a blob as a stream found.
#[derive(Debug)]
pub(crate) enum Opened {
    Stream(BlobReader),
    /// The blob is stored as a delta in a pack: only libgit2 can rebuild it.
    Delta,
    /// No object file holds it (an alternate, or it is missing).
    NotFound,
}

impl BlobReader {
    fn new(inner: Box<dyn Read + Send>, id: Oid, size: u64, origin: PathBuf) -> BlobReader {
        let mut sha1 = Sha1::new();
        sha1.update(format!("blob {size}\0").as_bytes());
        BlobReader {
            inner,
            id,
            size,
            read: 0,
            sha1,
            origin,
            done: false,
        }
    }

    fn damaged(&self, what: &str) -> io::Error {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "object `{}` in `{}` is damaged: {what}",
                self.id,
                self.origin.display()
            ),
        )
    }
}

impl Read for BlobReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.done || buf.is_empty() {
            return Ok(0);
        }
        // Never more than the header declares: trailing garbage is damage.
        let left = self.size - self.read;
        let want = buf
            .len()
            .min(usize::try_from(left).unwrap_or(usize::MAX).max(1));
        let n = match self.inner.read(&mut buf[..want]) {
            Ok(n) => n,
            Err(e) => return Err(self.damaged(&e.to_string())),
        };
        if n == 0 {
            self.done = true;
            if self.read != self.size {
                return Err(self.damaged(&format!(
                    "`{}` bytes inflated, the header says `{}`",
                    self.read, self.size
                )));
            }
            let got = Oid::from_bytes(&self.sha1.clone().finalize()).ok();
            if got != Some(self.id) {
                return Err(self.damaged("its content does not hash to its id"));
            }
            return Ok(0);
        }
        if n as u64 > left {
            return Err(self.damaged("more content than its header says"));
        }
        self.read += n as u64;
        self.sha1.update(&buf[..n]);
        Ok(n)
    }
}

/// Opens blob `id` of the bare repository at `git_dir` as a stream.
pub(crate) fn open_blob(git_dir: &Path, id: Oid) -> io::Result<Opened> {
    let objects = git_dir.join("objects");
    let hex = id.to_string();
    let loose = objects.join(&hex[..2]).join(&hex[2..]);
    match File::open(&loose) {
        Ok(f) => return open_loose(f, id, loose).map(Opened::Stream),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    let Some((pack, offset)) = find_packed(git_dir, id)? else {
        return Ok(Opened::NotFound);
    };
    match object_at(git_dir, &pack, offset, 0)? {
        Some((3, size, reader)) => Ok(Opened::Stream(BlobReader::new(reader, id, size, pack))),
        Some(_) => Err(invalid(&pack, &format!("`{id}` is not a blob"))),
        None => Ok(Opened::Delta),
    }
}

/// Where the packed object `id` is: its pack and offset, in any pack of the
/// repository.
fn find_packed(git_dir: &Path, id: Oid) -> io::Result<Option<(PathBuf, u64)>> {
    let dir = git_dir.join("objects").join("pack");
    let mut idx: Vec<PathBuf> = match std::fs::read_dir(&dir) {
        Ok(d) => d
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "idx"))
            .collect(),
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    idx.sort();
    for path in idx {
        if let Some(offset) = find_in_idx(&path, id)? {
            return Ok(Some((path.with_extension("pack"), offset)));
        }
    }
    Ok(None)
}

fn invalid(path: &Path, what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("`{}` is damaged: {what}", path.display()),
    )
}

/// A loose object: zlib of `blob <len>\0` + content.
fn open_loose(f: File, id: Oid, path: PathBuf) -> io::Result<BlobReader> {
    let mut z = ZlibDecoder::new(BufReader::with_capacity(64 << 10, f));
    let mut header = Vec::with_capacity(32);
    let mut byte = [0u8; 1];
    loop {
        z.read_exact(&mut byte)
            .map_err(|e| invalid(&path, &format!("unreadable header ({e})")))?;
        if byte[0] == 0 {
            break;
        }
        header.push(byte[0]);
        if header.len() > 32 {
            return Err(invalid(&path, "header too long"));
        }
    }
    let size = std::str::from_utf8(&header)
        .ok()
        .and_then(|h| h.strip_prefix("blob "))
        .and_then(|n| n.parse::<u64>().ok())
        .ok_or_else(|| invalid(&path, "not a blob"))?;
    Ok(BlobReader::new(Box::new(z), id, size, path))
}

/// The offset of `id` in the pack that the version-2 index at `path` describes.
fn find_in_idx(path: &Path, id: Oid) -> io::Result<Option<u64>> {
    let mut f = BufReader::with_capacity(4096, File::open(path)?);
    let mut head = [0u8; 8];
    f.read_exact(&mut head)?;
    if head != [0xff, b't', b'O', b'c', 0, 0, 0, 2] {
        // Version-1 indexes predate 2008; libgit2 reads those blobs.
        return Ok(None);
    }
    let mut fanout = [0u8; 1024];
    f.read_exact(&mut fanout)?;
    let count = |i: usize| -> u64 {
        let b = &fanout[i * 4..i * 4 + 4];
        u64::from(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    };
    let want = id.as_bytes();
    let first = usize::from(want[0]);
    let total = count(255);
    let (mut lo, mut hi) = (if first == 0 { 0 } else { count(first - 1) }, count(first));
    if hi > total || lo > hi {
        return Err(invalid(path, "fan-out table out of order"));
    }
    const NAMES: u64 = 8 + 1024;
    let mut name = [0u8; 20];
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        f.seek(SeekFrom::Start(NAMES + mid * 20))?;
        f.read_exact(&mut name)?;
        match name.as_slice().cmp(want) {
            std::cmp::Ordering::Less => lo = mid + 1,
            std::cmp::Ordering::Greater => hi = mid,
            std::cmp::Ordering::Equal => {
                let offsets = NAMES + total * 20 + total * 4;
                let mut b = [0u8; 4];
                f.seek(SeekFrom::Start(offsets + mid * 4))?;
                f.read_exact(&mut b)?;
                let small = u32::from_be_bytes(b);
                if small & 0x8000_0000 == 0 {
                    return Ok(Some(u64::from(small)));
                }
                let large = offsets + total * 4 + u64::from(small & 0x7fff_ffff) * 8;
                let mut b = [0u8; 8];
                f.seek(SeekFrom::Start(large))?;
                f.read_exact(&mut b)?;
                return Ok(Some(u64::from_be_bytes(b)));
            }
        }
    }
    Ok(None)
}

/// An object's type, size and content as a stream.
type Object = (u8, u64, Box<dyn Read + Send>);

/// The longest delta chain followed (git's default `--depth` is 50).
const MAX_DEPTH: usize = 64;

/// The object at `offset` of the pack at `pack`: its type (1 commit, 2 tree, 3
/// blob, 4 tag), its size and its content as a stream; a delta is applied
/// against its base, resolved the same way and spilled to a temporary file.
/// `None` when its base is in no pack (or the chain is too long).
fn object_at(git_dir: &Path, pack: &Path, offset: u64, depth: usize) -> io::Result<Option<Object>> {
    let mut f = BufReader::with_capacity(64 << 10, File::open(pack)?);
    f.seek(SeekFrom::Start(offset))?;
    let mut byte = [0u8; 1];
    f.read_exact(&mut byte)?;
    let kind = (byte[0] >> 4) & 7;
    let mut size = u64::from(byte[0] & 0x0f);
    let mut shift = 4;
    while byte[0] & 0x80 != 0 {
        f.read_exact(&mut byte)?;
        if shift > 57 {
            return Err(invalid(pack, "entry size overflows"));
        }
        size |= u64::from(byte[0] & 0x7f) << shift;
        shift += 7;
    }
    let base = match kind {
        1..=4 => return Ok(Some((kind, size, Box::new(ZlibDecoder::new(f))))),
        6 => {
            // Offset encoding of gitformat-pack: big-endian 7-bit groups, each
            // continuation adding one.
            f.read_exact(&mut byte)?;
            let mut back = u64::from(byte[0] & 0x7f);
            while byte[0] & 0x80 != 0 {
                f.read_exact(&mut byte)?;
                back = back
                    .checked_add(1)
                    .and_then(|b| b.checked_mul(128))
                    .ok_or_else(|| invalid(pack, "delta base offset overflows"))?
                    | u64::from(byte[0] & 0x7f);
            }
            match offset.checked_sub(back) {
                Some(at) if back > 0 => Some((pack.to_path_buf(), at)),
                _ => return Err(invalid(pack, "delta base offset out of the pack")),
            }
        }
        7 => {
            let mut base = [0u8; 20];
            f.read_exact(&mut base)?;
            let base = Oid::from_bytes(&base).map_err(|e| invalid(pack, &e.to_string()))?;
            find_packed(git_dir, base)?
        }
        _ => return Err(invalid(pack, &format!("unknown entry type `{kind}`"))),
    };
    let Some((base_pack, base_offset)) = base else {
        return Ok(None);
    };
    if depth >= MAX_DEPTH {
        return Ok(None);
    }
    let Some((base_kind, base_size, mut base)) =
        object_at(git_dir, &base_pack, base_offset, depth + 1)?
    else {
        return Ok(None);
    };
    // Beside the mirror (same disk as the cache); a read-only cache spills to
    // the system's temporary directory instead.
    let mut spilled = tempfile::tempfile_in(git_dir).or_else(|_| tempfile::tempfile())?;
    let copied = io::copy(&mut base, &mut spilled)?;
    if copied != base_size {
        return Err(invalid(
            &base_pack,
            "a delta base is not the size its header says",
        ));
    }
    spilled.seek(SeekFrom::Start(0))?;
    let mut delta = ZlibDecoder::new(f);
    let declared_base =
        varint(&mut delta).ok_or_else(|| invalid(pack, "delta header unreadable"))?;
    let result = varint(&mut delta).ok_or_else(|| invalid(pack, "delta header unreadable"))?;
    if declared_base != base_size {
        return Err(invalid(pack, "a delta's base is not the size it says"));
    }
    Ok(Some((
        base_kind,
        result,
        Box::new(Delta {
            delta: Box::new(delta),
            base: BufReader::with_capacity(64 << 10, spilled),
            base_size,
            copy: 0,
            insert: 0,
            origin: pack.to_path_buf(),
        }),
    )))
}

/// A delta's size header: little-endian 7-bit groups.
fn varint(r: &mut impl Read) -> Option<u64> {
    let mut n = 0u64;
    let mut shift = 0;
    let mut byte = [0u8; 1];
    loop {
        r.read_exact(&mut byte).ok()?;
        if shift > 63 {
            return None;
        }
        n |= u64::from(byte[0] & 0x7f) << shift;
        shift += 7;
        if byte[0] & 0x80 == 0 {
            return Some(n);
        }
    }
}

/// A delta applied as it is read: copy instructions read the base (a file),
/// insert instructions the delta itself.
struct Delta {
    delta: Box<dyn Read + Send>,
    base: BufReader<File>,
    base_size: u64,
    /// Bytes left of the current copy from the base.
    copy: u64,
    /// Bytes left of the current insert from the delta.
    insert: u64,
    origin: PathBuf,
}

impl Read for Delta {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        loop {
            if self.insert > 0 {
                let n = buf
                    .len()
                    .min(usize::try_from(self.insert).unwrap_or(usize::MAX));
                self.delta.read_exact(&mut buf[..n])?;
                self.insert -= n as u64;
                return Ok(n);
            }
            if self.copy > 0 {
                let n = buf
                    .len()
                    .min(usize::try_from(self.copy).unwrap_or(usize::MAX));
                self.base.read_exact(&mut buf[..n])?;
                self.copy -= n as u64;
                return Ok(n);
            }
            let mut op = [0u8; 1];
            if self.delta.read(&mut op)? == 0 {
                return Ok(0);
            }
            let op = op[0];
            if op & 0x80 != 0 {
                let mut offset = 0u64;
                let mut size = 0u64;
                let mut byte = [0u8; 1];
                for i in 0..4 {
                    if op & (1 << i) != 0 {
                        self.delta.read_exact(&mut byte)?;
                        offset |= u64::from(byte[0]) << (8 * i);
                    }
                }
                for i in 0..3 {
                    if op & (0x10 << i) != 0 {
                        self.delta.read_exact(&mut byte)?;
                        size |= u64::from(byte[0]) << (8 * i);
                    }
                }
                if size == 0 {
                    size = 0x10000;
                }
                if offset
                    .checked_add(size)
                    .is_none_or(|end| end > self.base_size)
                {
                    return Err(invalid(&self.origin, "a delta copies past its base"));
                }
                self.base.seek(SeekFrom::Start(offset))?;
                self.copy = size;
            } else if op != 0 {
                self.insert = u64::from(op);
            } else {
                return Err(invalid(&self.origin, "a delta has the reserved opcode 0"));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_all(o: Opened) -> io::Result<Vec<u8>> {
        let Opened::Stream(mut r) = o else {
            panic!("not a stream: {o:?}")
        };
        let mut out = Vec::new();
        r.read_to_end(&mut out)?;
        Ok(out)
    }

    fn git(dir: &Path, args: &[&str]) {
        let ok = std::process::Command::new("git")
            .args(args)
            .current_dir(dir)
            .output()
            .expect("git");
        assert!(
            ok.status.success(),
            "{}",
            String::from_utf8_lossy(&ok.stderr)
        );
    }

    #[test]
    fn loose_and_packed_blobs_stream_and_verify() {
        let dir = tempfile::tempdir().expect("tempdir");
        let repo = git2::Repository::init_bare(dir.path()).expect("init");
        let content: Vec<u8> = (0..200_000u32)
            .flat_map(|i| format!("line {i}\n").into_bytes())
            .collect();
        let id = repo.blob(&content).expect("blob");
        assert_eq!(
            read_all(open_blob(dir.path(), id).expect("open")).expect("read"),
            content
        );

        // Packed (git gc moves it into a pack with a v2 index).
        let small = repo.blob(b"small\n").expect("blob");
        let mut tb = repo.treebuilder(None).expect("tb");
        tb.insert("a", id, 0o100644).expect("insert");
        tb.insert("b", small, 0o100644).expect("insert");
        let tree = tb.write().expect("tree");
        let sig = git2::Signature::now("t", "t@example.com").expect("sig");
        let tree = repo.find_tree(tree).expect("tree");
        repo.commit(Some("refs/heads/main"), &sig, &sig, "m", &tree, &[])
            .expect("commit");
        git(dir.path(), &["gc", "--quiet", "--prune=now"]);
        let hex = id.to_string();
        assert!(!dir
            .path()
            .join("objects")
            .join(&hex[..2])
            .join(&hex[2..])
            .exists());
        assert_eq!(
            read_all(open_blob(dir.path(), id).expect("open")).expect("read"),
            content
        );
        assert_eq!(
            read_all(open_blob(dir.path(), small).expect("open")).expect("read"),
            b"small\n"
        );
        let missing = Oid::from_str("0123456789abcdef0123456789abcdef01234567").expect("oid");
        assert!(matches!(
            open_blob(dir.path(), missing),
            Ok(Opened::NotFound)
        ));
    }

    #[test]
    fn deltas_are_applied_as_streams_down_the_chain() {
        let dir = tempfile::tempdir().expect("tempdir");
        let repo = git2::Repository::init_bare(dir.path()).expect("init");
        let sig = git2::Signature::now("t", "t@example.com").expect("sig");
        let mut versions = Vec::new();
        let mut parent: Option<Oid> = None;
        for v in 0..4u32 {
            let content: Vec<u8> = (0..60_000u32)
                .flat_map(|i| {
                    let edit = if i % 7_000 == v { "edited" } else { "" };
                    format!("line {i} {edit}\n").into_bytes()
                })
                .collect();
            let id = repo.blob(&content).expect("blob");
            let mut tb = repo.treebuilder(None).expect("tb");
            tb.insert("doc", id, 0o100644).expect("insert");
            let tree = repo.find_tree(tb.write().expect("tree")).expect("tree");
            let parents: Vec<git2::Commit> = parent
                .iter()
                .map(|p| repo.find_commit(*p).expect("parent"))
                .collect();
            let refs: Vec<&git2::Commit> = parents.iter().collect();
            parent = Some(
                repo.commit(Some("refs/heads/main"), &sig, &sig, "v", &tree, &refs)
                    .expect("commit"),
            );
            versions.push((id, content));
        }
        git(dir.path(), &["gc", "--quiet", "--prune=now"]);
        let packs: Vec<_> = std::fs::read_dir(dir.path().join("objects/pack"))
            .expect("packs")
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "idx"))
            .collect();
        let listing = std::process::Command::new("git")
            .arg("verify-pack")
            .arg("-v")
            .arg(&packs[0])
            .output()
            .expect("verify-pack");
        let listing = String::from_utf8_lossy(&listing.stdout);
        let deltas = versions
            .iter()
            .filter(|(id, _)| {
                listing
                    .lines()
                    .any(|l| l.starts_with(&id.to_string()) && l.split_whitespace().count() > 5)
            })
            .count();
        assert!(deltas >= 2, "the versions are not deltas:\n{listing}");
        for (id, content) in &versions {
            let got = read_all(open_blob(dir.path(), *id).expect("open")).expect("read");
            assert!(got == *content, "version `{id}` differs");
        }
    }

    #[test]
    fn a_damaged_loose_object_is_an_error_not_bytes() {
        let dir = tempfile::tempdir().expect("tempdir");
        let repo = git2::Repository::init_bare(dir.path()).expect("init");
        let id = repo.blob(b"x = 2.9\n").expect("blob");
        let other = repo.blob(b"x = 3.9\n").expect("blob");
        let hex = id.to_string();
        let path = dir.path().join("objects").join(&hex[..2]).join(&hex[2..]);
        let ohex = other.to_string();
        let opath = dir.path().join("objects").join(&ohex[..2]).join(&ohex[2..]);
        // Another object's (valid) zlib under this id: inflates fine, hashes wrong.
        let mut perms = std::fs::metadata(&path).expect("meta").permissions();
        #[allow(clippy::permissions_set_readonly_false)]
        perms.set_readonly(false);
        std::fs::set_permissions(&path, perms).expect("chmod");
        std::fs::copy(&opath, &path).expect("copy");
        let err = read_all(open_blob(dir.path(), id).expect("open")).expect_err("damaged");
        assert!(err.to_string().contains("does not hash to its id"), "{err}");
    }
}
