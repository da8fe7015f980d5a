//! pinaudit: audit published figures against the pinned sources they cite.
//!
//! The binary is a thin shell over this library: [`input`] reads records,
//! [`check`] judges them, [`audit`] runs the pipeline, [`report`] renders.

pub mod audit;
pub mod check;
pub mod cli;
pub mod commands;
pub mod explain;
pub mod fetch;
pub mod finding;
pub mod input;
pub mod matcher;
pub mod record;
pub mod report;
pub mod show;
pub mod sources;
pub mod url;
