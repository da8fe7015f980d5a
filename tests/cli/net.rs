//! The network, bounded and checked (issue "Reliability and security"): git over
//! smart HTTP goes through pinaudit's own transport, so an endless ref
//! advertisement, an endless pack and a trickling server end within their
//! budgets with the other records reported and memory small; a record's host
//! that is a *name* resolving to this machine is refused on the address it
//! resolves to (`--resolve` pins names without DNS), before any connection.
//!
//! Every server listens on 127.0.0.1 and is stopped on drop.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::common::fake::FakeGitHttp;
use crate::common::forge::{assert_clean, forge_with_readme, good_pin, sha256_hex, to_daemon};
use crate::common::run::Run;
use crate::common::scratch::Scratch;
use crate::common::web::{Response, WebServer};
use crate::common::{GitDaemon, HttpGitServer, Wants};

const SHA: &str = "de1fa14ea798512f54dafc8b8795eb3ef1a6c367";
const TIP: &str = "1111111111111111111111111111111111111111";

fn pkt(line: &str) -> Vec<u8> {
    format!("{:04x}{line}", line.len() + 4).into_bytes()
}

/// The head of a `200` with `content_type` and a body that runs until close.
fn head(stream: &mut TcpStream, content_type: &str) -> std::io::Result<()> {
    stream.write_all(
        format!("HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\nConnection: close\r\nCache-Control: no-cache\r\n\r\n")
            .as_bytes(),
    )
}

const LS: &str = "application/x-git-upload-pack-advertisement";

/// The service line, HEAD and main, not yet flushed.
fn advertise(stream: &mut TcpStream) -> std::io::Result<()> {
    head(stream, LS)?;
    stream.write_all(&pkt("# service=git-upload-pack\n"))?;
    stream.write_all(b"0000")?;
    stream.write_all(&pkt(&format!("{TIP} HEAD\0ofs-delta\n")))?;
    stream.write_all(&pkt(&format!("{TIP} refs/heads/main\n")))
}

/// A ref advertisement over HTTP that never ends.
fn endless_refs(_: &str, _: &str, mut stream: TcpStream, stop: &AtomicBool) {
    if advertise(&mut stream).is_err() {
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
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// An advertisement a byte every `every`.
fn trickle_every(mut stream: TcpStream, stop: &AtomicBool, every: Duration) {
    if head(&mut stream, LS).is_err() {
        return;
    }
    let mut line = pkt("# service=git-upload-pack\n");
    line.extend(b"0000");
    line.extend(pkt(&format!("{TIP} HEAD\0ofs-delta\n")));
    for b in line.iter().cycle() {
        if stop.load(Ordering::SeqCst) || stream.write_all(&[*b]).is_err() {
            return;
        }
        let until = Instant::now() + every;
        while Instant::now() < until && !stop.load(Ordering::SeqCst) {
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// A byte every 2 s: never idle for `--timeout 3`, far below any real server.
fn trickle_slow(_: &str, _: &str, stream: TcpStream, stop: &AtomicBool) {
    trickle_every(stream, stop, Duration::from_secs(2));
}

/// Two bytes a second: above the minimum progress, so only the deadline ends it.
fn trickle_steady(_: &str, _: &str, stream: TcpStream, stop: &AtomicBool) {
    trickle_every(stream, stop, Duration::from_millis(500));
}

/// A short advertisement, then a valid pack that never ends for the fetch.
fn endless_pack(method: &str, _: &str, mut stream: TcpStream, stop: &AtomicBool) {
    if method == "GET" {
        let _ = advertise(&mut stream).and_then(|()| stream.write_all(b"0000"));
        return;
    }
    if head(&mut stream, "application/x-git-upload-pack-result").is_err()
        || stream.write_all(&pkt("NAK\n")).is_err()
    {
        return;
    }
    crate::common::pack::write_endless_pack(&mut stream, stop);
}

/// The answer to the fetch: a `NAK`, then `write` streams the pack.
fn serve_pack(
    method: &str,
    mut stream: TcpStream,
    stop: &AtomicBool,
    write: impl FnOnce(&mut TcpStream, &AtomicBool),
) {
    if method == "GET" {
        let _ = advertise(&mut stream).and_then(|()| stream.write_all(b"0000"));
        return;
    }
    if head(&mut stream, "application/x-git-upload-pack-result").is_err()
        || stream.write_all(&pkt("NAK\n")).is_err()
    {
        return;
    }
    write(&mut stream, stop);
}

/// A valid pack of 8-byte blobs that never ends, announcing 400k objects.
fn tiny_pack(method: &str, _: &str, stream: TcpStream, stop: &AtomicBool) {
    serve_pack(method, stream, stop, |s, stop| {
        crate::common::pack::write_pack_of(s, stop, 400_000, 8);
    });
}

/// A valid pack of 4000-byte blobs that never ends, announcing 1M objects
/// (4 GB: more than a test's deadline lets through).
fn endless_big_pack(method: &str, _: &str, stream: TcpStream, stop: &AtomicBool) {
    serve_pack(method, stream, stop, |s, stop| {
        crate::common::pack::write_pack_of(s, stop, 1_000_000, 4000);
    });
}

/// The same, announcing 200M objects (libgit2 takes that count as it stands).
fn tiny_pack_announcing_many(method: &str, _: &str, stream: TcpStream, stop: &AtomicBool) {
    serve_pack(method, stream, stop, |s, stop| {
        crate::common::pack::write_pack_of(s, stop, 200_000_000, 8);
    });
}

/// One run of the binary, measured: its report, how long it took, and the
/// peak resident set of that process alone (`wait4`'s `ru_maxrss`, KiB).
///
/// `ru_maxrss` survives `exec`: a child forked from this test process (hundreds
/// of MiB after the other tests) would report this process's peak. So `sh`
/// (small once it has exec'd) starts pinaudit in the background and exits;
/// pinaudit, forked from `sh`, is re-parented to this process (a subreaper),
/// which reaps it with `wait4` and reads its own peak.
pub(crate) fn run_measured(ws: &Scratch, args: &[String]) -> (Run, Duration, u64) {
    static SUBREAPER: std::sync::Once = std::sync::Once::new();
    SUBREAPER.call_once(|| {
        // SAFETY: a plain prctl on this process.
        let ok = unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) };
        assert_eq!(ok, 0, "prctl(PR_SET_CHILD_SUBREAPER)");
    });
    let started = Instant::now();
    let launched = std::process::Command::new("sh")
        .arg("-c")
        .arg(r#""$@" </dev/null >measured.out 2>measured.err & echo $!"#)
        .arg("sh")
        .arg(assert_cmd::cargo::cargo_bin("pinaudit"))
        .args(args)
        .current_dir(ws.path())
        .env("HOME", ws.path())
        .env_remove("PINAUDIT_CACHE")
        .env_remove("GITHUB_TOKEN")
        .env("SOURCE_DATE_EPOCH", "0")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .expect("sh starts pinaudit");
    let pid: libc::pid_t = String::from_utf8_lossy(&launched.stdout)
        .trim()
        .parse()
        .expect("the pid of pinaudit");
    let mut status: libc::c_int = 0;
    // SAFETY: a zeroed rusage is a valid value for wait4 to fill.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: `pid` is our (re-parented) child, not yet reaped; the
        // pointers are valid for the call.
        let got = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
        if got == pid {
            break;
        }
        assert_eq!(got, 0, "wait4 failed: {}", std::io::Error::last_os_error());
        if started.elapsed() > Duration::from_secs(90) {
            // SAFETY: signalling our own child.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            panic!("pinaudit did not end within 90 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let took = started.elapsed();
    let exited = libc::WIFEXITED(status);
    let read = |name: &str| std::fs::read_to_string(ws.path().join(name)).unwrap_or_default();
    let run = Run {
        status: exited.then(|| libc::WEXITSTATUS(status)),
        stdout: read("measured.out"),
        stderr: read("measured.err"),
        took,
    };
    assert!(exited, "pinaudit was killed; stderr:\n{}", run.stderr);
    assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
    (run, took, usage.ru_maxrss as u64)
}

/// Audits a good record (over `git daemon`) beside a record of `evil/repo`
/// served by `server` over smart HTTP, with `extra` flags and `--timeout 3`.
fn audit_beside(server: &FakeGitHttp, extra: &[&str]) -> (Run, Duration, u64) {
    audit_beside_via(server, &server.rewrite("evil"), extra)
}

/// [`audit_beside`] with the bad record sent to the server by `rewrite`.
fn audit_beside_via(server: &FakeGitHttp, rewrite: &str, extra: &[&str]) -> (Run, Duration, u64) {
    audit_beside_runs(server, rewrite, extra, 1)
        .pop()
        .expect("one run")
}

/// [`audit_beside_via`] run `runs` times over one cache: after each, the
/// good record is verified and no mirror was set aside as damaged.
fn audit_beside_runs(
    server: &FakeGitHttp,
    rewrite: &str,
    extra: &[&str],
    runs: usize,
) -> Vec<(Run, Duration, u64)> {
    let (forge, _repo, commit) = forge_with_readme();
    let daemon = GitDaemon::start(forge.path(), Wants::Reachable);
    let ws = Scratch::new();
    let good = ws.write_pin(&good_pin("good", commit));
    let bad = ws.write_pin(&crate::common::fake::evil_pin());
    let mut args: Vec<String> = ["audit", "--cache", "cache", "--format", "json"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    args.extend([
        "--timeout".into(),
        "3".into(),
        "--rewrite".into(),
        to_daemon(&daemon),
        "--rewrite".into(),
        rewrite.to_string(),
    ]);
    args.extend(extra.iter().map(|s| s.to_string()));
    args.push(good);
    args.push(bad);
    (0..runs)
        .map(|_| {
            let (run, took, rss) = run_measured(&ws, &args);
            assert!(server.connections() > 0, "the fake server was never asked");
            assert_clean(&run, "good", commit);
            assert!(
                !ws.path().join("cache").join("quarantine").exists(),
                "a mirror was set aside as damaged; stderr:\n{}",
                run.stderr
            );
            (run, took, rss)
        })
        .collect()
}

fn reason(run: &Run) -> String {
    let s = run.source("bad", "readme");
    assert_eq!(s["status"], "unchecked", "{s:#}");
    s["reason"].as_str().unwrap_or_default().to_string()
}

const MB: u64 = 1024; // ru_maxrss is in KiB

#[test]
fn an_endless_http_ref_advertisement_ends_at_the_ref_budget_in_little_memory() {
    let server = FakeGitHttp::start(endless_refs);
    let (run, took, rss) = audit_beside(&server, &["--max-refs-mib", "4"]);
    let why = reason(&run);
    assert!(why.contains("refs than the byte budget of 4 MiB"), "{why}");
    assert!(why.contains("--max-refs-mib"), "{why}");
    assert!(took < Duration::from_secs(20), "took {took:?}");
    assert!(rss < 200 * MB, "peak RSS {} MiB", rss / MB);
    run.assert_code(2);
}

#[test]
fn an_endless_http_ref_advertisement_also_ends_at_the_deadline() {
    let server = FakeGitHttp::start(endless_refs);
    let (run, took, rss) = audit_beside(&server, &["--deadline", "2", "--max-refs-mib", "65536"]);
    let why = reason(&run);
    assert!(why.contains("deadline"), "{why}");
    assert!(took < Duration::from_secs(20), "took {took:?}");
    assert!(rss < 200 * MB, "peak RSS {} MiB", rss / MB);
}

#[test]
fn an_endless_http_pack_is_cut_off_by_the_byte_budget() {
    let server = FakeGitHttp::start(endless_pack);
    let (run, took, rss) = audit_beside(&server, &["--max-fetch-mib", "8"]);
    let why = reason(&run);
    assert!(why.contains("byte budget"), "{why}");
    assert!(took < Duration::from_secs(20), "took {took:?}");
    assert!(rss < 200 * MB, "peak RSS {} MiB", rss / MB);
}

/// Two runs over one cache: each ends at the budget, the good record
/// verified both times, the aborted mirror never judged damaged.
fn budget_ends_it_twice(serve: crate::common::fake::Serve, extra: &[&str], says: &str) -> u64 {
    let server = FakeGitHttp::start(serve);
    let runs = audit_beside_runs(&server, &server.rewrite("evil"), extra, 2);
    let mut peak = 0;
    for (run, took, rss) in runs {
        let why = reason(&run);
        assert!(why.contains(says), "{why}");
        assert!(!why.contains("damaged"), "{why}");
        // A hang guard, not a timing claim: every case sets --deadline 20.
        assert!(took < Duration::from_secs(60), "took {took:?}");
        eprintln!("{why}: {took:?}, peak RSS {} MiB", rss / MB);
        peak = peak.max(rss);
    }
    peak
}

#[test]
fn an_endless_pack_of_tiny_objects_ends_at_the_fetch_budget_in_little_memory() {
    // 400k objects announced fit 64 MiB at the budget's 160 bytes an object;
    // the bytes received on top of them do not. Before objects counted, the
    // pack of 8-byte blobs ran to 64 MiB of bytes: 3.3M objects, 400+ MiB.
    let rss = budget_ends_it_twice(
        tiny_pack,
        &["--max-fetch-mib", "64", "--deadline", "20"],
        "objects in",
    );
    assert!(rss < 200 * MB, "peak RSS {} MiB", rss / MB);
}

#[test]
fn a_pack_announcing_more_objects_than_the_budget_holds_is_refused_at_its_header() {
    // 200M objects at the default 4 GiB budget: refused before the first.
    let rss = budget_ends_it_twice(
        tiny_pack_announcing_many,
        &["--deadline", "20", "--max-fetch-objects", "1000000000"],
        "announced a pack of 200000000 objects, more than the byte budget of 4096 MiB",
    );
    assert!(rss < 200 * MB, "peak RSS {} MiB", rss / MB);
}

#[test]
fn a_pack_of_tiny_objects_ends_at_the_default_object_budget_under_200_mb() {
    // With every budget at its default, the object budget (1M objects, some
    // 120 MiB of index memory) ends a pack of tiny objects whatever its bytes.
    let rss = budget_ends_it_twice(
        tiny_pack_announcing_many,
        &["--deadline", "20"],
        // The budget, or the table the pack's header asks libgit2 for (1.5
        // GiB for 200M objects) before the budget sees the header: either
        // way it names the flag, and nothing is allocated.
        "--max-fetch-objects",
    );
    assert!(rss < 200 * MB, "peak RSS {} MiB", rss / MB);
}

#[test]
fn an_endless_valid_pack_ends_at_the_deadline_in_little_memory() {
    // Budgets far beyond the test: the deadline ends it.
    let rss = budget_ends_it_twice(
        endless_big_pack,
        &["--max-fetch-mib", "65536", "--deadline", "3"],
        "deadline of 3 s",
    );
    assert!(rss < 200 * MB, "peak RSS {} MiB", rss / MB);
}

#[test]
fn a_trickling_http_server_is_cut_off_by_the_minimum_progress() {
    // A byte every 2 s never leaves the connection idle for --timeout 3; the
    // deadline (15 min by default) is not what ends it.
    let server = FakeGitHttp::start(trickle_slow);
    let (run, took, _) = audit_beside(&server, &[]);
    let why = reason(&run);
    assert!(
        why.contains("timed out") && why.contains("bytes in"),
        "{why}"
    );
    assert!(took < Duration::from_secs(20), "took {took:?}");
}

#[test]
fn a_steadily_trickling_http_server_ends_at_the_deadline() {
    let server = FakeGitHttp::start(trickle_steady);
    let (run, took, _) = audit_beside(&server, &["--deadline", "4"]);
    let why = reason(&run);
    assert!(why.contains("deadline"), "{why}");
    assert!(took < Duration::from_secs(20), "took {took:?}");
}

// --- The same over git://, measured --------------------------------------------------

/// A `git://` advertisement that never ends.
fn endless_git_refs(mut stream: TcpStream, stop: &AtomicBool) {
    let mut len = [0u8; 4];
    if stream.read_exact(&mut len).is_err() {
        return;
    }
    let n = usize::from_str_radix(std::str::from_utf8(&len).unwrap_or("0"), 16).unwrap_or(4);
    let mut request = vec![0u8; n.saturating_sub(4)];
    if stream.read_exact(&mut request).is_err()
        || stream
            .write_all(&pkt(&format!("{TIP} HEAD\0ofs-delta\n")))
            .is_err()
    {
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
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// A `git://` advertisement a byte every 2 s.
fn trickle_git(mut stream: TcpStream, stop: &AtomicBool) {
    let line = pkt(&format!("{TIP} HEAD\0ofs-delta\n"));
    for b in line.iter().cycle() {
        if stop.load(Ordering::SeqCst) || stream.write_all(&[*b]).is_err() {
            return;
        }
        let until = Instant::now() + Duration::from_secs(2);
        while Instant::now() < until && !stop.load(Ordering::SeqCst) {
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

#[test]
fn an_endless_git_ref_advertisement_ends_at_the_ref_budget_in_little_memory() {
    let server = FakeGitHttp::start_git(endless_git_refs);
    let (run, took, rss) = audit_beside_via(
        &server,
        &server.git_rewrite("evil"),
        &["--max-refs-mib", "4"],
    );
    let why = reason(&run);
    assert!(why.contains("refs than the byte budget of 4 MiB"), "{why}");
    assert!(took < Duration::from_secs(20), "took {took:?}");
    assert!(rss < 200 * MB, "peak RSS {} MiB", rss / MB);
}

#[test]
fn a_trickling_git_server_is_cut_off_by_the_minimum_progress() {
    let server = FakeGitHttp::start_git(trickle_git);
    let (run, took, rss) = audit_beside_via(&server, &server.git_rewrite("evil"), &[]);
    let why = reason(&run);
    assert!(
        why.contains("timed out") && why.contains("bytes in"),
        "{why}"
    );
    assert!(took < Duration::from_secs(20), "took {took:?}");
    assert!(rss < 200 * MB, "peak RSS {} MiB", rss / MB);
}

// --- Credentials only to their own host ------------------------------------------------

#[test]
fn url_credentials_go_to_their_own_host_and_never_across_a_redirect() {
    use std::sync::Mutex;
    let heads: Arc<Mutex<Vec<(u8, String)>>> = Arc::default();
    // 127.0.0.2 asks for credentials too, and records what arrives.
    let h2 = heads.clone();
    let second = FakeGitHttp::start_on(
        "127.0.0.2",
        Arc::new(move |head: &str, mut stream: TcpStream, _: &AtomicBool| {
            h2.lock().expect("heads").push((2, head.to_string()));
            let _ = stream.write_all(
                b"HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Basic realm=\"x\"\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            );
        }),
    );
    let target = format!("http://127.0.0.2:{}", second.port);
    // 127.0.0.1 wants the credentials of its URL, then redirects elsewhere.
    let h1 = heads.clone();
    let first = FakeGitHttp::start_on(
        "127.0.0.1",
        Arc::new(move |head: &str, mut stream: TcpStream, _: &AtomicBool| {
            h1.lock().expect("heads").push((1, head.to_string()));
            let path = head.split_whitespace().nth(1).unwrap_or("/").to_string();
            let answer = if head.to_ascii_lowercase().contains("authorization:") {
                format!("HTTP/1.1 302 Found\r\nLocation: {target}{path}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            } else {
                "HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Basic realm=\"x\"\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".to_string()
            };
            let _ = stream.write_all(answer.as_bytes());
        }),
    );
    let ws = Scratch::new();
    let file = ws.write_pin(&good_pin("cred", git2::Oid::from_str(SHA).expect("oid")));
    let rewrite = format!(
        "https://github.com/=http://pinaudit:s3cret@127.0.0.1:{}/",
        first.port
    );
    let run = ws.audit(["--rewrite", &rewrite, &file]);
    assert_eq!(run.source("cred", "readme")["status"], "unchecked");
    let heads = heads.lock().expect("heads").clone();
    let with_auth = |server: u8| {
        heads
            .iter()
            .filter(|(s, h)| *s == server && h.to_ascii_lowercase().contains("authorization:"))
            .count()
    };
    assert!(
        with_auth(1) > 0,
        "the URL's own host never got its credentials: {heads:#?}"
    );
    assert!(
        heads.iter().any(|(s, _)| *s == 2),
        "the redirect was not followed: {heads:#?}"
    );
    assert_eq!(
        with_auth(2),
        0,
        "credentials crossed the redirect: {heads:#?}"
    );
    assert!(!run.stdout.contains("s3cret") && !run.stderr.contains("s3cret"));
    let why = run.source("cred", "readme")["reason"].to_string();
    assert!(why.contains("credentials"), "{why}");
}

// --- Names that resolve to this machine ------------------------------------------

/// `good_pin` with its GitHub URLs moved to `base` (`http://forge.test:PORT/`).
fn pin_on(id: &str, commit: git2::Oid, base: &str) -> Value {
    let text = serde_json::to_string(&good_pin(id, commit))
        .expect("json")
        .replace("https://github.com/", base);
    serde_json::from_str(&text).expect("json")
}

#[test]
fn a_name_resolving_to_loopback_is_refused_before_any_connection() {
    let (forge, _repo, commit) = forge_with_readme();
    let server = HttpGitServer::start(forge.path(), Wants::Reachable);
    let port = server
        .url("")
        .rsplit(':')
        .next()
        .unwrap_or("")
        .trim_end_matches('/')
        .to_string();
    let ws = Scratch::new();
    let file = ws.write_pin(&pin_on(
        "named",
        commit,
        &format!("http://forge.test:{port}/"),
    ));
    let pin = format!("forge.test:{port}:127.0.0.1");

    let run = ws.audit(["--resolve", &pin, &file]);
    run.assert_code(2);
    let s = run.source("named", "readme");
    assert_eq!(s["status"], "unchecked", "{s:#}");
    let why = s["reason"].as_str().unwrap_or_default();
    assert!(why.contains("not a public host"), "{why}");
    assert!(why.contains("resolves to a loopback address"), "{why}");
    assert!(why.contains("--allow-local"), "{why}");
    assert_eq!(server.requests(), 0, "a refused name was connected to");

    // The same record with --allow-local: fetched from the pinned address.
    let run = ws.audit(["--resolve", &pin, "--allow-local", &file]);
    assert_eq!(
        run.source("named", "readme")["status"],
        "checked",
        "{}",
        run.stdout
    );
    run.assert_code(0);
    assert!(server.requests() > 0);
}

#[test]
fn a_refused_name_reads_the_same_whether_its_port_is_open_or_closed() {
    let (forge, _repo, commit) = forge_with_readme();
    let server = HttpGitServer::start(forge.path(), Wants::Reachable);
    let open = server
        .url("")
        .rsplit(':')
        .next()
        .unwrap_or("")
        .trim_end_matches('/')
        .to_string();
    let closed = crate::common::free_port().to_string();
    let ws = Scratch::new();
    let a = ws.write_pin(&pin_on(
        "open",
        commit,
        &format!("http://forge.test:{open}/"),
    ));
    let b = ws.write_pin(&pin_on(
        "closed",
        commit,
        &format!("http://forge.test:{closed}/"),
    ));
    let run = ws.audit([
        "--resolve",
        &format!("forge.test:{open}:127.0.0.1"),
        "--resolve",
        &format!("forge.test:{closed}:127.0.0.1"),
        &a,
        &b,
    ]);
    let reason = |id: &str, port: &str| {
        run.source(id, "readme")["reason"]
            .as_str()
            .unwrap_or_default()
            .replace(port, "PORT")
    };
    assert_eq!(reason("open", &open), reason("closed", &closed));
    assert_eq!(server.requests(), 0);
}

#[test]
fn a_git_protocol_name_resolving_to_loopback_is_refused() {
    // Records name no git:// URLs (only forge URLs), so through the library:
    // a public-only sync, as the audit runs for a record's own host.
    use pinaudit::fetch::{FetchError, GitCache, SyncOptions};
    let (forge, _repo, commit) = forge_with_readme();
    let daemon = GitDaemon::start(forge.path(), Wants::Reachable);
    let port: u16 = daemon
        .url("")
        .rsplit(':')
        .next()
        .and_then(|p| p.trim_end_matches('/').parse().ok())
        .expect("a port");
    let network = pinaudit::net::Network::new(vec![format!("gitforge.test:{port}:127.0.0.1")
        .parse()
        .expect("a pin")]);
    let url = format!("git://gitforge.test:{port}/acme/bench.git");
    let ws = Scratch::new();
    let key = pinaudit::cache_key::CacheKey::from_secret(b"tests");
    let cache = GitCache::with_key(ws.path(), key);
    let public_only = SyncOptions {
        public_only: true,
        network: network.clone(),
        ..SyncOptions::default()
    };
    let err = cache
        .sync(&url, &url, &[commit], &public_only)
        .expect_err("refused");
    assert!(matches!(err, FetchError::Network { .. }), "{err}");
    assert!(err.to_string().contains("not a public host"), "{err}");
    assert!(!cache.repo_path(&url).exists());
    let report = cache
        .sync(
            &url,
            &url,
            &[commit],
            &SyncOptions {
                network,
                ..SyncOptions::default()
            },
        )
        .expect("allowed");
    assert!(report.is_present(commit));
}

#[test]
fn a_web_document_on_a_name_resolving_to_loopback_is_refused() {
    const PAGE: &str = "<html><body>\n<h1>Results</h1>\n<p>decode: 2.9 tok/s</p>\n</body></html>\n";
    let server = WebServer::start(|_, _| Response::ok(PAGE));
    let port = server
        .url("")
        .rsplit(':')
        .next()
        .unwrap_or("")
        .trim_end_matches('/')
        .to_string();
    let url = format!("http://paper.test:{port}/paper.html");
    let ws = Scratch::new();
    let file = ws.write_pin(&json!({
        "schema": "pinaudit/pins/v1",
        "id": "paper",
        "title": "a paper",
        "sources": [{"id": "page", "url": url, "sha256": sha256_hex(PAGE)}],
        "claims": [{"label": "decode", "source": "page", "lines": [3, 3], "value": 2.9,
                    "unit": "tokens/s"}],
        "artifacts": [],
    }));
    let resolve = format!("paper.test:{port}:127.0.0.1");
    let run = ws.audit(["--resolve", &resolve, &file]);
    let s = run.source("paper", "page");
    assert_eq!(s["status"], "unchecked", "{s:#}");
    assert!(
        s["reason"]
            .as_str()
            .unwrap_or_default()
            .contains("not a public host"),
        "{s:#}"
    );
    assert!(server.log().is_empty(), "a refused name was connected to");
    let run = ws.audit(["--resolve", &resolve, "--allow-local", &file]);
    assert_eq!(
        run.source("paper", "page")["status"],
        "checked",
        "{}",
        run.stdout
    );
    assert!(!server.log().is_empty());
}

#[test]
fn a_malformed_resolve_rule_is_a_usage_error() {
    let ws = Scratch::new();
    let run = ws.audit(["--resolve", "forge.test:80", "pins"]);
    run.assert_code(3);
    assert!(run.stderr.contains("HOST:PORT:ADDR"), "{}", run.stderr);
}

// --- Redirects ------------------------------------------------------------------------

/// A front server that redirects every request to `to` + the same path.
fn redirecting_to(to: String) -> FakeGitHttp {
    FakeGitHttp::start_on(
        "127.0.0.1",
        Arc::new(move |head: &str, mut stream: TcpStream, _: &AtomicBool| {
            let path = head.split_whitespace().nth(1).unwrap_or("/").to_string();
            let _ = stream.write_all(
                format!("HTTP/1.1 301 Moved Permanently\r\nLocation: {to}{path}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                    .as_bytes(),
            );
        }),
    )
}

#[test]
fn a_redirected_git_remote_is_fetched_where_the_redirect_leads() {
    // The front answers only with redirects: the fetch's POST must go to the
    // server the advertisement was redirected to, or it fails.
    let (forge, _repo, commit) = forge_with_readme();
    let server = HttpGitServer::start(forge.path(), Wants::Reachable);
    let to = server.url("").trim_end_matches('/').to_string();
    let front = redirecting_to(to);
    let ws = Scratch::new();
    let file = ws.write_pin(&good_pin("moved", commit));
    let rewrite = format!("https://github.com/=http://127.0.0.1:{}/", front.port);
    let run = ws.audit(["--rewrite", &rewrite, &file]);
    assert_clean(&run, "moved", commit);
    run.assert_code(0);
    assert_eq!(
        front.connections(),
        1,
        "only the advertisement is redirected"
    );
}

#[test]
fn endless_redirects_stop_after_five() {
    let front = FakeGitHttp::start_on(
        "127.0.0.1",
        Arc::new(move |head: &str, mut stream: TcpStream, _: &AtomicBool| {
            // To a new path each time, so no loop detection could end it.
            let path = head.split_whitespace().nth(1).unwrap_or("/").to_string();
            let path = path.replacen("/info/refs", "/x/info/refs", 1);
            let _ = stream.write_all(
                format!("HTTP/1.1 302 Found\r\nLocation: {path}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                    .as_bytes(),
            );
        }),
    );
    let ws = Scratch::new();
    let file = ws.write_pin(&good_pin("loop", git2::Oid::from_str(SHA).expect("oid")));
    let rewrite = format!("https://github.com/=http://127.0.0.1:{}/", front.port);
    let run = ws.audit(["--rewrite", &rewrite, &file]);
    let s = run.source("loop", "readme");
    assert_eq!(s["status"], "unchecked", "{s:#}");
    let why = s["reason"].as_str().unwrap_or_default();
    assert!(why.contains("too many redirects: more than 5"), "{why}");
    // One request per try: the first and five redirects, tried at most 3 times.
    assert!(front.connections() <= 18, "{}", front.connections());
}

// --- Proxies ----------------------------------------------------------------------------

/// A forwarding HTTP proxy on 127.0.0.1: each request (absolute-form, as clients
/// send them to a proxy) goes to `backend` in origin form; the answer comes back
/// until the backend closes. Records the targets asked for.
fn forwarding_proxy(backend: u16, seen: Arc<std::sync::Mutex<Vec<String>>>) -> FakeGitHttp {
    FakeGitHttp::start_with(
        "127.0.0.1",
        false,
        Arc::new(move |_: &str, client: TcpStream, _: &AtomicBool| {
            let Ok(mut reader) = client.try_clone().map(BufReader::new) else {
                return;
            };
            let mut first = String::new();
            if reader.read_line(&mut first).is_err() {
                return;
            }
            let mut parts = first.split_whitespace();
            let (method, target) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
            seen.lock().expect("seen").push(target.to_string());
            let path = target
                .splitn(4, '/')
                .nth(3)
                .map_or("/".to_string(), |p| format!("/{p}"));
            let mut head = format!("{method} {path} HTTP/1.1\r\n");
            let mut length = 0;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 {
                    return;
                }
                if let Some((k, v)) = line.split_once(':') {
                    if k.eq_ignore_ascii_case("content-length") {
                        length = v.trim().parse().unwrap_or(0);
                    }
                    if k.eq_ignore_ascii_case("proxy-connection")
                        || k.eq_ignore_ascii_case("connection")
                    {
                        continue;
                    }
                }
                if line == "\r\n" {
                    head.push_str("Connection: close\r\n\r\n");
                    break;
                }
                head.push_str(&line);
            }
            let mut body = vec![0; length];
            if reader.read_exact(&mut body).is_err() {
                return;
            }
            let Ok(mut upstream) = TcpStream::connect(("127.0.0.1", backend)) else {
                return;
            };
            if upstream.write_all(head.as_bytes()).is_err() || upstream.write_all(&body).is_err() {
                return;
            }
            let mut client = client;
            let _ = std::io::copy(&mut upstream, &mut client);
        }),
    )
}

#[test]
fn git_over_http_goes_through_the_proxy_the_environment_names() {
    let (forge, _repo, commit) = forge_with_readme();
    let server = HttpGitServer::start(forge.path(), Wants::Reachable);
    let backend: u16 = server
        .url("")
        .rsplit(':')
        .next()
        .and_then(|p| p.trim_end_matches('/').parse().ok())
        .expect("a port");
    let seen: Arc<std::sync::Mutex<Vec<String>>> = Arc::default();
    let proxy = forwarding_proxy(backend, seen.clone());
    let ws = Scratch::new();
    let file = ws.write_pin(&good_pin("proxied", commit));
    // A name nothing here resolves: only the proxy could reach it.
    let mut cmd = ws.cached("audit");
    cmd.env("HTTP_PROXY", format!("http://127.0.0.1:{}", proxy.port))
        .env_remove("NO_PROXY")
        .env_remove("no_proxy")
        .args(["--format", "json", "--timeout", "10", "--rewrite"])
        .arg("https://github.com/=http://forge.invalid/")
        .arg(&file);
    let run = crate::common::run::run(&mut cmd);
    assert_clean(&run, "proxied", commit);
    let seen = seen.lock().expect("seen").clone();
    assert!(
        seen.iter()
            .any(|t| t == "http://forge.invalid/acme/bench.git/info/refs?service=git-upload-pack"),
        "{seen:#?}"
    );
}

#[test]
fn ctrl_c_says_interrupted_and_exits_130() {
    // A git server that accepts and never answers: the audit waits on it.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let stop = Arc::new(AtomicBool::new(false));
    let stopped = stop.clone();
    let held = std::thread::spawn(move || {
        let mut conns = Vec::new();
        listener.set_nonblocking(true).expect("nonblocking");
        let until = Instant::now() + Duration::from_secs(20);
        while Instant::now() < until && !stopped.load(Ordering::Relaxed) {
            if let Ok((c, _)) = listener.accept() {
                conns.push(c);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    });
    let ws = Scratch::new();
    let commit = git2::Oid::from_str(&"ab".repeat(20)).expect("oid");
    let file = ws.write_pin(&good_pin("waiting", commit));
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("pinaudit"))
        .current_dir(ws.path())
        .env("HOME", ws.path())
        .args([
            "audit",
            "--cache",
            "cache",
            "--allow-local",
            "--timeout",
            "30",
            "--rewrite",
            &format!("https://github.com/=git://127.0.0.1:{port}/"),
            &file,
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    std::thread::sleep(Duration::from_millis(1500));
    // SAFETY: signals our own child, by its process id.
    let sent = unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    assert_eq!(sent, 0, "kill");
    let out = child.wait_with_output().expect("wait");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("interrupted"), "{stderr}");
    stop.store(true, Ordering::Relaxed);
    held.join().expect("server thread");
}
