//! A hostile server's endless pack: a valid pack header promising many
//! objects, then blob after blob until the test stops it (shared by the
//! `git://` and smart HTTP servers of `security` and `net`).

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

/// Writes the pack to `stream` until `stop` is set or the client goes away.
pub fn write_endless_pack(stream: &mut impl Write, stop: &AtomicBool) {
    // A count within the object side of an 8 MiB fetch budget (160 bytes an
    // object), so the bytes are what end it.
    write_pack_of(stream, stop, 50_000, 4000);
}

/// A pack announcing `count` objects (libgit2 refuses 2^32 - 1 outright: "out
/// of memory"), then blobs of `size` bytes (at least 4)
/// until `stop` is set or the client goes away: with a few bytes each, every
/// byte received costs the indexer far more memory than a large blob's.
pub fn write_pack_of(stream: &mut impl Write, stop: &AtomicBool, count: u32, size: usize) {
    let mut pack = b"PACK\0\0\0\x02".to_vec();
    pack.extend(count.to_be_bytes());
    if stream.write_all(&pack).is_err() {
        return;
    }
    let batch = (256 * 1024 / (size + 16)).max(1);
    let mut n: u32 = 0;
    while !stop.load(Ordering::SeqCst) {
        pack.clear();
        for _ in 0..batch {
            n = n.wrapping_add(1);
            pack.extend(blob_entry(n, size));
        }
        if stream.write_all(&pack).is_err() {
            return;
        }
    }
}

/// One pack entry: a blob of `size` bytes (distinct per `n`) as a stored zlib stream.
fn blob_entry(n: u32, size: usize) -> Vec<u8> {
    let mut data = vec![b'x'; size.max(4)];
    data[..4].copy_from_slice(&n.to_be_bytes());
    let size = data.len();
    // Type 3 (blob), size in 4 + 7-bit groups.
    let mut rest = size >> 4;
    let more = if rest > 0 { 0x80 } else { 0 };
    let mut out = vec![more | (3 << 4) | (size & 0x0f) as u8];
    while rest > 0 {
        let more = if rest >> 7 > 0 { 0x80 } else { 0 };
        out.push(more | (rest & 0x7f) as u8);
        rest >>= 7;
    }
    out.extend([0x78, 0x01, 0x01]);
    let len = u16::try_from(size).expect("small");
    out.extend(len.to_le_bytes());
    out.extend((!len).to_le_bytes());
    out.extend(&data);
    let (mut a, mut b) = (1u32, 0u32);
    for &byte in &data {
        a = (a + u32::from(byte)) % 65521;
        b = (b + a) % 65521;
    }
    out.extend(((b << 16) | a).to_be_bytes());
    out
}
