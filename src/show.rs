//! `pinaudit show`: the cited lines at the pinned revision, for a person
//! investigating a disputed figure, and with `--history` how those lines changed
//! from the pin to the head of the default branch.

use std::fmt::Write;
use std::path::Path;

use git2::Oid;

use crate::check::claims::expected;
use crate::check::upstream::Fate;
use crate::check::SourceText;
use crate::fetch::{CachedRepo, FetchError, GitCache};
use crate::matcher;
use crate::provider::DocRef;
use crate::record::{url, Claim, Lines, Revision};
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
            parsed_url: Default::default(),
        };
        let target = sources::resolve(&source, allow_local).map_err(|e| {
            let hint = match &u.revision {
                Some(Revision::Ref(_)) => {
                    "use the commit's permalink (press `y` on a GitHub file page)"
                }
                _ => "give a blob URL with a full commit id and a path",
            };
            target_err(format!("cannot show `{target}`: {e}"), hint)
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
    let claim = labelled(&record, label).cloned().ok_or_else(|| {
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
            format!("cannot show `{target}`: {e}"),
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
    let shown = lines_of(&mut out, &doc, r.lines, r.claim.as_ref(), context);
    Ok((out, shown))
}

/// Writes the cited `lines` of `doc` with `context` lines around them, the
/// claim's value marked; whether any cited line could be shown.
fn lines_of(
    out: &mut String,
    doc: &SourceText,
    lines: Lines,
    claim: Option<&Claim>,
    context: u32,
) -> bool {
    if lines.first() as usize > doc.len() {
        let _ = writeln!(
            out,
            "the document has {} line(s); {} is past its end",
            doc.len(),
            lines
        );
        return false;
    }
    // `--context` is any u32: saturate, then clamp to the document.
    let from = lines.first().saturating_sub(context).max(1);
    let to = lines.last().saturating_add(context).min(last_line(doc));
    let width = to.to_string().len();
    let exp = claim.and_then(expected);
    let all = doc.lines();
    let document = matcher::Document::new(&all, doc.layout());
    for n in from..=to {
        let text = doc.line(n).unwrap_or("");
        let cited = n >= lines.first() && n <= lines.last();
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
                // Columns as printed: an escaped character is wider.
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
    if lines.last() as usize > doc.len() {
        let _ = writeln!(out, "(the document ends at line {})", doc.len());
    }
    if let (Some(c), Some(exp)) = (claim, exp.as_ref()) {
        let cited = lines.first() as usize - 1..lines.last() as usize;
        if document.cited(cited, exp).found.is_none() {
            let _ = writeln!(
                out,
                "claim `{}` ({}) is not on the cited line(s)",
                esc(&c.label),
                exp.value
            );
        }
    }
    true
}

/// The claim of `record` labelled `label`, else the one labelled so in
/// another case.
fn labelled<'r>(record: &'r crate::record::Record, label: &str) -> Option<&'r Claim> {
    record.claims.iter().find(|c| c.label == label).or_else(|| {
        record
            .claims
            .iter()
            .find(|c| c.label.eq_ignore_ascii_case(label))
    })
}

/// `show PINFILE#LABEL` for a claim whose source is a web document: the
/// version the record recorded, as kept in the cache by its sha256 (pinaudit
/// keeps every version it fetched; `show` asks no server). `None` when the
/// target is not a claim on a web document.
pub(crate) fn web_claim(
    target: &str,
    cache: &Path,
    context: u32,
    max: u64,
) -> Option<Result<(String, bool), ShowError>> {
    if target.contains("://") || target.starts_with("github.com/") {
        return None;
    }
    let (file, label) = target.rsplit_once('#')?;
    let record = crate::input::load(Path::new(file)).record?;
    let claim = labelled(&record, label)?;
    let source = record.source(claim.source.as_deref()?)?;
    let url = crate::provider::web::web_url(source)?;
    Some(web_render(&url, source, claim, cache, context, max))
}

fn web_render(
    url: &str,
    source: &crate::record::Source,
    claim: &Claim,
    cache: &Path,
    context: u32,
    max: u64,
) -> Result<(String, bool), ShowError> {
    let lines = claim.lines.ok_or_else(|| {
        target_err(
            format!("claim `{}` names no line", claim.label),
            "give the claim `lines`",
        )
    })?;
    let sha256 = source
        .sha256
        .as_ref()
        .and_then(|h| h.valid())
        .ok_or_else(|| {
            target_err(
                format!(
                    "source `{}` records no sha256: no version of `{}` is the recorded one",
                    source.id,
                    crate::fetch::redact(url)
                ),
                "record the page's sha256 (`curl -s URL | sha256sum`)",
            )
        })?;
    let bytes = crate::fetch::kept_version(cache, sha256.as_str()).ok_or_else(|| {
        target_err(
            format!(
                "the recorded version of `{}` (sha256 `{sha256}`) is not kept in the cache",
                crate::fetch::redact(url)
            ),
            "pinaudit keeps every version of a page it fetched: audit the record while the page still serves the recorded version, or cite an archived snapshot",
        )
    })?;
    if bytes.len() as u64 > max {
        return Err(target_err(
            format!(
                "the recorded version of `{}` is {}, over --max-document-size (`{}`); not read",
                crate::fetch::redact(url),
                mib(bytes.len() as u64),
                mib(max)
            ),
            "raise --max-document-size to read it",
        ));
    }
    let doc = SourceText::new(&bytes);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} (the recorded version, sha256 {}, kept in the cache)",
        esc(&crate::fetch::redact(url)),
        &sha256.as_str()[..12]
    );
    let shown = lines_of(&mut out, &doc, lines, Some(claim), context);
    Ok((out, shown))
}

/// At most this many lines of a cited range are followed through the history.
const FOLLOWED_LINES: usize = 10;

/// Documents larger than this are not searched for a figure that left its
/// document (a changed file of the commit that removed its line).
const SEARCHED_BYTES: u64 = 4 << 20;

/// The figure's history as [`history`] followed it, for a renderer that draws it
/// ([`crate::show_html`]): the same facts the text timeline prints.
#[derive(Debug, Default)]
pub(crate) struct Timeline {
    /// The claimed value, when the target is a claim.
    pub(crate) value: Option<String>,
    /// The pin's short commit and the head's.
    pub(crate) pin: String,
    pub(crate) head: String,
    /// The cited document's path.
    pub(crate) path: String,
    /// One row per commit, the pin first.
    pub(crate) rows: Vec<Row>,
    /// Each followed line at the head: its cited number, where it stands (`None`:
    /// removed), its pinned text and its text at the head.
    pub(crate) at_head: Vec<(u32, Option<String>, String, String)>,
}

/// One commit of a [`Timeline`].
#[derive(Debug)]
pub(crate) struct Row {
    pub(crate) commit: String,
    pub(crate) date: String,
    pub(crate) author: String,
    pub(crate) subject: String,
    /// The followed lines there.
    pub(crate) lines: Vec<RowLine>,
}

/// One followed line in a [`Row`].
#[derive(Debug)]
pub(crate) struct RowLine {
    pub(crate) cited: u32,
    /// `L5`, `DETAILS.md:L48`; `None` once the line is gone.
    pub(crate) place: Option<String>,
    pub(crate) text: String,
    /// What the line says of the figure (`carries 2.9`, `no longer carries 2.9`…).
    pub(crate) says: String,
    /// Whether it still carries the claimed value (claims only).
    pub(crate) carries: Option<bool>,
    /// The number the line gives for the figure there: the claimed value while
    /// it carries it, else the number in its place, when one is.
    pub(crate) number: Option<String>,
}

/// A cited line followed from the pin to the head.
struct Followed {
    /// Its number at the pin.
    cited: u32,
    /// Its text at the pin.
    pinned: String,
    /// Its number in the followed document now; `None` once it is gone.
    line: Option<u32>,
}

/// How the figure fared from the pin to the head, commit by commit: one row per
/// commit that touched the followed document (short commit, date, author, the
/// followed line and whether it still carries the value), following the value
/// when it moves to another line or, when its line is gone, to the line of the
/// same document or of a file the commit changed that carries it in the same
/// context; then a word diff of each pinned line against its line at the head.
/// Every string read from the repository goes through the terminal escape.
pub(crate) fn history(
    repo: &CachedRepo,
    r: &Resolved,
    max: u64,
    color: bool,
) -> Result<(String, Timeline), ShowError> {
    let t = &r.target;
    let mut out = String::new();
    let mut tl = Timeline::default();
    let Some(head) = repo.head() else {
        let _ = writeln!(
            out,
            "\nhistory: the default-branch head is not known (run without --offline once)"
        );
        return Ok((out, tl));
    };
    let read = |commit: Oid, path: &str| -> Result<Option<SourceText>, ShowError> {
        check_size(repo, commit, path, max)?;
        Ok(repo
            .read_blob(commit, path)?
            .map(|b| SourceText::new(&b.bytes)))
    };
    let Some(pinned_doc) = read(git_oid(t), &t.path)? else {
        return Ok((out, tl));
    };
    tl.pin = t.commit.short().to_string();
    tl.head = head.to_string()[..7].to_string();
    tl.path = t.path.clone();
    let _ = writeln!(
        out,
        "\nhistory of {} from {} to the head {}:",
        r.lines,
        t.commit.short(),
        &head.to_string()[..7]
    );
    let end = last_line(&pinned_doc);
    if r.lines.last() > end {
        let past = Lines::new(end.saturating_add(1).max(r.lines.first()), r.lines.last())
            .map_or_else(|_| r.lines.to_string(), |l| l.to_string());
        let _ = writeln!(
            out,
            "  the document has {end} line(s) at {}: {past} is past its end, not followed",
            t.commit.short()
        );
    }
    let exp = r.claim.as_ref().and_then(expected);
    tl.value = exp.as_ref().map(|e| e.value.to_string());
    // A claim follows the line its value stands on (its first cited line when
    // the value is not there); a URL, each cited line (the first few of a
    // long range).
    let first = r.lines.first();
    let last = r.lines.last().min(end);
    let numbers: Vec<u32> = match &exp {
        Some(e) if first <= last => {
            let all = pinned_doc.lines();
            let document = matcher::Document::new(&all, pinned_doc.layout());
            let found = document.cited(first as usize - 1..last as usize, e).found;
            vec![found.map_or(first, |(i, _)| i as u32 + 1)]
        }
        _ => (first..=last).take(FOLLOWED_LINES).collect(),
    };
    if numbers.is_empty() {
        return Ok((out, tl));
    }
    let spanned = last.saturating_sub(first) as usize + 1;
    if exp.is_none() && spanned > FOLLOWED_LINES {
        let _ = writeln!(
            out,
            "  the first {FOLLOWED_LINES} of the {spanned} cited lines are followed"
        );
    }
    let mut followed: Vec<Followed> = numbers
        .iter()
        .map(|&n| Followed {
            cited: n,
            pinned: pinned_doc.line(n).unwrap_or("").to_string(),
            line: Some(n),
        })
        .collect();
    let mut path = t.path.clone();
    let mut current = pinned_doc;
    let pin = git_oid(t);
    row(
        repo,
        pin,
        &path,
        &t.path,
        &followed,
        &current,
        exp.as_ref(),
        (&mut out, &mut tl),
        " (the pin)",
    );
    let mut from = pin;
    let mut rows = 0;
    'paths: loop {
        for commit in repo.path_history(&path, from, head)? {
            let next = read(commit, &path)?;
            let old = current.lines();
            let new = next.as_ref().map(|n| n.lines()).unwrap_or_default();
            let fates = crate::check::upstream::follow(&old, &new);
            let mut lost = false;
            for f in followed.iter_mut() {
                let Some(n) = f.line else { continue };
                f.line = match fates.get(n as usize - 1).copied() {
                    Some(Fate::Kept(h) | Fate::Edited(h)) => Some(h),
                    _ => next
                        .as_ref()
                        .and_then(|doc| refind(doc, &f.pinned, exp.as_ref())),
                };
                lost |= f.line.is_none();
            }
            // One figure whose line left the document: it may have moved to
            // another file of the commit.
            let mut moved = None;
            if lost && followed.len() == 1 {
                for other in repo.changed_files(commit)? {
                    if other == path
                        || repo.blob_size_at(commit, &other)?.unwrap_or(0) > SEARCHED_BYTES.min(max)
                    {
                        continue;
                    }
                    let Some(doc) = read(commit, &other)? else {
                        continue;
                    };
                    if let Some(n) = refind(&doc, &followed[0].pinned, exp.as_ref()) {
                        followed[0].line = Some(n);
                        moved = Some((other, doc));
                        break;
                    }
                }
            }
            rows += 1;
            // Where the figure went decides what the row reads and where the
            // walk goes next: on in another file, on here, or to its end.
            let (moved, gone) = match (moved, next) {
                (Some((other, doc)), _) => {
                    path = other;
                    current = doc;
                    (true, false)
                }
                (None, Some(doc)) => {
                    current = doc;
                    (false, false)
                }
                (None, None) => {
                    followed.iter_mut().for_each(|f| f.line = None);
                    (false, true)
                }
            };
            row(
                repo,
                commit,
                &path,
                &t.path,
                &followed,
                &current,
                exp.as_ref(),
                (&mut out, &mut tl),
                "",
            );
            if moved {
                from = commit;
                continue 'paths;
            }
            if gone {
                let _ = writeln!(out, "      `{}` removed", esc(&path));
                break 'paths;
            }
        }
        break;
    }
    if rows == 0 {
        let _ = writeln!(out, "  no commit touched `{}` after the pin", esc(&path));
    }
    let _ = writeln!(out, "at the head {}:", &head.to_string()[..7]);
    for f in &followed {
        match f.line {
            Some(n) => {
                let at = place(&path, &t.path, n);
                let now = current.line(n).unwrap_or("");
                tl.at_head.push((
                    f.cited,
                    Some(at.clone()),
                    f.pinned.trim().to_string(),
                    now.trim().to_string(),
                ));
                let line = format!(
                    "  L{} is now {at}: {}",
                    f.cited,
                    word_diff(f.pinned.trim(), now.trim(), color)
                );
                let _ = writeln!(out, "{}", line.trim_end());
            }
            None => {
                tl.at_head
                    .push((f.cited, None, f.pinned.trim().to_string(), String::new()));
                let _ = writeln!(
                    out,
                    "  L{} was removed (was: {})",
                    f.cited,
                    esc(f.pinned.trim())
                );
            }
        }
    }
    Ok((out, tl))
}

fn esc(s: &str) -> std::borrow::Cow<'_, str> {
    crate::report::escape::terminal(s)
}

/// `L46` in the cited document, `DETAILS.md:L48` in another.
fn place(path: &str, cited_path: &str, line: u32) -> String {
    if path == cited_path {
        format!("L{line}")
    } else {
        format!("{}:L{line}", esc(path))
    }
}

/// One row of the history: commit, date, author, subject, then where each
/// followed line stands and what it says of the figure.
#[allow(clippy::too_many_arguments)]
fn row(
    repo: &CachedRepo,
    commit: Oid,
    path: &str,
    cited_path: &str,
    followed: &[Followed],
    doc: &SourceText,
    exp: Option<&matcher::Expected>,
    (out, tl): (&mut String, &mut Timeline),
    mark: &str,
) {
    let (date, subject) = repo.commit_summary(commit).unwrap_or_default();
    let author = repo.commit_author(commit).unwrap_or_default();
    let mut row = Row {
        commit: commit.to_string()[..7].to_string(),
        date: date.clone(),
        author: author.clone(),
        subject: subject.clone(),
        lines: Vec::new(),
    };
    let _ = writeln!(
        out,
        "  {} {date} {}: {}{mark}",
        &commit.to_string()[..7],
        esc(&author),
        esc(&subject)
    );
    let all = doc.lines();
    let document = matcher::Document::new(&all, doc.layout());
    for f in followed {
        let Some(n) = f.line else {
            let _ = writeln!(out, "      L{} is gone", f.cited);
            row.lines.push(RowLine {
                cited: f.cited,
                place: None,
                text: String::new(),
                says: "gone".to_string(),
                carries: None,
                number: None,
            });
            continue;
        };
        let text = doc.line(n).unwrap_or("");
        let (mut carries, mut number) = (None, None);
        let says = match exp {
            Some(e)
                if document
                    .cited(n as usize - 1..n as usize, e)
                    .found
                    .is_some() =>
            {
                (carries, number) = (Some(true), Some(e.value.to_string()));
                format!("carries {}", e.value)
            }
            Some(e) => {
                carries = Some(false);
                match crate::check::upstream::value_at_head(&f.pinned, text, e) {
                    Some(now) => {
                        let says = format!("no longer carries {}: now {}", e.value, esc(&now));
                        number = Some(now);
                        says
                    }
                    None => format!("no longer carries {}", e.value),
                }
            }
            None if text.trim() == f.pinned.trim() => "as pinned".to_string(),
            None => "edited".to_string(),
        };
        row.lines.push(RowLine {
            cited: f.cited,
            place: Some(place(path, cited_path, n)),
            text: text.trim().to_string(),
            says: says.clone(),
            carries,
            number,
        });
        let line = format!(
            "      {} {says}: {}",
            place(path, cited_path, n),
            esc(text.trim())
        );
        let _ = writeln!(out, "{}", line.trim_end());
    }
    tl.rows.push(row);
}

/// The line of `doc` that carries the figure in the context of its pinned line
/// `pinned` (a claim: a line carrying its value, most like `pinned`, at least
/// half alike; a URL: the line most like `pinned`, at least four fifths alike),
/// as a line number.
fn refind(doc: &SourceText, pinned: &str, exp: Option<&matcher::Expected>) -> Option<u32> {
    let all = doc.lines();
    let document = matcher::Document::new(&all, doc.layout());
    let want = crate::check::excerpt(pinned);
    let min = if exp.is_some() { 0.5 } else { 0.8 };
    let mut best: Option<(f32, usize)> = None;
    for (i, line) in all.iter().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        if let Some(e) = exp {
            if document.cited(i..i + 1, e).found.is_none() {
                continue;
            }
        }
        let ratio =
            similar::TextDiff::from_chars(want.as_str(), crate::check::excerpt(line).as_str())
                .ratio();
        if ratio >= min && best.is_none_or(|(b, _)| ratio > b) {
            best = Some((ratio, i));
        }
    }
    best.map(|(_, i)| i as u32 + 1)
}

/// A word diff of `old` against `new`: removed words as `[-old-]`, added ones
/// as `{+new+}`, in red and green on a terminal that takes colour.
pub(crate) fn word_diff(old: &str, new: &str, color: bool) -> String {
    use similar::ChangeTag;
    let mut out = String::new();
    for (tag, text) in word_changes(old, new) {
        let text = esc(&text).into_owned();
        let (open, close, paint) = match tag {
            ChangeTag::Equal => ("", "", None),
            ChangeTag::Delete => ("[-", "-]", Some(anstyle::AnsiColor::Red)),
            ChangeTag::Insert => ("{+", "+}", Some(anstyle::AnsiColor::Green)),
        };
        match paint.filter(|_| color) {
            Some(c) => {
                let style = anstyle::Style::new().fg_color(Some(c.into()));
                let _ = write!(out, "{style}{open}{text}{close}{style:#}");
            }
            None => {
                let _ = write!(out, "{open}{text}{close}");
            }
        }
    }
    out
}

/// `old` against `new` word by word: runs of kept, removed and added text.
pub(crate) fn word_changes(old: &str, new: &str) -> Vec<(similar::ChangeTag, String)> {
    let diff = similar::TextDiff::from_words(old, new);
    let mut runs: Vec<(similar::ChangeTag, String)> = Vec::new();
    for change in diff.iter_all_changes() {
        match runs.last_mut() {
            Some((t, text)) if *t == change.tag() => text.push_str(change.value()),
            _ => runs.push((change.tag(), change.value().to_string())),
        }
    }
    runs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn word_diff_marks_removed_and_added_words() {
        assert_eq!(
            word_diff("| 8K prefill | 79.6 |", "| 8K prefill | 81.2 |", false),
            "| 8K prefill | [-79.6-]{+81.2+} |"
        );
        assert_eq!(
            word_diff("decode: 2.9 tok/s", "decode: 3.1 tok/s (driver 580)", false),
            "decode: [-2.9-]{+3.1+} tok/s{+ (driver 580)+}"
        );
        assert_eq!(word_diff("same", "same", false), "same");
        // Control characters from a document are escaped, whatever side.
        assert_eq!(
            word_diff("a \u{1b}[31m", "a b", false),
            "a [-\\u{1b}[31m-]{+b+}"
        );
        // On a terminal, the changes are coloured too.
        assert!(word_diff("a", "b", true).contains("\u{1b}["));
    }
}
