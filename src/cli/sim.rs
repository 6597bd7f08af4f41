//! `stridelab sim KERNEL [key=value ...] [--preset P] [--cache NAME=SIZE,WAYS,LINE ...]
//! [--policy P] [--warm] [--json] [--engine fast|reference] [--tlb 4k|2m|off]` (or
//! `sim --list [KERNEL]`, or `sim --trace FILE`: a user's trace, `cli/sim_trace.rs`): feeds one run of a kernel's address stream to the cache simulator and
//! prints, per level, the counts, the 3C split of the misses and the analytic set/GCD model's
//! prediction for the kernel's strided pattern. `--engine reference` counts with the plain
//! reference simulator instead of the fast one: the same output, the definition the fast one is
//! checked against.
//!
//! Every count printed is **simulated** (cachegrind semantics); nothing is timed or measured.
//! Levels: this machine's detected data levels, or one preset's, each `--cache` replacing the
//! level of its name or adding one ([`CacheArgs`]); a level with warnings is simulated as given
//! and marked. Buffer k of the kernel is placed at (k+1)·2^32. Cold start unless `--warm` (one
//! unrecorded run first).
//!
//! Bounded before anything is allocated: the parameters are one point (a `run` grid such as
//! `rows=1,2` is refused), the accesses the simulation will make (estimated from the
//! parameters, twice with `--warm`) must not exceed `--max-accesses`, and the caches' up-front
//! state must fit in `--max-sim-memory`.
//!
//! `sim --loop TEXT --array DECL …` simulates a user's loop nest instead (`sim_loop.rs`).
//! `--prefetch on` feeds the same stream (a kernel's, a nest's or a trace's) to the
//! hardware-prefetch model as well (`harness::sim::prefetch`).

use std::process::ExitCode;

use anyhow::Context;

use crate::cache::sim::{Engine, Policy};
use crate::cli::common::{CacheArgs, ListArgs, WisdomArgs, kernel_name_parser};
use crate::cli::sim_tlb::TlbArg;
use crate::cli::sim_trace::{SimFlags, TraceArgs};
use crate::cli::text::sim::sim_text;
use crate::cli::text::sim_prefetch::beside_text;
use crate::harness::sim::prefetch::prefetch_config;
use crate::harness::sim::run::{DEFAULT_MAX_ACCESSES, SimRequest, simulate_point_on};

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum EngineArg {
    /// The fast simulator.
    Fast,
    /// The plain reference the fast one is checked against: the same output, slower.
    Reference,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum PrefetchArg {
    /// The simulator alone.
    Off,
    /// A hardware-prefetch model beside it (next-line and stream prefetchers, textbook
    /// parameters of the preset, else of this CPU's vendor).
    On,
}

#[derive(Debug, clap::Args)]
pub struct SimArgs {
    /// The kernel, e.g. col-sum (`--list` lists them).
    #[arg(
        required_unless_present_any = ["list", "loop_text", "trace"],
        value_parser = kernel_name_parser(),
        hide_possible_values = true
    )]
    pub kernel: Option<String>,
    /// Kernel parameters: key=value, or plain values in the kernel's parameter order.
    pub params: Vec<String>,
    /// Simulate your own loop nest instead of a kernel, e.g.
    /// 'for i in 0..1024: for j in 0..1024: a[j, i] += b[i, j]' (docs/loops.md: bounds affine
    /// in enclosing indices, `step N`, statements separated by `;`, `read a[i]`, scalars `s +=`).
    /// Counts per level and per array reference, and padded leading dimensions re-simulated.
    #[arg(long = "loop", value_name = "TEXT", conflicts_with_all = ["kernel", "list", "trace"])]
    pub loop_text: Option<String>,
    /// An array of --loop: 'a = f64[1024, 1024]', 'a = f64[1024, 1024] ld=1032', or a view
    /// 'b = f64 arange(1024*1024).view(1024,1024).T'; placed one after another from 2^32,
    /// each on a 4 KiB boundary (`align=N` to change). Repeatable.
    #[arg(long = "array", value_name = "DECL", requires = "loop_text")]
    pub arrays: Vec<String>,
    #[command(flatten)]
    pub list: ListArgs,
    #[command(flatten)]
    pub trace: TraceArgs,
    #[command(flatten)]
    pub cache: CacheArgs,
    // Copy-engine kernels replay the schedule the wisdom holds for their copy (what `run`
    // times), else the analytic one.
    #[command(flatten)]
    pub wisdom: WisdomArgs,
    /// Replacement policy of every level.
    #[arg(long, default_value = "lru", value_parser = policy_parser())]
    pub policy: Policy,
    /// Seed of the random policy.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Run the kernel once before counting (warm caches).
    #[arg(long)]
    pub warm: bool,
    /// Print one JSON object instead of tables.
    #[arg(long)]
    pub json: bool,
    /// Simulate the data TLB beside the caches with 4 KiB or 2 MiB pages: per level (the
    /// --preset's TLB table, else this CPU's from CPUID, a preset standing in where CPUID
    /// reports none, and said so) lookups, misses and misses per access, simulated (LRU).
    #[arg(
        long,
        value_enum,
        value_name = "4k|2m|off",
        default_value = "off",
        hide_possible_values = true
    )]
    pub tlb: TlbArg,
    /// Which simulator counts (the same counts either way).
    #[arg(long, value_enum, default_value = "fast")]
    pub engine: EngineArg,
    /// Also simulate hardware prefetch beside the simulator, for a kernel, --loop or --trace:
    /// the level a next-line and a stream prefetcher fill (L2), without and with prefetch,
    /// fed the first level's misses: misses covered, prefetches issued and unused, and the
    /// streams the walk keeps against the stream table's entries (docs/simulator.md,
    /// "Hardware prefetch"). Parameters: the --preset's, else this CPU vendor's; textbook
    /// values, not measured.
    #[arg(long, value_enum, default_value = "off", value_name = "on|off")]
    pub prefetch: PrefetchArg,
    /// Most accesses a kernel's simulation may make (estimated from the parameters, doubled
    /// by --warm; N takes K/M/G); a larger one is refused before anything is allocated. A
    /// --trace is streamed whatever its length.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_ACCESSES, value_parser = super::common::parse_count_arg)]
    pub max_accesses: u64,
    /// Most memory the simulated caches' tags and replacement state may take up front
    /// (SIZE takes K/M/G).
    #[arg(long, value_name = "SIZE", default_value = "1G", value_parser = parse_memory_size)]
    pub max_sim_memory: u64,
}

/// `--policy`: the name of one of [`Policy::ALL`], each listed with its help line.
fn policy_parser() -> impl clap::builder::TypedValueParser<Value = Policy> {
    use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
    let names = Policy::ALL
        .iter()
        .map(|policy| PossibleValue::new(policy.name()).help(policy.summary()));
    PossibleValuesParser::new(names).map(|name| Policy::named(&name).unwrap_or_default())
}

/// `SIZE` for `--max-sim-memory`, read by the crate's one size parser.
fn parse_memory_size(text: &str) -> Result<u64, String> {
    crate::units::parse_size(text).map_err(|e| e.to_string())
}

pub fn run(args: SimArgs) -> anyhow::Result<ExitCode> {
    if args.list.print()? {
        return Ok(ExitCode::SUCCESS);
    }
    let engine = match args.engine {
        EngineArg::Fast => Engine::Fast,
        EngineArg::Reference => Engine::Reference,
    };
    args.trace.check_used_with_trace()?;
    let tlb = args.tlb.choice(args.cache.preset.as_deref())?;
    if let Some(text) = &args.loop_text {
        let options = super::sim_loop::LoopOptions {
            arrays: &args.arrays,
            cache: &args.cache,
            policy: args.policy.with_seed(args.seed),
            warm: args.warm,
            json: args.json,
            max_accesses: args.max_accesses,
            max_sim_memory: args.max_sim_memory,
            tlb: tlb.as_ref(),
            prefetch: args.prefetch == PrefetchArg::On,
        };
        return super::sim_loop::run(text, &options);
    }
    if let Some(file) = &args.trace.trace {
        let flags = SimFlags {
            cache: &args.cache,
            policy: args.policy.with_seed(args.seed),
            engine,
            max_sim_memory: args.max_sim_memory,
            json: args.json,
            tlb: tlb.as_ref(),
            prefetch: args.prefetch == PrefetchArg::On,
        };
        return super::sim_trace::run(&args.trace, file, flags);
    }
    let Some(kernel) = &args.kernel else {
        anyhow::bail!("sim needs a kernel name (`stridelab sim --list` lists them)");
    };
    // This machine, detected once: the copy engine plans for its caches, and (without a
    // preset) it is the geometry simulated.
    let choice = args.cache.choice();
    let machine = choice.detect();
    let geometry = choice
        .resolve(&machine)
        .context("choosing the cache levels to simulate")?;
    let copies = args.wisdom.planner(&machine)?;
    let policy = args.policy.with_seed(args.seed);
    let prefetch = match args.prefetch {
        PrefetchArg::On => Some(prefetch_config(&geometry)?),
        PrefetchArg::Off => None,
    };
    let report = simulate_point_on(
        engine,
        &SimRequest {
            kernel,
            words: &args.params,
            geometry: &geometry,
            policy,
            warm: args.warm,
            max_accesses: args.max_accesses,
            max_sim_memory: args.max_sim_memory,
            copies,
            tlb: tlb.as_ref(),
            prefetch: prefetch.as_ref(),
        },
    )?;
    if args.json {
        println!("{}", report.to_json()?);
    } else {
        print!("{}", sim_text(&report));
        print!(
            "{}",
            beside_text(report.tlb.as_ref(), report.prefetch.as_ref())
        );
    }
    Ok(ExitCode::SUCCESS)
}
