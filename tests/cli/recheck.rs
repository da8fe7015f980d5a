//! Scheduled re-checks: stable fingerprints across upstream moves,
//! `pinaudit diff`, `audit --baseline`, the config file, input walking that
//! respects ignore rules, and exit status 3 for setup errors. End to end over
//! `git daemon` on loopback.

use std::collections::BTreeSet;

use serde_json::{json, Value};

use crate::common::forge::{forge_with_readme, good_pin, to_daemon, README, T0};
use crate::common::run::{run, Run};
use crate::common::scratch::Scratch;
use crate::common::{GitDaemon, Wants};

/// Every finding's `code` and `fingerprint`.
fn fingerprints(r: &Run) -> BTreeSet<(String, String)> {
    r.findings()
        .iter()
        .map(|f| {
            let fp = f["fingerprint"]
                .as_str()
                .expect("a fingerprint")
                .to_string();
            assert_eq!(fp.len(), 32, "{f:#}");
            (f["code"].as_str().unwrap().to_string(), fp)
        })
        .collect()
}

fn codes_of(list: &Value) -> Vec<String> {
    list.as_array()
        .expect("a list")
        .iter()
        .map(|f| f["code"].as_str().unwrap().to_string())
        .collect()
}

fn diff(ws: &Scratch, old: &str, new: &str, extra: &[&str]) -> Run {
    run(ws.cmd().args(["diff", old, new]).args(extra))
}

/// A README that moved on at the head in a line the claim does not cite.
fn readme_with_footer() -> String {
    format!("{README}\nRe-run weekly.\n")
}

#[test]
fn fingerprints_survive_unrelated_pushes_and_diff_shows_only_the_superseded_value() {
    let (forge, repo, c) = forge_with_readme();
    // Drift already at the first audit: a note whose message names the head.
    repo.commit(
        &[("README.md", readme_with_footer().as_str())],
        "footer",
        T0 + 60,
    );
    let daemon = GitDaemon::start(forge.path(), Wants::Reachable);
    let ws = Scratch::new();
    let mut pin = good_pin("r", c);
    pin["sources"][0]["sha256"] = json!("0".repeat(64));
    let file = ws.write_pin(&pin);
    let rw = to_daemon(&daemon);

    let first = ws.audit(["--rewrite", &rw, "--output", "one.json", &file]);
    first.assert_code(1);
    let one: Value =
        serde_json::from_str(&std::fs::read_to_string(ws.path().join("one.json")).unwrap())
            .unwrap();
    let first_codes: Vec<_> = one["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["code"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(first_codes, ["hash-mismatch", "upstream-changed"]);
    for f in one["findings"].as_array().unwrap() {
        assert_eq!(f["baseline"], false);
        assert_eq!(f["ignored"], Value::Null);
    }

    // An unrelated push: the head moves, the message of `upstream-changed` with it.
    repo.commit(&[("NOTES.md", "unrelated\n")], "notes", T0 + 120);
    let second = ws.audit(["--rewrite", &rw, "--output", "two.json", &file]);
    second.assert_code(1);
    let two: Value =
        serde_json::from_str(&std::fs::read_to_string(ws.path().join("two.json")).unwrap())
            .unwrap();
    let up = |r: &Value| {
        r["findings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["code"] == "upstream-changed")
            .cloned()
            .unwrap()
    };
    assert_ne!(
        up(&one)["location"]["revision"],
        up(&two)["location"]["revision"],
        "the head moved"
    );
    let fps = |r: &Value| -> Vec<Value> {
        r["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["fingerprint"].clone())
            .collect()
    };
    assert_eq!(fps(&one), fps(&two), "every fingerprint is unchanged");

    let d = diff(&ws, "one.json", "two.json", &["--format", "json"]);
    d.assert_code(0);
    let d: Value = serde_json::from_str(&d.stdout).unwrap();
    assert_eq!(d["schema"], "pinaudit/diff/v1");
    assert_eq!(d["new"], json!([]));
    assert_eq!(d["resolved"], json!([]));
    assert_eq!(
        codes_of(&d["unchanged"]),
        ["hash-mismatch", "upstream-changed"]
    );

    // The cited line changes upstream: exactly one new finding.
    let corrected = readme_with_footer().replace("2.9 tok/s", "3.1 tok/s");
    repo.commit(&[("README.md", corrected.as_str())], "correct", T0 + 180);
    let third = ws.audit(["--rewrite", &rw, "--output", "three.json", &file]);
    third.assert_code(1);
    let d = diff(&ws, "two.json", "three.json", &["--format", "json"]);
    // A new warning does not reach the default `--fail-on error`.
    d.assert_code(0);
    let d: Value = serde_json::from_str(&d.stdout).unwrap();
    assert_eq!(codes_of(&d["new"]), ["value-superseded"]);
    assert_eq!(d["resolved"], json!([]));
    assert_eq!(
        codes_of(&d["unchanged"]),
        ["hash-mismatch", "upstream-changed"]
    );
    let failing = diff(&ws, "two.json", "three.json", &["--fail-on", "warning"]);
    failing.assert_code(1);
    assert!(
        failing.stdout.contains("1 new, 0 resolved, 2 unchanged"),
        "{}",
        failing.stdout
    );
}

#[test]
fn fingerprints_are_the_same_on_a_cold_and_a_warm_cache() {
    let (forge, _repo, c) = forge_with_readme();
    let daemon = GitDaemon::start(forge.path(), Wants::Reachable);
    let ws = Scratch::new();
    let mut pin = good_pin("r", c);
    pin["sources"][0]["commit_time"] = json!("2020-01-01T00:00:00Z");
    let file = ws.write_pin(&pin);
    let rw = to_daemon(&daemon);
    let cold = ws.audit(["--rewrite", &rw, &file]);
    let warm = ws.audit(["--rewrite", &rw, &file]);
    assert!(!fingerprints(&cold).is_empty());
    assert_eq!(fingerprints(&cold), fingerprints(&warm));
}

#[test]
fn a_report_without_fingerprints_gets_the_same_ones_computed() {
    let (forge, repo, c) = forge_with_readme();
    repo.commit(
        &[(
            "README.md",
            readme_with_footer()
                .replace("2.9 tok/s", "3.1 tok/s")
                .as_str(),
        )],
        "correct",
        T0 + 60,
    );
    let daemon = GitDaemon::start(forge.path(), Wants::Reachable);
    let ws = Scratch::new();
    let file = ws.write_pin(&good_pin("r", c));
    let r = ws.audit(["--rewrite", &to_daemon(&daemon), &file]);
    let mut old = r.report();
    for f in old["findings"].as_array_mut().unwrap() {
        let f = f.as_object_mut().unwrap();
        f.remove("fingerprint");
        f.remove("baseline");
        f.remove("ignored");
    }
    ws.write_json("old.json", &old);
    ws.write_json("new.json", &r.report());
    let d = diff(&ws, "old.json", "new.json", &["--format", "json"]);
    d.assert_code(0);
    let d: Value = serde_json::from_str(&d.stdout).unwrap();
    assert_eq!(d["new"], json!([]), "{d:#}");
    assert_eq!(
        codes_of(&d["unchanged"]),
        ["upstream-changed", "value-superseded"]
    );
}

#[test]
fn diff_refuses_what_is_not_a_report() {
    let ws = Scratch::new();
    ws.write(
        "a.json",
        "{\"schema\": \"pinaudit/pins/v1\", \"findings\": []}",
    );
    ws.write("b.json", "not json");
    let r = diff(&ws, "a.json", "missing.json", &[]);
    r.assert_code(2);
    assert!(
        r.stderr.contains("pinaudit/pins/v1") || r.stderr.contains("missing.json"),
        "{}",
        r.stderr
    );
    let r = diff(&ws, "b.json", "b.json", &[]);
    r.assert_code(2);
    assert!(
        r.stderr.contains("`b.json` is not a pinaudit JSON report"),
        "{}",
        r.stderr
    );
    let r = diff(&ws, "a.json", "a.json", &[]);
    r.assert_code(2);
    assert!(
        r.stderr.contains("has schema `pinaudit/pins/v1`"),
        "{}",
        r.stderr
    );
}

#[test]
fn baseline_findings_do_not_count_but_a_new_error_does() {
    let (forge, _repo, c) = forge_with_readme();
    let daemon = GitDaemon::start(forge.path(), Wants::Reachable);
    let ws = Scratch::new();
    let mut pin = good_pin("r", c);
    pin["sources"][0]["sha256"] = json!("0".repeat(64));
    let file = ws.write_pin(&pin);
    let rw = to_daemon(&daemon);

    let first = ws.audit(["--rewrite", &rw, "--output", "base.json", &file]);
    first.assert_code(1);

    let again = ws.audit(["--rewrite", &rw, "--baseline", "base.json", &file]);
    again.assert_code(0);
    let f = again.only("hash-mismatch");
    assert_eq!(f["baseline"], true);
    assert_eq!(again.summary()["baseline_findings"], 1);
    assert_eq!(again.summary()["ignored_findings"], 0);

    // One new error: the claim's value is nowhere in the document.
    pin["claims"][0]["value"] = json!(7.7);
    ws.write_pin(&pin);
    let worse = ws.audit(["--rewrite", &rw, "--baseline", "base.json", &file]);
    worse.assert_code(1);
    assert_eq!(worse.only("hash-mismatch")["baseline"], true);
    let new: Vec<_> = worse
        .findings()
        .into_iter()
        .filter(|f| f["baseline"] == false)
        .map(|f| f["code"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(new, ["value-missing"]);
}

#[test]
fn an_unreadable_baseline_is_a_setup_error() {
    let ws = Scratch::new();
    let file = ws.write_pin(&good_pin("r", git2::Oid::zero()));
    let r = ws.audit_offline(["--baseline", "nope.json", &file]);
    r.assert_code(3);
    assert!(
        r.stderr.contains("--baseline") && r.stderr.contains("nope.json"),
        "{}",
        r.stderr
    );
}

#[test]
fn usage_errors_exit_3_and_help_exits_0() {
    let ws = Scratch::new();
    ws.run(["audit", "--no-such-flag"]).assert_code(3);
    ws.run(["audit", "--fail-on", "sometimes"]).assert_code(3);
    ws.run(["frobnicate"]).assert_code(3);
    ws.run(["--help"]).assert_code(0);
    ws.run(["--version"]).assert_code(0);
    let help = ws.run(["audit", "--help"]);
    help.assert_code(0);
    let words = help.stdout.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        words.contains("3 usage or configuration error"),
        "{}",
        help.stdout
    );
}

// --- `pinaudit diff` output, whole ---------------------------------------------

/// A finding as an older pinaudit wrote it (no fingerprint).
fn old_finding(
    code: &str,
    severity: &str,
    record: &str,
    claim: Option<&str>,
    message: &str,
) -> Value {
    json!({
        "code": code, "severity": severity, "record": record, "file": format!("pins/{record}.json"),
        "source": "readme", "claim": claim, "message": message,
        "location": {"repository": "https://github.com/acme/bench", "revision": "c".repeat(40), "path": "README.md", "line": 5},
        "evidence": {}, "hint": "see `pinaudit explain`"
    })
}

fn report_of(findings: Vec<Value>) -> Value {
    let source = json!({"id": "readme", "url": null, "repository": "https://github.com/acme/bench",
        "revision": "c".repeat(40), "path": "README.md", "status": "checked",
        "sha256": {"expected": null, "actual": null}, "git_blob": null, "commit_time": null, "upstream": null});
    let claim = |label: &str, line: u32| {
        json!({"label": label, "source": "readme", "lines": [line, line],
        "value": 2.9, "unit": "tokens/s", "status": "verified", "found_line": line, "line_text": null})
    };
    json!({
        "schema": "pinaudit/report/v1",
        "tool": {"name": "pinaudit", "version": "0.0.9"},
        "generated_at": "2026-01-01T00:00:00Z",
        "records": [
            {"id": "alpha", "file": "pins/alpha.json", "sources": [source.clone()], "claims": [claim("decode", 5)]},
            {"id": "beta", "file": "pins/beta.json", "sources": [source], "claims": [claim("prefill", 7)]}
        ],
        "findings": findings,
    })
}

fn snapshot_pair(ws: &Scratch) {
    let old = report_of(vec![
        old_finding(
            "upstream-changed",
            "note",
            "alpha",
            Some("decode"),
            "lines changed at head `aaaaaaa`",
        ),
        old_finding(
            "missing-hash",
            "warning",
            "beta",
            None,
            "source `readme` has no sha256",
        ),
    ]);
    let new = report_of(vec![
        old_finding(
            "upstream-changed",
            "note",
            "alpha",
            Some("decode"),
            "lines changed at head `bbbbbbb`",
        ),
        old_finding(
            "value-superseded",
            "warning",
            "alpha",
            Some("decode"),
            "the head now says `3.1` on line 5",
        ),
        old_finding(
            "value-missing",
            "error",
            "beta",
            Some("prefill"),
            "`2.9` is nowhere in `README.md`",
        ),
    ]);
    ws.write_json("old.json", &old);
    ws.write_json("new.json", &new);
}

#[test]
fn diff_text_snapshot() {
    let ws = Scratch::new();
    snapshot_pair(&ws);
    let r = diff(
        &ws,
        "old.json",
        "new.json",
        &["--format", "text", "--color", "never"],
    );
    r.assert_code(1);
    insta::assert_snapshot!("diff_text", r.stdout);
}

#[test]
fn diff_markdown_snapshot() {
    let ws = Scratch::new();
    snapshot_pair(&ws);
    let r = diff(&ws, "old.json", "new.json", &["--format", "markdown"]);
    r.assert_code(1);
    insta::assert_snapshot!("diff_markdown", r.stdout);
}

#[test]
fn diff_json_snapshot() {
    let ws = Scratch::new();
    snapshot_pair(&ws);
    let r = diff(&ws, "old.json", "new.json", &["--format", "json"]);
    r.assert_code(1);
    let version = format!("\"version\": \"{}\"", env!("CARGO_PKG_VERSION"));
    insta::assert_snapshot!(
        "diff_json",
        r.stdout.replace(&version, "\"version\": \"[version]\"")
    );
}

#[test]
fn diff_text_colours_only_when_asked() {
    let ws = Scratch::new();
    snapshot_pair(&ws);
    let plain = diff(&ws, "old.json", "new.json", &[]);
    assert!(!plain.stdout.contains('\x1b'), "not a terminal: no colour");
    let forced = run(ws
        .cmd()
        .env("CLICOLOR_FORCE", "1")
        .args(["diff", "old.json", "new.json"]));
    assert!(
        forced.stdout.contains('\x1b'),
        "CLICOLOR_FORCE: {}",
        forced.stdout
    );
    let always = diff(&ws, "old.json", "new.json", &["--color", "always"]);
    assert!(always.stdout.contains("\x1b["), "{}", always.stdout);
    let never = run(ws
        .cmd()
        .env("CLICOLOR_FORCE", "1")
        .args(["diff", "old.json", "new.json", "--color", "never"]));
    assert!(!never.stdout.contains('\x1b'));
}

// --- pinaudit.toml -------------------------------------------------------------

/// A pin of the README whose recorded sha256 is wrong: one `hash-mismatch` error.
fn mismatching_pin(c: git2::Oid) -> Value {
    let mut pin = good_pin("r", c);
    pin["sources"][0]["sha256"] = json!("0".repeat(64));
    pin
}

#[test]
fn an_ignore_with_a_reason_turns_exit_1_into_0_and_stays_in_the_report() {
    let (forge, _repo, c) = forge_with_readme();
    let daemon = GitDaemon::start(forge.path(), Wants::Reachable);
    let ws = Scratch::new();
    let file = ws.write_pin(&mismatching_pin(c));
    let rw = to_daemon(&daemon);
    ws.audit(["--rewrite", &rw, &file]).assert_code(1);

    ws.write(
        "pinaudit.toml",
        "[[ignore]]\ncode = \"hash-mismatch\"\nrecord = \"r\"\nsource = \"readme\"\nreason = \"the publisher hashed the CRLF checkout\"\n",
    );
    let r = ws.audit(["--rewrite", &rw, &file]);
    r.assert_code(0);
    assert_eq!(
        r.only("hash-mismatch")["ignored"],
        json!({"reason": "the publisher hashed the CRLF checkout"})
    );
    assert_eq!(r.summary()["ignored_findings"], 1);
    let text = ws.run(["audit", "--rewrite", &rw, "--cache", "cache", &file]);
    assert!(
        text.stdout
            .contains("(ignored: the publisher hashed the CRLF checkout)"),
        "{}",
        text.stdout
    );
    assert!(
        text.stdout
            .contains("0 baseline finding(s), 1 ignored finding(s)"),
        "{}",
        text.stdout
    );
    let md = ws.run([
        "audit",
        "--rewrite",
        &rw,
        "--cache",
        "cache",
        "--format",
        "markdown",
        &file,
    ]);
    md.assert_code(0);
    assert!(
        md.stdout.starts_with("## pinaudit: ✅ clean"),
        "{}",
        md.stdout
    );
    assert!(
        md.stdout
            .contains("_(ignored: the publisher hashed the CRLF checkout)_"),
        "{}",
        md.stdout
    );
    // `--no-config` sees the finding again.
    ws.audit(["--no-config", "--rewrite", &rw, &file])
        .assert_code(1);
}

#[test]
fn the_config_file_sets_the_fetch_budgets_and_flags_win() {
    let (forge, repo, _) = forge_with_readme();
    // About 2.5 MiB that does not compress.
    let noise = crate::common::forge::incompressible_text(2_600_000);
    let c = repo.commit(
        &[("README.md", README), ("noise.txt", noise.as_str())],
        "add noise",
        T0 + 60,
    );
    let daemon = GitDaemon::start(forge.path(), Wants::Reachable);
    let ws = Scratch::new();
    let file = ws.write_pin(&crate::common::forge::readme_pin(
        "r",
        crate::common::forge::NAME,
        c,
        &crate::common::forge::sha256_hex(README),
        "2023-11-14T22:14:20Z",
    ));
    let rw = to_daemon(&daemon);
    ws.write("pinaudit.toml", "max-fetch-mib = 1\n");
    let r = ws.audit(["--rewrite", &rw, &file]);
    let s = r.source("r", "readme");
    assert_eq!(s["status"], "unchecked", "{s:#}");
    let reason = s["reason"].as_str().unwrap_or_default();
    assert!(reason.contains("--max-fetch-mib"), "{reason}");
    // A flag wins over the file.
    let r = ws.audit(["--rewrite", &rw, "--max-fetch-mib", "64", &file]);
    assert_eq!(r.source("r", "readme")["status"], "checked");
    r.assert_code(0);

    let shown = ws.run(["config"]);
    shown.assert_code(0);
    for line in [
        "max-fetch-mib = 1  # pinaudit.toml",
        "max-refs-mib = 32  # default",
        "deadline = ",
    ] {
        assert!(shown.stdout.contains(line), "{line}\n{}", shown.stdout);
    }
    // Out of the flag's range: a configuration error naming the key.
    ws.write("pinaudit.toml", "max-refs-mib = 0\n");
    let bad = ws.audit(["--rewrite", &rw, &file]);
    bad.assert_code(3);
    assert!(bad.stderr.contains("max-refs-mib"), "{}", bad.stderr);
}

#[test]
fn the_config_file_supplies_settings_and_flags_win() {
    let (forge, _repo, c) = forge_with_readme();
    let daemon = GitDaemon::start(forge.path(), Wants::Reachable);
    let ws = Scratch::new();
    let mut pin = good_pin("r", c);
    pin["sources"][0]["commit_time"] = json!("2020-01-01T00:00:00Z");
    ws.write_pin(&pin);
    let rw = to_daemon(&daemon);
    ws.write(
        "pinaudit.toml",
        format!(
            "inputs = [\"pins\"]\ncache = \"cache\"\nrewrite = [\"{rw}\"]\nfail-on = \"warning\"\ntimeout = 10\n\n[severity]\ncommit-time-mismatch = \"error\"\n"
        ),
    );
    // No flags at all: inputs, cache and rewrite come from the file, and the
    // override makes the warning an error.
    let r = ws.run(["audit", "--format", "json"]);
    r.assert_code(1);
    assert_eq!(r.only("commit-time-mismatch")["severity"], "error");
    // A flag wins over the file.
    ws.run(["audit", "--format", "json", "--fail-on", "never"])
        .assert_code(0);

    let shown = ws.run(["config"]);
    shown.assert_code(0);
    assert!(
        shown
            .stdout
            .contains("fail-on = \"warning\"  # pinaudit.toml"),
        "{}",
        shown.stdout
    );
    assert!(
        shown.stdout.contains("exclude = []  # default"),
        "{}",
        shown.stdout
    );
    assert!(
        shown.stdout.contains("commit-time-mismatch = \"error\""),
        "{}",
        shown.stdout
    );
    let flagged = ws.run(["config", "--no-config"]);
    assert!(
        flagged.stdout.contains("fail-on = \"error\"  # default"),
        "{}",
        flagged.stdout
    );
}

#[test]
fn a_config_with_an_unknown_key_exits_3_naming_file_line_and_key() {
    let ws = Scratch::new();
    ws.write(
        "pinaudit.toml",
        "cache = \"cache\"\nfail_on = \"warning\"\n",
    );
    let r = ws.run(["audit", "--offline", "pins"]);
    r.assert_code(3);
    assert!(
        r.stderr
            .contains("`pinaudit.toml` line 2: key `fail_on`: unknown key"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("did you mean `fail-on`?"), "{}", r.stderr);
    assert_eq!(r.stdout, "");

    // Found walking up from a subdirectory, and named by path.
    std::fs::create_dir_all(ws.path().join("sub/dir")).unwrap();
    let r = run(ws
        .cmd()
        .current_dir(ws.path().join("sub/dir"))
        .args(["audit", "--offline"]));
    r.assert_code(3);
    assert!(r.stderr.contains("pinaudit.toml` line 2"), "{}", r.stderr);

    ws.write(
        "other.toml",
        "[[ignore]]\ncode = \"hash-mismatch\"\nrecord = \"r\"\n",
    );
    let r = ws.run(["audit", "--config", "other.toml", "pins"]);
    r.assert_code(3);
    assert!(
        r.stderr
            .contains("`other.toml` line 2: key `ignore.reason`"),
        "{}",
        r.stderr
    );
}

// --- Input walking ---------------------------------------------------------------

#[test]
fn audit_dot_reads_only_the_real_records() {
    let ws = Scratch::new();
    let (_forge, _repo, c) = forge_with_readme();
    ws.write_pin(&good_pin("real", c));
    ws.write(".git/config.json", "{\"not\": \"a record\"");
    ws.write(".git/HEAD", "ref: refs/heads/main\n");
    ws.write("target/debug/deps/junk.json", "garbage");
    ws.write("node_modules/pkg/package.json", "{\"name\": \"pkg\"}");
    ws.write(
        "node_modules/pkg/README.md",
        "```json\n{\"broken\": \n```\n",
    );
    ws.write(".gitignore", "target/\nnode_modules/\n");
    ws.write(
        "README.md",
        "# Tooling\n\nConfigure it:\n\n```json\n{\"name\": \"demo\", \"private\": true}\n```\n",
    );
    ws.write("NOTES.txt", "nothing to see\n");
    // An example fence that is not even valid JSON is still no record.
    ws.write("docs/API.md", "```json\n{\"schema\": \"…\", …}\n```\n");
    ws.write(
        "package.json",
        "{\"name\": \"demo\", \"version\": \"1.0.0\"}\n",
    );
    let r = ws.audit_offline(["."]);
    let ids: Vec<_> = r.report()["records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(ids, ["real"], "{}", r.stderr);
    r.assert_lacks("invalid-record");
    assert!(
        r.stderr.contains("note: skipped `./README.md`"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains("note: skipped `./package.json`"),
        "{}",
        r.stderr
    );

    // A broken record-looking file is still `invalid-record`.
    ws.write(
        "drafts/broken.json",
        "{\"schema\": \"pinaudit/pins/v1\", \"id\": ",
    );
    ws.write(
        "drafts/broken.md",
        "- Pinned document: x\n```json\n{\"figures\": [\n```\n",
    );
    let r = ws.audit_offline(["."]);
    let broken: BTreeSet<String> = r
        .with_code("invalid-record")
        .iter()
        .map(|f| f["file"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        broken,
        BTreeSet::from([
            "./drafts/broken.json".to_string(),
            "./drafts/broken.md".to_string()
        ])
    );
    // ... unless excluded.
    let r = ws.audit_offline([".", "--exclude", "drafts/**"]);
    r.assert_lacks("invalid-record");
    // `--no-ignore` walks into what .gitignore excludes.
    let r = ws.audit_offline([".", "--no-ignore"]);
    assert!(
        r.with_code("invalid-record")
            .iter()
            .any(|f| f["message"].as_str().unwrap().contains("junk.json")),
        "{:#?}",
        r.findings()
    );
}

#[test]
fn dash_reads_one_record_from_stdin() {
    let ws = Scratch::new();
    let (_forge, _repo, c) = forge_with_readme();
    let pin = serde_json::to_string(&good_pin("piped", c)).unwrap();
    let r = run(ws
        .cached("audit")
        .args(["--offline", "--format", "json", "-"])
        .write_stdin(pin));
    assert_eq!(r.report()["records"][0]["id"], "piped", "{}", r.stderr);
    assert_eq!(r.report()["records"][0]["file"], "<stdin>");
}

// --- Strict pin files and import ---------------------------------------------------

#[test]
fn a_misspelt_pin_key_exits_1_naming_it_and_suggesting_the_right_one() {
    let ws = Scratch::new();
    let (_forge, _repo, c) = forge_with_readme();
    let mut pin = good_pin("typo", c);
    let src = pin["sources"][0].as_object_mut().unwrap();
    let rev = src.remove("revision").unwrap();
    src.insert("revison".into(), rev);
    let r = ws.audit_pin(&pin);
    r.assert_code(1);
    let msgs: Vec<String> = r
        .with_code("invalid-record")
        .iter()
        .map(|f| f["message"].as_str().unwrap().to_string())
        .collect();
    assert!(
        msgs.iter()
            .any(|m| m.contains("revison") && m.contains("did you mean `revision`")),
        "{msgs:#?}"
    );
}

#[test]
fn import_refuses_to_overwrite_a_hand_edited_pin_file_without_force() {
    let ws = Scratch::new();
    let seed = crate::common::seed::seed_path();
    let r = run(ws.cmd().arg("import").arg(&seed).args(["--out", "out"]));
    r.assert_code(0);
    let written = std::fs::read_dir(ws.path().join("out"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    // The same import again changes nothing and is fine.
    run(ws.cmd().arg("import").arg(&seed).args(["--out", "out"])).assert_code(0);
    std::fs::write(&written, "{\"edited\": true}\n").unwrap();
    let r = run(ws.cmd().arg("import").arg(&seed).args(["--out", "out"]));
    r.assert_code(2);
    assert!(
        r.stderr.contains("not overwritten") && r.stderr.contains("--force"),
        "{}",
        r.stderr
    );
    assert_eq!(
        std::fs::read_to_string(&written).unwrap(),
        "{\"edited\": true}\n"
    );
    run(ws
        .cmd()
        .arg("import")
        .arg(&seed)
        .args(["--out", "out", "--force"]))
    .assert_code(0);
    assert_ne!(
        std::fs::read_to_string(&written).unwrap(),
        "{\"edited\": true}\n"
    );
}

#[test]
fn every_fingerprint_of_the_seed_report_is_recomputed_from_its_v1_fields() {
    // The seed raises most record- and source-level codes offline; a report with
    // its fingerprints stripped must diff as entirely unchanged.
    let ws = Scratch::new();
    let (_forge, _repo, c) = forge_with_readme();
    let mut pin = good_pin("flawed", c);
    pin["sources"][0]["sha256"] = json!("xyz");
    let mut second = pin["sources"][0].clone();
    second["id"] = json!("notes");
    second["url"] = json!("https://github.com/acme/bench/blob/main/NOTES.md");
    second["revision"] = json!("main");
    second["sha256"] = Value::Null;
    pin["sources"].as_array_mut().unwrap().push(second);
    let mut uncited = pin["claims"][0].clone();
    uncited["label"] = json!("uncited");
    uncited["lines"] = Value::Null;
    uncited["url"] = Value::Null;
    let mut ratio = pin["claims"][0].clone();
    ratio["label"] = json!("accuracy");
    ratio["value"] = json!(98.0);
    ratio["unit"] = json!("%");
    ratio["correct"] = json!(48);
    ratio["total"] = json!(50);
    pin["claims"]
        .as_array_mut()
        .unwrap()
        .extend([uncited, ratio]);
    let file = ws.write_pin(&pin);
    ws.write("broken.md", "# r\n\n```json\n{\"figures\": [\n```\n");
    let r = run(ws
        .cached("audit")
        .args(["--offline", "--format", "json", &file, "broken.md"])
        .arg(crate::common::seed::seed_path()));
    let report = r.report();
    let mut stripped = report.clone();
    for f in stripped["findings"].as_array_mut().unwrap() {
        f.as_object_mut().unwrap().remove("fingerprint");
    }
    ws.write_json("old.json", &stripped);
    ws.write_json("new.json", &report);
    let d = diff(&ws, "old.json", "new.json", &["--format", "json"]);
    d.assert_code(0);
    let d: Value = serde_json::from_str(&d.stdout).unwrap();
    assert_eq!(d["new"], json!([]), "{d:#}");
    assert_eq!(d["resolved"], json!([]));
    assert_eq!(
        d["summary"]["unchanged"],
        report["findings"].as_array().unwrap().len()
    );
    let codes: BTreeSet<&str> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["code"].as_str().unwrap())
        .collect();
    for code in [
        "malformed-hash",
        "missing-hash",
        "unpinned-url",
        "uncited-claim",
        "inconsistent-value",
        "invalid-record",
        "unpinned-weights",
    ] {
        assert!(codes.contains(code), "{code} in {codes:?}");
    }
}

#[test]
fn a_bad_exclude_glob_is_a_usage_error() {
    let ws = Scratch::new();
    let r = ws.audit_offline([".", "--exclude", "a/{b"]);
    r.assert_code(3);
    assert!(
        r.stderr.contains("invalid `--exclude` glob `a/{b`"),
        "{}",
        r.stderr
    );
}

#[test]
fn config_names_the_environment_as_an_origin() {
    let ws = Scratch::new();
    let r = run(ws
        .cmd()
        .env("PINAUDIT_CACHE", "/tmp/elsewhere")
        .arg("config"));
    r.assert_code(0);
    assert!(
        r.stdout
            .contains("cache = \"/tmp/elsewhere\"  # command line or environment"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.starts_with("# configuration file: none"),
        "{}",
        r.stdout
    );
}
