//! # stridelab
//!
//! A lab for strided memory access: it shows, measures and explains what row/column order,
//! transposes, diagonal and sub-sampled views, power-of-two strides and blocked layouts do to
//! CPU caches.
//!
//! This crate is the command line ([`cli`]; `main.rs` only maps errors to exit codes) over the
//! lab's library crates, re-exported here under the names the floors have in
//! `docs/architecture.md`: the lab itself (`stridelab-core`: [`units`], [`stats`], [`mem`],
//! [`vocab`], [`layout`], [`cache`], [`kernels`], [`explain`], [`results`], [`harness`],
//! [`infer`], [`trace`]), the report (`stridelab-report`, as [`report`]) and the copy engine
//! (`stridelab-copy`). Data flows one way: **suite → runner → records → (report | gate)**;
//! `tests/integration/architecture.rs` enforces the floors.
//!
//! ## The public API
//!
//! [`cli::parse`] and [`cli::dispatch`] are the whole command line (the binary maps their
//! result to an exit code); everything else is the library crates' own public surface (see
//! `stridelab_core`'s crate documentation).

pub mod cli;

pub use stridelab_core::{
    cache, explain, harness, infer, kernels, layout, mem, results, stats, trace, units, vocab,
};
pub use stridelab_report as report;
