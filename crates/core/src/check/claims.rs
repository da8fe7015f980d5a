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
    /// The value is not on the cited lines but on another one.
    Shifted {
        index: u32,
        m: Match,
        text: String,
        cited_text: String,
    },
    /// The value is nowhere in the document.
    Missing { cited_text: String },
}

/// Reads what `doc` says about the value `exp` cited at 1-based lines
/// `first..=last`.
pub fn judge(doc: &SourceText, first: usize, last: usize, exp: &Expected) -> Outcome {
    let all = doc.lines();
    let text_at = |i: usize| all.get(i).map(|l| excerpt(l)).unwrap_or_default();
    if last > doc.len() {
        let nearest = matcher::nearest_line(&all, first - 1..last, exp);
        return Outcome::OutOfRange {
            line_count: doc.len() as u32,
            nearest: nearest.map(|(i, m)| (i as u32, m, text_at(i))),
        };
    }
    let cited = all[first - 1..last].iter().copied();
    if let Some((i, m)) = matcher::find_in_lines(cited, exp) {
        let index = first - 1 + i;
        return Outcome::Cited {
            index: index as u32,
            m,
            text: text_at(index),
        };
    }
    if let Some((i, m)) = matcher::nearest_line(&all, first - 1..last, exp) {
        return Outcome::Shifted {
            index: i as u32,
            m,
            text: text_at(i),
            cited_text: text_at(first - 1),
        };
    }
    Outcome::Missing {
        cited_text: text_at(first - 1),
    }
}

/// [`judge`] for each of `wanted` (1-based first and last cited line, value) in a
/// document too large to hold, read as a stream (issues 12, 13) from what `open`
/// gives: one pass reads the cited lines and counts the lines; a second, only
/// when a value is not on its cited lines, looks for the nearest line that
/// carries it (the nearest before and the first after the citation, the earlier
/// on a tie, as [`matcher::nearest_line`]). Memory: the longest line, and one
/// excerpt per claim. Gives what [`judge`] gives on the same document.
pub fn judge_stream<R: std::io::Read>(
    mut open: impl FnMut() -> std::io::Result<R>,
    wanted: &[(usize, usize, Expected<'_>)],
) -> std::io::Result<Vec<Outcome>> {
    struct State {
        first: usize,
        last: usize,
        claim: Option<matcher::Prepared>,
        exact: Option<(usize, Match, String)>,
        rounded: Option<(usize, Match, String)>,
        cited_text: String,
        before: Option<(usize, Match, String)>,
        after: Option<(usize, Match, String)>,
    }
    let mut states: Vec<State> = wanted
        .iter()
        .map(|(first, last, exp)| State {
            first: *first,
            last: *last,
            claim: matcher::Prepared::new(exp),
            exact: None,
            rounded: None,
            cited_text: String::new(),
            before: None,
            after: None,
        })
        .collect();
    let len = super::for_each_line(open()?, |i, bytes| {
        for st in states.iter_mut() {
            if i + 1 < st.first || i >= st.last || st.exact.is_some() {
                continue;
            }
            let line = String::from_utf8_lossy(bytes);
            if i + 1 == st.first {
                st.cited_text = excerpt(&line);
            }
            if let Some(m) = st.claim.as_ref().and_then(|c| c.find(&line)) {
                if !m.rounded {
                    st.exact = Some((i, m, excerpt(&line)));
                } else if st.rounded.is_none() {
                    st.rounded = Some((i, m, excerpt(&line)));
                }
            }
        }
    })?;
    let in_range = |st: &State| st.last <= len && (st.exact.is_some() || st.rounded.is_some());
    // The nearest line outside each citation, clamped to the document as
    // `nearest_line` clamps it.
    let bounds: Vec<(usize, usize)> = states
        .iter()
        .map(|st| {
            let start = st.first.saturating_sub(1).min(len);
            (start, st.last.clamp(start, len))
        })
        .collect();
    if states.iter().any(|st| !in_range(st) && st.claim.is_some()) {
        super::for_each_line(open()?, |i, bytes| {
            let mut line = None;
            for (st, &(start, end)) in states.iter_mut().zip(&bounds) {
                if in_range(st) || (start <= i && i < end) || st.after.is_some() {
                    continue;
                }
                let Some(claim) = st.claim.as_ref() else {
                    continue;
                };
                let line = line.get_or_insert_with(|| String::from_utf8_lossy(bytes));
                if let Some(m) = claim.find(line) {
                    let found = Some((i, m, excerpt(line)));
                    if i < start {
                        st.before = found;
                    } else {
                        st.after = found;
                    }
                }
            }
        })?;
    }
    Ok(states
        .into_iter()
        .zip(bounds)
        .map(|(st, (start, end))| {
            let nearest = match (st.before, st.after) {
                (Some(b), Some(a)) => Some(if start - b.0 <= a.0 + 1 - end { b } else { a }),
                (b, a) => b.or(a),
            };
            let nearest = nearest.map(|(i, m, t)| (i as u32, m, t));
            if st.last > len {
                return Outcome::OutOfRange {
                    line_count: len as u32,
                    nearest,
                };
            }
            if let Some((i, m, text)) = st.exact.or(st.rounded) {
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
                    cited_text: st.cited_text,
                },
                None => Outcome::Missing {
                    cited_text: st.cited_text,
                },
            }
        })
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
    let score = format!("{:?}/{:?}", exp.correct, exp.total);
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
        } => {
            e.u32(2).u32(*index);
            put_match(&mut e, m);
            e.str(text).str(cited_text);
        }
        Outcome::Missing { cited_text } => {
            e.u32(3).str(cited_text);
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
            }
        }
        3 => Outcome::Missing {
            cited_text: d.string()?,
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
        Outcome::Shifted { index, .. } => !cited.contains(index),
        Outcome::Missing { .. } => true,
    }
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
            out.push(
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
                    line_count: *line_count as usize,
                    nearest_line: nearest.as_ref().map(|(i, _, _)| *i as usize + 1),
                    nearest_text: nearest.as_ref().map(|(_, _, t)| t.clone()),
                }),
            );
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
            ..
        } => {
            out.push(
                Finding::new(
                    Code::ValueShifted,
                    &record.id,
                    format!(
                        "figure `{}` ({}) is not on {} but on L{} of `{}`",
                        c.label,
                        exp.value,
                        lines,
                        index + 1,
                        loc.path.as_deref().unwrap_or("?")
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
                }),
            );
            found_at(*index, text, ClaimStatus::Shifted)
        }
        Outcome::Missing { cited_text } => {
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
                    show_target(&record.file, s, Some(c), lines.first()).map(|t| {
                        format!("check the figure against the document with `pinaudit show {t}`")
                    }),
                )
                .claim(&c.label)
                .source(&s.id)
                .at(loc)
                .evidence(ValueMissing {
                    value: exp.value,
                    cited_text: cited_text.clone(),
                }),
            );
            Verdict {
                status: ClaimStatus::Missing,
                found_line: None,
                line_text: Some(cited_text.clone()),
            }
        }
    }
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
            },
            Outcome::Missing {
                cited_text: "é".into(),
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
            url: None,
            correct: None,
            total: None,
            at: crate::record::At::default(),
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
        };
        remember(memo, key, &fine);
        assert_eq!(remembered(memo, &key, &claim), Some(fine));
        assert!(remembered(memo, &key, &claim).is_some());
        memo.put(key, b"junk".to_vec());
        assert_eq!(remembered(memo, &key, &claim), None);
    }
}
