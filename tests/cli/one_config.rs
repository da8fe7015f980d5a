//! One configuration for every command, and exit statuses that tell a transient
//! failure from a permanent one: `show`, `pin`, `diff` and `audit` read the
//! `pinaudit.toml` found walking up (its cache and rewrite) from a subdirectory
//! and never leave a `./cache` where they were run; an unpinned URL is a
//! finding, not an incomplete audit; a warm run with the forge down says what
//! it judged from the cache; `--min-severity` trims only what people read.

use std::path::{Path, PathBuf};

use serde_json::json;

use crate::common::forge::{forge_with_readme, good_pin, pin, to_daemon, NAME, README_LINE_TEXT};
use crate::common::run::{run, Run};
use crate::common::scratch::Scratch;
use crate::common::{GitDaemon, Wants};

/// `pinaudit ARGS…` run in `dir` (a subdirectory of the scratch project).
fn run_in(ws: &Scratch, dir: &Path, args: &[&str]) -> Run {
    run(ws.cmd().current_dir(dir).args(args))
}

/// A project whose `pinaudit.toml` names the cache and a rewrite to `daemon`,
/// with an empty subdirectory `docs/notes` to run from.
fn project(daemon: &GitDaemon) -> (Scratch, PathBuf) {
    let ws = Scratch::new();
    ws.write(
        "pinaudit.toml",
        format!(
            "cache = \"project-cache\"\nrewrite = [\"{}\"]\ntimeout = 10\n",
            to_daemon(daemon)
        ),
    );
    let sub = ws.path().join("docs/notes");
    std::fs::create_dir_all(&sub).expect("mkdir");
    (ws, sub)
}

fn assert_no_stray_cache(dir: &Path) {
    assert!(
        !dir.join("cache").exists(),
        "a `cache/` was created in `{}`",
        dir.display()
    );
}

#[test]
fn show_and_pin_from_a_subdirectory_use_the_project_config() {
    let (forge, _repo, c) = forge_with_readme();
    let daemon = GitDaemon::start(forge.path(), Wants::Reachable);
    let (ws, sub) = project(&daemon);
    let url = format!("https://github.com/{NAME}/blob/{c}/README.md#L5");
    let shown = run_in(&ws, &sub, &["show", &url]);
    shown.assert_code(0);
    assert!(shown.stdout.contains(README_LINE_TEXT), "{}", shown.stdout);
    // The configured cache, beside the configuration file, holds the mirror.
    assert!(ws.path().join("project-cache/git").is_dir());

    let branch = format!("https://github.com/{NAME}/blob/main/README.md#L5");
    let pinned = run_in(&ws, &sub, &["pin", &branch, "--value", "2.9"]);
    pinned.assert_code(0);
    assert!(pinned.stdout.contains(&c.to_string()), "{}", pinned.stdout);
    assert_no_stray_cache(&sub);
    assert_no_stray_cache(ws.path());
}

#[test]
fn without_a_cache_key_the_cache_is_beside_the_config_file() {
    let (forge, _repo, c) = forge_with_readme();
    let daemon = GitDaemon::start(forge.path(), Wants::Reachable);
    let ws = Scratch::new();
    ws.write(
        "pinaudit.toml",
        format!("rewrite = [\"{}\"]\n", to_daemon(&daemon)),
    );
    let sub = ws.path().join("sub");
    std::fs::create_dir_all(&sub).expect("mkdir");
    let url = format!("https://github.com/{NAME}/blob/{c}/README.md#L5");
    run_in(&ws, &sub, &["show", &url]).assert_code(0);
    assert!(
        ws.path().join("cache/git").is_dir(),
        "cache/ beside pinaudit.toml"
    );
    assert_no_stray_cache(&sub);
    let shown = run_in(&ws, &sub, &["config"]);
    let expected = format!("{}", ws.path().join("cache").display());
    assert!(shown.stdout.contains(&expected), "{}", shown.stdout);
}

#[test]
fn no_config_ignores_the_project_config_and_uses_the_user_cache() {
    let (forge, _repo, c) = forge_with_readme();
    let daemon = GitDaemon::start(forge.path(), Wants::Reachable);
    let (ws, sub) = project(&daemon);
    let url = format!("https://github.com/{NAME}/blob/{c}/README.md#L5");
    // Without the file there is no rewrite: offline, nothing is cached.
    let r = run_in(&ws, &sub, &["show", "--no-config", "--offline", &url]);
    r.assert_code(2);
    assert!(!ws.path().join("project-cache").exists());
    assert_no_stray_cache(&sub);
    // The rewrite given by hand: the user's cache directory ($HOME/.cache here).
    let rw = to_daemon(&daemon);
    run_in(&ws, &sub, &["show", "--no-config", "--rewrite", &rw, &url]).assert_code(0);
    assert!(ws.path().join(".cache/pinaudit/git").is_dir());
    assert!(!ws.path().join("project-cache").exists());
    assert_no_stray_cache(&sub);
    // An explicit --cache always wins.
    let mine = ws.path().join("mine");
    let mine = mine.to_str().unwrap();
    run_in(&ws, &sub, &["show", "--cache", mine, &url]).assert_code(0);
    assert!(Path::new(mine).join("git").is_dir());
}

#[test]
fn audit_from_a_subdirectory_without_config_creates_no_cache_there() {
    let ws = Scratch::new();
    let (_forge, _repo, c) = forge_with_readme();
    ws.write_json("pins/r.json", &good_pin("r", c));
    let r = run_in(
        &ws,
        &ws.path().join("pins"),
        &["audit", "--offline", "--format", "json", "r.json"],
    );
    r.assert_code(2);
    assert_no_stray_cache(&ws.path().join("pins"));
    assert_no_stray_cache(ws.path());
}

#[test]
fn diff_from_a_subdirectory_takes_fail_on_from_the_config() {
    let ws = Scratch::new();
    let report = |findings: serde_json::Value| {
        json!({
            "schema": "pinaudit/report/v1",
            "tool": {"name": "pinaudit", "version": "0"},
            "generated_at": "1970-01-01T00:00:00Z",
            "summary": {"records": 1, "sources": 0, "claims": 0, "verified_claims": 0,
                "unchecked_sources": 0, "complete": true,
                "findings": {"error": 0, "warning": 1, "note": 0}},
            "records": [],
            "findings": findings,
        })
    };
    ws.write_json("old.json", &report(json!([])));
    let warning = json!([{
        "code": "missing-hash", "severity": "warning", "record": "r", "file": "pins/r.json",
        "source": "readme", "claim": null, "message": "no hash",
        "location": {"repository": null, "revision": null, "path": null, "line": null},
        "evidence": {}, "hint": "hash it", "fingerprint": "0123456789abcdef0123456789abcdef",
        "baseline": false, "ignored": null,
    }]);
    ws.write_json("new.json", &report(warning));
    ws.write("pinaudit.toml", "fail-on = \"warning\"\n");
    let sub = ws.path().join("sub");
    std::fs::create_dir_all(&sub).expect("mkdir");
    let r = run_in(&ws, &sub, &["diff", "../old.json", "../new.json"]);
    r.assert_code(1);
    run_in(
        &ws,
        &sub,
        &["diff", "--no-config", "../old.json", "../new.json"],
    )
    .assert_code(0);
    run_in(
        &ws,
        &sub,
        &["diff", "--fail-on", "never", "../old.json", "../new.json"],
    )
    .assert_code(0);
    assert_no_stray_cache(&sub);
}

/// A pin whose one source names the branch `main`, not a commit.
fn branch_pin() -> serde_json::Value {
    let s = json!({
        "id": "readme",
        "url": format!("https://github.com/{NAME}/blob/main/README.md"),
        "repository": format!("https://github.com/{NAME}"),
        "revision": "main",
        "path": "README.md",
        "sha256": null,
        "commit_time": null,
    });
    pin("branchy", &[s], &[])
}

#[test]
fn one_branch_url_is_a_finding_not_an_incomplete_audit() {
    let (forge, _repo, _c) = forge_with_readme();
    let daemon = GitDaemon::start(forge.path(), Wants::Reachable);
    let ws = Scratch::new();
    let file = ws.write_pin(&branch_pin());
    let rw = to_daemon(&daemon);
    let never = ws.audit(["--rewrite", &rw, "--fail-on", "never", &file]);
    never.assert_code(0);
    assert_eq!(never.summary()["complete"], true);
    assert_eq!(never.source("branchy", "readme")["status"], "unchecked");
    // With the default --fail-on, the finding fails the run as it always did.
    let default = ws.audit(["--rewrite", &rw, &file]);
    default.assert_code(1);
    let f = default.only("unpinned-url");
    assert_eq!(f["severity"], "error");
    assert!(
        f["message"]
            .as_str()
            .unwrap()
            .contains("names a branch or tag (`main`)"),
        "{f}"
    );
    // The text report no longer calls the audit incomplete.
    let text = run(ws
        .cached("audit")
        .args(["--rewrite", &rw, "--fail-on", "never", &file]));
    text.assert_code(0);
    assert!(!text.stdout.contains("audit incomplete"), "{}", text.stdout);
}

#[test]
fn a_warm_run_with_the_forge_stopped_says_what_the_cache_judged() {
    let (forge, _repo, c) = forge_with_readme();
    let daemon = GitDaemon::start(forge.path(), Wants::Reachable);
    let ws = Scratch::new();
    let good = ws.write_pin(&good_pin("good", c));
    let mut wrong = good_pin("wrong", c);
    wrong["claims"][0]["value"] = json!(3.1);
    let wrong = ws.write_pin(&wrong);
    let rw = to_daemon(&daemon);
    ws.audit(["--rewrite", &rw, &good, &wrong]).assert_code(1);
    drop(daemon);

    let text = |args: &[&str]| run(ws.cached("audit").args(["--rewrite", &rw]).args(args));
    for format in ["text", "markdown"] {
        let r = text(&["--format", format, &good]);
        r.assert_code(0);
        assert!(
            r.stdout.contains("1 source(s) judged from the cache of ")
                && r.stdout.contains(": forge unreachable"),
            "{format}:\n{}",
            r.stdout
        );
        // A finding still exits 1, never 2.
        let r = text(&["--format", format, &good, &wrong]);
        r.assert_code(1);
        assert!(
            r.stdout.contains("2 source(s) judged from the cache of "),
            "{}",
            r.stdout
        );
    }
    let github = text(&["--format", "github", &good]);
    github.assert_code(0);
    assert!(
        github
            .stdout
            .lines()
            .any(|l| l.starts_with("::notice title=pinaudit::1 source(s) judged from the cache")),
        "{}",
        github.stdout
    );
    let sarif = text(&["--format", "sarif", &good]);
    sarif.assert_code(0);
    let log: serde_json::Value = serde_json::from_str(&sarif.stdout).expect("SARIF is JSON");
    let invocation = &log["runs"][0]["invocations"][0];
    assert_eq!(invocation["properties"]["staleSources"], 1, "{invocation}");
    let note = invocation["toolExecutionNotifications"][0]["message"]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(
        note.starts_with("1 source(s) judged from the cache of "),
        "{invocation}"
    );
    let json = ws.audit(["--rewrite", &rw, &good]);
    assert_eq!(json.summary()["stale_sources"], 1);
    json.assert_code(0);
}

#[test]
fn min_severity_trims_the_text_report_only() {
    let (forge, _repo, c) = forge_with_readme();
    let ws = Scratch::new();
    let mut p = good_pin("r", c);
    p["sources"][0]["sha256"] = serde_json::Value::Null; // missing-hash, a warning
    let file = ws.write_pin(&p);
    let rw = forge.file_rewrite();
    let base = ["--rewrite", rw.as_str(), "--allow-local", "--no-upstream"];
    let full = run(ws.cached("audit").args(base).arg(&file));
    assert!(
        full.stdout.contains("warning[missing-hash]"),
        "{}",
        full.stdout
    );
    let trimmed = run(ws
        .cached("audit")
        .args(base)
        .args(["--min-severity", "error", &file]));
    assert!(
        !trimmed.stdout.contains("missing-hash"),
        "{}",
        trimmed.stdout
    );
    assert!(
        trimmed
            .stdout
            .contains("1 finding(s) below error not shown"),
        "{}",
        trimmed.stdout
    );
    // The counts and the exit status are the full report's.
    assert!(
        trimmed.stdout.contains("1 warning(s)"),
        "{}",
        trimmed.stdout
    );
    assert_eq!(trimmed.code(), full.code());
    let github = run(ws.cached("audit").args(base).args([
        "--format",
        "github",
        "--min-severity",
        "error",
        &file,
    ]));
    assert!(!github.stdout.contains("::warning"), "{}", github.stdout);
    // JSON and SARIF stay complete.
    let json = run(ws.cached("audit").args(base).args([
        "--format",
        "json",
        "--min-severity",
        "error",
        &file,
    ]));
    json.assert_has("missing-hash");
    let sarif = run(ws.cached("audit").args(base).args([
        "--format",
        "sarif",
        "--min-severity",
        "error",
        &file,
    ]));
    assert!(sarif.stdout.contains("missing-hash"));
}
