//! `pinaudit show TARGET [--context N] [--history]`, end to end: the real binary
//! against fixture repositories served by `git daemon` on loopback, reached
//! through `--rewrite https://github.com/=git://127.0.0.1:PORT/`.
//!
//! The person at the terminal investigating a disputed figure (the third kind of user)
//! reads this output, so the tests pin it down line by line.

use git2::Oid;
use serde_json::json;

use crate::common::run::{run, Run};
use crate::common::scratch::Scratch;
use crate::common::seed::{readme, Remote, DAY, SEED_COMMIT_TIME, SEED_REV};
use crate::common::show::{assert_error, history_heading, history_part, lines, short};

/// `pinaudit show ARGS… --cache cache --rewrite REWRITE` in `work`.
fn show(work: &Scratch, remote: &Remote, args: &[&str]) -> Run {
    let mut cmd = work.cached("show");
    cmd.args(args)
        .args(["--rewrite", &remote.rewrite(), "--timeout", "10"]);
    run(&mut cmd)
}

/// Output lines `from..=to` (1-based line numbers of the document) of `show`'s
/// listing of the seed README, with the cited ones marked.
fn readme_listing(from: u32, to: u32, cited: &[u32]) -> Vec<String> {
    let readme = readme();
    let width = to.to_string().len();
    (from..=to)
        .map(|n| {
            let mark = if cited.contains(&n) { '>' } else { ' ' };
            let text = readme.lines().nth(n as usize - 1).expect("a README line");
            format!("{mark} {n:>width$} | {text}")
        })
        .collect()
}

fn assert_header(first: &str, commit: Oid, path: &str) {
    assert!(
        first.starts_with(&format!("{path} @ {} ", short(commit))),
        "header: {first:?}"
    );
}

#[test]
fn url_target_prints_the_cited_line_with_three_lines_of_context() {
    let (remote, commit) = Remote::seed();
    let work = Scratch::new();
    let url = format!("{}#L43", remote.blob_url(commit, "README.md"));
    let r = show(&work, &remote, &[&url]);
    assert_eq!(r.code(), 0, "stderr:\n{}", r.stderr);
    let out = lines(&r.stdout);
    assert_header(&out[0], commit, "README.md");
    assert_eq!(out[1..], readme_listing(40, 46, &[43])[..], "{}", r.stdout);
    assert_eq!(out[4], "> 43 | | steady decode | ~2.9 tok/s |");
    // A URL names no claim, so no value is marked.
    assert!(!r.stdout.contains('^'), "{}", r.stdout);
}

#[test]
fn pinfile_label_target_marks_the_value_under_the_cited_line() {
    let (remote, commit) = Remote::seed();
    let work = Scratch::new();
    let source = json!({
        "id": "readme",
        "url": remote.blob_url(commit, "README.md"),
        "repository": remote.github(),
        "revision": commit.to_string(),
        "path": "README.md",
    });
    let pin = json!({
        "schema": "pinaudit/pins/v1",
        "id": "kimi",
        "sources": [source],
        "claims": [
            {"label": "steady decode", "source": "readme", "lines": [43, 43],
             "value": 2.9, "unit": "tokens/s"},
            {"label": "8K prefill", "source": "readme", "lines": [44, 44],
             "value": 79.6, "unit": "tokens/s"},
            {"label": "misplaced", "source": "readme", "lines": [44, 44],
             "value": 2.9, "unit": "tokens/s"},
            {"label": "look-alike", "source": "readme", "lines": [44, 44],
             "value": 8, "unit": "tokens/s"},
        ],
        "artifacts": [],
    });
    work.write("pins/kimi.json", pin.to_string());

    let r = show(&work, &remote, &["pins/kimi.json#steady decode"]);
    assert_eq!(r.code(), 0, "stderr:\n{}", r.stderr);
    let out = lines(&r.stdout);
    assert_header(&out[0], commit, "README.md");
    let cited = out
        .iter()
        .position(|l| l.starts_with("> 43 | "))
        .unwrap_or_else(|| panic!("no cited line in\n{}", r.stdout));
    let caret = &out[cited + 1];
    // The caret sits under `2.9` (not under the `~`) and names the claim.
    let value_column = out[cited].find("2.9").expect("the value on the line");
    assert_eq!(
        caret.find('^'),
        Some(value_column),
        "\n{}\n{caret}",
        out[cited]
    );
    assert_eq!(
        caret.as_str(),
        format!("     | {}^^^ claimed 2.9", " ".repeat(value_column - 7))
    );
    // Context lines are unmarked and carry no caret.
    assert_eq!(out.len(), 1 + 7 + 1, "{}", r.stdout);
    assert_eq!(out.iter().filter(|l| l.contains('^')).count(), 1);

    // The label of the other claim marks its own value, on its own line.
    let r = show(&work, &remote, &["pins/kimi.json#8K prefill", "-C", "0"]);
    assert_eq!(r.code(), 0, "stderr:\n{}", r.stderr);
    let out = lines(&r.stdout);
    assert_eq!(out[1], "> 44 | | 8K prefill | 79.6 |");
    assert_eq!(
        out[2],
        format!("     | {}^^^^ claimed 79.6", " ".repeat(15))
    );
    assert_eq!(out.len(), 3, "{}", r.stdout);

    // A claim whose value is not on its cited line: no caret, and it says so.
    let r = show(&work, &remote, &["pins/kimi.json#misplaced", "-C", "0"]);
    assert_eq!(r.code(), 0, "stderr:\n{}", r.stderr);
    let out = lines(&r.stdout);
    assert_eq!(out[1], "> 44 | | 8K prefill | 79.6 |");
    assert_eq!(
        out[2..],
        ["claim `misplaced` (2.9) is not on the cited line(s)"]
    );

    // A look-alike on the cited line is marked with why it is not the figure.
    let r = show(&work, &remote, &["pins/kimi.json#look-alike", "-C", "0"]);
    assert_eq!(r.code(), 0, "stderr:\n{}", r.stderr);
    let out = lines(&r.stdout);
    assert_eq!(out[1], "> 44 | | 8K prefill | 79.6 |");
    assert_eq!(
        out[2],
        format!(
            "     | {}^ not the figure: `8` stands in column `workload`; the table gives tokens/s in another column",
            " ".repeat(2)
        )
    );
    assert_eq!(out[3], "claim `look-alike` (8) is not on the cited line(s)");
}

#[test]
fn context_zero_prints_only_the_cited_line() {
    let (remote, commit) = Remote::seed();
    let work = Scratch::new();
    let url = format!("{}#L83", remote.blob_url(commit, "README.md"));
    let r = show(&work, &remote, &[&url, "-C", "0"]);
    assert_eq!(r.code(), 0, "stderr:\n{}", r.stderr);
    let out = lines(&r.stdout);
    assert_eq!(out.len(), 2, "{}", r.stdout);
    assert_header(&out[0], commit, "README.md");
    assert_eq!(
        out[1],
        "> 83 | HumanEval (after retrying 4 timeouts): 18/20 (90%)"
    );

    let r = show(&work, &remote, &[&url, "--context", "1"]);
    assert_eq!(lines(&r.stdout)[1..], readme_listing(82, 84, &[83])[..]);
}

#[test]
fn range_target_marks_every_cited_line() {
    let (remote, commit) = Remote::seed();
    let work = Scratch::new();
    let url = format!("{}#L3-L4", remote.blob_url(commit, "README.md"));
    let r = show(&work, &remote, &[&url]);
    assert_eq!(r.code(), 0, "stderr:\n{}", r.stderr);
    let out = lines(&r.stdout);
    assert_header(&out[0], commit, "README.md");
    // Three lines of context before (clamped at line 1) and after.
    assert_eq!(out[1..], readme_listing(1, 7, &[3, 4])[..], "{}", r.stdout);

    let r = show(&work, &remote, &[&url, "-C", "0"]);
    assert_eq!(lines(&r.stdout)[1..], readme_listing(3, 4, &[3, 4])[..]);
    // GitHub also writes the range `#L3-4`.
    let short_form = format!("{}#L3-4", remote.blob_url(commit, "README.md"));
    let r = show(&work, &remote, &[&short_form, "-C", "0"]);
    assert_eq!(r.code(), 0, "stderr:\n{}", r.stderr);
    assert_eq!(lines(&r.stdout)[1..], readme_listing(3, 4, &[3, 4])[..]);
}

// ---------------------------------------------------------------------------
// --history: a small `notes.md` whose line 3 carries the figure.

const NOTES_REPO: &str = "bench-lab/notes";
const NOTES: &str = "# Decode notes\n\ndecode: 2.9 tok/s\n\nMeasured with llama-bench.\n";

/// `YYYY-MM-DD` of a commit made `days` after the seed's commit time.
fn date(days: i64) -> String {
    // 2026-08-07 + days, within August.
    format!("2026-08-{:02}", 7 + days)
}

fn notes_url(remote: &Remote, commit: Oid) -> String {
    format!("{}#L3", remote.blob_url(commit, "notes.md"))
}

/// A served `bench-lab/notes` with [`NOTES`] committed at the seed's commit
/// time; returns the remote and that (pinned) commit.
fn notes_remote() -> (Remote, Oid) {
    let remote = Remote::new(NOTES_REPO);
    let pinned = remote
        .repo()
        .commit(&[("notes.md", NOTES)], "Decode notes", SEED_COMMIT_TIME);
    (remote, pinned)
}

/// The heading row of `commit` in the history: short id, date (`days` after
/// the seed's), the fixture's author and the subject.
fn row(commit: Oid, days: i64, subject: &str) -> String {
    format!("  {} {} Fixture: {subject}", short(commit), date(days))
}

/// `show NOTES_URL --history` of `pinned`, which must succeed.
fn show_history(work: &Scratch, remote: &Remote, pinned: Oid) -> Run {
    let r = show(work, remote, &[&notes_url(remote, pinned), "--history"]);
    assert_eq!(r.code(), 0, "stderr:\n{}", r.stderr);
    r
}

#[test]
fn history_lists_each_commit_that_edited_the_line_oldest_first() {
    let (remote, pinned) = notes_remote();
    let repo = remote.repo();
    let first = repo.commit(
        &[("notes.md", NOTES.replace("2.9 tok/s", "3.0 tok/s"))],
        "Re-measure decode after the driver update",
        SEED_COMMIT_TIME + DAY,
    );
    // Touches another file only: not part of the line's history.
    let unrelated = repo.commit(
        &[("ci.yml", "on: push\n")],
        "Add CI",
        SEED_COMMIT_TIME + 2 * DAY,
    );
    let second = repo.commit(
        &[(
            "notes.md",
            NOTES.replace("2.9 tok/s", "3.1 tok/s (driver 580)"),
        )],
        "Correct the decode figure",
        SEED_COMMIT_TIME + 3 * DAY,
    );
    let head = repo.commit(
        &[("ci.yml", "on: [push, pull_request]\n")],
        "Run CI on pull requests",
        SEED_COMMIT_TIME + 4 * DAY,
    );
    let work = Scratch::new();
    let r = show_history(&work, &remote, pinned);
    // The cited line at the pin comes first, as without --history.
    assert!(
        r.stdout.contains("> 3 | decode: 2.9 tok/s\n"),
        "{}",
        r.stdout
    );
    assert_eq!(
        history_part(&r.stdout),
        [
            history_heading("L3", pinned, head),
            row(pinned, 0, "Decode notes (the pin)"),
            "      L3 as pinned: decode: 2.9 tok/s".to_string(),
            row(first, 1, "Re-measure decode after the driver update"),
            "      L3 edited: decode: 3.0 tok/s".to_string(),
            row(second, 3, "Correct the decode figure"),
            "      L3 edited: decode: 3.1 tok/s (driver 580)".to_string(),
            format!("at the head {}:", short(head)),
            "  L3 is now L3: decode: [-2.9-]{+3.1+} tok/s{+ (driver 580)+}".to_string(),
        ],
        "{}",
        r.stdout
    );
    assert!(!r.stdout.contains(&short(unrelated)));
}

#[test]
fn history_follows_a_line_that_lines_inserted_above_moved() {
    let (remote, pinned) = notes_remote();
    let repo = remote.repo();
    let moved = NOTES.replace(
        "# Decode notes\n",
        "# Decode notes\n\nAll figures are medians of ten runs.\n",
    );
    let insert = repo.commit(
        &[("notes.md", moved.as_str())],
        "Say how figures are aggregated",
        SEED_COMMIT_TIME + DAY,
    );
    let work = Scratch::new();
    let r = show_history(&work, &remote, pinned);
    // The line moved from 3 to 5, its text unchanged.
    assert_eq!(
        history_part(&r.stdout),
        [
            history_heading("L3", pinned, insert),
            row(pinned, 0, "Decode notes (the pin)"),
            "      L3 as pinned: decode: 2.9 tok/s".to_string(),
            row(insert, 1, "Say how figures are aggregated"),
            "      L5 as pinned: decode: 2.9 tok/s".to_string(),
            format!("at the head {}:", short(insert)),
            "  L3 is now L5: decode: 2.9 tok/s".to_string(),
        ],
        "{}",
        r.stdout
    );

    // A later edit of the moved line is reported at its new number.
    let edit = repo.commit(
        &[("notes.md", moved.replace("2.9 tok/s", "3.0 tok/s"))],
        "Re-measure decode",
        SEED_COMMIT_TIME + 2 * DAY,
    );
    let r = show_history(&work, &remote, pinned);
    let history = history_part(&r.stdout);
    assert_eq!(
        history,
        [
            history_heading("L3", pinned, edit),
            row(pinned, 0, "Decode notes (the pin)"),
            "      L3 as pinned: decode: 2.9 tok/s".to_string(),
            row(insert, 1, "Say how figures are aggregated"),
            "      L5 as pinned: decode: 2.9 tok/s".to_string(),
            row(edit, 2, "Re-measure decode"),
            "      L5 edited: decode: 3.0 tok/s".to_string(),
            format!("at the head {}:", short(edit)),
            "  L3 is now L5: decode: [-2.9-]{+3.0+} tok/s".to_string(),
        ],
        "{}",
        r.stdout
    );
}

#[test]
fn history_says_when_the_line_was_removed() {
    let (remote, pinned) = notes_remote();
    let repo = remote.repo();
    let removed = repo.commit(
        &[("notes.md", NOTES.replace("decode: 2.9 tok/s\n", ""))],
        "Drop the unreproducible decode figure",
        SEED_COMMIT_TIME + DAY,
    );
    let work = Scratch::new();
    let r = show_history(&work, &remote, pinned);
    assert_eq!(
        history_part(&r.stdout),
        [
            history_heading("L3", pinned, removed),
            row(pinned, 0, "Decode notes (the pin)"),
            "      L3 as pinned: decode: 2.9 tok/s".to_string(),
            row(removed, 1, "Drop the unreproducible decode figure"),
            "      L3 is gone".to_string(),
            format!("at the head {}:", short(removed)),
            "  L3 was removed (was: decode: 2.9 tok/s)".to_string(),
        ],
        "{}",
        r.stdout
    );
}

/// Like `seed_superseded_figure_right_below_inserted_rows` in `drift`: the
/// edited line is the last line of the changed block, and history must follow
/// it, not the first inserted line.
#[test]
fn history_follows_an_edited_line_past_lines_inserted_right_above_it() {
    let (remote, pinned) = notes_remote();
    let repo = remote.repo();
    let edit = repo.commit(
        &[(
            "notes.md",
            NOTES.replace(
                "decode: 2.9 tok/s\n",
                "cold decode: 1.1 tok/s\nwarm decode: 2.4 tok/s\ndecode: 3.1 tok/s\n",
            ),
        )],
        "Split decode into cold, warm and steady",
        SEED_COMMIT_TIME + DAY,
    );
    let work = Scratch::new();
    let r = show_history(&work, &remote, pinned);
    assert_eq!(
        history_part(&r.stdout),
        [
            history_heading("L3", pinned, edit),
            row(pinned, 0, "Decode notes (the pin)"),
            "      L3 as pinned: decode: 2.9 tok/s".to_string(),
            row(edit, 1, "Split decode into cold, warm and steady"),
            "      L5 edited: decode: 3.1 tok/s".to_string(),
            format!("at the head {}:", short(edit)),
            "  L3 is now L5: decode: [-2.9-]{+3.1+} tok/s".to_string(),
        ],
        "{}",
        r.stdout
    );
}

/// `pins/notes.json` with the claim `decode` (2.9 on L3 of `notes.md` at
/// `pinned`), for `show 'pins/notes.json#decode' --history`.
fn notes_claim(work: &Scratch, remote: &Remote, pinned: Oid) {
    let pin = json!({
        "schema": "pinaudit/pins/v1",
        "id": "notes",
        "sources": [{
            "id": "notes",
            "url": remote.blob_url(pinned, "notes.md"),
            "repository": remote.github(),
            "revision": pinned.to_string(),
            "path": "notes.md",
        }],
        "claims": [{"label": "decode", "source": "notes", "lines": [3, 3], "value": 2.9}],
        "artifacts": [],
    });
    work.write("pins/notes.json", pin.to_string());
}

/// A claim's history says, commit by commit, whether the followed line still
/// carries the value and, when not, the number in its place.
#[test]
fn history_of_a_claim_says_whether_each_commit_kept_the_value() {
    let (remote, pinned) = notes_remote();
    let repo = remote.repo();
    let moved = NOTES.replace(
        "# Decode notes\n",
        "# Decode notes\n\nMedians of ten runs.\n",
    );
    let insert = repo.commit(
        &[("notes.md", moved.as_str())],
        "Say how",
        SEED_COMMIT_TIME + DAY,
    );
    let edit = repo.commit(
        &[("notes.md", moved.replace("2.9 tok/s", "3.0 tok/s"))],
        "Re-measure decode",
        SEED_COMMIT_TIME + 2 * DAY,
    );
    let work = Scratch::new();
    notes_claim(&work, &remote, pinned);
    let r = show(&work, &remote, &["pins/notes.json#decode", "--history"]);
    assert_eq!(r.code(), 0, "stderr:\n{}", r.stderr);
    assert_eq!(
        history_part(&r.stdout),
        [
            history_heading("L3", pinned, edit),
            row(pinned, 0, "Decode notes (the pin)"),
            "      L3 carries 2.9: decode: 2.9 tok/s".to_string(),
            row(insert, 1, "Say how"),
            "      L5 carries 2.9: decode: 2.9 tok/s".to_string(),
            row(edit, 2, "Re-measure decode"),
            "      L5 no longer carries 2.9: now 3.0: decode: 3.0 tok/s".to_string(),
            format!("at the head {}:", short(edit)),
            "  L3 is now L5: decode: [-2.9-]{+3.0+} tok/s".to_string(),
        ],
        "{}",
        r.stdout
    );
    // Not a terminal: no colour.
    assert!(!r.stdout.contains('\u{1b}'), "{:?}", r.stdout);
}

/// `--history --format html`: one self-contained page, the figure's value per
/// commit as a chart (a circle while the line carries it, a square after), the
/// timeline as a table, the word diff as `<del>`/`<ins>`; the repository's text,
/// a hostile commit subject among it, stays text. The text timeline is unchanged.
#[test]
fn history_as_html_draws_the_value_per_commit() {
    use crate::proof_sheet::{parse_self_contained, sel};
    let (remote, pinned) = notes_remote();
    let repo = remote.repo();
    let edit = repo.commit(
        &[("notes.md", NOTES.replace("2.9 tok/s", "3.0 tok/s"))],
        "Re-measure <img src=x> \u{202e}decode",
        SEED_COMMIT_TIME + DAY,
    );
    let work = Scratch::new();
    notes_claim(&work, &remote, pinned);
    let r = show(
        &work,
        &remote,
        &["pins/notes.json#decode", "--history", "--format", "html"],
    );
    assert_eq!(r.code(), 0, "stderr:\n{}", r.stderr);
    let doc = parse_self_contained(&r.stdout);
    assert_eq!(doc.select(&sel("svg")).count(), 1, "{}", r.stdout);
    // The pin carries the value (a circle), the edit no longer does (a square).
    assert_eq!(doc.select(&sel("svg circle")).count(), 1, "{}", r.stdout);
    assert_eq!(doc.select(&sel("svg rect")).count(), 1, "{}", r.stdout);
    let rows: Vec<String> = doc
        .select(&sel("tbody tr"))
        .map(|e| e.text().collect::<String>())
        .collect();
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert!(rows[0].contains("carries 2.9"), "{rows:?}");
    assert!(
        rows[1].contains("no longer carries 2.9: now 3.0"),
        "{rows:?}"
    );
    assert!(rows[1].contains(&short(edit)), "{rows:?}");
    // The hostile subject is text, its bidi control made visible.
    assert!(rows[1].contains("<img src=x>"), "{rows:?}");
    assert!(!r.stdout.contains('\u{202e}'));
    let del: Vec<String> = doc.select(&sel("del")).map(|e| e.inner_html()).collect();
    let ins: Vec<String> = doc.select(&sel("ins")).map(|e| e.inner_html()).collect();
    assert_eq!(
        (del, ins),
        (vec!["2.9".to_string()], vec!["3.0".to_string()])
    );
    // Without --history there is nothing to draw: a usage error.
    let bare = show(
        &work,
        &remote,
        &["pins/notes.json#decode", "--format", "html"],
    );
    assert_eq!(bare.code(), 3, "{}", bare.stderr);
}

/// The figure's line leaves `notes.md` and the same commit writes it into
/// `DETAILS.md`: the history follows it there, and on through that file.
#[test]
fn history_follows_the_value_into_another_file() {
    let (remote, pinned) = notes_remote();
    let repo = remote.repo();
    let details = "# Details\n\nSetup: one node.\n\ndecode: 2.9 tok/s (steady)\n";
    let split = repo.commit(
        &[
            (
                "notes.md",
                NOTES.replace("decode: 2.9 tok/s\n", "See DETAILS.md.\n"),
            ),
            ("DETAILS.md", details.to_string()),
        ],
        "Move the figures to DETAILS.md",
        SEED_COMMIT_TIME + DAY,
    );
    let edit = repo.commit(
        &[("DETAILS.md", details.replace("2.9", "3.2"))],
        "Re-measure decode",
        SEED_COMMIT_TIME + 2 * DAY,
    );
    // A later commit of notes.md alone is no longer the figure's history.
    let unrelated = repo.commit(
        &[(
            "notes.md",
            "# Decode notes\n\nSee DETAILS.md for figures.\n",
        )],
        "Reword",
        SEED_COMMIT_TIME + 3 * DAY,
    );
    let work = Scratch::new();
    notes_claim(&work, &remote, pinned);
    let r = show(&work, &remote, &["pins/notes.json#decode", "--history"]);
    assert_eq!(r.code(), 0, "stderr:\n{}", r.stderr);
    assert_eq!(
        history_part(&r.stdout),
        [
            history_heading("L3", pinned, unrelated),
            row(pinned, 0, "Decode notes (the pin)"),
            "      L3 carries 2.9: decode: 2.9 tok/s".to_string(),
            row(split, 1, "Move the figures to DETAILS.md"),
            "      DETAILS.md:L5 carries 2.9: decode: 2.9 tok/s (steady)".to_string(),
            row(edit, 2, "Re-measure decode"),
            "      DETAILS.md:L5 no longer carries 2.9: now 3.2: decode: 3.2 tok/s (steady)"
                .to_string(),
            format!("at the head {}:", short(unrelated)),
            "  L3 is now DETAILS.md:L5: decode: [-2.9-]{+3.2+} tok/s{+ (steady)+}".to_string(),
        ],
        "{}",
        r.stdout
    );
}

/// What the repository says reaches the terminal escaped: a control sequence
/// in a line, a subject or an author name cannot drive it.
#[test]
fn history_escapes_what_the_repository_wrote() {
    let (remote, pinned) = notes_remote();
    let head = remote.repo().commit(
        &[(
            "notes.md",
            NOTES.replace("2.9 tok/s", "3.0 \u{1b}[2J tok/s"),
        )],
        "Re-measure \u{1b}]8;;https://evil.invalid\u{7}",
        SEED_COMMIT_TIME + DAY,
    );
    let work = Scratch::new();
    let r = show_history(&work, &remote, pinned);
    assert!(!r.stdout.contains('\u{1b}'), "{:?}", r.stdout);
    assert!(!r.stdout.contains('\u{7}'), "{:?}", r.stdout);
    let history = history_part(&r.stdout);
    assert_eq!(
        history[3],
        row(head, 1, "Re-measure \\u{1b}]8;;https://evil.invalid\\u{7}"),
        "{}",
        r.stdout
    );
    assert_eq!(
        history.last().unwrap(),
        "  L3 is now L3: decode: [-2.9-]{+3.0 \\u{1b}[2J+} tok/s",
        "{}",
        r.stdout
    );
}

// ---------------------------------------------------------------------------
// Errors: exit 2, `error: …` and a `hint: …` on stderr, nothing on stdout.

/// `show` with no server at all (`--rewrite` to a port nobody listens on).
fn show_unserved(work: &Scratch, args: &[&str]) -> Run {
    let port = crate::common::free_port();
    let mut cmd = work.cached("show");
    cmd.args(args).args([
        "--rewrite",
        &format!("https://github.com/=git://127.0.0.1:{port}/"),
        "--timeout",
        "5",
    ]);
    run(&mut cmd)
}

#[test]
fn branch_url_is_not_pinned() {
    let work = Scratch::new();
    let r = show_unserved(
        &work,
        &["https://github.com/bench-lab/notes/blob/main/notes.md#L3"],
    );
    assert_error(&r, "not pinned", "permalink");
    assert!(r.stderr.contains("`main`"), "{}", r.stderr);
    // Refused before any fetch: nothing was cached.
    assert!(!work.path().join("cache").join("git").exists());
}

#[test]
fn url_without_a_line_anchor_is_refused() {
    let work = Scratch::new();
    let url = format!(
        "https://github.com/bench-lab/notes/blob/{}/notes.md",
        SEED_REV
    );
    let r = show_unserved(&work, &[&url]);
    assert_error(&r, "has no line anchor", "#L43");
}

#[test]
fn unknown_label_lists_the_labels() {
    let work = Scratch::new();
    let pin = json!({
        "schema": "pinaudit/pins/v1",
        "id": "notes",
        "sources": [{
            "id": "notes",
            "url": format!("https://github.com/bench-lab/notes/blob/{}/notes.md",
                           SEED_REV),
        }],
        "claims": [
            {"label": "decode", "source": "notes", "lines": [3, 3], "value": 2.9},
            {"label": "8K prefill", "source": "notes", "lines": [4, 4], "value": 79.6},
        ],
        "artifacts": [],
    });
    work.write("pins/notes.json", pin.to_string());
    let r = show_unserved(&work, &["pins/notes.json#unknown"]);
    assert_error(&r, "no claim labelled `unknown`", "decode, 8K prefill");
}

#[test]
fn offline_with_an_empty_cache_says_how_to_fill_it() {
    let work = Scratch::new();
    let url = format!(
        "https://github.com/bench-lab/notes/blob/{}/notes.md#L3",
        SEED_REV
    );
    let r = show_unserved(&work, &[&url, "--offline"]);
    assert_error(&r, "not in the cache", "without --offline");
}

#[test]
fn offline_after_a_networked_run_needs_no_server() {
    let (mut remote, pinned) = notes_remote();
    let head = remote.repo().commit(
        &[("notes.md", NOTES.replace("2.9", "3.0"))],
        "Re-measure decode",
        SEED_COMMIT_TIME + DAY,
    );
    let work = Scratch::new();
    let url = notes_url(&remote, pinned);
    let online = show(&work, &remote, &[&url, "--history"]);
    assert_eq!(online.code(), 0, "stderr:\n{}", online.stderr);
    assert!(online.stdout.contains(&short(head)), "{}", online.stdout);

    remote.daemon_mut().stop();
    let offline = show(&work, &remote, &[&url, "--history", "--offline"]);
    assert_eq!(offline.code(), 0, "stderr:\n{}", offline.stderr);
    // The same listing and history, from the cache alone.
    assert_eq!(offline.stdout, online.stdout);
}

// ---------------------------------------------------------------------------
// Whole output.

/// The served seed after a later commit moved the cited table and corrected
/// the 8K prefill figure: the listing of two cited lines with one line of
/// context, then their history to the head. Commits and dates are the
/// fixture's, fixed; the port of the daemon never reaches the output, but is
/// replaced in case it does.
#[test]
fn history_of_the_drifted_seed() {
    let (remote, pinned, _head) = Remote::seed_drifted();
    let work = Scratch::new();
    let url = format!("{}#L43-L44", remote.blob_url(pinned, "README.md"));
    let r = show(&work, &remote, &[&url, "-C", "1", "--history"]);
    assert_eq!(r.code(), 0, "stderr:\n{}", r.stderr);
    insta::assert_snapshot!(remote.redact_port(&work.redact(&r.stdout)), @r"
    README.md @ 5092790 (https://github.com/chishiki37/kimi-k3-iq1s-3node-dgx-spark.git)
      42 | |---|---|
    > 43 | | steady decode | ~2.9 tok/s |
    > 44 | | 8K prefill | 79.6 |
      45 | | 32K prefill | 43.9 |

    history of L43-L44 from 5092790 to the head 73f4619:
      5092790 2026-08-07 Fixture: Benchmarks on three Sparks (the pin)
          L43 as pinned: | steady decode | ~2.9 tok/s |
          L44 as pinned: | 8K prefill | 79.6 |
      73f4619 2026-08-20 Fixture: Re-measure 8K prefill
          L45 as pinned: | steady decode | ~2.9 tok/s |
          L46 edited: | 8K prefill | 81.2 |
    at the head 73f4619:
      L43 is now L45: | steady decode | ~2.9 tok/s |
      L44 is now L46: | 8K prefill | [-79.6-]{+81.2+} |
    ");
}
