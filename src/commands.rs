//! One function per subcommand: runs it, prints, returns the exit status.
//! stdout carries only the report (or what the command prints); everything else
//! goes to stderr.

use std::io::Write;
use std::path::Path;

use crate::audit::{self, Options};
use crate::cli::{
    AuditArgs, CompletionsArgs, ConfigArgs, ConfigChoice, DiffArgs, ExplainArgs, ImportArgs,
    MergeArgs, PinArgs, PreserveArgs, ShowArgs, VerifyStatementArgs,
};
use crate::config::{effective, Config, Effective, FetchSettings};
use crate::exit::ExitStatus;
use crate::finding::Code;
use crate::report::escape::terminal_lines;
use crate::report::{self, Format};
use crate::result::AuditResult;
use crate::sources::SyncPlan;
use crate::{explain, input, record};

/// Prints an error the way every pinaudit message looks: `error: …` then `hint: …`.
/// Messages quote records, paths and servers' words: controls, bidi, zero-width
/// and tag characters in them are shown as `\u{…}`, line breaks kept.
pub(crate) fn error(message: &str, hint: Option<&str>) {
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "error: {}", terminal_lines(message));
    if let Some(h) = hint {
        let _ = writeln!(err, "  hint: {}", terminal_lines(h));
    }
}

/// Writes to stderr, ignoring a closed pipe (`print!` would panic on one), and
/// escaped as [`error`] is.
fn note(text: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{}", terminal_lines(text));
}

/// Writes to stdout, ignoring a closed pipe (`pinaudit … | head` must not panic).
pub(crate) fn out(text: &str) {
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
}

/// Parses `--rewrite` rules; a bad one is reported without its credentials.
fn rewrites(f: &FetchSettings) -> Result<Vec<crate::fetch::Rewrite>, ExitStatus> {
    f.rewrite
        .value
        .iter()
        .map(|r| {
            r.parse().map_err(|e: crate::fetch::RewriteError| {
                error(
                    &format!("invalid `--rewrite` rule: {e}"),
                    Some("write it as FROM=TO, e.g. https://github.com/=https://mirror.example/"),
                );
                ExitStatus::Usage
            })
        })
        .collect()
}

/// Reads the configuration file a command should use; an unusable one is a setup
/// error (exit 3).
fn load_config(choice: &ConfigChoice) -> Result<Config, ExitStatus> {
    Config::load(choice).map_err(|e| {
        error(&format!("invalid configuration: {e}"), e.hint.as_deref());
        ExitStatus::Usage
    })
}

/// The fetch settings of a command that reads sources: its flags over the
/// configuration file, and the `--rewrite` rules parsed.
fn fetch_settings(
    fetch: &crate::cli::FetchArgs,
    choice: &ConfigChoice,
) -> Result<(FetchSettings, Vec<crate::fetch::Rewrite>), ExitStatus> {
    let config = load_config(choice)?;
    let settings = FetchSettings::merge(fetch, &config);
    let rules = rewrites(&settings)?;
    Ok((settings, rules))
}

pub fn config(_args: ConfigArgs, choice: &ConfigChoice) -> ExitStatus {
    let config = match load_config(choice) {
        Ok(c) => c,
        Err(code) => return code,
    };
    // The settings `audit` would use with no flags (the environment still counts).
    let parsed = <crate::cli::Cli as clap::CommandFactory>::command()
        .try_get_matches_from(["pinaudit", "audit"])
        .and_then(|m| <crate::cli::Cli as clap::FromArgMatches>::from_arg_matches(&m));
    let Ok(crate::cli::Cli {
        command: crate::cli::Command::Audit(audit_args),
        ..
    }) = parsed
    else {
        return ExitStatus::Usage;
    };
    out(&effective(&audit_args, &config).render());
    ExitStatus::Clean
}

pub fn audit(args: AuditArgs, choice: &ConfigChoice) -> ExitStatus {
    let config = match load_config(choice) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let eff = effective(&args, &config);
    let mut opts = match audit_options(&args, &eff) {
        Ok(opts) => opts,
        Err(code) => return code,
    };
    opts.policy.show_flags = show_flags(&eff.fetch, choice, args.max_document_size);
    // A missing input is a setup error (exit 3), but the others are still
    // audited and reported; an unusable cache stops the audit before it starts.
    let missing_input = !inputs_exist(&eff);
    if let Err(code) = cache_ready(&opts) {
        return code;
    }
    if args.fix {
        fix(&args, &eff, &opts);
    }
    let code = match args.format.streamed() {
        Some(format) => audit_streamed(&args, &eff, &opts, format),
        None => {
            let outcome = audit::run(&eff.inputs.value, &opts);
            warn_about_run(&outcome, &opts.cache);
            let code = audit::exit_status(&outcome, eff.fail_on.value);
            write_report(
                &args,
                outcome.result,
                code,
                render_options(&args, eff.fail_on.value),
                &opts,
            )
        }
    };
    if missing_input {
        ExitStatus::Usage
    } else {
        code
    }
}

/// Whether every input named exists; for one that does not, says so with what to
/// do (a setup error: exit 3, "fix your setup", never 2, "retry later").
fn inputs_exist(eff: &crate::config::Effective) -> bool {
    let mut all = true;
    for p in &eff.inputs.value {
        if p.as_os_str() == "-" || p.exists() {
            continue;
        }
        all = false;
        let hint = match &eff.inputs.origin {
            crate::config::Origin::Default => {
                "name the pin files or record documents to audit (`pinaudit audit FILE...`), \
                 or put them in `pins/`"
                    .to_string()
            }
            crate::config::Origin::File(f) => format!(
                "check `inputs` in `{}` (its paths are relative to that file)",
                f.display()
            ),
            crate::config::Origin::Flag => "check the path".to_string(),
        };
        error(&format!("`{}` does not exist", p.display()), Some(&hint));
    }
    all
}

/// Whether the cache directory can be used: a directory of this user's that no
/// one else may write, writable unless `--offline`. Else a setup error (exit 3).
fn cache_ready(opts: &Options) -> Result<(), ExitStatus> {
    let read_only = opts.plan.sync.offline;
    crate::fetch::git::check_cache_root(&opts.cache, read_only).map_err(|e| {
        let hint = e.hint().unwrap_or_else(|| {
            format!(
                "make `{}` a writable directory of this user, or pass another --cache",
                opts.cache.display()
            )
        });
        error(&format!("the cache cannot be used: {e}"), Some(&hint));
        ExitStatus::Usage
    })
}

/// After a report that hid findings (`--min-severity`), how many it hid.
fn hidden_note(w: &mut dyn Write, hidden: usize, args: &AuditArgs) -> std::io::Result<()> {
    if hidden > 0 {
        let min = args.min_severity.map_or("", |m| m.severity().as_str());
        writeln!(
            w,
            "{hidden} finding(s) below {min} not shown (--min-severity; the counts above include them)"
        )?;
    }
    Ok(())
}

/// How the report is rendered, from the audit's flags.
fn render_options(args: &AuditArgs, fail_on: crate::audit::FailOn) -> report::RenderOptions<'_> {
    let to_terminal = args.output.is_none() && args.color.stdout();
    report::RenderOptions {
        color: to_terminal && args.format == Format::Text,
        shard: args.shard,
        fail_on: Some(match fail_on {
            crate::audit::FailOn::Error => "error",
            crate::audit::FailOn::Warning => "warning",
            crate::audit::FailOn::Note => "note",
            crate::audit::FailOn::Never => "never",
        }),
        baseline: args.baseline.as_deref(),
        verbose: args.verbose,
    }
}

/// Audits and writes the report as the records are checked: each record's
/// part rendered on the worker that checked it, written in record order (what
/// a format says first but only the end knows is spooled in the cache until
/// then), so memory holds the records being checked, not the report.
fn audit_streamed(
    args: &AuditArgs,
    eff: &Effective,
    opts: &Options,
    format: &'static dyn report::Streamed,
) -> ExitStatus {
    let style = report::Style {
        format,
        opts: render_options(args, eff.fail_on.value),
        // `--min-severity` hides findings from what a person reads (the
        // counts and the exit status still include them).
        hide_below: match args.min_severity {
            Some(min) if matches!(args.format, Format::Text | Format::Github) => {
                Some(min.severity())
            }
            _ => None,
        },
    };
    let cache = &eff.fetch.cache.value;
    let inputs = &eff.inputs.value;
    let outcome = std::cell::RefCell::new(None);
    // A part kept in the whole-record memo that did not decompress.
    let broken = std::cell::Cell::new(false);
    let fill = |w: &mut dyn Write| -> std::io::Result<()> {
        let mut spooled = report::Spooled::new(style, w, Some(cache));
        let keep: &dyn audit::Keep<report::Fragment> = &KeptWhole(style);
        let done =
            audit::run_streamed(inputs, opts, Some(keep), &|r| style.fragment(r), &mut |f| {
                spooled.push(f)
            });
        spooled.orphans(&done.result.orphan_findings);
        let generated_at = done.result.generated_at.clone();
        let written = spooled.finish(generated_at, done.complete(), done.result.baseline_left);
        broken.set(broken.get() || written.as_ref().is_err_and(report::KeptPartBroken::is));
        *outcome.borrow_mut() = Some(done);
        let hidden = written?;
        hidden_note(w, hidden, args)?;
        w.flush()
    };
    let failed = !deliver(args.output.as_deref(), fill);
    // The output could not even be opened: the audit still runs (the cache is
    // brought up to date, the warnings said).
    if outcome.borrow().is_none() {
        let _ = fill(&mut std::io::sink());
    }
    if broken.get() {
        // Never an input's doing (the store is authenticated): the report is
        // cut short, and the store goes, so that the next run is whole.
        let dropped = match crate::fetch::store::discard_fragments(cache) {
            Ok(()) => {
                "it was removed: run the audit again to check every record afresh".to_string()
            }
            Err(e) => format!("removing it failed ({e}): remove `fragments.store` from the cache"),
        };
        error(
            &format!(
                "the report is incomplete: a record's part of it kept in `{}` does not decompress",
                cache.join("fragments.store").display()
            ),
            Some(&dropped),
        );
    }
    let Some(outcome) = outcome.into_inner() else {
        return ExitStatus::Incomplete;
    };
    warn_about_run(&outcome, cache);
    let code = audit::exit_status(&outcome, eff.fail_on.value);
    // The process ends right after this: freeing what is left piece by piece
    // is work nobody waits for.
    std::mem::forget(outcome);
    match failed {
        true => ExitStatus::Incomplete,
        false => code,
    }
}

/// A streamed report's record fragments, kept whole by the audit's
/// whole-record memo.
struct KeptWhole<'a>(report::Style<'a>);

impl audit::Keep<report::Fragment> for KeptWhole<'_> {
    fn depends(&self) -> Vec<u8> {
        self.0.depends()
    }

    fn encode(&self, f: &report::Fragment, e: &mut pinaudit_core::memo::Enc) -> Option<()> {
        f.encode(e);
        Some(())
    }

    fn decode(
        &self,
        d: &mut pinaudit_core::memo::Dec,
        entry: &bytes::Bytes,
    ) -> Option<report::Fragment> {
        report::Fragment::decode(d, self.0.format.sections(), entry)
    }
}

/// The audit's options from its merged settings; the exit status when a
/// setting is unusable.
fn audit_options(args: &AuditArgs, eff: &Effective) -> Result<Options, ExitStatus> {
    let fetch = &eff.fetch;
    let rewrites = rewrites(fetch)?;
    if let Err(message) = input::check_globs(&eff.exclude.value) {
        error(
            &message,
            Some("globs use gitignore syntax, e.g. `drafts/**`"),
        );
        return Err(ExitStatus::Usage);
    }
    let baseline = match &args.baseline {
        Some(path) => match crate::diff::ReportFile::read(path) {
            Ok(report) => Some(crate::diff::Baseline::new(&report)),
            Err(e) => {
                error(&format!("`--baseline`: {e}"), Some(e.hint()));
                return Err(ExitStatus::Usage);
            }
        },
        None => None,
    };
    let only = match &args.changed_since {
        Some(rev) => match crate::changed::files_changed_since(rev, Path::new(".")) {
            Ok(files) => Some(files),
            Err(e) => {
                error(&e.to_string(), Some(e.hint()));
                return Err(ExitStatus::Usage);
            }
        },
        None => None,
    };
    let jobs = eff.jobs.value.map_or_else(audit::default_jobs, usize::from);
    let mut plan = fetch.sync_plan(rewrites, jobs, !args.quiet);
    if let Some(max) = args.max_document_size {
        plan.sync.max_object_bytes = max;
    }
    Ok(Options {
        cache: fetch.cache.value.clone(),
        plan,
        no_upstream: args.no_upstream,
        manifests: args.manifests,
        max_document_size: args
            .max_document_size
            .unwrap_or(crate::provider::git::DEFAULT_MAX_SIZE),
        max_web_document_size: args
            .max_document_size
            .unwrap_or(crate::provider::http::DEFAULT_MAX_SIZE),
        shard: args.shard,
        policy: audit::Policy {
            baseline,
            severity: eff.severity.clone(),
            ignores: eff.ignores.clone(),
            show_flags: String::new(),
        },
        walk: input::WalkOptions {
            exclude: eff.exclude.value.clone(),
            no_ignore: args.no_ignore,
            only,
        },
        software_heritage: eff.archive.value.software_heritage,
        swh_url: archive_url("--swh-url", &eff.swh_url.value)?,
        wayback: eff.archive.value.wayback,
        wayback_url: archive_url("--wayback-url", &eff.wayback_url.value)?,
        key: crate::cache_key::CacheKey::for_user(),
        swh_token: std::env::var("SWH_TOKEN")
            .ok()
            .filter(|t| !t.trim().is_empty()),
    })
}

/// The flags of this run that a printed `pinaudit show` needs to run as
/// printed: the configuration chosen, and the fetch settings given on the
/// command line (those from `pinaudit.toml` come along with it). A rewrite
/// target carrying credentials is left out, never printed.
fn show_flags(fetch: &FetchSettings, choice: &ConfigChoice, max_size: Option<u64>) -> String {
    let q = |t: &str| pinaudit_core::check::location::shell_quote(t);
    let mut flags: Vec<String> = Vec::new();
    if choice.none {
        flags.push("--no-config".into());
    } else if let Some(file) = &choice.file {
        flags.push(format!("--config {}", q(&file.display().to_string())));
    }
    if fetch.cache.origin == crate::config::Origin::Flag {
        flags.push(format!(
            "--cache {}",
            q(&fetch.cache.value.display().to_string())
        ));
    }
    if fetch.rewrite.origin == crate::config::Origin::Flag {
        for rule in &fetch.rewrite.value {
            if crate::fetch::redact(rule) == *rule {
                flags.push(format!("--rewrite {}", q(rule)));
            }
        }
    }
    // Not `--offline`: an offline re-check judges as an online one, and says
    // the same; `show` reads the cache first whenever it can.
    if fetch.allow_local {
        flags.push("--allow-local".into());
    }
    if let Some(max) = max_size {
        flags.push(format!("--max-document-size {max}"));
    }
    flags.join(" ")
}

/// `--swh-url` or `--wayback-url` as the base the provider appends endpoints
/// to: an `http(s)` URL ending in `/`.
fn archive_url(flag: &str, given: &str) -> Result<String, ExitStatus> {
    let given = given.trim();
    match url::Url::parse(given) {
        Ok(u) if matches!(u.scheme(), "http" | "https") && u.host_str().is_some() => {
            Ok(match given.ends_with('/') {
                true => given.to_string(),
                false => format!("{given}/"),
            })
        }
        _ => {
            error(
                &format!(
                    "`{flag}`: `{}` is not an http(s) URL",
                    crate::url::redact(given)
                ),
                Some(
                    "e.g. https://archive.softwareheritage.org/api/1/ or https://web.archive.org/",
                ),
            );
            Err(ExitStatus::Usage)
        }
    }
}

/// What made the run incomplete or skipped something, on stderr.
fn warn_about_run(outcome: &audit::Outcome, cache: &std::path::Path) {
    let result = &outcome.result;
    for e in &result.walk_errors {
        // A named input that does not exist was said before the audit began.
        if e.path.exists() || !e.message.ends_with("does not exist") {
            error(&e.message, None);
        }
    }
    // A few names say what is going on; hundreds would bury the warnings.
    const SHOWN: usize = 10;
    for f in result.skipped_inputs.iter().take(SHOWN) {
        note(&format!(
            "note: skipped `{}`: it carries no record (no pin file keys, no ```json record block)",
            f.display()
        ));
    }
    if result.skipped_inputs.len() > SHOWN {
        note(&format!(
            "note: skipped {} more file(s) that carry no record\n  hint: --exclude GLOB or a .ignore file keeps them out of the walk",
            result.skipped_inputs.len() - SHOWN
        ));
    }
    // `--offline` with a cold cache: the repositories it lacks and where it
    // looked, said once.
    let not_cached: Vec<String> = result
        .remote_failures
        .iter()
        .filter(|f| matches!(*f.error, crate::fetch::FetchError::NotCached { .. }))
        .map(|f| format!("`{}`", crate::url::redact(&f.remote)))
        .collect();
    if !not_cached.is_empty() {
        note(&format!(
            "warning: not in the cache `{}`: {}\n  hint: run once without --offline to fill it",
            cache.display(),
            not_cached.join(", ")
        ));
    }
    for f in &result.remote_failures {
        if matches!(*f.error, crate::fetch::FetchError::NotCached { .. }) {
            continue;
        }
        let described = crate::fetch::describe(&f.error, &f.remote);
        match f.error.hint() {
            Some(h) => note(&format!("warning: {described}\n  hint: {h}")),
            None => note(&format!("warning: {described}")),
        }
    }
    for n in &outcome.notices {
        note(&format!("warning: {n}"));
    }
    for f in &result.stale_remotes {
        note(&format!(
            "warning: {}; judged what the cache holds instead (reachability and upstream as of the last sync)\n  hint: to audit without the forge, point --rewrite at a mirror, or use --offline",
            crate::fetch::describe(&f.error, &f.remote)
        ));
    }
}

/// Writes a report held whole (the proof sheet, the in-toto statement) where it
/// was asked for; `code` unless writing it fails.
fn write_report(
    args: &AuditArgs,
    result: AuditResult,
    code: ExitStatus,
    opts: report::RenderOptions,
    audit: &Options,
) -> ExitStatus {
    // The result is not used after: its findings move into the report.
    let (report, rest) = report::Report::from_result(result, audit.pool());
    // The proof sheet shows the cited lines with context, read from the cache.
    let excerpts = (args.format == Format::Html).then(|| {
        let cache = crate::fetch::GitCache::with_key(&audit.cache, audit.key.clone());
        report::html::excerpts(&rest, &cache, args.fetch.allow_local)
    });
    // Streamed as it is rendered, never built whole first: a 100,000-record
    // report is hundreds of megabytes.
    let fill = |w: &mut dyn Write| -> std::io::Result<()> {
        match &excerpts {
            Some(excerpts) => {
                w.write_all(report::html::render_with(&report, excerpts).as_bytes())?
            }
            None => report::write(&report, args.format, &opts, w)?,
        }
        w.flush()
    };
    if !deliver(args.output.as_deref(), fill) {
        return ExitStatus::Incomplete;
    }
    // The process ends right after this: freeing every record, finding and the
    // report piece by piece took a fifth of a 20,000-citation re-check.
    std::mem::forget((report, rest));
    code
}

/// Writes the report `fill` makes to `--output` (`output`), else to stdout;
/// false when it could not be written to `output` (the error said).
fn deliver(
    output: Option<&Path>,
    fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> bool {
    match output {
        Some(path) => match write_output(path, fill) {
            Ok(()) => true,
            // Said, with what to do, by the caller.
            Err(e) if report::KeptPartBroken::is(&e) => false,
            Err(e) => {
                error(
                    &format!("cannot write the report to `{}`: {e}", path.display()),
                    None,
                );
                false
            }
        },
        None => {
            let stdout = std::io::stdout();
            let fd = std::os::fd::AsFd::as_fd(&stdout);
            let reserving = crate::reserve::Reserving::new(stdout.lock(), fd);
            let mut w = std::io::BufWriter::with_capacity(1 << 16, reserving);
            // As with `out`: a closed pipe is the reader's choice, not an
            // error; anything else (a full disk under `> report.json`) is.
            match fill(&mut w) {
                Err(e) if report::KeptPartBroken::is(&e) => false,
                Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
                    error(
                        &format!("cannot write the report to standard output: {e}"),
                        None,
                    );
                    false
                }
                _ => true,
            }
        }
    }
}

/// Writes an `--output` target. A regular file (or a path with nothing there yet)
/// is replaced whole, as [`write_file`] does; anything else that exists
/// (`/dev/stdout`, a FIFO, a character device, a socket) is written as a stream
/// and never replaced. A symbolic link is followed: the file it leads to is
/// replaced (the link stays a link) or streamed; a link that leads nowhere is
/// refused. `/dev/stdout`, `/dev/stderr`, `/dev/fd/N` and `/proc/…` always
/// stream: they name a descriptor already open, whatever it leads to.
fn write_output(
    path: &Path,
    fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let descriptor = ["/dev/stdout", "/dev/stderr", "/dev/fd/", "/proc/"]
        .iter()
        .any(|p| path.starts_with(p));
    match std::fs::metadata(path) {
        Ok(m) if descriptor || !(m.is_file() || m.is_dir()) => {
            let file = std::fs::OpenOptions::new()
                .write(true)
                .truncate(m.is_file())
                .open(path)?;
            let mut w = std::io::BufWriter::with_capacity(1 << 16, &file);
            fill(&mut w)?;
            w.flush()
        }
        Ok(m) if m.is_file() => write_file_with(&std::fs::canonicalize(path)?, fill),
        Err(e) if std::fs::symlink_metadata(path).is_ok() => Err(std::io::Error::new(
            e.kind(),
            format!("it is a symbolic link to nothing reachable ({e})"),
        )),
        // Nothing there yet, or a directory (which the rename refuses).
        _ => write_file_with(path, fill),
    }
}

/// Writes `text` to `path` whole or not at all: into a temporary file beside it,
/// flushed to disk, then renamed over it. A full disk or a crash leaves the old
/// file (or none), never a truncated one (issue "Reliability and security").
fn write_file(path: &Path, text: &str) -> std::io::Result<()> {
    write_file_with(path, |w| w.write_all(text.as_bytes()))
}

/// [`write_file`] with the content written by `fill` into a buffered writer
/// (a large JSON report is streamed into the file, never held whole).
fn write_file_with(
    path: &Path,
    fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let dir = match path.parent().filter(|d| !d.as_os_str().is_empty()) {
        Some(dir) => {
            std::fs::create_dir_all(dir)?;
            dir
        }
        None => Path::new("."),
    };
    let tmp = tempfile::Builder::new()
        .prefix(".pinaudit-")
        .suffix(".tmp")
        .tempfile_in(dir)?;
    {
        let file = tmp.as_file();
        let reserving = crate::reserve::Reserving::new(file, std::os::fd::AsFd::as_fd(file));
        let mut w = std::io::BufWriter::with_capacity(1 << 16, reserving);
        fill(&mut w)?;
        w.flush()?;
    }
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
        let text = record::pinfile::to_string(&rec);
        let existing = std::fs::read(&out).ok();
        if existing.as_deref() == Some(text.as_bytes()) {
            note(&format!("`{}` is up to date", out.display()));
            continue;
        }
        // A pin file may have been corrected by hand since it was imported: never
        // overwrite it silently.
        if existing.is_some() && !args.force {
            error(
                &format!(
                    "`{}` exists and differs from what `{}` imports to; not overwritten",
                    out.display(),
                    file.display()
                ),
                Some(
                    "compare the two, then pass --force to overwrite, or --out to write elsewhere",
                ),
            );
            status = ExitStatus::Incomplete;
            continue;
        }
        let verb = if existing.is_some() {
            "overwrote"
        } else {
            "wrote"
        };
        match write_file(&out, &text) {
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
            out(&terminal_lines(&explain::render(code)));
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

pub fn show(args: ShowArgs, choice: &ConfigChoice) -> ExitStatus {
    if args.format == crate::cli::ShowFormat::Html && !args.history {
        error(
            "`show --format html` draws the figure's history",
            Some("add `--history`"),
        );
        return ExitStatus::Usage;
    }
    let (fetch, rewrites) = match fetch_settings(&args.fetch, choice) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let run = || -> Result<(String, bool), crate::show::ShowError> {
        if let Some(shown) = crate::show::web_claim(
            &args.target,
            &fetch.cache.value,
            args.context,
            args.max_document_size,
        ) {
            if args.history {
                return Err(crate::show::ShowError::Target(
                    "a web document has no history to follow".into(),
                    Some("leave out --history".into()),
                ));
            }
            return shown;
        }
        let resolved = crate::show::resolve(&args.target, fetch.allow_local)?;
        let cache = crate::fetch::GitCache::new(&fetch.cache.value);
        let mut plan = fetch.sync_plan(rewrites.clone(), 1, true);
        plan.sync.max_object_bytes = args.max_document_size;
        let repo = crate::show::open(&cache, &resolved, &plan)?;
        let (mut out, shown) =
            crate::show::render(&repo, &resolved, args.context, args.max_document_size)?;
        if args.history {
            // Colour only on a terminal, and never under NO_COLOR.
            let color = std::io::IsTerminal::is_terminal(&std::io::stdout())
                && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
            let (text, timeline) =
                crate::show::history(&repo, &resolved, args.max_document_size, color)?;
            if args.format == crate::cli::ShowFormat::Html {
                // The page stands alone: the cited lines are in its table.
                return Ok((crate::show_html::page(&resolved, &timeline), shown));
            }
            out.push_str(&text);
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

pub fn verify_statement(args: VerifyStatementArgs, choice: &ConfigChoice) -> ExitStatus {
    let cache = match load_config(choice) {
        Ok(c) => c.pick(args.cache, &c.cache, || c.default_cache()).value,
        Err(code) => return code,
    };
    match crate::verify_statement::run(
        &args.statement,
        &args.paths,
        &cache,
        args.allow_local,
        args.max_document_size,
    ) {
        Ok((text, code)) => {
            out(&text);
            code
        }
        Err(e) => {
            error(
                &e.to_string(),
                Some("give a statement written by `pinaudit audit --format in-toto`"),
            );
            ExitStatus::Incomplete
        }
    }
}

/// `audit --fix`: pins every unpinned URL of the pin files among the inputs, in
/// place, before the audit runs. Record documents are never rewritten.
fn fix(args: &AuditArgs, eff: &Effective, opts: &Options) {
    let collected = input::collect(&eff.inputs.value, &opts.walk, opts.pool());
    let cache = crate::fetch::GitCache::with_key(&eff.fetch.cache.value, opts.key.clone());
    let plan = SyncPlan {
        jobs: 1,
        ..opts.plan.clone()
    };
    let (mut fixed, mut files, mut left) = (0, 0, 0);
    for file in collected.files.iter().map(|(f, _)| f) {
        let is_json = file
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| e.eq_ignore_ascii_case("json"));
        if !is_json {
            for c in crate::pin::unfixed_in_record_document(file) {
                left += 1;
                note(&format!("left as written: {c}"));
            }
            continue;
        }
        match crate::pin::fix_pin_file(&cache, file, &plan) {
            Ok(changes) => {
                let before = fixed;
                for c in changes {
                    match c {
                        crate::pin::Fix::Left(c) => {
                            left += 1;
                            note(&format!("left as written: {c}"));
                        }
                        crate::pin::Fix::Pinned(c) => {
                            fixed += 1;
                            note(&format!("fixed: {c}"));
                        }
                    }
                }
                files += usize::from(fixed > before);
            }
            Err(e) => error(&e.to_string(), e.hint().as_deref()),
        }
    }
    if !args.quiet {
        note(&format!(
            "--fix: {fixed} revision(s) pinned in {files} pin file(s); {left} left as written"
        ));
    }
}

pub fn pin(args: PinArgs, choice: &ConfigChoice) -> ExitStatus {
    let (fetch, rewrites) = match fetch_settings(&args.fetch, choice) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let cache = crate::fetch::GitCache::new(&fetch.cache.value);
    let req = crate::pin::Request {
        url: args.url.clone(),
        line: args.line,
        value: args.value.clone(),
        unit: args.unit.clone(),
        label: args.label.clone(),
        max_document_size: args.max_document_size,
        force: args.force,
    };
    let mut plan = fetch.sync_plan(rewrites, 1, true);
    plan.sync.max_object_bytes = req.max_document_size;
    let outcome = match crate::pin::pin(&cache, &req, &plan) {
        Ok(o) => o,
        Err(e) => {
            error(&e.to_string(), e.hint().as_deref());
            return ExitStatus::Incomplete;
        }
    };
    for n in &outcome.notes {
        note(n);
    }
    match &args.into {
        Some(file) => {
            let id = match crate::pin::add_to(file, &outcome) {
                Ok(id) => id,
                Err(e) => {
                    error(&e.to_string(), e.hint().as_deref());
                    return ExitStatus::Incomplete;
                }
            };
            note(&format!("added `{id}` to `{}`", file.display()));
        }
        None => {
            let mut fragment = serde_json::Map::new();
            fragment.insert("sources".into(), serde_json::json!([outcome.source]));
            if let Some(c) = &outcome.claim {
                fragment.insert("claims".into(), serde_json::json!([c]));
            }
            let mut text = serde_json::to_string_pretty(&fragment).unwrap_or_default();
            text.push('\n');
            out(&text);
        }
    }
    if outcome.value_found {
        ExitStatus::Clean
    } else {
        ExitStatus::Findings
    }
}

pub fn preserve(args: PreserveArgs, choice: &ConfigChoice) -> ExitStatus {
    let config = match load_config(choice) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let given = |v: &[std::path::PathBuf]| (!v.is_empty()).then(|| v.to_vec());
    let api = config.pick(args.swh_url.clone(), &config.swh_url, || {
        crate::fetch::swh_save::DEFAULT_API.to_string()
    });
    let api = match crate::preserve::api_url(&api.value) {
        Ok(a) => a,
        Err(e) => {
            error(
                &format!("invalid `--swh-url`: {e}"),
                Some("give the API's base URL, e.g. https://archive.softwareheritage.org/api/1/"),
            );
            return ExitStatus::Usage;
        }
    };
    let secs = |flag: Option<u64>, file: &Option<u64>, default: u64| {
        std::time::Duration::from_secs(config.pick(flag, file, || default).value)
    };
    let req = crate::preserve::Request {
        inputs: config
            .pick(given(&args.paths), &config.inputs, || vec!["pins".into()])
            .value,
        walk: input::WalkOptions {
            exclude: config
                .pick(
                    (!args.exclude.is_empty()).then(|| args.exclude.clone()),
                    &config.exclude,
                    Vec::new,
                )
                .value,
            no_ignore: args.no_ignore,
            only: None,
        },
        archive: crate::fetch::swh_save::SaveOptions {
            api,
            token: std::env::var("SWH_TOKEN")
                .ok()
                .filter(|t| !t.trim().is_empty()),
            timeout: secs(
                args.timeout,
                &config.timeout,
                crate::config::DEFAULT_TIMEOUT,
            ),
            deadline: secs(
                args.deadline,
                &config.deadline,
                crate::fetch::DEFAULT_DEADLINE.as_secs(),
            ),
            allow_local: args.allow_local,
            network: crate::net::Network::new(args.resolve.clone()),
        },
    };
    let (report, problems) = crate::preserve::run(&req);
    for p in &problems {
        error(p, None);
    }
    match args.format {
        crate::cli::PreserveFormat::Text => out(&report.text()),
        crate::cli::PreserveFormat::Json => {
            let mut text = serde_json::to_string_pretty(&report).unwrap_or_default();
            text.push('\n');
            out(&text);
        }
    }
    report.exit_status()
}

pub fn merge(args: MergeArgs, choice: &ConfigChoice) -> ExitStatus {
    let fail_on = match load_config(choice) {
        Ok(c) => c.fail_on(args.fail_on),
        Err(code) => return code,
    };
    let merged = match crate::merge::merge_files(&args.reports) {
        Ok(m) => m,
        Err(e) => {
            error(&e.to_string(), Some(e.hint()));
            return ExitStatus::Incomplete;
        }
    };
    let mut text = serde_json::to_string_pretty(&merged).unwrap_or_default();
    text.push('\n');
    if !deliver(args.output.as_deref(), |w| w.write_all(text.as_bytes())) {
        return ExitStatus::Incomplete;
    }
    crate::merge::exit_status(&merged, fail_on)
}

pub fn completions(args: CompletionsArgs) -> ExitStatus {
    use clap::CommandFactory;
    let mut buf = Vec::new();
    clap_complete::generate(
        args.shell,
        &mut crate::cli::Cli::command(),
        "pinaudit",
        &mut buf,
    );
    out(&String::from_utf8_lossy(&buf));
    ExitStatus::Clean
}

pub fn diff(args: DiffArgs, choice: &ConfigChoice) -> ExitStatus {
    let fail_on = match load_config(choice) {
        Ok(c) => c.fail_on(args.fail_on),
        Err(code) => return code,
    };
    let read = |path: &Path| {
        crate::diff::ReportFile::read(path).map_err(|e| {
            error(&e.to_string(), Some(e.hint()));
            ExitStatus::Incomplete
        })
    };
    let (old, new) = match (read(&args.old), read(&args.new)) {
        (Ok(o), Ok(n)) => (o, n),
        (Err(code), _) | (_, Err(code)) => return code,
    };
    let d = crate::diff::diff(&old, &new);
    out(&crate::diff::render(
        &d,
        args.format,
        args.color.stdout() && args.format == crate::diff::DiffFormat::Text,
    ));
    let failed = match (fail_on.threshold(), d.worst_new()) {
        (Some(t), Some(w)) => w >= t,
        _ => false,
    };
    if failed {
        ExitStatus::Findings
    } else {
        ExitStatus::Clean
    }
}

/// `pinaudit cache gc`: deletes the quarantined mirror copies, saying which.
pub fn cache_gc(args: crate::cli::CacheGcArgs, choice: &ConfigChoice) -> ExitStatus {
    let dir = match load_config(choice) {
        Ok(c) => c.pick(args.cache, &c.cache, || c.default_cache()).value,
        Err(code) => return code,
    };
    let cache = crate::fetch::GitCache::new(&dir);
    match cache.gc(args.force) {
        Ok(outcome) => {
            let mut out = std::io::stdout().lock();
            let shown = |p: &std::path::Path| {
                crate::report::escape::terminal(&p.display().to_string()).to_string()
            };
            for p in &outcome.deleted {
                let _ = writeln!(out, "deleted `{}`", shown(p));
            }
            for (p, commits) in &outcome.kept {
                let ids: Vec<String> = commits.iter().map(|c| c.to_string()).collect();
                let _ = writeln!(
                    out,
                    "kept `{}`: the only copy of {} commit(s) records cited: {}",
                    shown(p),
                    commits.len(),
                    ids.join(", ")
                );
            }
            let _ = writeln!(
                out,
                "quarantined mirror copies deleted: {}, kept: {}",
                outcome.deleted.len(),
                outcome.kept.len()
            );
            if outcome.kept.is_empty() {
                ExitStatus::Clean
            } else {
                note(
                    "warning: a quarantined copy holds the last copy of a commit a record cited; it was kept\n  hint: pass --force to delete it anyway",
                );
                ExitStatus::Findings
            }
        }
        Err(e) => {
            error(&e.to_string(), None);
            ExitStatus::Incomplete
        }
    }
}
