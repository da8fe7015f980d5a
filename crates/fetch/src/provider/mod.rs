//! The providers of cited documents: the git cache ([`git::GitProvider`]) and web
//! documents over HTTP(S) around it ([`http::WithWeb`]). The traits and the types
//! they answer in are the core crate's, re-exported here.

pub mod git;
pub mod http;

pub use pinaudit_core::provider::*;
