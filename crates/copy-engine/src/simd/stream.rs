//! Streaming copies: contiguous runs with non-temporal stores for the destination's whole
//! cache lines (AVX-512F, AVX or portable), and the store fence that orders them. Every
//! `unsafe fn` states the ranges it touches in its `# Safety` section.

#[cfg(target_arch = "x86_64")]
use std::arch::x86_64 as arch;

use super::{Isa, LINE_BYTES};

/// Copies `src` to `dst` (equal lengths), streaming every fully covered destination line.
pub(crate) fn stream_copy_f64(src: &[f64], dst: &mut [f64]) {
    debug_assert_eq!(src.len(), dst.len());
    let len = src.len().min(dst.len());
    // SAFETY: both slices hold `len` elements and a `&mut` slice never overlaps a `&` slice.
    unsafe { stream_run(Isa::detect(), src.as_ptr(), dst.as_mut_ptr(), len) };
    store_fence();
}

/// Copies `len` contiguous 8-byte elements from `src` to `dst`, with non-temporal stores for the
/// destination's whole cache lines and regular stores for the partial lines at either end.
/// The caller calls [`store_fence`] once after its last run (a fence per run would wait for
/// every run's write-combining buffers to drain).
///
/// # Safety
/// `src..src+len` must be valid for reads and `dst..dst+len` valid for writes, both aligned
/// to 8 bytes, and the two ranges must not overlap.
pub(crate) unsafe fn stream_run(isa: Isa, src: *const f64, dst: *mut f64, len: usize) {
    let misalignment = (dst as usize % LINE_BYTES) / size_of::<f64>();
    let head = if misalignment == 0 {
        0
    } else {
        (8 - misalignment).min(len)
    };
    // SAFETY: head <= len, so both ranges are inside the caller's ranges.
    unsafe { std::ptr::copy_nonoverlapping(src, dst, head) };
    let body = (len - head) / 8 * 8;
    // SAFETY: dst+head is line-aligned (or head == len and body == 0); head+body <= len.
    unsafe { stream_lines(isa, src.add(head), dst.add(head), body / 8) };
    let done = head + body;
    // SAFETY: done <= len.
    unsafe { std::ptr::copy_nonoverlapping(src.add(done), dst.add(done), len - done) };
}

/// Copies `lines` whole cache lines (8 elements each) with non-temporal stores.
///
/// # Safety
/// `src..src+8·lines` valid for reads, `dst..dst+8·lines` valid for writes and 64-byte aligned
/// (when `lines > 0`), no overlap.
unsafe fn stream_lines(isa: Isa, src: *const f64, dst: *mut f64, lines: usize) {
    #[cfg(target_arch = "x86_64")]
    match isa {
        // SAFETY: Isa::Avx512 is only produced when the CPU has AVX-512F; ranges as above.
        Isa::Avx512 => return unsafe { stream_lines_avx512(src, dst, lines) },
        // SAFETY: Isa::Avx2 implies AVX; ranges as above.
        Isa::Avx2 => return unsafe { stream_lines_avx(src, dst, lines) },
        Isa::Portable => {}
    }
    let _ = isa;
    // SAFETY: as documented above.
    unsafe { std::ptr::copy_nonoverlapping(src, dst, lines * 8) };
}

/// # Safety
/// As [`stream_lines`], and the CPU must support AVX-512F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn stream_lines_avx512(src: *const f64, dst: *mut f64, lines: usize) {
    for line in 0..lines {
        // SAFETY: line < lines, so both 8-element accesses are in range; dst is line-aligned.
        unsafe {
            let v = arch::_mm512_loadu_pd(src.add(line * 8));
            arch::_mm512_stream_pd(dst.add(line * 8), v);
        }
    }
}

/// # Safety
/// As [`stream_lines`], and the CPU must support AVX.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
unsafe fn stream_lines_avx(src: *const f64, dst: *mut f64, lines: usize) {
    for line in 0..lines {
        // SAFETY: both halves of the line are in range; dst+8·line is 64-byte aligned.
        unsafe {
            let lo = arch::_mm256_loadu_pd(src.add(line * 8));
            let hi = arch::_mm256_loadu_pd(src.add(line * 8 + 4));
            arch::_mm256_stream_pd(dst.add(line * 8), lo);
            arch::_mm256_stream_pd(dst.add(line * 8 + 4), hi);
        }
    }
}

/// Orders earlier non-temporal stores before later stores (a no-op without them).
pub(crate) fn store_fence() {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: sfence has no memory operands; SSE is part of the x86-64 baseline.
    unsafe {
        arch::_mm_sfence()
    };
}
