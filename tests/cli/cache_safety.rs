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

/// `acme/bench` served by `git daemon`, a scratch directory with the usual
/// good pin of it, and the `--rewrite` that reaches the daemon.
struct Served {
    _forge: crate::common::forge::Forge,
    repo: crate::common::FixtureRepo,
    commit: Oid,
    daemon: GitDaemon,
    ws: Scratch,
    file: String,
    rewrite: String,
}

fn served() -> Served {
    let (forge, repo, commit) = forge_with_readme();
    let daemon = GitDaemon::start(forge.path(), Wants::Reachable);
    let ws = Scratch::new();
    let file = ws.write_pin(&good_pin("rec", commit));
    let rewrite = to_daemon(&daemon);
    Served {
        _forge: forge,
        repo,
        commit,
        daemon,
        ws,
        file,
        rewrite,
    }
}

const BAD_PATHS: [&str; 6] = ["./README.md", "..", "../x", "/x", "README.md\0", ""];

#[test]
fn a_bad_path_costs_only_its_source_and_never_the_mirror() {
    let mut s = served();
    let repo = &s.repo;
    let commit = s.commit;
    let ws = &s.ws;
    let rewrite = s.rewrite.clone();
    let good = ws.write_pin(&good_pin("good", commit));
    let mut files = vec![good.clone()];
    for (i, path) in BAD_PATHS.iter().enumerate() {
        files.push(ws.write_pin(&pin_with_path(&format!("bad-{i}"), commit, path)));
    }
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
    let before = packs(ws);
    assert!(!before.is_empty(), "the mirror holds a pack");

    let second = ws.audit(&args);
    second.assert_code(1);
    assert_clean(&second, "good", commit);
    assert!(!second.stderr.contains("damaged"), "{}", second.stderr);
    assert_eq!(packs(ws), before, "the mirror was fetched again");

    // The pinned commit force-pushed away, then the forge gone: the mirror is
    // its last copy, and the good record still verifies from it.
    let other = repo.commit_detached(None, &[("OTHER.md", "other\n")], "rewrite", T0 + 60);
    repo.reset_branch("main", other);
    s.daemon.stop();
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
    let s = served();
    let repo = &s.repo;
    let ws = &s.ws;
    let file = s.file.clone();
    let rewrite = s.rewrite.clone();
    ws.audit(["--rewrite", &rewrite, &file]).assert_code(0);

    // Upstream force-pushes the pinned commit away; the cached mirror, its
    // last copy, then fails its check (a ref that does not parse).
    let other = repo.commit_detached(None, &[("OTHER.md", "other\n")], "rewrite", T0 + 60);
    repo.reset_branch("main", other);
    std::fs::write(ws.mirror(NAME).join("refs/heads/main"), "garbage\n").expect("write ref");

    let run = ws.audit(["--rewrite", &rewrite, &file]);
    let copies = quarantined(ws);
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
    assert_eq!(quarantined(ws).len(), 1, "nothing more moved aside");

    // Only the explicit command prunes, and never the live mirror.
    let gc = ws.run(["cache", "gc", "--cache", "cache"]);
    gc.assert_code(0);
    assert!(gc.stdout.contains("copies deleted: 1"), "{}", gc.stdout);
    assert!(quarantined(ws).is_empty());
    let offline = ws.audit_offline([&file]);
    assert_eq!(offline.claim("rec", "decode")["status"], "verified");
}

/// A repair carries over every commit a record ever had judged, not only the
/// commits of the run that repairs; `cache gc` never deletes the last copy of
/// one (issue "Trust nothing you did not recompute", attack 4).
#[test]
fn a_repair_keeps_every_judged_commit_and_gc_never_deletes_a_last_copy() {
    let s = served();
    let repo = &s.repo;
    let ws = &s.ws;
    let rewrite = s.rewrite.clone();
    // Record set A judges the first commit, while a branch still reaches it.
    ws.audit(["--rewrite", &rewrite, &s.file]).assert_code(0);

    // Upstream force-pushes it away and goes on; record set B cites the new
    // history only. The mirror then fails its check and is repaired by B's run.
    let other = repo.commit_detached(None, &[("README.md", README)], "rewrite", T0 + 60);
    repo.reset_branch("main", other);
    let b = ws.write_pin(&good_pin("b", other));
    std::fs::write(ws.mirror(NAME).join("refs/heads/main"), "garbage\n").expect("write ref");
    let run = ws.audit(["--rewrite", &rewrite, &b]);
    assert_eq!(
        run.claim("b", "decode")["status"],
        "verified",
        "{}",
        run.stderr
    );
    assert_eq!(quarantined(ws).len(), 1, "{}", run.stderr);

    // A's commit came along: gc deletes the copy, and A verifies offline.
    let gc = ws.run(["cache", "gc", "--cache", "cache"]);
    gc.assert_code(0);
    assert!(gc.stdout.contains("deleted: 1, kept: 0"), "{}", gc.stdout);
    let a = ws.audit_offline([&s.file]);
    assert_eq!(
        a.claim("rec", "decode")["status"],
        "verified",
        "{}",
        a.stderr
    );

    // Once more, and then the live mirror is gone: the quarantined copy is
    // the last copy of both commits, and gc keeps it unless told.
    std::fs::write(ws.mirror(NAME).join("refs/heads/main"), "garbage\n").expect("write ref");
    ws.audit(["--rewrite", &rewrite, &b]);
    assert_eq!(quarantined(ws).len(), 1);
    std::fs::remove_dir_all(ws.mirror(NAME)).expect("live mirror removed");
    let gc = ws.run(["cache", "gc", "--cache", "cache"]);
    gc.assert_code(1);
    assert!(gc.stdout.contains(&s.commit.to_string()), "{}", gc.stdout);
    assert!(gc.stdout.contains(&other.to_string()), "{}", gc.stdout);
    assert!(gc.stderr.contains("--force"), "{}", gc.stderr);
    assert_eq!(quarantined(ws).len(), 1, "kept");
    let gc = ws.run(["cache", "gc", "--cache", "cache", "--force"]);
    gc.assert_code(0);
    assert!(quarantined(ws).is_empty());
}

#[test]
fn an_unreadable_home_changes_nothing() {
    let s = served();
    let commit = s.commit;
    let ws = &s.ws;
    let file = s.file.clone();
    let rewrite = s.rewrite.clone();
    ws.audit(["--rewrite", &rewrite, &file]).assert_code(0);
    let before = packs(ws);
    // Tests run as root, whom no permission bit stops: a HOME that is a file,
    // or lies under one, can't be read by anyone.
    let not_a_dir = ws.write("home-is-a-file", "x\n");
    let homes = [
        ws.path().join(&not_a_dir),
        ws.path().join(&not_a_dir).join("home"),
    ];
    for home in &homes {
        for offline in [false, true] {
            let mut cmd = ws.cached("audit");
            cmd.env("HOME", home)
                .env_remove("XDG_CONFIG_HOME")
                .env_remove("XDG_STATE_HOME")
                .args(["--format", "json", "--timeout", "10", "--rewrite", &rewrite]);
            if offline {
                cmd.arg("--offline");
            }
            let run = crate::common::run::run(cmd.arg(&file));
            run.assert_code(0);
            assert_clean(&run, "rec", commit);
            assert!(!run.stderr.contains("damaged"), "{}", run.stderr);
            assert!(!run.stderr.contains("delete"), "{}", run.stderr);
        }
    }
    assert_eq!(packs(ws), before, "the mirror was fetched again");
    ws.audit_offline([&file]).assert_code(0);
}

/// `pinaudit ARGS...` in `ws` as the unprivileged user 65534 (as `docker --user
/// 65534` runs it) with `HOME` at `home`.
fn as_nobody(ws: &Scratch, home: &std::path::Path, args: &[&str]) -> crate::common::run::Run {
    use std::os::unix::process::CommandExt;
    // The other user may not be able to reach the build directory (a checkout under
    // a 0700 directory): run a copy of the binary from the workspace it can enter.
    let bin = ws.path().join("pinaudit-as-nobody");
    if !bin.exists() {
        std::fs::copy(assert_cmd::cargo::cargo_bin("pinaudit"), &bin).expect("copy the binary");
        let exec = std::os::unix::fs::PermissionsExt::from_mode(0o755);
        std::fs::set_permissions(&bin, exec).expect("chmod the binary");
    }
    let mut std_cmd = std::process::Command::new(&bin);
    std_cmd.uid(65534).gid(65534);
    let mut cmd = assert_cmd::Command::from_std(std_cmd);
    cmd.current_dir(ws.path())
        .env_remove("PINAUDIT_CACHE")
        .env_remove("GITHUB_TOKEN")
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("XDG_STATE_HOME")
        .env("SOURCE_DATE_EPOCH", "0")
        .env("HOME", home)
        .timeout(std::time::Duration::from_secs(60))
        .args(args);
    crate::common::run::run(&mut cmd)
}

fn chown_tree(dir: &std::path::Path, uid: u32) {
    for entry in walkdir::WalkDir::new(dir) {
        let entry = entry.expect("walk");
        std::os::unix::fs::lchown(entry.path(), Some(uid), Some(uid)).expect("chown");
    }
}

#[test]
fn a_home_the_user_may_not_read_changes_nothing() {
    // SAFETY: geteuid only reads the process's credentials.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: dropping to another user needs root");
        return;
    }
    let s = served();
    let commit = s.commit;
    let ws = &s.ws;
    let file = s.file.clone();
    let rewrite = s.rewrite.clone();
    chown_tree(ws.path(), 65534);
    // `HOME=/root` for user 65534: a directory only root may enter.
    let home = tempfile::tempdir().expect("home");
    std::fs::write(home.path().join(".gitconfig"), "[user]\n\tname = root\n").expect("write");
    let private = std::os::unix::fs::PermissionsExt::from_mode(0o700);
    std::fs::set_permissions(home.path(), private).expect("chmod");
    let online = [
        "audit",
        "--cache",
        "cache",
        "--format",
        "json",
        "--timeout",
        "10",
        "--rewrite",
        &rewrite,
        &file,
    ];
    let first = as_nobody(ws, home.path(), &online);
    first.assert_code(0);
    assert_clean(&first, "rec", commit);
    // The broken environment is named, and nothing is blamed on the cache.
    assert!(
        first.stderr.contains("can't read the git configuration")
            && first.stderr.contains(".gitconfig"),
        "{}",
        first.stderr
    );
    let before = packs(ws);
    for args in [
        &online[..],
        &[
            "audit",
            "--cache",
            "cache",
            "--format",
            "json",
            "--offline",
            &file,
        ][..],
    ] {
        let run = as_nobody(ws, home.path(), args);
        run.assert_code(0);
        assert_clean(&run, "rec", commit);
        assert!(!run.stderr.contains("damaged"), "{}", run.stderr);
        assert!(!run.stderr.contains("delete"), "{}", run.stderr);
    }
    assert_eq!(packs(ws), before, "the mirror was fetched again");
}

// --- Authenticated stores ----------------------------------------------------------

/// `pinaudit audit --cache cache --format json ARGS...` with the cache key given
/// by `PINAUDIT_CACHE_KEY=key`, or, for `None`, by the key file in `HOME`.
fn audit_keyed(ws: &Scratch, key: Option<&str>, args: &[&str]) -> crate::common::run::Run {
    let mut cmd = ws.cached("audit");
    match key {
        Some(k) => cmd.env("PINAUDIT_CACHE_KEY", k),
        None => cmd.env_remove("PINAUDIT_CACHE_KEY"),
    };
    cmd.args(["--format", "json", "--timeout", "10"]).args(args);
    crate::common::run::run(&mut cmd)
}

/// How a forger seals an edited store: with the plain checksum anyone can
/// recompute (what the stores carried before), or with a MAC under some key.
#[derive(Clone, Copy)]
enum Seal<'a> {
    Checksum,
    Key(&'a str),
}

/// Rewrites the store at `path` with `edit` applied to its body (all but the
/// trailing 32 bytes, magic line included), sealed with `seal`.
fn forge_store(
    original: &[u8],
    path: &std::path::Path,
    seal: Seal<'_>,
    edit: impl Fn(&mut Vec<u8>),
) {
    use sha2::{Digest, Sha256};
    // The whole-record memos would answer the record before the forged store
    // is asked: each forgery is tried on its own.
    let _ = std::fs::remove_file(path.with_file_name("records.store"));
    let _ = std::fs::remove_file(path.with_file_name("fragments.store"));
    let mut body = original[..original.len() - 32].to_vec();
    edit(&mut body);
    let tag: Vec<u8> = match seal {
        Seal::Checksum => Sha256::digest(&body).to_vec(),
        Seal::Key(k) => pinaudit::cache_key::CacheKey::from_secret(k.as_bytes())
            .mac(&[&body])
            .to_vec(),
    };
    body.extend_from_slice(&tag);
    std::fs::write(path, body).expect("write store");
}

/// Runs `check` on an audit (with each of `runs`' arguments) of the store at
/// `path` forged by `plant` from `original` and sealed as a forger can: with a
/// recomputed checksum, with another workflow's key (`key-b` for a run under
/// `key-a`), or with the right `PINAUDIT_CACHE_KEY` but audited without it (the
/// key file in HOME).
fn each_forgery(
    ws: &Scratch,
    path: &std::path::Path,
    original: &[u8],
    plant: impl Fn(&mut Vec<u8>),
    runs: [&[&str]; 2],
    check: impl Fn(&crate::common::run::Run),
) {
    for (seal, key) in [
        (Seal::Checksum, Some("key-a")),
        (Seal::Key("key-b"), Some("key-a")),
        (Seal::Key("key-a"), None),
    ] {
        for args in runs {
            forge_store(original, path, seal, &plant);
            check(&audit_keyed(ws, key, args));
        }
    }
}

type CheckEntry = ([u8; 32], Vec<u8>);

/// The entries of a `checks.store` body after its magic line (key 32, length
/// 4, value), and where they start.
fn check_entries(body: &[u8]) -> (usize, Vec<CheckEntry>) {
    let start = body.iter().position(|&b| b == b'\n').expect("magic line") + 1;
    let mut entries = Vec::new();
    let mut at = start;
    while at < body.len() {
        let key: [u8; 32] = body[at..at + 32].try_into().expect("key");
        let len = u32::from_le_bytes(body[at + 32..at + 36].try_into().expect("len")) as usize;
        entries.push((key, body[at + 36..at + 36 + len].to_vec()));
        at += 36 + len;
    }
    (start, entries)
}

#[test]
fn a_forged_checks_store_never_changes_a_verdict() {
    let s = served();
    let ws = &s.ws;
    let mut pin = good_pin("rec", s.commit);
    // The verified answer, alone in the store of an audit of the good claim.
    let good = ws.write_pin(&pin);
    audit_keyed(
        ws,
        Some("key-a"),
        &["--no-upstream", "--rewrite", &s.rewrite, &good],
    );
    let store = ws.cache().join("checks.store");
    let bytes = std::fs::read(&store).expect("checks.store");
    // Less its trailing MAC.
    let (_, alone) = check_entries(&bytes[..bytes.len() - 32]);
    std::fs::remove_file(&store).expect("rm store");
    let mut fake = pin["claims"][0].clone();
    fake["label"] = json!("fake");
    fake["value"] = json!(7.7);
    pin["claims"].as_array_mut().expect("claims").push(fake);
    let file = ws.write_pin(&pin);
    let online = ["--no-upstream", "--rewrite", &s.rewrite, &file];
    let offline = ["--no-upstream", "--offline", &file];
    let first = audit_keyed(ws, Some("key-a"), &online);
    assert_eq!(first.claim("rec", "fake")["status"], "missing");
    let original = std::fs::read(&store).expect("checks.store");
    // The fake claim's answer: the entry only the second store holds.
    let (_, both) = check_entries(&original[..original.len() - 32]);
    let fake_key: Vec<[u8; 32]> = both
        .iter()
        .map(|(k, _)| *k)
        .filter(|k| alone.iter().all(|(a, _)| a != k))
        .collect();
    assert_eq!(fake_key.len(), 1, "one answer for the fake claim");
    // The control: sealed with the run's own key, one of the good claim's
    // remembered answers put under the fake's key plants `verified` for a value
    // the document doesn't hold.
    let plant_with = |value: Vec<u8>| {
        let key = fake_key[0];
        move |b: &mut Vec<u8>| {
            let (start, entries) = check_entries(b);
            b.truncate(start);
            for (k, v) in entries {
                let v = if k == key { value.clone() } else { v };
                b.extend_from_slice(&k);
                b.extend_from_slice(&(v.len() as u32).to_le_bytes());
                b.extend_from_slice(&v);
            }
        }
    };
    let verified = alone
        .iter()
        .map(|(_, v)| v.clone())
        .find(|v| {
            forge_store(&original, &store, Seal::Key("key-a"), plant_with(v.clone()));
            let planted = audit_keyed(ws, Some("key-a"), &offline);
            planted.claim("rec", "fake")["status"] == "verified"
        })
        .expect("a planted answer that the run's own key lets through");
    let plant = plant_with(verified);

    // A recomputed checksum, another workflow's key, or no key of this cache
    // at all (the key file in HOME): re-derived, online and offline.
    each_forgery(ws, &store, &original, plant, [&online, &offline], |run| {
        let c = run.claim("rec", "fake");
        assert_eq!(c["status"], "missing", "{c:#}");
        assert_eq!(run.claim("rec", "decode")["status"], "verified");
        run.assert_has("value-missing");
    });
}

#[test]
fn a_forged_blobs_store_never_changes_a_verdict() {
    let s = served();
    let ws = &s.ws;
    let recorded = sha256_hex("not the document\n");
    let pin = crate::common::forge::readme_pin("rec", NAME, s.commit, &recorded, T0_RFC3339);
    let file = ws.write_pin(&pin);
    let online = ["--rewrite", &s.rewrite, &file];
    let offline = ["--offline", &file];
    audit_keyed(ws, Some("key-a"), &online).assert_has("hash-mismatch");
    let store = ws.cache().join("blobs.store");
    let original = std::fs::read(&store).expect("blobs.store");
    let wrong: Vec<u8> = (0..32)
        .map(|i| u8::from_str_radix(&recorded[2 * i..2 * i + 2], 16).expect("hex"))
        .collect();
    // Entries: blob id 20, size 8, sha256 32; each made to say the recorded hash.
    let plant = |b: &mut Vec<u8>| {
        let start = b.iter().position(|&c| c == b'\n').expect("magic line") + 1;
        for entry in b[start..].chunks_exact_mut(60) {
            entry[28..].copy_from_slice(&wrong);
        }
    };
    // The control: sealed with the run's own key, the wrong hash would pass.
    forge_store(&original, &store, Seal::Key("key-a"), plant);
    audit_keyed(ws, Some("key-a"), &offline).assert_lacks("hash-mismatch");
    each_forgery(ws, &store, &original, plant, [&online, &offline], |run| {
        run.assert_has("hash-mismatch");
        let src = run.source("rec", "readme");
        assert_eq!(src["sha256"]["actual"], sha256_hex(README), "{src:#}");
    });
}

// --- No writes through planted links -------------------------------------------------

type Snapshot = std::collections::BTreeMap<PathBuf, (u64, std::time::SystemTime)>;

/// [`served`], audited clean once, and a directory outside its cache with
/// files a planted link may aim at, as they are now.
fn filled_beside_outside() -> (Served, PathBuf, Snapshot) {
    let s = served();
    s.ws.audit(["--rewrite", &s.rewrite, &s.file])
        .assert_code(0);
    let dir = s.ws.path().join("outside");
    for name in ["a", "b", "c", "d", "e", "f"] {
        s.ws.write(&format!("outside/{name}"), format!("precious {name}\n"));
    }
    let before = snapshot(&dir);
    (s, dir, before)
}

fn plant_link(target: &std::path::Path, at: &std::path::Path) {
    if at.exists() || at.is_symlink() {
        if at.is_dir() && !at.is_symlink() {
            std::fs::remove_dir_all(at).expect("rm dir");
        } else {
            std::fs::remove_file(at).expect("rm");
        }
    }
    std::os::unix::fs::symlink(target, at).expect("symlink");
}

#[test]
fn links_planted_in_the_cache_are_never_followed() {
    let (s, out, before) = filled_beside_outside();
    let ws = &s.ws;
    let args = ["--rewrite", &s.rewrite, &s.file];
    let cache = ws.cache();
    let mirror = ws.mirror(NAME);
    // Every file pinaudit writes or reads in place, a link to a file outside
    // (or, for a store, to a device that never ends).
    let planted = [
        (cache.join("checks.store"), out.join("a")),
        (cache.join("blobs.store"), PathBuf::from("/dev/zero")),
        (cache.join("verified.store"), out.join("b")),
        (cache.join("fragments.store"), out.join("e")),
        (cache.join("records.store"), out.join("f")),
        (cache.join("drift.store"), out.join("c")),
        (mirror.join("pinaudit-synced-at"), out.join("d")),
    ];
    for (at, target) in &planted {
        plant_link(target, at);
    }
    for run in [ws.audit(args), ws.audit_offline([&s.file])] {
        run.assert_code(0);
        assert_clean(&run, "rec", s.commit);
    }
    assert_eq!(snapshot(&out), before, "a file outside the cache changed");
    for (at, _) in &planted[..4] {
        assert!(!at.is_symlink(), "{} is still a link", at.display());
    }
}

#[test]
fn a_cache_with_planted_links_or_open_to_others_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let (s, out, before) = filled_beside_outside();
    let ws = &s.ws;
    let args = ["--rewrite", &s.rewrite, &s.file];
    let host = ws.cache().join("git/github.com");
    let lock = host.join("acme/bench.git.pinaudit-lock");

    // A directory every mirror goes through: a setup to fix (exit 3), named
    // once, before anything is fetched or read (issue 47).
    let refused = |why: &str| {
        for run in [ws.audit(args), ws.audit_offline([&s.file])] {
            run.assert_code(3);
            let said = &run.stderr;
            assert!(said.contains("the cache cannot be used"), "{said}");
            assert!(
                said.contains("not safe to use") && said.contains(why),
                "{said}"
            );
            assert!(!said.contains("damaged"), "{said}");
        }
        assert_eq!(snapshot(&out), before, "a file outside the cache changed");
    };

    // Refused online only (offline, the thing planted is not used at all).
    let refused_online = |why: &str| {
        let run = ws.audit(args);
        run.assert_code(2);
        let reason = run.source("rec", "readme")["reason"].clone();
        assert!(
            reason.as_str().unwrap_or_default().contains(why),
            "{reason}"
        );
        assert_eq!(snapshot(&out), before, "a file outside the cache changed");
    };

    // A directory of the cache that others may write.
    std::fs::set_permissions(&host, std::fs::Permissions::from_mode(0o777)).expect("chmod");
    refused("others may write");
    // Writable by the user's own group only (a umask of 002): fine.
    std::fs::set_permissions(&host, std::fs::Permissions::from_mode(0o775)).expect("chmod");
    ws.audit(args).assert_code(0);

    // The mirror's lock file, a link to a file outside.
    std::fs::remove_file(&lock).expect("rm lock");
    plant_link(&out.join("e"), &lock);
    refused_online("symbolic link");
    std::fs::remove_file(&lock).expect("rm link");

    // The quarantine, a link to a directory outside: a damaged mirror is not
    // moved out of the cache through it, and stays where it is.
    let quarantine = ws.cache().join("quarantine");
    plant_link(&out, &quarantine);
    std::fs::write(ws.mirror(NAME).join("refs/heads/main"), "garbage\n").expect("write ref");
    refused("symbolic link");
    assert!(ws.mirror(NAME).join("objects").is_dir(), "the mirror stays");
    std::fs::remove_file(&quarantine).expect("rm link");
    ws.audit(args).assert_code(0);

    // A directory of the cache swapped for a link to a copy elsewhere.
    let copy = ws.path().join("elsewhere");
    std::fs::rename(&host, &copy).expect("move");
    plant_link(&copy, &host);
    refused("symbolic link");
}

#[test]
fn a_forged_web_document_in_the_cache_is_never_judged() {
    use crate::common::web::{Response, WebServer};
    const PAGE: &str = "<html><body>\n<h1>Results</h1>\n<p>decode: 2.9 tok/s</p>\n</body></html>\n";
    const PLANTED: &str =
        "<html><body>\n<h1>Results</h1>\n<p>decode: 1.0 tok/s</p>\n</body></html>\n";
    // The server says "unchanged" to anyone who names its ETag.
    let server = WebServer::start(|req, _| {
        if req.headers.get("if-none-match").map(String::as_str) == Some("\"v1\"") {
            return Response::status(304).header("ETag", "\"v1\"");
        }
        Response::ok(PAGE).header("ETag", "\"v1\"")
    });
    let ws = Scratch::new();
    let url = server.url("paper.html");
    let pin = json!({
        "schema": "pinaudit/pins/v1", "id": "paper", "title": "a paper",
        "sources": [{"id": "page", "url": url, "sha256": sha256_hex(PAGE)}],
        "claims": [{"label": "decode", "source": "page", "lines": [3, 3], "value": 2.9,
                    "unit": "tokens/s"}],
        "artifacts": [],
    });
    let file = ws.write_pin(&pin);
    let first = ws.audit(["--allow-local", &file]);
    assert_eq!(first.claim("paper", "decode")["status"], "verified");

    // Another body, and a meta file that names its sha256 (what a forger can
    // compute), in place of the cached ones.
    let dir = ws.cache().join("http");
    let meta_path = std::fs::read_dir(&dir)
        .expect("http cache")
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "json"))
        .expect("a cached meta file");
    let mut meta: Value =
        serde_json::from_slice(&std::fs::read(&meta_path).expect("meta")).expect("json");
    meta["sha256"] = json!(sha256_hex(PLANTED));
    std::fs::write(&meta_path, serde_json::to_vec(&meta).expect("json")).expect("write");
    std::fs::write(meta_path.with_extension("body"), PLANTED).expect("write");

    let run = ws.audit(["--allow-local", &file]);
    assert_eq!(run.claim("paper", "decode")["status"], "verified");
    assert_eq!(
        run.source("paper", "page")["sha256"]["actual"],
        sha256_hex(PAGE)
    );
    // The forged entry was not offered as the cached copy: the page came whole.
    let log = server.log();
    assert_eq!(log.last().expect("a request").status, 200, "{log:#?}");

    // `http/`, a link to a directory outside: the cache is refused as a
    // setup to fix (exit 3), and nothing is written there.
    let elsewhere = ws.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).expect("mkdir");
    std::fs::remove_dir_all(&dir).expect("rm http");
    std::os::unix::fs::symlink(&elsewhere, &dir).expect("symlink");
    let run = ws.run(["audit", "--cache", "cache", "--allow-local", &file]);
    run.assert_code(3);
    assert!(run.stderr.contains("symbolic link"), "{}", run.stderr);
    let written: Vec<_> = std::fs::read_dir(&elsewhere).expect("read").collect();
    assert!(written.is_empty(), "{written:?}");
}

/// A second run on a locked mirror says whose lock it waits for (issue 47).
#[test]
fn a_run_waiting_for_a_locked_mirror_says_which_process_holds_it() {
    let server = crate::common::HangingServer::start();
    let ws = Scratch::new();
    let c = git2::Oid::from_str("0123456789abcdef0123456789abcdef01234567").expect("oid");
    let file = ws.write_pin(&good_pin("locked", c));
    let rewrite = format!("https://github.com/={}", server.url("git", ""));
    let args = [
        "audit",
        "--cache",
        "cache",
        "--format",
        "json",
        "--timeout",
        "3",
        "--rewrite",
        &rewrite,
        &file,
    ];
    let mut first = std::process::Command::new(assert_cmd::cargo::cargo_bin("pinaudit"))
        .args(args)
        .current_dir(ws.path())
        .env("HOME", ws.path())
        .env("PINAUDIT_CACHE_KEY", "pinaudit tests")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("the first run starts");
    let lock = ws
        .cache()
        .join(format!("git/github.com/{NAME}.git.pinaudit-lock"));
    let pid = first.id().to_string();
    let started = std::time::Instant::now();
    while std::fs::read_to_string(&lock).map_or(true, |t| t.trim() != pid) {
        assert!(
            started.elapsed().as_secs() < 20,
            "the first run never took the lock"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let second = ws.run(args);
    let _ = first.wait();
    assert!(
        second.stderr.contains("waiting for the cache lock on `")
            && second.stderr.contains(&format!("held by PID {pid}")),
        "{}",
        second.stderr
    );
}
