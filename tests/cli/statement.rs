//! `audit --format in-toto` and `pinaudit verify-statement`: the statement of
//! an audit of the served seed validates against the in-toto Statement v1 schema
//! and our predicate's schema (`docs/schemas/`), and a changed record or
//! document is reported when the statement is checked again.

use std::ffi::OsStr;

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::common::run::Run;
use crate::common::scratch::Scratch;
use crate::common::seed::{manifest_dir, seed_pinned_to, Remote, SEED_ID, SEED_STATUSES};

fn validator(name: &str) -> jsonschema::Validator {
    let path = manifest_dir().join("docs/schemas").join(name);
    let text = std::fs::read_to_string(&path).expect("the schema is readable");
    let schema: Value = serde_json::from_str(&text).expect("the schema is JSON");
    if let Err(e) = jsonschema::meta::validate(&schema) {
        panic!("{name} is not a valid JSON Schema: {e}");
    }
    jsonschema::validator_for(&schema).unwrap_or_else(|e| panic!("{name} does not compile: {e}"))
}

fn assert_valid(v: &jsonschema::Validator, doc: &Value, what: &str) {
    let errors: Vec<String> = v
        .iter_errors(doc)
        .map(|e| format!("  at `{}`: {e}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{what} invalid:\n{}", errors.join("\n"));
}

/// Audits the served seed (pinned to the fixture's commit) into `statement.json`.
fn audit_to_statement(work: &Scratch, remote: &Remote, commit: git2::Oid) -> Value {
    let record = work.write("records/seed.md", seed_pinned_to(&commit.to_string()));
    let r = work.run([
        OsStr::new("audit"),
        OsStr::new("--cache"),
        OsStr::new("cache"),
        OsStr::new("--timeout"),
        OsStr::new("10"),
        OsStr::new("--format"),
        OsStr::new("in-toto"),
        OsStr::new("--fail-on"),
        OsStr::new("never"),
        OsStr::new("--output"),
        OsStr::new("statement.json"),
        OsStr::new("--rewrite"),
        OsStr::new(&remote.rewrite()),
        record.as_os_str(),
    ]);
    assert_eq!(r.code(), 0, "stderr:\n{}", r.stderr);
    let text = std::fs::read_to_string(work.path().join("statement.json")).expect("written");
    serde_json::from_str(&text).expect("the statement is JSON")
}

fn verify(work: &Scratch, extra: &[&str]) -> Run {
    verify_in(work, "cache", extra)
}

fn verify_in(work: &Scratch, cache: &str, extra: &[&str]) -> Run {
    let mut args = vec!["verify-statement", "statement.json", "--cache", cache];
    args.extend_from_slice(extra);
    work.run(args)
}

#[test]
fn statement_validates_against_the_in_toto_and_predicate_schemas() {
    let (remote, commit) = Remote::seed();
    let work = Scratch::new();
    let st = audit_to_statement(&work, &remote, commit);
    assert_valid(
        &validator("in-toto-statement-v1.schema.json"),
        &st,
        "statement",
    );
    assert_valid(
        &validator("pinaudit-audit-statement-v1.schema.json"),
        &st["predicate"],
        "predicate",
    );
    assert_eq!(st["_type"], "https://in-toto.io/Statement/v1");
    assert_eq!(
        st["predicateType"],
        "https://pinaudit.dev/audit-statement/v1"
    );
    let subjects = st["subject"].as_array().expect("subjects");
    // The record file, by sha256 of its bytes.
    let record = std::fs::read(work.path().join("records/seed.md")).unwrap();
    let record_subject = subjects
        .iter()
        .find(|s| s["name"] == "records/seed.md")
        .unwrap_or_else(|| panic!("no record subject in {subjects:#?}"));
    let hex: String = Sha256::digest(&record)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(
        record_subject["digest"],
        serde_json::json!({ "sha256": hex })
    );
    // Each cited document at the pinned commit, named by its page there.
    let readme = format!("{}#", remote.blob_url(commit, "README.md"));
    let readme_subject = subjects
        .iter()
        .find(|s| {
            s["name"]
                .as_str()
                .is_some_and(|n| format!("{n}#").starts_with(&readme))
        })
        .unwrap_or_else(|| panic!("no README subject in {subjects:#?}"));
    assert_eq!(readme_subject["digest"]["gitCommit"], commit.to_string());
    let blob = git2::Oid::hash_object(
        git2::ObjectType::Blob,
        crate::common::seed::readme().as_bytes(),
    )
    .unwrap();
    assert_eq!(readme_subject["digest"]["gitBlob"], blob.to_string());
    let hex: String = Sha256::digest(crate::common::seed::readme().as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(readme_subject["digest"]["sha256"], hex);
    // One record subject and six documents (the seed's sources).
    assert_eq!(subjects.len(), 7, "{subjects:#?}");
    // Every claim's verdict, every finding's code and fingerprint, the policy.
    let p = &st["predicate"];
    let claims: Vec<(String, String)> = p["claims"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            assert_eq!(c["record"], SEED_ID);
            (
                c["label"].as_str().unwrap().to_string(),
                c["status"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let want: Vec<(String, String)> = SEED_STATUSES
        .iter()
        .map(|(l, s)| (l.to_string(), s.to_string()))
        .collect();
    assert_eq!(claims, want);
    let findings = p["findings"].as_array().unwrap();
    assert!(
        !findings.is_empty(),
        "the fixture's hashes differ from the seed's"
    );
    assert!(findings
        .iter()
        .any(|f| f["code"] == "hash-mismatch" && f["fingerprint"].as_str().unwrap().len() > 8));
    assert_eq!(p["policy"]["fail_on"], "never");
    assert_eq!(p["policy"]["baseline"], Value::Null);
    assert_eq!(p["tool"]["name"], "pinaudit");
}

#[test]
fn verify_statement_says_same_then_names_a_changed_record_and_document() {
    let (remote, commit) = Remote::seed();
    let work = Scratch::new();
    let mut st = audit_to_statement(&work, &remote, commit);

    let r = verify(&work, &[]);
    assert_eq!(r.code(), 0, "stdout:\n{}\nstderr:\n{}", r.stdout, r.stderr);
    assert!(
        r.stdout.contains("same       records/seed.md"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout
            .contains("7 subject(s) the same, 0 changed, 0 not checked"),
        "{}",
        r.stdout
    );
    // Given explicitly, the record is found by its path.
    let r = verify(&work, &["records/seed.md"]);
    assert_eq!(r.code(), 0, "{}", r.stdout);

    // A record edited after the audit.
    let path = work.path().join("records/seed.md");
    let mut text = std::fs::read_to_string(&path).unwrap();
    text.push_str("\nedited after the audit\n");
    std::fs::write(&path, text).unwrap();
    let r = verify(&work, &[]);
    assert_eq!(r.code(), 1, "{}", r.stdout);
    assert!(
        r.stdout.contains("changed    records/seed.md: sha256 was "),
        "{}",
        r.stdout
    );
    // A file the statement does not speak about.
    work.write("records/other.md", "no record");
    let r = verify(&work, &["records/other.md"]);
    assert_eq!(r.code(), 1, "{}", r.stdout);
    assert!(
        r.stdout
            .contains("changed    records/other.md: the statement names no such record file"),
        "{}",
        r.stdout
    );

    // A statement about another version of a document than the cache holds:
    // its README subject carries the digests of a different blob.
    let subjects = st["subject"].as_array_mut().unwrap();
    let readme = subjects
        .iter_mut()
        .find(|s| s["name"].as_str().unwrap().contains("/README.md"))
        .unwrap();
    let name = readme["name"].as_str().unwrap().to_string();
    let other = "0".repeat(40);
    readme["digest"]["gitBlob"] = Value::from(other.clone());
    work.write("statement.json", serde_json::to_string_pretty(&st).unwrap());
    let r = verify(&work, &[]);
    assert_eq!(r.code(), 1, "{}", r.stdout);
    assert!(
        r.stdout
            .contains(&format!("changed    {name}: gitBlob was {other}, now ")),
        "{}",
        r.stdout
    );

    // Without the documents in the cache, nothing can be said about them.
    let r = verify_in(&work, "empty", &[]);
    assert_eq!(r.code(), 1, "the record is still changed: {}", r.stdout);
    assert!(r.stdout.contains("unchecked  "), "{}", r.stdout);
}

#[test]
fn verify_statement_refuses_what_is_not_a_statement() {
    let work = Scratch::new();
    work.write(
        "statement.json",
        r#"{"_type": "https://in-toto.io/Statement/v1"}"#,
    );
    let r = verify(&work, &[]);
    assert_eq!(r.code(), 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("not a pinaudit in-toto statement"),
        "{}",
        r.stderr
    );
    work.write("statement.json", "{");
    let r = verify(&work, &[]);
    assert_eq!(r.code(), 2, "{}", r.stderr);
    assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
}

/// A statement vouching for nothing this command reads again fails, naming
/// what it skipped; record subjects are read only as regular files of a
/// bounded size (`/dev/zero` and a FIFO are refused at once).
#[test]
fn verify_statement_fails_when_it_checked_nothing_and_reads_only_regular_files() {
    let (remote, commit) = Remote::seed();
    let work = Scratch::new();
    let st = audit_to_statement(&work, &remote, commit);

    // The predicate lists none of the subjects.
    let mut bare = st.clone();
    bare["predicate"]["records"] = Value::Array(vec![]);
    bare["predicate"]["documents"] = Value::Array(vec![]);
    work.write(
        "statement.json",
        serde_json::to_string_pretty(&bare).unwrap(),
    );
    let r = verify(&work, &[]);
    assert_eq!(r.code(), 2, "stdout:\n{}\nstderr:\n{}", r.stdout, r.stderr);
    assert!(
        r.stdout.contains(
            "unchecked  records/seed.md: the predicate lists no record or document of this name"
        ),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("nothing was checked"), "{}", r.stdout);

    // A record subject naming a device, then a FIFO nobody writes to.
    let fifo = work.path().join("records/fifo.md");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo runs");
    assert!(made.success());
    for name in ["/dev/zero", "records/fifo.md"] {
        let mut odd = st.clone();
        odd["predicate"]["records"][0]["file"] = Value::from(name);
        for s in odd["subject"].as_array_mut().unwrap() {
            if s["name"] == "records/seed.md" {
                s["name"] = Value::from(name);
            }
        }
        work.write(
            "statement.json",
            serde_json::to_string_pretty(&odd).unwrap(),
        );
        let r = verify(&work, &[]);
        assert_eq!(r.code(), 1, "{name}: {}\n{}", r.stdout, r.stderr);
        assert!(
            r.stdout.contains(&format!(
                "changed    {name}: cannot be read: not a regular file"
            )),
            "{}",
            r.stdout
        );
    }

    // A statement longer than --max-document-size is not read.
    work.write("statement.json", serde_json::to_string_pretty(&st).unwrap());
    let r = verify(&work, &["--max-document-size", "100"]);
    assert_eq!(r.code(), 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("longer than --max-document-size"),
        "{}",
        r.stderr
    );
    // And the statement itself must be a regular file.
    let r = work.run(["verify-statement", "/dev/zero", "--cache", "cache"]);
    assert_eq!(r.code(), 2, "{}", r.stderr);
    assert!(r.stderr.contains("not a regular file"), "{}", r.stderr);
}
