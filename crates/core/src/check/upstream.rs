//! `upstream-changed`, `value-superseded`: has the source moved on since the pin?
//!
//! A pin never changes, but a scheduled re-check wants to know when the author
//! edits the document afterwards, and above all when a cited figure was corrected.
//! Lines are followed from the pinned document to the head with a line diff, so a
//! figure pushed down by an inserted paragraph is "moved", not "gone".

use serde::Serialize;
use serde_json::{json, Value};
use similar::DiffOp;

use crate::finding::{evidence, Code, Finding, Location, Shape};
use crate::matcher;
use crate::provider::{DocRef, Head};
use crate::record::{Claim, Record, Source};
use crate::result::Upstream;

use super::claims::{expected, Verdict};
use super::location::show_target;
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

impl Fate {
    /// A compact code for the drift memo: 0 removed, 2h kept at h, 2h+1 edited into h.
    pub(crate) fn code(self) -> u32 {
        match self {
            Fate::Removed => 0,
            Fate::Kept(h) => h.saturating_mul(2),
            Fate::Edited(h) => h.saturating_mul(2).saturating_add(1),
        }
    }

    /// The fate of [`Fate::code`]; codes no fate has ([`UNKNOWN`]) read as `None`.
    pub(crate) fn from_code(code: u32) -> Option<Fate> {
        match code {
            0 => Some(Fate::Removed),
            UNKNOWN => None,
            c if c % 2 == 0 => Some(Fate::Kept(c / 2)),
            c => Some(Fate::Edited(c / 2)),
        }
    }
}

/// The drift memo's code of a line whose fate was not worked out
/// ([`follow_some`]).
pub(crate) const UNKNOWN: u32 = 1;

/// Follows each line of `old` (by 0-based index) into `new`.
pub fn follow(old: &[&str], new: &[&str]) -> Vec<Fate> {
    follow_some(old, new, |_| true)
        .into_iter()
        .map(|f| f.unwrap_or(Fate::Removed))
        .collect()
}

/// [`follow`] for the lines of `old` that `wanted` (by 0-based index) names,
/// and others as they come: a replaced hunk none of whose lines is wanted is not
/// paired, and its lines are `None`. Every fate given is the one [`follow`]
/// gives (a skipped hunk takes from the document's pairing budget what pairing
/// it would have), so fates of different calls may be merged.
pub fn follow_some(
    old: &[&str],
    new: &[&str],
    wanted: impl Fn(usize) -> bool,
) -> Vec<Option<Fate>> {
    follow_steps(old, new, wanted)
        .into_iter()
        .map(|s| s.map(|(f, _)| f))
        .collect()
}

/// A line's fate and whether it moved across hunks (paired by [`moves`], out
/// of the diff's order): what the drift memo keeps, so that [`complete`] can
/// tell the diff's kept lines from moved ones.
type Step = (Fate, bool);

/// The drift memo's flag of a moved line, beside [`Fate::code`].
const MOVED: u32 = 1 << 31;

fn step_code((fate, moved): Step) -> u32 {
    fate.code() | if moved { MOVED } else { 0 }
}

fn step_from_code(code: u32) -> Option<Step> {
    Fate::from_code(code & !MOVED).map(|f| (f, code & MOVED != 0))
}

/// [`follow_some`], each fate with whether it moved.
fn follow_steps(old: &[&str], new: &[&str], wanted: impl Fn(usize) -> bool) -> Vec<Option<Step>> {
    let mut out: Vec<Option<Step>> = vec![Some((Fate::Removed, false)); old.len()];
    let mut budget = PAIRS_PER_DOCUMENT;
    let mut ops = Vec::new();
    diff(old, new, 0, 0, 0, &mut ops);
    // Lines the diff could not keep in order that moved elsewhere whole (a
    // row moved up or down), or with only their numbers changed, are paired
    // across hunks first, whichever lines are wanted.
    let (mut paired_old, mut paired_new) = (vec![false; old.len()], vec![false; new.len()]);
    for op in &ops {
        if let Op::Equal {
            old: o,
            new: n,
            len,
        } = *op
        {
            paired_old[o..o + len].fill(true);
            paired_new[n..n + len].fill(true);
        }
    }
    for (i, j, fate) in moves(old, new, &paired_old, &paired_new) {
        out[i] = Some((fate, true));
        paired_old[i] = true;
        paired_new[j] = true;
    }
    for op in ops {
        match op {
            Op::Equal {
                old: o,
                new: n,
                len,
            } => {
                for k in 0..len {
                    out[o + k] = Some((Fate::Kept((n + k) as u32 + 1), false));
                }
            }
            Op::Replace {
                old: o,
                old_len,
                new: n,
                new_len,
            } => {
                let olds: Vec<usize> = (o..o + old_len).filter(|&i| !paired_old[i]).collect();
                let news: Vec<usize> = (n..n + new_len).filter(|&j| !paired_new[j]).collect();
                if !olds.iter().any(|&i| wanted(i)) {
                    charge(olds.len(), news.len(), &mut budget);
                    for &i in &olds {
                        out[i] = None;
                    }
                    continue;
                }
                let o_text: Vec<&str> = olds.iter().map(|&i| old[i]).collect();
                let n_text: Vec<&str> = news.iter().map(|&j| new[j]).collect();
                for (a, b) in align(&o_text, &n_text, &mut budget) {
                    out[olds[a]] = Some((Fate::Edited(news[b] as u32 + 1), false));
                }
            }
        }
    }
    out
}

/// Lines of `old` the diff left unpaired that moved: first those whose text
/// is on exactly one unpaired line of each side (kept, at its new place), then
/// those whose skeleton (numbers blanked) is (edited there). Only lines with
/// words of their own take part: a bare number or separator could be anyone's.
fn moves(
    old: &[&str],
    new: &[&str],
    paired_old: &[bool],
    paired_new: &[bool],
) -> Vec<(usize, usize, Fate)> {
    use std::collections::HashMap;
    let distinctive = |line: &str| line.chars().filter(|c| c.is_alphabetic()).count() >= 2;
    let mut out = Vec::new();
    let (mut taken_old, mut taken_new) = (paired_old.to_vec(), paired_new.to_vec());
    for by_skeleton in [false, true] {
        let key = |line: &str| -> String {
            if by_skeleton {
                skeleton(line.trim())
            } else {
                line.trim().to_string()
            }
        };
        // key -> (count, index) on each side, over the lines still unpaired.
        let mut olds: HashMap<String, (usize, usize)> = HashMap::new();
        for (i, line) in old.iter().enumerate() {
            if !taken_old[i] && distinctive(line) {
                let e = olds.entry(key(line)).or_insert((0, i));
                e.0 += 1;
            }
        }
        if olds.is_empty() {
            break;
        }
        let mut news: HashMap<String, (usize, usize)> = HashMap::new();
        for (j, line) in new.iter().enumerate() {
            if !taken_new[j] && distinctive(line) {
                let k = key(line);
                if olds.contains_key(&k) {
                    let e = news.entry(k).or_insert((0, j));
                    e.0 += 1;
                }
            }
        }
        let mut found: Vec<(usize, usize)> = olds
            .iter()
            .filter_map(|(k, &(count, i))| match news.get(k) {
                Some(&(1, j)) if count == 1 => Some((i, j)),
                _ => None,
            })
            .collect();
        found.sort_unstable();
        for (i, j) in found {
            taken_old[i] = true;
            taken_new[j] = true;
            let fate = if old[i] == new[j] {
                Fate::Kept(j as u32 + 1)
            } else {
                Fate::Edited(j as u32 + 1)
            };
            out.push((i, j, fate));
        }
    }
    out
}

/// A step of the line diff; lines only deleted or only inserted need no step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Equal {
        old: usize,
        new: usize,
        len: usize,
    },
    Replace {
        old: usize,
        old_len: usize,
        new: usize,
        new_len: usize,
    },
}

/// The longest stretch (old + new lines) diffed with Myers directly. Myers costs
/// O((N+M)·D), so this bounds one run at a few million steps: the work, and so the
/// report, never depends on the machine's speed (there is no clock).
const MYERS_LINES: usize = 2_000;

/// How deep unique-line anchoring may recurse before a gap is taken as replaced.
const MAX_DEPTH: usize = 32;

/// A deterministic, work-bounded line diff of `old` against `new` (offsets `o`,
/// `n` into the whole documents): the common prefix and suffix are kept; a small
/// middle is diffed with Myers; a large one is cut at lines unique to both sides
/// that appear in the same order (patience anchors), and each gap is diffed the
/// same way. A large gap without anchors is one replaced block.
fn diff(old: &[&str], new: &[&str], o: usize, n: usize, depth: usize, out: &mut Vec<Op>) {
    let prefix = old.iter().zip(new).take_while(|(a, b)| a == b).count();
    if prefix > 0 {
        out.push(Op::Equal {
            old: o,
            new: n,
            len: prefix,
        });
    }
    let (old_rest, new_rest) = (&old[prefix..], &new[prefix..]);
    let suffix = old_rest
        .iter()
        .rev()
        .zip(new_rest.iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    let mid_old = &old_rest[..old_rest.len() - suffix];
    let mid_new = &new_rest[..new_rest.len() - suffix];
    let (mo, mn) = (o + prefix, n + prefix);
    middle(mid_old, mid_new, mo, mn, depth, out);
    if suffix > 0 {
        out.push(Op::Equal {
            old: mo + mid_old.len(),
            new: mn + mid_new.len(),
            len: suffix,
        });
    }
}

fn middle<'t>(
    old: &[&'t str],
    new: &[&'t str],
    o: usize,
    n: usize,
    depth: usize,
    out: &mut Vec<Op>,
) {
    if old.is_empty() || new.is_empty() {
        return;
    }
    if old.len() + new.len() <= MYERS_LINES {
        // Lines as numbers (equal lines, equal numbers): the same diff, without
        // comparing whole lines at every step.
        let mut ids: std::collections::HashMap<&'t str, u32> =
            std::collections::HashMap::with_capacity(old.len() + new.len());
        let mut id_of = |line: &'t str| -> u32 {
            let next = ids.len() as u32;
            *ids.entry(line).or_insert(next)
        };
        let old_ids: Vec<u32> = old.iter().map(|l| id_of(l)).collect();
        let new_ids: Vec<u32> = new.iter().map(|l| id_of(l)).collect();
        for op in super::myers::capture(&old_ids, &new_ids) {
            match op {
                DiffOp::Equal {
                    old_index,
                    new_index,
                    len,
                } => out.push(Op::Equal {
                    old: o + old_index,
                    new: n + new_index,
                    len,
                }),
                DiffOp::Replace {
                    old_index,
                    old_len,
                    new_index,
                    new_len,
                } => out.push(Op::Replace {
                    old: o + old_index,
                    old_len,
                    new: n + new_index,
                    new_len,
                }),
                DiffOp::Delete { .. } | DiffOp::Insert { .. } => {}
            }
        }
        return;
    }
    let anchors = if depth < MAX_DEPTH {
        unique_anchors(old, new)
    } else {
        Vec::new()
    };
    if anchors.is_empty() {
        out.push(Op::Replace {
            old: o,
            old_len: old.len(),
            new: n,
            new_len: new.len(),
        });
        return;
    }
    let (mut i, mut j) = (0, 0);
    for (a, b) in anchors {
        diff(&old[i..a], &new[j..b], o + i, n + j, depth + 1, out);
        out.push(Op::Equal {
            old: o + a,
            new: n + b,
            len: 1,
        });
        (i, j) = (a + 1, b + 1);
    }
    diff(&old[i..], &new[j..], o + i, n + j, depth + 1, out);
}

/// Lines that occur once in `old` and once in `new`, as (old, new) index pairs,
/// the longest run of them in the same order on both sides (patience diff).
fn unique_anchors(old: &[&str], new: &[&str]) -> Vec<(usize, usize)> {
    use std::collections::HashMap;
    let mut seen: HashMap<&str, (u32, usize, u32, usize)> = HashMap::new();
    for (i, l) in old.iter().enumerate() {
        let e = seen.entry(l).or_insert((0, i, 0, 0));
        e.0 += 1;
    }
    for (j, l) in new.iter().enumerate() {
        if let Some(e) = seen.get_mut(l) {
            e.2 += 1;
            e.3 = j;
        }
    }
    let mut pairs: Vec<(usize, usize)> = seen
        .values()
        .filter(|e| e.0 == 1 && e.2 == 1)
        .map(|e| (e.1, e.3))
        .collect();
    pairs.sort_unstable();
    longest_increasing(&pairs)
}

/// The longest subsequence of `pairs` (sorted by the first index) whose second
/// indices increase; O(k log k).
fn longest_increasing(pairs: &[(usize, usize)]) -> Vec<(usize, usize)> {
    // tails[k]: index in `pairs` of the smallest tail of an increasing run of k+1.
    let mut tails: Vec<usize> = Vec::new();
    let mut prev: Vec<Option<usize>> = vec![None; pairs.len()];
    for (k, &(_, b)) in pairs.iter().enumerate() {
        let at = tails.partition_point(|&t| pairs[t].1 < b);
        if at > 0 {
            prev[k] = Some(tails[at - 1]);
        }
        if at == tails.len() {
            tails.push(k);
        } else {
            tails[at] = k;
        }
    }
    let mut out = Vec::with_capacity(tails.len());
    let mut cur = tails.last().copied();
    while let Some(k) = cur {
        out.push(pairs[k]);
        cur = prev[k];
    }
    out.reverse();
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

/// How many characters of a line's skeleton are compared when pairing lines:
/// enough to tell one table row or sentence from another, and a bound on the work
/// per pair. Unbounded, a 150-line document of 1,500-character lines rewritten
/// whole took five minutes of CPU (review of `align`).
const SKELETON_CHARS: usize = 200;

/// The most old x new line pairs of one hunk that are compared. A larger hunk is a
/// rewrite rather than an edit of a few figures, and keeps the positional pairing.
const PAIRS_PER_HUNK: usize = 2_500;

/// The most line pairs compared for one document, over all its hunks: many
/// rewritten hunks must not add up to minutes either.
const PAIRS_PER_DOCUMENT: usize = 4 * PAIRS_PER_HUNK;

/// Pairs the old and new lines of one replaced hunk, in order, by likeness of
/// their skeletons, so that rows inserted right above an edited row are not taken
/// for its edit. An old line like no new line is left out (removed).
///
/// Each pair compared is taken from `budget`; a hunk larger than
/// [`PAIRS_PER_HUNK`] or than what is left of the budget is paired by position.
fn align(old: &[&str], new: &[&str], budget: &mut usize) -> Vec<(usize, usize)> {
    let (rows, cols) = (old.len(), new.len());
    if !charge(rows, cols, budget) {
        return (0..rows.min(cols)).map(|k| (k, k)).collect();
    }
    let like = likeness(old, new);
    let at = |i: usize, j: usize| like[i * cols + j];
    // best[i][j]: the best total likeness pairing old[i..] with new[j..], in order.
    let mut best = vec![vec![0f32; cols + 1]; rows + 1];
    for i in (0..rows).rev() {
        for j in (0..cols).rev() {
            let pair = at(i, j);
            let take = if pair > 0.0 {
                pair + best[i + 1][j + 1]
            } else {
                0.0
            };
            best[i][j] = take.max(best[i + 1][j]).max(best[i][j + 1]);
        }
    }
    let mut out = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < rows && j < cols {
        let pair = at(i, j);
        if pair > 0.0 && (best[i][j] - (pair + best[i + 1][j + 1])).abs() < 1e-6 {
            out.push((i, j));
            i += 1;
            j += 1;
        } else if (best[i][j] - best[i + 1][j]).abs() < 1e-6 {
            i += 1;
        } else {
            j += 1;
        }
    }
    out
}

/// Pairs the hunks of `fates` (fates [`follow_steps`] gave, some unknown) that
/// hold a `wanted` line, without diffing again: every run of lines not kept is
/// one hunk of the diff (deleted, or replaced), and the kept lines around it
/// say which head lines it faces; lines that moved across hunks stay as they
/// are, and the head lines they moved to are no hunk's. Each hunk takes from
/// the pairing budget what [`follow_steps`] took, in the same order, so the
/// fates are its fates. `false` (nothing changed) when the fates do not read
/// as a diff of these documents.
fn complete(
    old: &[&str],
    new: &[&str],
    fates: &mut [Option<Step>],
    wanted: impl Fn(usize) -> bool,
) -> bool {
    let kept = |f: Option<Step>| match f {
        Some((Fate::Kept(h), false)) => Some(h as usize),
        _ => None,
    };
    let moved = |f: Option<Step>| matches!(f, Some((_, true)));
    let mut claimed = vec![false; new.len()];
    for f in fates.iter().copied() {
        if let Some((Fate::Kept(h) | Fate::Edited(h), true)) = f {
            match claimed.get_mut(h as usize - 1) {
                Some(c) => *c = true,
                None => return false,
            }
        }
    }
    // The hunks, checked first: kept lines go up one head line at a time
    // within a run of them, and forward across a hunk.
    let mut hunks = Vec::new();
    let (mut i, mut last) = (0, 0usize);
    while i < fates.len() {
        if let Some(h) = kept(fates[i]) {
            if h <= last || h > new.len() {
                return false;
            }
            last = h;
            i += 1;
            continue;
        }
        let start = i;
        while i < fates.len() && kept(fates[i]).is_none() {
            i += 1;
        }
        let end_new = match fates.get(i).copied().and_then(kept) {
            Some(h) => h - 1,
            None => new.len(),
        };
        // A hunk was paired whole or not at all (its moved lines aside).
        let open: Vec<usize> = (start..i).filter(|&k| !moved(fates[k])).collect();
        let mixed =
            open.iter().any(|&k| fates[k].is_some()) && open.iter().any(|&k| fates[k].is_none());
        if end_new < last || mixed {
            return false;
        }
        let news: Vec<usize> = (last..end_new).filter(|&j| !claimed[j]).collect();
        hunks.push((open, news));
    }
    let mut budget = PAIRS_PER_DOCUMENT;
    for (olds, news) in hunks {
        let paired = olds.first().is_some_and(|&k| fates[k].is_some());
        if paired || !olds.iter().any(|&k| wanted(k)) {
            charge(olds.len(), news.len(), &mut budget);
            continue;
        }
        for &k in &olds {
            fates[k] = Some((Fate::Removed, false));
        }
        let o_text: Vec<&str> = olds.iter().map(|&k| old[k]).collect();
        let n_text: Vec<&str> = news.iter().map(|&j| new[j]).collect();
        for (a, b) in align(&o_text, &n_text, &mut budget) {
            fates[olds[a]] = Some((Fate::Edited(news[b] as u32 + 1), false));
        }
    }
    true
}

/// Takes the pairs of a hunk of `rows` old and `cols` new lines from `budget`
/// when [`align`] compares them: whether it does.
fn charge(rows: usize, cols: usize, budget: &mut usize) -> bool {
    let pairs = rows.saturating_mul(cols);
    if pairs > PAIRS_PER_HUNK || pairs > *budget {
        return false;
    }
    *budget -= pairs;
    true
}

/// The likeness of every old x new pair (row-major), each computed once: the
/// character diff ratio of their skeletons' first [`SKELETON_CHARS`] characters,
/// or 0 when below `ALIKE`.
fn likeness(old: &[&str], new: &[&str]) -> Vec<f32> {
    const ALIKE: f32 = 0.6;
    let shape =
        |line: &&str| -> Vec<char> { skeleton(line).trim().chars().take(SKELETON_CHARS).collect() };
    let o: Vec<Vec<char>> = old.iter().map(shape).collect();
    let n: Vec<Vec<char>> = new.iter().map(shape).collect();
    // Each line's characters counted once, for the bound of every pair.
    let (oc, nc): (Vec<Counts>, Vec<Counts>) = (
        o.iter().map(|l| Counts::of(l)).collect(),
        n.iter().map(|l| Counts::of(l)).collect(),
    );
    let mut like = Vec::with_capacity(o.len() * n.len());
    for (a, ac) in o.iter().zip(&oc) {
        // Made for the first pair that needs the exact count.
        let mut positions: Option<Positions> = None;
        for (b, bc) in n.iter().zip(&nc) {
            let total = a.len() + b.len();
            // The ratio is 2 * matched / total, and at most the shorter one matches:
            // lines of very different lengths need no diff.
            let r = if a == b {
                // Rows of one table often share a skeleton (and two empty
                // skeletons are alike).
                1.0
            } else if (2 * a.len().min(b.len())) as f32 / (total as f32) < ALIKE
                || (2 * ac.shared(bc)) as f32 / (total as f32) < ALIKE
            {
                // Not even the characters they have in common, in any order,
                // would make them alike.
                0.0
            } else {
                // What `similar::get_diff_ratio` of an exact (Myers) character diff
                // gives, from the length of the longest common subsequence alone.
                let common = positions.get_or_insert_with(|| Positions::of(a)).common(b);
                2.0 * common as f32 / total as f32
            };
            like.push(if r >= ALIKE { r } else { 0.0 });
        }
    }
    like
}

/// How often each character occurs in a skeleton (every non-ASCII character
/// counted as one), for [`shared`] between many pairs: a count per ASCII
/// character and one for the rest, saturating (skeletons are at most
/// [`SKELETON_CHARS`] long, so no count saturates).
struct Counts([u8; 129]);

impl Counts {
    fn of(line: &[char]) -> Counts {
        let mut c = [0u8; 129];
        for ch in line {
            let slot = &mut c[(*ch as usize).min(128)];
            *slot = slot.saturating_add(1);
        }
        Counts(c)
    }

    /// [`shared`] of the two lines counted.
    fn shared(&self, other: &Counts) -> usize {
        self.0
            .iter()
            .zip(&other.0)
            .map(|(a, b)| usize::from((*a).min(*b)))
            .sum()
    }
}

/// An upper bound of [`matched`]: the characters `a` and `b` have in common,
/// counted regardless of order (every non-ASCII character taken as any other).
/// `: 5 figures read from it cannot be followed there`, for a document gone at
/// the head.
fn figures_said(unfollowed: Option<usize>) -> String {
    match unfollowed {
        Some(0) | None => String::new(),
        Some(1) => "; the 1 figure read from it cannot be followed there".to_string(),
        Some(n) => format!("; the {n} figures read from it cannot be followed there"),
    }
}

#[cfg(test)]
fn shared(a: &[char], b: &[char]) -> usize {
    let mut counts = [0i32; 129];
    let slot = |c: &char| (*c as usize).min(128);
    for c in a {
        counts[slot(c)] += 1;
    }
    let mut common = 0;
    for c in b {
        let n = &mut counts[slot(c)];
        if *n > 0 {
            *n -= 1;
            common += 1;
        }
    }
    common
}

/// How many characters an exact (Myers) diff of `a` and `b` matches: what
/// `similar::get_diff_ratio` counts. A shortest edit script keeps a longest
/// common subsequence, so this is its length, computed bit-parallel (Hyyrö,
/// "Bit-parallel LCS-length computation revisited", 2004): one pass over `b`,
/// a few word operations per character, where the diff took quadratic steps
/// (it was most of a first audit's drift work). [`likeness`] does the same,
/// keeping each old line's [`Positions`] for all its pairs.
#[cfg(test)]
fn matched(a: &[char], b: &[char]) -> usize {
    if a == b {
        // Rows of one table often share a skeleton.
        return a.len();
    }
    Positions::of(a).common(b)
}

/// Per character of a string, the bit set of the positions it holds, for
/// [`matched`].
struct Positions {
    len: usize,
    words: usize,
    /// ASCII characters' sets, `words` words each.
    ascii: Vec<u64>,
    /// The other characters' sets.
    other: Vec<(char, Vec<u64>)>,
}

impl Positions {
    fn of(a: &[char]) -> Positions {
        let words = a.len().div_ceil(64);
        let mut p = Positions {
            len: a.len(),
            words,
            ascii: vec![0; 128 * words],
            other: Vec::new(),
        };
        for (i, &c) in a.iter().enumerate() {
            let bit = 1u64 << (i % 64);
            if c.is_ascii() {
                p.ascii[c as usize * words + i / 64] |= bit;
            } else {
                match p.other.iter_mut().find(|(o, _)| *o == c) {
                    Some((_, set)) => set[i / 64] |= bit,
                    None => {
                        let mut set = vec![0; words];
                        set[i / 64] |= bit;
                        p.other.push((c, set));
                    }
                }
            }
        }
        p
    }

    fn set(&self, c: char) -> Option<&[u64]> {
        if c.is_ascii() {
            let at = c as usize * self.words;
            Some(&self.ascii[at..at + self.words])
        } else {
            self.other
                .iter()
                .find(|(o, _)| *o == c)
                .map(|(_, set)| set.as_slice())
        }
    }

    /// The length of a longest common subsequence of the string and `b`.
    fn common(&self, b: &[char]) -> usize {
        if self.len == 0 {
            return 0;
        }
        // A zero bit in `v` is a position of the string matched so far.
        let mut v = vec![u64::MAX; self.words];
        for &c in b {
            let Some(m) = self.set(c) else {
                continue;
            };
            let mut carry = 0u64;
            for (k, vk) in v.iter_mut().enumerate() {
                let u = *vk & m[k];
                let (sum, c1) = vk.overflowing_add(u);
                let (sum, c2) = sum.overflowing_add(carry);
                carry = u64::from(c1 || c2);
                *vk = sum | (*vk & !m[k]);
            }
        }
        let ones: usize = v
            .iter()
            .enumerate()
            .map(|(k, w)| {
                let bits = (self.len - 64 * k).min(64);
                let mask = if bits == 64 {
                    u64::MAX
                } else {
                    (1u64 << bits) - 1
                };
                (w & mask).count_ones() as usize
            })
            .sum();
        self.len - ones
    }
}

/// Cited lines against the head upstream.
pub(crate) struct UpstreamCheck;

impl super::Check for UpstreamCheck {
    fn evidence(&self) -> &'static [Shape] {
        const SHAPES: &[Shape] = &[
            Shape::of::<UpstreamChanged<'static>>(),
            Shape::of::<ValueSuperseded<'static>>(),
        ];
        SHAPES
    }
}

evidence! {
    /// `upstream-changed` evidence (the cited lines moved in, not copied): the
    /// head compared with; the default branch's name; whether the document is
    /// gone at the head; where each cited line stands there.
    #[derive(Serialize)]
    pub(crate) struct UpstreamChanged<'a> for(UpstreamChanged) identity() {
        head: &'a str,
        branch: Option<&'a str>,
        removed: bool,
        cited_lines: Vec<Value>,
        /// The pinned commit is on no branch the default branch contains (added
        /// in v1).
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        not_on_default_branch: bool,
        /// Figures whose cited line could not be followed to the head because the
        /// document is gone there (added in v1): one finding says it for all.
        #[serde(skip_serializing_if = "Option::is_none")]
        figures_unfollowed: Option<usize>,
    }
}

evidence! {
    /// `value-superseded` evidence.
    #[derive(Serialize)]
    pub(crate) struct ValueSuperseded<'a> for(ValueSuperseded) identity() {
        head: &'a str,
        pinned_line: u32,
        pinned_text: String,
        head_line: Option<u32>,
        head_text: Option<String>,
        /// The numbers the head line carries instead.
        head_numbers: Option<Vec<String>>,
        /// The number the head line gives where the pinned line gave the value.
        #[serde(skip_serializing_if = "Option::is_none")]
        head_value: Option<String>,
    }
}

/// The number `head` (a later version of the line `pinned`) gives where `pinned`
/// gave the claim's value, as written: the one in the same place among the
/// line's numbers when both lines hold as many, else the one after the same
/// words (`| 8K prefill | 79.6 |` → `| 8K prefill | 81.2 |`), else the only
/// number `head` adds. `None` when the value is not on `pinned` or nothing fits.
pub fn value_at_head(pinned: &str, head: &str, exp: &matcher::Expected) -> Option<String> {
    let found = matcher::find(pinned, exp)?;
    let old = matcher::tokens(pinned);
    let new = matcher::tokens(head);
    let k = old.iter().position(|t| t.span.start >= found.span.start)?;
    let text = |line: &str, t: &matcher::NumberToken| line[t.span.clone()].to_string();
    if old.len() == new.len() {
        return Some(text(head, &new[k]));
    }
    // The words before a number, digits left out, so an edited number in them
    // does not hide the place.
    let words = |line: &str, t: &matcher::NumberToken| -> String {
        let before: String = line[..t.span.start]
            .chars()
            .filter(|c| !c.is_ascii_digit())
            .collect();
        let before = before.trim_end_matches(['.', ',', '-', ' ', '~']);
        let tail: Vec<char> = before.chars().rev().take(24).collect();
        tail.into_iter().rev().collect()
    };
    let place = words(pinned, &old[k]);
    let same_place: Vec<_> = new
        .iter()
        .filter(|t| {
            let w = words(head, t);
            w == place
                || (!w.is_empty()
                    && !place.is_empty()
                    && (w.ends_with(&place) || place.ends_with(&w)))
        })
        .collect();
    if let [only] = same_place[..] {
        return Some(text(head, only));
    }
    let added: Vec<_> = new
        .iter()
        .filter(|n| !old.iter().any(|o| o.text == n.text))
        .collect();
    match added[..] {
        [only] => Some(text(head, only)),
        _ => None,
    }
}

/// What the pinned and head documents say about a source's citations: a pure
/// function of the two documents and of the cited lines and found values, so it
/// is remembered by (pinned blob, head blob, citations) in `CACHE/checks.store`
/// ([`facts_key`]); findings are built from it by [`report`].
#[derive(Debug, Clone, PartialEq)]
pub struct Facts {
    /// Each cited line of the pinned document (1-based, ascending), its excerpt
    /// and where it is at the head.
    pub cited: Vec<(u32, String, Fate)>,
    /// Per claim, in order: when the line its value was found on no longer
    /// carries it at the head, that line's excerpt and, when it was edited, the
    /// head line it became and that line's excerpt.
    pub(crate) superseded: Vec<Option<Superseded>>,
}

/// A found value's pinned line excerpt and, when that line was edited, the head
/// line it became with its excerpt.
pub(crate) type Superseded = (String, Option<(u32, String)>);

/// Reads [`Facts`] from the pinned document and the one at the head (`None` when
/// the path is gone there), with the line fates remembered by (pinned blob, head
/// blob) in `memo` when given.
pub fn facts(
    pinned: &SourceText,
    head: Option<&SourceText>,
    head_blob: Option<&str>,
    claims: &[(&Claim, &Verdict)],
    memo: Option<(&dyn crate::memo::DriftMemo, &str)>,
) -> Facts {
    let old = pinned.lines();
    let new = head.map(|h| h.lines()).unwrap_or_default();
    let mut cited: Vec<u32> = claims
        .iter()
        .filter_map(|(c, _)| c.lines)
        .flat_map(|l| l.first()..=l.last())
        .filter(|&n| (n as usize) <= old.len())
        .collect();
    cited.sort_unstable();
    cited.dedup();
    let wanted = wanted(&cited, claims, old.len());
    let fate = fates(&old, &new, &wanted, head_blob, memo);
    let at = |line: u32| {
        fate.get(line as usize - 1)
            .copied()
            .flatten()
            .unwrap_or(Fate::Removed)
    };
    let cited = cited
        .into_iter()
        .map(|n| (n, excerpt(old[n as usize - 1]), at(n)))
        .collect();
    let superseded = claims
        .iter()
        .map(|(c, v)| {
            let (Some(line), Some(exp)) = (v.found_line, expected(c)) else {
                return None;
            };
            let head_line = match at(line) {
                Fate::Kept(_) => return None,
                Fate::Edited(h) => {
                    let text = new.get(h as usize - 1).copied().unwrap_or_default();
                    let pinned = old.get(line as usize - 1).copied().unwrap_or_default();
                    if matcher::still_carries(pinned, text, &exp) {
                        return None;
                    }
                    Some((h, excerpt(text)))
                }
                Fate::Removed => None,
            };
            let pinned_text = old.get(line as usize - 1).map(|l| excerpt(l));
            Some((pinned_text.unwrap_or_default(), head_line))
        })
        .collect();
    Facts { cited, superseded }
}

/// Which of a pinned document's `len` lines [`facts`] reads the fates of: the
/// `cited` ones (1-based, within the document) and those a value was found on.
fn wanted(cited: &[u32], claims: &[(&Claim, &Verdict)], len: usize) -> Vec<bool> {
    let mut wanted = vec![false; len];
    let found = claims.iter().filter_map(|(_, v)| v.found_line);
    for n in cited.iter().copied().chain(found) {
        if let Some(w) = wanted.get_mut((n as usize).wrapping_sub(1)) {
            *w = true;
        }
    }
    wanted
}

/// The fates of (at least) the `wanted` lines of `old` into `new`, from the
/// drift memo when it knows them all (completed from it when it knows some),
/// else diffed; only the hunks holding wanted lines are paired.
fn fates(
    old: &[&str],
    new: &[&str],
    wanted: &[bool],
    head_blob: Option<&str>,
    memo: Option<(&dyn crate::memo::DriftMemo, &str)>,
) -> Vec<Option<Fate>> {
    let memo = memo.zip(head_blob);
    let remembered: Option<Vec<Option<Step>>> = memo.and_then(|((memo, pinned), head)| {
        memo.get(pinned, head, old.len(), new.len())
            .map(|codes| codes.into_iter().map(step_from_code).collect())
    });
    let known = |steps: &[Option<Step>]| steps.iter().zip(wanted).all(|(f, w)| f.is_some() || !*w);
    let plain = |steps: Vec<Option<Step>>| steps.into_iter().map(|s| s.map(|(f, _)| f)).collect();
    let remembered = match remembered {
        Some(steps) if known(&steps) => return plain(steps),
        other => other,
    };
    // What the memo knows is the diff: its kept lines bound the hunks left
    // unpaired, which are paired now without diffing again.
    let steps = remembered
        .filter(|f| f.len() == old.len())
        .and_then(|mut f| complete(old, new, &mut f, |i| wanted[i]).then_some(f))
        .unwrap_or_else(|| follow_steps(old, new, |i| wanted[i]));
    if let Some(((memo, pinned), head)) = memo {
        let codes = steps.iter().map(|f| f.map_or(UNKNOWN, step_code));
        memo.put(pinned, head, new.len(), codes.collect());
    }
    plain(steps)
}

/// The pinned lines [`facts_by_lookup`] reads: every cited line and every line
/// a value was found on (some may be past the document's end).
pub fn wanted_lines(claims: &[(&Claim, &Verdict)]) -> std::collections::BTreeSet<u32> {
    let mut out = std::collections::BTreeSet::new();
    for (c, v) in claims {
        if let Some(l) = c.lines {
            // A citation of a huge range keeps its first lines only: memory stays
            // bounded by the longest line, whatever a record cites.
            out.extend((l.first()..=l.last()).take(MAX_WANTED_PER_CLAIM));
        }
        out.extend(v.found_line);
    }
    out
}

/// The most lines of one citation [`wanted_lines`] keeps.
const MAX_WANTED_PER_CLAIM: usize = 64;

/// Where the pinned lines a drift check wants are at the head, by exact text,
/// found while the head's lines go by one at a time (a document too large to
/// diff, issues 12, 13).
pub struct Lookup {
    by_text: std::collections::HashMap<String, Vec<u32>>,
    /// Pinned line (1-based) to the nearest head line (1-based) with its text.
    kept: std::collections::HashMap<u32, u32>,
}

impl Lookup {
    /// For the pinned lines `old` (1-based number to text).
    pub fn new(old: &std::collections::BTreeMap<u32, String>) -> Lookup {
        let mut by_text: std::collections::HashMap<String, Vec<u32>> = Default::default();
        for (n, text) in old {
            by_text.entry(text.clone()).or_default().push(*n);
        }
        Lookup {
            by_text,
            kept: Default::default(),
        }
    }

    /// Head line `index` (0-based) is `bytes`.
    pub fn see(&mut self, index: usize, bytes: &[u8]) {
        let text = String::from_utf8_lossy(bytes);
        let Some(pinned) = self.by_text.get(text.as_ref()) else {
            return;
        };
        let h = index as u32 + 1;
        for &n in pinned {
            let closer = match self.kept.get(&n) {
                Some(&best) => h.abs_diff(n) < best.abs_diff(n),
                None => true,
            };
            if closer {
                self.kept.insert(n, h);
            }
        }
    }
}

/// [`facts`] for documents too large to diff (either one read as a stream,
/// issues 12, 13): a wanted pinned line (`old`, of a document of `old_len`
/// lines) is kept at the head line with the very same text nearest to it, else
/// it is removed. Bounded work and memory, but an edit in place reads as a
/// removal (no `head_line` for a superseded value): README, "Large documents".
pub fn facts_by_lookup(
    old: &std::collections::BTreeMap<u32, String>,
    old_len: usize,
    lookup: &Lookup,
    claims: &[(&Claim, &Verdict)],
) -> Facts {
    let at = |line: u32| match lookup.kept.get(&line) {
        Some(&h) => Fate::Kept(h),
        None => Fate::Removed,
    };
    let text = |n: u32| old.get(&n).map(|l| excerpt(l)).unwrap_or_default();
    let mut cited: Vec<u32> = claims
        .iter()
        .filter_map(|(c, _)| c.lines)
        .flat_map(|l| (l.first()..=l.last()).take(MAX_WANTED_PER_CLAIM))
        .filter(|&n| (n as usize) <= old_len)
        .collect();
    cited.sort_unstable();
    cited.dedup();
    let cited = cited.into_iter().map(|n| (n, text(n), at(n))).collect();
    let superseded = claims
        .iter()
        .map(|(c, v)| {
            let (Some(line), Some(_)) = (v.found_line, expected(c)) else {
                return None;
            };
            match at(line) {
                Fate::Kept(_) => None,
                _ => Some((text(line), None)),
            }
        })
        .collect();
    Facts { cited, superseded }
}

/// The key of a source's [`Facts`] between blob `pinned` and blob `head`
/// (`None`: the path is gone at the head).
pub fn facts_key(pinned: &str, head: Option<&str>, claims: &[(&Claim, &Verdict)]) -> [u8; 32] {
    let mut cited = Vec::new();
    for (c, v) in claims {
        let lines = c.lines.map_or((0, 0), |l| (l.first(), l.last()));
        cited.extend_from_slice(&lines.0.to_le_bytes());
        cited.extend_from_slice(&lines.1.to_le_bytes());
        cited.extend_from_slice(&v.found_line.unwrap_or(0).to_le_bytes());
        let exp = expected(c);
        let value = format!(
            "{:?}|{:?}|{:?}|{:?}",
            exp.as_ref().map(|e| e.value),
            exp.as_ref().and_then(|e| e.unit),
            exp.as_ref().and_then(|e| e.correct),
            exp.as_ref().and_then(|e| e.total)
        );
        cited.extend_from_slice(&(value.len() as u32).to_le_bytes());
        cited.extend_from_slice(value.as_bytes());
    }
    crate::memo::key(
        "drift",
        &[pinned.as_bytes(), head.unwrap_or("-").as_bytes(), &cited],
    )
}

/// The bytes of facts in the memo.
pub fn encode_facts(f: &Facts) -> Vec<u8> {
    let mut e = crate::memo::Enc::default();
    e.u32(f.cited.len() as u32);
    for (n, text, fate) in &f.cited {
        e.u32(*n).str(text).u32(fate.code());
    }
    e.u32(f.superseded.len() as u32);
    for s in &f.superseded {
        match s {
            None => {
                e.u32(0);
            }
            Some((pinned, None)) => {
                e.u32(1).str(pinned);
            }
            Some((pinned, Some((h, text)))) => {
                e.u32(2).str(pinned).u32(*h).str(text);
            }
        }
    }
    e.0
}

/// The facts `bytes` encode, when they are whole and fit `claims` (as many
/// entries, a superseded value only where a value was found, cited lines in
/// order): remembered facts that do not are never trusted.
pub fn decode_facts(bytes: &[u8], claims: &[(&Claim, &Verdict)]) -> Option<Facts> {
    let mut d = crate::memo::Dec(bytes);
    let n = d.u32()? as usize;
    let mut cited = Vec::with_capacity(n.min(1 << 16));
    for _ in 0..n {
        let line = d.u32()?;
        let text = d.string()?;
        let fate = Fate::from_code(d.u32()?)?;
        cited.push((line, text, fate));
    }
    if cited.windows(2).any(|w| w[0].0 >= w[1].0) || cited.first().is_some_and(|c| c.0 == 0) {
        return None;
    }
    if d.u32()? as usize != claims.len() {
        return None;
    }
    let mut superseded = Vec::with_capacity(claims.len());
    for (_, v) in claims {
        let s = match d.u32()? {
            0 => None,
            1 => Some((d.string()?, None)),
            2 => Some((d.string()?, Some((d.u32()?, d.string()?)))),
            _ => return None,
        };
        if s.is_some() && v.found_line.is_none() {
            return None;
        }
        superseded.push(s);
    }
    d.done().then_some(Facts { cited, superseded })
}

/// The upstream state and findings of a source whose documents say `facts`
/// (`None` only when the head holds the pinned document unchanged).
pub fn report(
    record: &Record,
    s: &Source,
    r: &DocRef,
    head: &Head,
    claims: &[(&Claim, &Verdict)],
    facts: Option<&Facts>,
    out: &mut Vec<Finding>,
) -> Upstream {
    let head_id = head.commit.clone();
    let Some(facts) = facts.filter(|_| !head.unchanged) else {
        return Upstream {
            head: head_id,
            changed: false,
        };
    };
    let t = r;
    let repository = s.located().repository;
    let location = |line: Option<u32>| Location {
        repository: repository.clone(),
        revision: Some(head_id.clone()),
        path: Some(t.path.clone()),
        line,
    };
    let removed = head.document.is_none();
    let cited_lines: Vec<Value> = facts
        .cited
        .iter()
        .map(|(n, text, fate)| {
            let (head_line, edited_to) = match fate {
                Fate::Kept(h) => (Some(*h), None),
                Fate::Edited(h) => (None, Some(*h)),
                Fate::Removed => (None, None),
            };
            json!({
                "line": n,
                "text": text,
                "exists_at_head": head_line.is_some(),
                "head_line": head_line,
                "edited_into_head_line": edited_to,
            })
        })
        .collect();
    let branch = match &head.branch {
        Some(b) => format!("the default branch `{b}`"),
        None => "the default branch".to_string(),
    };
    // Named by source and repository: one record often cites `README.md` of
    // several repositories, and their notes must not read alike.
    let of = format!(
        "`{}` of source `{}` (`{}`)",
        t.path,
        s.id,
        s.repository
            .as_deref()
            .map_or_else(|| crate::url::redact(&t.remote), crate::url::redact)
    );
    // Figures read from a document gone at the head: said once, here.
    let unfollowed = removed.then(|| {
        claims
            .iter()
            .filter(|(c, v)| v.found_line.is_some() && expected(c).is_some())
            .count()
    });
    let message = if removed && !head.pinned_on_default {
        format!(
            "{of} is not on {branch} (head `{}`): the pinned commit is on another branch{}",
            crate::record::short_rev(&head_id),
            figures_said(unfollowed)
        )
    } else if removed {
        format!(
            "{of} no longer exists at the head `{}` of {branch}{}",
            crate::record::short_rev(&head_id),
            figures_said(unfollowed)
        )
    } else {
        format!(
            "{of} has changed at the head `{}` of {branch}",
            crate::record::short_rev(&head_id)
        )
    };
    out.push(
        Finding::new(Code::UpstreamChanged, &record.id, message)
            .with_hint(
                facts
                    .cited
                    .first()
                    .and_then(|(n, _, _)| show_target(&record.file, s, None, *n))
                    .map(|t| format!("read the change with `pinaudit show {t} --history`")),
            )
            .source(&s.id)
            .at(location(None))
            .evidence(UpstreamChanged {
                head: head_id.as_str(),
                branch: head.branch.as_deref(),
                removed,
                cited_lines,
                not_on_default_branch: !head.pinned_on_default,
                figures_unfollowed: unfollowed,
            }),
    );

    // A document gone at the head was said once above; per figure, only a followed
    // line whose value changed is superseded.
    let per_figure = if removed {
        &[][..]
    } else {
        &facts.superseded[..]
    };
    for ((c, v), gone) in claims.iter().zip(per_figure) {
        let (Some(line), Some(exp), Some((pinned_text, edited))) =
            (v.found_line, expected(c), gone)
        else {
            continue;
        };
        let head_line = edited.as_ref().map(|(h, _)| *h);
        let head_line_text = edited.as_ref().map(|(_, t)| t.clone());
        let head_value = head_line_text
            .as_deref()
            .and_then(|h| value_at_head(pinned_text, h, &exp));
        let message = match (head_line, &head_value) {
            (Some(h), Some(now)) => format!(
                "at the head, L{line} of `{}` (figure `{}`, {}) became L{h} and no longer carries the value: now {now} on L{h}",
                t.path, c.label, exp.value
            ),
            (Some(h), None) => format!(
                "at the head, L{line} of `{}` (figure `{}`, {}) became L{h} and no longer carries the value",
                t.path, c.label, exp.value
            ),
            (None, _) => format!(
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
                .with_hint(show_target(&record.file, s, Some(c), line).map(|t| {
                    format!(
                        "check whether the author corrected the figure: `pinaudit show {t} --history`"
                    )
                }))
                .claim(&c.label)
                .source(&s.id)
                .at(location(head_line))
                .evidence(ValueSuperseded {
                    head: &head_id,
                    pinned_line: line,
                    pinned_text: pinned_text.clone(),
                    head_line,
                    head_text: head_line_text,
                    head_numbers: now,
                    head_value,
                }),
        );
    }
    Upstream {
        head: head_id,
        changed: true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn value_at_head_names_the_number_that_took_the_value_s_place() {
        let exp = |value| matcher::Expected {
            value,
            unit: None,
            correct: None,
            total: None,
            label: None,
            metric: None,
            statistic: None,
        };
        // As many numbers on both lines: the one in the same place.
        assert_eq!(
            value_at_head(
                "| 8K prefill | 79.6 |",
                "| 8K prefill | 81.2 |",
                &exp("79.6")
            ),
            Some("81.2".into())
        );
        // A number added before it: the one after the same words.
        assert_eq!(
            value_at_head(
                "decode: 6.84 tok/s",
                "run 3, decode: 7.35 tok/s",
                &exp("6.84")
            ),
            Some("7.35".into())
        );
        // The value was not on the pinned line: nothing to say.
        assert_eq!(
            value_at_head("decode: 6.84", "decode: 7.35", &exp("1.5")),
            None
        );
        // Nothing in its place and nothing added.
        assert_eq!(value_at_head("a 1 b 2", "c 2", &exp("1")), None);
    }

    #[test]
    fn matched_gives_the_ratio_of_the_captured_character_diff() {
        // Deterministic pseudo-random lines over small alphabets (many matches),
        // of lengths around the word boundaries.
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for round in 0..3_000 {
            let alphabet: Vec<char> = "ab#|. 9é".chars().take(2 + (round % 7)).collect();
            let mut line = |max: u64| -> Vec<char> {
                let len = (next() % max) as usize;
                (0..len)
                    .map(|_| alphabet[(next() % alphabet.len() as u64) as usize])
                    .collect()
            };
            let a = line(if round % 3 == 0 { 200 } else { 70 });
            let b = line(if round % 5 == 0 { 200 } else { 70 });
            let ops = similar::capture_diff_slices(similar::Algorithm::Myers, &a, &b);
            let want = similar::get_diff_ratio(&ops, a.len(), b.len());
            let total = a.len() + b.len();
            let got = if total == 0 {
                1.0
            } else {
                2.0 * matched(&a, &b) as f32 / total as f32
            };
            assert_eq!(got, want, "{a:?} / {b:?}");
            assert!(shared(&a, &b) >= matched(&a, &b), "{a:?} / {b:?}");
            assert_eq!(Counts::of(&a).shared(&Counts::of(&b)), shared(&a, &b));
        }
    }

    /// A document of `n` table rows and sentences, and a later version with rows
    /// edited, inserted and removed, from a fixed seed.
    fn versions(seed: u64, n: usize) -> (Vec<String>, Vec<String>) {
        let mut x = seed;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let old: Vec<String> = (0..n)
            .map(|i| match next() % 3 {
                0 => format!(
                    "| model-{} | {}.{} | tokens/s |",
                    i % 7,
                    next() % 90,
                    i % 10
                ),
                1 => format!("Run {i} measured {} ms on node {}.", next() % 500, i % 4),
                _ => String::new(),
            })
            .collect();
        let mut new = Vec::new();
        for line in &old {
            match next() % 10 {
                0 => {}
                1 => new.push(line.replace('1', "7").replace('4', "2")),
                2 => {
                    new.push(format!("| inserted | {}.0 | tokens/s |", next() % 50));
                    new.push(line.clone());
                }
                3 => new.push(format!("A rewritten sentence {}.", next() % 1000)),
                _ => new.push(line.clone()),
            }
        }
        (old, new)
    }

    #[test]
    fn following_some_lines_gives_their_fates_of_following_all() {
        for (seed, n) in [(7, 40), (11, 300), (13, 1200), (17, 3000)] {
            let (old, new) = versions(seed, n);
            let (old, new) = (strs(&old), strs(&new));
            let all = follow(&old, &new);
            for every in [1, 3, 17, 101] {
                let some = follow_some(&old, &new, |i| i % every == 0);
                assert_eq!(some.len(), all.len());
                for (i, (s, a)) in some.iter().zip(&all).enumerate() {
                    if i % every == 0 {
                        assert_eq!(*s, Some(*a), "seed {seed} line {i} every {every}");
                    } else if let Some(s) = s {
                        assert_eq!(s, a, "seed {seed} line {i} every {every}");
                    }
                }
            }
            // Nothing wanted: no hunk is paired, and what is known still agrees.
            let none = follow_some(&old, &new, |_| false);
            assert!(none
                .iter()
                .zip(&all)
                .all(|(s, a)| s.is_none_or(|s| s == *a)));
        }
    }

    /// The head's line count and the fates of a drift memo's entry.
    type Entry = (usize, Vec<u32>);

    /// A drift memo of one entry, counting what is put.
    #[derive(Default)]
    struct OneEntry(std::sync::Mutex<(usize, Option<Entry>)>);

    impl crate::memo::DriftMemo for OneEntry {
        fn get(&self, _: &str, _: &str, old: usize, new: usize) -> Option<Vec<u32>> {
            let e = self.0.lock().unwrap();
            e.1.clone()
                .filter(|(n, f)| *n == new && f.len() == old)
                .map(|(_, f)| f)
        }
        fn put(&self, _: &str, _: &str, new: usize, fates: Vec<u32>) {
            let mut e = self.0.lock().unwrap();
            e.0 += 1;
            e.1 = Some((new, fates));
        }
    }

    #[test]
    fn remembered_fates_serve_the_lines_they_know_and_grow_with_new_ones() {
        let (old, new) = versions(11, 300);
        let (old, new) = (strs(&old), strs(&new));
        let all = follow(&old, &new);
        let memo = OneEntry::default();
        let m = Some((&memo as &dyn crate::memo::DriftMemo, "pinned"));
        let puts = || memo.0.lock().unwrap().0;
        let want = |f: fn(usize) -> bool| (0..old.len()).map(f).collect::<Vec<bool>>();
        let a = want(|i| i % 50 == 0);
        let agree = |got: &[Option<Fate>], wanted: &[bool]| {
            for (i, (g, w)) in got.iter().zip(wanted).enumerate() {
                assert!(g.is_some() || !w, "line {i} wanted but unknown");
                assert!(g.is_none_or(|g| g == all[i]), "line {i}");
            }
        };
        let first = fates(&old, &new, &a, Some("head"), m);
        agree(&first, &a);
        assert_eq!(puts(), 1);
        // Lines of hunks the first call left unpaired.
        let b: Vec<bool> = first.iter().map(|f| f.is_none()).collect();
        assert!(b.contains(&true));
        agree(&fates(&old, &new, &a, Some("head"), m), &a);
        assert_eq!(puts(), 1, "known lines are read from the memo");
        let got = fates(&old, &new, &b, Some("head"), m);
        agree(&got, &b);
        agree(&got, &a);
        assert_eq!(puts(), 2);
        let both: Vec<bool> = a.iter().zip(&b).map(|(x, y)| *x || *y).collect();
        agree(&fates(&old, &new, &both, Some("head"), m), &both);
        assert_eq!(puts(), 2, "the entry knows both sets");
        // An entry of every line (as earlier versions wrote them) serves any.
        crate::memo::DriftMemo::put(
            &memo,
            "pinned",
            "head",
            new.len(),
            all.iter().map(|f| f.code()).collect(),
        );
        let every = want(|_| true);
        agree(&fates(&old, &new, &every, Some("head"), m), &every);
        assert_eq!(puts(), 3);
    }

    /// Ten sections of rewritten rows (41 lines each, old; 42, new), each with
    /// a row inserted on top: paired by likeness, row i becomes head row i + 1;
    /// past the document's budget (six sections), by position, row i.
    fn sections() -> (Vec<String>, Vec<String>) {
        let (mut old, mut new) = (Vec::new(), Vec::new());
        for b in 0..10 {
            old.push(format!("## Section {b}"));
            new.push(format!("## Section {b}"));
            new.push(format!("| inserted-{b} | 0.5 | ms |"));
            for i in 0..40 {
                old.push(format!("| row-{b}-{i} | {}.{} | ms |", i + 10, b));
                new.push(format!("| row-{b}-{i} | {}.{} | ms |", i + 20, b));
            }
        }
        (old, new)
    }

    /// Rows moved up and down are kept where they went, a row moved with its
    /// figure edited is edited there, and a bare number is no one's.
    #[test]
    fn rows_moved_up_or_down_are_followed_where_they_went() {
        let old = [
            "| phase | rate |",
            "| prefill | 812 |",
            "| decode | 2.9 |",
            "| ttft | 140 |",
            "| memory | 41 |",
            "7",
        ];
        let new = [
            "| phase | rate |",
            "| memory | 41 |",
            "| decode | 3.1 |",
            "| ttft | 140 |",
            "| prefill | 812 |",
            "8",
            "7",
        ];
        assert_eq!(
            follow(&old, &new),
            vec![
                Fate::Kept(1),
                Fate::Kept(5),
                Fate::Edited(3),
                Fate::Kept(4),
                Fate::Kept(2),
                Fate::Kept(7),
            ]
        );
        let moved_and_edited = [
            "| phase | rate |",
            "| ttft | 140 |",
            "| memory | 41 |",
            "| prefill | 900 |",
        ];
        let f = follow(&old[..5], &moved_and_edited);
        assert_eq!((f[1], f[2]), (Fate::Edited(4), Fate::Removed));
    }

    #[test]
    fn fates_completed_from_some_are_the_fates_of_all() {
        for seed in 1..60u64 {
            let n = [40, 300, 1200, 3000][seed as usize % 4];
            let (old, new) = versions(seed * 7919, n);
            let (old, new) = (strs(&old), strs(&new));
            let all = follow(&old, &new);
            let (a, b) = (1 + seed as usize % 13, 2 + seed as usize % 29);
            let mut fates = follow_steps(&old, &new, |i| i % a == 0);
            assert!(complete(&old, &new, &mut fates, |i| i % b == 1));
            for (i, f) in fates.iter().enumerate() {
                assert!(
                    f.is_some() || (i % a != 0 && i % b != 1),
                    "seed {seed} line {i} unknown"
                );
                assert!(f.is_none_or(|(f, _)| f == all[i]), "seed {seed} line {i}");
            }
        }
        // The budget: only section 8 wanted first, then section 9.
        let (old, new) = sections();
        let (old, new) = (strs(&old), strs(&new));
        let all = follow(&old, &new);
        let mut fates = follow_steps(&old, &new, |i| (8 * 41..9 * 41).contains(&i));
        assert!(complete(&old, &new, &mut fates, |i| !(41..9 * 41).contains(&i)));
        for (i, f) in fates.iter().enumerate() {
            assert!(f.is_none_or(|(f, _)| f == all[i]), "line {i}");
        }
        assert!(fates[9 * 41 + 3].is_some() && fates[3].is_some());
        // Fates that do not read as a diff of these documents are not completed.
        let mut wrong = vec![
            Some((Fate::Kept(2), false)),
            None,
            Some((Fate::Kept(1), false)),
        ];
        assert!(!complete(&["a", "b", "c"], &["c", "a"], &mut wrong, |_| {
            true
        }));
        assert_eq!(wrong[1], None);
    }

    #[test]
    fn hunks_left_unpaired_still_spend_the_document_budget() {
        let (old, new) = sections();
        let (old, new) = (strs(&old), strs(&new));
        let all = follow(&old, &new);
        let row = |b: usize, i: usize| b * 41 + 1 + i;
        let head_row = |b: usize, i: usize| (b * 42 + 2 + i) as u32;
        assert_eq!(all[row(0, 5)], Fate::Edited(head_row(0, 5) + 1));
        assert_eq!(all[row(8, 5)], Fate::Edited(head_row(8, 5)));
        // Wanting only section 8 must not let it be paired by likeness.
        let last = follow_some(&old, &new, |i| (row(8, 0)..row(9, 0)).contains(&i));
        assert_eq!(last[row(8, 5)], Some(all[row(8, 5)]));
        assert_eq!(last[row(0, 5)], None);
    }

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

    /// `count` distinct lines of about 2,000 characters built from `words`.
    fn long_lines(words: &str, count: usize) -> Vec<String> {
        (0..count)
            .map(|i| format!("| {i} | {} |", words.repeat(2_000 / words.len())))
            .collect()
    }

    fn strs(lines: &[String]) -> Vec<&str> {
        lines.iter().map(String::as_str).collect()
    }

    /// Review: a 150-line document of 1,500-character lines rewritten whole took
    /// five minutes, `align` comparing every old x new pair in full, twice. A
    /// 300 x 300 hunk is paired by position without comparing a single pair.
    #[test]
    fn a_large_rewritten_hunk_of_long_lines_is_paired_without_comparing() {
        let old = long_lines("decode rate on three nodes ", 300);
        let new = long_lines("prefill throughput, one slot; ", 300);
        let (old, new) = (strs(&old), strs(&new));
        let mut budget = PAIRS_PER_DOCUMENT;
        let pairs = align(&old, &new, &mut budget);
        assert_eq!(budget, PAIRS_PER_DOCUMENT, "no pair was compared");
        assert_eq!(pairs.len(), 300);
        assert!(pairs.iter().all(|&(i, j)| i == j));
        let f = follow(&old, &new);
        assert_eq!(f[0], Fate::Edited(1));
        assert_eq!(f[299], Fate::Edited(300));
    }

    /// The largest hunk compared pair by pair, of long lines: each pair is compared
    /// once (the budget drops by the pair count), on a bounded prefix.
    #[test]
    fn a_hunk_at_the_pair_limit_compares_each_pair_once() {
        let old = long_lines("decode rate on three nodes ", 50);
        let new = long_lines("decode rate on four nodes ", 50);
        let (old, new) = (strs(&old), strs(&new));
        let mut budget = PAIRS_PER_DOCUMENT;
        let pairs = align(&old, &new, &mut budget);
        assert_eq!(budget, PAIRS_PER_DOCUMENT - PAIRS_PER_HUNK);
        // Same shape once numbers are blanked: every row is the edit of its own.
        assert_eq!(pairs, (0..50).map(|k| (k, k)).collect::<Vec<_>>());
    }

    /// Many rewritten hunks in one document share one budget; once it is spent,
    /// the rest are paired by position.
    #[test]
    fn hunks_past_the_document_budget_are_paired_by_position() {
        let old = ["| decode | 2.9 |", "Measured with llama-bench on one node."];
        let new = ["See the appendix for the method.", "| decode | 3.1 |"];
        let mut budget = 4;
        assert_eq!(align(&old, &new, &mut budget), [(0, 1)]);
        assert_eq!(budget, 0);
        assert_eq!(align(&old, &new, &mut budget), [(0, 0), (1, 1)]);
        let mut budget = 3;
        assert_eq!(align(&old, &new, &mut budget), [(0, 0), (1, 1)]);
        assert_eq!(budget, 3);
    }

    #[test]
    fn a_rewritten_line_unlike_any_new_one_is_removed() {
        let old = ["a", "the decode rate was 2.9 tok/s on three nodes", "z"];
        let new = ["a", "See the appendix.", "z"];
        assert_eq!(follow(&old, &new)[1], Fate::Removed);
    }
}
