//! The performance regression gate against a stored baseline: runs the `gate` suite (or reads
//! a recorded current run), compares it with a results file (`results::compare`), and records
//! new baselines. Comparing two builds (`--base`) is `paired`'s; this module holds the
//! errors and the measuring method both share.
//!
//! The gate simulates every point on a fixed preset geometry (the baseline's, `design-vm` for a
//! new one) instead of this machine's, so the deterministic track is portable; the preset is
//! recorded in the manifest as `info.gate.preset`.
//!
//! Timing: every point is sampled in short (1 ms) samples, each paired with a sample of a
//! same-bytes read/copy reference taken right after it, on transparent huge pages (with 4 KiB
//! pages the physically indexed L2's page colouring changes from process to process; for the
//! same reason every point of `suites/gate.toml` keeps its working set in the L1d). The suite
//! is measured in several passes whose samples are pooled per point (≥ 30 in all), so a
//! disturbance lasting a second spoils a third of a point's samples rather than all of them; a
//! baseline pools more passes.
//!
//! A baseline records the injected slowdown of the build that measured it, if any
//! (`info.gate.injected_slowdown`, see `kernels::slowdown`).

pub mod build;
pub mod child;
pub mod cost;
pub mod paired;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use thiserror::Error;

use crate::cache::geometry::{Geometry, GeometryError, PRESET_NAMES};
use crate::harness::gate::build::GitError;
use crate::harness::gate::child::ChildRunError;
use crate::harness::machine::MachineInfo;
use crate::harness::run::pool::{PoolError, pool_passes};
use crate::harness::run::session::HarnessError;
use crate::harness::run::stop::{StopError, stop_flag};
use crate::harness::suite::{Suite, SuiteError};
use crate::harness::{MethodOptions, Progress, RunOptions, run_suite};
use crate::kernels::CATALOGUE_RULES;
use crate::kernels::copy_planner::analytic_planner;
use crate::kernels::slowdown::injected;
use crate::kernels::spec::KernelError;
use crate::results::compare::{
    CompareError, CompareOptions, GATE_MANIFEST_KEY, GateVerdict, compare, point_key,
    recorded_preset,
};
use crate::results::output::{FileTarget, OutputError, OutputPlan};
use crate::results::{ChecksumOutcome, ResultsDocument, ResultsError, RunStatus};

/// The geometry a new baseline is simulated on unless a preset is named.
pub const DEFAULT_PRESET: &str = "design-vm";

/// Short samples: on a shared machine a 5 ms sample almost always contains a preemption, a
/// 1 ms one mostly does not, so the median stays a clean measurement under moderate load.
pub const GATE_SAMPLE_MS: f64 = 1.0;
/// Enough short samples for a tight bootstrap CI of the median (over all passes).
pub const GATE_SAMPLES: usize = 30;
/// Passes of a comparison run; each takes `GATE_SAMPLES / passes` samples per point (≥ 10).
pub const GATE_PASSES: usize = 3;
/// Passes of a baseline recording.
pub const GATE_BASELINE_PASSES: usize = 5;

/// Fewer samples than this per pass would leave a pass's median to a handful of samples.
const MIN_SAMPLES_PER_PASS: usize = 10;

/// Far above what the capped simulation of a gate point takes (well under a second).
const SIMULATION_TIME_BUDGET: Duration = Duration::from_secs(600);

/// Accesses the gate simulates per point (a prefix beyond it, the same on every machine).
const GATE_SIMULATION_CAP: u64 = 1 << 20;

const SAVE_HINT: &str = "record one with `stridelab gate --save-baseline reports/baseline.json`";

/// Why the gate could not reach a verdict (exit 2 with the fix named).
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum GateError {
    #[error("no baseline at `{}`: {SAVE_HINT}", path.display())]
    NoBaseline { path: PathBuf },
    #[error("no {what} results at `{}`", path.display())]
    NoResults { what: &'static str, path: PathBuf },
    #[error("cannot use the {what}: {message}; {fix}")]
    Unusable {
        what: &'static str,
        message: String,
        fix: String,
    },
    #[error("unknown preset `{name}`; known presets: {}", PRESET_NAMES.join(", "))]
    UnknownPreset { name: String },
    #[error("--passes / --baseline-runs must lie in 1..=100")]
    Passes,
    #[error("--sample-ms must lie in (0, 1000]")]
    SampleMs,
    #[error("--samples must lie in 1..=1000")]
    Samples,
    #[error("not saving a baseline with failed points ({0}); fix them first")]
    FailedPoints(String),
    #[error("not saving the baseline of an interrupted run")]
    Interrupted,
    #[error(
        "--preset {wanted}: the baseline was simulated on preset {recorded}; comparisons use the baseline's preset (record a new baseline to change it)"
    )]
    PresetMismatch { wanted: String, recorded: String },
    #[error(
        "the baseline `{}` records no gate preset (`info.gate.preset`): it was not written by `stridelab gate`; {SAVE_HINT}",
        path.display()
    )]
    NoPreset { path: PathBuf },
    #[error(
        "--base {0}: a revision must not be empty or start with `-`; name a commit, branch or tag"
    )]
    BadRevision(String),
    // The cause is part of the message (not a `source`) so error chains do not repeat it.
    #[error(
        "--base needs the git repository of stridelab in the current directory ({0}); give a prebuilt base with --base-binary instead"
    )]
    NotARepository(GitError),
    #[error(
        "--base needs the git repository of stridelab in the current directory ({0}); give a prebuilt base with --base-binary instead"
    )]
    NoCurrentDir(std::io::Error),
    #[error(
        "--base {rev}: no such commit in {}{}",
        root.display(),
        if *shallow { "; this clone is shallow, so older commits are missing: fetch them with `git fetch --unshallow` (in GitHub Actions: `fetch-depth: 0` in actions/checkout)" } else { "; fetch it, or check the name" }
    )]
    UnknownRevision {
        rev: String,
        root: PathBuf,
        shallow: bool,
    },
    #[error("cannot {what} `{}`: {message}", path.display())]
    WorkFile {
        what: String,
        path: PathBuf,
        message: String,
    },
    #[error("cannot unpack the source of base commit {commit}: {message}")]
    BaseSource { commit: String, message: String },
    #[error("the base commit {commit} cannot be built; the build's last lines:\n{tail}")]
    BaseBuild { commit: String, tail: String },
    #[error("the {role} binary `{}` cannot be used: {message}", path.display())]
    BuildUnusable {
        role: &'static str,
        path: PathBuf,
        message: String,
    },
    // The cause is part of the message (not a `source`) so error chains do not repeat it.
    #[error("the base build failed to measure `{point}`: {error}")]
    BaseFailed { point: String, error: ChildRunError },
    #[error(
        "the base build failed to measure `{point}`: its simulated misses differ between rounds"
    )]
    BaseDrift { point: String },
    #[error(
        "suite point `{0}` is a geometry sweep, which another build cannot be handed point by point; compare builds on a suite of plain points"
    )]
    SweepPoint(String),
    #[error("{0}")]
    Settings(String),
    #[error("interrupted before the rounds were complete; nothing judged")]
    RoundsInterrupted,
    #[error(transparent)]
    Slowdown(#[from] KernelError),
    #[error("{0}")]
    Compare(CompareError),
    #[error("serialising the machine manifest")]
    Manifest(#[source] serde_json::Error),
    #[error("serialising the verdict")]
    SerialiseVerdict(#[source] serde_json::Error),
    #[error("cannot write the summary")]
    Summary(#[source] OutputError),
    #[error(transparent)]
    Output(#[from] OutputError),
    #[error(transparent)]
    Results(#[from] ResultsError),
    #[error(transparent)]
    Suite(#[from] SuiteError),
    #[error(transparent)]
    Geometry(#[from] GeometryError),
    #[error(transparent)]
    Harness(#[from] HarnessError),
    #[error(transparent)]
    Pool(#[from] PoolError),
    #[error(transparent)]
    Stop(#[from] StopError),
}

/// What the gate was asked to do (the command line's meaning, without its syntax).
#[derive(Debug, Clone)]
pub struct GateConfig {
    /// The baseline results to compare with.
    pub baseline: PathBuf,
    /// Compare these results instead of running the suite.
    pub current: Option<PathBuf>,
    /// The suite to run.
    pub suite: String,
    /// Timing change that counts as a regression/improvement.
    pub threshold: f64,
    /// Relative change of a simulated miss count still accepted.
    pub sim_tolerance: f64,
    /// Record a baseline here instead of comparing.
    pub save_baseline: Option<PathBuf>,
    /// Preset geometry of a new baseline (a comparison uses the baseline's).
    pub preset: Option<String>,
    /// Append the Markdown verdict here.
    pub summary: Option<PathBuf>,
    /// Write the JSON verdict here.
    pub json: Option<PathBuf>,
    /// Write the results document of this run here.
    pub output: Option<PathBuf>,
    /// Seed of the bootstrap.
    pub seed: u64,
    /// No progress lines and no table on stdout.
    pub quiet: bool,
    /// Target duration of one timing sample, in milliseconds.
    pub sample_ms: f64,
    /// Minimum number of timing samples per point, over all passes.
    pub samples: usize,
    /// Passes of a comparison run.
    pub passes: usize,
    /// Passes of a baseline recording.
    pub baseline_runs: usize,
    /// This machine's caches as the process detected them, for the results' manifest.
    pub machine: Geometry,
}

/// The gate's file outputs, checked before the suite runs.
#[derive(Debug)]
pub struct GateOutputs {
    pub save_baseline: Option<FileTarget>,
    pub output: Option<FileTarget>,
    pub json: Option<FileTarget>,
    pub summary: Option<FileTarget>,
}

/// Checks every output path (and that none is an input or another output) up front;
/// `builds`: two builds are compared (`--base`), so no baseline file is read and the run's
/// results are not written.
pub fn plan_outputs(config: &GateConfig, builds: bool) -> Result<GateOutputs, GateError> {
    let mut plan = OutputPlan::default();
    let saving = config.save_baseline.is_some();
    if !saving && !builds {
        plan.input("--baseline", &config.baseline);
    }
    if let Some(path) = &config.current {
        plan.input("--current", path);
    }
    if !saving && !config.quiet {
        plan.uses_stdout("the Markdown table (without --quiet)")?;
    }
    let mut file =
        |role, path: &Option<PathBuf>| path.as_deref().map(|p| plan.file(role, p)).transpose();
    if builds {
        return Ok(GateOutputs {
            save_baseline: None,
            output: None,
            json: file("--json/--export-json", &config.json)?,
            summary: file("--export-markdown", &config.summary)?,
        });
    }
    Ok(GateOutputs {
        save_baseline: file("--save-baseline", &config.save_baseline)?,
        output: file("--out", &config.output)?,
        json: file("--json/--export-json", &config.json)?,
        summary: file("--export-markdown", &config.summary)?,
    })
}

/// A recorded baseline: where it went and the line that says so.
#[derive(Debug)]
pub struct SavedBaseline {
    pub line: String,
    /// The baseline itself went to stdout, so the line belongs on stderr.
    pub on_stdout: bool,
}

/// Records a baseline to `target` from `--current` or from a run of the suite; refuses one
/// with failed points or from an interrupted run.
pub fn save_baseline(
    config: &GateConfig,
    target: &FileTarget,
    outputs: &GateOutputs,
) -> Result<SavedBaseline, GateError> {
    let doc = match &config.current {
        Some(current) => read_results(current, "current")?,
        None => {
            let preset = config.preset.as_deref().unwrap_or(DEFAULT_PRESET);
            if !PRESET_NAMES.contains(&preset) {
                return Err(GateError::UnknownPreset {
                    name: preset.to_string(),
                });
            }
            run_gate_suite(
                config,
                preset,
                config.baseline_runs,
                outputs.output.as_ref(),
            )?
        }
    };
    let failed: Vec<String> = doc
        .records
        .iter()
        .filter(|r| r.checksum.status != ChecksumOutcome::Ok || r.error.is_some())
        .map(point_key)
        .collect();
    if !failed.is_empty() {
        return Err(GateError::FailedPoints(failed.join(", ")));
    }
    if doc.status != RunStatus::Complete {
        return Err(GateError::Interrupted);
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
    Ok(SavedBaseline {
        line,
        on_stdout: *target == FileTarget::Stdout,
    })
}

/// Compares the current run (`--current`, or the suite run on the baseline's preset) with the
/// baseline.
pub fn evaluate(config: &GateConfig, outputs: &GateOutputs) -> Result<GateVerdict, GateError> {
    let baseline = read_results(&config.baseline, "baseline")?;
    let preset = recorded_preset(&baseline);
    if let (Some(wanted), Some(recorded)) = (&config.preset, &preset)
        && wanted != recorded
    {
        return Err(GateError::PresetMismatch {
            wanted: wanted.clone(),
            recorded: recorded.clone(),
        });
    }
    let current = match &config.current {
        Some(path) => read_results(path, "current")?,
        None => {
            let Some(preset) = preset.as_deref() else {
                return Err(GateError::NoPreset {
                    path: config.baseline.clone(),
                });
            };
            run_gate_suite(config, preset, config.passes, outputs.output.as_ref())?
        }
    };
    let options = CompareOptions {
        baseline_label: config.baseline.display().to_string(),
        threshold: config.threshold,
        sim_tolerance: config.sim_tolerance,
        seed: config.seed,
        ..CompareOptions::default()
    };
    compare(&baseline, &current, &options).map_err(GateError::Compare)
}

/// Appends the full Markdown verdict to `--export-markdown` and writes the JSON verdict to
/// `--export-json` (or stdout with `--json`).
pub fn write_verdict(verdict: &GateVerdict, outputs: &GateOutputs) -> Result<(), GateError> {
    if let Some(target) = &outputs.summary {
        target
            .append(verdict.to_markdown(true).as_bytes())
            .map_err(GateError::Summary)?;
    }
    if let Some(target) = &outputs.json {
        let json = serde_json::to_string_pretty(verdict).map_err(GateError::SerialiseVerdict)?;
        target.write(json.as_bytes())?;
    }
    Ok(())
}

fn read_results(path: &Path, what: &'static str) -> Result<ResultsDocument, GateError> {
    if !path.exists() {
        if what == "baseline" {
            return Err(GateError::NoBaseline {
                path: path.to_path_buf(),
            });
        }
        return Err(GateError::NoResults {
            what,
            path: path.to_path_buf(),
        });
    }
    ResultsDocument::read(path, &CATALOGUE_RULES).map_err(|e| {
        let fix = if what == "baseline" {
            format!("fix the file or {SAVE_HINT}")
        } else {
            "produce it with `stridelab gate --out FILE`".to_string()
        };
        GateError::Unusable {
            what,
            message: e.to_string(),
            fix,
        }
    })
}

/// How the gate times points (see [`GATE_SAMPLE_MS`]).
pub(super) fn gate_method(config: &GateConfig, passes: usize) -> Result<MethodOptions, GateError> {
    if !(config.sample_ms.is_finite() && config.sample_ms > 0.0 && config.sample_ms <= 1000.0) {
        return Err(GateError::SampleMs);
    }
    // With up to 3× extra rounds per pass, 1000 keeps a pooled point within the samples a
    // document may hold (`results::validate::MAX_SAMPLES_PER_POINT`), so its output reads back.
    if config.samples == 0 || config.samples > 1000 {
        return Err(GateError::Samples);
    }
    let defaults = MethodOptions::default();
    let samples = config.samples.div_ceil(passes).max(MIN_SAMPLES_PER_PASS);
    Ok(MethodOptions {
        min_sample: Duration::from_secs_f64(config.sample_ms / 1e3),
        samples,
        max_samples: 3 * samples,
        extra_sampling: Duration::from_millis(300),
        // Physically contiguous 2 MiB pages: with 4 KiB pages each process gets its own random
        // page colouring in the physically indexed L2, so L2-sized points move between processes.
        huge_pages: true,
        // Every timed point gets a reference sample paired with each of its own.
        latency_references: true,
        ..defaults
    })
}

/// The run options of a gate run: `preset`'s levels, the gate manifest entry, the gate method.
fn gate_run_options(
    config: &GateConfig,
    preset: &str,
    passes: usize,
) -> Result<RunOptions, GateError> {
    let levels = Geometry::preset(preset)?.data_levels();
    let machine = MachineInfo::collect_with(config.machine.clone(), Some(levels.clone()));
    let mut manifest = serde_json::to_value(&machine).map_err(GateError::Manifest)?;
    if let Some(object) = manifest.as_object_mut() {
        object.insert(
            GATE_MANIFEST_KEY.to_string(),
            serde_json::json!({
                "preset": preset,
                "injected_slowdown": injected()?.map(|s| s.label()),
                "passes": passes,
                "huge_pages_requested": true,
            }),
        );
    }
    Ok(RunOptions {
        method: gate_method(config, passes)?,
        manifest,
        // Only the access cap may bound the simulation: a time budget would make the miss
        // counts depend on how busy the machine is, and the deterministic track must not.
        simulation_time_budget: SIMULATION_TIME_BUDGET,
        // The cap the baselines were recorded with: a different cap is a different method.
        simulation_access_cap: GATE_SIMULATION_CAP,
        ..RunOptions::on(levels, Arc::new(analytic_planner(&config.machine)))
    })
}

/// Runs the suite in `passes` passes with every point simulated on `preset`, and pools them.
/// Progress lines go to stderr unless quiet.
fn run_gate_suite(
    config: &GateConfig,
    preset: &str,
    passes: usize,
    output: Option<&FileTarget>,
) -> Result<ResultsDocument, GateError> {
    if passes == 0 || passes > 100 {
        return Err(GateError::Passes);
    }
    let options = gate_run_options(config, preset, passes)?;
    let plan = Suite::load(&config.suite)?.plan(None, &options.cache_levels)?;
    let stop = stop_flag()?;
    let verbose = !config.quiet;
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
        let interrupted = run.status != RunStatus::Complete;
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

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> GateConfig {
        GateConfig {
            baseline: PathBuf::from("no/such/baseline.json"),
            current: None,
            suite: "gate".into(),
            threshold: 0.1,
            sim_tolerance: 0.0,
            save_baseline: None,
            preset: None,
            summary: None,
            json: None,
            output: None,
            seed: 1,
            quiet: true,
            sample_ms: GATE_SAMPLE_MS,
            samples: GATE_SAMPLES,
            passes: GATE_PASSES,
            baseline_runs: GATE_BASELINE_PASSES,
            machine: Geometry::default(),
        }
    }

    #[test]
    fn a_missing_baseline_names_how_to_record_one() {
        let config = config();
        let outputs = plan_outputs(&config, false).unwrap();
        let err = evaluate(&config, &outputs).unwrap_err();
        assert!(matches!(err, GateError::NoBaseline { .. }));
        assert!(err.to_string().contains("--save-baseline"), "{err}");
    }

    #[test]
    fn the_method_splits_samples_over_passes_with_a_floor() {
        let mut config = config();
        let method = gate_method(&config, 3).unwrap();
        assert_eq!(method.samples, 10);
        assert_eq!(method.max_samples, 30);
        assert!(method.huge_pages && method.latency_references);
        config.samples = 90;
        assert_eq!(gate_method(&config, 3).unwrap().samples, 30);
        config.sample_ms = 0.0;
        assert!(matches!(gate_method(&config, 3), Err(GateError::SampleMs)));
    }

    #[test]
    fn an_unknown_preset_is_refused_before_running() {
        let mut config = config();
        config.save_baseline = Some(PathBuf::from("-"));
        config.preset = Some("nosuch".into());
        let outputs = plan_outputs(&config, false).unwrap();
        let err = save_baseline(&config, &FileTarget::Stdout, &outputs).unwrap_err();
        assert!(
            err.to_string().starts_with("unknown preset `nosuch`"),
            "{err}"
        );
    }
}
