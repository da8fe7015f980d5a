//! Work spread over the cores, results in input order: whatever the number of
//! workers, the output is the same (reports must not depend on `--jobs`).
//!
//! The number of workers is a [`Pool`] value, made once per command from its
//! `--jobs` and handed to what runs in parallel: no process-wide setting, so two
//! audits in one process (the tests run many) never see each other's limit.

use std::sync::atomic::{AtomicUsize, Ordering};

/// How many workers parallel work may use: at most `--jobs`, never more than the
/// cores.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Pool {
    workers: usize,
}

impl Pool {
    /// A pool of at most `jobs` workers (an audit's `--jobs`), never above the
    /// cores; 0: one per core.
    pub(crate) fn new(jobs: usize) -> Pool {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let workers = match jobs {
            0 => cores,
            jobs => jobs.min(cores),
        };
        Pool { workers }
    }

    /// A pool of at most `jobs` workers (0: one per core) for work that
    /// waits on the disk as much as on the CPU: not bounded by the cores.
    /// Reading the inputs is such work on a scheduled re-check, whose pin
    /// files the page cache has long let go (2,000 of them read with two
    /// workers took 110 ms instead of 40; with four, 89).
    pub(crate) fn waiting(jobs: usize) -> Pool {
        match jobs {
            0 => Pool::cores(),
            jobs => Pool { workers: jobs },
        }
    }

    /// One worker per core, for work that no `--jobs` bounds.
    pub(crate) fn cores() -> Pool {
        Pool::new(0)
    }

    /// The most workers this pool starts.
    pub(crate) fn workers(self) -> usize {
        self.workers
    }

    /// `f` of every item, in order, on up to [`Pool::workers`] scoped threads
    /// (items are taken one at a time, so a few large ones don't hold up the
    /// rest).
    pub(crate) fn map<T: Sync, R: Send>(self, items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
        // Below a few dozen items a thread costs more than it saves.
        let workers = self.workers.min(items.len() / 32).max(1);
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
}

#[cfg(test)]
mod tests {
    use super::Pool;

    #[test]
    fn results_come_in_input_order_whatever_the_workers() {
        let items: Vec<u32> = (0..1000).collect();
        let one = Pool::new(1).map(&items, |i| i * 3);
        for jobs in [0, 2, 8] {
            assert_eq!(Pool::new(jobs).map(&items, |i| i * 3), one);
        }
        assert!(Pool::new(1).workers() == 1);
        assert_eq!(Pool::waiting(16).workers(), 16, "not bounded by the cores");
        assert_eq!(Pool::waiting(16).map(&items, |i| i * 3), one);
        assert!(Pool::new(10_000).workers() <= Pool::cores().workers());
    }
}
