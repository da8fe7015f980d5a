//! `pinaudit man`: manual pages in roff, one for the tool and one per subcommand
//! (`pinaudit-audit(1)`, `pinaudit-cache-gc(1)`, …), rendered by `clap_mangen` from
//! the same definitions `--help` prints, so the pages never drift from the flags.

use std::path::Path;

use clap::CommandFactory;

use crate::cli::ManArgs;
use crate::commands::{error, out};
use crate::exit::ExitStatus;

pub fn run(args: ManArgs) -> ExitStatus {
    if let Some(dir) = &args.dir {
        return write_all(dir);
    }
    let mut command = crate::cli::Cli::command()
        .disable_help_subcommand(true)
        .propagate_version(true);
    command.build();
    let mut page = &command;
    for name in &args.subcommand {
        match page.find_subcommand(name) {
            Some(sub) => page = sub,
            None => {
                let known: Vec<&str> = page.get_subcommands().map(|s| s.get_name()).collect();
                error(
                    &format!("no subcommand `{name}` to print a page for"),
                    Some(&format!("one of: {}", known.join(", "))),
                );
                return ExitStatus::Usage;
            }
        }
    }
    match render(page) {
        Ok(buf) => {
            out(&String::from_utf8_lossy(&buf));
            ExitStatus::Clean
        }
        Err(e) => {
            error(&format!("cannot render the man page: {e}"), None);
            ExitStatus::Incomplete
        }
    }
}

/// What every page says of the exit status when its command's help says
/// nothing of its own.
const EXIT_STATUS: &str =
    "0 nothing at or above --fail-on, every source judged; 1 a finding at or \
above --fail-on; 2 something could not be checked (a transient failure: retry later); 3 usage or \
configuration error (a bad flag or configuration file, an input that does not exist, a cache \
directory that cannot be used); 130 interrupted (Ctrl-C).";

/// The environment pinaudit reads, for every page.
const ENVIRONMENT: [(&str, &str); 10] = [
    ("PINAUDIT_CACHE", "the cache directory, as --cache"),
    (
        "PINAUDIT_CACHE_KEY",
        "the secret that authenticates what the cache remembers (else a key file in the user's state directory)",
    ),
    ("PINAUDIT_ARCHIVE", "the archives asked for lost sources, as --archive"),
    (
        "GITHUB_TOKEN",
        "a token sent to https://github.com only (private repositories, rate limits)",
    ),
    ("SWH_TOKEN", "a bearer token sent to the --swh-url host only"),
    ("NO_COLOR", "when set and not empty, no colour"),
    (
        "SOURCE_DATE_EPOCH",
        "the time written into reports, for reproducible output",
    ),
    (
        "XDG_CACHE_HOME",
        "the default cache is pinaudit/ under it (else ~/.cache/pinaudit)",
    ),
    (
        "XDG_STATE_HOME",
        "where the cache key file is kept (else ~/.local/state/pinaudit)",
    ),
    (
        "HOME",
        "the defaults above, and the user's git configuration (~/.gitconfig)",
    ),
];

/// The manual page of `cmd` in roff: clap's sections, the help's closing
/// text as NOTES without its exit status, which gets an EXIT STATUS section of
/// its own (the command's, else pinaudit's), and ENVIRONMENT.
fn render(cmd: &clap::Command) -> std::io::Result<Vec<u8>> {
    use clap_mangen::roff::{roman, Roff};
    let man = clap_mangen::Man::new(cmd.clone());
    let mut buf = Vec::new();
    man.render_title(&mut buf)?;
    man.render_name_section(&mut buf)?;
    man.render_synopsis_section(&mut buf)?;
    man.render_description_section(&mut buf)?;
    if cmd.get_arguments().any(|a| !a.is_hide_set()) {
        man.render_options_section(&mut buf)?;
    }
    if cmd.get_subcommands().any(|s| !s.is_hide_set()) {
        man.render_subcommands_section(&mut buf)?;
    }
    let after = cmd
        .get_after_long_help()
        .or(cmd.get_after_help())
        .map(|h| h.to_string())
        .unwrap_or_default();
    let (notes, exit) = match after.find("Exit status:") {
        Some(at) => {
            let rest = &after[at + "Exit status:".len()..];
            // The exit status runs to the end of its paragraph.
            let (exit, more) = rest.split_once('\n').unwrap_or((rest, ""));
            let notes = format!("{}{}", &after[..at], more);
            (notes, exit.trim().to_string())
        }
        None => (after.clone(), EXIT_STATUS.to_string()),
    };
    let mut roff = Roff::default();
    if !notes.trim().is_empty() {
        roff.control("SH", ["NOTES"]);
        for line in notes.lines().filter(|l| !l.trim().is_empty()) {
            roff.text([roman(line.trim())]);
            roff.control("PP", [] as [&str; 0]);
        }
    }
    roff.control("SH", ["EXIT STATUS"]);
    roff.text([roman(exit)]);
    roff.control("SH", ["ENVIRONMENT"]);
    for (name, what) in ENVIRONMENT {
        roff.control("TP", [] as [&str; 0]);
        roff.text([clap_mangen::roff::bold(name)]);
        roff.text([roman(what)]);
    }
    roff.to_writer(&mut buf)?;
    if cmd.get_version().is_some() {
        man.render_version_section(&mut buf)?;
    }
    Ok(buf)
}

/// Writes `pinaudit.1` and a page per subcommand into `dir` (created when missing).
fn write_all(dir: &Path) -> ExitStatus {
    if let Err(e) = std::fs::create_dir_all(dir) {
        error(&format!("cannot create `{}`: {e}", dir.display()), None);
        return ExitStatus::Incomplete;
    }
    let mut command = crate::cli::Cli::command()
        .disable_help_subcommand(true)
        .propagate_version(true);
    command.build();
    let written = write_pages(&command, "pinaudit", dir);
    match written {
        Ok(()) => {
            eprintln!("wrote the man pages into `{}`", dir.display());
            ExitStatus::Clean
        }
        Err(e) => {
            error(
                &format!("cannot write the man pages into `{}`: {e}", dir.display()),
                None,
            );
            ExitStatus::Incomplete
        }
    }
}

/// Writes `NAME.1` for `cmd` and a page per subcommand (`NAME-SUB.1`) into `dir`.
fn write_pages(cmd: &clap::Command, name: &str, dir: &Path) -> std::io::Result<()> {
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        write_pages(sub, &format!("{name}-{}", sub.get_name()), dir)?;
    }
    std::fs::write(dir.join(format!("{name}.1")), render(cmd)?)
}
