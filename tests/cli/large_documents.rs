//! Large documents (issues "Reliability and security" and "Speed at scale"): a
//! document over the stream threshold is hashed, matched and compared with its
//! head as a stream, so pinaudit's peak memory does not grow with it.
//!
//! The test documents are a few hundred MB at most so the suite stays fast; the
//! 1 GB and 5M-line measurements are `scripts/bench-memory.sh` (README, "Large
//! documents").

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use crate::common::daemon::{GitDaemon, Wants};
use crate::common::forge::{source, to_daemon, Forge, NAME, T0, T0_RFC3339};
use crate::common::run::Run;
use crate::common::scratch::Scratch;

/// The peak resident memory a streamed audit may take, in KiB ("a 1
/// GB document hashes with RSS under 100 MB").
const MAX_RSS_KIB: u64 = 100 * 1024;

/// A document of `rows` table rows (about 40 bytes each) with the figure
/// `| decode | 2.9 tok/s |` on line `decode_line` and `| prefill | 812 tok/s |`
/// one line below `prefill_cited`, where a record says it is.
fn big_document(rows: usize, decode_line: usize, prefill_line: usize) -> Vec<u8> {
    let mut doc = Vec::with_capacity(rows * 40);
    doc.extend_from_slice(b"# Benchmark log\n");
    for i in 2..=rows {
        if i == decode_line {
            doc.extend_from_slice(b"| decode | 2.9 tok/s |\n");
        } else if i == prefill_line {
            doc.extend_from_slice(b"| prefill | 812 tok/s |\n");
        } else {
            writeln!(doc, "| step {i:09} | {:03} ms | ok |", i % 997).expect("write");
        }
    }
    doc
}

/// sha256 of `doc` with every LF made CRLF (what a Windows checkout hashes).
fn crlf_sha256(doc: &[u8]) -> String {
    let mut h = Sha256::new();
    for line in doc.split_inclusive(|&b| b == b'\n') {
        match line.strip_suffix(b"\n") {
            Some(body) => {
                h.update(body);
                h.update(b"\r\n");
            }
            None => h.update(line),
        }
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// Runs `pinaudit audit ARGS` in `work` and returns the run with its peak
/// resident memory in KiB.
///
/// A child's `ru_maxrss` starts at its parent's peak (Linux carries the old
/// address space's high-water mark across `exec`), and this test process holds
/// the test documents and whatever the parallel tests hold. So the audit is
/// started by a fresh, small process, this test binary re-run as [`rss_probe`],
/// which `wait4`s on it for its own `ru_maxrss` and writes it to a file.
fn audit_measured(work: &Scratch, args: &[&str]) -> (Run, u64) {
    let started = std::time::Instant::now();
    let status = Command::new(std::env::current_exe().expect("test binary"))
        .args([
            "--exact",
            "large_documents::rss_probe",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(PROBE_DIR, work.path())
        .env(PROBE_ARGS, serde_json::to_string(args).expect("json"))
        .stdout(Stdio::null())
        .status()
        .expect("the probe runs");
    assert!(status.success(), "the probe failed");
    let read = |name: &str| std::fs::read_to_string(work.path().join(name)).expect(name);
    let probe = read("probe.txt");
    let mut fields = probe.split_whitespace().map(|f| f.parse::<i64>().ok());
    let (Some(Some(code)), Some(Some(rss))) = (fields.next(), fields.next()) else {
        panic!("probe output: {probe}");
    };
    let run = Run {
        status: (code >= 0).then_some(code as i32),
        stdout: read("stdout.json"),
        stderr: read("stderr.txt"),
        took: started.elapsed(),
    };
    assert!(
        !run.stderr.contains("panicked") && run.status.is_some(),
        "pinaudit failed:\n{}",
        run.stderr
    );
    (run, rss as u64)
}

const PROBE_DIR: &str = "PINAUDIT_TEST_RSS_PROBE_DIR";
const PROBE_ARGS: &str = "PINAUDIT_TEST_RSS_PROBE_ARGS";

/// Not a test of its own: [`audit_measured`] re-runs the test binary with only
/// this test, which then runs `pinaudit audit` in `$PINAUDIT_TEST_RSS_PROBE_DIR`
/// and writes `EXIT-CODE MAXRSS-KIB` to `probe.txt` there (exit code -1 when it
/// was killed by a signal).
#[test]
// The child is reaped by `wait4`, which `Child::wait` can't replace (it gives
// no resource usage).
#[allow(clippy::zombie_processes)]
fn rss_probe() {
    let (Some(dir), Some(args)) = (std::env::var_os(PROBE_DIR), std::env::var(PROBE_ARGS).ok())
    else {
        return;
    };
    let dir = Path::new(&dir);
    let args: Vec<String> = serde_json::from_str(&args).expect("probe args");
    let child = Command::new(env!("CARGO_BIN_EXE_pinaudit"))
        .args([
            "audit",
            "--cache",
            "cache",
            "--format",
            "json",
            "--timeout",
            "30",
        ])
        .args(&args)
        .current_dir(dir)
        .env("HOME", dir)
        .env_remove("PINAUDIT_CACHE")
        .env_remove("GITHUB_TOKEN")
        .env("SOURCE_DATE_EPOCH", "0")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(dir.join("stdout.json")).expect("stdout file"))
        .stderr(std::fs::File::create(dir.join("stderr.txt")).expect("stderr file"))
        .spawn()
        .expect("pinaudit runs");
    let pid = libc::pid_t::try_from(child.id()).expect("pid");
    let mut status = 0;
    // SAFETY: `rusage` is plain data that wait4 fills in; the child is ours
    // and is reaped here (its `Child` is never waited on).
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(waited, pid, "wait4: {}", std::io::Error::last_os_error());
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        -1
    };
    std::fs::write(
        dir.join("probe.txt"),
        format!("{code} {}\n", usage.ru_maxrss),
    )
    .expect("probe.txt");
}

/// Big blobs are not delta'd by the server (git's `core.bigFileThreshold`, 512
/// MiB by default, lowered here so that test-sized documents behave as 1 GB ones
/// do): they reach the cache whole, as a stream can read them.
fn serve_big_files_whole(repo: &Path) {
    let ok = Command::new("git")
        .args(["config", "core.bigFileThreshold", "8m"])
        .current_dir(repo)
        .status()
        .expect("git config");
    assert!(ok.success());
}

/// A 66 MB document (2M lines) pinned with the hash of its CRLF checkout, a
/// figure on its cited line and one a line below its citation, and a head
/// where the cited figure was corrected: every verdict is the one a document
/// held in memory gets (hash mismatch naming the `crlf` variant, verified,
/// shifted, superseded upstream), and the audit's peak RSS stays under 100 MB
/// and under the document's size (held whole, as before, it took twice that).
#[test]
fn a_large_document_is_judged_as_a_stream_in_bounded_memory() {
    const ROWS: usize = 2_000_000;
    const DECODE: usize = 1_500_000;
    const PREFILL: usize = 1_900_001;
    let forge = Forge::new();
    let repo = forge.repo(NAME);
    serve_big_files_whole(repo.path());
    let doc = big_document(ROWS, DECODE, PREFILL);
    let size_kib = doc.len() as u64 / 1024;
    assert!(size_kib > 60 << 10, "{}", doc.len());
    let pinned_sha = crate::common::forge::sha256_hex(&doc);
    let recorded = crlf_sha256(&doc);
    let commit = repo.commit(&[("LOG.md", &doc[..])], "add the log", T0);
    let blob = git2::Oid::hash_object(git2::ObjectType::Blob, &doc).expect("blob id");
    // The head corrects the decode figure and adds a line on top.
    let mut head = b"Updated.\n".to_vec();
    head.extend_from_slice(&doc);
    drop(doc);
    let text = String::from_utf8(head).expect("utf-8");
    let head = text.replacen("| decode | 2.9 tok/s |", "| decode | 3.4 tok/s |", 1);
    drop(text);
    repo.commit(&[("LOG.md", head.as_bytes())], "correct decode", T0 + 60);
    drop(head);

    let work = Scratch::new();
    let s = source("log", NAME, commit, "LOG.md", &recorded, T0_RFC3339);
    let claim = |label: &str, line: usize, value: f64| {
        json!({
            "label": label,
            "source": "log",
            "lines": [line, line],
            "value": value,
            "unit": "tokens/s",
            "metric": "rate",
            "url": format!("{}#L{line}", s["url"].as_str().expect("url")),
            "correct": null,
            "total": null,
        })
    };
    let c1 = claim("decode", DECODE, 2.9);
    let c2 = claim("prefill", PREFILL - 1, 812.0);
    work.write_pin(&crate::common::forge::pin("big", &[s], &[c1, c2]));

    let daemon = GitDaemon::start(forge.path(), Wants::Reachable);
    let (r, rss) = audit_measured(&work, &["--rewrite", &to_daemon(&daemon), "pins"]);
    drop(daemon);

    let src = r.source("big", "log");
    assert_eq!(src["status"], "checked", "{src:#}\n{}", r.stderr);
    assert_eq!(src["sha256"]["actual"], pinned_sha);
    assert_eq!(src["git_blob"], blob.to_string());
    let mismatch = r.only("hash-mismatch");
    assert_eq!(
        mismatch["evidence"]["matching_variant"], "crlf",
        "{mismatch:#}"
    );
    let decode = r.claim("big", "decode");
    assert_eq!(decode["status"], "verified", "{decode:#}");
    assert_eq!(decode["found_line"], DECODE);
    assert_eq!(decode["line_text"], "| decode | 2.9 tok/s |");
    let prefill = r.claim("big", "prefill");
    assert_eq!(prefill["status"], "shifted", "{prefill:#}");
    assert_eq!(prefill["found_line"], PREFILL);
    let shifted = r.only("value-shifted");
    assert_eq!(shifted["evidence"]["nearest_line"], PREFILL);
    let superseded = r.only("value-superseded");
    assert_eq!(superseded["claim"], "decode", "{superseded:#}");
    assert_eq!(src["upstream"]["changed"], Value::Bool(true), "{src:#}");
    eprintln!(
        "large document: {} MiB peak RSS, {:.1} s",
        rss / 1024,
        r.took.as_secs_f64()
    );
    assert!(
        rss < MAX_RSS_KIB && rss < size_kib,
        "peak RSS {rss} KiB for a document of {size_kib} KiB"
    );

    // Offline, from the cache and its stores: the same verdicts.
    let again = work.audit_offline(["pins"]);
    assert_eq!(again.claim("big", "decode")["status"], "verified");
    assert_eq!(
        again.only("hash-mismatch")["evidence"]["matching_variant"],
        "crlf"
    );

    // A flipped byte inside the pinned blob, stores gone: the streamed read
    // checks the blob against its id, so the source is "cache damaged" and
    // unchecked, never judged from the damaged bytes.
    let (pack, offset) = packed_at(&work.mirror(NAME), blob);
    flip_byte(&pack, offset + 4096);
    for store in [
        "blobs.store",
        "variants.store",
        "checks.store",
        "drift.store",
        "records.store",
        "fragments.store",
    ] {
        let _ = std::fs::remove_file(work.cache().join(store));
    }
    let damaged = work.audit_offline(["pins"]);
    damaged.assert_code(2);
    let src = damaged.source("big", "log");
    assert_eq!(src["status"], "unchecked", "{src:#}");
    assert!(
        src["reason"]
            .as_str()
            .is_some_and(|r| r.contains("cache damaged")),
        "{src:#}"
    );
    assert_eq!(damaged.claim("big", "decode")["status"], "unchecked");
    damaged.assert_lacks("hash-mismatch");
}

/// The pack of the mirror at `mirror` that holds `id`, and its offset there
/// (from `git verify-pack -v`: id, type, size, size in pack, offset, ...).
fn packed_at(mirror: &Path, id: git2::Oid) -> (std::path::PathBuf, u64) {
    for entry in std::fs::read_dir(mirror.join("objects/pack")).expect("packs") {
        let path = entry.expect("entry").path();
        if path.extension().is_none_or(|x| x != "idx") {
            continue;
        }
        let out = Command::new("git")
            .arg("verify-pack")
            .arg("-v")
            .arg(&path)
            .output()
            .expect("git verify-pack");
        let listing = String::from_utf8_lossy(&out.stdout);
        let wanted = id.to_string();
        for line in listing.lines() {
            let fields: Vec<&str> = line.split_whitespace().collect();
            if fields.first() == Some(&wanted.as_str()) && fields.len() >= 5 {
                let offset = fields[4].parse().expect("offset");
                return (path.with_extension("pack"), offset);
            }
        }
    }
    panic!("`{id}` is in no pack of `{}`", mirror.display());
}

/// Flips one bit of the byte at `offset` of `path` (a read-only pack).
fn flip_byte(path: &Path, offset: u64) {
    use std::io::{Read, Seek, SeekFrom};
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .expect("open pack");
    let mut b = [0u8; 1];
    f.seek(SeekFrom::Start(offset)).expect("seek");
    f.read_exact(&mut b).expect("read");
    b[0] ^= 0x10;
    f.seek(SeekFrom::Start(offset)).expect("seek");
    f.write_all(&b).expect("write");
}

/// A 33 MB document with an edited head and the server's default settings: git
/// stores the pinned version as a delta of the head's, and both are read as
/// streams (the delta applied against its base spilled to a temporary file),
/// with the same verdicts and in less memory than the document.
#[test]
fn an_edited_large_document_is_read_through_its_delta() {
    const ROWS: usize = 1_000_000;
    const DECODE: usize = 700_000;
    const PREFILL: usize = 900_001;
    let forge = Forge::new();
    let repo = forge.repo(NAME);
    let doc = big_document(ROWS, DECODE, PREFILL);
    let size_kib = doc.len() as u64 / 1024;
    let pinned_sha = crate::common::forge::sha256_hex(&doc);
    let commit = repo.commit(&[("LOG.md", &doc[..])], "add the log", T0);
    let blob = git2::Oid::hash_object(git2::ObjectType::Blob, &doc).expect("blob id");
    let text = String::from_utf8(doc).expect("utf-8");
    let head =
        format!("Updated.\n{text}").replacen("| decode | 2.9 tok/s |", "| decode | 3.4 tok/s |", 1);
    drop(text);
    repo.commit(&[("LOG.md", head.as_bytes())], "correct decode", T0 + 60);
    drop(head);

    let work = Scratch::new();
    let s = source("log", NAME, commit, "LOG.md", &pinned_sha, T0_RFC3339);
    let claim = |label: &str, line: usize, value: f64| {
        json!({
            "label": label,
            "source": "log",
            "lines": [line, line],
            "value": value,
            "unit": "tokens/s",
            "metric": "rate",
            "url": format!("{}#L{line}", s["url"].as_str().expect("url")),
            "correct": null,
            "total": null,
        })
    };
    let c1 = claim("decode", DECODE, 2.9);
    let c2 = claim("prefill", PREFILL - 1, 812.0);
    work.write_pin(&crate::common::forge::pin("big", &[s], &[c1, c2]));
    let daemon = GitDaemon::start(forge.path(), Wants::Reachable);
    let (r, rss) = audit_measured(&work, &["--rewrite", &to_daemon(&daemon), "pins"]);
    drop(daemon);

    // The case this test is about: the pinned blob is a delta in the cache.
    let (pack, _) = packed_at(&work.mirror(NAME), blob);
    let listing = Command::new("git")
        .arg("verify-pack")
        .arg("-v")
        .arg(pack.with_extension("idx"))
        .output()
        .expect("git verify-pack");
    let listing = String::from_utf8_lossy(&listing.stdout);
    let line = listing
        .lines()
        .find(|l| l.starts_with(&blob.to_string()))
        .expect("listed");
    assert!(line.split_whitespace().count() > 5, "not a delta: {line}");

    let judged = |r: &Run| {
        let src = r.source("big", "log");
        assert_eq!(src["status"], "checked", "{src:#}\n{}", r.stderr);
        assert_eq!(src["sha256"]["actual"], pinned_sha);
        r.assert_lacks("hash-mismatch");
        assert_eq!(r.claim("big", "decode")["status"], "verified");
        assert_eq!(r.claim("big", "prefill")["found_line"], PREFILL);
        assert_eq!(r.only("value-superseded")["claim"], "decode");
    };
    judged(&r);
    // Fetching costs about twice the document once: libgit2's indexer rebuilds
    // each delta in memory to check its id (README, "Large documents"). Reading
    // it afterwards, with nothing remembered, is what pinaudit bounds.
    for store in [
        "blobs.store",
        "variants.store",
        "checks.store",
        "drift.store",
    ] {
        let _ = std::fs::remove_file(work.cache().join(store));
    }
    let (again, reread) = audit_measured(&work, &["--offline", "pins"]);
    judged(&again);
    eprintln!(
        "delta'd large document: fetch and read {} MiB peak RSS, read {} MiB",
        rss / 1024,
        reread / 1024
    );
    assert!(
        reread < size_kib,
        "peak RSS {reread} KiB for a document of {size_kib} KiB"
    );
}

/// `rows` table rows of pseudo-random hex (an xorshift stream: zlib keeps about
/// half of it, so the pack is nearly as big as the document) with the figure
/// `| decode | 2.9 tok/s |` on line `decode_line`.
fn incompressible_document(rows: usize, decode_line: usize) -> Vec<u8> {
    let mut doc = Vec::with_capacity(rows * 72);
    doc.extend_from_slice(b"# Benchmark log\n");
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    for i in 2..=rows {
        if i == decode_line {
            doc.extend_from_slice(b"| decode | 2.9 tok/s |\n");
        } else {
            let (a, b, c) = (next(), next(), next());
            writeln!(doc, "| step {i:09} | {a:016x}{b:016x}{c:016x} |").expect("write");
        }
    }
    doc
}

/// The size in KiB of the biggest pack of the mirror at `mirror`.
fn biggest_pack_kib(mirror: &Path) -> u64 {
    std::fs::read_dir(mirror.join("objects/pack"))
        .expect("packs")
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "pack"))
        .map(|e| e.metadata().expect("pack size").len() / 1024)
        .max()
        .expect("a pack")
}

/// The first (cold) audit of a large document fetches its pack, which
/// libgit2's indexer reads back through memory maps it keeps until the object
/// is indexed (a CRC over the whole entry): resident, they made the cold peak
/// the pack's size plus the baseline (a 1 GB document: 160 MiB). With the
/// indexer's maps paged out while the fetch runs (`src/fetch/pageout.rs`), the
/// cold peak stays well under the pack's size, and the verdicts are the same.
#[test]
fn a_large_documents_cold_fetch_does_not_hold_its_pack_in_memory() {
    const ROWS: usize = 2_000_000;
    const DECODE: usize = 1_500_000;
    let forge = Forge::new();
    let repo = forge.repo(NAME);
    serve_big_files_whole(repo.path());
    let doc = incompressible_document(ROWS, DECODE);
    let size_kib = doc.len() as u64 / 1024;
    let pinned_sha = crate::common::forge::sha256_hex(&doc);
    let commit = repo.commit(&[("LOG.md", &doc[..])], "add the log", T0);
    drop(doc);

    let work = Scratch::new();
    let s = source("log", NAME, commit, "LOG.md", &pinned_sha, T0_RFC3339);
    let claim = json!({
        "label": "decode",
        "source": "log",
        "lines": [DECODE, DECODE],
        "value": 2.9,
        "unit": "tokens/s",
        "metric": "rate",
        "url": format!("{}#L{DECODE}", s["url"].as_str().expect("url")),
        "correct": null,
        "total": null,
    });
    work.write_pin(&crate::common::forge::pin("big", &[s], &[claim]));

    let daemon = GitDaemon::start(forge.path(), Wants::Reachable);
    let (r, rss) = audit_measured(&work, &["--rewrite", &to_daemon(&daemon), "pins"]);
    drop(daemon);

    let src = r.source("big", "log");
    assert_eq!(src["status"], "checked", "{src:#}\n{}", r.stderr);
    assert_eq!(src["sha256"]["actual"], pinned_sha);
    let decode = r.claim("big", "decode");
    assert_eq!(decode["status"], "verified", "{decode:#}");
    assert_eq!(decode["found_line"], DECODE);
    r.assert_lacks("hash-mismatch");

    let pack_kib = biggest_pack_kib(&work.mirror(NAME));
    eprintln!(
        "cold fetch of a {} MiB document in a {} MiB pack: {} MiB peak RSS, {:.1} s",
        size_kib / 1024,
        pack_kib / 1024,
        rss / 1024,
        r.took.as_secs_f64()
    );
    assert!(pack_kib > 56 << 10, "pack of {pack_kib} KiB");
    // Held resident, the pack alone would be over this.
    assert!(
        rss < MAX_RSS_KIB && rss + (16 << 10) < pack_kib,
        "peak RSS {rss} KiB on the cold fetch of a pack of {pack_kib} KiB"
    );
}

/// A pack of two objects: a 64 KiB blob, and a delta of a few KiB whose
/// `copies` one-byte instructions each copy that whole blob: its result is
/// `copies` × 64 KiB (issue "Trust nothing you did not recompute", attack 7).
fn delta_bomb_pack(base: &[u8], copies: usize) -> Vec<u8> {
    use flate2::write::ZlibEncoder;
    use sha1::Digest as _;
    assert_eq!(
        base.len(),
        1 << 16,
        "a one-byte copy instruction copies 64 KiB"
    );
    let varint = |mut n: usize, out: &mut Vec<u8>| loop {
        let byte = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            out.push(byte);
            break;
        }
        out.push(byte | 0x80);
    };
    let header = |kind: u8, size: usize| {
        let mut out = vec![(kind << 4) | (size & 0x0f) as u8];
        let mut rest = size >> 4;
        while rest > 0 {
            *out.last_mut().expect("a byte") |= 0x80;
            out.push((rest & 0x7f) as u8);
            rest >>= 7;
        }
        out
    };
    let deflate = |data: &[u8]| {
        let mut z = ZlibEncoder::new(Vec::new(), flate2::Compression::best());
        z.write_all(data).expect("deflate");
        z.finish().expect("deflate")
    };
    let mut pack = b"PACK".to_vec();
    pack.extend_from_slice(&2u32.to_be_bytes());
    pack.extend_from_slice(&2u32.to_be_bytes());
    let base_at = pack.len();
    pack.extend(header(3, base.len()));
    pack.extend(deflate(base));
    let delta_at = pack.len();
    let mut delta = Vec::new();
    varint(base.len(), &mut delta);
    varint(base.len() * copies, &mut delta);
    delta.extend(std::iter::repeat_n(0x80u8, copies));
    pack.extend(header(6, delta.len()));
    // The base's distance back, as git writes it.
    let mut n = delta_at - base_at;
    let mut ofs = vec![(n & 0x7f) as u8];
    n >>= 7;
    while n > 0 {
        n -= 1;
        ofs.push(0x80 | (n & 0x7f) as u8);
        n >>= 7;
    }
    ofs.reverse();
    pack.extend(ofs);
    pack.extend(deflate(&delta));
    let trailer = sha1::Sha1::digest(&pack);
    pack.extend_from_slice(&trailer);
    pack
}

/// A delta of a few KiB that expands to 384 MiB ends the fetch with a clear
/// reason before it is built: the audit stays well under 300 MB and says
/// which limit to raise; the rest of the record is unchecked, not judged.
#[test]
fn a_delta_bomb_ends_the_fetch_before_it_is_built() {
    let forge = Forge::new();
    let fixture = forge.repo(NAME);
    let base: Vec<u8> = (0..1u32 << 16).map(|i| (i * 7 % 251) as u8).collect();
    let pack = delta_bomb_pack(&base, 6144);
    assert!(pack.len() < 100 << 10, "a small pack: {} bytes", pack.len());
    let dir = fixture.path().join("objects/pack");
    std::fs::create_dir_all(&dir).expect("pack dir");
    let hex: String = pack[pack.len() - 20..]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let file = dir.join(format!("pack-{hex}.pack"));
    std::fs::write(&file, &pack).expect("pack written");
    let indexed = Command::new("git")
        .arg("index-pack")
        .arg(&file)
        .stdout(Stdio::null())
        .status()
        .expect("git index-pack runs");
    assert!(indexed.success(), "git accepts the pack");
    let repo = git2::Repository::open(fixture.path()).expect("open");
    let mut bomb = None;
    repo.odb()
        .expect("odb")
        .foreach(|id| {
            if repo.odb().and_then(|o| o.read_header(*id)).map(|h| h.0) == Ok(384 << 20) {
                bomb = Some(*id);
            }
            true
        })
        .expect("objects listed");
    let bomb = bomb.expect("the delta's result is in the pack");
    let readme = crate::common::forge::README;
    let commit = fixture.commit(&[("README.md", readme)], "add results", T0);
    let mut tree = repo
        .treebuilder(Some(
            &repo
                .find_commit(commit)
                .expect("commit")
                .tree()
                .expect("tree"),
        ))
        .expect("builder");
    tree.insert("weights.bin", bomb, 0o100644).expect("insert");
    // Its base is sent too, so the server sends the delta as it is.
    let base_id = git2::Oid::hash_object(git2::ObjectType::Blob, &base).expect("hash");
    tree.insert("base.bin", base_id, 0o100644).expect("insert");
    let tree = repo.find_tree(tree.write().expect("tree")).expect("tree");
    let sig =
        git2::Signature::new("F", "f@example.invalid", &git2::Time::new(T0 + 60, 0)).expect("sig");
    let parent = repo.find_commit(commit).expect("commit");
    let with_bomb = repo
        .commit(
            Some("refs/heads/main"),
            &sig,
            &sig,
            "weights",
            &tree,
            &[&parent],
        )
        .expect("commit");

    let daemon = GitDaemon::start(forge.path(), Wants::Reachable);
    let work = Scratch::new();
    let pin = crate::common::forge::readme_pin(
        "bomb",
        NAME,
        with_bomb,
        &crate::common::forge::sha256_hex(readme),
        T0_RFC3339,
    );
    let file = work.write_pin(&pin);
    let (run, rss_kib) = audit_measured(&work, &["--rewrite", &to_daemon(&daemon), &file]);
    assert!(
        rss_kib < 300 * 1024,
        "peak RSS {rss_kib} KiB\n{}",
        run.stderr
    );
    run.assert_code(2);
    assert!(
        run.stderr.contains("needs 384.0 MiB at once")
            && run.stderr.contains("--max-document-size"),
        "{}",
        run.stderr
    );
    assert_eq!(run.claim("bomb", "decode")["status"], "unchecked");
}
