//! `matmul n order [B] [dtype]`: C = A·B for n×n row-major matrices of f64 (default) or f32;
//! A, B, C are buffers 0, 1, 2. A (i, k) is at `i·n + k`; C starts at zero before every run
//! (outside the simulated stream; the timed run includes zeroing its n² cells, 1/n of the
//! work). Written against [`Mem`], so f32 runs and simulates with 4-byte elements.
//!
//! Orders (the classic loop nests; the simulator replays exactly these):
//! - `ijk`, `jik`: for the two outer loops, `sum = Σ_k A[i][k]·B[k][j]` (each k loads `A[i][k]`
//!   then `B[k][j]`, [`Mem::dot_run`]), then one store of `C[i][j]`;
//! - `ikj`, `kij`: `r = A[i][k]` (one load), then for j: `C[i][j] += r·B[k][j]` (loads
//!   `B[k][j]`, loads `C[i][j]`, stores `C[i][j]`, [`Mem::axpy_run`]);
//! - `jki`, `kji`: `r = B[k][j]`, then for i: `C[i][j] += A[i][k]·r` (loads `A[i][k]`, loads
//!   `C[i][j]`, stores `C[i][j]`);
//! - `blocked`: for ii, for kk, for jj in steps of B, `ikj` inside the tile (edges clipped).
//!
//! Every order then reads back the sampled checksum cells of C
//! ([`crate::kernels::common::sampled_sum`]). Cells hold small integers (1..=251 in f64, 1..=13
//! in f32, whose 24-bit mantissa holds 13²·2^14 exactly), so every sum is exact whatever the
//! order, and the checksum equals the straightforward product's.

use std::ops::DerefMut;

use crate::cache::AccessSink;
use crate::kernels::access::{Element, Mem, RealMem, SimMem, Strided};
use crate::kernels::common::{
    CHECK_SAMPLES, cell_value, check_indices, checked_elements, invalid, sampled_sum, size_param,
    text_param,
};
use crate::kernels::spec::SimStart;
use crate::kernels::spec::{
    Family, Instance, KernelError, KernelSpec, ParamSpec, Params, PrepareOptions, Work,
};
use crate::kernels::spec::{Prepared, StridePattern};
use crate::kernels::typed::{DTYPE_PARAM, Dtype};
use crate::mem::AlignedBuffer;

/// The order words, as `run --list` shows them.
pub const ORDERS: [&str; 7] = ["ijk", "jik", "ikj", "kij", "jki", "kji", "blocked"];

const PARAMS: [ParamSpec; 4] = [
    // 2^14: three 2 GiB matrices; the per-run access limit refuses far smaller n first.
    ParamSpec::int("n", 1, 1 << 14, None, "matrix edge: A, B and C are n×n"),
    ParamSpec::choice(
        "order",
        &ORDERS,
        None,
        "loop nest: ijk, jik, ikj, kij, jki, kji, or blocked (ikj in B×B tiles)",
    ),
    ParamSpec::int(
        "B",
        1,
        1 << 14,
        Some("32"),
        "tile edge in elements (blocked only)",
    ),
    DTYPE_PARAM,
];

pub(crate) const MATMUL: KernelSpec = KernelSpec {
    name: "matmul",
    family: Family::Matmul,
    params: &PARAMS,
    summary: "C = A·B for n×n matrices in one of the six loop orders, or blocked.",
    example: "n=256 order=ikj",
    explanation: "Multiplies two n×n row-major matrices (C = A·B) with one of the six \
                  classic loop nests or a blocked ikj. The innermost index decides the \
                  strides: with j innermost (ikj, kij) B and C are read along rows, a line \
                  miss every 64 bytes; with k innermost (ijk, jik) B is read down a \
                  column, a miss per multiply-add; with i innermost (jki, kji) both A and C \
                  go down columns, two misses per multiply-add. With n a power of two a \
                  column's lines also share few cache sets; n + 1 spreads them.",
    prepare,
    plan,
    pattern,
    simulation_note: None,
    accesses: Some(accesses),
    simulate: SimStart::Cold,
};

/// The loop nest of a multiplication.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    Ijk,
    Jik,
    Ikj,
    Kij,
    Jki,
    Kji,
    Blocked { block: usize },
}

/// A resolved `matmul` point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    pub n: usize,
    pub order: Order,
    pub dtype: Dtype,
}

impl Shape {
    /// Reads `n`, `order` and `B`, and checks the buffers' size.
    pub fn from_params(params: &Params) -> Result<Self, KernelError> {
        let n = size_param("matmul", params, "n")?;
        checked_elements("n", &[n, n])?;
        let order = match text_param("matmul", params, "order")? {
            "ijk" => Order::Ijk,
            "jik" => Order::Jik,
            "ikj" => Order::Ikj,
            "kij" => Order::Kij,
            "jki" => Order::Jki,
            "kji" => Order::Kji,
            "blocked" => Order::Blocked {
                block: size_param("matmul", params, "B")?,
            },
            other => return Err(invalid("order", format!("`{other}` is not a loop order"))),
        };
        let dtype = Dtype::from_params(params)?;
        Ok(Self { n, order, dtype })
    }

    /// Multiply-adds of one run (n³).
    pub fn multiply_adds(&self) -> u64 {
        (self.n as u64).saturating_pow(3)
    }

    /// Loads and stores of one run, checksum reads included.
    pub fn accesses(&self) -> (u64, u64) {
        let n = self.n as u64;
        let (cube, square) = (n.saturating_pow(3), n * n);
        let samples = (self.n * self.n).min(CHECK_SAMPLES) as u64;
        let (loads, stores) = match self.order {
            Order::Ijk | Order::Jik => (cube.saturating_mul(2), square),
            Order::Ikj | Order::Kij | Order::Jki | Order::Kji => {
                (cube.saturating_mul(2).saturating_add(square), cube)
            }
            // One load of A per (i, k) per column block.
            Order::Blocked { block } => {
                let blocks = n.div_ceil(block as u64);
                (
                    cube.saturating_mul(2)
                        .saturating_add(square.saturating_mul(blocks)),
                    cube,
                )
            }
        };
        (loads.saturating_add(samples), stores)
    }
}

fn plan(params: &Params) -> Result<Vec<usize>, KernelError> {
    let shape = Shape::from_params(params)?;
    // In f64 words, as every plan: an f32 matrix takes half as many.
    let bytes = shape.n * shape.n * shape.dtype.bytes() as usize;
    Ok(vec![bytes.div_ceil(8); 3])
}

fn accesses(params: &Params) -> Result<u64, KernelError> {
    let (loads, stores) = Shape::from_params(params)?.accesses();
    Ok(loads.saturating_add(stores))
}

const A: usize = 0;
const B: usize = 1;
const C: usize = 2;

/// Row `row` of an n-wide matrix from column `from`: unit steps.
fn row(buffer: usize, n: usize, row: usize, from: usize) -> Strided {
    Strided::new(buffer, row * n + from, 1)
}

/// Column `col` of an n-wide matrix: steps of n.
fn column(buffer: usize, n: usize, col: usize) -> Strided {
    Strided::new(buffer, col, n as isize)
}

/// One C cell of `ijk`/`jik`: the dot product of A's row i and B's column j, stored.
#[inline(always)]
fn dot_cell<M: Mem>(m: &mut M, n: usize, i: usize, j: usize) {
    let sum = m.dot_run(row(A, n, i, 0), column(B, n, j), n);
    m.store(C, i * n + j, sum);
}

/// `C[i][from..from+len] += A[i][k] · B[k][from..from+len]`: the `ikj` inner loop.
#[inline(always)]
fn row_update<M: Mem>(m: &mut M, n: usize, (i, k): (usize, usize), from: usize, len: usize) {
    let r = m.load(A, i * n + k);
    m.axpy_run(row(B, n, k, from), row(C, n, i, from), len, r);
}

/// `C[..][j] += A[..][k] · B[k][j]`: the `jki` inner loop.
#[inline(always)]
fn column_update<M: Mem>(m: &mut M, n: usize, k: usize, j: usize) {
    let r = m.load(B, k * n + j);
    m.axpy_run(column(A, n, k), column(C, n, j), n, r);
}

/// The `matmul` orders on zeroed C; returns the sampled checksum of C.
#[inline(always)]
pub fn matmul<M: Mem>(m: &mut M, n: usize, order: Order) -> f64 {
    let square = |outer: &mut dyn FnMut(usize, usize)| {
        for a in 0..n {
            for b in 0..n {
                outer(a, b);
            }
        }
    };
    match order {
        Order::Ijk => square(&mut |i, j| dot_cell(m, n, i, j)),
        Order::Jik => square(&mut |j, i| dot_cell(m, n, i, j)),
        Order::Ikj => square(&mut |i, k| row_update(m, n, (i, k), 0, n)),
        Order::Kij => square(&mut |k, i| row_update(m, n, (i, k), 0, n)),
        Order::Jki => square(&mut |j, k| column_update(m, n, k, j)),
        Order::Kji => square(&mut |k, j| column_update(m, n, k, j)),
        Order::Blocked { block } => {
            for ii in (0..n).step_by(block) {
                for kk in (0..n).step_by(block) {
                    for jj in (0..n).step_by(block) {
                        let width = block.min(n - jj);
                        for i in ii..n.min(ii + block) {
                            for k in kk..n.min(kk + block) {
                                row_update(m, n, (i, k), jj, width);
                            }
                        }
                    }
                }
            }
        }
    }
    sampled_sum(m, C, n * n)
}

/// The value A and B hold at `index`: [`cell_value`] in f64; 1..=13 in f32, so that a sum of
/// n ≤ 2^14 products stays below 2^24 and exact.
pub fn value(dtype: Dtype, index: usize) -> f64 {
    match dtype {
        Dtype::F64 => cell_value(index),
        Dtype::F32 => (index % 13 + 1) as f64,
    }
}

/// The checksum of a correct product: the sampled cells of C, each computed straightforwardly.
pub fn reference_checksum(n: usize, dtype: Dtype) -> f64 {
    let v = |index| value(dtype, index);
    check_indices(n * n)
        .map(|cell| {
            let (i, j) = (cell / n, cell % n);
            (0..n).map(|k| v(i * n + k) * v(k * n + j)).sum::<f64>()
        })
        .sum()
}

/// An instance over three buffers of `T` (aligned f64 buffers, or plain vectors of f32).
struct Matmul<S> {
    shape: Shape,
    a: S,
    b: S,
    c: S,
    expected: f64,
}

fn prepare(params: &Params, options: &PrepareOptions) -> Prepared {
    let shape = Shape::from_params(params)?;
    let len = shape.n * shape.n;
    let expected = reference_checksum(shape.n, shape.dtype);
    let fill = |index| value(shape.dtype, index);
    Ok(match shape.dtype {
        Dtype::F64 => {
            let filled = || -> Result<AlignedBuffer, KernelError> {
                let mut buffer = AlignedBuffer::zeroed(len, options.huge_pages)?;
                buffer
                    .iter_mut()
                    .enumerate()
                    .for_each(|(i, x)| *x = fill(i));
                Ok(buffer)
            };
            let (a, b) = (filled()?, filled()?);
            let c = AlignedBuffer::zeroed(len, options.huge_pages)?;
            Box::new(Matmul {
                shape,
                a,
                b,
                c,
                expected,
            })
        }
        Dtype::F32 => {
            let filled = || (0..len).map(|i| fill(i) as f32).collect::<Vec<f32>>();
            let (a, b, c) = (filled(), filled(), vec![0.0f32; len]);
            Box::new(Matmul {
                shape,
                a,
                b,
                c,
                expected,
            })
        }
    })
}

impl<T: Element, S: DerefMut<Target = [T]> + Send> Instance for Matmul<S> {
    fn work(&self) -> Work {
        let (loads, stores) = self.shape.accesses();
        let bytes = u64::from(T::BYTES);
        Work {
            bytes_read: loads.saturating_mul(bytes),
            bytes_written: stores.saturating_mul(bytes),
            elements: self.shape.multiply_adds(),
        }
    }

    fn run(&mut self) -> f64 {
        self.c.fill(T::default());
        let mut m = RealMem::new([&mut *self.a, &mut *self.b, &mut *self.c]);
        matmul(&mut m, self.shape.n, self.shape.order)
    }

    fn expected_checksum(&self) -> f64 {
        self.expected
    }

    fn simulate(&mut self, sink: &mut dyn AccessSink) {
        self.c.fill(T::default());
        let mut m = SimMem::new([&mut *self.a, &mut *self.b, &mut *self.c], sink);
        matmul(&mut m, self.shape.n, self.shape.order);
    }
}

/// The strided side of each order's inner loop, in elements and bytes.
fn pattern(params: &Params) -> Result<Option<StridePattern>, KernelError> {
    let Shape { n, order, dtype } = Shape::from_params(params)?;
    let (buffer, stride, count, what) = match order {
        Order::Ijk | Order::Jik => (B, n, n, "one column of B"),
        Order::Jki | Order::Kji => (A, n, n, "one column of A"),
        Order::Ikj | Order::Kij => (B, 1, n, "one row of B"),
        Order::Blocked { block } => (B, n, block.min(n), "one tile's column of B"),
    };
    let stride_bytes = stride as i64 * i64::from(dtype.bytes());
    Ok(Some(StridePattern {
        buffer,
        stride_bytes,
        count: count as u64,
        description: format!(
            "{what}: {} {} elements {} apart ({} B)",
            crate::units::format_count(count as u64),
            format!("{dtype:?}").to_lowercase(),
            crate::units::format_count_signed(stride as i64),
            crate::units::format_count_signed(stride_bytes)
        ),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(n: usize, order: Order, dtype: Dtype) -> Shape {
        Shape { n, order, dtype }
    }

    /// The filled A (and B) of a dtype.
    fn filled<T: Element>(n: usize, dtype: Dtype) -> Vec<T> {
        (0..n * n).map(|i| T::from_f64(value(dtype, i))).collect()
    }

    /// Runs one order on real memory and returns C whole, in f64.
    fn product<T: Element>(n: usize, order: Order, dtype: Dtype) -> Vec<f64> {
        let (mut a, mut b) = (filled::<T>(n, dtype), filled::<T>(n, dtype));
        let mut c = vec![T::default(); n * n];
        let checksum = matmul(&mut RealMem::new([&mut a, &mut b, &mut c]), n, order);
        assert_eq!(checksum, reference_checksum(n, dtype), "{order:?}");
        c.into_iter().map(T::to_f64).collect()
    }

    /// C = A·B cell by cell, the textbook definition.
    fn brute_force(n: usize, dtype: Dtype) -> Vec<f64> {
        let v = |index| value(dtype, index);
        (0..n * n)
            .map(|cell| {
                let (i, j) = (cell / n, cell % n);
                (0..n).map(|k| v(i * n + k) * v(k * n + j)).sum()
            })
            .collect()
    }

    const ALL: [Order; 7] = [
        Order::Ijk,
        Order::Jik,
        Order::Ikj,
        Order::Kij,
        Order::Jki,
        Order::Kji,
        Order::Blocked { block: 4 },
    ];

    proptest::proptest! {
        #[test]
        fn every_order_computes_the_whole_product(n in 1usize..24, block in 1usize..30) {
            for order in ALL.into_iter().chain([Order::Blocked { block }]) {
                let want = brute_force(n, Dtype::F64);
                proptest::prop_assert_eq!(product::<f64>(n, order, Dtype::F64), want);
                let want = brute_force(n, Dtype::F32);
                proptest::prop_assert_eq!(product::<f32>(n, order, Dtype::F32), want);
            }
        }
    }

    #[derive(Default)]
    struct Count(u64, u64, Vec<u64>);

    impl AccessSink for Count {
        fn load(&mut self, addr: u64, len: u32) {
            self.0 += 1;
            self.2.push(addr + u64::from(len));
        }
        fn store(&mut self, _: u64, _: u32) {
            self.1 += 1;
        }
    }

    #[test]
    fn accesses_count_the_simulated_stream() {
        for n in [3, 10] {
            let orders = [
                Order::Ijk,
                Order::Kij,
                Order::Kji,
                Order::Blocked { block: 4 },
            ];
            for order in orders {
                let (mut a, mut b) = (filled::<f32>(n, Dtype::F32), filled(n, Dtype::F32));
                let mut c = vec![0.0f32; n * n];
                let mut count = Count::default();
                matmul(
                    &mut SimMem::new([&mut a, &mut b, &mut c], &mut count),
                    n,
                    order,
                );
                let want = shape(n, order, Dtype::F32).accesses();
                assert_eq!((count.0, count.1), want, "{order:?}");
                // f32 elements are 4 bytes: the last byte of B is at 2^33 + 4·n².
                let ends_of_b = count
                    .2
                    .iter()
                    .filter(|&&end| end < 3 << 32 && end > 2 << 32);
                assert_eq!(ends_of_b.max(), Some(&((2 << 32) + 4 * (n * n) as u64)));
            }
        }
    }
}
