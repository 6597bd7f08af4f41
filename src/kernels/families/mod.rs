//! The kernel families, one file each: a family's kernels as catalogue entries, their access
//! orders (generic over [`crate::kernels::access::Mem`]) and their prepared instances.

pub mod blocked;
pub mod channels;
pub mod conflict;
pub mod jagged;
pub mod latency;
pub mod matmul;
pub mod reference;
pub mod stride;
pub mod transpose;
pub mod traverse;
pub mod view;
