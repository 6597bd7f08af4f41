//! A strided run through one level, taken whole where LRU allows it: a column walk costs a
//! few lookups per set it reaches instead of one per access.
//!
//! The rule: the lines of a run whose step is a whole number of lines (not zero) are
//! distinct, and every `period`-th one falls in the same set, `period` being the number of
//! sets the run reaches (sets / gcd(step in lines, sets)). Once a set of W ways has taken W
//! distinct lines of the run it holds only lines of the run, so each later line of the run
//! in that set misses and evicts one, and the set ends with the run's last W lines there,
//! most recent first. So the first W × period accesses are looked up, the rest are counted,
//! and each reached set is written once at the end. Other policies look every access up. The
//! 3C shadow takes the run by the same argument over its capacity, whatever the policy
//! ([`FullyAssociativeLru::access_run`]).
//!
//! [`FullyAssociativeLru::access_run`]: super::super::shadow::FullyAssociativeLru::access_run

use super::super::counts::{Counts, classified};
use super::super::shadow::Segment;
use super::super::stream::{MissCollector, Run, Stream};
use super::{LevelSim, tag_of};
use crate::cache::model::closed_form_sets;

/// What decides how a level takes a run (its geometry and whether it is LRU): shared by the
/// level and its shadow when that runs on a thread of its own (`sim/detached.rs`), which must
/// classify exactly the accesses the level looked up.
#[derive(Debug, Clone, Copy)]
pub(in crate::cache::sim) struct RunShape {
    pub(in crate::cache::sim) line_shift: u32,
    line: u32,
    pub(super) sets: u32,
    ways: u64,
    pub(super) lru: bool,
}

/// A run of whole lines at one level: its lines, the sets it reaches (`period`) and how many
/// of its accesses are looked up (the rest miss).
#[derive(Debug, Clone, Copy)]
pub(in crate::cache::sim) struct LinePlan {
    pub(in crate::cache::sim) lines: Segment,
    pub(in crate::cache::sim) period: u64,
    pub(in crate::cache::sim) looked_up: u64,
}

impl RunShape {
    /// The plan for `run` if its step is a whole number of lines (not zero) and each access
    /// lies in one line; None otherwise (the accesses are then taken one by one).
    pub(in crate::cache::sim) fn plan(&self, run: &Run) -> Option<LinePlan> {
        let line_bytes = 1u64 << self.line_shift;
        let whole_lines = run.step != 0
            && run.step.unsigned_abs().is_multiple_of(line_bytes)
            && (run.addr & (line_bytes - 1)) + u64::from(run.len.max(1)) <= line_bytes;
        if !whole_lines {
            return None;
        }
        // The sets a run reaches: the set/GCD model's S / gcd(step / line, S).
        let period =
            closed_form_sets(run.step, self.line, self.sets).expect("a step of whole lines");
        let looked_up = if self.lru {
            self.ways.saturating_mul(period).min(run.count)
        } else {
            run.count
        };
        Some(LinePlan {
            lines: Segment {
                first: run.addr >> self.line_shift,
                step: run.step >> self.line_shift,
                count: run.count,
            },
            period,
            looked_up,
        })
    }
}

impl LevelSim {
    /// How this level takes runs.
    pub(in crate::cache::sim) fn run_shape(&self) -> RunShape {
        RunShape {
            line_shift: self.line_shift,
            line: self.geometry.line,
            sets: self.geometry.sets,
            ways: self.ways as u64,
            lru: self.is_lru(),
        }
    }

    /// The accesses of `run` in order, exactly as [`LevelSim::access`] would take them one by
    /// one; those that miss go to `misses` (consecutive ones as runs).
    pub(in crate::cache::sim) fn take_run(&mut self, run: &Run, misses: Option<&mut Stream>) {
        let Some(LinePlan {
            lines,
            period,
            looked_up,
        }) = self.run_shape().plan(run)
        else {
            return self.take_one_by_one(run, misses);
        };
        let mut outcomes = std::mem::take(&mut self.run_outcomes);
        let tally = self
            .shadow
            .as_mut()
            .map(|shadow| shadow.access_run(lines, looked_up, &mut outcomes));
        let mut counts = Counts::default();
        let mut collector = MissCollector::new(*run, misses);
        // Out of `self` for the loop, so the lookups cannot touch it and it stays in registers.
        let mut hit_log = self.hit_log.take();
        for k in 0..looked_up {
            let hit = self.lookup(lines.line(k));
            if let Some(log) = hit_log.as_mut() {
                log.push(hit);
            }
            let seen = tally.map(|_| outcomes[k as usize]);
            counts.record(run.is_store, classified(hit, seen));
            if !hit {
                collector.missed(k);
            }
        }
        self.hit_log = hit_log;
        let rest = run.count - looked_up;
        collector.missed_all(looked_up, run.count);
        drop(collector);
        self.run_outcomes = outcomes;
        counts.record_evicting_misses(run.is_store, rest);
        if let Some(tally) = tally {
            counts.record_causes(tally, rest);
        }
        self.counts.add(&counts);
        if rest > 0 {
            self.hold_run_ends(lines, period);
        }
    }

    /// The run's accesses one at a time (a step that is not a whole number of lines).
    fn take_one_by_one(&mut self, run: &Run, misses: Option<&mut Stream>) {
        let mut collector = MissCollector::new(*run, misses);
        for k in 0..run.count {
            let access = run.access(k);
            if self.access(access.addr, access.len, access.is_store) {
                collector.missed(k);
            }
        }
    }

    /// Each set the run reached holds its last `ways` lines there, most recent first.
    pub(super) fn hold_run_ends(&mut self, lines: Segment, period: u64) {
        let ways = self.ways;
        for r in 0..period {
            let last = r + period * ((lines.count - 1 - r) / period);
            let set = self.set_of(lines.line(r));
            self.ring_heads[set] = 0;
            for (j, tag) in self.tags[set * ways..][..ways].iter_mut().enumerate() {
                *tag = tag_of(lines.line(last - j as u64 * period));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The period a run takes from the model: the sets lines `step` apart reach.
    #[test]
    fn the_period_counts_the_sets_a_step_reaches() {
        let table = [
            (64, 512, 1),
            (64, 1, 64),
            (64, 2, 32),
            (64, -2, 32),
            (64, 0, 1),
            (6, 4, 3),
        ];
        for (sets, step, period) in table {
            assert_eq!(
                closed_form_sets(step * 64, 64, sets),
                Some(period),
                "{sets} sets, step {step}"
            );
        }
    }
}
