//! Forge URLs: where a cited document lives, at which revision, on which lines.
//!
//! Records cite documents by the URL a reader clicks (`…/blob/<rev>/README.md#L43`).
//! Link checkers drop the `#L43` and never look at the revision; pinaudit needs
//! both, plus the clone URL that holds the revision. Each forge writes these URLs
//! its own way (DESIGN.md, "URLs"); this module knows them all and nothing else.

use std::fmt;

use super::{Lines, Revision};

/// Which forge's URL grammar a URL follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Forge {
    /// github.com and GitHub-style hosts (`/blob/`, `/raw/`, `/tree/`).
    GitHub,
    /// raw.githubusercontent.com.
    GitHubRaw,
    /// GitLab (`/-/blob/`, `/-/raw/`, `/-/tree/`), any host.
    GitLab,
    /// huggingface.co (`/blob/`, `/resolve/`, `/tree/`), models, datasets and spaces.
    HuggingFace,
    /// Gitea and Codeberg (`/src/commit/`, `/src/branch/`, `/src/tag/`, `/raw/commit/`).
    Gitea,
    /// A `file:` URL (only with `--allow-local`).
    Local,
}

/// A parsed document URL.
#[derive(Debug, Clone, PartialEq)]
pub struct ForgeUrl {
    pub forge: Forge,
    /// Host without userinfo or port.
    pub host: String,
    /// `scheme://host[:port]` as the URL reaches the forge: `http` or `https` as
    /// written (`https` for a bare `github.com/…`), any port but the scheme's
    /// default, never the userinfo. A self-hosted Gitea on `http://git.example:3000`
    /// is cloned from there, not from `https://git.example`. `file://` for
    /// [`Forge::Local`].
    pub base: String,
    /// Repository path on the host: `OWNER/REPO`, `GROUP/SUB/REPO`, `datasets/OWNER/REPO`.
    pub repo_path: String,
    pub revision: Option<Revision>,
    /// Document path inside the repository, percent-decoded.
    pub path: Option<String>,
    pub lines: Option<Lines>,
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
            Forge::GitHub | Forge::GitLab | Forge::Gitea => {
                format!("{}/{}.git", self.base, self.repo_path)
            }
            Forge::HuggingFace => format!("{}/{}", self.base, self.repo_path),
            Forge::Local => format!("file://{}", self.repo_path),
        }
    }

    /// Whether the revision is a full commit id.
    pub fn is_pinned(&self) -> bool {
        matches!(self.revision, Some(Revision::Commit(_)))
    }
}

impl fmt::Display for Forge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Forge::GitHub => "GitHub",
            Forge::GitHubRaw => "GitHub raw",
            Forge::GitLab => "GitLab",
            Forge::HuggingFace => "Hugging Face",
            Forge::Gitea => "Gitea",
            Forge::Local => "local",
        })
    }
}

/// Parses a line anchor: `L43`, `L43-L45`, `L43-45` (the `#` already removed).
pub fn parse_anchor(anchor: &str) -> Option<Lines> {
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

/// Parses a repository or document URL of any forge pinaudit knows.
pub fn parse(url: &str) -> Result<ForgeUrl, UrlError> {
    let url = url.trim();
    let (without_fragment, fragment) = match url.split_once('#') {
        Some((u, f)) => (u, Some(f)),
        None => (url, None),
    };
    let without_query = without_fragment.split('?').next().unwrap_or("");
    let lines = match fragment {
        Some(f) if !f.is_empty() => Some(parse_anchor(f).ok_or_else(|| UrlError::Anchor {
            url: url.to_string(),
            anchor: f.to_string(),
        })?),
        _ => None,
    };

    if let Some(path) = without_query.strip_prefix("file://") {
        let path = percent_decode(path);
        if path.is_empty() {
            return Err(UrlError::NoRepository(url.to_string()));
        }
        return Ok(ForgeUrl {
            forge: Forge::Local,
            host: String::new(),
            base: "file://".to_string(),
            repo_path: path,
            revision: None,
            path: None,
            lines,
        });
    }

    let (scheme, rest) = if let Some(rest) = without_query.strip_prefix("https://") {
        ("https", rest)
    } else if let Some(rest) = without_query.strip_prefix("http://") {
        ("http", rest)
    } else {
        // Bare `github.com/OWNER/REPO/…` as records sometimes write it.
        let host = without_query.split('/').next().unwrap_or("");
        if !host.contains('.') {
            return Err(UrlError::Scheme(url.to_string()));
        }
        ("https", without_query)
    };

    let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
    let no_repo = || UrlError::NoRepository(url.to_string());
    let (host, port) = split_host_port(authority).ok_or_else(no_repo)?;
    let host = host.to_ascii_lowercase();
    let host = host.strip_prefix("www.").unwrap_or(&host).to_string();
    if host.is_empty() {
        return Err(no_repo());
    }
    let default_port = if scheme == "https" { 443 } else { 80 };
    let base = match port {
        Some(p) if p != default_port => format!("{scheme}://{host}:{p}"),
        _ => format!("{scheme}://{host}"),
    };
    let segs: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();

    let make =
        |forge, repo: &[&str], rev: Option<&str>, doc: &[&str]| -> Result<ForgeUrl, UrlError> {
            if repo.len() < 2 || repo.iter().any(|s| *s == "." || *s == "..") {
                return Err(no_repo());
            }
            let repo_path = repo.join("/");
            let repo_path = repo_path
                .strip_suffix(".git")
                .unwrap_or(&repo_path)
                .to_string();
            let doc = (!doc.is_empty()).then(|| percent_decode(&doc.join("/")));
            Ok(ForgeUrl {
                forge,
                host: host.clone(),
                base: base.clone(),
                repo_path,
                revision: rev.map(|r| Revision::parse(&percent_decode(r))),
                path: doc,
                lines,
            })
        };

    if host == "raw.githubusercontent.com" {
        // OWNER/REPO/REV/PATH, or OWNER/REPO/refs/heads/BRANCH/PATH.
        if segs.len() < 3 {
            return Err(no_repo());
        }
        let (rev, doc): (String, &[&str]) =
            if segs[2] == "refs" && segs.len() >= 5 && (segs[3] == "heads" || segs[3] == "tags") {
                (format!("refs/{}/{}", segs[3], segs[4]), &segs[5..])
            } else {
                (segs[2].to_string(), &segs[3..])
            };
        return make(Forge::GitHubRaw, &segs[..2], Some(&rev), doc);
    }

    // GitLab: everything before `/-/` is the (possibly nested) project path.
    if let Some(dash) = segs.iter().position(|s| *s == "-") {
        let kind = segs.get(dash + 1).copied();
        if matches!(kind, Some("blob" | "raw" | "tree" | "commit")) {
            let rev = segs.get(dash + 2).copied();
            let doc = segs.get(dash + 3..).unwrap_or(&[]);
            return make(Forge::GitLab, &segs[..dash], rev, doc);
        }
        return make(Forge::GitLab, &segs[..dash], None, &[]);
    }

    if host == "huggingface.co" || host == "hf.co" {
        let repo_len = if matches!(segs.first(), Some(&("datasets" | "spaces"))) {
            3
        } else {
            2
        };
        if segs.len() < repo_len {
            return Err(no_repo());
        }
        return match segs.get(repo_len).copied() {
            Some("blob" | "resolve" | "tree" | "raw") => make(
                Forge::HuggingFace,
                &segs[..repo_len],
                segs.get(repo_len + 1).copied(),
                segs.get(repo_len + 2..).unwrap_or(&[]),
            ),
            _ => make(Forge::HuggingFace, &segs[..repo_len], None, &[]),
        };
    }

    // Gitea / Codeberg: OWNER/REPO/src/{commit,branch,tag}/REV/PATH (also raw/…).
    if segs.len() >= 5 && matches!(segs[2], "src" | "raw") {
        if let "commit" | "branch" | "tag" = segs[3] {
            return make(Forge::Gitea, &segs[..2], Some(segs[4]), &segs[5..]);
        }
    }

    if segs.len() < 2 {
        return Err(no_repo());
    }
    let forge = if host == "codeberg.org" {
        Forge::Gitea
    } else if host.contains("gitlab") {
        Forge::GitLab
    } else {
        Forge::GitHub
    };
    match segs.get(2).copied() {
        Some("blob" | "raw" | "tree" | "commit" | "blame") => make(
            forge,
            &segs[..2],
            segs.get(3).copied(),
            segs.get(4..).unwrap_or(&[]),
        ),
        _ => make(forge, &segs[..2], None, &[]),
    }
}

/// Splits an authority (`user:secret@host:port`, `[::1]:8080`) into its host and
/// port, dropping the userinfo. `None` when the port is not a port number.
fn split_host_port(authority: &str) -> Option<(&str, Option<u16>)> {
    let host_port = authority.rsplit('@').next().unwrap_or(authority);
    let (host, port) = match host_port.strip_prefix('[') {
        // An IPv6 literal keeps its brackets, as URLs write it.
        Some(inner) => {
            let end = inner.find(']')? + 2;
            match &host_port[end..] {
                "" => (&host_port[..end], ""),
                rest => (&host_port[..end], rest.strip_prefix(':')?),
            }
        }
        None => host_port.split_once(':').unwrap_or((host_port, "")),
    };
    // `host:` means the default port, as in browsers.
    if port.is_empty() {
        return Some((host, None));
    }
    Some((host, Some(port.parse().ok()?)))
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

/// Decodes `%XX` escapes; invalid escapes are kept as written.
fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok();
            if let Some(b) = hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                out.push(b);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
