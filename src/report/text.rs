//! `--format text`: a short terminal summary, grouped by record.

use std::fmt::Write;

use crate::finding::Severity;

use super::escape::terminal as t;
use super::{
    short_rev, ClaimReport, ClaimStatus, FindingReport, Report, SourceReport, SourceStatus,
};

struct Paint(bool);

impl Paint {
    fn sev(&self, s: Severity) -> String {
        let code = match s {
            Severity::Error => "31",
            Severity::Warning => "33",
            Severity::Note => "36",
        };
        self.wrap(code, s.as_str())
    }

    fn wrap(&self, code: &str, text: &str) -> String {
        if self.0 {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_string()
        }
    }
}

fn short(rev: Option<&str>) -> &str {
    // Only commit ids are abbreviated; a long branch name is shown whole.
    rev.map_or("?", |r| match crate::record::CommitId::parse(r) {
        Some(_) => short_rev(r),
        None => r,
    })
}

fn source_line(s: &SourceReport, p: &Paint) -> String {
    let status = match s.status {
        SourceStatus::Checked => p.wrap("32", "checked  "),
        SourceStatus::Absent => p.wrap("31", "absent   "),
        SourceStatus::Unchecked => p.wrap("33", "unchecked"),
    };
    let mut line = format!(
        "    {status} {}  {}@{}",
        t(&s.id),
        t(s.path.as_deref().unwrap_or("?")),
        t(short(s.revision.as_deref()))
    );
    if let Some(r) = &s.reason {
        let _ = write!(line, "  ({})", t(r));
    }
    if let Some(t) = &s.stale_since {
        let _ = write!(line, "  (remote unreachable: judged from the cache as of {t})");
    }
    line
}

fn claim_line(c: &ClaimReport, p: &Paint) -> String {
    let status = match c.status {
        ClaimStatus::Verified | ClaimStatus::Rounded => p.wrap("32", c.status.as_str()),
        ClaimStatus::Shifted => p.wrap("33", c.status.as_str()),
        ClaimStatus::Missing => p.wrap("31", c.status.as_str()),
        ClaimStatus::Unchecked => c.status.as_str().to_string(),
    };
    let value = c.value.as_ref().map_or("?".to_string(), |v| v.to_string());
    let unit = c
        .unit
        .as_deref()
        .map_or(String::new(), |u| format!(" {}", t(u)));
    let lines = match c.lines {
        Some([a, b]) if a == b => format!("#L{a}"),
        Some([a, b]) => format!("#L{a}-L{b}"),
        None => String::new(),
    };
    let mut line = format!(
        "    {status:<9} {}  {value}{unit}  {}{lines}",
        t(&c.label),
        t(c.source.as_deref().unwrap_or("?"))
    );
    if let (Some(n), Some(text)) = (c.found_line, &c.line_text) {
        let _ = write!(line, "\n              L{n}: {}", t(text));
    }
    line
}

fn finding_lines(f: &FindingReport, p: &Paint, out: &mut String) {
    let _ = writeln!(
        out,
        "    {}[{}] {}",
        p.sev(f.severity),
        f.code,
        t(&f.message)
    );
    let loc = &f.location;
    if let (Some(path), Some(rev)) = (&loc.path, &loc.revision) {
        let line = loc.line.map_or(String::new(), |l| format!("#L{l}"));
        let repo = loc.repository.as_deref().unwrap_or("");
        let _ = writeln!(
            out,
            "      --> {} {}@{}{line}",
            t(repo),
            t(path),
            t(short(Some(rev)))
        );
    }
    let _ = writeln!(out, "      hint: {}", t(&f.hint));
}

pub fn render(report: &Report, opts: &super::RenderOptions) -> String {
    let p = Paint(opts.color);
    let mut out = String::new();
    for r in &report.records {
        let _ = writeln!(out, "{}  ({})", t(&r.id), t(&r.file));
        if !r.sources.is_empty() {
            let _ = writeln!(out, "  sources");
            for s in &r.sources {
                let _ = writeln!(out, "{}", source_line(s, &p));
            }
        }
        if !r.claims.is_empty() {
            let _ = writeln!(out, "  claims");
            for c in &r.claims {
                let _ = writeln!(out, "{}", claim_line(c, &p));
            }
        }
        let mine: Vec<_> = report.findings_of(r).collect();
        if !mine.is_empty() {
            let _ = writeln!(out, "  findings");
            for f in mine {
                finding_lines(f, &p, &mut out);
            }
        }
        out.push('\n');
    }
    // Findings of inputs that yielded no record (an unreadable file).
    let orphans: Vec<_> = report.orphan_findings().collect();
    if !orphans.is_empty() {
        let _ = writeln!(out, "unreadable inputs");
        for f in orphans {
            finding_lines(f, &p, &mut out);
        }
        out.push('\n');
    }
    let s = &report.summary;
    let _ = writeln!(
        out,
        "{} record(s), {} source(s) ({} unchecked), {} claim(s) ({} verified): {} error(s), {} warning(s), {} note(s)",
        s.records,
        s.sources,
        s.unchecked_sources,
        s.claims,
        s.verified_claims,
        s.findings.error,
        s.findings.warning,
        s.findings.note
    );
    if !s.complete {
        let _ = writeln!(
            out,
            "{}",
            p.wrap(
                "33",
                "audit incomplete: some sources or inputs could not be checked"
            )
        );
    }
    out
}
