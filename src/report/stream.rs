//! A report written record by record ([`super::Streamed`]): each record's
//! fragment is rendered where it was checked and written here in record order,
//! so a report of any size holds no more than the records being checked. What
//! a format says before its records but only the end knows (JSON's and
//! Markdown's summary) is written last, with the records spooled meanwhile to
//! an unnamed temporary file (in the cache, else the system's temporary
//! directory, else memory) and copied out after it: the v1 JSON keeps its key
//! order, `summary` before `records`.

use std::io::Write;
use std::path::Path;

use super::v1::{self, ClaimStatus, Counts, FindingReport, Report, SourceStatus, Summary, Tool};
use super::{Out, RenderOptions, Streamed};
use crate::finding::{Finding, Severity};
use crate::result::{Leftover, RecordResult};
use pinaudit_core::memo::{Dec, Enc};

/// What the head and tail of a report say about all of it.
#[derive(Debug, Clone, Default)]
pub(crate) struct Totals {
    pub(crate) tool: Tool,
    pub(crate) generated_at: String,
    pub(crate) summary: Summary,
    /// The most severe finding that counts.
    pub(crate) worst: Option<Severity>,
    /// The oldest `stale_since` of any source.
    pub(crate) oldest_stale: Option<String>,
}

impl Totals {
    /// The totals of a report held whole.
    pub(crate) fn of(report: &Report) -> Totals {
        Totals {
            tool: report.tool.clone(),
            generated_at: report.generated_at.clone(),
            summary: report.summary.clone(),
            worst: report.worst(),
            oldest_stale: report
                .records
                .iter()
                .flat_map(|r| &r.sources)
                .filter_map(|s| s.stale_since.clone())
                .min(),
        }
    }

    /// Counts one record in (its report and its findings, all of them).
    fn add(&mut self, r: &v1::RecordReport, findings: &[FindingReport]) {
        let s = &mut self.summary;
        s.records += 1;
        s.sources += r.sources.len();
        s.claims += r.claims.len();
        s.verified_claims += r
            .claims
            .iter()
            .filter(|c| matches!(c.status, ClaimStatus::Verified | ClaimStatus::Rounded))
            .count();
        for c in &r.claims {
            s.claims_by_status.add(c.status);
        }
        for src in &r.sources {
            s.unchecked_sources += usize::from(src.status == SourceStatus::Unchecked);
            if let Some(t) = &src.stale_since {
                s.stale_sources += 1;
                if self.oldest_stale.as_ref().is_none_or(|o| t < o) {
                    self.oldest_stale = Some(t.clone());
                }
            }
        }
        self.add_findings(findings);
    }

    fn add_findings(&mut self, findings: &[FindingReport]) {
        let s = &mut self.summary;
        for f in findings {
            count(&mut s.findings, f.severity);
            s.baseline_findings += usize::from(f.baseline);
            s.ignored_findings += usize::from(f.ignored.is_some());
            if f.counts() {
                self.worst = self.worst.max(Some(f.severity));
            }
        }
    }

    fn merge(&mut self, other: &Totals) {
        let (s, o) = (&mut self.summary, &other.summary);
        s.records += o.records;
        s.sources += o.sources;
        s.claims += o.claims;
        s.verified_claims += o.verified_claims;
        let (b, ob) = (&mut s.claims_by_status, &o.claims_by_status);
        b.verified += ob.verified;
        b.rounded += ob.rounded;
        b.shifted += ob.shifted;
        b.missing += ob.missing;
        b.unchecked += ob.unchecked;
        s.unchecked_sources += o.unchecked_sources;
        s.stale_sources += o.stale_sources;
        s.findings.error += o.findings.error;
        s.findings.warning += o.findings.warning;
        s.findings.note += o.findings.note;
        s.baseline_findings += o.baseline_findings;
        s.ignored_findings += o.ignored_findings;
        self.worst = self.worst.max(other.worst);
        if let Some(t) = &other.oldest_stale {
            if self.oldest_stale.as_ref().is_none_or(|o| t < o) {
                self.oldest_stale = Some(t.clone());
            }
        }
    }
}

fn count(c: &mut Counts, s: Severity) {
    match s {
        Severity::Error => c.error += 1,
        Severity::Warning => c.warning += 1,
        Severity::Note => c.note += 1,
    }
}

/// One record's part of a report, rendered, with what it adds to the totals.
pub(crate) struct Fragment {
    parts: Vec<Part>,
    totals: Totals,
    /// Its findings left out below `--min-severity`.
    hidden: usize,
}

/// A fragment's part of one section of a report: as rendered, or as the
/// whole-record memo keeps it (LZ4, its size first), unpacked where it is
/// written out, so a record answered from the memo is never decompressed
/// into a spool and read back.
#[derive(Debug, Clone, PartialEq)]
enum Part {
    Plain(Vec<u8>),
    /// A slice of the memo's entry (no copy).
    Packed(bytes::Bytes),
}

impl Part {
    fn is_empty(&self) -> bool {
        match self {
            Part::Plain(p) => p.is_empty(),
            // Its size is checked readable when the part is decoded.
            Part::Packed(p) => p.get(..4) == Some(&[0; 4]),
        }
    }
}

/// How a report is written: its format, the renderer's options and, for text
/// and github, the findings it leaves out (`--min-severity`; the counts still
/// include them).
#[derive(Clone, Copy)]
pub(crate) struct Style<'a> {
    pub(crate) format: &'static dyn Streamed,
    pub(crate) opts: RenderOptions<'a>,
    pub(crate) hide_below: Option<Severity>,
}

impl Style<'_> {
    /// Renders a checked record (on the worker that checked it): its report,
    /// its findings' reports (moved out of the result) and its fragment.
    pub(crate) fn fragment(&self, r: RecordResult) -> Fragment {
        let (record, findings) = v1::record_and_findings(r);
        let mut totals = Totals::default();
        totals.add(&record, &findings);
        let shown: Vec<&FindingReport> = findings
            .iter()
            .filter(|f| self.hide_below.is_none_or(|min| f.severity >= min))
            .collect();
        let hidden = findings.len() - shown.len();
        let parts = self.render(|format, outs| {
            if format.grouped() {
                format.record(&record, &shown, &self.opts, outs);
            } else {
                format.record(&record, &[], &self.opts, outs);
                format.findings(&shown, &[&record], &self.opts, outs);
            }
        });
        Fragment {
            parts: parts.into_iter().map(Part::Plain).collect(),
            totals,
            hidden,
        }
    }

    fn render(&self, f: impl FnOnce(&dyn Streamed, &mut [Out])) -> Vec<Vec<u8>> {
        let mut parts = vec![Vec::new(); self.format.sections()];
        {
            let mut outs: Vec<Out> = parts
                .iter_mut()
                .map(|p| Out::new(p as &mut dyn Write))
                .collect();
            f(self.format, &mut outs);
        }
        parts
    }
}

impl Style<'_> {
    /// What a record's fragment depends on beyond the record's result: the
    /// format, how it renders, the findings it hides.
    pub(crate) fn depends(&self) -> Vec<u8> {
        let mut e = Enc::default();
        let o = &self.opts;
        e.str(self.format.name())
            .bool(o.color)
            .opt_str(o.shard.map(|s| s.to_string()).as_deref())
            .opt_str(o.fail_on)
            .opt_str(o.baseline.map(|b| b.display().to_string()).as_deref())
            .opt_severity(self.hide_below)
            .bool(o.verbose);
        e.0
    }
}

/// A fragment as the whole-record memo keeps it: its parts as rendered,
/// what it adds to the totals, how many of its findings it hides.
impl Fragment {
    pub(crate) fn encode(&self, e: &mut Enc) {
        // Compressed part by part (a JSON report about fourfold), each read
        // back straight into its own buffer.
        e.u32(self.parts.len() as u32);
        for p in &self.parts {
            match p {
                Part::Plain(p) => e.bytes(&lz4_flex::compress_prepend_size(p)),
                Part::Packed(p) => e.bytes(p),
            };
        }
        let (mut summary, mut hidden) = (self.totals.summary.clone(), self.hidden);
        for n in counts(&mut summary, &mut hidden) {
            e.u64(*n as u64);
        }
        e.opt_severity(self.totals.worst)
            .opt_str(self.totals.oldest_stale.as_deref());
    }

    /// What [`Fragment::encode`] wrote, for a format of `sections` sections,
    /// read from `d`, a part of `entry` (the packed parts stay slices of it).
    pub(crate) fn decode(d: &mut Dec, sections: usize, entry: &bytes::Bytes) -> Option<Fragment> {
        let n = d.u32()? as usize;
        if n != sections {
            return None;
        }
        let parts = (0..n)
            .map(|_| {
                let packed = d.bytes()?;
                unpacked_size(packed).map(|_| Part::Packed(slice_of(entry, packed)))
            })
            .collect::<Option<Vec<_>>>()?;
        let (mut totals, mut hidden) = (Totals::default(), 0);
        for n in counts(&mut totals.summary, &mut hidden) {
            *n = usize::try_from(d.u64()?).ok()?;
        }
        totals.worst = d.opt_severity()?;
        totals.oldest_stale = d.opt_string()?;
        Some(Fragment {
            parts,
            totals,
            hidden,
        })
    }
}

/// The counts a record adds to a report's summary, and the findings it hides,
/// in the order the whole-record memo keeps them (every field of the
/// summary is named: one the memo leaves out is left out on purpose).
fn counts<'a>(s: &'a mut Summary, hidden: &'a mut usize) -> [&'a mut usize; 17] {
    let Summary {
        records,
        sources,
        claims,
        verified_claims,
        unchecked_sources,
        stale_sources,
        complete: _,
        findings,
        baseline_findings,
        ignored_findings,
        baseline_resolved: _,
        baseline_not_rechecked: _,
        claims_by_status: by,
    } = s;
    [
        records,
        sources,
        claims,
        verified_claims,
        &mut by.verified,
        &mut by.rounded,
        &mut by.shifted,
        &mut by.missing,
        &mut by.unchecked,
        unchecked_sources,
        stale_sources,
        &mut findings.error,
        &mut findings.warning,
        &mut findings.note,
        baseline_findings,
        ignored_findings,
        hidden,
    ]
}

/// `part` as a slice of `whole` when it lies within it (no copy), else a copy.
fn slice_of(whole: &bytes::Bytes, part: &[u8]) -> bytes::Bytes {
    let (w, p) = (whole.as_ptr_range(), part.as_ptr_range());
    match w.start <= p.start && p.end <= w.end {
        true => whole.slice_ref(part),
        false => bytes::Bytes::copy_from_slice(part),
    }
}

/// The size a part compressed by [`Fragment::encode`] names, when LZ4 can
/// make that much of it (the size is never trusted further).
fn unpacked_size(packed: &[u8]) -> Option<usize> {
    let size = u32::from_le_bytes(packed.get(..4)?.try_into().ok()?) as usize;
    (size <= packed.len().saturating_mul(255)).then_some(size)
}

/// A part of a fragment kept in the whole-record memo that does not
/// decompress to the size it names, found where it is written out. The store
/// it came from is authenticated (only pinaudit's own encoder wrote what
/// verifies), so this is a defect, never an input: the report's write fails,
/// and [`crate::commands`] drops the store so that the next run checks every
/// record afresh. (Walking each part's LZ4 sequences to find this before the
/// report was written cost as much as unpacking them, a sixth of an offline
/// re-check, and caught no corruption that still decodes.)
#[derive(Debug)]
pub(crate) struct KeptPartBroken;

impl std::fmt::Display for KeptPartBroken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a report fragment kept in the cache does not decompress")
    }
}

impl std::error::Error for KeptPartBroken {}

impl KeptPartBroken {
    fn error() -> std::io::Error {
        std::io::Error::other(KeptPartBroken)
    }

    /// Whether `e` says that a kept part did not decompress.
    pub(crate) fn is(e: &std::io::Error) -> bool {
        e.get_ref()
            .is_some_and(|inner| inner.is::<KeptPartBroken>())
    }
}

/// A part compressed by [`Fragment::encode`], decompressed into `into` (room
/// reused from part to part), when it decompresses to the size it names.
fn unpack_into<'b>(packed: &[u8], into: &'b mut Vec<u8>) -> std::io::Result<&'b [u8]> {
    let size = unpacked_size(packed).ok_or_else(KeptPartBroken::error)?;
    if into.len() < size {
        into.resize(size, 0);
    }
    unpack_exactly(packed, &mut into[..size])?;
    Ok(&into[..size])
}

/// Decompresses a part (its size checked by [`unpacked_size`]) into `into`,
/// which is that size, when it decompresses to exactly that.
fn unpack_exactly(packed: &[u8], into: &mut [u8]) -> std::io::Result<()> {
    match lz4_flex::block::decompress_into(&packed[4..], into) {
        Ok(n) if n == into.len() => Ok(()),
        _ => Err(KeptPartBroken::error()),
    }
}

/// The most bytes of packed parts a spooled section holds in memory, to be
/// unpacked straight into the output; past it, parts are unpacked into the
/// spool as they come.
const PACKED_HELD_MAX: usize = 64 << 20;

/// Where one section of the body goes until it can be written.
enum Section {
    /// Straight to the output.
    Direct,
    File(Spool),
    Memory(Vec<u8>),
}

/// A section spooled to a file: what was rendered goes to the file, packed
/// parts are held (up to [`PACKED_HELD_MAX`]) between its stretches, in order.
struct Spool {
    file: std::io::BufWriter<std::fs::File>,
    /// The section in order: stretches of the file (their lengths), and the
    /// packed parts held between them.
    order: Vec<Stretch>,
    held: usize,
    /// [`PACKED_HELD_MAX`], but in tests.
    held_max: usize,
    /// [`ASIDE_MIN`], but in tests.
    aside_min: u64,
}

enum Stretch {
    Spooled(u64),
    Packed(bytes::Bytes),
}

impl Spool {
    fn write(&mut self, b: &[u8]) -> std::io::Result<()> {
        match self.order.last_mut() {
            Some(Stretch::Spooled(n)) => *n += b.len() as u64,
            _ => self.order.push(Stretch::Spooled(b.len() as u64)),
        }
        self.file.write_all(b)
    }

    /// Writes the section out to `to`: its stretches are put together a
    /// megabyte at a time (the file read back, the parts held unpacked), by
    /// makers of their own, one per core, while this thread writes what is
    /// ready in order; a section of less than [`ASIDE_MIN`] is put together
    /// here. (One maker left the writer waiting: unpacking 37 MB takes it
    /// longer than writing them, 12 against 8 ms.)
    fn copy_out(self, to: &mut dyn Write) -> std::io::Result<()> {
        let file = self.file.into_inner().map_err(|e| e.into_error())?;
        let (chunks, broken) = plan_chunks(self.order);
        let size: usize = chunks.iter().map(|c| c.size).sum();
        let makers = std::thread::available_parallelism().map_or(1, |n| n.get().min(MAKERS_MAX));
        let here = |to: &mut dyn Write| {
            let (mut room, mut scratch) = (Vec::new(), Vec::new());
            for chunk in &chunks {
                chunk.fill(&file, &mut room, &mut scratch)?;
                to.write_all(&room[..chunk.size])?;
            }
            Ok(())
        };
        let written = match (size as u64) < self.aside_min {
            true => here(to),
            false => {
                let board = Board {
                    state: std::sync::Mutex::new(Made::default()),
                    moved: std::sync::Condvar::new(),
                    ahead: makers + 1,
                };
                let (chunks, file, board) = (&chunks, &file, &board);
                std::thread::scope(|scope| {
                    let started: Vec<_> = (0..makers)
                        .map_while(|_| {
                            std::thread::Builder::new()
                                .name("pinaudit-report".into())
                                .spawn_scoped(scope, move || board.make(chunks, file))
                                .ok()
                        })
                        .collect();
                    if started.is_empty() {
                        // No thread to spare: put together here.
                        return here(to);
                    }
                    let written = board.write_out(chunks, to);
                    // Joined here, so that a maker that panicked fails the
                    // write instead of the scope.
                    let made = started.into_iter().all(|m| m.join().is_ok());
                    written.and_then(|()| made.then_some(()).ok_or_else(maker_failed))
                })
            }
        };
        written.and(broken.map_or(Ok(()), Err))
    }
}

/// A spooled section this long or longer is put together by makers of its
/// own while it is written.
const ASIDE_MIN: u64 = 4 << 20;

/// The most makers a section is put together by.
const MAKERS_MAX: usize = 4;

/// The bytes put together before they are handed on.
const CHUNK: usize = 1 << 20;

/// About [`CHUNK`] bytes of a spooled section: the spool file's bytes from
/// `file_at` on and the packed parts between them, in order.
struct Chunk {
    file_at: u64,
    pieces: Vec<Piece>,
    /// How many bytes it makes.
    size: usize,
}

enum Piece {
    /// This many bytes of the spool file, the next after the chunk's last.
    Spooled(usize),
    /// A packed part and the size it names.
    Packed(bytes::Bytes, usize),
}

/// A spooled section's stretches `order` cut into chunks of about [`CHUNK`]
/// bytes (a part longer than that is a chunk of its own), and the error at
/// the first part whose size does not read: what comes before it is written
/// out, then the write fails.
fn plan_chunks(order: Vec<Stretch>) -> (Vec<Chunk>, Option<std::io::Error>) {
    let (mut chunks, mut file_at) = (Vec::new(), 0u64);
    let mut chunk = Chunk::at(file_at);
    let mut close = |chunk: &mut Chunk, file_at: u64| {
        chunks.push(std::mem::replace(chunk, Chunk::at(file_at)));
    };
    let mut broken = None;
    for stretch in order {
        match stretch {
            Stretch::Spooled(n) => {
                let mut n = usize::try_from(n).unwrap_or(usize::MAX);
                while n > 0 {
                    if chunk.size >= CHUNK {
                        close(&mut chunk, file_at);
                    }
                    let take = (CHUNK - chunk.size).min(n);
                    chunk.pieces.push(Piece::Spooled(take));
                    chunk.size += take;
                    file_at += take as u64;
                    n -= take;
                }
            }
            Stretch::Packed(p) => {
                let Some(size) = unpacked_size(&p) else {
                    broken = Some(KeptPartBroken::error());
                    break;
                };
                if chunk.size > 0 && size > CHUNK.saturating_sub(chunk.size) {
                    close(&mut chunk, file_at);
                }
                chunk.pieces.push(Piece::Packed(p, size));
                chunk.size += size;
            }
        }
    }
    if chunk.size > 0 {
        close(&mut chunk, file_at);
    }
    (chunks, broken)
}

impl Chunk {
    /// An empty chunk whose spool bytes begin at `file_at`.
    fn at(file_at: u64) -> Chunk {
        Chunk {
            file_at,
            pieces: Vec::new(),
            size: 0,
        }
    }

    /// Puts the chunk together in `room` (grown to its size when shorter,
    /// never shrunk: what is written into room that comes back is never
    /// zeroed first), reading the spool `file` where it is, through
    /// `scratch` when the chunk's bytes of it are in more than one piece.
    fn fill(
        &self,
        file: &std::fs::File,
        room: &mut Vec<u8>,
        scratch: &mut Vec<u8>,
    ) -> std::io::Result<()> {
        if room.len() < self.size {
            // Zeroed by the allocator (fresh pages are, untouched until used).
            room.resize(self.size.max(CHUNK), 0);
        }
        let (stretches, len) = self.pieces.iter().fold((0, 0), |(k, len), p| match p {
            Piece::Spooled(n) => (k + 1, len + n),
            Piece::Packed(..) => (k, len),
        });
        let in_place = stretches <= 1;
        if !in_place {
            if scratch.len() < len {
                scratch.resize(len, 0);
            }
            read_exact_at(file, &mut scratch[..len], self.file_at)?;
        }
        let (mut at, mut read) = (0, 0);
        for piece in &self.pieces {
            match piece {
                Piece::Spooled(n) => {
                    let into = &mut room[at..at + n];
                    match in_place {
                        true => read_exact_at(file, into, self.file_at)?,
                        false => into.copy_from_slice(&scratch[read..read + n]),
                    }
                    (at, read) = (at + n, read + n);
                }
                Piece::Packed(p, size) => {
                    unpack_exactly(p, &mut room[at..at + size])?;
                    at += size;
                }
            }
        }
        Ok(())
    }
}

/// `buf.len()` bytes of `file` from `at` on (the spool is read by several
/// makers at once, each where it needs).
fn read_exact_at(file: &std::fs::File, buf: &mut [u8], at: u64) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        std::os::unix::fs::FileExt::read_exact_at(file, buf, at)
    }
    #[cfg(windows)]
    {
        let (mut buf, mut at) = (buf, at);
        while !buf.is_empty() {
            match std::os::windows::fs::FileExt::seek_read(file, buf, at) {
                Ok(0) => return Err(std::io::ErrorKind::UnexpectedEof.into()),
                Ok(n) => {
                    buf = &mut buf[n..];
                    at += n as u64;
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}

/// The write's error when a maker stopped short (it panicked).
fn maker_failed() -> std::io::Error {
    std::io::Error::other("putting the report together failed")
}

/// What the makers of a section and its writer share.
struct Board {
    state: std::sync::Mutex<Made>,
    moved: std::sync::Condvar,
    /// How many chunks may be put together ahead of the next to write.
    ahead: usize,
}

#[derive(Default)]
struct Made {
    /// The next chunk no maker has taken.
    next: usize,
    /// How many chunks were written.
    written: usize,
    /// Chunks put together and not yet written, by index.
    ready: std::collections::BTreeMap<usize, std::io::Result<Vec<u8>>>,
    /// Room written out, to be filled again.
    spare: Vec<Vec<u8>>,
    /// Nothing more is to be put together (the write failed or ended).
    stopped: bool,
    /// A maker stopped short (it panicked): its chunk never comes.
    failed: bool,
}

impl Board {
    fn lock(&self) -> std::sync::MutexGuard<'_, Made> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn wait<'g>(&self, g: std::sync::MutexGuard<'g, Made>) -> std::sync::MutexGuard<'g, Made> {
        self.moved.wait(g).unwrap_or_else(|e| e.into_inner())
    }

    fn stop(&self) {
        self.lock().stopped = true;
        self.moved.notify_all();
    }

    /// A maker: takes the next chunk while it is no more than `ahead` past
    /// the next to write, puts it together, hands it on; until every chunk
    /// is taken or the writer stops.
    fn make(&self, chunks: &[Chunk], file: &std::fs::File) {
        /// Tells the writer when its maker unwinds, so that it does not
        /// wait for a chunk that never comes.
        struct Unwinding<'b>(&'b Board);
        impl Drop for Unwinding<'_> {
            fn drop(&mut self) {
                if std::thread::panicking() {
                    let mut g = self.0.lock();
                    (g.failed, g.stopped) = (true, true);
                    drop(g);
                    self.0.moved.notify_all();
                }
            }
        }
        let _unwinding = Unwinding(self);
        let mut scratch = Vec::new();
        let mut g = self.lock();
        loop {
            while !g.stopped && g.next < chunks.len() && g.next >= g.written + self.ahead {
                g = self.wait(g);
            }
            if g.stopped || g.next >= chunks.len() {
                return;
            }
            let i = g.next;
            g.next += 1;
            let mut room = g.spare.pop().unwrap_or_default();
            drop(g);
            let made = chunks[i].fill(file, &mut room, &mut scratch).map(|()| room);
            g = self.lock();
            g.ready.insert(i, made);
            self.moved.notify_all();
        }
    }

    /// The writer: writes `chunks` to `to` in order as they are put
    /// together, up to the first that fails; then stops the makers.
    fn write_out(&self, chunks: &[Chunk], to: &mut dyn Write) -> std::io::Result<()> {
        let mut written = Ok(());
        for (i, chunk) in chunks.iter().enumerate() {
            let mut g = self.lock();
            let made = loop {
                if let Some(made) = g.ready.remove(&i) {
                    break made;
                }
                if g.failed {
                    break Err(maker_failed());
                }
                g = self.wait(g);
            };
            drop(g);
            let room = match made {
                Ok(room) => room,
                Err(e) => {
                    written = Err(e);
                    break;
                }
            };
            if let Err(e) = to.write_all(&room[..chunk.size]) {
                written = Err(e);
                break;
            }
            let mut g = self.lock();
            g.spare.push(room);
            g.written = i + 1;
            self.moved.notify_all();
        }
        self.stop();
        written
    }
}

impl Section {
    fn spool(dir: Option<&Path>) -> Section {
        let file = dir
            .and_then(|d| tempfile::tempfile_in(d).ok())
            .or_else(|| tempfile::tempfile().ok());
        match file {
            Some(f) => Section::File(Spool {
                file: std::io::BufWriter::with_capacity(1 << 16, f),
                order: Vec::new(),
                held: 0,
                held_max: PACKED_HELD_MAX,
                aside_min: ASIDE_MIN,
            }),
            None => Section::Memory(Vec::new()),
        }
    }

    /// Writes `part` after `sep`, to `out` when the section goes straight
    /// there; `buf` is room to unpack a packed part in.
    fn write(
        &mut self,
        sep: &[u8],
        part: Part,
        out: &mut Out,
        buf: &mut Vec<u8>,
    ) -> std::io::Result<()> {
        match part {
            Part::Plain(p) => self.put(sep, &p, out),
            Part::Packed(p) => {
                if let Section::File(spool) = self {
                    if spool.held + p.len() <= spool.held_max {
                        spool.write(sep)?;
                        spool.held += p.len();
                        spool.order.push(Stretch::Packed(p));
                        return Ok(());
                    }
                }
                let plain = unpack_into(&p, buf)?;
                self.put(sep, plain, out)
            }
        }
    }

    /// Writes `part`, as rendered, after `sep`.
    fn put(&mut self, sep: &[u8], part: &[u8], out: &mut Out) -> std::io::Result<()> {
        match self {
            Section::Direct => {
                out.push_bytes(sep);
                out.push_bytes(part);
            }
            Section::File(spool) => {
                spool.write(sep)?;
                spool.write(part)?;
            }
            Section::Memory(v) => {
                v.extend_from_slice(sep);
                v.extend_from_slice(part);
            }
        }
        Ok(())
    }
}

/// A report being written, fragment by fragment, in record order.
pub(crate) struct Spooled<'w, 's> {
    style: Style<'s>,
    out: Out<'w>,
    sections: Vec<Section>,
    written: Vec<bool>,
    totals: Totals,
    hidden: usize,
    error: Option<std::io::Error>,
    /// Room to unpack packed parts in.
    buf: Vec<u8>,
}

impl<'w, 's> Spooled<'w, 's> {
    /// Starts the report in `w`: its head, if it is written first; sections
    /// spooled in `spool_dir` when given (an unnamed temporary file, gone
    /// when closed).
    pub(crate) fn new(
        style: Style<'s>,
        w: &'w mut dyn Write,
        spool_dir: Option<&Path>,
    ) -> Spooled<'w, 's> {
        let format = style.format;
        let mut out = Out::new(w);
        let sections = (0..format.sections())
            .map(|i| match i == 0 && !format.head_needs_totals() {
                true => Section::Direct,
                false => Section::spool(spool_dir),
            })
            .collect();
        if !format.head_needs_totals() {
            format.open(0, &Totals::default(), &style.opts, &mut out);
        }
        Spooled {
            style,
            out,
            sections,
            written: vec![false; format.sections()],
            totals: Totals::default(),
            hidden: 0,
            error: None,
            buf: Vec::new(),
        }
    }

    /// Writes the next record's fragment.
    pub(crate) fn push(&mut self, f: Fragment) {
        self.totals.merge(&f.totals);
        self.hidden += f.hidden;
        self.write_parts(f.parts);
    }

    fn write_parts(&mut self, parts: Vec<Part>) {
        // After the first error nothing more is written: a report cut short
        // reads as cut short, never as whole with a record left out.
        if self.error.is_some() {
            return;
        }
        for (i, part) in parts.into_iter().enumerate() {
            if part.is_empty() {
                continue;
            }
            let sep = self.style.format.separator(!self.written[i]).as_bytes();
            self.written[i] = true;
            let done = self.sections[i].write(sep, part, &mut self.out, &mut self.buf);
            if let Err(e) = done {
                self.error.get_or_insert(e);
                return;
            }
        }
    }

    fn write_rendered(&mut self, parts: Vec<Vec<u8>>) {
        self.write_parts(parts.into_iter().map(Part::Plain).collect());
    }

    /// The findings that are no record's (after every record), their reports
    /// given as they are.
    pub(crate) fn findings(&mut self, findings: &[FindingReport]) {
        self.totals.add_findings(findings);
        let shown: Vec<&FindingReport> = findings
            .iter()
            .filter(|f| self.style.hide_below.is_none_or(|min| f.severity >= min))
            .collect();
        self.hidden += findings.len() - shown.len();
        let style = self.style;
        let parts = style.render(|format, outs| format.findings(&shown, &[], &style.opts, outs));
        self.write_rendered(parts);
    }

    /// [`Spooled::findings`] of the inputs that yielded no record.
    pub(crate) fn orphans(&mut self, findings: &[Finding]) {
        let reports: Vec<FindingReport> = findings.iter().map(FindingReport::from).collect();
        self.findings(&reports);
    }

    /// Ends the report: the head when it comes last, each spooled section, the
    /// tail. `complete` and `baseline_left` are the audit's. How many findings
    /// were left out below `--min-severity`.
    pub(crate) fn finish(
        mut self,
        generated_at: String,
        complete: bool,
        baseline_left: Option<Leftover>,
    ) -> std::io::Result<usize> {
        self.totals.generated_at = generated_at;
        self.totals.summary.complete = complete;
        self.totals.summary.baseline_resolved = baseline_left.map(|l| l.resolved);
        self.totals.summary.baseline_not_rechecked = baseline_left.map(|l| l.not_rechecked);
        self.finish_with_totals()
    }

    fn finish_with_totals(mut self) -> std::io::Result<usize> {
        if let Some(e) = self.error {
            return Err(e);
        }
        let format = self.style.format;
        let (totals, opts) = (&self.totals, &self.style.opts);
        for (i, section) in std::mem::take(&mut self.sections).into_iter().enumerate() {
            if i > 0 || format.head_needs_totals() {
                format.open(i, totals, opts, &mut self.out);
            }
            match section {
                Section::Direct => {}
                Section::Memory(v) => self.out.push_bytes(&v),
                Section::File(spool) => {
                    // Nothing is written after it fails, not even the tail:
                    // the report reads as cut short.
                    if let Err(e) = spool.copy_out(self.out.io()) {
                        self.out.fail(e);
                    }
                }
            }
            format.close(i, !self.written[i], totals, opts, &mut self.out);
        }
        if let Some(e) = self.error {
            return Err(e);
        }
        self.out.finish().map(|()| self.hidden)
    }
}

/// Writes a report held whole, through the same fragments as a streamed one
/// (the bytes are the same).
pub(crate) fn whole(
    format: &'static dyn Streamed,
    report: &Report,
    opts: &RenderOptions,
    out: &mut Out,
) {
    let style = Style {
        format,
        opts: *opts,
        hide_below: None,
    };
    let mut spooled = Spooled::new(style, out.io(), None);
    if format.grouped() {
        let grouped = report.findings_by_record();
        for (r, mine) in report.records.iter().zip(&grouped.records) {
            let parts = style.render(|f, outs| f.record(r, mine, opts, outs));
            spooled.write_rendered(parts);
        }
        let parts = style.render(|f, outs| f.findings(&grouped.orphans, &[], opts, outs));
        spooled.write_rendered(parts);
    } else {
        for r in &report.records {
            let parts = style.render(|f, outs| f.record(r, &[], opts, outs));
            spooled.write_rendered(parts);
        }
        let all: Vec<&FindingReport> = report.findings.iter().collect();
        let records: Vec<&v1::RecordReport> = report.records.iter().collect();
        let parts = style.render(|f, outs| f.findings(&all, &records, opts, outs));
        spooled.write_rendered(parts);
    }
    spooled.totals = Totals::of(report);
    if let Err(e) = spooled.finish_with_totals() {
        out.fail(e);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `format` as rendered with the default options, nothing hidden.
    fn plain_style(format: &'static dyn super::super::Streamed) -> Style<'static> {
        Style {
            format,
            opts: RenderOptions::default(),
            hide_below: None,
        }
    }

    /// A kept fragment reads back as it was (its parts packed until written
    /// out); a part that names a size LZ4 cannot make of it reads as nothing
    /// (it is never allocated); one that does not decompress fails the
    /// report's write where it is unpacked, saying so ([`KeptPartBroken`]),
    /// never writing something else.
    #[test]
    fn a_kept_fragment_reads_back_and_a_bad_one_does_not() {
        let mut totals = Totals::default();
        totals.summary.records = 1;
        totals.summary.findings.warning = 3;
        totals.worst = Some(Severity::Warning);
        let f = Fragment {
            parts: vec![
                Part::Plain(b"{\"id\": \"r\"}".repeat(50)),
                Part::Plain(Vec::new()),
            ],
            totals,
            hidden: 2,
        };
        let mut e = Enc::default();
        f.encode(&mut e);
        let entry = bytes::Bytes::from(e.0.clone());
        let back = Fragment::decode(&mut Dec(&entry), 2, &entry).expect("reads back");
        let mut buf = Vec::new();
        let [Part::Packed(a), Part::Packed(b)] = &back.parts[..] else {
            panic!("packed parts: {:?}", back.parts);
        };
        // Slices of the entry, not copies.
        let within = |p: &bytes::Bytes| entry.as_ptr_range().contains(&p.as_ptr());
        assert!(within(a) && within(b));
        assert_eq!(
            unpack_into(a, &mut buf).expect("unpacks"),
            &b"{\"id\": \"r\"}".repeat(50)[..]
        );
        assert!(back.parts[1].is_empty() && !back.parts[0].is_empty());
        assert_eq!(unpack_into(b, &mut buf).expect("unpacks"), b"");
        assert_eq!(back.hidden, 2);
        assert_eq!(back.totals.summary.findings.warning, 3);
        assert_eq!(back.totals.worst, Some(Severity::Warning));
        assert!(
            Fragment::decode(&mut Dec(&entry), 3, &entry).is_none(),
            "sections"
        );
        // Read from bytes that are not the entry's, the parts are copies.
        let elsewhere = Fragment::decode(&mut Dec(&e.0), 2, &entry).expect("reads back");
        assert_eq!(elsewhere.parts, back.parts);
        assert!(
            unpacked_size(&[0xff, 0xff, 0xff, 0x7f, 1, 2, 3]).is_none(),
            "2 GiB"
        );
        let garbage = [200, 0, 0, 0, 0xff, 0xff, 0xff];
        assert!(unpack_into(&garbage, &mut buf).is_err(), "garbage");
        // A part naming one byte more than it holds (its size, after the
        // count and the part's length) reads, and fails where it is unpacked.
        let mut longer = e.0.clone();
        assert_eq!(longer[8..12], 550u32.to_le_bytes());
        longer[8] += 1;
        let longer = bytes::Bytes::from(longer);
        let read = Fragment::decode(&mut Dec(&longer), 2, &longer).expect("reads");
        let Part::Packed(p) = &read.parts[0] else {
            panic!("packed: {:?}", read.parts);
        };
        let failed = unpack_into(p, &mut buf).expect_err("one byte short");
        assert!(KeptPartBroken::is(&failed), "{failed}");
        assert!(!KeptPartBroken::is(&std::io::Error::other("disk full")));
        // Held in a spooled section, a bad part fails the report's write.
        let style = plain_style(super::super::Format::Json.streamed().expect("json streams"));
        let dir = tempfile::tempdir().expect("tempdir");
        let mut out = Vec::new();
        let mut spooled = Spooled::new(style, &mut out, Some(dir.path()));
        assert!(matches!(spooled.sections[0], Section::File(_)), "spooled");
        spooled.write_parts(vec![
            Part::Packed(bytes::Bytes::copy_from_slice(&garbage)),
            Part::Plain(Vec::new()),
        ]);
        let failed = spooled.finish_with_totals().expect_err("fails");
        assert!(KeptPartBroken::is(&failed), "{failed}");
    }

    /// A report of packed and rendered parts reads the same as one of
    /// rendered parts alone, whether the packed parts are held until the end
    /// or, past the bound, unpacked into the spool as they come, and whether
    /// the spooled section is put together on a thread of its own (in chunks
    /// that parts longer than a chunk overflow) or here.
    #[test]
    fn packed_parts_write_out_as_rendered_ones() {
        let style = plain_style(super::super::Format::Json.streamed().expect("json streams"));
        let mut records: Vec<Vec<u8>> = (0..40)
            .map(|i| format!("{{\"id\": \"r{i}\", \"n\": {}}}", "7".repeat(300 * i)).into_bytes())
            .collect();
        // Longer than a chunk, and long enough to cross two.
        records.insert(
            7,
            format!("{{\"n\": {}}}", "8".repeat(CHUNK + 100)).into_bytes(),
        );
        records.insert(
            30,
            format!("{{\"n\": {}}}", "9".repeat(2 * CHUNK + 5)).into_bytes(),
        );
        let write = |pack: bool, held_max: usize, aside_min: u64| -> Vec<u8> {
            let dir = tempfile::tempdir().expect("tempdir");
            let mut out = Vec::new();
            let mut spooled = Spooled::new(style, &mut out, Some(dir.path()));
            if let Section::File(spool) = &mut spooled.sections[0] {
                spool.held_max = held_max;
                spool.aside_min = aside_min;
            }
            for (i, r) in records.iter().enumerate() {
                let part = match pack && i % 3 != 1 {
                    true => Part::Packed(lz4_flex::compress_prepend_size(r).into()),
                    false => Part::Plain(r.clone()),
                };
                spooled.write_parts(vec![part, Part::Plain(Vec::new())]);
            }
            spooled.finish_with_totals().expect("written");
            out
        };
        let plain = write(false, PACKED_HELD_MAX, u64::MAX);
        assert!(String::from_utf8_lossy(&plain).contains(&"7".repeat(11_700)));
        assert!(plain.len() > 3 * CHUNK);
        for aside_min in [u64::MAX, 0] {
            let here = aside_min == u64::MAX;
            assert_eq!(
                write(false, PACKED_HELD_MAX, aside_min),
                plain,
                "rendered, here {here}"
            );
            assert_eq!(
                write(true, PACKED_HELD_MAX, aside_min),
                plain,
                "held, here {here}"
            );
            assert_eq!(
                write(true, 20_000, aside_min),
                plain,
                "past the bound, here {here}"
            );
            assert_eq!(write(true, 0, aside_min), plain, "none held, here {here}");
        }
    }

    /// A part that does not decompress where it goes straight out (a format
    /// whose head comes first) ends the report there: nothing after it is
    /// written, not even the rest of its own fragment or the tail.
    #[test]
    fn a_report_ends_at_a_part_that_does_not_decompress() {
        let format = super::super::Format::Text.streamed().expect("text streams");
        let style = plain_style(format);
        let mut out = Vec::new();
        let mut spooled = Spooled::new(style, &mut out, None);
        assert!(
            matches!(spooled.sections[0], Section::Direct),
            "goes straight out"
        );
        let parts = |first: Part| {
            let mut v = vec![first];
            v.resize(format.sections(), Part::Plain(b"rest of it\n".to_vec()));
            v
        };
        let good = || Part::Packed(lz4_flex::compress_prepend_size(b"record one\n").into());
        spooled.write_parts(parts(good()));
        let garbage = bytes::Bytes::from_static(&[200, 0, 0, 0, 0xff, 0xff, 0xff]);
        spooled.write_parts(parts(Part::Packed(garbage)));
        spooled.write_parts(parts(Part::Plain(b"record three\n".to_vec())));
        let failed = spooled.finish_with_totals().expect_err("fails");
        assert!(KeptPartBroken::is(&failed), "{failed}");
        let said = String::from_utf8_lossy(&out);
        assert!(said.contains("record one"), "{said}");
        assert!(!said.contains("record three"), "{said}");
    }

    /// Chunks put together ahead of the writer are never written past a
    /// part that does not unpack: what is written is the report up to the
    /// chunk that holds it, whichever way the section is put together, and
    /// no tail after it (the JSON does not close: it reads as cut short).
    #[test]
    fn nothing_past_a_broken_part_is_written_by_any_maker() {
        let style = plain_style(super::super::Format::Json.streamed().expect("json streams"));
        let record = |i: usize| format!("{{\"n{i}\": {}}}", "7".repeat(CHUNK / 3)).into_bytes();
        let garbage = bytes::Bytes::from_static(&[200, 0, 0, 0, 0xff, 0xff, 0xff]);
        let write = |broken: Option<usize>, aside_min: u64| {
            let dir = tempfile::tempdir().expect("tempdir");
            let mut out = Vec::new();
            let mut spooled = Spooled::new(style, &mut out, Some(dir.path()));
            if let Section::File(spool) = &mut spooled.sections[0] {
                spool.aside_min = aside_min;
            }
            for i in 0..60 {
                let part = match broken == Some(i) {
                    true => Part::Packed(garbage.clone()),
                    false => Part::Packed(lz4_flex::compress_prepend_size(&record(i)).into()),
                };
                spooled.write_parts(vec![part, Part::Plain(Vec::new())]);
            }
            let done = spooled.finish_with_totals();
            (out, done.is_ok())
        };
        let (whole, ok) = write(None, 0);
        assert!(ok);
        let said = String::from_utf8_lossy(&whole);
        let at = said.find("\"n40\"").expect("record 40 is written");
        for aside_min in [0, u64::MAX] {
            let (cut, ok) = write(Some(40), aside_min);
            assert!(!ok, "fails");
            assert!(whole.starts_with(&cut), "a prefix of the whole report");
            assert!(cut.len() <= at, "nothing of or past the broken part");
            let cut = String::from_utf8_lossy(&cut);
            assert!(cut.contains("\"n30\""), "the chunks before it are written");
        }
    }

    /// A section put together on a thread of its own fails the report's
    /// write when a part it holds does not decompress, and when the output
    /// fails; either way the thread stops and the write returns.
    #[test]
    fn a_section_put_together_aside_fails_as_one_put_together_here() {
        struct Fails(usize);
        impl Write for Fails {
            fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
                match self.0.checked_sub(b.len()) {
                    Some(left) => {
                        self.0 = left;
                        Ok(b.len())
                    }
                    None => Err(std::io::Error::other("disk full")),
                }
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let style = plain_style(super::super::Format::Json.streamed().expect("json streams"));
        let record = format!("{{\"n\": {}}}", "7".repeat(CHUNK / 3)).into_bytes();
        let garbage = bytes::Bytes::from_static(&[200, 0, 0, 0, 0xff, 0xff, 0xff]);
        for (bad_part, room) in [(true, usize::MAX), (false, 2 * CHUNK)] {
            let dir = tempfile::tempdir().expect("tempdir");
            let mut out = Fails(room);
            let mut spooled = Spooled::new(style, &mut out, Some(dir.path()));
            if let Section::File(spool) = &mut spooled.sections[0] {
                spool.aside_min = 0;
            }
            for i in 0..30 {
                let part = match bad_part && i == 20 {
                    true => Part::Packed(garbage.clone()),
                    false => Part::Packed(lz4_flex::compress_prepend_size(&record).into()),
                };
                spooled.write_parts(vec![part, Part::Plain(Vec::new())]);
            }
            let err = spooled.finish_with_totals().expect_err("fails");
            let said = err.to_string();
            assert_eq!(KeptPartBroken::is(&err), bad_part, "{said}");
            match bad_part {
                true => assert!(said.contains("does not decompress"), "{said}"),
                false => assert!(said.contains("disk full"), "{said}"),
            }
        }
    }
}
