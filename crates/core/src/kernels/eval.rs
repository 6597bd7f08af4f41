//! The EXPR language evaluated with values: `arange(N)` becomes a real storage `0..N` and the
//! steps run on a [`Tensor`], so copies go through the copy engine. Parsing and the step
//! rules live in `layout::expr`; this file owns the storage and what `stridelab layout` lists.

#![forbid(unsafe_code)]

use std::sync::Arc;

use stridelab_copy::Planner;

use super::tensor::{Tensor, TensorError};
use crate::layout::Layout;
use crate::layout::expr::{MAX_VALUE_ELEMENTS, StepResult, parse_bounded, run_steps};

/// What a storage element must offer: `arange` fills storage cell `i` with `from_index(i)`.
pub trait StorageElement: Copy + std::fmt::Debug + 'static {
    fn from_index(index: usize) -> Self;
}

impl StorageElement for i64 {
    fn from_index(index: usize) -> i64 {
        index as i64
    }
}

impl StorageElement for f64 {
    fn from_index(index: usize) -> f64 {
        index as f64
    }
}

/// Zero-sized elements: runs the steps (copies included) without allocating values.
impl StorageElement for () {
    fn from_index(_: usize) {}
}

/// The result of evaluating an expression.
#[derive(Debug, Clone)]
pub struct Evaluation<T> {
    pub expr: String,
    /// `arange(N)` first, then one entry per postfix step.
    pub steps: Vec<StepResult>,
    tensor: Tensor<T>,
    shares_storage: bool,
}

impl<T: StorageElement> Evaluation<T> {
    pub fn layout(&self) -> &Layout {
        self.tensor.layout()
    }

    pub fn tensor(&self) -> &Tensor<T> {
        &self.tensor
    }

    /// The storage the final view indexes: `0..N`, or the copy once a step copied.
    pub fn storage(&self) -> &[T] {
        self.tensor.storage()
    }

    pub fn storage_len(&self) -> usize {
        self.tensor.storage().len()
    }

    /// False once some step copied (then [`Evaluation::storage`] is that copy).
    pub fn shares_storage(&self) -> bool {
        self.shares_storage
    }

    /// The view's elements in logical C order.
    pub fn values(&self) -> Vec<T> {
        self.tensor.values()
    }
}

/// Evaluates `text` over an `i64` storage `0..N` (at most [`MAX_VALUE_ELEMENTS`]), its
/// copies planned by `copies`.
pub fn evaluate(text: &str, copies: Arc<Planner>) -> Result<Evaluation<i64>, TensorError> {
    evaluate_as::<i64>(text, MAX_VALUE_ELEMENTS, copies)
}

/// Evaluates `text` over a storage of `T::from_index(0..N)`; storages, copies and (for
/// value-bearing `T`) views larger than `max_elements` are refused with `too_large`; copies
/// are planned by `copies`.
pub fn evaluate_as<T: StorageElement>(
    text: &str,
    max_elements: usize,
    copies: Arc<Planner>,
) -> Result<Evaluation<T>, TensorError> {
    let expr = parse_bounded(text, max_elements)?;
    let storage: Arc<[T]> = (0..expr.arange).map(T::from_index).collect();
    let base = Tensor::from_storage(storage, Layout::contiguous(&[expr.arange])?, copies)?;
    let (steps, tensor) = run_steps(&expr, base.clone(), max_elements)?;
    if std::mem::size_of::<T>() > 0 && tensor.layout().numel() > max_elements {
        return Err(crate::layout::LayoutError::TooLarge {
            what: "the final view (its values are listed)",
            len: tensor.layout().numel() as u128,
            max: max_elements,
        }
        .into());
    }
    let shares_storage = tensor.shares_storage_with(&base);
    Ok(Evaluation {
        expr: text.to_string(),
        steps,
        tensor,
        shares_storage,
    })
}
