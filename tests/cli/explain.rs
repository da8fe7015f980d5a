//! `pinaudit explain CODE`: every finding code of the README's table explained, with its
//! severity and a fix, in 80 columns; unknown or missing codes are refused.

use crate::common::run::run;
use crate::common::scratch::pinaudit;

/// Every code of the README's table except those marked *(later)*, with its severity.
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
    ("source-vanished", "warning"),
];

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

#[test]
fn explain_without_a_code_is_a_usage_error() {
    let r = run(pinaudit().arg("explain"));
    // Usage errors exit 3.
    assert_eq!(r.code(), 3);
    assert_eq!(r.stdout, "");
}

// --- Whole output ------------------------------------------------------------

/// `pinaudit explain hash-mismatch` as a user reads it (README's example).
#[test]
fn explain_hash_mismatch_output() {
    let r = run(pinaudit().args(["explain", "hash-mismatch"]));
    assert_eq!(r.code(), 0, "stderr:\n{}", r.stderr);
    insta::assert_snapshot!(r.stdout, @r"
    hash-mismatch (error)

    The sha256 of the document at the pinned revision differs from the recorded one.
    The evidence says which variant of the document the recorded hash does match, if
    any (`crlf`: hashed after a checkout with CRLF line ends; `lf`; `bom`;
    `trailing-newline`), and whether it equals the document at another commit in the
    path's history, naming that commit: that is the version the author actually
    hashed.

    How to fix: Recompute the hash from the blob at the pinned commit (`git show
    COMMIT:PATH | sha256sum`), not from a working-tree copy, or pin the commit the
    evidence names.
    ");
}

/// A misspelt code: the error names it, and the hint lists every known code.
#[test]
fn explain_unknown_code_output() {
    let r = run(pinaudit().args(["explain", "hash-missmatch"]));
    assert_eq!(r.code(), 2);
    insta::assert_snapshot!(r.stderr, @r"
    error: unknown finding code `hash-missmatch`
      hint: known codes: invalid-record, uncited-claim, unpinned-url, revision-conflict, malformed-hash, missing-hash, unpinned-weights, unpinned-runtime, inconsistent-value, repository-missing, revision-missing, revision-unreachable, path-missing, hash-mismatch, weight-hash-mismatch, manifest-mismatch, manifest-unlisted, commit-time-mismatch, line-out-of-range, value-missing, value-shifted, upstream-changed, value-superseded, source-vanished
    ");
}

/// The table of finding codes in `docs/reference.md` lists every code of the
/// code table, with its severity, and no other: the reference stays true as
/// codes are added.
#[test]
fn reference_lists_every_code_with_its_severity() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/reference.md"))
        .expect("docs/reference.md");
    for code in pinaudit::codes::Code::ALL {
        let row = format!("| `{}` | {} |", code.as_str(), code.severity());
        assert!(
            readme.contains(&row),
            "docs/reference.md lacks the row `{row}`"
        );
    }
    let rows = readme
        .lines()
        .filter(|l| {
            let mut cells = l.split('|').map(str::trim).skip(1);
            let (Some(code), Some(sev)) = (cells.next(), cells.next()) else {
                return false;
            };
            code.starts_with('`') && matches!(sev, "error" | "warning" | "note")
        })
        .count();
    assert_eq!(rows, pinaudit::codes::Code::ALL.len(), "one row per code");
}
