//! Where users work (issue 10): findings that point at the record line
//! (`record_location`), SARIF for code scanning, GitHub workflow commands,
//! links to the cited lines, `pin`, shards and `merge`, completions and the
//! man page.

use serde_json::{json, Value};

use crate::common::forge::{good_pin, readme_pin, sha256_hex, to_daemon, NAME, T0_RFC3339};
use crate::common::scratch::Scratch;
use crate::common::seed::seed_path;
use crate::common::{GitDaemon, Wants};

/// The official SARIF 2.1.0 schema (OASIS, `sarif-schema-2.1.0.json`).
fn sarif_validator() -> jsonschema::Validator {
    let text = include_str!("../data/sarif-schema-2.1.0.json");
    // The 2.1.0 schema's `language` patterns (of `run` and `toolComponent`) have a
    // stray `]` that the meta-schema's `format: regex` refuses; SARIF 2.1.0
    // Errata 01 corrects them to this. pinaudit never writes `language`, so the
    // correction changes nothing it is judged on.
    const BROKEN: &str = r#""^[a-zA-Z]{2}|^[a-zA-Z]{2}-[a-zA-Z]{2}]?$""#;
    assert_eq!(text.matches(BROKEN).count(), 2);
    let text = text.replace(BROKEN, r#""^[a-zA-Z]{2}(-[a-zA-Z]{2})?$""#);
    let schema: Value = serde_json::from_str(&text).expect("the schema is JSON");
    jsonschema::validator_for(&schema).expect("the schema compiles")
}

/// Asserts that `sarif` is valid SARIF 2.1.0 and that every result stands on a
/// line of a record file; returns the results.
fn assert_valid_sarif(sarif: &Value) -> Vec<Value> {
    let v = sarif_validator();
    let errors: Vec<String> = v
        .iter_errors(sarif)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "invalid SARIF: {errors:#?}");
    let results = sarif["runs"][0]["results"]
        .as_array()
        .expect("results")
        .clone();
    for r in &results {
        let loc = &r["locations"][0]["physicalLocation"];
        assert!(
            loc["artifactLocation"]["uri"]
                .as_str()
                .is_some_and(|u| !u.is_empty()),
            "{r:#}"
        );
        assert!(
            loc["region"]["startLine"].as_u64().is_some_and(|l| l >= 1),
            "{r:#}"
        );
        assert!(
            r["partialFingerprints"]
                .as_object()
                .is_some_and(|o| !o.is_empty()),
            "{r:#}"
        );
    }
    results
}

/// A pin file whose claim stands on a known line: the decode figure claims 3.1
/// (the README says 2.9) and the hash is wrong.
fn bad_pin(commit: git2::Oid) -> Value {
    let mut pin = readme_pin("bad", NAME, commit, &sha256_hex("other"), T0_RFC3339);
    pin["claims"][0]["value"] = json!(3.1);
    pin
}

/// The line (1-based) of `text` where `needle` first stands.
fn line_of(text: &str, needle: &str) -> usize {
    text.lines()
        .position(|l| l.contains(needle))
        .expect("needle")
        + 1
}

// --- Positions in the record ------------------------------------------------

#[test]
fn findings_point_at_the_claim_and_source_in_a_pin_file() {
    let (forge, _repo, c) = crate::common::forge::forge_with_readme();
    let daemon = GitDaemon::start(forge.path(), Wants::Default);
    let ws = Scratch::new();
    let file = ws.write_pin(&bad_pin(c));
    let text = std::fs::read_to_string(ws.path().join(&file)).unwrap();
    let run = ws.audit(["--rewrite", &to_daemon(&daemon), &file]);
    let claim_line = line_of(&text, "\"claims\"") + 1;
    let source_line = line_of(&text, "\"sources\"") + 1;
    let missing = run.only("value-missing");
    assert_eq!(
        missing["record_location"],
        json!({"file": file, "line": claim_line, "column": 5}),
        "{missing:#}"
    );
    let hash = run.only("hash-mismatch");
    assert_eq!(
        hash["record_location"],
        json!({"file": file, "line": source_line, "column": 5}),
        "{hash:#}"
    );
}

#[test]
fn flattened_record_documents_locate_by_column() {
    // The whole record on one line, as some publishers flatten it: only the
    // column tells one figure from the next.
    // Figures that cite nothing (`uncited-claim`), so that each has a finding.
    let uncited = |label: &str, value: f64| json!({"label": label, "metric": "m", "value": value});
    let doc = crate::common::inputs::record_doc(&[&crate::common::inputs::figures_block(&[
        uncited("first", 2.9),
        uncited("second", 41.3),
    ])]);
    let flat = doc.replace('\n', " ");
    let ws = Scratch::new();
    let run = ws.audit_doc("flat.md", &flat);
    let findings = run.findings();
    let at = |label: &str| {
        findings
            .iter()
            .find(|f| f["claim"] == label)
            .map(|f| f["record_location"].clone())
            .unwrap_or_else(|| panic!("a finding about `{label}` in {findings:#?}"))
    };
    let (first, second) = (at("first"), at("second"));
    assert_eq!(first["line"], 1);
    assert_eq!(second["line"], 1);
    let col = |needle: &str| {
        flat.find(needle)
            .map(|i| flat[..i].chars().count() + 1)
            .unwrap()
    };
    // Each figure's object opens just before its label.
    let open_before = |label: &str| {
        let at = flat.find(&format!("\"label\": \"{label}\"")).unwrap();
        let brace = flat[..at].rfind('{').unwrap();
        flat[..brace].chars().count() + 1
    };
    assert_eq!(first["column"], open_before("first"), "{first}");
    assert_eq!(second["column"], open_before("second"), "{second}");
    assert!(col("\"second\"") > col("\"first\""));
}

// --- SARIF --------------------------------------------------------------------

#[test]
fn sarif_of_the_seed_validates_and_every_result_has_a_record_line() {
    let ws = Scratch::new();
    let seed = seed_path();
    let run = ws.run([
        "audit",
        "--offline",
        "--cache",
        "cache",
        "--format",
        "sarif",
        seed.to_str().unwrap(),
    ]);
    let sarif: Value = serde_json::from_str(&run.stdout).expect("SARIF is JSON");
    let results = assert_valid_sarif(&sarif);
    assert!(!results.is_empty());
    // The validator does judge: a log without `version` is refused.
    let mut broken = sarif.clone();
    broken.as_object_mut().unwrap().remove("version");
    assert!(!sarif_validator().is_valid(&broken));
    let rules = sarif["runs"][0]["tool"]["driver"]["rules"]
        .as_array()
        .unwrap();
    for r in &results {
        let i = r["ruleIndex"].as_u64().unwrap() as usize;
        assert_eq!(rules[i]["id"], r["ruleId"]);
    }
}

#[test]
fn sarif_over_git_daemon_links_the_cited_line_at_the_pin() {
    let (forge, _repo, c) = crate::common::forge::forge_with_readme();
    let daemon = GitDaemon::start(forge.path(), Wants::Default);
    let ws = Scratch::new();
    let file = ws.write_pin(&bad_pin(c));
    let run = ws.run([
        "audit",
        "--cache",
        "cache",
        "--format",
        "sarif",
        "--rewrite",
        &to_daemon(&daemon),
        &file,
    ]);
    let sarif: Value = serde_json::from_str(&run.stdout).expect("SARIF is JSON");
    let results = assert_valid_sarif(&sarif);
    let missing = results
        .iter()
        .find(|r| r["ruleId"] == "value-missing")
        .expect("value-missing");
    assert_eq!(missing["level"], "error");
    assert_eq!(
        missing["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
        "pins/bad.json"
    );
    assert_eq!(
        missing["relatedLocations"][0]["physicalLocation"]["artifactLocation"]["uri"],
        format!("https://github.com/{NAME}/blob/{c}/README.md#L5")
    );
    // The JSON report of the same run points at the same record line.
    let json = ws.audit(["--rewrite", &to_daemon(&daemon), &file]);
    let loc = &json.only("value-missing")["record_location"];
    assert_eq!(
        missing["locations"][0]["physicalLocation"]["region"]["startLine"],
        loc["line"]
    );
}

// --- GitHub workflow commands ---------------------------------------------------

#[test]
fn github_commands_carry_the_record_file_and_line() {
    let (forge, _repo, c) = crate::common::forge::forge_with_readme();
    let daemon = GitDaemon::start(forge.path(), Wants::Default);
    let ws = Scratch::new();
    let file = ws.write_pin(&bad_pin(c));
    let run = ws.run([
        "audit",
        "--cache",
        "cache",
        "--format",
        "github",
        "--rewrite",
        &to_daemon(&daemon),
        &file,
    ]);
    run.assert_code(1);
    let out = run.stdout.clone();
    let json = ws.audit(["--rewrite", &to_daemon(&daemon), &file]);
    let line = json.only("value-missing")["record_location"]["line"].clone();
    let expected = format!("::error file=pins/bad.json,line={line},col=5,title=value-missing::");
    assert!(out.lines().any(|l| l.starts_with(&expected)), "{out}");
    for l in out.lines().filter(|l| l.starts_with("::")) {
        assert!(l.contains(" file=pins/bad.json,"), "{l}");
        assert!(l.contains(",line="), "{l}");
        assert!(!l.contains('\r'));
    }
    assert!(
        out.contains("%0Ahint: "),
        "the hint rides on an escaped newline: {out}"
    );
}

#[test]
fn good_pin_has_no_annotations() {
    let (forge, _repo, c) = crate::common::forge::forge_with_readme();
    let daemon = GitDaemon::start(forge.path(), Wants::Default);
    let ws = Scratch::new();
    let file = ws.write_pin(&good_pin("good", c));
    let run = ws.run([
        "audit",
        "--cache",
        "cache",
        "--format",
        "github",
        "--rewrite",
        &to_daemon(&daemon),
        &file,
    ]);
    run.assert_code(0);
    let out = run.stdout.clone();
    assert!(!out.contains("::error"), "{out}");
}
