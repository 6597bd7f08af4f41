//! The tensor kernels' simulated streams (`Instance::simulate`) against valgrind's cachegrind
//! running an independent C re-implementation of the same orders
//! (`tests/fixtures/tensor_orders.c`): `channel-sum` (f32) and `stencil3x3` in both layouts,
//! `to-nhwc`'s naive variants in f64 and f32, `jagged` (rows in allocation order) in row and
//! column order. Same geometry as
//! `kernels_cachegrind.rs` (the `design-vm` preset's L1d and L2 as LL), cold start. Misses
//! agree within `common::cachegrind::default_tolerance`; accesses as in `kernels_cachegrind.rs`:
//! cachegrind also counts the C function's stack traffic (saved registers, spills of loop
//! counters), which always hits D1, so it may count up to 2% + 12 more, never fewer.
//!
//! The C jagged rows sit where the simulator's allocator model puts them (16 bytes into
//! consecutive chunks of one pitch), so this checks the order and the pointer-table loads,
//! not the allocator. Skips with a note when valgrind or gcc is missing.

use crate::common;

use common::cachegrind::{
    compile_fixture, default_tolerance, gcc_available, kernel_rows_that_disagree, run_cachegrind,
    simulate_kernel, valgrind_available, words,
};
use stridelab::cache::geometry::Geometry;
use stridelab::cache::sim::LevelStats;
use stridelab::kernels::families::jagged::Jagged;

/// The kernel's stream through a cold cachegrind-like D1 + LL.
fn simulate(
    kernel: &str,
    params: &str,
    d1: &stridelab::cache::geometry::CacheLevel,
    ll: &stridelab::cache::geometry::CacheLevel,
) -> (LevelStats, LevelStats) {
    simulate_kernel(kernel, &words(params), d1, ll)
}

/// Stack traffic cachegrind counts besides the element accesses (see the module doc).
const STACK_SLACK: (f64, u64) = (0.02, 12);

fn pitch(rows: usize, cols: usize) -> u64 {
    let shape = Jagged {
        rows,
        cols,
        column: false,
        flat: false,
        shuffle: false,
    };
    shape.row_pitch()
}

#[test]
fn tensor_kernels_match_cachegrind() {
    if !valgrind_available() || !gcc_available() {
        return;
    }
    let preset = Geometry::preset("design-vm").unwrap();
    let (d1, ll) = (preset.level("L1d").unwrap(), preset.level("L2").unwrap());
    let fixture = compile_fixture(
        "tensor_orders.c",
        &["-O2", "-fno-tree-loop-distribute-patterns"],
    );
    // (kernel, catalogue parameters, C command, C function): each C function once per run.
    let mut runs: Vec<Vec<(&str, String, String, &str)>> = Vec::new();
    for (nhwc, layout) in [(0, "nchw"), (1, "nhwc")] {
        let (n, c, h, w) = (2, 48, 20, 20);
        let dims = format!("n={n} c={c} h={h} w={w} layout={layout}");
        let c_dims = format!("{nhwc} {n} {c} {h} {w}");
        runs.push(vec![
            (
                "channel-sum",
                format!("{dims} dtype=f32"),
                format!("channel-sum {c_dims}"),
                "channel_sum",
            ),
            (
                "stencil3x3",
                dims.clone(),
                format!("stencil3x3 {c_dims}"),
                "stencil3x3",
            ),
        ]);
    }
    // A pixel's 48 channels are 20·20 elements apart in the source: beyond L1 in f64.
    let conversions = [
        ("f64", "to_nhwc_write_f64", "to_nhwc_read_f64"),
        ("f32", "to_nhwc_write_f32", "to_nhwc_read_f32"),
    ];
    for (dtype, write_function, read_function) in conversions {
        let (n, c, h, w) = (2, 48, 20, 20);
        let dims = format!("n={n} c={c} h={h} w={w} dtype={dtype}");
        let c_dims = format!("{n} {c} {h} {w}");
        runs.push(vec![
            (
                "to-nhwc",
                format!("{dims} variant=naive-write"),
                format!("to-nhwc-write-{dtype} {c_dims}"),
                write_function,
            ),
            (
                "to-nhwc",
                format!("{dims} variant=naive-read"),
                format!("to-nhwc-read-{dtype} {c_dims}"),
                read_function,
            ),
        ]);
    }
    for (rows, cols) in [(300, 100), (512, 512)] {
        let p = pitch(rows, cols);
        runs.push(vec![
            (
                "jagged",
                format!("rows={rows} cols={cols} order=row"),
                format!("jagged-row {rows} {cols} {p}"),
                "jagged_row",
            ),
            (
                "jagged",
                format!("rows={rows} cols={cols} order=col"),
                format!("jagged-col {rows} {cols} {p}"),
                "jagged_col",
            ),
        ]);
    }
    let mut failures = Vec::new();
    for run in runs {
        let mut argv = vec![(2 * ll.size).to_string()];
        for (_, _, command, _) in &run {
            argv.extend(command.split_whitespace().map(str::to_string));
        }
        let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
        let profile = run_cachegrind(&fixture.binary, &argv, d1, ll);
        for (kernel, params, _, function) in &run {
            let (d1_stats, ll_stats) = simulate(kernel, params, d1, ll);
            failures.extend(kernel_rows_that_disagree(
                &format!("{kernel} {params}"),
                profile.function(function),
                (&d1_stats, &ll_stats),
                STACK_SLACK,
                default_tolerance(ll),
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "simulator and cachegrind disagree:\n{}",
        failures.join("\n")
    );
}
