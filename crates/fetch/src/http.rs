//! pinaudit's smart HTTP(S) subtransport for libgit2.
//!
//! libgit2's own HTTP transport gives no byte budget to the ref advertisement
//! (an endless one grew to 3 GB), restarts its socket timeout with every byte,
//! follows redirects itself and asks the credential callback about whatever
//! host it was sent to. This one, registered for `http` and `https` in
//! [`super::transport::register`], speaks the stateless ("rpc")
//! protocol through reqwest:
//!
//! - `UploadPackLs`: `GET {url}/info/refs?service=git-upload-pack`; libgit2's
//!   smart protocol skips the `# service=` line itself in rpc mode.
//! - `UploadPack`: `POST {url}/git-upload-pack` with what libgit2 wrote, as
//!   `application/x-git-upload-pack-request`.
//!
//! Every body is read through [`Bounded`], so the advertisement (`--max-refs-mib`)
//! and the packs (`--max-fetch-mib`) have byte budgets, and the deadline, the
//! idle timeout and the minimum-progress rule hold for every wait. Redirects of
//! the advertisement are followed up to [`MAX_REDIRECTS`] (http(s) only, never
//! from https to http); later requests go to where they led. Credentials (the
//! URL's own, `GITHUB_TOKEN` for github.com over https, a git credential helper)
//! are sent only to the exact scheme, host and port of the fetch URL, and never
//! once a redirect has left it. Connections go to the addresses
//! [`crate::net::Resolver`] returns (checked when the sync is `public_only`),
//! or through the HTTP proxy the environment names.

use std::io;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use git2::transport::{Service, SmartSubtransport, SmartSubtransportStream};
use reqwest::header::{HeaderValue, ACCEPT, AUTHORIZATION, CONTENT_TYPE, LOCATION, USER_AGENT};
use reqwest::StatusCode;

use super::bounded::{Bounded, Budget, Conn};

/// Redirects of the advertisement followed before giving up (as libgit2).
pub(crate) const MAX_REDIRECTS: usize = 5;
/// The largest request body libgit2 may write (its wants and haves).
const MAX_REQUEST: usize = 64 << 20;

const LS_TYPE: &str = "application/x-git-upload-pack-advertisement";
const REQUEST_TYPE: &str = "application/x-git-upload-pack-request";
const RESULT_TYPE: &str = "application/x-git-upload-pack-result";
const AGENT: &str = concat!("git/2.0 (pinaudit/", env!("CARGO_PKG_VERSION"), ")");

/// One libgit2 connection to one remote: the advertisement and the fetches
/// that follow it share the client, where redirects led, and credentials.
pub(crate) struct HttpSubtransport {
    shared: Arc<Shared>,
}

impl HttpSubtransport {
    /// A connection within `budget`, the sync's.
    pub(crate) fn new(budget: Arc<Budget>) -> Self {
        HttpSubtransport {
            shared: Arc::new(Shared {
                budget,
                inner: Mutex::new(None),
                state: Mutex::new(State::default()),
            }),
        }
    }
}

struct Shared {
    /// The limits of the sync this connection belongs to.
    budget: Arc<Budget>,
    /// Built on the first request, with the sync's budget.
    inner: Mutex<Option<Inner>>,
    state: Mutex<State>,
}

struct Inner {
    rt: Option<tokio::runtime::Runtime>,
    client: reqwest::Client,
}

impl Drop for Inner {
    fn drop(&mut self) {
        // Don't wait for a resolver thread stuck in DNS.
        if let Some(rt) = self.rt.take() {
            rt.shutdown_background();
        }
    }
}

/// Where the repository is, and who may be given credentials.
#[derive(Default)]
struct State {
    /// The repository URL (no credentials), after redirects.
    base: Option<reqwest::Url>,
    /// Scheme, host and port of the fetch URL: the only place credentials go.
    origin: Option<Origin>,
    /// The fetch URL's own `user:password`.
    userinfo: Option<(String, String)>,
    /// A redirect left the origin: no credentials for the rest of the sync.
    left_origin: bool,
    /// The `Authorization` the origin accepted.
    accepted: Option<HeaderValue>,
    /// Credentials were offered once already (libgit2 loops otherwise).
    offered: bool,
}

#[derive(Clone, PartialEq, Eq)]
struct Origin {
    scheme: String,
    host: String,
    port: Option<u16>,
}

impl Origin {
    fn of(url: &reqwest::Url) -> Origin {
        Origin {
            scheme: url.scheme().to_ascii_lowercase(),
            host: url.host_str().unwrap_or("").to_ascii_lowercase(),
            port: url.port_or_known_default(),
        }
    }
}

fn git_err(message: impl Into<String>) -> git2::Error {
    git2::Error::new(
        git2::ErrorCode::GenericError,
        git2::ErrorClass::Net,
        message.into(),
    )
}

impl SmartSubtransport for HttpSubtransport {
    fn action(
        &self,
        url: &str,
        action: Service,
    ) -> Result<Box<dyn SmartSubtransportStream>, git2::Error> {
        let budget = self.shared.budget.clone();
        self.shared.start(url)?;
        let (limit, flag, what) = match action {
            Service::UploadPackLs => (budget.max_ref_bytes(), "--max-refs-mib", "refs"),
            Service::UploadPack => (budget.max_pack_bytes(), "--max-fetch-mib", "data"),
            _ => return Err(git_err("pinaudit only fetches")),
        };
        let conn = HttpConn {
            shared: self.shared.clone(),
            service: action,
            body: Vec::new(),
            response: None,
            pending: Vec::new(),
            at: 0,
        };
        Ok(Box::new(Bounded::new(conn, budget, limit, flag, what)))
    }

    fn close(&self) -> Result<(), git2::Error> {
        Ok(())
    }
}

impl Shared {
    /// Builds the client on the first action, and notes the fetch URL.
    fn start(&self, url: &str) -> Result<(), git2::Error> {
        let mut inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        if inner.is_none() {
            *inner = Some(build(&self.budget).map_err(|e| git_err(e.to_string()))?);
        }
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if state.base.is_none() {
            let mut parsed = reqwest::Url::parse(url)
                .map_err(|e| git_err(format!("invalid URL `{}`: {e}", super::redact(url))))?;
            if !parsed.username().is_empty() || parsed.password().is_some() {
                let decode = |s: &str| {
                    percent_encoding::percent_decode_str(s)
                        .decode_utf8_lossy()
                        .into_owned()
                };
                state.userinfo = Some((
                    decode(parsed.username()),
                    decode(parsed.password().unwrap_or("")),
                ));
                let _ = parsed.set_username("");
                let _ = parsed.set_password(None);
            }
            parsed.set_query(None);
            parsed.set_fragment(None);
            state.origin = Some(Origin::of(&parsed));
            state.base = Some(parsed);
        }
        Ok(())
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Sends the request `make` builds on this connection's runtime, waiting
    /// at most `wait` for the answer's head.
    fn exchange(
        &self,
        wait: Duration,
        shown: &str,
        make: impl FnOnce(&reqwest::Client) -> reqwest::RequestBuilder,
    ) -> io::Result<reqwest::Response> {
        let inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        let inner = inner
            .as_ref()
            .ok_or_else(|| io::Error::other("the HTTP client is not started"))?;
        let rt = inner
            .rt
            .as_ref()
            .ok_or_else(|| io::Error::other("the HTTP client is stopped"))?;
        let request = make(&inner.client);
        rt.block_on(async {
            match tokio::time::timeout(wait, request.send()).await {
                Ok(Ok(response)) => Ok(response),
                Ok(Err(e)) => Err(send_error(&e, shown)),
                Err(_) => Err(io::Error::new(io::ErrorKind::TimedOut, "timed out")),
            }
        })
    }

    /// The next chunk of `response`, waiting at most `wait`.
    fn chunk(
        &self,
        response: &mut reqwest::Response,
        wait: Duration,
    ) -> io::Result<Option<Vec<u8>>> {
        let inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        let rt = inner
            .as_ref()
            .and_then(|i| i.rt.as_ref())
            .ok_or_else(|| io::Error::other("the HTTP client is stopped"))?;
        rt.block_on(async {
            match tokio::time::timeout(wait, response.chunk()).await {
                Ok(Ok(chunk)) => Ok(chunk.map(|c| c.to_vec())),
                Ok(Err(e)) => Err(io::Error::other(format!(
                    "error receiving data: {}",
                    describe(&e)
                ))),
                Err(_) => Err(io::Error::new(io::ErrorKind::TimedOut, "timed out")),
            }
        })
    }

    /// Credentials for a request to `url`: only to the fetch URL's own scheme,
    /// host and port, and never after a redirect left them.
    fn credentials(&self, url: &reqwest::Url) -> Option<(String, String)> {
        let state = self.state();
        if state.left_origin || state.origin.as_ref() != Some(&Origin::of(url)) {
            return None;
        }
        if let Some(userinfo) = &state.userinfo {
            return Some(userinfo.clone());
        }
        drop(state);
        if super::credentials::is_github_https(url.as_str()) {
            if let Some(token) = std::env::var("GITHUB_TOKEN")
                .ok()
                .filter(|t| !t.trim().is_empty())
            {
                return Some(("x-access-token".to_string(), token));
            }
        }
        crate::setup::isolate_user_config();
        let config = git2::Config::open_default().ok()?;
        git2::CredentialHelper::new(url.as_str())
            .config(&config)
            .execute()
    }

    /// Sends one request of `service`, following redirects of the
    /// advertisement and answering one `401` with credentials.
    fn send(&self, service: Service, body: &[u8], wait: Duration) -> io::Result<reqwest::Response> {
        let base = self
            .state()
            .base
            .clone()
            .ok_or_else(|| io::Error::other("no URL"))?;
        let mut url = endpoint(&base, service)?;
        let mut hops = 0;
        loop {
            let shown = super::redact(url.as_str());
            let auth = {
                let state = self.state();
                let here = state.origin.as_ref() == Some(&Origin::of(&url)) && !state.left_origin;
                state.accepted.clone().filter(|_| here)
            };
            let response = self.request(service, &url, body, auth.clone(), wait)?;
            let status = response.status();
            if status.is_redirection() && service == Service::UploadPackLs {
                let to = response
                    .headers()
                    .get(LOCATION)
                    .and_then(|v| v.to_str().ok())
                    .and_then(|l| url.join(l).ok())
                    .ok_or_else(|| {
                        io::Error::other(format!(
                            "`{shown}` answered `{status}` without a usable Location"
                        ))
                    })?;
                hops += 1;
                if hops > MAX_REDIRECTS {
                    return Err(io::Error::other(format!(
                        "too many redirects: more than {MAX_REDIRECTS} from `{}`",
                        super::redact(base.as_str())
                    )));
                }
                url = self.follow(&url, to)?;
                continue;
            }
            if status.is_redirection() {
                return Err(io::Error::other(format!(
                    "`{shown}` answered `{status}` to a fetch; only the ref listing may be redirected"
                )));
            }
            if status == StatusCode::UNAUTHORIZED {
                if auth.is_some() {
                    return Err(io::Error::other(format!(
                        "authentication failed for `{shown}`: the credentials were refused (http status code: 401)"
                    )));
                }
                let mut state = self.state();
                let first = !std::mem::replace(&mut state.offered, true);
                drop(state);
                let found = if first { self.credentials(&url) } else { None };
                let Some((user, pass)) = found else {
                    return Err(io::Error::other(format!(
                        "authentication required by `{shown}` but no credentials are available for it (http status code: 401)"
                    )));
                };
                let value = basic(&user, &pass)?;
                self.state().accepted = Some(value);
                continue;
            }
            if !status.is_success() {
                return Err(io::Error::other(format!(
                    "unexpected http status code: {} from `{shown}`",
                    status.as_u16()
                )));
            }
            let want = match service {
                Service::UploadPackLs => LS_TYPE,
                _ => RESULT_TYPE,
            };
            let got = response
                .headers()
                .get(CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("");
            let media = got.split(';').next().unwrap_or("").trim();
            if !media.eq_ignore_ascii_case(want) {
                return Err(io::Error::other(format!(
                    "`{shown}` is not a smart git HTTP server: it answered with content type `{}` (expected `{want}`)",
                    pinaudit_core::escape::terminal(got)
                )));
            }
            return Ok(response);
        }
    }

    fn request(
        &self,
        service: Service,
        url: &reqwest::Url,
        body: &[u8],
        auth: Option<HeaderValue>,
        wait: Duration,
    ) -> io::Result<reqwest::Response> {
        let shown = super::redact(url.as_str());
        self.exchange(wait, &shown, |client| {
            let mut req = match service {
                Service::UploadPackLs => client.get(url.clone()).header(ACCEPT, LS_TYPE),
                _ => client
                    .post(url.clone())
                    .header(CONTENT_TYPE, REQUEST_TYPE)
                    .header(ACCEPT, RESULT_TYPE)
                    .body(body.to_vec()),
            };
            req = req.header(USER_AGENT, AGENT);
            if let Some(auth) = auth {
                req = req.header(AUTHORIZATION, auth);
            }
            req
        })
    }

    /// Where a redirect of the advertisement leads, checked; notes when it
    /// leaves the origin (credentials stop there) and where the repository is now.
    fn follow(&self, from: &reqwest::Url, mut to: reqwest::Url) -> io::Result<reqwest::Url> {
        let shown = super::redact(to.as_str());
        if !matches!(to.scheme(), "http" | "https") {
            return Err(io::Error::other(format!(
                "redirect to `{shown}` refused: only http(s) redirects are followed"
            )));
        }
        if from.scheme() == "https" && to.scheme() == "http" {
            return Err(io::Error::other(format!(
                "redirect to `{shown}` refused: it leaves https for plain http"
            )));
        }
        if self.budget.public_only {
            let host = to.host_str().unwrap_or("");
            if let Err(why) = crate::net::refuse_non_public(host) {
                return Err(io::Error::new(
                    io::ErrorKind::PermissionDenied,
                    format!("redirect to `{shown}` refused: {why}"),
                ));
            }
        }
        // Credentials in a Location are never used.
        let _ = to.set_username("");
        let _ = to.set_password(None);
        let path = to.path().to_string();
        let Some(repo) = path.strip_suffix("/info/refs") else {
            return Err(io::Error::other(format!(
                "redirect to `{shown}` refused: it does not lead to a git repository's `/info/refs`"
            )));
        };
        let mut base = to.clone();
        base.set_path(repo);
        base.set_query(None);
        base.set_fragment(None);
        let mut state = self.state();
        if state.origin.as_ref() != Some(&Origin::of(&to)) {
            state.left_origin = true;
        }
        state.base = Some(base);
        Ok(to)
    }
}

/// Where `service` is asked, under the repository URL `base`.
fn endpoint(base: &reqwest::Url, service: Service) -> io::Result<reqwest::Url> {
    let mut url = base.clone();
    let path = url.path().trim_end_matches('/').to_string();
    match service {
        Service::UploadPackLs => {
            url.set_path(&format!("{path}/info/refs"));
            url.set_query(Some("service=git-upload-pack"));
        }
        _ => {
            url.set_path(&format!("{path}/git-upload-pack"));
            url.set_query(None);
        }
    }
    Ok(url)
}

fn basic(user: &str, pass: &str) -> io::Result<HeaderValue> {
    use std::fmt::Write as _;
    let raw = format!("{user}:{pass}");
    // Base64 by hand: no new dependency for one header.
    const TABLE: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::from("Basic ");
    for chunk in raw.as_bytes().chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                let _ = out.write_char(TABLE[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    let mut value = HeaderValue::from_str(&out)
        .map_err(|_| io::Error::other("the credentials can't be sent in a header"))?;
    value.set_sensitive(true);
    Ok(value)
}

/// The client of one connection: a runtime of its own (libgit2 calls from a
/// blocking thread), redirects left to [`Shared::send`], names resolved (and
/// checked) by [`crate::net::Resolver`], proxies from the environment, and
/// the certificates of `SSL_CERT_FILE` (else the system's CA bundle) beside
/// the built-in roots ([`super::tls::extra_roots`]).
fn build(budget: &Budget) -> Result<Inner, ClientError> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(ClientError::Runtime)?;
    let mut builder = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .connect_timeout(budget.connect)
        .dns_resolver(budget.network.resolver(budget.public_only));
    for cert in super::tls::extra_roots() {
        builder = builder.add_root_certificate(cert);
    }
    let client = builder.build().map_err(ClientError::Build)?;
    Ok(Inner {
        rt: Some(rt),
        client,
    })
}

/// Why a connection's client could not be made.
#[derive(Debug, thiserror::Error)]
enum ClientError {
    #[error("cannot start the HTTP client: {0}")]
    Runtime(io::Error),
    #[error("cannot build the HTTP client: {0}")]
    Build(reqwest::Error),
}

/// A failed send as an I/O error whose kind and words the fetch classifies.
fn send_error(e: &reqwest::Error, shown: &str) -> io::Error {
    let text = describe(e);
    if text.contains(crate::net::REFUSED_MARK) {
        return io::Error::new(io::ErrorKind::PermissionDenied, text);
    }
    if e.is_timeout() {
        return io::Error::new(io::ErrorKind::TimedOut, format!("timed out: {text}"));
    }
    if e.is_connect() {
        // hyper's wrappers ("client error (Connect): tcp connect error") add
        // nothing to the cause at the end of the chain.
        let cause = text
            .replace("client error (Connect): ", "")
            .replace("tcp connect error: ", "");
        let mut chars = cause.chars();
        let cause: String = match chars.next() {
            Some(c) => c.to_lowercase().chain(chars).collect(),
            None => cause,
        };
        // The caller names the remote; the host is what a connection failed to.
        let host = ::url::Url::parse(shown)
            .ok()
            .and_then(|u| {
                let host = u.host_str()?.to_string();
                Some(match u.port() {
                    Some(p) => format!("{host}:{p}"),
                    None => host,
                })
            })
            .unwrap_or_else(|| shown.to_string());
        if cause.starts_with("dns error") {
            // "dns error: failed to resolve address for `h`: failed to lookup
            // address information: Name or service not known": the last part
            // is the resolver's answer.
            let answer = cause.rsplit(": ").next().unwrap_or(&cause);
            return io::Error::other(format!("cannot resolve `{host}`: {answer}"));
        }
        return io::Error::other(format!("failed to connect to `{host}`: {cause}"));
    }
    io::Error::other(format!("error receiving data from `{shown}`: {text}"))
}

/// A reqwest error with its causes, without the URL (it may carry what the
/// caller redacts).
fn describe(e: &reqwest::Error) -> String {
    use std::error::Error as _;
    let parts = crate::classify::causes(Vec::new(), e.source());
    // The innermost cause says the most ("connection refused", our refusal).
    if let Some(refusal) = parts.iter().find(|p| p.contains(crate::net::REFUSED_MARK)) {
        return refusal.clone();
    }
    if parts.is_empty() {
        return if e.is_timeout() {
            "timed out".to_string()
        } else {
            "the request failed".to_string()
        };
    }
    parts.join(": ")
}

/// One request's body as libgit2 reads it.
struct HttpConn {
    shared: Arc<Shared>,
    service: Service,
    /// What libgit2 wrote (the POST body), sent at the first read.
    body: Vec<u8>,
    response: Option<reqwest::Response>,
    pending: Vec<u8>,
    at: usize,
}

impl Conn for HttpConn {
    fn read_within(&mut self, buf: &mut [u8], wait: Duration) -> io::Result<usize> {
        if self.response.is_none() {
            let body = std::mem::take(&mut self.body);
            self.response = Some(self.shared.send(self.service, &body, wait)?);
        }
        if self.at >= self.pending.len() {
            let Some(response) = self.response.as_mut() else {
                return Ok(0);
            };
            match self.shared.chunk(response, wait)? {
                Some(chunk) => {
                    self.pending = chunk;
                    self.at = 0;
                }
                None => return Ok(0),
            }
        }
        let n = buf.len().min(self.pending.len() - self.at);
        buf[..n].copy_from_slice(&self.pending[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }

    fn write_within(&mut self, buf: &[u8], _wait: Duration) -> io::Result<usize> {
        if self.service != Service::UploadPack || self.response.is_some() {
            return Err(io::Error::other("unexpected write to an HTTP answer"));
        }
        if self.body.len() + buf.len() > MAX_REQUEST {
            return Err(io::Error::other(format!(
                "the fetch request grew over {} MiB",
                MAX_REQUEST >> 20
            )));
        }
        self.body.extend_from_slice(buf);
        Ok(buf.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn basic_auth_is_base64() {
        let v = basic("Aladdin", "open sesame").unwrap();
        assert_eq!(v.to_str().unwrap(), "Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==");
        assert_eq!(basic("a", "").unwrap().to_str().unwrap(), "Basic YTo=");
        assert!(v.is_sensitive());
    }

    #[test]
    fn credentials_go_only_to_the_fetch_urls_own_origin() {
        let budget = Budget::new(&crate::options::SyncOptions::default());
        let shared = HttpSubtransport::new(budget).shared;
        shared
            .start("https://me:p%40ss@Git.Example/o/r.git")
            .unwrap();
        let url = |u: &str| reqwest::Url::parse(u).unwrap();
        assert_eq!(
            shared.credentials(&url("https://git.example:443/o/r.git/info/refs")),
            Some(("me".to_string(), "p@ss".to_string()))
        );
        for other in [
            "http://git.example/o/r.git",
            "https://git.example:8443/o/r.git",
            "https://git.example.evil/o/r.git",
            "https://127.0.0.2/o/r.git",
        ] {
            assert_eq!(shared.credentials(&url(other)), None, "{other}");
        }
        // The URL sent carries no credentials.
        let base = shared.state().base.clone().unwrap();
        assert_eq!(base.as_str(), "https://git.example/o/r.git");
        // Once a redirect has left the origin, not even the origin gets them.
        shared.state().left_origin = true;
        assert_eq!(
            shared.credentials(&url("https://git.example/o/r.git")),
            None
        );
    }

    #[test]
    fn endpoints() {
        let base = reqwest::Url::parse("https://h.example/o/r.git/").unwrap();
        assert_eq!(
            endpoint(&base, Service::UploadPackLs).unwrap().as_str(),
            "https://h.example/o/r.git/info/refs?service=git-upload-pack"
        );
        assert_eq!(
            endpoint(&base, Service::UploadPack).unwrap().as_str(),
            "https://h.example/o/r.git/git-upload-pack"
        );
    }
}
