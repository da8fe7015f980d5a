//! Trust nothing not recomputed (issue "Trust nothing you did not
//! recompute"): trees git refuses are never judged, a forge answering garbage
//! is a forge that is down, and the other attacks of that round. Every server
//! listens on loopback and is stopped on drop.

use git2::{ObjectType, Oid, Repository, Signature, Time};
use serde_json::Value;

use crate::common::forge::{
    pin, sha256_hex, source, to_daemon, Forge, NAME, README, README_LINE, T0, T0_RFC3339,
};
use crate::common::scratch::Scratch;
use crate::common::{GitDaemon, Wants};

/// The same table as [`README`] with another value.
const OTHER: &str = "# Decode benchmark\n\
\n\
| metric | value |\n\
|---|---|\n\
| decode | 9.9 tok/s |\n";

/// A tree object written byte for byte: `(mode, name, id)` in the order given,
/// as a forge without fsck on push would keep it.
fn raw_tree(repo: &Repository, entries: &[(&str, &[u8], Oid)]) -> Oid {
    let mut bytes = Vec::new();
    for (mode, name, id) in entries {
        bytes.extend_from_slice(mode.as_bytes());
        bytes.push(b' ');
        bytes.extend_from_slice(name);
        bytes.push(0);
        bytes.extend_from_slice(id.as_bytes());
    }
    repo.odb()
        .expect("odb")
        .write(ObjectType::Tree, &bytes)
        .expect("tree written")
}

/// A commit of `tree` on `main` of the forge's repository.
fn commit_tree(repo: &Repository, tree: Oid, message: &str) -> Oid {
    let sig = Signature::new("Fixture", "fixture@example.com", &Time::new(T0, 0)).expect("sig");
    let tree = repo.find_tree(tree).expect("tree");
    let parents: Vec<git2::Commit<'_>> = repo
        .find_reference("refs/heads/main")
        .ok()
        .and_then(|r| r.peel_to_commit().ok())
        .into_iter()
        .collect();
    let parents: Vec<&git2::Commit<'_>> = parents.iter().collect();
    repo.commit(
        Some("refs/heads/main"),
        &sig,
        &sig,
        message,
        &tree,
        &parents,
    )
    .expect("commit")
}

/// A record source's id, its cited path, the tree's raw entries and the
/// word `git fsck` says of it.
type Shape<'a> = (&'a str, &'a str, Vec<(&'a str, &'a [u8], Oid)>, &'a str);

/// Three trees `git fsck` rejects, each holding the cited README (with the
/// recorded bytes) beside another version: `README.md` listed twice, entries
/// out of order, and an entry whose name holds a `/` beside the directory of
/// that name. Each source is `unchecked` with git fsck's words, never
/// `verified` and never `missing`.
#[test]
fn trees_git_refuses_are_never_judged() {
    let forge = Forge::new();
    let fixture = forge.repo(NAME);
    let repo = Repository::open(fixture.path()).expect("open");
    let good = repo.blob(README.as_bytes()).expect("blob");
    let other = repo.blob(OTHER.as_bytes()).expect("blob");
    let notes = repo.blob(b"notes\n").expect("blob");
    let docs = raw_tree(&repo, &[("100644", b"README.md", other)]);
    let shapes: [Shape; 3] = [
        (
            "twice",
            "README.md",
            vec![
                ("100644", b"README.md", other),
                ("100644", b"README.md", good),
            ],
            "duplicateEntries",
        ),
        (
            "unsorted",
            "README.md",
            vec![
                ("100644", b"notes.md", notes),
                ("100644", b"README.md", good),
            ],
            "treeNotSorted",
        ),
        (
            "slash",
            "docs/README.md",
            vec![
                ("40000", b"docs", docs),
                ("100644", b"docs/README.md", good),
            ],
            "fullPathname",
        ),
    ];
    let mut sources = Vec::new();
    let mut claims = Vec::new();
    for (id, path, entries, _) in &shapes {
        let tree = raw_tree(&repo, entries);
        let commit = commit_tree(&repo, tree, id);
        let s = source(id, NAME, commit, path, &sha256_hex(README), T0_RFC3339);
        let mut c = crate::common::forge::claim(id, &s, README_LINE, 2.9);
        c["label"] = Value::from(*id);
        sources.push(s);
        claims.push(c);
    }
    let daemon = GitDaemon::start(forge.path(), Wants::Any);
    let ws = Scratch::new();
    let file = ws.write_pin(&pin("fsck", &sources, &claims));
    let run = ws.audit(["--rewrite", &to_daemon(&daemon), &file]);
    run.assert_code(2);
    for (id, _, _, words) in &shapes {
        let s = run.source("fsck", id);
        assert_eq!(s["status"], "unchecked", "{id}: {s:#}\n{}", run.stderr);
        let said = s.to_string();
        assert!(
            said.contains(words) && said.contains("git refuses"),
            "{id}: {s:#}"
        );
        let c = run.claim("fsck", id);
        assert_eq!(c["status"], "unchecked", "{id}: {c:#}");
    }
    // `show` refuses the same way.
    let url = format!("{}#L{README_LINE}", sources[0]["url"].as_str().unwrap());
    let shown = ws.run(["show", &url, "--cache", "cache", "--offline"]);
    assert_ne!(shown.code(), 0, "{}", shown.stdout);
    assert!(
        shown.stderr.contains("duplicateEntries"),
        "{}",
        shown.stderr
    );
}
