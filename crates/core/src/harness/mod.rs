//! The harness turns kernel instances into records. It never plots, and only the gate prints:
//! its progress lines (the base build, each round, each point) go to stderr (`gate/`); a run
//! reports through a [`Progress`] that the command line renders. Its parts:
//! - [`suite`]: suites as data (the built-in `quick`, `full`, `gate`, `loops` and TOML files), with the
//!   working-set reaches and geometry sweeps they expand;
//! - `run`: a validated [`Plan`] run point by point ([`run_suite`]), passes pooled, Ctrl-C;
//! - [`measure`]: timing, perf counters, thread pinning, the references bandwidth is divided
//!   by, and each point's precision verdict;
//! - `sim`: simulated points and the models' predictions a record carries;
//! - `gate`: the regression gate, against a stored baseline or a base commit built here;
//! - `machine`: the manifest every results file embeds;
//! - `time_model`: this machine's per-level probes and each timed point's predicted time;
//! - [`custom`]: a user's own kernel, written against the accessor, timed and simulated as the
//!   lab's are (a user's loop nest is the catalogue's `loop` kernel);
//! - `catalogue_link`: the catalogue's lookups re-exported ([`catalogue`] and the rest); the
//!   parts above also import `kernels` directly, for kernel specs, instances and the copy
//!   planner's events.

#![forbid(unsafe_code)]

pub mod catalogue_link;
pub mod custom;
pub mod gate;
pub mod history;
pub mod machine;
pub mod measure;
pub mod run;
pub mod sim;
pub mod suite;
pub mod time_model;
pub mod why;

pub use catalogue_link::catalogue;
pub use run::runner::MethodOptions;
pub use run::session::{Progress, RunOptions, run_suite};
pub use sim::trace::{TraceReport, TraceRequest, TraceRunError, simulate_trace};
pub use suite::{Plan, Suite};
