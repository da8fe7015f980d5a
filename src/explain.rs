//! `pinaudit explain CODE`: what each finding code means and how to fix it.
//!
//! The words are the code table's ([`crate::codes`]).

use crate::finding::Code;

/// The text `pinaudit explain CODE` prints.
pub(crate) fn render(code: Code) -> String {
    let e = code.meta();
    format!(
        "{code} ({})\n\n{}\n\n{}\n",
        code.severity(),
        wrap(e.means),
        wrap(&format!("How to fix: {}", e.fix))
    )
}

/// Folds whitespace and wraps at 80 columns.
fn wrap(text: &str) -> String {
    let mut out = String::new();
    let mut width = 0;
    for word in text.split_whitespace() {
        if width > 0 && width + 1 + word.len() > 80 {
            out.push('\n');
            width = 0;
        } else if width > 0 {
            out.push(' ');
            width += 1;
        }
        out.push_str(word);
        width += word.len();
    }
    out
}
