//! Issue "Foundation": the command line — `explain`, report formats, `--output`,
//! colour, the default input directory, usage errors and `import` on bad input.

mod foundation_support;

use std::path::Path;

use serde_json::Value;

use foundation_support::{manifest_dir, pin_file, pinaudit, run, seed_path, Fixture, Run};

const SEED_ID: &str = "kimi-k3-iq1s-three-spark-scores";

/// Every code of DESIGN.md's table except those marked *(later)*, with its severity.
const CODES: &[(&str, &str)] = &[
    ("invalid-record", "error"),
    ("uncited-claim", "error"),
    ("unpinned-url", "error"),
    ("revision-conflict", "error"),
    ("malformed-hash", "error"),
    ("missing-hash", "warning"),
    ("unpinned-weights", "warning"),
    ("unpinned-runtime", "warning"),
    ("inconsistent-value", "error"),
    ("repository-missing", "error"),
    ("revision-missing", "error"),
    ("revision-unreachable", "warning"),
    ("path-missing", "error"),
    ("hash-mismatch", "error"),
    ("commit-time-mismatch", "warning"),
    ("line-out-of-range", "error"),
    ("value-missing", "error"),
    ("value-shifted", "warning"),
    ("upstream-changed", "note"),
    ("value-superseded", "warning"),
];

/// `pinaudit audit --offline` of the seed in a fresh cache, with extra arguments.
fn audit_seed(fx: &Fixture, extra: &[&str]) -> Run {
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

// --- explain ----------------------------------------------------------------

#[test]
fn explain_every_code() {
    for (code, severity) in CODES {
        let r = run(pinaudit().args(["explain", code]));
        assert_eq!(r.code(), 0, "{code}: {}", r.stderr);
        assert_eq!(r.stderr, "", "{code}");
        let out = &r.stdout;
        assert!(out.contains(code), "{code}: does not name the code:\n{out}");
        assert!(
            out.contains(severity),
            "{code}: does not give `{severity}`:\n{out}"
        );
        // A paragraph of explanation and a way to fix it, not a one-liner.
        let words = out.split_whitespace().count();
        assert!(words >= 25, "{code}: only {words} words:\n{out}");
        assert!(out.contains("\n\n"), "{code}: no paragraph break:\n{out}");
        assert!(out.to_lowercase().contains("fix"), "{code}: no fix:\n{out}");
    }
}

#[test]
fn explain_text_fits_in_80_columns() {
    // `explain::render` wraps its paragraphs at 80 columns (its doc says so); the
    // "How to fix: " prefix must fit in them too.
    for (code, _) in CODES {
        let r = run(pinaudit().args(["explain", code]));
        let long: Vec<&str> = r
            .stdout
            .lines()
            .filter(|l| l.chars().count() > 80)
            .collect();
        assert!(long.is_empty(), "{code}: lines over 80 columns: {long:#?}");
    }
}

#[test]
fn explain_unknown_code_exits_2_with_a_hint() {
    let r = run(pinaudit().args(["explain", "hash-missmatch"]));
    assert_eq!(r.code(), 2);
    assert_eq!(r.stdout, "");
    assert!(r.stderr.contains("hash-missmatch"), "{}", r.stderr);
    assert!(r.stderr.contains("hint"), "{}", r.stderr);
    assert!(
        r.stderr.contains("hash-mismatch"),
        "lists the real codes: {}",
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
        .stdout(writer)
        .stderr(std::process::Stdio::piped())
        .output()
        .unwrap()
}

#[test]
fn output_into_a_closed_pipe_does_not_panic() {
    let cache = Fixture::new();
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

#[test]
fn explain_without_a_code_is_a_usage_error() {
    let r = run(pinaudit().arg("explain"));
    assert_eq!(r.code(), 2);
    assert_eq!(r.stdout, "");
}

// --- Report formats ---------------------------------------------------------

#[test]
fn text_report_names_the_record_and_its_findings() {
    let fx = Fixture::new();
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
    let fx = Fixture::new();
    let default = audit_seed(&fx, &[]);
    let text = audit_seed(&fx, &["--format", "text"]);
    assert_eq!(default.stdout, text.stdout);
}

#[test]
fn markdown_report_names_the_record_and_its_findings() {
    let fx = Fixture::new();
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
    let fx = Fixture::new();
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
    let fx = Fixture::new();
    let r = audit_seed(&fx, &["--format", "json"]);
    let report = r.report(); // panics if anything but one JSON document is on stdout
    assert_eq!(report["schema"], "pinaudit/report/v1");
    assert_eq!(report["tool"]["name"], "pinaudit");
}

// --- --output ---------------------------------------------------------------

#[test]
fn output_writes_the_report_to_a_file_and_nothing_to_stdout() {
    let fx = Fixture::new();
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
    let fx = Fixture::new();
    let r = audit_seed(&fx, &["--output", "report.txt"]);
    assert_eq!(r.stdout, "");
    let text = std::fs::read_to_string(fx.path().join("report.txt")).unwrap();
    assert!(text.contains(SEED_ID));
    assert!(!text.contains('\x1b'), "{text}");
}

// --- Colour -----------------------------------------------------------------

#[test]
fn no_color_and_pipes_get_no_ansi_escapes() {
    let fx = Fixture::new();
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
fn on_terminal(fx: &Fixture, no_color: bool, args: &str) -> Option<String> {
    let bin = assert_cmd::cargo::cargo_bin("pinaudit");
    let line = format!("'{}' {args}", bin.display());
    let mut cmd = std::process::Command::new("script");
    cmd.args(["-qec", &line, "/dev/null"])
        .current_dir(fx.path())
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
    let fx = Fixture::new();
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

// --- Default input ----------------------------------------------------------

#[test]
fn default_input_is_the_pins_directory() {
    let fx = Fixture::new();
    fx.write_json("pins/x.json", &pin_file("x"));
    fx.write_json("elsewhere/y.json", &pin_file("y"));
    let r = run(fx
        .cmd()
        .args(["audit", "--offline", "--quiet", "--format", "json"]));
    let ids: Vec<Value> = r.report()["records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|rec| rec["id"].clone())
        .collect();
    assert_eq!(ids, [Value::from("x")]);
    assert_eq!(
        r.report()["records"][0]["file"],
        Path::new("pins").join("x.json").to_str().unwrap()
    );
    assert_eq!(r.code(), 2);
}

#[test]
fn default_input_missing_is_reported() {
    let fx = Fixture::new();
    let r = run(fx.cmd().args(["audit", "--offline", "--format", "json"]));
    assert_eq!(r.code(), 2);
    assert!(r.stderr.contains("pins"), "{}", r.stderr);
}

// --- Usage errors -----------------------------------------------------------

#[test]
fn usage_errors_exit_2() {
    for args in [
        &["audit", "--format", "yaml"][..],
        &["audit", "--fail-on", "sometimes"],
        &["audit", "--no-such-flag"],
        &["no-such-command"],
        &["import"],
    ] {
        let r = run(pinaudit().current_dir(manifest_dir()).args(args));
        assert_eq!(r.code(), 2, "{args:?}");
        assert_eq!(r.stdout, "", "{args:?}");
        assert!(!r.stderr.is_empty(), "{args:?}");
    }
}

// --- import on bad input ----------------------------------------------------

#[test]
fn import_of_an_unreadable_document_names_it_and_writes_nothing() {
    let fx = Fixture::new();
    let empty = fx.write("empty.md", "");
    let r = run(fx.cmd().arg("import").arg(&empty).args(["--out", "out"]));
    assert_eq!(r.code(), 2);
    assert!(r.stderr.contains("empty.md"), "{}", r.stderr);
    let written = std::fs::read_dir(fx.path().join("out")).map_or(0, |d| d.count());
    assert_eq!(written, 0);
}

#[test]
fn import_of_a_document_with_a_broken_block_keeps_the_rest() {
    let fx = Fixture::new();
    let seed = std::fs::read_to_string(seed_path()).unwrap();
    // Break the memory-observations block; the figures live in other blocks.
    let broken = seed.replacen("\"is_measured_peak\": false", "\"is_measured_peak\": ", 1);
    assert_ne!(broken, seed);
    let doc = fx.write("broken.txt", &broken);
    let r = run(fx.cmd().arg("import").arg(&doc).args(["--out", "out"]));
    assert!(r.stderr.contains("broken.txt"), "{}", r.stderr);
    assert!(r.stderr.contains("line 1 column"), "{}", r.stderr);
    let pin = fx.path().join(format!("out/{SEED_ID}.json"));
    let pin: Value = serde_json::from_str(&std::fs::read_to_string(pin).unwrap()).unwrap();
    assert_eq!(pin["claims"].as_array().unwrap().len(), 8);
    assert_eq!(pin["sources"].as_array().unwrap().len(), 6);
}
