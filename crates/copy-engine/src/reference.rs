//! Reference streams every bandwidth figure is normalised by: a plain copy, a copy with
//! non-temporal stores, and a read-only streaming sum.
//!
//! The harness times [`plain_copy`] and [`nt_copy`] of the same bytes interleaved with the kernel
//! under test and takes the faster of the two as "the best copy": glibc's `memcpy` switches to
//! non-temporal stores only for very large sizes (~180 MiB on our VMs), so neither alone is the
//! machine's copy bandwidth at every size.

#![forbid(unsafe_code)]

use super::simd;

/// Copies `src` into `dst` with `copy_from_slice` (glibc `memcpy`, regular stores).
///
/// # Panics
/// If the lengths differ (as `copy_from_slice` does); the harness sizes both buffers alike.
pub fn plain_copy<T: Copy>(src: &[T], dst: &mut [T]) {
    dst.copy_from_slice(src);
}

/// Copies `src` into `dst` with non-temporal (streaming) stores for every full cache line of
/// the destination, so the destination never occupies the caches and is not read first.
///
/// Uses AVX-512 or AVX stores when the CPU has them, SSE2 otherwise, and a plain copy on other
/// architectures.
///
/// # Panics
/// If the lengths differ.
pub fn nt_copy(src: &[f64], dst: &mut [f64]) {
    assert_eq!(src.len(), dst.len(), "nt_copy needs equal lengths");
    simd::stream_copy_f64(src, dst);
}

/// Sums `data` with sixteen independent accumulators, so the loop is bound by memory
/// bandwidth, not by the latency of a chain of dependent additions.
pub fn read_sum(data: &[f64]) -> f64 {
    const LANES: usize = 16;
    let mut acc = [0.0f64; LANES];
    let chunks = data.chunks_exact(LANES);
    let tail = chunks.remainder();
    for chunk in chunks {
        for (a, &x) in acc.iter_mut().zip(chunk) {
            *a += x;
        }
    }
    acc.iter().sum::<f64>() + tail.iter().sum::<f64>()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_copy_every_element() {
        for len in [0usize, 1, 7, 8, 9, 63, 64, 65, 1000, 4099] {
            let src: Vec<f64> = (0..len).map(|i| i as f64 * 1.5 - 3.0).collect();
            // Offset the destination by one element so the aligned-head path runs too.
            let mut storage = vec![0.0f64; len + 1];
            nt_copy(&src, &mut storage[1..]);
            assert_eq!(&storage[1..], &src[..], "nt_copy len {len}");
            let mut plain = vec![0.0f64; len];
            plain_copy(&src, &mut plain);
            assert_eq!(plain, src, "plain_copy len {len}");
        }
    }

    #[test]
    fn read_sum_adds_everything() {
        for len in [0usize, 1, 15, 16, 17, 1000] {
            let data: Vec<f64> = (0..len).map(|i| i as f64).collect();
            let expected = (len * len.saturating_sub(1) / 2) as f64;
            assert_eq!(read_sum(&data), expected, "len {len}");
        }
    }
}
