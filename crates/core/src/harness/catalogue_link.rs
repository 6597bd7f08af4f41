//! The kernel catalogue's lookups as the harness re-exports them: lookup by name, parameter
//! resolution (with every rule the catalogue enforces, including memory), the parameter words
//! and the list for `run --list`. The suite loader, the run session and some of the command
//! line's texts read them here; it is not the only way in: other harness files and the command
//! line import `kernels` directly, as their floors allow.

pub use crate::kernels::catalogue::{
    catalogue, find, param_words, params_with_bytes, resolve_params,
};
