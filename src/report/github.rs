//! `--format github`: GitHub Actions workflow commands.
//!
//! One `::error`/`::warning`/`::notice` line per finding, at the record file's
//! line and column, so that a plain `run: pinaudit audit --format github`
//! annotates the pull request without an upload step. Escaping follows the
//! runner's rules (actions/toolkit `command.ts`): in the message `%`, CR and LF;
//! in properties also `:` and `,`; before them, every control, bidi, zero-width
//! and tag character is shown as `\u{…}`, as in the terminal.

use std::fmt::Write;

use super::{FindingReport, Out, RecordReport, RenderOptions, Totals};
use crate::finding::Severity;

/// Escapes a command's message: controls, bidi, zero-width and tag characters
/// made visible, then the runner's escapes ([`super::escape::github`]).
fn data(s: &str) -> String {
    super::escape::github(s)
}

/// Escapes a command property's value.
fn property(s: &str) -> String {
    data(s).replace(':', "%3A").replace(',', "%2C")
}

pub(crate) const FORMAT: &dyn super::Streamed = &Github;

struct Github;

impl super::Streamed for Github {
    fn name(&self) -> &'static str {
        "github"
    }

    fn grouped(&self) -> bool {
        false
    }

    fn record(&self, _: &RecordReport, _: &[&FindingReport], _: &RenderOptions, _: &mut [Out]) {}

    fn findings(&self, findings: &[&FindingReport], _: &[&super::RecordReport], _: &RenderOptions, parts: &mut [Out]) {
        let out = &mut parts[0];
        for f in findings {
            let command = match f.severity {
                Severity::Error => "error",
                Severity::Warning => "warning",
                Severity::Note => "notice",
            };
            let at = f.record_position();
            let mut message = f.message.clone();
            if let Some(url) = f.web_url() {
                let _ = write!(message, "\n{url}");
            }
            let _ = write!(message, "\nhint: {}", f.hint);
            let _ = writeln!(
                out,
                "::{command} file={},line={},col={},title={}::{}",
                property(&at.file),
                at.line,
                at.column,
                property(f.code.as_str()),
                data(&message)
            );
        }
    }

    fn open(&self, _: usize, _: &Totals, _: &RenderOptions, _: &mut Out) {}

    fn close(&self, _: usize, _: bool, totals: &Totals, _: &RenderOptions, out: &mut Out) {
        if let Some(stale) = super::text::stale_line(totals) {
            let _ = writeln!(out, "::notice title=pinaudit::{}", data(&stale));
        }
        let s = &totals.summary;
        let _ = writeln!(
            out,
            "pinaudit: {} record(s), {} claim(s) ({}); {} error(s), {} warning(s), {} note(s){}",
            s.records,
            s.claims,
            s.claims_by_status.words(),
            s.findings.error,
            s.findings.warning,
            s.findings.note,
            if s.complete { "" } else { "; incomplete" }
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_follows_the_runner() {
        assert_eq!(data("50% a\r\nb: c,d"), "50%25 a%0D%0Ab: c,d");
        assert_eq!(property("a:b,c%\n"), "a%3Ab%2Cc%25%0A");
    }
}
