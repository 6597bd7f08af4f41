//! The fast prefetch model: the rules of `reference.rs` with flat sets, a bounded list of
//! recent pages, and repeats of the last line counted without a lookup. Held to the reference
//! by the proptests in `tests.rs`.
//!
//! Why the shortcuts are exact:
//! - **The repeated line.** An access confined to the first level's line that the last access
//!   was confined to finds it the most recent of its set, so the lookup changes nothing. If the
//!   first level is above the fill level the access stops there. If it is the fill level, the
//!   line is also the most recent without prefetch; with prefetch it is too unless a prefetch
//!   the last access issued evicted it (checked: the way's tag and that it is a demand line),
//!   its page is the most recent page (1 stream), and its page's stream-table entry is the
//!   most recent one and learns nothing from a step of 0.
//! - **Runs a line at a time** (`load_run` with a step shorter than a line): after an access
//!   confined to one line, the following ones that fit in the same line are repeats as above,
//!   counted in one addition.
//! - **Recent pages** are kept to [`MAX_COUNTED_STREAMS`] deep, beside a set of every page
//!   seen: a seen page beyond the list kept more streams than are counted apart.

use std::collections::HashSet;

use super::counts::{LevelShape, MAX_COUNTED_STREAMS, ModelShape, Origin, PrefetchCounts};
use super::table::StreamTable;
use crate::cache::AccessSink;

/// An empty way (no line number reaches it: lines are at least 2 bytes).
const EMPTY: u64 = u64::MAX;

/// A set-associative LRU level: per set, `ways` tags, most recent first.
#[derive(Debug)]
struct Sets {
    shape: LevelShape,
    tags: Vec<u64>,
}

impl Sets {
    fn new(shape: LevelShape) -> Self {
        Self {
            shape,
            tags: vec![EMPTY; shape.sets as usize * shape.ways],
        }
    }

    fn range(&self, line: u64) -> std::ops::Range<usize> {
        let start = self.shape.set(line) * self.shape.ways;
        start..start + self.shape.ways
    }

    /// Finds `line`: its way within the set, if present.
    fn find(&self, line: u64) -> Option<usize> {
        self.tags[self.range(line)].iter().position(|&t| t == line)
    }

    /// Moves way `way` of `line`'s set to the front (a miss: the last way, dropped, returned).
    fn move_first(&mut self, line: u64, way: usize) -> u64 {
        let range = self.range(line);
        let set = &mut self.tags[range];
        let old = set[way];
        set.copy_within(0..way, 1);
        set[0] = line;
        old
    }

    /// An LRU lookup: true on a hit.
    fn lookup(&mut self, line: u64) -> bool {
        match self.find(line) {
            Some(way) => {
                self.move_first(line, way);
                true
            }
            None => {
                self.move_first(line, self.shape.ways - 1);
                false
            }
        }
    }

    fn is_most_recent(&self, line: u64) -> bool {
        self.tags[self.range(line).start] == line
    }
}

/// The fill level with prefetch: tags and, way for way, who brought each line.
#[derive(Debug)]
struct PrefetchedSets {
    sets: Sets,
    origins: Vec<Origin>,
}

impl PrefetchedSets {
    /// Moves way `way` of `line`'s set to the front with `origin`; returns the origin the
    /// moved way had, if it held a line.
    fn move_first(&mut self, line: u64, way: usize, origin: Origin) -> Option<Origin> {
        let range = self.sets.range(line);
        let old = self.sets.move_first(line, way);
        let origins = &mut self.origins[range];
        let old_origin = origins[way];
        origins.copy_within(0..way, 1);
        origins[0] = origin;
        (old != EMPTY).then_some(old_origin)
    }

    fn bring(&mut self, line: u64, origin: Origin) -> Option<Origin> {
        self.move_first(line, self.sets.shape.ways - 1, origin)
    }
}

/// The fast model; see the module doc.
#[derive(Debug)]
pub struct FastPrefetch {
    shape: ModelShape,
    filters: Vec<Sets>,
    plain: Sets,
    with: PrefetchedSets,
    table: StreamTable,
    /// The most recently accessed pages, most recent first, at most [`MAX_COUNTED_STREAMS`].
    recent_pages: Vec<u64>,
    seen_pages: HashSet<u64>,
    /// The first level's line the last access was confined to.
    last_line: Option<u64>,
    counts: PrefetchCounts,
}

impl FastPrefetch {
    pub fn new(shape: ModelShape) -> Self {
        let fill = shape.fill;
        Self {
            filters: shape.filters.iter().map(|&f| Sets::new(f)).collect(),
            plain: Sets::new(fill),
            with: PrefetchedSets {
                sets: Sets::new(fill),
                origins: vec![Origin::Demand; fill.sets as usize * fill.ways],
            },
            table: StreamTable::new(shape.entries),
            recent_pages: Vec::with_capacity(MAX_COUNTED_STREAMS),
            seen_pages: HashSet::new(),
            last_line: None,
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
            .sets
            .tags
            .iter()
            .zip(&self.with.origins)
            .filter(|&(&tag, &origin)| tag != EMPTY && origin != Origin::Demand)
            .count() as u64;
        counts
    }

    /// Whether an access confined to `line` of the first level may be counted as a repeat.
    fn repeats(&self, line: u64) -> bool {
        self.last_line == Some(line)
            && (!self.filters.is_empty()
                || (self.with.sets.is_most_recent(line)
                    && self.with.origins[self.with.sets.range(line).start] == Origin::Demand))
    }

    fn count_repeats(&mut self, n: u64) {
        self.counts.accesses += n;
        if self.filters.is_empty() {
            self.counts.fill_accesses += n;
            self.counts.streams[1] += n;
        }
    }

    fn access(&mut self, addr: u64, len: u32) {
        let (first, last) = self.shape.first().lines(addr, len);
        if first == last && self.repeats(first) {
            self.count_repeats(1);
            return;
        }
        self.last_line = (first == last).then_some(first);
        self.counts.accesses += 1;
        for filter in &mut self.filters {
            let (first, last) = filter.shape.lines(addr, len);
            let mut missed = false;
            for line in first..=last {
                missed |= !filter.lookup(line);
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

    fn count_page(&mut self, page: u64) {
        match self.recent_pages.iter().position(|&p| p == page) {
            Some(position) => {
                self.counts.streams[position + 1] += 1;
                self.recent_pages.copy_within(0..position, 1);
                self.recent_pages[0] = page;
            }
            None => {
                if !self.seen_pages.insert(page) {
                    self.counts.streams[MAX_COUNTED_STREAMS] += 1;
                }
                if self.recent_pages.len() < MAX_COUNTED_STREAMS {
                    self.recent_pages.push(page);
                }
                let end = self.recent_pages.len() - 1;
                self.recent_pages.copy_within(0..end, 1);
                self.recent_pages[0] = page;
            }
        }
    }

    fn fill_access(&mut self, line: u64) {
        self.counts.fill_accesses += 1;
        if !self.plain.lookup(line) {
            self.counts.misses_without += 1;
        }
        let page = self.shape.fill.page(line);
        self.count_page(page);
        match self.with.sets.find(line) {
            Some(way) => match self.with.move_first(line, way, Origin::Demand) {
                Some(Origin::Stream) => self.counts.covered_by_stream += 1,
                Some(Origin::NextLine) => self.counts.covered_by_next_line += 1,
                _ => {}
            },
            None => {
                self.counts.misses_with += 1;
                if matches!(
                    self.with.bring(line, Origin::Demand),
                    Some(Origin::Stream | Origin::NextLine)
                ) {
                    self.counts.unused_evicted += 1;
                }
                if self.shape.next_line
                    && let Some(next) = self.shape.next_in_page(line)
                {
                    self.prefetch(next, Origin::NextLine);
                }
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
            match self.shape.stream_target(line, stride, step) {
                Some(target) => self.prefetch(target, Origin::Stream),
                // Later steps lie further beyond the page's edge.
                None => break,
            }
        }
    }

    fn prefetch(&mut self, line: u64, origin: Origin) {
        if self.with.sets.find(line).is_some() {
            return;
        }
        match origin {
            Origin::Stream => self.counts.issued_by_stream += 1,
            Origin::NextLine => self.counts.issued_by_next_line += 1,
            Origin::Demand => {}
        }
        if matches!(
            self.with.bring(line, origin),
            Some(Origin::Stream | Origin::NextLine)
        ) {
            self.counts.unused_evicted += 1;
        }
    }
}

impl AccessSink for FastPrefetch {
    fn load(&mut self, addr: u64, len: u32) {
        self.access(addr, len);
    }

    fn store(&mut self, addr: u64, len: u32) {
        self.access(addr, len);
    }

    fn load_run(&mut self, addr: u64, step: i64, count: u64, len: u32) {
        let first = self.shape.first();
        let line_bytes = 1u64 << first.line_bits;
        let short = step > 0 && (step as u64) < line_bytes;
        let mut k = 0;
        while k < count {
            let at = addr.wrapping_add((k as i64).wrapping_mul(step) as u64);
            self.access(at, len);
            k += 1;
            let (line, last) = first.lines(at, len);
            let Some(end) = line.checked_add(1).and_then(|l| l.checked_mul(line_bytes)) else {
                continue;
            };
            if !short || line != last || !self.repeats(line) {
                continue;
            }
            // The accesses after `at` that end before `end`: at + j·step + len ≤ end.
            let room = end - at.saturating_add(u64::from(len.max(1)));
            let fits = (room / step as u64).min(count - k);
            if fits > 0 {
                self.count_repeats(fits);
                k += fits;
            }
        }
    }
}
