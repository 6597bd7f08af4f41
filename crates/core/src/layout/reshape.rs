//! `view(shape)`: when a new shape can reuse the storage with new strides, and why not.
//!
//! PyTorch's rule (`computeStride`): split the input into chunks of dims that are contiguous
//! with each other (dim `k` merges with `k+1` when `stride[k] == size[k+1]·stride[k+1]`,
//! size-1 dims never break a chunk). A view exists iff every chunk is covered exactly by a
//! run of consecutive new dims. `reshape` (in `kernels::tensor`) copies when this fails.

use super::error::{LayoutError, ViewIncompatible};
use super::strided::{Layout, checked_numel, contiguous_strides};

/// Resolves a requested shape with at most one `-1` against an element count.
pub fn infer_shape(requested: &[i64], numel: usize) -> Result<Vec<usize>, LayoutError> {
    let mut inferred = None;
    let mut known: usize = 1;
    for (k, &n) in requested.iter().enumerate() {
        if n == -1 {
            if inferred.replace(k).is_some() {
                return Err(LayoutError::InvalidArgument(format!(
                    "only one dimension can be inferred (-1) in {requested:?}"
                )));
            }
        } else if n < 0 {
            return Err(LayoutError::InvalidArgument(format!(
                "invalid size {n} in shape {requested:?}"
            )));
        } else {
            known = usize::try_from(n)
                .ok()
                .and_then(|n| known.checked_mul(n))
                .ok_or_else(|| {
                    LayoutError::overflow(format!("the element count of shape {requested:?}"))
                })?;
        }
    }
    let mut shape: Vec<usize> = requested.iter().map(|&n| n.max(0) as usize).collect();
    match inferred {
        Some(k) => {
            if known == 0 {
                return Err(LayoutError::InvalidArgument(format!(
                    "cannot infer -1 in shape {requested:?} for {numel} elements: \
                     any size would fit next to a size-0 dim"
                )));
            }
            if !numel.is_multiple_of(known) {
                return Err(LayoutError::ShapeMismatch(format!(
                    "shape {requested:?} is invalid for {numel} elements \
                     ({numel} is not a multiple of {known})"
                )));
            }
            shape[k] = numel / known;
        }
        None if known != numel => {
            return Err(LayoutError::ShapeMismatch(format!(
                "shape {requested:?} has {known} elements but the view has {numel}"
            )));
        }
        None => {}
    }
    checked_numel(&shape)?;
    Ok(shape)
}

/// Why `view` failed: which adjacent input dims a new dim would have to merge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ViewFailure {
    pub reason: String,
}

/// Strides that make `new_shape` a view of `(shape, strides)`, following PyTorch's
/// `computeStride`. `new_shape` must have the same element count.
pub fn view_strides(
    shape: &[usize],
    strides: &[isize],
    new_shape: &[usize],
) -> Result<Result<Vec<isize>, ViewFailure>, LayoutError> {
    let overflow = || LayoutError::overflow("the strides of the view");
    if shape.is_empty() {
        return Ok(Ok(vec![1; new_shape.len()]));
    }
    let numel: usize = shape.iter().product();
    if numel == 0 {
        // Strides of an empty view are never used; keep them when the shape is unchanged.
        if shape == new_shape {
            return Ok(Ok(strides.to_vec()));
        }
        return contiguous_strides(new_shape).map(Ok);
    }
    let mut new_strides = vec![0isize; new_shape.len()];
    let mut view_d = new_shape.len() as isize - 1;
    let mut chunk_base_stride = *strides.last().expect("ndim > 0") as i128;
    let mut tensor_numel: i128 = 1;
    let mut view_numel: i128 = 1;
    for tensor_d in (0..shape.len()).rev() {
        tensor_numel *= shape[tensor_d] as i128;
        let chunk_ends = tensor_d == 0
            || (shape[tensor_d - 1] != 1
                && strides[tensor_d - 1] as i128 != tensor_numel * chunk_base_stride);
        if !chunk_ends {
            continue;
        }
        while view_d >= 0 && (view_numel < tensor_numel || new_shape[view_d as usize] == 1) {
            let stride = view_numel * chunk_base_stride;
            new_strides[view_d as usize] = isize::try_from(stride).map_err(|_| overflow())?;
            view_numel *= new_shape[view_d as usize] as i128;
            view_d -= 1;
        }
        if view_numel != tensor_numel {
            let k = tensor_d; // the chunk starts at dim k; dims k-1 and k do not merge
            return Ok(Err(ViewFailure {
                reason: format!(
                    "a new dim would have to merge input dims {} and {k}, but dim {} has \
                     stride {} where merging needs {} (= {} elements × stride {})",
                    k - 1,
                    k - 1,
                    strides[k - 1],
                    tensor_numel * chunk_base_stride,
                    tensor_numel,
                    chunk_base_stride
                ),
            }));
        }
        if tensor_d > 0 {
            chunk_base_stride = strides[tensor_d - 1] as i128;
            tensor_numel = 1;
            view_numel = 1;
        }
    }
    if view_d != -1 {
        return Ok(Err(ViewFailure {
            reason: "the new shape has dims left over".to_string(),
        }));
    }
    Ok(Ok(new_strides))
}

fn format_args(requested: &[i64]) -> String {
    requested
        .iter()
        .map(|n| n.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

impl Layout {
    /// PyTorch `view`: the same storage under a new shape (one `-1` allowed), or a
    /// `view_incompatible` error that suggests `reshape`.
    ///
    /// ```
    /// use stridelab_core::layout::{ErrorKind, Layout};
    ///
    /// let x = Layout::contiguous(&[4, 6])?;
    /// assert_eq!(x.view(&[2, -1, 3])?.shape(), [2, 4, 3]); // -1: inferred
    /// // A transpose's elements are no longer in storage order: a flat view would need a copy.
    /// let err = x.t()?.view(&[24]).unwrap_err();
    /// assert_eq!(err.kind(), ErrorKind::ViewIncompatible);
    /// # Ok::<(), stridelab_core::layout::LayoutError>(())
    /// ```
    pub fn view(&self, requested: &[i64]) -> Result<Layout, LayoutError> {
        let new_shape = infer_shape(requested, self.numel())?;
        match view_strides(self.shape(), self.strides(), &new_shape)? {
            Ok(strides) => self.derive(new_shape, strides, self.offset()),
            Err(failure) => Err(LayoutError::ViewIncompatible(Box::new(ViewIncompatible {
                shape: self.shape().to_vec(),
                strides: self.strides().to_vec(),
                requested: new_shape,
                requested_args: format_args(requested),
                reason: failure.reason,
            }))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::error::ErrorKind;
    use super::*;

    #[test]
    fn infer_shape_table() {
        assert_eq!(infer_shape(&[3, -1], 12).unwrap(), vec![3, 4]);
        assert_eq!(infer_shape(&[-1], 0).unwrap(), vec![0]);
        assert_eq!(infer_shape(&[], 1).unwrap(), Vec::<usize>::new());
        let kinds = [
            (vec![5, -1], 12, ErrorKind::ShapeMismatch),
            (vec![-1, -1], 12, ErrorKind::InvalidArgument),
            (vec![0, -1], 0, ErrorKind::InvalidArgument),
            (vec![-2, 6], 12, ErrorKind::InvalidArgument),
            (vec![5], 12, ErrorKind::ShapeMismatch),
            (vec![i64::MAX, i64::MAX], 12, ErrorKind::Overflow),
        ];
        for (req, numel, kind) in kinds {
            assert_eq!(
                infer_shape(&req, numel).unwrap_err().kind(),
                kind,
                "{req:?}"
            );
        }
    }

    #[test]
    fn view_of_transpose_fails_and_suggests_reshape() {
        let t = Layout::new(vec![4, 3], vec![1, 4], 0, 12).unwrap();
        let err = t.view(&[12]).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::ViewIncompatible);
        let message = err.to_string();
        assert!(message.contains(".reshape(12)"), "{message}");
        assert!(message.contains("dims 0 and 1"), "{message}");
    }

    #[test]
    fn split_and_merge_within_chunks() {
        // 2×3×4 with dims 0,1 permuted: dims (3,2) chunk is not mergeable, but 4 can split.
        let l = Layout::new(vec![3, 2, 4], vec![4, 12, 1], 0, 24).unwrap();
        let v = l.view(&[3, 2, 2, 2]).unwrap();
        assert_eq!(v.strides(), &[4, 12, 2, 1]);
        assert!(l.view(&[6, 4]).is_err());
    }
}
