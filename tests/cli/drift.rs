//! Drift at the default branch's head: `upstream-changed` (a note: the cited
//! lines changed or moved since the pin) and `value-superseded` (a warning: the
//! figure itself was corrected), end to end over `git daemon` on loopback.
//!
//! First the small `acme/bench` README, then the seed record against a
//! repository that reproduces the documents it cites.

use serde_json::{json, Value};

use crate::common::forge::{
    assert_clean, forge_with_readme, good_pin, to_daemon, Forge, NAME, README, README_LINE,
    README_LINE_TEXT, T0,
};
use crate::common::run::{codes, with_code};
use crate::common::scratch::Scratch;
use crate::common::seed::{
    assert_seed_claims, assert_seed_sources_checked, audit_served_seed, readme, readme_updated,
    Remote, DAY, SEED_COMMIT_TIME,
};
use crate::common::{GitDaemon, Wants};

// --- The `acme/bench` README ------------------------------------------------

#[test]
fn upstream_is_the_default_branch_whatever_its_name() {
    let forge = Forge::new();
    let repo = forge.repo(NAME);
    let c = repo.commit_on("trunk", &[("README.md", README)], "add results", T0);
    repo.set_default_branch("trunk");
    let corrected = README.replace("2.9 tok/s", "3.1 tok/s");
    let head = repo.commit_on(
        "trunk",
        &[("README.md", corrected.as_str())],
        "fix",
        T0 + 60,
    );
    // A stale `main` that still carries the pinned commit must not count.
    repo.branch("main", c);
    let daemon = GitDaemon::start(forge.path(), Wants::Default);
    let ws = Scratch::new();
    let file = ws.write_pin(&good_pin("trunk", c));

    let run = ws.audit(["--rewrite", &to_daemon(&daemon), &file]);
    run.assert_codes(&["upstream-changed", "value-superseded"]);
    assert_eq!(
        run.only("upstream-changed")["evidence"]["head"],
        head.to_string()
    );
    assert_eq!(
        run.source("trunk", "readme")["upstream"],
        json!({"head": head.to_string(), "changed": true})
    );
    run.assert_code(0);
}

#[test]
fn moved_line_upstream_is_upstream_changed_not_value_superseded() {
    let (forge, repo, c) = forge_with_readme();
    // Two lines inserted above the table push the cited line 5 down to 7.
    let moved = README.replacen(
        "\n\n| phase",
        "\n\n> Re-run with the 0.4 release.\n\n| phase",
        1,
    );
    assert_eq!(moved.lines().nth(6), Some(README_LINE_TEXT));
    let head = repo.commit(&[("README.md", moved.as_str())], "note", T0 + 600);
    let daemon = GitDaemon::start(forge.path(), Wants::Reachable);
    let ws = Scratch::new();
    let file = ws.write_pin(&good_pin("moved", c));
    let rewrite = to_daemon(&daemon);

    let run = ws.audit(["--rewrite", &rewrite, &file]);
    // A note does not fail the run.
    run.assert_code(0);
    run.assert_codes(&["upstream-changed"]);
    run.assert_lacks("value-superseded");
    let f = run.only("upstream-changed");
    assert_eq!(f["severity"], "note");
    let e = &f["evidence"];
    assert_eq!(e["head"], head.to_string(), "{f:#}");
    assert_eq!(e["removed"], false);
    assert_eq!(e["cited_lines"][0]["line"], README_LINE);
    assert_eq!(e["cited_lines"][0]["exists_at_head"], true);
    assert_eq!(e["cited_lines"][0]["head_line"], 7, "{f:#}");
    assert_eq!(f["location"]["revision"], head.to_string());
    assert_clean(&run, "moved", c);
    assert_eq!(
        run.source("moved", "readme")["upstream"],
        json!({"head": head.to_string(), "changed": true})
    );

    let run = ws.audit(["--no-upstream", "--rewrite", &rewrite, &file]);
    run.assert_code(0);
    run.assert_codes(&[]);
    assert_eq!(run.source("moved", "readme")["upstream"], Value::Null);
    assert_clean(&run, "moved", c);
}

#[test]
fn corrected_value_upstream_is_value_superseded() {
    let (forge, repo, c) = forge_with_readme();
    let corrected = README.replace("| decode | 2.9 tok/s |", "| decode | 3.1 tok/s |");
    let head = repo.commit(&[("README.md", corrected.as_str())], "fix", T0 + 600);
    let daemon = GitDaemon::start(forge.path(), Wants::Reachable);
    let ws = Scratch::new();
    let file = ws.write_pin(&good_pin("corrected", c));

    let run = ws.audit(["--rewrite", &to_daemon(&daemon), &file]);
    run.assert_code(0);
    run.assert_codes(&["upstream-changed", "value-superseded"]);
    let f = run.only("value-superseded");
    assert_eq!(f["claim"], "decode");
    let e = &f["evidence"];
    assert_eq!(e["head"], head.to_string());
    assert_eq!(e["pinned_line"], README_LINE);
    assert_eq!(e["head_line"], README_LINE, "{f:#}");
    assert_eq!(e["head_text"], "| decode | 3.1 tok/s |");
    assert_eq!(
        run.only("upstream-changed")["evidence"]["cited_lines"][0]["head_line"],
        Value::Null
    );
    // The pinned document still carries the figure.
    assert_clean(&run, "corrected", c);
}

// --- The seed ---------------------------------------------------------------

#[test]
fn seed_upstream_drift_after_a_later_commit() {
    let (remote, pinned) = Remote::seed();
    let head = remote.repo().commit(
        &[("README.md", readme_updated())],
        "Re-measure 8K prefill",
        SEED_COMMIT_TIME + 13 * DAY,
    );
    let work = Scratch::new();
    let run = audit_served_seed(&work, &remote, pinned);
    let report = run.report();
    assert_eq!(run.code(), 1, "stderr:\n{}", run.stderr);
    assert_seed_sources_checked(&report);
    // The pin did not move: every figure still stands where the seed cites it.
    assert_seed_claims(&report);

    let changed = with_code(&report, "upstream-changed");
    assert_eq!(changed.len(), 1, "{:?}", codes(&report));
    let f = changed[0];
    assert_eq!(f["severity"], "note");
    assert_eq!(f["source"], "kimi-iq1s-readme");
    // Its note names the source, not only the document.
    assert!(
        f["message"]
            .as_str()
            .is_some_and(|m| m.contains("of source `kimi-iq1s-readme`")),
        "{f:#}"
    );
    assert_eq!(f["location"]["path"], "README.md");
    assert_eq!(f["location"]["revision"], head.to_string());
    assert_eq!(f["evidence"]["head"], head.to_string());
    assert_eq!(f["evidence"]["removed"], false);
    let cited = f["evidence"]["cited_lines"]
        .as_array()
        .expect("cited_lines");
    let line = |n: u32| {
        cited
            .iter()
            .find(|l| l["line"] == n)
            .unwrap_or_else(|| panic!("L{n} not in {cited:#?}"))
    };
    let nums: Vec<u64> = cited.iter().filter_map(|l| l["line"].as_u64()).collect();
    assert_eq!(nums, [43, 44, 45, 46, 83]);
    assert_eq!(line(43)["exists_at_head"], true);
    assert_eq!(line(43)["head_line"], 45);
    assert_eq!(line(43)["text"], "| steady decode | ~2.9 tok/s |");
    assert_eq!(line(44)["exists_at_head"], false);
    assert_eq!(line(44)["edited_into_head_line"], 46);
    assert_eq!(line(46)["head_line"], 48);
    assert_eq!(line(83)["head_line"], 85);

    let superseded = with_code(&report, "value-superseded");
    assert_eq!(superseded.len(), 1, "{superseded:#?}");
    let s = superseded[0];
    assert_eq!(s["severity"], "warning");
    assert_eq!(s["claim"], "8K prefill");
    assert_eq!(s["source"], "kimi-iq1s-readme");
    assert_eq!(s["location"]["line"], 46);
    assert_eq!(s["evidence"]["head"], head.to_string());
    assert_eq!(s["evidence"]["pinned_line"], 44);
    assert_eq!(s["evidence"]["pinned_text"], "| 8K prefill | 79.6 |");
    assert_eq!(s["evidence"]["head_line"], 46);
    assert_eq!(s["evidence"]["head_text"], "| 8K prefill | 81.2 |");
    // The alert says what the figure became, in its message and its evidence.
    assert_eq!(s["evidence"]["head_value"], "81.2");
    assert!(
        s["message"]
            .as_str()
            .is_some_and(|m| m.ends_with("no longer carries the value: now 81.2 on L46")),
        "{s:#}"
    );
    assert!(
        s["evidence"]["head_numbers"]
            .as_array()
            .is_some_and(|n| n.iter().any(|x| x == "81.2")),
        "{s:#}"
    );

    let upstream: Vec<(String, Value)> = report["records"][0]["sources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["id"].as_str().unwrap().to_string(), s["upstream"].clone()))
        .collect();
    for (id, u) in upstream {
        assert_eq!(u["head"], head.to_string(), "{id}");
        assert_eq!(u["changed"], id == "kimi-iq1s-readme", "{id}");
    }
    assert_eq!(
        report["summary"]["findings"],
        json!({"error": 6, "warning": 3, "note": 1}),
        "{:?}",
        codes(&report)
    );
}

/// The corrected figure is the line right below the inserted ones: the diff sees
/// one old line replaced by three new ones, and the edited line is the last of
/// them, not the first.
#[test]
fn seed_superseded_figure_right_below_inserted_rows() {
    let (remote, pinned) = Remote::seed();
    let mut lines: Vec<String> = readme().lines().map(str::to_string).collect();
    assert_eq!(lines[42], "| steady decode | ~2.9 tok/s |");
    lines[42] = "| steady decode | ~3.1 tok/s |".to_string();
    lines.insert(42, "| warm decode | 2.4 tok/s |".to_string());
    lines.insert(42, "| cold decode | 1.1 tok/s |".to_string());
    let head = remote.repo().commit(
        &[("README.md", lines.join("\n") + "\n")],
        "Split decode into cold, warm and steady",
        SEED_COMMIT_TIME + DAY,
    );
    let work = Scratch::new();
    let run = audit_served_seed(&work, &remote, pinned);
    let report = run.report();
    assert_seed_claims(&report);

    let superseded = with_code(&report, "value-superseded");
    assert_eq!(superseded.len(), 1, "{superseded:#?}");
    let s = superseded[0];
    assert_eq!(s["claim"], "steady decode");
    assert_eq!(s["evidence"]["head"], head.to_string());
    assert_eq!(s["evidence"]["pinned_line"], 43);
    assert_eq!(
        (&s["evidence"]["head_line"], &s["evidence"]["head_text"]),
        (&json!(45), &json!("| steady decode | ~3.1 tok/s |")),
        "{s:#}"
    );
    assert_eq!(s["location"]["line"], 45);

    let changed = with_code(&report, "upstream-changed");
    assert_eq!(changed.len(), 1, "{:?}", codes(&report));
    let l43 = &changed[0]["evidence"]["cited_lines"][0];
    assert_eq!(l43["line"], 43);
    assert_eq!(l43["exists_at_head"], false);
    assert_eq!(l43["edited_into_head_line"], 45, "{l43:#}");
    assert_eq!(changed[0]["evidence"]["cited_lines"][1]["head_line"], 46);
}

// --- One line-follower for audit, diff and history (issue 45) ----------------

/// A results table of four rows, the record citing three of them.
const TABLE: &str = "# Results\n\
\n\
| phase | rate |\n\
|---|---|\n\
| prefill | 812 tok/s |\n\
| decode | 2.9 tok/s |\n\
| ttft | 140 ms |\n\
| memory | 41 GiB |\n";

fn table_pin(id: &str, commit: git2::Oid) -> Value {
    let s = crate::common::forge::source(
        "table",
        NAME,
        commit,
        "README.md",
        &crate::common::forge::sha256_hex(TABLE),
        "2023-11-14T22:13:20Z",
    );
    let claim = |label: &str, line: u32, value: f64, unit: &str| {
        let mut c = crate::common::forge::claim(label, &s, line, value);
        c["unit"] = Value::from(unit);
        c["metric"] = Value::Null;
        c
    };
    crate::common::forge::pin(
        id,
        std::slice::from_ref(&s),
        &[
            claim("prefill", 5, 812.0, "tok/s"),
            claim("decode", 6, 2.9, "tok/s"),
            claim("ttft", 7, 140.0, "ms"),
        ],
    )
}

/// Rows re-ordered up and down at the head, then an unrelated commit: no
/// figure was corrected, so no `value-superseded` in either audit, and `diff`
/// of the two reports names nothing changed; `show --history` follows the
/// line to where it went. Then a row's value does change: audit, diff and
/// history all name the new value.
#[test]
fn reordered_rows_are_followed_alike_by_audit_diff_and_history() {
    let forge = Forge::new();
    let repo = forge.repo(NAME);
    let c = repo.commit(&[("README.md", TABLE)], "add results", T0);
    // decode moves up, prefill down, ttft stays; memory moves to the top.
    let reordered = "# Results\n\
\n\
| phase | rate |\n\
|---|---|\n\
| memory | 41 GiB |\n\
| decode | 2.9 tok/s |\n\
| ttft | 140 ms |\n\
| prefill | 812 tok/s |\n";
    repo.commit(&[("README.md", reordered)], "reorder rows", T0 + 60);
    let daemon = GitDaemon::start(forge.path(), Wants::Reachable);
    let rewrite = to_daemon(&daemon);
    let ws = Scratch::new();
    let file = ws.write_pin(&table_pin("rows", c));

    let first = ws.audit(["--rewrite", &rewrite, &file]);
    ws.write("first.json", &first.stdout);
    first.assert_lacks("value-superseded");
    repo.commit(&[("NOTES.md", "unrelated\n")], "notes", T0 + 120);
    let second = ws.audit(["--rewrite", &rewrite, &file]);
    ws.write("second.json", &second.stdout);
    second.assert_lacks("value-superseded");
    let up = second.only("upstream-changed");
    let lines = up["evidence"]["cited_lines"]
        .as_array()
        .expect("cited lines")
        .clone();
    let at = |line: u32| {
        lines
            .iter()
            .find(|l| l["line"] == line)
            .map(|l| l["head_line"].clone())
            .unwrap_or(Value::Null)
    };
    assert_eq!(
        (at(5), at(6), at(7)),
        (json!(8), json!(6), json!(7)),
        "{up:#}"
    );

    let diff = ws.run(["diff", "first.json", "second.json", "--color", "never"]);
    assert!(
        !diff.stdout.contains("value-superseded") && !diff.stdout.contains("812"),
        "{}",
        diff.stdout
    );
    let url = format!("https://github.com/{NAME}/blob/{c}/README.md#L5");
    let history = ws.run(["show", &url, "--history", "--cache", "cache", "--offline"]);
    history.assert_code(0);
    assert!(history.stdout.contains("L8"), "{}", history.stdout);

    // Now the decode figure is corrected.
    let corrected = reordered.replace("2.9 tok/s", "3.1 tok/s");
    repo.commit(&[("README.md", corrected.as_str())], "fix decode", T0 + 180);
    let third = ws.audit(["--rewrite", &rewrite, &file]);
    ws.write("third.json", &third.stdout);
    let f = third.only("value-superseded");
    assert_eq!(f["claim"], "decode", "{f:#}");
    assert_eq!(f["evidence"]["head_line"], 6, "{f:#}");
    assert!(
        f["message"].as_str().unwrap_or_default().contains("3.1"),
        "{f:#}"
    );
    let diff = ws.run(["diff", "second.json", "third.json", "--color", "never"]);
    assert!(
        diff.stdout.contains("value-superseded")
            && diff.stdout.contains("decode")
            && diff.stdout.contains("3.1"),
        "{}",
        diff.stdout
    );
    assert!(!diff.stdout.contains("prefill"), "{}", diff.stdout);
    let url = format!("https://github.com/{NAME}/blob/{c}/README.md#L6");
    let history = ws.run(["show", &url, "--history", "--cache", "cache", "--offline"]);
    assert!(history.stdout.contains("3.1"), "{}", history.stdout);
}

/// The `pinaudit show` a hint prints carries the flags the run was given
/// (`--cache`, `--rewrite`, `--config`, ...): pasted as printed, it runs
/// (issue 47).
#[test]
fn a_printed_show_command_runs_as_printed() {
    let (forge, repo, c) = forge_with_readme();
    let corrected = README.replace("| decode | 2.9 tok/s |", "| decode | 3.1 tok/s |");
    repo.commit(&[("README.md", corrected.as_str())], "fix", T0 + 600);
    let daemon = GitDaemon::start(forge.path(), Wants::Reachable);
    let ws = Scratch::new();
    let file = ws.write_pin(&good_pin("pasted", c));
    ws.write("elsewhere.toml", "timeout = 20\n");
    let rewrite = to_daemon(&daemon);
    let run = crate::common::run::run(ws.cmd().args([
        "--config",
        "elsewhere.toml",
        "audit",
        "--cache",
        "my cache",
        "--format",
        "json",
        "--rewrite",
        &rewrite,
        &file,
    ]));
    let f = run.only("value-superseded");
    let hint = f["hint"].as_str().expect("a hint");
    let command = hint
        .split('`')
        .find(|part| part.starts_with("pinaudit show "))
        .unwrap_or_else(|| panic!("no show command in {hint}"));
    for flag in [
        "--config elsewhere.toml",
        "--cache 'my cache'",
        "--rewrite ",
    ] {
        assert!(command.contains(flag), "{command}");
    }
    let bin = assert_cmd::cargo::cargo_bin("pinaudit");
    let pasted = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!(
            "'{}' {}",
            bin.display(),
            &command["pinaudit ".len()..]
        ))
        .current_dir(ws.path())
        .env("HOME", ws.path())
        .env_remove("PINAUDIT_CACHE")
        .output()
        .expect("sh runs");
    let out = String::from_utf8_lossy(&pasted.stdout);
    assert!(
        pasted.status.success() && out.contains("3.1"),
        "{command}\n{out}\n{}",
        String::from_utf8_lossy(&pasted.stderr)
    );
}
