//! The harness: aligned buffers, thread pinning, counters, timing, statistics, suites and the
//! runner that turns kernel instances into records. It never plots.

pub mod buffer;
pub mod counters;
pub mod machine;
pub mod probe;
