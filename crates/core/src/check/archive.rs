//! `source-vanished`: the forge lost the pinned repository or commit, and an
//! archive (Software Heritage) stood in for it. The figures are judged against
//! the archived copy by the other checks; this one says the citation now rests
//! on the archive alone, and how to cite the archived copy.

use serde::Serialize;

use crate::finding::{evidence, Code, Finding, Shape};
use crate::provider::archive::Archived;
use crate::provider::DocRef;
use crate::record::{Record, Source};

use super::location::source_location;
use super::revision::Reported;

/// Sources read from an archive.
pub(crate) struct Archive;

impl super::Check for Archive {
    fn evidence(&self) -> &'static [Shape] {
        const SHAPES: &[Shape] = &[
            Shape::of::<SourceVanished<'static>>(),
            Shape::of::<PageVanished<'static>>(),
        ];
        SHAPES
    }
}

evidence! {
    /// `source-vanished` evidence.
    #[derive(Serialize)]
    pub(crate) struct SourceVanished<'a> for(SourceVanished) identity() {
        commit: &'a str,
        path: &'a str,
        /// What the forge said (the repository or the commit is gone).
        forge_said: &'a str,
        /// The archive that holds it (`software-heritage`).
        service: &'static str,
        /// The archived copy's identifier.
        swhid: &'a str,
    }
}

evidence! {
    /// `source-vanished` evidence of a web document read from a capture.
    #[derive(Serialize)]
    pub(crate) struct PageVanished<'a> for(SourceVanished) identity() {
        /// The document's URL (redacted).
        url: String,
        /// What its host said.
        forge_said: &'a str,
        service: &'static str,
        /// The capture used, and when it was taken.
        capture: &'a str,
        time: &'a str,
    }
}

/// The repository as people name it: the clone URL without credentials or `.git`.
pub fn repository_name(remote: &str) -> String {
    let shown = crate::url::redact(remote);
    shown
        .strip_suffix(".git")
        .map(str::to_string)
        .unwrap_or(shown)
}

/// `source-vanished` for source `s`, whose document `r` the forge lost
/// (`forge_said`) and `archived` holds; once per repository and commit, as
/// `revision-missing` is.
pub fn vanished(
    record: &Record,
    s: &Source,
    r: &DocRef,
    archived: &Archived,
    forge_said: &str,
    reported: &mut Reported,
    out: &mut Vec<Finding>,
) {
    let commit = r.commit.as_str().to_string();
    if !reported.insert((r.remote.clone(), Some(commit), Code::SourceVanished)) {
        return;
    }
    let at = &archived.at;
    let message = format!(
        "the forge no longer serves `{}` of `{}`; {} holds it; the figures were checked against the archived copy",
        r.commit.short(),
        repository_name(&r.remote),
        at.name()
    );
    out.push(
        Finding::new(Code::SourceVanished, &record.id, message)
            .source(&s.id)
            .at(source_location(s))
            .evidence(SourceVanished {
                commit: r.commit.as_str(),
                path: &r.path,
                forge_said,
                service: at.service(),
                swhid: at.citation(),
            })
            .hint(format!(
                "cite the archived copy, which outlives the forge: `{}`",
                at.citation()
            )),
    );
}

/// `source-vanished` for web source `s`, whose document at `url` its host no
/// longer serves (`host_said`) and a capture with the recorded bytes holds.
pub fn vanished_page(
    record: &Record,
    s: &Source,
    url: &str,
    archived: &Archived,
    host_said: &str,
    out: &mut Vec<Finding>,
) {
    let at = &archived.at;
    let time = match at {
        crate::provider::archive::ArchiveRef::Wayback { time, .. } => time.as_str(),
        _ => "",
    };
    let message = format!(
        "`{}` is gone from its host; {} holds a capture of {time} with the recorded bytes; the figures were checked against it",
        crate::url::redact(url),
        at.name()
    );
    out.push(
        Finding::new(Code::SourceVanished, &record.id, message)
            .source(&s.id)
            .at(source_location(s))
            .evidence(PageVanished {
                url: crate::url::redact(url),
                forge_said: host_said,
                service: at.service(),
                capture: at.citation(),
                time,
            })
            .hint(format!(
                "cite the capture, which does not change: {}",
                at.citation()
            )),
    );
}
