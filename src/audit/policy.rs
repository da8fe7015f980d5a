//! What a team decided about findings, applied to each record as it is checked:
//! per-code severity overrides, ignores with a reason, and a baseline of findings
//! already known. Overridden severities are the findings' own (renderers and exit
//! status see them alike); ignored and baseline findings stay in the report,
//! marked, and don't count toward the exit status.

use std::collections::BTreeMap;

use crate::diff::Baseline;
use crate::finding::{Code, Finding, Severity};
use crate::result::RecordResult;

/// One ignore: a code for a record, optionally narrowed to a source or a claim.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ignore {
    pub(crate) code: Code,
    pub(crate) record: String,
    pub(crate) source: Option<String>,
    pub(crate) claim: Option<String>,
    pub(crate) reason: String,
}

impl Ignore {
    fn matches(&self, f: &Finding) -> bool {
        self.code == f.code
            && self.record == f.record
            && self
                .source
                .as_ref()
                .is_none_or(|s| f.source.as_ref() == Some(s))
            && self
                .claim
                .as_ref()
                .is_none_or(|c| f.claim.as_ref() == Some(c))
    }
}

/// Severity overrides, ignores and a baseline; and the flags of the run that
/// every `pinaudit show` command a hint prints must carry to run as printed.
#[derive(Debug, Clone, Default)]
pub struct Policy {
    pub(crate) severity: BTreeMap<Code, Severity>,
    pub(crate) ignores: Vec<Ignore>,
    pub(crate) baseline: Option<Baseline>,
    /// `--config …`, `--cache …`, `--rewrite …`, `--allow-local`,
    /// `--max-document-size …` as the run was given them (shell-quoted), or
    /// empty.
    pub(crate) show_flags: String,
}

/// `hint` with `flags` added to each `` `pinaudit show …` `` command in it.
pub(crate) fn with_show_flags(hint: &str, flags: &str) -> String {
    const COMMAND: &str = "`pinaudit show ";
    let mut out = String::with_capacity(hint.len() + flags.len());
    let mut rest = hint;
    while let Some(at) = rest.find(COMMAND) {
        let (head, tail) = rest.split_at(at);
        out.push_str(head);
        let Some(end) = tail[1..].find('`') else {
            break;
        };
        out.push_str(&tail[..=end]);
        out.push(' ');
        out.push_str(flags);
        out.push('`');
        rest = &tail[end + 2..];
    }
    out.push_str(rest);
    out
}

impl Policy {
    /// Fingerprints every finding of a record, then applies the severity
    /// overrides and ignores (the baseline is taken in report order, by
    /// [`Policy::take`]).
    pub(crate) fn settle(&self, r: &mut RecordResult) {
        let lookup = crate::fingerprint::Lookup::new(&r.record);
        for f in &mut r.findings {
            let fp = crate::fingerprint::of_finding_in(f, Some(&lookup));
            self.one(f, fp);
            self.flag_hint(f);
        }
    }

    /// Adds the run's flags to the `pinaudit show` commands of `f`'s hint.
    fn flag_hint(&self, f: &mut Finding) {
        if self.show_flags.is_empty() {
            return;
        }
        if let Some(h) = f.hint.as_mut().filter(|h| h.contains("`pinaudit show ")) {
            *h = with_show_flags(h, &self.show_flags);
        }
    }

    /// [`Policy::settle`] for the findings of inputs that yielded no record.
    pub(crate) fn settle_orphans(&self, findings: &mut [Finding]) {
        for f in findings {
            let fp = crate::fingerprint::of_finding_in(f, None);
            self.one(f, fp);
        }
    }

    fn one(&self, f: &mut Finding, fp: String) {
        if let Some(s) = self.severity.get(&f.code) {
            f.severity = *s;
        }
        if let Some(i) = self.ignores.iter().find(|i| i.matches(f)) {
            f.ignored = Some(i.reason.clone());
        }
        f.fingerprint = Some(fp);
    }

    /// Marks the findings the baseline holds (settled findings, in report
    /// order: of two findings with one fingerprint, the first is taken first).
    pub(crate) fn take(baseline: &mut Baseline, findings: &mut [Finding]) {
        for f in findings {
            if let Some(fp) = &f.fingerprint {
                f.baseline = baseline.take(fp);
            }
        }
    }
}

#[cfg(test)]
mod show_flag_tests {
    use super::with_show_flags;

    #[test]
    fn every_show_command_of_a_hint_gets_the_flags_and_nothing_else_changes() {
        let hint = "read it with `pinaudit show 'a b#L3' --history`, or `git show x`";
        assert_eq!(
            with_show_flags(hint, "--cache c"),
            "read it with `pinaudit show 'a b#L3' --history --cache c`, or `git show x`"
        );
        let two = "`pinaudit show a` then `pinaudit show b`";
        assert_eq!(
            with_show_flags(two, "--offline"),
            "`pinaudit show a --offline` then `pinaudit show b --offline`"
        );
        assert_eq!(
            with_show_flags("`pinaudit show a", "--x"),
            "`pinaudit show a"
        );
    }
}
