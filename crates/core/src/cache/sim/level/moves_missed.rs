//! A lower level's share of element moves: the level above's misses among some pairs,
//! marked ([`MovesMissed`]). Under LRU the set lookups go a side at a time between the pairs
//! where the sides meet in a set (the argument of `level/moves_apart.rs`: sets are
//! independent), and a side whose marked accesses are consecutive and whole lines apart goes
//! as a run (`level/runs.rs`'s rule). The 3C shadow, fully associative, then takes every
//! marked access in pair order, as it must — here, or on its own thread from the hits marked
//! the same way (`sim/detached.rs`). The level's misses go down marked too.
//!
//! A naive transpose's loads miss a typical L1 on every access, and its column reaches a
//! handful of L2 sets: so the L2 looks up `ways` loads per set it reaches and counts the rest.

use std::ops::Range;

use super::super::counts::{Counts, classified};
use super::super::shadow::{FullyAssociativeLru, Segment};
use super::super::stream::{MARKED_PAIRS, Marks, MovesMissed, Run, Stream};
use super::LevelSim;
use super::moves_apart::MAX_SETS;
use super::runs::RunShape;

const WORDS: usize = MARKED_PAIRS / 64;

impl RunShape {
    /// Whether a level of this shape takes `piece` a side at a time ([`LevelSim::look_up_marked`]):
    /// LRU, sets few enough to mark, and every access in one line (a power-of-two length at
    /// most the line, at addresses multiples of it, as the first level takes moves only so).
    /// Otherwise its accesses are taken one by one, in pair order.
    pub(in crate::cache::sim) fn takes_marked(&self, piece: &MovesMissed) -> bool {
        self.lru
            && u64::from(piece.moves.load.len.max(1)) <= 1 << self.line_shift
            && self.sets as usize <= MAX_SETS
    }
}

impl LevelSim {
    /// The marked misses of `piece` in pair order, exactly as [`LevelSim::run_batch`] would
    /// take them; this level's misses go to `misses`, marked.
    pub(in crate::cache::sim) fn take_moves_missed(
        &mut self,
        piece: &MovesMissed,
        mut misses: Option<&mut Stream>,
    ) {
        if !self.run_shape().takes_marked(piece) {
            return piece
                .for_each_slice(|accesses| self.run_batch(accesses, misses.as_deref_mut()));
        }
        #[cfg(test)]
        {
            self.pieces_marked += 1;
        }
        let mut counts = Counts::default();
        let mut hit: [Marks; 2] = [[0; WORDS]; 2];
        match self.ways {
            8 => self.look_up_marked::<8>(piece, &mut hit, &mut counts),
            12 => self.look_up_marked::<12>(piece, &mut hit, &mut counts),
            16 => self.look_up_marked::<16>(piece, &mut hit, &mut counts),
            _ => self.look_up_marked::<0>(piece, &mut hit, &mut counts),
        }
        // The misses' causes: here, or by the shadow on its own thread from the hits. A level
        // that does not classify has none to count.
        let shift = self.line_shift;
        match (self.shadow.as_mut(), self.hit_log.as_mut()) {
            (Some(shadow), _) => classify_marked(shadow, shift, piece, &hit, &mut counts),
            (None, Some(log)) => log.push_marks(hit),
            (None, None) => {}
        }
        self.counts.add(&counts);
        if let Some(misses) = misses {
            let mut missed = piece.missed;
            for (marks, hits) in missed.iter_mut().zip(&hit) {
                for (word, hits) in marks.iter_mut().zip(hits) {
                    *word &= !hits;
                }
            }
            misses.push_moves(MovesMissed { missed, ..*piece });
        }
    }

    /// The set lookups of the marked accesses: bit i of `hit[side]` set if that side's
    /// access of pair `start + i` hit. Loads, stores, their misses and evictions counted in
    /// `counts`. `WAYS` as in [`LevelSim::run_batch`]'s loops.
    fn look_up_marked<const WAYS: usize>(
        &mut self,
        piece: &MovesMissed,
        hit: &mut [Marks; 2],
        counts: &mut Counts,
    ) {
        let runs = [&piece.moves.load, &piece.moves.store];
        let reach = [0, 1].map(|side| self.marked_reach(runs[side], &piece.missed[side]));
        // The side reaching fewer sets has them marked; the pairs where the other side
        // reaches one of them are taken in order.
        let marked_side = usize::from(reach[1].sets < reach[0].sets);
        let mut sets = [0u64; MAX_SETS / 64];
        let marking = reach[marked_side].marking.clone();
        for_each_bit(&piece.missed[marked_side], marking, |i| {
            let set = self.set_of(self.line_at(runs[marked_side], piece.start + i as u64));
            sets[set / 64] |= 1 << (set % 64);
        });
        let other = 1 - marked_side;
        let mut from = 0;
        for_each_bit(&piece.missed[other], 0..MARKED_PAIRS, |i| {
            let set = self.set_of(self.line_at(runs[other], piece.start + i as u64));
            if sets[set / 64] >> (set % 64) & 1 == 1 {
                for side in 0..2 {
                    self.side_lookups::<WAYS>(piece, side, from..i, hit, counts);
                }
                for side in 0..2 {
                    self.side_lookups::<WAYS>(piece, side, i..i + 1, hit, counts);
                }
                from = i + 1;
            }
        });
        for side in 0..2 {
            self.side_lookups::<WAYS>(piece, side, from..MARKED_PAIRS, hit, counts);
        }
    }

    /// Side `side`'s marked accesses among pairs `range` (relative to the piece's start), in
    /// order, no other access reaching their sets meanwhile: consecutive ones whole lines
    /// apart as a run, others one by one.
    fn side_lookups<const WAYS: usize>(
        &mut self,
        piece: &MovesMissed,
        side: usize,
        range: Range<usize>,
        hit: &mut [Marks; 2],
        counts: &mut Counts,
    ) {
        let run = if side == 0 {
            &piece.moves.load
        } else {
            &piece.moves.store
        };
        let marks = &piece.missed[side];
        let period = self.run_period(run);
        let mut looked_up = range.end;
        let mut as_run = None;
        if let (Some(period), Some(span)) = (period, consecutive(marks, range.clone())) {
            let count = (span.end - span.start) as u64;
            let ways_deep = (self.ways as u64).saturating_mul(period);
            if count > ways_deep {
                // Every set the span reaches holds only lines of it after `ways` of them:
                // each later access misses.
                looked_up = span.start + ways_deep as usize;
                counts.record_evicting_misses(run.is_store, count - ways_deep);
                as_run = Some((span, period));
            }
        }
        let mut evictions = 0;
        for_each_bit(marks, range.start..looked_up, |i| {
            let line = self.line_at(run, piece.start + i as u64);
            let set = self.set_of(line);
            let found = self.lru_touch::<WAYS>(set, line, &mut evictions);
            counts.record_lookup(run.is_store, found);
            hit[side][i / 64] |= u64::from(found) << (i % 64);
        });
        counts.record_evictions(evictions);
        if let Some((span, period)) = as_run {
            let lines = Segment {
                first: self.line_at(run, piece.start + span.start as u64),
                step: run.step >> self.line_shift,
                count: (span.end - span.start) as u64,
            };
            self.hold_run_ends(lines, period);
        }
    }

    /// How many sets a side's marked accesses reach at most, and which of them to mark to
    /// cover those sets: consecutive accesses whole lines apart reach their first `period`
    /// sets over and over; any others, a set each at most.
    fn marked_reach(&self, run: &Run, marks: &Marks) -> Reach {
        let all = Reach {
            sets: marks.iter().map(|w| u64::from(w.count_ones())).sum(),
            marking: 0..MARKED_PAIRS,
        };
        match (self.run_period(run), consecutive(marks, 0..MARKED_PAIRS)) {
            (Some(period), Some(span)) if period < (span.end - span.start) as u64 => Reach {
                sets: period,
                marking: span.start..span.start + period as usize,
            },
            _ => all,
        }
    }

    fn line_at(&self, run: &Run, k: u64) -> u64 {
        run.access(k).addr >> self.line_shift
    }
}

/// Every marked access of `piece` in pair order through the 3C `shadow` (its loads, stores
/// and misses already counted), its outcome counted with its set lookup's (`hit`).
pub(in crate::cache::sim) fn classify_marked(
    shadow: &mut FullyAssociativeLru,
    line_shift: u32,
    piece: &MovesMissed,
    hit: &[Marks; 2],
    counts: &mut Counts,
) {
    let runs = [&piece.moves.load, &piece.moves.store];
    piece.for_each_pair(|pair, missed| {
        let i = (pair - piece.start) as usize;
        for side in 0..2 {
            if missed[side] {
                let found = hit[side][i / 64] >> (i % 64) & 1 == 1;
                let line = runs[side].access(pair).addr >> line_shift;
                counts.record_cause(classified(found, Some(shadow.access(line))));
            }
        }
    });
}

/// The sets a side's marked accesses reach, at most, and the accesses that reach them all.
struct Reach {
    sets: u64,
    marking: Range<usize>,
}

/// Calls `take` with each set bit of `marks` within `range`, ascending.
fn for_each_bit(marks: &Marks, range: Range<usize>, mut take: impl FnMut(usize)) {
    if range.start >= range.end {
        return;
    }
    let words = range.start / 64..=(range.end - 1) / 64;
    for (word, &bits) in marks[words.clone()].iter().enumerate() {
        let word = words.start() + word;
        let mut bits = within(bits, word, &range);
        while bits != 0 {
            take(word * 64 + bits.trailing_zeros() as usize);
            bits &= bits - 1;
        }
    }
}

/// The set bits of `marks` within `range` if there are at least two and they are consecutive.
fn consecutive(marks: &Marks, range: Range<usize>) -> Option<Range<usize>> {
    if range.start >= range.end {
        return None;
    }
    let (mut first, mut last, mut count) = (None, 0, 0);
    let words = range.start / 64..=(range.end - 1) / 64;
    for (word, &bits) in marks[words.clone()].iter().enumerate() {
        let word = words.start() + word;
        let bits = within(bits, word, &range);
        if bits != 0 {
            first = first.or(Some(word * 64 + bits.trailing_zeros() as usize));
            last = word * 64 + 63 - bits.leading_zeros() as usize;
            count += bits.count_ones() as usize;
        }
    }
    let first = first?;
    (count >= 2 && last + 1 - first == count).then_some(first..last + 1)
}

/// Word `word` of some marks, keeping only the bits within `range`.
fn within(bits: u64, word: usize, range: &Range<usize>) -> u64 {
    let base = word * 64;
    let mut bits = bits;
    if base < range.start {
        bits &= u64::MAX << (range.start - base);
    }
    if range.end < base + 64 {
        bits &= (1u64 << (range.end - base)) - 1;
    }
    bits
}

#[cfg(test)]
mod tests {
    use super::*;

    fn marks(bits: &[usize]) -> Marks {
        let mut marks = [0; WORDS];
        for &bit in bits {
            marks[bit / 64] |= 1 << (bit % 64);
        }
        marks
    }

    #[test]
    fn consecutive_bits_form_a_span_within_the_range() {
        type Case = (&'static [usize], Range<usize>, Option<Range<usize>>);
        let table: [Case; 7] = [
            (&[3, 4, 5], 0..MARKED_PAIRS, Some(3..6)),
            (&[3, 5], 0..MARKED_PAIRS, None),
            (&[7], 0..MARKED_PAIRS, None),
            (&[62, 63, 64, 65], 0..MARKED_PAIRS, Some(62..66)),
            (&[1, 2, 10, 11, 12], 5..20, Some(10..13)),
            (&[1, 2, 10, 11, 12], 0..11, None),
            (&[], 0..MARKED_PAIRS, None),
        ];
        for (bits, range, span) in table {
            assert_eq!(
                consecutive(&marks(bits), range.clone()),
                span,
                "{bits:?} in {range:?}"
            );
        }
    }

    #[test]
    fn bits_are_visited_in_order_within_the_range() {
        let set = marks(&[0, 63, 64, 200, 1023]);
        let mut seen = Vec::new();
        for_each_bit(&set, 1..1023, |i| seen.push(i));
        assert_eq!(seen, [63, 64, 200]);
        seen.clear();
        for_each_bit(&set, 0..MARKED_PAIRS, |i| seen.push(i));
        assert_eq!(seen, [0, 63, 64, 200, 1023]);
    }
}
