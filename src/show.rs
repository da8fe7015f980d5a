//! `pinaudit show`: the cited lines at the pinned revision, for a person
//! investigating a disputed figure, and with `--history` how those lines changed
//! from the pin to the head of the default branch.

use std::fmt::Write;
use std::path::Path;

use git2::Oid;

use crate::check::claims::expected;
use crate::check::SourceText;
use crate::fetch::{CachedRepo, FetchError, GitCache};
use crate::matcher;
use crate::provider::DocRef;
use crate::record::{url, Claim, Lines, Revision};
use crate::report::escape::terminal as esc;
use crate::sources::{self, git_oid, SyncPlan};

/// What `show` was pointed at, resolved.
#[derive(Debug)]
pub(crate) struct Resolved {
    pub(crate) target: DocRef,
    pub(crate) lines: Lines,
    /// The claim, when the target named one (its value is marked).
    pub(crate) claim: Option<Claim>,
}

/// Why `show` could not run; each carries its own hint.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ShowError {
    #[error("{0}")]
    Target(String, Option<String>),
    #[error(transparent)]
    Fetch(#[from] FetchError),
}

impl ShowError {
    pub(crate) fn hint(&self) -> Option<String> {
        match self {
            ShowError::Target(_, hint) => hint.clone(),
            ShowError::Fetch(e) => e.hint(),
        }
    }
}

/// Refuses the document at `path` in `commit` when its object header says it
/// is over `max` (`--max-document-size`): never inflated, whatever its pack holds.
pub(crate) fn check_size(
    repo: &CachedRepo,
    commit: Oid,
    path: &str,
    max: u64,
) -> Result<(), ShowError> {
    match repo.blob_size_at(commit, path)? {
        Some(size) if size > max => Err(target_err(
            format!(
                "`{}` at `{}` is `{}`, over --max-document-size (`{}`); not read",
                crate::report::escape::terminal(path),
                &commit.to_string()[..7],
                mib(size),
                mib(max)
            ),
            "raise --max-document-size to read it",
        )),
        _ => Ok(()),
    }
}

fn mib(n: u64) -> String {
    format!("{:.1} MiB", n as f64 / (1024.0 * 1024.0))
}

fn target_err(message: String, hint: &str) -> ShowError {
    ShowError::Target(message, Some(hint.to_string()))
}

/// Resolves `URL#L43` or `PINFILE#LABEL`.
pub(crate) fn resolve(target: &str, allow_local: bool) -> Result<Resolved, ShowError> {
    let looks_like_url = target.contains("://") || target.starts_with("github.com/");
    if looks_like_url {
        let u = url::parse(target).map_err(|e| target_err(e.to_string(), "give a blob URL with a line anchor, e.g. https://github.com/OWNER/REPO/blob/COMMIT/README.md#L43"))?;
        let lines = u.lines.ok_or_else(|| {
            target_err(
                format!("`{target}` has no line anchor"),
                "add `#L43` or `#L43-L45` to say which lines to show",
            )
        })?;
        let source = crate::record::Source {
            id: "target".into(),
            url: Some(target.to_string()),
            repository: None,
            revision: None,
            path: None,
            sha256: None,
            commit_time: None,
            at: Default::default(),
        };
        let target = sources::resolve(&source, allow_local).map_err(|e| {
            let hint = match &u.revision {
                Some(Revision::Ref(_)) => {
                    "use the commit's permalink (press `y` on a GitHub file page)"
                }
                _ => "give a blob URL with a full commit id and a path",
            };
            target_err(format!("cannot show `{target}`: {}", e.0), hint)
        })?;
        return Ok(Resolved {
            target,
            lines,
            claim: None,
        });
    }
    let (file, label) = target.rsplit_once('#').ok_or_else(|| {
        target_err(
            format!("`{target}` is neither a URL nor PINFILE#LABEL"),
            "e.g. pinaudit show 'pins/record.json#steady decode'",
        )
    })?;
    let loaded = crate::input::load(Path::new(file));
    let mut record = loaded.record.ok_or_else(|| {
        let why = loaded
            .findings
            .first()
            .map_or_else(|| format!("cannot read `{file}`"), |f| f.message.clone());
        target_err(why, "give a pin file or a record document")
    })?;
    // A figure is shown at the revision it cites, as the audit checks it.
    record.at_cited_revisions();
    let claim = record
        .claims
        .iter()
        .find(|c| c.label == label)
        .or_else(|| {
            record
                .claims
                .iter()
                .find(|c| c.label.eq_ignore_ascii_case(label))
        })
        .cloned()
        .ok_or_else(|| {
            let labels: Vec<&str> = record.claims.iter().map(|c| c.label.as_str()).collect();
            target_err(
                format!("`{file}` has no claim labelled `{label}`"),
                &format!("its claims: {}", labels.join(", ")),
            )
        })?;
    let source = claim
        .source
        .as_deref()
        .and_then(|id| record.source(id))
        .ok_or_else(|| {
            target_err(
                format!("claim `{label}` names no source of `{file}`"),
                "give the claim a `source`",
            )
        })?;
    let lines = claim.lines.ok_or_else(|| {
        target_err(
            format!("claim `{label}` names no line"),
            "give the claim `lines`",
        )
    })?;
    let target = sources::resolve(source, allow_local).map_err(|e| {
        target_err(
            format!("cannot show `{target}`: {}", e.0),
            "pin the source to a full commit id",
        )
    })?;
    Ok(Resolved {
        target,
        lines,
        claim: Some(claim),
    })
}

/// Syncs the target's repository (or opens it offline) and returns it.
///
/// Offline, a commit the cache lacks says nothing about the repository: it is
/// reported as missing from the cache, not from the repository.
pub(crate) fn open(
    cache: &GitCache,
    r: &Resolved,
    plan: &SyncPlan,
) -> Result<CachedRepo, ShowError> {
    let synced = sources::sync_all(cache, &[&r.target], plan);
    if let Some(Err(e)) = synced.into_values().next() {
        return Err(e.into());
    }
    let repo = cache.open(&r.target.remote)?;
    if plan.sync.offline && !repo.has_commit(git_oid(&r.target)) {
        return Err(target_err(
            format!(
                "commit `{}` of `{}` is not in the cache",
                r.target.commit,
                crate::fetch::redact(&r.target.remote)
            ),
            "run once without --offline to fetch it",
        ));
    }
    Ok(repo)
}

/// A document's line count as a line number (documents past `u32::MAX` lines
/// cannot be cited anyway).
fn last_line(doc: &SourceText) -> u32 {
    u32::try_from(doc.len()).unwrap_or(u32::MAX)
}

/// The cited lines with `context` lines around them, the value marked, and
/// whether any cited line could be shown (a range wholly past the end cannot).
pub(crate) fn render(
    repo: &CachedRepo,
    r: &Resolved,
    context: u32,
    max: u64,
) -> Result<(String, bool), ShowError> {
    let t = &r.target;
    if !repo.has_commit(git_oid(t)) {
        return Err(target_err(
            format!(
                "commit `{}` is not in the repository `{}`",
                t.commit,
                crate::fetch::redact(&t.remote)
            ),
            "check the commit id; `pinaudit audit` reports revision-missing with details",
        ));
    }
    check_size(repo, git_oid(t), &t.path, max)?;
    let blob = repo.read_blob(git_oid(t), &t.path)?.ok_or_else(|| {
        target_err(
            format!("`{}` does not exist at `{}`", t.path, t.commit.short()),
            "check the path at that commit",
        )
    })?;
    let doc = SourceText::new(&blob.bytes);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} @ {} ({})",
        esc(&t.path),
        t.commit.short(),
        esc(&crate::fetch::redact(&t.remote))
    );
    if r.lines.first() as usize > doc.len() {
        let _ = writeln!(
            out,
            "the document has {} line(s); {} is past its end",
            doc.len(),
            r.lines
        );
        return Ok((out, false));
    }
    // `--context` is any u32: saturate, then clamp to the document.
    let from = r.lines.first().saturating_sub(context).max(1);
    let to = r.lines.last().saturating_add(context).min(last_line(&doc));
    let width = to.to_string().len();
    let exp = r.claim.as_ref().and_then(expected);
    let all = doc.lines();
    let document = matcher::Document::new(&all, doc.layout());
    for n in from..=to {
        let text = doc.line(n).unwrap_or("");
        let cited = n >= r.lines.first() && n <= r.lines.last();
        let mark = if cited { '>' } else { ' ' };
        let _ = writeln!(out, "{mark} {n:>width$} | {}", esc(text));
        if let (true, Some(exp)) = (cited, exp.as_ref()) {
            let index = n as usize - 1;
            let found = document.cited(index..index + 1, exp);
            // The figure, marked; else the look-alike the line holds, and why it is not it.
            let mark = match (found.found, found.rejected) {
                (Some((_, m)), _) => Some((m.span, format!("claimed {}", exp.value))),
                (None, Some((_, r))) => Some((r.span, format!("not the figure: {}", r.reason))),
                _ => None,
            };
            if let Some((span, says)) = mark.filter(|(s, _)| text.get(s.clone()).is_some()) {
                // Under the line as printed: escaped characters are wider.
                let pad = esc(&text[..span.start]).chars().count();
                let len = esc(&text[span]).chars().count().max(1);
                let _ = writeln!(
                    out,
                    "  {:width$} | {}{} {}",
                    "",
                    " ".repeat(pad),
                    "^".repeat(len),
                    esc(&says)
                );
            }
        }
    }
    if r.lines.last() as usize > doc.len() {
        let _ = writeln!(out, "(the document ends at line {})", doc.len());
    }
    if let (Some(c), Some(exp)) = (&r.claim, exp.as_ref()) {
        let cited = r.lines.first() as usize - 1..r.lines.last() as usize;
        if document.cited(cited, exp).found.is_none() {
            let _ = writeln!(
                out,
                "claim `{}` ({}) is not on the cited line(s)",
                esc(&c.label),
                exp.value
            );
        }
    }
    Ok((out, true))
}

/// How the cited lines changed from the pin to the head, commit by commit.
pub(crate) fn history(repo: &CachedRepo, r: &Resolved, max: u64) -> Result<String, ShowError> {
    let t = &r.target;
    let mut out = String::new();
    let Some(head) = repo.head() else {
        let _ = writeln!(
            out,
            "\nhistory: the default-branch head is not known (run without --offline once)"
        );
        return Ok(out);
    };
    let read = |commit: Oid| -> Result<Option<SourceText>, ShowError> {
        check_size(repo, commit, &t.path, max)?;
        Ok(repo
            .read_blob(commit, &t.path)?
            .map(|b| SourceText::new(&b.bytes)))
    };
    let Some(mut current) = read(git_oid(t))? else {
        return Ok(out);
    };
    let _ = writeln!(
        out,
        "\nhistory of {} from {} to the head {}:",
        r.lines,
        t.commit.short(),
        &head.to_string()[..7]
    );
    // Each cited line that exists at the pin, followed through the history:
    // Some(line number), or None once removed. Lines past the end were never
    // there to be removed, and a range like L1-L100000000 must not allocate a
    // slot per cited line.
    let end = last_line(&current);
    let mut tracked: Vec<Option<u32>> = (r.lines.first()..=r.lines.last().min(end))
        .map(Some)
        .collect();
    if r.lines.last() > end {
        let past = Lines::new(end.saturating_add(1).max(r.lines.first()), r.lines.last())
            .map_or_else(|_| r.lines.to_string(), |l| l.to_string());
        let _ = writeln!(
            out,
            "  the document has {end} line(s) at {}: {past} is past its end, not followed",
            t.commit.short()
        );
    }
    if tracked.is_empty() {
        return Ok(out);
    }
    let commits = repo.path_history(&t.path, git_oid(t), head)?;
    let mut listed = 0;
    for commit in commits {
        let next = read(commit)?;
        let old = current.lines();
        let new = next.as_ref().map(|n| n.lines()).unwrap_or_default();
        let fates = crate::check::upstream::follow(&old, &new);
        let mut changes = Vec::new();
        for slot in tracked.iter_mut() {
            let Some(n) = *slot else { continue };
            let before = old.get(n as usize - 1).copied().unwrap_or("");
            match fates.get(n as usize - 1).copied() {
                Some(crate::check::upstream::Fate::Kept(h)) => *slot = Some(h),
                Some(crate::check::upstream::Fate::Edited(h)) => {
                    *slot = Some(h);
                    let after = new.get(h as usize - 1).copied().unwrap_or("");
                    if after.trim() != before.trim() {
                        changes.push(format!("L{h}: {}", after.trim()));
                    }
                }
                _ => {
                    *slot = None;
                    changes.push(format!("L{n} removed (was: {})", before.trim()));
                }
            }
        }
        if !changes.is_empty() {
            listed += 1;
            let (date, subject) = repo.commit_summary(commit).unwrap_or_default();
            let _ = writeln!(
                out,
                "  {} {} {}",
                &commit.to_string()[..7],
                esc(&date),
                esc(&subject)
            );
            for c in changes {
                let _ = writeln!(out, "      {}", esc(&c));
            }
        }
        match next {
            Some(n) => current = n,
            None => {
                let _ = writeln!(
                    out,
                    "  {} removed `{}`",
                    &commit.to_string()[..7],
                    esc(&t.path)
                );
                tracked.iter_mut().for_each(|s| *s = None);
                break;
            }
        }
    }
    if listed == 0 {
        let _ = writeln!(out, "  no commit changed the cited line(s)");
    }
    let _ = writeln!(out, "at the head {}:", &head.to_string()[..7]);
    for (i, slot) in tracked.iter().enumerate() {
        let cited = r.lines.first().saturating_add(i as u32);
        match slot {
            Some(n) => {
                let _ = writeln!(
                    out,
                    "  L{cited} is now L{n}: {}",
                    esc(current.line(*n).unwrap_or("").trim())
                );
            }
            None => {
                let _ = writeln!(out, "  L{cited} was removed");
            }
        }
    }
    Ok(out)
}
