//! What a point is judged on across runs (rule 2 of `results::history`): its time against the
//! copy or read of the same bytes timed interleaved with it, where it has one; else its time
//! per element divided by its run's speed, which the run's reference copies and reads give.
//!
//! A run's speed: every point with an interleaved reference timed that copy or read of its own
//! bytes; each such reference time, against its mean over the runs compared, says how fast the
//! machine was in that run. The median of those deviations is the run's speed (ln units), so a
//! machine 5% faster in one run does not call every probe and chase of it faster. When any run
//! compared has no reference to measure its speed by, no run is adjusted and points without a
//! reference are judged on their raw time per element.

use std::collections::BTreeMap;

use crate::results::compare::point_key;
use crate::results::{ChecksumOutcome, PointRecord, ResultsDocument};
use crate::stats::median_of_sorted;

/// What a point's cross-run figure is.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Basis {
    /// The point's time ÷ the time of the named reference (`copy` or `read`) over the same bytes,
    /// both timed interleaved in the same run.
    Reference(String),
    /// The point's time per element ÷ its run's speed.
    RunSpeed,
    /// The point's own median time per element.
    OwnTime,
}

impl Basis {
    /// `time ÷ copy`, `time/elem`: the column a table shows.
    pub fn label(&self) -> String {
        match self {
            Basis::Reference(name) => format!("time ÷ {name}"),
            Basis::RunSpeed => "time/elem ÷ run speed".to_string(),
            Basis::OwnTime => "time/elem".to_string(),
        }
    }
}

/// A point's figure in one run.
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    pub basis: Basis,
    /// What is judged: a time ratio, or ns per element (÷ the run's speed for [`Basis::RunSpeed`]).
    pub value: f64,
    /// What a reader sees: the time ratio, or ns per element as timed.
    pub shown: f64,
}

/// The figure of `record` before any run-speed adjustment; `None` for a point without a
/// trustworthy timing (failed, wrong checksum, not timed).
pub fn figure(record: &PointRecord) -> Option<Figure> {
    if record.checksum.status != ChecksumOutcome::Ok || record.error.is_some() {
        return None;
    }
    let timing = record.timing.as_ref()?;
    let by_reference = record.reference.as_ref().and_then(|r| {
        // ratio = the point's GB/s ÷ the reference's, so time ÷ reference time = 1 / ratio.
        let value = 1.0 / r.ratio;
        (value.is_finite() && value > 0.0).then(|| Figure {
            basis: Basis::Reference(r.reference.clone()),
            value,
            shown: value,
        })
    });
    by_reference.or_else(|| {
        let value = timing.ns_per_element;
        (value.is_finite() && value > 0.0).then_some(Figure {
            basis: Basis::OwnTime,
            value,
            shown: value,
        })
    })
}

/// The figures of a run's points by key; `speed` (ln units, from [`run_speeds`]) divides the
/// points without a reference.
pub fn figures_of(doc: &ResultsDocument, speed: Option<f64>) -> BTreeMap<String, Figure> {
    doc.records
        .iter()
        .filter_map(|r| {
            let mut fig = figure(r)?;
            if let (Basis::OwnTime, Some(speed)) = (&fig.basis, speed) {
                fig.basis = Basis::RunSpeed;
                fig.value = fig.shown / speed.exp();
            }
            Some((point_key(r), fig))
        })
        .collect()
}

/// ln(ns) of the reference copy or read each point with one timed interleaved with it.
fn reference_times(doc: &ResultsDocument) -> BTreeMap<String, f64> {
    doc.records
        .iter()
        .filter(|r| r.checksum.status == ChecksumOutcome::Ok && r.error.is_none())
        .filter_map(|r| {
            let ns = r.timing.as_ref()?.ns_per_run.median * r.reference.as_ref()?.ratio;
            (ns.is_finite() && ns > 0.0).then(|| (point_key(r), ns.ln()))
        })
        .collect()
}

/// Each run's speed (ln units; the median deviation of its reference times from their means
/// over `runs`), or `None` when some run has no reference shared with another.
pub fn run_speeds(runs: &[&ResultsDocument]) -> Option<Vec<f64>> {
    let times: Vec<BTreeMap<String, f64>> = runs.iter().map(|d| reference_times(d)).collect();
    let mut sums: BTreeMap<&str, (f64, usize)> = BTreeMap::new();
    for run in &times {
        for (key, t) in run {
            let entry = sums.entry(key.as_str()).or_default();
            entry.0 += t;
            entry.1 += 1;
        }
    }
    times
        .iter()
        .map(|run| {
            let mut deviations: Vec<f64> = run
                .iter()
                .filter_map(|(key, t)| {
                    let (sum, n) = sums[key.as_str()];
                    (n >= 2).then(|| t - sum / n as f64)
                })
                .collect();
            if deviations.is_empty() {
                return None;
            }
            deviations.sort_by(f64::total_cmp);
            Some(median_of_sorted(&deviations))
        })
        .collect()
}
