//! Durable citations: every checked git source's SWHID in the reports, `pin`
//! writing it into pin files (which read it without trusting it), and
//! `pinaudit preserve` against a fake Software Heritage API on loopback.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use git2::Oid;
use serde_json::{json, Value};

use crate::common::forge::{
    claim, forge_with_readme, good_pin, pin, sha256_hex, source, to_daemon, NAME, README, T0,
    T0_RFC3339,
};
use crate::common::run::{run, Run};
use crate::common::scratch::Scratch;
use crate::common::{GitDaemon, Wants};

/// git's blob id of `bytes`, from `git hash-object` (not from pinaudit or git2).
fn git_hash_object(bytes: &[u8]) -> String {
    let mut child = std::process::Command::new("git")
        .args(["hash-object", "--stdin"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("git runs");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(bytes)
        .expect("written");
    let out = child.wait_with_output().expect("git hash-object");
    String::from_utf8(out.stdout)
        .expect("hex")
        .trim()
        .to_string()
}

/// The SWHID of `path` (whose bytes are `bytes`) at `commit` of
/// `https://github.com/NAME`, written out from the specification's grammar.
fn expected_swhid(bytes: &[u8], commit: Oid, path: &str, lines: Option<(u32, u32)>) -> String {
    let blob = git_hash_object(bytes);
    let mut s = format!(
        "swh:1:cnt:{blob};origin=https://github.com/{NAME};anchor=swh:1:rev:{commit};path=/{path}"
    );
    match lines {
        Some((a, b)) if a == b => s.push_str(&format!(";lines={a}")),
        Some((a, b)) => s.push_str(&format!(";lines={a}-{b}")),
        None => {}
    }
    s
}

const NOTES: &str = "# Notes\n\nprefill 41.3 tok/s\n\ndecode 2.9 tok/s\n";

#[test]
fn every_checked_git_source_carries_the_swhid_computed_independently() {
    let (forge, repo, _) = forge_with_readme();
    let c = repo.commit(
        &[("README.md", README), ("docs/notes;v2.md", NOTES)],
        "notes",
        T0 + 60,
    );
    let daemon = GitDaemon::start(forge.path(), Wants::Reachable);
    let ws = Scratch::new();
    // A wrong hash: a finding about the source, which SARIF links to its citation.
    let readme = source(
        "readme",
        NAME,
        c,
        "README.md",
        &sha256_hex("another document"),
        "2023-11-14T22:14:20Z",
    );
    let notes = source(
        "notes",
        NAME,
        c,
        "docs/notes;v2.md",
        &sha256_hex(NOTES),
        "2023-11-14T22:14:20Z",
    );
    let missing = source("gone", NAME, c, "nowhere.md", &sha256_hex(""), T0_RFC3339);
    let claims = [
        claim("decode", &readme, 5, 2.9),
        claim("prefill", &readme, 6, 41.3),
        claim("notes decode", &notes, 5, 2.9),
    ];
    let file = ws.write_pin(&pin("durable", &[readme, notes, missing], &claims));
    let rewrite = to_daemon(&daemon);
    let run = ws.audit(["--rewrite", &rewrite, &file]);

    let report = run.report();
    let mut checked = 0;
    for s in report["records"][0]["sources"].as_array().expect("sources") {
        if s["status"] != "checked" {
            assert!(s.get("swhid").is_none(), "{s:#}");
            continue;
        }
        checked += 1;
        let (bytes, lines) = match s["id"].as_str() {
            Some("readme") => (README, (5, 6)),
            Some("notes") => (NOTES, (5, 5)),
            other => panic!("unexpected checked source {other:?}"),
        };
        let path = s["path"].as_str().expect("path");
        let want = expected_swhid(bytes.as_bytes(), c, path, Some(lines))
            // The specification escapes `;` in a path.
            .replace("notes;v2", "notes%3Bv2");
        assert_eq!(s["swhid"], want, "{s:#}");
    }
    assert_eq!(checked, 2, "{}", run.stdout);
    assert_eq!(run.source("durable", "gone")["status"], "absent");

    // Text, Markdown and SARIF give the archive's link for it.
    let link = format!(
        "https://archive.softwareheritage.org/{}",
        run.source("durable", "readme")["swhid"]
            .as_str()
            .expect("swhid")
    );
    for format in ["text", "markdown", "sarif"] {
        let out = ws.run([
            "audit",
            "--cache",
            "cache",
            "--offline",
            "--verbose",
            "--format",
            format,
            &file,
        ]);
        assert!(
            out.stdout.contains(&link),
            "{format} lacks {link}:\n{}",
            out.stdout
        );
    }
}

#[test]
fn pin_writes_the_swhid_and_pin_files_read_with_or_without_it_trusting_none() {
    let (forge, _repo, c) = forge_with_readme();
    let daemon = GitDaemon::start(forge.path(), Wants::Default);
    let ws = Scratch::new();
    let rewrite = to_daemon(&daemon);
    let url = format!("https://github.com/{NAME}/blob/main/README.md#L5");
    let pinned = ws.run([
        "pin",
        "--cache",
        "cache",
        "--timeout",
        "10",
        "--rewrite",
        &rewrite,
        &url,
        "--value",
        "2.9",
        "--into",
        "pins/pinned.json",
    ]);
    pinned.assert_code(0);
    let file: Value = serde_json::from_str(
        &std::fs::read_to_string(ws.path().join("pins/pinned.json")).expect("pin file"),
    )
    .expect("JSON");
    // The source's SWHID names the document; the lines belong to the claims.
    let written = &file["sources"][0]["swhid"];
    assert_eq!(
        *written,
        expected_swhid(README.as_bytes(), c, "README.md", None)
    );

    // Read back with it: the audit computes its own, with the cited line.
    let audited = ws.audit_offline(["pins/pinned.json"]);
    audited.assert_code(0);
    let want = expected_swhid(README.as_bytes(), c, "README.md", Some((5, 5)));
    assert_eq!(audited.source("pinned", "README.md")["swhid"], want);

    // A wrong one is not trusted for anything: the same report.
    let mut wrong = file.clone();
    wrong["sources"][0]["swhid"] = json!(format!(
        "swh:1:cnt:{};origin=https://evil.example/x",
        "0".repeat(40)
    ));
    ws.write_json("pins/pinned.json", &wrong);
    let again = ws.audit_offline(["pins/pinned.json"]);
    again.assert_code(0);
    again.assert_codes(&[]);
    assert_eq!(again.source("pinned", "README.md")["swhid"], want);

    // Without it, as every pin file written before: the same.
    let plain = ws.write_pin(&good_pin("plain", c));
    let without = ws.audit_offline([&plain]);
    without.assert_code(0);
    assert_eq!(without.source("plain", "readme")["swhid"], want);

    // One that is not text is an `invalid-record`, the rest still read.
    wrong["sources"][0]["swhid"] = json!(42);
    ws.write_json("pins/pinned.json", &wrong);
    let bad = ws.audit_offline(["pins/pinned.json"]);
    bad.assert_has("invalid-record");
    assert_eq!(bad.source("pinned", "README.md")["swhid"], want);
}

// --- `pinaudit preserve` against a fake Software Heritage --------------------

/// A request the fake archive received.
#[derive(Debug, Clone)]
struct Req {
    method: String,
    path: String,
    /// Header names lowercase.
    headers: HashMap<String, String>,
    body: Vec<u8>,
}

type Answer = (u16, Vec<(String, String)>, Vec<u8>);
type Handler = dyn Fn(&Req, usize) -> Answer + Send + Sync;

/// A loopback HTTP server answering each request with `handler(request, n)`
/// (`n`: requests before it), logging every request with its body.
struct FakeArchive {
    port: u16,
    stop: Arc<AtomicBool>,
    log: Arc<Mutex<Vec<Req>>>,
    thread: Option<JoinHandle<()>>,
}

impl FakeArchive {
    fn start(handler: impl Fn(&Req, usize) -> Answer + Send + Sync + 'static) -> FakeArchive {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
        listener.set_nonblocking(true).expect("nonblocking");
        let port = listener.local_addr().expect("addr").port();
        let stop = Arc::new(AtomicBool::new(false));
        let log: Arc<Mutex<Vec<Req>>> = Arc::default();
        let handler: Arc<Handler> = Arc::new(handler);
        let thread = {
            let (stop, log) = (stop.clone(), log.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::SeqCst) {
                    match listener.accept() {
                        Ok((stream, _)) => serve(stream, &log, &*handler),
                        Err(_) => std::thread::sleep(Duration::from_millis(5)),
                    }
                }
            })
        };
        FakeArchive {
            port,
            stop,
            log,
            thread: Some(thread),
        }
    }

    fn api(&self) -> String {
        format!("http://127.0.0.1:{}/api/1/", self.port)
    }

    fn log(&self) -> Vec<Req> {
        self.log.lock().expect("log").clone()
    }
}

impl Drop for FakeArchive {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn serve(mut stream: TcpStream, log: &Mutex<Vec<Req>>, handler: &Handler) {
    let _ = stream.set_nonblocking(false);
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    let mut raw = Vec::new();
    let mut buf = [0u8; 4096];
    let end = loop {
        if let Some(i) = raw.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => raw.extend_from_slice(&buf[..n]),
        }
    };
    let head = String::from_utf8_lossy(&raw[..end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut first = lines.next().unwrap_or("").split(' ');
    let method = first.next().unwrap_or("").to_string();
    let path = first.next().unwrap_or("/").to_string();
    let headers: HashMap<String, String> = lines
        .take_while(|l| !l.is_empty())
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let length: usize = headers
        .get("content-length")
        .and_then(|l| l.parse().ok())
        .unwrap_or(0);
    let mut body = raw[end..].to_vec();
    while body.len() < length {
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => body.extend_from_slice(&buf[..n]),
        }
    }
    let req = Req {
        method,
        path,
        headers,
        body,
    };
    let (status, answer_headers, answer) = {
        let mut log = log.lock().expect("log");
        let n = log.len();
        log.push(req.clone());
        handler(&req, n)
    };
    let mut out = format!("HTTP/1.1 {status} X\r\n");
    for (k, v) in &answer_headers {
        out.push_str(&format!("{k}: {v}\r\n"));
    }
    out.push_str(&format!(
        "Content-Length: {}\r\nConnection: close\r\n\r\n",
        answer.len()
    ));
    let _ = stream.write_all(out.as_bytes());
    let _ = stream.write_all(&answer);
    let _ = stream.flush();
}

/// A save request as the archive answers it.
fn saved(id: u64, origin: &str) -> Answer {
    let body = json!({
        "id": id,
        "origin_url": origin,
        "visit_type": "git",
        "save_request_date": "2026-12-01T12:00:00+00:00",
        "save_request_status": "accepted",
        "save_task_status": "not yet scheduled",
        "visit_date": null,
        "visit_status": null,
        "request_url": format!("https://archive.softwareheritage.org/api/1/origin/save/{id}/"),
    });
    (200, vec![], body.to_string().into_bytes())
}

/// `known/`'s answer: each asked SWHID, known when it is in `archived`.
fn known(req: &Req, archived: &[String]) -> Answer {
    let asked: Vec<String> = serde_json::from_slice(&req.body).unwrap_or_default();
    let map: serde_json::Map<String, Value> = asked
        .into_iter()
        .map(|s| {
            let k = archived.contains(&s);
            (s, json!({ "known": k }))
        })
        .collect();
    (200, vec![], Value::Object(map).to_string().into_bytes())
}

const A: &str = "acme/bench";
const B: &str = "other/lab";

fn commit_of(n: u8) -> String {
    format!("{n:02x}").repeat(20)
}

fn pinned(id: &str, repo: &str, commit: &str) -> Value {
    json!({
        "id": id,
        "url": format!("https://github.com/{repo}/blob/{commit}/README.md"),
        "repository": format!("https://github.com/{repo}"),
        "revision": commit,
        "path": "README.md",
        "sha256": sha256_hex(README),
        "commit_time": T0_RFC3339,
    })
}

/// Two records citing three commits of two repositories (and a branch of one).
fn preserve_scratch() -> Scratch {
    let ws = Scratch::new();
    ws.write_pin(&pin(
        "first",
        &[
            pinned("a1", A, &commit_of(1)),
            pinned("b1", B, &commit_of(3)),
            json!({"id": "moving", "url": format!("https://github.com/{A}/blob/main/README.md")}),
        ],
        &[],
    ));
    ws.write_pin(&pin(
        "second",
        &[
            pinned("a2", A, &commit_of(2)),
            pinned("a1-again", A, &commit_of(1)),
        ],
        &[],
    ));
    ws
}

fn preserve(ws: &Scratch, archive: &FakeArchive, extra: &[&str], token: Option<&str>) -> Run {
    let api = archive.api();
    let mut cmd = ws.cmd();
    cmd.args([
        "preserve",
        "--swh-url",
        &api,
        "--allow-local",
        "--timeout",
        "10",
    ])
    .args(extra);
    match token {
        Some(t) => cmd.env("SWH_TOKEN", t),
        None => cmd.env_remove("SWH_TOKEN"),
    };
    run(&mut cmd)
}

fn rev(commit: &str) -> String {
    format!("swh:1:rev:{commit}")
}

#[test]
fn preserve_saves_each_repository_once_and_asks_known_once_for_every_commit() {
    let ws = preserve_scratch();
    let archived = vec![rev(&commit_of(1))];
    let archive = FakeArchive::start(move |req, _| {
        if req.path.ends_with("/known/") {
            return known(req, &archived);
        }
        let origin = req
            .path
            .strip_prefix("/api/1/origin/save/git/url/")
            .and_then(|o| o.strip_suffix('/'))
            .unwrap_or("")
            .to_string();
        let id = if origin.ends_with(A) { 7 } else { 8 };
        saved(id, &origin)
    });
    let out = preserve(&ws, &archive, &["--format", "json"], Some("tok-123"));

    let log = archive.log();
    let saves: Vec<&Req> = log
        .iter()
        .filter(|r| r.path.contains("/origin/save/"))
        .collect();
    assert_eq!(
        saves.iter().map(|r| r.path.as_str()).collect::<Vec<_>>(),
        [
            format!("/api/1/origin/save/git/url/https://github.com/{A}/"),
            format!("/api/1/origin/save/git/url/https://github.com/{B}/"),
        ],
        "one save request per repository"
    );
    let knowns: Vec<&Req> = log.iter().filter(|r| r.path == "/api/1/known/").collect();
    assert_eq!(knowns.len(), 1, "{log:#?}");
    let asked: Vec<String> = serde_json::from_slice(&knowns[0].body).expect("a JSON list");
    assert_eq!(
        asked,
        [rev(&commit_of(1)), rev(&commit_of(3)), rev(&commit_of(2))]
    );
    assert_eq!(log.len(), 3, "nothing else is asked: {log:#?}");
    for r in &log {
        assert_eq!(r.method, "POST");
        assert_eq!(
            r.headers.get("authorization").map(String::as_str),
            Some("Bearer tok-123")
        );
    }

    // One commit is archived already, two only requested: exit 1.
    out.assert_code(1);
    let report: Value = serde_json::from_str(&out.stdout).expect("JSON");
    assert_eq!(report["schema"], "pinaudit/preserve/v1");
    assert_eq!(
        report["repositories"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| (
                r["origin"].clone(),
                r["status"].clone(),
                r["request_id"].clone()
            ))
            .collect::<Vec<_>>(),
        [
            (
                json!(format!("https://github.com/{A}")),
                json!("requested"),
                json!(7)
            ),
            (
                json!(format!("https://github.com/{B}")),
                json!("requested"),
                json!(8)
            ),
        ]
    );
    let commits = report["commits"].as_array().unwrap();
    let status: Vec<(Value, Value, Value)> = commits
        .iter()
        .map(|c| {
            (
                c["revision"].clone(),
                c["status"].clone(),
                c["request_id"].clone(),
            )
        })
        .collect();
    assert_eq!(
        status,
        [
            (json!(commit_of(1)), json!("archived"), Value::Null),
            (json!(commit_of(3)), json!("requested"), json!(8)),
            (json!(commit_of(2)), json!("requested"), json!(7)),
        ]
    );
    // The commit two sources cite is one entry naming both.
    assert_eq!(commits[0]["cited_by"].as_array().unwrap().len(), 2);
    assert_eq!(report["skipped"][0]["source"], "moving");
    let s = &report["summary"];
    assert_eq!(
        (
            &s["save_requests"],
            &s["archived"],
            &s["requested"],
            &s["complete"]
        ),
        (&json!(2), &json!(1), &json!(2), &json!(true))
    );

    // The text says the same.
    let text = preserve(&ws, &archive, &[], None);
    text.assert_code(1);
    assert!(
        text.stdout.contains(&format!(
            "  archived   https://github.com/{A}@0101010  {}",
            rev(&commit_of(1))
        )),
        "{}",
        text.stdout
    );
    assert!(
        text.stdout.contains("(not archived yet: save request 8)"),
        "{}",
        text.stdout
    );
    assert!(
        text.stdout.contains(
            "2 repository(ies): 2 save request(s) (ids 7, 8); 3 pinned commit(s): 1 archived, 2 requested"
        ),
        "{}",
        text.stdout
    );
    // Without SWH_TOKEN, no Authorization at all.
    let later = &archive.log()[3..];
    assert!(later
        .iter()
        .all(|r| !r.headers.contains_key("authorization")));
}

#[test]
fn preserve_sends_the_token_to_the_archive_only_and_follows_no_redirect() {
    let ws = preserve_scratch();
    let elsewhere = FakeArchive::start(|req, _| saved(1, &req.path));
    let to = format!("http://127.0.0.1:{}/steal/", elsewhere.port);
    let archive = FakeArchive::start(move |req, _| {
        if req.path.ends_with("/known/") {
            return known(req, &[]);
        }
        (302, vec![("Location".into(), to.clone())], Vec::new())
    });
    let out = preserve(&ws, &archive, &["--format", "json"], Some("tok-123"));
    out.assert_code(2);
    assert!(elsewhere.log().is_empty(), "{:#?}", elsewhere.log());
    let report: Value = serde_json::from_str(&out.stdout).expect("JSON");
    let repo = &report["repositories"][0];
    assert_eq!(repo["status"], "failed");
    assert!(
        repo["reason"]
            .as_str()
            .unwrap()
            .contains("redirects are not followed"),
        "{repo:#}"
    );
    assert_eq!(report["summary"]["complete"], false);
    assert!(!out.stdout.contains("tok-123") && !out.stderr.contains("tok-123"));
}

#[test]
fn preserve_waits_out_a_rate_limit_within_the_deadline_and_says_why_past_it() {
    let ws = preserve_scratch();
    // The first call is told to wait a second (as the archive's reset header does).
    let archive = FakeArchive::start(|req, n| {
        if n == 0 {
            return (
                429,
                vec![("X-RateLimit-Reset".into(), "1".into())],
                Vec::new(),
            );
        }
        if req.path.ends_with("/known/") {
            return known(req, &[]);
        }
        saved(10 + n as u64, "o")
    });
    let out = preserve(&ws, &archive, &["--format", "json"], None);
    out.assert_code(1);
    let log = archive.log();
    assert_eq!(log.len(), 4, "the refused call is made again: {log:#?}");
    assert_eq!(log[0].path, log[1].path);

    // A wait past --deadline is not waited: the call fails with the reason.
    let slow = FakeArchive::start(|req, _| {
        if req.path.ends_with("/known/") {
            return known(req, &[]);
        }
        (429, vec![("Retry-After".into(), "3600".into())], Vec::new())
    });
    let out = preserve(&ws, &slow, &["--format", "json", "--deadline", "5"], None);
    out.assert_code(2);
    let report: Value = serde_json::from_str(&out.stdout).expect("JSON");
    let why = report["repositories"][0]["reason"].as_str().unwrap();
    assert!(
        why.contains("429") && why.contains("past the deadline of 5 s"),
        "{why}"
    );
    assert_eq!(report["commits"][0]["status"], "not-archived");

    // An answer saying no call is left makes the next wait for the reset: past
    // the deadline, it is not made.
    let spent = FakeArchive::start(|req, _| {
        let (status, _, body) = saved(1, &req.path);
        let reset = (std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs()
            + 3600)
            .to_string();
        (
            status,
            vec![
                ("X-RateLimit-Remaining".into(), "0".into()),
                ("X-RateLimit-Reset".into(), reset),
            ],
            body,
        )
    });
    let out = preserve(&ws, &spent, &["--format", "json", "--deadline", "5"], None);
    out.assert_code(2);
    assert_eq!(spent.log().len(), 1, "{:#?}", spent.log());
    let report: Value = serde_json::from_str(&out.stdout).expect("JSON");
    assert_eq!(report["repositories"][0]["status"], "requested");
    let why = report["repositories"][1]["reason"].as_str().unwrap();
    assert!(
        why.contains("rate limit is used up") && why.contains("past the deadline"),
        "{why}"
    );
}

#[test]
fn preserve_with_no_record_found_is_incomplete_and_asks_nothing() {
    let ws = Scratch::new();
    ws.write("pins/notes.md", "# no record here\n");
    let archive = FakeArchive::start(|req, _| known(req, &[]));
    let out = preserve(&ws, &archive, &[], None);
    out.assert_code(2);
    assert!(out.stderr.contains("no pin files"), "{}", out.stderr);
    assert!(archive.log().is_empty(), "{:#?}", archive.log());
}

#[test]
fn preserve_refuses_an_archive_on_a_loopback_address_without_allow_local() {
    let ws = preserve_scratch();
    let archive = FakeArchive::start(|req, _| known(req, &[]));
    let api = archive.api();
    let out = run(ws.cmd().args(["preserve", "--swh-url", &api]));
    out.assert_code(2);
    assert!(archive.log().is_empty(), "{:#?}", archive.log());
    assert!(out.stdout.contains("not a public host"), "{}", out.stdout);

    let bad = run(ws
        .cmd()
        .args(["preserve", "--swh-url", "ftp://archive.example/"]));
    bad.assert_code(3);
}

#[test]
fn the_swh_url_comes_from_pinaudit_toml_too() {
    let ws = preserve_scratch();
    let archive = FakeArchive::start(|req, _| {
        if req.path.ends_with("/known/") {
            return known(
                req,
                &[rev(&commit_of(1)), rev(&commit_of(2)), rev(&commit_of(3))],
            );
        }
        saved(1, "o")
    });
    ws.write(
        "pinaudit.toml",
        format!("swh-url = \"{}\"\n", archive.api()),
    );
    let out = run(ws.cmd().args(["preserve", "--allow-local"]));
    // Every pinned commit archived already: exit 0.
    out.assert_code(0);
    assert_eq!(archive.log().len(), 3);
}
