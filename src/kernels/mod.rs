//! Kernel catalogue (data) and kernel families, plus the copy engine.

pub mod copy;
pub mod spec;
