//! The `pinaudit` binary: parse the command line, run, map to an exit status.

use std::io::Write;
use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches};

use pinaudit::cli::{Cli, Command, Invocation};
use pinaudit::commands;
use pinaudit::exit::ExitStatus;

/// mimalloc: an audit allocates many small values on several worker threads,
/// where glibc's per-thread arenas grew and shrank with page faults (a sixth
/// of a re-check of 20,000 citations).
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let parsed = Cli::command()
        .try_get_matches()
        .and_then(|m| Cli::from_arg_matches(&m).map(|cli| (cli, m)));
    let cli = match parsed {
        Ok((mut cli, m)) => {
            // Which flags were given, so that they win over pinaudit.toml.
            if let Some((_, sub)) = m.subcommand() {
                let inv = Invocation::from_matches(&cli, sub);
                match &mut cli.command {
                    Command::Audit(a) => a.invocation = inv,
                    Command::Config(c) => c.invocation = inv,
                    _ => {}
                }
            }
            cli
        }
        Err(e) => {
            // `--help` and `--version` are answers, not errors; a usage error exits 3,
            // apart from 2 ("retry later").
            let _ = e.print();
            return match e.kind() {
                clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion => {
                    ExitCode::SUCCESS
                }
                _ => ExitStatus::Usage.into(),
            };
        }
    };
    let code = match cli.command {
        Command::Audit(args) => commands::audit(args),
        Command::Import(args) => commands::import(args),
        Command::Show(args) => commands::show(args),
        Command::Explain(args) => commands::explain(args),
        Command::Pin(args) => commands::pin(args),
        Command::Merge(args) => commands::merge(args),
        Command::Completions(args) => commands::completions(args),
        Command::Man(args) => pinaudit::man::run(args),
        Command::Diff(args) => commands::diff(args),
        Command::Config(args) => commands::config(args),
        Command::VerifyStatement(args) => commands::verify_statement(args),
        Command::Cache(pinaudit::cli::CacheCommand::Gc(args)) => commands::cache_gc(args),
    };
    let _ = std::io::stdout().flush();
    code.into()
}
