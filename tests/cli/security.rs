//! Reliability and security (issue "Reliability and security"): records are
//! written by strangers and servers are run by strangers, so no record may make
//! pinaudit connect to this machine or its network, no credential may leave for
//! another host, no record text may forge a report, `import` may not clobber, and
//! a damaged or foreign cache must never turn into a verdict against a record.
//!
//! Every server here listens on loopback and is stopped on drop; tests about
//! private and link-local hosts run with no network at all (`--offline`), so a
//! broken refusal could never aim a packet off this machine.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use git2::Oid;
use serde_json::{json, Value};

use crate::common::fake::FakeGitHttp;
use crate::common::forge::{forge_with_readme, good_pin, to_daemon, NAME};
use crate::common::scratch::Scratch;
use crate::common::{GitDaemon, Wants};

/// What a fake server does with each request.
type Answer = dyn Fn(&str) -> Vec<u8> + Send + Sync;

/// A tiny HTTP/1.1 server on a loopback address that records every connection
/// and every request head, and answers each with `answer(head)`.
struct FakeServer {
    port: u16,
    ip: &'static str,
    connections: Arc<AtomicUsize>,
    heads: Arc<Mutex<Vec<String>>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl FakeServer {
    fn start(ip: &'static str, answer: Box<Answer>) -> FakeServer {
        let listener = TcpListener::bind((ip, 0)).expect("bind a loopback address");
        let port = listener.local_addr().expect("addr").port();
        listener.set_nonblocking(true).expect("nonblocking");
        let connections = Arc::new(AtomicUsize::new(0));
        let heads = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (c, h, s) = (connections.clone(), heads.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            while !s.load(Ordering::SeqCst) {
                match listener.accept() {
                    Ok((stream, _)) => {
                        c.fetch_add(1, Ordering::SeqCst);
                        serve(stream, &h, answer.as_ref());
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(10)),
                }
            }
        });
        FakeServer {
            port,
            ip,
            connections,
            heads,
            stop,
            thread: Some(thread),
        }
    }

    fn base(&self) -> String {
        format!("http://{}:{}/", self.ip, self.port)
    }

    fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }

    fn heads(&self) -> Vec<String> {
        self.heads.lock().expect("heads").clone()
    }
}

impl Drop for FakeServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Reads request heads off one connection (keep-alive) and answers each.
fn serve(stream: TcpStream, heads: &Mutex<Vec<String>>, answer: &Answer) {
    let _ = stream.set_nonblocking(false);
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    let Ok(mut writer) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(stream);
    loop {
        let mut head = String::new();
        loop {
            let mut line = String::new();
            match reader.read_line(&mut line) {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
            let end = line == "\r\n" || line == "\n";
            head.push_str(&line);
            if end {
                break;
            }
        }
        let length = head
            .lines()
            .find_map(|l| {
                let (k, v) = l.split_once(':')?;
                k.eq_ignore_ascii_case("content-length")
                    .then(|| v.trim().parse::<usize>().ok())?
            })
            .unwrap_or(0);
        let mut body = vec![0; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        heads.lock().expect("heads").push(head.clone());
        if writer.write_all(&answer(&head)).is_err() {
            return;
        }
    }
}

const SHA: &str = "de1fa14ea798512f54dafc8b8795eb3ef1a6c367";

/// A pin whose one source cites `base` (`http://HOST:PORT/`) as its forge.
fn pin_at(id: &str, base: &str) -> Value {
    let url = format!("{base}acme/bench/blob/{SHA}/README.md");
    json!({
        "schema": "pinaudit/pins/v1",
        "id": id,
        "title": "a record naming a host",
        "sources": [{"id": "readme", "url": url, "revision": SHA, "path": "README.md"}],
        "claims": [],
        "artifacts": [],
    })
}

// --- No SSRF ------------------------------------------------------------------

#[test]
fn loopback_record_hosts_are_refused_before_any_connection() {
    let server = FakeServer::start(
        "127.0.0.1",
        Box::new(|_| b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n".to_vec()),
    );
    let port = server.port;
    let ws = Scratch::new();
    let spellings = [
        format!("http://127.0.0.1:{port}/"),
        format!("http://2130706433:{port}/"),
        format!("http://0x7f000001:{port}/"),
        format!("http://0177.0.0.1:{port}/"),
        format!("http://127.1:{port}/"),
        format!("http://localhost:{port}/"),
        format!("http://[::ffff:127.0.0.1]:{port}/"),
    ];
    let mut files = Vec::new();
    for (i, base) in spellings.iter().enumerate() {
        files.push(ws.write_pin(&pin_at(&format!("r{i}"), base)));
    }
    let run = ws.audit(&files);
    run.assert_code(2);
    for (i, base) in spellings.iter().enumerate() {
        let s = run.source(&format!("r{i}"), "readme");
        assert_eq!(s["status"], "unchecked", "{base}: {s:#}");
        let reason = s["reason"].as_str().unwrap_or_default();
        assert!(reason.contains("not a public host"), "{base}: {reason}");
        assert!(reason.contains("--allow-local"), "{base}: {reason}");
    }
    assert_eq!(server.connections(), 0, "a refused host was connected to");

    // The listener works: with --allow-local the same record does connect.
    let run = ws.audit(["--allow-local", &files[0]]);
    assert_ne!(run.source("r0", "readme")["status"], "checked");
    assert!(server.connections() > 0, "--allow-local did not connect");
}

#[test]
fn a_refusal_does_not_tell_an_open_port_from_a_closed_one() {
    let open = FakeServer::start(
        "127.0.0.1",
        Box::new(|_| b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n".to_vec()),
    );
    let closed = crate::common::free_port();
    let ws = Scratch::new();
    let a = ws.write_pin(&pin_at("open", &format!("http://127.0.0.1:{}/", open.port)));
    let b = ws.write_pin(&pin_at("closed", &format!("http://127.0.0.1:{closed}/")));
    let run = ws.audit([&a, &b]);
    let reason = |id: &str| run.source(id, "readme")["reason"].clone();
    assert_eq!(reason("open"), reason("closed"));
    assert_eq!(open.connections(), 0);
}

#[test]
fn private_and_link_local_record_hosts_are_refused_offline() {
    // No network at all: a broken refusal must not send a packet anywhere.
    let ws = Scratch::new();
    let hosts = [
        "http://169.254.169.254/",
        "http://10.0.0.1/",
        "http://172.16.0.1/",
        "http://192.168.0.1/",
        "http://[fe80::1]/",
        "http://[fd00::1]/",
        "http://0.0.0.0/",
    ];
    let mut files = Vec::new();
    for (i, base) in hosts.iter().enumerate() {
        files.push(ws.write_pin(&pin_at(&format!("p{i}"), base)));
    }
    let run = ws.audit_offline(&files);
    for (i, base) in hosts.iter().enumerate() {
        let reason = run.source(&format!("p{i}"), "readme")["reason"].clone();
        let reason = reason.as_str().unwrap_or_default();
        assert!(reason.contains("not a public host"), "{base}: {reason}");
    }
}

#[test]
fn rewrite_targets_on_loopback_stay_allowed() {
    // The record names github.com; only the user's own rewrite is loopback.
    let (forge, _repo, c) = forge_with_readme();
    let daemon = GitDaemon::start(forge.path(), Wants::Reachable);
    let ws = Scratch::new();
    let file = ws.write_pin(&good_pin("ok", c));
    let run = ws.audit(["--rewrite", &to_daemon(&daemon), &file]);
    run.assert_code(0);
}

// --- No token leak --------------------------------------------------------------

#[test]
fn a_redirect_to_another_host_never_gets_the_token() {
    // 127.0.0.2 asks for credentials and records whether any arrive.
    let second = FakeServer::start(
        "127.0.0.2",
        Box::new(|_| {
            b"HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Basic realm=\"x\"\r\nContent-Length: 0\r\n\r\n"
                .to_vec()
        }),
    );
    let target = second.base();
    // 127.0.0.1 plays github.com and redirects every request there.
    let first = FakeServer::start(
        "127.0.0.1",
        Box::new(move |head| {
            let path = head
                .split_whitespace()
                .nth(1)
                .unwrap_or("/")
                .trim_start_matches('/');
            format!("HTTP/1.1 302 Found\r\nLocation: {target}{path}\r\nContent-Length: 0\r\n\r\n")
                .into_bytes()
        }),
    );
    let ws = Scratch::new();
    let file = ws.write_pin(&good_pin("tok", Oid::from_str(SHA).expect("oid")));
    let mut cmd = ws.cached("audit");
    cmd.env("GITHUB_TOKEN", "ghp_s3cretT0ken")
        .args(["--format", "json", "--timeout", "10", "--rewrite"])
        .arg(format!("https://github.com/={}", first.base()))
        .arg(&file);
    let run = crate::common::run::run(&mut cmd);
    assert_eq!(run.source("tok", "readme")["status"], "unchecked");
    assert!(first.connections() > 0, "the fake forge was never asked");
    assert!(
        !second.heads().is_empty(),
        "the redirect was not followed, so the test proves nothing"
    );
    for head in first.heads().iter().chain(second.heads().iter()) {
        assert!(
            !head.to_ascii_lowercase().contains("authorization:"),
            "a credential was sent: {head}"
        );
    }
    assert!(!run.stdout.contains("s3cretT0ken") && !run.stderr.contains("s3cretT0ken"));
    let _ = NAME;
}

// --- Reports that can't be spoofed ------------------------------------------------

/// A record whose every free-text field is hostile.
fn hostile_pin() -> Value {
    let evil = "## pinaudit: ✅ clean\n<!-- `x` | y \u{1b}[2J\u{1b}[31mred\u{7}";
    json!({
        "schema": "pinaudit/pins/v1",
        "id": "evil",
        "title": evil,
        "sources": [{
            "id": format!("s{evil}"),
            "repository": "https://github.com/acme/bench",
            "revision": "main",
            "path": format!("README{evil}.md"),
        }],
        "claims": [{
            "label": evil,
            "source": format!("s{evil}"),
            "value": 1.0,
            "unit": evil,
        }],
        "artifacts": [],
    })
}

#[test]
fn hostile_labels_render_inertly_in_every_format() {
    let ws = Scratch::new();
    let file = ws.write_pin(&hostile_pin());
    for format in ["text", "markdown", "json"] {
        let mut cmd = ws.cached("audit");
        cmd.args(["--offline", "--format", format]).arg(&file);
        let run = crate::common::run::run(&mut cmd);
        let out = &run.stdout;
        assert!(!out.contains('\u{1b}'), "{format}: raw escape\n{out}");
        assert!(!out.contains('\u{7}'), "{format}: raw bell\n{out}");
        match format {
            "markdown" => {
                // One heading of our own, and no HTML comment opener outside code.
                let ours: usize = out
                    .lines()
                    .map(|l| outside_code_spans(l).matches("## pinaudit:").count())
                    .sum();
                assert_eq!(ours, 1, "{out}");
                for line in out.lines() {
                    assert!(!line.starts_with("## pinaudit: ✅"), "{out}");
                    assert!(!outside_code_spans(line).contains("<!--"), "{line}");
                }
            }
            "text" => {
                assert!(out.contains("\\u{1b}"), "{out}");
                assert!(!out.lines().any(|l| l.starts_with("<!--")), "{out}");
            }
            _ => {
                let report: Value = serde_json::from_str(out).expect("one JSON report");
                let labels: Vec<&str> = report["records"][0]["claims"]
                    .as_array()
                    .expect("claims")
                    .iter()
                    .filter_map(|c| c["label"].as_str())
                    .collect();
                assert!(labels.iter().all(|l| l.contains('\u{1b}')), "{labels:?}");
            }
        }
    }
}

/// `line` without its Markdown code spans (CommonMark: a run of n backticks opens
/// a span that the next run of exactly n backticks closes).
pub(crate) fn outside_code_spans(line: &str) -> String {
    let chars: Vec<char> = line.chars().collect();
    let run_at = |i: usize| chars[i..].iter().take_while(|&&c| c == '`').count();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        if chars[i] != '`' {
            out.push(chars[i]);
            i += 1;
            continue;
        }
        let n = run_at(i);
        let mut j = i + n;
        let mut closed = None;
        while j < chars.len() {
            if chars[j] == '`' {
                let m = run_at(j);
                if m == n {
                    closed = Some(j + m);
                    break;
                }
                j += m;
            } else {
                j += 1;
            }
        }
        match closed {
            Some(end) => i = end,
            None => {
                out.extend(&chars[i..i + n]);
                i += n;
            }
        }
    }
    out
}

// --- Import can't clobber -------------------------------------------------------

#[test]
fn import_never_writes_over_the_schema_and_audit_skips_only_the_schema() {
    let ws = Scratch::new();
    let schema = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("pins/schema.json"),
    )
    .expect("pins/schema.json");
    ws.write("out/schema.json", &schema);
    let mut files = Vec::new();
    for id in ["schema", "x.schema", "SCHEMA"] {
        let mut pin = crate::common::inputs::pin_file(id);
        pin["id"] = json!(id);
        files.push(ws.write_json(&format!("in/{}.json", id.replace('.', "_")), &pin));
    }
    let mut cmd = ws.cmd();
    cmd.arg("import").args(&files).args(["--out", "out"]);
    let run = crate::common::run::run(&mut cmd);
    assert_eq!(
        std::fs::read_to_string(ws.path().join("out/schema.json")).expect("schema kept"),
        schema,
        "import wrote over the schema"
    );
    assert!(
        run.stderr.contains("kept for the pin-file schema"),
        "{}",
        run.stderr
    );
    for name in ["schema-record", "x.schema-record", "SCHEMA-record"] {
        assert!(
            ws.path().join(format!("out/{name}.json")).is_file(),
            "{name}: {}",
            run.stderr
        );
    }

    // A record file is audited whatever its name; only the schema is skipped.
    ws.write_json(
        "out/y.schema.json",
        &crate::common::inputs::pin_file("named-like-a-schema"),
    );
    let run = ws.audit_offline(["out"]);
    let report = run.report();
    let mut ids: Vec<&str> = report["records"]
        .as_array()
        .expect("records")
        .iter()
        .filter_map(|r| r["id"].as_str())
        .collect();
    ids.sort_unstable();
    assert_eq!(ids, ["SCHEMA", "named-like-a-schema", "schema", "x.schema"]);
    assert!(!run.stdout.contains("out/schema.json"), "{}", run.stdout);
}

#[test]
fn output_is_replaced_whole_or_not_at_all() {
    let ws = Scratch::new();
    let file = ws.write_pin(&crate::common::inputs::pin_file("r"));
    ws.write("reports/old.json", "the previous report\n");
    let mut cmd = ws.cached("audit");
    cmd.args([
        "--offline",
        "--format",
        "json",
        "--output",
        "reports/old.json",
    ])
    .arg(&file);
    crate::common::run::run(&mut cmd);
    let text = std::fs::read_to_string(ws.path().join("reports/old.json")).expect("report");
    serde_json::from_str::<Value>(&text).expect("a whole JSON report");
    // A target that can't be replaced (a directory) fails cleanly and leaves
    // no temporary file behind.
    std::fs::create_dir_all(ws.path().join("reports/dir.json")).expect("dir");
    let mut cmd = ws.cached("audit");
    cmd.args([
        "--offline",
        "--format",
        "json",
        "--output",
        "reports/dir.json",
    ])
    .arg(&file);
    let run = crate::common::run::run(&mut cmd);
    run.assert_code(2);
    assert!(
        run.stderr.contains("cannot write the report"),
        "{}",
        run.stderr
    );
    let left: Vec<_> = std::fs::read_dir(ws.path().join("reports"))
        .expect("reports")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(ws.path().join("reports/old.json"))
            .expect("report")
            .permissions()
            .mode();
        assert_eq!(mode & 0o044, 0o044, "the report is not private: {mode:o}");
    }
}

// --- A cache that can't be poisoned or lose data ---------------------------------

/// A filled cache: `acme/bench` audited clean once over `git daemon`.
struct Filled {
    ws: Scratch,
    file: String,
    rewrite: String,
    commit: Oid,
    _daemon: GitDaemon,
    _forge: crate::common::forge::Forge,
}

fn filled() -> Filled {
    let (forge, _repo, commit) = forge_with_readme();
    let daemon = GitDaemon::start(forge.path(), Wants::Reachable);
    let ws = Scratch::new();
    let file = ws.write_pin(&good_pin("rec", commit));
    let rewrite = to_daemon(&daemon);
    ws.audit(["--rewrite", &rewrite, &file]).assert_code(0);
    Filled {
        ws,
        file,
        rewrite,
        commit,
        _daemon: daemon,
        _forge: forge,
    }
}

impl Filled {
    fn mirror(&self) -> std::path::PathBuf {
        self.ws.mirror(NAME)
    }

    fn packs(&self, ext: &str) -> Vec<std::path::PathBuf> {
        std::fs::read_dir(self.mirror().join("objects/pack"))
            .expect("objects/pack")
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == ext))
            .collect()
    }

    /// Offline the damage is a cache problem: `unchecked`, "cache damaged",
    /// no finding against the record. Online it is repaired: clean again.
    fn assert_detected_and_repaired(&self) {
        let run = self.ws.audit_offline([&self.file]);
        run.assert_code(2);
        let s = run.source("rec", "readme");
        assert_eq!(s["status"], "unchecked", "{s:#}");
        let reason = s["reason"].as_str().unwrap_or_default();
        assert!(reason.contains("cache damaged"), "{reason}");
        assert!(
            run.findings().iter().all(|f| f["severity"] != "error"),
            "a finding against the record: {:#?}",
            run.findings()
        );

        let run = self.ws.audit(["--rewrite", &self.rewrite, &self.file]);
        run.assert_code(0);
        crate::common::forge::assert_clean(&run, "rec", self.commit);
        assert!(run.stderr.contains("damaged"), "{}", run.stderr);
        self.ws.audit_offline([&self.file]).assert_code(0);
    }
}

fn make_writable(path: &std::path::Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o644)).expect("chmod");
}

#[test]
fn a_flipped_blob_is_a_damaged_cache_and_is_refetched() {
    let f = filled();
    let idx = f.packs("idx").pop().expect("a pack index");
    let out = std::process::Command::new("git")
        .args(["verify-pack", "-v"])
        .arg(&idx)
        .output()
        .expect("git verify-pack");
    let listing = String::from_utf8_lossy(&out.stdout);
    let blob = Oid::hash_object(
        git2::ObjectType::Blob,
        crate::common::forge::README.as_bytes(),
    )
    .expect("blob id")
    .to_string();
    let line = listing
        .lines()
        .find(|l| l.starts_with(&blob))
        .unwrap_or_else(|| panic!("README blob not in the pack:\n{listing}"));
    let cols: Vec<u64> = line
        .split_whitespace()
        .skip(2)
        .take(3)
        .map(|c| c.parse().expect("a number"))
        .collect();
    let (in_pack, offset) = (cols[1], cols[2]);
    let pack = idx.with_extension("pack");
    make_writable(&pack);
    let mut bytes = std::fs::read(&pack).expect("pack");
    let at = usize::try_from(offset + in_pack / 2).expect("offset");
    bytes[at] ^= 0x55;
    std::fs::write(&pack, bytes).expect("write pack");
    f.assert_detected_and_repaired();
}

#[test]
fn a_deleted_pack_is_a_damaged_cache_and_is_refetched() {
    let f = filled();
    for ext in ["pack", "idx"] {
        for p in f.packs(ext) {
            std::fs::remove_file(p).expect("rm pack");
        }
    }
    f.assert_detected_and_repaired();
}

#[test]
fn a_garbage_ref_is_a_damaged_cache_and_is_refetched() {
    let f = filled();
    // The mirror keeps its refs packed; a loose file shadows the packed ref.
    let r = f.mirror().join("refs/heads/main");
    assert!(f.mirror().join("packed-refs").is_file(), "refs are packed");
    std::fs::write(&r, "garbage\n").expect("write ref");
    f.assert_detected_and_repaired();
}

#[test]
fn temporary_packs_of_an_interrupted_fetch_are_cleaned() {
    let f = filled();
    let junk = f.mirror().join("objects/pack/pack_git2_a1b2c3");
    std::fs::write(&junk, vec![0u8; 4096]).expect("write");
    let tmp = f.mirror().join("objects/pack/tmp_pack_XyZ");
    std::fs::write(&tmp, b"PACK").expect("write");
    f.ws.audit(["--rewrite", &f.rewrite, &f.file])
        .assert_code(0);
    assert!(!junk.exists() && !tmp.exists());
}

#[test]
fn a_symlinked_foreign_repository_is_refused_and_untouched() {
    let (forge, _repo, commit) = forge_with_readme();
    let daemon = GitDaemon::start(forge.path(), Wants::Reachable);
    // Someone else's repository, with branches a prune would delete.
    let other = crate::common::forge::Forge::new();
    let foreign = other.repo("their/own");
    let c = foreign.commit(&[("a.txt", "a")], "a", 1_700_000_000);
    for b in ["keep-1", "keep-2", "keep-3"] {
        foreign.branch(b, c);
    }
    let ws = Scratch::new();
    let entry = ws.mirror(NAME);
    std::fs::create_dir_all(entry.parent().expect("parent")).expect("mkdir");
    std::os::unix::fs::symlink(foreign.path(), &entry).expect("symlink");
    let before = crate::common::forge::snapshot(foreign.path());

    let file = ws.write_pin(&good_pin("rec", commit));
    let run = ws.audit(["--rewrite", &to_daemon(&daemon), &file]);
    run.assert_code(2);
    let s = run.source("rec", "readme");
    let reason = s["reason"].as_str().unwrap_or_default();
    assert!(reason.contains("symbolic link"), "{reason}");
    assert!(reason.contains("not a mirror pinaudit made"), "{reason}");
    assert_eq!(crate::common::forge::snapshot(foreign.path()), before);
    for b in ["keep-1", "keep-2", "keep-3"] {
        assert_eq!(foreign.tip(b), Some(c), "{b} lost");
    }
    // Offline too: its contents never stand in for the record's repository.
    let run = ws.audit_offline([&file]);
    let reason = run.source("rec", "readme")["reason"].clone();
    assert!(
        reason
            .as_str()
            .unwrap_or_default()
            .contains("symbolic link"),
        "{reason}"
    );
}

#[test]
fn a_foreign_repository_without_the_marker_is_refused() {
    let f = filled();
    std::fs::remove_file(f.mirror().join("pinaudit-mirror")).expect("rm marker");
    let mut config = git2::Repository::open_bare(f.mirror())
        .expect("open")
        .config()
        .expect("config");
    config.remove("pinaudit.remote").expect("unset");
    let run = f.ws.audit(["--rewrite", &f.rewrite, &f.file]);
    run.assert_code(2);
    let reason = run.source("rec", "readme")["reason"].clone();
    assert!(
        reason
            .as_str()
            .unwrap_or_default()
            .contains("no pinaudit ownership marker"),
        "{reason}"
    );
}

#[test]
fn a_mirror_made_before_the_marker_is_adopted() {
    let f = filled();
    let marker = f.mirror().join("pinaudit-mirror");
    std::fs::remove_file(&marker).expect("rm marker");
    f.ws.audit(["--rewrite", &f.rewrite, &f.file])
        .assert_code(0);
    assert!(marker.is_file());
}

#[test]
fn a_non_utf8_ref_name_is_skipped_with_a_warning() {
    use std::os::unix::ffi::OsStrExt;
    let (forge, repo, commit) = forge_with_readme();
    // git stores and advertises any bytes a file name can hold.
    let name = std::ffi::OsStr::from_bytes(b"bad-\xff-name");
    let dir = repo.path().join("refs/heads");
    std::fs::write(dir.join(name), format!("{commit}\n")).expect("write ref");
    let daemon = GitDaemon::start(forge.path(), Wants::Reachable);
    let ws = Scratch::new();
    let file = ws.write_pin(&good_pin("rec", commit));
    let run = ws.audit(["--rewrite", &to_daemon(&daemon), &file]);
    run.assert_code(0);
    assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
    assert!(run.stderr.contains("not UTF-8"), "{}", run.stderr);
}

// --- Bounded servers --------------------------------------------------------------

fn pkt(line: &str) -> Vec<u8> {
    format!("{:04x}{line}", line.len() + 4).into_bytes()
}

/// Reads one pkt-line; `None` at the end of the stream.
fn read_pkt(stream: &mut TcpStream) -> Option<Vec<u8>> {
    let mut len = [0u8; 4];
    stream.read_exact(&mut len).ok()?;
    let n = usize::from_str_radix(std::str::from_utf8(&len).ok()?, 16).ok()?;
    let mut body = vec![0u8; n.saturating_sub(4)];
    stream.read_exact(&mut body).ok()?;
    Some(body)
}

const TIP: &str = "1111111111111111111111111111111111111111";

fn advertise_head(stream: &mut TcpStream) -> std::io::Result<()> {
    let _ = read_pkt(stream); // git-upload-pack /path\0host=…\0
    stream.write_all(&pkt(&format!("{TIP} HEAD\0ofs-delta\n")))?;
    stream.write_all(&pkt(&format!("{TIP} refs/heads/main\n")))
}

/// A ref advertisement a byte every 500 ms: never idle for --timeout.
fn trickle(mut stream: TcpStream, stop: &AtomicBool) {
    let _ = read_pkt(&mut stream);
    let line = pkt(&format!("{TIP} HEAD\0ofs-delta\n"));
    for b in line.iter().cycle() {
        if stop.load(Ordering::SeqCst) || stream.write_all(&[*b]).is_err() {
            return;
        }
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// A ref advertisement that never ends.
fn endless_refs(mut stream: TcpStream, stop: &AtomicBool) {
    if advertise_head(&mut stream).is_err() {
        return;
    }
    let mut chunk = Vec::new();
    for i in 0..1000 {
        chunk.extend(pkt(&format!("{TIP} refs/heads/b{i:08}\n")));
    }
    while !stop.load(Ordering::SeqCst) {
        if stream.write_all(&chunk).is_err() {
            return;
        }
        // A fast server, not a flood that starves the test machine.
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// A valid pack that never ends: blob after blob.
fn endless_pack(mut stream: TcpStream, stop: &AtomicBool) {
    if advertise_head(&mut stream).is_err() || stream.write_all(b"0000").is_err() {
        return;
    }
    // Wants, then `done`.
    loop {
        match read_pkt(&mut stream) {
            None => return,
            Some(line) if line.starts_with(b"done") => break,
            Some(_) => {}
        }
    }
    let _ = stream.write_all(&pkt("NAK\n"));
    crate::common::pack::write_endless_pack(&mut stream, stop);
}

/// Audits a good record (over `git daemon`) beside a record of `owner/repo`,
/// served by `server`, with `extra` flags; returns the run and how long it took.
fn audit_beside(server: &FakeGitHttp, extra: &[&str]) -> (crate::common::run::Run, Duration) {
    let (forge, _repo, commit) = forge_with_readme();
    let daemon = GitDaemon::start(forge.path(), Wants::Reachable);
    let ws = Scratch::new();
    let good = ws.write_pin(&good_pin("good", commit));
    let bad = ws.write_pin(&crate::common::fake::evil_pin());
    let mut args: Vec<String> = vec![
        "--rewrite".into(),
        to_daemon(&daemon),
        "--rewrite".into(),
        server.git_rewrite("evil"),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    args.push(good);
    args.push(bad);
    let started = std::time::Instant::now();
    let run = ws.audit_with_timeout(3, &args);
    let took = started.elapsed();
    assert!(server.connections() > 0, "never asked");
    crate::common::forge::assert_clean(&run, "good", commit);
    (run, took)
}

#[test]
fn a_trickling_server_ends_at_the_deadline() {
    let server = FakeGitHttp::start_git(trickle);
    let (run, took) = audit_beside(&server, &["--deadline", "4"]);
    let reason = run.source("bad", "readme")["reason"].clone();
    assert_eq!(run.source("bad", "readme")["status"], "unchecked");
    assert!(
        reason.as_str().unwrap_or_default().contains("deadline"),
        "{reason}"
    );
    assert!(took < Duration::from_secs(20), "took {took:?}");
}

#[test]
fn an_endless_ref_advertisement_is_cut_off_by_the_ref_budget() {
    let server = FakeGitHttp::start_git(endless_refs);
    let (run, took) = audit_beside(&server, &["--max-refs-mib", "4"]);
    let s = run.source("bad", "readme");
    assert_eq!(s["status"], "unchecked", "{s:#}");
    let reason = s["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("refs than the byte budget of 4 MiB"),
        "{reason}"
    );
    assert!(took < Duration::from_secs(20), "took {took:?}");
}

#[test]
fn an_endless_ref_advertisement_also_ends_at_the_deadline() {
    let server = FakeGitHttp::start_git(endless_refs);
    let (run, took) = audit_beside(&server, &["--deadline", "2", "--max-refs-mib", "65536"]);
    let reason = run.source("bad", "readme")["reason"].clone();
    assert!(
        reason.as_str().unwrap_or_default().contains("deadline"),
        "{reason}"
    );
    assert!(took < Duration::from_secs(20), "took {took:?}");
}

#[test]
fn an_endless_pack_is_cut_off_by_the_byte_budget() {
    let server = FakeGitHttp::start_git(endless_pack);
    let (run, took) = audit_beside(&server, &["--max-fetch-mib", "8"]);
    let s = run.source("bad", "readme");
    assert_eq!(s["status"], "unchecked", "{s:#}");
    let reason = s["reason"].as_str().unwrap_or_default();
    assert!(reason.contains("byte budget"), "{reason}");
    assert!(took < Duration::from_secs(20), "took {took:?}");
}

// --- Fuzzing, stable fallback -------------------------------------------------------

/// The `cargo fuzz` entry points (`pinaudit::fuzz_entry`, nightly targets in
/// `fuzz/`) driven on stable: seeds from the test data, mutated by a small
/// deterministic generator, for `PINAUDIT_FUZZ_SECS` seconds per target
/// (default 1, so the suite stays fast; `fuzz/run.sh` says how to run long).
/// A panic fails the test and leaves the input in `target/fuzz-crash-TARGET`.
#[test]
fn long_run_fuzz() {
    let secs: u64 = std::env::var("PINAUDIT_FUZZ_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1);
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut seeds: Vec<Vec<u8>> = Vec::new();
    for dir in ["pins", "tests/data", "tests/data/matcher"] {
        for e in std::fs::read_dir(root.join(dir))
            .expect("seed dir")
            .flatten()
        {
            if e.path().is_file() {
                seeds.push(std::fs::read(e.path()).expect("seed"));
            }
        }
    }
    for u in [
        "https://github.com/o/r/blob/de1fa14ea798512f54dafc8b8795eb3ef1a6c367/README.md#L43-L45",
        "https://gitlab.com/g/s/p/-/blob/main/a%2Fb.md#L3",
        "https://huggingface.co/datasets/o/r/resolve/main/x.json",
        "http://[::ffff:127.0.0.1]:80/o/r",
        "file:///srv/m/../../etc\nFILE:///srv/m/",
        "git@host:o/r.git",
        "2.9 tok/s\n| decode | ~2.9 tok/s |\nGSM8K: 18/20 (90%)",
        "```json\n{\"figures\": [{\"label\": \"x\", \"value\": 1}]}\n```",
    ] {
        seeds.push(u.as_bytes().to_vec());
    }
    type Entry = fn(&[u8]);
    let targets: [(&str, Entry); 4] = [
        ("import", pinaudit::fuzz_entry::import),
        ("pin_file", pinaudit::fuzz_entry::pin_file),
        ("url", pinaudit::fuzz_entry::url),
        ("matcher", pinaudit::fuzz_entry::matcher),
    ];
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let tokens: [&[u8]; 12] = [
        b"```json\n",
        b"\n```\n",
        b"{",
        b"}",
        b"\"",
        b"%2e%2e/",
        b"#L",
        b"..",
        b"://",
        b"\xff",
        b"[",
        b"0x7f000001",
    ];
    for (name, entry) in targets {
        let until = std::time::Instant::now() + Duration::from_secs(secs);
        let mut runs = 0u64;
        while std::time::Instant::now() < until {
            let mut input = seeds[(next() as usize) % seeds.len()].clone();
            for _ in 0..(1 + next() % 8) {
                let at = if input.is_empty() {
                    0
                } else {
                    (next() as usize) % input.len()
                };
                match next() % 5 {
                    0 if !input.is_empty() => input[at] ^= 1 << (next() % 8),
                    1 => input
                        .splice(
                            at..at,
                            tokens[(next() as usize) % tokens.len()].iter().copied(),
                        )
                        .for_each(drop),
                    2 if !input.is_empty() => {
                        let end = (at + (next() as usize) % 64).min(input.len());
                        input.drain(at..end);
                    }
                    3 => {
                        let other = &seeds[(next() as usize) % seeds.len()];
                        let from = (next() as usize) % other.len().max(1);
                        let end = (from + (next() as usize) % 256).min(other.len());
                        input
                            .splice(at..at, other[from..end].iter().copied())
                            .for_each(drop);
                    }
                    _ => {
                        let n = (next() % 4096) as usize;
                        let b = input.get(at).copied().unwrap_or(b'9');
                        input
                            .splice(at..at, std::iter::repeat_n(b, n))
                            .for_each(drop);
                    }
                }
            }
            let outcome = std::panic::catch_unwind(|| entry(&input));
            if outcome.is_err() {
                let out = root.join(format!("target/fuzz-crash-{name}"));
                let _ = std::fs::write(&out, &input);
                panic!(
                    "fuzz target `{name}` panicked; input saved to {}",
                    out.display()
                );
            }
            runs += 1;
        }
        eprintln!("fuzz {name}: {runs} runs in {secs} s, no panic");
    }
}
