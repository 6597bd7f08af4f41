//! The kernel families, one file each: a family's kernels as catalogue entries, their access
//! orders (generic over [`crate::kernels::access::Mem`]) and their prepared instances.

#![forbid(unsafe_code)]

pub mod blocked;
pub mod channels;
pub mod conflict;
pub mod jagged;
pub mod latency;
pub mod matmul;
pub mod nest;
pub mod nest_order;
pub mod reference;
pub mod stride;
pub mod to_nhwc;
pub mod transpose;
pub mod traverse;
pub mod view;
