//! A git remote as git reads it, and the one authority parser.
//!
//! git accepts three spellings of a remote (git-clone(1), "GIT URLS"):
//! `scheme://[user@]host[:port]/path`, the scp-like `[user@]host:path` (a colon
//! before any slash), and a local path. Which one a string is decides whether
//! `--allow-local` is needed, where the cache entry lives and what `redact` must
//! remove, so it is decided here once.

/// Which of git's spellings a remote uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RemoteForm {
    /// `scheme://authority/path` (and `file:` in any spelling).
    Url,
    /// scp-like `[user@]host:path`; git reaches it over ssh.
    Scp,
    /// A path on this machine.
    Path,
}

/// A remote address split into its parts, borrowing from the text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Remote<'a> {
    pub(crate) form: RemoteForm,
    /// Lowercase scheme of a [`RemoteForm::Url`]: `https`, `git`, `file`, ….
    pub(crate) scheme: Option<String>,
    /// The authority as written (userinfo and port still in): `user@host:8443`
    /// for a URL, `git@host` for scp-like. `None` for `file:` URLs and paths.
    pub(crate) authority: Option<&'a str>,
    /// Everything after the authority (query and fragment included).
    pub(crate) path: &'a str,
}

impl<'a> Remote<'a> {
    /// Splits `addr`; never fails (anything that is not a URL or scp-like is a path).
    pub fn parse(addr: &'a str) -> Remote<'a> {
        if let Some((scheme, rest)) = addr.split_once("://") {
            if super::is_scheme(scheme) {
                let scheme = scheme.to_ascii_lowercase();
                let end = rest.find('/').unwrap_or(rest.len());
                let (authority, path) = rest.split_at(end);
                let authority = (scheme != "file").then_some(authority);
                return Remote {
                    form: RemoteForm::Url,
                    scheme: Some(scheme),
                    authority,
                    path,
                };
            }
        }
        // `file:/srv/x` without the slashes: a file URL to us, whatever the case.
        if let Some(path) = addr
            .get(..5)
            .filter(|p| p.eq_ignore_ascii_case("file:"))
            .and_then(|_| addr.get(5..))
        {
            return Remote {
                form: RemoteForm::Url,
                scheme: Some("file".into()),
                authority: None,
                path,
            };
        }
        if let Some(colon) = scp_colon(addr) {
            return Remote {
                form: RemoteForm::Scp,
                scheme: None,
                authority: Some(&addr[..colon]),
                path: &addr[colon + 1..],
            };
        }
        Remote {
            form: RemoteForm::Path,
            scheme: None,
            authority: None,
            path: addr,
        }
    }

    /// The authority, parsed; `None` without one or when its port is not a number.
    pub fn authority(&self) -> Option<Authority> {
        self.authority.and_then(Authority::parse)
    }

    /// The host (lowercase, without userinfo or port), if there is one.
    pub fn host(&self) -> Option<String> {
        self.authority().map(|a| a.host).filter(|h| !h.is_empty())
    }

    /// Whether git would read this remote from this machine's file system.
    pub fn is_local(&self) -> bool {
        self.form == RemoteForm::Path || self.scheme.as_deref() == Some("file")
    }
}

/// The colon that makes `addr` scp-like, as git decides it: one before any slash,
/// with a host before it. A userinfo may hold colons (`user:pw@host:o/r`), and so
/// may a host in brackets (`[::1]:o/r`, `git@[::1]:o/r`). A drive letter (`C:\x`, `C:/x`) is a path, not a host named `C`.
fn scp_colon(addr: &str) -> Option<usize> {
    let first_slash = addr.find(['/', '\\']).unwrap_or(addr.len());
    // A userinfo may hold colons (`user:secret@host:path`): look after its `@`.
    let host_start = addr[..first_slash].rfind('@').map_or(0, |at| at + 1);
    let search_from = match addr[host_start..].starts_with('[') {
        true => host_start + addr[host_start..].find(']')?,
        false => host_start,
    };
    let colon = search_from + addr[search_from..].find(':')?;
    let before = &addr[..colon];
    if before.is_empty() || colon > first_slash || before.contains(['/', '\\']) {
        return None;
    }
    let drive = before.len() == 1
        && before.as_bytes()[0].is_ascii_alphabetic()
        && matches!(addr.as_bytes().get(colon + 1), Some(b'\\' | b'/'));
    (!drive).then_some(colon)
}

/// Split a remote address into (authority, path), the authority still holding
/// userinfo and port; it is `None` for local paths and `file:` URLs.
pub fn split_remote(addr: &str) -> (Option<&str>, &str) {
    let r = Remote::parse(addr);
    (r.authority, r.path)
}

/// Whether a fetch URL points at this machine's file system: a `file:` URL (any
/// case) or a path. scp-like `git@host:o/r.git` is remote.
pub fn is_local(addr: &str) -> bool {
    Remote::parse(addr).is_local()
}

/// `[userinfo@]host[:port]`: the one parser of an authority.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Authority {
    /// Everything before the last `@`, as written (may hold a password).
    pub(crate) userinfo: Option<String>,
    /// Lowercase; an IPv6 literal keeps its brackets, as URLs write it.
    pub host: String,
    /// The port when one is written (`host:` means none).
    pub port: Option<u16>,
}

impl Authority {
    /// `None` when the port is not a number or a bracket is unclosed.
    pub fn parse(authority: &str) -> Option<Authority> {
        let (userinfo, host_port) = split_userinfo(authority);
        let (host, port) = match host_port.strip_prefix('[') {
            Some(inner) => {
                let end = inner.find(']')? + 2;
                match &host_port[end..] {
                    "" => (&host_port[..end], ""),
                    rest => (&host_port[..end], rest.strip_prefix(':')?),
                }
            }
            None => host_port.split_once(':').unwrap_or((host_port, "")),
        };
        let port = match port {
            "" => None,
            p if p.bytes().all(|b| b.is_ascii_digit()) => Some(p.parse().ok()?),
            _ => return None,
        };
        Some(Authority {
            userinfo: userinfo.map(str::to_string),
            host: host.to_ascii_lowercase(),
            port,
        })
    }

    /// The user name of the userinfo (`git` of `git@host`), never the password.
    #[cfg(test)]
    pub(crate) fn user(&self) -> Option<&str> {
        let u = self.userinfo.as_deref()?;
        Some(u.split_once(':').map_or(u, |(user, _)| user))
    }

    /// Whether the userinfo carries a password (`user:secret@`).
    #[cfg(test)]
    pub(crate) fn has_password(&self) -> bool {
        self.userinfo.as_deref().is_some_and(|u| u.contains(':'))
    }
}

/// `(userinfo, host[:port])`, split at the last `@` as browsers and git do.
pub fn split_userinfo(authority: &str) -> (Option<&str>, &str) {
    match authority.rfind('@') {
        Some(at) => (Some(&authority[..at]), &authority[at + 1..]),
        None => (None, authority),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `FORM SCHEME AUTHORITY PATH` (`-` for none).
    fn describe(addr: &str) -> String {
        let r = Remote::parse(addr);
        format!(
            "{:?} {} {} {}",
            r.form,
            r.scheme.as_deref().unwrap_or("-"),
            r.authority.unwrap_or("-"),
            if r.path.is_empty() { "-" } else { r.path },
        )
    }

    #[test]
    fn remote_forms() {
        for (addr, want) in [
            (
                "https://github.com/o/r.git",
                "Url https github.com /o/r.git",
            ),
            ("HTTPS://u:p@h:8443/o/r", "Url https u:p@h:8443 /o/r"),
            ("git://127.0.0.1:9418/x", "Url git 127.0.0.1:9418 /x"),
            ("ssh://git@h:22/o/r", "Url ssh git@h:22 /o/r"),
            ("file:///srv/r", "Url file - /srv/r"),
            ("FILE:///srv/r", "Url file - /srv/r"),
            ("File:/srv/r", "Url file - /srv/r"),
            ("git@github.com:o/r.git", "Scp - git@github.com o/r.git"),
            (
                "user:pw@github.com:o/r.git",
                "Scp - user:pw@github.com o/r.git",
            ),
            ("github.com:o/r", "Scp - github.com o/r"),
            ("[::1]:o/r", "Scp - [::1] o/r"),
            ("git@[::1]:o/r", "Scp - git@[::1] o/r"),
            ("/srv/r", "Path - - /srv/r"),
            ("./a:b", "Path - - ./a:b"),
            ("../r", "Path - - ../r"),
            ("dir/a:b", "Path - - dir/a:b"),
            ("C:\\x\\r", "Path - - C:\\x\\r"),
            ("C:/x/r", "Path - - C:/x/r"),
            (":o/r", "Path - - :o/r"),
            ("/srv/x://y", "Path - - /srv/x://y"),
            ("", "Path - - -"),
        ] {
            assert_eq!(describe(addr), want, "{addr}");
        }
    }

    #[test]
    fn local_means_file_scheme_or_path() {
        for addr in [
            "file:///tmp/x",
            "FILE:///tmp/x",
            "/tmp/x",
            "./x",
            "../x",
            "x",
        ] {
            assert!(is_local(addr), "{addr}");
        }
        for addr in [
            "git@github.com:o/r.git",
            "mirror:o/r",
            "git://127.0.0.1:9418/x",
            "https://github.com/o/r.git",
            "ssh://git@h/o/r",
        ] {
            assert!(!is_local(addr), "{addr}");
        }
    }

    #[test]
    fn authorities() {
        // (authority, userinfo, host, port)
        let cases: &[(&str, Option<&str>, &str, Option<u16>)] = &[
            ("github.com", None, "github.com", None),
            ("GitHub.COM:443", None, "github.com", Some(443)),
            ("u:p@h:8443", Some("u:p"), "h", Some(8443)),
            ("a@b:c@h", Some("a@b:c"), "h", None),
            ("h:", None, "h", None),
            ("[::1]:3000", None, "[::1]", Some(3000)),
            ("[::1]", None, "[::1]", None),
            ("git@[fe80::1]", Some("git"), "[fe80::1]", None),
        ];
        for (text, userinfo, host, port) in cases {
            let a = Authority::parse(text).unwrap_or_else(|| panic!("{text}"));
            assert_eq!(a.userinfo.as_deref(), *userinfo, "{text}");
            assert_eq!(a.host, *host, "{text}");
            assert_eq!(a.port, *port, "{text}");
        }
        for bad in ["h:http", "h:70000", "h:+80", "[::1", "[::1]x", "[::1]:x"] {
            assert_eq!(Authority::parse(bad), None, "{bad}");
        }
        let a = Authority::parse("tok:secret@h").unwrap();
        assert_eq!(a.user(), Some("tok"));
        assert!(a.has_password());
        assert!(!Authority::parse("git@h").unwrap().has_password());
    }

    #[test]
    fn hosts() {
        let host = |a: &str| Remote::parse(a).host();
        assert_eq!(
            host("https://u:p@GitHub.com:443/o/r").as_deref(),
            Some("github.com")
        );
        assert_eq!(host("git@github.com:o/r").as_deref(), Some("github.com"));
        assert_eq!(host("ssh://git@[::1]:22/r").as_deref(), Some("[::1]"));
        assert_eq!(host("/srv/r"), None);
        assert_eq!(host("file://h/srv/r"), None);
        assert_eq!(host("https://h:bad/r"), None);
    }
}
