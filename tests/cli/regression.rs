//! One test per defect found in review, named after the defect (what broke, not
//! what works now), with a one-line comment saying what broke. A test here that
//! fails means the defect is back.
//!
//! First record reading and record-level judgement (all offline), then `pinaudit
//! show` against fixture repositories reached over `file://`
//! (`--rewrite https://github.com/=file:///FORGE/ --allow-local`).

use git2::Oid;
use serde_json::{json, Value};

use crate::common::forge::{self, Forge};
use crate::common::inputs::{
    blob_url, claim, figure, figures_block, pin_file, record_doc, remove, source, REPO, REV,
};
use crate::common::run::{run, Run};
use crate::common::scratch::Scratch;
use crate::common::seed::{DAY, SEED_COMMIT_TIME};
use crate::common::show::{assert_error, history_heading, history_part, lines, short};

// --- Reading records ----------------------------------------------------------

/// Review: one figure without `value` made the importer drop every figure.
#[test]
fn figure_without_a_value_dropped_every_figure() {
    let fx = Scratch::new();
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
fn recipe_parameters_taken_for_figures() {
    let fx = Scratch::new();
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
fn figure_without_a_source_id_duplicated_its_source() {
    let fx = Scratch::new();
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
fn contradicting_figure_hash_dropped_silently() {
    let fx = Scratch::new();
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
fn profile_only_document_became_a_hashless_source() {
    let fx = Scratch::new();
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
    let again = fx.audit_offline([out.join("rec.json")]);
    assert_eq!(again.only("unpinned-url")["evidence"]["reference"], "log");
}

/// Review: a source without revision or path made the audit "incomplete" (exit 2), unexplained.
#[test]
fn source_without_revision_or_path_left_the_audit_incomplete_unexplained() {
    let fx = Scratch::new();
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
fn claim_without_a_value_passed_unchecked() {
    let fx = Scratch::new();
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
fn duplicate_source_ids_and_claim_labels_accepted() {
    let fx = Scratch::new();
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
fn records_sharing_an_id_mixed_their_findings() {
    let fx = Scratch::new();
    let mut a = pin_file("same");
    a["sources"][0]["sha256"] = json!("abc");
    let b = pin_file("same");
    let fa = fx.write_json("pins/a.json", &a);
    let fb = fx.write_json("pins/b.json", &b);
    let r = fx.audit_offline([&fa, &fb]);
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
fn credentials_in_record_urls_reached_the_report() {
    let fx = Scratch::new();
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
    // A bad flag is a usage error: exit 3.
    assert_eq!(bad.code(), 3);
    assert!(bad.stderr.contains("--rewrite"), "{}", bad.stderr);
    assert!(!bad.stderr.contains("t0ken"), "{}", bad.stderr);
}

/// Review: a directory without inputs passed a CI gate with exit 0.
#[test]
fn audit_with_no_inputs_exited_0() {
    let fx = Scratch::new();
    fx.write("pins/README", "not an input");
    let r = fx.audit_offline(["pins"]);
    assert_eq!(r.code(), 2);
    assert!(r.stderr.contains("no pin files"), "{}", r.stderr);
    assert_eq!(r.report()["summary"]["complete"], false);
}

/// Review: `import` wrote an empty pin file for a document with no json blocks.
#[test]
fn import_wrote_an_empty_pin_file_for_a_document_without_figures() {
    let fx = Scratch::new();
    fx.write("empty.md", "# Just prose\n\nNo blocks here.\n");
    let r = run(fx.cmd().args(["import", "empty.md", "--out", "out"]));
    assert_eq!(r.code(), 2);
    assert!(r.stderr.contains("nothing written"), "{}", r.stderr);
    assert!(!fx.path().join("out").exists());
}

/// Review: a pin file saved with a UTF-8 byte order mark was "not valid JSON".
#[test]
fn pin_file_with_a_byte_order_mark_was_not_json() {
    let fx = Scratch::new();
    let mut bytes = b"\xef\xbb\xbf".to_vec();
    bytes.extend(serde_json::to_vec(&pin_file("bom")).unwrap());
    let file = fx.write("pins/bom.json", bytes);
    let r = fx.audit_offline([file]);
    assert!(r.record("bom").is_some(), "{}", r.stdout);
    r.assert_lacks("invalid-record");
}

/// Review: an unreadable commit time was only reported once the commit was fetched.
#[test]
fn unreadable_commit_time_reported_only_after_a_fetch() {
    let fx = Scratch::new();
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
fn json_error_positions_counted_bytes() {
    let fx = Scratch::new();
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

// --- `pinaudit show` -------------------------------------------------------

const NOTES_REPO: &str = "bench-lab/notes";
const NOTES: &str = "# Decode notes\n\ndecode: 2.9 tok/s\n\nMeasured with llama-bench.\n";

/// `pinaudit show ARGS… --cache cache --allow-local --rewrite …` in `work`.
fn show(work: &Scratch, forge: &Forge, args: &[&str]) -> Run {
    let mut cmd = work.cached("show");
    cmd.args(args)
        .args(["--allow-local", "--rewrite", &forge.file_rewrite()]);
    run(&mut cmd)
}

/// A forge holding `bench-lab/notes` with `notes.md` pinned, and a later commit
/// that edits its line 3. Returns the forge, the pinned commit and the head.
fn notes_forge() -> (Forge, Oid, Oid) {
    let forge = Forge::new();
    let repo = forge.repo(NOTES_REPO);
    let pinned = repo.commit(&[("notes.md", NOTES)], "Decode notes", SEED_COMMIT_TIME);
    let head = repo.commit(
        &[("notes.md", NOTES.replace("2.9 tok/s", "3.1 tok/s"))],
        "Correct the decode figure",
        SEED_COMMIT_TIME + DAY,
    );
    (forge, pinned, head)
}

/// Review of `show`: `--context` near `u32::MAX` overflowed the last line shown (a debug panic).
#[test]
fn show_context_near_u32_max_overflowed() {
    let (forge, pinned, _) = notes_forge();
    let work = Scratch::new();
    let url = format!("{}#L3", forge::blob_url(NOTES_REPO, pinned, "notes.md"));
    let r = show(&work, &forge, &[&url, "-C", "4294967295"]);
    assert_eq!(r.code(), 0, "stderr:\n{}", r.stderr);
    assert_eq!(
        lines(&r.stdout)[1..],
        [
            "  1 | # Decode notes",
            "  2 | ",
            "> 3 | decode: 2.9 tok/s",
            "  4 | ",
            "  5 | Measured with llama-bench.",
        ],
        "{}",
        r.stdout
    );

    // The same from the largest line a range can name (`MAX_LINE`).
    let url = format!(
        "{}#L2-L100000000",
        forge::blob_url(NOTES_REPO, pinned, "notes.md")
    );
    let r = show(&work, &forge, &[&url, "-C", "4294967295"]);
    assert_eq!(r.code(), 0, "stderr:\n{}", r.stderr);
    let out = lines(&r.stdout);
    assert_eq!(out[1], "  1 | # Decode notes", "{}", r.stdout);
    assert_eq!(out[5], "> 5 | Measured with llama-bench.", "{}", r.stdout);
    assert_eq!(out[6..], ["(the document ends at line 5)"], "{}", r.stdout);
}

/// Review of `show`: `--history` of `#L1-L100000000` ran out of memory; past-end lines "removed".
#[test]
fn history_of_a_huge_range_ran_out_of_memory() {
    let (forge, pinned, head) = notes_forge();
    let work = Scratch::new();
    let url = format!(
        "{}#L1-L100000000",
        forge::blob_url(NOTES_REPO, pinned, "notes.md")
    );
    let r = show(&work, &forge, &[&url, "-C", "0", "--history"]);
    assert_eq!(r.code(), 0, "stderr:\n{}", r.stderr);
    assert_eq!(
        history_part(&r.stdout),
        [
            history_heading("L1-L100000000", pinned, head),
            format!(
                "  the document has 5 line(s) at {}: L6-L100000000 is past its end, not followed",
                short(pinned)
            ),
            format!(
                "  {} 2026-08-07 Fixture: Decode notes (the pin)",
                short(pinned)
            ),
            "      L1 as pinned: # Decode notes".to_string(),
            "      L2 as pinned:".to_string(),
            "      L3 as pinned: decode: 2.9 tok/s".to_string(),
            "      L4 as pinned:".to_string(),
            "      L5 as pinned: Measured with llama-bench.".to_string(),
            format!(
                "  {} 2026-08-08 Fixture: Correct the decode figure",
                short(head)
            ),
            "      L1 as pinned: # Decode notes".to_string(),
            "      L2 as pinned:".to_string(),
            "      L3 edited: decode: 3.1 tok/s".to_string(),
            "      L4 as pinned:".to_string(),
            "      L5 as pinned: Measured with llama-bench.".to_string(),
            format!("at the head {}:", short(head)),
            "  L1 is now L1: # Decode notes".to_string(),
            "  L2 is now L2:".to_string(),
            "  L3 is now L3: decode: [-2.9-]{+3.1+} tok/s".to_string(),
            "  L4 is now L4:".to_string(),
            "  L5 is now L5: Measured with llama-bench.".to_string(),
        ],
        "{}",
        r.stdout
    );
    // Lines past the end were never there: none of them is called removed.
    assert!(!r.stdout.contains("removed"), "{}", r.stdout);
}

/// Review of `show`: `--history` of a range wholly past the end ran out of memory.
#[test]
fn history_of_a_range_wholly_past_the_end_ran_out_of_memory() {
    let (forge, pinned, head) = notes_forge();
    let work = Scratch::new();
    let url = format!(
        "{}#L9-L100000000",
        forge::blob_url(NOTES_REPO, pinned, "notes.md")
    );
    let r = show(&work, &forge, &[&url, "--history"]);
    // Nothing cited could be shown: exit 2.
    assert_eq!(r.code(), 2, "stderr:\n{}", r.stderr);
    assert_eq!(
        lines(&r.stdout)[1],
        "the document has 5 line(s); L9-L100000000 is past its end",
        "{}",
        r.stdout
    );
    assert_eq!(
        history_part(&r.stdout),
        [
            history_heading("L9-L100000000", pinned, head),
            format!(
                "  the document has 5 line(s) at {}: L9-L100000000 is past its end, not followed",
                short(pinned)
            ),
        ],
        "{}",
        r.stdout
    );
}

/// Review of `show`: `--offline` said an uncached commit "is not in the repository" (unknowable).
#[test]
fn offline_show_called_an_uncached_commit_missing() {
    let (forge, pinned, _) = notes_forge();
    let work = Scratch::new();
    let pinned_url = format!("{}#L3", forge::blob_url(NOTES_REPO, pinned, "notes.md"));
    let filled = show(&work, &forge, &[&pinned_url]);
    assert_eq!(filled.code(), 0, "stderr:\n{}", filled.stderr);

    // A commit made after the cache was filled: the cache has the repository
    // but not this commit, and offline nothing can say whether it exists.
    let later = forge.repo(NOTES_REPO).commit(
        &[("notes.md", NOTES.replace("2.9 tok/s", "3.2 tok/s"))],
        "Re-measure decode",
        SEED_COMMIT_TIME + 2 * DAY,
    );
    let later_url = format!("{}#L3", forge::blob_url(NOTES_REPO, later, "notes.md"));
    let r = show(&work, &forge, &[&later_url, "--offline"]);
    assert_error(&r, "is not in the cache", "without --offline");
    assert!(
        r.stderr.contains(&format!("commit `{later}`")),
        "{}",
        r.stderr
    );
    assert!(!r.stderr.contains("not in the repository"), "{}", r.stderr);

    // The pinned commit is in the cache: offline shows it as before.
    let r = show(&work, &forge, &[&pinned_url, "--offline"]);
    assert_eq!(r.code(), 0, "stderr:\n{}", r.stderr);
    assert_eq!(r.stdout, filled.stdout);

    // Online, the missing commit is fetched and shown.
    let r = show(&work, &forge, &[&later_url, "-C", "0"]);
    assert_eq!(r.code(), 0, "stderr:\n{}", r.stderr);
    assert_eq!(lines(&r.stdout)[1..], ["> 3 | decode: 3.2 tok/s"]);
}

/// Over `git://` the fetch shares the ref listing's connection (libgit2 reuses
/// that stream for the pack), so the whole pack was counted against
/// `--max-refs-mib`: any repository whose pack outgrew the refs budget failed
/// with "more refs than the byte budget". The pack counts against
/// `--max-fetch-mib` once the client sends its wants.
#[test]
fn a_git_protocol_pack_larger_than_the_refs_budget_was_refused_as_refs() {
    let (forge, repo, _) = forge::forge_with_readme();
    // About 2.5 MiB that does not compress.
    let noise = forge::incompressible_text(2_600_000);
    let commit = repo.commit(
        &[("README.md", forge::README), ("noise.txt", noise.as_str())],
        "add noise",
        forge::T0 + 60,
    );
    let daemon = crate::common::GitDaemon::start(forge.path(), crate::common::Wants::Default);
    let ws = Scratch::new();
    let pin = forge::readme_pin(
        "big-pack",
        forge::NAME,
        commit,
        &forge::sha256_hex(forge::README),
        "2023-11-14T22:14:20Z",
    );
    let file = ws.write_pin(&pin);
    let rewrite = forge::to_daemon(&daemon);
    let run = ws.audit(["--rewrite", &rewrite, "--max-refs-mib", "1", &file]);
    let s = run.source("big-pack", "readme");
    assert_eq!(s["status"], "checked", "{s:#}");
    run.assert_code(0);
    // The pack budget still holds for the pack.
    let ws = Scratch::new();
    let file = ws.write_pin(&pin);
    let run = ws.audit(["--rewrite", &rewrite, "--max-fetch-mib", "1", &file]);
    let s = run.source("big-pack", "readme");
    assert_eq!(s["status"], "unchecked", "{s:#}");
    let reason = s["reason"].as_str().unwrap_or_default();
    assert!(reason.contains("--max-fetch-mib"), "{reason}");
}
