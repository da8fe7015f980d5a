//! `uncited-claim`, `unpinned-url`, `revision-conflict` (and `invalid-record` for a
//! URL pinaudit cannot read): does each figure point at one fixed document?

use std::collections::HashSet;

use crate::finding::{Code, Finding};
use crate::record::url;
use crate::record::{Record, Revision, Source};

use super::location::{claim_location, source_location};

pub fn check(record: &Record, out: &mut Vec<Finding>) {
    let mut reported: HashSet<String> = HashSet::new();
    for s in &record.sources {
        source_urls(record, s, &mut reported, out);
    }
    for c in &record.claims {
        let source = c.source.as_deref().and_then(|id| record.source(id));
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
                out.push(unpinned(record, u, r).claim(&c.label).at(loc.clone()));
            }
        }
        if let (Some(Revision::Commit(cited)), Some(s)) = (&parsed.revision, source) {
            if let Some(Revision::Commit(declared)) = &s.revision {
                if cited != declared {
                    out.push(
                        Finding::new(
                            Code::RevisionConflict,
                            &record.id,
                            format!(
                                "figure `{}` cites revision `{}` but its source `{}` declares `{}`",
                                c.label,
                                cited.short(),
                                s.id,
                                declared.short()
                            ),
                        )
                        .claim(&c.label)
                        .source(&s.id)
                        .at(loc)
                        .with("cited_revision", cited.as_str())
                        .with("declared_revision", declared.as_str())
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
    .with("revision", rev)
    .with("url", shown)
}

fn strip_fragment(u: &str) -> String {
    u.split('#').next().unwrap_or(u).to_string()
}
