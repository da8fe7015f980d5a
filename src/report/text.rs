//! `--format text`: a short terminal summary, grouped by record.

use std::fmt::Write;

use crate::finding::Severity;

use super::escape::terminal as t;
use super::{
    short_rev, ClaimReport, ClaimStatus, FindingReport, Out, RecordReport, RenderOptions,
    SourceReport, SourceStatus, Totals,
};

/// Colour through `anstyle`; callers pad text *before* painting it, so columns
/// line up on visible width.
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

    /// A link to the pinned line: the URL itself, as an OSC 8 hyperlink on a
    /// terminal that takes colour, else plain. Its text is the URL either way, so
    /// a terminal without OSC 8 (and a log) still shows and links the right line.
    fn link(&self, url: &str) -> String {
        let url = t(url);
        if self.0 {
            format!("\x1b]8;;{url}\x1b\\{url}\x1b]8;;\x1b\\")
        } else {
            url.into_owned()
        }
    }

    fn wrap(&self, code: &str, text: &str) -> String {
        use anstyle::{AnsiColor, Style};
        let color = match code {
            "31" => AnsiColor::Red,
            "32" => AnsiColor::Green,
            "33" => AnsiColor::Yellow,
            _ => AnsiColor::Cyan,
        };
        let style = Style::new().fg_color(Some(color.into()));
        if self.0 {
            format!("{style}{text}{style:#}")
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

fn source_line(s: &SourceReport, p: &Paint, verbose: bool) -> String {
    let status = match s.status {
        SourceStatus::Checked => p.wrap("32", "checked  "),
        SourceStatus::Absent => p.wrap("31", "absent   "),
        SourceStatus::Unchecked => p.wrap("33", "unchecked"),
    };
    // A web document has no path or revision: its URL says where.
    let web = s.path.is_none() && s.revision.is_none();
    let mut line = match (&s.url, web) {
        (Some(url), true) => format!(
            "    {status} {}  {}",
            t(&s.id),
            t(&crate::url::redact(url))
        ),
        _ => format!(
            "    {status} {}  {}@{}",
            t(&s.id),
            t(s.path.as_deref().unwrap_or("?")),
            t(short(s.revision.as_deref()))
        ),
    };
    if let Some(r) = &s.reason {
        let _ = write!(line, "  ({})", t(r));
    }
    if let Some(t) = &s.stale_since {
        let _ = write!(line, "  (remote unreachable: judged from the cache as of {t})");
    }
    if let Some(a) = &s.archive {
        let cite = a.swhid.as_deref().or(a.url.as_deref()).unwrap_or(&a.service);
        let _ = write!(line, "  (read from the archive: {})", t(cite));
    }
    // The durable citation, as the archive's link (its text is the SWHID).
    if let Some(url) = s.archive_url().filter(|_| verbose) {
        let _ = write!(line, "\n              swhid: {}", p.link(&url));
    }
    line
}

fn claim_line(c: &ClaimReport, url: Option<String>, p: &Paint) -> String {
    let padded = format!("{:<9}", c.status.as_str());
    let status = match c.status {
        ClaimStatus::Verified | ClaimStatus::Rounded => p.wrap("32", &padded),
        ClaimStatus::Shifted => p.wrap("33", &padded),
        ClaimStatus::Missing => p.wrap("31", &padded),
        ClaimStatus::Unchecked => padded,
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
    let cited = format!("{}{lines}", t(c.source.as_deref().unwrap_or("?")));
    let cited = match url {
        Some(u) => format!("{cited}  {}", p.link(&u)),
        None => cited,
    };
    let mut line = format!("    {status} {}  {value}{unit}  {cited}", t(&c.label));
    if c.inconsistent_value {
        line.push_str("  (disagrees with its own correct/total)");
    }
    if let (Some(n), Some(text)) = (c.found_line, &c.line_text) {
        let _ = write!(line, "\n              L{n}: {}", t(text));
    }
    line
}

fn finding_lines(f: &FindingReport, p: &Paint, out: &mut super::Out) {
    let _ = write!(
        out,
        "  {}[{}] {}",
        p.sev(f.severity),
        f.code,
        t(&f.message)
    );
    if f.baseline {
        out.push_str("  (baseline: not counted)");
    }
    if let Some(i) = &f.ignored {
        let _ = write!(out, "  (ignored: {})", t(&i.reason));
    }
    out.push('\n');
    // Where to fix it: the record, at the line and column that says it.
    if let Some(at) = &f.record_location {
        let _ = writeln!(out, "    --> {}:{}:{}", t(&at.file), at.line, at.column);
    }
    let loc = &f.location;
    if let (Some(path), Some(rev)) = (&loc.path, &loc.revision) {
        let line = loc.line.map_or(String::new(), |l| format!("#L{l}"));
        let repo = loc.repository.as_deref().unwrap_or("");
        let shown = format!("{} {}@{}{line}", t(repo), t(path), t(short(Some(rev))));
        let shown = match f.web_url() {
            Some(url) => p.link(&url),
            None => shown,
        };
        let _ = writeln!(out, "    at  {shown}");
    }
    let _ = writeln!(out, "    hint: {}", t(&f.hint));
}

pub(crate) const FORMAT: &dyn super::Streamed = &Text;

struct Text;

impl super::Streamed for Text {
    fn name(&self) -> &'static str {
        "text"
    }

    fn grouped(&self) -> bool {
        true
    }

    fn record(
        &self,
        r: &RecordReport,
        mine: &[&FindingReport],
        opts: &RenderOptions,
        parts: &mut [Out],
    ) {
        let p = Paint(opts.color);
        let out = &mut parts[0];
        let _ = writeln!(out, "{}  ({})", t(&r.id), t(&r.file));
        // Problems first, the most severe first; then what was judged.
        let mut findings: Vec<&&FindingReport> = mine.iter().collect();
        findings.sort_by_key(|f| std::cmp::Reverse(f.severity));
        for f in findings {
            finding_lines(f, &p, out);
        }
        let verbose = opts.verbose;
        let mut by = super::v1::ClaimCounts::default();
        for c in &r.claims {
            by.add(c.status);
        }
        // Listed without -v: a source not checked, or checked from a stale
        // cache or an archive (worth knowing where a verdict comes from).
        let unchecked = |s: &&SourceReport| {
            s.status != SourceStatus::Checked || s.stale_since.is_some() || s.archive.is_some()
        };
        let checked = r.sources.iter().filter(|s| s.status == SourceStatus::Checked).count();
        let _ = writeln!(out, "  sources: {} ({checked} checked)", r.sources.len());
        for s in r.sources.iter().filter(|s| verbose || unchecked(s)) {
            let _ = writeln!(out, "{}", source_line(s, &p, verbose));
        }
        let _ = writeln!(out, "  claims: {} ({})", r.claims.len(), by.words());
        let judged = |c: &&ClaimReport| matches!(c.status, ClaimStatus::Verified | ClaimStatus::Rounded);
        for c in r.claims.iter().filter(|c| verbose || !judged(c)) {
            let _ = writeln!(out, "{}", claim_line(c, r.claim_url(c), &p));
        }
        out.push('\n');
    }

    /// Findings of inputs that yielded no record (an unreadable file).
    fn findings(&self, orphans: &[&FindingReport], _: &[&super::RecordReport], opts: &RenderOptions, parts: &mut [Out]) {
        let p = Paint(opts.color);
        let out = &mut parts[0];
        if !orphans.is_empty() {
            let _ = writeln!(out, "unreadable inputs");
            for f in orphans {
                finding_lines(f, &p, out);
            }
            out.push('\n');
        }
    }

    fn open(&self, _: usize, _: &Totals, _: &RenderOptions, _: &mut Out) {}

    fn close(&self, _: usize, _: bool, totals: &Totals, opts: &RenderOptions, out: &mut Out) {
        let p = Paint(opts.color);
        let s = &totals.summary;
        let _ = writeln!(
            out,
            "{} record(s), {} source(s) ({} unchecked), {} claim(s) ({}): {} error(s), {} warning(s), {} note(s)",
            s.records,
            s.sources,
            s.unchecked_sources,
            s.claims,
            s.claims_by_status.words(),
            s.findings.error,
            s.findings.warning,
            s.findings.note
        );
        if let Some(stale) = stale_line(totals) {
            let _ = writeln!(out, "{}", p.wrap("33", &stale));
        }
        if s.baseline_findings + s.ignored_findings > 0 {
            let _ = writeln!(
                out,
                "not counted toward the exit status: {} baseline finding(s), {} ignored finding(s)",
                s.baseline_findings, s.ignored_findings
            );
        }
        // A baseline finding not found again is resolved only if it was looked at.
        if let Some(n) = s.baseline_not_rechecked.filter(|n| *n > 0) {
            let _ = writeln!(
                out,
                "baseline: {} finding(s) resolved, {n} not re-checked (their source could not be checked this time)",
                s.baseline_resolved.unwrap_or(0)
            );
        }
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
    }
}

/// The summary's word on sources judged from the cache because their forge
/// could not be reached: how many, and the oldest sync they stand on, e.g.
/// "3 source(s) judged from the cache of 2026-11-30: forge unreachable".
pub(super) fn stale_line(totals: &Totals) -> Option<String> {
    let n = totals.summary.stale_sources;
    if n == 0 {
        return None;
    }
    let oldest = totals
        .oldest_stale
        .as_deref()
        .map(|t| t.get(..10).unwrap_or(t));
    Some(match oldest {
        Some(day) => format!(
            "{n} source(s) judged from the cache of {}: forge unreachable",
            t(day)
        ),
        None => format!("{n} source(s) judged from the cache: forge unreachable"),
    })
}

#[cfg(test)]
mod tests {
    use super::Paint;

    #[test]
    fn links_show_the_pinned_url_as_osc8_on_a_colour_terminal_and_plain_elsewhere() {
        let url = "https://github.com/o/r/blob/abc/README.md#L5";
        assert_eq!(
            Paint(true).link(url),
            format!("\x1b]8;;{url}\x1b\\{url}\x1b]8;;\x1b\\")
        );
        assert_eq!(Paint(false).link(url), url);
    }
}
