//! Asking Software Heritage to keep what records cite, before they are published.
//!
//! Two calls of its public API (<https://archive.softwareheritage.org/api/1/>):
//! "save code now", `POST origin/save/git/url/<origin>/`, one per repository,
//! which queues a visit of the repository and answers a save request (its `id`,
//! `save_request_status`, `save_task_status`, `request_url`); and
//! `POST known/`, which takes a list of SWHIDs and answers, for each, whether
//! the archive holds the object (`{"<swhid>": {"known": true}}`), so the pinned
//! commits of every record are asked about in one call (of at most
//! [`KNOWN_BATCH`] SWHIDs; more take one call per batch).
//!
//! Manners, as for every fetch: the API's host is refused unless it is public
//! (`--allow-local` lets a test server on loopback answer), by its text and by
//! the addresses its name resolves to (`crate::net::Resolver`); redirects are
//! not followed, so nothing, the `SWH_TOKEN` bearer token least of all, goes
//! to any host but the API's. A `429 Too Many Requests` (or a 503) is waited
//! out, for its `Retry-After` or until its `X-RateLimit-Reset`, and an answer
//! saying `X-RateLimit-Remaining: 0` makes the next call wait for the reset,
//! but never past `--deadline`: a wait that would end after it fails the call
//! at once, with the reason, and no call starts after it.

use std::collections::HashMap;
use std::time::Duration;

use reqwest::header::AUTHORIZATION;
use reqwest::StatusCode;
use serde::Deserialize;

use crate::client::{asked_to_wait, causes, Deadline, RateLimit};

/// Most SWHIDs the archive takes in one `known/` call.
pub const KNOWN_BATCH: usize = 1000;
/// The archive's public API, `--swh-url`'s default.
pub const DEFAULT_API: &str = crate::provider::swh::DEFAULT_URL;
/// How often one call is tried when the archive asks to wait.
const ATTEMPTS: usize = 3;

/// How the archive is asked.
#[derive(Debug, Clone)]
pub struct SaveOptions {
    /// The API's base URL, ending in `/`.
    pub api: String,
    /// `SWH_TOKEN`: sent as a bearer token to the API's host only.
    pub token: Option<String>,
    /// For connecting, and for each answer.
    pub timeout: Duration,
    /// For all the calls together, waits included.
    pub deadline: Duration,
    pub allow_local: bool,
    /// Where names resolve (`--resolve` pins), as for every other fetch.
    pub network: crate::net::Network,
}

/// What the archive answered a save request (fields it leaves out are `None`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct SaveRequest {
    /// The request's id, to follow it (`origin/save/<id>/`).
    #[serde(default)]
    pub id: Option<u64>,
    /// `accepted`, `rejected` or `pending` (waiting for a moderator).
    #[serde(default)]
    pub save_request_status: Option<String>,
    /// `not created`, `not yet scheduled`, `scheduled`, `running`, `succeeded`, `failed`.
    #[serde(default)]
    pub save_task_status: Option<String>,
    /// Where the request's state can be read.
    #[serde(default)]
    pub request_url: Option<String>,
}

impl SaveRequest {
    /// Whether the archive refused to save the repository.
    pub fn rejected(&self) -> bool {
        self.save_request_status.as_deref() == Some("rejected")
    }
}

/// Everything the archive answered.
#[derive(Debug, Clone)]
pub struct Preserved {
    /// Per origin, in the order given: the save request, or why there is none.
    pub saves: Vec<(String, Result<SaveRequest, String>)>,
    /// Per SWHID asked about: whether the archive holds it, or why that is not known.
    pub known: HashMap<String, Result<bool, String>>,
}

/// Asks the archive to save each origin, then which of `swhids` it holds.
/// Never fails as a whole: each answer says what went wrong with it.
pub fn preserve(origins: &[String], swhids: &[String], opts: &SaveOptions) -> Preserved {
    let everything_failed = |why: String| Preserved {
        saves: origins
            .iter()
            .map(|o| (o.clone(), Err(why.clone())))
            .collect(),
        known: swhids
            .iter()
            .map(|s| (s.clone(), Err(why.clone())))
            .collect(),
    };
    let runtime = match crate::client::runtime(None) {
        Ok(rt) => rt,
        Err(e) => return everything_failed(format!("cannot start the HTTP runtime: {e}")),
    };
    let archive = match Archive::new(opts) {
        Ok(a) => a,
        Err(why) => return everything_failed(why),
    };
    runtime.block_on(async {
        let mut saves = Vec::with_capacity(origins.len());
        for origin in origins {
            let url = format!(
                "{}origin/save/git/url/{}/",
                opts.api,
                origin_segment(origin)
            );
            let answer = archive.post(&url, None).await.and_then(|body| {
                serde_json::from_slice::<SaveRequest>(&body)
                    .map_err(|e| format!("the archive's answer is not a save request: {e}"))
            });
            saves.push((origin.clone(), answer));
        }
        let mut known = HashMap::with_capacity(swhids.len());
        for batch in swhids.chunks(KNOWN_BATCH) {
            let body = serde_json::to_vec(batch).unwrap_or_default();
            let answer = archive
                .post(&format!("{}known/", opts.api), Some(body))
                .await
                .and_then(|body| {
                    serde_json::from_slice::<HashMap<String, Known>>(&body).map_err(|e| {
                        format!("the archive's answer to `known/` is not a map of SWHIDs: {e}")
                    })
                });
            for swhid in batch {
                let one = match &answer {
                    Ok(map) => map.get(swhid).map(|k| k.known).ok_or_else(|| {
                        "the archive's answer to `known/` leaves it out".to_string()
                    }),
                    Err(why) => Err(why.clone()),
                };
                known.insert(swhid.clone(), one);
            }
        }
        Preserved { saves, known }
    })
}

#[derive(Debug, Deserialize)]
struct Known {
    known: bool,
}

/// An origin URL as the last segments of a save request's path: as written
/// (the API reads the URL there whole), but for what would end the path or
/// break the request line.
fn origin_segment(origin: &str) -> String {
    const BREAKS: &percent_encoding::AsciiSet = &percent_encoding::CONTROLS
        .add(b' ')
        .add(b'"')
        .add(b'<')
        .add(b'>')
        .add(b'`')
        .add(b'#')
        .add(b'?')
        .add(b'{')
        .add(b'}');
    percent_encoding::utf8_percent_encode(origin, BREAKS).to_string()
}

/// One client for the API, with what its answers said about the rate limit.
struct Archive<'a> {
    client: reqwest::Client,
    opts: &'a SaveOptions,
    deadline: Deadline,
    /// When the rate limit resets, after an answer said none is left.
    limit: RateLimit,
}

impl<'a> Archive<'a> {
    fn new(opts: &'a SaveOptions) -> Result<Archive<'a>, String> {
        let api = reqwest::Url::parse(&opts.api)
            .map_err(|e| format!("`{}` is not a URL: {e}", opts.api))?;
        if let Some(why) = crate::client::refused(&api, opts.allow_local) {
            return Err(format!("the archive at `{}` is refused: {why}", opts.api));
        }
        let client = crate::client::build(&crate::client::ClientOptions {
            timeout: opts.timeout,
            network: &opts.network,
            allow_local: opts.allow_local,
            // The token goes to the API's host and nowhere else: no redirect is followed.
            redirects: crate::client::Redirects::Refuse,
        })?;
        Ok(Archive {
            client,
            opts,
            deadline: Deadline::new(opts.deadline),
            limit: RateLimit::default(),
        })
    }

    /// Waits `wait`, unless that would end past the deadline: then why not.
    async fn wait(&self, wait: Duration, what: &str) -> Result<(), String> {
        self.deadline.sleep(wait).await.map_err(|past| {
            format!(
                "{what} and asked to wait {} s, {}",
                past.wait_secs(),
                past.past("")
            )
        })
    }

    /// POSTs to `url` (a JSON `body`, or none) and gives the answer's body.
    async fn post(&self, url: &str, body: Option<Vec<u8>>) -> Result<Vec<u8>, String> {
        if self.deadline.passed() {
            return Err(self.deadline.timed_out("the calls to the archive"));
        }
        // Kept until waited out: every later call is refused the same way.
        let spent = self.limit.until_reset();
        if !spent.is_zero() {
            self.wait(spent, "the archive said its rate limit is used up")
                .await?;
        }
        for attempt in 1..=ATTEMPTS {
            let mut req = self.client.post(url);
            if let Some(token) = &self.opts.token {
                req = req.header(AUTHORIZATION, format!("Bearer {token}"));
            }
            if let Some(b) = &body {
                req = req
                    .header(reqwest::header::CONTENT_TYPE, "application/json")
                    .body(b.clone());
            }
            let res = match req.send().await {
                Ok(res) => res,
                Err(e) => return Err(format!("cannot reach the archive: {}", causes(&e))),
            };
            let status = res.status();
            let headers = res.headers().clone();
            if status == StatusCode::TOO_MANY_REQUESTS || status == StatusCode::SERVICE_UNAVAILABLE
            {
                let said = format!("the archive answered `{status}`");
                match asked_to_wait(&headers) {
                    Some(wait) if attempt < ATTEMPTS => {
                        self.wait(wait, &said).await?;
                        continue;
                    }
                    Some(_) => return Err(format!("{said} {ATTEMPTS} times")),
                    None => return Err(said),
                }
            }
            self.limit.note(&headers);
            let bytes = res
                .bytes()
                .await
                .map_err(|e| format!("the archive's answer broke off: {}", causes(&e)))?;
            if status.is_redirection() {
                return Err(format!(
                    "the archive answered `{status}`; redirects are not followed (give the API's own address with --swh-url)"
                ));
            }
            if !status.is_success() {
                return Err(match reason_of(&bytes) {
                    Some(why) => format!("the archive answered `{status}`: {why}"),
                    None => format!("the archive answered `{status}`"),
                });
            }
            return Ok(bytes.to_vec());
        }
        Err("the archive asked to wait too many times".into())
    }
}

/// The `reason` an API error carries (`{"exception": …, "reason": …}`), on one
/// line and cut short.
fn reason_of(body: &[u8]) -> Option<String> {
    #[derive(Deserialize)]
    struct ApiError {
        reason: String,
    }
    let reason = serde_json::from_slice::<ApiError>(body).ok()?.reason;
    let one_line: String = reason.split_whitespace().collect::<Vec<_>>().join(" ");
    Some(one_line.chars().take(300).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_keep_their_slashes_and_lose_what_would_end_the_path() {
        assert_eq!(
            origin_segment("https://github.com/o/r"),
            "https://github.com/o/r"
        );
        assert_eq!(
            origin_segment("https://h/o/r x#y?z"),
            "https://h/o/r%20x%23y%3Fz"
        );
    }

    #[test]
    fn api_errors_give_their_reason_on_one_line() {
        let body = br#"{"exception":"ForbiddenExc","reason":"The origin url\nis not allowed."}"#;
        assert_eq!(
            reason_of(body).as_deref(),
            Some("The origin url is not allowed.")
        );
        assert_eq!(reason_of(b"<html>"), None);
    }
}
