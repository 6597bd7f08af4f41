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
//!    reference's median instead; points timed without one (probes, chases, strides) are
//!    divided by the run's speed — the median over all interleaved references of their time
//!    now ÷ then — and only a run without any interleaved reference falls back to the suite's
//!    own `read` point (`copy` for kernels that write), whose samples are then resampled too.
//!    The change of that ratio against the baseline gets a seeded percentile-bootstrap CI, and
//!    so does the change of the point's own time (no reference). A regression only when both
//!    whole CIs lie above `+threshold`, an improvement only when both lie below `-threshold`:
//!    a code change moves both, a slower machine moves only the own time, and a reference
//!    whose speed changed alone moves only the ratio (a throughput-bound read feels a busy SMT
//!    sibling that a latency-bound kernel does not). The reference points themselves are
//!    shown, not judged.
//!
//! With `confirm` (a previous verdict), a timing regression counts only when the same row
//! regressed there too: `scripts/ci-gate.sh` uses this to re-run before failing on timing.
//!
//! Input problems (suite changed, geometry differs, run interrupted) are [`CompareError`]s:
//! the CLI exits 2 with the fix named, never a silent pass.
//!
//! Files: `matching` (point keys, the comparability checks, matching points), `simulated` (the
//! deterministic track), `normalise` and `timing` (the timing track), `verdict` (the result
//! types), `render` (headline and Markdown).

mod matching;
mod normalise;
mod render;
mod simulated;
mod timing;
mod verdict;

#[cfg(test)]
mod test_fixtures;

use std::collections::BTreeSet;

use crate::results::{ChecksumOutcome, ResultsDocument};

pub use matching::{CompareError, geometry_label, point_key, recorded_preset};
pub use verdict::{GateRow, GateVerdict, Track, Verdict};

use matching::Matched;
use normalise::{References, RunSpeed, run_speed};

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

/// Compares `current` with `baseline`. `confirm` is an earlier verdict whose timing
/// regressions a regression here must repeat to count.
pub fn compare(
    baseline: &ResultsDocument,
    current: &ResultsDocument,
    options: &CompareOptions,
    confirm: Option<&GateVerdict>,
) -> Result<GateVerdict, CompareError> {
    let geometry = matching::check_comparable(baseline, current)?;
    let matched = matching::match_points(baseline, current)?;
    let speed = run_speed(&matched);
    let refs = (References::of(baseline), References::of(current));
    let rows = point_rows(&matched, &refs, speed, options, confirm);
    let mut verdict = tally(rows, options, geometry, speed);
    verdict.machine_warning = machine_warning(baseline, current);
    Ok(verdict)
}

/// The rows of every matched point: a failed point's one row, else its simulated levels and
/// its timing (a timing regression that `confirm` did not see is only unconfirmed).
fn point_rows(
    matched: &[Matched<'_>],
    (base_refs, cur_refs): &(References<'_>, References<'_>),
    speed: Option<RunSpeed>,
    options: &CompareOptions,
    confirm: Option<&GateVerdict>,
) -> Vec<GateRow> {
    let confirmed: Option<BTreeSet<&str>> =
        confirm.map(|v| v.regressed.iter().map(String::as_str).collect());
    let mut rows = Vec::new();
    for (row_index, (cur, base)) in matched.iter().enumerate() {
        let Some(base) = base else {
            rows.push(GateRow::of(cur, Track::Timing, "-", Verdict::New, None));
            continue;
        };
        if cur.checksum.status != ChecksumOutcome::Ok || cur.error.is_some() {
            let why = cur
                .error
                .as_ref()
                .map(|e| format!("{}: {}", e.stage, e.message))
                .unwrap_or_else(|| format!("checksum {:?}", cur.checksum.status));
            let failed = GateRow::of(cur, Track::Timing, "point", Verdict::Failed, Some(why));
            rows.push(failed);
            continue;
        }
        simulated::deterministic_rows(base, cur, options, &mut rows);
        let mut timing = timing::timing_row(
            (base, base_refs),
            (cur, cur_refs),
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
    rows
}

/// The verdict over `rows`: counts per track and outcome, and the ids that fail the gate.
fn tally(
    rows: Vec<GateRow>,
    options: &CompareOptions,
    geometry: String,
    speed: Option<RunSpeed>,
) -> GateVerdict {
    let count = |track: Option<Track>, verdict: Verdict| {
        rows.iter()
            .filter(|r| track.is_none_or(|t| r.track == t) && r.verdict == verdict)
            .count()
    };
    let regressed: Vec<String> = rows
        .iter()
        .filter(|r| matches!(r.verdict, Verdict::Regression | Verdict::Failed))
        .map(|r| r.id.clone())
        .collect();
    GateVerdict {
        pass: regressed.is_empty(),
        threshold: options.threshold,
        sim_tolerance: options.sim_tolerance,
        confidence: options.confidence,
        resamples: options.resamples,
        seed: options.seed,
        geometry,
        run_speed: speed.map(|s| s.factor),
        run_speed_references: speed.map_or(0, |s| s.references),
        machine_warning: None,
        deterministic_regressions: count(Some(Track::Deterministic), Verdict::Regression),
        timing_regressions: count(Some(Track::Timing), Verdict::Regression),
        unconfirmed_timing_regressions: count(Some(Track::Timing), Verdict::Unconfirmed),
        failures: count(None, Verdict::Failed),
        improvements: count(None, Verdict::Improvement),
        regressed,
        rows,
    }
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

#[cfg(test)]
mod tests {
    use super::test_fixtures::{document, noisy};
    use super::*;

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
