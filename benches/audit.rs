//! Speed and memory of an audit, as ratios against baselines run in the same process.
//!
//! Absolute times mean little on a shared 2-core machine; ratios against work of
//! the same size done by a well-known tool in the same run do. Run with
//! `cargo bench --bench audit` (set `PINAUDIT_BENCH_DOCS` / `PINAUDIT_BENCH_LINES` to
//! resize). It prints, for a repository of DOCS documents of LINES lines each, cited by
//! one pin file with 10 claims per document:
//!
//! - cold audit (empty cache) / `git clone --mirror` of the same repository;
//! - warm re-check (nothing changed upstream) / cold audit;
//! - `--offline` audit / cold audit;
//! - peak RSS of the cold audit / peak RSS of `git clone --mirror`, and / total
//!   document bytes;
//! - matcher over every line of the documents / `str::contains` over the same lines.

use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

const RUNS: usize = 5;

fn env_usize(key: &str, default: usize) -> usize {
    std::env::var(key)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Runs a command to completion; returns wall time and the child's peak RSS in KiB.
fn measure(cmd: &mut Command) -> (Duration, i64) {
    let start = Instant::now();
    let child = cmd
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn");
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: rusage is plain data, zeroed is a valid value; wait4 fills it for our child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let rc = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(rc, pid, "wait4 failed");
    std::mem::forget(child); // already reaped by wait4
    (start.elapsed(), usage.ru_maxrss)
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn git(dir: &Path, args: &[&str]) {
    let ok = Command::new("git")
        .current_dir(dir)
        .args(args)
        .env("GIT_AUTHOR_DATE", "2026-08-07T15:45:04Z")
        .env("GIT_COMMITTER_DATE", "2026-08-07T15:45:04Z")
        .status()
        .expect("git")
        .success();
    assert!(ok, "git {args:?} failed");
}

fn main() {
    let docs = env_usize("PINAUDIT_BENCH_DOCS", 20);
    let lines = env_usize("PINAUDIT_BENCH_LINES", 20_000);
    let bin = env!("CARGO_BIN_EXE_pinaudit");
    let tmp = tempfile::tempdir().expect("tempdir");
    let work = tmp.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    git(&work, &["init", "-q", "-b", "main"]);
    git(&work, &["config", "user.name", "bench"]);
    git(&work, &["config", "user.email", "bench@example.invalid"]);

    // Documents: markdown tables, a figure on every line.
    let mut all_lines: Vec<String> = Vec::new();
    let mut total_bytes = 0usize;
    for d in 0..docs {
        let mut text = String::new();
        for l in 0..lines {
            let _ = writeln!(
                text,
                "| run {d}-{l} | {}.{} tok/s | {} ms |",
                l % 997,
                l % 10,
                (l * 7) % 1000
            );
        }
        total_bytes += text.len();
        all_lines.extend(text.lines().map(str::to_string));
        std::fs::write(work.join(format!("doc{d}.md")), text).unwrap();
    }
    git(&work, &["add", "-A"]);
    git(&work, &["commit", "-q", "-m", "bench"]);
    let commit = String::from_utf8(
        Command::new("git")
            .current_dir(&work)
            .args(["rev-parse", "HEAD"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap()
    .trim()
    .to_string();
    let srv = tmp.path().join("srv/bench");
    std::fs::create_dir_all(&srv).unwrap();
    git(
        tmp.path(),
        &[
            "clone",
            "-q",
            "--bare",
            work.to_str().unwrap(),
            srv.join("repo.git").to_str().unwrap(),
        ],
    );

    // One pin file: every document a source, ten claims each.
    let mut sources = Vec::new();
    let mut claims = Vec::new();
    for d in 0..docs {
        let path = format!("doc{d}.md");
        let sha = {
            use sha2::Digest;
            let bytes = std::fs::read(work.join(&path)).unwrap();
            format!("{:x}", sha2::Sha256::digest(&bytes))
        };
        sources.push(serde_json::json!({
            "id": format!("doc{d}"),
            "url": format!("https://github.com/bench/repo/blob/{commit}/{path}"),
            "sha256": sha,
        }));
        for k in 0..10 {
            let l = (k * lines / 10).max(1); // 1-based line l is row l-1
            let row = l - 1;
            claims.push(serde_json::json!({
                "label": format!("doc{d} claim {k}"),
                "source": format!("doc{d}"),
                "lines": [l, l],
                "value": format!("{}.{}", row % 997, row % 10).parse::<f64>().unwrap(),
                "unit": "tok/s",
            }));
        }
    }
    let pins = tmp.path().join("pins");
    std::fs::create_dir_all(&pins).unwrap();
    let pin = serde_json::json!({
        "schema": "pinaudit/pins/v1", "id": "bench", "sources": sources, "claims": claims, "artifacts": []
    });
    std::fs::write(pins.join("bench.json"), pin.to_string()).unwrap();

    let rewrite = format!(
        "https://github.com/=file://{}/",
        tmp.path().join("srv").display()
    );
    let audit = |cache: &Path, extra: &[&str]| {
        let mut c = Command::new(bin);
        c.args([
            "audit",
            "--quiet",
            "--format",
            "json",
            "--allow-local",
            "--rewrite",
            &rewrite,
            "--cache",
        ])
        .arg(cache)
        .arg(&pins)
        .args(extra);
        c
    };

    let mut clone_t = Vec::new();
    let mut clone_rss = 0;
    let mut cold_t = Vec::new();
    let mut cold_rss = 0;
    let mut warm_t = Vec::new();
    let mut offline_t = Vec::new();
    for run in 0..RUNS {
        let target = tmp.path().join(format!("clone{run}.git"));
        let (t, rss) = measure(
            Command::new("git")
                .args(["clone", "-q", "--mirror"])
                .arg(format!("file://{}", srv.join("repo.git").display()))
                .arg(&target),
        );
        clone_t.push(t);
        clone_rss = clone_rss.max(rss);
        let cache = tmp.path().join(format!("cache{run}"));
        let (t, rss) = measure(&mut audit(&cache, &[]));
        cold_t.push(t);
        cold_rss = cold_rss.max(rss);
        warm_t.push(measure(&mut audit(&cache, &[])).0);
        offline_t.push(measure(&mut audit(&cache, &["--offline"])).0);
    }
    // Sanity: the audit verified every claim (so the timings measure real work).
    let out = audit(&tmp.path().join("cache0"), &["--offline"])
        .output()
        .unwrap();
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("report");
    assert_eq!(
        report["summary"]["verified_claims"],
        docs * 10,
        "{}",
        report["summary"]
    );

    // Matcher against a plain substring search over the same lines.
    let expected = pinaudit::matcher::Expected {
        value: "2.9",
        unit: Some("tok/s"),
        correct: None,
        total: None,
        label: None,
        metric: None,
        statistic: None,
    };
    let t0 = Instant::now();
    let naive = all_lines.iter().filter(|l| l.contains("2.9")).count();
    let naive_t = t0.elapsed();
    let t0 = Instant::now();
    let matched = all_lines
        .iter()
        .filter(|l| pinaudit::matcher::find(l, &expected).is_some())
        .count();
    let matcher_t = t0.elapsed();
    // The same, as the claim check reads a document: its structure once, then each
    // line in its context (the table it belongs to, its cells' headers).
    let t0 = Instant::now();
    let mut in_context = 0;
    for doc in all_lines.chunks(lines.max(1)) {
        let refs: Vec<&str> = doc.iter().map(String::as_str).collect();
        let layout = pinaudit::matcher::Layout::new(&refs);
        let document = pinaudit::matcher::Document::new(&refs, &layout);
        in_context += (0..refs.len())
            .filter(|&i| document.cited(i..i + 1, &expected).found.is_some())
            .count();
    }
    let structured_t = t0.elapsed();

    let (clone, cold, warm, offline) = (
        median(clone_t),
        median(cold_t),
        median(warm_t),
        median(offline_t),
    );
    let ratio = |a: Duration, b: Duration| a.as_secs_f64() / b.as_secs_f64().max(1e-9);
    println!(
        "pinaudit bench: {docs} documents x {lines} lines ({:.1} MiB), {} claims, median of {RUNS}",
        total_bytes as f64 / 1048576.0,
        docs * 10
    );
    println!(
        "  git clone --mirror          {:>8.1} ms  (baseline)",
        clone.as_secs_f64() * 1e3
    );
    println!(
        "  cold audit                  {:>8.1} ms  = {:.2} x git clone",
        cold.as_secs_f64() * 1e3,
        ratio(cold, clone)
    );
    println!(
        "  warm re-check               {:>8.1} ms  = {:.2} x cold audit",
        warm.as_secs_f64() * 1e3,
        ratio(warm, cold)
    );
    println!(
        "  offline audit               {:>8.1} ms  = {:.2} x cold audit",
        offline.as_secs_f64() * 1e3,
        ratio(offline, cold)
    );
    println!("  peak RSS cold audit         {:>8} KiB = {:.2} x git clone ({} KiB), {:.2} x document bytes", cold_rss, cold_rss as f64 / clone_rss.max(1) as f64, clone_rss, cold_rss as f64 * 1024.0 / total_bytes as f64);
    println!("  matcher over all lines      {:>8.1} ms  = {:.1} x str::contains ({:.1} ms); {matched} matches vs {naive} substring hits", matcher_t.as_secs_f64() * 1e3, ratio(matcher_t, naive_t), naive_t.as_secs_f64() * 1e3);
    println!(
        "  matcher with structure      {:>8.1} ms  = {:.1} x str::contains; {in_context} matches",
        structured_t.as_secs_f64() * 1e3,
        ratio(structured_t, naive_t)
    );
}
