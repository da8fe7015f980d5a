//! `pinaudit merge REPORT...`: shard reports back into one v1 report (issue 10).
//!
//! Each shard of `audit --shard K/N` writes a whole v1 report of its records.
//! Merging works on the JSON itself, so that it keeps every field a shard wrote,
//! those added to v1 after this was written included: records are put back in
//! the order a directory walk gives (by file path), each record's findings
//! follow it in its shard's order, findings of unreadable inputs come last,
//! and the summary is derived again from the merged parts, as
//! [`crate::report::Report::new`] derives it.

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
}

impl MergeError {
    pub(crate) fn hint(&self) -> &'static str {
        match self {
            MergeError::Read(..) => {
                "pass the files each shard wrote with `--format json --output FILE`"
            }
            MergeError::Json(..) | MergeError::Schema(..) => {
                "merge only JSON reports: run each shard with `--format json`"
            }
        }
    }
}

/// Reads and merges report files.
pub(crate) fn merge_files(files: &[impl AsRef<Path>]) -> Result<Value, MergeError> {
    let mut reports = Vec::new();
    for f in files {
        let f = f.as_ref();
        let shown = f.display().to_string();
        let text = std::fs::read_to_string(f).map_err(|e| MergeError::Read(shown.clone(), e))?;
        let v: Value =
            serde_json::from_str(&text).map_err(|e| MergeError::Json(shown.clone(), e))?;
        if v.get("schema").and_then(Value::as_str) != Some(SCHEMA) {
            let got = v
                .get("schema")
                .map_or("missing".to_string(), |s| format!("`{s}`"));
            return Err(MergeError::Schema(shown, got));
        }
        reports.push(v);
    }
    Ok(merge(&reports))
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
        "complete": shards_complete && unchecked == 0,
        "findings": {"error": count("error"), "warning": count("warning"), "note": count("note")},
        "baseline_findings": findings
            .iter()
            .filter(|f| f.get("baseline").and_then(Value::as_bool) == Some(true))
            .count(),
        "ignored_findings": findings
            .iter()
            .filter(|f| f.get("ignored").is_some_and(|i| !i.is_null()))
            .count(),
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
    use crate::audit::FailOn;
    use crate::exit::ExitStatus;
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
    let failed = match fail_on {
        FailOn::Error => n("error") > 0,
        FailOn::Warning => n("error") + n("warning") > 0,
        FailOn::Note => n("error") + n("warning") + n("note") > 0,
        FailOn::Never => false,
    };
    let complete = report
        .pointer("/summary/complete")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    if failed {
        ExitStatus::Findings
    } else if !complete {
        ExitStatus::Incomplete
    } else {
        ExitStatus::Clean
    }
}
