//! What a team decided about findings, applied when the audit finishes:
//! per-code severity overrides, ignores with a reason, and a baseline of findings
//! already known. Overridden severities are the findings' own (renderers and exit
//! status see them alike); ignored and baseline findings stay in the report,
//! marked, and don't count toward the exit status.

use std::collections::BTreeMap;

use crate::diff::Baseline;
use crate::finding::{Code, Finding, Severity};
use crate::result::AuditResult;

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

/// Severity overrides, ignores and a baseline.
#[derive(Debug, Clone, Default)]
pub struct Policy {
    pub(crate) severity: BTreeMap<Code, Severity>,
    pub(crate) ignores: Vec<Ignore>,
    pub(crate) baseline: Option<Baseline>,
}

impl Policy {
    /// Fingerprints every finding, then applies overrides, ignores and the baseline.
    /// Fingerprints (a hash per finding) are computed on one worker per core.
    pub(crate) fn apply(&self, result: &mut AuditResult) {
        let fingerprints: Vec<Vec<String>> = crate::par::map(&result.records, |r| {
            let lookup = crate::fingerprint::Lookup::new(&r.record);
            r.findings
                .iter()
                .map(|f| crate::fingerprint::of_finding_in(f, Some(&lookup)))
                .collect()
        });
        let mut baseline = self.baseline.clone();
        let mut one = |f: &mut Finding, fp: String| {
            if let Some(s) = self.severity.get(&f.code) {
                f.severity = *s;
            }
            if let Some(i) = self.ignores.iter().find(|i| i.matches(f)) {
                f.ignored = Some(i.reason.clone());
            }
            if let Some(b) = &mut baseline {
                f.baseline = b.take(&fp);
            }
            f.fingerprint = Some(fp);
        };
        for (r, fps) in result.records.iter_mut().zip(fingerprints) {
            for (f, fp) in r.findings.iter_mut().zip(fps) {
                one(f, fp);
            }
        }
        for f in &mut result.orphan_findings {
            let fp = crate::fingerprint::of_finding_in(f, None);
            one(f, fp);
        }
        // What was left of the baseline: resolved, or not looked at this time.
        if let Some(b) = &baseline {
            result.baseline_left = Some(b.leftover(&crate::diff::NotChecked::of_result(result)));
        }
    }
}
