//! Regressions found in review of `pinaudit show`, end to end: the real binary
//! against fixture repositories reached over `file://`
//! (`--rewrite https://github.com/=file:///FORGE/ --allow-local`).
//!
//! - a `--context` near `u32::MAX` overflowed the last line shown (a panic in
//!   debug builds, a wrapped range in release ones);
//! - `--history` of a range like `#L1-L100000000` allocated one tracked slot per
//!   cited line and aborted out of memory, and would have called lines past the
//!   end "removed";
//! - `--offline` with a commit the cache lacks said the commit "is not in the
//!   repository", which only a fetch can tell.

mod common;

use git2::Oid;

use common::audit::{blob_url, Forge};
use common::run::{run, Run};
use common::seed::{Workdir, DAY, SEED_COMMIT_TIME};
use common::show::{assert_error, history_heading, history_part, lines, short};

const REPO: &str = "bench-lab/notes";
const NOTES: &str = "# Decode notes\n\ndecode: 2.9 tok/s\n\nMeasured with llama-bench.\n";

/// `pinaudit show ARGS… --cache cache --allow-local --rewrite …` in `work`.
fn show(work: &Workdir, forge: &Forge, args: &[&str]) -> Run {
    let mut cmd = work.cmd(["show"]);
    cmd.args(args)
        .args(["--allow-local", "--rewrite", &forge.file_rewrite()]);
    run(&mut cmd)
}

/// A forge holding `bench-lab/notes` with `notes.md` pinned, and a later commit
/// that edits its line 3. Returns the forge, the pinned commit and the head.
fn notes_forge() -> (Forge, Oid, Oid) {
    let forge = Forge::new();
    let repo = forge.repo(REPO);
    let pinned = repo.commit(&[("notes.md", NOTES)], "Decode notes", SEED_COMMIT_TIME);
    let head = repo.commit(
        &[("notes.md", NOTES.replace("2.9 tok/s", "3.1 tok/s"))],
        "Correct the decode figure",
        SEED_COMMIT_TIME + DAY,
    );
    (forge, pinned, head)
}

#[test]
fn a_context_as_large_as_u32_max_shows_the_whole_document() {
    let (forge, pinned, _) = notes_forge();
    let work = Workdir::new();
    let url = format!("{}#L3", blob_url(REPO, pinned, "notes.md"));
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
    let url = format!("{}#L2-L100000000", blob_url(REPO, pinned, "notes.md"));
    let r = show(&work, &forge, &[&url, "-C", "4294967295"]);
    assert_eq!(r.code(), 0, "stderr:\n{}", r.stderr);
    let out = lines(&r.stdout);
    assert_eq!(out[1], "  1 | # Decode notes", "{}", r.stdout);
    assert_eq!(out[5], "> 5 | Measured with llama-bench.", "{}", r.stdout);
    assert_eq!(out[6..], ["(the document ends at line 5)"], "{}", r.stdout);
}

#[test]
fn history_of_a_range_past_the_end_follows_only_the_lines_that_exist() {
    let (forge, pinned, head) = notes_forge();
    let work = Workdir::new();
    let url = format!("{}#L1-L100000000", blob_url(REPO, pinned, "notes.md"));
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
            format!("  {} 2026-08-08 Correct the decode figure", short(head)),
            "      L3: decode: 3.1 tok/s".to_string(),
            format!("at the head {}:", short(head)),
            "  L1 is now L1: # Decode notes".to_string(),
            "  L2 is now L2: ".to_string(),
            "  L3 is now L3: decode: 3.1 tok/s".to_string(),
            "  L4 is now L4: ".to_string(),
            "  L5 is now L5: Measured with llama-bench.".to_string(),
        ],
        "{}",
        r.stdout
    );
    // Lines past the end were never there: none of them is called removed.
    assert!(!r.stdout.contains("removed"), "{}", r.stdout);
}

#[test]
fn history_of_a_range_wholly_past_the_end_says_so_once() {
    let (forge, pinned, head) = notes_forge();
    let work = Workdir::new();
    let url = format!("{}#L9-L100000000", blob_url(REPO, pinned, "notes.md"));
    let r = show(&work, &forge, &[&url, "--history"]);
    // Nothing cited could be shown: exit 2 (issue 8).
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

#[test]
fn offline_a_commit_the_cache_lacks_is_not_in_the_cache_not_missing() {
    let (forge, pinned, _) = notes_forge();
    let work = Workdir::new();
    let pinned_url = format!("{}#L3", blob_url(REPO, pinned, "notes.md"));
    let filled = show(&work, &forge, &[&pinned_url]);
    assert_eq!(filled.code(), 0, "stderr:\n{}", filled.stderr);

    // A commit made after the cache was filled: the cache has the repository
    // but not this commit, and offline nothing can say whether it exists.
    let later = forge.repo(REPO).commit(
        &[("notes.md", NOTES.replace("2.9 tok/s", "3.2 tok/s"))],
        "Re-measure decode",
        SEED_COMMIT_TIME + 2 * DAY,
    );
    let later_url = format!("{}#L3", blob_url(REPO, later, "notes.md"));
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
