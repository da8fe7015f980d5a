//! `upstream-changed`, `value-superseded`: has the source moved on since the pin?
//!
//! A pin never changes, but a scheduled re-check wants to know when the author
//! edits the document afterwards, and above all when a cited figure was corrected.
//! Lines are followed from the pinned document to the head with a line diff, so a
//! figure pushed down by an inserted paragraph is "moved", not "gone".

use serde_json::{json, Value};
use similar::{capture_diff_slices, Algorithm, DiffOp};

use crate::fetch::CachedRepo;
use crate::finding::{Code, Finding, Location};
use crate::matcher;
use crate::record::{Claim, Record, Source};
use crate::report::Upstream;
use crate::sources::Target;

use super::claims::{expected, Verdict};
use super::{excerpt, SourceText};

/// Where a line of one version of a document is in a later version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fate {
    /// Same text, at this 1-based head line.
    Kept(u32),
    /// Edited in place: the head line that replaced it.
    Edited(u32),
    Removed,
}

/// Follows each line of `old` (by 0-based index) into `new`.
pub fn follow(old: &[&str], new: &[&str]) -> Vec<Fate> {
    let mut out = vec![Fate::Removed; old.len()];
    for op in capture_diff_slices(Algorithm::Myers, old, new) {
        match op {
            DiffOp::Equal {
                old_index,
                new_index,
                len,
            } => {
                for k in 0..len {
                    out[old_index + k] = Fate::Kept((new_index + k) as u32 + 1);
                }
            }
            DiffOp::Replace {
                old_index,
                old_len,
                new_index,
                new_len,
            } => {
                let olds = &old[old_index..old_index + old_len];
                let news = &new[new_index..new_index + new_len];
                for (i, j) in align(olds, news) {
                    out[old_index + i] = Fate::Edited((new_index + j) as u32 + 1);
                }
            }
            DiffOp::Delete { .. } | DiffOp::Insert { .. } => {}
        }
    }
    out
}

/// A line with its numbers blanked out: an edited figure keeps its line's shape.
fn skeleton(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut last = 0;
    for t in crate::matcher::tokens(line) {
        out.push_str(&line[last..t.span.start]);
        out.push('#');
        last = t.span.end;
    }
    out.push_str(&line[last..]);
    out
}

/// Pairs the old and new lines of one replaced hunk, in order, by likeness of
/// their skeletons, so that rows inserted right above an edited row are not taken
/// for its edit. An old line like no new line is left out (removed).
fn align(old: &[&str], new: &[&str]) -> Vec<(usize, usize)> {
    const ALIKE: f32 = 0.6;
    // A hunk too large to compare pairwise keeps the positional pairing.
    if old.len().saturating_mul(new.len()) > 40_000 {
        return (0..old.len().min(new.len())).map(|k| (k, k)).collect();
    }
    let (o, n): (Vec<String>, Vec<String>) = (
        old.iter().map(|l| skeleton(l)).collect(),
        new.iter().map(|l| skeleton(l)).collect(),
    );
    let like = |i: usize, j: usize| -> f32 {
        let r = similar::TextDiff::from_chars(o[i].trim(), n[j].trim()).ratio();
        if r >= ALIKE {
            r
        } else {
            0.0
        }
    };
    // best[i][j]: the best total likeness pairing old[i..] with new[j..], in order.
    let mut best = vec![vec![0f32; n.len() + 1]; o.len() + 1];
    for i in (0..o.len()).rev() {
        for j in (0..n.len()).rev() {
            let pair = like(i, j);
            let take = if pair > 0.0 {
                pair + best[i + 1][j + 1]
            } else {
                0.0
            };
            best[i][j] = take.max(best[i + 1][j]).max(best[i][j + 1]);
        }
    }
    let mut pairs = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < o.len() && j < n.len() {
        let pair = like(i, j);
        if pair > 0.0 && (best[i][j] - (pair + best[i + 1][j + 1])).abs() < 1e-6 {
            pairs.push((i, j));
            i += 1;
            j += 1;
        } else if (best[i][j] - best[i + 1][j]).abs() < 1e-6 {
            i += 1;
        } else {
            j += 1;
        }
    }
    pairs
}

/// Compares the pinned document with the head of the default branch.
#[allow(clippy::too_many_arguments)]
pub fn check(
    record: &Record,
    s: &Source,
    t: &Target,
    repo: &CachedRepo,
    pinned: &SourceText,
    claims: &[(&Claim, &Verdict)],
    out: &mut Vec<Finding>,
) -> Option<Upstream> {
    let head = repo.head()?;
    let head_id = head.to_string();
    if head == t.oid {
        return Some(Upstream {
            head: Some(head_id),
            changed: Some(false),
        });
    }
    let pinned_blob = repo.blob_id_at(t.oid, &t.path).ok().flatten();
    let head_blob = repo.blob_id_at(head, &t.path).ok()?;
    if head_blob.is_some() && head_blob == pinned_blob {
        return Some(Upstream {
            head: Some(head_id),
            changed: Some(false),
        });
    }
    let location = |line: Option<u32>| Location {
        repository: s.repository.clone(),
        revision: Some(head_id.clone()),
        path: Some(t.path.clone()),
        line,
    };
    let head_text = head_blob
        .and_then(|b| repo.blob(b))
        .map(|b| SourceText::new(&b));
    let old = pinned.lines();
    let new = head_text.as_ref().map(|h| h.lines()).unwrap_or_default();
    let fate = follow(&old, &new);
    let at = |line: u32| {
        fate.get(line as usize - 1)
            .copied()
            .unwrap_or(Fate::Removed)
    };

    let mut cited: Vec<u32> = claims
        .iter()
        .filter_map(|(c, _)| c.lines)
        .flat_map(|l| l.first()..=l.last())
        .filter(|&n| (n as usize) <= old.len())
        .collect();
    cited.sort_unstable();
    cited.dedup();
    let cited_lines: Vec<Value> = cited
        .iter()
        .map(|&n| {
            let (head_line, edited_to) = match at(n) {
                Fate::Kept(h) => (Some(h), None),
                Fate::Edited(h) => (None, Some(h)),
                Fate::Removed => (None, None),
            };
            json!({
                "line": n,
                "text": excerpt(old[n as usize - 1]),
                "exists_at_head": head_line.is_some(),
                "head_line": head_line,
                "edited_into_head_line": edited_to,
            })
        })
        .collect();
    let message = if head_text.is_none() {
        format!(
            "`{}` no longer exists at the head `{}` of the default branch",
            t.path,
            &head_id[..7]
        )
    } else {
        format!(
            "`{}` has changed at the head `{}` of the default branch",
            t.path,
            &head_id[..7]
        )
    };
    out.push(
        Finding::new(Code::UpstreamChanged, &record.id, message)
            .source(&s.id)
            .at(location(None))
            .with("head", head_id.as_str())
            .with("removed", head_text.is_none())
            .with("cited_lines", cited_lines),
    );

    for (c, v) in claims {
        let (Some(line), Some(exp)) = (v.found_line, expected(c)) else {
            continue;
        };
        let (head_line, head_line_text) = match at(line) {
            Fate::Kept(_) => continue,
            Fate::Edited(h) => {
                let text = new[h as usize - 1];
                if matcher::find(text, &exp).is_some() {
                    continue;
                }
                (Some(h), Some(excerpt(text)))
            }
            Fate::Removed => (None, None),
        };
        let message = match head_line {
            Some(h) => format!(
                "at the head, L{line} of `{}` (figure `{}`, {}) became L{h} and no longer carries the value",
                t.path, c.label, exp.value
            ),
            None => format!(
                "at the head, L{line} of `{}` carrying figure `{}` ({}) is gone",
                t.path, c.label, exp.value
            ),
        };
        let now = head_line_text.as_deref().map(|t| {
            matcher::tokens(t)
                .into_iter()
                .map(|k| k.text)
                .collect::<Vec<_>>()
        });
        out.push(
            Finding::new(Code::ValueSuperseded, &record.id, message)
                .claim(&c.label)
                .source(&s.id)
                .at(location(head_line))
                .with("head", head_id.as_str())
                .with("pinned_line", line)
                .with("pinned_text", excerpt(old[line as usize - 1]))
                .with("head_line", head_line)
                .with("head_text", head_line_text)
                .with("head_numbers", now),
        );
    }
    Some(Upstream {
        head: Some(head_id),
        changed: Some(true),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn follows_moved_edited_and_removed_lines() {
        let old = ["a", "b 2.9", "c", "d"];
        let new = ["x", "y", "a", "b 3.1", "c"];
        let f = follow(&old, &new);
        assert_eq!(f[0], Fate::Kept(3));
        assert_eq!(f[1], Fate::Edited(4));
        assert_eq!(f[2], Fate::Kept(5));
        assert_eq!(f[3], Fate::Removed);
    }

    #[test]
    fn rows_inserted_right_above_an_edited_row_are_not_its_edit() {
        let old = ["# Results", "| steady decode | ~2.9 tok/s |", "end"];
        let new = [
            "# Results",
            "| cold decode | 1.1 tok/s |",
            "| warm decode | 2.4 tok/s |",
            "| steady decode | ~3.1 tok/s |",
            "end",
        ];
        let f = follow(&old, &new);
        assert_eq!(f[1], Fate::Edited(4));
        assert_eq!(f[2], Fate::Kept(5));
    }

    #[test]
    fn a_rewritten_line_unlike_any_new_one_is_removed() {
        let old = ["a", "the decode rate was 2.9 tok/s on three nodes", "z"];
        let new = ["a", "See the appendix.", "z"];
        assert_eq!(follow(&old, &new)[1], Fate::Removed);
    }
}
