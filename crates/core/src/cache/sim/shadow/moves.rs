//! Element moves (a load, then a store, pair after pair: a copy or transpose loop) taken
//! whole by the 3C shadow, where a long move run leaves it nothing of what it held before.
//!
//! The rule: let each side's step be shorter than a line or a whole number of lines, so each
//! side's lines are a progression whose every line is taken by consecutive accesses of that
//! side, and let the two sides share no line. Then within the run an access either touches
//! its side's line again, two accesses after the last touch (recency position 0 or 1: a hit
//! in any cache of two lines or more), or touches a line for the first time in the run. If
//! the run touches at least C distinct lines (the capacity) and none of its first C is held
//! when it starts, every first touch misses: those first C were not held and nothing of the
//! run brought them in, and once C distinct lines of the run have been touched, the cache
//! holds nothing else, so a later first touch cannot be held either. The cache then holds the
//! run's C lines touched last, most recent first.

use std::ops::Range;

use super::{FullyAssociativeLru, RunTally, Segment, ShadowOutcome};

/// The lines one side of a move run touches at a level: access k falls whole in line
/// `(addr + k·step) >> shift` (the caller checks that no access straddles two lines).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::cache::sim) struct SideLines {
    addr: u64,
    step: i64,
    count: u64,
    shift: u32,
    /// The step between the side's distinct lines: `step` in lines if it is a whole number of
    /// them, else its sign (consecutive lines, or one line for a step of 0).
    line_step: i64,
}

impl SideLines {
    /// `None` unless `step` is shorter than a line or a whole number of lines.
    pub(in crate::cache::sim) fn new(addr: u64, step: i64, count: u64, shift: u32) -> Option<Self> {
        let line = 1i64 << shift;
        let line_step = if step.unsigned_abs() < line.unsigned_abs() {
            step.signum()
        } else if step % line == 0 {
            step >> shift
        } else {
            return None;
        };
        Some(Self {
            addr,
            step,
            count,
            shift,
            line_step,
        })
    }

    /// The line of access `k`.
    #[inline]
    pub(in crate::cache::sim) fn line(&self, k: u64) -> u64 {
        self.addr
            .wrapping_add((k as i64).wrapping_mul(self.step) as u64)
            >> self.shift
    }

    /// How many distinct lines the side touches before its line of access `k`.
    fn rank(&self, k: u64) -> u64 {
        if self.line_step.unsigned_abs() > 1 {
            k
        } else {
            self.line(k).abs_diff(self.line(0))
        }
    }

    /// The distinct lines the side touches.
    fn distinct(&self) -> u64 {
        if self.count == 0 {
            0
        } else {
            self.rank(self.count - 1) + 1
        }
    }

    /// Its distinct lines `from..to` (by rank), as a progression.
    fn lines(&self, from: u64, to: u64) -> Segment {
        Segment {
            first: self.line(0),
            step: self.line_step,
            count: to,
        }
        .from(from)
    }
}

/// What a move run taken whole left in the shadow: its `capacity` lines touched last.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Remnant {
    load: SideLines,
    store: SideLines,
    /// Progressions holding every line left (and perhaps a line or two more), for telling
    /// what the next run meets.
    within: [Segment; 2],
}

impl FullyAssociativeLru {
    /// Takes the move run with sides `load` and `store` (as many accesses each) whole, if the
    /// module's rule applies: then every first touch of a line in the run misses and every
    /// other access hits, and the shadow holds what the run leaves. False (nothing done) if it
    /// does not apply; the caller then takes the accesses one by one.
    pub(in crate::cache::sim) fn take_moves_whole(
        &mut self,
        load: SideLines,
        store: SideLines,
    ) -> bool {
        let count = load.count;
        let capacity = self.capacity as u64;
        // With one line, a line touched two accesses ago is gone.
        if count == 0 || capacity < 2 || load.distinct() + store.distinct() < capacity {
            return false;
        }
        if !load
            .lines(0, load.distinct())
            .disjoint(&store.lines(0, store.distinct()))
        {
            return false;
        }
        // Lines touched by the first `pairs` loads and stores.
        let touched = |pairs: u64| load.rank(pairs - 1) + 1 + store.rank(pairs - 1) + 1;
        let first_pairs = first_true(1, count, |pairs| touched(pairs) >= capacity);
        let first = [
            load.lines(0, load.rank(first_pairs - 1) + 1),
            store.lines(0, store.rank(first_pairs - 1) + 1),
        ];
        if !self.holds_none_of(&first) {
            return false;
        }
        if self.len > 0 {
            self.clear_table();
        }
        self.segments.clear();
        // Lines last touched at pair k or later, on both sides.
        let from = |k: u64| load.distinct() - load.rank(k) + store.distinct() - store.rank(k);
        // The last pair k with from(k) ≥ capacity (from(0) is): every line left was last
        // touched at or after it.
        let cut = first_true(0, count, |k| k + 1 == count || from(k + 1) < capacity);
        self.remnant = Some(Box::new(Remnant {
            load,
            store,
            within: [
                load.lines(load.rank(cut), load.distinct()),
                store.lines(store.rank(cut), store.distinct()),
            ],
        }));
        self.last = store.line(count - 1);
        true
    }

    /// Whether no line of `runs` is held: looked up in the table, or told from the held
    /// progressions (conservatively: false when that would take long).
    fn holds_none_of(&self, runs: &[Segment]) -> bool {
        if self.len > 0 {
            return runs
                .iter()
                .all(|run| (0..run.count).all(|k| self.find(run.line(k)).is_err()));
        }
        let remnant = self.remnant.iter().flat_map(|r| r.within.iter());
        let mut held = self.segments.iter().chain(remnant);
        held.all(|segment| runs.iter().all(|run| run.disjoint(segment)))
    }

    /// What the shadow says of an access of a move run it took whole, by the module's rule:
    /// a `repeat` of its side's last line is held; any other access is its line's first
    /// touch in the run, which misses, and marks the line seen (a first touch ever if it was
    /// not). Asked only of accesses that miss their set, so nothing else is marked.
    #[inline]
    pub(in crate::cache::sim) fn in_whole_moves(
        &mut self,
        line: u64,
        repeat: bool,
    ) -> ShadowOutcome {
        if repeat {
            return RunTally::HIT;
        }
        ShadowOutcome {
            fully_associative_hit: false,
            first_touch: self.seen.insert_continuing(line),
        }
    }

    /// [`Self::in_whole_moves`] for accesses `ks` of one side of such a run, each a different
    /// line `lines.line(k)` (so none a repeat): none is held; marks them seen.
    pub(in crate::cache::sim) fn in_whole_moves_tally(
        &mut self,
        lines: Segment,
        ks: Range<u64>,
    ) -> RunTally {
        RunTally {
            fully_associative_hits: 0,
            first_touches: self.seen.insert_lines(lines, ks),
        }
    }

    /// The remnant's lines, least recent first (for the table), and forgets it.
    pub(super) fn take_remnant(&mut self) -> Vec<u64> {
        let Some(Remnant { load, store, .. }) = self.remnant.take().map(|r| *r) else {
            return Vec::new();
        };
        let mut lines = Vec::with_capacity(self.capacity);
        // Backwards in time: a side's line is recorded at its last touch.
        for k in (0..load.count).rev() {
            for side in [store, load] {
                if k + 1 == side.count || side.line(k + 1) != side.line(k) {
                    lines.push(side.line(k));
                }
            }
            if lines.len() >= self.capacity {
                break;
            }
        }
        lines.truncate(self.capacity);
        lines.reverse();
        lines
    }
}

/// The least `n` in `from..=to` with `holds(n)`, for a `holds` false then true along the
/// range (`to` if it never holds).
fn first_true(from: u64, to: u64, holds: impl Fn(u64) -> bool) -> u64 {
    let (mut low, mut high) = (from, to);
    while low < high {
        let middle = low + (high - low) / 2;
        if holds(middle) {
            high = middle;
        } else {
            low = middle + 1;
        }
    }
    low
}
