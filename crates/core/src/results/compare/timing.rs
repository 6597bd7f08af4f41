//! The timing track: a point's time as a ratio to a same-run reference, the seeded
//! percentile-bootstrap CIs of that ratio's change and of the point's own time's change, and
//! the rule that a regression (or improvement) needs both CIs wholly beyond the threshold.

use super::CompareOptions;
use super::normalise::{
    Normaliser, References, RunSpeed, normaliser, normaliser_len, paired_quotients,
    reference_median, resampled_reference,
};
use super::verdict::{GateRow, Track, Verdict};
use crate::results::{PointRecord, Timing};
use crate::stats::{SplitMix64, median_of_sorted, percentile_of_sorted, resampled_median, sorted};

/// Sample draws one row's bootstrap may make (about 0.1 s): each resample draws every sample
/// once, so a point with many samples gets fewer resamples, never more work.
const BOOTSTRAP_DRAWS_PER_ROW: usize = 1 << 23;

/// Fewest resamples a row keeps, so the CI's tails still rest on a handful of values.
const MIN_RESAMPLES: usize = 200;

/// The timing row of a matched point (a reference point is shown, not judged).
pub(super) fn timing_row(
    (base, base_refs): (&PointRecord, &References<'_>),
    (cur, cur_refs): (&PointRecord, &References<'_>),
    speed: Option<RunSpeed>,
    options: &CompareOptions,
    row_index: u64,
) -> GateRow {
    let (Some(bt), Some(ct)) = (&base.timing, &cur.timing) else {
        return not_compared(cur, "no timing in the baseline point");
    };
    if base_refs.is_reference(base) {
        return reference_row(cur, bt, ct);
    }
    let (Some(bn), Some(cn)) = (
        normaliser(base, base_refs, speed.map(|_| 1.0)),
        normaliser(cur, cur_refs, speed.map(|s| s.factor)),
    ) else {
        return not_compared(cur, "no same-run reference (copy/read) in both runs");
    };
    let Some(metric) = metric_label(&bn, &cn) else {
        return not_compared(cur, "baseline and current used different references");
    };
    let mut r = GateRow::of(cur, Track::Timing, &metric, Verdict::Unchanged, None);
    // Documents read from disk were validated on load; this guards documents built in memory.
    // A current point without usable samples fails: a gate must not pass what it cannot judge.
    if !usable(&ct.samples_ns_per_run, &cn) {
        r.verdict = Verdict::Failed;
        r.note = Some("current samples missing or not positive".into());
        return r;
    }
    if !usable(&bt.samples_ns_per_run, &bn) {
        r.verdict = Verdict::NotCompared;
        r.note = Some("baseline samples missing or not positive".into());
        return r;
    }
    let seed = options.seed ^ row_index.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    bootstrap(
        &mut r,
        (&bt.samples_ns_per_run, &bn),
        (&ct.samples_ns_per_run, &cn),
        options,
        &mut SplitMix64::new(seed),
    );
    judge(&mut r, options.threshold);
    r
}

fn not_compared(cur: &PointRecord, why: &str) -> GateRow {
    GateRow::of(
        cur,
        Track::Timing,
        "time (timed)",
        Verdict::NotCompared,
        Some(why.into()),
    )
}

/// The row of a reference point: its own median time then and now, not judged.
fn reference_row(cur: &PointRecord, bt: &Timing, ct: &Timing) -> GateRow {
    let mut r = GateRow::of(
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
    r
}

/// The metric both runs' normalisers make, or `None` when they differ.
fn metric_label(bn: &Normaliser<'_>, cn: &Normaliser<'_>) -> Option<String> {
    Some(match (bn, cn) {
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
        _ => return None,
    })
}

/// Whether a point's samples and its normaliser can be compared: present, finite, positive.
fn usable(samples: &[f64], n: &Normaliser<'_>) -> bool {
    let valid = |s: &[f64]| !s.is_empty() && s.iter().all(|x| x.is_finite() && *x > 0.0);
    let reference_ok = match n {
        Normaliser::Interleaved { ns, .. } | Normaliser::RunSpeed { factor: ns } => {
            ns.is_finite() && *ns > 0.0
        }
        Normaliser::Point { samples, .. } | Normaliser::Paired { samples, .. } => valid(samples),
    };
    valid(samples) && reference_ok
}

/// Fills in the row's ratio then and now, its change and CI, and the own time's change and
/// CI, both from the same `rng` (ratio resamples first, so a seed gives one verdict).
fn bootstrap(
    r: &mut GateRow,
    (bt, bn): (&[f64], &Normaliser<'_>),
    (ct, cn): (&[f64], &Normaliser<'_>),
    options: &CompareOptions,
    rng: &mut SplitMix64,
) {
    let (bs, cs) = (paired_quotients(bt, bn), paired_quotients(ct, cn));
    let (bs, cs) = (bs.as_slice(), cs.as_slice());
    let ratio = |kernel: &[f64], n: &Normaliser<'_>| {
        median_of_sorted(&sorted(kernel)) / reference_median(n)
    };
    let (was, is) = (ratio(bs, bn), ratio(cs, cn));
    r.baseline = Some(was);
    r.current = Some(is);
    r.change = Some(is / was - 1.0);
    let drawn = bs.len() + cs.len() + normaliser_len(bn) + normaliser_len(cn);
    let resamples = bounded_resamples(options.resamples, drawn);
    if resamples < options.resamples {
        r.note = Some(format!(
            "{resamples} bootstrap resamples (of {}): {drawn} samples per resample",
            options.resamples
        ));
    }
    let changes = (0..resamples)
        .map(|_| {
            let b = resampled_median(bs, rng) / resampled_reference(bn, rng);
            let c = resampled_median(cs, rng) / resampled_reference(cn, rng);
            c / b - 1.0
        })
        .collect();
    r.ci = Some(change_ci(changes, is / was - 1.0, options));
    // The point's own time: the same bootstrap without a reference.
    let (own_was, own_is) = (median_of_sorted(&sorted(bt)), median_of_sorted(&sorted(ct)));
    r.own_change = Some(own_is / own_was - 1.0);
    let own_changes = (0..resamples)
        .map(|_| resampled_median(ct, rng) / resampled_median(bt, rng) - 1.0)
        .collect();
    r.own_ci = Some(change_ci(own_changes, own_is / own_was - 1.0, options));
}

/// The verdict from the two CIs: a regression (improvement) only when both lie wholly above
/// `+threshold` (below `-threshold`); a note says which moved alone.
fn judge(r: &mut GateRow, threshold: f64) {
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
}

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::ResultsDocument;
    use crate::results::compare::test_fixtures::{document, noisy, read_reference};
    use crate::results::compare::{GateMethod, compare};

    #[test]
    fn identical_documents_pass_with_zero_change() {
        let doc = document(&noisy(100.0, 10, 1), &noisy(50.0, 10, 2), 7);
        let v = compare(&doc, &doc, &CompareOptions::default()).unwrap();
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
            let v = compare(&base, &cur, &CompareOptions::default()).unwrap();
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
        let v = compare(&base, &slower_machine, &CompareOptions::default()).unwrap();
        assert!(v.pass, "{:#?}", v.rows);
        let GateMethod::StoredBaseline { run_speed, .. } = v.method else {
            panic!("{:?}", v.method)
        };
        assert!((run_speed.unwrap() - 1.25).abs() < 1e-9);
        let probe = v
            .rows
            .iter()
            .find(|r| r.kernel == "chase" && r.track == Track::Timing)
            .unwrap();
        assert_eq!(probe.metric, "ns/run ÷ run speed (timed)");
        assert!(probe.change.unwrap().abs() < 0.02, "{probe:#?}");
        // Only the probe slower: a regression of the probe alone.
        let slower_probe = with_reference(100.0, 80.0, 1300.0);
        let v = compare(&base, &slower_probe, &CompareOptions::default()).unwrap();
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
            compare(&base, &current, &CompareOptions::default()).unwrap()
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
        let v = compare(&base, &cur, &CompareOptions::default()).unwrap();
        assert!(v.pass, "{:#?}", v.rows);
    }
}
