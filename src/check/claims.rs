//! `line-out-of-range`, `value-missing`, `value-shifted`: does the cited line at the
//! pinned revision really carry the claimed value? This is the check no other tool
//! makes; the matching rules live in [`crate::matcher`].

use serde::Serialize;

use crate::finding::{Code, Finding};
use crate::matcher::{self, Expected, Match, MatchKind};
use crate::record::{Claim, Record, Source};
pub use crate::result::{ClaimStatus, Verdict};

use super::location::{claim_location, show_target};
use super::{excerpt, SourceText};

/// `line-out-of-range` evidence.
#[derive(Serialize)]
struct LineOutOfRange {
    line_count: usize,
    /// The line nearest to the citation that carries the value, if any.
    nearest_line: Option<usize>,
    nearest_text: Option<String>,
}

/// `value-shifted` evidence.
#[derive(Serialize)]
struct ValueShifted<'a> {
    value: &'a str,
    cited_lines: [u32; 2],
    nearest_line: usize,
    nearest_text: String,
    cited_text: String,
}

/// `value-missing` evidence.
#[derive(Serialize)]
struct ValueMissing<'a> {
    value: &'a str,
    cited_text: String,
}

/// The matcher's view of a claim, when it has a value to look for.
pub fn expected(c: &Claim) -> Option<Expected<'_>> {
    Some(Expected {
        value: c.value.as_ref()?.text(),
        unit: c.unit.as_deref(),
        correct: c.correct,
        total: c.total,
    })
}

fn status_of(m: &Match) -> ClaimStatus {
    if m.kind == MatchKind::Rounded || m.rounded {
        ClaimStatus::Rounded
    } else {
        ClaimStatus::Verified
    }
}

/// Checks one claim against the document its source holds at the pinned revision.
pub fn check(
    record: &Record,
    s: &Source,
    c: &Claim,
    doc: &SourceText,
    out: &mut Vec<Finding>,
) -> Verdict {
    let (Some(lines), Some(exp)) = (c.lines, expected(c)) else {
        return Verdict::unchecked();
    };
    let all = doc.lines();
    let loc = claim_location(s, c);
    let found_at = |index: usize, m: Match, status: ClaimStatus| Verdict {
        status,
        found_line: Some(index as u32 + 1),
        line_text: all.get(index).map(|l| excerpt(l)),
        found: Some(m),
    };
    let (first, last) = (lines.first() as usize, lines.last() as usize);
    if last > doc.len() {
        let nearest = matcher::nearest_line(&all, first - 1..last, &exp);
        out.push(
            Finding::new(
                Code::LineOutOfRange,
                &record.id,
                format!(
                    "figure `{}` cites {} but `{}` has {} line(s) at `{}`",
                    c.label,
                    lines,
                    loc.path.as_deref().unwrap_or("?"),
                    doc.len(),
                    short(&loc.revision)
                ),
            )
            .claim(&c.label)
            .source(&s.id)
            .at(loc)
            .evidence(LineOutOfRange {
                line_count: doc.len(),
                nearest_line: nearest.as_ref().map(|(i, _)| i + 1),
                nearest_text: nearest
                    .as_ref()
                    .and_then(|(i, _)| all.get(*i).map(|l| excerpt(l))),
            }),
        );
        // The value may still be in the document: say where, as for a shifted one.
        return match nearest {
            Some((i, m)) => found_at(i, m, ClaimStatus::Shifted),
            None => Verdict::missing(),
        };
    }
    let cited = all[first - 1..last].iter().copied();
    if let Some((i, m)) = matcher::find_in_lines(cited, &exp) {
        let status = status_of(&m);
        return found_at(first - 1 + i, m, status);
    }
    if let Some((i, m)) = matcher::nearest_line(&all, first - 1..last, &exp) {
        out.push(
            Finding::new(
                Code::ValueShifted,
                &record.id,
                format!(
                    "figure `{}` ({}) is not on {} but on L{} of `{}`",
                    c.label,
                    exp.value,
                    lines,
                    i + 1,
                    loc.path.as_deref().unwrap_or("?")
                ),
            )
            .claim(&c.label)
            .source(&s.id)
            .at(loc)
            .evidence(ValueShifted {
                value: exp.value,
                cited_lines: [lines.first(), lines.last()],
                nearest_line: i + 1,
                nearest_text: excerpt(all[i]),
                cited_text: excerpt(all[first - 1]),
            }),
        );
        return found_at(i, m, ClaimStatus::Shifted);
    }
    out.push(
        Finding::new(
            Code::ValueMissing,
            &record.id,
            format!(
                "figure `{}` ({}{}) is nowhere in `{}` at `{}`",
                c.label,
                exp.value,
                c.unit.as_deref().map_or(String::new(), |u| format!(" {u}")),
                loc.path.as_deref().unwrap_or("?"),
                short(&loc.revision)
            ),
        )
        .with_hint(
            show_target(&record.file, s, Some(c), lines.first())
                .map(|t| format!("check the figure against the document with `pinaudit show {t}`")),
        )
        .claim(&c.label)
        .source(&s.id)
        .at(loc)
        .evidence(ValueMissing {
            value: exp.value,
            cited_text: excerpt(all[first - 1]),
        }),
    );
    Verdict {
        status: ClaimStatus::Missing,
        found_line: None,
        line_text: Some(excerpt(all[first - 1])),
        found: None,
    }
}

fn short(rev: &Option<String>) -> &str {
    rev.as_deref().map_or("?", crate::record::short_rev)
}
