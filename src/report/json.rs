//! `--format json`: the frozen `pinaudit/report/v1` document.
//!
//! Written as serde_json's pretty printer writes the whole [`super::Report`]:
//! each record and each finding is serialised on its own and indented to the
//! depth it has in the document (a newline in pretty JSON is always between
//! tokens: strings escape theirs), the head and tail around them are the
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
/// spaces per level), into `out`.
pub(super) fn element(value: &impl Serialize, depth: usize, out: &mut Out) {
    let indent = " ".repeat(2 * depth);
    out.push_str(&indent);
    let mut w = Indented {
        out,
        indent: indent.as_bytes(),
    };
    if let Err(e) = serde_json::to_writer_pretty(&mut w, value) {
        w.out.fail(e.into());
    }
}

/// Puts `indent` after every newline written through it.
struct Indented<'o, 'w, 'i> {
    out: &'o mut Out<'w>,
    indent: &'i [u8],
}

impl std::io::Write for Indented<'_, '_, '_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let mut rest = buf;
        while let Some(at) = rest.iter().position(|b| *b == b'\n') {
            self.out.push_bytes(&rest[..=at]);
            self.out.push_bytes(self.indent);
            rest = &rest[at + 1..];
        }
        self.out.push_bytes(rest);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Streamed for Json {
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
        if first {
            "\n"
        } else {
            ",\n"
        }
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
