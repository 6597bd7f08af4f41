//! Baseline comparison for the regression gate: two results documents in, one [`GateVerdict`]
//! out (rows for a Markdown table, counts, pass/fail). It never measures; `stridelab gate` runs
//! the suite and calls [`compare`].
//!
//! Two tracks, per point matched by [`point_key`] (kernel, threads, parameters):
//! 1. **Deterministic** — simulated misses per cache level. Both documents must have simulated
//!    the same fixed geometry (a preset, recorded in the manifest), so the counts depend only on
//!    the kernels' address orders and are portable across machines. A relative change beyond
//!    `sim_tolerance` (default 0: exact) is a regression (more misses) or an improvement.
//! 2. **Timing** — each point's time as a ratio to a reference timed in the same run, so
//!    machine speed cancels. The reference is the copy/read the runner interleaved with the
//!    point (the gate asks for one with every point): each kernel sample is divided by the
//!    reference sample of the same round, so speed swings slower than a round (~2 ms) cancel
//!    sample by sample. Documents without per-round reference samples (older builds) use the
//!    reference's median instead; points timed
//!    without one (probes, chases, strides) are divided by the run's speed — the median over
//!    all interleaved references of their time now ÷ then — and only a run without any
//!    interleaved reference falls back to the suite's own `read` point (`copy` for kernels that
//!    write), whose samples are then resampled too.
//!    The change of that ratio against the baseline gets a seeded percentile-bootstrap CI, and
//!    so does the change of the point's own time (no reference). A regression only when both
//!    whole CIs lie above `+threshold`, an improvement only when both lie below `-threshold`:
//!    a code change moves both, a slower machine moves only the own time, and a reference
//!    whose speed changed alone moves only the ratio. The last happens here: in a 20-run A/A
//!    series the streaming read reference ran at 73–77 GB/s in some processes and 110–115 GB/s
//!    in others (the kernels' own times unchanged), because a throughput-bound read feels a busy
//!    SMT sibling of another tenant and a latency-bound kernel does not; on the ratio alone
//!    14 of 20 unchanged runs failed. The reference points themselves are shown, not judged.
//!
//! With `confirm` (a previous verdict), a timing regression counts only when the same row
//! regressed there too: `scripts/ci-gate.sh` uses this to re-run before failing on timing.
//!
//! Input problems (suite changed, geometry differs, run interrupted) are [`CompareError`]s:
//! the CLI exits 2 with the fix named, never a silent pass.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::results::{
    ChecksumOutcome, PointRecord, ResultsDocument, RunStatus, SimulatedLevel, SimulatedMisses,
    SimulationCut,
};
use crate::stats::{SplitMix64, median_of_sorted, percentile_of_sorted, resampled_median, sorted};
use crate::vocab::format_params;

/// The manifest key (`info.gate`) under which `stridelab gate` records how its run was made.
pub const GATE_MANIFEST_KEY: &str = "gate";

/// The fixture switch that stands for a code change, not a benchmark parameter: ignored when a
/// point has no exact match, so a `deopt=1` run is compared with the real kernel's baseline.
pub const FIXTURE_PARAM: &str = "deopt";

/// How to compare.
#[derive(Debug, Clone, PartialEq)]
pub struct CompareOptions {
    /// Relative timing change that counts (0.10 = 10%); the whole CI must lie beyond it.
    pub threshold: f64,
    /// Relative change of a simulated miss count that is still a match (0 = exact).
    pub sim_tolerance: f64,
    pub resamples: usize,
    pub confidence: f64,
    pub seed: u64,
}

impl Default for CompareOptions {
    fn default() -> Self {
        Self {
            threshold: 0.10,
            sim_tolerance: 0.0,
            resamples: 2000,
            confidence: 0.95,
            seed: 0x6A7E_5EED,
        }
    }
}

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

impl Verdict {
    fn label(self) -> &'static str {
        match self {
            Verdict::Unchanged => "ok",
            Verdict::Regression => "**REGRESSION**",
            Verdict::Unconfirmed => "regression, unconfirmed",
            Verdict::Improvement => "improvement",
            Verdict::Failed => "**FAILED**",
            Verdict::Reference => "reference",
            Verdict::NotCompared => "not compared",
            Verdict::New => "new",
        }
    }
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
    /// threshold (see [`compare`]).
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

/// Why two documents cannot be compared (the CLI exits 2 and prints the fix).
#[derive(Debug, Error, Clone, PartialEq)]
#[non_exhaustive]
pub enum CompareError {
    #[error(
        "the current run was interrupted ({done} of {total} points); nothing to compare — rerun the gate"
    )]
    Interrupted { done: usize, total: usize },
    #[error(
        "the baseline is from suite `{baseline}` but the current results are from suite `{current}`; compare results of the same suite (or record a new baseline with `stridelab gate --suite {current} --save-baseline FILE`)"
    )]
    SuiteName { baseline: String, current: String },
    #[error(
        "the suite changed since the baseline was recorded: {missing} baseline point(s) are not in the current results (first: `{first}`); record a new baseline with `stridelab gate --save-baseline reports/baseline.json`"
    )]
    SuiteChanged { missing: usize, first: String },
    #[error(
        "simulated geometries differ: baseline {baseline}, current {current}; the deterministic track needs both runs simulated on the same preset — let `stridelab gate` run the suite (it uses the baseline's preset) or record a new baseline with `stridelab gate --save-baseline reports/baseline.json`"
    )]
    GeometryMismatch { baseline: String, current: String },
    #[error(
        "simulation caps differ (baseline {baseline} accesses, current {current}): the miss counts of capped points are not comparable; record a new baseline with `stridelab gate --save-baseline reports/baseline.json`"
    )]
    SimulationCap { baseline: u64, current: u64 },
    #[error(
        "two points of the {which} share the key `{key}`; the gate needs every point to be unique"
    )]
    DuplicatePoint { which: &'static str, key: String },
}

/// `kernel k=v k=v ×threads`, parameters in name order.
pub fn point_key(record: &PointRecord) -> String {
    key_of(record, false)
}

fn key_of(record: &PointRecord, drop_fixture: bool) -> String {
    let params = params_label(record, drop_fixture);
    format!("{} {} ×{}", record.kernel, params, record.threads)
}

fn params_label(record: &PointRecord, drop_fixture: bool) -> String {
    format_params(
        record
            .params
            .iter()
            .filter(|(k, _)| !(drop_fixture && k.as_str() == FIXTURE_PARAM)),
    )
}

/// A geometry in one line: `L1d 48K 12-way 64B (64 sets), L2 …`.
pub fn geometry_label(levels: &[SimulatedLevel]) -> String {
    levels
        .iter()
        .map(|l| {
            format!(
                "{} {}K {}-way {}B ({} sets)",
                l.name,
                l.size / 1024,
                l.ways,
                l.line,
                l.sets
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The first simulated geometry of a document (every record simulates the same one).
fn document_geometry(doc: &ResultsDocument) -> Option<String> {
    doc.records
        .iter()
        .find_map(|r| r.simulated.as_ref())
        .map(|s| geometry_label(&s.levels))
}

/// The preset `stridelab gate` recorded in the manifest, if any.
pub fn recorded_preset(doc: &ResultsDocument) -> Option<String> {
    doc.info
        .get(GATE_MANIFEST_KEY)?
        .get("preset")?
        .as_str()
        .map(str::to_string)
}

/// Compares `current` with `baseline`. `confirm` is an earlier verdict whose timing
/// regressions a regression here must repeat to count.
pub fn compare(
    baseline: &ResultsDocument,
    current: &ResultsDocument,
    options: &CompareOptions,
    confirm: Option<&GateVerdict>,
) -> Result<GateVerdict, CompareError> {
    if current.status == RunStatus::Interrupted {
        return Err(CompareError::Interrupted {
            done: current.records.len(),
            total: current.suite.points,
        });
    }
    if baseline.suite.name != current.suite.name {
        return Err(CompareError::SuiteName {
            baseline: baseline.suite.name.clone(),
            current: current.suite.name.clone(),
        });
    }
    let geometry = match (document_geometry(baseline), document_geometry(current)) {
        (Some(b), Some(c)) if b != c => {
            return Err(CompareError::GeometryMismatch {
                baseline: b,
                current: c,
            });
        }
        (b, c) => b.or(c).unwrap_or_else(|| "none simulated".into()),
    };
    let geometry = match recorded_preset(baseline) {
        Some(preset) => format!("preset {preset}: {geometry}"),
        None => geometry,
    };
    if baseline.method.simulation_access_cap != current.method.simulation_access_cap {
        return Err(CompareError::SimulationCap {
            baseline: baseline.method.simulation_access_cap,
            current: current.method.simulation_access_cap,
        });
    }

    let base_by_key = unique_keys(baseline, "baseline")?;
    unique_keys(current, "current results")?;
    // Match every current point: exactly, else with the fixture switch ignored.
    let mut matched: Vec<(&PointRecord, Option<&PointRecord>)> = Vec::new();
    let mut used: BTreeSet<usize> = BTreeSet::new();
    for record in &current.records {
        let exact = base_by_key.get(&point_key(record)).copied();
        let found = exact.or_else(|| {
            let loose = key_of(record, true);
            baseline
                .records
                .iter()
                .find(|b| !used.contains(&b.index) && key_of(b, true) == loose)
        });
        if let Some(b) = found {
            used.insert(b.index);
        }
        matched.push((record, found));
    }
    let missing: Vec<&PointRecord> = baseline
        .records
        .iter()
        .filter(|b| !used.contains(&b.index))
        .collect();
    if let Some(first) = missing.first() {
        return Err(CompareError::SuiteChanged {
            missing: missing.len(),
            first: point_key(first),
        });
    }

    let confirmed: Option<BTreeSet<&str>> =
        confirm.map(|v| v.regressed.iter().map(String::as_str).collect());
    let base_refs = References::of(baseline);
    let cur_refs = References::of(current);
    let speed = run_speed(&matched);
    let mut rows = Vec::new();
    for (row_index, (cur, base)) in matched.iter().enumerate() {
        let Some(base) = base else {
            rows.push(row(cur, Track::Timing, "-", Verdict::New, None));
            continue;
        };
        if cur.checksum.status != ChecksumOutcome::Ok || cur.error.is_some() {
            let why = cur
                .error
                .as_ref()
                .map(|e| format!("{}: {}", e.stage, e.message))
                .unwrap_or_else(|| format!("checksum {:?}", cur.checksum.status));
            rows.push(row(cur, Track::Timing, "point", Verdict::Failed, Some(why)));
            continue;
        }
        deterministic_rows(base, cur, options, &mut rows);
        let mut timing = timing_row(
            (base, &base_refs),
            (cur, &cur_refs),
            speed,
            options,
            row_index as u64,
        );
        if timing.verdict == Verdict::Regression
            && let Some(previous) = &confirmed
            && !previous.contains(timing.id.as_str())
        {
            timing.verdict = Verdict::Unconfirmed;
            timing.note = Some("not a regression in the earlier run: treated as noise".into());
        }
        rows.push(timing);
    }

    let count = |track: Track, verdict: Verdict| {
        rows.iter()
            .filter(|r| r.track == track && r.verdict == verdict)
            .count()
    };
    let deterministic_regressions = count(Track::Deterministic, Verdict::Regression);
    let timing_regressions = count(Track::Timing, Verdict::Regression);
    let failures = rows.iter().filter(|r| r.verdict == Verdict::Failed).count();
    let regressed: Vec<String> = rows
        .iter()
        .filter(|r| matches!(r.verdict, Verdict::Regression | Verdict::Failed))
        .map(|r| r.id.clone())
        .collect();
    Ok(GateVerdict {
        pass: regressed.is_empty(),
        threshold: options.threshold,
        sim_tolerance: options.sim_tolerance,
        confidence: options.confidence,
        resamples: options.resamples,
        seed: options.seed,
        geometry,
        run_speed: speed.map(|s| s.factor),
        run_speed_references: speed.map_or(0, |s| s.references),
        machine_warning: machine_warning(baseline, current),
        deterministic_regressions,
        timing_regressions,
        unconfirmed_timing_regressions: count(Track::Timing, Verdict::Unconfirmed),
        failures,
        improvements: rows
            .iter()
            .filter(|r| r.verdict == Verdict::Improvement)
            .count(),
        regressed,
        rows,
    })
}

/// The warning for documents recorded on different CPU models (`info.cpu_model`), if any.
fn machine_warning(baseline: &ResultsDocument, current: &ResultsDocument) -> Option<String> {
    let model = |doc: &ResultsDocument| {
        doc.info
            .get("cpu_model")
            .and_then(|m| m.as_str())
            .map(str::to_owned)
    };
    let (then, now) = (model(baseline)?, model(current)?);
    (then != now).then(|| {
        format!(
            "the baseline was recorded on `{then}`, this run on `{now}`: timing ratios do not carry across CPU models, so trust only the simulated track; record a baseline on this machine with `stridelab gate --save-baseline FILE`"
        )
    })
}

fn unique_keys<'a>(
    doc: &'a ResultsDocument,
    which: &'static str,
) -> Result<BTreeMap<String, &'a PointRecord>, CompareError> {
    let mut map = BTreeMap::new();
    for record in &doc.records {
        let key = point_key(record);
        if map.insert(key.clone(), record).is_some() {
            return Err(CompareError::DuplicatePoint { which, key });
        }
    }
    Ok(map)
}

fn row(
    record: &PointRecord,
    track: Track,
    metric: &str,
    verdict: Verdict,
    note: Option<String>,
) -> GateRow {
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

/// One row per cache level of the baseline's simulation.
fn deterministic_rows(
    base: &PointRecord,
    cur: &PointRecord,
    options: &CompareOptions,
    rows: &mut Vec<GateRow>,
) {
    let (Some(b), Some(c)) = (&base.simulated, &cur.simulated) else {
        let why = if base.simulated.is_none() {
            "the baseline point was not simulated"
        } else {
            "the current point was not simulated"
        };
        rows.push(row(
            cur,
            Track::Deterministic,
            "misses (simulated)",
            Verdict::NotCompared,
            Some(why.into()),
        ));
        return;
    };
    // Decided by the typed `cut` alone (documents from older builds have it filled in on
    // load from their counts): a time-budget cut depends on the machine's speed.
    let cut_by_time = |sim: &SimulatedMisses| sim.scope.cut == Some(SimulationCut::TimeBudget);
    if cut_by_time(c) {
        // The gate never simulates with a time budget, so a current document that says so was
        // not made by it: its miss counts cannot be trusted to pass.
        rows.push(row(
            cur,
            Track::Deterministic,
            "misses (simulated)",
            Verdict::Failed,
            Some("the current simulation was cut by a time budget, so its counts are not reproducible; let `stridelab gate` simulate (it runs without one)".into()),
        ));
        return;
    }
    if cut_by_time(b) {
        rows.push(row(
            cur,
            Track::Deterministic,
            "misses (simulated)",
            Verdict::NotCompared,
            Some("the baseline simulation was cut by its time budget, so its counts are not reproducible; record a new baseline with `stridelab gate --save-baseline reports/baseline.json`".into()),
        ));
        return;
    }
    for level in &b.levels {
        let metric = format!("{} misses (simulated)", level.name);
        let mut r = row(cur, Track::Deterministic, &metric, Verdict::Unchanged, None);
        let Some(now) = level_of(c, &level.name) else {
            r.verdict = Verdict::NotCompared;
            r.note = Some(format!("the current run did not simulate {}", level.name));
            rows.push(r);
            continue;
        };
        let (was, is) = (level.misses as f64, now.misses as f64);
        r.baseline = Some(was);
        r.current = Some(is);
        r.change = Some(if was == 0.0 {
            if is == 0.0 { 0.0 } else { f64::INFINITY }
        } else {
            is / was - 1.0
        });
        let allowed = options.sim_tolerance * was;
        if (is - was).abs() > allowed {
            r.verdict = if is > was {
                Verdict::Regression
            } else {
                Verdict::Improvement
            };
        }
        if b.scope.simulated_accesses != c.scope.simulated_accesses {
            r.note = Some(format!(
                "accesses simulated: {} → {}",
                b.scope.simulated_accesses, c.scope.simulated_accesses
            ));
        }
        rows.push(r);
    }
}

fn level_of<'a>(sim: &'a SimulatedMisses, name: &str) -> Option<&'a SimulatedLevel> {
    sim.levels.iter().find(|l| l.name == name)
}

/// The same-run reference points of a document (`read`, `copy`), by kernel name.
struct References<'a> {
    by_name: BTreeMap<&'static str, &'a PointRecord>,
}

impl<'a> References<'a> {
    fn of(doc: &'a ResultsDocument) -> Self {
        let mut by_name = BTreeMap::new();
        for name in ["read", "copy"] {
            if let Some(r) = doc.records.iter().find(|r| {
                r.kernel == name && r.timing.is_some() && r.checksum.status == ChecksumOutcome::Ok
            }) {
                by_name.insert(name, r);
            }
        }
        Self { by_name }
    }
}

/// How a point's time is normalised.
enum Normaliser<'a> {
    /// The runner's interleaved reference with its per-round samples: each kernel sample is
    /// divided by the reference sample timed right after it, so swings of machine speed slower
    /// than a round cancel sample by sample.
    Paired { name: String, samples: &'a [f64] },
    /// The runner's interleaved reference: its median time for the point's bytes (documents
    /// without per-round reference samples).
    Interleaved { name: String, ns: f64 },
    /// A point without its own reference: the run's speed relative to the baseline's
    /// ([`RunSpeed`]; 1 for the baseline itself).
    RunSpeed { factor: f64 },
    /// A reference point of the same run, resampled like the kernel (when the run has no
    /// interleaved references at all).
    Point {
        name: &'static str,
        samples: &'a [f64],
    },
}

/// How fast the current run's machine was relative to the baseline's: the median, over every
/// point with an interleaved copy/read reference in both runs, of the reference's time now ÷
/// then. Points timed without their own reference (probes, chases, strides) are divided by it:
/// one reference point timed once would carry all of its own noise into them.
#[derive(Debug, Clone, Copy, PartialEq)]
struct RunSpeed {
    factor: f64,
    references: usize,
}

fn interleaved_ns(record: &PointRecord) -> Option<f64> {
    let timing = record.timing.as_ref()?;
    let reference = record.reference.as_ref()?;
    let ns = timing.ns_per_run.median * reference.ratio;
    (ns.is_finite() && ns > 0.0).then_some(ns)
}

fn run_speed(matched: &[(&PointRecord, Option<&PointRecord>)]) -> Option<RunSpeed> {
    let mut factors: Vec<f64> = matched
        .iter()
        .filter_map(|(cur, base)| Some(interleaved_ns(cur)? / interleaved_ns((*base)?)?))
        .collect();
    if factors.is_empty() {
        return None;
    }
    factors.sort_by(f64::total_cmp);
    Some(RunSpeed {
        factor: median_of_sorted(&factors),
        references: factors.len(),
    })
}

fn normaliser<'a>(
    record: &'a PointRecord,
    refs: &References<'a>,
    speed: Option<f64>,
) -> Option<Normaliser<'a>> {
    let timing = record.timing.as_ref()?;
    if let Some(reference) = &record.reference
        && reference.samples_ns_per_run.len() == timing.samples_ns_per_run.len()
    {
        return Some(Normaliser::Paired {
            name: reference.reference.clone(),
            samples: &reference.samples_ns_per_run,
        });
    }
    if let Some(reference) = &record.reference
        && reference.ratio.is_finite()
        && reference.ratio > 0.0
    {
        // ratio = kernel GB/s ÷ reference GB/s, so the reference's time for the kernel's
        // bytes is the kernel's median time × ratio.
        return Some(Normaliser::Interleaved {
            name: reference.reference.clone(),
            ns: timing.ns_per_run.median * reference.ratio,
        });
    }
    if let Some(factor) = speed {
        return Some(Normaliser::RunSpeed { factor });
    }
    let writes = record.work.is_some_and(|w| w.bytes_written > 0);
    let name = if writes { "copy" } else { "read" };
    let point = refs.by_name.get(name)?;
    Some(Normaliser::Point {
        name,
        samples: &point.timing.as_ref()?.samples_ns_per_run,
    })
}

fn timing_row(
    (base, base_refs): (&PointRecord, &References<'_>),
    (cur, cur_refs): (&PointRecord, &References<'_>),
    speed: Option<RunSpeed>,
    options: &CompareOptions,
    row_index: u64,
) -> GateRow {
    let is_reference = |r: &PointRecord| {
        ["read", "copy"]
            .iter()
            .any(|n| r.kernel == *n && base_refs.by_name.get(n).is_some_and(|p| p.index == r.index))
    };
    let (Some(bt), Some(ct)) = (&base.timing, &cur.timing) else {
        return row(
            cur,
            Track::Timing,
            "time (timed)",
            Verdict::NotCompared,
            Some("no timing in the baseline point".into()),
        );
    };
    if is_reference(base) {
        let mut r = row(
            cur,
            Track::Timing,
            "ns/run (timed)",
            Verdict::Reference,
            None,
        );
        r.baseline = Some(bt.ns_per_run.median);
        r.current = Some(ct.ns_per_run.median);
        r.change = Some(ct.ns_per_run.median / bt.ns_per_run.median - 1.0);
        r.note = Some("the same-run reference other points are divided by".into());
        return r;
    }
    let (Some(bn), Some(cn)) = (
        normaliser(base, base_refs, speed.map(|_| 1.0)),
        normaliser(cur, cur_refs, speed.map(|s| s.factor)),
    ) else {
        return row(
            cur,
            Track::Timing,
            "time (timed)",
            Verdict::NotCompared,
            Some("no same-run reference (copy/read) in both runs".into()),
        );
    };
    let metric = match (&bn, &cn) {
        (Normaliser::Paired { name: b, .. }, Normaliser::Paired { name: c, .. }) if b == c => {
            format!("time ÷ {b}, paired per round (timed)")
        }
        (Normaliser::Interleaved { name: b, .. }, Normaliser::Interleaved { name: c, .. })
            if b == c =>
        {
            format!("time ÷ {b}, interleaved (timed)")
        }
        (Normaliser::Point { name: b, .. }, Normaliser::Point { name: c, .. }) if b == c => {
            format!("time ÷ {b} point (timed)")
        }
        (Normaliser::RunSpeed { .. }, Normaliser::RunSpeed { .. }) => {
            "ns/run ÷ run speed (timed)".to_string()
        }
        _ => {
            return row(
                cur,
                Track::Timing,
                "time (timed)",
                Verdict::NotCompared,
                Some("baseline and current used different references".into()),
            );
        }
    };
    let mut r = row(cur, Track::Timing, &metric, Verdict::Unchanged, None);
    let valid = |s: &[f64]| !s.is_empty() && s.iter().all(|x| x.is_finite() && *x > 0.0);
    let ref_ok = |n: &Normaliser<'_>| match n {
        Normaliser::Interleaved { ns, .. } | Normaliser::RunSpeed { factor: ns } => {
            ns.is_finite() && *ns > 0.0
        }
        Normaliser::Point { samples, .. } | Normaliser::Paired { samples, .. } => valid(samples),
    };
    // Documents read from disk were validated on load; this guards documents built in memory.
    // A current point without usable samples fails: a gate must not pass what it cannot judge.
    if !valid(&ct.samples_ns_per_run) || !ref_ok(&cn) {
        r.verdict = Verdict::Failed;
        r.note = Some("current samples missing or not positive".into());
        return r;
    }
    if !valid(&bt.samples_ns_per_run) || !ref_ok(&bn) {
        r.verdict = Verdict::NotCompared;
        r.note = Some("baseline samples missing or not positive".into());
        return r;
    }
    let (bs, cs) = (
        paired_quotients(&bt.samples_ns_per_run, &bn),
        paired_quotients(&ct.samples_ns_per_run, &cn),
    );
    let (bs, cs) = (bs.as_slice(), cs.as_slice());
    let ratio = |kernel: &[f64], n: &Normaliser<'_>| {
        median_of_sorted(&sorted(kernel)) / reference_median(n)
    };
    let (was, is) = (ratio(bs, &bn), ratio(cs, &cn));
    r.baseline = Some(was);
    r.current = Some(is);
    r.change = Some(is / was - 1.0);
    let mut rng = SplitMix64::new(options.seed ^ row_index.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let drawn = bs.len() + cs.len() + normaliser_len(&bn) + normaliser_len(&cn);
    let resamples = bounded_resamples(options.resamples, drawn);
    if resamples < options.resamples {
        r.note = Some(format!(
            "{resamples} bootstrap resamples (of {}): {drawn} samples per resample",
            options.resamples
        ));
    }
    let mut changes = Vec::with_capacity(resamples);
    for _ in 0..resamples {
        let b = resampled_median(bs, &mut rng) / resampled_reference(&bn, &mut rng);
        let c = resampled_median(cs, &mut rng) / resampled_reference(&cn, &mut rng);
        changes.push(c / b - 1.0);
    }
    r.ci = Some(change_ci(changes, is / was - 1.0, options));
    // The point's own time: the same bootstrap without a reference.
    let (own_was, own_is) = (
        median_of_sorted(&sorted(&bt.samples_ns_per_run)),
        median_of_sorted(&sorted(&ct.samples_ns_per_run)),
    );
    r.own_change = Some(own_is / own_was - 1.0);
    let own_changes = (0..resamples)
        .map(|_| {
            resampled_median(&ct.samples_ns_per_run, &mut rng)
                / resampled_median(&bt.samples_ns_per_run, &mut rng)
                - 1.0
        })
        .collect();
    r.own_ci = Some(change_ci(own_changes, own_is / own_was - 1.0, options));
    let threshold = options.threshold;
    let beyond = |(low, high): (f64, f64)| {
        if low > threshold {
            1
        } else if high < -threshold {
            -1
        } else {
            0
        }
    };
    match (r.ci.map(beyond), r.own_ci.map(beyond)) {
        (Some(1), Some(1)) => r.verdict = Verdict::Regression,
        (Some(-1), Some(-1)) => r.verdict = Verdict::Improvement,
        (Some(ratio), Some(own)) if ratio != own => {
            r.note = Some(
                match (ratio, own) {
                    (0, _) => "own time moved, but not relative to the reference: machine speed",
                    (_, 0) => {
                        "only the ratio moved: the reference's speed changed, not the point's"
                    }
                    _ => "ratio and own time moved in opposite directions",
                }
                .into(),
            );
        }
        _ => {}
    }
    r
}

/// Samples one resample draws from a normaliser (its own resampled samples, if any).
fn normaliser_len(n: &Normaliser<'_>) -> usize {
    match n {
        Normaliser::Point { samples, .. } => samples.len(),
        _ => 0,
    }
}

/// Sample draws one row's bootstrap may make (about 0.1 s): each resample draws every sample
/// once, so a point with many samples gets fewer resamples, never more work.
const BOOTSTRAP_DRAWS_PER_ROW: usize = 1 << 23;

/// Fewest resamples a row keeps, so the CI's tails still rest on a handful of values.
const MIN_RESAMPLES: usize = 200;

/// `wanted` resamples, fewer when `drawn` samples per resample would exceed the row's budget.
fn bounded_resamples(wanted: usize, drawn: usize) -> usize {
    let affordable = BOOTSTRAP_DRAWS_PER_ROW / drawn.max(1);
    wanted.min(affordable.max(MIN_RESAMPLES))
}

/// The percentile-bootstrap CI from resampled changes (the point estimate when there are none).
fn change_ci(mut changes: Vec<f64>, estimate: f64, options: &CompareOptions) -> (f64, f64) {
    if changes.is_empty() {
        return (estimate, estimate);
    }
    changes.sort_by(f64::total_cmp);
    let tail = (1.0 - options.confidence.clamp(0.0, 1.0)) / 2.0;
    (
        percentile_of_sorted(&changes, tail),
        percentile_of_sorted(&changes, 1.0 - tail),
    )
}

/// A point's samples as the timing track compares them: divided sample by sample by a paired
/// reference (whose quotient then needs no further normalising), else as timed.
fn paired_quotients(kernel: &[f64], n: &Normaliser<'_>) -> Vec<f64> {
    match n {
        Normaliser::Paired { samples, .. } => kernel
            .iter()
            .zip(samples.iter())
            .map(|(k, r)| k / r)
            .collect(),
        _ => kernel.to_vec(),
    }
}

fn reference_median(n: &Normaliser<'_>) -> f64 {
    match n {
        Normaliser::Paired { .. } => 1.0,
        Normaliser::Interleaved { ns, .. } | Normaliser::RunSpeed { factor: ns } => *ns,
        Normaliser::Point { samples, .. } => median_of_sorted(&sorted(samples)),
    }
}

fn resampled_reference(n: &Normaliser<'_>, rng: &mut SplitMix64) -> f64 {
    match n {
        Normaliser::Paired { .. } => 1.0,
        Normaliser::Interleaved { ns, .. } | Normaliser::RunSpeed { factor: ns } => *ns,
        Normaliser::Point { samples, .. } => resampled_median(samples, rng),
    }
}

impl GateVerdict {
    /// The one-line outcome (`PASS` / `FAIL — …`).
    pub fn headline(&self) -> String {
        let failing = self.regressed.len();
        let mut text = if self.pass {
            "PASS".to_string()
        } else {
            format!(
                "FAIL — {failing} failing row(s): {} simulated, {} timing, {} failed point(s)",
                self.deterministic_regressions, self.timing_regressions, self.failures
            )
        };
        if self.improvements > 0 {
            let _ = write!(
                text,
                "; {} improvement(s) (update the baseline)",
                self.improvements
            );
        }
        if self.unconfirmed_timing_regressions > 0 {
            let _ = write!(
                text,
                "; {} unconfirmed timing regression(s) ignored",
                self.unconfirmed_timing_regressions
            );
        }
        if self.machine_warning.is_some() {
            text.push_str("; WARNING: the baseline comes from another CPU model");
        }
        text
    }

    /// The verdict as a Markdown section for a CI job summary. With `all_rows` false, only
    /// rows that are not plain passes are listed (plus a count of the rest).
    pub fn to_markdown(&self, baseline_label: &str, all_rows: bool) -> String {
        let mut md = String::new();
        let _ = writeln!(md, "## stridelab gate: {}\n", self.headline());
        let _ = writeln!(
            md,
            "Baseline `{baseline_label}`. Deterministic track: simulated misses per level on {} \
             (tolerance {}). Timing track: time as a ratio to a same-run copy/read reference; \
             a regression only when the whole {:.0}% bootstrap CI ({} resamples, seed {}) of \
             the change lies beyond ±{}, and so does the CI of the point's own time (with per-round reference samples each sample is \
             divided by its paired reference sample; an older document's reference enters \
             with its median); points without a reference are divided by the run's speed: \
             {}.\n",
            self.geometry,
            if self.sim_tolerance == 0.0 {
                "0: exact match".to_string()
            } else {
                percent(self.sim_tolerance)
            },
            self.confidence * 100.0,
            self.resamples,
            self.seed,
            percent(self.threshold),
            match self.run_speed {
                Some(f) => format!(
                    "this run's references took {f:.3}× the baseline's time (median of {})",
                    self.run_speed_references
                ),
                None => "no interleaved references, so the suite's read/copy point".into(),
            },
        );
        if let Some(warning) = &self.machine_warning {
            let _ = writeln!(md, "**Warning:** {warning}.\n");
        }
        let _ = writeln!(
            md,
            "| kernel | params | metric | baseline | current | change | CI | own time: change [CI] | verdict |"
        );
        let _ = writeln!(md, "|---|---|---|---:|---:|---:|---|---|---|");
        let mut hidden = 0usize;
        for r in &self.rows {
            if !all_rows && matches!(r.verdict, Verdict::Unchanged | Verdict::Reference) {
                hidden += 1;
                continue;
            }
            let value = |v: Option<f64>| match (v, r.track) {
                (None, _) => "-".to_string(),
                (Some(x), Track::Deterministic) => format!("{x:.0}"),
                (Some(x), Track::Timing) if x >= 1000.0 => format!("{x:.0}"),
                (Some(x), Track::Timing) => format!("{x:.4}"),
            };
            let change = r.change.map(signed_percent).unwrap_or_else(|| "-".into());
            let interval = |ci: Option<(f64, f64)>| {
                ci.map(|(l, h)| format!("[{}, {}]", signed_percent(l), signed_percent(h)))
                    .unwrap_or_else(|| "-".into())
            };
            let ci = interval(r.ci);
            let own = match r.own_change {
                Some(c) => format!("{} {}", signed_percent(c), interval(r.own_ci)),
                None => "-".into(),
            };
            let verdict = match &r.note {
                Some(note) => format!("{} ({note})", r.verdict.label()),
                None => r.verdict.label().to_string(),
            };
            let _ = writeln!(
                md,
                "| {} | {}{} | {} | {} | {} | {} | {} | {} | {} |",
                r.kernel,
                r.params,
                if r.threads == 1 {
                    String::new()
                } else {
                    format!(" ×{}", r.threads)
                },
                r.metric,
                value(r.baseline),
                value(r.current),
                change,
                ci,
                own,
                verdict
            );
        }
        if hidden > 0 {
            let _ = writeln!(
                md,
                "\n{hidden} more row(s) unchanged or reference (`--all-rows` lists them)."
            );
        }
        md
    }
}

fn percent(x: f64) -> String {
    format!("{}%", (x * 1000.0).round() / 10.0)
}

fn signed_percent(x: f64) -> String {
    if x.is_infinite() {
        return if x > 0.0 { "+∞" } else { "-∞" }.into();
    }
    format!("{:+.1}%", x * 100.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::schema::tests::sample_document;
    use crate::results::{Provenance, SimulationScope};

    fn simulated(l1_misses: u64) -> SimulatedMisses {
        SimulatedMisses {
            source: Provenance::Simulated,
            scope: SimulationScope {
                run_accesses: Some(100),
                simulated_accesses: 100,
                kind: "full".into(),
                cut: Some(SimulationCut::None),
                note: None,
            },
            start: "cold".into(),
            levels: vec![SimulatedLevel {
                name: "L1d".into(),
                size: 48 << 10,
                ways: 12,
                line: 64,
                sets: 64,
                loads: 100,
                stores: 0,
                load_misses: l1_misses,
                store_misses: 0,
                misses: l1_misses,
                miss_rate: l1_misses as f64 / 100.0,
                compulsory: l1_misses,
                capacity: 0,
                conflict: 0,
            }],
        }
    }

    /// A two-point document: `row-sum` and the `read` reference, with the given samples.
    fn document(kernel_samples: &[f64], read_samples: &[f64], l1_misses: u64) -> ResultsDocument {
        let mut doc = sample_document();
        let mut kernel = doc.records[0].clone();
        kernel.simulated = Some(simulated(l1_misses));
        kernel.timing.as_mut().unwrap().samples_ns_per_run = kernel_samples.to_vec();
        let mut read = kernel.clone();
        read.index = 1;
        read.kernel = "read".into();
        read.timing.as_mut().unwrap().samples_ns_per_run = read_samples.to_vec();
        doc.records = vec![kernel, read];
        doc.suite.points = 2;
        doc
    }

    fn noisy(center: f64, n: usize, seed: u64) -> Vec<f64> {
        let mut rng = SplitMix64::new(seed);
        (0..n)
            .map(|_| center * (1.0 + (rng.next_u64() % 1000) as f64 / 50_000.0))
            .collect()
    }

    #[test]
    fn identical_documents_pass_with_zero_change() {
        let doc = document(&noisy(100.0, 10, 1), &noisy(50.0, 10, 2), 7);
        let v = compare(&doc, &doc, &CompareOptions::default(), None).unwrap();
        assert!(v.pass, "{v:#?}");
        let timing = v.rows.iter().find(|r| r.track == Track::Timing).unwrap();
        assert_eq!(timing.change, Some(0.0));
        assert_eq!(timing.verdict, Verdict::Unchanged);
        let reference = v
            .rows
            .iter()
            .find(|r| r.kernel == "read" && r.track == Track::Timing)
            .unwrap();
        assert_eq!(reference.verdict, Verdict::Reference);
    }

    #[test]
    fn a_baseline_from_another_cpu_model_is_flagged() {
        let doc = document(&noisy(100.0, 10, 1), &noisy(50.0, 10, 2), 7);
        let on = |model: Option<&str>| {
            let mut d = doc.clone();
            match model {
                Some(m) => d.info["cpu_model"] = m.into(),
                None => {
                    d.info.as_object_mut().unwrap().remove("cpu_model");
                }
            }
            d
        };
        let options = CompareOptions::default();
        let v = compare(&on(Some("CPU A")), &on(Some("CPU B")), &options, None).unwrap();
        let warning = v.machine_warning.as_deref().unwrap();
        assert!(
            warning.contains("`CPU A`") && warning.contains("`CPU B`"),
            "{warning}"
        );
        assert!(v.headline().contains("another CPU model"));
        assert!(v.to_markdown("b.json", false).contains("**Warning:**"));
        for (a, b) in [(Some("CPU A"), Some("CPU A")), (None, Some("CPU B"))] {
            let v = compare(&on(a), &on(b), &options, None).unwrap();
            assert_eq!(v.machine_warning, None, "{a:?} vs {b:?}");
            assert!(!v.headline().contains("WARNING"));
        }
    }

    #[test]
    fn timing_verdicts_follow_the_whole_ci_rule() {
        let base = document(&noisy(100.0, 10, 1), &noisy(50.0, 10, 2), 7);
        // (kernel centre, read centre, expected verdict of the kernel's timing row)
        let cases = [
            (125.0, 50.0, Verdict::Regression),
            (105.0, 50.0, Verdict::Unchanged),
            (80.0, 50.0, Verdict::Improvement),
            // The machine got 25% slower for everything: the ratio cancels it.
            (125.0, 62.5, Verdict::Unchanged),
        ];
        for (k, r, expected) in cases {
            let cur = document(&noisy(k, 10, 3), &noisy(r, 10, 4), 7);
            let v = compare(&base, &cur, &CompareOptions::default(), None).unwrap();
            let timing = v
                .rows
                .iter()
                .find(|r| r.track == Track::Timing && r.kernel == "row-sum")
                .unwrap();
            assert_eq!(timing.verdict, expected, "kernel {k} read {r}: {timing:#?}");
            let (low, high) = timing.ci.unwrap();
            assert!(low <= timing.change.unwrap() && timing.change.unwrap() <= high);
            assert_eq!(v.pass, expected != Verdict::Regression);
        }
    }

    /// An interleaved read reference with the given ratio and per-round samples.
    fn read_reference(
        ratio: f64,
        samples_ns_per_run: Vec<f64>,
    ) -> crate::results::ReferenceComparison {
        crate::results::ReferenceComparison {
            reference: "read".into(),
            bytes: 8,
            variants: BTreeMap::new(),
            best_variant: "plain".into(),
            reference_gb_per_s: 1.0,
            ratio,
            samples_ns_per_run,
        }
    }

    #[test]
    fn points_without_a_reference_are_divided_by_the_runs_speed() {
        // A bandwidth kernel with an interleaved reference and a probe without one.
        let with_reference = |kernel: f64, reference: f64, probe: f64| {
            let mut doc = document(&noisy(kernel, 10, 1), &noisy(50.0, 10, 2), 7);
            let mut probe_record = doc.records[0].clone();
            probe_record.index = 2;
            probe_record.kernel = "chase".into();
            probe_record.timing.as_mut().unwrap().samples_ns_per_run = noisy(probe, 10, 5);
            let timing = doc.records[0].timing.as_mut().unwrap();
            timing.ns_per_run.median = median_of_sorted(&sorted(&timing.samples_ns_per_run));
            let ratio = reference / timing.ns_per_run.median;
            doc.records[0].reference = Some(read_reference(ratio, Vec::new()));
            doc.records.push(probe_record);
            doc.suite.points = 3;
            doc
        };
        let base = with_reference(100.0, 80.0, 1000.0);
        // Everything 25% slower, the references too: nothing regressed.
        let slower_machine = with_reference(125.0, 100.0, 1250.0);
        let v = compare(&base, &slower_machine, &CompareOptions::default(), None).unwrap();
        assert!(v.pass, "{:#?}", v.rows);
        assert!((v.run_speed.unwrap() - 1.25).abs() < 1e-9);
        let probe = v
            .rows
            .iter()
            .find(|r| r.kernel == "chase" && r.track == Track::Timing)
            .unwrap();
        assert_eq!(probe.metric, "ns/run ÷ run speed (timed)");
        assert!(probe.change.unwrap().abs() < 0.02, "{probe:#?}");
        // Only the probe slower: a regression of the probe alone.
        let slower_probe = with_reference(100.0, 80.0, 1300.0);
        let v = compare(&base, &slower_probe, &CompareOptions::default(), None).unwrap();
        assert_eq!(v.regressed.len(), 1, "{:#?}", v.rows);
        assert!(v.regressed[0].starts_with("chase "));
    }

    #[test]
    fn paired_references_cancel_slow_machine_swings_sample_by_sample() {
        // Half of each run's rounds ran on a machine 40% slower (kernel and its paired reference
        // alike); the second run has more slow rounds. Unpaired medians would move by ~40%.
        let with_pairs = |slow_rounds: usize, kernel_factor: f64, reference_factor: f64| {
            let n = 20;
            let kernel: Vec<f64> = noisy(100.0, n, 3)
                .iter()
                .enumerate()
                .map(|(i, x)| x * kernel_factor * if i < slow_rounds { 1.4 } else { 1.0 })
                .collect();
            let reference: Vec<f64> = noisy(80.0, n, 4)
                .iter()
                .enumerate()
                .map(|(i, x)| x * reference_factor * if i < slow_rounds { 1.4 } else { 1.0 })
                .collect();
            let mut doc = document(&kernel, &noisy(50.0, n, 2), 7);
            let timing = doc.records[0].timing.as_mut().unwrap();
            timing.ns_per_run.median = median_of_sorted(&sorted(&kernel));
            let ratio = median_of_sorted(&sorted(&reference)) / median_of_sorted(&sorted(&kernel));
            doc.records[0].reference = Some(read_reference(ratio, reference));
            doc
        };
        let base = with_pairs(5, 1.0, 1.0);
        let judge = |current: ResultsDocument| {
            compare(&base, &current, &CompareOptions::default(), None).unwrap()
        };
        let v = judge(with_pairs(15, 1.0, 1.0));
        let row = v
            .rows
            .iter()
            .find(|r| r.kernel == "row-sum" && r.track == Track::Timing);
        let row = row.unwrap();
        assert_eq!(row.metric, "time ÷ read, paired per round (timed)");
        assert!(row.change.unwrap().abs() < 0.03, "{row:#?}");
        assert!(v.pass, "{:#?}", v.rows);
        // A real 25% slowdown of the kernel alone is still a regression.
        let v = judge(with_pairs(15, 1.25, 1.0));
        assert!(!v.pass, "{:#?}", v.rows);
        assert_eq!(v.regressed.len(), 1);
        assert!(v.regressed[0].starts_with("row-sum "), "{:?}", v.regressed);
        // The reference alone 30% faster: the ratio rises by ~40%, the point's own time does
        // not, so it is not the point that regressed.
        let v = judge(with_pairs(5, 1.0, 0.7));
        assert!(v.pass, "{:#?}", v.rows);
        let row = v
            .rows
            .iter()
            .find(|r| r.kernel == "row-sum" && r.track == Track::Timing);
        let row = row.unwrap();
        assert!(row.ci.unwrap().0 > 0.3, "{row:#?}");
        assert!(row.own_ci.unwrap().0 < 0.1, "{row:#?}");
        assert!(
            row.note
                .as_deref()
                .unwrap()
                .contains("only the ratio moved"),
            "{row:#?}"
        );
    }

    #[test]
    fn a_wide_ci_is_not_a_regression_even_when_the_median_moved() {
        let base = document(&noisy(100.0, 10, 1), &noisy(50.0, 10, 2), 7);
        let wild: Vec<f64> = (0..10)
            .map(|i| if i % 2 == 0 { 80.0 } else { 160.0 })
            .collect();
        let cur = document(&wild, &noisy(50.0, 10, 4), 7);
        let v = compare(&base, &cur, &CompareOptions::default(), None).unwrap();
        assert!(v.pass, "{:#?}", v.rows);
    }

    #[test]
    fn simulated_misses_must_match_exactly_unless_a_tolerance_is_given() {
        let base = document(&noisy(100.0, 10, 1), &noisy(50.0, 10, 2), 100);
        for (misses, tolerance, verdict) in [
            (100, 0.0, Verdict::Unchanged),
            (101, 0.0, Verdict::Regression),
            (99, 0.0, Verdict::Improvement),
            (101, 0.02, Verdict::Unchanged),
        ] {
            let cur = document(&noisy(100.0, 10, 1), &noisy(50.0, 10, 2), misses);
            let options = CompareOptions {
                sim_tolerance: tolerance,
                ..CompareOptions::default()
            };
            let v = compare(&base, &cur, &options, None).unwrap();
            let row = v
                .rows
                .iter()
                .find(|r| r.track == Track::Deterministic && r.kernel == "row-sum")
                .unwrap();
            assert_eq!(
                row.verdict, verdict,
                "{misses} misses, tolerance {tolerance}"
            );
            assert_eq!(
                v.deterministic_regressions > 0,
                verdict == Verdict::Regression
            );
        }
    }

    #[test]
    fn confirmation_keeps_only_repeated_timing_regressions() {
        let base = document(&noisy(100.0, 10, 1), &noisy(50.0, 10, 2), 7);
        let slow = document(&noisy(130.0, 10, 3), &noisy(50.0, 10, 4), 7);
        let first = compare(&base, &slow, &CompareOptions::default(), None).unwrap();
        assert!(!first.pass);
        let again = compare(&base, &slow, &CompareOptions::default(), Some(&first)).unwrap();
        assert!(!again.pass, "a repeated regression is confirmed");
        let clean = compare(&base, &base, &CompareOptions::default(), None).unwrap();
        let unconfirmed = compare(&base, &slow, &CompareOptions::default(), Some(&clean)).unwrap();
        assert!(unconfirmed.pass);
        assert_eq!(unconfirmed.unconfirmed_timing_regressions, 1);
    }

    #[test]
    fn the_fixture_switch_matches_the_real_kernels_baseline() {
        let base = document(&noisy(100.0, 10, 1), &noisy(50.0, 10, 2), 7);
        let mut cur = document(&noisy(100.0, 10, 1), &noisy(50.0, 10, 2), 7);
        cur.records[0]
            .params
            .insert(FIXTURE_PARAM.into(), crate::vocab::ParamValue::Int(1));
        let v = compare(&base, &cur, &CompareOptions::default(), None).unwrap();
        assert!(v.rows.iter().all(|r| r.verdict != Verdict::New), "{v:#?}");
        assert!(v.rows[0].params.contains("deopt=1"));
    }

    #[test]
    fn input_problems_are_errors_not_verdicts() {
        let base = document(&noisy(100.0, 10, 1), &noisy(50.0, 10, 2), 7);
        let mut fewer = base.clone();
        fewer.records.pop();
        assert!(matches!(
            compare(&base, &fewer, &CompareOptions::default(), None),
            Err(CompareError::SuiteChanged { missing: 1, .. })
        ));
        let mut other_geometry = base.clone();
        for r in &mut other_geometry.records {
            r.simulated.as_mut().unwrap().levels[0].ways = 8;
        }
        assert!(matches!(
            compare(&base, &other_geometry, &CompareOptions::default(), None),
            Err(CompareError::GeometryMismatch { .. })
        ));
        let mut interrupted = base.clone();
        interrupted.status = RunStatus::Interrupted;
        assert!(matches!(
            compare(&base, &interrupted, &CompareOptions::default(), None),
            Err(CompareError::Interrupted { .. })
        ));
        let mut renamed = base.clone();
        renamed.suite.name = "full".into();
        assert!(matches!(
            compare(&renamed, &base, &CompareOptions::default(), None),
            Err(CompareError::SuiteName { .. })
        ));
    }

    #[test]
    fn a_failed_current_point_fails_the_gate() {
        let base = document(&noisy(100.0, 10, 1), &noisy(50.0, 10, 2), 7);
        let mut cur = base.clone();
        cur.records[0].checksum.status = ChecksumOutcome::Mismatch;
        let v = compare(&base, &cur, &CompareOptions::default(), None).unwrap();
        assert!(!v.pass);
        assert_eq!(v.failures, 1);
        assert!(v.to_markdown("b.json", false).contains("**FAILED**"));
    }
}
