//! Geometry sweeps end to end, without timing: a sweep of simulated-only points on two preset
//! geometries, the recorded set model against the simulator at every stride, the document
//! valid on load, and the sweep figures drawn from it with markers only.

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
    let options = RunOptions {
        cache_levels: levels,
        ..RunOptions::default()
    };
    run_suite(&plan, &options, &AtomicBool::new(false), &mut |_| {}).unwrap()
}

#[test]
fn the_model_predicts_the_simulated_misses_at_every_stride() {
    for preset in ["intel-golden-cove", "amd-zen4"] {
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
fn the_sweep_figures_draw_markers_only() {
    let doc = swept("amd-zen4");
    for figure in [&fig12_sweep_vs_stride::FIGURE, &fig13_sweep_vs_gcd::FIGURE] {
        let Outcome::Drawn(built) = (figure.build)(&doc) else {
            panic!("{} omitted", figure.id);
        };
        let mut markers = 0;
        for panel in &built.figure.panels {
            let Panel::Lines(lines) = panel else {
                panic!("line panels only")
            };
            for s in &lines.series {
                assert!(matches!(
                    s.kind,
                    SeriesKind::Markers | SeriesKind::ModelMarkers
                ));
                markers += s.points.len();
            }
        }
        // Two K per stride, each simulated and modelled.
        assert_eq!(markers, 4 * 43, "{}", figure.id);
        assert!(!built.tables.is_empty());
    }
    // A file without a sweep omits both.
    let mut plain = doc.clone();
    plain.records.iter_mut().for_each(|r| r.sweep = None);
    assert!(matches!(
        (fig13_sweep_vs_gcd::FIGURE.build)(&plain),
        Outcome::Omitted { .. }
    ));
}
