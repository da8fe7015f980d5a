//! Speed at scale must not change a verdict: the same report, byte for byte,
//! whether the cache's stores (`blobs.store`, `drift.store`, `variants.store`,
//! `checks.store`) are cold, warm, absent, damaged or poisoned with answers that
//! make no sense, and whatever `--jobs` is.
//!
//! The corpus is small but takes every path the stores serve: drift against a
//! head that moved and edited lines, a recorded hash that matches another
//! version's CRLF variant, a hash that matches nothing, several sources citing
//! one document at several commits.

use std::path::Path;

use crate::common::forge::{claim, pin, sha256_hex, source, to_daemon, Forge, T0};
use crate::common::scratch::Scratch;
use crate::common::{GitDaemon, Wants};

const STORES: [&str; 5] = [
    "blobs.store",
    "drift.store",
    "variants.store",
    "checks.store",
    "fragments.store",
];

/// Removes the whole-record memos (the report fragments, and the results a
/// run without them keeps), so that the run after it asks the other stores
/// (a hit in either asks none of them).
fn forget_records(cache: &Path) {
    let _ = std::fs::remove_file(cache.join("records.store"));
    let _ = std::fs::remove_file(cache.join("fragments.store"));
}

/// Rewrites every remembered answer of `checks.store` as nonsense (an unknown
/// tag) and signs the file again, as a buggy or hostile writer would: well
/// formed, checksummed, and wrong.
fn poison_checks(path: &Path) {
    use sha2::{Digest, Sha256};
    let bytes = std::fs::read(path).expect("checks.store");
    let body = &bytes[..bytes.len() - 32];
    let magic_len = body.iter().position(|&b| b == b'\n').expect("magic") + 1;
    let mut out = body[..magic_len].to_vec();
    let mut rest = &body[magic_len..];
    let mut entries = 0;
    while !rest.is_empty() {
        let len = u32::from_le_bytes(rest[32..36].try_into().expect("len")) as usize;
        out.extend_from_slice(&rest[..36]);
        let mut value = rest[36..36 + len].to_vec();
        for b in value.iter_mut().take(4) {
            *b = 0xff;
        }
        out.extend_from_slice(&value);
        rest = &rest[36 + len..];
        entries += 1;
    }
    assert!(entries > 0, "answers remembered");
    let check = Sha256::digest(&out);
    out.extend_from_slice(&check);
    std::fs::write(path, out).expect("poison");
}

fn table(rows: &[(&str, f64)]) -> String {
    let mut s = String::from("# Results\n\n| phase | rate |\n|---|---|\n");
    for (name, v) in rows {
        s.push_str(&format!("| {name} | {v} tokens/s |\n"));
    }
    s
}

pub(crate) fn corpus(forge: &Forge) -> Vec<serde_json::Value> {
    let repo = forge.repo("acme/speed");
    let v1 = table(&[("decode", 2.9), ("prefill", 79.6), ("batch", 11.5)]);
    let v2 = table(&[
        ("decode", 2.9),
        ("warmup", 1.5),
        ("prefill", 79.6),
        ("batch", 11.5),
    ]);
    let v3 = table(&[
        ("decode", 3.1),
        ("warmup", 1.5),
        ("prefill", 79.6),
        ("batch", 12.5),
    ]);
    let notes1 = "# Notes\n\nlatency 41.5 ms\n";
    let notes2 = "# Notes\n\nRe-run on 0.4.\n\nlatency 41.5 ms\n";
    let c1 = repo.commit(
        &[("README.md", &v1), ("NOTES.md", &notes1.to_string())],
        "one",
        T0,
    );
    let c2 = repo.commit(
        &[("README.md", &v2), ("NOTES.md", &notes2.to_string())],
        "two",
        T0 + 60,
    );
    let _c3 = repo.commit(&[("README.md", &v3)], "three", T0 + 120);
    let time = "2023-11-14T22:13:20Z";
    let mut pins = Vec::new();
    for (k, (commit, text)) in [(c1, &v1), (c2, &v2)].into_iter().enumerate() {
        let good = source(
            "readme",
            "acme/speed",
            commit,
            "README.md",
            &sha256_hex(text),
            time,
        );
        // Recorded from a Windows checkout of the other version.
        let other = if k == 0 { &v2 } else { &v1 };
        let crlf = sha256_hex(other.replace('\n', "\r\n"));
        let variant = source("variant", "acme/speed", commit, "README.md", &crlf, time);
        let nowhere = source(
            "nowhere",
            "acme/speed",
            commit,
            "README.md",
            &sha256_hex("x"),
            time,
        );
        let notes_text = if k == 0 { notes1 } else { notes2 };
        let notes = source(
            "notes",
            "acme/speed",
            commit,
            "NOTES.md",
            &sha256_hex(notes_text),
            time,
        );
        let decode_line = 5;
        let batch_line = if k == 0 { 7 } else { 8 };
        let claims = [
            claim("decode", &good, decode_line, 2.9),
            claim("batch", &good, batch_line, 11.5),
            claim("wrong", &variant, decode_line, 9.9),
            claim("prefill", &nowhere, 6, 79.6),
            claim("latency", &notes, if k == 0 { 3 } else { 5 }, 41.5),
        ];
        pins.push(pin(
            &format!("rec{k}"),
            &[good, variant, nowhere, notes],
            &claims,
        ));
    }
    pins
}

fn remove_stores(cache: &Path) {
    for s in STORES {
        let _ = std::fs::remove_file(cache.join(s));
    }
}

#[test]
fn reports_are_identical_whatever_the_stores_and_jobs() {
    let forge = Forge::new();
    let pins = corpus(&forge);
    let daemon = GitDaemon::start(forge.path(), Wants::Default);
    let rewrite = to_daemon(&daemon);
    let ws = Scratch::new();
    let files: Vec<String> = pins.iter().map(|p| ws.write_pin(p)).collect();
    let audit = |extra: &[&str]| {
        let mut args: Vec<&str> = vec!["--rewrite", &rewrite];
        args.extend_from_slice(extra);
        args.extend(files.iter().map(String::as_str));
        ws.audit(args)
    };

    let cold = audit(&["--jobs", "1"]);
    let report = cold.report();
    // The corpus takes the paths the stores serve.
    let codes = cold.codes();
    for code in ["hash-mismatch", "upstream-changed", "value-superseded"] {
        assert!(codes.iter().any(|c| c == code), "{code} in {codes:?}");
    }
    assert!(
        report["summary"]["verified_claims"].as_u64() >= Some(4),
        "{report:#}"
    );
    for s in STORES {
        assert!(ws.cache().join(s).is_file(), "{s} written");
    }

    let warm = audit(&["--jobs", "4"]);
    assert_eq!(warm.stdout, cold.stdout, "warm store, --jobs 4");
    let warm1 = audit(&["--jobs", "1"]);
    assert_eq!(warm1.stdout, cold.stdout, "warm store, --jobs 1");
    // The same from the per-document answers, without the whole-record memo.
    forget_records(&ws.cache());
    let warm_checks = audit(&["--jobs", "4"]);
    assert_eq!(warm_checks.stdout, cold.stdout, "checks.store, --jobs 4");

    // Remembered answers alone, without the hashes and fates they came from.
    for s in STORES.iter().filter(|s| **s != "checks.store") {
        let _ = std::fs::remove_file(ws.cache().join(s));
    }
    let answers_only = audit(&["--jobs", "1"]);
    assert_eq!(answers_only.stdout, cold.stdout, "checks.store alone");

    // Answers that make no sense for their key are never trusted.
    poison_checks(&ws.cache().join("checks.store"));
    forget_records(&ws.cache());
    let poisoned = audit(&["--jobs", "2"]);
    assert_eq!(poisoned.stdout, cold.stdout, "checks.store poisoned");
    let healed = std::fs::read(ws.cache().join("checks.store")).expect("rebuilt");
    poison_checks(&ws.cache().join("checks.store"));
    forget_records(&ws.cache());
    let again = audit(&["--jobs", "1"]);
    assert_eq!(again.stdout, cold.stdout, "checks.store poisoned again");
    assert_eq!(
        std::fs::read(ws.cache().join("checks.store")).expect("rebuilt"),
        healed,
        "poisoned answers replaced by sound ones"
    );

    remove_stores(&ws.cache());
    let absent = audit(&["--jobs", "2"]);
    assert_eq!(absent.stdout, cold.stdout, "stores absent");

    // Damaged stores are ignored (and rebuilt), never trusted.
    for s in STORES {
        let path = ws.cache().join(s);
        let mut bytes = std::fs::read(&path).expect("store");
        let mid = bytes.len() / 2;
        bytes[mid] ^= 0x55;
        std::fs::write(&path, &bytes).expect("damage");
    }
    let damaged = audit(&["--jobs", "3"]);
    assert_eq!(damaged.stdout, cold.stdout, "stores damaged");

    // Offline: the same whatever the stores.
    let offline = |extra: &[&str]| {
        let mut args: Vec<&str> = vec!["--offline", "--rewrite", &rewrite];
        args.extend_from_slice(extra);
        args.extend(files.iter().map(String::as_str));
        ws.audit(args)
    };
    let off_warm = offline(&["--jobs", "1"]);
    remove_stores(&ws.cache());
    let off_absent = offline(&["--jobs", "4"]);
    assert_eq!(off_absent.stdout, off_warm.stdout, "offline, stores absent");
    let off_cold_store = offline(&["--jobs", "2"]);
    assert_eq!(
        off_cold_store.stdout, off_warm.stdout,
        "offline, stores rebuilt"
    );
}

/// The mirrors under `cache`: every `*.git` directory.
fn mirrors(cache: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![cache.to_path_buf()];
    while let Some(dir) = todo.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if !path.is_dir() {
                continue;
            }
            if path.extension().is_some_and(|e| e == "git") {
                out.push(path);
            } else {
                todo.push(path);
            }
        }
    }
    out
}

/// Rewrites `mirror`'s objects as one pack without a single blob: commits and
/// trees only. Whatever reads a document afterwards fails.
fn strip_blobs(mirror: &Path) {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let listed = Command::new("git")
        .arg("-C")
        .arg(mirror)
        .args(["rev-list", "--objects", "--all", "--filter=blob:none"])
        .output()
        .expect("git rev-list");
    assert!(listed.status.success(), "rev-list in {}", mirror.display());
    let ids: String = String::from_utf8_lossy(&listed.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .map(|id| format!("{id}\n"))
        .collect();
    let objects = mirror.join("objects");
    let old: Vec<std::path::PathBuf> = std::fs::read_dir(&objects)
        .expect("objects")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.file_name().is_some_and(|n| n != "info"))
        .collect();
    let staging = mirror.join("stripped");
    let mut pack = Command::new("git")
        .arg("-C")
        .arg(mirror)
        .arg("pack-objects")
        .arg(&staging)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .expect("git pack-objects");
    pack.stdin
        .take()
        .expect("stdin")
        .write_all(ids.as_bytes())
        .expect("ids");
    assert!(pack.wait().expect("pack-objects").success());
    for p in old {
        if p.is_dir() {
            std::fs::remove_dir_all(&p).expect("remove objects");
        } else {
            std::fs::remove_file(&p).expect("remove object");
        }
    }
    let packs = objects.join("pack");
    std::fs::create_dir_all(&packs).expect("pack dir");
    for entry in std::fs::read_dir(mirror).expect("mirror").flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if let Some(rest) = name.strip_prefix("stripped-") {
            std::fs::rename(entry.path(), packs.join(format!("pack-{rest}"))).expect("move");
        }
    }
}

/// The stores answer a warm re-check, but an offline run still checks that the
/// cited documents read back whole (issue "Reliability and security": a damaged
/// cache is said, never judged from): a mirror whose blobs were taken out is
/// "cache damaged", every source `unchecked`, and no finding is made up against
/// the records.
#[test]
fn a_mirror_without_its_blobs_is_damaged_not_judged_from_the_memo() {
    let forge = Forge::new();
    let pins = corpus(&forge);
    let daemon = GitDaemon::start(forge.path(), Wants::Default);
    let rewrite = to_daemon(&daemon);
    let ws = Scratch::new();
    let files: Vec<String> = pins.iter().map(|p| ws.write_pin(p)).collect();
    let audit = |extra: &[&str]| {
        let mut args: Vec<&str> = vec!["--rewrite", &rewrite];
        args.extend_from_slice(extra);
        args.extend(files.iter().map(String::as_str));
        ws.audit(args)
    };
    let _cold = audit(&["--jobs", "1"]);
    // A warm run: the stores now hold every answer.
    audit(&["--offline", "--jobs", "1"]).assert_code(1);
    let found = mirrors(&ws.cache());
    assert_eq!(found.len(), 1, "{found:?}");
    strip_blobs(&found[0]);
    let blobless = audit(&["--offline", "--jobs", "2"]);
    blobless.assert_code(2);
    let report = blobless.report();
    for rec in report["records"].as_array().into_iter().flatten() {
        for s in rec["sources"].as_array().into_iter().flatten() {
            assert_eq!(s["status"], "unchecked", "{s:#}");
            let reason = s["reason"].as_str().unwrap_or_default();
            assert!(reason.contains("cache damaged"), "{reason}");
        }
    }
    assert!(
        blobless
            .findings()
            .iter()
            .all(|f| f["code"] != "value-missing" && f["code"] != "path-missing"),
        "a finding against a record: {:#?}",
        blobless.findings()
    );
}

/// A re-check of an unchanged mirror does not read it back
/// (`verified.store`: the mirror's files are as they were when it was last found
/// whole), but any change to its ref or object files, even one that keeps their
/// size, has it read back again; a damaged `verified.store` is rebuilt.
#[test]
fn a_same_size_ref_edit_after_the_mirror_was_verified_is_caught() {
    let forge = Forge::new();
    let pins = corpus(&forge);
    let daemon = GitDaemon::start(forge.path(), Wants::Default);
    let rewrite = to_daemon(&daemon);
    let ws = Scratch::new();
    let files: Vec<String> = pins.iter().map(|p| ws.write_pin(p)).collect();
    let audit = |extra: &[&str]| {
        let mut args: Vec<&str> = vec!["--rewrite", &rewrite];
        args.extend_from_slice(extra);
        args.extend(files.iter().map(String::as_str));
        ws.audit(args)
    };
    let cold = audit(&["--jobs", "1"]);
    let first = audit(&["--offline", "--jobs", "1"]);
    let second = audit(&["--offline", "--jobs", "2"]);
    assert_eq!(second.stdout, first.stdout, "offline re-check");
    let store = ws.cache().join("verified.store");
    assert!(store.is_file(), "verified.store written");
    let mut bytes = std::fs::read(&store).expect("verified.store");
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x20;
    std::fs::write(&store, &bytes).expect("damage");
    let rebuilt = audit(&["--offline", "--jobs", "1"]);
    assert_eq!(rebuilt.stdout, first.stdout, "verified.store damaged");
    assert_ne!(
        std::fs::read(&store).expect("verified.store"),
        bytes,
        "rebuilt"
    );
    let online = audit(&["--jobs", "2"]);
    assert_eq!(online.stdout, cold.stdout, "online re-check");

    // Same size, another (missing) commit: only reading the refs tells.
    let found = mirrors(&ws.cache());
    assert_eq!(found.len(), 1, "{found:?}");
    let loose = found[0].join("refs/heads/main");
    let file = if loose.is_file() {
        loose
    } else {
        found[0].join("packed-refs")
    };
    let text = std::fs::read_to_string(&file).expect("refs");
    let line = text
        .lines()
        .find(|l| l.len() >= 40 && (l.ends_with("refs/heads/main") || !l.contains(' ')))
        .expect("main's line")
        .to_string();
    let flipped = match line.as_bytes()[0] {
        b'0' => format!("1{}", &line[1..]),
        _ => format!("0{}", &line[1..]),
    };
    let edited = text.replacen(&line, &flipped, 1);
    assert_eq!(edited.len(), text.len());
    std::fs::write(&file, edited).expect("edit ref");
    let run = audit(&["--offline", "--jobs", "1"]);
    run.assert_code(2);
    let report = run.report();
    let sources: Vec<&serde_json::Value> = report["records"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|r| r["sources"].as_array().into_iter().flatten())
        .collect();
    assert!(!sources.is_empty());
    for s in sources {
        assert_eq!(s["status"], "unchecked", "{s:#}");
        let reason = s["reason"].as_str().unwrap_or_default();
        assert!(reason.contains("cache damaged"), "{reason}");
    }
}

/// A loopback proxy in front of `git daemon` that holds every connection for
/// `delay` before passing it on: a repository whose server is slow to answer.
struct Stalling {
    port: u16,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Stalling {
    fn start(to: u16, delay: std::time::Duration) -> Stalling {
        use std::net::{TcpListener, TcpStream};
        use std::sync::atomic::Ordering;
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("addr").port();
        listener.set_nonblocking(true).expect("nonblocking");
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = stop.clone();
        let pass = move |client: TcpStream| {
            std::thread::sleep(delay);
            let Ok(server) = TcpStream::connect(("127.0.0.1", to)) else {
                return;
            };
            let (Ok(mut c2), Ok(mut s2)) = (client.try_clone(), server.try_clone()) else {
                return;
            };
            let up = std::thread::spawn(move || {
                let _ = std::io::copy(&mut c2, &mut s2);
                let _ = s2.shutdown(std::net::Shutdown::Write);
            });
            let (mut client, mut server) = (client, server);
            let _ = std::io::copy(&mut server, &mut client);
            let _ = client.shutdown(std::net::Shutdown::Write);
            let _ = up.join();
        };
        let thread = std::thread::spawn(move || {
            let mut passing = Vec::new();
            while !flag.load(Ordering::SeqCst) {
                match listener.accept() {
                    Ok((client, _)) => {
                        let _ = client.set_nonblocking(false);
                        passing.push(std::thread::spawn(move || pass(client)));
                    }
                    Err(_) => std::thread::sleep(std::time::Duration::from_millis(10)),
                }
            }
            // Every connection ends with the run that opened it.
            for p in passing {
                let _ = p.join();
            }
        });
        Stalling {
            port,
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for Stalling {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Checking starts while repositories still sync (the records of a synced
/// repository are checked before those of one whose server is slow, and of one
/// that does not exist), yet every record is reported as a run that checks one
/// record after the other at `--jobs 1` reports it, byte for byte, and as a
/// warm re-check does.
#[test]
fn a_cold_audit_with_a_slow_and_a_missing_repository_reports_as_jobs_1() {
    let forge = Forge::new();
    let names = ["acme/slow", "acme/one", "acme/two", "acme/three"];
    let mut commits = Vec::new();
    for (k, name) in names.iter().enumerate() {
        let text = table(&[("decode", 2.5 + k as f64), ("batch", 10.5 + k as f64)]);
        let commit = forge
            .repo(name)
            .commit(&[("README.md", &text)], "results", T0);
        commits.push((*name, commit, text));
    }
    let daemon = GitDaemon::start(forge.path(), Wants::Default);
    let slow = Stalling::start(daemon.port(), std::time::Duration::from_millis(700));
    let time = "2023-11-14T22:13:20Z";
    let readme = |k: usize, id: &str| {
        let (name, commit, text) = &commits[k];
        source(id, name, *commit, "README.md", &sha256_hex(text), time)
    };
    // The slow repository's records come first, so the others are checked
    // while it syncs; some records cite two repositories, one of them slow.
    let mut pins = Vec::new();
    for i in 0..15 {
        let k = i % 5;
        let (sources, claims) = match k {
            4 => {
                let (_, commit, _) = &commits[1];
                let gone = source(
                    "readme",
                    "acme/gone",
                    *commit,
                    "README.md",
                    &sha256_hex("x"),
                    time,
                );
                let claims = vec![claim("decode", &gone, 5, 2.5)];
                (vec![gone], claims)
            }
            _ => {
                let s = readme(k, "readme");
                let mut claims = vec![
                    claim("decode", &s, 5, 2.5 + k as f64),
                    // Not on its line: a finding.
                    claim("batch", &s, 5, 10.5 + k as f64),
                ];
                let mut sources = vec![s];
                if i % 3 == 0 {
                    let other = readme((k + 1) % 4, "other");
                    claims.push(claim("other", &other, 6, 10.5 + ((k + 1) % 4) as f64));
                    sources.push(other);
                }
                (sources, claims)
            }
        };
        pins.push(pin(&format!("rec{i:02}"), &sources, &claims));
    }
    let rewrites = [
        to_daemon(&daemon),
        format!(
            "https://github.com/acme/slow=git://127.0.0.1:{}/acme/slow",
            slow.port
        ),
    ];
    let audit = |ws: &Scratch, files: &[String], jobs: &str| {
        let mut args: Vec<&str> = vec!["--jobs", jobs];
        for r in &rewrites {
            args.extend(["--rewrite", r.as_str()]);
        }
        args.extend(files.iter().map(String::as_str));
        ws.audit(args)
    };
    let (ws, one) = (Scratch::new(), Scratch::new());
    let files: Vec<String> = pins.iter().map(|p| ws.write_pin(p)).collect();
    let files_one: Vec<String> = pins.iter().map(|p| one.write_pin(p)).collect();
    assert_eq!(files, files_one);

    let cold = audit(&ws, &files, "4");
    let cold_one = audit(&one, &files, "1");
    assert_eq!(cold.code(), 1, "{}", cold.stderr);
    assert_eq!(cold.stdout, cold_one.stdout, "cold, --jobs 4 and --jobs 1");
    for i in 0..15 {
        let record = format!("rec{i:02}");
        let k = i % 5;
        let s = cold.source(&record, "readme");
        if k == 4 {
            assert_eq!(s["status"], "absent", "{s:#}");
            continue;
        }
        assert_eq!(s["status"], "checked", "{record}: {s:#}");
        assert_eq!(
            cold.claim(&record, "decode")["status"],
            "verified",
            "{record}"
        );
        assert_eq!(
            cold.claim(&record, "batch")["status"],
            "shifted",
            "{record}"
        );
        if i % 3 == 0 {
            assert_eq!(
                cold.claim(&record, "other")["status"],
                "verified",
                "{record}"
            );
        }
    }
    let missing = cold.with_code("repository-missing");
    assert_eq!(missing.len(), 3, "{missing:#?}");
    assert_eq!(cold.with_code("value-shifted").len(), 12);

    let warm = audit(&ws, &files, "4");
    assert_eq!(warm.stdout, cold.stdout, "warm, --jobs 4");
}
