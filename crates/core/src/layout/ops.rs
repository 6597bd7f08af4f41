//! View operations: each rewrites shape/strides/offset and re-validates against the storage.
//!
//! Names and semantics follow PyTorch, except that negative slice steps and `flip` produce
//! views with negative strides as in NumPy. Negative dims and indices count from the end.

use super::error::LayoutError;
use super::strided::{Layout, MAX_DIMS};

/// One item of an indexing expression `x[...]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IndexItem {
    /// An integer: selects one position and removes the dimension.
    Int(i64),
    /// `start:stop:step` with Python/NumPy semantics; `step` may be negative, not zero.
    Slice {
        start: Option<i64>,
        stop: Option<i64>,
        step: Option<i64>,
    },
    /// `None`: a new dimension of size 1.
    NewAxis,
    /// `...`: as many full slices as needed.
    Ellipsis,
}

/// Normalises a dimension argument in `-ndim..ndim` to `0..ndim`.
pub fn normalize_dim(dim: i64, ndim: usize) -> Result<usize, LayoutError> {
    let n = ndim as i64;
    let d = if dim < 0 { dim + n } else { dim };
    if (0..n).contains(&d) {
        Ok(d as usize)
    } else {
        Err(LayoutError::DimOutOfRange {
            dim,
            ndim,
            low: -n,
            high: n - 1,
        })
    }
}

/// Normalises an index in `-size..size` to `0..size`.
fn normalize_index(index: i64, dim: usize, size: usize) -> Result<usize, LayoutError> {
    let n = size as i128;
    let i = if index < 0 {
        index as i128 + n
    } else {
        index as i128
    };
    if (0..n).contains(&i) {
        Ok(i as usize)
    } else {
        Err(LayoutError::IndexOutOfRange { index, dim, size })
    }
}

/// A slice resolved against a dimension: first position, element count, step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResolvedSlice {
    pub start: i128,
    pub len: usize,
    pub step: i128,
}

/// Python's `slice.indices(size)` plus the length (NumPy semantics for negative steps).
pub fn resolve_slice(
    start: Option<i64>,
    stop: Option<i64>,
    step: Option<i64>,
    size: usize,
) -> Result<ResolvedSlice, LayoutError> {
    let step = step.unwrap_or(1) as i128;
    if step == 0 {
        return Err(LayoutError::InvalidArgument(
            "slice step cannot be zero".to_string(),
        ));
    }
    let n = size as i128;
    let clamp = |v: Option<i64>, default: i128, low: i128, high: i128| -> i128 {
        match v {
            None => default,
            Some(v) => {
                let v = v as i128;
                let v = if v < 0 { v + n } else { v };
                v.clamp(low, high)
            }
        }
    };
    let (start, stop) = if step > 0 {
        (clamp(start, 0, 0, n), clamp(stop, n, 0, n))
    } else {
        (clamp(start, n - 1, -1, n - 1), clamp(stop, -1, -1, n - 1))
    };
    let len = if step > 0 && stop > start {
        (stop - start + step - 1) / step
    } else if step < 0 && start > stop {
        (start - stop - 1) / (-step) + 1
    } else {
        0
    };
    Ok(ResolvedSlice {
        start,
        len: len as usize,
        step,
    })
}

fn checked_stride(value: i128, what: &str) -> Result<isize, LayoutError> {
    isize::try_from(value).map_err(|_| LayoutError::overflow(what.to_string()))
}

/// Stride PyTorch gives a new size-1 dim inserted before `dim`: `size·stride` of the dim it
/// lands on, or 1 at the end. Any value is correct for a size-1 dim, so on overflow use 1.
fn inserted_stride(shape: &[usize], strides: &[isize], dim: usize) -> isize {
    if dim < shape.len() {
        isize::try_from(shape[dim])
            .ok()
            .and_then(|n| n.checked_mul(strides[dim]))
            .unwrap_or(1)
    } else {
        1
    }
}

impl Layout {
    /// Builds the result of a view op. An empty result reaches no element, so its offset (as
    /// NumPy/PyTorch compute it, possibly past either end) is clamped into `0..=storage_len`.
    fn finish(
        &self,
        shape: Vec<usize>,
        strides: Vec<isize>,
        offset: i128,
    ) -> Result<Layout, LayoutError> {
        let empty = shape.contains(&0);
        let offset = if empty {
            offset.clamp(0, self.storage_len() as i128)
        } else {
            offset
        };
        let offset = usize::try_from(offset).map_err(|_| LayoutError::OutsideStorage {
            reached: offset,
            storage_len: self.storage_len(),
        })?;
        self.derive(shape, strides, offset)
    }

    /// Swaps two dimensions.
    ///
    /// ```
    /// use stridelab_core::layout::Layout;
    ///
    /// // A 2×3 row-major matrix: one row is 3 elements apart, one column 1.
    /// let m = Layout::contiguous(&[2, 3])?;
    /// let t = m.transpose(0, 1)?;
    /// assert_eq!((t.shape(), t.strides()), (&[3, 2][..], &[1, 3][..]));
    /// // The same storage, walked column by column: no element moved.
    /// assert_eq!(t.offsets().collect::<Vec<_>>(), [0, 3, 1, 4, 2, 5]);
    /// assert!(!t.is_c_contiguous() && t.is_f_contiguous());
    /// # Ok::<(), stridelab_core::layout::LayoutError>(())
    /// ```
    pub fn transpose(&self, dim0: i64, dim1: i64) -> Result<Layout, LayoutError> {
        if self.ndim() == 0 && matches!(dim0, 0 | -1) && matches!(dim1, 0 | -1) {
            return Ok(self.clone());
        }
        let (a, b) = (
            normalize_dim(dim0, self.ndim())?,
            normalize_dim(dim1, self.ndim())?,
        );
        let (mut shape, mut strides) = (self.shape().to_vec(), self.strides().to_vec());
        shape.swap(a, b);
        strides.swap(a, b);
        self.derive(shape, strides, self.offset())
    }

    /// Reorders dimensions: result dim `k` is input dim `dims[k]`.
    ///
    /// ```
    /// use stridelab_core::layout::Layout;
    ///
    /// // NCHW to NHWC without a copy: the channel stride moves last.
    /// let nchw = Layout::contiguous(&[1, 3, 4, 5])?;
    /// let nhwc = nchw.permute(&[0, 2, 3, 1])?;
    /// assert_eq!(nhwc.shape(), [1, 4, 5, 3]);
    /// assert_eq!(nhwc.strides(), [60, 5, 1, 20]);
    /// // Each dim once: a repeat is refused.
    /// assert!(nchw.permute(&[0, 1, 1, 2]).is_err());
    /// # Ok::<(), stridelab_core::layout::LayoutError>(())
    /// ```
    pub fn permute(&self, dims: &[i64]) -> Result<Layout, LayoutError> {
        if dims.len() != self.ndim() {
            return Err(LayoutError::InvalidDims(format!(
                "permute needs {} dims for a {}-d view, got {} ({dims:?})",
                self.ndim(),
                self.ndim(),
                dims.len()
            )));
        }
        let mut seen = vec![false; self.ndim()];
        let mut order = Vec::with_capacity(dims.len());
        for &dim in dims {
            let d = normalize_dim(dim, self.ndim())?;
            if std::mem::replace(&mut seen[d], true) {
                return Err(LayoutError::InvalidDims(format!(
                    "permute: dim {d} appears more than once in {dims:?}"
                )));
            }
            order.push(d);
        }
        let shape = order.iter().map(|&d| self.shape()[d]).collect();
        let strides = order.iter().map(|&d| self.strides()[d]).collect();
        self.derive(shape, strides, self.offset())
    }

    /// `.T`: reverses all dimensions (NumPy's `.T`).
    ///
    /// ```
    /// use stridelab_core::layout::Layout;
    ///
    /// let x = Layout::contiguous(&[2, 3, 4])?;
    /// let t = x.reversed_dims()?;
    /// assert_eq!((t.shape(), t.strides()), (&[4, 3, 2][..], &[1, 4, 12][..]));
    /// # Ok::<(), stridelab_core::layout::LayoutError>(())
    /// ```
    pub fn reversed_dims(&self) -> Result<Layout, LayoutError> {
        let shape = self.shape().iter().rev().copied().collect();
        let strides = self.strides().iter().rev().copied().collect();
        self.derive(shape, strides, self.offset())
    }

    /// `t()`: transpose of a view with at most 2 dims (identity below 2).
    ///
    /// ```
    /// use stridelab_core::layout::Layout;
    ///
    /// assert_eq!(Layout::contiguous(&[2, 3])?.t()?.strides(), [1, 3]);
    /// assert_eq!(Layout::contiguous(&[5])?.t()?.strides(), [1]); // 1-d: unchanged
    /// assert!(Layout::contiguous(&[2, 3, 4])?.t().is_err()); // use .T or permute
    /// # Ok::<(), stridelab_core::layout::LayoutError>(())
    /// ```
    pub fn t(&self) -> Result<Layout, LayoutError> {
        match self.ndim() {
            0 | 1 => Ok(self.clone()),
            2 => self.transpose(0, 1),
            n => Err(LayoutError::InvalidDims(format!(
                "t() expects a view with at most 2 dims, this one has {n}; \
                 use .transpose(d0, d1), .permute(...) or .T"
            ))),
        }
    }

    /// Picks position `index` of dimension `dim` and removes that dimension.
    ///
    /// ```
    /// use stridelab_core::layout::Layout;
    ///
    /// let m = Layout::contiguous(&[3, 4])?;
    /// // Column 2: one element per row, a row's length apart.
    /// let column = m.select(1, 2)?;
    /// assert_eq!(column.offsets().collect::<Vec<_>>(), [2, 6, 10]);
    /// assert_eq!(column.strides(), [4]);
    /// // Negative indices count from the end: the last row.
    /// assert_eq!(m.select(0, -1)?.offsets().collect::<Vec<_>>(), [8, 9, 10, 11]);
    /// # Ok::<(), stridelab_core::layout::LayoutError>(())
    /// ```
    pub fn select(&self, dim: i64, index: i64) -> Result<Layout, LayoutError> {
        if self.ndim() == 0 {
            return Err(LayoutError::InvalidDims(
                "select() cannot be applied to a 0-d view".to_string(),
            ));
        }
        let d = normalize_dim(dim, self.ndim())?;
        let i = normalize_index(index, d, self.shape()[d])?;
        let (mut shape, mut strides) = (self.shape().to_vec(), self.strides().to_vec());
        shape.remove(d);
        let stride = strides.remove(d);
        let offset = self.offset() as i128 + i as i128 * stride as i128;
        self.finish(shape, strides, offset)
    }

    /// Keeps positions `start..start+length` of dimension `dim` (PyTorch `narrow`).
    ///
    /// ```
    /// use stridelab_core::layout::Layout;
    ///
    /// // Rows 1 and 2 of a 4×4 matrix: the offset moves, the strides stay.
    /// let band = Layout::contiguous(&[4, 4])?.narrow(0, 1, 2)?;
    /// assert_eq!((band.shape(), band.offset()), (&[2, 4][..], 4));
    /// assert!(Layout::contiguous(&[4, 4])?.narrow(0, 3, 2).is_err()); // past the end
    /// # Ok::<(), stridelab_core::layout::LayoutError>(())
    /// ```
    pub fn narrow(&self, dim: i64, start: i64, length: i64) -> Result<Layout, LayoutError> {
        if self.ndim() == 0 {
            return Err(LayoutError::InvalidDims(
                "narrow() cannot be applied to a 0-d view".to_string(),
            ));
        }
        let d = normalize_dim(dim, self.ndim())?;
        let size = self.shape()[d];
        if length < 0 {
            return Err(LayoutError::InvalidArgument(format!(
                "narrow: length must be non-negative, got {length}"
            )));
        }
        let first = if start < 0 {
            start as i128 + size as i128
        } else {
            start as i128
        };
        if !(0..=size as i128).contains(&first) {
            return Err(LayoutError::IndexOutOfRange {
                index: start,
                dim: d,
                size,
            });
        }
        if first + length as i128 > size as i128 {
            return Err(LayoutError::IndexOutOfRange {
                index: (first + length as i128).min(i64::MAX as i128) as i64,
                dim: d,
                size,
            });
        }
        let (mut shape, strides) = (self.shape().to_vec(), self.strides().to_vec());
        shape[d] = length as usize;
        let offset = self.offset() as i128 + first * strides[d] as i128;
        self.finish(shape, strides, offset)
    }

    /// NumPy/PyTorch basic indexing: integers, slices (negative steps allowed), `None`, `...`.
    ///
    /// ```
    /// use stridelab_core::layout::{IndexItem, Layout};
    ///
    /// let m = Layout::contiguous(&[4, 6])?;
    /// // m[1, ::-2]: row 1, every second element from the end, as a negative stride.
    /// let every_other = m.index(&[
    ///     IndexItem::Int(1),
    ///     IndexItem::Slice { start: None, stop: None, step: Some(-2) },
    /// ])?;
    /// assert_eq!(every_other.strides(), [-2]);
    /// assert_eq!(every_other.offsets().collect::<Vec<_>>(), [11, 9, 7]);
    /// // m[None, ...]: a leading axis of size 1.
    /// let batched = m.index(&[IndexItem::NewAxis, IndexItem::Ellipsis])?;
    /// assert_eq!(batched.shape(), [1, 4, 6]);
    /// # Ok::<(), stridelab_core::layout::LayoutError>(())
    /// ```
    pub fn index(&self, items: &[IndexItem]) -> Result<Layout, LayoutError> {
        let ellipses = items
            .iter()
            .filter(|i| matches!(i, IndexItem::Ellipsis))
            .count();
        if ellipses > 1 {
            return Err(LayoutError::InvalidArgument(
                "an index can only have a single ellipsis ('...')".to_string(),
            ));
        }
        let consuming = items
            .iter()
            .filter(|i| matches!(i, IndexItem::Int(_) | IndexItem::Slice { .. }))
            .count();
        if consuming > self.ndim() {
            return Err(LayoutError::InvalidDims(format!(
                "too many indices for a {}-d view: {consuming} were given",
                self.ndim()
            )));
        }
        let full = IndexItem::Slice {
            start: None,
            stop: None,
            step: None,
        };
        let mut expanded: Vec<IndexItem> = Vec::with_capacity(items.len() + self.ndim());
        for &item in items {
            if item == IndexItem::Ellipsis {
                expanded.extend(std::iter::repeat_n(full, self.ndim() - consuming));
            } else {
                expanded.push(item);
            }
        }
        if ellipses == 0 {
            expanded.extend(std::iter::repeat_n(full, self.ndim() - consuming));
        }

        let (mut shape, mut strides) = (Vec::new(), Vec::new());
        let mut offset = self.offset() as i128;
        let mut d = 0;
        for item in expanded {
            match item {
                IndexItem::Int(i) => {
                    let i = normalize_index(i, d, self.shape()[d])?;
                    offset += i as i128 * self.strides()[d] as i128;
                    d += 1;
                }
                IndexItem::Slice { start, stop, step } => {
                    let s = resolve_slice(start, stop, step, self.shape()[d])?;
                    let stride = self.strides()[d] as i128;
                    offset += s.start * stride;
                    shape.push(s.len);
                    strides.push(checked_stride(stride * s.step, "a sliced stride")?);
                    d += 1;
                }
                IndexItem::NewAxis => {
                    if shape.len() + (self.ndim() - d) >= MAX_DIMS {
                        return Err(LayoutError::InvalidDims(format!(
                            "a view may have at most {MAX_DIMS} dimensions"
                        )));
                    }
                    shape.push(1);
                    strides.push(inserted_stride(self.shape(), self.strides(), d));
                }
                IndexItem::Ellipsis => unreachable!("ellipsis expanded above"),
            }
        }
        self.finish(shape, strides, offset)
    }

    /// A diagonal of the `dim1`×`dim2` planes, appended as the last dim (stride `s1 + s2`).
    ///
    /// ```
    /// use stridelab_core::layout::Layout;
    ///
    /// // The diagonal of a 3×3 matrix steps a row and a column at once: stride 3 + 1.
    /// let m = Layout::contiguous(&[3, 3])?;
    /// let d = m.diagonal(0, 0, 1)?;
    /// assert_eq!((d.strides(), d.offsets().collect::<Vec<_>>()), (&[4][..], vec![0, 4, 8]));
    /// // offset 1: the one above it.
    /// assert_eq!(m.diagonal(1, 0, 1)?.offsets().collect::<Vec<_>>(), [1, 5]);
    /// # Ok::<(), stridelab_core::layout::LayoutError>(())
    /// ```
    pub fn diagonal(&self, offset: i64, dim1: i64, dim2: i64) -> Result<Layout, LayoutError> {
        let a = normalize_dim(dim1, self.ndim())?;
        let b = normalize_dim(dim2, self.ndim())?;
        if a == b {
            return Err(LayoutError::InvalidDims(format!(
                "diagonal dimensions cannot be identical: dim1 = {dim1}, dim2 = {dim2}"
            )));
        }
        let (n1, n2) = (self.shape()[a] as i128, self.shape()[b] as i128);
        let (s1, s2) = (self.strides()[a] as i128, self.strides()[b] as i128);
        let k = offset as i128;
        let len = if k >= 0 {
            n1.min(n2 - k).max(0)
        } else {
            (n1 + k).min(n2).max(0)
        };
        let mut start = self.offset() as i128;
        // As PyTorch: an empty diagonal keeps the offset instead of pointing off the end.
        if len > 0 {
            start += if k >= 0 { k * s2 } else { -k * s1 };
        }
        let mut shape = Vec::with_capacity(self.ndim() - 1);
        let mut strides = Vec::with_capacity(self.ndim() - 1);
        for d in (0..self.ndim()).filter(|&d| d != a && d != b) {
            shape.push(self.shape()[d]);
            strides.push(self.strides()[d]);
        }
        shape.push(len as usize);
        strides.push(checked_stride(s1 + s2, "the diagonal stride s1 + s2")?);
        self.finish(shape, strides, start)
    }

    /// Removes every size-1 dimension.
    ///
    /// ```
    /// use stridelab_core::layout::Layout;
    ///
    /// let x = Layout::contiguous(&[1, 3, 1, 2])?;
    /// assert_eq!(x.squeeze()?.shape(), [3, 2]);
    /// assert_eq!(x.squeeze_dim(2)?.shape(), [1, 3, 2]);
    /// assert_eq!(x.squeeze_dim(1)?.shape(), [1, 3, 1, 2]); // size 3: unchanged
    /// # Ok::<(), stridelab_core::layout::LayoutError>(())
    /// ```
    pub fn squeeze(&self) -> Result<Layout, LayoutError> {
        let (shape, strides) = self
            .shape()
            .iter()
            .zip(self.strides())
            .filter(|&(&n, _)| n != 1)
            .unzip();
        self.derive(shape, strides, self.offset())
    }

    /// Removes dimension `dim` if its size is 1; otherwise returns the view unchanged.
    pub fn squeeze_dim(&self, dim: i64) -> Result<Layout, LayoutError> {
        if self.ndim() == 0 && matches!(dim, 0 | -1) {
            return Ok(self.clone());
        }
        let d = normalize_dim(dim, self.ndim())?;
        if self.shape()[d] != 1 {
            return Ok(self.clone());
        }
        let (mut shape, mut strides) = (self.shape().to_vec(), self.strides().to_vec());
        shape.remove(d);
        strides.remove(d);
        self.derive(shape, strides, self.offset())
    }

    /// Inserts a size-1 dimension at position `dim` (`-(ndim+1)..=ndim`).
    ///
    /// ```
    /// use stridelab_core::layout::Layout;
    ///
    /// let v = Layout::contiguous(&[4])?;
    /// assert_eq!(v.unsqueeze(0)?.shape(), [1, 4]); // a row
    /// assert_eq!(v.unsqueeze(-1)?.shape(), [4, 1]); // a column
    /// # Ok::<(), stridelab_core::layout::LayoutError>(())
    /// ```
    pub fn unsqueeze(&self, dim: i64) -> Result<Layout, LayoutError> {
        let d = normalize_dim(dim, self.ndim() + 1)?;
        let stride = inserted_stride(self.shape(), self.strides(), d);
        let (mut shape, mut strides) = (self.shape().to_vec(), self.strides().to_vec());
        shape.insert(d, 1);
        strides.insert(d, stride);
        self.derive(shape, strides, self.offset())
    }

    /// Broadcasts size-1 dims (and new leading dims) to `sizes` with stride 0; `-1` keeps a
    /// dim. The result aliases storage cells, so tensors built on it are read-only.
    ///
    /// ```
    /// use stridelab_core::layout::Layout;
    ///
    /// // A 3-vector broadcast to 2×3: every row reads the same three cells (stride 0).
    /// let row = Layout::contiguous(&[1, 3])?;
    /// let grid = row.expand(&[2, -1])?;
    /// assert_eq!(grid.strides(), [0, 1]);
    /// assert_eq!(grid.offsets().collect::<Vec<_>>(), [0, 1, 2, 0, 1, 2]);
    /// assert!(!grid.is_non_overlapping()); // cells are shared: read-only
    /// assert!(row.expand(&[2, 4]).is_err()); // only size-1 dims grow
    /// # Ok::<(), stridelab_core::layout::LayoutError>(())
    /// ```
    pub fn expand(&self, sizes: &[i64]) -> Result<Layout, LayoutError> {
        if sizes.len() < self.ndim() {
            return Err(LayoutError::ShapeMismatch(format!(
                "expand: {} sizes were given for a {}-d view; give at least one per dim",
                sizes.len(),
                self.ndim()
            )));
        }
        let new_dims = sizes.len() - self.ndim();
        let mut shape = Vec::with_capacity(sizes.len());
        let mut strides = Vec::with_capacity(sizes.len());
        for (k, &size) in sizes.iter().enumerate() {
            if size < -1 {
                return Err(LayoutError::InvalidArgument(format!(
                    "expand: invalid size {size} at position {k}"
                )));
            }
            if k < new_dims {
                if size == -1 {
                    return Err(LayoutError::InvalidArgument(format!(
                        "expand: -1 is not allowed for the new leading dim {k}"
                    )));
                }
                shape.push(size as usize);
                strides.push(0);
                continue;
            }
            let d = k - new_dims;
            let (old, stride) = (self.shape()[d], self.strides()[d]);
            if size == -1 || size as u64 == old as u64 {
                shape.push(old);
                strides.push(stride);
            } else if old == 1 {
                shape.push(size as usize);
                strides.push(0);
            } else {
                return Err(LayoutError::ShapeMismatch(format!(
                    "expand: size {size} at position {k} does not match the existing size {old} \
                     of dim {d} (only size-1 dims can be expanded)"
                )));
            }
        }
        if shape.len() > MAX_DIMS {
            return Err(LayoutError::InvalidDims(format!(
                "a view may have at most {MAX_DIMS} dimensions"
            )));
        }
        self.derive(shape, strides, self.offset())
    }

    /// Reverses the given dims (all dims if `dims` is empty) as a view with negated strides
    /// (NumPy `flip`; PyTorch copies instead).
    ///
    /// ```
    /// use stridelab_core::layout::Layout;
    ///
    /// let m = Layout::contiguous(&[2, 3])?;
    /// let mirrored = m.flip(&[1])?; // each row backwards
    /// assert_eq!((mirrored.strides(), mirrored.offset()), (&[3, -1][..], 2));
    /// assert_eq!(mirrored.offsets().collect::<Vec<_>>(), [2, 1, 0, 5, 4, 3]);
    /// # Ok::<(), stridelab_core::layout::LayoutError>(())
    /// ```
    pub fn flip(&self, dims: &[i64]) -> Result<Layout, LayoutError> {
        let targets: Vec<usize> = if dims.is_empty() {
            (0..self.ndim()).collect()
        } else {
            let mut targets = Vec::with_capacity(dims.len());
            for &dim in dims {
                let d = normalize_dim(dim, self.ndim())?;
                if targets.contains(&d) {
                    return Err(LayoutError::InvalidDims(format!(
                        "flip: dim {d} appears more than once in {dims:?}"
                    )));
                }
                targets.push(d);
            }
            targets
        };
        let mut strides = self.strides().to_vec();
        let mut offset = self.offset() as i128;
        for d in targets {
            let (n, s) = (self.shape()[d] as i128, strides[d] as i128);
            if n > 0 {
                offset += (n - 1) * s;
            }
            strides[d] = checked_stride(-s, "a flipped stride")?;
        }
        self.finish(self.shape().to_vec(), strides, offset)
    }

    /// Any shape/strides/offset over the same storage, rejected if an element falls outside
    /// it. `storage_offset` is absolute; `None` keeps the current offset. Negative strides are
    /// allowed (NumPy's `as_strided`; PyTorch refuses them).
    ///
    /// ```
    /// use stridelab_core::layout::{ErrorKind, Layout};
    ///
    /// // Sliding windows of 3 over 6 elements: 4 windows, each starting one element later.
    /// let storage = Layout::contiguous(&[6])?;
    /// let windows = storage.as_strided(&[4, 3], &[1, 1], None)?;
    /// assert_eq!(windows.offset_of(&[2, 0]), Some(2));
    /// assert_eq!(windows.offset_of(&[3, 2]), Some(5));
    /// // An element past the storage is refused, not read.
    /// let past = storage.as_strided(&[4, 4], &[1, 1], None).unwrap_err();
    /// assert_eq!(past.kind(), ErrorKind::OutOfBounds);
    /// # Ok::<(), stridelab_core::layout::LayoutError>(())
    /// ```
    pub fn as_strided(
        &self,
        sizes: &[i64],
        strides: &[i64],
        storage_offset: Option<i64>,
    ) -> Result<Layout, LayoutError> {
        if sizes.len() != strides.len() {
            return Err(LayoutError::ShapeMismatch(format!(
                "as_strided: {} sizes but {} strides",
                sizes.len(),
                strides.len()
            )));
        }
        let shape = sizes
            .iter()
            .map(|&n| {
                usize::try_from(n).map_err(|_| {
                    LayoutError::InvalidArgument(format!("as_strided: negative size {n}"))
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let strides = strides
            .iter()
            .map(|&s| checked_stride(s as i128, "an as_strided stride"))
            .collect::<Result<Vec<_>, _>>()?;
        let offset = match storage_offset {
            None => self.offset(),
            Some(o) => usize::try_from(o).map_err(|_| {
                LayoutError::InvalidArgument(format!(
                    "as_strided: storage offset must be non-negative, got {o}"
                ))
            })?,
        };
        self.derive(shape, strides, offset)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arange_view(shape: &[usize]) -> Layout {
        Layout::contiguous(shape).unwrap()
    }

    #[test]
    fn slice_resolution_matches_python() {
        /// (start, stop, step, size) -> (resolved start, len)
        type Case = (Option<i64>, Option<i64>, Option<i64>, usize, i128, usize);
        let cases: &[Case] = &[
            (None, None, None, 5, 0, 5),
            (None, None, Some(2), 5, 0, 3),
            (None, None, Some(-1), 5, 4, 5),
            (Some(-2), None, None, 5, 3, 2),
            (Some(10), None, None, 5, 5, 0),
            (None, None, Some(-2), 5, 4, 3),
            (Some(3), Some(0), Some(-1), 5, 3, 3),
            (Some(-10), Some(10), Some(3), 5, 0, 2),
            (Some(1), Some(1), None, 5, 1, 0),
            (None, Some(-10), Some(-1), 5, 4, 5),
            (None, None, Some(-1), 0, -1, 0),
        ];
        for &(start, stop, step, size, want_start, want_len) in cases {
            let s = resolve_slice(start, stop, step, size).unwrap();
            assert_eq!(
                (s.start, s.len),
                (want_start, want_len),
                "{start:?}:{stop:?}:{step:?} of {size}"
            );
        }
        assert!(resolve_slice(None, None, Some(0), 3).is_err());
    }

    #[test]
    fn diagonal_offsets() {
        let a = arange_view(&[3, 4]);
        let d = a.diagonal(1, 0, 1).unwrap();
        assert_eq!(
            (d.shape(), d.strides(), d.offset()),
            (&[3][..], &[5][..], 1)
        );
        let d = a.diagonal(-1, 0, 1).unwrap();
        assert_eq!(
            (d.shape(), d.strides(), d.offset()),
            (&[2][..], &[5][..], 4)
        );
        let d = a.diagonal(9, 0, 1).unwrap();
        assert_eq!((d.shape(), d.offset()), (&[0][..], 0));
    }

    #[test]
    fn errors_have_kinds() {
        use super::super::error::ErrorKind;
        let a = arange_view(&[3, 4]);
        assert_eq!(a.transpose(0, 2).unwrap_err().kind(), ErrorKind::InvalidDim);
        assert_eq!(a.select(0, 3).unwrap_err().kind(), ErrorKind::OutOfBounds);
        assert_eq!(
            a.permute(&[0, 0]).unwrap_err().kind(),
            ErrorKind::InvalidDim
        );
        assert_eq!(
            a.expand(&[2, 4]).unwrap_err().kind(),
            ErrorKind::ShapeMismatch
        );
        assert_eq!(
            a.as_strided(&[4], &[4], Some(0)).unwrap_err().kind(),
            ErrorKind::OutOfBounds
        );
        assert_eq!(
            a.index(&[IndexItem::Slice {
                start: None,
                stop: None,
                step: Some(0)
            }])
            .unwrap_err()
            .kind(),
            ErrorKind::InvalidArgument
        );
    }
}
