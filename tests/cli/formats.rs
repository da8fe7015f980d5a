//! The report formats (text, markdown, JSON), `--output`, writing into a closed
//! pipe, and colour (issue "Foundation"), and whole-report snapshots of the text
//! and markdown reports.

use serde_json::Value;

use crate::common::run::{run, Run};
use crate::common::scratch::Scratch;
use crate::common::seed::{manifest_dir, seed_path, seed_pinned_to, Remote, SEED_ID};

/// `pinaudit audit --offline` of the seed in a fresh cache, with extra arguments.
fn audit_seed(fx: &Scratch, extra: &[&str]) -> Run {
    run(fx
        .cmd()
        .args(["audit", "--offline", "--cache", "cache"])
        .args(extra)
        .arg(seed_path()))
}

fn assert_no_ansi(r: &Run) {
    assert!(
        !r.stdout.contains('\x1b'),
        "ANSI escape on stdout:\n{}",
        r.stdout
    );
    assert!(
        !r.stderr.contains('\x1b'),
        "ANSI escape on stderr:\n{}",
        r.stderr
    );
}

/// Runs pinaudit with stdout on a pipe whose reader is already gone, as in
/// `pinaudit explain CODE | head -1` once `head` has exited.
fn into_closed_pipe(args: &[&str]) -> std::process::Output {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    std::process::Command::new(assert_cmd::cargo::cargo_bin("pinaudit"))
        .args(args)
        // Never the user's cache key file.
        .env("PINAUDIT_CACHE_KEY", "pinaudit tests")
        .stdout(writer)
        .stderr(std::process::Stdio::piped())
        .output()
        .unwrap()
}

#[test]
fn output_into_a_closed_pipe_does_not_panic() {
    let cache = Scratch::new();
    let seed = seed_path();
    let audit = into_closed_pipe(&[
        "audit",
        "--offline",
        "--cache",
        cache.path().to_str().unwrap(),
        seed.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&audit.stderr);
    assert!(!stderr.contains("panicked"), "audit: {stderr}");
    let explain = into_closed_pipe(&["explain", "hash-mismatch"]);
    let stderr = String::from_utf8_lossy(&explain.stderr);
    assert!(!stderr.contains("panicked"), "explain: {stderr}");
}

// --- Report formats ---------------------------------------------------------

#[test]
fn text_report_names_the_record_and_its_findings() {
    let fx = Scratch::new();
    let r = audit_seed(&fx, &["--format", "text"]);
    assert_eq!(r.code(), 2);
    let out = &r.stdout;
    assert!(out.contains(SEED_ID), "{out}");
    assert!(out.contains("unpinned-weights"), "{out}");
    assert!(out.contains("unpinned-runtime"), "{out}");
    assert!(out.contains("hint:"), "{out}");
    assert!(out.contains("1 record(s)"), "{out}");
    assert!(out.contains("incomplete"), "{out}");
    assert_no_ansi(&r);
}

#[test]
fn text_is_the_default_format() {
    let fx = Scratch::new();
    let default = audit_seed(&fx, &[]);
    let text = audit_seed(&fx, &["--format", "text"]);
    assert_eq!(default.stdout, text.stdout);
}

#[test]
fn markdown_report_names_the_record_and_its_findings() {
    let fx = Scratch::new();
    let r = audit_seed(&fx, &["--format", "markdown"]);
    assert_eq!(r.code(), 2);
    let out = &r.stdout;
    assert!(out.starts_with("## pinaudit"), "{out}");
    assert!(out.contains(&format!("### `{SEED_ID}`")), "{out}");
    assert!(out.contains("`unpinned-weights`"), "{out}");
    assert!(
        out.contains("| GSM8K local subset | 98.0 percent |"),
        "{out}"
    );
}

#[test]
fn text_and_markdown_render_unreadable_inputs() {
    let fx = Scratch::new();
    let empty = fx.write("pins/empty.json", "");
    for format in ["text", "markdown"] {
        let r = run(fx
            .cmd()
            .args(["audit", "--offline", "--cache", "cache", "--format", format])
            .arg(&empty));
        assert_eq!(r.code(), 1, "{format}");
        assert!(r.stdout.contains("empty.json"), "{format}:\n{}", r.stdout);
        assert!(
            r.stdout.contains("invalid-record"),
            "{format}:\n{}",
            r.stdout
        );
    }
}

#[test]
fn json_stdout_is_only_the_report() {
    let fx = Scratch::new();
    let r = audit_seed(&fx, &["--format", "json"]);
    let report = r.report(); // panics if anything but one JSON document is on stdout
    assert_eq!(report["schema"], "pinaudit/report/v1");
    assert_eq!(report["tool"]["name"], "pinaudit");
}

// --- --output ---------------------------------------------------------------

#[test]
fn output_writes_the_report_to_a_file_and_nothing_to_stdout() {
    let fx = Scratch::new();
    let r = audit_seed(&fx, &["--format", "json", "--output", "out/report.json"]);
    assert_eq!(r.stdout, "");
    assert_eq!(
        r.code(),
        2,
        "the exit status does not depend on where the report goes"
    );
    let text =
        std::fs::read_to_string(fx.path().join("out/report.json")).expect("the report was written");
    let report: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(report["records"][0]["id"], SEED_ID);

    // The file holds exactly what stdout would have.
    let to_stdout = audit_seed(&fx, &["--format", "json"]);
    assert_eq!(text, to_stdout.stdout);
}

#[test]
fn output_in_text_format_has_no_ansi_escapes() {
    let fx = Scratch::new();
    let r = audit_seed(&fx, &["--output", "report.txt"]);
    assert_eq!(r.stdout, "");
    let text = std::fs::read_to_string(fx.path().join("report.txt")).unwrap();
    assert!(text.contains(SEED_ID));
    assert!(!text.contains('\x1b'), "{text}");
}

// --- Colour -----------------------------------------------------------------

#[test]
fn no_color_and_pipes_get_no_ansi_escapes() {
    let fx = Scratch::new();
    for format in ["text", "markdown", "json"] {
        // Not a terminal: no colour, NO_COLOR or not.
        assert_no_ansi(&audit_seed(&fx, &["--format", format]));
        let r = run(fx
            .cmd()
            .env("NO_COLOR", "1")
            .args(["audit", "--offline", "--cache", "cache", "--format", format])
            .arg(seed_path()));
        assert_no_ansi(&r);
    }
    assert_no_ansi(&run(fx
        .cmd()
        .env("NO_COLOR", "1")
        .args(["explain", "nope"])));
    assert_no_ansi(&run(fx.cmd().args(["audit", "--format", "yaml"])));
}

/// Runs pinaudit on a pseudo-terminal through util-linux `script`; `None` when
/// `script` is not installed (the pipe tests above still run).
#[cfg(unix)]
fn on_terminal(fx: &Scratch, no_color: bool, args: &str) -> Option<String> {
    let bin = assert_cmd::cargo::cargo_bin("pinaudit");
    let line = format!("'{}' {args}", bin.display());
    let mut cmd = std::process::Command::new("script");
    cmd.args(["-qec", &line, "/dev/null"])
        .current_dir(fx.path())
        // Never the user's cache key file.
        .env("PINAUDIT_CACHE_KEY", "pinaudit tests")
        .env_remove("NO_COLOR");
    if no_color {
        cmd.env("NO_COLOR", "1");
    }
    let out = cmd.output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(!text.contains("panicked"), "{text}");
    Some(text)
}

#[cfg(unix)]
#[test]
fn no_color_is_honoured_on_a_terminal() {
    let fx = Scratch::new();
    let seed = seed_path();
    let args = format!("audit --offline --cache cache '{}'", seed.display());
    let Some(coloured) = on_terminal(&fx, false, &args) else {
        eprintln!("skipped: `script` is not available");
        return;
    };
    // The control: on a terminal, text is coloured...
    assert!(
        coloured.contains("\x1b["),
        "no colour on a terminal:\n{coloured}"
    );
    // ...unless NO_COLOR is set,
    let plain = on_terminal(&fx, true, &args).unwrap();
    assert!(plain.contains(SEED_ID), "{plain}");
    assert!(!plain.contains('\x1b'), "{plain}");
    // and never in JSON or in a file.
    let json = on_terminal(&fx, false, &format!("{args} --format json")).unwrap();
    assert!(!json.contains('\x1b'), "{json}");
    on_terminal(&fx, false, &format!("{args} --output report.txt")).unwrap();
    let file = std::fs::read_to_string(fx.path().join("report.txt")).unwrap();
    assert!(!file.contains('\x1b'), "{file}");
}

// --- Whole reports -----------------------------------------------------------

/// The report in `format` of the seed against its served fixture, after a later
/// commit moved the cited table and corrected a figure: hash mismatches,
/// unpinned artifacts, upstream drift and a superseded value, each rendered.
/// The scratch directory and the daemon's port are replaced by placeholders;
/// `SOURCE_DATE_EPOCH=0` fixes the timestamp.
fn drifted_seed_report(format: &str) -> String {
    let (remote, pinned, _head) = Remote::seed_drifted();
    let work = Scratch::new();
    let record = work.write("records/seed.md", seed_pinned_to(&pinned.to_string()));
    let rewrite = remote.rewrite();
    let r = run(work
        .cached("audit")
        .args(["--timeout", "10", "--format", format, "--rewrite", &rewrite])
        .arg(record));
    assert_eq!(r.code(), 1, "stderr:\n{}", r.stderr);
    remote.redact_port(&work.redact(&r.stdout))
}

#[test]
fn text_report_of_the_drifted_seed() {
    insta::assert_snapshot!("drifted_seed_text", drifted_seed_report("text"));
}

#[test]
fn markdown_report_of_the_drifted_seed() {
    insta::assert_snapshot!("drifted_seed_markdown", drifted_seed_report("markdown"));
}

/// The JSON of the same audit, whole: the README's example is cut from it.
#[test]
fn json_report_of_the_drifted_seed() {
    insta::assert_snapshot!("drifted_seed_json", drifted_seed_report("json"));
}

#[test]
fn text_report_of_the_seed_offline() {
    let fx = Scratch::new();
    let r = audit_seed(&fx, &["--format", "text"]);
    assert_eq!(r.code(), 2, "stderr:\n{}", r.stderr);
    let repo = manifest_dir().display().to_string();
    insta::assert_snapshot!("seed_offline_text", r.stdout.replace(&repo, "[repo]"));
}
