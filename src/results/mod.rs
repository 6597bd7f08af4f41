//! Results as data: the versioned record schema, atomic file writes and the CSV export.
#![forbid(unsafe_code)]

pub mod compare;
pub mod csv;
pub mod infer_doc;
pub mod model;
pub mod output;
pub mod schema;
#[cfg(test)]
pub(crate) mod test_docs;
pub mod tlb;
pub mod validate;

pub use model::{LevelModel, ModelPrediction, PatternPrediction, ViewFacts, ViewSets};
pub use schema::*;

/// The recorded cache geometry as readers rebuild it: a level carries the rules of the
/// geometry that measured it, so readers take the cache's own type rather than a copy.
pub use crate::cache::geometry::{CacheKind, CacheLevel};
