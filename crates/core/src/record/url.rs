//! Forge URLs: where a cited document lives, at which revision, on which lines.
//!
//! Records cite documents by the URL a reader clicks (`…/blob/<rev>/README.md#L43`).
//! Link checkers drop the `#L43` and never look at the revision; pinaudit needs
//! both, plus the clone URL that holds the revision. Each forge writes these URLs
//! its own way; this module knows them all and nothing else.
//!
//! A URL is parsed once, here: the `url` crate splits it (scheme in any case,
//! authority, port, dot segments), one small grammar per forge (`record/forge.rs`)
//! picks the repository, view, revision and document out of its path, and the
//! result keeps the raw text for messages ([`ForgeUrl::redacted`]). Questions
//! that are not about forges (redaction, remotes, hosts) are [`crate::url`]'s.

use std::str::FromStr;

use super::forge;
pub use super::forge::{Forge, View};
use super::{Lines, Revision};
use crate::url::percent_decode;

/// A parsed document URL.
#[derive(Debug, Clone, PartialEq)]
pub struct ForgeUrl {
    pub forge: Forge,
    /// Host without userinfo or port, lowercase, without `www.`.
    pub host: String,
    /// `scheme://host[:port]` as the URL reaches the forge: `http` or `https` as
    /// written (`https` for a bare `github.com/…`), any port but the scheme's
    /// default, never the userinfo. A self-hosted Gitea on `http://git.example:3000`
    /// is cloned from there, not from `https://git.example`. `file://` for
    /// [`Forge::Local`].
    pub(crate) base: String,
    /// Repository path on the host: `OWNER/REPO`, `GROUP/SUB/REPO`, `datasets/OWNER/REPO`.
    pub repo_path: String,
    pub revision: Option<Revision>,
    /// Document path inside the repository, percent-decoded.
    pub path: Option<String>,
    pub lines: Option<Lines>,
    /// What the URL shows; `None` for a repository URL.
    pub(crate) view: Option<View>,
    /// `http`, `https` or `file`, lowercase.
    pub(crate) scheme: String,
    /// The port when it is not the scheme's default.
    pub(crate) port: Option<u16>,
    /// The URL as written (trimmed), for messages. It may hold a credential:
    /// show [`ForgeUrl::redacted`].
    pub raw: String,
}

/// Why a URL could not be understood.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UrlError {
    #[error("`{0}` is not an http(s) or file URL")]
    Scheme(String),
    #[error("`{0}` does not name a repository (expected HOST/OWNER/REPO)")]
    NoRepository(String),
    #[error("`{url}` has a line anchor pinaudit does not understand: `#{anchor}` (expected `#L43`, `#L43-L45` or `#L43-45`)")]
    Anchor { url: String, anchor: String },
}

impl ForgeUrl {
    /// The URL to clone the repository from, before `--rewrite` rules.
    pub fn clone_url(&self) -> String {
        match self.forge {
            // raw.githubusercontent.com serves files of repositories on github.com.
            Forge::GitHubRaw => format!("https://github.com/{}.git", self.repo_path),
            Forge::GitHub | Forge::GitLab | Forge::Gitea | Forge::Bitbucket => {
                format!("{}/{}.git", self.base, self.repo_path)
            }
            Forge::HuggingFace => format!("{}/{}", self.base, self.repo_path),
            Forge::Local => format!("file://{}", self.repo_path),
        }
    }

    /// The repository's web address (`https://github.com/OWNER/REPO`), the form
    /// pin files keep in `repository`.
    pub fn repository_url(&self) -> String {
        match self.forge {
            Forge::Local => self.clone_url(),
            Forge::GitHubRaw => format!("https://github.com/{}", self.repo_path),
            _ => format!("{}/{}", self.base, self.repo_path),
        }
    }

    /// Whether the revision is a full commit id.
    pub fn is_pinned(&self) -> bool {
        matches!(self.revision, Some(Revision::Commit(_)))
    }

    /// The URL as written, without credentials, for messages.
    pub fn redacted(&self) -> String {
        crate::url::redact(&self.raw)
    }

    /// The web page of `path` at `revision` in this URL's repository, anchored at
    /// `line` (reports link each finding to the line it is about).
    /// `None` for a local repository, which has no web page.
    pub fn web_url(&self, revision: &str, path: &str, line: Option<u32>) -> Option<String> {
        page_url(&self.repository_url(), self.forge, revision, path, line)
    }
}

/// Characters a path segment or revision keeps percent-encoded in a web URL.
const SEGMENT: &percent_encoding::AsciiSet = &percent_encoding::CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'%')
    .add(b'<')
    .add(b'>')
    .add(b'?')
    .add(b'`')
    .add(b'{')
    .add(b'}');

/// The web page of a document at a revision, anchored at a line, in each forge's
/// grammar: GitHub `blob/REV/PATH#L12`, GitLab `-/blob/REV/PATH#L12`,
/// Gitea/Codeberg `src/commit/REV/PATH#L12`, Hugging Face `blob/REV/PATH#L12`,
/// Bitbucket `src/REV/PATH#lines-12`.
pub(crate) fn page_url(
    repository: &str,
    forge: Forge,
    revision: &str,
    path: &str,
    line: Option<u32>,
) -> Option<String> {
    let enc = |s: &str| {
        s.split('/')
            .map(|seg| percent_encoding::utf8_percent_encode(seg, SEGMENT).to_string())
            .collect::<Vec<_>>()
            .join("/")
    };
    let repo = crate::url::redact(repository.trim_end_matches('/'));
    let repo = repo.strip_suffix(".git").unwrap_or(&repo);
    let (rev, path) = (enc(revision), enc(path.trim_start_matches('/')));
    let base = match forge {
        Forge::Local => return None,
        Forge::GitHub | Forge::GitHubRaw | Forge::HuggingFace => {
            format!("{repo}/blob/{rev}/{path}")
        }
        Forge::GitLab => format!("{repo}/-/blob/{rev}/{path}"),
        Forge::Gitea => {
            // A full commit id is a commit; a name may be a branch or a tag.
            let kind = if super::CommitId::parse(revision).is_some() {
                "commit"
            } else {
                "branch"
            };
            format!("{repo}/src/{kind}/{rev}/{path}")
        }
        Forge::Bitbucket => format!("{repo}/src/{rev}/{path}"),
    };
    Some(match (line, forge) {
        (Some(l), Forge::Bitbucket) => format!("{base}#lines-{l}"),
        (Some(l), _) => format!("{base}#L{l}"),
        (None, _) => base,
    })
}

/// The web page of a source's document at `revision` (the pin, or a head for
/// drift), anchored at `line`: from its URL, else from its repository.
pub fn source_web_url(
    url: Option<&str>,
    repository: Option<&str>,
    path: Option<&str>,
    revision: &str,
    line: Option<u32>,
) -> Option<String> {
    let parsed = url
        .and_then(|u| parse(u).ok())
        .or_else(|| repository.and_then(parse_repository))?;
    let path = path.map(str::to_string).or_else(|| parsed.path.clone())?;
    parsed.web_url(revision, &path, line)
}

impl FromStr for ForgeUrl {
    type Err = UrlError;
    fn from_str(s: &str) -> Result<Self, UrlError> {
        parse(s)
    }
}

/// Parses a line anchor: `L43`, `L43-L45`, `L43-45` (the `#` already removed).
pub(crate) fn parse_anchor(anchor: &str) -> Option<Lines> {
    let rest = anchor.strip_prefix('L')?;
    let (a, b) = match rest.split_once('-') {
        Some((a, b)) => (a, b.strip_prefix('L').unwrap_or(b)),
        None => (rest, rest),
    };
    // GitHub appends `C5` column anchors in some links (`#L43C5-L43C9`): drop them.
    let num = |s: &str| -> Option<u32> {
        let digits = s.split('C').next()?;
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        digits.parse().ok()
    };
    Lines::new(num(a)?, num(b)?).ok()
}

/// Bitbucket's line anchors: `lines-43`, `lines-43:45`.
fn parse_bitbucket_anchor(anchor: &str) -> Option<Lines> {
    let rest = anchor.strip_prefix("lines-")?;
    let (a, b) = rest.split_once(':').unwrap_or((rest, rest));
    let num = |s: &str| -> Option<u32> {
        (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
            .then(|| s.parse().ok())
            .flatten()
    };
    Lines::new(num(a)?, num(b)?).ok()
}

/// The `url::Url` a record's URL text stands for: `http`, `https` or `file` in
/// any case, or a bare `github.com/OWNER/REPO/…` as records sometimes write it.
fn web_url(raw: &str) -> Result<::url::Url, UrlError> {
    let text = match crate::url::scheme_of(raw) {
        Some(scheme) if matches!(scheme.as_str(), "http" | "https" | "file") => raw.to_string(),
        Some(_) => return Err(UrlError::Scheme(raw.to_string())),
        None => {
            let host = raw.split(['/', '?', '#']).next().unwrap_or("");
            if !host.contains('.') {
                return Err(UrlError::Scheme(raw.to_string()));
            }
            format!("https://{raw}")
        }
    };
    ::url::Url::parse(&text).map_err(|_| UrlError::NoRepository(raw.to_string()))
}

/// Parses a repository or document URL of any forge pinaudit knows, once: the
/// `url` crate splits it, one grammar per forge reads the path.
///
/// Records keep each URL's parse beside it (`record::ParsedUrl`), so the
/// checks of a source ask for it once.
pub fn parse(url: &str) -> Result<ForgeUrl, UrlError> {
    let raw = url.trim();
    let no_repo = || UrlError::NoRepository(raw.to_string());
    let parsed = web_url(raw)?;
    // The fragment as written (the `url` crate re-escapes some characters).
    let fragment = raw
        .split_once('#')
        .map(|(_, f)| f)
        .filter(|f| !f.is_empty());
    let scheme = parsed.scheme().to_string();

    if scheme == "file" {
        return local(raw, &parsed, fragment);
    }

    let host = parsed.host_str().ok_or_else(no_repo)?;
    let host = host.strip_prefix("www.").unwrap_or(host).to_string();
    if host.is_empty() {
        return Err(no_repo());
    }
    // `None` for the scheme's default port, as written or not.
    let port = parsed.port();
    let base = match port {
        Some(p) => format!("{scheme}://{host}:{p}"),
        None => format!("{scheme}://{host}"),
    };
    let segs: Vec<&str> = parsed
        .path_segments()
        .map(|s| s.filter(|s| !s.is_empty()).collect())
        .unwrap_or_default();
    let forge = forge::forge_of(&host, &segs);
    let parts = forge::read(forge, &segs).ok_or_else(no_repo)?;
    let lines = anchor(raw, forge, fragment)?;

    // Repository segments must stay segments once decoded: `%2F` or `..` there
    // would make the clone URL and the cache path name another place.
    let mut repo = Vec::with_capacity(parts.repo.len());
    for seg in parts.repo {
        let decoded = percent_decode(seg);
        if matches!(decoded.as_ref(), "" | "." | "..") || decoded.contains(['/', '\\']) {
            return Err(no_repo());
        }
        repo.push(*seg);
    }
    let repo_path = repo.join("/");
    let repo_path = repo_path
        .strip_suffix(".git")
        .unwrap_or(&repo_path)
        .to_string();
    let path = (!parts.doc.is_empty()).then(|| percent_decode(&parts.doc.join("/")).into_owned());
    Ok(ForgeUrl {
        forge,
        host,
        base,
        repo_path,
        revision: parts.rev.map(|r| Revision::parse(&percent_decode(&r))),
        path,
        lines,
        view: parts.view,
        scheme,
        port,
        raw: raw.to_string(),
    })
}

/// The lines a fragment cites; `None` without a fragment.
fn anchor(raw: &str, forge: Forge, fragment: Option<&str>) -> Result<Option<Lines>, UrlError> {
    let Some(f) = fragment else {
        return Ok(None);
    };
    let lines = parse_anchor(f).or_else(|| {
        (forge == Forge::Bitbucket)
            .then(|| parse_bitbucket_anchor(f))
            .flatten()
    });
    lines.map(Some).ok_or_else(|| UrlError::Anchor {
        url: raw.to_string(),
        anchor: f.to_string(),
    })
}

/// A `file:` URL: the repository is the whole path (a host other than
/// `localhost` is kept in front of it, as it was written).
fn local(raw: &str, parsed: &::url::Url, fragment: Option<&str>) -> Result<ForgeUrl, UrlError> {
    let lines = anchor(raw, Forge::Local, fragment)?;
    let path = percent_decode(parsed.path());
    if path.is_empty() || path == "/" {
        return Err(UrlError::NoRepository(raw.to_string()));
    }
    let repo_path = match parsed.host_str() {
        Some(host) if !host.is_empty() => format!("{host}{path}"),
        _ => path.into_owned(),
    };
    Ok(ForgeUrl {
        forge: Forge::Local,
        host: String::new(),
        base: "file://".to_string(),
        repo_path,
        revision: None,
        path: None,
        lines,
        view: None,
        scheme: "file".to_string(),
        port: None,
        raw: raw.to_string(),
    })
}

/// Parses a source's `repository` field: a repository URL, or `OWNER/REPO`, which
/// records often write for GitHub.
pub fn parse_repository(r: &str) -> Option<ForgeUrl> {
    parse(r).ok().or_else(|| {
        let parts: Vec<&str> = r.trim().split('/').collect();
        let plain = parts.len() == 2
            && parts
                .iter()
                .all(|p| !p.is_empty() && *p != "." && *p != ".." && !p.contains(':'));
        plain.then(|| parse(&format!("https://github.com/{}", r.trim())).ok())?
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn web_urls_follow_each_forge() {
        let at = |u: &str| {
            parse(u)
                .unwrap()
                .web_url(SHA, "docs/a b.md", Some(12))
                .unwrap()
        };
        assert_eq!(
            at("https://github.com/o/r"),
            format!("https://github.com/o/r/blob/{SHA}/docs/a%20b.md#L12")
        );
        assert_eq!(
            at("https://raw.githubusercontent.com/o/r/main/x.md"),
            format!("https://github.com/o/r/blob/{SHA}/docs/a%20b.md#L12")
        );
        assert_eq!(
            at("https://gitlab.com/g/p"),
            format!("https://gitlab.com/g/p/-/blob/{SHA}/docs/a%20b.md#L12")
        );
        assert_eq!(
            at("https://codeberg.org/o/r"),
            format!("https://codeberg.org/o/r/src/commit/{SHA}/docs/a%20b.md#L12")
        );
        assert_eq!(
            at("https://huggingface.co/datasets/o/n"),
            format!("https://huggingface.co/datasets/o/n/blob/{SHA}/docs/a%20b.md#L12")
        );
        assert_eq!(
            source_web_url(None, Some("o/r"), Some("README.md"), "main", None).unwrap(),
            "https://github.com/o/r/blob/main/README.md"
        );
    }

    const SHA: &str = "de1fa14ea798512f54dafc8b8795eb3ef1a6c367";

    fn lines(a: u32, b: u32) -> Option<Lines> {
        Some(Lines::new(a, b).unwrap())
    }

    #[test]
    fn github_blob_with_anchor() {
        let u = parse(&format!(
            "https://github.com/chishiki37/kimi/blob/{SHA}/README.md#L43"
        ))
        .unwrap();
        assert_eq!(u.forge, Forge::GitHub);
        assert_eq!(u.repo_path, "chishiki37/kimi");
        assert_eq!(u.path.as_deref(), Some("README.md"));
        assert_eq!(u.lines, lines(43, 43));
        assert!(u.is_pinned());
        assert_eq!(u.clone_url(), "https://github.com/chishiki37/kimi.git");
    }

    #[test]
    fn anchors() {
        assert_eq!(parse_anchor("L43"), lines(43, 43));
        assert_eq!(parse_anchor("L43-L45"), lines(43, 45));
        assert_eq!(parse_anchor("L43-45"), lines(43, 45));
        assert_eq!(parse_anchor("L43C2-L45C9"), lines(43, 45));
        assert_eq!(parse_anchor("L45-L43"), None);
        assert_eq!(parse_anchor("L0"), None);
        assert_eq!(parse_anchor("L-3"), None);
        assert_eq!(parse_anchor("readme"), None);
        assert_eq!(parse_anchor("L99999999999999"), None);
    }

    #[test]
    fn unknown_anchor_is_an_error() {
        let e = parse("https://github.com/o/r/blob/main/README.md#usage").unwrap_err();
        assert!(matches!(e, UrlError::Anchor { .. }));
    }

    #[test]
    fn branch_is_not_pinned() {
        let u = parse("https://github.com/o/r/blob/main/docs/a.md#L1").unwrap();
        assert!(!u.is_pinned());
        assert_eq!(u.revision, Some(Revision::Ref("main".into())));
        assert_eq!(u.path.as_deref(), Some("docs/a.md"));
        // A short id is not a pin either.
        assert!(!parse("https://github.com/o/r/blob/de1fa14/a.md")
            .unwrap()
            .is_pinned());
    }

    #[test]
    fn github_raw_and_tree() {
        let u = parse(&format!("https://github.com/o/r/raw/{SHA}/a%20b.json")).unwrap();
        assert_eq!(u.path.as_deref(), Some("a b.json"));
        let u = parse(&format!("https://github.com/o/r/tree/{SHA}/bench")).unwrap();
        assert!(u.is_pinned());
        let u = parse(&format!(
            "https://raw.githubusercontent.com/o/r/{SHA}/x/y.md"
        ))
        .unwrap();
        assert_eq!(u.forge, Forge::GitHubRaw);
        assert_eq!(u.clone_url(), "https://github.com/o/r.git");
        assert_eq!(u.path.as_deref(), Some("x/y.md"));
        let u = parse("https://raw.githubusercontent.com/o/r/refs/heads/main/x.md").unwrap();
        assert_eq!(u.revision, Some(Revision::Ref("refs/heads/main".into())));
        assert_eq!(u.path.as_deref(), Some("x.md"));
    }

    #[test]
    fn gitlab_nested_groups() {
        let u = parse(&format!(
            "https://gitlab.com/group/sub/proj/-/blob/{SHA}/docs/r.md?ref_type=heads#L3-5"
        ))
        .unwrap();
        assert_eq!(u.forge, Forge::GitLab);
        assert_eq!(u.repo_path, "group/sub/proj");
        assert_eq!(u.path.as_deref(), Some("docs/r.md"));
        assert_eq!(u.lines, lines(3, 5));
        assert_eq!(u.clone_url(), "https://gitlab.com/group/sub/proj.git");
    }

    #[test]
    fn hugging_face() {
        let u = parse(&format!(
            "https://huggingface.co/org/model/blob/{SHA}/README.md#L7"
        ))
        .unwrap();
        assert_eq!(u.forge, Forge::HuggingFace);
        assert_eq!(u.clone_url(), "https://huggingface.co/org/model");
        let u = parse(&format!(
            "https://huggingface.co/datasets/org/ds/resolve/{SHA}/data.csv"
        ))
        .unwrap();
        assert_eq!(u.repo_path, "datasets/org/ds");
        assert_eq!(u.path.as_deref(), Some("data.csv"));
        assert!(u.is_pinned());
    }

    #[test]
    fn gitea_codeberg() {
        let u = parse(&format!(
            "https://codeberg.org/o/r/src/commit/{SHA}/README.md#L2"
        ))
        .unwrap();
        assert_eq!(u.forge, Forge::Gitea);
        assert_eq!(u.clone_url(), "https://codeberg.org/o/r.git");
        assert!(u.is_pinned());
        let u = parse("https://codeberg.org/o/r/src/branch/main/README.md").unwrap();
        assert!(!u.is_pinned());
    }

    /// Review: forge URLs lost their scheme and port, so a self-hosted forge on
    /// plain http or a non-default port was cloned from the wrong place.
    #[test]
    fn self_hosted_forges_keep_scheme_and_port() {
        let u = parse(&format!(
            "http://git.example:3000/o/r/src/commit/{SHA}/README.md#L2"
        ))
        .unwrap();
        assert_eq!(u.forge, Forge::Gitea);
        assert_eq!(u.host, "git.example");
        assert_eq!(u.base, "http://git.example:3000");
        assert_eq!(u.clone_url(), "http://git.example:3000/o/r.git");
        assert!(u.is_pinned());

        let u = parse(&format!("https://gitlab.example:8443/g/p/-/blob/{SHA}/x")).unwrap();
        assert_eq!(u.forge, Forge::GitLab);
        assert_eq!(u.host, "gitlab.example");
        assert_eq!(u.clone_url(), "https://gitlab.example:8443/g/p.git");

        // GitHub Enterprise-style URLs on a self-hosted host.
        let u = parse(&format!("http://ghe.example:8080/o/r/blob/{SHA}/a.md")).unwrap();
        assert_eq!(u.forge, Forge::GitHub);
        assert_eq!(u.clone_url(), "http://ghe.example:8080/o/r.git");

        // Plain http without a port stays http.
        let u = parse("http://git.example/o/r").unwrap();
        assert_eq!(u.clone_url(), "http://git.example/o/r.git");
    }

    #[test]
    fn base_drops_userinfo_and_default_ports() {
        let u = parse("https://user:secret@git.example:8443/o/r/blob/main/a.md").unwrap();
        assert_eq!(u.host, "git.example");
        assert_eq!(u.base, "https://git.example:8443");
        assert!(!u.clone_url().contains("secret"));
        assert_eq!(
            parse("https://github.com:443/o/r").unwrap().clone_url(),
            "https://github.com/o/r.git"
        );
        assert_eq!(
            parse("http://git.example:80/o/r").unwrap().clone_url(),
            "http://git.example/o/r.git"
        );
        // An empty port is the default one.
        assert_eq!(
            parse("https://github.com:/o/r").unwrap().base,
            "https://github.com"
        );
        // `http` on port 443 is not https's default.
        assert_eq!(
            parse("http://git.example:443/o/r").unwrap().base,
            "http://git.example:443"
        );
        let u = parse("http://[::1]:3000/o/r/src/branch/main/a.md").unwrap();
        assert_eq!(u.host, "[::1]");
        assert_eq!(u.clone_url(), "http://[::1]:3000/o/r.git");
        assert!(parse("https://git.example:http/o/r").is_err());
        assert!(parse("https://git.example:70000/o/r").is_err());
        assert!(parse("https://[::1/o/r").is_err());
    }

    #[test]
    fn bare_hosts_are_https_and_raw_github_is_github() {
        let u = parse(&format!("github.com/o/r/blob/{SHA}/README.md#L4")).unwrap();
        assert_eq!(u.base, "https://github.com");
        assert_eq!(u.clone_url(), "https://github.com/o/r.git");
        // raw.githubusercontent.com serves github.com's repositories, whatever the
        // scheme or port the raw URL was written with.
        let u = parse(&format!(
            "http://raw.githubusercontent.com:80/o/r/{SHA}/x.md"
        ))
        .unwrap();
        assert_eq!(u.forge, Forge::GitHubRaw);
        assert_eq!(u.clone_url(), "https://github.com/o/r.git");
        let u = parse("https://www.github.com/o/r").unwrap();
        assert_eq!(u.base, "https://github.com");
    }

    #[test]
    fn repository_urls_and_junk() {
        let u = parse("https://github.com/o/r").unwrap();
        assert_eq!(u.revision, None);
        assert_eq!(u.clone_url(), "https://github.com/o/r.git");
        let u = parse("https://user:secret@github.com/o/r.git").unwrap();
        assert_eq!(u.host, "github.com");
        assert_eq!(u.repo_path, "o/r");
        assert!(parse("ftp://x/y").is_err());
        assert!(parse("https://github.com/onlyowner").is_err());
        assert!(parse("").is_err());
        assert!(parse("not a url").is_err());
        assert!(parse("https://github.com/../..").is_err());
        assert!(parse("%%%").is_err());
        assert_eq!(percent_decode("a%2"), "a%2");
        assert_eq!(percent_decode("%"), "%");
    }

    /// `FORGE CLONE_URL REV PATH LINES PINNED` for a URL (`-` for none).
    fn describe(url: &str) -> String {
        match parse(url) {
            Err(e) => format!("error: {e}"),
            Ok(u) => format!(
                "{:?} {} {} {} {} {}",
                u.forge,
                u.clone_url(),
                match &u.revision {
                    Some(Revision::Commit(c)) => c.short().to_string(),
                    Some(Revision::Ref(r)) => r.clone(),
                    None => "-".into(),
                },
                u.path.as_deref().unwrap_or("-"),
                u.lines.map_or("-".into(), |l| l.to_string()),
                if u.is_pinned() { "pinned" } else { "unpinned" },
            ),
        }
    }

    #[test]
    fn every_forge_end_to_end() {
        let sha256 = "a".repeat(64);
        let cases = [
            (
                format!("https://github.com/o/r/blob/{SHA}/docs/a.md#L43-L45"),
                "GitHub https://github.com/o/r.git de1fa14 docs/a.md L43-L45 pinned",
            ),
            (
                format!("HTTPS://GitHub.COM/o/r/blob/{SHA}/a.md#L4"),
                "GitHub https://github.com/o/r.git de1fa14 a.md L4 pinned",
            ),
            (
                format!("https://github.com/o/r/blob/{sha256}/a.md"),
                "GitHub https://github.com/o/r.git aaaaaaa a.md - pinned",
            ),
            (
                format!("https://github.com/o/r/blob/{}/a.md", &SHA[..39]),
                "GitHub https://github.com/o/r.git de1fa14ea798512f54dafc8b8795eb3ef1a6c36 a.md - unpinned",
            ),
            (
                "https://raw.githubusercontent.com/o/r/refs/tags/v1/x.md".into(),
                "GitHubRaw https://github.com/o/r.git refs/tags/v1 x.md - unpinned",
            ),
            (
                format!("https://gitlab.com/g/s/p/-/raw/{SHA}/a%20b.csv#L2-3"),
                "GitLab https://gitlab.com/g/s/p.git de1fa14 a b.csv L2-L3 pinned",
            ),
            (
                format!("https://huggingface.co/spaces/o/app/blob/{SHA}/app.py#L9"),
                "HuggingFace https://huggingface.co/spaces/o/app de1fa14 app.py L9 pinned",
            ),
            (
                "https://huggingface.co/o/m/resolve/refs%2Fpr%2F3/config.json".into(),
                "HuggingFace https://huggingface.co/o/m refs/pr/3 config.json - unpinned",
            ),
            (
                format!("https://huggingface.co/gpt2/blob/{SHA}/README.md"),
                "HuggingFace https://huggingface.co/gpt2 de1fa14 README.md - pinned",
            ),
            (
                format!("https://codeberg.org/o/r/raw/commit/{SHA}/a.json"),
                "Gitea https://codeberg.org/o/r.git de1fa14 a.json - pinned",
            ),
            (
                format!("https://bitbucket.org/o/r/src/{SHA}/docs/a.md#lines-7:9"),
                "Bitbucket https://bitbucket.org/o/r.git de1fa14 docs/a.md L7-L9 pinned",
            ),
            (
                format!("https://bitbucket.org/o/r/raw/{SHA}/a.md#lines-7"),
                "Bitbucket https://bitbucket.org/o/r.git de1fa14 a.md L7 pinned",
            ),
            (
                "https://bitbucket.org/o/r/src/main/a.md#L3".into(),
                "Bitbucket https://bitbucket.org/o/r.git main a.md L3 unpinned",
            ),
            (
                "FILE:///srv/repos/a.git".into(),
                "Local file:///srv/repos/a.git - - - unpinned",
            ),
            (
                "file:///srv/my%20repo#L2".into(),
                "Local file:///srv/my repo - - L2 unpinned",
            ),
            // Elsewhere `#lines-7` is no anchor pinaudit knows.
            (
                "https://github.com/o/r/blob/main/a.md#lines-7".into(),
                "error: `https://github.com/o/r/blob/main/a.md#lines-7` has a line anchor pinaudit does not understand: `#lines-7` (expected `#L43`, `#L43-L45` or `#L43-45`)",
            ),
            // A repository segment that decodes to a path is no repository.
            (
                "https://github.com/o/r%2F..%2F..%2Fx".into(),
                "error: `https://github.com/o/r%2F..%2F..%2Fx` does not name a repository (expected HOST/OWNER/REPO)",
            ),
            (
                "https://github.com/%2e%2e/r".into(),
                "error: `https://github.com/%2e%2e/r` does not name a repository (expected HOST/OWNER/REPO)",
            ),
            (
                "ssh://git@github.com/o/r".into(),
                "error: `ssh://git@github.com/o/r` is not an http(s) or file URL",
            ),
            (
                "file://".into(),
                "error: `file://` does not name a repository (expected HOST/OWNER/REPO)",
            ),
        ];
        for (url, want) in &cases {
            assert_eq!(describe(url), *want, "{url}");
        }
    }

    #[test]
    fn parsed_once_with_raw_text_scheme_port_and_view() {
        let raw =
            format!("  http://tok:s3cret@git.example:3000/o/r/src/commit/{SHA}/a.md?token=t#L2 ");
        let u: ForgeUrl = raw.parse().unwrap();
        assert_eq!(u.raw, raw.trim());
        assert_eq!(u.scheme, "http");
        assert_eq!(u.port, Some(3000));
        assert_eq!(u.view, Some(View::Blob));
        assert_eq!(u.base, "http://git.example:3000");
        let shown = u.redacted();
        assert!(
            !shown.contains("s3cret") && !shown.contains("token=t"),
            "{shown}"
        );
        assert_eq!(u.repository_url(), "http://git.example:3000/o/r");
        let u = parse("https://raw.githubusercontent.com/o/r/main/a.md").unwrap();
        assert_eq!(u.repository_url(), "https://github.com/o/r");
        assert_eq!(u.view, Some(View::Raw));
        assert_eq!(parse("https://github.com/o/r").unwrap().view, None);
    }
}
