//! The harness's one link to the kernel catalogue (lookup and parameter resolution).
//!
//! Stand-in until `kernels::catalogue` lands on main: every kernel is unknown.

use crate::kernels::spec::{KernelError, KernelSpec, Params};

/// The kernel called `name`.
pub fn find(name: &str) -> Result<&'static KernelSpec, KernelError> {
    Err(KernelError::UnknownKernel(name.to_string()))
}

/// Validated parameters of `spec` for user arguments.
pub fn resolve_params(
    spec: &KernelSpec,
    _args: &[(String, String)],
) -> Result<Params, KernelError> {
    Err(KernelError::UnknownKernel(spec.name.to_string()))
}

/// Every kernel.
pub fn catalogue() -> &'static [KernelSpec] {
    &[]
}
