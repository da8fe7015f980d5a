//! The one way tests run the binary: [`pinaudit`] with a fixed environment, in
//! a [`Scratch`] directory that holds a test's inputs, its `cache/` and
//! whatever pinaudit writes.
//!
//! Inputs are passed by paths relative to the scratch directory, so reports
//! name `pins/x.json`, not a random absolute path. (It replaces three helpers
//! that differed only in their environment and timeout: the offline tests'
//! `Fixture`, the transport tests' `Workspace` and the seed tests' `Workdir`.)

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::time::Duration;

use assert_cmd::Command;
use serde_json::Value;
use tempfile::TempDir;

use super::run::{run, write_file, Run};

/// The binary with everything pinaudit reads from the environment fixed: no
/// `PINAUDIT_CACHE` or `XDG_CACHE_HOME`, no `GITHUB_TOKEN` or `SWH_TOKEN`, no archive
/// (`PINAUDIT_ARCHIVE=none`), no `NO_COLOR` (tests that want it set
/// it), `SOURCE_DATE_EPOCH=0`, a fixed `PINAUDIT_CACHE_KEY` (never the user's
/// key file), and the machine's git configuration (credential helpers,
/// `insteadOf` rules) kept out. The timeout makes a hang fail the test instead
/// of stalling the suite; it is far above any run on loopback.
pub fn pinaudit() -> Command {
    let mut cmd = Command::cargo_bin("pinaudit").expect("the pinaudit binary is built");
    cmd.env_remove("PINAUDIT_CACHE")
        // The default cache is the user's when no pinaudit.toml is found: under
        // the `HOME` a test sets, never the machine's.
        .env_remove("XDG_CACHE_HOME")
        .env_remove("GITHUB_TOKEN")
        .env_remove("SWH_TOKEN")
        // No archive is asked unless a test points one at loopback
        // (`tests/cli/archive.rs`): tests send nothing past 127.0.0.0/8.
        .env("PINAUDIT_ARCHIVE", "none")
        .env_remove("NO_COLOR")
        .env("SOURCE_DATE_EPOCH", "0")
        // Never the user's cache key file (tests of the key file remove it).
        .env("PINAUDIT_CACHE_KEY", "pinaudit tests")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .timeout(Duration::from_secs(60));
    cmd
}

/// A temporary directory pinaudit runs in, with its cache at `cache/`.
pub struct Scratch {
    dir: TempDir,
}

impl Default for Scratch {
    fn default() -> Self {
        Scratch::new()
    }
}

impl Scratch {
    pub fn new() -> Scratch {
        Scratch {
            dir: tempfile::tempdir().expect("a temp dir"),
        }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// `text` with this directory's path, which changes from run to run,
    /// replaced by `[scratch]`.
    pub fn redact(&self, text: &str) -> String {
        text.replace(&self.path().display().to_string(), "[scratch]")
    }

    /// The cache directory (`--cache cache`, relative to the scratch directory).
    pub fn cache(&self) -> PathBuf {
        self.path().join("cache")
    }

    /// Where the mirror of `https://github.com/NAME` lives in the cache: keyed
    /// by the original URL, never by the rewritten one.
    pub fn mirror(&self, name: &str) -> PathBuf {
        self.cache()
            .join("git/github.com")
            .join(format!("{name}.git"))
    }

    /// Writes `name` (creating its directories); returns it as a relative path.
    pub fn write(&self, name: &str, contents: impl AsRef<[u8]>) -> PathBuf {
        write_file(self.path(), name, contents)
    }

    /// Writes `value` as pretty JSON to `name`.
    pub fn write_json(&self, name: &str, value: &Value) -> PathBuf {
        self.write(name, serde_json::to_string_pretty(value).unwrap() + "\n")
    }

    /// Writes a baseline report with no findings (a run with `--baseline`
    /// keeps no report fragments, so the record memo answers); returns its
    /// path.
    pub fn empty_baseline(&self) -> String {
        self.write(
            "empty-baseline.json",
            r#"{"schema": "pinaudit/report/v1", "findings": []}"#,
        )
        .display()
        .to_string()
    }

    /// Writes `pins/ID.json`; returns the path relative to the directory.
    pub fn write_pin(&self, pin: &Value) -> String {
        let id = pin["id"].as_str().unwrap_or("record");
        let rel = format!("pins/{id}.json");
        self.write_json(&rel, pin);
        rel
    }

    /// [`pinaudit`] in this directory, with `HOME` here too.
    pub fn cmd(&self) -> Command {
        let mut cmd = pinaudit();
        cmd.current_dir(self.path()).env("HOME", self.path());
        cmd
    }

    /// `pinaudit COMMAND --cache cache` in this directory; callers add the rest.
    pub fn cached(&self, command: &str) -> Command {
        let mut cmd = self.cmd();
        cmd.args([command, "--cache", "cache"]);
        cmd
    }

    /// Runs `pinaudit ARGS...` in this directory.
    pub fn run<I, S>(&self, args: I) -> Run
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        run(self.cmd().args(args))
    }

    /// `pinaudit audit --cache cache --format json --timeout 10 ARGS...`.
    ///
    /// 10 s is far above any loopback answer and still fails a hang quickly.
    pub fn audit<I, S>(&self, args: I) -> Run
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.audit_with_timeout(10, args)
    }

    /// [`Self::audit`] with `--timeout SECS` (clap refuses a repeated flag).
    pub fn audit_with_timeout<I, S>(&self, secs: u64, args: I) -> Run
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let mut all: Vec<OsString> = ["audit", "--cache", "cache", "--format", "json", "--timeout"]
            .iter()
            .map(OsString::from)
            .collect();
        all.push(secs.to_string().into());
        all.extend(args.into_iter().map(|a| a.as_ref().to_os_string()));
        self.run(all)
    }

    /// `pinaudit audit --offline --cache cache --format json ARGS...`.
    pub fn audit_offline<I, S>(&self, args: I) -> Run
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let mut cmd = self.cached("audit");
        cmd.args(["--offline", "--format", "json"]).args(args);
        run(&mut cmd)
    }

    /// Writes `pin` to `pins/ID.json` and audits that file alone, offline.
    pub fn audit_pin(&self, pin: &Value) -> Run {
        let file = self.write_pin(pin);
        self.audit_offline([file])
    }

    /// Writes a record document and audits it alone, offline.
    pub fn audit_doc(&self, name: &str, text: &str) -> Run {
        let file = self.write(name, text);
        self.audit_offline([file])
    }
}
