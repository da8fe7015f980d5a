//! The command line, as the README documents it (clap derive); flags are never renamed.

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
    /// Configuration file [default: the first pinaudit.toml walking up from the current directory]
    #[arg(long, global = true, value_name = "FILE")]
    pub(crate) config: Option<PathBuf>,
    /// Ignore any pinaudit.toml
    #[arg(long, global = true, conflicts_with = "config")]
    pub(crate) no_config: bool,
}

/// Which configuration file a command reads: `--config FILE`, none with
/// `--no-config`, else the first `pinaudit.toml` walking up from the current
/// directory. Every command that takes settings from the file gets one.
#[derive(Debug, Clone, Default)]
pub struct ConfigChoice {
    pub(crate) file: Option<PathBuf>,
    pub(crate) none: bool,
}

impl Cli {
    /// The configuration file choice of the global flags.
    pub fn config_choice(&self) -> ConfigChoice {
        ConfigChoice {
            file: self.config.clone(),
            none: self.no_config,
        }
    }
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Audit records and pin files (default: pins/)
    #[command(
        after_help = "Exit status: 0 every source judged (from the cache when the forge was \
        unreachable) and nothing at or above --fail-on; 1 a finding at or above --fail-on \
        (baseline and ignored findings don't count); 2 nothing at or above --fail-on but \
        something could not be checked and the cache could not stand in (a transient failure: \
        retry later); an unpinned URL is a finding, not an incomplete audit; 3 usage or \
        configuration error (bad flag, bad config file, unreadable --baseline, an input that \
        does not exist, a cache directory that cannot be used).\n\
        Explain a finding code: pinaudit explain CODE"
    )]
    Audit(AuditArgs),
    /// Convert record documents into pins/v1 files
    Import(ImportArgs),
    /// Print the cited lines at the pinned revision (and with --history, how they changed)
    Show(ShowArgs),
    /// Explain what a finding code means and how to fix it
    Explain(ExplainArgs),
    /// Resolve a branch, tag or short-id URL to its commit now, hash it, and emit a pin
    #[command(
        after_help = "Exit status: 0 pinned (and --value found); 1 the claim written with --force \
        though --value stands on no line; 2 not pinned: the URL, repository, revision or path \
        could not be read, the document is over --max-document-size, or --value stands on no \
        line (without --force); 3 usage or configuration error."
    )]
    Pin(PinArgs),
    /// Combine the JSON reports (or SARIF logs) of `audit --shard K/N` runs into one
    Merge(MergeArgs),
    /// Print a shell completion script (bash, zsh, fish, powershell)
    Completions(CompletionsArgs),
    /// Print a man page (roff) on stdout, or write every page into a directory
    Man(ManArgs),
    /// Compare two JSON reports: new, resolved and unchanged findings (by fingerprint)
    #[command(
        after_help = "Exit status: 0 no new finding at or above --fail-on; 1 a new finding \
        at or above --fail-on; 2 a report could not be read; 3 usage error."
    )]
    Diff(DiffArgs),
    /// Print the effective configuration and where each value came from
    Config(ConfigArgs),
    /// Check that an in-toto statement's subjects still match the record files
    /// and the cited documents in the cache
    #[command(
        after_help = "Exit status: 0 every subject the same; 1 a record or document changed \
        (or a given file is not in the statement); 2 something could not be checked (a \
        document the cache lacks, a subject the predicate does not list, an unreadable \
        statement), or nothing was; 3 usage error."
    )]
    VerifyStatement(VerifyStatementArgs),
    /// Ask Software Heritage to archive every repository the records cite, and
    /// say which pinned commits it holds already
    #[command(
        after_help = "Sends one save request (\"save code now\") per repository the records \
        cite, then asks in one call which pinned commits the archive holds. SWH_TOKEN, when \
        set, is sent as a bearer token to the --swh-url host only.\n\
        Exit status: 0 every pinned commit is archived; 1 some pinned commit is not archived \
        yet (its repository's save was requested: run again later); 2 a request failed or was \
        refused, or an input could not be read; 3 usage or configuration error."
    )]
    Preserve(PreserveArgs),
    /// Look after the cache: `pinaudit cache gc` deletes the mirror copies an
    /// audit moved aside (an audit never deletes a mirror)
    #[command(subcommand)]
    Cache(CacheCommand),
}

#[derive(Debug, Subcommand)]
pub enum CacheCommand {
    /// Delete the quarantined copies of mirrors that failed their check (CACHE/quarantine/)
    #[command(
        after_help = "A copy holding the only copy of a commit a record cited (one the live \
        mirror lacks) is kept unless --force.\n\
        Exit status: 0 every copy deleted (or none to delete); 1 a copy was kept as the last \
        copy of a cited commit; 2 the cache could not be read or written; 3 usage error."
    )]
    Gc(CacheGcArgs),
}

#[derive(Debug, Args)]
pub struct CacheGcArgs {
    /// Cache directory [default: `cache/` beside the pinaudit.toml found, else the user's cache directory]
    #[arg(long, value_name = "DIR", env = "PINAUDIT_CACHE")]
    pub(crate) cache: Option<PathBuf>,
    /// Delete a copy even when it holds the only copy of a commit a record cited
    #[arg(long)]
    pub(crate) force: bool,
}

#[derive(Debug, Args)]
pub struct PinArgs {
    /// A document URL at a branch, tag or short commit id (…/blob/main/README.md#L43)
    #[arg(value_name = "URL")]
    pub url: String,
    /// The cited line (default: the URL's `#L` anchor)
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) line: Option<u32>,
    /// The figure's value, looked for on the line
    #[arg(long, value_name = "V", allow_hyphen_values = true)]
    pub(crate) value: Option<String>,
    /// The figure's unit
    #[arg(long, value_name = "U")]
    pub(crate) unit: Option<String>,
    /// The claim's label
    #[arg(long, value_name = "L")]
    pub(crate) label: Option<String>,
    /// Add the source and claim to this pin file (created when missing)
    #[arg(long, value_name = "FILE")]
    pub(crate) into: Option<PathBuf>,
    /// Write the claim even when its value is not on the cited line
    #[arg(long)]
    pub(crate) force: bool,
    /// The largest document read, in bytes (suffixes K, M, G: powers of 1024); a
    /// larger one is refused before it is read
    #[arg(long, value_name = "SIZE", default_value = "50M", value_parser = parse_size)]
    pub(crate) max_document_size: u64,
    #[command(flatten)]
    pub(crate) fetch: FetchArgs,
}

#[derive(Debug, Args)]
pub struct MergeArgs {
    /// Reports written by `audit --shard K/N --format json`, or SARIF logs written
    /// with `--format sarif` (merged into one run)
    #[arg(value_name = "REPORT", required = true)]
    pub reports: Vec<PathBuf>,
    /// Write the merged report to FILE instead of stdout
    #[arg(long, value_name = "FILE")]
    pub(crate) output: Option<PathBuf>,
    /// Exit 1 when the merged report has a finding at or above this severity [default: error, or pinaudit.toml's fail-on]
    #[arg(long, value_enum, value_name = "SEVERITY")]
    pub(crate) fail_on: Option<FailOn>,
}

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell
    #[arg(value_name = "SHELL")]
    pub shell: clap_complete::Shell,
}

#[derive(Debug, Args)]
pub struct ManArgs {
    /// The subcommand whose page to print (`audit`, `cache gc`, …); none: the
    /// page of pinaudit itself
    #[arg(value_name = "SUBCOMMAND", conflicts_with = "dir")]
    pub subcommand: Vec<String>,
    /// Write `pinaudit.1` and one page per subcommand (`pinaudit-audit.1`, …) into
    /// this directory instead
    #[arg(long, value_name = "DIR")]
    pub dir: Option<std::path::PathBuf>,
}

#[derive(Debug, Args)]
pub struct VerifyStatementArgs {
    /// A statement written by `pinaudit audit --format in-toto`
    #[arg(value_name = "STATEMENT")]
    pub statement: PathBuf,
    /// Record files to check against it [default: every record file it names]
    #[arg(value_name = "PATH")]
    pub(crate) paths: Vec<PathBuf>,
    /// Cache directory, read offline [default: `cache/` beside the pinaudit.toml found, else the user's cache directory]
    #[arg(long, value_name = "DIR", env = "PINAUDIT_CACHE")]
    pub(crate) cache: Option<PathBuf>,
    /// Allow file: URLs and local paths among the documents
    #[arg(long)]
    pub(crate) allow_local: bool,
    /// The largest statement or record file read, in bytes (suffixes K, M, G:
    /// powers of 1024); only regular files are read
    #[arg(long, value_name = "SIZE", default_value = "50M", value_parser = parse_size)]
    pub(crate) max_document_size: u64,
}

#[derive(Debug, Args)]
pub struct ConfigArgs {}

#[derive(Debug, Args)]
pub struct DiffArgs {
    /// The earlier report (`pinaudit audit --format json`)
    #[arg(value_name = "OLD.json")]
    pub old: PathBuf,
    /// The later report
    #[arg(value_name = "NEW.json")]
    pub(crate) new: PathBuf,
    /// Output format
    #[arg(long, value_enum, default_value_t = crate::diff::DiffFormat::Text)]
    pub(crate) format: crate::diff::DiffFormat,
    /// Exit 1 when a new finding at or above this severity appears [default: error, or pinaudit.toml's fail-on]
    #[arg(long, value_enum, value_name = "SEVERITY")]
    pub(crate) fail_on: Option<FailOn>,
    /// Colour: auto (on a terminal, unless NO_COLOR), always, never
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto, value_name = "WHEN")]
    pub(crate) color: ColorChoice,
}

/// When to colour terminal output (`NO_COLOR` and `CLICOLOR_FORCE` are honoured
/// under `auto`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub(crate) enum ColorChoice {
    #[default]
    Auto,
    Always,
    Never,
}

impl ColorChoice {
    /// Whether to colour stdout.
    pub(crate) fn stdout(self) -> bool {
        match self {
            // anstream decides: CLICOLOR_FORCE, NO_COLOR, then whether it is a terminal.
            ColorChoice::Auto => !matches!(
                anstream::AutoStream::choice(&std::io::stdout()),
                anstream::ColorChoice::Never
            ),
            ColorChoice::Always => true,
            ColorChoice::Never => false,
        }
    }
}

/// What `show` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ShowFormat {
    Text,
    Html,
}

#[derive(Debug, Args)]
pub struct ShowArgs {
    /// A pinned URL with a line anchor (…/blob/COMMIT/README.md#L43), or PINFILE#CLAIM-LABEL
    #[arg(value_name = "TARGET")]
    pub target: String,
    /// Lines of context around the cited lines
    #[arg(long, short = 'C', value_name = "N", default_value_t = 3)]
    pub(crate) context: u32,
    /// List each commit from the pin to the head that changed the cited lines
    #[arg(long)]
    pub(crate) history: bool,
    /// Output format: `text`, or with `--history` `html` (one self-contained page:
    /// the timeline as a table and the figure's value per commit as a chart)
    #[arg(long, value_enum, default_value_t = ShowFormat::Text)]
    pub(crate) format: ShowFormat,
    /// The largest document read, in bytes (suffixes K, M, G: powers of 1024); a
    /// larger one is refused before it is read
    #[arg(long, value_name = "SIZE", default_value = "50M", value_parser = parse_size)]
    pub(crate) max_document_size: u64,
    #[command(flatten)]
    pub(crate) fetch: FetchArgs,
}

#[derive(Debug, Args)]
pub struct AuditArgs {
    /// Files or directories (recursively: *.json pin files, *.md / *.txt record
    /// documents; .gitignore/.ignore respected), or `-` for one record on stdin
    /// [default: pinaudit.toml's inputs, else pins]
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// Report format
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub(crate) format: Format,
    /// Write the report to FILE instead of stdout
    #[arg(long, value_name = "FILE")]
    pub(crate) output: Option<PathBuf>,
    /// Exit 1 when a finding at or above this severity is reported [default: error]
    #[arg(long, value_enum, value_name = "SEVERITY")]
    pub(crate) fail_on: Option<FailOn>,
    /// Show only findings at or above this severity in the text and github
    /// reports (JSON and SARIF stay complete; the exit status is unchanged)
    #[arg(long, value_enum, value_name = "LEVEL")]
    pub(crate) min_severity: Option<MinSeverity>,
    /// Skip upstream-drift checks (no comparison with the default-branch head)
    #[arg(long)]
    pub(crate) no_upstream: bool,
    /// Also verify every SHA256SUMS-style manifest in the tree at each cited
    /// revision (at most 100 a revision, none over --max-document-size)
    #[arg(long)]
    pub(crate) manifests: bool,
    /// The largest document read, web or git, in bytes (suffixes K, M, G: powers of
    /// 1024); a larger one leaves its source unchecked. Git documents over 16M are
    /// read as streams, so this bounds the work, not the memory [default: 4G for git
    /// documents, 50M for web documents]
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub(crate) max_document_size: Option<u64>,
    /// Concurrent repositories and input reads, and threads checking records (at most the cores) [default: twice the cores, 2 to 4]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=64))]
    pub(crate) jobs: Option<u16>,
    /// No progress output (progress only ever goes to stderr, and only on a terminal)
    #[arg(long, short)]
    pub(crate) quiet: bool,
    /// The text report lists every source and claim, verified ones and SWHIDs
    /// included (without it: the problems, and one line of counts per record)
    #[arg(long, short)]
    pub(crate) verbose: bool,
    /// Audit only the records whose first source's repository hashes to shard K of N
    #[arg(long, value_name = "K/N")]
    pub(crate) shard: Option<crate::shard::Shard>,
    /// Rewrite unpinned URLs in pin files to the commit they name now, then audit
    #[arg(long)]
    pub(crate) fix: bool,
    /// A JSON report of an earlier audit: findings already in it are marked `baseline`
    /// and don't count toward the exit status
    #[arg(long, value_name = "OLD.json")]
    pub(crate) baseline: Option<PathBuf>,
    /// Colour: auto (on a terminal, unless NO_COLOR), always, never
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto, value_name = "WHEN")]
    pub(crate) color: ColorChoice,
    /// Skip inputs matching GLOB while walking directories (gitignore syntax); repeatable
    #[arg(long, value_name = "GLOB")]
    pub(crate) exclude: Vec<String>,
    /// Walk into what .gitignore/.ignore files exclude and into hidden directories
    #[arg(long)]
    pub(crate) no_ignore: bool,
    /// Audit only the inputs changed since the git ref REF (its merge base with
    /// HEAD, against the work tree): the records a pull request touches
    #[arg(long, value_name = "REF")]
    pub(crate) changed_since: Option<String>,
    /// Archives asked for a source its forge or host lost, comma-separated:
    /// `software-heritage` (git sources: the repository or commit is gone, or the
    /// forge cannot be reached while the cache lacks the pin), `wayback` (web
    /// documents answering 404 or 410), or `none` (air-gapped). Under --offline
    /// only what the cache holds from an archive is read [default:
    /// software-heritage,wayback]
    #[arg(long, value_name = "LIST", env = "PINAUDIT_ARCHIVE", value_parser = parse_archive)]
    pub(crate) archive: Option<ArchiveChoice>,
    /// The Software Heritage API to ask (a mirror, a test server)
    /// [default: https://archive.softwareheritage.org/api/1/]
    #[arg(long, value_name = "URL")]
    pub(crate) swh_url: Option<String>,
    /// The Wayback Machine to ask (a mirror, a test server) [default: https://web.archive.org/]
    #[arg(long, value_name = "URL")]
    pub(crate) wayback_url: Option<String>,
    #[command(flatten)]
    pub(crate) fetch: FetchArgs,
}

/// Which archives stand in for a source its forge or host lost (`--archive`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ArchiveChoice {
    pub(crate) software_heritage: bool,
    pub(crate) wayback: bool,
}

impl ArchiveChoice {
    /// The default: every archive pinaudit knows.
    pub(crate) const ALL: ArchiveChoice = ArchiveChoice {
        software_heritage: true,
        wayback: true,
    };

    /// As `--archive` writes it.
    pub(crate) fn as_str(self) -> &'static str {
        match (self.software_heritage, self.wayback) {
            (true, true) => "software-heritage,wayback",
            (true, false) => "software-heritage",
            (false, true) => "wayback",
            (false, false) => "none",
        }
    }
}

/// `--archive`: `none`, or a comma-separated list of archives.
pub(crate) fn parse_archive(s: &str) -> Result<ArchiveChoice, String> {
    let mut choice = ArchiveChoice {
        software_heritage: false,
        wayback: false,
    };
    let names: Vec<&str> = s.split(',').map(str::trim).collect();
    if names == ["none"] {
        return Ok(choice);
    }
    for name in names {
        match name {
            "software-heritage" => choice.software_heritage = true,
            "wayback" => choice.wayback = true,
            other => {
                return Err(format!(
                    "`{other}` is not an archive (`software-heritage`, `wayback`, comma-separated, or `none`)"
                ))
            }
        }
    }
    Ok(choice)
}

/// The least severity a person wants to read (`--min-severity`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum MinSeverity {
    Error,
    Warning,
    Note,
}

impl MinSeverity {
    pub(crate) fn severity(self) -> crate::finding::Severity {
        match self {
            MinSeverity::Error => crate::finding::Severity::Error,
            MinSeverity::Warning => crate::finding::Severity::Warning,
            MinSeverity::Note => crate::finding::Severity::Note,
        }
    }
}

/// How pinaudit reaches repositories; shared by every command that reads sources.
/// A field the configuration file can also set is an `Option` (or an empty
/// list) when the flag is not given, so that [`crate::config`] merges flag, file
/// and default in one place; the defaults live there.
#[derive(Debug, Clone, Args)]
pub(crate) struct FetchArgs {
    /// Cache directory [default: `cache/` beside the pinaudit.toml found, else the user's cache directory]
    #[arg(long, value_name = "DIR", env = "PINAUDIT_CACHE")]
    pub(crate) cache: Option<PathBuf>,
    /// No network at all; only what the cache holds
    #[arg(long)]
    pub(crate) offline: bool,
    /// Rewrite fetch URLs starting with FROM to start with TO (like git's insteadOf); repeatable
    #[arg(long, value_name = "FROM=TO")]
    // Kept as text and parsed by the command, so that a malformed rule carrying a
    // credential is never echoed back by clap.
    pub(crate) rewrite: Vec<String>,
    /// Allow file: URLs and local paths, in records and as rewrite targets
    #[arg(long)]
    pub(crate) allow_local: bool,
    /// Network timeout in seconds: for connecting, and for each wait on an answer [default: 60]
    #[arg(long, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub(crate) timeout: Option<u64>,
    /// Longest time, in seconds, one repository's sync may take in all (a server
    /// that trickles never trips --timeout) [default: 900]
    #[arg(long, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..=86400))]
    pub(crate) deadline: Option<u64>,
    /// Most MiB one repository's sync may receive (an endless pack is cut off) [default: 4096]
    #[arg(long, value_name = "MIB", value_parser = clap::value_parser!(u64).range(1..=1048576))]
    pub(crate) max_fetch_mib: Option<u64>,
    /// Most objects one repository's sync may receive (a pack of tiny objects costs
    /// memory per object, not per byte) [default: 1000000]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=1_000_000_000))]
    pub(crate) max_fetch_objects: Option<u64>,
    /// Most MiB a server's ref advertisement may take (an endless one is cut off) [default: 32]
    #[arg(long, value_name = "MIB", value_parser = clap::value_parser!(u64).range(1..=65536))]
    pub(crate) max_refs_mib: Option<u64>,
    /// Connect to ADDR for HOST:PORT, like curl's --resolve (for HTTP(S), any port of HOST); repeatable
    #[arg(long, value_name = "HOST:PORT:ADDR")]
    pub(crate) resolve: Vec<crate::net::Pin>,
}

/// `preserve`'s output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum PreserveFormat {
    Text,
    Json,
}

#[derive(Debug, Args)]
pub struct PreserveArgs {
    /// Files or directories, as `audit` reads them [default: pinaudit.toml's inputs, else pins]
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// Output format
    #[arg(long, value_enum, default_value_t = PreserveFormat::Text)]
    pub(crate) format: PreserveFormat,
    /// The Software Heritage API [default: https://archive.softwareheritage.org/api/1/]
    #[arg(long, value_name = "URL")]
    pub(crate) swh_url: Option<String>,
    /// Network timeout in seconds: for connecting, and for each answer [default: 60]
    #[arg(long, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub(crate) timeout: Option<u64>,
    /// Longest time, in seconds, all the calls may take, waits for the archive's
    /// rate limit included [default: 900]
    #[arg(long, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..=86400))]
    pub(crate) deadline: Option<u64>,
    /// Skip inputs matching GLOB while walking directories (gitignore syntax); repeatable
    #[arg(long, value_name = "GLOB")]
    pub(crate) exclude: Vec<String>,
    /// Walk into what .gitignore/.ignore files exclude and into hidden directories
    #[arg(long)]
    pub(crate) no_ignore: bool,
    /// Allow an archive on a loopback or private address (a test server)
    #[arg(long)]
    pub(crate) allow_local: bool,
    /// Connect to ADDR for HOST:PORT, like curl's --resolve; repeatable
    #[arg(long, value_name = "HOST:PORT:ADDR")]
    pub(crate) resolve: Vec<crate::net::Pin>,
}

#[derive(Debug, Args)]
pub struct ImportArgs {
    /// Record documents (Markdown, possibly flattened, carrying ```json blocks)
    #[arg(value_name = "RECORD", required = true)]
    pub records: Vec<PathBuf>,
    /// Directory to write pin files into
    #[arg(long, value_name = "DIR", default_value = "pins")]
    pub(crate) out: PathBuf,
    /// Overwrite a pin file whose content differs (a hand-edited one, say)
    #[arg(long)]
    pub(crate) force: bool,
}

#[derive(Debug, Args)]
pub struct ExplainArgs {
    /// A finding code, e.g. hash-mismatch
    #[arg(value_name = "CODE")]
    pub code: String,
}

/// A size in bytes: a number, optionally with `K`, `M` or `G` (powers of 1024).
fn parse_size(s: &str) -> Result<u64, SizeError> {
    let t = s.trim();
    let (digits, unit) = match t.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((i, _)) => t.split_at(i),
        None => (t, ""),
    };
    let n: u64 = digits
        .parse()
        .map_err(|_| SizeError::NotASize(s.to_string()))?;
    let scale: u64 = match unit.to_ascii_uppercase().trim_end_matches(['B', 'I']) {
        "" => 1,
        "K" => 1 << 10,
        "M" => 1 << 20,
        "G" => 1 << 30,
        _ => {
            return Err(SizeError::UnknownUnit {
                size: s.to_string(),
                unit: unit.to_string(),
            })
        }
    };
    n.checked_mul(scale)
        .filter(|&b| b > 0)
        .ok_or_else(|| SizeError::Unusable(s.to_string()))
}

/// Why a `SIZE` argument can't be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum SizeError {
    #[error("`{0}` is not a size (e.g. `50M`, `1048576`)")]
    NotASize(String),
    #[error("`{size}`: unknown size unit `{unit}` (use K, M or G)")]
    UnknownUnit { size: String, unit: String },
    #[error("`{0}` is not a usable size")]
    Unusable(String),
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    #[test]
    fn command_line_is_consistent() {
        super::Cli::command().debug_assert();
    }

    #[test]
    fn archive_lists() {
        let both = super::ArchiveChoice::ALL;
        assert_eq!(super::parse_archive("software-heritage, wayback"), Ok(both));
        assert_eq!(
            super::parse_archive("wayback").map(|c| c.as_str()),
            Ok("wayback")
        );
        assert_eq!(super::parse_archive("none").map(|c| c.as_str()), Ok("none"));
        assert!(super::parse_archive("none,software-heritage").is_err());
        assert!(super::parse_archive("archive.org").is_err());
    }

    #[test]
    fn sizes_with_units() {
        assert_eq!(super::parse_size("4K"), Ok(4096));
        assert_eq!(super::parse_size("50M"), Ok(50 << 20));
        assert_eq!(super::parse_size("1MiB"), Ok(1 << 20));
        assert_eq!(super::parse_size("1048576"), Ok(1 << 20));
        assert!(super::parse_size("0").is_err());
        assert!(super::parse_size("5X").is_err());
        assert!(super::parse_size("M").is_err());
    }
}
