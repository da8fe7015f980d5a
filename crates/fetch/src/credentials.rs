//! Which credentials may go where: a token belongs to one host only, never to a
//! mirror that a `--rewrite` points at.

/// Whether `url` is github.com itself over https (any case, default port): the
/// only place `GITHUB_TOKEN` belongs.
pub(crate) fn is_github_https(url: &str) -> bool {
    let Some(authority) = pinaudit_core::url::Remote::parse(url).authority() else {
        return false;
    };
    pinaudit_core::url::scheme_of(url).as_deref() == Some("https")
        && authority.host.eq_ignore_ascii_case("github.com")
        && authority.port.is_none_or(|p| p == 443)
}

/// Whether `url` is on the same origin (scheme, host, port) as `base`: the only
/// place a token configured for the service at `base` (`SWH_TOKEN` for the
/// Software Heritage API) belongs.
pub(crate) fn is_origin_of(url: &str, base: &str) -> bool {
    let (Ok(u), Ok(b)) = (::url::Url::parse(url), ::url::Url::parse(base)) else {
        return false;
    };
    u.scheme() == b.scheme()
        && u.host_str().map(str::to_ascii_lowercase) == b.host_str().map(str::to_ascii_lowercase)
        && u.port_or_known_default() == b.port_or_known_default()
}
