//! Escaping for every string a report takes from a record or a source.
//!
//! Record ids, labels, units, paths, cited lines and the messages that quote them
//! are written by strangers, and a report's verdict gates publication, so no such
//! string may change what a report *says* (issue "Reliability and security",
//! part "Reports that can't be spoofed"): a label `## pinaudit: ✅ clean` followed
//! by an unclosed `<!--` used to hide every finding of a CI job summary, and raw
//! ANSI escapes in a label repainted the terminal.
//!
//! - [`terminal`]: C0 and C1 control characters, DEL, escapes, bidirectional
//!   controls (U+061C, U+200E/F, U+202A–202E, U+2066–2069), line and paragraph
//!   separators, zero-width characters (U+200B–200D, U+2060, U+FEFF) and tag
//!   characters (U+E0000–E007F) shown as `\u{…}` (a tab stays a tab: it moves
//!   the cursor but can't rewrite a line); [`terminal_lines`] keeps line breaks.
//!   Used by the text report, `show`, `diff`, the github format and stderr.
//! - [`md_code`]: a Markdown inline code span whose fence is longer than any
//!   backtick run inside it, on one line.
//! - [`md_text`]: Markdown prose on one line whose code spans stay code spans
//!   (pinaudit's messages quote values in backticks) and whose other characters
//!   that start HTML, links, images or emphasis are backslash-escaped (`<!--`,
//!   `<tag>`, `#`, `*`, `[`, `!` all render as themselves).
//! - [`md_cell`]: either of the two made fit for a GFM table cell (`|` and `\`
//!   escaped at the table level, which applies inside code spans too).
//! - [`html`]: HTML text and attribute values (the proof sheet).
//!
//! - [`github`]: a workflow command's message, as [`terminal`] and then the
//!   runner's own escapes.
//!
//! JSON (and SARIF) go through serde, which escapes what JSON needs (`"`, `\`,
//! C0 controls) and keeps the rest as written: a JSON report is data, and a
//! consumer must get the record's own bytes back (fingerprints and `diff` compare
//! them). What shows those strings to a person escapes them itself. Renderers for
//! new formats should call these rather than write their own.

use std::borrow::Cow;
use std::fmt::Write;

/// Whether `c` must not reach a terminal or a one-line Markdown string as itself:
/// C0 and C1 controls and DEL (`char::is_control`) but a tab, which moves the
/// cursor and can't rewrite a line.
pub fn is_hostile(c: char) -> bool {
    (c.is_control() && c != '\t')
        // Bidirectional marks, embeddings, overrides and isolates reorder what
        // follows them ("trojan source"), the Arabic letter mark included;
        // line/paragraph separators break lines.
        || matches!(
            c,
            '\u{061c}'
                | '\u{200e}'
                | '\u{200f}'
                | '\u{202a}'..='\u{202e}'
                | '\u{2066}'..='\u{2069}'
                | '\u{2028}'
                | '\u{2029}'
        )
        // Zero-width characters and tag characters are invisible: they make two
        // strings that look alike differ, or smuggle text past a reader.
        || matches!(c, '\u{200b}'..='\u{200d}' | '\u{2060}' | '\u{feff}' | '\u{e0000}'..='\u{e007f}')
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

/// `s` for a terminal, line by line: as [`terminal`], but each line break stays
/// one (for messages of several lines, such as an error and its hint).
pub fn terminal_lines(s: &str) -> Cow<'_, str> {
    if !s.chars().any(|c| c != '\n' && is_hostile(c)) {
        return Cow::Borrowed(s);
    }
    let lines: Vec<Cow<'_, str>> = s.split('\n').map(terminal).collect();
    Cow::Owned(lines.join("\n"))
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
    if one_line.is_empty() {
        return "` `".to_string();
    }
    let pad = if one_line.starts_with('`') || one_line.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{one_line}{pad}{fence}")
}

/// `s` as Markdown prose on one line: the code spans it contains (pinaudit's
/// messages put values in backticks) stay code spans, and everywhere else each
/// character that could start HTML, a link, an image or emphasis is
/// backslash-escaped, as is a backtick run that closes nothing.
pub fn md_text(s: &str) -> String {
    let safe = terminal(s).replace(['\n', '\r'], " ");
    let chars: Vec<char> = safe.chars().collect();
    let run_at = |i: usize| chars[i..].iter().take_while(|&&c| c == '`').count();
    let mut out = String::with_capacity(safe.len() + 8);
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '`' {
            let n = run_at(i);
            if let Some(end) = closing_run(&chars, i + n, n) {
                out.extend(&chars[i..end]);
                i = end;
                continue;
            }
            for _ in 0..n {
                out.push_str("\\`");
            }
            i += n;
            continue;
        }
        if matches!(
            c,
            '\\' | '*' | '_' | '[' | ']' | '<' | '>' | '&' | '!' | '~' | '|' | '#'
        ) {
            out.push('\\');
        }
        out.push(c);
        i += 1;
    }
    out
}

/// `s` as HTML prose: the code spans it contains (as [`md_text`] reads
/// them) as `<code>`, everything escaped by [`html`], and no backtick left
/// showing of a span.
pub fn html_text(s: &str) -> String {
    let chars: Vec<char> = s.chars().collect();
    let mut out = String::with_capacity(s.len() + 16);
    let (mut i, mut plain) = (0, 0);
    while i < chars.len() {
        if chars[i] != '`' {
            i += 1;
            continue;
        }
        let n = chars[i..].iter().take_while(|&&c| c == '`').count();
        let Some(end) = closing_run(&chars, i + n, n) else {
            i += n;
            continue;
        };
        out.push_str(&html(&chars[plain..i].iter().collect::<String>()));
        let inner: String = chars[i + n..end - n].iter().collect();
        out.push_str("<code>");
        out.push_str(&html(inner.trim()));
        out.push_str("</code>");
        (i, plain) = (end, end);
    }
    out.push_str(&html(&chars[plain..].iter().collect::<String>()));
    out
}

/// The end of the run of exactly `n` backticks at or after `from` (CommonMark
/// code spans), if there is one.
fn closing_run(chars: &[char], from: usize, n: usize) -> Option<usize> {
    let mut j = from;
    while j < chars.len() {
        if chars[j] == '`' {
            let m = chars[j..].iter().take_while(|&&c| c == '`').count();
            if m == n {
                return Some(j + m);
            }
            j += m;
        } else {
            j += 1;
        }
    }
    None
}

/// `s` as the message of a GitHub Actions workflow command (`::error ...::MSG`):
/// every hostile character as `\u{…}` but line breaks, then the runner's escapes
/// (`%`, CR, LF: actions/toolkit `command.ts`), so a message of several lines
/// stays one command.
pub fn github(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '%' => out.push_str("%25"),
            '\r' => out.push_str("%0D"),
            '\n' => out.push_str("%0A"),
            c if is_hostile(c) => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    out
}

/// Markdown from [`md_code`] or [`md_text`], made fit for a GFM table cell.
///
/// GFM splits a row at every `|` not written `\|`, code spans included, and then
/// drops the backslash of each `\|` before reading the cell's inline Markdown; so
/// every `|` gets one more backslash (prose `\|` becomes `\\|`, which still
/// renders as `|`).
pub fn md_cell(markdown: &str) -> String {
    markdown.replace('|', "\\|")
}

/// `s` as HTML text or a quoted attribute value: `&`, `<`, `>`, `"` and `'` as
/// character references, and every control, escape or bidi character shown as
/// `\u{…}` as for a terminal (a right-to-left override in a label must not
/// reorder the verdict beside it).
pub fn html(s: &str) -> String {
    let visible = terminal(s);
    let mut out = String::with_capacity(visible.len() + 8);
    for c in visible.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
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
    fn invisible_and_reordering_characters_are_shown() {
        for c in [
            '\u{85}',
            '\u{9b}',
            '\u{7f}',
            '\u{061c}',
            '\u{200b}',
            '\u{200d}',
            '\u{2060}',
            '\u{feff}',
            '\u{e0001}',
            '\u{e007f}',
            '\u{2066}',
            '\u{2069}',
        ] {
            let shown = terminal(&format!("a{c}b")).into_owned();
            assert_eq!(shown, format!("a\\u{{{:x}}}b", c as u32));
            assert!(!md_text(&format!("a{c}b")).contains(c));
            assert!(!md_code(&format!("a{c}b")).contains(c));
            assert!(!github(&format!("a{c}b")).contains(c));
        }
        // Visible letters beside them are untouched.
        assert!(matches!(terminal("é ü 中 ✅ \u{e9}"), Cow::Borrowed(_)));
    }

    #[test]
    fn lines_keep_their_breaks() {
        assert_eq!(
            terminal_lines("error: a\u{1b}[2J\n  hint: b\u{202e}"),
            "error: a\\u{1b}[2J\n  hint: b\\u{202e}"
        );
        assert!(matches!(terminal_lines("a\n\tb"), Cow::Borrowed(_)));
    }

    #[test]
    fn github_messages_are_one_command() {
        assert_eq!(github("50% a\r\nb\u{1b}"), "50%25 a%0D%0Ab\\u{1b}");
    }

    #[test]
    fn html_prose_shows_code_spans_as_code_and_escapes_the_rest() {
        assert_eq!(
            html_text("sha256 of `README.md` is <b>`a&b`</b>"),
            "sha256 of <code>README.md</code> is &lt;b&gt;<code>a&amp;b</code>&lt;/b&gt;"
        );
        // A fence longer than the backticks inside, and a lone backtick.
        assert_eq!(html_text("x `` a`b `` y ` z"), "x <code>a`b</code> y ` z");
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
    fn text_is_inert_but_keeps_code_spans() {
        let t = md_text("## pinaudit: ✅ clean\n<!--");
        assert!(!t.contains('\n'));
        assert_eq!(t, "\\#\\# pinaudit: ✅ clean\\\\u{a}\\<\\!--");
        assert_eq!(md_text("`a_b<c>` is *x*"), "`a_b<c>` is \\*x\\*");
        assert_eq!(md_text("a ` b"), "a \\` b");
        assert_eq!(
            md_text("[x](http://e) ![i](u)"),
            "\\[x\\](http://e) \\!\\[i\\](u)"
        );
    }

    #[test]
    fn cells_escape_pipes() {
        assert_eq!(md_cell("`a|b`"), "`a\\|b`");
        assert_eq!(md_cell(&md_text("a|b")), "a\\\\|b");
    }
}
