//! The kernels and what they stand on:
//! - [`mod@catalogue`] (every kernel as data, [`spec`] the shape of an entry, `args` their
//!   command-line words) and [`families`], one file per family of kernels;
//! - [`access`]: the accessor every access order is written against, with `element` and
//!   [`typed`] for the element types, [`common`] for the pieces all kernels share;
//! - [`copy_planner`]: the lab's side of the copy engine (the `stridelab-copy` crate): the
//!   cache sizes it plans for and the planner a command asks for; [`tensor`] and [`eval`]:
//!   strided tensors with values and the EXPR evaluation built on it;
//! - `slowdown`: the injected slowdown the gate's calibration builds with.
//!
//! Every kernel's access order is one generic function over [`access::Mem`] (generic over the
//! element type): timed runs use [`access::RealMem`], simulation [`access::SimMem`] (or
//! [`access::AddressMem`] when no data was prepared), so the two cannot drift apart.

pub mod access;
pub mod args;
pub mod catalogue;
pub mod common;
pub mod copy_planner;
pub mod element;
pub mod eval;
pub mod families;
pub mod slowdown;
pub mod spec;
pub mod tensor;
pub mod typed;

pub use catalogue::{
    CATALOGUE_RULES, CatalogueRules, StridePattern, catalogue, estimate_accesses, find,
    resolve_params, simulation_note, simulation_start, stride_pattern,
};
