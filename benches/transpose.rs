//! Criterion bench of N×N f64 transposes: a naive double loop, a 64×64 blocked loop with
//! contiguous writes, and the copy engine ("fast"), with throughput in bytes read + written.
//!
//! Run: `cargo bench --bench transpose`. The same-run ratio to the best copy is printed by
//! `cargo bench --bench copy_engine`.

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use stridelab::kernels::copy_planner::analytic_planner;
use stridelab::mem::AlignedBuffer;

/// `dst[j·rows + i] = src[i·ld + j]`, row by row of the source.
fn naive(src: &[f64], rows: usize, cols: usize, ld: usize, dst: &mut [f64]) {
    for i in 0..rows {
        for j in 0..cols {
            dst[j * rows + i] = src[i * ld + j];
        }
    }
}

/// The same in 64×64 blocks, each written a destination row at a time.
fn blocked(src: &[f64], rows: usize, cols: usize, ld: usize, dst: &mut [f64]) {
    const B: usize = 64;
    for i0 in (0..rows).step_by(B) {
        for j0 in (0..cols).step_by(B) {
            for j in j0..(j0 + B).min(cols) {
                for i in i0..(i0 + B).min(rows) {
                    dst[j * rows + i] = src[i * ld + j];
                }
            }
        }
    }
}

fn transposes(c: &mut Criterion) {
    let planner = analytic_planner(&stridelab::cache::geometry::Geometry::detect());
    let mut group = c.benchmark_group("transpose");
    group.sample_size(10);
    for n in [1024usize, 2048, 4096, 4097] {
        let mut src = AlignedBuffer::zeroed(n * n, false).expect("source buffer");
        for (i, x) in src.iter_mut().enumerate() {
            *x = i as f64;
        }
        let mut dst = AlignedBuffer::zeroed(n * n, false).expect("destination buffer");
        group.throughput(Throughput::Bytes((2 * n * n * size_of::<f64>()) as u64));
        group.bench_with_input(BenchmarkId::new("naive", n), &n, |b, &n| {
            b.iter(|| naive(black_box(&src), n, n, n, black_box(&mut dst)))
        });
        group.bench_with_input(BenchmarkId::new("blocked64", n), &n, |b, &n| {
            b.iter(|| blocked(black_box(&src), n, n, n, black_box(&mut dst)))
        });
        group.bench_with_input(BenchmarkId::new("fast", n), &n, |b, &n| {
            b.iter(|| {
                // The transpose of the row-major n×n source is the view (n, n) : (1, n).
                stridelab_copy::copy_into_contiguous(
                    &planner,
                    black_box(&src),
                    &[n, n],
                    &[1, n as isize],
                    0,
                    &mut dst,
                )
                .expect("valid view")
            })
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    // Criterion's plots need system fonts, which CI images often lack; the numbers suffice.
    config = Criterion::default()
        .without_plots()
        // Short windows keep the whole `cargo bench` under 10 minutes on 2 vCPUs.
        .warm_up_time(std::time::Duration::from_secs(1))
        .measurement_time(std::time::Duration::from_secs(2));
    targets = transposes
}
criterion_main!(benches);
