//! The one HTTP client every fetch over HTTP(S) is made with (web documents,
//! the archives, asking Software Heritage to save), and the one reading of a
//! server's rate-limit headers, so the manners of pinaudit's requests are
//! written once.
//!
//! - [`build`]: a reqwest client (rustls, with the extra TLS roots), pinaudit's
//!   user agent, `--timeout` for each request and at most 30 s to connect;
//!   names resolved through the command's network (its `--resolve` pins), and,
//!   without `--allow-local`, refused when they resolve to loopback, private or
//!   link-local addresses (`crate::net::Resolver`). Redirects are followed to
//!   public http(s) hosts only, up to [`MAX_REDIRECTS`], or not at all.
//! - [`runtime`]: the tokio runtime the client's requests run on.
//! - [`asked_to_wait`], [`RateLimit`] and [`Deadline`]: `Retry-After` (delay
//!   seconds or an HTTP date, RFC 9110), `X-RateLimit-Reset` (a Unix time) and
//!   `X-RateLimit-Remaining: 0`, waited for only when the wait ends before the
//!   deadline; a wait past it is refused with what the deadline is.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use reqwest::header::{HeaderMap, RETRY_AFTER};

use pinaudit_core::url::HostClass;

/// Redirects followed before giving up.
pub(crate) const MAX_REDIRECTS: usize = 5;

/// Which redirects a client follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Redirects {
    /// Up to [`MAX_REDIRECTS`], each to a host [`refused`] lets through.
    FollowPublic,
    /// None: a redirect is answered as it came (nothing, a token least of all,
    /// goes to a host but the one asked).
    Refuse,
}

/// How a client is made.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ClientOptions<'a> {
    /// For each request, answer included (`--timeout`).
    pub(crate) timeout: Duration,
    /// Where names resolve: the command's `--resolve` pins.
    pub(crate) network: &'a crate::net::Network,
    /// Loopback and private hosts may be connected to (`--allow-local`).
    pub(crate) allow_local: bool,
    pub(crate) redirects: Redirects,
}

/// Why a URL may not be fetched; `None` when it may.
pub(crate) fn refused(url: &reqwest::Url, allow_local: bool) -> Option<String> {
    if !matches!(url.scheme(), "http" | "https") {
        return Some(format!(
            "`{}:` URLs are not fetched over HTTP",
            url.scheme()
        ));
    }
    let host = url.host_str().unwrap_or("");
    let class = pinaudit_core::url::classify_host(host);
    if class.is_public() || (allow_local && class != HostClass::Invalid) {
        return None;
    }
    Some(format!(
        "`{host}` is not a public host (pass --allow-local to fetch from loopback or private addresses)"
    ))
}

/// The client, or why it cannot be made.
pub(crate) fn build(opts: &ClientOptions<'_>) -> Result<reqwest::Client, String> {
    let allow_local = opts.allow_local;
    let redirects = match opts.redirects {
        Redirects::Refuse => reqwest::redirect::Policy::none(),
        Redirects::FollowPublic => reqwest::redirect::Policy::custom(move |attempt| {
            if attempt.previous().len() >= MAX_REDIRECTS {
                let n = attempt.previous().len();
                return attempt.error(format!("more than {n} redirects"));
            }
            match refused(attempt.url(), allow_local) {
                Some(why) => {
                    let to = pinaudit_core::url::redact(attempt.url().as_str());
                    attempt.error(format!("redirect to `{to}` refused: {why}"))
                }
                None => attempt.follow(),
            }
        }),
    };
    let mut builder = reqwest::Client::builder();
    for cert in crate::tls::extra_roots() {
        builder = builder.add_root_certificate(cert);
    }
    builder
        .user_agent(concat!("pinaudit/", env!("CARGO_PKG_VERSION")))
        .connect_timeout(opts.timeout.min(Duration::from_secs(30)))
        .timeout(opts.timeout)
        .redirect(redirects)
        // Names that resolve to loopback, private or metadata addresses are
        // refused on the addresses reqwest connects to (`crate::net`).
        .dns_resolver(opts.network.resolver(!opts.allow_local))
        .build()
        .map_err(|e| format!("cannot build the HTTP client: {e}"))
}

/// A tokio runtime for the client: `workers` threads, or none (`None`: the
/// requests run on the calling thread).
pub(crate) fn runtime(workers: Option<usize>) -> std::io::Result<tokio::runtime::Runtime> {
    match workers {
        Some(n) => tokio::runtime::Builder::new_multi_thread()
            .worker_threads(n)
            .enable_all()
            .build(),
        None => tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build(),
    }
}

/// reqwest's error with its causes, as it words them.
pub(crate) fn causes(e: &dyn std::error::Error) -> String {
    crate::classify::causes(vec![e.to_string()], e.source()).join(": ")
}

/// reqwest's error with its causes, lowercase, and said to be a time-out when
/// it is one.
pub(crate) fn describe(e: &dyn std::error::Error) -> String {
    let joined = causes(e);
    // Messages are lowercase phrases (as every pinaudit message); reqwest-retry's start with a capital.
    let mut chars = joined.chars();
    let text: String = match chars.next() {
        Some(c) => c.to_lowercase().chain(chars).collect(),
        None => joined,
    };
    if text.contains("timed out") || text.contains("operation timed out") {
        return format!("timed out: {text}");
    }
    text
}

/// A `Retry-After` value: delay seconds, or an HTTP date (RFC 9110).
pub(crate) fn retry_after(v: &str) -> Option<Duration> {
    if let Ok(secs) = v.trim().parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    // HTTP dates end in `GMT`, an obsolete zone RFC 2822 parsers may refuse.
    let v = v.trim();
    let numeric = v.strip_suffix(" GMT").map(|d| format!("{d} +0000"));
    let rfc2822 = &time::format_description::well_known::Rfc2822;
    let when = time::OffsetDateTime::parse(v, rfc2822)
        .or_else(|e| {
            numeric
                .as_deref()
                .map_or(Err(e), |n| time::OffsetDateTime::parse(n, rfc2822))
        })
        .ok()?;
    Some(Duration::try_from(when - time::OffsetDateTime::now_utc()).unwrap_or(Duration::ZERO))
}

/// The `Retry-After` header, read by [`retry_after`].
pub(crate) fn retry_after_of(headers: &HeaderMap) -> Option<Duration> {
    headers
        .get(RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(retry_after)
}

/// `X-RateLimit-Reset` as a wait from now: servers send the Unix time of the
/// reset; a small number is read as seconds from now.
pub(crate) fn reset_of(headers: &HeaderMap) -> Option<Duration> {
    let reset = header_number(headers, "x-ratelimit-reset")?;
    let now = time::OffsetDateTime::now_utc().unix_timestamp().max(0) as u64;
    Some(Duration::from_secs(if reset > 1_000_000_000 {
        reset.saturating_sub(now)
    } else {
        reset
    }))
}

/// How long a 429 or 503 asks to wait: `Retry-After`, else until
/// `X-RateLimit-Reset`.
pub(crate) fn asked_to_wait(headers: &HeaderMap) -> Option<Duration> {
    retry_after_of(headers).or_else(|| reset_of(headers))
}

fn header_number(headers: &HeaderMap, name: &str) -> Option<u64> {
    headers.get(name)?.to_str().ok()?.trim().parse().ok()
}

/// When a server said its rate limit is spent (`X-RateLimit-Remaining: 0`):
/// the time it resets, so that later calls wait for it.
#[derive(Debug, Default)]
pub(crate) struct RateLimit {
    spent_until: Mutex<Option<Instant>>,
}

impl RateLimit {
    /// Remembers when a spent rate limit resets, if an answer says so.
    pub(crate) fn note(&self, headers: &HeaderMap) {
        if header_number(headers, "x-ratelimit-remaining") == Some(0) {
            if let Some(wait) = reset_of(headers) {
                *self.spent_until.lock().unwrap_or_else(|e| e.into_inner()) =
                    Some(Instant::now() + wait);
            }
        }
    }

    /// How long until a spent rate limit resets (zero when it is not spent).
    pub(crate) fn until_reset(&self) -> Duration {
        self.spent_until
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .map_or(Duration::ZERO, |t| {
                t.saturating_duration_since(Instant::now())
            })
    }
}

/// The end of a phase of calls (`--deadline`), started when it is made.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Deadline {
    ends: Instant,
    length: Duration,
}

/// A wait that would end past the deadline.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PastDeadline {
    /// The wait asked for.
    pub(crate) wait: Duration,
    length: Duration,
}

impl PastDeadline {
    /// "past the deadline of N s (raise it with --deadline…)", with `more`
    /// advice inside the parentheses.
    pub(crate) fn past(&self, more: &str) -> String {
        format!(
            "past the deadline of {} s (raise it with --deadline{more})",
            self.length.as_secs()
        )
    }

    /// The wait in whole seconds, at least one.
    pub(crate) fn wait_secs(&self) -> u64 {
        self.wait.as_secs().max(1)
    }
}

impl Deadline {
    /// A deadline `length` from now.
    pub(crate) fn new(length: Duration) -> Deadline {
        Deadline {
            ends: Instant::now() + length,
            length,
        }
    }

    /// When it comes.
    pub(crate) fn ends(&self) -> Instant {
        self.ends
    }

    /// Whether it has come.
    pub(crate) fn passed(&self) -> bool {
        Instant::now() >= self.ends
    }

    /// Why `what` did not finish: it took longer than the deadline.
    pub(crate) fn timed_out(&self, what: &str) -> String {
        format!(
            "timed out: {what} took longer than the deadline of {} s (raise it with --deadline)",
            self.length.as_secs()
        )
    }

    /// Waits `wait`, unless that would end past the deadline: then says so
    /// at once.
    pub(crate) async fn sleep(&self, wait: Duration) -> Result<(), PastDeadline> {
        if Instant::now() + wait > self.ends {
            return Err(PastDeadline {
                wait,
                length: self.length,
            });
        }
        tokio::time::sleep(wait).await;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_local_hosts_and_other_schemes() {
        let u = |s: &str| reqwest::Url::parse(s).unwrap();
        assert!(refused(&u("https://example.com/a"), false).is_none());
        assert!(refused(&u("http://127.0.0.1:8080/a"), false).is_some());
        assert!(refused(&u("http://127.0.0.1:8080/a"), true).is_none());
        assert!(refused(&u("http://10.0.0.1/a"), false).is_some());
        assert!(refused(&u("http://169.254.169.254/latest"), false).is_some());
        assert!(refused(&u("file:///etc/passwd"), true).is_some());
    }

    #[test]
    fn retry_after_in_seconds_or_a_date() {
        assert_eq!(retry_after("2"), Some(Duration::from_secs(2)));
        assert_eq!(
            retry_after("Wed, 21 Oct 2015 07:28:00 GMT"),
            Some(Duration::ZERO)
        );
        assert_eq!(retry_after("soon"), None);
    }

    #[test]
    fn a_reset_is_a_unix_time_or_seconds_from_now() {
        let mut h = HeaderMap::new();
        h.insert("x-ratelimit-reset", "5".parse().unwrap());
        assert_eq!(reset_of(&h), Some(Duration::from_secs(5)));
        let soon = time::OffsetDateTime::now_utc().unix_timestamp() + 100;
        h.insert("x-ratelimit-reset", soon.to_string().parse().unwrap());
        let wait = reset_of(&h).unwrap();
        assert!(wait <= Duration::from_secs(100) && wait >= Duration::from_secs(98));
        h.insert(RETRY_AFTER, "7".parse().unwrap());
        assert_eq!(asked_to_wait(&h), Some(Duration::from_secs(7)));
    }

    #[test]
    fn a_spent_rate_limit_is_waited_for_until_its_reset() {
        let limit = RateLimit::default();
        let mut h = HeaderMap::new();
        h.insert("x-ratelimit-reset", "60".parse().unwrap());
        limit.note(&h);
        assert_eq!(limit.until_reset(), Duration::ZERO);
        h.insert("x-ratelimit-remaining", "0".parse().unwrap());
        limit.note(&h);
        let wait = limit.until_reset();
        assert!(wait <= Duration::from_secs(60) && wait >= Duration::from_secs(58));
    }
}
