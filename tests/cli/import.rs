//! `pinaudit import` (issue "Foundation"): importing the seed record document,
//! the pins/v1 files that `import` writes (golden file, round trip, and
//! `pins/schema.json`), and `import` on bad input.

use std::path::Path;

use pinaudit::record::document::{self, Imported};
use pinaudit::record::{pinfile, ArtifactKind, Record, Revision};
use serde_json::Value;

use crate::common::inputs::{figure, figures_block, record_doc, REPO, REV};
use crate::common::run::run;
use crate::common::scratch::{pinaudit, Scratch};
use crate::common::seed::{manifest_dir, seed_path, SEED_ID};

const SHIPPED_PIN: &str = "pins/kimi-k3-iq1s-three-spark-scores.json";
const README_SHA: &str = "4bccb5ffc313f08ca53f62b6c8fc880c1317c07f79fed53c522bfc8e99bea20d";

fn import_seed() -> Imported {
    let text = std::fs::read_to_string(seed_path()).expect("tests/data/seed.txt is readable");
    document::import(&text, Path::new("tests/data/seed.txt"))
}

fn seed_record() -> Record {
    import_seed().record
}

#[test]
fn in_repo_seed_is_a_byte_copy_of_the_shared_seed() {
    let shared = manifest_dir().join("../shared/seeds/000_ad011b0c836a7ec4.txt");
    // In CI `shared/` sits beside the clone; elsewhere it may be absent, and the
    // in-repo copy is what every other test reads.
    let Ok(original) = std::fs::read(&shared) else {
        eprintln!("skipped: {} is not present", shared.display());
        return;
    };
    let copy = std::fs::read(seed_path()).expect("tests/data/seed.txt is readable");
    assert!(
        copy == original,
        "tests/data/seed.txt differs from {}",
        shared.display()
    );
}

#[test]
fn seed_imports_without_issues() {
    let imported = import_seed();
    assert!(imported.issues.is_empty(), "{:#?}", imported.issues);
    assert_eq!(imported.record.id, "kimi-k3-iq1s-three-spark-scores");
}

#[test]
fn seed_has_eight_claims_on_the_cited_lines() {
    let record = seed_record();
    let lines: Vec<(u32, u32)> = record
        .claims
        .iter()
        .map(|c| {
            let l = c
                .lines
                .unwrap_or_else(|| panic!("claim `{}` has lines", c.label));
            (l.first(), l.last())
        })
        .collect();
    assert_eq!(
        lines,
        [
            (43, 43),
            (44, 44),
            (45, 45),
            (46, 46),
            (5, 5),
            (6, 6),
            (6, 6),
            (83, 83)
        ]
    );
    let sources: Vec<&str> = record
        .claims
        .iter()
        .map(|c| c.source.as_deref().unwrap_or("?"))
        .collect();
    assert_eq!(
        sources,
        [
            "kimi-iq1s-readme",
            "kimi-iq1s-readme",
            "kimi-iq1s-readme",
            "kimi-iq1s-readme",
            "kimi-iq1s-extra0",
            "kimi-iq1s-extra1",
            "kimi-iq1s-extra2",
            "kimi-iq1s-readme",
        ]
    );
}

#[test]
fn seed_has_six_sources_five_of_them_supplemental() {
    let record = seed_record();
    let ids: Vec<&str> = record.sources.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "kimi-iq1s-readme",
            "kimi-iq1s-extra0",
            "kimi-iq1s-extra1",
            "kimi-iq1s-extra2",
            "kimi-iq1s-extra3",
            "kimi-iq1s-extra4",
        ]
    );
    // The five supplemental ones carry the path and hash of their own entry.
    let supplemental = [
        (
            "kimi-iq1s-extra0",
            "benchmarks/canon-gsm8k-k3-local.json",
            "2d297e3f59c7beb393fa72e6297edec8af0b6525139057ee0e26b425d071f2be",
        ),
        (
            "kimi-iq1s-extra1",
            "benchmarks/humaneval-p18081.json",
            "29a942e4a2194c737b8492b59ab752015896fc8e3180cc85135c33c6b249f590",
        ),
        (
            "kimi-iq1s-extra2",
            "benchmarks/humaneval-retry-p18081.json",
            "469ff6a70092ca219c70e3dc2d6967729133f74e97ed0b9cd56e68323b2f2053",
        ),
        (
            "kimi-iq1s-extra3",
            "benchmarks/cloud-humaneval-logic-k3-cloud.json",
            "8d42fd9033e794d5a8a7330d5c56707128b521f869c46be071a364c5f45fa22c",
        ),
        (
            "kimi-iq1s-extra4",
            "benchmarks/canon-gsm8k-k3-cloud.json",
            "636e0ee2c31986d961ffe637927bcb95aa1d3d82d78dea08f7efe0807f29971b",
        ),
    ];
    for (id, path, sha) in supplemental {
        let s = record.source(id).unwrap();
        assert_eq!(s.path.as_deref(), Some(path), "{id}");
        assert_eq!(
            s.sha256.as_ref().map(|h| h.text()).as_deref(),
            Some(sha),
            "{id}"
        );
        assert_eq!(s.revision.as_ref().map(Revision::as_str), Some(REV), "{id}");
        assert_eq!(
            s.commit_time.as_deref(),
            Some("2026-08-07T15:45:04Z"),
            "{id}"
        );
    }
}

#[test]
fn seed_readme_source_is_built_from_the_header_and_figures() {
    let record = seed_record();
    let readme = record.source("kimi-iq1s-readme").expect("a README source");
    assert_eq!(
        readme.revision,
        Some(Revision::parse("de1fa14ea798512f54dafc8b8795eb3ef1a6c367"))
    );
    assert!(
        readme.revision.as_ref().unwrap().commit().is_some(),
        "pinned"
    );
    assert_eq!(
        readme.sha256.as_ref().map(|h| h.text()).as_deref(),
        Some(README_SHA)
    );
    assert!(
        readme.sha256.as_ref().unwrap().valid().is_some(),
        "well formed"
    );
    assert_eq!(readme.path.as_deref(), Some("README.md"));
    assert_eq!(
        readme.repository.as_deref(),
        Some("https://github.com/chishiki37/kimi-k3-iq1s-3node-dgx-spark")
    );
    assert_eq!(readme.commit_time.as_deref(), Some("2026-08-07T15:45:04Z"));
}

#[test]
fn seed_gsm8k_claim_carries_its_counts() {
    let record = seed_record();
    let gsm = record
        .claims
        .iter()
        .find(|c| c.label == "GSM8K local subset")
        .expect("the GSM8K claim");
    assert_eq!(gsm.correct, Some(49));
    assert_eq!(gsm.total, Some(50));
    assert_eq!(gsm.value.as_ref().map(|v| v.text()), Some("98.0"));
    assert_eq!(gsm.unit.as_deref(), Some("percent"));
    // Claims without counts keep none.
    assert_eq!(record.claims[0].correct, None);
    assert_eq!(record.claims[0].total, None);
}

#[test]
fn seed_names_one_unpinned_weights_and_one_unpinned_runtime() {
    let record = seed_record();
    assert_eq!(record.artifacts.len(), 2, "{:#?}", record.artifacts);
    let weights = &record.artifacts[0];
    assert_eq!(weights.kind, ArtifactKind::Weights);
    assert_eq!(weights.label, "k3-neuron-iq1s, nine GGUF shards");
    assert_eq!(weights.revision, None);
    assert_eq!(weights.sha256, None);
    let runtime = &record.artifacts[1];
    assert_eq!(runtime.kind, ArtifactKind::Runtime);
    assert_eq!(runtime.label, "pwilkin llama.cpp fork, build-rdma");
    assert_eq!(runtime.revision, None);
    assert_eq!(runtime.digest, None);
}

/// Golden file: `import` of the seed must reproduce the shipped pin file byte for byte.
#[test]
fn import_of_the_seed_reproduces_the_shipped_pin_file() {
    let out = Scratch::new();
    let r = run(pinaudit()
        .current_dir(manifest_dir())
        .args(["import", "tests/data/seed.txt", "--out"])
        .arg(out.path()));
    assert_eq!(r.code(), 0, "stderr:\n{}", r.stderr);
    assert_eq!(r.stdout, "", "import prints its progress on stderr only");
    let written = std::fs::read_to_string(out.path().join("kimi-k3-iq1s-three-spark-scores.json"))
        .expect("import wrote kimi-k3-iq1s-three-spark-scores.json");
    let shipped = std::fs::read_to_string(manifest_dir().join(SHIPPED_PIN)).unwrap();
    assert!(
        written == shipped,
        "import output differs from {SHIPPED_PIN}; if the change is intended, regenerate it with \
         `pinaudit import tests/data/seed.txt --out pins`"
    );
    let entries = std::fs::read_dir(out.path()).unwrap().count();
    assert_eq!(entries, 1, "import writes one pin file per record");
}

#[test]
fn record_round_trips_through_a_pin_file_value() {
    let record = seed_record();
    let parsed = pinfile::from_value(&pinfile::to_value(&record), &record.file)
        .expect("to_value writes a pin file");
    assert!(parsed.problems.is_empty(), "{:#?}", parsed.problems);
    assert_eq!(parsed.record, record);
}

#[test]
fn hand_written_pin_file_round_trips() {
    // Everything a hand-written pin file may hold that `from_value` keeps must
    // survive `to_value`: moving revisions, malformed hashes, missing fields, and
    // artifacts carrying both a hash and a digest.
    let hand_written = serde_json::json!({
        "schema": "pinaudit/pins/v1",
        "id": "hand",
        "sources": [
            {"id": "a", "url": "https://github.com/o/r/blob/main/a.md", "revision": "main",
             "sha256": "not-a-hash"},
            {"id": "b", "revision": REV, "path": "b.md"}
        ],
        "claims": [
            {"label": "x", "source": "a", "lines": [3, 5], "value": 1e5, "unit": "ms"},
            {"label": "y", "value": -3.16, "correct": 1, "total": 3}
        ],
        "artifacts": [
            {"kind": "weights", "label": "w", "revision": "main", "sha256": "abc",
             "digest": "sha256:0000"},
            {"kind": "runtime", "label": "e", "revision": null, "sha256": README_SHA,
             "digest": "sha256:1111"}
        ]
    });
    let file = Path::new("pins/hand.json");
    let first = pinfile::from_value(&hand_written, file).unwrap();
    let again = pinfile::from_value(&pinfile::to_value(&first.record), file).unwrap();
    assert!(again.problems.is_empty(), "{:#?}", again.problems);
    assert_eq!(again.record, first.record);
}

#[test]
fn shipped_pin_file_reads_cleanly_and_is_written_canonically() {
    let path = manifest_dir().join(SHIPPED_PIN);
    let text = std::fs::read_to_string(&path).unwrap();
    let value: serde_json::Value = serde_json::from_str(&text).unwrap();
    let parsed = pinfile::from_value(&value, &path).unwrap();
    assert!(parsed.problems.is_empty(), "{:#?}", parsed.problems);
    assert_eq!(pinfile::to_string(&parsed.record), text);
    // The pin file and the seed describe the same record.
    let mut from_seed = seed_record();
    from_seed.file = path;
    assert_eq!(parsed.record, from_seed);
}

#[test]
fn claim_values_keep_the_digits_as_written() {
    // `98.0` must stay `98.0` (not `98`), `100.0` not `1e2`: precision is part of the claim.
    let record = seed_record();
    let written: Vec<&str> = record
        .claims
        .iter()
        .map(|c| c.value.as_ref().map_or("?", |v| v.text()))
        .collect();
    assert_eq!(
        written,
        ["2.9", "79.6", "43.9", "48.5", "98.0", "70.0", "100.0", "90.0"]
    );
    let value = pinfile::to_value(&record);
    assert_eq!(value["claims"][4]["value"].to_string(), "98.0");
}

// --- import on bad input ----------------------------------------------------

#[test]
fn import_of_an_unreadable_document_names_it_and_writes_nothing() {
    let fx = Scratch::new();
    let empty = fx.write("empty.md", "");
    let r = run(fx.cmd().arg("import").arg(&empty).args(["--out", "out"]));
    assert_eq!(r.code(), 2);
    assert!(r.stderr.contains("empty.md"), "{}", r.stderr);
    let written = std::fs::read_dir(fx.path().join("out")).map_or(0, |d| d.count());
    assert_eq!(written, 0);
}

#[test]
fn import_of_a_document_with_a_broken_block_keeps_the_rest() {
    let fx = Scratch::new();
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

// --- pins/schema.json ----------------------------------------------------------

/// A validator for `pins/schema.json`, which must itself be a valid schema.
fn pin_schema() -> jsonschema::Validator {
    let text = std::fs::read_to_string(manifest_dir().join("pins/schema.json"))
        .expect("pins/schema.json is readable");
    let schema: Value = serde_json::from_str(&text).expect("pins/schema.json is JSON");
    if let Err(e) = jsonschema::meta::validate(&schema) {
        panic!("pins/schema.json is not a valid JSON Schema: {e}");
    }
    jsonschema::validator_for(&schema)
        .unwrap_or_else(|e| panic!("pins/schema.json does not compile: {e}"))
}

/// Fails with every violation unless the pin file at `path` matches `schema`.
fn assert_matches_schema(schema: &jsonschema::Validator, path: &Path) {
    let text = std::fs::read_to_string(path).expect("the pin file is readable");
    let pin: Value = serde_json::from_str(&text).expect("the pin file is JSON");
    let errors: Vec<String> = schema
        .iter_errors(&pin)
        .map(|e| format!("  at `{}`: {e}", e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "{} does not match pins/schema.json:\n{}",
        path.display(),
        errors.join("\n")
    );
}

/// `pinaudit import DOCUMENT --out out` in `fx`; returns the files written.
fn import_into(fx: &Scratch, document: &Path) -> Vec<std::path::PathBuf> {
    let r = run(fx.cmd().arg("import").arg(document).args(["--out", "out"]));
    assert_eq!(r.code(), 0, "stderr:\n{}", r.stderr);
    let mut written: Vec<_> = std::fs::read_dir(fx.path().join("out"))
        .expect("import made --out")
        .map(|e| e.expect("a directory entry").path())
        .collect();
    written.sort();
    written
}

#[test]
fn imported_seed_matches_the_pin_schema() {
    let fx = Scratch::new();
    let written = import_into(&fx, &seed_path());
    assert_eq!(written.len(), 1, "{written:?}");
    assert!(written[0].ends_with(format!("{SEED_ID}.json")));
    assert_matches_schema(&pin_schema(), &written[0]);
}

/// A record whose test profile cites a document without a figure: the pin file
/// carries `references` as well as sources and claims.
#[test]
fn imported_references_match_the_pin_schema() {
    let fx = Scratch::new();
    let profiles = serde_json::json!({"test_profiles": [
        {"label": "log", "evidence_url": format!("{REPO}/blob/main/logs/run.txt#L9")}
    ]});
    let doc = record_doc(&[
        &figures_block(&[figure("decode", 2.9, 3)]),
        &serde_json::to_string(&profiles).unwrap(),
    ]);
    let written = import_into(&fx, &fx.write("rec.md", doc));
    assert_eq!(written.len(), 1, "{written:?}");
    let pin: Value = serde_json::from_str(&std::fs::read_to_string(&written[0]).unwrap()).unwrap();
    assert_eq!(pin["references"][0]["label"], "log", "{pin:#}");
    assert_matches_schema(&pin_schema(), &written[0]);
}

#[test]
fn every_shipped_pin_file_matches_the_pin_schema() {
    let schema = pin_schema();
    let mut checked = 0;
    for entry in std::fs::read_dir(manifest_dir().join("pins")).expect("pins/ is readable") {
        let path = entry.expect("a directory entry").path();
        let is_pin = path.extension().is_some_and(|e| e == "json")
            && path.file_name().is_some_and(|n| n != "schema.json");
        if is_pin {
            assert_matches_schema(&schema, &path);
            checked += 1;
        }
    }
    assert!(checked > 0, "no pin file in pins/");
}

/// pinaudit's JSON keeps numbers as written (serde_json's `arbitrary_precision`):
/// the validator must still read them as numbers, so that the tests above mean
/// something. `98.0` and `49` are a number and an integer; line `0` and a
/// negative count are refused, as pinaudit refuses them.
#[test]
fn pin_schema_reads_numbers_as_written() {
    let schema = pin_schema();
    let shipped: Value =
        serde_json::from_str(&std::fs::read_to_string(manifest_dir().join(SHIPPED_PIN)).unwrap())
            .unwrap();
    let gsm8k = shipped["claims"]
        .as_array()
        .unwrap()
        .iter()
        .position(|c| c["label"] == "GSM8K local subset")
        .expect("the GSM8K claim");
    assert_eq!(shipped["claims"][gsm8k]["value"].to_string(), "98.0");
    assert_eq!(shipped["claims"][gsm8k]["correct"].to_string(), "49");
    assert!(schema.is_valid(&shipped));
    for (field, bad) in [
        ("lines", serde_json::json!([0, 0])),
        ("lines", serde_json::json!([1, 100_000_001])),
        ("correct", serde_json::json!(-1)),
        ("total", serde_json::json!(50.5)),
        ("value", serde_json::json!("98.0")),
    ] {
        let mut pin = shipped.clone();
        pin["claims"][gsm8k][field] = bad.clone();
        assert!(!schema.is_valid(&pin), "`{field}: {bad}` passed");
    }
}
