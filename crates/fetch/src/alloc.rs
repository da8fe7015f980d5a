//! libgit2's memory, bounded by what an object expands to.
//!
//! The fetch budgets count what arrives on the wire (bytes, objects); a pack
//! can still hold a delta of a few bytes whose result is gigabytes (a copy
//! instruction repeated), and libgit2's indexer builds every delta's result
//! whole, in one allocation, to hash it. So libgit2 allocates through
//! pinaudit's allocator here: plain `malloc`/`realloc`/`free` (the same
//! functions libgit2's own allocator calls, so memory allocated before it was
//! installed is freed alike), except that one allocation larger than the
//! limit fails. libgit2 checks every allocation and fails the operation with
//! "out of memory"; the thread that asked is told how large the refused
//! allocation was ([`take_refused`]), so the fetch ends with a clear reason
//! (`crate::classify`) before the object is built.
//!
//! The limit ([`set_limit`]) is set by a sync from
//! `SyncOptions::max_object_bytes` (`--max-document-size` when given, else
//! [`crate::options::DEFAULT_MAX_OBJECT_BYTES`]) and `--max-fetch-objects`:
//! the indexer's tables for as many objects as the latter allows stay within
//! it. Documents larger than it are read as streams by pinaudit, never built
//! by libgit2.

use std::cell::Cell;
use std::ffi::{c_char, c_int, c_void};
use std::sync::atomic::{AtomicUsize, Ordering};

/// The largest single allocation libgit2 may make (no limit until set).
static LIMIT: AtomicUsize = AtomicUsize::new(usize::MAX);

thread_local! {
    /// The size of the last allocation refused on this thread.
    static REFUSED: Cell<Option<usize>> = const { Cell::new(None) };
}

/// libgit2's `git_allocator` (`git2/sys/alloc.h`).
#[repr(C)]
struct GitAllocator {
    gmalloc: unsafe extern "C" fn(usize, *const c_char, c_int) -> *mut c_void,
    grealloc: unsafe extern "C" fn(*mut c_void, usize, *const c_char, c_int) -> *mut c_void,
    gfree: unsafe extern "C" fn(*mut c_void),
}

static ALLOCATOR: GitAllocator = GitAllocator {
    gmalloc,
    grealloc,
    gfree,
};

/// Whether `n` bytes may be allocated; notes the refusal when not.
fn allowed(n: usize) -> bool {
    if n <= LIMIT.load(Ordering::Relaxed) {
        return true;
    }
    REFUSED.with(|r| r.set(Some(n)));
    false
}

unsafe extern "C" fn gmalloc(n: usize, _file: *const c_char, _line: c_int) -> *mut c_void {
    if !allowed(n) {
        return std::ptr::null_mut();
    }
    // SAFETY: plain malloc, as libgit2's standard allocator calls it.
    unsafe { libc::malloc(n) }
}

unsafe extern "C" fn grealloc(
    ptr: *mut c_void,
    n: usize,
    _file: *const c_char,
    _line: c_int,
) -> *mut c_void {
    if !allowed(n) {
        // As `realloc` failing: the old block stays the caller's.
        return std::ptr::null_mut();
    }
    // SAFETY: `ptr` came from malloc/realloc (ours or libgit2's standard
    // allocator's, which are the same functions).
    unsafe { libc::realloc(ptr, n) }
}

unsafe extern "C" fn gfree(ptr: *mut c_void) {
    // SAFETY: as for `grealloc`; `free(NULL)` does nothing.
    unsafe { libc::free(ptr) }
}

/// Installs the allocator, once per process, before (or as) libgit2 is set up.
pub(crate) fn install() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // SAFETY: libgit2 copies the struct of function pointers into its
        // global allocator. Installed before libgit2 is initialised it is the
        // only allocator libgit2 ever uses; installed later, blocks the
        // standard allocator made are freed by the same `free`. The pointers
        // are read one by one, so a thread allocating meanwhile calls one
        // allocator or the other, and both are plain malloc.
        unsafe {
            libgit2_sys::git_libgit2_opts(
                libgit2_sys::GIT_OPT_SET_ALLOCATOR as c_int,
                &ALLOCATOR as *const GitAllocator,
            );
        }
    });
}

/// Sets the largest single allocation libgit2 may make.
pub(crate) fn set_limit(bytes: u64) {
    LIMIT.store(
        usize::try_from(bytes).unwrap_or(usize::MAX),
        Ordering::Relaxed,
    );
}

/// The largest single allocation libgit2 may make now.
pub(crate) fn limit() -> u64 {
    u64::try_from(LIMIT.load(Ordering::Relaxed)).unwrap_or(u64::MAX)
}

/// The limit a sync sets: the larger of `max_object_bytes`, what the
/// indexer's tables need for `max_objects` objects (64 bytes each is ample),
/// and [`crate::options::DEFAULT_MAX_OBJECT_BYTES`] (a smaller
/// `--max-document-size` bounds what is read, not what a fetch may build:
/// libgit2's local transport builds every object it copies).
pub(crate) fn limit_for(max_object_bytes: u64, max_objects: u64) -> u64 {
    max_object_bytes
        .max(max_objects.saturating_mul(64))
        .max(crate::options::DEFAULT_MAX_OBJECT_BYTES)
}

/// The size of an allocation refused on this thread since the last call, if any.
pub(crate) fn take_refused() -> Option<usize> {
    REFUSED.with(Cell::take)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_limit_covers_documents_and_index_tables() {
        assert_eq!(limit_for(50 << 20, 1_000_000), 192 << 20);
        assert_eq!(limit_for(200 << 20, 1_000_000), 200 << 20);
        assert_eq!(limit_for(1 << 20, 10_000_000), 640_000_000);
    }
}
