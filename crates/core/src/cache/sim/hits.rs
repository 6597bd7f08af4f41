//! What a level records of its lookups while its 3C shadow runs on a thread of its own
//! (`sim/detached.rs`), and how the shadow reads it back.

use super::stream::Marks;

/// Hits of a level's line lookups, a bit each, in order; and for the moves' misses the
/// level took a side at a time, the hits marked per side (`level/moves_missed.rs`).
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

    /// A reader from the first hit on.
    pub(super) fn reader(&self) -> HitReader<'_> {
        HitReader {
            log: self,
            at: 0,
            marks_at: 0,
        }
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
pub(super) struct HitReader<'a> {
    log: &'a HitLog,
    at: usize,
    marks_at: usize,
}

impl HitReader<'_> {
    /// The next lookup's hit. A log shorter than the accesses taken is a broken invariant
    /// (the level and this side disagree on the lookups): it panics, and the panic reaches
    /// the caller when the levels are handed back.
    #[inline(always)]
    pub(super) fn next(&mut self) -> bool {
        assert!(self.at < self.log.len, "hit log shorter than the lookups");
        let hit = self.log.words[self.at / 64] >> (self.at % 64) & 1 == 1;
        self.at += 1;
        hit
    }

    /// Whether every hit logged has been read.
    pub(super) fn is_done(&self) -> bool {
        self.at == self.log.len && self.marks_at == self.log.marks.len()
    }

    /// The next piece of moves' hits marked per side.
    pub(super) fn next_marks(&mut self) -> &[Marks; 2] {
        let hits = self
            .log
            .marks
            .get(self.marks_at)
            .expect("hit log shorter than the moves taken apart");
        self.marks_at += 1;
        hits
    }
}
