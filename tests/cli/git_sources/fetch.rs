//! Integration tests of `pinaudit::fetch` against real servers on loopback:
//! `git daemon` with each `uploadpack` setting, `git http-backend`, `file://`,
//! a refused port and a server that never answers.

use std::path::Path;
use std::time::Duration;

use crate::common::scratch::Scratch;
use crate::common::{free_port, FixtureRepo, GitDaemon, HttpGitServer, Wants};
use git2::Oid;
use pinaudit::fetch::{
    apply_rewrites, matching_variant, sha256_hex, FetchError, FoundBy, GitCache, Rewrite,
    SyncOptions, SyncReport,
};

const T0: i64 = 1_700_000_000;

/// The same options for every test: libgit2's timeouts are process-wide, and
/// tests run in parallel threads of one process. They are generous so that a busy
/// machine never turns a slow answer into a network error; the timeout itself is
/// tested in its own process (tests/fetch_timeout.rs).
fn opts() -> SyncOptions {
    SyncOptions {
        offline: false,
        connect_timeout: Duration::from_secs(30),
        timeout: Duration::from_secs(60),
        max_other_refs: 50,
        ..SyncOptions::default()
    }
}

/// A cache at `root` whose stores are under the tests' key: the caches these
/// tests sync in process never touch the user's key file.
fn cache_at(root: impl Into<std::path::PathBuf>) -> GitCache {
    GitCache::with_key(root, pinaudit::cache_key::CacheKey::from_secret(b"tests"))
}

fn offline() -> SyncOptions {
    SyncOptions {
        offline: true,
        ..opts()
    }
}

/// A served repository with every kind of commit the audit distinguishes.
struct Scenario {
    base: Scratch,
    repo: FixtureRepo,
    /// On `main`, tagged `v1` (annotated).
    c1: Oid,
    /// The tip of `main` (the default branch).
    c2: Oid,
    /// Reachable only from `refs/pull/1/head`.
    pr: Oid,
    /// Was the tip of `feature`, erased by a force push.
    erased: Oid,
    /// Never existed anywhere.
    ghost: Oid,
}

fn scenario() -> Scenario {
    let base = Scratch::new();
    let repo = FixtureRepo::create(base.path(), "proj.git");
    let c1 = repo.commit(&[("README.md", "decode: 2.9 tok/s\n")], "one", T0);
    let c2 = repo.commit(
        &[("README.md", "decode: 3.1 tok/s\n"), ("docs/x.md", "x\n")],
        "two",
        T0 + 100,
    );
    repo.annotated_tag("v1", c1, "release one");
    let pr = repo.commit_detached(
        Some(c2),
        &[("README.md", "decode: 9.9 tok/s\n")],
        "pr",
        T0 + 200,
    );
    repo.set_ref("refs/pull/1/head", pr);
    let erased = repo.commit_on("feature", &[("notes.md", "gone\n")], "erased", T0 + 300);
    repo.reset_branch("feature", c2);
    let ghost = Oid::from_str("00000000deadbeef00000000deadbeef00000000").expect("oid");
    Scenario {
        base,
        repo,
        c1,
        c2,
        pr,
        erased,
        ghost,
    }
}

fn found(report: &SyncReport, oid: Oid) -> Option<FoundBy> {
    report
        .wanted
        .iter()
        .find(|w| w.oid == oid)
        .and_then(|w| w.found)
}

fn by_id_error(report: &SyncReport, oid: Oid) -> String {
    report
        .wanted
        .iter()
        .find(|w| w.oid == oid)
        .and_then(|w| w.by_id_error.clone())
        .unwrap_or_default()
}

/// Sync the scenario from `url` into a fresh cache; returns the cache too.
fn sync_scenario(s: &Scenario, url: &str) -> (Scratch, GitCache, SyncReport) {
    let dir = Scratch::new();
    let cache = cache_at(dir.path());
    let report = cache
        .sync(url, url, &[s.c2, s.pr, s.erased, s.ghost], &opts())
        .expect("sync");
    (dir, cache, report)
}

/// What every successful scenario sync must leave in the cache.
fn assert_mirror(s: &Scenario, cache: &GitCache, url: &str, report: &SyncReport) {
    assert!(report.fetched);
    assert!(report.received_objects > 0);
    assert_eq!(report.head, Some(s.c2));
    assert_eq!(report.default_branch.as_deref(), Some("refs/heads/main"));
    assert_eq!(found(report, s.c2), Some(FoundBy::BranchesOrTags));
    assert_eq!(found(report, s.ghost), None);

    let repo = cache.open(url).expect("open");
    assert_eq!(repo.head(), Some(s.c2));
    assert!(repo.has_commit(s.c1));
    assert!(repo.reachable_from_branches_or_tags(s.c1).expect("walk"));
    assert!(repo.reachable_from_branches_or_tags(s.c2).expect("walk"));
    assert!(!repo.has_commit(s.ghost));
    assert!(!repo.reachable_from_branches_or_tags(s.ghost).expect("walk"));
    if repo.has_commit(s.pr) {
        assert!(!repo.reachable_from_branches_or_tags(s.pr).expect("walk"));
    }
    if repo.has_commit(s.erased) {
        assert!(!repo
            .reachable_from_branches_or_tags(s.erased)
            .expect("walk"));
    }
}

#[test]
fn stock_daemon_refuses_ids_and_pull_refs_fill_in() {
    let s = scenario();
    let daemon = GitDaemon::start(s.base.path(), Wants::Default);
    let url = daemon.url("proj.git");
    let (_dir, cache, report) = sync_scenario(&s, &url);
    assert_mirror(&s, &cache, &url, &report);

    // libgit2 won't even ask: the server advertises no want-by-id capability.
    assert!(
        by_id_error(&report, s.pr).contains("cannot fetch a specific object"),
        "{report:?}"
    );
    assert_eq!(found(&report, s.pr), Some(FoundBy::OtherRefs));
    assert_eq!(report.other_refs_fetched, 1);
    assert_eq!(found(&report, s.erased), None);

    // Warm re-check: the pull-ref commit is kept; nothing is fetched.
    let again = cache
        .sync(&url, &url, &[s.c2, s.pr], &opts())
        .expect("resync");
    assert!(!again.fetched, "{again:?}");
    assert_eq!(again.received_objects, 0);
    assert_eq!(found(&again, s.pr), Some(FoundBy::Cache));
}

#[test]
fn other_refs_are_bounded_and_exact_matches_come_first() {
    let s = scenario();
    let mut pulls = Vec::new();
    for n in 1..=4 {
        let a = s.repo.commit_detached(
            Some(s.c2),
            &[("pr.md", format!("pr {n} a\n"))],
            "a",
            T0 + 500 + n,
        );
        let b = s.repo.commit_detached(
            Some(a),
            &[("pr.md", format!("pr {n} b\n"))],
            "b",
            T0 + 600 + n,
        );
        s.repo.set_ref(&format!("refs/pull/{}/head", n + 1), b);
        pulls.push((a, b));
    }
    // `inside` is only inside pull 4 (refs/pull/4/head); `exact` is the tip
    // of pull 5, advertised last.
    let (inside, exact) = (pulls[2].0, pulls[3].1);
    let daemon = GitDaemon::start(s.base.path(), Wants::Default);
    let url = daemon.url("proj.git");
    let dir = Scratch::new();
    let cache = cache_at(dir.path());
    let bounded = SyncOptions {
        max_other_refs: 2,
        ..opts()
    };
    let report = cache
        .sync(&url, &url, &[inside, exact], &bounded)
        .expect("sync");
    assert_eq!(
        found(&report, exact),
        Some(FoundBy::OtherRefs),
        "{report:?}"
    );
    assert_eq!(found(&report, inside), None, "{report:?}");
    assert_eq!(
        (report.other_refs_fetched, report.other_refs_skipped),
        (2, 3)
    );

    // Unbounded, the containing ref is fetched too.
    let report = cache.sync(&url, &url, &[inside], &opts()).expect("sync");
    assert_eq!(
        found(&report, inside),
        Some(FoundBy::OtherRefs),
        "{report:?}"
    );
}

#[test]
fn stale_scratch_from_a_crashed_first_sync_is_cleared() {
    let s = scenario();
    let url = s.repo.file_url();
    let dir = Scratch::new();
    let cache = cache_at(dir.path());
    let path = cache.repo_path(&url);
    let scratch = path.with_file_name(format!(
        ".{}.init",
        path.file_name().expect("name").to_string_lossy()
    ));
    std::fs::create_dir_all(scratch.join("objects")).expect("mkdir");
    std::fs::write(scratch.join("HEAD"), "half-written").expect("write");

    let report = cache.sync(&url, &url, &[s.c2], &opts()).expect("sync");
    assert!(report.is_present(s.c2));
    assert!(!scratch.exists());
    assert!(cache.open(&url).expect("open").has_commit(s.c1));
}

#[test]
fn reachable_wants_fetch_pull_commits_by_id_but_not_erased_ones() {
    let s = scenario();
    let daemon = GitDaemon::start(s.base.path(), Wants::Reachable);
    let url = daemon.url("proj.git");
    let (_dir, cache, report) = sync_scenario(&s, &url);
    assert_mirror(&s, &cache, &url, &report);

    assert_eq!(found(&report, s.pr), Some(FoundBy::Id));
    assert_eq!(found(&report, s.erased), None);
    // git daemon refuses by closing the connection; libgit2 sees a broken
    // pipe, the sync tells it from a network failure by asking again.
    let refusal = by_id_error(&report, s.erased);
    assert!(
        refusal.contains("closed the connection") || refusal.contains("not our ref"),
        "{report:?}"
    );
    assert_eq!(report.other_refs_fetched, 0);
    assert!(cache.open(&url).expect("open").has_commit(s.pr));
}

#[test]
fn any_wants_fetch_erased_commits_by_id() {
    let s = scenario();
    let daemon = GitDaemon::start(s.base.path(), Wants::Any);
    let url = daemon.url("proj.git");
    let (_dir, cache, report) = sync_scenario(&s, &url);
    assert_mirror(&s, &cache, &url, &report);

    assert_eq!(found(&report, s.pr), Some(FoundBy::Id));
    assert_eq!(found(&report, s.erased), Some(FoundBy::Id));
    let repo = cache.open(&url).expect("open");
    assert!(repo.has_commit(s.erased));
    assert!(!repo
        .reachable_from_branches_or_tags(s.erased)
        .expect("walk"));
    assert!(!by_id_error(&report, s.ghost).is_empty());
}

#[test]
fn file_url_fetches_what_its_refs_reach() {
    let s = scenario();
    let url = s.repo.file_url();
    let (_dir, cache, report) = sync_scenario(&s, &url);
    assert_mirror(&s, &cache, &url, &report);
    // libgit2's local transport packs everything its refs reach, whatever
    // the refspecs, so the pull-ref commit may come with the mirror fetch.
    assert!(found(&report, s.pr).is_some(), "{report:?}");
    // ... and only what its refs reach: a want by id of an unreachable
    // commit "succeeds" without sending it.
    assert_eq!(found(&report, s.erased), None);
    assert!(!by_id_error(&report, s.erased).is_empty(), "{report:?}");
}

#[test]
fn smart_http_sync_and_missing_repository() {
    let s = scenario();
    let server = HttpGitServer::start(s.base.path(), Wants::Reachable);
    let url = server.url("proj.git");
    let (_dir, cache, report) = sync_scenario(&s, &url);
    assert_mirror(&s, &cache, &url, &report);
    assert_eq!(found(&report, s.pr), Some(FoundBy::Id));

    let missing = server.url("nope.git");
    let err = cache.sync(&missing, &missing, &[], &opts()).unwrap_err();
    assert!(matches!(err, FetchError::RepositoryMissing { .. }), "{err}");
}

#[test]
fn warm_resync_fetches_nothing_until_upstream_moves() {
    let s = scenario();
    let daemon = GitDaemon::start(s.base.path(), Wants::Reachable);
    let url = daemon.url("proj.git");
    let dir = Scratch::new();
    let cache = cache_at(dir.path());

    let first = cache.sync(&url, &url, &[s.c2], &opts()).expect("sync");
    assert!(first.fetched && first.received_objects > 0);

    let second = cache.sync(&url, &url, &[s.c2], &opts()).expect("resync");
    assert!(!second.fetched, "{second:?}");
    assert_eq!((second.fetches, second.received_objects), (0, 0));
    assert_eq!(found(&second, s.c2), Some(FoundBy::Cache));

    // A new upstream commit makes the next sync fetch, and moves the head.
    let c3 = s
        .repo
        .commit(&[("README.md", "decode: 3.3 tok/s\n")], "three", T0 + 400);
    let third = cache.sync(&url, &url, &[s.c2], &opts()).expect("sync");
    assert!(third.fetched && third.received_objects > 0, "{third:?}");
    assert_eq!(third.head, Some(c3));
    let repo = cache.open(&url).expect("open");
    assert!(repo.reachable_from_branches_or_tags(c3).expect("walk"));

    // Force-push it away and delete the tag: the mirror follows (pruned).
    s.repo.reset_branch("main", s.c2);
    s.repo.delete_ref("refs/tags/v1");
    let fourth = cache.sync(&url, &url, &[], &opts()).expect("sync");
    assert_eq!(fourth.head, Some(s.c2));
    let repo = cache.open(&url).expect("open");
    assert!(repo.has_commit(c3));
    assert!(!repo.reachable_from_branches_or_tags(c3).expect("walk"));
    assert!(repo.reachable_from_branches_or_tags(s.c1).expect("walk"));
    assert!(repo.path().join("refs/tags/v1").symlink_metadata().is_err());

    // Asking for a commit the remote lacks is an attempt, not a transfer.
    let ghost = cache.sync(&url, &url, &[s.ghost], &opts()).expect("sync");
    assert_eq!((ghost.fetches, ghost.received_objects), (1, 0), "{ghost:?}");
    assert!(!ghost.is_present(s.ghost));
}

#[test]
fn missing_repositories_are_reported_as_such() {
    let s = scenario();
    let daemon = GitDaemon::start(s.base.path(), Wants::Default);
    let dir = Scratch::new();
    let cache = cache_at(dir.path());

    let url = daemon.url("nope.git");
    let err = cache.sync(&url, &url, &[], &opts()).unwrap_err();
    assert!(matches!(err, FetchError::RepositoryMissing { .. }), "{err}");
    assert!(err.to_string().contains(&url), "{err}");
    // No empty mirror is left behind to pass for a cached remote.
    assert!(!cache.repo_path(&url).exists());
    let err = cache.sync(&url, &url, &[], &offline()).unwrap_err();
    assert!(matches!(err, FetchError::NotCached { .. }), "{err}");

    let path = format!("file://{}", s.base.path().join("nope.git").display());
    let err = cache.sync(&path, &path, &[], &opts()).unwrap_err();
    assert!(matches!(err, FetchError::RepositoryMissing { .. }), "{err}");
}

#[test]
fn refused_connection_is_a_network_error_without_credentials() {
    let dir = Scratch::new();
    let cache = cache_at(dir.path());
    let port = free_port();
    for url in [
        format!("git://127.0.0.1:{port}/x.git"),
        format!("http://user:s3cret-t0ken@127.0.0.1:{port}/x.git"),
    ] {
        let err = cache.sync(&url, &url, &[], &opts()).unwrap_err();
        assert!(matches!(err, FetchError::Network { .. }), "{err}");
        assert!(err.is_unavailable());
        let shown = format!("{err} {err:?}");
        assert!(!shown.contains("s3cret"), "{shown}");
    }
}

#[test]
fn credentials_in_urls_never_reach_errors() {
    let s = scenario();
    let server = HttpGitServer::start(s.base.path(), Wants::Default);
    let dir = Scratch::new();
    let cache = cache_at(dir.path());
    let url = server
        .url("nope.git")
        .replace("http://", "http://x-access-token:s3cret-t0ken@");
    let err = cache.sync(&url, &url, &[], &opts()).unwrap_err();
    let shown = format!("{err} {err:?} {:?}", err.hint());
    assert!(!shown.contains("s3cret"), "{shown}");
    assert!(!shown.contains("x-access-token"), "{shown}");
    // The cache entry is named without the credential too.
    let entry = cache.repo_path(&url);
    assert!(!entry.to_string_lossy().contains("s3cret"), "{entry:?}");
}

#[test]
fn credentials_in_urls_never_reach_the_cache_on_disk() {
    let s = scenario();
    let server = HttpGitServer::start(s.base.path(), Wants::Reachable);
    let url = server
        .url("proj.git")
        .replace("http://", "http://x-access-token:s3cret-t0ken@");
    let dir = Scratch::new();
    let cache = cache_at(dir.path());
    let report = cache
        .sync(&url, &url, &[s.c2, s.pr], &opts())
        .expect("sync");
    assert!(report.is_present(s.pr));
    for entry in walkdir::WalkDir::new(dir.path()) {
        let entry = entry.expect("walk");
        let name = entry.path().to_string_lossy().into_owned();
        assert!(!name.contains("s3cret"), "{name}");
        if entry.file_type().is_file() {
            let bytes = std::fs::read(entry.path()).expect("read");
            let found = bytes.windows(6).any(|w| w == b"s3cret");
            assert!(!found, "credential written to {name}");
        }
    }
}

#[test]
fn offline_uses_only_the_cache() {
    let s = scenario();
    let dir = Scratch::new();
    let cache = cache_at(dir.path());
    let url = s.repo.file_url();

    let err = cache.sync(&url, &url, &[s.c2], &offline()).unwrap_err();
    assert!(matches!(err, FetchError::NotCached { .. }), "{err}");
    assert!(err.hint().is_some());
    // Nothing was created by the offline attempt.
    assert!(!cache.repo_path(&url).exists());

    cache.sync(&url, &url, &[s.c2], &opts()).expect("sync");
    // Even with the remote gone, offline answers from the cache.
    std::fs::remove_dir_all(s.repo.path()).expect("remove remote");
    let report = cache
        .sync(&url, &url, &[s.c2, s.ghost], &offline())
        .expect("offline sync");
    assert!(report.offline && !report.fetched);
    assert_eq!(found(&report, s.c2), Some(FoundBy::Cache));
    assert_eq!(found(&report, s.ghost), None);
    assert_eq!(report.head, Some(s.c2));
}

#[test]
fn broken_cache_directory_is_reported_not_panicked() {
    let dir = Scratch::new();
    let cache = cache_at(dir.path());
    let url = "https://github.com/owner/broken.git";
    let path = cache.repo_path(url);
    std::fs::create_dir_all(&path).expect("mkdir");
    std::fs::write(path.join("HEAD"), "garbage").expect("write");

    let err = cache
        .sync(url, "git://127.0.0.1:1/x", &[], &opts())
        .unwrap_err();
    assert!(matches!(err, FetchError::CacheBroken { .. }), "{err}");
    // Never "delete it": an audit leaves what it can't open as it is.
    assert!(err
        .hint()
        .is_some_and(|h| h.contains("--cache") && !h.contains("delete")));
    let err = cache.sync(url, url, &[], &offline()).unwrap_err();
    assert!(matches!(err, FetchError::CacheBroken { .. }), "{err}");
}

#[test]
fn rewrites_change_where_we_fetch_not_the_cache_entry() {
    let s = scenario();
    let daemon = GitDaemon::start(s.base.path(), Wants::Default);
    let original = "https://github.com/owner/proj.git";
    let rules: Vec<Rewrite> = vec![
        "https://github.com/=https://unreachable.invalid/"
            .parse()
            .expect("rule"),
        format!("https://github.com/owner/={}", daemon.url(""))
            .parse()
            .expect("rule"),
    ];
    let fetch_url = apply_rewrites(&rules, original);
    assert_eq!(fetch_url, daemon.url("proj.git"));

    let dir = Scratch::new();
    let cache = cache_at(dir.path());
    let report = cache
        .sync(original, &fetch_url, &[s.c2], &opts())
        .expect("sync");
    assert_eq!(
        report.path,
        dir.path().join("git/github.com/owner/proj.git")
    );
    assert!(cache.open(original).expect("open").has_commit(s.c2));
}

#[test]
fn concurrent_syncs_share_one_mirror_safely() {
    let s = scenario();
    let daemon = GitDaemon::start(s.base.path(), Wants::Reachable);
    let url = daemon.url("proj.git");
    let dir = Scratch::new();
    let root = dir.path().to_path_buf();
    let wanted = [s.c2, s.pr];
    let threads: Vec<_> = (0..3)
        .map(|_| {
            let (root, url) = (root.clone(), url.clone());
            std::thread::spawn(move || cache_at(root).sync(&url, &url, &wanted, &opts()))
        })
        .collect();
    let reports: Vec<SyncReport> = threads
        .into_iter()
        .map(|t| t.join().expect("thread").expect("sync"))
        .collect();
    // Exactly one of them filled the mirror; the others found it warm.
    assert_eq!(
        reports.iter().filter(|r| r.fetched).count(),
        1,
        "{reports:?}"
    );
    for r in &reports {
        assert!(r.is_present(s.c2) && r.is_present(s.pr), "{r:?}");
    }
}

#[test]
fn read_side_helpers_answer_from_the_object_database() {
    let repo = FixtureRepo::new();
    repo.set_offset_minutes(120);
    let a1 = repo.commit(&[("README.md", "v1\n"), ("docs/x.md", "x\n")], "a1", T0);
    let a2 = repo.commit(&[("other.md", "o\n")], "a2", T0 + 10);
    let a3 = repo.commit(&[("README.md", "v2\n")], "a3", T0 + 20);
    let a4 = repo.commit(&[("README.md", "v1\n")], "a4 (revert)", T0 + 30);
    let a5 = repo.delete(&["README.md", "docs/x.md"], "a5", T0 + 40);
    let url = repo.file_url();
    let dir = Scratch::new();
    let cache = cache_at(dir.path());
    cache.sync(&url, &url, &[], &opts()).expect("sync");
    let cached = cache.open(&url).expect("open");

    assert_eq!(cached.commit_time(a1), Some((T0, 120)));
    assert_eq!(cached.commit_time(Oid::zero()), None);

    let blob = cached
        .read_blob(a1, "README.md")
        .expect("read")
        .expect("blob");
    assert_eq!(blob.bytes, b"v1\n");
    assert_eq!(
        blob.id,
        Oid::hash_object(git2::ObjectType::Blob, b"v1\n").expect("hash")
    );
    assert_eq!(
        cached
            .read_blob(a1, "/docs/x.md")
            .expect("read")
            .map(|b| b.bytes),
        Some(b"x\n".to_vec())
    );
    assert_eq!(cached.read_blob(a5, "README.md").expect("read"), None);
    assert_eq!(cached.read_blob(a1, "docs").expect("read"), None);
    assert_eq!(cached.read_blob(a1, "../README.md").expect("read"), None);
    assert!(cached.read_blob(Oid::zero(), "README.md").is_err());

    assert_eq!(
        cached.path_history("README.md", a1, a5).expect("history"),
        [a3, a4, a5]
    );
    assert_eq!(
        cached.path_history("README.md", a2, a3).expect("history"),
        [a3]
    );
    assert!(cached
        .path_history("other.md", a2, a5)
        .expect("history")
        .is_empty());

    let versions = cached.path_versions("README.md").expect("versions");
    let pairs: Vec<(Oid, Vec<u8>)> = versions
        .iter()
        .map(|v| (v.commit, cached.blob(v.blob).expect("blob")))
        .collect();
    assert_eq!(pairs, [(a3, b"v2\n".to_vec()), (a1, b"v1\n".to_vec())]);
}

#[test]
fn recorded_hash_is_matched_to_a_variant_or_an_older_commit() {
    let repo = FixtureRepo::new();
    let old = repo.commit(&[("README.md", "decode: 2.9\n")], "old", T0);
    let new = repo.commit(&[("README.md", "decode: 3.1\n")], "new", T0 + 10);
    let url = repo.file_url();
    let dir = Scratch::new();
    let cache = cache_at(dir.path());
    cache.sync(&url, &url, &[], &opts()).expect("sync");
    let cached = cache.open(&url).expect("open");
    let hashes = cache.blob_hashes();

    let at_new = cached
        .read_blob(new, "README.md")
        .expect("read")
        .expect("blob");
    assert_eq!(
        hashes.sha256(at_new.id, &at_new.bytes),
        sha256_hex(b"decode: 3.1\n")
    );
    hashes.persist().expect("persist");
    assert!(cache.root().join("blobs.store").is_file());

    // Recorded from a Windows checkout: same text, CRLF bytes.
    let crlf = sha256_hex(b"decode: 3.1\r\n");
    assert_eq!(matching_variant(&at_new.bytes, &crlf), Some("crlf"));

    // Recorded from the older revision.
    let recorded = sha256_hex(b"decode: 2.9\n");
    let origin = cached
        .path_versions("README.md")
        .expect("versions")
        .into_iter()
        .find(|v| {
            cached
                .blob(v.blob)
                .is_some_and(|bytes| hashes.sha256(v.blob, &bytes) == recorded)
        })
        .map(|v| v.commit);
    assert_eq!(origin, Some(old));
}

#[test]
fn cache_paths_stay_inside_the_cache() {
    let dir = Scratch::new();
    let cache = cache_at(dir.path());
    for url in [
        "https://github.com/../../etc/passwd",
        "https://user:pw@evil.example:22/../x",
        "file:///../../etc",
    ] {
        let path = cache.repo_path(url);
        assert!(path.starts_with(dir.path().join("git")), "{path:?}");
        let rel = path.strip_prefix(dir.path()).expect("prefix");
        assert!(
            rel.components()
                .all(|c| matches!(c, std::path::Component::Normal(_))),
            "{rel:?}"
        );
        assert!(!Path::new(&path).to_string_lossy().contains("pw@"));
    }
}
