//! Verdicts that tell the truth (issue "Verdicts you can trust"): a network blip
//! hides nothing, drift is judged against the branch that holds the pin, and every
//! recorded hash is judged wherever it stands.

use git2::Oid;
use serde_json::Value;

use crate::common::forge::{
    claim, pin, readme_pin, sha256_hex, source, to_daemon, Forge, NAME, README, T0, T0_RFC3339,
};
use crate::common::run::Run;
use crate::common::scratch::Scratch;
use crate::common::{FixtureRepo, GitDaemon, Wants};

/// What two runs agree on: each source's status and each claim's verdict, and the
/// finding codes, without what moves (times, stale marks).
fn verdicts(run: &Run) -> Value {
    let r = run.report();
    let mut out = Vec::new();
    for rec in r["records"].as_array().into_iter().flatten() {
        for s in rec["sources"].as_array().into_iter().flatten() {
            out.push(format!("source {} {}", s["id"], s["status"]));
        }
        for c in rec["claims"].as_array().into_iter().flatten() {
            out.push(format!(
                "claim {} {} {}",
                c["label"], c["status"], c["found_line"]
            ));
        }
    }
    out.extend(run.codes());
    Value::from(out)
}

#[test]
fn a_warm_cache_with_the_daemon_stopped_judges_like_offline_and_marks_stale() {
    let forge = Forge::new();
    let repo = forge.repo(NAME);
    let c = repo.commit(&[("README.md", README)], "add results", T0);
    let daemon = GitDaemon::start(forge.path(), Wants::Reachable);
    let ws = Scratch::new();
    let file = ws.write_pin(&readme_pin(
        "blip",
        NAME,
        c,
        &sha256_hex(README),
        T0_RFC3339,
    ));
    let rewrite = to_daemon(&daemon);
    let first = ws.audit(["--rewrite", &rewrite, &file]);
    first.assert_code(0);
    drop(daemon);

    let blip = ws.audit(["--rewrite", &rewrite, &file]);
    let offline = ws.audit(["--offline", &file]);
    offline.assert_code(0);
    // Not "unchecked, exit 2": the immutable pin is judged from the cache.
    blip.assert_code(0);
    assert_eq!(verdicts(&blip), verdicts(&offline));
    let s = blip.source("blip", "readme");
    assert_eq!(s["status"], "checked", "{s:#}");
    assert!(s["stale_since"].is_string(), "stale is marked: {s:#}");
    assert_eq!(blip.summary()["stale_sources"], 1);
    assert_eq!(blip.summary()["complete"], true);
    assert_eq!(blip.claim("blip", "decode")["status"], "verified");
    // The first, online run was not stale.
    assert_eq!(first.source("blip", "readme")["stale_since"], Value::Null);
    assert!(
        blip.stderr.contains("--rewrite"),
        "the hint names a mirror: {}",
        blip.stderr
    );
}

/// A forge answering something other than git's protocol (garbage bytes, or
/// a shallow repository libgit2 cannot fetch from) is a forge that is down:
/// the cache stands in, marked stale, as when the daemon is stopped.
#[test]
fn a_forge_answering_garbage_lets_the_cache_stand_in() {
    let forge = Forge::new();
    let repo = forge.repo(NAME);
    let c = repo.commit(&[("README.md", README)], "add results", T0);
    repo.commit(&[("CHANGES.md", "later\n")], "later", T0 + 60);
    let ws = Scratch::new();
    let file = ws.write_pin(&readme_pin(
        "garbled",
        NAME,
        c,
        &sha256_hex(README),
        T0_RFC3339,
    ));
    {
        let daemon = GitDaemon::start(forge.path(), Wants::Reachable);
        ws.audit(["--rewrite", &to_daemon(&daemon), &file])
            .assert_code(0);
    }
    let offline = ws.audit(["--offline", &file]);
    offline.assert_code(0);

    // A shallow copy of the repository served by a stock daemon.
    let shallow = tempfile::tempdir().expect("tempdir");
    let made = std::process::Command::new("git")
        .args(["clone", "-q", "--bare", "--depth", "1"])
        .arg(format!("file://{}/{NAME}.git", forge.path().display()))
        .arg(shallow.path().join(format!("{NAME}.git")))
        .status()
        .expect("git clone runs");
    assert!(made.success());
    let shallow_daemon = GitDaemon::start(shallow.path(), Wants::Reachable);
    let garbage =
        crate::common::HangingServer::answering(b"HTTP/1.1 200 OK\r\n\r\nnot git at all\n");
    for rewrite in [
        to_daemon(&shallow_daemon),
        Forge::rewrite(&garbage.url("git", "")),
    ] {
        let run = ws.audit(["--rewrite", &rewrite, &file]);
        run.assert_code(0);
        assert_eq!(
            verdicts(&run),
            verdicts(&offline),
            "{rewrite}: {:#}\n{}",
            run.report()["findings"],
            run.stderr
        );
        let s = run.source("garbled", "readme");
        assert_eq!(s["status"], "checked", "{rewrite}: {s:#}");
        assert!(
            s["stale_since"].is_string(),
            "{rewrite}: stale is marked: {s:#}"
        );
        assert_eq!(run.claim("garbled", "decode")["status"], "verified");
    }
}

#[test]
fn a_cold_cache_with_the_daemon_stopped_is_unchecked() {
    let forge = Forge::new();
    let repo = forge.repo(NAME);
    let c = repo.commit(&[("README.md", README)], "add results", T0);
    let daemon = GitDaemon::start(forge.path(), Wants::Reachable);
    let rewrite = to_daemon(&daemon);
    drop(daemon);
    let ws = Scratch::new();
    let file = ws.write_pin(&readme_pin(
        "cold",
        NAME,
        c,
        &sha256_hex(README),
        T0_RFC3339,
    ));
    let run = ws.audit(["--rewrite", &rewrite, &file]);
    run.assert_code(2);
    let s = run.source("cold", "readme");
    assert_eq!(s["status"], "unchecked", "{s:#}");
    assert_eq!(s["stale_since"], Value::Null);
    assert_eq!(run.claim("cold", "decode")["status"], "unchecked");
}

const NOTES: &str = "# Side notes\n\ndecode: 2.9 tok/s\n";

/// A repository whose `main` never holds `notes.md`: it lives on `side` only.
fn side_branch_forge() -> (Forge, FixtureRepo, Oid) {
    let forge = Forge::new();
    let repo = forge.repo(NAME);
    repo.commit(&[("README.md", README)], "add results", T0);
    let pinned = repo.commit_on("side", &[("notes.md", NOTES)], "side notes", T0 + 60);
    // main moves on without the side branch.
    repo.commit(&[("CHANGES.md", "later\n")], "later", T0 + 120);
    (forge, repo, pinned)
}

fn notes_pin(id: &str, pinned: Oid) -> Value {
    let s = source(
        "notes",
        NAME,
        pinned,
        "notes.md",
        &sha256_hex(NOTES),
        "2023-11-14T22:14:20Z",
    );
    let c = claim("decode", &s, 3, 2.9);
    pin(id, &[s], &[c])
}

#[test]
fn a_document_only_on_a_side_branch_is_upstream_changed_on_the_default_branch() {
    // Upstream is the default branch (the remote's HEAD), where a reader following
    // the repository looks; the side branch's own tip is no upstream.
    let (forge, repo, pinned) = side_branch_forge();
    repo.commit_on("side", &[("other.md", "x\n")], "unrelated", T0 + 180);
    let daemon = GitDaemon::start(forge.path(), Wants::Reachable);
    let ws = Scratch::new();
    let file = ws.write_pin(&notes_pin("side", pinned));
    let run = ws.audit(["--rewrite", &to_daemon(&daemon), &file]);
    run.assert_codes(&["upstream-changed"]);
    let s = run.source("side", "notes");
    assert_eq!(s["upstream"]["changed"], true, "{s:#}");
    assert_eq!(s["upstream"]["head"], repo.tip("main").unwrap().to_string());
    let f = run.only("upstream-changed");
    assert_eq!(f["evidence"]["branch"], "main", "{f:#}");
    assert_eq!(f["evidence"]["removed"], true, "{f:#}");
    assert_eq!(f["evidence"]["not_on_default_branch"], true, "{f:#}");
    let message = f["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("is not on the default branch `main`"),
        "{message}"
    );
}

#[test]
fn a_figure_corrected_on_its_side_branch_is_not_upstream() {
    // Only the default branch is upstream: a correction on the side branch is
    // not read as the figure's new value.
    let (forge, repo, pinned) = side_branch_forge();
    repo.commit_on(
        "side",
        &[("notes.md", NOTES.replace("2.9", "3.4"))],
        "fix decode",
        T0 + 180,
    );
    let daemon = GitDaemon::start(forge.path(), Wants::Reachable);
    let ws = Scratch::new();
    let file = ws.write_pin(&notes_pin("fixed", pinned));
    let run = ws.audit(["--rewrite", &to_daemon(&daemon), &file]);
    run.assert_codes(&["upstream-changed"]);
    let changed = run.only("upstream-changed");
    assert_eq!(
        changed["evidence"]["head"],
        repo.tip("main").unwrap().to_string()
    );
    assert_eq!(changed["evidence"]["figures_unfollowed"], 1, "{changed:#}");
}

#[test]
fn a_document_deleted_at_the_head_is_one_finding_for_all_its_figures() {
    let forge = Forge::new();
    let repo = forge.repo(NAME);
    let doc = "# Results\n\n| a | 1.1 |\n| b | 2.2 |\n| c | 3.3 |\n| d | 4.4 |\n| e | 5.5 |\n";
    let pinned = repo.commit(&[("results.md", doc)], "add results", T0);
    repo.delete(&["results.md"], "drop results", T0 + 60);
    let daemon = GitDaemon::start(forge.path(), Wants::Reachable);
    let ws = Scratch::new();
    let s = source(
        "results",
        NAME,
        pinned,
        "results.md",
        &sha256_hex(doc),
        "2023-11-14T22:13:20Z",
    );
    let claims: Vec<Value> = ["1.1", "2.2", "3.3", "4.4", "5.5"]
        .iter()
        .enumerate()
        .map(|(k, v)| claim(&format!("row {k}"), &s, 3 + k as u32, v.parse().unwrap()))
        .collect();
    let file = ws.write_pin(&pin("deleted", &[s], &claims));
    let run = ws.audit(["--rewrite", &to_daemon(&daemon), &file]);
    run.assert_codes(&["upstream-changed"]);
    run.assert_lacks("value-superseded");
    let f = run.only("upstream-changed");
    assert_eq!(f["evidence"]["removed"], true, "{f:#}");
    assert_eq!(f["evidence"]["figures_unfollowed"], 5, "{f:#}");
    let message = f["message"].as_str().unwrap_or_default();
    assert!(message.contains("the 5 figures"), "{message}");
}

#[test]
fn a_hash_mismatch_hint_names_the_commit_and_path() {
    let forge = Forge::new();
    let repo = forge.repo(NAME);
    let c = repo.commit(&[("docs/results.md", README)], "add results", T0);
    let daemon = GitDaemon::start(forge.path(), Wants::Reachable);
    let ws = Scratch::new();
    let s = source(
        "results",
        NAME,
        c,
        "docs/results.md",
        &"0".repeat(64),
        T0_RFC3339,
    );
    let file = ws.write_pin(&pin("wrong", &[s], &[]));
    let run = ws.audit(["--rewrite", &to_daemon(&daemon), &file]);
    let f = run.only("hash-mismatch");
    let short = &c.to_string()[..7];
    assert_eq!(
        f["hint"],
        format!(
            "hash the blob at the pinned commit: `git show {short}:docs/results.md | sha256sum`"
        )
    );
}

#[test]
fn a_malformed_weight_hash_with_no_model_named_is_malformed_hash() {
    let ws = Scratch::new();
    let sha = "de1fa14ea798512f54dafc8b8795eb3ef1a6c367";
    let record = format!(
        "# Bare conditions - Pinned document: https://github.com/acme/bench/blob/{sha}/README.md \
         - Source revision: {sha} ```json {{\"conditions\": {{\"weight_hash\": \"abc123\", \
         \"model_revision\": null}}, \"figures\": [{{\"label\": \"decode\", \"value\": 2.9, \
         \"unit\": \"tokens/s\", \"source_line\": 5, \"source_document_sha256\": \"{}\", \
         \"evidence_url\": \"https://github.com/acme/bench/blob/{sha}/README.md#L5\"}}]}} ```\n",
        sha256_hex(README)
    );
    ws.write("records/bare.md", record);
    let run = ws.audit(["--offline", "records/bare.md"]);
    run.assert_code(1);
    let f = run.only("malformed-hash");
    assert_eq!(f["evidence"]["recorded"], "abc123", "{f:#}");
}
