//! The orchestration of `stridelab infer`: the probes in order — working-set capacity, line
//! pairs, L1 conflict strides with their controls, the data-TLB pages with their packed control
//! — each within its share of one wall-clock budget, then the analysis, and the document.

use std::time::{Duration, Instant};

use thiserror::Error;

use crate::cache::geometry::Geometry;
use crate::results::infer_doc::{
    ConflictCurves, INFER_SCHEMA, InferCurves, InferReport, StrideObservation,
};
use crate::units::format_bytes as human_bytes;

use super::analysis::{self, CapacitySettings, LevelEdges, WaysSetsFit};
use super::parameters;
use super::probe::{
    self, CapacityProbe, ConflictProbe, LINE_PAIR_BLOCK, LinePairProbe, ProbeBudget, ProbeError,
    SMALL_PAGE_BYTES, TlbProbe,
};
use super::stages::{
    CapacityStage, ConflictStage, LineStage, Reported, TlbStage, reported_l1_dtlb, reported_levels,
};
use crate::harness::machine::dtlb_levels;

/// The budget below which the probes cannot each get one round.
pub const MIN_BUDGET_S: f64 = 10.0;
/// The budget above which a run is no steadier, only longer.
pub const MAX_BUDGET_S: f64 = 600.0;

/// How the wall-clock budget is split, as fractions of it. The probes run in this order and
/// each stops starting rounds at the sum of its share and the shares before it (the line-pair
/// probe's share is counted from when it starts); the rest (21 %) is left for building the
/// chases and interpreting, which are not timed rounds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BudgetShares {
    /// The working-set sweep: the most points and the slowest (largest) chases.
    pub capacity: f64,
    /// The line-pair probe inside the L2 plateau.
    pub line_pairs: f64,
    /// All conflict strides with their controls, split evenly between the strides.
    pub conflict: f64,
    /// The page-spread chase and its packed control.
    pub tlb: f64,
}

/// The split every run uses.
pub const BUDGET_SHARES: BudgetShares = BudgetShares {
    capacity: 0.55,
    line_pairs: 0.06,
    conflict: 0.12,
    tlb: 0.06,
};

/// Conflict-probe strides, in lines: powers of two and odd multiples (3·2ⁿ, 5·2ⁿ), so a set
/// count that is not a power of two is told apart from a power of two; the short strides (4, 8
/// lines) rule out models with too few sets.
pub const CONFLICT_STRIDE_LINES: [usize; 13] =
    [4, 8, 16, 32, 48, 64, 80, 96, 128, 192, 256, 512, 1024];
const CONFLICT_MAX_SLOTS: usize = 48;
/// Working-set sweep: 8 points per octave up to `DENSE_UP_TO`, then 4 per octave.
const SWEEP_FROM: usize = 4 << 10;
const DENSE_UP_TO: usize = 8 << 20;
const SWEEP_TO: usize = 64 << 20;
/// Chunk of the capacity chase: 16 small pages, well inside any L1 data TLB.
const CAPACITY_CHUNK: usize = 64 << 10;

/// Why the inference could not run.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum InferError {
    #[error("the budget must be between {MIN_BUDGET_S} and {MAX_BUDGET_S} seconds (got {0})")]
    Budget(f64),
    /// A probe could not be built (`what` names it; the source says why).
    #[error("{what}")]
    Probe {
        what: &'static str,
        #[source]
        source: ProbeError,
    },
}

fn probe_error(what: &'static str) -> impl FnOnce(ProbeError) -> InferError {
    move |source| InferError::Probe { what, source }
}

/// Whether `budget_s` is a budget [`infer_geometry`] accepts.
pub fn budget_in_range(budget_s: f64) -> bool {
    budget_s.is_finite() && (MIN_BUDGET_S..=MAX_BUDGET_S).contains(&budget_s)
}

/// The clock of one run: its start, its budget, and progress lines on stderr (or nothing).
struct Clock {
    started: Instant,
    budget_s: f64,
    show_progress: bool,
}

impl Clock {
    /// `fraction` of the budget as a duration.
    fn share(&self, fraction: f64) -> Duration {
        Duration::from_secs_f64(self.budget_s * fraction)
    }

    fn say(&self, what: &str) {
        if self.show_progress {
            eprintln!("[{:5.1}s] {what}", self.started.elapsed().as_secs_f64());
        }
    }
}

/// Runs every probe within `budget_s` seconds and assembles the document, holding it against
/// `system` (the process's one detection of this machine); `show_progress` prints one line per
/// stage on stderr.
pub fn infer_geometry(
    budget_s: f64,
    show_progress: bool,
    system: &Geometry,
) -> Result<InferReport, InferError> {
    if !budget_in_range(budget_s) {
        return Err(InferError::Budget(budget_s));
    }
    let clock = Clock {
        started: Instant::now(),
        budget_s,
        show_progress,
    };
    let (sysfs, mut conditions) = starting_conditions(system);
    let capacity = capacity_stage(&clock, &mut conditions)?;
    let lines = line_stage(&clock, &capacity.levels)?;
    let line_bytes = lines.line.map_or(64, |l| l.value as usize);
    let conflict = conflict_stage(&clock, line_bytes)?;
    let tlb = tlb_stage(&clock, conflict.fit.as_ref(), line_bytes)?;

    clock.say("interpreting");
    let parameters = parameters::all(&capacity, &lines, &conflict, &tlb, &sysfs);
    closing_conditions(&capacity, &sysfs, &mut conditions);
    let elapsed_s = clock.started.elapsed().as_secs_f64();
    clock.say("done");
    Ok(InferReport {
        schema: INFER_SCHEMA,
        parameters,
        curves: InferCurves {
            capacity: capacity.curve,
            line_pairs: lines.curve,
            conflict: conflict.curves,
            tlb_spread: tlb.spread,
            tlb_packed: tlb.packed,
        },
        capacity: Some(capacity.analysis),
        elapsed_s,
        budget_s,
        conditions,
    })
}

/// Pins the thread, and notes what colours the numbers before any probe runs: the pinning,
/// the load, and what the system's geometry detection noted; returns the reported levels too
/// (caches from the geometry detection, the L1 DTLB from CPUID as `info` reads it).
fn starting_conditions(geometry: &Geometry) -> (Reported, Vec<String>) {
    let mut conditions = Vec::new();
    let pinned = probe::pin_current_thread();
    conditions.push(if pinned {
        "thread pinned to one CPU".to_string()
    } else {
        "thread NOT pinned (pinning failed)".to_string()
    });
    if let Ok(load) = std::fs::read_to_string("/proc/loadavg") {
        conditions.push(format!(
            "load average at start: {}",
            load.split_whitespace()
                .take(3)
                .collect::<Vec<_>>()
                .join(" ")
        ));
    }
    conditions.extend(
        geometry
            .notes
            .iter()
            .map(|n| format!("system geometry: {n}")),
    );
    for level in &geometry.levels {
        conditions.extend(
            level
                .warnings
                .iter()
                .map(|w| format!("system geometry, {}: {w}", level.name)),
        );
    }
    let reported = Reported {
        l1_dtlb: reported_l1_dtlb(&dtlb_levels(), SMALL_PAGE_BYTES as u64),
        ..reported_levels(geometry)
    };
    (reported, conditions)
}

/// Stage 1, working-set capacity: one random-cycle chase per size, timed in interleaved rounds.
fn capacity_stage(
    clock: &Clock,
    conditions: &mut Vec<String>,
) -> Result<CapacityStage, InferError> {
    let sizes = sweep_sizes(if clock.budget_s < 20.0 {
        SWEEP_TO / 2
    } else {
        SWEEP_TO
    });
    clock.say(&format!(
        "capacity: building {} random-cycle chases, {} to {} (huge pages requested)",
        sizes.len(),
        human_bytes(SWEEP_FROM as f64),
        human_bytes(*sizes.last().unwrap_or(&0) as f64)
    ));
    let capacity_probe = CapacityProbe::new(&sizes, CAPACITY_CHUNK, 0x5EED_0001)
        .map_err(probe_error("capacity probe"))?;
    let ranges: Vec<(usize, usize)> = capacity_probe
        .chases()
        .iter()
        .map(|c| (c.address(), c.bytes()))
        .collect();
    let total: usize = ranges.iter().map(|r| r.1).sum();
    conditions.push(match probe::huge_page_bytes(&ranges) {
        Some(huge) => format!(
            "capacity chases: {} of {} on transparent huge pages (counted over their whole mappings)",
            human_bytes(huge.min(total) as f64),
            human_bytes(total as f64)
        ),
        None => "huge pages: /proc/self/smaps unreadable, unknown".to_string(),
    });
    clock.say("capacity: timing (interleaved rounds)");
    let curve = capacity_probe.run(
        ProbeBudget {
            repeats: 7,
            deadline: clock.started + clock.share(BUDGET_SHARES.capacity),
        },
        100_000,
    );
    drop(capacity_probe);
    let analysis = analysis::capacity_edges(&curve, CapacitySettings::default());
    let levels = analysis::label_levels(&analysis.edges);
    let rounds = curve.first().map_or(0, |p| p.samples.len());
    conditions.push(format!("capacity sweep: {rounds} rounds"));
    Ok(CapacityStage {
        curve,
        analysis,
        levels,
    })
}

/// Stage 2, line size: pairs `A → A+s` inside the L2 plateau.
fn line_stage(clock: &Clock, levels: &LevelEdges) -> Result<LineStage, InferError> {
    let region = line_pair_region(levels);
    clock.say(&format!(
        "line size: pairs A→A+s over {}",
        human_bytes(region as f64)
    ));
    let pair_strides: Vec<usize> = (3..=10).map(|p| 1usize << p).collect();
    let pairs_probe = LinePairProbe::new(&pair_strides, region, 0x5EED_0002)
        .map_err(probe_error("line-pair probe"))?;
    let curve = pairs_probe.run(
        ProbeBudget::new(9, clock.share(BUDGET_SHARES.line_pairs)),
        200_000,
    );
    let line = analysis::line_size(&curve);
    Ok(LineStage {
        curve,
        line,
        region,
    })
}

/// Stage 3, l1 ways and sets: every conflict stride beside its `+line` control, each stride with an
/// equal slice of the conflict share.
fn conflict_stage(clock: &Clock, line_bytes: usize) -> Result<ConflictStage, InferError> {
    clock.say(&format!("L1 conflicts: {} strides × K = 1..={CONFLICT_MAX_SLOTS}, each with a +{line_bytes} B control", CONFLICT_STRIDE_LINES.len()));
    let conflict_budget = ProbeBudget::new(9, clock.share(BUDGET_SHARES.conflict));
    let mut curves = Vec::new();
    for (i, &lines) in CONFLICT_STRIDE_LINES.iter().enumerate() {
        let stride = lines * line_bytes;
        let control_stride = stride + line_bytes;
        let mut p = ConflictProbe::new(stride, CONFLICT_MAX_SLOTS, true, 0x5EED_1000 + i as u64)
            .map_err(probe_error("conflict probe"))?;
        let mut c = ConflictProbe::new(
            control_stride,
            CONFLICT_MAX_SLOTS,
            true,
            0x5EED_2000 + i as u64,
        )
        .map_err(probe_error("conflict control"))?;
        let per_stride = ProbeBudget {
            repeats: conflict_budget.repeats,
            deadline: clock.started
                + clock.share(BUDGET_SHARES.capacity + BUDGET_SHARES.line_pairs)
                + clock.share(
                    BUDGET_SHARES.conflict * (i + 1) as f64 / CONFLICT_STRIDE_LINES.len() as f64,
                ),
        };
        let (probe_curve, control_curve) =
            probe::run_conflict_pair(&mut p, &mut c, per_stride, 20_000);
        let observation = StrideObservation {
            stride_bytes: stride,
            probe: analysis::jump_capacity(&probe_curve),
            control: analysis::jump_capacity(&control_curve),
        };
        curves.push(ConflictCurves {
            stride_bytes: stride,
            control_stride_bytes: control_stride,
            probe: probe_curve,
            control: control_curve,
            observation,
        });
    }
    let observations: Vec<StrideObservation> = curves.iter().map(|c| c.observation).collect();
    let fit = analysis::fit_ways_sets(&observations, line_bytes);
    let round_fits = parameters::conflict_round_fits(&curves, line_bytes);
    Ok(ConflictStage {
        curves,
        fit,
        round_fits,
    })
}

/// Stage 4, L1 data TLB: one line in each of K pages vs the same lines packed into few pages.
fn tlb_stage(
    clock: &Clock,
    fit: Option<&WaysSetsFit>,
    line_bytes: usize,
) -> Result<TlbStage, InferError> {
    let span = fit.map_or(SMALL_PAGE_BYTES, |f| {
        (f.sets * f.line).min(SMALL_PAGE_BYTES)
    });
    let pages: Vec<usize> = (1..=64).map(|i| 4 * i).collect();
    clock.say("L1 DTLB: one line in each of K = 4..=256 small pages vs the same lines packed");
    let mut spread_probe =
        TlbProbe::new(&pages, line_bytes, span.max(line_bytes), false, 0x5EED_3000)
            .map_err(probe_error("TLB probe"))?;
    let mut packed_probe =
        TlbProbe::new(&pages, line_bytes, span.max(line_bytes), true, 0x5EED_3001)
            .map_err(probe_error("TLB control"))?;
    let s = BUDGET_SHARES;
    let (spread, packed) = probe::run_tlb_pair(
        &mut spread_probe,
        &mut packed_probe,
        ProbeBudget {
            repeats: 9,
            deadline: clock.started + clock.share(s.capacity + s.line_pairs + s.conflict + s.tlb),
        },
        20_000,
    );
    let tlb = analysis::tlb_reach(&spread, &packed, SMALL_PAGE_BYTES);
    Ok(TlbStage {
        spread,
        packed,
        tlb,
    })
}

/// Notes steps the levels do not name, and an LLC larger than the sweep could see.
fn closing_conditions(capacity: &CapacityStage, sysfs: &Reported, conditions: &mut Vec<String>) {
    let levels = &capacity.levels;
    let max_probed = capacity.curve.last().map_or(0.0, |p| p.x);
    if !levels.unlabelled.is_empty() {
        conditions.push(format!(
            "{} unlabelled step(s) between the L2 and the LLC: {}",
            levels.unlabelled.len(),
            levels
                .unlabelled
                .iter()
                .map(|e| human_bytes(e.capacity_bytes))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    if let Some(llc) = &sysfs.llc
        && llc.size as f64 > max_probed
    {
        conditions.push(format!(
            "sysfs reports an LLC of {}, larger than the largest working set probed ({})",
            human_bytes(llc.size as f64),
            human_bytes(max_probed)
        ));
    }
}

/// Working-set sizes: 8 per octave from `SWEEP_FROM` to `DENSE_UP_TO`, then 4 per octave to
/// `to` (multiples of the chase node size).
fn sweep_sizes(to: usize) -> Vec<usize> {
    let mut sizes = Vec::new();
    let mut octave = SWEEP_FROM;
    while octave < to {
        let per_octave = if octave < DENSE_UP_TO { 8 } else { 4 };
        for i in 0..per_octave {
            let size = octave + octave * i / per_octave;
            sizes.push(size - size % probe::NODE_BYTES);
        }
        octave *= 2;
    }
    sizes.push(to);
    sizes
}

/// The pair-probe region: four times the L1 edge, but at most half the L2 edge (inside the L2
/// plateau); 128 KiB when the curve gave no edges.
fn line_pair_region(levels: &LevelEdges) -> usize {
    let region = match (&levels.l1, &levels.l2) {
        (Some(l1), Some(l2)) => (4.0 * l1.capacity_bytes).min(l2.capacity_bytes / 2.0),
        (Some(l1), None) => 4.0 * l1.capacity_bytes,
        _ => (128 << 10) as f64,
    } as usize;
    (region / LINE_PAIR_BLOCK).max(16) * LINE_PAIR_BLOCK
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sweep_is_increasing_and_denser_below_8_mib() {
        let sizes = sweep_sizes(64 << 20);
        assert!(sizes.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(sizes.first(), Some(&(4 << 10)));
        assert_eq!(sizes.last(), Some(&(64 << 20)));
        assert!(sizes.contains(&(32 << 10)) && sizes.contains(&(1 << 20)));
    }

    #[test]
    fn budget_shares_leave_room_and_out_of_range_budgets_are_refused() {
        let s = BUDGET_SHARES;
        let timed = s.capacity + s.line_pairs + s.conflict + s.tlb;
        assert!(timed < 1.0, "the probes leave time to build and interpret");
        assert!(!budget_in_range(f64::NAN) && !budget_in_range(1e300));
        assert!(budget_in_range(MIN_BUDGET_S) && budget_in_range(MAX_BUDGET_S));
        assert!(matches!(
            infer_geometry(MIN_BUDGET_S / 2.0, false, &Geometry::default()),
            Err(InferError::Budget(_))
        ));
    }
}
