//! `--format in-toto`: what an audit verified, as an in-toto Statement v1 for
//! signing (`actions/attest`, `cosign attest-blob`).
//!
//! The statement names what the audit speaks about by digest, so that a reader
//! holding a signed statement can tell whether it is about what they read: each
//! record file (`sha256`) and each cited document read at its pinned commit
//! (`gitCommit`, `gitBlob`, `sha256`, named by its URL at that commit). The
//! predicate (`https://pinaudit.dev/audit-statement/v1`, documented in
//! `docs/statement.md` with its JSON Schema under `docs/schemas/`) says what
//! was verified. Like report v1 it only gains fields, never renames or drops one.
//!
//! Envelope: <https://github.com/in-toto/attestation/blob/main/spec/v1/statement.md>.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{Report, SourceStatus};

/// The envelope's `_type`.
pub(crate) const STATEMENT_TYPE: &str = "https://in-toto.io/Statement/v1";
/// Our predicate's type, versioned like `pinaudit/report/v1`.
pub(crate) const PREDICATE_TYPE: &str = "https://pinaudit.dev/audit-statement/v1";

/// An in-toto Statement v1 with the pinaudit predicate.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Statement {
    #[serde(rename = "_type")]
    pub(crate) type_: String,
    pub(crate) subject: Vec<Subject>,
    #[serde(rename = "predicateType")]
    pub(crate) predicate_type: String,
    pub(crate) predicate: Predicate,
}

/// An in-toto ResourceDescriptor as a subject: a name and its digests
/// (algorithm → lowercase hex).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Subject {
    pub(crate) name: String,
    pub(crate) digest: BTreeMap<String, String>,
}

/// What the audit verified.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Predicate {
    pub(crate) tool: ToolEntry,
    /// When the audit ran (RFC 3339).
    pub(crate) generated_at: String,
    /// What made the audit pass or fail.
    pub(crate) policy: PolicyEntry,
    /// Every source was judged and every input read.
    pub(crate) complete: bool,
    /// The report v1 summary's counts.
    pub(crate) summary: Value,
    /// Each record file read, with its digest.
    pub(crate) records: Vec<RecordEntry>,
    /// Each cited document, as the audit found it.
    pub(crate) documents: Vec<DocumentEntry>,
    /// Every claim's verdict.
    pub(crate) claims: Vec<ClaimEntry>,
    /// Every finding's code and fingerprint.
    pub(crate) findings: Vec<FindingEntry>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct ToolEntry {
    pub(crate) name: String,
    pub(crate) version: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct PolicyEntry {
    /// `--fail-on`: `error`, `warning`, `note` or `never`.
    pub(crate) fail_on: String,
    /// The `--baseline` report, by path and digest, or `null`.
    pub(crate) baseline: Option<FileEntry>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct FileEntry {
    pub(crate) path: String,
    pub(crate) sha256: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct RecordEntry {
    pub(crate) id: String,
    pub(crate) file: String,
    /// `null` when the file could not be read again (a record from stdin).
    pub(crate) sha256: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct DocumentEntry {
    pub(crate) record: String,
    pub(crate) source: String,
    /// The subject name: the document's page at the pinned commit.
    pub(crate) name: String,
    pub(crate) repository: Option<String>,
    pub(crate) revision: Option<String>,
    pub(crate) path: Option<String>,
    /// `checked`, `absent` or `unchecked`, as in report v1.
    pub(crate) status: String,
    pub(crate) sha256: Option<String>,
    pub(crate) git_blob: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct ClaimEntry {
    pub(crate) record: String,
    pub(crate) label: String,
    pub(crate) source: Option<String>,
    pub(crate) lines: Option<[u32; 2]>,
    pub(crate) value: Option<Value>,
    pub(crate) unit: Option<String>,
    /// `verified`, `rounded`, `shifted`, `missing` or `unchecked`.
    pub(crate) status: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct FindingEntry {
    pub(crate) code: String,
    pub(crate) severity: String,
    pub(crate) record: String,
    pub(crate) source: Option<String>,
    pub(crate) claim: Option<String>,
    pub(crate) fingerprint: String,
    /// Counted toward the exit status (not baseline, not ignored).
    pub(crate) counted: bool,
}

/// The sha256 of a file's bytes, if it can be read.
pub(crate) fn file_sha256(path: &std::path::Path) -> Option<String> {
    std::fs::read(path)
        .ok()
        .map(|b| pinaudit_core::hash::sha256_hex(&b))
}

/// The subject name of a source: its page at the pinned commit, else its URL.
pub(crate) fn document_name(s: &super::SourceReport) -> String {
    s.revision
        .as_deref()
        .and_then(|rev| {
            crate::record::url::source_web_url(
                s.url.as_deref(),
                s.repository.as_deref(),
                s.path.as_deref(),
                rev,
                None,
            )
        })
        .or_else(|| s.url.clone())
        .unwrap_or_else(|| s.id.clone())
}

/// Builds the statement of a report. Record files (and the baseline) are read
/// again to hash them; one that cannot be read has no subject.
pub(crate) fn statement(report: &Report, opts: &super::RenderOptions) -> Statement {
    let mut subject: Vec<Subject> = Vec::new();
    let mut push = |s: Subject| {
        if !subject.contains(&s) {
            subject.push(s);
        }
    };
    let mut records = Vec::new();
    let mut documents = Vec::new();
    let mut claims = Vec::new();
    for r in &report.records {
        let sha256 = (r.file != "-")
            .then(|| file_sha256(std::path::Path::new(&r.file)))
            .flatten();
        if let Some(h) = &sha256 {
            push(Subject {
                name: r.file.clone(),
                digest: BTreeMap::from([("sha256".to_string(), h.clone())]),
            });
        }
        records.push(RecordEntry {
            id: r.id.clone(),
            file: r.file.clone(),
            sha256,
        });
        for s in &r.sources {
            let name = document_name(s);
            if s.status == SourceStatus::Checked {
                let mut digest = BTreeMap::new();
                if let Some(h) = &s.sha256.actual {
                    digest.insert("sha256".to_string(), h.clone());
                }
                if let Some(b) = &s.git_blob {
                    digest.insert("gitBlob".to_string(), b.clone());
                }
                if let Some(c) = s.revision.as_ref().filter(|_| s.git_blob.is_some()) {
                    digest.insert("gitCommit".to_string(), c.clone());
                }
                if !digest.is_empty() {
                    push(Subject {
                        name: name.clone(),
                        digest,
                    });
                }
            }
            documents.push(DocumentEntry {
                record: r.id.clone(),
                source: s.id.clone(),
                name,
                repository: s.repository.clone(),
                revision: s.revision.clone(),
                path: s.path.clone(),
                status: match s.status {
                    SourceStatus::Checked => "checked",
                    SourceStatus::Absent => "absent",
                    SourceStatus::Unchecked => "unchecked",
                }
                .to_string(),
                sha256: s.sha256.actual.clone(),
                git_blob: s.git_blob.clone(),
            });
        }
        for c in &r.claims {
            claims.push(ClaimEntry {
                record: r.id.clone(),
                label: c.label.clone(),
                source: c.source.clone(),
                lines: c.lines,
                value: c.value.clone(),
                unit: c.unit.clone(),
                status: c.status.as_str().to_string(),
            });
        }
    }
    let findings = report
        .findings
        .iter()
        .map(|f| FindingEntry {
            code: f.code.as_str().to_string(),
            severity: f.severity.to_string(),
            record: f.record.clone(),
            source: f.source.clone(),
            claim: f.claim.clone(),
            fingerprint: super::fingerprint_of(f),
            counted: f.counts(),
        })
        .collect();
    Statement {
        type_: STATEMENT_TYPE.to_string(),
        subject,
        predicate_type: PREDICATE_TYPE.to_string(),
        predicate: Predicate {
            tool: ToolEntry {
                name: report.tool.name.to_string(),
                version: report.tool.version.to_string(),
            },
            generated_at: report.generated_at.clone(),
            policy: PolicyEntry {
                fail_on: opts.fail_on.unwrap_or("error").to_string(),
                baseline: opts.baseline.map(|p| FileEntry {
                    path: p.display().to_string(),
                    sha256: file_sha256(p),
                }),
            },
            complete: report.summary.complete,
            summary: serde_json::to_value(&report.summary).unwrap_or(Value::Null),
            records,
            documents,
            claims,
            findings,
        },
    }
}

pub(crate) fn write(report: &Report, opts: &super::RenderOptions, out: &mut super::Out) {
    match serde_json::to_writer_pretty(out.io(), &statement(report, opts)) {
        Ok(()) => out.push('\n'),
        Err(e) => out.fail(e.into()),
    }
}
