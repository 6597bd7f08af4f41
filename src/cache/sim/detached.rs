//! A lower level's 3C shadow on a thread of its own. The level looks its accesses up without
//! it and logs each line lookup's hit ([`HitLog`]); the shadow then takes the same accesses,
//! in the same order, and classifies each miss from the logged hit and its own outcome.
//!
//! Exact: the set lookups and the shadow never read each other's state (a level's outcome
//! for a line is `classified(hit, shadow outcome)`, `level.rs`), so either may run first, and
//! this side takes every piece exactly as the level does — an access line by line, a run of
//! whole lines by the same [`RunShape`] (its looked-up accesses one by one, the rest by the
//! shadow's tally). On the naive transpose the L2's shadow is the larger part of the lower
//! thread's work; apart, it runs beside the L2's set lookups instead of after them.

use super::level::{
    BY_OUTCOME, COUNTERS, Outcome, RunShape, classified, classify_marked, count_rest, line_span,
};
use super::shadow::{FullyAssociativeLru, ShadowOutcome};
use super::stream::{Marks, Piece, Run, Stream};

/// Hits of a level's line lookups, a bit each, in order; and for the moves' misses the
/// level took a side at a time, the hits marked per side ([`LevelSim::take_moves_missed`]).
///
/// [`LevelSim::take_moves_missed`]: super::level::LevelSim::take_moves_missed
#[derive(Debug, Clone, Default)]
pub(super) struct HitLog {
    words: Vec<u64>,
    len: usize,
    marks: Vec<[Marks; 2]>,
}

impl HitLog {
    #[inline(always)]
    pub(super) fn push(&mut self, hit: bool) {
        let bit = self.len % 64;
        if bit == 0 {
            self.words.push(0);
        }
        if let Some(word) = self.words.last_mut() {
            *word |= u64::from(hit) << bit;
        }
        self.len += 1;
    }

    /// The hits of one piece of moves' misses taken a side at a time.
    pub(super) fn push_marks(&mut self, hits: [Marks; 2]) {
        self.marks.push(hits);
    }

    /// The log so far; this one starts again empty, with room for as many.
    pub(super) fn take_all(&mut self) -> Self {
        let empty = Self {
            words: Vec::with_capacity(self.words.len()),
            len: 0,
            marks: Vec::with_capacity(self.marks.len()),
        };
        std::mem::replace(self, empty)
    }
}

/// Reads a [`HitLog`] from its start.
struct HitReader<'a> {
    log: &'a HitLog,
    at: usize,
    marks_at: usize,
}

impl HitReader<'_> {
    /// The next lookup's hit. A log shorter than the accesses taken is a broken invariant
    /// (the level and this side disagree on the lookups): it panics, and the panic reaches
    /// the caller when the levels are handed back.
    #[inline(always)]
    fn next(&mut self) -> bool {
        assert!(self.at < self.log.len, "hit log shorter than the lookups");
        let hit = self.log.words[self.at / 64] >> (self.at % 64) & 1 == 1;
        self.at += 1;
        hit
    }

    /// The next piece of moves' hits marked per side.
    fn next_marks(&mut self) -> &[Marks; 2] {
        let hits = self
            .log
            .marks
            .get(self.marks_at)
            .expect("hit log shorter than the moves taken apart");
        self.marks_at += 1;
        hits
    }
}

/// A level's shadow away from it, with the causes of the misses it has classified.
#[derive(Debug)]
pub(super) struct DetachedShadow {
    shadow: FullyAssociativeLru,
    shape: RunShape,
    /// Indexed as a level's counters; only the `BY_OUTCOME` slots are used.
    counts: [u64; COUNTERS],
    run_outcomes: Vec<ShadowOutcome>,
}

impl DetachedShadow {
    pub(super) fn new(shadow: FullyAssociativeLru, shape: RunShape) -> Self {
        Self {
            shadow,
            shape,
            counts: [0; COUNTERS],
            run_outcomes: Vec::new(),
        }
    }

    /// The shadow and the counts by outcome (a level's counter layout).
    pub(super) fn into_parts(self) -> (FullyAssociativeLru, [u64; COUNTERS]) {
        (self.shadow, self.counts)
    }

    /// Classifies the accesses of `stream`, which the level took in order, logging `hits`.
    pub(super) fn take(&mut self, stream: &Stream, hits: &HitLog) {
        let mut hits = HitReader {
            log: hits,
            at: 0,
            marks_at: 0,
        };
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
        let whole = hits.at == hits.log.len && hits.marks_at == hits.log.marks.len();
        assert!(whole, "hit log longer than the lookups");
    }

    #[inline(always)]
    fn take_access(&mut self, addr: u64, len: u32, hits: &mut HitReader<'_>) {
        let (first, last) = line_span(addr, len, self.shape.line_shift);
        let outcome = if first == last {
            classified(hits.next(), self.shadow.access(first))
        } else {
            self.take_lines(first, last, hits)
        };
        self.counts[BY_OUTCOME + outcome as usize] += 1;
    }

    /// A straddling access: each line in turn; the worst outcome counts.
    #[inline(never)]
    fn take_lines(&mut self, first: u64, last: u64, hits: &mut HitReader<'_>) -> Outcome {
        (first..=last)
            .map(|line| classified(hits.next(), self.shadow.access(line)))
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
        for &outcome in &self.run_outcomes[..plan.looked_up as usize] {
            self.counts[BY_OUTCOME + classified(hits.next(), outcome) as usize] += 1;
        }
        count_rest(&mut self.counts, tally, run.count - plan.looked_up);
    }
}
