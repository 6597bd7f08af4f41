//! Simulated points: one point as `stridelab sim` runs it ([`run`]), an instance's stream fed
//! to the cache model ([`simulate`]), where that simulation starts ([`warm`]) and the analytic
//! models' predictions a record carries ([`predict`]).

pub mod predict;
pub mod run;
pub mod simulate;
pub mod warm;
