//! Does the generic access order cost anything? The real path of `row-sum` and
//! `transpose variant=blocked` (one generic function over `Mem`, instantiated with `RealMem`)
//! against hand-written loops of exactly the same order and accumulators.
//!
//! Target: the generic path within 5% of the hand-written loop. Run with
//! `cargo bench --bench kernels_generic`; compare the `generic` and `by-hand` lines of a group.
//! On a shared machine the two criterion lines are measured minutes apart, so after criterion
//! the bench also prints a *paired* figure: the two loops timed alternately, round after round,
//! and the median of the per-round ratios generic / by-hand (noise hits both alike).

use std::hint::black_box;
use std::time::Instant;

use criterion::{Criterion, Throughput, criterion_group};
use stridelab::kernels::access::RealMem;
use stridelab::kernels::common::{ACCUMULATORS, Matrix, cell_value, check_indices};
use stridelab::kernels::copy_planner::analytic_planner;
use stridelab::kernels::families::transpose::{Variant, transpose};
use stridelab::kernels::families::traverse::row_sum;
use stridelab::mem::AlignedBuffer;
use stridelab_copy::Planner;

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
    row_sum(&mut RealMem::new([a]), m)
}

/// The generic real path of `transpose variant=blocked` (`planner` is the one `fast` would
/// copy with; `blocked` never reads it).
#[inline(never)]
fn transpose_blocked_generic(
    planner: &Planner,
    src: &mut [f64],
    dst: &mut [f64],
    m: Matrix,
    block: usize,
) -> f64 {
    transpose(
        &mut RealMem::new([src, dst]),
        planner,
        m,
        Variant::Blocked { block },
    )
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
    let planner = analytic_planner(&stridelab::cache::geometry::Geometry::detect());
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
            b.iter(|| transpose_blocked_generic(&planner, &mut src, &mut dst, black_box(m), block))
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
    config = Criterion::default()
        .without_plots()
        // Short windows keep the whole `cargo bench` under 10 minutes on 2 vCPUs.
        .warm_up_time(std::time::Duration::from_secs(1))
        .measurement_time(std::time::Duration::from_secs(2));
    targets = bench_row_sum, bench_transpose_blocked
}

/// Seconds one call of `f` takes.
fn seconds(mut f: impl FnMut() -> f64) -> f64 {
    let start = Instant::now();
    black_box(f());
    start.elapsed().as_secs_f64()
}

/// Times the generic path (`run(true)`) and the hand-written loop (`run(false)`) alternately
/// (which goes first alternates too) and prints the median per-round ratio.
fn paired(name: &str, rounds: usize, mut run: impl FnMut(bool) -> f64) {
    let mut ratios = Vec::with_capacity(rounds);
    for round in 0..rounds {
        let generic_first = round % 2 == 0;
        let first = seconds(|| run(generic_first));
        let second = seconds(|| run(!generic_first));
        let (generic, by_hand) = if generic_first {
            (first, second)
        } else {
            (second, first)
        };
        ratios.push(generic / by_hand);
    }
    ratios.sort_by(f64::total_cmp);
    let median = ratios[rounds / 2];
    let verdict = if median <= 1.05 {
        "within 5%"
    } else {
        "more than 5% slower"
    };
    println!(
        "paired {name}: generic / by-hand = {median:.3} (median of {rounds} rounds, timed): {verdict}"
    );
}

fn paired_report() {
    for (n, calls) in [(256usize, 64), (2048, 1)] {
        let m = Matrix {
            rows: n,
            cols: n,
            ld: n,
        };
        let mut a = filled(n * n);
        paired(&format!("row-sum {n}x{n}"), 201, |generic| {
            (0..calls)
                .map(|_| {
                    if generic {
                        row_sum_generic(&mut a, black_box(m))
                    } else {
                        row_sum_by_hand(&a, black_box(m))
                    }
                })
                .sum()
        });
    }
    let planner = analytic_planner(&stridelab::cache::geometry::Geometry::detect());
    for n in [256usize, 1024] {
        let m = Matrix {
            rows: n,
            cols: n,
            ld: n,
        };
        let mut src = filled(n * n);
        let mut dst = AlignedBuffer::zeroed(n * n, false).unwrap();
        paired(&format!("transpose blocked {n}x{n} B=32"), 101, |generic| {
            if generic {
                transpose_blocked_generic(&planner, &mut src, &mut dst, black_box(m), 32)
            } else {
                transpose_blocked_by_hand(&src, &mut dst, black_box(m), 32)
            }
        });
    }
}

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
    // `cargo bench` passes --bench; `cargo test --benches` does not: skip the slow pairing there.
    if std::env::args().any(|arg| arg == "--bench") {
        paired_report();
    }
}
