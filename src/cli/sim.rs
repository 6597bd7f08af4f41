//! `stridelab sim KERNEL [key=value ...] [--cache NAME=SIZE,WAYS,LINE ...] [--preset P]
//! [--policy lru|plru|fifo|random] [--warm] [--json]`: feeds one run of a kernel's address
//! stream to the cache simulator and prints, per level, the counts, the 3C split of the misses
//! and the analytic set/GCD model's prediction for the kernel's strided pattern.
//!
//! Every count printed is **simulated** (cachegrind semantics); nothing is timed or measured.
//! Levels: the detected geometry, or — when any `--preset` or `--cache` is given — exactly
//! those ([`CacheArgs`]: presets' data levels first, then each `--cache` in the order given;
//! one with the name of a level already listed replaces it in place). Buffer k of the kernel is placed at
//! (k+1)·2^32. Cold start unless `--warm` (one unrecorded run first).
//!
//! Bounded before anything is allocated: the parameters are one point (a `run` grid such as
//! `rows=1,2` is refused), the accesses the simulation will make (estimated from the
//! parameters, twice with `--warm`) must not exceed `--max-accesses`, and the caches' up-front
//! state must fit in `--max-sim-memory`.

use std::fmt::Write as _;
use std::process::ExitCode;

use serde::Serialize;

use crate::cache::geometry::{CacheLevel, Geometry};
use crate::cache::model::{LevelPrediction, predict};
use crate::cache::sim::{Hierarchy, LevelStats, Policy};
use crate::cli::info::CacheArgs;
use crate::kernels::access::sim_address;
use crate::kernels::args::parse_kernel_words;
use crate::kernels::spec::{KernelSpec, Params, PrepareOptions};
use crate::kernels::{
    StridePattern, estimate_accesses, find, resolve_params, simulation_note, stride_pattern,
};
use crate::units::format_size_exact;

/// Accesses a simulation may make by default: 2^28, tens of seconds at most with the 3C
/// split on a trace of distinct lines.
const DEFAULT_MAX_ACCESSES: u64 = 1 << 28;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum PolicyArg {
    /// True least-recently-used (cachegrind's policy).
    Lru,
    /// Binary-tree pseudo-LRU.
    Plru,
    /// First in, first out.
    Fifo,
    /// A random way (seeded by --seed).
    Random,
}

#[derive(Debug, clap::Args)]
pub struct SimArgs {
    /// The kernel, e.g. col-sum (see the catalogue).
    pub kernel: String,
    /// Kernel parameters: key=value, or plain values in the kernel's parameter order.
    pub params: Vec<String>,
    #[command(flatten)]
    pub cache: CacheArgs,
    /// Replacement policy of every level.
    #[arg(long, value_enum, default_value = "lru")]
    pub policy: PolicyArg,
    /// Seed of the random policy.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Run the kernel once before counting (warm caches).
    #[arg(long)]
    pub warm: bool,
    /// Print one JSON object instead of tables.
    #[arg(long)]
    pub json: bool,
    /// Most accesses the simulation may make (estimated from the parameters, doubled by
    /// --warm); a larger one is refused before anything is allocated.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_ACCESSES)]
    pub max_accesses: u64,
    /// Most memory the simulated caches' tags and replacement state may take up front
    /// (SIZE takes K/M/G).
    #[arg(long, value_name = "SIZE", default_value = "1G", value_parser = parse_memory_size)]
    pub max_sim_memory: u64,
}

/// `SIZE` for `--max-sim-memory`, read by the crate's one size parser.
fn parse_memory_size(text: &str) -> Result<u64, String> {
    crate::units::parse_size(text).map_err(|e| e.to_string())
}

/// One level of the JSON object (its field names are a stable contract for scripts).
#[derive(Debug, Serialize)]
struct LevelOutput {
    name: String,
    size: u64,
    ways: u32,
    line: u32,
    sets: u32,
    loads: u64,
    stores: u64,
    load_misses: u64,
    store_misses: u64,
    misses: u64,
    miss_rate: f64,
    compulsory: u64,
    capacity: u64,
    conflict: u64,
    evictions: u64,
    /// The analytic model for the kernel's strided pattern, when it has one.
    model: Option<LevelPrediction>,
}

#[derive(Debug, Serialize)]
struct SimOutput<'a> {
    kernel: &'a str,
    params: &'a Params,
    /// Every number below is simulated.
    source: &'static str,
    policy: Policy,
    warm: bool,
    accesses: u64,
    /// Where the simulated stream is not the timed kernel's (see `kernels::simulation_note`).
    #[serde(skip_serializing_if = "Option::is_none")]
    simulation_note: Option<&'static str>,
    pattern: Option<StridePattern>,
    levels: Vec<LevelOutput>,
}

pub fn run(args: SimArgs) -> anyhow::Result<ExitCode> {
    let spec = find(&args.kernel)?;
    let params = point_params(spec, &args.params)?;
    check_accesses(spec, &params, args.warm, args.max_accesses)?;
    let levels = levels(&args)?;
    let policy = match args.policy {
        PolicyArg::Lru => Policy::Lru,
        PolicyArg::Plru => Policy::TreePlru,
        PolicyArg::Fifo => Policy::Fifo,
        PolicyArg::Random => Policy::Random { seed: args.seed },
    };
    let mut hierarchy = Hierarchy::with_state_budget(&levels, policy, true, args.max_sim_memory)?;
    let mut instance = (spec.prepare)(&params, PrepareOptions::default())?;
    if args.warm {
        instance.simulate(&mut hierarchy);
        hierarchy.reset_stats();
    }
    instance.simulate(&mut hierarchy);

    let pattern = stride_pattern(spec, &params)?;
    let predictions = match &pattern {
        Some(p) => predict(&levels, sim_address(p.buffer, 0), p.stride_bytes, p.count)
            .into_iter()
            .map(Some)
            .collect(),
        None => vec![None; levels.len()],
    };
    let stats = hierarchy.stats();
    let output = SimOutput {
        kernel: spec.name,
        params: &params,
        source: "simulated",
        policy,
        warm: args.warm,
        accesses: stats.first().map_or(0, LevelStats::accesses),
        simulation_note: simulation_note(spec, &params),
        pattern,
        levels: levels
            .iter()
            .zip(&stats)
            .zip(predictions)
            .map(|((level, stats), model)| level_output(level, stats, model))
            .collect(),
    };
    if args.json {
        println!("{}", serde_json::to_string(&output)?);
    } else {
        print!("{}", human(&output, &levels));
    }
    Ok(ExitCode::SUCCESS)
}

/// The one point the words name (read like `run --kernel`'s words); a grid is refused.
fn point_params(spec: &KernelSpec, words: &[String]) -> anyhow::Result<Params> {
    let mut kernel_args = Vec::new();
    for word in parse_kernel_words(words) {
        if word.is_grid() {
            anyhow::bail!(
                "`{}={}` lists {} values, but sim simulates one point; give one value (a grid \
                 of points is `stridelab run --kernel {} ...`)",
                word.key,
                word.values.join(","),
                word.values.len(),
                spec.name
            );
        }
        kernel_args.extend(word.values.into_iter().map(|v| (word.key.clone(), v)));
    }
    Ok(resolve_params(spec, &kernel_args)?)
}

/// Refuses a simulation whose estimated accesses exceed `limit`, before allocating anything.
fn check_accesses(
    spec: &KernelSpec,
    params: &Params,
    warm: bool,
    limit: u64,
) -> anyhow::Result<()> {
    let per_run = estimate_accesses(spec, params)?;
    let total = per_run.saturating_mul(if warm { 2 } else { 1 });
    if total > limit {
        anyhow::bail!(
            "the simulation would make an estimated {total} accesses ({per_run} per run{}), \
             more than the limit of {limit}; `--max-accesses N` raises it",
            if warm { ", twice with --warm" } else { "" }
        );
    }
    Ok(())
}

fn levels(args: &SimArgs) -> anyhow::Result<Vec<CacheLevel>> {
    let detected = if args.cache.is_given() {
        Geometry::default()
    } else {
        Geometry::detect()
    };
    args.cache.resolve(&detected)
}

fn level_output(
    level: &CacheLevel,
    stats: &LevelStats,
    model: Option<LevelPrediction>,
) -> LevelOutput {
    LevelOutput {
        name: level.name.clone(),
        size: level.size,
        ways: level.ways,
        line: level.line,
        sets: level.sets,
        loads: stats.loads,
        stores: stats.stores,
        load_misses: stats.load_misses,
        store_misses: stats.store_misses,
        misses: stats.misses(),
        miss_rate: stats.miss_ratio(),
        compulsory: stats.compulsory,
        capacity: stats.capacity,
        conflict: stats.conflict,
        evictions: stats.evictions,
        model,
    }
}

fn policy_name(policy: Policy) -> String {
    match policy {
        Policy::Lru => "LRU".to_string(),
        Policy::TreePlru => "tree pseudo-LRU".to_string(),
        Policy::Fifo => "FIFO".to_string(),
        Policy::Random { seed } => format!("random (seed {seed})"),
    }
}

fn percent(part: u64, whole: u64) -> String {
    if whole == 0 {
        "-".to_string()
    } else {
        format!("{:.1}%", 100.0 * part as f64 / whole as f64)
    }
}

/// The tables a person reads: counts per level, the 3C split, and the model beside it.
fn human(output: &SimOutput<'_>, levels: &[CacheLevel]) -> String {
    let mut text = String::new();
    let params = crate::kernels::spec::format_params(output.params);
    let start = if output.warm { "warm" } else { "cold" };
    let _ = writeln!(
        text,
        "{} {} — simulated ({} replacement, {start} start, cachegrind semantics)",
        output.kernel,
        params,
        policy_name(output.policy)
    );
    if let Some(note) = output.simulation_note {
        let _ = writeln!(text, "note: {note}");
    }
    let _ = writeln!(text, "{} accesses reach the first level\n", output.accesses);
    let _ = writeln!(
        text,
        "{:<5} {:>9} {:>4} {:>4} {:>6} {:>12} {:>12} {:>12} {:>12} {:>8}",
        "level",
        "size",
        "ways",
        "line",
        "sets",
        "loads",
        "stores",
        "load miss",
        "store miss",
        "miss"
    );
    for level in &output.levels {
        let _ = writeln!(
            text,
            "{:<5} {:>9} {:>4} {:>4} {:>6} {:>12} {:>12} {:>12} {:>12} {:>8}",
            level.name,
            format_size_exact(level.size),
            level.ways,
            level.line,
            level.sets,
            level.loads,
            level.stores,
            level.load_misses,
            level.store_misses,
            percent(level.misses, level.loads + level.stores),
        );
    }
    let _ = writeln!(text, "\nmisses by cause (3C, simulated)");
    let _ = writeln!(
        text,
        "{:<5} {:>12} {:>20} {:>20} {:>20}",
        "level", "misses", "compulsory", "capacity", "conflict"
    );
    for level in &output.levels {
        let cell = |n: u64| format!("{n} ({})", percent(n, level.misses));
        let _ = writeln!(
            text,
            "{:<5} {:>12} {:>20} {:>20} {:>20}",
            level.name,
            level.misses,
            cell(level.compulsory),
            cell(level.capacity),
            cell(level.conflict),
        );
    }
    match &output.pattern {
        None => {
            let _ = writeln!(
                text,
                "\nmodel: this kernel's order is random; the set/GCD model does not apply"
            );
        }
        Some(pattern) => {
            let _ = writeln!(text, "\nmodel (analytic) for {}", pattern.description);
            for (level, geometry) in output.levels.iter().zip(levels) {
                if let Some(model) = &level.model {
                    let _ = writeln!(text, "{}", model_line(model, geometry, pattern));
                }
            }
        }
    }
    text
}

fn model_line(model: &LevelPrediction, level: &CacheLevel, pattern: &StridePattern) -> String {
    let closed = match model.closed_form_sets {
        Some(sets) => format!(
            " (S/gcd(s/L, S) = {}/gcd({}, {}) = {sets})",
            level.sets,
            pattern.stride_bytes.unsigned_abs() / u64::from(level.line),
            level.sets
        ),
        None => String::new(),
    };
    let verdict = match model.conflict_onset {
        Some(onset) if model.conflicts => format!(
            "conflicts from access {onset}: {} lines compete for {} slots",
            model.distinct_lines, model.usable_lines
        ),
        Some(onset) => format!("no conflicts at this count (they would start at {onset})"),
        None => "no conflicts".to_string(),
    };
    format!(
        "{:<5} uses {} of {} sets{closed}; holds {} of its {} lines; {verdict}",
        level.name,
        model.distinct_sets,
        level.sets,
        model.usable_lines.min(model.distinct_lines),
        model.distinct_lines
    )
}
