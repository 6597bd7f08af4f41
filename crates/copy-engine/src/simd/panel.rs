//! The copy engine's streamed panel kernels: column panels of a transpose moved from registers
//! straight to the destination with non-temporal stores, with no L1 stage (the tiled kernels'
//! prefetch walks are in `tile_ahead.rs`). AVX-512F streams to any destination, joining each
//! row's lines across a misaligned start with one permute; AVX2 streams whole lines here when
//! every destination row starts one, and joins them across a misaligned start with a few
//! shuffles in `joined_avx2.rs` otherwise. One loop nest serves both instruction sets where they
//! do the same walk ([`LineBlock`]), so the simulator's replay of that walk holds for both.

use std::arch::x86_64 as arch;

use super::joined_avx2::{transpose_panel_swept_joined_avx2, transpose_panel_tiled_joined_avx2};
use super::tile_ahead::TileAhead;
use super::{
    Isa, LINE_BYTES, columns4x4_avx, load_columns_avx512, prefetch, transpose_panel_edges,
    transpose_scalar,
};

/// An instruction set's 8×8 block of a panel written as whole destination lines:
/// `dst[(c0 + c)·ldd + r0 + r] = block[r·lds + c]` for `r, c < 8`, each destination row's 8
/// elements one line, written by non-temporal stores. One loop nest then serves both
/// instruction sets. The row addresses are formed from the panel's `dst` and the block's
/// `(r0, c0)`, as the loop nests did before they were shared: formed from a block-relative
/// pointer instead, the AVX-512 walk ran 7% slower at N = 8192 (docs/copy-engine.md).
trait LineBlock {
    /// # Safety
    /// `block + r·lds + c` readable and `dst + (c0 + c)·ldd + r0 + r` writable for `r, c < 8`,
    /// the two disjoint, each `dst + (c0 + c)·ldd + r0` 64-byte aligned; the CPU supports the
    /// instruction set.
    unsafe fn stream_block(
        block: *const f64,
        lds: isize,
        dst: *mut f64,
        ldd: isize,
        at: (usize, usize),
    );
}

/// AVX-512F: one 512-bit store per line.
enum Avx512Lines {}

/// AVX2: two 256-bit stores per line, back to back, so each write-combining buffer fills.
enum Avx2Lines {}

impl LineBlock for Avx512Lines {
    #[inline(always)]
    unsafe fn stream_block(
        block: *const f64,
        lds: isize,
        dst: *mut f64,
        ldd: isize,
        (r0, c0): (usize, usize),
    ) {
        // SAFETY: the caller's contract covers the block; AVX-512F is available.
        let columns = unsafe { load_columns_avx512(block, lds) };
        for (j, column) in columns.into_iter().enumerate() {
            let out = dst.wrapping_offset((c0 + j) as isize * ldd + r0 as isize);
            // SAFETY: a whole, aligned line of destination row c0+j (the caller's contract).
            unsafe { arch::_mm512_stream_pd(out, column) };
        }
    }
}

impl LineBlock for Avx2Lines {
    #[inline(always)]
    unsafe fn stream_block(
        block: *const f64,
        lds: isize,
        dst: *mut f64,
        ldd: isize,
        (r0, c0): (usize, usize),
    ) {
        // Four columns at a time: 8 registers live (AVX2 has 16).
        for half in [0usize, 4] {
            // SAFETY: the two 4×4 quarters of columns half..half+4 lie in the caller's block;
            // AVX2 is available.
            let (top, bottom) = unsafe {
                (
                    columns4x4_avx(block.wrapping_add(half), lds),
                    columns4x4_avx(block.wrapping_offset(4 * lds).wrapping_add(half), lds),
                )
            };
            for (j, (first, second)) in top.into_iter().zip(bottom).enumerate() {
                let c = c0 + half + j;
                let out = dst.wrapping_offset(c as isize * ldd + r0 as isize);
                // SAFETY: a whole, aligned line of destination row c (the caller's contract).
                unsafe {
                    arch::_mm256_stream_pd(out, first);
                    arch::_mm256_stream_pd(out.add(4), second);
                }
            }
        }
    }
}

/// True when every destination row `dst + c·ldd` starts a cache line.
fn rows_on_lines(dst: *const f64, ldd: isize) -> bool {
    (dst as usize).is_multiple_of(LINE_BYTES) && ldd % 8 == 0
}

/// A batch of column panels of a transpose streamed straight to a line-aligned destination:
/// `dst[b·batch_dst + c·ldd + r] = src[b·batch_src + r·lds + c]` for `b < batch`, `r < rows`,
/// `c < width`, every 8×8 block's columns written as whole lines with non-temporal stores.
///
/// The walk takes `step_rows` rows at a time and, inside each step, the batch, the column
/// blocks, then the step's 8-row blocks. A source whose rows continue across the batch
/// (`batch_src` = the column count, as in a 4-D first/last-dim swap) is thus read as
/// `step_rows` long streams, each prefetched `prefetch_panels` panels ahead, while each
/// destination row receives runs of `step_rows` elements; with `batch == 1` it is a column
/// panel swept down its rows. Source rows `prefetch_steps`·8 ahead are also prefetched into L2.
/// With `Isa::Portable` (never chosen by the engine) the batch is copied element by element.
///
/// # Safety
/// For every `b < batch`, `r < rows`, `c < width`: `src + b·batch_src + r·lds + c` readable,
/// `dst + b·batch_dst + c·ldd + r` writable, all destination elements distinct and disjoint
/// from the source; `dst`, `ldd` and `batch_dst` line-aligned (`dst` on 64 bytes, the strides
/// multiples of 8); `step_rows` a positive multiple of 8; `isa` one the CPU supports.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn transpose_panel_stream(
    isa: Isa,
    src: *const f64,
    lds: isize,
    dst: *mut f64,
    ldd: isize,
    (rows, width): (usize, usize),
    batch: (usize, isize, isize),
    prefetch: (usize, usize, usize),
) {
    match isa {
        // SAFETY: the caller's ranges and alignment; Isa::Avx512 means the CPU has AVX-512F.
        Isa::Avx512 => unsafe {
            transpose_panel_stream_avx512(src, lds, dst, ldd, (rows, width), batch, prefetch)
        },
        // SAFETY: as above; Isa::Avx2 means the CPU has AVX2.
        Isa::Avx2 => unsafe {
            transpose_panel_stream_avx2(src, lds, dst, ldd, (rows, width), batch, prefetch)
        },
        Isa::Portable => {
            let (count, batch_src, batch_dst) = batch;
            for b in 0..count as isize {
                // SAFETY: panel b of the caller's ranges.
                unsafe {
                    transpose_scalar(
                        src.wrapping_offset(b * batch_src),
                        lds,
                        dst.wrapping_offset(b * batch_dst),
                        ldd,
                        rows,
                        width,
                    )
                }
            }
        }
    }
}

/// # Safety
/// As [`transpose_panel_stream`]; the CPU must support AVX-512F.
#[target_feature(enable = "avx512f")]
unsafe fn transpose_panel_stream_avx512(
    src: *const f64,
    lds: isize,
    dst: *mut f64,
    ldd: isize,
    shape: (usize, usize),
    batch: (usize, isize, isize),
    prefetch: (usize, usize, usize),
) {
    // SAFETY: this function's contract.
    unsafe { batch_stream::<Avx512Lines>(src, lds, dst, ldd, shape, batch, prefetch) }
}

/// # Safety
/// As [`transpose_panel_stream`]; the CPU must support AVX2.
#[target_feature(enable = "avx2")]
unsafe fn transpose_panel_stream_avx2(
    src: *const f64,
    lds: isize,
    dst: *mut f64,
    ldd: isize,
    shape: (usize, usize),
    batch: (usize, isize, isize),
    prefetch: (usize, usize, usize),
) {
    // SAFETY: this function's contract.
    unsafe { batch_stream::<Avx2Lines>(src, lds, dst, ldd, shape, batch, prefetch) }
}

/// The loop nest of [`transpose_panel_stream`], inlined into each instruction set's kernel.
///
/// # Safety
/// As [`transpose_panel_stream`], with `K`'s instruction set available.
#[inline(always)]
unsafe fn batch_stream<K: LineBlock>(
    src: *const f64,
    lds: isize,
    dst: *mut f64,
    ldd: isize,
    (rows, width): (usize, usize),
    (batch, batch_src, batch_dst): (usize, isize, isize),
    (prefetch_steps, step_rows, prefetch_panels): (usize, usize, usize),
) {
    debug_assert!(
        rows_on_lines(dst, ldd)
            && (batch == 1 || batch_dst % 8 == 0)
            && step_rows > 0
            && step_rows % 8 == 0
    );
    let full_rows = rows / 8 * 8;
    let full_cols = width / 8 * 8;
    let ahead = prefetch_steps as isize * 8;
    let ahead_panels = prefetch_panels as isize;
    for s0 in (0..full_rows).step_by(step_rows) {
        let s1 = full_rows.min(s0 + step_rows);
        for b in 0..batch as isize {
            let src_b = src.wrapping_offset(b * batch_src);
            let dst_b = dst.wrapping_offset(b * batch_dst);
            let prefetching_panels = ahead_panels > 0 && b + ahead_panels < batch as isize;
            for c0 in (0..full_cols).step_by(8) {
                for r0 in (s0..s1).step_by(8) {
                    let src_step = src_b.wrapping_offset(r0 as isize * lds + c0 as isize);
                    if ahead > 0 && r0 as isize + ahead + 8 <= full_rows as isize {
                        for k in 0..8 {
                            prefetch(src_step.wrapping_offset((ahead + k) * lds));
                        }
                    }
                    if prefetching_panels {
                        for k in 0..8 {
                            prefetch(src_step.wrapping_offset(ahead_panels * batch_src + k * lds));
                        }
                    }
                    // SAFETY: rows r0..r0+8, columns c0..c0+8 of panel b are in range, and
                    // each destination row's elements r0..r0+8 are one line (everything
                    // line-aligned, r0 a multiple of 8).
                    unsafe { K::stream_block(src_step, lds, dst_b, ldd, (r0, c0)) };
                }
            }
        }
    }
    for b in 0..batch as isize {
        let (src_b, dst_b) = (
            src.wrapping_offset(b * batch_src),
            dst.wrapping_offset(b * batch_dst),
        );
        // SAFETY: the last columns and rows of panel b, inside its ranges.
        unsafe {
            transpose_panel_edges(
                src_b,
                lds,
                dst_b,
                ldd,
                (rows, width),
                (full_rows, full_cols),
            )
        }
    }
}

/// A column panel streamed 8 rows at a time across its width (a sweep): with AVX-512F
/// [`transpose_panel_stream_skewed_avx512`] (any destination); with AVX2 the same walk, its
/// lines joined in registers where destination rows start mid-line; otherwise (never chosen by
/// the engine) element by element.
///
/// # Safety
/// As [`transpose_panel_stream_skewed_avx512`], with `isa` one the CPU supports.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn transpose_panel_swept(
    isa: Isa,
    src: *const f64,
    lds: isize,
    dst: *mut f64,
    ldd: isize,
    (rows, width): (usize, usize),
    prefetch_steps: usize,
    carry: *mut f64,
) {
    match isa {
        // SAFETY: the caller's ranges and carry; Isa::Avx512 means the CPU has AVX-512F.
        Isa::Avx512 => unsafe {
            transpose_panel_stream_skewed_avx512(
                src,
                lds,
                dst,
                ldd,
                rows,
                width,
                prefetch_steps,
                carry,
            )
        },
        // SAFETY: the caller's ranges; Isa::Avx2 means the CPU has AVX2; every destination
        // row starts a line (the guard).
        Isa::Avx2 if rows_on_lines(dst, ldd) => unsafe {
            transpose_panel_swept_aligned_avx2(src, lds, dst, ldd, (rows, width), prefetch_steps)
        },
        // SAFETY: the caller's ranges and carry; Isa::Avx2 means the CPU has AVX2.
        Isa::Avx2 => unsafe {
            transpose_panel_swept_joined_avx2(
                src,
                lds,
                dst,
                ldd,
                (rows, width),
                prefetch_steps,
                carry,
            )
        },
        // SAFETY: the caller's ranges.
        _ => unsafe { transpose_scalar(src, lds, dst, ldd, rows, width) },
    }
}

/// A column panel streamed in tiles: with AVX-512F [`transpose_panel_tiled_avx512`] (any
/// destination); with AVX2 the same walk, its lines joined in registers where destination
/// rows start mid-line; otherwise (never chosen by the engine) element by element.
///
/// # Safety
/// As [`transpose_panel_tiled_avx512`], with `isa` one the CPU supports.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn transpose_panel_tiled(
    isa: Isa,
    src: *const f64,
    lds: isize,
    dst: *mut f64,
    ldd: isize,
    (rows, width): (usize, usize),
    tiles: (usize, usize),
    carry: *mut f64,
) {
    match isa {
        // SAFETY: the caller's ranges and carry; Isa::Avx512 means the CPU has AVX-512F.
        Isa::Avx512 => unsafe {
            transpose_panel_tiled_avx512(src, lds, dst, ldd, rows, width, tiles, carry)
        },
        // SAFETY: the caller's ranges; Isa::Avx2 means the CPU has AVX2; every destination
        // row starts a line (the guard).
        Isa::Avx2 if rows_on_lines(dst, ldd) => unsafe {
            transpose_panel_tiled_aligned_avx2(src, lds, dst, ldd, (rows, width), tiles)
        },
        // SAFETY: the caller's ranges and carry; Isa::Avx2 means the CPU has AVX2.
        Isa::Avx2 => unsafe {
            transpose_panel_tiled_joined_avx2(src, lds, dst, ldd, (rows, width), tiles, carry)
        },
        // SAFETY: the caller's ranges.
        _ => unsafe { transpose_scalar(src, lds, dst, ldd, rows, width) },
    }
}

/// [`transpose_panel_stream_skewed_avx512`]'s walk (8 rows at a time across the panel, the
/// source `prefetch_steps`·8 rows ahead prefetched into L2) for AVX2, to destination rows that
/// start a line, so each block's columns are whole lines.
///
/// # Safety
/// As [`transpose_panel_stream_skewed_avx512`] without the carry; every `dst + c·ldd` 64-byte
/// aligned; the CPU must support AVX2.
#[target_feature(enable = "avx2")]
unsafe fn transpose_panel_swept_aligned_avx2(
    src: *const f64,
    lds: isize,
    dst: *mut f64,
    ldd: isize,
    (rows, width): (usize, usize),
    prefetch_steps: usize,
) {
    let full_rows = rows / 8 * 8;
    let full_cols = width / 8 * 8;
    let ahead = prefetch_steps as isize * 8;
    for r0 in (0..full_rows).step_by(8) {
        let prefetching = ahead > 0 && r0 as isize + ahead + 8 <= full_rows as isize;
        let src_step = src.wrapping_offset(r0 as isize * lds);
        for c0 in (0..full_cols).step_by(8) {
            if prefetching {
                for k in 0..8 {
                    prefetch(src_step.wrapping_offset((ahead + k) * lds + c0 as isize));
                }
            }
            // SAFETY: rows r0..r0+8, columns c0..c0+8 are in range; each destination row's
            // elements r0..r0+8 are one line (the rows start lines, r0 a multiple of 8).
            unsafe { Avx2Lines::stream_block(src_step.add(c0), lds, dst, ldd, (r0, c0)) };
        }
    }
    // SAFETY: the panel's last columns and rows, inside the caller's ranges.
    unsafe { transpose_panel_edges(src, lds, dst, ldd, (rows, width), (full_rows, full_cols)) }
}

/// Where the lines of a panel's destination rows start: for destination row `j < 8` of every
/// 8-column block, `k_j` in 1..=8 (8 when the row starts a line), and the two-source permute
/// index that joins a column with the previous block's into the line holding rows
/// `r0+k_j-8 .. r0+k_j`.
#[target_feature(enable = "avx512f")]
fn line_skew(dst: *mut f64, ldd: isize) -> ([usize; 8], [arch::__m512i; 8]) {
    use arch::*;
    let starts: [usize; 8] = std::array::from_fn(|j| {
        let row = dst.wrapping_offset(j as isize * ldd) as usize / size_of::<f64>();
        8 - row % 8
    });
    let iota = _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0);
    let index =
        std::array::from_fn(|j| _mm512_add_epi64(iota, _mm512_set1_epi64(starts[j] as i64)));
    (starts, index)
}

/// Stores what a skewed panel kernel still holds only in `carry` after its last full block
/// row: lanes `k..8` (rows `full_rows-8+k .. full_rows`) of each destination row `c`.
///
/// # Safety
/// `carry` readable for `8·full_cols` elements; for every `c < full_cols` the destination
/// elements `dst + c·ldd + full_rows-8+k_c .. dst + c·ldd + full_rows` writable; AVX-512F.
#[target_feature(enable = "avx512f")]
unsafe fn flush_carry(
    dst: *mut f64,
    ldd: isize,
    carry: *const f64,
    starts: &[usize; 8],
    full_rows: usize,
    full_cols: usize,
) {
    use arch::*;
    for c in 0..full_cols {
        let mask = (0xFFu32 << starts[c % 8]) as u8;
        let out = dst.wrapping_offset(c as isize * ldd + full_rows as isize - 8);
        // SAFETY: only lanes k..8 of row c are stored, inside the caller's range; carry slot c
        // is readable (the caller's contract).
        unsafe { _mm512_mask_storeu_pd(out, mask, _mm512_loadu_pd(carry.add(c * 8))) };
    }
}

/// A column panel of a transpose streamed straight to a destination whose rows need not start
/// on a line: `dst[c·ldd + r] = src[r·lds + c]` for `r < rows`, `c < width`, every whole line
/// of every destination row written by one aligned non-temporal store.
///
/// Destination row `c` starts `m_c` elements into a line, so its lines begin at the rows
/// `r ≡ k_c (mod 8)`, `k_c = (8 - m_c) mod 8` (8 when aligned). Each 8×8 block's column `c`
/// (rows `r0..r0+8`) is joined with the same column of the previous block, kept in `carry`,
/// into the line holding rows `r0+k_c-8 .. r0+k_c`: one two-source permute per line. The first
/// and last partial line of each row are written with masked regular stores. Because `c0` is a
/// multiple of 8, `k_c` depends only on `c mod 8`: eight permute indices serve the whole panel.
///
/// # Safety
/// For every `r < rows`, `c < width`: `src + r·lds + c` readable, `dst + c·ldd + r` writable,
/// all destination elements distinct and disjoint from the source; `carry` writable for
/// `8·(width/8·8)` elements; the CPU must support AVX-512F.
#[target_feature(enable = "avx512f")]
#[allow(clippy::too_many_arguments)]
unsafe fn transpose_panel_stream_skewed_avx512(
    src: *const f64,
    lds: isize,
    dst: *mut f64,
    ldd: isize,
    rows: usize,
    width: usize,
    prefetch_steps: usize,
    carry: *mut f64,
) {
    use arch::*;
    let full_rows = rows / 8 * 8;
    let full_cols = width / 8 * 8;
    let ahead = prefetch_steps as isize * 8;
    let (starts, index) = line_skew(dst, ldd);
    if full_rows > 0 {
        for r0 in (0..full_rows).step_by(8) {
            let prefetching = ahead > 0 && r0 as isize + ahead + 8 <= full_rows as isize;
            let src_step = src.wrapping_offset(r0 as isize * lds);
            for c0 in (0..full_cols).step_by(8) {
                if prefetching {
                    for k in 0..8 {
                        prefetch(src_step.wrapping_offset((ahead + k) * lds + c0 as isize));
                    }
                }
                // SAFETY: rows r0..r0+8, columns c0..c0+8 are in range.
                let columns = unsafe { load_columns_avx512(src_step.add(c0), lds) };
                for (j, column) in columns.into_iter().enumerate() {
                    let c = c0 + j;
                    let kept = carry.wrapping_add(c * 8);
                    // Line holding rows r0+k-8 .. r0+k of destination row c.
                    let out = dst
                        .wrapping_offset(c as isize * ldd + r0 as isize + starts[j] as isize - 8);
                    // SAFETY: carry slot c is the caller's; on the first step the lanes before
                    // row 0 are masked off, later every lane is a row of this destination row
                    // and `out` starts a line (its row index is ≡ k_c mod 8).
                    unsafe {
                        if r0 == 0 {
                            let line = _mm512_permutex2var_pd(column, index[j], column);
                            let mask = (0xFFu32 << (8 - starts[j])) as u8;
                            _mm512_mask_storeu_pd(out, mask, line);
                        } else {
                            let previous = _mm512_loadu_pd(kept);
                            let line = _mm512_permutex2var_pd(previous, index[j], column);
                            _mm512_stream_pd(out, line);
                        }
                        _mm512_storeu_pd(kept, column);
                    }
                }
            }
        }
        // SAFETY: the caller's ranges and carry (this function's contract).
        unsafe { flush_carry(dst, ldd, carry, &starts, full_rows, full_cols) };
    }
    // SAFETY: the panel's last columns and rows, inside the caller's ranges.
    unsafe { transpose_panel_edges(src, lds, dst, ldd, (rows, width), (full_rows, full_cols)) }
}

/// A column panel of a transpose streamed to the destination in runs: the panel is cut into
/// tiles of `tile_rows` rows; within a tile, each 8-column block is swept down the tile's rows,
/// so its 8 destination rows receive runs of `tile_rows` elements (whole lines, non-temporal,
/// joined across any line misalignment as in [`transpose_panel_stream_skewed_avx512`]), while
/// the source is prefetched into L2: with `ahead_bytes == 0` the next tile's rows front to back,
/// a few lines per block, else each block's rows `ahead_bytes` further along the walk.
/// Reads and writes both reach memory in runs of several lines instead of single lines
/// scattered over hundreds of rows.
///
/// # Safety
/// As [`transpose_panel_stream_skewed_avx512`]; `tile_rows` a positive multiple of 8.
#[target_feature(enable = "avx512f")]
#[allow(clippy::too_many_arguments)]
unsafe fn transpose_panel_tiled_avx512(
    src: *const f64,
    lds: isize,
    dst: *mut f64,
    ldd: isize,
    rows: usize,
    width: usize,
    (tile_rows, ahead_bytes): (usize, usize),
    carry: *mut f64,
) {
    use arch::*;
    debug_assert!(tile_rows > 0 && tile_rows.is_multiple_of(8));
    let full_rows = rows / 8 * 8;
    let full_cols = width / 8 * 8;
    let (starts, index) = line_skew(dst, ldd);
    if starts.iter().all(|&k| k == 8) {
        // SAFETY: the caller's ranges; every destination row starts a line (checked above).
        return unsafe {
            transpose_panel_tiled_aligned_avx512(
                src,
                lds,
                dst,
                ldd,
                (rows, width),
                (tile_rows, ahead_bytes),
            )
        };
    }
    if full_rows > 0 && full_cols > 0 {
        let mut ahead = TileAhead::start(src, lds, (tile_rows, full_rows), width, ahead_bytes);
        let mut t0 = 0;
        while t0 < full_rows {
            let height = tile_rows.min(full_rows - t0);
            let next = t0 + height;
            ahead.next_tile(next, height);
            for c0 in (0..full_cols).step_by(8) {
                let kept = carry.wrapping_add(c0 * 8);
                // SAFETY: the carry holds 8 elements per panel column (caller's contract).
                let mut previous: [__m512d; 8] =
                    std::array::from_fn(|j| unsafe { _mm512_loadu_pd(kept.add(j * 8)) });
                for r0 in (t0..next).step_by(8) {
                    ahead.before_block(r0, c0);
                    // SAFETY: rows r0..r0+8, columns c0..c0+8 are in range.
                    let columns = unsafe {
                        load_columns_avx512(src.wrapping_offset(r0 as isize * lds).add(c0), lds)
                    };
                    for (j, column) in columns.into_iter().enumerate() {
                        let c = c0 + j;
                        let out = dst.wrapping_offset(
                            c as isize * ldd + r0 as isize + starts[j] as isize - 8,
                        );
                        // SAFETY: as in transpose_panel_stream_skewed_avx512: on row 0 the
                        // lanes before the destination row are masked off; later `out` starts
                        // a line of destination row c and every lane is one of its rows.
                        unsafe {
                            if r0 == 0 {
                                let line = _mm512_permutex2var_pd(column, index[j], column);
                                let mask = (0xFFu32 << (8 - starts[j])) as u8;
                                _mm512_mask_storeu_pd(out, mask, line);
                            } else {
                                let line = _mm512_permutex2var_pd(previous[j], index[j], column);
                                _mm512_stream_pd(out, line);
                            }
                        }
                        previous[j] = column;
                    }
                }
                for (j, column) in previous.into_iter().enumerate() {
                    // SAFETY: carry slot c0+j (caller's contract).
                    unsafe { _mm512_storeu_pd(kept.add(j * 8), column) };
                }
            }
            t0 = next;
        }
        // SAFETY: the caller's ranges and carry (this function's contract).
        unsafe { flush_carry(dst, ldd, carry, &starts, full_rows, full_cols) };
    }
    // SAFETY: the panel's last columns and rows, inside the caller's ranges.
    unsafe { transpose_panel_edges(src, lds, dst, ldd, (rows, width), (full_rows, full_cols)) }
}

/// [`transpose_panel_tiled_avx512`] when every destination row starts a line: each 8×8
/// block's columns are whole destination lines, so no carry and no permutes.
///
/// # Safety
/// As [`transpose_panel_tiled_avx512`] without the carry, and `dst + c·ldd` 64-byte aligned
/// for every `c` (`ldd` a multiple of 8); the CPU must support AVX-512F.
#[target_feature(enable = "avx512f")]
unsafe fn transpose_panel_tiled_aligned_avx512(
    src: *const f64,
    lds: isize,
    dst: *mut f64,
    ldd: isize,
    shape: (usize, usize),
    tiles: (usize, usize),
) {
    // SAFETY: this function's contract.
    unsafe { tiled_aligned::<Avx512Lines>(src, lds, dst, ldd, shape, tiles) }
}

/// [`transpose_panel_tiled_aligned_avx512`] for AVX2.
///
/// # Safety
/// As [`transpose_panel_tiled_aligned_avx512`], with AVX2 in place of AVX-512F.
#[target_feature(enable = "avx2")]
unsafe fn transpose_panel_tiled_aligned_avx2(
    src: *const f64,
    lds: isize,
    dst: *mut f64,
    ldd: isize,
    shape: (usize, usize),
    tiles: (usize, usize),
) {
    // SAFETY: this function's contract.
    unsafe { tiled_aligned::<Avx2Lines>(src, lds, dst, ldd, shape, tiles) }
}

/// The loop nest of the aligned tiled kernels, inlined into each instruction set's kernel.
///
/// # Safety
/// As [`transpose_panel_tiled_aligned_avx512`], with `K`'s instruction set available.
#[inline(always)]
unsafe fn tiled_aligned<K: LineBlock>(
    src: *const f64,
    lds: isize,
    dst: *mut f64,
    ldd: isize,
    (rows, width): (usize, usize),
    (tile_rows, ahead_bytes): (usize, usize),
) {
    debug_assert!(rows_on_lines(dst, ldd) && tile_rows > 0 && tile_rows.is_multiple_of(8));
    let full_rows = rows / 8 * 8;
    let full_cols = width / 8 * 8;
    if full_rows > 0 && full_cols > 0 {
        let mut ahead = TileAhead::start(src, lds, (tile_rows, full_rows), width, ahead_bytes);
        let mut t0 = 0;
        while t0 < full_rows {
            let height = tile_rows.min(full_rows - t0);
            let next = t0 + height;
            ahead.next_tile(next, height);
            for c0 in (0..full_cols).step_by(8) {
                for r0 in (t0..next).step_by(8) {
                    ahead.before_block(r0, c0);
                    let block = src.wrapping_offset(r0 as isize * lds).wrapping_add(c0);
                    // SAFETY: rows r0..r0+8, columns c0..c0+8 are in range; each destination
                    // row's elements r0..r0+8 are one line (the rows start lines, r0 a
                    // multiple of 8).
                    unsafe { K::stream_block(block, lds, dst, ldd, (r0, c0)) };
                }
            }
            t0 = next;
        }
    }
    // SAFETY: the panel's last columns and rows, inside the caller's ranges.
    unsafe { transpose_panel_edges(src, lds, dst, ldd, (rows, width), (full_rows, full_cols)) }
}
