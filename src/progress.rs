//! Progress on the terminal: the fetcher's observer ([`crate::fetch::progress`])
//! drawn with indicatif, and the bar of documents checked. Only ever on stderr,
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

/// The overall bar of documents checked; hidden when `wanted` is false, there
/// is nothing to check or stderr is not a terminal.
pub(crate) fn checking(len: u64, wanted: bool) -> ProgressBar {
    if !wanted || len == 0 || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr());
    if let Ok(style) = ProgressStyle::with_template("{bar:30} checked {pos}/{len} documents") {
        bar.set_style(style);
    }
    bar
}

/// The fetcher's lines as indicatif bars: each stage's lines (the repositories
/// synced, the web documents fetched) drawn together in one set.
#[derive(Default)]
struct Bars {
    group: Mutex<Option<MultiProgress>>,
}

impl Bars {
    /// Adds `bar` to the current set of lines (a new set when there is none).
    fn add(&self, bar: ProgressBar) -> ProgressBar {
        let mut group = self.group.lock().unwrap_or_else(PoisonError::into_inner);
        group
            .get_or_insert_with(|| MultiProgress::with_draw_target(ProgressDrawTarget::stderr()))
            .add(bar)
    }

    /// Starts a new set of lines.
    fn start(&self) {
        let mut group = self.group.lock().unwrap_or_else(PoisonError::into_inner);
        *group = Some(MultiProgress::with_draw_target(ProgressDrawTarget::stderr()));
    }
}

impl Progress for Bars {
    fn syncing(&self, len: u64) -> Arc<dyn Line> {
        self.start();
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

    fn fetching_web(&self) {
        self.start();
    }

    fn web_document(&self, shown: &str) -> Arc<dyn Line> {
        let line = self.add(ProgressBar::new_spinner());
        line.set_message(shown.to_string());
        Arc::new(Bar(line))
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
