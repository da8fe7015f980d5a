//! `--format json`: the frozen `pinaudit/report/v1` document.

use super::{Out, Report};

/// Writes the report straight into `out` as it is serialised (a 20,000-citation
/// report is 34 MB: no copy of it is held in memory).
pub(crate) fn write(report: &Report, _opts: &super::RenderOptions, out: &mut Out) {
    let written = serde_json::to_writer_pretty(out.io(), report)
        .map_err(std::io::Error::from)
        .and_then(|()| out.io().write_all(b"\n"));
    if let Err(e) = written {
        out.fail(e);
    }
}
