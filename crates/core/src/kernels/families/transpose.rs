//! `transpose rows cols [ld] variant [B]`: dst (cols × rows, contiguous) = srcᵀ, src a
//! rows × cols row-major matrix with leading dimension ld. Buffer 0 is src, buffer 1 is dst;
//! src (i, j) lands at dst[j·rows + i].
//!
//! Orders (each element: read src, then write dst):
//! - `naive-read`: for i, for j — src read contiguously, dst written with stride rows.
//! - `naive-write`: for j, for i — dst written contiguously, src read with stride ld.
//! - `blocked`: tiles of B×B in row-major tile order (for ti, for tj), inside a tile for i,
//!   for j; edge tiles are cut to the matrix.
//! - `fast`: the copy engine on the view (cols, rows) with strides (1, ld). Its simulated stream
//!   is the engine's own order ([`stridelab_copy::order`]): panels, tiles and 8×8 blocks
//!   (below 8 rows or columns, runs in `naive-write`'s order).
//!
//! Elements are f64 (default) or f32 (`dtype=f32`, every variant but `fast`: the copy engine
//! moves f64).
//!
//! Every variant then reads back the sampled checksum cells of dst
//! ([`crate::kernels::common::sampled_sum`]).

use std::sync::Arc;

use stridelab_copy::Planner;
use stridelab_copy::order::REPLAY_CAVEAT;

use crate::cache::AccessSink;
use crate::kernels::access::{CopyView, Mem, Strided};
use crate::kernels::common::{
    Matrix, cell_value, check_indices, checked_elements, invalid, sampled_sum, size_param,
    text_param,
};
use crate::kernels::families::traverse::MATRIX_PARAMS;
use crate::kernels::spec::SimStart;
use crate::kernels::spec::{
    Family, Instance, KernelError, KernelSpec, ParamSpec, Params, PrepareOptions, Work,
};
use crate::kernels::spec::{Prepared, StridePattern};
use crate::kernels::typed::{DTYPE_PARAM, Dtype, Storage, with_real_mem, with_sim_mem};

const PARAMS: [ParamSpec; 6] = [
    MATRIX_PARAMS[0],
    MATRIX_PARAMS[1],
    MATRIX_PARAMS[2],
    ParamSpec::choice(
        "variant",
        &["naive-read", "naive-write", "blocked", "fast"],
        None,
        "loop order: naive-read, naive-write, blocked (B×B tiles) or fast (copy engine)",
    ),
    ParamSpec::int(
        "B",
        1,
        1 << 16,
        Some("32"),
        "tile edge in elements (blocked only)",
    ),
    DTYPE_PARAM,
];

pub(crate) const TRANSPOSE: KernelSpec = KernelSpec {
    name: "transpose",
    family: Family::Transpose,
    params: &PARAMS,
    summary: "Writes the transpose of a matrix: naive (read- or write-strided), blocked, or the copy engine.",
    example: "rows=1024 cols=1024 variant=blocked",
    explanation: "Writes the transpose of a matrix into a contiguous destination. One side \
                  is always strided: the naive loops read (or write) a column per row, using \
                  one element of each line they touch, and with power-of-two sizes all of a \
                  column's lines fall into the same cache sets. Blocking into B×B tiles keeps \
                  both sides' lines in cache while a tile is done; the fast variant is the \
                  lab's copy engine. Figures are fractions of the same-run copy.",
    prepare,
    plan,
    pattern,
    simulation_note: Some(simulation_note),
    accesses: None,
    simulate: SimStart::Cold,
};

/// The loop order of a transpose.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variant {
    NaiveRead,
    NaiveWrite,
    Blocked { block: usize },
    Fast,
}

fn variant(params: &Params) -> Result<Variant, KernelError> {
    let variant = text_param("transpose", params, "variant")?;
    if variant == "fast" && Dtype::from_params(params)? != Dtype::F64 {
        return Err(invalid(
            "dtype",
            "variant=fast is the copy engine, which moves f64 only: use dtype=f64 or another variant",
        ));
    }
    Ok(match variant {
        "naive-read" => Variant::NaiveRead,
        "naive-write" => Variant::NaiveWrite,
        "blocked" => Variant::Blocked {
            block: size_param("transpose", params, "B")?,
        },
        _ => Variant::Fast,
    })
}

fn plan(params: &Params) -> Result<Vec<usize>, KernelError> {
    let matrix = Matrix::from_params("transpose", params)?;
    variant(params)?;
    Ok(vec![
        matrix.storage_len()?,
        checked_elements("rows", &[matrix.rows, matrix.cols])?,
    ])
}

const SRC: usize = 0;
const DST: usize = 1;

/// Moves src row i, columns `cols_from..cols_from + count`, to dst (j, i) in j order.
#[inline(always)]
fn move_row_part<M: Mem>(m: &mut M, matrix: Matrix, i: usize, cols_from: usize, count: usize) {
    let row = Strided::new(SRC, i * matrix.ld + cols_from, 1);
    let column = Strided::new(DST, cols_from * matrix.rows + i, matrix.rows as isize);
    m.move_run(row, column, count);
}

/// The `transpose` orders (`fast` only on f64: see the module doc; it copies with `planner`);
/// returns the sampled checksum of dst.
#[inline(always)]
pub fn transpose<M: Mem>(m: &mut M, planner: &Planner, matrix: Matrix, variant: Variant) -> f64 {
    let Matrix { rows, cols, ld } = matrix;
    match variant {
        Variant::NaiveRead => {
            for i in 0..rows {
                move_row_part(m, matrix, i, 0, cols);
            }
        }
        Variant::NaiveWrite => {
            for j in 0..cols {
                let column = Strided::new(SRC, j, ld as isize);
                m.move_run(column, Strided::new(DST, j * rows, 1), rows);
            }
        }
        Variant::Blocked { block } => {
            for tile_i in (0..rows).step_by(block) {
                for tile_j in (0..cols).step_by(block) {
                    let width = block.min(cols - tile_j);
                    for i in tile_i..rows.min(tile_i + block) {
                        move_row_part(m, matrix, i, tile_j, width);
                    }
                }
            }
        }
        Variant::Fast => {
            let shape = [cols, rows];
            let strides = [1, ld as isize];
            let view = CopyView {
                shape: &shape,
                strides: &strides,
                offset: 0,
            };
            m.copy_view(planner, SRC, &view, DST, 0);
        }
    }
    sampled_sum(m, DST, rows * cols)
}

struct Transpose {
    matrix: Matrix,
    variant: Variant,
    /// src, then dst.
    buffers: Storage<2>,
    expected: f64,
    /// The planner `fast` copies with.
    copies: Arc<Planner>,
}

fn prepare(params: &Params, options: &PrepareOptions) -> Prepared {
    let matrix = Matrix::from_params("transpose", params)?;
    let variant = variant(params)?;
    let dst_len = checked_elements("rows", &[matrix.rows, matrix.cols])?;
    let lens = [matrix.storage_len()?, dst_len];
    let buffers = Storage::new(
        Dtype::from_params(params)?,
        lens,
        [true, false],
        cell_value,
        options,
    )?;
    // dst[k] holds src (i, j) with j = k / rows, i = k mod rows.
    let expected = check_indices(dst_len)
        .map(|k| buffers.value(SRC, (k % matrix.rows) * matrix.ld + k / matrix.rows))
        .sum();
    Ok(Box::new(Transpose {
        matrix,
        variant,
        buffers,
        expected,
        copies: Arc::clone(&options.copies),
    }))
}

impl Instance for Transpose {
    fn work(&self) -> Work {
        Work::copies(self.matrix.elements(), self.buffers.dtype().bytes())
    }

    fn run(&mut self) -> f64 {
        let (matrix, variant, copies) = (self.matrix, self.variant, &self.copies);
        with_real_mem!(&mut self.buffers, |m| transpose(m, copies, matrix, variant))
    }

    fn expected_checksum(&self) -> f64 {
        self.expected
    }

    fn simulate(&mut self, sink: &mut dyn AccessSink) {
        let (matrix, variant, copies) = (self.matrix, self.variant, &self.copies);
        with_sim_mem!(&mut self.buffers, sink, |m| transpose(
            m, copies, matrix, variant
        ));
    }
}

/// `fast` is the copy engine, replayed with [`REPLAY_CAVEAT`]'s omissions.
fn simulation_note(params: &Params) -> Option<&'static str> {
    matches!(variant(params), Ok(Variant::Fast)).then_some(REPLAY_CAVEAT)
}

/// The strided side of each variant.
fn pattern(params: &Params) -> Result<Option<StridePattern>, KernelError> {
    let m = Matrix::from_params("transpose", params)?;
    let (rows, ld) = (m.rows as isize, m.ld as isize);
    let bytes = Dtype::from_params(params)?.bytes();
    let column =
        |buffer, stride, count, what| StridePattern::sized(buffer, stride, count, bytes, what);
    Ok(Some(match variant(params)? {
        Variant::NaiveRead => column(DST, rows, m.cols, "one dst column"),
        Variant::NaiveWrite | Variant::Fast => column(SRC, ld, m.rows, "one src column"),
        Variant::Blocked { block } => column(DST, rows, block.min(m.cols), "one tile's dst column"),
    }))
}
