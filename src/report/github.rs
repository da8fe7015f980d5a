//! `--format github`: GitHub Actions workflow commands.
//!
//! One `::error`/`::warning`/`::notice` line per finding, at the record file's
//! line and column, so that a plain `run: pinaudit audit --format github`
//! annotates the pull request without an upload step. Escaping follows the
//! runner's rules (actions/toolkit `command.ts`): in the message `%`, CR and LF;
//! in properties also `:` and `,`; before them, every control, bidi, zero-width
//! and tag character is shown as `\u{…}`, as in the terminal.

use std::fmt::Write;

use super::Report;
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

pub(crate) fn write(report: &Report, _opts: &super::RenderOptions, out: &mut super::Out) {
    for f in &report.findings {
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
    if let Some(stale) = super::text::stale_line(report) {
        let _ = writeln!(out, "::notice title=pinaudit::{}", data(&stale));
    }
    let s = &report.summary;
    let _ = writeln!(
        out,
        "pinaudit: {} record(s), {} claim(s), {} verified; {} error(s), {} warning(s), {} note(s){}",
        s.records,
        s.claims,
        s.verified_claims,
        s.findings.error,
        s.findings.warning,
        s.findings.note,
        if s.complete { "" } else { "; incomplete" }
    );
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
