//! `--format sarif`: SARIF 2.1.0 for code scanning.
//!
//! One rule per finding code, described from the code table; one result per
//! finding, located at the line of the record file that states what is wrong,
//! so that code scanning annotates the line under review. The cited document's
//! line, at the pinned commit (or the head, for drift), is a related location.
//! `partialFingerprints` carry the finding's fingerprint so that alerts follow a
//! finding across runs. Ignored findings carry a suppression with their reason
//! and baseline ones `baselineState: unchanged`, so code scanning closes them.
//! A finding about a checked git source also carries the source's durable
//! citation: its SWHID in the result's properties (`swhid`), and the archive's
//! page for it as a second related location.
//! The run's `automationDetails.id` is `pinaudit/`, or `pinaudit/shard-K-of-N/`
//! for one shard, so that code scanning keeps shards apart until `merge` makes
//! them one run again.

use serde::Serialize;
use serde_json::{json, Map, Value};

use super::{fingerprint_of, FindingReport};
use crate::finding::{Code, Severity};

const SCHEMA_URI: &str = "https://json.schemastore.org/sarif-2.1.0.json";

/// Where a code is explained: the finding-code table of `docs/reference.md`, when the package
/// says where its repository is (a `helpUri` must be absolute). `pinaudit explain
/// CODE` says the same offline.
fn help_uri() -> Option<String> {
    let repo = option_env!("CARGO_PKG_REPOSITORY").filter(|r| !r.is_empty())?;
    Some(format!(
        "{}/blob/main/docs/reference.md#finding-codes",
        repo.trim_end_matches('/')
    ))
}

fn level(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Note => "note",
    }
}

fn rule(code: Code) -> Value {
    let m = code.meta();
    let mut r = json!({
        "id": m.id,
        "name": m.id,
        "shortDescription": {"text": m.summary},
        "fullDescription": {"text": m.means},
        "help": {"text": m.fix},
        "defaultConfiguration": {"level": level(m.severity)},
    });
    if let (Some(uri), Some(o)) = (help_uri(), r.as_object_mut()) {
        o.insert("helpUri".into(), Value::String(uri));
    }
    r
}

/// A record file path as a relative URI reference (SARIF §3.10): `/`-separated,
/// percent-encoded where a URI needs it.
fn uri_of(path: &str) -> String {
    const KEEP: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
        .remove(b'/')
        .remove(b'-')
        .remove(b'_')
        .remove(b'.')
        .remove(b'~');
    let path = path.replace('\\', "/");
    let encoded = percent_encoding::utf8_percent_encode(&path, KEEP).to_string();
    if encoded.starts_with('/') {
        format!("file://{encoded}")
    } else {
        encoded
    }
}

fn result(f: &FindingReport, rule_index: usize, swhid: Option<&str>) -> Value {
    let at = f.record_position();
    let mut properties = Map::new();
    properties.insert("record".into(), f.record.clone().into());
    if let Some(s) = &f.source {
        properties.insert("source".into(), s.clone().into());
    }
    if let Some(c) = &f.claim {
        properties.insert("claim".into(), c.clone().into());
    }
    properties.insert("hint".into(), f.hint.clone().into());
    properties.insert("evidence".into(), Value::Object(f.evidence.clone()));
    if let Some(swhid) = swhid {
        properties.insert("swhid".into(), swhid.into());
    }
    let mut r = json!({
        "ruleId": f.code.as_str(),
        "ruleIndex": rule_index,
        "level": level(f.severity),
        "message": {"text": f.message},
        "locations": [{
            "physicalLocation": {
                "artifactLocation": {"uri": uri_of(&at.file)},
                "region": {"startLine": at.line, "startColumn": at.column},
            }
        }],
        "partialFingerprints": {"pinauditFingerprint/v1": fingerprint_of(f)},
        "properties": properties,
    });
    if let Some(o) = r.as_object_mut() {
        if let Some(ignored) = &f.ignored {
            o.insert(
                "suppressions".into(),
                json!([{"kind": "external", "justification": ignored.reason}]),
            );
        }
        if f.baseline {
            o.insert("baselineState".into(), "unchanged".into());
        }
    }
    let mut related = Vec::new();
    if let Some(url) = f.web_url() {
        let mut region = Map::new();
        if let Some(line) = f.location.line {
            region.insert("startLine".into(), line.into());
        }
        let mut physical = json!({"artifactLocation": {"uri": url}});
        if !region.is_empty() {
            physical["region"] = Value::Object(region);
        }
        related.push(json!({
            "id": 1,
            "physicalLocation": physical,
            "message": {"text": "the cited line"},
        }));
    }
    if let Some(swhid) = swhid {
        related.push(json!({
            "id": 2,
            "physicalLocation": {"artifactLocation": {
                "uri": format!("{}{swhid}", crate::swhid::ARCHIVE_WEB)
            }},
            "message": {"text": "the cited document's durable citation (Software Heritage)"},
        }));
    }
    if let (false, Some(o)) = (related.is_empty(), r.as_object_mut()) {
        o.insert("relatedLocations".into(), Value::Array(related));
    }
    r
}

/// The SWHID of the source finding `f` is about, among the records it may be
/// about (record ids need not be unique: the finding's file decides).
fn swhid_of<'a>(f: &FindingReport, about: &[&'a super::RecordReport]) -> Option<&'a str> {
    let source = f.source.as_deref()?;
    let mut found = about.iter().filter(|r| r.id == f.record).filter_map(|r| {
        let s = r.sources.iter().find(|s| s.id == source)?;
        Some((r.file.as_str(), s.swhid.as_deref()?))
    });
    let first = found.next()?;
    std::iter::once(first)
        .chain(found)
        .find(|(file, _)| f.file.as_deref() == Some(*file))
        .or(Some(first))
        .map(|(_, swhid)| swhid)
}

/// The run's `automationDetails.id`: code scanning takes what comes before its
/// last `/` as the analysis category.
pub(crate) fn automation_id(shard: Option<crate::shard::Shard>) -> String {
    match shard {
        Some(s) => format!("pinaudit/shard-{}/", s.to_string().replace('/', "-of-")),
        None => "pinaudit/".to_string(),
    }
}

/// The SARIF log, in the order its keys are written.
#[derive(Serialize)]
struct Log {
    #[serde(rename = "$schema")]
    schema: &'static str,
    version: &'static str,
    runs: [Run; 1],
}

#[derive(Serialize)]
struct Run {
    tool: Value,
    #[serde(rename = "automationDetails")]
    automation_details: Value,
    // Record columns count characters (Unicode code points).
    #[serde(rename = "columnKind")]
    column_kind: &'static str,
    /// A marker where the results go: each is built only when it is written
    /// (the whole log as one JSON value took 2.7 GB for 100,000 records).
    results: &'static str,
    invocations: Value,
}

const RESULTS: &str = "@pinaudit-results@";

/// The run's one invocation: whether the audit was complete, and when a forge
/// could not be reached and the cache stood in, a warning notification saying so
/// ("3 source(s) judged from the cache of 2026-11-30: forge unreachable") and the
/// count in its properties, as every format's summary says it.
fn invocation(totals: &super::Totals) -> Value {
    let mut invocation = json!({"executionSuccessful": totals.summary.complete});
    if let Some(stale) = super::text::stale_line(totals) {
        invocation["toolExecutionNotifications"] = json!([{
            "level": "warning",
            "message": {"text": stale},
        }]);
        invocation["properties"] = json!({"staleSources": totals.summary.stale_sources});
    }
    json!([invocation])
}

/// The log around its results: before them and after.
fn skeleton(totals: &super::Totals, opts: &super::RenderOptions) -> (String, String) {
    let rules: Vec<Value> = Code::ALL.iter().map(|c| rule(*c)).collect();
    let mut driver = json!({
        "name": "pinaudit",
        "semanticVersion": env!("CARGO_PKG_VERSION"),
        "version": env!("CARGO_PKG_VERSION"),
        "rules": rules,
    });
    if let Some(repo) = option_env!("CARGO_PKG_REPOSITORY").filter(|r| !r.is_empty()) {
        driver["informationUri"] = Value::String(repo.to_string());
    }
    let log = Log {
        schema: SCHEMA_URI,
        version: "2.1.0",
        runs: [Run {
            tool: json!({"driver": driver}),
            automation_details: json!({"id": automation_id(opts.shard)}),
            column_kind: "unicodeCodePoints",
            results: RESULTS,
            invocations: invocation(totals),
        }],
    };
    let whole = serde_json::to_string_pretty(&log).unwrap_or_default();
    match whole.split_once(&format!("\"{RESULTS}\"")) {
        Some((head, tail)) => (head.to_string(), format!("{tail}\n")),
        None => (whole, String::new()),
    }
}

pub(crate) const FORMAT: &dyn super::Streamed = &Sarif;

struct Sarif;

/// The depth of a result in the log (`runs[0].results[i]`).
const RESULT_DEPTH: usize = 4;

impl super::Streamed for Sarif {
    fn name(&self) -> &'static str {
        "sarif"
    }

    fn grouped(&self) -> bool {
        false
    }

    fn separator(&self, first: bool) -> &'static str {
        super::json::array_separator(first)
    }

    fn record(
        &self,
        _: &super::RecordReport,
        _: &[&FindingReport],
        _: &super::RenderOptions,
        _: &mut [super::Out],
    ) {
    }

    fn findings(
        &self,
        findings: &[&FindingReport],
        about: &[&super::RecordReport],
        _: &super::RenderOptions,
        parts: &mut [super::Out],
    ) {
        for (i, f) in findings.iter().enumerate() {
            if i > 0 {
                parts[0].push_str(",\n");
            }
            let index = Code::ALL.iter().position(|c| *c == f.code).unwrap_or(0);
            let swhid = swhid_of(f, about);
            super::json::element(&result(f, index, swhid), RESULT_DEPTH, &mut parts[0]);
        }
    }

    /// The head says nothing only the end knows (the invocation comes after
    /// the results).
    fn open(
        &self,
        _: usize,
        totals: &super::Totals,
        opts: &super::RenderOptions,
        out: &mut super::Out,
    ) {
        out.push_str(&skeleton(totals, opts).0);
        out.push('[');
    }

    fn close(
        &self,
        _: usize,
        empty: bool,
        totals: &super::Totals,
        opts: &super::RenderOptions,
        out: &mut super::Out,
    ) {
        out.push_str(if empty { "]" } else { "\n      ]" });
        out.push_str(&skeleton(totals, opts).1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_paths_become_relative_uri_references() {
        assert_eq!(uri_of("pins/a b.json"), "pins/a%20b.json");
        assert_eq!(uri_of("records\\x#1.md"), "records/x%231.md");
        assert_eq!(uri_of("/abs/x.json"), "file:///abs/x.json");
    }
}
