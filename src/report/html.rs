//! `--format html`: the proof sheet, one self-contained page an editor or a
//! reader can look at: each figure beside the line it cites, the number
//! marked, its verdict as a badge; findings with their hints; sources with
//! their hashes.
//!
//! Self-contained: inline CSS only, no script, no font, image or style sheet
//! from anywhere, so it reads the same from a CI artifact, from `file://` and on
//! paper. The only links are to the cited lines at their pinned commits. Every
//! string from a record or a document goes through [`super::escape::html`].
//!
//! The report carries the cited line itself; the two lines of context around it
//! are not in the domain result (the checks remember verdicts per blob, not
//! documents), so [`excerpts`] reads them from the cache after the audit,
//! offline, as `show` does. Without them (a web document, a document over
//! [`EXCERPT_MAX_BYTES`]) a figure shows the line the report carries.

use std::collections::HashMap;
use std::fmt::Write;
use std::ops::Range;

use super::escape::html as esc;
use super::{ClaimReport, ClaimStatus, RecordReport, Report, SourceStatus};

/// Lines shown before and after a cited line.
const CONTEXT: u32 = 2;
/// The largest document read again for context.
pub(crate) const EXCERPT_MAX_BYTES: u64 = 16 << 20;

/// What marks a number in a shown line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Mark {
    /// The figure itself.
    Figure,
    /// A look-alike that is not the figure, and why.
    Rejected(String),
}

/// One line of a document as the proof sheet shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ExcerptLine {
    pub(crate) number: u32,
    pub(crate) text: String,
    /// A line the claim cites (or, in the found excerpt, the line carrying it).
    pub(crate) cited: bool,
    pub(crate) mark: Option<(Range<usize>, Mark)>,
}

/// The lines around a claim's cited lines, and for a shifted claim around the
/// line that carries the value.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ClaimExcerpt {
    pub(crate) cited: Vec<ExcerptLine>,
    pub(crate) found: Vec<ExcerptLine>,
}

/// Excerpts by (record index, claim index) of the report.
pub(crate) type Excerpts = HashMap<(usize, usize), ClaimExcerpt>;

/// Reads each claim's cited lines with context from the cache (offline) for
/// the records of `result`, which runs parallel to its report. A document the
/// cache cannot give is left out: its claims show the report's line.
pub(crate) fn excerpts(
    result: &crate::result::AuditResult,
    cache: &crate::fetch::GitCache,
    allow_local: bool,
) -> Excerpts {
    use crate::check::claims::expected;
    use crate::check::SourceText;
    let mut out = Excerpts::new();
    for (ri, r) in result.records.iter().enumerate() {
        // Each document read once per record, however many claims cite it.
        let mut docs: HashMap<&str, Option<Vec<u8>>> = HashMap::new();
        for (ci, (c, v)) in r.record.claims.iter().zip(&r.claims).enumerate() {
            let (Some(lines), Some(sid)) = (c.lines, c.source.as_deref()) else {
                continue;
            };
            let Some(source) = r.record.source(sid) else {
                continue;
            };
            let bytes = docs.entry(sid).or_insert_with(|| {
                let target = crate::sources::resolve(source, allow_local).ok()?;
                let repo = cache.open(&target.remote).ok()?;
                let oid = crate::sources::git_oid(&target);
                if !repo.has_commit(oid) {
                    return None;
                }
                match repo.blob_size_at(oid, &target.path) {
                    Ok(Some(size)) if size <= EXCERPT_MAX_BYTES => {}
                    _ => return None,
                }
                repo.read_blob(oid, &target.path).ok()?.map(|b| b.bytes)
            });
            let Some(bytes) = bytes.as_deref() else {
                continue;
            };
            let doc = SourceText::new(bytes);
            let all = doc.lines();
            let document = crate::matcher::Document::new(&all, doc.layout());
            let exp = expected(c);
            let window = |first: u32, last: u32, found_only: bool| -> Vec<ExcerptLine> {
                let n = u32::try_from(all.len()).unwrap_or(u32::MAX);
                let from = first.saturating_sub(CONTEXT).max(1);
                let to = last.saturating_add(CONTEXT).min(n);
                (from..=to)
                    .map(|number| {
                        let text = all[number as usize - 1];
                        let cited = number >= first && number <= last;
                        let mark = exp.as_ref().filter(|_| cited).and_then(|exp| {
                            let i = number as usize - 1;
                            let found = document.cited(i..i + 1, exp);
                            match (found.found, found.rejected) {
                                (Some((_, m)), _) => Some((m.span, Mark::Figure)),
                                (None, Some((_, r))) if !found_only => {
                                    Some((r.span, Mark::Rejected(r.reason)))
                                }
                                _ => None,
                            }
                        });
                        ExcerptLine {
                            number,
                            text: text.to_string(),
                            cited,
                            mark: mark.filter(|(s, _)| text.get(s.clone()).is_some()),
                        }
                    })
                    .collect()
            };
            let mut e = ClaimExcerpt {
                cited: window(lines.first(), lines.last(), false),
                found: Vec::new(),
            };
            if let Some(found) = v.found_line.filter(|n| *n < lines.first() || *n > lines.last())
            {
                e.found = window(found, found, true);
            }
            out.insert((ri, ci), e);
        }
    }
    out
}

pub(crate) const STYLE: &str = r#"
:root{--fg:#1b1f24;--muted:#4a5360;--line:#d0d7de;--bg:#ffffff;--band:#f3f5f8}
*{box-sizing:border-box}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;color:var(--fg);background:var(--bg)}
header,main{max-width:72rem;margin:0 auto;padding:1rem}
header{background:var(--band);border-bottom:1px solid var(--line)}
h1{font-size:1.5rem;margin:.2rem 0}
h2{font-size:1.25rem;margin:1.5rem 0 .25rem;overflow-wrap:anywhere}
h3{font-size:1.05rem;margin:0;overflow-wrap:anywhere}
.meta,.file,.cite,.hint{color:var(--muted);font-size:.9rem;overflow-wrap:anywhere}
.summary{display:flex;flex-wrap:wrap;gap:.5rem;margin:.5rem 0 0;padding:0;list-style:none}
.summary li{background:#fff;border:1px solid var(--line);border-radius:.4rem;padding:.35rem .6rem}
.summary b{font-size:1.1rem}
.claim{border:1px solid var(--line);border-radius:.5rem;padding:.75rem;margin:.75rem 0;break-inside:avoid}
.claim-head{display:flex;flex-wrap:wrap;align-items:baseline;justify-content:space-between;gap:.5rem}
.value{margin:.25rem 0}
.badge{display:inline-block;font-weight:700;font-size:.9rem;padding:.1rem .55rem;border:2px solid;white-space:nowrap}
.badge::before{margin-right:.3rem}
.b-verified{color:#0b5d1e;background:#e6f4ea;border-radius:1rem}
.b-verified::before{content:"\2713"}
.b-rounded{color:#174ea6;background:#e8f0fe;border-radius:1rem;border-style:dashed}
.b-rounded::before{content:"\2248"}
.b-shifted{color:#7a4100;background:#fff4e5;border-radius:0}
.b-shifted::before{content:"\2197"}
.b-missing{color:#8a1c1c;background:#fde8e8;border-radius:0;border-width:3px}
.b-missing::before{content:"\2717"}
.b-unchecked{color:#333;background:#eee;border-radius:0;border-style:dotted}
.b-unchecked::before{content:"?"}
pre{margin:.5rem 0;padding:.5rem;background:#f6f8fa;border:1px solid var(--line);border-radius:.4rem;overflow-x:auto;font:13px/1.45 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
pre span{display:block;white-space:pre}
pre .cited{background:#fff8c5;font-weight:600}
.ln{display:inline!important;color:var(--muted);user-select:none}
mark{background:#ffd33d;color:#000;outline:1px solid #9a6700}
mark.rejected{background:#ffe0e0;text-decoration:line-through}
.note{margin:.35rem 0;font-size:.95rem}
.findings{padding-left:1.2rem}
.findings li{margin:.35rem 0;overflow-wrap:anywhere}
.sev{font-weight:700;text-transform:uppercase;font-size:.8rem;padding:0 .3rem;border:1px solid}
.sev-error{color:#8a1c1c}.sev-warning{color:#7a4100}.sev-note{color:#174ea6}
table{border-collapse:collapse;width:100%;font-size:.85rem}
th,td{border:1px solid var(--line);padding:.3rem .4rem;text-align:left;vertical-align:top;overflow-wrap:break-word}
td.hash code{overflow-wrap:anywhere}
.tablewrap{overflow-x:auto}
code{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.9em}
a{color:#0550ae}
@media (max-width:40rem){body{font-size:15px}header,main{padding:.6rem}.hash{word-break:break-all}}
@media print{header{background:none}a{color:inherit;text-decoration:none}a[href]::after{content:" <" attr(href) ">";font-size:.75rem;color:var(--muted);overflow-wrap:anywhere}pre{white-space:pre-wrap}pre span{white-space:pre-wrap}.claim{page-break-inside:avoid}}
"#;

/// A link target that may appear in the page: the web page of a cited line.
fn link(url: &str) -> Option<String> {
    (url.starts_with("https://") || url.starts_with("http://")).then(|| esc(url))
}

fn badge(status: ClaimStatus) -> String {
    let s = status.as_str();
    format!(r#"<span class="badge b-{s}" role="status">{s}</span>"#)
}

fn value_text(c: &ClaimReport) -> String {
    let value = c.value.as_ref().map_or("?".into(), |v| v.to_string());
    match &c.unit {
        Some(u) => format!("<strong>{}</strong> {}", esc(&value), esc(u)),
        None => format!("<strong>{}</strong>", esc(&value)),
    }
}

fn line_html(l: &ExcerptLine, width: usize) -> String {
    let body = match &l.mark {
        Some((span, mark)) => {
            let (class, title) = match mark {
                Mark::Figure => ("", "the claimed figure".to_string()),
                Mark::Rejected(why) => (r#" class="rejected""#, format!("not the figure: {why}")),
            };
            format!(
                r#"{}<mark{class} title="{}">{}</mark>{}"#,
                esc(&l.text[..span.start]),
                esc(&title),
                esc(&l.text[span.clone()]),
                esc(&l.text[span.end..])
            )
        }
        None => esc(&l.text),
    };
    let class = if l.cited { r#" class="cited""# } else { "" };
    let arrow = if l.cited { '>' } else { ' ' };
    format!(
        r#"<span{class}><span class="ln">{arrow}{:>width$} │ </span>{body}</span>"#,
        l.number
    )
}

fn excerpt_html(lines: &[ExcerptLine]) -> String {
    let width = lines.last().map_or(1, |l| l.number.to_string().len());
    let mut out = String::from("<pre><code>");
    for l in lines {
        out.push_str(&line_html(l, width));
    }
    out.push_str("</code></pre>");
    out
}

/// The finding evidence's string at `key`, if any.
fn ev<'a>(f: &'a super::FindingReport, key: &str) -> Option<&'a str> {
    f.evidence.get(key).and_then(|v| v.as_str())
}

fn claim_html(
    out: &mut String,
    findings: &[&super::FindingReport],
    r: &RecordReport,
    c: &ClaimReport,
    e: Option<&ClaimExcerpt>,
) {
    let _ = write!(
        out,
        r#"<article class="claim"><div class="claim-head"><h3>{}</h3>{}</div><p class="value">claimed {}</p>"#,
        esc(&c.label),
        badge(c.status),
        value_text(c)
    );
    let source = r
        .sources
        .iter()
        .find(|s| Some(&s.id) == c.source.as_ref());
    let cited = match (source, c.lines) {
        (Some(s), Some([a, b])) => {
            let lines = if a == b { format!("L{a}") } else { format!("L{a}–L{b}") };
            format!(
                "{} {lines} at <code>{}</code>",
                esc(s.path.as_deref().unwrap_or(&s.id)),
                esc(s.revision.as_deref().map_or("?", crate::record::short_rev))
            )
        }
        (None, Some([a, _])) => format!("line {a} of an unknown source"),
        _ => "no cited line".into(),
    };
    let href = r
        .claim_url(c)
        .and_then(|u| link(&u))
        .map_or(String::new(), |u| {
            // A branch or tag is not a pinned commit: say what the link is.
            let rev = source.and_then(|s| s.revision.as_deref());
            let what = match rev {
                Some(r) if crate::record::CommitId::parse(r).is_some() => {
                    "the line at the pinned commit".to_string()
                }
                Some(r) => format!("the line on <code>{}</code> now (not pinned)", esc(r)),
                None => "the cited line".to_string(),
            };
            format!(r#" · <a href="{u}">{what}</a>"#)
        });
    let _ = write!(out, r#"<p class="cite">cites {cited}{href}</p>"#);
    match e {
        Some(e) if !e.cited.is_empty() => out.push_str(&excerpt_html(&e.cited)),
        // A shifted figure's line is shown below, as where the value stands.
        _ if c.status == ClaimStatus::Shifted => {}
        _ => {
            if let (Some(n), Some(t)) = (c.found_line.or(c.lines.map(|l| l[0])), &c.line_text) {
                out.push_str(&excerpt_html(&[ExcerptLine {
                    number: n,
                    text: t.clone(),
                    cited: true,
                    mark: None,
                }]));
            }
        }
    }
    let mine: Vec<_> = findings
        .iter()
        .copied()
        .filter(|f| f.claim.as_deref() == Some(c.label.as_str()))
        .collect();
    // A look-alike the cited line holds, and why it is not the figure.
    for f in &mine {
        if let Some(rej) = f.evidence.get("rejected").and_then(|v| v.as_object()) {
            let s = |k: &str| rej.get(k).and_then(|v| v.as_str()).unwrap_or("?");
            let _ = write!(
                out,
                r#"<p class="note">Rejected look-alike on L{}: <code>{}</code> ({}): {}</p>"#,
                rej.get("line").and_then(|v| v.as_u64()).unwrap_or(0),
                esc(s("text")),
                esc(s("role")),
                esc(s("reason"))
            );
        }
    }
    for f in mine.iter().filter(|f| f.code.as_str() == "line-out-of-range") {
        let count = f.evidence.get("line_count").and_then(|v| v.as_u64()).unwrap_or(0);
        let _ = write!(
            out,
            r#"<p class="note">The cited line is past the end of the document ({count} line(s)).</p>"#
        );
    }
    if c.status == ClaimStatus::Missing && !mine.iter().any(|f| f.evidence.contains_key("rejected")) {
        out.push_str(r#"<p class="note">The claimed value is nowhere in the document.</p>"#);
    }
    if c.status == ClaimStatus::Shifted {
        if let Some(n) = c.found_line {
            let _ = write!(out, r#"<p class="note">The value stands on L{n} instead:</p>"#);
            match e {
                Some(e) if !e.found.is_empty() => out.push_str(&excerpt_html(&e.found)),
                _ => {
                    if let Some(t) = &c.line_text {
                        out.push_str(&excerpt_html(&[ExcerptLine {
                            number: n,
                            text: t.clone(),
                            cited: true,
                            mark: None,
                        }]));
                    }
                }
            }
        }
    }
    // Drift: the head's line beside the pinned one.
    for f in mine.iter().filter(|f| f.code.as_str() == "value-superseded") {
        if let Some(t) = ev(f, "head_text") {
            let n = f.evidence.get("head_line").and_then(|v| v.as_u64()).unwrap_or(0);
            let head = ev(f, "head").map_or("?", crate::record::short_rev);
            let _ = write!(
                out,
                r#"<p class="note">At the head <code>{}</code>, L{n} reads:</p>"#,
                esc(head)
            );
            let href = f
                .web_url()
                .and_then(|u| link(&u))
                .map_or(String::new(), |u| format!(r#"<p class="cite"><a href="{u}">the line at the head</a></p>"#));
            out.push_str(&excerpt_html(&[ExcerptLine {
                number: u32::try_from(n).unwrap_or(0),
                text: t.to_string(),
                cited: true,
                mark: None,
            }]));
            out.push_str(&href);
        }
    }
    if c.inconsistent_value {
        out.push_str(r#"<p class="note">The figure disagrees with its own correct/total.</p>"#);
    }
    out.push_str("</article>");
}

fn findings_html(out: &mut String, findings: &[&super::FindingReport]) {
    if findings.is_empty() {
        return;
    }
    out.push_str(r#"<h3>Findings</h3><ul class="findings">"#);
    for f in findings {
        let not_counted = match (&f.ignored, f.baseline) {
            (Some(i), _) => format!(" (ignored: {})", esc(&i.reason)),
            (None, true) => " (baseline)".into(),
            _ => String::new(),
        };
        let href = f
            .web_url()
            .and_then(|u| link(&u))
            .map_or(String::new(), |u| format!(r#" <a href="{u}">cited line</a>"#));
        let _ = write!(
            out,
            r#"<li><span class="sev sev-{sev}">{sev}</span> <code>{}</code> {}{not_counted}{href}<br><span class="hint">hint: {}</span></li>"#,
            f.code.as_str(),
            super::escape::html_text(&f.message),
            super::escape::html_text(&f.hint),
            sev = f.severity,
        );
    }
    out.push_str("</ul>");
}

fn sources_html(out: &mut String, r: &RecordReport) {
    if r.sources.is_empty() {
        return;
    }
    out.push_str(r#"<h3>Sources</h3><div class="tablewrap"><table><thead><tr><th>source</th><th>document</th><th>status</th><th>sha256</th><th>git blob</th></tr></thead><tbody>"#);
    for s in &r.sources {
        let status = match s.status {
            SourceStatus::Checked => "checked",
            SourceStatus::Absent => "absent",
            SourceStatus::Unchecked => "unchecked",
        };
        let mut status_text = status.to_string();
        if let Some(why) = &s.reason {
            let _ = write!(status_text, ": {why}");
        }
        if let Some(t) = &s.stale_since {
            let _ = write!(status_text, " (stale since {t})");
        }
        let doc = format!(
            "{} at <code>{}</code>",
            esc(s.path.as_deref().or(s.url.as_deref()).unwrap_or("?")),
            esc(s.revision.as_deref().map_or("?", crate::record::short_rev))
        );
        let hash = |h: &Option<String>| h.as_deref().map_or("—".to_string(), esc);
        // Which is which, and whether they agree.
        let sha = match (&s.sha256.expected, &s.sha256.actual) {
            (Some(e), Some(a)) if e.eq_ignore_ascii_case(a) => {
                format!("recorded = at the commit: <code>{}</code>", esc(e))
            }
            (e, a) => format!(
                "recorded: <code>{}</code><br>at the commit: <code>{}</code>{}",
                hash(e),
                hash(a),
                if e.is_some() && a.is_some() { " (they differ)" } else { "" }
            ),
        };
        let _ = write!(
            out,
            r#"<tr><td>{}</td><td>{doc}</td><td>{}</td><td class="hash">{sha}</td><td class="hash"><code>{}</code></td></tr>"#,
            esc(&s.id),
            super::escape::html_text(&status_text),
            hash(&s.git_blob),
        );
    }
    out.push_str("</tbody></table></div>");
}

/// The proof sheet, with the cited lines' context where `excerpts` has it.
pub(crate) fn render_with(report: &Report, excerpts: &Excerpts) -> String {
    let s = &report.summary;
    let worst = report.worst();
    let verdict = if worst == Some(crate::finding::Severity::Error) {
        "errors found"
    } else if !s.complete {
        "incomplete"
    } else if worst == Some(crate::finding::Severity::Warning) {
        "warnings"
    } else {
        "clean"
    };
    let mut out = String::with_capacity(16 << 10);
    let _ = write!(
        out,
        r#"<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="color-scheme" content="light"><meta name="referrer" content="no-referrer"><title>pinaudit proof sheet: {verdict}</title><style>{STYLE}</style></head>
<body><header><h1>pinaudit proof sheet: {verdict}</h1><p class="meta">{} {} · {}</p><ul class="summary" aria-label="summary"><li><b>{}</b> record(s)</li><li><b>{}</b> of {} claim(s) verified, {}</li><li><b>{}</b> error(s)</li><li><b>{}</b> warning(s)</li><li><b>{}</b> note(s)</li><li><b>{}</b> source(s), <b>{}</b> unchecked, <b>{}</b> stale</li></ul></header>
<main>"#,
        report.tool.name,
        esc(report.tool.version),
        esc(&report.generated_at),
        s.records,
        s.claims_by_status.verified,
        s.claims,
        esc(&s.claims_by_status.words()),
        s.findings.error,
        s.findings.warning,
        s.findings.note,
        s.sources,
        s.unchecked_sources,
        s.stale_sources,
    );
    let grouped = report.findings_by_record();
    for (ri, (r, mine)) in report.records.iter().zip(&grouped.records).enumerate() {
        let _ = write!(
            out,
            r#"<section class="record"><h2>{}</h2><p class="file">{}</p>"#,
            esc(&r.id),
            esc(&r.file)
        );
        for (ci, c) in r.claims.iter().enumerate() {
            claim_html(&mut out, mine, r, c, excerpts.get(&(ri, ci)));
        }
        findings_html(&mut out, mine);
        sources_html(&mut out, r);
        out.push_str("</section>");
    }
    let orphans = &grouped.orphans;
    if !orphans.is_empty() {
        out.push_str(r#"<section class="record"><h2>Unreadable inputs</h2>"#);
        findings_html(&mut out, orphans);
        out.push_str("</section>");
    }
    out.push_str("</main></body></html>\n");
    out
}

/// The proof sheet without context lines (each figure shows its report line);
/// `audit` reads the context from the cache and calls [`render_with`].
pub(crate) fn write(report: &Report, _opts: &super::RenderOptions, out: &mut super::Out) {
    out.push_str(&render_with(report, &Excerpts::new()));
}
