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

/// A forge advertising 20,000 branches costs one `packed-refs` file, not a
/// file per branch, and reachability still follows them: a commit only one
/// branch reaches is reachable until that branch goes (issue "Trust nothing
/// you did not recompute", attack 8; `scripts/bench-refs.sh` measures
/// 300,000).
#[test]
fn many_advertised_branches_are_kept_packed_and_still_decide_reachability() {
    let forge = Forge::new();
    let fixture = forge.repo(NAME);
    let main = fixture.commit(&[("README.md", README)], "add results", T0);
    let side = fixture.commit_on(
        "side",
        &[("README.md", README), ("x.md", "x\n")],
        "side",
        T0 + 60,
    );
    let mut names: Vec<String> = (0..20_000)
        .map(|i| format!("refs/heads/b-{i:05}"))
        .collect();
    names.push("refs/heads/main".into());
    names.sort();
    let mut packed = String::from("# pack-refs with: peeled fully-peeled sorted \n");
    for name in &names {
        packed.push_str(&format!("{main} {name}\n"));
    }
    packed.push_str(&format!("{side} refs/heads/side\n"));
    std::fs::write(fixture.path().join("packed-refs"), packed).expect("packed-refs");
    let _ = std::fs::remove_dir_all(fixture.path().join("refs/heads"));
    std::fs::create_dir_all(fixture.path().join("refs/heads")).expect("refs/heads");

    let daemon = GitDaemon::start(forge.path(), Wants::Reachable);
    let ws = Scratch::new();
    let s = source(
        "side",
        NAME,
        side,
        "README.md",
        &sha256_hex(README),
        "2023-11-14T22:14:20Z",
    );
    let c = crate::common::forge::claim("decode", &s, README_LINE, 2.9);
    let file = ws.write_pin(&pin("many", &[s], &[c]));
    let rewrite = to_daemon(&daemon);
    let run = ws.audit(["--rewrite", &rewrite, &file]);
    run.assert_code(0);
    assert_eq!(run.claim("many", "decode")["status"], "verified");
    let mirror = ws.mirror(NAME);
    let loose = walkdir::WalkDir::new(mirror.join("refs"))
        .into_iter()
        .flatten()
        .filter(|e| e.file_type().is_file())
        .count();
    assert!(loose <= 2, "{loose} loose ref files");
    let lines = std::fs::read_to_string(mirror.join("packed-refs"))
        .expect("packed-refs")
        .lines()
        .count();
    assert!(lines > 20_000, "{lines} lines");

    // The only branch reaching the pinned commit goes: unreachable now.
    fixture.delete_ref("refs/heads/side");
    let again = ws.audit(["--rewrite", &rewrite, &file]);
    assert!(
        again.codes().contains(&"revision-unreachable".to_string()),
        "{:?}",
        again.codes()
    );
    assert_eq!(again.claim("many", "decode")["status"], "verified");
}
