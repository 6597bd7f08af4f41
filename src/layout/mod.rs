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
#![forbid(unsafe_code)]

pub(crate) mod contiguity;
pub(crate) mod describe;
pub(crate) mod error;
pub mod expr;
pub(crate) mod iter;
pub(crate) mod ops;
pub(crate) mod reshape;
pub(crate) mod strided;

pub use contiguity::{ContiguityBreak, Order};
pub use error::{ErrorKind, LayoutError};
pub use iter::Offsets;
pub use ops::IndexItem;
pub use strided::{Layout, MAX_DIMS};
