//! `stridelab gate`: the performance regression gate (`harness::gate` holds its policy). Runs
//! the `gate` suite (or reads `--current`), compares it with a committed baseline, prints a
//! Markdown table, optionally writes it for a CI job summary and a JSON verdict, and exits 0
//! (pass), 1 (regression) or 2 (usage or input error, with the fix named).
//!
//! The suite is measured in 3 passes (`--passes`) whose samples are pooled per point; a
//! baseline (`--save-baseline`) pools 5 passes (`--baseline-runs`). `--fixture-slowdown`
//! (hidden) runs every `row-sum` point as its de-optimised variant (`deopt=1`).

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use super::common::parse_fraction;
use crate::harness::gate::{
    GATE_BASELINE_PASSES, GATE_PASSES, GATE_SAMPLE_MS, GATE_SAMPLES, GateConfig, evaluate,
    plan_outputs, save_baseline, write_verdict,
};
use crate::results::compare::CompareOptions;

#[derive(Debug, Args)]
pub struct GateArgs {
    /// The baseline results to compare with.
    #[arg(long, value_name = "FILE", default_value = "reports/baseline.json")]
    pub baseline: PathBuf,
    /// Compare these results instead of running the suite (must be simulated on the
    /// baseline's preset, e.g. written by `stridelab gate --output`).
    #[arg(long, value_name = "FILE")]
    pub current: Option<PathBuf>,
    /// The suite to run.
    #[arg(long, default_value = "gate")]
    pub suite: String,
    /// Timing change that counts as a regression/improvement; the whole CI must lie beyond it.
    #[arg(long, default_value = "10%", value_parser = parse_fraction)]
    pub threshold: f64,
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
    /// Write the results document of this run to FILE (`-`: stdout, with --quiet). Every
    /// output is checked before the suite runs.
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// An earlier JSON verdict: a timing regression counts only if it regressed there too.
    #[arg(long, value_name = "VERDICT.json")]
    pub confirm: Option<PathBuf>,
    /// Seed of the bootstrap.
    #[arg(long, default_value_t = CompareOptions::default().seed)]
    pub seed: u64,
    /// List every row, not only the ones that are not plain passes.
    #[arg(long)]
    pub all_rows: bool,
    /// No progress lines and no table on stdout (the verdict line is still printed).
    #[arg(long)]
    pub quiet: bool,
    /// Test fixture: run every row-sum point de-optimised (`deopt=1`, ~25% more loads).
    #[arg(long, hide = true)]
    pub fixture_slowdown: bool,
    /// Target duration of one timing sample, in milliseconds.
    #[arg(long, default_value_t = GATE_SAMPLE_MS, value_name = "MS")]
    pub sample_ms: f64,
    /// Minimum number of timing samples per point (more while the CI is wide).
    #[arg(long, default_value_t = GATE_SAMPLES, value_name = "N")]
    pub samples: usize,
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
    fn config(&self) -> GateConfig {
        GateConfig {
            baseline: self.baseline.clone(),
            current: self.current.clone(),
            suite: self.suite.clone(),
            threshold: self.threshold,
            sim_tolerance: self.sim_tolerance,
            save_baseline: self.save_baseline.clone(),
            preset: self.preset.clone(),
            summary: self.export_markdown.clone(),
            json: if self.json {
                Some(PathBuf::from("-"))
            } else {
                self.export_json.clone()
            },
            output: self.output.clone(),
            confirm: self.confirm.clone(),
            seed: self.seed,
            quiet: self.quiet || self.json,
            fixture_slowdown: self.fixture_slowdown,
            sample_ms: self.sample_ms,
            samples: self.samples,
            passes: self.passes,
            baseline_runs: self.baseline_runs,
        }
    }
}

pub fn run(args: GateArgs) -> anyhow::Result<ExitCode> {
    let config = args.config();
    let outputs = plan_outputs(&config)?;
    if let Some(target) = &outputs.save_baseline {
        let saved = save_baseline(&config, target, &outputs)?;
        // With the baseline itself on stdout, the note goes to stderr.
        if saved.on_stdout {
            eprintln!("{}", saved.line);
        } else {
            println!("{}", saved.line);
        }
        return Ok(ExitCode::SUCCESS);
    }
    let verdict = evaluate(&config, &outputs)?;
    let label = args.baseline.display().to_string();
    if !config.quiet {
        print!("{}", verdict.to_markdown(&label, args.all_rows));
    }
    write_verdict(&verdict, &outputs, &label)?;
    let line = format!("gate: {}", verdict.headline());
    if config.quiet || !std::io::stdout().is_terminal() {
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
