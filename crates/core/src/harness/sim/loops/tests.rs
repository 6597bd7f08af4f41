//! The loop simulation against its own totals, the built-in kernels and the dtype list.

use super::*;
use crate::cache::geometry::parse_cache_override;
use crate::harness::sim::run::{DEFAULT_MAX_ACCESSES, SimRequest, simulate_point};

/// A small hierarchy (16 and 64 sets) where a 128-row f64 column conflicts on L2.
fn small() -> ChosenGeometry {
    let mut geometry = ChosenGeometry::preset("design-vm").unwrap();
    geometry.levels = ["L1d=4K,4,64", "L2=32K,8,64"]
        .iter()
        .map(|t| parse_cache_override(t).unwrap())
        .collect();
    geometry
}

fn simulate(
    loop_text: &str,
    arrays: &[&str],
    geometry: &ChosenGeometry,
) -> Result<LoopReport, LoopSimError> {
    let arrays: Vec<String> = arrays.iter().map(|a| a.to_string()).collect();
    let nest = LoopNest::parse(loop_text, &arrays)?;
    simulate_nest(&LoopSimRequest {
        nest: &nest,
        geometry,
        policy: Policy::LRU,
        warm: false,
        max_accesses: DEFAULT_MAX_ACCESSES,
        max_sim_memory: 1 << 30,
        tlb: None,
    })
}

const TRANSPOSE_ADD: &str = "for i in 0..128: for j in 0..128: a[j, i] += b[i, j]";

#[test]
fn per_reference_counts_add_up_to_the_nest() {
    for policy_free_nest in [
        TRANSPOSE_ADD,
        "for i in 0..64: for j in i..128 step 3: c[i, j] = a[j, i] + b[i, j] * a[i, j]; s += b[j, i]",
    ] {
        let report = simulate(
            policy_free_nest,
            &[
                "a = f64[128, 128]",
                "b = f64[128, 128]",
                "c = f32[64, 128] ld=130",
            ],
            &small(),
        )
        .unwrap();
        for (k, level) in report.levels.iter().enumerate() {
            let sum = |f: fn(&ReferenceLevel) -> u64| -> u64 {
                report.references.iter().map(|r| f(&r.levels[k])).sum()
            };
            let c = &level.counts;
            assert_eq!(sum(|r| r.loads), c.loads, "{policy_free_nest}");
            assert_eq!(sum(|r| r.stores), c.stores);
            assert_eq!(sum(|r| r.misses), c.misses);
            assert_eq!(sum(|r| r.compulsory), c.compulsory);
            assert_eq!(sum(|r| r.capacity), c.capacity);
            assert_eq!(sum(|r| r.conflict), c.conflict);
        }
        assert_eq!(
            report.accesses,
            report.levels[0].counts.loads + report.levels[0].counts.stores
        );
    }
}

#[test]
fn the_column_walk_takes_the_conflicts_and_padding_removes_them() {
    let report = simulate(
        TRANSPOSE_ADD,
        &["a = f64[128, 128]", "b = f64[128, 128]"],
        &small(),
    )
    .unwrap();
    assert_eq!(report.accesses, 3 * 128 * 128);
    let l2 = 1;
    let column = &report.references[1];
    assert_eq!(column.reference, "a[j, i]");
    assert!(column.levels[l2].conflict > 0);
    assert!(column.levels[l2].conflict > report.references[0].levels[l2].conflict);
    // 1,024 B per j = 16 lines: L2's 64 sets / gcd(16, 64) = 4 sets.
    assert_eq!(column.stride_bytes, 1024);
    assert!(
        column.stride.contains("walks a column"),
        "{}",
        column.stride
    );
    assert!(
        column.model[l2].contains("uses 4 of 64 sets"),
        "{:?}",
        column.model
    );
    assert!(
        column.levels[l2].conflict_sets > 0,
        "{:?}",
        column.levels[l2]
    );
    assert!(
        report.findings.iter().any(|f| f.starts_with("L2: a[j, i]")),
        "{:?}",
        report.findings
    );
    let padding = report.padding.iter().find(|p| p.array == "a").unwrap();
    let best = &padding.candidates[padding.best.unwrap()];
    assert!(
        best.conflict[l2] * 4 < padding.conflict_before[l2],
        "{padding:?}"
    );
    // The advice is what a re-run with that leading dimension gives.
    let padded = simulate(
        TRANSPOSE_ADD,
        &[
            &format!("a = f64[128, 128] ld={}", best.ld),
            "b = f64[128, 128]",
        ],
        &small(),
    )
    .unwrap();
    let conflict: Vec<u64> = padded.levels.iter().map(|l| l.counts.conflict).collect();
    assert_eq!(conflict, best.conflict);
}

#[test]
fn a_loop_col_sum_misses_like_the_built_in_kernel() {
    for (rows, cols, ld) in [(256, 64, 64), (200, 48, 52), (128, 128, 136)] {
        let words = vec![
            format!("rows={rows}"),
            format!("cols={cols}"),
            format!("ld={ld}"),
        ];
        let geometry = small();
        let kernel = simulate_point(&SimRequest {
            kernel: "col-sum",
            words: &words,
            geometry: &geometry,
            policy: Policy::LRU,
            warm: false,
            max_accesses: DEFAULT_MAX_ACCESSES,
            max_sim_memory: 1 << 30,
            copies: crate::kernels::copy_planner::planner_for_tests(),
            tlb: None,
            prefetch: None,
        })
        .unwrap();
        let report = simulate(
            &format!("for j in 0..{cols}: for i in 0..{rows}: s += a[i, j]"),
            &[&format!("a = f64[{rows}, {cols}] ld={ld}")],
            &geometry,
        )
        .unwrap();
        for (ours, theirs) in report.levels.iter().zip(&kernel.levels) {
            assert_eq!(
                ours.counts, theirs.counts,
                "rows={rows} cols={cols} ld={ld}"
            );
        }
    }
}

#[test]
fn work_beyond_the_budget_is_refused_before_simulating() {
    let arrays = vec!["a = f64[1024, 1024]".to_string()];
    let nest =
        LoopNest::parse("for i in 0..1024: for j in 0..1024: read a[i, j]", &arrays).unwrap();
    let geometry = small();
    let request = LoopSimRequest {
        nest: &nest,
        geometry: &geometry,
        policy: Policy::LRU,
        warm: true,
        max_accesses: 1 << 20,
        max_sim_memory: 1 << 30,
        tlb: None,
    };
    let err = simulate_nest(&request).unwrap_err();
    assert!(
        matches!(err, LoopSimError::Nest(LoopError::TooManyAccesses { .. })),
        "{err}"
    );
}

#[test]
fn padding_candidates_are_element_and_line_steps() {
    assert_eq!(padding_candidates(1024, 8, 64), [1025, 1032, 1040, 1056]);
    assert_eq!(padding_candidates(1000, 8, 64), [1001, 1008, 1016, 1032]);
    assert_eq!(padding_candidates(10, 64, 64), [11, 12, 14]);
}

#[test]
fn the_loop_language_knows_the_dtypes_layout_knows() {
    use crate::explain::cache::Dtype;
    let names: Vec<&str> = crate::layout::loops::DTYPES
        .iter()
        .map(|(n, _)| *n)
        .collect();
    assert_eq!(names.join(", "), Dtype::NAMES);
    for &(name, size) in crate::layout::loops::DTYPES {
        assert_eq!(name.parse::<Dtype>().unwrap().itemsize(), size, "{name}");
    }
}
