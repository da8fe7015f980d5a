//! Software Heritage as a provider of archived git documents ([`Archives`]):
//! asked, while records are checked, for a document whose forge lost the
//! repository or the commit, or could not be reached while the cache lacks it.
//!
//! Software Heritage names objects by git's own ids, so the pinned commit is
//! looked up as it is (its public REST API, `https://archive.softwareheritage.org/api/1/`),
//! and every answer is proven before it is used ([`super::swh_proof`]):
//!
//! 1. `revision/<commit>/`: the commit, whose fields must hash, as a git commit
//!    object, to the cited id;
//! 2. `origin/<repository>/visits/`, `snapshot/<id>/` (and `release/<id>/`,
//!    `revision/<tip>/log/`): a visit of the cited repository has a branch
//!    reaching the commit;
//! 3. `directory/<tree>/` down the cited path: each listing must hash, as a
//!    git tree object, to the id above it;
//! 4. `content/sha1_git:<blob>/raw/`: the bytes, refused unless they hash to
//!    the blob id (and to the listed sha256) before anything reads them.
//!
//! None of it for what the cache holds: proven answers are kept in
//! `CACHE/archive/software-heritage/` ([`ArchiveStore`]), found objects for
//! good (and proven again when read), "not archived" for a day; an answer that
//! does not prove is never kept. The API's rate-limit
//! headers (`X-RateLimit-Remaining`, `X-RateLimit-Reset`) and `Retry-After`
//! are honoured within `--deadline`; a wait past it leaves the source
//! unchecked, with the reason. `SWH_TOKEN` goes as a bearer token to the
//! archive's own origin only (never across a redirect: reqwest drops it). Hosts
//! are judged as for every other fetch: public ones only unless `--allow-local`,
//! by name and by the addresses a name resolves to (`crate::net`).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use reqwest::StatusCode;

use git2::ObjectType;

use super::archive::{ArchiveAnswer, ArchiveRef, Archived, Archives};
use super::swh_proof;
use super::{DocRef, Provider, Skip, Snapshot, Target, Unchecked};
use crate::client::{Deadline, RateLimit};
use crate::store::{ArchiveStore, Kept};
use crate::{sha256_hex, FetchError};

/// The public API, by default (`--swh-url`).
pub const DEFAULT_URL: &str = "https://archive.softwareheritage.org/api/1/";
/// The service's name: the report's `archive.service`, the cache directory.
const SERVICE: &str = "software-heritage";
/// Requests of one call answered `429`/`503` before giving up.
const ATTEMPTS: usize = 4;
/// The wait after a `429` that says nothing of when to come back.
const DEFAULT_WAIT: Duration = Duration::from_secs(1);

/// How an archive is asked (Software Heritage, the Wayback Machine).
#[derive(Debug, Clone)]
pub struct ArchiveOptions {
    /// The API's base URL, ending in `/` (`--swh-url`, `--wayback-url`).
    pub url: String,
    pub cache: PathBuf,
    /// Only what the cache holds is read.
    pub offline: bool,
    pub timeout: Duration,
    /// The longest time all calls to the archive may take, waits included.
    pub deadline: Duration,
    pub allow_local: bool,
    /// The largest document read, in bytes.
    pub max_size: u64,
    /// A bearer token for the archive's own origin (`SWH_TOKEN`).
    pub token: Option<String>,
    /// Where names resolve (`--resolve` pins), as for every other fetch.
    pub network: crate::net::Network,
    /// The key kept answers are authenticated under (the cache's).
    pub key: crate::cache_key::CacheKey,
}

/// Software Heritage, shared by every fork: one cache of answers, one client.
#[derive(Clone)]
pub struct SwhProvider {
    inner: Arc<Shared>,
}

/// What an archive provider (Software Heritage, the Wayback Machine) shares
/// with its forks: its options, its store of answers, the client made on the
/// first question the cache cannot answer, and this run's answers.
pub(crate) struct Shared {
    pub(crate) opts: ArchiveOptions,
    pub(crate) store: ArchiveStore,
    /// Who is asked, as failures name it ("asking Software Heritage: …").
    asked: &'static str,
    /// Made on the first question the cache cannot answer.
    net: OnceLock<Result<Net, String>>,
    /// This run's answers, by a key of two parts (for Software Heritage the
    /// commit and the path): sources citing one document ask once.
    answers: Mutex<HashMap<(String, String), ArchiveAnswer>>,
}

impl Shared {
    /// The plumbing of the archive `asked`, its answers kept in the cache's
    /// directory for `service`.
    pub(crate) fn new(opts: ArchiveOptions, service: &str, asked: &'static str) -> Arc<Shared> {
        let store = ArchiveStore::new(&opts.cache, service, opts.key.clone());
        Arc::new(Shared {
            opts,
            store,
            asked,
            net: OnceLock::new(),
            answers: Mutex::default(),
        })
    }

    /// This run's answer for `key`: the one given before, else `lookup`'s,
    /// kept for the next question.
    pub(crate) fn answer(
        &self,
        key: (String, String),
        lookup: impl FnOnce(&(String, String)) -> ArchiveAnswer,
    ) -> ArchiveAnswer {
        if let Some(known) = lock(&self.answers).get(&key) {
            return known.clone();
        }
        let answer = lookup(&key);
        lock(&self.answers).insert(key, answer.clone());
        answer
    }

    /// One call to the API.
    pub(crate) fn fetch(&self, endpoint: &str) -> Result<Got, ArchiveAnswer> {
        let url = format!("{}{endpoint}", self.opts.url);
        let failed = |reason: String| {
            ArchiveAnswer::Failed(Unchecked::Fetch {
                remote: url.clone(),
                error: Arc::new(FetchError::Network {
                    url: pinaudit_core::url::redact(&url),
                    reason: format!("asking {}: {reason}", self.asked),
                    cause: pinaudit_core::error::NetworkCause::Unreachable,
                }),
            })
        };
        let net = match self.net.get_or_init(|| Net::new(&self.opts)) {
            Ok(net) => net,
            Err(why) => return Err(failed(why.clone())),
        };
        net.runtime
            .block_on(get(net, &self.opts, &url))
            .map_err(failed)
    }
}

/// The client of an archive, on its own runtime, with the deadline of all its
/// calls and what its answers said of the rate limit.
struct Net {
    runtime: tokio::runtime::Runtime,
    client: reqwest::Client,
    deadline: Deadline,
    limit: RateLimit,
}

impl SwhProvider {
    pub fn new(opts: ArchiveOptions) -> SwhProvider {
        SwhProvider {
            inner: Shared::new(opts, SERVICE, "Software Heritage"),
        }
    }
}

impl Provider for SwhProvider {
    /// Nothing ahead of time: the archive is asked only for what a forge lost,
    /// which is known once the git cache has synced.
    fn prefetch(&mut self, _targets: &[&Target]) {}

    fn fork(&self) -> Option<Box<dyn Provider>> {
        Some(Box::new(self.clone()))
    }

    fn archives(&self) -> Option<&dyn Archives> {
        Some(self)
    }
}

impl Archives for SwhProvider {
    fn archived(&self, r: &DocRef) -> ArchiveAnswer {
        let key = (r.commit.as_str().to_string(), r.path.clone());
        self.inner.answer(key, |_| self.inner.lookup(r))
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

pub(crate) fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// What one call to the API came back with.
pub(crate) enum Got {
    Found(Vec<u8>),
    NotArchived,
}

/// A directory entry of the cited path: its blob id and sha256, when given.
struct Entry {
    blob: String,
    sha256: Option<String>,
}

/// The most visits of an origin, and branch tips of their snapshots, looked
/// at to tell whether the origin held a commit; each tip's history is read
/// as far as one `log` answer goes ([`LOG_LIMIT`] commits).
const MAX_VISITS: usize = 10;
const MAX_TIPS: usize = 20;
const LOG_LIMIT: usize = 1000;

impl Shared {
    /// The cited document as Software Heritage holds it, every id on the way
    /// recomputed here (`super::swh_proof`): the revision hashes to the cited
    /// commit, each directory listing on the path to the id above it, the
    /// bytes to the blob; and the cited repository held the commit (a visit
    /// of that origin has a branch reaching it). What is not proven is not
    /// used, and not kept.
    fn lookup(&self, r: &DocRef) -> ArchiveAnswer {
        let commit = r.commit.as_str();
        let short = r.commit.short();
        let rev = match self.proven(
            &format!("rev:{commit}"),
            &format!("revision/{commit}/"),
            |v| prove_revision(v, commit),
        ) {
            Ok(Some(rev)) => rev,
            Ok(None) => {
                return ArchiveAnswer::NotArchived(format!(
                    "not archived either: Software Heritage does not hold commit `{short}`"
                ))
            }
            Err(answer) => return answer,
        };
        let commit_time = match revision_time(&rev, commit) {
            Ok(t) => t,
            Err(why) => return damaged(why),
        };
        let origin = pinaudit_core::check::archive::repository_name(&r.remote);
        match self.reaches(&origin, commit) {
            Ok(true) => {}
            Ok(false) => {
                return ArchiveAnswer::NotArchived(format!(
                    "not archived either: Software Heritage holds commit `{short}`, but no visit \
                     of `{origin}` it recorded has a branch reaching it"
                ))
            }
            Err(answer) => return answer,
        }
        let entry = match self.walk(&rev, r) {
            Ok(entry) => entry,
            Err(answer) => return answer,
        };
        let bytes = match self.content(&entry) {
            Ok(bytes) => bytes,
            Err(answer) => return answer,
        };
        let swhid = swhid(r, &entry.blob);
        ArchiveAnswer::Found(Box::new(Archived {
            snapshot: Snapshot {
                sha256: sha256_hex(&bytes),
                bytes,
                loaded: true,
                git_blob: Some(entry.blob),
                streamed: false,
            },
            commit_time,
            at: ArchiveRef::SoftwareHeritage { swhid },
        }))
    }

    /// The cited path's blob, read down from the revision's tree one proven
    /// directory listing at a time.
    fn walk(&self, rev: &serde_json::Value, r: &DocRef) -> Result<Entry, ArchiveAnswer> {
        let short = r.commit.short();
        let path = r.path.trim_matches('/');
        let not_there = || {
            ArchiveAnswer::NotArchived(format!(
                "not archived either: Software Heritage holds commit `{short}` but no file `{path}` in it"
            ))
        };
        let mut dir = rev["directory"].as_str().unwrap_or_default().to_string();
        let parts: Vec<&str> = path.split('/').collect();
        for (i, part) in parts.iter().enumerate() {
            let listing = self
                .proven(&format!("dir:{dir}"), &format!("directory/{dir}/"), |v| {
                    prove(ObjectType::Tree, &swh_proof::tree_object(v)?, &dir, "directory listing")
                })?
                .ok_or_else(|| {
                    ArchiveAnswer::NotArchived(format!(
                        "not archived either: Software Heritage holds commit `{short}` but not its directory `{dir}`"
                    ))
                })?;
            let entry = listing
                .as_array()
                .into_iter()
                .flatten()
                .find(|e| e["name"].as_str() == Some(part))
                .ok_or_else(not_there)?;
            let target = entry["target"]
                .as_str()
                .unwrap_or_default()
                .to_ascii_lowercase();
            let kind = entry["type"].as_str();
            if i + 1 == parts.len() {
                if kind != Some("file") {
                    return Err(not_there());
                }
                let sha256 = entry["checksums"]["sha256"].as_str().map(str::to_string);
                return Ok(Entry {
                    blob: target,
                    sha256,
                });
            }
            if kind != Some("dir") {
                return Err(not_there());
            }
            dir = target;
        }
        Err(not_there())
    }

    /// The JSON answer to `question` (kept, else by `endpoint`) once `prove`
    /// accepts it; `None` when the archive does not hold it. A kept answer
    /// that no longer proves is asked again; a new one that does not prove is
    /// not kept, and the source is not judged from it.
    fn proven(
        &self,
        question: &str,
        endpoint: &str,
        prove: impl Fn(&serde_json::Value) -> Result<(), String>,
    ) -> Result<Option<serde_json::Value>, ArchiveAnswer> {
        let check = |body: &[u8]| -> Result<serde_json::Value, String> {
            let v: serde_json::Value = serde_json::from_slice(body)
                .map_err(|e| format!("the answer to `{endpoint}` is not JSON: {e}"))?;
            prove(&v)?;
            Ok(v)
        };
        let now = now_secs();
        match self.store.get(question, now) {
            Some(Kept::Found(body)) => {
                if let Ok(v) = check(&body) {
                    return Ok(Some(v));
                }
            }
            Some(Kept::NotArchived) => return Ok(None),
            None => {}
        }
        if self.opts.offline {
            return Err(ArchiveAnswer::NotAsked);
        }
        match self.fetch(endpoint)? {
            Got::Found(body) => {
                let v = check(&body).map_err(damaged)?;
                // A cache that cannot be written costs the next run a request.
                let _ = self.store.put_found(question, &body);
                Ok(Some(v))
            }
            Got::NotArchived => {
                let _ = self.store.put_not_archived(question, now);
                Ok(None)
            }
        }
    }

    /// Whether one of the visits of `origin` Software Heritage recorded has a
    /// branch reaching `commit` (the tip itself, or within [`LOG_LIMIT`]
    /// commits of its history). "Yes" is kept for good, "no" for a day.
    fn reaches(&self, origin: &str, commit: &str) -> Result<bool, ArchiveAnswer> {
        let question = format!("reach:{origin} {commit}");
        let now = now_secs();
        match self.store.get(&question, now) {
            Some(Kept::Found(_)) => return Ok(true),
            Some(Kept::NotArchived) => return Ok(false),
            None => {}
        }
        if self.opts.offline {
            return Err(ArchiveAnswer::NotAsked);
        }
        let reached = self.look_for(origin, commit)?;
        let _ = if reached {
            self.store.put_found(&question, b"reached")
        } else {
            self.store.put_not_archived(&question, now)
        };
        Ok(reached)
    }

    /// [`Self::reaches`], asked of the archive.
    fn look_for(&self, origin: &str, commit: &str) -> Result<bool, ArchiveAnswer> {
        let json = |endpoint: &str| -> Result<Option<serde_json::Value>, ArchiveAnswer> {
            match self.fetch(endpoint)? {
                Got::Found(body) => serde_json::from_slice(&body)
                    .map(Some)
                    .map_err(|e| damaged(format!("the answer to `{endpoint}` is not JSON: {e}"))),
                Got::NotArchived => Ok(None),
            }
        };
        let Some(visits) = json(&format!("origin/{origin}/visits/"))? else {
            return Ok(false);
        };
        let mut snapshots: Vec<String> = Vec::new();
        for v in visits.as_array().into_iter().flatten() {
            if let Some(id) = v["snapshot"].as_str() {
                if !snapshots.iter().any(|s| s == id) && snapshots.len() < MAX_VISITS {
                    snapshots.push(id.to_string());
                }
            }
        }
        let mut tips: Vec<String> = Vec::new();
        for id in &snapshots {
            let Some(snapshot) = json(&format!("snapshot/{id}/"))? else {
                continue;
            };
            for tip in branch_tips(&snapshot["branches"], |release| {
                json(&format!("release/{release}/"))
                    .ok()
                    .flatten()
                    .filter(|r| r["target_type"].as_str() == Some("revision"))
                    .and_then(|r| r["target"].as_str().map(str::to_ascii_lowercase))
            }) {
                if tip.eq_ignore_ascii_case(commit) {
                    return Ok(true);
                }
                if !tips.contains(&tip) {
                    tips.push(tip);
                }
            }
        }
        for tip in tips.iter().take(MAX_TIPS) {
            let Some(log) = json(&format!("revision/{tip}/log/?limit={LOG_LIMIT}"))? else {
                continue;
            };
            let found = log.as_array().into_iter().flatten().any(|r| {
                r["id"]
                    .as_str()
                    .is_some_and(|id| id.eq_ignore_ascii_case(commit))
            });
            if found {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// The bytes of the entry's blob: from the cache when they still hash to
    /// it, else from the archive, refused unless they do.
    fn content(&self, entry: &Entry) -> Result<Vec<u8>, ArchiveAnswer> {
        let question = format!("cnt:{}", entry.blob);
        let now = now_secs();
        if let Some(Kept::Found(bytes)) = self.store.get(&question, now) {
            if content_problem(entry, &bytes).is_none() {
                return Ok(bytes);
            }
        }
        if self.opts.offline {
            return Err(ArchiveAnswer::NotAsked);
        }
        let endpoint = format!("content/sha1_git:{}/raw/", entry.blob);
        let bytes = match self.fetch(&endpoint)? {
            Got::Found(bytes) => bytes,
            Got::NotArchived => {
                return Err(ArchiveAnswer::NotArchived(format!(
                    "not archived either: Software Heritage lists blob `{}` but does not serve it",
                    entry.blob
                )))
            }
        };
        if let Some(why) = content_problem(entry, &bytes) {
            return Err(damaged(why));
        }
        // A cache that cannot be written costs the next run a request.
        let _ = self.store.put_found(&question, &bytes);
        Ok(bytes)
    }
}

impl Net {
    fn new(opts: &ArchiveOptions) -> Result<Net, String> {
        let runtime = crate::client::runtime(Some(1))
            .map_err(|e| format!("cannot start the HTTP workers: {e}"))?;
        let client = crate::client::build(&crate::client::ClientOptions {
            timeout: opts.timeout,
            network: &opts.network,
            allow_local: opts.allow_local,
            redirects: crate::client::Redirects::FollowPublic,
        })?;
        Ok(Net {
            runtime,
            client,
            deadline: Deadline::new(opts.deadline),
            limit: RateLimit::default(),
        })
    }

    /// Waits until `wait` has passed, unless that ends past the deadline:
    /// then why not.
    async fn wait(&self, wait: Duration, what: &str, opts: &ArchiveOptions) -> Result<(), String> {
        self.deadline.sleep(wait).await.map_err(|past| {
            let token = match opts.url == DEFAULT_URL || opts.token.is_some() {
                true => ", or set SWH_TOKEN for a larger allowance",
                false => "",
            };
            format!(
                "{what}: waiting {} s for it would end {}",
                past.wait_secs(),
                past.past(token)
            )
        })
    }
}

/// `GET url`: its body, or that the archive does not hold it.
async fn get(net: &Net, opts: &ArchiveOptions, url: &str) -> Result<Got, String> {
    let parsed = reqwest::Url::parse(url).map_err(|e| format!("not a URL: {e}"))?;
    if let Some(why) = crate::client::refused(&parsed, opts.allow_local) {
        return Err(why);
    }
    let work = async {
        for _ in 0..ATTEMPTS {
            let spent = net.limit.until_reset();
            if !spent.is_zero() {
                net.wait(spent, "the archive's rate limit is spent", opts)
                    .await?;
            }
            let mut req = net.client.get(parsed.clone());
            if let Some(token) = &opts.token {
                if crate::credentials::is_origin_of(url, &opts.url) {
                    req = req.bearer_auth(token);
                }
            }
            let res = req.send().await.map_err(|e| crate::client::describe(&e))?;
            net.limit.note(res.headers());
            let status = res.status();
            if status == StatusCode::NOT_FOUND {
                return Ok(Got::NotArchived);
            }
            if status == StatusCode::TOO_MANY_REQUESTS || status == StatusCode::SERVICE_UNAVAILABLE
            {
                let wait = crate::client::retry_after_of(res.headers())
                    .or_else(|| Some(net.limit.until_reset()).filter(|d| !d.is_zero()))
                    .unwrap_or(DEFAULT_WAIT);
                let what = format!("the archive answered `{status}`");
                net.wait(wait, &what, opts).await?;
                continue;
            }
            if !status.is_success() {
                return Err(format!("the archive answered `{status}`"));
            }
            return read_body(res, opts.max_size).await.map(Got::Found);
        }
        Err(format!(
            "the archive answered `429 Too Many Requests` {ATTEMPTS} times"
        ))
    };
    match tokio::time::timeout_at(net.deadline.ends().into(), work).await {
        Ok(got) => got,
        Err(_) => Err(net.deadline.timed_out("the archive")),
    }
}

/// A response's body, refused past `max` bytes while it streams.
async fn read_body(mut res: reqwest::Response, max: u64) -> Result<Vec<u8>, String> {
    let too_big = || {
        format!(
            "the archived document is larger than `{}` (raise --max-document-size)",
            crate::progress::human_bytes(max)
        )
    };
    if res.content_length().is_some_and(|n| n > max) {
        return Err(too_big());
    }
    let mut bytes = Vec::new();
    while let Some(chunk) = res.chunk().await.map_err(|e| crate::client::describe(&e))? {
        if bytes.len() as u64 + chunk.len() as u64 > max {
            return Err(too_big());
        }
        bytes.extend_from_slice(&chunk);
    }
    Ok(bytes)
}

/// Why an archived answer cannot be used: the source is unchecked, never judged.
fn damaged(why: String) -> ArchiveAnswer {
    ArchiveAnswer::Failed(Unchecked::Unresolvable(Skip::ArchiveDamaged { why }))
}

/// Why `bytes` are not the blob of `entry`, if they are not.
fn content_problem(entry: &Entry, bytes: &[u8]) -> Option<String> {
    let id = git2::Oid::hash_object(git2::ObjectType::Blob, bytes).ok()?;
    if !id.to_string().eq_ignore_ascii_case(&entry.blob) {
        return Some(format!(
            "Software Heritage's bytes for blob `{}` hash to blob `{id}`",
            entry.blob
        ));
    }
    match &entry.sha256 {
        Some(listed) if !listed.eq_ignore_ascii_case(&sha256_hex(bytes)) => Some(format!(
            "Software Heritage lists sha256 `{listed}` for blob `{}`, its bytes hash otherwise",
            entry.blob
        )),
        _ => None,
    }
}

/// The committer time of a proven `revision/<commit>/` answer.
fn revision_time(rev: &serde_json::Value, commit: &str) -> Result<Option<(i64, i32)>, String> {
    let Some(date) = rev.get("committer_date").and_then(|v| v.as_str()) else {
        return Ok(None);
    };
    let t = time::OffsetDateTime::parse(date, &time::format_description::well_known::Rfc3339)
        .map_err(|e| format!("committer date `{date}` of `{commit}`: {e}"))?;
    Ok(Some((
        t.unix_timestamp(),
        t.offset().whole_minutes().into(),
    )))
}

/// Whether `rev` is the revision `commit`: it names that id (when it names
/// one) and the commit object it describes hashes to it.
fn prove_revision(rev: &serde_json::Value, commit: &str) -> Result<(), String> {
    if let Some(id) = rev.get("id").and_then(|v| v.as_str()) {
        if !id.eq_ignore_ascii_case(commit) {
            return Err(format!("asked for revision `{commit}`, answered `{id}`"));
        }
    }
    prove(
        ObjectType::Commit,
        &swh_proof::commit_object(rev)?,
        commit,
        "revision",
    )
}

fn prove(kind: ObjectType, bytes: &[u8], id: &str, what: &str) -> Result<(), String> {
    swh_proof::proves(kind, bytes, id, what)
}

/// The revisions a snapshot's branches point at: revisions as they are,
/// releases through `release` (its target revision), aliases (`HEAD`) through
/// the branch they name.
fn branch_tips(
    branches: &serde_json::Value,
    release: impl Fn(&str) -> Option<String>,
) -> Vec<String> {
    let Some(map) = branches.as_object() else {
        return Vec::new();
    };
    let mut tips = Vec::new();
    for b in map.values() {
        let mut b = b;
        // An alias names another branch; one step, as git's HEAD does.
        if b["target_type"].as_str() == Some("alias") {
            match b["target"].as_str().and_then(|name| map.get(name)) {
                Some(to) => b = to,
                None => continue,
            }
        }
        let Some(target) = b["target"].as_str() else {
            continue;
        };
        let tip = match b["target_type"].as_str() {
            Some("revision") => Some(target.to_ascii_lowercase()),
            Some("release") => release(target),
            _ => None,
        };
        if let Some(tip) = tip.filter(|t| !tips.contains(t)) {
            tips.push(tip);
        }
    }
    tips
}

/// The SWHID of the archived document, with the context it was cited in:
/// `swh:1:cnt:<blob>;origin=<repository>;anchor=swh:1:rev:<commit>;path=/<path>`.
fn swhid(r: &DocRef, blob: &str) -> String {
    // Qualifier values may not hold `;` (the separator) or a bare `%`.
    let value = |v: &str| v.replace('%', "%25").replace(';', "%3B");
    format!(
        "swh:1:cnt:{blob};origin={};anchor=swh:1:rev:{};path=/{}",
        value(&pinaudit_core::check::archive::repository_name(&r.remote)),
        r.commit.as_str(),
        value(r.path.trim_start_matches('/'))
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_revision_must_be_the_one_asked_for_and_hash_to_it() {
        let c = "0123456789abcdef0123456789abcdef01234567";
        let body = serde_json::json!({"id": c, "committer_date": "2023-11-14T23:13:20+01:00"});
        assert_eq!(revision_time(&body, c), Ok(Some((1_700_000_000, 60))));
        assert!(prove_revision(&body, &c.replace('0', "f")).is_err());
        // Naming the id is not enough: its fields must hash to it.
        assert!(prove_revision(&body, c).is_err());
    }

    #[test]
    fn branch_tips_follow_aliases_and_releases() {
        let rev = "a".repeat(40);
        let branches = serde_json::json!({
            "HEAD": {"target": "refs/heads/main", "target_type": "alias"},
            "refs/heads/main": {"target": rev, "target_type": "revision"},
            "refs/tags/v1": {"target": "b".repeat(40), "target_type": "release"},
            "refs/heads/gone": null,
        });
        let tips = branch_tips(&branches, |_| Some("c".repeat(40)));
        assert_eq!(tips, vec!["a".repeat(40), "c".repeat(40)]);
    }

    #[test]
    fn bytes_must_hash_to_the_blob() {
        let entry = Entry {
            blob: "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391".into(),
            sha256: None,
        };
        assert_eq!(content_problem(&entry, b""), None);
        assert!(content_problem(&entry, b"x").is_some());
    }
}
