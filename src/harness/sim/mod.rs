//! Simulated points: one point as `stridelab sim` runs it ([`run`]), an instance's stream fed
//! to the cache model ([`simulate`]), where that simulation starts ([`warm`]) and the analytic
//! models' predictions a record carries ([`predict`]), and the set/GCD model's verdict on a
//! point in words ([`model_words`]); a user's own loop nest simulated per array reference, with
//! padding advice re-simulated ([`loops`], its sentences in `loops_words`).

pub mod loops;
pub(crate) mod loops_report;
pub(crate) mod loops_words;
pub(crate) mod model_words;
pub(crate) mod predict;
pub(crate) mod run;
pub(crate) mod simulate;
pub(crate) mod warm;
