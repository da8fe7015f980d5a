//! Findings are data: a stable code, a severity fixed by the code, where it is and
//! the facts behind it. Checks produce them; renderers only render them.

use serde_json::{Map, Value};

pub use crate::codes::{Code, Severity};

/// Where in a repository (or, for `invalid-record`, in an input file) a finding points.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Location {
    pub repository: Option<String>,
    pub revision: Option<String>,
    pub path: Option<String>,
    pub line: Option<u32>,
}

/// One thing wrong with a record or its sources.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    pub code: Code,
    pub severity: Severity,
    pub record: String,
    /// The input file of the record (added in v1: record ids need not be unique).
    pub file: Option<String>,
    pub source: Option<String>,
    pub claim: Option<String>,
    pub message: String,
    pub location: Location,
    pub evidence: Map<String, Value>,
    /// Advice with the real commit, path and target filled in; the code's hint
    /// when the check had nothing to add.
    pub hint: Option<String>,
    /// Stable identity ([`crate::fingerprint`]), set when the audit finishes.
    pub fingerprint: Option<String>,
    /// Already in the `--baseline` report: shown, but not counted.
    pub baseline: bool,
    /// Ignored by the configuration, with its reason: shown, but not counted.
    pub ignored: Option<String>,
}

impl Finding {
    pub fn new(code: Code, record: impl Into<String>, message: impl Into<String>) -> Finding {
        Finding {
            code,
            severity: code.severity(),
            record: record.into(),
            file: None,
            source: None,
            claim: None,
            message: message.into(),
            location: Location::default(),
            evidence: Map::new(),
            hint: None,
            fingerprint: None,
            baseline: false,
            ignored: None,
        }
    }

    /// Whether the finding counts toward the exit status: not when the baseline
    /// already had it, nor when the configuration ignores it.
    pub(crate) fn counts(&self) -> bool {
        !self.baseline && self.ignored.is_none()
    }

    /// Advice with the facts filled in.
    pub(crate) fn hint(mut self, text: impl Into<String>) -> Self {
        self.hint = Some(text.into());
        self
    }

    /// [`Self::hint`] when there is advice with facts to give.
    pub(crate) fn with_hint(mut self, text: Option<String>) -> Self {
        if text.is_some() {
            self.hint = text;
        }
        self
    }

    /// The advice to show: the check's own, else the code's.
    pub fn hint_text(&self) -> &str {
        self.hint.as_deref().unwrap_or(self.code.meta().hint)
    }

    pub fn source(mut self, id: impl Into<String>) -> Self {
        self.source = Some(id.into());
        self
    }

    pub(crate) fn claim(mut self, label: impl Into<String>) -> Self {
        self.claim = Some(label.into());
        self
    }

    pub fn at(mut self, location: Location) -> Self {
        self.location = location;
        self
    }

    /// Adds the facts of a typed evidence struct (one per code, next to its
    /// check), in field order.
    pub(crate) fn evidence(mut self, facts: impl serde::Serialize) -> Self {
        if let Ok(Value::Object(map)) = serde_json::to_value(facts) {
            if self.evidence.is_empty() {
                // The same map, in the same order, without inserting every
                // key again.
                self.evidence = map;
            } else {
                self.evidence.extend(map);
            }
        }
        self
    }

    /// Adds one fact to the evidence; `null`-valued facts are kept, they say "unknown".
    pub fn with(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.evidence.insert(key.to_string(), value.into());
        self
    }
}
