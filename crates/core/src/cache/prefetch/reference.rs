//! The plain prefetch model: one access at a time, every line of it through every level, sets
//! as vectors in recency order, the stream table searched for its page (`table.rs`, shared with
//! the fast model), the pages' recency as one unbounded list. It is the executable definition the fast model (`fast.rs`) is held to.
//!
//! One demand access of `len` bytes at `addr`:
//! 1. The levels above the fill level look up every line of it (LRU, no prefetch); if all hit
//!    in one of them, it stops there (cachegrind's rule: a miss sends the whole access on).
//! 2. Each of its lines at the fill level, in address order, is a fill-level access:
//!    a. the fill level without prefetch looks it up (a miss is counted);
//!    b. its page's streams are counted: the distinct pages accessed since its page's last
//!    access, its own included (a first touch is not counted);
//!    c. the fill level with prefetch looks it up: a hit on a line a prefetcher brought and no
//!    demand touched is covered (by that prefetcher) and becomes a demand line; a miss is
//!    counted and brings the line in, and then the next-line prefetcher fetches the next
//!    line if it is in the same page;
//!    d. the stream table takes it: its page's entry, or a new one replacing the least
//!    recently used (a trained one replaced counts as thrash); a trained entry prefetches
//!    every line up to `distance` steps ahead not yet prefetched, within the page.
//! 3. A prefetch of a resident line is dropped; one of an absent line brings it in as the most
//!    recent of its set. A prefetched line evicted untouched is unused, as is one left at the
//!    end.

use super::counts::{ModelShape, Origin, PrefetchCounts};
use super::table::StreamTable;
use crate::cache::AccessSink;

/// The plain model; see the module doc.
#[derive(Debug)]
pub struct ReferencePrefetch {
    shape: ModelShape,
    /// Per level above the fill level, per set: lines, most recent first.
    filters: Vec<Vec<Vec<u64>>>,
    plain: Vec<Vec<u64>>,
    with: Vec<Vec<(u64, Origin)>>,
    table: StreamTable,
    /// Every page the fill level has seen, most recently accessed first.
    pages: Vec<u64>,
    counts: PrefetchCounts,
}

impl ReferencePrefetch {
    pub fn new(shape: ModelShape) -> Self {
        Self {
            filters: shape
                .filters
                .iter()
                .map(|f| vec![Vec::new(); f.sets as usize])
                .collect(),
            plain: vec![Vec::new(); shape.fill.sets as usize],
            with: vec![Vec::new(); shape.fill.sets as usize],
            table: StreamTable::new(shape.entries),
            pages: Vec::new(),
            counts: PrefetchCounts::new(),
            shape,
        }
    }

    /// Zeroes the counts, keeping every cache's and the stream table's state (after a warm-up).
    pub fn reset_counts(&mut self) {
        self.counts = PrefetchCounts::new();
    }

    /// The counts so far, the prefetched lines still untouched counted as unused.
    pub fn counts(&self) -> PrefetchCounts {
        let mut counts = self.counts.clone();
        counts.unused_left = self
            .with
            .iter()
            .flatten()
            .filter(|(_, origin)| *origin != Origin::Demand)
            .count() as u64;
        counts
    }

    fn access(&mut self, addr: u64, len: u32) {
        self.counts.accesses += 1;
        for level in 0..self.filters.len() {
            let shape = self.shape.filters[level];
            let (first, last) = shape.lines(addr, len);
            let mut missed = false;
            for line in first..=last {
                missed |= !lru(&mut self.filters[level][shape.set(line)], line, shape.ways);
            }
            if !missed {
                return;
            }
        }
        let (first, last) = self.shape.fill.lines(addr, len);
        for line in first..=last {
            self.fill_access(line);
        }
    }

    fn fill_access(&mut self, line: u64) {
        let fill = self.shape.fill;
        self.counts.fill_accesses += 1;
        if !lru(&mut self.plain[fill.set(line)], line, fill.ways) {
            self.counts.misses_without += 1;
        }
        let page = fill.page(line);
        if let Some(position) = self.pages.iter().position(|&p| p == page) {
            let streams = (position + 1).min(self.counts.streams.len() - 1);
            self.counts.streams[streams] += 1;
            self.pages.remove(position);
        }
        self.pages.insert(0, page);

        let set = &mut self.with[fill.set(line)];
        if let Some(position) = set.iter().position(|&(l, _)| l == line) {
            let (_, origin) = set.remove(position);
            match origin {
                Origin::Stream => self.counts.covered_by_stream += 1,
                Origin::NextLine => self.counts.covered_by_next_line += 1,
                Origin::Demand => {}
            }
            set.insert(0, (line, Origin::Demand));
        } else {
            self.counts.misses_with += 1;
            self.bring(line, Origin::Demand);
            if self.shape.next_line
                && let Some(next) = self.shape.next_in_page(line)
            {
                self.prefetch(next, Origin::NextLine);
            }
        }
        if self.shape.entries > 0 {
            self.train(line, page);
        }
    }

    fn train(&mut self, line: u64, page: u64) {
        let shape = (self.shape.train, self.shape.distance);
        let Some((steps, stride)) = self.table.take(line, page, shape, &mut self.counts) else {
            return;
        };
        for step in steps {
            if let Some(target) = self.shape.stream_target(line, stride, step) {
                self.prefetch(target, Origin::Stream);
            }
        }
    }

    fn prefetch(&mut self, line: u64, origin: Origin) {
        let set = &self.with[self.shape.fill.set(line)];
        if set.iter().any(|&(l, _)| l == line) {
            return;
        }
        match origin {
            Origin::Stream => self.counts.issued_by_stream += 1,
            Origin::NextLine => self.counts.issued_by_next_line += 1,
            Origin::Demand => {}
        }
        self.bring(line, origin);
    }

    /// Puts an absent `line` first in its set, evicting the least recent line if full.
    fn bring(&mut self, line: u64, origin: Origin) {
        let fill = self.shape.fill;
        let set = &mut self.with[fill.set(line)];
        if set.len() == fill.ways
            && let Some((_, evicted)) = set.pop()
            && evicted != Origin::Demand
        {
            self.counts.unused_evicted += 1;
        }
        set.insert(0, (line, origin));
    }
}

/// An LRU lookup of `line` in `set` (most recent first): true on a hit.
fn lru(set: &mut Vec<u64>, line: u64, ways: usize) -> bool {
    let hit = match set.iter().position(|&l| l == line) {
        Some(position) => {
            set.remove(position);
            true
        }
        None => {
            if set.len() == ways {
                set.pop();
            }
            false
        }
    };
    set.insert(0, line);
    hit
}

impl AccessSink for ReferencePrefetch {
    fn load(&mut self, addr: u64, len: u32) {
        self.access(addr, len);
    }

    fn store(&mut self, addr: u64, len: u32) {
        self.access(addr, len);
    }
}
