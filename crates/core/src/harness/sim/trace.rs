//! A user's memory trace through the simulator, as `stridelab sim --trace FILE` runs it: the
//! records stream from the file ([`crate::trace`]) straight into the simulated levels (the
//! same [`ChosenGeometry`] and policy as a kernel's `sim`, 3C on), while the figures beside it
//! are counted ([`super::trace_figures`]). [`TraceReport`] is the result; its JSON field names
//! are a stable contract for scripts, its text form is in `cli::text::sim_trace`.
//!
//! Memory: the reader's one buffer, the simulator's up-front state (refused before the first
//! record when over `max_sim_memory`), a counter per set of every level, and what grows with
//! the trace's footprint, not its length: the 3C shadow's record of lines ever seen.

use serde::Serialize;
use thiserror::Error;

use super::beside::feed_beside;
use super::prefetch::prefetch_model;
use super::run::LevelOutput;
use super::trace_figures::{BusiestSets, SetTally, StepHistogram, StepTally};
use crate::cache::geometry::{CacheLevel, ChosenGeometry};
use crate::cache::prefetch::{PrefetchConfig, PrefetchError, PrefetchReport};
use crate::cache::sim::{Engine, LevelStats, Policy, SimError, Simulator};
use crate::cache::tlb::{TlbChoice, TlbSim};
use crate::harness::sim::run::simulated_level;
use crate::harness::sim::tlb::{TlbReport, tlb_report};
use std::sync::mpsc;

use crate::trace::{
    AccessKind, Record, RecordCounts, TraceError, TraceFormat, TraceInput, TraceOptions,
    TraceSummary,
};

/// Busiest sets listed per level by default.
pub const DEFAULT_TOP_SETS: usize = 8;

/// Why a trace cannot be simulated.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum TraceRunError {
    #[error(transparent)]
    Trace(#[from] TraceError),
    #[error(transparent)]
    Cache(#[from] SimError),
    #[error(transparent)]
    Prefetch(#[from] PrefetchError),
    #[error("cannot start the thread that reads the trace")]
    Thread(#[source] std::io::Error),
}

/// How to read and simulate a trace.
#[derive(Debug, Clone)]
pub struct TraceRequest<'a> {
    pub options: TraceOptions,
    /// The levels to simulate (a level with warnings is simulated as given).
    pub geometry: &'a ChosenGeometry,
    pub policy: Policy,
    pub engine: Engine,
    /// Most memory the caches' up-front state may take.
    pub max_sim_memory: u64,
    /// Busiest sets to list per level.
    pub top_sets: usize,
    /// The data TLB to simulate beside the caches (`--tlb`), if any.
    pub tlb: Option<&'a TlbChoice>,
    /// The hardware-prefetch model to feed the same records (`--prefetch on`).
    pub prefetch: Option<&'a PrefetchConfig>,
}

/// The trace's records by kind (counted while reading).
#[derive(Debug, Serialize)]
pub struct CountedRecords {
    pub source: &'static str,
    #[serde(flatten)]
    pub counts: RecordCounts,
}

/// A simulated trace; serialises to the `stridelab sim --trace … --json` object.
#[derive(Debug, Serialize)]
pub struct TraceReport {
    /// The file as named, or `stdin`.
    pub trace: String,
    /// Whether it was gzip-compressed.
    pub compressed: bool,
    pub format: TraceFormat,
    /// Told from the trace (else named with --trace-format).
    pub format_detected: bool,
    /// Where each simulated level came from, in words.
    pub geometry_source: String,
    /// Every level's warnings, each naming its level.
    pub warnings: Vec<String>,
    pub policy: Policy,
    pub records: CountedRecords,
    /// Accesses reaching the first level (simulated: loads, stores and modifies).
    pub accesses: u64,
    /// Every count of `levels` is simulated (cold start, cachegrind semantics).
    pub levels_source: &'static str,
    pub levels: Vec<LevelOutput>,
    /// The sets each level's loads map to most (counted at each level's geometry, every load
    /// of the trace whether or not it reaches the level).
    pub busiest_sets_source: &'static str,
    pub busiest_sets: Vec<BusiestSets>,
    /// Steps between consecutive data accesses (counted).
    pub steps_source: &'static str,
    pub steps: StepHistogram,
    /// The data TLB beside the caches (`--tlb`), when asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tlb: Option<TlbReport>,
    /// The hardware-prefetch model fed the same records (`--prefetch on` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prefetch: Option<PrefetchReport>,
    /// The simulated levels' geometry, in the order of `levels`.
    #[serde(skip)]
    pub geometry: Vec<CacheLevel>,
}

impl TraceReport {
    /// The one-line JSON object.
    pub fn to_json(&self) -> Result<String, serde_json::Error> {
        serde_json::to_string(self)
    }
}

/// Streams `input` through the levels `request` names; the levels are checked against the
/// memory budget before the first record is read.
pub fn simulate_trace(
    input: &mut TraceInput,
    request: &TraceRequest<'_>,
) -> Result<TraceReport, TraceRunError> {
    let levels = request.geometry.levels.clone();
    let mut simulator = Simulator::new(
        request.engine,
        &levels,
        request.policy,
        true,
        request.max_sim_memory,
    )?;
    let mut sets = SetTally::new(&levels);
    let mut steps = StepTally::new(levels[0].line);
    let mut model = prefetch_model(
        &levels,
        request.prefetch,
        request.max_sim_memory,
        request.engine,
    )?;
    let mut tlb = request.tlb.map(|choice| TlbSim::new(&choice.levels));
    let summary = feed_beside(simulator.sink(), tlb.as_mut(), model.as_mut(), |sink| {
        stream_beside(input, &request.options, |batch| {
            for record in batch {
                steps.access(record.addr);
                match record.kind {
                    AccessKind::Load => {
                        sets.load(record.addr);
                        sink.load(record.addr, record.size);
                    }
                    AccessKind::Modify => {
                        sets.load(record.addr);
                        sink.modify(record.addr, record.size);
                    }
                    AccessKind::Store => sink.store(record.addr, record.size),
                }
            }
        })
    })?;
    let stats = simulator.stats();
    Ok(TraceReport {
        trace: input.name.clone(),
        compressed: input.compressed,
        format: summary.format,
        format_detected: summary.format_detected,
        geometry_source: request.geometry.describe(),
        warnings: request.geometry.warnings(),
        policy: request.policy,
        records: CountedRecords {
            source: "counted",
            counts: summary.counts,
        },
        accesses: stats.first().map_or(0, LevelStats::accesses),
        levels_source: "simulated",
        levels: levels
            .iter()
            .zip(&stats)
            .map(|(level, stats)| LevelOutput {
                counts: simulated_level(level, stats),
                evictions: stats.evictions,
                model: None,
                source: level.source,
                warnings: level.warnings.clone(),
            })
            .collect(),
        busiest_sets_source: "counted",
        busiest_sets: sets.busiest(&levels, request.top_sets),
        steps_source: "counted",
        steps: steps.histogram(),
        tlb: request
            .tlb
            .zip(tlb.as_ref())
            .map(|(choice, sim)| tlb_report(choice, sim.stats())),
        prefetch: model.map(|model| model.report()),
        geometry: levels,
    })
}

/// Records handed from the reading thread to the simulating one at a time (128 KiB).
const BATCH_RECORDS: usize = 8192;
/// Full batches that may wait for the simulator: the reader runs at most this far ahead, so
/// memory stays bounded however fast it parses.
const BATCHES_AHEAD: usize = 4;

/// Streams `input`'s records to `consume` a batch at a time, parsing on a thread of its own
/// when the machine has a second CPU: parsing took about 60% of the calling thread's time
/// before, and the simulator's first level the rest (its lower levels have a thread of their
/// own already). With one CPU, parses here.
fn stream_beside(
    input: &mut TraceInput,
    options: &TraceOptions,
    mut consume: impl FnMut(&[Record]),
) -> Result<TraceSummary, TraceRunError> {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    if cpus < 2 {
        return Ok(stream_here(input, options, consume)?);
    }
    let (full_tx, full_rx) = mpsc::sync_channel::<Vec<Record>>(BATCHES_AHEAD);
    let (empty_tx, empty_rx) = mpsc::channel::<Vec<Record>>();
    std::thread::scope(|scope| {
        let reader = std::thread::Builder::new()
            .name("stridelab-trace".into())
            .spawn_scoped(scope, move || {
                let mut batch = Vec::with_capacity(BATCH_RECORDS);
                let summary = input.stream(options, |record| {
                    batch.push(record);
                    if batch.len() == BATCH_RECORDS {
                        let next = empty_rx
                            .try_recv()
                            .unwrap_or_else(|_| Vec::with_capacity(BATCH_RECORDS));
                        // The receiver outlives this thread (it joins it), so a send fails
                        // only if it panicked; that panic is what the caller sees.
                        let _ = full_tx.send(std::mem::replace(&mut batch, next));
                    }
                });
                if !batch.is_empty() {
                    let _ = full_tx.send(batch);
                }
                summary
            });
        let reader = reader.map_err(TraceRunError::Thread)?;
        for mut batch in full_rx {
            consume(&batch);
            batch.clear();
            let _ = empty_tx.send(batch);
        }
        let summary = reader
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))?;
        Ok(summary)
    })
}

/// [`stream_beside`] on the calling thread.
fn stream_here(
    input: &mut TraceInput,
    options: &TraceOptions,
    mut consume: impl FnMut(&[Record]),
) -> Result<TraceSummary, TraceError> {
    input.stream(options, |record| consume(std::slice::from_ref(&record)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::TraceInput;
    use std::io::Cursor;

    fn simulate(text: &str, geometry: &ChosenGeometry) -> Result<TraceReport, TraceRunError> {
        let mut input = TraceInput::from_reader(Cursor::new(text.as_bytes().to_vec()), "t")?;
        simulate_trace(
            &mut input,
            &TraceRequest {
                options: TraceOptions::default(),
                geometry,
                policy: Policy::LRU,
                engine: Engine::Fast,
                max_sim_memory: 1 << 30,
                top_sets: 2,
                tlb: None,
                prefetch: None,
            },
        )
    }

    #[test]
    fn a_trace_counts_like_the_same_accesses_fed_by_hand() {
        let geometry = ChosenGeometry::preset("design-vm").unwrap();
        // A column walk of 64 rows 4 KiB apart, twice, as loads; a store and a modify
        // straddling a line; an instruction fetch skipped.
        let mut text = String::from("# a column walk\n");
        for _ in 0..2 {
            for row in 0..64u64 {
                text.push_str(&format!("R {:x} 8\n", (1u64 << 32) + row * 4096));
            }
        }
        text.push_str("W 0x3c 8\n");
        let report = simulate(&text, &geometry).unwrap();

        let mut by_hand = Simulator::new(
            Engine::Reference,
            &geometry.levels,
            Policy::LRU,
            true,
            1 << 30,
        )
        .unwrap();
        for _ in 0..2 {
            by_hand.sink().load_run(1 << 32, 4096, 64, 8);
        }
        by_hand.sink().store(0x3c, 8);
        let expected = by_hand.stats();
        for ((level, geometry), stats) in report.levels.iter().zip(&geometry.levels).zip(&expected)
        {
            assert_eq!(level.counts, simulated_level(geometry, stats));
        }
        assert!(
            report.levels[0].counts.conflict > 0,
            "the walk's rows share one set"
        );
        assert_eq!(report.accesses, 129);
        assert_eq!(report.records.counts.loads, 128);
        assert_eq!(report.records.counts.not_records, 1);
        // 64 sets of 64 B: every row maps to set 0 of the L1d.
        assert_eq!(report.busiest_sets[0].top[0].set, 0);
        assert_eq!(report.busiest_sets[0].top[0].loads, 128);
        assert_eq!(report.busiest_sets[0].sets_used, 1);
        assert_eq!(report.steps.steps, 128);
        let json = report.to_json().unwrap();
        assert!(json.contains("\"levels_source\":\"simulated\""), "{json}");
        assert!(
            json.contains("\"source\":\"counted\",\"lines\":130"),
            "{json}"
        );
    }
}
