//! The 3C bookkeeping behind [`super::Hierarchy`]: which lines a level has ever seen
//! (compulsory misses) and a fully-associative LRU shadow cache of the level's size (capacity
//! vs conflict misses).
//!
//! Two pieces:
//!
//! - [`LineTable`]: a direct-indexed radix map from line number to one `u32` per classified
//!   level sharing the table (one column each).
//! - [`FullyAssociativeLru`]: the shadow, as *stamps* (Bennett–Kruskal / Olken style) rather
//!   than a linked recency list. Every access of a line gives it the next stamp (a counter) and
//!   stores that stamp in the line's table value; the shadow holds the `capacity` lines with the
//!   newest stamps, which are exactly the lines a fully-associative LRU cache of that size holds.
//!   A line is in the shadow ⇔ its stamp is in the live window `[oldest, next)`.
//!
//! Why stamps: a linked list's move-to-front writes the line's node and both neighbours', three
//! scattered host-cache lines per access (the list for a 2 MiB L2 is 512 KiB). Here an access
//! touches its table value (which the compulsory check reads anyway), one bit of a small
//! "alive" bitmap, and appends to a ring sequentially.
//!
//! The price is dead stamps: a re-accessed line leaves its old stamp behind. The ring
//! `stamp → table slot` covers the window; when the window fills it, the live stamps are
//! renumbered in order at the front (compaction, amortised O(1): it only happens after at least
//! as many new stamps as it moves) or, if most stamps are live, the ring doubles (so it stays
//! within 8× the lines the shadow holds). Stamps are `u32`; before they would run out, every
//! stamp in the table is rebased (once per ~2³¹ accesses).

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// Table value: this level has never seen the line.
pub(super) const UNSEEN: u32 = u32::MAX;
/// Table value: seen, but evicted from the shadow before the last stamp rebase. Like any stamp
/// older than the live window, it reads as "not in the shadow".
const EVICTED: u32 = u32::MAX - 1;
/// Stamps are rebased when the next one would reach this (leaving room for a ring's worth of
/// compaction renumbering above it, below [`EVICTED`]).
const STAMP_LIMIT: u32 = 1 << 31;

/// log2 of [`CHUNK_LINES`].
const CHUNK_BITS: u32 = 10;
/// Consecutive lines that share one lazily allocated chunk of a [`LineTable`]. Small enough
/// that a sparse trace (every access in a chunk of its own) costs `CHUNK_LINES × columns × 4`
/// bytes per access — 8 KiB for two columns, so 512 such accesses take 4 MiB — and large
/// enough that regular traces stay in one chunk for long stretches (1024 accesses of a row,
/// 16 of a column of a 512-wide f64 matrix).
pub(super) const CHUNK_LINES: usize = 1 << CHUNK_BITS;

const NO_CHUNK: u64 = u64::MAX;

/// A direct-indexed two-level (radix) map from line number to one `u32` per level sharing it
/// (all 3C-classified levels with the same line size share one table, so a line that misses
/// down the hierarchy is found once). The line's high bits name a chunk of [`CHUNK_LINES`]
/// lines, allocated on first touch with every value `UNSEEN`; its low bits index the chunk.
/// No probing, no clustering, and neighbouring lines keep neighbouring entries.
///
/// Why not a hash map keyed by line? Open addressing needed a probe per access at a random
/// slot (a host cache miss each for column-order traces), and its clusters grew quadratic
/// when two streams' runs met. Here the chunk directory is consulted only when a trace
/// leaves the last two chunks it used.
///
/// No deletion: every line a level ever sees stays (the compulsory-miss record), with the
/// stamp it was last given (`UNSEEN` in the columns of levels that never saw it). Values never
/// move once allocated, so a value's index in `values` names it for good (the shadows' rings
/// hold such indices).
#[derive(Debug, Clone)]
pub(super) struct LineTable {
    /// Chunk k occupies `values[k × CHUNK_LINES × columns ..][.. CHUNK_LINES × columns]`, line
    /// by line, `columns` values per line (one host cache line holds a line's values).
    pub(super) values: Vec<u32>,
    columns: usize,
    /// Chunk number (line >> CHUNK_BITS) → chunk index in `values`.
    directory: HashMap<u64, u32, BuildHasherDefault<ChunkHasher>>,
    /// The two chunks used last, most recent first: (chunk number, offset of its values).
    recent: [(u64, usize); 2],
}

/// A multiplicative (Fibonacci) hash for chunk numbers: they are small, often consecutive
/// integers, which this spreads well, and SipHash's DoS resistance buys nothing here.
#[derive(Debug, Default, Clone, Copy)]
struct ChunkHasher(u64);

impl Hasher for ChunkHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0 ^ n).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

impl LineTable {
    pub(super) fn new(columns: usize) -> Self {
        Self {
            values: Vec::new(),
            columns,
            directory: HashMap::default(),
            recent: [(NO_CHUNK, 0); 2],
        }
    }

    /// How many chunks have been allocated (tests check sparse use stays bounded).
    #[cfg(test)]
    pub(super) fn chunks(&self) -> usize {
        self.directory.len()
    }

    /// The index of `line`'s first value in `values` (its column c is at `+ c`), allocating
    /// its chunk (every value `UNSEEN`) if absent.
    #[inline]
    fn entry(&mut self, line: u64) -> usize {
        let chunk = line >> CHUNK_BITS;
        let within = (line as usize & (CHUNK_LINES - 1)) * self.columns;
        if self.recent[0].0 == chunk {
            return self.recent[0].1 + within;
        }
        self.entry_slow(chunk) + within
    }

    #[cold]
    #[inline(never)]
    fn entry_slow(&mut self, chunk: u64) -> usize {
        let offset = if self.recent[1].0 == chunk {
            self.recent[1].1
        } else {
            let chunk_values = CHUNK_LINES * self.columns;
            let next = self.directory.len() as u32;
            let index = *self.directory.entry(chunk).or_insert(next);
            if index == next {
                // The shadows' rings name values by a u32 index. 2³² values are 16 GiB of
                // table, a trace of millions of scattered lines: stop rather than alias.
                assert!(
                    self.values.len() + chunk_values <= 1 << 32,
                    "the 3C line table would exceed 16 GiB; simulate without 3C"
                );
                self.values.resize(self.values.len() + chunk_values, UNSEEN);
            }
            index as usize * chunk_values
        };
        self.recent[1] = self.recent[0];
        self.recent[0] = (chunk, offset);
        offset
    }
}

/// What the shadow says about one line access.
#[derive(Debug, Clone, Copy)]
pub(super) struct ShadowOutcome {
    pub(super) fully_associative_hit: bool,
    pub(super) first_touch: bool,
}

/// A fully-associative LRU cache of `capacity` lines, kept as stamps (see the module docs).
///
/// Invariants: `oldest ≤ next`, `next - oldest ≤ ring.len()` (a power of two); the live window
/// `[oldest, next)` holds exactly `live ≤ capacity` alive stamps, one per line in the shadow,
/// and that line's table value is that stamp; every other table value of this column is
/// `UNSEEN`, `EVICTED` or an older stamp (< `oldest`). So "in the shadow" needs only the
/// table value; the alive bits serve eviction and compaction.
#[derive(Debug, Clone)]
pub(super) struct FullyAssociativeLru {
    /// Which of the hierarchy's tables, and which column in it.
    pub(super) table: usize,
    pub(super) column: usize,
    capacity: usize,
    /// Stamp s lives in slot `s & ring_mask`: the index in the table's `values` of the line's
    /// value.
    ring: Vec<u32>,
    /// One bit per ring slot: the stamp there is still some line's newest.
    alive: Vec<u64>,
    ring_mask: u32,
    /// The oldest stamp that may be alive (the window's start).
    oldest: u32,
    /// The stamp the next access gets.
    next: u32,
    live: usize,
    /// `next` at which the window fills the ring or stamps must be rebased.
    maintenance_at: u32,
    stamp_limit: u32,
    /// The most recent line: repeated touches of it change nothing and skip the table.
    last: u64,
}

/// The first ring size; it doubles while most of the window is alive.
const INITIAL_RING: u32 = 1 << 10;

/// The largest shadow (in lines) stamps support: rings stay below 8× this (2²⁹ slots).
/// 2²⁶ lines is a 4 GiB cache of 64 B lines.
pub(super) const MAX_CAPACITY: usize = 1 << 26;

impl FullyAssociativeLru {
    pub(super) fn new(capacity: usize, table: usize, column: usize) -> Self {
        Self::with_limits(capacity, table, column, INITIAL_RING, STAMP_LIMIT)
    }

    /// As [`Self::new`], starting with a ring of `initial_ring` slots (a power of two, ≥ 64)
    /// and rebasing stamps once they reach `stamp_limit`: tests use small values to exercise
    /// growth, compaction and rebasing on short traces.
    pub(super) fn with_limits(
        capacity: usize,
        table: usize,
        column: usize,
        initial_ring: u32,
        stamp_limit: u32,
    ) -> Self {
        debug_assert!(initial_ring.is_power_of_two() && initial_ring >= 64);
        let mut shadow = Self {
            table,
            column,
            capacity,
            ring: vec![0; initial_ring as usize],
            alive: vec![0; (initial_ring / 64) as usize],
            ring_mask: initial_ring - 1,
            oldest: 0,
            next: 0,
            live: 0,
            maintenance_at: 0,
            stamp_limit,
            last: u64::MAX,
        };
        shadow.schedule_maintenance();
        shadow
    }

    /// Looks `line` up in the shadow, making it the most recent line (loading it on a miss,
    /// evicting the least recent line if the shadow is full).
    #[inline]
    pub(super) fn access(&mut self, line: u64, table: &mut LineTable) -> ShadowOutcome {
        if line == self.last {
            return ShadowOutcome {
                fully_associative_hit: true,
                first_touch: false,
            };
        }
        self.last = line;
        let slot = table.entry(line) + self.column;
        let stamp = table.values[slot];
        // In the window ⇔ in the shadow (wrapping: UNSEEN, EVICTED and stale stamps all land
        // outside).
        let hit = stamp.wrapping_sub(self.oldest) < self.next - self.oldest;
        if hit {
            self.set_alive(stamp, false);
        } else {
            self.live += 1;
        }
        let stamp_now = self.next;
        table.values[slot] = stamp_now;
        self.put(stamp_now, slot);
        self.next += 1;
        if self.live > self.capacity {
            self.evict_oldest();
        }
        if self.next == self.maintenance_at {
            self.maintain(table);
        }
        ShadowOutcome {
            fully_associative_hit: hit,
            first_touch: stamp == UNSEEN,
        }
    }

    /// Records that `stamp` belongs to the table value at `slot` and is alive.
    #[inline]
    fn put(&mut self, stamp: u32, slot: usize) {
        // LineTable keeps its values' indices below 2³² (see `entry_slow`).
        self.ring[(stamp & self.ring_mask) as usize] = slot as u32;
        self.set_alive(stamp, true);
    }

    #[inline]
    fn set_alive(&mut self, stamp: u32, alive: bool) {
        let position = stamp & self.ring_mask;
        let word = &mut self.alive[(position / 64) as usize];
        let bit = 1u64 << (position % 64);
        if alive {
            *word |= bit;
        } else {
            *word &= !bit;
        }
    }

    #[inline]
    fn is_alive(&self, stamp: u32) -> bool {
        let position = stamp & self.ring_mask;
        self.alive[(position / 64) as usize] & (1u64 << (position % 64)) != 0
    }

    /// Drops the least recent line: the first alive stamp of the window. Amortised O(1): the
    /// window's start only moves forward.
    fn evict_oldest(&mut self) {
        while !self.is_alive(self.oldest) {
            self.oldest += 1;
        }
        self.set_alive(self.oldest, false);
        self.oldest += 1;
        self.live -= 1;
        self.schedule_maintenance();
    }

    fn schedule_maintenance(&mut self) {
        let ring_full = u64::from(self.oldest) + u64::from(self.ring_mask) + 1;
        self.maintenance_at = ring_full.min(u64::from(self.rebase_at())) as u32;
    }

    /// The stamp that triggers a rebase. At least four ring sizes, so a rebase (which leaves
    /// `next` below two ring sizes) always makes room. Rings stay below 2²⁹ slots (capacity ≤
    /// [`MAX_CAPACITY`]), so this stays below `EVICTED` with room for renumbering above it.
    fn rebase_at(&self) -> u32 {
        let ring_size = u64::from(self.ring_mask) + 1;
        u64::from(self.stamp_limit).max(4 * ring_size) as u32
    }

    #[cold]
    #[inline(never)]
    fn maintain(&mut self, table: &mut LineTable) {
        let ring_size = self.ring_mask as usize + 1;
        if self.next - self.oldest == ring_size as u32 {
            // Compacting moves `live` stamps and buys `ring_size - live` new ones before the
            // next compaction; below a quarter live that is ≤ 1 move per 3 accesses.
            if self.live <= ring_size / 4 {
                self.compact(table);
            } else {
                self.grow();
            }
        }
        if self.next >= self.rebase_at() {
            self.rebase(table);
        }
        self.schedule_maintenance();
    }

    /// Renumbers the live stamps, oldest first, to `next, next + 1, …`, so the dead ones
    /// leave the window. The window fills the ring, so stamp `next + k` takes the slot of
    /// `oldest + k`: slots are rewritten in order, never ahead of the ones still to be read.
    fn compact(&mut self, table: &mut LineTable) {
        let base = self.next;
        let mut moved = 0u32;
        for stamp in self.oldest..self.next {
            if !self.is_alive(stamp) {
                continue;
            }
            let slot = self.ring[(stamp & self.ring_mask) as usize] as usize;
            self.set_alive(stamp, false);
            let renumbered = base + moved;
            table.values[slot] = renumbered;
            self.put(renumbered, slot);
            moved += 1;
        }
        debug_assert_eq!(moved as usize, self.live);
        self.oldest = base;
        self.next = base + moved;
    }

    /// Doubles the ring, moving each stamp of the window to its slot under the new mask.
    fn grow(&mut self) {
        let new_size = (self.ring_mask as usize + 1) * 2;
        let mut ring = vec![0; new_size];
        let mut alive = vec![0u64; new_size / 64];
        let new_mask = new_size as u32 - 1;
        for stamp in self.oldest..self.next {
            if self.is_alive(stamp) {
                let position = (stamp & new_mask) as usize;
                ring[position] = self.ring[(stamp & self.ring_mask) as usize];
                alive[position / 64] |= 1 << (position % 64);
            }
        }
        self.ring = ring;
        self.alive = alive;
        self.ring_mask = new_mask;
    }

    /// Shifts every stamp down by a multiple of the ring size (so ring slots stay put), and
    /// turns stamps older than the window into `EVICTED` so they cannot reappear in it.
    fn rebase(&mut self, table: &mut LineTable) {
        let shift = self.oldest & !self.ring_mask;
        let (oldest, next) = (self.oldest, self.next);
        for value in table
            .values
            .iter_mut()
            .skip(self.column)
            .step_by(table.columns)
        {
            if *value == UNSEEN {
                continue;
            }
            *value = if value.wrapping_sub(oldest) < next - oldest {
                *value - shift
            } else {
                EVICTED
            };
        }
        self.oldest -= shift;
        self.next -= shift;
    }
}
