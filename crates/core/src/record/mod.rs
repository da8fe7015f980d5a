//! The record model: what a published record says it measured and where.
//!
//! Everything pinaudit reads (pin files, record documents) is turned into these
//! types once, at the edge. Values that a check must judge (a hash that may be
//! malformed, a revision that may be a branch name) are kept as parsed newtypes
//! *or* as the raw text that failed to parse, so that the check can report the
//! exact text the author wrote instead of the input being rejected wholesale.

pub mod document;
mod forge;
pub mod lenient;
pub mod pinfile;
pub mod spans;
pub mod url;

use std::fmt;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// A full git commit id: 40 hex digits (SHA-1) or 64 (SHA-256), lowercase.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CommitId(String);

impl CommitId {
    /// Parses a full commit id; branch names, tags and short ids are refused.
    pub fn parse(s: &str) -> Option<CommitId> {
        let s = s.trim();
        let full = s.len() == 40 || s.len() == 64;
        (full && s.bytes().all(|b| b.is_ascii_hexdigit())).then(|| CommitId(s.to_ascii_lowercase()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The first seven digits, as git prints them.
    pub fn short(&self) -> &str {
        &self.0[..7]
    }
}

impl fmt::Display for CommitId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A revision as a record names it: pinned to a commit, or a moving name.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Revision {
    /// A full commit id: content at it never changes.
    Commit(CommitId),
    /// A branch, tag or short id: what it names can change.
    Ref(String),
}

impl Revision {
    pub fn parse(s: &str) -> Revision {
        match CommitId::parse(s) {
            Some(c) => Revision::Commit(c),
            None => Revision::Ref(s.trim().to_string()),
        }
    }

    pub fn commit(&self) -> Option<&CommitId> {
        match self {
            Revision::Commit(c) => Some(c),
            Revision::Ref(_) => None,
        }
    }

    pub fn as_str(&self) -> &str {
        match self {
            Revision::Commit(c) => c.as_str(),
            Revision::Ref(r) => r,
        }
    }
}

impl fmt::Display for Revision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A well-formed sha256 digest: 64 hex digits, kept lowercase.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Sha256(String);

impl Sha256 {
    pub fn parse(s: &str) -> Option<Sha256> {
        let s = s.trim();
        let s = s.strip_prefix("sha256:").unwrap_or(s);
        (s.len() == 64 && s.bytes().all(|b| b.is_ascii_hexdigit()))
            .then(|| Sha256(s.to_ascii_lowercase()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Sha256 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A recorded value that is either well formed or kept as the text the author wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Recorded<T> {
    Valid(T),
    Malformed(String),
}

impl<T: fmt::Display> Recorded<T> {
    pub fn text(&self) -> String {
        match self {
            Recorded::Valid(v) => v.to_string(),
            Recorded::Malformed(s) => s.clone(),
        }
    }

    pub fn valid(&self) -> Option<&T> {
        match self {
            Recorded::Valid(v) => Some(v),
            Recorded::Malformed(_) => None,
        }
    }
}

impl Recorded<Sha256> {
    pub(crate) fn parse_sha256(s: &str) -> Self {
        Sha256::parse(s).map_or_else(|| Recorded::Malformed(s.to_string()), Recorded::Valid)
    }
}

/// The largest line number pinaudit accepts; anything past it is a typo, not a document.
pub const MAX_LINE: u32 = 100_000_000;

/// A cited line range, 1-based and inclusive (`#L43` is 43..=43, `#L43-L45` is 43..=45).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "(u32, u32)", into = "(u32, u32)")]
pub struct Lines {
    first: u32,
    last: u32,
}

/// Why two numbers are no line range.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum LinesError {
    #[error("line numbers start at 1")]
    Zero,
    #[error("range ends (`{last}`) before it starts (`{first}`)")]
    Reversed { first: u32, last: u32 },
    #[error("line `{last}` is past the largest accepted line ({MAX_LINE})")]
    PastLargest { last: u32 },
}

impl Lines {
    pub fn new(first: u32, last: u32) -> Result<Lines, LinesError> {
        if first == 0 {
            return Err(LinesError::Zero);
        }
        if last < first {
            return Err(LinesError::Reversed { first, last });
        }
        if last > MAX_LINE {
            return Err(LinesError::PastLargest { last });
        }
        Ok(Lines { first, last })
    }

    pub fn single(line: u32) -> Result<Lines, LinesError> {
        Lines::new(line, line)
    }

    pub fn first(&self) -> u32 {
        self.first
    }

    pub fn last(&self) -> u32 {
        self.last
    }
}

impl TryFrom<(u32, u32)> for Lines {
    type Error = LinesError;
    fn try_from((a, b): (u32, u32)) -> Result<Self, LinesError> {
        Lines::new(a, b)
    }
}

impl From<Lines> for (u32, u32) {
    fn from(l: Lines) -> (u32, u32) {
        (l.first, l.last)
    }
}

impl fmt::Display for Lines {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.first == self.last {
            write!(f, "L{}", self.first)
        } else {
            write!(f, "L{}-L{}", self.first, self.last)
        }
    }
}

/// A claimed number, keeping the decimal text the author wrote (`98.0` is not `98`).
#[derive(Debug, Clone, PartialEq)]
pub struct ClaimValue {
    text: String,
    value: f64,
}

impl ClaimValue {
    /// Parses a plain decimal number (`2.9`, `-3.16`, `1048576`, `1e5`).
    pub fn parse(text: &str) -> Option<ClaimValue> {
        let text = text.trim();
        let value: f64 = text.parse().ok()?;
        value.is_finite().then(|| ClaimValue {
            text: text.to_string(),
            value,
        })
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    pub fn value(&self) -> f64 {
        self.value
    }

    /// How many digits the author wrote after the decimal point.
    pub(crate) fn decimals(&self) -> u32 {
        let mantissa = self.text.split(['e', 'E']).next().unwrap_or("");
        mantissa
            .split_once('.')
            .map_or(0, |(_, frac)| frac.len() as u32)
    }
}

impl fmt::Display for ClaimValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// One place in an input file, 1-based, in characters (a flattened one-line
/// record's column counts characters, as editors do).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Position {
    pub line: usize,
    pub column: usize,
}

/// Where a source, claim or artifact stands in its record file (findings
/// point at the line to fix). It is not part of what the record says: two records
/// that say the same thing are equal wherever they stand, so a pin file written
/// from a record document compares equal to it.
#[derive(Debug, Clone, Copy, Default, Eq)]
pub struct At(pub Option<Position>);

impl PartialEq for At {
    fn eq(&self, _: &At) -> bool {
        true
    }
}

/// The sha256 of the bytes of the input file a record was read from, when the
/// reader gave it (the whole-record memo is keyed by it). Not part of what the
/// record says: two records that say the same thing are equal whatever files
/// they came from, as with [`At`].
#[derive(Debug, Clone, Copy, Default, Eq)]
pub struct InputDigest(pub Option<[u8; 32]>);

impl PartialEq for InputDigest {
    fn eq(&self, _: &InputDigest) -> bool {
        true
    }
}

/// The parse of a URL field, made once and kept beside it, so that the
/// importer, the record checks, planning and the checks ask the `url` crate
/// once per URL rather than once each. It is kept with the text it was made
/// of: a field changed since (credentials redacted) is parsed afresh. Not part
/// of what the record says (equal whatever it holds, as [`At`]).
///
/// Boxed: every source and claim has one, most records are read and held all
/// at once, and a parse is far larger than the pointer (an empty one costs the
/// pointer only).
#[derive(Debug, Clone, Default)]
pub struct ParsedUrl(std::sync::OnceLock<Box<(String, Option<url::ForgeUrl>)>>);

impl PartialEq for ParsedUrl {
    fn eq(&self, _: &ParsedUrl) -> bool {
        true
    }
}

impl ParsedUrl {
    /// A parse already made of `text` (the importer parses each URL as it
    /// reads it).
    pub fn with(text: &str, parsed: Option<url::ForgeUrl>) -> ParsedUrl {
        ParsedUrl(std::sync::OnceLock::from(Box::new((
            text.to_string(),
            parsed,
        ))))
    }

    /// The parse of `text`: the kept one when it was made of this text, else
    /// made now (and kept, when none was).
    pub fn of<'a>(&'a self, text: &str) -> Option<std::borrow::Cow<'a, url::ForgeUrl>> {
        let (kept, parsed) = &**self
            .0
            .get_or_init(|| Box::new((text.to_string(), url::parse(text).ok())));
        if kept == text {
            parsed.as_ref().map(std::borrow::Cow::Borrowed)
        } else {
            url::parse(text).ok().map(std::borrow::Cow::Owned)
        }
    }
}

/// One audited record: a write-up's figures, the documents they cite and what was run.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    pub id: String,
    pub title: Option<String>,
    pub file: PathBuf,
    pub sources: Vec<Source>,
    pub claims: Vec<Claim>,
    pub artifacts: Vec<Artifact>,
    /// Other URLs the record cites (test profiles' evidence) that no source covers.
    pub references: Vec<Reference>,
    /// The sha256 of the file it was read from.
    pub input: InputDigest,
}

/// A URL the record cites without a figure on it: its pin is still judged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reference {
    pub label: String,
    pub url: String,
}

impl Record {
    pub fn source(&self, id: &str) -> Option<&Source> {
        self.sources.iter().find(|s| s.id == id)
    }

    /// Every source by id, the first of a duplicated id winning as in
    /// [`Record::source`]: built once, so that checking each claim's source costs
    /// no scan of all sources (records of 100k figures).
    pub(crate) fn sources_by_id(&self) -> std::collections::HashMap<&str, &Source> {
        let mut map = std::collections::HashMap::with_capacity(self.sources.len());
        for s in &self.sources {
            map.entry(s.id.as_str()).or_insert(s);
        }
        map
    }
}

impl Record {
    /// Gives every figure the source it is checked against: the revision its own
    /// URL pins, when it pins a full commit, whatever its source declares (a
    /// record's text is judged as written). A source is a document at a
    /// revision: a figure whose URL pins another commit of its source's document
    /// cites a source of its own, `ID@SHORT` (one per commit, shared by every
    /// figure citing it), with the source's repository and path and no recorded
    /// hash or commit time. Run after the record-level checks, which judge the
    /// record as written (`revision-conflict` names the declared revision); the
    /// split is what the document checks and `show` read.
    pub fn at_cited_revisions(&mut self) {
        use std::collections::HashMap;
        // Sources by what they hold: (repository, commit, path).
        type Key = (String, CommitId, Option<String>);
        let holds = |s: &Source| -> Option<Key> {
            let from_url = s.url_parsed();
            let repo = from_url.clone().or_else(|| {
                s.repository
                    .as_deref()
                    .and_then(url::parse_repository)
                    .map(std::borrow::Cow::Owned)
            })?;
            let commit = match s.revision.clone().or_else(|| from_url?.revision.clone())? {
                Revision::Commit(c) => c,
                Revision::Ref(_) => return None,
            };
            let path = s.path.clone().or_else(|| repo.path.clone());
            Some((repo.clone_url().to_ascii_lowercase(), commit, path))
        };
        let mut by_key: HashMap<Key, usize> = HashMap::new();
        let mut by_id: HashMap<String, usize> = HashMap::new();
        for (i, s) in self.sources.iter().enumerate() {
            by_id.entry(s.id.clone()).or_insert(i);
            if let Some(k) = holds(s) {
                by_key.entry(k).or_insert(i);
            }
        }
        for c in &mut self.claims {
            let Some(cited) = c
                .url_parsed()
                .and_then(|p| p.revision.as_ref()?.commit().cloned())
            else {
                continue;
            };
            let Some(&at) = c.source.as_deref().and_then(|id| by_id.get(id)) else {
                continue;
            };
            let s = &self.sources[at];
            let held = holds(s);
            if held.as_ref().is_some_and(|(_, commit, _)| *commit == cited) {
                continue;
            }
            // The source's document, at the cited commit.
            let repo = s.url_parsed().or_else(|| {
                s.repository
                    .as_deref()
                    .and_then(url::parse_repository)
                    .map(std::borrow::Cow::Owned)
            });
            let Some(repo) = repo else { continue };
            let path = s.path.clone().or_else(|| repo.path.clone());
            let key = (
                repo.clone_url().to_ascii_lowercase(),
                cited.clone(),
                path.clone(),
            );
            let index = match by_key.get(&key) {
                Some(&i) => i,
                None => {
                    let mut id = format!("{}@{}", s.id, cited.short());
                    let mut n = 1;
                    while by_id.contains_key(&id) {
                        n += 1;
                        id = format!("{}@{}-{n}", s.id, cited.short());
                    }
                    let own = Source {
                        id: id.clone(),
                        url: path
                            .as_deref()
                            .and_then(|p| repo.web_url(cited.as_str(), p, None)),
                        repository: s.repository.clone(),
                        revision: Some(Revision::Commit(cited.clone())),
                        path,
                        sha256: None,
                        commit_time: None,
                        at: c.at,
                        parsed_url: ParsedUrl::default(),
                    };
                    self.sources.push(own);
                    let i = self.sources.len() - 1;
                    by_id.insert(id, i);
                    by_key.insert(key, i);
                    i
                }
            };
            c.source = Some(self.sources[index].id.clone());
        }
    }
}

/// A document at a revision of a repository.
#[derive(Debug, Clone, PartialEq)]
pub struct Source {
    pub id: String,
    /// The pinned URL the record gives for the document, if any.
    pub url: Option<String>,
    /// The repository's web or clone URL (`https://github.com/OWNER/REPO`).
    pub repository: Option<String>,
    pub revision: Option<Revision>,
    pub path: Option<String>,
    pub sha256: Option<Recorded<Sha256>>,
    /// The commit time the record states, as written (RFC 3339 expected).
    pub commit_time: Option<String>,
    /// Where the source stands in the record file.
    pub at: At,
    /// The parse of `url`.
    pub parsed_url: ParsedUrl,
}

/// Where a source's document is: repository, revision and path.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Located {
    pub repository: Option<String>,
    pub revision: Option<Revision>,
    pub path: Option<String>,
}

impl Source {
    /// Its `url` parsed (once).
    pub fn url_parsed(&self) -> Option<std::borrow::Cow<'_, url::ForgeUrl>> {
        self.parsed_url.of(self.url.as_deref()?)
    }

    /// The source's repository, revision and path: its own fields, each taken
    /// from its URL when the record leaves it out, so a source given only as a
    /// forge URL (`…/blob/COMMIT/PATH`) still has a location in reports, SARIF
    /// and hints. A web document (a URL no forge grammar reads with a revision
    /// and a path) has none. The record's own fields stay as written: they, not
    /// this, are what a finding's fingerprint is made of.
    pub fn located(&self) -> Located {
        let own = Located {
            repository: self.repository.clone(),
            revision: self.revision.clone(),
            path: self.path.clone(),
        };
        if own.repository.is_some() && own.revision.is_some() && own.path.is_some() {
            return own;
        }
        let Some(u) = self
            .url_parsed()
            .filter(|u| u.revision.is_some() && u.path.is_some())
        else {
            return own;
        };
        Located {
            repository: own.repository.or_else(|| Some(u.repository_url())),
            revision: own.revision.or_else(|| u.revision.clone()),
            path: own.path.or_else(|| u.path.clone()),
        }
    }

    /// The document path a source cites: its own `path`, else the one its URL names.
    pub fn document_path(&self) -> Option<String> {
        self.path
            .clone()
            .or_else(|| self.url_parsed().and_then(|u| u.path.clone()))
    }
}

/// Why `path` is not a normal repository-relative path, if it is not: empty, a
/// leading `/`, a `.` or `..` segment, an empty segment (`a//b`, a trailing `/`)
/// or a NUL byte. Such a path names no blob git could hold, and is refused where
/// the record is read, for its source alone, before it reaches the cache.
pub fn path_problem(path: &str) -> Option<&'static str> {
    if path.is_empty() {
        return Some("is empty");
    }
    if path.contains('\0') {
        return Some("holds a NUL byte");
    }
    if path.starts_with('/') {
        return Some("starts with `/` (paths are relative to the repository root)");
    }
    for segment in path.split('/') {
        match segment {
            "." | ".." => return Some("has a `.` or `..` segment"),
            "" => return Some("has an empty segment (`//` or a trailing `/`)"),
            _ => {}
        }
    }
    None
}

/// A figure: a value the record says a source carries on some lines.
#[derive(Debug, Clone, PartialEq)]
pub struct Claim {
    pub label: String,
    pub source: Option<String>,
    pub lines: Option<Lines>,
    pub value: Option<ClaimValue>,
    pub unit: Option<String>,
    pub(crate) metric: Option<String>,
    /// Which statistic of the metric the figure is (`median`, `upper end of the range`).
    pub(crate) statistic: Option<String>,
    /// The URL the figure cites, when it gives one.
    pub url: Option<String>,
    pub correct: Option<u64>,
    pub total: Option<u64>,
    /// Where the figure stands in the record file.
    pub at: At,
    /// The parse of `url`.
    pub parsed_url: ParsedUrl,
}

impl Claim {
    /// Its `url` parsed (once).
    pub fn url_parsed(&self) -> Option<std::borrow::Cow<'_, url::ForgeUrl>> {
        self.parsed_url.of(self.url.as_deref()?)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ArtifactKind {
    Weights,
    Runtime,
}

impl ArtifactKind {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            ArtifactKind::Weights => "weights",
            ArtifactKind::Runtime => "runtime",
        }
    }
}

/// Model weights or a runtime the measurement depends on.
#[derive(Debug, Clone, PartialEq)]
pub struct Artifact {
    pub kind: ArtifactKind,
    pub label: String,
    pub revision: Option<String>,
    /// Weights: a sha256 of the weights. Kept as written so a bad one can be named.
    pub sha256: Option<Recorded<Sha256>>,
    /// Runtime: an image digest (`sha256:…`).
    pub digest: Option<String>,
    /// Where the artifact stands in the record file.
    pub(crate) at: At,
    /// Weights: the model repository, as written: a Hugging Face URL
    /// (`https://huggingface.co/ORG/REPO`, `/tree/REV`, `/blob/REV/FILE`,
    /// `/resolve/REV/FILE`) or any forge's repository URL. Its weight files are
    /// read by their Git LFS pointers, never downloaded.
    pub repository: Option<String>,
    /// Weights: the files that make them up, as paths or globs (`*.gguf`); empty
    /// means every Git LFS file of the repository.
    pub(crate) files: Vec<String>,
}

/// The first seven characters of a revision, as git abbreviates commit ids; a
/// revision that is not hex (a branch name) is cut at a character boundary.
pub fn short_rev(rev: &str) -> &str {
    rev.char_indices().nth(7).map_or(rev, |(i, _)| &rev[..i])
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "de1fa14ea798512f54dafc8b8795eb3ef1a6c367";
    const B: &str = "0123456789abcdef0123456789abcdef01234567";

    fn source(id: &str, rev: &str) -> Source {
        Source {
            id: id.into(),
            url: Some(format!("https://github.com/o/r/blob/{rev}/README.md")),
            repository: Some("https://github.com/o/r".into()),
            revision: Some(Revision::parse(rev)),
            path: Some("README.md".into()),
            sha256: None,
            commit_time: Some("2026-08-07T15:45:04Z".into()),
            at: At::default(),
            parsed_url: ParsedUrl::default(),
        }
    }

    fn claim(label: &str, source: &str, rev: &str) -> Claim {
        Claim {
            label: label.into(),
            source: Some(source.into()),
            lines: Lines::single(3).ok(),
            value: ClaimValue::parse("2.9"),
            unit: None,
            metric: None,
            statistic: None,
            url: Some(format!("https://github.com/o/r/blob/{rev}/README.md#L3")),
            correct: None,
            total: None,
            at: At::default(),
            parsed_url: ParsedUrl::default(),
        }
    }

    fn record(sources: Vec<Source>, claims: Vec<Claim>) -> Record {
        Record {
            id: "r".into(),
            title: None,
            file: PathBuf::from("pins/r.json"),
            sources,
            claims,
            artifacts: Vec::new(),
            references: Vec::new(),
            input: InputDigest::default(),
        }
    }

    #[test]
    fn figures_at_another_commit_share_one_source_of_their_own() {
        let taken = Source {
            id: format!("readme@{}", &B[..7]),
            ..source("other", A)
        };
        let mut r = record(
            vec![source("readme", A), taken],
            vec![
                claim("same", "readme", A),
                claim("moved", "readme", B),
                claim("moved too", "readme", B),
                claim("branch", "readme", "main"),
            ],
        );
        r.at_cited_revisions();
        let sources: Vec<&str> = r
            .claims
            .iter()
            .filter_map(|c| c.source.as_deref())
            .collect();
        let own = format!("readme@{}-2", &B[..7]);
        assert_eq!(sources, ["readme", &own, &own, "readme"]);
        let split = r.source(&own).expect("the split source");
        assert_eq!(split.revision, Some(Revision::parse(B)));
        assert_eq!(split.path.as_deref(), Some("README.md"));
        assert_eq!(
            split.commit_time, None,
            "the declared time is another commit's"
        );
        assert_eq!(
            split.url.as_deref(),
            Some(format!("https://github.com/o/r/blob/{B}/README.md").as_str())
        );
        // A source that already holds the document there is used, not copied.
        let mut r = record(
            vec![source("readme", A), source("readme-b", B)],
            vec![claim("moved", "readme", B)],
        );
        r.at_cited_revisions();
        assert_eq!(r.claims[0].source.as_deref(), Some("readme-b"));
        assert_eq!(r.sources.len(), 2);
    }
}
