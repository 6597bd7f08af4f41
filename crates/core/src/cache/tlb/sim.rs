//! The fast TLB simulator: the counts of [`super::reference`], reached with less work.
//!
//! The definition (the reference's module doc): every access translates each page it touches
//! at the first level; a level looks every page up in its set (page number mod sets), LRU; the
//! access is one lookup at each level it reaches and one miss there if any page missed, and a
//! miss sends the whole access to the next level (the cache simulator's rules 3 and 4). A miss
//! at the last level is a page walk.
//!
//! Fast paths, each exact under LRU:
//! - **The page just translated.** An access whose pages are all the page the first level
//!   looked up last is a hit that changes nothing: that page is resident and already the most
//!   recent of its set. Only the lookup count moves.
//! - **Runs a page at a time** ([`TlbSim::load_run`]): the accesses of a run that follow one
//!   another inside that page are counted in one addition, so a row walk costs a lookup per
//!   4 KiB page, not per element.
//!
//! Beside the counts: how often the stream moves to another page than the access before, and
//! its footprint in 4 KiB and 2 MiB pages (distinct pages, counted up to
//! [`MAX_COUNTED_PAGES`] each).

use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hasher};

use serde::Serialize;

use super::{PageSize, TlbLevel};
use crate::cache::AccessSink;

/// Distinct pages the footprint counts per page size before it stops (and says so).
pub const MAX_COUNTED_PAGES: usize = 1 << 20;

const SMALL_SHIFT: u32 = PageSize::Small.shift();

/// One level's counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct TlbCounts {
    /// Accesses that reached the level.
    pub lookups: u64,
    /// Lookups that missed (at the last level: page walks).
    pub misses: u64,
}

/// A multiplicative hash of a page number (the default SipHash made the footprint the
/// TLB's largest cost on a column walk, which touches another page on every access).
#[derive(Debug, Default, Clone, Copy)]
pub struct PageHasher(u64);

impl Hasher for PageHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

type PageSet = HashSet<u64, BuildHasherDefault<PageHasher>>;

/// The distinct 4 KiB and 2 MiB pages a stream touched, each counted up to
/// [`MAX_COUNTED_PAGES`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PageFootprint {
    small: PageSet,
    huge: PageSet,
    capped: bool,
}

impl PageFootprint {
    /// Records 4 KiB pages `first..=last` (and the 2 MiB pages they lie in).
    pub fn add(&mut self, first: u64, last: u64) {
        for page in first..=last {
            Self::insert(&mut self.small, page, &mut self.capped);
            Self::insert(
                &mut self.huge,
                page >> (PageSize::Huge.shift() - SMALL_SHIFT),
                &mut self.capped,
            );
        }
    }

    fn insert(set: &mut PageSet, page: u64, capped: &mut bool) {
        if set.len() < MAX_COUNTED_PAGES {
            set.insert(page);
        } else if !set.contains(&page) {
            *capped = true;
        }
    }

    /// Distinct pages of `size` touched (a lower bound when [`PageFootprint::capped`]).
    pub fn pages(&self, size: PageSize) -> u64 {
        match size {
            PageSize::Small => self.small.len() as u64,
            PageSize::Huge => self.huge.len() as u64,
        }
    }

    /// Whether a page went uncounted because a count reached [`MAX_COUNTED_PAGES`].
    pub fn capped(&self) -> bool {
        self.capped
    }
}

/// What a TLB simulation counted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TlbStats {
    pub accesses: u64,
    /// Accesses whose first page is not the page the access before ended on.
    pub page_changes: u64,
    /// Per level, first first.
    pub levels: Vec<TlbCounts>,
    pub footprint: PageFootprint,
}

/// One set-associative LRU level: each set's page tags most recent first, `page + 1` so an
/// empty way is 0 and stays behind the full ones.
#[derive(Debug, Clone)]
struct Level {
    sets: u64,
    ways: usize,
    tags: Vec<u64>,
}

impl Level {
    fn new(level: &TlbLevel) -> Self {
        let ways = level.ways as usize;
        Self {
            sets: u64::from(level.sets()),
            ways,
            tags: vec![0; level.entries as usize],
        }
    }

    /// Looks `page` up, making it the set's most recent; whether it was resident.
    fn touch(&mut self, page: u64) -> bool {
        let set = (page % self.sets) as usize;
        let ways = &mut self.tags[set * self.ways..(set + 1) * self.ways];
        let tag = page.wrapping_add(1);
        match ways.iter().position(|&t| t == tag) {
            Some(at) => {
                ways[..=at].rotate_right(1);
                true
            }
            None => {
                ways.rotate_right(1);
                ways[0] = tag;
                false
            }
        }
    }

    /// Every set's pages, most recent first.
    fn contents(&self) -> Vec<Vec<u64>> {
        self.tags
            .chunks(self.ways)
            .map(|set| set.iter().take_while(|&&t| t != 0).map(|t| t - 1).collect())
            .collect()
    }
}

/// The fast TLB simulator for one page size; an [`AccessSink`].
#[derive(Debug, Clone)]
pub struct TlbSim {
    page: PageSize,
    levels: Vec<Level>,
    stats: TlbStats,
    /// The page the first level looked up last (its set's most recent).
    last_page: Option<u64>,
    /// The 4 KiB page the footprint recorded last.
    last_small: Option<u64>,
}

impl TlbSim {
    /// A cold TLB of `levels` (first first), all of one page size.
    pub fn new(levels: &[TlbLevel]) -> Self {
        let page = levels.first().map_or(PageSize::Small, |l| l.page);
        Self {
            page,
            levels: levels.iter().map(Level::new).collect(),
            stats: TlbStats {
                levels: vec![TlbCounts::default(); levels.len()],
                ..TlbStats::default()
            },
            last_page: None,
            last_small: None,
        }
    }

    pub fn stats(&self) -> &TlbStats {
        &self.stats
    }

    /// Zeroes the counts and the footprint, keeping the TLB's contents (after a warm-up run).
    pub fn reset_stats(&mut self) {
        for counts in &mut self.stats.levels {
            *counts = TlbCounts::default();
        }
        self.stats.accesses = 0;
        self.stats.page_changes = 0;
        self.stats.footprint = PageFootprint::default();
        self.last_small = None;
    }

    /// Per level, per set, the resident pages most recent first.
    pub fn contents(&self) -> Vec<Vec<Vec<u64>>> {
        self.levels.iter().map(Level::contents).collect()
    }

    fn access(&mut self, addr: u64, len: u32) {
        let end = addr.saturating_add(u64::from(len.max(1)) - 1);
        let (first_small, last_small) = (addr >> SMALL_SHIFT, end >> SMALL_SHIFT);
        self.stats.accesses += 1;
        if first_small == last_small && self.last_small == Some(first_small) {
            // Inside the 4 KiB page just recorded, so inside the page just translated.
            self.stats.levels[0].lookups += 1;
            return;
        }
        self.stats.footprint.add(first_small, last_small);
        self.last_small = Some(last_small);
        let shift = self.page.shift();
        let (first, last) = (addr >> shift, end >> shift);
        if self.last_page != Some(first) {
            self.stats.page_changes += 1;
        } else if first == last {
            self.stats.levels[0].lookups += 1;
            return;
        }
        for (level, counts) in self.levels.iter_mut().zip(&mut self.stats.levels) {
            counts.lookups += 1;
            let mut missed = false;
            for page in first..=last {
                missed |= !level.touch(page);
            }
            if !missed {
                break;
            }
            counts.misses += 1;
        }
        self.last_page = Some(last);
    }

    /// How many accesses of a run, from the one at `addr`, lie whole in 4 KiB page `page`
    /// (the one at `addr` does); at most `left`.
    fn inside_small_page(page: u64, addr: u64, step: i64, len: u64, left: u64) -> u64 {
        let start = page << SMALL_SHIFT;
        let last_start = start + ((1 << SMALL_SHIFT) - len);
        let more = match step {
            0 => left,
            s if s > 0 => (last_start - addr) / s.unsigned_abs(),
            s => (addr - start) / s.unsigned_abs(),
        };
        more.saturating_add(1).min(left)
    }
}

impl AccessSink for TlbSim {
    fn load(&mut self, addr: u64, len: u32) {
        self.access(addr, len);
    }

    fn store(&mut self, addr: u64, len: u32) {
        self.access(addr, len);
    }

    fn load_run(&mut self, addr: u64, step: i64, count: u64, len: u32) {
        let bytes = u64::from(len.max(1));
        let mut k = 0;
        while k < count {
            let at = addr.wrapping_add((k as i64).wrapping_mul(step) as u64);
            let end = at.checked_add(bytes - 1);
            let same = self
                .last_small
                .filter(|&p| at >> SMALL_SHIFT == p && end.is_some_and(|e| e >> SMALL_SHIFT == p));
            match same {
                Some(page) => {
                    let n = Self::inside_small_page(page, at, step, bytes, count - k);
                    self.stats.accesses += n;
                    self.stats.levels[0].lookups += n;
                    k += n;
                }
                None => {
                    self.access(at, len);
                    k += 1;
                }
            }
        }
    }
}
