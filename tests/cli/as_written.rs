//! Verdicts on the record as written: each figure checked at the revision it
//! cites, a re-check that could not look never reported as a fix, every
//! checksum manifest of a cited tree read, and messages that say which source,
//! which time zone and which model they are about.

use git2::Oid;
use serde_json::{json, Value};

use crate::common::forge::{
    blob_url, claim, pin, sha256_hex, source, to_daemon, Forge, NAME, README, T0, T0_RFC3339,
};
use crate::common::run::run;
use crate::common::scratch::Scratch;
use crate::common::{GitDaemon, Wants};

/// [`README`] after the author re-ran the decode benchmark.
const README_V2: &str = "# Decode benchmark\n\
\n\
| phase | rate |\n\
|---|---|\n\
| decode | 3.4 tok/s |\n\
| prefill | 41.3 tok/s |\n\
\n\
Measured on one node, again.\n";

/// A forge whose `README.md` carries 2.9 at `first` and 3.4 at `second`.
fn two_versions() -> (Forge, Oid, Oid) {
    let forge = Forge::new();
    let repo = forge.repo(NAME);
    let first = repo.commit(&[("README.md", README)], "add results", T0);
    let second = repo.commit(&[("README.md", README_V2)], "re-run decode", T0 + 3600);
    (forge, first, second)
}

fn figure(label: &str, id: &str, commit: Oid, text: &str, line: u32, value: f64) -> Value {
    json!({
        "label": label,
        "metric": "decode_rate",
        "value": value,
        "unit": "tokens/s",
        "source_document_id": id,
        "source_document_sha256": sha256_hex(text),
        "source_line": line,
        "evidence_url": format!("{}#L{line}", blob_url(NAME, commit, "README.md")),
    })
}

/// A record flattened to one line whose header pins `README.md` at `header`.
fn flattened(header: Oid, figures: &[Value]) -> String {
    let figures = json!({ "figures": figures });
    format!(
        "# Two runs of one benchmark - Type: Performance report - Original project: \
         https://github.com/{NAME} - Pinned document: {} - Source revision: {header} - Source \
         commit time (not experiment date): 2023-11-14T23:13:20Z ## Figures ```json {figures} ```\n",
        blob_url(NAME, header, "README.md"),
    )
}

#[test]
fn a_figure_citing_its_own_commit_is_checked_imported_and_shown_there() {
    let (forge, first, second) = two_versions();
    let daemon = GitDaemon::start(forge.path(), Wants::Reachable);
    let rewrite = to_daemon(&daemon);
    let ws = Scratch::new();
    // `decode` cites the header's document; `decode (first run)` an undeclared
    // source of its own at the first commit; `prefill (first run)` the header's id
    // at the first commit, which is the document `decode (first run)` cites.
    ws.write(
        "records/two-runs.txt",
        flattened(
            second,
            &[
                figure("decode", "readme", second, README_V2, 5, 3.4),
                figure("decode (first run)", "readme-first", first, README, 5, 2.9),
                figure("prefill (first run)", "readme", first, README, 6, 41.3),
            ],
        ),
    );
    let audit = ws.audit(["--rewrite", &rewrite, "records/two-runs.txt"]);
    for code in ["hash-mismatch", "value-shifted", "value-missing"] {
        audit.assert_lacks(code);
    }
    // `prefill (first run)` names the header's source, which the header declares
    // at the second commit: the conflict is said (the record's own declaration),
    // and the figure is checked where it cites.
    let conflict = audit.only("revision-conflict");
    assert_eq!(conflict["claim"], "prefill (first run)", "{conflict:#}");
    let record = "two-runs";
    for label in ["decode", "decode (first run)", "prefill (first run)"] {
        let c = audit.claim(record, label);
        assert_eq!(c["status"], "verified", "{c:#}");
    }
    let own = audit.source(record, "readme-first");
    assert_eq!(own["revision"], first.to_string(), "{own:#}");
    assert_eq!(own["sha256"]["actual"], sha256_hex(README), "{own:#}");
    assert_eq!(own["commit_time"], T0_RFC3339);
    assert_eq!(
        audit.claim(record, "prefill (first run)")["source"],
        "readme-first"
    );
    assert_eq!(
        audit.source(record, "readme")["revision"],
        second.to_string()
    );

    // The header's source cited at another commit: the header declares it, so
    // the figure raises `revision-conflict` naming both commits, and is checked
    // where it cites.
    ws.write(
        "records/prefill.txt",
        flattened(
            second,
            &[
                figure("decode", "readme", second, README_V2, 5, 3.4),
                figure("prefill (first run)", "readme", first, README, 6, 41.3),
            ],
        ),
    );
    let split = ws.audit(["--rewrite", &rewrite, "records/prefill.txt"]);
    let conflict = split.only("revision-conflict");
    assert_eq!(conflict["claim"], "prefill (first run)", "{conflict:#}");
    assert_eq!(conflict["evidence"]["cited_revision"], first.to_string());
    assert_eq!(
        conflict["evidence"]["declared_revision"],
        second.to_string()
    );
    split.assert_lacks("hash-mismatch");
    split.assert_lacks("invalid-record");
    let short = &first.to_string()[..7];
    let s = split.source("prefill", &format!("readme@{short}"));
    assert_eq!(s["revision"], first.to_string(), "{s:#}");
    let c = split.claim("prefill", "prefill (first run)");
    assert_eq!(c["source"], format!("readme@{short}"));
    assert_eq!(c["status"], "verified", "{c:#}");

    // The record's own declaration wins over a figure's URL: the header says the
    // second commit, the only figure pins the first and carries the declared
    // revision's sha256. No source is invented at the first commit with that
    // hash: the conflict says it all.
    ws.write(
        "records/declared.txt",
        flattened(
            second,
            &[figure("decode", "readme", first, README_V2, 5, 2.9)],
        ),
    );
    let declared = ws.audit(["--rewrite", &rewrite, "records/declared.txt"]);
    let conflict = declared.only("revision-conflict");
    assert_eq!(
        conflict["evidence"]["declared_revision"],
        second.to_string()
    );
    assert_eq!(conflict["evidence"]["cited_revision"], first.to_string());
    declared.assert_lacks("hash-mismatch");
    let readme = declared.source("declared", "readme");
    assert_eq!(readme["revision"], second.to_string(), "{readme:#}");
    assert_eq!(
        readme["sha256"]["actual"],
        sha256_hex(README_V2),
        "{readme:#}"
    );
    assert_eq!(declared.claim("declared", "decode")["status"], "verified");

    let import = run(ws
        .cmd()
        .args(["import", "records/two-runs.txt", "--out", "pins"]));
    import.assert_code(0);
    let written: Value = serde_json::from_str(
        &std::fs::read_to_string(ws.path().join(format!("pins/{record}.json"))).unwrap(),
    )
    .unwrap();
    let sources = written["sources"].as_array().unwrap();
    let own = sources.iter().find(|s| s["id"] == "readme-first").unwrap();
    assert_eq!(own["revision"], first.to_string(), "{own:#}");
    assert_eq!(
        own["commit_time"],
        Value::Null,
        "the header's time is not its"
    );
    // The pin file keeps the record's declaration, and so its conflict.
    let pins = ws.audit(["--rewrite", &rewrite, &format!("pins/{record}.json")]);
    assert_eq!(
        pins.only("revision-conflict")["claim"],
        "prefill (first run)"
    );
    pins.assert_lacks("hash-mismatch");
    assert_eq!(
        pins.claim(record, "decode (first run)")["status"],
        "verified"
    );

    for target in [
        "records/two-runs.txt#decode (first run)".to_string(),
        format!("pins/{record}.json#decode (first run)"),
    ] {
        let show = run(ws.cached("show").args(["--rewrite", &rewrite, &target]));
        show.assert_code(0);
        assert!(
            show.stdout.contains("| decode | 2.9 tok/s |"),
            "{target}:\n{}",
            show.stdout
        );
        assert!(!show.stdout.contains("3.4"), "{target}:\n{}", show.stdout);
    }
}

#[test]
fn a_figure_against_its_declared_revision_conflicts_there_and_is_checked_where_it_cites() {
    let (forge, first, second) = two_versions();
    let daemon = GitDaemon::start(forge.path(), Wants::Reachable);
    let ws = Scratch::new();
    let declared = source(
        "readme",
        NAME,
        second,
        "README.md",
        &sha256_hex(README_V2),
        "2023-11-14T23:13:20Z",
    );
    let mut old = claim("decode", &declared, 5, 2.9);
    old["url"] = format!("{}#L5", blob_url(NAME, first, "README.md")).into();
    let file = ws.write_pin(&pin("declared", &[declared], &[old]));
    let audit = ws.audit(["--rewrite", &to_daemon(&daemon), &file]);
    let f = audit.only("revision-conflict");
    let (cited, said) = (&first.to_string()[..7], &second.to_string()[..7]);
    assert_eq!(
        f["message"],
        format!(
            "figure `decode` cites revision `{cited}` but its source `readme` declares `{said}` \
             (line 6, column 5); the figure is checked at `{cited}`"
        )
    );
    assert_eq!(
        f["evidence"]["declared_at"],
        json!({"line": 6, "column": 5})
    );
    // Its location, and the annotation's link, is the figure's own commit and line.
    assert_eq!(f["location"]["revision"], first.to_string(), "{f:#}");
    assert_eq!(f["location"]["line"], 5, "{f:#}");
    let github = ws.run([
        "audit",
        "--cache",
        "cache",
        "--format",
        "github",
        "--rewrite",
        &to_daemon(&daemon),
        &file,
    ]);
    let annotation = github
        .stdout
        .lines()
        .find(|l| l.contains("title=revision-conflict"))
        .unwrap_or_default()
        .to_string();
    assert!(
        annotation.contains(&format!("/blob/{first}/README.md#L5")),
        "{annotation}"
    );
    let c = audit.claim("declared", "decode");
    assert_eq!(c["status"], "verified", "{c:#}");
    assert_eq!(c["source"], format!("readme@{cited}"));
    audit.assert_lacks("value-missing");
    // The declared source is still judged at its own revision.
    assert_eq!(audit.source("declared", "readme")["status"], "checked");
}

/// A pin of [`README`] at `commit` of `acme/bench`, whose `decode` figure is
/// recorded as `value` (2.9 is right), and of `acme/other` at a commit it
/// does not hold.
fn recheck_pin(commit: Oid, value: f64) -> Value {
    let readme = readme_at(commit);
    let gone = Oid::from_str(&"ab".repeat(20)).unwrap();
    let gone = source(
        "gone",
        "acme/other",
        gone,
        "NOTES.md",
        &sha256_hex("notes\n"),
        T0_RFC3339,
    );
    let decode = claim("decode", &readme, 5, value);
    pin("recheck", &[readme, gone], &[decode])
}

fn codes_in(list: &Value) -> Vec<String> {
    let mut codes: Vec<String> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["code"].as_str().unwrap().to_string())
        .collect();
    codes.sort();
    codes
}

#[test]
fn an_offline_recheck_that_could_not_look_resolves_nothing() {
    let forge = Forge::new();
    let commit = forge
        .repo(NAME)
        .commit(&[("README.md", README)], "add results", T0);
    let other = forge.repo("acme/other");
    other.commit(&[("NOTES.md", "notes\n")], "notes", T0);
    let daemon = GitDaemon::start(forge.path(), Wants::Reachable);
    let rewrite = to_daemon(&daemon);
    let ws = Scratch::new();
    let file = ws.write_pin(&recheck_pin(commit, 9.9));
    let online = ws.audit(["--rewrite", &rewrite, "--output", "online.json", &file]);
    online.assert_code(1);
    let online: Value =
        serde_json::from_str(&std::fs::read_to_string(ws.path().join("online.json")).unwrap())
            .unwrap();
    assert_eq!(
        codes_in(&online["findings"]),
        ["revision-missing", "value-missing"]
    );

    // Offline with an empty cache: neither source is in it.
    std::fs::remove_dir_all(ws.cache()).unwrap();
    let offline = ws.audit(["--offline", "--output", "offline.json", &file]);
    offline.assert_code(2);
    let diff = run(ws
        .cmd()
        .args(["diff", "online.json", "offline.json", "--format", "json"]));
    diff.assert_code(0);
    let d: Value = serde_json::from_str(&diff.stdout).unwrap();
    assert_eq!(d["summary"]["resolved"], 0, "{d:#}");
    assert_eq!(d["summary"]["not_rechecked"], 2, "{d:#}");
    assert_eq!(
        codes_in(&d["not_rechecked"]),
        ["revision-missing", "value-missing"]
    );
    assert_eq!(codes_in(&d["resolved"]), Vec::<String>::new());
    let text = run(ws
        .cmd()
        .args(["diff", "online.json", "offline.json", "--color", "never"]));
    assert!(
        text.stdout.contains(
            "0 new, 0 resolved, 0 unchanged, 2 not re-checked (their source could not be checked this time)"
        ),
        "{}",
        text.stdout
    );
    assert!(
        text.stdout
            .contains("  not re-checked error[value-missing]"),
        "{}",
        text.stdout
    );

    // The same for --baseline: the baseline's findings are not called resolved.
    let base = ws.audit(["--offline", "--baseline", "online.json", &file]);
    assert_eq!(base.summary()["baseline_resolved"], 0, "{}", base.stdout);
    assert_eq!(
        base.summary()["baseline_not_rechecked"],
        2,
        "{}",
        base.stdout
    );
    let text = run(ws
        .cached("audit")
        .args(["--offline", "--baseline", "online.json", &file]));
    assert!(
        text.stdout.contains(
            "baseline: 0 finding(s) resolved, 2 not re-checked (their source could not be checked this time)"
        ),
        "{}",
        text.stdout
    );

    // Online again with the figure corrected: looked at, and gone.
    let fixed = ws.write_pin(&recheck_pin(commit, 2.9));
    ws.audit(["--rewrite", &rewrite, "--output", "fixed.json", &fixed]);
    let d = run(ws
        .cmd()
        .args(["diff", "online.json", "fixed.json", "--format", "json"]));
    let d: Value = serde_json::from_str(&d.stdout).unwrap();
    assert_eq!(codes_in(&d["resolved"]), ["value-missing"], "{d:#}");
    assert_eq!(d["summary"]["not_rechecked"], 0, "{d:#}");
    let base = ws.audit(["--rewrite", &rewrite, "--baseline", "online.json", &fixed]);
    assert_eq!(base.summary()["baseline_resolved"], 1, "{}", base.stdout);
    assert_eq!(
        base.summary()["baseline_not_rechecked"],
        0,
        "{}",
        base.stdout
    );
}

/// The `readme` source: [`README`] at `commit` of `acme/bench`, rightly recorded.
fn readme_at(commit: Oid) -> Value {
    source(
        "readme",
        NAME,
        commit,
        "README.md",
        &sha256_hex(README),
        T0_RFC3339,
    )
}

/// A manifest listing `files` (path relative to it, text) as `sha256sum` writes
/// them, the entry of `crlf_made` being of its CRLF copy.
fn manifest(files: &[(&str, &str)], crlf_made: &str) -> String {
    files
        .iter()
        .map(|(path, text)| {
            let hashed = match *path == crlf_made {
                true => text.replace('\n', "\r\n"),
                false => text.to_string(),
            };
            format!("{}  {path}\n", sha256_hex(hashed))
        })
        .collect()
}

#[test]
fn every_manifest_in_the_tree_is_read_once_per_revision() {
    let guide = "# Guide\n\nsteps\n";
    let (p21, p23) = ("fix one\n", "fix two\n");
    let root = manifest(
        &[("README.md", README), ("NOTES.md", "notes\n")],
        "NOTES.md",
    );
    let docs = manifest(&[("guide.md", guide)], "guide.md");
    let patches = manifest(
        &[("0021-fix.patch", p21), ("0023-fix.patch", p23)],
        "0023-fix.patch",
    );
    let forge = Forge::new();
    let repo = forge.repo(NAME);
    let commit = repo.commit(
        &[
            ("README.md", README),
            ("NOTES.md", "notes\n"),
            ("SHA256SUMS", root.as_str()),
            ("docs/guide.md", guide),
            ("docs/SHA256SUMS", docs.as_str()),
            ("patches/0021-fix.patch", p21),
            ("patches/0023-fix.patch", p23),
            ("patches/SHA256SUMS", patches.as_str()),
        ],
        "release",
        T0,
    );
    let daemon = GitDaemon::start(forge.path(), Wants::Reachable);
    let rewrite = to_daemon(&daemon);
    let ws = Scratch::new();
    // Two sources at the one revision: its manifests are still read once.
    let readme = readme_at(commit);
    let notes = source(
        "notes",
        NAME,
        commit,
        "NOTES.md",
        &sha256_hex("notes\n"),
        T0_RFC3339,
    );
    let decode = claim("decode", &readme, 5, 2.9);
    let file = ws.write_pin(&pin("tree", &[readme, notes], &[decode]));

    let run = ws.audit(["--manifests", "--rewrite", &rewrite, &file]);
    run.assert_code(0);
    let mut found: Vec<(String, String, String)> = run
        .with_code("manifest-mismatch")
        .iter()
        .map(|f| {
            (
                f["location"]["path"].as_str().unwrap().to_string(),
                f["evidence"]["path"].as_str().unwrap().to_string(),
                f["evidence"]["matching_variant"]
                    .as_str()
                    .unwrap()
                    .to_string(),
            )
        })
        .collect();
    found.sort();
    let own = |m: &str, p: &str| (m.to_string(), p.to_string(), "crlf".to_string());
    assert_eq!(
        found,
        [
            own("SHA256SUMS", "NOTES.md"),
            own("docs/SHA256SUMS", "docs/guide.md"),
            own("patches/SHA256SUMS", "patches/0023-fix.patch"),
        ]
    );
    run.assert_lacks("manifest-unlisted");
    assert!(!run.stderr.contains("--manifests"), "{}", run.stderr);

    // A manifest over --max-document-size is not read, and that is said.
    let small = (patches.len() - 1).to_string();
    let bounded = ws.audit([
        "--manifests",
        "--max-document-size",
        &small,
        "--rewrite",
        &rewrite,
        &file,
    ]);
    let read: Vec<Value> = bounded.with_code("manifest-mismatch");
    assert_eq!(read.len(), 2, "{read:#?}");
    assert!(read
        .iter()
        .all(|f| f["location"]["path"] != "patches/SHA256SUMS"));
    assert!(
        bounded.stderr.contains(&format!(
            "warning: `--manifests`: `patches/SHA256SUMS` of `https://github.com/{NAME}.git` at `{}` is `{}` bytes, over --max-document-size (`{small}`); not read",
            &commit.to_string()[..7],
            patches.len()
        )),
        "{}",
        bounded.stderr
    );
}

#[test]
fn manifests_past_the_count_cap_are_said() {
    let forge = Forge::new();
    let repo = forge.repo(NAME);
    let dirs: Vec<String> = (0..101)
        .map(|i| format!("vendor/m{i:03}/SHA256SUMS"))
        .collect();
    let mut files: Vec<(&str, &str)> = dirs.iter().map(|d| (d.as_str(), "# empty\n")).collect();
    files.push(("README.md", README));
    let commit = repo.commit(&files, "vendored", T0);
    let daemon = GitDaemon::start(forge.path(), Wants::Reachable);
    let ws = Scratch::new();
    let readme = readme_at(commit);
    let file = ws.write_pin(&pin("many", &[readme], &[]));
    let run = ws.audit(["--manifests", "--rewrite", &to_daemon(&daemon), &file]);
    run.assert_code(0);
    assert!(
        run.stderr.contains(&format!(
            "`https://github.com/{NAME}.git` has `101` checksum manifests at `{}`; read the first `100` in path order, not `vendor/m100/SHA256SUMS`",
            &commit.to_string()[..7]
        )),
        "{}",
        run.stderr
    );
}

// --- Messages a person can act on ---------------------------------------------

/// Each finding of `codes` as `code [source / claim]: message`, in report order.
fn said(run: &crate::common::run::Run, codes: &[&str]) -> String {
    run.findings()
        .iter()
        .filter(|f| codes.contains(&f["code"].as_str().unwrap_or("")))
        .map(|f| {
            let part = |k: &str| f[k].as_str().unwrap_or("-").to_string();
            format!(
                "{} [{} / {}]: {}\n",
                part("code"),
                part("source"),
                part("claim"),
                part("message")
            )
        })
        .collect()
}

#[test]
fn a_commit_time_mismatch_shows_both_times_in_utc_and_how_far_apart() {
    let forge = Forge::new();
    let repo = forge.repo(NAME);
    repo.set_offset_minutes(-480);
    let commit = repo.commit(&[("README.md", README)], "add results", T0);
    let daemon = GitDaemon::start(forge.path(), Wants::Reachable);
    let ws = Scratch::new();
    // The author wrote the wall clock of a -08:00 commit as if it were UTC.
    let mut readme = readme_at(commit);
    readme["commit_time"] = "2023-11-14T14:13:20Z".into();
    let decode = claim("decode", &readme, 5, 2.9);
    let file = ws.write_pin(&pin("clock", &[readme], &[decode]));
    let run = ws.audit(["--rewrite", &to_daemon(&daemon), &file]);
    insta::assert_snapshot!(
        "commit_time_mismatch_message",
        said(&run, &["commit-time-mismatch"])
    );
}

#[test]
fn upstream_notes_name_their_source() {
    let forge = Forge::new();
    let daemon = GitDaemon::start(forge.path(), Wants::Reachable);
    let ws = Scratch::new();
    let mut sources = Vec::new();
    for (i, name) in ["acme/bench", "acme/recipes", "lab/notes"]
        .iter()
        .enumerate()
    {
        let repo = forge.repo(name);
        let commit = repo.commit(&[("README.md", README)], "add results", T0);
        repo.commit(&[("README.md", README_V2)], "re-run", T0 + 60);
        let id = format!("readme-{}", i + 1);
        sources.push(source(
            &id,
            name,
            commit,
            "README.md",
            &sha256_hex(README),
            T0_RFC3339,
        ));
    }
    let file = ws.write_pin(&pin("three", &sources, &[]));
    let run = ws.audit(["--rewrite", &to_daemon(&daemon), &file]);
    insta::assert_snapshot!(
        "upstream_changed_messages",
        said(&run, &["upstream-changed"])
    );
}

#[test]
fn unpinned_weights_are_said_once_per_model() {
    // Three models, each named by its `model` in one place and with its
    // `model_artifact` in another.
    let conditions = json!({
        "conditions": {"model": "Qwen3-8B", "model_revision": null, "weight_hash": null},
        "test_profiles": [
            {"label": "a", "conditions": {"model": "Qwen3-8B", "model_artifact": "qwen3-8b-q4_k_m.gguf"}},
            {"label": "b", "conditions": {"model": "Llama-3.1-8B", "model_artifact": "llama-3.1-8b-q8_0.gguf"}},
            {"label": "c", "conditions": {"model_artifact": "llama-3.1-8b-q8_0.gguf"}},
            {"label": "d", "conditions": {"model": "Gemma-3-4B"}},
            {"label": "e", "conditions": {"model": "Gemma-3-4B", "model_artifact": "gemma-3-4b-it.gguf"}},
        ],
    });
    let first = Oid::from_str(&"ab".repeat(20)).unwrap();
    let doc = flattened(first, &[figure("decode", "readme", first, README, 5, 2.9)]).replace(
        " ## Figures ",
        &format!(" ## Conditions ```json {conditions} ``` ## Figures "),
    );
    let ws = Scratch::new();
    let run = ws.audit_doc("models.txt", &doc);
    insta::assert_snapshot!(
        "unpinned_weights_messages",
        said(&run, &["unpinned-weights"])
    );
}

#[test]
fn unpinned_urls_name_the_source_and_the_one_figure_citing_it() {
    // A declared source at a branch, and an undeclared one a figure cites at a
    // branch: both findings carry the source and the figure.
    let declared = json!({"supplemental_sources": [{
        "document_id": "results",
        "repository": format!("https://github.com/{NAME}"),
        "revision": "main",
        "document_path": "docs/results.md",
        "pinned_url": format!("https://github.com/{NAME}/blob/main/docs/results.md"),
    }]});
    let pinned = Oid::from_str(&"ab".repeat(20)).unwrap();
    let mut on_branch = figure("prefill", "notes", pinned, README, 6, 41.3);
    on_branch["evidence_url"] = format!("https://github.com/{NAME}/blob/v1.2/NOTES.md#L6").into();
    let mut results = figure("decode", "results", pinned, README, 5, 2.9);
    results["evidence_url"] =
        format!("https://github.com/{NAME}/blob/main/docs/results.md#L5").into();
    let doc = flattened(pinned, &[results, on_branch]).replace(
        " ## Figures ",
        &format!(" ## Sources ```json {declared} ``` ## Figures "),
    );
    let ws = Scratch::new();
    let run = ws.audit_doc("branches.txt", &doc);
    insta::assert_snapshot!("unpinned_url_messages", said(&run, &["unpinned-url"]));
}

/// A record document whose figures name no source, citing one document at two
/// commits by their URLs alone: two sources, each with its own commit and the
/// hash its figures record, in the audit and in the pin file `import` writes.
#[test]
fn figures_citing_one_path_at_two_commits_by_url_alone_are_two_sources() {
    let (forge, first, second) = two_versions();
    let daemon = GitDaemon::start(forge.path(), Wants::Reachable);
    let rewrite = to_daemon(&daemon);
    let ws = Scratch::new();
    let by_url = |label: &str, commit: Oid, text: &str, line: u32, value: f64| {
        let mut f = figure(label, "", commit, text, line, value);
        let f_obj = f.as_object_mut().unwrap();
        f_obj.remove("source_document_id");
        f_obj.remove("source_line");
        f
    };
    let figures = json!({ "figures": [
        by_url("decode (second run)", second, README_V2, 5, 3.4),
        by_url("decode (first run)", first, README, 5, 2.9),
        by_url("prefill (first run)", first, README, 6, 41.3),
    ]});
    ws.write(
        "records/runs.md",
        format!("# Two runs - Type: Benchmark\n\n```json\n{figures:#}\n```\n"),
    );
    let audit = ws.audit(["--rewrite", &rewrite, "records/runs.md"]);
    audit.assert_lacks("hash-mismatch");
    audit.assert_lacks("revision-conflict");
    for label in [
        "decode (second run)",
        "decode (first run)",
        "prefill (first run)",
    ] {
        let c = audit.claim("runs", label);
        assert_eq!(c["status"], "verified", "{label}: {c:#}");
    }
    let first_run = audit.claim("runs", "decode (first run)")["source"].clone();
    assert_ne!(
        first_run,
        audit.claim("runs", "decode (second run)")["source"]
    );
    assert_eq!(
        audit.claim("runs", "prefill (first run)")["source"],
        first_run
    );
    let s = audit.source("runs", first_run.as_str().unwrap());
    assert_eq!(s["revision"], first.to_string(), "{s:#}");
    assert_eq!(s["sha256"]["expected"], sha256_hex(README), "{s:#}");

    let import = run(ws
        .cmd()
        .args(["import", "records/runs.md", "--out", "pins"]));
    import.assert_code(0);
    let written: Value =
        serde_json::from_str(&std::fs::read_to_string(ws.path().join("pins/runs.json")).unwrap())
            .unwrap();
    let sources = written["sources"].as_array().unwrap();
    assert_eq!(sources.len(), 2, "{written:#}");
    for (commit, text) in [(first, README), (second, README_V2)] {
        let s = sources
            .iter()
            .find(|s| s["revision"] == commit.to_string())
            .unwrap_or_else(|| panic!("no source at {commit}: {written:#}"));
        assert_eq!(s["sha256"], sha256_hex(text), "{s:#}");
    }
    let pins = ws.audit(["--rewrite", &rewrite, "pins/runs.json"]);
    pins.assert_lacks("hash-mismatch");
    for label in [
        "decode (second run)",
        "decode (first run)",
        "prefill (first run)",
    ] {
        assert_eq!(pins.claim("runs", label)["status"], "verified", "{label}");
    }
}
