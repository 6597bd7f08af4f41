//! Element moves whose loads and stores meet in no set, taken a side at a time.
//!
//! Under LRU a set's contents and outcomes depend only on the accesses to that set, in order
//! (sets are independent). So over a stretch of pairs where no set takes both a load and a
//! store, the level may take all the loads, then all the stores: each set sees the same
//! accesses in the same order. A side whose step is a whole number of lines then goes as a
//! run (`level/runs.rs`'s rule: after `ways` lines per set it reaches, every access misses),
//! and the misses go to the level below marked per side ([`MovesMissed`]), which it takes
//! the same way (`level/moves_missed.rs`) and reads in pair order. The 3C shadow must
//! have taken the run whole ([`ShadowPlan::Whole`]) or be absent: under that plan an access's
//! outcome depends on its own side alone (a line's first touch, a repeat).
//!
//! A naive transpose's column of loads falls in one set of a typical L1 and its row of
//! stores in each set in turn, so the stretches between the few pairs where they meet are
//! long: the column costs `ways` lookups and a seen-bit per access there, not a lookup each.

use std::ops::Range;

use super::super::counts::Counts;
use super::super::shadow::Segment;
use super::super::stream::{MARKED_PAIRS, Marks, Moves, MovesMissed, Run, Stream};
use super::LevelSim;
use super::moves::ShadowPlan;
use crate::cache::model::closed_form_sets;

/// Most sets a level may have to take moves apart: a side's sets are marked in a bitmap of
/// this many bits, on the stack (a first level has tens to thousands).
pub(super) const MAX_SETS: usize = 4096;
/// Most pairs of one stretch taken apart: each side's misses are marked in a bitmap of this
/// many bits, which goes down as it is ([`MovesMissed`]).
const STRETCH: u64 = MARKED_PAIRS as u64;
/// Fewest pairs worth taking apart; a shorter stretch goes pair by pair.
const MIN_STRETCH: u64 = 16;

impl LevelSim {
    /// Whether this level can take moves apart under `plan`: LRU, a shadow that took the
    /// run whole or none, and sets few enough to mark.
    pub(super) fn may_take_apart(&self, plan: ShadowPlan) -> bool {
        self.is_lru() && plan != ShadowPlan::EachAccess && self.sets as usize <= MAX_SETS
    }

    /// Moves `range` of `moves` exactly as pair by pair: the pairs whose store (or load)
    /// falls in a set the other side reaches within `range` one by one, the stretches between
    /// them a side at a time. `previous` holds each side's last line (updated); misses go to
    /// `misses` in order. Only where [`Self::may_take_apart`].
    pub(super) fn moves_apart<const WAYS: usize>(
        &mut self,
        moves: &Moves,
        range: Range<u64>,
        plan: ShadowPlan,
        previous: &mut [u64; 2],
        counts: &mut Counts,
        mut misses: Option<&mut Stream>,
    ) {
        let sides = [moves.load, moves.store];
        // The side reaching fewer sets is marked; the pairs where the other meets one of
        // them are taken one by one.
        let marked_side = usize::from(
            self.sets_reached(&sides[1], &range) < self.sets_reached(&sides[0], &range),
        );
        let mut marked = [0u64; MAX_SETS / 64];
        self.mark_sets(&sides[marked_side], &range, &mut marked);
        let other = &sides[1 - marked_side];
        let mut stretch = range.start;
        let mut k = range.start;
        while k < range.end {
            // The other side's accesses from k in k's line: one set, met or not.
            let access = other.access(k);
            let in_line = other
                .in_same_line(access.addr, self.line_shift)
                .min(range.end - k);
            let set = self.set_of(access.addr >> self.line_shift);
            if marked[set / 64] >> (set % 64) & 1 == 1 {
                for pair in k..k + in_line {
                    let stretch_misses = misses.as_deref_mut();
                    self.take_stretch::<WAYS>(
                        moves,
                        stretch..pair,
                        plan,
                        previous,
                        counts,
                        stretch_misses,
                    );
                    let pair_misses = misses.as_deref_mut();
                    self.move_pair::<WAYS, true>(moves, pair, plan, previous, counts, pair_misses);
                    stretch = pair + 1;
                }
            }
            k += in_line;
        }
        self.take_stretch::<WAYS>(moves, stretch..range.end, plan, previous, counts, misses);
    }

    /// Pairs `range`, where loads and stores meet in no set: a side at a time (pair by pair if
    /// too few), in pieces of at most [`STRETCH`], each piece's misses then put in order.
    fn take_stretch<const WAYS: usize>(
        &mut self,
        moves: &Moves,
        range: Range<u64>,
        plan: ShadowPlan,
        previous: &mut [u64; 2],
        counts: &mut Counts,
        mut misses: Option<&mut Stream>,
    ) {
        if range.end - range.start < MIN_STRETCH {
            for k in range {
                self.move_pair::<WAYS, true>(
                    moves,
                    k,
                    plan,
                    previous,
                    counts,
                    misses.as_deref_mut(),
                );
            }
            return;
        }
        #[cfg(test)]
        {
            self.pairs_apart += range.end - range.start;
        }
        let mut start = range.start;
        while start < range.end {
            let piece = start..range.end.min(start + STRETCH);
            let mut missed: [Marks; 2] = [[0; MARKED_PAIRS / 64]; 2];
            for (side, run) in [moves.load, moves.store].iter().enumerate() {
                let previous = &mut previous[side];
                self.take_side::<WAYS>(
                    run,
                    piece.clone(),
                    plan,
                    previous,
                    counts,
                    &mut missed[side],
                );
            }
            if let Some(misses) = misses.as_deref_mut() {
                misses.push_moves(MovesMissed {
                    moves: *moves,
                    start: piece.start,
                    missed,
                });
            }
            start = piece.end;
        }
    }

    /// One side's accesses `range` (at most [`STRETCH`]), no other access reaching their sets
    /// meanwhile; bit i of `missed` set if access `range.start + i` missed.
    fn take_side<const WAYS: usize>(
        &mut self,
        run: &Run,
        range: Range<u64>,
        plan: ShadowPlan,
        previous: &mut u64,
        counts: &mut Counts,
        missed: &mut Marks,
    ) {
        let line_bytes = 1u64 << self.line_shift;
        let count = range.end - range.start;
        // Distinct lines, each in one access: a run at this level.
        let period = self.run_period(run);
        let looked_up = match period {
            Some(period) => (self.ways as u64).saturating_mul(period).min(count),
            None => count,
        };
        let mut i = 0;
        while i < looked_up {
            let access = run.access(range.start + i);
            if self.move_side::<WAYS, true>(access, previous, plan, counts) {
                missed[(i / 64) as usize] |= 1 << (i % 64);
            }
            // The accesses after it in the same line hit its set's most recent line: nothing
            // else reaches that set meanwhile. Counted, not looked up.
            let repeats =
                (run.in_same_line(access.addr, self.line_shift) - 1).min(looked_up - i - 1);
            counts.record_hits(run.is_store, repeats);
            i += 1 + repeats;
        }
        let rest = count - looked_up;
        let Some(period) = period.filter(|_| rest > 0) else {
            return;
        };
        // Every set the run reaches holds only lines of it: each later access misses.
        debug_assert!(run.step.unsigned_abs().is_multiple_of(line_bytes));
        counts.record_evicting_misses(run.is_store, rest);
        let lines = Segment {
            first: run.access(range.start).addr >> self.line_shift,
            step: run.step >> self.line_shift,
            count,
        };
        if let (ShadowPlan::Whole, Some(shadow)) = (plan, self.shadow.as_mut()) {
            counts.record_causes(shadow.in_whole_moves_tally(lines, looked_up..count), rest);
        }
        mark_range(missed, looked_up..count);
        self.hold_run_ends(lines, period);
        *previous = lines.line(count - 1);
    }

    /// The sets a side whose step is a whole number of lines (not zero) reaches in turn: its
    /// lines are distinct and every `period`-th falls in the same set. None for other steps.
    pub(super) fn run_period(&self, run: &Run) -> Option<u64> {
        (run.step != 0)
            .then(|| closed_form_sets(run.step, self.geometry.line, self.geometry.sets))
            .flatten()
    }

    /// How many sets `run`'s accesses `range` reach, at most (its lines', capped at the sets).
    fn sets_reached(&self, run: &Run, range: &Range<u64>) -> u64 {
        let count = range.end - range.start;
        if let Some(period) = self.run_period(run) {
            return period.min(count);
        }
        let first = run.access(range.start).addr >> self.line_shift;
        let last = run.access(range.end - 1).addr >> self.line_shift;
        (first.abs_diff(last) + 1).min(self.sets)
    }

    /// Marks in `marked` the sets `run`'s accesses `range` reach.
    fn mark_sets(&self, run: &Run, range: &Range<u64>, marked: &mut [u64; MAX_SETS / 64]) {
        let mut mark = |line: u64| {
            let set = self.set_of(line);
            marked[set / 64] |= 1 << (set % 64);
        };
        if self.run_period(run).is_some() {
            // The sets repeat after `sets` lines at most.
            let end = range.end.min(range.start.saturating_add(self.sets));
            (range.start..end).for_each(|k| mark(run.access(k).addr >> self.line_shift));
            return;
        }
        let line_bytes = 1u64 << self.line_shift;
        if run.step.unsigned_abs() < line_bytes {
            // Consecutive accesses are at most a line apart: every line between the first
            // and the last is reached (the first `sets` of them reach every set).
            let first = run.access(range.start).addr >> self.line_shift;
            let last = run.access(range.end - 1).addr >> self.line_shift;
            let (low, high) = (first.min(last), first.max(last));
            (low..=high.min(low.saturating_add(self.sets - 1))).for_each(&mut mark);
        } else {
            range
                .clone()
                .for_each(|k| mark(run.access(k).addr >> self.line_shift));
        }
    }
}

/// Sets bits `bits` of `marks`.
fn mark_range(marks: &mut Marks, bits: Range<u64>) {
    let mut bit = bits.start;
    while bit < bits.end {
        let within = bit % 64;
        let width = (64 - within).min(bits.end - bit);
        let ones = if width == 64 {
            u64::MAX
        } else {
            ((1u64 << width) - 1) << within
        };
        marks[(bit / 64) as usize] |= ones;
        bit += width;
    }
}
