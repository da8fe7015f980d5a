//! Durable citations: SoftWare Hash IDentifiers (SWHIDs) for cited documents.
//!
//! A forge can delete a repository or force-push a commit away; Software
//! Heritage keeps every object it archived under an identifier that is git's
//! own: a document is `swh:1:cnt:<git blob id>`, a commit `swh:1:rev:<commit>`.
//! So the identifier of a cited document can be computed here, from what the
//! git cache already knows, without asking anyone, and it names the same bytes
//! wherever they are kept.
//!
//! A report gives each checked git source its SWHID with the context
//! qualifiers of the SWHID specification (version 1.2, section 4 "Syntax",
//! <https://www.swhid.org/specification/v1.2/4.Syntax>), in the order it
//! recommends: `origin` (the repository), `anchor` (the pinned commit), `path`
//! (the document in it, absolute) and the fragment `lines`:
//!
//! `swh:1:cnt:<blob>;origin=<repository>;anchor=swh:1:rev:<commit>;path=/<path>;lines=<a>-<b>`
//!
//! Qualifier values are escaped as the specification asks: every `;` and `%` is
//! percent-encoded (`%3B`, `%25`), and so is every character an IRI may not hold
//! there (controls, space, `"<>\^`{|}`, and in a path `#`, `?`, `[` and `]`). Characters
//! beyond ASCII are percent-encoded too (as their UTF-8 bytes), which the
//! specification allows: the identifier then reads the same in every report
//! format and cannot carry a bidirectional control.

use std::fmt;

use percent_encoding::{utf8_percent_encode, AsciiSet, CONTROLS};

/// Where Software Heritage shows an archived object: this, then the SWHID.
pub const ARCHIVE_WEB: &str = "https://archive.softwareheritage.org/";

/// What a core SWHID names. pinaudit cites documents and commits only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// A file's bytes (`cnt`): its git blob id.
    Content,
    /// A commit (`rev`): its git commit id.
    Revision,
}

impl Kind {
    fn tag(self) -> &'static str {
        match self {
            Kind::Content => "cnt",
            Kind::Revision => "rev",
        }
    }
}

/// `swh:1:<kind>:<40 hex digits>`: an object, without context.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CoreSwhid {
    kind: Kind,
    /// 40 lowercase hex digits (SWHID version 1 identifiers are SHA-1 ids).
    id: String,
}

impl CoreSwhid {
    /// The SWHID of the object with git id `hex`; `None` unless it is 40 hex
    /// digits (a SHA-256 repository's ids have no version-1 SWHID).
    pub fn new(kind: Kind, hex: &str) -> Option<CoreSwhid> {
        (hex.len() == 40 && hex.bytes().all(|b| b.is_ascii_hexdigit())).then(|| CoreSwhid {
            kind,
            id: hex.to_ascii_lowercase(),
        })
    }

    /// A document, by its git blob id.
    pub fn content(blob: &str) -> Option<CoreSwhid> {
        CoreSwhid::new(Kind::Content, blob)
    }

    /// A commit, by its id.
    pub fn revision(commit: &str) -> Option<CoreSwhid> {
        CoreSwhid::new(Kind::Revision, commit)
    }
}

impl fmt::Display for CoreSwhid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "swh:1:{}:{}", self.kind.tag(), self.id)
    }
}

/// What an IRI may not hold as itself in a qualifier value, and what the
/// specification reserves (`;` ends a qualifier, `%` starts an escape).
const VALUE: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'<')
    .add(b'>')
    .add(b'\\')
    .add(b'^')
    .add(b'`')
    .add(b'{')
    .add(b'|')
    .add(b'}')
    .add(b'%')
    .add(b';');

/// In a path, also what would end it (`?` a query, `#` a fragment) and the
/// brackets only a host may hold.
const PATH: &AsciiSet = &VALUE.add(b'#').add(b'?').add(b'[').add(b']');

/// An `origin` value: the repository's URL, escaped.
pub fn escape_origin(url: &str) -> String {
    utf8_percent_encode(url, VALUE).to_string()
}

/// A `path` value: the document's path from the root of the anchor's tree,
/// absolute (a leading `/` is added when missing), escaped.
pub fn escape_path(path: &str) -> String {
    let absolute = if path.starts_with('/') {
        path.to_string()
    } else {
        format!("/{path}")
    };
    utf8_percent_encode(&absolute, PATH).to_string()
}

/// A SWHID with its qualifiers: an object seen in a context.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Swhid {
    pub core: CoreSwhid,
    /// The repository URL the object was found in, unescaped.
    pub origin: Option<String>,
    /// The commit the path is relative to.
    pub anchor: Option<CoreSwhid>,
    /// The document's path in the anchor's tree, unescaped.
    pub path: Option<String>,
    /// First and last line of interest, 1-based and inclusive.
    pub lines: Option<(u32, u32)>,
}

impl Swhid {
    /// The durable citation of the document `blob` at `path` in `commit` of
    /// `repository` (a repository URL, or `OWNER/REPO` for GitHub), for `lines`.
    /// `None` when the blob or commit is no 40-hex id. A local repository
    /// (`file:`) is no origin anyone else can name, so it is left out; a
    /// credential in the repository URL never reaches the identifier.
    pub fn of_document(
        blob: &str,
        commit: &str,
        repository: Option<&str>,
        path: &str,
        lines: Option<(u32, u32)>,
    ) -> Option<Swhid> {
        let origin = repository
            .and_then(crate::record::url::parse_repository)
            .filter(|u| u.forge != crate::record::url::Forge::Local)
            .map(|u| crate::url::redact(&u.repository_url()));
        Some(Swhid {
            core: CoreSwhid::content(blob)?,
            origin,
            anchor: Some(CoreSwhid::revision(commit)?),
            path: Some(path.to_string()),
            lines: lines.map(|(a, b)| (a.min(b), a.max(b))),
        })
    }

    /// The page of the archive that shows the object in its context.
    pub fn archive_url(&self) -> String {
        format!("{ARCHIVE_WEB}{self}")
    }
}

impl fmt::Display for Swhid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.core)?;
        if let Some(o) = &self.origin {
            write!(f, ";origin={}", escape_origin(o))?;
        }
        if let Some(a) = &self.anchor {
            write!(f, ";anchor={a}")?;
        }
        if let Some(p) = &self.path {
            write!(f, ";path={}", escape_path(p))?;
        }
        match self.lines {
            Some((a, b)) if a == b => write!(f, ";lines={a}"),
            Some((a, b)) => write!(f, ";lines={a}-{b}"),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BLOB: &str = "9e365b417d483e7b9d630bacc51d7765d0309d29";
    const COMMIT: &str = "5092790be1703dd779cf2d4b98b166fd24a5aaee";

    /// git's own blob id of `bytes`, from `git hash-object`.
    fn git_hash_object(bytes: &[u8]) -> String {
        use std::io::Write;
        let mut child = std::process::Command::new("git")
            .args(["hash-object", "--stdin"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("git runs");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(bytes)
            .expect("written");
        let out = child.wait_with_output().expect("git hash-object");
        String::from_utf8(out.stdout)
            .expect("hex")
            .trim()
            .to_string()
    }

    #[test]
    fn a_document_citation_has_every_qualifier_in_the_recommended_order() {
        let doc = b"| steady decode | ~2.9 tok/s |\n";
        let blob = git_hash_object(doc);
        let repo = "https://github.com/chishiki37/kimi";
        let s = Swhid::of_document(&blob, COMMIT, Some(repo), "README.md", Some((43, 45)))
            .expect("a swhid");
        // Written out by hand from the specification's grammar.
        let expected = format!(
            "swh:1:cnt:{blob};origin={repo};anchor=swh:1:rev:{COMMIT};path=/README.md;lines=43-45"
        );
        assert_eq!(s.to_string(), expected);
        assert_eq!(
            s.archive_url(),
            format!("https://archive.softwareheritage.org/{expected}")
        );
    }

    #[test]
    fn one_line_is_one_number_and_no_lines_no_qualifier() {
        let one = Swhid::of_document(BLOB, COMMIT, Some("o/r"), "a.md", Some((7, 7))).unwrap();
        assert!(one.to_string().ends_with(";path=/a.md;lines=7"), "{one}");
        let none = Swhid::of_document(BLOB, COMMIT, Some("o/r"), "a.md", None).unwrap();
        assert!(none.to_string().ends_with(";path=/a.md"), "{none}");
        // `OWNER/REPO` is a GitHub repository.
        assert!(none.to_string().contains(";origin=https://github.com/o/r;"));
    }

    #[test]
    fn semicolons_and_percents_in_values_are_escaped() {
        let s = Swhid::of_document(
            BLOB,
            COMMIT,
            Some("https://git.example/a;b/r%20x"),
            "dir;x/100% sure #1?.md",
            None,
        )
        .unwrap()
        .to_string();
        assert!(
            s.contains(";origin=https://git.example/a%3Bb/r%2520x;"),
            "{s}"
        );
        assert!(
            s.ends_with(";path=/dir%3Bx/100%25%20sure%20%231%3F.md"),
            "{s}"
        );
        // Nothing in a value can start a qualifier: exactly four separators.
        assert_eq!(s.matches(';').count(), 3, "{s}");
    }

    #[test]
    fn bidi_controls_and_other_scripts_are_percent_encoded() {
        let s = Swhid::of_document(BLOB, COMMIT, None, "ré\u{202e}sumé.md", None)
            .unwrap()
            .to_string();
        assert!(s.ends_with(";path=/r%C3%A9%E2%80%AEsum%C3%A9.md"), "{s}");
        assert!(s.is_ascii());
    }

    #[test]
    fn only_sha1_ids_have_a_version_1_swhid_and_local_repositories_no_origin() {
        let sha256_commit = "a".repeat(64);
        assert!(Swhid::of_document(BLOB, &sha256_commit, Some("o/r"), "a", None).is_none());
        assert!(Swhid::of_document("main", COMMIT, Some("o/r"), "a", None).is_none());
        let upper = Swhid::of_document(&BLOB.to_uppercase(), COMMIT, None, "a", None).unwrap();
        assert!(upper.to_string().starts_with(&format!("swh:1:cnt:{BLOB};")));
        let local = Swhid::of_document(BLOB, COMMIT, Some("file:///tmp/repo"), "a", None).unwrap();
        assert!(!local.to_string().contains("origin="), "{local}");
        assert_eq!(
            CoreSwhid::revision(COMMIT).unwrap().to_string(),
            format!("swh:1:rev:{COMMIT}")
        );
    }

    #[test]
    fn credentials_never_reach_the_origin() {
        let s = Swhid::of_document(
            BLOB,
            COMMIT,
            Some("https://user:secret@git.example/o/r"),
            "a.md",
            None,
        )
        .unwrap()
        .to_string();
        assert!(!s.contains("secret"), "{s}");
        assert!(s.contains(";origin=https://git.example/o/r;"), "{s}");
    }
}
