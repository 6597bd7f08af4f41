//! The comparison of two or more runs rendered side by side: every timed point of a run
//! matched to the point of the first run with the same kernel, parameters and threads, with
//! the time ratio phrased by its direction and whether it means anything — timings compare
//! only on one CPU model, and only where the confidence intervals are apart.
#![forbid(unsafe_code)]

use crate::results::{PointRecord, ResultsDocument};

use super::chart::format_number;
use super::claims::{Claim, SAME_SPEED, slower_or_faster};
use super::data::{self, Estimate};
use super::figures::{Table, point_label};

/// One matched point: the baseline's and the other run's timed estimates.
struct Matched<'a> {
    record: &'a PointRecord,
    base: Estimate,
    other: Estimate,
}

/// Whether a ratio between two runs says anything about the code or the machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Meaning {
    /// Same CPU model and the two confidence intervals do not overlap.
    Meaningful,
    /// Same CPU model, but the intervals overlap: within the noise.
    WithinNoise,
    /// Different CPU models: the ratio mixes the machines with the code.
    OtherCpu,
}

impl Meaning {
    fn words(self) -> &'static str {
        match self {
            Meaning::Meaningful => "yes: same CPU model, intervals apart",
            Meaning::WithinNoise => "no: the 95% intervals overlap (within the noise)",
            Meaning::OtherCpu => "no: different CPU models",
        }
    }
}

/// The CPU model a run recorded.
pub fn cpu_model(doc: &ResultsDocument) -> &str {
    doc.info
        .get("cpu_model")
        .and_then(|v| v.as_str())
        .unwrap_or("unknown CPU")
}

fn matched<'a>(base: &'a ResultsDocument, other: &'a ResultsDocument) -> Vec<Matched<'a>> {
    other
        .records
        .iter()
        .filter(|r| r.sweep.is_none())
        .filter_map(|r| {
            let twin = base.records.iter().find(|b| {
                b.sweep.is_none()
                    && b.kernel == r.kernel
                    && b.params == r.params
                    && b.threads == r.threads
            })?;
            Some(Matched {
                record: r,
                base: data::ns_per_element(twin)?,
                other: data::ns_per_element(r)?,
            })
        })
        .collect()
}

fn meaning(same_cpu: bool, a: &Estimate, b: &Estimate) -> Meaning {
    if !same_cpu {
        return Meaning::OtherCpu;
    }
    match (a.ci(), b.ci()) {
        (Some((alo, ahi)), Some((blo, bhi))) if bhi < alo || ahi < blo => Meaning::Meaningful,
        _ => Meaning::WithinNoise,
    }
}

/// The comparison of run `other` (labelled `other_label`) against the first run: a sentence
/// and the table of matched points; `None` when no point matches.
pub fn comparison(
    base: &ResultsDocument,
    base_label: &str,
    other: &ResultsDocument,
    other_label: &str,
) -> Option<(Claim, Table)> {
    let rows = matched(base, other);
    if rows.is_empty() {
        return None;
    }
    let same_cpu = cpu_model(base) == cpu_model(other);
    let meanings: Vec<Meaning> = rows
        .iter()
        .map(|m| meaning(same_cpu, &m.base, &m.other))
        .collect();
    let ratios: Vec<f64> = rows.iter().map(|m| m.other.value / m.base.value).collect();
    let slower = ratios.iter().filter(|r| **r >= SAME_SPEED).count();
    let faster = ratios.iter().filter(|r| **r <= 1.0 / SAME_SPEED).count();
    let apart = meanings
        .iter()
        .filter(|m| **m == Meaning::Meaningful)
        .count();
    let comparable = if same_cpu {
        format!(
            "Both runs are on {}: at {apart} of {} points the 95% intervals are apart, so those \
             ratios are more than noise.",
            cpu_model(base),
            rows.len()
        )
    } else {
        format!(
            "The runs are on different CPU models ({} and {}): timings compare only on one CPU \
             model, so these ratios mix the machines with the code and mean nothing about \
             either.",
            cpu_model(base),
            cpu_model(other)
        )
    };
    let claim = Claim::derived(
        "compare.summary",
        format!(
            "{other_label} against {base_label}: {} timed points match by kernel, parameters \
             and threads; {slower} are slower, {faster} faster and {} within {:.0}% (timed). \
             {comparable}",
            rows.len(),
            rows.len() - slower - faster,
            (SAME_SPEED - 1.0) * 100.0
        ),
    );
    let table = Table {
        caption: format!("{other_label} against {base_label}: ns per element, matched points"),
        headers: vec![
            "point".into(),
            "threads".into(),
            format!("{base_label} (timed, CI)"),
            format!("{other_label} (timed, CI)"),
            "second against first".into(),
            "meaningful?".into(),
        ],
        rows: rows
            .iter()
            .zip(&meanings)
            .map(|(m, meaning)| {
                vec![
                    point_label(m.record),
                    m.record.threads.to_string(),
                    m.base.display(),
                    m.other.display(),
                    format!(
                        "{} ({}×)",
                        slower_or_faster(m.other.value, m.base.value),
                        format_number(m.other.value / m.base.value)
                    ),
                    meaning.words().to_string(),
                ]
            })
            .collect(),
    };
    Some((claim, table))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn est(value: f64, low: f64, high: f64) -> Estimate {
        Estimate { value, low, high }
    }

    #[test]
    fn a_ratio_means_something_only_on_one_cpu_with_intervals_apart() {
        let a = est(1.0, 0.9, 1.1);
        let cases = [
            (true, est(2.0, 1.9, 2.1), Meaning::Meaningful),
            (true, est(1.05, 1.0, 1.2), Meaning::WithinNoise),
            (false, est(2.0, 1.9, 2.1), Meaning::OtherCpu),
            (true, est(2.0, f64::NAN, f64::NAN), Meaning::WithinNoise),
        ];
        for (same, b, want) in cases {
            assert_eq!(meaning(same, &a, &b), want, "{b:?}");
        }
    }
}
