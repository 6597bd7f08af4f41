//! Simulated points: one point as `stridelab sim` runs it ([`run`]), an instance's stream fed
//! to the cache model ([`simulate`]), where that simulation starts ([`warm`]) and the analytic
//! models' predictions a record carries ([`predict`]), and the set/GCD model's verdict on a
//! point in words ([`model_words`]); a user's memory trace through the same simulator
//! ([`trace`]) with the figures counted beside it ([`trace_figures`]).

pub(crate) mod model_words;
pub(crate) mod predict;
pub(crate) mod run;
pub(crate) mod simulate;
pub(crate) mod trace;
pub(crate) mod trace_figures;
pub(crate) mod warm;
