//! Predictions worked by hand: a model of round numbers (L1d 100 GB/s read, 50 GB/s write,
//! 1 ns; L2 40 / 20 GB/s, 4 ns; the L3 skipped, so priced as memory; memory 10 / 5 GB/s,
//! 100 ns) and simulated counts whose traffic is easy to follow.

use super::*;
use crate::results::schema::tests::sample_document;
use crate::results::time_model::tests::sample_machine_model;
use crate::results::time_model::{Interval, SkippedLevel};
use crate::results::{ModelPrediction, SimulatedMisses, SimulationCut, SimulationScope};
use crate::vocab::Work;

fn probes(name: &str, size: u64, read_gb: f64, write_gb: f64, latency_ns: f64) -> LevelProbes {
    LevelProbes {
        name: name.into(),
        size,
        working_set: 1 << 20,
        read_bytes_per_s: Interval::exact(read_gb * 1e9),
        write_bytes_per_s: Interval::exact(write_gb * 1e9),
        copy_bytes_per_s: Interval::exact(read_gb * 1e9),
        latency_ns: Interval::exact(latency_ns),
    }
}

const L3_SIZE: u64 = 480 << 20;

fn model() -> MachineModel {
    MachineModel {
        levels: vec![
            probes("L1d", 48 << 10, 100.0, 50.0, 1.0),
            probes("L2", 2 << 20, 40.0, 20.0, 4.0),
        ],
        memory: probes("memory", 0, 10.0, 5.0, 100.0),
        skipped: vec![SkippedLevel {
            name: "L3".into(),
            size: L3_SIZE,
            reason: "implausible".into(),
        }],
        ..sample_machine_model()
    }
}

/// (loads, stores, load misses, store misses) per level: L1d, L2, L3.
type Counts = [(u64, u64, u64, u64); 3];

fn level(name: &str, size: u64, (loads, stores, lm, sm): (u64, u64, u64, u64)) -> SimulatedLevel {
    SimulatedLevel {
        name: name.into(),
        size,
        ways: 16,
        line: 64,
        sets: 64,
        loads,
        stores,
        load_misses: lm,
        store_misses: sm,
        misses: lm + sm,
        miss_rate: 0.0,
        compulsory: 0,
        capacity: 0,
        conflict: 0,
    }
}

fn record(kernel: &str, family: Family, work: (u64, u64), counts: Counts, ns: f64) -> PointRecord {
    let mut r = sample_document().records.remove(0);
    r.kernel = kernel.into();
    r.family = family;
    r.work = Some(Work {
        bytes_read: work.0,
        bytes_written: work.1,
        elements: work.0 / 8,
    });
    r.timing.as_mut().unwrap().ns_per_run.median = ns;
    r.simulated = Some(SimulatedMisses {
        source: Provenance::Simulated,
        scope: SimulationScope {
            run_accesses: None,
            simulated_accesses: 1,
            kind: "full".into(),
            cut: Some(SimulationCut::None),
            note: None,
        },
        start: "cold".into(),
        levels: vec![
            level("L1d", 48 << 10, counts[0]),
            level("L2", 2 << 20, counts[1]),
            level("L3", L3_SIZE, counts[2]),
        ],
    });
    r
}

/// A 1 MiB read from memory: 131,072 loads, one line in eight misses every level.
fn read_1m() -> PointRecord {
    let miss = (16384, 0, 16384, 0);
    record(
        "read",
        Family::Reference,
        (1 << 20, 0),
        [(131_072, 0, 16384, 0), miss, miss],
        209_715.2,
    )
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-6 * b.abs().max(1.0)
}

#[test]
fn bounds_and_estimates_worked_by_hand() {
    // (record, rule, overlapped, non-overlapped, latency, estimate, measured ÷ model)
    let chase = record(
        "chase",
        Family::Latency,
        (8000, 0),
        [(1000, 0, 1000, 0), (1000, 0, 200, 0), (200, 0, 200, 0)],
        46_400.0,
    );
    let copy_l2 = record(
        "copy",
        Family::Reference,
        (800, 800),
        [(100, 100, 100, 100), (100, 100, 0, 0), (0, 0, 0, 0)],
        480.0,
    );
    let cases = [
        // L1d: 1 MiB at 100 GB/s = 10,485.76 ns; memory: 16,384 lines × 64 B at 10 GB/s =
        // 104,857.6 ns; latency: 114,688 L1d hits × 1 ns + 16,384 × 100 ns.
        (
            read_1m(),
            TimeRule::Bandwidth,
            104_857.6,
            115_343.36,
            1_753_088.0,
            104_857.6,
            2.0,
        ),
        // 800 loads hit L2 (4 ns), 200 come from memory (100 ns): 23,200 ns; no L1d hits.
        (
            chase,
            TimeRule::Latency,
            1280.0,
            80.0 + 1280.0 + 0.0 + 1280.0,
            23_200.0,
            23_200.0,
            2.0,
        ),
        // L2 serves 100 loaded lines (6,400 B at 40 GB/s = 160 ns) and 100 stored ones
        // (6,400 B at 20 GB/s = 320 ns); L1d: 800 B at 100 + 800 B at 50 GB/s = 24 ns; the
        // 100 loads wait 4 ns each in L2.
        (
            copy_l2,
            TimeRule::Bandwidth,
            480.0,
            504.0,
            400.0,
            480.0,
            1.0,
        ),
    ];
    for (i, (r, rule, overlapped, non_overlapped, latency, estimate, ratio)) in
        cases.into_iter().enumerate()
    {
        let p = predict(&r, &model()).expect("timed");
        assert!(p.applies, "case {i}: {}", p.reason);
        assert_eq!(p.rule, Some(rule), "case {i}");
        let b = p.bounds.as_ref().unwrap();
        for (what, got, want) in [
            ("overlapped", b.overlapped_ns, overlapped),
            ("non-overlapped", b.non_overlapped_ns, non_overlapped),
            ("latency", b.latency_ns, latency),
            ("estimate", b.estimate_ns, estimate),
            ("ratio", p.measured_over_model.unwrap(), ratio),
        ] {
            assert!(close(got, want), "case {i} {what}: {got} != {want}");
        }
        assert!(crate::results::time_model::check_prediction(&p, "p").is_ok());
    }
}

#[test]
fn the_skipped_l3_is_priced_as_memory_and_the_ends_follow_the_probes_range() {
    let mut m = model();
    m.memory.read_bytes_per_s = Interval {
        median: 10e9,
        low: 5e9,
        high: 20e9,
    };
    // Half of the lines now hit the (skipped) L3: both halves cost memory's 10 GB/s.
    let half = record(
        "read",
        Family::Reference,
        (1 << 20, 0),
        [
            (131_072, 0, 16384, 0),
            (16384, 0, 16384, 0),
            (16384, 0, 8192, 0),
        ],
        1.0,
    );
    let p = predict(&half, &m).unwrap();
    assert_eq!(p.traffic[2].priced_as, "memory");
    let b = p.bounds.unwrap();
    assert!(close(b.estimate_ns, 104_857.6), "{}", b.estimate_ns);
    assert!(close(b.estimate_low_ns, 52_428.8), "{}", b.estimate_low_ns);
    assert!(
        close(b.estimate_high_ns, 209_715.2),
        "{}",
        b.estimate_high_ns
    );
}

#[test]
fn a_cold_simulation_is_warmed_where_the_footprint_fits() {
    // 128 KiB read from cold caches: 2,048 lines, all compulsory misses at every level. The
    // footprint overflows the 48 KiB L1d, fits the 2 MiB L2: warm, L2 serves all 2,048 lines
    // (131,072 B at 40 GB/s = 3,276.8 ns) and memory none; L1d's 131,072 B take 1,310.72 ns.
    let miss = (2048, 0, 2048, 0);
    let mut r = record(
        "row-sum",
        Family::Traverse,
        (131_072, 0),
        [(16384, 0, 2048, 0), miss, miss],
        1.0,
    );
    for l in &mut r.simulated.as_mut().unwrap().levels {
        l.compulsory = 2048;
    }
    let p = predict(&r, &model()).unwrap();
    let lines: Vec<f64> = p.traffic.iter().map(|t| t.loads).collect();
    assert_eq!(lines, [14336.0, 2048.0, 0.0, 0.0]);
    assert!(close(p.bounds.unwrap().estimate_ns, 3276.8));
    // Started warm, the counts are the steady state already: memory serves the misses.
    r.simulated.as_mut().unwrap().start = "warm".into();
    let lines: Vec<f64> = predict(&r, &model())
        .unwrap()
        .traffic
        .iter()
        .map(|t| t.loads)
        .collect();
    assert_eq!(lines, [14336.0, 0.0, 0.0, 2048.0]);
}

#[test]
fn a_simulated_prefix_counts_for_the_whole_run() {
    let mut r = read_1m();
    let sim = r.simulated.as_mut().unwrap();
    for l in &mut sim.levels {
        (l.loads, l.load_misses) = (l.loads / 2, l.load_misses / 2);
    }
    sim.scope = SimulationScope {
        run_accesses: Some(131_072),
        simulated_accesses: 65_536,
        kind: "prefix".into(),
        cut: Some(SimulationCut::AccessCap),
        note: None,
    };
    let b = predict(&r, &model()).unwrap().bounds.unwrap();
    assert!(close(b.estimate_ns, 104_857.6), "{}", b.estimate_ns);
}

#[test]
fn the_model_disowns_what_it_does_not_price_and_says_why() {
    type Change = fn(&mut PointRecord);
    let cases: &[(Change, &str, bool)] = &[
        (|r| r.threads = 2, "timed on 2 threads", true),
        (|r| r.family = Family::Matmul, "compute-bound", true),
        (
            |r| {
                r.model = Some(ModelPrediction {
                    source: Provenance::Model,
                    model: "set model".into(),
                    pattern: None,
                    view: None,
                    simulation_note: Some("the copy engine's order".into()),
                })
            },
            "not the timed one: the copy engine's order",
            true,
        ),
        (
            |r| {
                for l in &mut r.simulated.as_mut().unwrap().levels {
                    (l.loads, l.load_misses) = (0, 0);
                }
                r.simulated.as_mut().unwrap().levels[0].loads = 131_072;
            },
            "independent accesses that all hit L1d",
            true,
        ),
        (|r| r.simulated = None, "no simulated counts", false),
        (
            |r| r.simulated.as_mut().unwrap().levels[1].size = 1 << 20,
            "simulated on another geometry",
            false,
        ),
    ];
    for (i, (change, reason, priced)) in cases.iter().enumerate() {
        let mut r = read_1m();
        change(&mut r);
        let p = predict(&r, &model()).unwrap();
        assert!(!p.applies, "case {i}");
        assert!(p.reason.contains(reason), "case {i}: {}", p.reason);
        assert_eq!(p.bounds.is_some(), *priced, "case {i}");
        assert!(crate::results::time_model::check_prediction(&p, "p").is_ok());
    }
    // A chase of L1d hits is the chase probe's own case: claimed, at L1d's latency.
    let mut chase = read_1m();
    chase.kernel = "chase".into();
    for l in &mut chase.simulated.as_mut().unwrap().levels {
        (l.loads, l.load_misses) = (0, 0);
    }
    chase.simulated.as_mut().unwrap().levels[0].loads = 1000;
    let p = predict(&chase, &model()).unwrap();
    assert!(p.applies, "{}", p.reason);
    assert!(close(p.bounds.unwrap().estimate_ns, 1000.0));
    let mut untimed = read_1m();
    untimed.timing = None;
    assert_eq!(predict(&untimed, &model()), None);
}

#[test]
fn only_chases_and_latency_conflicts_are_dependent() {
    let mut r = read_1m();
    assert!(!dependent_loads(&r));
    r.kernel = "chase".into();
    assert!(dependent_loads(&r));
    r.kernel = "conflict".into();
    r.params
        .insert("mode".into(), ParamValue::Text("tp".into()));
    assert!(!dependent_loads(&r));
    r.params
        .insert("mode".into(), ParamValue::Text("lat".into()));
    assert!(dependent_loads(&r));
}
