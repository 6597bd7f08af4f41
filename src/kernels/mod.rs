//! Kernel catalogue (data) and kernel families, plus the copy engine and the strided tensor
//! with values (and the EXPR evaluation that copies) built on it.
//!
//! Every kernel's access order is one generic function over [`access::Mem`] (generic over the
//! element type): timed runs use [`access::RealMem`], simulation [`access::SimMem`] (or
//! [`access::AddressMem`] when no data was prepared), so the two cannot drift apart.

pub mod access;
pub mod args;
pub mod blocked;
pub mod catalogue;
pub mod channels;
pub mod common;
pub mod conflict;
pub mod copy;
pub mod element;
pub mod eval;
pub mod jagged;
pub mod latency;
pub mod matmul;
pub mod reference;
pub mod slowdown;
pub mod spec;
pub mod stride;
pub mod tensor;
pub mod transpose;
pub mod traverse;
pub mod typed;
pub mod view;
pub mod view_cache;
pub mod view_padding;
pub mod view_report;
pub mod view_walks;

pub use catalogue::{
    CATALOGUE_RULES, CatalogueRules, StridePattern, catalogue, estimate_accesses, find,
    resolve_params, simulation_note, simulation_start, stride_pattern,
};
