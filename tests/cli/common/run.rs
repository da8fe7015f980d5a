//! One run of the `pinaudit` binary and the JSON report it printed.
//!
//! Every run checks that pinaudit did not panic and was not killed: no input
//! may make it panic, whatever else the test asserts.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use assert_cmd::Command;
use serde_json::Value;

/// Writes `name` under `root` (creating its directories) and returns `name`
/// as a relative path.
pub fn write_file(root: &Path, name: &str, contents: impl AsRef<[u8]>) -> PathBuf {
    let path = root.join(name);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).expect("create dirs");
    }
    std::fs::write(&path, contents).expect("write file");
    PathBuf::from(name)
}

/// What one run of the binary produced.
#[derive(Debug)]
pub struct Run {
    pub status: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    pub took: Duration,
}

/// Runs `cmd` to completion and checks that it neither panicked nor was
/// killed (timeout or signal).
pub fn run(cmd: &mut Command) -> Run {
    let started = Instant::now();
    let out = cmd.output().expect("pinaudit runs");
    let run = Run {
        status: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        took: started.elapsed(),
    };
    assert!(
        !run.stderr.contains("panicked"),
        "pinaudit panicked:\n{}",
        run.stderr
    );
    assert!(
        run.status.is_some(),
        "pinaudit was killed (timeout or signal); stderr:\n{}",
        run.stderr
    );
    run
}

/// The findings of `report` with `code`.
pub fn with_code<'r>(report: &'r Value, code: &str) -> Vec<&'r Value> {
    findings(report)
        .iter()
        .filter(|f| f["code"] == code)
        .collect()
}

/// Codes of all findings of `report`, in report order.
pub fn codes(report: &Value) -> Vec<String> {
    findings(report)
        .iter()
        .map(|f| {
            f["code"]
                .as_str()
                .expect("a finding has a code")
                .to_string()
        })
        .collect()
}

fn findings(report: &Value) -> &Vec<Value> {
    report["findings"]
        .as_array()
        .expect("`findings` is an array")
}

/// The element of `report[key]` whose `field` is `value`.
fn find_in<'r>(of: &'r Value, key: &str, field: &str, value: &str) -> Option<&'r Value> {
    of[key]
        .as_array()
        .unwrap_or_else(|| panic!("`{key}` is an array"))
        .iter()
        .find(|v| v[field] == value)
}

impl Run {
    pub fn code(&self) -> i32 {
        self.status.expect("exit status")
    }

    /// Fails with the whole output unless the exit status is `code`.
    pub fn assert_code(&self, code: i32) {
        assert_eq!(
            self.code(),
            code,
            "exit status\nstdout:\n{}\nstderr:\n{}",
            self.stdout,
            self.stderr
        );
    }

    /// The JSON report on stdout (the whole of stdout: nothing else may be there).
    pub fn report(&self) -> Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| {
            panic!(
                "stdout is not one JSON report ({e}):\n{}\nstderr:\n{}",
                self.stdout, self.stderr
            )
        })
    }

    pub fn summary(&self) -> Value {
        self.report()["summary"].clone()
    }

    pub fn findings(&self) -> Vec<Value> {
        findings(&self.report()).clone()
    }

    /// Codes of all findings, in report order.
    pub fn codes(&self) -> Vec<String> {
        codes(&self.report())
    }

    pub fn with_code(&self, code: &str) -> Vec<Value> {
        with_code(&self.report(), code)
            .into_iter()
            .cloned()
            .collect()
    }

    /// The one finding with `code`; fails when there is none or several.
    pub fn only(&self, code: &str) -> Value {
        let found = self.with_code(code);
        assert_eq!(
            found.len(),
            1,
            "expected exactly one `{code}` finding, got {}: {:#?}",
            found.len(),
            self.findings()
        );
        found.into_iter().next().expect("one finding")
    }

    pub fn assert_has(&self, code: &str) {
        assert!(
            self.codes().iter().any(|c| c == code),
            "expected a `{code}` finding, got {:?}\n{}",
            self.codes(),
            self.stdout
        );
    }

    pub fn assert_lacks(&self, code: &str) {
        let found = self.with_code(code);
        assert!(
            found.is_empty(),
            "expected no `{code}` finding, got {found:#?}"
        );
    }

    /// Fails unless the findings are exactly `codes`, in this order.
    pub fn assert_codes(&self, codes: &[&str]) {
        assert_eq!(self.codes(), codes, "findings:\n{}", self.stdout);
    }

    /// A record of the report by id.
    pub fn record(&self, id: &str) -> Option<Value> {
        find_in(&self.report(), "records", "id", id).cloned()
    }

    fn expect_record(&self, record: &str) -> Value {
        self.record(record)
            .unwrap_or_else(|| panic!("no record `{record}`:\n{}", self.stdout))
    }

    /// Source `id` of `record` in the report.
    pub fn source(&self, record: &str, id: &str) -> Value {
        find_in(&self.expect_record(record), "sources", "id", id)
            .cloned()
            .unwrap_or_else(|| panic!("no source `{id}` in `{record}`:\n{}", self.stdout))
    }

    /// Claim `label` of `record` in the report.
    pub fn claim(&self, record: &str, label: &str) -> Value {
        find_in(&self.expect_record(record), "claims", "label", label)
            .cloned()
            .unwrap_or_else(|| panic!("no claim `{label}` in `{record}`:\n{}", self.stdout))
    }
}
