//! `stridelab infer [--json] [--budget SECONDS]`: the cache geometry from timing alone.
//!
//! Runs the probes of [`crate::harness::probe`] in order — working-set capacity, line pairs,
//! L1 conflict strides with their controls, the data-TLB pages with their packed control —
//! interprets them with [`crate::cache::infer`], and prints each parameter beside what sysfs
//! reports, with a verdict, a confidence and the points behind it. Every number is *timed*.

use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

use crate::cache::geometry::{CacheKind, CacheLevel, Geometry};
use crate::cache::infer::{
    self, CapacitySettings, ConflictCurves, INFER_SCHEMA, InferCurves, InferReport, Jump,
    Parameter, Point, StrideObservation, StrideVerdict, Verdict, WaysSetsFit,
};
use crate::harness::probe::{
    self, CapacityProbe, ConflictProbe, LINE_PAIR_BLOCK, LinePairProbe, ProbeBudget,
    SMALL_PAGE_BYTES, TlbProbe,
};
// Sizes in the text read like the rest of the lab's (`32 KiB`, `1.5 MiB`).
use crate::units::format_bytes as human_bytes;

#[derive(Debug, clap::Args)]
pub struct InferArgs {
    /// Print one JSON object (the InferReport) instead of the table; no progress on stderr.
    #[arg(long)]
    pub json: bool,
    /// Wall-clock budget in seconds for the whole inference (10..=600).
    #[arg(long, default_value_t = 60.0)]
    pub budget: f64,
}

/// The budget below which the probes cannot each get one round.
const MIN_BUDGET_S: f64 = 10.0;
const MAX_BUDGET_S: f64 = 600.0;
/// Relative tolerance for capacities read off a latency curve (the L2 target is ±25 %).
const CAPACITY_TOLERANCE: f64 = 0.25;
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

pub fn run(args: InferArgs) -> anyhow::Result<ExitCode> {
    if !args.budget.is_finite() || !(MIN_BUDGET_S..=MAX_BUDGET_S).contains(&args.budget) {
        bail!(
            "--budget must be between {MIN_BUDGET_S} and {MAX_BUDGET_S} seconds (got {})",
            args.budget
        );
    }
    let report = infer_geometry(args.budget, !args.json)?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", render_text(&report));
    }
    Ok(ExitCode::SUCCESS)
}

/// Progress lines on stderr (or nothing).
struct Progress {
    started: Instant,
    enabled: bool,
}

impl Progress {
    fn say(&self, what: &str) {
        if self.enabled {
            eprintln!("[{:5.1}s] {what}", self.started.elapsed().as_secs_f64());
        }
    }
}

/// Runs every probe within `budget_s` seconds and assembles the report.
pub fn infer_geometry(budget_s: f64, show_progress: bool) -> anyhow::Result<InferReport> {
    let started = Instant::now();
    let progress = Progress {
        started,
        enabled: show_progress,
    };
    let share = |fraction: f64| Duration::from_secs_f64(budget_s * fraction);
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
    let geometry = Geometry::detect();
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
    let sysfs = reported_levels(&geometry);

    // 1. Working-set capacity.
    let sizes = sweep_sizes(if budget_s < 20.0 {
        SWEEP_TO / 2
    } else {
        SWEEP_TO
    });
    progress.say(&format!(
        "capacity: building {} random-cycle chases, {} to {} (huge pages requested)",
        sizes.len(),
        human_bytes(SWEEP_FROM as f64),
        human_bytes(*sizes.last().unwrap_or(&0) as f64)
    ));
    let capacity_probe =
        CapacityProbe::new(&sizes, CAPACITY_CHUNK, 0x5EED_0001).context("capacity probe")?;
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
    progress.say("capacity: timing (interleaved rounds)");
    let capacity_deadline = started + share(0.55);
    let capacity = capacity_probe.run(
        ProbeBudget {
            repeats: 7,
            deadline: capacity_deadline,
        },
        100_000,
    );
    drop(capacity_probe);
    let analysis = infer::capacity_edges(&capacity, CapacitySettings::default());
    let levels = infer::label_levels(&analysis.edges);
    let rounds = capacity.first().map_or(0, |p| p.samples.len());
    conditions.push(format!("capacity sweep: {rounds} rounds"));

    // 2. Line size: pairs inside the L2 plateau.
    let region = line_pair_region(&levels);
    progress.say(&format!(
        "line size: pairs A→A+s over {}",
        human_bytes(region as f64)
    ));
    let pair_strides: Vec<usize> = (3..=10).map(|p| 1usize << p).collect();
    let pairs_probe =
        LinePairProbe::new(&pair_strides, region, 0x5EED_0002).context("line-pair probe")?;
    let line_pairs = pairs_probe.run(ProbeBudget::new(9, share(0.06)), 200_000);
    let line = infer::line_size(&line_pairs);

    // 3. L1 ways and sets.
    let line_bytes = line.map_or(64, |l| l.value as usize);
    progress.say(&format!("L1 conflicts: {} strides × K = 1..={CONFLICT_MAX_SLOTS}, each with a +{line_bytes} B control", CONFLICT_STRIDE_LINES.len()));
    let conflict_budget = ProbeBudget::new(9, share(0.12));
    let mut conflict = Vec::new();
    for (i, &lines) in CONFLICT_STRIDE_LINES.iter().enumerate() {
        let stride = lines * line_bytes;
        let control_stride = stride + line_bytes;
        let mut p = ConflictProbe::new(stride, CONFLICT_MAX_SLOTS, true, 0x5EED_1000 + i as u64)
            .context("conflict probe")?;
        let mut c = ConflictProbe::new(
            control_stride,
            CONFLICT_MAX_SLOTS,
            true,
            0x5EED_2000 + i as u64,
        )
        .context("conflict control")?;
        let per_stride = ProbeBudget {
            repeats: conflict_budget.repeats,
            deadline: started
                + share(0.55 + 0.06)
                + share(0.12 * (i + 1) as f64 / CONFLICT_STRIDE_LINES.len() as f64),
        };
        let (probe_curve, control_curve) =
            probe::run_conflict_pair(&mut p, &mut c, per_stride, 20_000);
        let observation = StrideObservation {
            stride_bytes: stride,
            probe: infer::jump_capacity(&probe_curve),
            control: infer::jump_capacity(&control_curve),
        };
        conflict.push(ConflictCurves {
            stride_bytes: stride,
            control_stride_bytes: control_stride,
            probe: probe_curve,
            control: control_curve,
            observation,
        });
    }
    let observations: Vec<StrideObservation> = conflict.iter().map(|c| c.observation).collect();
    let fit = infer::fit_ways_sets(&observations, line_bytes);
    let fit_rounds = conflict_round_fits(&conflict, line_bytes);

    // 4. L1 data TLB.
    let span = fit.as_ref().map_or(SMALL_PAGE_BYTES, |f| {
        (f.sets * f.line).min(SMALL_PAGE_BYTES)
    });
    let pages: Vec<usize> = (1..=64).map(|i| 4 * i).collect();
    progress.say("L1 DTLB: one line in each of K = 4..=256 small pages vs the same lines packed");
    let mut spread_probe =
        TlbProbe::new(&pages, line_bytes, span.max(line_bytes), false, 0x5EED_3000)
            .context("TLB probe")?;
    let mut packed_probe =
        TlbProbe::new(&pages, line_bytes, span.max(line_bytes), true, 0x5EED_3001)
            .context("TLB control")?;
    let (tlb_spread, tlb_packed) = probe::run_tlb_pair(
        &mut spread_probe,
        &mut packed_probe,
        ProbeBudget {
            repeats: 9,
            deadline: started + share(0.55 + 0.06 + 0.12 + 0.06),
        },
        20_000,
    );
    let tlb = infer::tlb_reach(&tlb_spread, &tlb_packed, SMALL_PAGE_BYTES);

    progress.say("interpreting");
    let mut parameters = Vec::new();
    parameters.push(line_parameter(
        &line_pairs,
        line,
        region,
        sysfs.l1d.as_ref().map(|c| c.line as f64),
    ));
    parameters.extend(l1_parameters(
        &conflict,
        fit.as_ref(),
        &fit_rounds,
        &levels,
        sysfs.l1d.as_ref(),
    ));
    parameters.push(capacity_parameter(
        "l2_size",
        "L2 size",
        &levels,
        &capacity,
        2,
        sysfs.l2.as_ref().map(|c| c.size as f64),
    ));
    parameters.push(capacity_parameter(
        "llc_size",
        "LLC size",
        &levels,
        &capacity,
        3,
        sysfs.llc.as_ref().map(|c| c.size as f64),
    ));
    let max_probed = capacity.last().map_or(0.0, |p| p.x);
    parameters.push(tlb_parameter(&tlb_spread, &tlb_packed, tlb));
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
    let elapsed_s = started.elapsed().as_secs_f64();
    progress.say("done");
    Ok(InferReport {
        schema: INFER_SCHEMA,
        parameters,
        curves: InferCurves {
            capacity,
            line_pairs,
            conflict,
            tlb_spread,
            tlb_packed,
        },
        capacity: Some(analysis),
        elapsed_s,
        budget_s,
        conditions,
    })
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
fn line_pair_region(levels: &infer::LevelEdges) -> usize {
    let region = match (&levels.l1, &levels.l2) {
        (Some(l1), Some(l2)) => (4.0 * l1.capacity_bytes).min(l2.capacity_bytes / 2.0),
        (Some(l1), None) => 4.0 * l1.capacity_bytes,
        _ => (128 << 10) as f64,
    } as usize;
    (region / LINE_PAIR_BLOCK).max(16) * LINE_PAIR_BLOCK
}

/// Fits (ways, sets) on each round of the conflict probe alone: the consistency behind the
/// confidence.
fn conflict_round_fits(conflict: &[ConflictCurves], line: usize) -> Vec<Option<(usize, usize)>> {
    let rounds = conflict
        .iter()
        .flat_map(|c| c.probe.iter().chain(&c.control))
        .map(|p| p.samples.len())
        .min()
        .unwrap_or(0);
    (0..rounds)
        .map(|r| {
            let obs: Vec<StrideObservation> = conflict
                .iter()
                .map(|c| StrideObservation {
                    stride_bytes: c.stride_bytes,
                    probe: infer::jump_capacity(&infer::round_curve(&c.probe, r)),
                    control: infer::jump_capacity(&infer::round_curve(&c.control, r)),
                })
                .collect();
            infer::fit_ways_sets(&obs, line).map(|f| (f.ways, f.sets))
        })
        .collect()
}

fn rounds_of(points: &[Point]) -> usize {
    points.iter().map(|p| p.samples.len()).min().unwrap_or(0)
}

fn line_parameter(
    points: &[Point],
    line: Option<infer::StepEstimate>,
    region: usize,
    reported: Option<f64>,
) -> Parameter {
    let per_round: Vec<f64> = (0..rounds_of(points))
        .filter_map(|r| infer::line_size(&infer::round_curve(points, r)).map(|l| l.value))
        .collect();
    let value = line.map(|l| l.value);
    let same = value.map_or(0, |v| per_round.iter().filter(|&&r| r == v).count());
    let mut evidence = vec![format!(
        "pairs A→A+s, A random 2 KiB blocks of a {} region: {}",
        human_bytes(region as f64),
        points
            .iter()
            .map(|p| format!("s={} B {:.2} ns", p.x, p.ns))
            .collect::<Vec<_>>()
            .join(", ")
    )];
    if let Some(v) = value {
        evidence.push(format!(
            "first distance on the high step: {v} B; the same in {same} of {} single rounds",
            per_round.len()
        ));
    }
    Parameter {
        key: "line_size".into(),
        name: "line size".into(),
        unit: "bytes".into(),
        value,
        is_upper_bound: false,
        source: "timed".into(),
        confidence: line.map_or(0.0, |l| l.confidence) * round_share(same, per_round.len()),
        reported,
        verdict: Verdict::exact(value, reported),
        is_tlb: false,
        evidence,
        note: None,
    }
}

fn round_share(same: usize, rounds: usize) -> f64 {
    if rounds == 0 {
        0.0
    } else {
        same as f64 / rounds as f64
    }
}

fn describe_jump(j: Jump) -> String {
    match j {
        Jump::At { fits, first_slow } => format!("{fits} fit, {first_slow} slow"),
        Jump::None { at_least } => format!("all {at_least} fit"),
    }
}

fn l1_parameters(
    conflict: &[ConflictCurves],
    fit: Option<&WaysSetsFit>,
    round_fits: &[Option<(usize, usize)>],
    levels: &infer::LevelEdges,
    reported: Option<&CacheLevel>,
) -> Vec<Parameter> {
    let mut evidence: Vec<String> = conflict
        .iter()
        .map(|c| {
            let level = |points: &[Point], k: usize| {
                points.get(k.saturating_sub(1)).map_or(f64::NAN, |p| p.ns)
            };
            let latency = match c.observation.probe {
                Jump::At { fits, first_slow } => {
                    format!(
                        " ({:.2} → {:.2} ns)",
                        level(&c.probe, fits),
                        level(&c.probe, first_slow)
                    )
                }
                Jump::None { .. } => String::new(),
            };
            let verdict = match c.observation.verdict() {
                StrideVerdict::SetConflict => "set conflict",
                StrideVerdict::NotSetConflict => "control jumps too: not an L1 set conflict",
                StrideVerdict::AllFit => "no conflict seen",
                StrideVerdict::Inconsistent => "control jumps, probe does not: ignored",
            };
            format!(
                "stride {} B: {}{latency}; control {} B: {} → {verdict}",
                c.stride_bytes,
                describe_jump(c.observation.probe),
                c.control_stride_bytes,
                describe_jump(c.observation.control)
            )
        })
        .collect();
    let same = fit.map_or(0, |f| {
        round_fits
            .iter()
            .filter(|r| **r == Some((f.ways, f.sets)))
            .count()
    });
    // The classic reading, as a cross-check of the model fit: the smallest stride at which the
    // fewest slots fit is sets × line, and that number of slots is the ways.
    let conflicts = || {
        conflict
            .iter()
            .filter(|c| c.observation.verdict() == StrideVerdict::SetConflict)
    };
    if let Some(fewest) = conflicts().filter_map(|c| c.observation.probe.fits()).min()
        && let Some(first) = conflicts().find(|c| c.observation.probe.fits() == Some(fewest))
    {
        evidence.push(format!(
            "smallest stride where the fewest slots ({fewest}) fit: {} B = sets × line",
            first.stride_bytes
        ));
    }
    if let Some(f) = fit {
        evidence.push(format!(
            "model ways·sets/gcd(stride/line, sets) explains {:.0} % of {} strides; the same (ways, sets) in {same} of {} single rounds{}",
            100.0 * f.confidence,
            f.strides_used,
            round_fits.len(),
            f.runner_up.map_or(String::new(), |(w, s, score)| format!("; runner-up {w} ways × {s} sets scores {score:.1}"))
        ));
    }
    let sets_evidence = vec![
        "the same conflict probe as the ways (strides listed there)".to_string(),
        evidence.last().cloned().unwrap_or_default(),
    ];
    let confidence = fit.map_or(0.0, |f| f.confidence * round_share(same, round_fits.len()));
    let ways = fit.map(|f| f.ways as f64);
    let sets = fit.map(|f| f.sets as f64);
    let size = fit.map(|f| (f.ways * f.sets * f.line) as f64);
    let mut size_evidence = vec![format!(
        "ways × sets × line = {}",
        size.map_or("?".into(), human_bytes)
    )];
    let mut size_confidence = confidence;
    if let Some(edge) = &levels.l1 {
        size_evidence.push(format!(
            "working-set curve: first step at {} (last fast point {}, first slow {}; {:.2} → {:.2} ns)",
            human_bytes(edge.capacity_bytes),
            human_bytes(edge.last_inside),
            human_bytes(edge.first_outside),
            edge.faster_ns,
            edge.slower_ns
        ));
        // Corroborated when the conflict-probe size lies inside the curve's first transition.
        if let Some(s) = size
            && !(edge.last_inside <= s * (1.0 + CAPACITY_TOLERANCE)
                && s <= edge.first_outside * (1.0 + CAPACITY_TOLERANCE))
        {
            size_evidence
                .push("the working-set step does not corroborate the conflict-probe size".into());
            size_confidence *= 0.5;
        }
    }
    let make = |key: &str,
                name: &str,
                unit: &str,
                value: Option<f64>,
                reported: Option<f64>,
                evidence: Vec<String>,
                confidence: f64| Parameter {
        key: key.into(),
        name: name.into(),
        unit: unit.into(),
        value,
        is_upper_bound: false,
        source: "timed".into(),
        confidence,
        reported,
        verdict: Verdict::exact(value, reported),
        is_tlb: false,
        evidence,
        note: None,
    };
    vec![
        make(
            "l1d_size",
            "L1d size",
            "bytes",
            size,
            reported.map(|c| c.size as f64),
            size_evidence,
            size_confidence,
        ),
        make(
            "l1d_ways",
            "L1d ways",
            "ways",
            ways,
            reported.map(|c| c.ways as f64),
            evidence.clone(),
            confidence,
        ),
        make(
            "l1d_sets",
            "L1d sets",
            "sets",
            sets,
            reported.map(|c| c.sets as f64),
            sets_evidence,
            confidence,
        ),
    ]
}

/// A capacity from the working-set curve; `level` picks the edge (2 = L2, 3 = LLC) in each
/// leave-one-round-out curve for the agreement part of the confidence.
fn capacity_parameter(
    key: &str,
    name: &str,
    levels: &infer::LevelEdges,
    curve: &[Point],
    level: usize,
    reported: Option<f64>,
) -> Parameter {
    let pick = |l: &infer::LevelEdges| {
        if level == 2 {
            l.l2.clone()
        } else {
            l.llc.clone()
        }
    };
    let edge = pick(levels);
    let upper_bound = if level == 3 {
        levels.llc_upper_bound()
    } else {
        None
    };
    let value = edge.as_ref().map(|e| e.capacity_bytes).or(upper_bound);
    let per_round: Vec<f64> = (0..rounds_of(curve))
        .filter_map(|r| {
            let a =
                infer::capacity_edges(&infer::leave_one_out(curve, r), CapacitySettings::default());
            let l = infer::label_levels(&a.edges);
            let value = pick(&l).map(|e| e.capacity_bytes);
            if level == 3 {
                value.or(l.llc_upper_bound())
            } else {
                value
            }
        })
        .collect();
    let same = value.map_or(0, |v| {
        per_round
            .iter()
            .filter(|&&r| (r - v).abs() <= 0.1 * v)
            .count()
    });
    let mut evidence = Vec::new();
    let window = |from: f64, to: f64| -> String {
        curve
            .iter()
            .filter(|p| p.x >= from / 1.3 && p.x <= to * 1.3)
            .map(|p| {
                format!(
                    "{} {:.1} ns (±{:.0} %)",
                    human_bytes(p.x),
                    p.ns,
                    50.0 * p.spread
                )
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut note = None;
    if let Some(e) = &edge {
        evidence.push(format!(
            "plateau {:.2} ns up to {}, next plateau {:.2} ns from {}; the transition's geometric centre is {}",
            e.faster_ns,
            human_bytes(e.last_inside),
            e.slower_ns,
            human_bytes(e.first_outside),
            human_bytes(e.capacity_bytes)
        ));
        evidence.push(format!(
            "points: {}",
            window(e.last_inside, e.first_outside)
        ));
    } else if let (Some(bound), Some(l2)) = (upper_bound, &levels.l2) {
        evidence.push(format!(
            "no separate plateau after the L2: latency went from {:.2} ns (L2) to {:.2} ns by {}",
            l2.faster_ns,
            l2.slower_ns,
            human_bytes(bound)
        ));
        evidence.push(format!("points: {}", window(l2.last_inside, bound)));
        note = Some(format!(
            "an upper bound, not a size: whatever serves this core beyond the L2 holds less than {}",
            human_bytes(bound)
        ));
    } else {
        evidence.push("no such step in the working-set curve".into());
    }
    evidence.push(format!(
        "the same within 10 % in {same} of {} leave-one-round-out curves",
        per_round.len()
    ));
    if level == 3 && note.is_none() {
        note = Some("the last cache step before the slowest plateau; an exclusive (victim) LLC shows as L2 + LLC".into());
    }
    let tolerance = if edge.is_some() {
        CAPACITY_TOLERANCE
    } else {
        0.0
    };
    Parameter {
        key: key.into(),
        name: name.into(),
        unit: "bytes".into(),
        value,
        is_upper_bound: edge.is_none() && upper_bound.is_some(),
        source: "timed".into(),
        confidence: edge
            .as_ref()
            .map_or(if upper_bound.is_some() { 0.5 } else { 0.0 }, |e| {
                e.confidence
            })
            * round_share(same, per_round.len()),
        reported,
        verdict: match (edge.is_some(), upper_bound, reported) {
            // An upper bound below the reported size disagrees; above it, it cannot tell.
            (false, Some(bound), Some(r)) => {
                if bound < r * (1.0 - CAPACITY_TOLERANCE) {
                    Verdict::Disagrees
                } else {
                    Verdict::Agrees
                }
            }
            _ => Verdict::within(value, reported, tolerance),
        },
        is_tlb: false,
        evidence,
        note,
    }
}

fn tlb_parameter(spread: &[Point], packed: &[Point], tlb: Option<infer::TlbEstimate>) -> Parameter {
    let near: Vec<String> = tlb
        .map(|t| {
            spread
                .iter()
                .zip(packed)
                .filter(|(p, _)| p.x as usize + 12 >= t.entries && p.x as usize <= t.first_slow + 8)
                .map(|(p, c)| format!("{} pages {:.2} ns (packed {:.2})", p.x, p.ns, c.ns))
                .collect()
        })
        .unwrap_or_default();
    let mut evidence = vec![format!(
        "one line per {} KiB page (lines staggered over the L1 sets) vs the same lines packed: {}",
        SMALL_PAGE_BYTES / 1024,
        near.join(", ")
    )];
    if let Some(t) = tlb {
        evidence.push(format!(
            "{} pages fit, {} slow; packed control {}",
            t.entries,
            t.first_slow,
            if t.is_tlb {
                "stays fast: a TLB effect"
            } else {
                "jumps too: NOT a TLB effect"
            }
        ));
    }
    Parameter {
        key: "l1_dtlb_reach".into(),
        name: "L1 DTLB reach (TLB)".into(),
        unit: "bytes".into(),
        value: tlb.filter(|t| t.is_tlb).map(|t| t.reach_bytes as f64),
        is_upper_bound: false,
        source: "timed".into(),
        confidence: tlb.map_or(0.0, |t| t.confidence),
        reported: None,
        verdict: if tlb.is_some_and(|t| t.is_tlb) {
            Verdict::NotReported
        } else {
            Verdict::NotInferred
        },
        is_tlb: true,
        evidence,
        note: tlb.map(|t| {
            format!(
                "≈ {} entries × {} KiB pages; a TLB, not a cache",
                t.entries,
                SMALL_PAGE_BYTES / 1024
            )
        }),
    }
}

/// What the system reports (sysfs, cross-checked with CPUID by [`Geometry::detect`]) for the
/// levels `infer` measures; each absent when the system does not say.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Reported {
    pub l1d: Option<CacheLevel>,
    pub l2: Option<CacheLevel>,
    /// The highest data/unified level above the L2.
    pub llc: Option<CacheLevel>,
}

/// Picks the L1d, the L2 and the last level above the L2 out of a geometry.
pub fn reported_levels(geometry: &Geometry) -> Reported {
    let data = geometry.data_levels();
    let at = |level: u8| data.iter().find(|l| l.level == level).cloned();
    Reported {
        l1d: data
            .iter()
            .find(|l| l.level == 1 && l.kind == CacheKind::Data)
            .cloned(),
        l2: at(2),
        llc: data
            .iter()
            .filter(|l| l.level > 2)
            .max_by_key(|l| l.level)
            .cloned(),
    }
}

fn format_value(unit: &str, value: Option<f64>) -> String {
    match (unit, value) {
        (_, None) => "—".into(),
        ("bytes", Some(v)) => human_bytes(v),
        (unit, Some(v)) => format!("{v:.0} {unit}"),
    }
}

/// The table, the evidence and the conditions, as printed without `--json`.
pub fn render_text(report: &InferReport) -> String {
    let mut out = String::new();
    out.push_str("stridelab infer — cache geometry from timing alone (every value TIMED: dependent pointer chases, median of interleaved rounds)\n\n");
    out.push_str(&format!(
        "{:<22} {:>12} {:>12}  {:<13} {:>10}\n",
        "parameter", "inferred", "sysfs", "verdict", "confidence"
    ));
    for p in &report.parameters {
        out.push_str(&format!(
            "{:<22} {:>12} {:>12}  {:<13} {:>10.2}\n",
            p.name,
            format!(
                "{}{}",
                if p.is_upper_bound { "< " } else { "" },
                format_value(&p.unit, p.value)
            ),
            format_value(&p.unit, p.reported),
            p.verdict.label(),
            p.confidence
        ));
    }
    out.push_str("\nevidence (timed):\n");
    for p in &report.parameters {
        out.push_str(&format!(
            "  {}{}:\n",
            p.name,
            if p.is_tlb { " [TLB, not a cache]" } else { "" }
        ));
        for e in &p.evidence {
            out.push_str(&format!("    - {e}\n"));
        }
        if let Some(note) = &p.note {
            out.push_str(&format!("    note: {note}\n"));
        }
    }
    out.push_str("\nconditions:\n");
    for c in &report.conditions {
        out.push_str(&format!("  - {c}\n"));
    }
    out.push_str(&format!(
        "\ntook {:.1} s (budget {:.0} s)\n",
        report.elapsed_s, report.budget_s
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reported_levels_pick_l1d_l2_and_the_last_level() {
        let zen4 = reported_levels(&Geometry::preset("amd-zen4").unwrap());
        assert_eq!(
            zen4.l1d.map(|l| (l.size, l.ways, l.sets)),
            Some((32 << 10, 8, 64))
        );
        assert_eq!(zen4.l2.map(|l| l.size), Some(1 << 20));
        assert_eq!(zen4.llc.map(|l| l.size), Some(32 << 20));
        let design_vm = reported_levels(&Geometry::preset("design-vm").unwrap());
        assert!(
            design_vm.llc.is_none(),
            "no L3 listed: nothing to compare the LLC with"
        );
        assert_eq!(reported_levels(&Geometry::default()), Reported::default());
    }

    #[test]
    fn sweep_is_increasing_and_denser_below_8_mib() {
        let sizes = sweep_sizes(64 << 20);
        assert!(sizes.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(sizes.first(), Some(&(4 << 10)));
        assert_eq!(sizes.last(), Some(&(64 << 20)));
        assert!(sizes.contains(&(32 << 10)) && sizes.contains(&(1 << 20)));
    }
}
