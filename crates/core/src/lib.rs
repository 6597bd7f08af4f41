//! # stridelab-core
//!
//! The lab of stridelab, a lab for strided memory access: the view model, the cache
//! simulator, the kernels, the harness that times and simulates them, the records they make and
//! the inference of a cache geometry from timing. The report (`stridelab-report`) draws the
//! records; the command line (`stridelab`, which re-exports these modules) runs it all.
//!
//! ## Module map
//!
//! Data flows one way: **suite → runner → records → (report | gate)**. Modules stand on floors
//! and import only from floors below: ground ([`units`], [`stats`], [`mem`], [`vocab`]) <
//! [`layout`], [`cache`], [`trace`] < [`kernels`], [`explain`], [`results`] < [`harness`] < the report
//! (its own crate), [`infer`] < the command line (the `stridelab` crate). The two floor-4
//! modules never import each other: the infer document they share is data in
//! [`results::infer_doc`]. Beneath the lab's kernels floor stands the copy
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
//! - [`trace`] — memory traces a user brings (valgrind lackey, Dinero din, plain `R|W ADDR`;
//!   gzip or not), read as a stream of records in constant memory.
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
//! - the report, the crate `stridelab-report` — figures and the HTML page; it reads only
//!   records (model predictions included) and never measures nor runs a model.
//! - [`infer`] — the cache geometry from timing alone: the timing probes, the analysis of their
//!   latency curves, and the run that splits one budget between them; it writes the infer
//!   document.
//! - the command line, the crate `stridelab` — one file per subcommand; `main.rs` only maps
//!   errors to exit codes.
//!
//! ## The public API
//!
//! For your own code: [`harness::custom`] times and simulates a kernel you write once against
//! the accessor ([`kernels::access::Mem`]); [`cache::sim::Hierarchy`] takes addresses you feed
//! it ([`cache::AccessSink`]); `examples/own_kernel.rs` and `examples/feed_addresses.rs` show
//! both. Public besides is what the command line, the report, the benches and the integration
//! tests use:
//! - [`kernels`]: the catalogue ([`kernels::find`], [`kernels::resolve_params`],
//!   [`kernels::catalogue()`]), the accessor ([`kernels::access`]), the copy engine's
//!   planner for this machine ([`kernels::copy_planner`]), the strided tensor with values
//!   ([`kernels::tensor`], [`kernels::eval`]) and the families the benches time directly;
//! - [`cache::geometry`] and [`cache::sim`] — geometries and the simulator;
//! - [`layout`] and [`layout::expr`] — the view model and its expression language;
//! - [`explain`] — what a view does to each cache level, as data and as sentences;
//! - [`harness`] — suites and [`harness::run_suite`], measurement and pinning;
//! - [`results`] — the results document, read and validated once;
//! - [`infer`] — the probes and their analysis;
//! - the ground floor: [`units`], [`stats`], [`mem`], [`vocab`].

pub mod cache;
pub mod explain;
pub mod harness;
pub mod infer;
pub mod kernels;
pub mod layout;
pub mod mem;
pub mod results;
pub mod stats;
pub mod trace;
pub mod units;
pub mod vocab;
