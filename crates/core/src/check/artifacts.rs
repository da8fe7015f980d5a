//! `unpinned-weights`, `unpinned-runtime`: is what was run named precisely enough
//! to run it again? One finding per artifact, however many figures name it.

use crate::finding::{Code, Finding};
use crate::record::{ArtifactKind, Record};

pub fn check(record: &Record, out: &mut Vec<Finding>) {
    for a in &record.artifacts {
        let (code, message) = match a.kind {
            ArtifactKind::Weights if a.revision.is_none() && a.sha256.is_none() => (
                Code::UnpinnedWeights,
                format!(
                    "weights `{}` are named without a revision or a hash",
                    a.label
                ),
            ),
            ArtifactKind::Runtime if a.revision.is_none() && a.digest.is_none() => (
                Code::UnpinnedRuntime,
                format!(
                    "runtime `{}` is named without a revision or an image digest",
                    a.label
                ),
            ),
            _ => continue,
        };
        out.push(
            Finding::new(code, &record.id, message)
                .with("artifact", a.label.as_str())
                .with("kind", a.kind.as_str()),
        );
    }
}
