//! Command-line definitions (clap derive) and dispatch; one file per subcommand.
//!
//! Exit codes: 0 success, 1 a verdict that failed (the regression gate), 2 usage or input error.

#![forbid(unsafe_code)]

use std::process::ExitCode;

use clap::{Parser, Subcommand};

pub(crate) mod common;
pub(crate) mod gate;
pub(crate) mod infer;
pub(crate) mod info;
pub(crate) mod layout;
pub(crate) mod model;
pub(crate) mod report;
pub(crate) mod run;
pub(crate) mod shell;
pub(crate) mod sim;
pub(crate) mod sim_loop;
pub(crate) mod sim_tlb;
pub(crate) mod sim_trace;
pub(crate) mod text;
pub(crate) mod why;
pub(crate) mod wisdom;

/// stridelab: what strided memory access does to CPU caches.
#[derive(Debug, Parser)]
#[command(
    name = "stridelab",
    version,
    about,
    long_about = None,
    after_help = MAIN_JOB_HELP,
    args_conflicts_with_subcommands = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    /// The main job's simulated geometry (only without a subcommand).
    #[command(flatten, next_help_heading = "Main job options (no subcommand)")]
    pub cache: common::CacheArgs,
    #[command(flatten, next_help_heading = "Main job options (no subcommand)")]
    pub wisdom: common::WisdomArgs,
    #[command(flatten, next_help_heading = "Main job options (no subcommand)")]
    pub model: common::ModelArgs,
    #[command(flatten, next_help_heading = "Main job options (no subcommand)")]
    pub history: common::HistoryArgs,
    /// Seconds of extra sampling each point may take towards a 2% CI of its median (the main
    /// job's default: 0.15, never more than the point's minimum samples took).
    #[arg(
        long,
        value_name = "SECONDS",
        help_heading = "Main job options (no subcommand)"
    )]
    pub sampling_budget: Option<f64>,
}

/// What bare `stridelab` does, in `--help`.
const MAIN_JOB_HELP: &str = "Without a subcommand, stridelab runs the main job (what `cargo run \
     --release` runs): it measures the quick suite on this machine, infers its cache geometry \
     from timing, and writes the HTML report to reports/latest/index.html (about a minute). \
     --preset and --cache choose the geometry its misses are simulated on, as for `run`.";

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Explain a strided view: shape, strides, offset, contiguity, the storage cells it touches,
    /// and what its walks do to every data cache level.
    Layout(layout::LayoutArgs),
    /// Measure a suite or one kernel's parameter grid and write the results document.
    Run(run::RunArgs),
    /// Performance regression gate: this build against a base commit (--base) or a stored baseline.
    Gate(gate::GateArgs),
    /// Render the HTML report (figures, tables) from one or more results files.
    Report(report::ReportArgs),
    /// Simulate a kernel's address stream, or a memory trace of your own program (--trace),
    /// through a cache hierarchy (counts, 3C, GCD model).
    Sim(sim::SimArgs),
    /// Time one point beside controls that each change one factor (pages, leading dimension,
    /// working set, dependent loads or storage order, threads, a buffer's start), interleaved, and name the factors that moved
    /// time beyond noise and whether the cache model predicted them.
    Why(why::WhyArgs),
    /// Describe this machine: CPU, caches (source, warnings), pages, pinning, perf events.
    Info(info::InfoArgs),
    /// Infer the cache geometry (line, L1d size/ways/sets, L2, LLC, L1 DTLB reach) from timing alone.
    Infer(infer::InferArgs),
    /// Plan the copy engine's schedules for a suite's copies now, into the wisdom file that
    /// `run` and the main job read (default ~/.cache/stridelab/wisdom.json).
    Wisdom(wisdom::WisdomCmdArgs),
    /// Measure this machine's per-level bandwidths and latencies (the time model `run` prices
    /// its points with), or show the kept ones (default ~/.cache/stridelab/machine-model.json).
    Model(model::ModelCmdArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell) to stdout.
    Completions(shell::CompletionsArgs),
    /// Print the man page (roff) of stridelab or of one subcommand to stdout:
    /// `stridelab man sim | man -l -`.
    Man(shell::ManArgs),
}

/// Parses the command line. A malformed `layout --json` command line is answered with that
/// command's JSON error object and exit code 2, so a script always reads one object; every
/// other parse error (and `--help`) is printed as clap prints it.
pub fn parse() -> Result<Cli, ExitCode> {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    match Cli::try_parse_from(&args) {
        Ok(cli) => Ok(cli),
        Err(err) if err.use_stderr() && is_layout_json(&args) => {
            let text = err.to_string();
            let message = text.split("\n\n").next().unwrap_or_default();
            let message = message.strip_prefix("error: ").unwrap_or(message);
            println!(
                "{}",
                text::layout::error_object(layout::USAGE, message.trim())
            );
            Err(ExitCode::from(2))
        }
        Err(err) => err.exit(),
    }
}

/// `stridelab layout … --json …` (before any `--`).
fn is_layout_json(args: &[std::ffi::OsString]) -> bool {
    args.get(1).is_some_and(|a| a == "layout")
        && args
            .iter()
            .skip(2)
            .take_while(|a| *a != "--")
            .any(|a| a == "--json")
}

/// Runs the chosen subcommand. Errors returned here are printed by `main` and exit with 2.
pub fn dispatch(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Some(Command::Layout(args)) => layout::run(args),
        Some(Command::Run(args)) => run::run(args),
        Some(Command::Gate(args)) => gate::run(args),
        Some(Command::Report(args)) => report::run(args),
        Some(Command::Sim(args)) => sim::run(args),
        Some(Command::Why(args)) => why::run(args),
        Some(Command::Info(args)) => info::run(args),
        Some(Command::Infer(args)) => infer::run(args),
        Some(Command::Wisdom(args)) => wisdom::run(args),
        Some(Command::Model(args)) => model::run(args),
        Some(Command::Completions(args)) => shell::completions(args),
        Some(Command::Man(args)) => shell::man(args),
        // The main job: measure the quick suite and write reports/latest/.
        None => report::main_job(&report::MainJob {
            cache: &cli.cache,
            wisdom: &cli.wisdom,
            model: &cli.model,
            history: &cli.history,
            sampling_budget: cli.sampling_budget,
        }),
    }
}
