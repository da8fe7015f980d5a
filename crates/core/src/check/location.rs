//! Where a source or a claim points, as a finding's `location`.

use crate::finding::Location;
use std::path::Path;

use crate::record::{Claim, Source};

pub(crate) fn source_location(s: &Source) -> Location {
    let at = s.located();
    Location {
        repository: at.repository,
        revision: at.revision.map(|r| r.to_string()),
        path: at.path,
        line: None,
    }
}

pub(crate) fn claim_location(s: &Source, c: &Claim) -> Location {
    Location {
        line: c.lines.map(|l| l.first()),
        ..source_location(s)
    }
}

/// `git show COMMIT:PATH | sha256sum` for a source, when it names both.
pub(crate) fn hash_command(s: &Source) -> Option<String> {
    // A web document is hashed as served.
    if let Some(url) = crate::provider::web::web_url(s) {
        let shown = crate::url::redact(&url);
        return Some(format!("curl -sL {} | sha256sum", shell_quote(&shown)));
    }
    let at = s.located();
    let rev = at.revision?.to_string();
    let path = at.path?;
    Some(format!(
        "git show {}:{} | sha256sum",
        crate::record::short_rev(&rev),
        shell_quote(&path)
    ))
}

/// What `pinaudit show` takes to show `line` of a source's document at its pinned
/// revision: `PINFILE#LABEL` for a claim of a pin file, else the source's URL with
/// a line anchor.
pub(crate) fn show_target(
    file: &Path,
    s: &Source,
    claim: Option<&Claim>,
    line: u32,
) -> Option<String> {
    let is_pin_file = file
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("json"));
    let target = match claim {
        Some(c) if is_pin_file => format!("{}#{}", file.display(), c.label),
        _ => {
            let url = s.url.as_deref()?;
            let base = url.split('#').next().unwrap_or(url);
            format!("{base}#L{line}")
        }
    };
    Some(shell_quote(&target))
}

/// Quotes text for a POSIX shell when it needs it.
pub fn shell_quote(text: &str) -> String {
    // By byte (a multi-byte character is never plain): this runs for the hint
    // of every drift finding.
    let plain = !text.is_empty()
        && text.bytes().all(|b| {
            b.is_ascii_alphanumeric()
                || matches!(
                    b,
                    b'/' | b'.' | b'_' | b'-' | b':' | b'@' | b'%' | b'+' | b'=' | b','
                )
        });
    if plain {
        text.to_string()
    } else {
        format!("'{}'", text.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::shell_quote;

    /// The byte test says what the character test it replaced said.
    #[test]
    fn shell_quote_quotes_what_the_shell_would_split_or_expand() {
        let by_char = |text: &str| {
            !text.is_empty()
                && text
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "/._-:@%+=,".contains(c))
        };
        for text in [
            "",
            "docs/a.md",
            "https://github.com/o/r/blob/0123abc/README.md#L16",
            "pins/rec0.json#c1",
            "a b",
            "it's",
            "x;rm",
            "é.md",
            "日本/a.md",
            "$HOME",
            "a*b",
            "~user",
        ] {
            let quoted = shell_quote(text);
            assert_eq!(quoted == text, by_char(text), "{text:?} -> {quoted}");
            if quoted != text {
                assert!(
                    quoted.starts_with('\'') && quoted.ends_with('\''),
                    "{quoted}"
                );
            }
        }
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
    }
}
