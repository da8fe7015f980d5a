//! Exit statuses (README, "Exit status"), one enum so that no command returns a bare number.

/// What a command tells the shell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitStatus {
    /// Done: every source checked, nothing at or above `--fail-on`.
    Clean = 0,
    /// At least one finding at or above `--fail-on`.
    Findings = 1,
    /// The audit is incomplete, or the command could not do its job.
    Incomplete = 2,
    /// Usage or configuration error: a bad flag, a bad config file, an unreadable
    /// `--baseline`. "Fix your setup", where 2 says "retry later".
    Usage = 3,
}

impl From<ExitStatus> for u8 {
    fn from(s: ExitStatus) -> u8 {
        s as u8
    }
}

impl From<ExitStatus> for std::process::ExitCode {
    fn from(s: ExitStatus) -> std::process::ExitCode {
        std::process::ExitCode::from(u8::from(s))
    }
}
