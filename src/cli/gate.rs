//! `stridelab gate`: the performance regression gate. Two ways to judge timing:
//! - `--base REV` (or `--base-binary PATH`): this build against a base build of another
//!   revision, both measured here in interleaved rounds (`harness::gate::paired`); the
//!   simulated misses of the two builds are compared exactly;
//! - otherwise against a stored results file (`--baseline`, `harness::gate`): timing only when
//!   it comes from this CPU model and cache geometry, simulated misses always.
//!
//! Prints a Markdown table, optionally appends it to a CI job summary and writes a JSON
//! verdict, and exits 0 (pass), 1 (regression or failed point) or 2 (usage or input error,
//! with the fix named).

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;

use crate::cache::geometry::Geometry;

use super::common::{EXIT_INTERRUPTED, parse_fraction};
use crate::harness::gate::paired::{
    BaseSource, PAIRED_ALPHA, PAIRED_BUDGET_S, PAIRED_FLOOR, PAIRED_MAX_ROUNDS, PAIRED_ROUNDS,
    PAIRED_SAMPLE_MS, PAIRED_SAMPLES, PAIRED_THRESHOLD, PairedConfig, run_paired,
};
use crate::harness::gate::{
    GATE_BASELINE_PASSES, GATE_PASSES, GATE_SAMPLE_MS, GATE_SAMPLES, GateConfig, GateError,
    GateOutputs, evaluate, plan_outputs, save_baseline, write_verdict,
};
use crate::results::compare::{CompareOptions, GateVerdict, PairedOptions, PairedStatistic};

/// The stored-baseline mode's threshold: its ratios to same-run references moved by up to
/// ±2% between unchanged runs (docs/gate.md).
const STORED_THRESHOLD: f64 = 0.10;

/// The flags of a comparison of two builds (boxed in [`GateArgs`]: they are many).
#[derive(Debug, Args)]
pub struct BuildArgs {
    /// Compare with a base build of this git revision (commit, branch, tag) of the repository
    /// in the current directory, built under target/gate-base/ and measured in the same run.
    #[arg(long, value_name = "REV", conflicts_with_all = ["base_binary", "current", "save_baseline"])]
    pub base: Option<String>,
    /// Compare with this prebuilt base binary instead of building one.
    #[arg(long, value_name = "PATH", conflicts_with_all = ["current", "save_baseline"])]
    pub base_binary: Option<PathBuf>,
    /// With --base/--base-binary: the candidate binary (default: this one).
    #[arg(long, value_name = "PATH")]
    pub candidate_binary: Option<PathBuf>,
    /// With --base: the noise floor the whole interval must lie above.
    #[arg(long, value_parser = parse_fraction, value_name = "PCT", default_value_t = PAIRED_FLOOR)]
    pub floor: f64,
    /// With --base: family-wise error level over all timed points (Holm's correction).
    #[arg(long, value_name = "A", default_value_t = PAIRED_ALPHA)]
    pub alpha: f64,
    /// With --base: rounds every point gets before it is judged.
    #[arg(long, value_name = "N", default_value_t = PAIRED_ROUNDS)]
    pub rounds: usize,
    /// With --base: the test of each point's paired log-ratios: `sign` (median, robust to a
    /// wild round) or `signed-rank` (Hodges–Lehmann).
    #[arg(long, value_parser = PairedStatistic::parse, value_name = "TEST", default_value = "sign")]
    pub statistic: PairedStatistic,
    /// With --base: the most rounds an inconclusive point gets.
    #[arg(long, value_name = "N", default_value_t = PAIRED_MAX_ROUNDS)]
    pub max_rounds: usize,
    /// With --base: no further round starts after this many seconds of measuring.
    #[arg(long, value_name = "SECONDS", default_value_t = PAIRED_BUDGET_S)]
    pub time_budget: f64,
}

#[derive(Debug, Args)]
pub struct GateArgs {
    #[command(flatten)]
    pub builds: Box<BuildArgs>,
    /// The stored baseline results to compare with (without --base).
    #[arg(long, value_name = "FILE", default_value = "reports/baseline.json")]
    pub baseline: PathBuf,
    /// Compare these results instead of running the suite (must be simulated on the
    /// baseline's preset, e.g. written by `stridelab gate --out`).
    #[arg(long, value_name = "FILE")]
    pub current: Option<PathBuf>,
    /// The suite to run.
    #[arg(long, default_value = "gate")]
    pub suite: String,
    /// Timing change that counts as a regression [default: 2.5% with --base (the estimate must
    /// exceed it), 10% against a stored baseline (the whole CI must)].
    #[arg(long, value_parser = parse_fraction, value_name = "PCT")]
    pub threshold: Option<f64>,
    /// Relative change of a simulated miss count still accepted (0 = exact match).
    #[arg(long, default_value = "0", value_parser = parse_fraction)]
    pub sim_tolerance: f64,
    /// Record a baseline to FILE (from the run, or from `--current`) instead of comparing
    /// (`-`: stdout).
    #[arg(long, value_name = "FILE")]
    pub save_baseline: Option<PathBuf>,
    /// Preset geometry the deterministic track simulates (new baselines only; a comparison
    /// uses the baseline's).
    #[arg(long, value_name = "NAME", value_parser = super::common::preset_parser())]
    pub preset: Option<String>,
    /// Append the Markdown verdict to FILE (e.g. `$GITHUB_STEP_SUMMARY`; `-`: stdout).
    #[arg(long, value_name = "FILE.md", alias = "summary")]
    pub export_markdown: Option<PathBuf>,
    /// Print the JSON verdict to stdout (instead of the Markdown table).
    #[arg(long, conflicts_with = "export_json")]
    pub json: bool,
    /// Write the JSON verdict to FILE.
    #[arg(long, value_name = "FILE")]
    pub export_json: Option<PathBuf>,
    /// Write the results document of this run to FILE (`-`: stdout, with --quiet); against a
    /// stored baseline only. Every output is checked before the suite runs.
    #[arg(long, value_name = "FILE", alias = "output")]
    pub out: Option<PathBuf>,
    /// Seed of the order of the rounds with --base [default: from the clock, printed], or of
    /// the bootstrap against a stored baseline.
    #[arg(long)]
    pub seed: Option<u64>,
    /// List every row, not only the ones that are not plain passes.
    #[arg(long)]
    pub all_rows: bool,
    /// No progress lines and no table on stdout (the verdict line is still printed).
    #[arg(long)]
    pub quiet: bool,
    /// Target duration of one timing sample, in milliseconds [default: 0.3 with --base, else
    /// 1].
    #[arg(long, value_name = "MS")]
    pub sample_ms: Option<f64>,
    /// Minimum number of timing samples per point (more while the CI is wide) [default: 20
    /// per process with --base, else 30 over all passes].
    #[arg(long, value_name = "N")]
    pub samples: Option<usize>,
    /// Measure the suite in this many passes and pool each point's samples (spreads them over
    /// the run, so a passing disturbance spoils a fraction of them, not a whole point).
    #[arg(long, default_value_t = GATE_PASSES, value_name = "K")]
    pub passes: usize,
    /// With --save-baseline: the number of passes instead (a baseline is the yardstick of
    /// every later run, so it gets more samples).
    #[arg(long, default_value_t = GATE_BASELINE_PASSES, value_name = "K")]
    pub baseline_runs: usize,
}

impl GateArgs {
    fn base(&self) -> Option<BaseSource> {
        match (&self.builds.base, &self.builds.base_binary) {
            (Some(rev), _) => Some(BaseSource::Revision(rev.clone())),
            (None, Some(path)) => Some(BaseSource::Binary(path.clone())),
            (None, None) => None,
        }
    }

    fn stored_config(&self, machine: Geometry) -> GateConfig {
        GateConfig {
            baseline: self.baseline.clone(),
            current: self.current.clone(),
            suite: self.suite.clone(),
            threshold: self.threshold.unwrap_or(STORED_THRESHOLD),
            sim_tolerance: self.sim_tolerance,
            save_baseline: self.save_baseline.clone(),
            preset: self.preset.clone(),
            summary: self.export_markdown.clone(),
            json: self.json_target(),
            output: self.out.clone(),
            seed: self.seed.unwrap_or(CompareOptions::default().seed),
            quiet: self.quiet || self.json,
            sample_ms: self.sample_ms.unwrap_or(GATE_SAMPLE_MS),
            samples: self.samples.unwrap_or(GATE_SAMPLES),
            passes: self.passes,
            baseline_runs: self.baseline_runs,
            machine,
        }
    }

    fn json_target(&self) -> Option<PathBuf> {
        if self.json {
            Some(PathBuf::from("-"))
        } else {
            self.export_json.clone()
        }
    }

    fn paired_config(&self, base: BaseSource) -> anyhow::Result<PairedConfig> {
        let b = &self.builds;
        if !(b.time_budget.is_finite() && b.time_budget > 0.0) {
            anyhow::bail!("--time-budget must be a positive number of seconds");
        }
        let seed = self.seed.unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(1, |d| d.as_nanos() as u64)
        });
        Ok(PairedConfig {
            base,
            candidate: b.candidate_binary.clone(),
            suite: self.suite.clone(),
            options: PairedOptions {
                threshold: self.threshold.unwrap_or(PAIRED_THRESHOLD),
                floor: b.floor,
                alpha: b.alpha,
                sim_tolerance: self.sim_tolerance,
                statistic: b.statistic,
            },
            rounds: b.rounds,
            max_rounds: b.max_rounds,
            budget: Duration::from_secs_f64(b.time_budget.min(1e6)),
            seed,
            sample_ms: self.sample_ms.unwrap_or(PAIRED_SAMPLE_MS),
            samples: self.samples.unwrap_or(PAIRED_SAMPLES),
            quiet: self.quiet || self.json,
        })
    }
}

pub fn run(args: GateArgs) -> anyhow::Result<ExitCode> {
    let config = args.stored_config(Geometry::detect());
    let Some(base) = args.base() else {
        return run_stored(&args, &config);
    };
    if args.out.is_some() {
        anyhow::bail!(
            "--out writes the results of a run against a stored baseline; with --base the verdict (--export-json) holds every point's rounds"
        );
    }
    let outputs = plan_outputs(&config, true)?;
    match run_paired(&args.paired_config(base)?) {
        Ok(verdict) => report(&verdict, &outputs, &args),
        Err(GateError::RoundsInterrupted) => {
            eprintln!("gate: {}", GateError::RoundsInterrupted);
            Ok(ExitCode::from(EXIT_INTERRUPTED))
        }
        Err(e) => Err(e.into()),
    }
}

fn run_stored(args: &GateArgs, config: &GateConfig) -> anyhow::Result<ExitCode> {
    if args.builds.candidate_binary.is_some() {
        anyhow::bail!("--candidate-binary needs --base or --base-binary");
    }
    let outputs = plan_outputs(config, false)?;
    if let Some(target) = &outputs.save_baseline {
        let saved = save_baseline(config, target, &outputs)?;
        // With the baseline itself on stdout, the note goes to stderr.
        if saved.on_stdout {
            eprintln!("{}", saved.line);
        } else {
            println!("{}", saved.line);
        }
        return Ok(ExitCode::SUCCESS);
    }
    let verdict = evaluate(config, &outputs)?;
    report(&verdict, &outputs, args)
}

/// Prints and writes the verdict; the exit code follows it.
fn report(
    verdict: &GateVerdict,
    outputs: &GateOutputs,
    args: &GateArgs,
) -> anyhow::Result<ExitCode> {
    let quiet = args.quiet || args.json;
    if !quiet {
        print!("{}", verdict.to_markdown(args.all_rows));
    }
    write_verdict(verdict, outputs)?;
    let line = format!("gate: {}", verdict.headline());
    if quiet || !std::io::stdout().is_terminal() {
        eprintln!("{line}");
    }
    for id in &verdict.regressed {
        eprintln!("regression: {id}");
    }
    Ok(if verdict.pass {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
