//! `line-out-of-range`, `value-missing`, `value-shifted`: does the cited line at the
//! pinned revision really carry the claimed value? This is the check no other tool
//! makes; the matching rules live in [`crate::matcher`].

use serde::Serialize;

use crate::finding::{evidence, Code, Finding, Shape};
use crate::matcher::{self, Document, Expected, Match, MatchKind, Rejected};
use crate::record::{Claim, Record, Source};
pub use crate::result::{ClaimStatus, Verdict};

use super::location::{claim_location, show_target};
use super::{excerpt, SourceText};

/// The figures a cited line carries.
pub(crate) struct Claims;

impl super::Check for Claims {
    fn evidence(&self) -> &'static [Shape] {
        const SHAPES: &[Shape] = &[
            Shape::of::<LineOutOfRange>(),
            Shape::of::<ValueShifted<'static>>(),
            Shape::of::<ValueMissing<'static>>(),
        ];
        SHAPES
    }
}

evidence! {
    /// `line-out-of-range` evidence.
    #[derive(Serialize)]
    pub(crate) struct LineOutOfRange for(LineOutOfRange) identity() {
        line_count: usize,
        /// The line nearest to the citation that carries the value, if any.
        nearest_line: Option<usize>,
        nearest_text: Option<String>,
    }
}

evidence! {
    /// `value-shifted` evidence.
    #[derive(Serialize)]
    pub(crate) struct ValueShifted<'a> for(ValueShifted) identity() {
        value: &'a str,
        cited_lines: [u32; 2],
        nearest_line: usize,
        nearest_text: String,
        cited_text: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        rejected: Option<RejectedEvidence<'a>>,
    }
}

evidence! {
    /// `value-missing` evidence.
    #[derive(Serialize)]
    pub(crate) struct ValueMissing<'a> for(ValueMissing) identity() {
        value: &'a str,
        cited_text: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        rejected: Option<RejectedEvidence<'a>>,
    }
}

/// The look-alike a cited line holds, and why it is not the figure.
#[derive(Serialize)]
struct RejectedEvidence<'a> {
    line: u32,
    text: &'a str,
    role: &'a str,
    reason: &'a str,
}

impl<'a> RejectedEvidence<'a> {
    fn of(r: &'a Option<(u32, Rejected)>) -> Option<RejectedEvidence<'a>> {
        r.as_ref().map(|(i, r)| RejectedEvidence {
            line: i + 1,
            text: &r.text,
            role: &r.role,
            reason: &r.reason,
        })
    }
}

/// `; the cited line holds ...`: the message's part about a rejected look-alike.
fn rejected_note(r: &Option<(u32, Rejected)>) -> String {
    r.as_ref().map_or(String::new(), |(i, r)| {
        format!("; on L{}, {}", i + 1, r.reason)
    })
}

/// The matcher's view of a claim, when it has a value to look for.
pub fn expected(c: &Claim) -> Option<Expected<'_>> {
    Some(Expected {
        value: c.value.as_ref()?.text(),
        unit: c.unit.as_deref(),
        correct: c.correct,
        total: c.total,
        label: Some(c.label.as_str()).filter(|l| !l.is_empty()),
        metric: c.metric.as_deref(),
        statistic: c.statistic.as_deref(),
    })
}

fn status_of(m: &Match) -> ClaimStatus {
    if m.kind == MatchKind::Rounded || m.rounded {
        ClaimStatus::Rounded
    } else {
        ClaimStatus::Verified
    }
}

/// What a document says about one claim: a pure function of the document's
/// text, the cited lines and the expected value (and of the matcher), so it is
/// remembered by blob id in `CACHE/checks.store` ([`memo_key`]); the findings
/// and the verdict are built from it by [`report`].
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// The citation ends past the document's last line; the value's nearest line
    /// (0-based), its match and its excerpt, if any.
    OutOfRange {
        line_count: u32,
        nearest: Option<(u32, Match, String)>,
    },
    /// The value is on the cited line at 0-based `index`.
    Cited { index: u32, m: Match, text: String },
    /// The value is not on the cited lines but on another one; the look-alike the
    /// cited lines hold, if any, with its 0-based line.
    Shifted {
        index: u32,
        m: Match,
        text: String,
        cited_text: String,
        rejected: Option<(u32, Rejected)>,
    },
    /// The value is nowhere in the document (in the claim's sense).
    Missing {
        cited_text: String,
        rejected: Option<(u32, Rejected)>,
    },
}

/// Reads what `doc` says about the value `exp` cited at 1-based lines
/// `first..=last`.
pub fn judge(doc: &SourceText, first: usize, last: usize, exp: &Expected) -> Outcome {
    let all = doc.lines();
    let document = Document::new(&all, doc.layout());
    let text_at = |i: usize| all.get(i).map(|l| excerpt(l)).unwrap_or_default();
    if last > doc.len() {
        let nearest = document.nearest(first - 1..last, exp);
        return Outcome::OutOfRange {
            line_count: doc.len() as u32,
            nearest: nearest.map(|(i, m)| (i as u32, m, text_at(i))),
        };
    }
    let cited = document.cited(first - 1..last, exp);
    if let Some((index, m)) = cited.found {
        return Outcome::Cited {
            index: index as u32,
            m,
            text: text_at(index),
        };
    }
    let rejected = cited.rejected.map(|(i, r)| (i as u32, r));
    let nearest = document
        .nearest(first - 1..last, exp)
        .filter(|(_, m)| !(cited.copied && m.rounded));
    if let Some((i, m)) = nearest {
        return Outcome::Shifted {
            index: i as u32,
            m,
            text: text_at(i),
            cited_text: text_at(first - 1),
            rejected,
        };
    }
    Outcome::Missing {
        cited_text: text_at(first - 1),
        rejected,
    }
}

type Hit = Option<(usize, Match, String)>;

/// What [`judge_stream`] has seen of one claim so far.
struct State<'e> {
    first: usize,
    last: usize,
    claim: Option<matcher::Prepared<'e>>,
    exact: Hit,
    rounded: Hit,
    rejected: Option<(u32, Rejected)>,
    /// A look-alike on the cited lines carries the claim's exact digits.
    copied: bool,
    cited_text: String,
    /// The nearest lines carrying the value exactly and as a rounding the
    /// figure moved to ([`matcher::Prepared::moved_to`]), before the citation
    /// (the latest seen) and after it (the first seen).
    before: [Hit; 2],
    after: [Hit; 2],
}

impl State<'_> {
    /// The claim's outcome in a document of `len` lines, `start..end` being the
    /// citation clamped to the document.
    fn outcome(self, start: usize, end: usize, len: usize) -> Outcome {
        let pick = |b: Hit, a: Hit| match (b, a) {
            (Some(b), Some(a)) => Some(if start - b.0 <= a.0 + 1 - end { b } else { a }),
            (b, a) => b.or(a),
        };
        let [before_exact, before_rounded] = self.before;
        let [after_exact, after_rounded] = self.after;
        let nearest = pick(before_exact, after_exact)
            .or_else(|| pick(before_rounded, after_rounded).filter(|_| !self.copied));
        let nearest = nearest.map(|(i, m, t)| (i as u32, m, t));
        if self.last > len {
            return Outcome::OutOfRange {
                line_count: len as u32,
                nearest,
            };
        }
        if let Some((i, m, text)) = self.exact.or(self.rounded) {
            return Outcome::Cited {
                index: i as u32,
                m,
                text,
            };
        }
        match nearest {
            Some((index, m, text)) => Outcome::Shifted {
                index,
                m,
                text,
                cited_text: self.cited_text,
                rejected: self.rejected,
            },
            None => Outcome::Missing {
                cited_text: self.cited_text,
                rejected: self.rejected,
            },
        }
    }
}

/// Each line of the document with its structure, in order.
fn each_line<R: std::io::Read>(
    reader: R,
    mut visit: impl FnMut(usize, &str, &matcher::LineCtx),
) -> std::io::Result<usize> {
    let mut stream = matcher::Stream::default();
    let len = super::for_each_line(reader, |i, bytes| {
        if let Some((j, line, ctx)) = stream.push(i, &String::from_utf8_lossy(bytes)) {
            visit(j, &line, &ctx);
        }
    })?;
    if let Some((j, line, ctx)) = stream.finish() {
        visit(j, &line, &ctx);
    }
    Ok(len)
}

/// [`judge`] for each of `wanted` (1-based first and last cited line, value) in a
/// document too large to hold, read as a stream from what `open`
/// gives: one pass reads the cited lines and counts the lines; a second, only
/// when a value is not on its cited lines, looks for the nearest line that
/// carries it (the nearest before and the first after the citation, the earlier
/// on a tie, as [`matcher::nearest_line`]). Memory: the longest line, and one
/// excerpt per claim. Gives what [`judge`] gives on the same document.
pub fn judge_stream<R: std::io::Read>(
    mut open: impl FnMut() -> std::io::Result<R>,
    wanted: &[(usize, usize, Expected<'_>)],
) -> std::io::Result<Vec<Outcome>> {
    let mut states: Vec<State> = wanted
        .iter()
        .map(|(first, last, exp)| State {
            first: *first,
            last: *last,
            claim: matcher::Prepared::new(exp),
            exact: None,
            rounded: None,
            rejected: None,
            copied: false,
            cited_text: String::new(),
            before: [None, None],
            after: [None, None],
        })
        .collect();
    let len = each_line(open()?, |i, line, ctx| {
        for st in states.iter_mut() {
            if i + 1 < st.first || i >= st.last || st.exact.is_some() {
                continue;
            }
            if i + 1 == st.first {
                st.cited_text = excerpt(line);
            }
            let Some(found) = st.claim.as_ref().map(|c| c.find(line, ctx)) else {
                continue;
            };
            match found.best {
                Some(m) if !m.rounded => st.exact = Some((i, m, excerpt(line))),
                Some(m) => {
                    st.rounded.get_or_insert((i, m, excerpt(line)));
                }
                None => {
                    st.copied |= found.copied;
                    if let Some(r) = found.rejected {
                        st.rejected.get_or_insert((i as u32, r));
                    }
                }
            }
        }
    })?;
    let in_range = |st: &State| st.last <= len && (st.exact.is_some() || st.rounded.is_some());
    // The nearest line outside each citation, clamped to the document as
    // `Document::nearest` clamps it.
    let bounds: Vec<(usize, usize)> = states
        .iter()
        .map(|st| {
            let start = st.first.saturating_sub(1).min(len);
            (start, st.last.clamp(start, len))
        })
        .collect();
    if states.iter().any(|st| !in_range(st) && st.claim.is_some()) {
        each_line(open()?, |i, line, ctx| {
            for (st, &(start, end)) in states.iter_mut().zip(&bounds) {
                if in_range(st) || (start <= i && i < end) || st.after[0].is_some() {
                    continue;
                }
                let Some(claim) = st.claim.as_ref() else {
                    continue;
                };
                if let Some(m) = claim.find(line, ctx).best.filter(|m| claim.moved_to(m)) {
                    let slot = usize::from(m.rounded);
                    let found = Some((i, m, excerpt(line)));
                    if i < start {
                        st.before[slot] = found;
                    } else if st.after[slot].is_none() {
                        st.after[slot] = found;
                    }
                }
            }
        })?;
    }
    Ok(states
        .into_iter()
        .zip(bounds)
        .map(|(st, (start, end))| st.outcome(start, end, len))
        .collect())
}

/// The key of a claim's [`Outcome`] in blob `blob`; `None` for a claim that
/// cites no line or no value (nothing to remember).
pub fn memo_key(blob: &str, c: &Claim) -> Option<[u8; 32]> {
    let (Some(lines), Some(exp)) = (c.lines, expected(c)) else {
        return None;
    };
    let unit = match exp.unit {
        Some(u) => format!("+{u}"),
        None => "-".to_string(),
    };
    let score = format!("{:?}/{:?}/{:?}", exp.correct, exp.total, exp.label);
    Some(crate::memo::key(
        "claim",
        &[
            blob.as_bytes(),
            &lines.first().to_le_bytes(),
            &lines.last().to_le_bytes(),
            exp.value.as_bytes(),
            unit.as_bytes(),
            score.as_bytes(),
        ],
    ))
}

/// The remembered outcome of `c` under `key`, when the memo holds one that
/// makes sense for the claim's cited lines; one that does not (damaged or
/// planted) is forgotten and never used.
pub fn remembered(memo: &dyn crate::memo::CheckMemo, key: &[u8; 32], c: &Claim) -> Option<Outcome> {
    let lines = c.lines?;
    let decoded = memo.peek(key, |raw| {
        decode(raw).filter(|o| sound(o, lines.first(), lines.last()))
    })?;
    if decoded.is_none() {
        memo.forget(key);
    }
    decoded
}

/// Remembers `outcome` under `key`.
pub fn remember(memo: &dyn crate::memo::CheckMemo, key: [u8; 32], outcome: &Outcome) {
    memo.put(key, encode(outcome));
}

fn kind_code(k: MatchKind) -> u32 {
    match k {
        MatchKind::Exact => 0,
        MatchKind::Rounded => 1,
        MatchKind::Fraction => 2,
        MatchKind::Count => 3,
        MatchKind::Ratio => 4,
    }
}

fn kind_of(code: u32) -> Option<MatchKind> {
    Some(match code {
        0 => MatchKind::Exact,
        1 => MatchKind::Rounded,
        2 => MatchKind::Fraction,
        3 => MatchKind::Count,
        4 => MatchKind::Ratio,
        _ => return None,
    })
}

fn put_match(e: &mut crate::memo::Enc, m: &Match) {
    e.u32(kind_code(m.kind))
        .u32(u32::from(m.rounded))
        .u32(m.span.start as u32)
        .u32(m.span.end as u32)
        .str(&m.text);
}

fn get_match(d: &mut crate::memo::Dec) -> Option<Match> {
    let kind = kind_of(d.u32()?)?;
    let rounded = match d.u32()? {
        0 => false,
        1 => true,
        _ => return None,
    };
    let (start, end) = (d.u32()? as usize, d.u32()? as usize);
    let text = d.string()?;
    (start <= end).then_some(Match {
        kind,
        rounded,
        span: start..end,
        text,
    })
}

fn put_rejected(e: &mut crate::memo::Enc, r: &Option<(u32, Rejected)>) {
    match r {
        None => {
            e.u32(0);
        }
        Some((line, r)) => {
            e.u32(1)
                .u32(*line)
                .u32(r.span.start as u32)
                .u32(r.span.end as u32)
                .str(&r.text)
                .str(&r.role)
                .str(&r.reason);
        }
    }
}

/// `Some(None)` for no look-alike, `None` for bytes that are no rejection.
fn get_rejected(d: &mut crate::memo::Dec) -> Option<Option<(u32, Rejected)>> {
    match d.u32()? {
        0 => Some(None),
        1 => {
            let line = d.u32()?;
            let (start, end) = (d.u32()? as usize, d.u32()? as usize);
            let r = Rejected {
                span: start..end,
                text: d.string()?,
                role: d.string()?,
                reason: d.string()?,
            };
            (start <= end).then_some(Some((line, r)))
        }
        _ => None,
    }
}

/// The bytes of an outcome in the memo.
pub(crate) fn encode(o: &Outcome) -> Vec<u8> {
    let mut e = crate::memo::Enc::default();
    match o {
        Outcome::OutOfRange {
            line_count,
            nearest,
        } => {
            e.u32(0).u32(*line_count);
            match nearest {
                None => {
                    e.u32(0);
                }
                Some((i, m, text)) => {
                    e.u32(1).u32(*i);
                    put_match(&mut e, m);
                    e.str(text);
                }
            }
        }
        Outcome::Cited { index, m, text } => {
            e.u32(1).u32(*index);
            put_match(&mut e, m);
            e.str(text);
        }
        Outcome::Shifted {
            index,
            m,
            text,
            cited_text,
            rejected,
        } => {
            e.u32(2).u32(*index);
            put_match(&mut e, m);
            e.str(text).str(cited_text);
            put_rejected(&mut e, rejected);
        }
        Outcome::Missing {
            cited_text,
            rejected,
        } => {
            e.u32(3).str(cited_text);
            put_rejected(&mut e, rejected);
        }
    }
    e.0
}

/// The outcome `bytes` encode, if they are one whole outcome.
pub(crate) fn decode(bytes: &[u8]) -> Option<Outcome> {
    let mut d = crate::memo::Dec(bytes);
    let o = match d.u32()? {
        0 => {
            let line_count = d.u32()?;
            let nearest = match d.u32()? {
                0 => None,
                1 => {
                    let i = d.u32()?;
                    let m = get_match(&mut d)?;
                    Some((i, m, d.string()?))
                }
                _ => return None,
            };
            Outcome::OutOfRange {
                line_count,
                nearest,
            }
        }
        1 => {
            let index = d.u32()?;
            let m = get_match(&mut d)?;
            Outcome::Cited {
                index,
                m,
                text: d.string()?,
            }
        }
        2 => {
            let index = d.u32()?;
            let m = get_match(&mut d)?;
            Outcome::Shifted {
                index,
                m,
                text: d.string()?,
                cited_text: d.string()?,
                rejected: get_rejected(&mut d)?,
            }
        }
        3 => Outcome::Missing {
            cited_text: d.string()?,
            rejected: get_rejected(&mut d)?,
        },
        _ => return None,
    };
    d.done().then_some(o)
}

/// Whether an outcome is possible for a claim citing 1-based lines
/// `first..=last`: a remembered one that is not is never trusted.
fn sound(o: &Outcome, first: u32, last: u32) -> bool {
    let cited = first.saturating_sub(1)..last;
    match o {
        Outcome::OutOfRange {
            line_count,
            nearest,
        } => *line_count < last && nearest.as_ref().is_none_or(|(i, _, _)| i < line_count),
        Outcome::Cited { index, .. } => cited.contains(index),
        Outcome::Shifted {
            index, rejected, ..
        } => !cited.contains(index) && rejected_sound(rejected, &cited),
        Outcome::Missing { rejected, .. } => rejected_sound(rejected, &cited),
    }
}

fn rejected_sound(r: &Option<(u32, Rejected)>, cited: &std::ops::Range<u32>) -> bool {
    r.as_ref().is_none_or(|(line, _)| cited.contains(line))
}

/// Checks one claim against a document read whole ([`judge`], then [`report`]):
/// for documents no memo keeps (web documents).
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
    let outcome = judge(doc, lines.first() as usize, lines.last() as usize, &exp);
    report(record, s, c, &outcome, out)
}

/// The verdict and findings of a claim whose document says `outcome`.
pub fn report(
    record: &Record,
    s: &Source,
    c: &Claim,
    outcome: &Outcome,
    out: &mut Vec<Finding>,
) -> Verdict {
    let (Some(lines), Some(exp)) = (c.lines, expected(c)) else {
        return Verdict::unchecked();
    };
    let loc = claim_location(s, c);
    let found_at = |index: u32, text: &str, status: ClaimStatus| Verdict {
        status,
        found_line: Some(index + 1),
        line_text: Some(text.to_string()),
    };
    match outcome {
        Outcome::OutOfRange {
            line_count,
            nearest,
        } => {
            out.push(line_out_of_range(record, s, c, loc, *line_count, nearest));
            // The value may still be in the document: say where, as for a shifted one.
            match nearest {
                Some((i, _, text)) => found_at(*i, text, ClaimStatus::Shifted),
                None => Verdict::missing(),
            }
        }
        Outcome::Cited { index, m, text } => found_at(*index, text, status_of(m)),
        Outcome::Shifted {
            index,
            text,
            cited_text,
            rejected,
            ..
        } => {
            out.push(
                Finding::new(
                    Code::ValueShifted,
                    &record.id,
                    format!(
                        "figure `{}` ({}) is not on {} but on L{} of `{}`{}",
                        c.label,
                        exp.value,
                        lines,
                        index + 1,
                        loc.path.as_deref().unwrap_or("?"),
                        rejected_note(rejected)
                    ),
                )
                .claim(&c.label)
                .source(&s.id)
                .at(loc)
                .evidence(ValueShifted {
                    value: exp.value,
                    cited_lines: [lines.first(), lines.last()],
                    nearest_line: *index as usize + 1,
                    nearest_text: text.clone(),
                    cited_text: cited_text.clone(),
                    rejected: RejectedEvidence::of(rejected),
                }),
            );
            found_at(*index, text, ClaimStatus::Shifted)
        }
        Outcome::Missing {
            cited_text,
            rejected,
        } => {
            out.push(value_missing(
                record,
                s,
                c,
                &exp,
                loc,
                (cited_text, rejected),
            ));
            Verdict {
                status: ClaimStatus::Missing,
                found_line: None,
                line_text: Some(cited_text.clone()),
            }
        }
    }
}

/// `line-out-of-range`: the cited lines are past the document's end; the line
/// nearest to them that carries the value, if any.
fn line_out_of_range(
    record: &Record,
    s: &Source,
    c: &Claim,
    loc: crate::finding::Location,
    line_count: u32,
    nearest: &Option<(u32, Match, String)>,
) -> Finding {
    let lines = c.lines.map(|l| l.to_string()).unwrap_or_default();
    Finding::new(
        Code::LineOutOfRange,
        &record.id,
        format!(
            "figure `{}` cites {} but `{}` has {} line(s) at `{}`",
            c.label,
            lines,
            loc.path.as_deref().unwrap_or("?"),
            line_count,
            short(&loc.revision)
        ),
    )
    .claim(&c.label)
    .source(&s.id)
    .at(loc)
    .evidence(LineOutOfRange {
        line_count: line_count as usize,
        nearest_line: nearest.as_ref().map(|(i, _, _)| *i as usize + 1),
        nearest_text: nearest.as_ref().map(|(_, _, t)| t.clone()),
    })
}

/// `value-missing`: the figure is nowhere in the document; what the cited line
/// says, and the look-alike it holds.
fn value_missing(
    record: &Record,
    s: &Source,
    c: &Claim,
    exp: &Expected<'_>,
    loc: crate::finding::Location,
    (cited_text, rejected): (&str, &Option<(u32, Rejected)>),
) -> Finding {
    let lines = c.lines.map_or(1, |l| l.first());
    Finding::new(
        Code::ValueMissing,
        &record.id,
        format!(
            "figure `{}` ({}{}) is nowhere in `{}` at `{}`{}",
            c.label,
            exp.value,
            c.unit.as_deref().map_or(String::new(), |u| format!(" {u}")),
            loc.path.as_deref().unwrap_or("?"),
            short(&loc.revision),
            rejected_note(rejected)
        ),
    )
    .with_hint(
        show_target(&record.file, s, Some(c), lines)
            .map(|t| format!("check the figure against the document with `pinaudit show {t}`")),
    )
    .claim(&c.label)
    .source(&s.id)
    .at(loc)
    .evidence(ValueMissing {
        value: exp.value,
        cited_text: cited_text.to_string(),
        rejected: RejectedEvidence::of(rejected),
    })
}

fn short(rev: &Option<String>) -> &str {
    rev.as_deref().map_or("?", crate::record::short_rev)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m() -> Match {
        Match {
            kind: MatchKind::Rounded,
            rounded: true,
            span: 3..6,
            text: "2.9".into(),
        }
    }

    #[test]
    fn streamed_judgement_is_the_in_memory_judgement() {
        let doc = "\u{feff}# results\n| model | tok/s |\n|---|---|\n| a | 2.90 |\nnothing\r\nx = 12.9\n\n2.9 again\nlast 98%";
        let text = SourceText::new(doc.as_bytes());
        let values = ["2.9", "98", "12.9", "7", "not a number", "0.98"];
        let mut wanted = Vec::new();
        for value in values {
            for (first, last) in [
                (1, 1),
                (4, 4),
                (4, 6),
                (5, 5),
                (6, 9),
                (9, 9),
                (10, 12),
                (20, 20),
            ] {
                let unit = if value == "98" { Some("%") } else { None };
                wanted.push((
                    first,
                    last,
                    Expected {
                        value,
                        unit,
                        ..Expected::default()
                    },
                ));
            }
        }
        let got = judge_stream(|| Ok(doc.as_bytes()), &wanted).expect("read");
        for ((first, last, exp), got) in wanted.iter().zip(got) {
            assert_eq!(
                got,
                judge(&text, *first, *last, exp),
                "{exp:?} at {first}-{last}"
            );
        }
    }

    #[test]
    fn a_claim_that_copied_a_look_alike_is_no_rounding_elsewhere() {
        // `3.5` on the cited line is part of a name: the claim copied it, so the raw
        // `3.450341…` of another row is not its figure; an exact copy elsewhere is.
        let doc = "name,win_rate\nClaude 3.5 Sonnet,40.56\nmodel-b,3.450341987080745\n";
        let text = SourceText::new(doc.as_bytes());
        let exp = |value| Expected {
            value,
            unit: Some("%"),
            ..Expected::default()
        };
        let wanted = [(2, 2, exp("3.5")), (2, 2, exp("3.450"))];
        let streamed = judge_stream(|| Ok(doc.as_bytes()), &wanted).expect("read");
        for ((first, last, exp), streamed) in wanted.iter().zip(streamed) {
            assert_eq!(streamed, judge(&text, *first, *last, exp));
        }
        assert!(matches!(
            judge(&text, 2, 2, &wanted[0].2),
            Outcome::Missing {
                rejected: Some(_),
                ..
            }
        ));
        assert!(matches!(
            judge(&text, 2, 2, &wanted[1].2),
            Outcome::Shifted { index: 2, .. }
        ));
    }

    #[test]
    fn outcomes_round_trip() {
        for o in [
            Outcome::OutOfRange {
                line_count: 3,
                nearest: None,
            },
            Outcome::OutOfRange {
                line_count: 3,
                nearest: Some((1, m(), "x 2.9".into())),
            },
            Outcome::Cited {
                index: 4,
                m: m(),
                text: "| a | 2.9 |".into(),
            },
            Outcome::Shifted {
                index: 9,
                m: m(),
                text: "b".into(),
                cited_text: "c".into(),
                rejected: None,
            },
            Outcome::Missing {
                cited_text: "é".into(),
                rejected: Some((
                    3,
                    Rejected {
                        span: 1..3,
                        text: "24".into(),
                        role: "other-column".into(),
                        reason: "`24` stands in column `Duration (s)`".into(),
                    },
                )),
            },
        ] {
            assert_eq!(decode(&encode(&o)), Some(o));
        }
        // Truncated, trailing bytes, unknown tags: not an outcome.
        let good = encode(&Outcome::Cited {
            index: 4,
            m: m(),
            text: "t".into(),
        });
        assert_eq!(decode(&good[..good.len() - 1]), None);
        assert_eq!(decode(&[good.clone(), vec![0]].concat()), None);
        assert_eq!(decode(&[9, 0, 0, 0]), None);
    }

    #[test]
    fn planted_outcomes_that_contradict_the_citation_are_refused() {
        let memo = crate::memo::InMemory::default();
        let memo: &dyn crate::memo::CheckMemo = &memo;
        let claim = Claim {
            label: "x".into(),
            source: Some("s".into()),
            lines: Some(crate::record::Lines::single(5).expect("lines")),
            value: crate::record::ClaimValue::parse("2.9"),
            unit: None,
            metric: None,
            statistic: None,
            url: None,
            correct: None,
            total: None,
            at: crate::record::At::default(),
            parsed_url: Default::default(),
        };
        let key = memo_key("0123456789abcdef0123456789abcdef01234567", &claim).expect("key");
        // "Verified on line 9" for a claim citing line 5: impossible.
        let planted = Outcome::Cited {
            index: 8,
            m: m(),
            text: "t".into(),
        };
        remember(memo, key, &planted);
        assert_eq!(remembered(memo, &key, &claim), None);
        // ... and it is forgotten, not kept for the next run.
        assert_eq!(memo.get(&key), None);
        let fine = Outcome::Missing {
            cited_text: "t".into(),
            rejected: None,
        };
        remember(memo, key, &fine);
        assert_eq!(remembered(memo, &key, &claim), Some(fine));
        assert!(remembered(memo, &key, &claim).is_some());
        memo.put(key, b"junk".to_vec());
        assert_eq!(remembered(memo, &key, &claim), None);
    }
}
