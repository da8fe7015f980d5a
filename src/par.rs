//! Work spread over the cores, results in input order: whatever the number of
//! workers, the output is the same (reports must not depend on `--jobs`).

use std::sync::atomic::{AtomicUsize, Ordering};

/// The most workers [`map`] starts (`--jobs`); 0: one per core.
static LIMIT: AtomicUsize = AtomicUsize::new(0);

/// Caps the workers of [`map`] at `jobs` (an audit's `--jobs`), never above the
/// cores; 0 lifts the cap.
pub(crate) fn limit(jobs: usize) {
    LIMIT.store(jobs, Ordering::Relaxed);
}

/// `f` of every item, in order, on one scoped worker per core, at most
/// [`limit`] (items are taken one at a time, so a few large ones don't hold up
/// the rest).
pub(crate) fn map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let mut cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let cap = LIMIT.load(Ordering::Relaxed);
    if cap > 0 {
        cores = cores.min(cap);
    }
    // Below a few dozen items a thread costs more than it saves.
    let workers = cores.min(items.len() / 32).max(1);
    if workers == 1 {
        return items.iter().map(f).collect();
    }
    let next = AtomicUsize::new(0);
    let mut done: Vec<(usize, R)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                scope.spawn(|| {
                    let mut out = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(item) = items.get(i) else { break };
                        out.push((i, f(item)));
                    }
                    out
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    });
    done.sort_unstable_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, r)| r).collect()
}
