//! Where a source or a claim points, as a finding's `location`.

use crate::finding::Location;
use std::path::Path;

use crate::record::{Claim, Source};

pub fn source_location(s: &Source) -> Location {
    Location {
        repository: s.repository.clone(),
        revision: s.revision.as_ref().map(|r| r.to_string()),
        path: s.path.clone(),
        line: None,
    }
}

pub fn claim_location(s: &Source, c: &Claim) -> Location {
    Location {
        line: c.lines.map(|l| l.first()),
        ..source_location(s)
    }
}

/// `git show COMMIT:PATH | sha256sum` for a source, when it names both.
pub fn hash_command(s: &Source) -> Option<String> {
    // A web document is hashed as served (issue 11).
    if let Some(url) = crate::provider::http::web_url(s) {
        let shown = crate::url::redact(&url);
        return Some(format!("curl -sL {} | sha256sum", shell_quote(&shown)));
    }
    let rev = s.revision.as_ref()?.to_string();
    let path = s.path.as_deref()?;
    Some(format!(
        "git show {}:{} | sha256sum",
        crate::record::short_rev(&rev),
        shell_quote(path)
    ))
}

/// What `pinaudit show` takes to show `line` of a source's document at its pinned
/// revision: `PINFILE#LABEL` for a claim of a pin file, else the source's URL with
/// a line anchor.
pub fn show_target(file: &Path, s: &Source, claim: Option<&Claim>, line: u32) -> Option<String> {
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
    let plain = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-:@%+=,".contains(c));
    if plain {
        text.to_string()
    } else {
        format!("'{}'", text.replace('\'', "'\\''"))
    }
}
