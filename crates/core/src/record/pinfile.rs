//! Pin files (`pins/*.json`, schema `pinaudit/pins/v1`): pinaudit's own record format.
//!
//! One record per file. [`PinFileV1`] is the format: one serde type, read and
//! written with serde and described by the JSON Schema generated from it
//! (`pins/schema.json`, see [`json_schema`]). `import` writes pin files from record
//! documents and people write them by hand, so
//! - reading is lenient: one bad field is one `invalid-record` problem, not a lost
//!   file, and a key the format does not have is one problem naming it (with the
//!   known key it was probably meant to be); the rest of the file is still read;
//! - writing is canonical: every key, in a fixed order, so that a pin file
//!   round-trips without loss and diffs stay small.
//!
//! `pins/schema.json` is checked against [`json_schema`] by a unit test; after
//! changing these types, regenerate it with
//! `PINAUDIT_BLESS=1 cargo test --lib committed_schema`.

use std::path::Path;

use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::{Deserialize, Serialize};
use serde_json::{Number, Value};

use super::lenient::{kind, Field, Form, List, Problem, Reader, Text, Unknown};
use super::{
    Artifact, ArtifactKind, At, Claim, ClaimValue, Lines, Record, Recorded, Reference, Revision,
    Source, MAX_LINE,
};

pub const SCHEMA: &str = "pinaudit/pins/v1";

/// A pin file read leniently: the record, and what could not be read of it.
#[derive(Debug)]
pub struct Parsed {
    pub record: Record,
    pub problems: Vec<Problem>,
}

/// A `pinaudit/pins/v1` pin file, as written.
///
/// The doc comments of the fields are the descriptions in `pins/schema.json`.
/// Every field reads leniently ([`Field`], [`List`]): deserializing a JSON object
/// never fails, and [`PinFileV1::into_record`] turns what was unusable into
/// [`Problem`]s.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(
    deny_unknown_fields,
    extend("$id" = SCHEMA),
    title = "pinaudit pin file (pinaudit/pins/v1)",
    description = "One audited record: the documents it cites (sources), the figures it reads from them (claims), what was run (artifacts) and other URLs it cites (references). Written by `pinaudit import`, or by hand. null means unknown. This schema describes a well-formed pin file; pinaudit reads more leniently and reports what is wrong as findings: an unknown key or a field of the wrong kind is `invalid-record` (the rest of the file is still read), a malformed sha256 is `malformed-hash`, a revision that is not a full commit id is `unpinned-url`."
)]
pub(crate) struct PinFileV1 {
    /// Where editors find this JSON Schema (`pins/schema.json`); not read.
    #[serde(rename = "$schema", default, skip_serializing_if = "Option::is_none")]
    pub(crate) json_schema: Option<Value>,
    #[schemars(with = "shape::SchemaTag")]
    pub(crate) schema: Field<String>,
    /// Record id; findings name it.
    #[schemars(with = "String", length(min = 1))]
    pub(crate) id: Field<String>,
    /// The write-up's title.
    #[serde(default)]
    pub(crate) title: Field<String>,
    #[serde(default)]
    pub(crate) sources: List<SourceV1>,
    #[serde(default)]
    pub(crate) claims: List<ClaimV1>,
    #[serde(default)]
    pub(crate) artifacts: List<ArtifactV1>,
    /// Other URLs the record cites (test profiles' evidence) that no source covers; their pins are judged like sources' URLs.
    #[serde(default, skip_serializing_if = "List::is_empty")]
    pub(crate) references: List<ReferenceV1>,
    #[serde(flatten)]
    #[schemars(skip)]
    pub(crate) unknown: Unknown,
}

/// A document at a revision of a repository.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "source", deny_unknown_fields)]
pub(crate) struct SourceV1 {
    /// Source id, unique in the record; claims name it.
    #[schemars(with = "String", length(min = 1))]
    pub(crate) id: Field<Text>,
    /// Pinned document URL (GitHub blob/raw, GitLab -/blob, Hugging Face blob/resolve, Gitea src/commit).
    #[serde(default)]
    pub(crate) url: Field<String>,
    /// Repository URL, or OWNER/REPO for GitHub.
    #[serde(default)]
    pub(crate) repository: Field<String>,
    /// The revision the document is cited at.
    #[serde(default)]
    #[schemars(schema_with = "shape::revision")]
    pub(crate) revision: Field<String>,
    /// Document path inside the repository.
    #[serde(default)]
    pub(crate) path: Field<String>,
    /// sha256 of the document at the revision.
    #[serde(default)]
    #[schemars(schema_with = "shape::sha256")]
    pub(crate) sha256: Field<String>,
    /// Committer time of the revision, RFC 3339 (or a date).
    #[serde(default)]
    pub(crate) commit_time: Field<String>,
    /// The document's SWHID at the revision (`swh:1:cnt:<git blob id>;origin=<repository>;anchor=swh:1:rev:<commit>;path=/<path>`), as `pinaudit pin` writes it: a durable citation, which Software Heritage resolves after the forge has lost the repository. Never read to judge anything: an audit computes each checked source's SWHID from the document itself. Written only when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "shape::swhid")]
    pub(crate) swhid: Option<Field<String>>,
    #[serde(flatten)]
    #[schemars(skip)]
    pub(crate) unknown: Unknown,
}

/// A figure: a value the record says a source carries on some lines.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "claim", deny_unknown_fields)]
pub(crate) struct ClaimV1 {
    /// Names the figure in findings and in `pinaudit show PINFILE#LABEL`.
    #[schemars(with = "String", length(min = 1))]
    pub(crate) label: Field<Text>,
    /// The id of a source of this record.
    #[serde(default)]
    pub(crate) source: Field<Text>,
    /// Cited lines, 1-based and inclusive: `[first, last]` (as `import` writes them), one line, or `"43-45"`. Without them, the `url`'s `#L` anchor says which lines.
    #[serde(default)]
    #[schemars(schema_with = "shape::lines")]
    pub(crate) lines: Field<Lines>,
    /// The figure as written; its decimals count (98.0 is not 98).
    #[serde(default)]
    #[schemars(schema_with = "shape::value")]
    pub(crate) value: Field<Number>,
    /// `percent` enables the fraction and correct/total forms.
    #[serde(default)]
    pub(crate) unit: Field<String>,
    /// What was measured (`decode_rate`, `accuracy`).
    #[serde(default)]
    pub(crate) metric: Field<String>,
    /// Which statistic of the metric the figure is (`median`, `p99`, `upper end of the
    /// range`): with the label and metric, it picks the column, row or key.
    #[serde(default)]
    pub(crate) statistic: Field<String>,
    /// The URL the figure cites, with its #L anchor.
    #[serde(default)]
    pub(crate) url: Field<String>,
    /// For a percentage: how many were correct (of `total`).
    #[serde(default)]
    #[schemars(schema_with = "shape::count")]
    pub(crate) correct: Field<u64>,
    /// For a percentage: how many there were.
    #[serde(default)]
    #[schemars(schema_with = "shape::count")]
    pub(crate) total: Field<u64>,
    #[serde(flatten)]
    #[schemars(skip)]
    pub(crate) unknown: Unknown,
}

/// Model weights or a runtime the measurement depends on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "artifact", deny_unknown_fields)]
pub(crate) struct ArtifactV1 {
    /// What the artifact is.
    #[schemars(schema_with = "shape::kind")]
    pub(crate) kind: Field<String>,
    /// Names the artifact in findings (`k3-neuron-iq1s`, `llama.cpp`).
    #[schemars(with = "String", length(min = 1))]
    pub(crate) label: Field<Text>,
    /// The weights' or the runtime's revision (a commit, tag or version).
    #[serde(default)]
    pub(crate) revision: Field<String>,
    /// Weights: sha256 of the weight files. Written for weights (null: not pinned by a hash).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "shape::sha256")]
    pub(crate) sha256: Option<Field<String>>,
    /// Runtime: container image digest, `sha256:` and 64 hex digits. Written for runtimes (null: no digest).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>")]
    pub(crate) digest: Option<Field<String>>,
    /// Weights: the model repository, a Hugging Face URL (`https://huggingface.co/ORG/REPO`, `/tree/REV`, `/blob/REV/FILE`, `/resolve/REV/FILE`) or a forge repository URL. pinaudit reads the weight files' Git LFS pointers there (never the weights). Written only when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>")]
    pub(crate) repository: Option<Field<String>>,
    /// Weights: the weight files, as paths or globs (`*.gguf`, `q4/*.safetensors`). Without it, every Git LFS file of the repository (or the file the `repository` URL names). Written only when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<Vec<String>>")]
    pub(crate) files: Option<Field<FileList>>,
    #[serde(flatten)]
    #[schemars(skip)]
    pub(crate) unknown: Unknown,
}

/// An artifact's `files`: paths or globs; one string is a list of one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub(crate) struct FileList(pub Vec<String>);

impl Form for FileList {
    fn read(v: &Value) -> Result<Option<Self>, String> {
        let one = |v: &Value| match v {
            Value::String(s) if !s.trim().is_empty() => Ok(s.trim().to_string()),
            v => Err(format!(
                "holds {}, expected a list of paths or globs (strings)",
                kind(v)
            )),
        };
        match v {
            Value::Null => Ok(None),
            Value::String(s) if s.trim().is_empty() => Ok(None),
            Value::String(_) => Ok(Some(FileList(vec![one(v)?]))),
            Value::Array(items) if items.is_empty() => Ok(None),
            Value::Array(items) => items
                .iter()
                .map(one)
                .collect::<Result<Vec<_>, _>>()
                .map(|f| Some(FileList(f))),
            v => Err(format!("is {}, expected a list of paths or globs", kind(v))),
        }
    }
}

/// A URL the record cites without a figure on it: its pin is still judged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "reference", deny_unknown_fields)]
pub(crate) struct ReferenceV1 {
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub(crate) label: Field<Text>,
    /// The cited URL; its revision is judged like a source's.
    #[schemars(with = "String", length(min = 1))]
    pub(crate) url: Field<String>,
    #[serde(flatten)]
    #[schemars(skip)]
    pub(crate) unknown: Unknown,
}

impl PinFileV1 {
    /// The keys of the top-level object, in the order written.
    pub(crate) const KEYS: &'static [&'static str] = &[
        "$schema",
        "schema",
        "id",
        "title",
        "sources",
        "claims",
        "artifacts",
        "references",
    ];
}

impl SourceV1 {
    pub(crate) const KEYS: &'static [&'static str] = &[
        "id",
        "url",
        "repository",
        "revision",
        "path",
        "sha256",
        "commit_time",
        "swhid",
    ];
}

impl ClaimV1 {
    pub(crate) const KEYS: &'static [&'static str] = &[
        "label",
        "source",
        "lines",
        "value",
        "unit",
        "metric",
        "statistic",
        "url",
        "correct",
        "total",
    ];
}

impl ArtifactV1 {
    pub(crate) const KEYS: &'static [&'static str] = &[
        "kind",
        "label",
        "revision",
        "sha256",
        "digest",
        "repository",
        "files",
    ];
}

impl ReferenceV1 {
    pub(crate) const KEYS: &'static [&'static str] = &["label", "url"];
}

/// Reads a pin file's JSON value. `Err` only when the value is not a pin file at all.
pub fn from_value(v: &Value, file: &Path) -> Result<Parsed, Problem> {
    if !v.is_object() {
        return Err(Problem {
            pointer: String::new(),
            message: format!("the file holds {}, expected a `{SCHEMA}` object", kind(v)),
        });
    }
    // Every field of `PinFileV1` reads leniently, so an object always deserializes.
    let pin = PinFileV1::deserialize(v).map_err(|e| Problem {
        pointer: String::new(),
        message: format!("cannot be read as `{SCHEMA}`: {e}"),
    })?;
    Ok(pin.into_record(file))
}

/// [`from_value`] for a value parsed from `text`: each source, claim and artifact
/// also keeps the line and column where it stands in the file.
pub fn from_text_value(v: &Value, file: &Path, text: &str) -> Result<Parsed, Problem> {
    let mut parsed = from_value(v, file)?;
    let spans = super::spans::Spans::scan(text);
    // One index of the text for every entry's position (linear).
    let lines = super::spans::LineIndex::new(text);
    let at = |key: &str, i: usize| {
        super::At(
            spans
                .offset(&format!("/{key}/{i}"))
                .map(|o| lines.position(o)),
        )
    };
    // Entries that could not be read are skipped, so list entries are matched to
    // what was read by their order among the readable ones.
    let r = &mut parsed.record;
    let readable = |key: &str| -> Vec<usize> {
        v.get(key)
            .and_then(Value::as_array)
            .map(|items| {
                items
                    .iter()
                    .enumerate()
                    .filter(|(_, e)| match key {
                        // As `SourceV1::read` and `ArtifactV1::read` skip entries.
                        "sources" => e.get("id").is_some_and(|id| {
                            matches!(<Text as super::lenient::Form>::read(id), Ok(Some(_)))
                        }),
                        "artifacts" => e
                            .get("kind")
                            .and_then(Value::as_str)
                            .is_some_and(|k| matches!(k.trim(), "weights" | "runtime")),
                        _ => e.is_object(),
                    })
                    .map(|(i, _)| i)
                    .collect()
            })
            .unwrap_or_default()
    };
    for (s, i) in r.sources.iter_mut().zip(readable("sources")) {
        s.at = at("sources", i);
    }
    for (c, i) in r.claims.iter_mut().zip(readable("claims")) {
        c.at = at("claims", i);
    }
    for (a, i) in r.artifacts.iter_mut().zip(readable("artifacts")) {
        a.at = at("artifacts", i);
    }
    Ok(parsed)
}

/// The canonical JSON of a record as a pin file.
pub fn to_value(record: &Record) -> Value {
    serde_json::to_value(PinFileV1::from(record)).expect("a pin file serializes")
}

/// The pin file text: pretty JSON with a final newline.
pub fn to_string(record: &Record) -> String {
    let mut s =
        serde_json::to_string_pretty(&PinFileV1::from(record)).expect("a pin file serializes");
    s.push('\n');
    s
}

/// Reads each entry of a list field in turn with `read(reader, pointer, index,
/// entry)`, noting the list, or an entry, that could not be read at all.
fn read_list<T, U>(
    r: &mut Reader,
    list: List<T>,
    key: &str,
    mut read: impl FnMut(&mut Reader, &str, usize, T) -> Option<U>,
) -> Vec<U> {
    match list {
        List::Entries(entries) => entries
            .into_iter()
            .enumerate()
            .filter_map(|(i, entry)| {
                let ptr = format!("/{key}/{i}");
                match entry {
                    Ok(t) => read(r, &ptr, i, t),
                    Err(why) => {
                        r.problem(&ptr, why);
                        None
                    }
                }
            })
            .collect(),
        List::Invalid(why) => {
            r.problem(&format!("/{key}"), format!("`{key}` {why}"));
            Vec::new()
        }
    }
}

impl PinFileV1 {
    /// The record this pin file describes, and what could not be read of it: each
    /// unusable field, each unknown key, by JSON pointer. `file` names the record
    /// when the file has no `id`.
    pub(crate) fn into_record(self, file: &Path) -> Parsed {
        let mut r = Reader::default();
        r.unknown(&self.unknown, "", Self::KEYS, "a pin file");
        match self.schema {
            Field::Valid(s) if s == SCHEMA => {}
            Field::Valid(other) => r.problem(
                "/schema",
                format!("`schema` is `{other}`, expected `{SCHEMA}`; reading it as `{SCHEMA}`"),
            ),
            Field::Missing => r.problem(
                "/schema",
                format!("no `schema` key; reading it as `{SCHEMA}`"),
            ),
            Field::Invalid(why) => r.problem(
                "/schema",
                format!("`schema` {why}; reading it as `{SCHEMA}`"),
            ),
        }
        let id = r.take(self.id, "", "id").unwrap_or_else(|| {
            r.problem("/id", "no record `id`; using the file name");
            file.file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| "record".to_string())
        });
        let title = r.take(self.title, "", "title");

        let sources = read_list(&mut r, self.sources, "sources", |r, ptr, _, s| {
            s.read(r, ptr)
        });
        let claims = read_list(&mut r, self.claims, "claims", |r, ptr, i, c| {
            Some(c.read(r, ptr, i))
        });
        let artifacts = read_list(&mut r, self.artifacts, "artifacts", |r, ptr, i, a| {
            a.read(r, ptr, i)
        });
        let references = read_list(&mut r, self.references, "references", |r, ptr, i, o| {
            o.read(r, ptr, i)
        });

        Parsed {
            record: Record {
                id,
                title,
                file: file.to_path_buf(),
                sources,
                claims,
                artifacts,
                references,
                input: super::InputDigest::default(),
            },
            problems: r.problems,
        }
    }
}

impl SourceV1 {
    fn read(self, r: &mut Reader, ptr: &str) -> Option<Source> {
        r.unknown(&self.unknown, ptr, Self::KEYS, "a source");
        let Some(Text(id)) = r.take(self.id, ptr, "id") else {
            r.problem(ptr, "source has no `id`; skipped");
            return None;
        };
        // A `swhid` is read only to say when it is not text: what it claims is
        // never trusted (an audit computes each source's SWHID from its document).
        let _: Option<String> = r.take(self.swhid.unwrap_or_default(), ptr, "swhid");
        Some(Source {
            id,
            url: r.take(self.url, ptr, "url"),
            repository: r.take(self.repository, ptr, "repository"),
            revision: r
                .take(self.revision, ptr, "revision")
                .map(|x| Revision::parse(&x)),
            path: r.take(self.path, ptr, "path"),
            sha256: r
                .take(self.sha256, ptr, "sha256")
                .map(|x| Recorded::parse_sha256(&x)),
            commit_time: r.take(self.commit_time, ptr, "commit_time"),
            at: At::default(),
            parsed_url: super::ParsedUrl::default(),
        })
    }
}

impl ClaimV1 {
    fn read(self, r: &mut Reader, ptr: &str, i: usize) -> Claim {
        r.unknown(&self.unknown, ptr, Self::KEYS, "a claim");
        let label = r
            .take(self.label, ptr, "label")
            .map_or_else(|| format!("claim {}", i + 1), |t| t.0);
        let url = r.take(self.url, ptr, "url");
        if self.value == Field::Missing {
            r.problem(
                ptr,
                format!("claim `{label}` has no `value`, so nothing can be checked"),
            );
        }
        // Without `lines`, the cited URL's anchor (`#L43`) says which lines.
        let parsed_url = super::ParsedUrl::default();
        let lines = r.take(self.lines, ptr, "lines").or_else(|| {
            let anchored = url.as_deref().and_then(|u| parsed_url.of(u));
            anchored.and_then(|u| u.lines)
        });
        Claim {
            source: r.take(self.source, ptr, "source").map(|t| t.0),
            lines,
            value: r
                .take(self.value, ptr, "value")
                .and_then(|n| ClaimValue::parse(&n.to_string())),
            unit: r.take(self.unit, ptr, "unit"),
            metric: r.take(self.metric, ptr, "metric"),
            statistic: r.take(self.statistic, ptr, "statistic"),
            url,
            correct: r.take(self.correct, ptr, "correct"),
            total: r.take(self.total, ptr, "total"),
            label,
            at: At::default(),
            parsed_url,
        }
    }
}

impl ArtifactV1 {
    fn read(self, r: &mut Reader, ptr: &str, i: usize) -> Option<Artifact> {
        r.unknown(&self.unknown, ptr, Self::KEYS, "an artifact");
        let kind = match r.take(self.kind, ptr, "kind").as_deref() {
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
                return None;
            }
        };
        Some(Artifact {
            kind,
            label: r
                .take(self.label, ptr, "label")
                .map_or_else(|| format!("{} {}", kind.as_str(), i + 1), |t| t.0),
            revision: r.take(self.revision, ptr, "revision"),
            sha256: r
                .take(self.sha256.unwrap_or_default(), ptr, "sha256")
                .map(|x| Recorded::parse_sha256(&x)),
            digest: r.take(self.digest.unwrap_or_default(), ptr, "digest"),
            at: At::default(),
            repository: r.take(self.repository.unwrap_or_default(), ptr, "repository"),
            files: r
                .take(self.files.unwrap_or_default(), ptr, "files")
                .map_or_else(Vec::new, |f| f.0),
        })
    }
}

impl ReferenceV1 {
    fn read(self, r: &mut Reader, ptr: &str, i: usize) -> Option<Reference> {
        r.unknown(&self.unknown, ptr, Self::KEYS, "a reference");
        let Some(url) = r.take(self.url, ptr, "url") else {
            r.problem(ptr, "reference has no `url`; skipped");
            return None;
        };
        Some(Reference {
            label: r
                .take(self.label, ptr, "label")
                .map_or_else(|| format!("reference {}", i + 1), |t| t.0),
            url,
        })
    }
}

fn text(s: &Option<String>) -> Field<String> {
    s.clone().into()
}

impl From<&Record> for PinFileV1 {
    fn from(record: &Record) -> Self {
        PinFileV1 {
            json_schema: None,
            schema: Field::Valid(SCHEMA.to_string()),
            id: Field::Valid(record.id.clone()),
            title: text(&record.title),
            sources: record.sources.iter().map(SourceV1::from).collect(),
            claims: record.claims.iter().map(ClaimV1::from).collect(),
            artifacts: record.artifacts.iter().map(ArtifactV1::from).collect(),
            // Written only when there are some: most records cite nothing beyond their sources.
            references: record
                .references
                .iter()
                .map(|o| ReferenceV1 {
                    label: Field::Valid(Text(o.label.clone())),
                    url: Field::Valid(o.url.clone()),
                    unknown: Unknown::default(),
                })
                .collect(),
            unknown: Unknown::default(),
        }
    }
}

impl From<&Source> for SourceV1 {
    fn from(s: &Source) -> Self {
        SourceV1 {
            id: Field::Valid(Text(s.id.clone())),
            url: text(&s.url),
            repository: text(&s.repository),
            revision: s.revision.as_ref().map(Revision::to_string).into(),
            path: text(&s.path),
            sha256: s.sha256.as_ref().map(Recorded::text).into(),
            commit_time: text(&s.commit_time),
            swhid: None,
            unknown: Unknown::default(),
        }
    }
}

impl From<&Claim> for ClaimV1 {
    fn from(c: &Claim) -> Self {
        ClaimV1 {
            label: Field::Valid(Text(c.label.clone())),
            source: c.source.clone().map(Text).into(),
            lines: c.lines.into(),
            // The digits as written; a value that is no JSON number is written as null.
            value: c
                .value
                .as_ref()
                .and_then(|v| v.text().parse::<Number>().ok())
                .into(),
            unit: text(&c.unit),
            metric: text(&c.metric),
            statistic: text(&c.statistic),
            url: text(&c.url),
            correct: c.correct.into(),
            total: c.total.into(),
            unknown: Unknown::default(),
        }
    }
}

impl From<&Artifact> for ArtifactV1 {
    fn from(a: &Artifact) -> Self {
        // Weights are pinned by a hash, runtimes by an image digest: write the kind's
        // own key always (null says "not pinned"), the other only when given.
        let sha256: Field<String> = a.sha256.as_ref().map(Recorded::text).into();
        let digest = text(&a.digest);
        ArtifactV1 {
            kind: Field::Valid(a.kind.as_str().to_string()),
            label: Field::Valid(Text(a.label.clone())),
            revision: text(&a.revision),
            sha256: (a.kind == ArtifactKind::Weights || a.sha256.is_some()).then_some(sha256),
            digest: (a.kind == ArtifactKind::Runtime || a.digest.is_some()).then_some(digest),
            repository: a.repository.clone().map(Field::Valid),
            files: (!a.files.is_empty()).then(|| Field::Valid(FileList(a.files.clone()))),
            unknown: Unknown::default(),
        }
    }
}

/// The JSON Schema of pin files (`pins/schema.json`), generated from [`PinFileV1`]
/// (the test beside it keeps the published file equal to it).
#[cfg(test)]
pub(crate) fn json_schema() -> Value {
    let schema = schemars::generate::SchemaSettings::draft2020_12()
        .into_generator()
        .into_root_schema_for::<PinFileV1>();
    let Value::Object(mut generated) = schema.to_value() else {
        unreachable!("a struct's schema is an object")
    };
    // The meta keys first, as people read a schema.
    let mut root = serde_json::Map::new();
    for key in ["$schema", "$id", "title", "description"] {
        if let Some(v) = generated.remove(key) {
            root.insert(key.to_string(), v);
        }
    }
    root.extend(generated);
    Value::Object(root)
}

/// [`json_schema`] as the text of `pins/schema.json`: pretty JSON with a final newline.
#[cfg(test)]
pub(crate) fn json_schema_text() -> String {
    let mut s = serde_json::to_string_pretty(&json_schema()).expect("a schema serializes");
    s.push('\n');
    s
}

/// JSON Schema shapes of the fields whose Rust type says less than the format.
mod shape {
    use super::*;

    /// A full git commit id, SHA-1 or SHA-256, lowercase.
    pub(crate) const COMMIT: &str = "^[0-9a-f]{40}([0-9a-f]{24})?$";
    /// A sha256 digest, lowercase.
    pub(crate) const SHA256: &str = "^[0-9a-f]{64}$";
    /// A line range as text: `43`, `43-45`, `L43-L45`.
    pub(crate) const LINE_RANGE: &str = "^L?[1-9][0-9]*(-L?[1-9][0-9]*)?$";

    /// The `schema` key: always `pinaudit/pins/v1`.
    pub(crate) struct SchemaTag;

    impl JsonSchema for SchemaTag {
        fn inline_schema() -> bool {
            true
        }
        fn schema_name() -> std::borrow::Cow<'static, str> {
            "SchemaTag".into()
        }
        fn json_schema(_: &mut SchemaGenerator) -> Schema {
            json_schema!({
                "const": SCHEMA,
                "description": "The format of the file.",
            })
        }
    }

    /// Defined once, in `$defs`, under `name`.
    macro_rules! def {
        ($ty:ident, $name:literal, $schema:tt) => {
            pub(crate) struct $ty;
            impl JsonSchema for $ty {
                fn schema_name() -> std::borrow::Cow<'static, str> {
                    $name.into()
                }
                fn json_schema(_: &mut SchemaGenerator) -> Schema {
                    json_schema!($schema)
                }
            }
        };
    }

    def!(Commit, "commit", {
        "type": "string",
        "pattern": COMMIT,
        "description": "A full commit id: 40 hex digits (SHA-1) or 64 (SHA-256), lowercase.",
    });
    def!(Sha256, "sha256", {
        "type": "string",
        "pattern": SHA256,
        "description": "A sha256 digest: 64 hex digits, lowercase. (pinaudit also reads a `sha256:` prefix and capitals.)",
    });
    def!(Line, "line", {
        "type": "integer",
        "minimum": 1,
        "maximum": MAX_LINE,
    });

    /// A source's revision: pinned to a commit, or a moving name that pinaudit
    /// reads and reports as `unpinned-url` (`import` writes what the record says).
    pub(crate) fn revision(generator: &mut SchemaGenerator) -> Schema {
        let commit = generator.subschema_for::<Commit>();
        json_schema!({
            "anyOf": [
                commit,
                {
                    "type": "string",
                    "minLength": 1,
                    "description": "A branch, tag or short commit id: the document is not pinned (finding `unpinned-url`).",
                },
                { "type": "null" },
            ],
        })
    }

    /// A content SWHID, with or without qualifiers.
    pub(crate) fn swhid(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "anyOf": [
                { "type": "string", "pattern": "^swh:1:cnt:[0-9a-f]{40}(;.*)?$" },
                { "type": "null" },
            ],
        })
    }

    pub(crate) fn sha256(generator: &mut SchemaGenerator) -> Schema {
        let sha256 = generator.subschema_for::<Sha256>();
        json_schema!({ "anyOf": [sha256, { "type": "null" }] })
    }

    pub(crate) fn lines(generator: &mut SchemaGenerator) -> Schema {
        let line = generator.subschema_for::<Line>();
        json_schema!({
            "anyOf": [
                {
                    "type": "array",
                    "prefixItems": [line, line],
                    "minItems": 1,
                    "maxItems": 2,
                },
                line,
                { "type": "string", "pattern": LINE_RANGE },
                { "type": "null" },
            ],
        })
    }

    pub(crate) fn kind(_: &mut SchemaGenerator) -> Schema {
        json_schema!({ "enum": [ArtifactKind::Weights.as_str(), ArtifactKind::Runtime.as_str()] })
    }

    pub(crate) fn value(_: &mut SchemaGenerator) -> Schema {
        json_schema!({ "type": ["number", "null"] })
    }

    pub(crate) fn count(_: &mut SchemaGenerator) -> Schema {
        json_schema!({ "type": ["integer", "null"], "minimum": 0 })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const REV: &str = "de1fa14ea798512f54dafc8b8795eb3ef1a6c367";

    /// `pins/schema.json` is generated from `PinFileV1`. After changing the type,
    /// regenerate it with `PINAUDIT_BLESS=1 cargo test --lib committed_schema`.
    #[test]
    fn committed_schema_is_the_generated_one() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../pins/schema.json");
        let generated = json_schema_text();
        if std::env::var_os("PINAUDIT_BLESS").is_some_and(|v| v == "1") {
            std::fs::write(&path, &generated).expect("write pins/schema.json");
            return;
        }
        let committed = std::fs::read_to_string(&path).expect("read pins/schema.json");
        assert!(
            committed == generated,
            "pins/schema.json is not the schema generated from `PinFileV1`; regenerate it with \
             `PINAUDIT_BLESS=1 cargo test --lib committed_schema`"
        );
    }

    #[test]
    fn known_keys_are_the_schema_properties() {
        let schema = json_schema();
        let props = |v: &Value| -> Vec<String> {
            v["properties"]
                .as_object()
                .expect("properties")
                .keys()
                .cloned()
                .collect()
        };
        for (at, keys) in [
            (&schema, PinFileV1::KEYS),
            (&schema["$defs"]["source"], SourceV1::KEYS),
            (&schema["$defs"]["claim"], ClaimV1::KEYS),
            (&schema["$defs"]["artifact"], ArtifactV1::KEYS),
            (&schema["$defs"]["reference"], ReferenceV1::KEYS),
        ] {
            assert_eq!(props(at), keys);
            assert_eq!(at["additionalProperties"], false);
        }
    }

    #[test]
    fn schema_patterns_agree_with_the_parsers() {
        let commit = regex::Regex::new(shape::COMMIT).unwrap();
        let sha256 = regex::Regex::new(shape::SHA256).unwrap();
        let range = regex::Regex::new(shape::LINE_RANGE).unwrap();
        let sha1 = REV;
        let sha2 = "a".repeat(64);
        for ok in [sha1, sha2.as_str()] {
            assert!(commit.is_match(ok), "{ok}");
            assert_eq!(super::super::CommitId::parse(ok).unwrap().as_str(), ok);
        }
        for bad in ["main", "de1fa14", &"a".repeat(41), &REV.to_uppercase()] {
            assert!(!commit.is_match(bad), "{bad}");
        }
        assert!(sha256.is_match(&sha2));
        assert_eq!(super::super::Sha256::parse(&sha2).unwrap().as_str(), sha2);
        for bad in [
            "abc",
            &"g".repeat(64),
            &"A".repeat(64),
            &format!("sha256:{sha2}"),
        ] {
            assert!(!sha256.is_match(bad), "{bad}");
        }
        for ok in ["43", "43-45", "L43-L45", "L43"] {
            assert!(range.is_match(ok), "{ok}");
            assert!(super::super::lenient::Reader::default()
                .lines(json!({"l": ok}).as_object().unwrap(), "l", "")
                .is_some());
        }
        for bad in ["0", "43-", "x", "-3"] {
            assert!(!range.is_match(bad), "{bad}");
        }
    }

    fn read(v: Value) -> Parsed {
        from_value(&v, Path::new("pins/typo.json")).expect("a pin file")
    }

    fn messages(p: &Parsed) -> Vec<(String, String)> {
        p.problems
            .iter()
            .map(|p| (p.pointer.clone(), p.message.clone()))
            .collect()
    }

    #[test]
    fn unknown_keys_are_problems_with_a_suggestion_and_the_rest_is_read() {
        let parsed = read(json!({
            "schema": SCHEMA,
            "id": "typo",
            "sources": [{"id": "a", "revison": REV, "path": "README.md", "sha265": "x"}],
            "claims": [{"label": "c", "source": "a", "line": [3, 3], "value": 2.9, "note": "n"}],
            "artifacts": [{"kind": "weights", "label": "w", "Revision": "main"}],
            "references": [{"url": "https://example.org/x", "a/b~": 1}],
            "claim": []
        }));
        assert_eq!(
            messages(&parsed),
            [
                (
                    "/claim",
                    "unknown key `claim`, not read; did you mean `claims`?"
                ),
                (
                    "/sources/0/revison",
                    "unknown key `revison`, not read; did you mean `revision`?"
                ),
                (
                    "/sources/0/sha265",
                    "unknown key `sha265`, not read; did you mean `sha256`?"
                ),
                (
                    "/claims/0/line",
                    "unknown key `line`, not read; did you mean `lines`?"
                ),
                (
                    "/claims/0/note",
                    "unknown key `note`, not read; a claim has `label`, `source`, `lines`, \
                     `value`, `unit`, `metric`, `statistic`, `url`, `correct`, `total`"
                ),
                (
                    "/artifacts/0/Revision",
                    "unknown key `Revision`, not read; did you mean `revision`?"
                ),
                (
                    "/references/0/a~1b~0",
                    "unknown key `a/b~`, not read; a reference has `label`, `url`"
                ),
            ]
            .map(|(p, m)| (p.to_string(), m.to_string()))
        );
        // Everything else is still read: the record is audited.
        let r = &parsed.record;
        assert_eq!(r.sources[0].path.as_deref(), Some("README.md"));
        assert_eq!(r.sources[0].revision, None);
        assert_eq!(r.claims[0].value.as_ref().map(|v| v.text()), Some("2.9"));
        assert_eq!(r.claims[0].source.as_deref(), Some("a"));
        assert_eq!(r.artifacts[0].label, "w");
        assert_eq!(r.references[0].url, "https://example.org/x");
    }

    /// Editors find the schema through `$schema`: a pin file may name it, and
    /// it is not an unknown key (it is never written back either).
    #[test]
    fn a_dollar_schema_key_is_allowed_and_not_written() {
        let parsed = read(json!({
            "$schema": "./schema.json",
            "schema": SCHEMA,
            "id": "r",
        }));
        assert!(messages(&parsed).is_empty(), "{:?}", messages(&parsed));
        assert!(!to_string(&parsed.record).contains("$schema"));
    }

    #[test]
    fn unknown_keys_in_skipped_entries_are_still_named() {
        let parsed = read(json!({
            "schema": SCHEMA,
            "id": "typo",
            "sources": [{"ids": "a"}],
        }));
        assert_eq!(
            messages(&parsed),
            [
                (
                    "/sources/0/ids",
                    "unknown key `ids`, not read; did you mean `id`?"
                ),
                ("/sources/0", "source has no `id`; skipped"),
            ]
            .map(|(p, m)| (p.to_string(), m.to_string()))
        );
    }

    #[test]
    fn bad_fields_keep_their_pointers_and_messages() {
        let parsed = read(json!({
            "schema": "pinaudit/pins/v0",
            "id": 7,
            "title": ["t"],
            "sources": [{"id": 5, "url": 1}, "s"],
            "claims": [
                {"label": "c", "lines": "45-43", "value": "2.9", "correct": -1},
                {"lines": [3]}
            ],
            "artifacts": {"kind": "weights"},
        }));
        assert_eq!(
            messages(&parsed),
            [
                (
                    "/schema",
                    "`schema` is `pinaudit/pins/v0`, expected `pinaudit/pins/v1`; reading it as \
                     `pinaudit/pins/v1`"
                ),
                ("/id", "`id` is a number (`7`), expected a string"),
                ("/id", "no record `id`; using the file name"),
                (
                    "/title",
                    "`title` is an array (`[\"t\"]`), expected a string"
                ),
                (
                    "/sources/0/url",
                    "`url` is a number (`1`), expected a string"
                ),
                ("/sources/1", "is a string, expected an object; skipped"),
                (
                    "/claims/0/lines",
                    "`lines` is `\"45-43\"`: expected `43`, `43-45` or `L43-L45`, lines from 1 \
                     to 100000000"
                ),
                (
                    "/claims/0/value",
                    "`value` is a string (`\"2.9\"`), expected a number; write it as a JSON \
                     number, without quotes"
                ),
                (
                    "/claims/0/correct",
                    "`correct` is `-1`, expected a whole number of at least 0"
                ),
                (
                    "/claims/1",
                    "claim `claim 2` has no `value`, so nothing can be checked"
                ),
                ("/artifacts", "`artifacts` is an object, expected an array"),
            ]
            .map(|(p, m)| (p.to_string(), m.to_string()))
        );
        let r = &parsed.record;
        assert_eq!(r.id, "typo");
        assert_eq!(r.sources[0].id, "5");
        assert_eq!(r.claims[1].lines, Some(Lines::single(3).unwrap()));
    }

    #[test]
    fn artifacts_write_their_own_pin_key_and_any_other_given() {
        let parsed = read(json!({
            "schema": SCHEMA,
            "id": "a",
            "title": null,
            "sources": [],
            "claims": [],
            "artifacts": [
                {"kind": "weights", "label": "w", "revision": null, "sha256": null},
                {"kind": "runtime", "label": "r", "revision": "b1", "digest": null},
                {"kind": "runtime", "label": "e", "revision": null, "sha256": "abc", "digest": "sha256:1"}
            ]
        }));
        assert!(parsed.problems.is_empty(), "{:?}", parsed.problems);
        let written = to_value(&parsed.record);
        assert_eq!(
            written["artifacts"],
            json!([
                {"kind": "weights", "label": "w", "revision": null, "sha256": null},
                {"kind": "runtime", "label": "r", "revision": "b1", "digest": null},
                {"kind": "runtime", "label": "e", "revision": null, "sha256": "abc", "digest": "sha256:1"}
            ])
        );
        assert!(written.get("references").is_none());
    }

    #[test]
    fn entries_keep_their_place_in_the_file_when_others_are_skipped() {
        let text = "{\"schema\": \"pinaudit/pins/v1\", \"id\": \"p\",\n\"sources\": [\n  {\"url\": \"x\"},\n  {\"id\": 7},\n  {\"id\": \"b\"}],\n\"claims\": [1,\n   {\"label\": \"c\"}],\n\"artifacts\": [{\"kind\": \"toy\"},\n {\"kind\": \" weights \"}]}";
        let v: Value = serde_json::from_str(text).unwrap();
        let parsed = from_text_value(&v, Path::new("p.json"), text).unwrap();
        let r = &parsed.record;
        let at = |a: crate::record::At| a.0.map(|p| (p.line, p.column));
        assert_eq!(r.sources.len(), 2);
        assert_eq!(at(r.sources[0].at), Some((4, 3)));
        assert_eq!(at(r.sources[1].at), Some((5, 3)));
        assert_eq!(at(r.claims[0].at), Some((7, 4)));
        assert_eq!(at(r.artifacts[0].at), Some((9, 2)));
    }

    #[test]
    fn not_an_object_is_not_a_pin_file() {
        let e = from_value(&json!([1]), Path::new("x.json")).unwrap_err();
        assert_eq!(
            e.message,
            "the file holds an array, expected a `pinaudit/pins/v1` object"
        );
    }
}
