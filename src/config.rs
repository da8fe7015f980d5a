//! `pinaudit.toml`: the settings a scheduled re-check would otherwise
//! repeat on every call (inputs, cache, rewrite rules, `fail-on`, jobs, timeout,
//! the fetch budgets `deadline`, `max-fetch-mib`, `max-fetch-objects` and `max-refs-mib`, exclude
//! globs), per-code severity overrides, and ignores with a reason.
//!
//! The file is found by walking up from the current directory (or named with
//! `--config FILE`; `--no-config` skips it). Flags win over the file, the file
//! over the defaults; [`Effective`] keeps where each value came from, for
//! `pinaudit config`. The file is read strictly: an unknown key or a bad value is
//! an error naming the file, line and key, with a "did you mean" for near misses,
//! because a silently ignored misspelt setting is how a CI gate stops gating.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

use crate::audit::{FailOn, Ignore};
use crate::cli::{ArchiveChoice, AuditArgs, ConfigChoice, FetchArgs};
use crate::finding::{Code, Severity};

/// The file's name, looked for in the current directory and its ancestors.
pub(crate) const FILE_NAME: &str = "pinaudit.toml";

/// Every key the file knows, top level and in tables (for "did you mean").
const KEYS: &[&str] = &[
    "inputs",
    "cache",
    "rewrite",
    "fail-on",
    "jobs",
    "timeout",
    "deadline",
    "max-fetch-mib",
    "max-fetch-objects",
    "max-refs-mib",
    "exclude",
    "archive",
    "swh-url",
    "wayback-url",
    "severity",
    "ignore",
    "code",
    "record",
    "source",
    "claim",
    "reason",
];

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct File {
    inputs: Option<Vec<PathBuf>>,
    cache: Option<PathBuf>,
    rewrite: Option<Vec<String>>,
    fail_on: Option<Spanned<String>>,
    jobs: Option<Spanned<u16>>,
    timeout: Option<Spanned<u64>>,
    deadline: Option<Spanned<u64>>,
    max_fetch_mib: Option<Spanned<u64>>,
    max_fetch_objects: Option<Spanned<u64>>,
    max_refs_mib: Option<Spanned<u64>>,
    exclude: Option<Vec<String>>,
    archive: Option<Spanned<String>>,
    swh_url: Option<String>,
    wayback_url: Option<String>,
    #[serde(default)]
    severity: BTreeMap<Spanned<String>, Spanned<String>>,
    #[serde(default)]
    ignore: Vec<IgnoreEntry>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct IgnoreEntry {
    code: Spanned<String>,
    record: String,
    source: Option<String>,
    claim: Option<String>,
    reason: Option<String>,
}

/// A configuration file that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ConfigError {
    pub(crate) file: PathBuf,
    pub(crate) line: Option<usize>,
    pub(crate) key: Option<String>,
    pub(crate) message: String,
    pub(crate) hint: Option<String>,
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "`{}`", self.file.display())?;
        if let Some(l) = self.line {
            write!(f, " line {l}")?;
        }
        if let Some(k) = &self.key {
            write!(f, ": key `{k}`")?;
        }
        write!(f, ": {}", self.message)
    }
}

/// Where a setting's value came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Origin {
    Default,
    File(PathBuf),
    Flag,
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Origin::Default => f.write_str("default"),
            Origin::File(p) => write!(f, "{}", p.display()),
            Origin::Flag => f.write_str("command line or environment"),
        }
    }
}

/// One setting with its origin.
#[derive(Debug, Clone)]
pub(crate) struct Setting<T> {
    pub(crate) value: T,
    pub(crate) origin: Origin,
}

impl<T> Setting<T> {
    fn default(value: T) -> Setting<T> {
        Setting {
            value,
            origin: Origin::Default,
        }
    }
}

/// The configuration file, read and checked.
#[derive(Debug, Clone, Default)]
pub(crate) struct Config {
    /// The file it came from; `None` when there was none.
    pub(crate) file: Option<PathBuf>,
    pub(crate) inputs: Option<Vec<PathBuf>>,
    pub(crate) cache: Option<PathBuf>,
    pub(crate) rewrite: Option<Vec<String>>,
    pub(crate) fail_on: Option<FailOn>,
    pub(crate) jobs: Option<u16>,
    pub(crate) timeout: Option<u64>,
    pub(crate) deadline: Option<u64>,
    pub(crate) max_fetch_mib: Option<u64>,
    pub(crate) max_fetch_objects: Option<u64>,
    pub(crate) max_refs_mib: Option<u64>,
    pub(crate) exclude: Option<Vec<String>>,
    pub(crate) archive: Option<ArchiveChoice>,
    /// The Software Heritage API (`swh-url`).
    pub(crate) swh_url: Option<String>,
    /// The Wayback Machine (`wayback-url`).
    pub(crate) wayback_url: Option<String>,
    pub(crate) severity: BTreeMap<Code, Severity>,
    pub(crate) ignores: Vec<Ignore>,
}

/// The first `pinaudit.toml` in `dir` or an ancestor. One in `dir` itself is
/// returned as a relative name, so that relative paths in it stay as written.
pub(crate) fn discover(dir: &Path) -> Option<PathBuf> {
    if dir.join(FILE_NAME).is_file() {
        return Some(PathBuf::from(FILE_NAME));
    }
    let abs = std::fs::canonicalize(dir).ok()?;
    abs.ancestors()
        .skip(1)
        .map(|d| d.join(FILE_NAME))
        .find(|p| p.is_file())
}

/// The 1-based line of a byte offset.
fn line_of(text: &str, offset: usize) -> usize {
    text.get(..offset)
        .map_or(1, |t| t.matches('\n').count() + 1)
}

/// The closest known key, when it is close enough to be a typo.
fn did_you_mean(key: &str, known: &[&str]) -> Option<String> {
    known
        .iter()
        .map(|k| (strsim::jaro_winkler(key, k), *k))
        .filter(|(score, _)| *score > 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, k)| format!("did you mean `{k}`?"))
}

/// The text of a configuration file being parsed and its name, for errors
/// that name the file, the line and the key.
struct At<'a> {
    text: &'a str,
    path: &'a Path,
}

impl At<'_> {
    fn err(
        &self,
        span: Option<std::ops::Range<usize>>,
        key: Option<String>,
        message: String,
        hint: Option<String>,
    ) -> ConfigError {
        ConfigError {
            file: self.path.to_path_buf(),
            line: span.map(|s| line_of(self.text, s.start)),
            key,
            message,
            hint,
        }
    }

    /// The file's TOML, read strictly: an unknown key gets a "did you mean".
    fn deserialize(&self) -> Result<File, ConfigError> {
        let text = self.text;
        toml::from_str(text).map_err(|e| {
            let message = e.message().trim().to_string();
            // serde says "unknown field `revison`, expected one of …".
            if let Some(rest) = message.strip_prefix("unknown field `") {
                let key = rest.split('`').next().unwrap_or("").to_string();
                let hint = did_you_mean(&key, KEYS)
                    .or_else(|| Some(format!("known keys: {}", KEYS.join(", "))));
                return self.err(e.span(), Some(key), "unknown key".into(), hint);
            }
            // Otherwise name the key written at the start of the offending line.
            let key = e.span().and_then(|s| {
                let start = text.get(..s.start)?.rfind('\n').map_or(0, |i| i + 1);
                let line = text.get(start..)?.lines().next()?;
                let k = line.split('=').next()?.trim();
                (!k.is_empty() && line.contains('=')).then(|| k.to_string())
            });
            self.err(e.span(), key, message, None)
        })
    }

    /// The numbers must lie in the same ranges as the flags'.
    fn check_ranges(&self, file: &File) -> Result<(), ConfigError> {
        if let Some(j) = &file.jobs {
            if !(1..=64).contains(j.get_ref()) {
                return Err(self.err(
                    Some(j.span()),
                    Some("jobs".into()),
                    format!("`{}` is not in 1..=64", j.get_ref()),
                    None,
                ));
            }
        }
        let bounded = [
            (&file.timeout, "timeout", 3600, " seconds"),
            (&file.deadline, "deadline", 86_400, " seconds"),
            (&file.max_fetch_mib, "max-fetch-mib", 1_048_576, " MiB"),
            (
                &file.max_fetch_objects,
                "max-fetch-objects",
                1_000_000_000,
                " objects",
            ),
            (&file.max_refs_mib, "max-refs-mib", 65_536, " MiB"),
        ];
        for (value, key, most, unit) in bounded {
            if let Some(v) = value {
                if !(1..=most).contains(v.get_ref()) {
                    return Err(self.err(
                        Some(v.span()),
                        Some(key.into()),
                        format!("`{}` is not in 1..={most}{unit}", v.get_ref()),
                        None,
                    ));
                }
            }
        }
        Ok(())
    }

    fn code(&self, s: &Spanned<String>, key: &str) -> Result<Code, ConfigError> {
        s.get_ref().parse::<Code>().map_err(|()| {
            let codes: Vec<&str> = Code::ALL.iter().map(|c| c.as_str()).collect();
            self.err(
                Some(s.span()),
                Some(key.to_string()),
                format!("unknown finding code `{}`", s.get_ref()),
                did_you_mean(s.get_ref(), &codes),
            )
        })
    }

    /// The `[severity]` table: finding code to severity.
    fn severity(
        &self,
        table: &BTreeMap<Spanned<String>, Spanned<String>>,
    ) -> Result<BTreeMap<Code, Severity>, ConfigError> {
        let mut severity = BTreeMap::new();
        for (code, sev) in table {
            let c = self.code(code, &format!("severity.{}", code.get_ref()))?;
            let s = match sev.get_ref().as_str() {
                "error" => Severity::Error,
                "warning" => Severity::Warning,
                "note" => Severity::Note,
                other => {
                    return Err(self.err(
                        Some(sev.span()),
                        Some(format!("severity.{}", code.get_ref())),
                        format!("`{other}` is not a severity"),
                        Some("one of error, warning, note".into()),
                    ))
                }
            };
            severity.insert(c, s);
        }
        Ok(severity)
    }

    /// The `[[ignore]]` entries, each with its reason.
    fn ignores(&self, entries: Vec<IgnoreEntry>) -> Result<Vec<Ignore>, ConfigError> {
        let mut ignores = Vec::new();
        for i in entries {
            let code = self.code(&i.code, "ignore.code")?;
            let reason = i.reason.filter(|r| !r.trim().is_empty()).ok_or_else(|| {
                self.err(
                    Some(i.code.span()),
                    Some("ignore.reason".into()),
                    "an ignore must give a `reason`".into(),
                    Some("say why the finding is acceptable, e.g. reason = \"upstream fixed the typo\"".into()),
                )
            })?;
            if i.source.is_some() && i.claim.is_some() {
                return Err(self.err(
                    Some(i.code.span()),
                    Some("ignore".into()),
                    "an ignore names a `source` or a `claim`, not both".into(),
                    None,
                ));
            }
            ignores.push(Ignore {
                code,
                record: i.record,
                source: i.source,
                claim: i.claim,
                reason,
            });
        }
        Ok(ignores)
    }
}

impl Config {
    /// Reads a configuration file.
    pub(crate) fn read(path: &Path) -> Result<Config, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|e| ConfigError {
            file: path.to_path_buf(),
            line: None,
            key: None,
            message: format!("cannot read it: {e}"),
            hint: None,
        })?;
        Config::parse(&text, path)
    }

    /// Parses a configuration (`path` names it in errors and anchors its paths).
    pub fn parse(text: &str, path: &Path) -> Result<Config, ConfigError> {
        let at = At { text, path };
        let file = at.deserialize()?;
        at.check_ranges(&file)?;
        let fail_on = match &file.fail_on {
            Some(s) => Some(
                <FailOn as clap::ValueEnum>::from_str(s.get_ref(), false).map_err(|_| {
                    at.err(
                        Some(s.span()),
                        Some("fail-on".into()),
                        format!("`{}` is not a severity", s.get_ref()),
                        Some("one of error, warning, note, never".into()),
                    )
                })?,
            ),
            None => None,
        };
        let archive = match &file.archive {
            Some(a) => Some(crate::cli::parse_archive(a.get_ref()).map_err(|message| {
                at.err(Some(a.span()), Some("archive".into()), message, None)
            })?),
            None => None,
        };
        let severity = at.severity(&file.severity)?;
        let ignores = at.ignores(file.ignore)?;
        let anchor = |p: PathBuf| match path.parent() {
            Some(dir) if !dir.as_os_str().is_empty() && p.is_relative() => dir.join(p),
            _ => p,
        };
        // A rewrite rule whose target is a relative path (`FROM=forge/`: no scheme,
        // no scp-like `host:`) points below the file too.
        let anchor_rule = |rule: String| match rule.split_once('=') {
            Some((from, to)) if !to.is_empty() && !to.contains(':') && !to.starts_with('/') => {
                let mut target = anchor(PathBuf::from(to)).to_string_lossy().into_owned();
                if to.ends_with('/') && !target.ends_with('/') {
                    target.push('/');
                }
                format!("{from}={target}")
            }
            _ => rule,
        };
        Ok(Config {
            file: Some(path.to_path_buf()),
            inputs: file.inputs.map(|v| v.into_iter().map(anchor).collect()),
            cache: file.cache.map(anchor),
            rewrite: file
                .rewrite
                .map(|v| v.into_iter().map(anchor_rule).collect()),
            fail_on,
            jobs: file.jobs.map(Spanned::into_inner),
            timeout: file.timeout.map(Spanned::into_inner),
            deadline: file.deadline.map(Spanned::into_inner),
            max_fetch_mib: file.max_fetch_mib.map(Spanned::into_inner),
            max_fetch_objects: file.max_fetch_objects.map(Spanned::into_inner),
            max_refs_mib: file.max_refs_mib.map(Spanned::into_inner),
            exclude: file.exclude,
            archive,
            swh_url: file.swh_url,
            wayback_url: file.wayback_url,
            severity,
            ignores,
        })
    }

    /// The configuration for a command: `--no-config` gives none, `--config FILE`
    /// that file, else the first `pinaudit.toml` walking up from the current
    /// directory.
    pub(crate) fn load(choice: &ConfigChoice) -> Result<Config, ConfigError> {
        if choice.none {
            return Ok(Config::default());
        }
        match &choice.file {
            Some(p) => Config::read(p),
            None => match std::env::current_dir().ok().and_then(|d| discover(&d)) {
                Some(p) => Config::read(&p),
                None => Ok(Config::default()),
            },
        }
    }

    fn origin(&self) -> Origin {
        self.file.clone().map_or(Origin::Default, Origin::File)
    }

    /// A setting: the flag when given, else the file's, else the default.
    pub(crate) fn pick<T: Clone>(
        &self,
        flag: Option<T>,
        file: &Option<T>,
        default: impl FnOnce() -> T,
    ) -> Setting<T> {
        match (flag, file) {
            (Some(v), _) => Setting {
                value: v,
                origin: Origin::Flag,
            },
            (None, Some(v)) => Setting {
                value: v.clone(),
                origin: self.origin(),
            },
            (None, None) => Setting::default(default()),
        }
    }

    /// The cache when neither a flag nor the file names one: `cache/` beside
    /// the configuration file, else the user's cache directory; never a fresh
    /// `./cache` wherever one happens to stand.
    pub(crate) fn default_cache(&self) -> PathBuf {
        match &self.file {
            Some(f) => match f.parent() {
                Some(dir) if !dir.as_os_str().is_empty() => dir.join("cache"),
                _ => PathBuf::from("cache"),
            },
            None => user_cache_dir().map_or_else(|| PathBuf::from("cache"), |d| d.join("pinaudit")),
        }
    }

    /// `--fail-on` of `diff` and `merge`: the flag, else the file's, else `error`.
    pub(crate) fn fail_on(&self, flag: Option<FailOn>) -> FailOn {
        self.pick(flag, &self.fail_on, || FailOn::Error).value
    }
}

/// The platform's cache directory for the user: `$XDG_CACHE_HOME` (when
/// absolute) or `~/.cache` on Linux and other Unixes, `~/Library/Caches` on
/// macOS, `%LOCALAPPDATA%` on Windows. `None` when there is no home to find
/// it from, and only then does the cache fall back to `./cache`.
pub(crate) fn user_cache_dir() -> Option<PathBuf> {
    let env = |k: &str| {
        std::env::var_os(k)
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
    };
    if cfg!(windows) {
        return env("LOCALAPPDATA");
    }
    if cfg!(target_os = "macos") {
        return env("HOME").map(|h| h.join("Library/Caches"));
    }
    env("XDG_CACHE_HOME").or_else(|| env("HOME").map(|h| h.join(".cache")))
}

/// How a command reaches repositories, merged once from its flags, the
/// configuration file and the defaults; each value knows where it came from.
#[derive(Debug, Clone)]
pub(crate) struct FetchSettings {
    pub(crate) cache: Setting<PathBuf>,
    /// The `--rewrite` rules as written (parsed by the command, so that a bad
    /// one carrying a credential is never echoed).
    pub(crate) rewrite: Setting<Vec<String>>,
    pub(crate) timeout: Setting<u64>,
    pub(crate) deadline: Setting<u64>,
    pub(crate) max_fetch_mib: Setting<u64>,
    pub(crate) max_fetch_objects: Setting<u64>,
    pub(crate) max_refs_mib: Setting<u64>,
    pub(crate) offline: bool,
    pub(crate) allow_local: bool,
    pub(crate) resolve: Vec<crate::net::Pin>,
}

impl FetchSettings {
    pub(crate) fn merge(f: &FetchArgs, c: &Config) -> FetchSettings {
        let nonempty = |v: &Vec<String>| (!v.is_empty()).then(|| v.clone());
        FetchSettings {
            cache: c.pick(f.cache.clone(), &c.cache, || c.default_cache()),
            rewrite: c.pick(nonempty(&f.rewrite), &c.rewrite, Vec::new),
            timeout: c.pick(f.timeout, &c.timeout, || DEFAULT_TIMEOUT),
            deadline: c.pick(f.deadline, &c.deadline, || {
                crate::fetch::DEFAULT_DEADLINE.as_secs()
            }),
            max_fetch_mib: c.pick(f.max_fetch_mib, &c.max_fetch_mib, || {
                crate::fetch::DEFAULT_MAX_FETCH_BYTES >> 20
            }),
            max_fetch_objects: c.pick(f.max_fetch_objects, &c.max_fetch_objects, || {
                crate::fetch::DEFAULT_MAX_FETCH_OBJECTS
            }),
            max_refs_mib: c.pick(f.max_refs_mib, &c.max_refs_mib, || {
                crate::fetch::DEFAULT_MAX_REF_BYTES >> 20
            }),
            offline: f.offline,
            allow_local: f.allow_local,
            resolve: f.resolve.clone(),
        }
    }

    /// The sync settings these make, with `jobs` repositories at once.
    pub(crate) fn sync_plan(
        &self,
        rewrites: Vec<crate::fetch::Rewrite>,
        jobs: usize,
        progress: bool,
    ) -> crate::sources::SyncPlan {
        let timeout = std::time::Duration::from_secs(self.timeout.value);
        crate::sources::SyncPlan {
            rewrites,
            sync: crate::fetch::SyncOptions {
                offline: self.offline,
                connect_timeout: timeout.min(std::time::Duration::from_secs(30)),
                timeout,
                deadline: std::time::Duration::from_secs(self.deadline.value),
                max_fetch_bytes: self.max_fetch_mib.value << 20,
                max_fetch_objects: self.max_fetch_objects.value,
                max_ref_bytes: self.max_refs_mib.value << 20,
                network: crate::net::Network::new(self.resolve.clone()),
                ..crate::fetch::SyncOptions::default()
            },
            jobs,
            allow_local: self.allow_local,
            progress: crate::progress::terminal(progress),
        }
    }
}

/// `--timeout`'s default, in seconds.
pub(crate) const DEFAULT_TIMEOUT: u64 = 60;

/// The settings of `audit`, merged once: flags given, else the file's, else
/// defaults, each with where it came from (for `pinaudit config`).
#[derive(Debug, Clone)]
pub(crate) struct Effective {
    pub(crate) file: Option<PathBuf>,
    pub(crate) inputs: Setting<Vec<PathBuf>>,
    pub(crate) fetch: FetchSettings,
    pub(crate) fail_on: Setting<FailOn>,
    pub(crate) jobs: Setting<Option<u16>>,
    pub(crate) exclude: Setting<Vec<String>>,
    pub(crate) archive: Setting<ArchiveChoice>,
    pub(crate) swh_url: Setting<String>,
    pub(crate) wayback_url: Setting<String>,
    pub(crate) severity: BTreeMap<Code, Severity>,
    pub(crate) ignores: Vec<Ignore>,
}

/// The effective settings of `audit`.
pub(crate) fn effective(args: &AuditArgs, config: &Config) -> Effective {
    fn given<T: Clone>(v: &[T]) -> Option<Vec<T>> {
        (!v.is_empty()).then(|| v.to_vec())
    }
    Effective {
        file: config.file.clone(),
        inputs: config.pick(given(&args.paths), &config.inputs, || {
            vec![PathBuf::from("pins")]
        }),
        fetch: FetchSettings::merge(&args.fetch, config),
        fail_on: config.pick(args.fail_on, &config.fail_on, || FailOn::Error),
        jobs: config.pick(args.jobs.map(Some), &config.jobs.map(Some), || None),
        exclude: config.pick(given(&args.exclude), &config.exclude, Vec::new),
        archive: config.pick(args.archive, &config.archive, || ArchiveChoice::ALL),
        swh_url: config.pick(args.swh_url.clone(), &config.swh_url, || {
            crate::provider::swh::DEFAULT_URL.to_string()
        }),
        wayback_url: config.pick(args.wayback_url.clone(), &config.wayback_url, || {
            crate::provider::wayback::DEFAULT_URL.to_string()
        }),
        severity: config.severity.clone(),
        ignores: config.ignores.clone(),
    }
}

fn fail_on_str(f: FailOn) -> &'static str {
    match f {
        FailOn::Error => "error",
        FailOn::Warning => "warning",
        FailOn::Note => "note",
        FailOn::Never => "never",
    }
}

impl Effective {
    /// `pinaudit config`: the effective configuration as TOML, each value with its
    /// origin in a comment.
    pub(crate) fn render(&self) -> String {
        use std::fmt::Write;
        let mut out = String::new();
        let q = |s: &str| toml::Value::String(s.to_string()).to_string();
        let list = |v: &[String]| {
            format!(
                "[{}]",
                v.iter().map(|s| q(s)).collect::<Vec<_>>().join(", ")
            )
        };
        let paths = |v: &[PathBuf]| {
            list(
                &v.iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>(),
            )
        };
        let _ = writeln!(
            out,
            "# configuration file: {}",
            self.file
                .as_ref()
                .map_or("none".into(), |p| format!("`{}`", p.display()))
        );
        let mut line = |key: &str, value: String, origin: &Origin| {
            let _ = writeln!(out, "{key} = {value}  # {origin}");
        };
        line("inputs", paths(&self.inputs.value), &self.inputs.origin);
        let fetch = &self.fetch;
        line(
            "cache",
            q(&fetch.cache.value.display().to_string()),
            &fetch.cache.origin,
        );
        line("rewrite", list(&fetch.rewrite.value), &fetch.rewrite.origin);
        line(
            "fail-on",
            q(fail_on_str(self.fail_on.value)),
            &self.fail_on.origin,
        );
        match self.jobs.value {
            Some(j) => line("jobs", j.to_string(), &self.jobs.origin),
            None => line(
                "jobs",
                crate::audit::default_jobs().to_string(),
                &Origin::Default,
            ),
        }
        for (key, setting) in [
            ("timeout", &fetch.timeout),
            ("deadline", &fetch.deadline),
            ("max-fetch-mib", &fetch.max_fetch_mib),
            ("max-fetch-objects", &fetch.max_fetch_objects),
            ("max-refs-mib", &fetch.max_refs_mib),
        ] {
            line(key, setting.value.to_string(), &setting.origin);
        }
        line("exclude", list(&self.exclude.value), &self.exclude.origin);
        line(
            "archive",
            q(self.archive.value.as_str()),
            &self.archive.origin,
        );
        line("swh-url", q(&self.swh_url.value), &self.swh_url.origin);
        line(
            "wayback-url",
            q(&self.wayback_url.value),
            &self.wayback_url.origin,
        );
        let origin = self.file.clone().map_or(Origin::Default, Origin::File);
        if !self.severity.is_empty() {
            let _ = writeln!(out, "\n[severity]  # {origin}");
            for (c, s) in &self.severity {
                let _ = writeln!(out, "{c} = {}", q(s.as_str()));
            }
        }
        for i in &self.ignores {
            let _ = writeln!(out, "\n[[ignore]]  # {origin}");
            let _ = writeln!(out, "code = {}", q(i.code.as_str()));
            let _ = writeln!(out, "record = {}", q(&i.record));
            if let Some(s) = &i.source {
                let _ = writeln!(out, "source = {}", q(s));
            }
            if let Some(c) = &i.claim {
                let _ = writeln!(out, "claim = {}", q(c));
            }
            let _ = writeln!(out, "reason = {}", q(&i.reason));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Config, ConfigError> {
        Config::parse(text, Path::new("pinaudit.toml"))
    }

    #[test]
    fn reads_every_setting() {
        let c = parse(
            "inputs = [\"pins\"]\ncache = \"c\"\nrewrite = [\"a=b\"]\nfail-on = \"warning\"\njobs = 3\ntimeout = 9\nexclude = [\"drafts/**\"]\n\
             [severity]\nupstream-changed = \"warning\"\n\
             [[ignore]]\ncode = \"hash-mismatch\"\nrecord = \"r\"\nsource = \"readme\"\nreason = \"crlf\"\n",
        )
        .unwrap();
        assert_eq!(c.fail_on, Some(FailOn::Warning));
        assert_eq!(c.jobs, Some(3));
        assert_eq!(
            c.severity.get(&Code::UpstreamChanged),
            Some(&Severity::Warning)
        );
        assert_eq!(c.ignores.len(), 1);
        assert_eq!(c.ignores[0].reason, "crlf");
    }

    #[test]
    fn reads_the_archive_settings() {
        let c = parse("archive = \"none\"\nswh-url = \"https://swh.example/api/1/\"\n").unwrap();
        assert_eq!(c.archive.map(ArchiveChoice::as_str), Some("none"));
        assert_eq!(c.swh_url.as_deref(), Some("https://swh.example/api/1/"));
        let e = parse("\narchive = \"archive.org\"\n").unwrap_err();
        assert_eq!((e.line, e.key.as_deref()), (Some(2), Some("archive")));
    }

    #[test]
    fn unknown_key_names_line_and_suggests() {
        let e = parse("cache = \"c\"\nfail_on = \"error\"\n").unwrap_err();
        assert_eq!(e.line, Some(2));
        assert_eq!(e.key.as_deref(), Some("fail_on"));
        assert_eq!(e.hint.as_deref(), Some("did you mean `fail-on`?"));
    }

    #[test]
    fn bad_values_are_errors_with_lines() {
        let e = parse("\nfail-on = \"sometimes\"\n").unwrap_err();
        assert_eq!((e.line, e.key.as_deref()), (Some(2), Some("fail-on")));
        let e = parse("jobs = \"many\"\n").unwrap_err();
        assert_eq!((e.line, e.key.as_deref()), (Some(1), Some("jobs")));
        let e = parse("[severity]\nhash-missmatch = \"note\"\n").unwrap_err();
        assert_eq!(e.hint.as_deref(), Some("did you mean `hash-mismatch`?"));
        let e = parse("[[ignore]]\ncode = \"hash-mismatch\"\nrecord = \"r\"\n").unwrap_err();
        assert_eq!(e.key.as_deref(), Some("ignore.reason"));
    }

    #[test]
    fn the_help_text_defaults_are_the_real_ones() {
        // `--help` writes these out: the flags have no clap default, so that
        // the configuration file can fill them.
        let f = FetchSettings::merge(&no_flags(), &Config::default());
        assert_eq!(f.timeout.value, 60);
        assert_eq!(f.deadline.value, 900);
        assert_eq!(f.max_fetch_mib.value, 4096);
        assert_eq!(f.max_fetch_objects.value, 1_000_000);
        assert_eq!(f.max_refs_mib.value, 32);
        assert_eq!(f.timeout.origin, Origin::Default);
    }

    fn no_flags() -> FetchArgs {
        FetchArgs {
            cache: None,
            offline: false,
            rewrite: Vec::new(),
            allow_local: false,
            timeout: None,
            deadline: None,
            max_fetch_mib: None,
            max_fetch_objects: None,
            max_refs_mib: None,
            resolve: Vec::new(),
        }
    }

    #[test]
    fn flag_over_file_over_default() {
        let c = Config::parse(
            "timeout = 9\ncache = \"c\"\n",
            Path::new("proj/pinaudit.toml"),
        )
        .unwrap();
        let f = FetchSettings::merge(&no_flags(), &c);
        assert_eq!(f.timeout.value, 9);
        assert_eq!(f.cache.value, Path::new("proj/c"));
        let flags = FetchArgs {
            timeout: Some(5),
            cache: Some("x".into()),
            ..no_flags()
        };
        let f = FetchSettings::merge(&flags, &c);
        assert_eq!((f.timeout.value, f.timeout.origin), (5, Origin::Flag));
        assert_eq!(f.cache.value, Path::new("x"));
    }

    #[test]
    fn the_default_cache_is_beside_the_file_never_the_working_directory() {
        let c = Config::parse("", Path::new("proj/pinaudit.toml")).unwrap();
        assert_eq!(c.default_cache(), Path::new("proj/cache"));
        let c = Config::parse("", Path::new("pinaudit.toml")).unwrap();
        assert_eq!(c.default_cache(), Path::new("cache"));
        // No file: the user's cache directory, when there is a home.
        if let Some(dir) = user_cache_dir() {
            assert_eq!(Config::default().default_cache(), dir.join("pinaudit"));
            assert!(dir.is_absolute());
        }
    }
}
