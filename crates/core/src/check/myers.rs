//! The Myers line diff of `similar::algorithms::myers`, specialised to lines
//! numbered as `u32` (equal lines, equal numbers).
//!
//! The drift check diffs every (pinned, head) document pair, and on a first
//! audit of many edited documents `similar`'s generic version was its largest
//! cost: each step goes through `Index` on an offset vector and compares
//! through ranges re-checked at every element. This is the same algorithm
//! (linear-space divide and conquer on the middle snake, the same diagonal
//! order and tie-breaking), over plain slices, and it reports to the same
//! hooks (`Compact`, `Replace`, `Capture`), so the operations are the ones
//! `similar::capture_diff_slices(Algorithm::Myers, ..)` gives: a test holds
//! them equal on thousands of random pairs.

use similar::algorithms::{Capture, Compact, DiffHook, Replace};
use similar::DiffOp;

/// What `similar::capture_diff_slices(Algorithm::Myers, old, new)` returns.
pub(crate) fn capture(old: &[u32], new: &[u32]) -> Vec<DiffOp> {
    let mut d = Compact::new(Replace::new(Capture::new()), old, new);
    let max_d = max_d(old.len(), new.len());
    let mut vf = V::new(max_d);
    let mut vb = V::new(max_d);
    // The hooks above never fail.
    let _ = conquer(
        &mut d,
        old,
        0,
        old.len(),
        new,
        0,
        new.len(),
        &mut vf,
        &mut vb,
    );
    let _ = d.finish();
    d.into_inner().into_inner().into_ops()
}

/// Furthest-reaching x per diagonal k, at `v[k + offset]`.
struct V {
    offset: isize,
    v: Vec<usize>,
}

impl V {
    fn new(max_d: usize) -> V {
        V {
            offset: max_d as isize,
            v: vec![0; 2 * max_d],
        }
    }

    #[inline(always)]
    fn at(&self, k: isize) -> usize {
        self.v[(k + self.offset) as usize]
    }

    /// Where step `d` starts on diagonal `k`: from the neighbouring diagonal
    /// that reached further (down from `k + 1`, or right from `k - 1`).
    ///
    /// Inside the band, the rule "down when `k + 1` reached further, else
    /// right" picks the larger of the two starts (a tie goes right, which is
    /// one further), so it is their maximum, taken without a branch.
    #[inline(always)]
    fn start(&self, k: isize, d: isize) -> usize {
        if k == -d {
            self.at(k + 1)
        } else if k == d {
            self.at(k - 1) + 1
        } else {
            self.at(k + 1).max(self.at(k - 1) + 1)
        }
    }

    #[inline(always)]
    fn set(&mut self, k: isize, x: usize) {
        let i = (k + self.offset) as usize;
        self.v[i] = x;
    }
}

fn max_d(len1: usize, len2: usize) -> usize {
    (len1 + len2).div_ceil(2) + 1
}

#[inline(always)]
fn prefix(a: &[u32], b: &[u32]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

#[inline(always)]
fn suffix(a: &[u32], b: &[u32]) -> usize {
    a.iter()
        .rev()
        .zip(b.iter().rev())
        .take_while(|(x, y)| x == y)
        .count()
}

/// The start of the middle snake of `old[os..oe]` and `new[ns..ne]` (both
/// non-empty), as `similar`'s `find_middle_snake` finds it.
#[allow(clippy::too_many_arguments)]
fn middle_snake(
    old: &[u32],
    os: usize,
    oe: usize,
    new: &[u32],
    ns: usize,
    ne: usize,
    vf: &mut V,
    vb: &mut V,
) -> Option<(usize, usize)> {
    let (o, n) = (&old[os..oe], &new[ns..ne]);
    let (lo, ln) = (o.len(), n.len());
    let delta = lo as isize - ln as isize;
    let odd = delta & 1 == 1;
    vf.set(1, 0);
    vb.set(1, 0);
    let d_max = max_d(lo, ln);
    for d in 0..d_max as isize {
        let mut k = d;
        while k >= -d {
            let mut x = vf.start(k, d);
            let y = (x as isize - k) as usize;
            let (x0, y0) = (x, y);
            if x < lo && y < ln {
                x += prefix(&o[x..], &n[y..]);
            }
            vf.set(k, x);
            if odd && (k - delta).abs() < d && x + vb.at(-(k - delta)) >= lo {
                return Some((x0 + os, y0 + ns));
            }
            k -= 2;
        }
        let mut k = d;
        while k >= -d {
            let mut x = vb.start(k, d);
            let mut y = (x as isize - k) as usize;
            if x < lo && y < ln {
                let advance = suffix(&o[..lo - x], &n[..ln - y]);
                x += advance;
                y += advance;
            }
            vb.set(k, x);
            if !odd && (k - delta).abs() <= d && x + vf.at(-(k - delta)) >= lo {
                return Some((lo - x + os, ln - y + ns));
            }
            k -= 2;
        }
    }
    None
}

#[allow(clippy::too_many_arguments)]
fn conquer<D: DiffHook>(
    d: &mut D,
    old: &[u32],
    mut os: usize,
    mut oe: usize,
    new: &[u32],
    mut ns: usize,
    mut ne: usize,
    vf: &mut V,
    vb: &mut V,
) -> Result<(), D::Error> {
    let common = prefix(&old[os..oe], &new[ns..ne]);
    if common > 0 {
        d.equal(os, ns, common)?;
    }
    os += common;
    ns += common;
    let tail = suffix(&old[os..oe], &new[ns..ne]);
    let tail_at = (oe - tail, ne - tail);
    oe -= tail;
    ne -= tail;
    if os >= oe && ns >= ne {
    } else if ns >= ne {
        d.delete(os, oe - os, ns)?;
    } else if os >= oe {
        d.insert(os, ns, ne - ns)?;
    } else if let Some((x, y)) = middle_snake(old, os, oe, new, ns, ne, vf, vb) {
        conquer(d, old, os, x, new, ns, y, vf, vb)?;
        conquer(d, old, x, oe, new, y, ne, vf, vb)?;
    } else {
        d.delete(os, oe - os, ns)?;
        d.insert(os, ns, ne - ns)?;
    }
    if tail > 0 {
        d.equal(tail_at.0, tail_at.1, tail)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use similar::{capture_diff_slices, Algorithm};

    #[test]
    fn gives_what_similar_gives() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move |m: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % m
        };
        for case in 0..4000 {
            let alphabet = 2 + next(if case % 3 == 0 { 4 } else { 40 });
            let len = next(if case % 10 == 0 { 400 } else { 40 }) as usize;
            let old: Vec<u32> = (0..len).map(|_| next(alphabet) as u32).collect();
            // The new side: the old one edited (kept, changed, dropped, added).
            let mut new = Vec::new();
            for &l in &old {
                match next(6) {
                    0 => {}
                    1 => new.push(next(alphabet) as u32),
                    2 => {
                        new.push(next(alphabet) as u32);
                        new.push(l);
                    }
                    _ => new.push(l),
                }
            }
            if case % 7 == 0 {
                new.reverse();
            }
            let want = capture_diff_slices(Algorithm::Myers, &old, &new);
            assert_eq!(capture(&old, &new), want, "case {case}: {old:?} -> {new:?}");
        }
        assert!(capture(&[], &[]).is_empty());
        assert_eq!(
            capture(&[1], &[]),
            capture_diff_slices(Algorithm::Myers, &[1], &[])
        );
        assert_eq!(
            capture(&[], &[1]),
            capture_diff_slices(Algorithm::Myers, &[], &[1])
        );
    }
}
