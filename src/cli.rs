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
    #[command(
        after_help = "Exit status: 0 every source checked and nothing at or above \
        --fail-on; 1 a finding at or above --fail-on; 2 nothing at or above --fail-on but the \
        audit is incomplete (a source could not be checked, an input could not be read).\n\
        Explain a finding code: pinaudit explain CODE"
    )]
    Audit(AuditArgs),
    /// Convert record documents into pins/v1 files
    Import(ImportArgs),
    /// Print the cited lines at the pinned revision (and with --history, how they changed)
    Show(ShowArgs),
    /// Explain what a finding code means and how to fix it
    Explain(ExplainArgs),
}

#[derive(Debug, Args)]
pub struct ShowArgs {
    /// A pinned URL with a line anchor (…/blob/COMMIT/README.md#L43), or PINFILE#CLAIM-LABEL
    #[arg(value_name = "TARGET")]
    pub target: String,
    /// Lines of context around the cited lines
    #[arg(long, short = 'C', value_name = "N", default_value_t = 3)]
    pub context: u32,
    /// List each commit from the pin to the head that changed the cited lines
    #[arg(long)]
    pub history: bool,
    #[command(flatten)]
    pub fetch: FetchArgs,
}

#[derive(Debug, Args)]
pub struct AuditArgs {
    /// Files or directories (recursively: *.json pin files, *.md / *.txt record documents)
    #[arg(value_name = "PATH", default_value = "pins")]
    pub paths: Vec<PathBuf>,
    /// Report format
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Write the report to FILE instead of stdout
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Exit 1 when a finding at or above this severity is reported
    #[arg(long, value_enum, default_value_t = FailOn::Error, value_name = "SEVERITY")]
    pub fail_on: FailOn,
    /// Skip upstream-drift checks (no comparison with the default-branch head)
    #[arg(long)]
    pub no_upstream: bool,
    /// Concurrent repositories [default: twice the cores, 2 to 8]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=64))]
    pub jobs: Option<u16>,
    /// No progress output (progress only ever goes to stderr, and only on a terminal)
    #[arg(long, short)]
    pub quiet: bool,
    #[command(flatten)]
    pub fetch: FetchArgs,
}

/// How pinaudit reaches repositories; shared by every command that reads sources.
#[derive(Debug, Args)]
pub struct FetchArgs {
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
    /// Rewrite fetch URLs starting with FROM to start with TO (like git's insteadOf); repeatable
    #[arg(long, value_name = "FROM=TO")]
    // Kept as text and parsed by the command, so that a malformed rule carrying a
    // credential is never echoed back by clap.
    pub rewrite: Vec<String>,
    /// Allow file: URLs and local paths, in records and as rewrite targets
    #[arg(long)]
    pub allow_local: bool,
    /// Network timeout in seconds: for connecting, and for each wait on an answer
    #[arg(long, value_name = "SECONDS", default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub timeout: u64,
    /// Longest time, in seconds, one repository's sync may take in all (a server
    /// that trickles never trips --timeout)
    #[arg(long, value_name = "SECONDS", default_value_t = crate::fetch::DEFAULT_DEADLINE.as_secs(), value_parser = clap::value_parser!(u64).range(1..=86400))]
    pub deadline: u64,
    /// Most MiB one repository's sync may receive (an endless pack is cut off)
    #[arg(long, value_name = "MIB", default_value_t = crate::fetch::DEFAULT_MAX_FETCH_BYTES >> 20, value_parser = clap::value_parser!(u64).range(1..=1048576))]
    pub max_fetch_mib: u64,
    /// Most MiB a git:// server's ref advertisement may take (an endless one is cut off)
    #[arg(long, value_name = "MIB", default_value_t = crate::fetch::DEFAULT_MAX_REF_BYTES >> 20, value_parser = clap::value_parser!(u64).range(1..=65536))]
    pub max_refs_mib: u64,
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

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    #[test]
    fn command_line_is_consistent() {
        super::Cli::command().debug_assert();
    }
}
