//! Unbounded inputs (issue "Reliability and security"): a huge document in a small
//! pack is an `unchecked` source, never an abort of the run; record import is
//! linear in its input, and keeps every position right while it is.

use std::path::Path;

use pinaudit::record::document;
use serde_json::json;

use crate::common::forge::{
    assert_clean, good_pin, pin, source, Forge, NAME, README, T0, T0_RFC3339,
};
use crate::common::scratch::Scratch;

/// A compressible "newline bomb": 120 MiB of newlines that git stores in a few
/// hundred KiB, beside the usual README. The record citing it is `unchecked` with
/// the reason; the other record is reported as usual; exit 2, no abort.
#[test]
fn a_document_over_the_size_cap_is_unchecked_and_the_run_goes_on() {
    let forge = Forge::new();
    let repo = forge.repo(NAME);
    let bomb = vec![b'\n'; 120 << 20];
    let commit = repo.commit(
        &[("README.md", README.as_bytes()), ("bomb.txt", &bomb[..])],
        "add results and a newline bomb",
        T0,
    );
    drop(bomb);
    let work = Scratch::new();
    work.write_pin(&good_pin("good", commit));
    let s = source(
        "bomb",
        NAME,
        commit,
        "bomb.txt",
        &"0".repeat(64),
        T0_RFC3339,
    );
    let claim = json!({
        "label": "bomb line",
        "source": "bomb",
        "lines": [5, 5],
        "value": 2.9,
        "unit": "tokens/s",
        "metric": "decode_rate",
        "url": format!("{}#L5", s["url"].as_str().unwrap()),
        "correct": null,
        "total": null,
    });
    work.write_pin(&pin("bomb", &[s], &[claim]));

    let r = work.audit([
        "--allow-local",
        "--rewrite",
        &forge.file_rewrite(),
        "--max-document-size",
        "10M",
        "pins",
    ]);
    assert!(
        !r.stderr.contains("panicked") && !r.stderr.contains("memory allocation"),
        "stderr:\n{}",
        r.stderr
    );
    r.assert_code(2);
    let b = r.source("bomb", "bomb");
    assert_eq!(b["status"], "unchecked", "{b:#}");
    let reason = b["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("document is `120.0 MiB`")
            && reason.contains("over --max-document-size (`10.0 MiB`)"),
        "{b:#}"
    );
    assert_eq!(r.claim("bomb", "bomb line")["status"], "unchecked");
    assert_clean(&r, "good", commit);
}

/// Many figures with distinct URLs and many broken blocks in one document: every
/// figure imported with its own source, every broken block reported at its own
/// line (positions come from one index of the text, not a rescan per block).
#[test]
fn a_large_record_imports_whole_with_every_position_right() {
    const FIGURES: usize = 3000;
    const BROKEN: usize = 3000;
    let rev = "0123456789abcdef0123456789abcdef01234567";
    let mut text = String::from("# Large record\n\n```json\n{\"figures\": [\n");
    for i in 0..FIGURES {
        if i > 0 {
            text.push_str(",\n");
        }
        text.push_str(&format!(
            "{{\"label\": \"f{i}\", \"metric\": \"m\", \"value\": {i}, \"evidence_url\": \
             \"https://github.com/o{i}/r/blob/{rev}/d{i}.md#L3\"}}"
        ));
    }
    text.push_str("\n]}\n```\n");
    // Broken blocks, one a line, after the figures' block; in the flattened form
    // too (several on the last line).
    let first_broken_line = text.lines().count() + 1;
    for _ in 0..BROKEN {
        text.push_str("```json {\"é\": } ```\n");
    }
    text.push_str("tail ```json [1,] ``` ```json {\"x\" ``` end\n");

    let imported = document::import(&text, Path::new("large.md"));
    let r = &imported.record;
    assert_eq!(r.claims.len(), FIGURES);
    assert_eq!(r.sources.len(), FIGURES, "one source per distinct URL");
    assert_eq!(
        r.claims[FIGURES - 1].source.as_deref(),
        Some(&*format!("d{}.md", FIGURES - 1))
    );
    // The first broken blocks one by one, each at its own line; the rest counted
    // in one issue, so memory stays small however many there are.
    let max = document::MAX_BROKEN_REPORTED;
    let broken: Vec<_> = imported
        .issues
        .iter()
        .filter(|i| i.message.starts_with("not valid JSON"))
        .collect();
    assert_eq!(broken.len(), max, "{:#?}", &imported.issues[..3]);
    for (k, issue) in broken.iter().enumerate() {
        let at = issue.position.expect("a position");
        assert_eq!(at.line, first_broken_line + k, "{issue:?}");
        // `{"é": }`: the error is at `}`, column 15 in characters (not bytes).
        assert_eq!(at.column, 15, "{issue:?}");
    }
    let rest: Vec<_> = imported
        .issues
        .iter()
        .filter(|i| i.message.contains("more ```json blocks are not valid JSON"))
        .collect();
    assert_eq!(rest.len(), 1, "{:#?}", imported.issues.last());
    assert!(
        rest[0]
            .message
            .starts_with(&format!("`{}` more", BROKEN + 2 - max)),
        "{:?}",
        rest[0]
    );
    assert_eq!(rest[0].position.unwrap().line, first_broken_line + max);
    // The figures' own positions, from the JSON scanner.
    assert_eq!(r.claims[0].at.0.map(|p| p.line), Some(5));
    assert_eq!(
        r.claims[FIGURES - 1].at.0.map(|p| p.line),
        Some(4 + FIGURES)
    );
}

/// `show` and `pin` read a blob only after its object header says it fits
/// `--max-document-size` (50 MiB by default): a 64 MiB document that its pack
/// holds in a few hundred KiB is refused with the sizes, and never inflated
/// (the process stays small).
#[test]
fn show_and_pin_refuse_a_document_over_the_size_cap_before_reading_it() {
    let forge = Forge::new();
    let repo = forge.repo(NAME);
    let big = b"decode: 2.9 tok/s\n".repeat((64 << 20) / 18 + 1);
    let commit = repo.commit(
        &[("README.md", README.as_bytes()), ("big.txt", &big[..])],
        "add a big document",
        T0,
    );
    drop(big);
    let ws = Scratch::new();
    let rewrite = forge.file_rewrite();
    let url = format!("https://github.com/{NAME}/blob/{commit}/big.txt#L3");
    let fetch = ["--cache", "cache", "--allow-local", "--rewrite", &rewrite];
    let args = |cmd: &str, extra: &[&str]| -> Vec<String> {
        let mut all = vec![cmd.to_string()];
        all.extend(fetch.iter().map(|s| s.to_string()));
        all.extend(extra.iter().map(|s| s.to_string()));
        all
    };

    // By default (50 MiB), measured: refused, and the document never copied.
    let (run, _, rss) = crate::net::run_measured(&ws, &args("show", &[&url]));
    assert_eq!(run.status, Some(2), "{}", run.stderr);
    assert!(run.stdout.is_empty(), "{}", run.stdout);
    assert!(
        run.stderr.contains("`big.txt` at `")
            && run
                .stderr
                .contains("is `64.0 MiB`, over --max-document-size (`50.0 MiB`)"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("hint: raise --max-document-size"),
        "{}",
        run.stderr
    );
    // The sync's integrity check of the cited blob (the damaged-cache check)
    // still reads it once, about 85 MiB in all; `show` reading it too took
    // 180 MiB.
    assert!(rss < 110 * 1024, "peak RSS {} MiB", rss / 1024);

    let run = ws.run(args(
        "show",
        &["--max-document-size", "1M", "--history", &url],
    ));
    assert_eq!(run.status, Some(2), "{}", run.stderr);
    assert!(
        run.stderr.contains("over --max-document-size (`1.0 MiB`)"),
        "{}",
        run.stderr
    );

    let branch = format!("https://github.com/{NAME}/blob/main/big.txt#L3");
    let (run, _, rss) = crate::net::run_measured(&ws, &args("pin", &[&branch]));
    assert_eq!(run.status, Some(2), "{}", run.stderr);
    assert!(run.stdout.is_empty(), "{}", run.stdout);
    assert!(
        run.stderr.contains("over --max-document-size (`50.0 MiB`)"),
        "{}",
        run.stderr
    );
    assert!(rss < 110 * 1024, "peak RSS {} MiB", rss / 1024);

    // Raised, the same document is read.
    let run = ws.run(args("show", &["--max-document-size", "100M", &url]));
    assert_eq!(run.status, Some(0), "{}", run.stderr);
    assert!(run.stdout.contains("decode: 2.9 tok/s"), "{}", run.stdout);
}
