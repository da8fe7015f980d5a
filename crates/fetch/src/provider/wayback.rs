//! The Wayback Machine as an archive of web documents ([`WebArchives`]): asked
//! while records are checked, for a cited web page its host answers `404` or
//! `410` for, and only when the record gives the document's sha256.
//!
//! 1. `cdx/search/cdx?url=<url>&output=json&fl=timestamp,original,statuscode`:
//!    the captures of the URL (a JSON array of rows, the first naming the fields);
//! 2. `web/<timestamp>id_/<original>`: a capture's raw bytes, as the page served
//!    them. Captures are tried nearest the record's date first, at most
//!    [`TRIED`] of them; one is used only when its bytes have the recorded sha256.
//!
//! A capture's bytes never change: the capture chosen for (URL, sha256) and its
//! bytes are kept in `CACHE/archive/wayback/` for good (`--offline` reads them);
//! "no capture with those bytes" is kept for a day. Requests go through the same
//! client, rate-limit handling, deadline and host rules as Software Heritage's
//! ([`super::swh`]), with no token.

use std::sync::Arc;

use super::archive::{ArchiveAnswer, ArchiveRef, Archived, WebArchives};
use super::swh::{now_secs, ArchiveOptions, Got, Shared};
use super::{Provider, Snapshot, Target};
use crate::sha256_hex;
use crate::store::Kept;

/// The public service, by default (`--wayback-url`).
pub const DEFAULT_URL: &str = "https://web.archive.org/";
const SERVICE: &str = "wayback";
/// Captures fetched per document, nearest the record's date first.
const TRIED: usize = 3;

/// The Wayback Machine, shared by every fork: its answers are by (URL, sha256).
#[derive(Clone)]
pub struct WaybackProvider {
    inner: Arc<Shared>,
}

impl WaybackProvider {
    pub fn new(opts: ArchiveOptions) -> WaybackProvider {
        WaybackProvider {
            inner: Shared::new(opts, SERVICE, "the Wayback Machine"),
        }
    }
}

impl Provider for WaybackProvider {
    /// Nothing ahead of time: only a page its host lost is looked up.
    fn prefetch(&mut self, _targets: &[&Target]) {}

    fn fork(&self) -> Option<Box<dyn Provider>> {
        Some(Box::new(self.clone()))
    }

    fn web_archives(&self) -> Option<&dyn WebArchives> {
        Some(self)
    }
}

impl WebArchives for WaybackProvider {
    fn capture(&self, url: &str, sha256: &str, near: Option<&str>) -> ArchiveAnswer {
        let key = (url.to_string(), sha256.to_ascii_lowercase());
        self.inner
            .answer(key, |(_, sha256)| lookup(&self.inner, url, sha256, near))
    }
}

/// The capture of `url` with bytes of `sha256`, nearest `near`: the one kept in
/// the cache, else one of those the CDX API lists.
fn lookup(archive: &Shared, url: &str, sha256: &str, near: Option<&str>) -> ArchiveAnswer {
    let now = now_secs();
    let picked = format!("pick:{sha256}:{url}");
    if let Some(Kept::Found(ts)) = archive.store.get(&picked, now) {
        let ts = String::from_utf8_lossy(&ts).into_owned();
        if let Some(found) = cached_capture(archive, &ts, url, sha256) {
            return found;
        }
    }
    let none = format!("none:{sha256}:{url}");
    let nothing = || {
        ArchiveAnswer::NotArchived(format!(
            "no capture of `{}` in the Wayback Machine has the recorded bytes",
            pinaudit_core::url::redact(url)
        ))
    };
    if archive.store.get(&none, now) == Some(Kept::NotArchived) {
        return nothing();
    }
    if archive.opts.offline {
        return ArchiveAnswer::NotAsked;
    }
    let listing = format!(
        "cdx/search/cdx?url={}&output=json&fl=timestamp,original,statuscode",
        percent_encoding::utf8_percent_encode(url, percent_encoding::NON_ALPHANUMERIC)
    );
    let rows = match archive.fetch(&listing) {
        Ok(Got::Found(body)) => captures(&body),
        Ok(Got::NotArchived) => Vec::new(),
        Err(answer) => return answer,
    };
    let mut rows = rows;
    let near = near.and_then(epoch_of);
    rows.sort_by_key(|(ts, _)| {
        let at = epoch_of_timestamp(ts).unwrap_or(i64::MAX);
        (near.map_or(0, |n| (at - n).unsigned_abs()), at)
    });
    for (ts, original) in rows.into_iter().take(TRIED) {
        let bytes = match archive.fetch(&format!("web/{ts}id_/{original}")) {
            Ok(Got::Found(bytes)) => bytes,
            Ok(Got::NotArchived) => continue,
            Err(answer) => return answer,
        };
        if sha256_hex(&bytes) != sha256 {
            continue;
        }
        let _ = archive.store.put_found(&format!("cap:{ts}:{url}"), &bytes);
        let _ = archive.store.put_found(&picked, ts.as_bytes());
        return found(archive, &ts, url, bytes);
    }
    let _ = archive.store.put_not_archived(&none, now);
    nothing()
}

/// The capture `ts` of `url` kept in the cache, when its bytes still have
/// the sha256.
fn cached_capture(archive: &Shared, ts: &str, url: &str, sha256: &str) -> Option<ArchiveAnswer> {
    let Kept::Found(bytes) = archive.store.get(&format!("cap:{ts}:{url}"), now_secs())? else {
        return None;
    };
    (sha256_hex(&bytes) == sha256).then(|| found(archive, ts, url, bytes))
}

/// The answer for the capture `ts` of `url`, with its bytes.
fn found(archive: &Shared, ts: &str, url: &str, bytes: Vec<u8>) -> ArchiveAnswer {
    ArchiveAnswer::Found(Box::new(Archived {
        snapshot: Snapshot {
            sha256: sha256_hex(&bytes),
            bytes,
            loaded: true,
            git_blob: None,
            streamed: false,
        },
        commit_time: None,
        at: ArchiveRef::Wayback {
            url: format!("{}web/{ts}/{url}", archive.opts.url),
            time: rfc3339_of_timestamp(ts).unwrap_or_else(|| ts.to_string()),
        },
    }))
}

/// The (timestamp, original URL) of each capture the CDX API listed with status
/// 200; a malformed listing lists none.
fn captures(body: &[u8]) -> Vec<(String, String)> {
    let Ok(rows) = serde_json::from_slice::<Vec<Vec<String>>>(body) else {
        return Vec::new();
    };
    let mut rows = rows.into_iter();
    let Some(header) = rows.next() else {
        return Vec::new();
    };
    let at = |name: &str| header.iter().position(|h| h == name);
    let (Some(ts), Some(original)) = (at("timestamp"), at("original")) else {
        return Vec::new();
    };
    let status = at("statuscode");
    rows.filter(|r| status.is_none_or(|i| r.get(i).is_some_and(|s| s == "200")))
        .filter_map(|r| {
            let t = r.get(ts)?.clone();
            let digits = t.len() == 14 && t.bytes().all(|b| b.is_ascii_digit());
            let o = r.get(original)?.clone();
            let web = o.starts_with("http://") || o.starts_with("https://");
            (digits && web).then_some((t, o))
        })
        .collect()
}

const TIMESTAMP: &[time::format_description::FormatItem<'static>] =
    time::macros::format_description!("[year][month][day][hour][minute][second]");

fn epoch_of_timestamp(ts: &str) -> Option<i64> {
    let t = time::PrimitiveDateTime::parse(ts, TIMESTAMP).ok()?;
    Some(t.assume_utc().unix_timestamp())
}

fn rfc3339_of_timestamp(ts: &str) -> Option<String> {
    let t = time::PrimitiveDateTime::parse(ts, TIMESTAMP).ok()?;
    t.assume_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .ok()
}

/// A record's date (RFC 3339, or a day) as seconds since the epoch.
fn epoch_of(text: &str) -> Option<i64> {
    let text = text.trim();
    if let Ok(t) = time::OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339)
    {
        return Some(t.unix_timestamp());
    }
    let day = time::Date::parse(
        text,
        time::macros::format_description!("[year]-[month]-[day]"),
    )
    .ok()?;
    Some(day.midnight().assume_utc().unix_timestamp())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_cdx_listing() {
        let body = br#"[["timestamp","original","statuscode"],
            ["20240101120000","https://example.com/p","200"],
            ["20240102120000","https://example.com/p","404"],
            ["2024","https://example.com/p","200"]]"#;
        assert_eq!(
            captures(body),
            vec![("20240101120000".into(), "https://example.com/p".into())]
        );
        assert!(captures(b"not json").is_empty());
        assert_eq!(
            rfc3339_of_timestamp("20240101120000").as_deref(),
            Some("2024-01-01T12:00:00Z")
        );
        assert_eq!(epoch_of("2024-01-01"), epoch_of("2024-01-01T00:00:00Z"));
    }
}
