//! `--format json`: the frozen `pinaudit/report/v1` document.
//!
//! Written as serde_json's pretty printer writes the whole [`super::Report`]:
//! each record and each finding is serialised on its own by the same pretty
//! printer started at the depth it has in the document, the head and tail around them are the
//! document serialised with markers in place of the two lists.

use serde::Serialize;

use super::{FindingReport, Out, RecordReport, RenderOptions, Streamed, Summary, Tool, Totals};

pub(crate) const FORMAT: &dyn Streamed = &Json;

struct Json;

/// Stands in the serialised head for the list of records, then of findings.
const RECORDS: &str = "@pinaudit-records@";
const FINDINGS: &str = "@pinaudit-findings@";

/// The v1 document with markers for its lists, in the order of its keys.
#[derive(Serialize)]
struct Skeleton<'a> {
    schema: &'static str,
    tool: &'a Tool,
    generated_at: &'a str,
    summary: &'a Summary,
    records: &'static str,
    findings: &'static str,
}

/// The document around its lists: before the records, between them and the
/// findings, after the findings.
fn skeleton(totals: &Totals) -> [String; 3] {
    let whole = serde_json::to_string_pretty(&Skeleton {
        schema: super::v1::SCHEMA,
        tool: &totals.tool,
        generated_at: &totals.generated_at,
        summary: &totals.summary,
        records: RECORDS,
        findings: FINDINGS,
    })
    .unwrap_or_default();
    let (head, rest) = whole
        .split_once(&format!("\"{RECORDS}\""))
        .unwrap_or((&whole, ""));
    let (between, tail) = rest
        .split_once(&format!("\"{FINDINGS}\""))
        .unwrap_or((rest, ""));
    [head.to_string(), between.to_string(), format!("{tail}\n")]
}

/// Writes `value` as pretty JSON, as an element of a list at `depth` (two
/// spaces per level), into `out`: serialised into one buffer, then written
/// once.
pub(super) fn element(value: &impl Serialize, depth: usize, out: &mut Out) {
    let mut buf = Vec::with_capacity(4096);
    buf.extend(std::iter::repeat_n(b' ', 2 * depth));
    let mut ser = serde_json::Serializer::with_formatter(&mut buf, Deep::at(depth));
    match value.serialize(&mut ser) {
        Ok(()) => out.push_bytes(&buf),
        Err(e) => out.fail(e.into()),
    }
}

/// serde_json's pretty printer (two spaces a level) starting `depth` levels
/// in: the bytes it writes are those of `to_writer_pretty` with the indent put
/// after every newline, as a value nested that deep in the whole document.
struct Deep {
    level: usize,
    has_value: bool,
}

impl Deep {
    fn at(depth: usize) -> Deep {
        Deep {
            level: depth,
            has_value: false,
        }
    }

    fn newline<W: ?Sized + std::io::Write>(&self, w: &mut W, sep: &[u8]) -> std::io::Result<()> {
        w.write_all(sep)?;
        for _ in 0..self.level {
            w.write_all(b"  ")?;
        }
        Ok(())
    }

    fn open<W: ?Sized + std::io::Write>(&mut self, w: &mut W, c: &[u8]) -> std::io::Result<()> {
        self.level += 1;
        self.has_value = false;
        w.write_all(c)
    }

    fn close<W: ?Sized + std::io::Write>(&mut self, w: &mut W, c: &[u8]) -> std::io::Result<()> {
        self.level -= 1;
        if self.has_value {
            self.newline(w, b"\n")?;
        }
        w.write_all(c)
    }
}

impl serde_json::ser::Formatter for Deep {
    fn begin_array<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.open(w, b"[")
    }

    fn end_array<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.close(w, b"]")
    }

    fn begin_array_value<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.newline(w, if first { b"\n" } else { b",\n" })
    }

    fn end_array_value<W: ?Sized + std::io::Write>(&mut self, _: &mut W) -> std::io::Result<()> {
        self.has_value = true;
        Ok(())
    }

    fn begin_object<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.open(w, b"{")
    }

    fn end_object<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.close(w, b"}")
    }

    fn begin_object_key<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.newline(w, if first { b"\n" } else { b",\n" })
    }

    fn begin_object_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        w.write_all(b": ")
    }

    fn end_object_value<W: ?Sized + std::io::Write>(&mut self, _: &mut W) -> std::io::Result<()> {
        self.has_value = true;
        Ok(())
    }
}

/// What comes before an element of a JSON array written one element per
/// line (the first after the opening bracket's line).
pub(super) fn array_separator(first: bool) -> &'static str {
    if first {
        "\n"
    } else {
        ",\n"
    }
}

impl Streamed for Json {
    fn name(&self) -> &'static str {
        "json"
    }

    fn sections(&self) -> usize {
        2
    }

    fn head_needs_totals(&self) -> bool {
        true
    }

    fn grouped(&self) -> bool {
        false
    }

    fn separator(&self, first: bool) -> &'static str {
        array_separator(first)
    }

    fn record(&self, r: &RecordReport, _: &[&FindingReport], _: &RenderOptions, parts: &mut [Out]) {
        element(r, 2, &mut parts[0]);
    }

    fn findings(&self, findings: &[&FindingReport], _: &[&super::RecordReport], _: &RenderOptions, parts: &mut [Out]) {
        for (i, f) in findings.iter().enumerate() {
            if i > 0 {
                parts[1].push_str(",\n");
            }
            element(f, 2, &mut parts[1]);
        }
    }

    fn open(&self, section: usize, totals: &Totals, _: &RenderOptions, out: &mut Out) {
        let [head, between, _] = skeleton(totals);
        out.push_str(if section == 0 { &head } else { &between });
        out.push('[');
    }

    fn close(&self, section: usize, empty: bool, totals: &Totals, _: &RenderOptions, out: &mut Out) {
        out.push_str(if empty { "]" } else { "\n  ]" });
        if section == 1 {
            let [_, _, tail] = skeleton(totals);
            out.push_str(&tail);
        }
    }
}
