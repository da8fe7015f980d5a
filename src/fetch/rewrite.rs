//! `--rewrite FROM=TO`: prefix rewrites of fetch URLs.
//!
//! They behave like git's `url.<TO>.insteadOf=<FROM>` so that people can reuse
//! what they know: the longest matching `FROM` wins and exactly one rule applies.
//! Rewrites exist for mirrors, air-gapped runs and tests (point
//! `https://github.com/` at a local `git daemon`). They change only where we
//! fetch from; the cache entry and every report keep the original URL.

use std::fmt;
use std::str::FromStr;

use super::url::redact;

/// One `FROM=TO` rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rewrite {
    /// The URL prefix to replace.
    pub from: String,
    /// What replaces it.
    pub to: String,
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
pub fn apply_rewrites(rules: &[Rewrite], url: &str) -> String {
    let mut best: Option<&Rewrite> = None;
    for rule in rules {
        if url.starts_with(&rule.from) && best.is_none_or(|b| rule.from.len() > b.from.len()) {
            best = Some(rule);
        }
    }
    match best {
        Some(rule) => format!("{}{}", rule.to, &url[rule.from.len()..]),
        None => url.to_string(),
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
    fn equal_length_ties_go_to_the_first_rule() {
        let rules = [rule("https://h/=a://"), rule("https://h/=b://")];
        assert_eq!(apply_rewrites(&rules, "https://h/x"), "a://x");
    }
}
