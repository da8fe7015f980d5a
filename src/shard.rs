//! `audit --shard K/N`: one slice of a corpus too large for one runner.
//!
//! A record belongs to the shard its *first source's repository* hashes to
//! (sha256 of the repository's normalised clone URL, modulo N), so that every
//! record citing a repository first lands in the same shard and the repository
//! is fetched by that shard only. A record without sources is placed by its id;
//! an input that yielded no record, by its file name. A record whose later
//! sources cite other repositories fetches those too, wherever it lands; the
//! partition of *records* is exact either way, and `pinaudit merge` puts the
//! shard reports back together.

use std::fmt;
use std::str::FromStr;

use sha2::{Digest, Sha256};

use crate::record::Record;

/// Shard K of N, 1-based.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Shard {
    k: u32,
    n: u32,
}

impl Shard {
    pub(crate) fn new(k: u32, n: u32) -> Result<Shard, ShardError> {
        if n == 0 || k == 0 || k > n {
            return Err(ShardError::NoSuchShard { k, n });
        }
        Ok(Shard { k, n })
    }

    /// Whether `key` (a repository, a record id, a file) falls in this shard.
    pub(crate) fn holds_key(&self, key: &str) -> bool {
        shard_of(key, self.n) == self.k
    }

    /// Whether `record` falls in this shard.
    pub(crate) fn holds(&self, record: &Record) -> bool {
        self.holds_key(&key_of(record))
    }
}

/// Why `--shard K/N` names no shard.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum ShardError {
    #[error("`{0}` is not K/N (e.g. `1/4`)")]
    NotKOfN(String),
    #[error("shard `{k}/{n}` does not exist: K counts from 1 to N")]
    NoSuchShard { k: u32, n: u32 },
}

impl FromStr for Shard {
    type Err = ShardError;
    fn from_str(s: &str) -> Result<Shard, ShardError> {
        let not = || ShardError::NotKOfN(s.to_string());
        let (k, n) = s.split_once('/').ok_or_else(not)?;
        let num = |x: &str| x.trim().parse::<u32>().map_err(|_| not());
        Shard::new(num(k)?, num(n)?)
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.k, self.n)
    }
}

/// The shard (1..=n) a key hashes to: stable across machines and versions.
pub fn shard_of(key: &str, n: u32) -> u32 {
    let digest = Sha256::digest(key.as_bytes());
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest[..8]);
    (u64::from_be_bytes(first) % u64::from(n.max(1))) as u32 + 1
}

/// What places a record: its first source's repository as pinaudit clones it,
/// lowercased (so `github.com/O/R`, `…/R.git` and a blob URL agree).
pub(crate) fn key_of(record: &Record) -> String {
    record
        .sources
        .first()
        .and_then(|s| {
            s.url_parsed()
                .map(std::borrow::Cow::into_owned)
                .or_else(|| {
                    s.repository
                        .as_deref()
                        .and_then(crate::record::url::parse_repository)
                })
        })
        .map(|u| u.clone_url().to_ascii_lowercase())
        .unwrap_or_else(|| format!("record:{}", record.id))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_parse_and_refuse_nonsense() {
        assert_eq!("2/4".parse::<Shard>(), Shard::new(2, 4));
        for bad in ["0/2", "3/2", "1/0", "1", "a/b", "1/2/3"] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
        }
    }

    #[test]
    fn every_key_is_in_exactly_one_shard() {
        for key in ["https://github.com/a/b", "record:x", "pins/y.json"] {
            for n in 1..6 {
                let holders = (1..=n)
                    .filter(|k| Shard::new(*k, n).unwrap().holds_key(key))
                    .count();
                assert_eq!(holders, 1);
            }
        }
    }
}
