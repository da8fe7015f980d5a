//! A report's output that reserves room on disk before each large write.
//!
//! A report of tens of megabytes written into a fresh file on ext4 (or XFS)
//! pays, block by 4 KiB block, for delayed allocation: a reservation, a quota
//! charge, an entry in the extent cache. Asking the file system for the room
//! of a large write first (`fallocate` with `FALLOC_FL_KEEP_SIZE`: the file's
//! size and bytes stay as they are) allocates it as one extent, and the write
//! then only fills it. Measured on ext4, a 39 MB JSON report is written in
//! about three quarters of the time (the benchmark of `scripts/bench-scale.sh`
//! at 20,000 citations).
//!
//! Only a write of [`LARGE`] bytes or more reserves (for smaller ones the call
//! costs more than it saves), only into a regular file that is not opened for
//! appending, and never again once the file system refuses (tmpfs without
//! room, NFS, a file system without `fallocate`). The bytes written are the
//! same whatever happens here.

use std::io::Write;

/// The smallest write that reserves its room first.
const LARGE: usize = 256 << 10;

/// `inner`, a writer into the descriptor `fd`, reserving the room of each
/// large write before it is made.
pub(crate) struct Reserving<W> {
    inner: W,
    #[cfg(target_os = "linux")]
    fd: std::os::fd::RawFd,
    /// Where the next write lands in the file; `None`: nothing is reserved
    /// (not a regular file, appending, or refused).
    at: Option<u64>,
}

impl<W: Write> Reserving<W> {
    /// `inner`, which writes into `fd` (kept open by whoever owns it) at its
    /// current offset.
    #[cfg(target_os = "linux")]
    pub(crate) fn new(inner: W, fd: std::os::fd::BorrowedFd<'_>) -> Reserving<W> {
        use std::os::fd::AsRawFd;
        let fd = fd.as_raw_fd();
        Reserving {
            inner,
            fd,
            at: start(fd),
        }
    }

    #[cfg(not(target_os = "linux"))]
    pub(crate) fn new<F>(inner: W, _fd: F) -> Reserving<W> {
        Reserving { inner, at: None }
    }

    /// Reserves the room of `len` bytes about to be written, when it may.
    fn reserve(&mut self, len: usize) {
        #[cfg(target_os = "linux")]
        if let Some(at) = self.at.filter(|_| len >= LARGE) {
            let (Ok(offset), Ok(len)) = (libc::off_t::try_from(at), libc::off_t::try_from(len))
            else {
                self.at = None;
                return;
            };
            // SAFETY: `fd` is open for as long as `inner` writes into it;
            // KEEP_SIZE changes neither the file's size nor any byte of it.
            let done = unsafe { libc::fallocate(self.fd, libc::FALLOC_FL_KEEP_SIZE, offset, len) };
            if done != 0 {
                self.at = None;
            }
        }
        #[cfg(not(target_os = "linux"))]
        let _ = len;
    }

    fn wrote(&mut self, n: usize) {
        self.at = self.at.and_then(|at| at.checked_add(n as u64));
    }
}

/// The offset writes into `fd` start at, when room may be reserved there: a
/// regular file, not opened for appending.
#[cfg(target_os = "linux")]
fn start(fd: std::os::fd::RawFd) -> Option<u64> {
    // SAFETY: `fstat` fills the struct it is given; `fcntl` and `lseek` only
    // read the descriptor's state (`lseek` by 0 from the current offset).
    unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        if libc::fstat(fd, &mut st) != 0 || st.st_mode & libc::S_IFMT != libc::S_IFREG {
            return None;
        }
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags < 0 || flags & libc::O_APPEND != 0 {
            return None;
        }
        u64::try_from(libc::lseek(fd, 0, libc::SEEK_CUR)).ok()
    }
}

impl<W: Write> Write for Reserving<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.reserve(buf.len());
        let n = self.inner.write(buf)?;
        self.wrote(n);
        Ok(n)
    }

    fn write_all(&mut self, buf: &[u8]) -> std::io::Result<()> {
        // Reserved once for all of it, however many writes it takes.
        self.reserve(buf.len());
        self.inner.write_all(buf)?;
        self.wrote(buf.len());
        Ok(())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use std::io::{Read, Seek};
    use std::os::fd::AsFd;

    /// Large writes into a regular file reserve their room, and the file
    /// holds exactly what was written (its size is never grown by the
    /// reservation); into a file opened for appending nothing is reserved,
    /// and the bytes are the same.
    #[test]
    fn a_reserving_writer_writes_the_same_bytes() {
        let body: Vec<u8> = (0..3 * LARGE + 17).map(|i| (i % 251) as u8).collect();
        let mut file = tempfile::tempfile().expect("tempfile");
        file.write_all(b"head\n").expect("head");
        {
            let fd = file.try_clone().expect("clone");
            let mut w = Reserving::new(&fd, fd.as_fd());
            assert_eq!(w.at, Some(5), "starts where the file's offset is");
            w.write_all(b"small ").expect("small");
            w.write_all(&body).expect("large");
            w.write_all(&body[..LARGE]).expect("large again");
            w.flush().expect("flush");
            assert_eq!(w.at, Some((5 + 6 + body.len() + LARGE) as u64));
        }
        let mut back = Vec::new();
        file.rewind().expect("rewind");
        file.read_to_end(&mut back).expect("read");
        let want = [&b"head\nsmall "[..], &body, &body[..LARGE]].concat();
        assert_eq!(back.len(), want.len(), "no byte more");
        assert!(back == want);

        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("appended");
        std::fs::write(&path, b"x").expect("write");
        let appending = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .expect("open");
        let mut w = Reserving::new(&appending, appending.as_fd());
        assert_eq!(w.at, None, "appending: nothing reserved");
        w.write_all(&body).expect("append");
        assert_eq!(
            std::fs::read(&path).expect("read"),
            [&b"x"[..], &body].concat()
        );

        let null = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/null")
            .expect("open");
        assert_eq!(
            Reserving::new(&null, null.as_fd()).at,
            None,
            "a device: nothing reserved"
        );
    }
}
