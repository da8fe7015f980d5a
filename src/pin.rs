//! `pinaudit pin URL`: the moment before publishing, like `ratchet pin`
//! for Actions. A branch, tag or short-id URL is resolved to the full commit it
//! names now, the document is fetched and hashed, the value is looked for on the
//! cited line (and, if it moved, where it is), and a pins/v1 source and claim are
//! printed or added to a pin file, the source with its SWHID (the document's
//! durable citation, computed from its git blob id). `audit --fix` uses the
//! same resolution to rewrite each unpinned URL of a pin file in place.

use std::fmt::Write;
use std::path::Path;

use git2::Oid;
use serde_json::{json, Value};

use crate::check::SourceText;
use crate::fetch::{CachedRepo, FetchError, GitCache};
use crate::matcher::{self, Expected};
use crate::record::url::{self as forge_url, Forge, ForgeUrl};
use crate::record::{ClaimValue, CommitId, Lines, Revision};
use crate::sources::SyncPlan;

/// Why `pin` could not pin.
#[derive(Debug, thiserror::Error)]
pub(crate) enum PinError {
    #[error("{0}")]
    Input(String, String),
    #[error(transparent)]
    Fetch(#[from] FetchError),
}

impl PinError {
    pub(crate) fn hint(&self) -> Option<String> {
        match self {
            PinError::Input(_, h) => Some(h.clone()),
            PinError::Fetch(e) => e.hint(),
        }
    }
}

fn input(message: String, hint: &str) -> PinError {
    PinError::Input(message, hint.to_string())
}

/// What `pin` was asked.
#[derive(Debug, Clone, Default)]
pub(crate) struct Request {
    pub(crate) url: String,
    pub(crate) line: Option<u32>,
    pub(crate) value: Option<String>,
    pub(crate) unit: Option<String>,
    pub(crate) label: Option<String>,
    /// `--max-document-size`: a larger document is refused before it is read.
    pub(crate) max_document_size: u64,
    /// `--force`: write the claim even when its value is not on the line.
    pub(crate) force: bool,
}

/// A URL resolved to the commit its revision names now.
#[derive(Debug, Clone)]
pub(crate) struct Pinned {
    pub(crate) url: ForgeUrl,
    pub(crate) commit: CommitId,
    pub(crate) path: String,
    /// The revision as the URL wrote it.
    pub(crate) was: String,
}

/// `raw` with its revision `from` replaced by the commit `to`, the URL otherwise
/// kept as written (anchor included). The revision is found after the view
/// segment (`blob/`, `-/blob/`, `raw/`, `src/branch/`, …); a Gitea branch or
/// tag view becomes a commit view. Without a view (raw.githubusercontent.com),
/// the first segment equal to `from` after the host, owner and repository.
pub(crate) fn replace_revision(raw: &str, from: &str, to: &str) -> String {
    const VIEWS: [(&str, &str); 9] = [
        ("/src/branch/", "/src/commit/"),
        ("/src/tag/", "/src/commit/"),
        ("/src/commit/", "/src/commit/"),
        ("/blob/", "/blob/"),
        ("/raw/", "/raw/"),
        ("/tree/", "/tree/"),
        ("/blame/", "/blame/"),
        ("/resolve/", "/resolve/"),
        ("/src/", "/src/"),
    ];
    let encoded =
        percent_encoding::utf8_percent_encode(from, percent_encoding::NON_ALPHANUMERIC).to_string();
    for rev in [from, encoded.as_str()] {
        for (view, new_view) in VIEWS {
            let needle = format!("{view}{rev}/");
            if let Some(i) = raw.find(&needle) {
                return format!("{}{new_view}{to}/{}", &raw[..i], &raw[i + needle.len()..]);
            }
        }
    }
    // `scheme://host/OWNER/REPO/REV/…`: the revision is the fifth segment.
    let mut slashes = raw.match_indices('/').map(|(i, _)| i);
    if let (Some(start), Some(end)) = (slashes.nth(4), slashes.next()) {
        if raw[start + 1..end] == *from || raw[start + 1..end] == encoded {
            return format!("{}/{to}{}", &raw[..start], &raw[end..]);
        }
    }
    raw.to_string()
}

/// Parses a document URL and checks that it names a repository, a revision and
/// a document.
pub fn parse(url: &str, allow_local: bool) -> Result<(ForgeUrl, String, String), PinError> {
    let u = forge_url::parse(url).map_err(|e| {
        input(
            e.to_string(),
            "give a document URL, e.g. https://github.com/OWNER/REPO/blob/main/README.md#L43",
        )
    })?;
    if u.forge == Forge::Local && !allow_local {
        return Err(input(
            format!("`{}` is a local repository", u.redacted()),
            "pass --allow-local to read file: URLs and paths",
        ));
    }
    let rev = u
        .revision
        .as_ref()
        .map(|r| r.as_str().to_string())
        .ok_or_else(|| {
            input(
                format!("`{}` names no revision", u.redacted()),
                "give a blob URL: …/blob/BRANCH/PATH",
            )
        })?;
    let path = u.path.clone().ok_or_else(|| {
        input(
            format!("`{}` names no document", u.redacted()),
            "give a blob URL: …/blob/BRANCH/PATH",
        )
    })?;
    Ok((u, rev, path))
}

/// Brings the mirror of `remote` up to date (or opens it, offline).
pub(crate) fn sync(
    cache: &GitCache,
    remote: &str,
    plan: &SyncPlan,
) -> Result<CachedRepo, PinError> {
    if !plan.sync.offline {
        let fetch_url =
            crate::fetch::rewrite::resolve_fetch_url(&plan.rewrites, remote, plan.allow_local)
                .map_err(|e| input(e.to_string(), "check the --rewrite rules"))?;
        let opts = crate::sources::sync_options(plan, remote, &fetch_url);
        cache.sync(remote, &fetch_url, &[], &opts)?;
    }
    Ok(cache.open(remote)?)
}

/// Resolves a URL's revision to the full commit it names now.
pub(crate) fn resolve(
    cache: &GitCache,
    url: &str,
    plan: &SyncPlan,
) -> Result<(Pinned, CachedRepo), PinError> {
    let (u, rev, path) = parse(url, plan.allow_local)?;
    let repo = sync(cache, &u.clone_url(), plan)?;
    let oid = match &u.revision {
        Some(Revision::Commit(c)) => Oid::from_str(c.as_str())
            .ok()
            .filter(|o| repo.has_commit(*o)),
        _ => repo.resolve_name(&rev),
    }
    .ok_or_else(|| {
        input(
            format!(
                "`{rev}` names no branch, tag or commit of `{}`{}",
                crate::fetch::redact(&u.repository_url()),
                if plan.sync.offline {
                    " in the cache"
                } else {
                    ""
                }
            ),
            "check the revision in the URL; a short id must be unambiguous",
        )
    })?;
    let commit = CommitId::parse(&oid.to_string()).ok_or_else(|| {
        input(
            format!("commit `{oid}` is not a full commit id"),
            "report this as a bug",
        )
    })?;
    Ok((
        Pinned {
            url: u,
            commit,
            path,
            was: rev,
        },
        repo,
    ))
}

/// What `pin` found: the fragment, and what it has to say about the value.
#[derive(Debug)]
pub(crate) struct Outcome {
    pub(crate) source: Value,
    pub(crate) claim: Option<Value>,
    pub(crate) notes: Vec<String>,
    /// False when a value was given and is not on the line (nor anywhere near).
    pub(crate) value_found: bool,
    /// The claim's label was made from the source id (no `--label`), so it
    /// follows the id the source gets in a pin file.
    pub(crate) default_label: bool,
}

/// Pins one URL: resolve, fetch, hash, and check the value on the line.
pub(crate) fn pin(cache: &GitCache, req: &Request, plan: &SyncPlan) -> Result<Outcome, PinError> {
    let (p, repo) = resolve(cache, &req.url, plan)?;
    let oid = Oid::from_str(p.commit.as_str()).unwrap_or_else(|_| Oid::zero());
    crate::show::check_size(&repo, oid, &p.path, req.max_document_size)
        .map_err(|e| input(e.to_string(), "raise --max-document-size to pin it"))?;
    let blob = repo.read_blob(oid, &p.path)?.ok_or_else(|| {
        input(
            format!(
                "`{}` does not exist at `{}` ({})",
                p.path,
                p.commit.short(),
                p.was
            ),
            "check the path in the URL",
        )
    })?;
    let sha256 = crate::fetch::sha256_hex(&blob.bytes);
    let commit_time = repo
        .commit_time(oid)
        .and_then(|(secs, off)| crate::check::revision::rfc3339(secs, off));
    let lines = req.line.and_then(|l| Lines::single(l).ok()).or(p.url.lines);
    let id = p.path.rsplit('/').next().unwrap_or("document").to_string();
    let mut notes = Vec::new();
    if p.was != p.commit.as_str() {
        notes.push(format!("`{}` names `{}` now", p.was, p.commit));
    }
    let base = replace_revision(
        p.url.raw.split('#').next().unwrap_or(&p.url.raw),
        &p.was,
        p.commit.as_str(),
    );
    let repository = crate::fetch::redact(&p.url.repository_url());
    let mut source = json!({
        "id": id,
        "url": crate::fetch::redact(&base),
        "repository": repository,
        "revision": p.commit.as_str(),
        "path": p.path,
        "sha256": sha256,
        "commit_time": commit_time,
    });
    // The document's durable citation, from the blob id git keeps: without
    // `lines`, which belong to each claim (a pin file's source may gain claims).
    if let Some(swhid) = crate::swhid::Swhid::of_document(
        &blob.id.to_string(),
        p.commit.as_str(),
        Some(&repository),
        &p.path,
        None,
    ) {
        source["swhid"] = Value::String(swhid.to_string());
    }
    let mut value_found = true;
    let claim = match (&req.value, lines) {
        (None, None) => None,
        (value, lines) => {
            let doc = SourceText::new(&blob.bytes);
            let mut lines = lines;
            // Without a line, the value's first line in the document is cited.
            if let (Some(v), None) = (value, lines) {
                let exp = Expected {
                    value: v,
                    unit: req.unit.as_deref(),
                    correct: None,
                    total: None,
                    label: req.label.as_deref(),
                    metric: None,
                    statistic: None,
                };
                let all = doc.lines();
                let document = matcher::Document::new(&all, doc.layout());
                match document.cited(0..all.len(), &exp).found {
                    Some((i, _)) => {
                        let at = i as u32 + 1;
                        notes.push(format!("`{v}` stands on line {at}; the fragment cites it"));
                        lines = Lines::single(at).ok();
                    }
                    None => {
                        let message = format!(
                            "`{v}` is on no line of `{}` at `{}`",
                            p.path,
                            p.commit.short()
                        );
                        if !req.force {
                            return Err(not_found(message));
                        }
                        value_found = false;
                        notes.push(message);
                    }
                }
            } else if let (Some(v), Some(l)) = (value, lines) {
                let all = doc.lines();
                let exp = Expected {
                    value: v,
                    unit: req.unit.as_deref(),
                    correct: None,
                    total: None,
                    label: req.label.as_deref(),
                    metric: None,
                    statistic: None,
                };
                let first = l.first() as usize;
                let last = (l.last() as usize).min(all.len());
                let document = matcher::Document::new(&all, doc.layout());
                let cited = first.saturating_sub(1)..last;
                if document.cited(cited.clone(), &exp).found.is_some() {
                    notes.push(format!("`{v}` stands on line {}", l.first()));
                } else if let Some((i, _)) = document.nearest(cited, &exp) {
                    let now = i as u32 + 1;
                    notes.push(format!(
                        "`{v}` is not on line {} but on line {now}: `{}`; the fragment cites line {now}",
                        l.first(),
                        crate::check::excerpt(all[i])
                    ));
                    lines = Lines::single(now).ok();
                } else {
                    let message = format!(
                        "`{v}` is not on line {} of `{}` at `{}`, nor on any other line",
                        l.first(),
                        p.path,
                        p.commit.short()
                    );
                    if !req.force {
                        return Err(not_found(message));
                    }
                    value_found = false;
                    notes.push(message);
                }
            }
            let mut url = crate::fetch::redact(&base);
            if let Some(l) = lines {
                let _ = write!(url, "#{l}");
            }
            let value = value
                .as_deref()
                .and_then(ClaimValue::parse)
                .and_then(|v| v.text().parse::<serde_json::Number>().ok())
                .map(Value::Number);
            Some(json!({
                "label": req.label.clone().unwrap_or_else(|| format!("{id} line {}", lines.map_or(0, |l| l.first()))),
                "source": id,
                "lines": lines.map(|l| [l.first(), l.last()]),
                "value": value,
                "unit": req.unit,
                "url": url,
            }))
        }
    };
    Ok(Outcome {
        source,
        claim,
        notes,
        value_found,
        default_label: req.label.is_none(),
    })
}

/// A claim whose value `pin` could not find is not written: it would fail the
/// first audit, and the person pinning is there to correct it now.
fn not_found(message: String) -> PinError {
    input(
        format!("{message}; no claim written"),
        "check the value and the line (`pinaudit show URL#LN`), or pass --force to write the claim anyway",
    )
}

/// Refuses to write `path` when it is a symbolic link: the new file would
/// replace the link (or write where it points, outside what was named).
fn refuse_symlink(path: &Path) -> Result<(), PinError> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => Err(input(
            format!(
                "`{}` is a symbolic link; pinaudit does not write through it",
                path.display()
            ),
            "give the pin file itself, not a link to it",
        )),
        _ => Ok(()),
    }
}

/// Writes `text` to `path` whole or not at all: into a temporary file beside
/// it, flushed, then renamed over it, keeping the old file's permissions.
fn write_whole(path: &Path, text: &str) -> Result<(), PinError> {
    use std::io::Write as _;
    let cannot = |e: std::io::Error| {
        input(
            format!("cannot write `{}`: {e}", path.display()),
            "check the path",
        )
    };
    let dir = match path.parent().filter(|d| !d.as_os_str().is_empty()) {
        Some(dir) => {
            std::fs::create_dir_all(dir).map_err(|e| {
                input(
                    format!("cannot create `{}`: {e}", dir.display()),
                    "check the path",
                )
            })?;
            dir
        }
        None => Path::new("."),
    };
    let mut tmp = tempfile::Builder::new()
        .prefix(".pinaudit-")
        .suffix(".tmp")
        .tempfile_in(dir)
        .map_err(cannot)?;
    tmp.write_all(text.as_bytes()).map_err(cannot)?;
    // A temporary file is private (0600); a pin file is not.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(path).map_or(0o644, |m| m.permissions().mode() & 0o7777);
        tmp.as_file()
            .set_permissions(std::fs::Permissions::from_mode(mode))
            .map_err(cannot)?;
    }
    tmp.as_file().sync_all().map_err(cannot)?;
    tmp.persist(path).map_err(|e| cannot(e.error))?;
    Ok(())
}

/// What names a source's document: (repository, revision, path), the
/// repository compared as its clone URL in lowercase.
fn document_key(source: &Value) -> Option<(String, String, String)> {
    let text = |k: &str| source.get(k).and_then(Value::as_str).map(str::to_string);
    let from_url = text("url").and_then(|u| forge_url::parse(&u).ok());
    let repo = text("repository")
        .and_then(|r| forge_url::parse_repository(&r))
        .or_else(|| from_url.clone())?
        .clone_url()
        .to_ascii_lowercase();
    let revision = text("revision").or_else(|| {
        from_url
            .as_ref()
            .and_then(|u| u.revision.as_ref())
            .map(|r| r.as_str().to_string())
    })?;
    let path = text("path").or_else(|| from_url.as_ref().and_then(|u| u.path.clone()))?;
    Some((repo, revision, path))
}

/// The id the new source `new` gets among `sources`: the id of a source that
/// names the same document (same repository, revision and path), else its own
/// id (the document's file name) when free, else the file name after the
/// repository's name (`bench-README.md`), else that with `-2`, `-3`, ….
fn source_id(sources: &[Value], new: &Value) -> (String, bool) {
    let key = document_key(new);
    if let Some(same) = sources
        .iter()
        .find(|s| key.is_some() && document_key(s) == key)
        .and_then(|s| s["id"].as_str())
    {
        return (same.to_string(), true);
    }
    let taken = |id: &str| sources.iter().any(|s| s["id"].as_str() == Some(id));
    let base = new["id"].as_str().unwrap_or("document").to_string();
    if !taken(&base) {
        return (base, false);
    }
    let repo_name = new["repository"]
        .as_str()
        .and_then(forge_url::parse_repository)
        .and_then(|r| r.repo_path.rsplit('/').next().map(str::to_string))
        .unwrap_or_else(|| "source".into());
    let qualified = format!("{repo_name}-{base}");
    if !taken(&qualified) {
        return (qualified, false);
    }
    let n = (2..)
        .find(|n| !taken(&format!("{qualified}-{n}")))
        .unwrap_or(2);
    (format!("{qualified}-{n}"), false)
}

/// Adds the fragment to the pin file `into` (created when missing): the source
/// unless one naming the same document (repository, revision, path) is there
/// already, under an id no other source has, and the claim citing it. Returns
/// the source's id in the file.
pub(crate) fn add_to(into: &Path, outcome: &Outcome) -> Result<String, PinError> {
    refuse_symlink(into)?;
    let mut file: Value = match std::fs::read_to_string(into) {
        Ok(text) => serde_json::from_str(&text).map_err(|e| {
            input(
                format!("`{}` is not JSON: {e}", into.display()),
                "give a pins/v1 file, or a new file name",
            )
        })?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => json!({
            "schema": crate::record::pinfile::SCHEMA,
            "id": into.file_stem().map_or("record".into(), |s| s.to_string_lossy().into_owned()),
            "sources": [],
            "claims": [],
        }),
        Err(e) => {
            return Err(input(
                format!("cannot read `{}`: {e}", into.display()),
                "check the path",
            ))
        }
    };
    let Some(obj) = file.as_object_mut() else {
        return Err(input(
            format!("`{}` is not a pins/v1 object", into.display()),
            "give a pins/v1 file, or a new file name",
        ));
    };
    let list = |obj: &mut serde_json::Map<String, Value>, key: &str| -> Result<(), PinError> {
        let v = obj.entry(key).or_insert_with(|| json!([]));
        if !v.is_array() {
            return Err(input(
                format!("`{key}` of `{}` is not a list", into.display()),
                "fix the pin file first",
            ));
        }
        Ok(())
    };
    list(obj, "sources")?;
    list(obj, "claims")?;
    let mut id = outcome.source["id"]
        .as_str()
        .unwrap_or("document")
        .to_string();
    if let Some(sources) = obj.get_mut("sources").and_then(Value::as_array_mut) {
        let (chosen, existing) = source_id(sources, &outcome.source);
        if !existing {
            let mut source = outcome.source.clone();
            source["id"] = Value::String(chosen.clone());
            sources.push(source);
        }
        id = chosen;
    }
    if let (Some(c), Some(claims)) = (
        &outcome.claim,
        obj.get_mut("claims").and_then(Value::as_array_mut),
    ) {
        let mut claim = c.clone();
        claim["source"] = Value::String(id.clone());
        if outcome.default_label {
            let line = claim["lines"][0].as_u64().unwrap_or(0);
            claim["label"] = Value::String(format!("{id} line {line}"));
        }
        claims.push(claim);
    }
    let mut text = serde_json::to_string_pretty(&file).unwrap_or_default();
    text.push('\n');
    write_whole(into, &text)?;
    Ok(id)
}

/// `audit --fix`: rewrites every unpinned URL of the pin file `file` (a branch,
/// tag or short id where a full commit belongs) to the commit it names now, in
/// place. Returns one line per change. Record documents are never rewritten.
/// What `audit --fix` did to one entry of a pin file, or why it left it.
pub(crate) enum Fix {
    /// A moving revision replaced by its commit.
    Pinned(String),
    /// A moving revision it could not resolve, left as written.
    Left(String),
}

pub(crate) fn fix_pin_file(
    cache: &GitCache,
    file: &Path,
    plan: &SyncPlan,
) -> Result<Vec<Fix>, PinError> {
    refuse_symlink(file)?;
    let text = std::fs::read_to_string(file).map_err(|e| {
        input(
            format!("cannot read `{}`: {e}", file.display()),
            "check the path",
        )
    })?;
    let mut v: Value = serde_json::from_str(&text).map_err(|e| {
        input(
            format!("`{}` is not JSON: {e}", file.display()),
            "fix the pin file first",
        )
    })?;
    let mut changes = Vec::new();
    // Each moving revision is resolved once, however many entries name it.
    let mut resolved: std::collections::HashMap<String, Option<Pinned>> = Default::default();
    let mut pin_url = |u: &str, changes: &mut Vec<Fix>| -> Option<Pinned> {
        let parsed = forge_url::parse(u).ok()?;
        if parsed.is_pinned() || parsed.revision.is_none() {
            return None;
        }
        let key = u.split('#').next().unwrap_or(u).to_string();
        resolved
            .entry(key)
            .or_insert_with(|| match resolve(cache, u, plan) {
                Ok((p, _)) => Some(p),
                Err(e) => {
                    changes.push(Fix::Left(format!(
                        "cannot pin `{}`: {e}",
                        crate::fetch::redact(u)
                    )));
                    None
                }
            })
            .clone()
    };
    for key in ["sources", "claims", "references"] {
        let Some(entries) = v.get_mut(key).and_then(Value::as_array_mut) else {
            continue;
        };
        for e in entries.iter_mut() {
            if key == "sources" {
                fix_source_revision(cache, plan, file, e, &mut changes);
            }
            let Some(u) = e.get("url").and_then(Value::as_str).map(str::to_string) else {
                continue;
            };
            let Some(p) = pin_url(&u, &mut changes) else {
                continue;
            };
            let new = replace_revision(&u, &p.was, p.commit.as_str());
            if new == u {
                continue;
            }
            let what = e
                .get("id")
                .or_else(|| e.get("label"))
                .and_then(Value::as_str)
                .unwrap_or("?")
                .to_string();
            changes.push(Fix::Pinned(format!(
                "{}: {key} `{what}`: `{}` -> `{}` ({} names it now)",
                file.display(),
                crate::fetch::redact(&u),
                crate::fetch::redact(&new),
                p.was
            )));
            e["url"] = Value::String(new);
            // A source's own revision follows its URL when it named the same ref.
            if key == "sources" && e.get("revision").and_then(Value::as_str) == Some(p.was.as_str())
            {
                e["revision"] = Value::String(p.commit.to_string());
            }
        }
    }
    if changes.iter().any(|c| matches!(c, Fix::Pinned(_))) {
        let mut out = serde_json::to_string_pretty(&v).unwrap_or_default();
        out.push('\n');
        write_whole(file, &out)?;
    }
    Ok(changes)
}

/// `audit --fix` over a record document (Markdown, YAML, …): it is never
/// rewritten (its prose and layout are its author's), so each source it would
/// have pinned is said, with the command that gives the commit.
pub(crate) fn unfixed_in_record_document(file: &Path) -> Vec<String> {
    let Some(record) = crate::input::load_found(file).and_then(|i| i.record) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for s in &record.sources {
        let from_url = s.url.as_deref().and_then(|u| forge_url::parse(u).ok());
        let moving = match (&s.revision, &from_url) {
            (Some(Revision::Ref(r)), _) => Some(r.clone()),
            (_, Some(u)) if !u.is_pinned() => u.revision.as_ref().map(|r| r.as_str().to_string()),
            _ => None,
        };
        let Some(rev) = moving else { continue };
        let how = match s.url.as_deref() {
            Some(u) => format!(
                "pin it with `pinaudit pin '{}'` and write the commit into the document",
                crate::fetch::redact(u)
            ),
            None => "write the commit it names into the document".to_string(),
        };
        out.push(format!(
            "{}: source `{}` cites `{rev}`, not a commit; record documents are never rewritten: {how}",
            file.display(),
            s.id
        ));
    }
    out
}

/// A source whose own `revision` is a branch, tag or short id (whatever its URL
/// says) gets the commit that revision names now, from its repository.
fn fix_source_revision(
    cache: &GitCache,
    plan: &SyncPlan,
    file: &Path,
    e: &mut Value,
    changes: &mut Vec<Fix>,
) {
    let Some(rev) = e
        .get("revision")
        .and_then(Value::as_str)
        .map(str::to_string)
    else {
        return;
    };
    if CommitId::parse(&rev).is_some() || rev.trim().is_empty() {
        return;
    }
    let repo = e
        .get("url")
        .and_then(Value::as_str)
        .and_then(|u| forge_url::parse(u).ok())
        .or_else(|| {
            e.get("repository")
                .and_then(Value::as_str)
                .and_then(forge_url::parse_repository)
        });
    let Some(repo) = repo else {
        return;
    };
    if repo.forge == Forge::Local && !plan.allow_local {
        return;
    }
    let id = e
        .get("id")
        .and_then(Value::as_str)
        .unwrap_or("?")
        .to_string();
    let resolved = sync(cache, &repo.clone_url(), plan).and_then(|mirror| {
        mirror.resolve_name(rev.trim()).ok_or_else(|| {
            input(
                format!("`{rev}` names nothing in `{}`", repo.repository_url()),
                "check the revision",
            )
        })
    });
    match resolved {
        Ok(oid) => {
            changes.push(Fix::Pinned(format!(
                "{}: sources `{id}`: revision `{rev}` -> `{oid}` ({rev} names it now)",
                file.display()
            )));
            e["revision"] = Value::String(oid.to_string());
        }
        Err(err) => changes.push(Fix::Left(format!("cannot pin source `{id}`: {err}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn revisions_are_replaced_in_place() {
        let sha = "de1fa14ea798512f54dafc8b8795eb3ef1a6c367";
        assert_eq!(
            replace_revision(
                "https://github.com/o/r/blob/main/a/main/x.md#L3",
                "main",
                sha
            ),
            format!("https://github.com/o/r/blob/{sha}/a/main/x.md#L3")
        );
        assert_eq!(
            replace_revision("https://github.com/main/r/blob/v1.0/x.md", "v1.0", sha),
            format!("https://github.com/main/r/blob/{sha}/x.md")
        );
        assert_eq!(
            replace_revision("https://codeberg.org/o/r/src/branch/main/x.md", "main", sha),
            format!("https://codeberg.org/o/r/src/commit/{sha}/x.md")
        );
        assert_eq!(
            replace_revision(
                "https://raw.githubusercontent.com/main/r/main/x.md",
                "main",
                sha
            ),
            format!("https://raw.githubusercontent.com/main/r/{sha}/x.md")
        );
    }
}
