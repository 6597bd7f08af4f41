//! `infer`: the cache geometry from timing alone — line size, L1d size, ways and sets, L2 and
//! LLC sizes and the L1 data-TLB reach, each with its evidence and a confidence, held against
//! what the system reports.
//!
//! It owns the whole pipeline: the timing probes ([`probe`]: dependent pointer chases), the
//! analysis of their latency curves ([`analysis`]: pure, tested on synthetic curves), the run
//! ([`infer_geometry`]: the probes in order within one budget split by [`BUDGET_SHARES`]) and
//! the parameters with their evidence. The document it produces,
//! [`InferReport`](crate::results::infer_doc::InferReport), is plain data in
//! [`crate::results::infer_doc`] so the report can render it without importing this module.
#![forbid(unsafe_code)]

pub mod analysis;
mod parameters;
pub mod probe;
mod run;
mod stages;
mod tlb;

pub use run::{
    BUDGET_SHARES, BudgetShares, CONFLICT_STRIDE_LINES, InferError, MAX_BUDGET_S, MIN_BUDGET_S,
    budget_in_range, infer_geometry,
};
pub use stages::{Reported, reported_l1_dtlb, reported_levels};
