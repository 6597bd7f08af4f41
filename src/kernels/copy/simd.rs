//! The copy engine's micro-kernels: SIMD transposes, streaming runs (`simd/stream.rs`) and
//! prefetch hints.
//!
//! Most of the engine's unsafe code is here; the rest is the parent module's raw-pointer loop
//! nests (`RawCopy`, `copy_run`, the panel drivers), which call these kernels. Each kernel works
//! on raw pointers the engine derived from slices whose bounds it validated once (see
//! `super::validate`); every `unsafe fn` here states the ranges it touches in its `# Safety`
//! section. The instruction set is picked at run time ([`Isa::detect`]): AVX-512F,
//! AVX2 (4×4 blocks), or portable scalar code.
//!
//! Elements are moved as opaque 8-byte values through `f64` registers: the kernels only load,
//! shuffle and store, which preserves every bit pattern (no arithmetic, no NaN canonicalisation).

#[cfg(target_arch = "x86_64")]
use std::arch::x86_64 as arch;

use super::plan::KernelSet;

mod stream;
pub(crate) use stream::{store_fence, stream_copy_f64, stream_run};

/// The instruction set the kernels use on this CPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Isa {
    Avx512,
    Avx2,
    Portable,
}

impl Isa {
    /// The best instruction set this CPU supports (`is_x86_feature_detected!` caches its answer).
    pub(crate) fn detect() -> Self {
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx512f") {
                return Isa::Avx512;
            }
            if std::arch::is_x86_feature_detected!("avx2") {
                return Isa::Avx2;
            }
        }
        Isa::Portable
    }

    /// This instruction set, or a lesser one if `limit` asks for it.
    pub(crate) fn limited_to(self, limit: KernelSet) -> Self {
        match (self, limit) {
            (_, KernelSet::Portable) => Isa::Portable,
            (Isa::Avx512, KernelSet::Avx2) => Isa::Avx2,
            (isa, _) => isa,
        }
    }
}

/// Bytes in a cache line on every CPU the engine targets (also the size of one zmm register).
pub(crate) const LINE_BYTES: usize = 64;

/// One 8×8 block of a transpose: `dst[c·ldd + r] = src[r·lds + c]` for `r, c < 8`.
///
/// With `stream`, the eight destination rows are written with non-temporal stores.
///
/// # Safety
/// For every `r, c < 8`, `src + r·lds + c` must be valid for reads and `dst + c·ldd + r` valid
/// for writes, the two sets must not overlap, and with `stream` every `dst + c·ldd` must be
/// 64-byte aligned.
#[inline(always)]
pub(crate) unsafe fn transpose8x8(
    isa: Isa,
    stream: bool,
    src: *const f64,
    lds: isize,
    dst: *mut f64,
    ldd: isize,
) {
    #[cfg(target_arch = "x86_64")]
    match isa {
        Isa::Avx512 => {
            // SAFETY: Isa::Avx512 only exists when the CPU has AVX-512F; ranges as documented.
            return unsafe {
                if stream {
                    transpose8x8_avx512::<true>(src, lds, dst, ldd)
                } else {
                    transpose8x8_avx512::<false>(src, lds, dst, ldd)
                }
            };
        }
        // SAFETY: Isa::Avx2 only exists when the CPU has AVX2; ranges as documented.
        Isa::Avx2 => return unsafe { transpose8x8_avx2(src, lds, dst, ldd) },
        Isa::Portable => {}
    }
    let _ = (isa, stream);
    // SAFETY: as documented above.
    unsafe { transpose_scalar(src, lds, dst, ldd, 8, 8) }
}

/// `dst[c·ldd + r] = src[r·lds + c]` for `r < rows`, `c < cols`, element by element (edges of a
/// tile, and the portable path).
///
/// # Safety
/// Every `src + r·lds + c` valid for reads, every `dst + c·ldd + r` valid for writes, no overlap.
#[inline(always)]
pub(crate) unsafe fn transpose_scalar(
    src: *const f64,
    lds: isize,
    dst: *mut f64,
    ldd: isize,
    rows: usize,
    cols: usize,
) {
    for c in 0..cols {
        for r in 0..rows {
            // SAFETY: r < rows and c < cols, inside the caller's documented ranges.
            unsafe {
                *dst.offset(c as isize * ldd + r as isize) =
                    *src.offset(r as isize * lds + c as isize)
            };
        }
    }
}

/// The edges a panel kernel's 8×8 blocks leave: columns `full_cols..width` of the first
/// `full_rows` rows, then rows `full_rows..rows` whole.
///
/// # Safety
/// As [`transpose_scalar`] for the whole `rows × width` panel; `full_rows ≤ rows` and
/// `full_cols ≤ width`.
#[inline(always)]
pub(crate) unsafe fn transpose_panel_edges(
    src: *const f64,
    lds: isize,
    dst: *mut f64,
    ldd: isize,
    (rows, width): (usize, usize),
    (full_rows, full_cols): (usize, usize),
) {
    // SAFETY: both pieces lie inside the panel the caller vouches for.
    unsafe {
        transpose_scalar(
            src.wrapping_add(full_cols),
            lds,
            dst.wrapping_offset(full_cols as isize * ldd),
            ldd,
            full_rows,
            width - full_cols,
        );
        transpose_scalar(
            src.wrapping_offset(full_rows as isize * lds),
            lds,
            dst.wrapping_add(full_rows),
            ldd,
            rows - full_rows,
            width,
        );
    }
}

/// # Safety
/// As [`transpose8x8`], and the CPU must support AVX-512F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn transpose8x8_avx512<const STREAM: bool>(
    src: *const f64,
    lds: isize,
    dst: *mut f64,
    ldd: isize,
) {
    // SAFETY: the caller's contract covers the 8×8 source block.
    let columns = unsafe { load_columns_avx512(src, lds) };
    for (c, column) in columns.into_iter().enumerate() {
        let out = dst.wrapping_offset(c as isize * ldd);
        // SAFETY: dst + c·ldd .. +8 is writable; with STREAM it is 64-byte aligned.
        unsafe {
            if STREAM {
                arch::_mm512_stream_pd(out, column);
            } else {
                arch::_mm512_storeu_pd(out, column);
            }
        }
    }
}

/// Loads the 8×8 block `src[r·lds + c]` and returns its columns: element `r` of register `c`
/// is `src[r·lds + c]`.
///
/// # Safety
/// `src + r·lds + c` readable for `r, c < 8`; the CPU must support AVX-512F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
#[inline]
unsafe fn load_columns_avx512(src: *const f64, lds: isize) -> [arch::__m512d; 8] {
    use arch::*;
    // Stage 1 is done by the loads: register `pair` holds 4 columns of rows p and p+2 (its two
    // 256-bit halves), for the row pairs (0,2), (1,3), (4,6), (5,7); left and right halves of
    // the block separately. Only 16 shuffles remain (a plain 8×8 transpose takes 24).
    let half = |row: isize, col: usize| src.wrapping_offset(row * lds).wrapping_add(col);
    // SAFETY: rows 0..8, columns 0..8 at stride lds are readable (caller's contract).
    let load = |low: isize, col: usize| unsafe {
        _mm512_insertf64x4::<1>(
            _mm512_castpd256_pd512(_mm256_loadu_pd(half(low, col))),
            _mm256_loadu_pd(half(low + 2, col)),
        )
    };
    let mut out = [_mm512_setzero_pd(); 8];
    for (side, col) in [(0usize, 0usize), (1, 4)] {
        let a0 = load(0, col);
        let a1 = load(1, col);
        let a2 = load(4, col);
        let a3 = load(5, col);
        // x_lo = [r0c0 r1c0 r0c2 r1c2 | r2c0 r3c0 r2c2 r3c2] (columns col+0, col+2), etc.
        let x_lo = _mm512_unpacklo_pd(a0, a1);
        let x_hi = _mm512_unpackhi_pd(a0, a1);
        let y_lo = _mm512_unpacklo_pd(a2, a3);
        let y_hi = _mm512_unpackhi_pd(a2, a3);
        out[side * 4] = _mm512_shuffle_f64x2::<0b10_00_10_00>(x_lo, y_lo);
        out[side * 4 + 1] = _mm512_shuffle_f64x2::<0b10_00_10_00>(x_hi, y_hi);
        out[side * 4 + 2] = _mm512_shuffle_f64x2::<0b11_01_11_01>(x_lo, y_lo);
        out[side * 4 + 3] = _mm512_shuffle_f64x2::<0b11_01_11_01>(x_hi, y_hi);
    }
    out
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
///
/// # Safety
/// For every `b < batch`, `r < rows`, `c < width`: `src + b·batch_src + r·lds + c` readable,
/// `dst + b·batch_dst + c·ldd + r` writable, all destination elements distinct and disjoint
/// from the source; `dst`, `ldd` and `batch_dst` line-aligned (`dst` on 64 bytes, the strides
/// multiples of 8); `step_rows` a positive multiple of 8; the CPU must support AVX-512F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn transpose_panel_stream_avx512(
    src: *const f64,
    lds: isize,
    dst: *mut f64,
    ldd: isize,
    rows: usize,
    width: usize,
    (batch, batch_src, batch_dst): (usize, isize, isize),
    (prefetch_steps, step_rows, prefetch_panels): (usize, usize, usize),
) {
    debug_assert!(
        (dst as usize).is_multiple_of(LINE_BYTES)
            && ldd % 8 == 0
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
                    // SAFETY: rows r0..r0+8, columns c0..c0+8 of panel b are in range.
                    let columns = unsafe { load_columns_avx512(src_step, lds) };
                    for (j, column) in columns.into_iter().enumerate() {
                        let out = dst_b.wrapping_offset((c0 + j) as isize * ldd + r0 as isize);
                        // SAFETY: elements r0..r0+8 of destination row c0+j of panel b exist
                        // and start a line (everything line-aligned, r0 a multiple of 8).
                        unsafe { arch::_mm512_stream_pd(out, column) };
                    }
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

/// # Safety
/// As [`transpose8x8`], and the CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn transpose8x8_avx2(src: *const f64, lds: isize, dst: *mut f64, ldd: isize) {
    for (rb, cb) in [(0isize, 0isize), (0, 4), (4, 0), (4, 4)] {
        // SAFETY: a 4×4 quarter of the caller's 8×8 block.
        unsafe {
            transpose4x4_avx(
                src.offset(rb * lds + cb),
                lds,
                dst.offset(cb * ldd + rb),
                ldd,
            )
        };
    }
}

/// # Safety
/// `src + r·lds + c` readable and `dst + c·ldd + r` writable for `r, c < 4`; AVX available.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn transpose4x4_avx(src: *const f64, lds: isize, dst: *mut f64, ldd: isize) {
    use arch::*;
    // SAFETY: four rows of four elements are readable (caller's contract).
    let r: [__m256d; 4] =
        std::array::from_fn(|i| unsafe { _mm256_loadu_pd(src.offset(i as isize * lds)) });
    let t0 = _mm256_unpacklo_pd(r[0], r[1]);
    let t1 = _mm256_unpackhi_pd(r[0], r[1]);
    let t2 = _mm256_unpacklo_pd(r[2], r[3]);
    let t3 = _mm256_unpackhi_pd(r[2], r[3]);
    let columns = [
        _mm256_permute2f128_pd::<0x20>(t0, t2),
        _mm256_permute2f128_pd::<0x20>(t1, t3),
        _mm256_permute2f128_pd::<0x31>(t0, t2),
        _mm256_permute2f128_pd::<0x31>(t1, t3),
    ];
    for (c, column) in columns.into_iter().enumerate() {
        // SAFETY: dst + c·ldd .. +4 is writable.
        unsafe { _mm256_storeu_pd(dst.offset(c as isize * ldd), column) };
    }
}

/// Hints the CPU to fetch the line holding `ptr` into L2 (a hint: never faults); L2 rather
/// than L1 because the staged tile already fills L1 and L1 tracks few misses at once
/// (`T0` and `NTA` lost: `docs/copy-engine.md#prefetch`).
#[inline(always)]
pub(crate) fn prefetch(ptr: *const f64) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetch instructions do not access memory architecturally and never fault, even
    // for addresses outside any allocation.
    unsafe {
        arch::_mm_prefetch::<{ arch::_MM_HINT_T1 }>(ptr.cast())
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = ptr;
}

/// Where the lines of a panel's destination rows start: for destination row `j < 8` of every
/// 8-column block, `k_j` in 1..=8 (8 when the row starts a line), and the two-source permute
/// index that joins a column with the previous block's into the line holding rows
/// `r0+k_j-8 .. r0+k_j`.
#[cfg(target_arch = "x86_64")]
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
#[cfg(target_arch = "x86_64")]
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
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn transpose_panel_stream_skewed_avx512(
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
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn transpose_panel_tiled_avx512(
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
                rows,
                width,
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

/// What a tiled panel prefetches as it walks its tiles (column blocks outermost, each swept
/// down the tile's rows).
struct TileAhead {
    src: *const f64,
    lds: isize,
    tile_rows: usize,
    /// Rows of the panel in whole 8-row blocks.
    full_rows: usize,
    width: usize,
    /// Rows of the tile being walked.
    height: usize,
    how: Ahead,
}

enum Ahead {
    /// The next tile, row by row, spread evenly over the current tile's blocks.
    NextTile {
        lines: TilePrefetch,
        per_block: usize,
    },
    /// Before each block, the same rows `columns` further on in the walk: past the panel's
    /// last whole block, the next tile's rows from its first column. Every line, not every
    /// second one: the L2's adjacent-line prefetcher does not make up the difference
    /// (`docs/copy-engine.md#prefetch`).
    Walk { columns: usize },
}

impl TileAhead {
    /// Prefetching for a panel of `full_rows` whole-block rows cut into `tile_rows`-row tiles:
    /// `ahead_bytes` along the walk, or (0) tile by tile, whose first tile is fetched now.
    fn start(
        src: *const f64,
        lds: isize,
        (tile_rows, full_rows): (usize, usize),
        width: usize,
        ahead_bytes: usize,
    ) -> Self {
        let how = if ahead_bytes > 0 {
            Ahead::Walk {
                columns: ahead_bytes.div_ceil(LINE_BYTES) * 8,
            }
        } else {
            TilePrefetch::new(src, lds, tile_rows.min(full_rows), width).issue(usize::MAX);
            Ahead::NextTile {
                lines: TilePrefetch::new(src, lds, 0, width),
                per_block: 0,
            }
        };
        TileAhead {
            src,
            lds,
            tile_rows,
            full_rows,
            width,
            height: tile_rows,
            how,
        }
    }

    /// The walk enters the tile of `height` rows ending at row `next`.
    fn next_tile(&mut self, next: usize, height: usize) {
        self.height = height;
        if let Ahead::NextTile { lines, per_block } = &mut self.how {
            *lines = TilePrefetch::new(
                self.src.wrapping_offset(next as isize * self.lds),
                self.lds,
                self.tile_rows.min(self.full_rows - next),
                self.width,
            );
            let blocks = height / 8 * (self.width / 8);
            *per_block = lines.remaining.div_ceil(blocks.max(1));
        }
    }

    /// The walk is about to read the block of rows `r0..r0+8`, columns `c0..c0+8`.
    #[inline(always)]
    fn before_block(&mut self, r0: usize, c0: usize) {
        match &mut self.how {
            Ahead::NextTile { lines, per_block } => lines.issue(*per_block),
            Ahead::Walk { columns } => {
                let full_cols = self.width / 8 * 8;
                let target = c0 + *columns;
                let (row, col) = if target < full_cols {
                    (r0, target)
                } else {
                    (r0 + self.height, target - full_cols)
                };
                if row + 8 <= self.full_rows && col < full_cols {
                    let first = self
                        .src
                        .wrapping_offset(row as isize * self.lds + col as isize);
                    for k in 0..8 {
                        prefetch(first.wrapping_offset(k * self.lds));
                    }
                }
            }
        }
    }
}

/// The next lines of a tile to prefetch, row by row (front to back along each source row, as
/// the hardware prefetchers would), without a division per line.
#[derive(Clone, Copy)]
struct TilePrefetch {
    row: *const f64,
    col: usize,
    width: usize,
    lds: isize,
    remaining: usize,
}

impl TilePrefetch {
    /// The `rows` source rows of `width` columns from `first` (none if `rows == 0`).
    fn new(first: *const f64, lds: isize, rows: usize, width: usize) -> Self {
        TilePrefetch {
            row: first,
            col: 0,
            width,
            lds,
            remaining: rows * width.div_ceil(8),
        }
    }

    /// Requests up to `lines` more prefetches.
    #[inline(always)]
    fn issue(&mut self, lines: usize) {
        for _ in 0..lines.min(self.remaining) {
            prefetch(self.row.wrapping_add(self.col));
            self.col += 8;
            if self.col >= self.width {
                self.col = 0;
                self.row = self.row.wrapping_offset(self.lds);
            }
        }
        self.remaining = self.remaining.saturating_sub(lines);
    }
}

/// [`transpose_panel_tiled_avx512`] when every destination row starts a line: each 8×8
/// block's columns are whole destination lines, so no carry and no permutes.
///
/// # Safety
/// As [`transpose_panel_tiled_avx512`], and `dst + c·ldd` 64-byte aligned for every `c < 8`
/// (hence for every `c`, `ldd` being a multiple of 8).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn transpose_panel_tiled_aligned_avx512(
    src: *const f64,
    lds: isize,
    dst: *mut f64,
    ldd: isize,
    rows: usize,
    width: usize,
    (tile_rows, ahead_bytes): (usize, usize),
) {
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
                    // SAFETY: rows r0..r0+8, columns c0..c0+8 are in range.
                    let columns = unsafe {
                        load_columns_avx512(src.wrapping_offset(r0 as isize * lds).add(c0), lds)
                    };
                    for (j, column) in columns.into_iter().enumerate() {
                        let out = dst.wrapping_offset((c0 + j) as isize * ldd + r0 as isize);
                        // SAFETY: elements r0..r0+8 of destination row c0+j: in range, and a
                        // whole line (the row starts a line, r0 is a multiple of 8).
                        unsafe { arch::_mm512_stream_pd(out, column) };
                    }
                }
            }
            t0 = next;
        }
    }
    // SAFETY: the panel's last columns and rows, inside the caller's ranges.
    unsafe { transpose_panel_edges(src, lds, dst, ldd, (rows, width), (full_rows, full_cols)) }
}
