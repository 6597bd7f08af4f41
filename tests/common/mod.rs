//! Helpers shared by integration tests. Each test crate uses a subset, hence the allow.
#![allow(dead_code)]

pub mod cachegrind;
pub mod guarded;
