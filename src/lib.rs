//! pinaudit: audit published figures against the pinned sources they cite.
//!
//! The binary is a thin shell over this library: [`input`] reads records,
//! [`check`] judges them, [`audit`] runs the pipeline, [`report`] renders.

pub mod audit;
pub mod cache_key;
pub mod changed;
pub(crate) mod check;
pub mod cli;
pub mod codes;
pub mod commands;
pub mod config;
pub mod diff;
pub mod exit;
pub(crate) mod explain;
pub mod fetch;
pub mod finding;
pub mod fingerprint;
pub mod input;
pub mod matcher;
pub mod merge;
pub mod net;
pub mod par;
pub(crate) mod pin;
pub mod provider;
pub mod record;
pub mod report;
pub mod result;
pub mod shard;
pub(crate) mod show;
pub(crate) mod sources;
pub mod store;
pub mod url;

#[doc(hidden)]
pub mod fuzz_entry;
