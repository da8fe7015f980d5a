//! The demo a newcomer runs first (README, "Try it"): records citing the small
//! repository shipped in `demo/forge/`, audited with no network at all. These
//! tests run the README's own command on a copy of `demo/`, so the demo keeps
//! showing verified figures and every main kind of finding as the code moves.

use std::path::Path;

use crate::common::run::run;
use crate::common::scratch::Scratch;

/// The command the README gives first, after `pinaudit`.
const DEMO_ARGS: [&str; 4] = ["audit", "--config", "demo/pinaudit.toml", "--allow-local"];

pub(crate) fn repo_root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Copies `from` into `to`, recursively (the demo is a few small files).
pub(crate) fn copy_dir(from: &Path, to: &Path) {
    for entry in walkdir::WalkDir::new(from) {
        let entry = entry.expect("walk demo/");
        let rel = entry.path().strip_prefix(from).expect("under demo/");
        // A cache left by running the demo in a checkout is not part of it.
        if rel.starts_with("cache") {
            continue;
        }
        let dest = to.join(rel);
        if entry.file_type().is_dir() {
            std::fs::create_dir_all(&dest).expect("mkdir");
        } else {
            std::fs::copy(entry.path(), &dest).expect("copy");
        }
    }
}

/// A scratch directory holding a copy of `demo/`, as a fresh clone has it.
fn demo_checkout() -> Scratch {
    let ws = Scratch::new();
    copy_dir(&repo_root().join("demo"), &ws.path().join("demo"));
    ws
}

/// The README's first command.
fn readme_command() -> String {
    format!("pinaudit {}", DEMO_ARGS.join(" "))
}

#[test]
fn the_readme_starts_with_the_demo_command() {
    let readme = std::fs::read_to_string(repo_root().join("README.md")).expect("README.md");
    let first_block = readme
        .split("```sh\n")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .expect("a sh block in the README");
    assert!(
        first_block.contains(&readme_command()),
        "the README's first command block is not the demo:\n{first_block}"
    );
}

#[test]
fn the_demo_verifies_figures_and_shows_each_main_kind_of_finding_offline() {
    let ws = demo_checkout();
    // The README's command, as a user types it, in the text report; with the
    // archives left as the user's environment leaves them (the demo's own
    // configuration keeps it off the network).
    let text = run(ws.cmd().env_remove("PINAUDIT_ARCHIVE").args(DEMO_ARGS));
    assert_eq!(text.code(), 1, "errors among the findings: {}", text.stderr);
    // Problems first; the verified figures counted in one line a record.
    assert!(
        text.stdout.contains("claims: 4 (3 verified, 1 rounded)"),
        "{}",
        text.stdout
    );
    assert!(!text.stdout.contains("swhid:"), "{}", text.stdout);
    // `-v` lists them, with each source's SWHID.
    let mut verbose: Vec<&str> = DEMO_ARGS.to_vec();
    verbose.push("-v");
    let all = run(ws.cmd().env_remove("PINAUDIT_ARCHIVE").args(verbose));
    assert!(
        all.stdout.contains("verified  decode  41.3 tok/s") && all.stdout.contains("swhid:"),
        "{}",
        all.stdout
    );
    assert!(
        text.stdout.contains("error[hash-mismatch]"),
        "{}",
        text.stdout
    );
    // The same run as JSON, warm now, to check every verdict.
    let run = ws.run(DEMO_ARGS.iter().chain(&["--format", "json"]));
    let summary = run.summary();
    assert_eq!(summary["records"], 3, "{summary:#}");
    assert!(
        summary["verified_claims"].as_u64().unwrap_or(0) >= 5,
        "{summary:#}"
    );
    for (record, label) in [
        ("bench-v1", "decode"),
        ("bench-v1", "prefill"),
        ("bench-v1", "GSM8K subset"),
    ] {
        let c = run.claim(record, label);
        assert_eq!(c["status"], "verified", "{c:#}");
    }
    for code in [
        "hash-mismatch",
        "value-missing",
        "value-shifted",
        "line-out-of-range",
        "path-missing",
        "revision-missing",
        "revision-unreachable",
        "commit-time-mismatch",
        "missing-hash",
        "unpinned-url",
        "uncited-claim",
        "inconsistent-value",
        "unpinned-weights",
        "unpinned-runtime",
        "upstream-changed",
        "value-superseded",
    ] {
        run.assert_has(code);
    }
    // The hash mismatch says why: the publisher hashed a CRLF checkout.
    let hash = run.only("hash-mismatch");
    assert_eq!(hash["evidence"]["matching_variant"], "crlf", "{hash:#}");
    // The cache went where the configuration says, beside it.
    assert!(ws.path().join("demo/cache/git").is_dir());
    assert!(!ws.path().join("cache").exists());
}

#[test]
fn the_demo_runs_the_same_from_any_folder() {
    // Paths in a configuration file (inputs, cache, a rewrite to a folder) are
    // relative to the file, not to where pinaudit runs.
    let ws = demo_checkout();
    let top = ws.run(DEMO_ARGS.iter().chain(&["--format", "json"]));
    let elsewhere = ws.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).expect("mkdir");
    let config = ws.path().join("demo/pinaudit.toml");
    let config = config.to_str().expect("path");
    let away = run(ws.cmd().current_dir(&elsewhere).args([
        "audit",
        "--config",
        config,
        "--allow-local",
        "--format",
        "json",
    ]));
    assert_eq!(away.code(), top.code(), "{}", away.stderr);
    assert_eq!(
        away.summary()["verified_claims"],
        top.summary()["verified_claims"]
    );
    assert_eq!(away.summary()["unchecked_sources"], 1, "{}", away.stderr);
    assert!(!elsewhere.join("cache").exists());
}

/// `demo/make-forge.sh` rebuilds the shipped repository with the same commit
/// ids the demo's records pin.
#[test]
fn the_demo_forge_rebuilds_to_the_commits_the_records_pin() {
    let ws = Scratch::new();
    let demo = ws.path().join("demo");
    std::fs::create_dir_all(&demo).expect("mkdir");
    std::fs::copy(
        repo_root().join("demo/make-forge.sh"),
        demo.join("make-forge.sh"),
    )
    .expect("copy the script");
    let out = std::process::Command::new("bash")
        .arg(demo.join("make-forge.sh"))
        .output()
        .expect("bash runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for r in ["refs/heads/main", "refs/tags/v1", "refs/pull/7/head"] {
        let rel = format!("demo/forge/pinaudit-demo/bench.git/{r}");
        let built = std::fs::read_to_string(ws.path().join(&rel)).expect("built ref");
        let shipped = std::fs::read_to_string(repo_root().join(&rel)).expect("shipped ref");
        assert_eq!(built, shipped, "{r}");
    }
}

/// A report that cannot be written to standard output (a full disk under
/// `> report.json`: `/dev/full`) is an error, exit 2, not a truncated report
/// with the audit's status (a closed pipe stays the reader's choice:
/// `formats::output_into_a_closed_pipe_does_not_panic`).
#[test]
fn a_report_standard_output_cannot_take_is_an_error() {
    let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") else {
        eprintln!("no /dev/full here; nothing to check");
        return;
    };
    let ws = demo_checkout();
    let out = std::process::Command::new(assert_cmd::cargo::cargo_bin("pinaudit"))
        .current_dir(ws.path())
        .env("HOME", ws.path())
        .env_remove("PINAUDIT_CACHE")
        .env_remove("XDG_CACHE_HOME")
        .env("PINAUDIT_ARCHIVE", "none")
        .env("PINAUDIT_CACHE_KEY", "pinaudit tests")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .args(DEMO_ARGS)
        .args(["--format", "json"])
        .stdout(full)
        .output()
        .expect("runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("cannot write the report to standard output"),
        "{stderr}"
    );
}
