//! harness (to be built).
