//! Where users work: findings that point at the record line
//! (`record_location`), SARIF for code scanning, GitHub workflow commands,
//! links to the cited lines, `pin`, shards and `merge`, completions and the
//! man page.

use serde_json::{json, Value};

use crate::common::forge::{
    good_pin, readme_pin, sha256_hex, to_daemon, Forge, NAME, README, T0, T0_RFC3339,
};
use crate::common::scratch::Scratch;
use crate::common::seed::seed_path;
use crate::common::{GitDaemon, Wants};

/// The official SARIF 2.1.0 schema (OASIS, `sarif-schema-2.1.0.json`, `$id`
/// `…/oasis-tcs/sarif-spec/master/Schemata/sarif-schema-2.1.0.json`), as the
/// `serde-sarif` 0.8.0 crate ships it (the OASIS file with its blank lines removed).
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

// --- `pinaudit pin` and `audit --fix` -------------------------------------------

/// `pinaudit pin ARGS... --cache cache --rewrite …` in `ws`.
fn pin_cmd(ws: &Scratch, daemon: &GitDaemon, args: &[&str]) -> crate::common::run::Run {
    let rewrite = to_daemon(daemon);
    let mut all = vec![
        "pin",
        "--cache",
        "cache",
        "--timeout",
        "10",
        "--rewrite",
        &rewrite,
    ];
    all.extend_from_slice(args);
    ws.run(all)
}

#[test]
fn pin_resolves_a_branch_url_to_the_head_commit_and_hashes_the_document() {
    let (forge, _repo, c) = crate::common::forge::forge_with_readme();
    let daemon = GitDaemon::start(forge.path(), Wants::Default);
    let ws = Scratch::new();
    let url = format!("https://github.com/{NAME}/blob/main/README.md#L5");
    let run = pin_cmd(
        &ws,
        &daemon,
        &[
            &url, "--value", "2.9", "--unit", "tok/s", "--label", "decode",
        ],
    );
    run.assert_code(0);
    let fragment: Value = serde_json::from_str(&run.stdout).expect("a JSON fragment");
    let s = &fragment["sources"][0];
    assert_eq!(s["revision"], c.to_string());
    assert_eq!(s["sha256"], sha256_hex(README));
    assert_eq!(s["commit_time"], T0_RFC3339);
    assert_eq!(
        s["url"],
        format!("https://github.com/{NAME}/blob/{c}/README.md")
    );
    let claim = &fragment["claims"][0];
    assert_eq!(claim["lines"], json!([5, 5]));
    assert_eq!(claim["value"], json!(2.9));
    assert_eq!(
        claim["url"],
        format!("https://github.com/{NAME}/blob/{c}/README.md#L5")
    );
    assert!(
        run.stderr.contains(&format!("`main` names `{c}` now")),
        "{}",
        run.stderr
    );

    // Without a line, the value's line in the document is found and cited.
    let bare = format!("https://github.com/{NAME}/blob/main/README.md");
    let run = pin_cmd(&ws, &daemon, &[&bare, "--value", "41.3", "--unit", "tok/s"]);
    run.assert_code(0);
    let fragment: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(fragment["claims"][0]["lines"], json!([6, 6]));
    assert!(
        run.stderr.contains("`41.3` stands on line 6"),
        "{}",
        run.stderr
    );

    // A short id names the same commit.
    let short = format!(
        "https://github.com/{NAME}/blob/{}/README.md",
        &c.to_string()[..7]
    );
    let run = pin_cmd(&ws, &daemon, &[&short]);
    run.assert_code(0);
    let fragment: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(fragment["sources"][0]["revision"], c.to_string());
}

#[test]
fn pin_works_offline_from_the_cache_and_names_what_it_cannot_pin() {
    let (forge, _repo, c) = crate::common::forge::forge_with_readme();
    let mut daemon = GitDaemon::start(forge.path(), Wants::Default);
    let ws = Scratch::new();
    let url = format!("https://github.com/{NAME}/blob/main/README.md#L5");
    pin_cmd(&ws, &daemon, &[&url]).assert_code(0);
    daemon.stop();
    let offline = ws.run(["pin", "--cache", "cache", "--offline", &url]);
    offline.assert_code(0);
    let fragment: Value = serde_json::from_str(&offline.stdout).unwrap();
    assert_eq!(fragment["sources"][0]["revision"], c.to_string());

    let no_branch = format!("https://github.com/{NAME}/blob/nope/README.md");
    let run = ws.run(["pin", "--cache", "cache", "--offline", &no_branch]);
    run.assert_code(2);
    assert!(
        run.stderr.contains("`nope` names no branch, tag or commit"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("hint: "), "{}", run.stderr);
    let no_path = format!("https://github.com/{NAME}/blob/main/MISSING.md");
    let run = ws.run(["pin", "--cache", "cache", "--offline", &no_path]);
    run.assert_code(2);
    assert!(
        run.stderr.contains("`MISSING.md` does not exist"),
        "{}",
        run.stderr
    );
    let run = ws.run(["pin", "--cache", "cache", "--offline", "not a url"]);
    run.assert_code(2);
    assert!(run.stderr.starts_with("error: "), "{}", run.stderr);
}

#[test]
fn pin_says_where_a_value_that_moved_stands_now() {
    let (forge, repo, _c) = crate::common::forge::forge_with_readme();
    let moved = README.replacen("\n\n| phase", "\n\n> Re-run.\n\n| phase", 1);
    let head = repo.commit(&[("README.md", moved.as_str())], "note", T0 + 60);
    let daemon = GitDaemon::start(forge.path(), Wants::Default);
    let ws = Scratch::new();
    let url = format!("https://github.com/{NAME}/blob/main/README.md");
    let run = pin_cmd(
        &ws,
        &daemon,
        &[&url, "--line", "5", "--value", "2.9", "--unit", "tok/s"],
    );
    run.assert_code(0);
    assert!(
        run.stderr.contains("is not on line 5 but on line 7"),
        "{}",
        run.stderr
    );
    let fragment: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(fragment["sources"][0]["revision"], head.to_string());
    assert_eq!(fragment["sources"][0]["sha256"], sha256_hex(&moved));
    assert_eq!(fragment["claims"][0]["lines"], json!([7, 7]));

    // A value that is nowhere is refused as bad input, naming the value and
    // the line: no claim is printed or written.
    let run = pin_cmd(&ws, &daemon, &[&url, "--line", "5", "--value", "77.7"]);
    run.assert_code(2);
    assert!(
        run.stderr.starts_with("error: ")
            && run
                .stderr
                .contains("`77.7` is not on line 5 of `README.md`")
            && run
                .stderr
                .contains("nor on any other line; no claim written"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("--force"), "{}", run.stderr);
    assert_eq!(run.stdout, "");
    let into = pin_cmd(
        &ws,
        &daemon,
        &[
            &url,
            "--line",
            "5",
            "--value",
            "77.7",
            "--into",
            "pins/nowhere.json",
        ],
    );
    into.assert_code(2);
    assert!(!ws.path().join("pins/nowhere.json").exists());
    // Without a line, the same.
    let run = pin_cmd(&ws, &daemon, &[&url, "--value", "77.7"]);
    run.assert_code(2);
    assert!(
        run.stderr.contains("`77.7` is on no line"),
        "{}",
        run.stderr
    );

    // --force writes it anyway, still saying so, with exit status 1.
    let run = pin_cmd(
        &ws,
        &daemon,
        &[&url, "--line", "5", "--value", "77.7", "--force"],
    );
    run.assert_code(1);
    assert!(
        run.stderr.contains("nor on any other line"),
        "{}",
        run.stderr
    );
    let fragment: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(fragment["claims"][0]["value"], json!(77.7));
}

/// Two repositories' `README.md`s pinned into one file are two sources: a source
/// is the document at (repository, revision, path), not its file name, and
/// each claim cites its own. Pinning a document already there reuses its source.
#[test]
fn pin_into_of_two_readmes_of_two_repositories_gives_two_sources() {
    let (forge, _repo, c) = crate::common::forge::forge_with_readme();
    let other = forge.repo("acme/other");
    let other_readme = README.replace("2.9 tok/s", "3.7 tok/s");
    let o = other.commit(&[("README.md", other_readme.as_str())], "add results", T0);
    let daemon = GitDaemon::start(forge.path(), Wants::Default);
    let ws = Scratch::new();
    let into = |url: &str, value: &str, label: &str| {
        pin_cmd(
            &ws,
            &daemon,
            &[
                url,
                "--value",
                value,
                "--unit",
                "tok/s",
                "--label",
                label,
                "--into",
                "pins/two.json",
            ],
        )
    };
    let first = into(
        &format!("https://github.com/{NAME}/blob/main/README.md#L5"),
        "2.9",
        "bench decode",
    );
    first.assert_code(0);
    let second = into(
        "https://github.com/acme/other/blob/main/README.md#L5",
        "3.7",
        "other decode",
    );
    second.assert_code(0);
    assert!(
        second
            .stderr
            .contains("added `other-README.md` to `pins/two.json`"),
        "{}",
        second.stderr
    );
    // The first document again: its source is reused, not duplicated.
    let again = into(
        &format!("https://github.com/{NAME}/blob/{c}/README.md#L6"),
        "41.3",
        "bench prefill",
    );
    again.assert_code(0);
    let file: Value =
        serde_json::from_str(&std::fs::read_to_string(ws.path().join("pins/two.json")).unwrap())
            .unwrap();
    let sources = file["sources"].as_array().unwrap();
    assert_eq!(sources.len(), 2, "{file:#}");
    assert_eq!(sources[0]["id"], "README.md");
    assert_eq!(sources[0]["revision"], c.to_string());
    assert_eq!(sources[1]["id"], "other-README.md");
    assert_eq!(sources[1]["revision"], o.to_string());
    assert_eq!(sources[1]["repository"], "https://github.com/acme/other");
    let cites: Vec<&str> = file["claims"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["source"].as_str().unwrap())
        .collect();
    assert_eq!(cites, ["README.md", "other-README.md", "README.md"]);

    let audit = ws.audit(["--rewrite", &to_daemon(&daemon), "pins/two.json"]);
    audit.assert_code(0);
    for label in ["bench decode", "other decode", "bench prefill"] {
        assert_eq!(audit.claim("two", label)["status"], "verified", "{label}");
    }
}

/// `pin --into` and `audit --fix` never write through a symbolic link: the
/// link and the file it points at are left as they were.
#[cfg(unix)]
#[test]
fn pin_into_and_fix_refuse_a_symbolic_link() {
    let (forge, _repo, c) = crate::common::forge::forge_with_readme();
    let daemon = GitDaemon::start(forge.path(), Wants::Default);
    let ws = Scratch::new();
    let mut pin = good_pin("linked", c);
    pin["sources"][0]["url"] = json!(format!("https://github.com/{NAME}/blob/main/README.md"));
    let real = ws.write_pin(&pin);
    let before = std::fs::read_to_string(ws.path().join(&real)).unwrap();
    std::os::unix::fs::symlink(ws.path().join(&real), ws.path().join("link.json")).unwrap();

    let url = format!("https://github.com/{NAME}/blob/main/README.md#L5");
    let run = pin_cmd(
        &ws,
        &daemon,
        &[&url, "--value", "2.9", "--into", "link.json"],
    );
    run.assert_code(2);
    assert!(
        run.stderr
            .contains("`link.json` is a symbolic link; pinaudit does not write through it"),
        "{}",
        run.stderr
    );
    let fix = ws.audit(["--fix", "--rewrite", &to_daemon(&daemon), "link.json"]);
    assert!(fix.stderr.contains("is a symbolic link"), "{}", fix.stderr);
    assert!(std::fs::symlink_metadata(ws.path().join("link.json"))
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(
        std::fs::read_to_string(ws.path().join(&real)).unwrap(),
        before
    );
}

/// `audit --fix` says what it pinned, and for a record document (never
/// rewritten) which source it left and how to pin it.
#[test]
fn audit_fix_says_what_it_did_and_which_record_document_sources_it_left() {
    let (forge, _repo, c) = crate::common::forge::forge_with_readme();
    let daemon = GitDaemon::start(forge.path(), Wants::Default);
    let ws = Scratch::new();
    let mut pin = good_pin("moving", c);
    let branch_url = format!("https://github.com/{NAME}/blob/main/README.md");
    pin["sources"][0]["url"] = json!(branch_url);
    let file = ws.write_pin(&pin);
    let doc = format!(
        "# Decode - Type: Performance report - Original project: https://github.com/{NAME} \
         - Pinned document: {branch_url} - Source revision: main - Source commit time (not \
         experiment date): {T0_RFC3339} ## Figures ```json {} ```\n",
        json!({"figures": [{
            "label": "decode", "metric": "decode_rate", "value": 2.9, "unit": "tokens/s",
            "source_line": 5, "evidence_url": format!("{branch_url}#L5"),
        }]})
    );
    ws.write("records/moving.md", &doc);
    let run = ws.audit([
        "--fix",
        "--rewrite",
        &to_daemon(&daemon),
        &file,
        "records/moving.md",
    ]);
    assert!(run.stderr.contains("fixed: "), "{}", run.stderr);
    assert!(
        run.stderr.contains("left as written: records/moving.md: source `")
            && run.stderr.contains("cites `main`, not a commit; record documents are never rewritten: pin it with `pinaudit pin '"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("--fix: 1 revision(s) pinned in 1 pin file(s); 1 left as written"),
        "{}",
        run.stderr
    );
    assert_eq!(
        std::fs::read_to_string(ws.path().join("records/moving.md")).unwrap(),
        doc
    );
}

#[test]
fn pin_into_a_pin_file_makes_an_audit_that_passes() {
    let (forge, _repo, c) = crate::common::forge::forge_with_readme();
    let daemon = GitDaemon::start(forge.path(), Wants::Default);
    let ws = Scratch::new();
    let url = format!("https://github.com/{NAME}/blob/main/README.md#L5");
    let run = pin_cmd(
        &ws,
        &daemon,
        &[
            &url,
            "--value",
            "2.9",
            "--unit",
            "tok/s",
            "--label",
            "decode",
            "--into",
            "pins/new.json",
        ],
    );
    run.assert_code(0);
    assert_eq!(run.stdout, "");
    let audit = ws.audit(["--rewrite", &to_daemon(&daemon), "pins/new.json"]);
    audit.assert_code(0);
    assert_eq!(audit.claim("new", "decode")["status"], "verified");
    assert_eq!(audit.source("new", "README.md")["revision"], c.to_string());
}

#[test]
fn audit_fix_pins_branch_urls_of_pin_files_in_place() {
    let (forge, _repo, c) = crate::common::forge::forge_with_readme();
    let daemon = GitDaemon::start(forge.path(), Wants::Default);
    let ws = Scratch::new();
    let mut pin = good_pin("moving", c);
    let branch_url = format!("https://github.com/{NAME}/blob/main/README.md");
    pin["sources"][0]["url"] = json!(branch_url);
    pin["sources"][0]["revision"] = json!("main");
    pin["claims"][0]["url"] = json!(format!("{branch_url}#L5"));
    let file = ws.write_pin(&pin);
    let before = ws.audit(["--rewrite", &to_daemon(&daemon), &file]);
    before.assert_has("unpinned-url");
    let hint = before.with_code("unpinned-url")[0]["hint"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        hint.contains("pinaudit pin '") && hint.contains("--fix"),
        "{hint}"
    );

    let after = ws.audit(["--fix", "--rewrite", &to_daemon(&daemon), &file]);
    assert!(after.stderr.contains("fixed: "), "{}", after.stderr);
    after.assert_lacks("unpinned-url");
    after.assert_code(0);
    let fixed: Value =
        serde_json::from_str(&std::fs::read_to_string(ws.path().join(&file)).unwrap()).unwrap();
    assert_eq!(fixed["sources"][0]["revision"], c.to_string());
    assert_eq!(
        fixed["sources"][0]["url"],
        format!("https://github.com/{NAME}/blob/{c}/README.md")
    );
    assert_eq!(
        fixed["claims"][0]["url"],
        format!("https://github.com/{NAME}/blob/{c}/README.md#L5")
    );
}

#[test]
fn audit_fix_pins_a_source_that_names_only_a_branch() {
    let (forge, _repo, c) = crate::common::forge::forge_with_readme();
    let daemon = GitDaemon::start(forge.path(), Wants::Default);
    let ws = Scratch::new();
    let mut pin = good_pin("bare", c);
    crate::common::inputs::remove(&mut pin["sources"][0], "url");
    pin["sources"][0]["revision"] = json!("main");
    crate::common::inputs::remove(&mut pin["claims"][0], "url");
    let file = ws.write_pin(&pin);
    ws.audit(["--rewrite", &to_daemon(&daemon), &file])
        .assert_has("unpinned-url");
    let after = ws.audit(["--fix", "--rewrite", &to_daemon(&daemon), &file]);
    assert!(
        after.stderr.contains(&format!("revision `main` -> `{c}`")),
        "{}",
        after.stderr
    );
    after.assert_lacks("unpinned-url");
    assert_eq!(after.claim("bare", "decode")["status"], "verified");
}

/// A source given only as a blob URL (no `repository`, `revision` or `path`) is
/// located by its URL: the report's source entry, a finding's location, its
/// hint and its SARIF link all name the repository, the commit and the path.
#[test]
fn a_source_given_only_as_a_url_has_its_location() {
    let (forge, _repo, c) = crate::common::forge::forge_with_readme();
    let daemon = GitDaemon::start(forge.path(), Wants::Default);
    let ws = Scratch::new();
    let mut pin = good_pin("bare-url", c);
    for key in ["repository", "revision", "path", "sha256"] {
        crate::common::inputs::remove(&mut pin["sources"][0], key);
    }
    let file = ws.write_pin(&pin);
    let run = ws.audit(["--rewrite", &to_daemon(&daemon), &file]);
    let s = run.source("bare-url", "readme");
    assert_eq!(
        s["repository"],
        format!("https://github.com/{NAME}"),
        "{s:#}"
    );
    assert_eq!(s["revision"], c.to_string(), "{s:#}");
    assert_eq!(s["path"], "README.md", "{s:#}");
    assert_eq!(run.claim("bare-url", "decode")["status"], "verified");
    let f = run.only("missing-hash");
    assert_eq!(
        f["location"]["repository"],
        format!("https://github.com/{NAME}")
    );
    assert_eq!(f["location"]["revision"], c.to_string());
    assert_eq!(f["location"]["path"], "README.md");
    let hint = f["hint"].as_str().unwrap_or_default();
    let short = &c.to_string()[..7];
    assert!(
        hint.contains(&format!("git show {short}:README.md | sha256sum"))
            && !hint.contains("COMMIT:PATH"),
        "{hint}"
    );

    let sarif = ws.run([
        "audit",
        "--cache",
        "cache",
        "--format",
        "sarif",
        "--rewrite",
        &to_daemon(&daemon),
        &file,
    ]);
    let sarif: Value = serde_json::from_str(&sarif.stdout).expect("SARIF is JSON");
    let results = assert_valid_sarif(&sarif);
    let missing = results
        .iter()
        .find(|r| r["ruleId"] == "missing-hash")
        .expect("missing-hash");
    assert_eq!(
        missing["relatedLocations"][0]["physicalLocation"]["artifactLocation"]["uri"],
        format!("https://github.com/{NAME}/blob/{c}/README.md"),
        "{missing:#}"
    );
}

// --- Shards and merge --------------------------------------------------------------

#[test]
fn shards_partition_records_fetch_each_repository_once_and_merge_to_the_whole() {
    let forge = Forge::new();
    // Enough repositories that both shards of two hold some.
    let names: Vec<String> = (0..6).map(|i| format!("acme/r{i}")).collect();
    let shard =
        |name: &str| pinaudit::shard::shard_of(&format!("https://github.com/{name}.git"), 2);
    assert!(names.iter().any(|n| shard(n) == 1) && names.iter().any(|n| shard(n) == 2));
    let ws = Scratch::new();
    for (i, name) in names.iter().enumerate() {
        let repo = forge.repo(name);
        let c = repo.commit(&[("README.md", README)], "add results", T0);
        ws.write_pin(&readme_pin(
            &format!("rec{i}"),
            name,
            c,
            &sha256_hex(README),
            T0_RFC3339,
        ));
    }
    let daemon = GitDaemon::start(forge.path(), Wants::Default);
    let rewrite = to_daemon(&daemon);
    let run_into = |cache: &str, out: &str, shard: Option<&str>| {
        let mut args = vec![
            "audit",
            "--cache",
            cache,
            "--format",
            "json",
            "--timeout",
            "10",
            "--rewrite",
            &rewrite,
            "--output",
            out,
        ];
        if let Some(s) = shard {
            args.extend(["--shard", s]);
        }
        args.push("pins");
        ws.run(args)
    };
    run_into("cache-all", "all.json", None).assert_code(0);
    run_into("cache-1", "s1.json", Some("1/2")).assert_code(0);
    run_into("cache-2", "s2.json", Some("2/2")).assert_code(0);
    let read = |f: &str| -> Value {
        serde_json::from_str(&std::fs::read_to_string(ws.path().join(f)).unwrap()).unwrap()
    };
    let ids = |v: &Value| -> Vec<String> {
        v["records"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["id"].as_str().unwrap().to_string())
            .collect()
    };
    let (all, s1, s2) = (read("all.json"), read("s1.json"), read("s2.json"));
    let mut both: Vec<String> = ids(&s1).into_iter().chain(ids(&s2)).collect();
    both.sort();
    assert_eq!(both, ids(&all), "the shards partition the records");
    assert!(ids(&s1).iter().all(|id| !ids(&s2).contains(id)));
    // Each repository was fetched by exactly one shard: its mirror is in one cache.
    for name in &names {
        let in_cache = |cache: &str| {
            ws.path()
                .join(cache)
                .join("git/github.com")
                .join(format!("{name}.git"))
                .exists()
        };
        assert!(in_cache("cache-1") ^ in_cache("cache-2"), "{name}");
        assert_eq!(in_cache("cache-1"), shard(name) == 1, "{name}");
    }

    let merged = ws.run(["merge", "s1.json", "s2.json"]);
    merged.assert_code(0);
    let mut merged: Value = serde_json::from_str(&merged.stdout).unwrap();
    let mut all = all;
    merged["generated_at"] = Value::Null;
    all["generated_at"] = Value::Null;
    assert_eq!(merged, all);
}

#[test]
fn merge_refuses_what_is_not_a_v1_report_and_keeps_the_exit_status_of_the_whole() {
    let ws = Scratch::new();
    ws.write("x.json", "{\"schema\": \"other\"}");
    let run = ws.run(["merge", "x.json"]);
    run.assert_code(2);
    assert!(
        run.stderr.contains("is not a `pinaudit/report/v1` report"),
        "{}",
        run.stderr
    );
    // The seed offline has warnings and is incomplete: the merge says the same.
    let seed = seed_path();
    let s = ws.run([
        "audit",
        "--offline",
        "--cache",
        "cache",
        "--format",
        "json",
        "--output",
        "seed.json",
        "--fail-on",
        "warning",
        seed.to_str().unwrap(),
    ]);
    s.assert_code(1);
    ws.run(["merge", "seed.json", "--fail-on", "warning"])
        .assert_code(1);
    ws.run(["merge", "seed.json"]).assert_code(2);
}

// --- Completions and the man page -----------------------------------------------------

#[test]
fn completions_and_man_page_are_printed() {
    let ws = Scratch::new();
    for shell in ["bash", "zsh", "fish", "powershell"] {
        let run = ws.run(["completions", shell]);
        run.assert_code(0);
        assert!(run.stdout.contains("pinaudit"), "{shell}");
        assert!(run.stdout.contains("audit"), "{shell}");
    }
    let man = ws.run(["man"]);
    man.assert_code(0);
    assert!(
        man.stdout.starts_with(".ie") || man.stdout.contains(".TH pinaudit"),
        "{}",
        &man.stdout[..200.min(man.stdout.len())]
    );
    // A page per subcommand, nested ones too, with the flags `--help` lists.
    let audit = ws.run(["man", "audit"]);
    audit.assert_code(0);
    assert!(
        audit.stdout.contains(".TH pinaudit-audit 1"),
        "{}",
        audit.stdout
    );
    assert!(audit.stdout.contains("fail\\-on"), "{}", audit.stdout);
    let gc = ws.run(["man", "cache", "gc"]);
    gc.assert_code(0);
    assert!(
        gc.stdout.contains(".TH pinaudit-cache-gc 1"),
        "{}",
        gc.stdout
    );
    ws.run(["man", "no-such-command"]).assert_code(3);
    let dir = ws.path().join("man1");
    let all = ws.run(["man", "--dir", dir.to_str().unwrap()]);
    all.assert_code(0);
    for page in [
        "pinaudit.1",
        "pinaudit-audit.1",
        "pinaudit-show.1",
        "pinaudit-cache-gc.1",
    ] {
        let text = std::fs::read_to_string(dir.join(page)).unwrap_or_default();
        assert!(text.contains(".SH NAME"), "{page}: {text}");
        // Every page says what its exit status means and what it reads from
        // the environment (issue 47).
        assert!(text.contains(".SH \"EXIT STATUS\""), "{page}: {text}");
        assert!(text.contains(".SH ENVIRONMENT"), "{page}: {text}");
        assert!(text.contains("PINAUDIT_CACHE_KEY"), "{page}: {text}");
    }
    // A command's own exit status, not the general one.
    let gc_page = std::fs::read_to_string(dir.join("pinaudit-cache-gc.1")).unwrap_or_default();
    let exit = gc_page
        .split(".SH \"EXIT STATUS\"")
        .nth(1)
        .unwrap_or_default();
    assert!(exit.contains("last copy"), "{exit}");
    let audit_page = std::fs::read_to_string(dir.join("pinaudit-audit.1")).unwrap_or_default();
    let exit = audit_page
        .split(".SH \"EXIT STATUS\"")
        .nth(1)
        .unwrap_or_default();
    assert!(exit.contains("could not be checked"), "{exit}");
}
