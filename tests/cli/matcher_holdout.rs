//! An independent, held-out corpus for the matcher (`tests/data/matcher_holdout/*.json`),
//! written without looking at the matcher or at `tests/data/matcher/`. Same schema and
//! same judgement as `matcher_corpus.rs` (`find_in_lines` over the cited lines, then
//! `nearest_line` over the document), but it only reports: a confusion matrix, the
//! accuracy, the near-miss pass rate and every case the matcher gets wrong. The only
//! assertion is that the corpus loads and is well-formed.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use pinaudit::matcher::{self, Expected, Match, MatchKind};
use serde::Deserialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Status {
    Verified,
    Rounded,
    Shifted,
    Missing,
}

const STATUSES: [Status; 4] = [
    Status::Verified,
    Status::Rounded,
    Status::Shifted,
    Status::Missing,
];

impl Status {
    fn name(self) -> &'static str {
        match self {
            Status::Verified => "verified",
            Status::Rounded => "rounded",
            Status::Shifted => "shifted",
            Status::Missing => "missing",
        }
    }

    fn carried(self) -> bool {
        matches!(self, Status::Verified | Status::Rounded)
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CorpusFile {
    #[serde(default)]
    documents: BTreeMap<String, Vec<String>>,
    cases: Vec<Case>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    #[serde(default)]
    doc: Option<String>,
    #[serde(default)]
    text: Option<Vec<String>>,
    lines: String,
    value: String,
    #[serde(default)]
    unit: Option<String>,
    #[serde(default)]
    correct: Option<u64>,
    #[serde(default)]
    total: Option<u64>,
    expect: Status,
    #[serde(default)]
    line: Option<usize>,
    why: String,
}

struct Outcome {
    name: String,
    lines: String,
    claim: String,
    expect: Status,
    want_line: Option<usize>,
    got: Status,
    got_line: Option<usize>,
    found: Option<Match>,
    why: String,
    cited_text: String,
    want_text: Option<String>,
    got_text: Option<String>,
}

impl Outcome {
    fn right(&self) -> bool {
        self.expect == self.got
            && (self.expect == Status::Missing || self.want_line == self.got_line)
    }
}

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/matcher_holdout")
}

fn parse_lines(spec: &str) -> Option<(usize, usize)> {
    let (a, b) = spec.split_once('-').unwrap_or((spec, spec));
    let (a, b) = (a.trim().parse().ok()?, b.trim().parse().ok()?);
    (a >= 1 && a <= b).then_some((a, b))
}

fn status_of(m: &Match) -> Status {
    if m.kind == MatchKind::Rounded || m.rounded {
        Status::Rounded
    } else {
        Status::Verified
    }
}

/// The verdict `check/claims.rs` would give (its cited range is inside the document).
fn judge(
    lines: &[&str],
    first: usize,
    last: usize,
    exp: &Expected,
) -> (Status, Option<usize>, Option<Match>) {
    let cited = lines[first - 1..last].iter().copied();
    if let Some((i, m)) = matcher::find_in_lines(cited, exp) {
        return (status_of(&m), Some(first + i), Some(m));
    }
    if let Some((i, m)) = matcher::nearest_line(lines, first - 1..last, exp) {
        return (Status::Shifted, Some(i + 1), Some(m));
    }
    (Status::Missing, None, None)
}

fn load() -> Vec<Outcome> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(corpus_dir())
        .expect("tests/data/matcher_holdout")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    let mut out = Vec::new();
    for path in files {
        let file_name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let text = std::fs::read_to_string(&path).expect("read corpus file");
        let corpus: CorpusFile =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        for (n, case) in corpus.cases.iter().enumerate() {
            let name = format!(
                "{file_name}#{n} ({})",
                case.doc.as_deref().unwrap_or("inline")
            );
            let doc: &[String] = match (&case.doc, &case.text) {
                (Some(d), None) => corpus
                    .documents
                    .get(d)
                    .unwrap_or_else(|| panic!("{name}: no document `{d}`")),
                (None, Some(t)) => t,
                _ => panic!("{name}: give exactly one of `doc` and `text`"),
            };
            let lines: Vec<&str> = doc.iter().map(String::as_str).collect();
            let (first, last) = parse_lines(&case.lines)
                .filter(|&(_, b)| b <= lines.len())
                .unwrap_or_else(|| panic!("{name}: bad cited lines `{}`", case.lines));
            assert_eq!(
                case.expect == Status::Missing,
                case.line.is_none(),
                "{name}: `line` is required unless the value is missing"
            );
            if let Some(l) = case.line {
                assert!(
                    l >= 1 && l <= lines.len(),
                    "{name}: line {l} out of the document"
                );
                assert_eq!(
                    case.expect.carried(),
                    (first..=last).contains(&l),
                    "{name}: a verified or rounded value is on a cited line, a shifted one is not"
                );
            }
            let exp = Expected {
                value: &case.value,
                unit: case.unit.as_deref(),
                correct: case.correct,
                total: case.total,
            };
            let (got, got_line, found) = judge(&lines, first, last, &exp);
            let mut claim = format!(
                "value {:?} unit {:?}",
                case.value,
                case.unit.as_deref().unwrap_or("-")
            );
            if let (Some(c), Some(t)) = (case.correct, case.total) {
                let _ = write!(claim, " correct/total {c}/{t}");
            }
            out.push(Outcome {
                name,
                lines: case.lines.clone(),
                claim,
                expect: case.expect,
                want_line: case.line,
                got,
                got_line,
                found,
                why: case.why.clone(),
                cited_text: lines[first - 1..last].join(" ⏎ "),
                want_text: case.line.map(|l| lines[l - 1].to_string()),
                got_text: got_line.map(|l| lines[l - 1].to_string()),
            });
        }
    }
    out
}

fn report(outcomes: &[Outcome]) -> String {
    let mut s = String::new();
    let count = |e: Status, g: Status| {
        outcomes
            .iter()
            .filter(|o| o.expect == e && o.got == g)
            .count()
    };
    let _ = writeln!(
        s,
        "expected \\ actual  verified   rounded   shifted   missing     total"
    );
    for e in STATUSES {
        let _ = write!(s, "{:<17}", e.name());
        for g in STATUSES {
            let _ = write!(s, " {:>9}", count(e, g));
        }
        let total = outcomes.iter().filter(|o| o.expect == e).count();
        let _ = writeln!(s, " {total:>9}");
    }
    let wrong_line = outcomes
        .iter()
        .filter(|o| o.expect == o.got && !o.right())
        .count();
    let _ = writeln!(s, "(right status, wrong line: {wrong_line})");
    let _ = writeln!(s, "\nstatus      precision   recall");
    for st in STATUSES {
        let tp = outcomes
            .iter()
            .filter(|o| o.expect == st && o.right())
            .count();
        let predicted = outcomes.iter().filter(|o| o.got == st).count();
        let actual = outcomes.iter().filter(|o| o.expect == st).count();
        let ratio = |a: usize, b: usize| if b == 0 { 1.0 } else { a as f64 / b as f64 };
        let _ = writeln!(
            s,
            "{:<10} {:>9.1}% {:>7.1}%",
            st.name(),
            100.0 * ratio(tp, predicted),
            100.0 * ratio(tp, actual)
        );
    }
    s
}

#[test]
fn holdout_report() {
    let outcomes = load();
    let total = outcomes.len();
    assert!(total > 0, "the held-out corpus is empty");
    let right = outcomes.iter().filter(|o| o.right()).count();
    let near_misses: Vec<&Outcome> = outcomes.iter().filter(|o| !o.expect.carried()).collect();
    let passed = near_misses.iter().filter(|o| o.got.carried()).count();

    println!("{}", report(&outcomes));
    println!(
        "{right}/{total} right ({:.2}%); near-misses {} ({:.1}% of cases), {passed} passed as carried ({:.2}%)",
        100.0 * right as f64 / total as f64,
        near_misses.len(),
        100.0 * near_misses.len() as f64 / total as f64,
        100.0 * passed as f64 / near_misses.len().max(1) as f64
    );
    let wrong: Vec<String> = outcomes
        .iter()
        .filter(|o| !o.right())
        .map(|o| {
            let mut w = format!(
                "{} lines {}: {}\n    want {} L{:?}, got {} L{:?} {:?} — {}\n    cited: {}",
                o.name,
                o.lines,
                o.claim,
                o.expect.name(),
                o.want_line,
                o.got.name(),
                o.got_line,
                o.found.as_ref().map(|m| (m.kind, m.text.as_str())),
                o.why,
                o.cited_text
            );
            if o.want_line != o.got_line {
                if let Some(t) = &o.want_text {
                    let _ = write!(w, "\n    want line: {t}");
                }
                if let Some(t) = &o.got_text {
                    let _ = write!(w, "\n    got line:  {t}");
                }
            }
            w
        })
        .collect();
    if !wrong.is_empty() {
        println!("wrong ({}):\n{}", wrong.len(), wrong.join("\n"));
    }
    // Issue 8's bar, on cases written without reading the matcher: at least
    // 98.5 % right, at most 1 % of near-misses passed as carried.
    assert!(
        right as f64 >= 0.985 * total as f64,
        "{right}/{total} right:\n{}",
        wrong.join("\n")
    );
    assert!(
        passed as f64 <= 0.01 * near_misses.len() as f64,
        "{passed} near-misses passed:\n{}",
        wrong.join("\n")
    );
}
