//! The CI kit as GitHub runs it: the shell of `action.yml`'s audit step and of
//! `examples/scheduled-recheck.yml`'s report job, taken from the YAML files
//! themselves and run with bash the way a runner runs them (`bash --noprofile
//! --norc -eo pipefail`), with the runner's files (`GITHUB_OUTPUT`,
//! `GITHUB_STEP_SUMMARY`), the artifact store and `gh` played by the test.
//! Three nights over the demo's repository, the second one red: the new
//! finding alerts once, on the night it appears.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::common::scratch::Scratch;
use crate::demo::{copy_dir, repo_root};

/// The `run:` scripts of a workflow or action file, by step `id` (or `name`
/// when it has none). The files are ours, written in one style: `run: |`
/// block scalars under `- name:` / `id:` keys.
fn run_scripts(file: &str) -> BTreeMap<String, String> {
    let text = std::fs::read_to_string(repo_root().join(file)).expect("the workflow file");
    let lines: Vec<&str> = text.lines().collect();
    let indent = |l: &str| l.len() - l.trim_start().len();
    let mut scripts = BTreeMap::new();
    let (mut name, mut id) = (None::<String>, None::<String>);
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let t = line.trim_start();
        if let Some(rest) = t.strip_prefix("- ") {
            name = None;
            id = None;
            if let Some(n) = rest.strip_prefix("name: ") {
                name = Some(n.trim().to_string());
            }
        } else if let Some(n) = t.strip_prefix("name: ") {
            name = Some(n.trim().to_string());
        } else if let Some(n) = t.strip_prefix("id: ") {
            id = Some(n.trim().to_string());
        }
        if t == "run: |" {
            let key = indent(line);
            let mut body = Vec::new();
            i += 1;
            while i < lines.len() && (lines[i].trim().is_empty() || indent(lines[i]) > key) {
                body.push(lines[i]);
                i += 1;
            }
            let cut = body
                .iter()
                .filter(|l| !l.trim().is_empty())
                .map(|l| indent(l))
                .min()
                .unwrap_or(0);
            let script: String = body
                .iter()
                .map(|l| format!("{}\n", l.get(cut..).unwrap_or("")))
                .collect();
            let key = id.clone().or_else(|| name.clone()).expect("a named step");
            scripts.insert(key, script);
            continue;
        }
        i += 1;
    }
    scripts
}

/// Runs `script` as a runner runs a bash step, in `dir`, with `env`; returns
/// the exit status and what it printed.
fn run_step(script: &str, dir: &Path, env: &[(&str, String)]) -> (i32, String) {
    let file = tempfile::NamedTempFile::new().expect("a script file");
    std::fs::write(file.path(), script).expect("write the script");
    let mut cmd = std::process::Command::new("bash");
    cmd.args(["--noprofile", "--norc", "-eo", "pipefail"])
        .arg(file.path())
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        // Never the user's cache key file.
        .env("PINAUDIT_CACHE_KEY", "pinaudit tests")
        .env_remove("PINAUDIT_CACHE")
        .env_remove("GITHUB_TOKEN");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("bash runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!text.contains("panicked"), "{text}");
    (out.status.code().unwrap_or(-1), text)
}

/// Runs `action.yml`'s audit step in `dir` with the inputs' defaults, but for
/// `inputs` (by the step's variable names); the runner's files go under
/// `temp`, the job summary to `summary`. Returns the step's exit status, its
/// output and its `GITHUB_OUTPUT` lines.
fn audit_step(
    dir: &Path,
    temp: &Path,
    summary: &Path,
    inputs: &[(&str, String)],
) -> (i32, String, BTreeMap<String, String>) {
    let output = temp.join("output");
    let mut env: BTreeMap<&str, String> = [
        (
            "PINAUDIT",
            assert_cmd::cargo::cargo_bin("pinaudit")
                .display()
                .to_string(),
        ),
        ("PINAUDIT_CACHE", temp.join("cache").display().to_string()),
        ("PATHS", String::new()),
        ("FAIL_ON", "error".into()),
        ("FAIL", "true".into()),
        ("SHARD", String::new()),
        ("CHANGED_ONLY", "true".into()),
        ("BASE_SHA", String::new()),
        ("MAX_ANNOTATIONS", "10".into()),
        ("SUMMARY_BYTES", "600000".into()),
        ("ARTIFACT", "pinaudit-report".into()),
        ("ARGS", String::new()),
        ("RUNNER_TEMP", temp.display().to_string()),
        ("GITHUB_OUTPUT", output.display().to_string()),
        ("GITHUB_STEP_SUMMARY", summary.display().to_string()),
    ]
    .into_iter()
    .collect();
    env.extend(inputs.iter().cloned());
    let env: Vec<(&str, String)> = env.into_iter().collect();
    let (code, text) = run_step(&run_scripts("action.yml")["audit"], dir, &env);
    (code, text, outputs(&output))
}

/// The key=value lines a step wrote to its `GITHUB_OUTPUT`.
fn outputs(file: &Path) -> BTreeMap<String, String> {
    std::fs::read_to_string(file)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// A fake `gh` serving finished runs' artifacts from `$FAKE_RUNS/ID/NAME/`,
/// newest run first, as `gh run list` and `gh run download` do; `--status
/// success` or `failure` keeps the runs of that conclusion
/// (`$FAKE_RUNS/ID/conclusion`).
const FAKE_GH: &str = r#"#!/bin/sh
case "$1 $2" in
  "run list")
    status=completed
    while [ $# -gt 0 ]; do
      case "$1" in --status) status=$2; shift 2 ;; *) shift ;; esac
    done
    for id in $(ls "$FAKE_RUNS" | sort -rn); do
      case "$status" in
        completed) echo "$id" ;;
        *) [ "$(cat "$FAKE_RUNS/$id/conclusion")" = "$status" ] && echo "$id" ;;
      esac
    done ;;
  "run download")
    id=$3; shift 3
    while [ $# -gt 0 ]; do
      case "$1" in --name) name=$2; shift 2 ;; --dir) dir=$2; shift 2 ;; *) shift ;; esac
    done
    [ -d "$FAKE_RUNS/$id/$name" ] || exit 1
    mkdir -p "$dir" && cp -r "$FAKE_RUNS/$id/$name/." "$dir/" ;;
  *) exit 2 ;;
esac
"#;

/// One night: both shards through the action's audit step, their reports
/// "uploaded", then the example's report job; returns the report job's last
/// step (exit status, output) and the night's job summary.
struct Night<'a> {
    ws: &'a Scratch,
    corpus: PathBuf,
    forge: PathBuf,
    runs: PathBuf,
    bin: PathBuf,
}

impl Night<'_> {
    fn run(&self, night: u32) -> (i32, String, String) {
        let example = run_scripts("examples/scheduled-recheck.yml");
        let base = self.ws.path().join(format!("night-{night}"));
        let report_dir = base.join("report-job");
        std::fs::create_dir_all(&report_dir).expect("mkdir");
        let summary = base.join("summary.md");
        for k in 1..=2 {
            let temp = base.join(format!("runner-{k}"));
            std::fs::create_dir_all(&temp).expect("mkdir");
            // Each shard keeps its own cache from night to night, as actions/cache does.
            let cache = self.ws.path().join(format!("cache-{k}"));
            let (code, text, out) = audit_step(
                &self.corpus,
                &temp,
                &summary,
                &[
                    ("PINAUDIT_CACHE", cache.display().to_string()),
                    ("PATHS", "records".into()),
                    ("FAIL_ON", "never".into()),
                    ("FAIL", "false".into()),
                    ("SHARD", format!("{k}/2")),
                    ("CHANGED_ONLY", "false".into()),
                    (
                        "ARGS",
                        format!(
                            "--allow-local --rewrite https://github.com/pinaudit-demo/={}/",
                            self.forge.display()
                        ),
                    ),
                ],
            );
            // `fail: false`: a shard never fails its job, whatever pinaudit said.
            assert_eq!(code, 0, "shard {k}/2, night {night}:\n{text}");
            assert!(out.contains_key("exit-code"), "{out:?}");
            assert_eq!(out["artifact"], format!("pinaudit-report-shard-{k}-of-2"));
            // actions/upload-artifact, then actions/download-artifact by pattern.
            let uploaded = report_dir.join("shards").join(&out["artifact"]);
            std::fs::create_dir_all(&uploaded).expect("mkdir");
            for f in ["report.json", "report.sarif"] {
                std::fs::copy(Path::new(&out["dir"]).join(f), uploaded.join(f)).expect("upload");
            }
        }
        let bin_dir = self.ws.path().join("fake-bin");
        let path = format!(
            "{}:{}",
            bin_dir.display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let output = base.join("report-output");
        let env = [
            ("PINAUDIT", self.bin.display().to_string()),
            ("PATH", path),
            ("FAKE_RUNS", self.runs.display().to_string()),
            ("GH_TOKEN", "unused".into()),
            ("WORKFLOW", "pinaudit nightly re-check".into()),
            ("REPOSITORY", "corpus/records".into()),
            ("RUN_ID", night.to_string()),
            ("GITHUB_OUTPUT", output.display().to_string()),
            ("GITHUB_STEP_SUMMARY", summary.display().to_string()),
        ];
        let (code, text) = run_step(&example["merge"], &report_dir, &env);
        assert_eq!(code, 0, "merge, night {night}:\n{text}");
        let sarif: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(report_dir.join("report.sarif")).expect("merged SARIF"),
        )
        .expect("SARIF");
        assert_eq!(sarif["runs"].as_array().map(Vec::len), Some(1), "one run");
        assert_eq!(sarif["runs"][0]["automationDetails"]["id"], "pinaudit/");
        let (code, text) = run_step(
            &example["Fetch the previous night's report"],
            &report_dir,
            &env,
        );
        assert_eq!(code, 0, "previous night, night {night}:\n{text}");
        // The night's own artifact, uploaded whatever happens next.
        let kept = self.runs.join(night.to_string()).join("pinaudit-nightly");
        std::fs::create_dir_all(&kept).expect("mkdir");
        std::fs::copy(report_dir.join("report.json"), kept.join("report.json")).expect("keep");
        let (code, diff) = run_step(
            &example["New findings since the previous night"],
            &report_dir,
            &env,
        );
        // The run is finished now, red or green.
        let conclusion = if code == 0 { "success" } else { "failure" };
        std::fs::write(
            self.runs.join(night.to_string()).join("conclusion"),
            conclusion,
        )
        .expect("conclusion");
        let summary = std::fs::read_to_string(&summary).unwrap_or_default();
        (code, format!("{text}{diff}"), summary)
    }
}

#[test]
fn three_nights_with_a_red_one_alert_the_new_finding_once() {
    let ws = Scratch::new();
    let corpus = ws.path().join("corpus");
    std::fs::create_dir_all(corpus.join("records")).expect("mkdir");
    std::fs::copy(
        repo_root().join("demo/records/bench-v1.json"),
        corpus.join("records/bench-v1.json"),
    )
    .expect("copy a record");
    let forge = ws.path().join("forge");
    copy_dir(&repo_root().join("demo/forge/pinaudit-demo"), &forge);
    let bin_dir = ws.path().join("fake-bin");
    std::fs::create_dir_all(&bin_dir).expect("mkdir");
    let gh = bin_dir.join("gh");
    std::fs::write(&gh, FAKE_GH).expect("write gh");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&gh, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    let runs = ws.path().join("runs");
    std::fs::create_dir_all(&runs).expect("mkdir");
    let nights = Night {
        ws: &ws,
        corpus: corpus.clone(),
        forge,
        runs,
        bin: assert_cmd::cargo::cargo_bin("pinaudit"),
    };

    // Night 1: the first night is its own baseline; nothing is new.
    let (code, out, summary) = nights.run(1);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("no earlier night"), "{out}");
    assert!(summary.contains("## pinaudit-shard-1-of-2"), "{summary}");
    assert!(summary.contains("<details>"), "{summary}");

    // Night 2, red: a record with a mistyped figure lands, and an unreadable
    // input leaves one shard incomplete (exit 2): the night is still compared.
    let mut typo: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(corpus.join("records/bench-v1.json")).expect("record"),
    )
    .expect("JSON");
    typo["id"] = "bench-typo".into();
    typo["claims"][0]["value"] = serde_json::json!(43.1);
    std::fs::write(
        corpus.join("records/bench-typo.json"),
        serde_json::to_string_pretty(&typo).expect("JSON"),
    )
    .expect("write");
    std::fs::write(corpus.join("records/broken.json"), "{\"schema\": ").expect("write");
    let (code, out, summary) = nights.run(2);
    assert_eq!(code, 1, "a new error fails the night:\n{out}");
    assert!(out.contains("comparing with the night of run 1"), "{out}");
    assert!(out.contains("value-missing"), "{out}");
    let alerts = |s: &str| s.matches("new       error[value-missing]").count();
    assert_eq!(alerts(&out), 1, "{out}");
    assert!(summary.contains("value-missing"), "{summary}");

    // Night 3, nothing changed: compared with the red night, nothing is new.
    let (code, out, _) = nights.run(3);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("comparing with the night of run 2"), "{out}");
    assert_eq!(alerts(&out), 0, "the finding alerted again:\n{out}");
    assert!(out.contains("unchanged error[value-missing]"), "{out}");
}

/// The action caps annotations, errors first, and counts what it left out.
#[test]
fn the_action_caps_annotations_and_says_how_many_it_left_out() {
    let ws = Scratch::new();
    let corpus = ws.path().join("corpus");
    copy_dir(&repo_root().join("demo"), &corpus.join("demo"));
    let temp = ws.path().join("runner");
    std::fs::create_dir_all(&temp).expect("mkdir");
    let summary = temp.join("summary.md");
    let (code, text, out) = audit_step(
        &corpus,
        &temp,
        &summary,
        &[
            ("MAX_ANNOTATIONS", "3".into()),
            ("SUMMARY_BYTES", "2000".into()),
            ("ARGS", "--config demo/pinaudit.toml --allow-local".into()),
        ],
    );
    // `fail: true`: the step fails as pinaudit does (errors among the findings).
    assert_eq!(code, 1, "{text}");
    let annotations: Vec<&str> = text.lines().filter(|l| l.starts_with("::")).collect();
    assert_eq!(annotations.len(), 4, "{text}");
    assert!(
        annotations[..3].iter().all(|a| a.starts_with("::error ")),
        "{annotations:#?}"
    );
    assert!(
        annotations[3].starts_with("::notice title=pinaudit::")
            && annotations[3].contains("more finding(s) not annotated"),
        "{annotations:#?}"
    );
    let summary = std::fs::read_to_string(&summary).expect("a summary");
    assert!(summary.len() < 4000, "{} bytes", summary.len());
    assert!(summary.contains("cut at 2000 bytes"), "{summary}");
    assert_eq!(out["exit-code"], "1");
}

/// `git ARGS` in `dir`, with the machine's configuration kept out.
fn git(dir: &Path, args: &[&str]) {
    let out = std::process::Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.org"])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn changed_since_audits_only_the_records_a_change_touches() {
    let ws = Scratch::new();
    copy_dir(&repo_root().join("demo"), &ws.path().join("demo"));
    git(ws.path(), &["init", "-q", "-b", "main"]);
    git(ws.path(), &["add", "-A"]);
    git(ws.path(), &["commit", "-q", "-m", "records"]);
    let audit = |rev: &str| {
        ws.run([
            "audit",
            "--config",
            "demo/pinaudit.toml",
            "--allow-local",
            "--format",
            "json",
            "--changed-since",
            rev,
        ])
    };
    // Nothing changed: nothing to audit, and that passes.
    let run = audit("HEAD");
    assert_eq!(run.code(), 0, "{}", run.stderr);
    assert_eq!(run.summary()["records"], 0);
    // A pull request edits one record and adds a file that carries none.
    git(ws.path(), &["checkout", "-q", "-b", "change"]);
    let file = ws.path().join("demo/records/bench-v1.json");
    let text = std::fs::read_to_string(&file).expect("record");
    std::fs::write(&file, text.replace("\"prefill\"", "\"prefill, batch 1\"")).expect("edit");
    std::fs::write(
        ws.path().join("demo/records/CONTRIBUTING.md"),
        "# How to add a record\n\nOpen a pull request.\n",
    )
    .expect("write");
    git(ws.path(), &["add", "-A"]);
    git(ws.path(), &["commit", "-q", "-m", "rename a figure"]);
    let run = audit("main");
    let report = run.report();
    let ids: Vec<&str> = report["records"]
        .as_array()
        .expect("records")
        .iter()
        .filter_map(|r| r["id"].as_str())
        .collect();
    assert_eq!(ids, ["bench-v1"], "{}", run.stdout);
    run.assert_lacks("invalid-record");
    assert!(run.stderr.contains("CONTRIBUTING.md"), "{}", run.stderr);
    // A base that is not there is a setup error, with the way to fetch it.
    let run = audit("no-such-branch");
    assert_eq!(run.code(), 3, "{}", run.stderr);
    assert!(run.stderr.contains("fetch-depth"), "{}", run.stderr);
}

#[test]
fn sarif_of_shards_merges_into_the_one_run_of_the_whole() {
    let ws = Scratch::new();
    copy_dir(&repo_root().join("demo"), &ws.path().join("demo"));
    // Records in two repositories, so that both shards hold some.
    let other = std::fs::read_to_string(ws.path().join("demo/records/bench-v1.json"))
        .expect("record")
        .replace("pinaudit-demo/bench", "pinaudit-demo/bench-two")
        .replace("\"bench-v1\"", "\"bench-two\"");
    std::fs::write(ws.path().join("demo/records/bench-two.json"), other).expect("write");
    copy_dir(
        &ws.path().join("demo/forge/pinaudit-demo/bench.git"),
        &ws.path().join("demo/forge/pinaudit-demo/bench-two.git"),
    );
    let sarif = |extra: &[&str], out: &str| demo_report(&ws, "sarif", extra, out);
    let whole = sarif(&[], "whole.sarif");
    let one = sarif(&["--shard", "1/2"], "1.sarif");
    let two = sarif(&["--shard", "2/2"], "2.sarif");
    assert_eq!(
        one["runs"][0]["automationDetails"]["id"],
        "pinaudit/shard-1-of-2/"
    );
    assert_eq!(
        two["runs"][0]["automationDetails"]["id"],
        "pinaudit/shard-2-of-2/"
    );
    assert_eq!(whole["runs"][0]["automationDetails"]["id"], "pinaudit/");
    let count = |v: &serde_json::Value| v["runs"][0]["results"].as_array().map_or(0, Vec::len);
    assert!(
        count(&one) > 0 && count(&two) > 0,
        "both shards hold records"
    );
    let merged_run = ws.run(["merge", "1.sarif", "2.sarif", "--output", "merged.sarif"]);
    // Errors among the results, as the whole audit has: exit 1.
    assert_eq!(merged_run.code(), 1, "{}", merged_run.stderr);
    let merged: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(ws.path().join("merged.sarif")).expect("merged"),
    )
    .expect("JSON");
    assert_eq!(merged["runs"].as_array().map(Vec::len), Some(1));
    // The same results as the whole audit, each pointing at its own rule.
    let key = |v: &serde_json::Value| {
        let mut k: Vec<String> = v["runs"][0]["results"]
            .as_array()
            .expect("results")
            .iter()
            .map(|r| {
                let rule = &v["runs"][0]["tool"]["driver"]["rules"]
                    [r["ruleIndex"].as_u64().expect("index") as usize];
                assert_eq!(rule["id"], r["ruleId"], "{r:#}");
                r["partialFingerprints"]["pinauditFingerprint/v1"].to_string()
            })
            .collect();
        k.sort();
        k
    };
    assert_eq!(key(&merged), key(&whole));
    assert_eq!(
        merged["runs"][0]["automationDetails"],
        whole["runs"][0]["automationDetails"]
    );
    // A JSON report and a SARIF log don't merge.
    ws.run([
        "audit",
        "--config",
        "demo/pinaudit.toml",
        "--allow-local",
        "--format",
        "json",
        "--output",
        "r.json",
    ]);
    let mixed = ws.run(["merge", "r.json", "1.sarif"]);
    assert_eq!(mixed.code(), 2, "{}", mixed.stderr);
    assert!(mixed.stderr.contains("not both"), "{}", mixed.stderr);
}

/// The demo's audit in `format` written to `out` (with `extra` flags), read back.
fn demo_report(ws: &Scratch, format: &str, extra: &[&str], out: &str) -> serde_json::Value {
    let mut args = vec![
        "audit",
        "--config",
        "demo/pinaudit.toml",
        "--allow-local",
        "--format",
        format,
        "--output",
        out,
    ];
    args.extend_from_slice(extra);
    ws.run(args);
    serde_json::from_str(&std::fs::read_to_string(ws.path().join(out)).expect("report"))
        .expect("JSON")
}

#[test]
fn merged_json_shards_are_complete_as_the_whole_audit_is() {
    // The demo cites one document by branch (`unpinned-url`): an unchecked source
    // that leaves an audit complete, sharded or not.
    let ws = Scratch::new();
    copy_dir(&repo_root().join("demo"), &ws.path().join("demo"));
    let json = |extra: &[&str], out: &str| demo_report(&ws, "json", extra, out);
    let whole = json(&[], "whole.json");
    json(&["--shard", "1/2"], "1.json");
    json(&["--shard", "2/2"], "2.json");
    assert_eq!(whole["summary"]["complete"], true, "{:#}", whole["summary"]);
    assert!(whole["summary"]["unchecked_sources"].as_u64() > Some(0));
    let merged_run = ws.run(["merge", "1.json", "2.json", "--output", "merged.json"]);
    assert_eq!(merged_run.code(), 1, "{}", merged_run.stderr);
    let merged: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(ws.path().join("merged.json")).expect("merged"),
    )
    .expect("JSON");
    assert_eq!(
        merged["summary"]["complete"], true,
        "{:#}",
        merged["summary"]
    );
    assert_eq!(
        merged["summary"]["unchecked_sources"],
        whole["summary"]["unchecked_sources"]
    );
}

/// Each hook of `.pre-commit-hooks.yaml`: its id and its entry as pre-commit
/// splits it into words (folded `>-` entries joined with spaces; single quotes
/// group, as shlex does).
fn hooks() -> Vec<(String, Vec<String>, String)> {
    let text = std::fs::read_to_string(repo_root().join(".pre-commit-hooks.yaml")).expect("hooks");
    let mut out = Vec::new();
    for block in text.split("\n- id: ").skip(1) {
        let id = block.lines().next().unwrap_or("").trim().to_string();
        let language = block
            .lines()
            .find_map(|l| l.trim().strip_prefix("language: "))
            .unwrap_or("")
            .to_string();
        let entry = block.split("\n  entry: ").nth(1).expect("an entry");
        let entry: String = match entry.strip_prefix(">-\n") {
            Some(folded) => folded
                .lines()
                .take_while(|l| l.starts_with("    "))
                .map(str::trim)
                .collect::<Vec<_>>()
                .join(" "),
            None => entry.lines().next().unwrap_or("").to_string(),
        };
        let mut words = Vec::new();
        let mut word = String::new();
        let mut quoted = false;
        for c in entry.chars() {
            match c {
                '\'' => quoted = !quoted,
                ' ' if !quoted => {
                    if !word.is_empty() {
                        words.push(std::mem::take(&mut word));
                    }
                }
                c => word.push(c),
            }
        }
        if !word.is_empty() {
            words.push(word);
        }
        out.push((id, words, language));
    }
    out
}

/// The hooks audit only the record files a commit changes: a staged file that
/// carries no record is skipped, an unpinned URL fails the offline hook, and
/// the cache is the one `pinaudit.toml` names. Each `language: system` hook has
/// a building twin with the same entry.
#[test]
fn pre_commit_hooks_audit_only_changed_records_with_the_configured_cache() {
    let all = hooks();
    let entry_of = |id: &str| {
        all.iter()
            .find(|(i, _, _)| i == id)
            .map(|(_, w, _)| w.clone())
            .unwrap_or_else(|| panic!("hook `{id}`"))
    };
    for (id, words, language) in &all {
        if let Some(twin) = id.strip_suffix("-system") {
            assert_eq!(language, "system", "{id}");
            assert_eq!(&entry_of(twin), words, "`{twin}` runs what `{id}` runs");
        }
    }
    let ws = Scratch::new();
    copy_dir(&repo_root().join("demo"), &ws.path().join("demo"));
    ws.write(
        "pinaudit.toml",
        "inputs = [\"demo/records\"]\ncache = \"hook-cache\"\n\
         rewrite = [\"https://github.com/pinaudit-demo/=demo/forge/pinaudit-demo/\"]\n",
    );
    git(ws.path(), &["init", "-q", "-b", "main"]);
    git(ws.path(), &["add", "-A"]);
    git(ws.path(), &["commit", "-q", "-m", "records"]);
    let bin = assert_cmd::cargo::cargo_bin("pinaudit");
    let path = format!(
        "{}:{}",
        bin.parent().expect("bin dir").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let hook = |id: &str, args: &[&str]| {
        let words = entry_of(id);
        let out = std::process::Command::new(&words[0])
            .args(&words[1..])
            .args(args)
            .current_dir(ws.path())
            .env("PATH", &path)
            .env("HOME", ws.path())
            .env_remove("PINAUDIT_CACHE")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .output()
            .expect("the hook runs");
        (
            out.status.code().unwrap_or(-1),
            format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ),
        )
    };
    // A commit of a file without records: nothing to audit, and that passes.
    ws.write("CONTRIBUTING.md", "# Contributing\n\nSee the records.\n");
    ws.write("demo/records/NOTES.md", "# Notes\n\nNo figures here.\n");
    git(ws.path(), &["add", "-A"]);
    let (code, text) = hook("pinaudit-structure-system", &[]);
    assert_eq!(code, 0, "{text}");
    assert!(!text.contains("invalid-record"), "{text}");
    // A good record changed: offline, its sources are not in the cache yet
    // (incomplete, exit 2), which passes.
    let file = ws.path().join("demo/records/bench-v1.json");
    let record = std::fs::read_to_string(&file).expect("record");
    std::fs::write(&file, record.replace("\"prefill\"", "\"prefill, batch 1\"")).expect("edit");
    git(ws.path(), &["add", "-A"]);
    let (code, text) = hook("pinaudit-structure-system", &[]);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("bench-v1"), "{text}");
    assert!(
        !text.contains("draft-writeup"),
        "an unchanged record was audited:\n{text}"
    );
    // The full audit fetches into the configured cache, nowhere else.
    let (code, text) = hook("pinaudit-audit-system", &["--allow-local"]);
    assert_eq!(code, 0, "{text}");
    assert!(ws.path().join("hook-cache/git").is_dir(), "{text}");
    assert!(!ws.path().join("cache").exists() && !ws.path().join(".pinaudit-cache").exists());
    // A record citing a branch fails the offline hook.
    let draft = ws.path().join("demo/records/draft-writeup.md");
    let text_of = std::fs::read_to_string(&draft).expect("draft");
    std::fs::write(&draft, format!("{text_of}\n")).expect("edit");
    git(ws.path(), &["add", "-A"]);
    let (code, text) = hook("pinaudit-structure-system", &[]);
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("unpinned-url"), "{text}");
}

/// Every pinaudit command the workflow files run is one pinaudit accepts
/// (words past `"$PINAUDIT"` up to a redirection, variables given sample
/// values); the example's report job and the action's audit step run for real
/// in `three_nights_with_a_red_one_alert_the_new_finding_once`.
#[test]
fn the_workflow_files_run_commands_pinaudit_accepts() {
    use clap::Parser;
    let mut seen = Vec::new();
    for file in ["action.yml", "examples/scheduled-recheck.yml"] {
        for script in run_scripts(file).values() {
            for line in script.lines().map(str::trim) {
                let Some(rest) = line.strip_prefix("\"$PINAUDIT\" ") else {
                    continue;
                };
                let rest = rest.split(['>', '|']).next().unwrap_or("");
                let words: Vec<String> = std::iter::once("pinaudit".to_string())
                    .chain(rest.split_whitespace().filter_map(|w| {
                        let w = w.trim_matches('"');
                        match w {
                            "${flags[@]}" | "${paths[@]}" => None,
                            w if w.starts_with("${") => Some("x.json".to_string()),
                            w if w.starts_with('$') => Some("error".to_string()),
                            w => Some(w.to_string()),
                        }
                    }))
                    .collect();
                if let Err(e) = pinaudit::cli::Cli::try_parse_from(&words) {
                    panic!("{file}: `{}` is refused: {e}", words.join(" "));
                }
                seen.push(words[1].clone());
            }
        }
    }
    for want in ["audit", "merge", "diff"] {
        assert!(seen.iter().any(|s| s == want), "{want} in {seen:?}");
    }
}

/// The action's install step takes the release archive for the runner only
/// when its sha256 is the one `SHA256SUMS` lists, and builds with `cargo
/// install` otherwise. `curl` serves a local "release" and `cargo` only says
/// it was called.
#[test]
fn the_action_installs_the_release_binary_only_when_its_sha256_checks() {
    use std::os::unix::fs::PermissionsExt;
    let ws = Scratch::new();
    let release = ws.path().join("release");
    let name = "pinaudit-0.1.0-x86_64-unknown-linux-gnu";
    std::fs::create_dir_all(release.join(name)).expect("mkdir");
    std::fs::write(
        release.join(name).join("pinaudit"),
        "#!/bin/sh\necho released\n",
    )
    .expect("write");
    let tar = std::process::Command::new("tar")
        .args(["-czf", &format!("{name}.tar.gz"), name])
        .current_dir(&release)
        .status()
        .expect("tar");
    assert!(tar.success());
    let bin = ws.path().join("bin");
    std::fs::create_dir_all(&bin).expect("mkdir");
    let tool = |file: &str, body: &str| {
        let p = bin.join(file);
        std::fs::write(&p, body).expect("write");
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    };
    // curl -fsSL --retry 3 -o FILE URL: the URL's last segment from the release dir.
    tool(
        "curl",
        "#!/bin/sh\nwhile [ $# -gt 1 ]; do [ \"$1\" = -o ] && out=$2; shift; done\n\
         case \"$1\" in https://github.com/example/pinaudit/releases/download/v0.1.0/*) ;; *) exit 22 ;; esac\n\
         cp \"$RELEASE/$(basename \"$1\")\" \"$out\"\n",
    );
    // cargo install --locked --path P --root R: a binary in R/bin.
    tool(
        "cargo",
        "#!/bin/sh\necho \"cargo $*\" >> \"$CARGO_CALLS\"\n\
         while [ $# -gt 1 ]; do [ \"$1\" = --root ] && root=$2; shift; done\n\
         mkdir -p \"$root/bin\" && printf '#!/bin/sh\\necho built\\n' > \"$root/bin/pinaudit\" && chmod +x \"$root/bin/pinaudit\"\n",
    );
    // Where the runner checks a remote action out; the release repository is
    // read from this path.
    let action_dir = ws.path().join("_actions/example/pinaudit/0123abc");
    std::fs::create_dir_all(&action_dir).expect("mkdir");
    std::fs::write(
        action_dir.join("Cargo.toml"),
        "[package]\nname = \"pinaudit\"\nversion = \"0.1.0\"\n",
    )
    .expect("write");
    let install = |sums: &str, temp: Option<tempfile::TempDir>| {
        std::fs::write(release.join("SHA256SUMS"), sums).expect("write");
        let temp = temp.unwrap_or_else(|| tempfile::tempdir().expect("temp"));
        let _ = std::fs::remove_file(temp.path().join("output"));
        let _ = std::fs::remove_file(temp.path().join("cargo-calls"));
        let calls = temp.path().join("cargo-calls");
        let output = temp.path().join("output");
        let env = [
            (
                "PATH",
                format!(
                    "{}:{}",
                    bin.display(),
                    std::env::var("PATH").unwrap_or_default()
                ),
            ),
            ("RELEASE", release.display().to_string()),
            ("CARGO_CALLS", calls.display().to_string()),
            ("ACTION_PATH", action_dir.display().to_string()),
            ("ACTION_REPOSITORY", String::new()),
            ("REPOSITORY", String::new()),
            ("VERSION", String::new()),
            ("BINARY", String::new()),
            ("RUNNER_OS", "Linux".into()),
            ("RUNNER_ARCH", "X64".into()),
            ("RUNNER_TEMP", temp.path().display().to_string()),
            ("GITHUB_OUTPUT", output.display().to_string()),
        ];
        let (code, text) = run_step(&run_scripts("action.yml")["install"], ws.path(), &env);
        assert_eq!(code, 0, "{text}");
        let outs = outputs(&output);
        let installed = std::fs::read_to_string(&outs["bin"]).unwrap_or_default();
        let built = outs.get("built").cloned().unwrap_or_default();
        (
            text,
            installed,
            std::fs::read_to_string(&calls).unwrap_or_default() + &built,
            temp,
        )
    };
    let archive = std::fs::read(release.join(format!("{name}.tar.gz"))).expect("archive");
    let digest = crate::common::forge::sha256_hex(&archive);
    let (text, installed, calls, _t) = install(&format!("{digest}  {name}.tar.gz\n"), None);
    assert!(installed.contains("released"), "{text}");
    assert_eq!(calls, "", "no build when the release checks:\n{text}");
    let wrong = "0".repeat(64);
    let (text, installed, calls, temp) = install(&format!("{wrong}  {name}.tar.gz\n"), None);
    assert!(installed.contains("built"), "{text}");
    assert!(text.contains("is not the one SHA256SUMS lists"), "{text}");
    assert!(
        calls.starts_with("cargo install --locked --path") && calls.ends_with("true"),
        "built, and said so for the cache to keep: {calls}"
    );
    // The next run restores that build (the runner's `pinaudit-build`): no cargo.
    let (text, installed, calls, _t) = install(&format!("{wrong}  {name}.tar.gz\n"), Some(temp));
    assert!(installed.contains("built"), "{text}");
    assert_eq!(calls, "", "the cached build is used:\n{text}");
    assert!(text.contains("using the build cached"), "{text}");
}

/// The action never sets `PINAUDIT_CACHE_KEY` to an empty string (which would
/// also hide the workflow's own): no step's `env` names it, and the audit step
/// exports the `cache-secret` input only when one is given; otherwise what the
/// workflow set reaches pinaudit.
#[test]
fn the_action_passes_the_cache_secret_only_when_given() {
    let text = std::fs::read_to_string(repo_root().join("action.yml")).expect("action.yml");
    assert!(
        !text
            .lines()
            .any(|l| l.trim_start().starts_with("PINAUDIT_CACHE_KEY:")),
        "a step env sets PINAUDIT_CACHE_KEY"
    );
    // A pinaudit that says which key it got.
    let ws = Scratch::new();
    let fake = ws.write(
        "fake-pinaudit",
        "#!/bin/sh\necho \"key=[${PINAUDIT_CACHE_KEY-unset}]\" >&2\n\
         while [ $# -gt 0 ]; do [ \"$1\" = --output ] && echo '{}' > \"$2\"; shift; done\n",
    );
    let fake = ws.path().join(fake);
    std::fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .expect("chmod");
    let temp = tempfile::tempdir().expect("temp");
    let summary = temp.path().join("summary");
    let run = |inputs: &[(&str, String)]| {
        let mut all = vec![("PINAUDIT", fake.display().to_string())];
        all.extend(inputs.iter().cloned());
        audit_step(ws.path(), temp.path(), &summary, &all).1
    };
    let given = run(&[("CACHE_SECRET", "s3cret".into())]);
    assert!(given.contains("key=[s3cret]"), "{given}");
    let inherited = run(&[
        ("CACHE_SECRET", String::new()),
        ("PINAUDIT_CACHE_KEY", "from-the-workflow".into()),
    ]);
    assert!(inherited.contains("key=[from-the-workflow]"), "{inherited}");
    // Never emptied (the test runner's own key stands).
    let none = run(&[("CACHE_SECRET", String::new())]);
    assert!(
        !none.contains("key=[]") && none.contains("key=[pinaudit tests]"),
        "{none}"
    );
}

/// The nightly example installs pinaudit once a run, in one job, and hands the
/// binary to the others.
#[test]
fn the_nightly_example_installs_pinaudit_once() {
    let text = std::fs::read_to_string(repo_root().join("examples/scheduled-recheck.yml"))
        .expect("the example");
    let installs = text.matches("install-only: \"true\"").count();
    let builds = text.matches("cargo install").count();
    assert_eq!((installs, builds), (1, 0), "{text}");
    // The shards and the report take the binary the install job uploaded.
    assert_eq!(text.matches("name: pinaudit-bin").count(), 3, "{text}");
    assert!(text.contains("binary: ${{ runner.temp }}/pinaudit-bin/pinaudit"));
    assert!(text.contains("cache-secret: ${{ secrets.PINAUDIT_CACHE_KEY }}"));
}
