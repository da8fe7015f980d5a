//! `unpinned-weights`, `unpinned-runtime`: is what was run named precisely enough
//! to run it again? One finding per artifact, however many figures name it.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::finding::{evidence, Code, Finding, Shape};
use crate::record::{ArtifactKind, Record};

evidence! {
    /// `unpinned-weights` and `unpinned-runtime` evidence: the artifact, and for
    /// weights whose model repository could be read, the pin to adopt
    /// ([`super::weights`] adds it).
    #[derive(Debug, Serialize, Deserialize)]
    pub(crate) struct Unpinned for(UnpinnedWeights, UnpinnedRuntime) identity(artifact, kind) {
        pub(crate) artifact: String,
        pub(crate) kind: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub(crate) suggested_pin: Option<SuggestedPin>,
    }
}

/// The pin an `unpinned-weights` finding suggests: the model repository's head
/// and the weight files there.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct SuggestedPin {
    pub(crate) repository: String,
    pub(crate) revision: String,
    pub(crate) files: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) manifest_sha256: Option<String>,
}

/// Artifacts named precisely enough to run again.
pub(crate) struct Artifacts;

impl super::Check for Artifacts {
    fn evidence(&self) -> &'static [Shape] {
        const SHAPES: &[Shape] = &[Shape::of::<Unpinned>()];
        SHAPES
    }

    fn record(&self, record: &Record, out: &mut Vec<Finding>) {
        check(record, out);
    }
}

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
        out.push(Finding::new(code, &record.id, message).evidence(Unpinned {
            artifact: a.label.clone(),
            kind: a.kind.as_str().to_string(),
            suggested_pin: None,
        }));
    }
}
