//! The record of lines a level has ever seen, a bit per line (compulsory misses), for the 3C
//! shadow (`sim/shadow.rs`).

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use super::GOLDEN;
use super::segments::Segment;

/// log2 of [`CHUNK_LINES`].
const CHUNK_BITS: u32 = 12;
/// Consecutive lines whose seen bits share one lazily allocated chunk (512 bytes). A sparse
/// trace (every access in a chunk of its own) costs 512 B per access — 512 such accesses
/// take 256 KiB — while a column walk of a 4096-wide f64 matrix stays in one chunk for 8
/// accesses and on one directory page for 2048.
const CHUNK_LINES: usize = 1 << CHUNK_BITS;
const CHUNK_WORDS: usize = CHUNK_LINES / 64;
/// log2 of the chunks one directory page maps (256 chunks: 1 Mi lines).
const PAGE_BITS: u32 = 8;
const PAGE_CHUNKS: usize = 1 << PAGE_BITS;
/// Directory page entry: the chunk is not allocated yet.
const NO_INDEX: u32 = u32::MAX;
const NO_CHUNK: u64 = u64::MAX;

/// The lines a level has ever seen, a bit each. The line's high bits name a chunk of
/// [`CHUNK_LINES`] lines, allocated on first touch; a hash map finds the directory page of
/// [`PAGE_CHUNKS`] neighbouring chunks, which is indexed directly; the page and the two
/// chunks used last are remembered, so the hash map is consulted only when a trace leaves its
/// page. No deletion: the record of first touches is forever.
///
/// It also remembers the two progressions of lines it last took (a run's, or one grown line
/// by line), as far as each was continued: a run inside one of them is known seen without a
/// bit looked at. A transpose's column walks the lines of the column before it, so of each
/// group of columns that share lines only the first walks its bits (they took a third of the
/// first level's samples on the naive transpose).
#[derive(Debug, Clone)]
pub(in crate::cache::sim) struct SeenLines {
    /// Chunk k's bits are `words[k × CHUNK_WORDS ..][.. CHUNK_WORDS]`.
    words: Vec<u64>,
    /// Page number (chunk number >> PAGE_BITS) → page index in `pages`.
    directory: HashMap<u64, u32, BuildHasherDefault<ChunkHasher>>,
    /// Page k occupies `pages[k × PAGE_CHUNKS ..][.. PAGE_CHUNKS]`: per chunk of the page, its
    /// index in `words` / CHUNK_WORDS (`NO_INDEX` until allocated).
    pages: Vec<u32>,
    /// The page used last: (page number, offset in `pages`).
    recent_page: (u64, usize),
    /// The two chunks used last, most recent first: (chunk number, offset in `words`).
    recent: [(u64, usize); 2],
    /// Progressions of lines all seen, most recent first, each with the line that would
    /// continue it (a count of zero: none).
    known: [(Segment, u64); 2],
}

const NO_PROGRESSION: (Segment, u64) = (
    Segment {
        first: 0,
        step: 0,
        count: 0,
    },
    NO_CHUNK,
);

/// A multiplicative hash for page numbers: small, often consecutive integers, which this
/// spreads well; SipHash's DoS resistance buys nothing here.
#[derive(Debug, Default, Clone, Copy)]
struct ChunkHasher(u64);

impl Hasher for ChunkHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(GOLDEN);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0 ^ n).wrapping_mul(GOLDEN);
    }
}

impl SeenLines {
    pub(super) fn new() -> Self {
        Self {
            words: Vec::new(),
            directory: HashMap::default(),
            pages: Vec::new(),
            recent_page: (NO_CHUNK, 0),
            recent: [(NO_CHUNK, 0); 2],
            known: [NO_PROGRESSION; 2],
        }
    }

    /// How many chunks have been allocated (tests check sparse use stays bounded).
    #[cfg(test)]
    pub(in crate::cache::sim) fn chunks(&self) -> usize {
        self.words.len() / CHUNK_WORDS
    }

    /// Marks `line` seen; returns true if it was not seen before.
    #[inline]
    pub(super) fn insert(&mut self, line: u64) -> bool {
        // Two walks in turn (a transpose's loads and stores) find their chunks without a call.
        let offset = self.offset_of(line >> CHUNK_BITS);
        self.set_bit(offset, line)
    }

    /// [`Self::insert`], and a known progression that `line` continues grows by it: for the
    /// moves a first level takes one pair at a time between stretches it takes whole, which
    /// walk on the same progressions. (Every other single line skips the check: the 3C column
    /// bench took 1.05× the time with it.)
    pub(super) fn insert_continuing(&mut self, line: u64) -> bool {
        let new = self.insert(line);
        for (held, next) in &mut self.known {
            if *next == line && held.count > 0 {
                held.count += 1;
                *next = held.line(held.count);
                break;
            }
        }
        new
    }

    /// Sets `line`'s bit in its chunk at `offset`; true if it was clear.
    #[inline(always)]
    fn set_bit(&mut self, offset: usize, line: u64) -> bool {
        let within = line as usize & (CHUNK_LINES - 1);
        let word = &mut self.words[offset + within / 64];
        let bit = 1u64 << (within % 64);
        let new = *word & bit == 0;
        *word |= bit;
        new
    }

    /// Marks lines `lines.line(k)` for k in `ks` seen; returns how many were not seen before.
    /// The same as [`Self::insert`] line by line, but a chunk is looked up only when the
    /// walk enters it (a column walk of a 4096-wide f64 matrix stays 8 lines in each).
    pub(super) fn insert_lines(&mut self, lines: Segment, ks: std::ops::Range<u64>) -> u64 {
        let walked = Segment {
            first: lines.line(ks.start),
            count: ks.end.saturating_sub(ks.start),
            ..lines
        };
        if walked.count == 0 || self.known.iter().any(|(held, _)| held.covers(&walked)) {
            return 0;
        }
        let mut new = 0;
        let mut current = (NO_CHUNK, 0);
        for k in ks {
            let line = lines.line(k);
            let chunk = line >> CHUNK_BITS;
            if chunk != current.0 {
                current = (chunk, self.offset_of(chunk));
            }
            new += u64::from(self.set_bit(current.1, line));
        }
        self.remember(walked);
        new
    }

    /// Remembers `walked` (all seen now) as continuing a known progression, or in place of
    /// the older one.
    fn remember(&mut self, walked: Segment) {
        if walked.step == 0 {
            return;
        }
        let next = walked.line(walked.count);
        let continued = self.known.iter().position(|(held, after)| {
            held.count > 0 && held.step == walked.step && *after == walked.first
        });
        match continued {
            Some(at) => {
                let (held, after) = &mut self.known[at];
                held.count += walked.count;
                *after = next;
                self.known.swap(0, at);
            }
            None => {
                self.known[1] = self.known[0];
                self.known[0] = (walked, next);
            }
        }
    }

    /// The offset in `words` of `chunk`'s bits, as [`Self::insert`] finds it.
    fn offset_of(&mut self, chunk: u64) -> usize {
        if self.recent[0].0 == chunk {
            self.recent[0].1
        } else if self.recent[1].0 == chunk {
            self.recent.swap(0, 1);
            self.recent[0].1
        } else {
            self.chunk_offset(chunk)
        }
    }

    /// The offset in `words` of `chunk`'s bits, allocating the chunk (no line seen) if absent;
    /// remembers it as the chunk used last.
    #[cold]
    #[inline(never)]
    fn chunk_offset(&mut self, chunk: u64) -> usize {
        let page = chunk >> PAGE_BITS;
        let page_offset = if self.recent_page.0 == page {
            self.recent_page.1
        } else {
            self.page_offset(page)
        };
        let slot = &mut self.pages[page_offset + (chunk as usize & (PAGE_CHUNKS - 1))];
        if *slot == NO_INDEX {
            *slot = (self.words.len() / CHUNK_WORDS) as u32;
            self.words.resize(self.words.len() + CHUNK_WORDS, 0);
        }
        let offset = *slot as usize * CHUNK_WORDS;
        self.recent[1] = self.recent[0];
        self.recent[0] = (chunk, offset);
        offset
    }

    /// The offset in `pages` of directory page `page`, allocating it (every chunk absent) if
    /// new; remembers it as the page used last.
    fn page_offset(&mut self, page: u64) -> usize {
        let next = self.directory.len() as u32;
        let index = *self.directory.entry(page).or_insert(next);
        if index == next {
            self.pages.resize(self.pages.len() + PAGE_CHUNKS, NO_INDEX);
        }
        let offset = index as usize * PAGE_CHUNKS;
        self.recent_page = (page, offset);
        offset
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use proptest::prelude::*;

    use super::*;

    /// One step of a trace: a line (growing a known progression it continues, or not);
    /// lines `first + k·step` for k in `from..to`; or lines from the one after the last
    /// walk's last, with a step of their own.
    #[derive(Debug, Clone)]
    enum Take {
        Line(u64, bool),
        Lines(Segment, u64, u64),
        Onwards(i64, u64),
    }

    const STEPS: [i64; 6] = [1, 7, 4096, -1, 0, 9];

    fn takes() -> impl Strategy<Value = Vec<Take>> {
        // Few distinct steps and starts, so walks continue, repeat and overlap each other.
        let line = (0u64..40, 0u64..3, proptest::bool::ANY)
            .prop_map(|(k, base, continuing)| Take::Line(base * 5000 + k * 7, continuing));
        let lines = (0u64..3, 0usize..6, 1u64..60, 0u64..30, 0u64..40).prop_map(
            |(base, step, count, from, len)| {
                let lines = Segment {
                    first: base * 5000 + 100,
                    step: STEPS[step],
                    count,
                };
                let from = from.min(count);
                Take::Lines(lines, from, (from + len).min(count))
            },
        );
        let onwards = (0usize..6, 1u64..30).prop_map(|(step, n)| Take::Onwards(STEPS[step], n));
        proptest::collection::vec(prop_oneof![line, lines, onwards], 0..60)
    }

    proptest! {
        /// Lines taken one by one or in walks (continued with the same step or another,
        /// repeated, overlapping, across chunks) count as new exactly when a plain set has
        /// not seen them.
        #[test]
        fn seen_lines_equal_a_set(takes in takes()) {
            let mut seen = SeenLines::new();
            let mut set = HashSet::new();
            let mut after = 100;
            for take in takes {
                let (lines, from, to) = match take {
                    Take::Line(line, continuing) => {
                        let new = match continuing {
                            true => seen.insert_continuing(line),
                            false => seen.insert(line),
                        };
                        prop_assert_eq!(new, set.insert(line), "line {}", line);
                        continue;
                    }
                    Take::Lines(lines, from, to) => (lines, from, to),
                    Take::Onwards(step, count) => {
                        (Segment { first: after, step, count }, 0, count)
                    }
                };
                if to > from {
                    after = lines.line(to);
                }
                let new = (from..to).filter(|&k| set.insert(lines.line(k))).count();
                prop_assert_eq!(
                    seen.insert_lines(lines, from..to),
                    new as u64,
                    "{:?} {}..{}", lines, from, to
                );
            }
        }
    }

    #[test]
    fn a_progression_covers_the_runs_inside_it() {
        let held = Segment {
            first: 100,
            step: 4,
            count: 10,
        };
        let table = [
            (100, 4, 10, true),
            (104, 4, 3, true),
            (136, 4, 1, true),
            (136, 4, 2, false),
            (96, 4, 2, false),
            (102, 4, 1, false),
            (100, 8, 2, false),
            (100, 0, 1, false),
        ];
        for (first, step, count, covered) in table {
            let other = Segment { first, step, count };
            assert_eq!(held.covers(&other), covered, "{other:?}");
        }
    }
}
