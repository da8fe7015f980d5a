//! Where a source or a claim points, as a finding's `location`.

use crate::finding::Location;
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
