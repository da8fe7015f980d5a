//! pinaudit: audit published figures against the pinned sources they cite.
//!
//! The binary is a thin shell over this library: [`input`] reads records,
//! [`check`] judges them, [`audit`] runs the pipeline, [`report`] renders.
//! Records, checks and the domain result are the `pinaudit-core` crate's, the
//! cache, transports and stores the `pinaudit-fetch` crate's; their modules are
//! re-exported here under the names the commands use (see docs/architecture.md).

pub mod audit;
pub mod changed;
pub mod cli;
pub mod commands;
pub mod config;
pub mod diff;
pub mod exit;
pub(crate) mod explain;
pub mod input;
pub mod man;
pub mod merge;
pub mod par;
pub(crate) mod pin;
pub(crate) mod preserve;
pub(crate) mod progress;
pub mod report;
pub(crate) mod reserve;
pub mod shard;
pub(crate) mod show;
pub(crate) mod show_html;
pub(crate) mod verify_statement;

pub use pinaudit_core::{check, codes, finding, fingerprint, matcher, record, result, swhid, url};
pub use pinaudit_fetch as fetch;
pub use pinaudit_fetch::{cache_key, net, provider, sources, store};

#[doc(hidden)]
pub mod fuzz_entry;
