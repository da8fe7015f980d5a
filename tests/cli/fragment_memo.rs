//! The whole-record report memo (`CACHE/fragments.store`): an unchanged record
//! file on unchanged refs is neither read, checked nor rendered again (no
//! other store is even asked), and the report is the same byte for byte as a
//! run that checks everything: in every streamed format, for any `--jobs`,
//! offline, after an edit, a moved branch, a duplicate id appearing or going,
//! under another policy or other render options, and whatever the store holds.

use crate::common::forge::T0;
use crate::common::run::Run;
use crate::record_memo::{entries, remove, signed, Setup, KEY};

/// Every store of the cache.
const STORES: [&str; 6] = [
    "blobs.store",
    "drift.store",
    "variants.store",
    "checks.store",
    "records.store",
    "fragments.store",
];

impl Setup {
    /// `audit --format FORMAT` of the pin files, the stores as they are.
    fn run_format(&self, format: &str, extra: &[&str]) -> Run {
        let mut args = vec!["--format", format];
        args.extend_from_slice(extra);
        self.run_as(&args, &[])
    }

    /// The same run with every store removed first: everything checked.
    fn fresh_format(&self, format: &str, extra: &[&str]) -> Run {
        remove(&self.ws.cache(), &STORES);
        self.run_format(format, extra)
    }

    /// `audit` with `args` (a `--format` among them or JSON) of `files` (the
    /// pin files when empty).
    fn run_as(&self, args: &[&str], files: &[&str]) -> Run {
        let files: Vec<&str> = match files.is_empty() {
            true => self.files.iter().map(String::as_str).collect(),
            false => files.to_vec(),
        };
        let mut all = vec!["audit", "--cache", "cache", "--timeout", "10"];
        if !args.contains(&"--format") {
            all.extend(["--format", "json"]);
        }
        all.extend_from_slice(args);
        all.extend(["--rewrite", self.rewrite()]);
        all.extend(files);
        self.ws.run(all)
    }

    fn fragments(&self) -> std::path::PathBuf {
        self.ws.cache().join("fragments.store")
    }

    /// Whether a run asked any store but the fragments' (with the others
    /// removed before it, it writes back those it used).
    fn asked_other_stores(&self) -> bool {
        STORES[..5].iter().any(|s| self.ws.cache().join(s).exists())
    }
}

fn same(a: &Run, b: &Run, what: &str) {
    assert_eq!(a.stdout, b.stdout, "{what}");
    assert_eq!(a.code(), b.code(), "{what}: exit status");
}

#[test]
fn every_streamed_format_is_the_same_from_the_memo() {
    let s = Setup::new();
    for format in ["json", "text", "markdown", "sarif", "github"] {
        let fresh = s.fresh_format(format, &["--jobs", "2"]);
        assert!(s.fragments().is_file(), "{format}: fragments kept");
        assert!(!fresh.stdout.is_empty(), "{format}: a report");
        for jobs in ["1", "4"] {
            remove(&s.ws.cache(), &STORES[..5]);
            let warm = s.run_format(format, &["--jobs", jobs]);
            same(
                &warm,
                &fresh,
                &format!("{format}, --jobs {jobs}, from the memo"),
            );
            assert!(
                !s.asked_other_stores(),
                "{format}: every record answered whole, no other store asked"
            );
        }
        remove(&s.ws.cache(), &STORES[..5]);
        let offline = s.run_format(format, &["--offline"]);
        same(&offline, &fresh, &format!("{format}, offline"));
        assert!(!s.asked_other_stores(), "{format} offline: answered whole");
    }
    // One format's fragments are not another's: each run above checked
    // afresh, and the JSON ones are still there beside the others.
    let json = s.fresh_format("json", &[]);
    let _text = s.run_format("text", &[]);
    remove(&s.ws.cache(), &STORES[..5]);
    same(&s.run_format("json", &[]), &json, "json after text");
}

#[test]
fn an_edited_record_or_a_moved_branch_is_checked_again() {
    let s = Setup::new();
    let cold = s.fresh_format("json", &[]);
    same(&s.run_format("json", &[]), &cold, "warm");
    let kept = || entries(&std::fs::read(s.fragments()).expect("fragments.store")).1;
    let before = kept();
    assert_eq!(before.len(), s.files.len(), "an entry a record");
    // An edit to one record: a claim's value changes.
    let file = s.ws.path().join(&s.files[0]);
    let text = std::fs::read_to_string(&file).expect("pin file");
    assert!(text.contains("2.9"), "{text}");
    std::fs::write(&file, text.replacen("2.9", "2.7", 1)).expect("edit");
    let edited = s.run_format("json", &[]);
    assert!(edited.stdout != cold.stdout, "the edit shows");
    // The edited record's entry replaces the one of its old bytes (the
    // others are kept as they were): superseded entries do not pile up.
    let after = kept();
    assert_eq!(after.len(), before.len(), "one entry a record still");
    let same_entries = after.iter().filter(|e| before.contains(e)).count();
    assert_eq!(same_entries, before.len() - 1, "only the edited one is new");
    same(
        &edited,
        &s.fresh_format("json", &[]),
        "edited, as checked afresh",
    );
    // A new commit on the cited branch moves its refs: nothing is answered
    // from before.
    let warm = s.run_format("json", &[]);
    same(&warm, &edited, "warm again");
    let repo = s.forge.repo("acme/speed");
    let table = "# Results\n\n| phase | rate |\n|---|---|\n| decode | 4.2 tokens/s |\n| warmup | 1.5 tokens/s |\n| prefill | 80.1 tokens/s |\n| batch | 13.5 tokens/s |\n";
    repo.commit(&[("README.md", table)], "four", T0 + 180);
    let moved = s.run_format("json", &[]);
    assert!(
        moved.stdout != edited.stdout,
        "the drift is against the new head"
    );
    same(
        &moved,
        &s.fresh_format("json", &[]),
        "moved, as checked afresh",
    );
    remove(&s.ws.cache(), &STORES[..5]);
    same(&s.run_format("json", &[]), &moved, "and kept again");
    assert!(!s.asked_other_stores(), "answered whole");
}

#[test]
fn a_duplicate_id_is_never_taken_from_the_memo() {
    let s = Setup::new();
    let first = s.files[0].clone();
    let copy = "pins/copy.json";
    std::fs::copy(s.ws.path().join(&first), s.ws.path().join(copy)).expect("copy");
    let duplicate = |run: &Run| {
        run.with_code("invalid-record").iter().any(|f| {
            f["message"]
                .as_str()
                .unwrap_or("")
                .contains("also the id of")
        })
    };
    // The copy alone: no duplicate, its fragment kept.
    remove(&s.ws.cache(), &STORES);
    let alone = s.run_as(&[], &[copy]);
    assert!(!duplicate(&alone), "alone");
    // Beside the record it copies, it is a duplicate, whatever the memo holds.
    let both = s.run_as(&[], &[&first, copy]);
    assert!(duplicate(&both), "beside the first");
    remove(&s.ws.cache(), &STORES);
    same(&s.run_as(&[], &[&first, copy]), &both, "as checked afresh");
    // And alone again it is not (nothing of the duplicate was kept).
    let again = s.run_as(&[], &[copy]);
    same(&again, &alone, "alone again");
}

#[test]
fn policy_and_render_options_have_their_own_entries() {
    let s = Setup::new();
    let cases: [(&str, &[&str]); 4] = [
        ("json", &["--shard", "1/2"]),
        ("json", &["--shard", "2/2"]),
        ("text", &["--min-severity", "error"]),
        ("text", &["--color", "always"]),
    ];
    let _plain = s.fresh_format("json", &[]);
    for (format, extra) in cases {
        let warm = s.run_format(format, extra);
        let fresh = s.fresh_format(format, extra);
        same(&warm, &fresh, &format!("{format} {extra:?}"));
        same(
            &s.run_format(format, extra),
            &fresh,
            &format!("{format} {extra:?}, warm"),
        );
    }
    // A severity override and an ignore in the configuration.
    let plain = s.fresh_format("json", &[]);
    let _ = s.run_format("json", &[]);
    s.ws.write(
        "pinaudit.toml",
        "[severity]\nupstream-changed = \"error\"\n\n[[ignore]]\ncode = \"hash-mismatch\"\nrecord = \"rec0\"\nreason = \"checked by hand\"\n",
    );
    let configured = s.run_format("json", &[]);
    assert!(configured.stdout != plain.stdout, "the policy shows");
    same(
        &configured,
        &s.fresh_format("json", &[]),
        "configured, as checked afresh",
    );
    same(&s.run_format("json", &[]), &configured, "configured, warm");
    std::fs::remove_file(s.ws.path().join("pinaudit.toml")).expect("config");
    same(
        &s.run_format("json", &[]),
        &plain,
        "without the configuration again",
    );
}

#[test]
fn a_damaged_or_poisoned_fragment_store_reads_as_empty() {
    let s = Setup::new();
    let fresh = s.fresh_format("json", &[]);
    let written = std::fs::read(s.fragments()).expect("fragments.store");
    let (magic, sound) = entries(&written);
    assert_eq!(sound.len(), 2, "one entry per record");
    let mut flipped = written.clone();
    let mid = flipped.len() / 2;
    flipped[mid] ^= 0x55;
    // Well signed but nonsense: cut short, or with bytes after the end.
    let cut: Vec<_> = sound
        .iter()
        .map(|(k, v)| (*k, v[..v.len() - 1].to_vec()))
        .collect();
    let lengthened: Vec<_> = sound
        .iter()
        .map(|(k, v)| {
            let mut v = v.clone();
            v.push(0);
            (*k, v)
        })
        .collect();
    let bad = [
        ("damaged", flipped),
        ("truncated", written[..written.len() / 2].to_vec()),
        ("under another key", signed(b"not the key", &magic, &sound)),
        ("cut short", signed(KEY, &magic, &cut)),
        ("lengthened", signed(KEY, &magic, &lengthened)),
    ];
    for (what, bytes) in bad {
        remove(&s.ws.cache(), &STORES[..5]);
        std::fs::write(s.fragments(), &bytes).expect("write store");
        let run = s.run_format("json", &[]);
        same(&run, &fresh, &format!("fragments.store {what}"));
        let again = s.run_format("json", &[]);
        same(&again, &fresh, &format!("fragments.store {what}, rebuilt"));
    }
}

/// Files found while walking a directory are looked up as they are found: a
/// record is answered whole, a file that carries none is still skipped, and
/// the report is the one a run that checks everything gives.
#[test]
fn a_walked_directory_is_answered_whole() {
    let s = Setup::new();
    s.ws.write("pins/package.json", r#"{"name": "not a record"}"#);
    remove(&s.ws.cache(), &STORES);
    let fresh = s.run_as(&[], &["pins"]);
    assert_eq!(
        fresh.report()["summary"]["records"],
        2,
        "two records, the package file skipped"
    );
    remove(&s.ws.cache(), &STORES[..5]);
    let warm = s.run_as(&[], &["pins"]);
    same(&warm, &fresh, "walked, from the memo");
    assert!(!s.asked_other_stores(), "answered whole");
    // Named or walked, each has its own entries (what is skipped differs).
    remove(&s.ws.cache(), &STORES[..5]);
    s.run_as(&[], &[&s.files[0], &s.files[1]]);
    assert!(
        s.asked_other_stores(),
        "named: checked, not taken from the walk's"
    );
    same(&s.run_as(&[], &["pins"]), &fresh, "walked again");
}

/// Where the size that a kept fragment's first packed part names lies in
/// `value` (an entry of `fragments.store`): after the count of its two
/// sections and the part's length, the size, then an LZ4 block that
/// decompresses to a record's JSON.
fn first_part_size_at(value: &[u8]) -> usize {
    let word =
        |at: usize| u32::from_le_bytes(value[at..at + 4].try_into().expect("4 bytes")) as usize;
    (0..value.len().saturating_sub(12))
        .find(|&i| {
            value[i..i + 4] == [2, 0, 0, 0]
                && value.get(i + 8..i + 8 + word(i + 4)).is_some_and(|packed| {
                    packed.len() > 4
                        && lz4_flex::block::decompress(&packed[4..], word(i + 8)).is_ok_and(
                            |plain| {
                                plain.len() == word(i + 8)
                                    && String::from_utf8_lossy(&plain).contains("\"id\"")
                            },
                        )
                })
        })
        .map(|i| i + 8)
        .expect("a packed part in the entry")
}

/// A part kept whole that names a byte more than it decompresses to, in a
/// store signed as pinaudit signs its own (only a defect could make one): the
/// report is cut short with an error that says so and the run exits 2; the
/// store is removed, so the next run checks everything again and gives the
/// report a run that checks everything gives.
#[test]
fn a_kept_part_that_does_not_decompress_ends_the_run_and_the_store() {
    let s = Setup::new();
    let fresh = s.fresh_format("json", &[]);
    let written = std::fs::read(s.fragments()).expect("fragments.store");
    let (magic, sound) = entries(&written);
    let broken: Vec<_> = sound
        .iter()
        .map(|(k, v)| {
            let mut v = v.clone();
            let at = first_part_size_at(&v);
            let size = u32::from_le_bytes(v[at..at + 4].try_into().expect("size")) + 1;
            v[at..at + 4].copy_from_slice(&size.to_le_bytes());
            (*k, v)
        })
        .collect();
    std::fs::write(s.fragments(), signed(KEY, &magic, &broken)).expect("write store");
    let run = s.run_format("json", &[]);
    assert_eq!(run.code(), 2, "{}", run.stderr);
    assert!(run.stderr.contains("does not decompress"), "{}", run.stderr);
    assert!(run.stderr.contains("run the audit again"), "{}", run.stderr);
    assert!(!s.fragments().exists(), "the store is removed");
    same(&s.run_format("json", &[]), &fresh, "the run after");
    assert!(s.fragments().exists(), "kept anew");
}
