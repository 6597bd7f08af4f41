//! The built-in suites are valid data: every point resolves against the catalogue, and the
//! quick suite covers every kernel family.

use std::collections::BTreeSet;

use stridelab::harness::Suite;
use stridelab::harness::suite::BUILTIN_SUITES;
use stridelab::kernels::spec::Family;

#[test]
fn every_builtin_suite_plans_without_errors() {
    for (name, _) in BUILTIN_SUITES {
        let suite = Suite::builtin(name).expect("built-in");
        let plan = suite
            .plan(None, &crate::common::detected_levels())
            .unwrap_or_else(|e| panic!("suite {name}: {e}"));
        assert!(!plan.points.is_empty(), "{name}");
        assert_eq!(plan.source, "builtin");
    }
}

#[test]
fn the_quick_suite_covers_every_family_and_sweeps_threads() {
    let plan = Suite::builtin("quick")
        .unwrap()
        .plan(None, &crate::common::detected_levels())
        .unwrap();
    let families: BTreeSet<Family> = plan.points.iter().map(|p| p.spec.family).collect();
    for family in [
        Family::Traverse,
        Family::Stride,
        Family::Conflict,
        Family::View,
        Family::Transpose,
        Family::Blocked,
        Family::Latency,
        Family::Reference,
        Family::Tensor,
    ] {
        assert!(families.contains(&family), "quick lacks {family:?}");
    }
    let cpus = stridelab::harness::measure::pin::cpu_count();
    let max_threads = plan.points.iter().map(|p| p.threads).max().unwrap();
    assert_eq!(
        max_threads, cpus,
        "bandwidth vs threads sweeps up to every CPU"
    );
    // Conflict probes always come with their ±1 controls (geometry sweeps walk every whole
    // line instead).
    let strides: BTreeSet<u64> = plan
        .points
        .iter()
        .filter(|p| p.spec.name == "conflict" && p.sweep.is_none())
        .filter_map(|p| match p.params.get("stride") {
            Some(stridelab::kernels::spec::ParamValue::Int(s)) => Some(*s),
            _ => None,
        })
        .collect();
    for s in &strides {
        if s.is_power_of_two() {
            assert!(
                strides.contains(&(s - 1)) && strides.contains(&(s + 1)),
                "{s}"
            );
        }
    }
}

#[test]
fn the_quick_suite_sweeps_l1_strides_from_the_geometry() {
    use stridelab::cache::geometry::{CacheKind, CacheLevel, GeometrySource};
    use stridelab::harness::suite::PlanLimits;
    let level = |name: &str, kind, size, ways| {
        CacheLevel::new(name, kind, size, ways, 64, GeometrySource::Override).unwrap()
    };
    for (l1_ways, l1_size) in [(12, 48 << 10), (8, 32 << 10)] {
        let levels = [
            level("L1d", CacheKind::Data, l1_size, l1_ways),
            level("L2", CacheKind::Unified, 1 << 20, 16),
        ];
        let plan = Suite::builtin("quick")
            .unwrap()
            .plan_on(None, PlanLimits::default(), &levels)
            .unwrap();
        let l1: Vec<_> = plan
            .points
            .iter()
            .filter(|p| {
                p.sweep
                    .as_ref()
                    .is_some_and(|s| s.level == "L1d" && s.preset.is_none())
            })
            .collect();
        // 128 whole-line strides (64 sets) and 8 beyond, each with K = 2, 4 and 8 × ways.
        assert_eq!(l1.len(), 3 * (128 + 8));
        let timed = l1.iter().filter(|p| p.timed()).count() / 3;
        assert!(timed >= 32, "{timed} timed strides");
        let count = |p: &stridelab::harness::suite::PlannedPoint| p.params.get("count").cloned();
        assert_eq!(
            count(l1[0]),
            Some(stridelab::kernels::spec::ParamValue::Int(2 * l1_ways))
        );
        let l2 = plan
            .points
            .iter()
            .filter(|p| p.sweep.as_ref().is_some_and(|s| s.level == "L2"));
        assert_eq!(l2.clone().count(), 2 * (256 + 8));
        assert!(l2.clone().all(|p| !p.timed()));
        // Another machine's L1d beside it (128 sets): simulated only, on the preset's levels.
        let preset: Vec<_> = plan
            .points
            .iter()
            .filter(|p| p.sweep.as_ref().is_some_and(|s| s.preset.is_some()))
            .collect();
        assert_eq!(preset.len(), 3 * (256 + 8));
        assert!(
            preset
                .iter()
                .all(|p| !p.timed() && p.levels.as_ref().is_some_and(|l| l[0].sets == 128))
        );
    }
}

#[test]
fn a_suite_with_a_bad_parameter_names_its_line_and_rule() {
    let text = "name = \"bad\"\n\n[[point]]\nkernel = \"row-sum\"\nparams = { rows = 4, cols = 4 }\n\n[[point]]\nkernel = \"col-sum\"\nparams = { rows = 0, cols = 4 }\n";
    let err = Suite::parse(text, "bad.toml")
        .unwrap()
        .plan(None, &crate::common::detected_levels())
        .unwrap_err()
        .to_string();
    assert!(err.contains("line 8"), "{err}");
    assert!(err.contains("rows"), "{err}");
}

#[test]
fn an_unknown_kernel_names_its_line() {
    let text = "name = \"bad\"\n[[point]]\nkernel = \"row-summ\"\n";
    let err = Suite::parse(text, "bad.toml")
        .unwrap()
        .plan(None, &crate::common::detected_levels())
        .unwrap_err()
        .to_string();
    assert!(err.contains("line 3") && err.contains("row-summ"), "{err}");
}

#[test]
fn a_point_may_raise_its_own_access_limit_within_a_bound() {
    let point = |extra: &str| {
        format!(
            "name = \"m\"\n[[point]]\nkernel = \"matmul\"\nparams = {{ n = 512, order = \"ijk\" }}\n{extra}"
        )
    };
    let plan = |text: String| {
        Suite::parse(&text, "m.toml")
            .unwrap()
            .plan(None, &crate::common::detected_levels())
    };
    let err = plan(point("")).unwrap_err().to_string();
    assert!(err.contains("--max-accesses"), "{err}");
    assert_eq!(
        plan(point("max_accesses = 1073741824"))
            .unwrap()
            .points
            .len(),
        1
    );
    let err = plan(point("max_accesses = 4294967296"))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("line 3") && err.contains("largest a point may declare"),
        "{err}"
    );
    // The full suite reaches n = 512 and 513 with every order.
    let full = Suite::builtin("full")
        .unwrap()
        .plan(None, &crate::common::detected_levels())
        .unwrap();
    for n in [512, 513] {
        let orders = full
            .points
            .iter()
            .filter(|p| p.spec.name == "matmul")
            .filter(|p| p.params.get("n") == Some(&stridelab::kernels::spec::ParamValue::Int(n)))
            .count();
        assert_eq!(orders, 7, "matmul n={n}");
    }
}

/// The gate's deterministic track must give the same counts on every machine; the copy
/// engine's replayed stream follows the host's tuning, so no gate point may use it.
#[test]
fn the_gate_suite_simulates_the_same_stream_on_every_machine() {
    let plan = Suite::builtin("gate")
        .unwrap()
        .plan(None, &crate::common::detected_levels())
        .unwrap();
    for point in &plan.points {
        let note = stridelab::kernels::simulation_note(point.spec, &point.params);
        assert_eq!(
            note, None,
            "gate point {} {:?}",
            point.spec.name, point.params
        );
    }
}

#[test]
fn the_quick_and_full_chases_reach_past_twice_the_llc_of_the_geometry() {
    use stridelab::cache::geometry::{CacheKind, CacheLevel, GeometrySource};
    use stridelab::harness::suite::PlanLimits;
    use stridelab::kernels::spec::ParamValue;
    let level = |name: &str, kind, size: u64, ways| {
        CacheLevel::new(name, kind, size, ways, 64, GeometrySource::Override).unwrap()
    };
    // Intel-like (48 KiB 12-way L1d, a 105 MiB L3) and AMD-like (32 KiB 8-way, 32 MiB L3).
    let machines = [
        [
            level("L1d", CacheKind::Data, 48 << 10, 12),
            level("L2", CacheKind::Unified, 2 << 20, 16),
            level("L3", CacheKind::Unified, 105 << 20, 15),
        ],
        [
            level("L1d", CacheKind::Data, 32 << 10, 8),
            level("L2", CacheKind::Unified, 1 << 20, 8),
            level("L3", CacheKind::Unified, 32 << 20, 16),
        ],
    ];
    for levels in &machines {
        let llc = levels[2].size;
        for suite in ["quick", "full"] {
            let plan = Suite::builtin(suite)
                .unwrap()
                .plan_on(None, PlanLimits::default(), levels)
                .unwrap();
            let mut sizes: Vec<i64> = plan
                .points
                .iter()
                .filter(|p| p.spec.name == "chase")
                .filter_map(|p| match p.params.get("bytes") {
                    Some(ParamValue::Int(b)) => Some(*b as i64),
                    _ => None,
                })
                .collect();
            sizes.sort_unstable();
            let (first, last) = (sizes[0] as u64, *sizes.last().unwrap() as u64);
            assert!(first <= 16 << 10, "{suite}: starts at {first}");
            assert!(last >= 2 * llc, "{suite}: {last} B is short of 2 × {llc} B");
            assert!(last < 16 * llc, "{suite}: {last} B is far past the LLC");
        }
    }
}
