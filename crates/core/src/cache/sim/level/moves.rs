//! Element moves (a load, then a store, pair after pair) through the first level in one loop:
//! every access is looked up in its set, but the 3C shadow takes the run whole where its rule
//! allows (`shadow/moves.rs`), so a set miss costs the shadow only a seen-bit.

use std::ops::Range;

use super::super::counts::{Counts, classified};
use super::super::shadow::SideLines;
use super::super::stream::{Access, Moves, Stream};
use super::{LevelSim, NO_LINE, tag_of, wrap_add};

/// How the level's 3C shadow takes a move run, decided before its first access.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::cache::sim) enum ShadowPlan {
    /// The level does not classify.
    None,
    /// Taken whole: a line's first touch in the run misses, any other access hits.
    Whole,
    /// Access by access.
    EachAccess,
}

impl LevelSim {
    /// Lets the shadow take `moves` whole if it can; says how the accesses are to be
    /// classified. Accesses must not straddle lines (the hierarchy checks).
    pub(in crate::cache::sim) fn plan_moves(&mut self, moves: &Moves) -> ShadowPlan {
        let shift = self.line_shift;
        let Some(shadow) = self.shadow.as_mut() else {
            return ShadowPlan::None;
        };
        let side =
            |run: &super::super::stream::Run| SideLines::new(run.addr, run.step, run.count, shift);
        match (side(&moves.load), side(&moves.store)) {
            (Some(load), Some(store)) if shadow.take_moves_whole(load, store) => ShadowPlan::Whole,
            _ => ShadowPlan::EachAccess,
        }
    }

    /// Moves `range` of `moves`, in order, exactly as [`LevelSim::access`] would take them
    /// one by one (with the shadow as `plan` says, the same for every range of a run); misses
    /// go to `misses`. LRU gets a loop with the way count a constant for 8, 12 and 16 ways.
    pub(in crate::cache::sim) fn take_moves(
        &mut self,
        moves: &Moves,
        range: Range<u64>,
        plan: ShadowPlan,
        misses: Option<&mut Stream>,
    ) {
        if !self.is_lru() {
            return self.moves_with::<0, false>(moves, range, plan, misses);
        }
        match self.ways {
            8 => self.moves_with::<8, true>(moves, range, plan, misses),
            12 => self.moves_with::<12, true>(moves, range, plan, misses),
            16 => self.moves_with::<16, true>(moves, range, plan, misses),
            _ => self.moves_with::<0, true>(moves, range, plan, misses),
        }
    }

    /// [`Self::take_moves`] with `WAYS` ways (0: the level's own count) under LRU if `LRU`,
    /// any policy otherwise.
    fn moves_with<const WAYS: usize, const LRU: bool>(
        &mut self,
        moves: &Moves,
        range: Range<u64>,
        plan: ShadowPlan,
        mut misses: Option<&mut Stream>,
    ) {
        // Each side's line at the access before the range: a repeat of it is no first touch.
        let mut previous = [moves.load, moves.store].map(|run| match range.start {
            0 => NO_LINE,
            k => run.access(k - 1).addr >> self.line_shift,
        });
        let mut counts = Counts::default();
        if LRU && self.may_take_apart(plan) {
            self.moves_apart::<WAYS>(moves, range, plan, &mut previous, &mut counts, misses);
        } else {
            for k in range {
                let misses = misses.as_deref_mut();
                self.move_pair::<WAYS, LRU>(moves, k, plan, &mut previous, &mut counts, misses);
            }
        }
        self.counts.add(&counts);
    }

    /// Pair `k`: its load, then its store; misses to `misses`.
    #[inline(always)]
    pub(super) fn move_pair<const WAYS: usize, const LRU: bool>(
        &mut self,
        moves: &Moves,
        k: u64,
        plan: ShadowPlan,
        previous: &mut [u64; 2],
        counts: &mut Counts,
        mut misses: Option<&mut Stream>,
    ) {
        let [load, store] = previous;
        for (run, previous) in [(&moves.load, load), (&moves.store, store)] {
            let access = run.access(k);
            let missed = self.move_side::<WAYS, LRU>(access, previous, plan, counts);
            if let (true, Some(misses)) = (missed, misses.as_deref_mut()) {
                misses.push(access);
            }
        }
    }

    /// One access of a side whose last line was `previous` (updated); true on a miss.
    ///
    /// An access to its side's last line follows that touch by one access of the other side,
    /// so the line is the most or the second most recent of its set: with two ways or more it
    /// hits, and under LRU the lookup is at most a swap of the two.
    #[inline(always)]
    pub(super) fn move_side<const WAYS: usize, const LRU: bool>(
        &mut self,
        access: Access,
        previous: &mut u64,
        plan: ShadowPlan,
        counts: &mut Counts,
    ) -> bool {
        let line = access.addr >> self.line_shift;
        let repeat = line == *previous;
        *previous = line;
        let hit = if LRU && repeat && self.ways >= 2 {
            self.lru_touch_recent(line);
            true
        } else if LRU {
            let set = self.set_of(line);
            let mut evictions = 0;
            let hit = self.lru_touch::<WAYS>(set, line, &mut evictions);
            counts.record_evictions(evictions);
            hit
        } else {
            self.lookup(line)
        };
        // A run the shadow took whole needs its view only of the accesses that miss their set.
        let seen = match (plan, self.shadow.as_mut()) {
            (ShadowPlan::EachAccess, Some(shadow)) => Some(shadow.access(line)),
            (ShadowPlan::Whole, Some(shadow)) if !hit => Some(shadow.in_whole_moves(line, repeat)),
            _ => None,
        };
        counts.record(access.is_store, classified(hit, seen));
        !hit
    }

    /// An LRU hit on `line`, known to be the most or the second most recent of its set.
    #[inline(always)]
    fn lru_touch_recent(&mut self, line: u64) {
        let set = self.set_of(line);
        let ways = self.ways;
        let tags = &mut self.tags[set * ways..][..ways];
        let head = self.ring_heads[set] as usize;
        if tags[head] != tag_of(line) {
            tags.swap(head, wrap_add(head, 1, ways));
        }
    }
}
