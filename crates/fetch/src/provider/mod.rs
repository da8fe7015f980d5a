//! The providers of cited documents, each registered in the core's
//! [`Router`]: the git cache ([`git::GitProvider`]) and web documents over
//! HTTP(S) ([`http::WebProvider`]) and Software Heritage, asked for what a
//! forge lost ([`swh::SwhProvider`]), and the Wayback Machine, asked for a
//! web page its host lost ([`wayback::WaybackProvider`]). The traits and the types they answer in are
//! the core crate's, re-exported here.

pub mod git;
pub mod http;
pub mod swh;
mod swh_proof;
pub mod wayback;

pub use pinaudit_core::provider::*;

/// What the providers of an audit are built from.
pub struct Setup {
    /// The cache directory.
    pub cache: std::path::PathBuf,
    /// The key the cache's stores are authenticated under (the web and
    /// archive options carry the same).
    pub key: crate::cache_key::CacheKey,
    /// How git remotes are synced.
    pub plan: crate::sources::SyncPlan,
    /// The largest git document read, in bytes (`--max-document-size`).
    pub max_document_size: u64,
    /// How web documents are fetched.
    pub web: http::WebOptions,
    /// Who is told how fetching web documents goes (syncing remotes is told
    /// through `plan`); `None`: nobody watches.
    pub progress: Option<std::sync::Arc<dyn crate::progress::Progress>>,
    /// How Software Heritage is asked for what a forge lost; `None`: it is not
    /// (`--archive none`).
    pub swh: Option<swh::ArchiveOptions>,
    /// How the Wayback Machine is asked for a web document its host lost;
    /// `None`: it is not.
    pub wayback: Option<swh::ArchiveOptions>,
    /// What makes the whole-record results (the binary's derivation of
    /// them): a record memo written by another build reads as empty, so its
    /// entries are not carried along beside this build's.
    pub records_version: String,
    /// What makes the whole-record report fragments (the binary's encoding
    /// and the digest of its sources): a fragment store written by another
    /// build reads as empty.
    pub fragments_version: String,
    /// Whether records are looked up whole first (their report fragments,
    /// `CACHE/fragments.store`, read on a thread of their own from the
    /// start): then the record results are read only when a record is
    /// checked. Else the other way round.
    pub fragments_first: bool,
}

/// The providers of an audit, registered in the order their answers are
/// preferred: each kind of question goes to the first provider that answers it.
/// A new provider is its own module here and one line below.
pub fn register(setup: Setup) -> Router {
    let cache = crate::GitCache::with_key(&setup.cache, setup.key);
    let git = git::GitProvider::new(
        cache,
        setup.plan,
        &setup.records_version,
        &setup.fragments_version,
        setup.fragments_first,
    )
    .with_max_document_size(setup.max_document_size);
    let router = Router::new()
        .with(git)
        .with(http::WebProvider::new(setup.web, setup.progress));
    let router = match setup.swh {
        Some(options) => router.with(swh::SwhProvider::new(options)),
        None => router,
    };
    match setup.wayback {
        Some(options) => router.with(wayback::WaybackProvider::new(options)),
        None => router,
    }
}
