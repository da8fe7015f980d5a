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
    /// `-v`: the text report lists every source and claim (SWHIDs included),
    /// not only the problems and one line of counts a record.
    pub(crate) verbose: bool,
}

/// Every output format: one renderer module each. A streamed format (`stream`)
/// has a `pub(crate) const FORMAT: &dyn Streamed` that renders a report record by
/// record ([`Streamed`]); a whole one (`whole`) has
/// `pub(crate) fn write(report: &Report, opts: &RenderOptions, out: &mut Out)`.
/// Either writes as it goes (nothing is held whole: a report of 100,000
/// records is hundreds of megabytes). A new format is its file plus one line here.
macro_rules! formats {
    (stream { $( $variant:ident => $module:ident, )* } whole { $( $wvariant:ident => $wmodule:ident, )* }) => {
        $( pub mod $module; )*
        $( pub mod $wmodule; )*

        /// An output format, as `--format` names it.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
        pub(crate) enum Format { $( $variant, )* $( $wvariant, )* }

        impl Format {
            /// How the format renders a report record by record, if it does.
            pub(crate) fn streamed(self) -> Option<&'static dyn Streamed> {
                match self {
                    $( Format::$variant => Some($module::FORMAT), )*
                    _ => None,
                }
            }
        }

        /// Writes a report in a format into `w` (which should be buffered).
        pub(crate) fn write(
            report: &Report,
            format: Format,
            opts: &RenderOptions,
            w: &mut dyn std::io::Write,
        ) -> std::io::Result<()> {
            let mut out = Out::new(w);
            match format {
                $( Format::$variant => stream::whole($module::FORMAT, report, opts, &mut out), )*
                $( Format::$wvariant => $wmodule::write(report, opts, &mut out), )*
            }
            out.finish()
        }
    };
}

mod stream;
pub(crate) use stream::{Fragment, KeptPartBroken, Spooled, Style, Totals};

/// A format rendered record by record: each record's part is rendered on the
/// worker that checked it, as soon as it is checked ([`Streamed::record`]), and
/// written in record order; what only the end knows (the summary, the
/// completeness) goes into the head and tail of each section.
///
/// The body is one or more sections (JSON: the records, then the findings); each
/// record gives one fragment per section, written between the section's
/// [`Streamed::open`] and [`Streamed::close`]. A section that follows a head
/// needing the totals is spooled to a temporary file and copied out at the end.
pub(crate) trait Streamed: Sync {
    /// The format as `--format` names it.
    fn name(&self) -> &'static str;

    /// How many sections the body has.
    fn sections(&self) -> usize {
        1
    }

    /// Whether the head (what [`Streamed::open`] writes before section 0) says
    /// what only the end knows. When it does not, `open(0)` is written first and
    /// must not read the totals it is given.
    fn head_needs_totals(&self) -> bool {
        false
    }

    /// Whether a record's findings are listed under it (text, Markdown), rather
    /// than in one list of every finding in report order (JSON, SARIF, github).
    fn grouped(&self) -> bool;

    /// Written before a section's fragment (`first`: the first one written there).
    fn separator(&self, _first: bool) -> &'static str {
        ""
    }

    /// A record's fragment: `parts[i]` is its part of section `i` (left empty
    /// when it has none there). `mine` are its findings when the format is
    /// [`Streamed::grouped`], else empty.
    fn record(
        &self,
        r: &RecordReport,
        mine: &[&FindingReport],
        opts: &RenderOptions,
        parts: &mut [Out],
    );

    /// Findings that are no record's: every finding in report order for a format
    /// that is not grouped, else those of inputs that yielded no record. `about`
    /// are the records they may be about (a record's own findings: that record;
    /// a whole report: every record; orphans: none), for what a finding shows of
    /// its source.
    fn findings(
        &self,
        findings: &[&FindingReport],
        about: &[&RecordReport],
        opts: &RenderOptions,
        parts: &mut [Out],
    );

    /// What comes before section `i` (for 0, the head).
    fn open(&self, section: usize, totals: &Totals, opts: &RenderOptions, out: &mut Out);

    /// What comes after section `i` (`empty`: nothing was written in it; for
    /// the last, the tail).
    fn close(
        &self,
        section: usize,
        empty: bool,
        totals: &Totals,
        opts: &RenderOptions,
        out: &mut Out,
    );
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

    /// Bytes already rendered (a fragment, a spooled section).
    pub(crate) fn push_bytes(&mut self, b: &[u8]) {
        if self.error.is_none() {
            if let Err(e) = self.w.write_all(b) {
                self.error = Some(e);
            }
        }
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

    pub(crate) fn finish(self) -> std::io::Result<()> {
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
    stream {
        Text => text,
        Json => json,
        Markdown => markdown,
        Sarif => sarif,
        Github => github,
    }
    whole {
        InToto => intoto,
        Html => html,
    }
}

pub use crate::record::short_rev;
