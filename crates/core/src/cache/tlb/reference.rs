//! The reference TLB simulator: the executable definition the fast one ([`super::sim`]) is
//! checked against. One access at a time, each set a `Vec` of pages most recent first.
//!
//! An access of `len` bytes at `addr` (a zero length counts as one byte; the end saturates at
//! the top of the address space) touches pages `addr >> s` to `(addr + len − 1) >> s` for the
//! run's page size `2^s`. At the first level, then each level it reaches:
//! 1. every page is looked up in set `page mod sets`: a hit makes it the set's most recent;
//!    a miss puts it there, evicting the least recent page of a full set;
//! 2. the access is one lookup, and one miss if any of its pages missed;
//! 3. a miss sends the whole access to the next level; a hit stops it. A miss at the last
//!    level is a page walk.
//!
//! Loads, stores and modifies translate alike. Beside the counts: accesses whose first page is
//! not the page the previous access ended on, and the distinct 4 KiB and 2 MiB pages touched.

use super::sim::{TlbCounts, TlbStats};
use super::{PageSize, TlbLevel};
use crate::cache::AccessSink;

/// The plain TLB simulator.
#[derive(Debug, Clone)]
pub struct ReferenceTlb {
    page: PageSize,
    /// Per level: its ways, and per set the pages most recent first.
    levels: Vec<(usize, Vec<Vec<u64>>)>,
    stats: TlbStats,
    previous_last_page: Option<u64>,
}

impl ReferenceTlb {
    pub fn new(levels: &[TlbLevel]) -> Self {
        Self {
            page: levels.first().map_or(PageSize::Small, |l| l.page),
            levels: levels
                .iter()
                .map(|l| (l.ways as usize, vec![Vec::new(); l.sets() as usize]))
                .collect(),
            stats: TlbStats {
                levels: vec![TlbCounts::default(); levels.len()],
                ..TlbStats::default()
            },
            previous_last_page: None,
        }
    }

    pub fn stats(&self) -> &TlbStats {
        &self.stats
    }

    /// Zeroes the counts and the footprint, keeping the contents.
    pub fn reset_stats(&mut self) {
        self.stats = TlbStats {
            levels: vec![TlbCounts::default(); self.levels.len()],
            ..TlbStats::default()
        };
    }

    /// Per level, per set, the resident pages most recent first.
    pub fn contents(&self) -> Vec<Vec<Vec<u64>>> {
        self.levels.iter().map(|(_, sets)| sets.clone()).collect()
    }

    fn access(&mut self, addr: u64, len: u32) {
        let end = addr.saturating_add(u64::from(len.max(1)) - 1);
        self.stats.accesses += 1;
        self.stats.footprint.add(
            addr >> PageSize::Small.shift(),
            end >> PageSize::Small.shift(),
        );
        let shift = self.page.shift();
        let (first, last) = (addr >> shift, end >> shift);
        if self.previous_last_page != Some(first) {
            self.stats.page_changes += 1;
        }
        self.previous_last_page = Some(last);
        for ((ways, sets), counts) in self.levels.iter_mut().zip(&mut self.stats.levels) {
            counts.lookups += 1;
            let mut missed = false;
            for page in first..=last {
                let index = (page % sets.len() as u64) as usize;
                let set = &mut sets[index];
                match set.iter().position(|&p| p == page) {
                    Some(at) => {
                        set.remove(at);
                    }
                    None => missed = true,
                }
                set.insert(0, page);
                set.truncate(*ways);
            }
            if !missed {
                break;
            }
            counts.misses += 1;
        }
    }
}

impl AccessSink for ReferenceTlb {
    fn load(&mut self, addr: u64, len: u32) {
        self.access(addr, len);
    }

    fn store(&mut self, addr: u64, len: u32) {
        self.access(addr, len);
    }
}
