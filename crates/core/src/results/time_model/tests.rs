//! The model file's and a prediction's rules, one broken rule per row.

use super::*;

fn probes(name: &str, size: u64, read_gb: f64, latency_ns: f64) -> LevelProbes {
    LevelProbes {
        name: name.into(),
        size,
        working_set: size.max(1 << 20) / 2,
        read_bytes_per_s: Interval::exact(read_gb * 1e9),
        write_bytes_per_s: Interval::exact(read_gb * 0.5e9),
        copy_bytes_per_s: Interval::exact(read_gb * 0.6e9),
        latency_ns: Interval::exact(latency_ns),
    }
}

/// A small valid model: L1d and L2 probed, the L3 skipped, memory.
pub(crate) fn sample_machine_model() -> MachineModel {
    MachineModel {
        format: MODEL_FORMAT.into(),
        version: MODEL_VERSION,
        source: Provenance::Measured,
        cpu_model: "Test CPU".into(),
        geometry: vec![GeometryKey {
            name: "L1d".into(),
            size: 48 << 10,
            ways: 12,
            line: 64,
        }],
        measured_unix_s: 1,
        load_average: Some(0.5),
        levels: vec![probes("L1d", 48 << 10, 100.0, 1.0)],
        memory: probes("memory", 0, 10.0, 100.0),
        skipped: vec![],
    }
}

/// A valid claimed prediction.
pub(crate) fn sample_prediction() -> TimePrediction {
    TimePrediction {
        source: Provenance::Model,
        applies: true,
        reason: "independent loads".into(),
        rule: Some(TimeRule::Bandwidth),
        bounds: Some(TimeBounds {
            overlapped_ns: 10.0,
            non_overlapped_ns: 12.0,
            latency_ns: 50.0,
            estimate_ns: 10.0,
            estimate_low_ns: 9.0,
            estimate_high_ns: 11.0,
        }),
        traffic: vec![],
        measured_over_model: Some(1.5),
        why_controls: Vec::new(),
    }
}

#[test]
fn the_samples_give_the_median_and_range() {
    type Case<'a> = (&'a [f64], Option<(f64, f64, f64)>);
    let cases: &[Case] = &[
        (&[], None),
        (&[3.0], Some((3.0, 3.0, 3.0))),
        (&[4.0, 1.0, 2.0], Some((2.0, 1.0, 4.0))),
        (&[4.0, 1.0, 2.0, 3.0], Some((2.5, 1.0, 4.0))),
        (&[f64::NAN, 5.0], Some((5.0, 5.0, 5.0))),
    ];
    for (samples, expected) in cases {
        let got = Interval::of(samples).map(|i| (i.median, i.low, i.high));
        assert_eq!(got, *expected, "{samples:?}");
    }
}

#[test]
fn valid_figures_pass() {
    assert_eq!(check_machine_model(&sample_machine_model(), "m"), Ok(()));
    assert_eq!(check_prediction(&sample_prediction(), "p"), Ok(()));
}

#[test]
fn each_broken_model_rule_names_its_field() {
    type Break = fn(&mut MachineModel);
    let cases: &[(Break, &str)] = &[
        (|m| m.format = "stridelab-wisdom".into(), "m.format"),
        (|m| m.version = 99, "m.format"),
        (|m| m.source = Provenance::Simulated, "m.source"),
        (|m| m.cpu_model.clear(), "m.cpu_model"),
        (|m| m.load_average = Some(-1.0), "m.load_average"),
        (
            |m| m.levels[0].read_bytes_per_s.median = f64::NAN,
            "m.levels[0].read_bytes_per_s",
        ),
        (
            |m| m.levels[0].latency_ns.low = 2.0,
            "m.levels[0].latency_ns",
        ),
        (
            |m| m.memory.write_bytes_per_s = Interval::exact(-1.0),
            "m.memory.write_bytes_per_s",
        ),
        (|m| m.memory.working_set = 0, "m.memory.working_set"),
        (
            |m| {
                let level = m.levels[0].clone();
                m.levels = vec![level; MAX_TIME_MODEL_LEVELS + 1];
            },
            "m.levels",
        ),
    ];
    for (i, (corrupt, field)) in cases.iter().enumerate() {
        let mut m = sample_machine_model();
        corrupt(&mut m);
        match check_machine_model(&m, "m") {
            Err((at, message)) => assert_eq!(&at, field, "case {i}: {message}"),
            Ok(()) => panic!("case {i} ({field}) passed"),
        }
    }
}

#[test]
fn each_broken_prediction_rule_names_its_field() {
    type Break = fn(&mut TimePrediction);
    let cases: &[(Break, &str)] = &[
        (|p| p.source = Provenance::Timed, "p.source"),
        (|p| p.reason.clear(), "p.reason"),
        (
            |p| p.measured_over_model = Some(-2.0),
            "p.measured_over_model",
        ),
        (
            |p| p.measured_over_model = Some(f64::INFINITY),
            "p.measured_over_model",
        ),
        (
            |p| p.bounds.as_mut().unwrap().estimate_ns = -1.0,
            "p.bounds.estimate_ns",
        ),
        (
            |p| p.bounds.as_mut().unwrap().estimate_low_ns = 10.5,
            "p.bounds.estimate_ns",
        ),
        (
            |p| p.bounds.as_mut().unwrap().latency_ns = f64::NAN,
            "p.bounds.latency_ns",
        ),
        (
            |p| p.bounds.as_mut().unwrap().overlapped_ns = 13.0,
            "p.bounds.overlapped_ns",
        ),
        (|p| p.bounds = None, "p.measured_over_model"),
        (
            |p| {
                p.measured_over_model = None;
                p.bounds = None;
            },
            "p.applies",
        ),
        (
            |p| {
                p.traffic = vec![LevelTraffic {
                    level: "L2".into(),
                    priced_as: "L2".into(),
                    loads: 1.0,
                    stores: -1.0,
                    bytes: 64.0,
                    bandwidth_ns: 1.0,
                    latency_ns: 1.0,
                }]
            },
            "p.traffic[0].stores",
        ),
    ];
    for (i, (corrupt, field)) in cases.iter().enumerate() {
        let mut p = sample_prediction();
        corrupt(&mut p);
        match check_prediction(&p, "p") {
            Err((at, message)) => assert_eq!(&at, field, "case {i}: {message}"),
            Ok(()) => panic!("case {i} ({field}) passed"),
        }
    }
}
