//! Findings are data: a stable code, a severity fixed by the code, where it is and
//! the facts behind it. Checks produce them; renderers only render them.

use serde_json::{Map, Value};

pub use crate::codes::{Code, Severity};

/// The evidence of one finding code (or one shape of it): a `Serialize` struct
/// whose fields are the report's `evidence` keys, in report order. Declared with
/// [`evidence!`], which names the codes it is for, lists the fields and names the
/// identity ones; the check file lists its structs in [`crate::check::Check`].
pub trait Evidence: serde::Serialize {
    /// The struct's name.
    const NAME: &'static str;
    /// The codes whose findings carry this evidence.
    const CODES: &'static [Code];
    /// Every field, as the report names it, in order.
    const FIELDS: &'static [&'static str];
    /// The fields that say *which* thing of a record the finding is about (an
    /// artifact, a JSON pointer, a reference), as opposed to what was observed:
    /// the fingerprint hashes these ([`crate::fingerprint`]). Renaming one changes
    /// the fingerprints users keep in their baselines, which a test catches.
    const IDENTITY: &'static [&'static str];
}

/// What a check file says about one of its evidence structs
/// ([`crate::check::Check::evidence`]).
#[derive(Debug, Clone, Copy)]
pub struct Shape {
    pub name: &'static str,
    pub codes: &'static [Code],
    pub fields: &'static [&'static str],
    pub identity: &'static [&'static str],
}

impl Shape {
    pub const fn of<E: Evidence>() -> Shape {
        Shape {
            name: E::NAME,
            codes: E::CODES,
            fields: E::FIELDS,
            identity: E::IDENTITY,
        }
    }
}

/// Declares an evidence struct and its [`Evidence`] impl:
///
/// ```ignore
/// evidence! {
///     /// `unpinned-weights` evidence.
///     #[derive(Serialize)]
///     pub(crate) struct Unpinned<'a> for(UnpinnedWeights) identity(artifact, kind) {
///         artifact: &'a str,
///         kind: &'a str,
///     }
/// }
/// ```
///
/// Fields keep their Rust names in the report (no `serde(rename)`), so the
/// listed names are the keys.
macro_rules! evidence {
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident $(<$lt:lifetime>)? for($($code:ident),+ $(,)?) identity($($id:ident),* $(,)?) {
            $( $(#[$fmeta:meta])* $fvis:vis $field:ident : $ty:ty ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        $vis struct $name $(<$lt>)? {
            $( $(#[$fmeta])* $fvis $field : $ty, )*
        }
        impl $(<$lt>)? $crate::finding::Evidence for $name $(<$lt>)? {
            const NAME: &'static str = stringify!($name);
            const CODES: &'static [$crate::codes::Code] = &[$($crate::codes::Code::$code),+];
            const FIELDS: &'static [&'static str] = &[$(stringify!($field)),*];
            const IDENTITY: &'static [&'static str] = &[$(stringify!($id)),*];
        }
    };
}
pub(crate) use evidence;

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

    /// Adds the facts of a typed evidence struct (one per code, or per shape of a
    /// code, next to its check), in field order.
    pub(crate) fn evidence<E: Evidence>(mut self, facts: E) -> Self {
        debug_assert!(
            E::CODES.contains(&self.code),
            "`{}` evidence on a `{}` finding",
            E::NAME,
            self.code
        );
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

    /// The evidence read back as its struct (typed access to a finding's facts):
    /// `None` when the finding's evidence is not of that shape.
    pub(crate) fn evidence_as<E: Evidence + serde::de::DeserializeOwned>(&self) -> Option<E> {
        serde_json::from_value(Value::Object(self.evidence.clone())).ok()
    }

    /// Replaces the evidence with the facts of `facts`.
    pub(crate) fn set_evidence<E: Evidence>(&mut self, facts: E) {
        if let Ok(Value::Object(map)) = serde_json::to_value(facts) {
            self.evidence = map;
        }
    }

    /// Adds one fact to the evidence; `null`-valued facts are kept, they say "unknown".
    /// For findings raised outside the checks (the inputs the binary reads); a
    /// check writes its code's [`Evidence`] struct instead.
    pub fn with(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.evidence.insert(key.to_string(), value.into());
        self
    }
}
