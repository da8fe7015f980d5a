//! What checks derive from documents, remembered between runs.
//!
//! A commit's content never changes, so an answer computed from a blob (a claim's
//! verdict, the fates of its lines at the head) holds for good. The checks decide
//! what to remember and how it is encoded ([`Enc`], [`Dec`]); where it is kept is
//! the fetcher's business (`CACHE/checks.store`, `CACHE/drift.store`), behind these
//! two traits. A remembered answer is never trusted blindly: each check validates
//! what it reads back and forgets what does not fit.

use sha2::{Digest, Sha256};

/// Answers by key, as bytes ([`key`] makes the keys).
pub trait CheckMemo: Sync {
    /// Calls `f` with the remembered answer for `key`, read in place, when there is one.
    fn peek_with(&self, key: &[u8; 32], f: &mut dyn FnMut(&[u8]));

    /// Remembers an answer; whether it is kept (a memo may turn away an
    /// answer too large, or one past its bound).
    fn put(&self, key: [u8; 32], value: Vec<u8>) -> bool;

    /// Forgets an answer found unsound (the run recomputes and remembers it).
    fn forget(&self, key: &[u8; 32]);

    /// Whether an answer can be looked up now without waiting (a memo read
    /// on a thread of its own may still be loading).
    fn ready(&self) -> bool {
        true
    }

    /// Whether the memo may hold any answer at all (`false`: it was empty
    /// when opened, as on a first audit, so that every lookup misses and
    /// the answers are all to be computed).
    fn may_answer(&self) -> bool {
        true
    }

    /// The remembered answer for `key` as a buffer shared with the memo (no
    /// copy), when the memo keeps its answers so; `None` when it does not
    /// (ask [`CheckMemo::peek_with`] then).
    fn shared(&self, _key: &[u8; 32]) -> Option<bytes::Bytes> {
        None
    }

    /// Says that this run will remember about `answers` answers in all. A
    /// hint, never a bound: a memo that held nothing (a first audit) may
    /// make room for them at once instead of growing step by step, each
    /// step holding its old table and the new one together.
    fn expect_answers(&self, _answers: usize) {}
}

impl dyn CheckMemo + '_ {
    /// `f` of the remembered answer for `key`, read in place (no copy).
    pub fn peek<R>(&self, key: &[u8; 32], f: impl FnOnce(&[u8]) -> R) -> Option<R> {
        let mut f = Some(f);
        let mut out = None;
        self.peek_with(key, &mut |raw| out = f.take().map(|f| f(raw)));
        out
    }

    /// The remembered answer for `key`.
    #[cfg(test)]
    pub(crate) fn get(&self, key: &[u8; 32]) -> Option<Vec<u8>> {
        self.peek(key, <[u8]>::to_vec)
    }
}

/// Line fates from one document version to another, by (pinned blob, head blob).
/// Fates are opaque `u32` codes (see `check::upstream::Fate`).
pub trait DriftMemo: Sync {
    /// The fates of `old_lines` lines of blob `pinned` into the `new_lines` lines of
    /// blob `head`, when remembered for documents of these sizes.
    fn get(&self, pinned: &str, head: &str, old_lines: usize, new_lines: usize)
        -> Option<Vec<u32>>;

    /// Remembers fates.
    fn put(&self, pinned: &str, head: &str, new_lines: usize, fates: Vec<u32>);
}

/// The key of an answer: sha256 of the domain and each part, length-prefixed
/// (so no two different inputs share a key).
pub fn key(domain: &str, parts: &[&[u8]]) -> [u8; 32] {
    let mut h = Sha256::new();
    for p in std::iter::once(domain.as_bytes()).chain(parts.iter().copied()) {
        h.update((p.len() as u64).to_le_bytes());
        h.update(p);
    }
    h.finalize().into()
}

/// A little writer and reader for remembered answers: fixed-width integers and
/// length-prefixed strings; reading past the end or invalid UTF-8 gives `None`.
#[derive(Default)]
pub struct Enc(pub Vec<u8>);

impl Enc {
    pub fn u32(&mut self, v: u32) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    pub fn str(&mut self, s: &str) -> &mut Self {
        self.u32(s.len() as u32);
        self.0.extend_from_slice(s.as_bytes());
        self
    }
    pub fn bool(&mut self, b: bool) -> &mut Self {
        self.0.push(u8::from(b));
        self
    }
    /// Length-prefixed bytes (any bytes, not only UTF-8).
    pub fn bytes(&mut self, b: &[u8]) -> &mut Self {
        self.u32(b.len() as u32);
        self.0.extend_from_slice(b);
        self
    }
    pub fn u64(&mut self, v: u64) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    /// A severity that may be absent, as one number.
    pub fn opt_severity(&mut self, s: Option<crate::codes::Severity>) -> &mut Self {
        use crate::codes::Severity;
        self.u32(match s {
            None => 0,
            Some(Severity::Note) => 1,
            Some(Severity::Warning) => 2,
            Some(Severity::Error) => 3,
        })
    }
    /// A string that may be absent: a presence byte, then the string.
    pub fn opt_str(&mut self, s: Option<&str>) -> &mut Self {
        self.bool(s.is_some());
        if let Some(s) = s {
            self.str(s);
        }
        self
    }
    /// A number that may be absent: a presence byte, then the number.
    pub fn opt_u32(&mut self, v: Option<u32>) -> &mut Self {
        self.bool(v.is_some());
        if let Some(v) = v {
            self.u32(v);
        }
        self
    }
    /// A JSON object (a finding's evidence), kept as tagged values: read back
    /// without parsing JSON text, keys in their order.
    pub fn map(&mut self, m: &serde_json::Map<String, serde_json::Value>) -> &mut Self {
        self.u32(m.len() as u32);
        for (k, v) in m {
            self.str(k).value(v);
        }
        self
    }
    fn value(&mut self, v: &serde_json::Value) -> &mut Self {
        use serde_json::Value;
        match v {
            Value::Null => self.0.push(0),
            Value::Bool(b) => self.0.push(1 + u8::from(*b)),
            Value::Number(n) => {
                self.0.push(3);
                self.str(&n.to_string());
            }
            Value::String(s) => {
                self.0.push(4);
                self.str(s);
            }
            Value::Array(items) => {
                self.0.push(5);
                self.u32(items.len() as u32);
                for item in items {
                    self.value(item);
                }
            }
            Value::Object(m) => {
                self.0.push(6);
                self.map(m);
            }
        }
        self
    }
}

/// How deep [`Dec::map`] reads nested values (evidence is a few levels deep).
const VALUE_DEPTH_MAX: usize = 32;

pub struct Dec<'a>(pub &'a [u8]);

impl<'a> Dec<'a> {
    pub fn u32(&mut self) -> Option<u32> {
        let v = u32::from_le_bytes(self.0.get(..4)?.try_into().ok()?);
        self.0 = &self.0[4..];
        Some(v)
    }
    pub fn u64(&mut self) -> Option<u64> {
        let v = u64::from_le_bytes(self.0.get(..8)?.try_into().ok()?);
        self.0 = &self.0[8..];
        Some(v)
    }
    /// What [`Enc::opt_severity`] wrote; `None` for a number it never writes.
    pub fn opt_severity(&mut self) -> Option<Option<crate::codes::Severity>> {
        use crate::codes::Severity;
        Some(match self.u32()? {
            0 => None,
            1 => Some(Severity::Note),
            2 => Some(Severity::Warning),
            3 => Some(Severity::Error),
            _ => return None,
        })
    }
    /// What [`Enc::bytes`] wrote, in place.
    pub fn bytes(&mut self) -> Option<&'a [u8]> {
        let len = self.u32()? as usize;
        let b = self.0.get(..len)?;
        self.0 = &self.0[len..];
        Some(b)
    }
    /// Exactly `n` bytes, in place.
    pub fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let b = self.0.get(..n)?;
        self.0 = &self.0[n..];
        Some(b)
    }
    pub fn string(&mut self) -> Option<String> {
        self.str().map(str::to_string)
    }
    /// What [`Enc::str`] wrote, in place.
    pub fn str(&mut self) -> Option<&'a str> {
        std::str::from_utf8(self.bytes()?).ok()
    }
    /// A byte that is 0 or 1; anything else gives `None`.
    pub fn bool(&mut self) -> Option<bool> {
        let (&b, rest) = self.0.split_first()?;
        self.0 = rest;
        match b {
            0 => Some(false),
            1 => Some(true),
            _ => None,
        }
    }
    /// What [`Enc::opt_str`] wrote: `Some(None)` for an absent string.
    pub fn opt_string(&mut self) -> Option<Option<String>> {
        match self.bool()? {
            true => self.string().map(Some),
            false => Some(None),
        }
    }
    /// What [`Enc::opt_u32`] wrote.
    pub fn opt_u32(&mut self) -> Option<Option<u32>> {
        match self.bool()? {
            true => self.u32().map(Some),
            false => Some(None),
        }
    }
    /// What [`Enc::map`] wrote.
    pub fn map(&mut self) -> Option<serde_json::Map<String, serde_json::Value>> {
        self.map_at(0)
    }
    fn map_at(&mut self, depth: usize) -> Option<serde_json::Map<String, serde_json::Value>> {
        let n = self.u32()? as usize;
        // No count is trusted beyond what the bytes can hold (a key and a tag).
        if n > self.0.len() / 5 {
            return None;
        }
        let mut m = serde_json::Map::new();
        for _ in 0..n {
            let k = self.string()?;
            let v = self.value(depth + 1)?;
            m.insert(k, v);
        }
        Some(m)
    }
    fn value(&mut self, depth: usize) -> Option<serde_json::Value> {
        use serde_json::Value;
        if depth > VALUE_DEPTH_MAX {
            return None;
        }
        let (&tag, rest) = self.0.split_first()?;
        self.0 = rest;
        Some(match tag {
            0 => Value::Null,
            1 => Value::Bool(false),
            2 => Value::Bool(true),
            3 => Value::Number(serde_json::from_str(&self.string()?).ok()?),
            4 => Value::String(self.string()?),
            5 => {
                let n = self.u32()? as usize;
                if n > self.0.len() {
                    return None;
                }
                let mut items = Vec::with_capacity(n);
                for _ in 0..n {
                    items.push(self.value(depth + 1)?);
                }
                Value::Array(items)
            }
            6 => Value::Object(self.map_at(depth)?),
            _ => return None,
        })
    }
    /// Whether everything was read.
    pub fn done(&self) -> bool {
        self.0.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codec_round_trip_and_refusals() {
        let mut e = Enc::default();
        e.u32(7)
            .str("a")
            .bool(true)
            .opt_str(None)
            .opt_str(Some("é"))
            .opt_u32(Some(9))
            .opt_u32(None);
        let mut d = Dec(&e.0);
        assert_eq!(d.u32(), Some(7));
        assert_eq!(d.string().as_deref(), Some("a"));
        assert_eq!(d.bool(), Some(true));
        assert_eq!(d.opt_string(), Some(None));
        assert_eq!(d.opt_string(), Some(Some("é".to_string())));
        assert_eq!(d.opt_u32(), Some(Some(9)));
        assert_eq!(d.opt_u32(), Some(None));
        assert!(d.done());
        // A flag that is neither 0 nor 1, or an answer cut short, reads as nothing.
        assert_eq!(Dec(&[2]).bool(), None);
        assert_eq!(Dec(&e.0[..e.0.len() - 2]).u32().map(|_| ()), Some(()));
        let mut cut = Dec(&e.0[..6]);
        assert_eq!(cut.u32(), Some(7));
        assert_eq!(cut.string(), None);
    }

    /// Evidence comes back as it went in: key order, nesting, numbers as
    /// written; a cut, a bad tag or too deep a nesting reads as nothing.
    #[test]
    fn evidence_round_trips_and_refusals() {
        let v: serde_json::Value = serde_json::from_str(
            r#"{"z": 1, "a": [true, false, null, 2.50, -3e4, "tok/s \"é\"\n"],
                "m": {"x": {}, "y": []}, "big": 18446744073709551617}"#,
        )
        .expect("json");
        let m = v.as_object().expect("object");
        let mut e = Enc::default();
        e.map(m).u32(5);
        let mut d = Dec(&e.0);
        let back = d.map().expect("reads");
        assert_eq!(
            serde_json::to_string(&back).expect("json"),
            serde_json::to_string(m).expect("json")
        );
        assert_eq!(d.u32(), Some(5));
        assert!(d.done());
        for cut in 0..e.0.len() - 4 {
            assert!(Dec(&e.0[..cut]).map().is_none(), "cut at {cut}");
        }
        let mut bad = Enc::default();
        bad.u32(1).str("k");
        bad.0.push(9);
        assert!(Dec(&bad.0).map().is_none());
        let mut deep = serde_json::Value::Null;
        for _ in 0..40 {
            deep = serde_json::json!([deep]);
        }
        let mut e = Enc::default();
        e.map(
            &serde_json::json!({ "d": deep })
                .as_object()
                .expect("o")
                .clone(),
        );
        assert!(Dec(&e.0).map().is_none());
    }
}

/// A memo held in memory only, for tests of the checks that remember.
#[cfg(test)]
#[derive(Default)]
pub(crate) struct InMemory(std::sync::RwLock<std::collections::HashMap<[u8; 32], Vec<u8>>>);

#[cfg(test)]
impl CheckMemo for InMemory {
    fn peek_with(&self, key: &[u8; 32], f: &mut dyn FnMut(&[u8])) {
        if let Some(v) = self.0.read().expect("lock").get(key) {
            f(v)
        }
    }
    fn put(&self, key: [u8; 32], value: Vec<u8>) -> bool {
        self.0.write().expect("lock").insert(key, value);
        true
    }
    fn forget(&self, key: &[u8; 32]) {
        self.0.write().expect("lock").remove(key);
    }
}
