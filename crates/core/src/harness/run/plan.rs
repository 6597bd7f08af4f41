//! What `stridelab run` prepares before measuring anything: the plan (a suite, one kernel's
//! grid from its command-line words, or a loop nest as the `loop` kernel's one point, with thread counts and the access bound), the sampling
//! method, and the outputs (the results JSON and the CSV beside it), every one of them checked
//! up front so a run is never measured only to be lost at the end. Also the geometry the
//! points are simulated on (this machine's or a preset's, `--cache` levels on top, recorded in
//! the manifest when it is not the machine's), and the warnings about it and about failed
//! points.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use stridelab_copy::Planner;
use thiserror::Error;

use crate::cache::geometry::{
    ChosenGeometry, Geometry, GeometryChoice, GeometryError, warning_lines,
};
use crate::harness::machine::MachineInfo;
use crate::harness::suite::{
    GridValue, PlanLimits, Suite, SuiteError, ThreadListError, parse_thread_list,
};
use crate::harness::{MethodOptions, Plan, RunOptions};
use crate::results::csv::to_csv;
use crate::results::output::{FileTarget, OutputError, OutputPlan, STDOUT};
use crate::results::{ResultsDocument, ResultsError};

/// Extra sampling a `--kernel` run may spend per point to reach the target CI: DRAM bandwidth
/// swings by ±15% over 0.1–1 s, and a 64 MiB point needs a few hundred 7 ms samples spread
/// over seconds before the median's CI is a few percent wide.
const KERNEL_SAMPLING_BUDGET_S: f64 = 10.0;

/// Why a run cannot start (or its results cannot be written).
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum RunPlanError {
    #[error("--kernel needs a kernel name")]
    NoKernelName,
    #[error("--threads: {0}")]
    Threads(ThreadListError),
    #[error("--target-ci must be above 0%")]
    TargetCi,
    #[error("--sampling-budget {0}: must lie in 0..=3600 seconds")]
    SamplingBudget(f64),
    #[error(
        "--out {}: --out writes the results JSON; for a CSV give --export-csv {} (and e.g. \
         --out {})",
        out.display(),
        out.display(),
        out.with_extension("json").display()
    )]
    CsvOut { out: PathBuf },
    #[error("choosing the cache levels to simulate")]
    Geometry(#[source] GeometryError),
    #[error("serialising the machine manifest")]
    Manifest(#[source] serde_json::Error),
    #[error(transparent)]
    Suite(#[from] SuiteError),
    #[error(transparent)]
    Output(#[from] OutputError),
    #[error(transparent)]
    Results(#[from] ResultsError),
}

/// What a run was asked (the command line's meaning, without its syntax).
#[derive(Debug, Clone, Default)]
pub struct RunRequest {
    /// A suite name or TOML file; `quick` when neither this nor `kernel` is given.
    pub suite: Option<String>,
    /// One kernel instead: its name, then `key=value` words (`key=a,b` is a grid).
    pub kernel: Option<Vec<String>>,
    /// A loop nest instead (`run --loop TEXT --array DECL…`): the `loop` kernel's `nest` and
    /// `arrays`, each taken whole (a nest's `read a, b` is no grid).
    pub loop_nest: Option<(String, Vec<String>)>,
    /// Thread counts for every point, e.g. `1,2` or `all`.
    pub threads: Option<String>,
    pub huge_pages: bool,
    /// The results file (`-`: stdout); `None`: a file under `reports/runs/` unless `json`.
    pub out: Option<PathBuf>,
    /// The document goes to stdout.
    pub json: bool,
    /// The CSV table of the records (`-`: stdout); `None`: no CSV.
    pub export_csv: Option<PathBuf>,
    /// Relative width of the median's CI to sample towards.
    pub target_ci: f64,
    /// Seconds of extra sampling per point; `None`: the default for a kernel or a suite.
    pub sampling_budget: Option<f64>,
    /// Most loads and stores one run of a point may make.
    pub max_accesses: u64,
    /// The geometry to simulate on (default: this machine's).
    pub geometry: GeometryChoice,
}

/// Where a run writes its results.
#[derive(Debug)]
pub struct RunOutputs {
    pub json: Option<FileTarget>,
    pub csv: Option<FileTarget>,
}

/// A validated run, ready to measure.
#[derive(Debug)]
pub struct PreparedRun {
    pub plan: Plan,
    pub outputs: RunOutputs,
    pub options: RunOptions,
    /// The levels every point is simulated on (`options.cache_levels`), with their origin.
    pub geometry: ChosenGeometry,
}

/// Validates every parameter and output of `request` before anything runs; `machine` is this
/// machine's geometry as the process detected it, `copies` the planner the run copies with.
pub fn prepare_run(
    request: &RunRequest,
    machine: Geometry,
    copies: Arc<Planner>,
) -> Result<PreparedRun, RunPlanError> {
    let suite = match (&request.loop_nest, &request.kernel) {
        (Some((text, arrays)), _) => loop_suite(text, arrays)?,
        (None, Some(words)) => {
            let (name, rest) = words.split_first().ok_or(RunPlanError::NoKernelName)?;
            Suite::from_command_line(name, rest)?
        }
        (None, None) => Suite::load(request.suite.as_deref().unwrap_or("quick"))?,
    };
    let threads = request
        .threads
        .as_deref()
        .map(parse_thread_list)
        .transpose()
        .map_err(RunPlanError::Threads)?;
    let limits = PlanLimits {
        max_accesses_per_run: request.max_accesses,
        ..PlanLimits::default()
    };
    let (geometry, manifest) = geometry_and_manifest(&request.geometry, machine)?;
    let plan = suite.plan_on(threads.as_deref(), limits, &geometry.levels)?;
    let outputs = plan_outputs(request, &plan.name)?;
    let options = RunOptions {
        method: method_of(request)?,
        manifest,
        // Every point the plan admits is simulated in full.
        simulation_access_cap: request.max_accesses,
        ..RunOptions::on(geometry.levels.clone(), copies)
    };
    Ok(PreparedRun {
        plan,
        outputs,
        options,
        geometry,
    })
}

/// `run --loop TEXT --array DECL…` as the one point of the `loop` kernel it means.
fn loop_suite(text: &str, arrays: &[String]) -> Result<Suite, RunPlanError> {
    let mut suite = Suite::from_command_line("loop", &[])?;
    suite.description = format!(
        "stridelab run --loop '{text}' --array '{}'",
        arrays.join("' --array '")
    );
    suite.points[0].params = BTreeMap::from([
        ("nest".to_string(), GridValue::Text(text.to_string())),
        ("arrays".to_string(), GridValue::Text(arrays.join("; "))),
    ]);
    Ok(suite)
}

/// The geometry `choice` names on top of `machine` (this machine's, detected once by the
/// process) and the machine manifest that records it.
pub fn geometry_and_manifest(
    choice: &GeometryChoice,
    machine: Geometry,
) -> Result<(ChosenGeometry, serde_json::Value), RunPlanError> {
    let geometry = choice.resolve(&machine).map_err(RunPlanError::Geometry)?;
    let manifest = serde_json::to_value(MachineInfo::for_geometry(machine, &geometry))
        .map_err(RunPlanError::Manifest)?;
    Ok((geometry, manifest))
}

/// `simulated caches: L1d, L2, L3 from this machine (sysfs)`, then a `warning:` line for each
/// doubtful level, for stderr before and after a run.
pub fn geometry_lines(geometry: &ChosenGeometry) -> Vec<String> {
    let mut lines = vec![format!("simulated caches: {}", geometry.describe())];
    lines.extend(warning_lines(
        &geometry.warnings(),
        "the simulated misses and model lines use these levels",
    ));
    lines
}

/// The sampling method `request` asks for.
pub fn method_of(request: &RunRequest) -> Result<MethodOptions, RunPlanError> {
    let defaults = MethodOptions::default();
    if request.target_ci <= 0.0 || request.target_ci.is_nan() {
        return Err(RunPlanError::TargetCi);
    }
    let single_point = request.kernel.is_some() || request.loop_nest.is_some();
    let budget = match request.sampling_budget {
        Some(s) if s.is_finite() && (0.0..=3600.0).contains(&s) => Some(s),
        Some(s) => return Err(RunPlanError::SamplingBudget(s)),
        None if single_point => Some(KERNEL_SAMPLING_BUDGET_S),
        None => None,
    };
    Ok(MethodOptions {
        huge_pages: request.huge_pages,
        target_relative_ci: request.target_ci,
        extra_sampling: budget.map_or(defaults.extra_sampling, Duration::from_secs_f64),
        extra_sampling_scales_with_minimum: budget.is_none(),
        // Enough rounds for the budget to matter: seconds of 5 ms samples.
        max_samples: if budget.is_some() {
            1000
        } else {
            defaults.max_samples
        },
        ..defaults
    })
}

/// `reports/runs/SUITE-STAMP.json`, or `…-STAMP-2.json`, `-3`, … when a run that started in the
/// same second already holds the name: a run never replaces an earlier run's file.
fn default_out(suite: &str) -> PathBuf {
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let mut path = PathBuf::from(format!("reports/runs/{suite}-{stamp}.json"));
    let mut n = 2;
    while path.exists() {
        path = PathBuf::from(format!("reports/runs/{suite}-{stamp}-{n}.json"));
        n += 1;
    }
    path
}

/// Checks `--out` (or the default file) and `--export-csv` before anything is measured.
fn plan_outputs(request: &RunRequest, suite_name: &str) -> Result<RunOutputs, RunPlanError> {
    let mut plan = OutputPlan::default();
    if let Some(suite) = &request.suite
        && Path::new(suite).is_file()
    {
        plan.input("--suite", Path::new(suite));
    }
    if request.json {
        plan.uses_stdout("--json")?;
    }
    let csv = match &request.export_csv {
        Some(path) => Some(plan.file("--export-csv", path)?),
        None => None,
    };
    let out = match (&request.out, request.json) {
        (Some(path), _) => path.clone(),
        (None, true) => return Ok(RunOutputs { json: None, csv }),
        // The tool's own location: its directories are created when the results are written.
        (None, false) => {
            let json = plan.default_file("--out", &default_out(suite_name))?;
            return Ok(RunOutputs {
                json: Some(json),
                csv,
            });
        }
    };
    let is_csv = out
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("csv"));
    if is_csv && out.as_os_str() != STDOUT {
        return Err(RunPlanError::CsvOut { out });
    }
    let json = plan.file("--out", &out)?;
    Ok(RunOutputs {
        json: Some(json),
        csv,
    })
}

/// Writes the results document (with a final newline) and the CSV, if asked for.
pub fn write_results(doc: &ResultsDocument, outputs: &RunOutputs) -> Result<(), RunPlanError> {
    if let Some(target) = &outputs.json {
        let mut text = doc.to_json()?;
        text.push('\n');
        target.write(text.as_bytes())?;
    }
    if let Some(target) = &outputs.csv {
        target.write(to_csv(doc).as_bytes())?;
    }
    Ok(())
}

/// The line naming where the results went, for stderr.
pub fn results_line(outputs: &RunOutputs) -> Option<String> {
    let files: Vec<String> = [("results", &outputs.json), ("CSV", &outputs.csv)]
        .into_iter()
        .filter_map(|(what, target)| Some(format!("{what}: {}", target.as_ref()?.display())))
        .collect();
    (!files.is_empty()).then(|| files.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::copy_planner::planner_for_tests;

    /// `prepare_run` on this machine, with the planner a command would build for it.
    fn prepare(request: &RunRequest) -> Result<PreparedRun, RunPlanError> {
        prepare_run(request, Geometry::detect(), planner_for_tests())
    }

    fn kernel(words: &[&str]) -> RunRequest {
        RunRequest {
            kernel: Some(words.iter().map(|w| w.to_string()).collect()),
            out: Some(PathBuf::from("-")),
            target_ci: 0.02,
            max_accesses: 1 << 28,
            ..RunRequest::default()
        }
    }

    #[test]
    fn a_kernel_grid_becomes_one_point_per_value() {
        let run = prepare(&kernel(&["row-sum", "rows=64,128", "cols=64"])).unwrap();
        assert_eq!(run.plan.points.len(), 2);
        assert_eq!(run.outputs.json, Some(FileTarget::Stdout));
        assert!(run.outputs.csv.is_none());
        // One kernel: the extra sampling budget is the kernel default, not the suite's.
        assert_eq!(run.options.method.extra_sampling, Duration::from_secs(10));
    }

    #[test]
    fn a_loop_nest_is_the_loop_kernels_one_point_whatever_its_commas() {
        let arrays = vec!["a = f64[8]".to_string(), "b = f64[8, 8]".to_string()];
        let request = RunRequest {
            kernel: None,
            loop_nest: Some(("for i in 0..8: read a[i], b[i, 0]".into(), arrays)),
            ..kernel(&[])
        };
        let run = prepare(&request).unwrap();
        assert_eq!(run.plan.points.len(), 1);
        let point = &run.plan.points[0];
        assert_eq!(point.spec.name, "loop");
        assert_eq!(
            point.params["arrays"].to_string(),
            "a = f64[8]; b = f64[8, 8]"
        );
        assert_eq!(
            point.params["nest"].to_string(),
            "for i in 0..8: read a[i], b[i, 0]"
        );
        assert_eq!(run.options.method.extra_sampling, Duration::from_secs(10));
    }

    #[test]
    fn a_named_output_in_a_missing_directory_is_refused_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        for (flag, path) in [("--out", "gone/q.json"), ("--export-csv", "gone/q.csv")] {
            let mut request = kernel(&["row-sum", "rows=64", "cols=64"]);
            let path = dir.path().join(path);
            match flag {
                "--out" => request.out = Some(path.clone()),
                _ => request.export_csv = Some(path.clone()),
            }
            let err = prepare(&request).unwrap_err().to_string();
            assert!(err.contains(flag), "{err}");
            assert!(
                err.contains(&format!(
                    "`{}` does not exist",
                    dir.path().join("gone").display()
                )),
                "{err}"
            );
        }
        assert!(!dir.path().join("gone").exists());
    }

    #[test]
    fn bad_options_are_refused_before_measuring() {
        let mut request = kernel(&["row-sum", "rows=64", "cols=64"]);
        request.out = Some(PathBuf::from("x.csv"));
        let err = prepare(&request).unwrap_err();
        assert!(err.to_string().contains("--export-csv x.csv"), "{err}");
        request.out = Some(PathBuf::from("-"));
        request.threads = Some("bad".into());
        assert!(matches!(prepare(&request), Err(RunPlanError::Threads(_))));
        request.threads = None;
        request.sampling_budget = Some(1e9);
        assert!(matches!(
            prepare(&request),
            Err(RunPlanError::SamplingBudget(_))
        ));
    }
}
