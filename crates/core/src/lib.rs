//! pinaudit's core: what a record says and how it is judged, without I/O.
//!
//! The record model ([`record`]), the one URL model ([`url`]), the matcher that
//! finds a figure on a line ([`matcher`]), the checks that turn facts into
//! findings ([`check`]), the code table ([`codes`]), the domain result of an
//! audit ([`result`]) and the durable citation of a cited document ([`swhid`]).
//! Cited documents come in through the [`provider`] traits and remembered
//! answers through the [`memo`] traits; the `pinaudit-fetch` crate implements
//! both. This crate depends on no git, HTTP, async runtime or terminal
//! library, so a check cannot reach the network or the screen.

pub mod check;
pub mod codes;
pub mod error;
pub mod escape;
pub mod finding;
pub mod fingerprint;
pub mod hash;
pub mod matcher;
pub mod memo;
pub mod provider;
pub mod record;
pub mod result;
pub mod swhid;
pub mod url;
