//! Unit tests of `validate.rs`, kept beside it so the module itself stays short.

use super::*;
use crate::results::schema::tests::{ROW_SUM_LIMIT, RowSumRules, sample_document};
use crate::results::test_docs::simulated_l1;
use crate::results::time_model::tests::{sample_machine_model, sample_prediction};
use crate::vocab::ParamValue;

fn sweep(level: &str, timed: bool) -> crate::results::SweepInfo {
    crate::results::SweepInfo {
        level: level.into(),
        timed,
        preset: None,
    }
}

fn preset_sweep(preset: &str, timed: bool) -> crate::results::SweepInfo {
    crate::results::SweepInfo {
        preset: Some(preset.into()),
        ..sweep("L1d", timed)
    }
}

#[test]
fn a_simulated_only_sweep_point_without_timing_is_valid() {
    let mut doc = valid();
    doc.records[0].sweep = Some(sweep("L1d", true));
    assert!(validate(&doc, &RowSumRules).is_ok());
    doc.records[0].timing = None;
    doc.records[0].sweep = Some(sweep("L1d", false));
    assert!(validate(&doc, &RowSumRules).is_ok());
    doc.records[0].sweep = Some(preset_sweep("apple-m1-firestorm", false));
    assert!(validate(&doc, &RowSumRules).is_ok());
}

/// The sample document with full `row-sum` parameters and a consistent simulation.
fn valid() -> ResultsDocument {
    let mut doc = sample_document();
    let record = &mut doc.records[0];
    for (name, value) in [("cols", 1024), ("ld", 1024), ("deopt", 0)] {
        record.params.insert(name.into(), ParamValue::Int(value));
    }
    record.simulated = Some(simulated_l1(13));
    doc
}

#[test]
fn a_consistent_document_passes() {
    assert_eq!(validate(&valid(), &RowSumRules), Ok(()));
    let mut with_model = valid();
    with_model.records[0].time_model = Some(sample_prediction());
    with_model.time_model_probes = Some(sample_machine_model());
    assert_eq!(validate(&with_model, &RowSumRules), Ok(()));
}

fn precision(doc: &mut ResultsDocument) -> &mut Precision {
    let timing = doc.records[0].timing.as_mut().unwrap();
    timing.precision.as_mut().unwrap()
}

fn drift(rank_correlation: f64, last_third_median: f64) -> crate::results::Drift {
    crate::results::Drift {
        rank_correlation,
        first_third_median: 1.0,
        last_third_median,
    }
}

#[test]
fn a_precision_verdict_backed_by_its_numbers_passes_and_an_old_timing_has_none() {
    let mut doc = valid();
    {
        let p = precision(&mut doc);
        p.outliers = Some(crate::results::Outliers { mild: 1, severe: 1 });
        p.drift = Some(drift(-0.9, 0.8));
        p.warnings = vec![PrecisionWarning::Outliers, PrecisionWarning::Drift];
    }
    assert_eq!(validate(&doc, &RowSumRules), Ok(()));
    // The sample's CI is 0 wide: a target below it cannot be missed, and so is not.
    precision(&mut doc).warnings = vec![PrecisionWarning::CiTargetMissed];
    assert!(validate(&doc, &RowSumRules).is_err());
    doc.records[0].timing.as_mut().unwrap().precision = None;
    assert_eq!(validate(&doc, &RowSumRules), Ok(()));
}

#[test]
fn table_of_broken_rules_names_the_field() {
    type Break = fn(&mut ResultsDocument);
    let cases: &[(Break, &str)] = &[
        (
            |d| {
                d.records[0]
                    .timing
                    .as_mut()
                    .unwrap()
                    .samples_ns_per_run
                    .clear()
            },
            "records[0].timing.samples_ns_per_run",
        ),
        (
            |d| d.records[0].timing.as_mut().unwrap().samples_ns_per_run[1] = f64::NAN,
            "records[0].timing.samples_ns_per_run[1]",
        ),
        (
            |d| d.records[0].timing.as_mut().unwrap().samples_ns_per_run[2] = 0.0,
            "records[0].timing.samples_ns_per_run[2]",
        ),
        (
            |d| d.records[0].timing.as_mut().unwrap().ns_per_run.n = 0,
            "records[0].timing.ns_per_run.n",
        ),
        (
            |d| d.records[0].timing.as_mut().unwrap().ns_per_run.median = -5.0,
            "records[0].timing.ns_per_run.median",
        ),
        (
            |d| d.records[0].timing.as_mut().unwrap().ns_per_run.ci_low = 2.0,
            "records[0].timing.ns_per_run.ci_low",
        ),
        (
            |d| d.records[0].timing.as_mut().unwrap().runs_per_sample = 0,
            "records[0].timing.runs_per_sample",
        ),
        (
            |d| d.records[0].timing.as_mut().unwrap().gb_per_s_ci = Some((9.0, 1e308)),
            "records[0].timing.gb_per_s_ci",
        ),
        (
            |d| d.records[0].timing.as_mut().unwrap().gb_per_s = Some(f64::INFINITY),
            "records[0].timing.gb_per_s",
        ),
        (
            |d| precision(d).target_relative_ci = 0.0,
            "records[0].timing.precision.target_relative_ci",
        ),
        (
            |d| precision(d).outliers = Some(crate::results::Outliers { mild: 3, severe: 1 }),
            "records[0].timing.precision.outliers",
        ),
        (
            |d| precision(d).drift = Some(drift(1.5, 1.0)),
            "records[0].timing.precision.drift.rank_correlation",
        ),
        (
            |d| precision(d).drift = Some(drift(0.5, -1.0)),
            "records[0].timing.precision.drift.last_third_median",
        ),
        (
            |d| precision(d).warnings = vec![PrecisionWarning::Outliers],
            "records[0].timing.precision.warnings",
        ),
        (
            |d| precision(d).warnings = vec![PrecisionWarning::CiTargetMissed],
            "records[0].timing.precision.warnings",
        ),
        (
            |d| {
                let p = precision(d);
                p.drift = Some(drift(0.9, 2.0));
                p.warnings = vec![PrecisionWarning::Drift, PrecisionWarning::Drift];
            },
            "records[0].timing.precision.warnings",
        ),
        (
            |d| {
                let samples = vec![1.0; MAX_SAMPLES_PER_POINT + 1];
                d.records[0].timing.as_mut().unwrap().samples_ns_per_run = samples;
            },
            "records[0].timing.samples_ns_per_run",
        ),
        (
            |d| {
                d.records[0]
                    .params
                    .insert("rows".into(), ParamValue::Int(ROW_SUM_LIMIT + 1));
            },
            "records[0].params",
        ),
        (|d| d.records[0].kernel = "nope".into(), "records[0].kernel"),
        (
            |d| d.records[0].sweep = Some(sweep("L1d", false)),
            "records[0].sweep.timed",
        ),
        (
            |d| d.records[0].sweep = Some(sweep("", true)),
            "records[0].sweep.level",
        ),
        (
            |d| d.records[0].sweep = Some(sweep(&"L".repeat(4096), true)),
            "records[0].sweep.level",
        ),
        (
            |d| d.records[0].sweep = Some(sweep("L1\u{0}", true)),
            "records[0].sweep.level",
        ),
        (
            |d| d.records[0].sweep = Some(preset_sweep("amd-zen4", true)),
            "records[0].sweep.timed",
        ),
        (
            |d| {
                d.records[0].timing = None;
                d.records[0].sweep = Some(preset_sweep(&"p".repeat(65), false));
            },
            "records[0].sweep.preset",
        ),
        (|d| d.records[0].threads = 0, "records[0].threads"),
        (|d| d.records[0].index = 5, "records[0].index"),
        (
            |d| d.records[0].simulated.as_mut().unwrap().levels[0].sets = 0,
            "records[0].simulated.levels[0]",
        ),
        (
            |d| d.records[0].simulated.as_mut().unwrap().levels[0].store_misses = 1,
            "records[0].simulated.levels[0].misses",
        ),
        (
            |d| d.records[0].simulated.as_mut().unwrap().levels[0].miss_rate = f64::NAN,
            "records[0].simulated.levels[0].miss_rate",
        ),
        (
            |d| {
                d.records[0]
                    .simulated
                    .as_mut()
                    .unwrap()
                    .scope
                    .simulated_accesses = 101
            },
            "records[0].simulated.scope.simulated_accesses",
        ),
        (
            |d| d.records[0].simulated.as_mut().unwrap().scope.cut = Some(SimulationCut::AccessCap),
            "records[0].simulated.scope.cut",
        ),
        (
            |d| d.records[0].simulated.as_mut().unwrap().scope.kind = "prefix".into(),
            "records[0].simulated.scope.kind",
        ),
        (
            |d| {
                d.info = serde_json::json!({"caches": [{"name": "L1d", "level": 1,
                "kind": "data", "size": 49152, "ways": 12, "line": 64, "sets": 0,
                "shared_cpus": null, "source": "sysfs"}]})
            },
            "info.caches[0]",
        ),
        (
            |d| d.info = serde_json::json!({"gate": {"preset": 7}}),
            "info.gate.preset",
        ),
        (|d| d.method.confidence = f64::NAN, "method.confidence"),
        (
            |d| {
                let mut p = sample_prediction();
                p.measured_over_model = Some(-1.0);
                d.records[0].time_model = Some(p);
            },
            "records[0].time_model.measured_over_model",
        ),
        (
            |d| {
                let mut p = sample_prediction();
                p.bounds.as_mut().unwrap().estimate_ns = f64::NAN;
                d.records[0].time_model = Some(p);
            },
            "records[0].time_model.bounds.estimate_ns",
        ),
        (
            |d| {
                let mut m = sample_machine_model();
                m.memory.latency_ns.median = f64::INFINITY;
                d.time_model_probes = Some(m);
            },
            "time_model_probes.memory.latency_ns",
        ),
    ];
    for (i, (corrupt, field)) in cases.iter().enumerate() {
        let mut doc = valid();
        corrupt(&mut doc);
        match validate(&doc, &RowSumRules) {
            Err(e) => assert_eq!(&e.field, field, "case {i}: {}", e.message),
            Ok(()) => panic!("case {i} ({field}) passed"),
        }
    }
}

#[test]
fn legacy_cuts_come_from_the_counts_not_the_note() {
    let mut sim = valid().records[0].simulated.clone().unwrap();
    sim.scope.cut = None;
    sim.scope.note = Some("the model's time budget ran out".into());
    assert_eq!(legacy_cut(&sim, 1000), SimulationCut::None);
    sim.scope.run_accesses = Some(5000);
    sim.scope.kind = "prefix".into();
    sim.scope.simulated_accesses = 1000;
    assert_eq!(legacy_cut(&sim, 1000), SimulationCut::AccessCap);
    sim.scope.note = None;
    sim.scope.simulated_accesses = 700;
    assert_eq!(legacy_cut(&sim, 1000), SimulationCut::TimeBudget);
}
