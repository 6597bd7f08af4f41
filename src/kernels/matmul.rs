//! `matmul n order [B]`: C = A·B for n×n row-major matrices; A, B, C are buffers 0, 1, 2.
//! A (i, k) is at `i·n + k`; C starts at zero before every run (outside the access stream).
//!
//! Orders (the classic loop nests; the simulator replays exactly these):
//! - `ijk`, `jik`: for the two outer loops, `sum = Σ_k A[i][k]·B[k][j]` (each k loads A[i][k]
//!   then B[k][j], [`Mem::dot_run`]), then one store of C[i][j];
//! - `ikj`, `kij`: `r = A[i][k]` (one load), then for j: `C[i][j] += r·B[k][j]` (loads B[k][j],
//!   loads C[i][j], stores C[i][j], [`Mem::axpy_run`]);
//! - `jki`, `kji`: `r = B[k][j]`, then for i: `C[i][j] += A[i][k]·r` (loads A[i][k], loads
//!   C[i][j], stores C[i][j]);
//! - `blocked`: for ii, for kk, for jj in steps of B, `ikj` inside the tile (edges clipped).
//!
//! Every order then reads back the sampled checksum cells of C
//! ([`crate::kernels::common::sampled_sum`]). Cells hold integers 1..=251, so every sum is exact
//! whatever the order, and the checksum equals the straightforward product's.

use crate::cache::AccessSink;
use crate::kernels::access::{Mem, RealMem, SimMem, Strided};
use crate::kernels::common::{
    CHECK_SAMPLES, cell_value, check_indices, checked_elements, filled_buffer, invalid,
    sampled_sum, size_param, text_param,
};
use crate::kernels::spec::{Entry, Prepared, StridePattern};
use crate::kernels::spec::{
    Family, Instance, KernelError, KernelSpec, ParamSpec, Params, PrepareOptions, Work,
};
use crate::mem::AlignedBuffer;

/// The order words, as `run --list` shows them.
pub const ORDERS: [&str; 7] = ["ijk", "jik", "ikj", "kij", "jki", "kji", "blocked"];

const PARAMS: [ParamSpec; 3] = [
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
];

pub(crate) static MATMUL: Entry = Entry {
    spec: KernelSpec {
        name: "matmul",
        family: Family::Matmul,
        params: &PARAMS,
        explanation: "Multiplies two n×n row-major matrices (C = A·B) with one of the six \
                      classic loop nests or a blocked ikj. The innermost index decides the \
                      strides: with j innermost (ikj, kij) B and C are read along rows, a line \
                      miss every 8 elements; with k innermost (ijk, jik) B is read down a \
                      column, a miss per multiply-add; with i innermost (jki, kji) both A and C \
                      go down columns, two misses per multiply-add. With n a power of two a \
                      column's lines also share few cache sets; n + 1 spreads them.",
        prepare,
    },
    plan,
    pattern,
    simulation_note: None,
    accesses: Some(accesses),
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
        Ok(Self { n, order })
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
    let n = Shape::from_params(params)?.n;
    Ok(vec![n * n; 3])
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
    Strided {
        buffer,
        start: row * n + from,
        step: 1,
    }
}

/// Column `col` of an n-wide matrix: steps of n.
fn column(buffer: usize, n: usize, col: usize) -> Strided {
    Strided {
        buffer,
        start: col,
        step: n,
    }
}

/// One C cell of `ijk`/`jik`: the dot product of A's row i and B's column j, stored.
#[inline(always)]
fn dot_cell<M: Mem>(m: &mut M, n: usize, i: usize, j: usize) {
    let sum = m.dot_run(row(A, n, i, 0), column(B, n, j), n);
    m.store(C, i * n + j, sum);
}

/// `C[i][from..from+len] += A[i][k] · B[k][from..from+len]`: the `ikj` inner loop.
#[inline(always)]
fn row_update<M: Mem>(m: &mut M, n: usize, i: usize, k: usize, from: usize, len: usize) {
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
pub fn matmul<M: Mem>(m: &mut M, shape: Shape) -> f64 {
    let n = shape.n;
    let square = |outer: &mut dyn FnMut(usize, usize)| {
        for a in 0..n {
            for b in 0..n {
                outer(a, b);
            }
        }
    };
    match shape.order {
        Order::Ijk => square(&mut |i, j| dot_cell(m, n, i, j)),
        Order::Jik => square(&mut |j, i| dot_cell(m, n, i, j)),
        Order::Ikj => square(&mut |i, k| row_update(m, n, i, k, 0, n)),
        Order::Kij => square(&mut |k, i| row_update(m, n, i, k, 0, n)),
        Order::Jki => square(&mut |j, k| column_update(m, n, k, j)),
        Order::Kji => square(&mut |k, j| column_update(m, n, k, j)),
        Order::Blocked { block } => {
            for ii in (0..n).step_by(block) {
                for kk in (0..n).step_by(block) {
                    for jj in (0..n).step_by(block) {
                        let width = block.min(n - jj);
                        for i in ii..n.min(ii + block) {
                            for k in kk..n.min(kk + block) {
                                row_update(m, n, i, k, jj, width);
                            }
                        }
                    }
                }
            }
        }
    }
    sampled_sum(m, C, n * n)
}

/// The checksum of a correct product: the sampled cells of C, each computed straightforwardly.
pub fn reference_checksum(n: usize) -> f64 {
    check_indices(n * n)
        .map(|cell| {
            let (i, j) = (cell / n, cell % n);
            (0..n)
                .map(|k| cell_value(i * n + k) * cell_value(k * n + j))
                .sum::<f64>()
        })
        .sum()
}

struct Matmul {
    shape: Shape,
    a: AlignedBuffer,
    b: AlignedBuffer,
    c: AlignedBuffer,
    expected: f64,
}

fn prepare(params: &Params, options: PrepareOptions) -> Prepared {
    let shape = Shape::from_params(params)?;
    let len = shape.n * shape.n;
    Ok(Box::new(Matmul {
        shape,
        a: filled_buffer(len, options)?,
        b: filled_buffer(len, options)?,
        c: AlignedBuffer::zeroed(len, options.huge_pages)?,
        expected: reference_checksum(shape.n),
    }))
}

impl Instance for Matmul {
    fn work(&self) -> Work {
        let (loads, stores) = self.shape.accesses();
        Work {
            bytes_read: loads.saturating_mul(8),
            bytes_written: stores.saturating_mul(8),
            elements: self.shape.multiply_adds(),
        }
    }

    fn run(&mut self) -> f64 {
        self.c.fill(0.0);
        let mut m = RealMem::new([&mut self.a, &mut self.b, &mut self.c]);
        matmul(&mut m, self.shape)
    }

    fn expected_checksum(&self) -> f64 {
        self.expected
    }

    fn simulate(&mut self, sink: &mut dyn AccessSink) {
        self.c.fill(0.0);
        let mut m = SimMem::new([&mut self.a, &mut self.b, &mut self.c], sink);
        matmul(&mut m, self.shape);
    }
}

/// The strided side of each order's inner loop.
fn pattern(params: &Params) -> Result<Option<StridePattern>, KernelError> {
    let Shape { n, order } = Shape::from_params(params)?;
    let stride = n as isize;
    Ok(Some(match order {
        Order::Ijk | Order::Jik => StridePattern::elements(B, stride, n, "one column of B"),
        Order::Jki | Order::Kji => StridePattern::elements(A, stride, n, "one column of A"),
        Order::Ikj | Order::Kij => StridePattern::elements(B, 1, n, "one row of B"),
        Order::Blocked { block } => {
            StridePattern::elements(B, stride, block.min(n), "one tile's column of B")
        }
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(n: usize, order: Order) -> Shape {
        Shape { n, order }
    }

    /// Runs one order on real memory and returns C whole.
    fn product(n: usize, order: Order) -> Vec<f64> {
        let len = n * n;
        let mut a: Vec<f64> = (0..len).map(cell_value).collect();
        let mut b = a.clone();
        let mut c = vec![0.0; len];
        let checksum = matmul(&mut RealMem::new([&mut a, &mut b, &mut c]), shape(n, order));
        assert_eq!(checksum, reference_checksum(n), "{order:?}");
        c
    }

    /// C = A·B cell by cell, the textbook definition.
    fn brute_force(n: usize) -> Vec<f64> {
        (0..n * n)
            .map(|cell| {
                let (i, j) = (cell / n, cell % n);
                (0..n)
                    .map(|k| cell_value(i * n + k) * cell_value(k * n + j))
                    .sum()
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
            let want = brute_force(n);
            for order in ALL.into_iter().chain([Order::Blocked { block }]) {
                proptest::prop_assert_eq!(product(n, order), want.clone(), "{:?}", order);
            }
        }
    }

    #[test]
    fn accesses_count_the_simulated_stream() {
        #[derive(Default)]
        struct Count(u64, u64);
        impl AccessSink for Count {
            fn load(&mut self, _: u64, _: u32) {
                self.0 += 1;
            }
            fn store(&mut self, _: u64, _: u32) {
                self.1 += 1;
            }
        }
        for n in [3, 10] {
            let orders = [
                Order::Ijk,
                Order::Kij,
                Order::Kji,
                Order::Blocked { block: 4 },
            ];
            for order in orders {
                let len = n * n;
                let mut a: Vec<f64> = (0..len).map(cell_value).collect();
                let (mut b, mut c) = (a.clone(), vec![0.0; len]);
                let mut count = Count::default();
                let mut m = SimMem::new([&mut a, &mut b, &mut c], &mut count);
                matmul(&mut m, shape(n, order));
                assert_eq!((count.0, count.1), shape(n, order).accesses(), "{order:?}");
            }
        }
    }
}
