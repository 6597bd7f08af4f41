//! The harness's one link to the kernel catalogue (lookup and parameter resolution).

pub use crate::kernels::catalogue::{catalogue, find, resolve_params};
