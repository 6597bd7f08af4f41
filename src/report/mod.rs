//! report (to be built).
#![forbid(unsafe_code)]
