//! The form a URL is compared in by checks.
//!
//! Two spellings of one place must compare equal, and a spelling that climbs out
//! of a directory must be seen to: `FILE:///srv/m/o/%2e%2e/%2E%2E/etc` is
//! `/srv/etc`, because libgit2 percent-decodes `file:` URLs before it opens them.
//! This is lexical only: no file system access, no symlinks resolved.

use std::fmt;

use super::remote::{Remote, RemoteForm};

/// A URL or path in comparable form. Build it with [`normalize`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Normalized {
    /// Lowercase scheme; `file` for paths and `file:` URLs, `ssh` for scp-like.
    pub(crate) scheme: String,
    /// Lowercase host without userinfo; `None` for local addresses.
    pub(crate) host: Option<String>,
    /// The port when one is written and is not the scheme's default.
    pub(crate) port: Option<u16>,
    /// Whether the path starts at a root (`/srv/…`) rather than a relative one.
    pub(crate) absolute: bool,
    /// Path segments, percent-decoded once, with `.`, `..` and empty ones
    /// resolved; a relative path keeps the `..` it cannot resolve.
    pub(crate) segments: Vec<String>,
}

/// `addr` in comparable form: lowercase scheme and host, userinfo and default
/// port dropped, query and fragment dropped (except in `file:` URLs and paths,
/// where `?` and `#` are file name characters to git), path percent-decoded
/// once and its dot segments resolved.
pub fn normalize(addr: &str) -> Normalized {
    let remote = Remote::parse(addr.trim());
    let local = remote.is_local();
    let scheme = match remote.form {
        RemoteForm::Url => remote.scheme.clone().unwrap_or_default(),
        RemoteForm::Scp => "ssh".to_string(),
        RemoteForm::Path => "file".to_string(),
    };
    let authority = remote.authority();
    let default_port = match scheme.as_str() {
        "http" => Some(80),
        "https" => Some(443),
        "git" => Some(9418),
        "ssh" => Some(22),
        _ => None,
    };
    let port = authority
        .as_ref()
        .and_then(|a| a.port)
        .filter(|p| Some(*p) != default_port);
    let host = authority.map(|a| a.host).filter(|h| !h.is_empty());
    let mut path = remote.path;
    if !local {
        path = path.split(['?', '#']).next().unwrap_or("");
    }
    let decoded = super::percent_decode(path);
    // A URL's path is absolute once it has an authority; scp-like paths are
    // relative to the login directory unless they start with `/`.
    let absolute = decoded.starts_with('/') || remote.form == RemoteForm::Url && !local;
    let mut segments: Vec<String> = Vec::new();
    for segment in decoded.split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                if segments.last().is_some_and(|s| s != "..") {
                    segments.pop();
                } else if !absolute {
                    segments.push("..".into());
                }
                // `..` at an absolute root stays at the root, as in a file system.
            }
            s => segments.push(s.to_string()),
        }
    }
    Normalized {
        scheme,
        host,
        port,
        absolute,
        segments,
    }
}

impl Normalized {
    /// Whether `self` is `root` or lies below it, segment by segment
    /// (`/srv/mirror-evil` is not under `/srv/mirror`).
    pub fn is_within(&self, root: &Normalized) -> bool {
        self.scheme == root.scheme
            && self.host == root.host
            && self.port == root.port
            && self.absolute == root.absolute
            && self.segments.len() >= root.segments.len()
            && self
                .segments
                .iter()
                .zip(&root.segments)
                .all(|(a, b)| a == b)
    }

    /// Whether this is an address on this machine.
    pub fn is_local(&self) -> bool {
        self.scheme == "file"
    }
}

impl fmt::Display for Normalized {
    /// `scheme://host[:port]/seg/…` (`file:///srv/…` for local ones); a relative
    /// path is written without scheme.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = self.segments.join("/");
        if self.is_local() && !self.absolute {
            return f.write_str(&path);
        }
        write!(f, "{}://", self.scheme)?;
        if let Some(host) = &self.host {
            f.write_str(host)?;
        }
        if let Some(port) = self.port {
            write!(f, ":{port}")?;
        }
        // An scp-like path relative to the login directory is shown after a `/`
        // too; `absolute` keeps the difference for comparisons.
        if self.absolute || self.host.is_some() {
            f.write_str("/")?;
        }
        f.write_str(&path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normal_forms() {
        let cases = [
            (
                "HTTPS://GitHub.COM:443/o/r.git",
                "https://github.com/o/r.git",
            ),
            ("https://u:p@h:8443/a/./b/../c?x=1#y", "https://h:8443/a/c"),
            ("https://h/a%2Fb/%2e%2e/c", "https://h/a/c"),
            ("https://h/../../x", "https://h/x"),
            ("git://127.0.0.1:9418/x", "git://127.0.0.1/x"),
            ("FILE:///srv/m/o/%2e%2e/%2E%2E/etc", "file:///srv/etc"),
            ("file:///srv/m/a%3Fb", "file:///srv/m/a?b"),
            ("/srv//m/./x/", "file:///srv/m/x"),
            ("/../..", "file:///"),
            ("../m/../../x", "../../x"),
            ("./m/x", "m/x"),
            ("git@GitHub.com:o/r.git", "ssh://github.com/o/r.git"),
        ];
        for (input, want) in cases {
            assert_eq!(normalize(input).to_string(), want, "{input}");
        }
    }

    #[test]
    fn containment_is_by_segment() {
        let root = normalize("file:///srv/mirror/");
        for inside in [
            "file:///srv/mirror/o/r.git",
            "FILE:///srv/mirror/o/r.git",
            "/srv/mirror/o/r.git",
            "/srv/mirror",
            "file:///srv/mirror/o/../r.git",
        ] {
            assert!(normalize(inside).is_within(&root), "{inside}");
        }
        for outside in [
            "file:///srv/mirror-evil/r.git",
            "file:///srv/mirror/../etc/passwd",
            "file:///srv/mirror/%2e%2e/%2e%2e/etc",
            "file:///srv/mirror/o/..%2F..%2F..%2Fetc",
            "file:///srv",
            "https://srv/mirror/x",
            "mirror/x",
        ] {
            assert!(!normalize(outside).is_within(&root), "{outside}");
        }
        let relative = normalize("../mirror/");
        assert!(normalize("../mirror/o/r").is_within(&relative));
        assert!(!normalize("../mirror/../../x").is_within(&relative));
    }
}
