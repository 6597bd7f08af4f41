//! The paired timing track: a base build and a candidate build measured in the same rounds,
//! each round giving one ratio per point (candidate time ÷ base time, each the median of one
//! fresh process's samples). Judged per point on the log-ratios:
//! 1. by the options' statistic, the estimate is their median and the interval the sign test's
//!    (`stats::sign_test`, the default: a wild round is one vote), or the Hodges–Lehmann shift
//!    and the signed-rank interval (`stats::signed_rank`), both turned back into relative
//!    changes;
//! 2. each point's one-sided p-value that the shift exceeds the noise floor, corrected for the
//!    number of points by Holm's procedure at family-wise level α; the interval is shown at
//!    the level the point was held to;
//! 3. a **regression** when the test rejects (the interval lies above the floor) and the
//!    estimate lies above the threshold; an **improvement** mirrored; **unchanged** when the
//!    interval's upper end lies below the threshold (a slowdown of the threshold's size is
//!    ruled out); otherwise **inconclusive**: the gate gives such points more rounds
//!    while they could still be slower.
//!
//! The simulated misses of the two builds' first records are compared exactly (the
//! deterministic track, `simulated`).

use thiserror::Error;

use super::simulated::deterministic_rows;
use super::verdict::{GateRow, PairedOptions, PairedStatistic, Track, Verdict};
use super::{CompareOptions, matching::point_key};
use crate::results::PointRecord;
use crate::stats::sign_test::SignTest;
use crate::stats::signed_rank::{SignedRank, hodges_lehmann, holm, walsh_averages};
use crate::stats::{median_of_sorted, sorted};

/// One gate point as both builds measured it.
#[derive(Debug, Clone)]
pub struct PointRounds {
    /// The base build's record of the first round (its identity and simulation).
    pub base: PointRecord,
    /// The candidate's record of the first round.
    pub candidate: PointRecord,
    /// Per round: (base, candidate) median time of one run, in ns.
    pub times: Vec<(f64, f64)>,
    /// The candidate failed the point (wrong checksum, a process that failed): fails the gate.
    pub failure: Option<String>,
    /// Why the two builds' records cannot be compared (they measured different points).
    pub not_comparable: Option<String>,
}

/// The rows of every point, in the points' order, and which points are still inconclusive.
#[derive(Debug, Clone)]
pub struct PairedJudgement {
    pub rows: Vec<GateRow>,
    /// The timing verdicts that more rounds could still decide.
    pub inconclusive: Vec<Undecided>,
}

/// An inconclusive point: its index into the points and its estimate (a relative change), by
/// which the gate decides whether more rounds could still make it a regression.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Undecided {
    pub point: usize,
    pub change: f64,
}

/// The metric of a paired timing row.
pub const PAIRED_METRIC: &str = "time per run, paired rounds (timed)";

/// One point's log-ratio statistics before the correction.
struct Tested {
    point: usize,
    /// What the interval is read from: the sorted log-ratios (sign) or Walsh averages.
    ordered: Vec<f64>,
    null: Null,
    estimate: f64,
    p: f64,
}

/// The statistic's exact null distribution for the point's number of rounds.
enum Null {
    Sign(SignTest),
    SignedRank(SignedRank),
}

impl Tested {
    fn new(point: usize, logs: &[f64], statistic: PairedStatistic, floor: f64) -> Self {
        let (ordered, null, estimate) = match statistic {
            PairedStatistic::Sign => {
                let ordered = sorted(logs);
                let estimate = median_of_sorted(&ordered);
                (ordered, Null::Sign(SignTest::new(logs.len())), estimate)
            }
            PairedStatistic::SignedRank => {
                let walsh = walsh_averages(logs);
                let estimate = hodges_lehmann(&walsh);
                (
                    walsh,
                    Null::SignedRank(SignedRank::new(logs.len())),
                    estimate,
                )
            }
        };
        let p = match &null {
            Null::Sign(t) => t.p_above(&ordered, floor),
            Null::SignedRank(d) => d.p_above(&ordered, floor),
        };
        Self {
            point,
            ordered,
            null,
            estimate,
            p,
        }
    }

    /// The interval at one-sided level `a`, on the log scale.
    fn interval(&self, a: f64) -> (f64, f64) {
        match &self.null {
            Null::Sign(t) => t.interval(&self.ordered, a),
            Null::SignedRank(d) => d.interval(&self.ordered, a),
        }
    }
}

/// Judges every point (see the module doc).
pub fn judge_paired(points: &[PointRounds], options: &PairedOptions) -> PairedJudgement {
    let floor = options.floor.ln_1p();
    let tested: Vec<Tested> = points
        .iter()
        .enumerate()
        .filter(|(_, p)| p.failure.is_none() && p.not_comparable.is_none() && !p.times.is_empty())
        .map(|(point, p)| {
            let logs: Vec<f64> = p.times.iter().map(|(b, c)| (c / b).ln()).collect();
            Tested::new(point, &logs, options.statistic, floor)
        })
        .collect();
    let p_values: Vec<f64> = tested.iter().map(|t| t.p).collect();
    let steps = holm(&p_values, options.alpha);
    let mut timing: Vec<Option<GateRow>> = vec![None; points.len()];
    let mut inconclusive = Vec::new();
    for (t, step) in tested.iter().zip(&steps) {
        let point = &points[t.point];
        let mut row = GateRow::of(
            &point.candidate,
            Track::Timing,
            PAIRED_METRIC,
            Verdict::Inconclusive,
            None,
        );
        let (low, high) = t.interval(step.level);
        let median_of = |pick: fn(&(f64, f64)) -> f64| {
            median_of_sorted(&sorted(&point.times.iter().map(pick).collect::<Vec<_>>()))
        };
        row.baseline = Some(median_of(|t| t.0));
        row.current = Some(median_of(|t| t.1));
        row.change = Some(t.estimate.exp_m1());
        row.ci = Some((low.exp_m1(), high.exp_m1()));
        row.rounds = Some(point.times.len());
        row.ratios = point.times.iter().map(|(b, c)| c / b).collect();
        row.p_value = Some(t.p);
        row.level = Some(step.level);
        row.verdict = verdict_of(t.estimate, (low, high), step.rejected, options);
        if row.verdict == Verdict::Unchanged && step.rejected {
            row.note = Some(format!(
                "slower beyond the {} floor, but by less than the {} threshold",
                percent(options.floor),
                percent(options.threshold)
            ));
        }
        if row.verdict == Verdict::Inconclusive {
            inconclusive.push(Undecided {
                point: t.point,
                change: t.estimate.exp_m1(),
            });
        }
        timing[t.point] = Some(row);
    }
    let compare = CompareOptions {
        sim_tolerance: options.sim_tolerance,
        ..CompareOptions::default()
    };
    let mut rows = Vec::new();
    for (index, point) in points.iter().enumerate() {
        if let Some(why) = &point.not_comparable {
            let row = GateRow::of(
                &point.candidate,
                Track::Timing,
                PAIRED_METRIC,
                Verdict::NotCompared,
                Some(why.clone()),
            );
            rows.push(row);
            continue;
        }
        if let Some(why) = &point.failure {
            let failed = GateRow::of(
                &point.candidate,
                Track::Timing,
                "point",
                Verdict::Failed,
                Some(why.clone()),
            );
            rows.push(failed);
            continue;
        }
        deterministic_rows(&point.base, &point.candidate, &compare, &mut rows);
        if let Some(row) = timing[index].take() {
            rows.push(row);
        }
    }
    PairedJudgement { rows, inconclusive }
}

/// The verdict of one point from its estimate, interval (log scale) and Holm rejection.
fn verdict_of(
    estimate: f64,
    (low, high): (f64, f64),
    rejected: bool,
    o: &PairedOptions,
) -> Verdict {
    let (threshold, floor) = (o.threshold.ln_1p(), o.floor.ln_1p());
    if rejected && estimate > threshold {
        Verdict::Regression
    } else if high < -floor && estimate < -threshold {
        Verdict::Improvement
    } else if high < threshold {
        // A slowdown of the threshold's size is ruled out (faster or not).
        Verdict::Unchanged
    } else {
        debug_assert!(high >= low);
        Verdict::Inconclusive
    }
}

/// Two builds' records of one gate point that name different points (each build resolves the
/// point with its own catalogue, so a changed default shows here); the keys are
/// `matching::point_key`s.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("the builds measured different points: base `{base}`, candidate `{candidate}`")]
pub struct PointMismatch {
    pub base: String,
    pub candidate: String,
}

/// Checks that two records of one point are the same point (kernel, threads, parameters).
pub fn same_point(base: &PointRecord, candidate: &PointRecord) -> Result<(), PointMismatch> {
    let (base, candidate) = (point_key(base), point_key(candidate));
    if base == candidate {
        Ok(())
    } else {
        Err(PointMismatch { base, candidate })
    }
}

fn percent(x: f64) -> String {
    format!("{}%", (x * 1000.0).round() / 10.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::compare::test_fixtures::document;
    use crate::stats::SplitMix64;

    const OPTIONS: PairedOptions = PairedOptions {
        threshold: 0.02,
        floor: 0.01,
        alpha: 0.05,
        sim_tolerance: 0.0,
        statistic: PairedStatistic::Sign,
    };
    const BOTH: [PairedStatistic; 2] = [PairedStatistic::Sign, PairedStatistic::SignedRank];

    /// Records of different points are refused with both keys, in the words of the note.
    #[test]
    fn different_points_are_named_by_both_keys() {
        let doc = document(&[100.0], &[50.0], 7);
        let (kernel, read) = (&doc.records[0], &doc.records[1]);
        assert_eq!(same_point(kernel, kernel), Ok(()));
        let mismatch = same_point(kernel, read).unwrap_err();
        assert_eq!(
            mismatch.to_string(),
            format!(
                "the builds measured different points: base `{}`, candidate `{}`",
                point_key(kernel),
                point_key(read)
            )
        );
    }

    /// A point whose candidate takes `factor` × the base's time, with ±`noise` (relative,
    /// uniform) in every process, over `rounds` rounds.
    fn point(factor: f64, noise: f64, rounds: usize, seed: u64) -> PointRounds {
        let doc = document(&[100.0], &[50.0], 7);
        let mut rng = SplitMix64::new(seed);
        let mut jitter = || 1.0 + noise * ((rng.next_u64() % 2001) as f64 / 1000.0 - 1.0);
        let times = (0..rounds)
            .map(|_| (100.0 * jitter(), 100.0 * factor * jitter()))
            .collect();
        PointRounds {
            base: doc.records[0].clone(),
            candidate: doc.records[0].clone(),
            times,
            failure: None,
            not_comparable: None,
        }
    }

    fn timing_verdicts(j: &PairedJudgement) -> Vec<Verdict> {
        j.rows
            .iter()
            .filter(|r| r.track == Track::Timing)
            .map(|r| r.verdict)
            .collect()
    }

    #[test]
    fn verdicts_follow_the_interval_the_floor_and_the_threshold() {
        // (candidate factor, noise, rounds, expected verdict)
        let cases = [
            (1.30, 0.01, 12, Verdict::Regression),
            (1.05, 0.01, 12, Verdict::Regression),
            (1.00, 0.01, 12, Verdict::Unchanged),
            (0.80, 0.01, 12, Verdict::Improvement),
            // A real but small slowdown: significant, below the threshold.
            (1.015, 0.002, 12, Verdict::Unchanged),
            // Too noisy to rule a 2% slowdown out or in: more rounds.
            (1.00, 0.20, 12, Verdict::Inconclusive),
            // Four rounds cannot reach the level at all, however clear the change.
            (1.30, 0.01, 4, Verdict::Inconclusive),
        ];
        for (statistic, (factor, noise, rounds, expected)) in BOTH
            .into_iter()
            .flat_map(|s| cases.into_iter().map(move |c| (s, c)))
        {
            let options = PairedOptions {
                statistic,
                ..OPTIONS
            };
            let j = judge_paired(&[point(factor, noise, rounds, 3)], &options);
            assert_eq!(
                timing_verdicts(&j),
                vec![expected],
                "{statistic:?} ×{factor} ±{noise} over {rounds}: {:#?}",
                j.rows
            );
            assert_eq!(j.inconclusive.is_empty(), expected != Verdict::Inconclusive);
        }
    }

    #[test]
    fn wild_rounds_are_one_vote_each_under_the_sign_test() {
        // 24 rounds 10% slower and 6 wild ones where the candidate's process ran 30% fast
        // (the base's landed in its slow mode): the signed-rank test gives the six the largest
        // ranks and cannot decide; the sign test counts 24 of 30 above the floor.
        let mut p = point(1.10, 0.005, 24, 8);
        p.times.extend((0..6).map(|i| (100.0, 70.0 + f64::from(i))));
        let verdict = |statistic| {
            let options = PairedOptions {
                statistic,
                ..OPTIONS
            };
            timing_verdicts(&judge_paired(std::slice::from_ref(&p), &options))
        };
        assert_eq!(verdict(PairedStatistic::Sign), vec![Verdict::Regression]);
        assert_eq!(
            verdict(PairedStatistic::SignedRank),
            vec![Verdict::Inconclusive]
        );
    }

    #[test]
    fn the_row_reports_estimate_interval_rounds_and_level() {
        let j = judge_paired(&[point(1.10, 0.01, 16, 5)], &OPTIONS);
        let row = j.rows.iter().find(|r| r.track == Track::Timing).unwrap();
        let change = row.change.unwrap();
        let (low, high) = row.ci.unwrap();
        assert!((change - 0.10).abs() < 0.01, "{row:#?}");
        assert!(low < change && change < high && low > 0.01, "{row:#?}");
        assert_eq!(row.rounds, Some(16));
        // One point: Holm holds it to α itself.
        assert_eq!(row.level, Some(0.05));
        assert!(row.p_value.unwrap() <= 0.05);
        assert!((row.baseline.unwrap() - 100.0).abs() < 2.0);
    }

    #[test]
    fn many_points_are_held_to_a_stricter_level_than_one() {
        // Ten unchanged points and one slowed by 3%: the slowed one meets α/11, not α.
        let mut points: Vec<PointRounds> = (0..10).map(|s| point(1.0, 0.01, 12, s)).collect();
        points.push(point(1.03, 0.005, 12, 99));
        let j = judge_paired(&points, &OPTIONS);
        let slowed = j.rows.iter().rfind(|r| r.track == Track::Timing);
        let slowed = slowed.unwrap();
        assert!(
            (slowed.level.unwrap() - 0.05 / 11.0).abs() < 1e-12,
            "{slowed:#?}"
        );
        assert_eq!(slowed.verdict, Verdict::Regression, "{slowed:#?}");
        assert_eq!(
            timing_verdicts(&j)
                .iter()
                .filter(|v| **v == Verdict::Regression)
                .count(),
            1
        );
    }

    #[test]
    fn failed_and_mismatched_points_are_rows_not_statistics() {
        let mut failed = point(1.0, 0.01, 12, 1);
        failed.failure = Some("checksum mismatch".into());
        let mut other = point(1.0, 0.01, 12, 2);
        other.not_comparable = Some("different points".into());
        let j = judge_paired(&[failed, other, point(1.0, 0.01, 12, 3)], &OPTIONS);
        let verdicts: Vec<Verdict> = j.rows.iter().map(|r| r.verdict).collect();
        assert_eq!(verdicts[0], Verdict::Failed);
        assert_eq!(verdicts[1], Verdict::NotCompared);
        // The third point: its simulated level and its timing.
        assert_eq!(&verdicts[2..], &[Verdict::Unchanged, Verdict::Unchanged]);
    }

    #[test]
    fn a_changed_simulated_miss_count_is_a_deterministic_regression() {
        let mut p = point(1.0, 0.01, 12, 1);
        p.candidate = document(&[100.0], &[50.0], 8).records[0].clone();
        let j = judge_paired(&[p], &OPTIONS);
        let sim = j.rows.iter().find(|r| r.track == Track::Deterministic);
        assert_eq!(sim.unwrap().verdict, Verdict::Regression, "{:#?}", j.rows);
    }
}
