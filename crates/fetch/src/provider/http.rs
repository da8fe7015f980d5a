//! Documents over HTTP(S): a cited paper, model card or blog post that
//! lives on no git forge is fetched, hashed and read like a git document.
//!
//! - One client on one tokio runtime: reqwest (rustls), with retries of 429 and
//!   5xx by reqwest-retry (exponential backoff); a `Retry-After` the server sends
//!   is waited for first (up to [`MAX_RETRY_AFTER`]), by a small middleware under
//!   the retry one, but never past the deadline: one that would end after it
//!   fails the document at once, with the reason.
//! - `--deadline` bounds the whole phase: every document, queued behind its
//!   host's [`PER_HOST`] slots or in flight, retries included, is done by then
//!   or fails as past the deadline. All hosts start together, so the deadline
//!   is the same for each host and for the run.
//! - `cache/http/<sha256 of the URL>.{json,body}`: the body with its `ETag` and
//!   `Last-Modified`; a re-check sends `If-None-Match` / `If-Modified-Since`, and
//!   a `304 Not Modified` costs no body.
//! - At most [`PER_HOST`] requests at a time to one host; `--timeout` for the
//!   whole request; bodies over `--max-document-size` are refused while they
//!   stream; redirects are followed up to [`crate::client::MAX_REDIRECTS`], never to `file:` and
//!   never to a loopback, private or link-local host unless `--allow-local`,
//!   checked before any connection is made; a name is judged by its text and
//!   then by the addresses it resolves to, which are the only ones connected to
//!   (`crate::net::Resolver`, with the `--resolve` pins).

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use reqwest::header::{ETAG, IF_MODIFIED_SINCE, IF_NONE_MATCH, LAST_MODIFIED};
use reqwest::StatusCode;
use reqwest_middleware::{ClientBuilder, ClientWithMiddleware, Middleware, Next};
use reqwest_retry::policies::ExponentialBackoff;
use reqwest_retry::RetryTransientMiddleware;
use serde::{Deserialize, Serialize};

use crate::{sha256_hex, FetchError};

/// Requests at a time to one host.
pub(crate) const PER_HOST: usize = 2;
/// The longest `Retry-After` waited for; a longer one fails the document.
pub(crate) const MAX_RETRY_AFTER: Duration = Duration::from_secs(30);
/// `--max-document-size` by default: 50 MiB.
pub const DEFAULT_MAX_SIZE: u64 = 50 * 1024 * 1024;

/// How documents are fetched.
#[derive(Debug, Clone)]
pub struct WebOptions {
    pub cache: PathBuf,
    pub offline: bool,
    pub timeout: Duration,
    pub max_size: u64,
    pub allow_local: bool,
    /// Longest time the whole web-document phase may take (`--deadline`).
    pub deadline: Duration,
    /// Where connections go: the command's `--resolve` pins.
    pub network: crate::net::Network,
    /// The key kept documents are authenticated under (the cache's).
    pub key: crate::cache_key::CacheKey,
}

pub use pinaudit_core::provider::web::{is_immutable, web_url, WebDoc};

use crate::client::{describe, refused, Deadline};

#[derive(Debug, Default, Serialize, Deserialize)]
struct Meta {
    url: String,
    etag: Option<String>,
    last_modified: Option<String>,
    sha256: String,
    /// The MAC, under the cache key, of the fields above ([`Meta::parts`],
    /// hex; keyed BLAKE3, or the HMAC-SHA256 of earlier versions): a planted
    /// body and meta file, even with a matching sha256, are not the document
    /// the server sent.
    #[serde(default)]
    mac: String,
}

impl Meta {
    /// `f` of the fields the MAC covers, each length-prefixed.
    fn with_parts<R>(&self, f: impl FnOnce(&[&[u8]]) -> R) -> R {
        let field = |v: &Option<String>| match v {
            Some(v) => format!("+{v}"),
            None => "-".to_string(),
        };
        let mut parts: Vec<Vec<u8>> = Vec::new();
        for p in [
            "pinaudit-http-cache v1".to_string(),
            self.url.clone(),
            field(&self.etag),
            field(&self.last_modified),
            self.sha256.clone(),
        ] {
            parts.push((p.len() as u64).to_le_bytes().to_vec());
            parts.push(p.into_bytes());
        }
        let refs: Vec<&[u8]> = parts.iter().map(Vec::as_slice).collect();
        f(&refs)
    }

    fn tag(&self, key: &crate::cache_key::CacheKey) -> [u8; 32] {
        self.with_parts(|parts| key.mac(parts))
    }

    /// Whether the meta's MAC is one this key made (now or by an earlier
    /// version).
    fn sound(&self, key: &crate::cache_key::CacheKey) -> bool {
        let Some(tag) = (0..self.mac.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(self.mac.get(i..i + 2)?, 16).ok())
            .collect::<Option<Vec<u8>>>()
        else {
            return false;
        };
        self.with_parts(|parts| key.verify_or_earlier(parts, &tag))
    }
}

fn cache_files(root: &Path, url: &str) -> (PathBuf, PathBuf) {
    let dir = root.join("http");
    let key = sha256_hex(url.as_bytes());
    (
        dir.join(format!("{key}.json")),
        dir.join(format!("{key}.body")),
    )
}

/// Where the version of a web document whose sha256 is `sha256` is kept:
/// `CACHE/http/sha256/<sha256>.body`, named by its content, never overwritten.
fn kept_file(root: &Path, sha256: &str) -> Option<PathBuf> {
    let valid = sha256.len() == 64 && sha256.bytes().all(|b| b.is_ascii_hexdigit());
    valid.then(|| {
        root.join("http")
            .join("sha256")
            .join(format!("{}.body", sha256.to_ascii_lowercase()))
    })
}

/// The kept version of a web document whose sha256 is `sha256`, read only when
/// its bytes hash to that name (so no MAC is needed: bytes with the recorded
/// sha256 are the recorded version, whoever put them there).
pub fn kept_version(root: &Path, sha256: &str) -> Option<Vec<u8>> {
    let path = kept_file(root, sha256)?;
    let bytes = crate::store::read_regular(&path)?;
    sha256_hex(&bytes)
        .eq_ignore_ascii_case(sha256)
        .then_some(bytes)
}

/// Keeps `bytes` (whose sha256 is `sha256`) by their sha256, unless a version of
/// that name is already kept and whole. Best effort: a cache that can't be
/// written costs only the version's being kept.
fn keep_version(root: &Path, sha256: &str, bytes: &[u8]) {
    let Some(path) = kept_file(root, sha256) else {
        return;
    };
    // Named by its content and written whole: one of the right length is
    // it (and it is checked when read). No re-read on every fetch.
    if std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_file() && m.len() == bytes.len() as u64)
    {
        return;
    }
    let Some(dir) = path.parent() else {
        return;
    };
    // Never into a directory a planted link names, outside the cache: neither
    // `http/` nor `http/sha256/` may be anything but a directory.
    let http = root.join("http");
    if [&http, dir]
        .iter()
        .any(|d| std::fs::symlink_metadata(d).is_ok_and(|m| !m.is_dir()))
    {
        return;
    }
    if std::fs::create_dir_all(dir).is_ok() {
        let _ = crate::store::write_atomically(&path, &[bytes]);
    }
}

fn cached(opts: &WebOptions, url: &str) -> Option<(Meta, Vec<u8>)> {
    let root = &opts.cache;
    let (meta, body) = cache_files(root, url);
    let meta: Meta = serde_json::from_slice(&crate::store::read_regular(&meta)?).ok()?;
    if meta.url != url || !meta.sound(&opts.key) {
        return None;
    }
    let bytes = crate::store::read_regular(&body)?;
    (sha256_hex(&bytes) == meta.sha256).then_some((meta, bytes))
}

fn store(opts: &WebOptions, url: &str, doc: &WebDoc) -> std::io::Result<()> {
    let root = &opts.cache;
    let (meta_path, body_path) = cache_files(root, url);
    if let Some(dir) = meta_path.parent() {
        // Never into a directory a planted link names, outside the cache.
        if std::fs::symlink_metadata(dir).is_ok_and(|m| !m.is_dir()) {
            return Err(std::io::Error::other(format!(
                "`{}` is not a directory (a symbolic link?); not written",
                dir.display()
            )));
        }
        std::fs::create_dir_all(dir)?;
    }
    let mut meta = Meta {
        url: url.to_string(),
        etag: doc.etag.clone(),
        last_modified: doc.last_modified.clone(),
        sha256: doc.sha256.clone(),
        mac: String::new(),
    };
    meta.mac = pinaudit_core::hash::to_hex(&meta.tag(&opts.key));
    // The body first: a meta file never names a body that is not there. Both
    // through new files of random names, never through a planted link.
    crate::store::write_atomically(&body_path, &[&doc.bytes])?;
    let json = serde_json::to_vec(&meta).map_err(std::io::Error::other)?;
    crate::store::write_atomically(&meta_path, &[&json])
}

/// Waits out a `Retry-After` (seconds or an HTTP date) on 429 and 503 before the
/// retry middleware above it decides to try again; one that would end past
/// the deadline fails the request instead (a middleware error, which the retry
/// middleware does not retry).
struct HonourRetryAfter {
    deadline: Deadline,
}

#[async_trait::async_trait]
impl Middleware for HonourRetryAfter {
    async fn handle(
        &self,
        req: reqwest::Request,
        extensions: &mut ::http::Extensions,
        next: Next<'_>,
    ) -> reqwest_middleware::Result<reqwest::Response> {
        let res = next.run(req, extensions).await?;
        let status = res.status();
        if status == StatusCode::TOO_MANY_REQUESTS || status == StatusCode::SERVICE_UNAVAILABLE {
            if let Some(wait) = crate::client::retry_after_of(res.headers()) {
                if wait <= MAX_RETRY_AFTER {
                    self.deadline.sleep(wait).await.map_err(|past| {
                        reqwest_middleware::Error::middleware(std::io::Error::other(format!(
                            "the server answered `{status}` and asked to retry after {} s, {}",
                            past.wait.as_secs(),
                            past.past("")
                        )))
                    })?;
                }
            }
        }
        Ok(res)
    }
}

fn client(opts: &WebOptions, deadline: Deadline) -> Result<ClientWithMiddleware, String> {
    let inner = crate::client::build(&crate::client::ClientOptions {
        timeout: opts.timeout,
        network: &opts.network,
        allow_local: opts.allow_local,
        redirects: crate::client::Redirects::FollowPublic,
    })?;
    let policy = ExponentialBackoff::builder()
        .retry_bounds(Duration::from_millis(100), Duration::from_secs(5))
        .build_with_max_retries(3);
    Ok(ClientBuilder::new(inner)
        .with(RetryTransientMiddleware::new_with_policy(policy))
        .with(HonourRetryAfter { deadline })
        .build())
}

fn network(url: &str, reason: impl Into<String>) -> FetchError {
    failed(url, reason, crate::NetworkCause::Unreachable)
}

fn failed(url: &str, reason: impl Into<String>, cause: crate::NetworkCause) -> FetchError {
    FetchError::Network {
        url: pinaudit_core::url::redact(url),
        reason: reason.into(),
        cause,
    }
}

/// Fetches one document: conditional on what the cache holds, capped in size.
async fn fetch_one(
    client: &ClientWithMiddleware,
    url: &str,
    opts: &WebOptions,
    bar: Option<&dyn crate::progress::Line>,
) -> Result<WebDoc, FetchError> {
    let parsed = reqwest::Url::parse(url).map_err(|e| network(url, format!("not a URL: {e}")))?;
    if let Some(why) = refused(&parsed, opts.allow_local) {
        return Err(network(url, why));
    }
    let previous = cached(opts, url);
    let mut req = client.get(parsed);
    if let Some((meta, _)) = &previous {
        if let Some(etag) = &meta.etag {
            req = req.header(IF_NONE_MATCH, etag);
        }
        if let Some(lm) = &meta.last_modified {
            req = req.header(IF_MODIFIED_SINCE, lm);
        }
    }
    let res = req.send().await.map_err(|e| network(url, describe(&e)))?;
    let header = |name: reqwest::header::HeaderName| {
        res.headers()
            .get(name)
            .and_then(|v: &reqwest::header::HeaderValue| v.to_str().ok())
            .map(str::to_string)
    };
    let (etag, last_modified) = (header(ETAG), header(LAST_MODIFIED));
    if res.status() == StatusCode::NOT_MODIFIED {
        if let Some((meta, bytes)) = previous {
            // Kept by an earlier version before versions were kept by sha256.
            keep_version(&opts.cache, &meta.sha256, &bytes);
            return Ok(WebDoc {
                sha256: meta.sha256,
                bytes,
                etag: etag.or(meta.etag),
                last_modified: last_modified.or(meta.last_modified),
                revalidated: true,
            });
        }
    }
    if res.status().is_redirection() {
        // reqwest follows only http(s) redirects: one it returns was not followed.
        let to = header(reqwest::header::LOCATION).unwrap_or_default();
        return Err(network(
            url,
            format!(
                "redirect to `{}` refused: only http(s) redirects are followed",
                pinaudit_core::url::redact(&to)
            ),
        ));
    }
    if !res.status().is_success() {
        return Err(network(
            url,
            format!("the server answered `{}`", res.status()),
        ));
    }
    if res.content_length().is_some_and(|n| n > opts.max_size) {
        return Err(too_big(url, opts.max_size));
    }
    let mut bytes: Vec<u8> = Vec::new();
    let mut res = res;
    loop {
        match res.chunk().await {
            Ok(Some(chunk)) => {
                if bytes.len() as u64 + chunk.len() as u64 > opts.max_size {
                    return Err(too_big(url, opts.max_size));
                }
                bytes.extend_from_slice(&chunk);
                if let Some(bar) = bar {
                    bar.message(format!(
                        "{}: {}",
                        pinaudit_core::url::redact(url),
                        crate::progress::human_bytes(bytes.len() as u64)
                    ));
                }
            }
            Ok(None) => break,
            Err(e) => return Err(network(url, describe(&e))),
        }
    }
    let doc = WebDoc {
        sha256: sha256_hex(&bytes),
        bytes,
        etag,
        last_modified,
        revalidated: false,
    };
    // A cache that cannot be written costs the next run a body, not this one.
    // Every version is kept by its sha256 beside the latest: a changed page
    // never overwrites the one a record recorded.
    keep_version(&opts.cache, &doc.sha256, &doc.bytes);
    let _ = store(opts, url, &doc);
    Ok(doc)
}

fn too_big(url: &str, max: u64) -> FetchError {
    failed(
        url,
        format!(
            "the document is larger than `{}` (raise --max-document-size)",
            crate::progress::human_bytes(max)
        ),
        crate::NetworkCause::Limit,
    )
}

/// Each URL's document, or why there is none.
type Fetched = HashMap<String, Result<WebDoc, Arc<FetchError>>>;

/// Fetches every URL once, at most [`PER_HOST`] at a time per host, on one
/// runtime. Offline, only the cache answers.
pub(crate) fn fetch_all(
    urls: &[String],
    opts: &WebOptions,
    progress: Option<&Arc<dyn crate::progress::Progress>>,
) -> Fetched {
    let mut unique: Vec<String> = urls.to_vec();
    unique.sort();
    unique.dedup();
    if unique.is_empty() {
        return HashMap::new();
    }
    if opts.offline {
        return from_cache(unique, opts);
    }
    let runtime = match crate::client::runtime(Some(2)) {
        Ok(rt) => rt,
        Err(e) => return all_failed(unique, &format!("cannot start the HTTP workers: {e}")),
    };
    let deadline = Deadline::new(opts.deadline);
    let client = match client(opts, deadline) {
        Ok(c) => c,
        Err(why) => return all_failed(unique, &why),
    };
    let hosts = by_host(unique);
    runtime.block_on(fetch_by_host(hosts, &client, opts, deadline, progress))
}

/// Offline: each URL's document as the cache holds it.
fn from_cache(urls: Vec<String>, opts: &WebOptions) -> Fetched {
    urls.into_iter()
        .map(|url| {
            let r = cached(opts, &url)
                .map(|(meta, bytes)| WebDoc {
                    sha256: meta.sha256,
                    bytes,
                    etag: meta.etag,
                    last_modified: meta.last_modified,
                    revalidated: false,
                })
                .ok_or_else(|| Arc::new(network(&url, "not in cache")));
            (url, r)
        })
        .collect()
}

/// Every URL failed for one reason.
fn all_failed(urls: Vec<String>, why: &str) -> Fetched {
    urls.into_iter()
        .map(|url| {
            let err = network(&url, why);
            (url, Err(Arc::new(err)))
        })
        .collect()
}

/// The URLs of each host, in order, hosts in the order they first appear.
fn by_host(urls: Vec<String>) -> Vec<(String, VecDeque<String>)> {
    let mut hosts: Vec<(String, VecDeque<String>)> = Vec::new();
    for url in urls {
        let host = ::url::Url::parse(&url)
            .ok()
            .and_then(|u| u.host_str().map(str::to_string))
            .unwrap_or_default();
        match hosts.iter_mut().find(|(h, _)| *h == host) {
            Some((_, queue)) => queue.push_back(url),
            None => hosts.push((host, VecDeque::from([url]))),
        }
    }
    hosts
}

/// Per host, [`PER_HOST`] lanes take the host's URLs from one queue in order,
/// so documents start in a known order whatever the scheduler does (a silent
/// host delays its own documents, never those listed before them). All hosts
/// start together.
async fn fetch_by_host(
    hosts: Vec<(String, VecDeque<String>)>,
    client: &ClientWithMiddleware,
    opts: &WebOptions,
    deadline: Deadline,
    progress: Option<&Arc<dyn crate::progress::Progress>>,
) -> Fetched {
    let mut handles = Vec::new();
    for (_, queue) in hosts {
        let queue = Arc::new(Mutex::new(queue));
        for _ in 0..PER_HOST {
            handles.push(tokio::spawn(lane(
                queue.clone(),
                client.clone(),
                opts.clone(),
                deadline,
                progress.cloned(),
            )));
        }
    }
    let mut out = HashMap::new();
    for h in handles {
        if let Ok(done) = h.await {
            for (url, r) in done {
                out.insert(url, r.map_err(Arc::new));
            }
        }
    }
    out
}

/// One lane of a host: its next URL until the queue is empty, each done by the
/// deadline or failed as past it.
async fn lane(
    queue: Arc<Mutex<VecDeque<String>>>,
    client: ClientWithMiddleware,
    opts: WebOptions,
    deadline: Deadline,
    progress: Option<Arc<dyn crate::progress::Progress>>,
) -> Vec<(String, Result<WebDoc, FetchError>)> {
    let mut done = Vec::new();
    loop {
        let next = queue.lock().unwrap_or_else(|e| e.into_inner()).pop_front();
        let Some(url) = next else { break };
        let bar = progress
            .as_ref()
            .map(|p| p.web_document(&pinaudit_core::url::redact(&url)));
        let r = tokio::time::timeout_at(
            deadline.ends().into(),
            fetch_one(&client, &url, &opts, bar.as_deref()),
        )
        .await
        .unwrap_or_else(|_| {
            Err(failed(
                &url,
                deadline.timed_out("the web documents"),
                crate::NetworkCause::Limit,
            ))
        });
        if let Some(bar) = bar {
            bar.finish();
        }
        done.push((url, r));
    }
    done
}

/// The web as a provider of documents: it fetches the [`super::Target::Web`]
/// targets, each URL once, and answers [`super::Web`] questions; the git cache
/// beside it in the router answers the rest, so an audit stays one pipeline.
pub struct WebProvider {
    opts: WebOptions,
    /// Who is told how fetching goes; `None`: nobody watches.
    progress: Option<Arc<dyn crate::progress::Progress>>,
    /// Shared with forks: fetched once, read by every checking thread.
    docs: Arc<HashMap<String, Result<WebDoc, Arc<FetchError>>>>,
}

impl WebProvider {
    pub fn new(opts: WebOptions, progress: Option<Arc<dyn crate::progress::Progress>>) -> Self {
        WebProvider {
            opts,
            progress,
            docs: Arc::new(HashMap::new()),
        }
    }
}

impl super::Provider for WebProvider {
    fn prefetch(&mut self, targets: &[&super::Target]) {
        let urls: Vec<String> = targets
            .iter()
            .filter_map(|t| match t {
                super::Target::Web(url) => Some(url.clone()),
                _ => None,
            })
            .collect();
        self.docs = Arc::new(fetch_all(&urls, &self.opts, self.progress.as_ref()));
    }

    fn fork(&self) -> Option<Box<dyn super::Provider>> {
        Some(Box::new(WebProvider {
            opts: self.opts.clone(),
            progress: None,
            docs: self.docs.clone(),
        }))
    }

    fn web(&self) -> Option<&dyn super::Web> {
        Some(self)
    }
}

impl super::Web for WebProvider {
    fn recorded(&self, sha256: &str) -> Option<Vec<u8>> {
        kept_version(&self.opts.cache, sha256)
    }

    fn web(&self, url: &str) -> Result<WebDoc, super::Unchecked> {
        match self.docs.get(url) {
            Some(Ok(doc)) => Ok(doc.clone()),
            Some(Err(_)) if self.opts.offline => Err(super::Unchecked::NotCached),
            Some(Err(error)) => Err(super::Unchecked::Fetch {
                remote: url.to_string(),
                error: error.clone(),
            }),
            None => Err(super::Unchecked::Unresolvable(
                crate::sources::Skip::NotFetched,
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A cached document's meta verifies under the key that wrote it, with
    /// this version's MAC or an earlier version's HMAC-SHA256, and not with
    /// another key, a changed field or a mangled tag.
    #[test]
    fn a_cached_documents_meta_verifies_now_and_as_earlier_versions_wrote_it() {
        use hmac::Mac as _;
        let key = crate::cache_key::CacheKey::from_secret(b"web tests");
        let hex = pinaudit_core::hash::to_hex;
        let mut meta = Meta {
            url: "https://example.org/results.md".into(),
            etag: Some("\"v1\"".into()),
            last_modified: None,
            sha256: "ab".repeat(32),
            mac: String::new(),
        };
        meta.mac = hex(&meta.tag(&key));
        assert!(meta.sound(&key));
        assert!(!meta.sound(&crate::cache_key::CacheKey::from_secret(b"other")));
        let mut hmac = <hmac::Hmac<sha2::Sha256> as hmac::Mac>::new_from_slice(b"web tests")
            .expect("any length");
        meta.with_parts(|parts| parts.iter().for_each(|p| hmac.update(p)));
        meta.mac = hex(&hmac.finalize().into_bytes());
        assert!(meta.sound(&key), "an earlier version's");
        for bad in [&meta.mac[..63], "zz", "é", ""] {
            let m = Meta {
                mac: bad.to_string(),
                ..Meta::default()
            };
            assert!(!m.sound(&key), "{bad:?}");
        }
        meta.etag = Some("\"v2\"".into());
        assert!(!meta.sound(&key), "a changed field");
    }

    #[test]
    fn archived_and_content_addressed_urls_are_immutable() {
        assert!(is_immutable(
            "https://web.archive.org/web/20240101120000/https://example.com/p"
        ));
        assert!(is_immutable(
            "https://web.archive.org/web/20240101120000id_/https://example.com/p"
        ));
        assert!(!is_immutable(
            "https://web.archive.org/web/2024/https://example.com/p"
        ));
        assert!(!is_immutable(
            "https://web.archive.org/web/*/https://example.com/p"
        ));
        assert!(is_immutable(
            "https://ipfs.io/ipfs/bafybeigdyrzt5sfp7udm7hu76uh7y26nf3efuylqabf3oclgtqy55fbzdi"
        ));
        assert!(!is_immutable("https://example.com/paper.html"));
    }
}
