//! The role a number plays where it stands — a measurement (with the dimension its
//! own unit, its key, its column or its table's caption gives it), a setting, an
//! identifier, a label, an end of a range, a bound — and whether that role can carry
//! a claim. The matcher asks only about numbers whose value already fits the claim.
//! The rules are the module doc of [`super`] ("Roles").

use super::context::{self, Dim, NameKind};
use super::label::{Claimed, Side};
use super::structure::{header_dim, LineCtx, Part};
use super::{Scanned, SPACES};

/// What a claim brings to the question "can this number be it?". Its words are
/// read only when a number that fits the value needs them.
#[derive(Debug, Default)]
pub(super) struct Want<'e> {
    /// The dimension of the claim's unit.
    pub(super) dim: Option<Dim>,
    /// The claim's unit, as written (for messages and `port`-like kinds).
    unit: Option<&'e str>,
    /// The claim's label (`max model len`).
    label: Option<&'e str>,
    /// The claim counts successes (`correct`).
    pub(super) correct: bool,
    /// The claim's words, read for the facets and columns they name.
    claimed: Claimed,
}

/// Lowercase words of `text`, stop words left out.
fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    const STOP: [&str; 12] = [
        "the", "a", "an", "of", "in", "on", "at", "for", "and", "or", "to", "with",
    ];
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.len() >= 2)
        .map(str::to_lowercase)
        .filter(|w| !STOP.contains(&w.as_str()))
}

impl<'e> Want<'e> {
    pub(super) fn new(dim: Option<Dim>, expected: &super::Expected<'e>, correct: bool) -> Want<'e> {
        let unit = expected.unit.map(str::trim).filter(|u| !u.is_empty());
        let label = expected.label.map(str::trim).filter(|l| !l.is_empty());
        Want {
            dim,
            unit,
            label,
            correct,
            claimed: Claimed::new(label, expected.metric, expected.statistic),
        }
    }

    /// The claim's unit or label names `kind` (`port` for `port=8000`).
    fn names(&self, kind: &str) -> bool {
        let unit = self.unit.into_iter().flat_map(words);
        let label = self.label.into_iter().flat_map(words);
        unit.chain(label)
            .any(|w| w == kind || w.strip_suffix('s') == Some(kind))
    }

    fn has_label(&self) -> bool {
        self.label.is_some_and(|l| words(l).next().is_some())
    }

    fn label_shares(&self, text: &str) -> bool {
        let Some(label) = self.label else {
            return false;
        };
        let theirs: Vec<String> = words(text).collect();
        words(label).any(|w| theirs.contains(&w))
    }

    fn unit_text(&self) -> &str {
        self.unit.unwrap_or("its unit")
    }
}

/// Why a number that fits the claim's value is not the claim's figure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Why {
    /// The role it plays: `label`, `name`, `identifier`, `setting`, `range`, `bound`,
    /// `count`, `other-column`, `other-unit`, `coarser`.
    pub(super) role: &'static str,
    /// Why that role can't carry the claim, in words.
    pub(super) reason: String,
}

fn why(role: &'static str, reason: String) -> Why {
    Why { role, reason }
}

/// A number that can carry the claim, as far as its role goes.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Seen {
    /// Its dimension: its own unit, else its key's, else its column's, else its table's caption's.
    pub(super) dim: Option<Dim>,
    /// It has a unit of its own (`412 ms`, `98%`).
    pub(super) own_unit: bool,
    /// A bound (`under 2%`, `at least 1000`, `40k+`): its own value only for a claim
    /// without unit, never a rounding.
    pub(super) bound: bool,
    /// Its column's header shares a word with the claim's label.
    pub(super) preferred: bool,
}

/// Words before a number that make it a bound.
const BOUND_WORDS: [&str; 13] = [
    "under",
    "below",
    "over",
    "above",
    "exceeding",
    "exceeds",
    "than",
    "least",
    "most",
    "within",
    "upto",
    "max",
    "maximum",
];

/// Words that mark a column of failures: a count of successes never stands there.
const FAILURE_WORDS: [&str; 12] = [
    "fail",
    "failed",
    "fails",
    "failure",
    "failures",
    "error",
    "errors",
    "timeout",
    "timeouts",
    "incorrect",
    "wrong",
    "almost",
];

/// Words that head a column of aims rather than results (`Expected`, `Target`).
const TARGET_WORDS: [&str; 6] = [
    "expected",
    "target",
    "targets",
    "goal",
    "expectation",
    "budget",
];

/// Words that may stand in a value cell without making it a name cell.
const CELL_WORDS: [&str; 12] = [
    "n/a", "na", "oom", "nan", "inf", "tbd", "none", "same", "yes", "no", "vs", "x",
];

/// The role of token `i` of `line` (in the document context `ctx`), and whether it
/// can carry the claim described by `want`.
pub(super) fn read(
    line: &str,
    scanned: &[Scanned],
    i: usize,
    ctx: &LineCtx,
    want: &Want,
) -> Result<Seen, Why> {
    let t = &scanned[i];
    let (start, end) = (t.token.span.start, t.token.span.end);
    let shown = || format!("`{}`", &line[start..end]);
    let cell = ctx.cell(line, start);
    let table = ctx.table();

    let own = if t.token.percent {
        Some(Dim::Percent)
    } else {
        context::unit_after(line, end).or_else(|| context::counted_before(line, start, end))
    };
    let real_unit = own.is_some_and(|d| d != Dim::Magnitude);
    // A number in a header is a label (`| tg 512 |`), unless it counts or measures
    // something of its own (`Total Time (7,600 samples)`).
    if (ctx.part == Part::Header || cell.as_ref().is_some_and(|c| c.header)) && !real_unit {
        let text = cell.as_ref().map_or("", |c| line[c.range.clone()].trim());
        return Err(why(
            "label",
            format!("{} is part of the column header `{text}`", shown()),
        ));
    }
    if let Some(kind) = context::name_kind(line, scanned, i) {
        match kind {
            NameKind::Keyed(k) if want.names(k) => {}
            NameKind::Keyed(k) => {
                return Err(why(
                    "identifier",
                    format!("{} is a {k}, not a figure in {}", shown(), want.unit_text()),
                ))
            }
            other => {
                return Err(why("name", format!("{} is {}", shown(), other.describe())));
            }
        }
    }
    if let Some(reason) = name_by_shape(line, scanned, i) {
        return Err(why("name", format!("{} is {reason}", shown())));
    }

    // `Q2_K (2.6 bpw)`: a number and its word in brackets after a name measures it.
    let bracketed = line[..start].trim_end().ends_with('(')
        && line[end..].trim_start().starts_with(char::is_alphabetic)
        && line[end..].contains(')');
    if let (Some(cell), Some(table), false) = (&cell, table, bracketed) {
        let text = line[cell.range.clone()].trim();
        if table.is_label(cell.col) && !real_unit {
            let header = table.header_of(cell.col).unwrap_or("");
            return Err(why(
                "name",
                format!(
                    "{} stands in the `{header}` column: it names a row",
                    shown()
                ),
            ));
        }
        let raw = &line[cell.range.clone()];
        if !real_unit && cell_has_words(raw, start.saturating_sub(cell.range.start)) {
            return Err(why(
                "name",
                format!("{} is part of the name `{text}`", shown()),
            ));
        }
    }
    // `179 ms ± 7.39 ms`, `$0.9478 \pm 0.0004$`: the number after a `±` is the
    // spread of the one before it, not a figure, unless the claim names a spread.
    if after_plus_minus(&line[..start]) && !want.claimed.names_spread() {
        return Err(why(
            "spread",
            format!("{} is the spread after a `±`, not the figure", shown()),
        ));
    }
    if let Some(ratio) = ratio_around(line, start, end) {
        let measured = want.dim.is_some_and(|d| !matches!(d, Dim::Count(_)));
        if measured && !want.correct {
            return Err(why(
                "count",
                format!(
                    "{} is a term of the ratio `{ratio}`, not a figure in {}",
                    shown(),
                    want.unit_text()
                ),
            ));
        }
    }
    if let Some(range) = range_around(line, start, end) {
        // A range end carries a claim whose words name that end (`upper bound`, `max`).
        let upper = !range.starts_with(&line[start..end]);
        let named = match want.claimed.side() {
            Some(Side::Either) => true,
            Some(Side::Upper) => upper,
            Some(Side::Lower) => !upper,
            None => false,
        };
        if named {
            return Ok(Seen {
                dim: context::unit_after(line, end).or(want.dim),
                own_unit: true,
                bound: false,
                preferred: true,
            });
        }
        return Err(why(
            "range",
            format!("{} is an end of the range `{range}`", shown()),
        ));
    }

    let row = cell.as_ref().and_then(|c| ctx.row_label(line, c.col));
    // A row label keys its cells as a key keys its value (`| Seed | 42 |`,
    // `` | `--timeout` | 600 | ``), when the number stands alone in its cell.
    let key = key_before(line, scanned, i);
    let row_setting = row.and_then(row_key).filter(|_| key.is_none());
    if let Some(k) = row_setting.and_then(|k| context::identifier_key(k.text)) {
        if !want.names(k) {
            return Err(why(
                "identifier",
                format!("{} is a {k}, not a figure in {}", shown(), want.unit_text()),
            ));
        }
    }
    let key_dim = key.map(|k| key_dim(k.text)).unwrap_or_default();
    if let (Some(k), None, false) = (key, key_dim, real_unit) {
        let against = context::quantity_kind(k.text)
            .zip(want.dim.and_then(context::dim_kind))
            .is_some_and(|(named, wanted)| named != wanted);
        if against {
            return Err(why(
                "other-unit",
                format!(
                    "{} is the value of `{}`, not a figure in {}",
                    shown(),
                    k.text.trim(),
                    want.unit_text()
                ),
            ));
        }
    }
    // `total=20.1s`, `t = 42 ms`: a value with its unit written after it is a
    // measurement in that unit (a log field), not a setting.
    if let Some(k) = key.or(row_setting).filter(|k| k.setting && !real_unit) {
        // A key the claim's unit names (`MASTER_PORT` for a claim in `port`).
        let named = want.has_label() && want.label_shares(k.text)
            || want.dim.is_none() && context::key_parts(k.text).any(|w| want.names(&w));
        let fits = match want.dim {
            // A claim with no unit and no word naming the key is no setting's value.
            None => false,
            // `p=1.0000` for 20 of 20: a proportion keyed by a letter.
            Some(Dim::Percent) if want.correct => true,
            Some(Dim::Count(_)) => key_dim.is_none() || key_dim == want.dim,
            Some(d) => key_dim == Some(d),
        };
        if !(named || fits) {
            return Err(why(
                "setting",
                format!(
                    "{} is the value of the setting `{}`, not a figure in {}",
                    shown(),
                    k.text.trim(),
                    want.unit_text()
                ),
            ));
        }
    }

    let scope = ctx.scope.as_deref();
    // The column the claim's words name, if they name one (read once per number).
    let best = table
        .filter(|_| !want.claimed.is_empty())
        .and_then(|t| best_column(want, t, row.is_some()));
    if let Some(why) = words_against(
        want,
        line,
        &cell,
        table,
        row,
        key.map(|k| k.text),
        scope,
        best,
        start,
        &shown,
    ) {
        return Err(why);
    }

    if let (Some(cell), Some(table), true) = (&cell, table, want.correct) {
        let header = table.header_of(cell.col).unwrap_or("");
        if words_of(header).any(|w| FAILURE_WORDS.contains(&w.as_str())) {
            return Err(why(
                "other-column",
                format!(
                    "{} stands in column `{header}`, which counts no successes",
                    shown()
                ),
            ));
        }
    }
    // A column of what was expected or aimed at (`| Metric | Expected | Actual |`)
    // holds no measured figure, unless the claim's own words name that.
    if let (Some(cell), Some(table)) = (&cell, table) {
        let header = table.header_of(cell.col).unwrap_or("");
        let words: Vec<String> = words_of(header).collect();
        if words.len() <= 2
            && words.iter().any(|w| TARGET_WORDS.contains(&w.as_str()))
            && !want.label_shares(header)
        {
            return Err(why(
                "other-column",
                format!(
                    "{} stands in column `{header}`: a target, not a measured figure",
                    shown()
                ),
            ));
        }
    }
    let column = cell
        .as_ref()
        .and_then(|c| Some((c.col, table?)))
        .filter(|_| !real_unit && key_dim.is_none());
    let mut dim = own.or(key_dim);
    let mut preferred = false;
    if let Some((col, table)) = column {
        let header = table.header_of(col).unwrap_or("");
        preferred = !header.is_empty()
            && match best {
                Some((best, _)) => rank(want, header) >= best,
                None => want.label_shares(header),
            };
        // A row label with a unit (`| Throughput (tok/s) | 88.5 |`) gives its cells
        // that dimension, as a column header does; the header wins where both do.
        let row_dim = row.and_then(header_dim);
        let col_dim = table.dim_of(col).or(row_dim);
        // A header or row label that names a kind of quantity without a unit
        // (`Duration`, `num-gpu-blocks`) contradicts a claim of another kind.
        if col_dim.is_none() {
            let named = [Some(header), row].into_iter().flatten().find_map(|t| {
                let k = context::quantity_kind(t)?;
                let w = context::dim_kind(want.dim?)?;
                (k != w && !(want.correct && k == context::Kind::Count)).then_some(t)
            });
            if let Some(t) = named {
                return Err(why(
                    "other-column",
                    format!("{} stands under `{t}`, not {}", shown(), want.unit_text()),
                ));
            }
        }
        // A count column or row can hold a score's `correct` count (`| Tests Passed | 101 |`).
        let count_of_score = want.correct && matches!(col_dim, Some(Dim::Count(_)));
        if let (Some(w), Some(c), false) = (want.dim, col_dim, count_of_score) {
            if !context::compatible(Some(w), Some(c)) {
                let place = match table.dim_of(col) {
                    Some(_) => format!("column `{header}`"),
                    None => format!("row `{}`", row.unwrap_or("")),
                };
                return Err(why(
                    "other-column",
                    format!("{} stands in {place}, not {}", shown(), want.unit_text()),
                ));
            }
        }
        // Percentages and counts are written unevenly (`MMLU (%)` beside a bare
        // `GSM8K`), so only a unit of measure some other column declares rules out a
        // column that declares none.
        let measure = want
            .dim
            .filter(|d| !matches!(d, Dim::Percent | Dim::Count(_)));
        if let (Some(w), None) = (measure, col_dim) {
            if table.declares(w) {
                let header = if header.is_empty() { "?" } else { header };
                return Err(why(
                    "other-column",
                    format!(
                        "{} stands in column `{header}`; the table gives {} in another column",
                        shown(),
                        want.unit_text()
                    ),
                ));
            }
        }
        dim = dim
            .or(col_dim)
            .or_else(|| (!table.has_dims()).then_some(table.caption).flatten());
    }
    if dim.is_none() && is_bench_iterations(line, scanned, i) {
        dim = Some(Dim::Count(context::Noun::new("iteration")));
    }
    Ok(Seen {
        dim,
        own_unit: real_unit,
        // A bound the claim's words name (`at least`, `upper bound`) is its figure.
        bound: is_bound(line, start, end) && want.claimed.side().is_none(),
        preferred,
    })
}

/// The evidence of the claim's own words against a number: a column header, row label
/// or key naming a facet value the claim does not ([`Claimed::contradicts`]), or a cell
/// under a column whose header shares fewer of the claim's words than another
/// column's ([`Claimed::score`]).
#[allow(clippy::too_many_arguments)] // the places a number's words come from, each its own
fn words_against(
    want: &Want,
    line: &str,
    cell: &Option<super::structure::Cell>,
    table: Option<&super::structure::Table>,
    row: Option<&str>,
    key: Option<&str>,
    scope: Option<&str>,
    best: Option<(Rank, &str)>,
    start: usize,
    shown: &dyn Fn() -> String,
) -> Option<Why> {
    if want.claimed.is_empty() {
        return None;
    }
    let header = match (cell, table) {
        (Some(c), Some(t)) => t.header_of(c.col),
        _ => None,
    };
    // Outside a key, the words right before the number in its clause (`loss 12.44`).
    let beside = key.is_none().then(|| {
        let clause = &line[..start];
        let from = clause
            .rfind(['|', ',', ';', '(', '.', ':'])
            .map_or(0, |k| k + 1);
        clause[from..].trim()
    });
    let places = [
        ("column", header),
        ("row", row),
        ("key", key),
        ("scope", scope),
        (
            "words",
            beside.filter(|w| w.split_whitespace().count() <= 3),
        ),
    ];
    for (what, text) in places {
        let Some(text) = text.map(str::trim).filter(|t| !t.is_empty()) else {
            continue;
        };
        if let Some(c) = want.claimed.contradicts(text) {
            return Some(why(
                "other-label",
                format!(
                    "{} stands {} `{text}`, whose {} the claim's label does not name",
                    shown(),
                    match what {
                        "scope" => "under".to_string(),
                        "words" => "after".to_string(),
                        w => format!("in {w}"),
                    },
                    c.facet
                ),
            ));
        }
    }
    // The name right before a number (`deepseek-r1 (97.1%)`, `Llama-3-8B: 45.2`) of
    // a model the claim's label does not name. (Row labels name hardware and runs as
    // often as models, so they are left to the facets and columns.)
    let head = line[..start].trim_end_matches(|c: char| {
        c.is_whitespace() || matches!(c, '(' | ':' | '*' | '`' | '=' | '[')
    });
    let from = head
        .rfind(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_')))
        .map_or(0, |k| {
            k + head[k..].chars().next().map_or(1, char::len_utf8)
        });
    if let Some(other) = want.claimed.other_model(&head[from..]) {
        return Some(why(
            "other-label",
            format!(
                "{} stands after `{other}`, a model the claim's label does not name",
                shown()
            ),
        ));
    }
    let (Some(cell), Some(table)) = (cell, table) else {
        return None;
    };
    let (best, best_header) = best?;
    let mine = header.map_or((f32::MIN, f32::MIN), |h| rank(want, h));
    (mine < best && !table.is_label(cell.col)).then(|| {
        why(
            "other-column",
            format!(
                "{} stands in column `{}`; the claim's label names column `{best_header}`",
                shown(),
                header.unwrap_or("?")
            ),
        )
    })
}

/// How well a column header fits the claim's words: first the words it shares with
/// the figure part of the label, then its score against the whole label (the
/// subject breaks ties: `minimp3 (Raw)` over `ffmpeg (Raw)` for "minimp3 on the MP3
/// set: elapsed time (raw)"; unshared header words cost a little, so `anli_test`
/// beats `anli_test_r3` for "ANLI test accuracy").
type Rank = (f32, f32);

fn rank(want: &Want, header: &str) -> Rank {
    (
        want.claimed.scores(header, false).1,
        want.claimed.score(header, true),
    )
}

/// The value column whose header fits the claim's words best ([`rank`]): its rank
/// and header. `None` when no column shares a word: the words decide nothing. The
/// first column is no candidate when it labels the rows.
fn best_column<'t>(
    want: &Want,
    table: &'t super::structure::Table,
    row_labels: bool,
) -> Option<(Rank, &'t str)> {
    let first = usize::from(row_labels);
    let mut best: Option<(Rank, &str)> = None;
    for col in first..table.columns() {
        if table.is_label(col) {
            continue;
        }
        let Some(h) = table.header_of(col) else {
            continue;
        };
        let r = rank(want, h);
        if best.is_none_or(|(b, _)| r > b) {
            best = Some((r, h));
        }
    }
    best.filter(|((shared, whole), _)| *shared > 0.0 || *whole > 0.0)
}

/// Why a number of dimension `dim` can't carry a claim of `want`'s.
pub(super) fn other_unit(want: &Want, dim: Option<Dim>, shown: &str) -> Why {
    let role = if matches!(dim, Some(Dim::Count(_))) {
        "count"
    } else {
        "other-unit"
    };
    let what = match dim {
        Some(Dim::Count(n)) => format!("counts {}s", n.as_str()),
        _ => "is written in another unit".to_string(),
    };
    why(role, format!("`{shown}` {what}, not {}", want.unit_text()))
}

/// Why a coarser number without an approximation mark is not the claim's figure.
pub(super) fn coarser(shown: &str, value: &str) -> Why {
    why(
        "coarser",
        format!("`{shown}` is coarser than {value} and not marked approximate"),
    )
}

/// Why a figure written for people with more decimals than the claim is not it.
pub(super) fn finer(shown: &str, value: &str) -> Why {
    why(
        "coarser",
        format!("{value} is coarser than `{shown}`, which is no raw number a claim would round"),
    )
}

/// Why a bound is not a rounding of the claim's figure.
pub(super) fn bound(shown: &str, value: &str) -> Why {
    why(
        "bound",
        format!("`{shown}` is a bound, not a rounding of {value}"),
    )
}

/// Why a bare fraction on a line that writes percentages with `%` is not one.
pub(super) fn fraction_beside_percent(shown: &str) -> Why {
    why(
        "other-unit",
        format!("`{shown}` is a bare fraction on a line that writes its percentages with %"),
    )
}

/// Why a fraction in a setting's clause is not a score.
pub(super) fn setting_fraction(shown: &str) -> Why {
    why(
        "setting",
        format!("`{shown}` is the value of a setting, not a score"),
    )
}

fn words_of(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
}

/// A key before a number: `key: N`, `"key": N`, `key=N`, `--flag N`, `-x N`.
#[derive(Debug, Clone, Copy)]
struct Key<'l> {
    text: &'l str,
    /// A flag or an assignment (not a labelled value such as `Mean TTFT (ms): 812`).
    setting: bool,
}

/// The key token `i` is the value of, normalised (`--max-tokens`, `max_tokens` and
/// `MAX_TOKENS` alike), if it is keyed.
pub(super) fn key_text(line: &str, scanned: &[Scanned], i: usize) -> Option<String> {
    let key = key_before(line, scanned, i)?;
    let words: Vec<String> = context::key_words(key.text).collect();
    (!words.is_empty()).then(|| words.join("_"))
}

fn key_before<'l>(line: &'l str, scanned: &[Scanned], i: usize) -> Option<Key<'l>> {
    let t = &scanned[i];
    let from = i
        .checked_sub(1)
        .and_then(|p| scanned.get(p))
        .map_or(0, |p| p.token.span.end);
    let gap = line.get(from..t.token.span.start)?;
    let gap = gap
        .rfind([',', ';', '|', '{', '['])
        .map_or(gap, |k| &gap[k + 1..]);
    let trimmed = gap.trim_end_matches(|c: char| {
        SPACES.contains(&c) || matches!(c, '*' | '_' | '`' | '"' | '\'' | '\\')
    });
    if let Some(key) = trimmed.strip_suffix(':') {
        // `Top 5 Accuracy: 93.48%`: a key may hold numbers of its own, so it reaches
        // back past them to the last separator.
        let end = gap.as_ptr() as usize - line.as_ptr() as usize + key.len();
        let head = &line[..end];
        let key = &head[head
            .rfind([',', ';', '|', '{', '[', ':'])
            .map_or(0, |k| k + 1)..];
        let key = key.trim_matches(|c: char| {
            SPACES.contains(&c) || matches!(c, '"' | '\'' | '*' | '`' | '-')
        });
        // `"batch_size": 32` is a setting by its name; `Mean TTFT (ms): 812` and
        // `Temperature: 29°C` label a measurement.
        let code = !key.contains(char::is_whitespace) && !key.starts_with(char::is_uppercase);
        let setting = code
            && context::setting_key(key)
            && !context::key_parts(key).any(|w| context::METRICS.contains(&w.as_str()));
        return (!key.is_empty()).then_some(Key { text: key, setting });
    }
    if let Some(key) = trimmed.strip_suffix('=') {
        // `generation length $=200$`: the math opens between key and value.
        let key = key.trim_end_matches(|c: char| c == '$' || c.is_whitespace());
        let key = key.split_whitespace().last().unwrap_or("");
        let key = key.trim_start_matches(['-', '`', '"', '\'']);
        if !key.contains(|c: char| c.is_alphabetic()) {
            return None;
        }
        let metric = context::key_parts(key).any(|w| context::METRICS.contains(&w.as_str()));
        // `$E_k = 14.2$`: inline math reads as prose.
        let math = key.starts_with('$') || line[..t.token.span.start].matches('$').count() % 2 == 1;
        return Some(Key {
            text: key,
            setting: !metric && !math,
        });
    }
    // `--flag N`, `-ngl N` (a flag is the last word, right before the number).
    let last = trimmed.rsplit(|c: char| c.is_whitespace()).next()?;
    let last = last.trim_start_matches(['`', '(', '[', '"', '\'']);
    let flag = last.strip_prefix("--").or_else(|| last.strip_prefix('-'))?;
    let ok = trimmed.len() < gap.len()
        && flag.starts_with(|c: char| c.is_ascii_alphabetic())
        && flag
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    ok.then_some(Key {
        text: last,
        setting: true,
    })
}

/// A row label read as the key of its row's value: a flag (`` `--timeout` ``) or a
/// setting's or identifier's name (`Seed`, `Temperature`) is a setting; another label
/// (`Tasks Completed`, `Throughput (tok/s)`) names a measurement, as `key: N` does.
fn row_key(label: &str) -> Option<Key<'_>> {
    let text = label.trim_matches(|c: char| matches!(c, '`' | '*' | '_' | ' '));
    let flag = text.starts_with('-') && !text.contains(char::is_whitespace);
    // Greek letters name engines and runs as often as hyperparameters.
    let greek = matches!(
        text.to_lowercase().as_str(),
        "alpha" | "beta" | "gamma" | "delta" | "tau" | "eps" | "epsilon"
    );
    let named = context::setting_key(text)
        && !greek
        && !text.contains(['[', '('])
        && text.split_whitespace().count() <= 3;
    let setting = flag || named || context::identifier_key(text).is_some();
    setting.then_some(Key { text, setting })
}

/// The dimension a key's words name: its last unit word (`results_ttft_s_mean` → s,
/// `mean_input_tokens` → tokens, `Mean TTFT (ms)` → ms,
/// `output_throughput_token_per_s` → tokens per second).
fn key_dim(key: &str) -> Option<Dim> {
    let parts: Vec<String> = key
        .split(|c: char| !(c.is_alphanumeric() || c == '/' || c == '%'))
        .flat_map(|w| w.split('_'))
        .filter(|w| !w.is_empty() && !w.chars().any(|c| c.is_ascii_digit()))
        .map(str::to_string)
        .collect();
    let mut found = None;
    for (k, w) in parts.iter().enumerate() {
        if w.chars().count() == 1 && w != "s" && w != "%" {
            continue;
        }
        let lower = w.to_lowercase();
        let dim = if w == "%" {
            Some(Dim::Percent)
        } else if matches!(lower.as_str(), "length" | "len") {
            // `Expected output length`, `max_model_len`: a length in tokens.
            Some(Dim::Count(context::Noun::new("token")))
        } else if lower == "min" {
            // the minimum, as often as minutes
            None
        } else {
            context::word_dim(w)
        };
        let dim = match dim {
            Some(Dim::Count(n))
                if parts
                    .get(k + 1)
                    .is_some_and(|p| p.eq_ignore_ascii_case("per"))
                    && parts.get(k + 2).is_some_and(|p| {
                        matches!(p.to_lowercase().as_str(), "s" | "sec" | "second")
                    }) =>
            {
                Some(Dim::Rate(n))
            }
            // `tok_s`, `tokens_sec`: a noun right over a second is a rate of it.
            Some(Dim::Count(n)) if parts.get(k + 1).is_some_and(|p| per_second(p)) => {
                Some(Dim::Rate(n))
            }
            // `prompt_speed`, `completion_throughput`: a noun before a rate word names
            // what the rate is of, not its unit (the key's words say it is a rate).
            Some(Dim::Count(_))
                if parts
                    .get(k + 1)
                    .is_some_and(|p| context::quantity_kind(p) == Some(context::Kind::Rate)) =>
            {
                continue
            }
            Some(Dim::Time("s")) if k > 0 && parts[k - 1].eq_ignore_ascii_case("per") => continue,
            Some(Dim::Time("s"))
                if k > 0
                    && per_second(w)
                    && matches!(context::word_dim(&parts[k - 1]), Some(Dim::Count(_))) =>
            {
                continue
            }
            Some(Dim::Magnitude) => continue,
            d => d,
        };
        if dim.is_some() {
            found = dim;
        }
    }
    found
}

fn per_second(word: &str) -> bool {
    matches!(word.to_lowercase().as_str(), "s" | "sec" | "second")
}

/// A cell holding words besides numbers and their units: a name (`Batch-1 Latency`,
/// `AIME 2024 (Pass@1)`, `gpt-oss 120B MXFP4`), not a value cell (`38 (72%)`,
/// `4.58 GB`, `2.8316 +/- 0.0138`, `~14 tok/s`, `n/a`).
fn cell_has_words(text: &str, upto: usize) -> bool {
    let bytes = text.as_bytes();
    let mut i = 0;
    // Only words before the number name it (`AIME 2024`); after it they qualify
    // it (`87.5 (best)`).
    while i < text.len().min(upto) {
        let c = text[i..].chars().next().unwrap_or(' ');
        if !c.is_alphabetic() {
            i += c.len_utf8();
            continue;
        }
        let start = i;
        while i < text.len() {
            let c = text[i..].chars().next().unwrap_or(' ');
            if !(c.is_alphabetic() || c == '/') {
                break;
            }
            i += c.len_utf8();
        }
        let word = &text[start..i];
        let before = text[..start]
            .trim_end_matches([' ', '+', '-', '*', '~'])
            .trim_end_matches(|c: char| c.is_ascii_alphabetic());
        let glued_or_unit = start > 0 && bytes[start - 1].is_ascii_digit()
            || before.ends_with(|c: char| c.is_ascii_digit())
                && (context::word_dim(word).is_some() || context::plural_noun(word).is_some());
        let lower = word.to_lowercase();
        let qualifier =
            CELL_WORDS.contains(&lower.as_str()) || context::METRICS.contains(&lower.as_str());
        // `\textbf{42.18}`, `$\sim$`: a LaTeX command is markup, not a word.
        let command = start > 0 && bytes[start - 1] == b'\\';
        if glued_or_unit || word.chars().count() == 1 || qualifier || command {
            continue;
        }
        return true;
    }
    false
}

/// `64/1024`, `4/30`: the ratio the number is a term of (dates and paths are no
/// numbers or names already).
fn ratio_around(line: &str, start: usize, end: usize) -> Option<String> {
    let before = &line[..start];
    if let Some(head) = before.strip_suffix('/') {
        if head.ends_with(|c: char| c.is_ascii_digit()) {
            let from = head
                .rfind(|c: char| !(c.is_ascii_digit() || matches!(c, '.' | ',')))
                .map_or(0, |k| k + 1);
            return Some(line[from..end].to_string());
        }
    }
    let tail = line[end..].strip_prefix('/')?;
    let len = tail
        .find(|c: char| !(c.is_ascii_digit() || matches!(c, '.' | ',')))
        .unwrap_or(tail.len());
    (len > 0).then(|| line[start..end + 1 + len].to_string())
}

/// `15-25`, `1.5-2x`, `~31–32`: the range the number ends, if it is an end of one.
fn range_around(line: &str, start: usize, end: usize) -> Option<String> {
    const DASHES: [char; 3] = ['-', '–', '—'];
    let before = &line[..start];
    if let Some(dash) = before.chars().next_back().filter(|c| DASHES.contains(c)) {
        let head = &before[..before.len() - dash.len_utf8()];
        // LaTeX writes an en dash as `--` (`3.4--4.6 MB`).
        let head = head
            .strip_suffix("--")
            .or(head.strip_suffix('-'))
            .filter(|_| dash == '-')
            .unwrap_or(head);
        if head.ends_with(|c: char| c.is_ascii_digit()) {
            let from = head
                .rfind(|c: char| !(c.is_ascii_digit() || matches!(c, '.' | ',')))
                .map_or(0, |k| {
                    k + head[k..].chars().next().map_or(1, char::len_utf8)
                });
            return Some(line[from..end].to_string());
        }
    }
    // `4 to 6 GB`, not `from 19 to 27.4` (a change, whose end is a figure).
    if let Some(head) = before.strip_suffix(" to ") {
        let first = head.trim_end();
        if first.ends_with(|c: char| c.is_ascii_digit()) {
            let from = first
                .rfind(|c: char| !(c.is_ascii_digit() || matches!(c, '.' | ',')))
                .map_or(0, |k| k + 1);
            let word_before = first[..from].trim_end().rsplit(' ').next().unwrap_or("");
            if !word_before.eq_ignore_ascii_case("from") {
                return Some(line[from..end].to_string());
            }
        }
    }
    let after = &line[end..];
    if let Some(tail) = after.strip_prefix(" to ") {
        let word_before = before.trim_end().rsplit(' ').next().unwrap_or("");
        if tail.starts_with(|c: char| c.is_ascii_digit())
            && !word_before.eq_ignore_ascii_case("from")
        {
            let len = tail
                .find(|c: char| !(c.is_ascii_digit() || matches!(c, '.' | ',')))
                .unwrap_or(tail.len());
            return Some(line[start..end + 4 + len].to_string());
        }
    }
    let glued = after
        .find(|c: char| !c.is_ascii_alphabetic())
        .unwrap_or(after.len());
    let rest = &after[glued..];
    if let Some(dash) = rest.chars().next().filter(|c| DASHES.contains(c)) {
        let mut tail = &rest[dash.len_utf8()..];
        let mut dash_len = dash.len_utf8();
        if dash == '-' {
            if let Some(t) = tail.strip_prefix('-') {
                tail = t;
                dash_len += 1;
            }
        }
        if tail.starts_with(|c: char| c.is_ascii_digit()) {
            let len = tail
                .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '.' | ',')))
                .unwrap_or(tail.len());
            return Some(line[start..end + glued + dash_len + len].to_string());
        }
    }
    None
}

/// Text that ends in a plus-minus sign (`±`, `+/-`, `+-`, LaTeX `\pm`), spaces, `$`
/// and emphasis aside.
fn after_plus_minus(before: &str) -> bool {
    let b = before.trim_end_matches(|c: char| c.is_whitespace() || matches!(c, '$' | '*' | '{'));
    b.ends_with('±') || b.ends_with("+/-") || b.ends_with("+-") || b.ends_with("\\pm")
}

/// `under 2%`, `< 5 ms`, `at least 1000`, `up to 3x`, `40k+`.
fn is_bound(line: &str, start: usize, end: usize) -> bool {
    let before = line[..start].trim_end_matches(|c: char| {
        SPACES.contains(&c) || matches!(c, '*' | '_' | '`' | '~' | '$')
    });
    if before.ends_with(['≤', '≥', '≲', '≳']) {
        return true;
    }
    // `< 5 ms`, `(>=2)`; not the end of a tag (`<td>22.7`).
    let sign = before
        .strip_suffix("<=")
        .or_else(|| before.strip_suffix(">="))
        .or_else(|| before.strip_suffix('<'))
        .or_else(|| before.strip_suffix('>'));
    if let Some(head) = sign {
        if head.is_empty() || head.ends_with(|c: char| c.is_whitespace() || c == '(' || c == '|') {
            return true;
        }
    }
    // `under about 80 MB`: an approximation word between a bound's word and its number.
    let mut words = before.rsplit(|c: char| !c.is_alphabetic()).skip_while(|w| {
        matches!(
            w.to_lowercase().as_str(),
            "about" | "around" | "approximately" | "roughly" | "nearly" | "approx"
        )
    });
    let last = words.next().unwrap_or("").to_lowercase();
    if BOUND_WORDS.contains(&last.as_str()) {
        return true;
    }
    if last == "to" && words.next().is_some_and(|w| w.eq_ignore_ascii_case("up")) {
        return true;
    }
    let after = &line[end..];
    let glued = after
        .find(|c: char| !c.is_alphabetic())
        .unwrap_or(after.len());
    let rest = &after[glued..];
    rest.starts_with('+') && !rest[1..].starts_with(|c: char| c.is_ascii_digit())
}

/// `BenchmarkInference-32   99   110913774 ns/op`: the iteration count of a go test
/// benchmark line.
fn is_bench_iterations(line: &str, scanned: &[Scanned], i: usize) -> bool {
    let before = line[..scanned[i].token.span.start].trim();
    before.starts_with("Benchmark") && !before.contains(char::is_whitespace)
}

/// Shapes that make a number part of a name, beyond [`context::name_kind`]: glued to a
/// word by a hyphen (`BenchmarkInference-32`, `llama2-70b-4096`, `GPT-4.1`), a
/// footnote marker (`[^9]`), inside a URL or a host's port (`localhost:8000`), inside a
/// link's text (`[Llama 3.1 405b](…)`), glued to letters that are no unit (`7443P`,
/// `366f`, `5th`), between capitalised words (`Claude 3.5 Sonnet`, `Pi 4 Model`,
/// `Rev 1.4 8GB`), or a `.13` beside an IP address.
fn name_by_shape(line: &str, scanned: &[Scanned], i: usize) -> Option<&'static str> {
    let t = &scanned[i];
    let (start, end) = (t.token.span.start, t.token.span.end);
    let before = &line[..start];
    let after = &line[end..];
    if let Some(head) = before.strip_suffix('-') {
        if head.ends_with(|c: char| c.is_alphabetic()) {
            return Some("part of a hyphenated name");
        }
    }
    // `100% |#####| 4.2G/4.2G`: a progress bar.
    let bar = after
        .trim_start_matches(['%', ' '])
        .strip_prefix('|')
        .is_some_and(|r| r.starts_with(['#', '█', '▏', '▎', '▍', '▌', '▋', '▊', '▉']));
    if t.token.percent && bar {
        return Some("a progress bar");
    }
    if before.ends_with("[^") || before.ends_with('^') {
        return Some("a footnote marker");
    }
    if in_url(line, start) {
        return Some("part of a URL");
    }
    if let Some(head) = before.strip_suffix(':') {
        // `qwen2.5-coder:32b`, `` `:8b` ``: a model tag.
        let glued = after.starts_with(|c: char| c.is_ascii_alphabetic());
        if glued && !head.ends_with(char::is_whitespace) && !head.is_empty() {
            return Some("a model tag");
        }
        let host = head
            .rsplit(|c: char| !(c.is_alphanumeric() || matches!(c, '.' | '-')))
            .next()
            .unwrap_or("");
        if host.eq_ignore_ascii_case("localhost")
            || host.contains('.') && host.contains(char::is_alphabetic)
        {
            return Some("a port");
        }
    }
    if in_link_text(line, start) {
        return Some("part of a link's name");
    }
    let glued: &str = {
        let n = after
            .find(|c: char| !c.is_ascii_alphabetic())
            .unwrap_or(after.len());
        &after[..n]
    };
    // `+16.38pp`: percentage points, a unit of their own.
    let points = glued == "pp";
    if !glued.is_empty() && !points && !t.token.percent && context::unit_after(line, end).is_none()
    {
        let next = &after[glued.len()..];
        if !next.starts_with('/') {
            return Some("a model or part number");
        }
    }
    if t.digits_start < line.len() && line.as_bytes()[t.digits_start] == b'.' && has_ipv4(line) {
        return Some("part of an address");
    }
    if sandwiched(line, start, end, t.token.percent) {
        return Some("part of a name");
    }
    None
}

fn in_url(line: &str, pos: usize) -> bool {
    for scheme in ["http://", "https://", "www."] {
        let mut from = 0;
        while let Some(k) = line[from..].find(scheme).map(|k| from + k) {
            let stop = line[k..]
                .find(|c: char| {
                    c.is_whitespace() || matches!(c, ')' | '>' | '"' | '\'' | ']' | '|')
                })
                .map_or(line.len(), |e| k + e);
            if (k..stop).contains(&pos) {
                return true;
            }
            from = stop.max(k + 1);
            if from >= line.len() {
                break;
            }
        }
    }
    false
}

/// Inside `[text](…)` whose text has letters.
fn in_link_text(line: &str, pos: usize) -> bool {
    let Some(open) = line[..pos].rfind('[') else {
        return false;
    };
    if line[open..pos].contains(']') {
        return false;
    }
    let Some(close) = line[pos..].find(']').map(|k| pos + k) else {
        return false;
    };
    let text = &line[open + 1..close];
    line[close + 1..].starts_with('(') && text.contains(|c: char| c.is_alphabetic())
}

fn has_ipv4(line: &str) -> bool {
    line.split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .any(|w| {
            let parts: Vec<&str> = w.split('.').collect();
            parts.len() == 4
                && parts.iter().all(|p| {
                    !p.is_empty() && p.len() <= 3 && p.parse::<u16>().is_ok_and(|n| n <= 255)
                })
        })
}

/// A capitalised word (not a unit) right before the number, and right after it a
/// capitalised word, a number glued to letters (`8GB`, `405b`) or the end of a link's
/// text: `Claude 3.5 Sonnet`, `Raspberry Pi 4 Model B`, `Rev 1.4 8GB`.
fn sandwiched(line: &str, start: usize, end: usize, percent: bool) -> bool {
    if percent || context::unit_after(line, end).is_some_and(|d| d != Dim::Magnitude) {
        return false;
    }
    let before = &line[..start];
    let spaced = before.trim_end_matches(' ');
    if spaced.len() == before.len() || before.len() - spaced.len() > 1 {
        return false;
    }
    let word = spaced
        .rsplit(|c: char| !(c.is_alphanumeric() || matches!(c, '-' | '.')))
        .next()
        .unwrap_or("");
    let capital = word.chars().next().is_some_and(char::is_uppercase)
        && word.chars().filter(|c| c.is_alphabetic()).count() >= 2
        && !word.contains(|c: char| c.is_ascii_digit())
        && context::word_dim(word).is_none();
    if !capital {
        return false;
    }
    let after = &line[end..];
    let Some(next) = after.strip_prefix(' ') else {
        return after.starts_with(']');
    };
    let next_word: String = next.chars().take_while(|c| c.is_alphanumeric()).collect();
    let first = next_word.chars().next();
    const JOINERS: [&str; 10] = [
        "of", "out", "to", "in", "on", "at", "and", "or", "for", "per",
    ];
    first.is_some_and(char::is_uppercase)
        && next_word.chars().filter(|c| c.is_alphabetic()).count() >= 2
        && !JOINERS.contains(&next_word.to_lowercase().as_str())
        && context::word_dim(&next_word).is_none()
        || first.is_some_and(|c| c.is_ascii_digit())
            && next_word.contains(|c: char| c.is_alphabetic())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_dimensions() {
        assert_eq!(key_dim("results_ttft_s_mean"), Some(Dim::Time("s")));
        assert!(matches!(key_dim("mean_input_tokens"), Some(Dim::Count(_))));
        assert!(matches!(
            key_dim("results_mean_output_throughput_token_per_s"),
            Some(Dim::Rate(_))
        ));
        assert_eq!(key_dim("Mean TTFT (ms)"), Some(Dim::Time("ms")));
        assert!(matches!(
            key_dim("Request throughput (req/s)"),
            Some(Dim::Rate(_))
        ));
        assert_eq!(key_dim("py"), None);
    }

    #[test]
    fn ranges_and_bounds() {
        assert_eq!(
            range_around("expect 15-25 tok/s", 7, 9).as_deref(),
            Some("15-25")
        );
        assert_eq!(
            range_around("expect 15-25 tok/s", 10, 12).as_deref(),
            Some("15-25")
        );
        assert_eq!(
            range_around("10-50x cheaper", 0, 2).as_deref(),
            Some("10-50x")
        );
        assert_eq!(range_around("a 3-node cluster", 2, 3), None);
        assert!(is_bound("under 1.4s", 6, 9));
        assert!(is_bound("up to 3x", 6, 7));
        assert!(is_bound("≤ 2 ms", 4, 5));
        assert!(is_bound("**40k+ tokens**", 2, 4));
        assert!(!is_bound("from 19 to 27.4", 11, 15));
        assert!(!is_bound("<td>22.7</td>", 4, 8));
        assert!(is_bound("latency < 5 ms", 10, 11));
    }

    #[test]
    fn words_after_a_number_qualify_it() {
        assert!(!cell_has_words(" 87.5 (best) ", 2));
        assert!(!cell_has_words(" avg 31.7 ", 5));
        assert!(cell_has_words(" AIME 2024 ", 6));
    }

    #[test]
    fn value_cells_and_name_cells() {
        for v in [
            "38 (72%)",
            "4.58 GB",
            "2.8316 +/- 0.0138",
            "~14 tok/s",
            "n/a",
            "**40k+ tokens**",
            "1,048,576-token",
        ] {
            assert!(!cell_has_words(v, v.len()), "{v}");
        }
        for n in [
            "Batch-1 Latency",
            "AIME 2024 (Pass@1)",
            "gpt-oss 120B MXFP4 MoE",
            "3-shot",
        ] {
            assert!(cell_has_words(n, n.len()), "{n}");
        }
    }
}
