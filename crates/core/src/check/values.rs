//! `inconsistent-value`: a percentage must agree with its own `correct`/`total`.

use serde::Serialize;

use crate::finding::{evidence, Code, Finding, Shape};
use crate::record::{Claim, Record};

use super::location::claim_location;

/// Whether a unit means "percent": the matcher's rule, so that a claim matched as a
/// percentage is also checked as one.
pub(crate) fn is_percent(unit: Option<&str>) -> bool {
    unit.is_some_and(crate::matcher::is_percent_unit)
}

/// Figures consistent with their own counts.
pub(crate) struct Values;

impl super::Check for Values {
    fn evidence(&self) -> &'static [Shape] {
        const SHAPES: &[Shape] = &[Shape::of::<InconsistentValue<'static>>()];
        SHAPES
    }

    fn record(&self, record: &Record, out: &mut Vec<Finding>) {
        check(record, out);
    }
}

pub fn check(record: &Record, out: &mut Vec<Finding>) {
    let by_id = record.sources_by_id();
    for c in &record.claims {
        if let Some(f) = inconsistent(c) {
            let f = match c.source.as_deref().and_then(|id| by_id.get(id).copied()) {
                Some(s) => f.source(&s.id).at(claim_location(s, c)),
                None => f,
            };
            out.push(Finding {
                record: record.id.clone(),
                ..f
            });
        }
    }
}

evidence! {
    /// `inconsistent-value` evidence: the figure as written, its counts, and the
    /// percentage they give (none when they are no proportion).
    #[derive(Serialize)]
    pub(crate) struct InconsistentValue<'a> for(InconsistentValue) identity() {
        value: &'a str,
        correct: u64,
        total: u64,
        #[serde(skip_serializing_if = "Option::is_none")]
        expected: Option<String>,
    }
}

fn inconsistent(c: &Claim) -> Option<Finding> {
    let (value, correct, total) = (c.value.as_ref()?, c.correct?, c.total?);
    if !is_percent(c.unit.as_deref()) {
        return None;
    }
    let finding = |why: String, expected: Option<String>| {
        Finding::new(Code::InconsistentValue, "", why)
            .claim(&c.label)
            .evidence(InconsistentValue {
                value: value.text(),
                correct,
                total,
                expected,
            })
    };
    if total == 0 || correct > total {
        return Some(finding(
            format!(
                "figure `{}` counts {correct} correct of {total}, which is not a proportion",
                c.label
            ),
            None,
        ));
    }
    let exact = correct as f64 * 100.0 / total as f64;
    // The value is right if it is the exact percentage rounded to the digits written:
    // 66.7 for 2/3 passes, 66.0 does not; 98 and 98.0 both pass for 49/50.
    let half_step = 0.5 * 10f64.powi(-(value.decimals() as i32));
    if (value.value() - exact).abs() <= half_step + 1e-9 {
        return None;
    }
    let expected = format!("{exact:.*}", value.decimals() as usize);
    let why = format!(
        "figure `{}` says {}% but {correct}/{total} is {expected}%",
        c.label,
        value.text()
    );
    Some(finding(why, Some(expected)))
}
