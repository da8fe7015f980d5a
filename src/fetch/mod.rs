//! Git cache (filled in by the fetch work).
