//! The entry points fuzzers drive: the parsers of text pinaudit reads from
//! strangers (record documents, pin files, URLs) and the value matcher, each
//! taking arbitrary bytes and required never to panic (issue "Reliability and
//! security", part "Fuzzing"). Shared by the `cargo fuzz` targets in `fuzz/`
//! (nightly, libFuzzer) and the stable long-run harness in
//! `tests/cli/security.rs` (`PINAUDIT_FUZZ_SECS`), so both test the same code.

use std::path::Path;

/// The record importer, on a document of any bytes.
pub fn import(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let imported = crate::record::document::import(&text, Path::new("fuzz.md"));
    let _ = format!("{imported:?}");
}

/// The pin-file reader, on any bytes that are JSON.
pub fn pin_file(data: &[u8]) {
    if let Ok(value) = serde_json::from_slice::<serde_json::Value>(data) {
        if let Ok(parsed) = crate::record::pinfile::from_value(&value, Path::new("fuzz.json")) {
            let _ = format!("{parsed:?}");
        }
    }
}

/// The URL model: forge grammars, remotes, normalisation, host classes,
/// redaction, cache paths and rewrites, on any text.
pub fn url(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    if let Ok(u) = crate::record::url::parse(&text) {
        let _ = (u.clone_url(), u.repository_url(), u.redacted());
    }
    let _ = crate::record::url::parse_repository(&text);
    let remote = crate::url::Remote::parse(&text);
    let _ = (remote.host(), remote.is_local(), remote.authority());
    let _ = crate::url::normalize(&text);
    let _ = crate::url::classify_host(&text);
    let _ = crate::url::redact(&text);
    let _ = crate::fetch::cache_relpath(&text);
    if let Some((from, to)) = text.split_once('\n') {
        if let Ok(rule) = format!("{from}={to}").parse::<crate::fetch::Rewrite>() {
            let _ = crate::fetch::rewrite::resolve_fetch_url(&[rule], &text, true);
        }
    }
    let _ = crate::report::escape::md_text(&text);
    let _ = crate::report::escape::md_code(&text);
    let _ = crate::report::escape::terminal(&text);
}

/// The matcher: the first line is the claimed value (and unit after a space),
/// the rest the document.
pub fn matcher(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let (head, body) = text.split_once('\n').unwrap_or((&text, ""));
    let (value, unit) = head
        .split_once(' ')
        .map_or((head, None), |(v, u)| (v, Some(u)));
    let expected = crate::matcher::Expected {
        value,
        unit,
        correct: Some(18),
        total: Some(20),
        label: Some("mean decode tok/s"),
        metric: None,
        statistic: None,
    };
    let _ = crate::matcher::tokens(body);
    for line in body.lines().take(64) {
        let _ = crate::matcher::find(line, &expected);
    }
}
