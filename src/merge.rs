//! `pinaudit merge REPORT...`: shard reports back into one v1 report.
//!
//! Each shard of `audit --shard K/N` writes a whole v1 report of its records.
//! Merging works on the JSON itself, so that it keeps every field a shard wrote,
//! those added to v1 after this was written included: records are put back in
//! the order a directory walk gives (by file path), each record's findings
//! follow it in its shard's order, findings of unreadable inputs come last,
//! and the summary is derived again from the merged parts, as
//! [`crate::report::Report::new`] derives it.
//!
//! SARIF logs of shards (`--format sarif`) merge the same way into one log of
//! one run, so that code scanning sees one analysis: results in walk order of
//! their record files, rules united (each result's `ruleIndex` pointing into
//! them), one invocation that succeeded only if every shard's did, and the
//! unsharded `automationDetails.id`.

use std::cmp::Ordering;
use std::path::Path;

use serde_json::{json, Map, Value};

use crate::report::SCHEMA;

/// Why shard reports could not be merged.
#[derive(Debug, thiserror::Error)]
pub(crate) enum MergeError {
    #[error("cannot read `{0}`: {1}")]
    Read(String, std::io::Error),
    #[error("`{0}` is not JSON: {1}")]
    Json(String, serde_json::Error),
    #[error("`{0}` is not a `{SCHEMA}` report (its `schema` is {1})")]
    Schema(String, String),
    #[error("`{0}` is SARIF and `{1}` is not: merge JSON reports or SARIF logs, not both")]
    Mixed(String, String),
}

impl MergeError {
    pub(crate) fn hint(&self) -> &'static str {
        match self {
            MergeError::Read(..) => {
                "pass the files each shard wrote with `--format json --output FILE`"
            }
            MergeError::Json(..) | MergeError::Schema(..) => {
                "merge JSON reports (`--format json`) or SARIF logs (`--format sarif`)"
            }
            MergeError::Mixed(..) => {
                "run `merge` once for the JSON reports and once for the SARIF logs"
            }
        }
    }
}

/// Whether `v` is a SARIF log (what `--format sarif` writes).
fn is_sarif(v: &Value) -> bool {
    v.get("version").and_then(Value::as_str) == Some("2.1.0")
        && v.get("runs").is_some_and(Value::is_array)
}

/// Reads and merges report files: v1 reports into one v1 report, SARIF logs
/// into one SARIF log.
pub(crate) fn merge_files(files: &[impl AsRef<Path>]) -> Result<Value, MergeError> {
    let mut reports = Vec::new();
    let mut first_kind: Option<(bool, String)> = None;
    for f in files {
        let f = f.as_ref();
        let shown = f.display().to_string();
        let text = std::fs::read_to_string(f).map_err(|e| MergeError::Read(shown.clone(), e))?;
        let v: Value =
            serde_json::from_str(&text).map_err(|e| MergeError::Json(shown.clone(), e))?;
        let sarif = is_sarif(&v);
        match &first_kind {
            None => first_kind = Some((sarif, shown.clone())),
            Some((first, name)) if *first != sarif => {
                let (s, other) = if *first {
                    (name.clone(), shown)
                } else {
                    (shown, name.clone())
                };
                return Err(MergeError::Mixed(s, other));
            }
            Some(_) => {}
        }
        if sarif {
            reports.push(v);
            continue;
        }
        if v.get("schema").and_then(Value::as_str) != Some(SCHEMA) {
            let got = v
                .get("schema")
                .map_or("missing".to_string(), |s| format!("`{s}`"));
            return Err(MergeError::Schema(shown, got));
        }
        reports.push(v);
    }
    if first_kind.is_some_and(|(sarif, _)| sarif) {
        return Ok(merge_sarif(&reports));
    }
    Ok(merge(&reports))
}

/// The record file a SARIF result stands in.
fn result_file(r: &Value) -> &str {
    r.pointer("/locations/0/physicalLocation/artifactLocation/uri")
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// Merges SARIF logs (already checked to be SARIF 2.1.0) into one log of one run.
pub(crate) fn merge_sarif(logs: &[Value]) -> Value {
    let runs: Vec<&Value> = logs
        .iter()
        .filter_map(|l| l.get("runs").and_then(Value::as_array))
        .flatten()
        .collect();
    let mut run = runs.first().map_or_else(|| json!({}), |r| (*r).clone());
    let mut rules: Vec<Value> = run
        .pointer("/tool/driver/rules")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut results: Vec<Value> = Vec::new();
    for r in &runs {
        let theirs = r
            .pointer("/tool/driver/rules")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        for mut res in arr(r, "results") {
            let id = text(&res, "ruleId").to_string();
            let index = match rules.iter().position(|rule| text(rule, "id") == id) {
                Some(i) => i,
                None => {
                    let rule = theirs
                        .iter()
                        .find(|rule| text(rule, "id") == id)
                        .cloned()
                        .unwrap_or_else(|| json!({"id": id}));
                    rules.push(rule);
                    rules.len() - 1
                }
            };
            res["ruleIndex"] = index.into();
            results.push(res);
        }
    }
    // Shards partition records, so this is the order one unsharded run gives.
    results.sort_by(|a, b| by_path(result_file(a), result_file(b)));
    let successful = runs.iter().all(|r| {
        r.pointer("/invocations/0/executionSuccessful")
            .and_then(Value::as_bool)
            .unwrap_or(false)
    });
    run["tool"]["driver"]["rules"] = Value::Array(rules);
    run["results"] = Value::Array(results);
    run["invocations"] = json!([{"executionSuccessful": successful}]);
    run["automationDetails"] = json!({"id": crate::report::sarif::automation_id(None)});
    let mut log = logs.first().cloned().unwrap_or_else(|| json!({}));
    log["runs"] = json!([run]);
    log
}

fn arr(v: &Value, key: &str) -> Vec<Value> {
    v.get(key)
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

fn text<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

/// Input order as a directory walk sorted by file name gives it.
fn by_path(a: &str, b: &str) -> Ordering {
    Path::new(a).components().cmp(Path::new(b).components())
}

/// Merges v1 reports (already checked to be v1).
pub(crate) fn merge(reports: &[Value]) -> Value {
    let mut records: Vec<Value> = reports.iter().flat_map(|r| arr(r, "records")).collect();
    records.sort_by(|a, b| by_path(text(a, "file"), text(b, "file")));
    let all_findings: Vec<Value> = reports.iter().flat_map(|r| arr(r, "findings")).collect();
    let belongs = |f: &Value, r: &Value| {
        text(f, "record") == text(r, "id")
            && f.get("file")
                .and_then(Value::as_str)
                .is_none_or(|file| file == text(r, "file"))
    };
    let mut findings: Vec<Value> = Vec::new();
    for r in &records {
        findings.extend(all_findings.iter().filter(|f| belongs(f, r)).cloned());
    }
    let mut orphans: Vec<Value> = all_findings
        .iter()
        .filter(|f| !records.iter().any(|r| belongs(f, r)))
        .cloned()
        .collect();
    orphans.sort_by(|a, b| by_path(text(a, "file"), text(b, "file")));
    findings.extend(orphans);

    let sources: Vec<&Value> = records
        .iter()
        .filter_map(|r| r.get("sources").and_then(Value::as_array))
        .flatten()
        .collect();
    let claims: Vec<&Value> = records
        .iter()
        .filter_map(|r| r.get("claims").and_then(Value::as_array))
        .flatten()
        .collect();
    let count = |sev: &str| {
        findings
            .iter()
            .filter(|f| text(f, "severity") == sev)
            .count()
    };
    let unchecked = sources
        .iter()
        .filter(|s| text(s, "status") == "unchecked")
        .count();
    let shards_complete = reports.iter().all(|r| {
        r.pointer("/summary/complete")
            .and_then(Value::as_bool)
            .unwrap_or(false)
    });
    let summary = json!({
        "records": records.len(),
        "sources": sources.len(),
        "claims": claims.len(),
        "verified_claims": claims
            .iter()
            .filter(|c| matches!(text(c, "status"), "verified" | "rounded"))
            .count(),
        "unchecked_sources": unchecked,
        "stale_sources": sources
            .iter()
            .filter(|s| s.get("stale_since").is_some_and(|t| !t.is_null()))
            .count(),
        // As `audit` reckons it: every shard judged all it could (a source that
        // names no full commit is its `unpinned-url` finding, not incompleteness).
        "complete": shards_complete,
        "findings": {"error": count("error"), "warning": count("warning"), "note": count("note")},
        "baseline_findings": findings
            .iter()
            .filter(|f| f.get("baseline").and_then(Value::as_bool) == Some(true))
            .count(),
        "ignored_findings": findings
            .iter()
            .filter(|f| f.get("ignored").is_some_and(|i| !i.is_null()))
            .count(),
        "claims_by_status": {
            "verified": claims.iter().filter(|c| text(c, "status") == "verified").count(),
            "rounded": claims.iter().filter(|c| text(c, "status") == "rounded").count(),
            "shifted": claims.iter().filter(|c| text(c, "status") == "shifted").count(),
            "missing": claims.iter().filter(|c| text(c, "status") == "missing").count(),
            "unchecked": claims.iter().filter(|c| text(c, "status") == "unchecked").count(),
        },
    });
    // The latest shard's time: the merged report is as recent as its newest part.
    let generated_at = reports
        .iter()
        .map(|r| text(r, "generated_at").to_string())
        .max()
        .unwrap_or_default();
    let tool = reports
        .first()
        .and_then(|r| r.get("tool").cloned())
        .unwrap_or_else(|| json!({"name": "pinaudit", "version": env!("CARGO_PKG_VERSION")}));
    let mut out = Map::new();
    out.insert("schema".into(), SCHEMA.into());
    out.insert("tool".into(), tool);
    out.insert("generated_at".into(), generated_at.into());
    out.insert("summary".into(), summary);
    out.insert("records".into(), Value::Array(records));
    out.insert("findings".into(), Value::Array(findings));
    Value::Object(out)
}

/// The exit status the merged report stands for, as `audit` decides it.
pub(crate) fn exit_status(
    report: &Value,
    fail_on: crate::audit::FailOn,
) -> crate::exit::ExitStatus {
    if is_sarif(report) {
        return sarif_exit_status(report, fail_on);
    }
    // Baseline and ignored findings don't count, as in `audit`.
    let n = |sev: &str| {
        report
            .get("findings")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter(|f| text(f, "severity") == sev)
            .filter(|f| f.get("baseline").and_then(Value::as_bool) != Some(true))
            .filter(|f| f.get("ignored").is_none_or(Value::is_null))
            .count()
    };
    let complete = report
        .pointer("/summary/complete")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    verdict(&n, complete, fail_on)
}

/// The exit status of counted findings (`n(severity)`) and completeness.
fn verdict(
    n: &dyn Fn(&str) -> usize,
    complete: bool,
    fail_on: crate::audit::FailOn,
) -> crate::exit::ExitStatus {
    use crate::audit::FailOn;
    use crate::exit::ExitStatus;
    let failed = match fail_on {
        FailOn::Error => n("error") > 0,
        FailOn::Warning => n("error") + n("warning") > 0,
        FailOn::Note => n("error") + n("warning") + n("note") > 0,
        FailOn::Never => false,
    };
    if failed {
        ExitStatus::Findings
    } else if !complete {
        ExitStatus::Incomplete
    } else {
        ExitStatus::Clean
    }
}

/// [`exit_status`] of a merged SARIF log: levels stand for severities,
/// suppressed and baseline results don't count, and an unsuccessful invocation
/// is an incomplete audit.
fn sarif_exit_status(log: &Value, fail_on: crate::audit::FailOn) -> crate::exit::ExitStatus {
    let run = log.pointer("/runs/0").cloned().unwrap_or_default();
    let counted: Vec<Value> = arr(&run, "results")
        .into_iter()
        .filter(|r| {
            r.get("suppressions")
                .is_none_or(|s| s.as_array().is_none_or(Vec::is_empty))
        })
        .filter(|r| text(r, "baselineState") != "unchanged")
        .collect();
    let n = |level: &str| counted.iter().filter(|r| text(r, "level") == level).count();
    let complete = run
        .pointer("/invocations/0/executionSuccessful")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    verdict(&n, complete, fail_on)
}
