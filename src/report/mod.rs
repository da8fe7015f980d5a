//! The audit report: the frozen `pinaudit/report/v1` model and its renderers.
//!
//! The report types here *are* the v1 JSON (`pinaudit/report/v1`): field names are frozen, new
//! fields may be added, none renamed or removed. Renderers only render; they never
//! decide severity or status.

pub use pinaudit_core::escape;
pub mod v1;

pub(crate) use v1::*;

/// How a renderer is asked to render.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct RenderOptions<'a> {
    /// Colour for a terminal (only formats meant for one use it).
    pub(crate) color: bool,
    /// The shard the report covers (SARIF names its run after it).
    pub(crate) shard: Option<crate::shard::Shard>,
    /// `--fail-on` (as the flag names it) and `--baseline`, which an in-toto
    /// statement records.
    pub(crate) fail_on: Option<&'static str>,
    pub(crate) baseline: Option<&'a std::path::Path>,
}

/// Every output format: one renderer module each, with
/// `pub fn render(report: &Report, opts: &RenderOptions) -> String`. A new format is
/// its file plus one line here.
macro_rules! formats {
    ($( $variant:ident => $module:ident, )*) => {
        $( pub mod $module; )*

        /// An output format, as `--format` names it.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
        pub(crate) enum Format { $( $variant, )* }

        /// Renders a report in a format.
        pub(crate) fn render(report: &Report, format: Format, opts: &RenderOptions) -> String {
            match format { $( Format::$variant => $module::render(report, opts), )* }
        }
    };
}

formats! {
    Text => text,
    Json => json,
    Markdown => markdown,
    Sarif => sarif,
    Github => github,
    InToto => intoto,
    Html => html,
}

pub use crate::record::short_rev;
