//! A cited git document as the checks read it: one handle that hides whether its
//! bytes are in memory, read on first use, or too large to hold and read as a
//! stream, and whether an answer comes from the provider's memo. The record
//! check asks it for claim outcomes and drift facts and never picks a read path.

use std::collections::{BTreeMap, HashMap};

use crate::check::{self, claims, upstream, SourceText};
use crate::provider::{read_failed, DocRef, Documents, Head, Snapshot, Unchecked};
use crate::record::{Claim, Record};
use crate::result::Verdict;

/// The pinned document of one source, with what was read of it so far.
pub(crate) struct Document<'a> {
    docs: &'a dyn Documents,
    d: &'a DocRef,
    snapshot: Snapshot,
    /// The pinned text, read (once) when a check needs it.
    text: Option<SourceText>,
    /// A document too large to hold: every claim judged in one streamed pass.
    judged: Option<HashMap<usize, claims::Outcome>>,
}

impl<'a> Document<'a> {
    pub(crate) fn new(docs: &'a dyn Documents, d: &'a DocRef, snapshot: Snapshot) -> Self {
        Document {
            docs,
            d,
            snapshot,
            text: None,
            judged: None,
        }
    }

    /// The snapshot, once the checks are done with the document.
    pub(crate) fn into_snapshot(self) -> Snapshot {
        self.snapshot
    }

    /// The git blob id of the pinned document.
    pub(crate) fn git_blob(&self) -> Option<&str> {
        self.snapshot.git_blob.as_deref()
    }

    /// The outcome of claim `i` of `r` (one of `cited`, the claims citing this
    /// document): remembered when the memo holds it, else judged on the document
    /// (then remembered); `None` when the claim names no lines or no value.
    pub(crate) fn outcome(
        &mut self,
        r: &Record,
        cited: &[usize],
        i: usize,
    ) -> Result<Option<claims::Outcome>, Unchecked> {
        let c = &r.claims[i];
        let memo = self.docs.check_memo();
        let key = memo
            .zip(self.git_blob())
            .and_then(|(_, b)| claims::memo_key(b, c));
        if let Some(known) = memo
            .zip(key.as_ref())
            .and_then(|(m, k)| claims::remembered(m, k, c))
        {
            return Ok(Some(known));
        }
        let (Some(lines), Some(exp)) = (c.lines, claims::expected(c)) else {
            return Ok(None);
        };
        let o = if self.snapshot.streamed {
            self.streamed_outcome(r, cited, i)?
        } else {
            let doc = self.text()?;
            claims::judge(doc, lines.first() as usize, lines.last() as usize, &exp)
        };
        if let (Some(m), Some(k)) = (memo, key) {
            claims::remember(m, k, &o);
        }
        Ok(Some(o))
    }

    /// The pinned document's text, read (once) when a check needs it.
    fn text(&mut self) -> Result<&SourceText, Unchecked> {
        if self.text.is_none() {
            self.docs.load(self.d, &mut self.snapshot)?;
            // The bytes become the text without a copy: one copy of a large
            // document. A line index that can't be allocated is this source's
            // problem, not an abort of the run.
            self.text = Some(
                SourceText::try_from_bytes(std::mem::take(&mut self.snapshot.bytes)).map_err(
                    |why| Unchecked::Unresolvable(crate::sources::Skip::Unindexable(why)),
                )?,
            );
        }
        self.text.as_ref().ok_or(Unchecked::NotCached)
    }

    /// The outcome of claim `i` of `r` in a streamed document: all of `cited`
    /// are judged in the first call, in one pass over it (two when a value is not
    /// on its cited lines), and kept.
    fn streamed_outcome(
        &mut self,
        r: &Record,
        cited: &[usize],
        i: usize,
    ) -> Result<claims::Outcome, Unchecked> {
        if self.judged.is_none() {
            let (ids, wanted): (Vec<usize>, Vec<_>) = cited
                .iter()
                .filter_map(|&k| {
                    let c = &r.claims[k];
                    let (Some(lines), Some(exp)) = (c.lines, claims::expected(c)) else {
                        return None;
                    };
                    Some((k, (lines.first() as usize, lines.last() as usize, exp)))
                })
                .unzip();
            let mut open_failed = None;
            let (docs, d, snapshot) = (self.docs, self.d, &self.snapshot);
            let outcomes = claims::judge_stream(
                || {
                    docs.open(d, snapshot).map_err(|why| {
                        open_failed = Some(why);
                        std::io::Error::other("the document could not be opened")
                    })
                },
                &wanted,
            );
            let outcomes = match outcomes {
                Ok(o) => o,
                Err(e) => {
                    return Err(open_failed
                        .take()
                        .unwrap_or_else(|| read_failed(&d.remote, e)))
                }
            };
            self.judged = Some(ids.into_iter().zip(outcomes).collect());
        }
        self.judged
            .as_ref()
            .and_then(|j| j.get(&i).cloned())
            .ok_or(Unchecked::NotCached)
    }

    /// What this document and `head`'s say about the cited lines: remembered by
    /// (pinned blob, head blob, citations) when the provider keeps a memo, else
    /// read from both documents (then remembered).
    pub(crate) fn drift(
        &mut self,
        head: &mut Head,
        mine: &[(&Claim, &Verdict)],
    ) -> Result<upstream::Facts, Unchecked> {
        let memo = self.docs.check_memo();
        let head_blob = match &head.document {
            Some(doc) => doc.git_blob.clone().map(Some),
            None => Some(None),
        };
        let key = match (memo, self.git_blob(), &head_blob) {
            (Some(_), Some(p), Some(h)) => Some(upstream::facts_key(p, h.as_deref(), mine)),
            _ => None,
        };
        if let (Some(m), Some(k)) = (memo, key.as_ref()) {
            match m.peek(k, |raw| upstream::decode_facts(raw, mine)) {
                Some(Some(facts)) => return Ok(facts),
                // Unsound for these citations: never trusted, recomputed.
                Some(None) => m.forget(k),
                None => {}
            }
        }
        let facts = if self.snapshot.streamed || head.document.as_ref().is_some_and(|d| d.streamed)
        {
            self.drift_by_lookup(head, mine)?
        } else {
            self.drift_in_memory(head, mine)?
        };
        if let (Some(m), Some(k)) = (memo, key) {
            m.put(k, upstream::encode_facts(&facts));
        }
        Ok(facts)
    }

    /// [`upstream::facts`] over both documents held in memory.
    fn drift_in_memory(
        &mut self,
        head: &mut Head,
        mine: &[(&Claim, &Verdict)],
    ) -> Result<upstream::Facts, Unchecked> {
        let (docs, d) = (self.docs, self.d);
        let head_text = match head.document.as_mut() {
            Some(doc) => {
                docs.load(d, doc)?;
                Some(SourceText::new(&doc.bytes))
            }
            None => None,
        };
        let pinned_blob = self.snapshot.git_blob.clone();
        let pinned = self.text()?;
        let drift = docs.drift_memo().zip(pinned_blob.as_deref());
        let head_blob = head
            .document
            .as_ref()
            .and_then(|doc| doc.git_blob.as_deref());
        Ok(upstream::facts(
            pinned,
            head_text.as_ref(),
            head_blob,
            mine,
            drift,
        ))
    }

    /// [`upstream::facts_by_lookup`] for a source whose pinned or head document
    /// is too large to hold: the wanted pinned lines are read (streamed when the
    /// pinned document is), then looked up by text while the head's lines go by.
    fn drift_by_lookup(
        &mut self,
        head: &mut Head,
        mine: &[(&Claim, &Verdict)],
    ) -> Result<upstream::Facts, Unchecked> {
        let (docs, d) = (self.docs, self.d);
        let failed = |e| read_failed(&d.remote, e);
        let wanted = upstream::wanted_lines(mine);
        let mut old = BTreeMap::new();
        let old_len = if self.snapshot.streamed {
            let reader = docs.open(d, &self.snapshot)?;
            check::for_each_line(reader, |i, bytes| {
                let n = i as u32 + 1;
                if wanted.contains(&n) {
                    old.insert(n, String::from_utf8_lossy(bytes).into_owned());
                }
            })
            .map_err(failed)?
        } else {
            let pinned = self.text()?;
            for &n in &wanted {
                if let Some(line) = pinned.line(n) {
                    old.insert(n, line.to_string());
                }
            }
            pinned.len()
        };
        let mut lookup = upstream::Lookup::new(&old);
        match head.document.as_mut() {
            None => {}
            Some(doc) if doc.streamed => {
                let reader = docs.open(d, doc)?;
                check::for_each_line(reader, |i, bytes| lookup.see(i, bytes)).map_err(failed)?;
            }
            Some(doc) => {
                docs.load(d, doc)?;
                for (i, line) in SourceText::new(&doc.bytes).lines().iter().enumerate() {
                    lookup.see(i, line.as_bytes());
                }
            }
        }
        Ok(upstream::facts_by_lookup(&old, old_len, &lookup, mine))
    }
}
