//! `uncited-claim`, `unpinned-url`, `revision-conflict` (and `invalid-record` for a
//! URL pinaudit cannot read): does each figure point at one fixed document?

use std::collections::HashSet;

use crate::finding::{Code, Finding};
use crate::record::url;
use crate::record::{Record, Revision, Source};

use super::location::{claim_location, source_location};

pub fn check(record: &Record, out: &mut Vec<Finding>) {
    let mut reported: HashSet<String> = HashSet::new();
    duplicates(record, out);
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
            source_urls(record, s, &mut reported, out);
        }
        source_fields(record, s, out);
    }
    for f in &mut out[start..] {
        if f.code == Code::UnpinnedUrl && f.claim.is_none() {
            f.claim = f.source.as_deref().and_then(only).map(str::to_string);
        }
    }
    for r in &record.references {
        match url::parse(&r.url) {
            Err(e) => out.push(
                Finding::new(
                    Code::InvalidRecord,
                    &record.id,
                    format!("`{}`: {e}", r.label),
                )
                .with("url", r.url.as_str()),
            ),
            Ok(p) => match &p.revision {
                Some(Revision::Commit(_)) => {}
                Some(Revision::Ref(rev)) => {
                    if reported.insert(strip_fragment(&r.url)) {
                        out.push(unpinned(record, &r.url, rev).with("reference", r.label.as_str()));
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
                            .with("url", r.url.as_str())
                            .with("reference", r.label.as_str()),
                        );
                    }
                }
            },
        }
    }
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
                .with("source", id.as_str()),
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
        let Some(u) = &c.url else { continue };
        let parsed = match url::parse(u) {
            Ok(p) => p,
            // A figure on a web document cites the page, which no forge grammar reads.
            Err(_) if source.is_some_and(|s| crate::provider::web::web_url(s).is_some()) => {
                continue;
            }
            Err(e) => {
                out.push(
                    Finding::new(
                        Code::InvalidRecord,
                        &record.id,
                        format!("figure `{}`: {e}", c.label),
                    )
                    .claim(&c.label)
                    .with("url", u.as_str()),
                );
                continue;
            }
        };
        let loc = source.map(|s| claim_location(s, c)).unwrap_or_default();
        if let Some(Revision::Ref(r)) = &parsed.revision {
            if reported.insert(strip_fragment(u)) {
                let mut f = unpinned(record, u, r).claim(&c.label).at(loc.clone());
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
                        .at(loc)
                        .with("cited_revision", cited.as_str())
                        .with("declared_revision", declared.as_str())
                        .with(
                            "declared_at",
                            s.at.0.map_or(serde_json::Value::Null, |p| {
                                serde_json::json!({"line": p.line, "column": p.column})
                            }),
                        )
                        .with("url", u.as_str()),
                    );
                }
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
    let parsed = match s.url.as_deref().map(url::parse) {
        Some(Ok(p)) => Some(p),
        Some(Err(e)) => {
            out.push(
                Finding::new(
                    Code::InvalidRecord,
                    &record.id,
                    format!("source `{}`: {e}", s.id),
                )
                .source(&s.id)
                .with("url", s.url.clone()),
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
                    unpinned(record, &shown, r)
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
                .with("cited_revision", in_url.as_str())
                .with("declared_revision", declared.as_str())
                .with("url", s.url.clone()),
            );
        }
        (Some(Revision::Commit(_)), Some(Revision::Ref(r))) => {
            if let Some(u) = &s.url {
                if reported.insert(strip_fragment(u)) {
                    out.push(unpinned(record, u, r).source(&s.id).at(source_location(s)));
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
    let parsed = s.url.as_deref().and_then(|u| url::parse(u).ok());
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
                .with("path", path.as_str()),
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
                .with("recorded", t.as_str()),
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
        .with("url", shown.as_str()),
    );
}

fn unpinned(record: &Record, shown: &str, rev: &str) -> Finding {
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
    .with("revision", rev)
    .with("url", shown)
}

fn strip_fragment(u: &str) -> String {
    u.split('#').next().unwrap_or(u).to_string()
}
