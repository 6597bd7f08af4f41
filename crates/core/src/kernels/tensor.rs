//! [`Tensor`]: a shared storage plus a [`Layout`] — views share the storage, copies go
//! through the copy engine ([`stridelab_copy::copy_into_contiguous`], with the planner the
//! tensor was made with and its views inherit: the analytic one for the caller's machine). It lives on the
//! kernels floor because it copies; the layout floor below holds the metadata it is built
//! from.

#![forbid(unsafe_code)]

use std::sync::Arc;

use stridelab_copy::{CopyError, Planner, copy_into_contiguous};
use thiserror::Error;

use crate::layout::expr::{self, ViewSubject};
use crate::layout::{ErrorKind, IndexItem, Layout, LayoutError};

/// Why a tensor operation or a value-bearing expression failed: a layout error, or the copy
/// engine refusing a copy (never expected: layouts are validated before they copy).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum TensorError {
    #[error(transparent)]
    Layout(#[from] LayoutError),
    /// `op` is the text of the expression step that copied, when there is one.
    #[error("{}the copy engine refused the copy: {cause}", step_prefix(.op))]
    Copy {
        op: Option<String>,
        cause: CopyError,
    },
}

fn step_prefix(op: &Option<String>) -> String {
    op.as_ref()
        .map(|op| format!("in `{op}`: "))
        .unwrap_or_default()
}

impl From<CopyError> for TensorError {
    fn from(cause: CopyError) -> TensorError {
        TensorError::Copy { op: None, cause }
    }
}

impl TensorError {
    /// The stable category `stridelab layout --json` prints.
    pub fn kind(&self) -> ErrorKind {
        match self {
            TensorError::Layout(e) => e.kind(),
            TensorError::Copy { .. } => ErrorKind::Copy,
        }
    }

    /// The innermost layout error, if this is one.
    pub fn layout_root(&self) -> Option<&LayoutError> {
        match self {
            TensorError::Layout(e) => Some(e.root()),
            TensorError::Copy { .. } => None,
        }
    }
}

/// A strided view over a reference-counted storage.
///
/// View ops return a tensor sharing the same `Arc` (check with
/// [`Tensor::shares_storage_with`]); `reshape`/`flatten` when a view is impossible,
/// `contiguous` of a non-contiguous view and `clone_data` return a fresh storage written by
/// the copy engine. A view that may alias (stride 0, overlap) is read-only: see
/// [`Tensor::writable`].
#[derive(Debug, Clone)]
pub struct Tensor<T> {
    storage: Arc<[T]>,
    layout: Layout,
    writable: bool,
    /// Plans this tensor's copies (and its views' and copies' copies).
    copies: Arc<Planner>,
}

impl<T: Copy + 'static> Tensor<T> {
    /// A C-contiguous tensor owning `values` with the given shape, copying through `copies`.
    pub fn from_vec(
        values: Vec<T>,
        shape: &[usize],
        copies: Arc<Planner>,
    ) -> Result<Tensor<T>, LayoutError> {
        let layout = Layout::contiguous(shape)?;
        Tensor::from_storage(values.into(), layout, copies)
    }

    /// A tensor over an existing storage, copying through `copies`; the layout must have been
    /// validated for exactly this storage length.
    pub fn from_storage(
        storage: Arc<[T]>,
        layout: Layout,
        copies: Arc<Planner>,
    ) -> Result<Tensor<T>, LayoutError> {
        if layout.storage_len() != storage.len() {
            return Err(LayoutError::ShapeMismatch(format!(
                "the layout was validated for a storage of {} elements, this one has {}",
                layout.storage_len(),
                storage.len()
            )));
        }
        let writable = layout.is_non_overlapping();
        Ok(Tensor {
            storage,
            layout,
            writable,
            copies,
        })
    }

    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// The whole underlying storage (not just the cells this view touches).
    pub fn storage(&self) -> &Arc<[T]> {
        &self.storage
    }

    /// False for views that may alias storage cells (`expand`, overlapping `as_strided`)
    /// and for anything derived from them.
    pub fn writable(&self) -> bool {
        self.writable
    }

    /// True when both tensors use the very same storage allocation.
    pub fn shares_storage_with(&self, other: &Tensor<T>) -> bool {
        Arc::ptr_eq(&self.storage, &other.storage)
    }

    /// The elements in logical C order.
    pub fn values(&self) -> Vec<T> {
        // Layout validation (condition 6) guarantees every offset indexes the storage.
        self.layout.offsets().map(|o| self.storage[o]).collect()
    }

    /// One element, or `None` if the index is out of range or has the wrong rank.
    pub fn get(&self, index: &[usize]) -> Option<T> {
        self.layout.offset_of(index).map(|o| self.storage[o])
    }

    fn with_layout(&self, layout: Layout) -> Tensor<T> {
        let writable = self.writable && layout.is_non_overlapping();
        Tensor {
            storage: Arc::clone(&self.storage),
            layout,
            writable,
            copies: Arc::clone(&self.copies),
        }
    }

    /// A fresh C-contiguous tensor holding this view's elements, copied by the copy engine.
    /// This is the only place the layout model copies data.
    pub fn copy_to_contiguous(&self) -> Result<Tensor<T>, TensorError> {
        let layout = Layout::contiguous(self.layout.shape())?;
        let numel = layout.numel();
        let Some(&fill) = self.storage.first() else {
            // An empty storage backs only empty views, so there is nothing to copy.
            return Ok(Tensor::from_storage(
                Vec::new().into(),
                layout,
                Arc::clone(&self.copies),
            )?);
        };
        let mut data = vec![fill; numel];
        copy_into_contiguous(
            &self.copies,
            &self.storage,
            self.layout.shape(),
            self.layout.strides(),
            self.layout.offset(),
            &mut data,
        )?;
        Ok(Tensor::from_storage(
            data.into(),
            layout,
            Arc::clone(&self.copies),
        )?)
    }

    pub fn transpose(&self, dim0: i64, dim1: i64) -> Result<Tensor<T>, LayoutError> {
        Ok(self.with_layout(self.layout.transpose(dim0, dim1)?))
    }

    pub fn permute(&self, dims: &[i64]) -> Result<Tensor<T>, LayoutError> {
        Ok(self.with_layout(self.layout.permute(dims)?))
    }

    /// `.T`: all dims reversed.
    pub fn reversed_dims(&self) -> Result<Tensor<T>, LayoutError> {
        Ok(self.with_layout(self.layout.reversed_dims()?))
    }

    pub fn t(&self) -> Result<Tensor<T>, LayoutError> {
        Ok(self.with_layout(self.layout.t()?))
    }

    pub fn select(&self, dim: i64, index: i64) -> Result<Tensor<T>, LayoutError> {
        Ok(self.with_layout(self.layout.select(dim, index)?))
    }

    pub fn narrow(&self, dim: i64, start: i64, length: i64) -> Result<Tensor<T>, LayoutError> {
        Ok(self.with_layout(self.layout.narrow(dim, start, length)?))
    }

    pub fn index(&self, items: &[IndexItem]) -> Result<Tensor<T>, LayoutError> {
        Ok(self.with_layout(self.layout.index(items)?))
    }

    pub fn diagonal(&self, offset: i64, dim1: i64, dim2: i64) -> Result<Tensor<T>, LayoutError> {
        Ok(self.with_layout(self.layout.diagonal(offset, dim1, dim2)?))
    }

    pub fn squeeze(&self) -> Result<Tensor<T>, LayoutError> {
        Ok(self.with_layout(self.layout.squeeze()?))
    }

    pub fn squeeze_dim(&self, dim: i64) -> Result<Tensor<T>, LayoutError> {
        Ok(self.with_layout(self.layout.squeeze_dim(dim)?))
    }

    pub fn unsqueeze(&self, dim: i64) -> Result<Tensor<T>, LayoutError> {
        Ok(self.with_layout(self.layout.unsqueeze(dim)?))
    }

    pub fn expand(&self, sizes: &[i64]) -> Result<Tensor<T>, LayoutError> {
        Ok(self.with_layout(self.layout.expand(sizes)?))
    }

    pub fn flip(&self, dims: &[i64]) -> Result<Tensor<T>, LayoutError> {
        Ok(self.with_layout(self.layout.flip(dims)?))
    }

    pub fn as_strided(
        &self,
        sizes: &[i64],
        strides: &[i64],
        storage_offset: Option<i64>,
    ) -> Result<Tensor<T>, LayoutError> {
        Ok(self.with_layout(self.layout.as_strided(sizes, strides, storage_offset)?))
    }

    /// Same storage, new shape; fails with `view_incompatible` if strides cannot express it.
    pub fn view(&self, shape: &[i64]) -> Result<Tensor<T>, LayoutError> {
        Ok(self.with_layout(self.layout.view(shape)?))
    }

    /// A view when possible, else a C-contiguous copy with the new shape.
    pub fn reshape(&self, shape: &[i64]) -> Result<Tensor<T>, TensorError> {
        expr::reshape(self, shape)
    }

    /// Merges dims `start_dim..=end_dim` into one (PyTorch `flatten`): a view when possible.
    pub fn flatten(&self, start_dim: i64, end_dim: i64) -> Result<Tensor<T>, TensorError> {
        expr::flatten(self, start_dim, end_dim)
    }

    /// The same tensor if already C-contiguous, else a contiguous copy.
    pub fn contiguous(&self) -> Result<Tensor<T>, TensorError> {
        expr::contiguous(self)
    }

    /// PyTorch's `clone()`: always a copy. The copy is C-contiguous (NumPy's `copy()`;
    /// PyTorch would keep the strides of a dense non-contiguous input).
    pub fn clone_data(&self) -> Result<Tensor<T>, TensorError> {
        self.copy_to_contiguous()
    }
}

impl<T: Copy + 'static> ViewSubject for Tensor<T> {
    type Error = TensorError;

    fn layout(&self) -> &Layout {
        &self.layout
    }

    fn writable(&self) -> bool {
        self.writable
    }

    fn with_layout(&self, layout: Layout) -> Tensor<T> {
        Tensor::with_layout(self, layout)
    }

    fn copy_to_contiguous(&self) -> Result<Tensor<T>, TensorError> {
        Tensor::copy_to_contiguous(self)
    }

    fn shares_storage_with(&self, other: &Tensor<T>) -> bool {
        Tensor::shares_storage_with(self, other)
    }

    fn in_step(error: TensorError, op: String, column: usize) -> TensorError {
        match error {
            TensorError::Layout(e) => TensorError::Layout(e.in_step(op, column)),
            TensorError::Copy { cause, .. } => TensorError::Copy {
                op: Some(op),
                cause,
            },
        }
    }
}
