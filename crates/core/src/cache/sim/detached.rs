//! A lower level's 3C shadow on a thread of its own. The level looks its accesses up without
//! it and logs each line lookup's hit ([`HitLog`]); the shadow then takes the same accesses,
//! in the same order, and classifies each miss from the logged hit and its own outcome.
//!
//! Exact: the set lookups and the shadow never read each other's state (a level's outcome
//! for a line is `classified(hit, shadow outcome)`, `counts.rs`), so either may run first, and
//! this side takes every piece exactly as the level does — an access line by line, a run of
//! whole lines by the same [`RunShape`] (its looked-up accesses one by one, the rest by the
//! shadow's tally). On the naive transpose the L2's shadow was most of the lower thread's
//! work; apart, it runs beside the first two levels' lookups instead of after the L2's.

use super::counts::{Counts, Outcome, classified};
use super::hits::{HitLog, HitReader};
use super::level::{LevelSim, RunShape, classify_marked, line_span};
use super::shadow::{FullyAssociativeLru, ShadowOutcome};
use super::stream::{Piece, Run, Stream};

/// A level's shadow away from it, with the causes of the misses it has classified.
#[derive(Debug)]
pub(super) struct DetachedShadow {
    shadow: FullyAssociativeLru,
    shape: RunShape,
    /// The causes of the misses classified here (nothing else is counted here).
    counts: Counts,
    run_outcomes: Vec<ShadowOutcome>,
}

impl DetachedShadow {
    /// Takes `level`'s shadow away from it; from now on the level logs its hits. None if the
    /// level does not classify.
    pub(super) fn detach(level: &mut LevelSim) -> Option<Self> {
        let (shadow, shape) = level.detach_shadow()?;
        Some(Self {
            shadow,
            shape,
            counts: Counts::default(),
            run_outcomes: Vec::new(),
        })
    }

    /// Gives the shadow back to `level`, with the causes of the misses classified meanwhile.
    pub(super) fn reattach(self, level: &mut LevelSim) {
        level.attach_shadow(self.shadow, &self.counts);
    }

    /// Classifies the accesses of `stream`, which the level took in order, logging `hits`.
    pub(super) fn take(&mut self, stream: &Stream, hits: &HitLog) {
        let mut hits = hits.reader();
        stream.for_each_piece(|piece| match piece {
            Piece::Accesses(accesses) => {
                for access in accesses {
                    self.take_access(access.addr, access.len, &mut hits);
                }
            }
            Piece::Run(run) => self.take_run(run, &mut hits),
            Piece::Moves(moves) if self.shape.takes_marked(moves) => {
                let shift = self.shape.line_shift;
                let marked = hits.next_marks();
                classify_marked(&mut self.shadow, shift, moves, marked, &mut self.counts);
            }
            Piece::Moves(moves) => moves.for_each_slice(|accesses| {
                for access in accesses {
                    self.take_access(access.addr, access.len, &mut hits);
                }
            }),
        });
        assert!(hits.is_done(), "hit log longer than the lookups");
    }

    #[inline(always)]
    fn take_access(&mut self, addr: u64, len: u32, hits: &mut HitReader<'_>) {
        let (first, last) = line_span(addr, len, self.shape.line_shift);
        let outcome = if first == last {
            classified(hits.next(), Some(self.shadow.access(first)))
        } else {
            self.take_lines(first, last, hits)
        };
        self.counts.record_cause(outcome);
    }

    /// A straddling access: each line in turn; the worst outcome counts.
    #[inline(never)]
    fn take_lines(&mut self, first: u64, last: u64, hits: &mut HitReader<'_>) -> Outcome {
        (first..=last)
            .map(|line| classified(hits.next(), Some(self.shadow.access(line))))
            .fold(Outcome::Hit, Outcome::max)
    }

    /// A run as the level takes it (`level/runs.rs`).
    fn take_run(&mut self, run: &Run, hits: &mut HitReader<'_>) {
        let Some(plan) = self.shape.plan(run) else {
            for k in 0..run.count {
                let access = run.access(k);
                self.take_access(access.addr, access.len, hits);
            }
            return;
        };
        let tally = self
            .shadow
            .access_run(plan.lines, plan.looked_up, &mut self.run_outcomes);
        for &seen in &self.run_outcomes[..plan.looked_up as usize] {
            self.counts
                .record_cause(classified(hits.next(), Some(seen)));
        }
        self.counts.record_causes(tally, run.count - plan.looked_up);
    }
}
