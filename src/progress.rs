//! Progress on the terminal: the fetcher's observer ([`crate::fetch::progress`])
//! drawn with indicatif, with the bar of documents checked among its lines. Only ever on stderr,
//! only on a terminal, only when progress is wanted (not `--quiet`).

use std::io::IsTerminal;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use pinaudit_fetch::progress::{Line, Progress};

/// The observer of the fetcher when progress is wanted and stderr is a
/// terminal; `None` (nothing shown) otherwise.
pub(crate) fn terminal(wanted: bool) -> Option<Arc<dyn Progress>> {
    if !wanted || !std::io::stderr().is_terminal() {
        return None;
    }
    Some(Arc::new(Bars::default()))
}

/// The overall line of documents checked, drawn by `progress` with its other
/// lines (repositories may still be syncing); nothing when `progress` is
/// `None` or there is nothing to check.
pub(crate) fn checking(progress: Option<&Arc<dyn Progress>>, len: u64) -> Checking {
    Checking(progress.filter(|_| len > 0).and_then(|p| p.checking(len)))
}

/// The line of documents checked, shared by the checking workers.
#[derive(Clone)]
pub(crate) struct Checking(Option<Arc<dyn Line>>);

impl Checking {
    /// `n` more documents are checked.
    pub(crate) fn inc(&self, n: u64) {
        if let Some(line) = &self.0 {
            line.inc(n);
        }
    }

    /// Checking is over: the line goes away.
    pub(crate) fn finish(&self) {
        if let Some(line) = &self.0 {
            line.finish();
        }
    }
}

/// The fetcher's lines and the line of documents checked as indicatif bars,
/// all drawn together in one set for the whole run: repositories sync, web
/// documents are fetched and records are checked at the same time, and two
/// sets drawing at once would overwrite each other's lines.
#[derive(Default)]
struct Bars {
    group: Mutex<Option<MultiProgress>>,
}

impl Bars {
    /// Adds `bar` to the run's set of lines.
    fn add(&self, bar: ProgressBar) -> ProgressBar {
        let mut group = self.group.lock().unwrap_or_else(PoisonError::into_inner);
        group
            .get_or_insert_with(|| MultiProgress::with_draw_target(ProgressDrawTarget::stderr()))
            .add(bar)
    }
}

impl Progress for Bars {
    fn syncing(&self, len: u64) -> Arc<dyn Line> {
        let bar = self.add(ProgressBar::new(len));
        if let Ok(style) =
            ProgressStyle::with_template("{spinner} fetching {pos}/{len} repositories {wide_msg}")
        {
            bar.set_style(style);
        }
        bar.enable_steady_tick(Duration::from_millis(120));
        Arc::new(Bar(bar))
    }

    fn remote(&self, shown: &str) -> Arc<dyn Line> {
        let line = self.add(ProgressBar::new_spinner());
        if let Ok(style) = ProgressStyle::with_template("  {spinner} {wide_msg}") {
            line.set_style(style);
        }
        line.set_message(shown.to_string());
        line.enable_steady_tick(Duration::from_millis(120));
        Arc::new(Bar(line))
    }

    fn web_document(&self, shown: &str) -> Arc<dyn Line> {
        let line = self.add(ProgressBar::new_spinner());
        line.set_message(shown.to_string());
        Arc::new(Bar(line))
    }

    fn checking(&self, len: u64) -> Option<Arc<dyn Line>> {
        let bar = self.add(ProgressBar::new(len));
        if let Ok(style) = ProgressStyle::with_template("{bar:30} checked {pos}/{len} documents") {
            bar.set_style(style);
        }
        Some(Arc::new(Bar(bar)))
    }
}

/// One indicatif bar as a line of the fetcher's progress.
struct Bar(ProgressBar);

impl Line for Bar {
    fn message(&self, message: String) {
        self.0.set_message(message);
    }
    fn inc(&self, n: u64) {
        self.0.inc(n);
    }
    fn finish(&self) {
        self.0.finish_and_clear();
    }
}

#[cfg(test)]
mod tests {
    /// The fetcher writes sizes as indicatif did before it drew nothing itself:
    /// they appear in messages that reports carry.
    #[test]
    fn sizes_read_as_indicatif_wrote_them() {
        let sizes = [
            0,
            1,
            1023,
            1024,
            1536,
            10 << 20,
            50 << 20,
            (64 << 20) + 7,
            5 << 30,
        ];
        for n in sizes.into_iter().chain((0..64).map(|k| 1u64 << k)) {
            assert_eq!(
                pinaudit_fetch::progress::human_bytes(n),
                indicatif::HumanBytes(n).to_string(),
                "{n}"
            );
        }
    }
}
