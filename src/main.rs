//! The `pinaudit` binary: parse the command line, run, map to an exit status.

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;

use pinaudit::cli::{Cli, Command};
use pinaudit::commands;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let code = match cli.command {
        Command::Audit(args) => commands::audit(args),
        Command::Import(args) => commands::import(args),
        Command::Show(args) => commands::show(args),
        Command::Explain(args) => commands::explain(args),
        Command::Pin(args) => commands::pin(args),
        Command::Merge(args) => commands::merge(args),
        Command::Completions(args) => commands::completions(args),
        Command::Man => commands::man(),
    };
    let _ = std::io::stdout().flush();
    code.into()
}
