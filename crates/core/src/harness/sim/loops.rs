//! A user's loop nest (`stridelab sim --loop … --array …`) simulated: the whole nest's counts
//! and 3C split per level, the same per array reference (which reference misses, by which
//! cause, in which sets), the set/GCD model of each reference's innermost stride beside them,
//! and padding advice for the arrays whose references conflict, each candidate leading
//! dimension re-simulated. [`LoopReport`] is the result; its sentences are built here, from
//! the numbers beside them; `cli::text::sim_loop` lays it out.
//!
//! Per-reference counts are exact: the reference engine is fed one access at a time and the
//! change of its per-level counts after each access is that access's outcome, credited to its
//! reference. The whole nest is also counted by the fast engine, and the two must agree
//! (refused as an internal error otherwise). The padding candidates run on the fast engine.
//!
//! Work is bounded before anything is allocated: the nest's accesses are counted exactly
//! against `max_accesses` (twice with `warm`), every index is proved in bounds
//! (`layout::loops::check`), the per-reference attribution runs up to
//! [`MAX_ATTRIBUTED_ACCESSES`], and the padding search simulates at most `max_accesses` in all.

use std::collections::HashMap;

use serde::Serialize;
use thiserror::Error;

use crate::cache::AccessSink;
use crate::cache::geometry::{CacheLevel, ChosenGeometry, GeometrySource};
use crate::cache::model::predict;
use crate::cache::sim::{Engine, LevelStats, Policy, SimError, Simulator};
use crate::cache::tlb::{TlbChoice, TlbSim};
pub use crate::harness::sim::loops_report::{
    PaddingCandidate, PaddingOutput, ReferenceLevel, ReferenceOutput,
};
use crate::harness::sim::loops_words::{padding_sentence, reference_findings, stride_sentence};
use crate::harness::sim::model_words::model_sentence;
use crate::harness::sim::run::simulated_level;
use crate::harness::sim::tlb::{TlbReport, tlb_report};
use crate::kernels::StridePattern;
use crate::layout::loops::{LoopError, LoopNest, NestFacts, Placement, check, walk};
use crate::results::SimulatedLevel;

/// Most accesses the per-reference attribution replays on the reference engine (about ten
/// seconds); a larger nest gets the whole-nest counts and padding advice only.
pub const MAX_ATTRIBUTED_ACCESSES: u64 = 1 << 24;

/// Conflict sets listed per reference and level.
const TOP_SETS: usize = 4;

#[derive(Debug, Error)]
#[non_exhaustive]
pub enum LoopSimError {
    #[error(transparent)]
    Nest(#[from] LoopError),
    #[error(transparent)]
    Cache(#[from] SimError),
    #[error(transparent)]
    Prefetch(#[from] crate::cache::prefetch::PrefetchError),
    #[error(
        "internal error: the per-reference counts ({attributed:?}) do not add up to the \
         whole nest's ({whole:?}) on {level}"
    )]
    AttributionDisagrees {
        level: String,
        attributed: Box<LevelStats>,
        whole: Box<LevelStats>,
    },
}

/// What to simulate and on which caches.
#[derive(Debug, Clone)]
pub struct LoopSimRequest<'a> {
    pub nest: &'a LoopNest,
    pub geometry: &'a ChosenGeometry,
    pub policy: Policy,
    /// Walk the nest once, unrecorded, before counting.
    pub warm: bool,
    pub max_accesses: u64,
    pub max_sim_memory: u64,
    /// The data TLB to simulate beside the caches (`--tlb`), if any.
    pub tlb: Option<&'a TlbChoice>,
}

/// One array as placed.
#[derive(Debug, Clone, Serialize)]
pub struct ArrayOutput {
    pub name: String,
    pub declaration: String,
    pub dtype: &'static str,
    pub shape: Vec<usize>,
    pub strides: Vec<i64>,
    pub leading_dim: Option<usize>,
    pub base_address: u64,
    pub bytes: u64,
}

/// One level of the whole nest's counts.
#[derive(Debug, Clone, Serialize)]
pub struct NestLevel {
    #[serde(flatten)]
    pub counts: SimulatedLevel,
    pub evictions: u64,
    pub source: GeometrySource,
    pub warnings: Vec<String>,
}

/// A simulated loop nest; serialises to the `stridelab sim --loop --json` object.
#[derive(Debug, Serialize)]
pub struct LoopReport {
    /// Every count is simulated; the model lines are analytic.
    pub source: &'static str,
    #[serde(rename = "loop")]
    pub loop_text: String,
    pub arrays: Vec<ArrayOutput>,
    pub geometry_source: String,
    pub warnings: Vec<String>,
    pub policy: Policy,
    pub warm: bool,
    pub accesses: u64,
    pub iterations: u64,
    pub levels: Vec<NestLevel>,
    pub references: Vec<ReferenceOutput>,
    /// Why the references carry no counts, when they do not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attribution_skipped: Option<String>,
    pub padding: Vec<PaddingOutput>,
    /// What the per-reference counts say, in sentences built beside them (the padding
    /// search's are in `padding`).
    pub findings: Vec<String>,
    /// The data TLB beside the caches (`--tlb`), when asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tlb: Option<TlbReport>,
    /// The hardware-prefetch model fed the same nest (`--prefetch on` only; set by
    /// `harness::sim::prefetch::nest_prefetch`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prefetch: Option<crate::cache::prefetch::PrefetchReport>,
}

impl LoopReport {
    pub fn to_json(&self) -> Result<String, serde_json::Error> {
        serde_json::to_string(self)
    }
}

/// Per reference, per level: its counts, and its conflict misses per set.
type Attributed = (Vec<Vec<LevelStats>>, Vec<Vec<HashMap<u64, u64>>>);

/// Feeds the nest's stream to `sink`.
pub(super) fn feed(
    nest: &LoopNest,
    placement: &Placement,
    sink: &mut dyn AccessSink,
) -> Result<(), LoopError> {
    walk(nest, placement, &mut |event| {
        if event.is_store {
            sink.store(event.addr, event.len);
        } else {
            sink.load(event.addr, event.len);
        }
    })
}

/// The whole nest's counts per level on the fast engine.
fn simulate_whole(
    nest: &LoopNest,
    request: &LoopSimRequest,
) -> Result<Vec<LevelStats>, LoopSimError> {
    let placement = Placement::of(&nest.arrays)?;
    let mut sim = Simulator::new(
        Engine::Fast,
        &request.geometry.levels,
        request.policy,
        true,
        request.max_sim_memory,
    )?;
    if request.warm {
        feed(nest, &placement, sim.sink())?;
        sim.reset_stats();
    }
    feed(nest, &placement, sim.sink())?;
    Ok(sim.stats())
}

/// Per reference and level: counts and the sets of its conflict misses, on the reference
/// engine, each access credited with the change it made to the engine's counts.
fn attribute(nest: &LoopNest, request: &LoopSimRequest) -> Result<Attributed, LoopSimError> {
    let levels = &request.geometry.levels;
    let placement = Placement::of(&nest.arrays)?;
    let mut sim = Simulator::new(
        Engine::Reference,
        levels,
        request.policy,
        true,
        request.max_sim_memory,
    )?;
    if request.warm {
        feed(nest, &placement, sim.sink())?;
        sim.reset_stats();
    }
    let n = nest.references.len();
    let mut stats = vec![vec![LevelStats::default(); levels.len()]; n];
    let mut sets = vec![vec![HashMap::new(); levels.len()]; n];
    let mut before = sim.stats();
    walk(nest, &placement, &mut |event| {
        if event.is_store {
            sim.sink().store(event.addr, event.len);
        } else {
            sim.sink().load(event.addr, event.len);
        }
        let after = sim.stats();
        for (k, (now, was)) in after.iter().zip(&before).enumerate() {
            let delta = difference(now, was);
            add(&mut stats[event.reference][k], &delta);
            if delta.conflict > 0 {
                let level = &levels[k];
                let set = (event.addr / u64::from(level.line)) % u64::from(level.sets);
                *sets[event.reference][k].entry(set).or_insert(0) += 1;
            }
        }
        before = after;
    })?;
    Ok((stats, sets))
}

fn difference(now: &LevelStats, was: &LevelStats) -> LevelStats {
    LevelStats {
        loads: now.loads - was.loads,
        stores: now.stores - was.stores,
        load_misses: now.load_misses - was.load_misses,
        store_misses: now.store_misses - was.store_misses,
        evictions: now.evictions - was.evictions,
        compulsory: now.compulsory - was.compulsory,
        capacity: now.capacity - was.capacity,
        conflict: now.conflict - was.conflict,
    }
}

fn add(total: &mut LevelStats, delta: &LevelStats) {
    total.loads += delta.loads;
    total.stores += delta.stores;
    total.load_misses += delta.load_misses;
    total.store_misses += delta.store_misses;
    total.evictions += delta.evictions;
    total.compulsory += delta.compulsory;
    total.capacity += delta.capacity;
    total.conflict += delta.conflict;
}

/// Simulates `request.nest`: bounds first, then the whole nest, the attribution, the model per
/// reference and the padding search.
pub fn simulate_nest(request: &LoopSimRequest) -> Result<LoopReport, LoopSimError> {
    let nest = request.nest;
    let runs = if request.warm { 2 } else { 1 };
    let facts = check(nest, request.max_accesses / runs)?;
    let levels = request.geometry.levels.clone();
    let whole = simulate_whole(nest, request)?;
    let tlb = match request.tlb {
        Some(choice) => Some(nest_tlb(nest, choice, request.warm)?),
        None => None,
    };
    let placement = Placement::of(&nest.arrays)?;
    let per_run = facts.accesses.saturating_mul(runs);
    let (attributed, attribution_skipped) = if per_run <= MAX_ATTRIBUTED_ACCESSES {
        let (stats, sets) = attribute(nest, request)?;
        agree(&levels, &stats, &whole)?;
        (Some((stats, sets)), None)
    } else {
        let skipped = format!(
            "the nest makes {per_run} accesses; references are counted one by one up to \
             {MAX_ATTRIBUTED_ACCESSES}"
        );
        (None, Some(skipped))
    };
    let references = references(nest, &placement, &facts, &levels, attributed.as_ref());
    let padding = pad(
        nest,
        request,
        &facts,
        &whole,
        attributed.as_ref().map(|a| &a.0),
    )?;
    let findings = reference_findings(&references, &levels);
    Ok(LoopReport {
        source: "simulated",
        loop_text: nest.text.clone(),
        arrays: nest
            .arrays
            .iter()
            .zip(&placement.bases)
            .map(|(a, &base)| ArrayOutput {
                name: a.name.clone(),
                declaration: a.text.clone(),
                dtype: a.dtype,
                shape: a.shape.clone(),
                strides: a.strides.clone(),
                leading_dim: a.leading_dim(),
                base_address: base,
                bytes: a.bytes(),
            })
            .collect(),
        geometry_source: request.geometry.describe(),
        warnings: request.geometry.warnings(),
        policy: request.policy,
        warm: request.warm,
        accesses: facts.accesses,
        iterations: facts.iterations,
        levels: levels
            .iter()
            .zip(&whole)
            .map(|(level, stats)| NestLevel {
                counts: simulated_level(level, stats),
                evictions: stats.evictions,
                source: level.source,
                warnings: level.warnings.clone(),
            })
            .collect(),
        references,
        attribution_skipped,
        padding,
        findings,
        tlb,
        prefetch: None,
    })
}

/// The data TLB's report of the nest's stream, fed by a walk of its own (the stream
/// [`simulate_whole`] fed the caches: the walk is deterministic).
fn nest_tlb(nest: &LoopNest, choice: &TlbChoice, warm: bool) -> Result<TlbReport, LoopSimError> {
    let placement = Placement::of(&nest.arrays)?;
    let mut tlb = TlbSim::new(&choice.levels);
    if warm {
        feed(nest, &placement, &mut tlb)?;
        tlb.reset_stats();
    }
    feed(nest, &placement, &mut tlb)?;
    Ok(tlb_report(choice, tlb.stats()))
}

/// The per-reference counts must add up to the whole nest's, level by level.
fn agree(
    levels: &[CacheLevel],
    stats: &[Vec<LevelStats>],
    whole: &[LevelStats],
) -> Result<(), LoopSimError> {
    for (k, level) in levels.iter().enumerate() {
        let mut sum = LevelStats::default();
        for reference in stats {
            add(&mut sum, &reference[k]);
        }
        let mut expected = whole[k];
        // Evictions are not attributed: the reference engine counts them, the fast one too,
        // but they are no part of any reference's outcome the report prints.
        expected.evictions = sum.evictions;
        if sum != expected {
            return Err(LoopSimError::AttributionDisagrees {
                level: level.name.clone(),
                attributed: Box::new(sum),
                whole: Box::new(whole[k]),
            });
        }
    }
    Ok(())
}

fn references(
    nest: &LoopNest,
    placement: &Placement,
    facts: &NestFacts,
    levels: &[CacheLevel],
    attributed: Option<&Attributed>,
) -> Vec<ReferenceOutput> {
    let inner_k = nest.loops.len() - 1;
    let inner = &nest.loops[inner_k].var;
    nest.references
        .iter()
        .enumerate()
        .map(|(r, reference)| {
            let array = &nest.arrays[reference.array];
            let stride_bytes = nest
                .innermost_stride(r)
                .saturating_mul(array.itemsize as i64);
            let first = first_address(nest, placement, r);
            let moved: Vec<usize> = (0..reference.indices.len())
                .filter(|&d| reference.indices[d].coeff(inner_k) != 0)
                .collect();
            let model = if stride_bytes == 0 || facts.longest_inner_run < 2 {
                Vec::new()
            } else {
                let pattern = StridePattern {
                    buffer: reference.array,
                    stride_bytes,
                    count: facts.longest_inner_run,
                    description: String::new(),
                };
                predict(levels, first, stride_bytes, facts.longest_inner_run)
                    .iter()
                    .zip(levels)
                    .map(|(prediction, level)| {
                        format!(
                            "{}: {}",
                            level.name,
                            model_sentence(prediction, level, &pattern)
                        )
                    })
                    .collect()
            };
            let count = |store| {
                nest.slots
                    .iter()
                    .filter(|s| s.reference == r && s.is_store == store)
                    .count()
            };
            ReferenceOutput {
                reference: reference.text.clone(),
                statement: reference.statement + 1,
                array: array.name.clone(),
                loads_per_iteration: count(false),
                stores_per_iteration: count(true),
                stride_bytes,
                stride: stride_sentence(
                    &reference.text,
                    inner,
                    stride_bytes,
                    &moved,
                    array,
                    levels,
                ),
                model,
                levels: attributed
                    .map(|(stats, sets)| reference_levels(levels, &stats[r], &sets[r]))
                    .unwrap_or_default(),
            }
        })
        .collect()
}

/// The address reference `r` touches at the nest's first iteration.
fn first_address(nest: &LoopNest, placement: &Placement, r: usize) -> u64 {
    let reference = &nest.references[r];
    let array = &nest.arrays[reference.array];
    let mut values: Vec<i64> = Vec::with_capacity(nest.loops.len());
    for l in &nest.loops {
        values.push(i64::try_from(l.lower.at(&values)).unwrap_or(0));
    }
    let element = reference
        .indices
        .iter()
        .zip(&array.strides)
        .fold(array.offset as i128, |acc, (index, &stride)| {
            acc + index.at(&values) * i128::from(stride)
        });
    (placement.bases[reference.array] as i128 + element * array.itemsize as i128).max(0) as u64
}

fn reference_levels(
    levels: &[CacheLevel],
    stats: &[LevelStats],
    sets: &[HashMap<u64, u64>],
) -> Vec<ReferenceLevel> {
    levels
        .iter()
        .zip(stats)
        .zip(sets)
        .map(|((level, s), sets)| {
            let mut top: Vec<(u64, u64)> = sets.iter().map(|(&set, &n)| (set, n)).collect();
            top.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
            let conflict_sets = top.len() as u64;
            top.truncate(TOP_SETS);
            ReferenceLevel {
                level: level.name.clone(),
                loads: s.loads,
                stores: s.stores,
                misses: s.misses(),
                compulsory: s.compulsory,
                capacity: s.capacity,
                conflict: s.conflict,
                top_conflict_sets: top,
                conflict_sets,
            }
        })
        .collect()
}

/// Leading dimensions to try for rows of `ld` elements of `itemsize` bytes on `line`-byte
/// lines: one element more, one, two and four lines more, and the next whole line plus one.
pub fn padding_candidates(ld: usize, itemsize: u64, line: u64) -> Vec<usize> {
    let per_line = (line / itemsize.max(1)).max(1) as usize;
    let mut lds: Vec<usize> = [
        ld.checked_add(1),
        ld.checked_add(per_line),
        ld.checked_add(2 * per_line),
        ld.checked_add(4 * per_line),
        ld.checked_next_multiple_of(per_line)
            .and_then(|l| l.checked_add(per_line)),
    ]
    .into_iter()
    .flatten()
    .collect();
    lds.sort_unstable();
    lds.dedup();
    lds
}

/// The padding search: for each array declared by shape with ≥ 2 dims whose references have
/// conflict misses (every such array when the references were not attributed), each candidate
/// leading dimension re-simulated on the fast engine.
fn pad(
    nest: &LoopNest,
    request: &LoopSimRequest,
    facts: &NestFacts,
    whole: &[LevelStats],
    attributed: Option<&Vec<Vec<LevelStats>>>,
) -> Result<Vec<PaddingOutput>, LoopSimError> {
    let levels = &request.geometry.levels;
    let line = u64::from(levels[0].line);
    let runs = if request.warm { 2 } else { 1 };
    let mut work_left = request.max_accesses;
    let mut out = Vec::new();
    for (a, array) in nest.arrays.iter().enumerate() {
        let Some(ld) = array.leading_dim() else {
            continue;
        };
        let conflicts = match attributed {
            Some(stats) => nest
                .references
                .iter()
                .enumerate()
                .filter(|(_, r)| r.array == a)
                .map(|(r, _)| stats[r].iter().map(|s| s.conflict).sum::<u64>())
                .sum::<u64>(),
            None => whole.iter().map(|s| s.conflict).sum(),
        };
        if conflicts == 0 {
            continue;
        }
        let mut candidates = Vec::new();
        for candidate in padding_candidates(ld, array.itemsize, line) {
            let padded = nest.with_leading_dim(a, candidate)?;
            let cost = facts.accesses.saturating_mul(runs);
            if cost > work_left {
                break;
            }
            work_left -= cost;
            check(&padded, request.max_accesses)?;
            let stats = simulate_whole(&padded, request)?;
            candidates.push(PaddingCandidate {
                ld: candidate,
                conflict: stats.iter().map(|s| s.conflict).collect(),
                misses: stats.iter().map(LevelStats::misses).collect(),
            });
        }
        let before: u64 = whole.iter().map(|s| s.conflict).sum();
        let best = candidates
            .iter()
            .enumerate()
            .filter(|(_, c)| c.conflict.iter().sum::<u64>() < before)
            // Fewest conflict misses, then fewest misses, then the least padding.
            .min_by_key(|(_, c)| {
                (
                    c.conflict.iter().sum::<u64>(),
                    c.misses.iter().sum::<u64>(),
                    c.ld,
                )
            })
            .map(|(k, _)| k);
        let mut output = PaddingOutput {
            array: array.name.clone(),
            ld,
            conflict_before: whole.iter().map(|s| s.conflict).collect(),
            misses_before: whole.iter().map(LevelStats::misses).collect(),
            candidates,
            best,
            sentence: String::new(),
        };
        output.sentence = padding_sentence(&output, array, levels);
        out.push(output);
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
