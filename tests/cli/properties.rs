//! Properties of the parsers that take attacker-controlled text (records are
//! published documents), checked on generated inputs with proptest:
//!
//! - `record::url::parse` never panics, and reads back every part of a GitHub
//!   blob URL built from generated parts;
//! - a URL's cache directory (`fetch::cache_relpath`) stays inside the cache,
//!   whatever the URL;
//! - `fetch::redact` removes every `user:password@`.
//!
//! The tokenizer and matcher have property tests of their own elsewhere.

use std::path::{Component, Path};

use pinaudit::fetch::{cache_relpath, redact, redact_text, GitCache};
use pinaudit::record::url::{parse, Forge};
use pinaudit::record::{Lines, Revision, MAX_LINE};
use proptest::prelude::*;

/// Text shaped like the URLs records carry, with the pieces that steer the
/// parser (schemes, forge hosts and path keywords, `..`, escapes, anchors),
/// so that generated cases reach past the first `Err`.
fn url_like() -> impl Strategy<Value = String> {
    let scheme = prop::sample::select(vec![
        "", "https://", "http://", "file://", "git://", "HTTPS://", "https:/",
    ]);
    let host = prop::sample::select(vec![
        "github.com",
        "www.github.com",
        "raw.githubusercontent.com",
        "gitlab.com",
        "huggingface.co",
        "codeberg.org",
        "[::1]:8080",
        "u:p@h:99999",
        "h:",
        "",
    ]);
    let segment = prop_oneof![
        prop::sample::select(vec![
            "-", "blob", "raw", "tree", "src", "commit", "refs", "heads", "datasets", ".", "..",
            "%2e%2e", "%", "%zz", "a.git", "",
        ])
        .prop_map(str::to_string),
        "[a-zA-Z0-9._~%-]{1,12}",
        "\\PC{0,6}",
    ];
    let anchor = prop_oneof![
        Just(String::new()),
        "#L[0-9]{0,11}",
        "#L[0-9]{1,11}-L?[0-9]{0,11}",
        "#L[0-9]{1,4}C[0-9]{1,3}-L[0-9]{1,4}C[0-9]{0,3}",
        "#\\PC{0,8}",
    ];
    let query = prop_oneof![Just(String::new()), "\\?[a-z=&]{0,8}"];
    (
        scheme,
        host,
        prop::collection::vec(segment, 0..8),
        query,
        anchor,
    )
        .prop_map(|(scheme, host, segments, query, anchor)| {
            format!("{scheme}{host}/{}{query}{anchor}", segments.join("/"))
        })
}

/// A repository name GitHub accepts that the parser must keep as written: no
/// `.git` suffix (which it strips, as git does) and no leading dot.
fn repo_name() -> impl Strategy<Value = String> {
    "[A-Za-z0-9_][A-Za-z0-9._-]{0,30}".prop_filter("`.git` is stripped", |r| !r.ends_with(".git"))
}

/// A cited line range: `1 <= first <= last <= MAX_LINE`.
fn line_range() -> impl Strategy<Value = (u32, u32)> {
    (1..=MAX_LINE).prop_flat_map(|a| (Just(a), a..=MAX_LINE))
}

/// Every component of `rel` is a plain name: no root, no prefix, no `.`, no `..`.
fn stays_inside(rel: &Path) -> bool {
    !rel.is_absolute() && rel.components().all(|c| matches!(c, Component::Normal(_)))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn url_parse_never_panics_on_any_string(s in "\\PC*") {
        let _ = parse(&s);
    }

    #[test]
    fn url_parse_never_panics_on_url_like_text(s in url_like()) {
        let _ = parse(&s);
    }

    #[test]
    fn github_blob_url_round_trips(
        owner in "[A-Za-z0-9][A-Za-z0-9-]{0,38}",
        repo in repo_name(),
        commit in "[0-9a-f]{40}",
        path in prop::collection::vec("[A-Za-z0-9_][A-Za-z0-9._-]{0,15}", 1..5),
        (first, last) in line_range(),
    ) {
        let path = path.join("/");
        let url =
            format!("https://github.com/{owner}/{repo}/blob/{commit}/{path}#L{first}-L{last}");
        let parsed = parse(&url).map_err(|e| TestCaseError::fail(format!("{url}: {e}")))?;
        prop_assert_eq!(parsed.forge, Forge::GitHub);
        prop_assert_eq!(parsed.host, "github.com");
        prop_assert_eq!(parsed.repo_path, format!("{owner}/{repo}"));
        let pinned = parsed.revision.as_ref().and_then(Revision::commit);
        prop_assert_eq!(pinned.map(|c| c.as_str()), Some(commit.as_str()));
        prop_assert_eq!(parsed.path, Some(path));
        prop_assert_eq!(parsed.lines, Some(Lines::new(first, last).expect("a valid range")));
    }

    #[test]
    fn cache_path_of_any_string_stays_inside_the_cache(url in "\\PC*") {
        let rel = cache_relpath(&url);
        prop_assert!(stays_inside(&rel), "{url:?} -> {rel:?}");
        let root = Path::new("/cache-root");
        let key = pinaudit::cache_key::CacheKey::from_secret(b"tests");
        prop_assert!(GitCache::with_key(root, key).repo_path(&url).starts_with(root));
    }

    #[test]
    fn cache_path_of_url_like_text_stays_inside_the_cache(url in url_like()) {
        let rel = cache_relpath(&url);
        prop_assert!(stays_inside(&rel), "{url:?} -> {rel:?}");
    }

    #[test]
    fn cache_path_never_holds_the_password(
        scheme in prop::sample::select(vec!["https", "http", "git", "ssh"]),
        password in "ZQ[0-9]{6}",
        path in prop::collection::vec("[a-z.]{1,8}", 1..5),
    ) {
        let url = format!("{scheme}://user:{password}@host.example:8080/{}", path.join("/"));
        let rel = cache_relpath(&url);
        prop_assert!(stays_inside(&rel), "{url:?} -> {rel:?}");
        prop_assert!(!rel.to_string_lossy().contains(&password), "{url:?} -> {rel:?}");
    }

    /// `scheme://user:password@host/path` loses exactly its userinfo, for any
    /// password made of the characters RFC 3986 allows there unescaped
    /// (unreserved, `%XX`, sub-delimiters and `:`). `redact_text` ends a URL
    /// quoted in prose at `'`, `(` and `)`, so the prose form is checked for
    /// passwords without them.
    #[test]
    fn redact_removes_the_userinfo_of_any_url(
        scheme in prop::sample::select(vec!["https", "http", "git", "ssh", "ftp"]),
        user in "[A-Za-z0-9._~-]{1,12}",
        password in "([A-Za-z0-9._~:!$&'()*+,;=-]|%[0-9A-F]{2}){1,24}",
        host in "[a-z0-9.-]{1,20}(:[0-9]{1,5})?",
        path in "(/[A-Za-z0-9._~%-]{0,12}){0,4}",
    ) {
        let url = format!("{scheme}://{user}:{password}@{host}{path}");
        prop_assert_eq!(redact(&url), format!("{scheme}://{host}{path}"));
        if password.contains(['\'', '(', ')']) {
            return Ok(());
        }
        let text = format!("error: could not fetch `{url}`: connection refused");
        let quoted = redact_text(&text);
        prop_assert!(!quoted.contains(&format!(":{password}@")), "{quoted}");
        prop_assert_eq!(
            quoted,
            format!("error: could not fetch `{scheme}://{host}{path}`: connection refused")
        );
    }

    /// The scp-like address `user:password@host:path` loses its `user:password@`
    /// (`host:/abs/path` too; `host://…` would be a URL).
    #[test]
    fn redact_removes_the_password_of_an_scp_address(
        user in "[A-Za-z0-9._-]{1,12}",
        password in "[A-Za-z0-9._~-]{1,24}",
        host in "[a-z0-9.-]{1,20}",
        path in "/?[A-Za-z0-9._-]{1,12}(/[A-Za-z0-9._-]{1,12}){0,3}",
    ) {
        let address = format!("{user}:{password}@{host}:{path}");
        prop_assert_eq!(redact(&address), format!("{host}:{path}"));
    }
}
