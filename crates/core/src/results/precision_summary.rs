//! How precise a run's timings are, in a few true sentences: how many points reached the CI
//! target, and of those that did not, how many could change a comparison.
//!
//! A point that missed its CI target matters only where its interval leaves a comparison open:
//! when its 95% interval overlaps the interval of another point of its kernel (same sweep and
//! threads), more samples could reorder them; when it lies apart from every other point's (a
//! column walk 44× slower than its row walk, with a 17% interval), no finding depends on the
//! missing precision. A point with no other point of its kernel to compare with is counted as
//! open: its absolute figure is the finding.

#![forbid(unsafe_code)]

use std::collections::BTreeMap;

use crate::results::{PointRecord, PrecisionWarning, ResultsDocument};

/// A run's precision, counted.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PrecisionSummary {
    pub timed: usize,
    /// The CI width sampling aimed for (the first timed point's).
    pub target: Option<f64>,
    /// Points whose CI ended wider than the target.
    pub missed: usize,
    /// Of those, the ones whose interval leaves a comparison open (record indices).
    pub open: Vec<usize>,
    /// Points with far-out samples, and points whose samples drifted.
    pub outliers: Vec<usize>,
    pub drift: Vec<usize>,
}

/// A point's interval of time per element (the median's CI, scaled to its per-element time).
fn interval(record: &PointRecord) -> Option<(f64, f64)> {
    let t = record.timing.as_ref()?;
    let s = &t.ns_per_run;
    if s.median.is_nan() || s.median <= 0.0 {
        return None;
    }
    let scale = t.ns_per_element / s.median;
    Some((s.ci_low * scale, s.ci_high * scale))
}

fn has(record: &PointRecord, warning: PrecisionWarning) -> bool {
    record
        .timing
        .as_ref()
        .and_then(|t| t.precision.as_ref())
        .is_some_and(|p| p.warnings.contains(&warning))
}

impl PrecisionSummary {
    pub fn of(doc: &ResultsDocument) -> Self {
        let timed: Vec<&PointRecord> = doc
            .records
            .iter()
            .filter(|r| r.timing.is_some() && r.error.is_none())
            .collect();
        let mut groups: BTreeMap<(&str, Option<&str>, usize), Vec<&PointRecord>> = BTreeMap::new();
        for r in &timed {
            let sweep = r.sweep.as_ref().map(|s| s.level.as_str());
            groups
                .entry((r.kernel.as_str(), sweep, r.threads))
                .or_default()
                .push(r);
        }
        let open_comparison = |r: &PointRecord| {
            let key = (
                r.kernel.as_str(),
                r.sweep.as_ref().map(|s| s.level.as_str()),
                r.threads,
            );
            let Some((lo, hi)) = interval(r) else {
                return true;
            };
            let peers: Vec<&&PointRecord> = groups
                .get(&key)
                .map(|g| g.iter().filter(|p| p.index != r.index).collect())
                .unwrap_or_default();
            peers.is_empty()
                || peers
                    .iter()
                    .any(|p| interval(p).is_none_or(|(plo, phi)| plo <= hi && lo <= phi))
        };
        let missed: Vec<&PointRecord> = timed
            .iter()
            .copied()
            .filter(|r| has(r, PrecisionWarning::CiTargetMissed))
            .collect();
        let indices = |w: PrecisionWarning| -> Vec<usize> {
            timed
                .iter()
                .filter(|r| has(r, w))
                .map(|r| r.index)
                .collect()
        };
        Self {
            timed: timed.len(),
            target: timed
                .iter()
                .find_map(|r| Some(r.timing.as_ref()?.precision.as_ref()?.target_relative_ci)),
            missed: missed.len(),
            open: missed
                .iter()
                .filter(|r| open_comparison(r))
                .map(|r| r.index)
                .collect(),
            outliers: indices(PrecisionWarning::Outliers),
            drift: indices(PrecisionWarning::Drift),
        }
    }

    /// The summary in at most three sentences; `sample_longer` is the command that samples
    /// longer, as the reader can type it (`stridelab --sampling-budget 1`).
    pub fn sentences(&self, sample_longer: &str) -> Vec<String> {
        let mut out = Vec::new();
        if self.timed == 0 {
            return out;
        }
        let target = self
            .target
            .map(|t| format!("the {} CI target", percent(t)))
            .unwrap_or_else(|| "their CI target".into());
        let reached = self.timed - self.missed;
        if self.missed == 0 {
            out.push(if self.timed == 1 {
                format!("Precision: the timed point reached {target}.")
            } else {
                format!(
                    "Precision: all {} timed points reached {target}.",
                    self.timed
                )
            });
        } else {
            let open = self.open.len();
            let settled = self.missed - open;
            out.push(format!(
                "Precision: {reached} of {} timed points reached {target}. Of the {} that did \
                 not, {settled} cannot change a comparison (their 95% intervals lie apart from \
                 every other point of their kernel) and {open} could{}.",
                self.timed,
                self.missed,
                if open > 0 {
                    format!(
                        " (their intervals overlap another point's, or they stand alone): \
                         {sample_longer} samples each point longer"
                    )
                } else {
                    String::new()
                }
            ));
        }
        let (outliers, drift) = (self.outliers.len(), self.drift.len());
        if outliers + drift > 0 {
            out.push(format!(
                "{outliers} point{} had far-out samples and {drift} drifted while sampled: \
                 something else ran; re-run on a quiet system before trusting their intervals.",
                if outliers == 1 { "" } else { "s" }
            ));
        }
        out
    }
}

/// `2%`, `0.5%`, `2.5%`: a target as typed, without trailing zeros.
fn percent(fraction: f64) -> String {
    let text = format!("{:.2}", 100.0 * fraction);
    format!("{}%", text.trim_end_matches('0').trim_end_matches('.'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::schema::tests::sample_document;
    use crate::results::{Precision, PrecisionWarning};
    use crate::vocab::ParamValue;

    /// (median, CI low, CI high, missed its 2% target).
    type Point = (f64, f64, f64, bool);

    /// A run of one kernel whose points are these.
    fn run(points: &[Point]) -> ResultsDocument {
        let mut doc = sample_document();
        let template = doc.records[0].clone();
        doc.records = points
            .iter()
            .enumerate()
            .map(|(i, &(median, low, high, missed))| {
                let mut r = template.clone();
                r.index = i;
                r.params.insert("rows".into(), ParamValue::Int(i as u64));
                let t = r.timing.as_mut().unwrap();
                t.ns_per_element = median;
                t.ns_per_run.median = median;
                t.ns_per_run.ci_low = low;
                t.ns_per_run.ci_high = high;
                t.precision = Some(Precision {
                    target_relative_ci: 0.02,
                    outliers: None,
                    drift: None,
                    warnings: if missed {
                        vec![PrecisionWarning::CiTargetMissed]
                    } else {
                        Vec::new()
                    },
                });
                r
            })
            .collect();
        doc
    }

    #[test]
    fn a_missed_target_matters_only_where_intervals_overlap_or_a_point_stands_alone() {
        // (points, missed, open): a 44× ratio with a 17% interval settles its comparison; two
        // points whose intervals overlap leave theirs open; a lone point is its own finding.
        let cases: &[(&[Point], usize, &[usize])] = &[
            (
                &[(1.0, 0.99, 1.01, false), (44.0, 40.0, 47.5, true)],
                1,
                &[],
            ),
            (&[(1.0, 0.9, 1.1, true), (1.05, 1.0, 1.2, false)], 1, &[0]),
            (&[(1.0, 0.8, 1.2, true)], 1, &[0]),
            (
                &[(1.0, 0.99, 1.01, false), (2.0, 1.98, 2.02, false)],
                0,
                &[],
            ),
        ];
        for (points, missed, open) in cases {
            let s = PrecisionSummary::of(&run(points));
            assert_eq!(s.missed, *missed, "{points:?}");
            assert_eq!(s.open, *open, "{points:?}");
        }
    }

    #[test]
    fn the_sentences_name_the_counts_and_the_command_that_samples_longer() {
        let s = PrecisionSummary::of(&run(&[(1.0, 0.9, 1.1, true), (1.05, 1.0, 1.2, true)]));
        let text = s.sentences("`stridelab --sampling-budget 1`").join(" ");
        assert!(
            text.contains("0 of 2 timed points reached the 2% CI target"),
            "{text}"
        );
        assert!(text.contains("0 cannot change a comparison"), "{text}");
        assert!(text.contains("`stridelab --sampling-budget 1`"), "{text}");
        let calm = PrecisionSummary::of(&run(&[(1.0, 0.99, 1.01, false)]));
        let text = calm.sentences("x").join(" ");
        assert_eq!(text, "Precision: the timed point reached the 2% CI target.");
    }
}
