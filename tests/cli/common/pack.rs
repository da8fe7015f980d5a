//! A hostile server's endless pack: a valid pack header promising a million
//! objects, then blob after blob until the test stops it (shared by the
//! `git://` and smart HTTP servers of `security` and `net`).

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

/// Writes the pack to `stream` until `stop` is set or the client goes away.
pub fn write_endless_pack(stream: &mut impl Write, stop: &AtomicBool) {
    // A plausible count (libgit2 refuses 2^32 - 1 outright: "out of memory").
    let mut pack = b"PACK\0\0\0\x02\0\x0f\x42\x40".to_vec();
    if stream.write_all(&pack).is_err() {
        return;
    }
    let mut n: u32 = 0;
    while !stop.load(Ordering::SeqCst) {
        pack.clear();
        for _ in 0..64 {
            n += 1;
            pack.extend(blob_entry(n));
        }
        if stream.write_all(&pack).is_err() {
            return;
        }
    }
}

/// One pack entry: a 4000-byte blob (distinct per `n`) as a stored zlib stream.
fn blob_entry(n: u32) -> Vec<u8> {
    let mut data = vec![b'x'; 4000];
    data[..4].copy_from_slice(&n.to_be_bytes());
    let size = data.len();
    // Type 3 (blob), size in 4 + 7-bit groups.
    let mut out = vec![0x80 | (3 << 4) | (size & 0x0f) as u8];
    let mut rest = size >> 4;
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
