//! Credentials out of everything pinaudit shows.
//!
//! A URL can carry a secret in two places: the userinfo (`https://user:TOKEN@host`)
//! and the query or fragment (`?private_token=…`, `?access_token=…`,
//! `#access_token=…`). Whatever is printed, logged, stored in the cache's config or
//! put in an error goes through [`redact`] (one address) or [`redact_text`] (free
//! text such as a libgit2 message) first.

use super::remote::{split_userinfo, Authority, Remote, RemoteForm};

/// What a secret query value is replaced with.
pub const REDACTED: &str = "REDACTED";

/// Characters that end a URL embedded in free text.
const TEXT_END: &[char] = &['\'', '"', '`', '<', '>', '(', ')', '[', ']', '{', '}'];

/// `addr` without its credentials, for messages and logs.
///
/// `https://x-access-token:abc@github.com/o/r.git` becomes
/// `https://github.com/o/r.git`, and `https://h/o/r?private_token=abc` becomes
/// `https://h/o/r?private_token=REDACTED`. scp-like addresses (`git@host:o/r`) keep
/// a bare user name, which is not a secret, but lose a `user:password@` part.
pub fn redact(addr: &str) -> String {
    let remote = Remote::parse(addr);
    if remote.form == RemoteForm::Url {
        // One address: its userinfo may hold any character a URL allows
        // (`'`, `(`, `)` included), so it is not cut where free text would be.
        if let Some(pos) = addr.find("://") {
            let body = &addr[pos + 3..];
            let end = body.find(char::is_whitespace).unwrap_or(body.len());
            return format!(
                "{}{}{}",
                &addr[..pos + 3],
                redact_after_scheme(&body[..end]),
                &body[end..]
            );
        }
    }
    let kept = match (remote.form, remote.authority) {
        (RemoteForm::Scp, Some(authority)) => match split_userinfo(authority) {
            (Some(userinfo), _) if userinfo.contains(':') => &addr[userinfo.len() + 1..],
            _ => addr,
        },
        _ => addr,
    };
    redact_params(kept)
}

/// `text` with the credentials of every `scheme://…` URL in it removed.
///
/// libgit2 error messages sometimes quote the URL they were given; this is the
/// last line of defence that keeps a token out of an error string.
pub fn redact_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(pos) = rest.find("://") {
        let authority_start = pos + 3;
        out.push_str(&rest[..authority_start]);
        let after = &rest[authority_start..];
        let span_end = after
            .find(|c: char| c.is_whitespace() || TEXT_END.contains(&c))
            .unwrap_or(after.len());
        out.push_str(&redact_after_scheme(&after[..span_end]));
        rest = &after[span_end..];
    }
    out.push_str(rest);
    out
}

/// One URL's text after `scheme://`, without its userinfo and secret parameters.
fn redact_after_scheme(span: &str) -> String {
    let authority_end = span.find(['/', '\\', '?', '#']).unwrap_or(span.len());
    let authority = &span[..authority_end];
    let host_start = match split_userinfo(authority) {
        (Some(userinfo), _) => userinfo.len() + 1,
        // `user:pa/ss@host`: a password with an unescaped `/` (or `?`, `#`)
        // makes the authority look like `user:pa`, whose "port" is no number.
        // Then the last `@` of the span ends the userinfo.
        (None, _) if authority.contains(':') && Authority::parse(authority).is_none() => {
            span.rfind('@').map_or(0, |at| at + 1)
        }
        (None, _) => 0,
    };
    redact_params(&span[host_start..])
}

/// `url` with the value of every secret-looking query or fragment parameter
/// replaced by [`REDACTED`].
fn redact_params(url: &str) -> String {
    let Some(start) = url.find(['?', '#']) else {
        return url.to_string();
    };
    let mut out = String::with_capacity(url.len());
    out.push_str(&url[..start]);
    let mut rest = &url[start..];
    while !rest.is_empty() {
        // `rest` starts with a separator (`?`, `#`, `&`, `;`) then one `key=value`.
        let (sep, body) = rest.split_at(1);
        out.push_str(sep);
        let end = body.find(['&', ';', '#']).unwrap_or(body.len());
        let param = &body[..end];
        match param.split_once('=') {
            Some((key, value)) if !value.is_empty() && is_secret(key, value) => {
                out.push_str(key);
                out.push('=');
                out.push_str(REDACTED);
            }
            _ => out.push_str(param),
        }
        rest = &body[end..];
    }
    out
}

/// Whether a query parameter holds a credential: by its name (`token`,
/// `private_token`, `X-Amz-Signature`, `api_key`, …) or by its value's shape
/// (GitHub, GitLab and Hugging Face token prefixes).
fn is_secret(key: &str, value: &str) -> bool {
    let key: String = super::percent_decode(key)
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .map(|c| c.to_ascii_lowercase())
        .collect();
    const NAMES: &[&str] = &[
        "key",
        "pwd",
        "pass",
        "auth",
        "authorization",
        "sig",
        "session",
        "sessionid",
        "jwt",
    ];
    const SUFFIXES: &[&str] = &[
        "token",
        "secret",
        "password",
        "passwd",
        "apikey",
        "accesskey",
        "signature",
        "credential",
        "credentials",
    ];
    const TOKEN_PREFIXES: &[&str] = &[
        "ghp_",
        "gho_",
        "ghu_",
        "ghs_",
        "ghr_",
        "github_pat_",
        "glpat-",
        "hf_",
    ];
    NAMES.contains(&key.as_str())
        || SUFFIXES.iter().any(|s| key.ends_with(s))
        || TOKEN_PREFIXES.iter().any(|p| value.starts_with(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redact_table() {
        let cases = [
            (
                "https://x-access-token:ghp_abc@github.com/o/r.git",
                "https://github.com/o/r.git",
            ),
            ("https://tok@host/o/r", "https://host/o/r"),
            ("HTTPS://u:p@HOST/o/r", "HTTPS://HOST/o/r"),
            ("https://host/o/r", "https://host/o/r"),
            ("https://a@b:c@host:8443/o", "https://host:8443/o"),
            ("https://u:pa/ss@host/o/r", "https://host/o/r"),
            ("https://u:p@[::1]:3000/o", "https://[::1]:3000/o"),
            ("git@github.com:o/r.git", "git@github.com:o/r.git"),
            ("user:pw@github.com:o/r.git", "github.com:o/r.git"),
            ("/srv/user:pw@x", "/srv/user:pw@x"),
            (
                "https://gitlab.example/g/p.git?private_token=glpat-xyz",
                "https://gitlab.example/g/p.git?private_token=REDACTED",
            ),
            (
                "https://h/o/r/blob/main/a.md?ref_type=heads&access_token=abc#L3",
                "https://h/o/r/blob/main/a.md?ref_type=heads&access_token=REDACTED#L3",
            ),
            (
                "https://s3.example/b?X-Amz-Credential=AK&X-Amz-Signature=ff&x=1",
                "https://s3.example/b?X-Amz-Credential=REDACTED&X-Amz-Signature=REDACTED&x=1",
            ),
            (
                "https://h/x?api-key=k;plain=1",
                "https://h/x?api-key=REDACTED;plain=1",
            ),
            ("https://h/x?u=ghp_abc", "https://h/x?u=REDACTED"),
            (
                "https://h/cb#access_token=t&s=1",
                "https://h/cb#access_token=REDACTED&s=1",
            ),
            ("https://h/x?plain=1#L4", "https://h/x?plain=1#L4"),
            ("https://h/x?token=", "https://h/x?token="),
            ("github.com/o/r?token=t", "github.com/o/r?token=REDACTED"),
            (
                "https://h/x?monkey=1&api_key=k",
                "https://h/x?monkey=1&api_key=REDACTED",
            ),
        ];
        for (input, want) in cases {
            assert_eq!(redact(input), want, "{input}");
        }
    }

    #[test]
    fn no_password_survives() {
        for input in [
            "https://user:s3cret@h/o",
            "http://user:s3cret@h:80/o",
            "git://user:s3cret@h/o",
            "ssh://user:s3cret@h/o",
            "https://user:s3cret@@h/o",
            "https://user:s3cret/x@h/o",
            "user:s3cret@h:o/r",
            "https://h/o?password=s3cret",
            "https://h/o?Private-Token=s3cret",
        ] {
            let shown = redact(input);
            assert!(!shown.contains("s3cret"), "{input} -> {shown}");
        }
    }

    #[test]
    fn redact_keeps_no_password_whatever_its_characters() {
        for url in [
            "https://u:pa(ss@h/x",
            "https://u:pa)ss@h/x",
            "https://u:pa'ss@h/x",
            "https://u:p[a]{s}s@h/x",
        ] {
            assert_eq!(redact(url), "https://h/x", "{url}");
        }
    }

    #[test]
    fn redact_text_handles_embedded_urls() {
        let text = "failed to fetch 'https://u:p4ss@h.example/o/r' and `git://a:b@c/d`";
        assert_eq!(
            redact_text(text),
            "failed to fetch 'https://h.example/o/r' and `git://c/d`"
        );
        let text = "see https://h/x?token=abc (retry) and http://u:pw@h2/y?a=1";
        assert_eq!(
            redact_text(text),
            "see https://h/x?token=REDACTED (retry) and http://h2/y?a=1"
        );
        assert_eq!(redact_text("no urls here"), "no urls here");
    }
}
