//! `line-out-of-range`, `value-missing`, `value-shifted` and the claim statuses,
//! end to end: the real binary, fixture repositories served by `git daemon` on
//! loopback, `--rewrite` from GitHub. (Drift at the head is in `drift`.)
//!
//! First the seed record (`tests/data/seed.txt`) against a repository that
//! reproduces the documents it cites, then one small fixture per matching rule of
//! README, "How it works": matching.

use std::ffi::OsStr;
use std::sync::OnceLock;

use pinaudit::fetch::sha256_hex;
use serde_json::{json, Value};

use crate::common::run::{codes, with_code};
use crate::common::scratch::Scratch;
use crate::common::seed::{
    assert_seed_claims, assert_seed_sources_checked, audit_served_seed, claim, Remote, SEED_SOURCES,
};

#[test]
fn seed_end_to_end_over_loopback() {
    let (remote, commit) = Remote::seed();
    let work = Scratch::new();
    let run = audit_served_seed(&work, &remote, commit);
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
        sha256_hex(crate::common::seed::readme().as_bytes())
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
    let again = audit_served_seed(&work, &remote, commit);
    assert_eq!(again.code(), 1);
    assert_eq!(again.stdout, run.stdout);
    let mut offline = work.cached("audit");
    offline.args(["--format", "json", "--offline", "records/seed.md"]);
    let offline = crate::common::run::run(&mut offline);
    assert_eq!(offline.code(), 1, "stderr:\n{}", offline.stderr);
    assert_eq!(offline.stdout, run.stdout);
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
        let work = Scratch::new();
        let file = work.write(
            "pins/rules.json",
            serde_json::to_string_pretty(&pin).unwrap(),
        );
        let run = work.audit([
            OsStr::new("--rewrite"),
            OsStr::new(&remote.rewrite()),
            file.as_os_str(),
        ]);
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
