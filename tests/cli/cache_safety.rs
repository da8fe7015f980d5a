//! A bad record never costs the cache, and a cache restored from elsewhere can't
//! plant a verdict: bad paths are refused at the edge, a mirror is never
//! deleted by an audit, verdict-deciding stores are authenticated with a key
//! kept outside the cache, and nothing is written through a link planted in it.

use std::path::PathBuf;

use git2::Oid;
use serde_json::{json, Value};

use crate::common::forge::{
    assert_clean, forge_with_readme, good_pin, pin, sha256_hex, snapshot, to_daemon, NAME, README,
    README_LINE, T0, T0_RFC3339,
};
use crate::common::scratch::Scratch;
use crate::common::{GitDaemon, Wants};

/// A record citing [`README`] line 5 of `acme/bench` by repository, revision and
/// `path` alone (no URL that would name the path again).
fn pin_with_path(id: &str, commit: Oid, path: &str) -> Value {
    let source = json!({
        "id": "readme",
        "repository": format!("https://github.com/{NAME}"),
        "revision": commit.to_string(),
        "path": path,
        "sha256": sha256_hex(README),
        "commit_time": T0_RFC3339,
    });
    let claim = json!({
        "label": "decode",
        "source": "readme",
        "lines": [README_LINE, README_LINE],
        "value": 2.9,
        "unit": "tokens/s",
    });
    pin(id, &[source], &[claim])
}

/// The pack files of the mirror of [`NAME`], with their sizes and times.
fn packs(ws: &Scratch) -> Vec<(PathBuf, u64, std::time::SystemTime)> {
    snapshot(&ws.mirror(NAME).join("objects/pack"))
        .into_iter()
        .map(|(p, (len, t))| (p, len, t))
        .collect()
}

const BAD_PATHS: [&str; 6] = ["./README.md", "..", "../x", "/x", "README.md\0", ""];

#[test]
fn a_bad_path_costs_only_its_source_and_never_the_mirror() {
    let (forge, repo, commit) = forge_with_readme();
    let mut daemon = GitDaemon::start(forge.path(), Wants::Reachable);
    let ws = Scratch::new();
    let good = ws.write_pin(&good_pin("good", commit));
    let mut files = vec![good.clone()];
    for (i, path) in BAD_PATHS.iter().enumerate() {
        files.push(ws.write_pin(&pin_with_path(&format!("bad-{i}"), commit, path)));
    }
    let rewrite = to_daemon(&daemon);
    let mut args = vec!["--rewrite".to_string(), rewrite.clone()];
    args.extend(files.iter().cloned());

    let first = ws.audit(&args);
    first.assert_code(1);
    assert_clean(&first, "good", commit);
    for (i, path) in BAD_PATHS.iter().enumerate() {
        let id = format!("bad-{i}");
        let invalid: Vec<Value> = first
            .with_code("invalid-record")
            .into_iter()
            .filter(|f| f["record"] == id.as_str())
            .collect();
        assert_eq!(invalid.len(), 1, "{path:?}: {invalid:#?}");
        assert_eq!(invalid[0]["source"], "readme", "{path:?}");
        let s = first.source(&id, "readme");
        assert_eq!(s["status"], "unchecked", "{path:?}: {s:#}");
        let reason = s["reason"].as_str().unwrap_or_default();
        assert!(!reason.contains("cache damaged"), "{path:?}: {reason}");
    }
    assert!(!first.stderr.contains("damaged"), "{}", first.stderr);
    let before = packs(&ws);
    assert!(!before.is_empty(), "the mirror holds a pack");

    let second = ws.audit(&args);
    second.assert_code(1);
    assert_clean(&second, "good", commit);
    assert!(!second.stderr.contains("damaged"), "{}", second.stderr);
    assert_eq!(packs(&ws), before, "the mirror was fetched again");

    // The pinned commit force-pushed away, then the forge gone: the mirror is
    // its last copy, and the good record still verifies from it.
    let other = repo.commit_detached(None, &[("OTHER.md", "other\n")], "rewrite", T0 + 60);
    repo.reset_branch("main", other);
    daemon.stop();
    let last = ws.audit(&args);
    assert_clean(&last, "good", commit);
    let run = ws.audit(["--rewrite", &rewrite, &good]);
    assert_clean(&run, "good", commit);
    assert_ne!(run.code(), 2, "{}", run.stderr);
}

/// The copies of the mirror of [`NAME`] moved aside into the quarantine.
fn quarantined(ws: &Scratch) -> Vec<PathBuf> {
    let dir = ws
        .cache()
        .join("quarantine/git/github.com")
        .join(format!("{NAME}.git"));
    std::fs::read_dir(dir)
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default()
}

#[test]
fn a_damaged_mirror_is_quarantined_and_its_last_copy_of_a_commit_carried_over() {
    let (forge, repo, commit) = forge_with_readme();
    let daemon = GitDaemon::start(forge.path(), Wants::Reachable);
    let ws = Scratch::new();
    let file = ws.write_pin(&good_pin("rec", commit));
    let rewrite = to_daemon(&daemon);
    ws.audit(["--rewrite", &rewrite, &file]).assert_code(0);

    // Upstream force-pushes the pinned commit away; the cached mirror, its
    // last copy, then fails its check (a ref that does not parse).
    let other = repo.commit_detached(None, &[("OTHER.md", "other\n")], "rewrite", T0 + 60);
    repo.reset_branch("main", other);
    std::fs::write(ws.mirror(NAME).join("refs/heads/main"), "garbage\n").expect("write ref");

    let run = ws.audit(["--rewrite", &rewrite, &file]);
    let copies = quarantined(&ws);
    assert_eq!(copies.len(), 1, "{copies:?}\n{}", run.stderr);
    assert!(copies[0].join("objects").is_dir(), "the copy is whole");
    assert!(run.stderr.contains("moved it aside"), "{}", run.stderr);
    assert!(run.stderr.contains("carried it over"), "{}", run.stderr);
    let c = run.claim("rec", "decode");
    assert_eq!(c["status"], "verified", "{c:#}");
    let unreachable = run.only("revision-unreachable");
    assert!(
        unreachable["message"]
            .as_str()
            .unwrap_or_default()
            .contains("quarantined"),
        "{unreachable:#}"
    );
    // The fresh mirror holds the carried commit now: offline, from it alone.
    let offline = ws.audit_offline([&file]);
    assert_eq!(offline.claim("rec", "decode")["status"], "verified");
    assert_eq!(quarantined(&ws).len(), 1, "nothing more moved aside");

    // Only the explicit command prunes, and never the live mirror.
    let gc = ws.run(["cache", "gc", "--cache", "cache"]);
    gc.assert_code(0);
    assert!(gc.stdout.contains("copies deleted: 1"), "{}", gc.stdout);
    assert!(quarantined(&ws).is_empty());
    let offline = ws.audit_offline([&file]);
    assert_eq!(offline.claim("rec", "decode")["status"], "verified");
}
