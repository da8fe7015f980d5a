//! `pinaudit preserve [PATH]...`: for editors, before publishing. A figure cited
//! to a commit stays checkable only while someone keeps that commit; Software
//! Heritage keeps what it archived for good. So every repository the records
//! cite is sent to its "save code now" queue (one request per repository,
//! however many sources cite it), and its `known/` endpoint is asked, in one
//! call for all of them, which pinned commits it holds already. What comes back
//! says, per commit, whether it is archived, or requested (with the request id
//! to follow), and per repository what became of its save request.
//!
//! Nothing here reads the cache or a forge: the repositories and commits come
//! from the records as written. The HTTP part is `crate::fetch::swh_save`.

use std::fmt::Write;
use std::path::PathBuf;

use serde::Serialize;

use crate::exit::ExitStatus;
use crate::fetch::swh_save::{self, Preserved, SaveOptions, SaveRequest};
use crate::record::url::{self as forge_url, Forge};
use crate::record::{Record, Revision};
use crate::report::escape::terminal as t;
use crate::swhid::CoreSwhid;

/// The JSON output's schema name.
pub(crate) const SCHEMA: &str = "pinaudit/preserve/v1";

/// A source citing a repository.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Citation {
    pub(crate) record: String,
    pub(crate) file: String,
    pub(crate) source: String,
}

/// What the records ask to preserve.
#[derive(Debug, Default)]
pub(crate) struct Plan {
    /// Each repository URL, in the order of its first citation.
    pub(crate) origins: Vec<String>,
    /// Each pinned commit of a repository, with the sources citing it.
    pub(crate) commits: Vec<(String, String, Vec<Citation>)>,
    /// Sources with nothing to preserve or no commit to look up, and why.
    pub(crate) skipped: Vec<(Citation, String)>,
}

impl Plan {
    /// The repositories and pinned commits of `records`.
    pub(crate) fn of(records: &[Record]) -> Plan {
        let mut plan = Plan::default();
        for r in records {
            for s in &r.sources {
                let cited = Citation {
                    record: r.id.clone(),
                    file: r.file.display().to_string(),
                    source: s.id.clone(),
                };
                let at = s.located();
                let repo = at
                    .repository
                    .as_deref()
                    .and_then(forge_url::parse_repository);
                let Some(repo) = repo else {
                    plan.skipped
                        .push((cited, "names no repository (a web document)".into()));
                    continue;
                };
                if repo.forge == Forge::Local || !crate::url::classify_host(&repo.host).is_public()
                {
                    plan.skipped.push((
                        cited,
                        "its repository is not on a public host, which the archive cannot visit"
                            .into(),
                    ));
                    continue;
                }
                let origin = crate::url::redact(&repo.repository_url());
                if !plan.origins.contains(&origin) {
                    plan.origins.push(origin.clone());
                }
                match &at.revision {
                    Some(Revision::Commit(c)) if CoreSwhid::revision(c.as_str()).is_some() => {
                        let commit = c.as_str().to_string();
                        match plan
                            .commits
                            .iter_mut()
                            .find(|(o, k, _)| *o == origin && *k == commit)
                        {
                            Some((_, _, by)) => by.push(cited),
                            None => plan.commits.push((origin, commit, vec![cited])),
                        }
                    }
                    Some(Revision::Commit(c)) => plan.skipped.push((
                        cited,
                        format!("`{}` is a SHA-256 commit id, which has no SWHID", c.short()),
                    )),
                    Some(Revision::Ref(name)) => plan.skipped.push((
                        cited,
                        format!(
                            "not pinned: it names `{name}`, not a commit (its repository is saved all the same)"
                        ),
                    )),
                    None => plan.skipped.push((
                        cited,
                        "names no revision (its repository is saved all the same)".into(),
                    )),
                }
            }
        }
        plan
    }
}

/// What became of one repository's save request.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct RepositoryReport {
    pub(crate) origin: String,
    /// `requested`, `rejected` (the archive refused it) or `failed` (no answer).
    pub(crate) status: &'static str,
    pub(crate) request_id: Option<u64>,
    pub(crate) request_status: Option<String>,
    pub(crate) task_status: Option<String>,
    pub(crate) request_url: Option<String>,
    pub(crate) reason: Option<String>,
}

/// Whether the archive holds one pinned commit.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct CommitReport {
    pub(crate) repository: String,
    pub(crate) revision: String,
    pub(crate) swhid: String,
    /// `archived`; `requested` (not archived yet, its repository's save was
    /// requested); `not-archived` (and the save request failed); `unknown`.
    pub(crate) status: &'static str,
    pub(crate) request_id: Option<u64>,
    pub(crate) reason: Option<String>,
    pub(crate) cited_by: Vec<Citation>,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct SkippedReport {
    #[serde(flatten)]
    pub(crate) cited: Citation,
    pub(crate) reason: String,
}

#[derive(Debug, Clone, Default, Serialize)]
pub(crate) struct Summary {
    pub(crate) repositories: usize,
    pub(crate) save_requests: usize,
    pub(crate) failed_requests: usize,
    pub(crate) commits: usize,
    pub(crate) archived: usize,
    pub(crate) requested: usize,
    pub(crate) not_archived: usize,
    pub(crate) unknown: usize,
    pub(crate) unreadable_inputs: usize,
    /// Every request was answered and every input read.
    pub(crate) complete: bool,
}

/// `preserve --format json`.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Report {
    pub(crate) schema: &'static str,
    /// The API asked, credentials removed.
    pub(crate) archive: String,
    pub(crate) summary: Summary,
    pub(crate) repositories: Vec<RepositoryReport>,
    pub(crate) commits: Vec<CommitReport>,
    pub(crate) skipped: Vec<SkippedReport>,
}

fn repository_report(origin: &str, answer: &Result<SaveRequest, String>) -> RepositoryReport {
    let (status, reason) = match answer {
        Ok(r) if r.rejected() => (
            "rejected",
            Some("the archive rejected the save request".into()),
        ),
        Ok(_) => ("requested", None),
        Err(why) => ("failed", Some(why.clone())),
    };
    let ok = answer.as_ref().ok();
    RepositoryReport {
        origin: origin.to_string(),
        status,
        request_id: ok.and_then(|r| r.id),
        request_status: ok.and_then(|r| r.save_request_status.clone()),
        task_status: ok.and_then(|r| r.save_task_status.clone()),
        request_url: ok.and_then(|r| r.request_url.as_deref().map(crate::url::redact)),
        reason,
    }
}

impl Report {
    /// The report of what the archive answered `plan`'s requests.
    pub(crate) fn new(api: &str, plan: Plan, answers: &Preserved, unreadable: usize) -> Report {
        let repositories: Vec<RepositoryReport> = answers
            .saves
            .iter()
            .map(|(origin, answer)| repository_report(origin, answer))
            .collect();
        let commits: Vec<CommitReport> = plan
            .commits
            .into_iter()
            .map(|(origin, commit, cited_by)| {
                let swhid =
                    CoreSwhid::revision(&commit).map_or_else(String::new, |s| s.to_string());
                let save = repositories
                    .iter()
                    .find(|r| r.origin == origin)
                    .filter(|r| r.status == "requested");
                let (status, reason) = match answers.known.get(&swhid) {
                    Some(Ok(true)) => ("archived", None),
                    Some(Ok(false)) if save.is_some() => ("requested", None),
                    Some(Ok(false)) => (
                        "not-archived",
                        Some("not archived, and its repository's save request failed".to_string()),
                    ),
                    Some(Err(why)) => ("unknown", Some(why.clone())),
                    None => ("unknown", Some("not asked".to_string())),
                };
                CommitReport {
                    repository: origin,
                    revision: commit,
                    swhid,
                    status,
                    request_id: save
                        .filter(|_| status == "requested")
                        .and_then(|r| r.request_id),
                    reason,
                    cited_by,
                }
            })
            .collect();
        let count = |s: &str| commits.iter().filter(|c| c.status == s).count();
        let failed_requests = repositories
            .iter()
            .filter(|r| r.status != "requested")
            .count();
        let summary = Summary {
            repositories: repositories.len(),
            save_requests: repositories.len() - failed_requests,
            failed_requests,
            commits: commits.len(),
            archived: count("archived"),
            requested: count("requested"),
            not_archived: count("not-archived"),
            unknown: count("unknown"),
            unreadable_inputs: unreadable,
            complete: failed_requests == 0 && count("unknown") == 0 && unreadable == 0,
        };
        Report {
            schema: SCHEMA,
            archive: crate::url::redact(api),
            summary,
            repositories,
            commits,
            skipped: plan
                .skipped
                .into_iter()
                .map(|(cited, reason)| SkippedReport { cited, reason })
                .collect(),
        }
    }

    /// 0 every pinned commit archived; 1 some only requested; 2 something
    /// failed or could not be read.
    pub(crate) fn exit_status(&self) -> ExitStatus {
        let s = &self.summary;
        if !s.complete || s.not_archived > 0 {
            ExitStatus::Incomplete
        } else if s.requested > 0 {
            ExitStatus::Findings
        } else {
            ExitStatus::Clean
        }
    }

    /// The text output: repositories, commits, skipped sources, a summary line.
    pub(crate) fn text(&self) -> String {
        let mut out = String::new();
        if !self.repositories.is_empty() {
            out.push_str("repositories\n");
        }
        for r in &self.repositories {
            let _ = write!(out, "  {:<10} {}", r.status, t(&r.origin));
            if let Some(id) = r.request_id {
                let _ = write!(out, "  save request {id}");
            }
            let states: Vec<&str> = [&r.request_status, &r.task_status]
                .into_iter()
                .filter_map(|s| s.as_deref())
                .collect();
            if !states.is_empty() {
                let _ = write!(out, " ({})", t(&states.join(", ")));
            }
            if let Some(u) = &r.request_url {
                let _ = write!(out, "  {}", t(u));
            }
            if let Some(why) = &r.reason {
                let _ = write!(out, "  ({})", t(why));
            }
            out.push('\n');
        }
        if !self.commits.is_empty() {
            out.push_str("commits\n");
        }
        for c in &self.commits {
            let _ = write!(
                out,
                "  {:<10} {}@{}  {}",
                c.status,
                t(&c.repository),
                crate::report::short_rev(&c.revision),
                c.swhid
            );
            if let Some(id) = c.request_id {
                let _ = write!(out, "  (not archived yet: save request {id})");
            }
            if let Some(why) = &c.reason {
                let _ = write!(out, "  ({})", t(why));
            }
            out.push('\n');
        }
        if !self.skipped.is_empty() {
            out.push_str("skipped\n");
        }
        for s in &self.skipped {
            let _ = writeln!(
                out,
                "  {}  source `{}`: {}",
                t(&s.cited.file),
                t(&s.cited.source),
                t(&s.reason)
            );
        }
        let s = &self.summary;
        let ids: Vec<String> = self
            .repositories
            .iter()
            .filter_map(|r| r.request_id.map(|i| i.to_string()))
            .collect();
        let _ = write!(
            out,
            "{} repository(ies): {} save request(s)",
            s.repositories, s.save_requests
        );
        if !ids.is_empty() {
            let _ = write!(out, " (ids {})", ids.join(", "));
        }
        if s.failed_requests > 0 {
            let _ = write!(out, ", {} failed", s.failed_requests);
        }
        let _ = write!(
            out,
            "; {} pinned commit(s): {} archived, {} requested",
            s.commits, s.archived, s.requested
        );
        if s.not_archived + s.unknown > 0 {
            let _ = write!(
                out,
                ", {} not archived or unknown",
                s.not_archived + s.unknown
            );
        }
        if s.unreadable_inputs > 0 {
            let _ = write!(out, "; {} input(s) could not be read", s.unreadable_inputs);
        }
        out.push('\n');
        out
    }
}

/// `--swh-url` made a base URL: http(s), ending in `/`.
pub(crate) fn api_url(raw: &str) -> Result<String, String> {
    let parsed = ::url::Url::parse(raw.trim())
        .map_err(|e| format!("`{}` is not a URL: {e}", crate::url::redact(raw)))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(format!(
            "`{}` is not an http(s) URL",
            crate::url::redact(raw)
        ));
    }
    let mut s = parsed.to_string();
    if !s.ends_with('/') {
        s.push('/');
    }
    Ok(s)
}

/// What `preserve` was asked.
pub(crate) struct Request {
    pub(crate) inputs: Vec<PathBuf>,
    pub(crate) walk: crate::input::WalkOptions,
    pub(crate) archive: SaveOptions,
}

/// Reads the records, asks the archive, and reports; with the reason of each
/// input that could not be read, for stderr.
pub(crate) fn run(req: &Request) -> (Report, Vec<String>) {
    let collected = crate::input::collect(&req.inputs, &req.walk, crate::par::Pool::new(0));
    let mut unreadable = collected.errors.len();
    let mut problems: Vec<String> = collected
        .errors
        .iter()
        .map(|e| format!("`{}`: {}", e.path.display(), e.message))
        .collect();
    let mut records = Vec::new();
    for (file, named) in &collected.files {
        // As `audit` reads them: a file found while walking that carries no
        // record is skipped, one named on the command line must be a record.
        let input = match named {
            true => crate::input::load(file),
            false => match crate::input::load_found(file) {
                Some(input) => input,
                None => continue,
            },
        };
        match input.record {
            Some(mut r) => {
                // A figure pinning another commit of its document cites that commit.
                r.at_cited_revisions();
                records.push(r);
            }
            None => {
                unreadable += 1;
                problems.extend(input.findings.iter().map(|f| f.message.clone()));
            }
        }
    }
    if records.is_empty() && unreadable == 0 {
        // An editor pointed at the wrong directory must not hear "all archived".
        unreadable += 1;
        problems.push(format!(
            "no pin files (*.json) or record documents (*.md, *.txt) under {}",
            req.inputs
                .iter()
                .map(|p| format!("`{}`", p.display()))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    let plan = Plan::of(&records);
    let swhids: Vec<String> = plan
        .commits
        .iter()
        .filter_map(|(_, c, _)| CoreSwhid::revision(c).map(|s| s.to_string()))
        .collect();
    let answers = swh_save::preserve(&plan.origins, &swhids, &req.archive);
    (
        Report::new(&req.archive.api, plan, &answers, unreadable),
        problems,
    )
}
