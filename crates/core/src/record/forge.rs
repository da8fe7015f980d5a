//! One small grammar per forge: which path segments of a document URL are the
//! repository, the view, the revision and the document path.
//!
//! Each grammar reads the path segments as the `url` crate gives them (already
//! split, dot segments resolved, still percent-encoded) and answers `None` when
//! the URL names no repository. [`super::url::parse`] decodes and validates what
//! they pick out, so a grammar is only about positions.

use std::fmt;

/// Which forge's URL grammar a URL follows (one small grammar each, below).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Forge {
    /// github.com and GitHub-style hosts (`/blob/`, `/raw/`, `/tree/`).
    GitHub,
    /// raw.githubusercontent.com.
    GitHubRaw,
    /// GitLab (`/-/blob/`, `/-/raw/`, `/-/tree/`, subgroups), any host.
    GitLab,
    /// huggingface.co (`/blob/`, `/resolve/`, `/tree/`), models, datasets and spaces.
    HuggingFace,
    /// Gitea, Forgejo and Codeberg (`/src/commit/`, `/src/branch/`, `/src/tag/`,
    /// `/raw/commit/`).
    Gitea,
    /// bitbucket.org (`/src/REV/PATH`, `/raw/REV/PATH`).
    Bitbucket,
    /// A `file:` URL (only with `--allow-local`).
    Local,
}

/// What a document URL shows of the revision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum View {
    /// The rendered file: GitHub `blob/`, Gitea and Bitbucket `src/`.
    Blob,
    /// The file's bytes: `raw/`, Hugging Face `resolve/`, raw.githubusercontent.com.
    Raw,
    /// A directory listing.
    Tree,
    /// A commit page (no document).
    Commit,
    /// Blame / annotate.
    Blame,
}

impl fmt::Display for Forge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Forge::GitHub => "GitHub",
            Forge::GitHubRaw => "GitHub raw",
            Forge::GitLab => "GitLab",
            Forge::HuggingFace => "Hugging Face",
            Forge::Gitea => "Gitea",
            Forge::Bitbucket => "Bitbucket",
            Forge::Local => "local",
        })
    }
}

/// What a forge grammar picks out of a URL's path segments.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Parts<'a> {
    /// The repository's segments: `[OWNER, REPO]`, `[GROUP, SUB, PROJECT]`,
    /// `[datasets, OWNER, NAME]`.
    pub(crate) repo: &'a [&'a str],
    pub(crate) view: Option<View>,
    /// The revision as written (percent-encoded).
    pub(crate) rev: Option<String>,
    /// The document's segments (percent-encoded).
    pub(crate) doc: &'a [&'a str],
}

impl<'a> Parts<'a> {
    fn repo(repo: &'a [&'a str]) -> Parts<'a> {
        Parts {
            repo,
            view: None,
            rev: None,
            doc: &[],
        }
    }

    fn at(repo: &'a [&'a str], view: View, rev: &str, doc: &'a [&'a str]) -> Parts<'a> {
        Parts {
            repo,
            view: Some(view),
            rev: Some(rev.to_string()),
            doc,
        }
    }
}

/// Which forge's grammar a URL on `host` (lowercase, without `www.`) follows.
/// Known hosts decide; a self-hosted one is recognised by its URL's shape.
pub(super) fn forge_of(host: &str, segs: &[&str]) -> Forge {
    match host {
        "github.com" => Forge::GitHub,
        "raw.githubusercontent.com" => Forge::GitHubRaw,
        "gitlab.com" => Forge::GitLab,
        "huggingface.co" | "hf.co" => Forge::HuggingFace,
        "codeberg.org" => Forge::Gitea,
        "bitbucket.org" => Forge::Bitbucket,
        _ if segs.contains(&"-") => Forge::GitLab,
        _ if gitea_view(segs).is_some() => Forge::Gitea,
        h if h.contains("gitlab") => Forge::GitLab,
        h if h.contains("gitea") || h.contains("forgejo") => Forge::Gitea,
        _ => Forge::GitHub,
    }
}

/// Reads `segs` with `forge`'s grammar.
pub(super) fn read<'a>(forge: Forge, segs: &'a [&'a str]) -> Option<Parts<'a>> {
    match forge {
        Forge::GitHub => github(segs),
        Forge::GitHubRaw => github_raw(segs),
        Forge::GitLab => gitlab(segs),
        Forge::HuggingFace => hugging_face(segs),
        Forge::Gitea => gitea(segs),
        Forge::Bitbucket => bitbucket(segs),
        Forge::Local => None,
    }
}

/// `OWNER/REPO/{blob,raw,tree,blame}/REV/PATH`, `OWNER/REPO/commit/REV`.
fn github<'a>(segs: &'a [&'a str]) -> Option<Parts<'a>> {
    let repo = segs.get(..2)?;
    let view = match segs.get(2).copied() {
        Some("blob") => View::Blob,
        Some("raw") => View::Raw,
        Some("tree") => View::Tree,
        Some("commit") => View::Commit,
        Some("blame") => View::Blame,
        _ => return Some(Parts::repo(repo)),
    };
    match segs.get(3) {
        Some(rev) => Some(Parts::at(repo, view, rev, &segs[4..])),
        None => Some(Parts::repo(repo)),
    }
}

/// raw.githubusercontent.com: `OWNER/REPO/REV/PATH`, or
/// `OWNER/REPO/refs/{heads,tags}/NAME/PATH`.
fn github_raw<'a>(segs: &'a [&'a str]) -> Option<Parts<'a>> {
    if segs.len() < 3 {
        return None;
    }
    let repo = &segs[..2];
    if segs[2] == "refs" && segs.len() >= 5 && matches!(segs[3], "heads" | "tags") {
        let rev = format!("refs/{}/{}", segs[3], segs[4]);
        return Some(Parts::at(repo, View::Raw, &rev, &segs[5..]));
    }
    Some(Parts::at(repo, View::Raw, segs[2], &segs[3..]))
}

/// Everything before `/-/` is the (possibly nested) project:
/// `GROUP/SUB/PROJECT/-/{blob,raw,tree,blame}/REV/PATH`, `…/-/commit/REV`.
/// Old links without the `/-/` (`GROUP/PROJECT/blob/REV/PATH`) still redirect,
/// and read as on GitHub.
fn gitlab<'a>(segs: &'a [&'a str]) -> Option<Parts<'a>> {
    let Some(dash) = segs.iter().position(|s| *s == "-") else {
        return github(segs);
    };
    let repo = &segs[..dash];
    if repo.len() < 2 {
        return None;
    }
    let view = match segs.get(dash + 1).copied() {
        Some("blob") => View::Blob,
        Some("raw") => View::Raw,
        Some("tree") => View::Tree,
        Some("commit") => View::Commit,
        Some("blame") => View::Blame,
        _ => return Some(Parts::repo(repo)),
    };
    match segs.get(dash + 2) {
        Some(rev) => Some(Parts::at(repo, view, rev, &segs[dash + 3..])),
        None => Some(Parts::repo(repo)),
    }
}

/// Models at `OWNER/NAME`, data sets at `datasets/OWNER/NAME`, Spaces at
/// `spaces/OWNER/NAME`, then `{blob,resolve,raw,tree}/REV/PATH` or `commit/REV`.
/// Repositories from before namespaces have one segment (`gpt2/resolve/main/…`,
/// `datasets/squad/blob/main/…`); they are told apart by the view keyword.
fn hugging_face<'a>(segs: &'a [&'a str]) -> Option<Parts<'a>> {
    let view_of = |s: Option<&&str>| match s.copied() {
        Some("blob") => Some(View::Blob),
        Some("resolve" | "raw") => Some(View::Raw),
        Some("tree") => Some(View::Tree),
        Some("commit") => Some(View::Commit),
        _ => None,
    };
    let prefix = usize::from(matches!(segs.first(), Some(&("datasets" | "spaces"))));
    let namespaced = segs.len() == prefix + 2 || view_of(segs.get(prefix + 2)).is_some();
    let repo_len = if !namespaced && view_of(segs.get(prefix + 1)).is_some() {
        prefix + 1
    } else {
        prefix + 2
    };
    let repo = segs.get(..repo_len)?;
    match (view_of(segs.get(repo_len)), segs.get(repo_len + 1)) {
        (Some(view), Some(rev)) => Some(Parts::at(repo, view, rev, &segs[repo_len + 2..])),
        _ => Some(Parts::repo(repo)),
    }
}

/// Gitea, Forgejo and Codeberg: `OWNER/REPO/{src,raw,media,blame}/{commit,branch,tag}/REV/PATH`.
fn gitea<'a>(segs: &'a [&'a str]) -> Option<Parts<'a>> {
    let repo = segs.get(..2)?;
    match gitea_view(segs) {
        Some(view) => Some(Parts::at(repo, view, segs[4], &segs[5..])),
        None => Some(Parts::repo(repo)),
    }
}

/// The view of a Gitea-shaped URL, if it is one.
fn gitea_view(segs: &[&str]) -> Option<View> {
    if segs.len() < 5 || !matches!(segs[3], "commit" | "branch" | "tag") {
        return None;
    }
    match segs[2] {
        "src" => Some(View::Blob),
        "raw" | "media" => Some(View::Raw),
        "blame" => Some(View::Blame),
        _ => None,
    }
}

/// bitbucket.org: `OWNER/REPO/{src,raw,annotate}/REV/PATH`, `OWNER/REPO/commits/REV`.
fn bitbucket<'a>(segs: &'a [&'a str]) -> Option<Parts<'a>> {
    let repo = segs.get(..2)?;
    let view = match segs.get(2).copied() {
        Some("src") => View::Blob,
        Some("raw") => View::Raw,
        Some("annotate") => View::Blame,
        Some("commits") => View::Commit,
        _ => return Some(Parts::repo(repo)),
    };
    match segs.get(3) {
        Some(rev) => Some(Parts::at(repo, view, rev, &segs[4..])),
        None => Some(Parts::repo(repo)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `FORGE REPO VIEW REV DOC` for `HOST/PATH` (`-` for nothing), or
    /// `FORGE none` when the grammar finds no repository.
    fn describe(url: &str) -> String {
        let (host, path) = url.split_once('/').unwrap_or((url, ""));
        let segs: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
        let forge = forge_of(host, &segs);
        let Some(p) = read(forge, &segs) else {
            return format!("{forge:?} none");
        };
        let or_dash = |s: String| if s.is_empty() { "-".to_string() } else { s };
        format!(
            "{forge:?} {} {} {} {}",
            p.repo.join("/"),
            p.view.map_or("-".into(), |v| format!("{v:?}")),
            or_dash(p.rev.clone().unwrap_or_default()),
            or_dash(p.doc.join("/")),
        )
    }

    fn check(cases: &[(&str, &str)]) {
        for (url, want) in cases {
            assert_eq!(describe(url), *want, "{url}");
        }
    }

    #[test]
    fn github_grammar() {
        check(&[
            ("github.com/o/r", "GitHub o/r - - -"),
            ("github.com/o/r.git", "GitHub o/r.git - - -"),
            (
                "github.com/o/r/blob/REV/a/b.md",
                "GitHub o/r Blob REV a/b.md",
            ),
            ("github.com/o/r/raw/REV/a.json", "GitHub o/r Raw REV a.json"),
            ("github.com/o/r/tree/REV/bench", "GitHub o/r Tree REV bench"),
            ("github.com/o/r/blame/REV/a.md", "GitHub o/r Blame REV a.md"),
            ("github.com/o/r/commit/REV", "GitHub o/r Commit REV -"),
            (
                "github.com/o/r/blob/main/-/x.md",
                "GitHub o/r Blob main -/x.md",
            ),
            ("github.com/o/r/issues/3", "GitHub o/r - - -"),
            ("github.com/o/r/blob", "GitHub o/r - - -"),
            ("github.com/onlyowner", "GitHub none"),
            ("ghe.example/o/r/blob/REV/a.md", "GitHub o/r Blob REV a.md"),
            (
                "raw.githubusercontent.com/o/r/REV/x/y.md",
                "GitHubRaw o/r Raw REV x/y.md",
            ),
            (
                "raw.githubusercontent.com/o/r/refs/heads/main/x.md",
                "GitHubRaw o/r Raw refs/heads/main x.md",
            ),
            (
                "raw.githubusercontent.com/o/r/refs/tags/v1/x.md",
                "GitHubRaw o/r Raw refs/tags/v1 x.md",
            ),
            ("raw.githubusercontent.com/o/r", "GitHubRaw none"),
        ]);
    }

    #[test]
    fn gitlab_grammar() {
        check(&[
            ("gitlab.com/g/p", "GitLab g/p - - -"),
            (
                "gitlab.com/g/sub/p/-/blob/REV/docs/r.md",
                "GitLab g/sub/p Blob REV docs/r.md",
            ),
            ("gitlab.com/g/p/-/raw/REV/a.csv", "GitLab g/p Raw REV a.csv"),
            ("gitlab.com/g/p/-/tree/REV", "GitLab g/p Tree REV -"),
            (
                "gitlab.com/g/p/-/blame/REV/a.md",
                "GitLab g/p Blame REV a.md",
            ),
            ("gitlab.com/g/p/-/commit/REV", "GitLab g/p Commit REV -"),
            ("gitlab.com/g/p/-/issues/4", "GitLab g/p - - -"),
            ("gitlab.com/g/-/blob/REV/a", "GitLab none"),
            ("gitlab.com/g/p/blob/REV/a.md", "GitLab g/p Blob REV a.md"),
            (
                "git.corp.example/a/b/c/d/-/blob/REV/x",
                "GitLab a/b/c/d Blob REV x",
            ),
            ("gitlab.example/g/p", "GitLab g/p - - -"),
        ]);
    }

    #[test]
    fn gitea_grammar() {
        check(&[
            ("codeberg.org/o/r", "Gitea o/r - - -"),
            (
                "codeberg.org/o/r/src/commit/REV/README.md",
                "Gitea o/r Blob REV README.md",
            ),
            (
                "codeberg.org/o/r/src/branch/main/a/b.md",
                "Gitea o/r Blob main a/b.md",
            ),
            ("codeberg.org/o/r/src/tag/v1/a.md", "Gitea o/r Blob v1 a.md"),
            (
                "codeberg.org/o/r/raw/commit/REV/a.json",
                "Gitea o/r Raw REV a.json",
            ),
            (
                "codeberg.org/o/r/media/branch/main/w.bin",
                "Gitea o/r Raw main w.bin",
            ),
            (
                "codeberg.org/o/r/blame/commit/REV/a.md",
                "Gitea o/r Blame REV a.md",
            ),
            ("codeberg.org/o/r/src/commit", "Gitea o/r - - -"),
            (
                "git.example/o/r/src/commit/REV/a.md",
                "Gitea o/r Blob REV a.md",
            ),
            ("forgejo.example/o/r", "Gitea o/r - - -"),
            ("codeberg.org/o", "Gitea none"),
        ]);
    }

    #[test]
    fn hugging_face_grammar() {
        check(&[
            ("huggingface.co/org/model", "HuggingFace org/model - - -"),
            (
                "huggingface.co/org/model/blob/REV/README.md",
                "HuggingFace org/model Blob REV README.md",
            ),
            (
                "huggingface.co/org/model/resolve/REV/w/m.safetensors",
                "HuggingFace org/model Raw REV w/m.safetensors",
            ),
            (
                "huggingface.co/org/model/tree/REV",
                "HuggingFace org/model Tree REV -",
            ),
            (
                "huggingface.co/org/model/commit/REV",
                "HuggingFace org/model Commit REV -",
            ),
            (
                "huggingface.co/datasets/org/ds/resolve/REV/data.csv",
                "HuggingFace datasets/org/ds Raw REV data.csv",
            ),
            (
                "huggingface.co/datasets/org/ds",
                "HuggingFace datasets/org/ds - - -",
            ),
            (
                "huggingface.co/spaces/org/app/blob/REV/app.py",
                "HuggingFace spaces/org/app Blob REV app.py",
            ),
            // Repositories from before namespaces.
            (
                "huggingface.co/gpt2/resolve/REV/config.json",
                "HuggingFace gpt2 Raw REV config.json",
            ),
            (
                "huggingface.co/datasets/squad/blob/REV/README.md",
                "HuggingFace datasets/squad Blob REV README.md",
            ),
            // Two segments are a namespaced repository, whatever their names.
            (
                "huggingface.co/org/tree/blob/REV/a",
                "HuggingFace org/tree Blob REV a",
            ),
            (
                "huggingface.co/gpt2/resolve",
                "HuggingFace gpt2/resolve - - -",
            ),
            (
                "hf.co/org/model/blob/REV/a.md",
                "HuggingFace org/model Blob REV a.md",
            ),
            (
                "huggingface.co/org/model/discussions/3",
                "HuggingFace org/model - - -",
            ),
            ("huggingface.co/gpt2", "HuggingFace none"),
            ("huggingface.co/datasets/org", "HuggingFace none"),
        ]);
    }

    #[test]
    fn bitbucket_grammar() {
        check(&[
            ("bitbucket.org/o/r", "Bitbucket o/r - - -"),
            (
                "bitbucket.org/o/r/src/REV/docs/a.md",
                "Bitbucket o/r Blob REV docs/a.md",
            ),
            (
                "bitbucket.org/o/r/raw/REV/a.json",
                "Bitbucket o/r Raw REV a.json",
            ),
            (
                "bitbucket.org/o/r/annotate/REV/a.md",
                "Bitbucket o/r Blame REV a.md",
            ),
            (
                "bitbucket.org/o/r/commits/REV",
                "Bitbucket o/r Commit REV -",
            ),
            ("bitbucket.org/o/r/src", "Bitbucket o/r - - -"),
            ("bitbucket.org/o/r/pull-requests/1", "Bitbucket o/r - - -"),
            ("bitbucket.org/o", "Bitbucket none"),
        ]);
    }
}
