//! The gate's result types: a row per compared metric ([`GateRow`]), the whole verdict
//! ([`GateVerdict`]) with how its timing was judged ([`GateMethod`]), their [`Track`] and
//! [`Verdict`], and what a user can do about a verdict that judged less than it could
//! ([`Advice`]).

use serde::{Deserialize, Serialize};
use thiserror::Error;

use super::matching::{params_label, point_key};
use crate::results::PointRecord;

/// How the paired track judges (the defaults and where they come from: docs/gate.md).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PairedOptions {
    /// An estimate above this relative slowdown can be a regression (0.02 = 2%).
    pub threshold: f64,
    /// The interval must lie wholly above this relative slowdown.
    pub floor: f64,
    /// Family-wise error level of the Holm-corrected tests over all judged points.
    pub alpha: f64,
    /// Relative change of a simulated miss count still accepted (0 = exact).
    pub sim_tolerance: f64,
    /// The test of each point's log-ratios; verdicts written before the choice existed used
    /// the signed-rank test.
    #[serde(default = "PairedStatistic::signed_rank")]
    pub statistic: PairedStatistic,
}

/// The paired test: both are distribution-free and exact for any number of rounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PairedStatistic {
    /// Sign test, median estimate, order-statistic interval: a wild round is one vote.
    Sign,
    /// Wilcoxon signed-rank test, Hodges–Lehmann estimate and interval: more power on clean
    /// rounds, but a wild round gets the largest rank.
    SignedRank,
}

impl PairedStatistic {
    fn signed_rank() -> Self {
        Self::SignedRank
    }

    /// The name `--statistic` takes and the verdict prints.
    pub fn name(self) -> &'static str {
        match self {
            Self::Sign => "sign",
            Self::SignedRank => "signed-rank",
        }
    }

    /// Reads a name `name` gives.
    pub fn parse(name: &str) -> Result<Self, UnknownStatistic> {
        [Self::Sign, Self::SignedRank]
            .into_iter()
            .find(|s| s.name() == name)
            .ok_or_else(|| UnknownStatistic(name.to_string()))
    }
}

/// A `--statistic` that names neither test; clap prints the message after the option.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("unknown statistic `{0}`: sign or signed-rank")]
pub struct UnknownStatistic(pub String);

/// Which track a row belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Track {
    /// Simulated misses under the fixed geometry.
    Deterministic,
    /// Wall-clock time.
    Timing,
}

/// The outcome of one row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// Within tolerance (deterministic); no slowdown beyond the threshold (timing).
    Unchanged,
    /// Worse beyond the tolerance/threshold: fails the gate.
    Regression,
    /// Neither a regression nor ruled out within the rounds the gate could spend: passes,
    /// and the verdict says so.
    Inconclusive,
    /// Better beyond the tolerance/threshold: reported, passes.
    Improvement,
    /// The current point failed (wrong checksum, preparation error): fails the gate.
    Failed,
    /// A reference point: shown for context, not judged (it is what the others are divided by).
    Reference,
    /// Not comparable (reason in the note): reported, cannot fail the gate.
    NotCompared,
    /// In the current run but not in the baseline: reported, passes.
    New,
}

impl Verdict {
    /// Whether the row was judged (compared and given an outcome).
    pub fn judged(self) -> bool {
        matches!(
            self,
            Verdict::Unchanged | Verdict::Regression | Verdict::Inconclusive | Verdict::Improvement
        )
    }
}

/// One line of the verdict table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GateRow {
    /// `kernel params ×threads | metric`: stable across runs.
    pub id: String,
    pub kernel: String,
    /// `key=value` pairs of the current run's point.
    pub params: String,
    pub threads: usize,
    pub track: Track,
    /// What is compared and where it came from (`simulated`, `timed`).
    pub metric: String,
    /// The baseline's (base build's) value; for paired timing the median time per run, ns.
    pub baseline: Option<f64>,
    pub current: Option<f64>,
    /// Relative change, current / baseline − 1 (paired timing: the median or Hodges–Lehmann
    /// estimate, by the statistic).
    pub change: Option<f64>,
    /// Interval of the change (timing only): bootstrap CI (stored baseline) or the paired
    /// statistic's interval at [`GateRow::level`] per tail (paired builds).
    pub ci: Option<(f64, f64)>,
    /// Stored baseline only: the change of the point's own median time, not divided by any
    /// reference, and its bootstrap CI; a timing verdict needs both beyond the threshold.
    #[serde(default)]
    pub own_change: Option<f64>,
    #[serde(default)]
    pub own_ci: Option<(f64, f64)>,
    /// Paired builds: the rounds (paired ratios) behind the row.
    #[serde(default)]
    pub rounds: Option<usize>,
    /// Paired builds: the one-sided p-value that the slowdown exceeds the noise floor.
    #[serde(default)]
    pub p_value: Option<f64>,
    /// Paired builds: the Holm level the p-value was held to (the interval's tail).
    #[serde(default)]
    pub level: Option<f64>,
    /// Paired builds: the ratios candidate ÷ base, one per round, in the order measured (so
    /// a calibration can judge them again under other settings).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ratios: Vec<f64>,
    pub verdict: Verdict,
    pub note: Option<String>,
}

/// How the timing track was judged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum GateMethod {
    /// Against a stored results file: each time as a ratio to a reference of the same run,
    /// seeded bootstrap CIs of the change of the ratio and of the own time.
    StoredBaseline {
        /// The baseline file, as named on the command line.
        baseline: String,
        threshold: f64,
        confidence: f64,
        resamples: usize,
        seed: u64,
        /// This run's references' time ÷ the baseline's (median), and how many.
        run_speed: Option<f64>,
        run_speed_references: usize,
        /// Set when the baseline comes from another CPU model or cache geometry: timing is
        /// not compared at all, and only the simulated track judges.
        timing_not_comparable: Option<String>,
        /// Which of the two differs (verdicts written before it was recorded have none).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timing_differs_in: Option<MachineDifference>,
    },
    /// Two builds measured in interleaved rounds (`paired`).
    PairedBuilds {
        /// How each build was named (`--base REV` commit, or the binary's path) and its
        /// version line.
        base: String,
        candidate: String,
        options: PairedOptions,
        /// Seed of the shuffled order of points and builds.
        seed: u64,
        /// Rounds every point got, and the most any point got.
        rounds_min: usize,
        rounds_max: usize,
        /// Seconds the rounds took.
        measured_s: f64,
        /// Why the rounds stopped before every point was decided (budget, rounds).
        stopped: Option<String>,
        /// The limits the rounds ran under and how busy the machine was (verdicts written
        /// before it was recorded have none).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rounds_context: Option<RoundsContext>,
        /// What building the base cost and left on disk (`--base REV` only).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        base_build: Option<BaseBuildCost>,
    },
}

/// What differs between a stored baseline's machine and this one, so timing is not compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MachineDifference {
    CpuModel,
    CacheGeometry,
}

impl MachineDifference {
    /// The difference in a few words, as a row's note and the headline say it.
    pub fn label(self) -> &'static str {
        match self {
            Self::CpuModel => "another CPU model",
            Self::CacheGeometry => "another cache geometry",
        }
    }
}

/// Why the paired rounds stopped with points still undecided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StopCause {
    /// Another round would have overrun `--time-budget`.
    Budget,
    /// The points reached `--max-rounds`.
    MaxRounds,
}

/// The limits the paired rounds ran under, and the machine's load around them: what the advice
/// on undecided points is derived from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoundsContext {
    /// `--time-budget`, seconds of rounds.
    pub budget_s: f64,
    /// `--rounds`: rounds every point gets before the first judgement.
    pub first_rounds: usize,
    /// `--max-rounds`.
    pub max_rounds: usize,
    /// What ended the rounds with points undecided, if anything did.
    pub stop: Option<StopCause>,
    /// The 1-minute load average (`/proc/loadavg`) when the rounds started and ended.
    pub load_before: Option<f64>,
    pub load_after: Option<f64>,
    /// Logical CPUs this process may run on.
    pub logical_cpus: usize,
}

/// What a base build cost this run and what it keeps on disk.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BaseBuildCost {
    /// Wall-clock seconds this run spent building the base (0 when an earlier build was reused).
    pub build_s: f64,
    /// An earlier run's build of the same commit and settings was used.
    pub reused: bool,
    /// The directory holding every kept base build and their shared cargo target directory,
    /// as the user would type it (relative to the current directory when inside it).
    pub kept_in: String,
    /// Its size on disk after this run, bytes (allocated blocks, as `du` counts them).
    pub kept_bytes: u64,
}

/// Something a user can do about a verdict that judged less than it could, derived from the
/// run's own numbers (the text names them).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Advice {
    /// Stable key: `timing-not-comparable`, `points-undecided`.
    pub kind: String,
    /// What was found and what would help, in words, with the numbers it rests on.
    pub text: String,
    /// Commands or flags to try, as typed (`REV`, `FILE`: the user's choice).
    pub try_next: Vec<String>,
}

/// The gate's verdict on one comparison.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GateVerdict {
    /// True when nothing regressed and no point failed.
    pub pass: bool,
    pub method: GateMethod,
    pub sim_tolerance: f64,
    /// The simulated geometry both documents share (preset name when recorded).
    pub geometry: String,
    pub deterministic_regressions: usize,
    pub timing_regressions: usize,
    pub failures: usize,
    pub improvements: usize,
    /// Timing rows neither a regression nor ruled out.
    pub inconclusive: usize,
    /// What each track judged: timing rows judged of those that could have been, simulated
    /// rows compared.
    pub timing_judged: usize,
    pub timing_rows: usize,
    pub simulated_judged: usize,
    /// Ids of the rows that fail the gate.
    pub regressed: Vec<String>,
    pub rows: Vec<GateRow>,
    /// What a user can do about what this verdict could not judge (empty: nothing to add).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub advice: Vec<Advice>,
}

/// Which point a row is about: kernel, `key=value` parameters, threads.
struct PointName<'a> {
    kernel: &'a str,
    params: String,
    threads: usize,
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
        let name = PointName {
            kernel: &record.kernel,
            params: params_label(record),
            threads: record.threads,
        };
        debug_assert_eq!(
            format!("{} {} ×{}", name.kernel, name.params, name.threads),
            point_key(record)
        );
        Self::blank(name, track, metric, verdict, note)
    }

    /// The row of a point that failed before it produced a record to compare.
    pub fn failed_point(kernel: &str, params: &str, threads: usize, why: String) -> Self {
        let name = PointName {
            kernel,
            params: params.to_string(),
            threads,
        };
        Self::blank(name, Track::Timing, "point", Verdict::Failed, Some(why))
    }

    fn blank(
        name: PointName<'_>,
        track: Track,
        metric: &str,
        verdict: Verdict,
        note: Option<String>,
    ) -> Self {
        GateRow {
            id: format!(
                "{} {} ×{} | {metric}",
                name.kernel, name.params, name.threads
            ),
            kernel: name.kernel.to_string(),
            params: name.params,
            threads: name.threads,
            track,
            metric: metric.to_string(),
            baseline: None,
            current: None,
            change: None,
            ci: None,
            own_change: None,
            own_ci: None,
            rounds: None,
            p_value: None,
            level: None,
            ratios: Vec::new(),
            verdict,
            note,
        }
    }
}

impl GateVerdict {
    /// The verdict over `rows`: counts per track and outcome, and the ids that fail the gate.
    pub fn tally(
        rows: Vec<GateRow>,
        method: GateMethod,
        sim_tolerance: f64,
        geometry: String,
    ) -> Self {
        let count = |track: Option<Track>, verdict: Verdict| {
            rows.iter()
                .filter(|r| track.is_none_or(|t| r.track == t) && r.verdict == verdict)
                .count()
        };
        let judged = |track: Track| {
            rows.iter()
                .filter(|r| r.track == track && r.verdict.judged())
                .count()
        };
        let regressed: Vec<String> = rows
            .iter()
            .filter(|r| matches!(r.verdict, Verdict::Regression | Verdict::Failed))
            .map(|r| r.id.clone())
            .collect();
        GateVerdict {
            pass: regressed.is_empty(),
            method,
            sim_tolerance,
            geometry,
            deterministic_regressions: count(Some(Track::Deterministic), Verdict::Regression),
            timing_regressions: count(Some(Track::Timing), Verdict::Regression),
            failures: count(None, Verdict::Failed),
            improvements: count(None, Verdict::Improvement),
            inconclusive: count(Some(Track::Timing), Verdict::Inconclusive),
            timing_judged: judged(Track::Timing),
            timing_rows: rows
                .iter()
                .filter(|r| r.track == Track::Timing && r.verdict != Verdict::Reference)
                .count(),
            simulated_judged: judged(Track::Deterministic),
            regressed,
            rows,
            advice: Vec::new(),
        }
    }
}
