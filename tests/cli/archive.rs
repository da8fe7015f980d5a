//! Archives standing in for sources their forges lost: a fake Software Heritage
//! API on loopback answers the documented endpoints (`revision/`, `directory/`,
//! `content/…/raw/`, `origin/…/visits/`, `snapshot/`, `revision/…/log/`) with
//! the documented JSON shapes, describing the git objects of a real fixture
//! repository (so pinaudit can prove them), while `git daemon` plays a forge that deleted the
//! repository or force-pushed the commit away. Each test counts what the fake
//! archive was asked.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use git2::Oid;
use serde_json::{json, Value};

use crate::common::forge::{
    forge_with_readme, readme_pin, sha256_hex, to_daemon, Forge, NAME, README, T0, T0_RFC3339,
};
use crate::common::run::Run;
use crate::common::scratch::Scratch;
use crate::common::web::{Request, Response, WebServer};
use crate::common::{GitDaemon, Wants};

/// The git blob id of `bytes`.
fn blob_id(bytes: &[u8]) -> String {
    Oid::hash_object(git2::ObjectType::Blob, bytes)
        .expect("hash")
        .to_string()
}

/// What the fake archive holds, read from a real git repository: the commits
/// it archived, and the origins it visited, each with the branches of its
/// one visit. Its answers describe those git objects as the API does, so
/// pinaudit can prove them.
#[derive(Default, Clone)]
struct Holdings {
    /// The git directory the archived objects are read from.
    repo: Option<PathBuf>,
    commits: HashSet<String>,
    /// Origin URL → the branches (`refs/heads/main` → commit) of its visit.
    origins: HashMap<String, Vec<(String, String)>>,
    /// Blobs served with other bytes than theirs.
    damaged: bool,
    /// Directory listings name this file (name, bytes) in place of the one
    /// of that name the tree holds: a lying listing.
    lie: Option<(String, Vec<u8>)>,
}

type Override = dyn Fn(&Request, usize) -> Option<Response> + Send + Sync;

/// A fake Software Heritage API at `http://127.0.0.1:PORT/api/1/`.
struct FakeSwh {
    server: WebServer,
}

impl FakeSwh {
    fn start(holdings: Holdings) -> FakeSwh {
        FakeSwh::with(holdings, |_, _| None)
    }

    /// Answers as [`FakeSwh::start`] unless `first` answers the request.
    fn with(
        holdings: Holdings,
        first: impl Fn(&Request, usize) -> Option<Response> + Send + Sync + 'static,
    ) -> FakeSwh {
        let first: Arc<Override> = Arc::new(first);
        let server = WebServer::start(move |req, nth| {
            first(req, nth).unwrap_or_else(|| answer(&holdings, &req.path))
        });
        FakeSwh { server }
    }

    fn url(&self) -> String {
        self.server.url("api/1/")
    }

    /// The paths asked for so far, in order.
    fn asked(&self) -> Vec<String> {
        self.server
            .log()
            .into_iter()
            .map(|l| l.request.path)
            .collect()
    }
}

fn not_found() -> Response {
    Response::status(404)
        .header("Content-Type", "application/json")
        .header("X-RateLimit-Remaining", "119")
}

fn json_ok(v: Value) -> Response {
    Response::ok(v.to_string())
        .header("Content-Type", "application/json")
        .header("X-RateLimit-Limit", "120")
        .header("X-RateLimit-Remaining", "119")
}

/// A git time as the API writes it: RFC 3339 in the commit's own offset.
fn rfc3339(t: git2::Time) -> String {
    let offset = time::UtcOffset::from_whole_seconds(t.offset_minutes() * 60).expect("offset");
    time::OffsetDateTime::from_unix_timestamp(t.seconds())
        .expect("time")
        .to_offset(offset)
        .format(&time::format_description::well_known::Rfc3339)
        .expect("format")
}

/// A commit as `revision/<id>/` describes it.
fn revision_json(c: &git2::Commit<'_>) -> Value {
    let person = |s: git2::Signature<'_>| {
        json!({
            "fullname": format!("{} <{}>", s.name().unwrap_or(""), s.email().unwrap_or("")),
            "name": s.name(),
            "email": s.email(),
        })
    };
    json!({
        "id": c.id().to_string(),
        "directory": c.tree_id().to_string(),
        "parents": c.parent_ids().map(|p| json!({"id": p.to_string()})).collect::<Vec<_>>(),
        "author": person(c.author()),
        "committer": person(c.committer()),
        "date": rfc3339(c.author().when()),
        "committer_date": rfc3339(c.committer().when()),
        "message": c.message(),
        "extra_headers": [],
        "merge": c.parent_count() > 1,
        "synthetic": false,
        "type": "git",
    })
}

/// The snapshot id the fake gives `origin`'s visit.
fn snapshot_id(origin: &str) -> String {
    blob_id(origin.as_bytes())
}

/// The documented answers of the endpoints the archive is asked.
fn answer(h: &Holdings, path: &str) -> Response {
    let Some(rest) = path.strip_prefix("/api/1/") else {
        return not_found();
    };
    let rest = rest.split('?').next().unwrap_or_default();
    let Some(repo) = h.repo.as_ref().and_then(|p| git2::Repository::open(p).ok()) else {
        return not_found();
    };
    if let Some(origin) = rest
        .strip_prefix("origin/")
        .and_then(|r| r.strip_suffix("/visits/"))
    {
        return match h.origins.get(origin) {
            Some(_) => json_ok(json!([{
                "origin": origin, "visit": 1, "date": "2024-01-01T00:00:00+00:00",
                "status": "full", "type": "git", "snapshot": snapshot_id(origin),
            }])),
            None => not_found(),
        };
    }
    let parts: Vec<&str> = rest.trim_end_matches('/').split('/').collect();
    match parts.as_slice() {
        ["revision", c] if h.commits.contains(*c) => {
            let commit = repo
                .find_commit(Oid::from_str(c).expect("oid"))
                .expect("an archived commit is in the repository");
            json_ok(revision_json(&commit))
        }
        ["revision", c, "log"] => {
            let Ok(mut walk) = repo.revwalk() else {
                return not_found();
            };
            if Oid::from_str(c).and_then(|o| walk.push(o)).is_err() {
                return not_found();
            }
            let log: Vec<Value> = walk
                .flatten()
                .filter_map(|o| repo.find_commit(o).ok())
                .map(|c| revision_json(&c))
                .collect();
            json_ok(Value::Array(log))
        }
        ["revision", c, "directory", file @ ..] if h.commits.contains(*c) => {
            // The path's entry, as the API gives it (not asked by pinaudit,
            // which proves each listing on the way instead; served as the
            // real API does).
            let file = file.join("/");
            let commit = repo
                .find_commit(Oid::from_str(c).expect("oid"))
                .expect("commit");
            let Ok(entry) = commit.tree().expect("tree").get_path(Path::new(&file)) else {
                return not_found();
            };
            let name = entry.name().unwrap_or_default().to_string();
            let bytes = match &h.lie {
                Some((lie_name, bytes)) if *lie_name == name => bytes.clone(),
                _ => repo
                    .find_blob(entry.id())
                    .map(|b| b.content().to_vec())
                    .unwrap_or_default(),
            };
            json_ok(json!({
                "type": "file", "name": name, "perms": entry.filemode(),
                "target": blob_id(&bytes),
                "checksums": {"sha1_git": blob_id(&bytes), "sha256": sha256_hex(&bytes)},
            }))
        }
        ["directory", d] => {
            let Some(tree) = Oid::from_str(d).ok().and_then(|o| repo.find_tree(o).ok()) else {
                return not_found();
            };
            let entries: Vec<Value> = tree
                .iter()
                .map(|e| {
                    let name = e.name().unwrap_or_default().to_string();
                    let mut target = e.id().to_string();
                    if let Some((lie_name, bytes)) = &h.lie {
                        if *lie_name == name {
                            target = blob_id(bytes);
                        }
                    }
                    let kind = match e.kind() {
                        Some(git2::ObjectType::Tree) => "dir",
                        Some(git2::ObjectType::Commit) => "rev",
                        _ => "file",
                    };
                    json!({"dir_id": d, "name": name, "type": kind,
                           "perms": e.filemode(), "target": target})
                })
                .collect();
            json_ok(Value::Array(entries))
        }
        ["snapshot", id] => {
            let Some((origin, branches)) = h.origins.iter().find(|(o, _)| snapshot_id(o) == *id)
            else {
                return not_found();
            };
            let mut map = serde_json::Map::new();
            map.insert(
                "HEAD".into(),
                json!({"target": "refs/heads/main", "target_type": "alias"}),
            );
            for (name, commit) in branches {
                map.insert(
                    name.clone(),
                    json!({"target": commit, "target_type": "revision"}),
                );
            }
            json_ok(json!({"id": snapshot_id(origin), "branches": map, "next_branch": null}))
        }
        ["content", hash, "raw"] => {
            let blob = hash.trim_start_matches("sha1_git:");
            let lie = h
                .lie
                .as_ref()
                .filter(|(_, bytes)| blob_id(bytes) == blob)
                .map(|(_, bytes)| bytes.clone());
            let found = lie.or_else(|| {
                Oid::from_str(blob)
                    .ok()
                    .and_then(|o| repo.find_blob(o).ok())
                    .map(|b| b.content().to_vec())
            });
            match found {
                Some(mut bytes) if h.damaged => {
                    bytes.extend_from_slice(b"tampered\n");
                    Response::ok(bytes)
                }
                Some(bytes) => Response::ok(bytes),
                None => not_found(),
            }
        }
        _ => not_found(),
    }
}

/// The archive holds `commit` of the repository at `repo`, and visited
/// `https://github.com/ORIGIN` when its `main` was that commit.
fn holding(repo: &Path, commit: Oid, origin: &str) -> Holdings {
    Holdings {
        repo: Some(repo.to_path_buf()),
        commits: HashSet::from([commit.to_string()]),
        origins: HashMap::from([(
            format!("https://github.com/{origin}"),
            vec![("refs/heads/main".to_string(), commit.to_string())],
        )]),
        ..Holdings::default()
    }
}

/// The fixture repository `name` of `forge`.
fn repo_of(forge: &Forge, name: &str) -> PathBuf {
    forge.path().join(format!("{name}.git"))
}

/// `audit` with the forge behind `daemon` and the archive at `swh`.
fn audit(ws: &Scratch, daemon: &GitDaemon, swh: &FakeSwh, more: &[&str]) -> Run {
    let mut args = vec![
        "--rewrite".to_string(),
        to_daemon(daemon),
        "--allow-local".into(),
        "--archive".into(),
        "software-heritage".into(),
        "--swh-url".into(),
        swh.url(),
    ];
    args.extend(more.iter().map(|s| s.to_string()));
    ws.audit(args)
}

/// The SWHID the report must give, computed here from its parts.
fn expected_swhid(name: &str, commit: Oid) -> String {
    format!(
        "swh:1:cnt:{};origin=https://github.com/{name};anchor=swh:1:rev:{commit};path=/README.md",
        blob_id(README.as_bytes())
    )
}

/// A forge that never had `acme/gone` (deleted), and the commit it had.
fn deleted_repository() -> (Forge, Oid) {
    let (forge, _repo, c) = forge_with_readme();
    (forge, c)
}

#[test]
fn a_deleted_repository_is_verified_from_the_archive() {
    let (forge, c) = deleted_repository();
    let daemon = GitDaemon::start(forge.path(), Wants::Reachable);
    let swh = FakeSwh::start(holding(&repo_of(&forge, NAME), c, "acme/gone"));
    let ws = Scratch::new();
    let file = ws.write_pin(&readme_pin(
        "gone",
        "acme/gone",
        c,
        &sha256_hex(README),
        T0_RFC3339,
    ));

    let run = audit(&ws, &daemon, &swh, &[&file]);
    // A warning: the default --fail-on error passes.
    run.assert_code(0);
    run.assert_codes(&["source-vanished"]);
    let f = run.only("source-vanished");
    assert_eq!(f["severity"], "warning");
    let message = f["message"].as_str().unwrap_or_default();
    let short = &c.to_string()[..7];
    assert!(
        message.contains(&format!(
            "the forge no longer serves `{short}` of `https://github.com/acme/gone`"
        )) && message.contains("Software Heritage holds it"),
        "{message}"
    );
    assert_eq!(f["evidence"]["swhid"], expected_swhid("acme/gone", c));
    assert_eq!(f["evidence"]["service"], "software-heritage");
    let s = run.source("gone", "readme");
    assert_eq!(s["status"], "checked", "{s:#}");
    assert_eq!(
        s["archive"],
        json!({"service": "software-heritage", "swhid": expected_swhid("acme/gone", c)})
    );
    assert_eq!(s["sha256"]["actual"], sha256_hex(README));
    assert_eq!(s["git_blob"], blob_id(README.as_bytes()));
    assert_eq!(s["commit_time"], T0_RFC3339);
    assert_eq!(run.claim("gone", "decode")["status"], "verified");
    assert_eq!(run.summary()["complete"], true);
    // Five calls: the commit, the origin's visits, the visit's snapshot, the
    // root directory, the bytes.
    assert_eq!(swh.asked().len(), 5, "{:?}", swh.asked());

    // Only --fail-on warning fails on it.
    let strict = audit(&ws, &daemon, &swh, &["--fail-on", "warning", &file]);
    strict.assert_code(1);
    strict.assert_codes(&["source-vanished"]);
    // Everything came from the cache the second time.
    assert_eq!(swh.asked().len(), 5, "{:?}", swh.asked());

    // The text report says where the document was read from.
    let text = ws.run([
        "audit",
        "--cache",
        "cache",
        "--rewrite",
        &to_daemon(&daemon),
        "--allow-local",
        "--archive",
        "software-heritage",
        "--swh-url",
        &swh.url(),
        "--color",
        "never",
        &file,
    ]);
    assert!(text.stdout.contains("source-vanished"), "{}", text.stdout);
    assert!(
        text.stdout.contains("(read from the archive: swh:1:cnt:"),
        "{}",
        text.stdout
    );
}

#[test]
fn offline_the_cache_of_the_archive_is_still_read() {
    let (forge, c) = deleted_repository();
    let daemon = GitDaemon::start(forge.path(), Wants::Reachable);
    let swh = FakeSwh::start(holding(&repo_of(&forge, NAME), c, "acme/gone"));
    let ws = Scratch::new();
    let file = ws.write_pin(&readme_pin(
        "gone",
        "acme/gone",
        c,
        &sha256_hex(README),
        T0_RFC3339,
    ));
    audit(&ws, &daemon, &swh, &[&file]).assert_code(0);
    let asked = swh.asked().len();

    let run = audit(&ws, &daemon, &swh, &["--offline", &file]);
    // Offline, nothing says the forge lost it: the archive stands in for the
    // cache, silently.
    run.assert_code(0);
    run.assert_codes(&[]);
    assert_eq!(run.source("gone", "readme")["status"], "checked");
    assert_eq!(run.claim("gone", "decode")["status"], "verified");
    assert_eq!(swh.asked().len(), asked, "offline asked the archive");
}

/// A commit force-pushed away on the forge that the archive holds, and a
/// record citing it.
struct Erased {
    _forge: Forge,
    daemon: GitDaemon,
    swh: FakeSwh,
    ws: Scratch,
    file: String,
    erased: Oid,
}

fn erased_commit() -> Erased {
    let forge = Forge::new();
    let repo = forge.repo(NAME);
    let base = repo.commit(&[("README.md", README)], "add results", T0);
    let erased = repo.commit(&[("notes.md", "to be erased\n")], "notes", T0 + 60);
    repo.reset_branch("main", base);
    // A stock daemon gives no commit by id: the forge says it is gone.
    let daemon = GitDaemon::start(forge.path(), Wants::Default);
    let swh = FakeSwh::start(holding(&repo_of(&forge, NAME), erased, NAME));
    let ws = Scratch::new();
    let file = ws.write_pin(&readme_pin(
        "erased",
        NAME,
        erased,
        &sha256_hex(README),
        "2023-11-14T22:14:20Z",
    ));
    Erased {
        _forge: forge,
        daemon,
        swh,
        ws,
        file,
        erased,
    }
}

#[test]
fn a_force_pushed_commit_is_verified_from_the_archive() {
    // `_forge` is bound, not ignored: it holds the served repositories.
    let Erased {
        _forge,
        daemon,
        swh,
        ws,
        file,
        erased,
    } = erased_commit();

    let run = audit(&ws, &daemon, &swh, &[&file]);
    run.assert_code(0);
    run.assert_codes(&["source-vanished"]);
    let f = run.only("source-vanished");
    assert!(
        f["evidence"]["forge_said"]
            .as_str()
            .is_some_and(|s| s.contains("is not in the repository")),
        "{f:#}"
    );
    let s = run.source("erased", "readme");
    assert_eq!(s["status"], "checked", "{s:#}");
    assert_eq!(s["archive"]["swhid"], expected_swhid(NAME, erased));
    // No head to compare an archived copy with.
    assert_eq!(s["upstream"], Value::Null);
    assert_eq!(run.claim("erased", "decode")["status"], "verified");
    let strict = audit(&ws, &daemon, &swh, &["--fail-on", "warning", &file]);
    strict.assert_code(1);
}

/// What a run that asked no archive found of a lost commit (absent) is not
/// what a run that asks one is told: the archive is asked (the record memo's
/// key names the archives; a baseline makes the runs use that memo).
#[test]
fn a_commit_lost_with_no_archive_asked_is_asked_of_one_later() {
    // `_forge` is bound, not ignored: it holds the served repositories.
    let Erased {
        _forge,
        daemon,
        swh,
        ws,
        file,
        erased,
    } = erased_commit();
    let baseline = ws.empty_baseline();
    let rewrite = to_daemon(&daemon);
    let alone = ws.audit([
        "--rewrite",
        &rewrite,
        "--allow-local",
        "--archive",
        "none",
        "--baseline",
        &baseline,
        &file,
    ]);
    let s = alone.source("erased", "readme");
    assert_ne!(s["status"], "checked", "{s:#}");
    let asked = audit(&ws, &daemon, &swh, &["--baseline", &baseline, &file]);
    let s = asked.source("erased", "readme");
    assert_eq!(s["status"], "checked", "{s:#}");
    assert_eq!(s["archive"]["swhid"], expected_swhid(NAME, erased));
}

#[test]
fn damaged_archive_content_is_refused_never_judged() {
    let (forge, c) = deleted_repository();
    let daemon = GitDaemon::start(forge.path(), Wants::Reachable);
    let mut holdings = holding(&repo_of(&forge, NAME), c, "acme/gone");
    holdings.damaged = true;
    let swh = FakeSwh::start(holdings);
    let ws = Scratch::new();
    let file = ws.write_pin(&readme_pin(
        "gone",
        "acme/gone",
        c,
        &sha256_hex(README),
        T0_RFC3339,
    ));

    // The forge's "not found" stands; the damaged copy is named, never judged.
    let run = audit(&ws, &daemon, &swh, &[&file]);
    run.assert_code(1);
    run.assert_codes(&["repository-missing"]);
    let s = run.source("gone", "readme");
    assert_eq!(s["status"], "absent", "{s:#}");
    let f = run.only("repository-missing");
    assert_eq!(f["evidence"]["archive"], "unreachable", "{f:#}");
    let message = f["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("archive answered damaged content"),
        "{message}"
    );
    assert_ne!(run.claim("gone", "decode")["status"], "verified");
    assert_eq!(run.summary()["complete"], true);
    // The damaged bytes were not kept: the next run asks for them again.
    audit(&ws, &daemon, &swh, &[&file]).assert_code(1);
    let raw = swh.asked().iter().filter(|p| p.ends_with("/raw/")).count();
    assert_eq!(raw, 2, "{:?}", swh.asked());
}

#[test]
fn neither_forge_nor_archive_is_revision_missing_and_not_archived_is_kept_a_day() {
    let ghost = Oid::from_str("00000000deadbeef00000000deadbeef00000000").expect("oid");
    let (forge, _repo, _c) = forge_with_readme();
    let daemon = GitDaemon::start(forge.path(), Wants::Reachable);
    let swh = FakeSwh::start(Holdings::default());
    let ws = Scratch::new();
    let file = ws.write_pin(&readme_pin(
        "ghost",
        NAME,
        ghost,
        &sha256_hex(README),
        T0_RFC3339,
    ));

    let run = audit(&ws, &daemon, &swh, &[&file]);
    run.assert_code(1);
    run.assert_codes(&["revision-missing"]);
    let f = run.only("revision-missing");
    let said = f["evidence"]["archive"].as_str().unwrap_or_default();
    assert!(said.contains("not archived"), "{f:#}");
    assert_eq!(run.source("ghost", "readme")["status"], "absent");
    assert_eq!(
        swh.asked(),
        vec![format!("/api/1/revision/{ghost}/")],
        "one call for a commit the archive lacks"
    );

    // Within the day, the archive is asked nothing.
    let again = audit(&ws, &daemon, &swh, &[&file]);
    again.assert_code(1);
    again.assert_codes(&["revision-missing"]);
    assert_eq!(again.only("revision-missing")["evidence"]["archive"], said);
    assert_eq!(swh.asked().len(), 1, "{:?}", swh.asked());
    // The fingerprint does not depend on what the archive said.
    assert_eq!(
        again.only("revision-missing")["fingerprint"],
        f["fingerprint"]
    );
}

#[test]
fn a_missing_commit_with_the_archive_unreachable_is_revision_missing_and_complete() {
    let ghost = Oid::from_str("00000000deadbeef00000000deadbeef00000000").expect("oid");
    let (forge, _repo, _c) = forge_with_readme();
    let daemon = GitDaemon::start(forge.path(), Wants::Reachable);
    // An archive that answers every request with a server error.
    let swh = FakeSwh::with(Holdings::default(), |_, _| Some(Response::status(503)));
    let ws = Scratch::new();
    let file = ws.write_pin(&readme_pin(
        "ghost",
        NAME,
        ghost,
        &sha256_hex(README),
        T0_RFC3339,
    ));

    let run = audit(&ws, &daemon, &swh, &["--deadline", "20", &file]);
    run.assert_code(1);
    run.assert_codes(&["revision-missing"]);
    let f = run.only("revision-missing");
    assert_eq!(f["evidence"]["archive"], "unreachable", "{f:#}");
    let message = f["message"].as_str().unwrap_or_default();
    assert!(message.contains("archive could not be asked"), "{message}");
    assert_eq!(run.source("ghost", "readme")["status"], "absent");
    assert_eq!(run.summary()["complete"], true);
    assert!(!swh.asked().is_empty(), "the archive was asked");
}

fn epoch_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock")
        .as_secs()
}

/// A 429 for the first request of the revision, saying the limit resets in
/// `secs` seconds.
fn rate_limited(repo: &Path, c: Oid, secs: u64) -> FakeSwh {
    let revision = format!("/api/1/revision/{c}/");
    FakeSwh::with(holding(repo, c, "acme/gone"), move |req, nth| {
        (req.path == revision && nth == 0).then(|| {
            Response::status(429)
                .header("X-RateLimit-Limit", "120")
                .header("X-RateLimit-Remaining", "0")
                .header("X-RateLimit-Reset", &(epoch_now() + secs).to_string())
        })
    })
}

#[test]
fn a_rate_limit_is_waited_for_within_the_deadline() {
    let (forge, c) = deleted_repository();
    let daemon = GitDaemon::start(forge.path(), Wants::Reachable);
    let swh = rate_limited(&repo_of(&forge, NAME), c, 1);
    let ws = Scratch::new();
    let file = ws.write_pin(&readme_pin(
        "gone",
        "acme/gone",
        c,
        &sha256_hex(README),
        T0_RFC3339,
    ));

    let run = audit(&ws, &daemon, &swh, &[&file]);
    run.assert_code(0);
    run.assert_codes(&["source-vanished"]);
    assert_eq!(run.claim("gone", "decode")["status"], "verified");
    let revision = format!("/api/1/revision/{c}/");
    let asked = swh.asked();
    assert_eq!(
        asked.iter().filter(|p| **p == revision).count(),
        2,
        "{asked:?}"
    );
}

#[test]
fn a_rate_limit_past_the_deadline_leaves_the_forges_verdict_standing() {
    let (forge, c) = deleted_repository();
    let daemon = GitDaemon::start(forge.path(), Wants::Reachable);
    let swh = rate_limited(&repo_of(&forge, NAME), c, 3600);
    let ws = Scratch::new();
    let file = ws.write_pin(&readme_pin(
        "gone",
        "acme/gone",
        c,
        &sha256_hex(README),
        T0_RFC3339,
    ));

    // The forge said the repository is gone: that stands, and the archive that
    // could not be asked in time is named.
    let run = audit(&ws, &daemon, &swh, &["--deadline", "30", &file]);
    run.assert_code(1);
    run.assert_codes(&["repository-missing"]);
    let s = run.source("gone", "readme");
    assert_eq!(s["status"], "absent", "{s:#}");
    let f = run.only("repository-missing");
    assert_eq!(f["evidence"]["archive"], "unreachable", "{f:#}");
    let message = f["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("429") && message.contains("deadline of 30 s"),
        "{message}"
    );
    assert_eq!(run.summary()["complete"], true);
    // It was not waited for: one request, then the reason.
    assert_eq!(swh.asked().len(), 1, "{:?}", swh.asked());
}

#[test]
fn the_token_reaches_only_the_archive() {
    let (forge, c) = deleted_repository();
    let daemon = GitDaemon::start(forge.path(), Wants::Reachable);
    // The archive sends the bytes from another host (port): the token must not follow.
    let elsewhere_seen: Arc<Mutex<Vec<Request>>> = Arc::default();
    let seen = elsewhere_seen.clone();
    let elsewhere = WebServer::start(move |req, _| {
        seen.lock().expect("seen").push(req.clone());
        Response::ok(README.as_bytes().to_vec())
    });
    let moved = elsewhere.url("blob");
    let swh = FakeSwh::with(
        holding(&repo_of(&forge, NAME), c, "acme/gone"),
        move |req, _| {
            req.path
                .ends_with("/raw/")
                .then(|| Response::status(302).header("Location", &moved))
        },
    );
    let ws = Scratch::new();
    let file = ws.write_pin(&readme_pin(
        "gone",
        "acme/gone",
        c,
        &sha256_hex(README),
        T0_RFC3339,
    ));

    let mut args = vec![
        "audit".to_string(),
        "--cache".into(),
        "cache".into(),
        "--format".into(),
        "json".into(),
        "--rewrite".into(),
        to_daemon(&daemon),
        "--allow-local".into(),
        "--archive".into(),
        "software-heritage".into(),
        "--swh-url".into(),
        swh.url(),
    ];
    args.push(file);
    let run = crate::common::run::run(ws.cmd().env("SWH_TOKEN", "s3cret-token").args(&args));
    run.assert_code(0);
    assert_eq!(run.claim("gone", "decode")["status"], "verified");
    let log = swh.server.log();
    assert_eq!(log.len(), 5, "{log:?}");
    for l in &log {
        assert_eq!(
            l.request.headers.get("authorization").map(String::as_str),
            Some("Bearer s3cret-token"),
            "{}",
            l.request.path
        );
    }
    let elsewhere_seen = elsewhere_seen.lock().expect("seen");
    assert_eq!(elsewhere_seen.len(), 1);
    assert!(
        !elsewhere_seen[0].headers.contains_key("authorization"),
        "{:?}",
        elsewhere_seen[0].headers
    );
    assert!(!run.stdout.contains("s3cret") && !run.stderr.contains("s3cret"));
}

#[test]
fn an_unreachable_forge_whose_pin_the_cache_lacks_is_read_from_the_archive() {
    let (forge, _repo, c) = forge_with_readme();
    // Nothing listens there.
    let port = crate::common::free_port();
    let swh = FakeSwh::start(holding(&repo_of(&forge, NAME), c, NAME));
    let ws = Scratch::new();
    let file = ws.write_pin(&readme_pin(
        "away",
        NAME,
        c,
        &sha256_hex(README),
        T0_RFC3339,
    ));
    let run = ws.audit([
        "--rewrite",
        &format!("https://github.com/=git://127.0.0.1:{port}/"),
        "--allow-local",
        "--archive",
        "software-heritage",
        "--swh-url",
        &swh.url(),
        &file,
    ]);
    // Nothing is lost, the forge just did not answer: no finding, and the
    // archive stood in for the cache.
    run.assert_code(0);
    run.assert_codes(&[]);
    let s = run.source("away", "readme");
    assert_eq!(s["status"], "checked", "{s:#}");
    assert_eq!(s["archive"]["service"], "software-heritage");
    assert_eq!(run.claim("away", "decode")["status"], "verified");
}

#[test]
fn archive_settings_come_from_flags_or_the_configuration() {
    let ws = Scratch::new();
    ws.write(
        "pinaudit.toml",
        "archive = \"none\"\nswh-url = \"https://swh.example/api/1/\"\n",
    );
    let shown = crate::common::run::run(ws.cmd().env_remove("PINAUDIT_ARCHIVE").arg("config"));
    shown.assert_code(0);
    assert!(
        shown.stdout.contains("archive = \"none\"  # pinaudit.toml"),
        "{}",
        shown.stdout
    );
    assert!(
        shown
            .stdout
            .contains("swh-url = \"https://swh.example/api/1/\"  # pinaudit.toml"),
        "{}",
        shown.stdout
    );
    std::fs::remove_file(ws.path().join("pinaudit.toml")).expect("remove");
    let shown = crate::common::run::run(ws.cmd().env_remove("PINAUDIT_ARCHIVE").arg("config"));
    assert!(
        shown
            .stdout
            .contains("archive = \"software-heritage,wayback\"  # default"),
        "{}",
        shown.stdout
    );
    let bad = ws.run(["audit", "--archive", "wayback,ftp", "--offline"]);
    bad.assert_code(3);
    let bad = ws.run(["audit", "--swh-url", "ftp://x/", "--offline"]);
    bad.assert_code(3);
    assert!(bad.stderr.contains("--swh-url"), "{}", bad.stderr);
}

// --- the Wayback Machine, for web documents -----------------------------------------

const PAGE: &str = "<h1>Decode</h1>\n<p>One node.</p>\n<p>decode: 2.9 tokens/s</p>\n";

fn page_pin(url: &str, time: &str) -> Value {
    json!({
        "schema": "pinaudit/pins/v1",
        "id": "paper",
        "title": "a paper",
        "sources": [{"id": "page", "url": url, "repository": null, "revision": null,
                     "path": null, "sha256": sha256_hex(PAGE), "commit_time": time}],
        "claims": [{"label": "decode", "source": "page", "lines": [3, 3], "value": 2.9,
                    "unit": "tokens/s", "metric": null, "url": null, "correct": null, "total": null}],
        "artifacts": [],
    })
}

/// A fake Wayback Machine listing `captures` (timestamp, bytes) of every URL.
fn fake_wayback(captures: Vec<(&'static str, Vec<u8>)>) -> WebServer {
    WebServer::start(move |req, _| {
        if req.path.starts_with("/cdx/search/cdx?") {
            let original = req
                .path
                .split("url=")
                .nth(1)
                .and_then(|q| q.split('&').next())
                .map(percent_decode)
                .unwrap_or_default();
            let mut rows = vec![json!(["timestamp", "original", "statuscode"])];
            for (ts, _) in &captures {
                rows.push(json!([ts, original, "200"]));
            }
            return Response::ok(Value::Array(rows).to_string());
        }
        for (ts, bytes) in &captures {
            if req.path.starts_with(&format!("/web/{ts}id_/")) {
                return Response::ok(bytes.clone());
            }
        }
        Response::status(404)
    })
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            let hex = std::str::from_utf8(&b[i + 1..i + 3]).unwrap_or("00");
            out.push(u8::from_str_radix(hex, 16).unwrap_or(b'?'));
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn audit_page(ws: &Scratch, wayback: &WebServer, url: &str) -> Run {
    let file = ws.write_pin(&page_pin(url, "2024-03-01T00:00:00Z"));
    ws.audit([
        "--allow-local",
        "--archive",
        "wayback",
        "--wayback-url",
        &wayback.url(""),
        &file,
    ])
}

#[test]
fn a_page_gone_from_its_host_is_verified_from_the_capture_with_its_bytes() {
    let host = WebServer::start(|_, _| Response::status(404));
    let url = host.url("paper.html");
    // The capture nearest the record's date has other bytes: it is not used.
    let other = PAGE.replace("2.9", "3.4").into_bytes();
    let wayback = fake_wayback(vec![
        ("20240301000000", other),
        ("20230101000000", PAGE.as_bytes().to_vec()),
    ]);
    let ws = Scratch::new();
    let run = audit_page(&ws, &wayback, &url);
    run.assert_has("source-vanished");
    let f = run.only("source-vanished");
    let capture = wayback.url(&format!("web/20230101000000/{url}"));
    assert_eq!(f["evidence"]["capture"], capture, "{f:#}");
    assert!(
        f["hint"].as_str().is_some_and(|h| h.contains(&capture)),
        "{f:#}"
    );
    let s = run.source("paper", "page");
    assert_eq!(s["status"], "checked", "{s:#}");
    assert_eq!(
        s["archive"],
        json!({"service": "wayback", "url": capture, "time": "2023-01-01T00:00:00Z"})
    );
    assert_eq!(s["sha256"]["actual"], sha256_hex(PAGE));
    assert_eq!(run.claim("paper", "decode")["status"], "verified");
    let fetched: Vec<String> = wayback.log().into_iter().map(|l| l.request.path).collect();
    assert_eq!(fetched.len(), 3, "{fetched:?}");
    assert!(
        fetched[1].starts_with("/web/20240301000000id_/"),
        "{fetched:?}"
    );

    // The capture is kept: offline, it still stands in.
    let file = ws.write_pin(&page_pin(&url, "2024-03-01T00:00:00Z"));
    let offline = ws.audit(["--offline", "--archive", "wayback", &file]);
    assert_eq!(offline.source("paper", "page")["status"], "checked");
    assert_eq!(wayback.log().len(), 3);
}

#[test]
fn a_capture_with_other_bytes_is_not_used() {
    let host = WebServer::start(|_, _| Response::status(410));
    let url = host.url("paper.html");
    let wayback = fake_wayback(vec![("20240301000000", b"something else\n".to_vec())]);
    let ws = Scratch::new();
    let run = audit_page(&ws, &wayback, &url);
    run.assert_lacks("source-vanished");
    let s = run.source("paper", "page");
    assert_eq!(s["status"], "unchecked", "{s:#}");
    assert!(s.get("archive").is_none(), "{s:#}");
    assert_eq!(run.claim("paper", "decode")["status"], "unchecked");
}

// --- what the archive says is proven, not believed (issue "Trust nothing you
// did not recompute", attacks 1 and 2) -------------------------------------------

/// An honest archive holding the commit only under another origin vouches
/// for nothing: the record's repository never existed, and its
/// `repository-missing` stands, with what the archive did hold.
#[test]
fn an_archive_never_vouches_for_a_repository_that_did_not_hold_the_commit() {
    let (forge, c) = deleted_repository();
    let daemon = GitDaemon::start(forge.path(), Wants::Reachable);
    // Archived from the attacker's own repository, `acme/bench`.
    let swh = FakeSwh::start(holding(&repo_of(&forge, NAME), c, NAME));
    let ws = Scratch::new();
    let file = ws.write_pin(&readme_pin(
        "never",
        "acme/never-existed",
        c,
        &sha256_hex(README),
        T0_RFC3339,
    ));
    let run = audit(&ws, &daemon, &swh, &[&file]);
    run.assert_code(1);
    run.assert_codes(&["repository-missing"]);
    let s = run.source("never", "readme");
    assert_eq!(s["status"], "absent", "{s:#}");
    assert!(s.get("archive").is_none_or(Value::is_null), "{s:#}");
    let f = run.only("repository-missing");
    let said = f["evidence"]["archive"].as_str().unwrap_or_default();
    assert!(
        said.contains("no visit of `https://github.com/acme/never-existed`"),
        "{f:#}"
    );
    assert_ne!(run.claim("never", "decode")["status"], "verified");
    // Offline, nothing of it was kept as found.
    let offline = audit(&ws, &daemon, &swh, &["--offline", &file]);
    assert_ne!(offline.claim("never", "decode")["status"], "verified");
}

/// A lying archive lists another blob for the cited path (bytes that carry
/// the claimed figure, where the commit holds another): the listing does not
/// hash to the commit's tree, so nothing is judged from it, nothing is kept,
/// and offline after the archive is gone the figure is still not verified.
#[test]
fn a_listing_that_does_not_hash_to_the_commits_tree_is_never_believed() {
    const OTHER: &str =
        "# Decode benchmark\n\n| metric | value |\n|---|---|\n| decode | 9.9 tok/s |\n";
    let forge = Forge::new();
    let repo = forge.repo(NAME);
    let c = repo.commit(&[("README.md", OTHER)], "add results", T0);
    // The forge lost the repository the record cites.
    let daemon = GitDaemon::start(forge.path(), Wants::Reachable);
    let mut holdings = holding(&repo_of(&forge, NAME), c, "acme/gone");
    holdings.lie = Some(("README.md".into(), README.as_bytes().to_vec()));
    let mut swh = FakeSwh::start(holdings);
    let ws = Scratch::new();
    let file = ws.write_pin(&readme_pin(
        "lied",
        "acme/gone",
        c,
        &sha256_hex(README),
        T0_RFC3339,
    ));
    let run = audit(&ws, &daemon, &swh, &[&file]);
    run.assert_code(1);
    run.assert_codes(&["repository-missing"]);
    assert_eq!(run.source("lied", "readme")["status"], "absent");
    let message = run.only("repository-missing")["message"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(message.contains("not proven"), "{message}");
    assert_ne!(run.claim("lied", "decode")["status"], "verified");
    swh.server.stop();
    let offline = audit(&ws, &daemon, &swh, &["--offline", &file]);
    assert_ne!(offline.claim("lied", "decode")["status"], "verified");
    assert!(!offline.codes().contains(&"source-vanished".to_string()));
}
