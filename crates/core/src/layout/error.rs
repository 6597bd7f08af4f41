//! Typed errors of the layout model and the EXPR language.
//!
//! Every failure is a [`LayoutError`]; its [`ErrorKind`] is the stable machine-readable
//! category that `stridelab layout --json` prints.

use thiserror::Error;

/// The category of a [`LayoutError`], stable across releases (printed as JSON `kind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The EXPR text is not well formed, or names an unknown method/argument.
    Parse,
    /// A dimension index is out of range, repeated, or not allowed for this op.
    InvalidDim,
    /// An index is out of range, or a view would reach outside its storage.
    OutOfBounds,
    /// `view` cannot express the new shape with strides over the same storage.
    ViewIncompatible,
    /// Shapes disagree: element counts, ranks, or non-broadcastable sizes.
    ShapeMismatch,
    /// A size, stride or offset computation overflowed.
    Overflow,
    /// An argument has an invalid value (slice step 0, negative length, two `-1`s).
    InvalidArgument,
    /// The storage would be too large to materialise.
    TooLarge,
    /// The copy engine refused a copy (a bug if it ever happens: layouts are pre-validated).
    /// Raised by the value-bearing evaluator on the kernels floor, where copies run.
    Copy,
}

impl ErrorKind {
    /// Every kind, in the order `layout --help` lists them.
    pub const ALL: [ErrorKind; 9] = [
        ErrorKind::Parse,
        ErrorKind::InvalidDim,
        ErrorKind::InvalidArgument,
        ErrorKind::OutOfBounds,
        ErrorKind::ViewIncompatible,
        ErrorKind::ShapeMismatch,
        ErrorKind::Overflow,
        ErrorKind::TooLarge,
        ErrorKind::Copy,
    ];

    /// One line on when the kind is emitted (what `layout --help` prints beside it).
    pub fn describe(self) -> &'static str {
        match self {
            ErrorKind::Parse => "the text is not well formed, or names an unknown method",
            ErrorKind::InvalidDim => "a dimension is out of range, repeated or not allowed",
            ErrorKind::InvalidArgument => "an argument has a bad value (step 0, two -1s, ...)",
            ErrorKind::OutOfBounds => "an index, or the view, reaches outside the storage",
            ErrorKind::ViewIncompatible => "view() needs a copy (reshape() would make one)",
            ErrorKind::ShapeMismatch => "element counts, ranks or broadcast sizes disagree",
            ErrorKind::Overflow => "a size, stride or offset computation overflows",
            ErrorKind::TooLarge => "a storage, copy, all copies together or the view is too big",
            ErrorKind::Copy => "the copy engine refused a copy (never expected)",
        }
    }

    /// The JSON spelling of the kind.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Parse => "parse",
            ErrorKind::InvalidDim => "invalid_dim",
            ErrorKind::OutOfBounds => "out_of_bounds",
            ErrorKind::ViewIncompatible => "view_incompatible",
            ErrorKind::ShapeMismatch => "shape_mismatch",
            ErrorKind::Overflow => "overflow",
            ErrorKind::InvalidArgument => "invalid_argument",
            ErrorKind::TooLarge => "too_large",
            ErrorKind::Copy => "copy",
        }
    }
}

impl std::fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The details of a `view_incompatible` error (boxed to keep [`LayoutError`] small).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ViewIncompatible {
    pub shape: Vec<usize>,
    pub strides: Vec<isize>,
    /// The requested shape with `-1` resolved.
    pub requested: Vec<usize>,
    /// The requested shape as the user wrote it, for the `reshape(...)` suggestion.
    pub requested_args: String,
    /// Which input dims a new dim would have to merge, and why they cannot.
    pub reason: String,
}

/// Why a layout, a view operation or an expression was rejected.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum LayoutError {
    /// Malformed EXPR text; `column` is 1-based and counts characters.
    #[error("parse error at column {column}: {message}")]
    Parse { column: usize, message: String },

    /// A dimension argument outside `-ndim..ndim` (or `-(ndim+1)..=ndim` for insertion).
    #[error("dimension {dim} is out of range for a {ndim}-d view (expected {low}..={high})")]
    DimOutOfRange {
        dim: i64,
        ndim: usize,
        low: i64,
        high: i64,
    },

    /// Any other misuse of dimensions (duplicates, wrong count, same dims for diagonal...).
    #[error("{0}")]
    InvalidDims(String),

    /// An integer index outside its dimension.
    #[error("index {index} is out of bounds for dimension {dim} with size {size}")]
    IndexOutOfRange { index: i64, dim: usize, size: usize },

    /// A view would reach storage cells outside `0..storage_len`.
    #[error(
        "the view reaches storage index {reached}, outside a storage of {storage_len} elements \
         (valid indices 0..={last})",
        last = *storage_len as i128 - 1
    )]
    OutsideStorage { reached: i128, storage_len: usize },

    /// Element counts, ranks or sizes disagree.
    #[error("{0}")]
    ShapeMismatch(String),

    /// `view` is impossible without a copy.
    #[error(
        "cannot view shape {:?} with strides {:?} as {:?}: {}; use .reshape({}) instead, \
         which copies when a view is impossible",
        .0.shape, .0.strides, .0.requested, .0.reason, .0.requested_args
    )]
    ViewIncompatible(Box<ViewIncompatible>),

    /// A checked computation overflowed.
    #[error("arithmetic overflow while computing {0}")]
    Overflow(String),

    /// Integer arithmetic written in the EXPR text overflowed (`overflow`) or divided by
    /// zero; `column` (1-based) is its operator's.
    #[error("{} at column {column}: {message}", if *overflow { "arithmetic overflow" } else { "invalid arithmetic" })]
    Arithmetic {
        column: usize,
        overflow: bool,
        message: String,
    },

    /// An argument has an invalid value.
    #[error("{0}")]
    InvalidArgument(String),

    /// A storage, copy or view that the tool refuses to materialise.
    #[error("{what} of {len} elements is larger than the limit of {max} elements")]
    TooLarge {
        what: &'static str,
        len: u128,
        max: usize,
    },

    /// An error raised by one step of an expression, with that step's text.
    #[error("in `{op}`: {cause}")]
    InOp { op: String, cause: Box<LayoutError> },
}

impl LayoutError {
    /// The stable category of this error (the innermost one for [`LayoutError::InOp`]).
    pub fn kind(&self) -> ErrorKind {
        match self {
            LayoutError::Parse { .. } => ErrorKind::Parse,
            LayoutError::DimOutOfRange { .. } | LayoutError::InvalidDims(_) => {
                ErrorKind::InvalidDim
            }
            LayoutError::IndexOutOfRange { .. } | LayoutError::OutsideStorage { .. } => {
                ErrorKind::OutOfBounds
            }
            LayoutError::ShapeMismatch(_) => ErrorKind::ShapeMismatch,
            LayoutError::ViewIncompatible(_) => ErrorKind::ViewIncompatible,
            LayoutError::Overflow(_) => ErrorKind::Overflow,
            LayoutError::Arithmetic { overflow: true, .. } => ErrorKind::Overflow,
            LayoutError::Arithmetic {
                overflow: false, ..
            } => ErrorKind::InvalidArgument,
            LayoutError::InvalidArgument(_) => ErrorKind::InvalidArgument,
            LayoutError::TooLarge { .. } => ErrorKind::TooLarge,
            LayoutError::InOp { cause, .. } => cause.kind(),
        }
    }

    /// Attaches the text of the expression step that failed.
    pub fn in_op(self, op: impl Into<String>) -> LayoutError {
        LayoutError::InOp {
            op: op.into(),
            cause: Box::new(self),
        }
    }

    /// Attaches the step text; an argument error raised without a position (column 0) gets
    /// the step's `column`, since it belongs to that step.
    pub fn in_step(self, op: impl Into<String>, column: usize) -> LayoutError {
        let located = match self {
            LayoutError::Parse { column: 0, message } => LayoutError::Parse { column, message },
            other => other,
        };
        located.in_op(op)
    }

    /// The 1-based column of the EXPR text this error points at, when it has one.
    pub fn column(&self) -> Option<usize> {
        match self.root() {
            LayoutError::Parse { column, .. } | LayoutError::Arithmetic { column, .. } => {
                Some(*column).filter(|&c| c > 0)
            }
            _ => None,
        }
    }

    /// The error without step context (the innermost error).
    pub fn root(&self) -> &LayoutError {
        match self {
            LayoutError::InOp { cause, .. } => cause.root(),
            other => other,
        }
    }

    pub(crate) fn overflow(what: impl Into<String>) -> LayoutError {
        LayoutError::Overflow(what.into())
    }
}
