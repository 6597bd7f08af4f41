//! Does the generic access order cost anything? The real path of `row-sum` and
//! `transpose variant=blocked` (one generic function over `Mem`, instantiated with `RealMem`)
//! against hand-written loops of exactly the same order and accumulators.
//!
//! Target (issue 4): the generic path within 5% of the hand-written loop. Run with
//! `cargo bench --bench kernels_generic`; compare the `generic` and `by-hand` lines of a group.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use stridelab::harness::buffer::AlignedBuffer;
use stridelab::kernels::access::RealMem;
use stridelab::kernels::common::{ACCUMULATORS, Matrix, cell_value, check_indices};
use stridelab::kernels::transpose::{Variant, transpose};
use stridelab::kernels::traverse::row_sum;

fn filled(len: usize) -> AlignedBuffer {
    let mut buffer = AlignedBuffer::zeroed(len, false).unwrap();
    for (i, x) in buffer.iter_mut().enumerate() {
        *x = cell_value(i);
    }
    buffer
}

/// The generic real path, as one function (so its machine code can be compared too).
#[inline(never)]
fn row_sum_generic(a: &mut [f64], m: Matrix) -> f64 {
    row_sum(&mut RealMem::new([a]), m, false)
}

/// The generic real path of `transpose variant=blocked`.
#[inline(never)]
fn transpose_blocked_generic(src: &mut [f64], dst: &mut [f64], m: Matrix, block: usize) -> f64 {
    transpose(&mut RealMem::new([src, dst]), m, Variant::Blocked { block })
}

/// row-sum written out: for i, for j, element j of a row into accumulator j mod 8.
#[inline(never)]
fn row_sum_by_hand(a: &[f64], m: Matrix) -> f64 {
    let mut acc = [0.0; ACCUMULATORS];
    for i in 0..m.rows {
        let row = &a[i * m.ld..i * m.ld + m.cols];
        let mut chunks = row.chunks_exact(ACCUMULATORS);
        for chunk in &mut chunks {
            for (slot, x) in acc.iter_mut().zip(chunk) {
                *slot += x;
            }
        }
        for (slot, x) in acc.iter_mut().zip(chunks.remainder()) {
            *slot += x;
        }
    }
    acc.iter().sum()
}

/// transpose blocked written out, then the same sampled checksum.
#[inline(never)]
fn transpose_blocked_by_hand(src: &[f64], dst: &mut [f64], m: Matrix, block: usize) -> f64 {
    for ti in (0..m.rows).step_by(block) {
        for tj in (0..m.cols).step_by(block) {
            for i in ti..m.rows.min(ti + block) {
                for j in tj..m.cols.min(tj + block) {
                    dst[j * m.rows + i] = src[i * m.ld + j];
                }
            }
        }
    }
    check_indices(dst.len()).map(|k| dst[k]).sum()
}

fn bench_row_sum(c: &mut Criterion) {
    for n in [256usize, 2048] {
        let m = Matrix {
            rows: n,
            cols: n,
            ld: n,
        };
        let mut a = filled(n * n);
        let mut group = c.benchmark_group(format!("row-sum {n}x{n}"));
        group.throughput(Throughput::Bytes((n * n * 8) as u64));
        group.bench_function("generic", |b| {
            b.iter(|| row_sum_generic(&mut a, black_box(m)))
        });
        group.bench_function("by-hand", |b| b.iter(|| row_sum_by_hand(&a, black_box(m))));
        group.finish();
    }
}

fn bench_transpose_blocked(c: &mut Criterion) {
    for n in [256usize, 1024] {
        let m = Matrix {
            rows: n,
            cols: n,
            ld: n,
        };
        let block = 32;
        let mut src = filled(n * n);
        let mut dst = AlignedBuffer::zeroed(n * n, false).unwrap();
        let mut group = c.benchmark_group(format!("transpose blocked {n}x{n} B={block}"));
        group.throughput(Throughput::Bytes((2 * n * n * 8) as u64));
        group.bench_function("generic", |b| {
            b.iter(|| transpose_blocked_generic(&mut src, &mut dst, black_box(m), block))
        });
        group.bench_function("by-hand", |b| {
            b.iter(|| transpose_blocked_by_hand(&src, &mut dst, black_box(m), block))
        });
        group.finish();
    }
}

criterion_group! {
    name = benches;
    // No plots: criterion's plotters backend needs system fonts this lab does not assume.
    config = Criterion::default().without_plots();
    targets = bench_row_sum, bench_transpose_blocked
}
criterion_main!(benches);
