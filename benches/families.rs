//! Criterion benchmarks of every kernel family of the catalogue, at sizes from L1 to DRAM:
//! row/col sums (with a padded control), the stride sweep, conflict probes with their ±1
//! controls, view walks, transposes (naive, blocked, `fast`), tiled sums, to-tiles, the
//! copy/read references and the pointer chase. Every bench reports `Throughput::Bytes` (the
//! bytes the kernel's definition reads and writes, from its `Work`).
//!
//! What is measured comes from `common::LabMeasurement`: wall time by default, or a hardware
//! counter with `STRIDELAB_MEASURE=l1d-misses|llc-misses|cycles|instructions` (wall time, said
//! once on stderr, where the PMU is missing). Each instance is prepared once, its checksum
//! verified once, then timed with `SamplingMode::Flat` so the DRAM sizes stay within budget.
//!
//! `cargo bench --bench families -- --quick` runs each bench for a fraction of the time;
//! a filter (`-- traverse/col-sum`) selects benches by name.

mod common;

use std::hint::black_box;

use criterion::{
    BenchmarkId, Criterion, SamplingMode, Throughput, criterion_group, criterion_main,
};
use stridelab::kernels::catalogue::{find, resolve_params};
use stridelab::kernels::spec::PrepareOptions;

use common::{LabMeasurement, lab_criterion};

/// One bench: a kernel and its `key=value` parameters.
struct Case {
    kernel: &'static str,
    params: Vec<(&'static str, String)>,
}

fn case(kernel: &'static str, params: &[(&'static str, &str)]) -> Case {
    Case {
        kernel,
        params: params.iter().map(|(k, v)| (*k, v.to_string())).collect(),
    }
}

/// Matrix edges whose f64 matrix lands in L1 (8 KiB), L2 (512 KiB), L3 (8 MiB) and DRAM
/// (128 MiB) on common machines.
const MATRIX_EDGES: [&str; 4] = ["32", "256", "1024", "4096"];
/// Buffer sizes of the same four tiers for the references and the chase.
const BYTE_SIZES: [&str; 4] = ["16K", "512K", "8M", "128M"];

fn traverse_cases() -> Vec<Case> {
    let mut cases = Vec::new();
    for kernel in ["row-sum", "col-sum"] {
        for n in MATRIX_EDGES {
            cases.push(case(kernel, &[("rows", n), ("cols", n)]));
        }
    }
    // The padding control: one extra element per row spreads a column over every set.
    cases.push(case(
        "col-sum",
        &[("rows", "1024"), ("cols", "1024"), ("ld", "1025")],
    ));
    cases
}

fn stride_cases() -> Vec<Case> {
    let mut cases = Vec::new();
    // 32 KiB, 1 MiB, 16 MiB, 128 MiB buffers; unit stride and one element per line.
    for len in ["4K", "128K", "2M", "16M"] {
        for stride in ["1", "8"] {
            cases.push(case("stride-sum", &[("len", len), ("stride", stride)]));
        }
    }
    cases
}

fn conflict_cases() -> Vec<Case> {
    let mut cases = Vec::new();
    // 4096 B strides and their +1-element controls, below, at and above typical L1 ways.
    for count in ["8", "16", "64"] {
        for stride in ["512", "513"] {
            cases.push(case(
                "conflict",
                &[("stride", stride), ("count", count), ("mode", "thr")],
            ));
        }
    }
    cases.push(case(
        "conflict",
        &[("stride", "512"), ("count", "16"), ("mode", "lat")],
    ));
    cases.push(case(
        "conflict",
        &[("stride", "513"), ("count", "16"), ("mode", "lat")],
    ));
    cases
}

fn view_cases() -> Vec<Case> {
    [
        "arange(4096).view(64,64).T",
        "arange(1048576).view(1024,1024).T",
        "arange(1048576).view(1024,1024).diagonal()",
        "arange(1048576).view(1024,1024)[::2, ::3]",
        "arange(16777216).view(4096,4096).T",
    ]
    .iter()
    .map(|expr| case("view-sum", &[("expr", expr)]))
    .collect()
}

fn transpose_cases() -> Vec<Case> {
    let mut cases = Vec::new();
    for n in ["64", "256", "1024", "4096"] {
        for variant in ["naive-read", "blocked", "fast"] {
            cases.push(case(
                "transpose",
                &[("rows", n), ("cols", n), ("variant", variant)],
            ));
        }
    }
    cases
}

fn blocked_cases() -> Vec<Case> {
    let mut cases = Vec::new();
    for n in ["64", "256", "1024", "4096"] {
        cases.push(case(
            "tiled-sum",
            &[("n", n), ("B", "32"), ("order", "col")],
        ));
    }
    for n in ["256", "1024", "4096"] {
        cases.push(case("to-tiles", &[("n", n), ("B", "32")]));
    }
    cases
}

fn reference_cases() -> Vec<Case> {
    let mut cases = Vec::new();
    for kernel in ["read", "copy"] {
        for bytes in BYTE_SIZES {
            cases.push(case(kernel, &[("bytes", bytes)]));
        }
    }
    cases
}

fn latency_cases() -> Vec<Case> {
    // A random chase costs ~100 ns per line from DRAM: 64 MiB (past a 32 MiB L3) is DRAM
    // enough and keeps one run under a second.
    ["16K", "512K", "8M", "64M"]
        .iter()
        .map(|bytes| case("chase", &[("bytes", bytes)]))
        .collect()
}

/// Benchmarks `cases` as criterion group `family`.
fn bench_family(c: &mut Criterion<LabMeasurement>, family: &str, cases: Vec<Case>) {
    let mut group = c.benchmark_group(family);
    group.sampling_mode(SamplingMode::Flat);
    for case in cases {
        let spec = find(case.kernel).unwrap_or_else(|e| panic!("bench {family}: {e}"));
        let args: Vec<(String, String)> = case
            .params
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect();
        let params = resolve_params(spec, &args)
            .unwrap_or_else(|e| panic!("bench {family}/{}: {e}", case.kernel));
        let label: Vec<String> = case
            .params
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        let name = format!("{}/{}", case.kernel, label.join(","));
        let id = BenchmarkId::new(case.kernel, label.join(","));
        let mut instance = (spec.prepare)(
            &params,
            &PrepareOptions::with_planner(std::sync::Arc::new(
                stridelab::kernels::copy_planner::analytic_planner(
                    &stridelab::cache::geometry::Geometry::detect(),
                ),
            )),
        )
        .unwrap_or_else(|e| panic!("bench {family}/{name}: cannot prepare: {e}"));
        // A bench must time a correct kernel: check one run before timing many.
        let (actual, expected) = (instance.run(), instance.expected_checksum());
        assert!(
            actual == expected || (actual - expected).abs() <= 1e-9 * expected.abs().max(1.0),
            "bench {family}/{name}: wrong checksum {actual}, expected {expected}"
        );
        let work = instance.work();
        group.throughput(Throughput::Bytes(work.bytes_read + work.bytes_written));
        group.bench_function(id, |b| b.iter(|| black_box(instance.run())));
    }
    group.finish();
}

fn families(c: &mut Criterion<LabMeasurement>) {
    bench_family(c, "traverse", traverse_cases());
    bench_family(c, "stride", stride_cases());
    bench_family(c, "conflict", conflict_cases());
    bench_family(c, "view", view_cases());
    bench_family(c, "transpose", transpose_cases());
    bench_family(c, "blocked", blocked_cases());
    bench_family(c, "reference", reference_cases());
    bench_family(c, "latency", latency_cases());
}

criterion_group! {
    name = benches;
    config = lab_criterion();
    targets = families
}
criterion_main!(benches);
