//! libgit2's process-wide set-up: the user's configuration directories given
//! to it explicitly, once, before any repository or configuration is opened.
//!
//! A leaf: the modules that open repositories (`git`), configurations
//! (`git`, `http`) or touch what OpenSSL reads at its start (`tls`) call in
//! here, and it calls none of them.

use std::fs;
use std::path::PathBuf;

/// Gives libgit2 the user's configuration directories explicitly, once per
/// process, and none that can't be read.
///
/// libgit2 works out where the global (`~/.gitconfig`) and XDG
/// (`~/.config/git/config`) configuration live from `$HOME` and reads them when
/// a repository is opened; a `$HOME` this user may not read (`docker --user
/// 65534` with `HOME=/root`) must change nothing about the cache. A level whose
/// file exists but can't be read is left out, with a warning naming it; one
/// with no file is kept (nothing is read there). The system level stays
/// libgit2's own.
pub(crate) fn isolate_user_config() {
    ONCE.call_once(|| {
        // First: libgit2 allocates through pinaudit's bounded allocator.
        crate::alloc::install();
        let home = std::env::var_os("HOME").map(PathBuf::from);
        let xdg = std::env::var_os("XDG_CONFIG_HOME")
            .map(PathBuf::from)
            .or_else(|| home.as_ref().map(|h| h.join(".config")))
            .map(|d| d.join("git"));
        for (level, dir, file) in [
            (git2::ConfigLevel::Global, home, ".gitconfig"),
            (git2::ConfigLevel::XDG, xdg, "config"),
        ] {
            let usable = dir.filter(|d| match fs::metadata(d.join(file)) {
                Ok(_) => true,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => true,
                Err(e) => {
                    if e.kind() != std::io::ErrorKind::NotADirectory {
                        eprintln!(
                            "warning: can't read the git configuration `{}` ({e}); going on without it",
                            pinaudit_core::escape::terminal(&d.join(file).display().to_string())
                        );
                    }
                    false
                }
            });
            let path = usable.unwrap_or_default();
            // SAFETY: libgit2 keeps search paths in a global it reads when a
            // configuration is loaded; this runs once, through `Once`, before
            // this process opens any repository or configuration (each place
            // that opens one calls this first, and waits for it).
            let _ = unsafe { git2::opts::set_search_path(level, path.as_os_str()) };
        }
    });
}

/// Whether libgit2 is set up (see [`isolate_user_config`]): its first call
/// initialises libgit2 and OpenSSL, some 4 ms that an `--offline` re-check of
/// 200 records spent before anything else.
static ONCE: std::sync::Once = std::sync::Once::new();
/// Set when [`isolate_user_config_aside`] has started setting libgit2 up.
static ASIDE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// [`isolate_user_config`] on a thread of its own, so that libgit2 is set up
/// while the run reads its records: every path that opens a repository or a
/// configuration calls [`isolate_user_config`] first, which waits for it.
/// Run here when no thread can be started.
pub(crate) fn isolate_user_config_aside() {
    use std::sync::atomic::Ordering;
    if ONCE.is_completed() || ASIDE.swap(true, Ordering::SeqCst) {
        return;
    }
    let spawned = std::thread::Builder::new()
        .name("pinaudit-git-setup".into())
        .spawn(isolate_user_config);
    if spawned.is_err() {
        isolate_user_config();
    }
}

/// Waits for the setting up of libgit2 that [`isolate_user_config_aside`]
/// started, if it did: call before the process exits, so that OpenSSL's
/// clean-up at exit never runs while another thread initialises it.
pub fn settle() {
    if ASIDE.load(std::sync::atomic::Ordering::SeqCst) {
        isolate_user_config();
    }
}
