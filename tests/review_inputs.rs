//! Regressions for the review of record reading and record-level judgement: each
//! test names the defect it pins down. All runs are offline.

#[path = "foundation_support/mod.rs"]
mod support;

use serde_json::{json, Value};
use support::*;

/// Review: one figure without `value` made the importer drop every figure.
#[test]
fn a_figure_without_a_value_is_reported_and_the_others_kept() {
    let fx = Fixture::new();
    let mut bad = figure("no value", 1.0, 4);
    bad.as_object_mut().unwrap().remove("value");
    let doc = record_doc(&[&figures_block(&[figure("decode", 2.9, 3), bad])]);
    let r = fx.audit_doc("rec.md", &doc);
    let rec = r.record("rec").expect("record read");
    assert_eq!(rec["claims"].as_array().unwrap().len(), 2, "{rec:#}");
    let f = r.only("invalid-record");
    assert!(
        f["message"].as_str().unwrap().contains("has no `value`"),
        "{f:#}"
    );
    // The README is the header's document, not a stand-in built from a profile.
    assert_eq!(rec["sources"][0]["id"], "readme");
}

/// Review: `{"label": "temperature", "value": 0.2}` in a recipe was taken for figures.
#[test]
fn recipe_parameters_are_not_figures() {
    let fx = Fixture::new();
    let recipe = json!({"recipe_parameters": [{"label": "temperature", "value": 0.2}]});
    let doc = record_doc(&[
        &figures_block(&[figure("decode", 2.9, 3)]),
        &serde_json::to_string(&recipe).unwrap(),
    ]);
    let r = fx.audit_doc("rec.md", &doc);
    let rec = r.record("rec").expect("record read");
    assert_eq!(rec["claims"].as_array().unwrap().len(), 1, "{rec:#}");
    r.assert_lacks("uncited-claim");
}

/// Review: a figure with a URL but no `source_document_id` duplicated its source.
#[test]
fn a_figure_without_an_id_cites_the_listed_source_at_its_url() {
    let fx = Fixture::new();
    let mut f = figure("decode", 2.9, 3);
    f.as_object_mut().unwrap().remove("source_document_id");
    let doc = record_doc(&[&figures_block(&[figure("prefill", 79.6, 4), f])]);
    let r = fx.audit_doc("rec.md", &doc);
    let rec = r.record("rec").expect("record read");
    assert_eq!(rec["sources"].as_array().unwrap().len(), 1, "{rec:#}");
    assert_eq!(rec["claims"][1]["source"], "readme");
    r.assert_lacks("missing-hash");
}

/// Review: a figure's hash disagreeing with its source's was silently dropped.
#[test]
fn a_figure_hash_that_contradicts_its_source_is_reported() {
    let fx = Fixture::new();
    let mut f = figure("prefill", 79.6, 4);
    f["source_document_sha256"] = json!("0".repeat(64));
    let doc = record_doc(&[&figures_block(&[figure("decode", 2.9, 3), f])]);
    let r = fx.audit_doc("rec.md", &doc);
    let f = r.only("invalid-record");
    let msg = f["message"].as_str().unwrap();
    assert!(
        msg.contains("records sha256") && msg.contains("prefill"),
        "{msg}"
    );
}

/// Review: a document cited only by a test profile became a hash-less source.
#[test]
fn a_profile_only_document_is_a_reference_whose_pin_is_judged() {
    let fx = Fixture::new();
    let profiles = json!({"test_profiles": [
        {"label": "decode run", "evidence_url": format!("{}#L3", blob_url(REV, "README.md"))},
        {"label": "log", "evidence_url": format!("{REPO}/blob/main/logs/run.txt#L9")}
    ]});
    let doc = record_doc(&[
        &figures_block(&[figure("decode", 2.9, 3)]),
        &serde_json::to_string(&profiles).unwrap(),
    ]);
    let r = fx.audit_doc("rec.md", &doc);
    let rec = r.record("rec").expect("record read");
    assert_eq!(rec["sources"].as_array().unwrap().len(), 1, "{rec:#}");
    r.assert_lacks("missing-hash");
    let f = r.only("unpinned-url");
    assert_eq!(f["evidence"]["reference"], "log", "{f:#}");

    // `import` keeps the reference in the pin file, and the pin file is judged alike.
    let out = fx.path().join("out");
    let imported = run(fx.cmd().args(["import", "rec.md", "--out"]).arg(&out));
    assert_eq!(imported.code(), 0, "{}", imported.stderr);
    let pin: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("rec.json")).unwrap()).unwrap();
    assert_eq!(pin["references"][0]["label"], "log", "{pin:#}");
    let again = fx.audit([out.join("rec.json")]);
    assert_eq!(again.only("unpinned-url")["evidence"]["reference"], "log");
}

/// Review: a source with no revision, or no path, left the audit "incomplete" (exit 2)
/// without saying what was wrong with the record.
#[test]
fn a_source_without_revision_or_path_is_a_finding() {
    let fx = Fixture::new();
    let mut pin = pin_file("rec");
    let mut norev = source("norev");
    remove(&mut norev, "revision");
    norev["url"] = json!(null);
    let mut nopath = source("nopath");
    remove(&mut nopath, "path");
    nopath["url"] = json!(null);
    pin["sources"] = json!([norev, nopath]);
    pin["claims"] = json!([]);
    let r = fx.audit_pin(&pin);
    let unpinned = r.with_code("unpinned-url");
    assert_eq!(unpinned.len(), 1, "{:#?}", r.findings());
    assert_eq!(unpinned[0]["source"], "norev");
    let invalid = r.with_code("invalid-record");
    assert!(
        invalid.iter().any(|f| f["source"] == "nopath"
            && f["message"].as_str().unwrap().contains("no document path")),
        "{invalid:#?}"
    );
    assert_eq!(r.code(), 1);
}

/// Review: a claim with no value was silently unchecked while the audit passed.
#[test]
fn a_claim_without_a_value_is_a_finding() {
    let fx = Fixture::new();
    let mut pin = pin_file("rec");
    remove(&mut pin["claims"][0], "value");
    let r = fx.audit_pin(&pin);
    let f = r.only("invalid-record");
    assert!(
        f["message"].as_str().unwrap().contains("has no `value`"),
        "{f:#}"
    );
    assert_eq!(r.code(), 1);
}

/// Review: duplicate source ids and claim labels were accepted without a word.
#[test]
fn duplicate_source_ids_and_claim_labels_are_findings() {
    let fx = Fixture::new();
    let mut pin = pin_file("rec");
    pin["sources"] = json!([source("readme"), source("readme")]);
    pin["claims"] = json!([claim("decode", "readme"), claim("decode", "readme")]);
    let r = fx.audit_pin(&pin);
    let invalid = r.with_code("invalid-record");
    let messages: Vec<&str> = invalid
        .iter()
        .filter_map(|f| f["message"].as_str())
        .collect();
    assert!(
        messages
            .iter()
            .any(|m| m.contains("source id `readme` is used twice")),
        "{messages:?}"
    );
    assert!(
        messages
            .iter()
            .any(|m| m.contains("claim label `decode` is used twice")),
        "{messages:?}"
    );
}

/// Review: two files with one record id mixed their findings in text and markdown.
#[test]
fn records_sharing_an_id_are_told_apart_by_file() {
    let fx = Fixture::new();
    let mut a = pin_file("same");
    a["sources"][0]["sha256"] = json!("abc");
    let b = pin_file("same");
    let fa = fx.write_json("pins/a.json", &a);
    let fb = fx.write_json("pins/b.json", &b);
    let r = fx.audit([&fa, &fb]);
    let dup = r.only("invalid-record");
    assert_eq!(dup["file"], "pins/b.json", "{dup:#}");
    let malformed = r.only("malformed-hash");
    assert_eq!(malformed["file"], "pins/a.json");
    // In text, each finding is listed once, under its own file.
    let mut cmd = fx.cmd();
    cmd.args(["audit", "--offline", "--cache", "cache"])
        .args([&fa, &fb]);
    let text = run(&mut cmd).stdout;
    assert_eq!(text.matches("malformed-hash").count(), 1, "{text}");
}

/// Review: credentials in a record's URLs reached the report.
#[test]
fn credentials_in_record_urls_never_reach_the_report() {
    let fx = Fixture::new();
    let mut pin = pin_file("rec");
    pin["sources"][0]["url"] =
        json!("https://bob:ghp_SECRET123@github.com/owner/repo/blob/main/README.md");
    let r = fx.audit_pin(&pin);
    assert!(!r.stdout.contains("SECRET123") && !r.stderr.contains("SECRET123"));
    assert!(r.with_code("invalid-record").iter().any(|f| f["message"]
        .as_str()
        .unwrap()
        .contains("carries credentials")));
    r.assert_has("unpinned-url");

    // A malformed --rewrite rule is refused without echoing its credential.
    let mut cmd = fx.cmd();
    cmd.args([
        "audit",
        "--offline",
        "--rewrite",
        "https://u:t0ken@h/",
        "pins",
    ]);
    let bad = run(&mut cmd);
    assert_eq!(bad.code(), 2);
    assert!(bad.stderr.contains("--rewrite"), "{}", bad.stderr);
    assert!(!bad.stderr.contains("t0ken"), "{}", bad.stderr);
}

/// Review: a directory without inputs passed a CI gate with exit 0.
#[test]
fn an_audit_with_no_inputs_is_incomplete() {
    let fx = Fixture::new();
    fx.write("pins/README", "not an input");
    let r = fx.audit(["pins"]);
    assert_eq!(r.code(), 2);
    assert!(r.stderr.contains("no pin files"), "{}", r.stderr);
    assert_eq!(r.report()["summary"]["complete"], false);
}

/// Review: `import` wrote an empty pin file for a document with no json blocks.
#[test]
fn import_of_a_document_without_figures_writes_nothing() {
    let fx = Fixture::new();
    fx.write("empty.md", "# Just prose\n\nNo blocks here.\n");
    let r = run(fx.cmd().args(["import", "empty.md", "--out", "out"]));
    assert_eq!(r.code(), 2);
    assert!(r.stderr.contains("nothing written"), "{}", r.stderr);
    assert!(!fx.path().join("out").exists());
}

/// Review: a pin file saved with a UTF-8 byte order mark was "not valid JSON".
#[test]
fn a_pin_file_with_a_byte_order_mark_reads() {
    let fx = Fixture::new();
    let mut bytes = b"\xef\xbb\xbf".to_vec();
    bytes.extend(serde_json::to_vec(&pin_file("bom")).unwrap());
    let file = fx.write("pins/bom.json", bytes);
    let r = fx.audit([file]);
    assert!(r.record("bom").is_some(), "{}", r.stdout);
    r.assert_lacks("invalid-record");
}

/// Review: an unreadable commit time was only reported once the commit was fetched.
#[test]
fn an_unreadable_commit_time_is_reported_offline() {
    let fx = Fixture::new();
    let mut pin = pin_file("rec");
    pin["sources"][0]["commit_time"] = json!("last tuesday");
    let r = fx.audit_pin(&pin);
    let f = r.only("invalid-record");
    assert!(
        f["message"].as_str().unwrap().contains("last tuesday"),
        "{f:#}"
    );
}

/// Review: JSON error positions counted bytes, not characters, and repeated the block.
#[test]
fn json_error_positions_count_characters() {
    let fx = Fixture::new();
    let text = "# ééé\n```json\n{\"label\": \"ééé\", }\n```\n";
    let r = fx.audit_doc("rec.md", text);
    let f = r.only("invalid-record");
    // Line 3 is `{"label": "ééé", }`: the error is at the `}`, character 18 (byte 21).
    assert_eq!(f["evidence"]["line"], 3, "{f:#}");
    assert_eq!(f["evidence"]["column"], 18, "{f:#}");
    let msg = f["message"].as_str().unwrap();
    assert_eq!(msg.matches("block 1").count(), 1, "{msg}");
    assert!(!msg.contains("at line"), "{msg}");
}
