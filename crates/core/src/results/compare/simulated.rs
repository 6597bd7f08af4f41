//! The deterministic track: simulated misses per cache level, compared exactly (or within
//! `sim_tolerance`), since both documents simulated the same fixed geometry.

use super::CompareOptions;
use super::verdict::{GateRow, Track, Verdict};
use crate::results::{PointRecord, SimulatedLevel, SimulatedMisses, SimulationCut};

/// The metric of a point's row when no level can be compared.
const WHOLE_POINT: &str = "misses (simulated)";

/// One row per cache level of the baseline's simulation (one row saying why, when the two
/// simulations cannot be compared).
pub(super) fn deterministic_rows(
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
        rows.push(whole_point(cur, Verdict::NotCompared, why));
        return;
    };
    // Decided by the typed `cut` alone (documents from older builds have it filled in on
    // load from their counts): a time-budget cut depends on the machine's speed.
    let cut_by_time = |sim: &SimulatedMisses| sim.scope.cut == Some(SimulationCut::TimeBudget);
    if cut_by_time(c) {
        // The gate never simulates with a time budget, so a current document that says so was
        // not made by it: its miss counts cannot be trusted to pass.
        rows.push(whole_point(
            cur,
            Verdict::Failed,
            "the current simulation was cut by a time budget, so its counts are not reproducible; let `stridelab gate` simulate (it runs without one)",
        ));
        return;
    }
    if cut_by_time(b) {
        rows.push(whole_point(
            cur,
            Verdict::NotCompared,
            "the baseline simulation was cut by its time budget, so its counts are not reproducible; record a new baseline with `stridelab gate --save-baseline reports/baseline.json`",
        ));
        return;
    }
    if b.start != c.start {
        // A warm count leaves out the compulsory misses a cold one holds: not the same number.
        let why = format!(
            "the baseline simulated from a {} cache and this run from a {} one (the kernel's \
             catalogue entry changed); record a new baseline with `stridelab gate \
             --save-baseline reports/baseline.json`",
            b.start, c.start
        );
        rows.push(whole_point(cur, Verdict::NotCompared, &why));
        return;
    }
    for level in &b.levels {
        rows.push(level_row(cur, level, (b, c), options));
    }
}

fn whole_point(cur: &PointRecord, verdict: Verdict, why: &str) -> GateRow {
    GateRow::of(
        cur,
        Track::Deterministic,
        WHOLE_POINT,
        verdict,
        Some(why.into()),
    )
}

/// The row of one baseline cache level: its misses then and now.
fn level_row(
    cur: &PointRecord,
    level: &SimulatedLevel,
    (b, c): (&SimulatedMisses, &SimulatedMisses),
    options: &CompareOptions,
) -> GateRow {
    let metric = format!("{} misses (simulated)", level.name);
    let mut r = GateRow::of(cur, Track::Deterministic, &metric, Verdict::Unchanged, None);
    let Some(now) = c.levels.iter().find(|l| l.name == level.name) else {
        r.verdict = Verdict::NotCompared;
        r.note = Some(format!("the current run did not simulate {}", level.name));
        return r;
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
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::compare::compare;
    use crate::results::compare::test_fixtures::{document, noisy};

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
            let v = compare(&base, &cur, &options).unwrap();
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
}
