//! Inputs: which files to read, and reading each into a record plus the
//! `invalid-record` findings for whatever in it could not be read.
//!
//! A bad input never stops the run: an unreadable file, a non-JSON `.json` or a
//! broken block becomes a finding naming the file and position, and every other
//! input is still audited.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::finding::{Code, Finding, Location};
use crate::record::document::{self, Issue};
use crate::record::{pinfile, Record};

/// One input file, read.
#[derive(Debug, Default)]
pub(crate) struct Input {
    /// `None` when nothing of the file could be read as a record.
    pub(crate) record: Option<Record>,
    pub(crate) findings: Vec<Finding>,
}

pub use crate::result::WalkError;

/// Whether a file found while walking a directory is an input.
fn is_input(path: &Path) -> bool {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    // The published JSON Schema lives beside the pin files; it is not a record.
    // Told by its content, not its name alone: a record imported as `schema`
    // must still be audited (issue "Reliability and security").
    if (name == "schema.json" || name.ends_with(".schema.json")) && is_published_schema(path) {
        return false;
    }
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    matches!(ext.as_deref(), Some("json" | "md" | "txt"))
}

/// How directories are walked.
#[derive(Debug, Clone, Default)]
pub(crate) struct WalkOptions {
    /// Globs (gitignore syntax, relative to the walked directory) to skip.
    pub(crate) exclude: Vec<String>,
    /// Walk into what `.gitignore`/`.ignore` exclude and into hidden directories.
    pub(crate) no_ignore: bool,
    /// When set (`--changed-since`), only these files (canonical paths) are
    /// inputs; stdin always is.
    pub(crate) only: Option<std::collections::HashSet<PathBuf>>,
}

/// The inputs to read.
#[derive(Debug, Default)]
pub(crate) struct Collected {
    /// Each file, and whether it was named on the command line (rather than found
    /// while walking a directory). `-` stands for stdin.
    pub(crate) files: Vec<(PathBuf, bool)>,
    pub(crate) errors: Vec<WalkError>,
}

/// Checks `--exclude` globs before any walking, so that a bad one is a usage error.
pub(crate) fn check_globs(globs: &[String]) -> Result<(), String> {
    let mut b = ignore::overrides::OverrideBuilder::new(".");
    for g in globs {
        b.add(&format!("!{g}"))
            .map_err(|e| format!("invalid `--exclude` glob `{g}`: {e}"))?;
    }
    Ok(())
}

/// The symlink loop inside an `ignore` error, if that is what it is.
fn loop_ancestor(e: &ignore::Error) -> Option<&Path> {
    match e {
        ignore::Error::Loop { ancestor, .. } => Some(ancestor),
        ignore::Error::WithPath { err, .. }
        | ignore::Error::WithDepth { err, .. }
        | ignore::Error::WithLineNumber { err, .. } => loop_ancestor(err),
        _ => None,
    }
}

/// Whether `path` holds a JSON Schema of pin files (`$schema` and the `$id`
/// `pinaudit/pins/v1`) rather than a record (no `id`, `sources` or `claims`).
fn is_published_schema(path: &Path) -> bool {
    let Ok(bytes) = std::fs::read(path) else {
        return false;
    };
    let Ok(Value::Object(map)) = serde_json::from_slice::<Value>(&bytes) else {
        return false;
    };
    map.contains_key("$schema")
        && map.get("$id").and_then(Value::as_str) == Some(pinfile::SCHEMA)
        && !["id", "sources", "claims", "schema"]
            .iter()
            .any(|k| map.contains_key(*k))
}

/// Lists the input files under `paths`, in a stable order. Files named directly are
/// always inputs; directories are walked recursively (the `ignore` crate, as
/// ripgrep does), following links but not loops, skipping what `.gitignore` and
/// `.ignore` exclude, hidden directories and `--exclude` globs unless
/// `--no-ignore`: `audit .` must not read `.git/`, `target/` or `node_modules/`.
pub(crate) fn collect(paths: &[PathBuf], opts: &WalkOptions, pool: crate::par::Pool) -> Collected {
    let mut files = Vec::new();
    let mut errors = Vec::new();
    // Per file, whether the walk found it to be no link (its directory
    // entry says so: no system call to ask again).
    let mut no_link = Vec::new();
    for p in paths {
        if p.as_os_str() == "-" {
            files.push((p.clone(), true));
            no_link.push(false);
            continue;
        }
        if !p.exists() {
            errors.push(WalkError {
                path: p.clone(),
                message: format!("`{}` does not exist", p.display()),
            });
            continue;
        }
        if !p.is_dir() {
            files.push((p.clone(), true));
            no_link.push(false);
            continue;
        }
        let mut overrides = ignore::overrides::OverrideBuilder::new(p);
        for glob in &opts.exclude {
            if let Err(e) = overrides.add(&format!("!{glob}")) {
                errors.push(WalkError {
                    path: p.clone(),
                    message: format!("invalid `--exclude` glob `{glob}`: {e}"),
                });
            }
        }
        let overrides = match overrides.build() {
            Ok(o) => o,
            Err(e) => {
                errors.push(WalkError {
                    path: p.clone(),
                    message: format!("invalid `--exclude` globs: {e}"),
                });
                continue;
            }
        };
        let respect = !opts.no_ignore;
        let root = p.clone();
        let walker = ignore::WalkBuilder::new(p)
            .follow_links(true)
            // By name: siblings' paths share their directory's bytes, so
            // comparing whole paths bytewise orders them as their names
            // (`sort_by_file_name` would take each name out of its path
            // again for every comparison).
            .sort_by_file_path(|a, b| a.as_os_str().cmp(b.as_os_str()))
            .standard_filters(false)
            .git_ignore(respect)
            .git_exclude(respect)
            .ignore(respect)
            .parents(respect)
            // A .gitignore counts whether or not the tree is a git checkout.
            .require_git(false)
            .overrides(overrides)
            // Hidden directories (`.git/`, `.cache/`), never hidden files: a record
            // file is never skipped because of its name.
            .filter_entry(move |e| {
                !respect
                    || e.path() == root
                    || !(e.file_type().is_some_and(|t| t.is_dir())
                        && e.file_name().to_str().is_some_and(|n| n.starts_with('.')))
            })
            .build();
        for entry in walker {
            match entry {
                Ok(e) if e.file_type().is_some_and(|t| t.is_file()) && is_input(e.path()) => {
                    no_link.push(!e.path_is_symlink());
                    files.push((e.path().to_path_buf(), false))
                }
                Ok(_) => {}
                Err(e) => errors.push(WalkError {
                    path: p.clone(),
                    message: match loop_ancestor(&e) {
                        Some(a) => format!("symlink loop back to `{}`; not followed", a.display()),
                        None => e.to_string(),
                    },
                }),
            }
        }
    }
    // A file named twice, or reached again through a link, is audited once.
    // Resolving a path is a system call per directory level of it: each
    // directory is resolved once, and a file that is no link is where its
    // directory resolves to.
    // Paths are keys by their bytes here (std's path hashing, component by
    // component through SipHash, showed in a re-check of thousands of files).
    let mut dirs: Dirs = Default::default();
    for (f, _) in &files {
        if let Some(d) = f.parent() {
            dirs.entry(d.as_os_str()).or_insert_with(|| {
                let at = if d.as_os_str().is_empty() {
                    Path::new(".")
                } else {
                    d
                };
                std::fs::canonicalize(at).ok()
            });
        }
    }
    // A file the walk found to be no link resolves without a system call:
    // those are resolved here, the others (named files, links) on the
    // workers (starting threads for a join each only waits for a core).
    let asked: Vec<&PathBuf> = files
        .iter()
        .zip(&no_link)
        .filter(|(_, no_link)| !**no_link)
        .map(|((f, _), _)| f)
        .collect();
    let mut asked = pool.map(&asked, |f| canonical(f, &dirs, false)).into_iter();
    let resolved: Vec<PathBuf> = files
        .iter()
        .zip(no_link)
        .map(|((f, _), no_link)| match no_link {
            true => canonical(f, &dirs, true),
            false => asked.next().unwrap_or_else(|| f.clone()),
        })
        .collect();
    let mut seen: foldhash::HashSet<std::ffi::OsString> = Default::default();
    let files = files
        .into_iter()
        .zip(resolved)
        .filter(|((f, _), canonical)| {
            opts.only
                .as_ref()
                .is_none_or(|only| f.as_os_str() == "-" || only.contains(canonical))
        })
        .filter_map(|(file, canonical)| seen.insert(canonical.into_os_string()).then_some(file))
        .collect();
    Collected { files, errors }
}

/// Each directory of the input files (as given), resolved.
type Dirs<'a> = foldhash::HashMap<&'a std::ffi::OsStr, Option<PathBuf>>;

/// Where `file` resolves to (itself when it does not): within its directory
/// as `dirs` resolved it, when it is no link itself (`no_link`: the walk found
/// it so; else asked here), else resolved whole.
fn canonical(file: &Path, dirs: &Dirs, no_link: bool) -> PathBuf {
    let name = match file.components().next_back() {
        Some(std::path::Component::Normal(name)) => Some(name),
        _ => None,
    };
    let plain =
        no_link || std::fs::symlink_metadata(file).is_ok_and(|m| !m.file_type().is_symlink());
    let dir = file
        .parent()
        .and_then(|d| dirs.get(d.as_os_str()))
        .and_then(Option::as_ref);
    match (name, dir) {
        (Some(name), Some(dir)) if plain => dir.join(name),
        _ => std::fs::canonicalize(file).unwrap_or_else(|_| file.to_path_buf()),
    }
}

/// Whether a JSON value read from a `.json` file found while walking has
/// anything of a pin file: an unrelated `package.json` is no record.
fn pin_like(value: &Value) -> bool {
    let Value::Object(o) = value else {
        return false;
    };
    o.get("schema")
        .and_then(Value::as_str)
        .is_some_and(|s| s.starts_with("pinaudit/pins/"))
        || ["sources", "claims", "artifacts"]
            .iter()
            .any(|k| o.contains_key(*k))
}

/// Whether the imported record document `input` (of a file found while
/// walking) carries a record: a fence of JSON that is not a record (an example
/// in a README, valid or not) is no record either; a file that yields nothing
/// but uses the record format's own words is a damaged record, and stays an
/// `invalid-record`.
fn document_carries_record(input: &Input, bytes: &[u8]) -> bool {
    if let Some(r) = &input.record {
        if !(r.sources.is_empty() && r.claims.is_empty() && r.artifacts.is_empty()) {
            return true;
        }
    }
    let text = String::from_utf8_lossy(bytes);
    RECORD_MARKERS.iter().any(|m| text.contains(m))
}

/// Whether `bytes` hold a ```json fence, in any case.
fn has_json_fence(bytes: &[u8]) -> bool {
    const FENCE: &[u8] = b"```json";
    bytes
        .windows(FENCE.len())
        .any(|w| w.eq_ignore_ascii_case(FENCE))
}

/// Words only a record document uses: its JSON keys and header bullets.
const RECORD_MARKERS: &[&str] = &[
    "\"figures\"",
    "\"supplemental_sources\"",
    "\"source_document_id\"",
    "\"source_document_sha256\"",
    "\"source_line\"",
    "\"test_profiles\"",
    "\"parent_record_id\"",
    "Pinned document:",
    "Source revision:",
];

fn stem(file: &Path) -> String {
    file.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "record".into())
}

fn invalid(record: &str, file: &Path, line: Option<usize>, message: String) -> Finding {
    Finding::new(Code::InvalidRecord, record, message)
        .at(Location {
            path: Some(file.display().to_string()),
            line: line.and_then(|l| u32::try_from(l).ok()),
            ..Location::default()
        })
        .with("file", file.display().to_string())
}

/// Reads one input file: `.json` as a pin file, anything else as a record document;
/// `-` reads stdin, as a pin file when it starts with `{`.
pub(crate) fn load(file: &Path) -> Input {
    if file.as_os_str() == "-" {
        let mut bytes = Vec::new();
        let name = Path::new("<stdin>");
        if let Err(e) = std::io::Read::read_to_end(&mut std::io::stdin().lock(), &mut bytes) {
            return Input {
                record: None,
                findings: vec![invalid(
                    "stdin",
                    name,
                    None,
                    format!("cannot read stdin: {e}"),
                )],
            };
        }
        let is_json = bytes
            .iter()
            .find(|b| !b.is_ascii_whitespace())
            .is_some_and(|&b| b == b'{');
        let mut input = if is_json {
            load_pinfile(name, &bytes)
        } else {
            load_document(name, &bytes)
        };
        if let Some(r) = &mut input.record {
            if redact_urls(r) {
                input.findings.push(invalid(
                    &r.id,
                    name,
                    None,
                    "`<stdin>`: a URL carries credentials (`user:secret@`); pinaudit dropped them"
                        .into(),
                ));
            }
        }
        return read_from(input, &bytes);
    }
    let bytes = match std::fs::read(file) {
        Ok(b) => b,
        Err(e) => {
            return Input {
                record: None,
                findings: vec![invalid(
                    &stem(file),
                    file,
                    None,
                    format!("cannot read `{}`: {e}", file.display()),
                )],
            }
        }
    };
    load_bytes(file, &bytes)
}

/// [`load`] of a file already read as `bytes` (not stdin).
pub(crate) fn load_bytes(file: &Path, bytes: &[u8]) -> Input {
    let input = match is_json(file) {
        true => load_pinfile(file, bytes),
        false => load_document(file, bytes),
    };
    read_from(without_credentials(file, input), bytes)
}

fn is_json(file: &Path) -> bool {
    file.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("json"))
}

/// `input` with its record marked as read from `bytes` (the whole-record memo
/// is keyed by them).
fn read_from(mut input: Input, bytes: &[u8]) -> Input {
    if let Some(r) = &mut input.record {
        use sha2::Digest as _;
        r.input = crate::record::InputDigest(Some(sha2::Sha256::digest(bytes).into()));
    }
    input
}

/// Reads a file found while walking a directory, as [`load`] does, when it
/// carries a record at all; `None` when it does not (a walk skips it, with a
/// note): a Markdown or text file with no ```json block, or a JSON file that is
/// valid JSON but has nothing of a pin file (an unrelated `package.json`).
/// Anything broken still counts, so that a damaged record becomes
/// `invalid-record` rather than vanishing. The file is read and parsed once:
/// deciding that it carries a record yields the record.
pub(crate) fn load_found(file: &Path) -> Option<Input> {
    if file.as_os_str() == "-" {
        return Some(load(file));
    }
    let Ok(bytes) = std::fs::read(file) else {
        // Says why it can't be read.
        return Some(load(file));
    };
    load_found_bytes(file, &bytes)
}

/// [`load_found`] of a file already read as `bytes` (not stdin).
pub(crate) fn load_found_bytes(file: &Path, bytes: &[u8]) -> Option<Input> {
    if !is_json(file) {
        if !has_json_fence(bytes) {
            return None;
        }
        let input = load_document(file, bytes);
        if !document_carries_record(&input, bytes) {
            return None;
        }
        return Some(read_from(without_credentials(file, input), bytes));
    }
    let json = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes);
    let value = match serde_json::from_slice::<Value>(json) {
        Ok(v) if pin_like(&v) => v,
        Ok(_) => return None,
        // Broken: an `invalid-record`, as `load` says.
        Err(_) => return Some(load_bytes(file, bytes)),
    };
    let input = pinfile_input(file, json, &value);
    Some(read_from(without_credentials(file, input), bytes))
}

/// `input` with every URL's credentials removed, and a finding when there were any.
fn without_credentials(file: &Path, mut input: Input) -> Input {
    if let Some(r) = &mut input.record {
        if redact_urls(r) {
            input.findings.push(invalid(
                &r.id,
                file,
                None,
                format!(
                    "`{}`: a URL carries credentials (`user:secret@`); pinaudit dropped them",
                    file.display()
                ),
            ));
        }
    }
    input
}

/// Removes credentials from every URL of a record, so that none reaches a report,
/// a log or the cache; says whether there were any. Private repositories are
/// reached with `GITHUB_TOKEN` or a git credential helper instead.
fn redact_urls(r: &mut crate::record::Record) -> bool {
    let mut changed = false;
    let mut clean = |u: &mut Option<String>| {
        if let Some(text) = u {
            let redacted = crate::fetch::redact(text);
            if redacted != *text {
                *text = redacted;
                changed = true;
            }
        }
    };
    for s in &mut r.sources {
        clean(&mut s.url);
        clean(&mut s.repository);
    }
    for c in &mut r.claims {
        clean(&mut c.url);
    }
    for reference in &mut r.references {
        let mut u = Some(std::mem::take(&mut reference.url));
        clean(&mut u);
        reference.url = u.unwrap_or_default();
    }
    changed
}

fn load_pinfile(file: &Path, bytes: &[u8]) -> Input {
    let fail = |line: Option<usize>, message: String| Input {
        record: None,
        findings: vec![invalid(&stem(file), file, line, message)],
    };
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return fail(None, format!("`{}` is empty", file.display()));
    }
    // Editors on some systems save a UTF-8 byte order mark; JSON has no use for it.
    let bytes = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes);
    let value: Value = match serde_json::from_slice(bytes) {
        Ok(v) => v,
        Err(e) => {
            let what = if e.is_eof() {
                "ends early (truncated?)"
            } else {
                "is not valid JSON"
            };
            return fail(
                Some(e.line()),
                format!(
                    "`{}` line {} column {}: {what}: {}",
                    file.display(),
                    e.line(),
                    e.column(),
                    crate::record::document::json_error(&e)
                ),
            );
        }
    };
    pinfile_input(file, bytes, &value)
}

/// The record of a pin file whose text `bytes` (without a byte order mark)
/// parsed as `value`.
fn pinfile_input(file: &Path, bytes: &[u8], value: &Value) -> Input {
    let fail = |line: Option<usize>, message: String| Input {
        record: None,
        findings: vec![invalid(&stem(file), file, line, message)],
    };
    let located = std::str::from_utf8(bytes)
        .map(|text| pinfile::from_text_value(value, file, text))
        .unwrap_or_else(|_| pinfile::from_value(value, file));
    match located {
        Ok(parsed) => {
            let id = parsed.record.id.clone();
            let findings = parsed
                .problems
                .into_iter()
                .map(|p| {
                    invalid(
                        &id,
                        file,
                        None,
                        format!("`{}` at `{}`: {}", file.display(), p.pointer, p.message),
                    )
                    .with("pointer", p.pointer)
                })
                .collect();
            Input {
                record: Some(parsed.record),
                findings,
            }
        }
        Err(p) => fail(None, format!("`{}`: {}", file.display(), p.message)),
    }
}

fn load_document(file: &Path, bytes: &[u8]) -> Input {
    let mut findings = Vec::new();
    let text = match std::str::from_utf8(bytes) {
        Ok(t) => std::borrow::Cow::Borrowed(t),
        Err(e) => {
            let at = e.valid_up_to();
            let line = bytes[..at].iter().filter(|&&b| b == b'\n').count() + 1;
            findings.push(
                invalid(
                    &stem(file),
                    file,
                    Some(line),
                    format!(
                        "`{}` is not UTF-8 (first bad byte at offset {at}, line {line}); read with replacement characters",
                        file.display()
                    ),
                )
                .with("offset", at),
            );
            String::from_utf8_lossy(bytes)
        }
    };
    if text.trim().is_empty() {
        findings.push(invalid(
            &stem(file),
            file,
            None,
            format!("`{}` is empty", file.display()),
        ));
        return Input {
            record: None,
            findings,
        };
    }
    let imported = document::import(&text, file);
    let id = imported.record.id.clone();
    for f in &mut findings {
        f.record = id.clone();
    }
    findings.extend(imported.issues.iter().map(|i| issue_finding(&id, file, i)));
    Input {
        record: Some(imported.record),
        findings,
    }
}

fn issue_finding(record: &str, file: &Path, issue: &Issue) -> Finding {
    let mut where_ = format!("`{}`", file.display());
    if let Some(p) = issue.position {
        where_.push_str(&format!(" line {} column {}", p.line, p.column));
    }
    if let Some(b) = issue.block {
        where_.push_str(&format!(", ```json block {b}"));
    }
    if let Some(ptr) = &issue.pointer {
        where_.push_str(&format!(" at `{ptr}`"));
    }
    let mut f = invalid(
        record,
        file,
        issue.position.map(|p| p.line),
        format!("{where_}: {}", issue.message),
    );
    if let Some(p) = issue.position {
        f = f.with("line", p.line).with("column", p.column);
    }
    if let Some(b) = issue.block {
        f = f.with("block", b);
    }
    if let Some(ptr) = &issue.pointer {
        f = f.with("pointer", ptr.as_str());
    }
    if issue.warning {
        // A key that looks mistyped: the record is read, the key is named.
        f.severity = crate::finding::Severity::Warning;
    }
    f
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file resolved within its resolved directory is where resolving it
    /// whole puts it: a plain file, a link to it, a file under a linked
    /// directory, a path with `..` and one that does not exist.
    #[test]
    fn a_file_resolves_as_its_whole_path_does() {
        let dir = tempfile::tempdir().expect("tempdir");
        let real = dir.path().join("real");
        std::fs::create_dir(&real).expect("mkdir");
        std::fs::write(real.join("a.json"), "{}").expect("write");
        std::os::unix::fs::symlink(real.join("a.json"), real.join("link.json")).expect("link");
        std::os::unix::fs::symlink(&real, dir.path().join("linked")).expect("dir link");
        let paths = [
            real.join("a.json"),
            real.join("link.json"),
            dir.path().join("linked/a.json"),
            dir.path().join("linked/../real/a.json"),
            real.join("missing.json"),
        ];
        let dirs: Dirs = paths
            .iter()
            .filter_map(|p| p.parent())
            .map(|d| (d.as_os_str(), std::fs::canonicalize(d).ok()))
            .collect();
        let real_a = std::fs::canonicalize(real.join("a.json")).expect("resolves");
        for p in &paths[..4] {
            assert_eq!(canonical(p, &dirs, false), real_a, "{}", p.display());
        }
        assert_eq!(
            canonical(&paths[4], &dirs, false),
            paths[4],
            "left as given"
        );
        // Walked, the file and the link to it are one input (the walk says
        // which is a link); named as well, still one.
        for named in [vec![], paths[..2].to_vec()] {
            let inputs: Vec<PathBuf> = [vec![real.clone()], named].concat();
            let walked = collect(&inputs, &WalkOptions::default(), crate::par::Pool::new(2));
            assert_eq!(walked.files.len(), 1, "{:?}", walked.files);
        }
    }
}
