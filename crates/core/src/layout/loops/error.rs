//! Why a loop nest or an array declaration is refused: malformed text (with the 1-based
//! column it points at, and the text to draw the caret under), a declaration that cannot be
//! laid out, an index that leaves its array (naming the reference and the loop index values
//! that reach it), or a nest beyond the work budget.

use thiserror::Error;

/// Which text an error points into.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// The `--loop` text.
    Loop,
    /// The `--array` declaration with this (0-based) position.
    Array(usize),
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Source::Loop => f.write_str("--loop"),
            Source::Array(k) => write!(f, "--array #{}", k + 1),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum LoopError {
    /// Malformed or meaningless text (unknown array or loop index, wrong arity, `i*j`).
    #[error("{origin}: error at column {column}: {message}")]
    Text {
        origin: Source,
        /// The text the column counts in.
        input: String,
        column: usize,
        message: String,
    },
    /// A declaration that parses but cannot be laid out.
    #[error("array {array}: {message}")]
    Declaration { array: String, message: String },
    /// An index that leaves its array somewhere in the nest.
    #[error(
        "statement {} (`{}`): {} leaves its array: {} gives {}, but {} has shape {:?}",
        .0.statement, .0.statement_text, .0.reference, .0.point, .0.reached, .0.array, .0.shape
    )]
    OutOfBounds(Box<OutOfBounds>),
    /// More accesses than the budget.
    #[error(
        "the loop nest makes more than {limit} accesses (at least {counted} counted before \
         stopping); `--max-accesses N` raises the limit"
    )]
    TooManyAccesses { counted: u64, limit: u64 },
    /// More outer-loop iterations to walk than the budget.
    #[error(
        "the loop nest's outer loops run more than {limit} iterations; `--max-accesses N` \
         raises the limit"
    )]
    TooManyIterations { limit: u64 },
    /// A bound, an index or an address beyond 64-bit integers.
    #[error("{0} does not fit in 64-bit integers")]
    Overflow(String),
}

/// Where a reference leaves its array (boxed to keep [`LoopError`] small).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutOfBounds {
    /// 1-based.
    pub statement: usize,
    pub statement_text: String,
    pub reference: String,
    /// `i = 1023, j = 0`.
    pub point: String,
    /// `a[0, 1024]`.
    pub reached: String,
    pub array: String,
    pub shape: Vec<usize>,
}

impl LoopError {
    /// The text and 1-based column to draw a caret under, for errors that point into text.
    pub fn caret(&self) -> Option<(&str, usize)> {
        match self {
            LoopError::Text { input, column, .. } => Some((input, *column)),
            _ => None,
        }
    }
}
