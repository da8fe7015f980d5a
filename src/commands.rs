//! One function per subcommand: runs it, prints, returns the exit status.
//! stdout carries only the report (or what the command prints); everything else
//! goes to stderr.

use std::io::{IsTerminal, Write};
use std::path::Path;

use crate::audit::{self, Options};
use crate::cli::{AuditArgs, ExplainArgs, FetchArgs, ImportArgs, ShowArgs};
use crate::exit::ExitStatus;
use crate::finding::Code;
use crate::report::{self, Format};
use crate::{explain, input, record};

/// Prints an error the way every pinaudit message looks: `error: …` then `hint: …`.
pub fn error(message: &str, hint: Option<&str>) {
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "error: {message}");
    if let Some(h) = hint {
        let _ = writeln!(err, "  hint: {h}");
    }
}

/// Writes to stderr, ignoring a closed pipe (`print!` would panic on one).
fn note(text: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{text}");
}

/// Writes to stdout, ignoring a closed pipe (`pinaudit … | head` must not panic).
fn out(text: &str) {
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
}

fn color_stdout() -> bool {
    std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()) && std::io::stdout().is_terminal()
}

/// Parses `--rewrite` rules; a bad one is reported without its credentials.
fn rewrites(f: &FetchArgs) -> Result<Vec<crate::fetch::Rewrite>, ExitStatus> {
    f.rewrite
        .iter()
        .map(|r| {
            r.parse().map_err(|e: crate::fetch::RewriteError| {
                error(
                    &format!("invalid `--rewrite` rule: {e}"),
                    Some("write it as FROM=TO, e.g. https://github.com/=https://mirror.example/"),
                );
                ExitStatus::Incomplete
            })
        })
        .collect()
}

pub fn audit(args: AuditArgs) -> ExitStatus {
    let rewrites = match rewrites(&args.fetch) {
        Ok(r) => r,
        Err(code) => return code,
    };
    let opts = Options {
        offline: args.fetch.offline,
        rewrites,
        no_upstream: args.no_upstream,
        jobs: args.jobs.map_or_else(audit::default_jobs, usize::from),
        allow_local: args.fetch.allow_local,
        timeout: std::time::Duration::from_secs(args.fetch.timeout),
        progress: !args.quiet,
        deadline: std::time::Duration::from_secs(args.fetch.deadline),
        max_fetch_bytes: args.fetch.max_fetch_mib << 20,
        max_ref_bytes: args.fetch.max_refs_mib << 20,
        ..Options::new(&args.fetch.cache)
    };
    let result = audit::run(&args.paths, &opts);
    for e in &result.walk_errors {
        error(&e.message, None);
    }
    for f in &result.remote_failures {
        let described = crate::fetch::describe(&f.error, &f.remote);
        match f.error.hint() {
            Some(h) => note(&format!("warning: {described}\n  hint: {h}")),
            None => note(&format!("warning: {described}")),
        }
    }
    for f in &result.stale_remotes {
        note(&format!(
            "warning: {}; judged what the cache holds instead (reachability and upstream as of the last sync)\n  hint: to audit without the forge, point --rewrite at a mirror, or use --offline",
            crate::fetch::describe(&f.error, &f.remote)
        ));
    }
    let code = audit::exit_status(&result, args.fail_on);
    let to_terminal = args.output.is_none() && color_stdout();
    let report = report::Report::from(&result);
    let text = report::render(
        &report,
        args.format,
        &report::RenderOptions {
            color: to_terminal && args.format == Format::Text,
        },
    );
    match &args.output {
        Some(path) => {
            if let Err(e) = write_file(path, &text) {
                error(
                    &format!("cannot write the report to `{}`: {e}", path.display()),
                    None,
                );
                return ExitStatus::Incomplete;
            }
        }
        None => {
            out(&text);
        }
    }
    code
}

/// Writes `text` to `path` whole or not at all: into a temporary file beside it,
/// flushed to disk, then renamed over it. A full disk or a crash leaves the old
/// file (or none), never a truncated one (issue "Reliability and security").
fn write_file(path: &Path, text: &str) -> std::io::Result<()> {
    let dir = match path.parent().filter(|d| !d.as_os_str().is_empty()) {
        Some(dir) => {
            std::fs::create_dir_all(dir)?;
            dir
        }
        None => Path::new("."),
    };
    let mut tmp = tempfile::Builder::new()
        .prefix(".pinaudit-")
        .suffix(".tmp")
        .tempfile_in(dir)?;
    tmp.write_all(text.as_bytes())?;
    // A temporary file is private (0600); a report or pin file is not.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(path).map_or(0o644, |m| m.permissions().mode() & 0o7777);
        tmp.as_file()
            .set_permissions(std::fs::Permissions::from_mode(mode))?;
    }
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Whether `name` (a pin file's stem) is one pinaudit keeps for itself: the
/// published JSON Schema is `schema.json`, and `*.schema.json` files beside
/// pin files are schemas too.
fn is_reserved(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower == "schema" || lower.ends_with(".schema")
}

pub fn import(args: ImportArgs) -> ExitStatus {
    let mut status = ExitStatus::Clean;
    let mut written: std::collections::HashMap<String, std::path::PathBuf> = Default::default();
    for file in &args.records {
        let loaded = input::load(file);
        for f in &loaded.findings {
            note(&format!("{}: {}", f.severity, f.message));
        }
        let Some(rec) = loaded.record else {
            status = ExitStatus::Incomplete;
            continue;
        };
        if rec.sources.is_empty() && rec.claims.is_empty() {
            error(
                &format!(
                    "`{}` holds no sources and no figures; nothing written",
                    file.display()
                ),
                Some("a record document carries its figures in ```json blocks"),
            );
            status = ExitStatus::Incomplete;
            continue;
        }
        let mut name = sanitize(&rec.id);
        if is_reserved(&name) {
            let renamed = format!("{name}-record");
            note(&format!(
                "note: record id `{}` would be written as `{name}.json`, a name kept for the pin-file schema; writing `{renamed}.json` instead",
                rec.id
            ));
            name = renamed;
        }
        if let Some(first) = written.get(&name) {
            error(
                &format!(
                    "`{}` has record id `{}`, like `{}`; not overwriting its pin file",
                    file.display(),
                    rec.id,
                    first.display()
                ),
                Some("give each record a distinct id (`parent_record_id`)"),
            );
            status = ExitStatus::Incomplete;
            continue;
        }
        written.insert(name.clone(), file.clone());
        let out = args.out.join(format!("{name}.json"));
        let verb = if out.exists() { "updated" } else { "wrote" };
        match write_file(&out, &record::pinfile::to_string(&rec)) {
            Ok(()) => note(&format!(
                "{verb} `{}`: {} source(s), {} claim(s), {} artifact(s)",
                out.display(),
                rec.sources.len(),
                rec.claims.len(),
                rec.artifacts.len()
            )),
            Err(e) => {
                error(&format!("cannot write `{}`: {e}", out.display()), None);
                status = ExitStatus::Incomplete;
            }
        }
    }
    status
}

/// A record id as a file name: no separators, no leading dots.
fn sanitize(id: &str) -> String {
    let s: String = id
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '-'
            }
        })
        .collect();
    let s = s.trim_start_matches('.').to_string();
    if s.is_empty() {
        "record".into()
    } else {
        s
    }
}

pub fn explain(args: ExplainArgs) -> ExitStatus {
    match args.code.parse::<Code>() {
        Ok(code) => {
            out(&explain::render(code));
            ExitStatus::Clean
        }
        Err(()) => {
            let known: Vec<&str> = Code::ALL.iter().map(|c| c.as_str()).collect();
            error(
                &format!("unknown finding code `{}`", args.code),
                Some(&format!("known codes: {}", known.join(", "))),
            );
            ExitStatus::Incomplete
        }
    }
}

/// The sync settings `show` shares with `audit`.
fn sync_plan(
    f: &FetchArgs,
    rewrites: Vec<crate::fetch::Rewrite>,
    progress: bool,
) -> crate::sources::SyncPlan {
    let timeout = std::time::Duration::from_secs(f.timeout);
    crate::sources::SyncPlan {
        rewrites,
        sync: crate::fetch::SyncOptions {
            offline: f.offline,
            connect_timeout: timeout.min(std::time::Duration::from_secs(30)),
            timeout,
            deadline: std::time::Duration::from_secs(f.deadline),
            max_fetch_bytes: f.max_fetch_mib << 20,
            max_ref_bytes: f.max_refs_mib << 20,
            ..crate::fetch::SyncOptions::default()
        },
        jobs: 1,
        allow_local: f.allow_local,
        progress,
    }
}

pub fn show(args: ShowArgs) -> ExitStatus {
    let rewrites = match rewrites(&args.fetch) {
        Ok(r) => r,
        Err(code) => return code,
    };
    let run = || -> Result<(String, bool), crate::show::ShowError> {
        let resolved = crate::show::resolve(&args.target, args.fetch.allow_local)?;
        let cache = crate::fetch::GitCache::new(&args.fetch.cache);
        let repo = crate::show::open(
            &cache,
            &resolved,
            &sync_plan(&args.fetch, rewrites.clone(), true),
        )?;
        let (mut out, shown) = crate::show::render(&repo, &resolved, args.context)?;
        if args.history {
            out.push_str(&crate::show::history(&repo, &resolved)?);
        }
        Ok((out, shown))
    };
    match run() {
        Ok((text, shown)) => {
            out(&text);
            if shown {
                ExitStatus::Clean
            } else {
                // The cited line is past the end of the document: nothing was shown.
                ExitStatus::Incomplete
            }
        }
        Err(e) => {
            error(&e.to_string(), e.hint().as_deref());
            ExitStatus::Incomplete
        }
    }
}
