//! Findings are data: a stable code, a severity fixed by the code, where it is and
//! the facts behind it. Checks produce them; renderers only render them.

use std::fmt;
use std::str::FromStr;

use serde::Serialize;
use serde_json::{Map, Value};

/// How bad a finding is. Ordered: `Note < Warning < Error`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Note,
    Warning,
    Error,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Note => "note",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

macro_rules! codes {
    ($( $variant:ident = $name:literal, $sev:ident; )*) => {
        /// A finding code, as DESIGN.md names it. Codes are stable: never rename one.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Code { $( $variant, )* }

        impl Code {
            pub const ALL: &'static [Code] = &[ $( Code::$variant, )* ];

            pub fn as_str(self) -> &'static str {
                match self { $( Code::$variant => $name, )* }
            }

            pub fn severity(self) -> Severity {
                match self { $( Code::$variant => Severity::$sev, )* }
            }
        }
    };
}

codes! {
    InvalidRecord = "invalid-record", Error;
    UncitedClaim = "uncited-claim", Error;
    UnpinnedUrl = "unpinned-url", Error;
    RevisionConflict = "revision-conflict", Error;
    MalformedHash = "malformed-hash", Error;
    MissingHash = "missing-hash", Warning;
    UnpinnedWeights = "unpinned-weights", Warning;
    UnpinnedRuntime = "unpinned-runtime", Warning;
    InconsistentValue = "inconsistent-value", Error;
    RepositoryMissing = "repository-missing", Error;
    RevisionMissing = "revision-missing", Error;
    RevisionUnreachable = "revision-unreachable", Warning;
    PathMissing = "path-missing", Error;
    HashMismatch = "hash-mismatch", Error;
    CommitTimeMismatch = "commit-time-mismatch", Warning;
    LineOutOfRange = "line-out-of-range", Error;
    ValueMissing = "value-missing", Error;
    ValueShifted = "value-shifted", Warning;
    UpstreamChanged = "upstream-changed", Note;
    ValueSuperseded = "value-superseded", Warning;
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Code {
    type Err = ();
    fn from_str(s: &str) -> Result<Code, ()> {
        Code::ALL
            .iter()
            .copied()
            .find(|c| c.as_str() == s)
            .ok_or(())
    }
}

impl Serialize for Code {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// Where in a repository (or, for `invalid-record`, in an input file) a finding points.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Location {
    pub repository: Option<String>,
    pub revision: Option<String>,
    pub path: Option<String>,
    pub line: Option<u32>,
}

/// One thing wrong with a record or its sources.
#[derive(Debug, Clone, PartialEq, Serialize)]
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
        }
    }

    pub fn source(mut self, id: impl Into<String>) -> Self {
        self.source = Some(id.into());
        self
    }

    pub fn claim(mut self, label: impl Into<String>) -> Self {
        self.claim = Some(label.into());
        self
    }

    pub fn at(mut self, location: Location) -> Self {
        self.location = location;
        self
    }

    /// Adds one fact to the evidence; `null`-valued facts are kept, they say "unknown".
    pub fn with(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.evidence.insert(key.to_string(), value.into());
        self
    }
}
