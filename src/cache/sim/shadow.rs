//! The 3C bookkeeping behind [`super::Hierarchy`]: which lines a level has ever seen
//! (compulsory misses) and a fully-associative LRU shadow cache of the level's size (capacity
//! vs conflict misses).
//!
//! - [`LineTable`]: a direct-indexed radix map from line number to one `u32` per classified
//!   level sharing the table (one column each).
//! - [`FullyAssociativeLru`]: the shadow, an intrusive doubly-linked recency list over a flat
//!   node array, found through the level's table column.
//!
//! Why a linked list: a stamp-based shadow (Bennett–Kruskal / Olken: every access stamps its
//! line, the shadow is the `capacity` newest stamps, kept as a ring of stamps with an "alive"
//! bitmap and periodic compaction of dead stamps) was built, proptested and measured against
//! it (git history of this file, commits 4da1272..784432c). Paired runs in one process on the
//! `benches/simulator.rs` traces, L1+L2 with 3C: the list was 1.1× faster on row and column
//! order, the stamps 1.04–1.25× faster on random lines in 4 MiB. Strided traces are this tool's
//! business, and on them the list's nodes are allocated and revisited in access order, so
//! its node accesses are close to sequential. The list stays.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// Table value: this level has never seen the line.
const UNSEEN: u32 = u32::MAX - 1;
/// Shadow node index meaning "none".
const NIL: u32 = u32::MAX;
/// The shadow's "no line yet" (like the tag arrays' empty marker).
const NO_LINE: u64 = u64::MAX;
/// The largest shadow (in lines): node indices must stay below [`UNSEEN`].
pub(super) const MAX_CAPACITY: usize = UNSEEN as usize - 1;

/// log2 of [`CHUNK_LINES`].
const CHUNK_BITS: u32 = 10;
/// Consecutive lines that share one lazily allocated chunk of a [`LineTable`]. Small enough
/// that a sparse trace (every access in a chunk of its own) costs `CHUNK_LINES × columns × 4`
/// bytes per access — 8 KiB for two columns, so 512 such accesses take 4 MiB — and large
/// enough that regular traces stay in one chunk for long stretches (1024 accesses of a row,
/// 16 of a column of a 512-wide f64 matrix).
pub(super) const CHUNK_LINES: usize = 1 << CHUNK_BITS;

const NO_CHUNK: u64 = u64::MAX;

/// log2 of the chunks one directory page maps (256 chunks: 256 Ki lines, 16 MiB of 64 B lines).
const PAGE_BITS: u32 = 8;
const PAGE_CHUNKS: usize = 1 << PAGE_BITS;
/// Directory page entry: the chunk is not allocated yet.
const NO_INDEX: u32 = u32::MAX;

/// A direct-indexed two-level (radix) map from line number to one `u32` per level sharing it
/// (all 3C-classified levels with the same line size share one table, so a line that misses
/// down the hierarchy is found once). The line's high bits name a chunk of [`CHUNK_LINES`]
/// lines, allocated on first touch with every value `UNSEEN`; its low bits index the chunk.
/// No probing, no clustering, and neighbouring lines keep neighbouring entries.
///
/// Why not a hash map keyed by line? Open addressing needed a probe per access at a random
/// slot (a host cache miss each for column-order traces), and its clusters grew quadratic
/// when two streams' runs met. Here the chunk directory is consulted only when a trace
/// leaves the last two chunks it used, and it is itself two-level: a hash map finds the
/// directory page of 256 neighbouring chunks, which is indexed directly, and the page used
/// last is remembered. A column walk of a 4096-wide f64 matrix leaves its chunk every other
/// access but its page only every 512 (a hash look-up per chunk change took 10% of its time).
///
/// No deletion: every line a level ever sees stays (the compulsory-miss record), with the
/// shadow node it was last given (`UNSEEN` in the columns of levels that never saw it).
#[derive(Debug, Clone)]
pub(super) struct LineTable {
    /// Chunk k occupies `values[k × CHUNK_LINES × columns ..][.. CHUNK_LINES × columns]`, line
    /// by line, `columns` values per line (one host cache line holds a line's values).
    pub(super) values: Vec<u32>,
    columns: usize,
    /// Chunks allocated so far.
    chunk_count: u32,
    /// Page number (chunk number >> PAGE_BITS) → page index in `pages`.
    directory: HashMap<u64, u32, BuildHasherDefault<ChunkHasher>>,
    /// Page k occupies `pages[k × PAGE_CHUNKS ..][.. PAGE_CHUNKS]`: per chunk of the page, its
    /// index in `values` (`NO_INDEX` until allocated).
    pages: Vec<u32>,
    /// The page used last: (page number, offset in `pages`).
    recent_page: (u64, usize),
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
            chunk_count: 0,
            directory: HashMap::default(),
            pages: Vec::new(),
            recent_page: (NO_CHUNK, 0),
            recent: [(NO_CHUNK, 0); 2],
        }
    }

    /// How many chunks have been allocated (tests check sparse use stays bounded).
    #[cfg(test)]
    pub(super) fn chunks(&self) -> usize {
        self.chunk_count as usize
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
            let page = chunk >> PAGE_BITS;
            let page_offset = if self.recent_page.0 == page {
                self.recent_page.1
            } else {
                self.page_offset(page)
            };
            let slot = &mut self.pages[page_offset + (chunk as usize & (PAGE_CHUNKS - 1))];
            if *slot == NO_INDEX {
                *slot = self.chunk_count;
                self.chunk_count += 1;
                self.values.resize(self.values.len() + chunk_values, UNSEEN);
            }
            *slot as usize * chunk_values
        };
        self.recent[1] = self.recent[0];
        self.recent[0] = (chunk, offset);
        offset
    }

    /// Prefetches `line`'s value in `column` if its chunk is one the trace used recently or
    /// is on the directory page used last (nothing is allocated or looked up by hash).
    #[inline(always)]
    pub(super) fn prefetch(&self, line: u64, column: usize) {
        let chunk = line >> CHUNK_BITS;
        let offset = if self.recent[0].0 == chunk {
            self.recent[0].1
        } else if self.recent[1].0 == chunk {
            self.recent[1].1
        } else if self.recent_page.0 == chunk >> PAGE_BITS {
            match self.pages[self.recent_page.1 + (chunk as usize & (PAGE_CHUNKS - 1))] {
                NO_INDEX => return,
                index => index as usize * CHUNK_LINES * self.columns,
            }
        } else {
            return;
        };
        let within = (line as usize & (CHUNK_LINES - 1)) * self.columns;
        crate::mem::prefetch(&self.values, offset + within + column);
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

/// A fully-associative LRU cache of `capacity` lines (the 3C shadow of one level), kept as an
/// intrusive doubly-linked recency list over a flat array of nodes and indexed through the
/// level's column of a [`LineTable`]. O(1) per access, at most one table look-up.
///
/// The table remembers the node a line was last given, and never forgets it: when a node is
/// recycled for another line, the old line's entry goes stale, which the node's own `line`
/// field exposes (`nodes[value].line != line`). So evictions write nothing to the table.
#[derive(Debug, Clone)]
pub(super) struct FullyAssociativeLru {
    /// Which of the hierarchy's tables, and which column in it.
    pub(super) table: usize,
    column: usize,
    capacity: usize,
    /// Shadow nodes: the line held and the recency-list links (one host cache line per node).
    nodes: Vec<ShadowNode>,
    head: u32,
    tail: u32,
    /// The most recent line: repeated touches of it change nothing and skip the table.
    last: u64,
}

#[derive(Debug, Clone, Copy)]
struct ShadowNode {
    line: u64,
    prev: u32,
    next: u32,
}

/// What the shadow says about one line access.
pub(super) struct ShadowOutcome {
    pub(super) fully_associative_hit: bool,
    pub(super) first_touch: bool,
}

impl FullyAssociativeLru {
    pub(super) fn new(capacity: usize, table: usize, column: usize) -> Self {
        Self {
            table,
            column,
            capacity,
            nodes: Vec::new(),
            head: NIL,
            tail: NIL,
            last: NO_LINE,
        }
    }

    /// The column of the shared [`LineTable`] this shadow uses.
    pub(super) fn column(&self) -> usize {
        self.column
    }

    /// Inline always: it is the 3C levels' per-access work, and the compiler left it out of
    /// line once the LRU lookup grew (a call per classified level: L1+L2 3C measured ~20%
    /// slower).
    #[inline(always)]
    pub(super) fn access(&mut self, line: u64, table: &mut LineTable) -> ShadowOutcome {
        if line == self.last {
            return ShadowOutcome {
                fully_associative_hit: true,
                first_touch: false,
            };
        }
        self.last = line;
        let entry = table.entry(line);
        let value = table.values[entry + self.column];
        if value != UNSEEN && self.nodes[value as usize].line == line {
            self.move_to_front(value);
            return ShadowOutcome {
                fully_associative_hit: true,
                first_touch: false,
            };
        }
        let node = if self.nodes.len() < self.capacity {
            self.nodes.push(ShadowNode {
                line,
                prev: NIL,
                next: NIL,
            });
            (self.nodes.len() - 1) as u32
        } else {
            let victim = self.tail;
            self.unlink(victim);
            self.nodes[victim as usize].line = line;
            victim
        };
        table.values[entry + self.column] = node;
        self.push_front(node);
        ShadowOutcome {
            fully_associative_hit: false,
            first_touch: value == UNSEEN,
        }
    }

    fn unlink(&mut self, node: u32) {
        let ShadowNode { prev, next, .. } = self.nodes[node as usize];
        match prev {
            NIL => self.head = next,
            p => self.nodes[p as usize].next = next,
        }
        match next {
            NIL => self.tail = prev,
            n => self.nodes[n as usize].prev = prev,
        }
    }

    fn push_front(&mut self, node: u32) {
        let head = self.head;
        let n = &mut self.nodes[node as usize];
        n.prev = NIL;
        n.next = head;
        match head {
            NIL => self.tail = node,
            h => self.nodes[h as usize].prev = node,
        }
        self.head = node;
    }

    #[inline]
    fn move_to_front(&mut self, node: u32) {
        if self.head != node {
            self.unlink(node);
            self.push_front(node);
        }
    }
}
