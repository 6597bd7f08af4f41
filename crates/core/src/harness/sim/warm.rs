//! Where a point's simulation starts, as the catalogue says (`Entry::simulate`): cold points go
//! to [`simulate_instance`]; warm ones first feed the instance's warm-up stream
//! (`Instance::simulate_warm_up`) unrecorded, reset the counts, then count one run — the state
//! the timed runs, which follow a warm-up, see.
//!
//! The warm-up obeys the same access cap and time budget as the counted run; when either cuts
//! it short the record's scope note says so.

use std::time::Duration;

use crate::cache::geometry::CacheLevel;
use crate::cache::sim::{Hierarchy, Policy, SimError};
use crate::harness::sim::run::simulated_levels;
use crate::harness::sim::simulate::{CappedSink, scope_with, simulate_instance};
use crate::kernels::spec::{Instance, SimStart};
use crate::results::{Provenance, SimulatedMisses};

/// Simulates one run of `instance` on `levels` from `start` (at most `cap` accesses in each of
/// the warm-up and the counted run, each within `budget`).
pub fn simulate_from(
    start: SimStart,
    instance: &mut dyn Instance,
    levels: &[CacheLevel],
    cap: u64,
    budget: Duration,
    threads: usize,
) -> Result<SimulatedMisses, SimError> {
    match start {
        SimStart::Cold => simulate_instance(instance, levels, cap, budget, threads),
        SimStart::Warm => simulate_warm(instance, levels, cap, budget, threads),
    }
}

fn simulate_warm(
    instance: &mut dyn Instance,
    levels: &[CacheLevel],
    cap: u64,
    budget: Duration,
    threads: usize,
) -> Result<SimulatedMisses, SimError> {
    let mut hierarchy = Hierarchy::new(levels, Policy::LRU, true)?;
    let warm_cut = {
        let mut capped = CappedSink::new(&mut hierarchy, cap).with_time_budget(budget);
        instance.simulate_warm_up(&mut capped);
        (capped.forwarded() < capped.seen()).then(|| {
            format!(
                "the warm-up fed {} of its {} accesses{}",
                capped.forwarded(),
                capped.seen(),
                if capped.timed_out() {
                    " (the model's time budget ran out)"
                } else {
                    ""
                }
            )
        })
    };
    hierarchy.reset_stats();
    let (seen, forwarded, timed_out) = {
        let mut capped = CappedSink::new(&mut hierarchy, cap).with_time_budget(budget);
        instance.simulate(&mut capped);
        (capped.seen(), capped.forwarded(), capped.timed_out())
    };
    let mut scope = scope_with(seen, forwarded, threads, timed_out.then_some(budget));
    let notes: Vec<String> = warm_cut.into_iter().chain(scope.note.take()).collect();
    scope.note = (!notes.is_empty()).then(|| notes.join("; "));
    let levels = simulated_levels(&mut hierarchy);
    Ok(SimulatedMisses {
        source: Provenance::Simulated,
        scope,
        start: "warm".into(),
        levels,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::geometry::{CacheKind, GeometrySource};
    use crate::kernels::find;
    use crate::kernels::resolve_params;
    use crate::kernels::spec::PrepareOptions;

    fn l1() -> CacheLevel {
        CacheLevel::new(
            "L1d",
            CacheKind::Data,
            32 << 10,
            8,
            64,
            GeometrySource::Override,
        )
        .unwrap()
    }

    /// Misses per load at the first level of a chase over `bytes`, from `start`.
    fn chase_misses(bytes: &str, start: SimStart) -> (f64, String) {
        let spec = find("chase").unwrap();
        let params = resolve_params(spec, &[("bytes".into(), bytes.into())]).unwrap();
        let mut instance = (spec.prepare)(
            &params,
            &PrepareOptions::with_planner(crate::kernels::copy_planner::planner_for_tests()),
        )
        .unwrap();
        let sim = simulate_from(
            start,
            instance.as_mut(),
            &[l1()],
            1 << 20,
            Duration::from_secs(60),
            1,
        )
        .unwrap();
        let level = &sim.levels[0];
        (level.misses as f64 / level.loads as f64, sim.start)
    }

    #[test]
    fn a_chase_that_fits_l1_misses_once_per_line_cold_and_never_warm() {
        assert_eq!(chase_misses("16K", SimStart::Cold), (1.0, "cold".into()));
        assert_eq!(chase_misses("16K", SimStart::Warm), (0.0, "warm".into()));
        // Twice the L1: a cyclic walk under LRU misses every time, warm or not.
        assert_eq!(chase_misses("64K", SimStart::Warm).0, 1.0);
    }

    #[test]
    fn a_long_chase_warms_over_every_run_and_counts_one() {
        // 32 MiB of 64 B lines: 2 runs of 2^18 hops each; the warm-up feeds both.
        let spec = find("chase").unwrap();
        let params = resolve_params(spec, &[("bytes".into(), "32M".into())]).unwrap();
        let mut instance = (spec.prepare)(
            &params,
            &PrepareOptions::with_planner(crate::kernels::copy_planner::planner_for_tests()),
        )
        .unwrap();
        let sim = simulate_from(
            SimStart::Warm,
            instance.as_mut(),
            &[l1()],
            1 << 20,
            Duration::from_secs(60),
            1,
        )
        .unwrap();
        assert_eq!(sim.levels[0].loads, 1 << 18);
        assert_eq!(sim.scope.kind, "full");
        assert!(sim.scope.note.is_none(), "{:?}", sim.scope.note);
    }
}
