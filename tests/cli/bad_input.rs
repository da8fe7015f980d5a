//! Issue "Foundation": bad input gives a clear finding or error naming the file (and
//! for ```json blocks the block's line and column), the run goes on with the other
//! inputs, and nothing makes pinaudit panic or hang.
//!
//! Each test audits a bad input *before* a good pin file and checks that the good
//! record is still reported. `run` fails any run whose stderr says "panicked" or
//! that the timeout killed. Usage errors are here too.

use std::path::PathBuf;

use serde_json::{json, Value};

use crate::common::inputs::{
    blob_url, empty_pin_file, figure, figures_block, pin_file, record_doc, remove, source, REV, SHA,
};
use crate::common::run::{run, Run};
use crate::common::scratch::{pinaudit, Scratch};
use crate::common::seed::manifest_dir;

/// Audits `bad` followed by a good pin file (record `good`), and checks that the
/// good record survived.
fn audit_with_good(fx: &Scratch, bad: PathBuf) -> Run {
    let good = fx.write_json("good/good.json", &pin_file("good"));
    let r = fx.audit_offline([bad, good]);
    assert!(
        r.record("good").is_some(),
        "the good input's record is missing from the report:\n{}",
        r.stdout
    );
    r
}

/// Audits a fresh fixture holding `contents` at `name` followed by the good pin
/// file, as [`audit_with_good`] does.
fn audit_bad(name: &str, contents: impl AsRef<[u8]>) -> Run {
    let fx = Scratch::new();
    audit_with_good(&fx, fx.write(name, contents))
}

/// The `invalid-record` findings whose message names `file`; at least one.
fn invalid_naming(r: &Run, file: &str) -> Vec<Value> {
    let found: Vec<Value> = r
        .with_code("invalid-record")
        .into_iter()
        .filter(|f| f["message"].as_str().unwrap_or("").contains(file))
        .collect();
    assert!(
        !found.is_empty(),
        "no invalid-record finding names `{file}`: {:#?}",
        r.findings()
    );
    for f in &found {
        assert_eq!(f["severity"], "error");
    }
    found
}

fn message(f: &Value) -> &str {
    f["message"].as_str().unwrap()
}

/// 1-based line and column (in characters) of the first `needle` in `text`.
fn position(text: &str, needle: &str) -> (usize, usize) {
    let at = text.find(needle).expect("needle in text");
    let before = &text[..at];
    let line = before.matches('\n').count() + 1;
    let col = before[before.rfind('\n').map_or(0, |i| i + 1)..]
        .chars()
        .count()
        + 1;
    (line, col)
}

// --- Empty and non-JSON files ------------------------------------------------

#[test]
fn empty_json_file() {
    let r = audit_bad("pins/empty.json", "");
    let f = &invalid_naming(&r, "empty.json")[0];
    assert!(message(f).contains("empty"), "{f}");
    assert_eq!(r.code(), 1);
}

#[test]
fn whitespace_only_json_file() {
    let r = audit_bad("pins/blank.json", " \n\t\n");
    invalid_naming(&r, "blank.json");
}

#[test]
fn empty_markdown_file() {
    let r = audit_bad("records/empty.md", "");
    let f = &invalid_naming(&r, "empty.md")[0];
    assert!(message(f).contains("empty"), "{f}");
}

#[test]
fn json_file_that_is_not_json() {
    let r = audit_bad("pins/prose.json", "This is not JSON.\n");
    let f = &invalid_naming(&r, "prose.json")[0];
    assert_eq!(f["location"]["line"], 1, "{f}");
    assert_eq!(f["location"]["path"], "pins/prose.json");
}

#[test]
fn json_file_holding_an_array() {
    let r = audit_bad("pins/array.json", "[1, 2, 3]\n");
    invalid_naming(&r, "array.json");
}

#[test]
fn json_file_of_binary_garbage() {
    let bytes: Vec<u8> = (0..=255u8).cycle().take(4096).collect();
    let r = audit_bad("pins/garbage.json", bytes);
    invalid_naming(&r, "garbage.json");
}

#[test]
fn deeply_nested_json_does_not_overflow_the_stack() {
    let fx = Scratch::new();
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let json = fx.write("pins/deep.json", &deep);
    let doc = fx.write(
        "records/deep.md",
        format!("# Deep\n\n```json\n{deep}\n```\n"),
    );
    let good = fx.write_json("good/good.json", &pin_file("good"));
    let r = fx.audit_offline([json, doc, good]);
    assert!(r.record("good").is_some());
    invalid_naming(&r, "deep.json");
    invalid_naming(&r, "deep.md");
}

#[test]
fn unreadable_input_makes_the_audit_incomplete() {
    // With nothing able to fail the run, an input that could not be read still
    // leaves the audit incomplete: exit 2, not 0.
    let fx = Scratch::new();
    let bad = fx.write("pins/empty.json", "");
    let good = fx.write_json("pins/nothing.json", &empty_pin_file("nothing"));
    let r = fx.audit_offline([
        bad.to_str().unwrap(),
        good.to_str().unwrap(),
        "--fail-on",
        "never",
    ]);
    assert_eq!(r.report()["summary"]["complete"], false);
    assert_eq!(r.code(), 2);
}

// --- Record documents with broken blocks ------------------------------------

#[test]
fn malformed_json_block_among_good_ones() {
    let good_figures = figures_block(&[figure("decode", 2.9, 3), figure("prefill", 79.6, 4)]);
    let broken = "{\n  \"note\": \"unfinished\",\n  \"broken\": ,\n  \"x\": 1\n}";
    let supplemental = serde_json::to_string_pretty(&json!({
        "supplemental_sources": [{
            "document_id": "bench",
            "repository": "owner/repo",
            "revision": REV,
            "document_path": "bench.json",
            "pinned_url": blob_url(REV, "bench.json"),
            "document_sha256": SHA,
            "last_commit_at": "2026-08-07T15:45:04Z"
        }]
    }))
    .unwrap();
    let text = record_doc(&[&good_figures, broken, &supplemental]);
    let (line, column) = position(&text, ": ,");
    let column = column + 2; // serde_json points at the `,` where a value should be

    let r = audit_bad("records/blocks.md", &text);
    let found = invalid_naming(&r, "blocks.md");
    assert_eq!(found.len(), 1, "{found:#?}");
    let f = &found[0];
    assert_eq!(f["evidence"]["block"], 2, "{f}");
    assert_eq!(f["evidence"]["line"], line, "{f}");
    assert_eq!(f["evidence"]["column"], column, "{f}");
    assert_eq!(f["location"]["line"], line, "{f}");
    assert!(
        message(f).contains(&format!("line {line} column {column}")),
        "{f}"
    );

    // The good blocks on either side are still imported.
    let record = r.record("blocks").expect("the document's record");
    let labels: Vec<&Value> = record["claims"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| &c["label"])
        .collect();
    assert_eq!(labels, [&json!("decode"), &json!("prefill")]);
    let sources: Vec<&Value> = record["sources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| &s["id"])
        .collect();
    assert_eq!(sources, [&json!("readme"), &json!("bench")]);
}

#[test]
fn malformed_json_block_in_a_flattened_one_line_document() {
    let text = format!(
        "# Flat — naïve ünïcode - Type: Report - Source revision: {REV} ```json {{\"figures\": [{{\"label\": \"a\", \"value\": }}]}} ``` ## Tail ```json {} ```",
        figures_block(&[figure("decode", 2.9, 3)]).replace('\n', " ")
    );
    let (line, column) = position(&text, "}]}");
    let r = audit_bad("records/flat.txt", &text);
    let f = &invalid_naming(&r, "flat.txt")[0];
    assert_eq!(f["evidence"]["block"], 1, "{f}");
    assert_eq!(f["evidence"]["line"], line, "{f}");
    assert_eq!(f["evidence"]["column"], column, "{f}");
    let record = r.record("flat").expect("the document's record");
    assert_eq!(record["claims"][0]["label"], "decode");
}

#[test]
fn unclosed_json_block() {
    let text = format!(
        "{}\n```json\n{{\"figures\": [",
        record_doc(&[&figures_block(&[figure("decode", 2.9, 3)])])
    );
    let r = audit_bad("records/open.md", &text);
    let f = &invalid_naming(&r, "open.md")[0];
    assert!(message(f).contains("never closed"), "{f}");
    assert_eq!(f["evidence"]["block"], 2);
    assert!(r.record("open").is_some(), "the closed block is still used");
}

#[test]
fn document_without_json_blocks() {
    let fx = Scratch::new();
    let r = audit_with_good(
        &fx,
        fx.write("records/prose.md", "# Just prose\n\nNo figures here.\n"),
    );
    invalid_naming(&r, "prose.md");
}

#[test]
fn truncated_pin_file() {
    let full = serde_json::to_string_pretty(&pin_file("cut")).unwrap();
    let r = audit_bad("pins/cut.json", &full[..full.len() / 2]);
    let f = &invalid_naming(&r, "cut.json")[0];
    assert!(message(f).contains("truncated"), "{f}");
    assert!(f["location"]["line"].as_u64().unwrap() > 1, "{f}");
}

// --- Fields of the wrong type or out of range -------------------------------

#[test]
fn value_given_as_a_string_in_a_record_document() {
    let mut fig = figure("accuracy", 98.0, 5);
    fig["value"] = json!("98.0");
    let text = record_doc(&[&figures_block(&[fig])]);
    let r = audit_bad("records/strval.md", &text);
    let f = &invalid_naming(&r, "strval.md")[0];
    assert_eq!(f["evidence"]["pointer"], "/figures/0/value", "{f}");
    assert_eq!(f["evidence"]["block"], 1, "{f}");
    let (block_line, _) = position(&text, "```json");
    assert_eq!(f["evidence"]["line"], block_line, "{f}");
    assert!(
        message(f).contains("without quotes"),
        "a hint to unquote: {f}"
    );
    // The claim is kept, without a value.
    let record = r.record("strval").unwrap();
    assert_eq!(record["claims"][0]["label"], "accuracy");
    assert_eq!(record["claims"][0]["value"], Value::Null);
}

#[test]
fn value_given_as_a_string_in_a_pin_file() {
    let mut pin = pin_file("strval");
    pin["claims"][0]["value"] = json!("2.9");
    let fx = Scratch::new();
    let r = audit_with_good(&fx, fx.write_json("pins/strval.json", &pin));
    let f = &invalid_naming(&r, "strval.json")[0];
    assert_eq!(f["evidence"]["pointer"], "/claims/0/value");
    assert!(r.record("strval").is_some());
}

#[test]
fn value_that_is_not_a_finite_number() {
    let mut pin = pin_file("inf");
    pin["claims"][0]["value"] = json!(0);
    let text = serde_json::to_string_pretty(&pin)
        .unwrap()
        .replace("\"value\": 0", "\"value\": 1e400");
    let r = audit_bad("pins/inf.json", text);
    let f = &invalid_naming(&r, "inf.json")[0];
    assert_eq!(f["evidence"]["pointer"], "/claims/0/value");
}

/// Lines written as the raw JSON text `line` (negative, fractional, huge).
fn pin_with_raw_lines(id: &str, lines: &str) -> String {
    let mut pin = pin_file(id);
    pin["claims"][0]["lines"] = json!("LINES");
    // Without an anchor the URL cannot stand in for the bad lines.
    pin["claims"][0]["url"] = json!(blob_url(REV, "README.md"));
    serde_json::to_string_pretty(&pin)
        .unwrap()
        .replace("\"LINES\"", lines)
}

#[test]
fn bad_line_numbers_in_a_pin_file() {
    for (name, lines) in [
        ("negative", "[-3, -3]"),
        ("negative-single", "-3"),
        ("zero", "[0, 0]"),
        ("reversed", "[45, 43]"),
        ("fraction", "[4.5, 5]"),
        ("e30", "[1e30, 1e30]"),
        ("e30-single", "1e30"),
        (
            "twenty-digits",
            "[99999999999999999999, 99999999999999999999]",
        ),
        ("twenty-digits-single", "99999999999999999999"),
        ("past-u32", "[4294967297, 4294967297]"),
    ] {
        let fx = Scratch::new();
        let file = format!("{name}.json");
        let r = audit_with_good(
            &fx,
            fx.write(&format!("pins/{file}"), pin_with_raw_lines(name, lines)),
        );
        let f = &invalid_naming(&r, &file)[0];
        assert_eq!(f["evidence"]["pointer"], "/claims/0/lines", "{name}: {f}");
        let record = r
            .record(name)
            .unwrap_or_else(|| panic!("{name}: record kept"));
        assert_eq!(record["claims"][0]["lines"], Value::Null, "{name}");
    }
}

#[test]
fn bad_line_numbers_in_a_record_document() {
    for (name, line) in [
        ("negative", "-3"),
        ("zero", "0"),
        ("e30", "1e30"),
        ("twenty-digits", "99999999999999999999"),
        ("string", "\"43\""),
    ] {
        let mut fig = figure("decode", 2.9, 3);
        fig["source_line"] = json!("LINE");
        fig["evidence_url"] = json!(blob_url(REV, "README.md"));
        let block = figures_block(&[fig]).replace("\"LINE\"", line);
        let fx = Scratch::new();
        let file = format!("{name}.md");
        let r = audit_with_good(
            &fx,
            fx.write(&format!("records/{file}"), record_doc(&[&block])),
        );
        let f = &invalid_naming(&r, &file)[0];
        assert_eq!(
            f["evidence"]["pointer"], "/figures/0/source_line",
            "{name}: {f}"
        );
        assert!(r.record(name).is_some(), "{name}");
    }
}

#[test]
fn huge_line_anchor_in_a_url() {
    for anchor in ["#L99999999999999999999", "#L4294967297", "#L0", "#L-3"] {
        let mut pin = pin_file("anchor");
        pin["claims"][0]["url"] = json!(format!("{}{anchor}", blob_url(REV, "README.md")));
        let fx = Scratch::new();
        let r = audit_with_good(&fx, fx.write_json("pins/anchor.json", &pin));
        let f = r.only("invalid-record");
        assert_eq!(f["claim"], "decode", "{anchor}: {f}");
        assert!(message(&f).contains(anchor), "{anchor}: {f}");
    }
}

#[test]
fn counts_of_the_wrong_kind() {
    for (name, correct) in [("negative", "-1"), ("fraction", "1.5"), ("text", "\"49\"")] {
        let mut pin = pin_file(name);
        pin["claims"][0]["correct"] = json!("CORRECT");
        pin["claims"][0]["total"] = json!(50);
        let text = serde_json::to_string_pretty(&pin)
            .unwrap()
            .replace("\"CORRECT\"", correct);
        let fx = Scratch::new();
        let file = format!("{name}.json");
        let r = audit_with_good(&fx, fx.write(&format!("pins/{file}"), text));
        let f = &invalid_naming(&r, &file)[0];
        assert_eq!(f["evidence"]["pointer"], "/claims/0/correct", "{name}: {f}");
    }
}

#[test]
fn pin_file_lists_of_the_wrong_shape() {
    let mut pin = pin_file("shape");
    pin["claims"] = json!({"label": "not in a list"});
    pin["sources"] = json!([source_without_id(), "a string"]);
    pin["artifacts"] = json!([{"kind": "firmware", "label": "x"}]);
    let fx = Scratch::new();
    let r = audit_with_good(&fx, fx.write_json("pins/shape.json", &pin));
    let pointers: Vec<Value> = invalid_naming(&r, "shape.json")
        .iter()
        .map(|f| f["evidence"]["pointer"].clone())
        .collect();
    for p in ["/sources/0", "/sources/1", "/claims", "/artifacts/0/kind"] {
        assert!(pointers.contains(&json!(p)), "{p} not in {pointers:?}");
    }
    assert!(r.record("shape").is_some());
}

fn source_without_id() -> Value {
    let mut s = source("x");
    remove(&mut s, "id");
    s
}

// --- Bytes that are not UTF-8 -----------------------------------------------

#[test]
fn non_utf8_bytes_in_a_record_document() {
    let good = record_doc(&[&figures_block(&[figure("decode", 2.9, 3)])]);
    let mut bytes = b"# Latin-1 caf\xe9 notes\n".to_vec();
    bytes.extend_from_slice(good.as_bytes());
    let r = audit_bad("records/latin1.md", bytes);
    let f = &invalid_naming(&r, "latin1.md")[0];
    assert!(message(f).contains("UTF-8"), "{f}");
    assert_eq!(f["location"]["line"], 1, "{f}");
    // Read with replacement characters: the figures are still there.
    let record = r.record("latin1").expect("the document's record");
    assert_eq!(record["claims"][0]["label"], "decode");
}

#[test]
fn non_utf8_bytes_in_a_pin_file() {
    let text = serde_json::to_string_pretty(&pin_file("latin1")).unwrap();
    let bytes = text.replacen("A clean record", "caf\u{e9}", 1).into_bytes();
    // Replace the two UTF-8 bytes of é by the one Latin-1 byte.
    let at = bytes.windows(2).position(|w| w == [0xc3, 0xa9]).unwrap();
    let mut latin1 = bytes[..at].to_vec();
    latin1.push(0xe9);
    latin1.extend_from_slice(&bytes[at + 2..]);
    let r = audit_bad("pins/latin1.json", latin1);
    invalid_naming(&r, "latin1.json");
}

#[test]
fn revision_with_multibyte_characters_renders_in_every_format() {
    // A 42-byte revision of two-byte characters: the text report shortens long
    // revisions, and must not cut one inside a character.
    let mut pin = pin_file("wide");
    pin["sources"][0]["revision"] = json!("é".repeat(21));
    remove(&mut pin["sources"][0], "url");
    let fx = Scratch::new();
    let file = fx.write_json("pins/wide.json", &pin);
    for format in ["text", "markdown", "json"] {
        let r = run(fx
            .cmd()
            .args(["audit", "--offline", "--format", format])
            .arg(&file));
        assert!(r.stdout.contains("wide"), "{format}:\n{}", r.stdout);
        assert_eq!(r.code(), 1, "{format}: unpinned-url, not a crash");
    }
}

// --- Paths ------------------------------------------------------------------

#[cfg(unix)]
#[test]
fn directory_with_a_symlink_loop_finishes() {
    let fx = Scratch::new();
    fx.write_json("tree/pins/good.json", &pin_file("good"));
    let pins = fx.path().join("tree/pins");
    std::os::unix::fs::symlink("..", pins.join("up")).unwrap();
    std::os::unix::fs::symlink(".", pins.join("here")).unwrap();
    std::os::unix::fs::symlink("self.json", pins.join("self.json")).unwrap();
    let r = fx.audit_offline(["tree"]);
    let ids: Vec<Value> = r.report()["records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|rec| rec["id"].clone())
        .collect();
    assert_eq!(ids, [json!("good")], "the good record, once");
    assert!(r.stderr.contains("loop"), "stderr:\n{}", r.stderr);
    assert!(r.stderr.contains("self.json"), "stderr:\n{}", r.stderr);
    assert_eq!(r.code(), 2);
}

#[test]
fn file_named_twice_is_audited_once() {
    // `pins/b.json` named directly and again inside `pins`: one record, not two.
    let fx = Scratch::new();
    fx.write_json("pins/a.json", &pin_file("a"));
    let b = fx.write_json("pins/b.json", &pin_file("b"));
    let r = fx.audit_offline([b, PathBuf::from("pins")]);
    let ids: Vec<Value> = r.report()["records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|rec| rec["id"].clone())
        .collect();
    assert_eq!(ids, [json!("b"), json!("a")]);
}

#[cfg(unix)]
#[test]
fn file_reached_twice_through_a_directory_link_is_audited_once() {
    let fx = Scratch::new();
    fx.write_json("tree/pins/good.json", &pin_file("good"));
    std::os::unix::fs::symlink("pins", fx.path().join("tree/alias")).unwrap();
    let r = fx.audit_offline(["tree"]);
    assert_eq!(r.report()["summary"]["records"], 1, "{}", r.stdout);
}

#[cfg(unix)]
#[test]
fn file_name_that_is_not_utf8() {
    use std::os::unix::ffi::OsStrExt;
    let fx = Scratch::new();
    let name = std::ffi::OsStr::from_bytes(b"pins/caf\xe9.json");
    std::fs::create_dir_all(fx.path().join("pins")).unwrap();
    std::fs::write(
        fx.path().join(name),
        serde_json::to_string(&pin_file("latin1-name")).unwrap(),
    )
    .unwrap();
    let r = fx.audit_offline(["pins"]);
    // The JSON report must still be a report, naming the file as best it can.
    assert!(r.record("latin1-name").is_some(), "stdout:\n{}", r.stdout);
}

#[test]
fn path_that_does_not_exist() {
    let fx = Scratch::new();
    let r = fx.audit_offline(["missing/nope.json"]);
    assert!(
        r.stderr.contains("missing/nope.json"),
        "stderr:\n{}",
        r.stderr
    );
    // A setup error: fix the path, retrying changes nothing.
    assert_eq!(r.code(), 3);
    assert!(r.stderr.contains("hint: "), "stderr:\n{}", r.stderr);
    assert_eq!(
        r.stderr.matches("does not exist").count(),
        1,
        "said once:\n{}",
        r.stderr
    );
    assert_eq!(r.report()["summary"]["complete"], false);
}

#[test]
fn offline_with_a_cold_cache_names_the_repositories_and_the_folder_once() {
    let fx = Scratch::new();
    let good = fx.write_json("good/good.json", &pin_file("good"));
    let good = good.to_str().expect("path");
    let r = run(fx.cmd().args([
        "audit",
        "--offline",
        "--cache",
        "cold",
        "--format",
        "json",
        good,
    ]));
    assert_eq!(r.code(), 2, "{}", r.stderr);
    assert_eq!(
        r.stderr.matches("not in the cache").count(),
        1,
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("`cold`"), "{}", r.stderr);
    assert!(r.stderr.contains("github.com/"), "{}", r.stderr);
    assert_eq!(r.stderr.matches("hint: ").count(), 1, "{}", r.stderr);
}

#[test]
fn an_unusable_cache_is_a_setup_error_named_once() {
    use std::os::unix::fs::PermissionsExt;
    let fx = Scratch::new();
    let good = fx.write_json("good/good.json", &pin_file("good"));
    let good = good.to_str().expect("path");
    // A file where the cache should be.
    fx.write("not-a-dir", "x");
    let r = run(fx
        .cmd()
        .args(["audit", "--offline", "--cache", "not-a-dir", good]));
    assert_eq!(r.code(), 3, "{}", r.stderr);
    assert_eq!(
        r.stderr.matches("not a directory").count(),
        1,
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("hint: "), "{}", r.stderr);
    // A shared folder others may write.
    let shared = fx.path().join("shared");
    std::fs::create_dir(&shared).expect("mkdir");
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o777)).expect("chmod");
    let r = run(fx
        .cmd()
        .args(["audit", "--offline", "--cache", "shared", good]));
    assert_eq!(r.code(), 3, "{}", r.stderr);
    assert!(r.stderr.contains("others may write"), "{}", r.stderr);
}

#[test]
fn path_that_does_not_exist_among_good_ones() {
    let fx = Scratch::new();
    let r = audit_with_good(&fx, PathBuf::from("missing/nope.md"));
    assert!(
        r.stderr.contains("missing/nope.md"),
        "stderr:\n{}",
        r.stderr
    );
    // The good ones are still audited and reported; the exit says "fix your setup".
    assert_eq!(r.code(), 3);
}

// --- URLs pinaudit does not understand --------------------------------------

#[test]
fn claim_url_pinaudit_does_not_understand() {
    for url in [
        "ftp://x/y".to_string(),
        format!("{}#usage", blob_url(REV, "README.md")),
        "not a url".to_string(),
        "https://github.com/onlyowner".to_string(),
    ] {
        let mut pin = pin_file("url");
        pin["claims"][0]["url"] = json!(url);
        let fx = Scratch::new();
        let r = audit_with_good(&fx, fx.write_json("pins/url.json", &pin));
        let f = r.only("invalid-record");
        assert_eq!(f["record"], "url");
        assert_eq!(f["claim"], "decode", "{url}: {f}");
        assert_eq!(f["evidence"]["url"], url.as_str(), "{f}");
        assert!(message(&f).contains(&url), "{url}: {f}");
        assert_eq!(r.code(), 1);
    }
}

#[test]
fn source_url_pinaudit_does_not_understand() {
    let mut pin = pin_file("url");
    pin["sources"][0]["url"] = json!("ftp://x/y");
    let fx = Scratch::new();
    let r = audit_with_good(&fx, fx.write_json("pins/url.json", &pin));
    let f = r.only("invalid-record");
    assert_eq!(f["source"], "readme");
    assert!(message(&f).contains("ftp://x/y"), "{f}");
}

#[test]
fn record_document_url_pinaudit_does_not_understand() {
    let mut fig = figure("decode", 2.9, 3);
    fig["evidence_url"] = json!("ftp://x/y");
    let mut second = figure("prefill", 79.6, 4);
    second["evidence_url"] = json!(format!("{}#usage", blob_url(REV, "README.md")));
    let fx = Scratch::new();
    let r = audit_with_good(
        &fx,
        fx.write(
            "records/urls.md",
            record_doc(&[&figures_block(&[fig, second])]),
        ),
    );
    let claims: Vec<Value> = r
        .with_code("invalid-record")
        .iter()
        .map(|f| f["claim"].clone())
        .collect();
    assert_eq!(claims, [json!("decode"), json!("prefill")]);
    let record = r.record("urls").unwrap();
    assert_eq!(record["claims"].as_array().unwrap().len(), 2);
}

// --- Usage errors -----------------------------------------------------------

#[test]
fn usage_errors_exit_3() {
    for args in [
        &["audit", "--format", "yaml"][..],
        &["audit", "--fail-on", "sometimes"],
        &["audit", "--no-such-flag"],
        &["no-such-command"],
        &["import"],
    ] {
        let r = run(pinaudit().current_dir(manifest_dir()).args(args));
        // Usage errors exit 3, apart from 2 "retry later".
        assert_eq!(r.code(), 3, "{args:?}");
        assert_eq!(r.stdout, "", "{args:?}");
        assert!(!r.stderr.is_empty(), "{args:?}");
    }
}
