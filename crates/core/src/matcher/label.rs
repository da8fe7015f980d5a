//! What the claim's own words say a number must be: the record writer's `label` (and
//! `metric`, `statistic`) name the figure, and a column, row or key whose words name
//! something else is not where the figure stands (issue 44: "FP32 accuracy" is not the
//! number under `INT8`, "median TTFT" not the one under `Mean TTFT (ms)`).
//!
//! Two kinds of evidence, both read from the same words:
//!
//! - **Facets.** Some words name one value of a small closed set: the metric
//!   (`precision`, `recall`, `F1`, `ROUGE-L`, …), the data split (`train`,
//!   `validation`, `test`), the statistic (`mean`, `median`, `p99`, …), the numeric
//!   format (`FP32`, `INT8`, `bf16`, any `fp`/`bf`/`int`/`q` with digits), the phase or
//!   latency kind (`prefill`, `decode`, `TTFT`, `TPOT`, `ITL`), a named-entity type
//!   (`PER`, `ORG`, `LOC`) or a language (`German`, a lone `de`). When a column header,
//!   a row label or a key names a value of a facet, and the claim names values of the
//!   same facet but not that one, the number is not the figure. Words that name no facet
//!   decide nothing.
//! - **Overlap.** Among the columns of one table, the one whose header shares most of
//!   the claim's words (exactly, by a known synonym, or as an abbreviation: `BoolQA` for
//!   BoolQ, `mnli` for MultiNLI, `Micro-Avg` for micro-average) is where the figure
//!   stands; a cell under a column that shares fewer is another figure. When no column
//!   shares any word, nothing is decided.
//!
//! The claim's words are read in two parts: the figure (after the label's last `:`,
//! else after its last `,`) and the subject before it (`DistilBERT SST-2 (Intel INT8
//! static model card): FP32 accuracy` is about FP32, though its subject names INT8). A
//! facet the figure part names is taken from it; otherwise from the whole label.

/// One facet: groups of words that name the same value.
struct Facet {
    name: &'static str,
    groups: &'static [&'static [&'static str]],
}

const FACETS: [Facet; 7] = [
    Facet {
        name: "metric",
        groups: &[
            &["precision", "prec"],
            &["recall"],
            &["f1", "fscore", "f1score", "fmeasure"],
            &["accuracy", "acc"],
            &["perplexity", "ppl"],
            &["loss"],
            &["bleu"],
            &["rouge1"],
            &["rouge2"],
            &["rougel"],
            &["rougelsum"],
            &["auroc", "auc"],
            &["rmse"],
            &["mae"],
            &["wer"],
            &["ap"],
            &["map"],
            &["ndcg"],
            &["mrr"],
            &["em"],
            &["spearman"],
            &["pearson"],
        ],
    },
    Facet {
        name: "split",
        groups: &[
            &["train", "training"],
            &["validation", "val", "valid", "dev"],
            &["test", "testing"],
            // Held-out data of either kind: not training ([`compatible`]).
            &["eval", "evaluation", "evaluated"],
        ],
    },
    Facet {
        name: "statistic",
        groups: &[
            &["mean", "average", "avg"],
            &["median", "p50"],
            &["p90"],
            &["p95"],
            &["p99"],
            &["std", "stdev", "stddev"],
        ],
    },
    Facet {
        name: "phase",
        groups: &[
            &["prefill", "pp", "input", "prompt"],
            &["decode", "decoding", "tg", "output", "generation"],
            &["ttft"],
            &["tpot"],
            &["itl"],
            &["e2e"],
        ],
    },
    Facet {
        name: "entity",
        groups: &[
            &["per", "person", "persons"],
            &["org", "organization", "organisation", "organizations"],
            &["loc", "location", "locations"],
            &["misc", "miscellaneous"],
        ],
    },
    Facet {
        name: "language",
        groups: &[
            &["english"],
            &["german"],
            &["french"],
            &["spanish"],
            &["chinese"],
            &["russian"],
            &["arabic"],
            &["bulgarian"],
            &["greek"],
            &["hindi"],
            &["swahili"],
            &["thai"],
            &["turkish"],
            &["urdu"],
            &["vietnamese"],
            &["japanese"],
            &["korean"],
            &["italian"],
            &["portuguese"],
            &["dutch"],
            &["polish"],
        ],
    },
    Facet {
        // `Top 5 Accuracy` is no top-1 figure; a claim that names no rank decides
        // nothing.
        name: "rank",
        groups: &[&["top1"], &["top3"], &["top5"], &["top10"]],
    },
];

/// ISO 639-1 codes of the languages above: a code names a language only as a header or
/// key of its own (`| de |`), never as a word among others (`it`, `es`, `hi`).
const LANGUAGE_CODES: [(&str, &str); 21] = [
    ("en", "english"),
    ("de", "german"),
    ("fr", "french"),
    ("es", "spanish"),
    ("zh", "chinese"),
    ("ru", "russian"),
    ("ar", "arabic"),
    ("bg", "bulgarian"),
    ("el", "greek"),
    ("hi", "hindi"),
    ("sw", "swahili"),
    ("th", "thai"),
    ("tr", "turkish"),
    ("ur", "urdu"),
    ("vi", "vietnamese"),
    ("ja", "japanese"),
    ("ko", "korean"),
    ("it", "italian"),
    ("pt", "portuguese"),
    ("nl", "dutch"),
    ("pl", "polish"),
];

/// Phrases read as the one word that abbreviates them.
const PHRASES: [(&str, &str); 5] = [
    ("time to first token", "ttft"),
    ("time per output token", "tpot"),
    ("inter token latency", "itl"),
    ("end to end", "e2e"),
    ("exact match", "em"),
];

/// Words too common to tell one figure from another.
const STOP: [&str; 23] = [
    "the", "a", "an", "of", "in", "on", "at", "for", "and", "or", "to", "with", "by", "is", "as",
    "from", "after", "before", "vs", "set", "all", "first", "last",
];

/// The lowercase words of `text`: split at anything but letters and digits, a letter
/// word joined to a number or a single letter after a hyphen (`ROUGE-1` → `rouge1`,
/// `ROUGE-L` → `rougel`, so `Rouge1` reads the same), known phrases read as their
/// abbreviation.
pub(super) fn words(text: &str) -> Vec<String> {
    let mut lower = text.to_lowercase();
    // `F1-Score` → `f1 score`; `micro-average` stays two words.
    for (phrase, abbr) in PHRASES {
        let spaced = lower.replace(['-', '_'], " ");
        if spaced.contains(phrase) {
            lower = spaced.replace(phrase, abbr);
        }
    }
    let mut out: Vec<String> = Vec::new();
    let mut joined_to_previous = false;
    let mut rest = lower.as_str();
    while !rest.is_empty() {
        let start = rest
            .find(|c: char| c.is_alphanumeric())
            .unwrap_or(rest.len());
        let sep = &rest[..start];
        rest = &rest[start..];
        let end = rest
            .find(|c: char| !c.is_alphanumeric())
            .unwrap_or(rest.len());
        let word = &rest[..end];
        rest = &rest[end..];
        if word.is_empty() {
            continue;
        }
        let short = word.chars().all(|c| c.is_ascii_digit()) || word.chars().count() == 1;
        let glue = sep == "-"
            && short
            && !joined_to_previous
            && out
                .last()
                .is_some_and(|p| p.chars().any(char::is_alphabetic));
        if glue {
            if let Some(p) = out.last_mut() {
                p.push_str(word);
            }
            joined_to_previous = true;
            continue;
        }
        // `Top 5`, `top_1`: a rank is one word, as `top-1` is.
        if word.chars().all(|c| c.is_ascii_digit()) && out.last().is_some_and(|p| p == "top") {
            if let Some(p) = out.last_mut() {
                p.push_str(word);
            }
            joined_to_previous = true;
            continue;
        }
        joined_to_previous = false;
        out.push(word.to_string());
    }
    out
}

/// The facet values `words` name: (facet index, group index).
fn facet_values(words: &[String], alone: bool) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    for w in words {
        let w = if alone { language(w) } else { w.as_str() };
        for (f, facet) in FACETS.iter().enumerate() {
            if let Some(g) = facet.groups.iter().position(|g| g.contains(&w)) {
                out.push((f, g));
            }
        }
        if let Some(format) = numeric_format(w) {
            out.push((FACETS.len(), format));
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// Numeric formats (`fp32`, `float16`, `bf16`, `bfloat16`, `int8`, `int4`, `fp8`, `q4`):
/// a facet of its own, by kind and width, so any width is known without a list.
fn numeric_format(word: &str) -> Option<usize> {
    let digits_at = word.find(|c: char| c.is_ascii_digit())?;
    let (kind, rest) = word.split_at(digits_at);
    let width: usize = rest
        .split(|c: char| !c.is_ascii_digit())
        .next()?
        .parse()
        .ok()?;
    let kind = match kind {
        "fp" | "float" => 1,
        "bf" | "bfloat" => 2,
        "int" => 3,
        "uint" => 4,
        "q" if rest.len() <= 4 => 5,
        _ => return None,
    };
    (width > 0 && width <= 64).then_some(kind * 100 + width)
}

/// Whether two values of facet `f` can name the same figure: the same value, or
/// "evaluation" beside validation or test (the split facet's last group).
fn compatible(f: usize, a: usize, b: usize) -> bool {
    const SPLIT: usize = 1;
    const EVAL: usize = 3;
    const TRAIN: usize = 0;
    a == b || f == SPLIT && (a == EVAL && b != TRAIN || b == EVAL && a != TRAIN)
}

fn facet_name(f: usize) -> &'static str {
    FACETS.get(f).map_or("format", |facet| facet.name)
}

/// The claim's words, read once.
#[derive(Debug, Default)]
pub(super) struct Claimed {
    /// Words of the figure part of the label (after its last `:` or `,`).
    figure: Vec<String>,
    /// Words of the whole label.
    all: Vec<String>,
    /// Facet values by facet: the figure part's if it names the facet, else the whole
    /// label's.
    facets: Vec<(usize, usize)>,
    /// The end of a range or the bound the figure part names (`upper bound`, `lower
    /// end`, `at least`, `max`).
    side: Option<Side>,
    /// The models the label names ([`model_names`]).
    models: Vec<String>,
}

/// Model names in `text`, lowercase: runs of letters and digits joined by `-`, `.` or
/// `_` that hold a letter and a digit and at least one joint (`Qwen2.5-7B`,
/// `deepseek-r1`); versions (`v1.2`), sizes (`7B`) and plain words are none.
pub(super) fn model_names(text: &str) -> Vec<String> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_')))
        .map(|w| w.trim_matches(|c: char| matches!(c, '-' | '.' | '_')))
        .filter(|w| {
            let parts: Vec<&str> = w.split(['-', '.', '_']).collect();
            parts.len() >= 2
                && parts.iter().all(|p| !p.is_empty())
                && w.starts_with(|c: char| c.is_ascii_alphabetic())
                && w.contains(|c: char| c.is_ascii_digit())
                && parts
                    .iter()
                    .filter(|p| p.chars().any(|c| c.is_ascii_alphabetic()))
                    .count()
                    >= 2
        })
        .map(str::to_lowercase)
        .collect()
}

/// An end of a range, or a bound, that a claim's words name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Side {
    /// `upper`, `max`, `at most`, `ceiling`: the upper end or an upper bound.
    Upper,
    /// `lower`, `min`, `at least`, `floor`: the lower end or a lower bound.
    Lower,
    /// `range`, `bound`, `end`: either.
    Either,
}

fn range_side(figure: &[String]) -> Option<Side> {
    let has = |ws: &[&str]| figure.iter().any(|w| ws.contains(&w.as_str()));
    let upper = has(&[
        "upper", "max", "maximum", "ceiling", "most", "highest", "top",
    ]);
    let lower = has(&["lower", "min", "minimum", "floor", "least", "lowest"]);
    match (upper, lower) {
        (true, false) => Some(Side::Upper),
        (false, true) => Some(Side::Lower),
        _ if has(&["range", "bound", "bounds", "end", "limit"]) => Some(Side::Either),
        _ => None,
    }
}

/// A column, row or key whose words the claim's contradict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Contradiction {
    /// The facet (`metric`, `split`, `format`, …).
    pub(super) facet: &'static str,
}

impl Claimed {
    /// The words of a claim's `label`, `metric` and `statistic` (the last two belong
    /// to the figure part).
    pub(super) fn new(
        label: Option<&str>,
        metric: Option<&str>,
        statistic: Option<&str>,
    ) -> Claimed {
        let label = label.map(str::trim).unwrap_or("");
        let figure_text = label
            .rsplit_once(':')
            .or_else(|| label.rsplit_once(", "))
            .map_or(label, |(_, f)| f);
        let extra = [metric, statistic].into_iter().flatten();
        let keep = |w: &String| !STOP.contains(&w.as_str());
        let mut figure: Vec<String> = words(figure_text).into_iter().filter(keep).collect();
        let mut all: Vec<String> = words(label).into_iter().filter(keep).collect();
        for text in extra {
            let more: Vec<String> = words(text).into_iter().filter(keep).collect();
            figure.extend(more.iter().cloned());
            all.extend(more);
        }
        if all.is_empty() {
            return Claimed::default();
        }
        let side = range_side(&figure);
        let from_figure = facet_values(&figure, false);
        let from_all = facet_values(&all, false);
        let mut facets = from_figure.clone();
        for v in from_all {
            if !from_figure.iter().any(|(f, _)| *f == v.0) {
                facets.push(v);
            }
        }
        Claimed {
            figure,
            all,
            facets,
            side,
            models: model_names(label),
        }
    }

    #[cfg(test)]
    fn new_label(label: Option<&str>) -> Claimed {
        Claimed::new(label, None, None)
    }

    /// Whether the claim's words name a spread (`std`, `stdev`, `error`): only then
    /// is the number after a `±` its figure.
    pub(super) fn names_spread(&self) -> bool {
        self.all.iter().any(|w| {
            matches!(
                w.as_str(),
                "std"
                    | "stdev"
                    | "stddev"
                    | "sd"
                    | "deviation"
                    | "error"
                    | "stderr"
                    | "spread"
                    | "margin"
            )
        })
    }

    /// A model's name in `text` that none the claim's label names could be, when the
    /// label names one: `deepseek-r1` for a claim about `gemma-3-27b`. Names are
    /// runs of letters and digits joined by `-`, `.` or `_`, with a letter and a
    /// digit (`Qwen2.5-7B`, `gpt-4o`, `llama-3-8b`); one name containing the other is
    /// the same model (`Meta-Llama-3-8B` and `Llama-3-8B-Instruct`'s `llama-3-8b`).
    pub(super) fn other_model(&self, text: &str) -> Option<String> {
        if self.models.is_empty() {
            return None;
        }
        model_names(text).into_iter().find(|n| {
            !self
                .models
                .iter()
                .any(|m| m.contains(n.as_str()) || n.contains(m.as_str()))
        })
    }

    /// Which end of a range or which kind of bound the claim's words name, if any.
    pub(super) fn side(&self) -> Option<Side> {
        self.side
    }

    pub(super) fn is_empty(&self) -> bool {
        self.all.is_empty()
    }

    /// Whether the words of a column header, row label or key (`descriptor`) name a
    /// value of a facet the claim names otherwise.
    pub(super) fn contradicts(&self, descriptor: &str) -> Option<Contradiction> {
        if self.facets.is_empty() {
            return None;
        }
        let theirs = words(descriptor);
        let alone = theirs.len() == 1;
        let named = facet_values(&theirs, alone);
        let facet = named.iter().find_map(|(f, _)| {
            let claimed: Vec<usize> = self
                .facets
                .iter()
                .filter(|(cf, _)| cf == f)
                .map(|(_, cg)| *cg)
                .collect();
            let descriptor_groups = named.iter().filter(|(df, _)| df == f).map(|(_, dg)| dg);
            let shares = descriptor_groups
                .clone()
                .any(|dg| claimed.iter().any(|cg| compatible(*f, *cg, *dg)));
            (!claimed.is_empty() && !shares).then_some(*f)
        })?;
        Some(Contradiction {
            facet: facet_name(facet),
        })
    }

    /// How much a column header shares the claim's words (the figure part's, or with
    /// `all` the whole label's): exact words and synonyms count most, abbreviations
    /// less, and each header word the claim does not name counts a little against (so
    /// `anli_test` beats `anli_test_r3` for "ANLI test").
    pub(super) fn score(&self, header: &str, all: bool) -> f32 {
        self.scores(header, all).0
    }

    /// [`Self::score`], and the part of it the shared words alone give.
    pub(super) fn scores(&self, header: &str, all: bool) -> (f32, f32) {
        let mine = if all { &self.all } else { &self.figure };
        let theirs = words(header);
        let alone = theirs.len() == 1;
        let (mut total, mut shared) = (0.0, 0.0);
        for h in &theirs {
            let best = mine
                .iter()
                .map(|w| strength(h, w, alone))
                .fold(0.0f32, f32::max);
            total += if best > 0.0 { best } else { -0.25 };
            shared += best;
        }
        (total, shared)
    }
}

/// How strongly header word `h` names claim word `w`.
fn strength(h: &str, w: &str, alone: bool) -> f32 {
    if h == w || same_group(h, w, alone) {
        return 3.0;
    }
    let hc = h.chars().count();
    let wc = w.chars().count();
    let letters = |s: &str| s.chars().all(char::is_alphabetic);
    // `m` for matched: a single letter is the initial of a word only weakly.
    if hc == 1 {
        return if letters(h) && letters(w) && w.starts_with(h) && wc > 1 {
            0.5
        } else {
            0.0
        };
    }
    // `loc` for location, `boolqa` for BoolQ.
    if wc > hc && w.starts_with(h) && hc >= 2 && letters(h) {
        return 2.0;
    }
    if hc > wc && h.starts_with(w) && wc >= 4 {
        return 2.0;
    }
    // `mnli` for MultiNLI, `avg` for average: the header's letters in order, same initial.
    if hc >= 3 && wc > hc && letters(h) && letters(w) && subsequence(h, w) {
        return 1.0;
    }
    0.0
}

/// The language a lone ISO 639-1 code names (`de` → `german`), else the word itself.
fn language(word: &str) -> &str {
    LANGUAGE_CODES
        .iter()
        .find(|(code, _)| *code == word)
        .map_or(word, |(_, name)| *name)
}

fn same_group(h: &str, w: &str, alone: bool) -> bool {
    let h = if alone { language(h) } else { h };
    h == w
        || FACETS
            .iter()
            .flat_map(|f| f.groups.iter())
            .any(|g| g.contains(&h) && g.contains(&w))
}

fn subsequence(short: &str, long: &str) -> bool {
    let mut s = short.chars();
    let mut l = long.chars();
    if s.next() != l.next() {
        return false;
    }
    s.all(|c| l.by_ref().any(|d| d == c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_join_short_hyphenated_parts() {
        assert_eq!(
            words("ROUGE-1 after epoch 3"),
            ["rouge1", "after", "epoch", "3"]
        );
        assert_eq!(words("Rougel"), ["rougel"]);
        assert_eq!(words("ROUGE-L"), ["rougel"]);
        assert_eq!(words("Micro-Avg"), ["micro", "avg"]);
        assert_eq!(
            words("Median Time to First Token (ms)"),
            ["median", "ttft", "ms"]
        );
        assert_eq!(words("mnli_test_mm"), ["mnli", "test", "mm"]);
    }

    #[test]
    fn facets_contradict_only_when_the_claim_names_the_facet() {
        let c = Claimed::new_label(Some("NER model: recall on the evaluation set"));
        assert!(c.contradicts("F1").is_some());
        assert!(c.contradicts("Recall").is_none());
        assert!(c.contradicts("Epoch").is_none());
        let c = Claimed::new_label(Some(
            "DistilBERT (Intel INT8 static model card): FP32 accuracy",
        ));
        assert_eq!(c.contradicts("PyTorch INT8").unwrap().facet, "format");
        assert!(c.contradicts("FP32").is_none());
        let c = Claimed::new_label(Some("training loss at epoch 3"));
        assert_eq!(c.contradicts("Validation Loss").unwrap().facet, "split");
        let c = Claimed::new_label(Some("mDeBERTa: XNLI German accuracy"));
        assert_eq!(c.contradicts("bg").unwrap().facet, "language");
        assert!(c.contradicts("de").is_none());
        let c = Claimed::new_label(Some("decode throughput"));
        assert!(c.contradicts("Prefill (tok/s)").is_some());
        let c = Claimed::new_label(Some("median TTFT"));
        assert!(c.contradicts("Mean TTFT (ms)").is_some());
        assert!(c.contradicts("Median TTFT (ms)").is_none());
        assert!(Claimed::new_label(Some("m001"))
            .contradicts("Recall")
            .is_none());
    }

    #[test]
    fn the_column_sharing_most_words_scores_highest() {
        let c = Claimed::new_label(Some("NeMo Megatron-GPT 1.3B, zero-shot ARC-Easy accuracy"));
        let score = |h| c.score(h, false);
        assert!(score("ARC-Easy") > score("ARC-Challenge"));
        assert!(score("ARC-Challenge") > score("RACE-middle"));
        let c = Claimed::new_label(Some(
            "DeBERTa (mnli-fever-anli): ANLI test accuracy (all rounds)",
        ));
        assert!(c.score("anli_test", false) > c.score("anli_test_r3", false));
        let c = Claimed::new_label(Some("model: MultiNLI matched accuracy"));
        assert!(c.score("mnli_test_m", false) > c.score("mnli_test_mm", false));
        let c = Claimed::new_label(Some("NER: micro-average recall"));
        assert!(c.score("Micro-Avg", false) > c.score("LOC", false));
        assert!(c.score("Micro-Avg", false) > 0.0);
    }
}
