//! The strided-view model (to be built).
#![forbid(unsafe_code)]
