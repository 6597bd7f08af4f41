//! A hardware-prefetch model beside the cache simulator: the same demand accesses, a cache
//! level simulated without and with a next-line and a stream prefetcher, and what the walk
//! does to the prefetcher's stream table.
//!
//! - [`config`]: the parameters ([`PrefetchConfig`]), each preset's values and their source.
//! - `counts`: what is counted, the levels' shape, the rules both implementations share.
//! - `reference`: the plain model, one access and one line at a time: the definition.
//! - `fast`: the same counts, repeats of the last line counted without a lookup.
//! - [`PrefetchReport`]: the counts with the parameters and a sentence derived from them.
//!
//! The model takes every demand access (as a [`Tee`](crate::cache::tee::Tee) beside the
//! simulator feeds it) and simulates, LRU and line by line, the levels above the fill level
//! (no prefetch) so that the fill level sees what an L2 prefetcher sees: the first level's
//! misses. It leaves out timing (a prefetch is never late), miss-handling registers, the L1's
//! own prefetchers (IP-stride, next-line into the L1) and the replacement policy chosen for the
//! simulator (the model is LRU). `docs/simulator.md` ("Hardware prefetch") describes it.
#![forbid(unsafe_code)]

pub mod config;
mod counts;
mod fast;
mod reference;
mod table;
#[cfg(test)]
mod tests;

use serde::Serialize;

pub use config::{PAGE_BYTES, PrefetchConfig, PrefetchConfigError};
pub use counts::{MAX_COUNTED_STREAMS, PrefetchCounts, PrefetchError};

use self::counts::ModelShape;
use self::fast::FastPrefetch;
use self::reference::ReferencePrefetch;
use crate::cache::geometry::CacheLevel;
use crate::cache::{AccessSink, Walk};
use crate::units::{format_count, format_share};

/// The model by either implementation; fed as an [`AccessSink`].
#[derive(Debug)]
pub struct PrefetchModel {
    config: PrefetchConfig,
    shape: ModelShape,
    built: Built,
}

#[derive(Debug)]
enum Built {
    Fast(Box<FastPrefetch>),
    Reference(Box<ReferencePrefetch>),
}

impl PrefetchModel {
    /// The model of `config` on the data levels `levels` (innermost first), its caches' state
    /// checked against `budget` bytes before anything is allocated; `reference` picks the plain
    /// implementation.
    pub fn new(
        levels: &[CacheLevel],
        config: &PrefetchConfig,
        budget: u64,
        reference: bool,
    ) -> Result<Self, PrefetchError> {
        let shape = ModelShape::new(levels, config, budget)?;
        let built = if reference {
            Built::Reference(Box::new(ReferencePrefetch::new(shape.clone())))
        } else {
            Built::Fast(Box::new(FastPrefetch::new(shape.clone())))
        };
        Ok(Self {
            config: config.clone(),
            shape,
            built,
        })
    }

    /// Where the accesses go.
    pub fn sink(&mut self) -> &mut dyn AccessSink {
        match &mut self.built {
            Built::Fast(fast) => fast.as_mut(),
            Built::Reference(reference) => reference.as_mut(),
        }
    }

    pub fn counts(&self) -> PrefetchCounts {
        match &self.built {
            Built::Fast(fast) => fast.counts(),
            Built::Reference(reference) => reference.counts(),
        }
    }

    /// Zeroes the counts but keeps the caches and the stream table (a warm-up pass's state).
    pub fn reset_counts(&mut self) {
        match &mut self.built {
            Built::Fast(fast) => fast.reset_counts(),
            Built::Reference(reference) => reference.reset_counts(),
        }
    }

    /// The counts so far with the parameters and the sentence they support.
    pub fn report(&self) -> PrefetchReport {
        PrefetchReport::new(self.config.clone(), &self.shape, self.counts())
    }
}

impl AccessSink for PrefetchModel {
    fn load(&mut self, addr: u64, len: u32) {
        self.sink().load(addr, len);
    }
    fn store(&mut self, addr: u64, len: u32) {
        self.sink().store(addr, len);
    }
    fn modify(&mut self, addr: u64, len: u32) {
        self.sink().modify(addr, len);
    }
    fn load_run(&mut self, addr: u64, step: i64, count: u64, len: u32) {
        self.sink().load_run(addr, step, count, len);
    }
    fn move_run(&mut self, from: Walk, to: Walk, count: u64, len: u32) {
        self.sink().move_run(from, to, count, len);
    }
}

/// The streams a walk keeps, from [`PrefetchCounts::streams`] (simulated).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StreamSummary {
    /// Fill-level accesses returning to a page seen before.
    pub returning: u64,
    /// The most pages a returning access saw walked since its page's last access (its own
    /// included), capped at [`MAX_COUNTED_STREAMS`]; 0 without returning accesses.
    pub max: usize,
    pub max_capped: bool,
    /// The lower median of the same.
    pub median: usize,
    /// Returning accesses that kept more streams than the table holds.
    pub beyond_table: u64,
    pub table_evictions: u64,
    /// Trained entries replaced by a new page's entry.
    pub trained_evicted: u64,
    /// Returns to a page whose trained entry had been replaced (stream-table thrash).
    pub streams_lost: u64,
}

/// The model's result: parameters, counts, and what they say. Every count is simulated.
#[derive(Debug, Clone, Serialize)]
pub struct PrefetchReport {
    pub model: PrefetchConfig,
    pub source: &'static str,
    /// The level prefetches fill, and the levels above it whose misses feed it.
    pub fill_level: String,
    pub fed_by: Vec<String>,
    #[serde(flatten)]
    pub counts: PrefetchCounts,
    pub covered: u64,
    pub issued: u64,
    pub unused: u64,
    pub streams: StreamSummary,
    /// One sentence derived from the counts above.
    pub finding: String,
}

impl PrefetchReport {
    fn new(model: PrefetchConfig, shape: &ModelShape, counts: PrefetchCounts) -> Self {
        let max = counts.max_streams();
        let streams = StreamSummary {
            returning: counts.returning(),
            max,
            max_capped: max == MAX_COUNTED_STREAMS,
            median: counts.median_streams(),
            beyond_table: counts.returning_beyond(model.stream_entries),
            table_evictions: counts.table_evictions,
            trained_evicted: counts.trained_evicted,
            streams_lost: counts.streams_lost,
        };
        let finding = finding(&model, &shape.fill_name, &counts, &streams);
        Self {
            source: "simulated",
            fill_level: shape.fill_name.clone(),
            fed_by: shape.names_above.clone(),
            covered: counts.covered(),
            issued: counts.issued(),
            unused: counts.unused(),
            counts,
            streams,
            finding,
            model,
        }
    }
}

/// The sentence: how many streams the walk keeps against the table's entries, how often a
/// return to a page found its entry gone, and how much of the fill level's misses each
/// prefetcher covered.
fn finding(
    model: &PrefetchConfig,
    fill: &str,
    counts: &PrefetchCounts,
    streams: &StreamSummary,
) -> String {
    let misses = counts.misses_without;
    if misses == 0 {
        return format!("the walk misses nowhere in {fill} without prefetch: nothing to cover");
    }
    let entries = model.stream_entries;
    let keeps = match (streams.returning, entries) {
        (_, 0) => "the model has no stream prefetcher".to_string(),
        (0, _) => "the walk never returns to a page, so no stream trains".to_string(),
        (_, _) => {
            let median = streams.median;
            let plural = if median == 1 { "stream" } else { "streams" };
            let at_least = if streams.max_capped { "at least " } else { "" };
            let against = if median > entries as usize {
                "more than"
            } else {
                "within"
            };
            let mut text = format!(
                "the walk keeps {median} {plural} at the median (up to {at_least}{}), {against} \
                 the {entries} the stream table holds: {} of its returns to a page find the \
                 page's entry replaced",
                streams.max,
                format_share(streams.beyond_table, streams.returning)
            );
            if streams.streams_lost > 0 {
                text += &format!(
                    ", {} of them a trained stream's (thrash)",
                    format_count(streams.streams_lost)
                );
            }
            text
        }
    };
    let mut text = format!(
        "{keeps}; the stream prefetcher covers {} of {fill}'s demand misses",
        format_share(counts.covered_by_stream, misses)
    );
    if model.next_line {
        text += &format!(
            ", the next-line prefetcher {}",
            format_share(counts.covered_by_next_line, misses)
        );
    }
    text += &format!(
        "; {} of {} misses remain",
        format_count(counts.misses_with),
        format_count(misses)
    );
    text
}
