//! The copy engine: copies any valid strided view into a contiguous (C-order) destination.
//!
//! Every copy the lab makes goes through [`copy_into_contiguous`]: the layout model's
//! `contiguous()`/`reshape` copies, the `transpose fast` kernel and `to-tiles`.
//!
//! This first version is the plain element-by-element reference; the fast engine replaces its
//! body behind the same signature.

use thiserror::Error;

/// Why a copy was refused. The engine checks bounds once, before touching memory.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum CopyError {
    #[error("shape has {shape} dims but strides has {strides}")]
    RankMismatch { shape: usize, strides: usize },
    #[error("destination holds {dst} elements but the view has {needed}")]
    DestinationSize { dst: usize, needed: usize },
    #[error("the view reaches storage index {index}, outside a storage of {len} elements")]
    OutOfBounds { index: i128, len: usize },
    #[error("the view's element count overflows usize")]
    Overflow,
}

/// Copies the view `(shape, strides, offset)` of `src` into `dst` in logical C order.
///
/// Strides are in elements and may be negative or zero. `dst.len()` must equal the product of
/// `shape`. Every reachable index is checked against `src.len()` before anything is copied.
pub fn copy_into_contiguous<T: Copy>(
    src: &[T],
    shape: &[usize],
    strides: &[isize],
    offset: usize,
    dst: &mut [T],
) -> Result<(), CopyError> {
    if shape.len() != strides.len() {
        return Err(CopyError::RankMismatch {
            shape: shape.len(),
            strides: strides.len(),
        });
    }
    let needed = shape
        .iter()
        .try_fold(1usize, |acc, &n| acc.checked_mul(n))
        .ok_or(CopyError::Overflow)?;
    if dst.len() != needed {
        return Err(CopyError::DestinationSize {
            dst: dst.len(),
            needed,
        });
    }
    if needed == 0 {
        return Ok(());
    }
    // Reachable range: offset plus the most negative and most positive stride contributions.
    let (mut lo, mut hi) = (offset as i128, offset as i128);
    for (&n, &s) in shape.iter().zip(strides) {
        let span = (n as i128 - 1) * s as i128;
        if span < 0 { lo += span } else { hi += span }
    }
    if lo < 0 {
        return Err(CopyError::OutOfBounds {
            index: lo,
            len: src.len(),
        });
    }
    if hi >= src.len() as i128 {
        return Err(CopyError::OutOfBounds {
            index: hi,
            len: src.len(),
        });
    }
    let mut index = vec![0usize; shape.len()];
    let mut pos = offset as isize;
    for slot in dst.iter_mut() {
        *slot = src[pos as usize];
        // Odometer increment, last dimension fastest.
        for d in (0..shape.len()).rev() {
            index[d] += 1;
            pos += strides[d];
            if index[d] < shape[d] {
                break;
            }
            pos -= strides[d] * shape[d] as isize;
            index[d] = 0;
        }
    }
    Ok(())
}
