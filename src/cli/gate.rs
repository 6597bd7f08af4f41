//! `stridelab gate`: the performance regression gate. Runs the `gate` suite (or reads
//! `--current`), compares it with a committed baseline (`results::compare`), prints a Markdown
//! table, optionally writes it for a CI job summary and a JSON verdict, and exits 0 (pass),
//! 1 (regression) or 2 (usage or input error, with the fix named).
//!
//! The gate simulates every point on a fixed preset geometry (the baseline's, `design-vm` for a
//! new one) instead of this machine's, so the deterministic track is portable; the preset is
//! recorded in the manifest as `info.gate.preset`.
//!
//! Timing: every point is sampled in short (1 ms) samples, at least 30 of them, so a
//! preemption spoils a few samples rather than all; a baseline (`--save-baseline`) is the
//! per-point median of 3 runs (`--baseline-runs`) so one unusual run does not become the
//! yardstick.
//!
//! `--fixture-slowdown` (hidden) runs every `row-sum` point as its documented de-optimised
//! variant (`deopt=1`, ~25% more loads): the real slowdown the A/A experiment
//! (`scripts/gate-aa.sh`) must catch.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, bail};
use clap::Args;

use crate::cache::geometry::{Geometry, PRESET_NAMES};
use crate::harness::machine::MachineInfo;
use crate::harness::suite::{Plan, Suite};
use crate::harness::{MethodOptions, Progress, RunOptions, run_suite};
use crate::kernels::spec::ParamValue;
use crate::results::compare::{
    CompareOptions, FIXTURE_PARAM, GATE_MANIFEST_KEY, GateVerdict, compare, point_key,
    recorded_preset,
};
use crate::results::{ChecksumOutcome, PointRecord, ResultsDocument, write_atomic};

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
    /// Record a baseline to FILE (from the run, or from `--current`) instead of comparing.
    #[arg(long, value_name = "FILE")]
    pub save_baseline: Option<PathBuf>,
    /// Preset geometry the deterministic track simulates (new baselines only; a comparison
    /// uses the baseline's).
    #[arg(long, value_name = "NAME")]
    pub preset: Option<String>,
    /// Append the Markdown verdict to FILE (e.g. `$GITHUB_STEP_SUMMARY`).
    #[arg(long, value_name = "FILE.md")]
    pub summary: Option<PathBuf>,
    /// Write the JSON verdict to FILE.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write the results document of this run to FILE.
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
    /// With --save-baseline: run the suite this many times and keep each point's median run.
    #[arg(long, default_value_t = 3, value_name = "K")]
    pub baseline_runs: usize,
}

/// Short samples: on a shared machine a 5 ms sample almost always contains a preemption, a
/// 1 ms one mostly does not, so the median stays a clean measurement under moderate load.
pub const GATE_SAMPLE_MS: f64 = 1.0;
/// Enough short samples for a tight bootstrap CI of the median.
pub const GATE_SAMPLES: usize = 30;

/// `10%` → 0.10; a bare number is a fraction (`0.1`) and must lie in 0..=1.
pub fn parse_fraction(text: &str) -> Result<f64, String> {
    let text = text.trim();
    let (number, scale) = match text.strip_suffix('%') {
        Some(n) => (n.trim(), 0.01),
        None => (text, 1.0),
    };
    let value: f64 = number
        .parse()
        .map_err(|_| format!("`{text}` is not a number or a percentage like 10%"))?;
    let fraction = value * scale;
    if !fraction.is_finite() || fraction < 0.0 {
        return Err(format!("`{text}` must be a non-negative amount"));
    }
    if scale == 1.0 && fraction > 1.0 {
        return Err(format!(
            "`{text}` is a fraction above 1; write a percentage like {text}%"
        ));
    }
    Ok(fraction)
}

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

/// A point's time as the timing track sees it (relative to its interleaved reference when it
/// has one), used only to pick the middle run.
fn typical_time(record: &PointRecord) -> Option<f64> {
    match &record.reference {
        Some(r) if r.ratio > 0.0 => Some(1.0 / r.ratio),
        _ => record.timing.as_ref().map(|t| t.ns_per_run.median),
    }
}

/// One document from several runs of the same suite: every point is taken whole from the run
/// in which it was the median (its samples, reference and simulation stay together), so one
/// lucky or unlucky run does not become the yardstick every later run is judged by.
fn median_run_baseline(runs: Vec<ResultsDocument>) -> anyhow::Result<ResultsDocument> {
    let count = runs.len();
    let Some(first) = runs.first() else {
        bail!("no baseline runs");
    };
    let mut baseline = first.clone();
    for (index, record) in baseline.records.iter_mut().enumerate() {
        let key = point_key(record);
        let mut candidates: Vec<(f64, &PointRecord)> = Vec::with_capacity(count);
        for run in &runs {
            let Some(other) = run.records.get(index).filter(|r| point_key(r) == key) else {
                bail!("baseline runs disagree on point {index} (`{key}`)");
            };
            if let Some(time) = typical_time(other) {
                candidates.push((time, other));
            }
        }
        candidates.sort_by(|a, b| a.0.total_cmp(&b.0));
        if let Some((_, middle)) = candidates.get(candidates.len() / 2) {
            *record = (*middle).clone();
        }
    }
    baseline.wall_s = runs.iter().map(|r| r.wall_s).sum();
    if let Some(gate) = baseline
        .info
        .get_mut(GATE_MANIFEST_KEY)
        .and_then(|g| g.as_object_mut())
    {
        gate.insert("baseline_runs".into(), count.into());
    }
    Ok(baseline)
}

/// How the gate times points (see [`GATE_SAMPLE_MS`]).
fn gate_method(args: &GateArgs) -> anyhow::Result<MethodOptions> {
    if !(args.sample_ms.is_finite() && args.sample_ms > 0.0 && args.sample_ms <= 1000.0) {
        bail!("--sample-ms must lie in (0, 1000]");
    }
    if args.samples == 0 || args.samples > 10_000 {
        bail!("--samples must lie in 1..=10000");
    }
    let defaults = MethodOptions::default();
    Ok(MethodOptions {
        min_sample: Duration::from_secs_f64(args.sample_ms / 1e3),
        samples: args.samples,
        max_samples: (3 * args.samples).max(defaults.max_samples),
        extra_sampling: Duration::from_millis(300),
        ..defaults
    })
}

/// Runs the suite with every point simulated on `preset`.
fn run_gate_suite(args: &GateArgs, preset: &str) -> anyhow::Result<ResultsDocument> {
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
            }),
        );
    }
    let options = RunOptions {
        method: gate_method(args)?,
        manifest,
        cache_levels: levels,
        // Only the access cap may bound the simulation: a time budget would make the miss
        // counts depend on how busy the machine is, and the deterministic track must not.
        simulation_time_budget: SIMULATION_TIME_BUDGET,
        ..RunOptions::default()
    };
    let stop = super::run::stop_flag()?;
    let verbose = !args.quiet;
    let mut on_progress = |event: Progress<'_>| {
        if let Progress::Started {
            index,
            total,
            label,
        } = event
            && verbose
        {
            eprintln!("[{}/{total}] {label}", index + 1);
        }
    };
    let doc = run_suite(&plan, &options, &stop, &mut on_progress)?;
    if let Some(path) = &args.output {
        doc.write_atomic(path)?;
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
    ResultsDocument::read(path).map_err(|e| {
        let fix = if what == "baseline" {
            format!("fix the file or {SAVE_HINT}")
        } else {
            "produce it with `stridelab gate --output FILE`".to_string()
        };
        anyhow::anyhow!("cannot use the {what}: {e}; {fix}")
    })
}

fn save_baseline(args: &GateArgs, path: &Path) -> anyhow::Result<ExitCode> {
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
            if args.baseline_runs == 0 || args.baseline_runs > 100 {
                bail!("--baseline-runs must lie in 1..=100");
            }
            let mut runs = Vec::with_capacity(args.baseline_runs);
            for run in 1..=args.baseline_runs {
                if !args.quiet {
                    eprintln!("baseline run {run} of {}", args.baseline_runs);
                }
                runs.push(run_gate_suite(args, preset)?);
            }
            median_run_baseline(runs)?
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
    doc.write_atomic(path)?;
    println!(
        "baseline written: {} ({} points of suite `{}`, simulated on {})",
        path.display(),
        doc.records.len(),
        doc.suite.name,
        recorded_preset(&doc)
            .map(|p| format!("preset {p}"))
            .unwrap_or_else(|| "the recorded geometry".into())
    );
    Ok(ExitCode::SUCCESS)
}

pub fn run(args: GateArgs) -> anyhow::Result<ExitCode> {
    if let Some(path) = args.save_baseline.clone() {
        return save_baseline(&args, &path);
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
            run_gate_suite(&args, preset)?
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
    if let Some(path) = &args.summary {
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .with_context(|| format!("cannot open the summary `{}`", path.display()))?;
        file.write_all(verdict.to_markdown(&label, true).as_bytes())
            .with_context(|| format!("cannot write the summary `{}`", path.display()))?;
    }
    if let Some(path) = &args.json {
        let json = serde_json::to_string_pretty(&verdict).context("serialising the verdict")?;
        write_atomic(path, json.as_bytes())?;
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
