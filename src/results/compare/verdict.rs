//! The gate's result types: a row per compared metric ([`GateRow`]), the whole verdict
//! ([`GateVerdict`]), their [`Track`] and [`Verdict`].

use serde::{Deserialize, Serialize};

use super::matching::{params_label, point_key};
use crate::results::PointRecord;

/// Which track a row belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Track {
    /// Simulated misses under the fixed geometry.
    Deterministic,
    /// Wall-clock time relative to a same-run reference.
    Timing,
}

/// The outcome of one row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// Within tolerance (deterministic) or the CI does not lie wholly beyond the threshold.
    Unchanged,
    /// Worse beyond the tolerance/threshold: fails the gate.
    Regression,
    /// A timing regression not seen in the verdict passed as `confirm`: does not fail.
    Unconfirmed,
    /// Better beyond the tolerance/threshold: reported (update the baseline), passes.
    Improvement,
    /// The current point failed (wrong checksum, preparation error): fails the gate.
    Failed,
    /// A reference point: shown for context, not judged (it is what the others are divided by).
    Reference,
    /// Not comparable (reason in the note): reported, passes.
    NotCompared,
    /// In the current run but not in the baseline: reported, passes.
    New,
}

/// One line of the verdict table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GateRow {
    /// `kernel params ×threads | metric`: stable across runs, used by `confirm`.
    pub id: String,
    pub kernel: String,
    /// `key=value` pairs of the current run's point.
    pub params: String,
    pub threads: usize,
    pub track: Track,
    /// What is compared and where it came from (`simulated`, `timed`).
    pub metric: String,
    pub baseline: Option<f64>,
    pub current: Option<f64>,
    /// Relative change, current / baseline − 1.
    pub change: Option<f64>,
    /// Bootstrap CI of the change (timing only).
    pub ci: Option<(f64, f64)>,
    /// Timing only: the change of the point's own median time, not divided by any reference,
    /// and its bootstrap CI. A timing verdict needs both this and the ratio beyond the
    /// threshold (see [`compare`](super::compare)).
    #[serde(default)]
    pub own_change: Option<f64>,
    #[serde(default)]
    pub own_ci: Option<(f64, f64)>,
    pub verdict: Verdict,
    pub note: Option<String>,
}

/// The gate's verdict on one comparison.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GateVerdict {
    /// True when nothing regressed and no point failed.
    pub pass: bool,
    pub threshold: f64,
    pub sim_tolerance: f64,
    pub confidence: f64,
    pub resamples: usize,
    pub seed: u64,
    /// The simulated geometry both documents share (preset name when recorded).
    pub geometry: String,
    /// The current run's machine speed relative to the baseline's (time now ÷ then of the
    /// interleaved references, median) and how many references it comes from.
    pub run_speed: Option<f64>,
    pub run_speed_references: usize,
    /// Set when the two documents come from different CPU models: timing ratios do not carry
    /// across CPU models, so the timing track's verdicts are not to be trusted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine_warning: Option<String>,
    pub deterministic_regressions: usize,
    pub timing_regressions: usize,
    pub unconfirmed_timing_regressions: usize,
    pub failures: usize,
    pub improvements: usize,
    /// Ids of the rows that fail the gate.
    pub regressed: Vec<String>,
    pub rows: Vec<GateRow>,
}

impl GateRow {
    /// A row of `record` with nothing compared yet: values, change and CIs are filled in by
    /// the track that judges it.
    pub(super) fn of(
        record: &PointRecord,
        track: Track,
        metric: &str,
        verdict: Verdict,
        note: Option<String>,
    ) -> Self {
        GateRow {
            id: format!("{} | {metric}", point_key(record)),
            kernel: record.kernel.clone(),
            params: params_label(record, false),
            threads: record.threads,
            track,
            metric: metric.to_string(),
            baseline: None,
            current: None,
            change: None,
            ci: None,
            own_change: None,
            own_ci: None,
            verdict,
            note,
        }
    }
}
