//! Results as data, everything a run leaves behind and every reader relies on:
//! - `schema`: the versioned results document (what one `stridelab run` measured);
//! - [`validate`]: the one check of a document read from disk, on load;
//! - `model`: the analytic models' predictions recorded beside each point;
//! - `time_model`: the machine's per-level probes and each point's predicted time;
//! - `tlb`: the data TLB as the machine manifest records it;
//! - [`infer_doc`]: the `stridelab infer --json` document;
//! - `compare`: two documents in, one gate verdict out;
//! - `output`: the output-path policy and atomic writes;
//! - `temporaries`: the temporaries beside outputs, made and swept;
//! - `csv`: the CSV export.
#![forbid(unsafe_code)]

pub mod compare;
pub mod csv;
pub mod history;
pub mod infer_doc;
pub mod model;
pub mod output;
pub mod precision_summary;
pub mod schema;
pub mod temporaries;
#[cfg(any(test, feature = "test-support"))]
pub mod test_docs;
pub mod time_model;
pub mod tlb;
pub mod validate;

pub use model::{LevelModel, ModelPrediction, PatternPrediction, ViewFacts, ViewSets};
pub use schema::*;

/// The recorded cache geometry as readers rebuild it: a level carries the rules of the
/// geometry that measured it, so readers take the cache's own type rather than a copy.
pub use crate::cache::geometry::{CacheKind, CacheLevel};
