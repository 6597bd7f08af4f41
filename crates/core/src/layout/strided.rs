//! [`Layout`]: shape + strides + offset over a one-dimensional storage, and its validator.
//!
//! A layout is validated exactly once, when it is built ([`Layout::new`] or a view op); after
//! that every element offset is known to lie inside the storage, so iteration and indexing do
//! plain arithmetic with no per-element checks.

use super::error::LayoutError;
use super::iter::Offsets;

/// Most dimensions a layout may have (NumPy's and PyTorch's limit).
pub const MAX_DIMS: usize = 64;

/// A strided view of a one-dimensional storage of `storage_len` elements.
///
/// Element `(i0, .., in)` lives at storage index `offset + Σ ik·strides[k]`. Strides are in
/// elements and may be zero (broadcast) or negative (flip, `::-1`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Layout {
    shape: Vec<usize>,
    strides: Vec<isize>,
    offset: usize,
    storage_len: usize,
}

/// Checks that `(shape, strides, offset)` is a valid view of a storage of `storage_len`
/// elements.
///
/// The invariants, in the order they are checked (the code cites them by number):
///
/// 1. `shape` and `strides` have the same length.
/// 2. There are at most [`MAX_DIMS`] dimensions.
/// 3. `storage_len <= isize::MAX`, so every storage index fits in `isize`.
/// 4. The element count `Π shape` fits in `usize` and does not exceed `isize::MAX`.
/// 5. An empty view (some size is 0) reaches no element; only `offset <= storage_len` is
///    required.
/// 6. A non-empty view's lowest reachable index, `offset + Σ_{s<0} (n-1)·s`, is `>= 0`, and
///    its highest, `offset + Σ_{s>0} (n-1)·s`, is `< storage_len`. Both are computed with
///    checked `i128` arithmetic.
///
/// Consequences relied on elsewhere: for every dimension of size `n > 1`,
/// `|(n-1)·stride| < storage_len <= isize::MAX`, and every partial sum visited by an odometer
/// walk is itself an element offset, hence in bounds.
pub fn validate(
    shape: &[usize],
    strides: &[isize],
    offset: usize,
    storage_len: usize,
) -> Result<(), LayoutError> {
    // Condition 1.
    if shape.len() != strides.len() {
        return Err(LayoutError::ShapeMismatch(format!(
            "shape {shape:?} has {} dims but strides {strides:?} has {}",
            shape.len(),
            strides.len()
        )));
    }
    // Condition 2.
    if shape.len() > MAX_DIMS {
        return Err(LayoutError::InvalidDims(format!(
            "a view may have at most {MAX_DIMS} dimensions, this one would have {}",
            shape.len()
        )));
    }
    // Condition 3.
    if storage_len > isize::MAX as usize {
        return Err(LayoutError::overflow(format!(
            "a storage of {storage_len} elements (more than isize::MAX)"
        )));
    }
    // Condition 4.
    let numel = checked_numel(shape)?;
    if numel == 0 {
        // Condition 5.
        if offset > storage_len {
            return Err(LayoutError::OutsideStorage {
                reached: offset as i128,
                storage_len,
            });
        }
        return Ok(());
    }
    // Condition 6.
    let (low, high) = reachable_bounds(shape, strides, offset)?;
    if low < 0 {
        return Err(LayoutError::OutsideStorage {
            reached: low,
            storage_len,
        });
    }
    if high >= storage_len as i128 {
        return Err(LayoutError::OutsideStorage {
            reached: high,
            storage_len,
        });
    }
    Ok(())
}

/// `Π shape`, failing with `overflow` beyond `isize::MAX` (condition 4 of [`validate`]).
pub fn checked_numel(shape: &[usize]) -> Result<usize, LayoutError> {
    shape
        .iter()
        .try_fold(1usize, |acc, &n| acc.checked_mul(n))
        .filter(|&n| n <= isize::MAX as usize)
        .ok_or_else(|| LayoutError::overflow(format!("the element count of shape {shape:?}")))
}

/// Lowest and highest storage index reachable by a non-empty view, in `i128`.
fn reachable_bounds(
    shape: &[usize],
    strides: &[isize],
    offset: usize,
) -> Result<(i128, i128), LayoutError> {
    let overflow = || LayoutError::overflow("the storage range the view reaches");
    let (mut low, mut high) = (offset as i128, offset as i128);
    for (&n, &s) in shape.iter().zip(strides) {
        let span = (n as i128 - 1)
            .checked_mul(s as i128)
            .ok_or_else(overflow)?;
        if span < 0 {
            low = low.checked_add(span).ok_or_else(overflow)?;
        } else {
            high = high.checked_add(span).ok_or_else(overflow)?;
        }
    }
    Ok((low, high))
}

/// C-order (row-major) strides for `shape`: `stride[k] = stride[k+1]·max(shape[k+1], 1)`.
///
/// Size-0 dims count as 1, as in PyTorch (`torch.empty(2, 0).stride() == (1, 1)`); NumPy 2
/// gives `(0, 0)` there. Strides of an empty tensor are never dereferenced.
pub fn contiguous_strides(shape: &[usize]) -> Result<Vec<isize>, LayoutError> {
    let mut strides = vec![0isize; shape.len()];
    let mut next: isize = 1;
    for (stride, &n) in strides.iter_mut().zip(shape).rev() {
        *stride = next;
        next = isize::try_from(n.max(1))
            .ok()
            .and_then(|n| next.checked_mul(n))
            .ok_or_else(|| LayoutError::overflow(format!("C-order strides of {shape:?}")))?;
    }
    Ok(strides)
}

impl Layout {
    /// Builds and validates a layout (see `validate` for the rules).
    ///
    /// ```
    /// use stridelab_core::layout::Layout;
    ///
    /// // Every other element of a 10-element storage, starting at 1: offsets 1, 3, 5, 7, 9.
    /// let odd = Layout::new(vec![5], vec![2], 1, 10)?;
    /// assert_eq!(odd.offsets().collect::<Vec<_>>(), [1, 3, 5, 7, 9]);
    /// // One more element would reach offset 11, outside the storage.
    /// assert!(Layout::new(vec![6], vec![2], 1, 10).is_err());
    /// # Ok::<(), stridelab_core::layout::LayoutError>(())
    /// ```
    pub fn new(
        shape: Vec<usize>,
        strides: Vec<isize>,
        offset: usize,
        storage_len: usize,
    ) -> Result<Layout, LayoutError> {
        validate(&shape, &strides, offset, storage_len)?;
        Ok(Layout {
            shape,
            strides,
            offset,
            storage_len,
        })
    }

    /// A C-contiguous layout covering a fresh storage of exactly `Π shape` elements.
    ///
    /// ```
    /// use stridelab_core::layout::Layout;
    ///
    /// let x = Layout::contiguous(&[2, 3, 4])?;
    /// assert_eq!(x.strides(), [12, 4, 1]); // the last index is fastest
    /// assert_eq!((x.numel(), x.storage_len()), (24, 24));
    /// assert_eq!(x.offset_of(&[1, 2, 3]), Some(12 + 2 * 4 + 3));
    /// # Ok::<(), stridelab_core::layout::LayoutError>(())
    /// ```
    pub fn contiguous(shape: &[usize]) -> Result<Layout, LayoutError> {
        let strides = contiguous_strides(shape)?;
        let numel = checked_numel(shape)?;
        Layout::new(shape.to_vec(), strides, 0, numel)
    }

    /// Re-validates a layout derived by a view op from this one, over the same storage.
    pub(crate) fn derive(
        &self,
        shape: Vec<usize>,
        strides: Vec<isize>,
        offset: usize,
    ) -> Result<Layout, LayoutError> {
        Layout::new(shape, strides, offset, self.storage_len)
    }

    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// Strides in elements, one per dimension.
    pub fn strides(&self) -> &[isize] {
        &self.strides
    }

    /// Storage index of element `(0, .., 0)`.
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// Length of the storage this layout was validated against.
    pub fn storage_len(&self) -> usize {
        self.storage_len
    }

    pub fn ndim(&self) -> usize {
        self.shape.len()
    }

    /// Number of elements (`Π shape`; 1 for a 0-d view).
    pub fn numel(&self) -> usize {
        // Condition 4 of `validate`: this product was checked when the layout was built.
        self.shape.iter().product()
    }

    /// Storage offsets of all elements in logical C order (last index fastest).
    pub fn offsets(&self) -> Offsets<'_> {
        Offsets::new(&self.shape, &self.strides, self.offset, self.numel())
    }

    /// Storage offset of one element, or `None` if the index is out of range or has the wrong
    /// rank.
    pub fn offset_of(&self, index: &[usize]) -> Option<usize> {
        if index.len() != self.ndim() || index.iter().zip(&self.shape).any(|(&i, &n)| i >= n) {
            return None;
        }
        // Condition 6 of `validate`: every in-range index maps inside the storage.
        let pos = index
            .iter()
            .zip(&self.strides)
            .fold(self.offset as isize, |pos, (&i, &s)| pos + i as isize * s);
        Some(pos as usize)
    }

    /// Lowest and highest storage index this view touches, or `None` if it is empty.
    pub fn reachable_range(&self) -> Option<(usize, usize)> {
        if self.numel() == 0 {
            return None;
        }
        // Condition 6 of `validate`: both bounds were checked to lie in 0..storage_len.
        let (low, high) = reachable_bounds(&self.shape, &self.strides, self.offset).ok()?;
        Some((low as usize, high as usize))
    }

    /// True when no two elements can share a storage cell: the dims of size > 1, sorted by
    /// `|stride|`, each step over everything the smaller ones span. This is a sufficient test
    /// (it is exact for every layout the view ops produce except `as_strided`), so a `false`
    /// answer means "may overlap" and the view is treated as read-only.
    pub fn is_non_overlapping(&self) -> bool {
        let mut dims: Vec<(usize, usize)> = self
            .shape
            .iter()
            .zip(&self.strides)
            .filter(|&(&n, _)| n > 1)
            .map(|(&n, &s)| (n, s.unsigned_abs()))
            .collect();
        if self.numel() == 0 {
            return true;
        }
        dims.sort_by_key(|&(_, s)| s);
        // Condition 6 of `validate` bounds every span below storage_len, so no overflow.
        let mut span = 0usize;
        for (n, s) in dims {
            if s <= span {
                return false;
            }
            span += (n - 1) * s;
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::Layout;

    #[test]
    fn transposed_3x4_visits_columns_first() {
        let layout = Layout::new(vec![4, 3], vec![1, 4], 0, 12).unwrap();
        let offsets: Vec<usize> = layout.offsets().collect();
        assert_eq!(offsets, vec![0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11]);
    }

    #[test]
    fn zero_d_and_empty_layouts() {
        let scalar = Layout::new(vec![], vec![], 5, 6).unwrap();
        assert_eq!(scalar.offsets().collect::<Vec<_>>(), vec![5]);
        let empty = Layout::new(vec![3, 0], vec![1, 1], 0, 0).unwrap();
        assert_eq!(empty.offsets().count(), 0);
    }

    #[test]
    fn negative_stride_walks_backwards() {
        let layout = Layout::new(vec![4], vec![-1], 3, 4).unwrap();
        assert_eq!(layout.offsets().collect::<Vec<_>>(), vec![3, 2, 1, 0]);
    }
}
