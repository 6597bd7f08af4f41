//! Tile-major ("blocked contiguous") layouts: `tiled-sum n B order=row|col` and `to-tiles n B`.
//!
//! Tile-major storage of an n×n matrix with tiles of B×B: with T = ⌈n/B⌉ tiles per side, tile
//! (ti, tj) occupies the B² contiguous elements from `(ti·T + tj)·B²`, and element (i, j) is at
//! `(⌊i/B⌋·T + ⌊j/B⌋)·B² + (i mod B)·B + (j mod B)` — for n a multiple of B, the 4-D view
//! (n/B, n/B, B, B) with strides (n/B·B², B², B, 1). When B does not divide n the edge tiles are
//! padded to B×B (the padding is never read by `tiled-sum`).
//!
//! `tiled-sum` orders (logical order, tile-major storage):
//! - `row`: for i, for j: read tiled(i, j) — for each i, T contiguous segments of ≤ B elements;
//! - `col`: for j, for i: read tiled(i, j) — for each j, T segments of ≤ B elements B apart.
//!
//! Within each segment the k-th element goes to accumulator `k mod 8`.
//!
//! `to-tiles` copies the row-major n×n matrix (buffer 0) into tile-major storage (buffer 1)
//! through the copy engine: one 4-D view when B divides n; otherwise, per tile row, one 3-D view
//! of the full tiles (when the tile row is full height) and each remaining (edge) tile row by
//! row. The simulated stream is each copy in the engine's own order
//! ([`stridelab_copy::order`]), then the sampled checksum cells of buffer 1.

use std::sync::Arc;

use stridelab_copy::Planner;
use stridelab_copy::order::REPLAY_CAVEAT;

use crate::cache::AccessSink;
use crate::kernels::access::{CopyView, Mem, RealMem, SimMem, Strided};
use crate::kernels::common::{
    ACCUMULATORS, cell_value, check_indices, checked_elements, filled_buffer, fold, sampled_sum,
    size_param, text_param, zeroed_buffer,
};
use crate::kernels::spec::SimStart;
use crate::kernels::spec::{
    Family, Instance, KernelError, KernelSpec, ParamSpec, Params, PrepareOptions, Work,
};
use crate::kernels::spec::{Prepared, StridePattern};
use crate::mem::AlignedBuffer;

const N: ParamSpec = ParamSpec::int("n", 1, 1 << 16, None, "matrix edge (n×n)");

const B: ParamSpec = ParamSpec::int("B", 1, 1 << 12, None, "tile edge in elements (B×B tiles)");

const TILED_SUM_PARAMS: [ParamSpec; 3] = [
    N,
    B,
    ParamSpec::choice(
        "order",
        &["row", "col"],
        Some("row"),
        "logical traversal order: row (for i, for j) or col (for j, for i)",
    ),
];

const TO_TILES_PARAMS: [ParamSpec; 2] = [N, B];

pub(crate) const TILED_SUM: KernelSpec = KernelSpec {
    name: "tiled-sum",
    family: Family::Blocked,
    params: &TILED_SUM_PARAMS,
    summary: "Sums a tile-major matrix (B×B tiles stored contiguously) in row or column tile order.",
    example: "n=1024 B=32 order=col",
    explanation: "Sums an n×n matrix stored tile-major (each B×B tile contiguous) in row or \
                  column order. Compare with row-sum and col-sum on the row-major matrix: in \
                  tile-major storage a column walk stays inside one tile for B rows, so its \
                  lines are reused while they are still cached, and neither order strides \
                  across a whole matrix row — the blocked layout makes both orders cheap.",
    prepare: prepare_tiled_sum,
    plan: plan_tiled_sum,
    pattern: tiled_sum_pattern,
    simulation_note: None,
    accesses: None,
    simulate: SimStart::Cold,
};

pub(crate) const TO_TILES: KernelSpec = KernelSpec {
    name: "to-tiles",
    family: Family::Blocked,
    params: &TO_TILES_PARAMS,
    summary: "Converts a row-major matrix to tile-major storage through the copy engine.",
    example: "n=1024 B=32",
    explanation: "Converts a row-major n×n matrix into tile-major storage (B×B tiles, each \
                  contiguous) with the copy engine: a permuted 4-D copy. It is the price of \
                  the blocked layout, paid once; the figure is its fraction of the same-run \
                  copy of the same bytes.",
    prepare: prepare_to_tiles,
    plan: plan_to_tiles,
    pattern: to_tiles_pattern,
    simulation_note: Some(to_tiles_simulation_note),
    accesses: None,
    simulate: SimStart::Cold,
};

/// The copy engine, replayed with [`REPLAY_CAVEAT`]'s omissions.
fn to_tiles_simulation_note(_: &Params) -> Option<&'static str> {
    Some(REPLAY_CAVEAT)
}

/// An n×n matrix in B×B tiles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tiling {
    pub n: usize,
    pub block: usize,
}

impl Tiling {
    fn from_params(kernel: &str, params: &Params) -> Result<Self, KernelError> {
        let tiling = Self {
            n: size_param(kernel, params, "n")?,
            block: size_param(kernel, params, "B")?,
        };
        tiling.tiled_len()?;
        Ok(tiling)
    }

    /// Tiles per side, T = ⌈n/B⌉.
    pub fn tiles_per_side(&self) -> usize {
        self.n.div_ceil(self.block)
    }

    /// Elements of the tile-major storage (T²·B², edge tiles padded).
    pub fn tiled_len(&self) -> Result<usize, KernelError> {
        let t = self.tiles_per_side();
        checked_elements("n", &[t, t, self.block, self.block])
    }

    /// Where element (i, j) lives in tile-major storage.
    pub fn tiled_index(&self, i: usize, j: usize) -> usize {
        let (b, t) = (self.block, self.tiles_per_side());
        ((i / b) * t + j / b) * b * b + (i % b) * b + j % b
    }

    /// Rows (or columns) of tile `tile` inside the matrix: B, or fewer at the edge.
    fn extent(&self, tile: usize) -> usize {
        self.block.min(self.n - tile * self.block)
    }
}

fn plan_tiled_sum(params: &Params) -> Result<Vec<usize>, KernelError> {
    Ok(vec![Tiling::from_params("tiled-sum", params)?.tiled_len()?])
}

fn plan_to_tiles(params: &Params) -> Result<Vec<usize>, KernelError> {
    let tiling = Tiling::from_params("to-tiles", params)?;
    Ok(vec![
        checked_elements("n", &[tiling.n, tiling.n])?,
        tiling.tiled_len()?,
    ])
}

/// The `tiled-sum` orders (`column = false`: row order).
#[inline(always)]
pub fn tiled_sum<M: Mem>(m: &mut M, tiling: Tiling, column: bool) -> f64 {
    let (b, t) = (tiling.block, tiling.tiles_per_side());
    let mut acc = [0.0; ACCUMULATORS];
    if column {
        for j in 0..tiling.n {
            for tile_i in 0..t {
                let start = (tile_i * t + j / b) * b * b + j % b;
                let column = Strided::new(0, start, b as isize);
                m.sum_run(column, tiling.extent(tile_i), &mut acc);
            }
        }
    } else {
        for i in 0..tiling.n {
            for tile_j in 0..t {
                let start = ((i / b) * t + tile_j) * b * b + (i % b) * b;
                m.sum_run(Strided::new(0, start, 1), tiling.extent(tile_j), &mut acc);
            }
        }
    }
    fold(&acc)
}

/// The `to-tiles` order: buffer 0 (row-major) into buffer 1 (tile-major) with `planner`, then
/// the sampled checksum of buffer 1.
pub fn to_tiles<M: Mem>(m: &mut M, planner: &Planner, tiling: Tiling) -> f64 {
    let Tiling { n, block: b } = tiling;
    let t = tiling.tiles_per_side();
    if n % b == 0 {
        let shape = [t, t, b, b];
        let strides = [(b * n) as isize, b as isize, n as isize, 1];
        let view = CopyView {
            shape: &shape,
            strides: &strides,
            offset: 0,
        };
        m.copy_view(planner, 0, &view, 1, 0);
    } else {
        let full = n / b;
        for tile_i in 0..t {
            let height = tiling.extent(tile_i);
            let mut first_edge_tile = 0;
            if height == b && full > 0 {
                let shape = [full, b, b];
                let strides = [b as isize, n as isize, 1];
                let view = CopyView {
                    shape: &shape,
                    strides: &strides,
                    offset: tile_i * b * n,
                };
                m.copy_view(planner, 0, &view, 1, tile_i * t * b * b);
                first_edge_tile = full;
            }
            for tile_j in first_edge_tile..t {
                let width = tiling.extent(tile_j);
                let shape = [width];
                let strides = [1];
                for r in 0..height {
                    let view = CopyView {
                        shape: &shape,
                        strides: &strides,
                        offset: (tile_i * b + r) * n + tile_j * b,
                    };
                    m.copy_view(planner, 0, &view, 1, (tile_i * t + tile_j) * b * b + r * b);
                }
            }
        }
    }
    sampled_sum(m, 1, t * t * b * b)
}

struct TiledSum {
    tiling: Tiling,
    column: bool,
    x: AlignedBuffer,
    expected: f64,
}

fn prepare_tiled_sum(params: &Params, options: &PrepareOptions) -> Prepared {
    let tiling = Tiling::from_params("tiled-sum", params)?;
    let column = text_param("tiled-sum", params, "order")? == "col";
    let x = filled_buffer(tiling.tiled_len()?, options)?;
    let cells = (0..tiling.n).flat_map(|i| (0..tiling.n).map(move |j| (i, j)));
    let expected = cells.map(|(i, j)| x[tiling.tiled_index(i, j)]).sum();
    Ok(Box::new(TiledSum {
        tiling,
        column,
        x,
        expected,
    }))
}

impl Instance for TiledSum {
    fn work(&self) -> Work {
        let n = (self.tiling.n * self.tiling.n) as u64;
        Work::reads_f64(n)
    }

    fn run(&mut self) -> f64 {
        tiled_sum(&mut RealMem::new([&mut self.x]), self.tiling, self.column)
    }

    fn expected_checksum(&self) -> f64 {
        self.expected
    }

    fn simulate(&mut self, sink: &mut dyn AccessSink) {
        tiled_sum(
            &mut SimMem::new([&mut self.x], sink),
            self.tiling,
            self.column,
        );
    }
}

struct ToTiles {
    tiling: Tiling,
    src: AlignedBuffer,
    dst: AlignedBuffer,
    expected: f64,
    /// The planner the tiles are copied with.
    copies: Arc<Planner>,
}

fn prepare_to_tiles(params: &Params, options: &PrepareOptions) -> Prepared {
    let tiling = Tiling::from_params("to-tiles", params)?;
    let n = tiling.n;
    let src = filled_buffer(checked_elements("n", &[n, n])?, options)?;
    let dst_len = tiling.tiled_len()?;
    let dst = zeroed_buffer(dst_len, 1, options)?;
    // Invert tiled_index for the sampled cells; padding cells stay zero.
    let (b, t) = (tiling.block, tiling.tiles_per_side());
    let expected = check_indices(dst_len)
        .map(|k| {
            let (tile, within) = (k / (b * b), k % (b * b));
            let i = (tile / t) * b + within / b;
            let j = (tile % t) * b + within % b;
            if i < n && j < n {
                cell_value(i * n + j)
            } else {
                0.0
            }
        })
        .sum();
    Ok(Box::new(ToTiles {
        tiling,
        src,
        dst,
        expected,
        copies: Arc::clone(&options.copies),
    }))
}

impl Instance for ToTiles {
    fn work(&self) -> Work {
        let n = (self.tiling.n * self.tiling.n) as u64;
        Work::copies_f64(n)
    }

    fn run(&mut self) -> f64 {
        to_tiles(
            &mut RealMem::new([&mut self.src, &mut self.dst]),
            &self.copies,
            self.tiling,
        )
    }

    fn expected_checksum(&self) -> f64 {
        self.expected
    }

    fn simulate(&mut self, sink: &mut dyn AccessSink) {
        to_tiles(
            &mut SimMem::new([&mut self.src, &mut self.dst], sink),
            &self.copies,
            self.tiling,
        );
    }
}

fn tiled_sum_pattern(params: &Params) -> Result<Option<StridePattern>, KernelError> {
    let tiling = Tiling::from_params("tiled-sum", params)?;
    let b = tiling.block;
    Ok(Some(
        if text_param("tiled-sum", params, "order")? == "col" {
            StridePattern::elements(0, b as isize, b.min(tiling.n), "a column inside one tile")
        } else {
            let tiles = tiling.tiles_per_side();
            StridePattern::elements(0, (b * b) as isize, tiles, "one row's tile segments")
        },
    ))
}

fn to_tiles_pattern(params: &Params) -> Result<Option<StridePattern>, KernelError> {
    let tiling = Tiling::from_params("to-tiles", params)?;
    let (n, b) = (tiling.n, tiling.block);
    Ok(Some(StridePattern::elements(
        0,
        n as isize,
        b.min(n),
        "one tile's source rows",
    )))
}
