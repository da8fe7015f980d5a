//! `line-out-of-range`, `value-missing`, `value-shifted`, the claim statuses, and
//! `upstream-changed` / `value-superseded`, end to end: the real binary, fixture
//! repositories served by `git daemon` on loopback, `--rewrite` from GitHub.
//!
//! First the seed record (`tests/data/seed.txt`) against a repository that
//! reproduces the documents it cites, then one small fixture per matching rule of
//! DESIGN.md, "When a value is on the line".

mod common;

use std::path::Path;
use std::sync::OnceLock;

use git2::Oid;
use pinaudit::fetch::sha256_hex;
use serde_json::{json, Value};

use common::run::{codes, with_code};
use common::seed::{readme_updated, seed_pinned_to, Remote, Workdir, DAY, SEED_COMMIT_TIME};

/// Claim label → status the seed's figures must have against the fixture.
const SEED_STATUSES: [(&str, &str); 8] = [
    ("steady decode", "rounded"),
    ("8K prefill", "verified"),
    ("32K prefill", "verified"),
    ("131K prefill", "verified"),
    ("GSM8K local subset", "verified"),
    ("HumanEval initial local subset", "verified"),
    ("HumanEval timeout retries", "verified"),
    ("HumanEval local after selected retries", "verified"),
];

/// Source ids of the seed, in input order.
const SEED_SOURCES: [&str; 6] = [
    "kimi-iq1s-readme",
    "kimi-iq1s-extra0",
    "kimi-iq1s-extra1",
    "kimi-iq1s-extra2",
    "kimi-iq1s-extra3",
    "kimi-iq1s-extra4",
];

fn claims(report: &Value) -> Vec<Value> {
    report["records"][0]["claims"]
        .as_array()
        .expect("`claims` is an array")
        .clone()
}

fn claim<'r>(report: &'r Value, label: &str) -> &'r Value {
    report["records"][0]["claims"]
        .as_array()
        .expect("`claims` is an array")
        .iter()
        .find(|c| c["label"] == label)
        .unwrap_or_else(|| panic!("no claim `{label}` in {report:#}"))
}

fn assert_seed_claims(report: &Value) {
    let got: Vec<(String, String)> = claims(report)
        .iter()
        .map(|c| {
            (
                c["label"].as_str().unwrap_or("?").to_string(),
                c["status"].as_str().unwrap_or("?").to_string(),
            )
        })
        .collect();
    let want: Vec<(String, String)> = SEED_STATUSES
        .iter()
        .map(|(l, s)| (l.to_string(), s.to_string()))
        .collect();
    assert_eq!(got, want, "claim statuses");
    assert_eq!(report["summary"]["verified_claims"], 8, "{report:#}");
    // Each figure was found on the line the seed cites.
    for (label, line) in [
        ("steady decode", 43),
        ("8K prefill", 44),
        ("131K prefill", 46),
        ("GSM8K local subset", 5),
        ("HumanEval timeout retries", 6),
        ("HumanEval local after selected retries", 83),
    ] {
        assert_eq!(claim(report, label)["found_line"], line, "{label}");
    }
    assert_eq!(
        claim(report, "steady decode")["line_text"],
        "| steady decode | ~2.9 tok/s |"
    );
    for code in ["value-missing", "value-shifted", "line-out-of-range"] {
        assert!(with_code(report, code).is_empty(), "unexpected {code}");
    }
}

/// The seed pinned to `commit` (the fixture's), audited in `work`.
fn audit_seed(work: &Workdir, remote: &Remote, commit: Oid) -> common::run::Run {
    let record = work.write("records/seed.md", seed_pinned_to(&commit.to_string()));
    work.audit(&remote.rewrite(), &[&record])
}

fn assert_seed_sources_checked(report: &Value) {
    let sources = report["records"][0]["sources"]
        .as_array()
        .expect("`sources` is an array");
    let ids: Vec<&str> = sources.iter().filter_map(|s| s["id"].as_str()).collect();
    assert_eq!(ids, SEED_SOURCES);
    for s in sources {
        assert_eq!(s["status"], "checked", "{s:#}");
        assert_eq!(s["commit_time"], "2026-08-07T15:45:04Z", "{s:#}");
    }
    assert_eq!(report["summary"]["unchecked_sources"], 0);
    assert_eq!(report["summary"]["complete"], true);
}

#[test]
fn seed_end_to_end_over_loopback() {
    let (remote, commit) = Remote::seed();
    let work = Workdir::new();
    let run = audit_seed(&work, &remote, commit);
    let report = run.report();
    // The hash mismatches are errors.
    assert_eq!(run.code(), 1, "stderr:\n{}", run.stderr);
    assert!(
        !run.stderr.contains("warning:"),
        "a sync problem: {}",
        run.stderr
    );
    assert_eq!(report["summary"]["records"], 1);
    assert_eq!(report["summary"]["sources"], 6);
    assert_eq!(report["summary"]["claims"], 8);
    assert_seed_sources_checked(&report);
    assert_seed_claims(&report);

    // The fixture is not the original: every document's hash differs, and no
    // version of it in the repository has the recorded hash.
    let mismatches = with_code(&report, "hash-mismatch");
    let sources: Vec<&str> = mismatches
        .iter()
        .filter_map(|f| f["source"].as_str())
        .collect();
    assert_eq!(sources, SEED_SOURCES);
    for f in &mismatches {
        let actual = f["evidence"]["actual"].as_str().expect("actual sha256");
        assert_eq!(actual.len(), 64);
        assert_ne!(f["evidence"]["expected"], f["evidence"]["actual"]);
        assert_eq!(f["evidence"]["matching_commit"], Value::Null);
        assert_eq!(f["location"]["revision"], commit.to_string());
    }
    // The README's actual hash is the fixture README's.
    let readme = &report["records"][0]["sources"][0];
    assert_eq!(
        readme["sha256"]["actual"],
        sha256_hex(common::seed::readme().as_bytes())
    );

    // What the record alone says, exactly once each.
    assert_eq!(with_code(&report, "unpinned-weights").len(), 1);
    assert_eq!(with_code(&report, "unpinned-runtime").len(), 1);
    for code in [
        "commit-time-mismatch",
        "revision-missing",
        "revision-unreachable",
        "repository-missing",
        "path-missing",
        "upstream-changed",
        "value-superseded",
    ] {
        assert!(
            with_code(&report, code).is_empty(),
            "unexpected {code}: {:?}",
            codes(&report)
        );
    }
    assert_eq!(
        report["summary"]["findings"],
        json!({"error": 6, "warning": 2, "note": 0}),
        "{:?}",
        codes(&report)
    );
    // The pin is the head: upstream is unchanged for every source.
    for s in report["records"][0]["sources"].as_array().unwrap() {
        assert_eq!(
            s["upstream"],
            json!({"head": commit.to_string(), "changed": false})
        );
    }

    // A scheduled re-check on the warm cache, and one with no network at all,
    // report the same thing.
    let again = audit_seed(&work, &remote, commit);
    assert_eq!(again.code(), 1);
    assert_eq!(again.stdout, run.stdout);
    let mut offline = work.cmd(["audit", "--format", "json", "--offline"]);
    offline.arg("records/seed.md");
    let offline = common::run::run(&mut offline);
    assert_eq!(offline.code(), 1, "stderr:\n{}", offline.stderr);
    assert_eq!(offline.stdout, run.stdout);
}

#[test]
fn seed_upstream_drift_after_a_later_commit() {
    let (remote, pinned) = Remote::seed();
    let head = remote.repo().commit(
        &[("README.md", readme_updated())],
        "Re-measure 8K prefill",
        SEED_COMMIT_TIME + 13 * DAY,
    );
    let work = Workdir::new();
    let run = audit_seed(&work, &remote, pinned);
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
    let mut lines: Vec<String> = common::seed::readme().lines().map(str::to_string).collect();
    assert_eq!(lines[42], "| steady decode | ~2.9 tok/s |");
    lines[42] = "| steady decode | ~3.1 tok/s |".to_string();
    lines.insert(42, "| warm decode | 2.4 tok/s |".to_string());
    lines.insert(42, "| cold decode | 1.1 tok/s |".to_string());
    let head = remote.repo().commit(
        &[("README.md", lines.join("\n") + "\n")],
        "Split decode into cold, warm and steady",
        SEED_COMMIT_TIME + DAY,
    );
    let work = Workdir::new();
    let run = audit_seed(&work, &remote, pinned);
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

// ---------------------------------------------------------------------------
// One rule per document: a small repository whose documents each exercise one
// matching rule, audited once (the daemon stops as soon as the report is in);
// each test reads its own claim and findings from that report.

const CLAIMS_REPO: &str = "bench-lab/claims";
/// 2026-08-06T07:06:40Z (`date -u -d @1786000000`).
const CLAIMS_TIME: i64 = 1_786_000_000;

/// (source id = claim label, path, document).
const CASES: &[(&str, &str, &str)] = &[
    (
        "on-line",
        "on-line.md",
        "# Decode\n\n| steady decode | 2.9 tok/s |\n",
    ),
    (
        "rounded",
        "rounded.md",
        "# Decode\n\n| steady decode | ~2.9 tok/s |\n",
    ),
    (
        "shifted",
        "shifted.md",
        "# Decode\n\nSteady decode, over ten runs:\n\n| steady decode | 2.9 tok/s |\n",
    ),
    (
        "tie",
        "tie.md",
        "# Decode\n\nfirst run: 2.9 tok/s\n\nSteady decode, see the runs around this line.\n\nsecond run: 2.9 tok/s\n",
    ),
    (
        "missing",
        "missing.md",
        "# Decode\n\n| steady decode | 3.4 tok/s |\n\n| batch decode | 7.2 tok/s |\n",
    ),
    (
        "out-of-range",
        "short.md",
        "# Decode\n\n| steady decode | 2.9 tok/s |\n",
    ),
    (
        "range",
        "range.md",
        "# Prefill\n\n| workload | tok/s |\n|---|---|\n| 8K prefill | 79.6 |\n",
    ),
    (
        "row",
        "row.md",
        "# Prefill\n\n| 8K / 32K prefill | 79.6 | 43.9 |\n",
    ),
    (
        "fraction",
        "fraction.json",
        "{\n  \"benchmark\": \"gsm8k\",\n  \"accuracy\": 0.98,\n  \"questions\": 50\n}\n",
    ),
    (
        "ratio",
        "ratio.md",
        "# GSM8K\n\nLocal subset: 49/50\n",
    ),
    (
        "near-miss",
        "near-miss.md",
        "# Decode\n\n| steady decode | 12.9 tok/s |\n\n| batch decode | 2.95 tok/s |\n",
    ),
];

/// A claim citing `lines` of source `source`.
fn rule_claim(label: &str, source: &str, lines: [u32; 2], value: Value, unit: &str) -> Value {
    json!({
        "label": label,
        "source": source,
        "lines": lines,
        "value": value,
        "unit": unit,
    })
}

/// The one report of the rule fixture.
fn rules_report() -> &'static Value {
    static REPORT: OnceLock<Value> = OnceLock::new();
    REPORT.get_or_init(|| {
        let remote = Remote::new(CLAIMS_REPO);
        let files: Vec<(&str, &str)> = CASES.iter().map(|(_, p, d)| (*p, *d)).collect();
        let commit = remote.repo().commit(&files, "Figures", CLAIMS_TIME);
        let sources: Vec<Value> = CASES
            .iter()
            .map(|(id, path, doc)| {
                json!({
                    "id": id,
                    "url": remote.blob_url(commit, path),
                    "repository": remote.github(),
                    "revision": commit.to_string(),
                    "path": path,
                    "sha256": sha256_hex(doc.as_bytes()),
                    "commit_time": "2026-08-06T07:06:40Z",
                })
            })
            .collect();
        let range_url = format!("{}#L3-L5", remote.blob_url(commit, "range.md"));
        let claims = vec![
            rule_claim("on-line", "on-line", [3, 3], json!(2.9), "tokens/s"),
            rule_claim("rounded", "rounded", [3, 3], json!(2.93), "tokens/s"),
            rule_claim("shifted", "shifted", [3, 3], json!(2.9), "tokens/s"),
            rule_claim("tie", "tie", [5, 5], json!(2.9), "tokens/s"),
            rule_claim("missing", "missing", [3, 3], json!(2.9), "tokens/s"),
            rule_claim(
                "out-of-range",
                "out-of-range",
                [40, 40],
                json!(2.9),
                "tokens/s",
            ),
            // No `lines`: the URL's `#L3-L5` anchor says which.
            json!({"label": "range", "source": "range", "url": range_url,
                   "value": 79.6, "unit": "tokens/s"}),
            rule_claim("row 8K", "row", [3, 3], json!(79.6), "tokens/s"),
            rule_claim("row 32K", "row", [3, 3], json!(43.9), "tokens/s"),
            rule_claim("fraction", "fraction", [3, 3], json!(98.0), "percent"),
            json!({"label": "ratio", "source": "ratio", "lines": [3, 3],
                   "value": 98.0, "unit": "percent", "correct": 49, "total": 50}),
            rule_claim("near-miss", "near-miss", [3, 3], json!(2.9), "tokens/s"),
        ];
        let pin = json!({
            "schema": "pinaudit/pins/v1",
            "id": "rules",
            "title": "One matching rule per document",
            "sources": sources,
            "claims": claims,
            "artifacts": [],
        });
        let work = Workdir::new();
        let file = work.write(
            "pins/rules.json",
            serde_json::to_string_pretty(&pin).unwrap(),
        );
        let run = work.audit(&remote.rewrite(), &[Path::new(&file)]);
        // value-missing and line-out-of-range are errors.
        assert_eq!(run.code(), 1, "stderr:\n{}\n{}", run.stderr, run.stdout);
        run.report()
    })
}

/// The findings about claim `label`.
fn findings_of<'r>(report: &'r Value, label: &str) -> Vec<&'r Value> {
    report["findings"]
        .as_array()
        .expect("`findings` is an array")
        .iter()
        .filter(|f| f["claim"] == label)
        .collect()
}

/// The only finding about `label`, which must have `code`.
fn only_finding<'r>(report: &'r Value, label: &str, code: &str) -> &'r Value {
    let found = findings_of(report, label);
    assert_eq!(found.len(), 1, "findings of `{label}`: {found:#?}");
    assert_eq!(found[0]["code"], code, "{:#}", found[0]);
    found[0]
}

fn assert_clean(report: &Value, label: &str) {
    let found = findings_of(report, label);
    assert!(found.is_empty(), "findings of `{label}`: {found:#?}");
}

#[test]
fn rules_fixture_is_itself_sound() {
    let report = rules_report();
    assert_eq!(report["summary"]["complete"], true);
    assert_eq!(report["summary"]["claims"], 12);
    // Hashes and commit times were recorded right: only claim findings remain.
    let mut got = codes(report);
    got.sort();
    assert_eq!(
        got,
        [
            "line-out-of-range",
            "value-missing",
            "value-missing",
            "value-shifted",
            "value-shifted"
        ]
    );
}

#[test]
fn value_on_the_cited_line_is_verified() {
    let report = rules_report();
    let c = claim(report, "on-line");
    assert_eq!(c["status"], "verified");
    assert_eq!(c["found_line"], 3);
    assert_eq!(c["line_text"], "| steady decode | 2.9 tok/s |");
    assert_clean(report, "on-line");
}

#[test]
fn approximate_figure_at_lower_precision_is_rounded() {
    let report = rules_report();
    let c = claim(report, "rounded");
    assert_eq!(c["value"], json!(2.93));
    assert_eq!(c["status"], "rounded");
    assert_eq!(c["found_line"], 3);
    assert_clean(report, "rounded");
}

#[test]
fn value_two_lines_below_is_shifted() {
    let report = rules_report();
    let c = claim(report, "shifted");
    assert_eq!(c["status"], "shifted");
    assert_eq!(c["found_line"], 5);
    let f = only_finding(report, "shifted", "value-shifted");
    assert_eq!(f["severity"], "warning");
    assert_eq!(f["source"], "shifted");
    assert_eq!(f["location"]["path"], "shifted.md");
    assert_eq!(f["location"]["line"], 3);
    assert_eq!(f["evidence"]["nearest_line"], 5);
    assert_eq!(
        f["evidence"]["nearest_text"],
        "| steady decode | 2.9 tok/s |"
    );
    assert_eq!(f["evidence"]["cited_text"], "Steady decode, over ten runs:");
    assert_eq!(f["evidence"]["cited_lines"], json!([3, 3]));
}

#[test]
fn equally_near_lines_tie_to_the_earlier() {
    let report = rules_report();
    let c = claim(report, "tie");
    assert_eq!(c["status"], "shifted");
    assert_eq!(c["found_line"], 3);
    assert_eq!(c["line_text"], "first run: 2.9 tok/s");
    let f = only_finding(report, "tie", "value-shifted");
    assert_eq!(f["evidence"]["nearest_line"], 3);
    assert_eq!(f["evidence"]["nearest_text"], "first run: 2.9 tok/s");
}

#[test]
fn value_nowhere_is_missing() {
    let report = rules_report();
    let c = claim(report, "missing");
    assert_eq!(c["status"], "missing");
    assert_eq!(c["found_line"], Value::Null);
    let f = only_finding(report, "missing", "value-missing");
    assert_eq!(f["severity"], "error");
    assert_eq!(f["location"]["line"], 3);
    assert_eq!(f["evidence"]["value"], "2.9");
    assert_eq!(f["evidence"]["cited_text"], "| steady decode | 3.4 tok/s |");
}

#[test]
fn line_past_the_end_is_out_of_range() {
    let report = rules_report();
    let c = claim(report, "out-of-range");
    // The cited line does not exist, but the value does: the claim is shifted there.
    assert_eq!(c["status"], "shifted");
    assert_eq!(c["found_line"], 3);
    assert_eq!(c["lines"], json!([40, 40]));
    let f = only_finding(report, "out-of-range", "line-out-of-range");
    assert_eq!(f["severity"], "error");
    assert_eq!(f["location"]["path"], "short.md");
    assert_eq!(f["location"]["line"], 40);
    assert_eq!(f["evidence"]["line_count"], 3);
    // Where the value is, for whoever fixes the citation.
    assert_eq!(f["evidence"]["nearest_line"], 3);
}

#[test]
fn value_on_the_last_line_of_a_range_is_verified() {
    let report = rules_report();
    let c = claim(report, "range");
    assert_eq!(c["lines"], json!([3, 5]));
    assert_eq!(c["status"], "verified");
    assert_eq!(c["found_line"], 5);
    assert_eq!(c["line_text"], "| 8K prefill | 79.6 |");
    assert_clean(report, "range");
}

#[test]
fn two_claims_on_one_table_row() {
    let report = rules_report();
    for label in ["row 8K", "row 32K"] {
        let c = claim(report, label);
        assert_eq!(c["status"], "verified", "{label}");
        assert_eq!(c["found_line"], 3, "{label}");
        assert_eq!(c["line_text"], "| 8K / 32K prefill | 79.6 | 43.9 |");
        assert_clean(report, label);
    }
}

#[test]
fn percent_claim_found_as_a_fraction() {
    let report = rules_report();
    let c = claim(report, "fraction");
    assert_eq!(c["value"], json!(98.0));
    assert_eq!(c["status"], "verified");
    assert_eq!(c["found_line"], 3);
    assert_eq!(c["line_text"], "\"accuracy\": 0.98,");
    assert_clean(report, "fraction");
}

#[test]
fn score_found_as_correct_over_total() {
    let report = rules_report();
    let c = claim(report, "ratio");
    assert_eq!(c["status"], "verified");
    assert_eq!(c["found_line"], 3);
    assert_eq!(c["line_text"], "Local subset: 49/50");
    assert_clean(report, "ratio");
}

#[test]
fn near_miss_is_not_the_value() {
    // `12.9` and `2.95` both hold the characters `2.9`; neither is 2.9.
    let report = rules_report();
    let c = claim(report, "near-miss");
    assert_eq!(c["status"], "missing");
    assert_eq!(c["found_line"], Value::Null);
    let f = only_finding(report, "near-miss", "value-missing");
    assert_eq!(
        f["evidence"]["cited_text"],
        "| steady decode | 12.9 tok/s |"
    );
}
