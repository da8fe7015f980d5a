//! The shape of a document around each line, read once per document in one forward
//! pass with one line of look-ahead: which table a line belongs to and whether it is
//! that table's header, the header of every cell (Markdown pipe tables, RST grid and
//! simple tables, HTML tables with `rowspan`/`colspan`, CSV/TSV), and the caption of
//! a table (a unit stated in the heading or prose above it). The rules are the module
//! doc of [`super`] ("Structure").
//!
//! The same [`Reader`] serves a document held in memory ([`Layout::new`]) and one read
//! as a stream ([`Stream`]), so both give every line the same context.

use std::ops::Range;
use std::sync::Arc;

use super::context::{self, Dim};

/// What the structure says about one line.
#[derive(Debug, Clone, Default)]
pub struct LineCtx {
    pub(super) part: Part,
    /// The table the line is a row, header or rule of.
    pub(super) table: Option<Arc<Table>>,
    /// HTML lines: where cells start and end on the line.
    pub(super) segments: Option<Arc<[Segment]>>,
    /// What the line's values stand under, outside tables: the names of the YAML items
    /// around a front-matter line (`- name: F1` … `value: 0.93`), or the prose line that
    /// introduces a list (`It achieves the following results on the evaluation set:`).
    pub(super) scope: Option<Arc<str>>,
}

/// The kind of a line.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) enum Part {
    #[default]
    Prose,
    /// A table's header row: its numbers are labels (`| tg 512 | pp 512 |`).
    Header,
    /// A table's rule (`|---|`, `+===+`, `=====  ====`).
    Rule,
    /// A body row of a table.
    Row,
}

/// An HTML cell boundary: from byte `start` of the line on, text is in cell `col`
/// (or outside any cell when `col` is `None`), a header cell when `header`.
#[derive(Debug, Clone, Copy)]
pub(super) struct Segment {
    start: u32,
    col: Option<u16>,
    header: bool,
}

/// A table: how its rows split into cells, and what its header says.
#[derive(Debug)]
pub(crate) struct Table {
    kind: Kind,
    /// The header cells' text, by column (empty when the table has no known header).
    header: Vec<String>,
    /// The dimension each header cell names (`Duration (s)`, `t/s`, `GPU Memory (MB)`).
    dims: Vec<Option<Dim>>,
    /// Columns whose header names what a row is (`Model`, `GPU`, `Framework`).
    label: Vec<bool>,
    /// The unit the table's caption states, for cells whose header states none.
    pub(super) caption: Option<Dim>,
}

#[derive(Debug)]
enum Kind {
    /// `| a | b |` (Markdown, and RST grid tables).
    Pipe,
    /// CSV or TSV, by its delimiter.
    Delimited(u8),
    /// `<td>` cells: columns come from the line's segments.
    Html,
    /// RST simple table: columns by byte ranges under the `===` runs.
    Simple(Vec<Range<usize>>),
    /// LaTeX `tabular`: cells split at unescaped `&`, a row ending at `\\`.
    Latex,
}

/// The cell a position of a line falls in.
#[derive(Debug, Clone)]
pub(super) struct Cell {
    pub(super) col: usize,
    /// Byte range of the cell's text in the line.
    pub(super) range: Range<usize>,
    /// A header cell (its numbers are labels).
    pub(super) header: bool,
}

impl Table {
    fn new(kind: Kind, header: Vec<String>, caption: Option<Dim>) -> Table {
        let label: Vec<bool> = header.iter().map(|h| is_label_header(h)).collect();
        // A label column (`GPU`, `Model`) names rows; it measures nothing.
        let dims = header
            .iter()
            .zip(&label)
            .map(|(h, l)| if *l { None } else { header_dim(h) })
            .collect();
        Table {
            kind,
            header,
            dims,
            label,
            caption,
        }
    }

    /// The header text of column `col`, when the table has one.
    pub(super) fn header_of(&self, col: usize) -> Option<&str> {
        self.header
            .get(col)
            .map(|h| h.trim())
            .filter(|h| !h.is_empty())
    }

    /// The dimension column `col`'s header names.
    pub(super) fn dim_of(&self, col: usize) -> Option<Dim> {
        self.dims.get(col).copied().flatten()
    }

    /// Whether some column's header names `dim`.
    pub(super) fn declares(&self, dim: Dim) -> bool {
        self.dims.contains(&Some(dim))
    }

    /// Some column's header names a dimension.
    pub(crate) fn has_dims(&self) -> bool {
        self.dims.iter().any(Option::is_some)
    }

    /// How many columns the header names.
    pub(super) fn columns(&self) -> usize {
        self.header.len()
    }

    /// Column `col` names what a row is (its numbers are parts of names).
    pub(super) fn is_label(&self, col: usize) -> bool {
        self.label.get(col).copied().unwrap_or(false)
    }
}

impl LineCtx {
    /// The cell of this line that byte `pos` falls in, for a line of a table.
    pub(super) fn cell(&self, line: &str, pos: usize) -> Option<Cell> {
        let header = self.part == Part::Header;
        if let Some(segments) = &self.segments {
            let k = segments.partition_point(|s| s.start as usize <= pos);
            let seg = segments.get(k.checked_sub(1)?)?;
            let end = segments
                .get(k)
                .map_or(line.len(), |s| (s.start as usize).min(line.len()));
            return Some(Cell {
                col: usize::from(seg.col?),
                range: (seg.start as usize).min(end)..end,
                header: seg.header,
            });
        }
        let table = self.table.as_ref()?;
        let mut cell = match &table.kind {
            Kind::Pipe => pipe_cell(line, pos)?,
            Kind::Delimited(d) => cell_at(delimited_cells(line, *d), pos)?,
            Kind::Simple(cols) => {
                let col = cols
                    .iter()
                    .rposition(|r| r.start <= pos)
                    .unwrap_or_default();
                let start = cols.get(col).map_or(0, |r| r.start).min(line.len());
                let end = cols
                    .get(col + 1)
                    .map_or(line.len(), |r| r.start)
                    .clamp(start, line.len());
                let (start, end) = (floor_char(line, start), floor_char(line, end));
                Cell {
                    col,
                    range: start..end.max(start),
                    header: false,
                }
            }
            Kind::Latex => cell_at(latex_cells(line), pos)?,
            Kind::Html => return None,
        };
        cell.header = header;
        Some(cell)
    }

    /// The text of the first cell of this row, when `col` is another cell and the
    /// first one holds words: the row's label (`| Throughput (tok/s) | 88.5 |`,
    /// `| Recall | 88.99% |`), which describes every cell of the row as a column
    /// header describes every cell of its column.
    pub(super) fn row_label<'l>(&self, line: &'l str, col: usize) -> Option<&'l str> {
        if col == 0 || self.part != Part::Row {
            return None;
        }
        // The first cell is the one at the row's first text position.
        let first = match &self.segments {
            Some(segments) => segments.iter().find(|s| s.col == Some(0))?.start as usize,
            None => {
                let lead = line.len() - line.trim_start().len();
                lead + usize::from(line[lead..].starts_with('|'))
            }
        };
        let range = self.cell(line, first).filter(|c| c.col == 0)?.range;
        let text = line.get(range)?.trim();
        // Markup around a label (`**Accuracy**`, `<b>…</b>`) is no part of it.
        let text = text.trim_matches(|c: char| matches!(c, '*' | '_' | '`'));
        text.contains(char::is_alphabetic).then_some(text)
    }

    /// The table, for a line that is part of one.
    pub(super) fn table(&self) -> Option<&Table> {
        self.table.as_deref()
    }

    /// Byte ranges of a delimited (CSV/TSV) row's cells: numbers are read cell by cell
    /// there, so that `1,205` in a CSV row is two cells, never one grouped number.
    pub(super) fn delimited(&self, line: &str) -> Option<Vec<Range<usize>>> {
        match self.table.as_deref()?.kind {
            Kind::Delimited(d) => Some(delimited_cells(line, d)),
            _ => None,
        }
    }
}

/// The cell of split row `cells` that byte `pos` falls in.
fn cell_at(cells: Vec<Range<usize>>, pos: usize) -> Option<Cell> {
    cells
        .into_iter()
        .enumerate()
        .find(|(_, r)| r.start <= pos && pos <= r.end)
        .map(|(col, range)| Cell {
            col,
            range,
            header: false,
        })
}

fn floor_char(s: &str, mut i: usize) -> usize {
    i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// The pipe-delimited cell at `pos`: columns count the unescaped `|` before it,
/// a leading `|` opening column 0.
fn pipe_cell(line: &str, pos: usize) -> Option<Cell> {
    let bytes = line.as_bytes();
    let lead = line.len() - line.trim_start().len();
    let opened = bytes.get(lead) == Some(&b'|');
    let mut col = 0usize;
    let mut start = if opened { lead + 1 } else { 0 };
    let mut i = start;
    while i < bytes.len() {
        if bytes[i] == b'\\' {
            i += 2;
            continue;
        }
        if bytes[i] == b'|' {
            if i >= pos {
                return Some(Cell {
                    col,
                    range: start..i,
                    header: false,
                });
            }
            col += 1;
            start = i + 1;
        }
        i += 1;
    }
    (pos >= start).then_some(Cell {
        col,
        range: start..line.len(),
        header: false,
    })
}

/// Byte ranges of the cells of a LaTeX table row: split at `&` (not `\&`), up to
/// the `\\` that ends the row.
fn latex_cells(line: &str) -> Vec<Range<usize>> {
    let bytes = line.as_bytes();
    let mut out = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' if bytes.get(i + 1) == Some(&b'\\') => break,
            b'\\' => i += 1,
            b'&' => {
                out.push(start..i);
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    out.push(start..i.min(line.len()));
    out
}

/// A LaTeX table rule (`\toprule`, `\midrule`, `\hline`, `\cmidrule{2-3}`).
fn is_latex_rule(line: &str) -> bool {
    let t = line.trim_start();
    [
        "\\toprule",
        "\\midrule",
        "\\bottomrule",
        "\\hline",
        "\\cmidrule",
        "\\cline",
    ]
    .iter()
    .any(|r| t.starts_with(r))
}

/// A LaTeX `tabular` being read.
#[derive(Debug, Default)]
struct Latex {
    /// The table, once a header row is known (or a body row came first).
    table: Option<Arc<Table>>,
    /// A body row has been read.
    body: bool,
    /// A rule opened the table (`\toprule`): rows before the header rule are headers.
    opened: bool,
}

impl Latex {
    /// The context of a line inside the table; `None` at its end.
    fn step(&mut self, line: &str, next: Option<&str>, caption: Option<Dim>) -> Option<LineCtx> {
        if line.contains("\\end{tabular") || line.contains("\\end{longtable") {
            return None;
        }
        if is_latex_rule(line) {
            self.opened |= self.table.is_none() && !self.body;
            return Some(LineCtx {
                part: Part::Rule,
                table: self.table.clone(),
                ..LineCtx::default()
            });
        }
        if !is_latex_row(line) {
            return Some(LineCtx::default());
        }
        // `\midrule` or `\hline` under a row ends the header; `\bottomrule` ends
        // the table.
        let header_rule = |l: &str| {
            let t = l.trim_start();
            t.starts_with("\\midrule") || t.starts_with("\\hline")
        };
        let after_row = line.split_once("\\\\").map_or("", |(_, a)| a);
        let ruled = header_rule(after_row) || next.is_some_and(header_rule);
        if !self.body && ruled {
            let header = latex_cells(line)
                .into_iter()
                .map(|r| line[r].trim().to_string())
                .collect();
            self.table = Some(Arc::new(Table::new(Kind::Latex, header, caption)));
            return Some(LineCtx {
                part: Part::Header,
                table: self.table.clone(),
                ..LineCtx::default()
            });
        }
        if self.opened && self.table.is_none() && !self.body {
            // A group row above the header (`\multicolumn{2}{c}{Normal}`).
            return Some(LineCtx {
                part: Part::Header,
                ..LineCtx::default()
            });
        }
        self.body = true;
        let table = self
            .table
            .get_or_insert_with(|| Arc::new(Table::new(Kind::Latex, Vec::new(), caption)))
            .clone();
        Some(LineCtx {
            part: Part::Row,
            table: Some(table),
            ..LineCtx::default()
        })
    }
}

/// A row of a LaTeX table: a cell separator, or the `\\` that ends a row.
fn is_latex_row(line: &str) -> bool {
    latex_cells(line).len() > 1 || line.contains("\\\\")
}

/// Byte ranges of the cells of a delimited row (double quotes respected).
fn delimited_cells(line: &str, delim: u8) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut quoted = false;
    for (i, b) in line.bytes().enumerate() {
        match b {
            b'"' => quoted = !quoted,
            b if b == delim && !quoted => {
                out.push(start..i);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(start..line.len());
    out
}

fn delimiter_count(line: &str, delim: u8) -> usize {
    delimited_cells(line, delim).len() - 1
}

/// Header words that name what a row is, not what was measured.
const LABEL_HEADERS: [&str; 31] = [
    "model",
    "models",
    "name",
    "gpu",
    "gpus",
    "card",
    "cpu",
    "hardware",
    "device",
    "system",
    "machine",
    "host",
    "provider",
    "framework",
    "engine",
    "backend",
    "benchmark",
    "task",
    "dataset",
    "language",
    "method",
    "config",
    "configuration",
    "quantization",
    "quant",
    "setup",
    "platform",
    "version",
    "date",
    "id",
    "test",
];

/// A header cell whose words all name what a row is (`Model`, `**GPU**`, `Task suite`
/// is not: it counts only one word from the list, `suite`, unknown).
fn is_label_header(text: &str) -> bool {
    let words: Vec<String> = text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    !words.is_empty() && words.iter().all(|w| LABEL_HEADERS.contains(&w.as_str()))
}

/// The dimension a header cell (or caption) names: a unit word that stands alone or
/// in brackets (`Duration (s)`, `t/s`, `TTFT [ms]`, `Size (GiB)`, `Throughput
/// (tok/sec)`, `Requests`), never a letter glued to digits (`8B`, `pp512`). One
/// letter counts only in brackets (`(s)`); magnitudes (`K`, `M`, `B`) never.
pub(super) fn header_dim(text: &str) -> Option<Dim> {
    // `tokens_per_s`, `ttft_ms`: a CSV header's words are joined by underscores.
    let spaced = text.replace('_', " ");
    let text = spaced.as_str();
    let mut found = None;
    for (k, raw) in text.split_whitespace().enumerate() {
        let bracketed = raw.starts_with(['(', '[']) || raw.ends_with([')', ']']);
        let word =
            raw.trim_matches(|c: char| !(c.is_alphanumeric() || matches!(c, '%' | '/' | 'µ')));
        let word = match word.split_once('/') {
            // `seconds/1000`: the unit before a per-count
            Some((num, den)) if den.chars().all(|c| c.is_ascii_digit()) && !den.is_empty() => num,
            _ => word,
        };
        if word.is_empty() || word.chars().any(|c| c.is_ascii_digit()) {
            continue;
        }
        // One letter, and `min` (the minimum, as often as minutes), name a unit only
        // in brackets: `Duration (s)`, `Time (min)`.
        let ambiguous = word.chars().count() == 1 || word.eq_ignore_ascii_case("min");
        if ambiguous && word != "%" && !bracketed {
            continue;
        }
        let next = text.split_whitespace().nth(k + 1).unwrap_or("");
        let rest = format!(" {next}");
        let dim = if word == "%" {
            Some(Dim::Percent)
        } else {
            context::word_dim(word)
                .map(|d| match d {
                    // `tokens per second`
                    Dim::Count(_) if next.eq_ignore_ascii_case("per") => {
                        context::claim_dim(Some(&format!("{word}{rest} s"))).unwrap_or(d)
                    }
                    // `decode_tok_s`, `tokens_sec`: a noun over a second is a rate of it.
                    Dim::Count(n)
                        if matches!(next.to_lowercase().as_str(), "s" | "sec" | "second") =>
                    {
                        Dim::Rate(n)
                    }
                    d => d,
                })
                .or_else(|| {
                    // `seconds/1000 examples`: the unit over a count is a time; a
                    // unit over a noun (`tokens/passed`) is no dimension we know;
                    // a noun alone is a count of it.
                    match word.split_once('/') {
                        Some((num, _)) => context::word_dim(num)
                            .filter(|d| !matches!(d, Dim::Count(_) | Dim::Magnitude)),
                        None => context::plural_noun(&word.to_lowercase()),
                    }
                })
        };
        match dim {
            Some(Dim::Magnitude) | None => {}
            Some(d) => match found {
                None => found = Some(d),
                Some(f) if f == d => {}
                // A count noun beside a unit (`Output tokens (tok/s)`): the unit.
                Some(Dim::Count(_)) => found = Some(d),
                Some(_) if matches!(d, Dim::Count(_)) => {}
                Some(_) => return None,
            },
        }
    }
    found
}

/// The unit a caption line states: a unit word in brackets (`Average speed (tokens/s)`,
/// `### Time to First Token (seconds)`) or after `in` (`Average speed in tokens/s.`),
/// when it names exactly one dimension (counts and magnitudes are no caption).
fn caption_dim(line: &str) -> Option<Dim> {
    let words: Vec<&str> = line.split_whitespace().collect();
    let mut found = None;
    for (k, raw) in words.iter().enumerate() {
        let bracketed =
            raw.starts_with('(') && raw.trim_end_matches(['.', ',', ':']).ends_with(')');
        let after_in = k > 0 && words[k - 1].eq_ignore_ascii_case("in");
        if !bracketed && !after_in {
            continue;
        }
        let word =
            raw.trim_matches(|c: char| !(c.is_alphanumeric() || matches!(c, '%' | '/' | 'µ')));
        if word.is_empty() || word.chars().any(|c| c.is_ascii_digit()) {
            continue;
        }
        let dim = if word == "%" {
            Some(Dim::Percent)
        } else if word.chars().count() == 1 && !bracketed {
            None
        } else {
            context::word_dim(word)
        };
        match dim {
            None | Some(Dim::Magnitude | Dim::Count(_)) => {}
            Some(d) => match found {
                None => found = Some(d),
                Some(f) if f == d => {}
                Some(_) => return None,
            },
        }
    }
    found
}

/// `|---|:--:|`, `---|---`: a Markdown table's rule under its header.
fn is_pipe_rule(line: &str) -> bool {
    let t = line.trim();
    t.contains('-')
        && (t.contains('|') || t.starts_with(':'))
        && t.chars().all(|c| matches!(c, '|' | '-' | ':' | ' ' | '\t'))
}

/// `+----+----+` or `+====+====+`: an RST grid table's border; `Some(true)` for `=`.
fn grid_border(line: &str) -> Option<bool> {
    let t = line.trim();
    let ok = t.len() >= 3
        && t.starts_with('+')
        && t.ends_with('+')
        && t.chars().all(|c| matches!(c, '+' | '-' | '=' | ':'));
    ok.then(|| t.contains('='))
}

/// `=====  =====  ====`: an RST simple table's border, as the byte ranges of its runs
/// (at least two).
fn simple_border(line: &str) -> Option<Vec<Range<usize>>> {
    if line.trim().is_empty() || !line.bytes().all(|b| b == b'=' || b == b' ') {
        return None;
    }
    let mut runs = Vec::new();
    let mut start = None;
    for (i, b) in line.bytes().enumerate() {
        match (b, start) {
            (b'=', None) => start = Some(i),
            (b' ', Some(s)) => {
                runs.push(s..i);
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        runs.push(s..line.len());
    }
    (runs.len() >= 2).then_some(runs)
}

fn heading_level(line: &str) -> Option<u8> {
    let t = line.trim_start();
    let hashes = t.bytes().take_while(|&b| b == b'#').count();
    ((1..=6).contains(&hashes) && t[hashes..].starts_with([' ', '\t'])).then_some(hashes as u8)
}

fn is_fence(line: &str) -> bool {
    let t = line.trim_start();
    t.starts_with("```") || t.starts_with("~~~")
}

fn pipe_cells_text(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(cell) = pipe_cell(line, at) {
        out.push(line[cell.range.clone()].trim().to_string());
        if cell.range.end >= line.len() {
            break;
        }
        at = cell.range.end + 1;
    }
    // A trailing `|` closes the last cell rather than opening an empty one.
    if line.trim_end().ends_with('|') && out.last().is_some_and(String::is_empty) {
        out.pop();
    }
    out
}

/// An HTML table being read: its header, and where the current row stands.
#[derive(Debug, Default)]
struct Html {
    /// Tables nest; only the outermost is followed.
    depth: usize,
    header: Vec<String>,
    header_done: bool,
    table: Option<Arc<Table>>,
    /// Rows still covered by a `rowspan` cell, by column.
    spans: Vec<usize>,
    row: Vec<(usize, String, bool)>,
    col: usize,
    in_row: bool,
    cell: Option<(usize, usize, String, bool)>,
    caption: Option<Dim>,
}

fn attr_number(tag: &str, name: &str) -> Option<usize> {
    let lower = tag.to_ascii_lowercase();
    let at = lower.find(name)? + name.len();
    let rest = lower[at..].trim_start().strip_prefix('=')?.trim_start();
    let rest = rest.trim_start_matches(['"', '\'']);
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits
        .parse()
        .ok()
        .filter(|&n: &usize| (1..=1000).contains(&n))
}

impl Html {
    fn start_row(&mut self) {
        self.in_row = true;
        self.col = 0;
        self.row.clear();
    }

    fn end_row(&mut self) {
        self.close_cell();
        if !self.in_row {
            return;
        }
        self.in_row = false;
        for s in self.spans.iter_mut() {
            *s = s.saturating_sub(1);
        }
        if !self.header_done {
            let any_header = self.row.iter().any(|(_, _, h)| *h);
            let all_words = !self.row.is_empty()
                && self
                    .row
                    .iter()
                    .all(|(_, t, _)| !t.chars().any(|c| c.is_ascii_digit()));
            if any_header || all_words {
                let width = self.row.iter().map(|(c, _, _)| c + 1).max().unwrap_or(0);
                let mut header = vec![String::new(); width];
                for (c, t, _) in &self.row {
                    header[*c] = t.clone();
                }
                self.header = header;
            }
            self.header_done = true;
            self.table = Some(Arc::new(Table::new(
                Kind::Html,
                std::mem::take(&mut self.header),
                self.caption,
            )));
        }
    }

    fn open_cell(&mut self, header: bool, rowspan: usize, colspan: usize) {
        self.close_cell();
        if !self.in_row {
            self.start_row();
        }
        while self.spans.get(self.col).is_some_and(|&s| s > 0) {
            self.col += 1;
        }
        let col = self.col;
        if rowspan > 1 {
            for c in col..col + colspan {
                if self.spans.len() <= c {
                    self.spans.resize(c + 1, 0);
                }
                self.spans[c] = rowspan;
            }
        }
        self.col += colspan;
        self.cell = Some((col, colspan, String::new(), header));
    }

    fn close_cell(&mut self) {
        if let Some((col, _, text, header)) = self.cell.take() {
            self.row.push((col, text.trim().to_string(), header));
        }
    }

    /// Reads one line's tags; the line's segments.
    fn read(&mut self, line: &str) -> Vec<Segment> {
        let mut segs = Vec::new();
        let mut at = 0;
        let bytes = line.as_bytes();
        let in_header = |h: &Html| !h.header_done;
        if let Some((col, _, _, header)) = &self.cell {
            segs.push(Segment {
                start: 0,
                col: u16::try_from(*col).ok(),
                header: *header || in_header(self),
            });
        }
        while let Some(lt) = line[at..].find('<').map(|k| at + k) {
            let Some(gt) = line[lt..].find('>').map(|k| lt + k) else {
                break;
            };
            let tag = &line[lt + 1..gt];
            if let Some((_, _, text, _)) = &mut self.cell {
                text.push_str(&line[at..lt]);
                text.push(' ');
            }
            at = gt + 1;
            let name: String = tag
                .trim_start_matches('/')
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric())
                .collect::<String>()
                .to_ascii_lowercase();
            let closing = tag.starts_with('/');
            match (name.as_str(), closing) {
                ("table", false) => {
                    self.depth += 1;
                }
                ("table", true) => {
                    self.depth = self.depth.saturating_sub(1);
                    self.end_row();
                }
                _ if self.depth != 1 => {}
                ("tr", false) => {
                    self.end_row();
                    self.start_row();
                }
                ("tr", true) => self.end_row(),
                ("td" | "th", false) => {
                    let rowspan = attr_number(tag, "rowspan").unwrap_or(1);
                    let colspan = attr_number(tag, "colspan").unwrap_or(1);
                    self.open_cell(name == "th", rowspan, colspan);
                    if let Some((col, _, _, header)) = &self.cell {
                        segs.push(Segment {
                            start: at as u32,
                            col: u16::try_from(*col).ok(),
                            header: *header || !self.header_done,
                        });
                    }
                }
                ("td" | "th", true) => {
                    self.close_cell();
                    segs.push(Segment {
                        start: lt as u32,
                        col: None,
                        header: false,
                    });
                }
                _ => {}
            }
        }
        if let Some((_, _, text, _)) = &mut self.cell {
            text.push_str(&line[at.min(bytes.len())..]);
            text.push(' ');
        }
        segs
    }
}

/// An RST simple table being read: its columns, whether its body has begun, and
/// the table once its header is read.
type Simple = (Vec<Range<usize>>, bool, Option<Arc<Table>>);

/// The forward pass that gives each line its [`LineCtx`].
#[derive(Debug, Default)]
pub(super) struct Reader {
    index: usize,
    fence: bool,
    heading: u8,
    /// The caption in force and the heading level it belongs to.
    caption: Option<(Dim, u8)>,
    /// The pipe (or grid) table being read.
    pipe: Option<Arc<Table>>,
    simple: Option<Simple>,
    csv: Option<(u8, usize, Arc<Table>)>,
    html: Option<Html>,
    /// In a LaTeX `tabular`.
    latex: Option<Latex>,
    /// In YAML front matter: the `name`/`type` of each enclosing item, by the column
    /// its content starts at.
    yaml: Option<Vec<(usize, String)>>,
    /// The prose line ending in `:` that introduces the list being read.
    list_caption: Option<Arc<str>>,
}

/// One line of YAML front matter: the names of the items it stands in.
fn yaml_scope(stack: &mut Vec<(usize, String)>, line: &str) -> Option<Arc<str>> {
    let indent = line.len() - line.trim_start_matches(' ').len();
    let rest = &line[indent..];
    if !(rest.trim().is_empty() || rest.starts_with('#')) {
        let (col, item) = match rest.strip_prefix("- ") {
            Some(r) => (indent + 2 + (r.len() - r.trim_start().len()), true),
            None => (indent, false),
        };
        stack.retain(|(c, _)| if item { *c < col } else { *c <= col });
        if let Some((key, value)) = line.get(col..).and_then(|c| c.split_once(':')) {
            let value = value.trim().trim_matches(['"', '\'']);
            if matches!(key.trim(), "name" | "type") && !value.is_empty() {
                stack.push((col, value.to_string()));
            }
        }
    }
    let names: Vec<&str> = stack.iter().map(|(_, n)| n.as_str()).collect();
    (!names.is_empty()).then(|| Arc::from(names.join(" / ")))
}

/// `- item`, `* item`, `+ item`, `1. item`.
fn is_list_item(line: &str) -> bool {
    let t = line.trim_start();
    if t.starts_with("- ") || t.starts_with("* ") || t.starts_with("+ ") {
        return true;
    }
    let digits = t.bytes().take_while(u8::is_ascii_digit).count();
    digits > 0 && (t[digits..].starts_with(". ") || t[digits..].starts_with(") "))
}

impl Reader {
    /// The context of `line`, given the line after it (`None` at the end).
    pub(super) fn step(&mut self, line: &str, next: Option<&str>) -> LineCtx {
        let index = self.index;
        self.index += 1;
        let caption = self.caption.map(|(d, _)| d);

        // YAML front matter (a model card's `model-index`).
        if index == 0 && line.trim_end() == "---" {
            self.yaml = Some(Vec::new());
            return LineCtx::default();
        }
        if let Some(stack) = &mut self.yaml {
            if matches!(line.trim_end(), "---" | "...") {
                self.yaml = None;
                return LineCtx::default();
            }
            return LineCtx {
                scope: yaml_scope(stack, line),
                ..LineCtx::default()
            };
        }

        // HTML tables: tags are followed across lines.
        let has_table_tag = line
            .as_bytes()
            .windows(6)
            .any(|w| w.eq_ignore_ascii_case(b"<table"));
        if self.html.is_some() || has_table_tag {
            let html = self.html.get_or_insert_with(|| Html {
                caption,
                ..Html::default()
            });
            let header_before = !html.header_done;
            let segments = html.read(line);
            let table = html.table.clone();
            if html.depth == 0 {
                self.html = None;
            }
            if !segments.is_empty() {
                let part = if header_before && segments.iter().all(|s| s.header || s.col.is_none())
                {
                    Part::Header
                } else {
                    Part::Row
                };
                return LineCtx {
                    part,
                    table,
                    segments: Some(segments.into()),
                    scope: None,
                };
            }
            return LineCtx::default();
        }

        // LaTeX tables: rows above the `\midrule` (or `\hline`) under a row are the
        // header, the last of them naming the columns; when a rule opens the table,
        // every row before that one is a header row (`\multicolumn` groups).
        if line.contains("\\begin{tabular") || line.contains("\\begin{longtable") {
            self.latex = Some(Latex::default());
            return LineCtx::default();
        }
        if let Some(latex) = &mut self.latex {
            return latex.step(line, next, caption).unwrap_or_else(|| {
                self.latex = None;
                LineCtx::default()
            });
        }

        // CSV or TSV: a first line and a second with the same delimiters.
        if index == 0 {
            if let Some(next) = next {
                for delim in [b'\t', b',', b';'] {
                    let n = delimiter_count(line, delim);
                    let need = if delim == b'\t' { 1 } else { 2 };
                    let short = delimited_cells(line, delim).iter().all(|r| r.len() <= 64);
                    // JSON, YAML and Markdown are no CSV, whatever their commas.
                    let t = line.trim_start();
                    let other = t.starts_with(['{', '['])
                        || line.contains('|')
                        || line.contains("\":")
                        || line.contains(": ");
                    if n >= need && short && !other && delimiter_count(next, delim) == n {
                        let header = delimited_cells(line, delim)
                            .into_iter()
                            .map(|r| line[r].trim().trim_matches('"').to_string())
                            .collect();
                        let table = Arc::new(Table::new(Kind::Delimited(delim), header, None));
                        self.csv = Some((delim, n, table.clone()));
                        return LineCtx {
                            part: Part::Header,
                            table: Some(table),
                            segments: None,
                            scope: None,
                        };
                    }
                }
            }
        }
        if let Some((delim, n, table)) = &self.csv {
            if delimiter_count(line, *delim) == *n {
                return LineCtx {
                    part: Part::Row,
                    table: Some(table.clone()),
                    segments: None,
                    scope: None,
                };
            }
            return LineCtx::default();
        }

        // RST simple tables.
        if let Some(runs) = simple_border(line) {
            match self.simple.take() {
                None => self.simple = Some((runs, false, None)),
                Some((cols, false, table)) => self.simple = Some((cols, true, table)),
                Some((_, true, _)) => {}
            }
            return LineCtx {
                part: Part::Rule,
                ..LineCtx::default()
            };
        }
        if let Some((cols, body, table)) = &mut self.simple {
            if line.trim().is_empty() && *body {
                self.simple = None;
            } else if !*body {
                if table.is_none() {
                    let header = cols
                        .iter()
                        .enumerate()
                        .map(|(k, r)| {
                            let start = floor_char(line, r.start);
                            let end = cols.get(k + 1).map_or(line.len(), |n| n.start);
                            let end = floor_char(line, end).max(start);
                            line[start..end].trim().to_string()
                        })
                        .collect();
                    *table = Some(Arc::new(Table::new(
                        Kind::Simple(cols.clone()),
                        header,
                        caption,
                    )));
                }
                return LineCtx {
                    part: Part::Header,
                    table: table.clone(),
                    segments: None,
                    scope: None,
                };
            } else {
                return LineCtx {
                    part: Part::Row,
                    table: table.clone(),
                    segments: None,
                    scope: None,
                };
            }
        }

        // Markdown pipe tables and RST grid tables.
        if grid_border(line).is_some() || is_pipe_rule(line) && self.pipe.is_some() {
            return LineCtx {
                part: Part::Rule,
                table: self.pipe.clone(),
                segments: None,
                scope: None,
            };
        }
        let piped = line.contains('|');
        if piped {
            let header_next = next.is_some_and(|n| is_pipe_rule(n) || grid_border(n) == Some(true));
            let row = line.trim_start().starts_with('|') || self.pipe.is_some();
            if header_next && !is_pipe_rule(line) {
                let table = Arc::new(Table::new(Kind::Pipe, pipe_cells_text(line), caption));
                self.pipe = Some(table.clone());
                return LineCtx {
                    part: Part::Header,
                    table: Some(table),
                    segments: None,
                    scope: None,
                };
            }
            if row {
                let table = self
                    .pipe
                    .get_or_insert_with(|| Arc::new(Table::new(Kind::Pipe, Vec::new(), caption)))
                    .clone();
                return LineCtx {
                    part: Part::Row,
                    table: Some(table),
                    segments: None,
                    scope: None,
                };
            }
        }
        self.pipe = None;

        // Headings and prose: captions.
        if is_fence(line) {
            self.fence = !self.fence;
            return LineCtx::default();
        }
        if self.fence {
            return LineCtx::default();
        }
        if let Some(level) = heading_level(line) {
            self.list_caption = None;
            self.heading = level;
            if self.caption.is_some_and(|(_, l)| level <= l) {
                self.caption = None;
            }
            if let Some(dim) = caption_dim(line) {
                self.caption = Some((dim, level));
            }
            return LineCtx::default();
        }
        if let Some(dim) = caption_dim(line) {
            self.caption = Some((dim, self.heading));
        }
        if is_list_item(line) {
            return LineCtx {
                scope: self.list_caption.clone(),
                ..LineCtx::default()
            };
        }
        if !line.trim().is_empty() {
            let t = line.trim();
            self.list_caption = t.ends_with(':').then(|| Arc::from(t));
        }
        LineCtx::default()
    }
}

/// The structure of a document held in memory: a context per line.
#[derive(Debug, Clone, Default)]
pub struct Layout {
    lines: Vec<LineCtx>,
}

impl Layout {
    /// Reads the structure of `lines` (one pass).
    pub fn new(lines: &[&str]) -> Layout {
        let mut reader = Reader::default();
        let lines = (0..lines.len())
            .map(|i| reader.step(lines[i], lines.get(i + 1).copied()))
            .collect();
        Layout { lines }
    }

    /// The context of 0-based line `index` (prose past the end).
    pub fn at(&self, index: usize) -> &LineCtx {
        static PROSE: LineCtx = LineCtx {
            part: Part::Prose,
            table: None,
            segments: None,
            scope: None,
        };
        self.lines.get(index).unwrap_or(&PROSE)
    }
}

/// The structure of a document read as a stream: lines go in one by one and come out
/// one line later with their context (the look-ahead a table header needs).
#[derive(Debug, Default)]
pub struct Stream {
    reader: Reader,
    held: Option<(usize, String)>,
}

impl Stream {
    /// Takes 0-based line `index`; gives the line before it with its context.
    pub fn push(&mut self, index: usize, line: &str) -> Option<(usize, String, LineCtx)> {
        let out = self.held.take().map(|(i, held)| {
            let ctx = self.reader.step(&held, Some(line));
            (i, held, ctx)
        });
        self.held = Some((index, line.to_string()));
        out
    }

    /// The last line, once the stream has ended.
    pub fn finish(&mut self) -> Option<(usize, String, LineCtx)> {
        self.held.take().map(|(i, held)| {
            let ctx = self.reader.step(&held, None);
            (i, held, ctx)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(text: &str) -> (Vec<&str>, Layout) {
        let lines: Vec<&str> = text.lines().collect();
        let layout = Layout::new(&lines);
        (lines, layout)
    }

    fn header_at(text: &str, line: usize, needle: &str) -> Option<String> {
        let (lines, layout) = layout(text);
        let ctx = layout.at(line);
        let pos = lines[line].find(needle)?;
        let cell = ctx.cell(lines[line], pos)?;
        ctx.table()?.header_of(cell.col).map(str::to_string)
    }

    #[test]
    fn a_row_far_below_its_header_knows_its_column() {
        let mut text =
            String::from("| GPU | PP (t/s) | TG (t/s) | Duration (s) |\n|---|--:|--:|--:|\n");
        for k in 0..40 {
            text.push_str(&format!("| card {k} | 1{k}.5 | 2{k}.25 | 3{k}.75 |\n"));
        }
        assert_eq!(
            header_at(&text, 41, "339.75").as_deref(),
            Some("Duration (s)")
        );
        assert_eq!(header_at(&text, 41, "239.25").as_deref(), Some("TG (t/s)"));
        let (_, l) = layout(&text);
        assert_eq!(l.at(0).part, Part::Header);
        assert_eq!(l.at(1).part, Part::Rule);
        assert_eq!(l.at(5).part, Part::Row);
    }

    #[test]
    fn html_rowspan_shifts_the_cells_of_the_next_row() {
        let text = "<table>\n<tr><th>GPU</th><th>Model</th><th>tok/s</th><th>Memory (MB)</th></tr>\n<tr><td rowspan=\"2\">A10</td><td>7B</td><td>41.2</td><td>1394</td></tr>\n<tr><td>13B</td><td>22.7</td><td>2210</td></tr>\n</table>";
        assert_eq!(header_at(text, 3, "22.7").as_deref(), Some("tok/s"));
        assert_eq!(header_at(text, 3, "2210").as_deref(), Some("Memory (MB)"));
        assert_eq!(header_at(text, 2, "1394").as_deref(), Some("Memory (MB)"));
        let (_, l) = layout(text);
        assert_eq!(l.at(1).part, Part::Header);
    }

    #[test]
    fn html_cells_one_per_line() {
        let text = "<table>\n<thead>\n<tr>\n<th>Engine</th>\n<th>Latency (ms)</th>\n</tr>\n</thead>\n<tr>\n<td>alpha</td>\n<td>812</td>\n</tr>\n</table>";
        assert_eq!(header_at(text, 9, "812").as_deref(), Some("Latency (ms)"));
    }

    #[test]
    fn csv_rows_know_their_header() {
        let text = "model,tokens_per_s,ttft_ms\nalpha,41.2,1205\nbeta,38.9,990";
        assert_eq!(header_at(text, 2, "990").as_deref(), Some("ttft_ms"));
        let (lines, l) = layout(text);
        assert_eq!(l.at(0).part, Part::Header);
        assert_eq!(l.at(1).delimited(lines[1]).map(|c| c.len()), Some(3));
    }

    #[test]
    fn rst_simple_and_grid_tables() {
        let simple = "=======  ==========  ========\nEngine   Throughput  TTFT (s)\n=======  ==========  ========\nalpha    41.2        0.35\n=======  ==========  ========";
        assert_eq!(header_at(simple, 3, "0.35").as_deref(), Some("TTFT (s)"));
        let grid = "+-------+----------+\n| Engine | TTFT (ms) |\n+=======+==========+\n| alpha  | 350      |\n+-------+----------+";
        assert_eq!(header_at(grid, 3, "350").as_deref(), Some("TTFT (ms)"));
        let (_, l) = layout(grid);
        assert_eq!(l.at(1).part, Part::Header);
    }

    #[test]
    fn captions_follow_headings_and_prose() {
        let text = "## Speed\n\nAverage speed in tokens/s.\n\n### Gaming GPUs (OS: Ubuntu 22.04)\n\n| GPU | Model | tg 512 |\n|---|---|---|\n| a | b | 18.75 |\n\n## Perplexity\n\n| Quant | PPL |\n|---|---|\n| q | 18.75 |";
        let (_, l) = layout(text);
        assert_eq!(
            l.at(8).table().and_then(|t| t.caption),
            header_dim("tokens/s")
        );
        assert!(header_dim("tokens/s").is_some());
        assert_eq!(l.at(14).table().and_then(|t| t.caption), None);
    }

    #[test]
    fn header_dimensions() {
        assert_eq!(header_dim("Duration (s)"), Some(Dim::Time("s")));
        assert_eq!(header_dim("GPU Memory (MB)"), Some(Dim::Bytes(b'M')));
        assert!(matches!(
            header_dim("Throughput (tok/sec)"),
            Some(Dim::Rate(_))
        ));
        assert_eq!(header_dim("8B Q4_K_M"), None);
        assert_eq!(header_dim("tg 512"), None);
        assert_eq!(header_dim("Model"), None);
        assert!(is_label_header("**Model**"));
        assert!(!is_label_header("Mean"));
    }

    #[test]
    fn the_stream_gives_what_the_layout_gives() {
        let text = "x\n| a | b |\n|---|---|\n| 1 | 2 |\n<table><tr><th>h</th></tr>\n<tr><td>3</td></tr></table>\nend";
        let (lines, layout) = layout(text);
        let mut stream = Stream::default();
        let mut got = Vec::new();
        for (i, l) in lines.iter().enumerate() {
            got.extend(stream.push(i, l));
        }
        got.extend(stream.finish());
        assert_eq!(got.len(), lines.len());
        for (i, _, ctx) in got {
            assert_eq!(ctx.part, layout.at(i).part, "line {i}");
            assert_eq!(
                ctx.table.is_some(),
                layout.at(i).table.is_some(),
                "line {i}"
            );
        }
    }
}
