//! Which sources are web documents, and what one is once fetched: the planner,
//! the citation checks and the web provider all ask.

/// A web document as fetched (or revalidated).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebDoc {
    pub bytes: Vec<u8>,
    pub sha256: String,
    pub etag: Option<String>,
    pub last_modified: Option<String>,
    /// The server answered `304 Not Modified`: the cached body was used.
    pub revalidated: bool,
}

/// Whether `url` is an archived snapshot (`web.archive.org/web/<14 digits>/…`)
/// or content-addressed (`/ipfs/<cid>`): what it shows cannot change.
pub fn is_immutable(url: &str) -> bool {
    let Ok(u) = ::url::Url::parse(url) else {
        return false;
    };
    let mut segs = u.path_segments().into_iter().flatten();
    match u.host_str() {
        Some("web.archive.org") => {
            segs.next() == Some("web")
                && segs.next().is_some_and(|t| {
                    let digits = t.trim_end_matches(|c: char| c.is_ascii_alphabetic() || c == '_');
                    digits.len() == 14 && digits.bytes().all(|b| b.is_ascii_digit())
                })
        }
        _ => segs.next() == Some("ipfs") && segs.next().is_some_and(|c| !c.is_empty()),
    }
}

/// Whether a source cites a web document: an `http(s)` URL that no forge grammar
/// reads as a pinned document, and no repository given beside it.
pub fn web_url(s: &crate::record::Source) -> Option<String> {
    let url = s.url.as_deref()?.trim();
    if s.repository.is_some() || !(url.starts_with("https://") || url.starts_with("http://")) {
        return None;
    }
    if let Some(f) = s.url_parsed() {
        let known = matches!(
            f.host.as_str(),
            "github.com"
                | "raw.githubusercontent.com"
                | "gitlab.com"
                | "huggingface.co"
                | "hf.co"
                | "codeberg.org"
                | "bitbucket.org"
        );
        if known || f.revision.is_some() || f.view.is_some() {
            return None;
        }
    }
    Some(url.split('#').next().unwrap_or(url).to_string())
}
