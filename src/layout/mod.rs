//! The strided-view model: a [`Layout`] is shape + strides + offset over a one-dimensional
//! storage; a [`Tensor`] pairs a layout with a shared storage.
//!
//! - [`strided`] — `Layout` and its validator (numbered invariants).
//! - [`error`] — `LayoutError` and the stable `ErrorKind`.
//! - [`ops`] — view ops: transpose, permute, indexing, select, narrow, diagonal, squeeze,
//!   unsqueeze, expand, flip, as_strided.
//! - [`contiguity`] — C/F contiguity and why a layout is not contiguous.
//! - [`reshape`] — the `view` rule and shape inference.
//! - [`iter`] — storage offsets in logical C order.
//! - [`tensor`] — views vs copies; every copy goes through the copy engine.
//! - [`expr`] — the `arange(N).op(...)[...]` language of `stridelab layout`.
#![forbid(unsafe_code)]

pub mod contiguity;
pub mod error;
pub mod expr;
pub mod iter;
pub mod ops;
pub mod reshape;
pub mod strided;
pub mod tensor;

pub use contiguity::{ContiguityBreak, Order};
pub use error::{ErrorKind, LayoutError};
pub use iter::Offsets;
pub use ops::IndexItem;
pub use strided::{Layout, MAX_DIMS};
pub use tensor::Tensor;
