//! The harness's one link to the kernel catalogue: lookup by name, parameter resolution (with
//! every rule the catalogue enforces, including memory) and the list for `run --list`.

pub use crate::kernels::catalogue::{
    catalogue, find, param_words, params_with_bytes, resolve_params,
};
