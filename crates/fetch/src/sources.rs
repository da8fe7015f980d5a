//! From records to repositories: which commit of which remote each source needs,
//! one sync per repository however many records cite it, run concurrently.

use std::collections::HashMap;
use std::sync::Arc;

use git2::Oid;

use crate::rewrite::resolve_fetch_url;
use crate::{apply_rewrites, FetchError, GitCache, Rewrite, SyncOptions, SyncReport};
use pinaudit_core::provider::DocRef;
use pinaudit_core::record::url::{self, Forge};
use pinaudit_core::record::{Revision, Source};

pub use pinaudit_core::provider::Skip;

/// Works out the remote, commit and path of a source.
pub fn resolve(s: &Source, allow_local: bool) -> Result<DocRef, Skip> {
    let from_url = s.url_parsed();
    let from_repo = match from_url {
        Some(_) => None,
        None => s.repository.as_deref().and_then(url::parse_repository),
    };
    let located = from_url
        .as_deref()
        .or(from_repo.as_ref())
        .ok_or(Skip::NoRepository)?;
    if located.forge == Forge::Local && !allow_local {
        return Err(Skip::LocalRefused);
    }
    if located.forge != Forge::Local && !allow_local {
        refuse_non_public(&located.host)?;
    }
    let revision = s
        .revision
        .clone()
        .or_else(|| from_url.as_ref().and_then(|u| u.revision.clone()));
    let commit = match revision {
        Some(Revision::Commit(c)) => c,
        Some(Revision::Ref(r)) => {
            return Err(Skip::NotPinned { name: r });
        }
        None => return Err(Skip::NoRevision),
    };
    let path = s
        .path
        .clone()
        .or_else(|| from_url.as_ref().and_then(|u| u.path.clone()))
        .ok_or(Skip::NoPath)?;
    // Refused here, for this source alone: never handed to the cache, where
    // git would fail on it as if the mirror were at fault.
    if let Some(why) = pinaudit_core::record::path_problem(&path) {
        return Err(Skip::InvalidPath {
            path,
            why: why.to_string(),
        });
    }
    // What `Oid::from_str` accepts, without calling into git2: its one-time
    // start-up must wait until the run knows whether TLS is needed (fetch::tls).
    let id = commit.as_str();
    if id.is_empty() || id.len() > 40 || !id.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(Skip::UnsupportedCommitId {
            commit: commit.to_string(),
        });
    }
    Ok(DocRef {
        remote: located.clone_url(),
        commit,
        path,
    })
}

pub use crate::net::refuse_non_public;

/// The git id of a resolved document's commit ([`resolve`] checked that it parses).
pub fn git_oid(r: &DocRef) -> Oid {
    Oid::from_str(r.commit.as_str()).unwrap_or_else(|_| Oid::zero())
}

/// How to reach the remotes.
#[derive(Clone)]
pub struct SyncPlan {
    pub rewrites: Vec<Rewrite>,
    pub sync: SyncOptions,
    pub jobs: usize,
    pub allow_local: bool,
    /// Who is told how syncing goes; `None`: nobody watches.
    pub progress: Option<Arc<dyn crate::progress::Progress>>,
}

/// The sync options for `remote` fetched from `fetch_url`: connections go only
/// to public addresses (checked on the addresses connected to) unless
/// `--allow-local`, or unless a `--rewrite` the user chose sends the remote
/// elsewhere.
pub fn sync_options(plan: &SyncPlan, remote: &str, fetch_url: &str) -> SyncOptions {
    SyncOptions {
        public_only: !plan.allow_local && fetch_url == remote,
        ..plan.sync.clone()
    }
}

/// A sync's outcome per remote (keyed by the pre-rewrite clone URL).
pub(crate) type Synced = HashMap<String, Result<SyncReport, FetchError>>;

/// Each remote to sync with its wanted commits (and the paths a verdict will
/// read there), in the order the targets first name them.
pub(crate) type Wanted = Vec<(String, Vec<(Oid, Option<String>)>)>;

/// Syncs every remote once, `jobs` at a time, with each remote's wanted commits.
pub fn sync_all(cache: &GitCache, targets: &[&DocRef], plan: &SyncPlan) -> Synced {
    let mut out = HashMap::new();
    sync_streamed(cache, wanted(targets, &[]), plan, &mut |remote, result| {
        out.insert(remote, result);
    });
    out
}

/// Syncs every remote of `wanted` once, `jobs` at a time, started in the
/// order given, and tells `landed` each remote's outcome as soon as its sync is
/// over (in the order they end), on the calling thread: whoever waits for a
/// remote need not wait for the others.
pub(crate) fn sync_streamed(
    cache: &GitCache,
    wanted: Wanted,
    plan: &SyncPlan,
    landed: &mut dyn FnMut(String, Result<SyncReport, FetchError>),
) {
    if wanted.is_empty() {
        return;
    }
    // Offline, syncing reads only the cache and is over at once: nothing shown.
    let progress = plan.progress.as_ref().filter(|_| !plan.sync.offline);
    let bar = progress.map(|p| p.syncing(wanted.len() as u64));
    let runtime = match workers(plan) {
        Ok(rt) => rt,
        Err(e) => return failed_to_start(wanted, &e, landed),
    };
    let semaphore = Arc::new(tokio::sync::Semaphore::new(plan.jobs.max(1)));
    runtime.block_on(async {
        // Permits are granted first come, first served: the syncs start in
        // the order of `wanted`.
        let mut syncs = tokio::task::JoinSet::new();
        for (remote, oids) in wanted {
            let one = One {
                cache: cache.clone(),
                plan: plan.clone(),
                bar: bar.clone(),
                // One line per remote being fetched, under the overall bar.
                line: progress.map(|p| p.remote(&crate::redact(&remote))),
            };
            let sem = semaphore.clone();
            syncs.spawn(async move {
                let _permit = sem.acquire_owned().await;
                let result = one.sync(&remote, oids).await;
                (remote, result)
            });
        }
        while let Some(joined) = syncs.join_next().await {
            if let Ok((remote, result)) = joined {
                landed(remote, result);
            }
        }
    });
    if let Some(bar) = &bar {
        bar.finish();
    }
    // Don't wait for a worker abandoned at its deadline.
    runtime.shutdown_background();
}

/// Each remote's wanted commits, with the paths a verdict will read there: the
/// sync checks that they read back whole (a damaged cache is not a finding).
/// Model repositories (`extra`) want their commit, if they name one. Remotes
/// come in the order the targets first cite them, then the model repositories
/// no target cites: records are checked in about that order, so the first
/// remotes to land are those the first records wait for.
pub(crate) fn wanted(targets: &[&DocRef], extra: &[(String, Option<Oid>)]) -> Wanted {
    let mut wanted: Wanted = Vec::new();
    let mut at: foldhash::HashMap<&str, usize> = Default::default();
    // A set beside the lists: looking each target up in its remote's list made
    // many distinct documents of one repository quadratic.
    let mut seen: foldhash::HashSet<(&str, Oid, &str)> = Default::default();
    let mut docs: Vec<(usize, Oid, &str)> = Vec::new();
    for t in targets {
        let Ok(oid) = Oid::from_str(t.commit.as_str()) else {
            continue;
        };
        if seen.insert((t.remote.as_str(), oid, t.path.as_str())) {
            docs.push((slot(&mut wanted, &mut at, &t.remote), oid, t.path.as_str()));
        }
    }
    let mut models: Vec<(usize, Oid)> = Vec::new();
    for (remote, oid) in extra {
        let i = slot(&mut wanted, &mut at, remote);
        if let Some(oid) = oid {
            models.push((i, *oid));
        }
    }
    // A model's commit comes first in its remote's list, as it always has.
    for (i, oid) in models {
        if !wanted[i].1.iter().any(|(o, _)| *o == oid) {
            wanted[i].1.push((oid, None));
        }
    }
    for (i, oid, path) in docs {
        wanted[i].1.push((oid, Some(path.to_string())));
    }
    wanted
}

/// The index of `remote`'s entry in `wanted`, a new one at the end when it has
/// none yet.
fn slot<'a>(
    wanted: &mut Wanted,
    at: &mut foldhash::HashMap<&'a str, usize>,
    remote: &'a str,
) -> usize {
    *at.entry(remote).or_insert_with(|| {
        wanted.push((remote.to_string(), Vec::new()));
        wanted.len() - 1
    })
}

/// The runtime the syncs run on: `--jobs` blocking workers (git2 blocks).
fn workers(plan: &SyncPlan) -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(plan.jobs.clamp(1, 4))
        .max_blocking_threads(plan.jobs.max(1))
        .enable_all()
        .build()
}

/// Every remote's answer when the fetch workers cannot start.
fn failed_to_start(
    wanted: Wanted,
    e: &std::io::Error,
    landed: &mut dyn FnMut(String, Result<SyncReport, FetchError>),
) {
    let reason = format!("cannot start the fetch workers: {e}");
    for (remote, _) in wanted {
        let err = FetchError::Git {
            url: remote.clone(),
            reason: reason.clone(),
        };
        landed(remote, Err(err));
    }
}

/// One remote's sync, with what it tells progress.
struct One {
    cache: GitCache,
    plan: SyncPlan,
    bar: Option<Arc<dyn crate::progress::Line>>,
    line: Option<Arc<dyn crate::progress::Line>>,
}

impl One {
    /// Syncs `remote` with its wanted commits (`oids`), within its deadline,
    /// and says so on its progress line and the overall bar.
    async fn sync(
        self,
        remote: &str,
        oids: Vec<(Oid, Option<String>)>,
    ) -> Result<SyncReport, FetchError> {
        let shown = crate::redact(remote);
        if let Some(bar) = &self.bar {
            bar.message(shown.clone());
        }
        // Offline nothing is fetched, and the cache entry is keyed by `remote`.
        let fetch = match self.plan.sync.offline {
            true => Ok(apply_rewrites(&self.plan.rewrites, remote)),
            false => resolve_fetch_url(&self.plan.rewrites, remote, self.plan.allow_local),
        };
        let result = match fetch {
            Err(refused) => Err(FetchError::Git {
                url: shown.clone(),
                reason: refused.to_string(),
            }),
            Ok(fetch_url) => self.fetch(remote, fetch_url, oids).await,
        };
        if let Some(line) = &self.line {
            line.finish();
        }
        if let Some(bar) = &self.bar {
            bar.inc(1);
        }
        if let Ok(report) = &result {
            warn_about(&shown, report);
        }
        result
    }

    /// The sync itself, on a blocking worker. libgit2 calls back only while a
    /// pack arrives; a server that trickles or never ends its ref advertisement
    /// is cut off here, at the deadline (plus a grace for the sync's own
    /// cleanup). Its worker is abandoned; the runtime is shut down without
    /// waiting for it.
    async fn fetch(
        &self,
        remote: &str,
        fetch_url: String,
        oids: Vec<(Oid, Option<String>)>,
    ) -> Result<SyncReport, FetchError> {
        let shown = crate::redact(remote);
        let opts = sync_options(&self.plan, remote, &fetch_url);
        let limit = opts.deadline + std::time::Duration::from_secs(2);
        let deadline_secs = opts.deadline.as_secs();
        let (cache, remote2, line) = (self.cache.clone(), remote.to_string(), self.line.clone());
        let work = tokio::task::spawn_blocking(move || {
            cache.sync_docs(&remote2, &fetch_url, &oids, &opts, line)
        });
        match tokio::time::timeout(limit, work).await {
            Ok(joined) => joined.unwrap_or_else(|e| {
                Err(FetchError::Git {
                    url: shown,
                    reason: format!("the fetch worker failed: {e}"),
                })
            }),
            Err(_) => Err(FetchError::Network {
                url: shown,
                reason: format!(
                    "timed out: the sync took longer than the deadline of {deadline_secs} s (raise it with --deadline)"
                ),
                cause: crate::NetworkCause::Limit,
            }),
        }
    }
}

/// What a sync did that people should hear about although it went well.
fn warn_about(remote: &str, report: &SyncReport) {
    use std::io::Write;
    let mut err = std::io::stderr().lock();
    if let Some((why, aside)) = &report.repaired {
        let _ = writeln!(
            err,
            "warning: the cached mirror of `{remote}` was damaged ({}); moved it aside to `{}` and fetched it afresh",
            pinaudit_core::escape::terminal(why),
            pinaudit_core::escape::terminal(&aside.display().to_string())
        );
    }
    for oid in &report.carried {
        let _ = writeln!(
            err,
            "warning: `{remote}` no longer gives commit `{oid}`; carried it over from a quarantined copy of its mirror, where it reads back whole"
        );
    }
    for name in &report.skipped_refs {
        let _ = writeln!(
            err,
            "warning: `{remote}` advertises a ref whose name is not UTF-8 (`{}`); skipped it",
            pinaudit_core::escape::terminal(name)
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pinaudit_core::record::Recorded;

    fn source(
        url: Option<&str>,
        repo: Option<&str>,
        rev: Option<&str>,
        path: Option<&str>,
    ) -> Source {
        Source {
            id: "s".into(),
            url: url.map(Into::into),
            repository: repo.map(Into::into),
            revision: rev.map(Revision::parse),
            path: path.map(Into::into),
            sha256: None::<Recorded<_>>,
            commit_time: None,
            at: Default::default(),
            parsed_url: Default::default(),
        }
    }

    const SHA: &str = "de1fa14ea798512f54dafc8b8795eb3ef1a6c367";

    #[test]
    fn resolves_from_url_or_fields() {
        let t = resolve(
            &source(
                Some(&format!("https://github.com/o/r/blob/{SHA}/README.md")),
                None,
                None,
                None,
            ),
            false,
        )
        .unwrap();
        assert_eq!(t.remote, "https://github.com/o/r.git");
        assert_eq!(t.path, "README.md");
        let t = resolve(&source(None, Some("o/r"), Some(SHA), Some("a.json")), false).unwrap();
        assert_eq!(t.remote, "https://github.com/o/r.git");
        assert_eq!(t.path, "a.json");
    }

    #[test]
    fn refuses_what_it_cannot_pin() {
        assert!(resolve(&source(None, Some("o/r"), Some("main"), Some("a")), false).is_err());
        assert!(resolve(&source(None, Some("o/r"), None, Some("a")), false).is_err());
        assert!(resolve(&source(None, Some("o/r"), Some(SHA), None), false).is_err());
        assert!(resolve(&source(None, None, Some(SHA), Some("a")), false).is_err());
        let local = source(None, Some("file:///tmp/repo"), Some(SHA), Some("a"));
        assert_eq!(resolve(&local, false).unwrap_err(), Skip::LocalRefused);
        assert!(resolve(&local, false)
            .unwrap_err()
            .to_string()
            .contains("--allow-local"));
        assert_eq!(resolve(&local, true).unwrap().remote, "file:///tmp/repo");
    }

    #[test]
    fn refuses_hosts_that_are_not_public() {
        for url in [
            "http://127.0.0.1/o/r",
            "http://127.1:8080/o/r",
            "http://2130706433/o/r",
            "http://0x7f000001/o/r",
            "http://0177.0.0.1/o/r",
            "https://localhost/o/r",
            "https://LOCALHOST./o/r",
            "https://git.localhost/o/r",
            "http://169.254.169.254/o/r",
            "http://10.0.0.1/o/r",
            "http://192.168.1.1/o/r",
            "http://[::1]/o/r",
            "http://[fe80::1]/o/r",
            "http://[fd00::1]/o/r",
            "http://[::ffff:127.0.0.1]/o/r",
            "http://0.0.0.0/o/r",
        ] {
            let s = source(None, Some(url), Some(SHA), Some("a"));
            let skip = resolve(&s, false).expect_err(url);
            assert!(matches!(skip, Skip::HostRefused { .. }), "{url}: {skip:?}");
            let why = skip.to_string();
            assert!(why.contains("not a public host"), "{url}: {why}");
            assert!(why.contains("--allow-local"), "{url}: {why}");
            assert!(resolve(&s, true).is_ok(), "{url}");
        }
        for url in [
            "https://github.com/o/r",
            "https://8.8.8.8/o/r",
            "https://git.example/o/r",
        ] {
            let s = source(None, Some(url), Some(SHA), Some("a"));
            assert!(resolve(&s, false).is_ok(), "{url}");
        }
    }

    #[test]
    fn local_fetch_urls() {
        assert!(pinaudit_core::url::is_local("file:///tmp/x"));
        assert!(pinaudit_core::url::is_local("/tmp/x"));
        assert!(!pinaudit_core::url::is_local("git://127.0.0.1:9418/x"));
        assert!(!pinaudit_core::url::is_local("https://github.com/o/r.git"));
        assert!(pinaudit_core::url::is_local("FILE:///tmp/x"));
        assert!(!pinaudit_core::url::is_local("git@mirror.example:o/r.git"));
    }
}
