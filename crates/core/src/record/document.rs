//! The record importer: the external Markdown format, as publishers write it.
//!
//! Records arrive as Markdown, sometimes flattened to a single line, carrying
//! fenced ```json blocks (see `tests/data/seed.txt`). The blocks are found wherever they
//! stand, each parsed on its own so that one malformed block costs only itself, and
//! the figures, supplemental sources, conditions and test profiles are taken from
//! whichever block holds them. Header bullets give the pinned document that figures
//! cite without listing it as a supplemental source.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use regex::Regex;
use serde_json::{Map, Value};

use super::lenient::{Problem, Reader};
use super::spans::LineIndex;
use super::{
    url, Artifact, ArtifactKind, At, Claim, Lines, ParsedUrl, Record, Recorded, Reference,
    Revision, Source,
};

pub use super::Position;

/// Something in a record document that could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Issue {
    /// 1-based index of the ```json block, when the issue is inside one.
    pub block: Option<usize>,
    pub position: Option<Position>,
    /// JSON pointer inside the block.
    pub pointer: Option<String>,
    pub message: String,
    /// A warning (a key that looks mistyped), not a failure to read.
    pub warning: bool,
}

/// The result of importing one document: a record (possibly partial) and its issues.
#[derive(Debug)]
pub struct Imported {
    pub record: Record,
    pub issues: Vec<Issue>,
}

/// A fenced ```json block: its text and where it starts in the file.
struct Block<'a> {
    index: usize,
    text: &'a str,
    /// Byte offset of `text` in the file.
    offset: usize,
    start: Position,
}

/// Finds every ```json block, in the flattened one-line form too.
fn blocks<'t>(text: &'t str, lines: &LineIndex<'_>) -> (Vec<Block<'t>>, Vec<Issue>) {
    const FENCE: &str = "```";
    let mut out = Vec::new();
    let mut issues = Vec::new();
    let mut rest_at = 0;
    while let Some(found) = text[rest_at..].find("```json") {
        let open = rest_at + found;
        let body_at = open + "```json".len();
        let index = out.len() + issues.len() + 1;
        match text[body_at..].find(FENCE) {
            Some(close) => {
                out.push(Block {
                    index,
                    text: &text[body_at..body_at + close],
                    offset: body_at,
                    start: lines.position(body_at),
                });
                rest_at = body_at + close + FENCE.len();
            }
            None => {
                issues.push(Issue {
                    block: Some(index),
                    position: Some(lines.position(open)),
                    pointer: None,
                    message: "```json block is never closed (truncated document?); skipped".into(),
                    warning: false,
                });
                break;
            }
        }
    }
    (out, issues)
}

/// Maps serde_json's (line, byte column) inside a block to the file's position, in
/// characters like every position pinaudit reports.
fn file_position(lines: &LineIndex<'_>, block: &Block<'_>, line: usize, column: usize) -> Position {
    let line_start: usize = block
        .text
        .split_inclusive('\n')
        .take(line.saturating_sub(1))
        .map(str::len)
        .sum();
    let mut at = (line_start + column.saturating_sub(1)).min(block.text.len());
    while !block.text.is_char_boundary(at) {
        at -= 1;
    }
    lines.position(block.offset + at)
}

/// serde_json's message without its own (block-relative) position.
pub fn json_error(e: &serde_json::Error) -> String {
    let s = e.to_string();
    match s.rfind(" at line ") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

struct Header {
    title: Option<String>,
    pinned_document: Option<String>,
    source_revision: Option<String>,
    commit_time: Option<String>,
    original_project: Option<String>,
}

/// The header's patterns, compiled once per process (not once per record).
struct HeaderPatterns {
    title: Option<Regex>,
    pinned_document: Option<Regex>,
    source_revision: Option<Regex>,
    commit_time: Option<Regex>,
    original_project: Option<Regex>,
}

static HEADER: std::sync::LazyLock<HeaderPatterns> = std::sync::LazyLock::new(|| {
    // Bullets are `- Key: value`; in the flattened form they follow each other on one
    // line, so a value is a single token (URLs, ids and times have no spaces).
    let bullet =
        |key: &str| Regex::new(&format!(r"(?:^|\s)-\s+{}:\s+(\S+)", regex::escape(key))).ok();
    HeaderPatterns {
        title: Regex::new(r"(?m)^#\s+(.+?)(?:\s+-\s+\w[\w ()]*:|\s+##\s|$)").ok(),
        pinned_document: bullet("Pinned document"),
        source_revision: bullet("Source revision"),
        commit_time: bullet("Source commit time (not experiment date)"),
        original_project: bullet("Original project"),
    }
});

fn header(text: &str) -> Header {
    let p = &*HEADER;
    let bullet = |re: &Option<Regex>| -> Option<String> {
        re.as_ref()?
            .captures(text)
            .map(|c| c[1].trim_end_matches([',', ';']).to_string())
    };
    let title = p
        .title
        .as_ref()
        .and_then(|re| re.captures(text))
        .map(|c| c[1].trim().to_string());
    Header {
        title,
        pinned_document: bullet(&p.pinned_document),
        source_revision: bullet(&p.source_revision),
        commit_time: bullet(&p.commit_time),
        original_project: bullet(&p.original_project),
    }
}

/// Broken ```json blocks reported one by one; the rest are counted in one issue.
pub const MAX_BROKEN_REPORTED: usize = 100;

/// Imports one record document.
pub fn import(text: &str, file: &Path) -> Imported {
    // Every position is found through one index of the text, and every source by
    // id or document through a map, so that import stays linear in its input
    // (100k figures, megabytes of broken blocks).
    let lines = LineIndex::new(text);
    let (found, mut issues) = blocks(text, &lines);
    let head = header(text);
    let (values, spans) = parse_blocks(&found, &lines, &mut issues);

    let Walk {
        figures,
        supplemental,
        conditions,
        profile_urls,
        parent_ids,
        ..
    } = Walk::of(&values);

    let at = |block: usize, ptr: &str| -> At {
        At(spans
            .get(&block)
            .and_then(|(offset, s)| s.offset(ptr).map(|o| lines.position(offset + o))))
    };
    // The header's pinned document stands where its URL is written.
    let header_at = At(head
        .pinned_document
        .as_deref()
        .and_then(|u| text.find(u))
        .map(|o| lines.position(o)));

    let mut reader = Reader::default();
    let mut problems: Vec<(usize, Problem)> = Vec::new();

    // Supplemental sources first: they are the record's own list of documents.
    let mut index = SourceIndex::default();
    let sources = supplemental_sources(&supplemental, &mut reader, &mut problems, &at, &mut index);

    // Figures: claims, and the sources they cite that no supplemental entry lists.
    let mut claims = Vec::new();
    let mut figs = Figures {
        header: head
            .pinned_document
            .as_deref()
            .and_then(|u| url::parse(u).ok()),
        head: &head,
        header_at,
        index,
        supplemental: sources,
        cited: Vec::new(),
        declared: None,
    };
    let mut flush = |reader: &mut Reader, block: usize| {
        problems.extend(reader.problems.drain(..).map(|p| (block, p)));
    };
    for (block, ptr, f) in &figures {
        let claim = figs.figure(&mut reader, &at, (*block, ptr, f), claims.len() + 1);
        claims.push(claim);
        flush(&mut reader, *block);
    }
    let Figures {
        index,
        supplemental: sources,
        cited: mut cited_sources,
        ..
    } = figs;
    // Header-derived sources lead: the pinned document is the record's main source.
    cited_sources.extend(sources);
    let sources = cited_sources;

    // Test profiles cite documents too. One the record also lists as a source is
    // checked as that source; any other is kept as a reference, so that its pin
    // is still judged.
    let references = references(&profile_urls, &index, &mut problems);

    let artifacts = artifacts(&conditions, &mut reader, &at);
    problems.extend(reader.problems.drain(..).map(|p| (0, p)));

    let id = record_id(parent_ids, file);
    let title = head.title.or(head.original_project);
    issues.extend(read_issues(
        &found,
        problems,
        std::mem::take(&mut reader.near_misses),
    ));
    Imported {
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
        issues,
    }
}

/// The record's id: its first parent record id, else the file's stem.
fn record_id(parent_ids: Vec<String>, file: &Path) -> String {
    parent_ids.into_iter().next().unwrap_or_else(|| {
        file.file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "record".into())
    })
}

/// The problems found reading blocks' values, then the keys that look mistyped
/// (as warnings), as issues at their blocks' starts.
fn read_issues(
    found: &[Block<'_>],
    problems: Vec<(usize, Problem)>,
    near_misses: Vec<(usize, Problem)>,
) -> Vec<Issue> {
    let mut issues = block_issues(found, problems);
    issues.extend(
        block_issues(found, near_misses)
            .into_iter()
            .map(|i| Issue { warning: true, ..i }),
    );
    issues
}

/// The problems found reading blocks' values, as issues at their blocks' starts
/// (block 0: not inside a block).
fn block_issues(found: &[Block<'_>], problems: Vec<(usize, Problem)>) -> Vec<Issue> {
    let starts: HashMap<usize, Position> = found.iter().map(|b| (b.index, b.start)).collect();
    problems
        .into_iter()
        .map(|(block, p)| Issue {
            block: (block > 0).then_some(block),
            position: starts.get(&block).copied(),
            message: p.message,
            pointer: Some(p.pointer),
            warning: false,
        })
        .collect()
}

/// Where each block's objects stand (its offset in the file and its spans), so
/// that sources, figures and artifacts keep their place in the file.
type BlockSpans = HashMap<usize, (usize, super::spans::Spans)>;

/// What the figures of a record document are read against: its header, and the
/// sources so far (the supplemental list, and those built from figures).
struct Figures<'h> {
    head: &'h Header,
    /// The header's pinned document, parsed.
    header: Option<url::ForgeUrl>,
    header_at: At,
    index: SourceIndex,
    supplemental: Vec<Source>,
    cited: Vec<Source>,
    /// The source the header declares (its `Pinned document` at its `Source
    /// revision`), once a figure cites it: index into `cited`.
    declared: Option<usize>,
}

impl Figures<'_> {
    /// The `n`th figure as a claim, with the source it cites found or built.
    fn figure(
        &mut self,
        reader: &mut Reader,
        at: &dyn Fn(usize, &str) -> At,
        (block, ptr, f): (usize, &str, &Map<String, Value>),
        n: usize,
    ) -> Claim {
        let here = at(block, ptr);
        reader.near_misses(block, f, ptr, FIGURE_KEYS);
        let label = reader
            .text(f, "label", ptr)
            .or_else(|| reader.text(f, "metric", ptr))
            .unwrap_or_else(|| format!("figure {n}"));
        let evidence_url = reader.string(f, "evidence_url", ptr);
        let parsed = evidence_url.as_deref().and_then(|u| url::parse(u).ok());
        let source_line = reader.line(f, "source_line", ptr);
        let lines = source_line
            .and_then(|l| Lines::single(l).ok())
            .or_else(|| parsed.as_ref().and_then(|p| p.lines));
        let conds = f.get("conditions").and_then(Value::as_object);
        let cptr = format!("{ptr}/conditions");
        let correct = reader
            .count(f, "correct", ptr)
            .or_else(|| conds.and_then(|c| reader.count(c, "correct", &cptr)));
        let total = reader
            .count(f, "total", ptr)
            .or_else(|| conds.and_then(|c| reader.count(c, "total", &cptr)));
        let source_id = reader.text(f, "source_document_id", ptr);
        let sha = reader.string(f, "source_document_sha256", ptr);

        let source_id = self.source_id(source_id, parsed.as_ref());
        let source_id = self.cite(
            source_id,
            parsed.as_ref(),
            evidence_url.as_deref(),
            sha.as_deref(),
            here,
        );
        // A figure at another commit than its declared source raises
        // `revision-conflict`; the hash it carries is of that conflict.
        let elsewhere = self.declared.is_some_and(|d| {
            source_id.as_deref() == Some(self.cited[d].id.as_str())
                && parsed
                    .as_ref()
                    .and_then(|p| p.revision.as_ref()?.commit())
                    .is_some_and(|c| {
                        self.cited[d].revision.as_ref().and_then(Revision::commit) != Some(c)
                    })
        });
        if !elsewhere {
            self.agree_on_hash(reader, ptr, &label, sha.as_deref(), source_id.as_deref());
        }
        if !f.contains_key("value") {
            reader.problem(
                ptr,
                format!("figure `{label}` has no `value`, so nothing can be checked"),
            );
        }
        let parsed_url = match &evidence_url {
            Some(u) => ParsedUrl::with(u, parsed),
            None => ParsedUrl::default(),
        };
        Claim {
            label,
            source: source_id,
            lines,
            value: reader.value(f, "value", ptr),
            unit: reader.string(f, "unit", ptr),
            metric: reader.string(f, "metric", ptr),
            statistic: reader.string(f, "statistic", ptr),
            url: evidence_url,
            correct,
            total,
            at: here,
            parsed_url,
        }
    }

    /// The source a figure cites by id, or by its URL's document; a figure
    /// pinning another commit than the source built from another figure gets
    /// its own.
    fn source_id(
        &self,
        mut source_id: Option<String>,
        parsed: Option<&url::ForgeUrl>,
    ) -> Option<String> {
        // A figure without an id cites the listed source at its URL's document.
        if let (None, Some(p)) = (&source_id, parsed) {
            source_id = self
                .index
                .find_document(p)
                .map(|at| at.of(&self.supplemental, &self.cited).id.clone());
        }
        // A source is a document at a revision: a figure whose id names a source
        // built from another figure (no supplemental entry or header declares it)
        // but whose URL pins another commit cites a source of its own,
        // `ID@SHORT`, rather than being checked at the other figure's commit. The
        // header's source is a declaration: a figure citing it at another commit
        // keeps it, and the conflict is said.
        let pinned = parsed.and_then(|p| p.revision.as_ref()?.commit().map(|c| (p, c)));
        if let (Some(given), Some((p, commit))) = (source_id.clone(), pinned) {
            if let Some(Listed::Cited(i)) = self
                .index
                .by_id(&given)
                .filter(|l| !matches!(l, Listed::Cited(i) if Some(*i) == self.declared))
            {
                let built_at = self.cited[i].revision.as_ref().and_then(Revision::commit);
                if built_at != Some(commit) {
                    source_id = Some(match self.index.find_document(p) {
                        Some(at) => at.of(&self.supplemental, &self.cited).id.clone(),
                        None => {
                            let mut own = format!("{given}@{}", commit.short());
                            let mut n = 1;
                            while self.index.has(&own) {
                                n += 1;
                                own = format!("{given}@{}-{n}", commit.short());
                            }
                            own
                        }
                    });
                }
            }
        }
        source_id
    }

    /// `base` when no source has that id yet, else `BASE@SHORT` for a pinned
    /// commit (`BASE@SHORT-N`, `BASE-N` unpinned) that none has.
    fn fresh_id(&self, base: String, commit: Option<&crate::record::CommitId>) -> String {
        if !self.index.has(&base) {
            return base;
        }
        let stem = match commit {
            Some(c) => format!("{base}@{}", c.short()),
            None => base,
        };
        let mut own = stem.clone();
        let mut n = 1;
        while self.index.has(&own) {
            n += 1;
            own = format!("{stem}-{n}");
        }
        own
    }

    /// The source a figure cites, built from its URL and hash (or the header's
    /// pinned document) when no source so far holds it.
    fn cite(
        &mut self,
        mut source_id: Option<String>,
        parsed: Option<&url::ForgeUrl>,
        evidence_url: Option<&str>,
        sha: Option<&str>,
        here: At,
    ) -> Option<String> {
        let pinned = parsed.and_then(|p| p.revision.as_ref()?.commit().map(|c| (p, c)));
        // A cited document no supplemental entry lists is built from the figure's
        // URL and hash, and from the header's pinned document when it is that one.
        // A figure naming no source, whose document no source holds at its
        // revision (`source_id` looked), cites a source of its own: named by its
        // path, or `PATH@SHORT` (`PATH-N`) when another source has that name
        // (the same path at another commit, or in another repository), never
        // the other source.
        let id = source_id.clone().or_else(|| {
            parsed.as_ref().map(|p| {
                let path = p.path.clone().unwrap_or_else(|| "document".to_string());
                self.fresh_id(path, pinned.map(|(_, c)| c))
            })
        });
        if let Some(id) = id.as_deref().filter(|id| !self.index.has(id)) {
            let from_header = self.header_document(parsed, pinned.map(|(_, c)| c));
            let header_revision = |h: &url::ForgeUrl| self.header_revision(h);
            let built = match (&from_header, &parsed) {
                (Some(h), _) => Some(Source {
                    id: id.to_string(),
                    parsed_url: match &self.head.pinned_document {
                        Some(u) => ParsedUrl::with(u, Some(h.clone())),
                        None => ParsedUrl::default(),
                    },
                    url: self.head.pinned_document.clone(),
                    repository: Some(h.repository_url()),
                    revision: header_revision(h),
                    path: h.path.clone(),
                    sha256: sha.map(Recorded::parse_sha256),
                    commit_time: self.head.commit_time.clone(),
                    at: if self.header_at.0.is_some() {
                        self.header_at
                    } else {
                        here
                    },
                }),
                (None, Some(p)) => Some({
                    let url = evidence_url.map(|u| u.split('#').next().unwrap_or(u).to_string());
                    Source {
                        id: id.to_string(),
                        parsed_url: match &url {
                            Some(u) => ParsedUrl::with(u, Some(without_fragment(p, u))),
                            None => ParsedUrl::default(),
                        },
                        url,
                        repository: Some(p.repository_url()),
                        revision: p.revision.clone(),
                        path: p.path.clone(),
                        sha256: sha.map(Recorded::parse_sha256),
                        commit_time: None,
                        at: here,
                    }
                }),
                (None, None) => None,
            };
            if let Some(s) = built {
                if from_header.is_some() && self.declared.is_none() {
                    self.declared = Some(self.cited.len());
                }
                self.index.add(&s, Listed::Cited(self.cited.len()));
                self.cited.push(s);
                source_id = Some(id.to_string());
            }
        } else if source_id.is_none() {
            source_id = id;
        }
        source_id
    }

    /// The revision the header declares for its pinned document `h`.
    fn header_revision(&self, h: &url::ForgeUrl) -> Option<Revision> {
        self.head
            .source_revision
            .as_deref()
            .map(Revision::parse)
            .or_else(|| h.revision.clone())
    }

    /// The header's pinned document, when it is the one a figure's URL (`parsed`,
    /// pinning `pinned`) cites: their paths agree and the figure pins the
    /// declared commit or the header's source is not built yet (its declaration
    /// stands, and a figure at another commit raises `revision-conflict`), or the
    /// figure gives no URL of its own. Once built, another id at another commit is
    /// a source of its own.
    fn header_document(
        &self,
        parsed: Option<&url::ForgeUrl>,
        pinned: Option<&crate::record::CommitId>,
    ) -> Option<url::ForgeUrl> {
        let header = self.header.clone();
        let undeclared = self.declared.is_none();
        match (parsed, header) {
            (Some(p), Some(h))
                if h.repo_path == p.repo_path
                    && h.path == p.path
                    && (undeclared
                        || pinned.is_none_or(|c| {
                            self.header_revision(&h).as_ref().and_then(Revision::commit) == Some(c)
                        })) =>
            {
                Some(h)
            }
            (None, h) => h,
            _ => None,
        }
    }

    /// A problem when the figure's hash is not its source's.
    fn agree_on_hash(
        &self,
        reader: &mut Reader,
        ptr: &str,
        label: &str,
        sha: Option<&str>,
        source_id: Option<&str>,
    ) {
        // The figure and its source must agree on the document's hash.
        if let (Some(fig_sha), Some(s)) = (
            sha,
            source_id
                .and_then(|id| self.index.by_id(id))
                .map(|at| at.of(&self.supplemental, &self.cited)),
        ) {
            if let Some(recorded) = &s.sha256 {
                if !recorded.text().eq_ignore_ascii_case(fig_sha.trim()) {
                    reader.problem(
                        &format!("{ptr}/source_document_sha256"),
                        format!(
                            "figure `{label}` records sha256 `{fig_sha}` for `{}`, whose source records `{}`",
                            s.id,
                            recorded.text()
                        ),
                    );
                }
            }
        }
    }
}

/// Test profiles' URLs that no source holds, as references (one per URL).
fn references(
    profile_urls: &[(usize, String, Option<String>, String)],
    index: &SourceIndex,
    problems: &mut Vec<(usize, Problem)>,
) -> Vec<Reference> {
    let mut references: Vec<Reference> = Vec::new();
    let mut referenced: HashSet<&str> = HashSet::new();
    for (i, (block, ptr, label, u)) in profile_urls.iter().enumerate() {
        match url::parse(u) {
            Ok(p) if index.find_document(&p).is_some() => {}
            Ok(_) => {
                if referenced.insert(u.as_str()) {
                    references.push(Reference {
                        label: label
                            .clone()
                            .unwrap_or_else(|| format!("test profile {}", i + 1)),
                        url: u.clone(),
                    });
                }
            }
            Err(e) => problems.push((
                *block,
                Problem {
                    pointer: ptr.clone(),
                    message: e.to_string(),
                },
            )),
        }
    }
    references
}

/// The ```json blocks parsed as JSON, and where their objects stand; a broken
/// block is an issue (the first [`MAX_BROKEN_REPORTED`] one by one, the rest
/// counted in one), and so is a document without blocks.
fn parse_blocks(
    found: &[Block<'_>],
    lines: &LineIndex<'_>,
    issues: &mut Vec<Issue>,
) -> (Vec<(usize, Value)>, BlockSpans) {
    let mut values: Vec<(usize, Value)> = Vec::new();
    // Where each block's objects stand, so that sources, figures and artifacts
    // keep their place in the file.
    let mut spans: BlockSpans = HashMap::new();
    let mut broken: Vec<usize> = Vec::new();
    for b in found {
        match serde_json::from_str::<Value>(b.text) {
            Ok(v) => {
                values.push((b.index, v));
                spans.insert(b.index, (b.offset, super::spans::Spans::scan(b.text)));
            }
            // Each broken block is reported up to a cap, then counted: memory
            // stays small however many a document holds.
            Err(_) if broken.len() >= MAX_BROKEN_REPORTED => broken.push(b.index),
            Err(e) => {
                broken.push(b.index);
                issues.push(Issue {
                    block: Some(b.index),
                    position: Some(file_position(lines, b, e.line(), e.column())),
                    pointer: None,
                    message: format!("not valid JSON: {}", json_error(&e)),
                    warning: false,
                });
            }
        }
    }
    if broken.len() > MAX_BROKEN_REPORTED {
        let first = broken[MAX_BROKEN_REPORTED];
        issues.push(Issue {
            block: Some(first),
            position: found.iter().find(|b| b.index == first).map(|b| b.start),
            pointer: None,
            message: format!(
                "`{}` more ```json blocks are not valid JSON either (only the first `{MAX_BROKEN_REPORTED}` are reported); skipped",
                broken.len() - MAX_BROKEN_REPORTED
            ),
            warning: false,
        });
    }
    if found.is_empty() && issues.is_empty() {
        issues.push(Issue {
            block: None,
            position: None,
            pointer: None,
            message: "no ```json blocks: nothing to audit in this document".into(),
            warning: false,
        });
    }
    (values, spans)
}

/// The keys of a figure pinaudit reads; a key a small edit away from one of
/// them is named in a warning (the record's other keys are its own).
const FIGURE_KEYS: &[&str] = &[
    "label",
    "metric",
    "value",
    "unit",
    "statistic",
    "uncertainty",
    "conditions",
    "correct",
    "total",
    "evidence_state",
    "site_reproduced",
    "source_document_id",
    "source_document_sha256",
    "source_line",
    "evidence_url",
];

/// The keys of a supplemental source pinaudit reads (see [`FIGURE_KEYS`]).
const SOURCE_KEYS: &[&str] = &[
    "document_id",
    "parent_record_id",
    "publisher",
    "repository",
    "revision",
    "document_path",
    "pinned_url",
    "document_sha256",
    "last_commit_at",
    "checked_on",
    "public_URL_is_immutable",
    "revision_kind",
];

/// The supplemental sources, each added to the index (the first of an id wins).
fn supplemental_sources(
    supplemental: &[(usize, String, &Map<String, Value>)],
    reader: &mut Reader,
    problems: &mut Vec<(usize, Problem)>,
    at: &dyn Fn(usize, &str) -> At,
    index: &mut SourceIndex,
) -> Vec<Source> {
    let mut flush = |reader: &mut Reader, block: usize| {
        problems.extend(reader.problems.drain(..).map(|p| (block, p)));
    };
    let mut sources: Vec<Source> = Vec::new();
    for (block, ptr, s) in supplemental {
        reader.near_misses(*block, s, ptr, SOURCE_KEYS);
        let Some(id) = reader.text(s, "document_id", ptr) else {
            reader.problem(ptr, "supplemental source has no `document_id`; skipped");
            flush(reader, *block);
            continue;
        };
        let pinned_url = reader.string(s, "pinned_url", ptr);
        let parsed = pinned_url.as_deref().and_then(|u| url::parse(u).ok());
        let repository = parsed
            .as_ref()
            .map(url::ForgeUrl::repository_url)
            .or_else(|| reader.string(s, "repository", ptr));
        let source = Source {
            id,
            repository,
            revision: reader
                .string(s, "revision", ptr)
                .map(|r| Revision::parse(&r))
                .or_else(|| parsed.as_ref().and_then(|p| p.revision.clone())),
            path: reader
                .string(s, "document_path", ptr)
                .or_else(|| parsed.as_ref().and_then(|p| p.path.clone())),
            sha256: reader
                .string(s, "document_sha256", ptr)
                .map(|h| Recorded::parse_sha256(&h)),
            commit_time: reader.string(s, "last_commit_at", ptr),
            parsed_url: match &pinned_url {
                Some(u) => ParsedUrl::with(u, parsed),
                None => ParsedUrl::default(),
            },
            url: pinned_url,
            at: at(*block, ptr),
        };
        flush(reader, *block);
        if !index.has(&source.id) {
            index.add(&source, Listed::Supplemental(sources.len()));
            sources.push(source);
        }
    }
    sources
}

/// A figure carries a value and says what it measures or where it comes from;
/// `{"label": "temperature", "value": 0.2}` in a recipe is not one.
fn looks_like_figure(o: &Map<String, Value>) -> bool {
    const FIGURE_KEYS: [&str; 5] = [
        "metric",
        "unit",
        "source_document_id",
        "evidence_url",
        "source_line",
    ];
    o.contains_key("value") && FIGURE_KEYS.iter().any(|k| o.contains_key(*k))
}

/// Where a source stands while a record is imported: in the supplemental list or
/// among the sources built from figures.
#[derive(Debug, Clone, Copy)]
enum Listed {
    Supplemental(usize),
    Cited(usize),
}

impl Listed {
    fn of<'s>(self, supplemental: &'s [Source], cited: &'s [Source]) -> &'s Source {
        match self {
            Listed::Supplemental(i) => &supplemental[i],
            Listed::Cited(i) => &cited[i],
        }
    }
}

/// A document as sources and URLs name it: host, repository path (ASCII
/// lowercase) and path in the repository.
type DocumentKey = (String, String, Option<String>);

/// The sources of a record being imported, by id and by the document they hold,
/// so that each figure finds its source in constant time rather than by a scan
/// (which made 10k figures take minutes).
#[derive(Default)]
struct SourceIndex {
    ids: HashMap<String, Listed>,
    /// Sources by document, in the order they were listed, with their revision.
    documents: HashMap<DocumentKey, Vec<(Option<Revision>, Listed)>>,
}

impl SourceIndex {
    fn has(&self, id: &str) -> bool {
        self.ids.contains_key(id)
    }

    fn by_id(&self, id: &str) -> Option<Listed> {
        self.ids.get(id).copied()
    }

    fn add(&mut self, s: &Source, at: Listed) {
        self.ids.entry(s.id.clone()).or_insert(at);
        if let Some((key, rev)) = document_of(s) {
            self.documents.entry(key).or_default().push((rev, at));
        }
    }

    /// The first source that holds the document a parsed URL points at: same host,
    /// repository (ASCII case aside) and path, and the URL's revision if it has one.
    fn find_document(&self, p: &url::ForgeUrl) -> Option<Listed> {
        let key = (
            p.host.clone(),
            p.repo_path.to_ascii_lowercase(),
            p.path.clone(),
        );
        self.documents
            .get(&key)?
            .iter()
            .find(|(rev, _)| p.revision.is_none() || *rev == p.revision)
            .map(|(_, at)| *at)
    }
}

/// The document a source holds and the revision it is pinned at, from its URL,
/// or from its repository and path.
fn document_of(s: &Source) -> Option<(DocumentKey, Option<Revision>)> {
    let from_url = s.url_parsed();
    let from_repo = match from_url {
        Some(_) => None,
        None => s.repository.as_deref().and_then(url::parse_repository),
    };
    let repo = from_url.as_deref().or(from_repo.as_ref())?;
    let path = s
        .path
        .clone()
        .or_else(|| from_url.as_ref().and_then(|u| u.path.clone()));
    let rev = s
        .revision
        .clone()
        .or_else(|| from_url.as_ref().and_then(|u| u.revision.clone()));
    Some((
        (repo.host.clone(), repo.repo_path.to_ascii_lowercase(), path),
        rev,
    ))
}

/// The parse of `text`, the fragment-less form of the URL `p` was parsed from:
/// `p` without its line anchor (the fragment decides nothing else).
fn without_fragment(p: &url::ForgeUrl, text: &str) -> url::ForgeUrl {
    url::ForgeUrl {
        lines: None,
        raw: text.trim().to_string(),
        ..p.clone()
    }
}

/// What a walk over the blocks collects, each with its block index and pointer.
#[derive(Default)]
struct Walk<'v> {
    block: usize,
    figures: Vec<(usize, String, &'v Map<String, Value>)>,
    supplemental: Vec<(usize, String, &'v Map<String, Value>)>,
    conditions: Vec<(usize, String, &'v Map<String, Value>)>,
    /// Test profiles' evidence URLs: (block, pointer, profile label, URL).
    profile_urls: Vec<(usize, String, Option<String>, String)>,
    parent_ids: Vec<String>,
    parent_seen: HashSet<String>,
}

impl<'v> Walk<'v> {
    /// The walk over every parsed block, in order.
    fn of(values: &'v [(usize, Value)]) -> Walk<'v> {
        let mut walk = Walk::default();
        for (index, v) in values {
            walk.block = *index;
            walk.visit(v, "");
        }
        walk
    }

    fn visit(&mut self, v: &'v Value, ptr: &str) {
        match v {
            Value::Array(items) => {
                let is_figures = !items.is_empty()
                    && items.iter().all(|i| {
                        i.as_object()
                            .is_some_and(|o| o.contains_key("label") || o.contains_key("metric"))
                    })
                    && items
                        .iter()
                        .any(|i| i.as_object().is_some_and(looks_like_figure));
                for (i, item) in items.iter().enumerate() {
                    let p = format!("{ptr}/{i}");
                    if is_figures {
                        if let Some(o) = item.as_object() {
                            self.figures.push((self.block, p.clone(), o));
                        }
                    }
                    self.visit(item, &p);
                }
            }
            Value::Object(o) => {
                for (k, child) in o {
                    let p = format!("{ptr}/{}", k.replace('~', "~0").replace('/', "~1"));
                    match (k.as_str(), child) {
                        ("figures", Value::Array(items)) => {
                            for (i, f) in items.iter().enumerate() {
                                if let Some(f) = f.as_object() {
                                    self.figures.push((self.block, format!("{p}/{i}"), f));
                                }
                            }
                            for (i, f) in items.iter().enumerate() {
                                if let Some(c) = f.get("conditions") {
                                    self.visit_conditions(c, &format!("{p}/{i}/conditions"));
                                }
                            }
                            continue;
                        }
                        ("supplemental_sources", Value::Array(items)) => {
                            for (i, s) in items.iter().enumerate() {
                                if let Some(s) = s.as_object() {
                                    if let Some(pid) =
                                        s.get("parent_record_id").and_then(Value::as_str)
                                    {
                                        if self.parent_seen.insert(pid.to_string()) {
                                            self.parent_ids.push(pid.to_string());
                                        }
                                    }
                                    self.supplemental.push((self.block, format!("{p}/{i}"), s));
                                }
                            }
                            continue;
                        }
                        ("conditions", c) => {
                            self.visit_conditions(c, &p);
                            continue;
                        }
                        ("test_profiles", Value::Array(items)) => {
                            for (i, t) in items.iter().enumerate() {
                                if let Some(u) = t.get("evidence_url").and_then(Value::as_str) {
                                    let label = t.get("label").and_then(Value::as_str);
                                    self.profile_urls.push((
                                        self.block,
                                        format!("{p}/{i}/evidence_url"),
                                        label.map(str::to_string),
                                        u.to_string(),
                                    ));
                                }
                            }
                        }
                        _ => {}
                    }
                    self.visit(child, &p);
                }
            }
            _ => {}
        }
    }

    fn visit_conditions(&mut self, c: &'v Value, ptr: &str) {
        if let Some(o) = c.as_object() {
            self.conditions.push((self.block, ptr.to_string(), o));
        }
    }
}

/// Weights and runtimes named in conditions, one artifact per distinct pin. A pin
/// recorded with no name beside it (a `weight_hash` in top-level conditions) still
/// makes an artifact, labelled by where it stands, so that every recorded hash and
/// revision is judged.
fn artifacts(
    conditions: &[(usize, String, &Map<String, Value>)],
    r: &mut Reader,
    at: &dyn Fn(usize, &str) -> At,
) -> Vec<Artifact> {
    let mut found = Artifacts::default();
    for (block, ptr, c) in conditions {
        if let Some((weights, names)) = weights_named(c, r, ptr, at(*block, ptr)) {
            found.add_weights(weights, names);
        }
        if let Some(runtime) = runtime_named(c, r, ptr, at(*block, ptr)) {
            found.add(runtime);
        }
    }
    found.out
}

/// What tells two artifacts apart: everything they say but where they stand.
type ArtifactKey = (
    ArtifactKind,
    String,
    Option<String>,
    Option<(bool, String)>,
    Option<String>,
    Option<String>,
    Vec<String>,
);

fn artifact_key(a: &Artifact) -> ArtifactKey {
    (
        a.kind,
        a.label.clone(),
        a.revision.clone(),
        a.sha256.as_ref().map(|h| (h.valid().is_some(), h.text())),
        a.digest.clone(),
        a.repository.clone(),
        a.files.clone(),
    )
}

/// The artifacts of a record document so far.
#[derive(Default)]
struct Artifacts {
    out: Vec<Artifact>,
    /// Artifacts compare equal wherever they stand (`At` always equals), so
    /// they are told apart by what they say.
    seen: HashSet<ArtifactKey>,
    /// Per weights artifact (its index in `out`), the names it goes by.
    weights: Vec<(usize, Vec<String>)>,
}

impl Artifacts {
    /// Adds `a` unless an artifact saying the same is there; whether it was added.
    fn add(&mut self, a: Artifact) -> bool {
        let added = self.seen.insert(artifact_key(&a));
        if added {
            self.out.push(a);
        }
        added
    }

    /// One model is one artifact, however its conditions name it: one object
    /// says `model`, another `model` and `model_artifact`. Weights that share a
    /// name, with no pin of one contradicting the other's, are merged (their
    /// names and pins together), so that an unpinned model is said once.
    fn add_weights(&mut self, w: Artifact, names: Vec<String>) {
        let fits = |a: &Artifact| {
            let agree =
                |x: Option<&String>, y: Option<&String>| x.is_none() || y.is_none() || x == y;
            agree(a.revision.as_ref(), w.revision.as_ref())
                && agree(a.repository.as_ref(), w.repository.as_ref())
                && (a.sha256.is_none() || w.sha256.is_none() || a.sha256 == w.sha256)
        };
        let out = &mut self.out;
        let same = self
            .weights
            .iter_mut()
            .find(|(i, known)| names.iter().any(|n| known.contains(n)) && fits(&out[*i]));
        match same {
            Some((i, known)) => {
                let a = &mut out[*i];
                a.revision = a.revision.take().or(w.revision);
                a.sha256 = a.sha256.take().or(w.sha256);
                a.repository = a.repository.take().or(w.repository);
                for n in names {
                    if !known.contains(&n) {
                        known.push(n);
                    }
                }
            }
            None => {
                let at = self.out.len();
                if self.add(w) {
                    self.weights.push((at, names));
                }
            }
        }
    }
}

/// The weights a conditions object names (`model`, `model_artifact`,
/// `model_revision`, `weight_hash`, the model repository), with the names it
/// goes by; `None` when it names none and pins none.
fn weights_named(
    c: &Map<String, Value>,
    r: &mut Reader,
    ptr: &str,
    at: At,
) -> Option<(Artifact, Vec<String>)> {
    let revision = r.text(c, "model_revision", ptr);
    let sha256 = r
        .string(c, "weight_hash", ptr)
        .map(|h| Recorded::parse_sha256(&h));
    let names: Vec<String> = ["model_artifact", "model"]
        .iter()
        .filter_map(|k| c.get(*k).and_then(Value::as_str))
        .map(|n| n.trim().to_string())
        .filter(|n| !n.is_empty())
        .collect();
    let named = r
        .text(c, "model_artifact", ptr)
        .or_else(|| r.text(c, "model", ptr));
    // The model repository: given as its own key, or as the artifact's name
    // when that is a URL.
    let repository = r
        .string(c, "model_repository", ptr)
        .or_else(|| r.string(c, "model_url", ptr))
        .or_else(|| named.clone().filter(|n| looks_like_url(n)));
    let label = named.or_else(|| {
        (revision.is_some() || sha256.is_some()).then(|| format!("weights at `{ptr}`"))
    })?;
    let weights = Artifact {
        kind: ArtifactKind::Weights,
        label,
        revision,
        sha256,
        digest: None,
        at,
        repository,
        files: Vec::new(),
    };
    Some((weights, names))
}

/// The runtime a conditions object names (`engine`,
/// `runtime_execution_revision`, `executed_image_digest`); `None` when it
/// names none and pins none.
fn runtime_named(c: &Map<String, Value>, r: &mut Reader, ptr: &str, at: At) -> Option<Artifact> {
    let revision = r.text(c, "runtime_execution_revision", ptr);
    let digest = r.string(c, "executed_image_digest", ptr);
    let label = r.text(c, "engine", ptr).or_else(|| {
        (revision.is_some() || digest.is_some()).then(|| format!("runtime at `{ptr}`"))
    })?;
    Some(Artifact {
        kind: ArtifactKind::Runtime,
        label,
        revision,
        sha256: None,
        digest,
        at,
        repository: None,
        files: Vec::new(),
    })
}

/// Whether a model name is a URL (`https://huggingface.co/ORG/REPO`) rather than
/// a label, so that it also names the model repository.
fn looks_like_url(s: &str) -> bool {
    let s = s.trim();
    !s.contains(char::is_whitespace)
        && (s.starts_with("https://") || s.starts_with("http://") || s.starts_with("git://"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_without_its_anchor_parses_as_the_anchored_one_without_lines() {
        let sha = "de1fa14ea798512f54dafc8b8795eb3ef1a6c367";
        for u in [
            format!("https://github.com/o/r/blob/{sha}/docs/a%20b.md#L4-L6"),
            format!(" http://tok:s@git.example:3000/o/r/src/commit/{sha}/a.md?x=1#L2"),
            format!("github.com/o/r/blob/{sha}/README.md#L43"),
            format!("https://bitbucket.org/o/r/src/{sha}/a.md#lines-7:9"),
            "https://huggingface.co/o/m/resolve/main/config.json#L1".to_string(),
        ] {
            let text = u.split('#').next().unwrap();
            let anchored = url::parse(&u).expect("parses");
            assert_eq!(
                without_fragment(&anchored, text),
                url::parse(text).expect("parses"),
                "{u}"
            );
        }
    }

    #[test]
    fn model_urls_name_the_repository() {
        assert!(looks_like_url("https://huggingface.co/org/model"));
        assert!(!looks_like_url("k3-neuron-iq1s, nine GGUF shards"));
        assert!(!looks_like_url("https://x.org/a and more"));
    }

    #[test]
    fn positions_in_flattened_text() {
        let text = "# T - A: b ```json {\"a\": } ``` tail";
        let imported = import(text, Path::new("x.txt"));
        let issue = &imported.issues[0];
        assert_eq!(issue.block, Some(1));
        let pos = issue.position.unwrap();
        assert_eq!(pos.line, 1);
        // The block body starts after "```json" at column 19; the error is 7 chars in.
        assert!(pos.column > 19, "{pos:?}");
    }

    #[test]
    fn unclosed_block_is_reported() {
        let imported = import("intro\n```json\n{\"a\": 1}\n", Path::new("x.md"));
        assert!(imported.issues[0].message.contains("never closed"));
        assert_eq!(imported.issues[0].position.unwrap().line, 2);
    }

    #[test]
    fn header_bullets_flattened() {
        let h = header("# Title words here - Type: Report - Pinned document: https://x.org/a/b/blob/main/R.md - Source revision: abc - Source commit time (not experiment date): 2026-08-07T15:45:04Z");
        assert_eq!(h.title.as_deref(), Some("Title words here"));
        assert_eq!(
            h.pinned_document.as_deref(),
            Some("https://x.org/a/b/blob/main/R.md")
        );
        assert_eq!(h.source_revision.as_deref(), Some("abc"));
        assert_eq!(h.commit_time.as_deref(), Some("2026-08-07T15:45:04Z"));
    }
}
