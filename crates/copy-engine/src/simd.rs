//! The copy engine's micro-kernels: SIMD 8×8 transposes, streaming runs (`simd/stream.rs`),
//! streamed transpose panels (`simd/panel.rs`) and prefetch hints.
//!
//! Most of the engine's unsafe code is here; the rest is the parent module's raw-pointer loop
//! nests (`RawCopy`, `copy_run`, the panel drivers), which call these kernels. Each kernel works
//! on raw pointers the engine derived from slices whose bounds it validated once (see
//! `super::validate`); every `unsafe fn` here states the ranges it touches in its `# Safety`
//! section. The instruction set is picked at run time ([`Isa::detect`]): AVX-512F,
//! AVX2 (8×8 blocks from 4×4 ones), or portable scalar code.
//!
//! Elements are moved as opaque 8-byte values through `f64` registers: the kernels only load,
//! shuffle and store, which preserves every bit pattern (no arithmetic, no NaN canonicalisation).

#[cfg(target_arch = "x86_64")]
use std::arch::x86_64 as arch;

use super::plan::KernelSet;

#[cfg(target_arch = "x86_64")]
mod joined_avx2;
#[cfg(target_arch = "x86_64")]
mod panel;
mod stream;
#[cfg(target_arch = "x86_64")]
mod tile_ahead;
#[cfg(target_arch = "x86_64")]
pub(crate) use panel::{transpose_panel_stream, transpose_panel_swept, transpose_panel_tiled};
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

/// One 8×8 block of a transpose into the L1 stage: `dst[c·ldd + r] = src[r·lds + c]` for
/// `r, c < 8`, with regular stores (the streamed kernels write lines in `simd/panel.rs`).
///
/// # Safety
/// For every `r, c < 8`, `src + r·lds + c` must be valid for reads and `dst + c·ldd + r` valid
/// for writes, and the two sets must not overlap.
#[inline(always)]
pub(crate) unsafe fn transpose8x8(
    isa: Isa,
    src: *const f64,
    lds: isize,
    dst: *mut f64,
    ldd: isize,
) {
    #[cfg(target_arch = "x86_64")]
    match isa {
        // SAFETY: Isa::Avx512 only exists when the CPU has AVX-512F; ranges as documented.
        Isa::Avx512 => return unsafe { transpose8x8_avx512(src, lds, dst, ldd) },
        // SAFETY: Isa::Avx2 only exists when the CPU has AVX2; ranges as documented.
        Isa::Avx2 => return unsafe { transpose8x8_avx2(src, lds, dst, ldd) },
        Isa::Portable => {}
    }
    let _ = isa;
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
#[inline]
unsafe fn transpose8x8_avx512(src: *const f64, lds: isize, dst: *mut f64, ldd: isize) {
    // SAFETY: the caller's contract covers the 8×8 source block.
    let columns = unsafe { load_columns_avx512(src, lds) };
    for (c, column) in columns.into_iter().enumerate() {
        // SAFETY: dst + c·ldd .. +8 is writable.
        unsafe { arch::_mm512_storeu_pd(dst.wrapping_offset(c as isize * ldd), column) };
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

/// # Safety
/// As [`transpose8x8`], and the CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn transpose8x8_avx2(src: *const f64, lds: isize, dst: *mut f64, ldd: isize) {
    use arch::*;
    // Four columns at a time: 8 registers live (AVX2 has 16).
    for col in [0usize, 4] {
        // SAFETY: the two 4×4 quarters of columns col..col+4 lie in the caller's 8×8 block.
        let (top, bottom) = unsafe {
            (
                columns4x4_avx(src.wrapping_add(col), lds),
                columns4x4_avx(src.wrapping_offset(4 * lds).wrapping_add(col), lds),
            )
        };
        for (k, (first, second)) in top.into_iter().zip(bottom).enumerate() {
            let out = dst.wrapping_offset((col + k) as isize * ldd);
            // SAFETY: dst + c·ldd .. +8 is writable.
            unsafe {
                _mm256_storeu_pd(out, first);
                _mm256_storeu_pd(out.add(4), second);
            }
        }
    }
}

/// The columns of the 4×4 block `src[r·lds + c]`: element `r` of register `c` is
/// `src[r·lds + c]`.
///
/// # Safety
/// `src + r·lds + c` readable for `r, c < 4`; the CPU must support AVX.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn columns4x4_avx(src: *const f64, lds: isize) -> [arch::__m256d; 4] {
    use arch::*;
    // SAFETY: four rows of four elements are readable (caller's contract).
    let r: [__m256d; 4] =
        std::array::from_fn(|i| unsafe { _mm256_loadu_pd(src.offset(i as isize * lds)) });
    let t0 = _mm256_unpacklo_pd(r[0], r[1]);
    let t1 = _mm256_unpackhi_pd(r[0], r[1]);
    let t2 = _mm256_unpacklo_pd(r[2], r[3]);
    let t3 = _mm256_unpackhi_pd(r[2], r[3]);
    [
        _mm256_permute2f128_pd::<0x20>(t0, t2),
        _mm256_permute2f128_pd::<0x20>(t1, t3),
        _mm256_permute2f128_pd::<0x31>(t0, t2),
        _mm256_permute2f128_pd::<0x31>(t1, t3),
    ]
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
