//! Ten times the citations on the same repositories ("Speed at
//! scale"): what a run remembers for the sources citing one commit and document
//! must give each of them the answer it would get alone, and the JSON report
//! streamed into `--output` is the one written to stdout, byte for byte.

use crate::common::forge::{claim, pin, sha256_hex, source, to_daemon, Forge, T0};
use crate::common::scratch::Scratch;
use crate::common::{GitDaemon, Wants};

const COPIES: usize = 6;

/// `COPIES` records, each citing one document at two commits: a sound hash, a
/// hash of another version (found by `hash_elsewhere`), a hash of that other
/// version's CRLF variant, and one that matches nothing, all with claims on
/// lines that moved at the head.
fn corpus(forge: &Forge) -> Vec<serde_json::Value> {
    let repo = forge.repo("acme/scale");
    let v1 = "# Results\n\n| phase | rate |\n|---|---|\n| decode | 2.9 tokens/s |\n| batch | 11.5 tokens/s |\n";
    let v2 = "# Results\n\n| phase | rate |\n|---|---|\n| decode | 2.9 tokens/s |\n| warmup | 1.5 tokens/s |\n| batch | 11.5 tokens/s |\n";
    let v3 = "# Results\n\n| phase | rate |\n|---|---|\n| decode | 3.1 tokens/s |\n| warmup | 1.5 tokens/s |\n| batch | 12.5 tokens/s |\n";
    let c1 = repo.commit(&[("README.md", &v1.to_string())], "one", T0);
    let c2 = repo.commit(&[("README.md", &v2.to_string())], "two", T0 + 60);
    let _c3 = repo.commit(&[("README.md", &v3.to_string())], "three", T0 + 120);
    let time = "2023-11-14T22:13:20Z";
    (0..COPIES)
        .map(|k| {
            let (commit, text, other) = if k % 2 == 0 {
                (c1, v1, v2)
            } else {
                (c2, v2, v1)
            };
            let at = |id: &str, sha: &str| source(id, "acme/scale", commit, "README.md", sha, time);
            let good = at("good", &sha256_hex(text));
            let elsewhere = at("elsewhere", &sha256_hex(other));
            let crlf = at("crlf", &sha256_hex(other.replace('\n', "\r\n")));
            let nowhere = at("nowhere", &sha256_hex("x"));
            let batch = if k % 2 == 0 { 6 } else { 7 };
            let claims = [
                claim("decode", &good, 5, 2.9),
                claim("batch", &good, batch, 11.5),
                claim("elsewhere", &elsewhere, 5, 2.9),
                claim("crlf", &crlf, batch, 11.5),
                claim("nowhere", &nowhere, 5, 2.9),
            ];
            pin(
                &format!("rec{k}"),
                &[good, elsewhere, crlf, nowhere],
                &claims,
            )
        })
        .collect()
}

#[test]
fn sources_citing_one_document_get_the_answer_each_would_get_alone() {
    let forge = Forge::new();
    let pins = corpus(&forge);
    let daemon = GitDaemon::start(forge.path(), Wants::Default);
    let rewrite = to_daemon(&daemon);
    let ws = Scratch::new();
    let files: Vec<String> = pins.iter().map(|p| ws.write_pin(p)).collect();
    let audit = |extra: &[&str], only: &[String]| {
        let mut args: Vec<&str> = vec!["--rewrite", &rewrite];
        args.extend_from_slice(extra);
        args.extend(only.iter().map(String::as_str));
        ws.audit(args)
    };

    let all = audit(&["--jobs", "1"], &files);
    let report = all.report();
    let findings = report["findings"].as_array().expect("findings");
    // Every copy's wrong hashes: each source told where its hash is found, not
    // only the first to ask.
    let mismatches: Vec<_> = findings
        .iter()
        .filter(|f| f["code"] == "hash-mismatch")
        .collect();
    assert_eq!(mismatches.len(), 3 * COPIES, "{report:#}");
    for f in &mismatches {
        let other = &f["evidence"]["matching_commit"];
        match f["source"].as_str() {
            Some("elsewhere") => {
                assert!(other["commit"].is_string(), "{f:#}");
                assert!(other["variant"].is_null(), "{f:#}");
            }
            Some("crlf") => {
                assert!(other["commit"].is_string(), "{f:#}");
                assert!(other["variant"].is_string(), "{f:#}");
            }
            _ => assert!(other.is_null(), "{f:#}"),
        }
    }
    let codes = all.codes();
    for code in ["upstream-changed", "value-superseded"] {
        assert!(codes.iter().any(|c| c == code), "{code} in {codes:?}");
    }

    // Each record audited alone (nothing remembered from the others in the
    // run) gets the findings and record report it gets among the others.
    for (k, file) in files.iter().enumerate() {
        let alone = audit(&["--jobs", "1"], std::slice::from_ref(file)).report();
        let id = format!("rec{k}");
        let of = |r: &serde_json::Value| -> Vec<serde_json::Value> {
            r["findings"]
                .as_array()
                .expect("findings")
                .iter()
                .filter(|f| f["record"] == id.as_str())
                .cloned()
                .collect()
        };
        assert_eq!(of(&alone), of(&report), "findings of {id}");
        assert_eq!(alone["records"][0], report["records"][k], "record {id}");
    }

    // The same report with more workers, and streamed into a file.
    let jobs = audit(&["--jobs", "4"], &files);
    assert_eq!(jobs.stdout, all.stdout, "--jobs 4");
    let out = ws.path().join("out/report.json");
    let out_arg = out.display().to_string();
    let to_file = audit(&["--jobs", "2", "--output", &out_arg], &files);
    assert_eq!(to_file.status, all.status, "{}", to_file.stderr);
    assert!(to_file.stdout.is_empty(), "{}", to_file.stdout);
    let written = std::fs::read_to_string(&out).expect("--output written");
    assert_eq!(written, all.stdout, "--output is stdout's report");
    assert!(written.ends_with("}\n"), "one final newline");
}

/// More records than the checking workers may run ahead of the report
/// (a window of some hundreds per worker), with findings, a record that
/// cannot be read and a repeated id: every streamed format is the same bytes
/// whatever `--jobs`, and the JSON's summary counts what its lists hold.
#[test]
fn a_streamed_report_of_many_records_is_the_same_whatever_the_jobs() {
    const RECORDS: usize = 1200;
    let forge = Forge::new();
    let repo = forge.repo("acme/many");
    let text = "# Results\n\n| phase | rate |\n|---|---|\n| decode | 2.9 tokens/s |\n| batch | 11.5 tokens/s |\n";
    let commit = repo.commit(&[("README.md", &text.to_string())], "one", T0);
    let time = "2023-11-14T22:13:20Z";
    let daemon = GitDaemon::start(forge.path(), Wants::Default);
    let rewrite = to_daemon(&daemon);
    let ws = Scratch::new();
    for k in 0..RECORDS {
        // Every third hash wrong, every fifth value wrong: findings all along.
        let sha = match k % 3 {
            0 => sha256_hex("not the document"),
            _ => sha256_hex(text),
        };
        let s = source("s", "acme/many", commit, "README.md", &sha, time);
        let value = if k % 5 == 0 { 4.2 } else { 2.9 };
        let claims = [claim("decode", &s, 5, value), claim("batch", &s, 6, 11.5)];
        // Two files with one id: an `invalid-record` finding of the second.
        let id = if k == 7 {
            "rec0006".into()
        } else {
            format!("rec{k:04}")
        };
        let mut p = pin(&id, &[s], &claims);
        p["id"] = id.into();
        ws.write_json(&format!("pins/rec{k:04}.json"), &p);
    }
    ws.write(
        "pins/zz-broken.json",
        "{ \"schema\": \"pinaudit/pins/v1\", ",
    );
    // One audit of the pins in `format` with `jobs` workers (and `extra`
    // flags), its exit status held to `status`.
    let audit = |format: &str, jobs: &str, extra: &[&str], status: i32| {
        let mut args = vec![
            "audit",
            "--cache",
            "cache",
            "--timeout",
            "10",
            "--rewrite",
            &rewrite,
            "--format",
            format,
            "--jobs",
            jobs,
        ];
        args.extend_from_slice(extra);
        args.push("pins");
        let run = ws.run(args);
        assert_eq!(
            run.status,
            Some(status),
            "{format} --jobs {jobs} {extra:?}: {}",
            run.stderr
        );
        run.stdout
    };
    let report = |format: &str, jobs: &str| audit(format, jobs, &[], 1);
    let json = report("json", "1");
    let parsed: serde_json::Value = serde_json::from_str(&json).expect("one JSON document");
    let records = parsed["records"].as_array().expect("records");
    let findings = parsed["findings"].as_array().expect("findings");
    assert_eq!(records.len(), RECORDS);
    let s = &parsed["summary"];
    assert_eq!(s["records"], RECORDS);
    assert_eq!(s["claims"], 2 * RECORDS);
    let errors = findings.iter().filter(|f| f["severity"] == "error").count();
    assert_eq!(s["findings"]["error"], errors);
    assert!(errors > RECORDS / 3, "{errors} errors");
    assert_eq!(s["complete"], false, "an input could not be read");
    // Records in input order; the unreadable input's finding is the last.
    assert_eq!(records[RECORDS - 1]["file"], "pins/rec1199.json");
    let last = findings.last().expect("a finding");
    assert_eq!(last["file"], "pins/zz-broken.json", "{last:#}");
    for jobs in ["2", "8"] {
        assert!(report("json", jobs) == json, "json --jobs {jobs}");
    }
    for format in ["text", "markdown", "sarif", "github"] {
        let one = report(format, "1");
        assert!(one.len() > 10 * RECORDS, "{format}: {} bytes", one.len());
        assert!(report(format, "8") == one, "{format} --jobs 8");
    }
    // Against its own report as a baseline (matched in report order, on the
    // main thread): every finding is the baseline's, whatever the workers.
    ws.write("baseline.json", &json);
    let against = |jobs: &str| audit("json", jobs, &["--baseline", "baseline.json"], 2);
    let one = against("1");
    let parsed: serde_json::Value = serde_json::from_str(&one).expect("one JSON document");
    let findings = parsed["findings"].as_array().expect("findings");
    assert!(
        findings.iter().all(|f| f["baseline"] == true),
        "all in the baseline"
    );
    assert_eq!(parsed["summary"]["baseline_findings"], findings.len());
    assert_eq!(parsed["summary"]["baseline_resolved"], 0);
    assert!(against("8") == one, "--baseline --jobs 8");
}
