//! Escaping for every string a report takes from a record or a source.
//!
//! Record ids, labels, units, paths, cited lines and the messages that quote them
//! are written by strangers, and a report's verdict gates publication, so no such
//! string may change what a report *says* (issue "Reliability and security",
//! part "Reports that can't be spoofed"): a label `## pinaudit: ✅ clean` followed
//! by an unclosed `<!--` used to hide every finding of a CI job summary, and raw
//! ANSI escapes in a label repainted the terminal.
//!
//! - [`terminal`]: control, escape and bidirectional-override characters shown as
//!   `\u{…}` (a tab stays a tab: it moves the cursor but can't rewrite a line).
//! - [`md_code`]: a Markdown inline code span whose fence is longer than any
//!   backtick run inside it, on one line.
//! - [`md_text`]: Markdown prose with every ASCII punctuation character that means
//!   something to Markdown or HTML backslash-escaped, on one line (`<!--`, `<tag>`,
//!   `#`, `*`, `[`, `|` all render as themselves).
//! - [`md_cell`]: either of the two made fit for a GFM table cell (`|` and `\`
//!   escaped at the table level, which applies inside code spans too).
//!
//! JSON (and SARIF) go through serde, which escapes by construction. Renderers for
//! new formats should call these rather than write their own.

use std::borrow::Cow;
use std::fmt::Write;

/// Whether `c` must not reach a terminal or a one-line Markdown string as itself.
fn is_hostile(c: char) -> bool {
    (c.is_control() && c != '\t')
        // Bidirectional overrides and isolates reorder what follows them
        // ("trojan source"), and line/paragraph separators break lines.
        || matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{2028}' | '\u{2029}')
}

/// `s` for a terminal: every control, escape or bidi character as `\u{…}`.
pub fn terminal(s: &str) -> Cow<'_, str> {
    if !s.chars().any(is_hostile) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if is_hostile(c) {
            let _ = write!(out, "\\u{{{:x}}}", c as u32);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// `s` as a Markdown inline code span on one line: `` `a` ``, ``` ``a`b`` ```.
///
/// Code spans render their content literally, so HTML comments and headings
/// inside are inert; the fence is one backtick longer than the longest run in
/// `s`, and a space pads content that starts or ends with a backtick.
pub fn md_code(s: &str) -> String {
    let one_line = terminal(s).replace(['\n', '\r'], " ");
    let longest = one_line
        .split(|c| c != '`')
        .map(str::len)
        .max()
        .unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    let pad = if one_line.starts_with('`') || one_line.ends_with('`') || one_line.is_empty() {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{one_line}{pad}{fence}")
}

/// `s` as Markdown prose on one line, every Markdown/HTML metacharacter escaped.
pub fn md_text(s: &str) -> String {
    let safe = terminal(s);
    let mut out = String::with_capacity(safe.len() + 8);
    for c in safe.chars() {
        match c {
            '\\' | '`' | '*' | '_' | '{' | '}' | '[' | ']' | '(' | ')' | '#' | '+' | '-' | '.'
            | '!' | '|' | '<' | '>' | '~' | '&' | '"' | '\'' | ':' | '=' => {
                out.push('\\');
                out.push(c);
            }
            '\n' | '\r' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// Markdown produced by [`md_code`] or [`md_text`], made fit for a GFM table cell.
///
/// GFM splits rows at `|` before reading inline Markdown, code spans included,
/// and reads `\x` as one unit there: so every `\` and `|` gets a backslash of its
/// own. (Inside a code span this shows a doubled backslash; it can't end the cell.)
pub fn md_cell(markdown: &str) -> String {
    let mut out = String::with_capacity(markdown.len() + 4);
    for c in markdown.chars() {
        if c == '|' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terminal_shows_controls() {
        assert_eq!(terminal("a\u{1b}[31mb\n"), "a\\u{1b}[31mb\\u{a}");
        assert_eq!(terminal("tab\there"), "tab\there");
        assert_eq!(terminal("x\u{202e}y"), "x\\u{202e}y");
        assert!(matches!(terminal("plain ✅"), Cow::Borrowed(_)));
    }

    #[test]
    fn code_spans_outgrow_backtick_runs() {
        assert_eq!(md_code("a"), "`a`");
        assert_eq!(md_code("a`b"), "``a`b``");
        assert_eq!(md_code("``x"), "``` ``x ```");
        assert_eq!(md_code(""), "` `");
        assert_eq!(md_code("a\nb"), "`a\\u{a}b`");
    }

    #[test]
    fn text_is_inert() {
        let t = md_text("## pinaudit: ✅ clean\n<!--");
        assert!(!t.contains('\n'));
        assert!(t.starts_with("\\#\\# pinaudit\\: ✅ clean"));
        assert!(t.ends_with("\\<\\!\\-\\-"));
    }

    #[test]
    fn cells_escape_pipes_and_backslashes() {
        assert_eq!(md_cell("`a|b`"), "`a\\|b`");
        assert_eq!(md_cell("\\|"), "\\\\\\|");
    }
}
