//! Clone URLs as the cache and the error messages see them.
//!
//! Two things can go wrong with a URL that a record hands us, and both are handled
//! here so no other code has to think about them:
//!
//! - It can carry a credential (`https://user:TOKEN@host/…`, `?private_token=…`).
//!   Whatever we print, log or put in an error must go through [`redact`] /
//!   [`redact_text`] first. Both are [`pinaudit_core::url`]'s, re-exported where the
//!   fetcher's callers have always found them.
//! - It names a directory inside the cache ([`cache_relpath`]). A URL is attacker
//!   controlled input (records are published documents), so it must not be able
//!   to reach outside `cache/` with `..`, an absolute path, a port colon or a
//!   userinfo part.
//!
//! Where an address's authority ends, and whether it is a URL, scp-like or a
//! path, is [`pinaudit_core::url::Remote`]'s to say.

use std::path::PathBuf;

use sha2::{Digest, Sha256};

pub use pinaudit_core::url::{redact, redact_text};

/// Suffix of the advisory lock file kept beside each cached repository.
pub(crate) const LOCK_SUFFIX: &str = ".pinaudit-lock";

/// The host of `url` (lowercase, without userinfo or port), if it has one.
#[cfg(test)]
pub(crate) fn host(url: &str) -> Option<String> {
    pinaudit_core::url::Remote::parse(url).host()
}

/// Where the bare mirror of `original_url` lives, relative to the cache root:
/// `git/HOST/SEGMENT/…/REPO.git`.
///
/// Computed from the URL *before* `--rewrite` rules apply, so a mirror or an
/// air-gapped rewrite fills the same cache entry as the real remote. Every
/// segment is sanitised: only `[A-Za-z0-9._-]` survive, a leading `.` is
/// escaped (so `..` and hidden names can't occur), userinfo is dropped and a
/// port becomes `_PORT`. A segment that had to be changed gets a short hash
/// of its original spelling, so two different URLs don't share a directory.
/// Local paths and `file:` URLs go under `git/local/`.
pub fn cache_relpath(original_url: &str) -> PathBuf {
    let (host, path) = pinaudit_core::url::split_remote(original_url);
    let host = match host {
        Some(h) => {
            let (_, h) = pinaudit_core::url::split_userinfo(h);
            let h = h.to_ascii_lowercase();
            if h.is_empty() || h == "localhost" {
                "local".to_string()
            } else {
                sanitize_segment(&h.replace(':', "_"), false)
            }
        }
        None => "local".to_string(),
    };

    // Query and fragment are never part of a clone URL's repository path.
    let path = path.split(['?', '#']).next().unwrap_or("");
    let mut segments: Vec<&str> = path
        .split(['/', '\\'])
        .filter(|s| !s.is_empty() && *s != ".")
        .collect();
    let last = segments.pop().map(|s| s.strip_suffix(".git").unwrap_or(s));

    let mut rel = PathBuf::from("git");
    rel.push(host);
    for segment in segments {
        rel.push(sanitize_segment(segment, true));
    }
    let repo = match last {
        Some(s) if !s.is_empty() => sanitize_segment(s, false),
        _ => "_".to_string(),
    };
    rel.push(format!("{repo}.git"));
    rel
}

/// Make one path segment safe, appending a hash of the original when the
/// safe spelling differs from it. `inner` segments (all but the repository
/// name) must also not look like a repository directory or our lock file.
fn sanitize_segment(segment: &str, inner: bool) -> String {
    const MAX_LEN: usize = 100;
    let mut safe: String = segment
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if safe.starts_with('.') {
        safe.insert(0, '_');
    }
    let clashes = inner && (safe.ends_with(".git") || safe.ends_with(LOCK_SUFFIX));
    if safe == segment && !clashes && safe.len() <= MAX_LEN {
        return safe;
    }
    safe.truncate(MAX_LEN);
    let digest = Sha256::digest(segment.as_bytes());
    let tag: String = digest.iter().take(4).map(|b| format!("{b:02x}")).collect();
    format!("{safe}-{tag}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::{Component, Path};

    #[test]
    fn github_url_maps_to_host_owner_repo() {
        let want = Path::new("git/github.com/chishiki37/kimi-k3-iq1s-3node-dgx-spark.git");
        for url in [
            "https://github.com/chishiki37/kimi-k3-iq1s-3node-dgx-spark.git",
            "https://github.com/chishiki37/kimi-k3-iq1s-3node-dgx-spark",
            "https://github.com/chishiki37/kimi-k3-iq1s-3node-dgx-spark/",
            "https://GitHub.com/chishiki37/kimi-k3-iq1s-3node-dgx-spark.git",
            "git@github.com:chishiki37/kimi-k3-iq1s-3node-dgx-spark.git",
        ] {
            assert_eq!(cache_relpath(url), want, "{url}");
        }
    }

    #[test]
    fn extra_segments_are_kept() {
        assert_eq!(
            cache_relpath("https://gitlab.com/group/sub/project.git"),
            Path::new("git/gitlab.com/group/sub/project.git")
        );
        assert_eq!(
            cache_relpath("https://huggingface.co/datasets/owner/name"),
            Path::new("git/huggingface.co/datasets/owner/name.git")
        );
    }

    #[test]
    fn port_and_userinfo_do_not_leak_into_the_path() {
        let rel = cache_relpath("https://user:s3cret@example.com:8443/o/r.git");
        let text = rel.to_string_lossy();
        assert!(!text.contains("s3cret"), "{text}");
        assert!(!text.contains(':'), "{text}");
        assert_eq!(text, "git/example.com_8443/o/r.git");
    }

    #[test]
    fn local_paths_go_under_local() {
        assert_eq!(
            cache_relpath("file:///srv/repos/a.git"),
            Path::new("git/local/srv/repos/a.git")
        );
        assert_eq!(
            cache_relpath("/srv/repos/a"),
            Path::new("git/local/srv/repos/a.git")
        );
    }

    #[test]
    fn hostile_urls_stay_inside_the_cache() {
        for url in [
            "https://github.com/../../../etc/passwd",
            "https://../x/..",
            "file:///../../etc",
            "..",
            "/",
            "",
            "https://github.com/a/.git",
            "https://h/a/.hidden/../.git",
            "https://h/a.git/b",
            "https://h/a.git.pinaudit-lock/b",
            "C:\\Windows\\system32",
            "https://h/%2e%2e/x",
        ] {
            let rel = cache_relpath(url);
            assert!(rel.is_relative(), "{url} -> {rel:?}");
            assert!(rel.starts_with("git"), "{url} -> {rel:?}");
            for c in rel.components() {
                match c {
                    Component::Normal(s) => {
                        let s = s.to_string_lossy();
                        assert!(!s.starts_with('.'), "{url} -> {rel:?}");
                        assert!(!s.contains(':'), "{url} -> {rel:?}");
                    }
                    other => panic!("{url} -> {rel:?} has {other:?}"),
                }
            }
            let inner: Vec<_> = rel.components().collect();
            for c in &inner[..inner.len() - 1] {
                let s = c.as_os_str().to_string_lossy();
                assert!(!s.ends_with(".git"), "{url} -> {rel:?}");
            }
        }
    }

    #[test]
    fn sanitised_names_stay_distinct() {
        assert_ne!(
            cache_relpath("https://h/o/a b"),
            cache_relpath("https://h/o/a_b")
        );
    }

    #[test]
    fn redact_removes_userinfo() {
        assert_eq!(
            redact("https://x-access-token:ghp_abc@github.com/o/r.git"),
            "https://github.com/o/r.git"
        );
        assert_eq!(redact("https://tok@host/o/r"), "https://host/o/r");
        assert_eq!(redact("https://host/o/r"), "https://host/o/r");
        assert_eq!(redact("git@github.com:o/r.git"), "git@github.com:o/r.git");
        assert_eq!(redact("user:pw@github.com:o/r.git"), "github.com:o/r.git");
    }

    #[test]
    fn redact_text_handles_embedded_urls() {
        let text = "failed to fetch 'https://u:p4ss@h.example/o/r' and `git://a:b@c/d`";
        let clean = redact_text(text);
        assert!(!clean.contains("p4ss"), "{clean}");
        assert!(!clean.contains("a:b"), "{clean}");
        assert_eq!(
            clean,
            "failed to fetch 'https://h.example/o/r' and `git://c/d`"
        );
    }

    #[test]
    fn host_ignores_userinfo_and_port() {
        assert_eq!(
            host("https://u:p@GitHub.com:443/o/r").as_deref(),
            Some("github.com")
        );
        assert_eq!(host("git@github.com:o/r").as_deref(), Some("github.com"));
        assert_eq!(host("/srv/r"), None);
    }
}
