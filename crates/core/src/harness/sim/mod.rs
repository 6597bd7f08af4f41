//! Simulated points: one point as `stridelab sim` runs it ([`run`]), an instance's stream fed
//! to the cache model ([`simulate`]), where that simulation starts ([`warm`]) and the analytic
//! models' predictions a record carries ([`predict`]), and the set/GCD model's verdict on a
//! point in words ([`model_words`]); a user's own loop nest simulated per array reference, with
//! padding advice re-simulated ([`loops`], its sentences in `loops_words`); a user's memory trace
//! through the same simulator ([`trace`]) with the figures counted beside it ([`trace_figures`]);
//! the data TLB beside any of them ([`tlb`]) and the hardware-prefetch model fed the same stream
//! ([`prefetch`], a nest's in [`loops_prefetch`]), both through [`beside`].

pub mod beside;
pub mod loops;
pub mod loops_prefetch;
pub mod loops_report;
pub mod loops_words;
pub mod model_words;
pub mod predict;
pub mod prefetch;
pub mod run;
pub mod simulate;
pub mod tlb;
pub mod trace;
pub mod trace_figures;
pub mod warm;
