//! Results as data: the versioned record schema, atomic file writes and the CSV export.
#![forbid(unsafe_code)]

pub mod compare;
pub mod csv;
pub mod infer_doc;
pub mod output;
pub mod schema;
#[cfg(test)]
mod test_docs;
pub mod validate;

pub use schema::*;
