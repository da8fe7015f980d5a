//! The whole-record memo (`CACHE/records.store`), of runs that keep no report
//! fragments (here: runs with a baseline): an unchanged record on
//! unchanged refs is answered by a lookup, and the report is the same byte for
//! byte whatever the memo holds: nothing, a sound answer, a damaged, cut short
//! or forged file, answers that make no sense, answers of other options, or
//! answers from before a cited branch moved.

use std::path::Path;

use crate::common::forge::{to_daemon, Forge, T0};
use crate::common::scratch::Scratch;
use crate::common::{GitDaemon, Wants};
use crate::speed::corpus;

/// The other stores: a run answered from the record memo writes none of them.
const DOCUMENT_STORES: [&str; 4] = [
    "blobs.store",
    "drift.store",
    "variants.store",
    "checks.store",
];

pub(crate) const KEY: &[u8] = b"pinaudit tests";

/// A store entry: its key and value.
pub(crate) type Entry = ([u8; 32], Vec<u8>);

pub(crate) fn remove(cache: &Path, names: &[&str]) {
    for n in names {
        let _ = std::fs::remove_file(cache.join(n));
    }
}

/// The entries of a store file (magic line, then per entry a 32-byte key, a
/// length and the value), without checking its MAC.
pub(crate) fn entries(bytes: &[u8]) -> (Vec<u8>, Vec<Entry>) {
    let body = &bytes[..bytes.len() - 32];
    let magic_len = body.iter().position(|&b| b == b'\n').expect("magic") + 1;
    let mut rest = &body[magic_len..];
    let mut out = Vec::new();
    while !rest.is_empty() {
        let key: [u8; 32] = rest[..32].try_into().expect("key");
        let len = u32::from_le_bytes(rest[32..36].try_into().expect("len")) as usize;
        out.push((key, rest[36..36 + len].to_vec()));
        rest = &rest[36 + len..];
    }
    (body[..magic_len].to_vec(), out)
}

/// A store file of `entries`, signed under `key` as pinaudit signs its stores.
pub(crate) fn signed(key: &[u8], magic: &[u8], entries: &[Entry]) -> Vec<u8> {
    let mut body = Vec::new();
    for (k, v) in entries {
        body.extend_from_slice(k);
        body.extend_from_slice(&(v.len() as u32).to_le_bytes());
        body.extend_from_slice(v);
    }
    let tag = pinaudit::cache_key::CacheKey::from_secret(key).mac(&[magic, &body]);
    let mut out = magic.to_vec();
    out.extend_from_slice(&body);
    out.extend_from_slice(&tag);
    out
}

/// The corpus of the store tests, served by `git daemon`, and its pin files.
pub(crate) struct Setup {
    pub(crate) forge: Forge,
    _daemon: GitDaemon,
    rewrite: String,
    pub(crate) ws: Scratch,
    pub(crate) files: Vec<String>,
}

impl Setup {
    pub(crate) fn new() -> Setup {
        let forge = Forge::new();
        let pins = corpus(&forge);
        let daemon = GitDaemon::start(forge.path(), Wants::Default);
        let rewrite = to_daemon(&daemon);
        let ws = Scratch::new();
        let files = pins.iter().map(|p| ws.write_pin(p)).collect();
        Setup {
            forge,
            _daemon: daemon,
            rewrite,
            ws,
            files,
        }
    }

    /// A run of the record memo's: with a baseline (empty), so that records
    /// are not kept whole (`fragments.store`, which would answer first, and
    /// instead of the record memo).
    fn audit(&self, extra: &[&str]) -> crate::common::run::Run {
        let baseline = self.ws.empty_baseline();
        let mut args = vec!["--baseline", baseline.as_str()];
        args.extend_from_slice(extra);
        self.run(&args)
    }

    /// The `--rewrite` to the test's daemon.
    pub(crate) fn rewrite(&self) -> &str {
        &self.rewrite
    }

    /// A run with the stores as they are.
    pub(crate) fn run(&self, extra: &[&str]) -> crate::common::run::Run {
        let mut args: Vec<&str> = vec!["--rewrite", &self.rewrite];
        args.extend_from_slice(extra);
        args.extend(self.files.iter().map(String::as_str));
        self.ws.audit(args)
    }

    fn store(&self) -> std::path::PathBuf {
        self.ws.cache().join("records.store")
    }

    /// A run with the document stores removed, and whether it wrote
    /// `checks.store` again (it checked some record afresh).
    fn audit_checking(&self, extra: &[&str]) -> (crate::common::run::Run, bool) {
        remove(&self.ws.cache(), &DOCUMENT_STORES);
        let run = self.audit(extra);
        let checked = self.ws.cache().join("checks.store").is_file();
        (run, checked)
    }
}

#[test]
fn reports_are_identical_whatever_the_record_memo_holds() {
    let s = Setup::new();
    let cold = s.audit(&["--jobs", "1"]);
    let codes = cold.codes();
    for code in ["hash-mismatch", "upstream-changed", "value-superseded"] {
        assert!(codes.iter().any(|c| c == code), "{code} in {codes:?}");
    }
    let written = std::fs::read(s.store()).expect("records.store written");
    assert_eq!(entries(&written).1.len(), 2, "one entry per record");

    // A hit is a lookup: no record is checked, so no document store is written.
    for jobs in ["1", "4"] {
        let (warm, checked) = s.audit_checking(&["--jobs", jobs]);
        assert_eq!(warm.stdout, cold.stdout, "warm memo, --jobs {jobs}");
        assert!(!checked, "every record answered from the memo");
    }
    let (offline, checked) = s.audit_checking(&["--offline", "--jobs", "2"]);
    assert!(!checked, "offline on the stored refs: the same answers");
    assert_eq!(
        std::fs::read(s.store()).expect("store"),
        written,
        "unchanged"
    );
    // Which is what an offline run checking every record says.
    remove(&s.ws.cache(), &["records.store"]);
    let offline_fresh = s.audit(&["--offline", "--jobs", "2"]);
    assert_eq!(
        offline.stdout, offline_fresh.stdout,
        "offline, from the memo"
    );
    assert_eq!(offline.stdout, cold.stdout, "offline judges as online");
    assert_eq!(
        std::fs::read(s.store()).expect("store"),
        written,
        "rewritten"
    );

    // Damaged, cut short, forged (under another key, or with a plain checksum):
    // read as empty, every record checked again, the memo rebuilt.
    let (magic, sound) = entries(&written);
    let mut flipped = written.clone();
    let mid = flipped.len() / 2;
    flipped[mid] ^= 0x55;
    let mut plain = written[..written.len() - 32].to_vec();
    let check: [u8; 32] = {
        use sha2::Digest;
        sha2::Sha256::digest(&plain).into()
    };
    plain.extend_from_slice(&check);
    let bad: [(&str, Vec<u8>); 5] = [
        ("damaged", flipped),
        ("truncated", written[..written.len() / 2].to_vec()),
        ("empty", Vec::new()),
        (
            "forged under another key",
            signed(b"not the key", &magic, &sound),
        ),
        ("forged with a plain sha256", plain),
    ];
    for (what, bytes) in bad {
        std::fs::write(s.store(), &bytes).expect("write store");
        let (run, checked) = s.audit_checking(&["--jobs", "2"]);
        assert_eq!(run.stdout, cold.stdout, "records.store {what}");
        assert!(checked, "records.store {what}: checked afresh");
        assert_eq!(
            std::fs::read(s.store()).expect("store"),
            written,
            "records.store {what}: rebuilt"
        );
    }

    // Well signed but nonsense (a buggy or hostile writer holding the key):
    // an answer that does not decode, or does not fit its record, is dropped.
    let cut: Vec<Entry> = sound
        .iter()
        .map(|(k, v)| (*k, v[..v.len() - 1].to_vec()))
        .collect();
    let recounted: Vec<Entry> = sound
        .iter()
        .map(|(k, v)| {
            let mut v = v.clone();
            v[0] = v[0].wrapping_add(1);
            (*k, v)
        })
        .collect();
    for (what, poisoned) in [("cut short", cut), ("another source count", recounted)] {
        std::fs::write(s.store(), signed(KEY, &magic, &poisoned)).expect("poison");
        let (run, checked) = s.audit_checking(&["--jobs", "1"]);
        assert_eq!(run.stdout, cold.stdout, "answers {what}");
        assert!(checked, "answers {what}: checked afresh");
        assert_eq!(
            std::fs::read(s.store()).expect("store"),
            written,
            "answers {what}: replaced by sound ones"
        );
    }
}

/// An answer remembered under other options is not used: `--no-upstream` and
/// `--max-document-size` change verdicts, so each has its own entry, and the
/// report is the one a memo-less run of those options gives.
#[test]
fn an_answer_of_other_options_is_not_used() {
    let s = Setup::new();
    let _cold = s.audit(&["--jobs", "1"]);
    for extra in [&["--no-upstream"][..], &["--max-document-size", "100"][..]] {
        let (run, checked) = s.audit_checking(extra);
        assert!(checked, "{extra:?}: checked afresh");
        let again = s.audit(extra);
        assert_eq!(again.stdout, run.stdout, "{extra:?}: again");
        remove(&s.ws.cache(), &["records.store"]);
        let fresh = s.audit(extra);
        assert_eq!(fresh.stdout, run.stdout, "{extra:?}: as without a memo");
    }
    let no_upstream = s.audit(&["--no-upstream"]);
    assert!(
        no_upstream
            .codes()
            .iter()
            .all(|c| c != "upstream-changed" && c != "value-superseded"),
        "{:?}",
        no_upstream.codes()
    );
    let small = s.audit(&["--max-document-size", "100"]).report();
    let unread = small["records"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|r| r["sources"].as_array().into_iter().flatten())
        .filter(|s| {
            s["status"] == "unchecked"
                && s["reason"]
                    .as_str()
                    .is_some_and(|r| r.contains("--max-document-size"))
        })
        .count();
    assert!(unread > 0, "{small:#}");
}

/// A new commit pushed to the cited branch moves its tip: the memo's answers,
/// made against the old head, are not used, and the report is the one a run
/// without any memo gives (the drift against the new head).
#[test]
fn a_moved_branch_tip_invalidates_the_memo() {
    let s = Setup::new();
    let cold = s.audit(&["--jobs", "1"]);
    let warm = s.audit(&["--jobs", "1"]);
    assert_eq!(warm.stdout, cold.stdout);
    // The head corrects the figures every record cites.
    let repo = s.forge.repo("acme/speed");
    let table = "# Results\n\n| phase | rate |\n|---|---|\n| decode | 4.2 tokens/s |\n| warmup | 1.5 tokens/s |\n| prefill | 80.1 tokens/s |\n| batch | 13.5 tokens/s |\n";
    repo.commit(&[("README.md", table)], "four", T0 + 180);
    let (moved, checked) = s.audit_checking(&["--jobs", "2"]);
    assert!(checked, "records citing the moved branch checked afresh");
    assert_ne!(
        moved.stdout, cold.stdout,
        "the drift is against the new head"
    );
    let superseded = moved.with_code("value-superseded");
    assert!(
        superseded
            .iter()
            .any(|f| f["message"].as_str().unwrap_or("").contains("4.2")),
        "{superseded:#?}"
    );
    remove(&s.ws.cache(), &["records.store"]);
    let fresh = s.audit(&["--jobs", "1"]);
    assert_eq!(fresh.stdout, moved.stdout, "as without a memo");
    // And the new answers are remembered.
    let (again, checked) = s.audit_checking(&["--jobs", "1"]);
    assert_eq!(again.stdout, moved.stdout);
    assert!(!checked, "answered from the memo");
}
