//! The stream prefetcher's table, one definition for both models: an entry per 4 KiB page,
//! the least recently used replaced when full, a replaced trained entry's page remembered so a
//! return to it counts as a stream lost to the table's size. The models differ in how they
//! find lines, not in this, so it is written once; the hand-derived tables of `tests.rs` (64
//! streams against 32 entries, thrash on return) hold it to the definition.

use std::collections::HashSet;
use std::ops::Range;

use super::counts::{PrefetchCounts, StreamEntry};

#[derive(Debug, Clone)]
pub(super) struct StreamTable {
    /// Entries with the time each was last used.
    entries: Vec<(StreamEntry, u64)>,
    capacity: usize,
    now: u64,
    /// Pages whose trained entry was replaced and which have not been accessed since.
    lost_pages: HashSet<u64>,
}

impl StreamTable {
    pub(super) fn new(capacity: usize) -> Self {
        Self {
            entries: Vec::with_capacity(capacity),
            capacity,
            now: 0,
            lost_pages: HashSet::new(),
        }
    }

    /// Takes a demand access to `line` of `page` (`train` accesses at one step train an entry,
    /// which then prefetches up to `distance` steps ahead): a page without an entry gets one
    /// (counted in `counts` where it replaces another) and `None`; else the steps ahead of
    /// `line` to prefetch now and the entry's stride.
    pub(super) fn take(
        &mut self,
        line: u64,
        page: u64,
        (train, distance): (u32, u32),
        counts: &mut PrefetchCounts,
    ) -> Option<(Range<u32>, i64)> {
        self.now += 1;
        let Some(slot) = self.entries.iter().position(|(e, _)| e.page == page) else {
            if self.lost_pages.remove(&page) {
                counts.streams_lost += 1;
            }
            let entry = (StreamEntry::start(page, line), self.now);
            if self.entries.len() < self.capacity {
                self.entries.push(entry);
            } else {
                let victim = (0..self.entries.len())
                    .min_by_key(|&i| self.entries[i].1)
                    .expect("a full table has entries");
                counts.table_evictions += 1;
                if self.entries[victim].0.trained(train) {
                    counts.trained_evicted += 1;
                    self.lost_pages.insert(self.entries[victim].0.page);
                }
                self.entries[victim] = entry;
            }
            return None;
        };
        self.entries[slot].1 = self.now;
        let steps = self.entries[slot].0.advance(line, train, distance);
        Some((steps, self.entries[slot].0.stride))
    }
}
