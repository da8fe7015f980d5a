//! Reading records (issue "Foundation"): the record-level finding codes (each
//! triggered, and a near miss that must not trigger it), the offline audit of the
//! seed, the default input directory, and exit statuses.
//!
//! Every test writes a pin file or a small record document into a scratch
//! directory and runs `pinaudit audit --offline --format json` on it: offline,
//! every source is `unchecked`, so only the record-level checks can produce
//! findings.

use std::path::Path;

use serde_json::{json, Value};

use crate::common::inputs::{
    blob_url, empty_pin_file, figure, figures_block, pin_file, record_doc, remove, OTHER_REV, REPO,
    REV, SHA,
};
use crate::common::run::{run, Run};
use crate::common::scratch::{pinaudit, Scratch};
use crate::common::seed::{manifest_dir, SEED_ID};

/// `pinaudit audit --offline --format json tests/data/seed.txt` with a fresh cache.
fn audit_seed(extra: &[&str]) -> Run {
    audit_seed_with_cache(&Scratch::new(), extra)
}

fn audit_seed_with_cache(cache: &Scratch, extra: &[&str]) -> Run {
    run(pinaudit()
        .current_dir(manifest_dir())
        .args(["audit", "--offline", "--cache"])
        .arg(cache.path())
        .args(["--format", "json"])
        .args(extra)
        .arg("tests/data/seed.txt"))
}

/// The report text with what differs between machines and releases replaced.
/// (Compared as text: `arbitrary_precision` numbers do not survive insta's
/// serializer, and the text is what users' scripts read anyway.)
fn stable(report: &str, cache: &Scratch) -> String {
    report
        .replace(&cache.path().display().to_string(), "[cache]")
        .replace(&manifest_dir().display().to_string(), "[repo]")
        .replace(
            &format!("\"version\": \"{}\"", env!("CARGO_PKG_VERSION")),
            "\"version\": \"[version]\"",
        )
}

/// A pin file with one claim whose fields are replaced by `fields`.
fn pin_with_claim(fields: Value) -> Value {
    let mut pin = pin_file("r");
    for (k, v) in fields.as_object().unwrap() {
        pin["claims"][0][k] = v.clone();
    }
    pin
}

/// A claim of a percentage with its counts.
fn percent_claim(value: Value, correct: u64, total: u64) -> Value {
    pin_with_claim(json!({
        "label": "accuracy",
        "value": value,
        "unit": "percent",
        "correct": correct,
        "total": total,
    }))
}

// --- The seed ---------------------------------------------------------------

#[test]
fn seed_offline_report_snapshot() {
    let cache = Scratch::new();
    let r = audit_seed_with_cache(&cache, &[]);
    r.report(); // stdout is one JSON document
    insta::assert_snapshot!("seed_offline_report", stable(&r.stdout, &cache));
}

#[test]
fn seed_offline_reports_only_the_unpinned_artifacts() {
    let r = audit_seed(&[]);
    assert_eq!(r.codes(), ["unpinned-weights", "unpinned-runtime"]);
    for code in [
        "unpinned-url",
        "inconsistent-value",
        "revision-conflict",
        "malformed-hash",
        "invalid-record",
        "uncited-claim",
        "missing-hash",
    ] {
        r.assert_lacks(code);
    }
    let weights = r.only("unpinned-weights");
    assert_eq!(weights["severity"], "warning");
    assert_eq!(weights["record"], SEED_ID);
    assert_eq!(
        weights["evidence"]["artifact"],
        "k3-neuron-iq1s, nine GGUF shards"
    );
    let runtime = r.only("unpinned-runtime");
    assert_eq!(runtime["severity"], "warning");
    assert_eq!(
        runtime["evidence"]["artifact"],
        "pwilkin llama.cpp fork, build-rdma"
    );
}

#[test]
fn seed_offline_leaves_every_source_unchecked_and_is_incomplete() {
    let r = audit_seed(&[]);
    let report = r.report();
    let record = r.record(SEED_ID).expect("the seed's record is reported");
    let sources = record["sources"].as_array().unwrap();
    assert_eq!(sources.len(), 6);
    for s in sources {
        assert_eq!(s["status"], "unchecked", "{s}");
    }
    for c in record["claims"].as_array().unwrap() {
        assert_eq!(c["status"], "unchecked", "{c}");
    }
    let summary = &report["summary"];
    assert_eq!(summary["complete"], false);
    assert_eq!(summary["records"], 1);
    assert_eq!(summary["sources"], 6);
    assert_eq!(summary["unchecked_sources"], 6);
    assert_eq!(summary["claims"], 8);
    assert_eq!(summary["verified_claims"], 0);
    assert_eq!(
        summary["findings"],
        json!({"error": 0, "warning": 2, "note": 0})
    );
    assert_eq!(report["schema"], "pinaudit/report/v1");
    assert_eq!(report["generated_at"], "1970-01-01T00:00:00Z");
    assert_eq!(r.code(), 2, "warnings only, sources unchecked");
}

// --- A clean record: the near miss of every code ----------------------------

#[test]
fn clean_pin_file_has_no_findings() {
    let fx = Scratch::new();
    let r = fx.audit_pin(&pin_file("clean"));
    assert_eq!(r.codes(), Vec::<String>::new());
    assert_eq!(r.code(), 2, "no findings, but the source is unchecked");
}

// --- invalid-record ---------------------------------------------------------

#[test]
fn invalid_record_for_a_value_written_as_a_string() {
    let fx = Scratch::new();
    let r = fx.audit_pin(&pin_with_claim(json!({"value": "2.9"})));
    let f = r.only("invalid-record");
    assert_eq!(f["severity"], "error");
    assert_eq!(f["record"], "r");
    assert_eq!(f["evidence"]["pointer"], "/claims/0/value");
    assert!(f["message"].as_str().unwrap().contains("r.json"), "{f}");
    assert_eq!(r.code(), 1);
}

#[test]
fn no_invalid_record_for_a_value_written_as_a_number() {
    let fx = Scratch::new();
    let r = fx.audit_pin(&pin_with_claim(json!({"value": 2.9})));
    r.assert_lacks("invalid-record");
}

#[test]
fn no_invalid_record_for_lines_written_as_a_range_string() {
    // `record::lenient::Reader::lines` documents `"43-45"` as an accepted form.
    let fx = Scratch::new();
    let r = fx.audit_pin(&pin_with_claim(json!({"lines": "43-45"})));
    r.assert_lacks("invalid-record");
    assert_eq!(
        r.record("r").unwrap()["claims"][0]["lines"],
        json!([43, 45])
    );
}

#[test]
fn no_invalid_record_for_a_single_line_number() {
    let fx = Scratch::new();
    let r = fx.audit_pin(&pin_with_claim(json!({"lines": 43})));
    assert_eq!(r.codes(), Vec::<String>::new());
    assert_eq!(
        r.record("r").unwrap()["claims"][0]["lines"],
        json!([43, 43])
    );
}

// --- uncited-claim ----------------------------------------------------------

#[test]
fn uncited_claim_when_a_figure_names_no_source() {
    let fx = Scratch::new();
    let mut pin = pin_file("r");
    remove(&mut pin["claims"][0], "source");
    let r = fx.audit_pin(&pin);
    let f = r.only("uncited-claim");
    assert_eq!(f["severity"], "error");
    assert_eq!(f["record"], "r");
    assert_eq!(f["claim"], "decode");
    assert_eq!(f["source"], Value::Null);
    assert_eq!(r.code(), 1);
}

#[test]
fn uncited_claim_when_a_figure_names_an_unknown_source() {
    let fx = Scratch::new();
    let r = fx.audit_pin(&pin_with_claim(json!({"source": "nowhere"})));
    let f = r.only("uncited-claim");
    assert_eq!(f["claim"], "decode");
    assert_eq!(f["source"], "nowhere");
    assert!(f["message"].as_str().unwrap().contains("nowhere"), "{f}");
}

#[test]
fn uncited_claim_when_a_figure_names_no_line() {
    let fx = Scratch::new();
    let mut pin = pin_with_claim(json!({"url": blob_url(REV, "README.md")}));
    remove(&mut pin["claims"][0], "lines");
    let r = fx.audit_pin(&pin);
    let f = r.only("uncited-claim");
    assert_eq!(f["claim"], "decode");
    assert_eq!(f["source"], "readme");
    assert_eq!(f["location"]["path"], "README.md");
}

#[test]
fn no_uncited_claim_for_a_figure_with_source_and_line() {
    let fx = Scratch::new();
    let mut pin = pin_file("r");
    pin["claims"][0]["lines"] = json!([3, 5]);
    let r = fx.audit_pin(&pin);
    r.assert_lacks("uncited-claim");
}

#[test]
fn pin_file_claim_takes_its_line_from_the_anchor() {
    // No `lines`, but the claim's URL ends in `#L3`: the figure names its line, as
    // the same figure in a record document does (next test).
    let fx = Scratch::new();
    let mut pin = pin_file("r");
    remove(&mut pin["claims"][0], "lines");
    let r = fx.audit_pin(&pin);
    r.assert_lacks("uncited-claim");
    assert_eq!(r.record("r").unwrap()["claims"][0]["lines"], json!([3, 3]));
}

#[test]
fn record_document_figure_takes_its_line_from_the_anchor() {
    // No `source_line`, but the evidence URL's `#L7` names the line: cited.
    let mut fig = figure("decode", 2.9, 7);
    remove(&mut fig, "source_line");
    let fx = Scratch::new();
    let r = fx.audit_doc("record.md", &record_doc(&[&figures_block(&[fig])]));
    r.assert_lacks("uncited-claim");
    let record = r.record("record").expect("the document's record");
    assert_eq!(record["claims"][0]["lines"], json!([7, 7]));
}

#[test]
fn record_document_figure_without_source_or_url_is_uncited() {
    let fig = json!({"label": "decode", "metric": "decode_rate", "value": 2.9, "unit": "tokens/s"});
    let fx = Scratch::new();
    let r = fx.audit_doc("record.md", &record_doc(&[&figures_block(&[fig])]));
    let f = r.only("uncited-claim");
    assert_eq!(f["claim"], "decode");
}

// --- unpinned-url -----------------------------------------------------------

#[test]
fn unpinned_url_for_a_figure_citing_a_branch() {
    let fx = Scratch::new();
    let url = format!("{REPO}/blob/main/README.md#L3");
    let r = fx.audit_pin(&pin_with_claim(json!({"url": url})));
    let f = r.only("unpinned-url");
    assert_eq!(f["severity"], "error");
    assert_eq!(f["claim"], "decode");
    assert_eq!(f["evidence"]["revision"], "main");
    assert_eq!(r.code(), 1);
}

#[test]
fn unpinned_url_for_a_figure_citing_a_short_sha() {
    let fx = Scratch::new();
    let url = format!("{REPO}/blob/{}/README.md#L3", &REV[..7]);
    let r = fx.audit_pin(&pin_with_claim(json!({"url": url})));
    let f = r.only("unpinned-url");
    assert_eq!(f["evidence"]["revision"], &REV[..7]);
    assert!(f["message"].as_str().unwrap().contains("short"), "{f}");
}

#[test]
fn unpinned_url_for_a_source_on_a_branch() {
    let fx = Scratch::new();
    let mut pin = pin_file("r");
    pin["sources"][0]["revision"] = json!("main");
    pin["sources"][0]["url"] = json!(format!("{REPO}/blob/main/README.md"));
    remove(&mut pin["claims"][0], "url");
    let r = fx.audit_pin(&pin);
    let f = r.only("unpinned-url");
    assert_eq!(f["source"], "readme");
    assert_eq!(f["location"]["revision"], "main");
}

#[test]
fn unpinned_url_for_a_record_document_figure_on_a_branch() {
    let mut fig = figure("decode", 2.9, 3);
    fig["evidence_url"] = json!(format!("{REPO}/blob/main/README.md#L3"));
    let fx = Scratch::new();
    let r = fx.audit_doc("record.md", &record_doc(&[&figures_block(&[fig])]));
    let f = r.only("unpinned-url");
    assert_eq!(f["claim"], "decode");
}

#[test]
fn unpinned_url_for_a_source_revision_given_as_a_short_sha() {
    let fx = Scratch::new();
    let mut pin = pin_file("r");
    pin["sources"][0]["revision"] = json!(&REV[..7]);
    remove(&mut pin["sources"][0], "url");
    remove(&mut pin["claims"][0], "url");
    let r = fx.audit_pin(&pin);
    let f = r.only("unpinned-url");
    assert_eq!(f["source"], "readme");
    assert!(f["message"].as_str().unwrap().contains("short"), "{f}");
}

/// Branch URLs of every forge pinaudit reads are unpinned; the same URL at a full
/// commit id is not.
#[test]
fn unpinned_url_on_every_forge_and_pinned_near_miss() {
    let forms = [
        "https://github.com/o/r/blob/{}/README.md#L3",
        "https://github.com/o/r/raw/{}/README.md",
        "https://raw.githubusercontent.com/o/r/{}/README.md",
        "https://github.com/o/r/tree/{}/docs",
        "https://gitlab.com/g/sub/r/-/blob/{}/README.md#L3-5",
        "https://huggingface.co/org/model/blob/{}/README.md#L3",
        "https://huggingface.co/datasets/org/ds/resolve/{}/data.csv",
        "https://codeberg.org/o/r/src/commit/{}/README.md#L3-L4",
    ];
    for form in forms {
        for (rev, pinned) in [("main", false), ("v1.2.0", false), (REV, true)] {
            let url = form.replace("{}", rev);
            let fx = Scratch::new();
            let mut pin = pin_file("r");
            // The source follows the figure, so only pinning is in question.
            pin["sources"][0]["url"] = json!(url.split('#').next().unwrap());
            pin["sources"][0]["revision"] = json!(rev);
            pin["claims"][0]["url"] = json!(url);
            let r = fx.audit_pin(&pin);
            r.assert_lacks("invalid-record");
            r.assert_lacks("revision-conflict");
            let found = r.with_code("unpinned-url");
            if pinned {
                assert!(found.is_empty(), "{url}: {found:#?}");
            } else {
                assert!(!found.is_empty(), "{url} is not pinned");
            }
        }
    }
}

#[test]
fn no_unpinned_url_for_a_full_commit_id() {
    let fx = Scratch::new();
    // Upper case hex is still a full commit id.
    let url = format!("{REPO}/blob/{}/README.md#L3", REV.to_uppercase());
    let r = fx.audit_pin(&pin_with_claim(json!({"url": url})));
    r.assert_lacks("unpinned-url");
    r.assert_lacks("revision-conflict");
}

// --- revision-conflict ------------------------------------------------------

#[test]
fn revision_conflict_when_the_figure_url_pins_another_commit() {
    let fx = Scratch::new();
    let url = format!("{}#L3", blob_url(OTHER_REV, "README.md"));
    let r = fx.audit_pin(&pin_with_claim(json!({"url": url})));
    let f = r.only("revision-conflict");
    assert_eq!(f["severity"], "error");
    assert_eq!(f["record"], "r");
    assert_eq!(f["claim"], "decode");
    assert_eq!(f["source"], "readme");
    assert_eq!(f["evidence"]["cited_revision"], OTHER_REV);
    assert_eq!(f["evidence"]["declared_revision"], REV);
    assert_eq!(f["location"]["line"], 3);
    r.assert_lacks("unpinned-url");
}

#[test]
fn revision_conflict_when_a_source_url_disagrees_with_its_revision() {
    let fx = Scratch::new();
    let mut pin = pin_file("r");
    pin["sources"][0]["url"] = json!(blob_url(OTHER_REV, "README.md"));
    let r = fx.audit_pin(&pin);
    let f = r.only("revision-conflict");
    assert_eq!(f["source"], "readme");
    assert_eq!(f["claim"], Value::Null);
}

#[test]
fn revision_conflict_in_a_record_document() {
    // A supplemental source declares REV for the README; a figure citing it
    // pins OTHER_REV.
    let mut fig = figure("decode", 2.9, 3);
    fig["evidence_url"] = json!(format!("{}#L3", blob_url(OTHER_REV, "README.md")));
    let declared = json!({"supplemental_sources": [{
        "document_id": "readme",
        "repository": REPO,
        "revision": REV,
        "document_path": "README.md",
        "pinned_url": blob_url(REV, "README.md"),
        "document_sha256": SHA,
    }]});
    let fx = Scratch::new();
    let r = fx.audit_doc(
        "record.md",
        &record_doc(&[&declared.to_string(), &figures_block(&[fig])]),
    );
    let f = r.only("revision-conflict");
    assert_eq!(f["claim"], "decode");
    assert_eq!(f["source"], "readme");
    assert_eq!(f["evidence"]["declared_revision"], REV);
}

#[test]
fn a_figure_at_another_commit_of_the_header_document_conflicts_with_the_declaration() {
    // The header's pinned document declares the README at REV; the figure cites
    // it at OTHER_REV: the record's own declaration stands, the conflict names
    // both commits, and no source is invented at OTHER_REV with REV's hash.
    let mut fig = figure("decode", 2.9, 3);
    fig["evidence_url"] = json!(format!("{}#L3", blob_url(OTHER_REV, "README.md")));
    let fx = Scratch::new();
    let r = fx.audit_doc("record.md", &record_doc(&[&figures_block(&[fig])]));
    let f = r.only("revision-conflict");
    assert_eq!(f["evidence"]["declared_revision"], REV, "{f:#}");
    assert_eq!(f["evidence"]["cited_revision"], OTHER_REV, "{f:#}");
    assert_eq!(r.source("record", "readme")["revision"], REV);
    r.assert_lacks("hash-mismatch");
}

#[test]
fn no_revision_conflict_when_figure_and_source_agree() {
    let fx = Scratch::new();
    let r = fx.audit_doc(
        "record.md",
        &record_doc(&[&figures_block(&[figure("decode", 2.9, 3)])]),
    );
    r.assert_lacks("revision-conflict");
    assert_eq!(r.codes(), Vec::<String>::new());
}

// --- malformed-hash ---------------------------------------------------------

#[test]
fn malformed_hash_for_66_hex_digits() {
    let fx = Scratch::new();
    let mut pin = pin_file("r");
    pin["sources"][0]["sha256"] = json!(format!("{SHA}ab"));
    let r = fx.audit_pin(&pin);
    let f = r.only("malformed-hash");
    assert_eq!(f["severity"], "error");
    assert_eq!(f["source"], "readme");
    assert_eq!(f["evidence"]["length"], 66);
    assert_eq!(f["evidence"]["recorded"], format!("{SHA}ab"));
    r.assert_lacks("missing-hash");
    assert_eq!(r.code(), 1);
}

#[test]
fn malformed_hash_for_non_hex_characters() {
    let fx = Scratch::new();
    let mut pin = pin_file("r");
    let bad = format!("{}zz", &SHA[..62]);
    pin["sources"][0]["sha256"] = json!(bad);
    let r = fx.audit_pin(&pin);
    let f = r.only("malformed-hash");
    assert!(f["message"].as_str().unwrap().contains("hex"), "{f}");
}

#[test]
fn malformed_hash_for_weights_and_runtime_digests() {
    let fx = Scratch::new();
    let mut pin = pin_file("r");
    pin["artifacts"] = json!([
        {"kind": "weights", "label": "w", "revision": null, "sha256": "abc123"},
        {"kind": "runtime", "label": "e", "revision": null, "digest": "sha256:xyz"}
    ]);
    let r = fx.audit_pin(&pin);
    let found = r.with_code("malformed-hash");
    let artifacts: Vec<&Value> = found.iter().map(|f| &f["evidence"]["artifact"]).collect();
    assert_eq!(artifacts, [&json!("w"), &json!("e")]);
}

#[test]
fn no_malformed_hash_for_64_hex_digits() {
    let fx = Scratch::new();
    let mut pin = pin_file("r");
    pin["sources"][0]["sha256"] = json!(SHA.to_uppercase());
    pin["artifacts"] = json!([
        {"kind": "weights", "label": "w", "revision": null, "sha256": SHA},
        {"kind": "runtime", "label": "e", "revision": null, "digest": format!("sha256:{SHA}")}
    ]);
    let r = fx.audit_pin(&pin);
    assert_eq!(r.codes(), Vec::<String>::new());
}

// --- missing-hash -----------------------------------------------------------

#[test]
fn missing_hash_when_a_source_has_no_sha256() {
    for absent in [None, Some(Value::Null)] {
        let fx = Scratch::new();
        let mut pin = pin_file("r");
        match &absent {
            None => remove(&mut pin["sources"][0], "sha256"),
            Some(v) => pin["sources"][0]["sha256"] = v.clone(),
        }
        let r = fx.audit_pin(&pin);
        let f = r.only("missing-hash");
        assert_eq!(f["severity"], "warning", "{absent:?}");
        assert_eq!(f["source"], "readme");
        assert_eq!(f["location"]["path"], "README.md");
        assert_eq!(f["location"]["revision"], REV);
        assert_eq!(r.code(), 2, "a warning alone does not fail by default");
    }
}

#[test]
fn no_missing_hash_when_the_sha256_is_recorded() {
    let fx = Scratch::new();
    let r = fx.audit_pin(&pin_file("r"));
    r.assert_lacks("missing-hash");
}

#[test]
fn missing_hash_for_a_record_document_figure_without_sha() {
    let mut fig = figure("decode", 2.9, 3);
    remove(&mut fig, "source_document_sha256");
    let fx = Scratch::new();
    let r = fx.audit_doc("record.md", &record_doc(&[&figures_block(&[fig])]));
    let f = r.only("missing-hash");
    assert_eq!(f["source"], "readme");
}

// --- unpinned-weights / unpinned-runtime -------------------------------------

fn artifacts_pin(artifacts: Value) -> Value {
    let mut pin = pin_file("r");
    pin["artifacts"] = artifacts;
    pin
}

#[test]
fn unpinned_weights_and_runtime_without_revision_or_hash() {
    let fx = Scratch::new();
    let r = fx.audit_pin(&artifacts_pin(json!([
        {"kind": "weights", "label": "model-q4", "revision": null, "sha256": null},
        {"kind": "runtime", "label": "llama.cpp", "revision": null, "digest": null}
    ])));
    let w = r.only("unpinned-weights");
    assert_eq!(w["severity"], "warning");
    assert_eq!(w["record"], "r");
    assert_eq!(w["evidence"]["artifact"], "model-q4");
    let e = r.only("unpinned-runtime");
    assert_eq!(e["severity"], "warning");
    assert_eq!(e["evidence"]["artifact"], "llama.cpp");
    assert_eq!(r.code(), 2);
}

#[test]
fn no_unpinned_artifacts_with_a_revision() {
    let fx = Scratch::new();
    let r = fx.audit_pin(&artifacts_pin(json!([
        {"kind": "weights", "label": "model-q4", "revision": REV, "sha256": null},
        {"kind": "runtime", "label": "llama.cpp", "revision": OTHER_REV, "digest": null}
    ])));
    assert_eq!(r.codes(), Vec::<String>::new());
}

#[test]
fn no_unpinned_artifacts_with_a_hash_or_digest() {
    let fx = Scratch::new();
    let r = fx.audit_pin(&artifacts_pin(json!([
        {"kind": "weights", "label": "model-q4", "revision": null, "sha256": SHA},
        {"kind": "runtime", "label": "llama.cpp", "revision": null, "digest": format!("sha256:{SHA}")}
    ])));
    assert_eq!(r.codes(), Vec::<String>::new());
}

#[test]
fn one_unpinned_weights_finding_however_many_figures_name_the_weights() {
    let conditions = json!({
        "model_artifact": "some-model, two GGUF shards",
        "model_revision": null,
        "weight_hash": null,
        "engine": "vllm 0.9",
        "runtime_execution_revision": null,
        "executed_image_digest": null
    });
    let figures: Vec<Value> = (1..=5)
        .map(|i| {
            let mut f = figure(&format!("figure {i}"), 2.9 + f64::from(i), 10 + i);
            f["conditions"] = conditions.clone();
            f
        })
        .collect();
    let fx = Scratch::new();
    let r = fx.audit_doc("record.md", &record_doc(&[&figures_block(&figures)]));
    assert_eq!(
        r.codes(),
        ["unpinned-weights", "unpinned-runtime"],
        "{}",
        r.stdout
    );
    assert_eq!(
        r.only("unpinned-weights")["evidence"]["artifact"],
        "some-model, two GGUF shards"
    );
}

#[test]
fn record_document_weights_with_revision_are_pinned() {
    let conditions = json!({
        "model_artifact": "some-model",
        "model_revision": REV,
        "weight_hash": null,
        "engine": "vllm 0.9",
        "runtime_execution_revision": null,
        "executed_image_digest": format!("sha256:{SHA}")
    });
    let mut fig = figure("decode", 2.9, 3);
    fig["conditions"] = conditions;
    let fx = Scratch::new();
    let r = fx.audit_doc("record.md", &record_doc(&[&figures_block(&[fig])]));
    assert_eq!(r.codes(), Vec::<String>::new());
}

// --- inconsistent-value -----------------------------------------------------

#[test]
fn inconsistent_value_near_misses_pass() {
    // (value as written, correct, total): each is the exact percentage at the
    // precision written.
    for (value, correct, total) in [
        ("98.0", 49, 50),
        ("98", 49, 50),
        ("66.7", 2, 3),
        ("66.67", 2, 3),
        ("67", 2, 3),
        ("100.0", 4, 4),
        ("0", 0, 20),
    ] {
        let fx = Scratch::new();
        let v: Value = serde_json::from_str(value).unwrap();
        let r = fx.audit_pin(&percent_claim(v, correct, total));
        assert!(
            r.with_code("inconsistent-value").is_empty(),
            "{value}% with {correct}/{total} is consistent, got {:#?}",
            r.findings()
        );
        assert_eq!(r.claim("r", "accuracy")["inconsistent_value"], false);
    }
}

#[test]
fn inconsistent_value_when_the_percentage_disagrees() {
    for (value, correct, total, expected) in [
        ("95.0", 49, 50, "98.0"),
        ("66.0", 2, 3, "66.7"),
        ("98.0", 48, 50, "96.0"),
        ("67.0", 2, 3, "66.7"),
        // Truncated, not rounded: one unit off in the last digit written.
        ("66.6", 2, 3, "66.7"),
        ("66.66", 2, 3, "66.67"),
    ] {
        let fx = Scratch::new();
        let v: Value = serde_json::from_str(value).unwrap();
        let r = fx.audit_pin(&percent_claim(v, correct, total));
        let found = r.with_code("inconsistent-value");
        assert_eq!(
            found.len(),
            1,
            "{value}% with {correct}/{total}: {:#?}",
            r.findings()
        );
        let f = &found[0];
        assert_eq!(f["severity"], "error");
        assert_eq!(f["record"], "r");
        assert_eq!(f["claim"], "accuracy");
        assert_eq!(f["source"], "readme");
        assert_eq!(f["evidence"]["correct"], correct);
        assert_eq!(f["evidence"]["total"], total);
        assert_eq!(f["evidence"]["expected"], expected, "{f}");
        assert_eq!(r.code(), 1);
        // The claim's own entry says so too.
        assert_eq!(r.claim("r", "accuracy")["inconsistent_value"], true);
    }
}

#[test]
fn inconsistent_value_when_correct_exceeds_total() {
    let fx = Scratch::new();
    // 102.0 is 51/50 exactly: only the count itself is wrong.
    let r = fx.audit_pin(&percent_claim(json!(102.0), 51, 50));
    let f = r.only("inconsistent-value");
    assert_eq!(f["claim"], "accuracy");
}

#[test]
fn inconsistent_value_when_total_is_zero() {
    let fx = Scratch::new();
    let r = fx.audit_pin(&percent_claim(json!(0.0), 0, 0));
    r.assert_has("inconsistent-value");
}

#[test]
fn no_inconsistent_value_check_for_other_units() {
    let fx = Scratch::new();
    let r = fx.audit_pin(&pin_with_claim(json!({
        "value": 95.0, "unit": "tokens/s", "correct": 49, "total": 50
    })));
    r.assert_lacks("inconsistent-value");
}

#[test]
fn no_inconsistent_value_check_without_counts() {
    let fx = Scratch::new();
    let r = fx.audit_pin(&pin_with_claim(json!({"value": 95.0, "unit": "percent"})));
    r.assert_lacks("inconsistent-value");
}

#[test]
fn inconsistent_value_in_a_record_document_reads_counts_from_conditions() {
    let mut fig = figure("GSM8K", 95.0, 5);
    fig["unit"] = json!("percent");
    fig["conditions"] = json!({"correct": 49, "total": 50});
    let fx = Scratch::new();
    let r = fx.audit_doc("record.md", &record_doc(&[&figures_block(&[fig])]));
    let f = r.only("inconsistent-value");
    assert_eq!(f["claim"], "GSM8K");
}

// --- exit status ------------------------------------------------------------

#[test]
fn exit_1_when_an_error_finding_exists() {
    let fx = Scratch::new();
    let r = fx.audit_pin(&percent_claim(json!(95.0), 49, 50));
    assert_eq!(r.code(), 1);
}

#[test]
fn exit_2_with_fail_on_never_even_with_errors() {
    let fx = Scratch::new();
    let file = fx.write_json("pins/r.json", &percent_claim(json!(95.0), 49, 50));
    let r = fx.audit_offline([file.to_str().unwrap(), "--fail-on", "never"]);
    r.assert_has("inconsistent-value");
    assert_eq!(r.code(), 2, "nothing fails, but the audit is incomplete");
}

#[test]
fn exit_1_with_fail_on_warning_and_only_warnings() {
    let r = audit_seed(&["--fail-on", "warning"]);
    assert_eq!(r.report()["summary"]["findings"]["error"], 0);
    assert_eq!(r.code(), 1);
}

#[test]
fn exit_2_with_fail_on_error_and_only_warnings() {
    let r = audit_seed(&["--fail-on", "error"]);
    assert_eq!(r.code(), 2);
}

#[test]
fn empty_pin_file_audits_complete_with_exit_0() {
    let fx = Scratch::new();
    let r = fx.audit_pin(&empty_pin_file("nothing"));
    let report = r.report();
    assert_eq!(report["summary"]["complete"], true, "{report}");
    assert_eq!(report["summary"]["records"], 1);
    assert_eq!(r.codes(), Vec::<String>::new());
    assert_eq!(r.code(), 0);
}

#[test]
fn empty_pin_file_with_fail_on_never_exits_0() {
    let fx = Scratch::new();
    let file = fx.write_json("pins/nothing.json", &empty_pin_file("nothing"));
    let r = fx.audit_offline([file.to_str().unwrap(), "--fail-on", "never"]);
    assert_eq!(r.code(), 0);
}

#[test]
fn records_and_findings_follow_input_order() {
    // Files named on the command line are audited in the order given, not by name.
    let fx = Scratch::new();
    let first = fx.write_json("b-first.json", &percent_claim(json!(95.0), 49, 50));
    let mut second = pin_file("second");
    remove(&mut second["sources"][0], "sha256");
    let second = fx.write_json("a-second.json", &second);
    let r = fx.audit_offline([first, second]);
    let by_record: Vec<(Value, Value)> = r
        .findings()
        .iter()
        .map(|f| (f["record"].clone(), f["code"].clone()))
        .collect();
    assert_eq!(
        by_record,
        [
            (json!("r"), json!("inconsistent-value")),
            (json!("second"), json!("missing-hash"))
        ]
    );
    let ids: Vec<Value> = r.report()["records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].clone())
        .collect();
    assert_eq!(ids, [json!("r"), json!("second")]);
}

// --- Default input ----------------------------------------------------------

#[test]
fn default_input_is_the_pins_directory() {
    let fx = Scratch::new();
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
    let fx = Scratch::new();
    let r = run(fx.cmd().args(["audit", "--offline", "--format", "json"]));
    assert_eq!(r.code(), 3);
    assert!(r.stderr.contains("pins"), "{}", r.stderr);
    assert!(r.stderr.contains("pinaudit audit FILE"), "{}", r.stderr);
}

/// A key of a record document a small edit away from one pinaudit reads is
/// named in a warning with the key it resembles, where it stands; other keys
/// stay the record's own (issue 47).
#[test]
fn a_mistyped_key_of_a_record_document_is_named_with_the_key_it_resembles() {
    let ws = Scratch::new();
    let text = crate::common::seed::seed_text()
        .replacen("\"source_line\": 43", "\"source_lne\": 43", 1)
        .replacen("\"document_sha256\"", "\"document_sha265\"", 1)
        .replacen(
            "\"evidence_state\"",
            "\"my_own_note\": 1, \"evidence_state\"",
            1,
        );
    let file = ws.write("records/typo.md", &text);
    let run = ws.audit_offline([&file]);
    let warnings: Vec<Value> = run
        .with_code("invalid-record")
        .into_iter()
        .filter(|f| f["severity"] == "warning")
        .collect();
    let said: Vec<&str> = warnings
        .iter()
        .map(|f| f["message"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(warnings.len(), 2, "{said:#?}");
    assert!(
        said.iter()
            .any(|m| m.contains("unknown key `source_lne`, not read; did you mean `source_line`?")),
        "{said:#?}"
    );
    assert!(
        said.iter()
            .any(|m| m.contains("did you mean `document_sha256`?")),
        "{said:#?}"
    );
    assert!(!said.iter().any(|m| m.contains("my_own_note")), "{said:#?}");
    for w in &warnings {
        assert!(w["record_location"]["line"].as_u64().is_some(), "{w:#}");
    }
}
