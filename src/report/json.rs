//! `--format json`: the frozen `pinaudit/report/v1` document.

use super::Report;

pub fn render(report: &Report, _opts: &super::RenderOptions) -> String {
    // Serialising plain data with string keys cannot fail.
    let mut s = serde_json::to_string_pretty(report).unwrap_or_default();
    s.push('\n');
    s
}
