//! Simulator throughput: simulated accesses per second for an L1-only LRU hierarchy and for
//! L1+L2 with the 3C classification, on row- and column-order sums of a 512×512 f64 matrix
//! (the first mostly hits, the second misses on every access).
//!
//! Targets (issue 3): ≥ 100 M accesses/s L1-only LRU, ≥ 30 M/s L1+L2 with 3C.
//! Run: `cargo bench --bench simulator`.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use stridelab::cache::AccessSink;
use stridelab::cache::geometry::Geometry;
use stridelab::cache::sim::{Hierarchy, Policy};

const N: u64 = 512;
const BASE: u64 = 1 << 32;

fn trace(column_order: bool) -> Vec<u64> {
    let mut addrs = Vec::with_capacity((N * N) as usize);
    for outer in 0..N {
        for inner in 0..N {
            let (i, j) = if column_order {
                (inner, outer)
            } else {
                (outer, inner)
            };
            addrs.push(BASE + (i * N + j) * 8);
        }
    }
    addrs
}

fn feed(sink: &mut dyn AccessSink, addrs: &[u64]) {
    for &addr in addrs {
        sink.load(addr, 8);
    }
}

fn bench(c: &mut Criterion) {
    let design = Geometry::preset("design-vm").unwrap().data_levels();
    let mut group = c.benchmark_group("simulator");
    group.throughput(Throughput::Elements(N * N));
    for (order, column) in [("row", false), ("column", true)] {
        let addrs = trace(column);
        let configs = [
            ("l1-lru", &design[..1], false),
            ("l1-l2-lru-3c", &design[..2], true),
        ];
        for (name, levels, classify) in configs {
            let mut sim = Hierarchy::new(levels, Policy::Lru, classify).unwrap();
            group.bench_function(format!("{name}/{order}"), |b| {
                b.iter(|| {
                    feed(&mut sim, black_box(&addrs));
                });
            });
            black_box(sim.stats());
        }
    }
    group.finish();
}

criterion_group! {
    name = benches;
    // Plots need system fonts this machine lacks; the numbers are what matter.
    config = Criterion::default().without_plots();
    targets = bench
}
criterion_main!(benches);
