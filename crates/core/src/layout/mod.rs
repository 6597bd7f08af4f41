//! The strided-view model: a [`Layout`] is shape + strides + offset over a one-dimensional
//! storage. This floor holds metadata only: the tensor with values (and its copies) lives in
//! `kernels::tensor`, beside the copy engine.
//!
//! - `strided` — `Layout` and its validator (numbered invariants).
//! - `error` — `LayoutError` and the stable `ErrorKind`.
//! - `ops` — view ops: transpose, permute, indexing, select, narrow, diagonal, squeeze,
//!   unsqueeze, expand, flip, as_strided.
//! - `contiguity` — C/F contiguity and why a layout is not contiguous.
//! - `reshape` — the `view` rule and shape inference.
//! - `iter` — storage offsets in logical C order.
//! - [`expr`] — the `arange(N).op(...)[...]` language of `stridelab layout`, and its
//!   layout-only evaluation.
//! - [`loops`] — the LOOP language of `stridelab sim --loop`: affine loop nests over arrays.
//!
//! A view is built from a [`Layout`] by its ops, each returning a new layout over the same
//! storage (or a [`LayoutError`] saying which rule it breaks); [`expr::evaluate_layout`] builds
//! the same from the text `stridelab layout` takes:
//!
//! ```
//! use stridelab_core::layout::Layout;
//! use stridelab_core::layout::expr::evaluate_layout;
//!
//! // Column 5 of a 64×64 row-major matrix: 64 elements, one row (64 elements) apart.
//! let matrix = Layout::contiguous(&[4096])?.view(&[64, 64])?;
//! let column = matrix.t()?.select(0, 5)?;
//! assert_eq!((column.shape(), column.strides(), column.offset()), (&[64][..], &[64][..], 5));
//! assert!(!column.is_c_contiguous());
//!
//! // The same view as an expression.
//! let (parsed, storage_len) = evaluate_layout("arange(4096).view(64,64).T[5]")?;
//! assert_eq!((parsed, storage_len), (column, 4096));
//! # Ok::<(), stridelab_core::layout::LayoutError>(())
//! ```
#![forbid(unsafe_code)]

pub mod contiguity;
pub mod describe;
pub mod error;
pub mod expr;
pub mod iter;
pub mod loops;
pub mod ops;
pub mod reshape;
pub mod strided;

pub use contiguity::{ContiguityBreak, Order};
pub use error::{ErrorKind, LayoutError};
pub use iter::Offsets;
pub use ops::IndexItem;
pub use strided::{Layout, MAX_DIMS};
