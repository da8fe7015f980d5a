//! Keeping libgit2's indexer from holding a fetched pack in memory.
//!
//! When a fetch receives a pack, libgit2's indexer writes it to
//! `objects/pack/pack_git2_*` and reads it back through memory-mapped windows
//! (`src/libgit2/mwindow.c`). Once an object is whole, `store_object` computes
//! its CRC over the entire compressed entry in one call (`crc_object`,
//! `indexer.c`), touching every page of it through those windows. Nothing
//! unmaps them during that call:
//!
//! - the default window is 1 GiB on 64-bit, so one window spans the whole pack;
//! - with smaller windows (`git2::opts::set_mwindow_size`), the least recently
//!   used window is closed only among the files in the global window list
//!   (`git_mwindow_close_lru_window_locked` scans `ctl->windowfiles`), and
//!   `git_indexer_append` starts each call with `git_mwindow_free_all`, whose
//!   `git_mwindow_free_all_locked` *removes* the indexer's file from that list
//!   (it is registered only once, in `git_indexer_new`); so its windows pile up
//!   whatever `set_mwindow_mapped_limit` says, until the next append.
//!
//! A 1 GB document whose pack is 150 MB so peaked at 160 MiB resident on the
//! cold audit (the pages are file-backed, but they count in RSS while mapped).
//!
//! The vendored library can't be changed, and its maps are its own; but on Linux
//! `madvise(MADV_PAGEOUT)` (5.4+) asks the kernel to reclaim the pages of a
//! range, which never changes what the memory reads as: a page touched again is
//! faulted back in from the page cache or the file. So while a fetch runs, a
//! [`Pager`] thread looks at `/proc/self/maps` every [`TICK`] and pages out the
//! mappings of files in the mirror's `objects/pack` directory. A range the
//! library has unmapped (and something else mapped since) meanwhile is paged
//! out too, which is harmless: contents are kept whatever the memory is
//! (anonymous pages without swap are simply not reclaimed). On other systems,
//! and on kernels without `MADV_PAGEOUT`, it does nothing.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// How often the mappings are looked at while a fetch runs. CRC-32 over mapped
/// pages runs at a few GB/s, so at most some MB are resident between looks.
pub(crate) const TICK: std::time::Duration = std::time::Duration::from_millis(4);

/// Mappings smaller than this are left alone (the indexer's small windows
/// and its write maps of a few pages).
const MIN_LEN: usize = 1 << 20;

/// A fetch that has received less than this is not looked at: its whole pack,
/// mapped, is no more resident than this, and most fetches of a re-check or a
/// first audit are smaller. Reading `/proc/self/maps` every [`TICK`] for
/// each of them was about 3 % of a cold audit's CPU.
pub(crate) const PAGE_OUT_FROM: u64 = 8 << 20;

/// A thread that pages out the mappings of a mirror's pack files until dropped.
pub(crate) struct Pager {
    #[cfg(target_os = "linux")]
    stop: Option<std::sync::mpsc::Sender<()>>,
    #[cfg(target_os = "linux")]
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Pager {
    /// Start paging out mappings of files under `repo`'s `objects/pack`
    /// directory once `received` (the bytes the fetch has received so far,
    /// which the fetch's progress callback keeps; set to 0 here) reaches
    /// [`PAGE_OUT_FROM`]. Never fails: when the directory can't be resolved or
    /// the thread can't start, it does nothing.
    pub(crate) fn start(repo: &Path, received: &Arc<AtomicU64>) -> Pager {
        received.store(0, Ordering::Relaxed);
        #[cfg(target_os = "linux")]
        {
            let received = Arc::clone(received);
            let Ok(dir) = repo.join("objects").join("pack").canonicalize() else {
                return Pager::idle();
            };
            let mut prefix = dir.into_os_string().into_encoded_bytes();
            prefix.push(b'/');
            let (stop, stopped) = std::sync::mpsc::channel::<()>();
            let thread = std::thread::Builder::new()
                .name("pinaudit-pageout".into())
                .spawn(move || {
                    use std::sync::mpsc::RecvTimeoutError;
                    loop {
                        if received.load(Ordering::Relaxed) >= PAGE_OUT_FROM {
                            page_out_under(&prefix);
                        }
                        match stopped.recv_timeout(TICK) {
                            Err(RecvTimeoutError::Timeout) => continue,
                            _ => break,
                        }
                    }
                });
            match thread {
                Ok(thread) => Pager {
                    stop: Some(stop),
                    thread: Some(thread),
                },
                Err(_) => Pager::idle(),
            }
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = repo;
            Pager {}
        }
    }

    #[cfg(target_os = "linux")]
    fn idle() -> Pager {
        Pager {
            stop: None,
            thread: None,
        }
    }
}

impl Drop for Pager {
    fn drop(&mut self) {
        #[cfg(target_os = "linux")]
        {
            if let Some(stop) = self.stop.take() {
                let _ = stop.send(());
            }
            if let Some(thread) = self.thread.take() {
                let _ = thread.join();
            }
        }
    }
}

/// The address ranges of `maps` (the text of `/proc/self/maps`) whose file is
/// under `prefix` (a directory path ending in `/`), at least [`MIN_LEN`] long.
pub(crate) fn ranges_under(maps: &[u8], prefix: &[u8]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    for line in maps.split(|&b| b == b'\n') {
        // ADDR-ADDR PERMS OFFSET DEV INODE [PATH]; the path is what follows
        // the fifth field, after padding.
        let mut rest = line;
        let mut fields = [&b""[..]; 5];
        let mut ok = true;
        for field in fields.iter_mut() {
            let start = rest.iter().position(|&b| b != b' ').unwrap_or(rest.len());
            rest = &rest[start..];
            let end = rest.iter().position(|&b| b == b' ').unwrap_or(rest.len());
            if end == 0 {
                ok = false;
                break;
            }
            *field = &rest[..end];
            rest = &rest[end..];
        }
        if !ok {
            continue;
        }
        let start = rest.iter().position(|&b| b != b' ').unwrap_or(rest.len());
        let path = &rest[start..];
        if !path.starts_with(prefix) {
            continue;
        }
        let Some((lo, hi)) = std::str::from_utf8(fields[0])
            .ok()
            .and_then(|r| r.split_once('-'))
        else {
            continue;
        };
        let (Ok(lo), Ok(hi)) = (usize::from_str_radix(lo, 16), usize::from_str_radix(hi, 16))
        else {
            continue;
        };
        if hi > lo && hi - lo >= MIN_LEN {
            out.push((lo, hi - lo));
        }
    }
    out
}

#[cfg(target_os = "linux")]
fn page_out_under(prefix: &[u8]) {
    let Ok(maps) = std::fs::read("/proc/self/maps") else {
        return;
    };
    for (addr, len) in ranges_under(&maps, prefix) {
        // SAFETY: MADV_PAGEOUT only asks the kernel to reclaim pages; it never
        // changes the contents the range reads as, mapped or not (an unmapped
        // range is ENOMEM, which is ignored).
        unsafe {
            libc::madvise(addr as *mut libc::c_void, len, libc::MADV_PAGEOUT);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_are_the_large_mappings_of_files_under_the_prefix() {
        let maps = b"\
55d0a0000000-55d0a0100000 r--p 00000000 fe:00 1234                       /usr/bin/pinaudit
7f0000000000-7f0004000000 r--s 00000000 fe:00 99                         /c/m.git/objects/pack/pack_git2_ab12
7f0005000000-7f0005001000 r--s 00000000 fe:00 99                         /c/m.git/objects/pack/pack_git2_ab12
7f0006000000-7f0007000000 r--s 00000000 fe:00 98                         /c/m.git/objects/pack/with space.pack (deleted)
7f0008000000-7f0009000000 r--s 00000000 fe:00 97                         /c/other.git/objects/pack/pack-1.pack
7f000a000000-7f000b000000 rw-p 00000000 00:00 0 
garbage line
zzzz-yyyy r--s 00000000 fe:00 99 /c/m.git/objects/pack/x
";
        let got = ranges_under(maps, b"/c/m.git/objects/pack/");
        assert_eq!(
            got,
            vec![(0x7f0000000000, 0x4000000), (0x7f0006000000, 0x1000000)]
        );
        assert!(ranges_under(b"", b"/c/").is_empty());
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_paged_out_mapping_reads_the_same() {
        use std::io::Write;
        let dir = tempfile::tempdir().expect("tempdir");
        let pack = dir.path().join("objects").join("pack");
        std::fs::create_dir_all(&pack).expect("pack dir");
        let path = pack.join("pack_git2_test");
        let len = 4 << 20;
        let data: Vec<u8> = (0..len).map(|i| (i * 7 % 251) as u8).collect();
        std::fs::File::create(&path)
            .and_then(|mut f| f.write_all(&data))
            .expect("write");
        let file = std::fs::File::open(&path).expect("open");
        // SAFETY: a fresh read-only shared mapping of a file nobody changes.
        let map = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_SHARED,
                std::os::fd::AsRawFd::as_raw_fd(&file),
                0,
            )
        };
        assert_ne!(map, libc::MAP_FAILED);
        // SAFETY: `map` is `len` readable bytes until the munmap below.
        let view = unsafe { std::slice::from_raw_parts(map as *const u8, len) };
        assert_eq!(view, &data[..]);
        {
            let received = Arc::new(AtomicU64::new(0));
            let _pager = Pager::start(dir.path(), &received);
            received.store(PAGE_OUT_FROM, Ordering::Relaxed);
            std::thread::sleep(TICK * 5);
        }
        assert_eq!(view, &data[..]);
        // SAFETY: unmapping what was mapped above; `view` is not used after.
        unsafe {
            libc::munmap(map, len);
        }
    }
}
