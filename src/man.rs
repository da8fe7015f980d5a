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
    let mut buf = Vec::new();
    match clap_mangen::Man::new(page.clone()).render(&mut buf) {
        Ok(()) => {
            out(&String::from_utf8_lossy(&buf));
            ExitStatus::Clean
        }
        Err(e) => {
            error(&format!("cannot render the man page: {e}"), None);
            ExitStatus::Incomplete
        }
    }
}

/// Writes `pinaudit.1` and a page per subcommand into `dir` (created when missing).
fn write_all(dir: &Path) -> ExitStatus {
    if let Err(e) = std::fs::create_dir_all(dir) {
        error(&format!("cannot create `{}`: {e}", dir.display()), None);
        return ExitStatus::Incomplete;
    }
    match clap_mangen::generate_to(crate::cli::Cli::command().propagate_version(true), dir) {
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
