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
//! When the two documents come from different CPU models or cache geometries, timing is not
//! compared at all ("not comparable": ratios do not carry across machines) and only the
//! simulated track judges. A comparison that judged nothing on a track that should have judged
//! is an error, never a pass.
//!
//! Input problems (suite changed, geometry differs, run interrupted) are [`CompareError`]s:
//! the CLI exits 2 with the fix named, never a silent pass.
//!
//! Two builds measured in the same rounds (`stridelab gate --base`) are judged by `paired`
//! instead: paired log-ratios, a sign (or signed-rank) test and interval, Holm's correction.
//!
//! Files: `matching` (point keys, the comparability checks, matching points), `simulated` (the
//! deterministic track), `normalise` and `timing` (the stored-baseline timing track), `paired`
//! (the paired-builds timing track), `verdict` (the result types), `advice` (what a user can
//! do about what a verdict could not judge), `render` (headline and Markdown).

mod advice;
mod matching;
mod normalise;
mod paired;
mod render;
mod simulated;
mod timing;
mod verdict;

#[cfg(test)]
mod test_fixtures;

use crate::results::{ChecksumOutcome, ResultsDocument};

pub use advice::undecided_points;
pub use matching::{CompareError, geometry_label, point_key, recorded_preset};
pub use paired::{PointRounds, Undecided, judge_paired, same_point};
pub use verdict::{
    BaseBuildCost, GateMethod, GateRow, GateVerdict, MachineDifference, PairedOptions,
    PairedStatistic, RoundsContext, StopCause, Track, Verdict,
};

use matching::Matched;
use normalise::{References, RunSpeed, run_speed};

/// The manifest key (`info.gate`) under which `stridelab gate` records how its run was made.
pub const GATE_MANIFEST_KEY: &str = "gate";

/// How to compare with a stored baseline.
#[derive(Debug, Clone, PartialEq)]
pub struct CompareOptions {
    /// How the verdict names the baseline (its path as given).
    pub baseline_label: String,
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
            baseline_label: "baseline".into(),
            threshold: 0.10,
            sim_tolerance: 0.0,
            resamples: 2000,
            confidence: 0.95,
            seed: 0x6A7E_5EED,
        }
    }
}

/// Compares `current` with `baseline`: simulated misses always, timing when both come from
/// the same CPU model and cache geometry.
pub fn compare(
    baseline: &ResultsDocument,
    current: &ResultsDocument,
    options: &CompareOptions,
) -> Result<GateVerdict, CompareError> {
    let geometry = matching::check_comparable(baseline, current)?;
    let matched = matching::match_points(baseline, current)?;
    let not_comparable = timing_not_comparable(baseline, current);
    let speed = run_speed(&matched);
    let refs = (References::of(baseline), References::of(current));
    let differs_in = not_comparable.as_ref().map(|(what, _)| *what);
    let rows = point_rows(&matched, &refs, speed, options, differs_in);
    let method = GateMethod::StoredBaseline {
        baseline: options.baseline_label.clone(),
        threshold: options.threshold,
        confidence: options.confidence,
        resamples: options.resamples,
        seed: options.seed,
        run_speed: speed.map(|s| s.factor),
        run_speed_references: speed.map_or(0, |s| s.references),
        timing_not_comparable: not_comparable.as_ref().map(|(_, why)| why.clone()),
        timing_differs_in: differs_in,
    };
    let mut verdict = GateVerdict::tally(rows, method, options.sim_tolerance, geometry);
    verdict
        .advice
        .extend(differs_in.map(advice::timing_not_comparable));
    check_judged(&verdict, not_comparable.is_some())?;
    Ok(verdict)
}

/// The rows of every matched point: a failed point's one row, else its simulated levels and
/// its timing (`not_comparable`: the timing row only names what differs; the verdict's method
/// says it in full, once).
fn point_rows(
    matched: &[Matched<'_>],
    (base_refs, cur_refs): &(References<'_>, References<'_>),
    speed: Option<RunSpeed>,
    options: &CompareOptions,
    not_comparable: Option<MachineDifference>,
) -> Vec<GateRow> {
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
        if let Some(what) = not_comparable {
            let row = GateRow::of(
                cur,
                Track::Timing,
                "time (timed)",
                Verdict::NotCompared,
                Some(what.label().to_string()),
            );
            rows.push(row);
            continue;
        }
        rows.push(timing::timing_row(
            (base, base_refs),
            (cur, cur_refs),
            speed,
            options,
            row_index as u64,
        ));
    }
    rows
}

/// Why timing cannot be compared between the documents (another CPU model or another
/// detected cache geometry, from their manifests), if it cannot: what differs, and the reason
/// in full.
pub(crate) fn timing_not_comparable(
    baseline: &ResultsDocument,
    current: &ResultsDocument,
) -> Option<(MachineDifference, String)> {
    let model = |doc: &ResultsDocument| {
        doc.info
            .get("cpu_model")
            .and_then(|m| m.as_str())
            .map(str::to_owned)
    };
    if let (Some(then), Some(now)) = (model(baseline), model(current))
        && then != now
    {
        return Some((
            MachineDifference::CpuModel,
            format!(
                "the baseline was recorded on `{then}`, this run on `{now}`, and timing ratios do not carry across CPU models"
            ),
        ));
    }
    match (machine_geometry(baseline), machine_geometry(current)) {
        (Some(then), Some(now)) if then != now => Some((
            MachineDifference::CacheGeometry,
            format!(
                "the baseline's machine has caches {then}, this one {now}, and timing ratios do not carry across cache geometries"
            ),
        )),
        _ => None,
    }
}

/// The detected data and unified cache levels of a document's manifest (`info.caches`), in
/// one line.
fn machine_geometry(doc: &ResultsDocument) -> Option<String> {
    let levels = doc.info.get("caches")?.as_array()?;
    let described: Vec<String> = levels
        .iter()
        .filter(|l| l.get("kind").and_then(|k| k.as_str()) != Some("instruction"))
        .map(|l| {
            let field = |name: &str| l.get(name).map(|v| v.to_string()).unwrap_or_default();
            format!(
                "{} {} B {}-way {} B lines",
                field("name").trim_matches('"'),
                field("size"),
                field("ways"),
                field("line")
            )
        })
        .collect();
    (!described.is_empty()).then(|| described.join(", "))
}

/// A comparison that judged nothing where it should have is refused: with comparable timing,
/// at least one timing row; in any case, at least one row of some track.
pub fn check_judged(
    verdict: &GateVerdict,
    timing_not_comparable: bool,
) -> Result<(), CompareError> {
    let why_not = |track: Track| {
        verdict
            .rows
            .iter()
            .filter(|r| r.track == track)
            .find_map(|r| r.note.clone())
            .unwrap_or_else(|| "no rows".into())
    };
    if !timing_not_comparable && verdict.timing_judged == 0 && verdict.failures == 0 {
        return Err(CompareError::NothingTimed {
            points: verdict.timing_rows,
            why: why_not(Track::Timing),
        });
    }
    if verdict.timing_judged + verdict.simulated_judged == 0 && verdict.failures == 0 {
        return Err(CompareError::NothingJudged {
            why: why_not(Track::Deterministic),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::test_fixtures::{document, noisy};
    use super::*;

    fn on_machine(doc: &ResultsDocument, model: Option<&str>, l1_ways: u64) -> ResultsDocument {
        let mut d = doc.clone();
        match model {
            Some(m) => d.info["cpu_model"] = m.into(),
            None => {
                d.info.as_object_mut().unwrap().remove("cpu_model");
            }
        }
        d.info["caches"] = serde_json::json!([
            {"name": "L1i", "kind": "instruction", "size": 32768, "ways": 8, "line": 64},
            {"name": "L1d", "kind": "data", "size": 49152, "ways": l1_ways, "line": 64},
        ]);
        d
    }

    #[test]
    fn another_cpu_model_or_geometry_makes_timing_not_comparable_and_misses_still_judge() {
        let base = document(&noisy(100.0, 10, 1), &noisy(50.0, 10, 2), 7);
        // The kernel 30% slower relative to its reference: a regression on one machine.
        let slower = document(&noisy(130.0, 10, 3), &noisy(50.0, 10, 4), 7);
        let options = CompareOptions::default();
        let same = compare(
            &on_machine(&base, Some("CPU A"), 12),
            &on_machine(&slower, Some("CPU A"), 12),
            &options,
        );
        assert!(!same.unwrap().pass);
        // (current model, current L1d ways, what the reason names, what differs)
        for (model, ways, named, differs) in [
            (Some("CPU B"), 12, "`CPU B`", MachineDifference::CpuModel),
            (Some("CPU A"), 8, "8-way", MachineDifference::CacheGeometry),
        ] {
            let v = compare(
                &on_machine(&base, Some("CPU A"), 12),
                &on_machine(&slower, model, ways),
                &options,
            )
            .unwrap();
            assert!(v.pass, "{:#?}", v.rows);
            let GateMethod::StoredBaseline {
                timing_not_comparable: Some(why),
                ..
            } = &v.method
            else {
                panic!("{:?}", v.method);
            };
            assert!(why.contains(named), "{why}");
            assert_eq!(v.timing_judged, 0);
            assert!(v.simulated_judged > 0);
            assert!(
                v.headline().contains(&format!(
                    "timing not judged (the baseline comes from {})",
                    differs.label()
                )),
                "{}",
                v.headline()
            );
            // The reason is said once; each row only names what differs; the advice says how to
            // judge timing here.
            let md = v.to_markdown(true);
            assert_eq!(md.matches(why.as_str()).count(), 1, "{md}");
            for row in v.rows.iter().filter(|r| r.track == Track::Timing) {
                assert_eq!(row.note.as_deref(), Some(differs.label()), "{row:#?}");
            }
            assert_eq!(v.advice.len(), 1, "{:#?}", v.advice);
            assert!(md.contains("`stridelab gate --base origin/main`"), "{md}");
            assert!(md.contains("`stridelab gate --save-baseline FILE`"), "{md}");
            // One simulated miss more (in both points of the fixture) still fails.
            let more_misses = document(&noisy(130.0, 10, 3), &noisy(50.0, 10, 4), 8);
            let v = compare(
                &on_machine(&base, Some("CPU A"), 12),
                &on_machine(&more_misses, model, ways),
                &options,
            );
            assert_eq!(v.unwrap().deterministic_regressions, 2);
        }
        // An unknown model on one side is no reason to set timing aside.
        let v = compare(
            &on_machine(&base, None, 12),
            &on_machine(&slower, Some("CPU B"), 12),
            &options,
        );
        assert!(!v.unwrap().pass);
    }

    #[test]
    fn a_comparison_that_timed_nothing_is_refused_not_passed() {
        // One latency-like point and no reference of any kind: nothing to divide its time by.
        let mut doc = document(&noisy(100.0, 10, 1), &noisy(50.0, 10, 2), 7);
        doc.records.truncate(1);
        doc.suite.points = 1;
        let err = compare(&doc, &doc, &CompareOptions::default()).unwrap_err();
        assert!(
            matches!(err, CompareError::NothingTimed { points: 1, .. }),
            "{err}"
        );
        assert!(err.to_string().contains("no same-run reference"), "{err}");
    }

    #[test]
    fn a_failed_current_point_fails_the_gate() {
        let base = document(&noisy(100.0, 10, 1), &noisy(50.0, 10, 2), 7);
        let mut cur = base.clone();
        cur.records[0].checksum.status = ChecksumOutcome::Mismatch;
        let v = compare(&base, &cur, &CompareOptions::default()).unwrap();
        assert!(!v.pass);
        assert_eq!(v.failures, 1);
        assert!(v.to_markdown(false).contains("**FAILED**"));
    }
}
