//! How a sync may use the network: the limits every transport and the mirror
//! lifecycle read.

use std::time::Duration;

/// How a sync may use the network.
#[derive(Debug, Clone)]
pub struct SyncOptions {
    /// No network at all: only report what the cache already holds.
    pub offline: bool,
    /// Longest wait for a TCP connection to be established.
    pub connect_timeout: Duration,
    /// Longest wait for any single read or write on an established
    /// connection (an idle limit, not a limit on the whole transfer).
    pub timeout: Duration,
    /// At most this many other refs (pull/merge-request refs) are fetched
    /// when the server refuses to hand out a commit by id.
    pub max_other_refs: usize,
    /// Longest time one repository's whole sync may take, however steadily
    /// the server trickles (`--deadline`): an idle limit alone never ends a
    /// server that sends a byte every few seconds.
    pub deadline: Duration,
    /// Most bytes one repository's sync may receive in packs (`--max-fetch-mib`):
    /// an endless pack is cut off instead of filling memory and disk.
    pub max_fetch_bytes: u64,
    /// Most objects one repository's sync may receive (`--max-fetch-objects`):
    /// libgit2's indexer keeps memory per object, so a pack of tiny objects
    /// costs many times its bytes; this bounds memory by the pack's shape.
    pub max_fetch_objects: u64,
    /// Most bytes a `git://` server's ref advertisement may take
    /// (`--max-refs-mib`): an endless one is cut off before it fills memory.
    pub max_ref_bytes: u64,
    /// Connect only to public addresses, checked on the addresses actually
    /// connected to (`git://` and smart HTTP): set for a record's own host
    /// without `--allow-local`, never for a `--rewrite` target the user chose.
    pub public_only: bool,
    /// Where connections go: the command's `--resolve` pins.
    pub network: crate::net::Network,
    /// The largest object libgit2 may build in memory while a pack is
    /// indexed (a delta's result), in bytes: `--max-document-size` when given,
    /// else [`DEFAULT_MAX_OBJECT_BYTES`]; never less than the index of
    /// [`Self::max_fetch_objects`] objects needs, nor 64 MiB (`crate::alloc`).
    /// A pack holding a larger one ends the fetch before it is built.
    pub max_object_bytes: u64,
}

/// Default of [`SyncOptions::deadline`]: a cold mirror of a large benchmark
/// repository takes minutes, not a quarter of an hour.
pub const DEFAULT_DEADLINE: Duration = Duration::from_secs(900);
/// Default of [`SyncOptions::max_fetch_bytes`] (4 GiB): above any benchmark
/// repository's history pinaudit has met, far below a disk.
pub const DEFAULT_MAX_FETCH_BYTES: u64 = 4 << 30;
/// Default of [`SyncOptions::max_fetch_objects`] (1 million): some 120 MiB of
/// index memory; the benchmark repositories pinaudit has met hold tens of
/// thousands of objects, the largest forge repositories several millions.
pub const DEFAULT_MAX_FETCH_OBJECTS: u64 = 1_000_000;
/// Default of [`SyncOptions::max_object_bytes`] (192 MiB): a delta of a few
/// bytes can expand to gigabytes, and libgit2 builds each delta's result
/// whole; larger documents are read as streams anyway.
pub const DEFAULT_MAX_OBJECT_BYTES: u64 = 192 << 20;
/// Default of [`SyncOptions::max_ref_bytes`] (32 MiB, some 400 000 refs): the
/// largest forge repositories advertise a few MiB.
pub const DEFAULT_MAX_REF_BYTES: u64 = 32 << 20;

impl Default for SyncOptions {
    fn default() -> Self {
        SyncOptions {
            offline: false,
            connect_timeout: Duration::from_secs(30),
            timeout: Duration::from_secs(120),
            max_other_refs: 200,
            deadline: DEFAULT_DEADLINE,
            max_fetch_bytes: DEFAULT_MAX_FETCH_BYTES,
            max_fetch_objects: DEFAULT_MAX_FETCH_OBJECTS,
            max_ref_bytes: DEFAULT_MAX_REF_BYTES,
            max_object_bytes: DEFAULT_MAX_OBJECT_BYTES,
            public_only: false,
            network: crate::net::Network::default(),
        }
    }
}
