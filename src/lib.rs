//! pinaudit: audit published figures against the pinned sources they cite.

pub mod fetch;
pub mod matcher;
