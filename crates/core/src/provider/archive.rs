//! Archives that stand in for a source its forge lost: Software Heritage keeps
//! every object of the public forges it crawls, under git's own ids, so a
//! document at a commit a forge deleted or force-pushed away can still be read
//! (`docs/reference.md`, "Archives"). An archive is asked only when the forge
//! says the repository or the commit is gone, or cannot be reached and the cache
//! lacks the pin; what it answers is judged exactly as a document from git. The
//! Wayback Machine keeps captures of web pages: a cited web document gone from
//! its host is read from a capture whose bytes have the recorded sha256.

use super::{DocRef, Snapshot, Unchecked};

/// Which archive a document was read from, and how to cite the archived copy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArchiveRef {
    /// Software Heritage, by the SWHID of the archived document.
    SoftwareHeritage { swhid: String },
    /// The Wayback Machine: the capture's URL and its time (RFC 3339).
    Wayback { url: String, time: String },
}

impl ArchiveRef {
    /// The service's name in the report (`archive.service`).
    pub fn service(&self) -> &'static str {
        match self {
            ArchiveRef::SoftwareHeritage { .. } => "software-heritage",
            ArchiveRef::Wayback { .. } => "wayback",
        }
    }

    /// The service's name in prose.
    pub fn name(&self) -> &'static str {
        match self {
            ArchiveRef::SoftwareHeritage { .. } => "Software Heritage",
            ArchiveRef::Wayback { .. } => "the Wayback Machine",
        }
    }

    /// The identifier the archived copy is cited by.
    pub fn citation(&self) -> &str {
        match self {
            ArchiveRef::SoftwareHeritage { swhid } => swhid,
            ArchiveRef::Wayback { url, .. } => url,
        }
    }
}

/// A document read from an archive: its bytes were checked against its git
/// blob id before they were handed over.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Archived {
    /// The document, loaded.
    pub snapshot: Snapshot,
    /// The commit's committer time as the archive gives it: seconds since the
    /// epoch and offset in minutes.
    pub commit_time: Option<(i64, i32)>,
    pub at: ArchiveRef,
}

/// What an archive answered for one pinned document.
#[derive(Debug, Clone)]
pub enum ArchiveAnswer {
    /// It holds the document.
    Found(Box<Archived>),
    /// It answered that it does not hold the commit or the path: its words, for
    /// the evidence of the finding that stands.
    NotArchived(String),
    /// It could not be asked, or its answer cannot be used (damaged content, a
    /// rate limit past the deadline, a network failure): the source is unchecked.
    Failed(Unchecked),
    /// Not asked: offline, with nothing of it in the cache.
    NotAsked,
}

/// An archive of git documents.
pub trait Archives {
    /// The document `r` as the archive holds it.
    fn archived(&self, r: &DocRef) -> ArchiveAnswer;
}

/// An archive of web pages.
pub trait WebArchives {
    /// A capture of `url` whose raw bytes have the sha256 `sha256`, the one
    /// nearest `near` (RFC 3339, or a date) when several do.
    fn capture(&self, url: &str, sha256: &str, near: Option<&str>) -> ArchiveAnswer;
}
