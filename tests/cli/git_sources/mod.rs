//! Pinned git sources: fetching them into the cache (`fetch`, the library's
//! `pinaudit::fetch` called directly) and auditing them end to end (`audit`,
//! the binary), over `git daemon`, smart HTTP and `file://` on loopback.

mod audit;
mod fetch;
