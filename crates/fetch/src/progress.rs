//! What the fetcher says about its progress, told to an observer the binary
//! implements (bars on a terminal). The fetcher draws nothing itself and does
//! not know whether anyone watches: no observer, nothing shown.

use std::sync::Arc;

/// Whoever shows the fetcher's progress.
pub trait Progress: Send + Sync {
    /// Syncing `len` repositories begins: the line that counts them, heading the
    /// lines of [`Progress::remote`].
    fn syncing(&self, len: u64) -> Arc<dyn Line>;

    /// A line for one remote being synced (`shown`: its redacted URL), under the
    /// line of [`Progress::syncing`].
    fn remote(&self, shown: &str) -> Arc<dyn Line>;

    /// A line for one web document being fetched (`shown`: its redacted URL).
    fn web_document(&self, shown: &str) -> Arc<dyn Line>;

    /// Checking `len` documents begins, maybe while repositories still sync:
    /// the line that counts them, drawn with the others; `None` when this
    /// observer shows none.
    fn checking(&self, _len: u64) -> Option<Arc<dyn Line>> {
        None
    }
}

/// One line of progress.
pub trait Line: Send + Sync {
    /// What the line says now (a remote, objects and bytes received).
    fn message(&self, message: String);
    /// `n` more of what the line counts are done.
    fn inc(&self, n: u64);
    /// The line is done: it goes away.
    fn finish(&self);
}

/// Bytes as a person reads them, in binary units (`512 B`, `1.50 KiB`,
/// `64.00 MiB`), as progress lines and size messages show them.
pub fn human_bytes(n: u64) -> String {
    const PREFIXES: [&str; 6] = ["Ki", "Mi", "Gi", "Ti", "Pi", "Ei"];
    let mut amount = n as f64;
    let mut prefix = 0;
    while amount >= 1024.0 && prefix < PREFIXES.len() {
        amount /= 1024.0;
        prefix += 1;
    }
    match prefix {
        0 => format!("{amount:.0} B"),
        p => format!("{amount:.2} {}B", PREFIXES[p - 1]),
    }
}

#[cfg(test)]
mod tests {
    use super::human_bytes;

    #[test]
    fn bytes_in_binary_units() {
        assert_eq!(human_bytes(0), "0 B");
        assert_eq!(human_bytes(1023), "1023 B");
        assert_eq!(human_bytes(1024), "1.00 KiB");
        assert_eq!(human_bytes(1536), "1.50 KiB");
        assert_eq!(human_bytes(50 * 1024 * 1024), "50.00 MiB");
        assert_eq!(human_bytes(u64::MAX), "16.00 EiB");
    }
}
