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
