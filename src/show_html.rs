//! `show --history --format html`: the figure's history as one self-contained
//! page — no script, no external font, style or image — styled like the proof
//! sheet (`audit --format html`): the value per commit as an inline SVG chart,
//! the timeline as a table, and a word diff of each pinned line against the head.
//! Every string from the repository is HTML-escaped; a point that no longer
//! carries the claimed value differs in shape as well as colour.

use std::fmt::Write as _;

use crate::report::escape::html as esc;
use crate::show::{Resolved, Row, Timeline};

/// Extra rules for the history page beside the proof sheet's.
const STYLE: &str = r#"
table{border-collapse:collapse;width:100%;margin:.5rem 0}
th,td{border:1px solid var(--line);padding:.3rem .5rem;text-align:left;vertical-align:top;overflow-wrap:anywhere}
th{background:var(--band);white-space:nowrap}
td.code,code{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.9em}
.kept{color:#1a5e2a}.lost{color:#8a1c12;font-weight:600}
del{background:#ffebe9;color:#82071e}ins{background:#dafbe1;color:#044f1e;text-decoration:none}
svg{max-width:100%;height:auto;border:1px solid var(--line);background:#fff}
"#;

/// The page for `r`'s history.
pub(crate) fn page(r: &Resolved, tl: &Timeline) -> String {
    let mut out = String::new();
    let what = match (&r.claim, &tl.value) {
        (Some(c), Some(v)) => format!("{} ({v})", c.label),
        _ => format!("{} {}", tl.path, r.lines),
    };
    let _ = write!(
        out,
        r#"<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="color-scheme" content="light"><meta name="referrer" content="no-referrer"><title>pinaudit history: {title}</title><style>{base}{STYLE}</style></head>
<body><header><h1>History of {title}</h1><p>{lines} of <code>{path}</code> from the pin <code>{pin}</code> to the head <code>{head}</code>: {n} commit(s).</p></header><main>"#,
        title = esc(&what),
        base = crate::report::html::STYLE,
        lines = esc(&r.lines.to_string()),
        path = esc(&tl.path),
        pin = esc(&tl.pin),
        head = esc(&tl.head),
        n = tl.rows.len(),
    );
    if tl.value.is_some() {
        chart(&mut out, tl);
    }
    table(&mut out, &tl.rows);
    at_head(&mut out, tl);
    out.push_str("</main></body></html>\n");
    out
}

/// A number as written (`1,205`, `2.9`), for the chart.
fn numeric(s: &str) -> Option<f64> {
    s.replace(',', "").trim().parse().ok()
}

/// The value per commit: x the commit's place in the timeline, y the number the
/// followed line gives there; a circle while it carries the claimed value, a
/// square once it does not.
fn chart(out: &mut String, tl: &Timeline) {
    let points: Vec<(usize, &Row, f64, bool)> = tl
        .rows
        .iter()
        .enumerate()
        .filter_map(|(i, row)| {
            let line = row.lines.first()?;
            let v = numeric(line.number.as_deref()?)?;
            Some((i, row, v, line.carries == Some(true)))
        })
        .collect();
    if points.is_empty() {
        return;
    }
    let (w, h, pad_l, pad_r, pad_t, pad_b) = (720.0, 240.0, 64.0, 44.0, 20.0, 56.0);
    let lo = points.iter().map(|p| p.2).fold(f64::INFINITY, f64::min);
    let hi = points.iter().map(|p| p.2).fold(f64::NEG_INFINITY, f64::max);
    let (lo, hi) = if (hi - lo).abs() < f64::EPSILON {
        (lo - 1.0, hi + 1.0)
    } else {
        (lo - (hi - lo) * 0.1, hi + (hi - lo) * 0.1)
    };
    let n = tl.rows.len().max(2) - 1;
    let x = |i: usize| pad_l + (w - pad_l - pad_r) * i as f64 / n as f64;
    let y = |v: f64| pad_t + (h - pad_t - pad_b) * (hi - v) / (hi - lo);
    let value = tl.value.as_deref().unwrap_or("");
    let _ = write!(
        out,
        r#"<h2>Value per commit</h2><svg role="img" viewBox="0 0 {w} {h}" width="{w}" height="{h}" aria-labelledby="chart-title chart-desc"><title id="chart-title">The figure's value per commit</title><desc id="chart-desc">{n_points} commit(s) from {pin} to {head}; circles carry the claimed value {value}, squares no longer do.</desc>"#,
        n_points = points.len(),
        pin = esc(&tl.pin),
        head = esc(&tl.head),
        value = esc(value),
    );
    // Axes and the claimed value's level.
    let _ = write!(
        out,
        r##"<line x1="{pad_l}" y1="{pad_t}" x2="{pad_l}" y2="{b}" stroke="#4a5360"/><line x1="{pad_l}" y1="{b}" x2="{r}" y2="{b}" stroke="#4a5360"/>"##,
        b = h - pad_b,
        r = w - pad_r,
    );
    for v in [lo, hi] {
        let _ = write!(
            out,
            r##"<text x="{tx}" y="{ty:.1}" font-size="11" text-anchor="end" fill="#4a5360">{v:.2}</text>"##,
            tx = pad_l - 6.0,
            ty = y(v) + 4.0,
        );
    }
    if let Some(claimed) = numeric(value) {
        let _ = write!(
            out,
            r##"<line x1="{pad_l}" y1="{cy:.1}" x2="{r}" y2="{cy:.1}" stroke="#1a5e2a" stroke-dasharray="4 4"><title>claimed: {v}</title></line>"##,
            cy = y(claimed),
            r = w - pad_r,
            v = esc(value),
        );
    }
    let path: Vec<String> = points
        .iter()
        .map(|(i, _, v, _)| format!("{:.1},{:.1}", x(*i), y(*v)))
        .collect();
    let _ = write!(
        out,
        r##"<polyline fill="none" stroke="#4a5360" stroke-width="1.5" points="{}"/>"##,
        path.join(" ")
    );
    let every = tl.rows.len().div_ceil(12).max(1);
    for (i, row, v, carries) in &points {
        let (px, py) = (x(*i), y(*v));
        let tip = format!(
            "{} {}: {} ({})",
            row.commit,
            row.date,
            v,
            if *carries {
                "carries the claimed value"
            } else {
                "no longer carries the claimed value"
            }
        );
        if *carries {
            let _ = write!(
                out,
                r##"<circle cx="{px:.1}" cy="{py:.1}" r="5" fill="#1a5e2a"><title>{}</title></circle>"##,
                esc(&tip)
            );
        } else {
            let _ = write!(
                out,
                r##"<rect x="{:.1}" y="{:.1}" width="10" height="10" fill="#b42318"><title>{}</title></rect>"##,
                px - 5.0,
                py - 5.0,
                esc(&tip)
            );
        }
        if i % every == 0 {
            let _ = write!(
                out,
                r##"<text x="{px:.1}" y="{ly}" font-size="10" text-anchor="middle" fill="#1b1f24">{}</text><text x="{px:.1}" y="{dy}" font-size="9" text-anchor="middle" fill="#4a5360">{}</text>"##,
                esc(&row.commit),
                esc(row.date.get(..10).unwrap_or(&row.date)),
                ly = h - pad_b + 16.0,
                dy = h - pad_b + 30.0,
            );
        }
    }
    out.push_str("</svg>");
}

fn table(out: &mut String, rows: &[Row]) {
    out.push_str("<h2>Timeline</h2><table><thead><tr><th>Commit</th><th>Date</th><th>Author</th><th>Subject</th><th>Line</th><th>What it says</th><th>Text</th></tr></thead><tbody>");
    for (k, row) in rows.iter().enumerate() {
        let span = row.lines.len().max(1);
        let subject = if k == 0 {
            format!("{} (the pin)", row.subject)
        } else {
            row.subject.clone()
        };
        let _ = write!(
            out,
            r#"<tr><td class="code" rowspan="{span}">{}</td><td rowspan="{span}">{}</td><td rowspan="{span}">{}</td><td rowspan="{span}">{}</td>"#,
            esc(&row.commit),
            esc(&row.date),
            esc(&row.author),
            esc(&subject),
        );
        if row.lines.is_empty() {
            out.push_str("<td></td><td></td><td></td></tr>");
        }
        for (j, line) in row.lines.iter().enumerate() {
            if j > 0 {
                out.push_str("<tr>");
            }
            let class = match line.carries {
                Some(true) => " class=\"kept\"",
                Some(false) => " class=\"lost\"",
                None => "",
            };
            let mark = match line.carries {
                Some(true) => "● ",
                Some(false) => "■ ",
                None => "",
            };
            let _ = write!(
                out,
                r#"<td class="code">{}</td><td{class}>{mark}{}</td><td class="code">{}</td></tr>"#,
                esc(line
                    .place
                    .as_deref()
                    .unwrap_or(&format!("L{} gone", line.cited))),
                esc(&line.says),
                esc(&line.text),
            );
        }
    }
    out.push_str("</tbody></table>");
}

fn at_head(out: &mut String, tl: &Timeline) {
    let _ = write!(
        out,
        "<h2>At the head <code>{}</code></h2><ul>",
        esc(&tl.head)
    );
    for (cited, place, pinned, now) in &tl.at_head {
        match place {
            Some(place) => {
                let _ = write!(
                    out,
                    "<li>L{cited} is now <code>{}</code>: <code>",
                    esc(place)
                );
                for (tag, text) in crate::show::word_changes(pinned, now) {
                    let text = esc(&text);
                    let _ = match tag {
                        similar::ChangeTag::Equal => write!(out, "{text}"),
                        similar::ChangeTag::Delete => write!(out, "<del>{text}</del>"),
                        similar::ChangeTag::Insert => write!(out, "<ins>{text}</ins>"),
                    };
                }
                out.push_str("</code></li>");
            }
            None => {
                let _ = write!(
                    out,
                    "<li>L{cited} was removed (was: <code>{}</code>)</li>",
                    esc(pinned)
                );
            }
        }
    }
    out.push_str("</ul>");
}
