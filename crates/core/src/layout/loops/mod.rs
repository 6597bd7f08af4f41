//! The LOOP language of `stridelab sim --loop`: a user's own affine loop nest over arrays
//! declared with `--array`, as data a simulator (or, later, an executor) walks.
//!
//! ```text
//! --array 'a = f64[1024, 1024]'                  C order, the last dim contiguous
//! --array 'a = f64[1024, 1024] ld=1032'          rows 1032 elements apart (the leading dim)
//! --array 'b = f64 arange(1024*1024).view(1024,1024).T'   a view in the EXPR language
//! --array 'c = f32[64, 64] align=64'             placed on a 64-byte boundary (default 4096)
//! --loop  'for i in 0..1024: for j in i..1024 step 2: a[j, i] += b[i, j]; s += c[i, j]'
//! ```
//!
//! - The nest is perfect: `for NAME in LO..HI [step N]:` headers, then the innermost body,
//!   statements separated by `;`. `LO`, `HI` are affine in the enclosing indices and
//!   constants; the step is a positive integer; `i` runs `LO, LO+step, …` while below `HI`.
//! - A statement `T = RHS` reads every array reference of `RHS` (left to right), then stores
//!   `T`; `T += RHS` (also `-=`, `*=`, `/=`) reads `RHS`'s references, then loads and stores
//!   `T`. `read R, R, …` only reads. A bare name as `T` (`s += a[i, j]`) is a scalar kept in a
//!   register: no memory access. Only the references matter: `RHS` may use `+ - * /`,
//!   numbers, names and parentheses, and its values are never computed.
//! - Array indices are affine in the loop indices (`a[2*i+1, j-1]`): `i*j` is refused.
//! - Arrays are placed one after another from address 2^32, each on a 4 KiB boundary unless
//!   `align=` says otherwise (a power of two).
//!
//! Parsing ([`parse`]) checks names and arity and points at the column of what is wrong;
//! [`check()`] then counts the accesses against a budget and proves every index in bounds (or
//! names the reference and the loop index values that leave them), walking the outer loops
//! and taking the innermost loop's extremes analytically; [`walk()`] feeds the address stream.

pub mod check;
pub mod error;
pub mod parse;
pub mod walk;
#[cfg(test)]
mod walk_tests;

pub use check::{NestFacts, check};
pub use error::{LoopError, Source};
pub use walk::{AccessEvent, InnerRun, Placement, walk, walk_runs};

/// Most loops a nest may have (each is a level of recursion of the walkers).
pub const MAX_LOOPS: usize = 8;

/// Element types a declaration names, with their sizes in bytes (the names `layout --dtype`
/// knows; a test on the harness floor holds the two lists equal).
pub const DTYPES: &[(&str, u64)] = &[
    ("f64", 8),
    ("f32", 4),
    ("f16", 2),
    ("bf16", 2),
    ("i64", 8),
    ("i32", 4),
    ("i16", 2),
    ("i8", 1),
    ("u8", 1),
];

/// Default alignment of each array's first byte.
pub const DEFAULT_ALIGN: u64 = 4096;

/// `constant + Σ coeffs[k]·index_k` over the nest's loop indices (outermost first).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Affine {
    pub constant: i64,
    /// One coefficient per loop of the nest (zero for the loops not named).
    pub coeffs: Vec<i64>,
}

impl Affine {
    /// The value at the loop indices `values` (the first `values.len()` loops), exactly.
    pub fn at(&self, values: &[i64]) -> i128 {
        self.coeffs
            .iter()
            .zip(values)
            .fold(i128::from(self.constant), |acc, (&c, &v)| {
                acc + i128::from(c) * i128::from(v)
            })
    }

    /// The coefficient of loop `k` (zero when absent).
    pub fn coeff(&self, k: usize) -> i64 {
        self.coeffs.get(k).copied().unwrap_or(0)
    }
}

/// How an array was declared: by shape (C order, optional leading dimension) or as a view.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Declared {
    /// `f64[R, C]`: `ld` is the stride of the second-to-last dim (None: the last dim's size).
    Shape { ld: Option<usize> },
    /// `f64 arange(N).…`: the view's text.
    View { expr: String },
}

/// One array: its name, element type, and the strided view its indices go through.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArrayDecl {
    pub name: String,
    pub dtype: &'static str,
    pub itemsize: u64,
    pub shape: Vec<usize>,
    /// Strides in elements, one per dim.
    pub strides: Vec<i64>,
    /// Element offset of index (0, …, 0).
    pub offset: usize,
    /// Elements of storage the array owns (what it is placed with).
    pub storage_len: usize,
    pub align: u64,
    pub declared: Declared,
    /// The declaration as written.
    pub text: String,
}

impl ArrayDecl {
    /// The leading dimension of an array declared by shape with two or more dims.
    pub fn leading_dim(&self) -> Option<usize> {
        match self.declared {
            Declared::Shape { ld } if self.shape.len() >= 2 => {
                Some(ld.unwrap_or(self.shape[self.shape.len() - 1]))
            }
            _ => None,
        }
    }

    /// The same array with rows `ld` elements apart (for arrays declared by shape with ≥ 2 dims).
    pub fn with_leading_dim(&self, ld: usize) -> Result<ArrayDecl, LoopError> {
        let (strides, storage_len) = shape_strides(&self.name, &self.shape, Some(ld))?;
        let mut text = self.text.clone();
        if let Some(cut) = text.find(" ld=") {
            text.truncate(cut);
        }
        Ok(ArrayDecl {
            strides,
            storage_len,
            declared: Declared::Shape { ld: Some(ld) },
            text: format!("{text} ld={ld}"),
            ..self.clone()
        })
    }

    /// Bytes the array's storage takes.
    pub fn bytes(&self) -> u64 {
        self.storage_len as u64 * self.itemsize
    }
}

/// C-order strides of `shape` with the second-to-last dim's stride `ld` (if given), and the
/// storage the array then needs; refused when `ld` is below the last dim or sizes overflow.
pub(crate) fn shape_strides(
    name: &str,
    shape: &[usize],
    ld: Option<usize>,
) -> Result<(Vec<i64>, usize), LoopError> {
    let n = shape.len();
    if let (Some(ld), true) = (ld, n >= 2)
        && ld < shape[n - 1]
    {
        return Err(LoopError::Declaration {
            array: name.to_string(),
            message: format!(
                "ld={ld} is smaller than the last dim ({}): rows would overlap",
                shape[n - 1]
            ),
        });
    }
    let overflow = || LoopError::Declaration {
        array: name.to_string(),
        message: "its size overflows 64-bit integers".to_string(),
    };
    let mut strides = vec![0i64; n];
    let mut stride: u64 = 1;
    for k in (0..n).rev() {
        strides[k] = i64::try_from(stride).map_err(|_| overflow())?;
        let extent = if k == n.saturating_sub(1) && n >= 2 {
            ld.unwrap_or(shape[k]) as u64
        } else {
            shape[k] as u64
        };
        stride = stride.checked_mul(extent).ok_or_else(overflow)?;
    }
    // The storage reaches the last element: Σ (shape_k − 1)·stride_k + 1 (0 when empty).
    let storage = if shape.contains(&0) {
        0
    } else {
        shape
            .iter()
            .zip(&strides)
            .try_fold(1u64, |acc, (&s, &st)| {
                (s as u64 - 1)
                    .checked_mul(st as u64)
                    .and_then(|v| acc.checked_add(v))
            })
            .ok_or_else(overflow)?
    };
    Ok((strides, usize::try_from(storage).map_err(|_| overflow())?))
}

/// One loop header: `for var in lower..upper step step`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Loop {
    pub var: String,
    pub lower: Affine,
    pub upper: Affine,
    pub step: i64,
}

/// One array reference of a statement, as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reference {
    /// Index of the array in [`LoopNest::arrays`].
    pub array: usize,
    pub indices: Vec<Affine>,
    /// The reference's text, normalised (`a[j, i]`).
    pub text: String,
    /// Index of its statement in [`LoopNest::statements`] (0-based).
    pub statement: usize,
}

/// One access of an innermost iteration: which reference, load or store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slot {
    pub reference: usize,
    pub is_store: bool,
}

/// A statement of the body, as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Statement {
    pub text: String,
}

/// A parsed loop nest: arrays, loops (outermost first), statements, every array reference and
/// the accesses one innermost iteration makes, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoopNest {
    pub arrays: Vec<ArrayDecl>,
    pub loops: Vec<Loop>,
    pub statements: Vec<Statement>,
    pub references: Vec<Reference>,
    pub slots: Vec<Slot>,
    /// The loop text as written.
    pub text: String,
}

impl LoopNest {
    /// Parses `loop_text` over the arrays `array_texts` declare.
    pub fn parse(loop_text: &str, array_texts: &[String]) -> Result<LoopNest, LoopError> {
        parse::parse_nest(loop_text, array_texts)
    }

    /// The same nest with array `array`'s leading dimension set to `ld`.
    pub fn with_leading_dim(&self, array: usize, ld: usize) -> Result<LoopNest, LoopError> {
        let mut nest = self.clone();
        nest.arrays[array] = self.arrays[array].with_leading_dim(ld)?;
        Ok(nest)
    }

    /// The element stride (in elements of its array) of reference `r` per step of the
    /// innermost loop.
    pub fn innermost_stride(&self, r: usize) -> i64 {
        let reference = &self.references[r];
        let array = &self.arrays[reference.array];
        let inner = self.loops.len() - 1;
        let step = self.loops[inner].step;
        // Exact whenever the innermost loop runs twice or more with its indices in bounds
        // (the step then spans at most the storage); wraps only where it is never used.
        let elements: i128 = reference
            .indices
            .iter()
            .zip(&array.strides)
            .map(|(index, &stride)| {
                i128::from(index.coeff(inner)) * i128::from(stride) * i128::from(step)
            })
            .sum();
        elements as i64
    }
}
