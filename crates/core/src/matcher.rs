//! Value-on-line matching: does a line of a pinned document really carry a claimed figure?
//!
//! A record says "decode is 2.9 tokens/s, see README.md line 43". Checking that claim
//! is the product (docs/matcher.md), and substring search gets
//! it wrong both ways: `2.9` is a substring of `12.9`, `2.95`, `v2.9.1` and `a2.9b`, yet
//! `1,048,576` does not contain `1048576` and `0.98` does not contain `98`. So this
//! module reads a line as a sequence of number *tokens* with honest boundaries and
//! compares values as exact decimals, never as floats (`4.35` rounds to `4.4` here,
//! although the `f64` nearest to 4.35 rounds to 4.3). It is pure (no I/O, a hand-written
//! single-pass scanner, one small allocation per token; the words around a number are
//! read only when it fits a claim) and no input makes it panic.
//!
//! # Number tokens ([`tokens`])
//!
//! A token is digits with an optional fraction (`2.9`, `.98`) and an optional exponent
//! (`1e5`, `1.5E-3`; the exponent has at most six digits and nothing glued after it).
//!
//! - **Left boundary.** A token may not follow a letter (but a Chinese, Japanese or
//!   Korean character may touch it: `约74%`, `93.5秒`), digit or `.` (`v2.9`, `a2.9b`,
//!   `p18081`, `GB10`, the tail of `0x2.9`), nor an underscore that itself follows a
//!   word character (`foo_2`). An underscore after punctuation or space is Markdown
//!   emphasis, so `_2.9_` and `**2.9**` are tokens, as are `(2.9)`, `|2.9|`, `"v": 2.9,`.
//! - **Sign.** A `-` (or U+2212 `−`) directly before the digits is a minus sign unless
//!   it directly follows a letter or digit: then it joins words or a range (`1-2`,
//!   `2.8-2.9`, `llama-3`) and the number after it is positive. `-3.16` is the value
//!   -3.16 and so never matches a claim of 3.16. A `+` is just punctuation.
//! - **Approximation.** `~`, `≈`, `∼` or `~=` before the token sets `approx`; spaces,
//!   emphasis, a `+` and currency between mark and number are seen through
//!   (`~**−31%**`, `≈ **1.75×**`, `~$1.55`).
//! - **Grouping.** A 1–3 digit lead followed by groups of exactly three digits, all
//!   joined by the same separator (`,`, `_`, thin space U+2009 or narrow no-break space
//!   U+202F) is one number: `1,048,576` is 1048576 and never 1.048. A separator
//!   followed by anything but a well-formed group splits instead (`1,2` and `1, 2` are
//!   two numbers; one bad group anywhere, as in `1,048,57`, cancels the grouping).
//!   An unspaced `1,048` is therefore 1048, never a list of 1 and 48.
//!   Grouping applies to the integer part only, so `79.6,43.9` is two numbers. A decimal
//!   comma (`2,9`) is likewise *not* 2.9: Markdown tables and JSON don't write it, and
//!   reading it would turn every thousands group into a fraction.
//! - **Not numbers at all.** Dotted runs (`2.9.1`, `192.168.1.1`, `0.1.dev19043`,
//!   `49.json`), dates — three integers joined by one `-` or `/` *shaped like a date*:
//!   year-month-day (`2026-08-07`, `2026/08/07`) or day and month either way with a 2-
//!   or 4-digit year (`07/08/2026`, `8/7/26`); `512/512/512` is three numbers — clock
//!   times `h:mm[:ss]` (1–2 digit hours, exactly 2-digit minutes and seconds:
//!   `15:45:04`, `0:04:31`; `67108864:67108864` and `3:1` are two numbers each),
//!   zero-padded integers (`0010`, `04af`, `08-07`: ids, not values), and digits glued
//!   to an identifier: letters right after a number are a unit (`2.9x`, `120GB`,
//!   `2.9t/s`, `8K`), but letters *followed by a digit or `_`* make it an identifier or
//!   hex (`0x2`, `1fa14e`, `4x4`). `NaN`, `inf` and lone punctuation yield nothing.
//! - **Percent.** A `%` (or `％`) after the token, spaces allowed, sets `percent`.
//!
//! # Units (read only for a number that fits a claim)
//!
//! The unit written with a token is `%`, its glued letters (`120GB`, `2.9t/s`,
//! `12.4s`), a glued `×`, a hyphenated noun (`1,048,576-token`, `3-node`) or the next
//! word (`80 tok/s`, `412 ms`, `3 nodes`, `2.9 tokens per second`; one lowercase
//! adjective may come first: `32 concurrent requests`). Units and claims' units map to
//! a dimension: rate (of tokens, requests or iterations: `tok/s`, `tokens/s`, `t/s`,
//! `req/s`, `it/s`), bytes by prefix (`GB` and `GiB` alike, not `MB` or `TB`),
//! bandwidth (`GB/s`, `Gbps`), time by unit (`ms` is not `s`), multiplier (`x`, `×`,
//! `times`), percent, a count of a noun (`tokens`, `requests`, `nodes`, …), another
//! physical quantity (power `W`, energy `Wh`, frequency `GHz`, temperature `°C`), or a
//! magnitude (`K`, `M`, `B`: `16k`, `7.5K tok/s`) that is in no claim's base unit. A
//! token whose dimension contradicts the claim's never matches (`~1GB` is never 95 %,
//! `16k` never 16 tok/s, `412 ms` never 412 s); an unknown word, a bare cell or a
//! claim without unit contradicts nothing, so `8K` still carries a unitless 8.
//! Words after a number count it when they read as a plural noun (`14 languages`,
//! `3 runs`): such a count carries a claim in that noun or without unit, never a
//! percent, a rate or a time.
//!
//! # Structure ([`Layout`], read once per document)
//!
//! Before any claim is matched, one forward pass (one line of look-ahead, so a stream
//! reads it the same way, [`Stream`]) reads the shape of the document:
//!
//! - **Tables.** Markdown pipe tables (a header row over a `|---|` rule) and RST grid
//!   tables (`+===+` under the header), RST simple tables (`=====  ====` runs), HTML
//!   tables (`<th>`/`<td>` across any number of lines, with `rowspan` and `colspan`
//!   shifting the columns of later rows), and CSV/TSV (a first line and a second with
//!   the same delimiters; its rows are read cell by cell, so `1,205` is two cells).
//!   Every cell of a body row knows its column header, however far below it stands.
//! - **Header dimensions.** A header names a unit when a unit word stands alone or in
//!   brackets: `Duration (s)`, `t/s`, `TTFT [ms]`, `GPU memory (MB)`, `tokens_per_s`,
//!   `Requests`; never a letter glued to digits (`8B`, `pp512`), one letter or `min`
//!   out of brackets, or a magnitude. A header whose words all name rows (`Model`,
//!   `GPU`, `Framework`, `Quantization`, `Task`, `Version`…) makes a label column.
//! - **Captions.** A unit a heading or a prose line states in brackets or after `in`
//!   (`### Time to First Token (seconds)`, `Average speed in tokens/s.`) is the caption
//!   of the tables that follow, until a heading of the same or a higher level. It
//!   gives bare cells their dimension when no column header of the table names one.
//!
//! # Roles (what a number is where it stands)
//!
//! Only a number whose value fits the claim (see Matching) is given a role; a role
//! that can't carry the claim rejects it, and the first rejected look-alike of the
//! cited lines is reported with its reason ([`Rejected`]).
//!
//! - **Label**: a number in a header row (`| tg 512 | pp 512 |`). Never a figure.
//! - **Name**: `#21`; a path or task segment (`HumanEval/40`); a list marker opening a
//!   line (`4. `); a progress counter (`[47/50]`); a day or year after a month name; a
//!   version (a number without unit after a software word: `CUDA 13.0`, `py: 3.10`,
//!   `Rev 1.4`, or after an arrow from one); a hyphenated name (`Qwen2.5-7B`,
//!   `BenchmarkInference-32`, `llama2-70b-4096`, `GPT-4.1`: a number right after
//!   `letter-` is part of the word); a footnote marker (`[^9]`); anything inside a URL,
//!   a host's port (`localhost:8000`) or a link's text (`[Llama 3.1 405b](…)`); a
//!   number glued to letters that are no unit (`7443P`, `366f`, `5th`); a number
//!   between capitalised words (`Claude 3.5 Sonnet`, `Pi 4 Model`); a `.13` on a line
//!   with an IP address; a number in a label column or in a cell that holds other
//!   words (`Batch-1 Latency`, `AIME 2024 (Pass@1)`), unless it carries a unit of its
//!   own (`| 3070 8GB |` keeps `8GB`). Never a figure.
//! - **Identifier**: a number keyed by an identifier's name (`port 8888`,
//!   `MASTER_PORT=25001`, `seed: 42`, `pid`, `rank`, `device`, `*_id`): it carries only
//!   a claim whose unit or label names that kind (a claim in `port`).
//! - **Setting**: the value of a flag (`--mean-input-tokens 550`, `-ngl 99`), of an
//!   assignment (`KEY=N`, `temperature=0.2`; `accuracy=0.95` is a result, since its key
//!   names a metric), or of a code key whose words name a setting (`"batch_size": 32`,
//!   `override_batch_size`, `num_fewshot`; not a label such as `Temperature: 29°C`). It
//!   carries a count claim its key does not contradict (`--max-model-len 32000` for
//!   32000 tokens), a claim in the dimension its key names, or one whose unit or label
//!   names the key (`max model len`); never a claim that names nothing (a bare `256`
//!   is not `max_num_seqs=256`), nor a rate, a time or a score its key does not name.
//! - **Target**: a cell under a column of aims (`Expected`, `Target`, `Goal`,
//!   `Budget`: `| Avg TTFT | ~0.14s | 0.54s |`) is no measured figure, unless the
//!   claim's label names the column.
//! - **Range end**: `15-25`, `60–80`, `1.5-2x`, `~31–32`. Never a figure.
//! - **Bound**: after `under`, `below`, `over`, `than`, `at least`, `at most`, `up to`,
//!   `within`, `<`, `≤`, `>`, `≥` (not a tag's `>`), or before a `+` (`40k+`). It
//!   carries its own value exactly for a claim without unit (`fewer than 1000 samples`
//!   for 1000), never a measured figure (`under 2%`, `16+ RPS`) nor a rounding.
//! - **Measurement**: anything else, with the dimension its own unit gives
//!   (`412 ms`, `98%`, `14 languages`: a plural noun after a number counts it, and so
//!   does one before it in brackets, `KV heads (2)`; `8 and 70B`: numbers joined by
//!   `and`, `or` or a comma share the unit after the last, and a list shares its noun,
//!   `` `1`, `6144`, and `129024` tokens ``), else its key's (`"ttft_s_mean": 0.41`,
//!   `Mean TTFT (ms): 812`, `"mean_input_tokens"` counts tokens, `Expected output
//!   length: 150` counts tokens; `prompt_speed` is a rate, the noun before a rate word
//!   naming what it is of), else its column
//!   header's, else its table's caption's; a go test benchmark line's first number is
//!   its iteration count.
//!
//! **Compatibility.** A measurement carries a claim when the dimensions agree (see
//! Units); in a table, the column must agree too: a header that names another
//! dimension contradicts the claim (`24.58` under `Duration (s)` is no tokens/s), and
//! when some other column of the table names the claim's dimension, a cell under a
//! header that names none is not the figure either (`99` under `ngl` beside a `t/s`
//! column). A claim with `correct` never stands in a column of failures (`FAIL`,
//! `ERROR`, `TIMEOUT`, `incorrect`). Among cells of one row that carry the claim
//! equally, one whose header shares a word with the claim's label wins (`TG/s` over
//! `PP/s` for a claim labelled "TG").
//!
//! # Matching ([`Document::cited`], [`find`])
//!
//! The claim's text is parsed the same way and keeps its written precision: `98.0` has
//! one decimal, `1048576` none. For each token of the line:
//!
//! - **Exact**: equal value at any precision (`7.20` for 7.2, `98` for 98.0).
//! - **Rounded**: the line writes *fewer* decimals, *marks the number approximate*
//!   (`~`, `≈`, `about`, `around`, `approx.`, `approximately`, `roughly`, `nearly`,
//!   `circa`) and the claim rounds (half away from zero) to it (`~2.9` for 2.93 and
//!   2.94, not for 2.96; an unmarked `72%` is not 71.7 %, nor `80 tok/s` 79.6 tok/s);
//!   or the line writes *more* decimals in a raw number and rounds to the claim at
//!   the claim's precision (a raw `0.24890269` for 0.249 s; `2.95` rounds to 3.0, so
//!   not for 2.9). A raw number is one a program printed: a CSV/TSV cell, a keyed
//!   value (`"ttft_ms": 45.06`, `t=4.1121`), a mean with its spread (`152.31 ±
//!   0.42`), or one written with four or more
//!   decimals or three more than the claim (`0.3778` in a results table); a figure
//!   written for people (`1.82x` in a table, `2.93` in prose) is not a coarser
//!   claim's. When the claim's exact digits stand on the line as a look-alike (`131`
//!   under `prompt_tokens`), no rounding of another number there counts (`131.2`
//!   under `prefill_tok_s`): the claim copied the look-alike. A figure marked approximate is reported as rounded even when its
//!   value is equal (`~2.9`, `about 62.4`), because the source says it is approximate;
//!   a whole line figure with one significant digit (`~3`) rounds a more precise
//!   claim only within 5 % of it (`~3` for 2.93, not for 2.6), a decimal one at its
//!   written precision (`~0.02s` for 0.018 s); a one-digit whole claim
//!   (`3`) is no rounding of a finer figure (`2.85`); a bound never rounds.
//! - A `%`-marked token only matches a claim whose unit is percent-like (`percent`,
//!   `%`, `pct`) or absent, and no token matches across dimensions (see Units).
//! - **Fraction** (claim unit percent-like): the claim divided by 100, with two more
//!   decimals of precision, and the same rounding rules, against a token written as a
//!   decimal without unit: 98.0 → `0.98`, 70.0 → `0.7` / `0.70`, 100 → `1.0`; a bare
//!   `1` or `~1` is never 95 % or 100 %, a one-digit fraction (`≈ 0.9`) only equals,
//!   and a number keyed by a setting is no fraction (`util 0.90`, `temperature=0.2`,
//!   `--gpu-memory-utilization 0.90`, and `temperature … (0.6 is recommended)`: the
//!   nearest setting or metric word before it in its sentence decides).
//!   A line that writes its percentages with `%` writes none as a bare fraction
//!   (`0.917` beside `96.9%` is another metric).
//!   [`Match::rounded`] tells whether the fraction was an exact or a rounded one.
//! - **Ratio** (claim has `correct` and `total`): `49/50`, `49 / 50`, `49 of 50`,
//!   `49 out of 50`, integers equal to correct and total.
//! - **Count** (claim has `correct`): an integer token equal to `correct`, but only
//!   when the line gives it a reason to be a count: it mentions a count word
//!   (`correct`, `pass`/`passed`/…, `solved`, `success`/…, as a whole word, so
//!   `"correct": 49`, `correct: 49`, `49 solved`, but not `"incorrect": 49`), or it also
//!   carries `total` as another token (`| 49 | 50 |`) — unless correct equals total,
//!   when a second copy is just the same number twice (`4 workers on 4 nodes`).
//!
//! When a line holds several candidates the best wins: any exact form before any
//! rounded one (`1029 of 1319` beats `78.0%` for 78.01), then one in a column whose
//! header shares the label's words, then Exact, Rounded, Ratio, Fraction, Count (a
//! count next to a count word before one that is not); among equals, the leftmost.
//! Over a cited range a line carrying the value exactly beats an earlier line that
//! only rounds it; among equals, the earliest line. Exact beats rounded when looking
//! at other lines too ([`Document::nearest`], for `value-shifted`): `0.780` on L23
//! beats `0.779` on L22 for 78 %, and a rounding elsewhere counts only when the source
//! marks it approximate or writes a raw number three or more decimals longer
//! (`32.47 tokens/s` nineteen lines away is no sign that a claimed 32 moved there).

use std::ops::Range;

mod context;
mod label;
mod role;
mod structure;

use context::Dim;
pub use structure::{Layout, LineCtx, Stream};

/// A claimed value as the record writes it.
///
/// `value` keeps its decimal text (`"98.0"`, `"2.9"`, `"1048576"`, `"-3.16"`; grouping
/// separators and an exponent are accepted) because its precision matters. A value that
/// is not a single number (`"NaN"`, `"about 3"`) matches nothing.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Expected<'a> {
    /// The claimed value's decimal text.
    pub value: &'a str,
    /// The claimed unit. A percent-like unit (`percent`, `%`, `pct`) allows `%`-marked
    /// tokens and the fraction form (`None` allows `%` too); a unit of a known
    /// dimension (`tok/s`, `GB`, `ms`, `x`, `tokens`, …) rules out tokens written with
    /// a unit of another dimension, and lets a whole figure in that unit round it.
    pub unit: Option<&'a str>,
    /// Number of correct items behind a score, enabling the count and ratio forms.
    pub correct: Option<u64>,
    /// Number of items behind a score; the ratio form needs it with `correct`.
    pub total: Option<u64>,
    /// The claim's label (`decode tok/s`, `max model len`): a table column whose header
    /// shares its words is preferred, and a setting it names may carry the claim.
    pub label: Option<&'a str>,
    /// What was measured (`decode_rate`, `accuracy`): read with the label.
    pub metric: Option<&'a str>,
    /// Which statistic of it (`median`, `p99`, `upper end of the source range`): read
    /// with the label; it alone lets a range end or bound carry the claim.
    pub statistic: Option<&'a str>,
}

/// How a line carries a claimed value, best first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MatchKind {
    /// The value itself, at any precision (`7.20` for 7.2).
    Exact,
    /// The value at another precision (`2.9` or `~2.9` for 2.93, `2.93` for 2.9), or
    /// the equal value marked approximate (`~2.9` for 2.9).
    Rounded,
    /// A percent claim written as a fraction: 98.0 found as `0.98`.
    Fraction,
    /// The `correct` count of a score: `"correct": 49`.
    Count,
    /// The `correct`/`total` ratio of a score: `49/50`, `49 of 50`, `49 out of 50`.
    Ratio,
}

impl MatchKind {
    /// Rank used to pick the best match on a line (lower is better).
    fn precedence(self) -> u8 {
        match self {
            MatchKind::Exact => 0,
            MatchKind::Rounded => 1,
            MatchKind::Ratio => 2,
            MatchKind::Fraction => 3,
            MatchKind::Count => 4,
        }
    }
}

/// Where and how a line carries a claimed value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Match {
    /// The form in which the value was found.
    pub kind: MatchKind,
    /// The line gives the value at another precision or marks it approximate. Always
    /// true for [`MatchKind::Rounded`]; for [`MatchKind::Fraction`] it tells `0.98` for
    /// 97.8 (rounded) from `0.98` for 98.0; false for the other kinds.
    pub rounded: bool,
    /// Byte span in the line of the matched number, sign included, approximation mark,
    /// `%` and unit excluded; for a ratio, from the first number to the end of the second.
    pub span: Range<usize>,
    /// The line's text at `span`, as written (`1,048,576`, `49 out of 50`).
    pub text: String,
}

/// A number on a cited line whose value fits the claim but whose role does not: a
/// look-alike, and why it is not the figure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejected {
    /// Byte span of the number in its line.
    pub span: Range<usize>,
    /// The number as written.
    pub text: String,
    /// The role it plays there: `label`, `name`, `identifier`, `setting`, `range`,
    /// `bound`, `count`, `other-column`, `other-label`, `other-unit` or `coarser`.
    pub(crate) role: String,
    /// Why that role can't carry the claim (`` `24.58` stands in column `Duration (s)`,
    /// not tokens/s ``).
    pub reason: String,
}

/// What one line says about a claim: its best match, else the first look-alike it
/// rejected.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Found {
    pub(crate) best: Option<Match>,
    pub(crate) rejected: Option<Rejected>,
    /// No best, and a rejected look-alike carries the claim's exact digits (`3.5` in
    /// `Claude 3.5 Sonnet`): the claim copied it, so no rounding elsewhere is its figure.
    pub(crate) copied: bool,
}

/// What the cited lines say about a claim ([`Document::cited`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Cited {
    /// The cited line (index into the document) that carries the value best.
    pub found: Option<(usize, Match)>,
    /// Else the first look-alike the cited lines hold, with its line's index.
    pub rejected: Option<(usize, Rejected)>,
    /// A look-alike on the cited lines carries the claim's exact digits
    /// ([`Found::copied`]): only an exact copy elsewhere can be the figure.
    pub copied: bool,
}

/// A number as written on a line.
#[derive(Debug, Clone, PartialEq)]
pub struct NumberToken {
    /// Byte span of the number in the line, sign included; `~`, `%` and unit excluded.
    pub span: Range<usize>,
    /// Normalised text: sign, digits without separators, fraction, exponent as `e<n>`
    /// (`1,048,576` → `1048576`, `.98` → `0.98`, `1E+05` → `1e5`).
    pub(crate) text: String,
    /// The value as a float, for display and sorting only; matching never uses it.
    pub(crate) value: f64,
    /// Decimals as written, after the exponent (`98.0` → 1, `1.5e-3` → 4, `1e5` → 0).
    pub(crate) decimals: u32,
    /// Preceded by `~`, `≈` or `∼`.
    pub(crate) approx: bool,
    /// Followed by `%`.
    pub(crate) percent: bool,
}

/// Every number token on `line`, left to right (see the module docs for the rules).
pub fn tokens(line: &str) -> Vec<NumberToken> {
    scan(line).into_iter().map(|s| s.token).collect()
}

/// The best match of `expected` on one line read alone (as prose: no table around
/// it), or `None` when the line does not carry it (or `expected.value` is not a
/// number).
pub fn find(line: &str, expected: &Expected) -> Option<Match> {
    find_claim(line, &Claim::parse(expected)?, &LineCtx::default()).best
}

/// The line of `lines` that carries `expected` best, with its index in the iteration
/// (so for a cited range `#L43-L45`, pass lines 43..=45 and add 43 to get the line
/// number). A line holding the value exactly (or in an exact derived form) beats one
/// holding a rounding of it, wherever they are in the range; among equals the earliest
/// wins. The lines are read as a document of their own: a table row needs its header
/// among them ([`Document`] reads a whole document).
pub fn find_in_lines<'l>(
    lines: impl IntoIterator<Item = &'l str>,
    expected: &Expected,
) -> Option<(usize, Match)> {
    let lines: Vec<&str> = lines.into_iter().collect();
    let layout = Layout::new(&lines);
    Document::new(&lines, &layout)
        .cited(0..lines.len(), expected)
        .found
}

/// The line nearest to `cited` (0-based indices, end exclusive) that carries `expected`,
/// looking only outside `cited` ([`Document::nearest`]).
#[cfg(test)]
pub(crate) fn nearest_line(
    lines: &[&str],
    cited: Range<usize>,
    expected: &Expected,
) -> Option<(usize, Match)> {
    let layout = Layout::new(lines);
    Document::new(lines, &layout).nearest(cited, expected)
}

/// Whether `head` (the head's version of a pinned line) still carries `expected` as
/// `pinned` did: it carries the value, and when the pinned line gives it as the value
/// of a key (`KEY=64000`, `--max-tokens 64000`, `"max_tokens": 64000`), the head
/// gives it as the value of that same key. `KEY=128000 (the previous 64000 …)` no
/// longer carries 64000: the number is still on the line, but not as the setting.
pub(crate) fn still_carries(pinned: &str, head: &str, expected: &Expected) -> bool {
    let Some(claim) = Claim::parse(expected) else {
        return false;
    };
    let prose = LineCtx::default();
    let Some(now) = find_claim(head, &claim, &prose).best else {
        return false;
    };
    let Some(then) = find_claim(pinned, &claim, &prose).best else {
        return true;
    };
    let key_at = |line: &str, m: &Match| {
        let scanned = scan(line);
        let i = scanned
            .iter()
            .position(|t| t.token.span.start == m.span.start)?;
        role::key_text(line, &scanned, i)
    };
    match key_at(pinned, &then) {
        None => true,
        Some(key) => key_at(head, &now).as_deref() == Some(key.as_str()),
    }
}

/// A document's lines with their structure ([`Layout`], read once per document):
/// where a claim's value is, given what each number is where it stands.
#[derive(Clone, Copy)]
pub struct Document<'d> {
    lines: &'d [&'d str],
    layout: &'d Layout,
}

impl<'d> Document<'d> {
    /// `layout` must be `Layout::new(lines)`.
    pub fn new(lines: &'d [&'d str], layout: &'d Layout) -> Document<'d> {
        Document { lines, layout }
    }

    fn find(&self, index: usize, claim: &Claim) -> Found {
        find_claim(self.lines[index], claim, self.layout.at(index))
    }

    /// What the lines `cited` (0-based, end exclusive, clamped to the document) say
    /// about `expected`: the line carrying it best (exact before rounded, then the
    /// earliest), else the first look-alike they hold and why it is not the figure.
    pub fn cited(&self, cited: Range<usize>, expected: &Expected) -> Cited {
        let Some(claim) = Claim::parse(expected) else {
            return Cited::default();
        };
        let end = cited.end.min(self.lines.len());
        let mut out = Cited::default();
        for index in cited.start.min(end)..end {
            let found = self.find(index, &claim);
            match found.best {
                Some(m) if !m.rounded => {
                    out.found = Some((index, m));
                    return out;
                }
                Some(m) => {
                    out.found.get_or_insert((index, m));
                }
                None => {
                    out.copied |= found.copied;
                    if let Some(r) = found.rejected {
                        out.rejected.get_or_insert((index, r));
                    }
                }
            }
        }
        out
    }

    /// The line nearest to `cited` (0-based, end exclusive) that carries `expected`,
    /// looking only outside `cited`: the nearest exact one (or exact derived form:
    /// `0.780` for 78 %, `49/50`) if there is any, else the nearest that the document
    /// itself gives as that figure ([`Prepared::moved_to`]); on a tie the earlier
    /// line. Distance counts from the range's edges. A range past the end is clamped,
    /// so a citation beyond the last line searches backwards from the end.
    pub fn nearest(&self, cited: Range<usize>, expected: &Expected) -> Option<(usize, Match)> {
        let claim = Claim::parse(expected)?;
        let mut rounded = None;
        let lines = self.lines;
        let start = cited.start.min(lines.len());
        let end = cited.end.clamp(start, lines.len());
        for distance in 1.. {
            let earlier = start.checked_sub(distance);
            let later = Some(end + distance - 1).filter(|&i| i < lines.len());
            if earlier.is_none() && later.is_none() {
                break;
            }
            for index in [earlier, later].into_iter().flatten() {
                if let Some(m) = self.find(index, &claim).best.filter(|m| claim.moved_to(m)) {
                    if !m.rounded {
                        return Some((index, m));
                    }
                    rounded.get_or_insert((index, m));
                }
            }
        }
        rounded
    }
}

/// An expected value parsed once, for matching line after line of a document
/// read as a stream ([`Stream`] gives each line its context): [`Document::cited`]
/// and [`Document::nearest`] in pieces, with the same rules.
pub(crate) struct Prepared<'e>(Claim<'e>);

impl<'e> Prepared<'e> {
    /// `None` when `expected.value` is not a number (nothing can match it).
    pub(crate) fn new(expected: &Expected<'e>) -> Option<Prepared<'e>> {
        Claim::parse(expected).map(Prepared)
    }

    /// What `line`, in the context `ctx`, says about the claim.
    pub fn find(&self, line: &str, ctx: &LineCtx) -> Found {
        find_claim(line, &self.0, ctx)
    }

    /// Whether a match found on a line other than the cited ones shows that the
    /// figure moved there: an exact one does; a rounding only when the source marks
    /// the figure itself approximate (`about 62.4` for 62.4) or writes it as a raw
    /// number at least three decimals longer (`0.8021228…` for 80.2 %, `0.6463` for
    /// 0.6), not a printed measurement that merely rounds to it (`32.47` for 32).
    pub(crate) fn moved_to(&self, m: &Match) -> bool {
        self.0.moved_to(m)
    }
}

/// Separators allowed between digit groups of one number.
const GROUP_SEPARATORS: [char; 4] = [',', '_', '\u{2009}', '\u{202F}'];
/// Spaces allowed between an approximation mark or `%` and the number.
const SPACES: [char; 5] = [' ', '\t', '\u{A0}', '\u{2009}', '\u{202F}'];
const APPROX_MARKS: [char; 3] = ['~', '≈', '∼'];
const PERCENT_SIGNS: [char; 2] = ['%', '％'];
const MINUS_SIGNS: [char; 2] = ['-', '\u{2212}'];
/// Longest exponent read as scientific notation; longer ones are not numbers.
const MAX_EXPONENT_DIGITS: usize = 6;
/// Whole words that make an integer equal to `correct` a count (lowercase).
const COUNT_WORDS: [&str; 10] = [
    "correct",
    "pass",
    "passed",
    "passes",
    "passing",
    "solved",
    "success",
    "successes",
    "successful",
    "succeeded",
];

/// An exact decimal `(-1)^negative × digits × 10^-scale` in canonical form: no leading
/// or trailing zero digits, and zero is `{false, [], 0}`, so equal values are equal structs.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Decimal {
    negative: bool,
    digits: Vec<u8>,
    scale: i64,
}

impl Decimal {
    fn new(negative: bool, mut digits: Vec<u8>, mut scale: i64) -> Self {
        let leading = digits.iter().take_while(|&&d| d == 0).count();
        digits.drain(..leading);
        while digits.last() == Some(&0) {
            digits.pop();
            scale -= 1;
        }
        if digits.is_empty() {
            return Decimal {
                negative: false,
                digits,
                scale: 0,
            };
        }
        Decimal {
            negative,
            digits,
            scale,
        }
    }

    fn from_u64(n: u64) -> Self {
        Decimal::new(false, n.to_string().bytes().map(|b| b - b'0').collect(), 0)
    }

    fn percent_to_fraction(&self) -> Self {
        Decimal::new(self.negative, self.digits.clone(), self.scale + 2)
    }

    /// Rounded half away from zero to `places` decimals (`places` ≥ 0).
    fn round(&self, places: i64) -> Self {
        if self.scale <= places {
            return self.clone();
        }
        let dropped = self.scale - places;
        let Some(keep) = usize::try_from(dropped)
            .ok()
            .and_then(|d| self.digits.len().checked_sub(d))
        else {
            // Every digit lies below half a unit of the last kept place.
            return Decimal::new(false, Vec::new(), 0);
        };
        let mut kept = self.digits[..keep].to_vec();
        if self.digits[keep] >= 5 {
            match kept.iter().rposition(|&d| d != 9) {
                Some(i) => {
                    kept[i] += 1;
                    kept[i + 1..].fill(0);
                }
                None => {
                    kept.fill(0);
                    kept.insert(0, 1);
                }
            }
        }
        Decimal::new(self.negative, kept, places)
    }
}

/// A token with what matching needs beyond the public fields.
struct Scanned {
    token: NumberToken,
    value: Decimal,
    /// Digits written, leading zeros excluded (`0.98` → 2, `3` → 1, `80` → 2).
    significant: usize,
    /// Where the digits (or the leading `.`) start: after the sign.
    digits_start: usize,
    /// Written with a decimal point (`0.98`, `1.0`, `.5`; not `1` or `1e-2`).
    point: bool,
}

impl Scanned {
    fn decimals(&self) -> i64 {
        i64::from(self.token.decimals)
    }

    /// A non-negative integer written without decimals and equal to `n`.
    fn is_count(&self, n: &Decimal) -> bool {
        !self.token.percent && self.token.decimals == 0 && self.value == *n
    }
}

/// `expected`, parsed once for many lines.
struct Claim<'e> {
    value: Decimal,
    decimals: i64,
    /// The value as a float, only for the "within a few percent" tolerance.
    approx_value: f64,
    /// Digits written, leading zeros excluded.
    significant: usize,
    /// `%`-marked tokens may match: the unit is percent-like or absent.
    allows_percent_token: bool,
    /// The claim names no unit: a bound may carry its own value (`fewer than 1000
    /// samples` for 1000), never a measured figure (`under 1.4 s`, `16+ RPS`).
    unitless: bool,
    /// What the claim's unit measures, when it is a unit we know.
    dim: Option<Dim>,
    /// The fraction form and its precision, for a percent-like unit.
    fraction: Option<(Decimal, i64)>,
    correct: Option<Decimal>,
    total: Option<Decimal>,
    /// What a number's role must allow.
    want: role::Want<'e>,
    /// The value as written, for messages.
    text: &'e str,
}

impl<'e> Claim<'e> {
    fn moved_to(&self, m: &Match) -> bool {
        if !m.rounded {
            return true;
        }
        let Some(t) = scan(&m.text).into_iter().next() else {
            return false;
        };
        let (want, decimals) = match (m.kind, &self.fraction) {
            (MatchKind::Fraction, Some((f, d))) => (f, *d),
            _ => (&self.value, self.decimals),
        };
        t.value == *want || t.decimals() >= decimals + 3
    }

    fn parse(expected: &Expected<'e>) -> Option<Claim<'e>> {
        let text = expected.value.trim();
        let text = text.strip_prefix('+').unwrap_or(text);
        let mut scanned = scan(text);
        let number = scanned.pop()?;
        let rest = text[number.token.span.end..].trim_start_matches(SPACES);
        let bare_or_percent = rest.is_empty() || rest.strip_prefix(PERCENT_SIGNS) == Some("");
        if !scanned.is_empty() || number.token.span.start != 0 || !bare_or_percent {
            return None;
        }
        let percent_unit = expected.unit.is_some_and(is_percent_unit) || number.token.percent;
        let decimals = number.decimals();
        let dim = if percent_unit {
            Some(Dim::Percent)
        } else {
            context::claim_dim(expected.unit)
        };
        Some(Claim {
            fraction: percent_unit.then(|| (number.value.percent_to_fraction(), decimals + 2)),
            allows_percent_token: percent_unit || expected.unit.is_none_or(|u| u.trim().is_empty()),
            unitless: expected.unit.is_none_or(|u| u.trim().is_empty()),
            dim,
            approx_value: number.token.value,
            significant: number.significant,
            value: number.value,
            decimals,
            correct: expected.correct.map(Decimal::from_u64),
            total: expected.total.map(Decimal::from_u64),
            want: role::Want::new(dim, expected, expected.correct.is_some()),
            text,
        })
    }
}

/// Whether a unit means "percent" (`percent`, `%`, `pct`, `per cent`, `% pass@1`…); the
/// `inconsistent-value` check uses the same rule.
pub(crate) fn is_percent_unit(unit: &str) -> bool {
    let unit = unit.trim();
    unit.starts_with(PERCENT_SIGNS)
        || unit.eq_ignore_ascii_case("pct")
        || unit.eq_ignore_ascii_case("per cent")
        || unit
            .get(..7)
            .is_some_and(|p| p.eq_ignore_ascii_case("percent"))
}

/// How far off an approximate one-digit figure may be and still round a claim: "a
/// few percent" (`~3` for 2.93, not `~3` for 2.6).
const APPROX_TOLERANCE: f64 = 0.05;

/// How a token's value relates to a wanted value, before the line's words are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fit {
    /// Equal value (marked approximate or not).
    Equal,
    /// The line writes fewer decimals, and the wanted value rounds to it.
    Coarser,
    /// The line writes more decimals, and it rounds to the wanted value.
    Finer,
}

/// How `got` fits a wanted value `want` (written with `want_decimals` decimals and
/// `want_significant` digits; `want_float` for the tolerance), or `None`.
fn fit(
    want: &Decimal,
    want_decimals: i64,
    want_significant: usize,
    want_float: f64,
    got: &Scanned,
) -> Option<Fit> {
    if got.value == *want {
        return Some(Fit::Equal);
    }
    match got.decimals().cmp(&want_decimals) {
        std::cmp::Ordering::Less => {
            if want.round(got.decimals()) != got.value {
                return None;
            }
            // A one-digit figure (`3`, `0.02`) rounds only when marked approximate, and
            // a whole one only when close: otherwise 2.6 would be "found" on any line
            // saying `~3`. A decimal one was written at the precision its writer chose
            // (`~0.02s` for 0.018 s).
            let close =
                || (got.token.value - want_float).abs() <= APPROX_TOLERANCE * want_float.abs();
            (got.significant >= 2 || got.token.approx && (close() || got.point))
                .then_some(Fit::Coarser)
        }
        std::cmp::Ordering::Greater => {
            // A one-digit whole claim (`3` nodes) is not a rounding of `2.85`.
            let one_digit_whole = want_decimals <= 0 && want_significant <= 1;
            (!one_digit_whole && got.value.round(want_decimals) == *want).then_some(Fit::Finer)
        }
        std::cmp::Ordering::Equal => None,
    }
}

fn mentions_count_word(text: &str) -> bool {
    text.split(|c: char| !c.is_ascii_alphabetic())
        .any(|word| COUNT_WORDS.iter().any(|k| word.eq_ignore_ascii_case(k)))
}

/// `/`, `of` or `out of` between the numbers of a ratio.
fn is_ratio_joiner(between: &str) -> bool {
    let between = between.trim();
    if between == "/" {
        return true;
    }
    let mut words = between.split_whitespace();
    match (words.next(), words.next(), words.next()) {
        (Some(of), None, None) => of.eq_ignore_ascii_case("of"),
        (Some(out), Some(of), None) => {
            out.eq_ignore_ascii_case("out") && of.eq_ignore_ascii_case("of")
        }
        _ => false,
    }
}

/// A match found on a line, ranked against the others.
struct Candidate {
    /// (rounded, not in a preferred column, kind precedence, weak count): lower is
    /// better. Any exact form (`1029 of 1319`) beats a rounding on the same line
    /// (`78.0%` for 78.01).
    rank: (bool, bool, u8, bool),
    kind: MatchKind,
    rounded: bool,
    span: Range<usize>,
}

/// The tokens of `line`: cell by cell in a delimited (CSV/TSV) row, where a comma
/// separates cells and never groups digits.
fn scan_in(line: &str, ctx: &LineCtx) -> Vec<Scanned> {
    let Some(cells) = ctx.delimited(line) else {
        return scan(line);
    };
    let mut out = Vec::new();
    for cell in cells {
        for mut t in scan(&line[cell.clone()]) {
            t.token.span = t.token.span.start + cell.start..t.token.span.end + cell.start;
            t.digits_start += cell.start;
            out.push(t);
        }
    }
    out
}

fn find_claim(line: &str, claim: &Claim, ctx: &LineCtx) -> Found {
    let scanned = scan_in(line, ctx);
    let mut best: Option<Candidate> = None;
    let mut rejected: Option<Rejected> = None;
    // The first number the claim's exact digits were written as, rejected for its role:
    // a rounding of another number on the line is then no match (the claim copied the
    // look-alike: `131` under `prompt_tokens` beside `131.2` under `prefill_tok_s`).
    let mut lookalike: Option<Rejected> = None;
    let mut reject = |t: &Scanned, why: role::Why, exact: bool| {
        let r = Rejected {
            span: t.token.span.clone(),
            text: line[t.token.span.clone()].to_string(),
            role: why.role.to_string(),
            reason: why.reason,
        };
        if exact && lookalike.is_none() {
            lookalike = Some(r.clone());
        }
        rejected.get_or_insert(r);
    };
    // Only a strictly better candidate replaces the best, so the leftmost of equals stays.
    let mut consider =
        |kind: MatchKind, rounded: bool, weak: bool, preferred: bool, span: Range<usize>| {
            let rank = (
                rounded || kind == MatchKind::Rounded,
                !preferred,
                kind.precedence(),
                weak,
            );
            if best.as_ref().is_none_or(|b| rank < b.rank) {
                best = Some(Candidate {
                    rank,
                    kind,
                    rounded,
                    span,
                });
            }
        };
    let fraction_float = claim.approx_value / 100.0;
    let is_total = |index: usize, s: &Scanned| {
        claim.total.as_ref().is_some_and(|total| {
            s.is_count(total) && context::name_kind(line, &scanned, index).is_none()
        })
    };
    let mut count_context = None;
    let line_writes_percent = scanned.iter().any(|s| s.token.percent);
    let delimited = ctx.delimited(line).is_some();
    for (index, t) in scanned.iter().enumerate() {
        let value_fit = (!t.token.percent || claim.allows_percent_token)
            .then(|| {
                fit(
                    &claim.value,
                    claim.decimals,
                    claim.significant,
                    claim.approx_value,
                    t,
                )
            })
            .flatten();
        // The fraction form must be written as a decimal: a bare `1` is never 100 %.
        let fraction_fit = claim
            .fraction
            .as_ref()
            .filter(|_| !t.token.percent && t.point)
            .and_then(|(fraction, decimals)| {
                fit(fraction, *decimals, claim.significant, fraction_float, t)
            })
            // A one-digit fraction (`≈ 0.9`) is that value or nothing: too coarse to
            // round a score.
            .filter(|f| *f != Fit::Coarser || t.significant >= 2);
        let is_correct = claim.correct.as_ref().is_some_and(|c| t.is_count(c));
        if value_fit.is_none() && fraction_fit.is_none() && !is_correct {
            continue;
        }
        // The number's role, read only for a number that fits.
        let exact = value_fit == Some(Fit::Equal) && !t.token.approx;
        let data = || {
            delimited
                || role::key_text(line, &scanned, index).is_some()
                || with_spread(&line[t.token.span.end..])
        };
        let seen = match role::read(line, &scanned, index, ctx, &claim.want) {
            Ok(seen) => seen,
            Err(why) => {
                reject(t, why, exact);
                continue;
            }
        };
        let shown = &line[t.token.span.clone()];
        let dim = seen.dim;
        if let Some(f) = value_fit {
            // `4x NVIDIA H100` counts GPUs: a multiplier before a thing counts it.
            let dim = if dim == Some(Dim::Multiplier)
                && matches!(claim.dim, Some(Dim::Count(_)))
                && context::times_a_thing(line, t.token.span.end)
            {
                claim.dim
            } else {
                dim
            };
            if !context::compatible(claim.dim, dim) {
                reject(t, role::other_unit(&claim.want, dim, shown), exact);
            } else if f == Fit::Coarser && !t.token.approx {
                // Rounded needs the source to say so: `72%` is not 71.7 %.
                reject(t, role::coarser(shown, claim.text), false);
            } else if f == Fit::Finer && !raw(t, claim.decimals, data()) {
                // A claim rounds a raw number, not a figure written for people:
                // `1.82x` in a table is not 1.8x.
                reject(t, role::finer(shown, claim.text), false);
            } else if seen.bound && (f != Fit::Equal || !claim.unitless) {
                reject(t, role::bound(shown, claim.text), false);
            } else {
                let rounded = f != Fit::Equal || t.token.approx;
                let kind = if rounded {
                    MatchKind::Rounded
                } else {
                    MatchKind::Exact
                };
                consider(kind, rounded, false, seen.preferred, t.token.span.clone());
            }
        }
        if let Some(f) = fraction_fit {
            // A fraction carries a percent only bare, and never as a setting
            // (`temperature=0.2`, `--gpu-memory-utilization 0.90`, `temperature …
            // (0.6 is recommended)`).
            let bare = !seen.own_unit && matches!(dim, None | Some(Dim::Percent));
            if !bare {
                reject(t, role::other_unit(&claim.want, dim, shown), false);
            } else if context::setting_keyed(line, &scanned, index)
                || context::setting_in_sentence(line, &scanned, index)
            {
                reject(t, role::setting_fraction(shown), false);
            } else if line_writes_percent {
                // A line that writes its percentages with `%` does not write one as
                // a bare fraction: `0.917` beside `96.9%` is another metric.
                reject(t, role::fraction_beside_percent(shown), false);
            } else if f == Fit::Coarser && !t.token.approx {
                reject(t, role::coarser(shown, claim.text), false);
            } else if f == Fit::Finer && !raw(t, claim.decimals + 2, data()) {
                reject(t, role::finer(shown, claim.text), false);
            } else if seen.bound && f != Fit::Equal {
                reject(t, role::bound(shown, claim.text), false);
            } else {
                let rounded = f != Fit::Equal || t.token.approx;
                consider(
                    MatchKind::Fraction,
                    rounded,
                    false,
                    seen.preferred,
                    t.token.span.clone(),
                );
            }
        }
        if !is_correct
            || !matches!(dim, None | Some(Dim::Count(_)))
            || seen.own_unit && dim.is_none()
        {
            continue;
        }
        let next = scanned.get(index + 1);
        if let (Some(total), Some(next)) = (&claim.total, next) {
            if next.is_count(total)
                && is_ratio_joiner(&line[t.token.span.end..next.token.span.start])
                && context::name_kind(line, &scanned, index + 1).is_none()
            {
                consider(
                    MatchKind::Ratio,
                    false,
                    false,
                    seen.preferred,
                    t.token.span.start..next.token.span.end,
                );
            }
        }
        // When correct equals total, a second copy of the total is just the same
        // number twice (`4 workers on 4 nodes`), not a count beside its total.
        let distinct = claim.correct != claim.total;
        let in_context = *count_context.get_or_insert_with(|| {
            mentions_count_word(line)
                || distinct
                    && scanned
                        .iter()
                        .enumerate()
                        .any(|(other, s)| other != index && is_total(other, s))
        });
        if in_context {
            let gap_start = index
                .checked_sub(1)
                .map_or(0, |prev| scanned[prev].token.span.end);
            let gap_end = next.map_or(line.len(), |n| n.token.span.start);
            let keyed = mentions_count_word(&line[gap_start..t.token.span.start])
                || mentions_count_word(&line[t.token.span.end..gap_end]);
            consider(
                MatchKind::Count,
                false,
                !keyed,
                seen.preferred,
                t.token.span.clone(),
            );
        }
    }
    let best = best
        .filter(|b| !(b.rounded && lookalike.is_some()))
        .map(|b| Match {
            kind: b.kind,
            rounded: b.rounded,
            text: line[b.span.clone()].to_string(),
            span: b.span,
        });
    Found {
        copied: best.is_none() && lookalike.is_some(),
        rejected: if best.is_some() {
            None
        } else {
            lookalike.or(rejected)
        },
        best,
    }
}

/// A mean printed with its spread after it (`152.31 ± 0.42`, `62.06±12.28`,
/// `2.8316 +/- 0.0138`).
fn with_spread(after: &str) -> bool {
    let after = after.trim_start_matches(|c: char| SPACES.contains(&c) || c == '*');
    after.starts_with('±')
        || after.starts_with("+/-")
        || after.starts_with("+-")
        || after.starts_with("\\pm")
}

/// A number written the way a program prints it, not a figure written for people: a
/// CSV or TSV cell, a keyed value (`"ttft_mean_ms": 45.06`, `latency=4.1121`), a mean
/// printed with its spread (`152.31 ± 0.42`), or one with four or more decimals, or
/// three more than the claim (`0.3778` in a printed results table). Only such a
/// number rounds to a coarser claim.
fn raw(t: &Scanned, claim_decimals: i64, data: bool) -> bool {
    data || t.decimals() >= 4 || t.decimals() >= claim_decimals + 3
}

/// Words that mark the number after them approximate (`about 3 s`, `around **78%**`).
const APPROX_WORDS: [&str; 9] = [
    "about",
    "around",
    "approx",
    "approx.",
    "approximately",
    "roughly",
    "nearly",
    "circa",
    "ca.",
];

fn ends_with_approx_word(text: &str) -> bool {
    let start = text
        .rfind(|c: char| !(c.is_alphabetic() || c == '.'))
        .map_or(0, |k| {
            k + text[k..].chars().next().map_or(1, char::len_utf8)
        });
    let word = &text[start..];
    // `约74%`, `約 3 秒`: Chinese and Japanese write "about" as one glued character.
    APPROX_WORDS.iter().any(|w| w.eq_ignore_ascii_case(word))
        || text.trim_end().ends_with(['约', '約'])
}

fn digit_at(bytes: &[u8], i: usize) -> bool {
    bytes.get(i).is_some_and(u8::is_ascii_digit)
}

/// Text ending in a JSON escape (`\t`, `\n`, `\r`) whose backslash is not itself
/// escaped.
fn escaped(before: &str) -> bool {
    let b = before.as_bytes();
    b.len() >= 2
        && matches!(b[b.len() - 1], b't' | b'n' | b'r')
        && b[b.len() - 2] == b'\\'
        && b[..b.len() - 2]
            .iter()
            .rev()
            .take_while(|&&c| c == b'\\')
            .count()
            % 2
            == 0
}

/// A Han, kana or Hangul character: scripts written without spaces, whose words
/// numbers stand glued to.
fn is_cjk(c: char) -> bool {
    matches!(c as u32, 0x3040..=0x30FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xAC00..=0xD7AF | 0xF900..=0xFAFF)
}

fn ends_with_word_char(text: &str) -> bool {
    text.chars().next_back().is_some_and(char::is_alphanumeric)
}

fn scan(line: &str) -> Vec<Scanned> {
    let bytes = line.as_bytes();
    let mut out = Vec::new();
    let mut at = 0;
    // Only ASCII bytes start a token, and they never occur inside a multi-byte
    // character, so every position handed to `scan_at` is a char boundary.
    while at < bytes.len() {
        if bytes[at].is_ascii_digit() || bytes[at] == b'.' && digit_at(bytes, at + 1) {
            at = match scan_at(line, at) {
                Ok((scanned, end)) => {
                    out.push(scanned);
                    end
                }
                Err(resume) => resume,
            };
        } else {
            at += 1;
        }
    }
    out
}

/// Reads the number whose digits (or leading `.`) start at `s`. `Ok` carries the
/// token and where to resume; `Err` where to resume after a run that is not a number.
/// Either position is past `s`.
fn scan_at(line: &str, s: usize) -> Result<(Scanned, usize), usize> {
    let bytes = line.as_bytes();
    let before = &line[..s];
    match before.chars().next_back() {
        // Chinese and Japanese glue numbers to their words (`约74%`, `从93.5秒`); a
        // JSON string's escape is no letter (`"acc\t0.97\n"` in a notebook's output).
        Some(c) if (c.is_alphanumeric() && !is_cjk(c) && !escaped(before)) || c == '.' => {
            return Err(skip_word(line, s))
        }
        Some('_') if ends_with_word_char(before.trim_end_matches('_')) => {
            return Err(skip_word(line, s))
        }
        _ => {}
    }

    let mut start = s;
    let mut negative = false;
    if let Some(minus) = before
        .chars()
        .next_back()
        .filter(|c| MINUS_SIGNS.contains(c))
    {
        let ahead = &before[..s - minus.len_utf8()];
        if !ends_with_word_char(ahead) {
            negative = true;
            start = ahead.len();
        }
    }
    // The mark is seen through emphasis, a plus sign and currency: `~**−31%**`,
    // `≈ **1.75×**`, `~$1.55`; `~=` is a mark too.
    let marked = line[..start].trim_end_matches(|c: char| {
        SPACES.contains(&c) || matches!(c, '*' | '_' | '`' | '+' | '$' | '€' | '£' | '¥')
    });
    // LaTeX writes the marks as commands: `$\sim$2.8`, `$\approx 3$`.
    let approx = marked.ends_with(APPROX_MARKS)
        || marked.ends_with("~=")
        || marked.ends_with("\\sim")
        || marked.ends_with("\\approx")
        || ends_with_approx_word(marked);

    let mut i = s;
    while digit_at(bytes, i) {
        i += 1;
    }
    let lead = i - s;
    let mut grouped = false;
    if (1..=3).contains(&lead) {
        if let Some(end) = digit_groups(line, i) {
            i = end;
            grouped = true;
        }
    }
    let integer: Vec<u8> = bytes[s..i]
        .iter()
        .filter(|b| b.is_ascii_digit())
        .map(|b| b - b'0')
        .collect();

    let mut fraction: &str = "";
    if bytes.get(i) == Some(&b'.') && digit_at(bytes, i + 1) {
        let f = i + 1;
        i = f;
        while digit_at(bytes, i) {
            i += 1;
        }
        fraction = &line[f..i];
    }
    let exponent = exponent_at(line, i);
    if let Some((_, end)) = exponent {
        i = end;
    }
    let end = i;

    // What follows decides whether this was a number at all.
    if bytes.get(end) == Some(&b'.')
        && bytes
            .get(end + 1)
            .is_some_and(|b| b.is_ascii_alphanumeric())
    {
        // Dotted run: a version (`2.9.1`, `0.1.dev19043`), an address or a file name.
        return Err(skip_word(line, s));
    }
    if lead > 0 && !grouped && fraction.is_empty() && exponent.is_none() {
        match bytes.get(end) {
            Some(&sep @ (b'-' | b'/')) => {
                if let Some(date_end) = date_at(bytes, s, sep) {
                    return Err(date_end);
                }
            }
            Some(b':') => {
                if let Some(clock_end) = clock_at(bytes, s, end) {
                    return Err(clock_end);
                }
            }
            _ => {}
        }
        if lead >= 2 && bytes[s] == b'0' {
            return Err(skip_word(line, s)); // zero-padded: an id (`0010`, `04af`)
        }
    }
    let after = &line[end..];
    // LaTeX escapes the sign: `97.1\%`.
    let spaced = after.trim_start_matches(SPACES);
    let percent = spaced.starts_with(PERCENT_SIGNS) || spaced.starts_with("\\%");
    if !percent {
        let unit_len: usize = after
            .chars()
            .take_while(|&c| c.is_alphabetic() && !is_cjk(c))
            .map(char::len_utf8)
            .sum();
        let glued = if unit_len > 0 {
            after[unit_len..].starts_with(|c: char| c.is_ascii_digit() || c == '_')
        } else {
            after.starts_with('_')
                && after
                    .trim_start_matches('_')
                    .starts_with(char::is_alphanumeric)
        };
        if glued {
            return Err(skip_word(line, s)); // identifier or hex
        }
    }

    let exponent = exponent.map(|(e, _)| e);
    let mut text = String::with_capacity(end - start + 2);
    if negative {
        text.push('-');
    }
    if integer.is_empty() {
        text.push('0');
    } else {
        text.extend(integer.iter().map(|&d| char::from(b'0' + d)));
    }
    if !fraction.is_empty() {
        text.push('.');
        text.push_str(fraction);
    }
    if let Some(e) = exponent {
        text.push('e');
        text.push_str(&e.to_string());
    }
    let fraction_len = i64::try_from(fraction.len()).unwrap_or(i64::MAX);
    let scale = fraction_len.saturating_sub(exponent.unwrap_or(0));
    let mut digits = integer;
    digits.extend(fraction.bytes().map(|b| b - b'0'));
    let significant = digits.iter().skip_while(|&&d| d == 0).count();
    let token = NumberToken {
        span: start..end,
        value: text.parse().unwrap_or(f64::NAN),
        text,
        decimals: u32::try_from(scale.max(0)).unwrap_or(u32::MAX),
        approx,
        percent,
    };
    let scanned = Scanned {
        token,
        value: Decimal::new(negative, digits, scale),
        significant,
        digits_start: s,
        point: !fraction.is_empty(),
    };
    Ok((scanned, end))
}

/// End of the groups of exactly three digits that follow position `i`, all behind the
/// same separator; `None` when there is no group or one of them is malformed.
fn digit_groups(line: &str, i: usize) -> Option<usize> {
    let bytes = line.as_bytes();
    let sep = line[i..]
        .chars()
        .next()
        .filter(|c| GROUP_SEPARATORS.contains(c))?;
    let mut end = i;
    while line[end..].starts_with(sep) {
        let group = end + sep.len_utf8();
        if !digit_at(bytes, group) {
            break;
        }
        let well_formed =
            digit_at(bytes, group + 1) && digit_at(bytes, group + 2) && !digit_at(bytes, group + 3);
        if !well_formed {
            return None;
        }
        end = group + 3;
    }
    (end > i).then_some(end)
}

/// Scientific exponent at `i` (`e5`, `E-3`, `e+07`): its value and end.
fn exponent_at(line: &str, i: usize) -> Option<(i64, usize)> {
    let bytes = line.as_bytes();
    if !matches!(bytes.get(i), Some(b'e' | b'E')) {
        return None;
    }
    let mut j = i + 1;
    let negative = bytes.get(j) == Some(&b'-');
    if matches!(bytes.get(j), Some(b'+' | b'-')) {
        j += 1;
    }
    let digits = j;
    while digit_at(bytes, j) {
        j += 1;
    }
    if !(1..=MAX_EXPONENT_DIGITS).contains(&(j - digits))
        || line[j..].starts_with(|c: char| c.is_alphanumeric() || c == '_')
    {
        return None;
    }
    let magnitude: i64 = line[digits..j].parse().ok()?;
    Some((if negative { -magnitude } else { magnitude }, j))
}

/// The integer starting at `i`: its value (saturating) and digit count, and its end.
fn integer_at(bytes: &[u8], i: usize) -> (u64, usize, usize) {
    let mut j = i;
    let mut value: u64 = 0;
    while let Some(d) = bytes.get(j).filter(|b| b.is_ascii_digit()) {
        value = value.saturating_mul(10).saturating_add(u64::from(d - b'0'));
        j += 1;
    }
    (value, j - i, j)
}

/// End of the date starting at `s` whose parts are joined by `sep`, when the chain is
/// date-shaped: `2026-08-07` (year, month, day), `07/08/2026`, `8/7/26` (day and month
/// either way, a 2- or 4-digit year). `512/512/512` and `1-2-3` are not dates.
fn date_at(bytes: &[u8], s: usize, sep: u8) -> Option<usize> {
    let mut parts = [(0u64, 0usize); 3];
    let mut i = s;
    for (k, part) in parts.iter_mut().enumerate() {
        if k > 0 {
            if bytes.get(i) != Some(&sep) {
                return None;
            }
            i += 1;
        }
        let (value, len, end) = integer_at(bytes, i);
        if len == 0 {
            return None;
        }
        *part = (value, len);
        i = end;
    }
    let [(a, la), (b, lb), (c, lc)] = parts;
    let day = |v: u64| (1..=31).contains(&v);
    let month = |v: u64| (1..=12).contains(&v);
    let short = |l: usize| (1..=2).contains(&l);
    let ymd = la == 4 && short(lb) && short(lc) && month(b) && day(c);
    let dmy = short(la)
        && short(lb)
        && (lc == 2 || lc == 4)
        && (day(a) && month(b) || month(a) && day(b));
    // A date followed by more of the chain (`1-2-2026-5`) is not one.
    let more = bytes.get(i) == Some(&sep) && digit_at(bytes, i + 1);
    ((ymd || dmy) && !more).then_some(i)
}

/// End of the clock time `h:mm[:ss][.fff]` starting at `s` (hours `end - s` digits,
/// the first `:` at `end`): 1–2 digit hours and exactly 2-digit minutes and seconds.
/// `67108864:67108864` and `3:1` are not clocks.
fn clock_at(bytes: &[u8], s: usize, end: usize) -> Option<usize> {
    if !(1..=2).contains(&(end - s)) {
        return None;
    }
    let mut i = end;
    let mut fields = 0;
    while fields < 2 && bytes.get(i) == Some(&b':') {
        let (_, len, after) = integer_at(bytes, i + 1);
        if len != 2 {
            break;
        }
        i = after;
        fields += 1;
    }
    if fields == 0 {
        return None;
    }
    if bytes.get(i) == Some(&b'.') && digit_at(bytes, i + 1) {
        i = integer_at(bytes, i + 1).2;
    }
    Some(i)
}

/// End of the identifier-like run starting at `s` (word characters, and `.` or `:`
/// between them), skipped as a whole so that no number is read from its middle.
fn skip_word(line: &str, s: usize) -> usize {
    let mut chars = line[s..].char_indices().peekable();
    let mut end = s;
    while let Some((k, c)) = chars.next() {
        let joins = matches!(c, '.' | ':')
            && chars
                .peek()
                .is_some_and(|&(_, next)| next.is_alphanumeric());
        if !(c.is_alphanumeric() || c == '_' || joins) {
            break;
        }
        end = s + k + c.len_utf8();
    }
    end.max(s + 1)
}

#[cfg(test)]
mod tests {
    use super::MatchKind::{Count, Exact, Fraction, Ratio, Rounded};
    use super::*;

    const P: Option<&str> = Some("percent");
    const TOK: Option<&str> = Some("tokens/s");

    /// (line, claimed value, unit, correct, total, expected kind)
    type Case = (
        &'static str,
        &'static str,
        Option<&'static str>,
        Option<u64>,
        Option<u64>,
        Option<MatchKind>,
    );

    #[rustfmt::skip]
    const CASES: &[Case] = &[
        // Boundaries: where 2.9 is not.
        ("decode 12.9 tokens/s", "2.9", TOK, None, None, None),
        ("decode 2.95 tokens/s", "2.9", TOK, None, None, None),
        ("llama.cpp 2.9.1 release", "2.9", TOK, None, None, None),
        ("servers at 192.168.2.9", "2.9", None, None, None, None),
        ("built with v2.9", "2.9", TOK, None, None, None),
        ("id a2.9b here", "2.9", TOK, None, None, None),
        ("addr 0x2.9", "2.9", TOK, None, None, None),
        ("rpc port p18081", "18081", None, None, None, None),
        ("foo_2.9 bar", "2.9", TOK, None, None, None),
        ("the 2.9e5 figure", "2.9", TOK, None, None, None),
        ("débit é2.9", "2.9", TOK, None, None, None),
        // Dates and times are not numbers.
        ("run on 2026-08-07", "2026", None, None, None, None),
        ("run on 2026-08-07", "8", None, None, None, None),
        ("run on 2026-08-07", "-7", None, None, None, None),
        ("2026-08-07T15:45:04Z", "15", None, None, None, None),
        ("at 15:45:04 UTC", "45", None, None, None, None),
        ("at 15:45:04 UTC", "4", None, None, None, None),
        ("on 07/08/2026", "2026", None, None, None, None),
        // Boundaries: where 2.9 is.
        ("decode 2.9 tokens/s", "2.9", TOK, None, None, Some(Exact)),
        ("decode 2.9t/s", "2.9", TOK, None, None, Some(Exact)),
        ("decode 2.9tok/s", "2.9", TOK, None, None, Some(Exact)),
        ("decode (2.9)", "2.9", TOK, None, None, Some(Exact)),
        ("2.9, 3.1 and 4", "2.9", TOK, None, None, Some(Exact)),
        ("decode **2.9** tok/s", "2.9", TOK, None, None, Some(Exact)),
        ("decode _2.9_ tok/s", "2.9", TOK, None, None, Some(Exact)),
        ("| decode |2.9| tok/s |", "2.9", TOK, None, None, Some(Exact)),
        (r#"{"value": 2.9, "unit": "tokens/s"}"#, "2.9", TOK, None, None, Some(Exact)),
        ("2.9x faster", "2.9", None, None, None, Some(Exact)),
        ("share 2.9% of time", "2.9", P, None, None, Some(Exact)),
        ("share 2.9% of time", "2.9", TOK, None, None, None),
        ("share 2.9% of time", "2.9", None, None, None, Some(Exact)),
        ("decode 2.9トークン/秒", "2.9", TOK, None, None, Some(Exact)),
        ("ranges 2.8-2.9", "2.9", TOK, None, None, None),
        ("ranges 2.8-2.9", "-2.9", TOK, None, None, None),
        ("2.9", "+2.9", None, None, None, Some(Exact)),
        // Signs.
        ("delta -3.16 ms", "-3.16", None, None, None, Some(Exact)),
        ("delta -3.16 ms", "3.16", None, None, None, None),
        ("delta 3.16 ms", "-3.16", None, None, None, None),
        ("delta (-3.16)", "-3.16", None, None, None, Some(Exact)),
        ("delta **−3.16**", "-3.16", None, None, None, Some(Exact)),
        ("items 1-2", "-2", None, None, None, None),
        ("items 1-2", "2", None, None, None, None),
        ("llama-3 model", "3", None, None, None, None),
        ("llama-3 model", "-3", None, None, None, None),
        ("k3-neuron-iq1s shards", "3", None, None, None, None),
        // Thousands separators.
        ("context 1,048,576 tokens", "1048576", None, None, None, Some(Exact)),
        ("context 1,048,576 tokens", "1.048", None, None, None, None),
        ("context 1,048,576 tokens", "1", None, None, None, None),
        ("context 1048576 tokens", "1,048,576", None, None, None, Some(Exact)),
        ("context 1_048_576 tokens", "1048576", None, None, None, Some(Exact)),
        ("context 1\u{2009}048\u{2009}576", "1048576", None, None, None, Some(Exact)),
        ("context 1,048,57", "1048", None, None, None, None),
        ("list 1, 2", "2", None, None, None, Some(Exact)),
        ("list 1,2", "1.2", None, None, None, None),
        ("list 1,2", "2", None, None, None, Some(Exact)),
        ("débit 2,9 jetons/s", "2.9", TOK, None, None, None),
        // Units beside the number.
        ("GSM8K 98%", "98.0", P, None, None, Some(Exact)),
        ("GSM8K 98 %", "98.0", P, None, None, Some(Exact)),
        ("memory 120GB", "120", Some("GB"), None, None, Some(Exact)),
        ("| 8K | 79.6 |", "8", None, None, None, Some(Exact)),
        ("| 8K | 79.6 |", "8192", None, None, None, None),
        // Precision.
        ("latency 7.20 ms", "7.2", None, None, None, Some(Exact)),
        ("latency 7.2 ms", "7.20", None, None, None, Some(Exact)),
        ("score 98", "98.0", P, None, None, Some(Exact)),
        ("score 98.00", "98.0", P, None, None, Some(Exact)),
        ("decode ~2.9 tok/s", "2.93", TOK, None, None, Some(Rounded)),
        ("decode ~2.9 tok/s", "2.9", TOK, None, None, Some(Rounded)),
        ("decode ~2.9 tok/s", "2.93", TOK, None, None, Some(Rounded)),
        ("decode ~2.9 tok/s", "2.94", TOK, None, None, Some(Rounded)),
        ("decode 2.9 tok/s", "2.96", TOK, None, None, None),
        ("decode ~3.0 tok/s", "2.96", TOK, None, None, Some(Rounded)),
        // A claim rounds a raw number, not a figure written for people.
        ("decode 2.93 tok/s", "2.9", TOK, None, None, None),
        ("\"decode_tok_s\": 2.93", "2.9", TOK, None, None, Some(Rounded)),
        ("decode 2.93127 tok/s", "2.9", TOK, None, None, Some(Rounded)),
        ("ttft=45.06 ms", "45.1", Some("ms"), None, None, Some(Rounded)),
        ("decode 2.96 tok/s", "2.9", TOK, None, None, None),
        ("decode 2.94 tok/s", "2.93", TOK, None, None, None),
        ("3 nodes", "2.93", TOK, None, None, None),
        ("~3 tok/s", "2.93", TOK, None, None, Some(Rounded)),
        ("| Min | ~0.02s |", "0.018", Some("s"), None, None, Some(Rounded)),
        ("prefill ~80 tok/s", "79.6", TOK, None, None, Some(Rounded)),
        ("~4.4 s", "4.35", None, None, None, Some(Rounded)),
        ("~1.01 s", "1.005", None, None, None, Some(Rounded)),
        ("0.30000000000000004", "0.3", None, None, None, Some(Rounded)),
        ("0.3", "0.3", None, None, None, Some(Exact)),
        ("| 8K | 79.6 | 43.9 |", "79.6", TOK, None, None, Some(Exact)),
        ("| 8K | 79.6 | 43.9 |", "43.9", TOK, None, None, Some(Exact)),
        ("| 8K | 79.6 | 43.9 |", "43.8", TOK, None, None, None),
        ("| 8K | 79.6 | 43.9 | ~43.8 |", "43.8", TOK, None, None, Some(Rounded)),
        // Fraction.
        ("accuracy 0.98", "98.0", P, None, None, Some(Fraction)),
        ("accuracy 0.7", "70.0", P, None, None, Some(Fraction)),
        ("accuracy 0.70", "70.0", P, None, None, Some(Fraction)),
        ("accuracy .98", "98", P, None, None, Some(Fraction)),
        ("accuracy 0.98", "97.8", P, None, None, None),
        ("accuracy 0.98", "98.0", TOK, None, None, None),
        ("accuracy 0.98%", "98.0", P, None, None, None),
        ("accuracy 0.9", "98.0", P, None, None, None),
        ("accuracy 1 of them", "98.0", P, None, None, None),
        // Count and ratio.
        (r#"{"correct": 49, "total": 50}"#, "98.0", P, Some(49), Some(50), Some(Count)),
        ("correct: 49", "98.0", P, Some(49), Some(50), Some(Count)),
        ("score 49 (first pass)", "98.0", P, Some(49), Some(50), Some(Count)),
        ("49 solved", "98.0", P, Some(49), Some(50), Some(Count)),
        ("| 49 | 50 |", "98.0", P, Some(49), Some(50), Some(Count)),
        ("49 nodes", "98.0", P, Some(49), Some(50), None),
        (r#"{"incorrect": 49}"#, "98.0", P, Some(49), Some(50), None),
        ("49.0 correct", "98.0", P, Some(49), Some(50), None),
        ("GSM8K 49/50", "98.0", P, Some(49), Some(50), Some(Ratio)),
        ("GSM8K 49 / 50", "98.0", P, Some(49), Some(50), Some(Ratio)),
        ("GSM8K 49 of 50", "98.0", P, Some(49), Some(50), Some(Ratio)),
        ("GSM8K 49 Out Of 50", "98.0", P, Some(49), Some(50), Some(Ratio)),
        ("GSM8K 48/50", "98.0", P, Some(49), Some(50), None),
        ("GSM8K 49/51", "98.0", P, Some(49), Some(50), None),
        ("GSM8K 49/50", "98.0", P, Some(49), None, None),
        ("4 nodes", "100.0", P, Some(4), Some(4), None),
        ("4/4", "100.0", P, Some(4), Some(4), Some(Ratio)),
        ("GSM8K 49/50 (98%)", "98.0", P, Some(49), Some(50), Some(Exact)),
        // Fraction forms are decimals.
        ("score ~1", "95", P, None, None, None),
        ("score 1", "100", P, None, None, None),
        ("score 1.0", "100", P, None, None, Some(Fraction)),
        ("KV cache ~1GB", "95", P, None, None, None),
        // Other physical units contradict rates and bytes (held-out corpus).
        ("power 165 W under load, 38 W idle", "38", TOK, None, None, None),
        ("power 165 W under load", "165", Some("GB"), None, None, None),
        ("clock 1.8 GHz", "1.8", TOK, None, None, None),
        // Numbers keyed by an identifier's name are not values.
        ("Namespace(host='0.0.0.0', port=8000, max_num_seqs=256)", "8000", None, None, None, None),
        ("seed: 42", "42", None, None, None, None),
        // A setting carries only a claim whose unit or label names it.
        ("max_num_seqs=256", "256", None, None, None, None),
        ("max_num_seqs=256", "256", Some("seqs"), None, None, Some(Exact)),
        ("\"override_batch_size\": 32,", "32", None, None, None, None),
        ("Temperature: 29°C", "29", None, None, None, Some(Exact)),
        // An exact form beats a rounding on the same line.
        ("scored 78.0%, i.e. 1029 of 1319", "78.01", P, Some(1029), Some(1319), Some(Ratio)),
        ("stderr ≈ 0.9", "89.26", P, None, None, None),
        ("stderr ≈ 0.9", "90", P, None, None, Some(Fraction)),
        // One-digit and whole figures round only with a reason.
        ("~3 tok/s", "2.6", TOK, None, None, None),
        ("0.5 s", "0.48", Some("s"), None, None, None),
        ("~0.5 s", "0.49", Some("s"), None, None, Some(Rounded)),
        ("| 80 |", "79.6", TOK, None, None, None),
        ("| ~80 |", "79.6", TOK, None, None, Some(Rounded)),
        ("| TP4 | +37% |", "36.8", None, None, None, None),
        ("| TP4 | +37% |", "36.8", P, None, None, None),
        ("| TP2 | 47/50 |", "47.3", TOK, None, None, None),
        ("avg 2.85", "3", None, None, None, None),
        ("avg 2.85", "2.9", None, None, None, None),
        ("took 38 s", "37.6", Some("s"), None, None, None),
        // Units and dimensions.
        ("| 16k |", "16", TOK, None, None, None),
        ("| 16k |", "16", None, None, None, Some(Exact)),
        ("7.5K tok/s", "7.5", TOK, None, None, None),
        ("412 ms", "412", Some("s"), None, None, None),
        ("412 ms", "412", Some("ms"), None, None, Some(Exact)),
        ("71.3 GiB", "71.3", Some("GB"), None, None, Some(Exact)),
        ("0.5 TB", "0.5", Some("GB"), None, None, None),
        ("120 GB/s", "120", Some("GB"), None, None, None),
        ("2,350 tokens/s", "2350", Some("tokens"), None, None, None),
        ("at 64 requests", "64", TOK, None, None, None),
        ("at 32 concurrent requests", "32", Some("requests"), None, None, Some(Exact)),
        ("at 32 concurrent requests", "32", TOK, None, None, None),
        ("1,048,576-token context", "1048576", Some("tokens"), None, None, Some(Exact)),
        ("9.8x the single stream", "9.8", TOK, None, None, None),
        ("5.20it/s", "5.2", TOK, None, None, None),
        ("2.9 tokens per second", "2.9", Some("tok/s"), None, None, Some(Exact)),
        ("80 percent of requests", "80", Some("tok/s"), None, None, None),
        // Settings are not scores.
        ("util 0.90", "90", P, None, None, None),
        ("temperature=0.2", "20", P, None, None, None),
        ("temperature=0.2", "0.2", None, None, None, None),
        ("temperature=0.2", "0.2", Some("temperature"), None, None, Some(Exact)),
        ("(`--gpu-memory-utilization 0.90`)", "90", P, None, None, None),
        ("--top-p 0.95", "95", P, None, None, None),
        ("temperature=0.2, accuracy=0.95", "95", P, None, None, Some(Fraction)),
        ("pass rate 0.90", "90", P, None, None, Some(Fraction)),
        // Numbers that are parts of names.
        ("run 0010", "10", None, None, None, None),
        ("commit 04af", "4", None, None, None, None),
        ("Qwen3.8-27B-NVFP4", "27", None, None, None, None),
        ("Nemotron-3.5-Super", "3.5", None, None, None, None),
        ("Qwen2.5-7B at 41 tok/s", "7", None, None, None, None),
        ("3-node cluster", "3", None, None, None, Some(Exact)),
        ("ranges 2.8-2.9", "2.9", None, None, None, None),
        ("PR #21", "21", None, None, None, None),
        ("HumanEval/40 passed", "40", None, None, None, None),
        ("4. Limitations", "4", None, None, None, None),
        ("2.9 tok/s", "2.9", TOK, None, None, Some(Exact)),
        ("[47/50] gsm8k", "94", P, Some(47), Some(50), None),
        ("47/50 gsm8k", "94", P, Some(47), Some(50), Some(Ratio)),
        ("August 10–16, 2026", "16", None, None, None, None),
        ("August 10–16, 2026", "2026", None, None, None, None),
        ("on Aug 7, 2026", "7", None, None, None, None),
        ("3 GB in May", "3", Some("GB"), None, None, Some(Exact)),
        ("0.1.dev19043", "0.1", None, None, None, None),
        ("CUDA 13.0", "13.0", None, None, None, None),
        ("vLLM 0.21 → 0.22", "0.22", None, None, None, None),
        ("vLLM 2.9 tok/s", "2.9", TOK, None, None, Some(Exact)),
        ("built with v1.2", "1.2", None, None, None, None),
        // Count context when correct equals total.
        ("4 workers on 4 nodes", "100", P, Some(4), Some(4), None),
        ("| 49 | 50 |", "98", P, Some(49), Some(50), Some(Count)),
        (r#""passed": 4,"#, "100", P, Some(4), Some(4), Some(Count)),
        // Approximation marks through emphasis, signs and currency.
        ("~**−31%**", "-31", P, None, None, Some(Rounded)),
        ("≈ **1.75×**", "1.75", Some("x"), None, None, Some(Rounded)),
        ("~$1.55", "1.55", None, None, None, Some(Rounded)),
        ("~=1.75x", "1.75", Some("x"), None, None, Some(Rounded)),
        // Clocks and dates are shaped.
        ("67108864:67108864", "67108864", None, None, None, Some(Exact)),
        ("ratio 3:1", "1", None, None, None, Some(Exact)),
        ("elapsed 1:05", "5", None, None, None, None),
        ("512/512/512", "512", None, None, None, Some(Exact)),
        ("on 8/7/26", "26", None, None, None, None),
        ("on 2026/08/07", "2026", None, None, None, None),
        // Weird input.
        ("", "2.9", None, None, None, None),
        (".", "2.9", None, None, None, None),
        ("-", "2.9", None, None, None, None),
        (",", "2.9", None, None, None, None),
        ("%", "98", P, None, None, None),
        ("1e5 steps", "100000", None, None, None, Some(Exact)),
        ("100000 steps", "1e5", None, None, None, Some(Exact)),
        ("1e5 steps", "1", None, None, None, None),
        ("1.5e-3 s", "0.0015", None, None, None, Some(Exact)),
        ("NaN", "NaN", None, None, None, None),
        ("NaN inf", "2.9", None, None, None, None),
        ("2.9", "about 2.9", None, None, None, None),
        ("2.9", "", None, None, None, None),
    ];

    fn expected(case: &Case) -> Expected<'static> {
        Expected {
            value: case.1,
            unit: case.2,
            correct: case.3,
            total: case.4,
            label: None,
            metric: None,
            statistic: None,
        }
    }

    /// Issue 44's shapes, both ways: true figures the structure and the claim's words
    /// let through, and look-alikes they keep out. (document, cited 1-based line,
    /// value, unit, label, correct, total, what the cited line says.)
    #[rustfmt::skip]
    type Probe = (&'static str, usize, &'static str, Option<&'static str>, Option<&'static str>, Option<u64>, Option<u64>, &'static str);
    #[rustfmt::skip]
    const ISSUE_44: &[Probe] = &[
        ("| Metric | A | B | C |\n|---|---:|---:|---:|\n| Throughput (tok/s) | 88.5 | 67.4 | 91.9 |\n| Latency P50 (s) | 2.890 | 3.767 | 2.748 |", 3, "67.4", Some("tokens/s"), None, None, None, "verified"),
        ("| Metric | A | B | C |\n|---|---:|---:|---:|\n| Throughput (tok/s) | 88.5 | 67.4 | 91.9 |\n| Latency P50 (s) | 2.890 | 3.767 | 2.748 |", 4, "2.748", Some("ms"), None, None, None, "missing"),
        ("engine,run,prefill_tok_s,decode_tps,ttft_ms\na,r1,131.2,17.5,412\nb,r2,134.8,17.9,398", 2, "17.5", Some("tokens/s"), None, None, None, "verified"),
        ("engine,run,prefill_tok_s,decode_tps,ttft_ms\na,r1,131.2,17.5,412\nb,r2,134.8,17.9,398", 2, "412", Some("ms"), None, None, None, "verified"),
        ("engine,run,prefill_tok_s,decode_tps,ttft_ms\na,r1,131.2,17.5,412\nb,r2,134.8,17.9,398", 2, "412", Some("s"), None, None, None, "missing"),
        ("{\"tok_s\": 31.704127, \"ttft_ms\": 88.1}", 1, "31.70", Some("tokens/s"), None, None, None, "rounded"),
        ("tokens=256 total=20.1s TTFT=0.41s e2e=12.7 tok/s", 1, "20.1", Some("s"), None, None, None, "verified"),
        ("tokens=256 total=20.1s TTFT=0.41s e2e=12.7 tok/s", 1, "12.7", Some("tokens/s"), None, None, None, "verified"),
        ("tokens=256 total=20.1s TTFT=0.41s e2e=12.7 tok/s", 1, "256", Some("tokens/s"), None, None, None, "missing"),
        ("the step took `t = 42 ms` on average", 1, "42", Some("ms"), None, None, None, "verified"),
        ("decode: 9 steps in 0.41 s = 21.9 tok/s", 1, "21.9", Some("tokens/s"), None, None, None, "verified"),
        ("decode: 9 steps in 0.41 s = 21.9 tok/s", 1, "0.41", Some("s"), None, None, None, "verified"),
        ("Hardware: 4x NVIDIA H100 80GB", 1, "4", Some("GPUs"), None, None, None, "verified"),
        ("Each layer has **256** experts/group.", 1, "256", Some("experts"), None, None, None, "verified"),
        ("The graph was captured once (912 launches).", 1, "912", Some("launches"), None, None, None, "verified"),
        ("the server listens on port 8000", 1, "8000", Some("port"), None, None, None, "verified"),
        ("- MMLU 0.71, GSM8K 0.58", 1, "71", Some("%"), None, None, None, "verified"),
        ("| Model | MMLU |\n|---|---|\n| m | **0.612** |", 3, "61.2", Some("%"), None, None, None, "verified"),
        ("all tests: p=1.0000", 1, "100", Some("%"), None, Some(20), Some(20), "verified"),
        ("| Quant | Size |\n|---|---|\n| Q2_K (2.6 bpw) | 3.1 GB |", 3, "2.6", Some("bpw"), None, None, None, "verified"),
        ("we find $E_k = 14.2$ across runs", 1, "14.2", Some("J"), None, None, None, "verified"),
        ("the median is $t\\approx 512.9$ ms", 1, "512.9", Some("ms"), None, None, None, "rounded"),
        ("name,tok_s,stdev\na,108.49±3.63,1", 2, "108.49", Some("tokens/s"), None, None, None, "verified"),
        ("run,tput_tok_s,runs\na,62.06±12.28,3", 2, "62.1", Some("tokens/s"), None, None, None, "rounded"),
        // A figure written for people is not a coarser claim's: `1.82x` is not 1.8x.
        ("| model | speedup |\n|---|---|\n| q | 1.82x |", 3, "1.8", Some("x"), None, None, None, "missing"),
        // LaTeX tables: the row over the first rule is the header; `\textbf{}` is markup.
        ("\\begin{tabular}{lcc}\n\\toprule\nMethod & Acc & F1 \\\\\n\\midrule\nDoRA & $0.9478 \\pm 0.0004$ & \\textbf{0.9445} \\\\\n\\bottomrule\n\\end{tabular}", 5, "0.9478", None, Some("DoRA: weighted F1"), None, None, "missing"),
        ("\\begin{tabular}{lcc}\n\\toprule\nMethod & Acc & F1 \\\\\n\\midrule\nDoRA & $0.9478 \\pm 0.0004$ & \\textbf{0.9445} \\\\\n\\bottomrule\n\\end{tabular}", 5, "0.9445", None, Some("DoRA: weighted F1"), None, None, "verified"),
        ("\\begin{tabular}{lc}\n\\hline\nRun & Time (ms) \\\\ \\hline\na & 42.5 \\\\\n\\end{tabular}", 4, "42.5", Some("s"), None, None, None, "missing"),
        ("\\begin{tabular}{lcc}\n\\toprule\n & \\multicolumn{2}{c}{Normal 2} \\\\\n\\cmidrule{2-3}\nModel & Word & Number \\\\\n\\midrule\ngemma-4b & 91 & 72 \\\\\n\\bottomrule\n\\end{tabular}", 7, "91", Some("%"), Some("gemma-4b: Number accuracy"), None, None, "missing"),
        ("\\begin{tabular}{lcc}\n\\toprule\n & \\multicolumn{2}{c}{Normal 2} \\\\\n\\cmidrule{2-3}\nModel & Word & Number \\\\\n\\midrule\ngemma-4b & 91 & 72 \\\\\n\\bottomrule\n\\end{tabular}", 7, "72", Some("%"), Some("gemma-4b: Number accuracy"), None, None, "verified"),
        ("\\begin{tabular}{lcc}\n\\toprule\n & \\multicolumn{2}{c}{Normal 2} \\\\\n\\cmidrule{2-3}\nModel & Word & Number \\\\\n\\midrule\ngemma-4b & 91 & 72 \\\\\n\\bottomrule\n\\end{tabular}", 3, "2", None, None, None, None, "missing"),
        ("accuracy of 97.1\\% overall", 1, "97.1", Some("%"), None, None, None, "verified"),
        // The number after a `±` is a spread, unless the claim names one.
        ("179 ms ± 7.39 ms per loop", 1, "7.39", Some("ms"), None, None, None, "missing"),
        ("179 ms ± 7.39 ms per loop", 1, "7.39", Some("ms"), Some("std dev of the time"), None, None, "verified"),
        // A rank in a key's words: `Top 5 Accuracy` is no top-1 figure.
        ("    Top 5 Accuracy: 93.48%", 1, "93.48", Some("%"), Some("densenet: top-1 accuracy"), None, None, "missing"),
        ("    Top 5 Accuracy: 93.48%", 1, "93.48", Some("%"), Some("densenet: top-5 accuracy"), None, None, "verified"),
        ("    Top 5 Accuracy: 93.48%", 1, "93.48", Some("%"), Some("densenet: accuracy"), None, None, "verified"),
        // Input and output speeds are prefill and decode.
        ("speed input: 7.44 toks/s, output: 350.69 toks/s", 1, "7.44", Some("tokens/s"), Some("output generation speed"), None, None, "missing"),
        // The subject tells apart columns the figure's words tie on.
        ("| Metric | ffmpeg (Raw) | minimp3_decoder (Raw) |\n|---|---|---|\n| Elapsed Time (s) | 0.1113 | 0.0824 |", 3, "0.0824", Some("s"), Some("minimp3_decoder on the set: elapsed time (raw)"), None, None, "verified"),
        ("| Metric | ffmpeg (Raw) | minimp3_decoder (Raw) |\n|---|---|---|\n| Elapsed Time (s) | 0.1113 | 0.0824 |", 3, "0.1113", Some("s"), Some("minimp3_decoder on the set: elapsed time (raw)"), None, None, "missing"),
        // A model named right before a number that the label does not name.
        ("deepseek-r1 (97.1%), gemma-3-27b (95.0%)", 1, "97.1", Some("%"), Some("mean accuracy of gemma-3-27b"), None, None, "missing"),
        ("deepseek-r1 (97.1%), gemma-3-27b (95.0%)", 1, "95.0", Some("%"), Some("mean accuracy of gemma-3-27b"), None, None, "verified"),
        // Chinese glues numbers to words, and `约` is "about".
        ("从93.5秒降至24.2秒 (约74%的改进)", 1, "74.1", Some("%"), None, None, None, "rounded"),
        // A setting in inline math; a LaTeX en dash makes a range.
        ("generation length $=200$, window $=32$", 1, "200", Some("tokens/s"), None, None, None, "missing"),
        ("checkpoints of about 3.4--4.6 MB", 1, "3.4", Some("MB"), None, None, None, "missing"),
        // Jupyter notebooks: output text cited by its JSON line, escapes and all.
        ("    \"Training accuracy: 97.21%\\n\",", 1, "97.21", Some("%"), None, None, None, "verified"),
        ("    \"acc\\t0.9721\\tf1\\t0.9650\\n\",", 1, "97.21", Some("%"), None, None, None, "verified"),
        ("    \"Batch size 4: Tokens/sec: 20159.93, MFU: 0.5483\\n\",", 1, "20159.93", Some("tokens/s"), None, None, None, "verified"),
        ("    \"Batch size 4: Tokens/sec: 20159.93, MFU: 0.5483\\n\",", 1, "20159.9", Some("tokens/s"), None, None, None, "rounded"),
        // A column of aims holds no measured figure, unless the label names it.
        ("| Metric | Expected | Actual |\n|---|---|---|\n| TTFT | ~0.14s | 0.54s |", 3, "0.138", Some("s"), None, None, None, "missing"),
        ("| Metric | Expected | Actual |\n|---|---|---|\n| TTFT | ~0.14s | 0.54s |", 3, "0.138", Some("s"), Some("expected TTFT"), None, None, "rounded"),
        ("| Metric | Target | Actual |\n|---|---|---|\n| TPS | 15 | 3.9 |", 3, "3.9", Some("tokens/s"), None, None, None, "verified"),
        // A noun before a rate word says what the rate is of.
        ("{\n  \"prompt_speed\": 2135.7124290325546,\n}", 2, "2135.71", Some("tokens/s"), None, None, None, "rounded"),
        // A number in brackets after a plural noun counts it.
        ("fewest KV heads (2), so the cache is small", 1, "2.0", Some("x"), None, None, None, "missing"),
        ("fewest KV heads (2), so the cache is small", 1, "2", Some("heads"), None, None, None, "verified"),
        // A list shares the noun after its last member.
        ("lengths of `1`, `512`, and `4096` tokens", 1, "512", Some("tokens/s"), None, None, None, "missing"),
        ("lengths of `1`, `512`, and `4096` tokens", 1, "512", Some("tokens"), None, None, None, "verified"),
        // A claim that copies a look-alike's digits is not a rounding of the next cell.
        ("engine,prefill_tok_s,prompt_tokens\nx,131.2,131", 2, "131", Some("tokens/s"), None, None, None, "missing"),
        ("| model | latency_ms | p99_ms | batch | concurrency | input_len | num_prompts | dtype |\n|---|---|---|---|---|---|---|---|\n| model-x | | | 1 | 16 | 1024 | 1 | bf16 |", 3, "1024", Some("ms"), None, None, None, "missing"),
        ("| model | latency_ms | p99_ms | batch | concurrency | input_len | num_prompts | dtype |\n|---|---|---|---|---|---|---|---|\n| model-x | | | 1 | 16 | 1024 | 1 | bf16 |", 3, "16", Some("ms"), None, None, None, "missing"),
        ("<table><tr><th>op</th><th>time (ms)</th><th>mem</th></tr>\n<tr><td>fwd</td><td>3.4</td><td>2.1<span>mb</span></td></tr></table>", 2, "2.1", Some("ms"), None, None, None, "missing"),
        ("Total: 12 files checked", 1, "12", Some("%"), None, None, None, "missing"),
        ("Downloading weights: 100% |##########| 4.2G/4.2G", 1, "100", Some("%"), Some("MMLU accuracy"), None, None, "missing"),
        ("===== 47 passed, 3 failed in 12.1s =====", 1, "47", Some("%"), None, None, None, "missing"),
        ("took 412/1,000 requests", 1, "412", Some("ms"), None, None, None, "missing"),
        ("step 200 | loss 12.4410 | lr 3e-4", 1, "12.4", Some("%"), Some("accuracy"), None, None, "missing"),
        ("request finished in 0.41 s", 1, "0.41", Some("ms"), None, None, None, "missing"),
        ("peak memory stays under about 80 MB", 1, "80", Some("MB"), None, None, None, "missing"),
        ("the weights take roughly 4 to 6 GB", 1, "6", Some("GB"), None, None, None, "missing"),
        ("| | INT8 | FP32 |\n|---|---|---|\n| Accuracy | 0.9037 | 0.9106 |", 3, "0.9037", None, Some("Llama-3-8B FP32 accuracy"), None, None, "missing"),
        ("| | INT8 | FP32 |\n|---|---|---|\n| Accuracy | 0.9037 | 0.9106 |", 3, "0.9106", None, Some("Llama-3-8B FP32 accuracy"), None, None, "verified"),
        ("| Model | Mean TTFT (ms) | Median TTFT (ms) |\n|---|---|---|\n| m | 812 | 640 |", 3, "812", Some("ms"), Some("median TTFT"), None, None, "missing"),
        ("| Model | Mean TTFT (ms) | Median TTFT (ms) |\n|---|---|---|\n| m | 812 | 640 |", 3, "640", Some("ms"), Some("median TTFT"), None, None, "verified"),
        ("| Model | prefill (tok/s) | decode (tok/s) |\n|---|---|---|\n| m | 812 | 64 |", 3, "812", Some("tokens/s"), Some("decode_rate"), None, None, "missing"),
        ("| Model | prefill (tok/s) | decode (tok/s) |\n|---|---|---|\n| m | 812 | 64 |", 3, "64", Some("tokens/s"), Some("decode_rate"), None, None, "verified"),
        ("expected between 15-25 tok/s", 1, "25", Some("tokens/s"), Some("upper bound of the range"), None, None, "verified"),
        ("expected between 15-25 tok/s", 1, "25", Some("tokens/s"), Some("decode speed"), None, None, "missing"),
    ];

    #[test]
    fn structures_and_the_claims_own_words_decide() {
        let mut failures = Vec::new();
        for (text, line, value, unit, label, correct, total, want) in ISSUE_44 {
            let lines: Vec<&str> = text.lines().collect();
            let layout = Layout::new(&lines);
            let doc = Document::new(&lines, &layout);
            let exp = Expected {
                value,
                unit: *unit,
                label: *label,
                correct: *correct,
                total: *total,
                ..Expected::default()
            };
            let got = match doc.cited(line - 1..*line, &exp).found {
                Some((_, m)) if m.rounded || m.kind == Rounded => "rounded",
                Some(_) => "verified",
                None => "missing",
            };
            if got != *want {
                failures.push(format!(
                    "{:?} L{line} {value} {unit:?} {label:?}: want {want}, got {got}",
                    lines[line - 1]
                ));
            }
        }
        assert!(failures.is_empty(), "\n{}", failures.join("\n"));
    }

    #[test]
    fn table() {
        assert!(CASES.len() >= 60, "{} cases", CASES.len());
        let failures: Vec<String> = CASES
            .iter()
            .filter_map(|case| {
                let got = find(case.0, &expected(case));
                let kind = got.as_ref().map(|m| m.kind);
                (kind != case.5).then(|| {
                    format!(
                        "{:?} claim {:?} unit {:?} counts {:?}/{:?}: want {:?}, got {got:?}",
                        case.0, case.1, case.2, case.3, case.4, case.5
                    )
                })
            })
            .collect();
        assert!(failures.is_empty(), "\n{}", failures.join("\n"));
    }

    #[test]
    fn spans_point_at_the_number() {
        let cases: &[(&str, Case)] = &[
            (
                "2.9",
                ("decode **2.9** tok/s", "2.9", None, None, None, None),
            ),
            ("2.9", ("≈ 2.9 tok/s", "2.93", None, None, None, None)),
            ("-3.16", ("Δ −1 and -3.16", "-3.16", None, None, None, None)),
            (
                "1,048,576",
                ("ctx 1,048,576", "1048576", None, None, None, None),
            ),
            ("98", ("日本 98 %", "98.0", P, None, None, None)),
            ("0.98", ("acc 0.98", "98.0", P, None, None, None)),
            (
                "49 out of 50",
                ("got 49 out of 50.", "98", P, Some(49), Some(50), None),
            ),
            (
                "49",
                (
                    r#""total": 50, "correct": 49"#,
                    "98",
                    P,
                    Some(49),
                    Some(50),
                    None,
                ),
            ),
        ];
        for (want, case) in cases {
            let m = find(case.0, &expected(case)).unwrap_or_else(|| panic!("{case:?}"));
            assert_eq!(&case.0[m.span.clone()], *want, "{case:?}");
            assert_eq!(m.text, *want);
        }
    }

    #[test]
    fn best_match_wins_and_rounded_flag() {
        let claim = Expected {
            value: "2.9",
            ..Expected::default()
        };
        let m = find("~2.9 then 2.90", &claim).unwrap();
        assert_eq!((m.kind, m.rounded, m.span), (Exact, false, 10..14));

        let pct = |value| Expected {
            value,
            unit: Some("%"),
            ..Expected::default()
        };
        assert_eq!(find("0.98", &pct("97.8")), None);
        let m = find("~0.98", &pct("97.8")).unwrap();
        assert_eq!((m.kind, m.rounded), (Fraction, true));
        let m = find("0.98", &pct("98.0")).unwrap();
        assert_eq!((m.kind, m.rounded), (Fraction, false));
        // A figure written for people is no rounding of a coarser claim; a printed
        // four-decimal score is.
        assert_eq!(find("2.93", &pct("2.9")), None);
        let m = find("0.3778", &pct("37.8")).unwrap();
        assert_eq!((m.kind, m.rounded), (Fraction, true));
    }

    #[test]
    fn tokens_are_read_with_their_flags() {
        let line = "| 8K | ~79.6 | 1,048,576 | -3.16 | 98 % | .5 | 1.5e-3 | 7.20 |";
        let got: Vec<(&str, f64, u32, bool, bool)> = tokens(line)
            .iter()
            .map(|t| {
                (
                    &line[t.span.clone()],
                    t.value,
                    t.decimals,
                    t.approx,
                    t.percent,
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                ("8", 8.0, 0, false, false),
                ("79.6", 79.6, 1, true, false),
                ("1,048,576", 1_048_576.0, 0, false, false),
                ("-3.16", -3.16, 2, false, false),
                ("98", 98.0, 0, false, true),
                (".5", 0.5, 1, false, false),
                ("1.5e-3", 0.0015, 4, false, false),
                ("7.20", 7.2, 2, false, false),
            ]
        );
        let texts: Vec<String> = tokens(line).into_iter().map(|t| t.text).collect();
        assert_eq!(
            texts,
            ["8", "79.6", "1048576", "-3.16", "98", "0.5", "1.5e-3", "7.20"]
        );
        assert_eq!(tokens("1E+05")[0].text, "1e5");
    }

    #[test]
    fn non_numbers_yield_no_tokens() {
        for line in [
            "",
            ".",
            "-",
            ",",
            "%",
            "~",
            "NaN inf -inf",
            "2026-08-07T15:45:04Z",
            "v2.9.1 a2.9b 0x2.9 p18081 GB10 IQ1_S f16",
            "de1fa14ea798512f54dafc8b8795eb3ef1a6c367",
            "192.168.1.1",
            "1e9999999",
        ] {
            assert_eq!(tokens(line), [], "{line:?}");
        }
    }

    #[test]
    fn several_claims_on_a_seed_like_line() {
        let line = "| steady decode | 2.9 tok/s | 8K prefill | 79.6 | 32K prefill | 43.9 |";
        let values: Vec<f64> = tokens(line).iter().map(|t| t.value).collect();
        assert_eq!(values, [2.9, 8.0, 79.6, 32.0, 43.9]);
    }

    #[test]
    fn find_in_lines_scans_a_cited_range() {
        let doc: Vec<String> = (1..=50).map(|n| format!("line {n}: filler")).collect();
        let mut lines: Vec<&str> = doc.iter().map(String::as_str).collect();
        lines[43] = "| 8K | 79.6 | 43.9 |"; // line 44
        let claim = Expected {
            value: "43.9",
            ..Expected::default()
        };
        // #L43-L45 is indices 42..45.
        let (index, m) = find_in_lines(lines[42..45].iter().copied(), &claim).unwrap();
        assert_eq!((index, m.kind, m.text.as_str()), (1, Exact, "43.9"));
        assert_eq!(find_in_lines(lines[44..47].iter().copied(), &claim), None);
        assert_eq!(find_in_lines(Vec::<&str>::new(), &claim), None);
    }

    #[test]
    fn find_in_lines_prefers_exact_to_rounded() {
        let claim = Expected {
            value: "79.6",
            unit: Some("tok/s"),
            ..Expected::default()
        };
        let lines = [
            "Decode is ~80 tok/s.",
            "Measured: 79.6 tok/s.",
            "79.6 again",
        ];
        let (index, m) = find_in_lines(lines, &claim).unwrap();
        assert_eq!((index, m.kind), (1, Exact));
        let lines = ["Decode is ~80 tok/s.", "prefill ~79.6 tok/s"];
        let (index, m) = find_in_lines(lines, &claim).unwrap();
        assert_eq!((index, m.kind), (0, Rounded));
    }

    #[test]
    fn shaped_clocks_and_dates() {
        let texts =
            |line: &str| -> Vec<String> { tokens(line).into_iter().map(|t| t.text).collect() };
        assert_eq!(texts("67108864:67108864"), ["67108864", "67108864"]);
        assert_eq!(texts("512/512/512"), ["512", "512", "512"]);
        assert_eq!(texts("3:1"), ["3", "1"]);
        for line in [
            "2026-08-07",
            "07/08/2026",
            "8/7/26",
            "12:30",
            "0:04:31",
            "run 0010",
        ] {
            assert_eq!(tokens(line), [], "{line:?}");
        }
    }

    #[test]
    fn nearest_line_prefers_the_nearest_then_the_earlier() {
        let claim = Expected {
            value: "2.9",
            ..Expected::default()
        };
        let lines = [
            "2.9 far",
            "2.9 before",
            "cited",
            "cited 2.9",
            "2.9 after",
            "x",
        ];
        // Lines 1 and 4 are both one away from the cited range 2..4: the earlier wins.
        let (index, _) = nearest_line(&lines, 2..4, &claim).unwrap();
        assert_eq!(index, 1);
        // Without line 1, line 4 (distance 1) beats line 0 (distance 2).
        let lines = ["2.9 far", "no", "cited", "cited", "2.9 after", "x"];
        assert_eq!(nearest_line(&lines, 2..4, &claim).unwrap().0, 4);
        // Lines inside the cited range never count.
        let lines = ["no", "cited 2.9", "no"];
        assert_eq!(nearest_line(&lines, 1..2, &claim), None);
        // A citation past the end searches back from the last line.
        let lines = ["2.9", "no"];
        assert_eq!(nearest_line(&lines, 7..9, &claim).unwrap().0, 0);
        // An empty range: both neighbours are one away, the earlier wins.
        let lines = ["2.9 a", "2.9 b"];
        assert_eq!(nearest_line(&lines, 1..1, &claim).unwrap().0, 0);
        assert_eq!(nearest_line(&[], 0..1, &claim), None);
    }

    #[test]
    fn long_and_odd_lines_do_not_panic() {
        let mut long = "x".repeat(50_000);
        long.push_str(" 2.9 ");
        long.push_str(&"9".repeat(50_000));
        let claim = Expected {
            value: "2.9",
            ..Expected::default()
        };
        assert_eq!(find(&long, &claim).unwrap().span, 50_001..50_004);
        assert_eq!(tokens(&"1.".repeat(50_000)).len(), 0);
        assert_eq!(tokens(&"1,".repeat(50_000)).len(), 50_000);
        assert_eq!(tokens(&"~".repeat(100_000)), []);
        let huge = format!("0.{}1", "0".repeat(100_000));
        assert!(find(&huge, &claim).is_none());

        // Every slice of a tricky line, at every char boundary, is handled.
        let tricky = "≈-1,048.5e-3%_x ~ 2.9.1-07/08 49 out of 50 −0x2_ .5 1e5 é2 ％";
        let counts = Expected {
            value: "98.0",
            unit: Some("percent"),
            correct: Some(49),
            total: Some(50),
            label: None,
            metric: None,
            statistic: None,
        };
        let bounds: Vec<usize> = tricky.char_indices().map(|(i, _)| i).collect();
        for &a in &bounds {
            for &b in bounds.iter().filter(|&&b| b >= a) {
                let part = &tricky[a..b];
                for t in tokens(part) {
                    assert!(part.get(t.span.clone()).is_some(), "{part:?}");
                }
                let _ = find(part, &counts);
                let _ = find(part, &claim);
            }
        }
    }
    #[test]
    fn a_setting_superseded_at_the_head_no_longer_carries_its_value() {
        let exp = Expected {
            value: "64000",
            unit: Some("tokens"),
            ..Expected::default()
        };
        let pinned = "export MAX_OUTPUT_TOKENS=64000";
        assert!(still_carries(
            pinned,
            "export MAX_OUTPUT_TOKENS=64000 # default",
            &exp
        ));
        assert!(!still_carries(
            pinned,
            "export MAX_OUTPUT_TOKENS=128000 (the previous 64000/128000 split is gone)",
            &exp
        ));
        assert!(still_carries(
            "decode 64000 tok",
            "decode: now 64000 tok",
            &exp
        ));
        assert!(!still_carries(
            pinned,
            "export MAX_OUTPUT_TOKENS=128000",
            &exp
        ));
    }

    #[test]
    fn a_rejected_look_alike_says_why() {
        let text = "| GPU | Model | PP (t/s) | TG (t/s) | Duration (s) |\n|---|---|---|---|---|\n| A10 | m-7b | 1425.80 | 2.87 | 24.58 |";
        let lines: Vec<&str> = text.lines().collect();
        let layout = Layout::new(&lines);
        let doc = Document::new(&lines, &layout);
        let exp = Expected {
            value: "24.58",
            unit: Some("tokens/s"),
            ..Expected::default()
        };
        let cited = doc.cited(2..3, &exp);
        assert_eq!(cited.found, None);
        let (line, r) = cited.rejected.expect("a look-alike");
        assert_eq!(
            (line, r.text.as_str(), r.role.as_str()),
            (2, "24.58", "other-column")
        );
        assert!(r.reason.contains("Duration (s)"), "{}", r.reason);
        let exp = Expected {
            value: "2.87",
            unit: Some("tokens/s"),
            label: Some("TG"),
            ..Expected::default()
        };
        assert_eq!(
            doc.cited(2..3, &exp).found.map(|(i, m)| (i, m.text)),
            Some((2, "2.87".into()))
        );
        for (line, value, unit, role) in [
            ("Expect 15-25 tok/s", "15", "tok/s", "range"),
            ("  --mean-input-tokens 550 \\", "550", "tokens/s", "setting"),
            (
                "we translated it into 14 languages",
                "14",
                "percent",
                "count",
            ),
            ("| 38 (72%) |", "71.7", "percent", "coarser"),
            (
                "BenchmarkInference-32  99  1109 ns/op",
                "32",
                "tokens/s",
                "name",
            ),
            ("served on localhost:8000", "8000", "ms", "name"),
            ("seed: 42", "42", "percent", "identifier"),
        ] {
            let exp = Expected {
                value,
                unit: Some(unit),
                ..Expected::default()
            };
            let found = find_claim(
                line,
                &Claim::parse(&exp).expect("claim"),
                &LineCtx::default(),
            );
            assert_eq!(found.best, None, "{line}");
            assert_eq!(
                found.rejected.map(|r| r.role).as_deref(),
                Some(role),
                "{line}"
            );
        }
    }
}
