//! Pin files (`pins/*.json`, schema `pinaudit/pins/v1`): pinaudit's own record format.
//!
//! One record per file. `import` writes them from record documents and people write
//! them by hand, so reading is lenient (one bad field is one `invalid-record` problem,
//! not a lost file) and writing is canonical: every key, in a fixed order, so that a
//! pin file round-trips without loss and diffs stay small. The JSON Schema is
//! published at `pins/schema.json`.

use std::path::Path;

use serde_json::{json, Map, Number, Value};

use super::lenient::{kind, Problem, Reader};
use super::{Artifact, ArtifactKind, Claim, Record, Recorded, Reference, Revision, Sha256, Source};

pub const SCHEMA: &str = "pinaudit/pins/v1";

/// A pin file read leniently: the record, and what could not be read of it.
#[derive(Debug)]
pub struct Parsed {
    pub record: Record,
    pub problems: Vec<Problem>,
}

/// Reads a pin file's JSON value. `Err` only when the value is not a pin file at all.
pub fn from_value(v: &Value, file: &Path) -> Result<Parsed, Problem> {
    let Some(obj) = v.as_object() else {
        return Err(Problem {
            pointer: String::new(),
            message: format!("the file holds {}, expected a `{SCHEMA}` object", kind(v)),
        });
    };
    let mut r = Reader::default();
    match obj.get("schema").and_then(Value::as_str) {
        Some(SCHEMA) => {}
        Some(other) => r.problem(
            "/schema",
            format!("`schema` is `{other}`, expected `{SCHEMA}`; reading it as `{SCHEMA}`"),
        ),
        None => r.problem(
            "/schema",
            format!("no `schema` key; reading it as `{SCHEMA}`"),
        ),
    }
    let id = r.string(obj, "id", "").unwrap_or_else(|| {
        r.problem("/id", "no record `id`; using the file name");
        file.file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "record".to_string())
    });
    let title = r.string(obj, "title", "");

    let mut sources = Vec::new();
    for (i, s) in objects(&mut r, obj, "sources") {
        let ptr = format!("/sources/{i}");
        let Some(sid) = r.text(s, "id", &ptr) else {
            r.problem(&ptr, "source has no `id`; skipped");
            continue;
        };
        sources.push(Source {
            id: sid,
            url: r.string(s, "url", &ptr),
            repository: r.string(s, "repository", &ptr),
            revision: r.string(s, "revision", &ptr).map(|x| Revision::parse(&x)),
            path: r.string(s, "path", &ptr),
            sha256: r
                .string(s, "sha256", &ptr)
                .map(|x| Recorded::parse_sha256(&x)),
            commit_time: r.string(s, "commit_time", &ptr),
        });
    }

    let mut claims = Vec::new();
    for (i, c) in objects(&mut r, obj, "claims") {
        let ptr = format!("/claims/{i}");
        let label = r
            .text(c, "label", &ptr)
            .unwrap_or_else(|| format!("claim {}", i + 1));
        let url = r.string(c, "url", &ptr);
        if c.get("value").is_none_or(Value::is_null) {
            r.problem(
                &ptr,
                format!("claim `{label}` has no `value`, so nothing can be checked"),
            );
        }
        // Without `lines`, the cited URL's anchor (`#L43`) says which lines.
        let lines = r.lines(c, "lines", &ptr).or_else(|| {
            let anchored = url.as_deref().and_then(|u| super::url::parse(u).ok());
            anchored.and_then(|u| u.lines)
        });
        claims.push(Claim {
            source: r.text(c, "source", &ptr),
            lines,
            value: r.value(c, "value", &ptr),
            unit: r.string(c, "unit", &ptr),
            metric: r.string(c, "metric", &ptr),
            url,
            correct: r.count(c, "correct", &ptr),
            total: r.count(c, "total", &ptr),
            label,
        });
    }

    let mut artifacts = Vec::new();
    for (i, a) in objects(&mut r, obj, "artifacts") {
        let ptr = format!("/artifacts/{i}");
        let kind = match r.string(a, "kind", &ptr).as_deref() {
            Some("weights") => ArtifactKind::Weights,
            Some("runtime") => ArtifactKind::Runtime,
            other => {
                r.problem(
                    &format!("{ptr}/kind"),
                    format!(
                        "artifact `kind` is {}, expected `weights` or `runtime`; skipped",
                        other.map_or("missing".to_string(), |k| format!("`{k}`"))
                    ),
                );
                continue;
            }
        };
        artifacts.push(Artifact {
            kind,
            label: r
                .text(a, "label", &ptr)
                .unwrap_or_else(|| format!("{} {}", kind.as_str(), i + 1)),
            revision: r.string(a, "revision", &ptr),
            sha256: r
                .string(a, "sha256", &ptr)
                .map(|x| Recorded::parse_sha256(&x)),
            digest: r.string(a, "digest", &ptr),
        });
    }

    let mut references = Vec::new();
    for (i, o) in objects(&mut r, obj, "references") {
        let ptr = format!("/references/{i}");
        match r.string(o, "url", &ptr) {
            Some(url) => references.push(Reference {
                label: r
                    .text(o, "label", &ptr)
                    .unwrap_or_else(|| format!("reference {}", i + 1)),
                url,
            }),
            None => r.problem(&ptr, "reference has no `url`; skipped"),
        }
    }

    Ok(Parsed {
        record: Record {
            id,
            title,
            file: file.to_path_buf(),
            sources,
            claims,
            artifacts,
            references,
        },
        problems: r.problems,
    })
}

/// The objects of an array field, noting anything in it that is not an object.
fn objects<'v>(
    r: &mut Reader,
    obj: &'v Map<String, Value>,
    key: &str,
) -> Vec<(usize, &'v Map<String, Value>)> {
    match obj.get(key) {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .filter_map(|(i, v)| match v.as_object() {
                Some(o) => Some((i, o)),
                None => {
                    r.problem(
                        &format!("/{key}/{i}"),
                        format!("is {}, expected an object; skipped", kind(v)),
                    );
                    None
                }
            })
            .collect(),
        Some(v) => {
            r.problem(
                &format!("/{key}"),
                format!("`{key}` is {}, expected an array", kind(v)),
            );
            Vec::new()
        }
    }
}

fn opt<T: ToString>(v: &Option<T>) -> Value {
    v.as_ref()
        .map_or(Value::Null, |x| Value::String(x.to_string()))
}

fn sha(v: &Option<Recorded<Sha256>>) -> Value {
    v.as_ref().map_or(Value::Null, |x| Value::String(x.text()))
}

/// The canonical JSON of a record as a pin file.
pub fn to_value(record: &Record) -> Value {
    let sources: Vec<Value> = record
        .sources
        .iter()
        .map(|s| {
            json!({
                "id": s.id,
                "url": opt(&s.url),
                "repository": opt(&s.repository),
                "revision": opt(&s.revision),
                "path": opt(&s.path),
                "sha256": sha(&s.sha256),
                "commit_time": opt(&s.commit_time),
            })
        })
        .collect();
    let claims: Vec<Value> = record
        .claims
        .iter()
        .map(|c| {
            let value = c
                .value
                .as_ref()
                .and_then(|v| v.text().parse::<Number>().ok())
                .map_or(Value::Null, Value::Number);
            json!({
                "label": c.label,
                "source": opt(&c.source),
                "lines": c.lines.map_or(Value::Null, |l| json!([l.first(), l.last()])),
                "value": value,
                "unit": opt(&c.unit),
                "metric": opt(&c.metric),
                "url": opt(&c.url),
                "correct": c.correct,
                "total": c.total,
            })
        })
        .collect();
    let artifacts: Vec<Value> = record
        .artifacts
        .iter()
        .map(|a| {
            let mut m = Map::new();
            m.insert("kind".into(), a.kind.as_str().into());
            m.insert("label".into(), a.label.clone().into());
            m.insert("revision".into(), opt(&a.revision));
            // Weights are pinned by a hash, runtimes by an image digest: write the
            // kind's own key always (null says "not pinned"), the other when given.
            if a.kind == ArtifactKind::Weights || a.sha256.is_some() {
                m.insert("sha256".into(), sha(&a.sha256));
            }
            if a.kind == ArtifactKind::Runtime || a.digest.is_some() {
                m.insert("digest".into(), opt(&a.digest));
            }
            Value::Object(m)
        })
        .collect();
    let mut v = json!({
        "schema": SCHEMA,
        "id": record.id,
        "title": opt(&record.title),
        "sources": sources,
        "claims": claims,
        "artifacts": artifacts,
    });
    // Written only when there are some: most records cite nothing beyond their sources.
    if !record.references.is_empty() {
        v["references"] = record
            .references
            .iter()
            .map(|r| json!({"label": r.label, "url": r.url}))
            .collect();
    }
    v
}

/// The pin file text: pretty JSON with a final newline.
pub fn to_string(record: &Record) -> String {
    let mut s = serde_json::to_string_pretty(&to_value(record)).unwrap_or_default();
    s.push('\n');
    s
}
