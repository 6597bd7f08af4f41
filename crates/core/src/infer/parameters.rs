//! The parameters of `stridelab infer`, each with its evidence in words and its confidence:
//! the rule's own confidence (from the analysis) × how many single rounds (or
//! leave-one-round-out curves) give the same value. Every value is held against what the
//! system reports (the caches from sysfs/CPUID, the L1 DTLB from CPUID), and a verdict whose
//! confidence is below `MIN_VERDICT_CONFIDENCE` is uncertain, its note saying what the
//! confidence is made of.

use crate::cache::geometry::CacheLevel;
use crate::results::infer_doc::{
    CAPACITY_TOLERANCE, ConflictCurves, Edge, Jump, Parameter, Point, StrideObservation, Verdict,
    capacity_verdict,
};

use super::analysis::{
    self, CapacitySettings, LevelEdges, StepEstimate, StrideVerdict, WaysSetsFit,
};
use super::stages::{CapacityStage, ConflictStage, LineStage, Reported, TlbStage};
use crate::units::format_bytes as human_bytes;

/// Every parameter, in the order printed: line size, L1d size/ways/sets, L2, LLC, DTLB reach.
pub(super) fn all(
    capacity: &CapacityStage,
    lines: &LineStage,
    conflict: &ConflictStage,
    tlb: &TlbStage,
    sysfs: &Reported,
) -> Vec<Parameter> {
    let mut parameters = Vec::new();
    parameters.push(line_parameter(
        &lines.curve,
        lines.line,
        lines.region,
        sysfs.l1d.as_ref().map(|c| c.line as f64),
    ));
    parameters.extend(l1_parameters(
        &conflict.curves,
        conflict.fit.as_ref(),
        &conflict.round_fits,
        &capacity.levels,
        sysfs.l1d.as_ref(),
    ));
    parameters.push(capacity_parameter(
        "l2_size",
        "L2 size",
        &capacity.levels,
        &capacity.curve,
        2,
        sysfs.l2.as_ref().map(|c| c.size as f64),
    ));
    parameters.push(capacity_parameter(
        "llc_size",
        "LLC size",
        &capacity.levels,
        &capacity.curve,
        3,
        sysfs.llc.as_ref().map(|c| c.size as f64),
    ));
    parameters.push(super::tlb::tlb_parameter(
        &tlb.spread,
        &tlb.packed,
        tlb.tlb,
        sysfs.l1_dtlb.as_ref(),
    ));
    parameters
}

/// `p` held to the confidence floor, `basis` saying what its confidence is made of.
fn held(mut p: Parameter, basis: &str) -> Parameter {
    p.hold_to_confidence(Some(basis));
    p
}

/// A confidence's two factors in words: the rule's own, and how many of the rounds (`kind`:
/// what they are and what they agree on) give the same value.
fn basis(rule: &str, own: f64, same: usize, rounds: usize, kind: &str) -> String {
    format!("{rule} {own:.2} × {same} of {rounds} {kind}")
}

/// Fits (ways, sets) on each round of the conflict probe alone: the consistency behind the
/// confidence.
pub(super) fn conflict_round_fits(
    conflict: &[ConflictCurves],
    line: usize,
) -> Vec<Option<(usize, usize)>> {
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
                    probe: analysis::jump_capacity(&analysis::round_curve(&c.probe, r)),
                    control: analysis::jump_capacity(&analysis::round_curve(&c.control, r)),
                })
                .collect();
            analysis::fit_ways_sets(&obs, line).map(|f| (f.ways, f.sets))
        })
        .collect()
}

fn rounds_of(points: &[Point]) -> usize {
    points.iter().map(|p| p.samples.len()).min().unwrap_or(0)
}

fn line_parameter(
    points: &[Point],
    line: Option<StepEstimate>,
    region: usize,
    reported: Option<f64>,
) -> Parameter {
    let per_round: Vec<f64> = (0..rounds_of(points))
        .filter_map(|r| analysis::line_size(&analysis::round_curve(points, r)).map(|l| l.value))
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
    let own = line.map_or(0.0, |l| l.confidence);
    let p = Parameter {
        key: "line_size".into(),
        name: "line size".into(),
        unit: "bytes".into(),
        value,
        is_upper_bound: false,
        source: "timed".into(),
        confidence: own * round_share(same, per_round.len()),
        reported,
        verdict: Verdict::exact(value, reported),
        interval: None,
        is_tlb: false,
        evidence,
        note: None,
    };
    let rounds = per_round.len();
    let kind = "single rounds giving the same line";
    held(p, &basis("the step's own", own, same, rounds, kind))
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

/// One line per conflict stride: what fitted at the stride and at its control, and the verdict.
fn stride_evidence(c: &ConflictCurves) -> String {
    let level =
        |points: &[Point], k: usize| points.get(k.saturating_sub(1)).map_or(f64::NAN, |p| p.ns);
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
}

/// The classic reading, as a cross-check of the model fit: the smallest stride at which the
/// fewest slots fit is sets × line, and that number of slots is the ways.
fn classic_reading(conflict: &[ConflictCurves]) -> Option<String> {
    let conflicts = || {
        conflict
            .iter()
            .filter(|c| c.observation.verdict() == StrideVerdict::SetConflict)
    };
    let fewest = conflicts()
        .filter_map(|c| c.observation.probe.fits())
        .min()?;
    let first = conflicts().find(|c| c.observation.probe.fits() == Some(fewest))?;
    Some(format!(
        "smallest stride where the fewest slots ({fewest}) fit: {} B = sets × line",
        first.stride_bytes
    ))
}

/// The L1d size's evidence, and its confidence: halved when the working-set curve's first step
/// does not corroborate ways × sets × line.
fn l1_size_evidence(size: Option<f64>, levels: &LevelEdges, confidence: f64) -> (Vec<String>, f64) {
    let mut evidence = vec![format!(
        "ways × sets × line = {}",
        size.map_or("?".into(), human_bytes)
    )];
    let mut confidence = confidence;
    if let Some(edge) = &levels.l1 {
        evidence.push(format!(
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
            evidence
                .push("the working-set step does not corroborate the conflict-probe size".into());
            confidence *= 0.5;
        }
    }
    (evidence, confidence)
}

/// What an L1 parameter reads like before its numbers.
struct Naming {
    key: &'static str,
    name: &'static str,
    unit: &'static str,
}

/// A timed parameter compared exactly with what the system reports.
fn exact_parameter(
    naming: Naming,
    value: Option<f64>,
    reported: Option<f64>,
    evidence: Vec<String>,
    confidence: f64,
) -> Parameter {
    Parameter {
        key: naming.key.into(),
        name: naming.name.into(),
        unit: naming.unit.into(),
        value,
        is_upper_bound: false,
        source: "timed".into(),
        confidence,
        reported,
        verdict: Verdict::exact(value, reported),
        interval: None,
        is_tlb: false,
        evidence,
        note: None,
    }
}

fn l1_parameters(
    conflict: &[ConflictCurves],
    fit: Option<&WaysSetsFit>,
    round_fits: &[Option<(usize, usize)>],
    levels: &LevelEdges,
    reported: Option<&CacheLevel>,
) -> Vec<Parameter> {
    let mut evidence: Vec<String> = conflict.iter().map(stride_evidence).collect();
    let same = fit.map_or(0, |f| {
        round_fits
            .iter()
            .filter(|r| **r == Some((f.ways, f.sets)))
            .count()
    });
    evidence.extend(classic_reading(conflict));
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
    let own = fit.map_or(0.0, |f| f.confidence);
    let confidence = own * round_share(same, round_fits.len());
    let size = fit.map(|f| (f.ways * f.sets * f.line) as f64);
    let (size_evidence, size_confidence) = l1_size_evidence(size, levels, confidence);
    let kind = "single rounds giving the same (ways, sets)";
    let fit_basis = basis("the model fit's own", own, same, round_fits.len(), kind);
    let size_basis = if size_confidence < confidence {
        format!("{fit_basis} × 0.5 (the working-set step does not corroborate the size)")
    } else {
        fit_basis.clone()
    };
    let parameters = [
        exact_parameter(
            Naming {
                key: "l1d_size",
                name: "L1d size",
                unit: "bytes",
            },
            size,
            reported.map(|c| c.size as f64),
            size_evidence,
            size_confidence,
        ),
        exact_parameter(
            Naming {
                key: "l1d_ways",
                name: "L1d ways",
                unit: "ways",
            },
            fit.map(|f| f.ways as f64),
            reported.map(|c| c.ways as f64),
            evidence,
            confidence,
        ),
        exact_parameter(
            Naming {
                key: "l1d_sets",
                name: "L1d sets",
                unit: "sets",
            },
            fit.map(|f| f.sets as f64),
            reported.map(|c| c.sets as f64),
            sets_evidence,
            confidence,
        ),
    ];
    let bases = [size_basis, fit_basis.clone(), fit_basis];
    parameters
        .into_iter()
        .zip(bases)
        .map(|(p, b)| held(p, &b))
        .collect()
}

/// The edge a capacity parameter reads (2 = L2, 3 = LLC) and, for the LLC without its own
/// step, the upper bound instead.
fn level_value(levels: &LevelEdges, level: usize) -> (Option<Edge>, Option<f64>) {
    if level == 2 {
        (levels.l2.clone(), None)
    } else {
        (levels.llc.clone(), levels.llc_upper_bound())
    }
}

/// The evidence of a capacity (the transition and its points, or the upper bound) and its note.
fn capacity_evidence(
    edge: Option<&Edge>,
    upper_bound: Option<f64>,
    levels: &LevelEdges,
    curve: &[Point],
) -> (Vec<String>, Option<String>) {
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
    if let Some(e) = edge {
        let evidence = vec![
            format!(
                "plateau {:.2} ns up to {}, next plateau {:.2} ns from {}; the transition's geometric centre is {}",
                e.faster_ns,
                human_bytes(e.last_inside),
                e.slower_ns,
                human_bytes(e.first_outside),
                human_bytes(e.capacity_bytes)
            ),
            format!("points: {}", window(e.last_inside, e.first_outside)),
        ];
        (evidence, None)
    } else if let (Some(bound), Some(l2)) = (upper_bound, &levels.l2) {
        let evidence = vec![
            format!(
                "no separate plateau after the L2: latency went from {:.2} ns (L2) to {:.2} ns by {}",
                l2.faster_ns,
                l2.slower_ns,
                human_bytes(bound)
            ),
            format!("points: {}", window(l2.last_inside, bound)),
        ];
        let note = format!(
            "an upper bound, not a size: whatever serves this core beyond the L2 holds less than {}",
            human_bytes(bound)
        );
        (evidence, Some(note))
    } else {
        (vec!["no such step in the working-set curve".into()], None)
    }
}

/// The interval of a capacity: the transition (or `[0, bound]` for an upper bound) widened to
/// hold every leave-one-round-out value, so a value that hangs on one round widens it.
fn capacity_interval(edge: Option<&Edge>, value: f64, per_round: &[f64]) -> [f64; 2] {
    let (mut low, mut high) = edge.map_or((0.0, value), |e| (e.last_inside, e.first_outside));
    for &r in per_round {
        if edge.is_some() {
            low = low.min(r);
        }
        high = high.max(r);
    }
    [low, high]
}

/// An unlabelled step between the L2 and the LLC may be either one's own end (a level whose
/// transition is split by a short intermediate plateau: on this lab's AMD VM, 704–896 KiB
/// between a 1 MiB L2 and the L3), so the L2's interval reaches past the last such step and
/// the LLC's down to the first: which step is the level's is not decided by the curve.
fn widened_over_unlabelled([low, high]: [f64; 2], levels: &LevelEdges, level: usize) -> [f64; 2] {
    match (level, levels.unlabelled.first(), levels.unlabelled.last()) {
        (2, _, Some(last)) => [low, high.max(last.first_outside)],
        (3, Some(first), _) if low > 0.0 => [low.min(first.last_inside), high],
        _ => [low, high],
    }
}

/// A capacity from the working-set curve; `level` picks the edge (2 = L2, 3 = LLC) in each
/// leave-one-round-out curve, for the interval and the agreement part of the confidence.
fn capacity_parameter(
    key: &str,
    name: &str,
    levels: &LevelEdges,
    curve: &[Point],
    level: usize,
    reported: Option<f64>,
) -> Parameter {
    let (edge, upper_bound) = level_value(levels, level);
    let value = edge.as_ref().map(|e| e.capacity_bytes).or(upper_bound);
    let per_round: Vec<Option<f64>> = (0..rounds_of(curve))
        .map(|r| {
            let a = analysis::capacity_edges(
                &analysis::leave_one_out(curve, r),
                CapacitySettings::default(),
            );
            let (edge, bound) = level_value(&analysis::label_levels(&a.edges), level);
            edge.map(|e| e.capacity_bytes).or(bound)
        })
        .collect();
    let found: Vec<f64> = per_round.iter().flatten().copied().collect();
    let same = value.map_or(0, |v| {
        found.iter().filter(|&&r| (r - v).abs() <= 0.1 * v).count()
    });
    let (mut evidence, mut note) = capacity_evidence(edge.as_ref(), upper_bound, levels, curve);
    evidence.push(format!(
        "the same within 10 % in {same} of {} leave-one-round-out curves",
        per_round.len()
    ));
    if level == 3 && note.is_none() {
        note = Some("the last cache step before the slowest plateau; an exclusive (victim) LLC shows as L2 + LLC".into());
    }
    let interval = value
        .map(|v| capacity_interval(edge.as_ref(), v, &found))
        .map(|i| widened_over_unlabelled(i, levels, level));
    // A round that finds no such level at all leaves the interval open-ended: no claim.
    let verdict = match interval {
        Some(i) if found.len() == per_round.len() => capacity_verdict(value, i, reported),
        Some(_) if reported.is_some() => Verdict::Uncertain,
        _ => capacity_verdict(value, [0.0, 0.0], reported),
    };
    if let (Some([low, high]), Verdict::Uncertain, Some(r)) = (interval, verdict, reported) {
        let text = format!(
            "uncertain: {name} between {} and {} (sysfs {})",
            human_bytes(low),
            human_bytes(high),
            human_bytes(r)
        );
        note = Some(note.map_or(text.clone(), |n| format!("{text}; {n}")));
    }
    // An upper bound is half a claim: it bounds the level without finding its step.
    let (rule, own) = match (&edge, upper_bound) {
        (Some(e), _) => ("the step's own", e.confidence),
        (None, Some(_)) => ("an upper bound's", 0.5),
        (None, None) => ("no step:", 0.0),
    };
    let p = Parameter {
        key: key.into(),
        name: name.into(),
        unit: "bytes".into(),
        value,
        is_upper_bound: edge.is_none() && upper_bound.is_some(),
        source: "timed".into(),
        confidence: own * round_share(same, per_round.len()),
        reported,
        verdict,
        interval,
        is_tlb: false,
        evidence,
        note,
    };
    let kind = "leave-one-round-out curves giving the same value within 10 %";
    held(p, &basis(rule, own, same, per_round.len(), kind))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::infer::tlb::tests::recorded_points;
    use crate::results::infer_doc::MIN_VERDICT_CONFIDENCE;

    fn edge(last_inside: f64, first_outside: f64) -> Edge {
        Edge {
            capacity_bytes: (last_inside * first_outside).sqrt(),
            last_inside,
            first_outside,
            faster_ns: 1.0,
            slower_ns: 2.0,
            confidence: 1.0,
        }
    }

    #[test]
    fn an_unlabelled_step_widens_the_l2_up_and_the_llc_down() {
        const KIB: f64 = 1024.0;
        // The main job's curve on the AMD VM: L2 4.1 ns to 416 KiB, a pause at 5.9 ns from
        // 704 to 896 KiB, the L3 at 12.9 ns from 1.4 MiB.
        let split = LevelEdges {
            l1: Some(edge(30.0 * KIB, 36.0 * KIB)),
            l2: Some(edge(416.0 * KIB, 704.0 * KIB)),
            llc: Some(edge(2560.0 * KIB, 16384.0 * KIB)),
            unlabelled: vec![edge(896.0 * KIB, 1408.0 * KIB)],
        };
        let l2 = widened_over_unlabelled([416.0 * KIB, 704.0 * KIB], &split, 2);
        assert_eq!(l2, [416.0 * KIB, 1408.0 * KIB]);
        // 1 MiB now lies inside: no disagreement can be stated.
        let verdict = capacity_verdict(Some(554.0 * KIB), l2, Some(1024.0 * KIB));
        assert_eq!(verdict, Verdict::Uncertain);
        let llc = widened_over_unlabelled([2560.0 * KIB, 16384.0 * KIB], &split, 3);
        assert_eq!(llc, [896.0 * KIB, 16384.0 * KIB]);
        // An upper bound, an L1 and a curve without unlabelled steps keep their intervals.
        assert_eq!(widened_over_unlabelled([0.0, 2.0], &split, 3), [0.0, 2.0]);
        assert_eq!(widened_over_unlabelled([1.0, 2.0], &split, 1), [1.0, 2.0]);
        let plain = LevelEdges {
            unlabelled: Vec::new(),
            ..split
        };
        assert_eq!(widened_over_unlabelled([1.0, 2.0], &plain, 2), [1.0, 2.0]);
    }

    fn capacity_parameters(curve: &[Point], l2: f64, llc: f64) -> [Parameter; 2] {
        let analysis = analysis::capacity_edges(curve, CapacitySettings::default());
        let levels = analysis::label_levels(&analysis.edges);
        [
            capacity_parameter("l2_size", "L2 size", &levels, curve, 2, Some(l2)),
            capacity_parameter("llc_size", "LLC size", &levels, curve, 3, Some(llc)),
        ]
    }

    /// The recorded working-set curves of the Zen 4 VM (sysfs: L2 1 MiB, L3 32 MiB) read with
    /// the system's sizes and with a Zen 3's 512 KiB L2: a verdict that agrees or disagrees
    /// has the confidence a verdict needs, and one that falls short is uncertain and says
    /// what its confidence is made of.
    #[test]
    fn recorded_capacities_agree_or_disagree_only_with_the_confidence_a_verdict_needs() {
        use Verdict::*;
        const MIB: f64 = 1024.0 * 1024.0;
        let (a, b) = (
            "tests/data/infer_capacity_zen4_vm_a.json",
            "tests/data/infer_capacity_zen4_vm_b.json",
        );
        let fixture = "tests/fixtures/infer.json";
        // (file, its curve's field, reported L2, key, verdict, what the note says)
        let table: [(&str, &str, f64, &str, Verdict, &str); 8] = [
            (a, "points", MIB, "l2_size", Agrees, ""),
            (a, "points", MIB, "llc_size", Disagrees, "an upper bound"),
            (
                a,
                "points",
                0.5 * MIB,
                "l2_size",
                Uncertain,
                "between 640 KiB and 1.5 MiB",
            ),
            (b, "points", MIB, "l2_size", Agrees, ""),
            (
                b,
                "points",
                0.5 * MIB,
                "l2_size",
                Uncertain,
                "between 512 KiB and 1.2 MiB",
            ),
            (
                fixture,
                "curves.capacity",
                MIB,
                "l2_size",
                Uncertain,
                "uncertain, not \"agrees\": confidence 0.14 is below the 0.50 a verdict needs \
              (the step's own 0.28 × 2 of 4 leave-one-round-out curves giving the same value \
              within 10 %)",
            ),
            (
                fixture,
                "curves.capacity",
                MIB,
                "llc_size",
                Uncertain,
                "uncertain, not \"disagrees\": confidence 0.38 is below the 0.50 a verdict needs \
              (an upper bound's 0.50 × 3 of 4",
            ),
            (
                fixture,
                "curves.capacity",
                0.5 * MIB,
                "l2_size",
                Uncertain,
                "between 448 KiB and 2 MiB",
            ),
        ];
        for (path, field, l2, key, verdict, says) in table {
            let curve = recorded_points(path, field);
            let parameters = capacity_parameters(&curve, l2, 32.0 * MIB);
            let p = parameters.iter().find(|p| p.key == key).unwrap();
            let at = format!("{path}, L2 {l2}, {key}");
            assert_eq!(p.verdict, verdict, "{at}: {p:#?}");
            let note = p.note.as_deref().unwrap_or("");
            assert!(note.contains(says), "{at}: {note}");
            if matches!(p.verdict, Agrees | Disagrees) {
                assert!(
                    p.confidence >= MIN_VERDICT_CONFIDENCE,
                    "{at}: {}",
                    p.confidence
                );
            }
        }
    }
}
