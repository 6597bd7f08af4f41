//! Row- and column-order traversals of a row-major matrix with leading dimension `ld`:
//! `row-sum` (for i, for j: read A[i·ld + j]) and `col-sum` (for j, for i: read A[i·ld + j]).
//!
//! Accumulators: within each row (row-sum) or column (col-sum) the k-th element read goes to
//! accumulator `k mod 8` ([`Mem::sum_run`]); the address order is exactly the loop nest above.
//!
//! Elements are f64 (default) or f32 (`dtype=f32`): the same orders over 4-byte elements.
//!
//! A build with an injected slowdown (`kernels::slowdown`, the regression gate's calibration)
//! re-reads a share of the matrix after its pass, into the same accumulators (the expected
//! checksum includes them); the counted work stays the kernel's, so GB/s and ns/element both
//! show the slowdown.

use crate::cache::AccessSink;
use crate::kernels::access::{Mem, Strided};
use crate::kernels::common::{ACCUMULATORS, Matrix, cell_value, fold};
use crate::kernels::slowdown::{extra_elements, injected};
use crate::kernels::spec::SimStart;
use crate::kernels::spec::{
    Family, Instance, KernelError, KernelSpec, ParamSpec, Params, PrepareOptions, Work,
};
use crate::kernels::spec::{Prepared, StridePattern};
use crate::kernels::typed::{DTYPE_PARAM, Dtype, Storage, with_real_mem, with_sim_mem};

/// `rows`, `cols`, `ld` (defaults to `cols`): the matrix parameters shared with `transpose`.
pub(crate) const MATRIX_PARAMS: [ParamSpec; 3] = [
    ParamSpec::int("rows", 1, 1 << 24, None, "number of rows"),
    ParamSpec::int("cols", 1, 1 << 24, None, "number of columns"),
    ParamSpec::int(
        "ld",
        1,
        1 << 25,
        Some("cols"),
        "leading dimension in elements (≥ cols; ld - cols is the padding)",
    )
    .in_elements(),
];

const COL_SUM_PARAMS: [ParamSpec; 4] = [
    MATRIX_PARAMS[0],
    MATRIX_PARAMS[1],
    MATRIX_PARAMS[2],
    DTYPE_PARAM,
];

const ROW_SUM_PARAMS: [ParamSpec; 4] = [
    MATRIX_PARAMS[0],
    MATRIX_PARAMS[1],
    MATRIX_PARAMS[2],
    DTYPE_PARAM,
];

pub(crate) const ROW_SUM: KernelSpec = KernelSpec {
    name: "row-sum",
    family: Family::Traverse,
    params: &ROW_SUM_PARAMS,
    summary: "Sums a row-major matrix in storage order: the sequential reference for col-sum.",
    example: "rows=1024 cols=1024",
    explanation: "Sums a row-major matrix in storage order (for i, for j: A[i·ld + j]): every \
                  cache line is used whole before the next one, and the hardware prefetcher \
                  sees one sequential stream, so this is the fast reference for col-sum. \
                  Padding (ld > cols) is skipped at the end of each row.",
    prepare: prepare_row_sum,
    plan: |params| plan("row-sum", params),
    pattern: row_pattern,
    simulation_note: None,
    accesses: None,
    simulate: SimStart::Cold,
};

pub(crate) const COL_SUM: KernelSpec = KernelSpec {
    name: "col-sum",
    family: Family::Traverse,
    params: &COL_SUM_PARAMS,
    summary: "Sums a row-major matrix column by column: a stride of one row between loads.",
    example: "rows=1024 cols=1024 ld=1025",
    explanation: "Sums the same matrix column by column (for j, for i: A[i·ld + j]): a stride \
                  of ld·8 bytes. Each line brings 8 elements of which one is used now; the \
                  other 7 are reused only if the line survives until the next column. With a \
                  power-of-two ld all rows of a column fall into few cache sets and evict \
                  each other (conflict misses); padding ld by one element spreads them over \
                  every set. Compare 2^k and 2^k+1.",
    prepare: prepare_col_sum,
    plan: |params| plan("col-sum", params),
    pattern: col_pattern,
    simulation_note: None,
    accesses: None,
    simulate: SimStart::Cold,
};

fn plan(kernel: &str, params: &Params) -> Result<Vec<usize>, KernelError> {
    Ok(vec![Matrix::from_params(kernel, params)?.storage_len()?])
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Order {
    /// Row order; `extra` > 0 (elements read again) only with an injected slowdown.
    Row {
        extra: usize,
    },
    Col,
}

struct Traverse {
    order: Order,
    matrix: Matrix,
    a: Storage<1>,
    expected: f64,
}

fn prepare_row_sum(params: &Params, options: &PrepareOptions) -> Prepared {
    let matrix = Matrix::from_params("row-sum", params)?;
    let extra = injected()?.map_or(0, |s| extra_elements(matrix.rows, matrix.cols, s.percent));
    prepare(Order::Row { extra }, "row-sum", params, options)
}

fn prepare_col_sum(params: &Params, options: &PrepareOptions) -> Prepared {
    prepare(Order::Col, "col-sum", params, options)
}

fn prepare(order: Order, kernel: &str, params: &Params, options: &PrepareOptions) -> Prepared {
    let matrix = Matrix::from_params(kernel, params)?;
    let dtype = Dtype::from_params(params)?;
    let a = Storage::new(dtype, [matrix.storage_len()?], [true], cell_value, options)?;
    // Independent of the kernel's order and accumulators: a plain loop over the cells.
    let mut expected = 0.0;
    let rows = if a.has_data() { matrix.rows } else { 0 };
    for i in 0..rows {
        for j in 0..matrix.cols {
            expected += a.value(0, i * matrix.ld + j);
        }
    }
    if let (Order::Row { extra }, true) = (order, a.has_data()) {
        expected += reread_sum(&a, matrix, extra);
    }
    Ok(Box::new(Traverse {
        order,
        matrix,
        a,
        expected,
    }))
}

/// The `row-sum` order: for i, for j: read A[i·ld + j].
#[inline(always)]
pub fn row_sum<M: Mem>(m: &mut M, matrix: Matrix) -> f64 {
    let mut acc = [0.0; ACCUMULATORS];
    for i in 0..matrix.rows {
        m.sum_run(Strided::new(0, i * matrix.ld, 1), matrix.cols, &mut acc);
    }
    fold(&acc)
}

/// [`row_sum`] with an injected slowdown: the kernel's own pass, then `extra` elements read
/// again (whole rows from the first, then part of the next) into the same accumulators, so the
/// extra work is the kernel's own loop and nothing else (no second fold, no discarded result);
/// the checksum the instance expects includes them (`reread_sum`).
#[inline(always)]
pub fn row_sum_slowed<M: Mem>(m: &mut M, matrix: Matrix, extra: usize) -> f64 {
    let mut acc = [0.0; ACCUMULATORS];
    for i in 0..matrix.rows {
        m.sum_run(Strided::new(0, i * matrix.ld, 1), matrix.cols, &mut acc);
    }
    let (mut left, mut row) = (extra, 0);
    while left > 0 {
        let count = left.min(matrix.cols);
        m.sum_run(Strided::new(0, row * matrix.ld, 1), count, &mut acc);
        left -= count;
        row += 1;
    }
    fold(&acc)
}

/// The sum of the elements [`row_sum_slowed`] reads again, in plain order.
fn reread_sum(a: &Storage<1>, matrix: Matrix, extra: usize) -> f64 {
    (0..extra)
        .map(|k| a.value(0, (k / matrix.cols) * matrix.ld + k % matrix.cols))
        .sum()
}

/// The `col-sum` order: for j, for i: read A[i·ld + j].
#[inline(always)]
pub fn col_sum<M: Mem>(m: &mut M, matrix: Matrix) -> f64 {
    let mut acc = [0.0; ACCUMULATORS];
    for j in 0..matrix.cols {
        let column = Strided::new(0, j, matrix.ld as isize);
        m.sum_run(column, matrix.rows, &mut acc);
    }
    fold(&acc)
}

fn traverse<M: Mem>(m: &mut M, order: Order, matrix: Matrix) -> f64 {
    match order {
        Order::Row { extra: 0 } => row_sum(m, matrix),
        Order::Row { extra } => row_sum_slowed(m, matrix, extra),
        Order::Col => col_sum(m, matrix),
    }
}

impl Instance for Traverse {
    /// An injected slowdown's re-reads are wasted work, not counted: a slowed build does the
    /// same useful work, only slower, so every derived figure (GB/s, ns/element) regresses.
    fn work(&self) -> Work {
        Work::reads(self.matrix.elements(), self.a.dtype().bytes())
    }

    fn run(&mut self) -> f64 {
        let (order, matrix) = (self.order, self.matrix);
        with_real_mem!(&mut self.a, |m| traverse(m, order, matrix))
    }

    fn expected_checksum(&self) -> f64 {
        self.expected
    }

    fn simulate(&mut self, sink: &mut dyn AccessSink) {
        let (order, matrix) = (self.order, self.matrix);
        with_sim_mem!(&mut self.a, sink, |m| traverse(m, order, matrix));
    }
}

fn row_pattern(params: &Params) -> Result<Option<StridePattern>, KernelError> {
    let m = Matrix::from_params("row-sum", params)?;
    let bytes = Dtype::from_params(params)?.bytes();
    Ok(Some(StridePattern::sized(0, 1, m.cols, bytes, "one row")))
}

fn col_pattern(params: &Params) -> Result<Option<StridePattern>, KernelError> {
    let m = Matrix::from_params("col-sum", params)?;
    let bytes = Dtype::from_params(params)?.bytes();
    let column = StridePattern::sized(0, m.ld as isize, m.rows, bytes, "one column");
    Ok(Some(column))
}
