//! The kernel vocabulary as plain data: a kernel's [`Family`], its resolved [`Params`], the
//! [`Work`] one run does, how parameters are written ([`format_params`]), and the
//! [`ParamRules`] a recorded point is checked against. Ground floor: `kernels` defines kernels
//! in these words and `results` records them, and neither imports the other.

#![forbid(unsafe_code)]

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The kernel families of the catalogue (one report section each).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Family {
    /// Row- and column-order traversals (`row-sum`, `col-sum`).
    Traverse,
    /// Fixed-step walks (`stride-sum`).
    Stride,
    /// Power-of-two stride conflict probes with ±1 controls (`conflict`).
    Conflict,
    /// Walks of views written in the layout language (`view-sum`).
    View,
    /// Transpose copies (`transpose`).
    Transpose,
    /// Tile-major layouts (`tiled-sum`, `to-tiles`).
    Blocked,
    /// Working-set latency (pointer chase).
    Latency,
    /// The references bandwidth figures are normalised by (`copy`, `read`).
    Reference,
    /// Matrix multiplication loop nests (`matmul`).
    Matmul,
    /// Tensor layouts: channels-first vs channels-last, their conversion, jagged vs flat rows.
    Tensor,
    /// A user's own loop nest in the LOOP language of `sim --loop` (`loop`).
    Loop,
}

/// A resolved parameter value.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ParamValue {
    Int(u64),
    Text(String),
}

/// Every parameter of a kernel, defaults filled in and validated, in name order.
pub type Params = BTreeMap<String, ParamValue>;

impl std::fmt::Display for ParamValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ParamValue::Int(i) => write!(f, "{i}"),
            ParamValue::Text(t) => f.write_str(t),
        }
    }
}

/// `key=value key=value`: how parameters are written in every label, table and CSV cell, so a
/// point is named the same way everywhere (and reads back as command-line arguments).
pub fn format_params<'a>(params: impl IntoIterator<Item = (&'a String, &'a ParamValue)>) -> String {
    params
        .into_iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The work one run of an instance does, from which the harness derives GB/s and ns/element.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Work {
    /// Bytes the kernel's definition reads (not counting cache-line overfetch).
    pub bytes_read: u64,
    /// Bytes the kernel's definition writes.
    pub bytes_written: u64,
    /// Elements (or, for probes, accesses) one run visits: the denominator of ns/element.
    pub elements: u64,
}

impl Work {
    /// `elements` values of `bytes` each, read once each (sums, probes, chases).
    pub const fn reads(elements: u64, bytes: u32) -> Self {
        Self {
            bytes_read: elements.saturating_mul(bytes as u64),
            bytes_written: 0,
            elements,
        }
    }

    /// `elements` values of `bytes` each, read once and written once each (copies).
    pub const fn copies(elements: u64, bytes: u32) -> Self {
        Self {
            bytes_written: elements.saturating_mul(bytes as u64),
            ..Self::reads(elements, bytes)
        }
    }

    /// `elements` f64 values read once each.
    pub const fn reads_f64(elements: u64) -> Self {
        Self::reads(elements, 8)
    }

    /// `elements` f64 values read once and written once each.
    pub const fn copies_f64(elements: u64) -> Self {
        Self::copies(elements, 8)
    }
}

/// Which part of a recorded point breaks the rules, with the reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RuleBreak {
    /// The kernel name is not one the rules know.
    Kernel(String),
    /// The kernel is known but belongs to another family.
    Family(String),
    /// A parameter is unknown, missing, of the wrong type or out of its declared range.
    Params(String),
}

/// The rules a recorded point's kernel, family and parameters must satisfy. The kernel
/// catalogue implements them; the results loader takes them as an argument, so records are
/// checked against the catalogue without the records module knowing it.
pub trait ParamRules {
    /// `Ok` when `kernel` exists, belongs to `family` and accepts `params` as recorded.
    fn check(&self, kernel: &str, family: Family, params: &Params) -> Result<(), RuleBreak>;

    /// Adds the defaults of parameters `kernel` gained after `params` were recorded, so a
    /// document written before (a committed baseline) still loads and matches new runs.
    fn complete(&self, kernel: &str, params: &mut Params) {
        let _ = (kernel, params);
    }
}
