//! Simulated misses per cache level (with the 3C split) for a point: the instance's address
//! stream fed to the cache model of the detected (or overridden) geometry, from a cold cache.
//!
//! `run` sets the cap to the largest run its plan admits, so every point is simulated in full.
//! A cap below a run's accesses (the gate's, kept for its baselines) simulates a prefix: only
//! the first `cap` accesses reach the model (the rest are counted, not simulated), and the
//! record says so (`kind = "prefix"`). A time budget is the safety net that bounds the model's
//! cost the same way (the note says when it ran out).

use std::time::{Duration, Instant};

use crate::cache::geometry::CacheLevel;
use crate::cache::sim::{Hierarchy, Policy, SimError};
use crate::cache::{AccessSink, Walk};
use crate::harness::sim::run::simulated_levels;
use crate::kernels::spec::Instance;
use crate::results::{Provenance, SimulatedMisses, SimulationCut, SimulationScope};

/// Forwards the first `cap` accesses to `inner` and counts all of them. With a deadline, the
/// cap shrinks to what was forwarded when the deadline passes (checked every 4096 accesses), so
/// a slow model cannot stall a run.
pub struct CappedSink<'a> {
    inner: &'a mut dyn AccessSink,
    cap: u64,
    seen: u64,
    deadline: Option<Instant>,
    timed_out: bool,
}

impl<'a> CappedSink<'a> {
    pub fn new(inner: &'a mut dyn AccessSink, cap: u64) -> Self {
        Self {
            inner,
            cap,
            seen: 0,
            deadline: None,
            timed_out: false,
        }
    }

    /// Stops forwarding once `budget` has passed.
    pub fn with_time_budget(mut self, budget: Duration) -> Self {
        self.deadline = Some(Instant::now() + budget);
        self
    }

    /// Whether the time budget cut the simulation short.
    pub fn timed_out(&self) -> bool {
        self.timed_out
    }

    #[inline]
    fn admit(&mut self) -> bool {
        if self.seen >= self.cap {
            return false;
        }
        !(self.seen.is_multiple_of(4096) && self.out_of_time())
    }

    /// Whether the deadline has passed; if so, the cap shrinks to what was forwarded.
    fn out_of_time(&mut self) -> bool {
        if let Some(deadline) = self.deadline
            && Instant::now() >= deadline
        {
            self.cap = self.seen;
            self.timed_out = true;
            return true;
        }
        false
    }

    /// Accesses offered (including those past the cap).
    pub fn seen(&self) -> u64 {
        self.seen
    }

    /// Accesses forwarded to the model.
    pub fn forwarded(&self) -> u64 {
        self.seen.min(self.cap)
    }
}

impl AccessSink for CappedSink<'_> {
    fn load(&mut self, addr: u64, len: u32) {
        if self.admit() {
            self.inner.load(addr, len);
        }
        self.seen += 1;
    }
    fn store(&mut self, addr: u64, len: u32) {
        if self.admit() {
            self.inner.store(addr, len);
        }
        self.seen += 1;
    }

    /// The run's accesses below the cap go on as runs (the simulator takes a run whole far
    /// faster than its loads), the deadline checked before each piece that reaches a
    /// multiple of 4096 accesses, as [`CappedSink::load`] would check it.
    fn load_run(&mut self, addr: u64, step: i64, count: u64, len: u32) {
        let mut done = 0;
        while done < count && self.seen < self.cap {
            let piece = (count - done).min(self.cap - self.seen).min(RUN_PIECE);
            let crosses = self.seen.is_multiple_of(4096)
                || self.seen / 4096 != (self.seen + piece - 1) / 4096;
            if crosses && self.out_of_time() {
                break;
            }
            let start = addr.wrapping_add((done as i64).wrapping_mul(step) as u64);
            self.inner.load_run(start, step, piece, len);
            self.seen += piece;
            done += piece;
        }
        self.seen += count - done;
    }

    /// The moves below the cap go on as move runs, as runs do in [`CappedSink::load_run`]; a
    /// cap between a load and its store passes the load alone.
    fn move_run(&mut self, from: Walk, to: Walk, count: u64, len: u32) {
        let mut done = 0;
        while done < count && self.seen < self.cap {
            let room = self.cap - self.seen;
            if room == 1 {
                self.load(from.at(done), len);
                self.seen += 2 * (count - done) - 1;
                return;
            }
            let pairs = (count - done).min(room / 2).min(RUN_PIECE / 2);
            let accesses = 2 * pairs;
            let crosses = self.seen.is_multiple_of(4096)
                || self.seen / 4096 != (self.seen + accesses - 1) / 4096;
            if crosses && self.out_of_time() {
                break;
            }
            let start = |walk: Walk| Walk {
                addr: walk.at(done),
                ..walk
            };
            self.inner.move_run(start(from), start(to), pairs, len);
            self.seen += accesses;
            done += pairs;
        }
        self.seen += 2 * (count - done);
    }
}

/// The most accesses of a run passed on at once, so that the deadline is checked at least
/// this often.
const RUN_PIECE: u64 = 1 << 20;

/// The scope record for a capped simulation.
#[cfg(test)]
pub fn scope_of(seen: u64, forwarded: u64, threads: usize) -> SimulationScope {
    scope_with(seen, forwarded, threads, None)
}

/// The scope record of a simulation that saw `seen` accesses and fed `forwarded`, with the
/// time budget when it ran out.
pub fn scope_with(
    seen: u64,
    forwarded: u64,
    threads: usize,
    timed_out: Option<Duration>,
) -> SimulationScope {
    let mut notes = Vec::new();
    if let Some(budget) = timed_out {
        notes.push(format!(
            "the model's time budget ({:.1} s) ran out",
            budget.as_secs_f64()
        ));
    }
    if forwarded < seen {
        notes.push(format!(
            "only the first {forwarded} of the run's {seen} accesses were simulated"
        ));
    }
    if threads > 1 {
        notes.push(format!(
            "one thread's instance simulated alone (the point ran {threads} concurrently)"
        ));
    }
    let cut = if timed_out.is_some() {
        SimulationCut::TimeBudget
    } else if forwarded < seen {
        SimulationCut::AccessCap
    } else {
        SimulationCut::None
    };
    SimulationScope {
        run_accesses: Some(seen),
        simulated_accesses: forwarded,
        kind: if forwarded < seen { "prefix" } else { "full" }.into(),
        cut: Some(cut),
        note: (!notes.is_empty()).then(|| notes.join("; ")),
    }
}

/// Simulates one cold run of `instance` (at most `cap` accesses) on `levels` (innermost first),
/// LRU with the 3C split.
pub fn simulate_instance(
    instance: &mut dyn Instance,
    levels: &[CacheLevel],
    cap: u64,
    budget: Duration,
    threads: usize,
) -> Result<SimulatedMisses, SimError> {
    let mut hierarchy = Hierarchy::new(levels, Policy::LRU, true)?;
    let (seen, forwarded, timed_out) = {
        let mut capped = CappedSink::new(&mut hierarchy, cap).with_time_budget(budget);
        instance.simulate(&mut capped);
        (capped.seen(), capped.forwarded(), capped.timed_out())
    };
    let levels = simulated_levels(&mut hierarchy);
    Ok(SimulatedMisses {
        source: Provenance::Simulated,
        scope: scope_with(seen, forwarded, threads, timed_out.then_some(budget)),
        start: "cold".into(),
        levels,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::geometry::{CacheKind, GeometrySource};
    use crate::harness::run::runner::tests::SumInstance;

    /// Records what reaches it, a run as its loads.
    #[derive(Default)]
    struct Log(Vec<u64>);

    impl AccessSink for Log {
        fn load(&mut self, addr: u64, _: u32) {
            self.0.push(addr);
        }
        fn store(&mut self, addr: u64, _: u32) {
            self.0.push(addr | 1);
        }
    }

    /// A run through the cap reaches the model as its loads one by one would: the same
    /// accesses forwarded and counted, for caps before, inside and past it.
    #[test]
    fn runs_are_capped_as_their_loads() {
        for cap in [0, 1, 5, 4096, 5000, 9000, u64::MAX] {
            let (mut by_run, mut by_load) = (Log::default(), Log::default());
            let mut runs = CappedSink::new(&mut by_run, cap);
            let mut loads = CappedSink::new(&mut by_load, cap);
            for (addr, step, count) in [(1 << 20, 64i64, 3000u64), (1 << 22, -8, 4000), (64, 0, 7)]
            {
                runs.load_run(addr, step, count, 8);
                runs.store(addr, 8);
                for k in 0..count {
                    loads.load(addr.wrapping_add((k as i64 * step) as u64), 8);
                }
                loads.store(addr, 8);
            }
            assert_eq!(
                (runs.seen(), runs.forwarded()),
                (loads.seen(), loads.forwarded())
            );
            assert_eq!(by_run.0, by_load.0, "cap {cap}");
        }
    }

    /// Moves through the cap reach the model as their loads and stores one by one would, for
    /// caps before, between a load and its store, inside and past them.
    #[test]
    fn moves_are_capped_as_their_loads_and_stores() {
        for cap in [0, 1, 2, 5, 4096, 4097, 5000, 9001, u64::MAX] {
            let (mut by_moves, mut by_access) = (Log::default(), Log::default());
            let mut moves = CappedSink::new(&mut by_moves, cap);
            let mut accesses = CappedSink::new(&mut by_access, cap);
            for (from, to, count) in [
                ((1 << 20, 16384i64), (1 << 24, 8i64), 3000u64),
                ((1 << 22, -8), (1 << 26, 64), 4001),
                ((64, 0), (128, 8), 7),
            ] {
                let (from, to) = (
                    Walk {
                        addr: from.0,
                        step: from.1,
                    },
                    Walk {
                        addr: to.0,
                        step: to.1,
                    },
                );
                moves.move_run(from, to, count, 8);
                moves.load(from.addr, 8);
                for k in 0..count {
                    accesses.load(from.at(k), 8);
                    accesses.store(to.at(k), 8);
                }
                accesses.load(from.addr, 8);
            }
            assert_eq!(
                (moves.seen(), moves.forwarded()),
                (accesses.seen(), accesses.forwarded())
            );
            assert_eq!(by_moves.0, by_access.0, "cap {cap}");
        }
    }

    #[test]
    fn a_sum_of_one_line_per_8_loads_misses_once_per_line_in_l1() {
        let l1 = CacheLevel::new(
            "L1d",
            CacheKind::Data,
            32 << 10,
            8,
            64,
            GeometrySource::Override,
        )
        .unwrap();
        let mut instance = SumInstance {
            data: vec![1.0; 1024],
            runs: 0,
            corrupt_after: None,
        };
        let full = simulate_instance(
            &mut instance,
            std::slice::from_ref(&l1),
            1 << 20,
            Duration::from_secs(60),
            1,
        )
        .unwrap();
        assert_eq!(full.scope.kind, "full");
        assert_eq!(full.levels[0].loads, 1024);
        assert_eq!(full.levels[0].misses, 128);
        assert_eq!(full.levels[0].compulsory, 128);
        let part =
            simulate_instance(&mut instance, &[l1], 100, Duration::from_secs(60), 2).unwrap();
        assert_eq!(part.scope.kind, "prefix");
        assert_eq!(part.scope.run_accesses, Some(1024));
        assert_eq!(part.levels[0].loads, 100);
    }

    #[derive(Default)]
    struct Recorder(Vec<(bool, u64)>);
    impl AccessSink for Recorder {
        fn load(&mut self, addr: u64, _len: u32) {
            self.0.push((false, addr));
        }
        fn store(&mut self, addr: u64, _len: u32) {
            self.0.push((true, addr));
        }
    }

    #[test]
    fn the_cap_forwards_a_prefix_and_counts_everything() {
        let mut recorder = Recorder::default();
        let mut capped = CappedSink::new(&mut recorder, 3);
        for i in 0..5 {
            capped.load(i, 8);
        }
        capped.store(9, 8);
        assert_eq!((capped.seen(), capped.forwarded()), (6, 3));
        assert_eq!(recorder.0, vec![(false, 0), (false, 1), (false, 2)]);
        let scope = scope_of(6, 3, 1);
        assert_eq!(scope.kind, "prefix");
        assert!(scope.note.unwrap().contains("first 3 of the run's 6"));
        assert_eq!(scope_of(6, 6, 1).kind, "full");

        let mut recorder = Recorder::default();
        let mut late = CappedSink::new(&mut recorder, 100).with_time_budget(Duration::ZERO);
        late.load(0, 8);
        late.load(1, 8);
        assert!(late.timed_out());
        assert_eq!((late.seen(), late.forwarded()), (2, 0));
    }
}
