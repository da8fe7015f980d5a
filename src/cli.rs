//! The command line, as DESIGN.md fixes it (clap derive).

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::audit::FailOn;
use crate::report::Format;

#[derive(Debug, Parser)]
#[command(
    name = "pinaudit",
    version,
    about = "Audit published figures against the pinned sources they cite",
    long_about = "pinaudit checks that each figure of a record (a benchmark write-up) really \
                  stands on the cited line of the cited document at the pinned commit, that the \
                  document's sha256 matches, and that weights and runtimes are pinned."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Audit records and pin files (default: pins/)
    Audit(AuditArgs),
    /// Convert record documents into pins/v1 files
    Import(ImportArgs),
    /// Explain what a finding code means and how to fix it
    Explain(ExplainArgs),
}

#[derive(Debug, Args)]
pub struct AuditArgs {
    /// Files or directories (recursively: *.json pin files, *.md / *.txt record documents)
    #[arg(value_name = "PATH", default_value = "pins")]
    pub paths: Vec<PathBuf>,
    /// Cache directory
    #[arg(
        long,
        value_name = "DIR",
        env = "PINAUDIT_CACHE",
        default_value = "cache"
    )]
    pub cache: PathBuf,
    /// No network at all; only what the cache holds
    #[arg(long)]
    pub offline: bool,
    /// Report format
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Write the report to FILE instead of stdout
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Exit 1 when a finding at or above this severity is reported
    #[arg(long, value_enum, default_value_t = FailOn::Error, value_name = "SEVERITY")]
    pub fail_on: FailOn,
    /// No progress output
    #[arg(long, short)]
    pub quiet: bool,
}

#[derive(Debug, Args)]
pub struct ImportArgs {
    /// Record documents (Markdown, possibly flattened, carrying ```json blocks)
    #[arg(value_name = "RECORD", required = true)]
    pub records: Vec<PathBuf>,
    /// Directory to write pin files into
    #[arg(long, value_name = "DIR", default_value = "pins")]
    pub out: PathBuf,
}

#[derive(Debug, Args)]
pub struct ExplainArgs {
    /// A finding code, e.g. hash-mismatch
    #[arg(value_name = "CODE")]
    pub code: String,
}
