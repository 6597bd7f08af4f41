//! The versioned results document (`schema: 2`; schema-1 files still read): what one
//! `stridelab run` measured, as data.
//!
//! One [`ResultsDocument`] holds the machine manifest, the suite, the method and one
//! [`PointRecord`] per measured point. Every number says where it came from through a
//! [`Provenance`]: `timed` (wall clock), `measured` (hardware or software counters) or
//! `simulated` (the cache model). A point that failed is a record with an [`PointError`], not a
//! missing row. Readers (`report`, `gate`) depend only on this module.
//!
//! Files are written atomically (temporary file in the same directory, then rename) and read with
//! errors that name the file, the JSON path of the offending field and its line/column. Every
//! document read from disk is checked once, on load, by [`crate::results::validate`]: later code
//! (report, gate) relies on its invariants instead of re-checking them.

use std::collections::BTreeMap;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::results::model::ModelPrediction;
use crate::results::time_model::{MachineModel, TimePrediction};
use crate::vocab::{Family, ParamRules, Params, Work};

/// The schema version this build writes. Version 2 added each record's `model` predictions,
/// version 3 its `copy_plans`.
pub const SCHEMA_VERSION: u32 = 3;

/// The oldest schema version this build reads (its records simply have no `model`).
pub const OLDEST_READABLE_SCHEMA: u32 = 1;

/// The machine manifest embedded in results (`stridelab info --json`'s object).
///
/// Kept as free-form JSON so that results recorded on other machines or by other builds still
/// load; `harness::machine::MachineInfo` produces it.
pub type MachineManifest = serde_json::Value;

/// Where a number came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Provenance {
    /// Wall-clock time of real runs.
    Timed,
    /// Read from hardware or software performance counters.
    Measured,
    /// Counted by the cache simulator for the recorded geometry.
    Simulated,
    /// Derived by an analytic model (the set/GCD model, the layout model) from the kernel's
    /// parameters and the recorded geometry: a prediction, not an observation.
    Model,
}

/// Whether the run finished every point.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RunStatus {
    /// Every point of the suite was attempted.
    Complete,
    /// Stopped early (Ctrl-C); `records` holds the points finished before the stop.
    Interrupted,
}

/// The whole results file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResultsDocument {
    /// Always [`SCHEMA_VERSION`] for documents this build writes.
    pub schema: u32,
    /// The program and version that wrote the file.
    pub tool: ToolInfo,
    /// When the run started, seconds since the Unix epoch (UTC).
    pub started_unix_s: u64,
    /// Wall-clock seconds the whole run took (up to the stop, if interrupted).
    pub wall_s: f64,
    pub status: RunStatus,
    /// The machine manifest (geometry, CPUs, counters availability, pinning, huge pages).
    pub info: MachineManifest,
    pub suite: SuiteSummary,
    pub method: MethodSettings,
    pub records: Vec<PointRecord>,
    /// The time model's probes of this machine the records' predictions were priced with
    /// (absent: the run had the model off, or the file predates it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_model_probes: Option<MachineModel>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolInfo {
    pub name: String,
    pub version: String,
}

/// Which suite produced the points.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SuiteSummary {
    /// `quick`, `full`, `gate`, a file's suite name, or `command-line` for `--kernel`.
    pub name: String,
    /// `builtin`, `file:PATH` or `command-line`.
    pub source: String,
    pub description: String,
    /// How many points the suite expands to (records may be fewer if interrupted).
    pub points: usize,
}

/// How every point was measured (identical for all records of a document).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MethodSettings {
    /// Minimum warm-up time per point, in milliseconds.
    pub warmup_ms: f64,
    /// Target minimum duration of one sample, in milliseconds.
    pub min_sample_ms: f64,
    /// Number of samples per point.
    pub samples: usize,
    /// Bootstrap resamples for the confidence interval of the median.
    pub bootstrap_resamples: usize,
    /// Seed of the bootstrap (results are deterministic given the samples).
    pub bootstrap_seed: u64,
    /// Confidence level of the interval (0.95).
    pub confidence: f64,
    /// Whether transparent huge pages were requested for buffers.
    pub huge_pages_requested: bool,
    /// Upper bound on the simulated accesses per point (larger runs are simulated in part).
    pub simulation_access_cap: u64,
}

/// One measured point: a kernel, its parameters and a thread count.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PointRecord {
    /// Position in the suite's expansion (stable across runs of the same suite).
    pub index: usize,
    pub kernel: String,
    pub family: Family,
    /// Every parameter, defaults filled in.
    pub params: Params,
    /// Number of measuring threads (one instance each, run concurrently).
    pub threads: usize,
    pub pinning: Pinning,
    /// The work one run of one thread's instance does.
    pub work: Option<Work>,
    pub huge_pages: Option<HugePageStatus>,
    /// Checksum verification of every real run of this point.
    pub checksum: ChecksumStatus,
    pub timing: Option<Timing>,
    pub counters: Option<CounterReport>,
    pub simulated: Option<SimulatedMisses>,
    /// Same-run ratio to the reference copy/read (bandwidth kernels only).
    pub reference: Option<ReferenceComparison>,
    /// Why this point has no (or only partial) numbers.
    pub error: Option<PointError>,
    /// What the analytic models predict for the point (schema 2; absent in schema-1 files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<ModelPrediction>,
    /// The geometry sweep this point belongs to (absent: a point of the suite's grid).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sweep: Option<SweepInfo>,
    /// The copy engine's schedules this point's copies used, and what planning them cost
    /// (schema 3; empty when the point copies nothing large or the planner was off).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub copy_plans: Vec<CopyPlanRecord>,
    /// What the time model predicts for this point's time from the machine's probes and its
    /// simulated traffic, or why it does not claim the point (absent: model off, or untimed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_model: Option<TimePrediction>,
}

/// One copy class's schedule in a point: measured during the point, or from wisdom.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CopyPlanRecord {
    /// The copy, in words (`transpose 2048×2048, lds 2048, ldd 2048, …`).
    pub class: String,
    /// The winning candidate (`in-cache`, `stream-tiles`, `stream-walk`, …).
    pub schedule: String,
    /// `measured` (planned during this point) or `wisdom` (planned before: free).
    pub source: String,
    /// Wall time of the planning, in seconds (0 for a plan from wisdom).
    pub planning_s: f64,
    /// Each candidate's median trial time in nanoseconds, on trials of `trial_bytes`.
    pub trial_bytes: u64,
    pub trials: Vec<CopyPlanTrial>,
}

/// One candidate schedule's timing while planning.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CopyPlanTrial {
    pub schedule: String,
    pub median_ns: u64,
    pub runs: usize,
}

/// A point of a geometry sweep: the level its strides were derived from, and whether it was
/// timed (`false`: simulated only, so `timing` is absent by design, not by failure).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SweepInfo {
    pub level: String,
    pub timed: bool,
    /// The preset whose geometry the point was simulated on (absent: the run's geometry);
    /// such points are simulated only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preset: Option<String>,
}

/// Where each measuring thread ran.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct Pinning {
    /// One entry per measuring thread, in thread order.
    pub threads: Vec<PinnedThread>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PinnedThread {
    pub thread: usize,
    /// The logical CPU requested for this thread (`None`: no CPU list was available).
    pub cpu: Option<usize>,
    /// Whether `core_affinity` reported success.
    pub pinned: bool,
    /// The failure, when pinning did not succeed (recorded, not fatal).
    pub error: Option<String>,
}

/// Whether transparent huge pages backed the point's buffers (read from /proc/self/smaps).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HugePageStatus {
    pub requested: bool,
    /// AnonHugePages bytes of the process after preparing the point, when readable.
    pub anon_huge_bytes: Option<u64>,
    /// Why the figure is missing, if it is.
    pub note: Option<String>,
}

/// Outcome of checksum verification.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ChecksumOutcome {
    /// Every run returned the expected checksum.
    Ok,
    /// At least one run returned a wrong checksum: the point has no numbers.
    Mismatch,
    /// The kernel never ran (preparation failed or the run was stopped first).
    NotRun,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChecksumStatus {
    pub status: ChecksumOutcome,
    pub expected: Option<f64>,
    /// The first wrong value seen (or the last good one when `ok`).
    pub actual: Option<f64>,
    /// How many runs were verified.
    pub runs_checked: u64,
}

/// Robust summary of a set of samples (defined beside the statistics that compute it).
pub use crate::stats::Summary;

/// Wall-clock timing of a point.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Timing {
    /// Always `timed`.
    pub source: Provenance,
    /// Runs executed (per thread) before sampling.
    pub warmup_runs: u64,
    /// Runs per thread inside one sample (calibrated so a sample lasts ≥ `min_sample_ms`).
    pub runs_per_sample: u64,
    /// One value per sample: wall nanoseconds per run (all threads running concurrently).
    pub samples_ns_per_run: Vec<f64>,
    /// Statistics of `samples_ns_per_run`.
    pub ns_per_run: Summary,
    /// Median nanoseconds per element (per access for probes), all threads' elements counted.
    pub ns_per_element: f64,
    /// Median aggregate bandwidth over all threads, decimal GB/s (bytes read + written), when the
    /// kernel moves bytes.
    pub gb_per_s: Option<f64>,
    /// Bandwidth confidence interval (from the time CI), GB/s.
    pub gb_per_s_ci: Option<(f64, f64)>,
    /// Whether the samples met the CI target and look like one distribution. Absent in
    /// documents from older builds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precision: Option<Precision>,
}

/// Samples beyond Tukey's fences (defined beside the detector that counts them).
pub use crate::stats::precision::{Drift, Outliers};

/// How far a point's timing can be trusted, and what a reader should be warned of.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Precision {
    /// The CI width, relative to the median, that sampling aimed for (`run --target-ci`).
    pub target_relative_ci: f64,
    /// Samples beyond Tukey's fences (`stats::precision`); absent below 4 samples.
    pub outliers: Option<Outliers>,
    /// The samples' trend in the order they were taken; absent below 6 samples.
    pub drift: Option<Drift>,
    /// The warnings the numbers above call for, by the rules of `harness::measure::precision`.
    pub warnings: Vec<PrecisionWarning>,
}

/// Why a point's timing deserves a second look.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PrecisionWarning {
    /// The median's CI ended wider than `target_relative_ci` (the sampling budget ran out).
    CiTargetMissed,
    /// At least one sample lies beyond Tukey's outer fences.
    Outliers,
    /// The samples trend with time beyond chance, by more than the CI is wide.
    Drift,
}

/// Counter values for a point, hardware and software apart.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CounterReport {
    pub hardware: CounterGroupReport,
    pub software: CounterGroupReport,
}

/// One counter group: either values or the reason it could not be opened.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CounterGroupReport {
    /// Always `measured`.
    pub source: Provenance,
    pub available: bool,
    /// Why the group is unavailable (e.g. `ENOENT: no hardware PMU`).
    pub reason: Option<String>,
    /// Counter name → value (whole sampling phase, per run per thread).
    pub values: BTreeMap<String, CounterValue>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CounterValue {
    /// Count per run of one instance, after multiplexing scaling.
    pub per_run: f64,
    /// Total count over the sampling phase, after scaling.
    pub total: f64,
    /// time_enabled / time_running (1.0 when the counter ran the whole time).
    pub scaling: f64,
    /// Whether `total` was scaled up because the counter was multiplexed.
    pub scaled: bool,
}

/// Simulated misses of one run of the point's kernel on the recorded geometry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SimulatedMisses {
    /// Always `simulated`.
    pub source: Provenance,
    /// What exactly was simulated (the whole run, or a capped prefix / smaller equivalent).
    pub scope: SimulationScope,
    /// Whether the kernel ran once before counting (`warm`) or from an empty cache (`cold`).
    pub start: String,
    pub levels: Vec<SimulatedLevel>,
}

/// Why a simulation stopped before the end of the run: the typed field the gate decides by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SimulationCut {
    /// The whole run was simulated.
    None,
    /// The access cap stopped it: reproducible, the same prefix every time.
    AccessCap,
    /// The time budget stopped it: how far it got depends on the machine's speed.
    TimeBudget,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SimulationScope {
    /// Accesses one full run makes (as counted by the simulator's sink).
    pub run_accesses: Option<u64>,
    /// Accesses actually fed to the cache model.
    pub simulated_accesses: u64,
    /// `full` or `prefix`: only the first `simulated_accesses` accesses of the run were counted.
    pub kind: String,
    /// Why the simulation stopped early. Absent in documents from older builds: the reader
    /// derives it from the counts (see `validate::legacy_cut`), never from `note`.
    #[serde(default)]
    pub cut: Option<SimulationCut>,
    /// Words for people; no program decision reads it.
    pub note: Option<String>,
}

/// One cache level's simulated counts (the fields of `stridelab sim --json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SimulatedLevel {
    pub name: String,
    pub size: u64,
    pub ways: u64,
    pub line: u64,
    pub sets: u64,
    pub loads: u64,
    pub stores: u64,
    pub load_misses: u64,
    pub store_misses: u64,
    pub misses: u64,
    pub miss_rate: f64,
    pub compulsory: u64,
    pub capacity: u64,
    pub conflict: u64,
}

/// A bandwidth kernel's same-run comparison with the reference copy/read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReferenceComparison {
    /// `copy` (the faster of a plain and a non-temporal copy) or `read`.
    pub reference: String,
    /// Bytes the reference moved per run (same bytes as the point, per thread).
    pub bytes: u64,
    /// Median GB/s of each reference variant measured interleaved with the point.
    pub variants: BTreeMap<String, f64>,
    /// The variant used as the reference (the fastest).
    pub best_variant: String,
    pub reference_gb_per_s: f64,
    /// The point's GB/s divided by the reference's, both from this run.
    pub ratio: f64,
    /// The best variant's ns per run, one per sampling round: sample `i` was timed right after
    /// the point's sample `i`, so their quotient cancels machine-speed swings slower than a
    /// round (the gate compares these paired quotients). Empty in documents from older builds.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub samples_ns_per_run: Vec<f64>,
}

/// Why a point has no numbers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PointError {
    /// `params`, `prepare`, `pinning`, `run`, `checksum`, `simulate` or `interrupted`.
    pub stage: String,
    pub message: String,
}

/// Why a results file could not be written or read.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum ResultsError {
    // The cause is part of the message (a field not named `source`), so chains do not repeat it.
    #[error("cannot {action} `{path}`: {error}")]
    Io {
        action: &'static str,
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("`{path}` is not valid JSON (line {line}, column {column}): {message}")]
    Syntax {
        path: PathBuf,
        line: usize,
        column: usize,
        message: String,
    },
    #[error("`{path}`: field `{field}` is missing (line {line}, column {column})")]
    MissingField {
        path: PathBuf,
        /// JSON path of the missing field, e.g. `records[3].checksum`.
        field: String,
        line: usize,
        column: usize,
    },
    #[error("`{path}`: field `{field}` is corrupt (line {line}, column {column}): {message}")]
    CorruptField {
        path: PathBuf,
        /// JSON path of the offending field, e.g. `records[0].timing.ns_per_run.median`.
        field: String,
        line: usize,
        column: usize,
        message: String,
    },
    #[error("`{path}` has results schema {found}; this build reads schemas 1 to {expected}")]
    UnsupportedSchema {
        path: PathBuf,
        found: String,
        expected: u32,
    },
    #[error("`{path}`: field `{field}` is invalid: {message}")]
    Invalid {
        path: PathBuf,
        /// JSON path of the offending value, e.g. `records[3].timing.samples_ns_per_run`.
        field: String,
        message: String,
    },
    #[error("cannot serialise results: {0}")]
    Serialize(String),
}

impl ResultsDocument {
    /// Serialises the document as pretty JSON.
    pub fn to_json(&self) -> Result<String, ResultsError> {
        serde_json::to_string_pretty(self).map_err(|e| ResultsError::Serialize(e.to_string()))
    }

    /// Writes the document to `path` atomically: a temporary file in the same directory is
    /// written and synced, then renamed over `path`, so a reader never sees half a file.
    pub fn write_atomic(&self, path: &Path) -> Result<(), ResultsError> {
        let json = self.to_json()?;
        write_atomic(path, json.as_bytes())
    }

    /// Reads and validates a results file; `rules` check each record's kernel and parameters
    /// (the catalogue's, `kernels::CATALOGUE_RULES`, for every file read from disk).
    pub fn read(path: &Path, rules: &dyn ParamRules) -> Result<Self, ResultsError> {
        let text = fs::read_to_string(path).map_err(|error| ResultsError::Io {
            action: "read",
            path: path.to_path_buf(),
            error,
        })?;
        Self::from_json(&text, path, rules)
    }

    /// Parses a results document; `origin` names the file in errors.
    pub fn from_json(
        text: &str,
        origin: &Path,
        rules: &dyn ParamRules,
    ) -> Result<Self, ResultsError> {
        let value: serde_json::Value =
            serde_json::from_str(text).map_err(|e| ResultsError::Syntax {
                path: origin.to_path_buf(),
                line: e.line(),
                column: e.column(),
                message: strip_position(&e.to_string()),
            })?;
        // Check the version first: a future schema should say so, not "field x is missing".
        match value.get("schema") {
            Some(serde_json::Value::Number(n))
                if n.as_u64().is_some_and(|v| {
                    (u64::from(OLDEST_READABLE_SCHEMA)..=u64::from(SCHEMA_VERSION)).contains(&v)
                }) => {}
            Some(other) => {
                return Err(ResultsError::UnsupportedSchema {
                    path: origin.to_path_buf(),
                    found: other.to_string(),
                    expected: SCHEMA_VERSION,
                });
            }
            None => {
                return Err(ResultsError::MissingField {
                    path: origin.to_path_buf(),
                    field: "schema".into(),
                    line: 1,
                    column: 1,
                });
            }
        }
        let mut doc: Self =
            serde_path_to_error::deserialize(&mut serde_json::Deserializer::from_str(text))
                .map_err(|e| field_error(origin, e))?;
        crate::results::validate::fill_legacy_cuts(&mut doc);
        for record in &mut doc.records {
            rules.complete(&record.kernel, &mut record.params);
        }
        crate::results::validate::validate(&doc, rules).map_err(|e| ResultsError::Invalid {
            path: origin.to_path_buf(),
            field: e.field,
            message: e.message,
        })?;
        Ok(doc)
    }
}

/// Writes `bytes` to `path` through a temporary file in the same directory and a rename; an
/// existing device or pipe is written in place and a directory is refused. The directory
/// must exist.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), ResultsError> {
    use std::os::unix::fs::FileTypeExt;
    let io = |action: &'static str, p: &Path| {
        let p = p.to_path_buf();
        move |error| ResultsError::Io {
            action,
            path: p,
            error,
        }
    };
    // What exists at `path` decides how it is written: a device or a pipe is written in place
    // (renaming over `/dev/stdout` would replace the device), a directory is never replaced,
    // and a symlink keeps pointing at the file it names.
    let mut path = path.to_path_buf();
    if let Ok(meta) = fs::metadata(&path) {
        let kind = meta.file_type();
        if kind.is_dir() {
            let error = std::io::Error::new(std::io::ErrorKind::IsADirectory, "is a directory");
            return Err(io("write", &path)(error));
        }
        if kind.is_char_device() || kind.is_fifo() {
            let mut file = fs::OpenOptions::new()
                .write(true)
                .open(&path)
                .map_err(io("open", &path))?;
            return file.write_all(bytes).map_err(io("write", &path));
        }
        if fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink()) {
            path = fs::canonicalize(&path).map_err(io("resolve", &path))?;
        }
    }
    let path = path.as_path();
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    // The directory is never created here: a path the user named must have one already
    // (`output::Parents`), and a default location is created by its `FileTarget::Default`.
    if !dir.is_dir() {
        let error = std::io::Error::new(std::io::ErrorKind::NotFound, "no such directory");
        return Err(io("write into", &dir)(error));
    }
    let file_name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "results".into());
    // A temporary a killed process left for this file goes; one being written stays. Ours is
    // removed on every error or panic before the rename (`results/temporaries.rs`).
    super::temporaries::sweep(&dir, &file_name);
    let mut tmp = super::temporaries::file_in(&dir, &file_name).map_err(io("create", &dir))?;
    let tmp_path = tmp.path().to_path_buf();
    tmp.write_all(bytes).map_err(io("write", &tmp_path))?;
    tmp.as_file().sync_all().map_err(io("sync", &tmp_path))?;
    tmp.persist(path)
        .map(drop)
        .map_err(|e| io("rename into", path)(e.error))
}

/// serde_json appends " at line L column C"; the typed errors carry those apart.
fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(i) => message[..i].to_string(),
        None => message.to_string(),
    }
}

/// Turns a typed deserialisation error into one that names the JSON path of the field
/// (`records[3].timing.ns_per_run`, tracked by `serde_path_to_error` as serde walks the
/// document). A missing field is reported at the object that lacks it.
fn field_error(
    origin: &Path,
    error: serde_path_to_error::Error<serde_json::Error>,
) -> ResultsError {
    let container = match error.path().to_string() {
        root if root == "." => String::new(),
        path => path,
    };
    let inner = error.into_inner();
    let message = strip_position(&inner.to_string());
    let (line, column) = (inner.line(), inner.column());
    // serde has no structured kind for a missing field; its message is fixed by serde::de.
    if let Some(name) = message
        .strip_prefix("missing field `")
        .and_then(|rest| rest.strip_suffix('`'))
    {
        let field = if container.is_empty() {
            name.to_string()
        } else {
            format!("{container}.{name}")
        };
        return ResultsError::MissingField {
            path: origin.to_path_buf(),
            field,
            line,
            column,
        };
    }
    ResultsError::CorruptField {
        path: origin.to_path_buf(),
        field: if container.is_empty() {
            "(document)".into()
        } else {
            container
        },
        line,
        column,
        message,
    }
}

#[cfg(any(test, feature = "test-support"))]
pub mod tests;
