//! The harness: thread pinning, counters, timing, suites and the runner that turns kernel
//! instances into records. It never plots.
//!
//! Entry point: [`run_suite`] measures a validated [`suite::Plan`] and returns the results
//! document; [`suite::Suite`] loads the built-in suites (`quick`, `full`, `gate`) or a TOML file.

#![forbid(unsafe_code)]

mod catalogue_link;
pub mod counters;
pub mod machine;
pub mod measure;
pub mod pin;
pub mod predict;
pub mod reference;
pub mod runner;
pub mod session;
pub mod simulate;
pub mod suite;
pub mod sweep;

pub use catalogue_link::catalogue;
pub use runner::MethodOptions;
pub use session::{Progress, RunOptions, run_suite};
pub use suite::{Plan, Suite};
pub mod gate;
pub mod gate_build;
pub mod gate_paired;
pub mod pool;
pub mod precision;
pub mod reach;
pub mod run_plan;
pub mod run_progress;
pub mod run_summary;
pub mod sim_run;
pub mod sim_text;
pub mod stop;
mod text_table;
pub mod warm_sim;
