//! `--format markdown`: fit to paste into a pull request or a CI job summary.

use std::fmt::Write;

use super::escape::{md_cell, md_code, md_text};
use super::SourceStatus;

/// Record and source text as prose in a table cell (see [`super::escape`]).
fn cell(s: &str) -> String {
    md_cell(&md_text(s))
}

/// Record and source text as inline code in a table cell.
fn code_cell(s: &str) -> String {
    md_cell(&md_code(s))
}

/// Why a finding does not count, if it does not.
fn not_counted(f: &super::FindingReport) -> String {
    match (&f.ignored, f.baseline) {
        (Some(i), _) => format!(" _(ignored: {})_", md_cell(&md_text(&i.reason))),
        (None, true) => " _(baseline)_".into(),
        (None, false) => String::new(),
    }
}

pub(crate) const FORMAT: &dyn super::Streamed = &Markdown;

struct Markdown;

impl super::Streamed for Markdown {
    fn name(&self) -> &'static str {
        "markdown"
    }

    fn head_needs_totals(&self) -> bool {
        true
    }

    fn grouped(&self) -> bool {
        true
    }

    fn record(
        &self,
        r: &super::RecordReport,
        mine: &[&super::FindingReport],
        _: &super::RenderOptions,
        parts: &mut [super::Out],
    ) {
        let out = &mut parts[0];
        let _ = writeln!(out, "### {}\n", md_code(&r.id));
        let _ = writeln!(out, "File: {}\n", md_code(&r.file));
        if !r.claims.is_empty() {
            let _ = writeln!(out, "| claim | value | cited | status | found |");
            let _ = writeln!(out, "|---|---|---|---|---|");
            for c in &r.claims {
                let value = c.value.as_ref().map_or("?".into(), |v| v.to_string());
                let unit = c
                    .unit
                    .as_deref()
                    .map_or(String::new(), |u| format!(" {}", cell(u)));
                let cited = match (c.source.as_deref(), c.lines) {
                    (Some(src), Some([a, b])) if a == b => format!("{}#L{a}", code_cell(src)),
                    (Some(src), Some([a, b])) => format!("{}#L{a}-L{b}", code_cell(src)),
                    (Some(src), None) => code_cell(src),
                    (None, _) => "—".into(),
                };
                // Linked to the cited line at the pinned revision.
                let cited = match r.claim_url(c) {
                    Some(url) => format!("[{cited}]({url})"),
                    None => cited,
                };
                let found = match (c.found_line, &c.line_text) {
                    (Some(n), Some(t)) => format!("L{n}: {}", code_cell(t)),
                    _ => String::new(),
                };
                let _ = writeln!(
                    out,
                    "| {} | {value}{unit} | {cited} | {} | {found} |",
                    cell(&c.label),
                    c.status.as_str()
                );
            }
            out.push('\n');
        }
        let unchecked: Vec<_> = r
            .sources
            .iter()
            .filter(|s| s.status == SourceStatus::Unchecked)
            .collect();
        if !unchecked.is_empty() {
            let _ = writeln!(
                out,
                "<details><summary>{} unchecked source(s)</summary>\n",
                unchecked.len()
            );
            for s in unchecked {
                let _ = writeln!(
                    out,
                    "- {} ({}): {}",
                    md_code(&s.id),
                    s.path
                        .as_deref()
                        .or(s.url.as_deref())
                        .map_or("?".into(), |p| md_code(&crate::url::redact(p))),
                    md_text(s.reason.as_deref().unwrap_or("not checked"))
                );
            }
            let _ = writeln!(out, "\n</details>\n");
        }
        durable_citations(r, out);
        if !mine.is_empty() {
            let _ = writeln!(out, "| severity | code | finding | fix |");
            let _ = writeln!(out, "|---|---|---|---|");
            for f in mine {
                let _ = writeln!(
                    out,
                    "| {} | `{}` | {} | {} |",
                    f.severity,
                    f.code,
                    match f.web_url() {
                        Some(url) => format!(
                            "{}{} ([cited line]({url}))",
                            cell(&f.message),
                            not_counted(f)
                        ),
                        None => format!("{}{}", cell(&f.message), not_counted(f)),
                    },
                    cell(&f.hint)
                );
            }
            out.push('\n');
        }
    }

    fn findings(
        &self,
        orphans: &[&super::FindingReport],
        _: &[&super::RecordReport],
        _: &super::RenderOptions,
        parts: &mut [super::Out],
    ) {
        let out = &mut parts[0];
        if !orphans.is_empty() {
            let _ = writeln!(out, "### Unreadable inputs\n");
            for f in orphans {
                let _ = writeln!(
                    out,
                    "- **{}** `{}`: {}",
                    f.severity,
                    f.code,
                    md_text(&f.message)
                );
            }
            out.push('\n');
        }
    }

    fn open(&self, _: usize, totals: &super::Totals, _: &super::RenderOptions, out: &mut super::Out) {
        let s = &totals.summary;
        // Baseline and ignored findings don't make the verdict, as they don't make the
        // exit status.
        let worst = totals.worst;
        let verdict = if worst == Some(crate::finding::Severity::Error) {
            "❌ errors found"
        } else if !s.complete {
            "⚠️ incomplete"
        } else if worst == Some(crate::finding::Severity::Warning) {
            "⚠️ warnings"
        } else {
            "✅ clean"
        };
        let _ = writeln!(out, "## pinaudit: {verdict}\n");
        let _ = writeln!(
            out,
            "{} record(s) · {} source(s), {} unchecked · {} claim(s): {} · **{}** error(s) · **{}** warning(s) · **{}** note(s)\n",
            s.records, s.sources, s.unchecked_sources, s.claims, s.claims_by_status.words(), s.findings.error, s.findings.warning, s.findings.note
        );
        if let Some(stale) = super::text::stale_line(totals) {
            let _ = writeln!(out, "⚠️ {stale}\n");
        }
    }

    fn close(&self, _: usize, _: bool, _: &super::Totals, _: &super::RenderOptions, _: &mut super::Out) {}
}

/// The record's durable citations: each checked git source's SWHID, linked to
/// the archive's page for it (folded, as a reader needs them only to cite).
fn durable_citations(r: &super::RecordReport, out: &mut super::Out) {
    let cited: Vec<_> = r
        .sources
        .iter()
        .filter_map(|s| Some((s, s.swhid.as_deref()?, s.archive_url()?)))
        .collect();
    if cited.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "<details><summary>{} durable citation(s) (SWHID)</summary>\n",
        cited.len()
    );
    for (s, swhid, url) in cited {
        // The SWHID escapes `<`, `>` and spaces, so it stands in an angle-bracketed link.
        let _ = writeln!(out, "- {}: [{}](<{url}>)", md_code(&s.id), md_code(swhid));
    }
    let _ = writeln!(out, "\n</details>\n");
}
