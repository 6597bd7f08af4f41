//! # stridelab
//!
//! A lab for strided memory access: it shows, measures and explains what row/column order,
//! transposes, diagonal and sub-sampled views, power-of-two strides and blocked layouts do to
//! CPU caches.
//!
//! ## Module map
//!
//! Data flows one way: **suite → runner → records → (report | gate)**. Modules stand on floors
//! and import only from floors below: ground ([`units`], [`stats`], [`mem`], [`vocab`]) <
//! [`layout`], [`cache`], [`trace`] < [`kernels`], [`explain`], [`results`] < [`harness`] < [`report`],
//! [`infer`] < [`cli`]. The two floor-4 modules never import each other: the infer document
//! they share is data in [`results::infer_doc`]. Beneath the lab's kernels floor stands the copy
//! engine, a crate of its own ([`stridelab_copy`], `crates/copy-engine`): it imports nothing of
//! the lab, and the lab reaches it from `kernels` up. `tests/integration/architecture.rs`
//! enforces the plan; `docs/architecture.md` draws it.
//!
//! - [`units`] — the one byte-size parser (`48K`, `2MiB`, `1G`) and byte formatters. No unsafe.
//! - [`stats`] — median, MAD, percentiles, the bootstrap CI and the one seeded generator
//!   ([`stats::SplitMix64`]). No unsafe.
//! - [`mem`] — 2 MiB-aligned, first-touched buffers and transparent huge pages.
//! - [`vocab`] — the kernel vocabulary records carry, as plain data: [`vocab::Family`],
//!   [`vocab::Params`], [`vocab::Work`], the one `key=value` formatter, and the
//!   [`vocab::ParamRules`] the catalogue implements so records are validated without importing
//!   the kernels. No unsafe.
//! - [`layout`] — the strided-view model: a [`layout::Layout`] is shape + strides + offset over a
//!   one-dimensional storage. View operations (transpose, permute, slicing, diagonal, expand,
//!   flip, `view`/`reshape`) only rewrite that metadata and are validated once with checked
//!   arithmetic; contiguity rules follow PyTorch/NumPy; the `EXPR` language of
//!   `stridelab layout` lives here too. No unsafe code.
//! - [`cache`] — cache geometry (sysfs, CPUID cross-check, overrides, presets), the
//!   set-associative simulator with cachegrind-compatible semantics and a 3C miss split, and the
//!   analytic set/GCD model that predicts how many sets a stride really uses.
//! - [`trace`] — memory traces of a user's own programs (valgrind lackey, Dinero IV din, plain
//!   `R|W ADDRESS [SIZE]`; gzip or not), streamed a buffer at a time into records that
//!   `sim --trace` feeds the simulator. No unsafe.
//! - [`kernels`] — the kernel catalogue as data (`KernelSpec`) and the kernel families
//!   (traversals, transposes, view walks, conflict probes, blocked layouts), each written once,
//!   generic over an accessor so the same code runs on real memory and feeds the simulator.
//!   Every copy in the lab goes through the strided N-d copy engine, the crate
//!   [`stridelab_copy`]: the lab hands it the cache sizes it detected and a planner value
//!   ([`kernels::copy_planner`]) that a run owns and drains of the plans it used.
//! - [`explain`] — what a strided view does to each cache level: the set model of its
//!   strides, its walks simulated and judged, padding advice, and the sentences `stridelab
//!   layout` prints about them. It stands on [`layout`] and [`cache`] alone.
//! - [`harness`] — thread pinning, counters, timing, suites and the runner that turns kernels
//!   into records. Kernels do not time or print their runs; only the copy planner times
//!   candidate schedules (and warns on stderr when it cannot keep its wisdom).
//! - [`results`] — the versioned record schema, validation on load, atomic file writes and
//!   output paths, baseline comparison, and the `stridelab infer` document.
//! - [`report`] — figures and the HTML page; it reads only records (model predictions
//!   included) and never measures nor runs a model.
//! - [`infer`] — the cache geometry from timing alone: the timing probes, the analysis of their
//!   latency curves, and the run that splits one budget between them; it writes the infer
//!   document.
//! - [`cli`] — the command-line front end; `main.rs` only maps errors to exit codes.
//!
//! ## The public API
//!
//! Public is what the binary, the benches and the integration tests use, and nothing else;
//! every other module is `pub(crate)`, so a change inside one is not an API change:
//! - [`cli::parse`] and [`cli::dispatch`] — the whole command line (the binary maps their
//!   result to an exit code);
//! - [`kernels`]: the catalogue ([`kernels::find`], [`kernels::resolve_params`],
//!   [`kernels::catalogue()`]), the accessor ([`kernels::access`]), the copy engine's
//!   planner for this machine ([`kernels::copy_planner`]), the strided tensor with values
//!   ([`kernels::tensor`], [`kernels::eval`]) and the families the benches time directly;
//! - [`cache::geometry`] and [`cache::sim`] — geometries and the simulator;
//! - [`layout`] and [`layout::expr`] — the view model and its expression language;
//! - [`explain`] — what a view does to each cache level, as data and as sentences;
//! - [`harness`] — suites and [`harness::run_suite`], measurement and pinning;
//! - [`results`] — the results document, read and validated once;
//! - [`report`] — figures and their data, for the report tests; [`infer`] — the probes and their
//!   analysis;
//! - the ground floor: [`units`], [`stats`], [`mem`], [`vocab`].

pub mod cache;
pub mod cli;
pub mod explain;
pub mod harness;
pub mod infer;
pub mod kernels;
pub mod layout;
pub mod mem;
pub mod report;
pub mod results;
pub mod stats;
pub mod trace;
pub mod units;
pub mod vocab;
