//! `uncited-claim`, `unpinned-url`, `revision-conflict` (and `invalid-record` for a
//! URL pinaudit cannot read): does each figure point at one fixed document?

use std::collections::HashSet;

use serde::Serialize;

use crate::finding::{evidence, Code, Finding, Location, Shape};
use crate::record::url;
use crate::record::{Claim, Record, Revision, Source};

use super::location::{claim_location, source_location};

evidence! {
    /// `invalid-record` evidence of a record the checks read: the URL, path,
    /// recorded text or artifact that cannot be read.
    #[derive(Serialize, Default)]
    pub(crate) struct InvalidRecord<'a> for(InvalidRecord) identity(artifact, recorded) {
        #[serde(skip_serializing_if = "Option::is_none")]
        pub(crate) url: Option<&'a str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        pub(crate) path: Option<&'a str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        pub(crate) recorded: Option<&'a str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        pub(crate) artifact: Option<&'a str>,
    }
}

evidence! {
    /// `uncited-claim` evidence: the source id a figure names that the record
    /// does not list.
    #[derive(Serialize)]
    pub(crate) struct UncitedClaim<'a> for(UncitedClaim) identity() {
        source: &'a str,
    }
}

evidence! {
    /// `unpinned-url` evidence: the branch or tag named (none when no revision
    /// is), the URL (redacted), and the reference that cites it.
    #[derive(Serialize)]
    pub(crate) struct UnpinnedUrl<'a> for(UnpinnedUrl) identity(reference) {
        #[serde(skip_serializing_if = "Option::is_none")]
        revision: Option<&'a str>,
        url: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        reference: Option<&'a str>,
    }
}

evidence! {
    /// `revision-conflict` evidence: the two commits, where the record declares
    /// its own (for a figure's URL; `null` when the position is unknown).
    #[derive(Serialize)]
    pub(crate) struct RevisionConflict<'a> for(RevisionConflict) identity() {
        cited_revision: &'a str,
        declared_revision: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        declared_at: Option<Option<At>>,
        url: Option<&'a str>,
    }
}

/// A position in an input file, in evidence.
#[derive(Serialize)]
pub(crate) struct At {
    line: usize,
    column: usize,
}

/// Citations: pinned, readable, and agreeing with the sources they name.
pub(crate) struct Citation;

impl super::Check for Citation {
    fn evidence(&self) -> &'static [Shape] {
        const SHAPES: &[Shape] = &[
            Shape::of::<InvalidRecord<'static>>(),
            Shape::of::<UncitedClaim<'static>>(),
            Shape::of::<UnpinnedUrl<'static>>(),
            Shape::of::<RevisionConflict<'static>>(),
        ];
        SHAPES
    }

    fn record(&self, record: &Record, out: &mut Vec<Finding>) {
        check(record, out);
    }
}

pub fn check(record: &Record, out: &mut Vec<Finding>) {
    let mut reported: HashSet<String> = HashSet::new();
    duplicates(record, out);
    sources(record, &mut reported, out);
    references(record, &mut reported, out);
    claims(record, &mut reported, out);
}

/// The sources' URLs and fields; an `unpinned-url` names the source and, when
/// one figure alone cites it, that figure.
fn sources(record: &Record, reported: &mut HashSet<String>, out: &mut Vec<Finding>) {
    // An `unpinned-url` names the source and, when one figure alone cites it,
    // that figure, wherever the URL is written (source or figure).
    let mut citing: std::collections::HashMap<&str, Vec<&str>> = Default::default();
    for c in &record.claims {
        if let Some(id) = c.source.as_deref() {
            citing.entry(id).or_default().push(c.label.as_str());
        }
    }
    let only = |id: &str| match citing.get(id).map(Vec::as_slice) {
        Some([one]) => Some(*one),
        _ => None,
    };
    let start = out.len();
    for s in &record.sources {
        // A web document's URL follows no forge grammar.
        if crate::provider::web::web_url(s).is_none() {
            source_urls(record, s, reported, out);
        }
        source_fields(record, s, out);
    }
    for f in &mut out[start..] {
        if f.code == Code::UnpinnedUrl && f.claim.is_none() {
            f.claim = f.source.as_deref().and_then(only).map(str::to_string);
        }
    }
}

/// The record's other references: readable, and pinned to a commit.
fn references(record: &Record, reported: &mut HashSet<String>, out: &mut Vec<Finding>) {
    for r in &record.references {
        match url::parse(&r.url) {
            Err(e) => out.push(
                Finding::new(
                    Code::InvalidRecord,
                    &record.id,
                    format!("`{}`: {e}", r.label),
                )
                .evidence(InvalidRecord {
                    url: Some(&r.url),
                    ..InvalidRecord::default()
                }),
            ),
            Ok(p) => match &p.revision {
                Some(Revision::Commit(_)) => {}
                Some(Revision::Ref(rev)) => {
                    if reported.insert(strip_fragment(&r.url)) {
                        out.push(unpinned(record, &r.url, rev, Some(&r.label)));
                    }
                }
                None => {
                    if reported.insert(strip_fragment(&r.url)) {
                        out.push(
                            Finding::new(
                                Code::UnpinnedUrl,
                                &record.id,
                                format!("`{}` (`{}`) names no revision", r.url, r.label),
                            )
                            .evidence(UnpinnedUrl {
                                revision: None,
                                url: &r.url,
                                reference: Some(&r.label),
                            }),
                        );
                    }
                }
            },
        }
    }
}

/// Each figure: a source, a line, and a URL that agrees with its source.
fn claims(record: &Record, reported: &mut HashSet<String>, out: &mut Vec<Finding>) {
    let by_id = record.sources_by_id();
    for c in &record.claims {
        let source = c.source.as_deref().and_then(|id| by_id.get(id).copied());
        match (&c.source, source, c.lines) {
            (None, _, _) => out.push(
                Finding::new(
                    Code::UncitedClaim,
                    &record.id,
                    format!(
                        "figure `{}` names no source document, so nothing can check it",
                        c.label
                    ),
                )
                .claim(&c.label),
            ),
            (Some(id), None, _) => out.push(
                Finding::new(
                    Code::UncitedClaim,
                    &record.id,
                    format!(
                        "figure `{}` cites source `{id}`, which the record does not list",
                        c.label
                    ),
                )
                .claim(&c.label)
                .source(id)
                .evidence(UncitedClaim { source: id }),
            ),
            (Some(id), Some(s), None) => out.push(
                Finding::new(
                    Code::UncitedClaim,
                    &record.id,
                    format!(
                        "figure `{}` names no line of `{}`, so nothing can check it",
                        c.label,
                        s.path.as_deref().unwrap_or(id)
                    ),
                )
                .claim(&c.label)
                .source(id)
                .at(source_location(s)),
            ),
            _ => {}
        }
        if let Some(u) = &c.url {
            claim_url(record, c, source, u, reported, out);
        }
    }
}

/// A figure's own URL: readable, pinned, and naming its source's revision.
fn claim_url(
    record: &Record,
    c: &Claim,
    source: Option<&Source>,
    u: &str,
    reported: &mut HashSet<String>,
    out: &mut Vec<Finding>,
) {
    let parsed = match c
        .parsed_url
        .of(u)
        .ok_or(())
        .or_else(|()| url::parse(u).map(std::borrow::Cow::Owned))
    {
        Ok(p) => p,
        // A figure on a web document cites the page, which no forge grammar reads.
        Err(_) if source.is_some_and(|s| crate::provider::web::web_url(s).is_some()) => {
            return;
        }
        Err(e) => {
            out.push(
                Finding::new(
                    Code::InvalidRecord,
                    &record.id,
                    format!("figure `{}`: {e}", c.label),
                )
                .claim(&c.label)
                .evidence(InvalidRecord {
                    url: Some(u),
                    ..InvalidRecord::default()
                }),
            );
            return;
        }
    };
    let loc = source.map(|s| claim_location(s, c)).unwrap_or_default();
    if let Some(Revision::Ref(r)) = &parsed.revision {
        if reported.insert(strip_fragment(u)) {
            let mut f = unpinned(record, u, r, None).claim(&c.label).at(loc.clone());
            f.source = source.map(|s| s.id.clone());
            out.push(f);
        }
    }
    if let (Some(Revision::Commit(cited)), Some(s)) = (&parsed.revision, source) {
        if let Some(Revision::Commit(declared)) = &s.revision {
            if cited != declared {
                // Where the record declares it, so that the reader can see
                // which of the two to fix; the figure is checked at the
                // revision it cites (`Record::at_cited_revisions`).
                let declared_at =
                    s.at.0
                        .map(|p| format!(" (line {}, column {})", p.line, p.column));
                out.push(
                    Finding::new(
                        Code::RevisionConflict,
                        &record.id,
                        format!(
                            "figure `{}` cites revision `{}` but its source `{}` declares `{}`{}; the figure is checked at `{}`",
                            c.label,
                            cited.short(),
                            s.id,
                            declared.short(),
                            declared_at.as_deref().unwrap_or(""),
                            cited.short()
                        ),
                    )
                    .claim(&c.label)
                    .source(&s.id)
                    // The figure's own commit and line: the link opens what it cites.
                    .at(Location {
                        revision: Some(cited.as_str().to_string()),
                        ..loc
                    })
                    .evidence(RevisionConflict {
                        cited_revision: cited.as_str(),
                        declared_revision: declared.as_str(),
                        declared_at: Some(s.at.0.map(|p| At {
                            line: p.line,
                            column: p.column,
                        })),
                        url: Some(u),
                    }),
                );
            }
        }
    }
}

/// A source's own URL and revision: readable, pinned, and agreeing with each other.
fn source_urls(
    record: &Record,
    s: &Source,
    reported: &mut HashSet<String>,
    out: &mut Vec<Finding>,
) {
    // The source's kept parse (the plan reads it again); parsed afresh only
    // for the error's words.
    let parsed = match s.url.as_deref().map(|u| {
        s.parsed_url
            .of(u)
            .ok_or(())
            .or_else(|()| url::parse(u).map(std::borrow::Cow::Owned))
    }) {
        Some(Ok(p)) => Some(p),
        Some(Err(e)) => {
            out.push(
                Finding::new(
                    Code::InvalidRecord,
                    &record.id,
                    format!("source `{}`: {e}", s.id),
                )
                .source(&s.id)
                .evidence(InvalidRecord {
                    url: s.url.as_deref(),
                    ..InvalidRecord::default()
                }),
            );
            None
        }
        None => None,
    };
    let url_rev = parsed.as_ref().and_then(|p| p.revision.clone());
    match (&s.revision, &url_rev) {
        (Some(Revision::Ref(r)), _) | (None, Some(Revision::Ref(r))) => {
            let key = s
                .url
                .as_deref()
                .map_or_else(|| format!("{}@{r}", s.id), strip_fragment);
            if reported.insert(key) {
                let shown = s.url.clone().unwrap_or_else(|| format!("revision `{r}`"));
                out.push(
                    unpinned(record, &shown, r, None)
                        .source(&s.id)
                        .at(source_location(s)),
                );
            }
        }
        (Some(Revision::Commit(declared)), Some(Revision::Commit(in_url)))
            if declared != in_url =>
        {
            out.push(
                Finding::new(
                    Code::RevisionConflict,
                    &record.id,
                    format!(
                        "source `{}` declares revision `{}` but its URL pins `{}`",
                        s.id,
                        declared.short(),
                        in_url.short()
                    ),
                )
                .source(&s.id)
                .at(source_location(s))
                .evidence(RevisionConflict {
                    cited_revision: in_url.as_str(),
                    declared_revision: declared.as_str(),
                    declared_at: None,
                    url: s.url.as_deref(),
                }),
            );
        }
        (Some(Revision::Commit(_)), Some(Revision::Ref(r))) => {
            if let Some(u) = &s.url {
                if reported.insert(strip_fragment(u)) {
                    out.push(
                        unpinned(record, u, r, None)
                            .source(&s.id)
                            .at(source_location(s)),
                    );
                }
            }
        }
        _ => {}
    }
}

/// Source ids and claim labels name one thing each: claims cite sources by id, and
/// `show PINFILE#LABEL` finds a claim by label.
fn duplicates(record: &Record, out: &mut Vec<Finding>) {
    let mut seen = HashSet::new();
    for s in &record.sources {
        if !seen.insert(s.id.as_str()) {
            out.push(
                Finding::new(
                    Code::InvalidRecord,
                    &record.id,
                    format!(
                        "source id `{}` is used twice; claims citing it use the first",
                        s.id
                    ),
                )
                .source(&s.id),
            );
        }
    }
    let mut seen = HashSet::new();
    for c in &record.claims {
        if !seen.insert(c.label.as_str()) {
            out.push(
                Finding::new(
                    Code::InvalidRecord,
                    &record.id,
                    format!(
                        "claim label `{}` is used twice; give each figure its own label",
                        c.label
                    ),
                )
                .claim(&c.label),
            );
        }
    }
}

/// A source must say where its document is: a revision (else `unpinned-url`), a
/// repository and a path, and a commit time pinaudit can read.
fn source_fields(record: &Record, s: &Source, out: &mut Vec<Finding>) {
    if let Some(web) = crate::provider::web::web_url(s) {
        web_source(record, s, &web, out);
        return;
    }
    let parsed = s.url_parsed();
    let has_revision =
        s.revision.is_some() || parsed.as_ref().is_some_and(|p| p.revision.is_some());
    if !has_revision {
        out.push(
            Finding::new(
                Code::UnpinnedUrl,
                &record.id,
                format!(
                    "source `{}` names no revision, so nothing pins its document",
                    s.id
                ),
            )
            .source(&s.id)
            .at(source_location(s)),
        );
    }
    let has_repository = parsed.is_some()
        || s.repository
            .as_deref()
            .and_then(url::parse_repository)
            .is_some();
    if !has_repository && s.url.is_none() {
        out.push(
            Finding::new(
                Code::InvalidRecord,
                &record.id,
                match &s.repository {
                    Some(r) => format!(
                        "source `{}`: repository `{r}` is not a URL or OWNER/REPO",
                        s.id
                    ),
                    None => format!("source `{}` names no repository and no URL", s.id),
                },
            )
            .source(&s.id),
        );
    }
    if s.path.is_none() && parsed.as_ref().is_none_or(|p| p.path.is_none()) {
        out.push(
            Finding::new(
                Code::InvalidRecord,
                &record.id,
                format!("source `{}` names no document path", s.id),
            )
            .source(&s.id),
        );
    }
    if let Some(path) = s.document_path() {
        if let Some(why) = crate::record::path_problem(&path) {
            out.push(
                Finding::new(
                    Code::InvalidRecord,
                    &record.id,
                    format!("source `{}`: document path `{path}` {why}", s.id),
                )
                .source(&s.id)
                .evidence(InvalidRecord {
                    path: Some(&path),
                    ..InvalidRecord::default()
                }),
            );
        }
    }
    if let Some(t) = &s.commit_time {
        if !super::revision::is_time(t) {
            out.push(
                Finding::new(
                    Code::InvalidRecord,
                    &record.id,
                    format!(
                        "source `{}`: commit time `{t}` is not an RFC 3339 time or a date",
                        s.id
                    ),
                )
                .source(&s.id)
                .evidence(InvalidRecord {
                    recorded: Some(t),
                    ..InvalidRecord::default()
                }),
            );
        }
    }
}

/// A source citing a web document: pinned only when the URL cannot
/// change what it shows (an archived snapshot, a content address).
fn web_source(record: &Record, s: &Source, url: &str, out: &mut Vec<Finding>) {
    if crate::provider::web::is_immutable(url) {
        return;
    }
    let shown = crate::url::redact(url);
    out.push(
        Finding::new(
            Code::UnpinnedUrl,
            &record.id,
            format!(
                "source `{}` cites the web page `{shown}`, which can change under the same URL",
                s.id
            ),
        )
        .hint(format!(
            "cite an archived snapshot: `https://web.archive.org/web/<14-digit time>/{shown}`"
        ))
        .source(&s.id)
        .evidence(UnpinnedUrl {
            revision: None,
            url: &shown,
            reference: None,
        }),
    );
}

fn unpinned(record: &Record, shown: &str, rev: &str, reference: Option<&str>) -> Finding {
    let what = if rev.len() < 40 && !rev.is_empty() && rev.bytes().all(|b| b.is_ascii_hexdigit()) {
        "a short commit id"
    } else {
        "a branch or tag"
    };
    Finding::new(
        Code::UnpinnedUrl,
        &record.id,
        format!("`{shown}` names {what} (`{rev}`), not a full commit id"),
    )
    .hint(format!(
        "`pinaudit pin '{shown}'` resolves `{rev}` to the commit it names now and prints the pin; \
         `pinaudit audit --fix` rewrites it in a pin file"
    ))
    .evidence(UnpinnedUrl {
        revision: Some(rev),
        url: shown,
        reference,
    })
}

fn strip_fragment(u: &str) -> String {
    u.split('#').next().unwrap_or(u).to_string()
}
