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
/// `pub(crate) fn write(report: &Report, opts: &RenderOptions, out: &mut Out)`, which
/// writes as it goes (nothing is held whole: a report of 100,000 records is
/// hundreds of megabytes). A new format is its file plus one line here.
macro_rules! formats {
    ($( $variant:ident => $module:ident, )*) => {
        $( pub mod $module; )*

        /// An output format, as `--format` names it.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
        pub(crate) enum Format { $( $variant, )* }

        /// Writes a report in a format into `w` (which should be buffered).
        pub(crate) fn write(
            report: &Report,
            format: Format,
            opts: &RenderOptions,
            w: &mut dyn std::io::Write,
        ) -> std::io::Result<()> {
            let mut out = Out::new(w);
            match format { $( Format::$variant => $module::write(report, opts, &mut out), )* }
            out.finish()
        }
    };
}

/// Where a renderer writes: `write!`/`writeln!` (as into a `String`) or bytes
/// through [`Out::io`], passed straight on to the writer. The first error stops
/// the writing and is what [`write`] returns; renderers need not check each write.
pub(crate) struct Out<'a> {
    w: &'a mut dyn std::io::Write,
    error: Option<std::io::Error>,
}

impl<'a> Out<'a> {
    pub(crate) fn new(w: &'a mut dyn std::io::Write) -> Out<'a> {
        Out { w, error: None }
    }

    pub(crate) fn push_str(&mut self, s: &str) {
        let _ = std::fmt::Write::write_str(self, s);
    }

    pub(crate) fn push(&mut self, c: char) {
        self.push_str(c.encode_utf8(&mut [0; 4]));
    }

    /// The writer, for a renderer that serialises straight into it; an error it
    /// gives is passed to [`Out::fail`].
    pub(crate) fn io(&mut self) -> &mut dyn std::io::Write {
        self.w
    }

    pub(crate) fn fail(&mut self, e: std::io::Error) {
        self.error.get_or_insert(e);
    }

    fn finish(self) -> std::io::Result<()> {
        match self.error {
            Some(e) => Err(e),
            None => self.w.flush(),
        }
    }
}

impl std::fmt::Write for Out<'_> {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        if self.error.is_some() {
            return Err(std::fmt::Error);
        }
        self.w.write_all(s.as_bytes()).map_err(|e| {
            self.error = Some(e);
            std::fmt::Error
        })
    }
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
