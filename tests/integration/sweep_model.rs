//! Geometry sweeps end to end, without timing: a sweep of simulated-only points on three preset
//! geometries, the recorded set model against the simulator at every stride, the document
//! valid on load, and the sweep figures (and the conflict-probe figure they refine) drawn from
//! it: markers where fig12 has strides, a heat map by gcd in fig13.

use std::sync::atomic::AtomicBool;

use stridelab::cache::geometry::Geometry;
use stridelab::harness::suite::PlanLimits;
use stridelab::harness::{RunOptions, Suite, run_suite};
use stridelab::kernels::CATALOGUE_RULES;
use stridelab::report::chart::{Panel, SeriesKind};
use stridelab::report::figures::{Outcome, fig12_sweep_vs_stride, fig13_sweep_vs_gcd};
use stridelab::results::ResultsDocument;
use stridelab::results::validate::validate;

const SUITE: &str = r#"
name = "sweep"
description = "a small simulated-only sweep"

[[point]]
kernel = "conflict"
params = { mode = "thr", reps = 6 }
sweep = { level = "L1d", ways = [2, 4], limit = 40, tail = 3 }
"#;

fn swept(preset: &str) -> ResultsDocument {
    let levels = Geometry::preset(preset).unwrap().data_levels();
    let plan = Suite::parse(SUITE, "sweep.toml")
        .unwrap()
        .plan_on(None, PlanLimits::default(), &levels)
        .unwrap();
    assert_eq!(plan.points.len(), 2 * (40 + 3));
    let options = RunOptions::on(levels, crate::common::planner());
    run_suite(&plan, &options, &AtomicBool::new(false), &mut |_| {}).unwrap()
}

#[test]
fn the_model_predicts_the_simulated_misses_at_every_stride() {
    for preset in ["intel-golden-cove", "amd-zen4", "apple-m1-firestorm"] {
        let doc = swept(preset);
        validate(&doc, &CATALOGUE_RULES).unwrap();
        let mut missing = 0;
        for r in &doc.records {
            let sweep = r.sweep.as_ref().unwrap();
            assert!(!sweep.timed && r.timing.is_none(), "simulated only");
            let sim = r.simulated.as_ref().unwrap();
            let model = r.model.as_ref().unwrap().pattern.as_ref().unwrap();
            let warm_loads = sim.levels[0].loads - sim.levels[0].compulsory;
            for (s, m) in sim.levels.iter().zip(&model.levels) {
                let predicted = m.cyclic_misses_per_access.unwrap() * warm_loads as f64;
                assert_eq!(
                    (s.misses - s.compulsory) as f64,
                    predicted,
                    "{preset} {} stride {} B K={}",
                    s.name,
                    model.stride_bytes,
                    model.count
                );
                // The model's step: every load misses once K > sets used × ways.
                let overflows = model.count > m.sets_used * m.ways;
                assert_eq!(predicted > 0.0, overflows, "{preset} {}", s.name);
                missing += usize::from(overflows && s.name == "L1d");
            }
        }
        assert!(missing >= 2, "{preset}: some strides must conflict");
    }
}

#[test]
fn the_sweep_figures_draw_markers_and_a_heat_map_by_gcd() {
    let doc = swept("amd-zen4");
    // Figure 12: markers where a stride misses, model rings, a rug for the quiet strides; no
    // line joins strides that were not measured.
    let Outcome::Drawn(built) = (fig12_sweep_vs_stride::FIGURE.build)(&doc) else {
        panic!("fig12 omitted");
    };
    let (mut markers, mut rug) = (0, 0);
    for panel in &built.figure.panels {
        let Panel::Lines(lines) = panel else {
            panic!("fig12: line panels only")
        };
        for s in &lines.series {
            match s.kind {
                SeriesKind::Markers | SeriesKind::ModelMarkers => markers += s.points.len(),
                SeriesKind::Rug => rug += s.points.len(),
                other => panic!("fig12 draws {other:?}"),
            }
        }
    }
    assert!(markers > 0 && rug > 0, "markers {markers}, rug {rug}");
    assert!(
        rug < 43,
        "the rug holds only strides where no K misses: {rug}"
    );
    assert!(!built.tables.is_empty());
    // Figure 13: one heat map of the swept level, a cell per (gcd, K), each a miss rate.
    let Outcome::Drawn(built) = (fig13_sweep_vs_gcd::FIGURE.build)(&doc) else {
        panic!("fig13 omitted");
    };
    let [Panel::Heat(heat)] = built.figure.panels.as_slice() else {
        panic!("fig13: one heat panel")
    };
    assert_eq!(
        heat.rows.len(),
        2,
        "one row per K of the two way counts: {:?}",
        heat.rows
    );
    assert!(heat.columns.len() >= 4, "gcd classes: {:?}", heat.columns);
    for row in &heat.values {
        assert_eq!(row.len(), heat.columns.len());
        for v in row {
            let v = v.expect("every (gcd, K) of the sweep has strides");
            assert!((0.0..=1.0).contains(&v), "{v}");
        }
    }
    // The model marks cells where it predicts misses, and the largest gcd (one set) misses.
    assert!(!heat.marks.is_empty());
    let last = heat.columns.len() - 1;
    assert!(heat.values.iter().all(|row| row[last].unwrap() > 0.5));
    assert!(!built.tables.is_empty());
    // A file without a sweep omits both.
    let mut plain = doc.clone();
    plain.records.iter_mut().for_each(|r| r.sweep = None);
    assert!(matches!(
        (fig13_sweep_vs_gcd::FIGURE.build)(&plain),
        Outcome::Omitted { .. }
    ));
}

const PRESET_SUITE: &str = r#"
name = "sweep-presets"
description = "the run's L1d beside another machine's"

[[point]]
kernel = "conflict"
params = { mode = "thr", reps = 6 }
sweep = { level = "L1d", ways = [2], limit = 16 }

[[point]]
kernel = "conflict"
params = { mode = "thr", reps = 6 }
sweep = { level = "L1d", preset = "apple-m1-firestorm", ways = [2, 4], limit = 24 }
"#;

#[test]
fn a_preset_sweep_is_simulated_on_the_presets_geometry_beside_the_runs() {
    let levels = Geometry::preset("amd-zen4").unwrap().data_levels();
    let plan = Suite::parse(PRESET_SUITE, "sweep.toml")
        .unwrap()
        .plan_on(None, PlanLimits::default(), &levels)
        .unwrap();
    assert_eq!(plan.points.len(), 16 + 2 * 24);
    let options = RunOptions::on(levels, crate::common::planner());
    let doc = run_suite(&plan, &options, &AtomicBool::new(false), &mut |_| {}).unwrap();
    validate(&doc, &CATALOGUE_RULES).unwrap();
    let (on_preset, on_run): (Vec<_>, Vec<_>) = doc
        .records
        .iter()
        .partition(|r| r.sweep.as_ref().unwrap().preset.is_some());
    assert_eq!((on_run.len(), on_preset.len()), (16, 48));
    // Apple's L1d: 128 KiB 8-way with 128 B lines = 128 sets; the run's (Zen 4): 64 sets.
    for (records, sets, line) in [(&on_preset, 128, 128), (&on_run, 64, 64)] {
        for r in records.iter() {
            let l1 = &r.simulated.as_ref().unwrap().levels[0];
            assert_eq!((l1.sets, l1.line), (sets, line));
            let model = &r.model.as_ref().unwrap().pattern.as_ref().unwrap().levels[0];
            assert_eq!(model.sets, sets);
        }
    }
    // Figures keep the run's geometry for everything else, and draw the preset's panel apart.
    let run_levels = stridelab::report::data::data_levels(&doc);
    assert_eq!(run_levels[0].sets, 64);
    let Outcome::Drawn(built) = (fig13_sweep_vs_gcd::FIGURE.build)(&doc) else {
        panic!("fig13 omitted");
    };
    let titles: Vec<&str> = built
        .figure
        .panels
        .iter()
        .map(|p| match p {
            Panel::Heat(h) => h.title.as_str(),
            _ => panic!("heat panels only"),
        })
        .collect();
    assert_eq!(titles.len(), 2, "{titles:?}");
    assert!(titles[0].starts_with("L1d: 64 sets"), "{titles:?}");
    assert!(
        titles[1].starts_with("L1d of apple-m1-firestorm (preset): 128 sets"),
        "{titles:?}"
    );
    assert!(built.figure.provenance.contains("apple-m1-firestorm"));
}

#[test]
fn a_timed_or_unknown_preset_sweep_is_refused_when_planned() {
    let levels = Geometry::preset("amd-zen4").unwrap().data_levels();
    for (sweep, wanted) in [
        (
            r#"{ level = "L1d", preset = "amd-zen4", ways = [2], timed = 4 }"#,
            "timed = 0",
        ),
        (
            r#"{ level = "L1d", preset = "no-such-cpu", ways = [2] }"#,
            "no-such-cpu",
        ),
        (
            r#"{ level = "L3", preset = "apple-m1-firestorm", ways = [2] }"#,
            "L3",
        ),
    ] {
        let text = format!(
            "name = \"s\"\ndescription = \"d\"\n[[point]]\nkernel = \"conflict\"\n\
             params = {{ mode = \"thr\", reps = 6 }}\nsweep = {sweep}\n"
        );
        let err = Suite::parse(&text, "s.toml")
            .unwrap()
            .plan_on(None, PlanLimits::default(), &levels)
            .unwrap_err()
            .to_string();
        assert!(err.contains(wanted), "{sweep}: {err}");
    }
}

/// Figure 1 draws the ±1-controlled conflict probes as markers (the strides are categories:
/// nothing lies between them) and leaves out a level where no probe misses after its first
/// pass, with a note instead of a panel of zeros.
#[test]
fn the_probe_figure_has_markers_only_and_no_panel_of_zeros() {
    let fixture =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/results_small.json");
    let doc = ResultsDocument::read(&fixture, &CATALOGUE_RULES).unwrap();
    let figure = &stridelab::report::figures::fig01_miss_rate_vs_stride::FIGURE;
    let Outcome::Drawn(built) = (figure.build)(&doc) else {
        panic!("fig01 omitted");
    };
    // The fixture's probes miss only in the L1d (stride 512 × 8 B, K = 16 > 8 ways).
    assert_eq!(built.figure.panels.len(), 1);
    let Panel::Lines(lines) = &built.figure.panels[0] else {
        panic!("a line panel")
    };
    assert!(lines.title.starts_with("L1d"), "{}", lines.title);
    assert!(
        lines
            .series
            .iter()
            .all(|s| matches!(s.kind, SeriesKind::Markers | SeriesKind::ModelMarkers))
    );
    assert!(
        built
            .notes
            .iter()
            .any(|n| n.starts_with("L2: no probe misses")),
        "{:?}",
        built.notes
    );
}
