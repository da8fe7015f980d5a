//! What Software Heritage answers is believed only as far as it is proven: the
//! git objects its JSON describes are written again here, byte for byte as git
//! writes them, and hashed. A revision must hash to the commit id the record
//! cites, each directory listing on the path to the id its parent names, and
//! the bytes to the blob id the last listing names (`super::swh`). An answer
//! whose object does not hash to its id is not used: the archive may be
//! honest and describe an object git would write otherwise (a timezone of
//! `-0000`, a message that is not UTF-8), but nothing that is not proven
//! decides a verdict.

use git2::{ObjectType, Oid};
use serde_json::Value;

/// The commit object a `revision/<id>/` answer describes, as git writes it:
/// `tree`, `parent`s, `author` and `committer` with their times and offsets,
/// the extra headers (`gpgsig`, `mergetag`, `encoding`, ...) with their
/// continuation lines, then the message.
pub(crate) fn commit_object(rev: &Value) -> Result<Vec<u8>, String> {
    let text = |v: &Value, what: &str| {
        v.as_str()
            .map(str::to_string)
            .ok_or_else(|| format!("the revision has no {what}"))
    };
    let mut out = String::new();
    out.push_str(&format!(
        "tree {}\n",
        git_id(&rev["directory"], "directory")?
    ));
    for p in rev["parents"].as_array().into_iter().flatten() {
        let id = p.get("id").unwrap_or(p);
        out.push_str(&format!("parent {}\n", git_id(id, "parent")?));
    }
    for (who, date) in [("author", "date"), ("committer", "committer_date")] {
        let person = text(&rev[who]["fullname"], &format!("{who} fullname"))?;
        let (secs, offset) = git_time(&text(&rev[date], date)?)?;
        out.push_str(&format!("{who} {person} {secs} {offset}\n"));
    }
    for header in rev["extra_headers"].as_array().into_iter().flatten() {
        let (Some(key), Some(value)) = (header[0].as_str(), header[1].as_str()) else {
            return Err("an extra header is not a pair of strings".into());
        };
        out.push_str(&format!("{key} {}\n", value.replace('\n', "\n ")));
    }
    if rev["message_decoding_failed"].as_bool() == Some(true) {
        return Err("its message is not UTF-8 as archived".into());
    }
    match &rev["message"] {
        Value::Null => {}
        m => {
            out.push('\n');
            out.push_str(&text(m, "message")?);
        }
    }
    Ok(out.into_bytes())
}

/// The tree object a `directory/<id>/` answer (its entries) describes: entries
/// in git's order (names as bytes, a directory's as if it ended in `/`), each
/// `MODE NAME\0ID`.
pub(crate) fn tree_object(entries: &Value) -> Result<Vec<u8>, String> {
    let list = entries
        .as_array()
        .ok_or("the directory listing is not a list")?;
    let mut rows: Vec<(Vec<u8>, u32, Oid)> = Vec::with_capacity(list.len());
    for e in list {
        let name = e["name"].as_str().ok_or("an entry has no name")?;
        let perms = e["perms"]
            .as_u64()
            .and_then(|p| u32::try_from(p).ok())
            .ok_or_else(|| format!("entry `{name}` has no mode"))?;
        let id = Oid::from_str(&git_id(&e["target"], "target")?).map_err(|e| e.to_string())?;
        rows.push((name.as_bytes().to_vec(), perms, id));
    }
    let key = |(name, perms, _): &(Vec<u8>, u32, Oid)| {
        let mut k = name.clone();
        if *perms == 0o040000 {
            k.push(b'/');
        }
        k
    };
    rows.sort_by_key(key);
    let mut out = Vec::new();
    for (name, perms, id) in rows {
        out.extend_from_slice(format!("{perms:o} ").as_bytes());
        out.extend_from_slice(&name);
        out.push(0);
        out.extend_from_slice(id.as_bytes());
    }
    Ok(out)
}

/// Whether `bytes`, as an object of `kind`, hash to `id`; else why not.
pub(crate) fn proves(kind: ObjectType, bytes: &[u8], id: &str, what: &str) -> Result<(), String> {
    let got = Oid::hash_object(kind, bytes).map_err(|e| e.to_string())?;
    if got.to_string().eq_ignore_ascii_case(id) {
        Ok(())
    } else {
        Err(format!(
            "the archive's {what} hashes to `{got}`, not to `{id}`: not proven"
        ))
    }
}

/// A 40-digit git id from `v`.
fn git_id(v: &Value, what: &str) -> Result<String, String> {
    let id = v.as_str().ok_or_else(|| format!("no {what} id"))?;
    if id.len() == 40 && id.bytes().all(|b| b.is_ascii_hexdigit()) {
        Ok(id.to_ascii_lowercase())
    } else {
        Err(format!("{what} `{id}` is not a git id"))
    }
}

/// An RFC 3339 time as git writes it: seconds since the epoch and the offset
/// as `+HHMM`.
fn git_time(date: &str) -> Result<(i64, String), String> {
    let t = time::OffsetDateTime::parse(date, &time::format_description::well_known::Rfc3339)
        .map_err(|e| format!("date `{date}`: {e}"))?;
    let minutes = t.offset().whole_minutes();
    let sign = if minutes < 0 { '-' } else { '+' };
    let m = minutes.unsigned_abs();
    Ok((
        t.unix_timestamp(),
        format!("{sign}{:02}{:02}", m / 60, m % 60),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A commit written by libgit2, described as Software Heritage describes
    /// it, is written again byte for byte; a tree likewise, whatever order
    /// the listing gives.
    #[test]
    fn objects_written_by_git_are_written_again_from_their_description() {
        let dir = tempfile::tempdir().expect("tempdir");
        let repo = git2::Repository::init_bare(dir.path()).expect("init");
        let blob = repo.blob(b"x\n").expect("blob");
        let mut inner = repo.treebuilder(None).expect("builder");
        inner.insert("a", blob, 0o100644).expect("insert");
        let inner = inner.write().expect("tree");
        let mut tb = repo.treebuilder(None).expect("builder");
        tb.insert("foo.bar", blob, 0o100755).expect("insert");
        tb.insert("foo", inner, 0o040000).expect("insert");
        tb.insert("README.md", blob, 0o100644).expect("insert");
        let tree = tb.write().expect("tree");
        let listing = json!([
            {"name": "foo", "type": "dir", "perms": 16384, "target": inner.to_string()},
            {"name": "README.md", "type": "file", "perms": 33188, "target": blob.to_string()},
            {"name": "foo.bar", "type": "file", "perms": 33261, "target": blob.to_string()},
        ]);
        let bytes = tree_object(&listing).expect("tree");
        assert_eq!(
            proves(ObjectType::Tree, &bytes, &tree.to_string(), "tree"),
            Ok(())
        );

        let sig = git2::Signature::new(
            "A U Thor",
            "a@example.com",
            &git2::Time::new(1_700_000_000, 330),
        )
        .expect("sig");
        let committer =
            git2::Signature::new("C", "c@example.com", &git2::Time::new(1_700_000_060, -480))
                .expect("sig");
        let tree = repo.find_tree(tree).expect("tree");
        let c = repo
            .commit(None, &sig, &committer, "add results\n\nbody\n", &tree, &[])
            .expect("commit");
        let rev = json!({
            "id": c.to_string(),
            "directory": tree.id().to_string(),
            "parents": [],
            "author": {"fullname": "A U Thor <a@example.com>"},
            "committer": {"fullname": "C <c@example.com>"},
            "date": "2023-11-15T03:43:20+05:30",
            "committer_date": "2023-11-14T14:14:20-08:00",
            "extra_headers": [],
            "message": "add results\n\nbody\n",
        });
        let bytes = commit_object(&rev).expect("commit");
        assert_eq!(
            proves(ObjectType::Commit, &bytes, &c.to_string(), "revision"),
            Ok(())
        );
        // Another message is another commit.
        let mut lie = rev.clone();
        lie["message"] = json!("other\n");
        let bytes = commit_object(&lie).expect("commit");
        assert!(proves(ObjectType::Commit, &bytes, &c.to_string(), "revision").is_err());
    }

    #[test]
    fn a_signed_commits_continuation_lines_are_written_as_git_writes_them() {
        let rev = json!({
            "directory": "4b825dc642cb6eb9a060e54bf8d69288fbee4904",
            "parents": [{"id": "0123456789abcdef0123456789abcdef01234567"}],
            "author": {"fullname": "A <a@x>"},
            "committer": {"fullname": "A <a@x>"},
            "date": "2023-11-14T22:13:20Z",
            "committer_date": "2023-11-14T22:13:20Z",
            "extra_headers": [["gpgsig", "-----BEGIN-----\nabc\n-----END-----"]],
            "message": "m\n",
        });
        let text = String::from_utf8(commit_object(&rev).expect("commit")).expect("utf-8");
        assert_eq!(
            text,
            "tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\n\
             parent 0123456789abcdef0123456789abcdef01234567\n\
             author A <a@x> 1700000000 +0000\n\
             committer A <a@x> 1700000000 +0000\n\
             gpgsig -----BEGIN-----\n abc\n -----END-----\n\
             \n\
             m\n"
        );
        assert!(commit_object(&json!({"directory": "../x"})).is_err());
    }
}
