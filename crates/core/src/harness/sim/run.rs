//! One simulated point, as `stridelab sim` runs it: the kernel's parameters (one point, never a
//! grid), the access bound checked before anything is allocated, the cache levels (one
//! [`ChosenGeometry`], its warnings carried per level into the [`SimReport`]), one run of the
//! kernel's address stream through the simulator (after an unrecorded warm-up run if asked),
//! and the analytic set/GCD model beside the counts. [`SimReport`] is the result; its JSON
//! field names are a stable contract for scripts, its text form is in `cli::text::sim`.
//!
//! Also home of [`simulated_level`], the one mapping of a level's counts to the results schema
//! that both this command and the runner's simulated track use.

use std::sync::Arc;

use serde::Serialize;
use stridelab_copy::Planner;
use thiserror::Error;

use crate::cache::geometry::{CacheLevel, ChosenGeometry, GeometrySource};
use crate::cache::model::{LevelPrediction, predict};
use crate::cache::prefetch::{PrefetchConfig, PrefetchError, PrefetchModel, PrefetchReport};
use crate::cache::sim::{Engine, Hierarchy, LevelStats, Policy, SimError, Simulator};
use crate::cache::tlb::{TlbChoice, TlbSim};
use crate::harness::sim::beside::feed_beside;
use crate::harness::sim::tlb::{TlbReport, tlb_report};
use crate::kernels::access::sim_address;
use crate::kernels::args::{KernelWordError, parse_kernel_words};
use crate::kernels::spec::{KernelError, KernelSpec, Params, PrepareOptions};
use crate::kernels::{
    StridePattern, estimate_accesses, find, resolve_params, simulation_note, stride_pattern,
};
use crate::results::SimulatedLevel;

use super::prefetch::prefetch_model;

/// Accesses a simulation may make by default: 2^28, tens of seconds at most with the 3C
/// split on a trace of distinct lines.
pub const DEFAULT_MAX_ACCESSES: u64 = 1 << 28;

/// Why a point cannot be simulated.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum SimRunError {
    #[error(transparent)]
    Kernel(#[from] KernelError),
    #[error(transparent)]
    Words(#[from] KernelWordError),
    #[error(
        "`{key}={values}` lists {count} values, but sim simulates one point; give one value (a grid \
         of points is `stridelab run --kernel {kernel} ...`)"
    )]
    Grid {
        key: String,
        values: String,
        count: usize,
        kernel: &'static str,
    },
    #[error(
        "the simulation would make an estimated {total} accesses ({per_run} per run{}), \
         more than the limit of {limit}; `--max-accesses N` raises it",
        if *warm { ", twice with --warm" } else { "" }
    )]
    TooManyAccesses {
        total: u64,
        per_run: u64,
        warm: bool,
        limit: u64,
    },
    #[error(transparent)]
    Cache(#[from] SimError),
    #[error(transparent)]
    Prefetch(#[from] PrefetchError),
}

/// What to simulate and on which caches.
#[derive(Debug, Clone)]
pub struct SimRequest<'a> {
    /// The kernel's catalogue name.
    pub kernel: &'a str,
    /// Its parameters: `key=value`, or plain values in the kernel's parameter order.
    pub words: &'a [String],
    /// The levels to simulate (a level with warnings is simulated as given).
    pub geometry: &'a ChosenGeometry,
    pub policy: Policy,
    /// Run the kernel once, unrecorded, before counting.
    pub warm: bool,
    /// Most accesses the simulation may make (estimated, doubled by `warm`).
    pub max_accesses: u64,
    /// Most memory the caches' up-front state may take.
    pub max_sim_memory: u64,
    /// The copy engine's planner a copying kernel's order is replayed with (its wisdom's
    /// schedule for a copy it knows, else the analytic one for this machine's caches).
    pub copies: Arc<Planner>,
    /// The data TLB to simulate beside the caches (`--tlb`), if any.
    pub tlb: Option<&'a TlbChoice>,
    /// The hardware-prefetch model to feed the same stream (`--prefetch on`), if any.
    pub prefetch: Option<&'a PrefetchConfig>,
}

/// One level of the result: the schema's counts plus evictions and the model's prediction.
#[derive(Debug, Serialize)]
pub struct LevelOutput {
    #[serde(flatten)]
    pub counts: SimulatedLevel,
    pub evictions: u64,
    /// The analytic model for the kernel's strided pattern, when it has one.
    pub model: Option<LevelPrediction>,
    /// Where the level's geometry came from (sysfs, cpuid, preset, override).
    pub source: GeometrySource,
    /// Why the level's geometry is doubtful (e.g. implausible for a real part); its counts
    /// are simulated as given all the same.
    pub warnings: Vec<String>,
}

/// A simulated point; serialises to the `stridelab sim --json` object.
#[derive(Debug, Serialize)]
pub struct SimReport {
    pub kernel: &'static str,
    pub params: Params,
    /// Every number below is simulated.
    pub source: &'static str,
    /// Where each simulated level came from: this machine (sysfs or CPUID), a preset, or
    /// `--cache`, in words.
    pub geometry_source: String,
    /// Every level's warnings, each naming its level (`L3 300 MiB 20-way (sysfs): …`).
    pub warnings: Vec<String>,
    pub policy: Policy,
    pub warm: bool,
    pub accesses: u64,
    /// Where the simulated stream is not the timed kernel's (see `kernels::simulation_note`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub simulation_note: Option<&'static str>,
    pub pattern: Option<StridePattern>,
    pub levels: Vec<LevelOutput>,
    /// The data TLB beside the caches (`--tlb`), when asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tlb: Option<TlbReport>,
    /// The hardware-prefetch model beside the simulator (`--prefetch on` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prefetch: Option<PrefetchReport>,
    /// The simulated levels' geometry, in the order of `levels`.
    #[serde(skip)]
    pub geometry: Vec<CacheLevel>,
}

impl SimReport {
    /// The one-line JSON object.
    pub fn to_json(&self) -> Result<String, serde_json::Error> {
        serde_json::to_string(self)
    }
}

/// Every level's counts of `hierarchy`, in the results schema's form.
pub fn simulated_levels(hierarchy: &mut Hierarchy) -> Vec<SimulatedLevel> {
    let stats = hierarchy.stats();
    hierarchy
        .levels()
        .into_iter()
        .zip(stats)
        .map(|(geometry, stats)| simulated_level(geometry, &stats))
        .collect()
}

/// One level's counts in the results schema's form.
pub fn simulated_level(geometry: &CacheLevel, stats: &LevelStats) -> SimulatedLevel {
    SimulatedLevel {
        name: geometry.name.clone(),
        size: geometry.size,
        ways: u64::from(geometry.ways),
        line: u64::from(geometry.line),
        sets: u64::from(geometry.sets),
        loads: stats.loads,
        stores: stats.stores,
        load_misses: stats.load_misses,
        store_misses: stats.store_misses,
        misses: stats.misses(),
        miss_rate: stats.miss_ratio(),
        compulsory: stats.compulsory,
        capacity: stats.capacity,
        conflict: stats.conflict,
    }
}

/// Simulates the point `request` names; every bound is checked before anything is allocated.
#[cfg(any(test, feature = "test-support"))]
pub fn simulate_point(request: &SimRequest<'_>) -> Result<SimReport, SimRunError> {
    simulate_point_on(Engine::Fast, request)
}

/// [`simulate_point`] by `engine`: the same report from either, under the same bounds; the
/// request's TLB and prefetch model, if any, fed the same stream (the prefetch model's state
/// bounded by the same memory limit).
pub fn simulate_point_on(
    engine: Engine,
    request: &SimRequest<'_>,
) -> Result<SimReport, SimRunError> {
    let spec = find(request.kernel)?;
    let params = point_params(spec, request.words)?;
    check_accesses(spec, &params, request.warm, request.max_accesses)?;
    let levels = request.geometry.levels.clone();
    let mut simulator = Simulator::new(
        engine,
        &levels,
        request.policy,
        true,
        request.max_sim_memory,
    )?;
    // Never run, only simulated: kernels whose addresses do not depend on their data allocate
    // no buffers and feed addresses only. The others read their real buffers while they feed
    // the simulator, on huge pages where the host grants them (a column walk otherwise misses
    // the host's TLB on every access).
    let options = PrepareOptions {
        huge_pages: true,
        simulate_only: true,
        copies: Arc::clone(&request.copies),
        shift: Default::default(),
    };
    let mut model = prefetch_model(&levels, request.prefetch, request.max_sim_memory, engine)?;
    let mut instance = (spec.prepare)(&params, &options)?;
    let mut tlb = request.tlb.map(|choice| TlbSim::new(&choice.levels));
    if request.warm {
        feed_beside(simulator.sink(), tlb.as_mut(), model.as_mut(), |s| {
            instance.simulate(s)
        });
        simulator.reset_stats();
        tlb.iter_mut().for_each(TlbSim::reset_stats);
        model.as_mut().map(PrefetchModel::reset_counts);
    }
    feed_beside(simulator.sink(), tlb.as_mut(), model.as_mut(), |s| {
        instance.simulate(s)
    });

    let pattern = stride_pattern(spec, &params)?;
    let predictions = match &pattern {
        Some(p) => predict(&levels, sim_address(p.buffer, 0), p.stride_bytes, p.count)
            .into_iter()
            .map(Some)
            .collect(),
        None => vec![None; levels.len()],
    };
    let stats = simulator.stats();
    Ok(SimReport {
        kernel: spec.name,
        simulation_note: simulation_note(spec, &params),
        params,
        source: "simulated",
        geometry_source: request.geometry.describe(),
        warnings: request.geometry.warnings(),
        policy: request.policy,
        warm: request.warm,
        accesses: stats.first().map_or(0, LevelStats::accesses),
        pattern,
        levels: levels
            .iter()
            .zip(&stats)
            .zip(predictions)
            .map(|((level, stats), model)| LevelOutput {
                counts: simulated_level(level, stats),
                evictions: stats.evictions,
                model,
                source: level.source,
                warnings: level.warnings.clone(),
            })
            .collect(),
        tlb: request
            .tlb
            .zip(tlb.as_ref())
            .map(|(choice, sim)| tlb_report(choice, sim.stats())),
        prefetch: model.map(|model| model.report()),
        geometry: levels,
    })
}

/// The one point the words name (read like `run --kernel`'s words); a grid is refused.
fn point_params(spec: &'static KernelSpec, words: &[String]) -> Result<Params, SimRunError> {
    let mut kernel_args = Vec::new();
    for word in parse_kernel_words(words)? {
        if word.is_grid() {
            return Err(SimRunError::Grid {
                values: word.values.join(","),
                count: word.values.len(),
                key: word.key,
                kernel: spec.name,
            });
        }
        kernel_args.extend(word.values.into_iter().map(|v| (word.key.clone(), v)));
    }
    Ok(resolve_params(spec, &kernel_args)?)
}

/// Refuses a simulation whose estimated accesses exceed `limit`, before allocating anything.
fn check_accesses(
    spec: &KernelSpec,
    params: &Params,
    warm: bool,
    limit: u64,
) -> Result<(), SimRunError> {
    let per_run = estimate_accesses(spec, params)?;
    let total = per_run.saturating_mul(if warm { 2 } else { 1 });
    if total > limit {
        return Err(SimRunError::TooManyAccesses {
            total,
            per_run,
            warm,
            limit,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::explain::walks::simulate_passes;

    fn request<'a>(
        kernel: &'a str,
        words: &'a [String],
        geometry: &'a ChosenGeometry,
    ) -> SimRequest<'a> {
        SimRequest {
            kernel,
            words,
            geometry,
            policy: Policy::LRU,
            warm: false,
            max_accesses: DEFAULT_MAX_ACCESSES,
            max_sim_memory: 1 << 30,
            copies: crate::kernels::copy_planner::planner_for_tests(),
            tlb: None,
            prefetch: None,
        }
    }

    #[test]
    fn a_grid_is_refused_naming_the_run_command() {
        let words = vec!["rows=1,2".to_string(), "cols=8".to_string()];
        let levels = ChosenGeometry::preset("design-vm").unwrap();
        let err = simulate_point(&request("col-sum", &words, &levels)).unwrap_err();
        let text = err.to_string();
        assert!(text.contains("lists 2 values"), "{text}");
        assert!(text.contains("stridelab run --kernel col-sum"), "{text}");
    }

    #[test]
    fn a_parameter_given_twice_is_refused_naming_both_values() {
        let words = vec!["rows=8".to_string(), "cols=8".into(), "rows=16".into()];
        let levels = ChosenGeometry::preset("design-vm").unwrap();
        let err = simulate_point(&request("col-sum", &words, &levels)).unwrap_err();
        assert!(matches!(err, SimRunError::Words(_)), "{err}");
        assert!(
            err.to_string().contains("`rows=8`, then `rows=16`"),
            "{err}"
        );
    }

    #[test]
    fn the_access_bound_is_checked_before_simulating() {
        let words = vec!["rows=64".to_string(), "cols=64".to_string()];
        let levels = ChosenGeometry::preset("design-vm").unwrap();
        let mut req = request("row-sum", &words, &levels);
        req.max_accesses = 10;
        req.warm = true;
        let err = simulate_point(&req).unwrap_err();
        assert!(matches!(
            err,
            SimRunError::TooManyAccesses {
                warm: true,
                limit: 10,
                ..
            }
        ));
        assert!(err.to_string().contains("twice with --warm"));
    }

    #[test]
    fn a_row_sum_loads_every_element_once_and_misses_once_per_line() {
        let words = vec!["rows=64".to_string(), "cols=64".to_string()];
        let levels = ChosenGeometry::preset("design-vm").unwrap();
        let report = simulate_point(&request("row-sum", &words, &levels)).unwrap();
        let l1 = &report.levels[0].counts;
        assert_eq!(report.accesses, l1.loads + l1.stores);
        assert_eq!(l1.loads, 64 * 64);
        // 8-byte elements, 64-byte lines, a cold cache: one compulsory miss per line.
        assert_eq!(l1.misses, 64 * 64 / 8);
        assert_eq!(l1.compulsory, l1.misses);
        assert_eq!(report.geometry.len(), report.levels.len());
        let json = report.to_json().unwrap();
        assert!(json.starts_with("{\"kernel\":\"row-sum\""), "{json}");
        assert!(json.contains("\"conflict\":0,\"evictions\":"), "{json}");
    }

    #[test]
    fn an_f64_layout_walk_misses_like_sim_view_sum() {
        let expr = "arange(4096).view(64,64).T[:, ::3]";
        let words = vec![format!("expr={expr}")];
        let levels = ChosenGeometry::preset("design-vm").unwrap();
        let report = simulate_point(&request("view-sum", &words, &levels)).unwrap();
        let l1 = &report.levels[0].counts;
        let (layout, _) = crate::layout::expr::evaluate_layout(expr).unwrap();
        let passes = simulate_passes(&layout, 8, &report.geometry[0], 1, 1 << 20).unwrap();
        let walk = passes[0];
        assert_eq!(walk.accesses, l1.loads);
        assert_eq!(
            (walk.misses, walk.compulsory, walk.capacity, walk.conflict),
            (l1.misses, l1.compulsory, l1.capacity, l1.conflict)
        );
        let capped = simulate_passes(&layout, 8, &report.geometry[0], 1, 100).unwrap();
        assert_eq!(capped[0].accesses, 100);
    }
}
