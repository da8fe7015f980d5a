//! End-to-end audits over real git transports: the `pinaudit` binary checks pin
//! files whose sources cite `https://github.com/OWNER/REPO/blob/COMMIT/PATH`,
//! and `--rewrite https://github.com/=SERVER/` sends the fetches to fixture
//! repositories served on loopback (`git daemon` with each `uploadpack`
//! setting, `git http-backend`, `file://`), to a stopped or wedged server, or
//! nowhere at all (`--offline`).
//!
//! Each test asserts the finding code, the evidence behind it, the status of
//! the sources and claims, and the exit status (README, "Exit status": 0 clean, 1 a finding
//! at or above `--fail-on`, 2 incomplete). Every server is stopped on drop.

use std::os::unix::fs::MetadataExt;
use std::time::Duration;

use git2::Oid;
use serde_json::{json, Value};

use crate::common::forge::{
    assert_clean, claim, forge_with_readme, good_pin, pin, readme_pin, sha256_hex, snapshot,
    source, to_daemon, Forge, NAME, README, README_LINE, T0, T0_RFC3339,
};
use crate::common::run::Run;
use crate::common::scratch::Scratch;
use crate::common::{free_port, GitDaemon, HangingServer, HttpGitServer, Wants};

// --- Clean citations, over each transport -----------------------------------

#[test]
fn clean_citation_over_git_daemon_is_checked_and_verified() {
    let (forge, _repo, c) = forge_with_readme();
    let daemon = GitDaemon::start(forge.path(), Wants::Reachable);
    let ws = Scratch::new();
    let file = ws.write_pin(&good_pin("clean", c));

    let run = ws.audit(["--rewrite", &to_daemon(&daemon), &file]);
    run.assert_code(0);
    run.assert_codes(&[]);
    assert_clean(&run, "clean", c);
    // No progress off a terminal, no warnings: stderr stays empty.
    assert_eq!(run.stderr, "");
    let s = run.source("clean", "readme");
    // The pinned commit is the head of `main`: nothing has changed upstream.
    assert_eq!(
        s["upstream"],
        json!({"head": c.to_string(), "changed": false})
    );
    // Reports keep the original URL; only the fetch went to the daemon.
    assert_eq!(
        s["url"],
        format!("https://github.com/{NAME}/blob/{c}/README.md")
    );
    assert!(!run.stdout.contains("127.0.0.1"), "{}", run.stdout);
    let summary = run.summary();
    assert_eq!(summary["complete"], true);
    assert_eq!(summary["unchecked_sources"], 0);
    assert_eq!(summary["verified_claims"], 1);
    // The mirror is keyed by the GitHub URL, not the daemon's.
    assert!(ws.mirror(NAME).is_dir());
}

#[test]
fn clean_citation_over_file_url_with_allow_local() {
    let (forge, _repo, c) = forge_with_readme();
    let ws = Scratch::new();
    let file = ws.write_pin(&good_pin("local", c));

    let run = ws.audit(["--allow-local", "--rewrite", &forge.file_rewrite(), &file]);
    run.assert_code(0);
    run.assert_codes(&[]);
    assert_clean(&run, "local", c);
    assert_eq!(run.summary()["complete"], true);
}

#[test]
fn file_url_rewrite_without_allow_local_is_refused() {
    let (forge, _repo, c) = forge_with_readme();
    let ws = Scratch::new();
    let file = ws.write_pin(&good_pin("refused", c));

    let run = ws.audit(["--rewrite", &forge.file_rewrite(), &file]);
    run.assert_code(2);
    run.assert_codes(&[]);
    let s = run.source("refused", "readme");
    assert_eq!(s["status"], "unchecked", "{s:#}");
    let reason = s["reason"]
        .as_str()
        .expect("an unchecked source has a reason");
    assert!(reason.contains("--allow-local"), "{reason}");
    assert_eq!(run.claim("refused", "decode")["status"], "unchecked");
    assert_eq!(run.summary()["complete"], false);
    assert_eq!(run.summary()["unchecked_sources"], 1);
    // Nothing was read from the local path.
    assert!(!ws.mirror(NAME).exists());
}

#[test]
fn clean_citation_over_smart_http() {
    let (forge, _repo, c) = forge_with_readme();
    let server = HttpGitServer::start(forge.path(), Wants::Reachable);
    let ws = Scratch::new();
    let file = ws.write_pin(&good_pin("http", c));

    let run = ws.audit(["--rewrite", &Forge::rewrite(&server.url("")), &file]);
    run.assert_code(0);
    run.assert_codes(&[]);
    assert_clean(&run, "http", c);
    assert!(server.requests() > 0, "the audit never asked the server");
}

// --- hash-mismatch ------------------------------------------------------------

#[test]
fn hash_of_a_crlf_copy_is_a_hash_mismatch_naming_the_crlf_variant() {
    let (forge, _repo, c) = forge_with_readme();
    let daemon = GitDaemon::start(forge.path(), Wants::Reachable);
    let ws = Scratch::new();
    // Hashed from a Windows checkout: the same text with CRLF line ends.
    let recorded = sha256_hex(README.replace('\n', "\r\n"));
    let file = ws.write_pin(&readme_pin("crlf", NAME, c, &recorded, T0_RFC3339));

    let run = ws.audit(["--rewrite", &to_daemon(&daemon), &file]);
    run.assert_code(1);
    run.assert_codes(&["hash-mismatch"]);
    let f = run.only("hash-mismatch");
    assert_eq!(f["severity"], "error");
    assert_eq!(f["source"], "readme");
    let e = &f["evidence"];
    assert_eq!(e["matching_variant"], "crlf", "{f:#}");
    assert_eq!(e["expected"], recorded);
    assert_eq!(e["actual"], sha256_hex(README));
    assert_eq!(e["matching_commit"], Value::Null, "{f:#}");
    assert_eq!(f["location"]["revision"], c.to_string());
    assert_eq!(f["location"]["path"], "README.md");
    // The document is still the cited one: the figure checks out.
    assert_eq!(run.source("crlf", "readme")["status"], "checked");
    assert_eq!(run.claim("crlf", "decode")["status"], "verified");
}

#[test]
fn hash_of_an_older_version_names_the_older_commit() {
    let forge = Forge::new();
    let repo = forge.repo(NAME);
    let draft = README.replace("one node", "one node (draft)");
    let older = repo.commit(&[("README.md", draft.as_str())], "draft", T0 - 3600);
    let c = repo.commit(&[("README.md", README)], "final", T0);
    let daemon = GitDaemon::start(forge.path(), Wants::Reachable);
    let ws = Scratch::new();
    // The author hashed the draft, then pinned the final commit.
    let recorded = sha256_hex(&draft);
    let file = ws.write_pin(&readme_pin("older", NAME, c, &recorded, T0_RFC3339));

    let run = ws.audit(["--rewrite", &to_daemon(&daemon), &file]);
    run.assert_code(1);
    run.assert_codes(&["hash-mismatch"]);
    let e = run.only("hash-mismatch")["evidence"].clone();
    assert_eq!(e["matching_commit"]["commit"], older.to_string(), "{e:#}");
    let draft_blob = Oid::hash_object(git2::ObjectType::Blob, draft.as_bytes()).expect("blob id");
    assert_eq!(e["matching_commit"]["git_blob"], draft_blob.to_string());
    assert_eq!(e["matching_commit"]["variant"], Value::Null);
    assert_eq!(e["matching_variant"], Value::Null);
    assert_eq!(e["expected"], recorded);
    assert_eq!(e["actual"], sha256_hex(README));
    assert_eq!(run.claim("older", "decode")["status"], "verified");
}

// --- path-missing ---------------------------------------------------------------

#[test]
fn deleted_path_is_path_missing() {
    let forge = Forge::new();
    let repo = forge.repo(NAME);
    let results = "# Results\n\ndecode 2.9 tok/s\n";
    repo.commit(
        &[("README.md", README), ("docs/results.md", results)],
        "add",
        T0 - 60,
    );
    let c = repo.delete(&["docs/results.md"], "drop results", T0);
    let daemon = GitDaemon::start(forge.path(), Wants::Reachable);
    let ws = Scratch::new();
    let s = source(
        "results",
        NAME,
        c,
        "docs/results.md",
        &sha256_hex(results),
        T0_RFC3339,
    );
    let cl = claim("decode", &s, 3, 2.9);
    let file = ws.write_pin(&pin("deleted", &[s], &[cl]));

    let run = ws.audit(["--rewrite", &to_daemon(&daemon), &file]);
    run.assert_code(1);
    run.assert_codes(&["path-missing"]);
    let f = run.only("path-missing");
    assert_eq!(f["evidence"]["path"], "docs/results.md");
    assert_eq!(f["evidence"]["commit"], c.to_string());
    assert_eq!(f["location"]["path"], "docs/results.md");
    let s = run.source("deleted", "results");
    assert_eq!(s["status"], "absent", "{s:#}");
    assert_eq!(s["sha256"]["actual"], Value::Null);
    assert_eq!(run.claim("deleted", "decode")["status"], "unchecked");
}

// --- revision-unreachable / revision-missing ----------------------------------------

/// A forge whose pinned commit `erased` was on `main` until a force push
/// reset `main` to `base`. The README is the same in both, so the only
/// question is the commit itself.
fn force_pushed() -> (Forge, Oid, Oid) {
    let forge = Forge::new();
    let repo = forge.repo(NAME);
    let base = repo.commit(&[("README.md", README)], "add results", T0);
    let erased = repo.commit(&[("notes.md", "to be erased\n")], "notes", T0 + 60);
    repo.reset_branch("main", base);
    (forge, base, erased)
}

/// The pin of [`README`] line 5 at `commit`, recorded with the right hash
/// and commit time `time`.
fn pin_at(id: &str, commit: Oid, time: &str) -> Value {
    readme_pin(id, NAME, commit, &sha256_hex(README), time)
}

/// Audits the pin of `erased` from [`force_pushed`], served by a daemon with
/// `wants`; returns `base`, `erased` and the run.
fn audit_force_pushed(wants: Wants) -> (Oid, Oid, Run) {
    let (forge, base, erased) = force_pushed();
    let daemon = GitDaemon::start(forge.path(), wants);
    let ws = Scratch::new();
    let file = ws.write_pin(&pin_at("erased", erased, "2023-11-14T22:14:20Z"));
    let run = ws.audit(["--rewrite", &to_daemon(&daemon), &file]);
    (base, erased, run)
}

#[test]
fn force_pushed_commit_is_unreachable_when_the_server_gives_any_id() {
    let (base, erased, run) = audit_force_pushed(Wants::Any);
    // A warning does not fail the default `--fail-on error`.
    run.assert_code(0);
    run.assert_codes(&["revision-unreachable"]);
    let f = run.only("revision-unreachable");
    assert_eq!(f["severity"], "warning");
    assert_eq!(f["evidence"]["commit"], erased.to_string());
    assert_eq!(f["evidence"]["found_by"], "fetched by id", "{f:#}");
    let s = run.source("erased", "readme");
    assert_eq!(s["status"], "checked");
    assert_eq!(s["upstream"]["head"], base.to_string());
    assert_eq!(run.claim("erased", "decode")["status"], "verified");
}

#[test]
fn force_pushed_commit_is_missing_from_a_stock_daemon() {
    let (_base, erased, run) = audit_force_pushed(Wants::Default);
    run.assert_code(1);
    run.assert_codes(&["revision-missing"]);
    let f = run.only("revision-missing");
    assert_eq!(f["evidence"]["commit"], erased.to_string());
    let by_id = f["evidence"]["fetch_by_id_error"]
        .as_str()
        .unwrap_or_else(|| panic!("the by-id refusal is evidence: {f:#}"));
    // libgit2 does not even ask: the daemon advertises no want-by-id.
    assert!(by_id.contains("cannot fetch a specific object"), "{by_id}");
    assert_eq!(run.source("erased", "readme")["status"], "absent");
    assert_eq!(run.claim("erased", "decode")["status"], "unchecked");
}

#[test]
fn force_pushed_commit_is_missing_when_the_server_gives_only_reachable_ids() {
    let (_base, erased, run) = audit_force_pushed(Wants::Reachable);
    run.assert_code(1);
    run.assert_codes(&["revision-missing"]);
    let f = run.only("revision-missing");
    assert_eq!(f["evidence"]["commit"], erased.to_string());
    // Asked, and refused: the message says the server would not give it.
    assert!(f["evidence"]["fetch_by_id_error"].is_string(), "{f:#}");
    assert!(
        f["message"].as_str().unwrap_or_default().contains("by id"),
        "{f:#}"
    );
}

/// The scheduled re-check: the commit was on `main` when the cache was
/// filled, then force-pushed away. The mirror follows the branch (pruned),
/// so the commit, still in the cache, is no longer reachable.
#[test]
fn commit_force_pushed_after_a_first_audit_becomes_unreachable() {
    let (forge, repo, base) = forge_with_readme();
    let pinned = repo.commit(&[("notes.md", "to be erased\n")], "notes", T0 + 60);
    let daemon = GitDaemon::start(forge.path(), Wants::Default);
    let ws = Scratch::new();
    let file = ws.write_pin(&pin_at("recheck", pinned, "2023-11-14T22:14:20Z"));
    let rewrite = to_daemon(&daemon);
    let run = ws.audit(["--rewrite", &rewrite, &file]);
    run.assert_code(0);
    run.assert_codes(&[]);

    repo.reset_branch("main", base);
    let run = ws.audit(["--rewrite", &rewrite, &file]);
    run.assert_code(0);
    run.assert_codes(&["revision-unreachable"]);
    let f = run.only("revision-unreachable");
    assert_eq!(f["evidence"]["commit"], pinned.to_string());
    assert_eq!(f["evidence"]["found_by"], "in the cache", "{f:#}");
    // The document is still read from the cache, and the head moved back.
    assert_eq!(run.claim("recheck", "decode")["status"], "verified");
    assert_eq!(
        run.source("recheck", "readme")["upstream"],
        json!({"head": base.to_string(), "changed": false})
    );
}

/// A forge whose pinned commit is reachable only from `refs/pull/1/head`
/// (a fork's pull request), audited through a daemon with `wants`.
fn pull_request_only(wants: Wants, found_by: &str) {
    let forge = Forge::new();
    let repo = forge.repo(NAME);
    let base = repo.commit(&[("README.md", README)], "add results", T0);
    let pr = repo.commit_detached(
        Some(base),
        &[("notes.md", "from a fork\n")],
        "fork",
        T0 + 60,
    );
    repo.set_ref("refs/pull/1/head", pr);
    let daemon = GitDaemon::start(forge.path(), wants);
    let ws = Scratch::new();
    let file = ws.write_pin(&pin_at("pull", pr, "2023-11-14T22:14:20Z"));

    let run = ws.audit(["--rewrite", &to_daemon(&daemon), &file]);
    run.assert_code(0);
    run.assert_codes(&["revision-unreachable"]);
    let f = run.only("revision-unreachable");
    assert_eq!(f["evidence"]["commit"], pr.to_string());
    assert_eq!(f["evidence"]["found_by"], found_by, "{f:#}");
    assert_eq!(run.source("pull", "readme")["status"], "checked");
    assert_eq!(run.claim("pull", "decode")["status"], "verified");
}

#[test]
fn pull_request_commit_is_unreachable_when_fetched_by_id() {
    pull_request_only(Wants::Reachable, "fetched by id");
}

#[test]
fn pull_request_commit_is_unreachable_when_found_through_pull_refs() {
    // A stock daemon won't give ids; the pull refs are fetched instead.
    pull_request_only(
        Wants::Default,
        "found through a non-branch ref such as a pull request",
    );
}

#[test]
fn commit_reachable_only_from_an_annotated_tag_is_reachable() {
    let (forge, repo, base) = forge_with_readme();
    let released = repo.commit(&[("notes.md", "release\n")], "release", T0 + 60);
    repo.annotated_tag("v1.0", released, "release 1.0");
    repo.reset_branch("main", base);
    let daemon = GitDaemon::start(forge.path(), Wants::Default);
    let ws = Scratch::new();
    let file = ws.write_pin(&pin_at("tagged", released, "2023-11-14T22:14:20Z"));

    let run = ws.audit(["--rewrite", &to_daemon(&daemon), &file]);
    run.assert_code(0);
    run.assert_codes(&[]);
    assert_eq!(run.claim("tagged", "decode")["status"], "verified");
}

#[test]
fn ghost_commit_is_revision_missing() {
    let (forge, _repo, _c) = forge_with_readme();
    let ghost = Oid::from_str("00000000deadbeef00000000deadbeef00000000").expect("oid");
    for wants in [Wants::Reachable, Wants::Default] {
        let daemon = GitDaemon::start(forge.path(), wants);
        let ws = Scratch::new();
        let file = ws.write_pin(&pin_at("ghost", ghost, T0_RFC3339));

        let run = ws.audit(["--rewrite", &to_daemon(&daemon), &file]);
        run.assert_code(1);
        run.assert_codes(&["revision-missing"]);
        let f = run.only("revision-missing");
        assert_eq!(f["evidence"]["commit"], ghost.to_string(), "{wants:?}");
        assert!(
            f["evidence"]["fetch_by_id_error"].is_string(),
            "{wants:?}: {f:#}"
        );
        assert_eq!(f["location"]["revision"], ghost.to_string());
        let s = run.source("ghost", "readme");
        assert_eq!(s["status"], "absent", "{wants:?}");
        assert_eq!(s["sha256"]["actual"], Value::Null);
        assert_eq!(run.claim("ghost", "decode")["status"], "unchecked");
    }
}

// --- repository-missing -------------------------------------------------------------

#[test]
fn missing_repository_is_repository_missing() {
    let (forge, _repo, c) = forge_with_readme();
    let daemon = GitDaemon::start(forge.path(), Wants::Reachable);
    let ws = Scratch::new();
    let file = ws.write_pin(&readme_pin(
        "nope",
        "acme/nope",
        c,
        &sha256_hex(README),
        T0_RFC3339,
    ));

    let run = ws.audit(["--rewrite", &to_daemon(&daemon), &file]);
    run.assert_code(1);
    run.assert_codes(&["repository-missing"]);
    let f = run.only("repository-missing");
    assert_eq!(f["source"], "readme");
    assert_eq!(f["location"]["repository"], "https://github.com/acme/nope");
    let said = f["evidence"]["remote_said"].as_str().unwrap_or_default();
    assert!(!said.is_empty(), "{f:#}");
    assert!(
        f["evidence"]["url"]
            .as_str()
            .is_some_and(|u| u.ends_with("acme/nope.git")),
        "{f:#}"
    );
    // The remote answered: the source is absent, its figures unchecked.
    let s = run.source("nope", "readme");
    assert_eq!(s["status"], "absent", "{s:#}");
    assert_eq!(run.claim("nope", "decode")["status"], "unchecked");
    assert_eq!(run.summary()["complete"], true);
    // No empty mirror is left to pass for a cached remote.
    assert!(!ws.mirror("acme/nope").exists());
}

// --- commit-time-mismatch -------------------------------------------------------------

#[test]
fn commit_time_is_compared_with_the_committer_time() {
    let forge = Forge::new();
    let repo = forge.repo(NAME);
    // Committed at T0 by someone in UTC+2.
    repo.set_offset_minutes(120);
    let c = repo.commit(&[("README.md", README)], "add results", T0);
    let daemon = GitDaemon::start(forge.path(), Wants::Reachable);
    let ws = Scratch::new();
    let hash = sha256_hex(README);
    let right = source("right", NAME, c, "README.md", &hash, T0_RFC3339);
    let shifted = source(
        "same-instant",
        NAME,
        c,
        "README.md",
        &hash,
        "2023-11-14T17:13:20-05:00",
    );
    // An hour off (say, when the experiment ran): what the field must not hold.
    let wrong = source("wrong", NAME, c, "README.md", &hash, "2023-11-14T23:13:20Z");
    let claims = [
        claim("decode right", &right, README_LINE, 2.9),
        claim("decode shifted", &shifted, README_LINE, 2.9),
        claim("decode wrong", &wrong, README_LINE, 2.9),
    ];
    let file = ws.write_pin(&pin("times", &[right, shifted, wrong], &claims));

    let run = ws.audit(["--rewrite", &to_daemon(&daemon), &file]);
    // A warning only: the default `--fail-on error` passes.
    run.assert_code(0);
    run.assert_codes(&["commit-time-mismatch"]);
    let f = run.only("commit-time-mismatch");
    assert_eq!(f["source"], "wrong");
    assert_eq!(f["severity"], "warning");
    assert_eq!(f["evidence"]["recorded"], "2023-11-14T23:13:20Z");
    assert_eq!(
        f["evidence"]["actual"], "2023-11-15T00:13:20+02:00",
        "{f:#}"
    );
    for id in ["right", "same-instant", "wrong"] {
        let s = run.source("times", id);
        assert_eq!(s["status"], "checked", "{s:#}");
        assert_eq!(s["commit_time"], "2023-11-15T00:13:20+02:00", "{s:#}");
    }
}

// --- Servers that go away -----------------------------------------------------------------

/// Two repositories, `alpha/bench` and `beta/bench`, in two forges, each
/// cited by a record of its own (`alpha`, `beta`).
struct TwoRemotes {
    alpha: Forge,
    beta: Forge,
    alpha_commit: Oid,
    beta_commit: Oid,
    ws: Scratch,
    files: [String; 2],
}

fn two_remotes() -> TwoRemotes {
    let (alpha, beta) = (Forge::new(), Forge::new());
    let alpha_commit = alpha
        .repo("alpha/bench")
        .commit(&[("README.md", README)], "alpha", T0);
    let beta_commit = beta
        .repo("beta/bench")
        .commit(&[("README.md", README)], "beta", T0);
    let ws = Scratch::new();
    let hash = sha256_hex(README);
    let files = [
        ws.write_pin(&readme_pin(
            "alpha",
            "alpha/bench",
            alpha_commit,
            &hash,
            T0_RFC3339,
        )),
        ws.write_pin(&readme_pin(
            "beta",
            "beta/bench",
            beta_commit,
            &hash,
            T0_RFC3339,
        )),
    ];
    TwoRemotes {
        alpha,
        beta,
        alpha_commit,
        beta_commit,
        ws,
        files,
    }
}

/// `--rewrite` for one owner: `https://github.com/OWNER/=ROOT/OWNER/`.
fn owner_rewrite(owner: &str, root: &str) -> String {
    format!("https://github.com/{owner}/={root}{owner}/")
}

/// Asserts the run checked `alpha` in full and left `beta` unchecked.
fn assert_alpha_only(run: &Run, alpha_commit: Oid) {
    run.assert_code(2);
    run.assert_codes(&[]);
    let s = run.source("alpha", "readme");
    assert_eq!(s["status"], "checked", "{s:#}");
    assert_eq!(s["upstream"]["head"], alpha_commit.to_string());
    assert_eq!(run.claim("alpha", "decode")["status"], "verified");
    let s = run.source("beta", "readme");
    assert_eq!(s["status"], "unchecked", "{s:#}");
    let reason = s["reason"].as_str().unwrap_or_default();
    assert!(reason.contains("cannot reach"), "{s:#}");
    assert_eq!(run.claim("beta", "decode")["status"], "unchecked");
    let summary = run.summary();
    assert_eq!(summary["complete"], false);
    assert_eq!(summary["unchecked_sources"], 1);
    assert_eq!(summary["verified_claims"], 1);
}

#[test]
fn stopped_server_leaves_only_its_sources_unchecked_and_the_next_run_completes() {
    let t = two_remotes();
    let alpha_daemon = GitDaemon::start(t.alpha.path(), Wants::Reachable);
    let mut beta_daemon = GitDaemon::start(t.beta.path(), Wants::Reachable);
    let beta_url = beta_daemon.url("");
    beta_daemon.stop();
    let alpha_rule = owner_rewrite("alpha", &alpha_daemon.url(""));

    let run = t.ws.audit([
        "--rewrite",
        &alpha_rule,
        "--rewrite",
        &owner_rewrite("beta", &beta_url),
        &t.files[0],
        &t.files[1],
    ]);
    assert_alpha_only(&run, t.alpha_commit);
    // stderr says which remote failed; stdout held only the report.
    assert!(run.stderr.contains("beta/bench"), "{}", run.stderr);
    assert!(!t.ws.mirror("beta/bench").exists());
    let alpha_mirror = t.ws.mirror("alpha/bench");
    let alpha_inode = std::fs::metadata(&alpha_mirror)
        .expect("alpha mirror")
        .ino();
    let alpha_objects = snapshot(&alpha_mirror.join("objects"));

    // The server is back, on another port.
    let beta_daemon = GitDaemon::start(t.beta.path(), Wants::Reachable);
    let run = t.ws.audit([
        "--rewrite",
        &alpha_rule,
        "--rewrite",
        &owner_rewrite("beta", &beta_daemon.url("")),
        &t.files[0],
        &t.files[1],
    ]);
    run.assert_code(0);
    run.assert_codes(&[]);
    assert_eq!(run.summary()["complete"], true);
    assert_eq!(run.summary()["verified_claims"], 2);
    for (record, commit) in [("alpha", t.alpha_commit), ("beta", t.beta_commit)] {
        let s = run.source(record, "readme");
        assert_eq!(s["status"], "checked", "{s:#}");
        assert_eq!(s["upstream"]["head"], commit.to_string());
    }
    // The healthy repository's mirror was reused, not made afresh, and
    // nothing was fetched into it.
    let meta = std::fs::metadata(&alpha_mirror).expect("alpha mirror");
    assert_eq!(meta.ino(), alpha_inode);
    assert_eq!(snapshot(&alpha_mirror.join("objects")), alpha_objects);
    assert!(t.ws.mirror("beta/bench").is_dir());
}

#[test]
fn hanging_server_times_out_and_leaves_only_its_sources_unchecked() {
    let t = two_remotes();
    let alpha_daemon = GitDaemon::start(t.alpha.path(), Wants::Reachable);
    let hanging = HangingServer::start();

    let run = t.ws.audit_with_timeout(
        2,
        [
            "--rewrite",
            &owner_rewrite("alpha", &alpha_daemon.url("")),
            "--rewrite",
            &owner_rewrite("beta", &hanging.url("git", "")),
            &t.files[0],
            &t.files[1],
        ],
    );
    assert_alpha_only(&run, t.alpha_commit);
    assert!(
        run.took < Duration::from_secs(20),
        "a 2 s timeout took {:?}",
        run.took
    );
    assert!(!t.ws.mirror("beta/bench").exists());
}

// --- Warm cache and --offline ----------------------------------------------------------------

/// A second audit with nothing changed upstream must fetch no objects.
///
/// The binary reports no fetch counts, so this watches the cache itself:
/// every object a fetch brings lands under the mirror's `objects/` (a new
/// pack, or loose objects), and the mirror lives at
/// `cache/git/github.com/OWNER/REPO.git`, keyed by the original URL. An
/// unchanged listing of `objects/` (names, sizes, mtimes) means nothing was
/// received. The listing is also shown to change once upstream moves, so
/// the measurement can fail. Over HTTP each git request is one connection,
/// so the server's count adds a second witness: a warm re-check lists the
/// refs (one request) and posts no `git-upload-pack` negotiation.
#[test]
fn warm_rerun_fetches_no_objects() {
    let (forge, repo, c) = forge_with_readme();
    let server = HttpGitServer::start(forge.path(), Wants::Reachable);
    let ws = Scratch::new();
    let file = ws.write_pin(&good_pin("warm", c));
    let rewrite = Forge::rewrite(&server.url(""));
    let objects = ws.mirror(NAME).join("objects");

    let first = ws.audit(["--rewrite", &rewrite, &file]);
    first.assert_code(0);
    let cold = snapshot(&objects);
    assert!(!cold.is_empty(), "the first run fetched nothing");
    let before = server.requests();
    // Listing refs and fetching are separate requests, so the count tells a
    // listing from a fetch.
    assert!(before >= 2, "a cold run made {before} request(s)");

    let second = ws.audit(["--rewrite", &rewrite, &file]);
    second.assert_code(0);
    second.assert_codes(&[]);
    assert_clean(&second, "warm", c);
    assert_eq!(
        snapshot(&objects),
        cold,
        "the warm re-check fetched objects"
    );
    assert_eq!(
        server.requests() - before,
        1,
        "a warm re-check should only list the remote's refs"
    );

    // Upstream moves (another file): the next run does fetch.
    let head = repo.commit(&[("CHANGELOG.md", "0.4\n")], "changelog", T0 + 600);
    let third = ws.audit(["--rewrite", &rewrite, &file]);
    third.assert_code(0);
    third.assert_codes(&[]);
    assert_ne!(snapshot(&objects), cold, "the moved head was not fetched");
    assert_eq!(
        third.source("warm", "readme")["upstream"],
        json!({"head": head.to_string(), "changed": false})
    );
}

#[test]
fn offline_on_a_warm_cache_checks_without_any_server() {
    let (forge, _repo, c) = forge_with_readme();
    let mut daemon = GitDaemon::start(forge.path(), Wants::Reachable);
    let ws = Scratch::new();
    let file = ws.write_pin(&good_pin("offline", c));
    ws.audit(["--rewrite", &to_daemon(&daemon), &file])
        .assert_code(0);
    daemon.stop();
    drop(forge);

    let run = ws.audit(["--offline", &file]);
    run.assert_code(0);
    run.assert_codes(&[]);
    assert_clean(&run, "offline", c);
    assert_eq!(
        run.source("offline", "readme")["upstream"],
        json!({"head": c.to_string(), "changed": false})
    );
    assert_eq!(run.summary()["complete"], true);
}

#[test]
fn offline_on_an_empty_cache_is_incomplete() {
    let t = two_remotes();
    let run = t.ws.audit(["--offline", &t.files[0], &t.files[1]]);
    run.assert_code(2);
    run.assert_codes(&[]);
    for record in ["alpha", "beta"] {
        let s = run.source(record, "readme");
        assert_eq!(s["status"], "unchecked", "{s:#}");
        assert_eq!(s["reason"], "not in cache");
        assert_eq!(run.claim(record, "decode")["status"], "unchecked");
    }
    assert_eq!(run.summary()["complete"], false);
    assert_eq!(run.summary()["unchecked_sources"], 2);
    assert!(!t.ws.cache().join("git").exists(), "--offline made mirrors");
}

/// `--offline` knows only what the cache holds: a commit pinned after the
/// last networked run may well exist upstream, so its source can't be
/// checked ("not in cache with `--offline`" is an incomplete
/// audit, exit 2), rather than be reported `revision-missing`.
#[test]
fn offline_commit_not_yet_in_a_warm_cache_is_unchecked_not_missing() {
    let (forge, repo, c) = forge_with_readme();
    let mut daemon = GitDaemon::start(forge.path(), Wants::Reachable);
    let ws = Scratch::new();
    let first = ws.write_pin(&good_pin("first", c));
    ws.audit(["--rewrite", &to_daemon(&daemon), &first])
        .assert_code(0);
    daemon.stop();
    // Upstream moves on and a new record pins the new commit.
    let later = repo.commit(&[("notes.md", "later\n")], "later", T0 + 60);
    let second = ws.write_pin(&pin_at("second", later, "2023-11-14T22:14:20Z"));

    let run = ws.audit(["--offline", &first, &second]);
    run.assert_codes(&[]);
    assert_eq!(run.source("first", "readme")["status"], "checked");
    let s = run.source("second", "readme");
    assert_eq!(s["status"], "unchecked", "{s:#}");
    assert_eq!(run.claim("second", "decode")["status"], "unchecked");
    assert_eq!(run.summary()["complete"], false);
    run.assert_code(2);
}

// --- Credentials ---------------------------------------------------------------------------

#[test]
fn credentials_in_rewrite_targets_never_reach_the_output() {
    let (forge, _repo, c) = forge_with_readme();
    let ws = Scratch::new();
    let good = ws.write_pin(&good_pin("closed", c));
    let nope = ws.write_pin(&readme_pin(
        "nope",
        "acme/nope",
        c,
        &sha256_hex(README),
        T0_RFC3339,
    ));
    let secret = "s3cret-t0ken";
    let with_secret =
        |root: &str| Forge::rewrite(&root.replace("http://", &format!("http://user:{secret}@")));

    // A closed port: the source stays unchecked, in every format.
    let closed = with_secret(&format!("http://127.0.0.1:{}/", free_port()));
    for format in ["json", "text", "markdown"] {
        let run = ws.run([
            "audit",
            "--cache",
            "cache",
            "--timeout",
            "5",
            "--format",
            format,
            "--rewrite",
            &closed,
            &good,
        ]);
        run.assert_code(2);
        assert!(
            !run.stdout.contains(secret),
            "{format} stdout:\n{}",
            run.stdout
        );
        assert!(
            !run.stderr.contains(secret),
            "{format} stderr:\n{}",
            run.stderr
        );
        assert!(
            !run.stderr.contains("user:"),
            "{format} stderr:\n{}",
            run.stderr
        );
        if format == "json" {
            let s = run.source("closed", "readme");
            assert_eq!(s["status"], "unchecked", "{s:#}");
        }
    }

    // A live server that answers "no such repository", quoting the URL.
    let server = HttpGitServer::start(forge.path(), Wants::Reachable);
    let run = ws.audit(["--rewrite", &with_secret(&server.url("")), &nope]);
    run.assert_code(1);
    run.assert_codes(&["repository-missing"]);
    assert!(!run.stdout.contains(secret), "{}", run.stdout);
    assert!(!run.stderr.contains(secret), "{}", run.stderr);
}
