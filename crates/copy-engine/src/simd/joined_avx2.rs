//! AVX2's streamed panel kernels for destination rows that start mid-line (an N×N transpose
//! with N = 4097, say): each 8×8 block's columns joined with the previous block's into whole
//! destination lines in registers, then written by non-temporal stores, as AVX-512 does with
//! one two-source permute (`panel.rs`). Without this, such panels went through the L1 stage on
//! AVX2. The walks (8-row sweeps, tiles) are the AVX-512 kernels' walks.

use std::arch::x86_64 as arch;

use arch::{__m256d, __m256i};

use super::tile_ahead::TileAhead;
use super::{columns4x4_avx, prefetch, transpose_panel_edges};

/// How the lines of one destination row of every 8-column block are joined: its lines begin
/// at the rows `≡ k (mod 8)`, `k` in 1..=8 (8 when the row starts a line), so the line a block
/// completes holds rows `r0+k-8 .. r0+k`: lanes `k..k+8` of the previous block's column (two
/// halves `a`, `b`) followed by this block's (`c`, `d`).
#[derive(Clone, Copy)]
struct LineJoin {
    k: usize,
    /// Each half of the line takes lane `(s+t) mod 4` of a pair of registers into lane `t`
    /// (`s` = `k`, or `k - 4` when the line starts in `b`), as 32-bit lane indices.
    rotate: __m256i,
    /// Lanes `t` with `s + t ≥ 4` come from the later register of the pair (sign bits set).
    later: __m256d,
}

/// The joins of destination rows `dst + j·ldd`, `j < 8`. Because a panel's column blocks
/// start at multiples of 8, `k` depends only on the column modulo 8: eight joins serve the
/// whole panel.
#[target_feature(enable = "avx2")]
fn line_joins(dst: *mut f64, ldd: isize) -> [LineJoin; 8] {
    use arch::*;
    let mut joins = [LineJoin {
        k: 8,
        rotate: _mm256_setzero_si256(),
        later: _mm256_setzero_pd(),
    }; 8];
    for (j, join) in joins.iter_mut().enumerate() {
        let row = dst.wrapping_offset(j as isize * ldd) as usize / size_of::<f64>();
        let k = 8 - row % 8;
        let s = if k > 4 { k - 4 } else { k };
        let mut lanes = [0i32; 8];
        let mut later = [0i64; 4];
        for t in 0..4 {
            let from = ((s + t) % 4) as i32;
            lanes[2 * t] = 2 * from;
            lanes[2 * t + 1] = 2 * from + 1;
            later[t] = if s + t >= 4 { -1 } else { 0 };
        }
        *join = LineJoin {
            k,
            rotate: _mm256_setr_epi32(
                lanes[0], lanes[1], lanes[2], lanes[3], lanes[4], lanes[5], lanes[6], lanes[7],
            ),
            later: _mm256_castsi256_pd(_mm256_setr_epi64x(later[0], later[1], later[2], later[3])),
        };
    }
    joins
}

/// `v`'s lanes rotated as `join` says (one cross-lane permute).
#[target_feature(enable = "avx2")]
#[inline]
fn rotated(v: __m256d, join: &LineJoin) -> __m256d {
    use arch::*;
    _mm256_castps_pd(_mm256_permutevar8x32_ps(_mm256_castpd_ps(v), join.rotate))
}

/// The line `join` describes, from the previous block's column (`a`, `b`) and this block's
/// (`c`, `d`): its two halves, lanes `k..k+4` and `k+4..k+8` of `a b c d`.
#[target_feature(enable = "avx2")]
#[inline]
fn joined_line(join: &LineJoin, [a, b, c, d]: [__m256d; 4]) -> (__m256d, __m256d) {
    use arch::*;
    let (x, y, z) = if join.k > 4 { (b, c, d) } else { (a, b, c) };
    let (x, y, z) = (rotated(x, join), rotated(y, join), rotated(z, join));
    (
        _mm256_blendv_pd(x, y, join.later),
        _mm256_blendv_pd(y, z, join.later),
    )
}

/// One 8×8 block `block[r·lds + c]` (`r, c < 8`) of a panel at rows `r0..r0+8`, columns
/// `c0..c0+8`: for each column `c`, the line of destination row `c` that ends inside this
/// block is joined with the previous block's column (kept in `carry` slot `c`) and streamed;
/// this block's column then replaces it in the carry. On the first block row (`r0 == 0`) the
/// rows `0..k` of each destination row, the part of its first line inside the row, are
/// written with regular stores instead.
///
/// # Safety
/// `block + r·lds + c` readable for `r, c < 8`; for each `c < 8`, destination row
/// `dst + (c0 + c)·ldd` writable at elements `0..8` when `r0 == 0`, else at
/// `r0 + k - 8 .. r0 + k`; `carry` slots `c0..c0+8` (8 elements each) writable; the source,
/// destination and carry disjoint; `joins` from [`line_joins`] of this `dst` and `ldd`; the
/// CPU supports AVX2.
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn stream_joined_block(
    block: *const f64,
    lds: isize,
    dst: *mut f64,
    ldd: isize,
    (r0, c0): (usize, usize),
    carry: *mut f64,
    joins: &[LineJoin; 8],
) {
    use arch::*;
    // Four columns at a time: 8 registers live for the columns (AVX2 has 16).
    for half in [0usize, 4] {
        // SAFETY: the two 4×4 quarters of columns half..half+4 lie in the caller's block.
        let (top, bottom) = unsafe {
            (
                columns4x4_avx(block.wrapping_add(half), lds),
                columns4x4_avx(block.wrapping_offset(4 * lds).wrapping_add(half), lds),
            )
        };
        for (i, (c, d)) in top.into_iter().zip(bottom).enumerate() {
            let j = half + i;
            let join = &joins[j];
            let row = dst.wrapping_offset((c0 + j) as isize * ldd);
            let kept = carry.wrapping_add((c0 + j) * 8);
            // SAFETY: carry slot c0+j and the destination elements named in the contract;
            // past the first block row, `row + r0 + k - 8` starts a line of the row (its row
            // index is ≡ k mod 8), so the non-temporal stores are aligned.
            unsafe {
                if r0 == 0 {
                    _mm256_storeu_pd(kept, c);
                    _mm256_storeu_pd(kept.add(4), d);
                    std::ptr::copy_nonoverlapping(kept, row, join.k);
                    continue;
                }
                let (a, b) = (_mm256_loadu_pd(kept), _mm256_loadu_pd(kept.add(4)));
                let (first, second) = joined_line(join, [a, b, c, d]);
                let out = row.wrapping_add(r0 + join.k - 8);
                _mm256_stream_pd(out, first);
                _mm256_stream_pd(out.add(4), second);
                _mm256_storeu_pd(kept, c);
                _mm256_storeu_pd(kept.add(4), d);
            }
        }
    }
}

/// Writes what a joined panel still holds only in `carry` after its last block row: rows
/// `full_rows-8+k .. full_rows` of each destination row.
///
/// # Safety
/// `carry` readable for `8·full_cols` elements; for every `c < full_cols` the destination
/// elements `dst + c·ldd + full_rows-8+k_c .. dst + c·ldd + full_rows` writable, disjoint from
/// the carry; `full_rows ≥ 8`.
unsafe fn flush_joined(
    dst: *mut f64,
    ldd: isize,
    carry: *const f64,
    joins: &[LineJoin; 8],
    full_rows: usize,
    full_cols: usize,
) {
    for c in 0..full_cols {
        let k = joins[c % 8].k;
        let from = full_rows - 8 + k;
        // SAFETY: lanes k..8 of carry slot c to rows from..full_rows of row c (the contract).
        unsafe {
            std::ptr::copy_nonoverlapping(
                carry.add(c * 8 + k),
                dst.wrapping_offset(c as isize * ldd).add(from),
                8 - k,
            )
        };
    }
}

/// A column panel streamed 8 rows at a time across its width (the walk of the AVX-512 swept
/// kernel, with the source `prefetch_steps`·8 rows ahead prefetched into L2), to destination
/// rows that may start mid-line: `dst[c·ldd + r] = src[r·lds + c]` for `r < rows`,
/// `c < width`, every whole line but each row's first and last by non-temporal stores.
///
/// # Safety
/// For every `r < rows`, `c < width`: `src + r·lds + c` readable, `dst + c·ldd + r` writable,
/// all destination elements distinct and disjoint from the source; `carry` writable for
/// `8·(width/8·8)` elements and disjoint from both; the CPU must support AVX2.
#[target_feature(enable = "avx2")]
pub(super) unsafe fn transpose_panel_swept_joined_avx2(
    src: *const f64,
    lds: isize,
    dst: *mut f64,
    ldd: isize,
    (rows, width): (usize, usize),
    prefetch_steps: usize,
    carry: *mut f64,
) {
    let full_rows = rows / 8 * 8;
    let full_cols = width / 8 * 8;
    let ahead = prefetch_steps as isize * 8;
    let joins = line_joins(dst, ldd);
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
                // SAFETY: rows r0..r0+8, columns c0..c0+8 are in range, and so are the
                // destination rows' elements a block writes (rows 0..8, or r0+k-8..r0+k);
                // carry slots c0..c0+8 lie in the caller's carry.
                unsafe {
                    stream_joined_block(src_step.add(c0), lds, dst, ldd, (r0, c0), carry, &joins)
                };
            }
        }
        // SAFETY: the caller's ranges and carry; full_rows ≥ 8.
        unsafe { flush_joined(dst, ldd, carry, &joins, full_rows, full_cols) };
    }
    // SAFETY: the panel's last columns and rows, inside the caller's ranges.
    unsafe { transpose_panel_edges(src, lds, dst, ldd, (rows, width), (full_rows, full_cols)) }
}

/// [`transpose_panel_swept_joined_avx2`]'s joins in the walk of the AVX-512 tiled kernel:
/// tiles of `tile_rows` rows, each 8-column block swept down a tile, the source prefetched
/// into L2 a tile ahead (`ahead_bytes == 0`) or `ahead_bytes` along the walk.
///
/// # Safety
/// As [`transpose_panel_swept_joined_avx2`]; `tile_rows` a positive multiple of 8.
#[target_feature(enable = "avx2")]
pub(super) unsafe fn transpose_panel_tiled_joined_avx2(
    src: *const f64,
    lds: isize,
    dst: *mut f64,
    ldd: isize,
    (rows, width): (usize, usize),
    (tile_rows, ahead_bytes): (usize, usize),
    carry: *mut f64,
) {
    debug_assert!(tile_rows > 0 && tile_rows.is_multiple_of(8));
    let full_rows = rows / 8 * 8;
    let full_cols = width / 8 * 8;
    let joins = line_joins(dst, ldd);
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
                    // SAFETY: as in transpose_panel_swept_joined_avx2: the block, the
                    // destination elements it writes and its carry slots are in range.
                    unsafe { stream_joined_block(block, lds, dst, ldd, (r0, c0), carry, &joins) };
                }
            }
            t0 = next;
        }
        // SAFETY: the caller's ranges and carry; full_rows ≥ 8.
        unsafe { flush_joined(dst, ldd, carry, &joins, full_rows, full_cols) };
    }
    // SAFETY: the panel's last columns and rows, inside the caller's ranges.
    unsafe { transpose_panel_edges(src, lds, dst, ldd, (rows, width), (full_rows, full_cols)) }
}
