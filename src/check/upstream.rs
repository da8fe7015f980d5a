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
                for k in 0..old_len.min(new_len) {
                    out[old_index + k] = Fate::Edited((new_index + k) as u32 + 1);
                }
            }
            DiffOp::Delete { .. } | DiffOp::Insert { .. } => {}
        }
    }
    out
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
}
