//! Pieces every kernel shares: the data it initialises buffers with, the multi-accumulator sum
//! run (the one inner loop of all summing kernels), the sampled checksum of copies, the seeded
//! cyclic permutation of pointer chases, and typed access to resolved parameters.

#![forbid(unsafe_code)]

use crate::kernels::access::{Element, MAX_BUFFER_ELEMENTS, Mem};
use crate::kernels::spec::{KernelError, ParamValue, Params, PrepareOptions};
use crate::mem::AlignedBuffer;

pub use crate::kernels::access::ACCUMULATORS;

/// The value initialised at storage index `index`: a small positive integer (1..=251), so
/// every sum is exact in f64 whatever the summation order, and neighbouring cells differ.
#[inline]
pub fn cell_value(index: usize) -> f64 {
    (index % 251 + 1) as f64
}

/// Buffer 0 of an instance (its source): `len` elements holding [`cell_value`] at every index.
pub fn filled_buffer(len: usize, options: &PrepareOptions) -> Result<AlignedBuffer, KernelError> {
    let mut buffer = AlignedBuffer::zeroed_shifted(len, options.huge_pages, options.shift_of(0))?;
    for (index, cell) in buffer.iter_mut().enumerate() {
        *cell = cell_value(index);
    }
    Ok(buffer)
}

/// Buffer `buffer` of an instance: `len` zeros (a destination).
pub fn zeroed_buffer(
    len: usize,
    buffer: usize,
    options: &PrepareOptions,
) -> Result<AlignedBuffer, KernelError> {
    Ok(AlignedBuffer::zeroed_shifted(
        len,
        options.huge_pages,
        options.shift_of(buffer),
    )?)
}

/// The accumulators' total (exact: every partial sum is an integer below 2^53).
pub fn fold(acc: &[f64; ACCUMULATORS]) -> f64 {
    acc.iter().sum()
}

/// Number of destination cells a copy kernel's checksum reads back.
pub const CHECK_SAMPLES: usize = 64;

/// The destination indices a copy kernel's checksum reads back: `CHECK_SAMPLES` indices spread
/// evenly over `0..len` (all of them when `len` is smaller), ascending.
pub fn check_indices(len: usize) -> impl Iterator<Item = usize> {
    let samples = len.min(CHECK_SAMPLES);
    (0..samples).map(move |s| s * len / samples)
}

/// The checksum of a copy: the sum of the sampled destination cells, read after the copy (these
/// few loads are part of the run and of its simulated stream). It checks placement, not only
/// that the right values were read.
pub fn sampled_sum<M: Mem>(m: &mut M, buffer: usize, len: usize) -> f64 {
    check_indices(len)
        .map(|index| m.load(buffer, index).to_f64())
        .sum()
}

use crate::stats::SplitMix64;

/// A random cyclic permutation of `0..n` (one cycle through every slot): Sattolo's algorithm
/// over the identity with splitmix64(seed): for i = n-1 down to 1, j = next() mod i, swap `p[i]`
/// and `p[j]`. The chase goes from slot s to slot `p[s]`.
pub fn cyclic_permutation(n: usize, seed: u64) -> Vec<usize> {
    let mut next: Vec<usize> = (0..n).collect();
    let mut rng = SplitMix64::new(seed);
    for i in (1..n).rev() {
        let j = (rng.next_u64() % i as u64) as usize;
        next.swap(i, j);
    }
    next
}

/// Stores a chase link (the storage index of the next element) in an f64 cell, bit for bit:
/// reading it back is a plain integer load, no float conversion on the dependent chain.
#[inline(always)]
pub fn link_to_cell(index: usize) -> f64 {
    f64::from_bits(index as u64)
}

/// The storage index stored by [`link_to_cell`].
#[inline(always)]
pub fn cell_to_link(cell: f64) -> usize {
    cell.to_bits() as usize
}

/// Integer parameter `name` of a resolved parameter set.
pub fn int_param(kernel: &str, params: &Params, name: &str) -> Result<u64, KernelError> {
    match params.get(name) {
        Some(ParamValue::Int(value)) => Ok(*value),
        Some(ParamValue::Text(text)) => Err(KernelError::InvalidParam {
            param: name.to_string(),
            message: format!("expected an integer, got `{text}`"),
        }),
        None => Err(KernelError::MissingParam {
            kernel: kernel.to_string(),
            param: name.to_string(),
        }),
    }
}

/// Integer parameter `name` as a `usize` element count.
pub fn size_param(kernel: &str, params: &Params, name: &str) -> Result<usize, KernelError> {
    let value = int_param(kernel, params, name)?;
    usize::try_from(value).map_err(|_| invalid(name, format!("{value} does not fit in usize")))
}

/// Text parameter `name` of a resolved parameter set.
pub fn text_param<'p>(
    kernel: &str,
    params: &'p Params,
    name: &str,
) -> Result<&'p str, KernelError> {
    match params.get(name) {
        Some(ParamValue::Text(text)) => Ok(text),
        Some(ParamValue::Int(value)) => Err(invalid(
            name,
            format!("expected a word, got the number {value}"),
        )),
        None => Err(KernelError::MissingParam {
            kernel: kernel.to_string(),
            param: name.to_string(),
        }),
    }
}

/// An `InvalidParam` error naming the rule that was broken.
pub fn invalid(param: &str, message: impl Into<String>) -> KernelError {
    KernelError::InvalidParam {
        param: param.to_string(),
        message: message.into(),
    }
}

/// `a · b` as an element count, or an error naming `param`.
pub fn checked_elements(param: &str, factors: &[usize]) -> Result<usize, KernelError> {
    let total = factors
        .iter()
        .try_fold(1usize, |acc, &f| acc.checked_mul(f))
        .ok_or_else(|| invalid(param, "the buffer size overflows"))?;
    if total > MAX_BUFFER_ELEMENTS {
        return Err(invalid(
            param,
            format!(
                "a buffer of {total} elements exceeds the limit of {MAX_BUFFER_ELEMENTS} \
                 (4 GiB per buffer, the spacing of buffers in the simulated address space)"
            ),
        ));
    }
    Ok(total)
}

/// A row-major matrix shape with a leading dimension: element (i, j) at `i·ld + j`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Matrix {
    pub rows: usize,
    pub cols: usize,
    pub ld: usize,
}

impl Matrix {
    /// Reads `rows`, `cols`, `ld` and checks `ld ≥ cols` and the buffer size.
    pub fn from_params(kernel: &str, params: &Params) -> Result<Self, KernelError> {
        let matrix = Self {
            rows: size_param(kernel, params, "rows")?,
            cols: size_param(kernel, params, "cols")?,
            ld: size_param(kernel, params, "ld")?,
        };
        if matrix.ld < matrix.cols {
            return Err(invalid(
                "ld",
                format!(
                    "the leading dimension {} is smaller than cols {} (rows would overlap)",
                    matrix.ld, matrix.cols
                ),
            ));
        }
        matrix.storage_len()?;
        Ok(matrix)
    }

    /// Elements of the row-major storage, padding included (`rows · ld`).
    pub fn storage_len(&self) -> Result<usize, KernelError> {
        checked_elements("rows", &[self.rows, self.ld])
    }

    /// Logical elements (`rows · cols`).
    pub fn elements(&self) -> u64 {
        self.rows as u64 * self.cols as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix64_matches_the_reference_sequence() {
        // First outputs for seed 1234567 from the reference C implementation (Vigna).
        let mut rng = SplitMix64::new(1234567);
        assert_eq!(rng.next_u64(), 6457827717110365317);
        assert_eq!(rng.next_u64(), 3203168211198807973);
    }

    #[test]
    fn cyclic_permutations_are_one_cycle_through_every_slot() {
        for n in [1, 2, 3, 10, 1000] {
            for seed in [0, 1, 42] {
                let next = cyclic_permutation(n, seed);
                let mut seen = vec![false; n];
                let mut slot = 0;
                for _ in 0..n {
                    assert!(!seen[slot], "slot {slot} visited twice (n={n})");
                    seen[slot] = true;
                    slot = next[slot];
                }
                assert_eq!(slot, 0);
                assert!(seen.iter().all(|&s| s));
            }
        }
        assert_ne!(cyclic_permutation(100, 1), cyclic_permutation(100, 2));
    }

    #[test]
    fn check_indices_are_spread_and_in_range() {
        assert_eq!(check_indices(3).collect::<Vec<_>>(), [0, 1, 2]);
        let many: Vec<_> = check_indices(1000).collect();
        assert_eq!(many.len(), CHECK_SAMPLES);
        assert!(many.windows(2).all(|w| w[0] < w[1]));
        assert!(*many.last().unwrap() < 1000);
        assert_eq!(check_indices(0).count(), 0);
    }

    #[test]
    fn links_round_trip_through_cells() {
        for index in [0, 1, 12345, MAX_BUFFER_ELEMENTS - 1] {
            assert_eq!(cell_to_link(link_to_cell(index)), index);
        }
    }
}
