//! Value-on-line matching (filled in by the matcher work).
