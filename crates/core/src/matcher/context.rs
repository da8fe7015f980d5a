//! What the words around a number say about it: its unit and dimension, whether it is
//! part of a name rather than a value, and whether a setting keys it. The matcher asks
//! only about numbers that already fit a claim, so none of this runs on most tokens.
//! The rules are the module doc of [`super`] ("Units" and "Numbers that are names").

use super::{Scanned, SPACES};

/// What a unit measures. Two units contradict each other when both are known and their
/// dimensions differ; an unknown word says nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Dim {
    /// Per second, of a thing: `tok/s` (`"token"`), `req/s`, `it/s`.
    Rate(Noun),
    /// Bytes with a decimal or binary prefix (`GB` and `GiB` are both `b'G'`).
    Bytes(u8),
    /// `GB/s`, `Gbps`, …
    Bandwidth,
    /// Time, by unit: `"ns"`, `"us"`, `"ms"`, `"s"`, `"min"`, `"h"`.
    Time(&'static str),
    /// `x`, `×`, `times`.
    Multiplier,
    /// `%`, `percent`, `pct`.
    Percent,
    /// A count of a noun (singular): `tokens`, `requests`, `nodes`, `languages`.
    Count(Noun),
    /// Another physical quantity, by unit family: `"power"` (`W`, `kW`), `"energy"`
    /// (`J`, `Wh`), `"frequency"` (`Hz`, `GHz`), `"temperature"` (`°C`).
    Physical(&'static str),
    /// `K`, `M`, `B` glued to or after the number: thousands, millions, billions. The
    /// number is not in the claim's base unit, whatever the claim's unit is.
    Magnitude,
}

/// A noun, singular and lowercase, kept inline so that a [`Dim`] stays `Copy`
/// (longer nouns are cut: two nouns that agree on 15 bytes are the same noun).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) struct Noun {
    bytes: [u8; 15],
    len: u8,
}

impl Noun {
    pub(super) fn new(word: &str) -> Noun {
        let mut bytes = [0u8; 15];
        if word.is_ascii() {
            let len = word.len().min(bytes.len());
            for (b, w) in bytes.iter_mut().zip(word.bytes()) {
                *b = w.to_ascii_lowercase();
            }
            return Noun {
                bytes,
                len: len as u8,
            };
        }
        let mut len = 0;
        for c in word.chars().flat_map(char::to_lowercase) {
            let mut buf = [0u8; 4];
            let enc = c.encode_utf8(&mut buf).as_bytes();
            if len + enc.len() > bytes.len() {
                break;
            }
            bytes[len..len + enc.len()].copy_from_slice(enc);
            len += enc.len();
        }
        Noun {
            bytes,
            len: len as u8,
        }
    }

    pub(super) fn as_str(&self) -> &str {
        std::str::from_utf8(&self.bytes[..usize::from(self.len)]).unwrap_or("")
    }
}

impl std::fmt::Debug for Noun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", self.as_str())
    }
}

/// The kind of quantity a header, row label or key names by a word without a unit
/// (`Duration`, `TTFT`, `Throughput`, `num_gpu_blocks`): a header that names a time
/// contradicts a rate even when it gives no unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Time,
    Rate,
    Count,
    Bytes,
    Multiplier,
}

/// The kind of quantity `text`'s words name, when they name exactly one.
pub(super) fn quantity_kind(text: &str) -> Option<Kind> {
    let mut found = None;
    for w in key_parts(text) {
        let kind = match w.as_str() {
            "duration" | "elapsed" | "latency" | "ttft" | "tpot" | "itl" | "e2e" | "wall" => {
                Kind::Time
            }
            "throughput" | "speed" | "tps" => Kind::Rate,
            "num" | "number" | "count" => Kind::Count,
            "memory" | "vram" | "ram" => Kind::Bytes,
            "speedup" => Kind::Multiplier,
            _ => continue,
        };
        match found {
            None => found = Some(kind),
            Some(k) if k == kind => {}
            Some(_) => return None,
        }
    }
    found
}

/// The kind of quantity a dimension measures, for [`quantity_kind`].
pub(super) fn dim_kind(dim: Dim) -> Option<Kind> {
    match dim {
        Dim::Time(_) => Some(Kind::Time),
        Dim::Rate(_) | Dim::Bandwidth => Some(Kind::Rate),
        Dim::Count(_) => Some(Kind::Count),
        Dim::Bytes(_) => Some(Kind::Bytes),
        Dim::Multiplier => Some(Kind::Multiplier),
        _ => None,
    }
}

/// `4x NVIDIA H100`, `8× A100 GPUs`: a multiplier glued to a number and followed by a
/// thing (a capitalised name or a plural noun), not by a comparison (`4x faster`).
pub(super) fn times_a_thing(line: &str, end: usize) -> bool {
    let rest = line[end..].trim_start_matches(['x', 'X', '×']);
    let Some(next) = rest.strip_prefix(' ') else {
        return false;
    };
    let word: String = next.chars().take_while(|c| c.is_alphanumeric()).collect();
    let thing = word.chars().next().is_some_and(char::is_uppercase)
        || plural_noun(&word).is_some()
        || matches!(word_dim(&word), Some(Dim::Count(_)));
    const COMPARISONS: [&str; 12] = [
        "faster", "slower", "more", "less", "fewer", "better", "worse", "higher", "lower",
        "larger", "smaller", "speedup",
    ];
    thing && !COMPARISONS.contains(&word.to_lowercase().as_str())
}

/// Whether a token's dimension can carry a claim's.
pub(super) fn compatible(claim: Option<Dim>, token: Option<Dim>) -> bool {
    match (claim, token) {
        (Some(c), Some(t)) => c == t,
        _ => true,
    }
}

/// The dimension of a claim's unit (`"tokens/s"`, `"GB (source label; …)"`, `"%"`).
pub(super) fn claim_dim(unit: Option<&str>) -> Option<Dim> {
    let unit = unit?.trim();
    if super::is_percent_unit(unit) {
        return Some(Dim::Percent);
    }
    if let Some(dim) = word_dim(unit) {
        return Some(dim);
    }
    let (word, rest) = read_word(unit);
    phrase_dim(word, rest).or_else(|| plural_noun(word))
}

/// Words ending in `s` that are no plural noun.
const NOT_PLURALS: [&str; 24] = [
    "this",
    "thus",
    "plus",
    "less",
    "unless",
    "across",
    "always",
    "perhaps",
    "versus",
    "does",
    "goes",
    "was",
    "has",
    "its",
    "his",
    "hers",
    "yours",
    "ours",
    "theirs",
    "whereas",
    "besides",
    "sometimes",
    "various",
    "previous",
];

/// A lowercase word that reads as a plural noun (`languages`, `runs`): what the number
/// before it counts. Known units and count nouns are [`word_dim`]'s.
pub(super) fn plural_noun(word: &str) -> Option<Dim> {
    let plural = word.len() >= 4
        && word.bytes().all(|b| b.is_ascii_lowercase())
        && word.ends_with('s')
        && !word.ends_with("ss")
        && !word.ends_with("us")
        && !word.ends_with("is")
        && !NOT_PLURALS.contains(&word);
    plural.then(|| Dim::Count(Noun::new(&word[..word.len() - 1])))
}

/// The unit written with the number that ends at `end`: `%`, glued letters (`120GB`,
/// `2.9t/s`, `8K`), `×`, a hyphenated noun (`1,048,576-token`), or the next word
/// (`80 tok/s`, `3 nodes`, `7.5K tok/s`).
pub(super) fn unit_after(line: &str, end: usize) -> Option<Dim> {
    unit_after_with(line, end, true)
}

/// [`unit_after`], reading only known units and count nouns when `plurals` is false
/// (`Python 3.12 wheels`: `wheels` counts nothing a version rule should mind).
fn unit_after_with(line: &str, end: usize, plurals: bool) -> Option<Dim> {
    let plural_noun = |w: &str| if plurals { plural_noun(w) } else { None };
    // `**256** experts`: emphasis closing after the number hides nothing.
    let after = line.get(end..)?.trim_start_matches(['*', '_', '`']);
    let spaced = after.trim_start_matches(SPACES);
    if spaced.starts_with(['%', '％']) {
        return Some(Dim::Percent);
    }
    if after.starts_with('×') {
        return Some(Dim::Multiplier);
    }
    if let Some(shared) = coordinated_unit(after, plurals) {
        return Some(shared);
    }
    let word_start = if after.starts_with(char::is_alphabetic) {
        after
    } else if let Some(rest) = after.strip_prefix('-') {
        // `1,048,576-token context`, `3-node cluster`: a compound adjective.
        if !rest.starts_with(char::is_alphabetic) {
            return None;
        }
        rest
    } else if spaced.len() < after.len() {
        if spaced.starts_with('×') {
            // `2 × 8`: a product, not a multiplier.
            return None;
        }
        spaced
    } else {
        return None;
    };
    let (word, rest) = read_word(word_start);
    if word.is_empty() {
        return None;
    }
    let compound = word_start.len() < after.len() && after.starts_with('-');
    if compound && plurals && word.chars().all(|c| c.is_ascii_alphabetic()) {
        // `5-shot`, `3-node`, `32-Core`: a count of the noun, known or not.
        return phrase_dim(word, rest).or(Some(Dim::Count(Noun::new(word))));
    }
    phrase_dim(word, rest)
        .or_else(|| plural_noun(word))
        .or_else(|| {
            // One lowercase adjective may stand between the number and its noun:
            // `32 concurrent requests`, `8192 output tokens`.
            let next = rest.strip_prefix(' ')?;
            if !word.chars().all(|c| c.is_ascii_lowercase()) {
                return None;
            }
            let (noun, rest) = read_word(next);
            phrase_dim(noun, rest)
                .or_else(|| plural_noun(noun))
                .filter(|d| matches!(d, Dim::Count(_) | Dim::Rate(_)))
        })
}

/// `fewest KV heads (2)`, `layers (28)`: a number alone in brackets right after a
/// plural noun counts it.
pub(super) fn counted_before(line: &str, start: usize, end: usize) -> Option<Dim> {
    if !line.get(end..)?.starts_with(')') {
        return None;
    }
    let before = line
        .get(..start)?
        .strip_suffix('(')?
        .trim_end_matches(SPACES);
    let word = before
        .rsplit(|c: char| !c.is_alphabetic())
        .next()
        .unwrap_or("");
    plural_noun(word).filter(|d| matches!(d, Dim::Count(_)))
}

/// `8 and 70B`, `2 or 4 GPUs`, `16, 32 and 64 GB`: numbers joined by `and`, `or`,
/// `&` or a comma share the unit written after the last of them.
fn coordinated_unit(after: &str, plurals: bool) -> Option<Dim> {
    let quotes = |c: char| SPACES.contains(&c) || c == '`';
    let rest = after.trim_start_matches(quotes);
    let (listed, rest) = if let Some(r) = rest.strip_prefix(',') {
        let r = r.trim_start_matches(quotes);
        // `1, 2, and 3 GB`
        let r = r
            .strip_prefix("and ")
            .or(r.strip_prefix("or "))
            .unwrap_or(r);
        (true, r.trim_start_matches(quotes))
    } else {
        let (word, r) = rest.split_once(' ')?;
        if !matches!(word, "and" | "or" | "&") {
            return None;
        }
        (false, r.trim_start_matches(quotes))
    };
    let digits = rest
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(rest.len());
    if digits == 0 || rest[..digits].ends_with('.') {
        return None;
    }
    let dim = unit_after_with(rest, digits, plurals)?;
    // Only a unit, not a count of a noun that may count the first number too (`8
    // and 16 GPUs`); a list (`` `1`, `6144`, and `129024` tokens ``) shares its noun.
    (!matches!(dim, Dim::Count(_)) || listed || rest[digits..].starts_with(char::is_alphabetic))
        .then_some(dim)
}

/// A word and what follows it: letters (and `µ`), plus one `/letters` (`tok/s`, `GB/s`).
pub(super) fn read_word(text: &str) -> (&str, &str) {
    let is_letter = |c: char| c.is_alphabetic() || c == 'µ';
    let mut end = text.find(|c: char| !is_letter(c)).unwrap_or(text.len());
    if let Some(rest) = text[end..].strip_prefix('/') {
        let more = rest.find(|c: char| !is_letter(c)).unwrap_or(rest.len());
        if more > 0 {
            end += 1 + more;
        }
    }
    (&text[..end], &text[end..])
}

/// A unit word, with the words after it for `tokens per second`.
fn phrase_dim(word: &str, rest: &str) -> Option<Dim> {
    let dim = word_dim(word)?;
    if let Dim::Count(noun) = dim {
        let rest = rest.trim_start_matches(SPACES);
        let per_second = ["per second", "per sec", "per s ", "/ s", "/s"]
            .iter()
            .any(|p| {
                rest.get(..p.len())
                    .is_some_and(|r| r.eq_ignore_ascii_case(p))
            })
            || rest.eq_ignore_ascii_case("per s");
        if per_second {
            return Some(Dim::Rate(noun));
        }
    }
    Some(dim)
}

/// Count nouns, singular; a trailing `s` is dropped before the lookup.
const NOUNS: [&str; 22] = [
    "token",
    "tok",
    "request",
    "req",
    "node",
    "gpu",
    "problem",
    "question",
    "sample",
    "prompt",
    "step",
    "sequence",
    "seq",
    "shard",
    "item",
    "task",
    "user",
    "worker",
    "stream",
    "epoch",
    "layer",
    "parameter",
];

pub(super) fn word_dim(word: &str) -> Option<Dim> {
    // Case matters for a few single letters: `M` is millions, `m` minutes.
    match word {
        "M" | "B" | "b" | "k" | "K" | "bn" | "T" => return Some(Dim::Magnitude),
        // `6.7G` of memory
        "G" => return Some(Dim::Bytes(b'G')),
        "m" => return Some(Dim::Time("min")),
        "s" => return Some(Dim::Time("s")),
        "h" => return Some(Dim::Time("h")),
        "x" | "X" | "×" => return Some(Dim::Multiplier),
        "W" => return Some(Dim::Physical("power")),
        "V" => return Some(Dim::Physical("voltage")),
        "J" => return Some(Dim::Physical("energy")),
        // One letter is a unit only in its own case: `1S` or `7443P` is a model number.
        w if w.chars().count() == 1 && w.chars().all(char::is_alphabetic) => return None,
        _ => {}
    }
    if word.len() > 24 {
        return None;
    }
    let lower = word.to_lowercase();
    let dim = match lower.as_str() {
        "%" | "percent" | "pct" => Dim::Percent,
        // `47 passed, 3 failed`: a tally of tests.
        "passed" | "failed" | "skipped" | "xfailed" | "xpassed" | "deselected" => {
            Dim::Count(Noun::new("test"))
        }
        "x" | "×" | "times" => Dim::Multiplier,
        // `TG/s`, `PP/s`: llama.cpp's token generation and prompt processing.
        "t/s" | "tok/s" | "toks/s" | "tokens/s" | "token/s" | "tokens/sec" | "tok/sec" | "tk/s"
        | "tg/s" | "pp/s" | "tps" | "tokens/second" => Dim::Rate(Noun::new("token")),
        "req/s" | "reqs/s" | "requests/s" | "request/s" | "rps" | "qps" => {
            Dim::Rate(Noun::new("request"))
        }
        "it/s" => Dim::Rate(Noun::new("it")),
        "samples/s" | "sample/s" => Dim::Rate(Noun::new("sample")),
        "ns" => Dim::Time("ns"),
        "us" | "µs" | "μs" => Dim::Time("us"),
        "ms" | "msec" | "millisecond" | "milliseconds" => Dim::Time("ms"),
        "s" | "sec" | "secs" | "second" | "seconds" => Dim::Time("s"),
        "min" | "mins" | "minute" | "minutes" => Dim::Time("min"),
        "h" | "hr" | "hrs" | "hour" | "hours" => Dim::Time("h"),
        "day" | "days" => Dim::Time("day"),
        "week" | "weeks" => Dim::Time("week"),
        "fps" => Dim::Rate(Noun::new("frame")),
        "flops" | "tflops" | "gflops" | "pflops" | "tops" => Dim::Physical("compute"),
        "v" | "volt" | "volts" => Dim::Physical("voltage"),
        "speedup" => Dim::Multiplier,
        "byte" | "bytes" => Dim::Bytes(b'B'),
        "kb" | "kib" => Dim::Bytes(b'K'),
        "mb" | "mib" => Dim::Bytes(b'M'),
        "gb" | "gib" => Dim::Bytes(b'G'),
        "tb" | "tib" => Dim::Bytes(b'T'),
        "gb/s" | "gib/s" | "mb/s" | "mib/s" | "tb/s" | "kb/s" | "gbps" | "mbps" | "gbit/s" => {
            Dim::Bandwidth
        }
        "w" | "kw" | "mw" | "watt" | "watts" | "kilowatt" | "kilowatts" => Dim::Physical("power"),
        "j" | "kj" | "wh" | "kwh" | "joule" | "joules" => Dim::Physical("energy"),
        "hz" | "khz" | "mhz" | "ghz" => Dim::Physical("frequency"),
        "°c" | "°f" | "c°" | "celsius" => Dim::Physical("temperature"),
        other => {
            let singular = other.strip_suffix('s').unwrap_or(other);
            let noun = NOUNS.iter().find(|n| **n == singular || **n == other)?;
            Dim::Count(Noun::new(match *noun {
                "tok" => "token",
                "req" => "request",
                "seq" => "sequence",
                n => n,
            }))
        }
    };
    Some(dim)
}

/// Months as written before a day or a year (`Aug 7`, `August 10–16, 2026`, `Sept. 3`).
const MONTHS: [&str; 24] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
    "Jan",
    "Feb",
    "Mar",
    "Apr",
    "Jun",
    "Jul",
    "Aug",
    "Sep",
    "Sept",
    "Oct",
    "Nov",
    "Dec",
];

/// Words that make the number after them a version (`CUDA 13.0`, `vLLM 0.21`).
const VERSIONED: [&str; 64] = [
    "v",
    "ver",
    "version",
    "release",
    "cuda",
    "cudnn",
    "nccl",
    "driver",
    "capability",
    "vllm",
    "sglang",
    "python",
    "pytorch",
    "torch",
    "transformers",
    "triton",
    "tensorrt",
    "tensorrt-llm",
    "trt-llm",
    "rocm",
    "jax",
    "jaxlib",
    "ubuntu",
    "debian",
    "flashinfer",
    "xformers",
    "deepspeed",
    "lmdeploy",
    "tgi",
    "ollama",
    "llama.cpp",
    "nvcc",
    "gcc",
    "clang",
    "rustc",
    "numpy",
    "tensorflow",
    "onnxruntime",
    "accelerate",
    "peft",
    "trl",
    "exllamav2",
    "lm-eval",
    "lm_eval",
    "harness",
    "py",
    "rev",
    "revision",
    "go",
    "rust",
    "java",
    "jdk",
    "node.js",
    "nodejs",
    "kernel",
    "linux",
    "macos",
    "llvm",
    "glibc",
    "openssl",
    "docker",
    "cmake",
    "firmware",
    "bios",
];

/// Words that make a clause a setting, not a score (`temperature=0.2`, `util 0.90`).
/// A word also matches as the last part of a compound (`gpu_memory_utilization`).
const SETTINGS: [&str; 40] = [
    "temperature",
    "temp",
    "top_p",
    "top_k",
    "min_p",
    "typical_p",
    "lr",
    "learning",
    "learning_rate",
    "util",
    "utilization",
    "mem_fraction_static",
    "dropout",
    "decay",
    "momentum",
    "beta",
    "beta1",
    "beta2",
    "eps",
    "epsilon",
    "alpha",
    "gamma",
    "penalty",
    "threshold",
    "warmup",
    "warmup_ratio",
    "smoothing",
    "tau",
    "cfg",
    "guidance",
    "clip",
    "damping",
    "sparsity",
    "keep_prob",
    "batch_size",
    "override",
    "num_fewshot",
    "num_beams",
    "max_new_tokens",
    "max_length",
];

/// Keys whose number names something rather than measuring it.
const IDENTIFIERS: [&str; 8] = ["port", "pid", "seed", "uid", "gid", "id", "rank", "device"];

/// The identifier kind a key's last word names (`seed`, `MASTER_PORT`, `device_id`).
pub(super) fn identifier_key(key: &str) -> Option<&'static str> {
    let w = key_words(key).last()?;
    IDENTIFIERS
        .iter()
        .find(|k| w == **k || w.strip_suffix(*k).is_some_and(|head| head.ends_with('_')))
        .copied()
}

/// A key whose words name a setting (`temperature`, `top_p`, `warmup_ratio`).
pub(super) fn setting_key(key: &str) -> bool {
    key_words(key).any(|w| {
        SETTINGS
            .iter()
            .any(|s| w == *s || w.strip_suffix(s).is_some_and(|head| head.ends_with('_')))
    })
}

/// Characters that end a clause: a setting's key never reaches past them.
const CLAUSE_ENDS: [char; 10] = [',', ';', '|', '(', ')', '{', '}', '[', ']', '\n'];

/// The words between the previous token (or the start of the line) and token `i`,
/// after the last clause boundary: what the number is keyed by.
fn key_of<'l>(line: &'l str, scanned: &[Scanned], i: usize) -> &'l str {
    let from = i
        .checked_sub(1)
        .and_then(|p| scanned.get(p))
        .map_or(0, |p| p.token.span.end);
    let to = scanned
        .get(i)
        .map_or(from, |t| t.token.span.start.max(from));
    let gap = line.get(from..to).unwrap_or("");
    gap.rfind(CLAUSE_ENDS).map_or(gap, |k| &gap[k + 1..])
}

/// Lowercase words of a key, `-` read as `_` and edges trimmed (`--top-p` → `top_p`).
pub(super) fn key_words(key: &str) -> impl Iterator<Item = String> + '_ {
    key.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-'))
        .map(|w| w.trim_matches(['-', '_']).to_lowercase().replace('-', "_"))
        .filter(|w| !w.is_empty())
}

/// The words of a key split at underscores too (`MASTER_PORT` → `master`, `port`).
pub(super) fn key_parts(key: &str) -> impl Iterator<Item = String> + '_ {
    key_words(key).flat_map(|w| w.split('_').map(str::to_string).collect::<Vec<_>>())
}

/// Token `i` sits in a clause keyed by a setting.
pub(super) fn setting_keyed(line: &str, scanned: &[Scanned], i: usize) -> bool {
    key_words(key_of(line, scanned, i)).any(|w| {
        SETTINGS
            .iter()
            .any(|s| w == *s || w.strip_suffix(s).is_some_and(|head| head.ends_with('_')))
    })
}

/// The run of name characters (`Llama-3.3`, `gsm8k`) that ends at `text`'s end.
fn trailing_name(text: &str) -> &str {
    let start = text
        .char_indices()
        .rev()
        .take_while(|&(_, c)| c.is_alphanumeric() || matches!(c, '.' | '_' | '-'))
        .last()
        .map_or(text.len(), |(k, _)| k);
    &text[start..]
}

fn is_integer(t: &Scanned) -> bool {
    !t.point && t.token.decimals == 0 && !t.token.text.contains('e')
}

/// Why a number is part of a name rather than a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum NameKind {
    /// `#21`
    Issue,
    /// `port=8000`, `seed: 42`: an identifier of the kind its key names.
    Keyed(&'static str),
    /// `HumanEval/40`
    Path,
    /// `4. ` opening a line
    ListMarker,
    /// `[47/50]`
    Progress,
    /// `Aug 7`, `August 10–16, 2026`
    Date,
    /// `CUDA 13.0`, `py: 3.10`
    Version,
    /// `Qwen2.5-7B`, `Nemotron-3.5-Super`
    Hyphenated,
}

impl NameKind {
    pub(super) fn describe(self) -> &'static str {
        match self {
            NameKind::Issue => "an issue or item number",
            NameKind::Keyed(_) => "an identifier",
            NameKind::Path => "part of a path",
            NameKind::ListMarker => "a list marker",
            NameKind::Progress => "a progress counter",
            NameKind::Date => "part of a date",
            NameKind::Version => "a version",
            NameKind::Hyphenated => "part of a hyphenated name",
        }
    }
}

/// What kind of name token `i` is part of, if it is one.
pub(super) fn name_kind(line: &str, scanned: &[Scanned], i: usize) -> Option<NameKind> {
    let t = scanned.get(i)?;
    let digits = t.digits_start;
    let (start, end) = (t.token.span.start, t.token.span.end);
    let before_digits = &line[..digits];
    if before_digits.ends_with('#') {
        return Some(NameKind::Issue);
    }
    if let Some(w) = key_words(key_of(line, scanned, i)).last() {
        if let Some(kind) = IDENTIFIERS
            .iter()
            .find(|k| w == **k || w.strip_suffix(*k).is_some_and(|head| head.ends_with('_')))
        {
            return Some(NameKind::Keyed(kind));
        }
    }
    if let Some(head) = before_digits.strip_suffix('/') {
        if head.ends_with(|c: char| c.is_alphabetic() || c == '_') {
            return Some(NameKind::Path);
        }
    }
    let after = &line[end..];
    if is_integer(t)
        && line[..start].trim_start().is_empty()
        && (after == "." || after.starts_with(". ") || after.starts_with(") "))
    {
        return Some(NameKind::ListMarker);
    }
    if is_progress(line, scanned, i) {
        return Some(NameKind::Progress);
    }
    if is_date_part(line, scanned, i, 3) {
        return Some(NameKind::Date);
    }
    if is_version(line, scanned, i, 2) {
        return Some(NameKind::Version);
    }
    hyphenated_name(line, t).then_some(NameKind::Hyphenated)
}

/// Words that name what was measured: the nearest of these or of [`SETTINGS`]
/// before a number tells a score from a setting in one sentence
/// (`temperature … (0.6 is recommended)` vs `temperature=0.2 … accuracy was 0.953`).
pub(super) const METRICS: [&str; 40] = [
    "accuracy",
    "acc",
    "score",
    "scores",
    "scored",
    "exact",
    "match",
    "em",
    "f1",
    "pass",
    "passed",
    "correct",
    "throughput",
    "latency",
    "ttft",
    "tpot",
    "itl",
    "speed",
    "tps",
    "time",
    "duration",
    "elapsed",
    "mean",
    "median",
    "avg",
    "average",
    "rate",
    "loss",
    "perplexity",
    "ppl",
    "bleu",
    "rouge",
    "memory",
    "usage",
    "total",
    "result",
    "results",
    "value",
    "was",
    "reached",
];

/// The nearest setting or metric word before token `i` in its sentence is a setting.
pub(super) fn setting_in_sentence(line: &str, scanned: &[Scanned], i: usize) -> bool {
    let Some(t) = scanned.get(i) else {
        return false;
    };
    let before = &line[..t.token.span.start];
    let sentence_start = before
        .rfind(['|', ';', '\n'])
        .into_iter()
        .chain(before.rfind(". "))
        .max()
        .map_or(0, |k| k + 1);
    let words = key_words(&before[sentence_start..]).collect::<Vec<_>>();
    for w in words.iter().rev() {
        let setting = SETTINGS
            .iter()
            .any(|s| w == *s || w.strip_suffix(s).is_some_and(|head| head.ends_with('_')));
        if setting {
            return true;
        }
        if METRICS.contains(&w.as_str()) {
            return false;
        }
    }
    false
}

/// `[47/50]`: both numbers of a bracketed counter.
fn is_progress(line: &str, scanned: &[Scanned], i: usize) -> bool {
    let pair = |a: usize| -> bool {
        let (Some(x), Some(y)) = (scanned.get(a), scanned.get(a + 1)) else {
            return false;
        };
        line[..x.token.span.start]
            .trim_end_matches(SPACES)
            .ends_with('[')
            && &line[x.token.span.end..y.token.span.start] == "/"
            && line[y.token.span.end..]
                .trim_start_matches(SPACES)
                .starts_with(']')
    };
    pair(i) || i.checked_sub(1).is_some_and(pair)
}

/// A day or year after a month name, or joined to one (`August 10–16, 2026`).
fn is_date_part(line: &str, scanned: &[Scanned], i: usize, depth: u8) -> bool {
    let Some(t) = scanned.get(i) else {
        return false;
    };
    if !is_integer(t) || t.token.text.starts_with('-') {
        return false;
    }
    let digits = t.token.text.len();
    let before = &line[..t.token.span.start];
    let head = before.trim_end_matches(SPACES);
    if head.len() < before.len() {
        let word = head.strip_suffix('.').unwrap_or(head);
        let name = trailing_name(word);
        if MONTHS.contains(&name) && (digits <= 2 || digits == 4) {
            return true;
        }
    }
    let Some(p) = i.checked_sub(1) else {
        return false;
    };
    if depth == 0 {
        return false;
    }
    let Some(prev) = scanned.get(p) else {
        return false;
    };
    let gap = &line[prev.token.span.end..t.token.span.start];
    let joined = match gap {
        "–" | "—" | "-" | "‒" => digits <= 2,
        ", " | "," => digits == 4,
        _ => false,
    };
    joined && is_date_part(line, scanned, p, depth - 1)
}

/// A number right after a software name (`CUDA 13.0`, `vllm==0.6`), or after an arrow
/// from one (`0.21 → 0.22`); never one written with a unit (`vLLM 2.9 tok/s`).
fn is_version(line: &str, scanned: &[Scanned], i: usize, depth: u8) -> bool {
    let Some(t) = scanned.get(i) else {
        return false;
    };
    if t.token.percent || unit_after_with(line, t.token.span.end, false).is_some() {
        return false;
    }
    let before = &line[..t.token.span.start];
    let head = before
        .trim_end_matches(|c: char| SPACES.contains(&c) || matches!(c, '=' | ':' | '>' | '<'));
    let name = trailing_name(head).trim_start_matches(['-', '_', '.']);
    if !name.is_empty() && name.len() <= 16 {
        let lower = name.to_lowercase();
        if VERSIONED.contains(&lower.as_str()) {
            return true;
        }
    }
    if depth == 0 {
        return false;
    }
    let Some(p) = i.checked_sub(1) else {
        return false;
    };
    let Some(prev) = scanned.get(p) else {
        return false;
    };
    let gap = line[prev.token.span.end..t.token.span.start].trim_matches(SPACES);
    matches!(gap, "→" | "->" | "=>" | "⇒") && is_version(line, scanned, p, depth - 1)
}

/// A number inside a hyphenated name: `Qwen3.8-27B-NVFP4`, `Nemotron-3.5-Super`,
/// `Qwen2.5-7B`, `model-7b-chat`; not `llama-3`, `1,048,576-token`, `2.8-2.9`, `3-node`.
fn hyphenated_name(line: &str, t: &Scanned) -> bool {
    let (start, end) = (t.token.span.start, t.token.span.end);
    let after = &line[end..];
    let glued = after
        .find(|c: char| !c.is_alphabetic())
        .unwrap_or(after.len());
    let then = &after[glued..];
    let hyphen_word = |s: &str, letter_only: bool| {
        s.strip_prefix('-').is_some_and(|r| {
            r.starts_with(|c: char| {
                if letter_only {
                    c.is_alphabetic()
                } else {
                    c.is_alphanumeric()
                }
            })
        })
    };
    if glued > 0 && hyphen_word(then, true) {
        return true;
    }
    let before = &line[..start];
    let Some(head) = before.strip_suffix('-') else {
        return false;
    };
    if !head.ends_with(char::is_alphanumeric) {
        return false;
    }
    let lettered = trailing_name(head).contains(|c: char| c.is_alphabetic());
    lettered && (glued > 0 || hyphen_word(then, false))
}
