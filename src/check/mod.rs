//! Checks: one file per family of finding codes, each code named as DESIGN.md names it.
//!
//! Record-level checks ([`record_checks`]) need nothing but the record. Source and
//! claim checks need the document at its revision and run after the fetch.

pub mod artifacts;
pub mod citation;
pub mod hashes;
pub mod location;
pub mod values;

use crate::finding::Finding;
use crate::record::Record;

/// Every check that a record alone can answer, in a fixed order.
pub fn record_checks(record: &Record) -> Vec<Finding> {
    let mut out = Vec::new();
    citation::check(record, &mut out);
    hashes::check(record, &mut out);
    values::check(record, &mut out);
    artifacts::check(record, &mut out);
    out
}
