//! Criterion benchmarks of the `loop` kernel's executor (`run --loop`) against the built-in kernels it can spell:
//! row-sum, col-sum and the naive transpose (`naive-read`), each as its loop form over the
//! same matrix, at an L2-sized and a DRAM-sized edge. The two of a pair differ only in who
//! walks the order: the kernel's own code or the executor walking `layout::loops::walk_runs`
//! through the accessor's runs; their ratio is the interpreter's cost (docs/loops.md).
//!
//! `cargo bench --bench loops` (`-- --quick` for a fraction of the time).

mod common;

use std::hint::black_box;
use std::sync::Arc;

use criterion::{
    BenchmarkId, Criterion, SamplingMode, Throughput, criterion_group, criterion_main,
};
use stridelab::cache::geometry::Geometry;
use stridelab::kernels::catalogue::{find, resolve_params};
use stridelab::kernels::copy_planner::analytic_planner;
use stridelab::kernels::spec::PrepareOptions;

use common::{LabMeasurement, lab_criterion};

/// A built-in kernel, its parameters, and the same order as a loop nest.
struct Pair {
    kernel: &'static str,
    params: Vec<(String, String)>,
    loop_text: String,
    arrays: Vec<String>,
}

fn pairs(n: usize) -> Vec<Pair> {
    let words = |extra: &[(&str, &str)]| -> Vec<(String, String)> {
        [("rows", n.to_string()), ("cols", n.to_string())]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .chain(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())))
            .collect()
    };
    let matrix = format!("a = f64[{n}, {n}]");
    vec![
        Pair {
            kernel: "row-sum",
            params: words(&[]),
            loop_text: format!("for i in 0..{n}: for j in 0..{n}: s += a[i, j]"),
            arrays: vec![matrix.clone()],
        },
        Pair {
            kernel: "col-sum",
            params: words(&[]),
            loop_text: format!("for j in 0..{n}: for i in 0..{n}: s += a[i, j]"),
            arrays: vec![matrix.clone()],
        },
        Pair {
            kernel: "transpose",
            params: words(&[("variant", "naive-read")]),
            loop_text: format!("for i in 0..{n}: for j in 0..{n}: b[j, i] = a[i, j]"),
            arrays: vec![matrix, format!("b = f64[{n}, {n}]")],
        },
    ]
}

fn loops(c: &mut Criterion<LabMeasurement>) {
    let planner = Arc::new(analytic_planner(&Geometry::detect()));
    let mut group = c.benchmark_group("loops");
    group.sampling_mode(SamplingMode::Flat);
    for n in [256usize, 2048] {
        for pair in pairs(n) {
            let spec = find(pair.kernel).expect("a built-in kernel");
            let params = resolve_params(spec, &pair.params).expect("valid parameters");
            let mut instance =
                (spec.prepare)(&params, &PrepareOptions::with_planner(Arc::clone(&planner)))
                    .expect("the kernel prepares");
            let work = instance.work();
            group.throughput(Throughput::Bytes(work.bytes_read + work.bytes_written));
            group.bench_function(
                BenchmarkId::new(format!("{}/kernel", pair.kernel), n),
                |b| b.iter(|| black_box(instance.run())),
            );
            drop(instance);

            let nest = find("loop").expect("the loop kernel");
            let words = [
                ("nest".to_string(), pair.loop_text.clone()),
                ("arrays".to_string(), pair.arrays.join("; ")),
            ];
            let params = resolve_params(nest, &words).expect("the loop form parses");
            let mut instance =
                (nest.prepare)(&params, &PrepareOptions::with_planner(Arc::clone(&planner)))
                    .expect("the loop form is in bounds");
            group.bench_function(BenchmarkId::new(format!("{}/loop", pair.kernel), n), |b| {
                b.iter(|| black_box(instance.run()))
            });
        }
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = lab_criterion();
    targets = loops
}
criterion_main!(benches);
