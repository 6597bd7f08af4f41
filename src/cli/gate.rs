//! `stridelab gate`: the performance regression gate. Runs the `gate` suite (or reads
//! `--current`), compares it with a committed baseline (`results::compare`), prints a Markdown
//! table, optionally writes it for a CI job summary and a JSON verdict, and exits 0 (pass),
//! 1 (regression) or 2 (usage or input error, with the fix named).
//!
//! The gate simulates every point on a fixed preset geometry (the baseline's, `design-vm` for a
//! new one) instead of this machine's, so the deterministic track is portable; the preset is
//! recorded in the manifest as `info.gate.preset`.
//!
//! Timing: every point is sampled in short (1 ms) samples, each paired with a sample of a
//! same-bytes read/copy reference taken right after it, on transparent huge pages (with 4 KiB
//! pages the physically indexed L2's page colouring changes from process to process; for the
//! same reason every point of `suites/gate.toml` keeps its working set in the L1d). The suite
//! is measured in 3 passes (`--passes`) whose samples are pooled per point (≥ 30 in all), so a
//! disturbance lasting a second spoils a third of a point's samples rather than all of them; a
//! baseline (`--save-baseline`) pools 5 passes (`--baseline-runs`).
//!
//! `--fixture-slowdown` (hidden) runs every `row-sum` point as its documented de-optimised
//! variant (`deopt=1`, ~25% more loads): the real slowdown the A/A experiment
//! (`scripts/gate-aa.sh`) must catch.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, bail};
use clap::Args;

use super::common::parse_fraction;
use crate::cache::geometry::{Geometry, PRESET_NAMES};
use crate::harness::machine::MachineInfo;
use crate::harness::pool::pool_passes;
use crate::harness::suite::{Plan, Suite};
use crate::harness::{MethodOptions, Progress, RunOptions, run_suite};
use crate::kernels::CATALOGUE_RULES;
use crate::kernels::spec::ParamValue;
use crate::results::compare::{
    CompareOptions, FIXTURE_PARAM, GATE_MANIFEST_KEY, GateVerdict, compare, point_key,
    recorded_preset,
};
use crate::results::output::{FileTarget, OutputPlan};
use crate::results::{ChecksumOutcome, ResultsDocument};

/// The geometry a new baseline is simulated on unless `--preset` says otherwise.
pub const DEFAULT_PRESET: &str = "design-vm";

/// Far above what the capped simulation of a gate point takes (well under a second).
const SIMULATION_TIME_BUDGET: Duration = Duration::from_secs(600);

const SAVE_HINT: &str = "record one with `stridelab gate --save-baseline reports/baseline.json`";

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
    #[arg(long, value_name = "NAME")]
    pub preset: Option<String>,
    /// Append the Markdown verdict to FILE (e.g. `$GITHUB_STEP_SUMMARY`; `-`: stdout).
    #[arg(long, value_name = "FILE.md")]
    pub summary: Option<PathBuf>,
    /// Write the JSON verdict to FILE (`-`: stdout, with --quiet).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
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

/// Short samples: on a shared machine a 5 ms sample almost always contains a preemption, a
/// 1 ms one mostly does not, so the median stays a clean measurement under moderate load.
pub const GATE_SAMPLE_MS: f64 = 1.0;
/// Enough short samples for a tight bootstrap CI of the median (over all passes).
pub const GATE_SAMPLES: usize = 30;
/// Passes of a comparison run; each takes `GATE_SAMPLES / passes` samples per point (≥ 10).
pub const GATE_PASSES: usize = 3;
/// Passes of a baseline recording.
pub const GATE_BASELINE_PASSES: usize = 5;

/// Rewrites every point that has the fixture switch to its de-optimised variant.
fn apply_fixture_slowdown(plan: &mut Plan) -> anyhow::Result<()> {
    let mut changed = 0;
    for point in &mut plan.points {
        if point.spec.name == "row-sum" && point.params.contains_key(FIXTURE_PARAM) {
            point
                .params
                .insert(FIXTURE_PARAM.to_string(), ParamValue::Int(1));
            changed += 1;
        }
    }
    if changed == 0 {
        bail!(
            "--fixture-slowdown needs a row-sum point in suite `{}`",
            plan.name
        );
    }
    Ok(())
}

/// How the gate times points (see [`GATE_SAMPLE_MS`]).
fn gate_method(args: &GateArgs, passes: usize) -> anyhow::Result<MethodOptions> {
    if !(args.sample_ms.is_finite() && args.sample_ms > 0.0 && args.sample_ms <= 1000.0) {
        bail!("--sample-ms must lie in (0, 1000]");
    }
    // With up to 3× extra rounds per pass, 1000 keeps a pooled point within the samples a
    // document may hold (`results::validate::MAX_SAMPLES_PER_POINT`), so its output reads back.
    if args.samples == 0 || args.samples > 1000 {
        bail!("--samples must lie in 1..=1000");
    }
    let defaults = MethodOptions::default();
    let samples = args.samples.div_ceil(passes).max(MIN_SAMPLES_PER_PASS);
    Ok(MethodOptions {
        min_sample: Duration::from_secs_f64(args.sample_ms / 1e3),
        samples,
        max_samples: 3 * samples,
        extra_sampling: Duration::from_millis(300),
        // Physically contiguous 2 MiB pages: with 4 KiB pages each process gets its own random
        // page colouring in the physically indexed L2, and L2-sized points moved by up to 45%
        // from one process to the next (4 runs each, 8–14% with huge pages).
        huge_pages: true,
        // Every timed point gets a reference sample paired with each of its own.
        latency_references: true,
        ..defaults
    })
}

/// Fewer samples than this per pass would leave a pass's median to a handful of samples.
const MIN_SAMPLES_PER_PASS: usize = 10;

/// Runs the suite in `passes` passes with every point simulated on `preset`, and pools them.
fn run_gate_suite(
    args: &GateArgs,
    preset: &str,
    passes: usize,
    output: Option<&FileTarget>,
) -> anyhow::Result<ResultsDocument> {
    if passes == 0 || passes > 100 {
        bail!("--passes / --baseline-runs must lie in 1..=100");
    }
    let suite = Suite::load(&args.suite)?;
    let mut plan = suite.plan(None)?;
    if args.fixture_slowdown {
        apply_fixture_slowdown(&mut plan)?;
    }
    let levels = Geometry::preset(preset)?.data_levels();
    let machine = MachineInfo::collect(Some(levels.clone()));
    let mut manifest =
        serde_json::to_value(&machine).context("serialising the machine manifest")?;
    if let Some(object) = manifest.as_object_mut() {
        object.insert(
            GATE_MANIFEST_KEY.to_string(),
            serde_json::json!({
                "preset": preset,
                "fixture_slowdown": args.fixture_slowdown,
                "passes": passes,
                "huge_pages_requested": true,
            }),
        );
    }
    let options = RunOptions {
        method: gate_method(args, passes)?,
        manifest,
        cache_levels: levels,
        // Only the access cap may bound the simulation: a time budget would make the miss
        // counts depend on how busy the machine is, and the deterministic track must not.
        simulation_time_budget: SIMULATION_TIME_BUDGET,
        ..RunOptions::default()
    };
    let stop = super::common::stop_flag()?;
    let verbose = !args.quiet;
    let mut runs = Vec::with_capacity(passes);
    for pass in 1..=passes {
        let mut on_progress = |event: Progress<'_>| {
            if let Progress::Started {
                index,
                total,
                label,
            } = event
                && verbose
            {
                eprintln!("[pass {pass}/{passes}] [{}/{total}] {label}", index + 1);
            }
        };
        let run = run_suite(&plan, &options, &stop, &mut on_progress)?;
        let interrupted = run.status != crate::results::RunStatus::Complete;
        runs.push(run);
        if interrupted {
            break;
        }
    }
    let doc = pool_passes(runs, options.method.bootstrap)?;
    if let Some(target) = output {
        target.write(doc.to_json()?.as_bytes())?;
    }
    Ok(doc)
}

fn read_results(path: &Path, what: &str) -> anyhow::Result<ResultsDocument> {
    if !path.exists() {
        if what == "baseline" {
            bail!("no baseline at `{}`: {SAVE_HINT}", path.display());
        }
        bail!("no {what} results at `{}`", path.display());
    }
    ResultsDocument::read(path, &CATALOGUE_RULES).map_err(|e| {
        let fix = if what == "baseline" {
            format!("fix the file or {SAVE_HINT}")
        } else {
            "produce it with `stridelab gate --output FILE`".to_string()
        };
        anyhow::anyhow!("cannot use the {what}: {e}; {fix}")
    })
}

/// The gate's file outputs, checked before the suite runs.
struct GateOutputs {
    save_baseline: Option<FileTarget>,
    output: Option<FileTarget>,
    json: Option<FileTarget>,
    summary: Option<FileTarget>,
}

/// Checks every output path (and that none is an input or another output) up front.
fn plan_outputs(args: &GateArgs) -> anyhow::Result<GateOutputs> {
    let mut plan = OutputPlan::default();
    let saving = args.save_baseline.is_some();
    if !saving {
        plan.input("--baseline", &args.baseline);
    }
    if let Some(path) = &args.current {
        plan.input("--current", path);
    }
    if let Some(path) = &args.confirm {
        plan.input("--confirm", path);
    }
    if !saving && !args.quiet {
        plan.uses_stdout("the Markdown table (without --quiet)")?;
    }
    let mut file =
        |role, path: &Option<PathBuf>| path.as_deref().map(|p| plan.file(role, p)).transpose();
    Ok(GateOutputs {
        save_baseline: file("--save-baseline", &args.save_baseline)?,
        output: file("--output", &args.output)?,
        json: file("--json", &args.json)?,
        summary: file("--summary", &args.summary)?,
    })
}

fn save_baseline(
    args: &GateArgs,
    target: &FileTarget,
    outputs: &GateOutputs,
) -> anyhow::Result<ExitCode> {
    let doc = match &args.current {
        Some(current) => read_results(current, "current")?,
        None => {
            let preset = args.preset.as_deref().unwrap_or(DEFAULT_PRESET);
            if !PRESET_NAMES.contains(&preset) {
                bail!(
                    "unknown preset `{preset}`; known presets: {}",
                    PRESET_NAMES.join(", ")
                );
            }
            if args.fixture_slowdown {
                bail!("--fixture-slowdown is for comparisons; a baseline records the real kernels");
            }
            run_gate_suite(args, preset, args.baseline_runs, outputs.output.as_ref())?
        }
    };
    let failed: Vec<String> = doc
        .records
        .iter()
        .filter(|r| r.checksum.status != ChecksumOutcome::Ok || r.error.is_some())
        .map(point_key)
        .collect();
    if !failed.is_empty() {
        bail!(
            "not saving a baseline with failed points ({}); fix them first",
            failed.join(", ")
        );
    }
    if doc.status != crate::results::RunStatus::Complete {
        bail!("not saving the baseline of an interrupted run");
    }
    target.write(doc.to_json()?.as_bytes())?;
    let line = format!(
        "baseline written: {} ({} points of suite `{}`, simulated on {})",
        target.display(),
        doc.records.len(),
        doc.suite.name,
        recorded_preset(&doc)
            .map(|p| format!("preset {p}"))
            .unwrap_or_else(|| "the recorded geometry".into())
    );
    // With the baseline itself on stdout, the note goes to stderr.
    if *target == FileTarget::Stdout {
        eprintln!("{line}");
    } else {
        println!("{line}");
    }
    Ok(ExitCode::SUCCESS)
}

pub fn run(args: GateArgs) -> anyhow::Result<ExitCode> {
    let outputs = plan_outputs(&args)?;
    if let Some(target) = &outputs.save_baseline {
        return save_baseline(&args, target, &outputs);
    }
    let baseline = read_results(&args.baseline, "baseline")?;
    let preset = recorded_preset(&baseline);
    if let (Some(wanted), Some(recorded)) = (&args.preset, &preset)
        && wanted != recorded
    {
        bail!(
            "--preset {wanted}: the baseline was simulated on preset {recorded}; comparisons use the baseline's preset (record a new baseline to change it)"
        );
    }
    let confirm = match &args.confirm {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("cannot read the verdict `{}`", path.display()))?;
            Some(serde_json::from_str::<GateVerdict>(&text).with_context(|| {
                format!("`{}` is not a gate verdict (--json output)", path.display())
            })?)
        }
        None => None,
    };
    let current = match &args.current {
        Some(path) => read_results(path, "current")?,
        None => {
            let Some(preset) = preset.as_deref() else {
                bail!(
                    "the baseline `{}` records no gate preset (`info.gate.preset`): it was not written by `stridelab gate`; {SAVE_HINT}",
                    args.baseline.display()
                );
            };
            run_gate_suite(&args, preset, args.passes, outputs.output.as_ref())?
        }
    };
    let options = CompareOptions {
        threshold: args.threshold,
        sim_tolerance: args.sim_tolerance,
        seed: args.seed,
        ..CompareOptions::default()
    };
    let verdict = compare(&baseline, &current, &options, confirm.as_ref())
        .map_err(|e| anyhow::anyhow!("{e}"))?;

    let label = args.baseline.display().to_string();
    if !args.quiet {
        print!("{}", verdict.to_markdown(&label, args.all_rows));
    }
    if let Some(target) = &outputs.summary {
        target
            .append(verdict.to_markdown(&label, true).as_bytes())
            .context("cannot write the summary")?;
    }
    if let Some(target) = &outputs.json {
        let json = serde_json::to_string_pretty(&verdict).context("serialising the verdict")?;
        target.write(json.as_bytes())?;
    }
    let line = format!("gate: {}", verdict.headline());
    if args.quiet || !std::io::stdout().is_terminal() {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fractions_and_percentages() {
        let cases: &[(&str, Result<f64, ()>)] = &[
            ("10%", Ok(0.10)),
            ("0.1", Ok(0.1)),
            ("0", Ok(0.0)),
            (" 2.5% ", Ok(0.025)),
            ("10", Err(())),
            ("-5%", Err(())),
            ("ten", Err(())),
        ];
        for (text, expected) in cases {
            match (parse_fraction(text), expected) {
                (Ok(v), Ok(e)) => assert!((v - e).abs() < 1e-12, "{text}: {v}"),
                (Err(_), Err(())) => {}
                (got, _) => panic!("{text}: {got:?}"),
            }
        }
    }
}
