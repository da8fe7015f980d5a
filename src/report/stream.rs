//! A report written record by record ([`super::Streamed`]): each record's
//! fragment is rendered where it was checked and written here in record order,
//! so a report of any size holds no more than the records being checked. What
//! a format says before its records but only the end knows (JSON's and
//! Markdown's summary) is written last, with the records spooled meanwhile to
//! an unnamed temporary file (in the cache, else the system's temporary
//! directory, else memory) and copied out after it: the v1 JSON keeps its key
//! order, `summary` before `records`.

use std::io::{Seek, Write};
use std::path::Path;

use super::v1::{self, ClaimStatus, Counts, FindingReport, Report, SourceStatus, Summary, Tool};
use super::{Out, RenderOptions, Streamed};
use crate::finding::{Finding, Severity};
use crate::result::{Leftover, RecordResult};
use pinaudit_core::memo::{Dec, Enc};

/// What the head and tail of a report say about all of it.
#[derive(Debug, Clone, Default)]
pub(crate) struct Totals {
    pub(crate) tool: Tool,
    pub(crate) generated_at: String,
    pub(crate) summary: Summary,
    /// The most severe finding that counts.
    pub(crate) worst: Option<Severity>,
    /// The oldest `stale_since` of any source.
    pub(crate) oldest_stale: Option<String>,
}

impl Totals {
    /// The totals of a report held whole.
    pub(crate) fn of(report: &Report) -> Totals {
        Totals {
            tool: report.tool.clone(),
            generated_at: report.generated_at.clone(),
            summary: report.summary.clone(),
            worst: report.worst(),
            oldest_stale: report
                .records
                .iter()
                .flat_map(|r| &r.sources)
                .filter_map(|s| s.stale_since.clone())
                .min(),
        }
    }

    /// Counts one record in (its report and its findings, all of them).
    fn add(&mut self, r: &v1::RecordReport, findings: &[FindingReport]) {
        let s = &mut self.summary;
        s.records += 1;
        s.sources += r.sources.len();
        s.claims += r.claims.len();
        s.verified_claims += r
            .claims
            .iter()
            .filter(|c| matches!(c.status, ClaimStatus::Verified | ClaimStatus::Rounded))
            .count();
        for src in &r.sources {
            s.unchecked_sources += usize::from(src.status == SourceStatus::Unchecked);
            if let Some(t) = &src.stale_since {
                s.stale_sources += 1;
                if self.oldest_stale.as_ref().is_none_or(|o| t < o) {
                    self.oldest_stale = Some(t.clone());
                }
            }
        }
        self.add_findings(findings);
    }

    fn add_findings(&mut self, findings: &[FindingReport]) {
        let s = &mut self.summary;
        for f in findings {
            count(&mut s.findings, f.severity);
            s.baseline_findings += usize::from(f.baseline);
            s.ignored_findings += usize::from(f.ignored.is_some());
            if f.counts() {
                self.worst = self.worst.max(Some(f.severity));
            }
        }
    }

    fn merge(&mut self, other: &Totals) {
        let (s, o) = (&mut self.summary, &other.summary);
        s.records += o.records;
        s.sources += o.sources;
        s.claims += o.claims;
        s.verified_claims += o.verified_claims;
        s.unchecked_sources += o.unchecked_sources;
        s.stale_sources += o.stale_sources;
        s.findings.error += o.findings.error;
        s.findings.warning += o.findings.warning;
        s.findings.note += o.findings.note;
        s.baseline_findings += o.baseline_findings;
        s.ignored_findings += o.ignored_findings;
        self.worst = self.worst.max(other.worst);
        if let Some(t) = &other.oldest_stale {
            if self.oldest_stale.as_ref().is_none_or(|o| t < o) {
                self.oldest_stale = Some(t.clone());
            }
        }
    }
}

fn count(c: &mut Counts, s: Severity) {
    match s {
        Severity::Error => c.error += 1,
        Severity::Warning => c.warning += 1,
        Severity::Note => c.note += 1,
    }
}

/// One record's part of a report, rendered, with what it adds to the totals.
pub(crate) struct Fragment {
    parts: Vec<Vec<u8>>,
    totals: Totals,
    /// Its findings left out below `--min-severity`.
    hidden: usize,
}

/// How a report is written: its format, the renderer's options and, for text
/// and github, the findings it leaves out (`--min-severity`; the counts still
/// include them).
#[derive(Clone, Copy)]
pub(crate) struct Style<'a> {
    pub(crate) format: &'static dyn Streamed,
    pub(crate) opts: RenderOptions<'a>,
    pub(crate) hide_below: Option<Severity>,
}

impl Style<'_> {
    /// Renders a checked record (on the worker that checked it): its report,
    /// its findings' reports (moved out of the result) and its fragment.
    pub(crate) fn fragment(&self, r: RecordResult) -> Fragment {
        let (record, findings) = v1::record_and_findings(r);
        let mut totals = Totals::default();
        totals.add(&record, &findings);
        let shown: Vec<&FindingReport> = findings
            .iter()
            .filter(|f| self.hide_below.is_none_or(|min| f.severity >= min))
            .collect();
        let hidden = findings.len() - shown.len();
        let parts = self.render(|format, outs| {
            if format.grouped() {
                format.record(&record, &shown, &self.opts, outs);
            } else {
                format.record(&record, &[], &self.opts, outs);
                format.findings(&shown, &[&record], &self.opts, outs);
            }
        });
        Fragment {
            parts,
            totals,
            hidden,
        }
    }

    fn render(&self, f: impl FnOnce(&dyn Streamed, &mut [Out])) -> Vec<Vec<u8>> {
        let mut parts = vec![Vec::new(); self.format.sections()];
        {
            let mut outs: Vec<Out> = parts
                .iter_mut()
                .map(|p| Out::new(p as &mut dyn Write))
                .collect();
            f(self.format, &mut outs);
        }
        parts
    }
}

impl Style<'_> {
    /// What a record's fragment depends on beyond the record's result: the
    /// format, how it renders, the findings it hides.
    pub(crate) fn depends(&self) -> Vec<u8> {
        let mut e = Enc::default();
        let o = &self.opts;
        e.str(self.format.name())
            .bool(o.color)
            .opt_str(o.shard.map(|s| s.to_string()).as_deref())
            .opt_str(o.fail_on)
            .opt_str(o.baseline.map(|b| b.display().to_string()).as_deref())
            .opt_severity(self.hide_below);
        e.0
    }
}

/// A fragment as the whole-record memo keeps it: its parts as rendered,
/// what it adds to the totals, how many of its findings it hides.
impl Fragment {
    pub(crate) fn encode(&self, e: &mut Enc) {
        // Compressed part by part (a JSON report about fourfold), each read
        // back straight into its own buffer.
        e.u32(self.parts.len() as u32);
        for p in &self.parts {
            e.bytes(&lz4_flex::compress_prepend_size(p));
        }
        let (mut summary, mut hidden) = (self.totals.summary.clone(), self.hidden);
        for n in counts(&mut summary, &mut hidden) {
            e.u64(*n as u64);
        }
        e.opt_severity(self.totals.worst)
            .opt_str(self.totals.oldest_stale.as_deref());
    }

    /// What [`Fragment::encode`] wrote, for a format of `sections` sections.
    pub(crate) fn decode(d: &mut Dec, sections: usize) -> Option<Fragment> {
        let n = d.u32()? as usize;
        if n != sections {
            return None;
        }
        let parts = (0..n)
            .map(|_| unpack(d.bytes()?))
            .collect::<Option<Vec<_>>>()?;
        let (mut totals, mut hidden) = (Totals::default(), 0);
        for n in counts(&mut totals.summary, &mut hidden) {
            *n = usize::try_from(d.u64()?).ok()?;
        }
        totals.worst = d.opt_severity()?;
        totals.oldest_stale = d.opt_string()?;
        Some(Fragment {
            parts,
            totals,
            hidden,
        })
    }
}

/// The counts a record adds to a report's summary, and the findings it hides,
/// in the order the whole-record memo keeps them (every field of the
/// summary is named: one the memo leaves out is left out on purpose).
fn counts<'a>(s: &'a mut Summary, hidden: &'a mut usize) -> [&'a mut usize; 12] {
    let Summary {
        records,
        sources,
        claims,
        verified_claims,
        unchecked_sources,
        stale_sources,
        complete: _,
        findings,
        baseline_findings,
        ignored_findings,
        baseline_resolved: _,
        baseline_not_rechecked: _,
    } = s;
    [
        records,
        sources,
        claims,
        verified_claims,
        unchecked_sources,
        stale_sources,
        &mut findings.error,
        &mut findings.warning,
        &mut findings.note,
        baseline_findings,
        ignored_findings,
        hidden,
    ]
}

/// A part compressed by [`Fragment::encode`], when it decompresses to no more
/// than LZ4 can make of its size (the size it names is never trusted
/// further).
fn unpack(packed: &[u8]) -> Option<Vec<u8>> {
    let size = u32::from_le_bytes(packed.get(..4)?.try_into().ok()?) as usize;
    if size > packed.len().saturating_mul(255) {
        return None;
    }
    lz4_flex::decompress_size_prepended(packed).ok()
}

/// Where one section of the body goes until it can be written.
enum Section {
    /// Straight to the output.
    Direct,
    File(std::io::BufWriter<std::fs::File>),
    Memory(Vec<u8>),
}

impl Section {
    fn spool(dir: Option<&Path>) -> Section {
        let file = dir
            .and_then(|d| tempfile::tempfile_in(d).ok())
            .or_else(|| tempfile::tempfile().ok());
        match file {
            Some(f) => Section::File(std::io::BufWriter::with_capacity(1 << 16, f)),
            None => Section::Memory(Vec::new()),
        }
    }
}

/// A report being written, fragment by fragment, in record order.
pub(crate) struct Spooled<'w, 's> {
    style: Style<'s>,
    out: Out<'w>,
    sections: Vec<Section>,
    written: Vec<bool>,
    totals: Totals,
    hidden: usize,
    error: Option<std::io::Error>,
}

impl<'w, 's> Spooled<'w, 's> {
    /// Starts the report in `w`: its head, if it is written first; sections
    /// spooled in `spool_dir` when given (an unnamed temporary file, gone
    /// when closed).
    pub(crate) fn new(
        style: Style<'s>,
        w: &'w mut dyn Write,
        spool_dir: Option<&Path>,
    ) -> Spooled<'w, 's> {
        let format = style.format;
        let mut out = Out::new(w);
        let sections = (0..format.sections())
            .map(|i| match i == 0 && !format.head_needs_totals() {
                true => Section::Direct,
                false => Section::spool(spool_dir),
            })
            .collect();
        if !format.head_needs_totals() {
            format.open(0, &Totals::default(), &style.opts, &mut out);
        }
        Spooled {
            style,
            out,
            sections,
            written: vec![false; format.sections()],
            totals: Totals::default(),
            hidden: 0,
            error: None,
        }
    }

    /// Writes the next record's fragment.
    pub(crate) fn push(&mut self, f: Fragment) {
        self.totals.merge(&f.totals);
        self.hidden += f.hidden;
        self.write_parts(f.parts);
    }

    fn write_parts(&mut self, parts: Vec<Vec<u8>>) {
        for (i, part) in parts.into_iter().enumerate() {
            if part.is_empty() {
                continue;
            }
            let sep = self.style.format.separator(!self.written[i]).as_bytes();
            self.written[i] = true;
            let done = match &mut self.sections[i] {
                Section::Direct => {
                    self.out.push_bytes(sep);
                    self.out.push_bytes(&part);
                    Ok(())
                }
                Section::File(w) => w.write_all(sep).and_then(|()| w.write_all(&part)),
                Section::Memory(v) => {
                    v.extend_from_slice(sep);
                    v.extend_from_slice(&part);
                    Ok(())
                }
            };
            if let Err(e) = done {
                self.error.get_or_insert(e);
            }
        }
    }

    /// The findings that are no record's (after every record), their reports
    /// given as they are.
    pub(crate) fn findings(&mut self, findings: &[FindingReport]) {
        self.totals.add_findings(findings);
        let shown: Vec<&FindingReport> = findings
            .iter()
            .filter(|f| self.style.hide_below.is_none_or(|min| f.severity >= min))
            .collect();
        self.hidden += findings.len() - shown.len();
        let style = self.style;
        let parts = style.render(|format, outs| format.findings(&shown, &[], &style.opts, outs));
        self.write_parts(parts);
    }

    /// [`Spooled::findings`] of the inputs that yielded no record.
    pub(crate) fn orphans(&mut self, findings: &[Finding]) {
        let reports: Vec<FindingReport> = findings.iter().map(FindingReport::from).collect();
        self.findings(&reports);
    }

    /// Ends the report: the head when it comes last, each spooled section, the
    /// tail. `complete` and `baseline_left` are the audit's. How many findings
    /// were left out below `--min-severity`.
    pub(crate) fn finish(
        mut self,
        generated_at: String,
        complete: bool,
        baseline_left: Option<Leftover>,
    ) -> std::io::Result<usize> {
        self.totals.generated_at = generated_at;
        self.totals.summary.complete = complete;
        self.totals.summary.baseline_resolved = baseline_left.map(|l| l.resolved);
        self.totals.summary.baseline_not_rechecked = baseline_left.map(|l| l.not_rechecked);
        self.finish_with_totals()
    }

    fn finish_with_totals(mut self) -> std::io::Result<usize> {
        let format = self.style.format;
        let (totals, opts) = (&self.totals, &self.style.opts);
        for (i, section) in std::mem::take(&mut self.sections).into_iter().enumerate() {
            if i > 0 || format.head_needs_totals() {
                format.open(i, totals, opts, &mut self.out);
            }
            match section {
                Section::Direct => {}
                Section::Memory(v) => self.out.push_bytes(&v),
                Section::File(w) => {
                    let copied = w
                        .into_inner()
                        .map_err(|e| e.into_error())
                        .and_then(|mut f| {
                            f.rewind()?;
                            copy_out(&mut f, self.out.io())
                        });
                    if let Err(e) = copied {
                        self.error.get_or_insert(e);
                    }
                }
            }
            format.close(i, !self.written[i], totals, opts, &mut self.out);
        }
        if let Some(e) = self.error {
            return Err(e);
        }
        self.out.finish().map(|()| self.hidden)
    }
}

/// Copies a spooled section to the output in large chunks: a few dozen reads
/// and writes for a report of tens of megabytes, each written past the
/// output's buffer, where `io::copy` through a `dyn Write` took 8 KiB at a time.
fn copy_out(from: &mut std::fs::File, to: &mut dyn Write) -> std::io::Result<()> {
    let mut buf = vec![0u8; 1 << 20];
    loop {
        match std::io::Read::read(from, &mut buf) {
            Ok(0) => return Ok(()),
            Ok(n) => to.write_all(&buf[..n])?,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

/// Writes a report held whole, through the same fragments as a streamed one
/// (the bytes are the same).
pub(crate) fn whole(
    format: &'static dyn Streamed,
    report: &Report,
    opts: &RenderOptions,
    out: &mut Out,
) {
    let style = Style {
        format,
        opts: *opts,
        hide_below: None,
    };
    let mut spooled = Spooled::new(style, out.io(), None);
    if format.grouped() {
        let grouped = report.findings_by_record();
        for (r, mine) in report.records.iter().zip(&grouped.records) {
            let parts = style.render(|f, outs| f.record(r, mine, opts, outs));
            spooled.write_parts(parts);
        }
        let parts = style.render(|f, outs| f.findings(&grouped.orphans, &[], opts, outs));
        spooled.write_parts(parts);
    } else {
        for r in &report.records {
            let parts = style.render(|f, outs| f.record(r, &[], opts, outs));
            spooled.write_parts(parts);
        }
        let all: Vec<&FindingReport> = report.findings.iter().collect();
        let records: Vec<&v1::RecordReport> = report.records.iter().collect();
        let parts = style.render(|f, outs| f.findings(&all, &records, opts, outs));
        spooled.write_parts(parts);
    }
    spooled.totals = Totals::of(report);
    if let Err(e) = spooled.finish_with_totals() {
        out.fail(e);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A kept fragment reads back as it was; a part that names a size LZ4
    /// cannot make of it, or does not decompress, reads as nothing (it is
    /// never allocated).
    #[test]
    fn a_kept_fragment_reads_back_and_a_bad_one_does_not() {
        let mut totals = Totals::default();
        totals.summary.records = 1;
        totals.summary.findings.warning = 3;
        totals.worst = Some(Severity::Warning);
        let f = Fragment {
            parts: vec![b"{\"id\": \"r\"}".repeat(50), Vec::new()],
            totals,
            hidden: 2,
        };
        let mut e = Enc::default();
        f.encode(&mut e);
        let back = Fragment::decode(&mut Dec(&e.0), 2).expect("reads back");
        assert_eq!(back.parts, f.parts);
        assert_eq!(back.hidden, 2);
        assert_eq!(back.totals.summary.findings.warning, 3);
        assert_eq!(back.totals.worst, Some(Severity::Warning));
        assert!(Fragment::decode(&mut Dec(&e.0), 3).is_none(), "sections");
        assert!(
            unpack(&[0xff, 0xff, 0xff, 0x7f, 1, 2, 3]).is_none(),
            "2 GiB"
        );
        assert!(
            unpack(&[200, 0, 0, 0, 0xff, 0xff, 0xff]).is_none(),
            "garbage"
        );
    }
}
