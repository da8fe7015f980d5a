//! The `pinaudit` binary: parse the command line, run, map to an exit status.

use std::io::Write;
use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches};

use pinaudit::cli::{Cli, Command};
use pinaudit::commands;
use pinaudit::exit::ExitStatus;

/// mimalloc: an audit allocates many small values on several worker threads,
/// where glibc's per-thread arenas grew and shrank with page faults (a sixth
/// of a re-check of 20,000 citations).
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Ctrl-C: say so on stderr and exit 130, as a shell reports an interrupted
/// command, instead of vanishing silently. Only async-signal-safe calls.
extern "C" fn on_interrupt(_: libc::c_int) {
    const SAID: &[u8] = b"\ninterrupted\n";
    // SAFETY: write(2) and _exit(2) are async-signal-safe; the buffer is static.
    unsafe {
        libc::write(2, SAID.as_ptr().cast(), SAID.len());
        libc::_exit(130);
    }
}

fn main() -> ExitCode {
    // Before any thread and any git2 call (see the function's docs).
    pinaudit_fetch::tls::defer_certificates();
    // SAFETY: installs a handler that makes only async-signal-safe calls.
    unsafe {
        libc::signal(
            libc::SIGINT,
            on_interrupt as extern "C" fn(libc::c_int) as libc::sighandler_t,
        );
    }
    let cli = match Cli::command()
        .try_get_matches()
        .and_then(|m| Cli::from_arg_matches(&m))
    {
        Ok(cli) => cli,
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
    // Every command that takes settings reads the same configuration file.
    let config = cli.config_choice();
    let code = match cli.command {
        Command::Audit(args) => commands::audit(args, &config),
        Command::Import(args) => commands::import(args),
        Command::Show(args) => commands::show(args, &config),
        Command::Explain(args) => commands::explain(args),
        Command::Pin(args) => commands::pin(args, &config),
        Command::Merge(args) => commands::merge(args, &config),
        Command::Completions(args) => commands::completions(args),
        Command::Man(args) => pinaudit::man::run(args),
        Command::Diff(args) => commands::diff(args, &config),
        Command::Config(args) => commands::config(args, &config),
        Command::VerifyStatement(args) => commands::verify_statement(args, &config),
        Command::Preserve(args) => commands::preserve(args, &config),
        Command::Cache(pinaudit::cli::CacheCommand::Gc(args)) => commands::cache_gc(args, &config),
    };
    let _ = std::io::stdout().flush();
    // libgit2 may be being set up on another thread (see the function).
    pinaudit_fetch::setup::settle();
    code.into()
}
