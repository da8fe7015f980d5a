//! `--format json`: the frozen `pinaudit/report/v1` document.

use std::io::Write;

use super::Report;

pub(crate) fn render(report: &Report, _opts: &super::RenderOptions) -> String {
    // Reserved up front (about 2 KiB a record or finding, more than they take):
    // growing a 34 MB report by doubling copied it over and over. Pages of the
    // reserve that are never written are never touched.
    let guess = (report.records.len() + report.findings.len()).saturating_mul(2048);
    let mut out = Vec::with_capacity(guess.clamp(4096, 1 << 30));
    // Writing into memory cannot fail: serialising plain data with string keys
    // cannot either.
    if write(report, &mut out).is_err() {
        out.clear();
    }
    // serde_json writes UTF-8.
    String::from_utf8(out).unwrap_or_default()
}

/// Writes the report, as [`render`] gives it, straight into `out` (for a large
/// report: no copy of it is held in memory). `out` should be buffered.
pub(crate) fn write(report: &Report, out: &mut impl Write) -> std::io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, report).map_err(std::io::Error::from)?;
    out.write_all(b"\n")
}
