//! `--rewrite FROM=TO`: prefix rewrites of fetch URLs.
//!
//! They behave like git's `url.<TO>.insteadOf=<FROM>` so that people can reuse
//! what they know: the longest matching `FROM` wins and exactly one rule applies.
//! Rewrites exist for mirrors, air-gapped runs and tests (point
//! `https://github.com/` at a local `git daemon`). They change only where we
//! fetch from; the cache entry and every report keep the original URL.
//!
//! [`resolve_fetch_url`] is the checked form the fetcher uses: a local target
//! (a `file:` URL in any case, or a path; scp-like `git@host:o/r` is remote)
//! needs `--allow-local`, and a rewritten local path must stay under the rule's
//! target, compared in [`pinaudit_core::url::normalize`]d form, so a record's
//! `%2e%2e`-laden repository name cannot walk a mirror rule out of its directory.

use std::fmt;
use std::str::FromStr;

use super::url::redact;
use pinaudit_core::url::{is_local, normalize};

/// One `FROM=TO` rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rewrite {
    /// The URL prefix to replace.
    pub(crate) from: String,
    /// What replaces it.
    pub(crate) to: String,
}

/// Why a `--rewrite` argument could not be read.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum RewriteError {
    /// There is no `=` between the two prefixes.
    #[error("rewrite rule `{0}` has no `=` (expected FROM=TO)")]
    MissingEquals(String),
    /// `FROM` is empty, which would match every URL.
    #[error("rewrite rule `{0}` has an empty FROM prefix (expected FROM=TO)")]
    EmptyFrom(String),
    /// The fetch URL is on this machine and `--allow-local` was not given.
    #[error("`{0}` is a local path; pass --allow-local to fetch from it")]
    LocalRefused(String),
    /// A rewritten local path left the directory its rule points at.
    #[error("`{url}` is outside `{root}`, where its rewrite rule points")]
    EscapesRoot {
        /// The rewritten URL, redacted.
        url: String,
        /// The rule's target, redacted.
        root: String,
    },
}

impl FromStr for Rewrite {
    type Err = RewriteError;

    /// Split at the first `=`: a URL prefix rarely contains one, a target may
    /// (a query string), and git's config form has the same asymmetry.
    fn from_str(rule: &str) -> Result<Self, Self::Err> {
        let (from, to) = rule
            .split_once('=')
            .ok_or_else(|| RewriteError::MissingEquals(redact(rule)))?;
        if from.is_empty() {
            return Err(RewriteError::EmptyFrom(redact(rule)));
        }
        Ok(Rewrite {
            from: from.to_string(),
            to: to.to_string(),
        })
    }
}

impl fmt::Display for Rewrite {
    /// Shown redacted: a rule's target may hold a credential.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}={}", redact(&self.from), redact(&self.to))
    }
}

/// `url` after the rule with the longest matching `from` prefix; `url`
/// unchanged when none matches. With two rules of equal length the first wins.
///
/// Unchecked: what to fetch from is [`resolve_fetch_url`]'s to say.
pub fn apply_rewrites(rules: &[Rewrite], url: &str) -> String {
    match best_rule(rules, url) {
        Some(rule) => rule.apply(url),
        None => url.to_string(),
    }
}

/// Where to fetch `url` (a clone URL before rewrites) from: [`apply_rewrites`],
/// then refused when the result is local without `allow_local`, or when a
/// rewrite to a local target leaves that target's directory.
pub fn resolve_fetch_url(
    rules: &[Rewrite],
    url: &str,
    allow_local: bool,
) -> Result<String, RewriteError> {
    let rule = best_rule(rules, url);
    let fetch_url = rule.map_or_else(|| url.to_string(), |r| r.apply(url));
    if !is_local(&fetch_url) {
        return Ok(fetch_url);
    }
    if !allow_local {
        return Err(RewriteError::LocalRefused(redact(&fetch_url)));
    }
    if let Some(rule) = rule {
        if !normalize(&fetch_url).is_within(&rule.root()) {
            return Err(RewriteError::EscapesRoot {
                url: redact(&fetch_url),
                root: redact(&rule.to),
            });
        }
    }
    Ok(fetch_url)
}

/// The rule with the longest matching `from`; the first of equals.
fn best_rule<'a>(rules: &'a [Rewrite], url: &str) -> Option<&'a Rewrite> {
    let mut best: Option<&Rewrite> = None;
    for rule in rules {
        if url.starts_with(&rule.from) && best.is_none_or(|b| rule.from.len() > b.from.len()) {
            best = Some(rule);
        }
    }
    best
}

impl Rewrite {
    fn apply(&self, url: &str) -> String {
        format!("{}{}", self.to, &url[self.from.len()..])
    }

    /// The directory every URL this rule rewrites must stay in: `to` itself when
    /// it ends in `/`, else the directory holding its last, partial segment
    /// (`/srv/mirror/gh-` + `o/r.git` stays in `/srv/mirror`).
    fn root(&self) -> pinaudit_core::url::Normalized {
        let dir = match self.to.ends_with('/') {
            true => &self.to[..],
            false => &self.to[..self.to.rfind('/').map_or(0, |i| i + 1)],
        };
        normalize(dir)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(s: &str) -> Rewrite {
        s.parse().expect("valid rule")
    }

    #[test]
    fn parses_at_the_first_equals() {
        let r = rule("https://github.com/=git://127.0.0.1:9418/x?a=b");
        assert_eq!(r.from, "https://github.com/");
        assert_eq!(r.to, "git://127.0.0.1:9418/x?a=b");
    }

    #[test]
    fn rejects_rules_without_equals_or_from() {
        assert!(matches!(
            "https://github.com/".parse::<Rewrite>(),
            Err(RewriteError::MissingEquals(_))
        ));
        assert!(matches!(
            "=git://x/".parse::<Rewrite>(),
            Err(RewriteError::EmptyFrom(_))
        ));
    }

    #[test]
    fn errors_do_not_echo_credentials() {
        let err = "https://u:t0ken@h/".parse::<Rewrite>().unwrap_err();
        assert!(!err.to_string().contains("t0ken"), "{err}");
    }

    #[test]
    fn longest_prefix_wins_and_applies_once() {
        let rules = [
            rule("https://github.com/=git://mirror/gh/"),
            rule("https://github.com/special/=file:///srv/special/"),
            rule("git://mirror/=https://never/"),
        ];
        assert_eq!(
            apply_rewrites(&rules, "https://github.com/o/r.git"),
            "git://mirror/gh/o/r.git"
        );
        assert_eq!(
            apply_rewrites(&rules, "https://github.com/special/r.git"),
            "file:///srv/special/r.git"
        );
        assert_eq!(
            apply_rewrites(&rules, "https://gitlab.com/o/r.git"),
            "https://gitlab.com/o/r.git"
        );
    }

    #[test]
    fn scp_targets_are_remote() {
        let rules = [rule("https://github.com/=git@mirror.example:gh/")];
        assert_eq!(
            resolve_fetch_url(&rules, "https://github.com/o/r.git", false),
            Ok("git@mirror.example:gh/o/r.git".to_string())
        );
        let rules = [rule("https://github.com/=mirror:")];
        assert_eq!(
            resolve_fetch_url(&rules, "https://github.com/o/r.git", false),
            Ok("mirror:o/r.git".to_string())
        );
    }

    #[test]
    fn local_targets_need_allow_local_in_any_case() {
        for to in [
            "file:///srv/m/",
            "FILE:///srv/m/",
            "File:/srv/m/",
            "/srv/m/",
            "./m/",
        ] {
            let rules = [rule(&format!("https://github.com/={to}"))];
            let got = resolve_fetch_url(&rules, "https://github.com/o/r.git", false);
            assert!(
                matches!(&got, Err(RewriteError::LocalRefused(_))),
                "{to}: {got:?}"
            );
            assert!(got.unwrap_err().to_string().contains("--allow-local"));
            let got = resolve_fetch_url(&rules, "https://github.com/o/r.git", true);
            assert_eq!(got, Ok(format!("{to}o/r.git")), "{to}");
        }
        // A record's own file: URL, without a rule.
        assert!(matches!(
            resolve_fetch_url(&[], "FILE:///tmp/r", false),
            Err(RewriteError::LocalRefused(_))
        ));
        assert_eq!(
            resolve_fetch_url(&[], "file:///tmp/r", true),
            Ok("file:///tmp/r".to_string())
        );
        assert_eq!(
            resolve_fetch_url(&[], "https://github.com/o/r.git", false),
            Ok("https://github.com/o/r.git".to_string())
        );
    }

    #[test]
    fn rewritten_local_paths_stay_under_their_root() {
        let rules = [
            rule("https://github.com/=file:///srv/mirror/"),
            rule("https://gitlab.com/=/srv/gl/prefix-"),
        ];
        for url in [
            "https://github.com/o/r.git",
            "https://github.com/o/./r.git",
            "https://github.com/o/x/../r.git",
            "https://gitlab.com/g/p.git",
            // `prefix-..` is a name, and `..` after it only undoes it.
            "https://gitlab.com/../../etc",
        ] {
            assert!(resolve_fetch_url(&rules, url, true).is_ok(), "{url}");
        }
        for url in [
            "https://github.com/../../etc/passwd",
            "https://github.com/%2e%2e/%2e%2e/etc",
            "https://github.com/o/..%2F..%2F..%2Fetc",
            "https://github.com/o/%2E%2E/%2e%2E/x",
            "https://gitlab.com/../../../etc",
        ] {
            let got = resolve_fetch_url(&rules, url, true);
            assert!(
                matches!(&got, Err(RewriteError::EscapesRoot { .. })),
                "{url}: {got:?}"
            );
        }
        // A remote target is not a directory and is not checked.
        let rules = [rule("https://github.com/=git://127.0.0.1:9418/")];
        assert!(resolve_fetch_url(&rules, "https://github.com/../x", false).is_ok());
    }

    #[test]
    fn refusals_do_not_echo_credentials() {
        let rules = [rule("https://github.com/=file:///srv/m/")];
        let err = resolve_fetch_url(
            &rules,
            "https://github.com/%2e%2e/%2e%2e/x?token=s3cret",
            true,
        )
        .unwrap_err();
        assert!(!err.to_string().contains("s3cret"), "{err}");
    }

    #[test]
    fn equal_length_ties_go_to_the_first_rule() {
        let rules = [rule("https://h/=a://"), rule("https://h/=b://")];
        assert_eq!(apply_rewrites(&rules, "https://h/x"), "a://x");
    }
}
