//! `pinaudit verify-statement STATEMENT [PATH]...`: does a statement written by
//! `audit --format in-toto` still speak about what the reader holds?
//!
//! A signature says who wrote a statement; it does not say that the record on
//! the reader's disk, or the document in their cache, is the one the audit
//! read. This re-hashes each record file and each cited document (read from
//! the cache, offline, as `show` reads it) and compares them with the
//! statement's subjects (`docs/statement.md`).

use std::fmt::Write;
use std::path::{Path, PathBuf};

use crate::exit::ExitStatus;
use crate::fetch::GitCache;
use crate::report::intoto::{Statement, Subject, PREDICATE_TYPE, STATEMENT_TYPE};

/// What became of one subject.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Check {
    /// Every digest still matches.
    Same,
    /// A digest differs: which, recorded and now.
    Changed(String),
    /// It could not be read again (why).
    Unchecked(String),
}

/// Why a file is not a statement this command can check.
#[derive(Debug, thiserror::Error)]
pub(crate) enum StatementError {
    #[error("cannot read `{}`: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("`{}` is not a pinaudit in-toto statement: {source}", path.display())]
    NotAStatement {
        path: PathBuf,
        source: serde_json::Error,
    },
    /// Another kind of statement (its type and predicate type, made inert for
    /// a terminal).
    #[error("`{}` is a `{kind}` statement with predicate `{predicate}`; expected `{STATEMENT_TYPE}` with `{PREDICATE_TYPE}`", path.display())]
    OtherKind {
        path: PathBuf,
        kind: String,
        predicate: String,
    },
}

/// The bytes of the regular file at `path`, at most `max` of them. Anything
/// else is refused before a byte is read: a FIFO (opened without blocking,
/// so a writer that never comes cannot hold the command), a device such as
/// `/dev/zero`, a directory; and so is a file longer than `max`, without
/// reading more than `max + 1` bytes of it.
pub(crate) fn read_regular(path: &Path, max: u64) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(std::io::Error::other(
            "not a regular file (a device, FIFO, socket or directory); not read",
        ));
    }
    let too_long = || {
        std::io::Error::other(format!(
            "longer than --max-document-size ({max} bytes); not read"
        ))
    };
    if meta.len() > max {
        return Err(too_long());
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(max.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        return Err(too_long());
    }
    Ok(bytes)
}

/// Reads and checks a statement's envelope; the error says why it is not one.
pub(crate) fn read(path: &Path, max: u64) -> Result<Statement, StatementError> {
    let bytes = read_regular(path, max).map_err(|source| StatementError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let st: Statement =
        serde_json::from_slice(&bytes).map_err(|source| StatementError::NotAStatement {
            path: path.to_path_buf(),
            source,
        })?;
    if st.type_ != STATEMENT_TYPE || st.predicate_type != PREDICATE_TYPE {
        return Err(StatementError::OtherKind {
            path: path.to_path_buf(),
            kind: crate::report::escape::terminal(&st.type_).to_string(),
            predicate: crate::report::escape::terminal(&st.predicate_type).to_string(),
        });
    }
    Ok(st)
}

/// Compares `digest`'s entries named in `now` with what was computed now.
fn compare(recorded: &Subject, now: &[(&str, String)]) -> Check {
    let mut changed = Vec::new();
    for (algo, value) in now {
        if let Some(was) = recorded.digest.get(*algo) {
            if !was.eq_ignore_ascii_case(value) {
                changed.push(format!("{algo} was {was}, now {value}"));
            }
        }
    }
    if changed.is_empty() {
        Check::Same
    } else {
        Check::Changed(changed.join("; "))
    }
}

/// Whether `a` and `b` name the same file (as written, or once resolved).
fn same_file(a: &Path, b: &Path) -> bool {
    a == b
        || matches!(
            (a.canonicalize(), b.canonicalize()),
            (Ok(x), Ok(y)) if x == y
        )
}

/// The record subjects to check: those naming the given files (a given file
/// no subject names is reported as changed), or every one when none is given.
fn record_checks(st: &Statement, paths: &[PathBuf], max: u64) -> Vec<(String, Check)> {
    let record_subjects: Vec<&Subject> = st
        .subject
        .iter()
        .filter(|s| st.predicate.records.iter().any(|r| r.file == s.name))
        .collect();
    let hash = |path: &Path, s: &Subject| match read_regular(path, max) {
        Ok(bytes) => compare(s, &[("sha256", pinaudit_core::hash::sha256_hex(&bytes))]),
        Err(e) => Check::Changed(format!("cannot be read: {e}")),
    };
    if paths.is_empty() {
        return record_subjects
            .iter()
            .map(|s| (s.name.clone(), hash(Path::new(&s.name), s)))
            .collect();
    }
    paths
        .iter()
        .map(|p| {
            let name = p.display().to_string();
            match record_subjects
                .iter()
                .find(|s| same_file(Path::new(&s.name), p))
            {
                Some(s) => (name, hash(p, s)),
                None => (
                    name,
                    Check::Changed("the statement names no such record file".into()),
                ),
            }
        })
        .collect()
}

/// The subjects the predicate lists neither as a record file nor as a
/// document: nothing says how to read them again, so they are named as not
/// checked rather than passed over in silence.
fn unlisted(st: &Statement) -> Vec<(String, Check)> {
    st.subject
        .iter()
        .filter(|s| {
            !st.predicate.records.iter().any(|r| r.file == s.name)
                && !st.predicate.documents.iter().any(|d| d.name == s.name)
        })
        .map(|s| {
            (
                s.name.clone(),
                Check::Unchecked(
                    "the predicate lists no record or document of this name; not checked".into(),
                ),
            )
        })
        .collect()
}

/// Each document subject, read again from the cache at its pinned commit.
fn document_checks(st: &Statement, cache: &GitCache, allow_local: bool) -> Vec<(String, Check)> {
    let mut out = Vec::new();
    for subject in &st.subject {
        let Some(doc) = st
            .predicate
            .documents
            .iter()
            .find(|d| d.name == subject.name)
        else {
            continue;
        };
        out.push((
            subject.name.clone(),
            document_check(subject, doc, cache, allow_local),
        ));
    }
    out
}

fn document_check(
    subject: &Subject,
    doc: &crate::report::intoto::DocumentEntry,
    cache: &GitCache,
    allow_local: bool,
) -> Check {
    if !subject.digest.contains_key("gitCommit") {
        return Check::Unchecked("not a git document; only git documents are read again".into());
    }
    let source = crate::record::Source {
        id: doc.source.clone(),
        url: Some(doc.name.clone()),
        repository: doc.repository.clone(),
        revision: subject
            .digest
            .get("gitCommit")
            .map(|c| crate::record::Revision::parse(c)),
        path: doc.path.clone(),
        sha256: None,
        commit_time: None,
        at: Default::default(),
        parsed_url: Default::default(),
    };
    let target = match crate::sources::resolve(&source, allow_local) {
        Ok(t) => t,
        Err(why) => return Check::Unchecked(why.to_string()),
    };
    let repo = match cache.open(&target.remote) {
        Ok(r) => r,
        Err(e) => return Check::Unchecked(e.to_string()),
    };
    let oid = crate::sources::git_oid(&target);
    if !repo.has_commit(oid) {
        return Check::Unchecked(format!(
            "commit `{}` is not in the cache",
            target.commit.short()
        ));
    }
    match repo.read_blob(oid, &target.path) {
        Ok(Some(blob)) => compare(
            subject,
            &[
                ("gitBlob", blob.id.to_string()),
                ("sha256", pinaudit_core::hash::sha256_hex(&blob.bytes)),
            ],
        ),
        Ok(None) => Check::Changed(format!(
            "`{}` no longer exists at the commit",
            crate::report::escape::terminal(&target.path)
        )),
        Err(e) => Check::Unchecked(e.to_string()),
    }
}

/// Runs the check: what it prints and the exit status, or why the statement
/// could not be read.
pub(crate) fn run(
    statement: &Path,
    paths: &[PathBuf],
    cache: &Path,
    allow_local: bool,
    max: u64,
) -> Result<(String, ExitStatus), StatementError> {
    let st = read(statement, max)?;
    let cache = GitCache::new(cache);
    let mut checks = record_checks(&st, paths, max);
    checks.extend(document_checks(&st, &cache, allow_local));
    if paths.is_empty() {
        checks.extend(unlisted(&st));
    }
    let mut out = String::new();
    let (mut same, mut changed, mut unchecked) = (0, 0, 0);
    for (name, check) in &checks {
        let name = crate::report::escape::terminal(name);
        let _ = match check {
            Check::Same => {
                same += 1;
                writeln!(out, "same       {name}")
            }
            Check::Changed(why) => {
                changed += 1;
                writeln!(
                    out,
                    "changed    {name}: {}",
                    crate::report::escape::terminal(why)
                )
            }
            Check::Unchecked(why) => {
                unchecked += 1;
                writeln!(
                    out,
                    "unchecked  {name}: {}",
                    crate::report::escape::terminal(why)
                )
            }
        };
    }
    let _ = writeln!(
        out,
        "{same} subject(s) the same, {changed} changed, {unchecked} not checked"
    );
    if same + changed == 0 {
        let _ = writeln!(
            out,
            "nothing was checked: the statement vouches for nothing this command can read again"
        );
    }
    let code = if changed > 0 {
        ExitStatus::Findings
    } else if unchecked > 0 || same == 0 {
        ExitStatus::Incomplete
    } else {
        ExitStatus::Clean
    };
    Ok((out, code))
}
