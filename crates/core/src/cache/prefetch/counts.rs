//! What the prefetch model counts ([`PrefetchCounts`]), the shape of the caches it simulates
//! ([`ModelShape`]), and the rules both implementations share word for word: which page a line
//! lies in and how a stream's prefetch targets are chosen.

use serde::Serialize;
use thiserror::Error;

use super::config::{PAGE_BYTES, PrefetchConfig, PrefetchConfigError};
use crate::cache::geometry::CacheLevel;

/// Returning accesses that keep more streams than this are counted as keeping this many.
pub const MAX_COUNTED_STREAMS: usize = 1024;

/// Who brought a line into the fill level with prefetch, as long as no demand has touched it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    Demand,
    Stream,
    NextLine,
}

/// Every count of one simulation, all simulated.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct PrefetchCounts {
    /// Demand accesses fed to the model (loads, stores and modifies, as the simulator counts).
    pub accesses: u64,
    /// Demand line accesses that reach the fill level (miss every level above it).
    pub fill_accesses: u64,
    /// Of those, misses in the fill level without prefetch.
    pub misses_without: u64,
    /// Misses in the fill level with prefetch.
    pub misses_with: u64,
    /// Demand accesses finding a line the stream prefetcher brought and no demand touched yet.
    pub covered_by_stream: u64,
    /// The same for the next-line prefetcher.
    pub covered_by_next_line: u64,
    /// Prefetches that brought a line in (a prefetch of a resident line is dropped uncounted).
    pub issued_by_stream: u64,
    pub issued_by_next_line: u64,
    /// Prefetched lines evicted before any demand touched them.
    pub unused_evicted: u64,
    /// Prefetched lines still resident and untouched at the end.
    pub unused_left: u64,
    /// Stream-table entries replaced by a new page's entry.
    pub table_evictions: u64,
    /// Of those, entries that were trained.
    pub trained_evicted: u64,
    /// Accesses to a page whose trained entry was replaced since the page's last access: a
    /// stream lost to the table's size while its page was still being walked (thrash).
    pub streams_lost: u64,
    /// `streams[k]`: fill-level accesses returning to a page when k distinct pages (theirs
    /// included) were accessed since that page's previous access; k > [`MAX_COUNTED_STREAMS`]
    /// is counted at the last index. A stream table of N entries, one per page and replaced
    /// least recently used first, still holds the page's entry exactly when k ≤ N.
    #[serde(skip)]
    pub streams: Vec<u64>,
}

impl PrefetchCounts {
    pub(super) fn new() -> Self {
        Self {
            streams: vec![0; MAX_COUNTED_STREAMS + 1],
            ..Self::default()
        }
    }

    pub fn covered(&self) -> u64 {
        self.covered_by_stream + self.covered_by_next_line
    }

    pub fn issued(&self) -> u64 {
        self.issued_by_stream + self.issued_by_next_line
    }

    pub fn unused(&self) -> u64 {
        self.unused_evicted + self.unused_left
    }

    /// Fill-level accesses that returned to a page seen before.
    pub fn returning(&self) -> u64 {
        self.streams.iter().sum()
    }

    /// Returning accesses that kept more streams than `entries`: their page's entry was gone.
    pub fn returning_beyond(&self, entries: u32) -> u64 {
        self.streams.iter().skip(entries as usize + 1).sum()
    }

    /// The most streams a returning access kept (capped at [`MAX_COUNTED_STREAMS`]), 0 if none.
    pub fn max_streams(&self) -> usize {
        self.streams.iter().rposition(|&n| n > 0).unwrap_or(0)
    }

    /// The lower median of the streams returning accesses kept, 0 if none.
    pub fn median_streams(&self) -> usize {
        let total = self.returning();
        if total == 0 {
            return 0;
        }
        let half = total.div_ceil(2);
        let mut seen = 0;
        for (k, &n) in self.streams.iter().enumerate() {
            seen += n;
            if seen >= half {
                return k;
            }
        }
        0
    }
}

/// Why the model cannot run on the given levels.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum PrefetchError {
    #[error(transparent)]
    Config(#[from] PrefetchConfigError),
    #[error(
        "the prefetch model ({name}) fills {fill}, which the simulated levels ({levels}) do not \
         include; simulate it too (e.g. --cache {fill}=1M,8,64)"
    )]
    NoFillLevel {
        name: String,
        fill: String,
        levels: String,
    },
    #[error(
        "the prefetch model's caches would take {bytes} bytes up front, more than the limit of \
         {budget}; `--max-sim-memory` raises it"
    )]
    TooLarge { bytes: u64, budget: u64 },
}

/// One simulated level: log2 of its line size, sets and ways.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LevelShape {
    pub line_bits: u32,
    pub sets: u64,
    pub ways: usize,
}

impl LevelShape {
    fn of(level: &CacheLevel) -> Self {
        Self {
            line_bits: level.line.trailing_zeros(),
            sets: u64::from(level.sets),
            ways: level.ways as usize,
        }
    }

    /// The lines of `len` bytes at `addr`: first and last (inclusive).
    pub fn lines(&self, addr: u64, len: u32) -> (u64, u64) {
        let last = addr.saturating_add(u64::from(len.max(1)) - 1);
        (addr >> self.line_bits, last >> self.line_bits)
    }

    pub fn set(&self, line: u64) -> usize {
        (line % self.sets) as usize
    }

    /// The 4 KiB page `line` lies in.
    pub fn page(&self, line: u64) -> u64 {
        (line << self.line_bits) / PAGE_BYTES
    }
}

/// The levels the model simulates: the ones above the fill level (without prefetch, a filter
/// whose misses feed it) and the fill level.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelShape {
    pub filters: Vec<LevelShape>,
    pub fill: LevelShape,
    pub fill_name: String,
    pub names_above: Vec<String>,
    pub next_line: bool,
    pub entries: usize,
    pub train: u32,
    pub distance: u32,
}

impl ModelShape {
    /// Checks `config` against the data levels `levels` (innermost first) and the memory its
    /// caches take against `budget`, before anything is allocated.
    pub fn new(
        levels: &[CacheLevel],
        config: &PrefetchConfig,
        budget: u64,
    ) -> Result<Self, PrefetchError> {
        config.check()?;
        let index = levels
            .iter()
            .position(|l| l.name == config.fill_level)
            .ok_or_else(|| PrefetchError::NoFillLevel {
                name: config.name.clone(),
                fill: config.fill_level.clone(),
                levels: levels
                    .iter()
                    .map(|l| l.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            })?;
        // Tags of the levels above, the fill level twice, and an origin byte per fill way.
        let lines_above: u64 = levels[..index].iter().map(CacheLevel::lines).sum();
        let bytes = lines_above
            .saturating_add(levels[index].lines().saturating_mul(2))
            .saturating_mul(8)
            .saturating_add(levels[index].lines());
        if bytes > budget {
            return Err(PrefetchError::TooLarge { bytes, budget });
        }
        Ok(Self {
            filters: levels[..index].iter().map(LevelShape::of).collect(),
            fill: LevelShape::of(&levels[index]),
            fill_name: levels[index].name.clone(),
            names_above: levels[..index].iter().map(|l| l.name.clone()).collect(),
            next_line: config.next_line,
            entries: config.stream_entries as usize,
            train: config.train_accesses,
            distance: config.distance,
        })
    }

    /// The level whose lines decide whether an access repeats the last one: the first.
    pub fn first(&self) -> LevelShape {
        self.filters.first().copied().unwrap_or(self.fill)
    }

    /// The line after `line`, if it lies in the same page.
    pub fn next_in_page(&self, line: u64) -> Option<u64> {
        let next = line.checked_add(1)?;
        (self.fill.page(next) == self.fill.page(line)).then_some(next)
    }

    /// The line `steps` strides of `stride` lines from `line`, if it lies in `line`'s page.
    pub fn stream_target(&self, line: u64, stride: i64, steps: u32) -> Option<u64> {
        let target = i128::from(line) + i128::from(stride) * i128::from(steps);
        let target = u64::try_from(target).ok()?;
        if target > u64::MAX >> self.fill.line_bits {
            return None;
        }
        (self.fill.page(target) == self.fill.page(line)).then_some(target)
    }
}

/// A stream-table entry: the page it follows, the last line accessed there, the line step
/// between its last accesses, how many accesses in a row kept that step (the first included),
/// and how many steps ahead of `last` it has prefetched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamEntry {
    pub page: u64,
    pub last: u64,
    pub stride: i64,
    pub run: u32,
    pub ahead: u32,
}

impl StreamEntry {
    pub fn start(page: u64, line: u64) -> Self {
        Self {
            page,
            last: line,
            stride: 0,
            run: 1,
            ahead: 0,
        }
    }

    /// Takes a demand access to `line` in the entry's page; returns the steps ahead of `line`
    /// (1 ..= distance) to prefetch now, empty unless the entry is trained. An access to the
    /// last line teaches nothing; a new step restarts training.
    pub fn advance(&mut self, line: u64, train: u32, distance: u32) -> std::ops::Range<u32> {
        let delta = line.wrapping_sub(self.last) as i64;
        if delta == 0 {
            return 1..1;
        }
        if delta == self.stride {
            self.run += 1;
            self.ahead = self.ahead.saturating_sub(1);
        } else {
            self.stride = delta;
            self.run = 2;
            self.ahead = 0;
        }
        self.last = line;
        if self.run < train {
            return 1..1;
        }
        let from = self.ahead + 1;
        self.ahead = distance;
        from..distance + 1
    }

    pub fn trained(&self, train: u32) -> bool {
        self.run >= train
    }
}
