//! `stridelab sim --trace FILE [--trace-format lackey|din|plain] [--skip-bad-lines]
//! [--top-sets N]` with `sim`'s geometry, `--policy`, `--engine`, `--max-sim-memory` and
//! `--json`: a memory trace of the user's own program through the cache simulator. The library
//! (`harness::sim::trace`) reads, simulates and counts; this file reads the flags and prints.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::cache::sim::{Engine, Policy};
use crate::cache::tlb::TlbChoice;
use crate::cli::common::CacheArgs;
use crate::cli::text::sim_prefetch::beside_text;
use crate::cli::text::sim_trace::trace_text;
use crate::harness::sim::prefetch::prefetch_config;
use crate::harness::sim::trace::{DEFAULT_TOP_SETS, TraceRequest, simulate_trace};
use crate::trace::{TraceFormat, TraceOptions, open_trace};

/// The flags of `sim --trace`.
#[derive(Debug, Clone, clap::Args)]
pub struct TraceArgs {
    /// Simulate FILE, a memory trace of your own program, instead of a kernel (`-`: stdin):
    /// valgrind lackey's `--trace-mem=yes` output, Dinero IV din, or plain `R|W ADDRESS
    /// [SIZE]` lines, each possibly gzip-compressed (told by its magic bytes). Streamed: the
    /// reader's memory is the same whatever the trace's length; the simulator's is its
    /// up-front state (bounded by --max-sim-memory) plus what grows with the footprint (the
    /// lines the 3C split has seen), never with the number of records. Cold start, 3C on;
    /// instruction fetches are counted and skipped.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["kernel", "warm", "list"])]
    pub trace: Option<PathBuf>,
    /// The trace's format (default: told from its first data line).
    #[arg(long, value_name = "FORMAT", requires = "trace", value_parser = format_parser())]
    pub trace_format: Option<TraceFormat>,
    /// Count lines of the trace that do not parse and go on (their count is printed),
    /// instead of stopping at the first with an error.
    #[arg(long, requires = "trace")]
    pub skip_bad_lines: bool,
    /// Busiest sets listed per level (default 8).
    #[arg(long, value_name = "N", requires = "trace")]
    pub top_sets: Option<usize>,
}

impl TraceArgs {
    /// Refuses the trace's flags without `--trace` (clap's `requires` lets them through beside
    /// a kernel).
    pub fn check_used_with_trace(&self) -> anyhow::Result<()> {
        let given = [
            ("--trace-format", self.trace_format.is_some()),
            ("--skip-bad-lines", self.skip_bad_lines),
            ("--top-sets", self.top_sets.is_some()),
        ];
        match given.iter().find(|(_, given)| *given) {
            Some((flag, _)) if self.trace.is_none() => {
                anyhow::bail!("{flag} applies to a trace: it needs --trace FILE")
            }
            _ => Ok(()),
        }
    }
}

/// `--trace-format`: one of [`TraceFormat::ALL`], each listed with what its lines look like.
fn format_parser() -> impl clap::builder::TypedValueParser<Value = TraceFormat> {
    use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
    let names = TraceFormat::ALL
        .iter()
        .map(|format| PossibleValue::new(format.name()).help(format.summary()));
    PossibleValuesParser::new(names)
        .map(|name| TraceFormat::named(&name).unwrap_or(TraceFormat::Plain))
}

/// What `sim --trace` takes of `sim`'s own flags.
#[derive(Debug)]
pub struct SimFlags<'a> {
    pub cache: &'a CacheArgs,
    pub policy: Policy,
    pub engine: Engine,
    pub max_sim_memory: u64,
    pub json: bool,
    pub tlb: Option<&'a TlbChoice>,
    /// `--prefetch on`: the prefetch model beside the simulator.
    pub prefetch: bool,
}

/// Runs `sim --trace FILE`.
pub fn run(args: &TraceArgs, file: &Path, sim: SimFlags<'_>) -> anyhow::Result<ExitCode> {
    let geometry = sim.cache.choose()?;
    let prefetch = sim
        .prefetch
        .then(|| prefetch_config(&geometry))
        .transpose()?;
    let mut input = open_trace(file)?;
    let report = simulate_trace(
        &mut input,
        &TraceRequest {
            options: TraceOptions {
                format: args.trace_format,
                skip_bad_lines: args.skip_bad_lines,
            },
            geometry: &geometry,
            policy: sim.policy,
            engine: sim.engine,
            max_sim_memory: sim.max_sim_memory,
            top_sets: args.top_sets.unwrap_or(DEFAULT_TOP_SETS),
            tlb: sim.tlb,
            prefetch: prefetch.as_ref(),
        },
    )?;
    if sim.json {
        println!("{}", report.to_json()?);
    } else {
        print!("{}", trace_text(&report));
        print!(
            "{}",
            beside_text(report.tlb.as_ref(), report.prefetch.as_ref())
        );
    }
    Ok(ExitCode::SUCCESS)
}
