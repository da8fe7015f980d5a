//! Beyond git documents: model weights checked by their Git LFS
//! pointers in the model repository a record names, never downloaded.
//!
//! The fixture model repository is laid out like a Hugging Face one
//! (`ORG/REPO.git`, served by `git daemon`), with `--rewrite
//! https://huggingface.co/=git://127.0.0.1:PORT/` sending the record's Hugging
//! Face URL there; its weights are three GGUF shards committed as LFS pointers.

use git2::Oid;
use serde_json::{json, Value};

use crate::common::forge::{sha256_hex, Forge, T0};
use crate::common::scratch::Scratch;
use crate::common::{GitDaemon, Wants};

const MODEL: &str = "acme/k3-neuron";
const HF: &str = "https://huggingface.co/acme/k3-neuron";

/// A shard: its path, the sha256 its pointer names and its size.
fn shards() -> Vec<(String, String, u64)> {
    (1..=3)
        .map(|i| {
            let path = format!("k3-neuron-iq1s-0000{i}-of-00003.gguf");
            // The weights never exist: only their pointers do.
            (
                path.clone(),
                sha256_hex(format!("shard {i}")),
                1_000_000 * i,
            )
        })
        .collect()
}

fn pointer(sha: &str, size: u64) -> String {
    format!("version https://git-lfs.github.com/spec/v1\noid sha256:{sha}\nsize {size}\n")
}

const CONFIG: &str = "{\"arch\": \"k3\"}\n";

/// The model repository with `shards` committed as pointers beside a README,
/// `.gitattributes` and a `config.json` kept in git itself.
fn model_forge(shards: &[(String, String, u64)]) -> (Forge, Oid) {
    let forge = Forge::new();
    let repo = forge.repo(MODEL);
    let mut files: Vec<(String, String)> = vec![
        ("README.md".into(), "# k3-neuron\n".into()),
        (
            ".gitattributes".into(),
            "*.gguf filter=lfs diff=lfs merge=lfs -text\n".into(),
        ),
        ("config.json".into(), CONFIG.into()),
    ];
    files.extend(shards.iter().map(|(p, s, n)| (p.clone(), pointer(s, *n))));
    let files: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, c)| (p.as_str(), c.as_str()))
        .collect();
    let commit = repo.commit(&files, "add weights", T0);
    (forge, commit)
}

fn weights_pin(id: &str, artifact: Value) -> Value {
    json!({
        "schema": "pinaudit/pins/v1",
        "id": id,
        "title": "weights",
        "sources": [],
        "claims": [],
        "artifacts": [artifact],
    })
}

fn rewrite(daemon: &GitDaemon) -> String {
    format!("https://huggingface.co/={}", daemon.url(""))
}

fn manifest(shards: &[(String, String, u64)]) -> String {
    let listing: String = shards
        .iter()
        .map(|(p, s, _)| format!("{s}  {p}\n"))
        .collect();
    sha256_hex(listing)
}

#[test]
fn right_weight_hash_verifies_by_shard_or_manifest() {
    let set = shards();
    let (forge, commit) = model_forge(&set);
    let daemon = GitDaemon::start(forge.path(), Wants::Reachable);
    let ws = Scratch::new();
    for (id, sha) in [("shard", set[1].1.clone()), ("manifest", manifest(&set))] {
        let file = ws.write_pin(&weights_pin(
            id,
            json!({"kind": "weights", "label": "k3-neuron-iq1s", "repository": HF,
                   "revision": commit.to_string(), "sha256": sha, "files": ["*.gguf"]}),
        ));
        let run = ws.audit(["--rewrite", &rewrite(&daemon), &file]);
        run.assert_codes(&[]);
        run.assert_code(0);
        let a = &run.record(id).expect("record")["artifacts"][0];
        assert_eq!(a["status"], "checked", "{a:#}");
        assert_eq!(a["revision"], commit.to_string());
        assert_eq!(a["repository"], HF);
        let files = a["files"].as_array().expect("files");
        assert_eq!(files.len(), 3, "{a:#}");
        for (f, (p, s, n)) in files.iter().zip(&set) {
            assert_eq!(f, &json!({"path": p, "sha256": s, "size": n, "lfs": true}));
        }
    }
}

#[test]
fn wrong_weight_hash_is_weight_hash_mismatch() {
    let set = shards();
    let (forge, commit) = model_forge(&set);
    let daemon = GitDaemon::start(forge.path(), Wants::Reachable);
    let ws = Scratch::new();
    let wrong = sha256_hex("other weights");
    let file = ws.write_pin(&weights_pin(
        "wrong",
        json!({"kind": "weights", "label": "k3-neuron-iq1s", "repository": format!("{HF}/tree/{commit}"),
               "revision": null, "sha256": wrong}),
    ));
    let run = ws.audit(["--rewrite", &rewrite(&daemon), &file]);
    run.assert_code(1);
    let f = run.only("weight-hash-mismatch");
    assert_eq!(f["severity"], "error");
    assert_eq!(f["evidence"]["expected"], wrong);
    assert_eq!(f["evidence"]["commit"], commit.to_string());
    assert_eq!(f["evidence"]["manifest_sha256"], manifest(&set));
    // Without a file list, the weights are every LFS file: the three shards,
    // not the README or config.json.
    let files = f["evidence"]["files"].as_array().expect("files");
    let paths: Vec<&str> = files.iter().map(|x| x["path"].as_str().unwrap()).collect();
    assert_eq!(paths, set.iter().map(|s| s.0.as_str()).collect::<Vec<_>>());
    assert!(
        f["message"]
            .as_str()
            .unwrap()
            .contains("any of its 3 files"),
        "{f:#}"
    );
    assert!(f["hint"].as_str().unwrap().contains("oid sha256"), "{f:#}");
}

#[test]
fn missing_shard_is_path_missing_and_plain_files_are_hashed_as_blobs() {
    let set = shards();
    // The repository holds the first two shards only.
    let (forge, commit) = model_forge(&set[..2]);
    let daemon = GitDaemon::start(forge.path(), Wants::Reachable);
    let ws = Scratch::new();
    let mut listed: Vec<String> = set.iter().map(|s| s.0.clone()).collect();
    listed.push("config.json".into());
    let file = ws.write_pin(&weights_pin(
        "missing",
        json!({"kind": "weights", "label": "k3-neuron-iq1s", "repository": HF,
               "revision": commit.to_string(), "sha256": set[0].1, "files": listed}),
    ));
    let run = ws.audit(["--rewrite", &rewrite(&daemon), &file]);
    run.assert_code(1);
    let f = run.only("path-missing");
    assert_eq!(f["evidence"]["path"], set[2].0);
    assert_eq!(f["evidence"]["commit"], commit.to_string());
    assert_eq!(f["location"]["path"], set[2].0);
    run.assert_lacks("weight-hash-mismatch");
    let a = &run.record("missing").expect("record")["artifacts"][0];
    let config = a["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"] == "config.json")
        .expect("config.json read")
        .clone();
    assert_eq!(
        config,
        json!({"path": "config.json", "sha256": sha256_hex(CONFIG), "size": CONFIG.len(), "lfs": false})
    );
}

#[test]
fn unpinned_weights_evidence_gives_the_pin_to_adopt() {
    let set = shards();
    let (forge, head) = model_forge(&set);
    let daemon = GitDaemon::start(forge.path(), Wants::Reachable);
    let ws = Scratch::new();
    let file = ws.write_pin(&weights_pin(
        "unpinned",
        json!({"kind": "weights", "label": "k3-neuron-iq1s", "repository": HF,
               "revision": null, "sha256": null}),
    ));
    let run = ws.audit(["--rewrite", &rewrite(&daemon), &file]);
    let f = run.only("unpinned-weights");
    let pin = &f["evidence"]["suggested_pin"];
    assert_eq!(pin["repository"], HF);
    assert_eq!(pin["revision"], head.to_string());
    assert_eq!(pin["manifest_sha256"], manifest(&set));
    let files = pin["files"].as_array().expect("files");
    assert_eq!(files.len(), 3, "{pin:#}");
    for (f, (p, s, n)) in files.iter().zip(&set) {
        assert_eq!(f["path"], p.as_str());
        assert_eq!(f["sha256"], s.as_str());
        assert_eq!(f["size"], *n);
    }
    let hint = f["hint"].as_str().unwrap();
    assert!(hint.contains(&head.to_string()), "{hint}");
    assert!(hint.contains(&manifest(&set)), "{hint}");
    // Warnings don't fail the default `--fail-on error`.
    run.assert_code(0);
}

#[test]
fn model_repository_that_does_not_exist_is_repository_missing() {
    let (forge, _) = model_forge(&shards());
    let daemon = GitDaemon::start(forge.path(), Wants::Reachable);
    let ws = Scratch::new();
    let file = ws.write_pin(&weights_pin(
        "gone",
        json!({"kind": "weights", "label": "k3", "repository": "https://huggingface.co/acme/nothing",
               "revision": "de1fa14ea798512f54dafc8b8795eb3ef1a6c367", "sha256": null}),
    ));
    let run = ws.audit(["--rewrite", &rewrite(&daemon), &file]);
    run.assert_code(1);
    let f = run.only("repository-missing");
    assert_eq!(f["evidence"]["artifact"], "k3");
}

// --- Checksum manifests (`audit --manifests`) --------------------------------

#[test]
fn manifest_entries_made_from_a_crlf_copy_are_manifest_mismatch_naming_crlf() {
    use crate::common::forge::{claim, pin, source, README, README_LINE, T0_RFC3339};
    let forge = Forge::new();
    let repo = forge.repo("acme/release");
    let notes = "line one\nline two\n";
    let data = "a,b\n1,2\n";
    let crlf = |t: &str| t.replace('\n', "\r\n");
    // Made on a checkout with CRLF line ends: the text files' entries are of the
    // CRLF copies; the binary one and README are right. One listed file is gone,
    // one file beside the manifest is not listed.
    let manifest = format!(
        "{}  README.md\n{} *notes.txt\nSHA256 (data.csv) = {}\n{}  gone.bin\n",
        sha256_hex(README),
        sha256_hex(crlf(notes)),
        sha256_hex(crlf(data)),
        sha256_hex("gone"),
    );
    let commit = repo.commit(
        &[
            ("README.md", README),
            ("notes.txt", notes),
            ("data.csv", data),
            ("extra.txt", "not listed\n"),
            ("SHA256SUMS", manifest.as_str()),
        ],
        "release",
        T0,
    );
    let daemon = GitDaemon::start(forge.path(), Wants::Reachable);
    let ws = Scratch::new();
    let s = source(
        "readme",
        "acme/release",
        commit,
        "README.md",
        &sha256_hex(README),
        T0_RFC3339,
    );
    let c = claim("decode", &s, README_LINE, 2.9);
    let file = ws.write_pin(&pin("rel", &[s], &[c]));
    let github = crate::common::forge::to_daemon(&daemon);

    // Without the flag, manifests are not read.
    let run = ws.audit(["--rewrite", &github, &file]);
    run.assert_codes(&[]);

    let run = ws.audit(["--manifests", "--rewrite", &github, &file]);
    let mismatches = run.with_code("manifest-mismatch");
    let by_path = |p: &str| {
        mismatches
            .iter()
            .find(|f| f["evidence"]["path"] == p)
            .unwrap_or_else(|| panic!("no finding for {p}: {mismatches:#?}"))
            .clone()
    };
    for (path, line) in [("notes.txt", 2), ("data.csv", 3)] {
        let f = by_path(path);
        assert_eq!(f["severity"], "warning");
        assert_eq!(f["evidence"]["problem"], "hash");
        assert_eq!(f["evidence"]["matching_variant"], "crlf", "{f:#}");
        assert_eq!(f["location"]["path"], "SHA256SUMS");
        assert_eq!(f["location"]["line"], line);
        assert!(
            f["message"].as_str().unwrap().contains("`crlf` variant"),
            "{f:#}"
        );
    }
    let gone = by_path("gone.bin");
    assert_eq!(gone["evidence"]["problem"], "missing");
    // README passes: three mismatches, no more.
    assert_eq!(mismatches.len(), 3, "{mismatches:#?}");
    let unlisted = run.only("manifest-unlisted");
    assert_eq!(unlisted["evidence"]["unlisted"], json!(["extra.txt"]));
    // Warnings and notes don't fail the default `--fail-on error`.
    run.assert_code(0);
}

#[test]
fn manifest_hash_of_an_older_version_names_that_commit() {
    use crate::common::forge::{claim, pin, source, README, README_LINE, T0_RFC3339};
    let forge = Forge::new();
    let repo = forge.repo("acme/release");
    let old = "version 1\n";
    let first = repo.commit(&[("README.md", README), ("notes.txt", old)], "v1", T0);
    let manifest = format!(
        "{}  notes.txt\n{}  README.md\n",
        sha256_hex(old),
        sha256_hex(README)
    );
    let commit = repo.commit(
        &[
            ("notes.txt", "version 2\n"),
            ("SHA256SUMS", manifest.as_str()),
        ],
        "v2",
        T0 + 60,
    );
    let daemon = GitDaemon::start(forge.path(), Wants::Reachable);
    let ws = Scratch::new();
    let s = source(
        "readme",
        "acme/release",
        commit,
        "README.md",
        &sha256_hex(README),
        T0_RFC3339,
    );
    let c = claim("decode", &s, README_LINE, 2.9);
    let file = ws.write_pin(&pin("rel", &[s], &[c]));
    let run = ws.audit([
        "--manifests",
        "--rewrite",
        &crate::common::forge::to_daemon(&daemon),
        &file,
    ]);
    let f = run.only("manifest-mismatch");
    assert_eq!(
        f["evidence"]["matching_commit"]["commit"],
        first.to_string(),
        "{f:#}"
    );
    assert!(
        f["message"].as_str().unwrap().contains(&format!(
            "matches the file at commit `{}`",
            &first.to_string()[..7]
        )),
        "{f:#}"
    );
}

#[test]
fn record_documents_name_the_model_repository_by_url() {
    use crate::common::inputs::{figure, figures_block, record_doc};
    let set = shards();
    let (forge, commit) = model_forge(&set);
    let daemon = GitDaemon::start(forge.path(), Wants::Reachable);
    let mut fig = figure("decode", 2.9, 3);
    fig["conditions"] = json!({
        "model_artifact": HF,
        "model_revision": commit.to_string(),
        "weight_hash": sha256_hex("not these weights"),
    });
    let ws = Scratch::new();
    let doc = ws.write("record.md", record_doc(&[&figures_block(&[fig])]));
    // The record's GitHub source goes to the same daemon, where it does not exist.
    let run = ws.audit([
        "--rewrite",
        &rewrite(&daemon),
        "--rewrite",
        &crate::common::forge::to_daemon(&daemon),
        doc.to_str().unwrap(),
    ]);
    let f = run.only("weight-hash-mismatch");
    assert_eq!(f["evidence"]["artifact"], HF);
    assert_eq!(f["location"]["repository"], HF);
    assert_eq!(f["evidence"]["files"].as_array().unwrap().len(), 3);

    // `import` keeps the repository in the pin file, and the pin file audits alike.
    let out = ws.run(["import", doc.to_str().unwrap(), "--out", "pins"]);
    out.assert_code(0);
    let pin: Value = serde_json::from_str(
        &std::fs::read_to_string(
            std::fs::read_dir(ws.path().join("pins"))
                .unwrap()
                .next()
                .unwrap()
                .unwrap()
                .path(),
        )
        .unwrap(),
    )
    .unwrap();
    assert_eq!(pin["artifacts"][0]["repository"], HF, "{pin:#}");
}

#[test]
fn offline_model_repository_not_in_cache_is_unchecked() {
    let ws = Scratch::new();
    let file = ws.write_pin(&weights_pin(
        "offline",
        json!({"kind": "weights", "label": "k3", "repository": HF,
               "revision": "de1fa14ea798512f54dafc8b8795eb3ef1a6c367", "sha256": null}),
    ));
    let run = ws.audit_offline([&file]);
    run.assert_codes(&[]);
    run.assert_code(2);
    let a = &run.record("offline").expect("record")["artifacts"][0];
    assert_eq!(a["status"], "unchecked", "{a:#}");
    assert_eq!(run.summary()["complete"], false);
}

// --- Documents over HTTP(S) -------------------------------------------------

mod web {
    use std::time::{Duration, Instant};

    use serde_json::{json, Value};

    use crate::common::forge::sha256_hex;
    use crate::common::run::Run;
    use crate::common::scratch::Scratch;
    use crate::common::web::{Response, WebServer};

    /// A paper served as HTML: line 3 carries the figure.
    const PAGE: &str = "<html><body>\n<h1>Results</h1>\n<p>decode: 2.9 tok/s</p>\n</body></html>\n";

    fn web_pin(url: &str, sha256: &str) -> Value {
        json!({
            "schema": "pinaudit/pins/v1",
            "id": "paper",
            "title": "a paper",
            "sources": [{"id": "page", "url": url, "repository": null, "revision": null,
                         "path": null, "sha256": sha256, "commit_time": null}],
            "claims": [{"label": "decode", "source": "page", "lines": [3, 3], "value": 2.9,
                        "unit": "tokens/s", "metric": null, "url": null, "correct": null, "total": null}],
            "artifacts": [],
        })
    }

    fn audit(ws: &Scratch, url: &str, sha: &str, extra: &[&str]) -> Run {
        let file = ws.write_pin(&web_pin(url, sha));
        let mut args: Vec<&str> = extra.to_vec();
        args.push(&file);
        ws.audit(args)
    }

    #[test]
    fn served_page_is_checked_then_revalidated_with_no_body() {
        let server = WebServer::start(|req, _| {
            if req.headers.get("if-none-match").map(String::as_str) == Some("\"v1\"") {
                return Response::status(304).header("ETag", "\"v1\"");
            }
            Response::ok(PAGE)
                .header("ETag", "\"v1\"")
                .header("Last-Modified", "Wed, 21 Oct 2015 07:28:00 GMT")
        });
        let ws = Scratch::new();
        let url = server.url("paper.html");
        for _ in 0..2 {
            let run = audit(&ws, &url, &sha256_hex(PAGE), &["--allow-local"]);
            // A live page is never pinned: unpinned-url, an error.
            run.assert_codes(&["unpinned-url"]);
            let s = run.source("paper", "page");
            assert_eq!(s["status"], "checked", "{s:#}");
            assert_eq!(s["sha256"]["actual"], sha256_hex(PAGE));
            assert_eq!(s["etag"], "\"v1\"");
            assert_eq!(s["last_modified"], "Wed, 21 Oct 2015 07:28:00 GMT");
            assert_eq!(run.claim("paper", "decode")["status"], "verified");
        }
        let log = server.log();
        assert_eq!(log.len(), 2, "{log:#?}");
        assert_eq!((log[0].status, log[1].status), (200, 304));
        assert_eq!(log[1].request.headers["if-none-match"], "\"v1\"");
        assert_eq!(
            log[1].request.headers["if-modified-since"],
            "Wed, 21 Oct 2015 07:28:00 GMT"
        );
        // The re-check cost no body.
        assert_eq!(log[1].body_bytes, 0);
    }

    #[test]
    fn archived_snapshot_is_pinned_and_a_changed_body_is_hash_mismatch() {
        let crlf = PAGE.replace('\n', "\r\n");
        let server = WebServer::start(move |_, _| Response::ok(PAGE));
        let ws = Scratch::new();
        // The recorded hash is of a CRLF copy of the page.
        let run = audit(
            &ws,
            &server.url("paper.html"),
            &sha256_hex(&crlf),
            &["--allow-local"],
        );
        let f = run.only("hash-mismatch");
        assert_eq!(f["evidence"]["matching_variant"], "crlf", "{f:#}");
        assert_eq!(f["evidence"]["actual"], sha256_hex(PAGE));
        run.assert_code(1);
        assert!(crate::beyond_git::web::pinned(
            "https://web.archive.org/web/20240101120000/https://example.com/p"
        ));
    }

    /// The recorded version of a page is kept by its sha256 and never
    /// overwritten: once the page changes, the live page is `hash-mismatch`
    /// online and offline, the claims are judged against the recorded bytes,
    /// and `show` prints the recorded version (issue "Trust nothing you did
    /// not recompute", attack 5).
    #[test]
    fn a_changed_page_never_overwrites_the_recorded_version() {
        let changed = PAGE.replace("2.9", "9.9");
        let served = std::sync::Arc::new(std::sync::Mutex::new(PAGE.to_string()));
        let now = served.clone();
        let mut server = WebServer::start(move |_, _| {
            Response::ok(now.lock().map(|p| p.clone()).unwrap_or_default())
        });
        let ws = Scratch::new();
        let url = server.url("paper.html");
        let sha = sha256_hex(PAGE);
        let run = audit(&ws, &url, &sha, &["--allow-local"]);
        run.assert_codes(&["unpinned-url"]);
        assert_eq!(run.claim("paper", "decode")["status"], "verified");

        *served.lock().unwrap() = changed.clone();
        let online = audit(&ws, &url, &sha, &["--allow-local"]);
        server.stop();
        let offline = ws.audit_offline(["pins/paper.json"]);
        for run in [&online, &offline] {
            let f = run.only("hash-mismatch");
            assert_eq!(f["evidence"]["actual"], sha256_hex(&changed), "{f:#}");
            assert_eq!(f["evidence"]["recorded_kept"], true, "{f:#}");
            let c = run.claim("paper", "decode");
            assert_eq!(c["status"], "verified", "{c:#}\n{}", run.stderr);
        }

        let shown = ws.run(["show", "pins/paper.json#decode", "--cache", "cache"]);
        shown.assert_code(0);
        assert!(
            shown.stdout.contains("the recorded version"),
            "{}",
            shown.stdout
        );
        assert!(
            shown.stdout.contains("> 3 | <p>decode: 2.9 tok/s</p>"),
            "{}",
            shown.stdout
        );
        assert!(!shown.stdout.contains("9.9"), "{}", shown.stdout);
    }

    /// Whether a web URL is pinned (no `unpinned-url`), judged offline.
    pub fn pinned(url: &str) -> bool {
        let ws = Scratch::new();
        let file = ws.write_pin(&web_pin(url, &sha256_hex(PAGE)));
        let run = ws.audit_offline([&file]);
        !run.codes().contains(&"unpinned-url".to_string())
    }

    #[test]
    fn not_found_is_unchecked_and_incomplete() {
        let server = WebServer::start(|_, _| Response::status(404));
        let ws = Scratch::new();
        let run = audit(
            &ws,
            &server.url("gone.html"),
            &sha256_hex(PAGE),
            &["--allow-local"],
        );
        let s = run.source("paper", "page");
        assert_eq!(s["status"], "unchecked", "{s:#}");
        assert!(s["reason"].as_str().unwrap().contains("404"), "{s:#}");
        assert_eq!(run.claim("paper", "decode")["status"], "unchecked");
        // 404 is not transient: asked once.
        assert_eq!(server.log().len(), 1);
        assert_eq!(run.summary()["complete"], false);
    }

    #[test]
    fn too_many_requests_waits_for_retry_after() {
        let server = WebServer::start(|_, nth| match nth {
            0 => Response::status(429).header("Retry-After", "1"),
            _ => Response::ok(PAGE),
        });
        let ws = Scratch::new();
        let start = Instant::now();
        let run = audit(
            &ws,
            &server.url("paper.html"),
            &sha256_hex(PAGE),
            &["--allow-local"],
        );
        assert_eq!(run.source("paper", "page")["status"], "checked");
        assert!(
            start.elapsed() >= Duration::from_secs(1),
            "{:?}",
            start.elapsed()
        );
        let statuses: Vec<u16> = server.log().iter().map(|l| l.status).collect();
        assert_eq!(statuses, [429, 200]);
    }

    #[test]
    fn server_error_then_success_is_retried() {
        let server = WebServer::start(|_, nth| match nth {
            0 => Response::status(500),
            _ => Response::ok(PAGE),
        });
        let ws = Scratch::new();
        let run = audit(
            &ws,
            &server.url("paper.html"),
            &sha256_hex(PAGE),
            &["--allow-local"],
        );
        assert_eq!(run.source("paper", "page")["status"], "checked");
        assert_eq!(run.claim("paper", "decode")["status"], "verified");
        let statuses: Vec<u16> = server.log().iter().map(|l| l.status).collect();
        assert_eq!(statuses, [500, 200]);
    }

    #[test]
    fn stalled_server_times_out() {
        let server = WebServer::start(|_, _| Response {
            stall: Duration::from_secs(60),
            ..Response::ok(PAGE)
        });
        let ws = Scratch::new();
        let file = ws.write_pin(&web_pin(&server.url("slow.html"), &sha256_hex(PAGE)));
        let start = Instant::now();
        let run = ws.audit_with_timeout(1, ["--allow-local", &file]);
        let s = run.source("paper", "page");
        assert_eq!(s["status"], "unchecked", "{s:#}");
        assert!(s["reason"].as_str().unwrap().contains("timed out"), "{s:#}");
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "{:?}",
            start.elapsed()
        );
        run.assert_code(1);
    }

    /// A record `id` citing one document per URL, `page0`, `page1`, …, each
    /// with its claim.
    fn pages_pin(id: &str, urls: &[String]) -> Value {
        let sources: Vec<Value> = urls
            .iter()
            .enumerate()
            .map(|(i, url)| {
                json!({"id": format!("page{i}"), "url": url, "repository": null,
                       "revision": null, "path": null, "sha256": sha256_hex(PAGE),
                       "commit_time": null})
            })
            .collect();
        let claims: Vec<Value> = (0..urls.len())
            .map(|i| {
                json!({"label": format!("decode{i}"), "source": format!("page{i}"),
                       "lines": [3, 3], "value": 2.9, "unit": "tokens/s", "metric": null,
                       "url": null, "correct": null, "total": null})
            })
            .collect();
        json!({"schema": "pinaudit/pins/v1", "id": id, "title": "pages",
               "sources": sources, "claims": claims, "artifacts": []})
    }

    /// The reasons of the `n` sources of record `id`, each asserted unchecked.
    fn unchecked_reasons(run: &Run, id: &str, n: usize) -> Vec<String> {
        (0..n)
            .map(|i| {
                let s = run.source(id, &format!("page{i}"));
                assert_eq!(s["status"], "unchecked", "{s:#}");
                s["reason"].as_str().unwrap_or_default().to_string()
            })
            .collect()
    }

    #[test]
    fn silent_web_servers_end_at_the_deadline_with_the_other_records_reported() {
        // Six silent documents on one host (two at a time), each tried four
        // times at --timeout 3: some 14 s a pair, 45 s for the six without a
        // deadline. The one that answers sorts first, so it gets a slot.
        let server = WebServer::start(|req, _| {
            if req.path.contains("answers") {
                return Response::ok(PAGE);
            }
            Response {
                stall: Duration::from_secs(120),
                ..Response::ok(PAGE)
            }
        });
        let ws = Scratch::new();
        let silent: Vec<String> = (0..6)
            .map(|i| server.url(&format!("silent{i}.html")))
            .collect();
        let bad = ws.write_pin(&pages_pin("silent", &silent));
        let good = ws.write_pin(&pages_pin("good", &[server.url("a-answers.html")]));
        let start = Instant::now();
        let run = ws.audit_with_timeout(3, ["--allow-local", "--deadline", "20", &good, &bad]);
        let took = start.elapsed();
        assert_eq!(run.source("good", "page0")["status"], "checked");
        assert_eq!(run.claim("good", "decode0")["status"], "verified");
        let reasons = unchecked_reasons(&run, "silent", 6);
        for why in &reasons {
            assert!(why.contains("timed out"), "{why}");
        }
        let cut = reasons
            .iter()
            .filter(|r| r.contains("deadline of 20 s (raise it with --deadline)"))
            .count();
        assert!(cut >= 2, "{reasons:#?}");
        // A hang guard, not a timing claim (45 s and more without the deadline).
        assert!(took < Duration::from_secs(60), "took {took:?}");
        eprintln!("six silent documents: {took:?}");
        assert_eq!(run.summary()["complete"], false);
    }

    #[test]
    fn a_retry_after_past_the_deadline_fails_at_once_with_the_reason() {
        let server = WebServer::start(|_, _| Response::status(429).header("Retry-After", "30"));
        let ws = Scratch::new();
        let urls: Vec<String> = (0..4)
            .map(|i| server.url(&format!("busy{i}.html")))
            .collect();
        let file = ws.write_pin(&pages_pin("busy", &urls));
        let start = Instant::now();
        let run = ws.audit(["--allow-local", "--deadline", "10", &file]);
        let took = start.elapsed();
        for why in unchecked_reasons(&run, "busy", 4) {
            assert!(
                why.contains("asked to retry after 30 s, past the deadline of 10 s"),
                "{why}"
            );
        }
        // Not waited for, not retried: each document asked once.
        assert_eq!(server.log().len(), 4, "{:#?}", server.log());
        // A hang guard (4 × 30 s when Retry-After was honoured past the deadline).
        assert!(took < Duration::from_secs(60), "took {took:?}");
        eprintln!("four 429s: {took:?}");
    }

    #[test]
    fn oversize_body_is_refused() {
        let server = WebServer::start(|_, _| Response::ok(vec![b'x'; 8192]));
        let ws = Scratch::new();
        let run = audit(
            &ws,
            &server.url("big.html"),
            &sha256_hex(PAGE),
            &["--allow-local", "--max-document-size", "4K"],
        );
        let s = run.source("paper", "page");
        assert_eq!(s["status"], "unchecked", "{s:#}");
        assert!(
            s["reason"].as_str().unwrap().contains("max-document-size"),
            "{s:#}"
        );
    }

    #[test]
    fn loopback_is_refused_without_allow_local_before_any_connection() {
        let server = WebServer::start(|_, _| Response::ok(PAGE));
        let ws = Scratch::new();
        let run = audit(&ws, &server.url("paper.html"), &sha256_hex(PAGE), &[]);
        let s = run.source("paper", "page");
        assert_eq!(s["status"], "unchecked", "{s:#}");
        assert!(
            s["reason"].as_str().unwrap().contains("--allow-local"),
            "{s:#}"
        );
        assert!(server.log().is_empty(), "{:#?}", server.log());
    }

    #[test]
    fn redirects_to_file_urls_are_refused_even_with_allow_local() {
        let server =
            WebServer::start(|_, _| Response::status(302).header("Location", "file:///etc/passwd"));
        let ws = Scratch::new();
        let run = audit(
            &ws,
            &server.url("paper.html"),
            &sha256_hex(PAGE),
            &["--allow-local"],
        );
        let s = run.source("paper", "page");
        assert_eq!(s["status"], "unchecked", "{s:#}");
        assert!(s["reason"].as_str().unwrap().contains("redirect"), "{s:#}");
    }

    #[test]
    fn oversize_body_without_a_length_is_cut_off_while_it_streams() {
        let server = WebServer::start(|_, _| Response {
            unsized_body: true,
            ..Response::ok(vec![b'x'; 64 * 1024])
        });
        let ws = Scratch::new();
        let run = audit(
            &ws,
            &server.url("big.html"),
            &sha256_hex(PAGE),
            &["--allow-local", "--max-document-size", "4K"],
        );
        let s = run.source("paper", "page");
        assert_eq!(s["status"], "unchecked", "{s:#}");
        assert!(
            s["reason"].as_str().unwrap().contains("larger than"),
            "{s:#}"
        );
    }

    #[test]
    fn offline_re_check_reads_the_http_cache() {
        let mut server = WebServer::start(|_, _| Response::ok(PAGE).header("ETag", "\"v1\""));
        let ws = Scratch::new();
        let url = server.url("paper.html");
        let run = audit(&ws, &url, &sha256_hex(PAGE), &["--allow-local"]);
        assert_eq!(run.source("paper", "page")["status"], "checked");
        server.stop();
        let file = ws.write_pin(&web_pin(&url, &sha256_hex(PAGE)));
        let run = ws.audit_offline(["--allow-local", &file]);
        let s = run.source("paper", "page");
        assert_eq!(s["status"], "checked", "{s:#}");
        assert_eq!(s["etag"], "\"v1\"");
        assert_eq!(run.claim("paper", "decode")["status"], "verified");
        // A page never fetched is not in the cache.
        let other = ws.write_pin(&web_pin(&server.url("other.html"), &sha256_hex(PAGE)));
        let run = ws.audit_offline(["--allow-local", &other]);
        assert_eq!(run.source("paper", "page")["reason"], "not in cache");
    }

    #[test]
    fn at_most_two_requests_at_a_time_go_to_one_host() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        use std::sync::Arc;
        let (now, most) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        let (n, m) = (now.clone(), most.clone());
        let server = WebServer::start(move |_, _| {
            let in_flight = n.fetch_add(1, Ordering::SeqCst) + 1;
            m.fetch_max(in_flight, Ordering::SeqCst);
            std::thread::sleep(Duration::from_millis(300));
            n.fetch_sub(1, Ordering::SeqCst);
            Response::ok(PAGE)
        });
        let ws = Scratch::new();
        let mut pin = web_pin(&server.url("p0.html"), &sha256_hex(PAGE));
        pin["sources"] = (0..5)
            .map(|i| {
                json!({"id": format!("page{i}"), "url": server.url(&format!("p{i}.html")),
                       "repository": null, "revision": null, "path": null,
                       "sha256": sha256_hex(PAGE), "commit_time": null})
            })
            .collect();
        pin["claims"] = json!([]);
        let file = ws.write_pin(&pin);
        let run = ws.audit(["--allow-local", &file]);
        for i in 0..5 {
            assert_eq!(
                run.source("paper", &format!("page{i}"))["status"],
                "checked"
            );
        }
        assert_eq!(server.log().len(), 5);
        assert!(
            most.load(Ordering::SeqCst) <= 2,
            "{}",
            most.load(Ordering::SeqCst)
        );
        assert!(most.load(Ordering::SeqCst) >= 1);
    }
}
