//! The analytic set model (to be built).
